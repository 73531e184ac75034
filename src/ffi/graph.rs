//! C ABI of the LDGE / TGE graph builders, CCA, the fused and anchor graphs
//! (`crate::graph`); the rules of views, labels and weights are those of
//! `ffi/similarity.rs`.

use core::ffi::c_void;

use super::neighbors::{mvnmf_ann_params, read_ann, CBuild};
use super::similarity::{any_median, ceta, ckernels, clabels, mvnmf_csr_buffers};
use super::similarity::{mvnmf_graph_params, mvnmf_kernel, read_graph};
use super::util::*;
use crate::data::{Dense, ViewSet};
use crate::error::Error;
use crate::graph::{self, CsrGraph, CsrOut, FusedParams, GraphParams};
use crate::similarity;

/// Reads the graph options, computes `cap` from them and writes both capacities.
pub(super) unsafe fn write_capacity(
    params: *const mvnmf_graph_params,
    affinity: *mut usize,
    penalty: *mut usize,
    cap: impl FnOnce(&GraphParams) -> Result<graph::GraphNnz, Error>,
) -> Result<mvnmf_status, Error> {
    c_unsafe!({
        require!(affinity, penalty);
        let c = cap(&read_graph(params)?)?;
        *affinity = c.affinity;
        *penalty = c.penalty;
        Ok(mvnmf_status::Ok)
    })
}

export! {
    /// Capacities (`col_idx` / `weights` lengths) that always hold LDGE's graphs for `n` items:
    /// affinity `min(2·n·ka, n(n−1))`, penalty `min(2·n_classes·kp, n(n−1))` (class pairs) or
    /// `min(2·n·kp, n(n−1))` (item neighbours).
    fn mvnmf_ldge_capacity(
        n, n_classes: usize,
        params: *const mvnmf_graph_params,
        affinity_capacity, penalty_capacity: *mut usize = "one `size_t`",
    ) {
        write_capacity(params, affinity_capacity, penalty_capacity, |p| {
            graph::ldge_capacity(n, n_classes, p)
        })
    };

    /// Capacities that always hold TGE's graphs: affinity `min(4·n·ka, n(n−1))`, penalty as LDGE.
    fn mvnmf_tge_capacity(
        .. // `mvnmf_ldge_capacity`'s parameters
    ) {
        write_capacity(params, affinity_capacity, penalty_capacity, |p| {
            graph::tge_capacity(n, n_classes, p)
        })
    };
}

pub(super) unsafe fn csr_out<'a>(
    b: *const mvnmf_csr_buffers,
    n: usize,
) -> Result<CsrOut<'a>, Error> {
    c_unsafe!({
        require!(b);
        let b = *b;
        require!(b.row_ptr, b.col_idx, b.weights);
        Ok(CsrOut {
            row_ptr: slice_mut(b.row_ptr, n.checked_add(1).ok_or(Error::SizeOverflow)?)?,
            col_idx: slice_mut(b.col_idx, b.capacity)?,
            weights: slice_mut(b.weights, b.capacity)?,
        })
    })
}

/// Which graph [`build`] makes.
pub(super) enum Which {
    Ldge,
    /// `mvnmf_tge`: the exact sweep.
    Tge,
    /// `mvnmf_tge_build`: as the checked option says.
    TgeBuild(super::neighbors::CBuild),
}

/// The inputs of a graph build after the views: `eta`, `labels`, `n_classes`, `params`.
pub(super) type BuildIn = (*const f64, *const u32, usize, *const mvnmf_graph_params);
/// The outputs of a graph build: both CSR buffers and both entry counts.
pub(super) type BuildOut = (
    *const mvnmf_csr_buffers,
    *const mvnmf_csr_buffers,
    *mut usize,
    *mut usize,
);

/// The body of `mvnmf_ldge`, `mvnmf_tge` and `mvnmf_tge_build`: the arguments
/// read and checked, then the graph built into the caller's buffers.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn build(
    views: *const mvnmf_view,
    n_views: usize,
    kernels: *const mvnmf_kernel,
    (eta, labels, n_classes, params): BuildIn,
    (affinity, penalty, affinity_nnz, penalty_nnz): BuildOut,
    work: *mut c_void,
    work_bytes: usize,
    which: Which,
) -> Result<mvnmf_status, Error> {
    c_unsafe!({
        let p = read_graph(params)?;
        let vs = CViews::new(views, n_views)?;
        let ks = ckernels(kernels, n_views)?;
        let e = ceta(eta, n_views)?;
        let n = vs.shape(0).cols;
        let lab = clabels(labels, n, p.kp > 0 || any_median(&ks))?;
        require!(affinity_nnz, penalty_nnz);
        let a = csr_out(affinity, n)?;
        let q = csr_out(penalty, n)?;
        let w = work_of(work, work_bytes)?;
        let r = match which {
            Which::Ldge => graph::ldge(&vs, &ks, e, lab, n_classes, &p, a, q, w)?,
            Which::Tge => graph::tge(&vs, &ks, e, lab, n_classes, &p, a, q, w)?,
            Which::TgeBuild(b) => {
                let io = (e, lab, n_classes);
                let par = b.ann.parallel;
                graph::tge_build(&vs, &ks, io, &p, &b.resolve(n), a, q, w, par)?
            }
        };
        *affinity_nnz = r.affinity;
        *penalty_nnz = r.penalty;
        Ok(mvnmf_status::Ok)
    })
}

export! {
    /// (validates the view descriptors as the call does, values aside).
    workspace mvnmf_ldge_workspace for mvnmf_ldge(
        views: *const V = "`n_views`",
        n_views: usize,
        kernels: *const mvnmf_kernel = "`n_views` kernels",
        n_classes: usize,
        params: *const mvnmf_graph_params,
    ) {
        let (p, ks) = (read_graph(params)?, ckernels(kernels, n_views)?);
        graph::ldge_workspace::<f64>(shapes(views, n_views)?, &ks, n_classes, &p)
    };

    /// (validates the view descriptors as the call does, values aside).
    // `(..)`: `mvnmf_ldge_workspace`'s parameters.
    workspace mvnmf_tge_workspace for mvnmf_tge(..) {
        let (p, ks) = (read_graph(params)?, ckernels(kernels, n_views)?);
        graph::tge_workspace::<f64>(shapes(views, n_views)?, &ks, n_classes, &p)
    };

    /// LDGE (seed 003 §4.2): `Wᵃ_ij = 1` if `i` is among the `ka` nearest same-class labeled items
    /// of `j` or `j` of `i`; `Wᵖ` per `params->penalty` (weights 1); neighbours under the fused
    /// kernel. Writes both graphs as symmetric CSR (sorted columns; pass them to the solver's
    /// `mvnmf_graph` as `MVNMF_GRAPH_CSR`) and their entry counts. `labels` not NULL; `kp = 0`
    /// gives an empty penalty graph. Too few labeled items in a class for `ka` (or for `kp`) is
    /// `MVNMF_STATUS_TOO_FEW_LABELED`; `ka >= N` is `MVNMF_STATUS_BAD_PARAMETER`; a capacity
    /// too small for the graph is `MVNMF_STATUS_BUFFER_TOO_SHORT` (nothing written).
    fn mvnmf_ldge(
        views: *const V = "`n_views`",
        n_views: usize,
        kernels: *const mvnmf_kernel = "`n_views` kernels",
        eta: *const f64 = "`n_views` doubles",
        labels: *const u32 = "`N` labels",
        n_classes: usize,
        params: *const mvnmf_graph_params,
        affinity, penalty: *const mvnmf_csr_buffers = "one struct whose buffers hold its capacity",
        affinity_nnz, penalty_nnz: *mut usize = "one `size_t`",
        ..work(work, work_bytes),
    ) {
        require!(labels);
        let out = (affinity, penalty, affinity_nnz, penalty_nnz);
        let io = (eta, labels, n_classes, params);
        build(views, n_views, kernels, io, out, work, work_bytes, Which::Ldge)
    };

    /// TGE (seed 003 §4.3): `Wᵃ_ij = sigma` for LDGE's same-class pairs, 1 if `i` or `j` is
    /// unlabeled and one is among the `ka` nearest (all items) of the other; `Wᵖ = sigma ×` LDGE's
    /// penalty. Same contract as `mvnmf_ldge`; `labels` may be NULL (no labeled items) when
    /// `kp = 0` and no RBF kernel uses the median heuristic: the plain kNN graph (else
    /// `MVNMF_STATUS_NULL_POINTER`).
    fn mvnmf_tge(
        .. // `mvnmf_ldge`'s parameters
    ) {
        let out = (affinity, penalty, affinity_nnz, penalty_nnz);
        let io = (eta, labels, n_classes, params);
        build(views, n_views, kernels, io, out, work, work_bytes, Which::Tge)
    };

    /// Degrees `D_jj = Σ_i W_ji` of a symmetric CSR graph (`row_ptr[n + 1]`, `col_idx` and
    /// `weights` of `row_ptr[n]` entries; validated like the solver's graphs) into `degrees[n]`.
    fn mvnmf_graph_degrees(
        n: usize,
        row_ptr: *const usize = "`n + 1` offsets",
        col_idx: *const usize = "`row_ptr[n]` indices",
        weights: *const f64 = "`row_ptr[n]` doubles",
        degrees: *mut f64 = "`n` doubles",
    ) {
        nonzero!(n);
        require!(row_ptr, degrees);
        let rp = slice(row_ptr, n.checked_add(1).ok_or(Error::SizeOverflow)?)?;
        let nnz = rp[n];
        if nnz > 0 && (col_idx.is_null() || weights.is_null()) {
            return Err(Error::NullPointer);
        }
        let ci = slice(col_idx, nnz)?;
        let w = slice(weights, nnz)?;
        let g = CsrGraph::new(n, rp, ci, w)?;
        let d = slice_mut(degrees, n)?;
        for (j, x) in d.iter_mut().enumerate() {
            *x = g.degree(j);
        }
        Ok(mvnmf_status::Ok)
    };
}

/// A dense view descriptor as a [`Dense`] view (`MVNMF_STATUS_BAD_PARAMETER` for a CSC one).
unsafe fn dense_view<'a>(v: *const mvnmf_view) -> Result<Dense<'a, f64>, Error> {
    c_unsafe!({
        require!(v);
        let v = &*v;
        if v.kind != MVNMF_VIEW_DENSE {
            return Err(Error::BadParameter);
        }
        let p = parts(v)?;
        Dense::new(p.values, v.rows, v.cols, v.col_stride)
    })
}

/// The shape rule of `mvnmf_cca`, shared with its query (and its workspace
/// bytes): both views' `d × n` values addressable (as the call's descriptors
/// are checked), then the Rust shape checks (`n ≥ 2`, `1 ≤ dims ≤ min(di, dj)`),
/// so the outputs (`d × dims`) are addressable too.
fn cca_dims(di: usize, dj: usize, n: usize, dims: usize) -> Result<usize, Error> {
    elems::<f64>(di, n)?;
    elems::<f64>(dj, n)?;
    similarity::cca_workspace::<f64>(di, dj, n, dims)
}

export! {
    /// Regularised canonical correlation analysis of two dense views of the same `n` items
    /// (`xi`: `di × n`, `xj`: `dj × n`, `MVNMF_VIEW_DENSE` with any `col_stride`; values of any
    /// sign). Centres each view by its mean over the items, forms `C = Xc Xc^T / (n - 1) + reg I`
    /// for both views and `C_ij = Xci Xcj^T / (n - 1)`, and takes the top `dims` singular
    /// triplets `(rho, Psi, Psi~)` of `T = C_ii^(-1/2) C_ij C_jj^(-1/2)`.
    ///
    /// Writes `phi_i[di * dims] = C_ii^(-1/2) Psi` and `phi_j[dj * dims] = C_jj^(-1/2) Psi~`
    /// (column-major; the largest-magnitude entry of each column of `phi_i` is positive), the
    /// canonical correlations `rho[dims]` (descending, at most 1 up to rounding) and the means `mu_i[di]`,
    /// `mu_j[dj]`: a new item projects as `phi_i^T (x - mu_i)`. The canonical variables of the
    /// `n` items have covariance `I - reg phi^T phi` and cross-covariance `diag(rho)`.
    ///
    /// `reg >= 0`; `reg = 0` is refused with `MVNMF_STATUS_BAD_PARAMETER` when a covariance is
    /// numerically singular (a view with `n` or more features, or a constant feature). Other
    /// errors, before anything is written: `MVNMF_STATUS_NULL_POINTER`,
    /// `MVNMF_STATUS_BAD_PARAMETER` (a CSC view, `reg` negative or not finite),
    /// `MVNMF_STATUS_DIMENSION_MISMATCH` (different item counts), `MVNMF_STATUS_ZERO_DIMENSION`
    /// (`n < 2`), `MVNMF_STATUS_BAD_RANK` (`dims = 0` or `dims > min(di, dj)`),
    /// `MVNMF_STATUS_NON_FINITE_INPUT` (a NaN or infinity, or a covariance that overflows),
    /// `MVNMF_STATUS_WORKSPACE_TOO_SMALL`. Cost `O((di + dj)^2 n + di^3 + dj^3)`.
    fn mvnmf_cca(
        xi, xj: *const mvnmf_view = "one dense view descriptor",
        reg: f64,
        dims: usize,
        phi_i: *mut f64 = "`d_i × dims` doubles",
        phi_j: *mut f64 = "`d_j × dims` doubles",
        rho: *mut f64 = "`dims` doubles",
        mu_i: *mut f64 = "`d_i` doubles",
        mu_j: *mut f64 = "`d_j` doubles",
        ..work(work, work_bytes),
    ) {
        let vi = dense_view(xi)?;
        let vj = dense_view(xj)?;
        require!(phi_i, phi_j, rho, mu_i, mu_j);
        let (di, dj) = (vi.mat().rows(), vj.mat().rows());
        cca_dims(di, dj, vi.mat().cols(), dims)?;
        let (fi, fj) = (out_ab(phi_i, di, dims)?, out_ab(phi_j, dj, dims)?);
        let r = slice_mut(rho, dims)?;
        let mi = slice_mut(mu_i, di)?;
        let mj = slice_mut(mu_j, dj)?;
        let w = work_of(work, work_bytes)?;
        similarity::cca(&vi, &vj, reg, dims, fi, fj, r, mi, mj, w)?;
        Ok(mvnmf_status::Ok)
    }
    /// for views of `di` and `dj` features over `n` items and
    /// `dims` canonical pairs (`MVNMF_STATUS_ZERO_DIMENSION` for a zero size or `n < 2`,
    /// `MVNMF_STATUS_BAD_RANK` for `dims = 0` or `dims > min(di, dj)`).
    workspace mvnmf_cca_workspace(
        di, dj, n, dims: usize,
    ) {
        cca_dims(di, dj, n, dims)
    };
}

cparams! {
    /// Options of `mvnmf_fused_graph`; get the defaults from
    /// `mvnmf_fused_graph_params_default()`.
    pub struct mvnmf_fused_graph_params => FusedParams {
        /// Nonzero (default): cross-view graphs by CCA; 0: within-view graphs only.
        pub cross_view: u32,
        /// CCA directions per view pair (default 0: min(d_i, d_j, 10)).
        pub cca_dims: usize,
        /// Ridge of both covariances, relative to the mean feature variance
        /// (default 1e-3; must be > 0 with `cross_view`).
        pub cca_reg: f64,
        /// Cross-view bandwidth σ (default 0: the median heuristic per pair).
        pub sigma: f64,
    } validate;
    /// The default fused-graph options.
    fn mvnmf_fused_graph_params_default;
}

export! {
    /// MVEL's fused multi-view graph (seed 002): `w` (`n × n` doubles,
    /// column-major, symmetric, total weight `n`) from the random walk over the
    /// `J²` view graphs: within-view RBF graphs (`gammas[v] > 0`, or 0 / NULL for
    /// the median heuristic `1 / median d²`), cross-view graphs on the CCA
    /// projections of every view pair (bandwidth `sigma`, or the median), mixed by
    /// `priors` (`J × J`, column-major, symmetric, ≥ 0, summing to 1) or uniformly
    /// (NULL). Views dense, real-valued (any sign), the same `n ≥ 2` items.
    /// Use it as an `mvnmf_graph` of kind `MVNMF_GRAPH_DENSE`. Cost: per view
    /// `O(n² d)`, per view pair a CCA and `O(n² dims)`; memory `n²` doubles of
    /// workspace besides `w`. `w` is written only on success.
    fn mvnmf_fused_graph(
        views: *const V = "`n_views`",
        n_views: usize,
        gammas: *const f64 = "`n_views` doubles",
        priors: *const f64 = "`n_views × n_views` doubles",
        params: *const mvnmf_fused_graph_params,
        w: *mut f64 = "`n × n` doubles",
        ..work(work, work_bytes),
    ) {
        let p = read_params(params)?;
        let vs = CViews::new(views, n_views)?;
        let n = vs.shape(0).cols;
        let g = opt_slice(gammas, n_views)?;
        let pr = priors_of(priors, n_views)?;
        let ww = out_ab(w, n, n)?;
        let wk = work_of(work, work_bytes)?;
        graph::fused_graph(&vs, g, pr, &p, ww, wk)?;
        Ok(mvnmf_status::Ok)
    }
    /// (validates the view descriptors as
    /// the call does, values aside).
    workspace mvnmf_fused_graph_workspace(..2, params: *const mvnmf_fused_graph_params) {
        let p = read_params(params)?;
        graph::fused_graph_workspace::<f64>(shapes(views, n_views)?, &p)
    };

    /// MVEL's anchors (seed 002 §2.3): k-means (`m <= n` clusters, `params` or
    /// NULL for the defaults) of the items over all dense views at once, each
    /// view scaled to centred `||X - mu 1'||_F^2 = n` and stacked; anchor view `v`
    /// is the centroids' part `v`, unscaled, written to `anchors[v]` (`d_v × m`
    /// doubles, column-major; an array of `n_views` pointers). `report` may be
    /// NULL. Cost `O(n·m·Σd)` per Lloyd iteration.
    fn mvnmf_anchors_kmeans(
        views: *const V = "`n_views`",
        n_views, m: usize,
        params: *const super::eval::mvnmf_kmeans_params,
        anchors: *const *mut f64 = "`n_views` pointers to `d_v × m` doubles each",
        ..work(work, work_bytes),
        report: *mut super::eval::mvnmf_kmeans_report,
    ) {
        let p = read_params(params)?;
        let vs = CViews::new(views, n_views)?;
        nonzero!(m);
        // The query's checks (dense views, `m ≤ n`, sizes) before the
        // outputs', so that both give the same status.
        graph::anchors_by_kmeans_workspace::<f64>((0..vs.count()).map(|i| vs.shape(i)), m, &p)?;
        let mut out = factors::<*mut f64, _>(anchors, &vs, m, &[], |x| x.is_null())?;
        let wk = work_of(work, work_bytes)?;
        let r = graph::anchors_by_kmeans(&vs, m, &p, &mut out, wk)?;
        put_opt(report, super::eval::kmeans_report_to_c(&r));
        Ok(mvnmf_status::Ok)
    }
    /// (validates the view descriptors
    /// as the call does, values aside; `params` may be NULL: defaults).
    workspace mvnmf_anchors_kmeans_workspace(..4) {
        let p = read_params(params)?;
        graph::anchors_by_kmeans_workspace::<f64>(shapes(views, n_views)?, m, &p)
    };
}

/// Number of scales of `mvnmf_anchor_graph` for `n_views` views: `2 J²`.
#[no_mangle]
pub extern "C" fn mvnmf_anchor_scales_len(n_views: usize) -> usize {
    n_views
        .checked_mul(n_views)
        .and_then(|x| x.checked_mul(2))
        .unwrap_or(0)
}

/// The `J × J` priors ([`slice_ab`]), `None` for NULL.
unsafe fn priors_of<'a>(priors: *const f64, n_views: usize) -> Result<Option<&'a [f64]>, Error> {
    c_unsafe!((!priors.is_null())
        .then(|| slice_ab(priors, n_views, n_views))
        .transpose())
}

export! {
    /// MVEL's anchor graph (seed 002 §2.3): for each of the `n` items of `views`
    /// its `s` anchors of largest fused weight `w(u,a) = Σ p_ij w_ij(u,a)/v_ij`
    /// (within-view RBF kernels and CCA cross-view kernels, as
    /// `mvnmf_fused_graph`, between the item's view i and the anchor's view j),
    /// best first, in `idx` (`s × n` size_t) with their weights normalised to
    /// sum 1 in `z` (`s × n` doubles).
    ///
    /// * `anchors`: `n_views` dense views of the `m` anchors (same features as
    ///   `views`; e.g. from `mvnmf_anchors_kmeans`).
    /// * `train`: NULL (these are the training items), or the training items'
    ///   views, where the CCA directions are computed — for new items.
    /// * `scales`: `mvnmf_anchor_scales_len(n_views)` doubles, in and out: the
    ///   bandwidths (`i + j J`), then the mean item volumes (`J² + i + j J`); an
    ///   entry 0 is chosen from these items (bandwidth: `1/median d²` over a
    ///   sample of the items against all anchors), a positive entry is used. Pass
    ///   the training run's scales (and `train`) to embed new items.
    /// * `priors`: `J × J` (symmetric, ≥ 0, sum 1) or NULL (uniform).
    ///
    /// Memory: nothing of size `n × m` (items in blocks). Outputs are written
    /// only on success.
    fn mvnmf_anchor_graph(
        views: *const V = "`n_views`",
        n_views: usize,
        train, anchors: *const mvnmf_view = "`n_views` view descriptors",
        s: usize,
        priors: *const f64 = "`n_views × n_views` doubles",
        params: *const mvnmf_fused_graph_params,
        scales: *mut f64 = "`mvnmf_anchor_scales_len(n_views)` doubles (read and written)",
        idx: *mut usize = "`s × n` indices",
        z: *mut f64 = "`s × n` doubles",
        ..work(work, work_bytes),
    ) {
        let p = read_params(params)?;
        let vs = CViews::new(views, n_views)?;
        let av = CViews::new(anchors, n_views)?;
        let tv = (!train.is_null()).then(|| CViews::new(train, n_views)).transpose()?;
        let pr = priors_of(priors, n_views)?;
        let n = vs.shape(0).cols;
        let ns = n.checked_mul(s).ok_or(Error::SizeOverflow)?;
        require!(scales, idx, z);
        let sc = slice_mut(scales, mvnmf_anchor_scales_len(n_views))?;
        let ii = slice_mut(idx, ns)?;
        let zz = slice_mut(z, ns)?;
        let wk = work_of(work, work_bytes)?;
        graph::anchor_graph(&vs, tv.as_ref(), &av, s, pr, &p, sc, ii, zz, wk)?;
        Ok(mvnmf_status::Ok)
    }
    /// for these views (validated as the
    /// call validates them, values aside), `n_train` training items (the items themselves when there is no
    /// `train`), `m` anchors and these priors (NULL: uniform).
    workspace mvnmf_anchor_graph_workspace(..2,
        n_train, m: usize,
        priors: *const f64 = "`n_views × n_views` doubles",
        params: *const mvnmf_fused_graph_params,
    ) {
        let p = read_params(params)?;
        let pr = priors_of(priors, n_views)?;
        graph::anchor_graph_workspace::<f64>(shapes(views, n_views)?, n_train, m, pr, &p)
    };
}

/// The body of `mvnmf_fused_knn_graph` (`build` None) and
/// `mvnmf_fused_knn_graph_build` once their options are read: the views, the
/// priors, the graph's buffers (`n + 1` rows), `nnz` and the workspace, then
/// the graph built and its entries written to `*nnz`.
unsafe fn knn_graph(
    (views, n_views): (*const mvnmf_view, usize),
    (s, priors): (usize, *const f64),
    p: &FusedParams,
    build: Option<CBuild>,
    (out, nnz): (*const mvnmf_csr_buffers, *mut usize),
    (work, work_bytes): (*mut c_void, usize),
) -> Result<mvnmf_status, Error> {
    c_unsafe!({
        let vs = CViews::new(views, n_views)?;
        let pr = priors_of(priors, n_views)?;
        let n = vs.shape(0).cols;
        let mut o = csr_out(out, n)?;
        require!(nnz);
        let wk = work_of(work, work_bytes)?;
        *nnz = match build {
            None => graph::fused_knn_graph(&vs, s, pr, p, &mut o, wk)?,
            Some(b) => graph::fused_knn_graph_build(&vs, s, pr, p, &b.resolve(n), &mut o, wk)?,
        };
        Ok(mvnmf_status::Ok)
    })
}

export! {
    /// The capacity that always holds `mvnmf_fused_knn_graph`'s graph for `n`
    /// items and `s` neighbours: `min(2·n·s, n(n−1))` entries, into `*capacity`
    /// (written on success only).
    fn mvnmf_fused_knn_graph_capacity(
        n, s: usize,
        capacity: *mut usize = "one `size_t`",
    ) {
        require!(capacity);
        *capacity = graph::fused_knn_graph_capacity(n, s)?;
        Ok(mvnmf_status::Ok)
    };

    /// MVEL's kNN-sparsified fused graph: the weights of `mvnmf_fused_graph`
    /// (computed in blocks of items, never `n × n`), each item's `s < n` other
    /// items of largest weight normalised to sum 1 (`P`), symmetrised
    /// `W = (P + Pᵀ)/2` (total weight `n`, no self-loops; weights `≥ 0`: a
    /// neighbour whose weight underflows next to its row's largest, as for an
    /// item far from all others, keeps its edge with weight 0). Writes the CSR graph
    /// into `out` (`row_ptr[n + 1]`, sorted `col_idx`, `weights`; `capacity` from
    /// `mvnmf_fused_knn_graph_capacity` always suffices) and its entries into
    /// `*nnz`; use it as the affinity part of an `MVNMF_GRAPH_CSR` graph for
    /// `mvnmf_mvel_fit`. Cost `O(n²·d)` time, `O(n·s)` memory besides the
    /// workspace (`mvnmf_fused_knn_graph_build`: the same graph with NN-descent, about linear
    /// in `n`). Outputs are written only on success.
    fn mvnmf_fused_knn_graph(
        views: *const V = "`n_views`",
        n_views, s: usize,
        priors: *const f64 = "`n_views × n_views` doubles",
        params: *const mvnmf_fused_graph_params,
        out: *const mvnmf_csr_buffers = "one struct whose buffers hold its capacity",
        nnz: *mut usize = "one `size_t`",
        ..work(work, work_bytes),
    ) {
        let p = read_params(params)?;
        knn_graph((views, n_views), (s, priors), &p, None, (out, nnz), (work, work_bytes))
    }
    /// (validates the view descriptors
    /// as the call does, values aside).
    workspace mvnmf_fused_knn_graph_workspace(..5) {
        let p = read_params(params)?;
        let pr = priors_of(priors, n_views)?;
        graph::fused_knn_graph_workspace::<f64>(shapes(views, n_views)?, s, pr, &p)
    };

    /// `mvnmf_fused_knn_graph` with the neighbours found as `graph_build` says
    /// (`MVNMF_GRAPH_BUILD_EXACT`: bitwise `mvnmf_fused_knn_graph`, `O(n²·d)`;
    /// `MVNMF_GRAPH_BUILD_APPROX`: NN-descent with `ann` (NULL:
    /// `mvnmf_ann_params_default()`), about linear in `n`; `MVNMF_GRAPH_BUILD_AUTO`: exact
    /// below `MVNMF_GRAPH_AUTO_EXACT_BELOW` items). The approximate path estimates the
    /// bandwidths and volumes on a seeded sample of pairs (`ann->seed`), searches lists of
    /// `max(ann->k, 4s)` items under a surrogate of the fused weight made of per-view RBF
    /// kernels (the cross-view parts on the CCA projections), and keeps each item's `s` best
    /// by the fused weight itself; the same graph for every `ann->parallel`. Same arguments,
    /// contract and outputs as `mvnmf_fused_knn_graph` (capacity from
    /// `mvnmf_fused_knn_graph_capacity`); an unknown `graph_build`, `ann->leaf = 1` or a
    /// negative or non-finite `ann->delta` is `MVNMF_STATUS_BAD_PARAMETER`, refused before
    /// anything is written. Outputs are written only on success.
    fn mvnmf_fused_knn_graph_build(
        ..5, // `mvnmf_fused_knn_graph`'s first five parameters
        graph_build: u32,
        ann: *const mvnmf_ann_params = "one struct (NULL: the defaults)",
        out: *const mvnmf_csr_buffers = "one struct whose buffers hold its capacity",
        nnz: *mut usize = "one `size_t`",
        ..work(work, work_bytes),
    ) {
        let p = read_params(params)?;
        let b = CBuild::new(graph_build, read_ann(ann)?)?;
        knn_graph((views, n_views), (s, priors), &p, Some(b), (out, nnz), (work, work_bytes))
    }
    /// (validates the view descriptors
    /// as the call does, values aside, the options and `graph_build`).
    workspace mvnmf_fused_knn_graph_build_workspace(..6,
        ann: *const mvnmf_ann_params = "one struct (NULL: the defaults)",
    ) {
        let p = read_params(params)?;
        let b = CBuild::new(graph_build, read_ann(ann)?)?;
        let pr = priors_of(priors, n_views)?;
        let sh = shapes(views, n_views)?;
        let n = sh.clone().next().map_or(0, |v| v.cols);
        graph::fused_knn_graph_build_workspace::<f64>(sh, s, pr, &p, &b.resolve(n))
    };
}
