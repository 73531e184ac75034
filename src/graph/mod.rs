//! Graph embedding operators for the V-step (DESIGN §5, §6).
//!
//! The graph-regularised V-step needs, for every row `v̄_k` of `V` (`K × N`),
//! the products `(Dᵃ + Wᵖ) v̄_k` and `(Dᵖ + Wᵃ) v̄_k` of an affinity graph
//! `Wᵃ` and a penalty graph `Wᵖ` (nonnegative, symmetric; `D` their degree
//! matrices), and the traces `tr(V Lᵃ Vᵀ)`, `tr(V Lᵖ Vᵀ)` with `L = D − W`.
//! [`GraphOp`] is that interface, whatever the graph is:
//!
//! * [`Sge`]: the simple graph embedding of seeds 000/003, implicit: class sums
//!   make every product `O(K·N)`, never the `O(N²)` matrix.
//! * [`CsrGraphs`]: explicit symmetric CSR graphs (LDGE, TGE, or the caller's
//!   own), `O(K · nnz)` per product.
//! * [`DenseGraph`]: a dense symmetric affinity matrix (MVEL's fused
//!   multi-view graph, built by [`fused_graph`]), one GEMM per product.

pub(crate) mod anchor;
pub(crate) mod build;
mod csr;
mod dense;
pub(crate) mod dist;
mod fused;
mod labeled;
mod ldge;
mod neighbors;
mod sge;
mod tge;

pub use anchor::{
    anchor_gram, anchor_gram_workspace, anchor_graph, anchor_graph_workspace, anchor_scales_len,
    anchors_by_kmeans, anchors_by_kmeans_sampled, anchors_by_kmeans_sampled_workspace,
    anchors_by_kmeans_workspace, fused_knn_graph, fused_knn_graph_build,
    fused_knn_graph_build_workspace, fused_knn_graph_capacity, fused_knn_graph_workspace,
    AnchorGraph, FUSED_KNN_SAMPLE_PAIRS,
};
pub(crate) use build::{check_sizes, precheck};
pub use build::{ldge_capacity, tge_capacity, CsrOut, GraphNnz, GraphParams, Penalty};
pub use csr::{CsrGraph, CsrGraphs};
pub use dense::DenseGraph;
pub use fused::{fused_graph, fused_graph_workspace, FusedParams};
pub use ldge::{ldge, ldge_build, ldge_build_workspace, ldge_workspace};
pub use neighbors::{
    tge_build, tge_build_progress, tge_build_workspace, GraphBuild, AUTO_EXACT_BELOW,
    LABELED_EXACT_BELOW,
};
pub use sge::Sge;
pub use tge::{tge, tge_workspace};

use crate::error::Error;
use crate::linalg::real::Real;
use crate::work::{Stack, WorkReq};

/// The graph products the V-step needs.
pub trait GraphOp<T: Real> {
    /// Items the graphs span (the solver checks it equals `N`).
    fn items(&self) -> usize;

    /// Whether there is a penalty graph (`Wᵖ ≠ 0` possible): with it the
    /// objective is bounded below only when `V` is bounded (`vmax < ∞`).
    fn has_penalty(&self) -> bool {
        true
    }

    /// Whether every weight is known to be zero (no graph, or graphs without
    /// a nonzero weight): the graph term is then 0 for every `V` and its
    /// weight `β` plays no part in the data scale (`crate::steps::scale`,
    /// issue 31). `false` unless known.
    fn is_zero(&self) -> bool {
        false
    }

    /// Workspace of [`GraphOp::apply`] for rank `k`.
    fn apply_req(&self, k: usize) -> WorkReq;

    /// For `v` (`K × N`, column-major) writes, column-major `K × N`,
    /// `plus[k, j] = ((Dᵃ + Wᵖ) v̄_k)_j` and `minus[k, j] = ((Dᵖ + Wᵃ) v̄_k)_j`,
    /// and returns `(tr(V Lᵃ Vᵀ), tr(V Lᵖ Vᵀ))`.
    fn apply(
        &self,
        v: &[T],
        k: usize,
        plus: &mut [T],
        minus: &mut [T],
        st: &mut Stack<'_>,
    ) -> Result<(f64, f64), Error>;
}

/// No graph: every product is zero (plain multi-view NMF's V-step).
#[derive(Clone, Copy, Debug)]
pub struct NoGraph {
    /// Items.
    pub n: usize,
}

impl<T: Real> GraphOp<T> for NoGraph {
    fn items(&self) -> usize {
        self.n
    }
    fn has_penalty(&self) -> bool {
        false
    }
    fn is_zero(&self) -> bool {
        true
    }
    fn apply_req(&self, _k: usize) -> WorkReq {
        WorkReq::EMPTY
    }
    fn apply(
        &self,
        _v: &[T],
        _k: usize,
        plus: &mut [T],
        minus: &mut [T],
        _st: &mut Stack<'_>,
    ) -> Result<(f64, f64), Error> {
        plus.fill(T::ZERO);
        minus.fill(T::ZERO);
        Ok((0.0, 0.0))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::vec::Vec;

    /// Dense reference: given explicit `Wa`, `Wp` (N×N row-major), the products.
    pub(crate) fn dense_apply(
        wa: &[f64],
        wp: &[f64],
        n: usize,
        v: &[f64],
        k: usize,
    ) -> (Vec<f64>, Vec<f64>, f64, f64) {
        let deg = |w: &[f64], j: usize| (0..n).map(|i| w[j * n + i]).sum::<f64>();
        let (mut plus, mut minus) = (std::vec![0.0; k * n], std::vec![0.0; k * n]);
        let (mut ta, mut tp) = (0.0, 0.0);
        for r in 0..k {
            for j in 0..n {
                let wav: f64 = (0..n).map(|i| wa[j * n + i] * v[r + i * k]).sum();
                let wpv: f64 = (0..n).map(|i| wp[j * n + i] * v[r + i * k]).sum();
                let (da, dp) = (deg(wa, j) * v[r + j * k], deg(wp, j) * v[r + j * k]);
                plus[r + j * k] = da + wpv;
                minus[r + j * k] = dp + wav;
                ta += v[r + j * k] * (da - wav);
                tp += v[r + j * k] * (dp - wpv);
            }
        }
        (plus, minus, ta, tp)
    }
}
