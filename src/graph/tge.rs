//! TGE, the transductive graph embedding (seed 003 §4.3, eqs 12–13), built from neighbours
//! under the fused kernel.
//!
//! ```text
//! Wᵃ_ij = σ   if i ∈ N⁺_ka(j) or j ∈ N⁺_ka(i)                          (labeled, same class, as LDGE)
//!         1   if i or j is unlabeled, and i ∈ N_ka(j) or j ∈ N_ka(i)   (N_ka: ka nearest among all items)
//!         0   otherwise (in particular labeled pairs that are only global neighbours)
//! Wᵖ_ij = σ × LDGE's penalty (either [`Penalty`]; labeled items only)
//! ```
//!
//! The graph covers all `N` items. One blocked pass over all `N²/2` pairs fills the global, the
//! same-class and the penalty lists together (`O(N² Σ_v M_v)`); memory
//! `O(N·(2ka + kp) + block²)`, times up to five past one block row of items (the sweep's
//! parts, see [`tge`]). With no labels at all (and `kp = 0`) it is the plain kNN graph.

use super::build::{
    add_lists, assemble_tge, check_counts, Assembler, CsrOut, GraphNnz, GraphParams, PenaltyTop,
};
use super::neighbors::{Checked, Request};
use crate::data::{ViewSet, ViewShape};
use crate::error::Error;
use crate::linalg::real::Real;
use crate::par::Parallel;
use crate::similarity::engine::{self, part_count, sym_in_parts, Engine, Mode, PartCtx};
use crate::similarity::topk::{Filter, TopK};
use crate::similarity::{self, median, ClassIndex, KernelSet, Layout};
use crate::work::{Stack, WorkReq};

fn req<T>(lay: &Layout, n_classes: usize, p: &GraphParams) -> WorkReq {
    let b = similarity::block_size(p.block, lay.n);
    let n = lay.n;
    WorkReq::all_of(&[
        ClassIndex::workspace(n, n_classes),
        WorkReq::new::<usize>(n),
        TopK::workspace(n, p.ka),
        TopK::workspace(n, p.ka),
        PenaltyTop::workspace(n, n_classes, p),
        Assembler::workspace(n, n.saturating_mul(p.ka).saturating_mul(2)),
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
        part_req::<T>(lay, n_classes, p).times(part_count(n, b)),
    ])
}

/// One part's workspace of the sweep in parts: its heaps ([`heaps`]), its
/// block and its evaluator.
fn part_req<T>(lay: &Layout, n_classes: usize, p: &GraphParams) -> WorkReq {
    let b = similarity::block_size(p.block, lay.n);
    let n = lay.n;
    let heaps = WorkReq::all_of(&[
        TopK::workspace(n, p.ka),
        TopK::workspace(n, p.ka),
        PenaltyTop::workspace(n, n_classes, p),
    ]);
    engine::part_req::<T>(lay, b, b.saturating_mul(b), heaps)
}

/// The heaps of a sweep: global and same-class `ka` neighbours, penalty.
type Heaps<'w> = (TopK<'w>, TopK<'w>, Option<PenaltyTop<'w>>);

/// Empty heaps of a sweep over `n` items, from `st`.
fn heaps<'w, 's: 'w>(
    n: usize,
    (labels, n_classes): (&'w [u32], usize),
    params: &GraphParams,
    st: &mut Stack<'s>,
) -> Result<Heaps<'w>, Error> {
    let (gi, gs) = (st.take_matrix(n, params.ka)?, st.take_matrix(n, params.ka)?);
    let (si, ss) = (st.take_matrix(n, params.ka)?, st.take_matrix(n, params.ka)?);
    let glob = TopK::new(params.ka, gi, gs, Filter::Any);
    let same = TopK::new(params.ka, si, ss, Filter::Same(labels));
    let pen = if params.kp > 0 {
        Some(PenaltyTop::new(n, n_classes, labels, params, st)?)
    } else {
        None
    };
    Ok((glob, same, pen))
}

/// Workspace bytes of [`tge`].
pub fn tge_workspace<T>(
    shapes: impl IntoIterator<Item = ViewShape>,
    kernels: &(impl KernelSet + ?Sized),
    n_classes: usize,
    params: &GraphParams,
) -> Result<usize, Error> {
    params.validate()?;
    let lay = similarity::layout(shapes, kernels)?;
    req::<T>(&lay, n_classes, params).bytes()
}

/// Builds TGE's affinity and penalty graphs (module docs) into `affinity` and `penalty`
/// (symmetric CSR, columns sorted: accepted by [`super::CsrGraph::new`]); returns their entry
/// counts. `labels` may be empty (no labeled items) when `kp = 0` and no view uses the RBF
/// median heuristic.
///
/// Errors, all before anything is written: `ka = 0`, `ka >= N`, `kp >= N` for item neighbours,
/// `σ` not finite and positive ([`Error::BadParameter`]); shapes, values, kernels, `η`, labels
/// as [`crate::similarity::fused_knn`]; a class with labeled items but at most `ka` of them, or too
/// few labeled items for `kp` ([`Error::TooFewLabeled`]); `row_ptr.len() != N + 1`
/// ([`Error::DimensionMismatch`]); `col_idx`/`weights` too short ([`Error::BufferTooShort`];
/// [`super::tge_capacity`] is always enough); workspace.
///
/// Cost `O(N² Σ_v M_v)` for the one blocked sweep over all pairs; for more
/// than one block row of items the sweep runs in parts (at most four, from
/// the shape), each with heaps of its own, merged exactly, so the graph is
/// the same for every pool ([`crate::pipeline`] runs the parts on its
/// solver's pool; this function on the calling thread).
#[allow(clippy::too_many_arguments)]
pub fn tge<T: Real, VS: ViewSet<T> + Sync + ?Sized, KS: KernelSet + Sync + ?Sized>(
    views: &VS,
    kernels: &KS,
    eta: &[f64],
    labels: &[u32],
    n_classes: usize,
    params: &GraphParams,
    affinity: CsrOut<'_>,
    penalty: CsrOut<'_>,
    work: &mut [u8],
) -> Result<GraphNnz, Error> {
    let request = Request {
        views,
        kernels,
        eta,
        labels,
        n_classes,
        params,
        items: None,
    };
    let checked = request.check::<T>(&affinity, &penalty)?;
    exact(&request, checked, affinity, penalty, work, Parallel::Serial)
}

/// The exact schedule of a checked request ([`Request::check`]): the blocked
/// sweep over all pairs, its parts run on `par`.
pub(crate) fn exact<T: Real, VS: ViewSet<T> + Sync + ?Sized, KS: KernelSet + Sync + ?Sized>(
    request: &Request<'_, VS, KS>,
    Checked { lay, n, .. }: Checked,
    mut affinity: CsrOut<'_>,
    mut penalty: CsrOut<'_>,
    work: &mut [u8],
    par: Parallel,
) -> Result<GraphNnz, Error> {
    let Request {
        views,
        kernels,
        eta,
        labels,
        n_classes,
        params,
        ..
    } = *request;
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
    let all: &mut [usize] = st.take(n)?;
    for (i, a) in all.iter_mut().enumerate() {
        *a = i;
    }
    let mut sinks = heaps(n, (labels, n_classes), params, &mut st)?;
    let mut asm_a = Assembler::new(n, 2 * n * params.ka, &mut st)?;
    let pe = if params.kp == 0 {
        0
    } else {
        PenaltyTop::edges(n, n_classes, params)
    };
    let mut asm_p = Assembler::new(n, pe, &mut st)?;
    let mut sc = median::Scratch::new(&lay, &mut st)?;
    let blk: &mut [T] = st.take_matrix(b, b)?;
    let tasks = part_count(n, b);
    let parts = st.take_slots(tasks, part_req::<T>(&lay, n_classes, params))?;
    let mut eng = Engine::new_par(views, kernels, &lay, b, st, par)?;
    median::resolve(&mut eng, ci.labeled(), &mut sc, blk)?;
    eng.set_mode(Mode::Fused, Some(eta));
    if tasks == 0 {
        eng.sym(all, blk, &mut sinks)?;
    } else {
        // The sweep in parts, each with heaps of its own; absorbing them
        // gives exactly the serial sweep's heaps (each pair is offered in one
        // part, and the heaps keep the top of a strict total order).
        let ctx = PartCtx {
            views,
            kernels,
            lay: &lay,
            b,
            gamma: eng.gamma,
            scales: eng.scale_parts(),
            mode: Mode::Fused,
            eta: Some(eta),
        };
        let got = sym_in_parts(&ctx, (&*all, b * b), (tasks, parts), par, &|st| {
            heaps(n, (labels, n_classes), params, st)
        })?;
        for (g, s, p) in got.iter().flatten() {
            sinks.0.absorb(g);
            sinks.1.absorb(s);
            match (&mut sinks.2, p) {
                (Some(a), Some(b)) => a.absorb(b)?,
                (None, None) => {}
                _ => return Err(Error::Internal),
            }
        }
    }
    let (glob, same, pen) = sinks;
    assemble_tge(
        (&mut asm_a, &mut asm_p),
        |asm, unl| add_lists(asm, &glob, 0..n, |i, j| unl(i) || unl(j)),
        (&same, pen.as_ref()),
        (labels, ci.labeled(), n_classes),
        params.sigma,
        (&mut affinity, &mut penalty),
    )
}
