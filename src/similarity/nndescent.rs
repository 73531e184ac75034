//! Approximate neighbours under the fused kernel `K = Σ_v η_v K_v` (or any single kernel):
//! NN-descent (Dong, Moses & Li, WWW 2011) started from kernel bisector trees, as
//! pynndescent starts it from random-projection trees. Same output as
//! [`super::fused_knn`] over [`super::Scope::All`].
//!
//! **Why NN-descent.** It needs nothing but the similarity of a pair, so the fused kernel
//! (a sum of normalised kernels, possibly χ² or intersection, dense or CSC) needs no metric
//! and no vectors; every value comes from the same evaluator as the exact search
//! ([`super::engine::Engine`], small blocks). An HNSW index would also work on `d² = 2 − 2K`,
//! but its insertion order makes every insertion depend on the previous ones, which fits
//! neither a fixed task partition nor a caller's workspace as well.
//!
//! **Start: kernel bisector trees** (instead of random projections). pynndescent's Euclidean
//! RP tree splits a node by the hyperplane halfway between two random points `p₁, p₂` of
//! it; that hyperplane is `‖x − p₁‖ = ‖x − p₂‖`. In the feature space of the fused kernel
//! (`d² = 2 − 2K`, every `K(i, i) = 1`) the same split is `K(x, p₁) ≷ K(x, p₂)`, which needs
//! two kernel values per item and level and no vectors at all: no concatenated normalised
//! features, no tree per view, and χ² / intersection / CSC views work as they are. Ties
//! (identical items) go to the side given by the parity of the position; a split that puts
//! every item on one side is replaced by halving the node. Leaves hold at most `leaf` items;
//! every pair within a leaf is offered to both items' heaps. Heaps not full after the trees
//! are filled with random items. A node's two pivots come from a hash of the seed, the tree,
//! the node's first position and its size (no serial random stream): nodes of more than
//! `min(4096, N/16)` items are split level by level with their items spread over the tasks;
//! smaller ones are finished depth first by the task holding their start, so that a node's
//! rows stay in the caches while it is split further. The trees do not depend on that choice.
//!
//! **Renumbering** (the `f32` mode). After the first tree's splits the items are renumbered
//! in the order of its leaves: the features are copied in that order, and the other trees,
//! the heaps, the candidate lists and the joins work on the new numbers, so that an item's
//! neighbours (mostly in nearby leaves) have their rows, heaps and lists close in memory. The
//! final lists are renumbered back (entries in the parallel final pass, rows in place by
//! cycles: a serial `O(N·k)` pass). Measured on 100 000 clustered items: 23 % less CPU, the
//! same recall.
//!
//! **Iterations** (pynndescent's form of NN-descent): each item's neighbours flagged *new*
//! and *old* are sampled, with their reverse neighbours, into two candidate lists of at most
//! `candidates` items each (the sample keeps the smallest of a seeded hash of the pair and the
//! iteration: the sampling rate is `candidates / (2k)` for an item of average in-degree);
//! the sampled new neighbours are flagged old; then the local join evaluates every pair of
//! new candidates and every (new, old) pair of each item and offers the pair to both items.
//! It stops after `iters` iterations or when an iteration inserts at most `δ·N·k` entries.
//!
//! **Same bits for every thread count.** Work is split into `P ≤ 4` tasks by `N` alone
//! (contiguous ranges of items, of tree positions or of leaves). A local join or leaf join
//! never writes a heap: each task evaluates its units against the heaps as they stand and
//! writes the pairs that would improve either item's heap into its own buffer (at most
//! `cap` pairs; a task stops before the unit that might not fit and resumes there next
//! round). Then the buffers are applied to the heaps in task order, the heaps split into `P`
//! ranges of items (each range scans every buffer in task order). Candidate sampling and
//! the final sort write per item range too. So what each task computes depends on `N`, the
//! data and the seed only: serial, any pool size and a host pool give the same neighbours
//! and similarities.
//!
//! **Scoring in `f32`** (issue 30). When every view is dense with a linear or RBF kernel,
//! the candidates are scored on `f32` features of every item, built once (`O(N·M)`): the
//! linear views' `√w·x/‖x‖` stacked (their part of the fused value is one dot product), then
//! each RBF view's `x` with `‖x‖²` (its part `w·exp(−γ(‖x‖² + ‖y‖² − 2xᵀy))`). A score reads
//! the two items' rows in place (no panel is gathered) and takes one `f32` dot product per
//! part (`linalg::dots_f32`: sixteen partial sums in a fixed order, AVX2 registers when the
//! CPU has them, the same bits at every SIMD level). With linear views only, a tree split is
//! the hyperplane it is: `z_x·(z_{p₁} − z_{p₂}) ≷ 0`, one product per item and level instead
//! of two. Other views (CSC, χ², intersection) are evaluated by the exact evaluator as before.
//!
//! **Values.** The final lists' similarities are always the fused kernel's, computed in
//! small blocks by the evaluator of the exact search (in the `f32` mode each item's `k`
//! values once at the end, then sorted); a value may differ from the exact search's in the
//! last bits (another GEMM shape). Order: larger first, ties by the lower index. In the `f32`
//! mode the lists are those the `f32` scores select: pairs whose scores differ by less than
//! their rounding (~`1e−7`) may be ranked otherwise than by the exact values.
//!
//! **Cost.** Trees: `trees · N · depth · 2` kernel values plus `trees · N · leaf / 2` for
//! the leaf pairs; each iteration at most `N · (c(c − 1)/2 + c²)` values (`c` = candidates),
//! in practice far fewer after the first ones. Memory (besides the `N × k` outputs, which
//! hold the heaps): `N·k` flags, `N·c·24` bytes of candidate lists (or `34·N` bytes for the
//! trees, the same memory; in the `f32` mode the trees' scratch also holds the first tree's
//! features, `4·N·(M + H)` bytes), and per task one evaluator (`8·H·N` bytes of item scales and
//! the small panels) and a buffer of `24·cap` bytes; in the `f32` mode also `4·N·(M + H)`
//! bytes of features (`M`: the views' rows together), a third of the input in `f64`.
//!
//! **Measured** (`bench/bench_ann.py`, k = 10, recall@10 on 1000 sampled items against the
//! exact search; peers on the equivalent Euclidean features in float32; CPU seconds of the
//! process, because the 2-core machine ran at a load of ~15 during the run, which made wall
//! times 7–10× longer; one run each):
//!
//! | data | N | mvnmf (params): recall, CPU s | pynndescent | hnswlib |
//! |---|---|---|---|---|
//! | clustered, 150 dims, rank-5 subspaces + 5 % noise | 20 000 | defaults: 0.999, 1.81 | defaults: 1.000, 0.49 | M 16, efC 200: 1.000, 3.94 |
//! | same | 100 000 | defaults: 0.9996, 13.98 | defaults: 0.9999, 2.78 | M 24, efC 300: 0.9999, 49.2 (M 16, efC 200: 0.999, 34.4) |
//! | hard: 20 uniform centres + full-dimensional uniform noise | 20 000 | `build k 20, candidates 40`: 0.984, 4.60 (defaults: 0.798, 2.61) | n_neighbors 30: 0.993, 1.63 | M 16, efC 100: 0.991, 4.61 |
//! | hard | 100 000 | `build k 30, candidates 60`: 0.958, 53.0 (defaults: 0.494, 21.4; `build k 20, candidates 40`: 0.857, 35.6) | not run (issue 30: defaults 0.459 in 2.3 s wall) | M 16, efC 100: 0.890, 44.3 (run stopped there; issue 30: M 16, ef 200/100: 0.971 in 48 s wall) |
//! | mfeat (real, 2000 items, six views fused) | 2 000 | defaults: 0.996, 0.34 | defaults: 0.997, 0.06 | M 8, efC 50: 0.998, 0.11 |
//!
//! So: recall ≥ 0.95 at the defaults on clustered and real data, faster than hnswlib at
//! the same recall (3.5× at 100 000 clustered items), and on the hard case 0.958 at 100 000
//! with larger lists where hnswlib's M 16 / efC 100 gives 0.890 in about as much CPU; but
//! **3–5× slower than pynndescent** where pynndescent reaches the recall (the goal of
//! issue 30 is not met yet). At 2 threads the CPU time stays the same (1.51 s, 4.47 s at 20 000), so the
//! parallel overhead is small. A profile of one tree and one iteration: 34 % in the panel
//! products, 27 % in gathering the panels (a scaled copy of each item per block), the
//! rest in heaps and lists; vectorising the products (`linalg::panel_dots`) did not change
//! the time (1.83 s), so the next steps are the per-block overheads (gathering rows once
//! per item and iteration, `f32` panels, fewer wasted values in the join blocks) and, for
//! the hard case, the larger lists built internally (`k' > k`) that pynndescent's
//! `n_neighbors = 30` amounts to.
//!
//! **After the `f32` scoring** (issue 30, same run, machine at a load of ~25, CPU seconds,
//! one thread): clustered 100 000, defaults: 0.9989 in 5.39 s (pynndescent defaults: 0.9999
//! in 2.95 s; at a load of ~20 an hour earlier 13.98 s before this change, 4.53 s with 12
//! trees, 3.46 s with 6); clustered 20 000: 0.9994 in 0.75 s (was 1.52 s); hard 20 000,
//! `build k 20, candidates 40`: 0.984 in 1.79 s (was 4.60 s). Still ~1.3–1.8× pynndescent's
//! CPU time: the goal of issue 30 is not met yet (see the report of branch `annperf`).
//!
//! **Prefetching** (branch `ann4`). A profile after the `f32` scoring: the scores waited for
//! memory (a candidate's row, the root of its heap and, in the candidate sampling, the list of
//! a neighbour are random places in tables far larger than the caches). The candidates' rows
//! and heap roots are now asked for (`linalg::microk::prefetch`) before a block is scored,
//! the lists of the next item's neighbours one item ahead, and the evaluator's gathered columns
//! four items ahead. Values and lists unchanged (same bits); `approx_knn` on the clustered
//! 100 000 items, one thread, 3 runs against the previous build in turn (machine at a load of
//! 13–16): **3.70 s CPU against 4.59 s** (median; per pair 0.78–0.83×), recall 0.9989 both.
//!
//! **Depth-first trees, renumbering** (branch `ann5`; same data, one thread, load 12–14, runs
//! in turn with the build before): 3.0–3.1 s → 2.13 s CPU, recall 0.9991; pynndescent's
//! defaults 2.55–2.58 s (0.9999) in the same minutes. See `docs/benchmarks.md`.
//!
//! **More chains per score, mutual pairs once** (branch `ann7`; the same lists and values bit
//! for bit): the scores take the candidates four at a time on AVX-512 and two at a time on
//! AVX2 (`linalg::microk::dots2_f32`, the item's row loaded once, more independent adds in
//! flight), and the final exact pass takes a mutual pair's value from the earlier row of the
//! task. mfeat (2000 items, one thread), before / after / pynndescent in turn in one run:
//! 0.0660 → 0.0590 s CPU against pynndescent's 0.0586; clustered 20 000: see
//! `docs/benchmarks.md`.
//!
//! **Shorter prefetches, scores finished in registers** (branch `mfeat10`; the same lists
//! and values bit for bit): a candidate's row is asked for by its first eight cache lines
//! only ([`PREFETCH_FLOATS`]; the whole 41 lines of mfeat's rows, 64 or 40 rows at once,
//! kept the line buffers full: 13 % of the CPU time in the prefetch loops); on AVX-512 the
//! four-candidate kernel also takes the reduction trees and the tails in registers and the
//! last one to three candidates of a list as a padded group of four
//! (`linalg::microk::dots2_f32`); the final exact values' `f64` products four columns at a
//! time (`linalg::panel_dots`, AVX-512). mfeat, one thread: see `docs/benchmarks.md`.
//!
//! **Progress.** [`approx_knn_progress`] reports a fraction after each tree and each
//! iteration (a tree one unit, an iteration two) and may stop the build.

use super::engine::{self, Engine, Mode};
use super::median::{self, Scratch};
use super::topk::better;
use super::{
    check_eta, check_labels, check_views_par, layout, ClassIndex, Kernel, KernelSet, Layout,
};
use crate::data::{View, ViewSet, ViewShape};
use crate::error::{Error, Part};
use crate::linalg::microk::{dots2_f32, prefetch};
use crate::linalg::real::Real;
use crate::linalg::row_f32;
use crate::par::{pieces, pieces_mut, Counted, Parallel};
use crate::rng::Rng;
use crate::work::{Stack, WorkReq};
use core::sync::atomic::{AtomicUsize, Ordering};

pub use super::topk::NO_NEIGHBOR;

/// Most tasks of a region (and item ranges of the heaps).
const MAX_TASKS: usize = 4;
/// Items per task below which fewer tasks are made.
const ITEMS_PER_TASK: usize = 1024;
/// Pairs a task's buffer holds at least (`24` bytes each).
const BUFFER_PAIRS: usize = 1 << 16;
/// Items per block of a tree split (each block: `rows × 2` kernel values).
const TREE_BLOCK: usize = 64;
/// Longest segment of a tree that one task finishes depth first.
const SMALL_SEGMENT: usize = 4096;
/// Values of an `f32` feature row asked for ahead of its scores (eight cache lines). Whole
/// rows asked for at once (a tree block's 64 rows, a join's 20–40) filled the CPU's line
/// buffers on long rows: on mfeat (649 features, 41 lines a row) the prefetch loops took 13 %
/// of the build's CPU time waiting for them (branch `mfeat10`, `perf record`); the first
/// lines start each row's transfer and the streamer follows the scores' sequential reads.
/// Rows of at most 128 features are asked for whole as before (the clustered benchmark's
/// 150: eight of their ten lines).
const PREFETCH_FLOATS: usize = 128;

/// Options of [`approx_knn`]. Zeros choose the defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnnParams {
    /// Neighbours per item, `1 <= k < N` (default 10).
    pub k: usize,
    /// Seed of the trees, the random fill and the sampling.
    pub seed: u64,
    /// Trees of the start (0: `min(32, 2 + ⌊N^{1/4}⌋ / 3)`: 5 at 20 000 items, 7 at 100 000).
    pub trees: usize,
    /// Most items per leaf (0: `max(16, k + 2)`), at least 2.
    pub leaf: usize,
    /// Most candidates per item and kind (new, old) in an iteration (0: `max(20, k)`).
    pub candidates: usize,
    /// Most iterations (0: `max(5, round(log2 N))`).
    pub iters: usize,
    /// Stop when an iteration inserts at most `delta · N · k` entries (default 0.001; 0: run
    /// all `iters`).
    pub delta: f64,
    /// Who runs the tasks (the same results for every choice).
    pub parallel: Parallel,
}

impl Default for AnnParams {
    fn default() -> Self {
        AnnParams {
            k: 10,
            seed: 0,
            trees: 0,
            leaf: 0,
            candidates: 0,
            iters: 0,
            delta: 0.001,
            parallel: Parallel::Serial,
        }
    }
}

/// What [`approx_knn`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AnnReport {
    /// NN-descent iterations run.
    pub iterations: usize,
    /// Heap insertions of the last iteration.
    pub last_updates: usize,
    /// Kernel values evaluated (trees, leaves, fill and joins; exact search: `N(N−1)/2`).
    pub evaluations: u64,
}

/// The options with every default resolved, for `n` items.
#[derive(Clone, Copy, Debug)]
struct Plan {
    k: usize,
    trees: usize,
    leaf: usize,
    cand: usize,
    iters: usize,
    tasks: usize,
    cap: usize,
    eb: usize,
}

impl AnnParams {
    fn plan(&self, n: usize) -> Result<Plan, Error> {
        let k = self.k;
        if k == 0 || k >= n || !(self.delta.is_finite() && self.delta >= 0.0) {
            return Err(Error::BadParameter);
        }
        if self.leaf == 1 {
            return Err(Error::BadParameter);
        }
        let root4 = libm::sqrt(libm::sqrt(n as f64)) as usize;
        let trees = if self.trees == 0 {
            (2 + root4 / 3).min(32)
        } else {
            self.trees
        };
        let leaf = if self.leaf == 0 {
            (k + 2).max(16)
        } else {
            self.leaf
        };
        let cand = if self.candidates == 0 {
            k.max(20)
        } else {
            self.candidates
        };
        let iters = if self.iters == 0 {
            (libm::round(libm::log2(n as f64)) as usize).max(5)
        } else {
            self.iters
        };
        let tasks = (n / ITEMS_PER_TASK).clamp(1, MAX_TASKS);
        // Every size below is bounded by `N` too (a list or leaf never holds more items than
        // there are), so that the workspace of a small `N` is small.
        let (lf, cn) = (leaf.min(n), cand.min(n - 1));
        let worst_leaf = lf
            .checked_mul(lf.saturating_sub(1))
            .ok_or(Error::SizeOverflow)?
            / 2;
        let worst_join = cn
            .checked_mul(cn)
            .and_then(|c2| c2.checked_add(cn * cn.saturating_sub(1) / 2))
            .ok_or(Error::SizeOverflow)?;
        let cap = BUFFER_PAIRS
            .min(n.saturating_mul(k))
            .max(worst_leaf)
            .max(worst_join);
        let eb = lf
            .max(cn.checked_mul(2).ok_or(Error::SizeOverflow)?)
            .max(TREE_BLOCK.min(n))
            .max(k);
        Ok(Plan {
            k,
            trees,
            leaf,
            cand,
            iters,
            tasks,
            cap,
            eb,
        })
    }
}

fn task_req<T>(lay: &Layout, p: &Plan) -> WorkReq {
    WorkReq::all_of(&[
        WorkReq::matrix::<T>(p.eb, p.eb),
        WorkReq::new::<f32>(p.eb.saturating_add(lay.panel_rows)),
        WorkReq::new::<f64>(p.eb),
        WorkReq::matrix::<usize>(p.cand, 2),
        WorkReq::new::<usize>(p.cap),
        WorkReq::new::<usize>(p.cap),
        WorkReq::new::<f64>(p.cap),
        engine::workspace::<T>(lay, p.eb),
    ])
}

/// Are the candidates scored on `f32` features (every view dense, linear or RBF)?
fn fast_ok(lay: &Layout, kernels: &(impl KernelSet + ?Sized)) -> bool {
    lay.scatter_rows == 0
        && (0..lay.h).all(|v| matches!(kernels.kernel(v), Kernel::Linear | Kernel::Rbf(_)))
}

/// The `f32` features of [`Fast`] and the items' order in them (nothing when `fast` is false).
fn fast_req(lay: &Layout, fast: bool) -> WorkReq {
    if !fast {
        return WorkReq::new::<u8>(0);
    }
    WorkReq::all_of(&[fast_feat_req(lay), WorkReq::new::<usize>(lay.n)])
}

/// The `f32` features of [`Fast`] alone.
fn fast_feat_req(lay: &Layout) -> WorkReq {
    WorkReq::all_of(&[
        WorkReq::matrix::<f32>(lay.panel_rows, lay.n),
        WorkReq::matrix::<f32>(lay.h, lay.n),
        WorkReq::new::<u8>(lay.h),
        WorkReq::new::<usize>(lay.h),
        WorkReq::new::<usize>(lay.h),
        WorkReq::new::<f64>(lay.h),
        WorkReq::new::<f64>(lay.h),
        WorkReq::new::<f64>(lay.h),
    ])
}

fn ann_req<T>(lay: &Layout, n_classes: usize, p: &Plan, fast: bool) -> WorkReq {
    let n = lay.n;
    let tree = WorkReq::all_of(&[
        WorkReq::new::<usize>(n),
        WorkReq::new::<usize>(n),
        WorkReq::new::<usize>(n),
        WorkReq::new::<usize>(n),
        WorkReq::new::<u8>(n),
        WorkReq::new::<u8>(n),
        if fast {
            fast_feat_req(lay)
        } else {
            WorkReq::new::<u8>(0)
        },
    ]);
    let cands = WorkReq::all_of(&[
        WorkReq::matrix::<usize>(n, p.cand),
        WorkReq::matrix::<usize>(n, p.cand),
        WorkReq::matrix::<u32>(n, p.cand),
        WorkReq::matrix::<u32>(n, p.cand),
    ]);
    WorkReq::all_of(&[
        ClassIndex::workspace(n, n_classes),
        median::scratch_req(lay),
        WorkReq::matrix::<u8>(n, p.k),
        fast_req(lay, fast),
        task_req::<T>(lay, p).times(p.tasks),
        WorkReq::any_of(&[tree, cands]),
    ])
}

/// Workspace bytes of [`approx_knn`] (`params.k < N` is checked here too).
pub fn approx_knn_workspace<T>(
    shapes: impl IntoIterator<Item = ViewShape>,
    kernels: &(impl KernelSet + ?Sized),
    n_classes: usize,
    params: &AnnParams,
) -> Result<usize, Error> {
    let lay = layout(shapes, kernels)?;
    let p = params.plan(lay.n)?;
    ann_req::<T>(&lay, n_classes, &p, fast_ok(&lay, kernels)).bytes()
}

/// One task's evaluator, block and pair buffer.
struct Task<'a, 'w, T, VS: ?Sized> {
    ev: Eval<'a, 'w, T, VS>,
    cols: &'w mut [usize],
    ua: &'w mut [usize],
    ub: &'w mut [usize],
    us: &'w mut [f64],
    len: usize,
    /// Next unit, end of the task's units.
    cur: usize,
    end: usize,
    evals: u64,
}

/// A task's evaluator: the exact one, or the `f32` scoring when every view allows it, and
/// the block of values.
struct Eval<'a, 'w, T, VS: ?Sized> {
    eng: Engine<'a, 'w, T, VS>,
    fast: Option<Fast<'w>>,
    blk: &'w mut [T],
    sf: &'w mut [f32],
    sd: &'w mut [f64],
}

impl<T: Real, VS: ViewSet<T> + ?Sized> Eval<'_, '_, T, VS> {
    /// `blk[r + c·nr] = K(rows[r], cols[c])` (scores in the fast mode).
    fn rect(&mut self, rows: &[usize], cols: &[usize]) -> Result<(), Error> {
        let Some(f) = self.fast else {
            return self.eng.block(rows, cols, self.blk);
        };
        let nr = rows.len();
        f.prefetch(rows);
        f.prefetch(cols);
        if rows.len() >= cols.len() {
            for (c, &q) in cols.iter().enumerate() {
                f.scores(q, rows, self.sf, self.sd)?;
                let dst = self.blk.part_mut(c * nr..c * nr + nr)?;
                for (d, &v) in dst.iter_mut().zip(self.sd.iter()) {
                    *d = T::from_f64(v);
                }
            }
        } else {
            for (r, &p) in rows.iter().enumerate() {
                f.scores(p, cols, self.sf, self.sd)?;
                for (c, &v) in self.sd.iter().take(cols.len()).enumerate() {
                    *self.blk.at_mut(r + c * nr)? = T::from_f64(v);
                }
            }
        }
        Ok(())
    }

    /// `blk[r] − blk[r + nr]` has the sign of `K(rows[r], a) − K(rows[r], b)`: in the fast
    /// mode with linear views only, `blk[r] = z_r·(z_a − z_b)` (one product per item: the
    /// bisector is a hyperplane) and `blk[r + nr] = 0`. Returns the values computed.
    /// `alt`: features to use instead of the task's own (the first tree's, in the items'
    /// given order).
    fn split(
        &mut self,
        alt: Option<&Fast<'_>>,
        rows: &[usize],
        a: usize,
        b: usize,
    ) -> Result<usize, Error> {
        let nr = rows.len();
        let fast = match alt {
            Some(f) => Some(*f),
            None => self.fast,
        };
        match fast {
            Some(f) if f.linear_only() => {
                f.prefetch(rows);
                let (za, zb) = (f.row(a), f.row(b));
                let u = self.sf.part_mut(..f.ld)?;
                for ((u, &x), &y) in u.iter_mut().zip(za).zip(zb) {
                    *u = x - y;
                }
                let (u, out) = self.sf.split_at_mut(f.ld);
                dots2_f32(f.z, f.ld, (0, f.ld), u, rows, out.part_mut(..nr)?);
                for (r, &d) in out.iter().take(nr).enumerate() {
                    *self.blk.at_mut(r)? = T::from_f64(f64::from(d));
                    *self.blk.at_mut(r + nr)? = T::ZERO;
                }
                Ok(nr)
            }
            Some(f) if alt.is_some() => {
                f.prefetch(rows);
                for (t, &p) in [a, b].iter().enumerate() {
                    f.scores(p, rows, self.sf, self.sd)?;
                    let dst = self.blk.part_mut(t * nr..t * nr + nr)?;
                    for (d, &v) in dst.iter_mut().zip(self.sd.iter()) {
                        *d = T::from_f64(v);
                    }
                }
                Ok(2 * nr)
            }
            _ => {
                self.rect(rows, &[a, b])?;
                Ok(2 * nr)
            }
        }
    }

    /// `blk[a + b·nr] = K(cols[a], cols[b])` for `a < nr` and `b > a` (the other entries
    /// are left as they are in the fast mode).
    fn prefix(&mut self, cols: &[usize], nr: usize) -> Result<(), Error> {
        let Some(f) = self.fast else {
            return self.eng.block_prefix(cols, nr, self.blk);
        };
        f.prefetch(cols);
        for a in 0..nr {
            let qs = cols.part(a + 1..)?;
            f.scores(cols.at(a)?, qs, self.sf, self.sd)?;
            for (t, &v) in self.sd.iter().take(qs.len()).enumerate() {
                *self.blk.at_mut(a + (a + 1 + t) * nr)? = T::from_f64(v);
            }
        }
        Ok(())
    }
}

impl<T: Real, VS: ViewSet<T> + ?Sized> Task<'_, '_, T, VS> {
    #[inline]
    fn emit(&mut self, a: usize, b: usize, s: f64) {
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
        let n = self.len;
        self.ua
            .iter()
            .zip(self.ub.iter())
            .zip(self.us.iter())
            .take(n)
            .map(|((&a, &b), &s)| (a, b, s))
    }
}

/// Kind of a view in [`Fast`]: left out (zero weight), linear (in the stacked part), RBF.
const F_SKIP: u8 = 0;
const F_LIN: u8 = 1;
const F_RBF: u8 = 2;

/// The scoring of candidates in `f32`: every item's features once, as the evaluator's panels
/// hold them (linear views `√w·x/‖x‖` stacked first, so that their part of the fused value is
/// one dot product; then each RBF view's `x`, with `‖x‖²` per item), item after item.
#[derive(Clone, Copy)]
struct Fast<'f> {
    z: &'f [f32],
    /// Features per item; the first `lin` are the stacked linear views.
    ld: usize,
    lin: usize,
    /// `N × H`: `‖x‖²` of each item in each RBF view.
    norm: &'f [f32],
    h: usize,
    kind: &'f [u8],
    off: &'f [usize],
    rows: &'f [usize],
    w: &'f [f64],
    g: &'f [f64],
}

type FastParts<'f> = (
    &'f mut [f32],
    &'f mut [f32],
    &'f mut [u8],
    &'f mut [usize],
    &'f mut [usize],
    &'f mut [f64],
    &'f mut [f64],
    &'f mut [f64],
);

impl<'f> Fast<'f> {
    /// Fills the features (`gamma`: the evaluator's resolved `γ`s, in the scaled units).
    #[allow(clippy::too_many_arguments)]
    fn build<T: Real, VS: ViewSet<T> + Sync + ?Sized, KS: KernelSet + ?Sized>(
        views: &VS,
        kernels: &KS,
        eta: &[f64],
        (gamma, vinv): (&[f64], &[f64]),
        (z, norm, kind, off, rows, w, g, inv): FastParts<'f>,
        (ld, h, chunk, ntasks): (usize, usize, usize, usize),
        order: Option<&[usize]>,
        par: Parallel,
    ) -> Result<Fast<'f>, Error> {
        let sum: f64 = eta.iter().sum();
        let mut o = 0;
        for pass in [F_LIN, F_RBF] {
            for v in 0..h {
                let wv = eta.at(v)? / sum;
                let kv = match kernels.kernel(v) {
                    Kernel::Linear => F_LIN,
                    _ => F_RBF,
                };
                if kv != pass {
                    continue;
                }
                let m = views.shape(v).rows;
                *kind.at_mut(v)? = if wv > 0.0 { kv } else { F_SKIP };
                *w.at_mut(v)? = wv;
                *g.at_mut(v)? = gamma.at(v)?;
                // The engine's factor of the view: `view_inv_scale(view_max(view))`.
                *inv.at_mut(v)? = vinv.at(v)?;
                *rows.at_mut(v)? = m;
                *off.at_mut(v)? = o;
                if wv > 0.0 {
                    o += m;
                }
            }
        }
        let lin: usize = (0..h)
            .filter(|&v| kind.get(v) == Some(&F_LIN))
            .map(|v| rows.get(v).copied().unwrap_or(0))
            .sum();
        let (kind, off, rows, w, g, inv) = (&*kind, &*off, &*rows, &*w, &*g, &*inv);
        let items = Counted::new(
            pieces_mut(z, (chunk * ld).max(1))
                .zip(pieces_mut(norm, (chunk * h).max(1)))
                .enumerate(),
            ntasks,
        );
        par.run_items(items, &|(t, (zc, nc))| {
            // Each task clears its own rows (the first touch of these pages, on the pool).
            zc.fill(0.0);
            nc.fill(0.0);
            let lo = t * chunk;
            for (r, (zr, nr)) in zc
                .chunks_exact_mut(ld.max(1))
                .zip(nc.chunks_exact_mut(h.max(1)))
                .enumerate()
            {
                let j = match order {
                    Some(o) => o.at(lo + r)?,
                    None => lo + r,
                };
                for v in 0..h {
                    let kv = kind.at(v)?;
                    if kv == F_SKIP {
                        continue;
                    }
                    let (o, m, iv) = (off.at(v)?, rows.at(v)?, inv.at(v)?);
                    let View::Dense(d) = views.view(v) else {
                        return Err(Error::Internal);
                    };
                    let x = d.col(j);
                    let dst = zr.part_mut(o..o + m)?;
                    if kv == F_LIN {
                        let ss: f64 = x
                            .iter()
                            .map(|a| {
                                let y = a.to_f64() * iv;
                                y * y
                            })
                            .sum();
                        let sc = if ss > 0.0 && ss.is_finite() {
                            libm::sqrt(w.at(v)?) / libm::sqrt(ss)
                        } else {
                            0.0
                        };
                        for (d, a) in dst.iter_mut().zip(x) {
                            *d = (a.to_f64() * iv * sc) as f32;
                        }
                    } else {
                        let mut ss = 0.0f64;
                        for (d, a) in dst.iter_mut().zip(x) {
                            *d = (a.to_f64() * iv) as f32;
                            ss += f64::from(*d) * f64::from(*d);
                        }
                        *nr.at_mut(v)? = ss as f32;
                    }
                }
            }
            Ok(())
        })?;
        Ok(Fast {
            z,
            ld,
            lin,
            norm,
            h,
            kind,
            off,
            rows,
            w,
            g,
        })
    }

    /// The same features with item `order[r]`'s row (and norms) at row `r`, into `parts`
    /// (a copy, no pass over the views: the same values as [`Fast::build`] in that order).
    fn permuted<'g>(
        &self,
        order: &[usize],
        (z, norm, kind, off, rows, w, g, inv): FastParts<'g>,
        (chunk, ntasks): (usize, usize),
        par: Parallel,
    ) -> Result<Fast<'g>, Error> {
        kind.copy_checked(self.kind)?;
        off.copy_checked(self.off)?;
        rows.copy_checked(self.rows)?;
        w.copy_checked(self.w)?;
        g.copy_checked(self.g)?;
        inv.fill(0.0);
        let (ld, h) = (self.ld, self.h);
        let items = Counted::new(
            pieces_mut(z, (chunk * ld).max(1))
                .zip(pieces_mut(norm, (chunk * h).max(1)))
                .enumerate(),
            ntasks,
        );
        par.run_items(items, &|(t, (zc, nc))| {
            let lo = t * chunk;
            for (r, (zr, nr)) in zc
                .chunks_exact_mut(ld.max(1))
                .zip(nc.chunks_exact_mut(h.max(1)))
                .enumerate()
            {
                let j = order.at(lo + r)?;
                zr.copy_checked(self.row(j))?;
                nr.copy_checked(self.norm.part(j * h..j * h + h)?)?;
            }
            Ok(())
        })?;
        Ok(Fast {
            z,
            ld,
            lin: self.lin,
            norm,
            h,
            kind,
            off,
            rows,
            w,
            g,
        })
    }

    /// Asks for the rows of `items` (the candidates of the next scores; values unchanged):
    /// their first [`PREFETCH_FLOATS`] values, the hardware's streamer taking the rest of a
    /// longer row as the scores read it.
    #[inline]
    fn prefetch(&self, items: &[usize]) {
        for &q in items {
            let r = self.row(q);
            prefetch(r.get(..PREFETCH_FLOATS).unwrap_or(r));
        }
    }

    /// Only linear views (the whole row is one stacked part)?
    #[inline]
    fn linear_only(&self) -> bool {
        self.lin == self.ld
    }

    /// Item `i`'s features.
    #[inline]
    fn row(&self, i: usize) -> &'f [f32] {
        row_f32(self.z, self.ld, (0, self.ld), i)
    }

    /// `sd[t]` = the score of the pair `(p, qs[t])` (`sf`: scratch; both at least `qs.len()`).
    fn scores(&self, p: usize, qs: &[usize], sf: &mut [f32], sd: &mut [f64]) -> Result<(), Error> {
        let nq = qs.len();
        let (sf, sd) = (sf.part_mut(..nq)?, sd.part_mut(..nq)?);
        if self.lin > 0 {
            let x = row_f32(self.z, self.ld, (0, self.lin), p);
            dots2_f32(self.z, self.ld, (0, self.lin), x, qs, sf);
            for (d, &x) in sd.iter_mut().zip(sf.iter()) {
                *d = f64::from(x);
            }
        } else {
            sd.fill(0.0);
        }
        for v in 0..self.h {
            if self.kind.get(v) != Some(&F_RBF) {
                continue;
            }
            let (o, m, wv, gv) = (
                self.off.at(v)?,
                self.rows.at(v)?,
                self.w.at(v)?,
                self.g.at(v)?,
            );
            let x = row_f32(self.z, self.ld, (o, m), p);
            dots2_f32(self.z, self.ld, (o, m), x, qs, sf);
            let np = f64::from(self.norm.at(p * self.h + v)?);
            for ((d, &x), &q) in sd.iter_mut().zip(sf.iter()).zip(qs) {
                let nq = f64::from(self.norm.at(q * self.h + v)?);
                let d2 = np + nq - 2.0 * f64::from(x);
                *d += wv * if d2 > 0.0 { libm::exp(-gv * d2) } else { 1.0 };
            }
        }
        Ok(())
    }
}

/// The heaps as they stand (read-only during a region that evaluates).
#[derive(Clone, Copy)]
struct Heaps<'h> {
    k: usize,
    idx: &'h [usize],
    sim: &'h [f64],
}

impl Heaps<'_> {
    /// Asks for the root of item `i`'s heap (read by [`Heaps::improves`]).
    #[inline]
    fn prefetch(&self, i: usize) {
        let r = i.wrapping_mul(self.k);
        prefetch(self.idx.get(r..r + 1).unwrap_or_default());
        prefetch(self.sim.get(r..r + 1).unwrap_or_default());
    }

    /// Would `(s, j)` enter item `i`'s heap (ignoring whether `j` is there already)?
    #[inline]
    fn improves(&self, i: usize, j: usize, s: f64) -> bool {
        let r = i.wrapping_mul(self.k);
        match (self.idx.get(r), self.sim.get(r)) {
            (Some(&ri), Some(&rs)) => better(s, j, rs, ri),
            _ => false,
        }
    }
}

/// Pushes `(s, j)` into a heap (worst at the root) of `idx.len()` entries, unless it is not
/// better than the root or already there. Returns whether it entered.
fn heap_push(idx: &mut [usize], sim: &mut [f64], flag: &mut [u8], j: usize, s: f64) -> bool {
    let k = idx.len().min(sim.len()).min(flag.len());
    let (Some(&ri), Some(&rs)) = (idx.first(), sim.first()) else {
        return false;
    };
    if !better(s, j, rs, ri) || idx.contains(&j) {
        return false;
    }
    let mut p = 0;
    loop {
        let l = 2 * p + 1;
        if l >= k {
            break;
        }
        let r = l + 1;
        let (Some(&il), Some(&sl)) = (idx.get(l), sim.get(l)) else {
            break;
        };
        let c = match (idx.get(r), sim.get(r)) {
            (Some(&ir), Some(&sr)) if r < k && better(sl, il, sr, ir) => r,
            _ => l,
        };
        let (Some(&ic), Some(&sc), Some(&fc)) = (idx.get(c), sim.get(c), flag.get(c)) else {
            break;
        };
        if !better(s, j, sc, ic) {
            break;
        }
        if let (Some(x), Some(y), Some(f)) = (idx.get_mut(p), sim.get_mut(p), flag.get_mut(p)) {
            (*x, *y, *f) = (ic, sc, fc);
        }
        p = c;
    }
    if let (Some(x), Some(y), Some(f)) = (idx.get_mut(p), sim.get_mut(p), flag.get_mut(p)) {
        (*x, *y, *f) = (j, s, 1);
    }
    true
}

/// `(pa, a)` before `(pb, b)` in a candidate list (smaller priority, then lower index).
#[inline(always)]
fn cand_before(pa: u32, a: usize, pb: u32, b: usize) -> bool {
    pa < pb || (pa == pb && a < b)
}

/// Pushes `j` with priority `pr` into a candidate list (a heap with the last-kept entry at
/// its root; empty slots [`NO_NEIGHBOR`] at the end).
fn cand_push(idx: &mut [usize], pri: &mut [u32], j: usize, pr: u32) {
    let c = idx.len().min(pri.len());
    let mut len = c;
    for (t, &x) in idx.iter().enumerate() {
        if x == j {
            return;
        }
        if x == NO_NEIGHBOR {
            len = t;
            break;
        }
    }
    if len < c {
        // Append and sift up.
        let mut p = len;
        while p > 0 {
            let q = (p - 1) / 2;
            let (Some(&iq), Some(&pq)) = (idx.get(q), pri.get(q)) else {
                break;
            };
            if !cand_before(pq, iq, pr, j) {
                break;
            }
            if let (Some(x), Some(y)) = (idx.get_mut(p), pri.get_mut(p)) {
                (*x, *y) = (iq, pq);
            }
            p = q;
        }
        if let (Some(x), Some(y)) = (idx.get_mut(p), pri.get_mut(p)) {
            (*x, *y) = (j, pr);
        }
        return;
    }
    let (Some(&ri), Some(&rp)) = (idx.first(), pri.first()) else {
        return;
    };
    if !cand_before(pr, j, rp, ri) {
        return;
    }
    let mut p = 0;
    loop {
        let l = 2 * p + 1;
        if l >= c {
            break;
        }
        let r = l + 1;
        let (Some(&il), Some(&pl)) = (idx.get(l), pri.get(l)) else {
            break;
        };
        let ch = match (idx.get(r), pri.get(r)) {
            (Some(&ir), Some(&pr_)) if r < c && cand_before(pl, il, pr_, ir) => r,
            _ => l,
        };
        let (Some(&ic), Some(&pc)) = (idx.get(ch), pri.get(ch)) else {
            break;
        };
        if !cand_before(pr, j, pc, ic) {
            break;
        }
        if let (Some(x), Some(y)) = (idx.get_mut(p), pri.get_mut(p)) {
            (*x, *y) = (ic, pc);
        }
        p = ch;
    }
    if let (Some(x), Some(y)) = (idx.get_mut(p), pri.get_mut(p)) {
        (*x, *y) = (j, pr);
    }
}

/// SplitMix64's finaliser.
#[inline(always)]
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The sampling priority of the pair `{i, j}` in iteration `it`.
#[inline(always)]
fn priority(seed: u64, it: usize, i: usize, j: usize) -> u32 {
    let (a, b) = if i < j { (i, j) } else { (j, i) };
    let h = mix(seed ^ mix((it as u64) << 40 ^ a as u64) ^ (b as u64).rotate_left(21));
    (h >> 32) as u32
}

/// The valid prefix of a candidate list.
#[inline]
fn valid(list: &[usize]) -> &[usize] {
    let n = list
        .iter()
        .position(|&x| x == NO_NEIGHBOR)
        .unwrap_or(list.len());
    list.get(..n).unwrap_or_default()
}

/// The `k` approximate nearest neighbours of every item under the fused kernel (NN-descent,
/// see the module doc).
///
/// Writes, as [`super::fused_knn`] with [`super::Scope::All`] does, `neighbors[i·k .. i·k + k]`
/// (item indices, never `i`) and `sims[...]` (their fused kernel values), best first, ties by
/// the lower index. `eta`, `labels` (for median bandwidths only; may be empty) and
/// `n_classes` as there.
///
/// Errors, all before anything is written: `k = 0`, `k >= N`, `leaf = 1`, `delta` not
/// finite or negative ([`Error::BadParameter`]); views, kernels, `η` and labels as
/// [`super::fused_knn`]; output lengths ([`Error::DimensionMismatch`]); workspace
/// ([`Error::WorkspaceTooSmall`]).
#[allow(clippy::too_many_arguments)]
pub fn approx_knn<T: Real, VS: ViewSet<T> + Sync + ?Sized, KS: KernelSet + Sync + ?Sized>(
    views: &VS,
    kernels: &KS,
    eta: &[f64],
    labels: &[u32],
    n_classes: usize,
    params: &AnnParams,
    neighbors: &mut [usize],
    sims: &mut [f64],
    work: &mut [u8],
) -> Result<AnnReport, Error> {
    let io = (eta, labels, n_classes);
    approx_knn_progress(
        views,
        kernels,
        io,
        params,
        neighbors,
        sims,
        work,
        &mut |_| false,
    )
}

/// [`approx_knn`] telling `progress` how far it is: a fraction in `(0, 1)` after each tree
/// and each NN-descent iteration (a tree counts as one unit, an iteration as two; an early
/// stop skips the iterations left), from the calling thread between parallel regions, and 1
/// at the end. `progress` returning `true` stops the build: [`Error::Cancelled`]; the outputs
/// then hold the partial lists (they are the heaps of the build: the only outputs written
/// before the end), whatever the caller had there is lost. A caller that must keep its
/// outputs builds into its workspace and copies (as [`crate::pipeline`] does with the graph).
#[allow(clippy::too_many_arguments)]
pub fn approx_knn_progress<
    T: Real,
    VS: ViewSet<T> + Sync + ?Sized,
    KS: KernelSet + Sync + ?Sized,
>(
    views: &VS,
    kernels: &KS,
    (eta, labels, n_classes): (&[f64], &[u32], usize),
    params: &AnnParams,
    neighbors: &mut [usize],
    sims: &mut [f64],
    work: &mut [u8],
    progress: &mut dyn FnMut(f64) -> bool,
) -> Result<AnnReport, Error> {
    let lay = check_views_par(views, kernels, params.parallel)?;
    let n = lay.n;
    let plan = params.plan(n)?;
    let k = plan.k;
    check_eta(eta, lay.h)?;
    let nl = check_labels(labels, n, n_classes)?;
    let nk = n.checked_mul(k).ok_or(Error::SizeOverflow)?;
    if neighbors.len() != nk || sims.len() != nk {
        return Err(Error::DimensionMismatch);
    }
    if lay.median && nl < 2 {
        return Err(Error::TooFewLabeled);
    }
    let fast = fast_ok(&lay, kernels);
    let need = ann_req::<T>(&lay, n_classes, &plan, fast).bytes()?;
    let len = work.len();
    let mut st = Stack::new(work);
    let ci = ClassIndex::new(labels, n, n_classes, &mut st)?;
    if len < need {
        return Err(Error::WorkspaceTooSmall);
    }
    let mut sc = Scratch::new(&lay, &mut st)?;
    let flags: &mut [u8] = st.take_matrix(n, k)?;
    let mut fast_parts = if fast {
        let (ld, h) = (lay.panel_rows, lay.h);
        Some((
            st.take_matrix::<f32>(ld, n)?,
            st.take_matrix::<f32>(h, n)?,
            st.take::<u8>(h)?,
            st.take::<usize>(h)?,
            st.take::<usize>(h)?,
            st.take::<f64>(h)?,
            st.take::<f64>(h)?,
            st.take::<f64>(h)?,
        ))
    } else {
        None
    };
    let mut order_buf: Option<&mut [usize]> = if fast { Some(st.take(n)?) } else { None };
    let slots = st.take_slots(plan.tasks, task_req::<T>(&lay, &plan))?;
    let chunk = n.div_ceil(plan.tasks.max(1));
    let mut tasks: [Option<Task<'_, '_, T, VS>>; MAX_TASKS] = [None, None, None, None];
    for (t, (slot, dst)) in slots.zip(tasks.iter_mut()).enumerate() {
        let mut ts = Stack::new(slot);
        let blk: &mut [T] = ts.take_matrix(plan.eb, plan.eb)?;
        let sf: &mut [f32] = ts.take(
            plan.eb
                .checked_add(lay.panel_rows)
                .ok_or(Error::SizeOverflow)?,
        )?;
        let sd: &mut [f64] = ts.take(plan.eb)?;
        let cols: &mut [usize] = ts.take_matrix(plan.cand, 2)?;
        let ua: &mut [usize] = ts.take(plan.cap)?;
        let ub: &mut [usize] = ts.take(plan.cap)?;
        let us: &mut [f64] = ts.take(plan.cap)?;
        // The scales are computed once, by the first engine (its pass over the data in tasks
        // on the pool, the same bits), and copied to the others.
        let eng = if t == 0 {
            Engine::new_par(views, kernels, &lay, plan.eb, ts, params.parallel)?
        } else {
            Engine::new_bare(views, kernels, &lay, plan.eb, ts)?
        };
        *dst = Some(Task {
            ev: Eval {
                eng,
                fast: None,
                blk,
                sf,
                sd,
            },
            cols,
            ua,
            ub,
            us,
            len: 0,
            cur: t * chunk,
            end: ((t + 1) * chunk).min(n),
            evals: 0,
        });
    }
    // Bandwidths on the first task's evaluator, copied to the others.
    {
        let (first, rest) = tasks.split_at_mut(1);
        let Some(Some(t0)) = first.first_mut() else {
            return Err(Error::Internal);
        };
        median::resolve(&mut t0.ev.eng, ci.labeled(), &mut sc, t0.ev.blk)?;
        t0.ev.eng.set_mode(Mode::Fused, Some(eta));
        t0.ev.eng.set_direct(true);
        for t in rest.iter_mut().flatten() {
            t.ev.eng.copy_scales(&t0.ev.eng)?;
            t.ev.eng.set_mode(Mode::Fused, Some(eta));
            t.ev.eng.set_direct(true);
        }
    }
    // In the `f32` mode the items are renumbered in the order of the first tree's leaves
    // (`order[r]`: the item of internal number `r`), so that neighbours' rows, heaps and
    // candidate lists lie close together in memory; the first tree is built on features in the
    // given order (in the trees' scratch), the others and the iterations on the renumbered
    // ones, and the lists are renumbered back at the end.
    let mut order_ref: Option<&[usize]> = None;

    let par = params.parallel;
    let ntasks = plan.tasks;
    // The heaps emptied, each task its item range (the first touch of these pages).
    {
        let kc = (chunk * k).max(1);
        let items = Counted::new(
            pieces_mut(&mut *neighbors, kc)
                .zip(pieces_mut(&mut *sims, kc))
                .zip(pieces_mut(&mut *flags, kc)),
            ntasks,
        );
        par.run_items(items, &|((nb, sm), fl)| {
            nb.fill(NO_NEIGHBOR);
            sm.fill(f64::NEG_INFINITY);
            fl.fill(0);
            Ok(())
        })?;
    }
    let mut report = AnnReport::default();
    // Units of progress: one per tree, two per iteration.
    let units = (plan.trees as f64 + 2.0 * plan.iters as f64).max(1.0);

    // Trees (their scratch shares memory with the candidate lists).
    {
        let mut ph = st.rest();
        let perm: &mut [usize] = ph.take(n)?;
        let tmp: &mut [usize] = ph.take(n)?;
        let pv1: &mut [usize] = ph.take(n)?;
        // (Unused since the pivots are found by each task: kept so the workspace is unchanged.)
        let _pv2: &mut [usize] = ph.take(n)?;
        let side: &mut [u8] = ph.take(n)?;
        let bnd: &mut [u8] = ph.take(n)?;
        // The first tree's features, in the given order.
        let f0 = if fast {
            let (ld, h) = (lay.panel_rows, lay.h);
            let Some(Some(t0)) = tasks.first() else {
                return Err(Error::Internal);
            };
            Some(Fast::build(
                views,
                kernels,
                eta,
                (t0.ev.eng.gamma, t0.ev.eng.scale_parts().1),
                (
                    ph.take_matrix::<f32>(ld, n)?,
                    ph.take_matrix::<f32>(h, n)?,
                    ph.take::<u8>(h)?,
                    ph.take::<usize>(h)?,
                    ph.take::<usize>(h)?,
                    ph.take::<f64>(h)?,
                    ph.take::<f64>(h)?,
                    ph.take::<f64>(h)?,
                ),
                (ld, h, chunk, plan.tasks),
                None,
                params.parallel,
            )?)
        } else {
            None
        };
        // Segments longer than this are split level by level, the items of a level spread over
        // the tasks; shorter ones are finished depth first by the task holding their start (a
        // segment's rows then stay in the caches while it is split further). The trees do not
        // depend on it: each segment's pivots come from the seed, the tree, its start and length.
        let small = (chunk / 4).clamp(plan.leaf + 1, SMALL_SEGMENT.max(plan.leaf + 1));
        for tree in 0..plan.trees {
            if tree > 0 && progress(tree as f64 / units) {
                return Err(Error::Cancelled);
            }
            let alt = if tree == 0 { f0.as_ref() } else { None };
            // The root segment, each task its range of positions (`O(N)` on the pool).
            {
                let items = Counted::new(
                    pieces_mut(&mut *perm, chunk.max(1))
                        .zip(pieces_mut(&mut *bnd, chunk.max(1)))
                        .enumerate(),
                    ntasks,
                );
                par.run_items(items, &|(t, (pm, bd))| {
                    let lo = t * chunk;
                    for (r, p) in pm.iter_mut().enumerate() {
                        *p = lo + r;
                    }
                    bd.fill(0);
                    if t == 0 {
                        if let Some(b) = bd.first_mut() {
                            *b = 1;
                        }
                    }
                    Ok(())
                })?;
            }
            let seed = params.seed;
            loop {
                // Sides of every segment longer than `small`, by position ranges: each task
                // finds the segments over its range from their starts in `bnd` and their
                // pivots from the hash (no serial pass). Blocks of `TREE_BLOCK` positions from
                // the segment's first position in the range, cut at its end and the range's.
                let split = AtomicUsize::new(0);
                let (perm_r, bnd_r) = (&*perm, &*bnd);
                let items = Counted::new(
                    tasks
                        .iter_mut()
                        .take(ntasks)
                        .zip(pieces_mut(&mut *side, chunk.max(1)))
                        .enumerate(),
                    ntasks,
                );
                par.run_items(items, &|(t, (task, side))| {
                    let Some(task) = task else {
                        return Err(Error::Internal);
                    };
                    let lo = t * chunk;
                    let hi = lo + side.len();
                    let mut s = seg_start(bnd_r, lo)?;
                    while s < hi {
                        let e = next_start(bnd_r, s);
                        let m = e - s;
                        if m > small {
                            split.fetch_add(1, Ordering::Relaxed);
                            let (a, b) = pivots(seed, tree, s, m);
                            let (pa, pb) = (perm_r.at(s + a)?, perm_r.at(s + b)?);
                            let (mut p, end) = (s.max(lo), e.min(hi));
                            while p < end {
                                let q = (p + TREE_BLOCK).min(end);
                                let rows = perm_r.part(p..q)?;
                                task.evals += task.ev.split(alt, rows, pa, pb)? as u64;
                                sides(task.ev.blk, side.part_mut(p - lo..q - lo)?, p)?;
                                p = q;
                            }
                        }
                        s = e;
                    }
                    Ok(())
                })?;
                if split.load(Ordering::Relaxed) == 0 {
                    break;
                }
                // Stable partition of every split segment, on the pool. Each task partitions
                // the part of each split segment in its range of positions (lefts first, into
                // `tmp`): a segment inside the range is finished there (its left count kept
                // in `pv1` at its start); of a segment that crosses the range's start or end
                // only the count of the part is kept (`ends[t]`: the first and the last part).
                let mut ends = [[0usize; 2]; MAX_TASKS];
                {
                    let (bnd_r, side_r) = (&*bnd, &*side);
                    let items = Counted::new(
                        pieces_mut(&mut *perm, chunk.max(1))
                            .zip(pieces_mut(&mut *tmp, chunk.max(1)))
                            .zip(pieces_mut(&mut *pv1, chunk.max(1)))
                            .zip(ends.iter_mut())
                            .enumerate(),
                        ntasks,
                    );
                    par.run_items(items, &|(t, (((pm, tm), pv), fl))| {
                        let lo = t * chunk;
                        let hi = lo + pm.len();
                        let mut s = seg_start(bnd_r, lo)?;
                        while s < hi {
                            let e = next_start(bnd_r, s);
                            if s >= lo {
                                *pv.at_mut(s - lo)? = NO_NEIGHBOR;
                            }
                            if e - s > small {
                                let (a, b) = (s.max(lo) - lo, e.min(hi) - lo);
                                let (seg, tp) = (pm.part_mut(a..b)?, tm.part_mut(a..b)?);
                                let sd = side_r.part(a + lo..b + lo)?;
                                if s >= lo && e <= hi {
                                    *pv.at_mut(s - lo)? = partition(seg, sd, tp)?;
                                } else {
                                    let nl = split_into(seg, sd, tp)?;
                                    if s < lo {
                                        *fl.at_mut(0)? = nl;
                                    }
                                    if e > hi {
                                        *fl.at_mut(1)? = nl;
                                    }
                                }
                            }
                            s = e;
                        }
                        Ok(())
                    })?;
                }
                // The split segments that cross a range's end (at most `P − 1`): their left
                // counts, and whether their parts move (not when every item went one side).
                let mut cross = [(0usize, 0usize, 0usize, false); MAX_TASKS];
                let mut nc = 0;
                for t in 1..ntasks {
                    let b = t * chunk;
                    if b >= n {
                        break;
                    }
                    let s = seg_start(bnd, b)?;
                    if s == b || (nc > 0 && cross.at(nc - 1)?.0 == s) {
                        continue;
                    }
                    let e = next_start(bnd, s);
                    let m = e - s;
                    if m <= small {
                        continue;
                    }
                    let mut nl = 0;
                    // (`chunk >= 1`; `max(1)` keeps a division by zero out of the optimised code.)
                    let (u0, u1) = (s / chunk.max(1), (e - 1) / chunk.max(1));
                    for u in u0..=u1 {
                        nl += ends.at(u)?.at(usize::from(u == u0))?;
                    }
                    let moved = nl != 0 && nl != m;
                    *cross.at_mut(nc)? = (s, e, if moved { nl } else { m / 2 }, moved);
                    nc += 1;
                }
                // The new segment starts inside the ranges, and the crossing segments' parts
                // gathered from `tmp` (lefts of every part in order, then the rights).
                {
                    let (tmp_r, pv_r, ends_r) = (&*tmp, &*pv1, &ends);
                    let cross_r = cross.part(..nc)?;
                    let items = Counted::new(
                        pieces_mut(&mut *perm, chunk.max(1))
                            .zip(pieces_mut(&mut *bnd, chunk.max(1)))
                            .enumerate(),
                        ntasks,
                    );
                    par.run_items(items, &|(t, (pm, bd))| {
                        let lo = t * chunk;
                        let hi = lo + pm.len();
                        let mut p = if bd.first() == Some(&0) {
                            next_start(bd, 0)
                        } else {
                            0
                        };
                        while p < bd.len() {
                            let e = next_start(bd, p);
                            let nl = pv_r.at(lo + p)?;
                            if nl != NO_NEIGHBOR {
                                *bd.at_mut(p + nl)? = 1;
                            }
                            p = e;
                        }
                        for &(s, e, nl_all, moved) in cross_r {
                            if !moved || e <= lo || s >= hi {
                                continue;
                            }
                            let (mut cl, mut cr) = (s, s + nl_all);
                            let (u0, u1) = (s / chunk.max(1), (e - 1) / chunk.max(1));
                            for u in u0..=u1 {
                                let (a, b) = (s.max(u * chunk), e.min((u + 1) * chunk));
                                let nl = ends_r.at(u)?.at(usize::from(u == u0))?;
                                copy_clipped(pm, lo, cl, tmp_r.part(a..a + nl)?)?;
                                copy_clipped(pm, lo, cr, tmp_r.part(a + nl..b)?)?;
                                cl += nl;
                                cr += b - a - nl;
                            }
                        }
                        Ok(())
                    })?;
                    for &(s, _, nl, _) in cross_r {
                        *bnd.at_mut(s + nl)? = 1;
                    }
                }
            }
            // The short segments, depth first: task `t` takes those starting from its range on
            // (the position ranges cut at segment starts).
            let mut cut = [n; MAX_TASKS + 1];
            if let Some(c) = cut.first_mut() {
                *c = 0;
            }
            for t in 1..ntasks {
                let from = (t * chunk).max(cut.get(t - 1).copied().unwrap_or(n)).min(n);
                let at = match bnd.get(from..) {
                    Some(rest) => from + rest.iter().position(|&b| b != 0).unwrap_or(rest.len()),
                    None => n,
                };
                *cut.at_mut(t)? = at;
            }
            let (pp, tp, sp, bp) = (
                parts_mut(&mut *perm, &cut, ntasks)?,
                parts_mut(&mut *tmp, &cut, ntasks)?,
                parts_mut(&mut *side, &cut, ntasks)?,
                parts_mut(&mut *bnd, &cut, ntasks)?,
            );
            let items = Counted::new(
                tasks
                    .iter_mut()
                    .take(ntasks)
                    .zip(pp)
                    .zip(tp)
                    .zip(sp)
                    .zip(bp)
                    .zip(cut),
                ntasks,
            );
            let (seed, leaf) = (params.seed, plan.leaf);
            par.run_items(items, &|(((((task, pm), tm), sd), bd), base)| {
                let Some(task) = task else {
                    return Err(Error::Internal);
                };
                task.evals +=
                    finish_segments(&mut task.ev, alt, (pm, tm, sd, bd), base, seed, tree, leaf)?;
                Ok(())
            })?;
            // After the first tree's splits: the renumbering, and the features in its order.
            if tree == 0 {
                if let (Some(order), Some((z, norm, kind, off, rows, w, g, inv))) =
                    (order_buf.take(), fast_parts.take())
                {
                    order.copy_checked(perm)?;
                    let order: &[usize] = order;
                    let Some(f0) = f0.as_ref() else {
                        return Err(Error::Internal);
                    };
                    let f = f0.permuted(
                        order,
                        (z, norm, kind, off, rows, w, g, inv),
                        (chunk, plan.tasks),
                        params.parallel,
                    )?;
                    for t in tasks.iter_mut().flatten() {
                        t.ev.fast = Some(f);
                    }
                    for (i, p) in perm.iter_mut().enumerate() {
                        *p = i;
                    }
                    order_ref = Some(order);
                }
            }
            // Leaf joins: the units are positions; a task owns the leaves starting in its range.
            let (perm_r, bnd_r) = (&*perm, &*bnd);
            for (t, task) in tasks.iter_mut().take(ntasks).flatten().enumerate() {
                task.cur = t * chunk;
                task.end = ((t + 1) * chunk).min(n);
            }
            let leaf_unit =
                |task: &mut Task<'_, '_, T, VS>, heaps: Heaps<'_>| -> Result<bool, Error> {
                    let s = task.cur;
                    if bnd_r.at(s)? == 0 {
                        task.cur += 1;
                        return Ok(true);
                    }
                    let e = next_start(bnd_r, s);
                    let m = e - s;
                    if task.len + m * (m - 1) / 2 > task.ua.len() {
                        return Ok(false);
                    }
                    let items = perm_r.part(s..e)?;
                    task.ev.prefix(items, m)?;
                    task.evals += (m * (m - 1) / 2) as u64;
                    for a in 0..m {
                        for b in a + 1..m {
                            let (i, j) = (items.at(a)?, items.at(b)?);
                            let v = task.ev.blk.at(a + b * m)?.to_f64();
                            if heaps.improves(i, j, v) || heaps.improves(j, i, v) {
                                task.emit(i, j, v);
                            }
                        }
                    }
                    task.cur = e;
                    Ok(true)
                };
            rounds(
                &mut tasks,
                ntasks,
                par,
                (neighbors, sims, flags),
                k,
                chunk,
                &leaf_unit,
            )?;
        }
    }

    // Random fill of the heaps that are not full.
    {
        let items = Counted::new(
            tasks
                .iter_mut()
                .take(ntasks)
                .zip(pieces_mut(neighbors, (chunk * k).max(1)))
                .zip(pieces_mut(sims, (chunk * k).max(1)))
                .zip(pieces_mut(flags, (chunk * k).max(1)))
                .enumerate(),
            ntasks,
        );
        let seed = params.seed;
        par.run_items(items, &|(t, (((task, nb), sm), fl))| {
            let Some(task) = task else {
                return Err(Error::Internal);
            };
            let lo = t * chunk;
            for (r, ((nb, sm), fl)) in nb
                .chunks_exact_mut(k.max(1))
                .zip(sm.chunks_exact_mut(k.max(1)))
                .zip(fl.chunks_exact_mut(k.max(1)))
                .enumerate()
            {
                let i = lo + r;
                let mut rng = Rng::new(mix(seed ^ 0x5eed_f111 ^ mix(i as u64)));
                let mut tries = 0;
                while nb.contains(&NO_NEIGHBOR) && tries < 8 {
                    tries += 1;
                    let want = nb.iter().filter(|&&x| x == NO_NEIGHBOR).count();
                    let mut got = 0;
                    for c in task.cols.iter_mut().take(want) {
                        let mut j = rng.below(n - 1);
                        if j >= i {
                            j += 1;
                        }
                        *c = j;
                        got += 1;
                    }
                    let cols = task.cols.part(..got)?;
                    task.ev.rect(&[i], cols)?;
                    task.evals += got as u64;
                    for (c, &j) in cols.iter().enumerate() {
                        let v = task.ev.blk.at(c)?.to_f64();
                        heap_push(nb, sm, fl, j, v);
                    }
                }
                // Still not full (a tiny `N`): the other items in order.
                let mut j0 = 0;
                while nb.contains(&NO_NEIGHBOR) && j0 < n {
                    let mut got = 0;
                    for c in task.cols.iter_mut() {
                        while j0 == i || (j0 < n && nb.contains(&j0)) {
                            j0 += 1;
                        }
                        if j0 >= n {
                            break;
                        }
                        *c = j0;
                        j0 += 1;
                        got += 1;
                    }
                    let cols = task.cols.part(..got)?;
                    task.ev.rect(&[i], cols)?;
                    task.evals += got as u64;
                    for (c, &j) in cols.iter().enumerate() {
                        let v = task.ev.blk.at(c)?.to_f64();
                        heap_push(nb, sm, fl, j, v);
                    }
                }
            }
            Ok(())
        })?;
    }
    // NN-descent iterations.
    let mut ph = st.rest();
    let c = plan.cand;
    let new_idx: &mut [usize] = ph.take_matrix(n, c)?;
    let old_idx: &mut [usize] = ph.take_matrix(n, c)?;
    let new_pri: &mut [u32] = ph.take_matrix(n, c)?;
    let old_pri: &mut [u32] = ph.take_matrix(n, c)?;
    for it in 0..plan.iters {
        if progress((plan.trees + 2 * it) as f64 / units) {
            return Err(Error::Cancelled);
        }
        // Candidates: each task clears and fills the lists of its item range from every edge.
        {
            let (nb, fl) = (&*neighbors, &*flags);
            let cl = (chunk * c).max(1);
            let items = Counted::new(
                pieces_mut(new_idx, cl.max(1))
                    .zip(pieces_mut(old_idx, cl.max(1)))
                    .zip(pieces_mut(new_pri, cl.max(1)))
                    .zip(pieces_mut(old_pri, cl.max(1)))
                    .enumerate(),
                ntasks,
            );
            let seed = params.seed;
            par.run_items(items, &|(t, (((ni, oi), np), op))| {
                ni.fill(NO_NEIGHBOR);
                oi.fill(NO_NEIGHBOR);
                let lo = t * chunk;
                let hi = (lo + chunk).min(n);
                let mine = |x: usize| x >= lo && x < hi;
                // The new lists first; then the old lists of the items that have new
                // candidates (the others' old lists are never read: their joins are empty).
                for new_pass in [true, false] {
                    for (i, (row, frow)) in nb
                        .chunks_exact(k.max(1))
                        .zip(fl.chunks_exact(k.max(1)))
                        .enumerate()
                    {
                        // The lists of the next item's neighbours in this range (random rows).
                        for &j in nb.get((i + 1) * k..(i + 2) * k).unwrap_or_default() {
                            if j != NO_NEIGHBOR && mine(j) {
                                let r = (j - lo) * c;
                                if new_pass {
                                    prefetch(ni.get(r..r + c).unwrap_or_default());
                                } else {
                                    prefetch(oi.get(r..r + c).unwrap_or_default());
                                }
                            }
                        }
                        for (&j, &f) in row.iter().zip(frow) {
                            if j == NO_NEIGHBOR || (f != 0) != new_pass || !(mine(i) || mine(j)) {
                                continue;
                            }
                            // Who gets the entry: items of this range (with new candidates
                            // when the entry is old).
                            let wants = |x: usize| -> bool {
                                mine(x)
                                    && (new_pass
                                        || ni.get((x - lo) * c).is_some_and(|&y| y != NO_NEIGHBOR))
                            };
                            let (wi, wj) = (wants(i), wants(j));
                            if !(wi || wj) {
                                continue;
                            }
                            let pr = priority(seed, it, i, j);
                            let (li, lp) = if new_pass {
                                (&mut *ni, &mut *np)
                            } else {
                                (&mut *oi, &mut *op)
                            };
                            if wi {
                                let r = (i - lo) * c;
                                cand_push(li.part_mut(r..r + c)?, lp.part_mut(r..r + c)?, j, pr);
                            }
                            if wj {
                                let r = (j - lo) * c;
                                cand_push(li.part_mut(r..r + c)?, lp.part_mut(r..r + c)?, i, pr);
                            }
                        }
                    }
                }
                Ok(())
            })?;
        }
        // The sampled new neighbours become old.
        {
            let ni = &*new_idx;
            let items = Counted::new(
                pieces_mut(flags, (chunk * k).max(1))
                    .zip(pieces(neighbors, (chunk * k).max(1)))
                    .enumerate(),
                ntasks,
            );
            par.run_items(items, &|(t, (fl, nb))| {
                let lo = t * chunk;
                for (r, (fr, nr)) in fl
                    .chunks_exact_mut(k.max(1))
                    .zip(nb.chunks_exact(k.max(1)))
                    .enumerate()
                {
                    let i = lo + r;
                    let list = valid(ni.part(i * c..i * c + c)?);
                    for (f, &j) in fr.iter_mut().zip(nr) {
                        if *f != 0 && list.contains(&j) {
                            *f = 0;
                        }
                    }
                }
                Ok(())
            })?;
        }
        // Local joins.
        for (t, task) in tasks.iter_mut().take(ntasks).flatten().enumerate() {
            task.cur = t * chunk;
            task.end = ((t + 1) * chunk).min(n);
        }
        let (ni, oi) = (&*new_idx, &*old_idx);
        let join_unit = |task: &mut Task<'_, '_, T, VS>, heaps: Heaps<'_>| -> Result<bool, Error> {
            let i = task.cur;
            let nw = valid(ni.part(i * c..i * c + c)?);
            let od = valid(oi.part(i * c..i * c + c)?);
            let (nr, no) = (nw.len(), od.len());
            if task.len + nr * (nr.saturating_sub(1)) / 2 + nr * no > task.ua.len() {
                return Ok(false);
            }
            task.cur += 1;
            if nr == 0 {
                return Ok(true);
            }
            let nc = nr + no;
            task.cols.part_mut(..nr)?.copy_checked(nw)?;
            task.cols.part_mut(nr..nc)?.copy_checked(od)?;
            for &q in task.cols.part(..nc)? {
                heaps.prefetch(q);
            }
            task.ev.prefix(task.cols.part(..nc)?, nr)?;
            task.evals += (nr * nc) as u64;
            for a in 0..nr {
                let p = nw.at(a)?;
                for b in a + 1..nc {
                    let q = if b < nr { nw.at(b)? } else { od.at(b - nr)? };
                    if p == q {
                        continue;
                    }
                    let v = task.ev.blk.at(a + b * nr)?.to_f64();
                    if heaps.improves(p, q, v) || heaps.improves(q, p, v) {
                        // A pair may come twice in one round: the heaps ignore the second.
                        task.emit(p, q, v);
                    }
                }
            }
            Ok(true)
        };
        let updates = rounds(
            &mut tasks,
            ntasks,
            par,
            (neighbors, sims, flags),
            k,
            chunk,
            &join_unit,
        )?;
        report.iterations = it + 1;
        report.last_updates = updates;
        if (updates as f64) <= params.delta * n as f64 * k as f64 {
            break;
        }
    }

    // The exact values of the lists scored in `f32`; best first, ties by the lower index.
    {
        let items = Counted::new(
            tasks
                .iter_mut()
                .take(ntasks)
                .zip(pieces_mut(neighbors, (chunk * k).max(1)))
                .zip(pieces_mut(sims, (chunk * k).max(1)))
                .enumerate(),
            ntasks,
        );
        par.run_items(items, &|(t, ((task, nb), sm))| {
            let Some(task) = task else {
                return Err(Error::Internal);
            };
            let exact = task.ev.fast.is_some();
            let lo = t * chunk;
            let rows = nb.len() / k.max(1);
            for r in 0..rows {
                // The rows before `r` (done: entries in their own numbers, sorted) and row `r`.
                let (Some((done_x, x)), Some((done_s, s))) = (
                    nb.split_at_mut_checked(r * k),
                    sm.split_at_mut_checked(r * k),
                ) else {
                    return Err(Error::Internal);
                };
                let (x, s) = (x.part_mut(..k)?, s.part_mut(..k)?);
                let (done_x, done_s) = (&*done_x, &*done_s);
                // Rows in the renumbered order (neighbours' columns then come again soon), the
                // entries and the item in their own numbers.
                let i = match order_ref {
                    Some(o) => o.at(lo + r)?,
                    None => lo + r,
                };
                if exact {
                    // A pair's value is bitwise the same whichever item is the row (the
                    // evaluator's panel products commute, `‖x‖² + ‖y‖²` too): an entry `j`
                    // that is an earlier row of this task with `i` in its list takes the value
                    // found there; the others are evaluated (`cols[..miss]`, their positions in
                    // `cols[k..]`).
                    let reuse = task.cols.len() >= 2 * k;
                    let mut miss = 0;
                    for (c, (e, sv)) in x.iter_mut().zip(s.iter_mut()).enumerate() {
                        if *e == NO_NEIGHBOR {
                            continue;
                        }
                        let q = *e;
                        if let Some(o) = order_ref {
                            *e = o.at(q)?;
                        }
                        let j = *e;
                        let mut found = None;
                        if reuse && q >= lo && q < lo + r {
                            let b = (q - lo) * k;
                            let row = done_x.part(b..b + k)?;
                            if let Some(t) = row.iter().position(|&y| y == i) {
                                found = Some(done_s.at(b + t)?);
                            }
                        }
                        match found {
                            Some(v) => *sv = v,
                            None if reuse => {
                                *task.cols.at_mut(miss)? = j;
                                *task.cols.at_mut(k + miss)? = c;
                                miss += 1;
                            }
                            None => {
                                task.ev.eng.block(&[i], &[j], task.ev.blk)?;
                                *sv = task.ev.blk.at(0)?.to_f64();
                                task.evals += 1;
                            }
                        }
                    }
                    if miss > 0 {
                        let Some((cj, cpos)) = task.cols.split_at_checked(k) else {
                            return Err(Error::Internal);
                        };
                        task.ev.eng.block(&[i], cj.part(..miss)?, task.ev.blk)?;
                        for (t, &c) in cpos.part(..miss)?.iter().enumerate() {
                            *s.at_mut(c)? = task.ev.blk.at(t)?.to_f64();
                        }
                        task.evals += miss as u64;
                    }
                } else if let Some(o) = order_ref {
                    for e in x.iter_mut() {
                        if *e != NO_NEIGHBOR {
                            *e = o.at(*e)?;
                        }
                    }
                }
                // Insertion sort (k is small).
                for a in 1..k {
                    let mut b = a;
                    while b > 0 {
                        let (Some(&xj), Some(&sj), Some(&xp), Some(&sp)) =
                            (x.get(b), s.get(b), x.get(b - 1), s.get(b - 1))
                        else {
                            break;
                        };
                        if !better(sj, xj, sp, xp) {
                            break;
                        }
                        // Swaps written as slice patterns: no index panic path.
                        if let Some([p, q]) = x.get_mut(b - 1..b + 1) {
                            core::mem::swap(p, q);
                        }
                        if let Some([p, q]) = s.get_mut(b - 1..b + 1) {
                            core::mem::swap(p, q);
                        }
                        b -= 1;
                    }
                }
            }
            Ok(())
        })?;
    }
    // Back to the items' own numbers: the rows (row `r` is item `order[r]`'s list; the
    // entries were renumbered above). When the candidate lists (free now) can hold a copy of
    // the lists, their values' bits and the inverse order (`c > k`, 64-bit `usize`), each task
    // gathers its range of rows from the copy, on the pool; else in place by cycles, serial
    // (`flags[r·k]` marks the rows placed). The same rows either way.
    if let Some(order) = order_ref {
        if usize::BITS == 64 && c > k {
            let (cn, rest) = new_idx.split_at_mut_checked(nk).ok_or(Error::Internal)?;
            let cs = old_idx.part_mut(..nk)?;
            let kc = (chunk * k).max(1);
            {
                let items = Counted::new(
                    pieces_mut(&mut *cn, kc)
                        .zip(pieces_mut(&mut *cs, kc))
                        .zip(pieces(neighbors, kc))
                        .zip(pieces(sims, kc)),
                    ntasks,
                );
                par.run_items(items, &|(((cn, cs), nb), sm)| {
                    cn.copy_checked(nb)?;
                    for (b, &v) in cs.iter_mut().zip(sm) {
                        *b = v.to_bits() as usize;
                    }
                    Ok(())
                })?;
            }
            // Where item `d`'s row is: `pos[order[r]] = r` (`N` stores).
            let pos = rest.part_mut(..n)?;
            for (r, &d) in order.iter().enumerate() {
                *pos.at_mut(d)? = r;
            }
            let (cn, cs, pos) = (&*cn, &*cs, &*pos);
            let items = Counted::new(
                pieces_mut(&mut *neighbors, kc)
                    .zip(pieces_mut(&mut *sims, kc))
                    .enumerate(),
                ntasks,
            );
            par.run_items(items, &|(t, (nb, sm))| {
                let lo = t * chunk;
                for (i, (nr, sr)) in nb
                    .chunks_exact_mut(k.max(1))
                    .zip(sm.chunks_exact_mut(k.max(1)))
                    .enumerate()
                {
                    let r = pos.at(lo + i)?;
                    nr.copy_checked(cn.part(r * k..r * k + k)?)?;
                    for (d, &b) in sr.iter_mut().zip(cs.part(r * k..r * k + k)?) {
                        *d = f64::from_bits(b as u64);
                    }
                }
                Ok(())
            })?;
        } else {
            flags.fill(0);
            let Some(Some(t0)) = tasks.first_mut() else {
                return Err(Error::Internal);
            };
            let cu = t0.cols.part_mut(..k)?;
            let cs = t0.ev.sd.part_mut(..k)?;
            for s0 in 0..n {
                if flags.at(s0 * k)? != 0 {
                    continue;
                }
                cu.copy_checked(neighbors.part(s0 * k..s0 * k + k)?)?;
                cs.copy_checked(sims.part(s0 * k..s0 * k + k)?)?;
                let mut p = s0;
                loop {
                    let d = order.at(p)?;
                    *flags.at_mut(d * k)? = 1;
                    for (a, b) in cu.iter_mut().zip(neighbors.part_mut(d * k..d * k + k)?) {
                        core::mem::swap(a, b);
                    }
                    for (a, b) in cs.iter_mut().zip(sims.part_mut(d * k..d * k + k)?) {
                        core::mem::swap(a, b);
                    }
                    p = d;
                    if d == s0 {
                        break;
                    }
                }
            }
        }
    }
    report.evaluations = tasks.iter().flatten().map(|t| t.evals).sum();
    // The end (the build is complete: a stop asked now changes nothing).
    let _ = progress(1.0);
    Ok(report)
}

/// The start of the segment after the one starting at `s`.
#[inline]
fn next_start(bnd: &[u8], s: usize) -> usize {
    let from = s + 1;
    match bnd.get(from..) {
        Some(rest) => from + rest.iter().position(|&b| b != 0).unwrap_or(rest.len()),
        None => bnd.len(),
    }
}

/// The two pivots (positions in the segment) of the segment of tree `tree` that starts at
/// position `s` and holds `m >= 2` items.
#[inline]
fn pivots(seed: u64, tree: usize, s: usize, m: usize) -> (usize, usize) {
    let h1 =
        mix(seed ^ mix(((tree as u64) << 40) ^ s as u64 ^ 0x7ee5) ^ (m as u64).rotate_left(23));
    let h2 = mix(h1);
    let a = ((u128::from(h1) * m as u128) >> 64) as usize;
    let mut b = ((u128::from(h2) * (m as u128 - 1)) >> 64) as usize;
    if b >= a {
        b += 1;
    }
    (a, b)
}

/// The sides of a block of rows from the values [`Eval::split`] left in `blk` (`pos`: the
/// position of the first row; ties go by its parity).
#[inline]
fn sides<T: Real>(blk: &[T], out: &mut [u8], pos: usize) -> Result<(), Error> {
    let nr = out.len();
    for (r, o) in out.iter_mut().enumerate() {
        let x = blk.at(r)?.to_f64();
        let y = blk.at(r + nr)?.to_f64();
        *o = if x > y {
            0
        } else if x < y {
            1
        } else {
            ((pos + r) & 1) as u8
        };
    }
    Ok(())
}

/// The start of the segment holding position `p` (`bnd[0]` is set).
#[inline]
fn seg_start(bnd: &[u8], p: usize) -> Result<usize, Error> {
    bnd.get(..=p)
        .and_then(|b| b.iter().rposition(|&x| x != 0))
        .ok_or(Error::Internal)
}

/// `src` written to positions `at..at + src.len()` of the positions `lo..lo + dst.len()` that
/// `dst` holds (the part outside them skipped).
fn copy_clipped(dst: &mut [usize], lo: usize, at: usize, src: &[usize]) -> Result<(), Error> {
    let (a, b) = (at.max(lo), (at + src.len()).min(lo + dst.len()));
    if a < b {
        dst.part_mut(a - lo..b - lo)?
            .copy_checked(src.part(a - at..b - at)?)?;
    }
    Ok(())
}

/// Stable partition of a segment by its sides into `tmp` (the same length): the lefts in
/// order, then the rights. Returns the items on the left.
fn split_into(seg: &[usize], sd: &[u8], tmp: &mut [usize]) -> Result<usize, Error> {
    let mut nleft = 0;
    for (&x, &d) in seg.iter().zip(sd) {
        if d == 0 {
            *tmp.at_mut(nleft)? = x;
            nleft += 1;
        }
    }
    let mut r = nleft;
    for (&x, &d) in seg.iter().zip(sd) {
        if d != 0 {
            *tmp.at_mut(r)? = x;
            r += 1;
        }
    }
    Ok(nleft)
}

/// Stable partition of a segment by its sides (`tmp`: scratch of the same length); a split
/// that puts every item on one side halves the segment instead. Returns the items on the left.
fn partition(seg: &mut [usize], sd: &[u8], tmp: &mut [usize]) -> Result<usize, Error> {
    let mut nleft = split_into(seg, sd, tmp)?;
    let m = seg.len();
    if nleft == 0 || nleft == m {
        nleft = m / 2;
    } else {
        seg.copy_checked(tmp)?;
    }
    Ok(nleft)
}

/// `s` cut at `cut[1..ntasks]` (`cut[0] = 0`, increasing): the first `ntasks` parts, then
/// empty ones.
fn parts_mut<'a, X>(
    s: &'a mut [X],
    cut: &[usize; MAX_TASKS + 1],
    ntasks: usize,
) -> Result<[&'a mut [X]; MAX_TASKS], Error> {
    let mut out: [&'a mut [X]; MAX_TASKS] = Default::default();
    let mut rest = s;
    let mut at = 0;
    for (t, o) in out.iter_mut().enumerate().take(ntasks) {
        let end = if t + 1 == ntasks {
            at + rest.len()
        } else {
            cut.get(t + 1).copied().ok_or(Error::Internal)?
        };
        let (a, b) = core::mem::take(&mut rest)
            .split_at_mut_checked(end.checked_sub(at).ok_or(Error::Internal)?)
            .ok_or(Error::Internal)?;
        *o = a;
        rest = b;
        at = end;
    }
    Ok(out)
}

/// Splits every segment of `perm` (starts marked in `bnd`, `bnd[0]` set) longer than `leaf`
/// until none is left, depth first. `base`: the position of `perm[0]` in the tree. Returns the
/// values computed.
fn finish_segments<T: Real, VS: ViewSet<T> + ?Sized>(
    ev: &mut Eval<'_, '_, T, VS>,
    alt: Option<&Fast<'_>>,
    (perm, tmp, side, bnd): (&mut [usize], &mut [usize], &mut [u8], &mut [u8]),
    base: usize,
    seed: u64,
    tree: usize,
    leaf: usize,
) -> Result<u64, Error> {
    let n = perm.len();
    let mut evals = 0u64;
    let mut s = 0;
    while s < n {
        let e = next_start(bnd, s).min(n);
        let m = e - s;
        if m <= leaf {
            s = e;
            continue;
        }
        let (a, b) = pivots(seed, tree, base + s, m);
        let (pa, pb) = (perm.at(s + a)?, perm.at(s + b)?);
        let mut p = s;
        while p < e {
            let q = (p + TREE_BLOCK).min(e);
            evals += ev.split(alt, perm.part(p..q)?, pa, pb)? as u64;
            sides(ev.blk, side.part_mut(p..q)?, base + p)?;
            p = q;
        }
        let nleft = partition(perm.part_mut(s..e)?, side.part(s..e)?, tmp.part_mut(s..e)?)?;
        *bnd.at_mut(s + nleft)? = 1;
    }
    Ok(evals)
}

/// Runs every task's units (`cur..end`) in rounds: each task evaluates units into its buffer
/// until the next might not fit, then the buffers are applied in task order, the heaps split
/// into the tasks' item ranges. Returns the number of heap insertions.
#[allow(clippy::too_many_arguments)]
fn rounds<'a, 'w, T: Real, VS: ViewSet<T> + Sync + ?Sized, U>(
    tasks: &mut [Option<Task<'a, 'w, T, VS>>; MAX_TASKS],
    ntasks: usize,
    par: Parallel,
    (neighbors, sims, flags): (&mut [usize], &mut [f64], &mut [u8]),
    k: usize,
    chunk: usize,
    unit: &U,
) -> Result<usize, Error>
where
    Task<'a, 'w, T, VS>: Send,
    U: Fn(&mut Task<'a, 'w, T, VS>, Heaps<'_>) -> Result<bool, Error> + Sync,
{
    let inserted = AtomicUsize::new(0);
    loop {
        if tasks.iter().flatten().all(|t| t.cur >= t.end) {
            break;
        }
        {
            let heaps = Heaps {
                k,
                idx: neighbors,
                sim: sims,
            };
            par.run_items(tasks.iter_mut().take(ntasks), &|task| {
                let Some(task) = task else {
                    return Err(Error::Internal);
                };
                task.len = 0;
                while task.cur < task.end {
                    if !unit(task, heaps)? {
                        break;
                    }
                }
                Ok(())
            })?;
        }
        let done: &[Option<Task<'a, 'w, T, VS>>; MAX_TASKS] = tasks;
        let cl = (chunk * k).max(1);
        let items = Counted::new(
            pieces_mut(neighbors, cl.max(1))
                .zip(pieces_mut(sims, cl.max(1)))
                .zip(pieces_mut(flags, cl.max(1)))
                .enumerate(),
            ntasks,
        );
        par.run_items(items, &|(t, ((nb, sm), fl))| {
            let lo = t * chunk;
            let hi = lo + nb.len() / k.max(1);
            let mut count = 0;
            for task in done.iter().flatten() {
                for (a, b, s) in task.pairs() {
                    for (x, y) in [(a, b), (b, a)] {
                        if x >= lo && x < hi {
                            let r = (x - lo) * k;
                            if heap_push(
                                nb.part_mut(r..r + k)?,
                                sm.part_mut(r..r + k)?,
                                fl.part_mut(r..r + k)?,
                                y,
                                s,
                            ) {
                                count += 1;
                            }
                        }
                    }
                }
            }
            inserted.fetch_add(count, Ordering::Relaxed);
            Ok(())
        })?;
    }
    Ok(inserted.into_inner())
}
