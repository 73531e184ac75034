//! C ABI of the kernels, the MKL weights and the fused neighbour search
//! (`crate::similarity`), and the graph options and buffers the builders of
//! `ffi/graph.rs` share. Same conventions as the rest of the C ABI.
//!
//! * Views: the `mvnmf_view` array; kernels: one `mvnmf_kernel` per view.
//! * Labels: `labels[N]` (`N` = the views' columns), a class `< n_classes` or
//!   `MVNMF_UNLABELED`; NULL means "no labels" where a routine can do without them, and is
//!   `MVNMF_STATUS_NULL_POINTER` wherever the call needs labeled items (a median bandwidth,
//!   a labeled scope, a penalty graph): one rule for every routine.
//! * Fusion weights `eta[n_views]`: `>= 0`, positive sum (normalised to the simplex).

use core::ffi::c_void;

use super::util::*;
use crate::data::ViewSet;
use crate::error::Error;
use crate::graph::{GraphParams, Penalty};
use crate::similarity::{self, Bandwidth, Kernel, KernelSet, KnnParams, MklParams, MklReport};
use crate::similarity::{QpReport, Scope};

/// `mvnmf_kernel.kind`: linear `xᵀy` (normalised: cosine similarity).
pub const MVNMF_KERNEL_LINEAR: u32 = 0;
/// `mvnmf_kernel.kind`: Gaussian `exp(−γ‖x − y‖²)`; `gamma = 0` selects the median heuristic.
pub const MVNMF_KERNEL_RBF: u32 = 1;
/// `mvnmf_kernel.kind`: additive χ² `Σ 2xy/(x + y)` (nonnegative data).
pub const MVNMF_KERNEL_CHI_SQUARED: u32 = 2;
/// `mvnmf_kernel.kind`: histogram intersection `Σ min(x, y)` (nonnegative data).
pub const MVNMF_KERNEL_INTERSECTION: u32 = 3;

/// `mvnmf_fused_knn_params.scope`: every item among all the others.
pub const MVNMF_SCOPE_ALL: u32 = 0;
/// `mvnmf_fused_knn_params.scope`: labeled items among the other labeled items.
pub const MVNMF_SCOPE_LABELED: u32 = 1;
/// `mvnmf_fused_knn_params.scope`: labeled items among the labeled items of their class.
pub const MVNMF_SCOPE_SAME_CLASS: u32 = 2;
/// `mvnmf_fused_knn_params.scope`: labeled items among the labeled items of the other classes.
pub const MVNMF_SCOPE_OTHER_CLASS: u32 = 3;
/// `mvnmf_fused_knn_params.scope`: items with `query_mask[i] = 1` among the items with
/// `candidate_mask[j] = 1`, `j ≠ i`.
pub const MVNMF_SCOPE_MASKED: u32 = 4;

/// `mvnmf_graph_params.penalty`: the `kp` nearest pairs between each class and the others
/// (seed 003).
pub const MVNMF_PENALTY_CLASS_PAIRS: u32 = 0;
/// `mvnmf_graph_params.penalty`: each labeled item's `kp` nearest other-class labeled items
/// (seed 000).
pub const MVNMF_PENALTY_ITEM_NEIGHBORS: u32 = 1;

/// Written where there is no neighbour (`SIZE_MAX`; cbindgen cannot translate
/// `usize::MAX`, so `cbindgen.toml` writes the header's `#define`).
pub const MVNMF_NO_NEIGHBOR: usize = usize::MAX;

/// The base kernel of one view. Every kernel is normalised to
/// `K(i,j) / sqrt(K(i,i) K(j,j))`; an all-zero item under linear, χ² or intersection is
/// similar to nothing (1 on the diagonal, 0 elsewhere).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mvnmf_kernel {
    /// `MVNMF_KERNEL_*`.
    pub kind: u32,
    /// RBF only: `γ > 0`, or 0 for `1 / median(d²)` over the labeled pairs. Ignored otherwise.
    pub gamma: f64,
}

cparams! {
    /// Options of `mvnmf_fused_knn` and `mvnmf_class_pairs`; defaults from
    /// `mvnmf_fused_knn_params_default()`.
    pub struct mvnmf_fused_knn_params => KnnParams {
        /// Neighbours per query (class pairs: pairs per class), `>= 1` (default 5).
        pub k: usize,
        /// `MVNMF_SCOPE_*` (default `MVNMF_SCOPE_ALL`; unused by `mvnmf_class_pairs`).
        pub scope: u32 = MVNMF_SCOPE_ALL,
        /// Items per block side (0: default 256).
        pub block: usize,
        /// Who runs the search over all items (`MVNMF_SCOPE_ALL`) in up to four
        /// parts (default: serial); the neighbours do not depend on it.
        pub parallel: mvnmf_parallel,
    };
    /// The default fused-kNN options (`k = 5`, all items, default block).
    fn mvnmf_fused_knn_params_default;
}

// The set-up sampling has no C field yet (issue 30): `..default` keeps its
// default, exact up to `similarity::sample::AUTO_ABOVE` labeled items.
cparams! {
    /// Options of `mvnmf_mkl_weights`; defaults from `mvnmf_mkl_params_default()`.
    pub struct mvnmf_mkl_params => MklParams {
        /// Ridge relative to `mean(diag G)`, finite, `>= 0` (default 0.1).
        pub lambda: f64,
        /// Items per block side (0: default).
        pub block: usize,
    } ..default validate;
    /// The default MKL options (`lambda = 0.1` relative to `mean(diag G)`).
    fn mvnmf_mkl_params_default;
}

// The core's own structs, under their C names for Rust callers.
pub use crate::similarity::{MklReport as mvnmf_mkl_report, QpReport as mvnmf_qp_report};

cparams! {
    /// Options of the LDGE / TGE builders; defaults from `mvnmf_graph_params_default()`.
    pub struct mvnmf_graph_params => GraphParams {
        /// Affinity neighbours `>= 1` (default 5).
        pub ka: usize,
        /// Penalty neighbours / pairs per class (default 3; 0: empty penalty graph).
        pub kp: usize,
        /// `MVNMF_PENALTY_CLASS_PAIRS` (default) or `MVNMF_PENALTY_ITEM_NEIGHBORS`.
        pub penalty: u32,
        /// TGE's weight of label-derived edges, finite, `> 0` (default 2).
        pub sigma: f64,
        /// Items per block side (0: default).
        pub block: usize,
    } validate;
    /// The default graph options (`ka = 5`, `kp = 3`, class-pair penalty, `sigma = 2`).
    fn mvnmf_graph_params_default;
}

/// Caller buffers for one symmetric CSR graph of `N` items: `row_ptr[N + 1]`,
/// `col_idx[capacity]`, `weights[capacity]` (`mvnmf_ldge_capacity` / `mvnmf_tge_capacity`
/// give a capacity that is always enough).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mvnmf_csr_buffers {
    /// `N + 1` row pointers (written).
    pub row_ptr: *mut usize,
    /// Column indices, sorted within each row (written).
    pub col_idx: *mut usize,
    /// Weights (written).
    pub weights: *mut f64,
    /// Length of `col_idx` and of `weights`.
    pub capacity: usize,
}

/// The C kernel array as a [`KernelSet`] (validated on construction).
pub(super) struct CKernels<'a> {
    k: &'a [mvnmf_kernel],
}

pub(super) fn kernel_of(k: &mvnmf_kernel) -> Result<Kernel, Error> {
    Ok(match k.kind {
        MVNMF_KERNEL_LINEAR => Kernel::Linear,
        MVNMF_KERNEL_RBF if k.gamma == 0.0 => Kernel::Rbf(Bandwidth::Median),
        MVNMF_KERNEL_RBF if k.gamma.is_finite() && k.gamma > 0.0 => {
            Kernel::Rbf(Bandwidth::Gamma(k.gamma))
        }
        MVNMF_KERNEL_CHI_SQUARED => Kernel::ChiSquared,
        MVNMF_KERNEL_INTERSECTION => Kernel::Intersection,
        _ => return Err(Error::BadParameter),
    })
}

impl KernelSet for CKernels<'_> {
    fn count(&self) -> usize {
        self.k.len()
    }
    fn kernel(&self, v: usize) -> Kernel {
        // Validated in `ckernels`; the fallback is unreachable.
        self.k
            .get(v)
            .and_then(|k| kernel_of(k).ok())
            .unwrap_or(Kernel::Linear)
    }
}

pub(super) unsafe fn ckernels<'a>(
    p: *const mvnmf_kernel,
    n_views: usize,
) -> Result<CKernels<'a>, Error> {
    c_unsafe!({
        require!(p);
        let k = slice(p, n_views)?;
        for x in k {
            kernel_of(x)?;
        }
        Ok(CKernels { k })
    })
}

/// `labels[n]`, or no labels for NULL where the call does not `need` them; NULL where it
/// does is [`Error::NullPointer`] (issue 15: it was `TooFewLabeled`, which no header said).
pub(super) unsafe fn clabels<'a>(p: *const u32, n: usize, need: bool) -> Result<&'a [u32], Error> {
    if need {
        require!(p);
    }
    c_unsafe!(Ok(opt_slice(p, n)?.unwrap_or(&[])))
}

/// Does any view use the median bandwidth (which needs labeled items)?
pub(super) fn any_median(ks: &CKernels<'_>) -> bool {
    (0..ks.count()).any(|v| ks.kernel(v) == Kernel::Rbf(Bandwidth::Median))
}

pub(super) unsafe fn ceta<'a>(p: *const f64, n_views: usize) -> Result<&'a [f64], Error> {
    c_unsafe!({
        require!(p);
        slice(p, n_views)
    })
}

/// A 0/1 byte mask as booleans (other byte values: `MVNMF_STATUS_BAD_LABEL, as every 0/1 flag array`).
pub(super) unsafe fn cmask<'a>(p: *const u8, n: usize) -> Result<&'a [bool], Error> {
    c_unsafe!({
        require!(p);
        let m = slice(p, n)?;
        if m.iter().any(|&b| b > 1) {
            // One rule for every 0/1 flag array (relevance, multi-label, masks).
            return Err(Error::BadLabel);
        }
        // SAFETY: every byte is 0 or 1, the two valid `bool` representations.
        Ok(core::slice::from_raw_parts(m.as_ptr().cast::<bool>(), n))
    })
}

pub(super) unsafe fn read_graph(p: *const mvnmf_graph_params) -> Result<GraphParams, Error> {
    c_unsafe! { read_params(p) }
}

c_enum!(Penalty {
    MVNMF_PENALTY_CLASS_PAIRS => ClassPairs,
    MVNMF_PENALTY_ITEM_NEIGHBORS => ItemNeighbors,
});

export! {
    /// The `γ` of every RBF view (given, or `1 / median(d²)` over all unordered pairs of
    /// labeled items: the lower median) into `gammas[n_views]` (0 for other views). `labels`
    /// may be NULL when no view uses the median (else `MVNMF_STATUS_NULL_POINTER`).
    fn mvnmf_kernel_bandwidths(
        views: *const V = "`n_views`",
        n_views: usize,
        kernels: *const mvnmf_kernel = "`n_views` kernels",
        labels: *const u32 = "`N` labels",
        n_classes, block: usize,
        gammas: *mut f64 = "`n_views` doubles",
        ..work(work, work_bytes),
    ) {
        let vs = CViews::new(views, n_views)?;
        let ks = ckernels(kernels, n_views)?;
        let lab = clabels(labels, vs.shape(0).cols, any_median(&ks))?;
        require!(gammas);
        let g = slice_mut(gammas, n_views)?;
        let w = work_of(work, work_bytes)?;
        similarity::resolve_bandwidths(&vs, &ks, lab, n_classes, block, g, w)?;
        Ok(mvnmf_status::Ok)
    }
    /// (validates the view descriptors
    /// as the call does, values aside).
    workspace mvnmf_kernel_bandwidths_workspace(..3, n_classes, block: usize) {
        let ks = ckernels(kernels, n_views)?;
        similarity::resolve_bandwidths_workspace::<f64>(
            shapes(views, n_views)?,
            &ks,
            n_classes,
            block,
        )
    };

    /// Fusion weights by kernel–target alignment (seed 000 eq. 11): writes `eta[n_views]` on the
    /// simplex minimising `Σ_{i,j labeled} t_ij (Σ_v η_v K_v(i,j) − [y_i = y_j])² + λ‖η‖²`
    /// (`t_ij = 1/n_c²` within class c, `1/(2 n_c n_c')` across; `λ = lambda · mean(diag G)`).
    /// `labels` (not NULL) needs at least 2 labeled items. Cost `O(N_l² Σ_v rows_v)`, one pass.
    /// `report` may be NULL.
    fn mvnmf_mkl_weights(
        ..4, // `mvnmf_kernel_bandwidths`'s first four parameters
        n_classes: usize,
        params: *const mvnmf_mkl_params,
        eta: *mut f64 = "`n_views` doubles",
        ..work(work, work_bytes),
        report: *mut MklReport,
    ) {
        let p = read_params(params)?;
        let vs = CViews::new(views, n_views)?;
        let ks = ckernels(kernels, n_views)?;
        require!(labels, eta);
        let lab = clabels(labels, vs.shape(0).cols, true)?;
        let e = slice_mut(eta, n_views)?;
        let w = work_of(work, work_bytes)?;
        let r = similarity::mkl_weights(&vs, &ks, lab, n_classes, &p, e, w)?;
        put_opt(report, r);
        Ok(mvnmf_status::Ok)
    }
    /// .
    workspace mvnmf_mkl_weights_workspace(..3, n_classes: usize, params: *const mvnmf_mkl_params) {
        let p = read_params(params)?;
        let ks = ckernels(kernels, n_views)?;
        similarity::mkl_weights_workspace::<f64>(shapes(views, n_views)?, &ks, n_classes, &p)
    };

    /// The alignment QP's data: `g[n_views²]` (`G_uv = Σ t_ij K_u(i,j) K_v(i,j)`, column-major),
    /// `b[n_views]` (`b_v = Σ t_ij K_v(i,j) [y_i = y_j]`) and `*constant` (`Σ t_ij [y_i = y_j]`), so
    /// that the loss is `ηᵀGη − 2bᵀη + constant`.
    fn mvnmf_alignment_system(
        ..4, // `mvnmf_mkl_weights`'s first four parameters
        n_classes, block: usize,
        g: *mut f64 = "`n_views × n_views` doubles",
        b: *mut f64 = "`n_views` doubles",
        constant: *mut f64 = "one double",
        ..work(work, work_bytes),
    ) {
        let vs = CViews::new(views, n_views)?;
        let ks = ckernels(kernels, n_views)?;
        require!(labels, g, b, constant);
        let lab = clabels(labels, vs.shape(0).cols, true)?;
        let gg = out_ab(g, n_views, n_views)?;
        let bb = slice_mut(b, n_views)?;
        let w = work_of(work, work_bytes)?;
        *constant = similarity::alignment_system(&vs, &ks, lab, n_classes, block, gg, bb, w)?;
        Ok(mvnmf_status::Ok)
    }
    /// .
    workspace mvnmf_alignment_system_workspace(..3, n_classes, block: usize) {
        let ks = ckernels(kernels, n_views)?;
        similarity::alignment_system_workspace::<f64>(
            shapes(views, n_views)?,
            &ks,
            n_classes,
            block,
        )
    };

    /// `min ηᵀAη − 2bᵀη` on the simplex, exactly (supports enumerated for `h <= 16`, active set
    /// beyond): `a[h²]` symmetric positive semidefinite (column-major), `b[h]`, `eta[h]` written.
    /// Entries must be finite and at most `DBL_MAX / 4` in magnitude (else
    /// `MVNMF_STATUS_NON_FINITE_INPUT`: the objective could overflow).
    fn mvnmf_simplex_qp(
        a: *const f64 = "`h × h` doubles",
        b: *const f64 = "`h` doubles",
        h: usize,
        eta: *mut f64 = "`h` doubles",
        ..work(work, work_bytes),
        report: *mut QpReport,
    ) {
        nonzero!(h);
        require!(a, b, eta);
        let aa = slice_ab(a, h, h)?;
        let bb = slice(b, h)?;
        let e = slice_mut(eta, h)?;
        let w = work_of(work, work_bytes)?;
        let r = similarity::simplex_qp(aa, bb, e, w)?;
        put_opt(report, r);
        Ok(mvnmf_status::Ok)
    }
    /// for `h` weights.
    workspace mvnmf_simplex_qp_workspace(
        h: usize,
    ) {
        similarity::simplex_qp_workspace(h)
    };

    /// Exact `k` nearest neighbours under the fused kernel `K = Σ_v η_v K_v` (`d² = 2 − 2K`),
    /// block by block, never an `N × N` matrix. Writes `neighbors[N·k]` (item `i`'s list at
    /// `i·k`, best first, ties by the lower index; `MVNMF_NO_NEIGHBOR` for non-queries) and
    /// `sims[N·k]` (`K(i, j)`; `-inf` for non-queries). `labels` may be NULL for
    /// `MVNMF_SCOPE_ALL` / `_MASKED` without median kernels (else `MVNMF_STATUS_NULL_POINTER`);
    /// the masks (`N` bytes, 0 or 1) are
    /// read only for `MVNMF_SCOPE_MASKED` (else may be NULL). `k >= N` and `k = 0` are
    /// `MVNMF_STATUS_BAD_PARAMETER`; a labeled scope where a query has fewer than `k` candidates
    /// is `MVNMF_STATUS_TOO_FEW_LABELED`.
    fn mvnmf_fused_knn(
        views: *const V = "`n_views`",
        n_views: usize,
        kernels: *const mvnmf_kernel = "`n_views` kernels",
        eta: *const f64 = "`n_views` doubles",
        labels: *const u32 = "`N` labels",
        n_classes: usize,
        params: *const mvnmf_fused_knn_params,
        query_mask, candidate_mask: *const u8 = "`N` bytes",
        neighbors: *mut usize = "`N × k` indices",
        sims: *mut f64 = "`N × k` doubles",
        ..work(work, work_bytes),
    ) {
        let (p, code) = (read_params(params)?, c_params(params).scope);
        let vs = CViews::new(views, n_views)?;
        let ks = ckernels(kernels, n_views)?;
        let e = ceta(eta, n_views)?;
        let n = vs.shape(0).cols;
        let labeled_scope = matches!(
            code,
            MVNMF_SCOPE_LABELED | MVNMF_SCOPE_SAME_CLASS | MVNMF_SCOPE_OTHER_CLASS
        );
        let lab = clabels(labels, n, labeled_scope || any_median(&ks))?;
        let scope = match code {
            MVNMF_SCOPE_ALL => Scope::All,
            MVNMF_SCOPE_LABELED => Scope::Labeled,
            MVNMF_SCOPE_SAME_CLASS => Scope::SameClass,
            MVNMF_SCOPE_OTHER_CLASS => Scope::OtherClass,
            MVNMF_SCOPE_MASKED => Scope::Masked {
                query: cmask(query_mask, n)?,
                candidate: cmask(candidate_mask, n)?,
            },
            _ => return Err(Error::BadParameter),
        };
        require!(neighbors, sims);
        let (nb, s) = (out_ab(neighbors, n, p.k)?, out_ab(sims, n, p.k)?);
        let w = work_of(work, work_bytes)?;
        similarity::fused_knn(
            &vs,
            &ks,
            e,
            lab,
            n_classes,
            scope,
            &p,
            nb,
            s,
            w,
        )?;
        Ok(mvnmf_status::Ok)
    }
    /// .
    workspace mvnmf_fused_knn_workspace(..3,
        n_classes: usize,
        params: *const mvnmf_fused_knn_params,
    ) {
        let p = read_params(params)?;
        let ks = ckernels(kernels, n_views)?;
        similarity::fused_knn_workspace::<f64>(
            shapes(views, n_views)?,
            &ks,
            n_classes,
            &p,
        )
    };

    /// Per class `c`, the `kp = params->k` most similar pairs `(i, j)` under the fused kernel with
    /// `i` labeled of class `c` and `j` labeled of another class (seed 003's `N_kp(c)`): writes
    /// `pairs[2·n_classes·kp]` (`pairs[2(c·kp + p)] = i`, `pairs[2(c·kp + p) + 1] = j`) and
    /// `sims[n_classes·kp]`, best first; classes without labeled items get `MVNMF_NO_NEIGHBOR`.
    fn mvnmf_class_pairs(
        ..7, // `mvnmf_fused_knn`'s first seven parameters
        pairs: *mut usize = "`n_classes × kp × 2` indices",
        sims: *mut f64 = "`n_classes × kp` doubles",
        ..work(work, work_bytes),
    ) {
        let p = read_params(params)?;
        let vs = CViews::new(views, n_views)?;
        let ks = ckernels(kernels, n_views)?;
        let e = ceta(eta, n_views)?;
        require!(labels, pairs, sims);
        let lab = clabels(labels, vs.shape(0).cols, true)?;
        let ck = n_classes.checked_mul(p.k).ok_or(Error::SizeOverflow)?;
        let pp = out_ab(pairs, ck, 2)?;
        let s = slice_mut(sims, ck)?;
        let w = work_of(work, work_bytes)?;
        similarity::class_pairs(&vs, &ks, e, lab, n_classes, &p, pp, s, w)?;
        Ok(mvnmf_status::Ok)
    }
    /// .
    workspace mvnmf_class_pairs_workspace(..3,
        n_classes: usize,
        params: *const mvnmf_fused_knn_params,
    ) {
        let p = read_params(params)?;
        let ks = ckernels(kernels, n_views)?;
        similarity::class_pairs_workspace::<f64>(
            shapes(views, n_views)?,
            &ks,
            n_classes,
            &p,
        )
    };
}
