//! What the LDGE and TGE builders share: options, CSR outputs, capacities, and the assembly of
//! a symmetric CSR graph from directed neighbour lists without allocation.

use crate::error::Error;
use crate::linalg::select::sort_by;
use crate::similarity::class_of;
use crate::similarity::topk::{PairTop, TopK, NO_NEIGHBOR};
use crate::work::{Stack, WorkReq};

/// The penalty graph `Wᵖ` of LDGE / TGE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Penalty {
    /// Seed 003 (eq. 9): `(i, j)` is an edge if it is among the `kp` most similar pairs between
    /// class `y_i` and the other classes, or between `y_j` and the others (about `C·kp` edges:
    /// measured, it barely acts on real data).
    ClassPairs,
    /// Seed 000 (eq. 5): `(i, j)` is an edge if `i` is among the `kp` nearest other-class labeled
    /// neighbours of `j`, or `j` of `i` (about `N_l·kp` edges).
    ItemNeighbors,
}

/// Options of [`super::ldge()`] and [`super::tge()`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GraphParams {
    /// Affinity neighbours `ka >= 1` (default 5, the papers' value).
    pub ka: usize,
    /// Penalty neighbours or pairs per class, `kp` (default 3; 0: no penalty graph, e.g. GNMF).
    pub kp: usize,
    /// Which penalty (default [`Penalty::ClassPairs`], seed 003).
    pub penalty: Penalty,
    /// TGE's weight `σ` of the label-derived edges (default 2; the paper asks `σ > 1`; must be
    /// finite and `> 0`). Unused by LDGE.
    pub sigma: f64,
    /// Items per block side of the kernel evaluation (0: default).
    pub block: usize,
}

impl Default for GraphParams {
    fn default() -> Self {
        GraphParams {
            ka: 5,
            kp: 3,
            penalty: Penalty::ClassPairs,
            sigma: 2.0,
            block: 0,
        }
    }
}

impl GraphParams {
    /// `ka >= 1`, `σ` finite and `> 0` ([`Error::BadParameter`]).
    pub fn validate(&self) -> Result<(), Error> {
        if self.ka == 0 || !(self.sigma.is_finite() && self.sigma > 0.0) {
            return Err(Error::BadParameter);
        }
        Ok(())
    }
}

/// A symmetric CSR graph being written: `row_ptr` has `N + 1` entries; `col_idx` and `weights`
/// at least the number of stored entries (the capacity queries give a bound from `N` and `k`).
#[derive(Debug)]
pub struct CsrOut<'a> {
    /// Row pointers (`N + 1`).
    pub row_ptr: &'a mut [usize],
    /// Column indices (strictly increasing within a row).
    pub col_idx: &'a mut [usize],
    /// Weights (`W_ij == W_ji`).
    pub weights: &'a mut [f64],
}

/// Stored entries (both directions count) of an affinity and a penalty graph.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GraphNnz {
    /// Entries of `Wᵃ`.
    pub affinity: usize,
    /// Entries of `Wᵖ`.
    pub penalty: usize,
}

fn mul(a: usize, b: usize) -> Result<usize, Error> {
    a.checked_mul(b).ok_or(Error::SizeOverflow)
}

/// Most entries a penalty graph can store.
pub(crate) fn penalty_capacity(
    n: usize,
    n_classes: usize,
    p: &GraphParams,
) -> Result<usize, Error> {
    let all = mul(n, n.saturating_sub(1))?;
    Ok(match p.penalty {
        Penalty::ClassPairs => mul(mul(2, n_classes)?, p.kp)?,
        Penalty::ItemNeighbors => mul(mul(2, n)?, p.kp)?,
    }
    .min(all))
}

/// Most entries of LDGE's graphs for `n` items (whatever the labels): affinity `2·N·ka`,
/// penalty `2·C·kp` (class pairs) or `2·N·kp` (item neighbours), each at most `N(N − 1)`.
pub fn ldge_capacity(n: usize, n_classes: usize, params: &GraphParams) -> Result<GraphNnz, Error> {
    let all = mul(n, n.saturating_sub(1))?;
    Ok(GraphNnz {
        affinity: mul(mul(2, n)?, params.ka)?.min(all),
        penalty: penalty_capacity(n, n_classes, params)?,
    })
}

/// Most entries of TGE's graphs for `n` items: affinity `4·N·ka` (the `N·ka` global and the
/// `N_l·ka` same-class neighbour lists, symmetrised), penalty as LDGE; each at most `N(N − 1)`.
pub fn tge_capacity(n: usize, n_classes: usize, params: &GraphParams) -> Result<GraphNnz, Error> {
    let all = mul(n, n.saturating_sub(1))?;
    Ok(GraphNnz {
        affinity: mul(mul(4, n)?, params.ka)?.min(all),
        penalty: penalty_capacity(n, n_classes, params)?,
    })
}

/// Checks the row pointer lengths of both outputs.
pub(crate) fn check_outs(n: usize, a: &CsrOut<'_>, p: &CsrOut<'_>) -> Result<(), Error> {
    if a.row_ptr.len() != n + 1 || p.row_ptr.len() != n + 1 {
        return Err(Error::DimensionMismatch);
    }
    Ok(())
}

/// A symmetric CSR graph assembled in workspace from undirected edges (duplicates merged).
/// Edges are added twice with the same calls: once to count ([`Assembler::add`] before
/// [`Assembler::start_fill`]), once to fill.
///
/// The rows are those of the items `lo .. lo + n` (`lo = 0`: the whole graph); an edge adds
/// an entry to the row of each endpoint in that range (a rank's shard of a distributed
/// graph, columns global).
pub(crate) struct Assembler<'w> {
    lo: usize,
    n: usize,
    ptr: &'w mut [usize],
    cols: &'w mut [usize],
    filling: bool,
}

impl<'w> Assembler<'w> {
    /// Room for `n` items and `edges` undirected edges (`2·edges` entries).
    pub(crate) fn workspace(n: usize, edges: usize) -> WorkReq {
        WorkReq::all_of(&[
            WorkReq::new::<usize>(n.saturating_add(1)),
            WorkReq::matrix::<usize>(edges, 2),
        ])
    }

    /// Room for the rows of `n` items and `slots` entries ([`Assembler::new_range`]).
    pub(crate) fn workspace_slots(n: usize, slots: usize) -> WorkReq {
        WorkReq::all_of(&[
            WorkReq::new::<usize>(n.saturating_add(1)),
            WorkReq::new::<usize>(slots),
        ])
    }

    pub(crate) fn new(n: usize, edges: usize, st: &mut Stack<'w>) -> Result<Self, Error> {
        Self::new_range(0, n, edges.checked_mul(2).ok_or(Error::SizeOverflow)?, st)
    }

    /// Room for the rows of the items `lo .. lo + n` and `slots` entries.
    pub(crate) fn new_range(
        lo: usize,
        n: usize,
        slots: usize,
        st: &mut Stack<'w>,
    ) -> Result<Self, Error> {
        let ptr: &mut [usize] = st.take(n.checked_add(1).ok_or(Error::SizeOverflow)?)?;
        let cols: &mut [usize] = st.take(slots)?;
        ptr.fill(0);
        Ok(Assembler {
            lo,
            n,
            ptr,
            cols,
            filling: false,
        })
    }

    /// The undirected edge `{i, j}`, `i != j`: an entry in each row of the range.
    #[inline]
    pub(crate) fn add(&mut self, i: usize, j: usize) {
        self.half(i, j);
        self.half(j, i);
    }

    /// `j` in row `i` (if `i` is in the range).
    #[inline(always)]
    fn half(&mut self, i: usize, j: usize) {
        let r = i.wrapping_sub(self.lo);
        if r >= self.n {
            return;
        }
        // `ptr` holds `n + 1` entries and the rows' slots fit `cols` (sized from the
        // heaps' capacity): every access below is inside.
        if self.filling {
            if let Some(p) = self.ptr.get_mut(r) {
                if let Some(c) = self.cols.get_mut(*p) {
                    *c = j;
                }
                *p += 1;
            }
        } else if let Some(p) = self.ptr.get_mut(r + 1) {
            *p += 1;
        }
    }

    /// Counting done: prefix sums (row starts), then the same edges again.
    pub(crate) fn start_fill(&mut self) {
        let mut sum = 0;
        for p in self.ptr.iter_mut() {
            sum += *p;
            *p = sum;
        }
        self.filling = true;
    }

    /// Sorts every row, merges duplicates, compacts; returns the stored entries.
    pub(crate) fn finish(&mut self) -> usize {
        // After filling, ptr[i] is the end of row i: shift back to starts.
        let mut prev = 0;
        for p in self.ptr.iter_mut() {
            (*p, prev) = (prev, *p);
        }
        let (mut w, mut s) = (0, 0);
        for i in 0..self.n {
            let e = self.ptr.get(i + 1).copied().unwrap_or(s);
            if let Some(row) = self.cols.get_mut(s..e) {
                sort_by(row, |a, b| a < b);
            }
            let start = w;
            let mut last = NO_NEIGHBOR;
            for r in s..e {
                let Some(&c) = self.cols.get(r) else {
                    break;
                };
                if c != last {
                    if let Some(d) = self.cols.get_mut(w) {
                        *d = c;
                    }
                    w += 1;
                    last = c;
                }
            }
            if let Some(p) = self.ptr.get_mut(i) {
                *p = start;
            }
            s = e;
        }
        if let Some(p) = self.ptr.last_mut() {
            *p = w;
        }
        w
    }

    /// Stored entries (after [`Assembler::finish`]).
    pub(crate) fn nnz(&self) -> usize {
        self.ptr.last().copied().unwrap_or(0)
    }

    /// Copies into `out` with weights `weight(i, j)` (`i`, `j` item indices; `out` checked by
    /// the caller: `N + 1` row pointers and room for [`Assembler::nnz`] entries).
    pub(crate) fn write(&self, out: &mut CsrOut<'_>, weight: impl Fn(usize, usize) -> f64) {
        let nnz = self.nnz();
        for (o, &p) in out.row_ptr.iter_mut().zip(self.ptr.iter()) {
            *o = p;
        }
        for (o, &c) in out.col_idx.iter_mut().zip(self.cols.iter()).take(nnz) {
            *o = c;
        }
        for (i, row) in self.ptr.windows(2).enumerate() {
            let &[s, e] = row else {
                continue;
            };
            let (Some(ws), Some(cs)) = (out.weights.get_mut(s..e), self.cols.get(s..e)) else {
                continue;
            };
            for (wt, &c) in ws.iter_mut().zip(cs) {
                *wt = weight(self.lo + i, c);
            }
        }
    }

    /// [`Error::BufferTooShort`] unless `out` holds [`Assembler::nnz`] entries.
    pub(crate) fn check(&self, out: &CsrOut<'_>) -> Result<(), Error> {
        let nnz = self.nnz();
        if out.col_idx.len() < nnz || out.weights.len() < nnz {
            return Err(Error::BufferTooShort);
        }
        Ok(())
    }
}

/// Adds the edges `{i, j}` of the neighbour lists of `items` that `keep` accepts.
pub(crate) fn add_lists(
    asm: &mut Assembler<'_>,
    top: &TopK<'_>,
    items: impl Iterator<Item = usize>,
    keep: impl Fn(usize, usize) -> bool,
) {
    for i in items {
        for &j in top.get(i).0 {
            if j != NO_NEIGHBOR && keep(i, j) {
                asm.add(i, j);
            }
        }
    }
}

/// TGE's two graphs from its neighbour lists (the exact and the approximate
/// schedules' common end): the affinity takes the lists over all items that
/// `global` adds (an edge with an unlabeled end) and the same-class lists of
/// the labeled items, the penalty its lists or pairs; two passes (count, then
/// fill), checked against the outputs before either is written. Weights: 1 for
/// an edge with an unlabeled end, `sigma` for a same-class pair (both ends
/// labeled) and for every penalty edge.
pub(crate) fn assemble_tge(
    (asm_a, asm_p): (&mut Assembler<'_>, &mut Assembler<'_>),
    global: impl Fn(&mut Assembler<'_>, &dyn Fn(usize) -> bool),
    (same, pen): (&TopK<'_>, Option<&PenaltyTop<'_>>),
    (labels, labeled, n_classes): (&[u32], &[usize], usize),
    sigma: f64,
    (affinity, penalty): (&mut CsrOut<'_>, &mut CsrOut<'_>),
) -> Result<GraphNnz, Error> {
    let unl = |i: usize| class_of(labels, i).is_none();
    for phase in 0..2 {
        global(asm_a, &unl);
        add_lists(asm_a, same, labeled.iter().copied(), |_, _| true);
        if let Some(p) = pen {
            p.add_to(asm_p, labeled, n_classes);
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
    asm_a.check(affinity)?;
    asm_p.check(penalty)?;
    // Both endpoints labeled: a same-class edge (global-only labeled pairs were dropped).
    asm_a.write(affinity, |i, j| if unl(i) || unl(j) { 1.0 } else { sigma });
    asm_p.write(penalty, |_, _| sigma);
    Ok(nnz)
}

/// Adds every class's pairs.
pub(crate) fn add_pairs(asm: &mut Assembler<'_>, top: &PairTop<'_>, n_classes: usize) {
    for c in 0..n_classes {
        let (lo, hi, _) = top.get(c);
        for (&i, &j) in lo.iter().zip(hi) {
            if i != NO_NEIGHBOR {
                asm.add(i, j);
            }
        }
    }
}

/// The penalty heaps of a search: per-item other-class lists or per-class pairs.
pub(crate) enum PenaltyTop<'w> {
    Items(TopK<'w>),
    Pairs(PairTop<'w>),
}

impl<T: crate::linalg::real::Real> crate::similarity::engine::Sink<T> for PenaltyTop<'_> {
    fn visit(
        &mut self,
        rows: &[usize],
        cols: &[usize],
        blk: &[T],
        shape: crate::similarity::engine::Block,
    ) {
        match self {
            PenaltyTop::Items(t) => t.visit(rows, cols, blk, shape),
            PenaltyTop::Pairs(t) => t.visit(rows, cols, blk, shape),
        }
    }
}

impl<'w> PenaltyTop<'w> {
    /// Workspace of the heaps.
    pub(crate) fn workspace(n: usize, n_classes: usize, p: &GraphParams) -> WorkReq {
        if p.kp == 0 {
            return WorkReq::EMPTY;
        }
        match p.penalty {
            Penalty::ItemNeighbors => TopK::workspace(n, p.kp),
            Penalty::ClassPairs => PairTop::workspace(n_classes, p.kp),
        }
    }

    /// Directed edges the heaps can hold (assembly room).
    pub(crate) fn edges(n: usize, n_classes: usize, p: &GraphParams) -> usize {
        match p.penalty {
            Penalty::ItemNeighbors => n.saturating_mul(p.kp),
            Penalty::ClassPairs => n_classes.saturating_mul(p.kp),
        }
    }

    /// Empty heaps (`p.kp >= 1`).
    pub(crate) fn new<'s: 'w>(
        n: usize,
        n_classes: usize,
        labels: &'w [u32],
        p: &GraphParams,
        st: &mut Stack<'s>,
    ) -> Result<Self, Error> {
        Ok(match p.penalty {
            Penalty::ItemNeighbors => {
                let idx: &mut [usize] = st.take_matrix(n, p.kp)?;
                let sim: &mut [f64] = st.take_matrix(n, p.kp)?;
                PenaltyTop::Items(TopK::new(
                    p.kp,
                    idx,
                    sim,
                    crate::similarity::topk::Filter::Other(labels),
                ))
            }
            Penalty::ClassPairs => {
                let lo: &mut [usize] = st.take_matrix(n_classes, p.kp)?;
                let hi: &mut [usize] = st.take_matrix(n_classes, p.kp)?;
                let sim: &mut [f64] = st.take_matrix(n_classes, p.kp)?;
                PenaltyTop::Pairs(PairTop::new(p.kp, labels, lo, hi, sim))
            }
        })
    }

    /// Absorbs the heaps of another part of the same search
    /// ([`TopK::absorb`], [`PairTop::absorb`]); [`Error::Internal`] for heaps
    /// of the other kind (never: the parts are made alike).
    pub(crate) fn absorb(&mut self, other: &PenaltyTop<'_>) -> Result<(), Error> {
        match (self, other) {
            (PenaltyTop::Items(a), PenaltyTop::Items(b)) => a.absorb(b),
            (PenaltyTop::Pairs(a), PenaltyTop::Pairs(b)) => a.absorb(b),
            _ => return Err(Error::Internal),
        }
        Ok(())
    }

    /// Adds the penalty edges.
    pub(crate) fn add_to(&self, asm: &mut Assembler<'_>, labeled: &[usize], n_classes: usize) {
        match self {
            PenaltyTop::Items(t) => add_lists(asm, t, labeled.iter().copied(), |_, _| true),
            PenaltyTop::Pairs(t) => add_pairs(asm, t, n_classes),
        }
    }
}

/// The checks of [`super::ldge()`] / [`super::tge()`] that need only the parameters and the labels
/// (labels already validated), for callers that must refuse before writing anything else
/// (the pipeline writes `η` before it builds the graph). `scratch` holds the class index
/// (`N + n_classes + 1` indices; any workspace sized for the builders is enough).
pub(crate) fn precheck(
    labels: &[u32],
    n: usize,
    n_classes: usize,
    params: &GraphParams,
    scratch: &mut [u8],
) -> Result<(), Error> {
    params.validate()?;
    check_sizes(params, n)?;
    let mut st = Stack::new(scratch);
    let ci = crate::similarity::ClassIndex::new(labels, n, n_classes, &mut st)?;
    check_counts(&ci, params)
}

/// The neighbour lists fit in `N` items: `ka < N`, and `kp < N` for item neighbours
/// ([`Error::BadParameter`]).
pub(crate) fn check_sizes(params: &GraphParams, n: usize) -> Result<(), Error> {
    if params.ka >= n || (params.penalty == Penalty::ItemNeighbors && params.kp >= n) {
        return Err(Error::BadParameter);
    }
    Ok(())
}

/// Enough labeled items for both graphs ([`check_affinity_counts`], [`check_penalty_counts`]).
pub(crate) fn check_counts(
    ci: &crate::similarity::ClassIndex<'_>,
    params: &GraphParams,
) -> Result<(), Error> {
    check_affinity_counts(ci, params.ka)?;
    check_penalty_counts(ci, params)
}

/// Enough labeled items for the penalty: `ItemNeighbors`, `kp` other-class items for every
/// present class; `ClassPairs`, `kp` cross pairs ([`Error::TooFewLabeled`]).
pub(crate) fn check_penalty_counts(
    ci: &crate::similarity::ClassIndex<'_>,
    p: &GraphParams,
) -> Result<(), Error> {
    if p.kp == 0 {
        return Ok(());
    }
    let nl = ci.labeled().len();
    match p.penalty {
        Penalty::ClassPairs => crate::similarity::knn::check_pair_counts(ci, p.kp),
        Penalty::ItemNeighbors => {
            for c in 0..ci.n_classes() {
                let m = ci.count(c);
                if m > 0 && nl - m < p.kp {
                    return Err(Error::TooFewLabeled);
                }
            }
            if nl == 0 {
                return Err(Error::TooFewLabeled);
            }
            Ok(())
        }
    }
}

/// Every class with labeled items has more than `ka` of them ([`Error::TooFewLabeled`]).
pub(crate) fn check_affinity_counts(
    ci: &crate::similarity::ClassIndex<'_>,
    ka: usize,
) -> Result<(), Error> {
    for c in 0..ci.n_classes() {
        let m = ci.count(c);
        if m > 0 && m <= ka {
            return Err(Error::TooFewLabeled);
        }
    }
    Ok(())
}
