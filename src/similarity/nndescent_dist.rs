//! NN-descent with the items sharded across ranks (issue 30, item 4): each rank holds
//! only its items' columns and the neighbour lists of its items; the lists of other
//! ranks' items and the columns of other ranks' candidates are fetched from their ranks,
//! a batch of items at a time (a simple, deterministic form of the distributed NN-descent
//! of Iwabuchi et al., "DNND", 2023). `graph::dist::tge_approx` builds TGE on it.
//!
//! **Start.** Each rank runs the single-process NN-descent ([`super::approx_knn`]: its
//! kernel bisector trees and iterations) over its own `N_r` items alone: lists of local
//! items, global indices. With several ranks, every rank then contributes a fixed sample
//! of `s = max(64, 2k)` of its items (evenly spaced over its range) to one all-gather of
//! `P·s` columns, and every item is offered its similarity to every sampled item of every
//! rank: the random remote candidates, which put each item near its own part of the data
//! on the other ranks.
//!
//! **Iterations** (only with several ranks). Each iteration visits the rank's items in
//! batches of `B` (`B = max(32, ⌈N / (2·c·P)⌉)`, `c` the candidates per item; every rank
//! runs the same number of batches, `⌈N_max / B⌉`, empty ones when it has fewer items):
//!
//! 1. the lists of the batch's remote neighbours are asked from their ranks (one exchange
//!    of the counts, one of the item numbers, one of the lists: `k` words each);
//! 2. each item's candidates are its neighbours' neighbours not already in its list, at
//!    most `c` of them, those of the smallest seeded hash of (iteration, pair): the sample
//!    is the same whoever computes it;
//! 3. the remote candidates' columns are asked from their ranks (counts, numbers, columns:
//!    `S = Σ_v M_v` words each);
//! 4. each item's similarity to each candidate is evaluated by the exact search's
//!    evaluator ([`super::engine::Engine`], the global magnitude factors, the resolved
//!    bandwidths) and offered to the item's list, and to the candidate's when the
//!    candidate is one of the rank's items.
//!
//! After each iteration the ranks sum their insertions; they stop after `iters` iterations
//! or when an iteration inserted at most `δ·N·k` entries (the same sum, the same decision).
//! Everything is serial on each rank and depends on `N`, the partition, the data and the
//! seed only, never on a thread count (the local start is NN-descent's own, the same bits
//! on any pool).
//!
//! **One rank.** The start alone: the lists are bitwise [`super::approx_knn`]'s over all
//! items (the sample and the iterations only serve items of other ranks).
//!
//! **Protocol.** Every count that sizes an exchange is exchanged, checked (a whole number,
//! within the receive buffer) and agreed (as many words received over all ranks as sent)
//! before it is used; an item number or a list entry received that is not one (or not of
//! the rank asked) fails the rank, whose answers become zeros until the next agreement,
//! where every rank leaves (`crate::comm::protocol`). No rank waits for a call that
//! another does not make.
//!
//! **Memory per rank** (words): the lists `2·N_r·k`, the start's workspace (NN-descent over
//! `N_r` items), and per batch: `B·k` asked items and `B·k²` lists received, at most
//! `(P − 1)·min(B·k, N_r)·(k + 1)` for the lists it serves, `B·c` candidates (two words
//! each), `B·c·S` columns received and at most `(P − 1)·min(B·c, N_r)·(S + 1)` served, a
//! window of `max(B·(1 + c), P·s + B)` items' columns (`S` words each) and the evaluator's
//! scratch over it. With `B ≈ N/(2cP)` the batch buffers are about `N_r·S/2` words: the
//! whole is `O(N_r·(S + k))` plus the sample.
//!
//! **Traffic per rank and iteration** (8-byte words): per batch 2 exchanges of `P` counts,
//! the items asked (`≤ B·k` and `≤ B·c`), the lists served (`k` per asked item) and the
//! columns served (`S` per asked item), 4 allreduces of `4` words (the agreements on the
//! counts); per iteration one allreduce of `3` words. Measured numbers: `docs/mpi.md`.

use super::engine::{self, Engine, Mode};
use super::topk::{better, NO_NEIGHBOR};
use super::{approx_knn, approx_knn_workspace, layout, AnnParams, KernelSet};
use crate::comm::protocol::{whole, Counted};
use crate::comm::Comm;
use crate::data::{Dense, View, ViewKind, ViewSet, ViewShape};
use crate::error::{Error, Part};
use crate::linalg::select::sort_by;
use crate::work::{Stack, WorkReq};

/// Sampled items per rank for the remote start (at least `2k`).
const SAMPLE: usize = 64;
/// Smallest batch.
const MIN_BATCH: usize = 32;

/// What [`sharded_knn`] did on this rank.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShardedReport {
    /// Iterations across ranks (0 with one rank).
    pub iterations: usize,
    /// Insertions over all ranks in the last iteration.
    pub last_updates: u64,
    /// Kernel values this rank evaluated after the local start.
    pub evaluations: u64,
}

/// The options resolved for `n` items over `ranks` ranks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan {
    pub(crate) k: usize,
    cand: usize,
    iters: usize,
    sample: usize,
    batch: usize,
}

impl Plan {
    pub(crate) fn new(ann: &AnnParams, n: usize, ranks: usize) -> Result<Plan, Error> {
        let k = ann.k;
        if k == 0 || k >= n || ranks == 0 || !(ann.delta.is_finite() && ann.delta >= 0.0) {
            return Err(Error::BadParameter);
        }
        let cand = if ann.candidates == 0 {
            k.max(20)
        } else {
            ann.candidates
        };
        let iters = if ann.iters == 0 {
            (libm::round(libm::log2(n as f64)) as usize).max(5)
        } else {
            ann.iters
        };
        let per = cand
            .checked_mul(2)
            .and_then(|x| x.checked_mul(ranks))
            .ok_or(Error::SizeOverflow)?;
        let batch = n.div_ceil(per.max(1)).max(MIN_BATCH);
        Ok(Plan {
            k,
            cand,
            iters,
            sample: SAMPLE.max(k.checked_mul(2).ok_or(Error::SizeOverflow)?),
            batch,
        })
    }

    /// Items of the window: a batch with its candidates, or the sample with a batch.
    fn window(&self, ranks: usize) -> Result<usize, Error> {
        let a = self.batch.checked_mul(self.cand + 1);
        let b = ranks
            .checked_mul(self.sample)
            .and_then(|x| x.checked_add(self.batch));
        Ok(a.ok_or(Error::SizeOverflow)?
            .max(b.ok_or(Error::SizeOverflow)?))
    }
}

fn mul(a: usize, b: usize) -> Result<usize, Error> {
    a.checked_mul(b).ok_or(Error::SizeOverflow)
}

/// The views' shapes as a window of `items` columns holds them.
fn window_shapes(rows: &[usize], items: usize) -> impl Iterator<Item = ViewShape> + Clone + '_ {
    rows.iter().map(move |&r| ViewShape {
        rows: r,
        cols: items,
        kind: ViewKind::Dense,
        nnz: 0,
    })
}

/// Workspace of [`sharded_knn`] (the lists excluded: the caller's), for a rank whose views
/// have these shapes (`N_r` columns, dense), `n` items over `ranks` ranks, `ann` resolved
/// (`k < n`), the kernels with no median bandwidth left.
pub(crate) fn sharded_req<KS: KernelSet + ?Sized>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    kernels: &KS,
    n: usize,
    ranks: usize,
    ann: &AnnParams,
) -> Result<WorkReq, Error> {
    let lay = layout(shapes.clone(), kernels)?;
    let n_r = lay.n;
    let p = Plan::new(ann, n, ranks)?;
    let s: usize = shapes.clone().into_iter().map(|x| x.rows).sum();
    let start = if n_r > p.k {
        WorkReq::new::<u8>(approx_knn_workspace::<f64>(
            shapes.clone(),
            kernels,
            0,
            ann,
        )?)
    } else {
        WorkReq::EMPTY
    };
    if ranks == 1 {
        return Ok(start);
    }
    let w = p.window(ranks)?;
    let eb = p.cand.max(1);
    let lw = layout(
        shapes.into_iter().map(|x| ViewShape { cols: w, ..x }),
        kernels,
    )?;
    let window = WorkReq::all_of(&[
        WorkReq::matrix::<f64>(w, s),
        WorkReq::new::<usize>(w),
        WorkReq::new::<usize>(eb),
        WorkReq::new::<f64>(eb),
        engine::workspace::<f64>(&lw, eb),
    ]);
    let others = ranks - 1;
    let room_l = mul(others, mul(p.batch, p.k)?.min(n_r))?;
    let room_f = mul(others, mul(p.batch, p.cand)?.min(n_r))?;
    let bk = mul(p.batch, p.k)?;
    let bc = mul(p.batch, p.cand)?;
    let sample = WorkReq::new::<f64>(mul(p.sample, s)?);
    let iterate = WorkReq::all_of(&[
        WorkReq::new::<usize>(bk),
        WorkReq::new::<f64>(bk),
        WorkReq::matrix::<f64>(bk, p.k + 1),
        WorkReq::new::<f64>(room_l),
        WorkReq::matrix::<f64>(room_l, p.k + 1),
        WorkReq::matrix::<usize>(p.batch, p.cand),
        WorkReq::matrix::<u64>(p.batch, p.cand),
        WorkReq::new::<usize>(bc),
        WorkReq::new::<f64>(bc),
        WorkReq::matrix::<f64>(bc, s),
        WorkReq::new::<f64>(room_f),
        WorkReq::matrix::<f64>(room_f, s),
    ]);
    Ok(WorkReq::all_of(&[
        WorkReq::new::<u32>(n_r),
        WorkReq::matrix::<usize>(ranks, 3),
        WorkReq::matrix::<f64>(ranks, 2),
        WorkReq::any_of(&[
            start,
            WorkReq::all_of(&[WorkReq::any_of(&[sample, iterate]), window]),
        ]),
    ]))
}

/// Items' columns stored item after item (`S` values each, view `v`'s at `Σ_{u<v} M_u`).
pub(crate) struct Cols<'b> {
    pub(crate) buf: &'b [f64],
    pub(crate) rows: &'b [usize],
    pub(crate) items: usize,
    pub(crate) stride: usize,
}

impl ViewSet<f64> for Cols<'_> {
    fn count(&self) -> usize {
        self.rows.len()
    }
    fn view(&self, v: usize) -> View<'_, f64> {
        let off: usize = self.rows.iter().take(v).sum();
        let (buf, rows) = (self.buf.get(off..), self.rows.get(v));
        let (Some(buf), Some(&rows)) = (buf, rows) else {
            return View::Dense(Dense::from_validated(&[], 0, 0, 0));
        };
        View::Dense(Dense::from_validated(buf, rows, self.items, self.stride))
    }
}

/// Copies local column `col` of every (dense) view into `dst` (`S` values).
pub(crate) fn copy_item<VS: ViewSet<f64> + ?Sized>(views: &VS, col: usize, dst: &mut [f64]) {
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

/// The rank of item `j` (`off`: `ranks + 1` offsets).
pub(crate) fn owner(off: &[usize], j: usize) -> usize {
    off.partition_point(|&o| o <= j).saturating_sub(1)
}

/// SplitMix64's finaliser.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The sampling priority of candidate `l` of item `i` in iteration `it`.
fn priority(seed: u64, it: usize, i: usize, l: usize) -> u64 {
    mix(seed ^ mix(((it as u64) << 48) ^ i as u64) ^ (l as u64).rotate_left(29))
}

fn set<T: Copy>(v: &mut [T], i: usize, x: T) {
    if let Some(y) = v.get_mut(i) {
        *y = x;
    }
}

/// Restores the heap (worst at the root) of the first `len` entries below `p`.
fn sift_down(idx: &mut [usize], sim: &mut [f64], mut p: usize, len: usize) {
    loop {
        let l = 2 * p + 1;
        if l >= len {
            return;
        }
        let (Some(&il), Some(&sl)) = (idx.get(l), sim.get(l)) else {
            return;
        };
        let r = l + 1;
        let c = match (idx.get(r), sim.get(r)) {
            (Some(&ir), Some(&sr)) if r < len && better(sl, il, sr, ir) => r,
            _ => l,
        };
        let (Some(&ic), Some(&sc), Some(&ip), Some(&sp)) =
            (idx.get(c), sim.get(c), idx.get(p), sim.get(p))
        else {
            return;
        };
        if !better(sp, ip, sc, ic) {
            return;
        }
        set(idx, p, ic);
        set(sim, p, sc);
        set(idx, c, ip);
        set(sim, c, sp);
        p = c;
    }
}

/// Pushes `(s, j)` into a list (a heap, worst at its root) unless it is not better than
/// the root or there already. Returns whether it entered.
fn push(idx: &mut [usize], sim: &mut [f64], j: usize, s: f64) -> bool {
    let (Some(&ri), Some(&rs)) = (idx.first(), sim.first()) else {
        return false;
    };
    if !better(s, j, rs, ri) || idx.contains(&j) {
        return false;
    }
    set(idx, 0, j);
    set(sim, 0, s);
    sift_down(idx, sim, 0, idx.len().min(sim.len()));
    true
}

/// Sorts a heap best first (larger value, then lower index).
fn sort_heap(idx: &mut [usize], sim: &mut [f64]) {
    let k = idx.len().min(sim.len());
    for end in (1..k).rev() {
        let (Some(&i0), Some(&s0), Some(&ie), Some(&se)) =
            (idx.first(), sim.first(), idx.get(end), sim.get(end))
        else {
            return;
        };
        set(idx, 0, ie);
        set(sim, 0, se);
        set(idx, end, i0);
        set(sim, end, s0);
        sift_down(idx, sim, 0, end);
    }
}

/// Sorts and removes duplicates; returns the length kept.
fn sort_unique(v: &mut [usize]) -> usize {
    sort_by(v, |a, b| a < b);
    let mut w = 0;
    for r in 0..v.len() {
        let Some(&x) = v.get(r) else { break };
        if w == 0 || v.get(w - 1) != Some(&x) {
            set(v, w, x);
            w += 1;
        }
    }
    w
}

/// Keeps the `c` candidates of smallest priority (then index), without repeats.
fn keep(cidx: &mut [usize], cpri: &mut [u64], len: &mut usize, l: usize, pr: u64) {
    let c = cidx.len().min(cpri.len());
    let filled = (*len).min(c);
    if cidx.get(..filled).is_some_and(|x| x.contains(&l)) {
        return;
    }
    if filled < c {
        set(cidx, filled, l);
        set(cpri, filled, pr);
        *len = filled + 1;
        return;
    }
    // The worst kept (largest priority, then index).
    let mut w = 0;
    for t in 1..c {
        let (Some(&pt), Some(&it), Some(&pw), Some(&iw)) =
            (cpri.get(t), cidx.get(t), cpri.get(w), cidx.get(w))
        else {
            break;
        };
        if (pt, it) > (pw, iw) {
            w = t;
        }
    }
    if let (Some(&pw), Some(&iw)) = (cpri.get(w), cidx.get(w)) {
        if (pr, l) < (pw, iw) {
            set(cidx, w, l);
            set(cpri, w, pr);
        }
    }
}

/// The sharded layout: this rank, the ranks, their offsets (`ranks + 1`), all items.
pub(crate) struct Shard<'o> {
    pub(crate) rank: usize,
    pub(crate) off: &'o [usize],
    pub(crate) n: usize,
}

impl Shard<'_> {
    fn ranks(&self) -> usize {
        self.off.len().saturating_sub(1)
    }
    fn range(&self, q: usize) -> (usize, usize) {
        (
            self.off.get(q).copied().unwrap_or(0),
            self.off.get(q + 1).copied().unwrap_or(0),
        )
    }
}

/// Counts that size an exchange: sent to every rank, each received one checked (a whole
/// number, their sum within `room`), the totals agreed (module docs).
fn agree_counts<C: Comm + ?Sized>(
    cm: &mut Counted<'_, C>,
    sendc: &[usize],
    recvc: &mut [usize],
    cf: &mut [f64],
    ones: &[usize],
    room: usize,
) -> Result<(), Error> {
    let ranks = sendc.len();
    let (cs, cr) = cf.split_at_mut_checked(ranks).ok_or(Error::Internal)?;
    for (x, &c) in cs.iter_mut().zip(sendc) {
        *x = c as f64;
    }
    cm.exchange(cs, ones, cr, ones)?;
    let mut total = 0.0;
    for (c, &x) in recvc.iter_mut().zip(cr.iter()) {
        total += x;
        *c = if whole(x) && total <= room as f64 {
            x as usize
        } else {
            cm.fail(Error::CommFailed);
            0
        };
    }
    let sent: usize = sendc.iter().sum();
    let got: usize = recvc.iter().sum();
    let mut both = [sent as f64, got as f64, 0.0, 0.0];
    cm.sum(&mut both)?;
    cm.checkpoint(if both[0] == both[1] {
        Ok(())
    } else {
        Err(Error::CommFailed)
    })
}

/// A received item number: one of `a .. e`, or `None`.
fn item_in(x: f64, a: usize, e: usize) -> Option<usize> {
    (whole(x) && (a as f64..e as f64).contains(&x)).then_some(x as usize)
}

/// Offers item `i` (window position `row`) its similarity to each of `cands` (window
/// positions `cpos`), and each candidate of this rank `i`; returns the insertions.
#[allow(clippy::too_many_arguments)]
fn offer_block<VS: ViewSet<f64> + ?Sized>(
    eng: &mut Engine<'_, '_, f64, VS>,
    (a, e, k): (usize, usize, usize),
    (i, row): (usize, usize),
    (cands, cpos): (&[usize], &[usize]),
    blk: &mut [f64],
    (idx, sim, stamp): (&mut [usize], &mut [f64], &mut [u32]),
    (evals, t): (&mut u64, u32),
) -> Result<u64, Error> {
    let mut ups = 0;
    let nc = cands.len().min(cpos.len());
    if nc == 0 {
        return Ok(0);
    }
    let blk = blk.part_mut(..nc)?;
    eng.block(&[row], cpos.part(..nc)?, blk)?;
    *evals += nc as u64;
    for (&l, &s) in cands.iter().zip(blk.iter()) {
        let r = (i - a) * k;
        if push(idx.part_mut(r..r + k)?, sim.part_mut(r..r + k)?, l, s) {
            ups += 1;
            set(stamp, i - a, t);
        }
        if (a..e).contains(&l) {
            let r = (l - a) * k;
            if push(idx.part_mut(r..r + k)?, sim.part_mut(r..r + k)?, i, s) {
                ups += 1;
                set(stamp, l - a, t);
            }
        }
    }
    Ok(ups)
}

/// The approximate `k` nearest neighbours of this rank's items among all items (module
/// docs): `idx`, `sim` (`N_r × k`, global item numbers, best first). `kernels` without a
/// median bandwidth (resolved by the caller), `inv` every view's magnitude factor over all
/// ranks, `ann` resolved (`k` as in `idx`). Inputs checked and agreed by the caller.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sharded_knn<
    C: Comm + ?Sized,
    VS: ViewSet<f64> + Sync + ?Sized,
    KS: KernelSet + Sync + ?Sized,
>(
    cm: &mut Counted<'_, C>,
    views: &VS,
    (kernels, eta, inv, rows): (&KS, &[f64], &[f64], &[usize]),
    shard: &Shard<'_>,
    ann: &AnnParams,
    (idx, sim): (&mut [usize], &mut [f64]),
    work: &mut [u8],
) -> Result<ShardedReport, Error> {
    let (rank, n) = (shard.rank, shard.n);
    let ranks = shard.ranks();
    let (a, e) = shard.range(rank);
    let n_r = e - a;
    let p = Plan::new(ann, n, ranks)?;
    let k = p.k;
    let s: usize = rows.iter().sum();
    if idx.len() != n_r * k || sim.len() != n_r * k {
        return Err(Error::Internal);
    }
    let mut st = Stack::new(work);
    let mut rep = ShardedReport::default();

    // The start: NN-descent over this rank's items.
    idx.fill(NO_NEIGHBOR);
    sim.fill(f64::NEG_INFINITY);
    let started = if n_r > k {
        let w = st.rest().take_rest();
        approx_knn(views, kernels, eta, &[], 0, ann, idx, sim, w).map(|_| ())
    } else {
        Ok(())
    };
    if started.is_err() {
        idx.fill(NO_NEIGHBOR);
        sim.fill(f64::NEG_INFINITY);
    }
    for r in 0..n_r {
        let (ri, rs) = (
            idx.part_mut(r * k..(r + 1) * k)?,
            sim.part_mut(r * k..(r + 1) * k)?,
        );
        for x in ri.iter_mut().filter(|x| **x != NO_NEIGHBOR) {
            *x += a;
        }
        // Best first reversed: worst first, a heap.
        ri.reverse();
        rs.reverse();
    }
    if ranks == 1 {
        started?;
        for r in 0..n_r {
            sort_heap(
                idx.part_mut(r * k..(r + 1) * k)?,
                sim.part_mut(r * k..(r + 1) * k)?,
            );
        }
        return Ok(rep);
    }
    cm.checkpoint(started)?;

    // The last iteration in which each item's list took an entry (0: the start).
    let stamp: &mut [u32] = st.take(n_r)?;
    stamp.fill(0);
    let cnt: &mut [usize] = st.take_matrix(ranks, 3)?;
    let mut parts = cnt.chunks_exact_mut(ranks.max(1));
    let (Some(sendc), Some(recvc), Some(ones)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(Error::Internal);
    };
    ones.fill(1);
    let cf: &mut [f64] = st.take_matrix(ranks, 2)?;
    let wmax = p.window(ranks)?;
    let eb = p.cand.max(1);
    let win: &mut [f64] = st.take_matrix(wmax, s)?;
    let wid: &mut [usize] = st.take(wmax)?;
    let cpos: &mut [usize] = st.take(eb)?;
    let blk: &mut [f64] = st.take(eb)?;
    let nbatch = |q: usize| {
        let (x, y) = shard.range(q);
        (y - x).div_ceil(p.batch.max(1))
    };
    let rounds = (0..ranks).map(nbatch).max().unwrap_or(0);

    // Remote start: every rank's sample, to every rank.
    {
        let mut ph = st.rest();
        let sample = |q: usize| {
            let (x, y) = shard.range(q);
            p.sample.min(y - x)
        };
        let sid = |q: usize, t: usize| {
            let (x, y) = shard.range(q);
            x + t * (y - x) / sample(q).max(1)
        };
        let mine = sample(rank);
        let part: &mut [f64] = ph.take_matrix(mine, s)?;
        for (t, dst) in part.chunks_exact_mut(s.max(1)).enumerate() {
            copy_item(views, sid(rank, t) - a, dst);
        }
        let mut total = 0;
        for (q, c) in sendc.iter_mut().enumerate() {
            *c = sample(q) * s;
            total += sample(q);
        }
        cm.allgather(part, sendc, win.part_mut(..total * s)?)?;
        // Sampled items: window positions 0 .. total, in rank order.
        let mut t0 = 0;
        for q in 0..ranks {
            for t in 0..sample(q) {
                set(wid, t0 + t, sid(q, t));
            }
            t0 += sample(q);
        }
        for b in 0..nbatch(rank) {
            let (b0, b1) = (a + b * p.batch, (a + (b + 1) * p.batch).min(e));
            for (t, i) in (b0..b1).enumerate() {
                copy_item(
                    views,
                    i - a,
                    win.part_mut((total + t) * s..(total + t + 1) * s)?,
                );
            }
            let wn = total + (b1 - b0);
            let cols = Cols {
                buf: win.part(..wn * s)?,
                rows,
                items: wn,
                stride: s,
            };
            let lay = layout(window_shapes(rows, wn), kernels)?;
            let mut ph2 = ph.rest();
            let mut eng = Engine::new_with(&cols, kernels, &lay, eb, ph2.rest(), Some(inv))?;
            eng.set_mode(Mode::Fused, Some(eta));
            eng.set_direct(true);
            for (t, i) in (b0..b1).enumerate() {
                let mut from = 0;
                while from < total {
                    let to = (from + eb).min(total);
                    let mut nc = 0;
                    for u in from..to {
                        let l = wid.at(u)?;
                        if l != i {
                            set(cpos, nc, u);
                            nc += 1;
                        }
                    }
                    let blk_ = blk.part_mut(..nc)?;
                    eng.block(&[total + t], cpos.part(..nc)?, blk_)?;
                    rep.evaluations += nc as u64;
                    for (&u, &v) in cpos.part(..nc)?.iter().zip(blk_.iter()) {
                        let l = wid.at(u)?;
                        let r = (i - a) * k;
                        push(idx.part_mut(r..r + k)?, sim.part_mut(r..r + k)?, l, v);
                        if (a..e).contains(&l) {
                            let r = (l - a) * k;
                            push(idx.part_mut(r..r + k)?, sim.part_mut(r..r + k)?, i, v);
                        }
                    }
                    from = to;
                }
            }
        }
    }

    // The iterations.
    let bk = p.batch * k;
    let bc = p.batch * p.cand;
    let room_l = (ranks - 1) * bk.min(n_r);
    let room_f = (ranks - 1) * bc.min(n_r);
    let req: &mut [usize] = st.take(bk)?;
    let reqf: &mut [f64] = st.take(bk)?;
    let k1 = k.saturating_add(1);
    let lists: &mut [f64] = st.take_matrix(bk, k1)?;
    let asked: &mut [f64] = st.take(room_l)?;
    let served: &mut [f64] = st.take_matrix(room_l, k1)?;
    let cidx: &mut [usize] = st.take_matrix(p.batch, p.cand)?;
    let cpri: &mut [u64] = st.take_matrix(p.batch, p.cand)?;
    let freq: &mut [usize] = st.take(bc)?;
    let freqf: &mut [f64] = st.take(bc)?;
    let fcols: &mut [f64] = st.take_matrix(bc, s)?;
    let fasked: &mut [f64] = st.take(room_f)?;
    let fserved: &mut [f64] = st.take_matrix(room_f, s)?;
    let eng_ws = st.take_rest();
    let mine = |j: usize| (a..e).contains(&j);
    for it in 0..p.iters {
        let mut ups = 0u64;
        for b in 0..rounds {
            let (b0, b1) = ((a + b * p.batch).min(e), (a + (b + 1) * p.batch).min(e));
            // 1. The lists of the batch's remote neighbours.
            let mut nreq = 0;
            for i in b0..b1 {
                for &j in idx.part((i - a) * k..(i - a + 1) * k)? {
                    if j != NO_NEIGHBOR && !mine(j) {
                        set(req, nreq, j);
                        nreq += 1;
                    }
                }
            }
            let nreq = sort_unique(req.part_mut(..nreq)?);
            let req = req.part(..nreq)?;
            sendc.fill(0);
            for &j in req {
                if let Some(c) = sendc.get_mut(owner(shard.off, j)) {
                    *c += 1;
                }
            }
            agree_counts(cm, sendc, recvc, cf, ones, room_l)?;
            let n_asked: usize = recvc.iter().sum();
            for (x, &j) in reqf.iter_mut().zip(req) {
                *x = j as f64;
            }
            let asked = asked.part_mut(..n_asked)?;
            cm.exchange(reqf.part(..nreq)?, sendc, asked, recvc)?;
            let served = served.part_mut(..n_asked * k1)?;
            let mut bad = false;
            for (&x, out) in asked.iter().zip(served.chunks_exact_mut(k1.max(1))) {
                match item_in(x, a, e) {
                    Some(j) => {
                        let row = idx.part((j - a) * k..(j - a + 1) * k)?;
                        let (o0, out) = out.split_first_mut().ok_or(Error::Internal)?;
                        *o0 = stamp.at(j - a)? as f64;
                        for (o, &l) in out.iter_mut().zip(row) {
                            *o = if l == NO_NEIGHBOR { -1.0 } else { l as f64 };
                        }
                    }
                    None => {
                        bad = true;
                        out.fill(-1.0);
                    }
                }
            }
            if bad {
                cm.fail(Error::CommFailed);
            }
            for c in sendc.iter_mut() {
                *c *= k1;
            }
            for c in recvc.iter_mut() {
                *c *= k1;
            }
            let lists = lists.part_mut(..nreq * k1)?;
            cm.exchange(served, recvc, lists, sendc)?;
            // A list: its stamp (a whole number), then items or −1.
            let ok = |l: &[f64]| match l.split_first() {
                Some((&t, rest)) => {
                    whole(t)
                        && rest
                            .iter()
                            .all(|&x| x == -1.0 || item_in(x, 0, n).is_some())
                }
                None => false,
            };
            if !lists.chunks_exact(k1.max(1)).all(ok) {
                cm.fail(Error::CommFailed);
            }

            // 2. Candidates: the neighbours' neighbours.
            let mut nfreq = 0;
            for (t, i) in (b0..b1).enumerate() {
                let ci = cidx.part_mut(t * p.cand..(t + 1) * p.cand)?;
                let cp = cpri.part_mut(t * p.cand..(t + 1) * p.cand)?;
                let mut len = 0;
                let row = idx.part((i - a) * k..(i - a + 1) * k)?;
                // Only lists that took entries since the last iteration are explored.
                let fresh = |t: u32| t as usize >= it;
                let fresh_i = fresh(stamp.at(i - a)?);
                for &j in row {
                    if j == NO_NEIGHBOR {
                        continue;
                    }
                    let mut offer = |l: usize| {
                        if l != i && !row.contains(&l) {
                            keep(ci, cp, &mut len, l, priority(ann.seed, it, i, l));
                        }
                    };
                    if mine(j) {
                        if !fresh_i && !fresh(stamp.at(j - a)?) {
                            continue;
                        }
                        for &l in idx.part((j - a) * k..(j - a + 1) * k)? {
                            if l != NO_NEIGHBOR {
                                offer(l);
                            }
                        }
                    } else if let Ok(q) = req.binary_search(&j) {
                        let l = lists.part(q * k1..(q + 1) * k1)?;
                        let (&t, l) = l.split_first().ok_or(Error::Internal)?;
                        if !(fresh_i || (whole(t) && t >= it as f64)) {
                            continue;
                        }
                        for &x in l {
                            if let Some(l) = item_in(x, 0, n) {
                                offer(l);
                            }
                        }
                    }
                }
                for x in ci.iter_mut().skip(len) {
                    *x = NO_NEIGHBOR;
                }
                for &l in ci.iter().take(len) {
                    if !mine(l) {
                        set(freq, nfreq, l);
                        nfreq += 1;
                    }
                }
            }

            // 3. The remote candidates' columns.
            let nfreq = sort_unique(freq.part_mut(..nfreq)?);
            let freq = freq.part(..nfreq)?;
            sendc.fill(0);
            for &j in freq {
                if let Some(c) = sendc.get_mut(owner(shard.off, j)) {
                    *c += 1;
                }
            }
            agree_counts(cm, sendc, recvc, cf, ones, room_f)?;
            let n_fasked: usize = recvc.iter().sum();
            for (x, &j) in freqf.iter_mut().zip(freq) {
                *x = j as f64;
            }
            let fasked = fasked.part_mut(..n_fasked)?;
            cm.exchange(freqf.part(..nfreq)?, sendc, fasked, recvc)?;
            let fserved = fserved.part_mut(..n_fasked * s)?;
            let mut bad = false;
            for (&x, out) in fasked.iter().zip(fserved.chunks_exact_mut(s.max(1))) {
                match item_in(x, a, e) {
                    Some(j) => copy_item(views, j - a, out),
                    None => {
                        bad = true;
                        out.fill(0.0);
                    }
                }
            }
            if bad {
                cm.fail(Error::CommFailed);
            }
            for c in sendc.iter_mut() {
                *c *= s;
            }
            for c in recvc.iter_mut() {
                *c *= s;
            }
            let fcols = fcols.part_mut(..nfreq * s)?;
            cm.exchange(fserved, recvc, fcols, sendc)?;

            // 4. The window: the batch and its candidates; evaluate and offer.
            if b0 == b1 {
                continue;
            }
            let mut wn = 0;
            for (t, i) in (b0..b1).enumerate() {
                set(wid, wn, i);
                wn += 1;
                for &l in cidx.part(t * p.cand..(t + 1) * p.cand)? {
                    if l != NO_NEIGHBOR {
                        set(wid, wn, l);
                        wn += 1;
                    }
                }
            }
            let wn = sort_unique(wid.part_mut(..wn)?);
            let wid = wid.part(..wn)?;
            for (u, &j) in wid.iter().enumerate() {
                let dst = win.part_mut(u * s..(u + 1) * s)?;
                if mine(j) {
                    copy_item(views, j - a, dst);
                } else if let Ok(q) = freq.binary_search(&j) {
                    dst.copy_checked(fcols.part(q * s..(q + 1) * s)?)?;
                } else {
                    dst.fill(0.0);
                }
            }
            let cols = Cols {
                buf: win.part(..wn * s)?,
                rows,
                items: wn,
                stride: s,
            };
            let lay = layout(window_shapes(rows, wn), kernels)?;
            let mut eng = Engine::new_with(
                &cols,
                kernels,
                &lay,
                eb,
                Stack::new(&mut *eng_ws),
                Some(inv),
            )?;
            eng.set_mode(Mode::Fused, Some(eta));
            eng.set_direct(true);
            for (t, i) in (b0..b1).enumerate() {
                let cands = cidx.part(t * p.cand..(t + 1) * p.cand)?;
                let nc = cands.iter().take_while(|&&l| l != NO_NEIGHBOR).count();
                let cands = cands.part(..nc)?;
                for (c, &l) in cpos.iter_mut().zip(cands) {
                    *c = wid.binary_search(&l).map_err(|_| Error::Internal)?;
                }
                let row = wid.binary_search(&i).map_err(|_| Error::Internal)?;
                ups += offer_block(
                    &mut eng,
                    (a, e, k),
                    (i, row),
                    (cands, cpos.part(..nc)?),
                    blk,
                    (&mut *idx, &mut *sim, &mut *stamp),
                    (&mut rep.evaluations, it as u32 + 1),
                )?;
            }
        }
        let mut tot = [ups as f64, 0.0, 0.0];
        cm.sum(&mut tot)?;
        rep.iterations = it + 1;
        rep.last_updates = tot[0] as u64;
        if tot[0] <= ann.delta * n as f64 * k as f64 {
            break;
        }
    }
    for r in 0..n_r {
        sort_heap(
            idx.part_mut(r * k..(r + 1) * k)?,
            sim.part_mut(r * k..(r + 1) * k)?,
        );
    }
    Ok(rep)
}
