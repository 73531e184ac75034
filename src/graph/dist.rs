//! The distributed schedule of the neighbour-graph engine (`super::neighbors`:
//! its request checked by the same `Request::check`, the same block evaluator
//! and heaps): the TGE / kNN graph built across ranks (issue 19, item 2),
//! below the models, through the base layer's communicator
//! ([`crate::comm`]; `models::dist` re-exports it). Each rank finds
//! the neighbours of its own items against all items, with the other ranks'
//! columns streamed to it one block at a time, and returns its rows of the
//! graphs [`crate::graph::tge()`] builds over all items — the same rows, bit for
//! bit (same neighbours, same order of ties, same weights).
//!
//! **Partition.** As in the distributed fit (`models::dist`): rank `r` holds
//! the columns `offset_r .. offset_r + N_r` of every view (dense), the ranks'
//! ranges following each other in rank order. The labels are those of all `N`
//! items on every rank (4 bytes per item, or none at all), so that every rank
//! knows the class of every candidate and the class counts.
//!
//! **Why the same graph.** The single-process builder evaluates the fused
//! kernel over the blocks `(I, J)`, `I ≤ J`, of a fixed grid of `b` items
//! (`b = block_size(params.block, N)`), and a neighbour list is the top `ka` of
//! a strict total order (larger kernel, then lower index), whatever order the
//! candidates come in. Here rank `r` evaluates every block `(I, J)` of the same
//! grid in which `I` or `J` holds one of its items, with the same rows and
//! columns, so the GEMM (whose sums could depend on the block's shape) sees the
//! same operands and gives the same bits; it offers each value to its own
//! items' lists only. Each view's magnitude factor `2^−e` (the engine's
//! scaling of far-from-one data) comes from the largest value over all ranks.
//! A pair between two other ranks' items never enters a list, so the other
//! items of a block shared with a neighbour rank may be zero placeholders until
//! that block has been streamed.
//!
//! * **Median bandwidth** (RBF views with `Bandwidth::Median`): the exact lower
//!   median over the labeled pairs needs every labeled item of the view; the
//!   labeled columns are gathered on every rank (`N_l · M_v` words, once per
//!   such view) and the single-process selection runs on them, over the same
//!   blocks of the labeled items (in class order): the same `γ`, bit for bit.
//! * **Penalty** ([`Penalty::ClassPairs`]): each rank keeps the `kp` best pairs
//!   per class among those it sees, the lists are gathered (`3·C·kp` words per
//!   rank) and merged (the same pair seen by two ranks has the same bits);
//!   [`Penalty::ItemNeighbors`]: per-item lists, as the affinity.
//! * **Symmetrisation**: an edge `i → j` of a list (`j` in `i`'s list) is an
//!   entry of row `i` and of row `j`; when `j` belongs to another rank the
//!   pair is sent to it (`MPI_Alltoallv`, 2 words per edge, after one word per
//!   rank pair with the counts).
//!
//! **Communication per rank** (8-byte words; `S = Σ_v M_v`, `P` ranks, `H`
//! views; [`traffic_model`] computes it, [`GraphTraffic`] counts it):
//!
//! ```text
//! allgather  N/b calls: sends N_r·S, receives N·S             (the streamed columns)
//!            + per median view: sends N_l,r·M_v, receives N_l·M_v
//!            + class pairs: sends 3·C·kp, receives 3·P·C·kp
//! allreduce  7 calls, CONFIG + P·(H + 1) + 16 words: the configuration and
//!            its vote, the largest values and items and their vote, the edges
//!            sent and received over all ranks (2 words) and their vote, the
//!            closing agreement; each call carries 2 status words
//!            (`crate::comm::protocol`)
//! exchange   P (edge counts) + 2·edges_sent
//! ```
//!
//! **Agreement.** As the distributed fit's (`crate::comm::protocol`): the item
//! counts (which size every later call), the edge counts (which size the
//! edges' exchange: each a whole number within the receive buffer, as many
//! edges received over all ranks as sent, or `CommFailed` on every rank) are
//! agreed before they are used; an edge received that is not a pair of items
//! of this rank and of the graph fails this rank; the closing agreement
//! decides whether every rank writes its rows or none does.
//!
//! **Memory per rank**: the rank's views (the caller's), at most four blocks
//! of `b` items' columns (the evaluated pair, a block shared with the previous
//! rank, the rank's part of the streamed block: `4·b·S` words), the block evaluator (`O(b·(b + S))`), the rank's neighbour
//! lists (`N_r·(2·ka + kp)`), the labels and the labeled items' class index
//! (`O(N_l)` indices), with a median view its `N_l · M_v` labeled columns, and
//! the edges received from other ranks (in the worst case, every item of the
//! other ranks names this rank's items: `(N − N_r)·(2·ka + kp)` pairs, the
//! bound [`tge_capacity`] and [`tge_workspace`] reserve).
//!
//! **Work per rank**: the blocks with one of its items, about `N·N_r/b²` of the
//! single process's `N²/(2b²)`: the pairs between two ranks are evaluated by
//! both (the single process evaluates each pair once).

use crate::comm::protocol::{agree, refuse_as, whole, Counted, MAX_CONFIG, STATUS};
use crate::comm::Comm;
use crate::data::{Dense, View, ViewKind, ViewSet, ViewShape};
use crate::error::{Error, Part};
use crate::graph::build::{add_pairs, check_counts, Assembler, PenaltyTop};
use crate::graph::neighbors::{Checked, Request};
use crate::graph::GraphBuild;
use crate::graph::{CsrOut, GraphNnz, GraphParams, Penalty};
use crate::similarity::engine::{self, view_inv_scale, view_max, Block, Engine, Mode, Sink};
use crate::similarity::topk::{Filter, PairTop, TopK, NO_NEIGHBOR};
use crate::similarity::AnnParams;
use crate::similarity::{self, class_of, median, Bandwidth, ClassIndex, Kernel, KernelSet};
use crate::work::{Stack, WorkReq};

/// Words of the configuration rank 0 broadcasts before the build.
const CONFIG: usize = 13;
const _: () = assert!(CONFIG <= MAX_CONFIG);

/// What one rank passed to its communicator while `tge` built the graph
/// (8-byte words; the model: `docs/mpi.md`).
// `repr(C)`: the C ABI's `mvnmf_dist_graph_traffic` (renamed in cbindgen.toml), these docs
// included: a change here changes the C ABI.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GraphTraffic {
    /// Allreduce calls.
    pub allreduce_calls: u64,
    /// Words passed to them.
    pub allreduce_words: u64,
    /// All-gather calls (counted at the library's side: with no `allgather`
    /// callback each one is an allreduce of the gathered length).
    pub allgather_calls: u64,
    /// Words this rank contributed to them.
    pub allgather_sent: u64,
    /// Words it received from them (its own part included).
    pub allgather_received: u64,
    /// Exchange calls.
    pub exchange_calls: u64,
    /// Words this rank sent through them.
    pub exchange_sent: u64,
    /// Neighbour-list edges `i → j` from this rank's items to other ranks'
    /// (sent to `j`'s rank, 2 words each).
    pub edges_sent: u64,
    /// Such edges received from other ranks.
    pub edges_received: u64,
}

/// The result of [`tge()`](fn@tge) on one rank.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DistGraphReport {
    /// Entries of the rank's rows of each graph.
    pub nnz: GraphNnz,
    /// What the rank communicated.
    pub traffic: GraphTraffic,
}

/// The communication model of [`tge()`](fn@tge) (module docs) for a rank with
/// `n_r` of the `n` items, views with `sum_rows = Σ_v M_v` features over
/// `n_views` views, `ranks` ranks, `n_labeled` labeled items of which
/// `n_labeled_r` on this rank, `median_views` RBF views with the median
/// bandwidth totalling `median_rows` features, and `edges_sent` /
/// `edges_received` cross edges (data-dependent: [`GraphTraffic`] reports them).
#[allow(clippy::too_many_arguments)]
pub fn traffic_model(
    (n, n_r): (usize, usize),
    (sum_rows, n_views): (usize, usize),
    ranks: usize,
    (n_labeled, n_labeled_r): (usize, usize),
    (median_rows, median_views): (usize, usize),
    n_classes: usize,
    params: &GraphParams,
    (edges_sent, edges_received): (u64, u64),
) -> GraphTraffic {
    let w = |x: usize| x as u64;
    let b = similarity::block_size(params.block, n);
    let pairs = params.kp > 0 && params.penalty == Penalty::ClassPairs;
    let pair_words = if pairs {
        3 * w(n_classes) * w(params.kp)
    } else {
        0
    };
    GraphTraffic {
        allreduce_calls: 7,
        allreduce_words: w(CONFIG) + w(ranks) * (w(n_views) + 1) + 16,
        allgather_calls: w(median_views) + w(n.div_ceil(b)) + pairs as u64,
        allgather_sent: w(n_labeled_r) * w(median_rows) + w(n_r) * w(sum_rows) + pair_words,
        allgather_received: w(n_labeled) * w(median_rows)
            + w(n) * w(sum_rows)
            + w(ranks) * pair_words,
        exchange_calls: 2,
        exchange_sent: w(ranks) + 2 * edges_sent,
        edges_sent,
        edges_received,
    }
}

/// The traffic `cm` counted, with the edges this rank sent and received.
fn counted_traffic<C: Comm + ?Sized>(
    cm: &Counted<'_, C>,
    (edges_sent, edges_received): (u64, u64),
) -> GraphTraffic {
    GraphTraffic {
        allreduce_calls: cm.calls,
        allreduce_words: cm.words,
        allgather_calls: cm.ag_calls,
        allgather_sent: cm.ag_sent,
        allgather_received: cm.ag_received,
        exchange_calls: cm.ex_calls,
        exchange_sent: cm.ex_words,
        edges_sent,
        edges_received,
    }
}

fn mul(a: usize, b: usize) -> Result<usize, Error> {
    a.checked_mul(b).ok_or(Error::SizeOverflow)
}

fn add(a: usize, b: usize) -> Result<usize, Error> {
    a.checked_add(b).ok_or(Error::SizeOverflow)
}

/// Neighbour-list edges per item: affinity (`ka` global, `ka` same-class), penalty.
fn per_item(params: &GraphParams) -> (usize, usize) {
    let pi = if params.kp > 0 && params.penalty == Penalty::ItemNeighbors {
        params.kp
    } else {
        0
    };
    (2 * params.ka, pi)
}

/// Most entries of a rank's rows of TGE's graphs, for `n_r` of the `n` items:
/// affinity `min(4·ka·N_r + 2·ka·(N − N_r), N_r·(N − 1))` (the rank's own lists,
/// symmetrised, and every other item naming one of its items); penalty
/// `min(2·C·kp, N_r·(N − 1))` (class pairs) or `min(2·kp·N_r + kp·(N − N_r),
/// N_r·(N − 1))` (item neighbours).
pub fn tge_capacity(
    n: usize,
    n_r: usize,
    n_classes: usize,
    params: &GraphParams,
) -> Result<GraphNnz, Error> {
    if n_r > n {
        return Err(Error::DimensionMismatch);
    }
    let all = mul(n_r, n.saturating_sub(1))?;
    let (ka2, pi) = per_item(params);
    let rest = n - n_r;
    let affinity = add(mul(2 * ka2, n_r)?, mul(ka2, rest)?)?.min(all);
    let penalty = if params.kp == 0 {
        0
    } else if params.penalty == Penalty::ClassPairs {
        mul(mul(2, n_classes)?, params.kp)?.min(all)
    } else {
        add(mul(2 * pi, n_r)?, mul(pi, rest)?)?.min(all)
    };
    Ok(GraphNnz { affinity, penalty })
}

/// The views' shapes as the block window holds them: `items` columns each.
fn window_shapes(
    shapes: impl IntoIterator<Item = ViewShape>,
    items: usize,
) -> impl Iterator<Item = ViewShape> {
    shapes.into_iter().map(move |s| ViewShape {
        rows: s.rows,
        cols: items,
        kind: ViewKind::Dense,
        nnz: 0,
    })
}

/// Labeled items in total and in `a .. e`.
fn labeled_in(labels: &[u32], a: usize, e: usize) -> (usize, usize) {
    let lab = |j: &usize| class_of(labels, *j).is_some();
    (
        (0..labels.len()).filter(lab).count(),
        (a..e.min(labels.len())).filter(lab).count(),
    )
}

#[allow(clippy::too_many_arguments)]
fn tge_req<KS: KernelSet + ?Sized>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    kernels: &KS,
    n: usize,
    n_labeled: usize,
    n_classes: usize,
    ranks: usize,
    params: &GraphParams,
) -> Result<WorkReq, Error> {
    let lay = similarity::layout(shapes.clone(), kernels)?;
    let (h, n_r) = (lay.h, lay.n);
    if n_r > n {
        return Err(Error::DimensionMismatch);
    }
    let b = similarity::block_size(params.block, n);
    let s = shapes
        .clone()
        .into_iter()
        .try_fold(0usize, |a, x| a.checked_add(x.rows))
        .ok_or(Error::SizeOverflow)?;
    let mmed = (0..h)
        .zip(shapes.clone())
        .filter(|(v, _)| kernels.kernel(*v).is_median())
        .map(|(_, x)| x.rows)
        .max()
        .unwrap_or(0);
    let (ka, kp, c) = (params.ka, params.kp, n_classes);
    let (ka2, pi) = per_item(params);
    let pairs = kp > 0 && params.penalty == Penalty::ClassPairs;
    let cap = tge_capacity(n, n_r, n_classes, params)?;
    let persistent = WorkReq::all_of(&[
        WorkReq::new::<usize>(h),
        WorkReq::new::<f64>(h),
        WorkReq::new::<f64>(h),
        WorkReq::new::<usize>(add(ranks, 1)?),
        WorkReq::new::<usize>(ranks),
        ClassIndex::workspace(n_labeled, n_classes),
        TopK::workspace(n_r, ka),
        TopK::workspace(n_r, ka),
        if kp == 0 {
            WorkReq::EMPTY
        } else if pairs {
            PairTop::workspace(c, kp)
        } else {
            TopK::workspace(n_r, kp)
        },
    ]);
    // The shards' set-up (`shards`): the sums, and this rank's maxima as sent.
    let setup = WorkReq::new::<f64>(add(add(mul(ranks, add(h, 1)?)?, STATUS)?, h)?);
    let median = if lay.median {
        let l1 = similarity::layout(
            [ViewShape {
                rows: mmed,
                cols: n_labeled,
                kind: ViewKind::Dense,
                nnz: 0,
            }],
            &[Kernel::Rbf(Bandwidth::Median)],
        )?;
        WorkReq::all_of(&[
            WorkReq::new::<usize>(n_labeled),
            WorkReq::new::<usize>(n_labeled),
            WorkReq::matrix::<f64>(mmed, n_labeled.min(n_r)),
            WorkReq::matrix::<f64>(mmed, n_labeled),
            median::scratch_req(&l1),
            WorkReq::matrix::<f64>(b, b),
            engine::workspace::<f64>(&l1, b),
        ])
    } else {
        WorkReq::EMPTY
    };
    let wl = similarity::layout(window_shapes(shapes, 2 * b), kernels)?;
    let stream = WorkReq::all_of(&[
        WorkReq::matrix::<f64>(mul(2, b)?, s),
        WorkReq::matrix::<f64>(b, s),
        WorkReq::matrix::<f64>(b.min(n_r), s),
        WorkReq::matrix::<usize>(b, 4),
        WorkReq::matrix::<f64>(b, b),
        engine::workspace::<f64>(&wl, b),
    ]);
    let pw = mul(mul(3, c)?, kp)?;
    let merge = if pairs {
        WorkReq::all_of(&[
            PairTop::workspace(c, kp),
            WorkReq::new::<f64>(pw),
            WorkReq::new::<f64>(mul(ranks, pw)?),
        ])
    } else {
        WorkReq::EMPTY
    };
    let per = add(ka2, pi)?;
    let symm = WorkReq::all_of(&[
        WorkReq::matrix::<usize>(ranks, 4),
        WorkReq::matrix::<f64>(ranks, 2),
        WorkReq::matrix::<f64>(mul(per, n_r)?, 2),
        WorkReq::matrix::<f64>(mul(per, n - n_r)?, 2),
        Assembler::workspace_slots(n_r, cap.affinity.max(mul(2 * ka2, n_r)?)),
        Assembler::workspace_slots(n_r, cap.penalty.max(mul(2 * pi, n_r)?)),
    ]);
    Ok(WorkReq::all_of(&[
        persistent,
        merge,
        WorkReq::any_of(&[setup, median, stream, symm]),
    ]))
}

/// Workspace bytes of [`tge()`](fn@tge) on a rank whose views (its `N_r` items,
/// dense) have these shapes, for `n` items over `ranks` ranks, `labels` of all
/// `n` items (or empty: none labeled), `n_classes` classes.
pub fn tge_workspace<KS: KernelSet + ?Sized>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    kernels: &KS,
    n: usize,
    labels: &[u32],
    n_classes: usize,
    ranks: usize,
    params: &GraphParams,
) -> Result<usize, Error> {
    params.validate()?;
    if ranks == 0 {
        return Err(Error::BadParameter);
    }
    let nl = similarity::check_labels(labels, n, n_classes)?;
    tge_req(shapes, kernels, n, nl, n_classes, ranks, params)?.bytes()
}

/// Items' columns stored item after item (`S = Σ_v M_v` values each, view `v`'s
/// column at `Σ_{u<v} M_u`): `H` dense views with column stride `S`.
struct Window<'b> {
    buf: &'b [f64],
    rows: &'b [usize],
    items: usize,
    stride: usize,
}

impl ViewSet<f64> for Window<'_> {
    fn count(&self) -> usize {
        self.rows.len()
    }
    fn view(&self, v: usize) -> View<'_, f64> {
        // Past the views or the buffer (never): an empty view.
        let off: usize = self.rows.iter().take(v).sum();
        let (buf, rows) = (self.buf.get(off..), self.rows.get(v));
        let (Some(buf), Some(&rows)) = (buf, rows) else {
            return View::Dense(Dense::from_validated(&[], 0, 0, 0));
        };
        View::Dense(Dense::from_validated(buf, rows, self.items, self.stride))
    }
}

/// A 64-bit FNV-1a hash of the inputs every rank must share bitwise.
struct Fnv(u64);

impl Fnv {
    fn add(&mut self, x: u64) {
        for b in x.to_le_bytes() {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// Shapes and options every rank must share (compared bitwise with rank 0's):
/// scalars, and a hash of the labels, `η`, the kernels and the row counts.
#[allow(clippy::too_many_arguments)]
fn config<VS: ViewSet<f64> + ?Sized, KS: KernelSet + ?Sized>(
    views: &VS,
    kernels: &KS,
    eta: &[f64],
    labels: &[u32],
    n: usize,
    n_classes: usize,
    params: &GraphParams,
    ranks: usize,
) -> [f64; CONFIG] {
    let h = views.count();
    let mut f = Fnv(0xcbf2_9ce4_8422_2325);
    let (mut rows, mut weighted) = (0.0, 0.0);
    for v in 0..h {
        let m = views.shape(v).rows;
        rows += m as f64;
        weighted += (v + 1) as f64 * m as f64;
        f.add(m as u64);
    }
    for v in 0..kernels.count() {
        let (code, g) = match kernels.kernel(v) {
            Kernel::Linear => (0, 0.0),
            Kernel::Rbf(Bandwidth::Gamma(g)) => (1, g),
            Kernel::Rbf(Bandwidth::Median) => (2, 0.0),
            Kernel::ChiSquared => (3, 0.0),
            Kernel::Intersection => (4, 0.0),
        };
        f.add(code);
        f.add(g.to_bits());
    }
    eta.iter().for_each(|e| f.add(e.to_bits()));
    f.add(labels.len() as u64);
    labels.iter().for_each(|&l| f.add(l as u64));
    let penalty = match params.penalty {
        Penalty::ClassPairs => 0.0,
        Penalty::ItemNeighbors => 1.0,
    };
    [
        n as f64,
        h as f64,
        rows,
        weighted,
        n_classes as f64,
        params.ka as f64,
        params.kp as f64,
        penalty,
        params.sigma,
        params.block as f64,
        ranks as f64,
        (f.0 & 0xffff_ffff) as f64,
        (f.0 >> 32) as f64,
    ]
}

/// Takes part in [`tge()`](fn@tge)'s agreement with an error found before it
/// could be called (a C argument that cannot be read): the other ranks return
/// [`Error::PeerFailed`], this one `e` (`models::dist::refuse` for the fit).
pub fn refuse<C: Comm + ?Sized>(comm: &mut C, e: Error) -> Error {
    refuse_as::<C, CONFIG>(comm, e)
}

/// The checks of one rank's inputs, before anything is communicated:
/// returns the number of labeled items.
#[allow(clippy::too_many_arguments)]
fn check<VS: ViewSet<f64> + ?Sized, KS: KernelSet + ?Sized>(
    views: &VS,
    kernels: &KS,
    eta: &[f64],
    labels: &[u32],
    n: usize,
    n_classes: usize,
    params: &GraphParams,
    affinity: &CsrOut<'_>,
    penalty: &CsrOut<'_>,
    ranks: usize,
    work: &mut [u8],
) -> Result<(), Error> {
    let request = Request {
        views,
        kernels,
        eta,
        labels,
        n_classes,
        params,
        items: Some(n),
    };
    let Checked { lay, nl, .. } = request.check::<f64>(affinity, penalty)?;
    let shapes = (0..lay.h).map(|v| views.shape(v));
    let need = tge_req(shapes, kernels, n, nl, n_classes, ranks, params)?.bytes()?;
    if work.len() < need {
        return Err(Error::WorkspaceTooSmall);
    }
    let mut st = Stack::new(work);
    let ci = ClassIndex::new(labels, nl, n_classes, &mut st)?;
    check_counts(&ci, params)
}
/// The set-up both schedules share: every rank's largest value per view and
/// its item count, summed over the ranks. Sets `off` (the shards' first items,
/// `ranks + 1` entries) and `inv` (each view's scale over all ranks). The
/// shards' sizes set every later call's lengths, so they are agreed first: each
/// count a whole number, this rank's own as it sent it, and `N` in all; and
/// this rank's largest values come back as sent (anything else was not what
/// the ranks sent, issue 31).
fn shards<C: Comm + ?Sized, VS: ViewSet<f64> + ?Sized>(
    cm: &mut Counted<'_, C>,
    views: &VS,
    (n, n_r): (usize, usize),
    mut ph: Stack<'_>,
    off: &mut [usize],
    inv: &mut [f64],
) -> Result<(), Error> {
    let (rank, ranks, h) = (cm.comm.rank(), cm.comm.ranks(), inv.len());
    // `su`: `ranks × h` largest values, then the `ranks` item counts.
    let su: &mut [f64] = ph.take(ranks * (h + 1) + STATUS)?;
    su.fill(0.0);
    let mine = rank * h..(rank + 1) * h;
    for (v, x) in su.part_mut(mine.clone())?.iter_mut().enumerate() {
        *x = view_max(views.view(v));
    }
    *su.at_mut(ranks * h + rank)? = n_r as f64;
    let sent: &mut [f64] = ph.take(h)?;
    sent.copy_checked(su.part(mine.clone())?)?;
    cm.sum(su)?;
    let su = su.part(..ranks * (h + 1))?;
    let (maxes, items) = su.split_at_checked(ranks * h).ok_or(Error::Internal)?;
    let mut o = 0usize;
    *off.at_mut(0)? = 0;
    for (x, &nq) in off.iter_mut().skip(1).zip(items) {
        o = o.saturating_add(nq as usize);
        *x = o;
    }
    let as_sent = items.iter().all(|&x| whole(x))
        && items.get(rank) == Some(&(n_r as f64))
        && maxes.get(mine) == Some(&*sent);
    cm.checkpoint(if !as_sent {
        Err(Error::CommFailed)
    } else if off.at(ranks)? != n {
        Err(Error::DimensionMismatch)
    } else {
        Ok(())
    })?;
    for (v, x) in inv.iter_mut().enumerate() {
        let big = maxes.iter().skip(v).step_by(h.max(1)).take(ranks);
        *x = view_inv_scale(big.fold(0.0f64, |m, &y| m.max(y)));
    }
    Ok(())
}

/// The rank of item `j` (`off`: `ranks + 1` offsets).
fn owner(off: &[usize], j: usize) -> usize {
    off.partition_point(|&o| o <= j).saturating_sub(1)
}

/// Items of `lo .. hi` in each rank's range, times `per`, into `counts`.
fn counts_in(off: &[usize], lo: usize, hi: usize, per: usize, counts: &mut [usize]) {
    for (c, w) in counts.iter_mut().zip(off.windows(2)) {
        let &[o0, o1] = w else { continue };
        let (a, e) = (o0.max(lo), o1.min(hi));
        *c = e.saturating_sub(a) * per;
    }
}

/// Copies item `i`'s columns (`i` of this rank, local column `i − a`) into
/// `dst` (`S` values, views one after the other).
fn copy_item<VS: ViewSet<f64> + ?Sized>(views: &VS, col: usize, dst: &mut [f64]) {
    let mut o = 0;
    for v in 0..views.count() {
        if let View::Dense(d) = views.view(v) {
            let c = d.col(col);
            if let Some(x) = dst.get_mut(o..o + c.len()) {
                x.copy_from_slice(c);
            }
            o += c.len();
        }
    }
}

/// TGE's affinity and penalty graphs ([`crate::graph::tge()`]) across ranks:
/// this rank's rows of the graphs over all `n` items, the same as the
/// single-process builder's rows `offset_r .. offset_r + N_r` (module docs).
///
/// Every rank calls it at the same time with its `comm`, its `views` (the
/// columns `offset_r .. offset_r + N_r` of every view, dense; `N_r ≥ 1`), the
/// same `kernels`, `eta`, `labels` (all `n` items, or empty when `kp = 0` and no
/// view uses the median bandwidth), `n_classes`, `params`. `affinity` and
/// `penalty` receive the rank's `N_r` rows (`row_ptr` of `N_r + 1` entries from
/// 0, global column indices sorted per row), the format
/// `models::dist::DistGraph::Csr` takes; capacities from [`tge_capacity`].
///
/// Errors, before anything is written, on every rank alike: a rank's own
/// input as [`crate::graph::tge()`] refuses it (and views not dense,
/// [`Error::BadParameter`]), that rank its status and the others
/// [`Error::PeerFailed`] (as the distributed fit, with the outputs of every
/// rank untouched); shards whose sizes do not add up to `n`
/// ([`Error::DimensionMismatch`] on every rank); a capacity too small for the
/// rank's rows ([`Error::BufferTooShort`] on that rank, found after the search,
/// [`Error::PeerFailed`] on the others, every output untouched); a callback
/// that fails or delivers what its peers did not send ([`Error::CommFailed`]
/// on that rank, [`Error::PeerFailed`] on the others, every output untouched;
/// counts that do not add up over the ranks: [`Error::CommFailed`] on every
/// rank). Every rank leaves after the same call.
#[allow(clippy::too_many_arguments)]
pub fn tge<C: Comm + ?Sized, VS: ViewSet<f64> + ?Sized, KS: KernelSet + ?Sized>(
    comm: &mut C,
    views: &VS,
    kernels: &KS,
    eta: &[f64],
    labels: &[u32],
    n: usize,
    n_classes: usize,
    params: &GraphParams,
    affinity: CsrOut<'_>,
    penalty: CsrOut<'_>,
    work: &mut [u8],
) -> Result<DistGraphReport, Error> {
    let (rank, ranks) = (comm.rank(), comm.ranks());
    if ranks == 0 || rank >= ranks {
        return Err(Error::BadParameter);
    }
    let mut cm = Counted::new(comm);
    let local = check(
        views, kernels, eta, labels, n, n_classes, params, &affinity, &penalty, ranks, work,
    );
    let cfg = config(views, kernels, eta, labels, n, n_classes, params, ranks);
    agree(&mut cm, &cfg, local)?;
    let r = tge_body(
        &mut cm, views, kernels, eta, labels, n, n_classes, params, affinity, penalty, work,
    );
    match r {
        // An error of this rank's alone, before the closing agreement.
        Err(e) if !cm.left => cm.settle(Err(e), &mut [0.0; STATUS]),
        r => r,
    }
}

/// [`tge()`](fn@tge) after the agreement on the inputs, the closing agreement
/// included (an `Err` before it that is not agreed is this rank's alone).
#[allow(clippy::too_many_arguments)]
fn tge_body<C: Comm + ?Sized, VS: ViewSet<f64> + ?Sized, KS: KernelSet + ?Sized>(
    cm: &mut Counted<'_, C>,
    views: &VS,
    kernels: &KS,
    eta: &[f64],
    labels: &[u32],
    n: usize,
    n_classes: usize,
    params: &GraphParams,
    affinity: CsrOut<'_>,
    penalty: CsrOut<'_>,
    work: &mut [u8],
) -> Result<DistGraphReport, Error> {
    let (rank, ranks) = (cm.comm.rank(), cm.comm.ranks());

    let lay = similarity::layout((0..views.count()).map(|v| views.shape(v)), kernels)?;
    let (h, n_r) = (lay.h, lay.n);
    let nl = similarity::check_labels(labels, n, n_classes)?;
    let b = similarity::block_size(params.block, n);
    let (ka, kp) = (params.ka, params.kp);
    let pairs = kp > 0 && params.penalty == Penalty::ClassPairs;
    let mut st = Stack::new(work);
    let rows: &mut [usize] = st.take(h)?;
    for (v, r) in rows.iter_mut().enumerate() {
        *r = views.shape(v).rows;
    }
    let s: usize = rows.iter().sum();
    let inv: &mut [f64] = st.take(h)?;
    let gam: &mut [f64] = st.take(h)?;
    let off: &mut [usize] = st.take(ranks + 1)?;
    let counts: &mut [usize] = st.take(ranks)?;
    let ci = ClassIndex::new(labels, nl, n_classes, &mut st)?;

    // Set-up: every rank's largest value per view and its items.
    shards(cm, views, (n, n_r), st.rest(), off, inv)?;
    let (a, e) = (off.at(rank)?, off.at(rank + 1)?);

    // The median bandwidths: the labeled columns of each such view on every
    // rank, and the single-process selection over the same blocks.
    gam.fill(f64::NAN);
    for v in (0..h).filter(|&v| kernels.kernel(v).is_median()) {
        let mut ph = st.rest();
        let m = rows.at(v)?;
        let sorted: &mut [usize] = ph.take(nl)?;
        let labeled = (0..n).filter(|&j| class_of(labels, j).is_some());
        for (x, j) in sorted.iter_mut().zip(labeled) {
            *x = j;
        }
        let pos: &mut [usize] = ph.take(nl)?;
        for (p, &j) in pos.iter_mut().zip(ci.labeled()) {
            *p = sorted.binary_search(&j).map_err(|_| Error::Internal)?;
        }
        let (_, mine) = labeled_in(labels, a, e);
        let part: &mut [f64] = ph.take_matrix(m, mine)?;
        let View::Dense(d) = views.view(v) else {
            return Err(Error::Internal);
        };
        let mine = (a..e).filter(|&j| class_of(labels, j).is_some());
        for (dst, j) in part.chunks_exact_mut(m.max(1)).zip(mine) {
            dst.copy_checked(d.col(j - a))?;
        }
        for (c, w) in counts.iter_mut().zip(off.windows(2)) {
            let &[o0, o1] = w else { continue };
            *c = labeled_in(labels, o0, o1).1 * m;
        }
        let all: &mut [f64] = ph.take_matrix(m, nl)?;
        cm.allgather(part, counts, all)?;
        let one = [Kernel::Rbf(Bandwidth::Median)];
        let win = Window {
            buf: &*all,
            rows: rows.part(v..v + 1)?,
            items: nl,
            stride: m,
        };
        let l1 = similarity::layout([win.shape(0)], &one)?;
        let mut sc = median::Scratch::new(&l1, &mut ph)?;
        let blk: &mut [f64] = ph.take_matrix(b, b)?;
        let mut eng = Engine::new_with(&win, &one, &l1, b, ph, Some(inv.part(v..v + 1)?))?;
        median::resolve(&mut eng, pos, &mut sc, blk)?;
        *gam.at_mut(v)? = eng.gamma.at(0)?;
    }

    // The neighbour lists of this rank's items.
    let (gi, gs) = (st.take_matrix(n_r, ka)?, st.take_matrix(n_r, ka)?);
    let (si, ss) = (st.take_matrix(n_r, ka)?, st.take_matrix(n_r, ka)?);
    let glob = TopK::new_range(ka, a, gi, gs, Filter::Any);
    let same = TopK::new_range(ka, a, si, ss, Filter::Same(labels));
    let pen = if kp == 0 {
        None
    } else if pairs {
        let (lo, hi) = (
            st.take_matrix(n_classes, kp)?,
            st.take_matrix(n_classes, kp)?,
        );
        let sim = st.take_matrix(n_classes, kp)?;
        Some(PenaltyTop::Pairs(
            PairTop::new(kp, labels, lo, hi, sim).restrict(a, n_r),
        ))
    } else {
        let (pi, ps) = (st.take_matrix(n_r, kp)?, st.take_matrix(n_r, kp)?);
        Some(PenaltyTop::Items(TopK::new_range(
            kp,
            a,
            pi,
            ps,
            Filter::Other(labels),
        )))
    };
    let mut sinks = (glob, same, pen);
    let merged = if pairs {
        let (lo, hi) = (
            st.take_matrix(n_classes, kp)?,
            st.take_matrix(n_classes, kp)?,
        );
        let sim = st.take_matrix(n_classes, kp)?;
        Some(PairTop::new(kp, labels, lo, hi, sim))
    } else {
        None
    };

    // The blocks J of the grid, streamed in order; each paired with this
    // rank's blocks I (module docs).
    {
        let mut ph = st.rest();
        let win: &mut [f64] = ph.take_matrix(2 * b, s)?;
        win.fill(0.0);
        let cache: &mut [f64] = ph.take_matrix(b, s)?;
        let part: &mut [f64] = ph.take_matrix(b.min(n_r), s)?;
        let lists: &mut [usize] = ph.take_matrix(b, 4)?;
        let blk: &mut [f64] = ph.take_matrix(b, b)?;
        let wl = similarity::layout(
            window_shapes((0..h).map(|v| views.shape(v)), 2 * b),
            kernels,
        )?;
        let eng_ws = ph.take_rest();
        let nb = n.div_ceil(b);
        let (jlo, jhi) = (a / b, (e - 1) / b);
        let range = |blk_i: usize| (blk_i * b, ((blk_i + 1) * b).min(n));
        let mut cached = false;
        for jb in 0..nb {
            let (j0, j1) = range(jb);
            let nj = j1 - j0;
            // This rank's items of block J, then all of them.
            let (p0, p1) = (a.max(j0), e.min(j1));
            let np = p1.saturating_sub(p0);
            for (dst, i) in part.chunks_exact_mut(s.max(1)).zip(p0..p1) {
                copy_item(views, i - a, dst);
            }
            counts_in(off, j0, j1, s, counts);
            let upper = win.part_mut(b * s..(b + nj) * s)?;
            cm.allgather(part.part(..np * s)?, counts, upper)?;
            if jb == jlo && jlo < jhi {
                cache.part_mut(..nj * s)?.copy_checked(upper)?;
                cached = true;
            }
            let j_mine = (jlo..=jhi).contains(&jb);
            for ib in jlo..=jhi {
                if j_mine && ib > jb {
                    continue;
                }
                let (i0, i1) = range(ib);
                let ni = i1 - i0;
                if ib != jb {
                    // Block I in the window's first half: this rank's items, the
                    // previous rank's part of a shared first block once streamed,
                    // zeros (never paired with an item of this rank) otherwise.
                    for (t, i) in (i0..i1).enumerate() {
                        let dst = win.part_mut(t * s..(t + 1) * s)?;
                        if (a..e).contains(&i) {
                            copy_item(views, i - a, dst);
                        } else if ib == jlo && cached {
                            dst.copy_checked(cache.part(t * s..(t + 1) * s)?)?;
                        } else {
                            dst.fill(0.0);
                        }
                    }
                }
                // Rows: the lower block of the pair, columns the upper (as the
                // single-process traversal), local window columns and items.
                let ((r0, rl), (c0, cl), shape) = if ib == jb {
                    ((j0, b), (j0, b), Block::Diag)
                } else if ib < jb {
                    ((i0, 0), (j0, b), Block::Off)
                } else {
                    ((j0, b), (i0, 0), Block::Off)
                };
                let (nr, nc) = (if ib < jb { ni } else { nj }, if ib < jb { nj } else { ni });
                // `lists`: four lists of `b` (`nr`, `nc ≤ b`).
                let mut parts = lists.chunks_exact_mut(b.max(1));
                let (Some(rloc), Some(cloc), Some(rglob), Some(cglob)) =
                    (parts.next(), parts.next(), parts.next(), parts.next())
                else {
                    return Err(Error::Internal);
                };
                let (rloc, rglob) = (rloc.part_mut(..nr)?, rglob.part_mut(..nr)?);
                let (cloc, cglob) = (cloc.part_mut(..nc)?, cglob.part_mut(..nc)?);
                for (t, (x, y)) in rloc.iter_mut().zip(rglob.iter_mut()).enumerate() {
                    (*x, *y) = (rl + t, r0 + t);
                }
                for (t, (x, y)) in cloc.iter_mut().zip(cglob.iter_mut()).enumerate() {
                    (*x, *y) = (cl + t, c0 + t);
                }
                let view = Window {
                    buf: &*win,
                    rows: &*rows,
                    items: 2 * b,
                    stride: s,
                };
                let mut eng = Engine::new_with(
                    &view,
                    kernels,
                    &wl,
                    b,
                    Stack::new(&mut *eng_ws),
                    Some(&*inv),
                )?;
                for (x, &g) in eng.gamma.iter_mut().zip(gam.iter()) {
                    if !g.is_nan() {
                        *x = g;
                    }
                }
                eng.set_mode(Mode::Fused, Some(eta));
                eng.block(rloc, cloc, blk)?;
                sinks.visit(rglob, cglob, blk, shape);
            }
        }
    }
    let (glob, same, pen) = sinks;

    // Class pairs: every rank's lists, merged.
    let merged = match (&pen, merged) {
        (Some(PenaltyTop::Pairs(mine)), Some(mut m)) => {
            let mut ph = st.rest();
            let pw = 3 * n_classes * kp;
            let part: &mut [f64] = ph.take(pw)?;
            // Class c's `kp` pairs: triples (lo, hi, sim), class after class.
            for (c, pc) in part
                .chunks_exact_mut((3 * kp).max(1))
                .enumerate()
                .take(n_classes)
            {
                let (lo, hi, sim) = mine.get(c);
                let pairs = lo.iter().zip(hi).zip(sim);
                for (o, ((&l, &h), &x)) in pc.chunks_exact_mut(3).zip(pairs) {
                    let none = l == NO_NEIGHBOR;
                    o.copy_checked(&if none {
                        [-1.0, -1.0, 0.0]
                    } else {
                        [l as f64, h as f64, x]
                    })?;
                }
            }
            let all: &mut [f64] = ph.take(ranks * pw)?;
            counts.fill(pw);
            cm.allgather(part, counts, all)?;
            // A triple received is an empty slot `(−1, −1, 0)` or a pair this
            // rank could have been sent: `lo < hi` whole numbers below `n`, both
            // labeled, one of class `c` and the other of another class, with a
            // finite similarity; and this rank's own part comes back as sent.
            // Anything else was not what its sender sent: this rank fails at the
            // closing agreement and leaves it out (issue 31, seed 0x17227954).
            let me = cm.comm.rank();
            let pair = |c: usize, o: &[f64]| -> Option<Option<(usize, usize, f64)>> {
                let &[lo, hi, sim] = o else { return None };
                if lo == -1.0 && hi == -1.0 && sim == 0.0 {
                    return Some(None);
                }
                let item = |x: f64| (whole(x) && x < n as f64).then_some(x as usize);
                let (l, h) = (item(lo)?, item(hi)?);
                let (cl, ch) = (class_of(labels, l)?, class_of(labels, h)?);
                let ok = l < h && cl != ch && (cl == c || ch == c) && sim.is_finite();
                ok.then_some(Some((l, h, sim)))
            };
            for (q, aq) in all.chunks_exact(pw.max(1)).take(ranks).enumerate() {
                if q == me && aq != &*part {
                    cm.fail(Error::CommFailed);
                }
                for (c, ac) in aq.chunks_exact((3 * kp).max(1)).enumerate().take(n_classes) {
                    for o in ac.chunks_exact(3) {
                        match pair(c, o) {
                            Some(Some((lo, hi, sim))) => m.offer_unique(c, lo, hi, sim),
                            Some(None) => {}
                            None => cm.fail(Error::CommFailed),
                        }
                    }
                }
            }
            Some(m)
        }
        _ => None,
    };

    // Symmetrisation: the edges to other ranks' items go to their ranks.
    let unl = |i: usize| class_of(labels, i).is_none();
    let items_pen = match &pen {
        Some(PenaltyTop::Items(t)) => Some(t),
        _ => None,
    };
    // Every directed edge `i → j` of this rank's lists: (i, j, penalty?).
    let for_edges = |f: &mut dyn FnMut(usize, usize, bool)| {
        for i in a..e {
            for &j in glob.get(i).0 {
                if j != NO_NEIGHBOR && (unl(i) || unl(j)) {
                    f(i, j, false);
                }
            }
            if !unl(i) {
                labeled_edges(i, &same, items_pen, f);
            }
        }
    };
    symmetrise(
        cm,
        st.rest(),
        (n, a, e),
        off,
        (labels, n_classes, params),
        &for_edges,
        merged.as_ref(),
        (affinity, penalty),
    )
}

/// Hands every directed edge `i → j` of a rank's lists to its argument
/// (`true`: a penalty edge).
type ForEdges<'f> = dyn Fn(&mut dyn FnMut(usize, usize, bool)) + 'f;

/// The directed edges of labeled item `i`'s same-class list (`f(i, j, false)`) and
/// of its penalty list when the penalty is per item (`f(i, j, true)`): what both
/// schedules' `for_edges` add to the global lists.
fn labeled_edges(
    i: usize,
    same: &TopK<'_>,
    items_pen: Option<&TopK<'_>>,
    f: &mut dyn FnMut(usize, usize, bool),
) {
    for &j in same.get(i).0 {
        if j != NO_NEIGHBOR {
            f(i, j, false);
        }
    }
    if let Some(p) = items_pen {
        for &j in p.get(i).0 {
            if j != NO_NEIGHBOR {
                f(i, j, true);
            }
        }
    }
}
/// This rank's rows of TGE's graphs from its lists (module docs,
/// *Symmetrisation*): `for_edges` hands every directed edge `i → j` of the
/// rank's lists (`i` one of its items; `true`: a penalty edge), `merged` the
/// class pairs every rank holds. The edges to other ranks' items go to their
/// ranks; the closing agreement decides whether every rank writes.
#[allow(clippy::too_many_arguments)]
fn symmetrise<C: Comm + ?Sized>(
    cm: &mut Counted<'_, C>,
    mut ph: Stack<'_>,
    (n, a, e): (usize, usize, usize),
    off: &[usize],
    (labels, n_classes, params): (&[u32], usize, &GraphParams),
    for_edges: &ForEdges<'_>,
    merged: Option<&PairTop<'_>>,
    (mut affinity, mut penalty): (CsrOut<'_>, CsrOut<'_>),
) -> Result<DistGraphReport, Error> {
    let ranks = off.len().saturating_sub(1);
    let n_r = e - a;
    let unl = |i: usize| class_of(labels, i).is_none();
    let cap = tge_capacity(n, n_r, n_classes, params)?;
    let (ka2, pi) = per_item(params);
    let cnt: &mut [usize] = ph.take_matrix(ranks, 4)?;
    let mut parts = cnt.chunks_exact_mut(ranks.max(1));
    let (Some(sendc), Some(recvc), Some(ones), Some(at)) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Error::Internal);
    };
    ones.fill(1);
    sendc.fill(0);
    for_edges(&mut |_, j, _| {
        // Only remote edges look up their owner (a binary search).
        if (a..e).contains(&j) {
            return;
        }
        if let Some(c) = sendc.get_mut(owner(off, j)) {
            *c += 1;
        }
    });
    let cf: &mut [f64] = ph.take_matrix(ranks, 2)?;
    let (cs, cr) = cf.split_at_mut_checked(ranks).ok_or(Error::Internal)?;
    for (x, &c) in cs.iter_mut().zip(sendc.iter()) {
        *x = c as f64;
    }
    cm.exchange(cs, &*ones, cr, &*ones)?;
    let n_sent: usize = sendc.iter().sum();
    let send: &mut [f64] = ph.take_matrix((ka2 + pi) * n_r, 2)?;
    let recv: &mut [f64] = ph.take_matrix((ka2 + pi) * (n - n_r), 2)?;
    if 2 * n_sent > send.len() {
        return Err(Error::Internal);
    }
    // The counts received size the next exchange: each a whole number, all
    // of them within the receive buffer, and as many edges received over all
    // ranks as sent (agreed before the exchange).
    let room = (recv.len() / 2) as f64;
    let mut total = 0.0;
    for (c, &x) in recvc.iter_mut().zip(cr.iter()) {
        total += x;
        *c = if whole(x) && total <= room {
            x as usize
        } else {
            cm.fail(Error::CommFailed);
            0
        };
    }
    let n_recv: usize = recvc.iter().sum();
    let mut both = [n_sent as f64, n_recv as f64, 0.0, 0.0];
    cm.sum(&mut both)?;
    cm.checkpoint(if both[0] == both[1] {
        Ok(())
    } else {
        Err(Error::CommFailed)
    })?;
    let mut o = 0;
    for (x, &c) in at.iter_mut().zip(sendc.iter()) {
        *x = o;
        o += 2 * c;
    }
    for_edges(&mut |i, j, p| {
        if !(a..e).contains(&j) {
            let Some(aq) = at.get_mut(owner(off, j)) else {
                return;
            };
            if let Some([to, from]) = send.get_mut(*aq..*aq + 2) {
                *to = j as f64;
                *from = if p { -1.0 - i as f64 } else { i as f64 };
            }
            *aq += 2;
        }
    });
    sendc.iter_mut().for_each(|c| *c *= 2);
    recvc.iter_mut().for_each(|c| *c *= 2);
    let recv = recv.part_mut(..2 * n_recv)?;
    cm.exchange(send.part(..2 * n_sent)?, sendc, recv, recvc)?;
    let recv = &*recv;

    let mut asm_a = Assembler::new_range(a, n_r, cap.affinity.max(2 * ka2 * n_r), &mut ph)?;
    let mut asm_p = Assembler::new_range(a, n_r, cap.penalty.max(2 * pi * n_r), &mut ph)?;
    // An edge received is a pair of whole numbers: `j` one of this rank's
    // items, `i` (or `−1 − i`, penalty) an item; any other was not what its
    // sender sent (this rank fails at the closing agreement) and is left out.
    let edge = |r: &[f64]| -> Option<(usize, usize, bool)> {
        let &[j, i] = r else { return None };
        let item = |x: f64| (whole(x) && x < n as f64).then_some(x as usize);
        let j = item(j).filter(|j| (a..e).contains(j))?;
        match item(i) {
            Some(i) => Some((j, i, false)),
            None => item(-1.0 - i).map(|i| (j, i, true)),
        }
    };
    if recv.chunks_exact(2).any(|r| edge(r).is_none()) {
        cm.fail(Error::CommFailed);
    }
    for phase in 0..2 {
        for_edges(&mut |i, j, p| {
            if p {
                asm_p.add(i, j);
            } else {
                asm_a.add(i, j);
            }
        });
        for (j, i, p) in recv.chunks_exact(2).filter_map(edge) {
            if p {
                asm_p.add(j, i);
            } else {
                asm_a.add(j, i);
            }
        }
        if let Some(m) = merged {
            add_pairs(&mut asm_p, m, n_classes);
        }
        if phase == 0 {
            asm_a.start_fill();
            asm_p.start_fill();
        }
    }
    let nnz = GraphNnz {
        affinity: asm_a.finish(),
        penalty: asm_p.finish(),
    };
    // Every rank writes, or none does.
    let fits = asm_a.check(&affinity).and(asm_p.check(&penalty));
    cm.settle(fits, &mut [0.0; STATUS])?;
    let sigma = params.sigma;
    asm_a.write(
        &mut affinity,
        |i, j| if unl(i) || unl(j) { 1.0 } else { sigma },
    );
    asm_p.write(&mut penalty, |_, _| sigma);
    Ok(DistGraphReport {
        nnz,
        traffic: counted_traffic(cm, (n_sent as u64, n_recv as u64)),
    })
}

/// A kernel set with each median bandwidth replaced by its resolved `γ`
/// (`gamma[v]`, in the caller's units).
struct Resolved<'k, KS: ?Sized> {
    inner: &'k KS,
    gamma: &'k [f64],
}

impl<KS: KernelSet + ?Sized> KernelSet for Resolved<'_, KS> {
    fn count(&self) -> usize {
        self.inner.count()
    }
    fn kernel(&self, v: usize) -> Kernel {
        match self.inner.kernel(v) {
            Kernel::Rbf(Bandwidth::Median) => {
                Kernel::Rbf(Bandwidth::Gamma(self.gamma.get(v).copied().unwrap_or(1.0)))
            }
            k => k,
        }
    }
}

/// A sink that hands its blocks on with the items renamed (`map[x]`): the
/// labeled sweep evaluates window positions and offers item numbers.
struct Mapped<'m, S> {
    map: &'m [usize],
    rows: &'m mut [usize],
    cols: &'m mut [usize],
    sink: S,
}

impl<S: Sink<f64>> Sink<f64> for Mapped<'_, S> {
    fn visit(&mut self, rows: &[usize], cols: &[usize], blk: &[f64], shape: Block) {
        let (Some(r), Some(c)) = (
            self.rows.get_mut(..rows.len()),
            self.cols.get_mut(..cols.len()),
        ) else {
            return;
        };
        for (o, &x) in r.iter_mut().zip(rows) {
            *o = self.map.get(x).copied().unwrap_or(NO_NEIGHBOR);
        }
        for (o, &x) in c.iter_mut().zip(cols) {
            *o = self.map.get(x).copied().unwrap_or(NO_NEIGHBOR);
        }
        self.sink.visit(r, c, blk, shape);
    }
}

/// Workspace bytes of [`tge_approx`] on a rank whose views (its `N_r` items,
/// dense) have these shapes, for `n` items over `ranks` ranks, `labels` of all
/// `n` items (or empty), these graph and NN-descent options (module docs of
/// `similarity::nndescent_dist` and [`tge_approx`]: `O(N_r·(S + k) + N_l·S)`
/// words plus the batch buffers).
#[allow(clippy::too_many_arguments)]
pub fn tge_approx_workspace<KS: KernelSet + ?Sized>(
    shapes: impl IntoIterator<Item = ViewShape, IntoIter: Clone> + Clone,
    kernels: &KS,
    n: usize,
    labels: &[u32],
    n_classes: usize,
    ranks: usize,
    params: &GraphParams,
    ann: &AnnParams,
) -> Result<usize, Error> {
    params.validate()?;
    let nl = similarity::check_labels(labels, n, n_classes)?;
    approx_req(shapes, kernels, n, nl, n_classes, ranks, params, ann)?.bytes()
}

/// The NN-descent options for `n` items and `ka` neighbours.
fn resolve_ann(ann: &AnnParams, n: usize, ka: usize) -> Result<AnnParams, Error> {
    GraphBuild::Approx(*ann)
        .resolve(n, ka, ann.parallel)
        .ok_or(Error::Internal)
}

#[allow(clippy::too_many_arguments)]
fn approx_req<KS: KernelSet + ?Sized>(
    shapes: impl IntoIterator<Item = ViewShape, IntoIter: Clone> + Clone,
    kernels: &KS,
    n: usize,
    n_labeled: usize,
    n_classes: usize,
    ranks: usize,
    params: &GraphParams,
    ann: &AnnParams,
) -> Result<WorkReq, Error> {
    params.validate()?;
    let lay = similarity::layout(shapes.clone(), kernels)?;
    let (h, n_r) = (lay.h, lay.n);
    if ranks == 0 {
        return Err(Error::BadParameter);
    }
    if n_r > n {
        return Err(Error::DimensionMismatch);
    }
    let ann = resolve_ann(ann, n, params.ka)?;
    let b = similarity::block_size(params.block, n);
    let s = shapes
        .clone()
        .into_iter()
        .try_fold(0usize, |a, x| a.checked_add(x.rows))
        .ok_or(Error::SizeOverflow)?;
    let (ka, kp, c) = (params.ka, params.kp, n_classes);
    let (ka2, pi) = per_item(params);
    let pairs = kp > 0 && params.penalty == Penalty::ClassPairs;
    let cap = tge_capacity(n, n_r, n_classes, params)?;
    let nl = n_labeled;
    let persistent = WorkReq::all_of(&[
        WorkReq::new::<usize>(h),
        WorkReq::new::<f64>(h),
        WorkReq::new::<f64>(h),
        WorkReq::new::<usize>(add(ranks, 1)?),
        WorkReq::new::<usize>(ranks),
        ClassIndex::workspace(nl, n_classes),
        WorkReq::matrix::<usize>(n_r, ann.k),
        WorkReq::matrix::<f64>(n_r, ann.k),
        TopK::workspace(n_r, ka),
        if kp == 0 {
            WorkReq::EMPTY
        } else if pairs {
            PairTop::workspace(c, kp)
        } else {
            TopK::workspace(n_r, kp)
        },
    ]);
    // The shards' set-up (`shards`): the sums, and this rank's maxima as sent.
    let setup = WorkReq::new::<f64>(add(add(mul(ranks, add(h, 1)?)?, STATUS)?, h)?);
    let labeled = if nl == 0 {
        WorkReq::EMPTY
    } else {
        let l1 = similarity::layout(window_shapes(shapes.clone(), nl), kernels)?;
        WorkReq::all_of(&[
            WorkReq::new::<usize>(nl),
            WorkReq::new::<usize>(nl),
            WorkReq::matrix::<f64>(s, nl.min(n_r)),
            WorkReq::matrix::<f64>(s, nl),
            median::scratch_req(&l1),
            WorkReq::matrix::<f64>(b, b),
            WorkReq::matrix::<usize>(b, 2),
            engine::workspace::<f64>(&l1, b),
        ])
    };
    let res = Resolved {
        inner: kernels,
        gamma: &[],
    };
    let nn = crate::similarity::nndescent_dist::sharded_req(shapes, &res, n, ranks, &ann)?;
    let per = add(ka2, pi)?;
    let symm = WorkReq::all_of(&[
        WorkReq::matrix::<usize>(ranks, 4),
        WorkReq::matrix::<f64>(ranks, 2),
        WorkReq::matrix::<f64>(mul(per, n_r)?, 2),
        WorkReq::matrix::<f64>(mul(per, n - n_r)?, 2),
        Assembler::workspace_slots(n_r, cap.affinity.max(mul(2 * ka2, n_r)?)),
        Assembler::workspace_slots(n_r, cap.penalty.max(mul(2 * pi, n_r)?)),
    ]);
    Ok(WorkReq::all_of(&[
        persistent,
        WorkReq::any_of(&[setup, labeled, nn, symm]),
    ]))
}

/// The approximate graph across ranks with the items sharded (issue 30, item
/// 4): this rank's rows of TGE's graphs whose global neighbours come from
/// NN-descent run across the ranks (`similarity::nndescent_dist`: each rank
/// holds only its items' columns and lists), with the arguments, partition,
/// outputs (capacities from [`tge_capacity`]) and errors of [`tge()`](fn@tge).
///
/// **What each rank does.** (1) The set-up of [`tge()`](fn@tge): the item
/// counts and every view's magnitude factor over all ranks. (2) The labeled
/// items' columns are gathered on every rank (`N_l · S` words) and the
/// single-process labeled sweep runs on them (as [`crate::graph::tge_build`]'s
/// approximate schedule: the median bandwidths, the same-class lists and the
/// penalty, exact; the rank keeps its items' lists and every class pair). (3)
/// The sharded NN-descent finds its items' `k' = max(AnnParams::k, ka)`
/// neighbours (the first `ka` kept). (4) The edges to other ranks' items are
/// sent to their ranks (as [`tge()`](fn@tge)), and every rank writes its rows
/// or none does.
///
/// **Against the single process.** With one rank, the rows are bitwise those of
/// [`crate::graph::tge_build`] with `GraphBuild::Approx(*ann)` (the same
/// NN-descent, the same labeled sweep). With several, the labeled lists are
/// still exact and the same, and the global lists are NN-descent's across
/// ranks: another approximation of the same exact lists, whose recall is
/// measured in `docs/mpi.md` (≥ 0.95 on clustered data at 2 and 3 ranks, as
/// `tests/dist.rs` asserts).
///
/// **Memory per rank**: the rank's views, its lists (`N_r·(2k' + 2ka + 2kp)`
/// words), the labeled columns (`N_l·S`), the batch buffers of the sharded
/// NN-descent (about `N_r·S/2`), the edges received (as [`tge()`](fn@tge));
/// [`tge_approx_workspace`] gives the bytes. **Work**: NN-descent over `N_r`
/// items, then per iteration at most `N_r·c` kernel values (`c` candidates
/// per item), and the labeled sweep over `N_l(N_l − 1)/2` pairs (on every
/// rank).
#[allow(clippy::too_many_arguments)]
pub fn tge_approx<
    C: Comm + ?Sized,
    VS: ViewSet<f64> + Sync + ?Sized,
    KS: KernelSet + Sync + ?Sized,
>(
    comm: &mut C,
    views: &VS,
    kernels: &KS,
    eta: &[f64],
    labels: &[u32],
    (n, n_classes): (usize, usize),
    (params, ann): (&GraphParams, &AnnParams),
    (affinity, penalty): (CsrOut<'_>, CsrOut<'_>),
    work: &mut [u8],
) -> Result<DistGraphReport, Error> {
    let (rank, ranks) = (comm.rank(), comm.ranks());
    if ranks == 0 || rank >= ranks {
        return Err(Error::BadParameter);
    }
    let mut cm = Counted::new(comm);
    let request = Request {
        views,
        kernels,
        eta,
        labels,
        n_classes,
        params,
        items: Some(n),
    };
    let shapes = (0..views.count()).map(|v| views.shape(v));
    let local = request.check::<f64>(&affinity, &penalty).and_then(|c| {
        let need = approx_req(
            shapes.clone(),
            kernels,
            n,
            c.nl,
            n_classes,
            ranks,
            params,
            ann,
        )?;
        if work.len() < need.bytes()? {
            return Err(Error::WorkspaceTooSmall);
        }
        let mut st = Stack::new(&mut *work);
        let ci = ClassIndex::new(labels, c.nl, n_classes, &mut st)?;
        check_counts(&ci, params)
    });
    let mut cfg = config(views, kernels, eta, labels, n, n_classes, params, ranks);
    // The NN-descent options are shared too: folded into the last word.
    let mut h = Fnv(cfg[CONFIG - 1].to_bits());
    for x in [ann.k, ann.trees, ann.leaf, ann.candidates, ann.iters] {
        h.add(x as u64);
    }
    h.add(ann.seed);
    h.add(ann.delta.to_bits());
    cfg[CONFIG - 1] = (h.0 >> 11) as f64;
    agree(&mut cm, &cfg, local)?;
    let r = approx_body(
        &mut cm,
        views,
        (kernels, eta, labels),
        (n, n_classes),
        (params, ann),
        (affinity, penalty),
        work,
    );
    match r {
        Err(e) if !cm.left => cm.settle(Err(e), &mut [0.0; STATUS]),
        r => r,
    }
}

#[allow(clippy::too_many_arguments)]
fn approx_body<
    C: Comm + ?Sized,
    VS: ViewSet<f64> + Sync + ?Sized,
    KS: KernelSet + Sync + ?Sized,
>(
    cm: &mut Counted<'_, C>,
    views: &VS,
    (kernels, eta, labels): (&KS, &[f64], &[u32]),
    (n, n_classes): (usize, usize),
    (params, ann): (&GraphParams, &AnnParams),
    outs: (CsrOut<'_>, CsrOut<'_>),
    work: &mut [u8],
) -> Result<DistGraphReport, Error> {
    let (rank, ranks) = (cm.comm.rank(), cm.comm.ranks());
    let lay = similarity::layout((0..views.count()).map(|v| views.shape(v)), kernels)?;
    let (h, n_r) = (lay.h, lay.n);
    let nl = similarity::check_labels(labels, n, n_classes)?;
    let ann = resolve_ann(ann, n, params.ka)?;
    let k = ann.k;
    let b = similarity::block_size(params.block, n);
    let (ka, kp) = (params.ka, params.kp);
    let pairs = kp > 0 && params.penalty == Penalty::ClassPairs;
    let mut st = Stack::new(work);
    let rows: &mut [usize] = st.take(h)?;
    for (v, r) in rows.iter_mut().enumerate() {
        *r = views.shape(v).rows;
    }
    let s: usize = rows.iter().sum();
    let inv: &mut [f64] = st.take(h)?;
    let gam: &mut [f64] = st.take(h)?;
    let off: &mut [usize] = st.take(ranks + 1)?;
    let counts: &mut [usize] = st.take(ranks)?;
    let ci = ClassIndex::new(labels, nl, n_classes, &mut st)?;
    let idx: &mut [usize] = st.take_matrix(n_r, k)?;
    let sim: &mut [f64] = st.take_matrix(n_r, k)?;

    // Set-up: every rank's largest value per view and its items (as `tge`).
    shards(cm, views, (n, n_r), st.rest(), off, inv)?;
    let (a, e) = (off.at(rank)?, off.at(rank + 1)?);

    // The labeled items' lists (same class, penalty) and the median bandwidths.
    let (si, ss) = (st.take_matrix(n_r, ka)?, st.take_matrix(n_r, ka)?);
    let mut same = TopK::new_range(ka, a, si, ss, Filter::Same(labels));
    let mut pen = if kp == 0 {
        None
    } else if pairs {
        let (lo, hi) = (
            st.take_matrix(n_classes, kp)?,
            st.take_matrix(n_classes, kp)?,
        );
        let sim = st.take_matrix(n_classes, kp)?;
        Some(PenaltyTop::Pairs(PairTop::new(kp, labels, lo, hi, sim)))
    } else {
        let (pi, ps) = (st.take_matrix(n_r, kp)?, st.take_matrix(n_r, kp)?);
        Some(PenaltyTop::Items(TopK::new_range(
            kp,
            a,
            pi,
            ps,
            Filter::Other(labels),
        )))
    };
    gam.fill(f64::NAN);
    if nl > 0 {
        let mut ph = st.rest();
        let sorted: &mut [usize] = ph.take(nl)?;
        let labeled = (0..n).filter(|&j| class_of(labels, j).is_some());
        for (x, j) in sorted.iter_mut().zip(labeled) {
            *x = j;
        }
        let pos: &mut [usize] = ph.take(nl)?;
        for (p, &j) in pos.iter_mut().zip(ci.labeled()) {
            *p = sorted.binary_search(&j).map_err(|_| Error::Internal)?;
        }
        let (_, mine) = labeled_in(labels, a, e);
        let part: &mut [f64] = ph.take_matrix(s, mine)?;
        let mine = (a..e).filter(|&j| class_of(labels, j).is_some());
        for (dst, j) in part.chunks_exact_mut(s.max(1)).zip(mine) {
            copy_item(views, j - a, dst);
        }
        for (c, w) in counts.iter_mut().zip(off.windows(2)) {
            let &[o0, o1] = w else { continue };
            *c = labeled_in(labels, o0, o1).1 * s;
        }
        let all: &mut [f64] = ph.take_matrix(s, nl)?;
        cm.allgather(part, counts, all)?;
        let win = Window {
            buf: &*all,
            rows: &*rows,
            items: nl,
            stride: s,
        };
        let l1 = similarity::layout(window_shapes((0..h).map(|v| views.shape(v)), nl), kernels)?;
        let mut sc = median::Scratch::new(&l1, &mut ph)?;
        let blk: &mut [f64] = ph.take_matrix(b, b)?;
        let (mr, mc) = (ph.take::<usize>(b)?, ph.take::<usize>(b)?);
        let mut eng = Engine::new_with(&win, kernels, &l1, b, ph, Some(&*inv))?;
        median::resolve(&mut eng, pos, &mut sc, blk)?;
        for (v, g) in gam.iter_mut().enumerate() {
            if kernels.kernel(v).is_median() {
                *g = eng.gamma_unscaled(v);
            }
        }
        eng.set_mode(Mode::Fused, Some(eta));
        let mut sink = Mapped {
            map: &*sorted,
            rows: mr,
            cols: mc,
            sink: (&mut same, &mut pen),
        };
        eng.sym(pos, blk, &mut sink)?;
    }

    // The global lists: NN-descent across the ranks.
    {
        let res = Resolved {
            inner: kernels,
            gamma: &*gam,
        };
        let shard = crate::similarity::nndescent_dist::Shard { rank, off, n };
        crate::similarity::nndescent_dist::sharded_knn(
            cm,
            views,
            (&res, eta, &*inv, &*rows),
            &shard,
            &ann,
            (&mut *idx, &mut *sim),
            st.rest().take_rest(),
        )?;
    }

    let unl = |i: usize| class_of(labels, i).is_none();
    let items_pen = match &pen {
        Some(PenaltyTop::Items(t)) => Some(t),
        _ => None,
    };
    let merged = match &pen {
        Some(PenaltyTop::Pairs(t)) => Some(t),
        _ => None,
    };
    let idx = &*idx;
    let for_edges = |f: &mut dyn FnMut(usize, usize, bool)| {
        for (i, row) in (a..e).zip(idx.chunks_exact(k.max(1))) {
            for &j in row.iter().take(ka) {
                if j != NO_NEIGHBOR && j != i && (unl(i) || unl(j)) {
                    f(i, j, false);
                }
            }
            if !unl(i) {
                labeled_edges(i, &same, items_pen, f);
            }
        }
    };
    symmetrise(
        cm,
        st.rest(),
        (n, a, e),
        off,
        (labels, n_classes, params),
        &for_edges,
        merged,
        outs,
    )
}
