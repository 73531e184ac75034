//! The C ABI of the evaluation module (`crate::eval`, DESIGN §9).
//!
//! Same conventions as the rest of the C ABI (see `ffi/mod.rs`): every pointer
//! is checked, every argument validated before any output is written (on error
//! the outputs are untouched), workspace queries give bytes. Matrices are
//! contiguous column-major (`rows × cols`, items are columns). Labels are
//! `uint32_t` class ids, `MVNMF_UNLABELED` for an unknown class; flags
//! (labeled masks, relevance, multi-label targets and decisions) are `uint8_t`
//! 0 or 1. Every routine that reads data (features, costs, scores) has an
//! `_f32` twin on `float` data (`export!`, `ffi/declare.rs`); labels, flags
//! and the results it writes stay as in the double routine.

use core::ffi::{c_int, c_void};

use super::similarity::cmask;
use super::util::*;
use crate::error::Error;
use crate::eval::{self, KMeansParams, KnnParams, Metric, MultilabelScores, NmiNorm};

/// The label of an item whose class is unknown (`uint32_t`, all bits set).
pub const MVNMF_UNLABELED: u32 = u32::MAX;
/// `mvnmf_knn_params.metric`: squared Euclidean distance.
pub const MVNMF_METRIC_EUCLIDEAN: u32 = 0;
/// `mvnmf_knn_params.metric`: cosine distance `1 − cos`.
pub const MVNMF_METRIC_COSINE: u32 = 1;
/// `mvnmf_nmi` normalisation: `max(H(C), H(C'))` (the papers', seed 003 eq. 43).
pub const MVNMF_NMI_MAX: u32 = 0;
/// `mvnmf_nmi` normalisation: `(H(C) + H(C')) / 2` (scikit-learn's default).
pub const MVNMF_NMI_ARITHMETIC: u32 = 1;
/// `mvnmf_nmi` normalisation: `sqrt(H(C) H(C'))`.
pub const MVNMF_NMI_GEOMETRIC: u32 = 2;
/// `mvnmf_nmi` normalisation: `min(H(C), H(C'))`.
pub const MVNMF_NMI_MIN: u32 = 3;

cparams! {
    /// Options of `mvnmf_knn_predict`; defaults from `mvnmf_knn_params_default()`.
    pub struct mvnmf_knn_params => KnnParams {
        /// Neighbours (default 9).
        pub k: usize,
        /// `MVNMF_METRIC_EUCLIDEAN` (default) or `MVNMF_METRIC_COSINE`.
        pub metric: u32,
    } check knn_check;
}

cparams! {
    /// Options of `mvnmf_kmeans`; defaults from `mvnmf_kmeans_params_default()`.
    pub struct mvnmf_kmeans_params => KMeansParams {
        /// Seeded runs, the lowest inertia is kept (default 10; at least 1).
        pub restarts: u32,
        /// Lloyd iterations per run at most (default 300).
        pub max_iter: u32,
        /// Stop when the summed squared centroid shift is at most `tol` times the
        /// mean per-feature variance (default 1e-4; 0: until assignments are stable).
        pub tol: f64,
        /// Seed (default 0).
        pub seed: u64,
    } validate;
}

/// What `mvnmf_kmeans` reports about the run it kept.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mvnmf_kmeans_report {
    /// Sum of squared distances of the items to their centroids.
    pub inertia: f64,
    /// Lloyd iterations of the kept run.
    pub iterations: u32,
    /// 1 when the kept run met its stopping rule, 0 when it hit `max_iter`.
    pub converged: u32,
    /// The kept run (`0 .. restarts-1`).
    pub best_restart: u32,
    /// Empty clusters re-seeded in the kept run.
    pub reseeded: u32,
}

pub use crate::eval::MultilabelScores as mvnmf_multilabel_scores; // its C name

c_enum!(Metric { MVNMF_METRIC_EUCLIDEAN => Euclidean, MVNMF_METRIC_COSINE => Cosine });

/// `k ≥ 1` (the only check beyond the metric's code).
fn knn_check(p: &KnnParams) -> Result<(), Error> {
    if p.k == 0 {
        return Err(Error::BadParameter);
    }
    Ok(())
}

c_enum!(NmiNorm {
    MVNMF_NMI_MAX => Max,
    MVNMF_NMI_ARITHMETIC => Arithmetic,
    MVNMF_NMI_GEOMETRIC => Geometric,
    MVNMF_NMI_MIN => Min,
});

/// An optional 11-value output.
pub(super) unsafe fn pr11_out<'a>(p: *mut f64) -> Option<&'a mut [f64; 11]> {
    c_unsafe!({
        if p.is_null() {
            None
        } else {
            Some(&mut *p.cast::<[f64; 11]>())
        }
    })
}

// ---------------------------------------------------------------- protocol

/// The shape rule of `mvnmf_stratified_split`, shared with its query: `n ≥ 1`
/// labels (and flags) that fit in memory.
pub(super) fn split_dims(n: usize) -> Result<(), Error> {
    nonzero!(n);
    elems::<u32>(n, 1).map(|_| ())
}

export! {
    /// Per-class stratified random split: in every class, `round(fraction·n_c)`
    /// items (at least one when `fraction > 0`) are marked labeled, chosen from
    /// `seed`. `labels[n]` are classes `< n_classes`; writes `labeled[n]`
    /// (1 = labeled, 0 = not). `0 <= fraction <= 1`.
    fn mvnmf_stratified_split(
        labels: *const u32 = "`n` labels",
        n, n_classes: usize,
        fraction: f64,
        seed: u64,
        labeled: *mut u8 = "`n` bytes",
        ..work(work, work_bytes),
    ) {
        split_dims(n)?;
        let l = slice(labels, n)?;
        let out = slice_mut(labeled, n)?;
        let w = work_of(work, work_bytes)?;
        eval::split_into(l, n_classes, fraction, seed, out, 1u8, 0u8, w)?;
        Ok(mvnmf_status::Ok)
    }
    /// for `n` items.
    workspace mvnmf_stratified_split_workspace(n: usize) {
        split_dims(n)?;
        eval::stratified_split_workspace(n)
    };
}

/// The default kNN options (k = 9, Euclidean).
#[no_mangle]
pub extern "C" fn mvnmf_knn_params_default() -> mvnmf_knn_params {
    CField::from_rust(&KnnParams::default())
}

export! {
    /// kNN classification: predicts `pred[q]` for every column of `query`
    /// (`d × n_query`) from its `k` nearest columns of `reference` (`d × n_ref`)
    /// whose `ref_labels` are not `MVNMF_UNLABELED`. Neighbours are ordered by
    /// (distance, reference index); among classes with the most votes the smallest
    /// id wins. `reference` and `query` may be the same matrix. Needs at least `k`
    /// labeled reference items (`MVNMF_STATUS_TOO_FEW_LABELED`).
    /// Cost `O(n_query · n_ref · d)`.
    fn mvnmf_knn_predict / mvnmf_knn_predict_f32(
        reference: *const T = "`d × n_ref`",
        d, n_ref: usize,
        ref_labels: *const u32 = "`n_ref` labels",
        query: *const T = "`d × n_query`",
        n_query, n_classes: usize,
        params: *const mvnmf_knn_params,
        pred: *mut u32 = "`n_query` labels",
        ..work(work, work_bytes),
    ) {
        let p = read_params(params)?;
        nonzero!(d, n_ref, n_query);
        let r = mat_ab(reference, d, n_ref)?;
        let q = mat_ab(query, d, n_query)?;
        let l = slice(ref_labels, n_ref)?;
        let out = slice_mut(pred, n_query)?;
        let w = work_of(work, work_bytes)?;
        eval::knn_predict(r, l, q, n_classes, &p, out, w)?;
        Ok(mvnmf_status::Ok)
    }
    /// (`params` may be NULL: defaults).
    workspace mvnmf_knn_predict_workspace(
        n_classes: usize,
        params: *const mvnmf_knn_params,
    ) {
        let p = read_params(params)?;
        eval::knn_predict_workspace(&p, n_classes)
    };
}

export! {
    /// Classification accuracy: the fraction of the items with `mask[j] = 1` (all
    /// items when `mask` is NULL) whose `pred[j]` equals `truth[j]`; NaN when no
    /// item is counted. `mask` values must be 0 or 1 (`MVNMF_STATUS_BAD_LABEL`).
    fn mvnmf_accuracy(
        pred, truth: *const u32 = "`n` labels",
        n: usize,
        mask: *const u8 = "`n` bytes",
        accuracy: *mut f64 = "one double",
    ) {
        require!(accuracy);
        let (p, t) = pair_ab(pred, truth, n, 1)?;
        let m = (!mask.is_null()).then(|| cmask(mask, n)).transpose()?;
        *accuracy = eval::accuracy(p, t, m);
        Ok(mvnmf_status::Ok)
    };
}

// -------------------------------------------------------------- clustering

/// The default k-means options (10 restarts, 300 iterations, tol 1e-4, seed 0).
#[no_mangle]
pub extern "C" fn mvnmf_kmeans_params_default() -> mvnmf_kmeans_params {
    CField::from_rust(&KMeansParams::default())
}

/// The shape and option rules of `mvnmf_kmeans`, shared with its query (and
/// its workspace bytes): no zero dimension, `x` (`d × n`) addressable, then
/// the Rust checks (`k ≤ n`, the options). The centroids (`d × k`, `k ≤ n`)
/// are then addressable too, so the status never depends on whether they
/// were asked for.
pub(super) fn kmeans_dims<T>(
    d: usize,
    n: usize,
    k: usize,
    p: &KMeansParams,
) -> Result<usize, Error> {
    nonzero!(d, n, k);
    elems::<T>(d, n)?;
    eval::kmeans_workspace(d, n, k, p)
}

export! {
    /// k-means of the `n` columns of `x` (`d × n`) into `k <= n` clusters: greedy
    /// k-means++ seeding, Lloyd iterations, `restarts` seeded runs, the lowest
    /// inertia kept; deterministic for a seed. Empty clusters are re-seeded with
    /// the item farthest from its centroid. Writes `assign[n]` (cluster ids
    /// `0..k-1`), `centroids` (`d × k`, may be NULL) and `report` (may be NULL).
    /// Cost `O(n·k·d)` per iteration (distances accumulated in double).
    fn mvnmf_kmeans / mvnmf_kmeans_f32(
        x: *const T = "`d × n`",
        d, n, k: usize,
        params: *const mvnmf_kmeans_params,
        assign: *mut u32 = "`n` labels",
        centroids: *mut T = "`d × k`",
        ..work(work, work_bytes),
        report: *mut mvnmf_kmeans_report,
    ) {
        let p = read_params(params)?;
        kmeans_dims::<T>(d, n, k, &p)?;
        let xs = mat_ab(x, d, n)?;
        let a = out_ab(assign, n, 1)?;
        // `d × k` fits: `kmeans_dims` checked `d × n` and `k ≤ n`.
        let c = opt_slice_mut(centroids, elems::<T>(d, k)?)?;
        let w = work_of(work, work_bytes)?;
        let r = eval::kmeans(xs, k, &p, a, c, w)?;
        put_opt(report, kmeans_report_to_c(&r));
        Ok(mvnmf_status::Ok)
    }
    /// (`params` may be NULL: defaults).
    workspace mvnmf_kmeans_workspace / mvnmf_kmeans_f32_workspace(
        d, n, k: usize,
        params: *const mvnmf_kmeans_params,
    ) {
        let p = read_params(params)?;
        kmeans_dims::<T>(d, n, k, &p)
    };
}

/// The C form of a k-means report.
pub(super) fn kmeans_report_to_c(r: &eval::KMeansReport) -> mvnmf_kmeans_report {
    mvnmf_kmeans_report {
        inertia: r.inertia,
        iterations: r.iterations,
        converged: r.converged as u32,
        best_restart: r.best_restart,
        reseeded: r.reseeded,
    }
}

export! {
    /// Linear assignment (Kuhn–Munkres): matches `min(rows, cols)` rows of the
    /// `rows × cols` cost matrix to distinct columns with minimal total cost
    /// (`maximize = 0`) or maximal (`maximize != 0`). Writes `row_to_col[rows]`
    /// (`SIZE_MAX` from <stdint.h> for the rows left over when `rows > cols`) and, if not
    /// NULL, `*total` (double in both precisions). Costs must be finite and at most
    /// `DBL_MAX / (max(rows, cols) + 1)` in magnitude, so that the total is finite
    /// (`MVNMF_STATUS_NON_FINITE_INPUT` otherwise). `O(r²c)`, `r = min`, `c = max`.
    fn mvnmf_assignment / mvnmf_assignment_f32(
        cost: *const T = "`rows × cols`",
        rows, cols: usize,
        maximize: c_int,
        row_to_col: *mut usize = "`rows` indices",
        total: *mut f64 = "one double",
        ..work(work, work_bytes),
    ) {
        nonzero!(rows, cols);
        let c = mat_ab(cost, rows, cols)?;
        let out = out_ab(row_to_col, rows, 1)?;
        let w = work_of(work, work_bytes)?;
        let t = eval::assignment(c, maximize != 0, out, w)?;
        put_opt(total, t);
        Ok(mvnmf_status::Ok)
    }
    /// for a `rows × cols` cost matrix.
    workspace mvnmf_assignment_workspace(rows: usize, cols: usize) {
        eval::assignment_workspace(rows, cols)
    };
}

export! {
    /// Clustering accuracy under the best one-to-one map between the clusters
    /// `pred[j] < n_clusters` and the classes `truth[j] < n_classes` (Kuhn–Munkres
    /// on the contingency table; surplus clusters or classes count as wrong).
    fn mvnmf_clustering_accuracy(
        truth, pred: *const u32 = "`n` labels",
        n, n_classes, n_clusters: usize,
        accuracy: *mut f64 = "one double",
        ..work(work, work_bytes),
    ) {
        require!(accuracy);
        let (t, p) = pair_ab(truth, pred, n, 1)?;
        let w = work_of(work, work_bytes)?;
        *accuracy = eval::clustering_accuracy(t, p, n_classes, n_clusters, w)?;
        Ok(mvnmf_status::Ok)
    }
    /// for `n_classes` classes and `n_clusters` clusters.
    workspace mvnmf_clustering_accuracy_workspace(n_classes: usize, n_clusters: usize) {
        eval::clustering_accuracy_workspace(n_classes, n_clusters)
    };

    /// Normalised mutual information between classes and clusters (natural logs),
    /// `I / norm(H(C), H(C'))` with `norm` one of `MVNMF_NMI_MAX` (the papers'),
    /// `MVNMF_NMI_ARITHMETIC` (scikit-learn's default), `MVNMF_NMI_GEOMETRIC`,
    /// `MVNMF_NMI_MIN`. Matches scikit-learn's `normalized_mutual_info_score`,
    /// limit cases included.
    fn mvnmf_nmi(
        truth, pred: *const u32 = "`n` labels",
        n, n_classes, n_clusters: usize,
        norm: u32,
        nmi: *mut f64 = "one double",
        ..work(work, work_bytes),
    ) {
        require!(nmi);
        let nm: NmiNorm = CField::to_rust(&norm)?;
        let (t, p) = pair_ab(truth, pred, n, 1)?;
        let w = work_of(work, work_bytes)?;
        *nmi = eval::nmi(t, p, n_classes, n_clusters, nm, w)?;
        Ok(mvnmf_status::Ok)
    }
    /// for `n_classes` classes and `n_clusters` clusters.
    workspace mvnmf_nmi_workspace(n_classes: usize, n_clusters: usize) {
        eval::nmi_workspace(n_classes, n_clusters)
    };
}

// --------------------------------------------------------------- retrieval

export! {
    /// The indices of the `top` highest `scores` (ties: lower index first), best
    /// first, in `indices[top]`; `top <= n`. Partial selection, `O(n log top)`,
    /// no workspace.
    fn mvnmf_top_n / mvnmf_top_n_f32(
        scores: *const T = "`n`",
        n, top: usize,
        indices: *mut usize = "`top` indices",
    ) {
        nonzero!(n);
        let s = slice(scores, n)?;
        if top > n {
            return Err(Error::DimensionMismatch);
        }
        let out = slice_mut(indices, top)?;
        eval::top_n(s, out)?;
        Ok(mvnmf_status::Ok)
    };
}

export! {
    /// Retrieval metrics of one query from the scores of all `n_items` items
    /// (higher = better; ties ranked by lower index) and their `relevant` flags:
    /// `*average_precision`, `precision_at[i]` = P@`cutoffs[i]` (`n_cutoffs`
    /// values, each cutoff >= 1; P@N divides by N) and, if `pr11` is not NULL, the
    /// 11-point interpolated precision at recall 0, 0.1, ..., 1. AP = 0 when no
    /// item is relevant. `O(n log R)` for R relevant items, no full sort.
    fn mvnmf_query_metrics / mvnmf_query_metrics_f32(
        scores: *const T = "`n_items`",
        relevant: *const u8 = "`n_items` bytes",
        n_items: usize,
        cutoffs: *const usize = "`n_cutoffs` cutoffs",
        n_cutoffs: usize,
        average_precision: *mut f64 = "one double",
        precision_at: *mut f64 = "`n_cutoffs` doubles",
        pr11: *mut f64 = "11 doubles",
        ..work(work, work_bytes),
    ) {
        require!(average_precision);
        let (s, r) = pair_ab(scores, relevant, n_items, 1)?;
        let c = slice(cutoffs, n_cutoffs)?;
        let pa = slice_mut(precision_at, n_cutoffs)?;
        let w = work_of(work, work_bytes)?;
        *average_precision = eval::query_metrics(s, r, c, pa, pr11_out(pr11), w)?;
        Ok(mvnmf_status::Ok)
    }
    /// and `mvnmf_retrieval_metrics` (and their `_f32` twins) for `n_items`
    /// items.
    workspace mvnmf_query_metrics_workspace(n_items: usize) {
        eval::query_metrics_workspace(n_items)
    };
}

export! {
    /// Retrieval metrics over `n_queries` queries: column `q` of `scores` and of
    /// `relevant` (both `n_items × n_queries`) is query `q`. Writes `*map` (mean
    /// AP; queries without relevant items count as 0), the per-query APs
    /// (`average_precision[n_queries]`, may be NULL), the mean P@`cutoffs[i]` in
    /// `mean_precision_at[n_cutoffs]` and the mean 11-point curve (`mean_pr11[11]`,
    /// may be NULL). Workspace: `mvnmf_query_metrics_workspace(n_items)`.
    fn mvnmf_retrieval_metrics / mvnmf_retrieval_metrics_f32(
        scores: *const T = "`n_items × n_queries`",
        relevant: *const u8 = "`n_items × n_queries` bytes",
        n_items, n_queries: usize,
        cutoffs: *const usize = "`n_cutoffs` cutoffs",
        n_cutoffs: usize,
        average_precision: *mut f64 = "`n_queries` doubles",
        map: *mut f64 = "one double",
        mean_precision_at: *mut f64 = "`n_cutoffs` doubles",
        mean_pr11: *mut f64 = "11 doubles",
        ..work(work, work_bytes),
    ) {
        require!(map);
        let (s, r) = mat_pair(scores, relevant, n_items, n_queries)?;
        let c = slice(cutoffs, n_cutoffs)?;
        let pa = slice_mut(mean_precision_at, n_cutoffs)?;
        let ap = opt_slice_mut(average_precision, n_queries)?;
        let w = work_of(work, work_bytes)?;
        *map = eval::retrieval_metrics(s, r, c, ap, pa, pr11_out(mean_pr11), w)?;
        Ok(mvnmf_status::Ok)
    };
}

export! {
    /// Retrieval metrics of one ranked list: `relevant[p]` flags the item at rank
    /// `p + 1` (`length` entries), `n_relevant` is the total number of relevant
    /// items (at least those in the list; more for a truncated top-N list). Same
    /// outputs as `mvnmf_query_metrics`; no workspace.
    fn mvnmf_ranked_list_metrics(
        relevant: *const u8 = "`length` bytes",
        length, n_relevant: usize,
        cutoffs: *const usize = "`n_cutoffs` cutoffs",
        n_cutoffs: usize,
        average_precision: *mut f64 = "one double",
        precision_at: *mut f64 = "`n_cutoffs` doubles",
        pr11: *mut f64 = "11 doubles",
    ) {
        require!(average_precision);
        let r = slice(relevant, length)?;
        let c = slice(cutoffs, n_cutoffs)?;
        let pa = slice_mut(precision_at, n_cutoffs)?;
        *average_precision = eval::ranked_list_metrics(r, n_relevant, c, pa, pr11_out(pr11))?;
        Ok(mvnmf_status::Ok)
    };
}

// ------------------------------------------------------------- multi-label

export! {
    /// Macro-F1, Micro-F1 and Hamming loss of the decisions `pred` against
    /// `truth`, both `n_labels × n_items` 0/1 (column-major: item j's labels are
    /// `truth[j*n_labels ...]`). No workspace.
    fn mvnmf_multilabel_metrics(
        truth, pred: *const u8 = "`n_labels × n_items` bytes",
        n_labels, n_items: usize,
        scores: *mut MultilabelScores = "one struct",
    ) {
        require!(scores);
        let (t, p) = mat_pair(truth, pred, n_labels, n_items)?;
        *scores = eval::multilabel_scores(t, p)?;
        Ok(mvnmf_status::Ok)
    };

    /// Per-label AUROC of `scores` against `truth` (both `n_labels × n_items`),
    /// ties by average rank as scikit-learn's `roc_auc_score`, and their mean in
    /// `*mean`. A label whose truth is constant has no AUROC: NaN in `per_label`
    /// (`n_labels` values, may be NULL) and left out of the mean;
    /// `*labels_scored` (may be NULL) says how many were averaged (`*mean` is NaN
    /// when none). `O(n_labels · n_items log n_items)`.
    fn mvnmf_average_auroc / mvnmf_average_auroc_f32(
        truth: *const u8 = "`n_labels × n_items` bytes",
        scores: *const T = "`n_labels × n_items`",
        n_labels, n_items: usize,
        per_label: *mut f64 = "`n_labels` doubles",
        mean: *mut f64 = "one double",
        labels_scored: *mut usize = "one `size_t`",
        ..work(work, work_bytes),
    ) {
        require!(mean);
        let (t, s) = mat_pair(truth, scores, n_labels, n_items)?;
        let pl = opt_slice_mut(per_label, n_labels)?;
        let w = work_of(work, work_bytes)?;
        let r = eval::average_auroc(t, s, pl, w)?;
        *mean = r.mean;
        put_opt(labels_scored, r.labels_scored);
        Ok(mvnmf_status::Ok)
    }
    /// for `n_items` items.
    workspace mvnmf_average_auroc_workspace(n_items: usize) {
        eval::average_auroc_workspace(n_items)
    };
}
