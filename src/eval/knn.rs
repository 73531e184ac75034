//! k-nearest-neighbour classification of encodings (DESIGN §9: k = 9).

use crate::error::Error;
use crate::linalg::mat::MatRef;
use crate::linalg::real::Real;
use crate::linalg::{at, set_at};
use crate::work::{Stack, WorkReq};

use super::UNLABELED;

/// Distance used to rank neighbours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// `‖a − b‖²` (computed as a sum of squared differences, not by the
    /// `‖a‖² + ‖b‖² − 2aᵀb` shortcut, so equal points tie exactly).
    Euclidean,
    /// `1 − aᵀb / (‖a‖‖b‖)` (a zero vector is at distance 1 from everything).
    Cosine,
}

/// Options of [`knn_predict`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KnnParams {
    /// Neighbours (default 9).
    pub k: usize,
    /// Distance (default Euclidean).
    pub metric: Metric,
}

impl Default for KnnParams {
    fn default() -> Self {
        KnnParams {
            k: 9,
            metric: Metric::Euclidean,
        }
    }
}

/// Workspace bytes of [`knn_predict`].
pub fn knn_predict_workspace(params: &KnnParams, n_classes: usize) -> Result<usize, Error> {
    // The checks of [`knn_predict`] on what the query takes.
    if n_classes == 0 {
        return Err(Error::ZeroDimension);
    }
    if params.k == 0 {
        return Err(Error::BadParameter);
    }
    WorkReq::all_of(&[
        WorkReq::new::<f64>(params.k),
        WorkReq::new::<usize>(params.k),
        WorkReq::new::<usize>(n_classes),
    ])
    .bytes()
}

/// Predicts a class for every column of `query` from its `k` nearest labeled
/// columns of `reference` (columns whose label is [`UNLABELED`] are skipped).
///
/// Ties are deterministic: neighbours are ordered by (distance, reference
/// index), and among classes with the most votes the smallest class id wins
/// (scikit-learn's `KNeighborsClassifier` rule). Both matrices are `d × ·`
/// (items are columns, any strides). Writes `out[q]` for every query.
/// Cost `O(Q · N_ref · d)`; workspace `O(k + C)`.
///
/// Errors: `k = 0` or no labeled reference column ([`Error::TooFewLabeled`]
/// when fewer than `k` are labeled), a label `≥ n_classes` ([`Error::BadLabel`]),
/// mismatched dimensions, non-finite values.
#[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
pub fn knn_predict<T: Real>(
    reference: MatRef<'_, T>,
    ref_labels: &[u32],
    query: MatRef<'_, T>,
    n_classes: usize,
    params: &KnnParams,
    out: &mut [u32],
    work: &mut [u8],
) -> Result<(), Error> {
    let (d, nref, nq) = (reference.rows(), reference.cols(), query.cols());
    let k = params.k;
    if d == 0 || nref == 0 || nq == 0 || n_classes == 0 {
        return Err(Error::ZeroDimension);
    }
    if query.rows() != d || ref_labels.len() != nref || out.len() != nq {
        return Err(Error::DimensionMismatch);
    }
    if k == 0 {
        return Err(Error::BadParameter);
    }
    let mut n_labeled = 0;
    for &l in ref_labels {
        if l != UNLABELED {
            if l as usize >= n_classes {
                return Err(Error::BadLabel);
            }
            n_labeled += 1;
        }
    }
    if n_labeled < k {
        return Err(Error::TooFewLabeled);
    }
    for m in [reference, query] {
        for j in 0..m.cols() {
            for i in 0..d {
                if !m.at(i, j).is_finite() {
                    return Err(Error::NonFiniteInput);
                }
            }
        }
    }
    let need = knn_predict_workspace(params, n_classes)?;
    if work.len() < need {
        return Err(Error::WorkspaceTooSmall);
    }
    let mut st = Stack::new(work);
    let best_d: &mut [f64] = st.take(k)?;
    let best_i: &mut [usize] = st.take(k)?;
    let votes: &mut [usize] = st.take(n_classes)?;
    let norm = |m: MatRef<'_, T>, j: usize| {
        libm::sqrt(
            (0..d)
                .map(|i| m.at(i, j).to_f64())
                .map(|x| x * x)
                .sum::<f64>(),
        )
    };

    for (q, out_q) in out.iter_mut().enumerate().take(nq) {
        let qn = if params.metric == Metric::Cosine {
            norm(query, q)
        } else {
            0.0
        };
        // `worst`: the k-th distance once `k` are kept (the bar a new item must pass).
        let (mut filled, mut worst) = (0, f64::INFINITY);
        for (r, &lr) in ref_labels.iter().enumerate().take(nref) {
            if lr == UNLABELED {
                continue;
            }
            let dist = match params.metric {
                Metric::Euclidean => super::sq_dist(query, q, reference, r),
                Metric::Cosine => {
                    let rn = norm(reference, r);
                    if qn == 0.0 || rn == 0.0 {
                        1.0
                    } else {
                        let dot: f64 = (0..d)
                            .map(|i| query.at(i, q).to_f64() * reference.at(i, r).to_f64())
                            .sum();
                        1.0 - dot / (qn * rn)
                    }
                }
            };
            // Insertion into the sorted list of the best `k` (distance, then index;
            // indices arrive in increasing order, so equal distances keep order).
            if filled < k || dist < worst {
                let mut pos = if filled < k { filled } else { k - 1 };
                while pos > 0 {
                    let (Some(&pd), Some(&pi)) = (best_d.get(pos - 1), best_i.get(pos - 1)) else {
                        break;
                    };
                    if pd > dist {
                        if pos < k {
                            set_at(best_d, pos, pd);
                            set_at(best_i, pos, pi);
                        }
                        pos -= 1;
                    } else {
                        break;
                    }
                }
                set_at(best_d, pos, dist);
                set_at(best_i, pos, r);
                filled = (filled + 1).min(k);
                if filled == k {
                    worst = at(best_d, k - 1);
                }
            }
        }
        votes.fill(0);
        for &r in best_i.iter().take(filled) {
            if let Some(v) = votes.get_mut(at(ref_labels, r) as usize) {
                *v += 1;
            }
        }
        let (mut win, mut top) = (0, at(votes, 0));
        for (c, &x) in votes.iter().enumerate().take(n_classes).skip(1) {
            if x > top {
                (win, top) = (c, x);
            }
        }
        *out_q = win as u32;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute(
        reference: &[f64],
        labels: &[u32],
        query: &[f64],
        d: usize,
        k: usize,
        c: usize,
    ) -> std::vec::Vec<u32> {
        let nref = labels.len();
        let nq = query.len() / d;
        (0..nq)
            .map(|q| {
                let mut ds: std::vec::Vec<(f64, usize)> = (0..nref)
                    .filter(|&r| labels[r] != UNLABELED)
                    .map(|r| {
                        (
                            (0..d)
                                .map(|i| (query[i + q * d] - reference[i + r * d]).powi(2))
                                .sum(),
                            r,
                        )
                    })
                    .collect();
                ds.sort_by(|a, b| a.partial_cmp(b).unwrap());
                let mut votes = std::vec![0; c];
                for &(_, r) in &ds[..k] {
                    votes[labels[r] as usize] += 1;
                }
                let mx = *votes.iter().max().unwrap();
                votes.iter().position(|&v| v == mx).unwrap() as u32
            })
            .collect()
    }

    #[test]
    fn matches_brute_force_with_ties() {
        // Integer coordinates make many exact distance ties.
        let (d, nref, nq, c) = (2, 60, 40, 4);
        let mut g = crate::rng::Rng::new(3);
        let reference: std::vec::Vec<f64> = (0..d * nref).map(|_| g.below(4) as f64).collect();
        let query: std::vec::Vec<f64> = (0..d * nq).map(|_| g.below(4) as f64).collect();
        let labels: std::vec::Vec<u32> = (0..nref)
            .map(|j| {
                if j % 7 == 3 {
                    UNLABELED
                } else {
                    g.below(c) as u32
                }
            })
            .collect();
        for k in [1, 2, 5, 9] {
            let p = KnnParams {
                k,
                metric: Metric::Euclidean,
            };
            let mut w = std::vec![0u8; knn_predict_workspace(&p, c).unwrap()];
            let mut out = std::vec![0u32; nq];
            knn_predict(
                MatRef::col_major(&reference, d, nref).unwrap(),
                &labels,
                MatRef::col_major(&query, d, nq).unwrap(),
                c,
                &p,
                &mut out,
                &mut w,
            )
            .unwrap();
            assert_eq!(out, brute(&reference, &labels, &query, d, k, c), "k = {k}");
        }
    }
}
