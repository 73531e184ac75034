//! The C ABI of `models::dist`: joint NMF and the MvSL/MCL family (SGE or
//! explicit graphs) across ranks, through a caller-supplied allreduce and
//! exchange, and the TGE/kNN graph built across ranks (issue 19;
//! `examples-c/mpi_fit.c` passes `MPI_Allreduce`, `MPI_Alltoallv` and
//! `MPI_Allgatherv`).

use core::ffi::{c_int, c_void};

use super::graph::{csr_out, write_capacity};
use super::mvsl::{csr_arrays, mvnmf_graph, mvnmf_mvsl_params};
use super::mvsl::{MVNMF_GRAPH_CSR, MVNMF_GRAPH_NONE, MVNMF_GRAPH_SGE};
use super::neighbors::{mvnmf_ann_params, read_ann};
use super::nmf::mvnmf_nmf_params;
use super::similarity::{
    any_median, ceta, ckernels, clabels, mvnmf_csr_buffers, mvnmf_graph_params,
};
use super::similarity::{mvnmf_kernel, read_graph, CKernels};
use super::util::*;
use crate::comm::allgather_by_sum;
use crate::graph::{CsrOut, GraphParams};
use crate::linalg::real::Real;
use crate::models::dist::{self, Comm, DistGraph, GraphTraffic, Problem, ShardRows, Traffic};
use crate::models::mvsl::MvslParams;
use crate::models::nmf::NmfParams;
use crate::similarity::AnnParams;

/// Sum over all ranks in place: on return `buf[0 .. len]` holds, on every
/// rank, the element-wise sum of every rank's `buf` (`MPI_Allreduce` with
/// `MPI_IN_PLACE`, `MPI_DOUBLE`, `MPI_SUM`). Every rank must receive the same
/// sum. Return 0 on success. The library checks what it gets: the last 2
/// words of every `buf` are its status words (each rank's 1, whose sum must
/// come back as `n_ranks`, and its failure flag). A nonzero return or status
/// words that are wrong fail this rank: it keeps taking part in the same calls
/// until the next allreduce tells the others, and then every rank returns after
/// that same call (this one `MVNMF_STATUS_COMM_FAILED`, the others
/// `MVNMF_STATUS_PEER_FAILED`): a callback that fails on one rank never leaves
/// another waiting in a collective, as long as it takes part in the call.
pub type mvnmf_allreduce_fn =
    Option<unsafe extern "C" fn(buf: *mut f64, len: usize, ctx: *mut c_void) -> c_int>;

/// Point to point between all ranks at once (`MPI_Alltoallv` on doubles):
/// send `send_counts[q]` values of `send` to rank `q` (the blocks one after the
/// other in rank order) and receive `recv_counts[q]` values from rank `q` into
/// `recv` (the same layout); both count arrays have `n_ranks` entries. Return 0
/// on success. Needed only by explicit graphs (`MVNMF_GRAPH_CSR`): the columns
/// of V that a rank's graph rows read from other ranks (the halo). The
/// library fills `recv` with NaN before the call: a word that is not finite
/// afterwards (every word sent is finite) was not delivered, and counts or
/// indices received must be what the peers can have sent; a nonzero return or
/// such a delivery fails this rank, as for `mvnmf_allreduce_fn`.
pub type mvnmf_exchange_fn = Option<
    unsafe extern "C" fn(
        send: *const f64,
        send_counts: *const usize,
        recv: *mut f64,
        recv_counts: *const usize,
        ctx: *mut c_void,
    ) -> c_int,
>;

/// Every rank's part to every rank (`MPI_Allgatherv` on doubles): rank `q`
/// contributes `counts[q]` values (`part`, `part_len = counts[rank]` of them,
/// from this rank), and `out` receives all of them one after the other in rank
/// order (`Σ counts` values; `counts` has `n_ranks` entries). Return 0 on
/// success. Used by `mvnmf_dist_tge` to stream the items' columns. `out` is
/// checked as the exchange's `recv` is.
pub type mvnmf_allgather_fn = Option<
    unsafe extern "C" fn(
        part: *const f64,
        part_len: usize,
        out: *mut f64,
        counts: *const usize,
        ctx: *mut c_void,
    ) -> c_int,
>;

/// The communicator of a distributed fit: this rank (`0 ≤ rank < n_ranks`),
/// the number of ranks, the allreduce, (for explicit graphs and the graph
/// build) the exchange, (optionally) the all-gather, with their context
/// pointer (e.g. a pointer to an `MPI_Comm`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mvnmf_dist_comm {
    /// Sum over ranks in place (required).
    pub allreduce: mvnmf_allreduce_fn,
    /// Point to point (may be NULL without explicit graphs and outside
    /// `mvnmf_dist_tge`).
    pub exchange: mvnmf_exchange_fn,
    /// Passed to the callbacks unchanged.
    pub ctx: *mut c_void,
    /// This rank.
    pub rank: usize,
    /// Number of ranks (≥ 1).
    pub n_ranks: usize,
    /// All-gather (may be NULL: `mvnmf_dist_tge` then sums buffers padded with
    /// −0.0 with `allreduce`, the same result at twice the traffic).
    pub allgather: mvnmf_allgather_fn,
}

// The core's own structs, under their C names for Rust callers.
pub use crate::models::dist::{
    GraphTraffic as mvnmf_dist_graph_traffic, Traffic as mvnmf_dist_traffic,
};

/// The C communicator as a [`Comm`].
pub(super) struct CComm {
    f: unsafe extern "C" fn(*mut f64, usize, *mut c_void) -> c_int,
    /// The exchange callback (NULL allowed where a call needs none).
    pub(super) ex: mvnmf_exchange_fn,
    ag: mvnmf_allgather_fn,
    ctx: *mut c_void,
    rank: usize,
    ranks: usize,
}

impl Comm for CComm {
    fn rank(&self) -> usize {
        self.rank
    }
    fn ranks(&self) -> usize {
        self.ranks
    }
    fn allreduce(&mut self, buf: &mut [f64]) -> Result<(), Error> {
        // SAFETY: the caller supplied this function for this purpose; `buf` is
        // a valid, exclusively borrowed slice of `buf.len()` doubles.
        delivered(unsafe { (self.f)(buf.as_mut_ptr(), buf.len(), self.ctx) })
    }
    // `send` with its per-rank counts `sn`, `recv` with `rn` (see `Comm`).
    fn exchange(&mut self, send: &[f64], sn: &[usize], recv: &mut [f64], rn: &[usize]) -> Res {
        let ex = self.ex.ok_or(Error::NullPointer)?;
        if sn.len() != self.ranks
            || rn.len() != self.ranks
            || sn.iter().sum::<usize>() != send.len()
            || rn.iter().sum::<usize>() != recv.len()
        {
            return Err(Error::Internal);
        }
        // SAFETY: the caller supplied this function for this purpose; the
        // buffers are valid for the lengths their counts sum to (checked).
        delivered(unsafe {
            ex(
                send.as_ptr(),
                sn.as_ptr(),
                recv.as_mut_ptr(),
                rn.as_ptr(),
                self.ctx,
            )
        })
    }
    fn allgather(&mut self, part: &[f64], counts: &[usize], out: &mut [f64]) -> Result<(), Error> {
        let Some(ag) = self.ag else {
            return allgather_by_sum(self, part, counts, out);
        };
        if counts.len() != self.ranks
            || counts.get(self.rank) != Some(&part.len())
            || counts.iter().sum::<usize>() != out.len()
        {
            return Err(Error::Internal);
        }
        // SAFETY: the caller supplied this function for this purpose; `part`
        // holds `counts[rank]` values and `out` `Σ counts` (checked), `counts`
        // `n_ranks` entries.
        delivered(unsafe {
            ag(
                part.as_ptr(),
                part.len(),
                out.as_mut_ptr(),
                counts.as_ptr(),
                self.ctx,
            )
        })
    }
}

type Res = Result<(), Error>;

/// A callback's return: 0 delivered, else `MVNMF_STATUS_COMM_FAILED`.
fn delivered(r: c_int) -> Res {
    match r {
        0 => Ok(()),
        _ => Err(Error::CommFailed),
    }
}

/// The communicator (required; its `allreduce` too; the rank in range).
pub(super) unsafe fn read_comm(c: *const mvnmf_dist_comm) -> Result<CComm, Error> {
    c_unsafe!({
        require!(c);
        let c = *c;
        let f = c.allreduce.ok_or(Error::NullPointer)?;
        if c.n_ranks == 0 || c.rank >= c.n_ranks {
            return Err(Error::BadParameter);
        }
        Ok(CComm {
            f,
            ex: c.exchange,
            ag: c.allgather,
            ctx: c.ctx,
            rank: c.rank,
            ranks: c.n_ranks,
        })
    })
}

/// The graph of a distributed fit: NULL or `MVNMF_GRAPH_NONE` (none) or
/// `MVNMF_GRAPH_SGE` over the rank's items; other kinds are refused.
unsafe fn read_dist_graph<'a>(g: *const mvnmf_graph) -> Result<DistGraph<'a>, Error> {
    c_unsafe!({
        if g.is_null() {
            return Ok(DistGraph::None);
        }
        let g = &*g;
        match g.kind {
            MVNMF_GRAPH_NONE => Ok(DistGraph::None),
            MVNMF_GRAPH_SGE => {
                require!(g.labels);
                Ok(DistGraph::Sge {
                    labels: slice(g.labels, g.n)?,
                    n_classes: g.n_classes,
                })
            }
            MVNMF_GRAPH_CSR => {
                // The rank's rows of one graph (`None` for a NULL `row_ptr`).
                let rows = |rp, ci, w| {
                    let r = csr_arrays(g.n, rp, ci, w)?;
                    Ok::<_, Error>(r.map(|(row_ptr, col_idx, weights)| ShardRows {
                        row_ptr,
                        col_idx,
                        weights,
                    }))
                };
                Ok(DistGraph::Csr {
                    affinity: rows(g.affinity_row_ptr, g.affinity_col_idx, g.affinity_weights)?,
                    penalty: rows(g.penalty_row_ptr, g.penalty_col_idx, g.penalty_weights)?,
                })
            }
            _ => Err(Error::BadParameter),
        }
    })
}

/// The `f64` words each rank passes to the allreduce per outer iteration (the
/// communication model of `mvnmf_dist_mvsl_fit`): `sum_rows·k + k² + k·c + c +
/// 2 + 2·explicit_graph + (v_inner − 1)·k·c + monitor + 2·calls`, `calls = 2 +
/// (v_inner − 1)·(c > 0) + monitor` allreduce calls each carrying 2 status
/// words, with `sum_rows = Σ_v
/// rows_v`, `c` the SGE classes (0 without a graph, with explicit graphs or
/// with `beta = 0`), `explicit_graph` 1 with `MVNMF_GRAPH_CSR` (its two traces),
/// `monitor` 1 when a progress callback votes on stopping. Independent of the
/// number of items and of ranks. Explicit graphs also send `v_inner · k ·
/// traffic.halo_sent` words per iteration through the exchange.
#[no_mangle]
pub extern "C" fn mvnmf_dist_words_per_iteration(
    sum_rows: usize,
    k: usize,
    n_classes: usize,
    v_inner: u32,
    monitor: u32,
    explicit_graph: u32,
) -> u64 {
    dist::words_per_iteration(
        sum_rows,
        k,
        n_classes,
        v_inner,
        monitor != 0,
        explicit_graph != 0,
    )
}

/// The position of `comm` in every distributed entry point: where a failed
/// callback (`MVNMF_STATUS_COMM_FAILED`) and a communicator that cannot be
/// read point.
const COMM: u32 = 1;

/// The argument positions of `mvnmf_dist_joint_nmf_fit` and its `_f32` twin
/// (`comm` 1, `views` 2, `n_views` 3, `k` 4, `params` 5, `u` 6, `v` 7, `work`
/// 8, `work_bytes` 9, `progress` 10, `user` 11, `report` 12, `traffic` 13)
/// that the core's own checks concern.
const JOINT: Site = Site::at(2, 4, 5, 0, 9);

/// The positions of `mvnmf_dist_mvsl_fit` and its `_f32` twin (`comm` 1,
/// `views` 2, `n_views` 3, `graph` 4, `k` 5, `params` 6, `u` 7, `v` 8, `work`
/// 9, `work_bytes` 10, `progress` 11, `user` 12, `report` 13, `traffic` 14).
const MVSL: Site = Site::at(2, 5, 6, 4, 10);

/// Where a distributed fit's core refusal `e` points (issue 33): another
/// rank's refusal (`PEER_FAILED`) nowhere, a failed callback at `comm`, the
/// graph's own checks ([`dist::graph_refusal`]; its `BAD_PARAMETER` is the
/// options' unbounded `V`) and the set-up's checks of explicit graphs over all
/// ranks (a column index past `N`, rows not symmetric across ranks) at the
/// graph, the rest through the site ([`Site::blame_start`]: the values of
/// this rank's views — the column within the rank's shard —, then a given
/// start's `u` and `v`).
fn blame<T: Real, VS: ViewSet<T> + ?Sized>(
    site: &Site,
    e: Error,
    views: &VS,
    graph: &DistGraph<'_>,
    k: usize,
    problem: Problem<'_>,
    given: &[Given<'_, T>],
) -> Located {
    let at = |pos| Located::new(e, Where::arg(pos));
    let csr = matches!(graph, DistGraph::Csr { .. });
    match (e, dist::graph_refusal(views, graph, k, problem)) {
        (Error::PeerFailed, _) => Located::new(e, Where::NONE),
        (Error::CommFailed, _) => at(COMM),
        (Error::BadParameter, Some(Error::BadParameter)) => at(site.params),
        (_, Some(g)) if g == e => at(site.graph),
        (Error::MalformedCsc | Error::BadParameter, None) if csr => at(site.graph),
        _ => {
            let init = match problem {
                Problem::JointNmf(p) => p.init,
                Problem::Mvsl(p) => p.init,
            };
            site.blame_start(e, views, init, given)
        }
    }
}

/// Both distributed fits: reads the communicator, runs `read` (the options
/// and the graph), then reads the views (at `site.views`), the bases `u` (at
/// `at`), `v` (`at + 1`) and the workspace (`work` at `at + 2`), opens the
/// rank's shard (the agreement on the inputs) and fits it; tells the other
/// ranks when an argument cannot be read (`dist::refuse`: they stop with
/// `PEER_FAILED` instead of waiting), locates a refusal ([`blame`]), and
/// writes the traffic (if asked) and the report (mapping the stop reason).
#[allow(clippy::too_many_arguments)]
unsafe fn fit_dist<'a, T: Real, D: ViewDesc<T = T>, P>(
    comm: *const mvnmf_dist_comm,
    (views, n_views): (*const D, usize),
    k: usize,
    (u, v, site, at): (*const *mut T, *mut T, Site, u32),
    (work, work_bytes, progress, user, report): Tail,
    traffic: *mut Traffic,
    read: impl FnOnce(&CComm) -> Result<(DistGraph<'a>, P), Located>,
    problem: impl FnOnce(&P) -> Problem<'_>,
) -> Result<mvnmf_status, Located> {
    let fit = |cm: &mut CComm| {
        c_unsafe!({
            let (g, p) = read(cm)?;
            let (vs, n) = read_views_at(views, n_views, site.views)?;
            let mut us = factors_at(u, &vs, k, &[], |p: *mut T| p.is_null(), at)?;
            let vv = out_ab(v, k, n).arg(at + 1)?;
            let w = work_of(work, work_bytes).arg(at + 2)?;
            let pr = problem(&p);
            let r = with_monitor(progress, user, |m| {
                let shard = dist::open(cm, &vs, g, k, pr, (&us, &*vv), w, m.is_some());
                shard.and_then(|s| s.fit(&vs, &mut us, &mut *vv, m))
            });
            Ok(r.map_err(|e| {
                let start = [
                    Given::Factors(at, &us as &dyn Factors<T>),
                    Given::Buf(at + 1, &*vv, k),
                ];
                blame(&site, e, &vs, &g, k, pr, &start)
            }))
        })
    };
    c_unsafe! {
        shell(comm, dist::refuse, fit, |r| {
            put_opt(traffic, r.traffic);
            finish(r.report, report).arg(0)
        })
    }
}

export! {
    /// Joint multi-view NMF (`mvnmf_joint_nmf_fit`) with the items split over
    /// ranks. Every rank calls it at the same time with its `comm`, its shard of
    /// the items — `views[v]` holds the columns `offset_r .. offset_r + N_r` of view
    /// `v` (dense or CSC, `col_ptr` starting at 0), the ranks' ranges following
    /// each other in rank order — the same `n_views`, rows, `k` and options;
    /// `u[v]` (`rows_v × k`) receives all the bases (the same on every rank), `v`
    /// (`k × N_r`) the rank's columns of the encoding. The iterates, objective and
    /// report are the single-process fit's on all `N = Σ N_r` items (to rounding:
    /// the order of the sums over items differs; 1 rank gives the same bits).
    ///
    /// Before writing anything the ranks agree: if any rank refuses its input,
    /// every rank returns (that one its status, the others
    /// `MVNMF_STATUS_PEER_FAILED`) with all outputs but `report` untouched. A progress callback
    /// must be given on every rank or none; one that returns nonzero on any rank
    /// stops every rank after the same iteration (`MVNMF_STATUS_CANCELLED`).
    /// A callback that fails or does not deliver on one rank (see
    /// `mvnmf_allreduce_fn`): every rank returns after the same call, that rank
    /// `MVNMF_STATUS_COMM_FAILED`, the others `MVNMF_STATUS_PEER_FAILED` (after the
    /// start the outputs then hold a partial iterate); the run ends with a closing
    /// agreement (one allreduce of `Σ rows_v · k + 2` words), so every rank
    /// returns OK or none does — unless that last call itself fails on one rank,
    /// which then returns `MVNMF_STATUS_COMM_FAILED` alone. `report` is written
    /// whole (its padding bytes zero).
    /// `traffic` (may be NULL) receives the calls and words this rank passed to
    /// `allreduce` (written with the report). Communication per iteration:
    /// `mvnmf_dist_words_per_iteration`.
    ///
    /// A refusal says where, as the single-process fits (issue 33): `report` is
    /// written with every field zero but `where_*` (`traffic` untouched).
    /// `where_arg` is the argument's position here: `comm` (1) for a
    /// communicator that cannot be read and for `MVNMF_STATUS_COMM_FAILED`,
    /// `views` (2; a malformed descriptor's view, row and column), `n_views`
    /// (3, zero), `k` (4),
    /// `params` (5), `u` (6, the view of a NULL pointer), `v` (7), `work` (8),
    /// `work_bytes` (9, too small). A value of the views (NaN, negative, too
    /// large) gives its view, row and column within this rank's shard: the
    /// column of the descriptor this rank passed (item `offset_r + where_col`
    /// of all `N`); under `MVNMF_INIT_GIVEN`, a bad value of the start, its
    /// view, row and column in `u` (6) or its row and column in this rank's `v`
    /// (7). `MVNMF_STATUS_PEER_FAILED` says nowhere (`where_arg` 0): the rank
    /// that refused says where. What is found from the sums over all ranks
    /// (data too large, too few labeled items) points at the same argument on
    /// every rank.
    ///
    /// The `_f32` twin takes `float` views, bases and encoding (the same
    /// communicator of `double` words: the shard's sums are widened, summed over
    /// the ranks in double and rounded back, so its iterates are the
    /// single-process `_f32` fit's to `float` rounding).
    fn mvnmf_dist_joint_nmf_fit / mvnmf_dist_joint_nmf_fit_f32(
        comm: *const mvnmf_dist_comm,
        views: *const V = "`n_views`",
        n_views, k: usize,
        params: *const mvnmf_nmf_params,
        u: *const *mut T = "`n_views` pointers to `rows_v × k` values each",
        v: *mut T = "`k × N_r`",
        ..solver(work, work_bytes, progress, user, report),
        traffic: *mut Traffic = "one struct",
    ) at report {
        let tail = (work, work_bytes, progress, user, report);
        let read = |_: &CComm| Ok((DistGraph::None, read_params(params).arg(5)?));
        fit_dist(comm, (views, n_views), k, (u, v, JOINT, 6), tail, traffic, read,
            |p| Problem::JointNmf(p))
    }
    /// on a rank whose views (its
    /// shard of the items) have these shapes, for `n_ranks ≥ 1` ranks
    /// (`MVNMF_STATUS_BAD_PARAMETER` for 0, as the call).
    workspace mvnmf_dist_joint_nmf_fit_workspace / mvnmf_dist_joint_nmf_fit_f32_workspace(
        views: *const V = "`n_views`",
        n_views, k, n_ranks: usize,
        params: *const mvnmf_nmf_params,
    ) {
        let p: NmfParams = read_params(params)?;
        dist::joint_nmf_fit_workspace_for::<T>(shapes(views, n_views)?, k, n_ranks, &p)
    };
}

export! {
    /// The MvSL/MCL family (`mvnmf_mvsl_fit`: MvSL-S, MCL, GNMF without a graph,
    /// joint NMF) with the items split over ranks, as `mvnmf_dist_joint_nmf_fit`.
    /// `graph`: NULL or `MVNMF_GRAPH_NONE`; `MVNMF_GRAPH_SGE` with `n = N_r` and
    /// the labels of the rank's items (`n_classes` the same on every rank; at
    /// least two labeled items over all ranks); or `MVNMF_GRAPH_CSR` (MvSL-L/T,
    /// kNN graphs) with `n = N_r` and the rank's rows of the symmetric `N × N`
    /// graphs, column indices global (`< N`), sorted per row: the V-step reads the
    /// neighbours' columns of V from their ranks through `comm->exchange`
    /// (required then). `MVNMF_GRAPH_DENSE` is refused (`MVNMF_STATUS_BAD_PARAMETER`).
    /// Symmetry across ranks is not checked (only that no rank is asked for more
    /// items than its edges to other ranks).
    ///
    /// Where a refusal points: as `mvnmf_dist_joint_nmf_fit`, at this call's
    /// positions (`comm` 1, `views` 2, `n_views` 3, `graph` 4, `k` 5, `params`
    /// 6, `u` 7, `v` 8, `work` 9, `work_bytes` 10); `graph` (4) for the
    /// descriptor, its labels, the rank's rows and weights, and what the ranks
    /// find together of explicit graphs (a column index not below `N`, a rank
    /// asked for more items than its edges to other ranks) — but
    /// `MVNMF_GRAPH_CSR` with a NULL `comm->exchange` is `comm` (1), where the
    /// callback is missing; an SGE or penalty graph with an unbounded `V`
    /// (`vmax` infinite, `beta > 0`) is `params` (6).
    ///
    /// The `_f32` twin takes `float` views, bases and encoding, the graph as
    /// here (its weights `double`), and sums over the ranks in `double` as
    /// `mvnmf_dist_joint_nmf_fit_f32` does.
    fn mvnmf_dist_mvsl_fit / mvnmf_dist_mvsl_fit_f32(
        comm: *const mvnmf_dist_comm,
        views: *const V = "`n_views`",
        n_views: usize,
        graph: *const mvnmf_graph,
        k: usize,
        params: *const mvnmf_mvsl_params,
        u: *const *mut T = "`n_views` pointers to `rows_v × k` values each",
        v: *mut T = "`k × N_r`",
        ..solver(work, work_bytes, progress, user, report),
        traffic: *mut Traffic = "one struct",
    ) at report {
        let read = |cm: &CComm| {
            let p: MvslParams = read_params(params).arg(6)?;
            let g = read_dist_graph(graph).arg(4)?;
            if matches!(g, DistGraph::Csr { .. }) && cm.ex.is_none() {
                // Explicit graphs need the exchange: refused on every rank
                // now, not in the middle of the set-up; the callback missing
                // is in `comm`.
                return Err(Located::new(Error::NullPointer, Where::arg(COMM)));
            }
            Ok((g, p))
        };
        let tail = (work, work_bytes, progress, user, report);
        fit_dist(comm, (views, n_views), k, (u, v, MVSL, 7), tail, traffic, read,
            |p| Problem::Mvsl(p))
    }
    /// on a rank whose views have these
    /// shapes and this graph, for `n_ranks ≥ 1` ranks (`MVNMF_STATUS_BAD_PARAMETER`
    /// for 0, as the call).
    workspace mvnmf_dist_mvsl_fit_workspace / mvnmf_dist_mvsl_fit_f32_workspace(
        views: *const V = "`n_views`",
        n_views: usize,
        graph: *const mvnmf_graph,
        k, n_ranks: usize,
        params: *const mvnmf_mvsl_params,
    ) {
        let p: MvslParams = read_params(params)?;
        let g = read_dist_graph(graph)?;
        dist::fit_workspace_for::<T>(shapes(views, n_views)?, &g, k, n_ranks, &p)
    };
}

/// The shell of every distributed entry point, saying where it refused:
/// reads the communicator (argument 1), runs `body` (which reads the other
/// arguments, `Err` when one cannot be read, and runs), takes part in the
/// agreement with `refuse` when an argument cannot be read (the plain
/// [`Error`]: the location stays on this rank), and `finish`es a success
/// (writing the outputs that are written last).
pub(super) unsafe fn shell<R>(
    comm: *const mvnmf_dist_comm,
    refuse: fn(&mut CComm, Error) -> Error,
    body: impl FnOnce(&mut CComm) -> Result<Result<R, Located>, Located>,
    finish: impl FnOnce(R) -> Result<mvnmf_status, Located>,
) -> Result<mvnmf_status, Located> {
    let mut cm = c_unsafe!(read_comm(comm)).arg(COMM)?;
    match body(&mut cm) {
        Err(l) => Err(match refuse(&mut cm, l.error) {
            e if e == l.error => l,
            e @ Error::CommFailed => Located::new(e, Where::arg(COMM)),
            e => Located::from(e),
        }),
        Ok(r) => finish(r?),
    }
}

/// [`shell`] for an entry point that does not say where (the graph builds):
/// its `body` and `finish` return plain errors, run behind the panic boundary.
pub(super) unsafe fn run_shell<R>(
    comm: *const mvnmf_dist_comm,
    refuse: fn(&mut CComm, Error) -> Error,
    body: impl FnOnce(&mut CComm) -> Result<Result<R, Error>, Error>,
    finish: impl FnOnce(R) -> Result<mvnmf_status, Error>,
) -> mvnmf_status {
    entry!({
        let body = |cm: &mut CComm| Ok(body(cm)?.map_err(Located::from));
        let finish = |r| finish(r).map_err(Located::from);
        shell(comm, refuse, body, finish).map_err(Error::from)
    })
}

/// What `mvnmf_dist_tge` and `mvnmf_dist_tge_approx` read alike.
pub(super) struct TgeIn<'a> {
    pub(super) p: GraphParams,
    pub(super) ann: Option<AnnParams>,
    pub(super) vs: CViews<'a, mvnmf_view>,
    pub(super) ks: CKernels<'a>,
    pub(super) eta: &'a [f64],
    pub(super) labels: &'a [u32],
    pub(super) graphs: (CsrOut<'a>, CsrOut<'a>),
    pub(super) work: &'a mut [u8],
}

/// The body of `mvnmf_dist_tge` (`ann`: None) and `mvnmf_dist_tge_approx`
/// ([`run_shell`] with `dist::refuse_tge`): reads their inputs in their order
/// — `exchange` and both edge counts required, the options, the views,
/// kernels, weights, labels, the two graphs' buffers (`n_r + 1` rows, `n_r`
/// the views' columns) and the workspace —, runs `build` on them and writes
/// the edge counts and the traffic.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn run_tge(
    comm: *const mvnmf_dist_comm,
    (views, n_views): (*const mvnmf_view, usize),
    (kernels, eta): (*const mvnmf_kernel, *const f64),
    (labels, n): (*const u32, usize),
    (params, ann): (*const mvnmf_graph_params, Option<*const mvnmf_ann_params>),
    graphs: [*const mvnmf_csr_buffers; 2],
    nnz: [*mut usize; 2],
    (work, work_bytes): (*mut c_void, usize),
    traffic: *mut GraphTraffic,
    build: impl FnOnce(&mut CComm, TgeIn<'_>) -> Result<dist::DistGraphReport, Error>,
) -> mvnmf_status {
    let read = |cm: &CComm| {
        c_unsafe!({
            if cm.ex.is_none() || nnz.iter().any(|p| p.is_null()) {
                return Err(Error::NullPointer);
            }
            let p = read_graph(params)?;
            let ann = ann.map(|a| read_ann(a)).transpose()?;
            let vs = CViews::new(views, n_views)?;
            let ks = ckernels(kernels, n_views)?;
            let eta = ceta(eta, n_views)?;
            let labels = clabels(labels, n, p.kp > 0 || any_median(&ks))?;
            let n_r = vs.shape(0).cols;
            let graphs = (csr_out(graphs[0], n_r)?, csr_out(graphs[1], n_r)?);
            let work = work_of(work, work_bytes)?;
            Ok(TgeIn {
                p,
                ann,
                vs,
                ks,
                eta,
                labels,
                graphs,
                work,
            })
        })
    };
    c_unsafe! {
        run_shell(
            comm,
            dist::refuse_tge,
            |cm| Ok(build(cm, read(cm)?)),
            |r| {
                let [affinity_nnz, penalty_nnz] = nnz;
                *affinity_nnz = r.nnz.affinity;
                *penalty_nnz = r.nnz.penalty;
                put_opt(traffic, r.traffic);
                Ok(mvnmf_status::Ok)
            },
        )
    }
}

export! {
    /// Capacities (`col_idx` / `weights` lengths) that always hold one rank's rows
    /// of `mvnmf_dist_tge`'s graphs, for `n_r` of the `n` items: affinity
    /// `min(4·ka·n_r + 2·ka·(n − n_r), n_r·(n − 1))` (the rank's lists and every
    /// other item naming one of its items), penalty `min(2·n_classes·kp, n_r·(n −
    /// 1))` (class pairs) or `min(2·kp·n_r + kp·(n − n_r), n_r·(n − 1))` (item
    /// neighbours).
    fn mvnmf_dist_tge_capacity(
        n, n_r, n_classes: usize,
        params: *const mvnmf_graph_params,
        affinity_capacity, penalty_capacity: *mut usize = "one `size_t`",
    ) {
        write_capacity(params, affinity_capacity, penalty_capacity, |p| {
            dist::tge_capacity(n, n_r, n_classes, p)
        })
    };

    /// TGE's graphs (`mvnmf_tge`) built across ranks: every rank calls it at the
    /// same time with its `comm` (`exchange` required; `allgather` recommended),
    /// its items — `views[v]` the columns `offset_r .. offset_r + n_r` of view `v`,
    /// dense, the ranks' ranges following each other in rank order — and the same
    /// `kernels`, `eta`, `labels` (all `n` items; NULL as `mvnmf_tge` allows it:
    /// `kp = 0` and no median bandwidth), `n_classes`, `params`. `affinity` and
    /// `penalty` (`row_ptr` of `n_r + 1` entries) receive the rank's rows of the
    /// graphs `mvnmf_tge` builds over all `n` items, exactly (row pointers from 0,
    /// global column indices sorted per row, the same weights): pass them to
    /// `mvnmf_dist_mvsl_fit` as `MVNMF_GRAPH_CSR` with `n = n_r`. Capacities:
    /// `mvnmf_dist_tge_capacity`. `affinity_nnz`, `penalty_nnz` and `traffic` (may
    /// be NULL) are written on success.
    ///
    /// Each rank evaluates the fused kernel over the blocks of the single
    /// process's grid that hold one of its items, the other blocks' columns
    /// streamed to it (`allgather`), the labeled columns gathered for a median
    /// bandwidth, the class-pair lists merged, the list edges to other ranks'
    /// items sent to them (`exchange`). Errors as `mvnmf_tge`, before anything is
    /// written and on every rank alike (a rank's own error there, the others
    /// `MVNMF_STATUS_PEER_FAILED`), views that are not dense
    /// (`MVNMF_STATUS_BAD_PARAMETER`), shards that do not add up to `n`
    /// (`MVNMF_STATUS_DIMENSION_MISMATCH`), a capacity too small
    /// (`MVNMF_STATUS_BUFFER_TOO_SHORT` on that rank, found after the search),
    /// a callback that fails or does not deliver on one rank
    /// (`MVNMF_STATUS_COMM_FAILED` there, `MVNMF_STATUS_PEER_FAILED` on the
    /// others, nothing written; see `mvnmf_allreduce_fn`), edge counts received
    /// that do not add up over the ranks (`MVNMF_STATUS_COMM_FAILED` on every
    /// rank). Every rank returns after the same call.
    fn mvnmf_dist_tge(
        comm: *const mvnmf_dist_comm,
        views: *const V = "`n_views`",
        n_views: usize,
        kernels: *const mvnmf_kernel = "`n_views` kernels",
        eta: *const f64 = "`n_views` doubles",
        labels: *const u32 = "`n` labels",
        n, n_classes: usize,
        params: *const mvnmf_graph_params,
        affinity, penalty: *const mvnmf_csr_buffers = "one struct whose buffers hold its capacity",
        affinity_nnz, penalty_nnz: *mut usize = "one `size_t`",
        ..work(work, work_bytes),
        traffic: *mut GraphTraffic = "one struct",
    ) {
        Ok(run_tge(comm, (views, n_views), (kernels, eta), (labels, n), (params, None),
            [affinity, penalty], [affinity_nnz, penalty_nnz], (work, work_bytes), traffic,
            |cm, t| {
                let ((a, q), (vs, ks)) = (t.graphs, (&t.vs, &t.ks));
                dist::tge(cm, vs, ks, t.eta, t.labels, n, n_classes, &t.p, a, q, t.work)
            }))
    }
    /// on a rank whose views (its items,
    /// dense) have these shapes, for `n` items over `n_ranks ≥ 1` ranks with these
    /// labels (all `n` items, or NULL as `mvnmf_dist_tge` allows;
    /// `MVNMF_STATUS_BAD_PARAMETER` for 0 ranks, as the call).
    workspace mvnmf_dist_tge_workspace(
        views: *const V = "`n_views`",
        n_views: usize,
        kernels: *const mvnmf_kernel = "`n_views` kernels",
        labels: *const u32 = "`n` labels",
        n, n_classes, n_ranks: usize,
        params: *const mvnmf_graph_params,
    ) {
        let p = read_graph(params)?;
        let ks = ckernels(kernels, n_views)?;
        let lab = clabels(labels, n, p.kp > 0 || any_median(&ks))?;
        dist::tge_workspace(shapes(views, n_views)?, &ks, n, lab, n_classes, n_ranks, &p)
    };
}
