//! C ABI of the one-call pipeline (`crate::pipeline`).

use core::ffi::c_void;

use super::mvsl::mvnmf_mvsl_params;
use super::neighbors::MVNMF_GRAPH_BUILD_AUTO;
use super::neighbors::{mvnmf_ann_params, mvnmf_ann_params_default, read_ann, CBuild};
use super::similarity::{ckernels, mvnmf_graph_params, mvnmf_kernel, mvnmf_mkl_params};
use super::util::*;
use crate::error::Error;
use crate::pipeline::{self, Method, PipelineParams};
use crate::similarity::AnnParams;

/// `method`: joint multi-view NMF (labels unused).
pub const MVNMF_METHOD_JOINT_NMF: u32 = 0;
/// `method`: semi-supervised GNMF (within-class kNN affinity graph).
pub const MVNMF_METHOD_GNMF: u32 = 1;
/// `method`: MvSL-S (simple graph embedding).
pub const MVNMF_METHOD_MVSL_S: u32 = 2;
/// `method`: MvSL-L (local discriminant graph embedding).
pub const MVNMF_METHOD_MVSL_L: u32 = 3;
/// `method`: MvSL-T (transductive graph embedding).
pub const MVNMF_METHOD_MVSL_T: u32 = 4;
/// `method`: MCL (L1,∞, SGE).
pub const MVNMF_METHOD_MCL: u32 = 5;

cparams! {
    /// Options of `mvnmf_pipeline_fit`; start from `mvnmf_pipeline_params_preset`.
    pub struct mvnmf_pipeline_params => PipelineParams {
        /// `MVNMF_METHOD_*`.
        pub method: u32,
        /// Solver options (the method's preset weights).
        pub solver: mvnmf_mvsl_params,
        /// Neighbour graph options (GNMF, MvSL-L, MvSL-T).
        pub graph: mvnmf_graph_params,
        /// Nonzero: learn the fusion weights by kernel–target alignment; 0: uniform.
        pub learn_eta: u32,
        /// How MvSL-T's neighbour graph (TGE) is searched: `MVNMF_GRAPH_BUILD_EXACT`,
        /// `MVNMF_GRAPH_BUILD_APPROX` (NN-descent with `ann` for the lists over all items) or
        /// `MVNMF_GRAPH_BUILD_AUTO` (the default: exact below `MVNMF_GRAPH_AUTO_EXACT_BELOW`
        /// items, bitwise `MVNMF_GRAPH_BUILD_EXACT` there). GNMF's and MvSL-L's graphs are over
        /// the labeled items only and always exact.
        pub graph_build: u32 = MVNMF_GRAPH_BUILD_AUTO,
        /// MKL options.
        pub mkl: mvnmf_mkl_params,
        /// NN-descent options (`mvnmf_ann_params_default()`; read and checked whatever
        /// `graph_build` says). A one-thread `ann.parallel` means the solver's pool.
        pub ann: mvnmf_ann_params = mvnmf_ann_params_default(),
    };
    /// The default options of `mvnmf_pipeline_fit` (what a NULL `params` means):
    /// the MvSL-T preset (`MVNMF_METHOD_MVSL_T`), the best method on the real data
    /// of the README's table.
    fn mvnmf_pipeline_params_default;
}

c_enum!(Method {
    MVNMF_METHOD_JOINT_NMF => JointNmf,
    MVNMF_METHOD_GNMF => Gnmf,
    MVNMF_METHOD_MVSL_S => MvslS,
    MVNMF_METHOD_MVSL_L => MvslL,
    MVNMF_METHOD_MVSL_T => MvslT,
    MVNMF_METHOD_MCL => Mcl,
});

/// The options and the neighbour search of `*params` (NULL: the defaults): the
/// fields of C alone (`graph_build`, `ann`) read in place, the pool, if any, at
/// its address.
unsafe fn read_all(
    params: *const mvnmf_pipeline_params,
) -> Result<(PipelineParams, CBuild), Error> {
    c_unsafe!({
        let p = read_params(params)?;
        // Not through `c_params`: its copy would hand a host pool the address
        // of a local that is gone when the search runs.
        let b = match params.as_ref() {
            None => CBuild::new(MVNMF_GRAPH_BUILD_AUTO, AnnParams::default())?,
            Some(c) => CBuild::new(c.graph_build, read_ann(&c.ann)?)?,
        };
        Ok((p, b))
    })
}

export! {
    /// Writes the method's preset (papers' weights, seed-003 graph options, MKL on)
    /// to `out`; `MVNMF_STATUS_BAD_PARAMETER` for an unknown method.
    fn mvnmf_pipeline_params_preset(
        method: u32,
        out: *mut mvnmf_pipeline_params = "one struct",
    ) {
        require!(out);
        *out = CField::from_rust(&PipelineParams::preset(CField::to_rust(&method)?));
        Ok(mvnmf_status::Ok)
    };
}

/// What `mvnmf_pipeline_fit_report` writes: the factorization's report and the
/// size of the neighbour graphs the pipeline built.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mvnmf_pipeline_report {
    /// The factorization's report (what `mvnmf_pipeline_fit` writes).
    pub fit: mvnmf_report,
    /// Entries of the affinity graph built from the labels (CSR, both directions
    /// count; what `mvnmf_ldge` / `mvnmf_tge` return): 0 for the methods without a
    /// neighbour graph (joint NMF; MvSL-S and MCL, whose SGE is implicit).
    pub affinity_nnz: usize,
    /// Entries of the penalty graph built (0 when `kp = 0` or without a neighbour graph).
    pub penalty_nnz: usize,
}

/// The argument positions of `mvnmf_pipeline_fit`, `_fit_report` and the
/// `_f32` twin (`views` 1, `n_views` 2, `kernels` 3, `labels` 4, `n_classes`
/// 5, `k` 6, `params` 7, `u` 8, `v` 9, `eta` 10, `work` 11, `work_bytes` 12,
/// `progress` 13, `user` 14, `report` 15) that the core's own checks concern:
/// the labels stand for the graph (`BadLabel`, `TooFewLabeled`, a class
/// count they do not fit).
const SITE: Site = Site::at(1, 6, 7, 4, 12);

/// The body of both entry points: the pipeline's report, written to whichever
/// of `report` / `full` is not NULL (a refusal too, saying where).
#[allow(clippy::too_many_arguments)]
unsafe fn fit_c<D: ViewDesc>(
    views: *const D,
    n_views: usize,
    kernels: *const mvnmf_kernel,
    labels: *const u32,
    n_classes: usize,
    k: usize,
    params: *const mvnmf_pipeline_params,
    u: *const *mut D::T,
    v: *mut D::T,
    eta: *mut f64,
    work: *mut c_void,
    work_bytes: usize,
    progress: mvnmf_progress_fn,
    user: *mut c_void,
    report: *mut mvnmf_report,
    full: *mut mvnmf_pipeline_report,
) -> mvnmf_status {
    // A refusal is written to whichever report was given (`full`: its `fit`,
    // and no graph built).
    let refused = if full.is_null() {
        report
    } else {
        c_unsafe!(core::ptr::addr_of_mut!((*full).fit))
    };
    let st = entry_at!(refused, {
        let (p, b) = read_all(params).arg(7)?;
        let ks = ckernels(kernels, n_views).arg(3)?;
        let (vs, n) = read_views_at(views, n_views, 1)?;
        first_at(Error::NullPointer, &[(labels.is_null(), 4)])?;
        let lab = slice(labels, n).arg(4)?;
        let e = slice_mut(eta, n_views).arg(10)?;
        let mut us = factors_at(u, &vs, k, &[], |p: *mut D::T| p.is_null(), 8)?;
        let (vv, w) = outputs(v, k, n, (work, work_bytes), (9, 11))?;
        let build = b.resolve(n);
        let r = with_monitor(progress, user, |m| {
            let io = (lab, n_classes, k);
            pipeline::fit_graph(&vs, &ks, io, &p, &build, (&mut us, &mut *vv, e), w, m)
        });
        let r = r.map_err(|e| {
            let given = [
                Given::Factors(8, &us as &dyn Factors<D::T>),
                Given::Buf(9, &*vv, k),
            ];
            SITE.blame_start(e, &vs, p.solver.init, &given)
        })?;
        put_opt(
            full,
            mvnmf_pipeline_report {
                fit: r.fit.into(),
                affinity_nnz: r.graph.affinity,
                penalty_nnz: r.graph.penalty,
            },
        );
        finish(r.fit, report).arg(0)
    });
    if !full.is_null() && st != mvnmf_status::Ok && st != mvnmf_status::Cancelled {
        c_unsafe!({
            (*full).affinity_nnz = 0;
            (*full).penalty_nnz = 0;
        });
    }
    st
}

export! {
    /// The whole semi-supervised pipeline in one call: fusion weights `eta[n_views]`
    /// (written: learned by kernel–target alignment or uniform), the method's graph
    /// from `labels[N]` (`MVNMF_UNLABELED` for unknown items) under the fused
    /// kernel of `kernels[n_views]`, then the graph-regularised factorization into
    /// `u[v]` (`rows_v × k`) and `v` (`k × N`). Validated before anything is
    /// written; `MVNMF_STATUS_CANCELLED` if `progress` stops the call.
    /// `mvnmf_pipeline_fit_report` also reports the graphs' sizes.
    ///
    /// The neighbour graph (MvSL-T's TGE) is searched as `params->graph_build` says (exact,
    /// NN-descent with `params->ann`, or by size: `MVNMF_GRAPH_BUILD_AUTO`, the default, is
    /// exact below `MVNMF_GRAPH_AUTO_EXACT_BELOW` items).
    ///
    /// Progress: with a graph (GNMF, MvSL-L, MvSL-T) `progress` is called at the start
    /// (`fraction` 0) and the end (1) of `MVNMF_PHASE_SETUP` (the fusion weights) and of
    /// `MVNMF_PHASE_GRAPH` (the graph), with `iter` 0 and a zero objective, then once per
    /// iterate (`MVNMF_PHASE_ITERATIONS`). Stopped in a set-up phase, the call returns
    /// `MVNMF_STATUS_CANCELLED` with `u`, `v` and `eta` untouched and a report of 0 iterations,
    /// zero objectives and `MVNMF_STOP_CANCELLED` (`affinity_nnz` / `penalty_nnz`: the graph's
    /// sizes if it was built, else 0).
    ///
    #[doc = magnitudes_doc!()]
    fn mvnmf_pipeline_fit / mvnmf_pipeline_fit_f32(
        views: *const V = "`n_views`",
        n_views: usize,
        kernels: *const mvnmf_kernel = "`n_views` kernels",
        labels: *const u32 = "`N` labels",
        n_classes, k: usize,
        params: *const mvnmf_pipeline_params,
        u: *const *mut T = "`n_views` pointers to `rows_v × k`",
        v: *mut T = "`k × N`",
        eta: *mut f64 = "`n_views` doubles",
        ..solver(work, work_bytes, progress, user, report),
    ) {
        let null = core::ptr::null_mut();
        Ok(fit_c(views, n_views, kernels, labels, n_classes, k, params, u, v, eta, work,
            work_bytes, progress, user, report, null))
    }
    /// (one query for MKL, the graphs and the factorization; validates the
    /// view descriptors as the call does, values aside).
    workspace mvnmf_pipeline_fit_workspace / mvnmf_pipeline_fit_f32_workspace(..3,
        n_classes, k: usize,
        params: *const mvnmf_pipeline_params,
    ) {
        let (p, b) = read_all(params)?;
        let ks = ckernels(kernels, n_views)?;
        let s = shapes(views, n_views)?;
        let n = s.clone().next().map_or(0, |v| v.cols);
        pipeline::fit_graph_workspace::<T>(s, &ks, n_classes, k, &p, &b.resolve(n))
    };

    /// `mvnmf_pipeline_fit` with the same arguments, checks and outputs (bit for
    /// bit), but `report` (may be NULL) is an `mvnmf_pipeline_report`: the
    /// factorization's report and the entries of the neighbour graphs built.
    fn mvnmf_pipeline_fit_report(
        ..10, // `mvnmf_pipeline_fit`'s first ten parameters
        ..work(work, work_bytes),
        progress: mvnmf_progress_fn,
        user: *mut c_void,
        report: *mut mvnmf_pipeline_report,
    ) {
        let null = core::ptr::null_mut();
        Ok(fit_c(views, n_views, kernels, labels, n_classes, k, params, u, v, eta, work,
            work_bytes, progress, user, null, report))
    };
}
