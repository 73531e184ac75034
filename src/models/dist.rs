//! The shallow solvers across ranks (issue 19): NMF, joint NMF and the
//! MvSL/MCL family with the SGE graph, with the items split over ranks and the
//! sums over items combined by a caller-supplied allreduce ([`Comm`]; MPI's
//! `MPI_Allreduce` in `examples-c/mpi_fit.c`). The crate itself has no MPI,
//! no threads and no allocation here either.
//!
//! **Partition.** Rank `r` holds a contiguous range of the items: the columns
//! `offset_r .. offset_r + N_r` of every view (dense or CSC, as a view of
//! `N_r` items) and of `V`; the ranks' ranges follow each other in rank order
//! and cover all `N` items. The bases `U^(v)` are replicated: every rank holds
//! all of them and computes the same ones.
//!
//! **Why the iterates are the single process's.** Every input of the U-step is
//! a sum over items (`R_v = X_v Vᵀ`, `G = VVᵀ`: also for the composite-gradient
//! step of L1,2 / L1,∞ and its Lipschitz search, which never touches X), so
//! after one allreduce every rank runs the same U-step on the same numbers.
//! The V-step is per item given `P = Σ UᵀU` (replicated), the shard's
//! `Q_s = Σ_v Uᵀ X_s` and the graph products, which for SGE come from the class
//! sums of `V` (a `K × C` allreduce). The objective's parts are sums over items
//! too (`steps::shard` lists them). So the run is the single-process run
//! ([`crate::models::mvsl::fit`], [`crate::models::nmf::joint_fit`]) with only
//! the order of the additions over items changed: the iterates agree to
//! rounding (the tests ask for 1e-10 relative after 50–100 iterations, dense and
//! CSC), the objective is the same monotone sequence, the report the same.
//!
//! **Communication per outer iteration and rank** (8-byte words; `H` views of
//! `M_v` features, rank `K`, `C` classes of the SGE graph, 0 without one):
//!
//! ```text
//! Σ_v M_v·K              R_v = X_v Vᵀ, before the U-steps
//! + K² + K·C + C + 2     G, class sums and squares, ⟨Q,V⟩ and ΣV, after the V-step
//! + (v_inner − 1)·K·C    class sums between inner V-steps (SGE only)
//! + 1                    the stop vote, only when a monitor is given
//! ```
//!
//! in two allreduce calls (plus `v_inner − 1` and the vote), independent of the
//! number of items and of ranks: [`words_per_iteration`] computes it and
//! [`Traffic`] counts what was passed to the callback. Set-up: a broadcast of
//! rank 0's configuration (25 words) and an agreement vote (1 word), then one
//! reduction of `2·ranks + 2H + C` words (item counts, largest entries, view
//! sums, squares, class counts) and one more word when the data are scaled.
//!
//! **Start.** [`Init::Random`] gives every rank the start the single process
//! draws: one seeded stream, `V` (all `K × N` values, column-major) first, then
//! the bases; rank `r` draws and discards the `K·offset_r` values before its
//! columns and the ones after them (`O(K·N)` cheap draws per rank), so its `V`
//! columns and its bases are the single process's bit for bit. The scales use
//! the views' means over all items (reduced). With [`Init::Given`] every rank
//! passes the same bases and its shard of `V`.
//!
//! **Agreement and errors.** Before anything is written the ranks agree: rank
//! 0's shapes and options are broadcast (an allreduce to which only rank 0
//! contributes) and compared bitwise on every rank, then every rank votes.
//! If any rank refused its input, every rank returns: the refusing rank its own
//! error, the others [`Error::PeerFailed`], with the outputs untouched on every
//! rank. Errors found from the reduced sums (too few labeled items over all
//! ranks, data too large) are seen by every rank alike. The monitor sees the
//! same objective on every rank; a cancellation on any rank is agreed (one
//! word) and stops every rank after the same iteration. A failing callback
//! ([`Error::CommFailed`]) cannot be agreed: after the start the outputs then
//! hold a partial iterate.
//!
//! **Scope.** Double precision only (the callback sums `f64`); graphs: none or
//! SGE (TGE and kNN graphs need the edges between shards, i.e. an exchange of
//! `V` rows, not built). The monitor must be given on every rank or on none.

use core::cell::{Cell, RefCell};
use core::ops::ControlFlow;

use crate::data::{FactorsMut, Prepared, ViewSet, ViewShape};
use crate::error::Error;
use crate::linalg::mat::{MatMut, MatRef};
use crate::linalg::{gemm, gemm_req};
use crate::steps::check::{check_shapes, validate};
use crate::steps::init::random_start_shard;
use crate::steps::mu::{dead_views, form_pq, mu_step, products_req};
use crate::steps::prox::{group_norm, prox_gradient, ProxScratch, Sparsity};
use crate::steps::scale::Scale;
use crate::steps::shard::{objective, v_stats, x_vt_all, Layout, SgeShard};
pub use crate::steps::shard::{Comm, SingleRank};
use crate::steps::vstep::v_update;
use crate::steps::{run, Init, Monitor, MvslParams, NmfParams, Objective, Progress, Report};
use crate::steps::{Stop, StopRule};
use crate::work::{Stack, WorkReq};

/// The graph of a distributed fit, over the rank's shard of items.
#[derive(Clone, Copy, Debug)]
pub enum DistGraph<'a> {
    /// No graph (NMF, joint NMF, or β = 0).
    None,
    /// The SGE graph ([`crate::graph::Sge`]) of the labels: `labels[j]` is the
    /// class (`< n_classes`) of the shard's item `j`, or
    /// [`crate::data::UNLABELED`]. At least two labeled items over all ranks.
    Sge {
        /// One per item of the shard.
        labels: &'a [u32],
        /// Classes `C` (the same on every rank).
        n_classes: usize,
    },
}

impl DistGraph<'_> {
    fn classes(&self) -> usize {
        match self {
            DistGraph::None => 0,
            DistGraph::Sge { n_classes, .. } => *n_classes,
        }
    }
}

/// What a rank passed to its [`Comm::allreduce`]: calls and `f64` words, for
/// the set-up (up to and including the start's objective) and for the
/// iterations (everything after it, the monitor's votes included).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Allreduce calls of the set-up.
    pub setup_calls: u64,
    /// Words of the set-up.
    pub setup_words: u64,
    /// Allreduce calls of the iterations.
    pub iter_calls: u64,
    /// Words of the iterations.
    pub iter_words: u64,
}

/// A distributed fit's report: the single-process [`Report`] and the traffic.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DistReport {
    /// The same report as the single-process fit's.
    pub report: Report,
    /// What this rank passed to the callback.
    pub traffic: Traffic,
}

/// The communication model (module docs): `f64` words each rank passes to the
/// allreduce per outer iteration, for views with `sum_rows = Σ_v M_v` features,
/// rank `k`, `classes` SGE classes (0 without a graph or with `β = 0`),
/// `v_inner` V-steps per iteration, and whether a monitor votes.
pub fn words_per_iteration(
    sum_rows: usize,
    k: usize,
    classes: usize,
    v_inner: u32,
    monitor: bool,
) -> u64 {
    let (m, k, c) = (sum_rows as u64, k as u64, classes as u64);
    m * k + k * k + k * c + c + 2 + (v_inner.max(1) as u64 - 1) * k * c + monitor as u64
}

/// The counting wrapper of the caller's communicator.
struct Counted<'c, C: ?Sized> {
    comm: &'c mut C,
    calls: u64,
    words: u64,
}

impl<C: Comm + ?Sized> Counted<'_, C> {
    fn sum(&mut self, buf: &mut [f64]) -> Result<(), Error> {
        self.calls += 1;
        self.words += buf.len() as u64;
        self.comm.allreduce(buf)
    }
}

/// Words of the configuration rank 0 broadcasts.
const CONFIG: usize = 25;

/// Shapes and options every rank must share (compared bitwise with rank 0's).
fn config<VS: ViewSet<f64> + ?Sized>(
    views: &VS,
    graph: &DistGraph<'_>,
    k: usize,
    params: &MvslParams,
    monitor: bool,
    ranks: usize,
) -> [f64; CONFIG] {
    let h = views.count();
    let (mut rows, mut weighted) = (0.0, 0.0);
    for i in 0..h {
        let m = views.shape(i).rows as f64;
        rows += m;
        weighted += (i + 1) as f64 * m;
    }
    let kind = match graph {
        DistGraph::None => 0.0,
        DistGraph::Sge { .. } => 1.0,
    };
    let sparsity = match params.sparsity {
        Sparsity::None => 0.0,
        Sparsity::L12 => 1.0,
        Sparsity::L1Inf => 2.0,
    };
    let stop = match params.stop {
        StopRule::EveryIteration => 0.0,
        StopRule::ScikitLearn => 1.0,
    };
    let init = match params.init {
        Init::Random => 0.0,
        Init::Given => 1.0,
    };
    [
        k as f64,
        h as f64,
        graph.classes() as f64,
        kind,
        rows,
        weighted,
        monitor as u8 as f64,
        ranks as f64,
        params.max_iter as f64,
        params.tol,
        stop,
        params.eps,
        params.vmax,
        (params.seed & 0xffff_ffff) as f64,
        (params.seed >> 32) as f64,
        init,
        sparsity,
        params.alpha,
        params.beta,
        params.gamma,
        params.u_inner as f64,
        params.v_inner as f64,
        params.eta_up,
        params.eta_down,
        params.l0,
    ]
}

/// The ranks agree before anything is written (module docs): rank 0's
/// configuration is broadcast and compared, then every rank votes. Returns
/// this rank's error, [`Error::PeerFailed`] when another rank failed or the
/// configurations differ, or `Ok` on every rank.
fn agree<C: Comm + ?Sized>(
    cm: &mut Counted<'_, C>,
    cfg: &[f64; CONFIG],
    local: Result<(), Error>,
) -> Result<(), Error> {
    let mut b = [0.0; CONFIG];
    if cm.comm.rank() == 0 {
        b = *cfg;
    }
    cm.sum(&mut b)?;
    let same = b.iter().zip(cfg).all(|(x, y)| x.to_bits() == y.to_bits());
    let mut vote = [if local.is_err() || !same { 1.0 } else { 0.0 }];
    cm.sum(&mut vote)?;
    local?;
    if !same || vote[0] != 0.0 {
        return Err(Error::PeerFailed);
    }
    Ok(())
}

/// Takes part in a distributed fit's agreement with an error found before the
/// fit could be called (a C argument that cannot be read): every other rank
/// then returns [`Error::PeerFailed`] and this one `e` (or
/// [`Error::CommFailed`] when the callback fails, [`Error::BadParameter`] for
/// an invalid rank number).
pub fn refuse<C: Comm + ?Sized>(comm: &mut C, e: Error) -> Error {
    if comm.ranks() == 0 || comm.rank() >= comm.ranks() {
        return Error::BadParameter;
    }
    let mut cm = Counted {
        comm,
        calls: 0,
        words: 0,
    };
    match agree(&mut cm, &[f64::NAN; CONFIG], Err(e)) {
        Err(x) => x,
        Ok(()) => Error::Internal,
    }
}

/// Workspace of [`fit`] on a rank whose shard has these shapes.
fn fit_req(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    k: usize,
    classes: usize,
    ranks: usize,
) -> Result<WorkReq, Error> {
    let (n, mmax) = check_shapes(shapes.clone(), k)?;
    let (mut h, mut sum_rows) = (0usize, 0usize);
    for s in shapes.clone() {
        h += 1;
        sum_rows = sum_rows.checked_add(s.rows).ok_or(Error::SizeOverflow)?;
    }
    let layout = Layout::new(sum_rows, k, classes).ok_or(Error::SizeOverflow)?;
    let setup = ranks
        .checked_mul(2)
        .and_then(|a| a.checked_add(h.checked_mul(2)?))
        .and_then(|a| a.checked_add(classes))
        .ok_or(Error::SizeOverflow)?;
    let kk = WorkReq::matrix::<f64>(k, k);
    let kn = WorkReq::matrix::<f64>(k, n);
    let mk = WorkReq::matrix::<f64>(mmax, k);
    let scratch = products_req::<f64>(shapes.clone(), k, n).or(gemm_req::<f64>(k, k, mmax));
    Ok(WorkReq::all_of(&[
        WorkReq::new::<f64>(layout.len()),
        WorkReq::new::<f64>(classes),
        kk,
        kk,
        kn,
        kn,
        kn,
        kn,
        mk,
        mk,
        WorkReq::new::<f64>(mmax),
        WorkReq::new::<f64>(h),
        crate::data::prepared_req::<f64>(shapes),
        WorkReq::any_of(&[WorkReq::new::<f64>(setup), scratch]),
    ]))
}

/// Workspace bytes of [`fit`] on a rank whose shard has these shapes (`N_r`
/// items), for `ranks` ranks and a graph with `classes` classes (0: none).
pub fn fit_workspace(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    k: usize,
    classes: usize,
    ranks: usize,
    params: &MvslParams,
) -> Result<usize, Error> {
    params.validate()?;
    let c = if params.beta > 0.0 { classes } else { 0 };
    fit_req(shapes, k, c, ranks)?.bytes()
}

/// Workspace bytes of [`joint_nmf_fit`].
pub fn joint_nmf_fit_workspace(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    k: usize,
    ranks: usize,
    params: &NmfParams,
) -> Result<usize, Error> {
    fit_workspace(shapes, k, 0, ranks, &mvsl_of(params))
}

/// [`MvslParams`] of plain joint NMF with these options.
fn mvsl_of(p: &NmfParams) -> MvslParams {
    MvslParams {
        max_iter: p.max_iter,
        tol: p.tol,
        stop: p.stop,
        eps: p.eps,
        vmax: p.vmax,
        seed: p.seed,
        init: p.init,
        ..MvslParams::joint_nmf()
    }
}

/// Joint NMF (NMF for one view) across ranks: [`crate::models::nmf::joint_fit`]
/// on the ranks' shards (module docs). `views`, `v` (`K × N_r`) are the shard's;
/// `u` all the bases (the same on every rank).
#[allow(clippy::too_many_arguments)]
pub fn joint_nmf_fit<C: Comm + ?Sized, VS: ViewSet<f64> + ?Sized, F: FactorsMut<f64> + ?Sized>(
    comm: &mut C,
    views: &VS,
    k: usize,
    params: &NmfParams,
    u: &mut F,
    v: &mut [f64],
    work: &mut [u8],
    monitor: Option<Monitor<'_>>,
) -> Result<DistReport, Error> {
    fit(
        comm,
        views,
        DistGraph::None,
        k,
        &mvsl_of(params),
        u,
        v,
        work,
        monitor,
    )
}

/// Local checks of one rank: `(N_r, max M_v)`.
#[allow(clippy::too_many_arguments)]
fn check_local<VS: ViewSet<f64> + ?Sized, F: FactorsMut<f64> + ?Sized>(
    views: &VS,
    graph: &DistGraph<'_>,
    k: usize,
    params: &MvslParams,
    u: &F,
    v: &[f64],
    work_len: usize,
    ranks: usize,
) -> Result<(usize, usize), Error> {
    params.validate()?;
    let np = params.nmf_params();
    let hv = views.count();
    let shapes = |i| views.shape(i);
    let c = if params.beta > 0.0 {
        graph.classes()
    } else {
        0
    };
    let (n, mmax, _) = validate(
        views,
        k,
        &np,
        u,
        params.init == Init::Given,
        v,
        work_len,
        || fit_req((0..hv).map(shapes), k, c, ranks),
    )?;
    if let DistGraph::Sge { labels, n_classes } = *graph {
        if labels.len() != n {
            return Err(Error::DimensionMismatch);
        }
        SgeShard { labels, n_classes }.check()?;
        if params.beta > 0.0 && !params.vmax.is_finite() {
            // SGE has a penalty graph: unbounded below without a bound on V.
            return Err(Error::BadParameter);
        }
    }
    Ok((n, mmax))
}

/// Fits the shallow model ([`crate::models::mvsl::fit`]: MvSL-S, MCL, GNMF
/// without a graph, joint NMF) across ranks (module docs).
///
/// * `comm`: this rank's communicator; every rank calls `fit` with the same
///   shapes (except the item count `N_r`) and options.
/// * `views`: `H ≥ 1` views of this rank's `N_r ≥ 1` items.
/// * `graph`: [`DistGraph::None`] or SGE over this rank's items.
/// * `u`: `H` buffers `M_v × K` (all the bases; written, read with
///   [`Init::Given`]); `v`: `K × N_r`, this rank's columns of `V`.
/// * `work`: at least [`fit_workspace`] bytes.
///
/// Every rank gets the same report; the traffic counts this rank's calls.
#[allow(clippy::too_many_arguments)]
pub fn fit<C: Comm + ?Sized, VS: ViewSet<f64> + ?Sized, F: FactorsMut<f64> + ?Sized>(
    comm: &mut C,
    views: &VS,
    graph: DistGraph<'_>,
    k: usize,
    params: &MvslParams,
    u: &mut F,
    v: &mut [f64],
    work: &mut [u8],
    monitor: Option<Monitor<'_>>,
) -> Result<DistReport, Error> {
    let (rank, ranks) = (comm.rank(), comm.ranks());
    if ranks == 0 || rank >= ranks {
        return Err(Error::BadParameter);
    }
    let mut cm = Counted {
        comm,
        calls: 0,
        words: 0,
    };
    let has_monitor = monitor.is_some();
    let local = check_local(views, &graph, k, params, &*u, v, work.len(), ranks);
    let cfg = config(views, &graph, k, params, has_monitor, ranks);
    agree(&mut cm, &cfg, local.map(|_| ()))?;
    let (n_r, mmax) = local?;

    let hv = views.count();
    let use_graph = params.beta > 0.0;
    let sge = match graph {
        DistGraph::Sge { labels, n_classes } => Some(SgeShard { labels, n_classes }),
        DistGraph::None => None,
    };
    let c_all = graph.classes();
    let sum_rows: usize = (0..hv).map(|i| views.shape(i).rows).sum();
    let layout =
        Layout::new(sum_rows, k, if use_graph { c_all } else { 0 }).ok_or(Error::SizeOverflow)?;

    let mut st = Stack::new(work);
    let red: &mut [f64] = st.take(layout.len())?;
    let counts: &mut [f64] = st.take(layout.c)?;
    let p: &mut [f64] = st.take_matrix(k, k)?;
    let hb: &mut [f64] = st.take_matrix(k, k)?;
    let q: &mut [f64] = st.take_matrix(k, n_r)?;
    let d: &mut [f64] = st.take_matrix(k, n_r)?;
    let plus: &mut [f64] = st.take_matrix(k, n_r)?;
    let minus: &mut [f64] = st.take_matrix(k, n_r)?;
    let bb: &mut [f64] = st.take_matrix(mmax, k)?;
    let cb: &mut [f64] = st.take_matrix(mmax, k)?;
    let sort: &mut [f64] = st.take(mmax)?;
    let lip: &mut [f64] = st.take(hv)?;

    // Set-up reduction: [max entry per rank | items per rank | view sums |
    // view squares | labeled items per class].
    let (n, offset, half, scale);
    {
        let mut ss = st.rest();
        let su: &mut [f64] = ss.take(2 * ranks + 2 * hv + c_all)?;
        su.fill(0.0);
        let mut mx = 0.0f64;
        for i in 0..hv {
            let x = views.view(i);
            mx = mx.max(x.max_value());
            su[2 * ranks + i] = x.sum();
            su[2 * ranks + hv + i] = x.sq_frobenius();
        }
        su[rank] = mx;
        su[ranks + rank] = n_r as f64;
        if let Some(sg) = &sge {
            sg.add_counts(&mut su[2 * ranks + 2 * hv..]);
        }
        cm.sum(su)?;
        let gmax = su[..ranks].iter().fold(0.0f64, |a, &b| a.max(b));
        n = su[ranks..2 * ranks].iter().sum::<f64>() as usize;
        offset = su[ranks..ranks + rank].iter().sum::<f64>() as usize;
        half = su[2 * ranks + hv..2 * ranks + 2 * hv]
            .iter()
            .map(|x| 0.5 * x)
            .sum::<f64>();
        if sge.is_some() {
            let cc = &su[2 * ranks + 2 * hv..];
            if cc.iter().sum::<f64>() < 2.0 {
                return Err(Error::TooFewLabeled);
            }
            counts.copy_from_slice(&cc[..layout.c]);
        }
        scale = Scale::of_measures::<f64>(half, gmax)?;
        // The views' sums stay in `lip` until the start is drawn.
        lip.copy_from_slice(&su[2 * ranks..2 * ranks + hv]);
    }
    let scale = scale.limited::<f64>(params.alpha, params.beta, params.gamma);
    let scale = if params.init == Init::Given {
        scale.limited_by_start(&*u)
    } else {
        scale
    };
    let np = params.nmf_params();
    let params = &scale.mvsl(params);
    let s = scale.t::<f64>();
    let half_x2 = if scale.is_one() {
        half
    } else {
        let mut b = [(0..hv)
            .map(|i| 0.5 * views.view(i).sq_frobenius_scaled(scale.get()))
            .sum::<f64>()];
        cm.sum(&mut b)?;
        b[0]
    };

    match params.init {
        Init::Random => {
            let rows = |i: usize| views.shape(i).rows as f64;
            let mean = |i: usize| lip[i] / (rows(i) * n as f64);
            random_start_shard(&mean, k, &np, scale.get(), (offset, n), u, v);
        }
        Init::Given => {
            v.iter_mut().for_each(|x| *x = x.min(params.vmax));
            (0..hv).for_each(|i| scale.apply(u.get_mut(i)));
        }
    }
    lip.fill(0.0);
    let prep = Prepared::new(views, &mut st)?;
    let mut sc = st.rest();
    let sge_on = if use_graph { sge } else { None };

    // The start: P, Q_s, then the reduced V statistics and the objective.
    form_pq(views, Some(&prep), s, k, &*u, p, q, &mut sc)?;
    plus.fill(0.0);
    minus.fill(0.0);
    let eval = |cm: &mut Counted<'_, C>,
                red: &mut [f64],
                v: &[f64],
                q: &[f64],
                p: &[f64],
                u: &F,
                plus: &mut [f64],
                minus: &mut [f64],
                sc: &mut Stack<'_>|
     -> Result<Objective, Error> {
        let vpart = &mut red[layout.mk..];
        v_stats(&layout, v, n_r, q, sge_on.as_ref(), vpart, sc)?;
        cm.sum(vpart)?;
        let (g, sums, sq, scal) = layout.split_v(vpart);
        let traces = match &sge_on {
            Some(sg) => {
                sg.products(counts, sums, v, k, plus, minus);
                sg.traces(counts, sums, sq, k)
            }
            None => (0.0, 0.0),
        };
        let norms = (0..hv).map(|i| group_norm(params.sparsity, u.get(i), views.shape(i).rows));
        Ok(scale.objective(objective(
            params,
            half_x2,
            p,
            g,
            (scal[0], scal[1]),
            norms,
            traces,
        )))
    };
    let obj = eval(&mut cm, red, v, q, p, &*u, plus, minus, &mut sc)?;
    let setup = (cm.calls, cm.words);

    let cm = RefCell::new(cm);
    let vote_err = Cell::new(None);
    let mut user = monitor;
    let mut voting = |pr: &Progress| -> ControlFlow<()> {
        let local = user.as_mut().is_some_and(|m| m(pr).is_break());
        let mut b = [if local { 1.0 } else { 0.0 }];
        match cm.borrow_mut().sum(&mut b) {
            Err(e) => {
                vote_err.set(Some(e));
                ControlFlow::Break(())
            }
            Ok(()) if b[0] != 0.0 => ControlFlow::Break(()),
            Ok(()) => ControlFlow::Continue(()),
        }
    };
    let mon: Option<Monitor<'_>> = if has_monitor { Some(&mut voting) } else { None };
    let eps = params.eps;
    let mut report = run(params.max_iter, params.stopping(), obj, mon, |_it| {
        let mut cmb = cm.borrow_mut();
        // R_v = X_v Vᵀ over all items.
        {
            let rpart = &mut red[..layout.mk];
            x_vt_all(views, &prep, s, v, k, rpart, &mut sc)?;
            cmb.sum(rpart)?;
        }
        // The U-steps, the same on every rank.
        {
            let (rpart, vpart) = red.split_at_mut(layout.mk);
            let g = &vpart[..k * k];
            let mut off = 0;
            for (i, lip_i) in lip.iter_mut().enumerate() {
                let m = views.shape(i).rows;
                let r = &rpart[off..off + m * k];
                off += m * k;
                let ui = u.get_mut(i);
                if params.proximal() {
                    let mut ps = ProxScratch {
                        grad: &mut bb[..m * k],
                        t: &mut cb[..m * k],
                        delta: &mut [],
                        g1d: &mut [],
                        h: &mut *hb,
                        sort: &mut *sort,
                    };
                    prox_gradient(params, ui, m, k, r, None, g, lip_i, &mut ps, &mut sc)?;
                } else {
                    gemm(
                        1.0,
                        MatRef::col_major(ui, m, k)?,
                        MatRef::col_major(g, k, k)?,
                        0.0,
                        MatMut::col_major(&mut bb[..m * k], m, k)?,
                        &mut sc,
                    )?;
                    mu_step(ui, r, &bb[..m * k], eps, f64::INFINITY);
                }
            }
        }
        form_pq(views, Some(&prep), s, k, &*u, p, q, &mut sc)?;
        // The V-steps, local given P, Q_s and the graph products.
        for step in 0..params.v_inner {
            if step > 0 {
                if let Some(sg) = &sge_on {
                    let (_, sums, sq, _) = layout.split_v(&mut red[layout.mk..]);
                    sg.local_sums(v, k, sums, sq);
                    cmb.sum(sums)?;
                    sg.products(counts, sums, v, k, plus, minus);
                }
            }
            gemm(
                1.0,
                MatRef::col_major(p, k, k)?,
                MatRef::col_major(v, k, n_r)?,
                0.0,
                MatMut::col_major(d, k, n_r)?,
                &mut sc,
            )?;
            v_update(params, v, d, plus, minus, q, use_graph);
        }
        eval(&mut cmb, red, v, q, p, &*u, plus, minus, &mut sc)
    })?;
    if let Some(e) = vote_err.get() {
        return Err(e);
    }
    (0..hv).for_each(|i| scale.restore(u.get_mut(i)));
    report.dead_views = dead_views(&*u);
    let cm = cm.into_inner();
    let traffic = Traffic {
        setup_calls: setup.0,
        setup_words: setup.1,
        iter_calls: cm.calls - setup.0,
        iter_words: cm.words - setup.1,
    };
    debug_assert!(report.stop != Stop::Cancelled || has_monitor);
    Ok(DistReport { report, traffic })
}
