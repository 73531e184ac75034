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
//!
//! **Magnitudes** (`crate::steps::scale`): data with `½ Σ_v ‖X^(v)‖²_F > 2^999`
//! is refused ([`crate::Error::InputTooLarge`]); data whose largest entry is
//! outside `[2^−64, 2^64]` is solved as `X/c` for a power of two `c`, with the bases
//! divided by `c` and the weights scaled to keep the minimisers (`α/c`,
//! `β/c²`, `γ/c²`); factors and objective are returned in the caller's units.

use crate::data::{Factors, FactorsMut, View, ViewSet, ViewShape};
use crate::error::Error;
use crate::linalg::gemm;
use crate::linalg::mat::{MatMut, MatRef};
use crate::linalg::real::Real;
use crate::rng::Rng;
use crate::solvers::shallow::{nmf_fit, nmf_fit_req};
use crate::steps::check::{check_shapes, validate};
use crate::steps::init::start_scales;
use crate::steps::mu::{dead_views, gram, mu_step, objective, products_req};
use crate::steps::scale::Scale;
use crate::steps::vstep::form_pq_encode;
pub use crate::steps::NmfParams;
use crate::steps::{finite_outputs, run, Init, Monitor, Report};
use crate::work::{Stack, WorkReq};

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
    nmf_fit_req::<T>(shapes, k)?.bytes()
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
/// untouched. A cancelled run returns `Ok` with [`Stop::Cancelled`](crate::steps::Stop::Cancelled) and the last
/// complete iterate in `u`, `v`.
///
/// ```
/// use mvnmf::models::nmf::{self, NmfParams};
/// use mvnmf::{Dense, View};
///
/// // Two views (4 and 3 features) of the same 6 items; one shared V (K x N).
/// let (n, k) = (6, 2);
/// let x1: Vec<f64> = (0..4 * n).map(|i| (i * 5 % 9 + 1) as f64).collect();
/// let x2: Vec<f64> = (0..3 * n).map(|i| (i * 2 % 7 + 1) as f64).collect();
/// let views = [View::from(Dense::new(&x1, 4, n, 4)?), View::from(Dense::new(&x2, 3, n, 3)?)];
/// let params = NmfParams { max_iter: 60, seed: 1, ..NmfParams::default() };
/// let shapes = views.iter().map(|x| x.shape());
/// let mut work = vec![0u8; nmf::joint_fit_workspace::<f64>(shapes, k, &params)?];
/// let (mut u1, mut u2, mut v) = (vec![0.0; 4 * k], vec![0.0; 3 * k], vec![0.0; k * n]);
/// let us = &mut [&mut u1[..], &mut u2[..]][..];
/// let report = nmf::joint_fit(&views[..], k, &params, us, &mut v, &mut work, None)?;
/// assert!(report.objective.total < report.initial.total);
/// assert!(u1.iter().chain(&u2).chain(&v).all(|&e| e >= 0.0));
/// # Ok::<(), mvnmf::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn joint_fit<T: Real, VS: ViewSet<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
    views: &VS,
    k: usize,
    params: &NmfParams,
    u: &mut F,
    v: &mut [T],
    work: &mut [u8],
    monitor: Option<Monitor<'_>>,
) -> Result<Report, Error> {
    nmf_fit(views, k, params, u, v, work, monitor)
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
///
/// ```
/// use mvnmf::models::nmf::{self, NmfParams};
/// use mvnmf::{Dense, View};
///
/// // Fixed bases of two views (4 and 3 features, K = 2); encode 3 new items.
/// let k = 2;
/// let u1 = [1.0, 0.0, 1.0, 0.5, 0.0, 1.0, 0.5, 1.0];
/// let u2 = [1.0, 1.0, 0.0, 0.0, 1.0, 1.0];
/// // New items made exactly of the bases with codes (1, 2), (3, 0.5), (0.5, 0.5).
/// let codes = [1.0, 2.0, 3.0, 0.5, 0.5, 0.5];
/// let mul = |u: &[f64], m: usize| -> Vec<f64> {
///     (0..3).flat_map(|j| (0..m).map(move |i| (0..k).map(|c| u[i + c * m] * codes[c + j * k]).sum::<f64>()))
///         .collect()
/// };
/// let (y1, y2) = (mul(&u1, 4), mul(&u2, 3));
/// let views = [View::from(Dense::new(&y1, 4, 3, 4)?), View::from(Dense::new(&y2, 3, 3, 3)?)];
/// let params = NmfParams { max_iter: 500, tol: 0.0, ..NmfParams::default() };
/// let shapes = views.iter().map(|x| x.shape());
/// let mut work = vec![0u8; nmf::joint_encode_workspace::<f64>(shapes, k, &params)?];
/// let mut v = vec![0.0; k * 3];
/// nmf::joint_encode(&views[..], k, &params, &[&u1[..], &u2[..]][..], &mut v, &mut work, None)?;
/// // The bases are fixed: the codes come back.
/// assert!(v.iter().zip(&codes).all(|(a, b)| (a - b).abs() < 1e-3));
/// # Ok::<(), mvnmf::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn joint_encode<T: Real, VS: ViewSet<T> + ?Sized, F: Factors<T> + ?Sized>(
    views: &VS,
    k: usize,
    params: &NmfParams,
    u: &F,
    v: &mut [T],
    work: &mut [u8],
    monitor: Option<Monitor<'_>>,
) -> Result<Report, Error> {
    let h = views.count();
    let shapes = |i| views.shape(i);
    let (n, _, _) = validate(views, k, params, u, true, v, work.len(), || {
        encode_req::<T>((0..h).map(shapes), k)
    })?;
    // The data and the bases times `s` (1 unless they are far above 1;
    // `crate::steps::scale`).
    let scale = Scale::of_encode(views, u)?;
    let mut st = Stack::new(work).with_par(params.parallel);
    let g: &mut [T] = st.take_matrix(k, k)?;
    let p: &mut [T] = st.take_matrix(k, k)?;
    let q: &mut [T] = st.take_matrix(k, n)?;
    let d: &mut [T] = st.take_matrix(k, n)?;
    let eps = T::from_f64(params.eps);
    let vmax = T::from_f64(params.vmax);
    let half_x2: f64 = scale.half_sq(views);
    match params.init {
        Init::Random => {
            let (sv, _) = start_scales(views, k, params.vmax, scale.get());
            let mut rng = Rng::new(params.seed);
            v.iter_mut()
                .for_each(|x| *x = T::from_f64(rng.uniform() * sv));
        }
        Init::Given => v.iter_mut().for_each(|x| *x = x.min(vmax)),
    }
    let mut sc = st.rest();
    form_pq_encode(views, scale, k, u, p, q, &mut sc)?;
    gram(v, k, n, g, &mut sc)?;
    let obj = scale.objective(objective(half_x2, q, v, p, g));
    let mut report = run(params.max_iter, params.stopping(), obj, monitor, |_it| {
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
        Ok(scale.objective(objective(half_x2, q, v, p, g)))
    })?;
    report.dead_views = dead_views(u);
    finite_outputs(report, u, v)
}

/// NMF of one view: [`joint_fit`] with `H = 1`. `u` is `M × K`, `v` is `K × N`.
///
/// ```
/// use mvnmf::models::nmf::{self, NmfParams};
/// use mvnmf::{Dense, View};
///
/// // 5 features x 8 items, column-major (items are columns); rank 2.
/// let (m, n, k) = (5, 8, 2);
/// let x: Vec<f64> = (0..m * n).map(|i| (i * 3 % 7 + 1) as f64).collect();
/// let view = View::from(Dense::new(&x, m, n, m)?);
/// let params = NmfParams { max_iter: 100, seed: 7, ..NmfParams::default() };
/// let mut work = vec![0u8; nmf::fit_workspace::<f64>(view.shape(), k, &params)?];
/// let (mut u, mut v) = (vec![0.0; m * k], vec![0.0; k * n]);
/// let report = nmf::fit(view, k, &params, &mut u, &mut v, &mut work, None)?;
/// assert!(report.objective.total < report.initial.total);
///
/// // Out-of-sample: three new items encoded against the fitted U ([`encode`]).
/// let y: Vec<f64> = x[..m * 3].iter().map(|e| 2.0 * e).collect();
/// let new = View::from(Dense::new(&y, m, 3, m)?);
/// let mut work = vec![0u8; nmf::encode_workspace::<f64>(new.shape(), k, &params)?];
/// let mut v_new = vec![0.0; k * 3];
/// nmf::encode(new, k, &params, &u, &mut v_new, &mut work, None)?;
/// assert!(v_new.iter().all(|&e| e >= 0.0) && v_new.iter().any(|&e| e > 0.0));
///
/// // Bad input: an error, and the outputs as they were.
/// let before = v.clone();
/// let too_short = &mut work[..1];
/// let err = nmf::fit(view, k, &params, &mut u, &mut v, too_short, None).unwrap_err();
/// assert_eq!(err, mvnmf::Error::WorkspaceTooSmall);
/// assert_eq!(v, before);
/// # Ok::<(), mvnmf::Error>(())
/// ```
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
///
/// ```
/// use mvnmf::models::nmf::{self, NmfParams};
/// use mvnmf::{Dense, View};
///
/// // A fixed basis (3 features x K = 2) and two new items with codes (2, 1), (1, 4).
/// let (m, k) = (3, 2);
/// let u = [1.0, 0.0, 1.0, 0.0, 1.0, 1.0];
/// let y = [2.0, 1.0, 3.0, 1.0, 4.0, 5.0];
/// let new = View::from(Dense::new(&y, m, 2, m)?);
/// let params = NmfParams { max_iter: 500, tol: 0.0, ..NmfParams::default() };
/// let mut work = vec![0u8; nmf::encode_workspace::<f64>(new.shape(), k, &params)?];
/// let mut v = vec![0.0; k * 2];
/// nmf::encode(new, k, &params, &u, &mut v, &mut work, None)?;
/// assert!(v.iter().zip([2.0f64, 1.0, 1.0, 4.0]).all(|(a, b)| (a - b).abs() < 1e-3));
/// # Ok::<(), mvnmf::Error>(())
/// ```
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
