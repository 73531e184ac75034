//! Evaluation as the papers do it (DESIGN §9), on caller buffers, no allocation.
//!
//! * **Protocol:** [`stratified_split`] (per-class random labeled fraction),
//!   [`evaluate_protocol`] (splits over several seeds × labeled fractions, a
//!   fit callback, every split scored by [`evaluate_split`]: kNN accuracy,
//!   k-means ACC and NMI of the test items), [`summarize_scores`] and
//!   [`mean_std`] (mean ± population std), and [`cross_validate`] (k-fold
//!   cross-validation of a grid of weights inside the labeled items, hidden
//!   labels never passed to the fit).
//! * **Classification:** [`knn_predict`] (k = 9 by default) and [`accuracy`].
//! * **Clustering:** [`kmeans()`] (greedy k-means++, Lloyd, seeded restarts,
//!   best inertia), [`clustering_accuracy`] under the best one-to-one map
//!   ([`assignment()`], Kuhn–Munkres, rectangular allowed) and [`nmi`] with an
//!   explicit normalisation ([`NmiNorm`]; the papers use `max`).
//! * **Retrieval:** [`top_n`] (partial selection), [`query_metrics`] and
//!   [`retrieval_metrics`] (AP / MAP, P@N, 11-point interpolated
//!   precision–recall) from scores, [`ranked_list_metrics`] from a ranked list.
//! * **Multi-label:** [`multilabel_scores`] (Macro-F1, Micro-F1, Hamming loss)
//!   and [`average_auroc`].
//!
//! Labels are `u32` class ids `0..C`, or [`UNLABELED`]; relevance and
//! multi-label targets are `u8` 0/1 flags. Every routine that needs scratch
//! has a `*_workspace` twin giving the bytes. The test suite checks every
//! metric against hand-computed cases and against scikit-learn
//! (`scripts/make_eval_fixtures.py`) to 1e-12.

mod assignment;
mod cluster;
mod cv;
mod knn;
mod multilabel;
mod protocol;
mod retrieval;
mod split;

pub use crate::similarity::kmeans::{kmeans, kmeans_workspace, KMeansParams, KMeansReport};
pub use assignment::{assignment, assignment_workspace, UNASSIGNED};
pub use cluster::{
    clustering_accuracy, clustering_accuracy_workspace, nmi, nmi_workspace, NmiNorm,
};
pub use cv::{cross_validate, cross_validate_workspace, CvFit, CvParams};
pub use knn::{knn_predict, knn_predict_workspace, KnnParams, Metric};
pub use multilabel::{
    average_auroc, average_auroc_workspace, multilabel_scores, AurocSummary, MultilabelScores,
};
pub use protocol::{
    evaluate_protocol, evaluate_protocol_workspace, evaluate_split, evaluate_split_workspace,
    knn_k_for, mean_std, summarize_scores, EvalParams, ProtocolFit, ProtocolParams, ScoreSummary,
    SplitScores,
};
pub use retrieval::{
    query_metrics, query_metrics_workspace, ranked_list_metrics, retrieval_metrics, top_n,
};
pub use split::{stratified_split, stratified_split_workspace};

pub(crate) use split::split_into;

use crate::linalg::mat::MatRef;
use crate::linalg::real::Real;

/// `Σ_i (a(i, ja) − b(i, jb))²` in `f64` over the rows of two matrices with the
/// same row count. Columns with row stride 1 (the usual layout) take a slice
/// path with four partial sums, which the compiler vectorises.
#[inline]
pub(crate) fn sq_dist<T: Real>(a: MatRef<'_, T>, ja: usize, b: MatRef<'_, T>, jb: usize) -> f64 {
    let d = a.rows();
    if a.rs() == 1 && b.rs() == 1 {
        // Inside both matrices for columns `ja < a.cols()`, `jb < b.cols()`.
        let (sa, sb) = (ja * a.cs(), jb * b.cs());
        let (Some(x), Some(y)) = (a.data().get(sa..sa + d), b.data().get(sb..sb + d)) else {
            return f64::NAN;
        };
        let mut acc = [0.0f64; 4];
        let (cx, cy) = (x.chunks_exact(4), y.chunks_exact(4));
        let (rx, ry) = (cx.remainder(), cy.remainder());
        for (p, q) in cx.zip(cy) {
            for l in 0..4 {
                let t = p[l].to_f64() - q[l].to_f64();
                acc[l] += t * t;
            }
        }
        let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
        for (p, q) in rx.iter().zip(ry) {
            let t = p.to_f64() - q.to_f64();
            s += t * t;
        }
        s
    } else {
        (0..d)
            .map(|i| {
                let t = a.at(i, ja).to_f64() - b.at(i, jb).to_f64();
                t * t
            })
            .sum()
    }
}

pub use crate::data::UNLABELED;

/// Fraction of the items with `mask[j]` set (all items if `mask` is `None`)
/// whose prediction equals the truth. `NaN` when no item is counted.
pub fn accuracy(pred: &[u32], truth: &[u32], mask: Option<&[bool]>) -> f64 {
    let (mut hit, mut all) = (0usize, 0usize);
    for (j, (p, t)) in pred.iter().zip(truth).enumerate() {
        if mask.is_none_or(|m| m.get(j).copied().unwrap_or(false)) {
            all += 1;
            hit += (p == t) as usize;
        }
    }
    hit as f64 / all as f64
}
