//! k-fold cross-validation of a method's weights inside the labeled items
//! (DESIGN §9: "the papers chose α, β by cross-validation on the labeled
//! training items ... folds within the labeled items only, hidden labels never
//! touched").

use crate::error::{Error, Part};
use crate::linalg::mat::MatRef;
use crate::linalg::{at, set_at, swap_at};
use crate::rng::Rng;
use crate::work::{Stack, WorkReq};

use super::protocol::knn_k_for;
use super::{knn_predict, knn_predict_workspace, KnnParams, UNLABELED};

/// Options of [`cross_validate`]. Defaults: 3 folds, seed 0, kNN with k = 9.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CvParams {
    /// Folds (at least 2, at most the number of labeled items).
    pub folds: usize,
    /// Seed of the folds' shuffle.
    pub seed: u64,
    /// The classifier that scores a held-out fold (`k` reduced as in
    /// [`knn_k_for`] when the other folds hold fewer than `k` items).
    pub knn: KnnParams,
}

impl Default for CvParams {
    fn default() -> Self {
        CvParams {
            folds: 3,
            seed: 0,
            knn: KnnParams::default(),
        }
    }
}

/// What [`cross_validate`] asks its fit callback for: the encoding of all
/// items for one candidate, from the labels of every fold but one.
#[derive(Clone, Copy, Debug)]
pub struct CvFit<'a> {
    /// The candidate's index, `0 .. n_candidates`.
    pub candidate: usize,
    /// Its parameter values (`n_params` values: row `candidate` of the grid).
    pub params: &'a [f64],
    /// The held-out fold, `0 .. folds`.
    pub fold: usize,
    /// The labels the fit may use: the classes of the labeled items outside
    /// the held-out fold; [`UNLABELED`] for the held-out fold and for every
    /// item that was unlabeled to begin with.
    pub labels: &'a [u32],
}

fn cv_req(
    k: usize,
    n: usize,
    n_classes: usize,
    n_candidates: usize,
    params: &CvParams,
) -> Result<WorkReq, Error> {
    if k == 0 || n == 0 || n_classes == 0 || n_candidates == 0 {
        return Err(Error::ZeroDimension);
    }
    if params.folds < 2 || params.knn.k == 0 {
        return Err(Error::BadParameter);
    }
    Ok(WorkReq::all_of(&[
        WorkReq::new::<usize>(n),     // fold of every labeled item
        WorkReq::new::<usize>(n),     // one class's members (shuffle)
        WorkReq::new::<u32>(n),       // the labels the fit sees
        WorkReq::matrix::<f64>(k, n), // the encoding
        WorkReq::matrix::<f64>(k, n), // the held-out items' encodings
        WorkReq::new::<u32>(n),       // their classes
        WorkReq::new::<u32>(n),       // their predictions
        WorkReq::new::<f64>(n_candidates),
        WorkReq::new::<u8>(knn_predict_workspace(&params.knn, n_classes)?),
    ]))
}

/// Workspace bytes of [`cross_validate`] for encodings of rank `k` of `n`
/// items, `n_classes` classes and `n_candidates` candidates.
pub fn cross_validate_workspace(
    k: usize,
    n: usize,
    n_classes: usize,
    n_candidates: usize,
    params: &CvParams,
) -> Result<usize, Error> {
    cv_req(k, n, n_classes, n_candidates, params)?.bytes()
}

/// Deals the labeled items into `folds` folds, stratified by class: each
/// class's labeled items are shuffled (Fisher–Yates from `rng`) and dealt
/// round-robin, the deal continuing from one class to the next (classes in
/// order). So every class is spread as evenly as possible (its counts in two
/// folds differ by at most one; a class with fewer items than folds lands in
/// that many distinct folds) and the fold sizes differ by at most one.
/// `fold[j]` is set for the labeled items only.
fn deal_folds(
    labels: &[u32],
    n_classes: usize,
    folds: usize,
    rng: &mut Rng,
    fold: &mut [usize],
    members: &mut [usize],
) {
    let mut next = 0;
    for c in 0..n_classes as u32 {
        let mut cnt = 0;
        for (j, &l) in labels.iter().enumerate() {
            if l == c {
                set_at(members, cnt, j);
                cnt += 1;
            }
        }
        for t in 0..cnt {
            let r = t + rng.below(cnt - t);
            swap_at(members, t, r);
            set_at(fold, at(members, t), next);
            next = (next + 1) % folds.max(1);
        }
    }
}

/// Chooses among `n_candidates` parameter vectors by k-fold cross-validation
/// inside the labeled items (`labels[j] != UNLABELED`).
///
/// The labeled items are dealt into `params.folds` folds stratified by class
/// (see below). For every candidate `c` (row `c` of `grid`, `n_params` values,
/// `grid.len() = n_candidates · n_params`) and every fold `f`, `fit` gets a
/// [`CvFit`] whose labels hide fold `f` (and every originally unlabeled item)
/// and writes the `k × n` encoding of all items (column-major) into its slice
/// (the same buffer at every call: it holds the previous call's encoding,
/// zeros before the first). The held-out items are classified by kNN
/// (`params.knn`; `k` reduced as in [`knn_k_for`]) from the other labeled
/// items' encodings; a candidate's score is its accuracy averaged over the
/// folds. Writes `scores[c]` (`n_candidates = scores.len()`) and returns the
/// best candidate (highest score; ties: the lowest index).
///
/// **Folds.** Each class's labeled items are shuffled (seeded by
/// `params.seed`) and dealt round-robin, the deal continuing from one class to
/// the next, classes in order: a class's counts in any two folds differ by at
/// most one, a class with fewer labeled items than folds is in that many
/// distinct folds (the others have none of it), and the fold sizes differ by
/// at most one. Every fold is non-empty when at least `folds` items are
/// labeled. (`examples-c/reproduce.c` used to restart the deal at fold 0 for
/// every class, which left the last folds empty when every class had fewer
/// items than folds; its shuffle also used a splitmix64 stream of its own.)
///
/// The hidden labels never reach `fit`. Cost: `n_candidates · folds` fits,
/// plus as many kNN passes of `O(n_held_out · n_labeled · k)`.
///
/// Errors (nothing is written): zero dimensions or no candidate
/// ([`Error::ZeroDimension`]); `grid.len() != n_candidates · n_params`
/// ([`Error::DimensionMismatch`]); a label neither `< n_classes` nor
/// [`UNLABELED`] ([`Error::BadLabel`]); `folds < 2` or `knn.k = 0`
/// ([`Error::BadParameter`]); fewer labeled items than folds
/// ([`Error::TooFewLabeled`]); a non-finite grid value or encoding
/// ([`Error::NonFiniteInput`]); a short workspace; an error returned by `fit`
/// (C: a nonzero return gives `MVNMF_STATUS_CANCELLED`), as it is.
#[allow(clippy::too_many_arguments)]
pub fn cross_validate<F>(
    labels: &[u32],
    n_classes: usize,
    k: usize,
    grid: &[f64],
    n_params: usize,
    params: &CvParams,
    scores: &mut [f64],
    work: &mut [u8],
    mut fit: F,
) -> Result<usize, Error>
where
    F: FnMut(&CvFit<'_>, &mut [f64]) -> Result<(), Error>,
{
    let n = labels.len();
    let nc = scores.len();
    let req = cv_req(k, n, n_classes, nc, params)?;
    if nc.checked_mul(n_params) != Some(grid.len()) {
        return Err(Error::DimensionMismatch);
    }
    if labels
        .iter()
        .any(|&l| l != UNLABELED && l as usize >= n_classes)
    {
        return Err(Error::BadLabel);
    }
    if grid.iter().any(|x| !x.is_finite()) {
        return Err(Error::NonFiniteInput);
    }
    let folds = params.folds;
    if labels.iter().filter(|&&l| l != UNLABELED).count() < folds {
        return Err(Error::TooFewLabeled);
    }
    req.check(work.len())?;
    let mut st = Stack::new(work);
    let fold: &mut [usize] = st.take(n)?;
    let members: &mut [usize] = st.take(n)?;
    let train: &mut [u32] = st.take(n)?;
    let v: &mut [f64] = st.take_matrix(k, n)?;
    let query: &mut [f64] = st.take_matrix(k, n)?;
    let truth: &mut [u32] = st.take(n)?;
    let pred: &mut [u32] = st.take(n)?;
    let acc: &mut [f64] = st.take(nc)?;
    let rest = st.take_rest();
    deal_folds(
        labels,
        n_classes,
        folds,
        &mut Rng::new(params.seed),
        fold,
        members,
    );
    v.fill(0.0);
    for (c, score) in acc.iter_mut().enumerate() {
        let mut sum = 0.0;
        for f in 0..folds {
            let mut nq = 0;
            for ((t, &l), &fj) in train.iter_mut().zip(labels).zip(fold.iter()) {
                let hide = l != UNLABELED && fj == f;
                *t = if hide { UNLABELED } else { l };
                nq += hide as usize;
            }
            let req = CvFit {
                candidate: c,
                params: grid
                    .get(c * n_params..(c + 1) * n_params)
                    .ok_or(Error::Internal)?,
                fold: f,
                labels: train,
            };
            fit(&req, v)?;
            // The held-out items' encodings (`k` each) and classes, in item order.
            let mut held = query.chunks_exact_mut(k.max(1)).zip(truth.iter_mut());
            let items = labels.iter().zip(fold.iter()).zip(v.chunks_exact(k.max(1)));
            for ((&l, &fj), vj) in items {
                if l != UNLABELED && fj == f {
                    if let Some((qc, tr)) = held.next() {
                        qc.copy_from_slice(vj);
                        *tr = l;
                    }
                }
            }
            let knn = KnnParams {
                k: knn_k_for(train, n_classes, params.knn.k),
                ..params.knn
            };
            let pred = pred.part_mut(..nq)?;
            knn_predict(
                MatRef::col_major(v, k, n)?,
                train,
                MatRef::col_major(query.part(..k * nq)?, k, nq)?,
                n_classes,
                &knn,
                pred,
                rest,
            )?;
            let hits = pred
                .iter()
                .zip(truth.iter())
                .filter(|(p, t)| p == t)
                .count();
            sum += hits as f64 / nq as f64;
        }
        *score = sum / folds as f64;
    }
    let (mut best, mut top) = (0, at(acc, 0));
    for (c, &x) in acc.iter().enumerate().take(nc).skip(1) {
        if x > top {
            (best, top) = (c, x);
        }
    }
    scores.copy_from_slice(acc);
    Ok(best)
}
