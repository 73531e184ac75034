//! Clustering scores: accuracy under the best one-to-one cluster/class map and
//! normalised mutual information (DESIGN §9).

use crate::error::Error;
use crate::linalg::at;
use crate::linalg::mat::MatRef;
use crate::work::{Stack, WorkReq};

use super::assignment::{assignment, assignment_workspace};

/// The normaliser of [`nmi`]: `NMI = I(C; C') / norm(H(C), H(C'))`.
///
/// The papers (seed 003 eq. 43) use [`NmiNorm::Max`]; scikit-learn's
/// `normalized_mutual_info_score` defaults to [`NmiNorm::Arithmetic`]. Always
/// say which one a table reports. Since `max ≥ arithmetic ≥ geometric ≥ min`,
/// on the same clustering `NMI_max ≤ NMI_arithmetic ≤ NMI_geometric ≤ NMI_min`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum NmiNorm {
    /// `max(H(C), H(C'))` (the papers').
    #[default]
    Max,
    /// `(H(C) + H(C')) / 2` (scikit-learn's default, `average_method="arithmetic"`).
    Arithmetic,
    /// `sqrt(H(C) · H(C'))` (`average_method="geometric"`).
    Geometric,
    /// `min(H(C), H(C'))` (`average_method="min"`).
    Min,
}

fn check_labels(
    truth: &[u32],
    pred: &[u32],
    n_classes: usize,
    n_clusters: usize,
) -> Result<(), Error> {
    if truth.is_empty() || n_classes == 0 || n_clusters == 0 {
        return Err(Error::ZeroDimension);
    }
    if pred.len() != truth.len() {
        return Err(Error::DimensionMismatch);
    }
    n_classes
        .checked_mul(n_clusters)
        .ok_or(Error::SizeOverflow)?;
    if truth.iter().any(|&l| l as usize >= n_classes)
        || pred.iter().any(|&l| l as usize >= n_clusters)
    {
        return Err(Error::BadLabel);
    }
    Ok(())
}

/// The `n_classes × n_clusters` contingency table (column-major) of counts.
fn contingency(truth: &[u32], pred: &[u32], n_classes: usize, table: &mut [f64]) {
    table.fill(0.0);
    for (&t, &p) in truth.iter().zip(pred) {
        if let Some(x) = table.get_mut(t as usize + p as usize * n_classes) {
            *x += 1.0;
        }
    }
}

fn accuracy_req(n_classes: usize, n_clusters: usize) -> Result<WorkReq, Error> {
    Ok(WorkReq::all_of(&[
        WorkReq::matrix::<f64>(n_classes, n_clusters),
        WorkReq::new::<usize>(n_classes),
        WorkReq::new::<u8>(assignment_workspace(n_classes, n_clusters)?),
    ]))
}

/// Workspace bytes of [`clustering_accuracy`].
pub fn clustering_accuracy_workspace(n_classes: usize, n_clusters: usize) -> Result<usize, Error> {
    accuracy_req(n_classes, n_clusters)?.bytes()
}

/// Clustering accuracy: the fraction of items whose cluster, mapped to a class
/// by the best one-to-one map between clusters and classes, is their class.
///
/// `truth[j] < n_classes`, `pred[j] < n_clusters` (else [`Error::BadLabel`]).
/// The map maximises the matched counts of the `n_classes × n_clusters`
/// contingency table by Kuhn–Munkres ([`super::assignment()`]); with more
/// clusters than classes the surplus clusters count as wrong, and vice versa.
/// Cost `O(N + C·C'·min(C, C'))`, workspace `O(C·C')`.
pub fn clustering_accuracy(
    truth: &[u32],
    pred: &[u32],
    n_classes: usize,
    n_clusters: usize,
    work: &mut [u8],
) -> Result<f64, Error> {
    check_labels(truth, pred, n_classes, n_clusters)?;
    accuracy_req(n_classes, n_clusters)?.check(work.len())?;
    let mut st = Stack::new(work);
    let table: &mut [f64] = st.take_matrix(n_classes, n_clusters)?;
    let map: &mut [usize] = st.take(n_classes)?;
    contingency(truth, pred, n_classes, table);
    let m = MatRef::col_major(&*table, n_classes, n_clusters)?;
    let aw: &mut [u8] = st.take(assignment_workspace(n_classes, n_clusters)?)?;
    let matched = assignment(m, true, map, aw)?;
    Ok(matched / truth.len() as f64)
}

fn nmi_req(n_classes: usize, n_clusters: usize) -> WorkReq {
    WorkReq::all_of(&[
        WorkReq::matrix::<f64>(n_classes, n_clusters),
        WorkReq::new::<f64>(n_classes),
        WorkReq::new::<f64>(n_clusters),
    ])
}

/// Workspace bytes of [`nmi`].
pub fn nmi_workspace(n_classes: usize, n_clusters: usize) -> Result<usize, Error> {
    if n_classes == 0 || n_clusters == 0 {
        return Err(Error::ZeroDimension);
    }
    nmi_req(n_classes, n_clusters).bytes()
}

/// Normalised mutual information between the classes `truth` and the
/// clusters `pred`, natural logarithms, normalised by `norm` (see [`NmiNorm`];
/// the papers use [`NmiNorm::Max`]).
///
/// Follows scikit-learn's `normalized_mutual_info_score` exactly, limits
/// included: only classes and clusters that occur count; if both labelings
/// have a single value the NMI is 1; if the mutual information is 0 the NMI is
/// 0; per-cell terms below machine epsilon in magnitude are dropped and the
/// mutual information is clipped at 0, as scikit-learn does.
/// Cost `O(N + C·C')`, workspace `O(C·C')`.
pub fn nmi(
    truth: &[u32],
    pred: &[u32],
    n_classes: usize,
    n_clusters: usize,
    norm: NmiNorm,
    work: &mut [u8],
) -> Result<f64, Error> {
    check_labels(truth, pred, n_classes, n_clusters)?;
    nmi_req(n_classes, n_clusters).check(work.len())?;
    let mut st = Stack::new(work);
    let table: &mut [f64] = st.take_matrix(n_classes, n_clusters)?;
    let a: &mut [f64] = st.take(n_classes)?;
    let b: &mut [f64] = st.take(n_clusters)?;
    contingency(truth, pred, n_classes, table);
    a.fill(0.0);
    b.fill(0.0);
    for (q, col) in table.chunks_exact(n_classes.max(1)).enumerate() {
        let Some(bq) = b.get_mut(q) else {
            break;
        };
        for (&x, ac) in col.iter().zip(a.iter_mut()) {
            *ac += x;
            *bq += x;
        }
    }
    let present_a = a.iter().filter(|&&x| x > 0.0).count();
    let present_b = b.iter().filter(|&&x| x > 0.0).count();
    if present_a == 1 && present_b == 1 {
        return Ok(1.0);
    }
    if present_a == 1 || present_b == 1 {
        return Ok(0.0);
    }
    let n = truth.len() as f64;
    let log_n = libm::log(n);
    // scikit-learn's arrangement of the terms (mutual_info_score), so that the
    // rounding agrees too: p_ij (log n_ij − log N) + p_ij (−log(a_i b_j) + 2 log N).
    let mut mi = 0.0;
    for (q, col) in table
        .chunks_exact(n_classes.max(1))
        .enumerate()
        .take(n_clusters)
    {
        let bq = at(b, q);
        for (&nij, &ac) in col.iter().zip(a.iter()) {
            if nij > 0.0 {
                let p = nij / n;
                let outer = ac * bq;
                let term = p * (libm::log(nij) - log_n) + p * (-libm::log(outer) + log_n + log_n);
                if libm::fabs(term) >= f64::EPSILON {
                    mi += term;
                }
            }
        }
    }
    let mi = mi.max(0.0);
    if mi == 0.0 {
        return Ok(0.0);
    }
    let entropy = |m: &[f64]| -> f64 {
        let mut h = 0.0;
        for &x in m {
            if x > 0.0 {
                h -= (x / n) * (libm::log(x) - log_n);
            }
        }
        h
    };
    let (ha, hb) = (entropy(a), entropy(b));
    let d = match norm {
        NmiNorm::Max => ha.max(hb),
        NmiNorm::Arithmetic => (ha + hb) / 2.0,
        NmiNorm::Geometric => libm::sqrt(ha * hb),
        NmiNorm::Min => ha.min(hb),
    };
    Ok(mi / d)
}
