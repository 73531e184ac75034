//! NMF (one view) and joint multi-view NMF (shared encoding), DESIGN §2–§3.
//!
//! Objective (joint; one view is the case `H = 1`):
//!
//! ```text
//! O(U, V) = ½ Σ_v ‖X^(v) − U^(v) V‖²_F      s.t.  U^(v) ≥ 0,  0 ≤ V ≤ vmax
//! ```
//!
//! This is the papers' ConcatNMF baseline: the per-view bases stacked,
//! `[U^(1); …; U^(H)]`, are exactly NMF of the stacked views `[X^(1); …; X^(H)]`
//! (the U-step is separable by rows, the V-step sums over views); the tests
//! check that identity.
//!
//! **Updates** (guarded Lee–Seung, each the exact minimiser of a majoriser, so
//! the objective never increases for any `ε ≥ 0`):
//!
//! ```text
//! U^(v) ← U^(v) ∘ (X^(v)Vᵀ + ε) ⊘ (U^(v)(VVᵀ) + ε)              every view
//! V     ← min(vmax, V ∘ (Σ_v U^(v)ᵀX^(v) + ε) ⊘ ((Σ_v U^(v)ᵀU^(v)) V + ε))
//! ```
//!
//! **Cost per outer iteration:** each view is touched exactly twice, `X Vᵀ` and
//! `Uᵀ X` (dense: `4 M_v N K` flops; CSC: `O(nnz_v · K)`), plus
//! `O((Σ_v M_v + N) K²)`. The objective comes from products already formed,
//! `½‖X‖² − ⟨Q, V⟩ + ½⟨P, VVᵀ⟩` with `Q = Σ UᵀX`, `P = Σ UᵀU`, at `O(KN + K²)`;
//! near a perfect fit it cancels (compare it with a tolerance scaled by ½‖X‖²).
//! The start (iteration 0) costs one extra `Uᵀ X` per view.
//!
//! **Initialisation** ([`Init::Random`], one xoshiro256++ stream from `seed`:
//! V first, then `U^(1)`, …, `U^(H)`, column-major), with `m_v = mean(X^(v))`
//! and `m̄` the mean of the `m_v`:
//! * `vmax = ∞`: `V ~ U(0,1]·√(m̄/K)`, `U^(v) ~ U(0,1]·m_v/√(m̄K)` (for one view
//!   this is scikit-learn's `√(mean(X)/K)` for both factors);
//! * `vmax < ∞` (bounded models): `V ~ U(0,1]·vmax`, `U^(v) ~ U(0,1]·4m_v/(K·vmax)`,
//!   so `E[U^(v)V] = m_v` (DESIGN §3: the small scale kills group-sparse models).
//!
//! With [`Init::Given`] the outputs hold the start on entry; `V` is clipped to
//! `[0, vmax]` first.

use crate::data::{
    check_values, csc_u_step, csc_u_step_applies, csc_u_step_workspace, prepared_workspace,
    ut_x_workspace, x_vt_workspace, Csr, Factors, FactorsMut, Prepared, View, ViewSet, ViewShape,
};
use crate::error::Error;
use crate::linalg::{dot, gemm, gemm_workspace, gram_t};
use crate::linalg::mat::{MatMut, MatRef};
use crate::linalg::real::Real;
use crate::rng::Rng;
use crate::steps::{notify, step, Init, Monitor, Objective, Report, Stop};
use crate::work::{Stack, WorkReq};

/// Options of the NMF solvers (fit and encode).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NmfParams {
    /// Outer iterations at most (default 200; 0 evaluates the start only).
    pub max_iter: u32,
    /// Stop when the objective's relative decrease in one iteration is at most
    /// `tol` (default 1e-6; 0 runs all `max_iter` iterations).
    pub tol: f64,
    /// The guard `ε ≥ 0` in `(a + ε)/(b + ε)` (default `f64::EPSILON`; any value
    /// keeps the updates monotone, larger ones slow them near zero entries).
    pub eps: f64,
    /// Upper bound on `V` (default `+∞`, plain NMF; the papers' models use 1).
    pub vmax: f64,
    /// Seed of the random start (default 0).
    pub seed: u64,
    /// Random or caller-given start (default random).
    pub init: Init,
}

impl Default for NmfParams {
    fn default() -> Self {
        NmfParams {
            max_iter: 200,
            tol: 1e-6,
            eps: f64::EPSILON,
            vmax: f64::INFINITY,
            seed: 0,
            init: Init::Random,
        }
    }
}

impl NmfParams {
    /// [`Error::BadParameter`] unless `tol, eps ≥ 0` finite and `vmax > 0` (∞ allowed).
    pub fn validate(&self) -> Result<(), Error> {
        let ok = self.tol.is_finite()
            && self.tol >= 0.0
            && self.eps.is_finite()
            && self.eps >= 0.0
            && self.vmax > 0.0
            && !self.vmax.is_nan();
        if ok {
            Ok(())
        } else {
            Err(Error::BadParameter)
        }
    }
}

/// Common shape checks: at least one view, `K ≥ 1`, all views with `N` items.
/// Returns `(N, max M_v)`.
pub(crate) fn check_shapes(
    shapes: impl IntoIterator<Item = ViewShape>,
    k: usize,
) -> Result<(usize, usize), Error> {
    let mut n = None;
    let mut mmax = 0;
    for s in shapes {
        if s.rows == 0 || s.cols == 0 {
            return Err(Error::ZeroDimension);
        }
        if *n.get_or_insert(s.cols) != s.cols {
            return Err(Error::DimensionMismatch);
        }
        s.rows.checked_mul(s.cols).ok_or(Error::SizeOverflow)?;
        mmax = mmax.max(s.rows);
    }
    let n = n.ok_or(Error::ZeroDimension)?;
    if k == 0 {
        return Err(Error::BadRank);
    }
    Ok((n, mmax))
}

/// Scratch of the product phases (reused by every view and product).
pub(crate) fn products_req<T>(
    shapes: impl IntoIterator<Item = ViewShape>,
    k: usize,
    n: usize,
) -> WorkReq {
    let mut r = WorkReq::any_of(&[gemm_workspace::<T>(k, n, k), gemm_workspace::<T>(k, k, n)]);
    for s in shapes {
        r = r.or(x_vt_workspace::<T>(s, k));
        r = r.or(ut_x_workspace::<T>(s, k));
        r = r.or(gemm_workspace::<T>(s.rows, k, k));
        r = r.or(gemm_workspace::<T>(k, k, s.rows));
    }
    r
}

fn fit_req<T>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    k: usize,
) -> Result<WorkReq, Error> {
    let (n, mmax) = check_shapes(shapes.clone(), k)?;
    let kk = WorkReq::matrix::<T>(k, k);
    let kn = WorkReq::matrix::<T>(k, n);
    let mk = WorkReq::matrix::<T>(mmax, k);
    Ok(WorkReq::all_of(&[
        kk,
        kk,
        kn,
        kn,
        mk,
        mk,
        prepared_workspace::<T>(shapes.clone()),
        products_req::<T>(shapes.clone(), k, n).or(shapes
            .into_iter()
            .filter_map(|s| csc_u_step_workspace::<T>(s, k))
            .fold(WorkReq::EMPTY, WorkReq::or)),
    ]))
}

fn encode_req<T>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    k: usize,
) -> Result<WorkReq, Error> {
    let (n, _) = check_shapes(shapes.clone(), k)?;
    let kk = WorkReq::matrix::<T>(k, k);
    let kn = WorkReq::matrix::<T>(k, n);
    Ok(WorkReq::all_of(&[
        kk,
        kk,
        kn,
        kn,
        products_req::<T>(shapes, k, n),
    ]))
}

/// Workspace bytes of [`joint_fit`] for views of these shapes and rank `k`
/// (`T` = the scalar type, `f64` for the C ABI). Fails on the same shape
/// errors as [`joint_fit`], or [`Error::SizeOverflow`].
pub fn joint_fit_workspace<T>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    k: usize,
    params: &NmfParams,
) -> Result<usize, Error> {
    params.validate()?;
    fit_req::<T>(shapes, k)?.bytes()
}

/// Workspace bytes of [`joint_encode`].
pub fn joint_encode_workspace<T>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    k: usize,
    params: &NmfParams,
) -> Result<usize, Error> {
    params.validate()?;
    encode_req::<T>(shapes, k)?.bytes()
}

/// Workspace bytes of [`fit`] (one view).
pub fn fit_workspace<T>(shape: ViewShape, k: usize, params: &NmfParams) -> Result<usize, Error> {
    joint_fit_workspace::<T>([shape], k, params)
}

/// Workspace bytes of [`encode`] (one view).
pub fn encode_workspace<T>(shape: ViewShape, k: usize, params: &NmfParams) -> Result<usize, Error> {
    joint_encode_workspace::<T>([shape], k, params)
}

/// Validates everything a fit or an encode reads; returns `(N, max M_v)`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn validate<T: Real, VS: ViewSet<T> + ?Sized, F: Factors<T> + ?Sized>(
    views: &VS,
    k: usize,
    params: &NmfParams,
    u: &F,
    u_is_input: bool,
    v: &[T],
    work_len: usize,
    req: impl Fn() -> Result<WorkReq, Error>,
) -> Result<(usize, usize), Error> {
    params.validate()?;
    let h = views.count();
    let (n, mmax) = check_shapes((0..h).map(|i| views.shape(i)), k)?;
    if u.count() != h {
        return Err(Error::DimensionMismatch);
    }
    for i in 0..h {
        let len = views
            .shape(i)
            .rows
            .checked_mul(k)
            .ok_or(Error::SizeOverflow)?;
        if u.get(i).len() != len {
            return Err(Error::DimensionMismatch);
        }
    }
    if v.len() != k.checked_mul(n).ok_or(Error::SizeOverflow)? {
        return Err(Error::DimensionMismatch);
    }
    req()?.check(work_len)?;
    for i in 0..h {
        views.view(i).check_values(true)?;
    }
    if u_is_input {
        for i in 0..h {
            check_values(u.get(i), true)?;
        }
    }
    if params.init == Init::Given {
        check_values(v, true)?;
    }
    Ok((n, mmax))
}

/// Fits joint multi-view NMF (see the module docs for the objective, updates,
/// cost and initialisation).
///
/// * `views`: `H ≥ 1` views of the same `N` items (read only; nonnegative, finite).
/// * `u`: `H` buffers, `U^(v)` is `M_v × K` column-major (written; read too with
///   [`Init::Given`]).
/// * `v`: `K × N` column-major (written; read with [`Init::Given`]).
/// * `work`: at least [`joint_fit_workspace`] bytes, any alignment.
/// * `monitor`: called with the start (`iter = 0`) and after every iteration.
///
/// Everything is validated before anything is written: on `Err` the outputs are
/// untouched. A cancelled run returns `Ok` with [`Stop::Cancelled`] and the last
/// complete iterate in `u`, `v`.
#[allow(clippy::too_many_arguments)]
pub fn joint_fit<T: Real, VS: ViewSet<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
    views: &VS,
    k: usize,
    params: &NmfParams,
    u: &mut F,
    v: &mut [T],
    work: &mut [u8],
    mut monitor: Option<Monitor<'_>>,
) -> Result<Report, Error> {
    let h = views.count();
    let shapes = |i| views.shape(i);
    let (n, mmax) = validate(
        views,
        k,
        params,
        &*u,
        params.init == Init::Given,
        v,
        work.len(),
        || fit_req::<T>((0..h).map(shapes), k),
    )?;

    let mut st = Stack::new(work);
    let g: &mut [T] = st.take_matrix(k, k)?;
    let p: &mut [T] = st.take_matrix(k, k)?;
    let q: &mut [T] = st.take_matrix(k, n)?;
    let d: &mut [T] = st.take_matrix(k, n)?;
    let a: &mut [T] = st.take_matrix(mmax, k)?;
    let b: &mut [T] = st.take_matrix(mmax, k)?;
    let prep = Prepared::new(views, &mut st)?;
    let eps = T::from_f64(params.eps);
    let vmax = T::from_f64(params.vmax);

    let half_x2: f64 = (0..h).map(|i| 0.5 * views.view(i).sq_frobenius()).sum();
    match params.init {
        Init::Random => random_start(views, k, params, u, v),
        Init::Given => v.iter_mut().for_each(|x| *x = x.min(vmax)),
    }

    // Start: P, Q with the initial U, G = VVᵀ.
    let mut obj;
    {
        let mut sc = st.rest();
        form_pq(views, Some(&prep), k, &*u, p, q, &mut sc)?;
        gram(v, k, n, g, &mut sc)?;
        obj = objective(half_x2, q, v, p, g);
    }
    let initial = obj;
    let mut report = Report {
        iterations: 0,
        initial,
        objective: obj,
        stop: Stop::MaxIter,
        dead_views: 0,
    };
    if notify(&mut monitor, 0, obj) {
        report.stop = Stop::Cancelled;
        report.dead_views = dead_views(&*u);
        return Ok(report);
    }

    for it in 1..=params.max_iter {
        let mut sc = st.rest();
        // U-step, view by view: A = X Vᵀ, B = U G; each view's share of the
        // V-step's P = Σ UᵀU, Q = Σ UᵀX follows it (fused into it, block by
        // block, for a CSC view with K ≤ 64).
        for i in 0..h {
            let x = views.view(i);
            let m = x.rows();
            let csr = prep.get(views, i);
            let ui = u.get_mut(i);
            if let (Some(c), true) = (csr, csc_u_step_applies(k)) {
                csc_u_step(c, (m, n, k), v, g, ui, eps, p, q, i > 0, &mut sc)?;
                continue;
            }
            let (a, b) = (&mut a[..m * k], &mut b[..m * k]);
            x.x_vt(csr, v, k, a, &mut sc)?;
            gemm(
                T::ONE,
                MatRef::col_major(ui, m, k)?,
                MatRef::col_major(g, k, k)?,
                T::ZERO,
                MatMut::col_major(b, m, k)?,
                &mut sc,
            )?;
            mu_step(ui, a, b, eps, T::INFINITY);
            pq_view(&x, csr, ui, k, i > 0, p, q, &mut sc)?;
        }
        // V-step: D = P V.
        gemm(
            T::ONE,
            MatRef::col_major(p, k, k)?,
            MatRef::col_major(v, k, n)?,
            T::ZERO,
            MatMut::col_major(d, k, n)?,
            &mut sc,
        )?;
        mu_step(v, q, d, eps, vmax);
        gram(v, k, n, g, &mut sc)?;
        let prev = obj.total;
        obj = objective(half_x2, q, v, p, g);
        if step(&mut report, &mut monitor, it, prev, obj, params.tol) {
            break;
        }
    }
    report.dead_views = dead_views(&*u);
    Ok(report)
}

/// Encodes new items against fixed bases (out-of-sample, DESIGN §10): the V-step
/// of [`joint_fit`] with `U` fixed,
///
/// ```text
/// min_{0 ≤ V ≤ vmax} ½ Σ_v ‖X^(v) − U^(v) V‖²_F,   V ← min(vmax, V ∘ (Q + ε) ⊘ (P V + ε))
/// ```
///
/// with `P = Σ UᵀU`, `Q = Σ UᵀX` formed once (each view touched once), then
/// `O(K²N)` per iteration. `u` is read only (nonnegative, finite); `v` (`K × N`)
/// is written (read with [`Init::Given`]). Random start: as in [`joint_fit`]'s
/// rule for `V`, from the new data's means.
#[allow(clippy::too_many_arguments)]
pub fn joint_encode<T: Real, VS: ViewSet<T> + ?Sized, F: Factors<T> + ?Sized>(
    views: &VS,
    k: usize,
    params: &NmfParams,
    u: &F,
    v: &mut [T],
    work: &mut [u8],
    mut monitor: Option<Monitor<'_>>,
) -> Result<Report, Error> {
    let h = views.count();
    let shapes = |i| views.shape(i);
    let (n, _) = validate(views, k, params, u, true, v, work.len(), || {
        encode_req::<T>((0..h).map(shapes), k)
    })?;
    let mut st = Stack::new(work);
    let g: &mut [T] = st.take_matrix(k, k)?;
    let p: &mut [T] = st.take_matrix(k, k)?;
    let q: &mut [T] = st.take_matrix(k, n)?;
    let d: &mut [T] = st.take_matrix(k, n)?;
    let eps = T::from_f64(params.eps);
    let vmax = T::from_f64(params.vmax);
    let half_x2: f64 = (0..h).map(|i| 0.5 * views.view(i).sq_frobenius()).sum();
    match params.init {
        Init::Random => {
            let (sv, _) = start_scales(views, k, params.vmax);
            let mut rng = Rng::new(params.seed);
            v.iter_mut()
                .for_each(|x| *x = T::from_f64(rng.uniform() * sv));
        }
        Init::Given => v.iter_mut().for_each(|x| *x = x.min(vmax)),
    }
    let mut sc = st.rest();
    form_pq(views, None, k, u, p, q, &mut sc)?;
    gram(v, k, n, g, &mut sc)?;
    let mut obj = objective(half_x2, q, v, p, g);
    let mut report = Report {
        iterations: 0,
        initial: obj,
        objective: obj,
        stop: Stop::MaxIter,
        dead_views: dead_views(u),
    };
    if notify(&mut monitor, 0, obj) {
        report.stop = Stop::Cancelled;
        return Ok(report);
    }
    for it in 1..=params.max_iter {
        gemm(
            T::ONE,
            MatRef::col_major(p, k, k)?,
            MatRef::col_major(v, k, n)?,
            T::ZERO,
            MatMut::col_major(d, k, n)?,
            &mut sc,
        )?;
        mu_step(v, q, d, eps, vmax);
        gram(v, k, n, g, &mut sc)?;
        let prev = obj.total;
        obj = objective(half_x2, q, v, p, g);
        if step(&mut report, &mut monitor, it, prev, obj, params.tol) {
            break;
        }
    }
    Ok(report)
}

/// NMF of one view: [`joint_fit`] with `H = 1`. `u` is `M × K`, `v` is `K × N`.
pub fn fit<T: Real>(
    x: View<'_, T>,
    k: usize,
    params: &NmfParams,
    u: &mut [T],
    v: &mut [T],
    work: &mut [u8],
    monitor: Option<Monitor<'_>>,
) -> Result<Report, Error> {
    joint_fit(&[x], k, params, &mut [u][..], v, work, monitor)
}

/// Out-of-sample encoding for one view: [`joint_encode`] with `H = 1`.
pub fn encode<T: Real>(
    x: View<'_, T>,
    k: usize,
    params: &NmfParams,
    u: &[T],
    v: &mut [T],
    work: &mut [u8],
    monitor: Option<Monitor<'_>>,
) -> Result<Report, Error> {
    joint_encode(&[x], k, params, &[u][..], v, work, monitor)
}

/// `(scale of V, m̄)` of the random start.
pub(crate) fn start_scales<T: Real, VS: ViewSet<T> + ?Sized>(
    views: &VS,
    k: usize,
    vmax: f64,
) -> (f64, f64) {
    let h = views.count();
    let mbar = (0..h).map(|i| mean(&views.view(i))).sum::<f64>() / h as f64;
    let sv = if vmax.is_finite() {
        vmax
    } else {
        libm::sqrt(mbar / k as f64)
    };
    (sv, mbar)
}

fn mean<T: Real>(x: &View<'_, T>) -> f64 {
    x.sum() / (x.rows() as f64 * x.cols() as f64)
}

pub(crate) fn random_start<T: Real, VS: ViewSet<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
    views: &VS,
    k: usize,
    params: &NmfParams,
    u: &mut F,
    v: &mut [T],
) {
    let (sv, mbar) = start_scales(views, k, params.vmax);
    let mut rng = Rng::new(params.seed);
    v.iter_mut()
        .for_each(|x| *x = T::from_f64(rng.uniform() * sv));
    for i in 0..views.count() {
        let mv = mean(&views.view(i));
        let su = if params.vmax.is_finite() {
            4.0 * mv / (k as f64 * params.vmax)
        } else if mbar > 0.0 {
            mv / libm::sqrt(mbar * k as f64)
        } else {
            0.0
        };
        u.get_mut(i)
            .iter_mut()
            .for_each(|x| *x = T::from_f64(rng.uniform() * su));
    }
}

/// `x ← min(cap, x ∘ (num + ε) ⊘ (den + ε))`.
///
/// With `ε = 0` a zero entry stays zero and a zero denominator leaves the entry
/// as it is (the objective does not depend on it then), so no `0/0` arises.
#[inline]
pub(crate) fn mu_step<T: Real>(x: &mut [T], num: &[T], den: &[T], eps: T, cap: T) {
    for ((xi, &a), &b) in x.iter_mut().zip(num).zip(den) {
        let d = b + eps;
        if d > T::ZERO && *xi != T::ZERO {
            *xi = (*xi * ((a + eps) / d)).min(cap);
        } else {
            *xi = xi.min(cap);
        }
    }
}

/// `P ← Σ_v UᵀU` (K×K), `Q ← Σ_v UᵀX` (K×N).
pub(crate) fn form_pq<T: Real, VS: ViewSet<T> + ?Sized, F: Factors<T> + ?Sized>(
    views: &VS,
    prep: Option<&Prepared<'_, T>>,
    k: usize,
    u: &F,
    p: &mut [T],
    q: &mut [T],
    st: &mut Stack<'_>,
) -> Result<(), Error> {
    for i in 0..views.count() {
        let csr = prep.and_then(|pr| pr.get(views, i));
        pq_view(&views.view(i), csr, u.get(i), k, i > 0, p, q, st)?;
    }
    Ok(())
}

/// One view's `P (+)= UᵀU`, `Q (+)= UᵀX` (`accumulate`: add, else overwrite).
#[allow(clippy::too_many_arguments)]
pub(crate) fn pq_view<T: Real>(
    x: &View<'_, T>,
    csr: Option<Csr<'_, T>>,
    u: &[T],
    k: usize,
    accumulate: bool,
    p: &mut [T],
    q: &mut [T],
    st: &mut Stack<'_>,
) -> Result<(), Error> {
    let beta = if accumulate { T::ONE } else { T::ZERO };
    let um = MatRef::col_major(u, x.rows(), k)?;
    gram_t(um, beta, MatMut::col_major(p, k, k)?, st)?;
    x.ut_x(csr, u, k, beta, q, st)
}

/// `G ← V Vᵀ`.
pub(crate) fn gram<T: Real>(
    v: &[T],
    k: usize,
    n: usize,
    g: &mut [T],
    st: &mut Stack<'_>,
) -> Result<(), Error> {
    let vm = MatRef::col_major(v, k, n)?;
    gram_t(vm.t(), T::ZERO, MatMut::col_major(g, k, k)?, st)
}

/// `½‖X‖² − ⟨Q, V⟩ + ½⟨P, G⟩`.
pub(crate) fn objective<T: Real>(half_x2: f64, q: &[T], v: &[T], p: &[T], g: &[T]) -> Objective {
    let r = half_x2 - dot(q, v) + 0.5 * dot(p, g);
    Objective {
        total: r,
        reconstruction: r,
        ..Objective::default()
    }
}

pub(crate) fn dead_views<T: Real, F: Factors<T> + ?Sized>(u: &F) -> u32 {
    (0..u.count())
        .filter(|&i| u.get(i).iter().all(|&x| x == T::ZERO))
        .count() as u32
}
