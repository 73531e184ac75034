//! Evaluation as the papers do it (DESIGN §9): stratified labeled/unlabeled
//! splits and kNN classification of encodings. (Clustering, retrieval and
//! multi-label metrics are being added under the evaluation issue.)
//!
//! Labels are `u32` class ids `0..C`, or [`UNLABELED`].

mod knn;
mod split;

pub use knn::{knn_predict, knn_predict_workspace, KnnParams, Metric};
pub use split::{stratified_split, stratified_split_workspace};

/// The label of an item whose class is unknown (`MVNMF_UNLABELED` in C).
pub const UNLABELED: u32 = u32::MAX;

/// Fraction of the items with `mask[j]` set (all items if `mask` is `None`)
/// whose prediction equals the truth. `NaN` when no item is counted.
pub fn accuracy(pred: &[u32], truth: &[u32], mask: Option<&[bool]>) -> f64 {
    let (mut hit, mut all) = (0usize, 0usize);
    for j in 0..pred.len().min(truth.len()) {
        if mask.is_none_or(|m| m.get(j).copied().unwrap_or(false)) {
            all += 1;
            hit += (pred[j] == truth[j]) as usize;
        }
    }
    hit as f64 / all as f64
}
