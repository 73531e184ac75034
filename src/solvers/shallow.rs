//! The shallow solver (DESIGN §2 with one layer), written once over a
//! [`Collective`]: joint NMF ([`crate::models::nmf::joint_fit`], the guarded
//! Lee–Seung steps, also the deep model's pre-training and MVEL's inner NMF),
//! the MvSL/MCL/GNMF family ([`crate::models::mvsl::fit`]), and both across
//! ranks ([`crate::models::dist`]). The objective, the updates and why they
//! never increase it are in the models' docs.
//!
//! One outer iteration: the U-step of every view from `R_v = X_v Vᵀ` and
//! `G = V Vᵀ` (the Lee–Seung step, or the composite-gradient step of L1,2 /
//! L1,∞ with its Lipschitz search; for joint NMF on a CSC view with `K ≤ 64`
//! the fused sparse U-step of one process), each view's share of `P = Σ UᵀU`
//! and `Q = Σ UᵀX` after its U-step, then `v_inner` V-steps (the bounded
//! update of DESIGN §5; the plain multiplicative one for joint NMF) with the
//! graph's products, and the sums over items of the objective. Where those
//! sums and products are formed is the [`Collective`]'s: on one process
//! ([`super::comm::Local`]), or on a shard of the items and reduced over the
//! ranks (`models::dist`).

use core::cell::{Cell, RefCell};
use core::ops::ControlFlow;

use crate::data::{prepared_req, FactorsMut, Prepared, View, ViewSet, ViewShape};
use crate::error::{Error, Part};
use crate::graph::NoGraph;
use crate::linalg::mat::{MatMut, MatRef};
use crate::linalg::real::Real;
use crate::linalg::{dot, gemm};
use crate::solvers::comm::{AtV, Collective, Local, VStats};
use crate::steps::check::{check_shapes, validate};
use crate::steps::fused::{csc_u_step, csc_u_step_applies, csc_u_step_req};
use crate::steps::mu::{dead_views, form_pq, pq_view, products_req};
use crate::steps::prox::{group_norm, prox_gradient, ProxScratch};
use crate::steps::scale::factor_cap;
use crate::steps::scale::Scale;
use crate::steps::update::mu_step_par;
use crate::steps::vstep::{assemble_sum, v_update_par};
use crate::steps::{finite_outputs, run, Init, Monitor, MvslParams, NmfParams, Objective};
use crate::steps::{Progress, Report};
use crate::work::{Stack, WorkReq};

/// Which updates the solver makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Steps {
    /// Joint NMF ([`crate::models::nmf::joint_fit`]): the guarded Lee–Seung
    /// steps for `U` and `V` (the fused sparse U-step on one process).
    LeeSeung,
    /// The MvSL family ([`crate::models::mvsl::fit`]): the composite-gradient
    /// U-step with group sparsity, the bounded V-step with the graph and `γ`.
    Mvsl,
}

/// The data scale of a fit: `Measured` (the views' scale, limited by the
/// weights and a given start; the bases are returned in the caller's units)
/// or `Fixed` (the deep model's pre-training: the bases stay in the units of
/// the scaled data).
#[derive(Clone, Copy, Debug)]
pub(crate) enum DataScale {
    /// Measured over all items.
    Measured(Scale),
    /// Given by the caller.
    Fixed(Scale),
}

/// [`MvslParams`] of plain joint NMF with these options (`nmf_params()` of the
/// result gives them back).
pub(crate) fn mvsl_of(p: &NmfParams) -> MvslParams {
    MvslParams {
        max_iter: p.max_iter,
        tol: p.tol,
        stop: p.stop,
        eps: p.eps,
        vmax: p.vmax,
        seed: p.seed,
        init: p.init,
        parallel: p.parallel,
        ..MvslParams::joint_nmf()
    }
}

/// Workspace of [`nmf_fit`] on one process.
pub(crate) fn nmf_fit_req<T>(
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

/// Joint NMF on one process (the contract is
/// [`crate::models::nmf::joint_fit`]'s; MVEL's inner NMF calls it too).
#[allow(clippy::too_many_arguments)]
pub(crate) fn nmf_fit<T: Real, VS: ViewSet<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
    views: &VS,
    k: usize,
    params: &NmfParams,
    u: &mut F,
    v: &mut [T],
    work: &mut [u8],
    monitor: Option<Monitor<'_>>,
) -> Result<Report, Error> {
    nmf_fit_in(views, None, k, params, u, v, work, monitor)
}

/// [`nmf_fit`] at a data scale (`crate::steps::scale`): `None` measures the
/// views and returns the bases in the caller's units; `Some(s)` runs on the
/// views times `s` and leaves the bases in those units (the deep model's
/// pre-training, whose first layer runs at the scale of all views).
#[allow(clippy::too_many_arguments)]
pub(crate) fn nmf_fit_in<T: Real, VS: ViewSet<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
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
        || nmf_fit_req::<T>((0..h).map(shapes), k),
    )?;
    let scale = match scale {
        Some(s) => DataScale::Fixed(s),
        None => DataScale::Measured(measured),
    };
    let st = Stack::new(work).with_par(params.parallel);
    let graph = NoGraph { n };
    let mut local = Local::new(&graph);
    fit(
        &mut local,
        views,
        k,
        &mvsl_of(params),
        Steps::LeeSeung,
        (n, mmax),
        scale,
        u,
        v,
        st,
        monitor,
    )
}

/// The buffers of one run, carved from the workspace (the MvSL ones empty
/// for joint NMF, `a` empty when the items are split).
struct Bufs<'a, T> {
    g: &'a mut [T],
    p: &'a mut [T],
    q: &'a mut [T],
    d: &'a mut [T],
    a: &'a mut [T],
    b: &'a mut [T],
    h: &'a mut [T],
    plus: &'a mut [T],
    minus: &'a mut [T],
    c: &'a mut [T],
    sort: &'a mut [T],
    lip: &'a mut [f64],
}

/// The shallow solver (module docs) on this process's `n` items, after the
/// inputs were validated (and, across ranks, agreed): the outcome goes
/// through [`Collective::finish`]. `params` in the caller's units, `st` the
/// rest of the workspace (its parallel regions set).
#[allow(clippy::too_many_arguments)]
pub(crate) fn fit<T: Real, X: Collective<T>, VS: ViewSet<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
    coll: &mut X,
    views: &VS,
    k: usize,
    params: &MvslParams,
    steps: Steps,
    (n, mmax): (usize, usize),
    scale: DataScale,
    u: &mut F,
    v: &mut [T],
    st: Stack<'_>,
    monitor: Option<Monitor<'_>>,
) -> Result<Report, Error> {
    let r = body(
        coll,
        views,
        k,
        params,
        steps,
        (n, mmax),
        scale,
        u,
        v,
        st,
        monitor,
    );
    coll.finish(r)
}

#[allow(clippy::too_many_arguments)]
fn body<T: Real, X: Collective<T>, VS: ViewSet<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
    coll: &mut X,
    views: &VS,
    k: usize,
    params: &MvslParams,
    steps: Steps,
    (n, mmax): (usize, usize),
    scale: DataScale,
    u: &mut F,
    v: &mut [T],
    mut st: Stack<'_>,
    monitor: Option<Monitor<'_>>,
) -> Result<Report, Error> {
    let np = params.nmf_params();
    let hv = views.count();
    // From here on the fit runs on the data times `s` (1 unless the data is far
    // from 1) with the weights of that problem (`crate::steps::scale`).
    // Only the weights that act limit the scale-up (`scale::acting`: a graph
    // without a nonzero weight leaves `β` inert; issue 31).
    let (scale, fixed, params) = match scale {
        DataScale::Fixed(s) => (s, true, s.mvsl(params)),
        DataScale::Measured(s) => {
            let zero = coll.graph_zero();
            let s = s.limited_acting::<T>(params, zero);
            let s = if params.init == Init::Given {
                s.limited_by_start(&*u)
            } else {
                s
            };
            (s, false, s.mvsl_acting(params, zero))
        }
    };
    let params = &params;
    coll.weights(params);
    let s = scale.t::<T>();
    let split = coll.split();
    let mvsl = steps == Steps::Mvsl;
    let (m_all, m_mvsl) = (if split { 0 } else { mmax }, if mvsl { mmax } else { 0 });
    let (k_mvsl, n_mvsl) = if mvsl { (k, n) } else { (0, 0) };
    let bf = Bufs {
        g: st.take_matrix(k, k)?,
        p: st.take_matrix(k, k)?,
        q: st.take_matrix(k, n)?,
        d: st.take_matrix(k, n)?,
        a: st.take_matrix(m_all, k)?,
        b: st.take_matrix(mmax, k)?,
        h: st.take_matrix(k_mvsl, k)?,
        plus: st.take_matrix(k_mvsl, n_mvsl)?,
        minus: st.take_matrix(k_mvsl, n_mvsl)?,
        c: st.take_matrix(m_mvsl, k)?,
        sort: st.take(m_mvsl)?,
        lip: st.take(if mvsl { hv } else { 0 })?,
    };
    let Bufs {
        g,
        p,
        q,
        d,
        a,
        b,
        h,
        plus,
        minus,
        c,
        sort,
        lip,
    } = bf;
    let prep = Prepared::new(views, &mut st)?;
    lip.fill(0.0);
    let eps = T::from_f64(params.eps);
    let vmax = T::from_f64(params.vmax);
    let half_x2 = coll.half_x2(views, scale)?;
    match params.init {
        Init::Random => coll.random_start_par(views, k, &np, scale.get(), u, v, st.par())?,
        Init::Given => {
            v.iter_mut().for_each(|x| *x = x.min(vmax));
            (0..hv).for_each(|i| scale.apply(u.get_mut(i)));
        }
    }
    let use_graph = params.beta > 0.0;
    let objective = |p: &[T], g: &[T], vs: VStats, u: &F| -> Objective {
        let rec = half_x2 - vs.qv + 0.5 * dot(p, g);
        let o = match steps {
            Steps::LeeSeung => Objective::family(rec, rec, 0.0, 0.0, 0.0, 0.0),
            Steps::Mvsl => {
                let norms =
                    (0..hv).map(|i| group_norm(params.sparsity, u.get(i), views.shape(i).rows));
                assemble_sum(params, rec, norms, vs.traces, vs.sum_v)
            }
        };
        scale.objective(o)
    };

    // The start: P, Q, G and the graph's products at the start.
    let obj = {
        let mut sc = st.rest();
        form_pq(views, Some(&prep), s, k, &*u, p, q, &mut sc)?;
        let at = AtV {
            v,
            q,
            kn: (k, n),
            plus,
            minus,
        };
        let vs = coll.stats(at, g, &mut sc)?;
        objective(p, g, vs, &*u)
    };
    coll.started();

    let cell = RefCell::new(&mut *coll);
    let vote_err = Cell::new(None);
    let has_monitor = monitor.is_some();
    let mut user = monitor;
    // The vote and the iterations take the collective in turn (`run` calls
    // one, then the other): a borrow never fails, and would be an
    // `Error::Internal`, not a panic.
    let mut voting = |pr: &Progress| -> ControlFlow<()> {
        let local = user.as_mut().is_some_and(|m| m(pr).is_break());
        let vote = cell.try_borrow_mut().map_err(|_| Error::Internal);
        match vote.and_then(|mut c| c.vote(local)) {
            Err(e) => {
                vote_err.set(Some(e));
                ControlFlow::Break(())
            }
            Ok(true) => ControlFlow::Break(()),
            Ok(false) => ControlFlow::Continue(()),
        }
    };
    let mon: Option<Monitor<'_>> = if has_monitor { Some(&mut voting) } else { None };
    let report = run(params.max_iter, params.stopping(), obj, mon, |_it| {
        let mut cl = cell.try_borrow_mut().map_err(|_| Error::Internal)?;
        let mut sc = st.rest();
        if split {
            cl.reduce_r(views, &prep, s, v, k, &mut sc)?;
        }
        // The U-steps, view by view, each followed by the view's share of
        // P = Σ UᵀU, Q = Σ UᵀX (fused into it, block by block, for joint NMF on
        // a CSC view with K ≤ 64 on one process).
        let mut off = 0;
        for i in 0..hv {
            let x = views.view(i);
            let m = x.rows();
            let mk = m * k;
            let csr = prep.get(views, i);
            let ui = u.get_mut(i);
            if let (Steps::LeeSeung, false, Some(cs), View::Csc(xc), true) =
                (steps, split, csr, &x, csc_u_step_applies(k))
            {
                csc_u_step(cs, xc, k, s, v, g, ui, eps, p, q, i > 0, &mut sc)?;
                continue;
            }
            let r: &[T] = if split {
                cl.r(off, mk)?
            } else {
                let a = a.part_mut(..mk)?;
                x.x_vt_scaled(csr, s, v, k, a, &mut sc)?;
                a
            };
            off += mk;
            if params.proximal() {
                let mut ps = ProxScratch {
                    grad: b.part_mut(..mk)?,
                    t: c.part_mut(..mk)?,
                    delta: &mut [],
                    g1d: &mut [],
                    h: &mut *h,
                    sort: &mut *sort,
                };
                prox_gradient(
                    params,
                    ui,
                    m,
                    k,
                    r,
                    None,
                    g,
                    lip.at_mut(i)?,
                    &mut ps,
                    &mut sc,
                )?;
            } else {
                let bm = b.part_mut(..mk)?;
                gemm(
                    T::ONE,
                    MatRef::col_major(ui, m, k)?,
                    MatRef::col_major(g, k, k)?,
                    T::ZERO,
                    MatMut::col_major(&mut *bm, m, k)?,
                    &mut sc,
                )?;
                mu_step_par(ui, (r, bm), (eps, factor_cap::<T>(1)), sc.par())?;
            }
            pq_view(&x, csr, s, ui, k, i > 0, p, q, &mut sc)?;
        }
        // The V-steps, per item given P, Q and the graph's products.
        for step in 0..params.v_inner {
            if use_graph && step > 0 {
                let at = AtV {
                    v,
                    q,
                    kn: (k, n),
                    plus,
                    minus,
                };
                cl.products(at, &mut sc)?;
            }
            gemm(
                T::ONE,
                MatRef::col_major(p, k, k)?,
                MatRef::col_major(v, k, n)?,
                T::ZERO,
                MatMut::col_major(d, k, n)?,
                &mut sc,
            )?;
            match steps {
                Steps::LeeSeung => mu_step_par(v, (q, d), (eps, vmax), sc.par())?,
                Steps::Mvsl => v_update_par(params, v, (d, plus, minus, q), use_graph, sc.par())?,
            }
        }
        let at = AtV {
            v,
            q,
            kn: (k, n),
            plus,
            minus,
        };
        let vs = cl.stats(at, g, &mut sc)?;
        Ok(objective(p, g, vs, &*u))
    });
    let mut report = report?;
    if let Some(e) = vote_err.get() {
        return Err(e);
    }
    if !fixed {
        (0..hv).for_each(|i| scale.restore(u.get_mut(i)));
    }
    report.dead_views = dead_views(&*u);
    finite_outputs(report, &*u, v)
}
