//! C ABI of the deep layer-wise solver (`crate::models::deep`).

use core::ffi::c_void;

use super::mvsl::{mvnmf_graph, mvnmf_mvsl_params, read_graph, solve, Model};
use super::util::*;
use crate::error::Error;
use crate::models::deep::{self, DeepParams, DeepVInit};

/// Deep preset: DMCL (seed 001: L1,∞ on the top layer, β = 0.015, γ = 0.005,
/// vmax = 1, box on lower layers) with α = 10, the paper's α / 10, which did
/// better with two or more layers on the data tried (issue 20).
pub const MVNMF_DEEP_PRESET_DMCL: u32 = 0;
/// Deep preset: DNMF / ConcatDNMF (no regularisers, vmax = ∞).
pub const MVNMF_DEEP_PRESET_DNMF: u32 = 1;
/// `v_init`: V uniform in (0, vmax] after pre-training (the paper).
pub const MVNMF_DEEP_V_RANDOM: u32 = 0;
/// `v_init`: V = mean of the views' pre-trained top encodings.
pub const MVNMF_DEEP_V_PRETRAINED: u32 = 1;

cparams! {
    /// Options of the deep solver; start from `mvnmf_deep_params_preset`.
    pub struct mvnmf_deep_params => DeepParams {
        /// Solver options; `sparsity`/`alpha` act on the top layer. With
        /// `MVNMF_INIT_RANDOM` the layers are pre-trained; with `MVNMF_INIT_GIVEN`
        /// the buffers hold the start.
        pub top: mvnmf_mvsl_params,
        /// NMF iterations per layer in pre-training.
        pub pretrain_iter: u32,
        /// Nonzero: lower layers constrained to [0, 1] (removes the scale drift).
        pub box_lower: u32,
        /// `MVNMF_DEEP_V_RANDOM` or `MVNMF_DEEP_V_PRETRAINED`.
        pub v_init: u32,
    };
    /// The default options of `mvnmf_deep_fit` (what a NULL `params` means): the
    /// DMCL preset (`MVNMF_DEEP_PRESET_DMCL`).
    fn mvnmf_deep_params_default;
}

c_enum!(DeepVInit { MVNMF_DEEP_V_RANDOM => Random, MVNMF_DEEP_V_PRETRAINED => Pretrained });

pub(super) unsafe fn read_layers<'a>(
    layers: *const usize,
    n_layers: usize,
) -> Result<&'a [usize], Error> {
    c_unsafe!({
        if n_layers == 0 {
            return Err(Error::BadRank);
        }
        require!(layers);
        let l = slice(layers, n_layers)?;
        if l.contains(&0) {
            return Err(Error::BadRank);
        }
        Ok(l)
    })
}

export! {
    /// Writes the preset's parameters to `out` (`MVNMF_DEEP_PRESET_*`);
    /// `MVNMF_STATUS_BAD_PARAMETER` for an unknown preset.
    fn mvnmf_deep_params_preset(preset: u32, out: *mut mvnmf_deep_params = "one struct") {
        require!(out);
        let p = match preset {
            MVNMF_DEEP_PRESET_DMCL => DeepParams::dmcl(),
            MVNMF_DEEP_PRESET_DNMF => DeepParams::dnmf(),
            _ => return Err(Error::BadParameter),
        };
        *out = CField::from_rust(&p);
        Ok(mvnmf_status::Ok)
    };

    /// Number of doubles in the factor buffer of a view with `rows` features:
    /// the layers `U_1 (rows × p_1), …, U_M (p_{M−1} × K)` one after the other,
    /// hidden sizes clamped to `p_m = min(layers[m], p_{m−1})`, `K = layers[n_layers−1]`.
    /// `rows = 0` is `MVNMF_STATUS_ZERO_DIMENSION`.
    fn mvnmf_deep_factor_len(
        rows: usize,
        layers: *const usize = "`n_layers` sizes",
        n_layers: usize,
        len: *mut usize = "one size",
    ) {
        require!(len);
        let l = read_layers(layers, n_layers)?;
        *len = deep::factor_len(rows, l)?;
        Ok(mvnmf_status::Ok)
    };
}

/// The argument positions of `mvnmf_deep_fit`, `_encode` and their `_f32`
/// twins (`views` 1, `n_views` 2, `graph` 3, `layers` 4, `n_layers` 5,
/// `params` 6, `u` 7, `v` 8, `work` 9, `work_bytes` 10, `progress` 11,
/// `user` 12, `report` 13) that the core's own checks concern (the rank is
/// the last layer).
pub(super) const SITE: Site = Site::at(1, 4, 6, 3, 10);

/// The argument a `read_layers` refusal points to: `n_layers` (5) when
/// it is 0, else `layers` (4).
pub(super) fn layers_arg(n_layers: usize) -> u32 {
    if n_layers == 0 {
        5
    } else {
        4
    }
}

export! {
    /// Deep layer-wise multi-view factorization (DMCL; DNMF, ConcatDNMF; MCL with
    /// one layer): `X_v ≈ U_1^v ⋯ U_M^v V`, L1,∞ (or L1,2) on the top layer, graph
    /// on V, γ·ΣV, `0 ≤ V ≤ vmax`, lower layers in [0, 1] with `box_lower`.
    /// `u[v]` holds `mvnmf_deep_factor_len(rows_v, layers)` doubles, `v` is
    /// `K × N`. Pre-training (random init) then fine-tuning; the progress callback
    /// sees fine-tuning. Cost per sweep: each view read twice, plus
    /// `O(rows·p·(p + K))` per layer and the V-step's `O(K²N + K·nnz(graph))`.
    ///
    #[doc = magnitudes_doc!()]
    ///
    /// The `_f32` twin: `float` views, factor buffers
    /// (`mvnmf_deep_factor_len(rows_v, layers)` floats each) and `v`; graph,
    /// weights and report stay double (`MVNMF_GRAPH_DENSE` is refused: use CSR).
    fn mvnmf_deep_fit / mvnmf_deep_fit_f32(
        views: *const V = "`n_views`",
        n_views: usize,
        graph: *const mvnmf_graph,
        layers: *const usize = "`n_layers` sizes",
        n_layers: usize,
        params: *const mvnmf_deep_params,
        u: *const *mut T = "`n_views` pointers to `mvnmf_deep_factor_len(rows_v, layers)`",
        v: *mut T = "`K × N`",
        ..solver(work, work_bytes, progress, user, report),
    ) at report {
        let tail = (work, work_bytes, progress, user, report);
        let model = Model::Deep(params, (layers, n_layers));
        solve((views, n_views), graph, model, (Bases::Fit(u), v, 7), tail)
    }
    /// (pre-training and fine-tuning share it).
    workspace mvnmf_deep_fit_workspace / mvnmf_deep_fit_f32_workspace(..6) {
        let p = read_params(params)?;
        let g = read_graph(graph)?;
        let g = g.op::<T>()?;
        let l = read_layers(layers, n_layers)?;
        deep::fit_workspace::<T, _>(shapes(views, n_views)?, g, l, &p)
    };

    /// Out-of-sample encoding through the whole stack (`Ũ = U_1⋯U_M` per view,
    /// then the V-steps with the bases fixed); `u[v]` read only, `v` (`K × N`) written.
    ///
    #[doc = encode_magnitudes_doc!()]
    fn mvnmf_deep_encode / mvnmf_deep_encode_f32(
        ..6, // `mvnmf_deep_fit`'s first six parameters
        u: *const *const T = "`n_views` pointers to `mvnmf_deep_factor_len(rows_v, layers)`",
        v: *mut T = "`K × N`",
        ..solver(work, work_bytes, progress, user, report),
    ) at report {
        let tail = (work, work_bytes, progress, user, report);
        let model = Model::Deep(params, (layers, n_layers));
        solve((views, n_views), graph, model, (Bases::Encode(u), v, 7), tail)
    }
    workspace mvnmf_deep_encode_workspace / mvnmf_deep_encode_f32_workspace(..6) {
        let p = read_params(params)?;
        let g = read_graph(graph)?;
        let g = g.op::<T>()?;
        let l = read_layers(layers, n_layers)?;
        deep::encode_workspace::<T, _>(shapes(views, n_views)?, g, l, &p)
    };
}
