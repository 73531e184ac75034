//! The C ABI of `models::nmf`: NMF and joint multi-view NMF, fit and encode;
//! the NNDSVD start; β-divergence NMF.
//!
//! Every export is declared once, in one `export!` list (`ffi/declare.rs`):
//! the `double` calls in order, then their `_f32` twins (`float` views,
//! factors and encodings; options, objectives and report stay `double`), the
//! header's order. The one-view calls are the joint bodies on one view.

use core::ffi::c_void;

use super::util::*;
use crate::models::beta::{BetaParams, SKLEARN_EPSILON};
use crate::models::nmf::{self, NmfParams};
use crate::steps::{self, Nndsvd};

cparams! {
    /// Options of the NMF solvers; get the defaults from `mvnmf_nmf_params_default()`.
    pub struct mvnmf_nmf_params => NmfParams {
        /// Outer iterations at most (default 200).
        pub max_iter: u32,
        /// Relative-decrease tolerance (default 1e-6; 0 runs all iterations).
        pub tol: f64,
        /// Division guard ε ≥ 0 (default DBL_EPSILON).
        pub eps: f64,
        /// Upper bound on V (default +inf; the papers' bounded models use 1).
        pub vmax: f64,
        /// Seed of the random start (default 0).
        pub seed: u64,
        /// `MVNMF_INIT_RANDOM` (default) or `MVNMF_INIT_GIVEN`.
        pub init: u32,
        /// How `tol` is applied: `MVNMF_STOP_RULE_EVERY_ITERATION` (default) or
        /// `MVNMF_STOP_RULE_SKLEARN`.
        pub stop_rule: u32 as stop,
        /// Who runs the parallel regions (default: serial); the results do not
        /// depend on it.
        pub parallel: mvnmf_parallel,
    } validate;
    /// The default NMF options.
    fn mvnmf_nmf_params_default;
}

/// The argument positions of `mvnmf_joint_nmf_fit`, `_encode` and their
/// `_f32` twins (`views` 1, `n_views` 2, `k` 3, `params` 4, `u` 5, `v` 6,
/// `work` 7, `work_bytes` 8, `progress` 9, `user` 10, `report` 11) that the
/// core's own checks concern.
const JOINT: Site = Site::at(1, 3, 4, 0, 8);

/// The positions of `mvnmf_beta_nmf_fit` and its `_f32` twin (`views` 1,
/// `n_views` 2, `k` 3, `beta` 4, `clip` 5, `masks` 6, `params` 7, `u` 8,
/// `v` 9, `work` 10, `work_bytes` 11, `progress` 12, `user` 13, `report` 14):
/// a mask byte neither 0 nor 1 (`BadLabel`) is `masks`.
const BETA: Site = Site::at(1, 3, 7, 6, 11);

/// What `beta_params` refuses: `beta` (4) outside `[0, 2]`, else `clip`
/// (5); the options were read before.
fn beta_arg(beta: f64) -> u32 {
    if (0.0..=2.0).contains(&beta) {
        5
    } else {
        4
    }
}

/// The joint bodies' positions seen from the one-view entry points
/// (`mvnmf_nmf_fit(x, k, params, u, v, ...)`: `x` stands for `views,
/// n_views`, so every later argument is one place earlier; the view is 0).
fn one_view(mut l: Located, single: bool) -> Located {
    if single && l.at.arg >= 2 {
        l.at.arg -= 1;
    }
    l
}

/// The body of the joint fits and encodes (`mvnmf_joint_nmf_fit`, `_encode`;
/// `single`: `mvnmf_nmf_fit`, `_encode`, their one view at argument 1) and
/// their twins: the options (argument 4), then [`Site::solve`].
unsafe fn joint<D: ViewDesc>(
    views: (*const D, usize),
    k: usize,
    params: *const mvnmf_nmf_params,
    (u, v): (Bases<D::T>, *mut D::T),
    tail: Tail,
    single: bool,
) -> Result<mvnmf_status, Located> {
    let body = || {
        c_unsafe!({
            let p = read_params(params).arg(4)?;
            JOINT.solve(
                views,
                (k, &[]),
                (u, v, 5),
                (p.init, tail),
                |vs, us, v, w, m| nmf::joint_fit(vs, k, &p, us, v, w, m),
                |vs, us, v, w, m| nmf::joint_encode(vs, k, &p, us, v, w, m),
            )
        })
    };
    body().map_err(|l| one_view(l, single))
}

/// The workspace of the joint fits (`encode`: the encodes) on these views.
unsafe fn joint_size<D: ViewDesc>(
    views: *const D,
    n_views: usize,
    k: usize,
    params: *const mvnmf_nmf_params,
    encode: bool,
) -> Result<usize, Error> {
    let p = c_unsafe!(read_params(params))?;
    let s = c_unsafe!(shapes(views, n_views))?;
    if encode {
        nmf::joint_encode_workspace::<D::T>(s, k, &p)
    } else {
        nmf::joint_fit_workspace::<D::T>(s, k, &p)
    }
}

/// `mvnmf_nndsvd`: zeros kept (Boutsidis & Gallopoulos' NNDSVD).
pub const MVNMF_NNDSVD: u32 = 0;
/// `mvnmf_nndsvd`: zeros filled with the mean of the data (NNDSVDa;
/// scikit-learn's default start).
pub const MVNMF_NNDSVDA: u32 = 1;
/// `mvnmf_nndsvd`: zeros filled with `|mean · g| / 100`, `g` standard normal
/// from `seed` (NNDSVDar).
pub const MVNMF_NNDSVDAR: u32 = 2;

/// The β options: `clip < 0` is scikit-learn's `EPSILON`.
fn beta_params(beta: f64, clip: f64, iter: NmfParams) -> Result<BetaParams, Error> {
    let clip = if clip < 0.0 { SKLEARN_EPSILON } else { clip };
    let b = BetaParams { beta, iter, clip };
    b.validate()?;
    Ok(b)
}

c_enum!(Nndsvd {
    MVNMF_NNDSVD => Plain,
    MVNMF_NNDSVDA => A,
    MVNMF_NNDSVDAR => Ar,
});

export! {
    /// Joint multi-view NMF: `min ½ Σ_v ‖X_v − U_v V‖²_F`, `U_v ≥ 0`, `0 ≤ V ≤ vmax`.
    ///
    /// `views[n_views]` share `N` items; `u[v]` points at `rows_v × k` doubles and
    /// `v` at `k × N` doubles (written; read with `MVNMF_INIT_GIVEN`). `work` holds
    /// at least `mvnmf_joint_nmf_fit_workspace` bytes. Cost per iteration: each view
    /// is read twice (`X Vᵀ`, `Uᵀ X`): dense `4·rows·N·k` flops, CSC `O(nnz·k)`.
    /// Returns `MVNMF_STATUS_CANCELLED` (report written, outputs at the last
    /// complete iterate) when `progress` returns nonzero. The `_f32` twin: the
    /// same updates, checks and report (objectives accumulated in double), about
    /// half the memory traffic, results agreeing with it to `float` rounding.
    ///
    #[doc = magnitudes_doc!()]
    fn mvnmf_joint_nmf_fit / mvnmf_joint_nmf_fit_f32(
        views: *const V = "`n_views`",
        n_views, k: usize,
        params: *const mvnmf_nmf_params,
        u: *const *mut T = "`n_views` pointers to `rows_v × k`",
        v: *mut T = "`k × N`",
        ..solver(work, work_bytes, progress, user, report),
    ) at report {
        let tail = (work, work_bytes, progress, user, report);
        joint((views, n_views), k, params, (Bases::Fit(u), v), tail, false)
    }
    /// (validates the view descriptors as the call does: pointers, strides,
    /// CSC structure; not the values).
    workspace mvnmf_joint_nmf_fit_workspace / mvnmf_joint_nmf_fit_f32_workspace(..4) {
        joint_size::<V>(views, n_views, k, params, false)
    };

    /// Out-of-sample encoding: `min_{0 ≤ V ≤ vmax} ½ Σ_v ‖X_v − U_v V‖²_F` with the
    /// bases `u[v]` (`rows_v × k`, read only) fixed; `v` (`k × N`) written.
    /// Cost: one pass over each view, then `O(k²N)` per iteration.
    ///
    #[doc = encode_magnitudes_doc!()]
    fn mvnmf_joint_nmf_encode / mvnmf_joint_nmf_encode_f32(
        ..4, // `mvnmf_joint_nmf_fit`'s first four parameters
        u: *const *const T = "`n_views` pointers to `rows_v × k`",
        v: *mut T = "`k × N`",
        ..solver(work, work_bytes, progress, user, report),
    ) at report {
        let tail = (work, work_bytes, progress, user, report);
        joint((views, n_views), k, params, (Bases::Encode(u), v), tail, false)
    }
    /// (validated as the call validates them, values aside).
    workspace mvnmf_joint_nmf_encode_workspace / mvnmf_joint_nmf_encode_f32_workspace(..4) {
        joint_size::<V>(views, n_views, k, params, true)
    };

    /// NMF of one view: `min ½‖X − U V‖²_F`, `U ≥ 0`, `0 ≤ V ≤ vmax`; `u` is
    /// `rows × k`, `v` is `k × cols`. Same contract as `mvnmf_joint_nmf_fit`.
    fn mvnmf_nmf_fit / mvnmf_nmf_fit_f32(
        x: *const V = "one",
        k: usize,
        params: *const mvnmf_nmf_params,
        u: *mut T = "`rows × k`",
        v: *mut T = "`k × cols`",
        ..solver(work, work_bytes, progress, user, report),
    ) at report {
        let (us, tail) = ([u], (work, work_bytes, progress, user, report));
        joint((x, 1), k, params, (Bases::Fit(us.as_ptr()), v), tail, true)
    }
    /// (as `mvnmf_joint_nmf_fit_workspace` on one view).
    workspace mvnmf_nmf_fit_workspace / mvnmf_nmf_fit_f32_workspace(..3) {
        joint_size::<V>(x, 1, k, params, false)
    };

    /// Out-of-sample encoding for one view against the basis `u` (`rows × k`).
    fn mvnmf_nmf_encode / mvnmf_nmf_encode_f32(
        ..3, // `mvnmf_nmf_fit`'s first three parameters
        u: *const T = "`rows × k`",
        v: *mut T = "`k × cols`",
        ..solver(work, work_bytes, progress, user, report),
    ) at report {
        let (us, tail) = ([u], (work, work_bytes, progress, user, report));
        joint((x, 1), k, params, (Bases::Encode(us.as_ptr()), v), tail, true)
    }
    /// (as `mvnmf_joint_nmf_encode_workspace` on one view).
    workspace mvnmf_nmf_encode_workspace / mvnmf_nmf_encode_f32_workspace(..3) {
        joint_size::<V>(x, 1, k, params, true)
    };

    /// The deterministic SVD-based start (NNDSVD, scikit-learn's definition;
    /// `variant` one of `MVNMF_NNDSVD`, `MVNMF_NNDSVDA`, `MVNMF_NNDSVDAR`) of the
    /// stacked views `[X1; …; XH]` at rank `k`, written to `u[v]` (`M_v × k`) and
    /// `v` (`k × N`); then fit any model from it with `MVNMF_INIT_GIVEN`. The top
    /// `k` singular triplets are exact (the smaller Gram matrix's
    /// eigendecomposition), so with one view the start equals scikit-learn's
    /// `NMF(init=...)` up to its randomized SVD's error. Cost `s²·l + 9s³` flops
    /// (`s`, `l` the smaller and larger of `ΣM`, `N`); workspace `ΣM·N` doubles
    /// plus `s²`. Outputs are written only on success.
    fn mvnmf_nndsvd(
        views: *const V = "`n_views`",
        n_views, k: usize,
        variant: u32,
        seed: u64,
        u: *const *mut T = "`n_views` pointers to `M_v × k`",
        v: *mut T = "`k × N`",
        ..work(work, work_bytes),
    ) {
        let var: Nndsvd = CField::to_rust(&variant)?;
        let vs = CViews::new(views, n_views)?;
        // The query's checks (shapes, `1 ≤ k ≤ min(ΣM, N)`, sizes) before the
        // buffers', so that both give the same status.
        steps::nndsvd_workspace::<f64>((0..vs.count()).map(|i| vs.shape(i)), k)?;
        let n = vs.shape(0).cols;
        let mut us = factors::<*mut f64, _>(u, &vs, k, &[], |p| p.is_null())?;
        let (vv, wk) = outputs(v, k, n, (work, work_bytes), (7, 8))?;
        steps::nndsvd(&vs, k, var, seed, &mut us, vv, wk)?;
        Ok(mvnmf_status::Ok)
    }
    /// for these views (validated as the call validates them, values aside)
    /// and rank `k`.
    workspace mvnmf_nndsvd_workspace(..3) {
        steps::nndsvd_workspace::<f64>(shapes(views, n_views)?, k)
    };

    /// NMF (one view) or joint NMF (several, shared `V`) under the β-divergence,
    /// `β ∈ [0, 2]`: 1 Kullback–Leibler, 0 Itakura–Saito, 2 half the squared
    /// Frobenius distance; the majorise–minimise multiplicative updates of Févotte
    /// & Idier, as scikit-learn's `NMF(solver="mu", beta_loss=β)`; the objective
    /// never increases. `clip`: the floor of `UV` where `X = 0` (in `Y^(β−1)` for β < 1, and
    /// zero denominators), as scikit-learn's `EPSILON` (negative: that default,
    /// 1.19e-7; 0: the exact update); where `X > 0` the exact ratio, floored only at
    /// `ω_v·2^-256`. `params`
    /// gives iterations, tolerance, seed and start (`eps`, `vmax` unused; NULL:
    /// defaults). Dense views for any β; CSC views with β = 1 only (O(nnz·K) per
    /// product); with β ≤ 0 no entry of X may be 0 (`MVNMF_STATUS_BAD_PARAMETER`).
    /// `masks`: NULL (every entry observed) or `n_views` pointers, each NULL (that
    /// view fully observed) or `rows_v × N` bytes, column-major, 1 observed, 0
    /// missing: missing entries do not count in the loss and are never read (any
    /// value, NaN included), the weighted MM updates stay monotone (β = 2 is
    /// weighted Frobenius NMF); masks only on dense views. Report term
    /// `MVNMF_TERM_DIVERGENCE`. Outputs as `mvnmf_joint_nmf_fit`.
    ///
    /// Magnitudes: each view is fitted at its own power-of-two scale (its largest
    /// entry in [1, 2)), the views' divergences weighted to keep the caller's
    /// objective exactly (`d_β` is homogeneous of degree β), so views far apart
    /// (e.g. near 1e-10 and 1e10) and tiny data (subnormals) are fitted as data
    /// near 1. Refused with `MVNMF_STATUS_INPUT_TOO_LARGE` (nothing written): an
    /// entry above `2^999` (about `5e300`; `_f32`: `2^103`, about `1e31`, so that
    /// the bases stay representable), or `Σ_v Σ_ij x_ij^β` above `2^1000` (the
    /// objective; for β = 2 the `½ Σ‖X‖²_F ≤ 2^999` of the other solvers, for
    /// β = 0 no bound). A `MVNMF_INIT_GIVEN` start whose objective is not finite
    /// (`UV = 0` where `X > 0` for β ≤ 1), or whose `U`, `V` or largest `UV` entry
    /// is more than `2^256` (`_f32`: `2^32`) off the view's scale (the view's
    /// largest entry), is `MVNMF_STATUS_BAD_PARAMETER`. `MVNMF_STATUS_OK` always comes with finite
    /// factors and objectives (a non-finite one, which these rules exclude, would
    /// be `MVNMF_STATUS_INTERNAL`, outputs at the last iterate). The objective
    /// never rises wherever the clip does not act (`X > 0`; everywhere with
    /// `clip = 0`).
    /// The `_f32` twin holds its iterates in double, so with `clip = 0` `Y` is
    /// floored at `2^-256` as in double.
    fn mvnmf_beta_nmf_fit / mvnmf_beta_nmf_fit_f32(
        views: *const V = "`n_views`",
        n_views, k: usize,
        beta, clip: f64,
        masks: *const *const u8 = "`n_views` pointers, each NULL or to `rows_v × N` bytes",
        params: *const mvnmf_nmf_params,
        u: *const *mut T = "`n_views` pointers to `rows_v × k`",
        v: *mut T = "`k × N`",
        ..solver(work, work_bytes, progress, user, report),
    ) at report {
        let p = read_params(params).arg(7)?;
        let p = beta_params(beta, clip, p).arg(beta_arg(beta))?;
        let (vs, n) = read_views_at(views, n_views, 1)?;
        // Each non-NULL mask spans `rows_v × N` bytes (saturated: refused as
        // `SIZE_OVERFLOW` when that overflows).
        let cm = bufs(masks, n_views, |i| vs.shape(i).rows.saturating_mul(n), true).arg(6)?;
        let mut us = factors_at(u, &vs, k, &[], |p: *mut T| p.is_null(), 8)?;
        let (vv, w) = outputs(v, k, n, (work, work_bytes), (9, 10))?;
        let r = with_monitor(progress, user, |m| {
            crate::models::beta::fit_masked(&vs, &cm, k, &p, &mut us, &mut *vv, w, m)
        });
        let r = r.map_err(|e| {
            let given = [Given::Factors(8, &us as &dyn Factors<T>), Given::Buf(9, &*vv, k)];
            BETA.blame_start(e, &vs, p.iter.init, &given)
        })?;
        finish(r, report).arg(0)
    }
    workspace mvnmf_beta_nmf_fit_workspace / mvnmf_beta_nmf_fit_f32_workspace(..3,
        beta: f64,
        params: *const mvnmf_nmf_params,
    ) {
        let p = beta_params(beta, -1.0, read_params(params)?)?;
        crate::models::beta::fit_workspace::<T>(shapes(views, n_views)?, k, &p)
    };
}
