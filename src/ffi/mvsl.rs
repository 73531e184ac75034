//! C ABI of the graph-regularised multi-view solver (`crate::models::mvsl`).

use core::ffi::c_void;

use super::deep::{layers_arg, mvnmf_deep_params, read_layers, SITE as DEEP};
use super::util::*;
use crate::error::Error;
use crate::graph::{CsrGraph, CsrGraphs, DenseGraph, GraphOp, NoGraph, Sge};
use crate::models::deep::{self, DeepParams};
use crate::models::mvsl::{self, MvslParams};
use crate::steps::prox::Sparsity;

/// `sparsity`: no group norm.
pub const MVNMF_SPARSITY_NONE: u32 = 0;
/// `sparsity`: L1,2 (Σ_k ‖u_k‖₂), MvSL.
pub const MVNMF_SPARSITY_L12: u32 = 1;
/// `sparsity`: L1,∞ (Σ_k max_i |U_ik|), MCL/DMCL.
pub const MVNMF_SPARSITY_L1INF: u32 = 2;

/// Preset: joint multi-view NMF (α = β = γ = 0, vmax = ∞).
pub const MVNMF_MVSL_PRESET_JOINT_NMF: u32 = 0;
/// Preset: semi-supervised GNMF (affinity graph only, β = 0.02, vmax = 1).
pub const MVNMF_MVSL_PRESET_GNMF: u32 = 1;
/// Preset: MvSL (L1,2, α = 15, β = 0.02, vmax = 1; seed 003).
pub const MVNMF_MVSL_PRESET_MVSL: u32 = 2;
/// Preset: MCL (L1,∞, α = 100, β = 0.015, γ = 0.005, vmax = 1; seed 001).
pub const MVNMF_MVSL_PRESET_MCL: u32 = 3;

/// `mvnmf_graph.kind`: no graph (β is ignored).
pub const MVNMF_GRAPH_NONE: u32 = 0;
/// `mvnmf_graph.kind`: the simple graph embedding over the labeled items,
/// implicit (`labels`, `n_classes`), O(K·N) per product.
pub const MVNMF_GRAPH_SGE: u32 = 1;
/// `mvnmf_graph.kind`: explicit symmetric CSR affinity and/or penalty graphs.
pub const MVNMF_GRAPH_CSR: u32 = 2;
/// `mvnmf_graph.kind`: a dense symmetric affinity matrix, `n × n` doubles
/// (column-major) in `affinity_weights` (e.g. from `mvnmf_fused_graph`); no
/// penalty graph. One GEMM per product, `2Kn²` flops.
pub const MVNMF_GRAPH_DENSE: u32 = 3;

cparams! {
    /// Options of the MvSL family solver (MvSL-S/L/T, GNMF, MCL, joint NMF); start
    /// from `mvnmf_mvsl_params_preset` or `mvnmf_mvsl_params_default`.
    pub struct mvnmf_mvsl_params => MvslParams {
        /// Outer iterations at most.
        pub max_iter: u32,
        /// Relative-decrease tolerance (0: run all iterations).
        pub tol: f64,
        /// Division guard ε ≥ 0.
        pub eps: f64,
        /// Upper bound on V.
        pub vmax: f64,
        /// Seed of the random start.
        pub seed: u64,
        /// `MVNMF_INIT_RANDOM` or `MVNMF_INIT_GIVEN`.
        pub init: u32,
        /// `MVNMF_SPARSITY_NONE`, `_L12` or `_L1INF`.
        pub sparsity: u32,
        /// Group-sparsity weight α ≥ 0.
        pub alpha: f64,
        /// Graph weight β ≥ 0.
        pub beta: f64,
        /// L1 weight γ ≥ 0 on V.
        pub gamma: f64,
        /// Accepted composite-gradient steps per U-step (≥ 1).
        pub u_inner: u32,
        /// V updates per outer iteration (≥ 1).
        pub v_inner: u32,
        /// Lipschitz search increase factor (> 1).
        pub eta_up: f64,
        /// Lipschitz search decrease factor (≥ 1).
        pub eta_down: f64,
        /// Lower bound of the Lipschitz guess (≥ 0).
        pub l0: f64,
        /// How `tol` is applied: `MVNMF_STOP_RULE_EVERY_ITERATION` (default) or
        /// `MVNMF_STOP_RULE_SKLEARN`.
        pub stop_rule: u32 as stop,
        /// Who runs the parallel regions (default: serial); the results do not
        /// depend on it.
        pub parallel: mvnmf_parallel,
    } validate;
    /// The default options of `mvnmf_mvsl_fit` (what a NULL `params` means): the
    /// MvSL preset (`MVNMF_MVSL_PRESET_MVSL`).
    fn mvnmf_mvsl_params_default;
}

/// The graph of the V-step over the `n` items.
///
/// `MVNMF_GRAPH_NONE`: nothing else read. `MVNMF_GRAPH_SGE`: `labels[n]` (class
/// `< n_classes` or `MVNMF_UNLABELED`), at least two labeled. `MVNMF_GRAPH_CSR`:
/// `affinity_*` and/or `penalty_*` (a NULL `*_row_ptr` means "absent"), each a
/// symmetric nonnegative `n × n` CSR matrix with sorted column indices.
/// `MVNMF_GRAPH_DENSE`: `affinity_weights` holds `n × n` doubles (symmetric,
/// nonnegative); the other pointers are not read.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mvnmf_graph {
    /// `MVNMF_GRAPH_NONE`, `_SGE`, `_CSR` or `_DENSE`.
    pub kind: u32,
    /// Items (must equal the views' columns).
    pub n: usize,
    /// SGE: one label per item.
    pub labels: *const u32,
    /// SGE: number of classes.
    pub n_classes: usize,
    /// CSR affinity: `n + 1` row pointers (NULL: no affinity graph).
    pub affinity_row_ptr: *const usize,
    /// CSR affinity: column indices.
    pub affinity_col_idx: *const usize,
    /// CSR affinity: weights (`MVNMF_GRAPH_DENSE`: the `n × n` matrix).
    pub affinity_weights: *const f64,
    /// CSR penalty: `n + 1` row pointers (NULL: no penalty graph).
    pub penalty_row_ptr: *const usize,
    /// CSR penalty: column indices.
    pub penalty_col_idx: *const usize,
    /// CSR penalty: weights.
    pub penalty_weights: *const f64,
}

c_enum!(Sparsity {
    MVNMF_SPARSITY_NONE => None,
    MVNMF_SPARSITY_L12 => L12,
    MVNMF_SPARSITY_L1INF => L1Inf,
});

/// A validated C graph descriptor.
pub(super) enum AnyGraph<'a> {
    None(NoGraph),
    Sge(Sge<'a>),
    Csr(CsrGraphs<'a>),
    Dense(DenseGraph<'a, f64>),
}

/// The precisions a C graph applies to: the dense graph's weights are
/// `double`, so it serves the `double` solvers only; the `_f32` entry points
/// refuse it ([`AnyGraph::op`]) before anything runs.
pub(super) trait GraphScalar: crate::linalg::real::Real {
    /// The dense graph as an operator of this precision (`None`: refused).
    fn dense<'g>(g: &'g DenseGraph<'_, f64>) -> Option<&'g dyn GraphOp<Self>>;
}

impl GraphScalar for f64 {
    fn dense<'g>(g: &'g DenseGraph<'_, f64>) -> Option<&'g dyn GraphOp<f64>> {
        Some(g)
    }
}

impl GraphScalar for f32 {
    fn dense<'g>(_: &'g DenseGraph<'_, f64>) -> Option<&'g dyn GraphOp<f32>> {
        None
    }
}

impl AnyGraph<'_> {
    /// The graph for the solvers of precision `T`: a dense graph with the
    /// single-precision solvers is `MVNMF_STATUS_BAD_PARAMETER`.
    pub(super) fn op<T: GraphScalar>(&self) -> Result<&dyn GraphOp<T>, Error> {
        Ok(match self {
            AnyGraph::None(g) => g,
            AnyGraph::Sge(g) => g,
            AnyGraph::Csr(g) => g,
            AnyGraph::Dense(g) => T::dense(g).ok_or(Error::BadParameter)?,
        })
    }
}

/// Row pointers, column indices and weights of CSR rows.
pub(super) type CsrArrays<'a> = (&'a [usize], &'a [usize], &'a [f64]);

/// The arrays of `n` CSR rows from C (`None` for a NULL `rp`): `n + 1` row
/// pointers, then `rp[n]` column indices and weights. Their structure is
/// checked by whoever takes them (`CsrGraph::new`, the distributed fit).
pub(super) unsafe fn csr_arrays<'a>(
    n: usize,
    rp: *const usize,
    ci: *const usize,
    w: *const f64,
) -> Result<Option<CsrArrays<'a>>, Error> {
    c_unsafe!({
        if rp.is_null() {
            return Ok(None);
        }
        let row_ptr = slice(rp, n.checked_add(1).ok_or(Error::SizeOverflow)?)?;
        let nnz = row_ptr[n];
        Ok(Some((row_ptr, slice(ci, nnz)?, slice(w, nnz)?)))
    })
}

unsafe fn csr<'a>(
    n: usize,
    rp: *const usize,
    ci: *const usize,
    w: *const f64,
) -> Result<Option<CsrGraph<'a>>, Error> {
    c_unsafe!({
        match csr_arrays(n, rp, ci, w)? {
            None => Ok(None),
            Some((row_ptr, col_idx, weights)) => {
                Ok(Some(CsrGraph::new(n, row_ptr, col_idx, weights)?))
            }
        }
    })
}

/// Validates a graph descriptor (structure, labels, symmetry).
pub(super) unsafe fn read_graph<'a>(g: *const mvnmf_graph) -> Result<AnyGraph<'a>, Error> {
    c_unsafe!({
        require!(g);
        let g = &*g;
        nonzero!(g.n);
        match g.kind {
            MVNMF_GRAPH_NONE => Ok(AnyGraph::None(NoGraph { n: g.n })),
            MVNMF_GRAPH_SGE => {
                require!(g.labels);
                Ok(AnyGraph::Sge(Sge::new(slice(g.labels, g.n)?, g.n_classes)?))
            }
            MVNMF_GRAPH_CSR => {
                let a = csr(
                    g.n,
                    g.affinity_row_ptr,
                    g.affinity_col_idx,
                    g.affinity_weights,
                )?;
                let p = csr(g.n, g.penalty_row_ptr, g.penalty_col_idx, g.penalty_weights)?;
                Ok(AnyGraph::Csr(CsrGraphs::new(g.n, a, p)?))
            }
            MVNMF_GRAPH_DENSE => {
                let nn = g.n.checked_mul(g.n).ok_or(Error::SizeOverflow)?;
                require!(g.affinity_weights);
                Ok(AnyGraph::Dense(DenseGraph::new(
                    slice(g.affinity_weights, nn)?,
                    g.n,
                )?))
            }
            _ => Err(Error::BadParameter),
        }
    })
}

fn preset_of(preset: u32) -> Option<MvslParams> {
    Some(match preset {
        MVNMF_MVSL_PRESET_JOINT_NMF => MvslParams::joint_nmf(),
        MVNMF_MVSL_PRESET_GNMF => MvslParams::gnmf(),
        MVNMF_MVSL_PRESET_MVSL => MvslParams::mvsl(),
        MVNMF_MVSL_PRESET_MCL => MvslParams::mcl(),
        _ => return None,
    })
}

export! {
    /// Writes the preset's parameters to `out`; `MVNMF_STATUS_BAD_PARAMETER` for an
    /// unknown preset (then `out` is untouched).
    fn mvnmf_mvsl_params_preset(
        preset: u32,
        out: *mut mvnmf_mvsl_params = "one struct",
    ) {
        require!(out);
        let p = preset_of(preset).ok_or(Error::BadParameter)?;
        *out = CField::from_rust(&p);
        Ok(mvnmf_status::Ok)
    };
}

/// The argument positions of `mvnmf_mvsl_fit`, `_encode` and their `_f32`
/// twins (`views` 1, `n_views` 2, `graph` 3, `k` 4, `params` 5, `u` 6, `v` 7,
/// `work` 8, `work_bytes` 9, `progress` 10, `user` 11, `report` 12) that
/// the core's own checks concern.
const SITE: Site = Site::at(1, 4, 5, 3, 9);

/// The options (and rank) a graph-regularised fit or encode names.
pub(super) enum Model {
    /// `mvnmf_mvsl_*`: the options (argument 5) and `k`.
    Mvsl(*const mvnmf_mvsl_params, usize),
    /// `mvnmf_deep_*`: the options (argument 6), `layers` and `n_layers`.
    Deep(*const mvnmf_deep_params, (*const usize, usize)),
}

/// The body of the graph-regularised fits and encodes, `mvnmf_mvsl_*` and
/// `mvnmf_deep_*` (and their twins): the options, the graph (argument 3),
/// deep's layers (the rank is the last), then [`Site::solve`] with the
/// model's fit and encode.
pub(super) unsafe fn solve<D: ViewDesc>(
    views: (*const D, usize),
    graph: *const mvnmf_graph,
    model: Model,
    uv: (Bases<D::T>, *mut D::T, u32),
    tail: Tail,
) -> Result<mvnmf_status, Located>
where
    D::T: GraphScalar,
{
    c_unsafe!({
        match model {
            Model::Mvsl(params, k) => {
                let p: MvslParams = read_params(params).arg(5)?;
                let g = read_graph(graph).arg(3)?;
                let g = g.op::<D::T>().arg(3)?;
                SITE.solve(
                    views,
                    (k, &[]),
                    uv,
                    (p.init, tail),
                    |vs, us, v, w, m| mvsl::fit(vs, g, k, &p, us, v, w, m),
                    |vs, us, v, w, m| mvsl::encode(vs, g, k, &p, us, v, w, m),
                )
            }
            Model::Deep(params, (layers, n_layers)) => {
                let p: DeepParams = read_params(params).arg(6)?;
                let g = read_graph(graph).arg(3)?;
                let g = g.op::<D::T>().arg(3)?;
                let l = read_layers(layers, n_layers).arg(layers_arg(n_layers))?;
                DEEP.solve(
                    views,
                    (l[l.len() - 1], l),
                    uv,
                    (p.top.init, tail),
                    |vs, us, v, w, m| deep::fit(vs, g, l, &p, us, v, w, m),
                    |vs, us, v, w, m| deep::encode(vs, g, l, &p, us, v, w, m),
                )
            }
        }
    })
}

export! {
    /// The graph-regularised multi-view factorization (MvSL-S/L/T, GNMF, MCL,
    /// joint NMF):
    /// `min ½Σ_v‖X_v − U_v V‖² + α Σ_v R(U_v) + β/2[tr(V La Vᵀ) − tr(V Lp Vᵀ)] + γ ΣV`,
    /// `U ≥ 0`, `0 ≤ V ≤ vmax`. `u[v]` is `rows_v × k`, `v` is `k × N` (written;
    /// read with `MVNMF_INIT_GIVEN`). Cost per iteration: each view read twice,
    /// plus `O((Σ rows_v) k² u_inner + (k² N + k·nnz(graph)) v_inner)`.
    /// Returns `MVNMF_STATUS_CANCELLED` when `progress` returns nonzero (report
    /// written, outputs at the last complete iterate).
    ///
    #[doc = magnitudes_doc!()]
    ///
    /// The `_f32` twin: `float` views, `u[v]` and `v`; the graph, weights and
    /// report stay double. `MVNMF_GRAPH_DENSE` (double weights) is
    /// `MVNMF_STATUS_BAD_PARAMETER` there: give the graph as CSR.
    fn mvnmf_mvsl_fit / mvnmf_mvsl_fit_f32(
        views: *const V = "`n_views`",
        n_views: usize,
        graph: *const mvnmf_graph,
        k: usize,
        params: *const mvnmf_mvsl_params,
        u: *const *mut T = "`n_views` pointers to `rows_v × k`",
        v: *mut T = "`k × N`",
        ..solver(work, work_bytes, progress, user, report),
    ) at report {
        let tail = (work, work_bytes, progress, user, report);
        solve((views, n_views), graph, Model::Mvsl(params, k), (Bases::Fit(u), v, 6), tail)
    }
    /// (validates the view descriptors and the graph as the call does, values
    /// aside).
    workspace mvnmf_mvsl_fit_workspace / mvnmf_mvsl_fit_f32_workspace(..5) {
        let p = read_params(params)?;
        let g = read_graph(graph)?;
        let g = g.op::<T>()?;
        mvsl::fit_workspace::<T, _>(shapes(views, n_views)?, g, k, &p)
    };

    /// Out-of-sample encoding against fixed bases `u[v]` (read only): the V-steps
    /// of `mvnmf_mvsl_fit` (`graph` kind `MVNMF_GRAPH_NONE` for new items outside
    /// any graph), `v` (`k × N`) written.
    ///
    #[doc = encode_magnitudes_doc!()]
    fn mvnmf_mvsl_encode / mvnmf_mvsl_encode_f32(
        ..5, // `mvnmf_mvsl_fit`'s first five parameters
        u: *const *const T = "`n_views` pointers to `rows_v × k`",
        v: *mut T = "`k × N`",
        ..solver(work, work_bytes, progress, user, report),
    ) at report {
        let tail = (work, work_bytes, progress, user, report);
        solve((views, n_views), graph, Model::Mvsl(params, k), (Bases::Encode(u), v, 6), tail)
    }
    workspace mvnmf_mvsl_encode_workspace / mvnmf_mvsl_encode_f32_workspace(..5) {
        let p = read_params(params)?;
        let g = read_graph(graph)?;
        let g = g.op::<T>()?;
        mvsl::encode_workspace::<T, _>(shapes(views, n_views)?, g, k, &p)
    };
}
