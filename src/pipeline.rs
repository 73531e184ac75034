//! The whole semi-supervised pipeline in one call (issue 5): views + labels →
//! (MKL fusion weights →) graphs → factorization, with one workspace query.
//!
//! | method | graph | solver preset |
//! |---|---|---|
//! | [`Method::JointNmf`] | none | [`MvslParams::joint_nmf`] |
//! | [`Method::Gnmf`] | within-class kNN affinity (LDGE with `kp = 0`) | [`MvslParams::gnmf`] |
//! | [`Method::MvslS`] | SGE (implicit, no neighbour search) | [`MvslParams::mvsl`] |
//! | [`Method::MvslL`] | LDGE under the fused kernel | [`MvslParams::mvsl`] |
//! | [`Method::MvslT`] | TGE under the fused kernel | [`MvslParams::mvsl`] |
//! | [`Method::Mcl`] | SGE | [`MvslParams::mcl`] |
//!
//! The fusion weights `η` (written to the caller's `eta`) are learned by
//! kernel–target alignment ([`crate::similarity::mkl_weights`]) when
//! `learn_eta` is set, else uniform; they matter only for the neighbour graphs
//! (GNMF, LDGE, TGE). The graphs live in the workspace: `O(N·(ka + kp))`, never
//! `O(N²)`. The pieces stay callable on their own ([`crate::similarity`],
//! [`crate::graph`], [`crate::models::mvsl`]); this is exactly their composition.
//! [`fit_report`] is [`fit`] that also says how many entries the graphs it built
//! store ([`PipelineReport`]).

use crate::data::{FactorsMut, ViewSet, ViewShape};
use crate::error::{Error, Part};
use crate::graph::{
    self, CsrGraph, CsrGraphs, CsrOut, GraphBuild, GraphNnz, GraphParams, NoGraph, Sge,
};
use crate::linalg::real::Real;
use crate::models::mvsl::{self, MvslParams};
use crate::similarity::{self, KernelSet, MklParams};
use crate::steps::{Init, Monitor, Objective, Phase, Progress, Report, Stop};
use crate::work::{Stack, WorkReq};

/// Which model of the papers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Joint multi-view NMF (unsupervised; labels unused).
    JointNmf,
    /// Semi-supervised GNMF: within-class kNN affinity graph only.
    Gnmf,
    /// MvSL with the simple graph embedding.
    MvslS,
    /// MvSL with the local discriminant graph embedding.
    MvslL,
    /// MvSL with the transductive graph embedding.
    MvslT,
    /// MCL (L1,∞, SGE, γ).
    Mcl,
}

/// Options of [`fit`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PipelineParams {
    /// The model.
    pub method: Method,
    /// Solver options (weights α, β, γ, iterations, ...).
    pub solver: MvslParams,
    /// Neighbour graph options (GNMF, LDGE, TGE).
    pub graph: GraphParams,
    /// Learn `η` by kernel–target alignment (else uniform `1/H`).
    pub learn_eta: bool,
    /// MKL options.
    pub mkl: MklParams,
}

impl PipelineParams {
    /// The method's preset (papers' weights), seed-003 graph options, MKL on.
    pub fn preset(method: Method) -> Self {
        let solver = match method {
            Method::JointNmf => MvslParams::joint_nmf(),
            Method::Gnmf => MvslParams::gnmf(),
            Method::MvslS | Method::MvslL | Method::MvslT => MvslParams::mvsl(),
            Method::Mcl => MvslParams::mcl(),
        };
        let mut graph = GraphParams::default();
        if method == Method::Gnmf {
            graph.kp = 0;
        }
        PipelineParams {
            method,
            solver,
            graph,
            learn_eta: true,
            mkl: MklParams::default(),
        }
    }

    fn builds_graph(&self) -> bool {
        matches!(self.method, Method::Gnmf | Method::MvslL | Method::MvslT)
    }
}

/// MvSL-T ([`PipelineParams::preset`]`(`[`Method::MvslT`]`)`), the best method on the
/// real data of the README's table.
impl Default for PipelineParams {
    fn default() -> Self {
        Self::preset(Method::MvslT)
    }
}

fn capacity(n: usize, n_classes: usize, p: &PipelineParams) -> Result<GraphNnz, Error> {
    match p.method {
        Method::MvslT => graph::tge_capacity(n, n_classes, &p.graph),
        _ => graph::ldge_capacity(n, n_classes, &p.graph),
    }
}

fn req<T: Real>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    kernels: &(impl KernelSet + ?Sized),
    n_classes: usize,
    k: usize,
    p: &PipelineParams,
    gb: &GraphBuild,
) -> Result<WorkReq, Error> {
    p.solver.validate()?;
    p.graph.validate()?;
    p.mkl.validate()?;
    let n = shapes
        .clone()
        .into_iter()
        .next()
        .ok_or(Error::ZeroDimension)?
        .cols;
    let h = shapes.clone().into_iter().count();
    // The fit's own workspace, with the graph operator's scratch (CSR: 4K f64,
    // SGE: K·C + C, none: 0).
    let graph_op = WorkReq::all_of(&[WorkReq::new::<f64>(k); 4])
        .or(WorkReq::matrix::<f64>(k, n_classes).and(WorkReq::new::<usize>(n_classes)));
    let fit = WorkReq::new::<u8>(mvsl::fit_req::<T>(shapes.clone(), k, graph_op)?.bytes()?);
    if !p.builds_graph() {
        return Ok(fit);
    }
    // What the fit refuses, the query refuses too (issue 15: `ka = N` passed here).
    graph::check_sizes(&p.graph, n)?;
    let cap = capacity(n, n_classes, p)?;
    let rp = WorkReq::new::<usize>(n.checked_add(1).ok_or(Error::SizeOverflow)?);
    let graphs = WorkReq::all_of(&[
        rp,
        WorkReq::new::<usize>(cap.affinity),
        WorkReq::new::<f64>(cap.affinity),
        rp,
        WorkReq::new::<usize>(cap.penalty),
        WorkReq::new::<f64>(cap.penalty),
    ]);
    let mkl = if p.learn_eta {
        WorkReq::new::<u8>(similarity::mkl_weights_workspace::<T>(
            shapes.clone(),
            kernels,
            n_classes,
            &p.mkl,
        )?)
    } else {
        WorkReq::EMPTY
    };
    let build = WorkReq::new::<u8>(match p.method {
        Method::MvslT => graph::tge_build_workspace::<T>(shapes, kernels, n_classes, &p.graph, gb)?,
        _ => graph::ldge_build_workspace::<T>(shapes, kernels, n_classes, &p.graph, gb)?,
    });
    // The fusion weights are computed into the workspace and copied to the caller's `eta`
    // only once the set-up has run (a cancelled set-up leaves `eta` untouched).
    let eta = WorkReq::new::<f64>(h);
    Ok(graphs.and(eta).and(WorkReq::any_of(&[mkl, build, fit])))
}

/// Workspace bytes of [`fit`] (MKL, graph construction and the factorization
/// reuse the same memory; the graphs stay while the solver runs).
pub fn fit_workspace<T: Real>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    kernels: &(impl KernelSet + ?Sized),
    n_classes: usize,
    k: usize,
    params: &PipelineParams,
) -> Result<usize, Error> {
    req::<T>(shapes, kernels, n_classes, k, params, &GraphBuild::Exact)?.bytes()
}

/// Workspace bytes of [`fit_graph`] (of [`fit`] for [`GraphBuild::Exact`]).
pub fn fit_graph_workspace<T: Real>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    kernels: &(impl KernelSet + ?Sized),
    n_classes: usize,
    k: usize,
    params: &PipelineParams,
    build: &GraphBuild,
) -> Result<usize, Error> {
    req::<T>(shapes, kernels, n_classes, k, params, build)?.bytes()
}

/// Runs the pipeline: `η` (written, `H` values: learned or uniform), the
/// method's graph from `labels` (`UNLABELED` for unknown items), then
/// [`mvsl::fit`] into `u`, `v`. `kernels` (one per view) define the fused
/// kernel for the neighbour graphs. Everything is validated before anything is
/// written. Cost: MKL `O(N_l² Σ M_v)`, graphs `O(N² Σ M_v)` (blocked, GEMM-shaped
/// for linear/RBF kernels), then the solver's iterations.
///
/// ```
/// use mvnmf::data::UNLABELED;
/// use mvnmf::pipeline::{self, Method, PipelineParams};
/// use mvnmf::similarity::Kernel;
/// use mvnmf::{Dense, View};
///
/// // Two views of 12 items (4 and 3 features); 6 labeled of two classes.
/// let (n, k, classes) = (12, 2, 2);
/// let x1: Vec<f64> = (0..4 * n).map(|i| (i * 5 % 9 + 1) as f64).collect();
/// let x2: Vec<f64> = (0..3 * n).map(|i| (i * 2 % 7 + 1) as f64).collect();
/// let views = [View::from(Dense::new(&x1, 4, n, 4)?), View::from(Dense::new(&x2, 3, n, 3)?)];
/// let u = UNLABELED;
/// let labels = [0, 1, 0, 1, 0, 1, u, u, u, u, u, u];
/// let kernels = [Kernel::Linear, Kernel::Linear];
/// // MvSL-S: view weights by kernel-target alignment, the SGE graph, the solver.
/// let mut params = PipelineParams::preset(Method::MvslS);
/// params.solver.max_iter = 50;
///
/// let shapes = views.iter().map(|x| x.shape());
/// let bytes = pipeline::fit_workspace::<f64>(shapes, &kernels[..], classes, k, &params)?;
/// let mut work = vec![0u8; bytes];
/// let (mut u1, mut u2, mut v) = (vec![0.0; 4 * k], vec![0.0; 3 * k], vec![0.0; k * n]);
/// let mut eta = [0.0; 2]; // the views' weights, written
/// let us = &mut [&mut u1[..], &mut u2[..]][..];
/// let report = pipeline::fit(
///     &views[..], &kernels[..], &labels, classes, k, &params, us, &mut v, &mut eta, &mut work, None,
/// )?;
/// assert!(report.objective.total < report.initial.total);
/// assert!((eta.iter().sum::<f64>() - 1.0).abs() < 1e-12 && eta.iter().all(|&e| e >= 0.0));
/// # Ok::<(), mvnmf::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn fit<
    T: Real,
    VS: ViewSet<T> + Sync + ?Sized,
    KS: KernelSet + Sync + ?Sized,
    F: FactorsMut<T> + ?Sized,
>(
    views: &VS,
    kernels: &KS,
    labels: &[u32],
    n_classes: usize,
    k: usize,
    params: &PipelineParams,
    u: &mut F,
    v: &mut [T],
    eta: &mut [f64],
    work: &mut [u8],
    monitor: Option<Monitor<'_>>,
) -> Result<Report, Error> {
    let r = fit_report(
        views, kernels, labels, n_classes, k, params, u, v, eta, work, monitor,
    )?;
    Ok(r.fit)
}

/// What [`fit_report`] returns: the solver's report and the size of the graphs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PipelineReport {
    /// The factorization's report (what [`fit`] returns).
    pub fit: Report,
    /// Entries stored in the neighbour graphs built from the labels (CSR, both
    /// directions count; what [`graph::ldge`] / [`graph::tge`] return): zero for
    /// the methods without one (joint NMF, and MvSL-S and MCL, whose SGE is
    /// implicit).
    pub graph: GraphNnz,
}

/// [`fit`], reporting the graphs' sizes too ([`PipelineReport`]); the same
/// arguments, checks and outputs, bit for bit.
///
/// ```
/// use mvnmf::pipeline::{self, Method, PipelineParams};
/// use mvnmf::data::UNLABELED;
/// use mvnmf::similarity::Kernel;
/// use mvnmf::{Dense, View};
///
/// // Two views of 20 items (4 and 3 features); 12 labeled of two classes (MvSL-T's
/// // graph wants more than its 5 neighbours labeled in every class).
/// let (n, k, classes) = (20, 2, 2);
/// let x1: Vec<f64> = (0..4 * n).map(|i| (i * 5 % 9 + 1) as f64).collect();
/// let x2: Vec<f64> = (0..3 * n).map(|i| (i * 2 % 7 + 1) as f64).collect();
/// let views = [View::from(Dense::new(&x1, 4, n, 4)?), View::from(Dense::new(&x2, 3, n, 3)?)];
/// let labels: Vec<u32> = (0..n as u32).map(|j| if j < 12 { j % 2 } else { UNLABELED }).collect();
/// let kernels = [Kernel::Linear, Kernel::Linear];
/// let mut params = PipelineParams::preset(Method::MvslT);
/// params.solver.max_iter = 30;
/// let (mut u1, mut u2, mut v) = (vec![0.0; 4 * k], vec![0.0; 3 * k], vec![0.0; k * n]);
/// let mut eta = [0.0; 2];
/// let us = &mut [&mut u1[..], &mut u2[..]][..];
/// let shapes = views.iter().map(|x| x.shape());
/// let mut work = vec![0u8; pipeline::fit_workspace::<f64>(shapes, &kernels[..], classes, k, &params)?];
/// let r = pipeline::fit_report(
///     &views[..], &kernels[..], &labels, classes, k, &params, us, &mut v, &mut eta, &mut work, None,
/// )?;
/// assert!(r.fit.objective.total < r.fit.initial.total);
/// // MvSL-T's graph over all items was built and stored.
/// assert!(r.graph.affinity > 0);
/// # Ok::<(), mvnmf::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn fit_report<
    T: Real,
    VS: ViewSet<T> + Sync + ?Sized,
    KS: KernelSet + Sync + ?Sized,
    F: FactorsMut<T> + ?Sized,
>(
    views: &VS,
    kernels: &KS,
    labels: &[u32],
    n_classes: usize,
    k: usize,
    params: &PipelineParams,
    u: &mut F,
    v: &mut [T],
    eta: &mut [f64],
    work: &mut [u8],
    monitor: Option<Monitor<'_>>,
) -> Result<PipelineReport, Error> {
    let io = (labels, n_classes, k);
    let outs = (u, v, eta);
    fit_graph(
        views,
        kernels,
        io,
        params,
        &GraphBuild::Exact,
        outs,
        work,
        monitor,
    )
}

/// [`fit_report`] with the neighbour graph found as `build` says ([`GraphBuild`]): MvSL-T's
/// TGE through [`graph::tge_build`] (its lists over all items by NN-descent when `build`
/// resolves to it; the labeled lists by NN-descent too from
/// [`graph::LABELED_EXACT_BELOW`] labeled items), on the solver's pool. GNMF's and LDGE's graphs
/// are over the labeled items only (no `N²` part): [`graph::ldge_build`], exact below
/// [`graph::LABELED_EXACT_BELOW`] labeled items (always with [`GraphBuild::Exact`]), by
/// NN-descent over the labeled items from there on or with [`GraphBuild::ApproxAll`]. `build` is validated with everything else, before anything is written;
/// [`GraphBuild::Exact`] is bitwise [`fit_report`].
///
/// **Progress.** With a graph (GNMF, MvSL-L, MvSL-T) the monitor hears of the set-up before
/// the iterations: [`Phase::Setup`] (the fusion weights) at fraction 0 and 1, then
/// [`Phase::Graph`] (the neighbour graph) at 0, after each NN-descent tree and iteration
/// when the graph is approximate ([`graph::tge_build_progress`]) and at 1, each with `iter` 0 and a zero
/// objective ([`Progress::setup`]); then the solver's [`Phase::Iterations`] as
/// [`mvsl::fit`] reports them. The methods without a graph report only the iterations. A
/// monitor that stops the run in a set-up phase gets `Ok` with [`Stop::Cancelled`], no
/// iteration and zero objectives, and `u`, `v` and `eta` untouched (the fusion weights are
/// computed into the workspace and copied to `eta` when the set-up has run).
///
/// ```
/// use mvnmf::graph::GraphBuild;
/// use mvnmf::pipeline::{self, Method, PipelineParams};
/// use mvnmf::similarity::AnnParams;
/// use mvnmf::data::UNLABELED;
/// use mvnmf::similarity::Kernel;
/// use mvnmf::{Dense, View};
///
/// // Two views of 20 items (4 and 3 features); 12 labeled of two classes (MvSL-T's
/// // graph wants more than its 5 neighbours labeled in every class).
/// let (n, k, classes) = (20, 2, 2);
/// let x1: Vec<f64> = (0..4 * n).map(|i| (i * 5 % 9 + 1) as f64).collect();
/// let x2: Vec<f64> = (0..3 * n).map(|i| (i * 2 % 7 + 1) as f64).collect();
/// let views = [View::from(Dense::new(&x1, 4, n, 4)?), View::from(Dense::new(&x2, 3, n, 3)?)];
/// let labels: Vec<u32> = (0..n as u32).map(|j| if j < 12 { j % 2 } else { UNLABELED }).collect();
/// let kernels = [Kernel::Linear, Kernel::Linear];
/// let mut params = PipelineParams::preset(Method::MvslT);
/// params.solver.max_iter = 30;
/// let (mut u1, mut u2, mut v) = (vec![0.0; 4 * k], vec![0.0; 3 * k], vec![0.0; k * n]);
/// let mut eta = [0.0; 2];
/// let us = &mut [&mut u1[..], &mut u2[..]][..];
/// // The neighbour lists over all items by NN-descent instead of the exact sweep.
/// let build = GraphBuild::Approx(AnnParams::default());
/// let shapes = views.iter().map(|x| x.shape());
/// let bytes = pipeline::fit_graph_workspace::<f64>(shapes, &kernels[..], classes, k, &params, &build)?;
/// let mut work = vec![0u8; bytes];
/// let r = pipeline::fit_graph(
///     &views[..], &kernels[..], (&labels, classes, k), &params, &build,
///     (us, &mut v, &mut eta), &mut work, None,
/// )?;
/// assert!(r.fit.objective.total < r.fit.initial.total);
/// # Ok::<(), mvnmf::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn fit_graph<
    T: Real,
    VS: ViewSet<T> + Sync + ?Sized,
    KS: KernelSet + Sync + ?Sized,
    F: FactorsMut<T> + ?Sized,
>(
    views: &VS,
    kernels: &KS,
    (labels, n_classes, k): (&[u32], usize, usize),
    params: &PipelineParams,
    build: &GraphBuild,
    (u, v, eta): (&mut F, &mut [T], &mut [f64]),
    work: &mut [u8],
    monitor: Option<Monitor<'_>>,
) -> Result<PipelineReport, Error> {
    let h = views.count();
    let shapes = |i| views.shape(i);
    let need = req::<T>((0..h).map(shapes), kernels, n_classes, k, params, build)?;
    let n = views.shape(0).cols;
    if kernels.count() != h || eta.len() != h || labels.len() != n {
        return Err(Error::DimensionMismatch);
    }
    if params.method != Method::JointNmf {
        Sge::new(labels, n_classes)?; // labels in range, at least 2 labeled
    }
    // What the solver checks, checked before `eta` or the outputs are written
    // (the graph builders validate labels and neighbourhood sizes first too).
    let s = &params.solver;
    let np = s.nmf_params();
    // Once: the solver takes what this measured (`mvsl::fit_checked`) instead of a second
    // pass over the data; the passes over the values on the solver's pool.
    let checked = crate::steps::check::validate_par(
        views,
        k,
        &np,
        &*u,
        np.init == Init::Given,
        v,
        usize::MAX,
        || Ok(WorkReq::EMPTY),
        s.parallel,
    )?;
    let penalty = matches!(params.method, Method::MvslS | Method::Mcl)
        || (params.builds_graph() && params.graph.kp > 0);
    if penalty && s.beta > 0.0 && !s.vmax.is_finite() {
        return Err(Error::BadParameter);
    }
    need.check(work.len())?;
    let mut st = Stack::new(work).with_par(params.solver.parallel);
    match params.method {
        Method::JointNmf => {
            eta.fill(1.0 / h as f64);
            let rest = st.take_rest();
            let fit = mvsl::fit_checked(views, &NoGraph { n }, k, s, u, v, rest, monitor, checked)?;
            Ok(PipelineReport {
                fit,
                graph: GraphNnz::default(),
            })
        }
        Method::MvslS | Method::Mcl => {
            eta.fill(1.0 / h as f64);
            let sge = Sge::new(labels, n_classes)?;
            let rest = st.take_rest();
            let fit = mvsl::fit_checked(views, &sge, k, s, u, v, rest, monitor, checked)?;
            Ok(PipelineReport {
                fit,
                graph: GraphNnz::default(),
            })
        }
        Method::Gnmf | Method::MvslL | Method::MvslT => {
            let cap = capacity(n, n_classes, params)?;
            let arp: &mut [usize] = st.take(n + 1)?;
            let aci: &mut [usize] = st.take(cap.affinity)?;
            let aw: &mut [f64] = st.take(cap.affinity)?;
            let prp: &mut [usize] = st.take(n + 1)?;
            let pci: &mut [usize] = st.take(cap.penalty)?;
            let pw: &mut [f64] = st.take(cap.penalty)?;
            let eta_w: &mut [f64] = st.take(h)?;
            let rest = st.take_rest();
            // Refuse what the graph builder would refuse before `eta` is written.
            graph::precheck(labels, n, n_classes, &params.graph, rest)?;
            let mut monitor = monitor;
            if set_up(&mut monitor, Phase::Setup, 0.0) {
                return Ok(cancelled(GraphNnz::default()));
            }
            if params.learn_eta {
                let io = (labels, n_classes);
                let par = params.solver.parallel;
                similarity::mkl_weights_in(views, kernels, io, &params.mkl, eta_w, rest, par)?;
            } else {
                eta_w.fill(1.0 / h as f64);
            }
            if set_up(&mut monitor, Phase::Setup, 1.0) || set_up(&mut monitor, Phase::Graph, 0.0) {
                return Ok(cancelled(GraphNnz::default()));
            }
            let a_out = CsrOut {
                row_ptr: arp,
                col_idx: aci,
                weights: aw,
            };
            let p_out = CsrOut {
                row_ptr: prp,
                col_idx: pci,
                weights: pw,
            };
            let nnz = match params.method {
                Method::MvslT => {
                    let built = graph::tge_build_progress(
                        views,
                        kernels,
                        (eta_w, labels, n_classes),
                        (&params.graph, build),
                        (a_out, p_out),
                        rest,
                        params.solver.parallel,
                        &mut |f| set_up(&mut monitor, Phase::Graph, f),
                    );
                    match built {
                        Err(Error::Cancelled) => return Ok(cancelled(GraphNnz::default())),
                        b => b?,
                    }
                }
                _ => graph::ldge_build(
                    views,
                    kernels,
                    (eta_w, labels, n_classes),
                    &params.graph,
                    build,
                    a_out,
                    p_out,
                    rest,
                    params.solver.parallel,
                )?,
            };
            // The entries the builder wrote (at most the capacities).
            let (na, np) = (nnz.affinity, nnz.penalty);
            let ac = aci.part(..na)?;
            let par = params.solver.parallel;
            let a = CsrGraph::new_par(n, arp, ac, aw.part(..na)?, par)?;
            let p = if np > 0 {
                let pc = pci.part(..np)?;
                Some(CsrGraph::new_par(n, prp, pc, pw.part(..np)?, par)?)
            } else {
                None
            };
            let graphs = CsrGraphs::new(n, Some(a), p)?;
            if set_up(&mut monitor, Phase::Graph, 1.0) {
                return Ok(cancelled(nnz));
            }
            for (d, w) in eta.iter_mut().zip(eta_w.iter()) {
                *d = *w;
            }
            let fit = mvsl::fit_checked(views, &graphs, k, s, u, v, rest, monitor, checked)?;
            Ok(PipelineReport { fit, graph: nnz })
        }
    }
}

/// Tells the monitor (if any) that the set-up `phase` is at `fraction`; `true`: stop.
fn set_up(monitor: &mut Option<Monitor<'_>>, phase: Phase, fraction: f64) -> bool {
    match monitor {
        Some(m) => m(&Progress::setup(phase, fraction)).is_break(),
        None => false,
    }
}

/// The report of a run the monitor stopped in the set-up: no iteration, zero objectives,
/// [`Stop::Cancelled`]; `graph` is what was built (zero before the graph's end).
fn cancelled(graph: GraphNnz) -> PipelineReport {
    let zero = Objective::default();
    PipelineReport {
        fit: Report {
            iterations: 0,
            initial: zero,
            objective: zero,
            stop: Stop::Cancelled,
            dead_views: 0,
        },
        graph,
    }
}
