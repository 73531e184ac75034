//! C ABI of the neighbour-graph request (`crate::graph::neighbors`, issue 30): the
//! NN-descent options (`mvnmf_ann_params`), the choice of search (`MVNMF_GRAPH_BUILD_*`:
//! exact, approximate, auto), TGE built as it says (`mvnmf_tge_build`), and MVEL's anchors
//! from k-means on a sample of the items (`mvnmf_anchors_kmeans_sampled`).
//!
//! `_f32` twins: none, as for their neighbours `mvnmf_tge` and `mvnmf_anchors_kmeans`
//! (the graph builders take `double` views); the pipeline's `_f32` twin takes the same
//! `graph_build` and `ann` fields.

use core::ffi::c_void;

use super::eval::{kmeans_report_to_c, mvnmf_kmeans_params, mvnmf_kmeans_report};
use super::graph::{build, Which};
use super::similarity::{
    ckernels, mvnmf_csr_buffers, mvnmf_graph_params, mvnmf_kernel, read_graph,
};
use super::util::*;
use crate::graph::{self, GraphBuild};
use crate::similarity::AnnParams;

/// `graph_build`: the exact blocked sweep over all pairs of items (`O(N²)`).
pub const MVNMF_GRAPH_BUILD_EXACT: u32 = 0;
/// `graph_build`: NN-descent (`mvnmf_ann_params`) finds the neighbour lists over all items;
/// the lists over the labeled items stay exact.
pub const MVNMF_GRAPH_BUILD_APPROX: u32 = 1;
/// `graph_build`: exact below `MVNMF_GRAPH_AUTO_EXACT_BELOW` items (bitwise
/// `MVNMF_GRAPH_BUILD_EXACT` there), `MVNMF_GRAPH_BUILD_APPROX` from there on.
pub const MVNMF_GRAPH_BUILD_AUTO: u32 = 2;
/// Items from which `MVNMF_GRAPH_BUILD_AUTO` uses NN-descent: where the two searches cost
/// the same, measured (the crate's `graph::AUTO_EXACT_BELOW`).
pub const MVNMF_GRAPH_AUTO_EXACT_BELOW: usize = 4096;
const _: () = assert!(MVNMF_GRAPH_AUTO_EXACT_BELOW == graph::AUTO_EXACT_BELOW);

cparams! {
    /// Options of NN-descent, the approximate neighbour search (`MVNMF_GRAPH_BUILD_APPROX`);
    /// start from `mvnmf_ann_params_default()`. A 0 in `trees`, `leaf`, `candidates` or `iters`
    /// means the size-dependent default.
    pub struct mvnmf_ann_params => AnnParams {
        /// Neighbours NN-descent keeps per item (default 10; raised to the graph's `ka`, at most
        /// `N − 1`).
        pub k: usize,
        /// Seed of the random-projection trees, the random fill and the sampling.
        pub seed: u64,
        /// Trees of the start (0: `min(32, 2 + floor(N^(1/4)) / 3)`).
        pub trees: usize,
        /// Most items per leaf (0: `max(16, k + 2)`); 1 is `MVNMF_STATUS_BAD_PARAMETER`.
        pub leaf: usize,
        /// Most candidates per item and kind in an iteration (0: `max(20, k)`).
        pub candidates: usize,
        /// Most iterations (0: `max(5, round(log2 N))`).
        pub iters: usize,
        /// Stop when an iteration inserts at most `delta·N·k` entries (default 0.001; 0: run all
        /// `iters`); negative or not finite is `MVNMF_STATUS_BAD_PARAMETER`.
        pub delta: f64,
        /// Who runs the searches (the same graph for every choice); one thread: the caller's
        /// pool (the pipeline's solver pool; for `mvnmf_tge_build`, one thread).
        pub parallel: mvnmf_parallel,
    } check check_ann;
    /// The default NN-descent options (`k = 10`, seed 0, size-dependent trees, leaves,
    /// candidates and iterations, `delta = 0.001`, one thread).
    fn mvnmf_ann_params_default;
}

/// The NN-descent options' own range checks, run whatever `graph_build` says (so a bad
/// struct is refused the same way at every size).
fn check_ann(a: &AnnParams) -> Result<(), Error> {
    if a.leaf == 1 || !(a.delta.is_finite() && a.delta >= 0.0) {
        return Err(Error::BadParameter);
    }
    Ok(())
}

/// `*p` (NULL: the defaults) read and checked.
pub(super) unsafe fn read_ann(p: *const mvnmf_ann_params) -> Result<AnnParams, Error> {
    c_unsafe! { read_params(p) }
}

/// A `graph_build` code with its NN-descent options, resolved once the item count is known.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CBuild {
    pub(crate) code: u32,
    pub(crate) ann: AnnParams,
}

impl CBuild {
    /// Checks the code (`MVNMF_STATUS_BAD_PARAMETER`); `ann` comes from
    /// [`read_ann`], which checked it.
    pub(super) fn new(code: u32, ann: AnnParams) -> Result<Self, Error> {
        if code > MVNMF_GRAPH_BUILD_AUTO {
            return Err(Error::BadParameter);
        }
        Ok(CBuild { code, ann })
    }

    /// The search for `n` items: `AUTO` is exact below the threshold, else NN-descent with
    /// the caller's options (with the default options: the crate's `GraphBuild::Auto`).
    pub(super) fn resolve(&self, n: usize) -> GraphBuild {
        match self.code {
            MVNMF_GRAPH_BUILD_APPROX => GraphBuild::Approx(self.ann),
            MVNMF_GRAPH_BUILD_AUTO if n >= MVNMF_GRAPH_AUTO_EXACT_BELOW => {
                GraphBuild::Approx(self.ann)
            }
            _ => GraphBuild::Exact,
        }
    }
}

export! {
    /// `mvnmf_tge` with its neighbour lists over all items found as `graph_build` says
    /// (`MVNMF_GRAPH_BUILD_EXACT`: bitwise `mvnmf_tge`; `MVNMF_GRAPH_BUILD_APPROX`: NN-descent
    /// with `ann` (NULL: `mvnmf_ann_params_default()`), the same-class and penalty lists over
    /// the labeled items exact; `MVNMF_GRAPH_BUILD_AUTO`: exact below
    /// `MVNMF_GRAPH_AUTO_EXACT_BELOW` items). The sweeps run on `ann->parallel`. Same
    /// arguments, contract and outputs as `mvnmf_tge`; an unknown `graph_build`, `ann->leaf =
    /// 1` or a negative or non-finite `ann->delta` is `MVNMF_STATUS_BAD_PARAMETER`, refused
    /// before anything is written. Cost: NN-descent's (about linear in `N`) plus `O(N_l² Σ
    /// M_v)` for the labeled lists, against `O(N² Σ M_v)` exact.
    fn mvnmf_tge_build(
        views: *const V = "`n_views`",
        n_views: usize,
        kernels: *const mvnmf_kernel = "`n_views` kernels",
        eta: *const f64 = "`n_views` doubles",
        labels: *const u32 = "`N` labels (NULL as `mvnmf_tge` allows)",
        n_classes: usize,
        params: *const mvnmf_graph_params,
        graph_build: u32,
        ann: *const mvnmf_ann_params = "one struct (NULL: the defaults)",
        affinity, penalty: *const mvnmf_csr_buffers = "one struct whose buffers hold its capacity",
        affinity_nnz, penalty_nnz: *mut usize = "one `size_t`",
        ..work(work, work_bytes),
    ) {
        let b = CBuild::new(graph_build, read_ann(ann)?)?;
        let out = (affinity, penalty, affinity_nnz, penalty_nnz);
        let io = (eta, labels, n_classes, params);
        build(views, n_views, kernels, io, out, work, work_bytes, Which::TgeBuild(b))
    }
    /// (validates the view descriptors as the call does, values aside, the
    /// options and `graph_build`).
    workspace mvnmf_tge_build_workspace(..3,
        n_classes: usize,
        params: *const mvnmf_graph_params,
        graph_build: u32,
        ann: *const mvnmf_ann_params = "one struct (NULL: the defaults)",
    ) {
        let p = read_graph(params)?;
        let b = CBuild::new(graph_build, read_ann(ann)?)?;
        let ks = ckernels(kernels, n_views)?;
        let s = shapes(views, n_views)?;
        let n = s.clone().next().map_or(0, |v| v.cols);
        graph::tge_build_workspace::<f64>(s, &ks, n_classes, &p, &b.resolve(n))
    };

    /// `mvnmf_anchors_kmeans` with k-means (k-means++ seeding and Lloyd's iterations, every
    /// restart) run on a seeded uniform sample of `sample` items (clamped to `[m, n]`, drawn
    /// without replacement from `params->seed`) instead of all `n`: cost `O(sample·m·Σd)` per
    /// Lloyd iteration. The views' scales are still those of all items; the report's inertia is
    /// the sample's. `sample >= n` is bitwise `mvnmf_anchors_kmeans`. Measured on MVEL (n =
    /// 20 000, m = 500): a sample of `10·m` items, anchors 8× faster with the same AUC.
    fn mvnmf_anchors_kmeans_sampled(
        views: *const V = "`n_views`",
        n_views, m: usize,
        params: *const mvnmf_kmeans_params,
        sample: usize,
        anchors: *const *mut f64 = "`n_views` pointers to `d_v × m` doubles each",
        ..work(work, work_bytes),
        report: *mut mvnmf_kmeans_report,
    ) {
        let p = read_params(params)?;
        let vs = CViews::new(views, n_views)?;
        nonzero!(m);
        // The query's checks before the outputs', so that both give the same status.
        let sh = (0..vs.count()).map(|i| vs.shape(i));
        graph::anchors_by_kmeans_sampled_workspace::<f64>(sh, m, &p, sample)?;
        let mut out = factors::<*mut f64, _>(anchors, &vs, m, &[], |x| x.is_null())?;
        let wk = work_of(work, work_bytes)?;
        let r = graph::anchors_by_kmeans_sampled(&vs, m, &p, sample, &mut out, wk)?;
        put_opt(report, kmeans_report_to_c(&r));
        Ok(mvnmf_status::Ok)
    }
    /// (validates the view descriptors as the call does, values aside;
    /// `params` may be NULL: defaults).
    workspace mvnmf_anchors_kmeans_sampled_workspace(..5) {
        let p = read_params(params)?;
        graph::anchors_by_kmeans_sampled_workspace::<f64>(shapes(views, n_views)?, m, &p, sample)
    };
}
