//! The C ABI of the approximate graph across ranks with the items sharded
//! (`graph::dist::tge_approx`, issue 30 item 4): `mvnmf_dist_tge_approx` and
//! its workspace query, beside `mvnmf_dist_tge` (the exact rows, `dist.rs`).

use core::ffi::c_void;

use super::dist::{mvnmf_dist_comm, run_tge};
use super::neighbors::{mvnmf_ann_params, read_ann};
use super::similarity::{any_median, ckernels, clabels, mvnmf_csr_buffers, mvnmf_graph_params};
use super::similarity::{mvnmf_kernel, read_graph};
use super::util::*;
use crate::models::dist::{self, GraphTraffic};

export! {
    /// The approximate TGE / kNN graph (`mvnmf_tge_build` with
    /// `MVNMF_GRAPH_BUILD_APPROX`) built across ranks with the items sharded:
    /// arguments, partition, outputs and errors as `mvnmf_dist_tge` (capacities
    /// from `mvnmf_dist_tge_capacity`; `exchange` required, `allgather`
    /// recommended), plus the NN-descent options `ann` (NULL:
    /// `mvnmf_ann_params_default()`; the same on every rank, agreed before anything
    /// is written). Every rank calls it at the same time.
    ///
    /// Each rank holds only its items' columns: NN-descent starts over its own
    /// items, takes a fixed sample of every rank's items as remote candidates,
    /// then iterates with the lists of its items' remote neighbours and the
    /// columns of its items' remote candidates fetched from their ranks a batch at
    /// a time (`exchange`); the labeled items' columns are gathered (`allgather`)
    /// for the exact same-class and penalty lists and the median bandwidths. With
    /// one rank the rows are bitwise `mvnmf_tge_build`'s approximate graph; with
    /// several the labeled lists are still the same and the global neighbours are
    /// another NN-descent approximation (recall and traffic: `docs/mpi.md`).
    fn mvnmf_dist_tge_approx(
        comm: *const mvnmf_dist_comm,
        views: *const V = "`n_views`",
        n_views: usize,
        kernels: *const mvnmf_kernel = "`n_views` kernels",
        eta: *const f64 = "`n_views` doubles",
        labels: *const u32 = "`n` labels",
        n, n_classes: usize,
        params: *const mvnmf_graph_params,
        ann: *const mvnmf_ann_params = "one struct (NULL: the defaults)",
        affinity: *const mvnmf_csr_buffers = "one descriptor (its buffers as `mvnmf_csr_buffers` documents for `n_r + 1` rows)",
        penalty: *const mvnmf_csr_buffers = "one descriptor (its buffers as `mvnmf_csr_buffers` documents for `n_r + 1` rows)",
        affinity_nnz, penalty_nnz: *mut usize = "one size",
        ..work(work, work_bytes),
        traffic: *mut GraphTraffic = "one struct",
    ) {
        Ok(run_tge(comm, (views, n_views), (kernels, eta), (labels, n), (params, Some(ann)),
            [affinity, penalty], [affinity_nnz, penalty_nnz], (work, work_bytes), traffic,
            |cm, t| {
                let (a, nn) = (t.ann.unwrap_or_default(), (n, n_classes));
                let (vs, ks, p) = (&t.vs, &t.ks, (&t.p, &a));
                dist::tge_approx(cm, vs, ks, t.eta, t.labels, nn, p, t.graphs, t.work)
            }))
    }
    /// on a rank whose views (its items, dense) have these shapes, for `n` items
    /// over `n_ranks ≥ 1` ranks with these labels (all `n` items, or NULL as
    /// `mvnmf_dist_tge_approx` allows), these graph options and NN-descent
    /// options (`ann`; NULL: `mvnmf_ann_params_default()`).
    /// `MVNMF_STATUS_BAD_PARAMETER` for 0 ranks, as the call.
    workspace mvnmf_dist_tge_approx_workspace(
        views: *const V = "`n_views`",
        n_views: usize,
        kernels: *const mvnmf_kernel = "`n_views` kernels",
        labels: *const u32 = "`n` labels",
        n, n_classes, n_ranks: usize,
        params: *const mvnmf_graph_params,
        ann: *const mvnmf_ann_params = "one struct (NULL: the defaults)",
    ) {
        let p = read_graph(params)?;
        let a = read_ann(ann)?;
        let ks = ckernels(kernels, n_views)?;
        let lab = clabels(labels, n, p.kp > 0 || any_median(&ks))?;
        dist::tge_approx_workspace(
            shapes(views, n_views)?,
            &ks,
            n,
            lab,
            n_classes,
            n_ranks,
            &p,
            &a,
        )
    };
}
