//! Multi-label metrics (DESIGN §8, seed 002): Macro-F1, Micro-F1, Hamming
//! loss and average AUROC.
//!
//! Targets are a `c × n` matrix (labels × items, column-major, any strides) of
//! `u8` 0/1 flags (anything else is [`Error::BadLabel`]); decisions are the
//! same shape, scores are `c × n` reals (higher = more likely).

use crate::error::Error;
use crate::linalg::mat::MatRef;
use crate::linalg::real::Real;
use crate::linalg::select::sort_by;
use crate::linalg::set_at;
use crate::work::{Stack, WorkReq};

/// Decision metrics of a multi-label prediction (`mvnmf_multilabel_metrics`).
// `repr(C)`: the C ABI's `mvnmf_multilabel_scores` (renamed in cbindgen.toml), these docs
// included: a change here changes the C ABI.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct MultilabelScores {
    /// Mean over labels of `F1_l = 2TP_l / (2TP_l + FP_l + FN_l)`; a label
    /// with no true and no predicted positive has `F1 = 0` (scikit-learn's
    /// `f1_score(average="macro")` with its default `zero_division`).
    pub macro_f1: f64,
    /// `2ΣTP / (2ΣTP + ΣFP + ΣFN)` over all labels and items (0 when the
    /// denominator is 0).
    pub micro_f1: f64,
    /// The fraction of the `n_labels · n_items` label decisions that are wrong.
    pub hamming_loss: f64,
}

fn check_flags(m: MatRef<'_, u8>) -> Result<(), Error> {
    for j in 0..m.cols() {
        for l in 0..m.rows() {
            if m.at(l, j) > 1 {
                return Err(Error::BadLabel);
            }
        }
    }
    Ok(())
}

/// Macro-F1, Micro-F1 and Hamming loss of the decisions `pred` against
/// `truth` (both `c × n` 0/1). Cost `O(c·n)`, no workspace.
pub fn multilabel_scores(
    truth: MatRef<'_, u8>,
    pred: MatRef<'_, u8>,
) -> Result<MultilabelScores, Error> {
    let (c, n) = (truth.rows(), truth.cols());
    if c == 0 || n == 0 {
        return Err(Error::ZeroDimension);
    }
    if pred.rows() != c || pred.cols() != n {
        return Err(Error::DimensionMismatch);
    }
    check_flags(truth)?;
    check_flags(pred)?;
    let (mut tp_all, mut err_all, mut f1_sum) = (0usize, 0usize, 0.0);
    for l in 0..c {
        let (mut tp, mut err) = (0usize, 0usize);
        for j in 0..n {
            let (t, p) = (truth.at(l, j), pred.at(l, j));
            tp += (t & p) as usize;
            err += (t ^ p) as usize;
        }
        if tp + err > 0 {
            f1_sum += 2.0 * tp as f64 / (2 * tp + err) as f64;
        }
        tp_all += tp;
        err_all += err;
    }
    let micro = if tp_all + err_all > 0 {
        2.0 * tp_all as f64 / (2 * tp_all + err_all) as f64
    } else {
        0.0
    };
    Ok(MultilabelScores {
        macro_f1: f1_sum / c as f64,
        micro_f1: micro,
        hamming_loss: err_all as f64 / (c as f64 * n as f64),
    })
}

/// The mean AUROC over labels and how many labels it averages.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AurocSummary {
    /// Mean AUROC over the labels that have both a positive and a negative
    /// item (NaN when none has).
    pub mean: f64,
    /// Labels averaged.
    pub labels_scored: usize,
}

/// Workspace bytes of [`average_auroc`] for `n` items.
pub fn average_auroc_workspace(n_items: usize) -> Result<usize, Error> {
    if n_items == 0 {
        return Err(Error::ZeroDimension);
    }
    WorkReq::new::<usize>(n_items).bytes()
}

/// Area under the ROC curve of every label (row) of `scores` against `truth`
/// (`c × n`), and their mean ("average AUROC", macro over labels).
///
/// Ties are handled as scikit-learn's `roc_auc_score` does (its trapezoids
/// over tied thresholds equal the Mann–Whitney statistic with average ranks):
/// `AUC = (Σ_{positives} rank − P(P+1)/2) / (P·Q)` with `P` positives, `Q`
/// negatives and tied scores sharing their average rank. A label whose truth
/// is constant has no AUROC: `per_label[l]` (if given, `c` values) is NaN and
/// the label is left out of the mean (scikit-learn raises an error instead).
/// Cost `O(c · n log n)`; workspace `n` indices.
pub fn average_auroc<T: Real>(
    truth: MatRef<'_, u8>,
    scores: MatRef<'_, T>,
    mut per_label: Option<&mut [f64]>,
    work: &mut [u8],
) -> Result<AurocSummary, Error> {
    let (c, n) = (truth.rows(), truth.cols());
    if c == 0 || n == 0 {
        return Err(Error::ZeroDimension);
    }
    if scores.rows() != c || scores.cols() != n || per_label.as_ref().is_some_and(|p| p.len() != c)
    {
        return Err(Error::DimensionMismatch);
    }
    check_flags(truth)?;
    for j in 0..n {
        for l in 0..c {
            if !scores.at(l, j).is_finite() {
                return Err(Error::NonFiniteInput);
            }
        }
    }
    WorkReq::new::<usize>(n).check(work.len())?;
    let mut st = Stack::new(work);
    let idx: &mut [usize] = st.take(n)?;
    let (mut sum, mut scored) = (0.0, 0usize);
    for l in 0..c {
        let pos = (0..n).filter(|&j| truth.at(l, j) == 1).count();
        let neg = n - pos;
        let auc = if pos == 0 || neg == 0 {
            f64::NAN
        } else {
            for (i, x) in idx.iter_mut().enumerate() {
                *x = i;
            }
            // Ascending scores; the order among equal scores does not matter (ties
            // share their average rank below).
            sort_by(idx, |&a, &b| scores.at(l, a) < scores.at(l, b));
            // Sum of the (average) ranks of the positives, ranks 1..n: one run of
            // equal scores at a time, ranks `i + 1 ..= e`.
            let mut rank_sum = 0.0;
            let mut i = 0;
            let mut rest = &idx[..];
            while let Some(&first) = rest.first() {
                let s = scores.at(l, first);
                let run = rest
                    .iter()
                    .take_while(|&&j| scores.at(l, j) == s)
                    .count()
                    .max(1);
                let (tie, after) = rest.split_at_checked(run).unwrap_or((rest, &[]));
                let e = i + tie.len();
                let avg = (i + 1 + e) as f64 / 2.0; // mean of ranks i+1 ..= e
                let p = tie.iter().filter(|&&j| truth.at(l, j) == 1).count();
                rank_sum += avg * p as f64;
                (i, rest) = (e, after);
            }
            let (pf, qf) = (pos as f64, neg as f64);
            (rank_sum - pf * (pf + 1.0) / 2.0) / (pf * qf)
        };
        if let Some(p) = per_label.as_deref_mut() {
            set_at(p, l, auc);
        }
        if !auc.is_nan() {
            sum += auc;
            scored += 1;
        }
    }
    Ok(AurocSummary {
        mean: if scored > 0 {
            sum / scored as f64
        } else {
            f64::NAN
        },
        labels_scored: scored,
    })
}
