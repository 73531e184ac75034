//! C ABI of the evaluation protocol (`crate::eval::{protocol, cv}`): one
//! split, the protocol over splits, cross-validation, mean ± std. Same
//! conventions as `ffi/eval.rs`.

use core::ffi::{c_int, c_void};

use super::eval::*;
use super::similarity::cmask;
use super::util::*;
use crate::error::Error;
use crate::eval::{self, CvParams, EvalParams, ProtocolParams, ScoreSummary, SplitScores};

cparams! {
    /// How `mvnmf_evaluate_split` / `mvnmf_evaluate_protocol` score an encoding;
    /// defaults from `mvnmf_eval_params_default()`.
    pub struct mvnmf_eval_params => EvalParams {
        /// kNN classifier of the test items (default k = 9, Euclidean; `k` is
        /// reduced to the smallest labeled class when fewer than `k` items are
        /// labeled).
        pub knn: mvnmf_knn_params,
        /// k-means of the test items (default 10 restarts). `mvnmf_evaluate_protocol`
        /// replaces its seed by each split's seed.
        pub kmeans: mvnmf_kmeans_params,
        /// NMI normalisation, `MVNMF_NMI_*` (default `MVNMF_NMI_MAX`, the papers').
        pub nmi: u32,
    };
    /// The default scoring: kNN k = 9 (Euclidean), k-means with 10 restarts, NMI
    /// normalised by `max(H(C), H(C'))`.
    fn mvnmf_eval_params_default;
}

cparams! {
    /// Options of `mvnmf_evaluate_protocol`; defaults from
    /// `mvnmf_protocol_params_default()` (5 splits, seed 0, default scoring).
    pub struct mvnmf_protocol_params => ProtocolParams {
        /// Random splits per fraction (at least 1).
        pub splits: usize,
        /// Split `s` uses seed `seed + s` for its labeled subset and its k-means.
        pub seed: u64,
        /// How each split is scored.
        pub eval: mvnmf_eval_params,
    };
    /// The default protocol: 5 splits, seed 0, the default scoring.
    fn mvnmf_protocol_params_default;
}

/// What `mvnmf_evaluate_protocol` asks its fit callback for: the `k × n`
/// encoding of all items from the labels of one split's labeled items.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mvnmf_protocol_fit {
    /// The split, `0 .. splits - 1`.
    pub split: usize,
    /// The labeled fraction's index in `fractions`.
    pub fraction_index: usize,
    /// The labeled fraction.
    pub fraction: f64,
    /// The split's seed (`seed + split`), for the fit's initialisation.
    pub seed: u64,
    /// `n` labels: the class of every labeled item, `MVNMF_UNLABELED` for the
    /// test items.
    pub labels: *const u32,
    /// `n` flags: 1 for the labeled items, 0 for the test items.
    pub labeled: *const u8,
    /// Items.
    pub n: usize,
    /// Rank of the encoding (its rows).
    pub k: usize,
}

/// Fit callback of `mvnmf_evaluate_protocol`: writes the `fit->k × fit->n`
/// encoding (column-major) into `v`; a nonzero return stops the protocol
/// (`MVNMF_STATUS_CANCELLED`, outputs untouched).
pub type mvnmf_protocol_fit_fn = Option<
    unsafe extern "C" fn(fit: *const mvnmf_protocol_fit, v: *mut f64, user: *mut c_void) -> c_int,
>;

cparams! {
    /// Options of `mvnmf_cross_validate`; defaults from `mvnmf_cv_params_default()`
    /// (3 folds, seed 0, kNN k = 9).
    pub struct mvnmf_cv_params => CvParams {
        /// Folds (at least 2, at most the number of labeled items).
        pub folds: usize,
        /// Seed of the folds' shuffle.
        pub seed: u64,
        /// The classifier that scores a held-out fold.
        pub knn: mvnmf_knn_params,
    };
    /// The default cross-validation: 3 folds, seed 0, kNN k = 9.
    fn mvnmf_cv_params_default;
}

/// What `mvnmf_cross_validate` asks its fit callback for: the `k × n`
/// encoding of all items for one candidate, from the labels of every fold
/// but one.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mvnmf_cv_fit {
    /// The candidate, `0 .. n_candidates - 1`.
    pub candidate: usize,
    /// Its `n_params` values (row `candidate` of the grid; NULL when
    /// `n_params = 0`).
    pub params: *const f64,
    /// Values per candidate.
    pub n_params: usize,
    /// The held-out fold, `0 .. folds - 1`.
    pub fold: usize,
    /// `n` labels the fit may use: `MVNMF_UNLABELED` for the held-out fold and
    /// for every item unlabeled to begin with.
    pub labels: *const u32,
    /// Items.
    pub n: usize,
    /// Rank of the encoding (its rows).
    pub k: usize,
}

/// Fit callback of `mvnmf_cross_validate`: writes the `fit->k × fit->n`
/// encoding (column-major) into `v`; a nonzero return stops the
/// cross-validation (`MVNMF_STATUS_CANCELLED`, outputs untouched).
pub type mvnmf_cv_fit_fn =
    Option<unsafe extern "C" fn(fit: *const mvnmf_cv_fit, v: *mut f64, user: *mut c_void) -> c_int>;
// The core's own structs, under their C names for Rust callers.
pub use crate::eval::{ScoreSummary as mvnmf_score_summary, SplitScores as mvnmf_split_scores};

/// Calls the caller's fit callback with `c` for the encoding `v`; a nonzero
/// return stops the run (`MVNMF_STATUS_CANCELLED`).
///
/// # Safety
/// `cb` and `user` are what the entry point's caller passed for this purpose.
unsafe fn call_fit<C>(
    cb: unsafe extern "C" fn(*const C, *mut f64, *mut c_void) -> c_int,
    c: &C,
    v: &mut [f64],
    user: *mut c_void,
) -> Result<(), Error> {
    // SAFETY: the caller supplied this function pointer for this purpose.
    match unsafe { cb(c, v.as_mut_ptr(), user) } {
        0 => Ok(()),
        _ => Err(Error::Cancelled),
    }
}

export! {
    /// Population mean and standard deviation of `x[n]` (numpy's `np.mean` and
    /// `np.std`, ddof = 0; two passes). No workspace. Errors: `n = 0`
    /// (`MVNMF_STATUS_ZERO_DIMENSION`), a non-finite value. Finite values give a
    /// finite mean and deviation up to `DBL_MAX` (the passes run scaled by a power
    /// of two when the largest magnitude is beyond 2^±500; see the Rust docs of
    /// `eval::mean_std`).
    fn mvnmf_mean_std(
        x: *const f64 = "`n` doubles",
        n: usize,
        mean, std: *mut f64 = "one double",
    ) {
        require!(mean, std);
        nonzero!(n);
        let (m, s) = eval::mean_std(slice(x, n)?)?;
        *mean = m;
        *std = s;
        Ok(mvnmf_status::Ok)
    };

    /// Mean ± population std over the splits of every fraction: `scores` holds
    /// `n_fractions × splits` entries, fraction-major (`scores[f * splits + s]`,
    /// as `mvnmf_evaluate_protocol` writes them); writes `summary[n_fractions]`.
    /// No workspace.
    fn mvnmf_summarize_scores(
        scores: *const SplitScores = "`n_fractions × splits` structs",
        n_fractions, splits: usize,
        summary: *mut ScoreSummary = "`n_fractions` structs",
    ) {
        nonzero!(n_fractions, splits);
        let s = slice_ab(scores, n_fractions, splits)?;
        let out = out_ab(summary, n_fractions, 1)?;
        // Two passes: every fraction is validated before anything is written.
        let mut one = [ScoreSummary::default()];
        for row in s.chunks_exact(splits) {
            eval::summarize_scores(row, splits, &mut one)?;
        }
        for (o, row) in out.iter_mut().zip(s.chunks_exact(splits)) {
            eval::summarize_scores(row, splits, &mut one)?;
            *o = one[0];
        }
        Ok(mvnmf_status::Ok)
    };

    /// Scores the `k × n` encoding `v` of one split as the papers do; the test
    /// items are those with `labeled[j] = 0`. kNN from the labeled items'
    /// encodings classifies the test items (accuracy; `k` reduced to the smallest
    /// labeled class's size when fewer than `k` items are labeled); k-means (its
    /// seed as given) clusters the test items into `min(C', n_test)` clusters,
    /// `C'` the classes present in `labels`: accuracy under the best one-to-one
    /// map and NMI. `labels[n]` are the true classes of all items
    /// (`< n_classes`); `labeled[n]` flags are 0 or 1. Writes `*scores`.
    /// Errors: no test item (`MVNMF_STATUS_ZERO_DIMENSION`), no labeled item
    /// (`MVNMF_STATUS_TOO_FEW_LABELED`), a flag not 0/1 (`BAD_PARAMETER`), ...
    fn mvnmf_evaluate_split(
        v: *const f64 = "`k × n` doubles",
        k, n: usize,
        labels: *const u32 = "`n` labels",
        n_classes: usize,
        labeled: *const u8 = "`n` bytes",
        params: *const mvnmf_eval_params,
        scores: *mut SplitScores = "one struct",
        ..work(work, work_bytes),
    ) {
        let p = read_params(params)?;
        require!(scores);
        nonzero!(k, n);
        let vs = mat_ab(v, k, n)?;
        let l = slice(labels, n)?;
        // A flag not 0/1: `BAD_PARAMETER` here (as documented), not `cmask`'s `BAD_LABEL`.
        let mask = cmask(labeled, n).map_err(|e| match e {
            Error::BadLabel => Error::BadParameter,
            e => e,
        })?;
        let w = work_of(work, work_bytes)?;
        let r = eval::evaluate_split(vs, l, n_classes, mask, &p, w)?;
        *scores = r;
        Ok(mvnmf_status::Ok)
    }
    /// for a `k × n` encoding
    /// (`params` may be NULL: defaults).
    workspace mvnmf_evaluate_split_workspace(
        k, n, n_classes: usize,
        params: *const mvnmf_eval_params,
    ) {
        let p = read_params(params)?;
        eval::evaluate_split_workspace(k, n, n_classes, &p)
    };

    /// The papers' evaluation protocol for one method (DESIGN §9). For every
    /// split `s` (seed `seed + s`) and every labeled fraction `fractions[f]`
    /// (each in `(0, 1)`), splits outer: a per-class stratified random subset is
    /// labeled (as `mvnmf_stratified_split`); `fit` writes the `k × n` encoding
    /// of all items from a `mvnmf_protocol_fit` that holds only the labeled
    /// items' classes (the test items' classes are never passed); the encoding is
    /// scored as by `mvnmf_evaluate_split`, its k-means seeded with the split's
    /// seed. `v` is the same buffer at every call and keeps the previous call's
    /// encoding (zeros first): a method that reads no labels may fit at
    /// `fraction_index == 0` only. Writes `scores[f * splits + s]`
    /// (`n_fractions × splits` entries; `mvnmf_summarize_scores` gives mean ±
    /// std) once all splits are done. `labels[n]` are every item's true class.
    /// A nonzero return of `fit` gives `MVNMF_STATUS_CANCELLED`; on any error
    /// `scores` is untouched.
    fn mvnmf_evaluate_protocol(
        labels: *const u32 = "`n` labels",
        n, n_classes: usize,
        fractions: *const f64 = "`n_fractions` doubles",
        n_fractions, k: usize,
        params: *const mvnmf_protocol_params,
        scores: *mut SplitScores = "`n_fractions × splits` structs",
        ..work(work, work_bytes),
        fit: mvnmf_protocol_fit_fn,
        user: *mut c_void,
    ) {
        let p = read_params(params)?;
        let cb = fit.ok_or(Error::NullPointer)?;
        nonzero!(n, k, n_fractions, p.splits);
        let l = slice(labels, n)?;
        let fr = slice(fractions, n_fractions)?;
        let out = out_ab(scores, n_fractions, p.splits)?;
        let w = work_of(work, work_bytes)?;
        eval::evaluate_protocol(l, n_classes, fr, k, &p, out, w, |r, v| {
            let c = mvnmf_protocol_fit {
                split: r.split,
                fraction_index: r.fraction_index,
                fraction: r.fraction,
                seed: r.seed,
                labels: r.labels.as_ptr(),
                labeled: r.labeled.as_ptr(),
                n: r.labels.len(),
                k,
            };
            call_fit(cb, &c, v, user)
        })?;
        Ok(mvnmf_status::Ok)
    }
    /// (`params` may be NULL).
    workspace mvnmf_evaluate_protocol_workspace(
        k, n, n_classes, n_fractions: usize,
        params: *const mvnmf_protocol_params,
    ) {
        let p = read_params(params)?;
        eval::evaluate_protocol_workspace(k, n, n_classes, n_fractions, &p)
    };

    /// k-fold cross-validation of `n_candidates` parameter vectors inside the
    /// labeled items (`labels[j] != MVNMF_UNLABELED`). `grid` holds
    /// `n_candidates × n_params` values, candidate-major (candidate `c`'s values
    /// at `grid[c * n_params]`; NULL when `n_params = 0`). The labeled items are
    /// dealt into `folds` folds stratified by class: each class's labeled items
    /// are shuffled (from `seed`) and dealt round-robin, the deal continuing from
    /// one class to the next, so a class's counts in two folds differ by at most
    /// one, a class smaller than `folds` lands in that many distinct folds, and
    /// the folds' sizes differ by at most one (`MVNMF_STATUS_TOO_FEW_LABELED` when
    /// fewer than `folds` items are labeled). For every candidate and fold, `fit`
    /// gets a `mvnmf_cv_fit` whose labels hide that fold and every originally
    /// unlabeled item (hidden labels never reach `fit`) and writes the `k × n`
    /// encoding; the held-out items are classified by kNN (`knn.k` reduced to the
    /// smallest class when the other folds hold fewer than `k` items) from the
    /// other labeled items. Writes `scores[n_candidates]` (mean accuracy over the
    /// folds) and `*best` (highest score, ties: the lowest index). A nonzero
    /// return of `fit` gives `MVNMF_STATUS_CANCELLED`; on any error the outputs
    /// are untouched.
    fn mvnmf_cross_validate(
        labels: *const u32 = "`n` labels",
        n, n_classes, k: usize,
        grid: *const f64 = "`n_candidates × n_params` doubles",
        n_candidates, n_params: usize,
        params: *const mvnmf_cv_params,
        scores: *mut f64 = "`n_candidates` doubles",
        best: *mut usize = "one `size_t`",
        ..work(work, work_bytes),
        fit: mvnmf_cv_fit_fn,
        user: *mut c_void,
    ) {
        let p = read_params(params)?;
        let cb = fit.ok_or(Error::NullPointer)?;
        require!(best);
        nonzero!(n, k, n_candidates);
        let l = slice(labels, n)?;
        let g = slice_ab(grid, n_candidates, n_params)?;
        let out = out_ab(scores, n_candidates, 1)?;
        let w = work_of(work, work_bytes)?;
        let b = eval::cross_validate(l, n_classes, k, g, n_params, &p, out, w, |r, v| {
            let c = mvnmf_cv_fit {
                candidate: r.candidate,
                params: if n_params == 0 {
                    core::ptr::null()
                } else {
                    r.params.as_ptr()
                },
                n_params,
                fold: r.fold,
                labels: r.labels.as_ptr(),
                n: r.labels.len(),
                k,
            };
            call_fit(cb, &c, v, user)
        })?;
        *best = b;
        Ok(mvnmf_status::Ok)
    }
    /// (`params` may be NULL).
    workspace mvnmf_cross_validate_workspace(
        k, n, n_classes, n_candidates: usize,
        params: *const mvnmf_cv_params,
    ) {
        let p = read_params(params)?;
        eval::cross_validate_workspace(k, n, n_classes, n_candidates, &p)
    };
}
