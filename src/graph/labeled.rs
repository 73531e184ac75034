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
//! depend on the heaps at its start only. The labeled positions are split into tasks by
//! their number alone (`N_l / 64`, at most 8), each with its own evaluator (the scales
//! copied from the caller's): a task fills the candidate lists of its positions, and joins
//! its positions into a pair buffer (the pairs that would enter a heap as the heaps were when
//! the round began); when a buffer might overflow, the round ends and the buffers are
//! applied in task order, each task applying them to the heaps of its positions. Every heap
//! then receives the same pairs in the same order as on one thread, whatever the pool: the
//! same heaps, flags and insertion counts (so the same stop) as the serial search, bitwise
//! (`tests/graph_approx.rs` prints the graphs' fingerprints: those of the serial search
//! before the split, commit 1239d2d).
//!
//! **Measured** (`scale_pipeline lists 300000 1000000`: 10 % labeled, TGE `ApproxAll`, the
//! phase after NN-descent over all items; the 2-core machine at a load of 13–27, so the
//! wall times say nothing; CPU of the process): `N_l = 30 000`: 9.77 s CPU on one thread,
//! 9.66 s on two; `N_l = 100 000`: 41.3 s and 45.5 s. The same graphs on both. The
//! speed-up on an idle machine is still to be measured.
//!
//! **Cost.** Start: `N_l · (k'² + ks + ko)` values at most (`k'` the global lists'
//! length); each iteration at most `N_l · 3c²/2` values, far fewer after the first ones
//! (only pairs with a new candidate). **Memory**: `N` item positions and, per labeled item
//! (bounded by `N` in the workspace query, which does not see the labels),
//! `17·(ks + ko) + 24·c` bytes of heaps and candidate lists, plus per task one evaluator
//! (`8·H·N` bytes of item scales and its panels), its block and a buffer of `24·cap` bytes.

use crate::data::ViewSet;
use crate::error::{Error, Part};
use crate::linalg::real::Real;
use crate::par::{pieces, pieces_mut, Counted, Parallel};
use crate::similarity::engine::{self, Engine, Mode};
use crate::similarity::topk::{better, NO_NEIGHBOR};
use crate::similarity::{class_of, ClassIndex, KernelSet, Layout};
use crate::work::{Stack, WorkReq};
use core::sync::atomic::{AtomicUsize, Ordering};

/// Least same-class and other-class list lengths of the search (the output keeps `ka`, `kp`).
const LIST_MIN: usize = 10;
/// Least candidates per kind.
const CAND_MIN: usize = 20;
/// Labeled items per task (the split depends on `N_l` only).
const ITEMS_PER_TASK: usize = 64;
/// Most tasks (each has its own evaluator: `8·H·N` bytes of scales).
const MAX_TASKS: usize = 8;
/// Pairs a task's buffer holds (at least one unit's worst case).
const BUFFER_PAIRS: usize = 1 << 14;

/// Tasks for `nl` labeled items.
fn task_count(nl: usize) -> usize {
    (nl / ITEMS_PER_TASK).clamp(1, MAX_TASKS)
}

/// The search's sizes for `n` items (bounds: the labeled items are at most `n`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan {
    pub(crate) ks: usize,
    pub(crate) ko: usize,
    pub(crate) cand: usize,
    pub(crate) iters: usize,
    pub(crate) delta: f64,
    pub(crate) seed: u64,
    /// Who runs the tasks (NN-descent's `parallel`).
    pub(crate) par: Parallel,
}

impl Plan {
    /// From the graph's `ka`, `kp` and NN-descent's options (`candidates`, `iters`,
    /// `delta`, `seed`, `parallel`; zeros the defaults). `ann` validated by its own plan
    /// already.
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
            par: ann.parallel,
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

    /// Pairs of a task's buffer: at least one join's `c(c − 1)/2 + c²` and one start's
    /// `block()`.
    fn cap(&self) -> usize {
        let c = self.cand.max(1);
        let join = c
            .saturating_mul(c)
            .saturating_add(c.saturating_mul(c - 1) / 2);
        BUFFER_PAIRS.max(join).max(self.block())
    }

    /// One task's workspace: its block, list, buffer and evaluator.
    fn task_req<T>(&self, lay: &Layout) -> WorkReq {
        let eb = self.block();
        let cap = self.cap();
        WorkReq::all_of(&[
            WorkReq::matrix::<T>(eb, eb),
            WorkReq::new::<usize>(eb.saturating_mul(2)),
            WorkReq::new::<usize>(cap),
            WorkReq::new::<usize>(cap),
            WorkReq::new::<f64>(cap),
            engine::workspace::<T>(lay, eb),
        ])
    }

    /// Workspace of [`lists`] for the items of `lay` (the labeled ones at most all).
    pub(crate) fn workspace<T>(&self, lay: &Layout) -> WorkReq {
        let n = lay.n;
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
            self.task_req::<T>(lay).times(task_count(n)),
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

/// The heaps of every labeled position and the item → position map, read-only (the
/// joins' filter).
#[derive(Clone, Copy)]
struct Heaps<'h> {
    k: usize,
    ks: usize,
    labels: &'h [u32],
    pos: &'h [usize],
    idx: &'h [usize],
    sim: &'h [f64],
}

impl Heaps<'_> {
    /// Would `s` enter `x`'s heap of the relation of `{x, y}` (its worst beaten)?
    fn reaches(&self, x: usize, y: usize, s: f64) -> bool {
        let Some(&p) = self.pos.get(x) else {
            return false;
        };
        let base = p.wrapping_mul(self.k);
        let at = if class_of(self.labels, x) == class_of(self.labels, y) {
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

/// One task: its evaluator, block, list and pair buffer, and its positions.
struct Task<'a, 'w, T, VS: ?Sized> {
    eng: Engine<'a, 'w, T, VS>,
    blk: &'w mut [T],
    list: &'w mut [usize],
    ua: &'w mut [usize],
    ub: &'w mut [usize],
    us: &'w mut [f64],
    len: usize,
    /// Next position, end of the task's positions.
    cur: usize,
    end: usize,
    evals: u64,
}

impl<T, VS: ?Sized> Task<'_, '_, T, VS> {
    /// Buffers the pair `{a, b}` with similarity `s` if it would enter a heap as they were
    /// when the round began (a pair that would not then never would: the heaps' worst
    /// entries only improve).
    #[inline]
    fn emit(&mut self, h: &Heaps<'_>, a: usize, b: usize, s: f64) {
        if !(h.reaches(a, b, s) || h.reaches(b, a, s)) {
            return;
        }
        if let (Some(x), Some(y), Some(z)) = (
            self.ua.get_mut(self.len),
            self.ub.get_mut(self.len),
            self.us.get_mut(self.len),
        ) {
            (*x, *y, *z) = (a, b, s);
            self.len += 1;
        }
    }

    fn pairs(&self) -> impl Iterator<Item = (usize, usize, f64)> + '_ {
        self.ua
            .iter()
            .zip(self.ub.iter())
            .zip(self.us.iter())
            .take(self.len)
            .map(|((&a, &b), &s)| (a, b, s))
    }
}

type Tasks<'a, 'w, T, VS> = [Option<Task<'a, 'w, T, VS>>; MAX_TASKS];

/// Runs `unit` over every task's positions (`unit` returns `false` when the task's buffer
/// might not hold the next unit's pairs) in rounds: the tasks join until their buffers are
/// full, then the buffers are applied in task order, task `t` applying them to the heaps of
/// its positions. Returns the heap insertions.
#[allow(clippy::too_many_arguments)]
fn rounds<'a, 'w, T: Real, VS: ViewSet<T> + Sync + ?Sized, U>(
    tasks: &mut Tasks<'a, 'w, T, VS>,
    (nt, chunk, nl): (usize, usize, usize),
    par: Parallel,
    (labels, pos): (&[u32], &[usize]),
    (idx, sim, flag): (&mut [usize], &mut [f64], &mut [u8]),
    (k, ks): (usize, usize),
    unit: &U,
) -> Result<usize, Error>
where
    Task<'a, 'w, T, VS>: Send,
    U: Fn(&mut Task<'a, 'w, T, VS>, &Heaps<'_>) -> Result<bool, Error> + Sync,
{
    for (t, task) in tasks.iter_mut().take(nt).flatten().enumerate() {
        task.cur = t * chunk;
        task.end = ((t + 1) * chunk).min(nl);
    }
    let inserted = AtomicUsize::new(0);
    loop {
        if tasks.iter().flatten().all(|t| t.cur >= t.end) {
            break;
        }
        {
            let h = Heaps {
                k,
                ks,
                labels,
                pos,
                idx,
                sim,
            };
            par.run_items(tasks.iter_mut().take(nt), &|task| {
                let Some(task) = task else {
                    return Err(Error::Internal);
                };
                task.len = 0;
                while task.cur < task.end {
                    if !unit(task, &h)? {
                        break;
                    }
                }
                Ok(())
            })?;
        }
        let done: &Tasks<'a, 'w, T, VS> = tasks;
        let cl = (chunk * k).max(1);
        let items = Counted::new(
            pieces_mut(idx, cl)
                .zip(pieces_mut(sim, cl))
                .zip(pieces_mut(flag, cl))
                .enumerate(),
            nt,
        );
        par.run_items(items, &|(t, ((ix, sm), fl))| {
            let lo = t * chunk;
            let hi = lo + ix.len() / k.max(1);
            let mut count = 0;
            for task in done.iter().flatten() {
                for (a, b, s) in task.pairs() {
                    let same = class_of(labels, a) == class_of(labels, b);
                    for (x, y) in [(a, b), (b, a)] {
                        let p = pos.at(x)?;
                        if p < lo || p >= hi {
                            continue;
                        }
                        let base = (p - lo) * k;
                        let r = if same {
                            base..base + ks
                        } else {
                            base + ks..base + k
                        };
                        count += usize::from(push(
                            ix.part_mut(r.clone())?,
                            sm.part_mut(r.clone())?,
                            fl.part_mut(r)?,
                            y,
                            s,
                        ));
                    }
                }
            }
            inserted.fetch_add(count, Ordering::Relaxed);
            Ok(())
        })?;
    }
    Ok(inserted.into_inner())
}

/// Finds the labeled lists (module docs) with evaluators over `views` and `kernels` (layout
/// `lay`) in the fused mode with weights `eta`, their scales and bandwidths copied from
/// `from` (bandwidths resolved), the global lists `nbr` (`N × kk`, `NO_NEIGHBOR` allowed;
/// `kk = 0`: random starts only) and `st` sized by [`Plan::workspace`]; the tasks run on
/// `plan.par`. Returns the lists and the values evaluated.
#[allow(clippy::too_many_arguments)]
pub(crate) fn lists<'w, T: Real, VS: ViewSet<T> + Sync + ?Sized, KS: KernelSet + ?Sized>(
    from: &Engine<'_, '_, T, VS>,
    (views, kernels, lay, eta): (&VS, &KS, &Layout, &[f64]),
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
    let cap = plan.cap();
    let par = plan.par;
    let pos: &'w mut [usize] = st.take(n)?;
    let idx: &'w mut [usize] = st.take_matrix(nl, k)?;
    let sim: &'w mut [f64] = st.take_matrix(nl, k)?;
    let flag: &mut [u8] = st.take_matrix(nl, k)?;
    let newc: &mut [usize] = st.take_matrix(nl, c)?;
    let oldc: &mut [usize] = st.take_matrix(nl, c)?;
    let newp: &mut [u32] = st.take_matrix(nl, c)?;
    let oldp: &mut [u32] = st.take_matrix(nl, c)?;
    let nt = task_count(nl);
    let chunk = nl.div_ceil(nt.max(1)).max(1);
    let slots = st.take_slots(nt, plan.task_req::<T>(lay))?;
    let mut tasks: Tasks<'_, 'w, T, VS> = core::array::from_fn(|_| None);
    for (slot, dst) in slots.zip(tasks.iter_mut()) {
        let mut ts = Stack::new(slot);
        let blk: &mut [T] = ts.take_matrix(eb, eb)?;
        let list: &mut [usize] = ts.take(eb.checked_mul(2).ok_or(Error::SizeOverflow)?)?;
        let ua: &mut [usize] = ts.take(cap)?;
        let ub: &mut [usize] = ts.take(cap)?;
        let us: &mut [f64] = ts.take(cap)?;
        let mut eng = Engine::new_bare(views, kernels, lay, eb, ts)?;
        eng.copy_scales(from)?;
        eng.set_mode(Mode::Fused, Some(eta));
        eng.set_direct(true);
        *dst = Some(Task {
            eng,
            blk,
            list,
            ua,
            ub,
            us,
            len: 0,
            cur: 0,
            end: 0,
            evals: 0,
        });
    }
    pos.fill(NO_NEIGHBOR);
    for (p, &i) in lab.iter().enumerate() {
        *pos.at_mut(i)? = p;
    }
    let pos: &[usize] = pos;
    idx.fill(NO_NEIGHBOR);
    sim.fill(f64::NEG_INFINITY);
    flag.fill(0);
    let shape = (nt, chunk, nl);
    let sizes = (k, ks);

    // Start: the labeled items within two hops in the global lists, then random ones.
    let start = |task: &mut Task<'_, '_, T, VS>, h: &Heaps<'_>| -> Result<bool, Error> {
        if task.len + eb > cap {
            return Ok(false);
        }
        let i = lab.at(task.cur)?;
        task.cur += 1;
        let list = &mut *task.list;
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
        let cols = task.list.part(..m)?;
        task.eng.block(core::slice::from_ref(&i), cols, task.blk)?;
        task.evals += m as u64;
        for cc in 0..m {
            let (l, v) = (task.list.at(cc)?, task.blk.at(cc)?.to_f64());
            task.emit(h, i, l, v);
        }
        Ok(true)
    };
    rounds(
        &mut tasks,
        shape,
        par,
        (labels, pos),
        (&mut *idx, &mut *sim, &mut *flag),
        sizes,
        &start,
    )?;

    // Iterations.
    let iters = if plan.iters == 0 {
        (libm::round(libm::log2(nl.max(2) as f64)) as usize).max(5)
    } else {
        plan.iters
    };
    let stop = plan.delta * nl as f64 * k as f64;
    for it in 0..iters {
        // Candidates: each task fills the lists of its positions from every entry.
        newc.fill(NO_NEIGHBOR);
        oldc.fill(NO_NEIGHBOR);
        newp.fill(u32::MAX);
        oldp.fill(u32::MAX);
        {
            let (ix, fl) = (&*idx, &*flag);
            let cl = (chunk * c).max(1);
            let items = Counted::new(
                pieces_mut(newc, cl)
                    .zip(pieces_mut(oldc, cl))
                    .zip(pieces_mut(newp, cl))
                    .zip(pieces_mut(oldp, cl))
                    .enumerate(),
                nt,
            );
            let seed = plan.seed;
            par.run_items(items, &|(t, (((nc, oc), np), op))| {
                let lo = t * chunk;
                let hi = lo + nc.len() / c.max(1);
                for (p, &i) in lab.iter().enumerate() {
                    for e in 0..k {
                        let at = p * k + e;
                        let j = ix.at(at)?;
                        if j == NO_NEIGHBOR {
                            continue;
                        }
                        let q = pos.at(j)?;
                        let (pm, qm) = ((lo..hi).contains(&p), (lo..hi).contains(&q));
                        if !(pm || qm) {
                            continue;
                        }
                        let pr = priority(seed, it, i, j);
                        let (lc, lp) = if fl.at(at)? != 0 {
                            (&mut *nc, &mut *np)
                        } else {
                            (&mut *oc, &mut *op)
                        };
                        if pm {
                            let r = (p - lo) * c;
                            cand_push(lc.part_mut(r..r + c)?, lp.part_mut(r..r + c)?, j, pr);
                        }
                        if qm {
                            let r = (q - lo) * c;
                            cand_push(lc.part_mut(r..r + c)?, lp.part_mut(r..r + c)?, i, pr);
                        }
                    }
                }
                Ok(())
            })?;
        }
        // The sampled new entries become old.
        {
            let nc = &*newc;
            let cl = (chunk * k).max(1);
            let items = Counted::new(pieces_mut(flag, cl).zip(pieces(idx, cl)).enumerate(), nt);
            par.run_items(items, &|(t, (fl, ix))| {
                for (r, (fr, xr)) in pieces_mut(fl, k).zip(pieces(ix, k)).enumerate() {
                    let p = t * chunk + r;
                    let list = nc.part(p * c..p * c + c)?;
                    for (f, &j) in fr.iter_mut().zip(xr) {
                        if *f != 0 && list.contains(&j) {
                            *f = 0;
                        }
                    }
                }
                Ok(())
            })?;
        }
        // Local joins.
        let (nc, oc) = (&*newc, &*oldc);
        let join = |task: &mut Task<'_, '_, T, VS>, h: &Heaps<'_>| -> Result<bool, Error> {
            let p = task.cur;
            let nw = valid(nc.part(p * c..p * c + c)?);
            let od = valid(oc.part(p * c..p * c + c)?);
            let (nr, no) = (nw.len(), od.len());
            if task.len + nr * nr.saturating_sub(1) / 2 + nr * no > cap {
                return Ok(false);
            }
            task.cur += 1;
            if nr == 0 {
                return Ok(true);
            }
            let all = task.list.part_mut(..nr + no)?;
            all.part_mut(..nr)?.copy_checked(nw)?;
            all.part_mut(nr..)?.copy_checked(od)?;
            task.eng
                .block_prefix(task.list.part(..nr + no)?, nr, task.blk)?;
            task.evals += (nr * (nr - 1) / 2 + nr * no) as u64;
            // Columns first, rows within (the order of the serial search).
            for b in 1..nr + no {
                let y = task.list.at(b)?;
                for a in 0..b.min(nr) {
                    let x = task.list.at(a)?;
                    if x == y {
                        continue;
                    }
                    let v = task.blk.at(a + b * nr)?.to_f64();
                    task.emit(h, x, y, v);
                }
            }
            Ok(true)
        };
        let updates = rounds(
            &mut tasks,
            shape,
            par,
            (labels, pos),
            (&mut *idx, &mut *sim, &mut *flag),
            sizes,
            &join,
        )?;
        if (updates as f64) <= stop {
            break;
        }
    }
    let evals = tasks.iter().flatten().map(|t| t.evals).sum();
    let (idx, sim): (&'w [usize], &'w [f64]) = (idx, sim);
    Ok((Lists { ks, ko, idx, sim }, evals))
}
