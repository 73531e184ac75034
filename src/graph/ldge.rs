//! LDGE, the local discriminant graph embedding (seed 003 §4.2, seed 000 eqs 4–5), built from
//! neighbours under the fused kernel.
//!
//! ```text
//! Wᵃ_ij = 1   if i ∈ N⁺_ka(j) or j ∈ N⁺_ka(i)       (N⁺_ka: the ka nearest labeled items of the same class)
//! Wᵖ_ij = 1   per [`Penalty`]: (i, j) among the kp nearest pairs between y_i (or y_j) and the other
//!             classes (seed 003), or i among the kp nearest other-class labeled items of j or j of i
//!             (seed 000)
//! ```
//!
//! Only labeled items have edges (unlabeled items are isolated rows). One blocked pass over the
//! labeled pairs finds every list at once (`O(N_l² Σ_v M_v)`; with `kp = 0`, one pass per
//! class); memory `O(N·(ka + kp) + block²)`, graphs in caller CSR buffers.

use super::build::{
    add_lists, check_counts, check_outs, check_sizes, Assembler, CsrOut, GraphNnz, GraphParams,
    PenaltyTop,
};
use crate::data::{ViewSet, ViewShape};
use crate::error::Error;
use crate::linalg::real::Real;
use crate::similarity::engine::{self, Engine, Mode};
use crate::similarity::topk::{Filter, TopK};
use crate::similarity::{self, median, ClassIndex, KernelSet, Layout};
use crate::work::{Stack, WorkReq};

fn req<T>(lay: &Layout, n_classes: usize, p: &GraphParams) -> WorkReq {
    let b = similarity::block_size(p.block, lay.n);
    let n = lay.n;
    WorkReq::all_of(&[
        ClassIndex::workspace(n, n_classes),
        TopK::workspace(n, p.ka),
        PenaltyTop::workspace(n, n_classes, p),
        Assembler::workspace(n, n.saturating_mul(p.ka)),
        Assembler::workspace(
            n,
            if p.kp == 0 {
                0
            } else {
                PenaltyTop::edges(n, n_classes, p)
            },
        ),
        median::scratch_req(lay),
        WorkReq::matrix::<T>(b, b),
        engine::workspace::<T>(lay, b),
    ])
}

/// Workspace bytes of [`ldge`].
pub fn ldge_workspace<T>(
    shapes: impl IntoIterator<Item = ViewShape>,
    kernels: &(impl KernelSet + ?Sized),
    n_classes: usize,
    params: &GraphParams,
) -> Result<usize, Error> {
    params.validate()?;
    let lay = similarity::layout(shapes, kernels)?;
    req::<T>(&lay, n_classes, params).bytes()
}

/// Builds LDGE's affinity and penalty graphs (module docs) under the fused kernel
/// `Σ_v η_v K_v` into `affinity` and `penalty` (symmetric CSR, weights 1, columns sorted:
/// accepted by [`super::CsrGraph::new`]); returns their entry counts. `kp = 0` gives an empty
/// penalty graph. Neighbour ties break by the lower index.
///
/// Errors, all before anything is written: `ka = 0`, `ka >= N`, `kp >= N` for item neighbours
/// ([`Error::BadParameter`]); shapes, values, kernels, `η` and labels as
/// [`crate::similarity::fused_knn`]; no labels, fewer than 2 labeled, a class with labeled items but
/// at most `ka` of them, too few other-class items or cross pairs for `kp`
/// ([`Error::TooFewLabeled`]); `row_ptr.len() != N + 1` ([`Error::DimensionMismatch`]);
/// `col_idx`/`weights` shorter than the graph ([`Error::BufferTooShort`]; [`super::ldge_capacity`]
/// is always enough); workspace.
#[allow(clippy::too_many_arguments)]
pub fn ldge<T: Real, VS: ViewSet<T> + ?Sized, KS: KernelSet + ?Sized>(
    views: &VS,
    kernels: &KS,
    eta: &[f64],
    labels: &[u32],
    n_classes: usize,
    params: &GraphParams,
    mut affinity: CsrOut<'_>,
    mut penalty: CsrOut<'_>,
    work: &mut [u8],
) -> Result<GraphNnz, Error> {
    params.validate()?;
    let lay = similarity::check_views(views, kernels)?;
    let n = lay.n;
    check_sizes(params, n)?;
    similarity::check_eta(eta, lay.h)?;
    if labels.is_empty() {
        return Err(Error::TooFewLabeled);
    }
    let nl = similarity::check_labels(labels, n, n_classes)?;
    check_outs(n, &affinity, &penalty)?;
    if nl < 2 {
        return Err(Error::TooFewLabeled);
    }
    let need = req::<T>(&lay, n_classes, params).bytes()?;
    let len = work.len();
    let b = similarity::block_size(params.block, n);
    let mut st = Stack::new(work);
    // Label checks first (they need only the class index).
    let ci = ClassIndex::new(labels, n, n_classes, &mut st)?;
    check_counts(&ci, params)?;
    if len < need {
        return Err(Error::WorkspaceTooSmall);
    }
    let idx: &mut [usize] = st.take_matrix(n, params.ka)?;
    let sim: &mut [f64] = st.take_matrix(n, params.ka)?;
    let mut aff = TopK::new(params.ka, idx, sim, Filter::Same(labels));
    let mut pen = if params.kp > 0 {
        Some(PenaltyTop::new(n, n_classes, labels, params, &mut st)?)
    } else {
        None
    };
    let mut asm_a = Assembler::new(n, n * params.ka, &mut st)?;
    let pe = if params.kp == 0 {
        0
    } else {
        PenaltyTop::edges(n, n_classes, params)
    };
    let mut asm_p = Assembler::new(n, pe, &mut st)?;
    let mut sc = median::Scratch::new(&lay, &mut st)?;
    let blk: &mut [T] = st.take_matrix(b, b)?;
    let mut eng = Engine::new(views, kernels, &lay, b, st)?;
    median::resolve(&mut eng, ci.labeled(), &mut sc, blk)?;
    eng.set_mode(Mode::Fused, Some(eta));
    match &mut pen {
        None => {
            for c in 0..ci.n_classes() {
                eng.sym(ci.class(c), blk, &mut aff)?;
            }
        }
        Some(p) => {
            let mut both = (aff, p);
            eng.sym(ci.labeled(), blk, &mut both)?;
            aff = both.0;
        }
    }
    for phase in 0..2 {
        add_lists(&mut asm_a, &aff, ci.labeled().iter().copied(), |_, _| true);
        if let Some(p) = &pen {
            p.add_to(&mut asm_p, ci.labeled(), n_classes);
        }
        if phase == 0 {
            asm_a.start_fill();
            asm_p.start_fill();
        }
    }
    let nnz = GraphNnz {
        affinity: asm_a.finish(),
        penalty: asm_p.finish(),
    };
    asm_a.check(&affinity)?;
    asm_p.check(&penalty)?;
    asm_a.write(&mut affinity, |_, _| 1.0);
    asm_p.write(&mut penalty, |_, _| 1.0);
    Ok(nnz)
}
