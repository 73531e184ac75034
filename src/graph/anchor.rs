//! MVEL's anchor graphs (seed 002 §2.3, DESIGN §8): the fused multi-view
//! similarity between `n` items and `m ≪ n` anchors, kept for each item's `s`
//! nearest anchors — `O(n·s)` numbers where the dense graph
//! ([`crate::graph::fused_graph`]) takes `n²`.
//!
//! ```text
//! w(u, a) = Σ_{i,j} p(G_ij) · w_ij(u, a) / v_ij                (item u, anchor a)
//! z(a, u) = w(u, a) / Σ_{b ∈ ⟨u⟩} w(u, b)    for the s anchors ⟨u⟩ of largest w(u, ·); 0 elsewhere
//! w_ii(u, a) = exp(−γ_ii ‖x_u⁽ⁱ⁾ − a⁽ⁱ⁾‖²)
//! w_ij(u, a) = exp(−γ_ij ‖Φⁱᵀ(x_u⁽ⁱ⁾ − μ_i) − Φʲᵀ(a⁽ʲ⁾ − μ_j)‖²)      (i ≠ j: CCA of views i and j)
//! ```
//!
//! * **Anchors**: `J` dense views of the same `m` anchors (`d_v × m`), any
//!   points; [`anchors_by_kmeans`] gives the paper's (k-means centroids).
//! * **Parts**: the item's view `i` against the anchor's view `j`, so both
//!   ordered pairs of views count (the dense graph's `w_ij + w_ji`). Priors
//!   as [`crate::graph::fused_graph`]: given (`J × J`, symmetric, summing to
//!   1) or uniform; `cross_view = false` keeps the diagonal parts only.
//! * **Scales**: `2J²` numbers, the bandwidths `γ_ij` (index `i + jJ`), then
//!   the mean item volumes `v_ij = (1/n) Σ_{u,a} w_ij(u, a)` (index
//!   `J² + i + jJ`). An entry 0 is chosen from these items — a bandwidth as
//!   `1 / median d²` over a sample of the items (items `0, t, 2t, …`, at
//!   most the block size below, against every anchor: `O(block·m)` memory,
//!   where the median of all `n·m` distances would need `n·m`), a volume as the
//!   mean over the items; a positive entry is used as given. All are written
//!   back, so that **new items** get the training run's `z(x)` by passing its
//!   scales and its views as `train` (where the CCA directions are computed).
//!   `params.sigma > 0` is the cross-view bandwidth of an entry 0.
//! * An item whose `s` largest weights all underflow to 0 (far from every
//!   anchor at these bandwidths) takes the `s` anchors of smallest
//!   `e(u, a) = Σ p(G_ij) γ_ij d²_ij(u, a)` with weights `∝ exp(−(e − e_min))`
//!   (the parts' kernels combined geometrically instead of arithmetically): a
//!   choice, so that `z` is always a distribution.
//!
//! The graph the model uses is `W̃ = Zᵀ Λ⁻¹ Z` (`Λ = diag(Z 1)`, never
//! formed): its rows sum to 1 (total weight `n`, as the dense graph), and for
//! `H = A Z` the term `tr(H (I − W̃) Hᵀ) = tr(A (G − G Λ⁻¹ G) Aᵀ)` with
//! `G = Z Zᵀ` — [`AnchorGraph`] over the `m` anchors ([`anchor_gram`]).
//!
//! **Cost**: the CCA per view pair (as the dense graph); per part `O(n·m·d)`
//! twice (volumes, then weights; once with given volumes) plus the sample;
//! workspace `O(block·m + Σ d·p + p·m)` with `block = max(16, 2¹⁸/m)` items
//! (at most `n`); output `n·s` indices and weights.

use crate::data::{Dense, FactorsMut, View, ViewKind, ViewSet, ViewShape};
use crate::error::{Error, Part};
use crate::graph::fused::{
    bandwidth, check_priors, mean_variance, prior_of, project, sq_dists, FusedParams, TOO_LARGE,
};
use crate::graph::{GraphBuild, GraphOp};
use crate::linalg::mat::MatRef;
use crate::linalg::real::Real;
use crate::linalg::select::top_n_by;
use crate::linalg::{gemm_into, gemm_req, swap_at};
use crate::par::{pieces, pieces_mut, Counted, Parallel};
use crate::similarity::cca::{cca, cca_req};
use crate::similarity::kmeans::{kmeans, kmeans_workspace, KMeansParams, KMeansReport};
use crate::similarity::{
    approx_knn, approx_knn_workspace, AnnParams, Bandwidth, Kernel, KernelSet,
};
use crate::work::{Stack, WorkReq};

/// Distances per block: `block = max(16, BLOCK_ENTRIES / m)` items.
const BLOCK_ENTRIES: usize = 1 << 18;

fn block_of(n: usize, m: usize) -> usize {
    (BLOCK_ENTRIES / m).max(16).min(n)
}

/// Number of scales of [`anchor_graph`] for `J` views: `2J²`.
pub fn anchor_scales_len(views: usize) -> usize {
    2 * views * views
}

/// `J ≥ 1` dense views with the same column count `≥ 1`; returns `(cols, J)`.
fn dense_dims(shapes: impl IntoIterator<Item = ViewShape>) -> Result<(usize, usize), Error> {
    let mut n = None;
    let mut j = 0;
    for s in shapes {
        if s.rows == 0 || s.cols == 0 {
            return Err(Error::ZeroDimension);
        }
        if s.kind != ViewKind::Dense {
            return Err(Error::BadParameter);
        }
        if *n.get_or_insert(s.cols) != s.cols {
            return Err(Error::DimensionMismatch);
        }
        j += 1;
    }
    Ok((n.ok_or(Error::ZeroDimension)?, j))
}

/// Same view count `nv` and the same feature count per view.
fn same_features(
    rows: &dyn Fn(usize) -> usize,
    nv: usize,
    b: impl IntoIterator<Item = ViewShape>,
) -> Result<(), Error> {
    let mut k = 0;
    for s in b {
        if k >= nv || rows(k) != s.rows {
            return Err(Error::DimensionMismatch);
        }
        k += 1;
    }
    if k != nv {
        return Err(Error::DimensionMismatch);
    }
    Ok(())
}

/// Finite values and `‖X‖²_F ≤ 2^999` in every view of a set.
fn check_set_values<T: Real, VS: ViewSet<T> + ?Sized>(vs: &VS) -> Result<(), Error> {
    for i in 0..vs.count() {
        let v = vs.view(i);
        v.check_values(false)?;
        let sq = v.sq_frobenius();
        if sq.is_nan() || sq > TOO_LARGE {
            return Err(Error::InputTooLarge);
        }
    }
    Ok(())
}

fn dense<'v, T: Real, VS: ViewSet<T> + ?Sized>(
    vs: &'v VS,
    i: usize,
) -> Result<MatRef<'v, T>, Error> {
    match vs.view(i) {
        View::Dense(d) => Ok(d.mat()),
        View::Csc(_) => Err(Error::BadParameter),
    }
}

// ---------------------------------------------------------------- anchors

/// Workspace bytes of [`anchors_by_kmeans`].
pub fn anchors_by_kmeans_workspace<T>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    m: usize,
    kparams: &KMeansParams,
) -> Result<usize, Error> {
    anchors_req(shapes, m, kparams)?.bytes()
}

fn anchors_req(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    m: usize,
    kparams: &KMeansParams,
) -> Result<WorkReq, Error> {
    anchors_req_on(shapes, m, kparams, None)
}

/// The workspace of the anchors from `sample` items (`None`: all `n`).
fn anchors_req_on(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    m: usize,
    kparams: &KMeansParams,
    sample: Option<usize>,
) -> Result<WorkReq, Error> {
    let (n, _) = dense_dims(shapes.clone())?;
    let d = shapes
        .into_iter()
        .try_fold(0usize, |a, s| a.checked_add(s.rows))
        .ok_or(Error::SizeOverflow)?;
    if m == 0 {
        return Err(Error::ZeroDimension);
    }
    if m > n {
        return Err(Error::BadParameter);
    }
    d.checked_mul(n).ok_or(Error::SizeOverflow)?;
    let (s, picked) = match sample {
        None => (n, WorkReq::EMPTY),
        Some(s) => {
            let s = sample_size(s, m, n);
            (s, WorkReq::new::<usize>(s))
        }
    };
    Ok(WorkReq::all_of(&[
        picked,
        WorkReq::matrix::<f64>(d, s),
        WorkReq::new::<u32>(s),
        WorkReq::matrix::<f64>(d, m),
        WorkReq::new::<u8>(crate::work::ALIGN),
        WorkReq::new::<u8>(kmeans_workspace(d, s, m, kparams)?),
    ]))
}

/// Items k-means runs on for a requested sample of `s`: `s` clamped to `[m, n]`.
fn sample_size(s: usize, m: usize, n: usize) -> usize {
    s.clamp(m, n)
}

/// Fills `out` with a uniform sample of `out.len() <= n` of the items `0..n`, without
/// replacement and in order (Knuth's selection sampling).
fn select_items(n: usize, rng: &mut crate::rng::Rng, out: &mut [usize]) {
    let want = out.len().min(n);
    let mut got = 0;
    for t in 0..n {
        if got == want {
            break;
        }
        // Selected with probability (want − got) / (n − t).
        if rng.below(n - t) < want - got {
            if let Some(o) = out.get_mut(got) {
                *o = t;
            }
            got += 1;
        }
    }
}

/// Seed stream of the item sample of [`anchors_by_kmeans_sampled`] (xor the k-means seed).
const ANCHOR_SAMPLE_STREAM: u64 = 0x616e_6368_6f72_7321;

/// Workspace bytes of [`anchors_by_kmeans_sampled`].
pub fn anchors_by_kmeans_sampled_workspace<T>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    m: usize,
    kparams: &KMeansParams,
    sample: usize,
) -> Result<usize, Error> {
    anchors_req_on(shapes, m, kparams, Some(sample))?.bytes()
}

/// [`anchors_by_kmeans`] with k-means (k-means++ seeding and Lloyd's iterations, every
/// restart) run on a seeded uniform sample of `sample` items (clamped to `[m, n]`; chosen
/// without replacement by Knuth's selection sampling from `kparams.seed`, in item order)
/// instead of all `n`: the scalable path of issue 30. The view scales are still those of
/// all `n` items; the returned report's inertia is the sample's. `sample >= n` is bitwise
/// [`anchors_by_kmeans`].
///
/// Cost `O(sample·m·Σd)` per Lloyd iteration instead of `O(n·m·Σd)`, plus `O(n·Σd)` for
/// the scales; workspace `Σd·(sample + m)` `f64`s, `sample` indices and the k-means' for
/// `sample` items. Errors as [`anchors_by_kmeans`].
///
/// **Measured effect** on MVEL (`cargo run --release --example mvel_sampled_anchors --
/// 20000`: `bench_mvel`'s data, n = 20 000, m = 500 anchors, s = 5, k-means with one
/// restart and at most 30 Lloyd iterations; one run each, wall seconds on the shared 2-core
/// machine at a load of about 30, so only the ratios mean something; AUC of the hidden
/// positives among the unknown entries of `Y`):
///
/// | k-means on | anchors s | anchor graph s | fit s | AUC | objective |
/// |---|---|---|---|---|---|
/// | all 20 000 items | 567.84 | 38.60 | 2.73 | 0.9575 | −1.599200·10⁴ |
/// | 10 000 (`20·m`) | 169.96 | 37.13 | 2.97 | 0.9577 | −1.599200·10⁴ |
/// | 5 000 (`10·m`) | 70.40 | 48.89 | 3.44 | 0.9579 | −1.599200·10⁴ |
///
/// So a sample of `10·m` items made the anchors 8× faster with the same AUC (+0.0004) and
/// the same objective to seven digits; the anchors stop dominating MVEL's time.
pub fn anchors_by_kmeans_sampled<T: Real, VS: ViewSet<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
    views: &VS,
    m: usize,
    kparams: &KMeansParams,
    sample: usize,
    anchors: &mut F,
    work: &mut [u8],
) -> Result<KMeansReport, Error> {
    anchors_on(views, m, kparams, Some(sample), anchors, work)
}

/// The paper's anchors: k-means (`m` clusters, [`kmeans`] with `kparams`) of
/// the items over all views at once — each view scaled so that its centred
/// `‖X − μ1ᵀ‖²_F = n` (so every view counts alike; a constant view keeps its
/// scale) and the views stacked — and each anchor's view `v` the centroid's
/// part `v`, unscaled. Writes anchor view `v` into `anchors.get_mut(v)` (`d_v × m`, column-major) only on
/// success and returns the k-means report.
///
/// Errors: shapes as [`anchor_graph`]; `m = 0` ([`Error::ZeroDimension`]),
/// `m > n` ([`Error::BadParameter`]), `anchors[v].len() ≠ d_v·m`
/// ([`Error::DimensionMismatch`]), values ([`Error::NonFiniteInput`],
/// [`Error::InputTooLarge`]), k-means parameters, the workspace.
///
/// Cost: `O(n·m·Σd)` per Lloyd iteration; workspace `Σd·(n + m)` `f64`s and
/// the k-means'.
pub fn anchors_by_kmeans<T: Real, VS: ViewSet<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
    views: &VS,
    m: usize,
    kparams: &KMeansParams,
    anchors: &mut F,
    work: &mut [u8],
) -> Result<KMeansReport, Error> {
    anchors_on(views, m, kparams, None, anchors, work)
}

fn anchors_on<T: Real, VS: ViewSet<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
    views: &VS,
    m: usize,
    kparams: &KMeansParams,
    sample: Option<usize>,
    anchors: &mut F,
    work: &mut [u8],
) -> Result<KMeansReport, Error> {
    kparams.validate()?;
    let nv = views.count();
    let req = anchors_req_on((0..nv).map(|i| views.shape(i)), m, kparams, sample)?;
    let (n, _) = dense_dims((0..nv).map(|i| views.shape(i)))?;
    if anchors.count() != nv {
        return Err(Error::DimensionMismatch);
    }
    for i in 0..nv {
        if anchors.get(i).len() != views.shape(i).rows * m {
            return Err(Error::DimensionMismatch);
        }
    }
    check_set_values(views)?;
    req.check(work.len())?;
    let d: usize = (0..nv).map(|i| views.shape(i).rows).sum();
    let mut st = Stack::new(work);
    // The items k-means runs on: all, or a seeded sample (in item order).
    let (s, picked): (usize, Option<&[usize]>) = match sample {
        None => (n, None),
        Some(want) => {
            let s = sample_size(want, m, n);
            let pk: &mut [usize] = st.take(s)?;
            if s < n {
                let mut rng = crate::rng::Rng::new(kparams.seed ^ ANCHOR_SAMPLE_STREAM);
                select_items(n, &mut rng, pk);
            } else {
                for (i, p) in pk.iter_mut().enumerate() {
                    *p = i;
                }
            }
            (s, Some(&*pk))
        }
    };
    let item = |t: usize| picked.map_or(t, |p| p.get(t).copied().unwrap_or(0));
    let stacked: &mut [f64] = st.take_matrix(d, s)?;
    let assign: &mut [u32] = st.take(s)?;
    let cent: &mut [f64] = st.take_matrix(d, m)?;
    let rest = st.take_rest();
    let mut off = 0;
    for i in 0..nv {
        let x = dense(views, i)?;
        let c = view_scale(x);
        for (t, col) in stacked.chunks_exact_mut(d.max(1)).enumerate().take(s) {
            let u = item(t);
            let part = col.get_mut(off..off + x.rows()).ok_or(Error::Internal)?;
            for (f, s) in part.iter_mut().enumerate() {
                *s = x.at(f, u).to_f64() * c;
            }
        }
        off += x.rows();
    }
    let sm = MatRef::col_major(&*stacked, d, s)?;
    let report = kmeans(sm, m, kparams, assign, Some(&mut *cent), rest)?;
    let mut off = 0;
    for i in 0..nv {
        let out = anchors.get_mut(i);
        let x = dense(views, i)?;
        let c = view_scale(x);
        let di = x.rows();
        for (a, oc) in out.chunks_exact_mut(di.max(1)).enumerate().take(m) {
            let src = cent
                .get(a * d + off..a * d + off + di)
                .ok_or(Error::Internal)?;
            for (o, &v) in oc.iter_mut().zip(src) {
                *o = T::from_f64(v / c);
            }
        }
        off += di;
    }
    Ok(report)
}

/// `sqrt(n / ‖X − μ1ᵀ‖²_F)`, or 1 for a constant view.
fn view_scale<T: Real>(x: MatRef<'_, T>) -> f64 {
    let n = x.cols() as f64;
    let mut ss = 0.0;
    for f in 0..x.rows() {
        let mean = (0..x.cols()).map(|u| x.at(f, u).to_f64()).sum::<f64>() / n;
        ss += (0..x.cols())
            .map(|u| {
                let t = x.at(f, u).to_f64() - mean;
                t * t
            })
            .sum::<f64>();
    }
    let c = libm::sqrt(n / ss);
    if c.is_finite() && c > 0.0 {
        c
    } else {
        1.0
    }
}

// ---------------------------------------------------------------- the graph

/// One stored CCA of views `lo < hi`: directions, means, projected anchors.
struct PairSlot {
    p: usize,
    off: usize,
}

/// The slot of pair `(lo, hi)` (`lo < hi`) in the CCA store, pairs in order
/// `(0,1), (0,2), …, (1,2), …` with a nonzero prior; its size
/// `p(d_lo + d_hi) + d_lo + d_hi + 2pm`.
fn pair_slot(
    shapes: &dyn Fn(usize) -> usize,
    nv: usize,
    used: &dyn Fn(usize, usize) -> bool,
    params: &FusedParams,
    m: usize,
    lo: usize,
    hi: usize,
) -> Option<PairSlot> {
    let mut off = 0usize;
    for a in 0..nv {
        for b in a + 1..nv {
            if !used(a, b) {
                continue;
            }
            let (da, db) = (shapes(a), shapes(b));
            let p = params.dims(da, db);
            if (a, b) == (lo, hi) {
                return Some(PairSlot { p, off });
            }
            off = off.checked_add(slot_len(da, db, p, m)?)?;
        }
    }
    None
}

fn slot_len(da: usize, db: usize, p: usize, m: usize) -> Option<usize> {
    let d = da.checked_add(db)?;
    p.checked_mul(d)?
        .checked_add(d)?
        .checked_add(p.checked_mul(m)?.checked_mul(2)?)
}

fn graph_req<T>(
    rows: &dyn Fn(usize) -> usize,
    nv: usize,
    n: usize,
    n_train: usize,
    m: usize,
    params: &FusedParams,
    used: &dyn Fn(usize, usize) -> bool,
) -> Result<WorkReq, Error> {
    let b = block_of(n, m);
    b.checked_mul(m).ok_or(Error::SizeOverflow)?;
    let mut store = 0usize;
    let mut phase = WorkReq::EMPTY;
    let dmax = (0..nv).map(rows).max().unwrap_or(0);
    let mut pmax = 0;
    for a in 0..nv {
        for c in a + 1..nv {
            if !used(a, c) {
                continue;
            }
            let (da, dc) = (rows(a), rows(c));
            let p = params.dims(da, dc);
            pmax = pmax.max(p);
            store = store
                .checked_add(slot_len(da, dc, p, m).ok_or(Error::SizeOverflow)?)
                .ok_or(Error::SizeOverflow)?;
            phase = phase
                .or(WorkReq::all_of(&[
                    WorkReq::new::<T>(p), // ρ
                    WorkReq::new::<u8>(crate::work::ALIGN),
                    cca_req::<T>(da, dc, n_train, p),
                ]))
                .or(gemm_req::<T>(p, m, da.max(dc)));
        }
    }
    // Per part: the items' projection, the norms and the distance GEMM.
    let part = WorkReq::all_of(&[
        WorkReq::matrix::<T>(pmax, b),
        WorkReq::new::<T>(m),
        WorkReq::new::<T>(b),
        gemm_req::<T>(m, b, dmax.max(pmax)),
        gemm_req::<T>(pmax, b, dmax),
    ]);
    Ok(WorkReq::all_of(&[
        WorkReq::new::<T>(store),
        WorkReq::new::<f64>(2 * nv * nv), // scales
        WorkReq::new::<f64>(nv * nv),     // volumes
        WorkReq::matrix::<T>(m, b),       // distances
        WorkReq::matrix::<f64>(m, b),     // weights
        WorkReq::matrix::<f64>(m, b),     // exponents
        WorkReq::new::<u8>(crate::work::ALIGN),
        phase.or(part),
    ]))
}

/// Workspace bytes of [`anchor_graph`] for `n` items of these view shapes,
/// `m` anchors, `n_train` training items (`n` when `train` is `None`) and
/// these priors (`None`: uniform).
pub fn anchor_graph_workspace<T>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    n_train: usize,
    m: usize,
    priors: Option<&[f64]>,
    params: &FusedParams,
) -> Result<usize, Error> {
    params.validate()?;
    let (n, nv) = dense_dims(shapes.clone())?;
    if let Some(p) = priors {
        check_priors(p, nv, params.cross_view)?;
    }
    if m == 0 {
        return Err(Error::ZeroDimension);
    }
    let rows = |i: usize| shapes.clone().into_iter().nth(i).map_or(0, |s| s.rows);
    let used = |a: usize, b: usize| {
        params.cross_view && prior_of(priors, nv, params.cross_view, a, b) > 0.0
    };
    graph_req::<T>(&rows, nv, n, n_train, m, params, &used)?.bytes()
}

/// Builds the anchor graph `Z` of `views` (`n` items) over `anchors` (module
/// docs): for item `u`, `idx[k + u·s]` (`k < s`) the anchors of its `s`
/// largest weights, best first (ties: lower anchor index), and `z[k + u·s]`
/// their normalised weights (each column sums to 1).
///
/// `train`: the training items' views (same features), where the CCA
/// directions are computed, or `None` (these items). `scales`: `2J²` numbers,
/// in and out (module docs). `priors`: `J × J` or `None`.
///
/// Errors, before anything is written: views or anchors not dense
/// ([`Error::BadParameter`]); empty shapes ([`Error::ZeroDimension`]); view
/// counts, feature counts or output lengths that disagree
/// ([`Error::DimensionMismatch`]); `s = 0` or `s > m`
/// ([`Error::BadParameter`]); non-finite or negative scales, bad priors or options
/// ([`Error::BadParameter`]); values ([`Error::NonFiniteInput`],
/// [`Error::InputTooLarge`]); fewer than 2 training items with cross-view
/// parts ([`Error::ZeroDimension`]); a CCA that fails; the workspace.
#[allow(clippy::too_many_arguments)]
pub fn anchor_graph<T: Real, VS: ViewSet<T> + ?Sized, AS: ViewSet<T> + ?Sized>(
    views: &VS,
    train: Option<&VS>,
    anchors: &AS,
    s: usize,
    priors: Option<&[f64]>,
    params: &FusedParams,
    scales: &mut [f64],
    idx: &mut [usize],
    z: &mut [T],
    work: &mut [u8],
) -> Result<(), Error> {
    params.validate()?;
    let nv = views.count();
    let (n, _) = dense_dims((0..nv).map(|i| views.shape(i)))?;
    let rows = |i: usize| views.shape(i).rows;
    let (m, na) = dense_dims((0..anchors.count()).map(|i| anchors.shape(i)))?;
    if na != nv {
        return Err(Error::DimensionMismatch);
    }
    same_features(&rows, nv, (0..nv).map(|i| anchors.shape(i)))?;
    let n_train = match train {
        Some(t) => {
            let (nt, _) = dense_dims((0..t.count()).map(|i| t.shape(i)))?;
            same_features(&rows, nv, (0..t.count()).map(|i| t.shape(i)))?;
            nt
        }
        None => n,
    };
    if s == 0 || s > m {
        return Err(Error::BadParameter);
    }
    let ns = n.checked_mul(s).ok_or(Error::SizeOverflow)?;
    if idx.len() != ns || z.len() != ns || scales.len() != anchor_scales_len(nv) {
        return Err(Error::DimensionMismatch);
    }
    if scales.iter().any(|&x| !x.is_finite() || x < 0.0) {
        return Err(Error::BadParameter);
    }
    if let Some(p) = priors {
        check_priors(p, nv, params.cross_view)?;
    }
    let prior = |a: usize, b: usize| prior_of(priors, nv, params.cross_view, a, b);
    let used = |a: usize, b: usize| params.cross_view && prior(a, b) > 0.0;
    let req = graph_req::<T>(&rows, nv, n, n_train, m, params, &used)?;
    check_set_values(views)?;
    check_set_values(anchors)?;
    if let Some(t) = train {
        check_set_values(t)?;
    }
    if n_train < 2 && (0..nv).any(|a| (a + 1..nv).any(|b| used(a, b))) {
        return Err(Error::ZeroDimension);
    }
    req.check(work.len())?;

    let jj = nv * nv;
    let b = block_of(n, m);
    let mut st = Stack::new(work);
    let store_len: usize = {
        let mut t = 0;
        for a in 0..nv {
            for c in a + 1..nv {
                if used(a, c) {
                    t += slot_len(rows(a), rows(c), params.dims(rows(a), rows(c)), m)
                        .ok_or(Error::SizeOverflow)?;
                }
            }
        }
        t
    };
    let store: &mut [T] = st.take(store_len)?;
    let sc: &mut [f64] = st.take(2 * jj)?;
    let vol: &mut [f64] = st.take(jj)?;
    let dist: &mut [T] = st.take_matrix(m, b)?;
    let wsum: &mut [f64] = st.take_matrix(m, b)?;
    let esum: &mut [f64] = st.take_matrix(m, b)?;
    let rest = st.take_rest();

    // CCA of every used pair on the training items, and the anchors projected.
    let tr: &VS = train.unwrap_or(views);
    for lo in 0..nv {
        for hi in lo + 1..nv {
            if !used(lo, hi) {
                continue;
            }
            let slot = pair_slot(&rows, nv, &used, params, m, lo, hi).ok_or(Error::Internal)?;
            let (dl, dh, p) = (rows(lo), rows(hi), slot.p);
            let len = slot_len(dl, dh, p, m).unwrap_or(0);
            let sl = store
                .get_mut(slot.off..slot.off + len)
                .ok_or(Error::Internal)?;
            let (phi_l, r1) = sl.split_at_mut_checked(dl * p).ok_or(Error::Internal)?;
            let (phi_h, r2) = r1.split_at_mut_checked(dh * p).ok_or(Error::Internal)?;
            let (mu_l, r3) = r2.split_at_mut_checked(dl).ok_or(Error::Internal)?;
            let (mu_h, r4) = r3.split_at_mut_checked(dh).ok_or(Error::Internal)?;
            let (pa_l, pa_h) = r4.split_at_mut_checked(p * m).ok_or(Error::Internal)?;
            let (x, y) = match (tr.view(lo), tr.view(hi)) {
                (View::Dense(x), View::Dense(y)) => (x, y),
                _ => return Err(Error::BadParameter),
            };
            let reg = params.cca_reg * mean_variance(&x, &y);
            let mut ph = Stack::new(&mut rest[..]);
            let rho: &mut [T] = ph.take(p)?;
            let inner = ph.take_rest();
            cca(&x, &y, reg, p, phi_l, phi_h, rho, mu_l, mu_h, inner)?;
            let mut ph = Stack::new(&mut rest[..]);
            project(dense(anchors, lo)?, phi_l, mu_l, p, pa_l, &mut ph)?;
            project(dense(anchors, hi)?, phi_h, mu_h, p, pa_h, &mut ph)?;
        }
    }

    // The distances of part (i, j) between anchors and the items `u0..u0+nb`
    // (with column step `step`), into `dist[a + u m]`.
    let part_dists = |i: usize,
                      j: usize,
                      u0: usize,
                      nb: usize,
                      step: usize,
                      dist: &mut [T],
                      store: &[T],
                      rest: &mut [u8]|
     -> Result<(), Error> {
        let x = dense(views, i)?;
        let items = MatRef::new(
            x.data().get(u0 * x.cs()..).ok_or(Error::Internal)?,
            x.rows(),
            nb,
            x.rs(),
            x.cs() * step,
        )?;
        let mut ph = Stack::new(rest);
        let dist = dist.part_mut(..m * nb)?;
        if i == j {
            return sq_dists(dense(anchors, i)?, items, false, dist, &mut ph);
        }
        let (lo, hi) = (i.min(j), i.max(j));
        let slot = pair_slot(&rows, nv, &used, params, m, lo, hi).ok_or(Error::Internal)?;
        let (dl, dh, p) = (rows(lo), rows(hi), slot.p);
        let sl = store.part(slot.off..)?;
        let (phi_l, r1) = sl.split_at_checked(dl * p).ok_or(Error::Internal)?;
        let (phi_h, r2) = r1.split_at_checked(dh * p).ok_or(Error::Internal)?;
        let (mu_l, r3) = r2.split_at_checked(dl).ok_or(Error::Internal)?;
        let (mu_h, r4) = r3.split_at_checked(dh).ok_or(Error::Internal)?;
        let (pa_l, r5) = r4.split_at_checked(p * m).ok_or(Error::Internal)?;
        let (pa_h, _) = r5.split_at_checked(p * m).ok_or(Error::Internal)?;
        // The item's view i by Φ_i, the anchor's view j by Φ_j.
        let (phi_i, mu_i, pa_j) = if i == lo {
            (phi_l, mu_l, pa_h)
        } else {
            (phi_h, mu_h, pa_l)
        };
        let zb: &mut [T] = ph.take_matrix(p, nb)?;
        project(items, phi_i, mu_i, p, zb, &mut ph)?;
        sq_dists(
            MatRef::col_major(pa_j, p, m)?,
            MatRef::col_major(&*zb, p, nb)?,
            false,
            dist,
            &mut ph,
        )
    };
    let parts = |f: &mut dyn FnMut(usize, usize) -> Result<(), Error>| -> Result<(), Error> {
        for i in 0..nv {
            for j in 0..nv {
                if (i == j && prior(i, i) > 0.0) || (i != j && used(i.min(j), i.max(j))) {
                    f(i, j)?;
                }
            }
        }
        Ok(())
    };
    sc.copy_checked(scales)?;
    // Bandwidths, on the sample.
    let nsm = b.min(n);
    let step = n / nsm;
    // `sc[k]`, `sc[J² + k]` and `vol[k]` of part `k = i + j J` (every part is inside).
    let scale = |sc: &[f64], k: usize| sc.get(k).copied().unwrap_or(0.0);
    parts(&mut |i, j| {
        let k = i + j * nv;
        if scale(sc, k) == 0.0 {
            part_dists(i, j, 0, nsm, step, dist, store, rest)?;
            let g = if i != j && params.sigma > 0.0 {
                params.sigma
            } else {
                bandwidth(dist.part_mut(..m * nsm)?, nsm, false)
            };
            *sc.at_mut(k)? = g;
        }
        Ok(())
    })?;
    // Volumes over all items where not given.
    vol.fill(0.0);
    let mut u0 = 0;
    while u0 < n {
        let nb = b.min(n - u0);
        parts(&mut |i, j| {
            let k = i + j * nv;
            if scale(sc, jj + k) == 0.0 {
                part_dists(i, j, u0, nb, 1, dist, store, rest)?;
                let g = scale(sc, k);
                let part: f64 = dist
                    .get(..m * nb)
                    .unwrap_or_default()
                    .iter()
                    .map(|d| libm::exp(-g * d.to_f64()))
                    .sum();
                *vol.at_mut(k)? += part;
            }
            Ok(())
        })?;
        u0 += nb;
    }
    parts(&mut |i, j| {
        let k = i + j * nv;
        if let (Some(v), Some(&vk)) = (sc.get_mut(jj + k), vol.get(k)) {
            if *v == 0.0 {
                *v = vk / n as f64;
            }
        }
        Ok(())
    })?;
    // Weights per block, then each item's s anchors.
    let mut u0 = 0;
    while u0 < n {
        let nb = b.min(n - u0);
        let wsum = wsum.part_mut(..m * nb)?;
        let esum = esum.part_mut(..m * nb)?;
        wsum.fill(0.0);
        esum.fill(0.0);
        parts(&mut |i, j| {
            let k = i + j * nv;
            let (g, v, p) = (scale(sc, k), scale(sc, jj + k), prior(i, j));
            part_dists(i, j, u0, nb, 1, dist, store, rest)?;
            for ((w, e), d) in wsum.iter_mut().zip(esum.iter_mut()).zip(&*dist) {
                let gd = g * d.to_f64();
                if v > 0.0 {
                    *w += p / v * libm::exp(-gd);
                }
                *e += p * gd;
            }
            Ok(())
        })?;
        // Item `u0 + u`'s sums (`m` each) and its `s` outputs (by index, not
        // zipped chunks: a zip of chunk iterators divides by their sizes).
        for (u, w) in wsum.chunks_exact(m.max(1)).enumerate() {
            let e = esum.get(u * m..(u + 1) * m).unwrap_or_default();
            let at = (u0 + u) * s..(u0 + u + 1) * s;
            let (Some(out_i), Some(out_z)) = (idx.get_mut(at.clone()), z.get_mut(at)) else {
                break;
            };
            let w_at = |a: usize| w.get(a).copied().unwrap_or(0.0);
            let e_at = |a: usize| e.get(a).copied().unwrap_or(0.0);
            top_n_by(m, w_at, None, out_i);
            let total: f64 = out_i.iter().map(|&a| w_at(a)).sum();
            if total > 0.0 && total.is_finite() {
                for (o, &a) in out_z.iter_mut().zip(out_i.iter()) {
                    *o = T::from_f64(w_at(a) / total);
                }
            } else {
                top_n_by(m, |a| -e_at(a), None, out_i);
                let emin = out_i.first().map_or(0.0, |&a| e_at(a));
                let total: f64 = out_i.iter().map(|&a| libm::exp(emin - e_at(a))).sum();
                for (o, &a) in out_z.iter_mut().zip(out_i.iter()) {
                    *o = T::from_f64(libm::exp(emin - e_at(a)) / total);
                }
            }
        }
        u0 += nb;
    }
    scales.copy_checked(sc)?;
    Ok(())
}

// ---------------------------------------------------------------- the operator

/// Workspace bytes of [`anchor_gram`] for `m` anchors.
pub fn anchor_gram_workspace<T>(m: usize) -> Result<usize, Error> {
    if m == 0 {
        return Err(Error::ZeroDimension);
    }
    gram_req::<T>(m).bytes()
}

pub(crate) fn gram_req<T>(m: usize) -> WorkReq {
    WorkReq::all_of(&[
        WorkReq::matrix::<T>(m, m),
        WorkReq::new::<f64>(m),
        gemm_req::<T>(m, m, m),
    ])
}

/// Checks an anchor graph: `idx` and `z` of length `s·n`, indices `< m`,
/// weights finite and `≥ 0`; returns `n`.
pub(crate) fn check_anchor_graph<T: Real>(
    idx: &[usize],
    z: &[T],
    s: usize,
    m: usize,
) -> Result<usize, Error> {
    if s == 0 || m == 0 || idx.is_empty() {
        return Err(Error::ZeroDimension);
    }
    if s > m {
        return Err(Error::BadParameter);
    }
    if idx.len() != z.len() || !idx.len().is_multiple_of(s) {
        return Err(Error::DimensionMismatch);
    }
    if idx.iter().any(|&a| a >= m) {
        return Err(Error::BadParameter);
    }
    crate::data::check_values(z, true)?;
    Ok(idx.len() / s)
}

/// `G = Z Zᵀ` and `K = G Λ⁻¹ G` (`m × m`, column-major; `Λ = diag(Z 1)`, an
/// anchor no item uses contributes nothing) of the anchor graph `(idx, z)`
/// with `s` anchors per item: the two products of [`AnchorGraph`]. Errors
/// (nothing written): `s = 0` or `m = 0` ([`Error::ZeroDimension`]), indices `≥ m` or `s > m`
/// ([`Error::BadParameter`]), negative or non-finite weights
/// ([`Error::NegativeInput`], [`Error::NonFiniteInput`]) —, output lengths,
/// the workspace. Cost `O(n·s² + m³)`.
pub fn anchor_gram<T: Real>(
    idx: &[usize],
    z: &[T],
    s: usize,
    m: usize,
    g: &mut [T],
    k: &mut [T],
    work: &mut [u8],
) -> Result<(), Error> {
    let n = check_anchor_graph(idx, z, s, m)?;
    let mm = m.checked_mul(m).ok_or(Error::SizeOverflow)?;
    if g.len() != mm || k.len() != mm {
        return Err(Error::DimensionMismatch);
    }
    gram_req::<T>(m).check(work.len())?;
    let mut st = Stack::new(work);
    let gl: &mut [T] = st.take_matrix(m, m)?;
    let lam: &mut [f64] = st.take(m)?;
    g.fill(T::ZERO);
    lam.fill(0.0);
    // Item u's `s` anchors and weights; anchors below `m` (checked): the
    // `get`s never miss (no panic path).
    for u in 0..n {
        let r = u * s..(u + 1) * s;
        let (Some(iu), Some(zu)) = (idx.get(r.clone()), z.get(r)) else {
            break;
        };
        for (&a, &za) in iu.iter().zip(zu) {
            if let Some(l) = lam.get_mut(a) {
                *l += za.to_f64();
            }
            for (&c, &zc) in iu.iter().zip(zu) {
                if let Some(x) = g.get_mut(a + c * m) {
                    *x += za * zc;
                }
            }
        }
    }
    // G Λ⁻¹ (columns scaled), then K = (G Λ⁻¹) G.
    for (c, &lc) in lam.iter().enumerate() {
        let f = if lc > 0.0 { 1.0 / lc } else { 0.0 };
        let f = T::from_f64(f);
        let r = c * m..(c + 1) * m;
        let (Some(glc), Some(gc)) = (gl.get_mut(r.clone()), g.get(r)) else {
            break;
        };
        for (x, &y) in glc.iter_mut().zip(gc) {
            *x = y * f;
        }
    }
    gemm_into(
        MatRef::col_major(&*gl, m, m)?,
        MatRef::col_major(&*g, m, m)?,
        k,
        &mut st,
    )
}

/// The anchor graph's Laplacian term over the `m` anchors' embeddings `A`
/// (`K × m`): `tr(A (G − K) Aᵀ)` with `G` and `K` from [`anchor_gram`]
/// (module docs). As a [`GraphOp`], `plus = A G`, `minus = A K` (both `≥ 0`
/// for `A ≥ 0`) and no penalty part.
#[derive(Clone, Copy, Debug)]
pub struct AnchorGraph<'a, T> {
    g: &'a [T],
    k: &'a [T],
    m: usize,
}

impl<'a, T: Real> AnchorGraph<'a, T> {
    /// Wraps `G` and `K` (`m × m` each).
    pub fn new(g: &'a [T], k: &'a [T], m: usize) -> Result<Self, Error> {
        if m == 0 {
            return Err(Error::ZeroDimension);
        }
        let mm = m.checked_mul(m).ok_or(Error::SizeOverflow)?;
        if g.len() != mm || k.len() != mm {
            return Err(Error::DimensionMismatch);
        }
        Ok(AnchorGraph { g, k, m })
    }
}

impl<T: Real> GraphOp<T> for AnchorGraph<'_, T> {
    fn items(&self) -> usize {
        self.m
    }
    fn has_penalty(&self) -> bool {
        false
    }
    fn apply_req(&self, k: usize) -> WorkReq {
        gemm_req::<T>(k, self.m, self.m)
    }
    fn apply(
        &self,
        v: &[T],
        k: usize,
        plus: &mut [T],
        minus: &mut [T],
        st: &mut Stack<'_>,
    ) -> Result<(f64, f64), Error> {
        let m = self.m;
        let vm = MatRef::col_major(v, k, m)?;
        gemm_into(vm, MatRef::col_major(self.g, m, m)?, plus, st)?;
        gemm_into(vm, MatRef::col_major(self.k, m, m)?, minus, st)?;
        let ta = v
            .iter()
            .zip(plus.iter().zip(minus.iter()))
            .map(|(&x, (&p, &q))| x.to_f64() * (p - q).to_f64())
            .sum();
        Ok((ta, 0.0))
    }
}

// ---------------------------------------------------------------- kNN-sparsified

/// Most stored entries of [`fused_knn_graph`] for `n` items and `s`
/// neighbours: `2·n·s` (each item's list, both directions), at most
/// `n(n − 1)`.
pub fn fused_knn_graph_capacity(n: usize, s: usize) -> Result<usize, Error> {
    let all = n
        .checked_mul(n.saturating_sub(1))
        .ok_or(Error::SizeOverflow)?;
    Ok(n.checked_mul(s)
        .and_then(|x| x.checked_mul(2))
        .ok_or(Error::SizeOverflow)?
        .min(all))
}

fn knn_req<T>(
    rows: &dyn Fn(usize) -> usize,
    nv: usize,
    n: usize,
    s: usize,
    params: &FusedParams,
    used: &dyn Fn(usize, usize) -> bool,
) -> Result<WorkReq, Error> {
    if s == 0 || s >= n {
        return Err(Error::BadParameter);
    }
    let ns = n.checked_mul(s + 1).ok_or(Error::SizeOverflow)?;
    Ok(WorkReq::all_of(&[
        WorkReq::new::<usize>(ns),
        WorkReq::new::<T>(ns),
        WorkReq::new::<f64>(2 * nv * nv),
        WorkReq::new::<u8>(crate::work::ALIGN),
        graph_req::<T>(rows, nv, n, n, n, params, used)?
            .or(crate::graph::build::Assembler::workspace(n, n * s)),
    ]))
}

/// Workspace bytes of [`fused_knn_graph`].
pub fn fused_knn_graph_workspace<T>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    s: usize,
    priors: Option<&[f64]>,
    params: &FusedParams,
) -> Result<usize, Error> {
    params.validate()?;
    let (n, nv) = dense_dims(shapes.clone())?;
    if let Some(p) = priors {
        check_priors(p, nv, params.cross_view)?;
    }
    let rows = |i: usize| shapes.clone().into_iter().nth(i).map_or(0, |s| s.rows);
    let used = |a: usize, b: usize| {
        params.cross_view && prior_of(priors, nv, params.cross_view, a, b) > 0.0
    };
    knn_req::<T>(&rows, nv, n, s, params, &used)?.bytes()
}

/// MVEL's kNN-sparsified fused graph, exact (see [`fused_knn_graph_build`] for the
/// approximate, sub-quadratic path and the `exact | approx | auto` choice)
/// (seed 002, DESIGN §8: "dense for small
/// n, kNN-sparsified or anchor-based for large n"): the fused weights of
/// [`crate::graph::fused_graph`] (within-view RBF and CCA cross-view parts,
/// median bandwidths, volumes) computed in blocks of items as
/// [`anchor_graph`] with every item its own anchor, each item's `s` other
/// items of largest weight kept and normalised to a distribution `P(u, ·)`,
/// then symmetrised: `W = (P + Pᵀ)/2` — rows of a random walk, so the total
/// weight is `n`, as the dense graph's. A choice: the existing similarity kNN
/// (`similarity::fused_knn`) fuses kernels by MKL weights and has no CCA
/// parts, so this graph reuses the anchor machinery to keep MVEL's weights.
///
/// Writes `out` (row pointers, sorted column indices, weights; no self-loops)
/// and returns the stored entries (at most [`fused_knn_graph_capacity`]);
/// use it through [`crate::graph::CsrGraph`]. Errors as [`anchor_graph`],
/// and `s = 0` or `s ≥ n` ([`Error::BadParameter`]), `out` too short
/// ([`Error::BufferTooShort`], nothing written). Cost as the anchor graph
/// with `m = n`: `O(n²·d)` time, `O(n·s + block·n)` memory.
pub fn fused_knn_graph<T: Real, VS: ViewSet<T> + ?Sized>(
    views: &VS,
    s: usize,
    priors: Option<&[f64]>,
    params: &FusedParams,
    out: &mut crate::graph::CsrOut<'_>,
    work: &mut [u8],
) -> Result<usize, Error> {
    params.validate()?;
    let nv = views.count();
    let (n, _) = dense_dims((0..nv).map(|i| views.shape(i)))?;
    if let Some(p) = priors {
        check_priors(p, nv, params.cross_view)?;
    }
    let rows = |i: usize| views.shape(i).rows;
    let used = |a: usize, b: usize| {
        params.cross_view && prior_of(priors, nv, params.cross_view, a, b) > 0.0
    };
    let req = knn_req::<T>(&rows, nv, n, s, params, &used)?;
    if out.row_ptr.len() != n + 1 {
        return Err(Error::DimensionMismatch);
    }
    req.check(work.len())?;
    let s1 = s + 1;
    let mut st = Stack::new(work);
    let idx: &mut [usize] = st.take(n * s1)?;
    let z: &mut [T] = st.take(n * s1)?;
    let sc: &mut [f64] = st.take(2 * nv * nv)?;
    sc.fill(0.0);
    let rest = st.take_rest();
    anchor_graph(views, None, views, s1, priors, params, sc, idx, z, rest)?;
    // Each item's list without itself (or without its last entry), renormalised.
    for (u, iu) in idx.chunks_exact_mut(s1.max(1)).enumerate().take(n) {
        let Some(zu) = z.get_mut(u * s1..(u + 1) * s1) else {
            break;
        };
        let at = iu.iter().position(|&v| v == u).unwrap_or(s);
        // Moved to the end, the others shifted down by one.
        for k in at..s {
            swap_at(iu, k, k + 1);
            swap_at(zu, k, k + 1);
        }
        let t: f64 = zu.iter().take(s).map(|x| x.to_f64()).sum();
        for x in zu.iter_mut().take(s) {
            *x = T::from_f64(if t > 0.0 {
                x.to_f64() / t
            } else {
                1.0 / s as f64
            });
        }
    }
    assemble(idx, z, n, s, s1, out, rest)
}

/// The graph `W = (P + Pᵀ)/2` of the lists `idx` / `z` (item `u`'s `s` entries at
/// `u·stride`), into `out`; returns the stored entries.
fn assemble<T: Real>(
    idx: &[usize],
    z: &[T],
    n: usize,
    s: usize,
    s1: usize,
    out: &mut crate::graph::CsrOut<'_>,
    rest: &mut [u8],
) -> Result<usize, Error> {
    let mut st = Stack::new(rest);
    let mut asm = crate::graph::build::Assembler::new(n, n * s, &mut st)?;
    for pass in 0..2 {
        if pass == 1 {
            asm.start_fill();
        }
        for (u, iu) in idx.chunks_exact(s1.max(1)).enumerate().take(n) {
            for &v in iu.iter().take(s) {
                asm.add(u, v);
            }
        }
    }
    let nnz = asm.finish();
    asm.check(out)?;
    let p = |i: usize, j: usize| -> f64 {
        idx.get(i * s1..i * s1 + s)
            .unwrap_or_default()
            .iter()
            .position(|&v| v == j)
            .map_or(0.0, |k| z.get(i * s1 + k).map_or(0.0, |x| x.to_f64()))
    };
    asm.write(out, |i, j| 0.5 * (p(i, j) + p(j, i)));
    Ok(nnz)
}

// ---------------------------------------------------------------- exact | approximate

/// Ordered pairs of items sampled (with replacement, from the seed of the NN-descent
/// options) by the approximate path of [`fused_knn_graph_build`] for its bandwidths and
/// volumes, instead of every pair.
pub const FUSED_KNN_SAMPLE_PAIRS: usize = 1 << 16;

/// Work of one part's exponential and bookkeeping in a pair's fused weight, in the units of
/// [`crate::par::tasks_for`] (for the re-ranking's split; a shape-only estimate).
const RERANK_PART_WORK: usize = 32;

/// Seed stream of the sampled pairs (xor the NN-descent seed).
const FUSED_SAMPLE_STREAM: u64 = 0x6675_7365_645f_6b6e;

/// The views NN-descent searches in the approximate path: the `J` views, then for each used
/// view pair `lo < hi` the mean `M = (Y + Z)/2` of the CCA projections `Y = Φ_loᵀ(X_lo −
/// μ_lo)` and `Z = Φ_hiᵀ(X_hi − μ_hi)` (`p × n` each; `Y`, `Z`, `M` stored one after the
/// other per pair).
struct Surrogate<'a, T, VS: ?Sized> {
    views: &'a VS,
    nv: usize,
    proj: &'a [T],
    dims: &'a [usize],
    n: usize,
}

impl<T: Real, VS: ViewSet<T> + ?Sized> ViewSet<T> for Surrogate<'_, T, VS> {
    fn count(&self) -> usize {
        self.nv + self.dims.len()
    }
    fn view(&self, v: usize) -> View<'_, T> {
        if v < self.nv {
            return self.views.view(v);
        }
        let t = v - self.nv;
        let mut off = 0;
        for &p in self.dims.iter().take(t) {
            off += 3 * p * self.n;
        }
        let p = self.dims.get(t).copied().unwrap_or(0);
        off += 2 * p * self.n;
        // Past the pairs or the store (never): an empty view.
        match self.proj.get(off..off + p * self.n) {
            Some(buf) if p > 0 => View::Dense(Dense::from_validated(buf, p, self.n, p)),
            _ => View::Dense(Dense::from_validated(&[], 0, 0, 0)),
        }
    }
}

/// RBF kernels with these bandwidths.
struct Gammas<'a>(&'a [f64]);

impl KernelSet for Gammas<'_> {
    fn count(&self) -> usize {
        self.0.len()
    }
    fn kernel(&self, v: usize) -> Kernel {
        Kernel::Rbf(Bandwidth::Gamma(self.0.get(v).copied().unwrap_or(1.0)))
    }
}

/// The used view pairs' CCA dimensions and the surrogate views' shapes.
struct ApproxShape {
    pairs: usize,
    store: usize,
    proj: usize,
    pmax: usize,
    dmax: usize,
}

fn approx_shape(
    rows: &dyn Fn(usize) -> usize,
    nv: usize,
    n: usize,
    params: &FusedParams,
    used: &dyn Fn(usize, usize) -> bool,
) -> Result<ApproxShape, Error> {
    let (mut pairs, mut store, mut proj, mut pmax) = (0usize, 0usize, 0usize, 0usize);
    for a in 0..nv {
        for c in a + 1..nv {
            if !used(a, c) {
                continue;
            }
            let (da, dc) = (rows(a), rows(c));
            let p = params.dims(da, dc);
            pairs += 1;
            pmax = pmax.max(p);
            store = store
                .checked_add(slot_len(da, dc, p, 0).ok_or(Error::SizeOverflow)?)
                .ok_or(Error::SizeOverflow)?;
            let pn = p
                .checked_mul(n)
                .and_then(|x| x.checked_mul(3))
                .ok_or(Error::SizeOverflow)?;
            proj = proj.checked_add(pn).ok_or(Error::SizeOverflow)?;
        }
    }
    let dmax = (0..nv).map(rows).max().unwrap_or(0);
    Ok(ApproxShape {
        pairs,
        store,
        proj,
        pmax,
        dmax,
    })
}

/// The surrogate views' shapes (for NN-descent's workspace).
fn surrogate_shapes<'r>(
    rows: &'r dyn Fn(usize) -> usize,
    nv: usize,
    n: usize,
    params: &'r FusedParams,
    used: &'r dyn Fn(usize, usize) -> bool,
) -> impl Iterator<Item = ViewShape> + Clone + 'r {
    let dense = move |r: usize| ViewShape {
        rows: r,
        cols: n,
        kind: ViewKind::Dense,
        nnz: 0,
    };
    let pairs = (0..nv)
        .flat_map(move |a| (a + 1..nv).map(move |c| (a, c)))
        .filter(move |&(a, c)| used(a, c))
        .map(move |(a, c)| {
            let p = params.dims(rows(a), rows(c));
            dense(p)
        });
    (0..nv).map(move |v| dense(rows(v))).chain(pairs)
}

/// The NN-descent list length of the approximate path: `max(ann.k, 4s)`, at most `n − 1`
/// (measured on yeast, `s = 10`: edge recall 0.818 with lists of `2s`, 0.958 with `4s`,
/// 0.988 with `6s`).
fn approx_k(ann: &AnnParams, s: usize, n: usize) -> usize {
    ann.k.max(s.saturating_mul(4)).min(n.saturating_sub(1))
}

#[allow(clippy::too_many_arguments)]
fn approx_req<T>(
    rows: &dyn Fn(usize) -> usize,
    nv: usize,
    n: usize,
    s: usize,
    params: &FusedParams,
    used: &dyn Fn(usize, usize) -> bool,
    ann: &AnnParams,
) -> Result<WorkReq, Error> {
    if s == 0 || s >= n {
        return Err(Error::BadParameter);
    }
    let sh = approx_shape(rows, nv, n, params, used)?;
    let h = nv + sh.pairs;
    let kk = approx_k(ann, s, n);
    let mut annp = *ann;
    annp.k = kk;
    let ones = OnesRbf(h);
    let ann_bytes =
        approx_knn_workspace::<T>(surrogate_shapes(rows, nv, n, params, used), &ones, 0, &annp)?;
    let nk = n.checked_mul(kk).ok_or(Error::SizeOverflow)?;
    let ns = n.checked_mul(s).ok_or(Error::SizeOverflow)?;
    let q = FUSED_KNN_SAMPLE_PAIRS;
    let mut cca_phase = WorkReq::EMPTY;
    for a in 0..nv {
        for c in a + 1..nv {
            if !used(a, c) {
                continue;
            }
            let (da, dc) = (rows(a), rows(c));
            let p = params.dims(da, dc);
            cca_phase = cca_phase.or(WorkReq::all_of(&[
                WorkReq::new::<T>(p),
                WorkReq::new::<u8>(crate::work::ALIGN),
                cca_req::<T>(da, dc, n, p),
            ]));
        }
    }
    let phase = cca_phase
        .or(gemm_req::<T>(sh.pmax, n, sh.dmax))
        .or(WorkReq::all_of(&[
            WorkReq::new::<usize>(q),
            WorkReq::new::<usize>(q),
            WorkReq::new::<f64>(q),
        ]))
        .or(WorkReq::new::<u8>(ann_bytes))
        .or(crate::graph::build::Assembler::workspace(n, ns));
    Ok(WorkReq::all_of(&[
        WorkReq::new::<T>(sh.store),
        WorkReq::new::<T>(sh.proj),
        WorkReq::new::<usize>(sh.pairs),
        WorkReq::new::<f64>(2 * nv * nv),
        WorkReq::new::<f64>(h),
        WorkReq::new::<f64>(h),
        WorkReq::new::<usize>(nk),
        WorkReq::new::<f64>(nk),
        WorkReq::new::<usize>(ns),
        WorkReq::new::<T>(ns),
        WorkReq::new::<u8>(crate::work::ALIGN),
        phase,
    ]))
}

/// `h` RBF kernels (for workspace queries: only the kinds matter).
struct OnesRbf(usize);

impl KernelSet for OnesRbf {
    fn count(&self) -> usize {
        self.0
    }
    fn kernel(&self, _: usize) -> Kernel {
        Kernel::Rbf(Bandwidth::Gamma(1.0))
    }
}

/// Workspace bytes of [`fused_knn_graph_build`] (for [`GraphBuild::Exact`], or
/// [`GraphBuild::Auto`] below [`crate::graph::AUTO_EXACT_BELOW`] items, that of
/// [`fused_knn_graph`]).
pub fn fused_knn_graph_build_workspace<T>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    s: usize,
    priors: Option<&[f64]>,
    params: &FusedParams,
    build: &GraphBuild,
) -> Result<usize, Error> {
    params.validate()?;
    let (n, nv) = dense_dims(shapes.clone())?;
    let Some(ann) = build.resolve(n, 0, Parallel::Serial) else {
        return fused_knn_graph_workspace::<T>(shapes, s, priors, params);
    };
    if let Some(p) = priors {
        check_priors(p, nv, params.cross_view)?;
    }
    let rows = |i: usize| shapes.clone().into_iter().nth(i).map_or(0, |s| s.rows);
    let used = |a: usize, b: usize| {
        params.cross_view && prior_of(priors, nv, params.cross_view, a, b) > 0.0
    };
    approx_req::<T>(&rows, nv, n, s, params, &used, &ann)?.bytes()
}

/// [`fused_knn_graph`] with its neighbours found as `build` says: [`GraphBuild::Exact`] (or
/// [`GraphBuild::Auto`] below [`crate::graph::AUTO_EXACT_BELOW`] items) is bitwise
/// [`fused_knn_graph`]; [`GraphBuild::Approx`] / [`GraphBuild::ApproxAll`] (or `Auto` from
/// there on, with the default NN-descent options) is the sub-quadratic path:
///
/// 1. **CCA** of every used view pair on all items (as the exact path), and every item
///    projected once: `Y = Φ_loᵀ(X_lo − μ_lo)`, `Z = Φ_hiᵀ(X_hi − μ_hi)` (`p × n` each).
/// 2. **Bandwidths and volumes on a sample** of [`FUSED_KNN_SAMPLE_PAIRS`] ordered pairs
///    `(u, a)` drawn uniformly with replacement from all `n²` (seeded by `ann.seed`): per
///    part, `γ = 1 / (lower median of the sampled d²)` (with the exact path's fallbacks), and
///    the volume `v = (1/n) Σ_{u,a} w(u, a)` estimated by `n ·` the mean sampled weight. The
///    exact path takes `1/median` over `max(16, 2¹⁸/n)` items against all `n` and the
///    volume over all `n²` pairs. **Bounds** (`Q = 2¹⁶` pairs, Dvoretzky–Kiefer–Wolfowitz
///    and Hoeffding; probability `1 − 10⁻⁶` each): the sampled median's rank among all
///    `n²` values lies within `±1.05 %` of the middle, and the mean weight (in `[0, 1]`)
///    within `±0.0105` of the true mean, i.e. `v` within `±0.0105·n`. **Measured effect**
///    (yeast, 600 items, `s = 10`, NN-descent lists of all `n − 1` items, so that only the
///    scales differ from the exact path): 99.88 % of the exact graph's edges kept.
/// 3. **Neighbours by NN-descent** ([`crate::similarity::approx_knn`] with `ann`, lists of
///    `max(ann.k, 4s)` items). The fused weight is a sum of RBF kernels, but its cross-view
///    parts compare one item's `Y` with the other's `Z`: with `M = (Y + Z)/2`,
///    `D = (Y − Z)/2`, `exp(−γ‖Y_u − Z_a‖²) + exp(−γ‖Z_u − Y_a‖²) = 2·exp(−γ‖M_u −
///    M_a‖²)·exp(−γ‖D_u + D_a‖²)·cosh(2γ(M_u − M_a)ᵀ(D_u + D_a))`, which no per-view
///    kernel expresses. NN-descent searches the surrogate `Σ_i p_ii/v_ii ·
///    exp(−γ_ii‖x_u⁽ⁱ⁾ − x_a⁽ⁱ⁾‖²) + Σ_{lo<hi} (p_lh/v_lh + p_hl/v_hl)·ρ·exp(−γ‖M_u −
///    M_a‖²)` (`γ` the mean of the pair's two bandwidths, `ρ = mean_u exp(−γ‖Y_u −
///    Z_u‖²)` the typical size of the `D` factor between near items), whose every part is a
///    view's RBF kernel; exact when CCA makes `Y = Z`. Measured on yeast (`s = 10`): a
///    surrogate with `Y` and `Z` as separate views and no `ρ` recalled 0.67 of the edges
///    with lists of `2s`, this one 0.82 (0.96 with `4s`).
/// 4. **Re-ranked by the fused weight**: each item's list is scored by the exact fused
///    weight (the same formula and scales as step 2, `O(Σd + 2Σp)` per pair) and its `s`
///    best kept (ties: lower index; all underflowing: the exact path's geometric rule),
///    normalised and symmetrised as [`fused_knn_graph`] does.
///
/// **Measured** (`cargo run --release --example fused_knn_scale -- mfeat | synth N`,
/// `s = 10`, default NN-descent options, one thread; one run each, wall seconds on the
/// shared 2-core machine at a load of 15–25, so only the ratios mean something; edge
/// recall: the share of the exact graph's edges the approximate graph has):
///
/// | data | n | exact s | approx s | ratio | edge recall |
/// |---|---|---|---|---|---|
/// | mfeat (six views, 15 CCA pairs) | 2 000 | 46.02 | 34.84 | 1.3 | 0.9925 |
/// | synthetic (100 + 50 features, 20 clusters) | 2 000 | 5.35 | 5.48 | 1.0 | 0.9896 |
/// | synthetic | 20 000 | 929.70 | 54.48 | 17.1 | 0.9537 |
///
/// On yeast (600 items, `tests/fused_knn_approx.rs`) edge recall 0.958 and MVEL's AUC of
/// the hidden positives 0.8279 against 0.8281 with the exact graph.
///
/// **On the caller's pool** (`ann.parallel`), with the same bits for every pool and thread
/// count: NN-descent (its own guarantee), the projections' products (split by the shape,
/// [`crate::par`]) and the re-ranking of step 4 (blocks of items fixed by `n` and the
/// views' shapes alone, each item's arithmetic its own, nothing summed across items).
/// Serial: the CCA's covariances (`O(n·(d_lo + d_hi)²)` per pair), the sample of step 2
/// (`O(Q·(Σd + Σp))`, independent of `n`) and `ρ` (`O(n·Σp)`). **Measured** (`perf` on
/// `fused_knn_scale -- synth 20000 approx`, one thread): NN-descent 81 % of the CPU time,
/// the re-ranking 16 % (serial before: at most `1/(0.19 + 0.81/2) = 1.7×` on two threads),
/// what stays serial 2 % (CCA 0.6 %, projections 0.4 %, sample, `ρ` and assembly), so at
/// most `1.96×`. On two threads the busiest thread's CPU time (the wall time on idle
/// cores; the shared machine was at a load of 13–15, where the wall time does not scale)
/// fell from 4.53 s (one thread) to 2.35–2.37 s, `1.92×` (before this change 4.42 s to
/// 2.57–2.60 s, `1.71×`); the process's CPU time 4.40–4.46 s on two threads (no overhead).
/// Errors as [`fused_knn_graph`], and NN-descent's options ([`Error::BadParameter`]); a host
/// pool that skips or repeats a task, [`Error::ParallelFor`] (nothing written).
/// Cost: `O(n·Σd·p)` for the projections, `O(Q·(Σd + Σp))` for the sample, NN-descent's
/// (about linear in `n`) and `O(n·k·(Σd + Σp))` for the re-ranking; memory `O(n·(Σp + k))`.
pub fn fused_knn_graph_build<T: Real, VS: ViewSet<T> + Sync + ?Sized>(
    views: &VS,
    s: usize,
    priors: Option<&[f64]>,
    params: &FusedParams,
    build: &GraphBuild,
    out: &mut crate::graph::CsrOut<'_>,
    work: &mut [u8],
) -> Result<usize, Error> {
    params.validate()?;
    let nv = views.count();
    let (n, _) = dense_dims((0..nv).map(|i| views.shape(i)))?;
    let Some(ann) = build.resolve(n, 0, Parallel::Serial) else {
        return fused_knn_graph(views, s, priors, params, out, work);
    };
    if let Some(p) = priors {
        check_priors(p, nv, params.cross_view)?;
    }
    let rows = |i: usize| views.shape(i).rows;
    let prior = |a: usize, b: usize| prior_of(priors, nv, params.cross_view, a, b);
    let used = |a: usize, b: usize| params.cross_view && prior(a, b) > 0.0;
    let req = approx_req::<T>(&rows, nv, n, s, params, &used, &ann)?;
    if out.row_ptr.len() != n + 1 {
        return Err(Error::DimensionMismatch);
    }
    check_set_values(views)?;
    if n < 2 && (0..nv).any(|a| (a + 1..nv).any(|b| used(a, b))) {
        return Err(Error::ZeroDimension);
    }
    req.check(work.len())?;
    let sh = approx_shape(&rows, nv, n, params, &used)?;
    let h = nv + sh.pairs;
    let kk = approx_k(&ann, s, n);
    let jj = nv * nv;
    let mut st = Stack::new(work);
    let store: &mut [T] = st.take(sh.store)?;
    let proj: &mut [T] = st.take(sh.proj)?;
    let dims: &mut [usize] = st.take(sh.pairs)?;
    let sc: &mut [f64] = st.take(2 * jj)?;
    let gam: &mut [f64] = st.take(h)?;
    let eta: &mut [f64] = st.take(h)?;
    let nbr: &mut [usize] = st.take(n * kk)?;
    let sims: &mut [f64] = st.take(n * kk)?;
    let idx: &mut [usize] = st.take(n * s)?;
    let z: &mut [T] = st.take(n * s)?;
    let rest = st.take_rest();

    // 1. CCA of every used pair on all items, and the items projected.
    {
        let (mut so, mut po, mut t) = (0usize, 0usize, 0usize);
        for lo in 0..nv {
            for hi in lo + 1..nv {
                if !used(lo, hi) {
                    continue;
                }
                let (dl, dh) = (rows(lo), rows(hi));
                let p = params.dims(dl, dh);
                *dims.at_mut(t)? = p;
                t += 1;
                let len = slot_len(dl, dh, p, 0).ok_or(Error::SizeOverflow)?;
                let sl = store.get_mut(so..so + len).ok_or(Error::Internal)?;
                so += len;
                let (phi_l, r1) = sl.split_at_mut_checked(dl * p).ok_or(Error::Internal)?;
                let (phi_h, r2) = r1.split_at_mut_checked(dh * p).ok_or(Error::Internal)?;
                let (mu_l, mu_h) = r2.split_at_mut_checked(dl).ok_or(Error::Internal)?;
                let (x, y) = match (views.view(lo), views.view(hi)) {
                    (View::Dense(x), View::Dense(y)) => (x, y),
                    _ => return Err(Error::BadParameter),
                };
                let reg = params.cca_reg * mean_variance(&x, &y);
                let mut ph = Stack::new(&mut rest[..]);
                let rho: &mut [T] = ph.take(p)?;
                let inner = ph.take_rest();
                cca(&x, &y, reg, p, phi_l, phi_h, rho, mu_l, mu_h, inner)?;
                let pn = p * n;
                let pr = proj.get_mut(po..po + 3 * pn).ok_or(Error::Internal)?;
                po += 3 * pn;
                let (py, r5) = pr.split_at_mut_checked(pn).ok_or(Error::Internal)?;
                let (pz, pm) = r5.split_at_mut_checked(pn).ok_or(Error::Internal)?;
                let mut ph = Stack::new(&mut rest[..]).with_par(ann.parallel);
                project(x.mat(), phi_l, mu_l, p, py, &mut ph)?;
                project(y.mat(), phi_h, mu_h, p, pz, &mut ph)?;
                for ((m, &a), &b) in pm.iter_mut().zip(&*py).zip(&*pz) {
                    *m = T::from_f64(0.5 * (a.to_f64() + b.to_f64()));
                }
            }
        }
    }
    let proj: &[T] = proj;
    let dims: &[usize] = dims;
    // The pair slot (index among the used pairs) of `lo < hi`, and its projections.
    let pair_of = |lo: usize, hi: usize| -> Option<(usize, usize)> {
        let mut t = 0;
        let mut off = 0;
        for a in 0..nv {
            for c in a + 1..nv {
                if !used(a, c) {
                    continue;
                }
                let p = dims.get(t).copied()?;
                if (a, c) == (lo, hi) {
                    return Some((off, p));
                }
                off += 3 * p * n;
                t += 1;
            }
        }
        None
    };
    // d² of part (i, j) between items u (its view i side) and a (its view j side).
    let d2 = |i: usize, j: usize, u: usize, a: usize| -> f64 {
        if i == j {
            let View::Dense(x) = views.view(i) else {
                return 0.0;
            };
            return x
                .col(u)
                .iter()
                .zip(x.col(a))
                .map(|(&p, &q)| {
                    let t = p.to_f64() - q.to_f64();
                    t * t
                })
                .sum();
        }
        let (lo, hi) = (i.min(j), i.max(j));
        let Some((off, p)) = pair_of(lo, hi) else {
            return 0.0;
        };
        // Y (view lo) at `off`, Z (view hi) at `off + p n`; part (i, j): item u's side i.
        let (su, sa) = if i == lo { (0, p * n) } else { (p * n, 0) };
        let cu = proj.get(off + su + u * p..off + su + (u + 1) * p);
        let ca = proj.get(off + sa + a * p..off + sa + (a + 1) * p);
        cu.zip(ca).map_or(0.0, |(cu, ca)| {
            cu.iter()
                .zip(ca)
                .map(|(&p, &q)| {
                    let t = p.to_f64() - q.to_f64();
                    t * t
                })
                .sum()
        })
    };
    let parts = |f: &mut dyn FnMut(usize, usize) -> Result<(), Error>| -> Result<(), Error> {
        for i in 0..nv {
            for j in 0..nv {
                if (i == j && prior(i, i) > 0.0) || (i != j && used(i.min(j), i.max(j))) {
                    f(i, j)?;
                }
            }
        }
        Ok(())
    };

    // 2. Bandwidths and volumes on a seeded sample of pairs.
    sc.fill(0.0);
    {
        let q = FUSED_KNN_SAMPLE_PAIRS;
        let mut ph = Stack::new(&mut rest[..]);
        let su: &mut [usize] = ph.take(q)?;
        let sa: &mut [usize] = ph.take(q)?;
        let buf: &mut [f64] = ph.take(q)?;
        let mut rng = crate::rng::Rng::new(ann.seed ^ FUSED_SAMPLE_STREAM);
        for (u, a) in su.iter_mut().zip(sa.iter_mut()) {
            *u = rng.below(n);
            *a = rng.below(n);
        }
        parts(&mut |i, j| {
            let k = i + j * nv;
            for ((b, &u), &a) in buf.iter_mut().zip(&*su).zip(&*sa) {
                *b = d2(i, j, u, a);
            }
            let g = if i != j && params.sigma > 0.0 {
                params.sigma
            } else {
                bandwidth(&mut buf[..], q, false)
            };
            let mean = buf.iter().map(|&d| libm::exp(-g * d)).sum::<f64>() / q as f64;
            *sc.at_mut(k)? = g;
            *sc.at_mut(jj + k)? = mean * n as f64;
            Ok(())
        })?;
    }
    let scale = |k: usize| sc.get(k).copied().unwrap_or(0.0);
    // The surrogate's bandwidths and weights (module of step 3 above).
    gam.fill(1.0);
    eta.fill(0.0);
    let pw = |i: usize, j: usize| {
        let v = scale(jj + i + j * nv);
        if v > 0.0 {
            prior(i, j) / v
        } else {
            0.0
        }
    };
    for i in 0..nv {
        if prior(i, i) > 0.0 {
            *gam.at_mut(i)? = scale(i + i * nv);
            *eta.at_mut(i)? = pw(i, i);
        }
    }
    {
        let mut t = nv;
        for lo in 0..nv {
            for hi in lo + 1..nv {
                if !used(lo, hi) {
                    continue;
                }
                let g = 0.5 * (scale(lo + hi * nv) + scale(hi + lo * nv));
                let g = if g > 0.0 && g.is_finite() { g } else { 1.0 };
                // ρ: the mean of the items' own cross weight exp(−γ‖Y_u − Z_u‖²).
                let rho = (0..n)
                    .map(|u| libm::exp(-g * d2(lo, hi, u, u)))
                    .sum::<f64>()
                    / n as f64;
                *gam.at_mut(t)? = g;
                *eta.at_mut(t)? = (pw(lo, hi) + pw(hi, lo)) * rho;
                t += 1;
            }
        }
    }
    // Weights as NN-descent takes them: finite, ≥ 0, a positive sum (else uniform).
    let emax = eta
        .iter()
        .copied()
        .filter(|x| x.is_finite())
        .fold(0.0, f64::max);
    for e in eta.iter_mut() {
        *e = if !e.is_finite() {
            1.0
        } else if emax > 0.0 {
            *e / emax
        } else {
            1.0
        };
    }

    // 3. NN-descent over the surrogate.
    let sur = Surrogate {
        views,
        nv,
        proj,
        dims,
        n,
    };
    let mut annp = ann;
    annp.k = kk;
    approx_knn(&sur, &Gammas(gam), eta, &[], 0, &annp, nbr, sims, rest)?;

    // 4. Each list re-ranked by the fused weight, the `s` best kept and normalised.
    let fused = |u: usize, a: usize| -> (f64, f64) {
        let (mut w, mut e) = (0.0, 0.0);
        let _ = parts(&mut |i, j| {
            let k = i + j * nv;
            let (g, v, p) = (scale(k), scale(jj + k), prior(i, j));
            let gd = g * d2(i, j, u, a);
            if v > 0.0 {
                w += p / v * libm::exp(-gd);
            }
            e += p * gd;
            Ok(())
        });
        (w, e)
    };
    // Scores of one list (reused: `ws` holds the weights, then the exponents); `oi`, `oz`:
    // the item's `s` neighbours and normalised weights.
    let rerank = |u: usize,
                  list: &[usize],
                  ws: &mut [f64],
                  oi: &mut [usize],
                  oz: &mut [T]|
     -> Result<(), Error> {
        for (w, &a) in ws.iter_mut().zip(list) {
            *w = if a < n { fused(u, a).0 } else { -1.0 };
        }
        // The `s` best positions: larger weight first, ties by the lower item.
        let item = |t: usize| list.get(t).copied().unwrap_or(usize::MAX);
        let w_at = |t: usize| ws.get(t).copied().unwrap_or(-1.0);
        let better = |x: usize, y: usize| {
            let (wx, wy) = (w_at(x), w_at(y));
            wx > wy || (wx == wy && item(x) < item(y))
        };
        select_best(kk, &better, oi);
        let total: f64 = oi.iter().map(|&t| w_at(t).max(0.0)).sum();
        if total > 0.0 && total.is_finite() {
            for (o, &t) in oz.iter_mut().zip(oi.iter()) {
                *o = T::from_f64(w_at(t).max(0.0) / total);
            }
        } else {
            // All underflow: the smallest exponents, weights ∝ exp(−(e − e_min)).
            for (w, &a) in ws.iter_mut().zip(list) {
                *w = if a < n {
                    -fused(u, a).1
                } else {
                    f64::NEG_INFINITY
                };
            }
            let w_at = |t: usize| ws.get(t).copied().unwrap_or(f64::NEG_INFINITY);
            let better = |x: usize, y: usize| {
                let (wx, wy) = (w_at(x), w_at(y));
                wx > wy || (wx == wy && item(x) < item(y))
            };
            select_best(kk, &better, oi);
            let emin = oi.first().map_or(0.0, |&t| -w_at(t));
            let total: f64 = oi.iter().map(|&t| libm::exp(emin + w_at(t))).sum();
            for (o, &t) in oz.iter_mut().zip(oi.iter()) {
                *o = T::from_f64(libm::exp(emin + w_at(t)) / total);
            }
        }
        for o in oi.iter_mut() {
            *o = item(*o);
        }
        if oi.iter().any(|&a| a >= n) {
            return Err(Error::Internal);
        }
        Ok(())
    };
    // On the caller's pool: blocks of items fixed by the shape alone (each item's
    // arithmetic is its own, so every pool gives the same bits).
    {
        let pair_work = (0..nv)
            .map(&rows)
            .chain(dims.iter().map(|&p| p.saturating_mul(2)))
            .fold(
                RERANK_PART_WORK.saturating_mul(nv * nv),
                usize::saturating_add,
            );
        let tasks = crate::par::tasks_for(n, kk.saturating_mul(pair_work));
        let chunk = crate::par::chunk_len(n, tasks, 1);
        let tasks = n.div_ceil(chunk);
        let nb: &[usize] = nbr;
        let items = Counted::new(
            pieces(nb, chunk * kk)
                .zip(pieces_mut(sims, chunk * kk))
                .zip(pieces_mut(idx, chunk * s))
                .zip(pieces_mut(z, chunk * s))
                .enumerate(),
            tasks,
        );
        ann.parallel
            .run_items(items, &|(t, (((nb, ws), oi), oz))| {
                let lists = pieces(nb, kk)
                    .zip(pieces_mut(ws, kk))
                    .zip(pieces_mut(oi, s))
                    .zip(pieces_mut(oz, s));
                for (r, (((list, ws), oi), oz)) in lists.enumerate() {
                    rerank(t * chunk + r, list, ws, oi, oz)?;
                }
                Ok(())
            })?;
    }
    assemble(idx, z, n, s, s, out, rest)
}

/// The `out.len()` best of positions `0..m` by `better` (best first), by selection.
fn select_best(m: usize, better: &dyn Fn(usize, usize) -> bool, out: &mut [usize]) {
    let mut taken = 0usize;
    for k in 0..out.len() {
        let mut best: Option<usize> = None;
        for t in 0..m {
            if out.iter().take(taken).any(|&x| x == t) {
                continue;
            }
            if best.is_none_or(|b| better(t, b)) {
                best = Some(t);
            }
        }
        if let (Some(o), Some(b)) = (out.get_mut(k), best) {
            *o = b;
            taken += 1;
        }
    }
}
