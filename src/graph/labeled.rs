//! TGE's lists over the labeled items without the sweep over all labeled pairs (issue 30,
//! item 2): NN-descent over the labeled items with two lists per item, one per relation.
//!
//! The exact schedule finds, in one blocked sweep over the `N_l(N_l − 1)/2` labeled pairs,
//! each labeled item's `ka` nearest labeled items of its class (TGE's `N⁺_ka`) and, for the
//! penalty, its `kp` nearest labeled items of other classes (`Penalty::ItemNeighbors`) or
//! each class's `kp` most similar cross pairs (`Penalty::ClassPairs`). Both penalties come
//! from the per-item other-class lists: a class's `kp` best cross pairs `(i, j)`, `i` of
//! the class, all have `j` among `i`'s `kp` nearest other-class items (else `i` would have
//! `kp` better pairs), so the union of those lists holds them.
//!
//! **The search.** Every labeled item keeps two heaps, same-class (`ks = max(ka, 10)`
//! entries) and other-class (`ko = max(kp, 10)`), each entry flagged *new* until it has been
//! a candidate once. Start: the labeled items within two hops of the item in the global
//! approximate graph (NN-descent's lists over all items, already built), then random items
//! of its class and of the other classes (seeded per item) for heaps not full. Iterations
//! (NN-descent's local join, as in `similarity::nndescent`): each item's new and old entries
//! of both heaps, and the items whose heaps hold it (reverse entries), are sampled into two
//! candidate lists of at most `c` items (the smallest seeded hashes of the pair and the
//! iteration); then every (new, new) and (new, old) pair of each item's candidates is
//! evaluated and offered to both items' heaps, the same-class or the other-class ones by
//! their labels. A pair of different classes reaches an item through a same-class
//! neighbour's other-class list, so the other-class lists improve through the same-class
//! ones. It stops after `iters` iterations or when one inserts at most `δ · N_l · (ks + ko)`
//! entries (the NN-descent options' `iters`, `delta`, `candidates`, `seed`).
//!
//! **Same bits for every pool.** The evaluator runs in its direct mode (a value does not
//! depend on the block it is computed in, nor on the side of each item), the heaps keep the
//! top entries of a strict total order with no duplicate, and an iteration's candidates
//! depend on the heaps at its start only: the heaps after an iteration are those of its
//! pairs whatever the order they are offered in. The candidates and the joins run on the
//! calling thread.
//!
//! **Cost.** Start: `N_l · (k'² + ks + ko)` values at most (`k'` the global lists'
//! length); each iteration at most `N_l · 3c²/2` values, far fewer after the first ones
//! (only pairs with a new candidate). **Memory**: `N` item positions and, per labeled item
//! (bounded by `N` in the workspace query, which does not see the labels),
//! `17·(ks + ko) + 24·c` bytes of heaps and candidate lists, plus one block evaluator.

use crate::data::ViewSet;
use crate::error::{Error, Part};
use crate::linalg::real::Real;
use crate::similarity::engine::Engine;
use crate::similarity::topk::{better, NO_NEIGHBOR};
use crate::similarity::{class_of, ClassIndex};
use crate::work::{Stack, WorkReq};

/// Least same-class and other-class list lengths of the search (the output keeps `ka`, `kp`).
const LIST_MIN: usize = 10;
/// Least candidates per kind.
const CAND_MIN: usize = 20;

/// The search's sizes for `n` items (bounds: the labeled items are at most `n`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan {
    pub(crate) ks: usize,
    pub(crate) ko: usize,
    pub(crate) cand: usize,
    pub(crate) iters: usize,
    pub(crate) delta: f64,
    pub(crate) seed: u64,
}

impl Plan {
    /// From the graph's `ka`, `kp` and NN-descent's options (`candidates`, `iters`,
    /// `delta`, `seed`; zeros the defaults). `ann` validated by its own plan already.
    pub(crate) fn new(ka: usize, kp: usize, ann: &crate::similarity::AnnParams) -> Plan {
        let ks = ka.max(LIST_MIN);
        let ko = kp.max(LIST_MIN);
        let cand = if ann.candidates == 0 {
            CAND_MIN.max(ks)
        } else {
            ann.candidates
        };
        Plan {
            ks,
            ko,
            cand,
            iters: ann.iters,
            delta: ann.delta,
            seed: ann.seed,
        }
    }

    /// Block side the evaluator needs (the join's `c × 2c`).
    pub(crate) fn block(&self) -> usize {
        self.cand
            .saturating_mul(2)
            .max(self.ks)
            .max(self.ko)
            .max(16)
    }

    /// Workspace of [`lists`] for `n` items (besides the evaluator and its block).
    pub(crate) fn workspace(&self, n: usize) -> WorkReq {
        let k = self.ks.saturating_add(self.ko);
        WorkReq::all_of(&[
            WorkReq::new::<usize>(n),
            WorkReq::matrix::<usize>(n, k),
            WorkReq::matrix::<f64>(n, k),
            WorkReq::matrix::<u8>(n, k),
            WorkReq::matrix::<usize>(n, self.cand),
            WorkReq::matrix::<usize>(n, self.cand),
            WorkReq::matrix::<u32>(n, self.cand),
            WorkReq::matrix::<u32>(n, self.cand),
            WorkReq::new::<usize>(self.block().saturating_mul(2)),
        ])
    }
}

/// One list: indices and similarities.
pub(crate) type List<'a> = (&'a [usize], &'a [f64]);

/// The finished lists: per labeled position `p` (item `ci.labeled()[p]`), `ks` same-class
/// then `ko` other-class entries (`NO_NEIGHBOR` where none), in heap order.
pub(crate) struct Lists<'w> {
    pub(crate) ks: usize,
    pub(crate) ko: usize,
    pub(crate) idx: &'w [usize],
    pub(crate) sim: &'w [f64],
}

impl Lists<'_> {
    /// Position `p`'s same-class and other-class entries `(index, similarity)`.
    pub(crate) fn get(&self, p: usize) -> (List<'_>, List<'_>) {
        let k = self.ks + self.ko;
        let b = p.wrapping_mul(k);
        let i = self.idx.get(b..b.wrapping_add(k)).unwrap_or_default();
        let s = self.sim.get(b..b.wrapping_add(k)).unwrap_or_default();
        let (i1, i2) = i.split_at(self.ks.min(i.len()));
        let (s1, s2) = s.split_at(self.ks.min(s.len()));
        ((i1, s1), (i2, s2))
    }
}

#[inline]
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Sampling priority of the pair `{i, j}` in iteration `it`.
#[inline]
fn priority(seed: u64, it: usize, i: usize, j: usize) -> u32 {
    let (a, b) = if i < j { (i, j) } else { (j, i) };
    (mix(seed ^ mix((it as u64) << 40 ^ a as u64) ^ (b as u64).rotate_left(21)) >> 32) as u32
}

/// Offers `(j, s)` to one heap (worst at the root, no duplicates); whether it entered.
fn push(idx: &mut [usize], sim: &mut [f64], flag: &mut [u8], j: usize, s: f64) -> bool {
    let (Some(&s0), Some(&j0)) = (sim.first(), idx.first()) else {
        return false;
    };
    if !better(s, j, s0, j0) || idx.contains(&j) {
        return false;
    }
    let len = idx.len().min(sim.len()).min(flag.len());
    let mut p = 0;
    loop {
        let c1 = 2 * p + 1;
        if c1 >= len {
            break;
        }
        let c2 = c1 + 1;
        let (Some(&sa), Some(&ja)) = (sim.get(c1), idx.get(c1)) else {
            break;
        };
        let (c, sc, jc) = match (sim.get(c2), idx.get(c2)) {
            (Some(&sb), Some(&jb)) if c2 < len && better(sa, ja, sb, jb) => (c2, sb, jb),
            _ => (c1, sa, ja),
        };
        if !better(s, j, sc, jc) {
            break;
        }
        let fc = flag.get(c).copied().unwrap_or(0);
        if let (Some(x), Some(y), Some(f)) = (sim.get_mut(p), idx.get_mut(p), flag.get_mut(p)) {
            (*x, *y, *f) = (sc, jc, fc);
        }
        p = c;
    }
    if let (Some(x), Some(y), Some(f)) = (sim.get_mut(p), idx.get_mut(p), flag.get_mut(p)) {
        (*x, *y, *f) = (s, j, 1);
    }
    true
}

/// Keeps the `c` smallest `(priority, index)` of a candidate list (no duplicates).
fn cand_push(idx: &mut [usize], pri: &mut [u32], j: usize, pr: u32) {
    let mut worst: Option<(usize, u32, usize)> = None;
    for (t, (&x, &q)) in idx.iter().zip(pri.iter()).enumerate() {
        if x == j {
            return;
        }
        if x == NO_NEIGHBOR {
            if let (Some(a), Some(b)) = (idx.get_mut(t), pri.get_mut(t)) {
                (*a, *b) = (j, pr);
            }
            return;
        }
        if worst.is_none_or(|(_, wp, wx)| (q, x) > (wp, wx)) {
            worst = Some((t, q, x));
        }
    }
    if let Some((t, wp, wx)) = worst {
        if (pr, j) < (wp, wx) {
            if let (Some(a), Some(b)) = (idx.get_mut(t), pri.get_mut(t)) {
                (*a, *b) = (j, pr);
            }
        }
    }
}

/// The valid prefix of a candidate list.
fn valid(list: &[usize]) -> &[usize] {
    let n = list
        .iter()
        .position(|&x| x == NO_NEIGHBOR)
        .unwrap_or(list.len());
    list.get(..n).unwrap_or_default()
}

/// The heaps of every labeled position and the item → position map.
struct State<'w> {
    k: usize,
    ks: usize,
    pos: &'w mut [usize],
    idx: &'w mut [usize],
    sim: &'w mut [f64],
    flag: &'w mut [u8],
}

impl State<'_> {
    /// Offers the pair `{a, b}` (labeled items, `a != b`) with similarity `s` to both
    /// items' heaps of its relation; the entries inserted.
    fn offer(&mut self, labels: &[u32], a: usize, b: usize, s: f64) -> usize {
        let same = class_of(labels, a) == class_of(labels, b);
        let mut ins = 0;
        for (x, y) in [(a, b), (b, a)] {
            let Some(&p) = self.pos.get(x) else {
                continue;
            };
            let base = p.wrapping_mul(self.k);
            let r = if same {
                base..base.wrapping_add(self.ks)
            } else {
                base.wrapping_add(self.ks)..base.wrapping_add(self.k)
            };
            if let (Some(i), Some(sm), Some(f)) = (
                self.idx.get_mut(r.clone()),
                self.sim.get_mut(r.clone()),
                self.flag.get_mut(r),
            ) {
                ins += usize::from(push(i, sm, f, y, s));
            }
        }
        ins
    }

    /// Would `s` enter `x`'s heap of the relation of `{x, y}` (its worst beaten)?
    fn reaches(&self, labels: &[u32], x: usize, y: usize, s: f64) -> bool {
        let Some(&p) = self.pos.get(x) else {
            return false;
        };
        let base = p.wrapping_mul(self.k);
        let at = if class_of(labels, x) == class_of(labels, y) {
            base
        } else {
            base.wrapping_add(self.ks)
        };
        match (self.sim.get(at), self.idx.get(at)) {
            (Some(&w), Some(&j)) => better(s, y, w, j),
            _ => false,
        }
    }
}

/// Offers every pair `rows[a] × cols[b]` of the block that `keep(a, b)` accepts (`blk` column-major,
/// `rows.len()` rows); the entries inserted.
fn offer_block<T: Real>(
    st: &mut State<'_>,
    labels: &[u32],
    (rows, cols, blk): (&[usize], &[usize], &[T]),
    keep: impl Fn(usize, usize) -> bool,
) -> usize {
    let nr = rows.len().max(1);
    let mut ins = 0;
    for (b, (col, &y)) in blk.chunks_exact(nr).zip(cols).enumerate() {
        for (a, (v, &x)) in col.iter().zip(rows).enumerate() {
            if x == y || !keep(a, b) {
                continue;
            }
            let s = v.to_f64();
            if st.reaches(labels, x, y, s) || st.reaches(labels, y, x, s) {
                ins += st.offer(labels, x, y, s);
            }
        }
    }
    ins
}

/// Finds the labeled lists (module docs) with `eng` (bandwidths resolved, fused mode; set
/// to the direct mode here), `blk` of at least `plan.block()²` values, the global lists
/// `nbr` (`N × kk`, `NO_NEIGHBOR` allowed) and `st` sized by [`Plan::workspace`]. Returns
/// the lists and the values evaluated.
#[allow(clippy::too_many_arguments)]
pub(crate) fn lists<'w, T: Real, VS: ViewSet<T> + ?Sized>(
    eng: &mut Engine<'_, '_, T, VS>,
    blk: &mut [T],
    (labels, ci): (&[u32], &ClassIndex<'_>),
    (nbr, kk): (&[usize], usize),
    plan: &Plan,
    st: &mut Stack<'w>,
) -> Result<(Lists<'w>, u64), Error> {
    let n = labels.len();
    let lab = ci.labeled();
    let nl = lab.len();
    let (ks, ko, c) = (plan.ks, plan.ko, plan.cand.max(1));
    let k = ks + ko;
    let eb = plan.block();
    let pos: &mut [usize] = st.take(n)?;
    let idx: &'w mut [usize] = st.take_matrix(nl, k)?;
    let sim: &'w mut [f64] = st.take_matrix(nl, k)?;
    let flag: &mut [u8] = st.take_matrix(nl, k)?;
    let newc: &mut [usize] = st.take_matrix(nl, c)?;
    let oldc: &mut [usize] = st.take_matrix(nl, c)?;
    let newp: &mut [u32] = st.take_matrix(nl, c)?;
    let oldp: &mut [u32] = st.take_matrix(nl, c)?;
    let list: &mut [usize] = st.take(eb.checked_mul(2).ok_or(Error::SizeOverflow)?)?;
    pos.fill(NO_NEIGHBOR);
    for (p, &i) in lab.iter().enumerate() {
        *pos.at_mut(i)? = p;
    }
    idx.fill(NO_NEIGHBOR);
    sim.fill(f64::NEG_INFINITY);
    flag.fill(0);
    eng.set_direct(true);
    let mut s = State {
        k,
        ks,
        pos,
        idx,
        sim,
        flag,
    };
    let mut evals = 0u64;

    // Start: the labeled items within two hops in the global lists, then random ones.
    for &i in lab {
        let mut m = 0;
        let row = |j: usize| {
            let b = j.wrapping_mul(kk);
            nbr.get(b..b.wrapping_add(kk)).unwrap_or_default()
        };
        for &j in row(i) {
            if j == NO_NEIGHBOR {
                continue;
            }
            for &l in core::iter::once(&j).chain(row(j)) {
                if l != NO_NEIGHBOR
                    && l != i
                    && class_of(labels, l).is_some()
                    && m < eb
                    && !list.part(..m)?.contains(&l)
                {
                    *list.at_mut(m)? = l;
                    m += 1;
                }
            }
        }
        // Random fill: `ks` of its class, `ko` of the other classes (seeded per item).
        let mut z = mix(plan.seed ^ mix(i as u64 ^ 0x5eed_1abe_1ed0_0000));
        let cls = class_of(labels, i).map(|c| ci.class(c)).unwrap_or_default();
        for t in 0..k {
            z = mix(z);
            let pick = if t < ks {
                let len = cls.len() as u64;
                if len == 0 {
                    continue;
                }
                cls.get(((z >> 11) % len) as usize).copied()
            } else {
                lab.get(((z >> 11) % (nl as u64).max(1)) as usize).copied()
            };
            if let Some(l) = pick {
                if l != i && m < eb && !list.part(..m)?.contains(&l) {
                    *list.at_mut(m)? = l;
                    m += 1;
                }
            }
        }
        let cols = list.part(..m)?;
        let rows = core::slice::from_ref(&i);
        eng.block(rows, cols, blk)?;
        evals += m as u64;
        offer_block(&mut s, labels, (rows, cols, blk), |_, _| true);
    }

    // Iterations.
    let iters = if plan.iters == 0 {
        (libm::round(libm::log2(nl.max(2) as f64)) as usize).max(5)
    } else {
        plan.iters
    };
    let stop = plan.delta * nl as f64 * k as f64;
    for it in 0..iters {
        newc.fill(NO_NEIGHBOR);
        oldc.fill(NO_NEIGHBOR);
        newp.fill(u32::MAX);
        oldp.fill(u32::MAX);
        for (p, &i) in lab.iter().enumerate() {
            for e in 0..k {
                let at = p * k + e;
                let j = s.idx.at(at)?;
                if j == NO_NEIGHBOR {
                    continue;
                }
                let q = s.pos.at(j)?;
                let pr = priority(plan.seed, it, i, j);
                let (lc, lp) = if s.flag.at(at)? != 0 {
                    (&mut *newc, &mut *newp)
                } else {
                    (&mut *oldc, &mut *oldp)
                };
                cand_push(
                    lc.part_mut(p * c..p * c + c)?,
                    lp.part_mut(p * c..p * c + c)?,
                    j,
                    pr,
                );
                cand_push(
                    lc.part_mut(q * c..q * c + c)?,
                    lp.part_mut(q * c..q * c + c)?,
                    i,
                    pr,
                );
            }
        }
        // The sampled new entries become old.
        for p in 0..nl {
            let nc = newc.part(p * c..p * c + c)?;
            for e in 0..k {
                let at = p * k + e;
                if s.flag.at(at)? != 0 && nc.contains(&s.idx.at(at)?) {
                    *s.flag.at_mut(at)? = 0;
                }
            }
        }
        let mut updates = 0usize;
        for p in 0..nl {
            let nw = valid(newc.part(p * c..p * c + c)?);
            if nw.is_empty() {
                continue;
            }
            let od = valid(oldc.part(p * c..p * c + c)?);
            let nr = nw.len();
            let all = list.part_mut(..nr + od.len())?;
            all.part_mut(..nr)?.copy_checked(nw)?;
            all.part_mut(nr..)?.copy_checked(od)?;
            let all = list.part(..nr + od.len())?;
            let rows = all.part(..nr)?;
            eng.block_prefix(all, nr, blk)?;
            evals += (nr * (nr - 1) / 2 + nr * od.len()) as u64;
            updates += offer_block(&mut s, labels, (rows, all, blk), |a, b| b > a);
        }
        if (updates as f64) <= stop {
            break;
        }
    }
    let State { idx, sim, .. } = s;
    let (idx, sim): (&'w [usize], &'w [f64]) = (idx, sim);
    Ok((Lists { ks, ko, idx, sim }, evals))
}
