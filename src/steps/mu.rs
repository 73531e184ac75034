//! The guarded multiplicative steps (DESIGN §3) and the products every model of
//! the family forms from them: `P = Σ UᵀU`, `Q = Σ UᵀX`, `G = VVᵀ`, the
//! reconstruction term without another pass over X, and the plain Lee–Seung
//! solver that NMF, joint NMF and the deep model's pre-training run.

use crate::data::{
    prepared_req, ut_x_req, x_vt_req, Csr, Factors, FactorsMut, Prepared, View, ViewSet, ViewShape,
};
use crate::error::Error;
use crate::linalg::mat::{MatMut, MatRef};
use crate::linalg::real::Real;
use crate::linalg::{dot, gemm, gemm_req, gram_par, gram_req};
use crate::steps::check::{check_shapes, validate};
use crate::steps::fused::{csc_u_step, csc_u_step_applies, csc_u_step_req};
use crate::steps::init::random_start;
use crate::steps::scale::Scale;
pub(crate) use crate::steps::update::mu_step;
use crate::steps::update::mu_step_par;
use crate::steps::{finite_outputs, run, Init, Monitor, NmfParams, Objective, Report};
use crate::work::{Stack, WorkReq};

/// Scratch of the product phases (reused by every view and product).
pub(crate) fn products_req<T>(
    shapes: impl IntoIterator<Item = ViewShape>,
    k: usize,
    n: usize,
) -> WorkReq {
    let mut r = WorkReq::any_of(&[gemm_req::<T>(k, n, k), gram_req::<T>(n, k)]);
    for s in shapes {
        r = r.or(x_vt_req::<T>(s, k));
        r = r.or(ut_x_req::<T>(s, k));
        r = r.or(gemm_req::<T>(s.rows, k, k));
        r = r.or(gram_req::<T>(s.rows, k));
    }
    r
}

/// Workspace of [`fit`].
pub(crate) fn fit_req<T>(
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
        prepared_req::<T>(shapes.clone()),
        products_req::<T>(shapes.clone(), k, n).or(shapes
            .into_iter()
            .filter_map(|s| csc_u_step_req::<T>(s, k))
            .fold(WorkReq::EMPTY, WorkReq::or)),
    ]))
}

/// The guarded Lee–Seung solver of joint multi-view NMF (DESIGN §3; the
/// contract is [`crate::models::nmf::joint_fit`]'s, which calls it, as does the
/// deep model's layer-wise pre-training through [`fit_in`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn fit<T: Real, VS: ViewSet<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
    views: &VS,
    k: usize,
    params: &NmfParams,
    u: &mut F,
    v: &mut [T],
    work: &mut [u8],
    monitor: Option<Monitor<'_>>,
) -> Result<Report, Error> {
    fit_in(views, None, k, params, u, v, work, monitor)
}

/// [`fit`] at a data scale (`crate::steps::scale`): `None` measures the views
/// ([`Scale::of`]) and returns the bases in the caller's units; `Some(s)` runs on
/// the views times `s` and leaves the bases in those units (the deep model's
/// pre-training, whose first layer runs at the scale of all views).
#[allow(clippy::too_many_arguments)]
pub(crate) fn fit_in<T: Real, VS: ViewSet<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
    views: &VS,
    scale: Option<Scale>,
    k: usize,
    params: &NmfParams,
    u: &mut F,
    v: &mut [T],
    work: &mut [u8],
    monitor: Option<Monitor<'_>>,
) -> Result<Report, Error> {
    let h = views.count();
    let shapes = |i| views.shape(i);
    let (n, mmax, measured) = validate(
        views,
        k,
        params,
        &*u,
        params.init == Init::Given,
        v,
        work.len(),
        || fit_req::<T>((0..h).map(shapes), k),
    )?;
    let sc = match scale {
        Some(s) => s,
        None if params.init == Init::Given => measured.limited_by_start(&*u),
        None => measured,
    };
    let s = sc.t::<T>();

    let mut st = Stack::new(work).with_par(params.parallel);
    let g: &mut [T] = st.take_matrix(k, k)?;
    let p: &mut [T] = st.take_matrix(k, k)?;
    let q: &mut [T] = st.take_matrix(k, n)?;
    let d: &mut [T] = st.take_matrix(k, n)?;
    let a: &mut [T] = st.take_matrix(mmax, k)?;
    let b: &mut [T] = st.take_matrix(mmax, k)?;
    let prep = Prepared::new(views, &mut st)?;
    let eps = T::from_f64(params.eps);
    let vmax = T::from_f64(params.vmax);

    let half_x2: f64 = sc.half_sq(views);
    match params.init {
        Init::Random => random_start(views, k, params, sc.get(), u, v),
        Init::Given => {
            v.iter_mut().for_each(|x| *x = x.min(vmax));
            (0..h).for_each(|i| sc.apply(u.get_mut(i)));
        }
    }

    // Start: P, Q with the initial U, G = VVᵀ.
    let obj;
    {
        let mut sc = st.rest();
        form_pq(views, Some(&prep), s, k, &*u, p, q, &mut sc)?;
        gram(v, k, n, g, &mut sc)?;
        obj = objective(half_x2, q, v, p, g);
    }
    let mut report = run(
        params.max_iter,
        params.stopping(),
        sc.objective(obj),
        monitor,
        |_it| {
            let mut stk = st.rest();
            // U-step, view by view: A = X Vᵀ, B = U G; each view's share of the
            // V-step's P = Σ UᵀU, Q = Σ UᵀX follows it (fused into it, block by
            // block, for a CSC view with K ≤ 64).
            for i in 0..h {
                let x = views.view(i);
                let m = x.rows();
                let csr = prep.get(views, i);
                let ui = u.get_mut(i);
                if let (Some(c), View::Csc(x), true) = (csr, &x, csc_u_step_applies(k)) {
                    csc_u_step(c, x, k, s, v, g, ui, eps, p, q, i > 0, &mut stk)?;
                    continue;
                }
                let (Some(a), Some(b)) = (a.get_mut(..m * k), b.get_mut(..m * k)) else {
                    return Err(Error::Internal);
                };
                x.x_vt_scaled(csr, s, v, k, a, &mut stk)?;
                gemm(
                    T::ONE,
                    MatRef::col_major(ui, m, k)?,
                    MatRef::col_major(g, k, k)?,
                    T::ZERO,
                    MatMut::col_major(b, m, k)?,
                    &mut stk,
                )?;
                mu_step_par(ui, (a, b), (eps, T::INFINITY), stk.par())?;
                pq_view(&x, csr, s, ui, k, i > 0, p, q, &mut stk)?;
            }
            // V-step: D = P V.
            gemm(
                T::ONE,
                MatRef::col_major(p, k, k)?,
                MatRef::col_major(v, k, n)?,
                T::ZERO,
                MatMut::col_major(d, k, n)?,
                &mut stk,
            )?;
            mu_step_par(v, (q, d), (eps, vmax), stk.par())?;
            gram(v, k, n, g, &mut stk)?;
            Ok(sc.objective(objective(half_x2, q, v, p, g)))
        },
    )?;
    if scale.is_none() {
        (0..h).for_each(|i| sc.restore(u.get_mut(i)));
    }
    report.dead_views = dead_views(&*u);
    finite_outputs(report, &*u, v)
}

/// `P ← Σ_v UᵀU` (K×K), `Q ← Σ_v Uᵀ(sX)` (K×N; `s` the data scale, 1 for
/// data of ordinary magnitude).
#[allow(clippy::too_many_arguments)]
pub(crate) fn form_pq<T: Real, VS: ViewSet<T> + ?Sized, F: Factors<T> + ?Sized>(
    views: &VS,
    prep: Option<&Prepared<'_, T>>,
    s: T,
    k: usize,
    u: &F,
    p: &mut [T],
    q: &mut [T],
    st: &mut Stack<'_>,
) -> Result<(), Error> {
    for i in 0..views.count() {
        let csr = prep.and_then(|pr| pr.get(views, i));
        pq_view(&views.view(i), csr, s, u.get(i), k, i > 0, p, q, st)?;
    }
    Ok(())
}

/// One view's `P (+)= UᵀU`, `Q (+)= Uᵀ(sX)` (`accumulate`: add, else overwrite).
#[allow(clippy::too_many_arguments)]
pub(crate) fn pq_view<T: Real>(
    x: &View<'_, T>,
    csr: Option<Csr<'_, T>>,
    s: T,
    u: &[T],
    k: usize,
    accumulate: bool,
    p: &mut [T],
    q: &mut [T],
    st: &mut Stack<'_>,
) -> Result<(), Error> {
    let beta = if accumulate { T::ONE } else { T::ZERO };
    let um = MatRef::col_major(u, x.rows(), k)?;
    gram_par(um, beta, MatMut::col_major(p, k, k)?, st)?;
    x.ut_x_scaled(csr, s, u, k, beta, q, st)
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
    gram_par(vm.t(), T::ZERO, MatMut::col_major(g, k, k)?, st)
}

/// `½‖X‖² − ⟨Q, V⟩ + ½⟨P, G⟩`.
pub(crate) fn objective<T: Real>(half_x2: f64, q: &[T], v: &[T], p: &[T], g: &[T]) -> Objective {
    let r = half_x2 - dot(q, v) + 0.5 * dot(p, g);
    Objective::family(r, r, 0.0, 0.0, 0.0, 0.0)
}

pub(crate) fn dead_views<T: Real, F: Factors<T> + ?Sized>(u: &F) -> u32 {
    (0..u.count())
        .filter(|&i| u.get(i).iter().all(|&x| x == T::ZERO))
        .count() as u32
}
