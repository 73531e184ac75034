//! The shallow solvers across ranks (issue 19): NMF, joint NMF and the
//! MvSL/MCL family (SGE, or explicit graphs such as LDGE/TGE/kNN), with the
//! items split over ranks and the sums over items combined by a caller-supplied
//! allreduce ([`Comm`]; MPI's `MPI_Allreduce` in `examples-c/mpi_fit.c`), the
//! neighbours' columns of `V` for explicit graphs by a caller-supplied exchange
//! (`MPI_Alltoallv`). The crate itself has no MPI, no threads and no
//! allocation here either.
//!
//! **One solver.** The iteration is not written here: it is the single
//! process's shallow solver (`crate::solvers::shallow`, the one behind
//! [`crate::models::mvsl::fit`] and [`crate::models::nmf::joint_fit`]) run over
//! this rank's shard, a `Collective` whose sums over items are reduced through
//! the caller's [`Comm`]: [`open`] agrees and sets up the rank's [`Shard`],
//! whose [`Shard::fit`] is that solver. This module holds what only a split run has: the
//! set-up (the agreement, the reduction of the shards' measures), the halo
//! plan of explicit graphs, the agreement protocol and the traffic.
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
//! sums of `V` (a `K × C` allreduce) and for explicit graphs from the rank's
//! rows of the graph and the columns of `V` they reference (the rank's own,
//! and the halo: those held by other ranks, exchanged before each V-step).
//! The objective's parts are sums over items
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
//! + 2                    the traces (explicit graphs only)
//! + 1                    the stop vote, only when a monitor is given
//! + 2 per allreduce call   the status words ("No rank is left waiting")
//! ```
//!
//! in two allreduce calls (plus `v_inner − 1` and the vote), independent of the
//! number of items and of ranks: [`words_per_iteration`] computes it and
//! [`Traffic`] counts what was passed to the callback; once per run, the
//! closing agreement adds one call of `Σ_v M_v·K + 2` words (counted with the
//! iterations). Explicit graphs add the
//! halo, point to point: `v_inner · K · halo_sent` words sent per iteration
//! ([`halo_words_per_iteration`]), `halo_sent` the rank's items that other
//! ranks' rows reference (at most its edges to other ranks; for a kNN graph of
//! a well-ordered partition, the items near the shard's boundary). Set-up: a
//! broadcast of rank 0's configuration (25 words) and an agreement vote, then
//! one reduction of `3·ranks + 2H + C` words (item counts, largest
//! entries and column indices, view sums, squares, class counts) and its vote,
//! one more word when the data are scaled, for explicit graphs a `ranks² +
//! ranks` reduction (who reads how many items from whom), its vote and one
//! exchange of the requested item indices, then the start's statistics; every
//! allreduce with its 2 status words (a vote is nothing else).
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
//! word) and stops every rank after the same iteration.
//!
//! **No rank is left waiting** (issue 31, E7). The callbacks are checked and
//! every rank leaves after the same call, whatever one rank's callback does
//! (fails after the data moved, reports success without writing its result,
//! delivers what no peer sent), as long as it takes part in the call:
//!
//! 1. *Every allreduce carries 2 status words*: each rank's one (their sum
//!    must come back as the number of ranks: an allreduce that did not write
//!    its result, or wrote another, is caught) and its failure flag.
//! 2. *A received buffer is checked*: an exchange's or an all-gather's receive
//!    buffer is filled with a NaN before the call, and every word a run sends
//!    is finite, so a word that is not afterwards was not delivered; indices
//!    and counts received must be whole numbers in their range.
//! 3. *A rank that finds a failure does not leave*: it keeps the error, turns
//!    what it received into zeros, and makes the same calls with the same
//!    lengths as the others until the next allreduce, where its flag tells
//!    them. After an allreduce whose flags sum to more than zero every rank
//!    leaves: the failing rank with its error ([`Error::CommFailed`] for a
//!    callback), the others with [`Error::PeerFailed`].
//! 4. *Every decision taken from received data that changes the calls that
//!    follow* (the item counts, the halo plan's counts and the symmetry
//!    check) *is agreed by an allreduce before it is acted on*.
//! 5. *A closing agreement*: a rank that reaches the end of the run (or an
//!    error of its own) makes one more allreduce with its outcome, of the
//!    length of an iteration's first call (`Σ_v M_v·K + 2`): a rank that could
//!    not tell whether the others stopped (its vote or objective was not
//!    delivered) makes a call of that length either way, so it meets them.
//!    The run returns `Ok` on every rank or on none — except when the closing
//!    call itself fails on one rank: nothing follows it, so that rank returns
//!    [`Error::CommFailed`] and the others their result.
//!
//! A rank's failure after the start leaves the outputs with a partial
//! iterate (on every rank). What no protocol can catch: a callback that does
//! not take part in the call at all (MPI's own matter), two ranks failing at
//! once, data that are wrong but well-formed, or a rank whose vote (a
//! cancellation) is lost at the same call as another rank's cancellation.
//! `tests/dist_protocol.rs` has one rank lie at every call of a run, in each
//! of these ways, and checks that every rank returns with statuses that agree.
//!
//! **Precision.** The views, bases and `V` are `f64` or `f32` (the C ABI's
//! `_f32` twins); the callback sums `f64` words either way. In `f32` the
//! shard's `R = X Vᵀ` and `G = V Vᵀ` are formed in `f32` (as the single
//! process's `f32` fit forms them), widened, summed over the ranks in `f64`
//! and rounded back to `f32` (`R` before the U-step, `G` when it is read); the
//! class sums and squares, `⟨Q, V⟩`, `Σ V`, the traces and the halo of `V`
//! travel and are kept in `f64`, as the single process keeps its objective's
//! parts. The words on the wire are the same in both precisions; the `f32`
//! workspace holds the reduced statistics twice (in `f32` and as the `f64`
//! words). On one rank the `f32` iterates are the single process's bit for bit
//! (`tests/dist.rs`); on more, the order of the sums differs and they agree to
//! `f32` rounding. Rank 0's configuration carries the precision, so ranks that
//! mix them are refused.
//!
//! **Scope.** Graphs: none,
//! SGE, or the rank's rows of explicit graphs, whose symmetry across ranks is
//! not checked (only that no rank is asked for more items than its own edges
//! to other ranks allow, [`Error::BadParameter`] on every rank). The TGE/kNN
//! graph itself is built across the ranks by [`tge()`](fn@tge) (each rank's
//! items against all, blockwise: the rows [`DistGraph::Csr`] takes, the same
//! as the single-process builder's). The monitor must be given on every rank
//! or on none.

pub use crate::graph::dist::{
    refuse as refuse_tge, tge, tge_approx, tge_approx_workspace, tge_capacity, tge_workspace,
    traffic_model as tge_traffic_model, DistGraphReport, GraphTraffic,
};

pub use crate::comm::protocol::STATUS;
use crate::comm::protocol::{agree, refuse_as, whole, Counted, MAX_CONFIG};
use crate::data::{FactorsMut, Prepared, ViewSet, ViewShape};
use crate::error::{Error, Part};
use crate::linalg::gemm_req;
use crate::linalg::real::Real;
use crate::linalg::select::sort_by;
use crate::linalg::{at, set_at};
use crate::solvers::comm::{AtV, Collective, VStats};
use crate::solvers::shallow::{self, mvsl_of, DataScale, Steps};
use crate::steps::check::{check_shapes, validate};
use crate::steps::init::random_start_shard;
use crate::steps::mu::{gram, products_req};
use crate::steps::prox::Sparsity;
use crate::steps::scale::Scale;
pub use crate::steps::shard::ShardRows;
use crate::steps::shard::{csr_products, v_stats, x_vt_all, Layout, SgeShard};
pub use crate::steps::shard::{Comm, SingleRank};
use crate::steps::StopRule;
use crate::steps::{Init, Monitor, MvslParams, NmfParams, Report};
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
    /// Explicit graphs ([`crate::graph::CsrGraphs`]: LDGE, TGE, kNN, the
    /// caller's own): this rank's rows of the symmetric `N × N` affinity and
    /// penalty graphs, with global column indices. Their V-step reads the
    /// neighbours' columns of `V` held by other ranks (the halo) through
    /// [`Comm::exchange`], `K` words per item sent, each V-step.
    Csr {
        /// `Wᵃ`'s rows (`None`: no affinity graph).
        affinity: Option<ShardRows<'a>>,
        /// `Wᵖ`'s rows (`None`: no penalty graph).
        penalty: Option<ShardRows<'a>>,
    },
}

impl DistGraph<'_> {
    fn classes(&self) -> usize {
        match self {
            DistGraph::Sge { n_classes, .. } => *n_classes,
            _ => 0,
        }
    }

    /// Stored edges of this rank's rows (0 without explicit graphs).
    fn edges(&self) -> usize {
        match self {
            DistGraph::Csr { affinity, penalty } => {
                affinity.map_or(0, |g| g.nnz()) + penalty.map_or(0, |g| g.nnz())
            }
            _ => 0,
        }
    }

    fn is_csr(&self) -> bool {
        matches!(self, DistGraph::Csr { .. })
    }
}

/// What one rank passed to its allreduce: calls and 8-byte words, for the
/// set-up (up to and including the start's objective) and for the
/// iterations (everything after it, the monitor's stop votes included; the
/// model: `docs/mpi.md`).
// `repr(C)`: the C ABI's `mvnmf_dist_traffic` (renamed in cbindgen.toml), these docs
// included: a change here changes the C ABI.
#[repr(C)]
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
    /// Exchange calls of the set-up (explicit graphs only).
    pub setup_exchange_calls: u64,
    /// Words this rank sent through the exchange in the set-up.
    pub setup_exchange_words: u64,
    /// Exchange calls of the iterations.
    pub iter_exchange_calls: u64,
    /// Words this rank sent through the exchange in the iterations.
    pub iter_exchange_words: u64,
    /// Items of this rank whose columns of `V` other ranks read (the halo this
    /// rank sends: `k` words each, every V-step).
    pub halo_sent: u64,
    /// Items of other ranks this rank reads (the halo it receives).
    pub halo_received: u64,
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
///
/// With explicit graphs (`classes = 0`, `explicit_graph`) two more words carry
/// the traces, and the halo goes through [`Comm::exchange`]:
/// [`halo_words_per_iteration`]. Every allreduce call carries [`STATUS`]
/// words more (module docs: two calls, `v_inner − 1` more with SGE classes,
/// one more with a monitor).
pub fn words_per_iteration(
    sum_rows: usize,
    k: usize,
    classes: usize,
    v_inner: u32,
    monitor: bool,
    explicit_graph: bool,
) -> u64 {
    let (m, k, c) = (sum_rows as u64, k as u64, classes as u64);
    m * k
        + k * k
        + k * c
        + c
        + 2
        + 2 * explicit_graph as u64
        + (v_inner.max(1) as u64 - 1) * k * c
        + monitor as u64
        + STATUS as u64 * calls_per_iteration(classes, v_inner, monitor)
}

/// Allreduce calls per outer iteration: `R`, the V statistics, the class sums
/// between inner V-steps (SGE), the vote (monitor).
fn calls_per_iteration(classes: usize, v_inner: u32, monitor: bool) -> u64 {
    2 + (classes > 0) as u64 * (v_inner.max(1) as u64 - 1) + monitor as u64
}

/// Words a rank sends through [`Comm::exchange`] per outer iteration with
/// explicit graphs: `v_inner · K · halo_sent` ([`Traffic::halo_sent`]: at most
/// the rank's edges to other ranks' items).
pub fn halo_words_per_iteration(k: usize, v_inner: u32, halo_sent: u64) -> u64 {
    v_inner.max(1) as u64 * k as u64 * halo_sent
}

/// Words of the configuration rank 0 broadcasts.
const CONFIG: usize = 25;
const _: () = assert!(CONFIG <= MAX_CONFIG);

/// Shapes and options every rank must share (compared bitwise with rank 0's).
fn config<T: Real, VS: ViewSet<T> + ?Sized>(
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
        DistGraph::Csr { affinity, penalty } => {
            2.0 + affinity.is_some() as u8 as f64 + 2.0 * penalty.is_some() as u8 as f64
        }
    } + if is_f64::<T>() { 0.0 } else { 8.0 };
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

/// Takes part in a distributed fit's agreement with an error found before the
/// fit could be called (a C argument that cannot be read): every other rank
/// then returns [`Error::PeerFailed`] and this one `e` (or
/// [`Error::CommFailed`] when the callback fails, [`Error::BadParameter`] for
/// an invalid rank number).
pub fn refuse<C: Comm + ?Sized>(comm: &mut C, e: Error) -> Error {
    refuse_as::<C, CONFIG>(comm, e)
}

/// Workspace of a distributed fit on a rank whose shard has these shapes, for a graph
/// with `classes` SGE classes (`.0` reduced each iteration: 0 when β = 0; `.1`
/// counted at the set-up) or `edges` stored edges of explicit graphs (`None`:
/// no explicit graph).
fn fit_req<T: Real>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    k: usize,
    (classes, setup_classes): (usize, usize),
    edges: Option<usize>,
    ranks: usize,
) -> Result<WorkReq, Error> {
    let (n, mmax) = check_shapes(shapes.clone(), k)?;
    let (mut h, mut sum_rows) = (0usize, 0usize);
    for s in shapes.clone() {
        h += 1;
        sum_rows = sum_rows.checked_add(s.rows).ok_or(Error::SizeOverflow)?;
    }
    let layout = Layout::new(sum_rows, k, classes, edges.is_some()).ok_or(Error::SizeOverflow)?;
    if ranks == 0 {
        return Err(Error::BadParameter);
    }
    let setup = ranks
        .checked_mul(3)
        .and_then(|a| a.checked_add(h.checked_mul(2)?))
        .and_then(|a| a.checked_add(setup_classes))
        .and_then(|a| a.checked_add(STATUS))
        .ok_or(Error::SizeOverflow)?;
    let red = layout
        .len()
        .checked_add(2 * STATUS)
        .ok_or(Error::SizeOverflow)?;
    let kk = WorkReq::matrix::<T>(k, k);
    let kn = WorkReq::matrix::<T>(k, n);
    let mk = WorkReq::matrix::<T>(mmax, k);
    let scratch = products_req::<T>(shapes.clone(), k, n).or(gemm_req::<T>(k, k, mmax));
    // The words the callback sums: `red` itself for `f64`, a copy otherwise.
    let wire = if is_f64::<T>() { 0 } else { red };
    let halo = match edges {
        None => WorkReq::EMPTY,
        Some(e) => {
            let square = ranks
                .checked_mul(ranks)
                .and_then(|a| a.checked_add(ranks)?.checked_add(STATUS))
                .ok_or(Error::SizeOverflow)?;
            WorkReq::all_of(&[
                // remote indices, per-edge positions, served items
                WorkReq::new::<usize>(e),
                WorkReq::new::<usize>(e),
                WorkReq::new::<usize>(e),
                // halo of V, send buffer (the index lists at the set-up)
                WorkReq::matrix::<f64>(k.max(1), e),
                WorkReq::matrix::<f64>(k.max(1), e),
                // counts per rank (items, words; both directions)
                WorkReq::new::<usize>(ranks),
                WorkReq::new::<usize>(ranks),
                WorkReq::new::<usize>(ranks),
                WorkReq::new::<usize>(ranks),
                WorkReq::new::<f64>(4 * k),
                WorkReq::new::<f64>(square),
            ])
        }
    };
    Ok(WorkReq::all_of(&[
        WorkReq::new::<T>(red),
        WorkReq::new::<f64>(wire),
        WorkReq::new::<f64>(classes),
        // `k · classes` fits (the layout holds it).
        WorkReq::new::<f64>(k * classes + STATUS),
        // the views' sums (the start's means)
        WorkReq::new::<f64>(h),
        kk,
        kk,
        kk,
        kn,
        kn,
        kn,
        kn,
        mk,
        mk,
        WorkReq::new::<T>(mmax),
        WorkReq::new::<T>(h),
        halo,
        crate::data::prepared_req::<T>(shapes),
        WorkReq::any_of(&[WorkReq::new::<f64>(setup), scratch]),
    ]))
}

/// What a graph adds to the workspace: SGE classes (reduced each iteration
/// when `β > 0`; counted at the set-up), explicit edges.
fn graph_req_parts(graph: &DistGraph<'_>, params: &MvslParams) -> ((usize, usize), Option<usize>) {
    let c = if params.beta > 0.0 {
        graph.classes()
    } else {
        0
    };
    let e = graph.is_csr().then(|| graph.edges());
    ((c, graph.classes()), e)
}

/// Workspace bytes of a distributed fit ([`open`]) in double precision on a
/// rank whose shard has these shapes (`N_r` items) and this graph (its rows of
/// an explicit graph, or SGE's labels), for `ranks` ranks
/// ([`fit_workspace_for`] with `T = f64`).
pub fn fit_workspace(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    graph: &DistGraph<'_>,
    k: usize,
    ranks: usize,
    params: &MvslParams,
) -> Result<usize, Error> {
    fit_workspace_for::<f64>(shapes, graph, k, ranks, params)
}

/// [`fit_workspace`] for views, bases and `V` in the scalar `T` (for `f32`
/// the reduced statistics are also kept as the `f64` words the callback sums:
/// `Σ_v M_v·K + K² + K·C + C + 6` words more, 8 with explicit graphs).
pub fn fit_workspace_for<T: Real>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    graph: &DistGraph<'_>,
    k: usize,
    ranks: usize,
    params: &MvslParams,
) -> Result<usize, Error> {
    params.validate()?;
    let (c, e) = graph_req_parts(graph, params);
    fit_req::<T>(shapes, k, c, e, ranks)?.bytes()
}

/// Workspace bytes of a distributed joint NMF ([`Problem::JointNmf`]) in
/// double precision.
pub fn joint_nmf_fit_workspace(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    k: usize,
    ranks: usize,
    params: &NmfParams,
) -> Result<usize, Error> {
    joint_nmf_fit_workspace_for::<f64>(shapes, k, ranks, params)
}

/// [`joint_nmf_fit_workspace`] in the scalar `T`.
pub fn joint_nmf_fit_workspace_for<T: Real>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    k: usize,
    ranks: usize,
    params: &NmfParams,
) -> Result<usize, Error> {
    fit_workspace_for::<T>(shapes, &DistGraph::None, k, ranks, &mvsl_of(params))
}

/// `T` is `f64`: the reduced statistics are the callback's words themselves.
fn is_f64<T: Real>() -> bool {
    T::as_f64s(&[]).is_some()
}

/// Local checks of one rank: `(N_r, max M_v)`.
#[allow(clippy::too_many_arguments)]
fn check_local<T: Real, VS: ViewSet<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
    views: &VS,
    graph: &DistGraph<'_>,
    k: usize,
    params: &MvslParams,
    u: &F,
    v: &[T],
    work_len: usize,
    ranks: usize,
) -> Result<(usize, usize), Error> {
    params.validate()?;
    let np = params.nmf_params();
    let hv = views.count();
    let shapes = |i| views.shape(i);
    let (n, _) = check_shapes((0..hv).map(shapes), k)?;
    check_graph(graph, n, params)?;
    let (c, e) = graph_req_parts(graph, params);
    let (n, mmax, _) = validate(
        views,
        k,
        &np,
        u,
        params.init == Init::Given,
        v,
        work_len,
        || fit_req::<T>((0..hv).map(shapes), k, c, e, ranks),
    )?;
    Ok((n, mmax))
}

/// The checks of the graph itself on a shard of `n` items ([`check_local`]
/// runs them after the options and the shapes, before the values): the
/// labels' count and range, the rows' structure and weights, and a bound on
/// `V` where the graph has a penalty ([`Error::BadParameter`]).
fn check_graph(graph: &DistGraph<'_>, n: usize, params: &MvslParams) -> Result<(), Error> {
    match *graph {
        DistGraph::Sge { labels, n_classes } => {
            if labels.len() != n {
                return Err(Error::DimensionMismatch);
            }
            SgeShard { labels, n_classes }.check()?;
            if params.beta > 0.0 && !params.vmax.is_finite() {
                // SGE has a penalty graph: unbounded below without a bound on V.
                return Err(Error::BadParameter);
            }
        }
        DistGraph::Csr { affinity, penalty } => {
            for g in [affinity, penalty].iter().flatten() {
                g.check(n)?;
            }
            if params.beta > 0.0 && !params.vmax.is_finite() && penalty.is_some_and(|g| g.nnz() > 0)
            {
                return Err(Error::BadParameter);
            }
        }
        DistGraph::None => {}
    }
    Ok(())
}

/// Where [`open`] refused, for the C ABI's report (issue 33): the refusal of
/// the graph's own checks on this rank's inputs (`Some(e)`: [`open`] refuses
/// with this `e` too, the options and shapes having passed; for
/// [`Error::BadParameter`], the unbounded `V` of a penalty graph), `None` when
/// the options or shapes are refused first or the graph passes. Run only on
/// the error path; it changes nothing.
pub(crate) fn graph_refusal<T: Real, VS: ViewSet<T> + ?Sized>(
    views: &VS,
    graph: &DistGraph<'_>,
    k: usize,
    problem: Problem<'_>,
) -> Option<Error> {
    let (params, _) = problem.parts();
    params.validate().ok()?;
    let (n, _) = check_shapes((0..views.count()).map(|i| views.shape(i)), k).ok()?;
    check_graph(graph, n, &params).err()
}

/// The halo plan of explicit graphs on one rank (workspace slices).
struct Halo<'w> {
    /// Per edge (affinity's, then penalty's), the column of `[V_r | halo]`.
    pos: &'w mut [usize],
    /// This rank's items other ranks read, grouped by rank.
    serve: &'w mut [usize],
    /// Items received per rank, items sent per rank, and both times `K`.
    recv: &'w mut [usize],
    send: &'w mut [usize],
    krecv: &'w mut [usize],
    ksend: &'w mut [usize],
    /// `K × H` columns of `V` from other ranks; `K × (items sent)` to them.
    halo: &'w mut [f64],
    sendbuf: &'w mut [f64],
    row: &'w mut [f64],
    n_recv: usize,
    n_send: usize,
}

impl Halo<'_> {
    /// The halo of `v` from the other ranks, then the graph products of this
    /// rank's rows; returns its shares of the traces.
    #[allow(clippy::too_many_arguments)]
    fn products<T: Real, C: Comm + ?Sized>(
        &mut self,
        cm: &mut Counted<'_, C>,
        graph: &DistGraph<'_>,
        v: &[T],
        k: usize,
        plus: &mut [T],
        minus: &mut [T],
    ) -> Result<(f64, f64), Error> {
        let sb = self.sendbuf.part_mut(..k * self.n_send)?;
        let serve = self.serve.part(..self.n_send)?;
        for (sbt, &i) in sb.chunks_exact_mut(k.max(1)).zip(serve) {
            let vi = v.part(i * k..(i + 1) * k)?;
            if sbt.len() != vi.len() {
                return Err(Error::Internal);
            }
            for (o, x) in sbt.iter_mut().zip(vi) {
                *o = x.to_f64();
            }
        }
        let hb = self.halo.part_mut(..k * self.n_recv)?;
        cm.exchange(sb, &*self.ksend, hb, &*self.krecv)?;
        let DistGraph::Csr { affinity, penalty } = graph else {
            return Err(Error::Internal);
        };
        let na = affinity.map_or(0, |g| g.nnz());
        let (pa, pp) = self.pos.split_at_checked(na).ok_or(Error::Internal)?;
        Ok(csr_products(
            affinity.as_ref().map(|g| (g, pa)),
            penalty.as_ref().map(|g| (g, pp)),
            v,
            hb,
            k,
            plus,
            minus,
            self.row,
        ))
    }
}

/// What a distributed fit solves: joint NMF (NMF for one view,
/// [`crate::models::nmf::joint_fit`]: its Lee–Seung steps, no graph) or the
/// MvSL/MCL family ([`crate::models::mvsl::fit`]: MvSL-S/L/T, MCL, GNMF).
#[derive(Clone, Copy, Debug)]
pub enum Problem<'p> {
    /// Joint NMF with these options (the graph must be [`DistGraph::None`]).
    JointNmf(&'p NmfParams),
    /// The MvSL family with these options.
    Mvsl(&'p MvslParams),
}

impl Problem<'_> {
    fn parts(self) -> (MvslParams, Steps) {
        match self {
            Problem::JointNmf(p) => (mvsl_of(p), Steps::LeeSeung),
            Problem::Mvsl(p) => (*p, Steps::Mvsl),
        }
    }
}

/// A rank's shard of the items, agreed with the other ranks and set up
/// ([`open`]): the one shallow solver (`crate::solvers::shallow`, the single
/// process's) runs on it with [`Shard::fit`].
pub struct Shard<'c, 'w, 'g, C: ?Sized, T = f64> {
    coll: Shards<'c, 'w, 'g, C, T>,
    st: Stack<'w>,
    params: MvslParams,
    steps: Steps,
    nm: (usize, usize),
    scale: Scale,
}

/// Opens this rank's shard of a distributed fit (module docs): checks the
/// inputs, agrees with the other ranks (rank 0's shapes and options, and
/// every rank's verdict) and runs the set-up (the reduction of the shards'
/// measures, the halo plan of explicit graphs). Nothing is written to `u` or
/// `v` here; on an error every rank returns (module docs).
///
/// * `comm`: this rank's communicator; every rank calls `open` with the same
///   shapes (except the item count `N_r`) and options.
/// * `views`: `H ≥ 1` views of this rank's `N_r ≥ 1` items.
/// * `graph`: [`DistGraph::None`], SGE over this rank's items, or this rank's
///   rows of explicit graphs (then `comm` must implement [`Comm::exchange`]).
/// * `u`: `H` buffers `M_v × K` (all the bases; read with [`Init::Given`]);
///   `v`: `K × N_r`, this rank's columns of `V` (checked here, written by
///   [`Shard::fit`]).
/// * `work`: at least [`fit_workspace`] bytes; `monitor`: whether
///   [`Shard::fit`] gets one (on every rank or on none).
///
/// ```
/// use mvnmf::data::UNLABELED;
/// use mvnmf::models::dist::{self, DistGraph, Problem, SingleRank};
/// use mvnmf::steps::MvslParams;
/// use mvnmf::{Dense, View};
///
/// // MvSL-S (SGE graph of the labels) on one rank holding 8 items of two views.
/// let (n, k) = (8, 2);
/// let x1: Vec<f64> = (0..4 * n).map(|i| (i * 5 % 9 + 1) as f64).collect();
/// let x2: Vec<f64> = (0..3 * n).map(|i| (i * 2 % 7 + 1) as f64).collect();
/// let views = [View::from(Dense::new(&x1, 4, n, 4)?), View::from(Dense::new(&x2, 3, n, 3)?)];
/// let labels = [0, 0, 1, 1, UNLABELED, UNLABELED, UNLABELED, UNLABELED];
/// let graph = DistGraph::Sge { labels: &labels, n_classes: 2 };
/// let params = MvslParams { max_iter: 30, ..MvslParams::mvsl() };
/// let shapes = views.iter().map(|x| x.shape());
/// let mut work = vec![0u8; dist::fit_workspace(shapes, &graph, k, 1, &params)?];
/// let (mut u1, mut u2, mut v) = (vec![0.0; 4 * k], vec![0.0; 3 * k], vec![0.0; k * n]);
/// let us = &mut [&mut u1[..], &mut u2[..]][..];
/// let mut comm = SingleRank;
/// let problem = Problem::Mvsl(&params);
/// let shard = dist::open(&mut comm, &views[..], graph, k, problem, (&*us, &v[..]), &mut work, false)?;
/// let r = shard.fit(&views[..], us, &mut v, None)?;
/// assert!(r.report.objective.total < r.report.initial.total);
/// # Ok::<(), mvnmf::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn open<
    'c,
    'w,
    'g,
    T: Real,
    C: Comm + ?Sized,
    VS: ViewSet<T> + ?Sized,
    F: FactorsMut<T> + ?Sized,
>(
    comm: &'c mut C,
    views: &VS,
    graph: DistGraph<'g>,
    k: usize,
    problem: Problem<'_>,
    (u, v): (&F, &[T]),
    work: &'w mut [u8],
    monitor: bool,
) -> Result<Shard<'c, 'w, 'g, C, T>, Error> {
    let (params, steps) = problem.parts();
    let (rank, ranks) = (comm.rank(), comm.ranks());
    if ranks == 0 || rank >= ranks {
        return Err(Error::BadParameter);
    }
    let mut cm = Counted::new(comm);
    let local =
        check_local(views, &graph, k, &params, u, v, work.len(), ranks).and_then(|x| {
            match (steps, graph) {
                (Steps::LeeSeung, DistGraph::None) | (Steps::Mvsl, _) => Ok(x),
                _ => Err(Error::BadParameter),
            }
        });
    let cfg = config::<T, VS>(views, &graph, k, &params, monitor, ranks);
    agree(&mut cm, &cfg, local.map(|_| ()))?;
    let nm = local?;

    let hv = views.count();
    let use_graph = params.beta > 0.0;
    let sum_rows: usize = (0..hv).map(|i| views.shape(i).rows).sum();
    let layout = Layout::new(
        sum_rows,
        k,
        if use_graph { graph.classes() } else { 0 },
        graph.is_csr(),
    )
    .ok_or(Error::SizeOverflow)?;

    let mut st = Stack::new(work);
    // The reduced statistics: `[R | status | V part | status]` (the R block
    // is also the closing agreement's buffer: module docs).
    let len = layout.len() + 2 * STATUS;
    let t: &mut [T] = st.take(len)?;
    let w: &mut [f64] = st.take(if is_f64::<T>() { 0 } else { len })?;
    let mut coll = Shards {
        cm,
        graph,
        layout,
        red: Red { t, w },
        counts: &mut [],
        sbuf: &mut [],
        sums: &mut [],
        sge_on: None,
        halo_on: None,
        k,
        n_r: nm.0,
        n: 0,
        offset: 0,
        half: 0.0,
        setup: (0, 0, 0, 0),
    };
    let scale = match coll.setup(views, &params, &mut st) {
        Ok(s) => s,
        Err(e) => return coll.finish(Err(e)),
    };
    Ok(Shard {
        coll,
        st,
        params,
        steps,
        nm,
        scale,
    })
}

impl<T: Real, C: Comm + ?Sized> Shard<'_, '_, '_, C, T> {
    /// Runs the single process's shallow solver on this shard (module docs):
    /// `views`, `u`, `v` the ones [`open`] checked, `monitor` given on every
    /// rank or on none (as told to [`open`]). Every rank gets the same report;
    /// the traffic counts this rank's calls.
    pub fn fit<VS: ViewSet<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
        mut self,
        views: &VS,
        u: &mut F,
        v: &mut [T],
        monitor: Option<Monitor<'_>>,
    ) -> Result<DistReport, Error> {
        let k = self.coll.k;
        let sh = &mut self.coll;
        let report = shallow::fit(
            sh,
            views,
            k,
            &self.params,
            self.steps,
            self.nm,
            DataScale::Measured(self.scale),
            u,
            v,
            self.st,
            monitor,
        )?;
        let (halo_sent, halo_received) = sh
            .halo_on
            .as_ref()
            .map_or((0, 0), |h| (h.n_send as u64, h.n_recv as u64));
        let (setup, cm) = (sh.setup, &sh.cm);
        let traffic = Traffic {
            setup_calls: setup.0,
            setup_words: setup.1,
            iter_calls: cm.calls - setup.0,
            iter_words: cm.words - setup.1,
            setup_exchange_calls: setup.2,
            setup_exchange_words: setup.3,
            iter_exchange_calls: cm.ex_calls - setup.2,
            iter_exchange_words: cm.ex_words - setup.3,
            halo_sent,
            halo_received,
        };
        Ok(DistReport { report, traffic })
    }
}

/// This rank's shard of the items under the agreement protocol: the
/// [`Collective`] of a distributed fit (module docs). The sums over items are
/// formed on the shard and reduced in `red`; the SGE products come from the
/// reduced class sums, the explicit graphs' from the rank's rows and the halo.
struct Shards<'c, 'w, 'g, C: ?Sized, T> {
    cm: Counted<'c, C>,
    graph: DistGraph<'g>,
    layout: Layout,
    /// `[R | status | V part | status]`.
    red: Red<'w, T>,
    /// Labeled items per class over all ranks (SGE).
    counts: &'w mut [f64],
    /// The class sums between inner V-steps, with their status words.
    sbuf: &'w mut [f64],
    /// The views' sums over all items (the random start's means).
    sums: &'w mut [f64],
    /// The SGE shard (with `β > 0`).
    sge_on: Option<SgeShard<'g>>,
    /// The halo plan (explicit graphs with `β > 0`).
    halo_on: Option<Halo<'w>>,
    k: usize,
    /// Items of this rank, of all ranks, and the first of this rank.
    n_r: usize,
    n: usize,
    offset: usize,
    /// `½ Σ_v ‖X^(v)‖²_F` over all items.
    half: f64,
    /// The set-up's traffic `(calls, words, exchange calls, exchange words)`.
    setup: (u64, u64, u64, u64),
}

/// The reduced statistics `[R | status | V part | status]` ([`Layout`]) in
/// the solver's scalar (`t`) and as the `f64` words the callback sums (`w`).
/// For `f64` they are one buffer (`w` is empty) and nothing is copied; for
/// `f32` the shard's `R` and `G` (formed in `f32`, as the single process
/// forms them) are widened into `w`, the sums over ranks are formed in `f64`
/// (the communicator's words), and the reduced `R` is rounded back into `t`
/// for the U-step; `G` is rounded when it is read, and the class sums,
/// squares, `⟨Q, V⟩`, `Σ V` and the traces are formed and kept in `f64` (as
/// the single process keeps them).
struct Red<'w, T> {
    t: &'w mut [T],
    w: &'w mut [f64],
}

impl<T: Real> Red<'_, T> {
    /// The words `r` the callback sums, the values `widen` of `t` (within
    /// `r`) widened into them first (nothing to do for `f64`).
    fn words(
        &mut self,
        r: core::ops::Range<usize>,
        widen: core::ops::Range<usize>,
    ) -> Result<&mut [f64], Error> {
        if is_f64::<T>() {
            return T::as_f64s_mut(&mut *self.t)
                .ok_or(Error::Internal)?
                .part_mut(r);
        }
        let (src, dst) = (self.t.part(widen.clone())?, self.w.part_mut(widen)?);
        for (o, x) in dst.iter_mut().zip(src) {
            *o = x.to_f64();
        }
        self.w.part_mut(r)
    }

    /// `t[r] ← w[r]` rounded to `T` (nothing to do for `f64`).
    fn narrow(&mut self, r: core::ops::Range<usize>) -> Result<(), Error> {
        if is_f64::<T>() {
            return Ok(());
        }
        let (src, dst) = (self.w.part(r.clone())?, self.t.part_mut(r)?);
        for (o, &x) in dst.iter_mut().zip(src) {
            *o = T::from_f64(x);
        }
        Ok(())
    }
}

impl<'w, T: Real, C: Comm + ?Sized> Shards<'_, 'w, '_, C, T> {
    /// The set-up (module docs): one reduction of the item counts, largest
    /// entries and column indices, view sums, squares and class counts, the
    /// decisions taken from it (agreed), and the halo plan of explicit
    /// graphs. Returns the data scale measured over all items.
    fn setup<VS: ViewSet<T> + ?Sized>(
        &mut self,
        views: &VS,
        params: &MvslParams,
        st: &mut Stack<'w>,
    ) -> Result<Scale, Error> {
        let (rank, ranks) = (self.cm.comm.rank(), self.cm.comm.ranks());
        let (k, hv, n_r) = (self.k, views.count(), self.n_r);
        let graph = self.graph;
        let c_all = graph.classes();
        let sge = match graph {
            DistGraph::Sge { labels, n_classes } => Some(SgeShard { labels, n_classes }),
            _ => None,
        };
        self.counts = st.take(self.layout.c)?;
        self.sbuf = st.take(k * self.layout.c + STATUS)?;
        self.sums = st.take(hv)?;
        let edges = graph.edges();
        let mut halo = if graph.is_csr() {
            Some((
                st.take::<usize>(edges)?,
                Halo {
                    pos: st.take(edges)?,
                    serve: st.take(edges)?,
                    halo: st.take_matrix(k.max(1), edges)?,
                    sendbuf: st.take_matrix(k.max(1), edges)?,
                    recv: st.take(ranks)?,
                    send: st.take(ranks)?,
                    krecv: st.take(ranks)?,
                    ksend: st.take(ranks)?,
                    row: st.take(4 * k)?,
                    n_recv: 0,
                    n_send: 0,
                },
                st.take::<f64>(ranks * ranks + ranks + STATUS)?,
            ))
        } else {
            None
        };
        let cm = &mut self.cm;
        let layout = self.layout;
        let counts = &mut *self.counts;
        let view_sums = &mut *self.sums;

        // Set-up reduction: [max entry per rank | items per rank | largest column
        // index per rank | view sums | view squares | labeled items per class],
        // then the decisions taken from it, agreed.
        let (n, offset, half, scale);
        {
            let mut ss = st.rest();
            let su: &mut [f64] = ss.take(3 * ranks + 2 * hv + c_all + STATUS)?;
            su.fill(0.0);
            // The parts of `su` (its length is their sum: no `get` misses).
            let at = |su: &mut [f64], i: usize, x: f64| {
                if let Some(s) = su.get_mut(i) {
                    *s = x;
                }
            };
            let mut mx = 0.0f64;
            for i in 0..hv {
                let x = views.view(i);
                mx = mx.max(x.max_value());
                at(su, 3 * ranks + i, x.sum());
                at(su, 3 * ranks + hv + i, x.sq_frobenius());
            }
            at(su, rank, mx);
            at(su, ranks + rank, n_r as f64);
            if let DistGraph::Csr { affinity, penalty } = graph {
                let m = [affinity, penalty]
                    .iter()
                    .flatten()
                    .map(|g| g.max_col())
                    .max()
                    .unwrap_or(0);
                at(su, 2 * ranks + rank, m as f64);
            }
            if let Some(sg) = &sge {
                sg.add_counts(su.part_mut(3 * ranks + 2 * hv..3 * ranks + 2 * hv + c_all)?);
            }
            cm.sum(su)?;
            let su = su.part(..3 * ranks + 2 * hv + c_all)?;
            let derived = (|| -> Result<_, Error> {
                let gmax = su.part(..ranks)?.iter().fold(0.0f64, |a, &b| a.max(b));
                let n = su.part(ranks..2 * ranks)?.iter().sum::<f64>() as usize;
                let offset = su.part(ranks..ranks + rank)?.iter().sum::<f64>() as usize;
                let half = su
                    .part(3 * ranks + hv..3 * ranks + 2 * hv)?
                    .iter()
                    .map(|x| 0.5 * x)
                    .sum::<f64>();
                if sge.is_some() {
                    let cc = su.part(3 * ranks + 2 * hv..)?;
                    if cc.iter().sum::<f64>() < 2.0 {
                        return Err(Error::TooFewLabeled);
                    }
                    counts.copy_checked(cc.part(..layout.c)?)?;
                }
                if su
                    .part(2 * ranks..3 * ranks)?
                    .iter()
                    .any(|&m| m >= n as f64)
                {
                    // A column index beyond the items of all ranks (seen by every rank).
                    return Err(Error::MalformedCsc);
                }
                let scale = Scale::of_measures::<T>(half, gmax)?;
                view_sums.copy_checked(su.part(3 * ranks..3 * ranks + hv)?)?;
                Ok((n, offset, half, scale))
            })();
            cm.checkpoint(derived.map(|_| ()))?;
            (n, offset, half, scale) = derived?;
            if let Some((hidx, h, square)) = &mut halo {
                plan_halo(
                    cm,
                    &graph,
                    k,
                    (rank, ranks),
                    (offset, n_r),
                    su.part(ranks..2 * ranks)?,
                    hidx,
                    h,
                    square,
                )?;
            }
        }
        let use_graph = params.beta > 0.0;
        self.sge_on = if use_graph { sge } else { None };
        self.halo_on = if use_graph { halo.map(|x| x.1) } else { None };
        (self.n, self.offset, self.half) = (n, offset, half);
        Ok(scale)
    }
}

impl<T: Real, C: Comm + ?Sized> Collective<T> for Shards<'_, '_, '_, C, T> {
    fn split(&self) -> bool {
        true
    }

    fn half_x2<VS: ViewSet<T> + ?Sized>(&mut self, views: &VS, scale: Scale) -> Result<f64, Error> {
        if scale.is_one() {
            return Ok(self.half);
        }
        let mut b = [
            (0..views.count())
                .map(|i| 0.5 * views.view(i).sq_frobenius_scaled(scale.get()))
                .sum::<f64>(),
            0.0,
            0.0,
        ];
        self.cm.sum(&mut b)?;
        Ok(b[0])
    }

    fn random_start<VS: ViewSet<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
        &self,
        views: &VS,
        k: usize,
        params: &NmfParams,
        s: f64,
        u: &mut F,
        v: &mut [T],
    ) {
        let n = self.n;
        let rows = |i: usize| views.shape(i).rows as f64;
        let mean = |i: usize| self.sums.get(i).copied().unwrap_or(0.0) / (rows(i) * n as f64);
        random_start_shard(&mean, k, params, s, (self.offset, n), u, v);
    }

    fn reduce_r<VS: ViewSet<T> + ?Sized>(
        &mut self,
        views: &VS,
        prep: &Prepared<'_, T>,
        s: T,
        v: &[T],
        k: usize,
        sc: &mut Stack<'_>,
    ) -> Result<(), Error> {
        let mk = self.layout.mk;
        x_vt_all(views, prep, s, v, k, self.red.t.part_mut(..mk)?, sc)?;
        self.cm.sum(self.red.words(0..mk + STATUS, 0..mk)?)?;
        self.red.narrow(0..mk)
    }

    fn r(&self, off: usize, len: usize) -> Result<&[T], Error> {
        self.red
            .t
            .part(off..off.checked_add(len).ok_or(Error::Internal)?)
    }

    fn products(&mut self, at: AtV<'_, T>, _sc: &mut Stack<'_>) -> Result<(), Error> {
        let AtV {
            v,
            kn: (k, _),
            plus,
            minus,
            ..
        } = at;
        let layout = self.layout;
        let vlen = layout.len() - layout.mk;
        if let Some(sg) = &self.sge_on {
            let at = layout.mk + STATUS;
            let vpart = self.red.words(at..at + vlen, 0..0)?;
            let (_, sums, sq, _) = layout.split_v(vpart)?;
            sg.local_sums(v, k, sums, sq);
            let kc = sums.len();
            self.sbuf.part_mut(..kc)?.copy_checked(sums)?;
            self.cm.sum(self.sbuf)?;
            sums.copy_checked(self.sbuf.part(..kc)?)?;
            sg.products(self.counts, sums, v, k, plus, minus);
        }
        if let Some(h) = &mut self.halo_on {
            h.products(&mut self.cm, &self.graph, v, k, plus, minus)?;
        }
        Ok(())
    }

    fn stats(&mut self, at: AtV<'_, T>, g: &mut [T], sc: &mut Stack<'_>) -> Result<VStats, Error> {
        let AtV {
            v,
            q,
            kn: (k, n_r),
            plus,
            minus,
        } = at;
        let layout = self.layout;
        let vlen = layout.len() - layout.mk;
        let at = layout.mk + STATUS;
        // `G` in the solver's scalar (as the single process forms it), the
        // rest in `f64`.
        gram(v, k, n_r, self.red.t.part_mut(at..at + k * k)?, sc)?;
        {
            let vpart = self.red.words(at..at + vlen, at..at + k * k)?;
            v_stats(&layout, v, q, self.sge_on.as_ref(), vpart)?;
            if layout.scalars == 4 {
                let t = match &mut self.halo_on {
                    Some(h) => h.products(&mut self.cm, &self.graph, v, k, plus, minus)?,
                    None => (0.0, 0.0),
                };
                let (_, _, _, scal) = layout.split_v(vpart)?;
                let [_, _, ta, tp] = scal else {
                    return Err(Error::Internal);
                };
                (*ta, *tp) = t;
            }
        }
        let vb = self.red.words(at..layout.len() + 2 * STATUS, 0..0)?;
        self.cm.sum(vb)?;
        let (gr, sums, sq, scal) = layout.split_v(vb.part_mut(..vlen)?)?;
        let traces = match (&self.sge_on, self.halo_on.is_some(), &*scal) {
            (Some(sg), _, _) => {
                sg.products(self.counts, sums, v, k, plus, minus);
                sg.traces(self.counts, sums, sq, k)
            }
            (None, true, &[_, _, ta, tp]) => (ta, tp),
            (None, true, _) => return Err(Error::Internal),
            (None, false, _) => (0.0, 0.0),
        };
        let &mut [qv, sum_v, ..] = scal else {
            return Err(Error::Internal);
        };
        if g.len() != gr.len() {
            return Err(Error::Internal);
        }
        for (o, &x) in g.iter_mut().zip(gr.iter()) {
            *o = T::from_f64(x);
        }
        Ok(VStats { traces, qv, sum_v })
    }

    fn started(&mut self) {
        let cm = &self.cm;
        self.setup = (cm.calls, cm.words, cm.ex_calls, cm.ex_words);
    }

    fn vote(&mut self, local: bool) -> Result<bool, Error> {
        let mut b = [if local { 1.0 } else { 0.0 }, 0.0, 0.0];
        self.cm.sum(&mut b)?;
        Ok(b[0] != 0.0)
    }

    fn finish<R>(&mut self, r: Result<R, Error>) -> Result<R, Error> {
        let mk = self.layout.mk;
        match self.red.words(0..mk + STATUS, 0..0) {
            Ok(buf) => self.cm.settle(r, buf),
            Err(e) => Err(e),
        }
    }
}

/// The halo plan of explicit graphs (set-up): the other ranks' items this
/// rank's rows reference (`hidx`, sorted, unique), how many come from each
/// rank; a `ranks × ranks` reduction tells every rank what the others read
/// from it (checked against each rank's edges to other ranks, which bound it
/// for a symmetric graph: [`Error::BadParameter`] on every rank otherwise);
/// the index lists are exchanged once; per edge, the column of `[V_r | halo]`.
#[allow(clippy::too_many_arguments)]
fn plan_halo<C: Comm + ?Sized>(
    cm: &mut Counted<'_, C>,
    graph: &DistGraph<'_>,
    k: usize,
    (rank, ranks): (usize, usize),
    (offset, n_r): (usize, usize),
    items: &[f64],
    hidx: &mut [usize],
    h: &mut Halo<'_>,
    square: &mut [f64],
) -> Result<(), Error> {
    let DistGraph::Csr { affinity, penalty } = *graph else {
        return Err(Error::Internal);
    };
    let graphs = [affinity, penalty];
    let local = |c: usize| c >= offset && c < offset + n_r;
    // The referenced items of other ranks, sorted and unique.
    let mut len = 0;
    let mut remote_edges = 0usize;
    for g in graphs.iter().flatten() {
        for &c in g.col_idx.part(..g.nnz())? {
            if !local(c) {
                *hidx.at_mut(len)? = c;
                len += 1;
                remote_edges += 1;
            }
        }
    }
    let hs = hidx.part_mut(..len)?;
    sort_by(hs, |a, b| a < b);
    // Unique: keep each value where it first occurs (`u ≤ t` always).
    let mut u = 0;
    for t in 0..hs.len() {
        let x = at(hs, t);
        if t == 0 || at(hs, t - 1) != x {
            set_at(hs, u, x);
            u += 1;
        }
    }
    let hs = hidx.part(..u)?;
    h.n_recv = u;
    // Items per rank: the ranks' ranges follow each other.
    let mut start = 0usize;
    let mut t = 0;
    for (rq, &nq) in h.recv.iter_mut().zip(items) {
        let end = start.saturating_add(nq as usize);
        let c0 = t;
        while hs.get(t).is_some_and(|&c| c < end) {
            t += 1;
        }
        *rq = t - c0;
        start = end;
    }
    // Who reads what from whom: row r of the square is rank r's requests.
    // `square` is `(ranks + 1) × ranks` (row-major by rank; checked).
    square.fill(0.0);
    let sq = |square: &[f64], i: usize| square.at(i);
    let row = square.part_mut(rank * ranks..(rank + 1) * ranks)?;
    for (s, &r) in row.iter_mut().zip(h.recv.iter()) {
        *s = r as f64;
    }
    *square
        .get_mut(ranks * ranks + rank)
        .ok_or(Error::Internal)? = remote_edges as f64;
    cm.sum(square)?;
    let mut symmetric = Ok(());
    for s in 0..ranks {
        let mut asked = 0.0;
        for q in 0..ranks {
            asked += sq(square, q * ranks + s)?;
        }
        if asked > sq(square, ranks * ranks + s)? {
            // More items requested from rank s than its edges to other ranks:
            // the graph is not symmetric across ranks.
            symmetric = Err(Error::BadParameter);
        }
    }
    // The counts below size the exchanges: agreed before they are used.
    cm.checkpoint(symmetric)?;
    let counts = h.send.iter_mut().zip(h.recv.iter()).zip(h.krecv.iter_mut());
    for (q, (((sd, &rv), kr), ks)) in counts.zip(h.ksend.iter_mut()).enumerate().take(ranks) {
        *sd = sq(square, q * ranks + rank)? as usize;
        *kr = rv * k;
        *ks = *sd * k;
    }
    h.n_send = h.send.iter().sum();
    // The index lists: this rank's requests out, the others' requests in.
    {
        let out = h.halo.part_mut(..u)?;
        for (o, &c) in out.iter_mut().zip(hs) {
            *o = c as f64;
        }
        let inn = h.sendbuf.part_mut(..h.n_send)?;
        let (recv, send) = (&*h.recv, &*h.send);
        cm.exchange(h.halo.part(..u)?, recv, inn, send)?;
        for (sv, &x) in h.serve.iter_mut().zip(inn.iter()) {
            // An index this rank does not hold was not what the peer sent:
            // this rank fails (told at the next allreduce) and serves item 0.
            let (lo, hi) = (offset as f64, (offset + n_r) as f64);
            let i = (whole(x) && x >= lo && x < hi)
                .then(|| (x as usize).checked_sub(offset))
                .flatten()
                .filter(|&i| i < n_r);
            *sv = i.unwrap_or_else(|| {
                cm.fail(Error::CommFailed);
                0
            });
        }
    }
    // Per edge: the column of [V_r | halo].
    let mut e = 0;
    for g in graphs.iter().flatten() {
        for &c in g.col_idx.part(..g.nnz())? {
            *h.pos.at_mut(e)? = if local(c) {
                c - offset
            } else {
                n_r + hs.binary_search(&c).map_err(|_| Error::Internal)?
            };
            e += 1;
        }
    }
    Ok(())
}
