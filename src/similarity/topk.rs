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

    #[inline(always)]
    fn worst(&self, i: usize) -> f64 {
        self.sim[(i - self.lo) * self.k]
    }

    /// Offers `j` with similarity `s` to item `i`'s heap (`i` one of the heaps' items).
    #[inline]
    fn offer(&mut self, i: usize, j: usize, s: f64) {
        let base = (i - self.lo) * self.k;
        if better(s, j, self.sim[base], self.idx[base]) {
            self.sim[base] = s;
            self.idx[base] = j;
            sift_down(
                &mut self.sim[base..base + self.k],
                &mut self.idx[base..base + self.k],
                0,
                self.k,
            );
        }
    }

    /// Sorts every item's list best first (heap sort, `O(k log k)` per item).
    pub(crate) fn finish(&mut self) {
        let k = self.k;
        for (s, x) in self
            .sim
            .chunks_exact_mut(k)
            .zip(self.idx.chunks_exact_mut(k))
        {
            for end in (1..k).rev() {
                s.swap(0, end);
                x.swap(0, end);
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
        (&self.idx[r.clone()], &self.sim[r])
    }
}

/// Restores the heap (worst at the root) below `p` within `len` entries.
#[inline]
fn sift_down(s: &mut [f64], x: &mut [usize], mut p: usize, len: usize) {
    loop {
        let (c1, c2) = (2 * p + 1, 2 * p + 2);
        if c1 >= len {
            return;
        }
        // The worse child.
        let c = if c2 < len && better(s[c1], x[c1], s[c2], x[c2]) {
            c2
        } else {
            c1
        };
        if better(s[p], x[p], s[c], x[c]) {
            s.swap(p, c);
            x.swap(p, c);
            p = c;
        } else {
            return;
        }
    }
}

impl<T: Real> Sink<T> for TopK<'_> {
    fn visit(&mut self, rows: &[usize], cols: &[usize], blk: &[T], shape: Block) {
        let nr = rows.len();
        for (b, &j) in cols.iter().enumerate() {
            let col = &blk[b * nr..(b + 1) * nr];
            match shape {
                Block::Rect => {
                    for (a, &i) in rows.iter().enumerate() {
                        let s = col[a].to_f64();
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
                    for (a, &i) in rows[..amax].iter().enumerate() {
                        let s = col[a].to_f64();
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
        let base = c * self.kp;
        let r = base..base + self.kp;
        if self.lo[r.clone()]
            .iter()
            .zip(&self.hi[r])
            .any(|(&a, &b)| a == lo && b == hi)
        {
            return;
        }
        self.offer(c, lo, hi, s);
    }

    #[inline(always)]
    fn better(&self, s: f64, lo: usize, hi: usize, p: usize) -> bool {
        s > self.sim[p] || (s == self.sim[p] && (lo, hi) < (self.lo[p], self.hi[p]))
    }

    #[inline]
    fn offer(&mut self, c: usize, lo: usize, hi: usize, s: f64) {
        let base = c * self.kp;
        if !self.better(s, lo, hi, base) {
            return;
        }
        self.sim[base] = s;
        self.lo[base] = lo;
        self.hi[base] = hi;
        // Sift down (worst at the root).
        let mut p = 0;
        loop {
            let (c1, c2) = (2 * p + 1, 2 * p + 2);
            if c1 >= self.kp {
                break;
            }
            let (q1, q2) = (base + c1, base + c2);
            let c = if c2 < self.kp && self.better(self.sim[q1], self.lo[q1], self.hi[q1], q2) {
                c2
            } else {
                c1
            };
            let (pp, qc) = (base + p, base + c);
            if self.better(self.sim[pp], self.lo[pp], self.hi[pp], qc) {
                self.sim.swap(pp, qc);
                self.lo.swap(pp, qc);
                self.hi.swap(pp, qc);
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
                    if self.better(self.sim[q], self.lo[q], self.hi[q], best) {
                        best = q;
                    }
                }
                self.sim.swap(p, best);
                self.lo.swap(p, best);
                self.hi.swap(p, best);
            }
        }
    }

    /// Class `c`'s pairs `(lo, hi, sim)` (after [`PairTop::finish`]: best first).
    pub(crate) fn get(&self, c: usize) -> (&[usize], &[usize], &[f64]) {
        let r = c * self.kp..(c + 1) * self.kp;
        (&self.lo[r.clone()], &self.hi[r.clone()], &self.sim[r])
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
            let col = &blk[b * nr..(b + 1) * nr];
            let amax = if shape == Block::Diag { b } else { nr };
            for (a, &i) in rows[..amax].iter().enumerate() {
                let ci = match class_of(self.labels, i) {
                    Some(ci) if ci != cj && i != j => ci,
                    _ => continue,
                };
                if i.wrapping_sub(self.first) >= self.count
                    && j.wrapping_sub(self.first) >= self.count
                {
                    continue;
                }
                let s = col[a].to_f64();
                if s < self.sim[ci * kp] && s < self.sim[cj * kp] {
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
