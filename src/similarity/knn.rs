//! Exact neighbours under the fused kernel `K = Σ_v η_v K_v` (`d² = 2 − 2K`), block by block.
//!
//! Cost: `O(P · Σ_v M_v)` for the `P` pairs the scope needs (`N²/2` for [`Scope::All`]: the
//! blocks below the diagonal are never computed), plus `O(P)` threshold tests; memory
//! `O(N + block² + block · Σ_{dense lin/RBF} M_v)` besides the `N × k` outputs, which hold the
//! heaps while the search runs.

use super::engine::{part_count, part_req, sym_in_parts, Engine, Mode, PartCtx};
use super::median::{self, Scratch};
use super::topk::{Filter, PairTop, TopK};
use super::{
    block_size, check_eta, check_labels, check_views, class_of, layout, ClassIndex, KernelSet,
    Layout,
};
use crate::data::{ViewSet, ViewShape};
use crate::error::Error;
use crate::linalg::real::Real;
use crate::par::Parallel;
use crate::work::{Slots, Stack, WorkReq};

pub use super::topk::NO_NEIGHBOR;

/// Which items are searched for which.
#[derive(Clone, Copy, Debug)]
pub enum Scope<'a> {
    /// Every item among all other items.
    All,
    /// Every labeled item among the other labeled items.
    Labeled,
    /// Every labeled item among the other labeled items of its class (`N⁺_k`).
    SameClass,
    /// Every labeled item among the labeled items of the other classes.
    OtherClass,
    /// Items with `query[i]` among the items with `candidate[j]`, `j ≠ i` (both `N` long).
    Masked {
        /// Items whose neighbours are wanted.
        query: &'a [bool],
        /// Items that may be neighbours.
        candidate: &'a [bool],
    },
}

/// Options of [`fused_knn`] and [`class_pairs`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KnnParams {
    /// Neighbours per query (or pairs per class), `>= 1` (default 5).
    pub k: usize,
    /// Items per block side (0: [`super::DEFAULT_BLOCK`]).
    pub block: usize,
    /// Who runs [`fused_knn`]'s search over all items ([`Scope::All`]) in
    /// at most four parts (default serial; the same neighbours for every
    /// choice).
    pub parallel: Parallel,
}

impl Default for KnnParams {
    fn default() -> Self {
        KnnParams {
            k: 5,
            block: 0,
            parallel: Parallel::Serial,
        }
    }
}

fn knn_req<T>(lay: &Layout, n_classes: usize, params: &KnnParams) -> WorkReq {
    let b = block_size(params.block, lay.n);
    let part = part_req::<T>(
        lay,
        b,
        b.saturating_mul(b),
        TopK::workspace(lay.n, params.k),
    );
    WorkReq::all_of(&[
        ClassIndex::workspace(lay.n, n_classes),
        WorkReq::matrix::<usize>(lay.n, 2),
        median::scratch_req(lay),
        WorkReq::matrix::<T>(b, b),
        super::engine::workspace::<T>(lay, b),
        part.times(part_count(lay.n, b)),
    ])
}

/// Workspace bytes of [`fused_knn`].
pub fn fused_knn_workspace<T>(
    shapes: impl IntoIterator<Item = ViewShape>,
    kernels: &(impl KernelSet + ?Sized),
    n_classes: usize,
    params: &KnnParams,
) -> Result<usize, Error> {
    let lay = layout(shapes, kernels)?;
    knn_req::<T>(&lay, n_classes, params).bytes()
}

/// The `k` nearest neighbours of every query item under the fused kernel (see [`Scope`]).
///
/// Writes, for item `i`, `neighbors[i·k .. i·k + k]` (item indices) and `sims[...]` (their
/// fused kernel values `K(i, j)`, so `d² = 2 − 2K`), best first, ties by the lower index.
/// Items that are not queries get [`NO_NEIGHBOR`] and `−∞`. `eta` (`H` weights `>= 0`, positive
/// sum) is normalised to the simplex. `labels`: one per item, or empty when the scope and the
/// kernels need none (every item is then unlabeled).
///
/// Errors, all before anything is written: `k = 0` or `k >= N` ([`Error::BadParameter`]);
/// shapes, values, kernels and labels as [`super::resolve_bandwidths`]; `η`
/// ([`Error::BadParameter`], [`Error::DimensionMismatch`]); output or mask lengths
/// ([`Error::DimensionMismatch`]); a labeled scope where some query has fewer than `k`
/// candidates — e.g. a class with at most `k` labeled items for [`Scope::SameClass`]
/// ([`Error::TooFewLabeled`]); a masked query with fewer than `k` candidates
/// ([`Error::BadParameter`]); workspace ([`Error::WorkspaceTooSmall`]).
#[allow(clippy::too_many_arguments)]
pub fn fused_knn<T: Real, VS: ViewSet<T> + Sync + ?Sized, KS: KernelSet + Sync + ?Sized>(
    views: &VS,
    kernels: &KS,
    eta: &[f64],
    labels: &[u32],
    n_classes: usize,
    scope: Scope<'_>,
    params: &KnnParams,
    neighbors: &mut [usize],
    sims: &mut [f64],
    work: &mut [u8],
) -> Result<(), Error> {
    let k = params.k;
    if k == 0 {
        return Err(Error::BadParameter);
    }
    let lay = check_views(views, kernels)?;
    let n = lay.n;
    if k >= n {
        return Err(Error::BadParameter);
    }
    check_eta(eta, lay.h)?;
    let nl = check_labels(labels, n, n_classes)?;
    let nk = n.checked_mul(k).ok_or(Error::SizeOverflow)?;
    if neighbors.len() != nk || sims.len() != nk {
        return Err(Error::DimensionMismatch);
    }
    if let Scope::Masked { query, candidate } = scope {
        if query.len() != n || candidate.len() != n {
            return Err(Error::DimensionMismatch);
        }
    }
    if lay.median && nl < 2 {
        return Err(Error::TooFewLabeled);
    }
    let need = knn_req::<T>(&lay, n_classes, params).bytes()?;
    let len = work.len();
    let b = block_size(params.block, lay.n);
    let mut st = Stack::new(work);
    // The label checks come before the workspace size check (a too-small workspace still
    // holds the class index, or fails with WorkspaceTooSmall here).
    let ci = ClassIndex::new(labels, n, n_classes, &mut st)?;
    // Enough candidates for every query?
    match scope {
        Scope::All => {}
        Scope::Labeled => {
            if nl < k + 1 {
                return Err(Error::TooFewLabeled);
            }
        }
        Scope::SameClass | Scope::OtherClass => {
            if nl == 0 {
                return Err(Error::TooFewLabeled);
            }
            for c in 0..n_classes {
                let m = ci.count(c);
                let avail = if matches!(scope, Scope::SameClass) {
                    m.saturating_sub(1)
                } else {
                    nl - m
                };
                if m > 0 && avail < k {
                    return Err(Error::TooFewLabeled);
                }
            }
        }
        Scope::Masked { query, candidate } => {
            let nc = candidate.iter().filter(|&&c| c).count();
            for (&q, &c) in query.iter().zip(candidate) {
                if q && nc - (c as usize) < k {
                    return Err(Error::BadParameter);
                }
            }
        }
    }
    if len < need {
        return Err(Error::WorkspaceTooSmall);
    }
    let lists: &mut [usize] = st.take_matrix(n, 2)?;
    let (qlist, clist) = lists.split_at_mut(n);
    let (mut nq, mut nc) = (0, 0);
    match scope {
        Scope::All => {
            for (i, q) in qlist.iter_mut().enumerate() {
                *q = i;
            }
            nq = n;
        }
        Scope::Masked { query, candidate } => {
            let (mut cs, mut qs) = (clist.iter_mut(), qlist.iter_mut());
            for (i, (&q, &c)) in query.iter().zip(candidate).enumerate() {
                // The next free slot of a list, taken only for an item it gets.
                if let Some(x) = c.then(|| cs.next()).flatten() {
                    *x = i;
                    nc += 1;
                }
                if let Some(x) = q.then(|| qs.next()).flatten() {
                    *x = i;
                    nq += 1;
                }
            }
        }
        _ => {}
    }
    let (queries, cands) = (
        qlist.get(..nq).unwrap_or_default(),
        clist.get(..nc).unwrap_or_default(),
    );
    let mut sc = Scratch::new(&lay, &mut st)?;
    let blk: &mut [T] = st.take_matrix(b, b)?;
    let tasks = part_count(n, b);
    let part = part_req::<T>(&lay, b, b * b, TopK::workspace(n, k));
    let parts = st.take_slots(tasks, part)?;
    let mut eng = Engine::new_par(views, kernels, &lay, b, st, params.parallel)?;
    median::resolve(&mut eng, ci.labeled(), &mut sc, blk)?;
    eng.set_mode(Mode::Fused, Some(eta));
    if let (Scope::All, true) = (scope, tasks > 0) {
        let ctx = PartCtx {
            views,
            kernels,
            lay: &lay,
            b,
            gamma: eng.gamma,
            scales: eng.scale_parts(),
            mode: Mode::Fused,
            eta: Some(eta),
        };
        let out = (neighbors, sims);
        return all_in_parts(&ctx, k, queries, (tasks, parts), out, params.parallel);
    }
    let filter = if matches!(scope, Scope::OtherClass) {
        Filter::Other(labels)
    } else {
        Filter::Any
    };
    let mut top = TopK::new(k, neighbors, sims, filter);
    match scope {
        Scope::All => eng.sym(queries, blk, &mut top)?,
        Scope::Labeled | Scope::OtherClass => eng.sym(ci.labeled(), blk, &mut top)?,
        Scope::SameClass => {
            for c in 0..ci.n_classes() {
                eng.sym(ci.class(c), blk, &mut top)?;
            }
        }
        Scope::Masked { .. } => eng.rect(queries, cands, blk, &mut top)?,
    }
    top.finish();
    Ok(())
}

/// [`Scope::All`] in `tasks` parts ([`sym_in_parts`]): each part offers its
/// pairs to heaps of its own, as the serial search does, and the output's
/// heaps absorb them ([`TopK::absorb`]). The heaps keep the top `k` of a
/// strict total order (similarity, then the lower index), so the result is
/// exactly the serial search's.
fn all_in_parts<'s, T: Real, VS: ViewSet<T> + Sync + ?Sized, KS: KernelSet + Sync + ?Sized>(
    ctx: &PartCtx<'_, VS, KS>,
    k: usize,
    items: &[usize],
    parts: (usize, Slots<'s>),
    (neighbors, sims): (&mut [usize], &mut [f64]),
    par: Parallel,
) -> Result<(), Error> {
    let n = ctx.lay.n;
    let heaps = |st: &mut Stack<'s>| -> Result<TopK<'s>, Error> {
        let idx: &mut [usize] = st.take_matrix(n, k)?;
        let sim: &mut [f64] = st.take_matrix(n, k)?;
        Ok(TopK::new(k, idx, sim, Filter::Any))
    };
    let got = sym_in_parts(ctx, (items, ctx.b * ctx.b), parts, par, &heaps)?;
    let mut top = TopK::new(k, neighbors, sims, Filter::Any);
    for part in got.iter().flatten() {
        top.absorb(part);
    }
    top.finish();
    Ok(())
}

fn pairs_req<T>(lay: &Layout, n_classes: usize, params: &KnnParams) -> WorkReq {
    let b = block_size(params.block, lay.n);
    WorkReq::all_of(&[
        ClassIndex::workspace(lay.n, n_classes),
        PairTop::workspace(n_classes, params.k),
        median::scratch_req(lay),
        WorkReq::matrix::<T>(b, b),
        super::engine::workspace::<T>(lay, b),
    ])
}

/// Workspace bytes of [`class_pairs`].
pub fn class_pairs_workspace<T>(
    shapes: impl IntoIterator<Item = ViewShape>,
    kernels: &(impl KernelSet + ?Sized),
    n_classes: usize,
    params: &KnnParams,
) -> Result<usize, Error> {
    let lay = layout(shapes, kernels)?;
    pairs_req::<T>(&lay, n_classes, params).bytes()
}

/// Seed 003's `N_kp(c)` for every class `c`: the `kp = params.k` most similar pairs `(i, j)`
/// under the fused kernel with `i` labeled of class `c` and `j` labeled of another class. One
/// pass over the unordered labeled pairs.
///
/// Writes, for class `c` and rank `p < kp` (best first; equal values ordered by the lower
/// `(min(i,j), max(i,j))`), `pairs[2(c·kp + p)] = i`, `pairs[2(c·kp + p) + 1] = j` and
/// `sims[c·kp + p] = K(i, j)`. Classes without labeled items get [`NO_NEIGHBOR`] and `−∞`.
///
/// Errors as [`fused_knn`]; a class with labeled items but fewer than `kp` cross pairs
/// (`n_c (N_l − n_c) < kp`), or no labeled items at all ([`Error::TooFewLabeled`]);
/// `pairs.len() != 2·C·kp`, `sims.len() != C·kp` ([`Error::DimensionMismatch`]).
#[allow(clippy::too_many_arguments)]
pub fn class_pairs<T: Real, VS: ViewSet<T> + ?Sized, KS: KernelSet + ?Sized>(
    views: &VS,
    kernels: &KS,
    eta: &[f64],
    labels: &[u32],
    n_classes: usize,
    params: &KnnParams,
    pairs: &mut [usize],
    sims: &mut [f64],
    work: &mut [u8],
) -> Result<(), Error> {
    let kp = params.k;
    if kp == 0 {
        return Err(Error::BadParameter);
    }
    let lay = check_views(views, kernels)?;
    check_eta(eta, lay.h)?;
    if labels.is_empty() {
        return Err(Error::TooFewLabeled);
    }
    let nl = check_labels(labels, lay.n, n_classes)?;
    let ck = n_classes.checked_mul(kp).ok_or(Error::SizeOverflow)?;
    if pairs.len() != ck.checked_mul(2).ok_or(Error::SizeOverflow)? || sims.len() != ck {
        return Err(Error::DimensionMismatch);
    }
    if nl < 2 {
        return Err(Error::TooFewLabeled);
    }
    let need = pairs_req::<T>(&lay, n_classes, params).bytes()?;
    let len = work.len();
    let b = block_size(params.block, lay.n);
    let mut st = Stack::new(work);
    let ci = ClassIndex::new(labels, lay.n, n_classes, &mut st)?;
    check_pair_counts(&ci, kp)?;
    if len < need {
        return Err(Error::WorkspaceTooSmall);
    }
    let lo: &mut [usize] = st.take(ck)?;
    let hi: &mut [usize] = st.take(ck)?;
    let ps: &mut [f64] = st.take(ck)?;
    let mut sc = Scratch::new(&lay, &mut st)?;
    let blk: &mut [T] = st.take_matrix(b, b)?;
    let mut eng = Engine::new(views, kernels, &lay, b, st)?;
    median::resolve(&mut eng, ci.labeled(), &mut sc, blk)?;
    eng.set_mode(Mode::Fused, Some(eta));
    let mut top = PairTop::new(kp, labels, lo, hi, ps);
    eng.sym(ci.labeled(), blk, &mut top)?;
    top.finish();
    // Class `c`'s pairs at `c·kp..`, each `(i, j)` with `i` of class `c`.
    for (c, pc) in pairs
        .chunks_exact_mut((2 * kp).max(1))
        .enumerate()
        .take(n_classes)
    {
        let sc = sims.get_mut(c * kp..(c + 1) * kp).unwrap_or_default();
        let (l, h, s) = top.get(c);
        for (((pq, sq), (&lo, &hi)), &s) in
            pc.chunks_exact_mut(2).zip(sc).zip(l.iter().zip(h)).zip(s)
        {
            let (i, j) = if lo != NO_NEIGHBOR && class_of(labels, lo) == Some(c) {
                (lo, hi)
            } else {
                (hi, lo)
            };
            if let [a, b] = pq {
                (*a, *b) = (i, j);
            }
            *sq = s;
        }
    }
    Ok(())
}

/// Every class with labeled items has at least `kp` cross-class pairs.
pub(crate) fn check_pair_counts(ci: &ClassIndex<'_>, kp: usize) -> Result<(), Error> {
    let nl = ci.labeled().len();
    for c in 0..ci.n_classes() {
        let m = ci.count(c);
        if m > 0 && (m as u128) * ((nl - m) as u128) < kp as u128 {
            return Err(Error::TooFewLabeled);
        }
    }
    Ok(())
}
