//! Top-k selection as block sinks: per-item neighbour heaps and per-class pair heaps.
//!
//! Order everywhere: a larger similarity is better; equal similarities are ordered by the lower
//! index (for pairs: the lower `(min(i,j), max(i,j))`), so the selected set is the top `k` of a
//! strict total order and does not depend on the order in which candidates arrive.

use super::class_of;
use super::engine::{Block, Sink};
use crate::linalg::real::Real;
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

    /// The worst similarity kept for item `i` (one of the heaps' items; for
    /// any other, `+∞`: nothing is offered). Every index of the heaps is
    /// checked (`get`, never a miss for the heaps' items): no panic path.
    #[inline(always)]
    fn worst(&self, i: usize) -> f64 {
        let at = (i - self.lo) * self.k;
        self.sim.get(at).copied().unwrap_or(f64::INFINITY)
    }

    /// Offers `j` with similarity `s` to item `i`'s heap (`i` one of the heaps' items).
    #[inline]
    fn offer(&mut self, i: usize, j: usize, s: f64) {
        let base = (i - self.lo) * self.k;
        let r = base..base + self.k;
        let (Some(sh), Some(xh)) = (self.sim.get_mut(r.clone()), self.idx.get_mut(r)) else {
            return;
        };
        let (Some(s0), Some(x0)) = (sh.first_mut(), xh.first_mut()) else {
            return;
        };
        if better(s, j, *s0, *x0) {
            (*s0, *x0) = (s, j);
            sift_down(sh, xh, 0, self.k);
        }
    }

    /// Sorts every item's list best first (heap sort, `O(k log k)` per item).
    pub(crate) fn finish(&mut self) {
        let k = self.k;
        for c in 0..self.len {
            let r = c * k..(c + 1) * k;
            let (Some(s), Some(x)) = (self.sim.get_mut(r.clone()), self.idx.get_mut(r)) else {
                break;
            };
            for end in (1..k).rev() {
                if end < s.len() && end < x.len() {
                    s.swap(0, end);
                    x.swap(0, end);
                }
                sift_down(s, x, 0, end);
            }
        }
    }

    /// The storage back: item `i`'s list at `i·k..` (after [`TopK::finish`]:
    /// best first).
    pub(crate) fn into_parts(self) -> (&'w [usize], &'w [f64]) {
        (self.idx, self.sim)
    }

    /// Item `i`'s list (after [`TopK::finish`]: best first); `i` one of the heaps' items.
    pub(crate) fn get(&self, i: usize) -> (&[usize], &[f64]) {
        let r = (i - self.lo) * self.k..(i - self.lo + 1) * self.k;
        match (self.idx.get(r.clone()), self.sim.get(r)) {
            (Some(x), Some(s)) => (x, s),
            _ => (&[], &[]),
        }
    }
}

/// Restores the heap (worst at the root) below `p` within `len` entries.
#[inline]
fn sift_down(s: &mut [f64], x: &mut [usize], mut p: usize, len: usize) {
    let len = len.min(s.len()).min(x.len());
    let (s, x) = (&mut s[..len], &mut x[..len]);
    loop {
        let (c1, c2) = (2 * p + 1, 2 * p + 2);
        let (Some(&s1), Some(&x1)) = (s.get(c1), x.get(c1)) else {
            return;
        };
        // The worse child.
        let (mut c, mut sc, mut xc) = (c1, s1, x1);
        if let (Some(&s2), Some(&x2)) = (s.get(c2), x.get(c2)) {
            if better(s1, x1, s2, x2) {
                (c, sc, xc) = (c2, s2, x2);
            }
        }
        let (Some(&sp), Some(&xp)) = (s.get(p), x.get(p)) else {
            return;
        };
        if !better(sp, xp, sc, xc) {
            return;
        }
        // Swap p and c (both in range: read above).
        if let (Some(a), Some(b)) = (s.get_mut(p), x.get_mut(p)) {
            (*a, *b) = (sc, xc);
        }
        if let (Some(a), Some(b)) = (s.get_mut(c), x.get_mut(c)) {
            (*a, *b) = (sp, xp);
        }
        p = c;
    }
}

impl<T: Real> Sink<T> for TopK<'_> {
    fn visit(&mut self, rows: &[usize], cols: &[usize], blk: &[T], shape: Block) {
        let nr = rows.len();
        for (b, &j) in cols.iter().enumerate() {
            // Column b of the `nr × cols` block (the engine's blocks are whole).
            let Some(col) = blk.get(b * nr..(b + 1) * nr) else {
                break;
            };
            match shape {
                Block::Rect => {
                    for (&i, &x) in rows.iter().zip(col) {
                        let s = x.to_f64();
                        if self.mine(i) && s >= self.worst(i) && i != j && self.filter.ok(i, j) {
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
                    for (&i, &x) in rows.iter().zip(col).take(amax) {
                        let s = x.to_f64();
                        // NaN `wj` (j not ours): `s >= wj` is false.
                        let (ti, tj) = (self.mine(i) && s >= self.worst(i), s >= wj);
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

    /// Entry `p`: `(sim, lo, hi)`. Every index of the heaps is checked
    /// (`entry`/`set`, never a miss for a class's slots): no panic path.
    #[inline(always)]
    fn entry(&self, p: usize) -> Option<(f64, usize, usize)> {
        Some((*self.sim.get(p)?, *self.lo.get(p)?, *self.hi.get(p)?))
    }

    #[inline(always)]
    fn set(&mut self, p: usize, (s, lo, hi): (f64, usize, usize)) {
        if let (Some(a), Some(b), Some(c)) =
            (self.sim.get_mut(p), self.lo.get_mut(p), self.hi.get_mut(p))
        {
            (*a, *b, *c) = (s, lo, hi);
        }
    }

    #[inline(always)]
    fn better(&self, s: f64, lo: usize, hi: usize, p: usize) -> bool {
        let Some((sp, lp, hp)) = self.entry(p) else {
            return false;
        };
        s > sp || (s == sp && (lo, hi) < (lp, hp))
    }

    #[inline]
    fn offer(&mut self, c: usize, lo: usize, hi: usize, s: f64) {
        let base = c * self.kp;
        if !self.better(s, lo, hi, base) {
            return;
        }
        self.set(base, (s, lo, hi));
        // Sift down (worst at the root).
        let mut p = 0;
        loop {
            let (c1, c2) = (2 * p + 1, 2 * p + 2);
            if c1 >= self.kp {
                break;
            }
            let (q1, q2) = (base + c1, base + c2);
            let Some((s1, l1, h1)) = self.entry(q1) else {
                break;
            };
            let c = if c2 < self.kp && self.better(s1, l1, h1, q2) {
                c2
            } else {
                c1
            };
            let (pp, qc) = (base + p, base + c);
            let (Some(ep), Some(ec)) = (self.entry(pp), self.entry(qc)) else {
                break;
            };
            if self.better(ep.0, ep.1, ep.2, qc) {
                self.set(pp, ec);
                self.set(qc, ep);
                p = c;
            } else {
                break;
            }
        }
    }

    /// Sorts every class's pairs best first (selection sort: `kp` is small and this runs once).
    pub(crate) fn finish(&mut self) {
        let kp = self.kp;
        for c in 0..self.sim.len() / kp.max(1) {
            let base = c * kp;
            for p in base..base + kp {
                let mut best = p;
                for q in p + 1..base + kp {
                    if let Some((sq, lq, hq)) = self.entry(q) {
                        if self.better(sq, lq, hq, best) {
                            best = q;
                        }
                    }
                }
                if let (Some(ep), Some(eb)) = (self.entry(p), self.entry(best)) {
                    self.set(p, eb);
                    self.set(best, ep);
                }
            }
        }
    }

    /// Class `c`'s pairs `(lo, hi, sim)` (after [`PairTop::finish`]: best first).
    pub(crate) fn get(&self, c: usize) -> (&[usize], &[usize], &[f64]) {
        let r = c * self.kp..(c + 1) * self.kp;
        match (
            self.lo.get(r.clone()),
            self.hi.get(r.clone()),
            self.sim.get(r),
        ) {
            (Some(l), Some(h), Some(s)) => (l, h, s),
            _ => (&[], &[], &[]),
        }
    }
}

impl<T: Real> Sink<T> for PairTop<'_> {
    fn visit(&mut self, rows: &[usize], cols: &[usize], blk: &[T], shape: Block) {
        let nr = rows.len();
        let kp = self.kp;
        for (b, &j) in cols.iter().enumerate() {
            let Some(cj) = class_of(self.labels, j) else {
                continue;
            };
            let Some(col) = blk.get(b * nr..(b + 1) * nr) else {
                break;
            };
            let amax = if shape == Block::Diag { b } else { nr };
            for (&i, &x) in rows.iter().zip(col).take(amax) {
                let ci = match class_of(self.labels, i) {
                    Some(ci) if ci != cj && i != j => ci,
                    _ => continue,
                };
                if i.wrapping_sub(self.first) >= self.count
                    && j.wrapping_sub(self.first) >= self.count
                {
                    continue;
                }
                let s = x.to_f64();
                let worst = |c: usize| self.sim.get(c * kp).copied().unwrap_or(f64::INFINITY);
                if s < worst(ci) && s < worst(cj) {
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
