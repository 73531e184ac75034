//! The papers' evaluation protocol (DESIGN §9): random stratified splits over
//! several seeds, the evaluation of one encoding on one split (kNN accuracy,
//! k-means ACC and NMI on the test items), and mean ± std over the splits.
//!
//! [`evaluate_protocol`] runs the whole loop for one method: for every split
//! `s` (seed `seed + s`) and every labeled fraction it draws a per-class
//! stratified labeled subset ([`stratified_split`](super::stratified_split)),
//! asks the caller's fit callback for a `K × N` encoding from the labels of the
//! labeled items only, and scores it with [`evaluate_split`].
//! [`summarize_scores`] and [`mean_std`] give the tables' mean ± std
//! (population std, numpy's `np.std`). Weights are chosen by
//! [`cross_validate`](super::cross_validate) inside the labeled items.
//!
//! These routines are what `examples-c/reproduce.c` did by hand before; the
//! numbers are the same (same splits, same kNN `k` rule, same k-means seeds,
//! same two-pass mean and std).

use crate::error::Error;
use crate::linalg::mat::MatRef;
use crate::linalg::set_at;
use crate::work::{Stack, WorkReq};

use super::{
    clustering_accuracy, clustering_accuracy_workspace, kmeans, kmeans_workspace, knn_predict,
    knn_predict_workspace, nmi, nmi_workspace, split_into, stratified_split_workspace,
    KMeansParams, KnnParams, NmiNorm, UNLABELED,
};

/// Options of [`evaluate_split`]: the classifier, the clustering and the NMI
/// normalisation. Defaults: kNN with k = 9 (Euclidean), k-means with 10
/// restarts, NMI normalised by `max(H(C), H(C'))` (seed 003 eq. 43).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct EvalParams {
    /// kNN classifier of the test items (`k` may be reduced: [`knn_k_for`]).
    pub knn: KnnParams,
    /// k-means of the test items' encodings; its `seed` is used as given by
    /// [`evaluate_split`] and replaced by the split's seed in
    /// [`evaluate_protocol`].
    pub kmeans: KMeansParams,
    /// Normalisation of the NMI.
    pub nmi: NmiNorm,
}

impl EvalParams {
    fn validate(&self) -> Result<(), Error> {
        if self.knn.k == 0 {
            return Err(Error::BadParameter);
        }
        self.kmeans.validate()
    }
}

/// The scores of one encoding on one split.
// `repr(C)`: the C ABI's `mvnmf_split_scores` (renamed in cbindgen.toml), these docs
// included: a change here changes the C ABI.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct SplitScores {
    /// kNN accuracy of the test items from the labeled items' encodings.
    pub knn_accuracy: f64,
    /// k-means clustering accuracy of the test items (best one-to-one map).
    pub kmeans_accuracy: f64,
    /// k-means NMI of the test items.
    pub kmeans_nmi: f64,
    /// The `k` the kNN classifier used.
    pub knn_k: usize,
}

/// Mean ± population std over the splits of one labeled fraction.
// `repr(C)`: the C ABI's `mvnmf_score_summary` (renamed in cbindgen.toml), these docs
// included: a change here changes the C ABI.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct ScoreSummary {
    /// Mean kNN accuracy.
    pub knn_mean: f64,
    /// Its population std (numpy's `np.std`).
    pub knn_std: f64,
    /// Mean k-means accuracy.
    pub kmeans_accuracy_mean: f64,
    /// Its population std.
    pub kmeans_accuracy_std: f64,
    /// Mean k-means NMI.
    pub kmeans_nmi_mean: f64,
    /// Its population std.
    pub kmeans_nmi_std: f64,
    /// The smallest kNN `k` used over the splits.
    pub knn_k_min: usize,
}

/// Options of [`evaluate_protocol`]. Defaults: 5 splits, seed 0, the default
/// [`EvalParams`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProtocolParams {
    /// Random splits per fraction (at least 1).
    pub splits: usize,
    /// Split `s` uses seed `seed + s` (wrapping) for its labeled subset, and
    /// the same seed for its k-means.
    pub seed: u64,
    /// How each split is scored.
    pub eval: EvalParams,
}

impl Default for ProtocolParams {
    fn default() -> Self {
        ProtocolParams {
            splits: 5,
            seed: 0,
            eval: EvalParams::default(),
        }
    }
}

/// What [`evaluate_protocol`] asks its fit callback for: an encoding of all
/// `N` items from the labels of one split's labeled items.
#[derive(Clone, Copy, Debug)]
pub struct ProtocolFit<'a> {
    /// The split, `0 .. splits`.
    pub split: usize,
    /// The labeled fraction's index in `fractions`.
    pub fraction_index: usize,
    /// The labeled fraction.
    pub fraction: f64,
    /// The split's seed (`seed + split`), for the fit's initialisation.
    pub seed: u64,
    /// The class of every labeled item, [`UNLABELED`] for the test items.
    pub labels: &'a [u32],
    /// 1 for the labeled items, 0 for the test items.
    pub labeled: &'a [u8],
}

/// Population mean and standard deviation of `x` (numpy's `np.mean`,
/// `np.std`, ddof = 0), two passes: `m = Σx / n`, `s = sqrt(Σ(x − m)² / n)`.
///
/// Every finite input has a finite result: when the largest `|x|` is outside
/// `[2^-500, 2^500]` the passes run on `x · 2^-e` (`2^e` the largest `|x|`'s
/// binade; exact, so the same bits as without the scaling wherever those do
/// not overflow or underflow) and the results are scaled back; the mean is
/// kept within `[min x, max x]` and the deviation at most `(max x − min x) / 2`
/// (where the exact values lie), so neither can round up past `f64::MAX`.
///
/// Errors: empty `x` ([`Error::ZeroDimension`]), a NaN or infinite value
/// ([`Error::NonFiniteInput`]).
pub fn mean_std(x: &[f64]) -> Result<(f64, f64), Error> {
    if x.is_empty() {
        return Err(Error::ZeroDimension);
    }
    if x.iter().any(|v| !v.is_finite()) {
        return Err(Error::NonFiniteInput);
    }
    Ok(mean_std_of(x.len(), |i| x[i]))
}

/// [`mean_std`] of `x(0..n)` (finite values, `n ≥ 1`).
fn mean_std_of(n: usize, x: impl Fn(usize) -> f64) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for i in 0..n {
        lo = lo.min(x(i));
        hi = hi.max(x(i));
    }
    let big = hi.max(-lo);
    // The binade of the largest magnitude, when outside the range where the
    // plain passes can neither overflow (n·2^501 and n·2^1002 are far below
    // f64::MAX) nor lose the deviation to underflow.
    let e = if big > 0.0 && !(libm::ldexp(1.0, -500)..=libm::ldexp(1.0, 500)).contains(&big) {
        libm::ilogb(big)
    } else {
        0
    };
    let y = |i: usize| libm::ldexp(x(i), -e);
    let mut s = 0.0;
    for i in 0..n {
        s += y(i);
    }
    let mean = s / n as f64;
    let mut q = 0.0;
    for i in 0..n {
        let d = y(i) - mean;
        q += d * d;
    }
    // Kept where the exact values lie, in the scaled problem (whose extremes
    // are at most 2 in magnitude), so that scaling back cannot overflow.
    let (ylo, yhi) = (libm::ldexp(lo, -e), libm::ldexp(hi, -e));
    let mean = mean.max(ylo).min(yhi);
    let std = libm::sqrt(q / n as f64).min(yhi / 2.0 - ylo / 2.0);
    (libm::ldexp(mean, e), libm::ldexp(std, e))
}

/// Mean ± std over the splits of every fraction: `scores` holds
/// `n_fractions × splits` entries, fraction-major (`scores[f * splits + s]`,
/// the layout of [`evaluate_protocol`]; any type that converts into
/// [`SplitScores`], e.g. the C ABI's struct); writes `out[f]` for
/// `f < out.len() = n_fractions`. No workspace.
///
/// Errors: `splits = 0` or no fraction ([`Error::ZeroDimension`]),
/// `scores.len() != out.len() * splits` ([`Error::DimensionMismatch`]), a
/// non-finite score ([`Error::NonFiniteInput`]).
pub fn summarize_scores<S: Copy + Into<SplitScores>>(
    scores: &[S],
    splits: usize,
    out: &mut [ScoreSummary],
) -> Result<(), Error> {
    if splits == 0 || out.is_empty() {
        return Err(Error::ZeroDimension);
    }
    if out.len().checked_mul(splits) != Some(scores.len()) {
        return Err(Error::DimensionMismatch);
    }
    if scores.iter().any(|&s| {
        let s: SplitScores = s.into();
        !(s.knn_accuracy.is_finite() && s.kmeans_accuracy.is_finite() && s.kmeans_nmi.is_finite())
    }) {
        return Err(Error::NonFiniteInput);
    }
    for (o, cells) in out.iter_mut().zip(scores.chunks_exact(splits)) {
        let row = |s: usize| -> SplitScores {
            cells.get(s).map_or(SplitScores::default(), |&x| x.into())
        };
        let (knn_mean, knn_std) = mean_std_of(splits, |s| row(s).knn_accuracy);
        let (am, asd) = mean_std_of(splits, |s| row(s).kmeans_accuracy);
        let (nm, nsd) = mean_std_of(splits, |s| row(s).kmeans_nmi);
        *o = ScoreSummary {
            knn_mean,
            knn_std,
            kmeans_accuracy_mean: am,
            kmeans_accuracy_std: asd,
            kmeans_nmi_mean: nm,
            kmeans_nmi_std: nsd,
            knn_k_min: (0..splits).map(|s| row(s).knn_k).min().unwrap_or(0),
        };
    }
    Ok(())
}

/// The `k` of the kNN classifier for a reference set with labels `labels`
/// ([`UNLABELED`] entries skipped): `k` when at least `k` items are labeled;
/// otherwise the size of the smallest labeled class (a kNN over all labeled
/// items would be a majority vote). 0 when nothing is labeled. Labels must be
/// below `n_classes`.
pub fn knn_k_for(labels: &[u32], n_classes: usize, k: usize) -> usize {
    let nl = labels.iter().filter(|&&l| l != UNLABELED).count();
    if nl >= k {
        return k;
    }
    let mut best = nl;
    for c in 0..n_classes as u32 {
        let cnt = labels.iter().filter(|&&l| l == c).count();
        if cnt > 0 && cnt < best {
            best = cnt;
        }
    }
    best
}

/// Classes with at least one item.
fn present_classes(labels: &[u32], n_classes: usize) -> usize {
    (0..n_classes as u32).filter(|c| labels.contains(c)).count()
}

fn eval_req(k: usize, n: usize, n_classes: usize, params: &EvalParams) -> Result<WorkReq, Error> {
    params.validate()?;
    if k == 0 || n == 0 || n_classes == 0 {
        return Err(Error::ZeroDimension);
    }
    let kc = n_classes.min(n);
    let phase = |b: Result<usize, Error>| b.map(WorkReq::new::<u8>);
    Ok(WorkReq::all_of(&[
        WorkReq::matrix::<f64>(k, n), // the test items' encodings
        WorkReq::new::<u32>(n),       // their classes
        WorkReq::new::<u32>(n),       // predictions / clusters
        WorkReq::any_of(&[
            phase(knn_predict_workspace(&params.knn, n_classes))?,
            phase(kmeans_workspace(k, n, kc, &params.kmeans))?,
            phase(clustering_accuracy_workspace(n_classes, kc))?,
            phase(nmi_workspace(n_classes, kc))?,
        ]),
    ]))
}

/// Workspace bytes of [`evaluate_split`] for a `k × n` encoding and
/// `n_classes` classes.
pub fn evaluate_split_workspace(
    k: usize,
    n: usize,
    n_classes: usize,
    params: &EvalParams,
) -> Result<usize, Error> {
    eval_req(k, n, n_classes, params)?
        .and(WorkReq::new::<u32>(n))
        .bytes()
}

/// Scores the `k × n` encoding `v` of one split, as the papers do: the test
/// items are those with `labeled[j] == false`.
///
/// * kNN (`params.knn`) from the labeled items' encodings (with their classes)
///   classifies the test items: accuracy. Where fewer than `k` items are
///   labeled, `k` is the smallest labeled class's size ([`knn_k_for`];
///   reported in [`SplitScores::knn_k`]).
/// * k-means (`params.kmeans`, its seed as given) clusters the test items'
///   encodings into `min(C', n_test)` clusters, `C'` the number of classes
///   with at least one item: accuracy under the best one-to-one map
///   (Kuhn–Munkres) and NMI (`params.nmi`).
///
/// `labels[j] < n_classes` for every item (all classes are known: the test
/// items' are the truth). Cost: kNN `O(n_test · n_labeled · k)` plus k-means.
///
/// Errors (nothing is written): zero dimensions, or no test item
/// ([`Error::ZeroDimension`]); mismatched lengths; a label out of range
/// ([`Error::BadLabel`]); no labeled item ([`Error::TooFewLabeled`]); a
/// non-finite encoding; bad options; a short workspace.
pub fn evaluate_split(
    v: MatRef<'_, f64>,
    labels: &[u32],
    n_classes: usize,
    labeled: &[bool],
    params: &EvalParams,
    work: &mut [u8],
) -> Result<SplitScores, Error> {
    let n = v.cols();
    if labeled.len() != n {
        return Err(Error::DimensionMismatch);
    }
    WorkReq::new::<u32>(n)
        .and(eval_req(v.rows(), n, n_classes, params)?)
        .check(work.len())?;
    let mut st = Stack::new(work);
    let masked: &mut [u32] = st.take(n)?;
    check_labels(labels, n, n_classes)?;
    for j in 0..n {
        masked[j] = if labeled[j] { labels[j] } else { UNLABELED };
    }
    evaluate_masked(v, labels, n_classes, masked, params, st.take_rest())
}

fn check_labels(labels: &[u32], n: usize, n_classes: usize) -> Result<(), Error> {
    if labels.len() != n {
        return Err(Error::DimensionMismatch);
    }
    if labels.iter().any(|&l| l as usize >= n_classes) {
        return Err(Error::BadLabel);
    }
    Ok(())
}

/// [`evaluate_split`] with the training labels given (`masked[j]` is the class
/// of a labeled item, [`UNLABELED`] for a test item).
fn evaluate_masked(
    v: MatRef<'_, f64>,
    labels: &[u32],
    n_classes: usize,
    masked: &[u32],
    params: &EvalParams,
    work: &mut [u8],
) -> Result<SplitScores, Error> {
    let (k, n) = (v.rows(), v.cols());
    // Validation only: `work` is the rest of a checked workspace (its ALIGN
    // slack was spent aligning the caller's buffer).
    eval_req(k, n, n_classes, params)?;
    check_labels(labels, n, n_classes)?;
    let nt = masked.iter().filter(|&&l| l == UNLABELED).count();
    if nt == 0 {
        return Err(Error::ZeroDimension);
    }
    if nt == n {
        return Err(Error::TooFewLabeled);
    }
    for j in 0..n {
        for i in 0..k {
            if !v.at(i, j).is_finite() {
                return Err(Error::NonFiniteInput);
            }
        }
    }
    let mut st = Stack::new(work);
    let test: &mut [f64] = st.take_matrix(k, nt)?;
    let truth: &mut [u32] = st.take(nt)?;
    let pred: &mut [u32] = st.take(nt)?;
    // The test items' encodings (`k` each) and classes, in item order.
    let mut tests = test.chunks_exact_mut(k.max(1)).zip(truth.iter_mut());
    for (j, (&m, &l)) in masked.iter().zip(labels).enumerate().take(n) {
        if m == UNLABELED {
            if let Some((col, tr)) = tests.next() {
                for (i, x) in col.iter_mut().enumerate() {
                    *x = v.at(i, j);
                }
                *tr = l;
            }
        }
    }
    let test = MatRef::col_major(test, k, nt)?;
    let knn = KnnParams {
        k: knn_k_for(masked, n_classes, params.knn.k),
        ..params.knn
    };
    let rest = st.take_rest();
    knn_predict(v, masked, test, n_classes, &knn, pred, rest)?;
    let hits = pred
        .iter()
        .zip(truth.iter())
        .filter(|(p, t)| p == t)
        .count();
    let knn_accuracy = hits as f64 / nt as f64;

    let kc = present_classes(labels, n_classes).min(nt);
    kmeans(test, kc, &params.kmeans, pred, None, rest)?;
    let kmeans_accuracy = clustering_accuracy(truth, pred, n_classes, kc, rest)?;
    let kmeans_nmi = nmi(truth, pred, n_classes, kc, params.nmi, rest)?;
    Ok(SplitScores {
        knn_accuracy,
        kmeans_accuracy,
        kmeans_nmi,
        knn_k: knn.k,
    })
}

/// Workspace bytes of [`evaluate_protocol`] for encodings of rank `k` of `n`
/// items, `n_fractions` fractions.
pub fn evaluate_protocol_workspace(
    k: usize,
    n: usize,
    n_classes: usize,
    n_fractions: usize,
    params: &ProtocolParams,
) -> Result<usize, Error> {
    protocol_req(k, n, n_classes, n_fractions, params)?.bytes()
}

fn protocol_req(
    k: usize,
    n: usize,
    n_classes: usize,
    n_fractions: usize,
    params: &ProtocolParams,
) -> Result<WorkReq, Error> {
    if params.splits == 0 || n_fractions == 0 {
        return Err(Error::ZeroDimension);
    }
    let cells = n_fractions
        .checked_mul(params.splits)
        .ok_or(Error::SizeOverflow)?;
    Ok(WorkReq::all_of(&[
        WorkReq::new::<u8>(n),        // labeled flags
        WorkReq::new::<u32>(n),       // the labels the fit sees
        WorkReq::matrix::<f64>(k, n), // the encoding
        WorkReq::matrix::<f64>(3, cells),
        WorkReq::new::<usize>(cells),
        WorkReq::any_of(&[
            WorkReq::new::<u8>(stratified_split_workspace(n)?),
            eval_req(k, n, n_classes, &params.eval)?,
        ]),
    ]))
}

/// The evaluation protocol of the papers for one method (DESIGN §9).
///
/// For every split `s = 0 .. splits` (seed `seed + s`) and every fraction
/// `fractions[f]`, in that order (splits outer):
/// 1. a per-class stratified random subset is labeled (exactly
///    [`stratified_split`](super::stratified_split) with the split's seed);
/// 2. `fit` is called with a [`ProtocolFit`] (the labeled items' classes, the
///    test items [`UNLABELED`]) and writes the `k × n` encoding of all items
///    into its slice (column-major). That slice is the same buffer at every
///    call and keeps what the previous call wrote (zeros before the first):
///    a method that never reads labels may fit once per split (at
///    `fraction_index == 0`) and leave it as it is for the other fractions;
/// 3. the encoding is scored by [`evaluate_split`] (its k-means seeded with
///    the split's seed).
///
/// The test items' classes are never passed to `fit`. Writes
/// `scores[f * splits + s]` (any type built from [`SplitScores`], e.g. the C
/// ABI's struct; fraction-major; [`summarize_scores`] gives
/// mean ± std) once every split is done: on any error, including one returned
/// by `fit` (C: a nonzero return, `MVNMF_STATUS_CANCELLED`), `scores` is
/// untouched.
///
/// Errors: zero dimensions, no fraction or `splits = 0`
/// ([`Error::ZeroDimension`]); `scores.len() != n_fractions · splits`; a label
/// `≥ n_classes` (every item needs its class); a fraction outside `(0, 1)`
/// ([`Error::BadParameter`]); a split with no test item or no labeled item, a
/// non-finite encoding (from [`evaluate_split`]); a short workspace.
#[allow(clippy::too_many_arguments)]
pub fn evaluate_protocol<O, F>(
    labels: &[u32],
    n_classes: usize,
    fractions: &[f64],
    k: usize,
    params: &ProtocolParams,
    scores: &mut [O],
    work: &mut [u8],
    mut fit: F,
) -> Result<(), Error>
where
    O: From<SplitScores>,
    F: FnMut(&ProtocolFit<'_>, &mut [f64]) -> Result<(), Error>,
{
    let n = labels.len();
    let req = protocol_req(k, n, n_classes, fractions.len(), params)?;
    let splits = params.splits;
    let cells = fractions.len() * splits;
    if scores.len() != cells {
        return Err(Error::DimensionMismatch);
    }
    check_labels(labels, n, n_classes)?;
    if fractions.iter().any(|&f| !(f > 0.0 && f < 1.0)) {
        return Err(Error::BadParameter);
    }
    req.check(work.len())?;
    let mut st = Stack::new(work);
    let labeled: &mut [u8] = st.take(n)?;
    let masked: &mut [u32] = st.take(n)?;
    let v: &mut [f64] = st.take_matrix(k, n)?;
    let acc: &mut [f64] = st.take_matrix(3, cells)?;
    let ks: &mut [usize] = st.take(cells)?;
    let rest = st.take_rest();
    v.fill(0.0);
    for s in 0..splits {
        let seed = params.seed.wrapping_add(s as u64);
        for (f, &fraction) in fractions.iter().enumerate() {
            split_into(labels, n_classes, fraction, seed, labeled, 1u8, 0u8, rest)?;
            for j in 0..n {
                masked[j] = if labeled[j] == 1 {
                    labels[j]
                } else {
                    UNLABELED
                };
            }
            let req = ProtocolFit {
                split: s,
                fraction_index: f,
                fraction,
                seed,
                labels: masked,
                labeled,
            };
            fit(&req, v)?;
            let eval = EvalParams {
                kmeans: KMeansParams {
                    seed,
                    ..params.eval.kmeans
                },
                ..params.eval
            };
            let vm = MatRef::col_major(v, k, n)?;
            let r = evaluate_masked(vm, labels, n_classes, masked, &eval, rest)?;
            let c = f * splits + s;
            if let Some([a, b, m]) = acc.get_mut(3 * c..3 * c + 3) {
                (*a, *b, *m) = (r.knn_accuracy, r.kmeans_accuracy, r.kmeans_nmi);
            }
            set_at(ks, c, r.knn_k);
        }
    }
    for ((out, a), &k) in scores.iter_mut().zip(acc.chunks_exact(3)).zip(ks.iter()) {
        let [knn_accuracy, kmeans_accuracy, kmeans_nmi] = *a else {
            continue;
        };
        *out = SplitScores {
            knn_accuracy,
            kmeans_accuracy,
            kmeans_nmi,
            knn_k: k,
        }
        .into();
    }
    Ok(())
}
