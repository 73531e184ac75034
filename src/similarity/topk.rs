//! Top-k selection as block sinks: per-item neighbour heaps and per-class pair heaps.
//!
//! Order everywhere: a larger similarity is better; equal similarities are ordered by the lower
//! index (for pairs: the lower `(min(i,j), max(i,j))`), so the selected set is the top `k` of a
//! strict total order and does not depend on the order in which candidates arrive.

use super::class_of;
use super::engine::{Block, Sink};
use crate::linalg::real::Real;
use crate::linalg::{set_at, swap_at};
use crate::work::WorkReq;

/// The index written where there is no neighbour (`SIZE_MAX` in C).
pub const NO_NEIGHBOR: usize = usize::MAX;

/// `(s1, j1)` before `(s2, j2)`: larger similarity, then lower index.
#[inline(always)]
pub(crate) fn better(s1: f64, j1: usize, s2: f64, j2: usize) -> bool {
    s1 > s2 || (s1 == s2 && j1 < j2)
}

/// Which pairs a neighbour heap accepts.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Filter<'a> {
    /// Every pair.
    Any,
    /// Both labeled, same class.
    Same(&'a [u32]),
    /// Both labeled, different classes.
    Other(&'a [u32]),
}

impl Filter<'_> {
    #[inline(always)]
    fn ok(&self, i: usize, j: usize) -> bool {
        match *self {
            Filter::Any => true,
            Filter::Same(l) => {
                matches!((class_of(l, i), class_of(l, j)), (Some(a), Some(b)) if a == b)
            }
            Filter::Other(l) => {
                matches!((class_of(l, i), class_of(l, j)), (Some(a), Some(b)) if a != b)
            }
        }
    }
}

/// `k` best `(similarity, index)` per item, each a binary heap with the worst at its root,
/// in caller storage (`n × k` each, item `i` at `(i − lo)·k..`): the heaps of the items
/// `lo .. lo + n` (all `N` items, `lo = 0`, in one process; a rank's shard of them in a
/// distributed build, which offers every block it computes and keeps only its own items).
pub(crate) struct TopK<'w> {
    k: usize,
    lo: usize,
    len: usize,
    idx: &'w mut [usize],
    sim: &'w mut [f64],
    filter: Filter<'w>,
}

impl<'w> TopK<'w> {
    pub(crate) fn workspace(n: usize, k: usize) -> WorkReq {
        WorkReq::all_of(&[WorkReq::matrix::<usize>(n, k), WorkReq::matrix::<f64>(n, k)])
    }

    /// Empty heaps (`k >= 1`; `idx`, `sim` hold `N·k` values) of the items `0 .. N`.
    pub(crate) fn new(
        k: usize,
        idx: &'w mut [usize],
        sim: &'w mut [f64],
        filter: Filter<'w>,
    ) -> Self {
        Self::new_range(k, 0, idx, sim, filter)
    }

    /// Empty heaps of the items `lo .. lo + idx.len() / k` (`k >= 1`, `sim` as long as
    /// `idx`); blocks may hold other items, whose pairs with no item of the range are skipped.
    pub(crate) fn new_range(
        k: usize,
        lo: usize,
        idx: &'w mut [usize],
        sim: &'w mut [f64],
        filter: Filter<'w>,
    ) -> Self {
        idx.fill(NO_NEIGHBOR);
        sim.fill(f64::NEG_INFINITY);
        TopK {
            k,
            lo,
            len: idx.len() / k.max(1),
            idx,
            sim,
            filter,
        }
    }

    /// Is item `i` one of the heaps' items?
    #[inline(always)]
    fn mine(&self, i: usize) -> bool {
        i.wrapping_sub(self.lo) < self.len
    }

    /// The worst similarity in item `i`'s heap (`i` one of the heaps' items; `+inf`,
    /// which nothing beats, for any other).
    #[inline(always)]
    fn worst(&self, i: usize) -> f64 {
        let at = i.wrapping_sub(self.lo).wrapping_mul(self.k);
        self.sim.get(at).copied().unwrap_or(f64::INFINITY)
    }

    /// Is item `i` one of the heaps' items and `s` at least its worst similarity?
    #[inline(always)]
    fn reaches(&self, i: usize, s: f64) -> bool {
        let r = i.wrapping_sub(self.lo);
        r < self.len && matches!(self.sim.get(r.wrapping_mul(self.k)), Some(&w) if s >= w)
    }

    /// Offers `j` with similarity `s` to item `i`'s heap (`i` one of the heaps' items).
    #[inline]
    fn offer(&mut self, i: usize, j: usize, s: f64) {
        let base = i.wrapping_sub(self.lo).wrapping_mul(self.k);
        let r = base..base.wrapping_add(self.k);
        let (Some(sim), Some(idx)) = (self.sim.get_mut(r.clone()), self.idx.get_mut(r)) else {
            return;
        };
        let (Some(s0), Some(j0)) = (sim.first_mut(), idx.first_mut()) else {
            return;
        };
        if better(s, j, *s0, *j0) {
            *s0 = s;
            *j0 = j;
            sift_down(sim, idx, 0);
        }
    }

    /// Sorts every item's list best first (heap sort, `O(k log k)` per item).
    pub(crate) fn finish(&mut self) {
        let k = self.k.max(1);
        for (s, x) in self
            .sim
            .chunks_exact_mut(k)
            .zip(self.idx.chunks_exact_mut(k))
        {
            for end in (1..k).rev() {
                let (Some(s), Some(x)) = (s.get_mut(..=end), x.get_mut(..=end)) else {
                    break;
                };
                swap_at(s, 0, end);
                swap_at(x, 0, end);
                if let (Some(s), Some(x)) = (s.get_mut(..end), x.get_mut(..end)) {
                    sift_down(s, x, 0);
                }
            }
        }
    }

    /// Offers every entry of `other`'s lists (heaps of the same items) to
    /// these heaps. The heaps keep the top `k` of a strict total order, so
    /// absorbing the heaps of the parts of a search gives exactly the heaps of
    /// the whole search (when every pair was offered in exactly one part).
    pub(crate) fn absorb(&mut self, other: &TopK<'_>) {
        for r in 0..self.len {
            let i = self.lo.wrapping_add(r);
            let (oi, os) = other.get(i);
            for (&j, &s) in oi.iter().zip(os) {
                if j != NO_NEIGHBOR && self.reaches(i, s) {
                    self.offer(i, j, s);
                }
            }
        }
    }

    /// Item `i`'s list (after [`TopK::finish`]: best first); `i` one of the heaps' items.
    pub(crate) fn get(&self, i: usize) -> (&[usize], &[f64]) {
        let base = i.wrapping_sub(self.lo).wrapping_mul(self.k);
        let r = base..base.wrapping_add(self.k);
        (
            self.idx.get(r.clone()).unwrap_or_default(),
            self.sim.get(r).unwrap_or_default(),
        )
    }
}

/// Restores the heap (worst at the root) of `s`, `x` (the same length) below
/// `p`: the entry at `p` moves down past every worse child, which moves up
/// into its place (the positions repeated swaps give, with half the writes).
#[inline]
fn sift_down(s: &mut [f64], x: &mut [usize], mut p: usize) {
    let len = s.len().min(x.len());
    let (Some(s), Some(x)) = (s.get_mut(..len), x.get_mut(..len)) else {
        return;
    };
    let (Some(&sv), Some(&xv)) = (s.get(p), x.get(p)) else {
        return;
    };
    loop {
        let c1 = p.wrapping_mul(2).wrapping_add(1);
        if c1 >= len {
            break;
        }
        let c2 = c1 + 1;
        // The worse child.
        let (c, sc, xc) = if c2 < len && better(s[c1], x[c1], s[c2], x[c2]) {
            (c2, s[c2], x[c2])
        } else {
            (c1, s[c1], x[c1])
        };
        if !better(sv, xv, sc, xc) {
            break;
        }
        set_at(s, p, sc);
        set_at(x, p, xc);
        p = c;
    }
    set_at(s, p, sv);
    set_at(x, p, xv);
}

impl<T: Real> Sink<T> for TopK<'_> {
    fn visit(&mut self, rows: &[usize], cols: &[usize], blk: &[T], shape: Block) {
        let nr = rows.len();
        for (b, (col, &j)) in blk.chunks_exact(nr.max(1)).zip(cols).enumerate() {
            match shape {
                Block::Rect => {
                    for (v, &i) in col.iter().zip(rows) {
                        let s = v.to_f64();
                        if self.reaches(i, s) && i != j && self.filter.ok(i, j) {
                            self.offer(i, j, s);
                        }
                    }
                }
                Block::Diag | Block::Off => {
                    let amax = if shape == Block::Diag { b } else { nr };
                    let mut wj = if self.mine(j) {
                        self.worst(j)
                    } else {
                        f64::NAN
                    };
                    let rows = rows.get(..amax).unwrap_or_default();
                    for (v, &i) in col.iter().zip(rows) {
                        let s = v.to_f64();
                        // NaN `wj` (j not ours): `s >= wj` is false.
                        let (ti, tj) = (self.reaches(i, s), s >= wj);
                        if (ti || tj) && self.filter.ok(i, j) {
                            if ti {
                                self.offer(i, j, s);
                            }
                            if tj {
                                self.offer(j, i, s);
                                wj = self.worst(j);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Per class `c`, the `kp` most similar pairs `(i, j)` with `i` of class `c` and `j` labeled of
/// another class (seed 003's `N_kp(c)`); stored with `lo = min(i,j)`, `hi = max(i,j)`.
/// In a distributed build a rank offers only the pairs with an item of its shard
/// (`first .. first + count`), and the ranks' lists are merged ([`PairTop::offer_unique`]).
pub(crate) struct PairTop<'w> {
    kp: usize,
    first: usize,
    count: usize,
    labels: &'w [u32],
    lo: &'w mut [usize],
    hi: &'w mut [usize],
    sim: &'w mut [f64],
}

impl<'w> PairTop<'w> {
    pub(crate) fn workspace(n_classes: usize, kp: usize) -> WorkReq {
        WorkReq::all_of(&[
            WorkReq::matrix::<usize>(n_classes, kp),
            WorkReq::matrix::<usize>(n_classes, kp),
            WorkReq::matrix::<f64>(n_classes, kp),
        ])
    }

    pub(crate) fn new(
        kp: usize,
        labels: &'w [u32],
        lo: &'w mut [usize],
        hi: &'w mut [usize],
        sim: &'w mut [f64],
    ) -> Self {
        lo.fill(NO_NEIGHBOR);
        hi.fill(NO_NEIGHBOR);
        sim.fill(f64::NEG_INFINITY);
        PairTop {
            kp,
            first: 0,
            count: usize::MAX,
            labels,
            lo,
            hi,
            sim,
        }
    }

    /// Only the pairs with an item of `first .. first + count` are taken from blocks.
    pub(crate) fn restrict(mut self, first: usize, count: usize) -> Self {
        self.first = first;
        self.count = count;
        self
    }

    /// Offers the pair `(lo, hi)` (`lo < hi`) with similarity `s` to class `c`, unless it
    /// is there already (merging lists that may hold the same pair).
    pub(crate) fn offer_unique(&mut self, c: usize, lo: usize, hi: usize, s: f64) {
        let (los, his, _) = self.get(c);
        if los.iter().zip(his).any(|(&a, &b)| a == lo && b == hi) {
            return;
        }
        self.offer(c, lo, hi, s);
    }

    /// Offers every pair of `other`'s lists (the same classes) to these
    /// heaps, each at most once per class: the union's top `kp` per class
    /// (exact, a strict total order), as for [`TopK::absorb`].
    pub(crate) fn absorb(&mut self, other: &PairTop<'_>) {
        let classes = self.sim.len() / self.kp.max(1);
        for c in 0..classes {
            let (lo, hi, sim) = other.get(c);
            for ((&l, &h), &s) in lo.iter().zip(hi).zip(sim) {
                if l != NO_NEIGHBOR {
                    self.offer_unique(c, l, h, s);
                }
            }
        }
    }

    /// Class `c`'s heap: its `kp` entries of each array (empty for a class it does not have).
    #[inline]
    fn heap(&mut self, c: usize) -> PairHeap<'_> {
        let base = c.wrapping_mul(self.kp);
        let r = base..base.wrapping_add(self.kp);
        match (
            self.sim.get_mut(r.clone()),
            self.lo.get_mut(r.clone()),
            self.hi.get_mut(r),
        ) {
            (Some(sim), Some(lo), Some(hi)) => PairHeap { sim, lo, hi },
            _ => PairHeap {
                sim: &mut [],
                lo: &mut [],
                hi: &mut [],
            },
        }
    }

    #[inline]
    fn offer(&mut self, c: usize, lo: usize, hi: usize, s: f64) {
        let mut h = self.heap(c);
        if !h.better(s, lo, hi, 0) {
            return;
        }
        h.set(0, s, lo, hi);
        // Sift down (worst at the root).
        let mut p = 0usize;
        loop {
            let c1 = p.wrapping_mul(2).wrapping_add(1);
            let Some((s1, lo1, hi1)) = h.at(c1) else {
                break;
            };
            let c2 = c1.wrapping_add(1);
            let c = if h.better(s1, lo1, hi1, c2) { c2 } else { c1 };
            let Some((sp, lop, hip)) = h.at(p) else {
                break;
            };
            if h.better(sp, lop, hip, c) {
                h.swap(p, c);
                p = c;
            } else {
                break;
            }
        }
    }

    /// Sorts every class's pairs best first (selection sort: `kp` is small and this runs once).
    pub(crate) fn finish(&mut self) {
        let kp = self.kp.max(1);
        let per_class = self
            .sim
            .chunks_exact_mut(kp)
            .zip(self.lo.chunks_exact_mut(kp));
        for ((sim, lo), hi) in per_class.zip(self.hi.chunks_exact_mut(kp)) {
            let mut h = PairHeap { sim, lo, hi };
            for p in 0..kp {
                let mut best = p;
                for q in p + 1..kp {
                    if let Some((s, lo, hi)) = h.at(q) {
                        if h.better(s, lo, hi, best) {
                            best = q;
                        }
                    }
                }
                h.swap(p, best);
            }
        }
    }

    /// Class `c`'s pairs `(lo, hi, sim)` (after [`PairTop::finish`]: best first).
    pub(crate) fn get(&self, c: usize) -> (&[usize], &[usize], &[f64]) {
        let base = c.wrapping_mul(self.kp);
        let r = base..base.wrapping_add(self.kp);
        (
            self.lo.get(r.clone()).unwrap_or_default(),
            self.hi.get(r.clone()).unwrap_or_default(),
            self.sim.get(r).unwrap_or_default(),
        )
    }
}

/// One class's pair heap: three arrays of the same length.
struct PairHeap<'h> {
    sim: &'h mut [f64],
    lo: &'h mut [usize],
    hi: &'h mut [usize],
}

impl PairHeap<'_> {
    /// Entry `p`; `None` past the end.
    #[inline(always)]
    fn at(&self, p: usize) -> Option<(f64, usize, usize)> {
        match (self.sim.get(p), self.lo.get(p), self.hi.get(p)) {
            (Some(&s), Some(&lo), Some(&hi)) => Some((s, lo, hi)),
            _ => None,
        }
    }

    /// Does `(s, lo, hi)` come before entry `p` (false past the end)?
    #[inline(always)]
    fn better(&self, s: f64, lo: usize, hi: usize, p: usize) -> bool {
        self.at(p)
            .is_some_and(|(sp, lop, hip)| s > sp || (s == sp && (lo, hi) < (lop, hip)))
    }

    /// Writes entry `p` (nothing past the end).
    #[inline(always)]
    fn set(&mut self, p: usize, s: f64, lo: usize, hi: usize) {
        if let (Some(a), Some(b), Some(c)) =
            (self.sim.get_mut(p), self.lo.get_mut(p), self.hi.get_mut(p))
        {
            (*a, *b, *c) = (s, lo, hi);
        }
    }

    /// Swaps entries `p` and `q` (inside: `at` found them).
    #[inline(always)]
    fn swap(&mut self, p: usize, q: usize) {
        swap_at(self.sim, p, q);
        swap_at(self.lo, p, q);
        swap_at(self.hi, p, q);
    }
}

impl<T: Real> Sink<T> for PairTop<'_> {
    fn visit(&mut self, rows: &[usize], cols: &[usize], blk: &[T], shape: Block) {
        let nr = rows.len();
        let kp = self.kp;
        // Class `c`'s worst similarity (`+inf` for a class it does not have).
        let worst = |sim: &[f64], c: usize| {
            sim.get(c.wrapping_mul(kp))
                .copied()
                .unwrap_or(f64::INFINITY)
        };
        for (b, (col, &j)) in blk.chunks_exact(nr.max(1)).zip(cols).enumerate() {
            let Some(cj) = class_of(self.labels, j) else {
                continue;
            };
            let amax = if shape == Block::Diag { b } else { nr };
            for (v, &i) in col.iter().zip(rows.get(..amax).unwrap_or_default()) {
                let ci = match class_of(self.labels, i) {
                    Some(ci) if ci != cj && i != j => ci,
                    _ => continue,
                };
                if i.wrapping_sub(self.first) >= self.count
                    && j.wrapping_sub(self.first) >= self.count
                {
                    continue;
                }
                let s = v.to_f64();
                if s < worst(self.sim, ci) && s < worst(self.sim, cj) {
                    continue;
                }
                let (lo, hi) = if i < j { (i, j) } else { (j, i) };
                self.offer(ci, lo, hi, s);
                self.offer(cj, lo, hi, s);
            }
        }
    }
}

/// Two sinks fed the same blocks.
impl<T: Real, A: Sink<T>, B: Sink<T>> Sink<T> for (A, B) {
    fn visit(&mut self, rows: &[usize], cols: &[usize], blk: &[T], shape: Block) {
        self.0.visit(rows, cols, blk, shape);
        self.1.visit(rows, cols, blk, shape);
    }
}

/// Three sinks fed the same blocks.
impl<T: Real, A: Sink<T>, B: Sink<T>, C: Sink<T>> Sink<T> for (A, B, C) {
    fn visit(&mut self, rows: &[usize], cols: &[usize], blk: &[T], shape: Block) {
        self.0.visit(rows, cols, blk, shape);
        self.1.visit(rows, cols, blk, shape);
        self.2.visit(rows, cols, blk, shape);
    }
}

impl<T: Real, S: Sink<T>> Sink<T> for Option<S> {
    fn visit(&mut self, rows: &[usize], cols: &[usize], blk: &[T], shape: Block) {
        if let Some(s) = self {
            s.visit(rows, cols, blk, shape);
        }
    }
}
