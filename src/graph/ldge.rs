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
//!
//! [`ldge_build`] finds the same lists by NN-descent over the labeled items instead (the
//! `labeled` module, TGE's labeled lists: random starts here, there being no lists over all
//! items) when the [`GraphBuild`] asks for it: `ApproxAll` always, `Approx` and `Auto` from
//! [`super::LABELED_EXACT_BELOW`] labeled items on (below it, and with `Exact`, bitwise
//! [`ldge`]). About linear in `N_l` instead of quadratic.

use super::build::{
    add_lists, check_counts, check_outs, check_sizes, Assembler, CsrOut, GraphNnz, GraphParams,
    PenaltyTop,
};
use super::labeled;
use super::GraphBuild;
use crate::data::{ViewSet, ViewShape};
use crate::error::Error;
use crate::linalg::real::Real;
use crate::par::Parallel;
use crate::similarity::engine::{self, Engine, Mode};
use crate::similarity::topk::{Filter, TopK, NO_NEIGHBOR};
use crate::similarity::{self, class_of, median, AnnParams, ClassIndex, KernelSet, Layout};
use crate::work::{Stack, WorkReq};

fn req<T>(lay: &Layout, n_classes: usize, p: &GraphParams) -> WorkReq {
    let b = similarity::block_size(p.block, lay.n);
    heaps_and::<T>(lay, n_classes, p, engine::workspace::<T>(lay, b), b)
}

/// The heaps and assemblers, the median scratch, a `b × b` block (of `T`) and `eval`.
fn heaps_and<T>(
    lay: &Layout,
    n_classes: usize,
    p: &GraphParams,
    eval: WorkReq,
    b: usize,
) -> WorkReq {
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
        eval,
    ])
}

/// Workspace of [`ldge_build`]'s search over the labeled items (`b` the block side).
fn approx_req<T>(lay: &Layout, n_classes: usize, p: &GraphParams, lp: &labeled::Plan) -> WorkReq {
    let b = similarity::block_size(p.block, lay.n).max(lp.block());
    let eval = WorkReq::all_of(&[
        lp.workspace::<T>(lay)
            .bytes()
            .map_or(WorkReq::OVERFLOW, WorkReq::new::<u8>),
        engine::workspace::<T>(lay, b),
    ]);
    heaps_and::<T>(lay, n_classes, p, eval, b)
}

/// The NN-descent options of `build` for LDGE (`None`: the exact sweep whatever `N_l`),
/// checked: `delta` finite and nonnegative.
fn ann_of(
    build: &GraphBuild,
    n: usize,
    ka: usize,
    par: Parallel,
) -> Result<Option<AnnParams>, Error> {
    let ann = build.resolve(n, ka, par);
    if let Some(a) = &ann {
        if !(a.delta.is_finite() && a.delta >= 0.0) {
            return Err(Error::BadParameter);
        }
    }
    Ok(ann)
}

/// Workspace bytes of [`ldge_build`] (the pool does not change it): [`ldge_workspace`]'s,
/// or with a [`GraphBuild`] that may search the labeled lists (the labeled count unknown
/// here) the larger of that and the search's. Errors: those of [`ldge_workspace`], and a
/// `delta` not finite or negative ([`Error::BadParameter`]).
pub fn ldge_build_workspace<T>(
    shapes: impl IntoIterator<Item = ViewShape>,
    kernels: &(impl KernelSet + ?Sized),
    n_classes: usize,
    params: &GraphParams,
    build: &GraphBuild,
) -> Result<usize, Error> {
    params.validate()?;
    let lay = similarity::layout(shapes, kernels)?;
    let exact = req::<T>(&lay, n_classes, params);
    match ann_of(build, lay.n, params.ka, Parallel::Serial)? {
        Some(ann) if build.labeled_approx(lay.n) => {
            let lp = labeled::Plan::new(params.ka, params.kp, &ann);
            WorkReq::any_of(&[exact, approx_req::<T>(&lay, n_classes, params, &lp)]).bytes()
        }
        _ => exact.bytes(),
    }
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
    affinity: CsrOut<'_>,
    penalty: CsrOut<'_>,
    work: &mut [u8],
) -> Result<GraphNnz, Error> {
    let io = (eta, labels, n_classes);
    ldge_with(views, kernels, io, params, None, (affinity, penalty), work)
}

/// LDGE ([`ldge`]: the same graphs, arguments, checks and outputs) with its lists found as
/// `build` says (module docs), the search's tasks on `par` (a serial `parallel` in the
/// options means `par`; the graphs are the same bits for every pool). With
/// [`GraphBuild::Exact`], and with `Approx` or `Auto` below [`super::LABELED_EXACT_BELOW`]
/// labeled items, bitwise [`ldge`].
///
/// Errors, all before anything is written: those of [`ldge`], and a `delta` not finite or
/// negative ([`Error::BadParameter`]).
#[allow(clippy::too_many_arguments)]
pub fn ldge_build<T: Real, VS: ViewSet<T> + Sync + ?Sized, KS: KernelSet + ?Sized>(
    views: &VS,
    kernels: &KS,
    (eta, labels, n_classes): (&[f64], &[u32], usize),
    params: &GraphParams,
    build: &GraphBuild,
    affinity: CsrOut<'_>,
    penalty: CsrOut<'_>,
    work: &mut [u8],
    par: Parallel,
) -> Result<GraphNnz, Error> {
    params.validate()?;
    let n = labels.len();
    let ann = ann_of(build, n, params.ka, par)?;
    let io = (eta, labels, n_classes);
    let nl = labels
        .iter()
        .filter(|&&l| l != crate::data::UNLABELED)
        .count();
    match ann {
        Some(a) if build.labeled_approx(nl) => {
            let search = |eng: &Engine<'_, '_, T, VS>,
                          (lay, ci, lp): (&Layout, &ClassIndex<'_>, &labeled::Plan),
                          aff: &mut TopK<'_>,
                          pen: &mut Option<PenaltyTop<'_>>,
                          (lst, blk): (&mut Stack<'_>, &mut [T])|
             -> Result<(), Error> {
                let (lists, _) = labeled::lists(
                    eng,
                    (views, kernels, lay, eta),
                    (labels, ci),
                    (&[], 0),
                    lp,
                    lst,
                )?;
                for (p, &i) in ci.labeled().iter().enumerate() {
                    let ((si, ss), (oi, os)) = lists.get(p);
                    offer(aff, i, si, ss, blk);
                    match pen {
                        Some(PenaltyTop::Items(t)) => offer(t, i, oi, os, blk),
                        Some(PenaltyTop::Pairs(t)) => {
                            for (&j, &v) in oi.iter().zip(os) {
                                if j == NO_NEIGHBOR {
                                    continue;
                                }
                                let (lo, hi) = (i.min(j), i.max(j));
                                for c in [class_of(labels, i), class_of(labels, j)]
                                    .into_iter()
                                    .flatten()
                                {
                                    t.offer_unique(c, lo, hi, v);
                                }
                            }
                        }
                        None => {}
                    }
                }
                Ok(())
            };
            let plan = labeled::Plan::new(params.ka, params.kp, &a);
            ldge_with(
                views,
                kernels,
                io,
                params,
                Some((&plan, &search)),
                (affinity, penalty),
                work,
            )
        }
        _ => ldge_with(views, kernels, io, params, None, (affinity, penalty), work),
    }
}

/// Offers `(i, js[t])` with values `vs[t]` to a same-class or item-neighbour heap.
fn offer<T: Real>(t: &mut TopK<'_>, i: usize, js: &[usize], vs: &[f64], blk: &mut [T]) {
    for (&j, &v) in js.iter().zip(vs) {
        if j == NO_NEIGHBOR {
            continue;
        }
        if let Some(b) = blk.first_mut() {
            *b = T::from_f64(v);
        }
        let one = blk.get(..1).unwrap_or_default();
        engine::Sink::<T>::visit(t, &[i], &[j], one, engine::Block::Rect);
    }
}

/// The search of the labeled lists by NN-descent: fills the heaps from the evaluator (its
/// bandwidths resolved), with the search's stack and a block.
type Search<'s, T, VS> = dyn Fn(
        &Engine<'_, '_, T, VS>,
        (&Layout, &ClassIndex<'_>, &labeled::Plan),
        &mut TopK<'_>,
        &mut Option<PenaltyTop<'_>>,
        (&mut Stack<'_>, &mut [T]),
    ) -> Result<(), Error>
    + 's;

/// [`ldge`] with the lists from the exact sweep (`search` `None`) or from `search`.
fn ldge_with<T: Real, VS: ViewSet<T> + ?Sized, KS: KernelSet + ?Sized>(
    views: &VS,
    kernels: &KS,
    (eta, labels, n_classes): (&[f64], &[u32], usize),
    params: &GraphParams,
    search: Option<(&labeled::Plan, &Search<'_, T, VS>)>,
    (affinity, penalty): (CsrOut<'_>, CsrOut<'_>),
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
    let need = match search {
        None => req::<T>(&lay, n_classes, params),
        Some((lp, _)) => approx_req::<T>(&lay, n_classes, params, lp),
    }
    .bytes()?;
    let len = work.len();
    let b = match search {
        None => similarity::block_size(params.block, n),
        Some((lp, _)) => similarity::block_size(params.block, n).max(lp.block()),
    };
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
    let asm_a = Assembler::new(n, n * params.ka, &mut st)?;
    let pe = if params.kp == 0 {
        0
    } else {
        PenaltyTop::edges(n, n_classes, params)
    };
    let asm_p = Assembler::new(n, pe, &mut st)?;
    let mut sc = median::Scratch::new(&lay, &mut st)?;
    let blk: &mut [T] = st.take_matrix(b, b)?;
    if let Some((lp, find)) = search {
        let lw: &mut [u8] = st.take(lp.workspace::<T>(&lay).bytes()?)?;
        let mut lst = Stack::new(lw);
        let mut eng = Engine::new(views, kernels, &lay, b, st)?;
        median::resolve(&mut eng, ci.labeled(), &mut sc, blk)?;
        find(&eng, (&lay, &ci, lp), &mut aff, &mut pen, (&mut lst, blk))?;
        return finish(
            &ci,
            n_classes,
            (aff, pen),
            (asm_a, asm_p),
            (affinity, penalty),
        );
    }
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
    finish(
        &ci,
        n_classes,
        (aff, pen),
        (asm_a, asm_p),
        (affinity, penalty),
    )
}

/// The graphs from the heaps.
fn finish(
    ci: &ClassIndex<'_>,
    n_classes: usize,
    (aff, pen): (TopK<'_>, Option<PenaltyTop<'_>>),
    (mut asm_a, mut asm_p): (Assembler<'_>, Assembler<'_>),
    (mut affinity, mut penalty): (CsrOut<'_>, CsrOut<'_>),
) -> Result<GraphNnz, Error> {
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
