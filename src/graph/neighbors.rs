//! One neighbour-graph engine with one checked request (issue 30, item 3).
//!
//! A [`Request`] (views, kernels, fusion weights `η`, labels, `ka`/`kp`, the
//! outputs' rows) is validated once by [`Request::check`], before anything is
//! written, and then built by one of three schedules of the same engine (the
//! fused-kernel block evaluator of `similarity::engine`, its top-`k` heaps and
//! the TGE assembly `build::assemble_tge`):
//!
//! | schedule | where | the lists over all items |
//! |---|---|---|
//! | exact | `tge::exact` ([`super::tge()`]) | the blocked sweep over all pairs, in parts on a pool |
//! | approximate | `tge_approx_with` here ([`tge_build`] with NN-descent) | [`crate::similarity::approx_knn`]; the labeled lists exact, or by NN-descent over the labeled items from [`LABELED_EXACT_BELOW`] of them |
//! | distributed | `dist::tge` (`models::dist::tge` re-exports it) | each rank's items against all, the other ranks' columns streamed block by block; the exact sweep's rows bit for bit |
//!
//! [`GraphBuild`] is the option that picks exact or approximate; [`tge_build`] /
//! [`tge_build_workspace`] serve TGE with it (and so GNMF-style plain kNN graphs,
//! TGE with no labels and `kp = 0`), and [`crate::pipeline::fit_graph`] the whole
//! pipeline. [`GraphBuild::Exact`] is bitwise the exact builder ([`super::tge()`]).
//!
//! **What the approximate path approximates.** The lists over *all* `N` items, the
//! quadratic part: TGE's global `ka` neighbours come from NN-descent (run with
//! `max(AnnParams::k, ka)` neighbours per item, the first `ka` kept: NN-descent's recall
//! at its own `k` is lower than at a prefix of a longer list). The same-class lists and the
//! penalty (class pairs or other-class item neighbours) are over the labeled items only:
//! below [`LABELED_EXACT_BELOW`] labeled items they stay exact, one blocked sweep over the
//! `N_l(N_l − 1)/2` labeled pairs, in parts on the caller's pool as the exact sweep
//! (`O(N_l² Σ_v M_v)`: at `N = 10⁶` with 10 % labeled, `5·10⁹` pairs, the largest set-up
//! phase); from there on (and always with [`GraphBuild::ApproxAll`]) NN-descent over the
//! labeled items finds them, with a same-class and an other-class list per item
//! (`labeled` module: about linear in `N_l`, on the calling thread; recall and cost in
//! docs/benchmarks.md, "Cost table").
//!
//! **Memory** (besides the CSR outputs): the exact builder's heaps less the global
//! heaps' similarities, plus `N · k'` neighbour indices (`k' = max(AnnParams::k, ka)`),
//! plus the largest of NN-descent's workspace (with `N · k'` similarities), the labeled
//! sweep's (as the exact one's) and the labeled NN-descent's (`N` positions and
//! `17·(ks + ko) + 24·c` bytes per item, bounded by `N` since the query does not see the
//! labels; `labeled` module).
//!
//! **Auto**: exact below [`AUTO_EXACT_BELOW`] items, NN-descent (default options, the
//! caller's pool) from there on. The threshold is where the two cost the same, measured
//! with `cargo run --release --example scale_pipeline -- crossover` (TGE under the fused RBF kernel of two
//! views of 100 and 50 features, 10 % labeled, one thread; table in the constant's doc).

use super::build::{
    assemble_tge, check_counts, check_outs, check_sizes, Assembler, CsrOut, GraphNnz, GraphParams,
    PenaltyTop,
};
use super::labeled;
use crate::data::{ViewKind, ViewSet, ViewShape};
use crate::error::Error;
use crate::linalg::real::Real;
use crate::par::Parallel;
use crate::similarity::engine::{self, part_count, sym_in_parts, Engine, Mode, PartCtx};
use crate::similarity::topk::{Filter, TopK, NO_NEIGHBOR};
use crate::similarity::{
    self, approx_knn_progress, approx_knn_workspace, class_of, median, AnnParams, ClassIndex,
    KernelSet, Layout,
};
use crate::work::{Stack, WorkReq};

/// One neighbour-graph request (issue 30, item 3): what every schedule of the
/// engine builds from — the exact sweep ([`super::tge()`]), the approximate one
/// ([`tge_build`] with NN-descent) and the distributed one (`graph::dist`, a
/// rank's rows with the other ranks' columns streamed). [`Request::check`]
/// validates it once, before anything is written; each schedule then checks
/// only what is its own (its workspace, the class counts its lists need).
pub(crate) struct Request<'a, VS: ?Sized, KS: ?Sized> {
    /// The views of this process's items.
    pub(crate) views: &'a VS,
    /// One kernel per view.
    pub(crate) kernels: &'a KS,
    /// The fusion weights `η` (one per view).
    pub(crate) eta: &'a [f64],
    /// The labels of all `N` items (or none), and the classes.
    pub(crate) labels: &'a [u32],
    pub(crate) n_classes: usize,
    /// `ka`, `kp`, the penalty, `σ`, the block.
    pub(crate) params: &'a GraphParams,
    /// `Some(N)`: the views hold one rank's items of `N` (the distributed
    /// schedule: dense views only); `None`: they hold all items.
    pub(crate) items: Option<usize>,
}

/// What [`Request::check`] found: the views' layout (this process's items),
/// the items over all ranks, and the labeled ones.
pub(crate) struct Checked {
    pub(crate) lay: Layout,
    pub(crate) n: usize,
    pub(crate) nl: usize,
}

impl<VS: ?Sized, KS: KernelSet + ?Sized> Request<'_, VS, KS> {
    /// Validates the request and the outputs' rows (this process's items), in
    /// this order: the parameters, the views against the kernels (dense for
    /// the distributed schedule, at most `N` items), `ka`/`kp` against `N`,
    /// `η`, the labels, the outputs, two labeled items for a penalty or a
    /// median bandwidth.
    pub(crate) fn check<T: Real>(
        &self,
        affinity: &CsrOut<'_>,
        penalty: &CsrOut<'_>,
    ) -> Result<Checked, Error>
    where
        VS: ViewSet<T>,
    {
        self.check_par::<T>(affinity, penalty, Parallel::Serial)
    }

    /// [`Request::check`] with the views' values checked in tasks on `par` (the same
    /// outcome and error on every pool).
    pub(crate) fn check_par<T: Real>(
        &self,
        affinity: &CsrOut<'_>,
        penalty: &CsrOut<'_>,
        par: Parallel,
    ) -> Result<Checked, Error>
    where
        VS: ViewSet<T>,
    {
        self.params.validate()?;
        let lay = similarity::check_views_par(self.views, self.kernels, par)?;
        let n = match self.items {
            None => lay.n,
            Some(n) => {
                if (0..lay.h).any(|v| self.views.shape(v).kind != ViewKind::Dense) {
                    return Err(Error::BadParameter);
                }
                if lay.n > n {
                    return Err(Error::DimensionMismatch);
                }
                n
            }
        };
        check_sizes(self.params, n)?;
        similarity::check_eta(self.eta, lay.h)?;
        let nl = similarity::check_labels(self.labels, n, self.n_classes)?;
        check_outs(lay.n, affinity, penalty)?;
        if (self.params.kp > 0 || lay.median) && nl < 2 {
            return Err(Error::TooFewLabeled);
        }
        Ok(Checked { lay, n, nl })
    }
}

/// Items from which [`GraphBuild::Auto`] uses NN-descent (below: the exact sweep).
///
/// Measured (`cargo run --release --example scale_pipeline -- crossover 4000 8000 16000`:
/// TGE alone, two views of 100 and 50 features, fused RBF kernel with median bandwidths,
/// 10 % labeled, `ka = 5`, `kp = 3`, one thread; one run each, wall seconds on the shared
/// 2-core machine at a load of about 30, so only the ratios mean something):
///
/// | N | exact s | NN-descent s | exact / NN-descent |
/// |---|---|---|---|
/// | 4 000 | 14.64 | 10.66 | 1.37 |
/// | 8 000 | 51.40 | 24.97 | 2.06 |
/// | 16 000 | 185.46 | 58.78 | 3.16 |
///
/// Fitting `a·N²` to the exact and `b·N` to NN-descent at each size puts the crossover at
/// 2 900–5 100 items; the threshold is the power of two in between, 4096 (the sampled set-up's threshold
/// too). Below it the exact graph is also the better one (recall 1).
pub const AUTO_EXACT_BELOW: usize = 4096;

/// How the neighbours of a graph are found.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum GraphBuild {
    /// The exact blocked sweep over all pairs (`O(N²)`; the default, bitwise the builders
    /// without this option).
    #[default]
    Exact,
    /// NN-descent with these options for the lists over all items (module docs). `k` is the
    /// length of the lists NN-descent keeps (raised to the graph's `ka`, at most `N − 1`);
    /// a serial `parallel` means the caller's pool (the pipeline's solver pool) — the
    /// neighbours are the same for every choice.
    Approx(AnnParams),
    /// Exact below [`AUTO_EXACT_BELOW`] items, else `Approx(AnnParams::default())`.
    Auto,
    /// As `Approx`, with the labeled lists (same-class and penalty) found by NN-descent
    /// over the labeled items whatever their number (`Approx` and `Auto` do so from
    /// [`LABELED_EXACT_BELOW`] labeled items on; module docs).
    ApproxAll(AnnParams),
}

impl GraphBuild {
    /// The NN-descent options for `n` items and `ka` neighbours on the caller's pool `par`,
    /// or `None` for the exact sweep.
    pub fn resolve(&self, n: usize, ka: usize, par: Parallel) -> Option<AnnParams> {
        let mut p = match *self {
            GraphBuild::Exact => return None,
            GraphBuild::Auto if n < AUTO_EXACT_BELOW => return None,
            GraphBuild::Auto => AnnParams::default(),
            GraphBuild::Approx(p) | GraphBuild::ApproxAll(p) => p,
        };
        p.k = p.k.max(ka).min(n.saturating_sub(1));
        if matches!(p.parallel, Parallel::Serial) {
            p.parallel = par;
        }
        Some(p)
    }
}

impl GraphBuild {
    /// Whether the approximate schedule finds the labeled lists by NN-descent too (over
    /// `nl` labeled items): always for [`GraphBuild::ApproxAll`], from
    /// [`LABELED_EXACT_BELOW`] labeled items for the others.
    pub fn labeled_approx(&self, nl: usize) -> bool {
        match self {
            GraphBuild::ApproxAll(_) => true,
            _ => nl >= LABELED_EXACT_BELOW,
        }
    }
}

/// Labeled items from which the approximate schedule finds TGE's same-class and penalty
/// lists by NN-descent over the labeled items (`labeled` module) instead of the exact sweep
/// over the labeled pairs (with [`GraphBuild::Approx`] and [`GraphBuild::Auto`];
/// [`GraphBuild::ApproxAll`] always does).
///
/// Measured (`cargo run --release --example scale_pipeline -- labeled 20000 100000 300000`:
/// two views of 100 and 50 features, fused RBF kernel with median bandwidths, 10 %
/// labeled, `ka = 5`, `kp = 3`, one thread, CPU seconds on the loaded 2-core machine; the
/// exact lists are LDGE's sweep, the approximate ones TGE with [`GraphBuild::ApproxAll`]
/// less NN-descent over all items; docs/benchmarks.md, "Cost table"): at `N_l = 2 000` the sweep
/// takes 0.2 s and the search about 0.45 s, at `10 000` both about 2–3 s (the pipeline's
/// set-up: sweep 2.46 s, search 3.13 s), above that the sweep grows as `N_l²` and the
/// search about as `N_l`. The threshold is the power of two past that crossover.
pub const LABELED_EXACT_BELOW: usize = 16384;

/// Workspace of the approximate TGE ([`tge_build`] when `build` resolves to NN-descent).
fn approx_req<T>(
    lay: &Layout,
    ann_bytes: usize,
    n_classes: usize,
    p: &GraphParams,
    ann: &AnnParams,
) -> WorkReq {
    let n = lay.n;
    let b = similarity::block_size(p.block, n);
    let heaps = WorkReq::all_of(&[
        TopK::workspace(n, p.ka),
        PenaltyTop::workspace(n, n_classes, p),
    ]);
    let part = engine::part_req::<T>(lay, b, b.saturating_mul(b), heaps);
    let pe = if p.kp == 0 {
        0
    } else {
        PenaltyTop::edges(n, n_classes, p)
    };
    WorkReq::all_of(&[
        ClassIndex::workspace(n, n_classes),
        WorkReq::matrix::<usize>(n, ann.k),
        heaps,
        Assembler::workspace(n, n.saturating_mul(p.ka).saturating_mul(2)),
        Assembler::workspace(n, pe),
        WorkReq::any_of(&[
            WorkReq::all_of(&[
                WorkReq::matrix::<f64>(n, ann.k),
                WorkReq::new::<u8>(ann_bytes),
            ]),
            WorkReq::all_of(&[
                median::scratch_req(lay),
                WorkReq::matrix::<T>(b, b),
                engine::workspace::<T>(lay, b),
                part.times(part_count(n, b)),
            ]),
            labeled_req::<T>(lay, p, ann),
        ]),
    ])
}

/// Workspace of the labeled lists by NN-descent (after the global lists).
fn labeled_req<T>(lay: &Layout, p: &GraphParams, ann: &AnnParams) -> WorkReq {
    let lp = labeled::Plan::new(p.ka, p.kp, ann);
    let b = similarity::block_size(p.block, lay.n).max(lp.block());
    WorkReq::all_of(&[
        median::scratch_req(lay),
        WorkReq::matrix::<T>(b, b),
        lp.workspace::<T>(lay)
            .bytes()
            .map_or(WorkReq::OVERFLOW, WorkReq::new::<u8>),
        engine::workspace::<T>(lay, b),
    ])
}

/// Workspace bytes of [`tge_build`] (the pool does not change it). Errors: those of
/// [`super::tge_workspace`], `ka >= N` and `kp >= N` for item neighbours
/// ([`crate::Error::BadParameter`]), and for NN-descent those of
/// [`crate::similarity::approx_knn_workspace`].
pub fn tge_build_workspace<T>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    kernels: &(impl KernelSet + ?Sized),
    n_classes: usize,
    params: &GraphParams,
    build: &GraphBuild,
) -> Result<usize, Error> {
    params.validate()?;
    let lay = similarity::layout(shapes.clone(), kernels)?;
    check_sizes(params, lay.n)?;
    match build.resolve(lay.n, params.ka, Parallel::Serial) {
        None => super::tge_workspace::<T>(shapes, kernels, n_classes, params),
        Some(ann) => {
            let ab = approx_knn_workspace::<T>(shapes, kernels, n_classes, &ann)?;
            approx_req::<T>(&lay, ab, n_classes, params, &ann).bytes()
        }
    }
}

/// TGE ([`super::tge()`]: the same graphs, arguments, checks and outputs) with its global
/// neighbours found as `build` says (module docs), the sweeps on `par`. With
/// [`GraphBuild::Exact`], or [`GraphBuild::Auto`] below [`AUTO_EXACT_BELOW`] items, the
/// graphs are bitwise [`super::tge()`]'s.
///
/// Errors, all before anything is written: those of [`super::tge()`], and the NN-descent
/// options' ([`crate::similarity::approx_knn`]: `leaf = 1`, `delta` not finite or
/// negative: [`Error::BadParameter`]).
#[allow(clippy::too_many_arguments)]
pub fn tge_build<T: Real, VS: ViewSet<T> + Sync + ?Sized, KS: KernelSet + Sync + ?Sized>(
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
    let (io, outs) = ((eta, labels, n_classes), (affinity, penalty));
    tge_build_progress(
        views,
        kernels,
        io,
        (params, build),
        outs,
        work,
        par,
        &mut |_| false,
    )
}

/// [`tge_build`] telling `progress` how far the build is, as a fraction in `[0, 1)`:
/// with an approximate schedule after each NN-descent tree and iteration
/// ([`crate::similarity::approx_knn_progress`]; the whole graph phase is scaled into
/// `[0, ½]` when the labeled lists by NN-descent follow, `[0, 0.9]` when the labeled
/// sweep follows); the exact schedule reports nothing. `progress` returning `true`
/// stops the build: [`Error::Cancelled`], the outputs untouched (the lists live in
/// `work` until the end).
#[allow(clippy::too_many_arguments)]
pub fn tge_build_progress<
    T: Real,
    VS: ViewSet<T> + Sync + ?Sized,
    KS: KernelSet + Sync + ?Sized,
>(
    views: &VS,
    kernels: &KS,
    (eta, labels, n_classes): (&[f64], &[u32], usize),
    (params, build): (&GraphParams, &GraphBuild),
    (affinity, penalty): (CsrOut<'_>, CsrOut<'_>),
    work: &mut [u8],
    par: Parallel,
    progress: &mut dyn FnMut(f64) -> bool,
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
    let checked = request.check_par::<T>(&affinity, &penalty, par)?;
    let Some(ann) = build.resolve(checked.n, params.ka, par) else {
        return super::tge::exact(&request, checked, affinity, penalty, work, par);
    };
    let shapes = (0..views.count()).map(|i| views.shape(i));
    let ann_bytes = approx_knn_workspace::<T>(shapes, kernels, n_classes, &ann)?;
    let lab = build.labeled_approx(checked.nl);
    tge_approx_with(
        &request,
        checked,
        (&ann, ann_bytes, lab),
        (affinity, penalty),
        work,
        (par, progress),
    )
}

/// Same-class and penalty heaps of the labeled sweep.
type LabeledHeaps<'w> = (TopK<'w>, Option<PenaltyTop<'w>>);

fn labeled_heaps<'w, 's: 'w>(
    n: usize,
    (labels, n_classes): (&'w [u32], usize),
    params: &GraphParams,
    st: &mut Stack<'s>,
) -> Result<LabeledHeaps<'w>, Error> {
    let (si, ss) = (st.take_matrix(n, params.ka)?, st.take_matrix(n, params.ka)?);
    let same = TopK::new(params.ka, si, ss, Filter::Same(labels));
    let pen = if params.kp > 0 {
        Some(PenaltyTop::new(n, n_classes, labels, params, st)?)
    } else {
        None
    };
    Ok((same, pen))
}

/// The approximate schedule (module docs) of a checked request, with the labeled lists by NN-descent (`lab`) or by the exact sweep.
fn tge_approx_with<T: Real, VS: ViewSet<T> + Sync + ?Sized, KS: KernelSet + Sync + ?Sized>(
    request: &Request<'_, VS, KS>,
    Checked { lay, n, .. }: Checked,
    (ann, ann_bytes, lab): (&AnnParams, usize, bool),
    (mut affinity, mut penalty): (CsrOut<'_>, CsrOut<'_>),
    work: &mut [u8],
    (par, progress): (Parallel, &mut dyn FnMut(f64) -> bool),
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
    let need = approx_req::<T>(&lay, ann_bytes, n_classes, params, ann).bytes()?;
    let len = work.len();
    let b = similarity::block_size(params.block, n);
    let kk = ann.k;
    let mut st = Stack::new(work);
    let ci = ClassIndex::new(labels, n, n_classes, &mut st)?;
    check_counts(&ci, params)?;
    if len < need {
        return Err(Error::WorkspaceTooSmall);
    }
    let nbr: &mut [usize] = st.take_matrix(n, kk)?;
    let mut sinks = labeled_heaps(n, (labels, n_classes), params, &mut st)?;
    let mut asm_a = Assembler::new(n, 2 * n * params.ka, &mut st)?;
    let pe = if params.kp == 0 {
        0
    } else {
        PenaltyTop::edges(n, n_classes, params)
    };
    let mut asm_p = Assembler::new(n, pe, &mut st)?;
    // Phase 1: NN-descent's lists over all items (its similarities dropped after).
    {
        let mut ph = st.rest();
        let sims: &mut [f64] = ph.take_matrix(n, kk)?;
        let w = ph.take_rest();
        // NN-descent's share of the phase (the labeled lists follow).
        let share = if lab { 0.5 } else { 0.9 };
        let io = (eta, labels, n_classes);
        let mut stop = false;
        approx_knn_progress(views, kernels, io, ann, nbr, sims, w, &mut |f| {
            stop = progress(share * f);
            stop
        })?;
        // A stop asked at NN-descent's last report (which it does not act on) stops here.
        if stop {
            return Err(Error::Cancelled);
        }
    }
    if lab {
        // Phase 2': the labeled lists by NN-descent over the labeled items.
        let lp = labeled::Plan::new(params.ka, params.kp, ann);
        let bl = b.max(lp.block());
        let mut sc = median::Scratch::new(&lay, &mut st)?;
        let blk: &mut [T] = st.take_matrix(bl, bl)?;
        let lw: &mut [u8] = st.take(lp.workspace::<T>(&lay).bytes()?)?;
        let mut lst = Stack::new(lw);
        let mut eng = Engine::new_par(views, kernels, &lay, bl, st, par)?;
        median::resolve(&mut eng, ci.labeled(), &mut sc, blk)?;
        let (lists, _) = labeled::lists(
            &eng,
            (views, kernels, &lay, eta),
            (labels, &ci),
            (nbr, kk),
            &lp,
            &mut lst,
        )?;
        let (same, pen) = &mut sinks;
        for (p, &i) in ci.labeled().iter().enumerate() {
            let ((si, ss), (oi, os)) = lists.get(p);
            offer_list(same, i, si, ss, blk);
            match pen {
                Some(PenaltyTop::Items(t)) => offer_list(t, i, oi, os, blk),
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
        return finish_approx(
            (&mut asm_a, &mut asm_p),
            (nbr, kk),
            sinks,
            request,
            ci.labeled(),
            (&mut affinity, &mut penalty),
        );
    }
    // Phase 2: the exact sweep over the labeled pairs (same-class and penalty lists).
    let mut sc = median::Scratch::new(&lay, &mut st)?;
    let blk: &mut [T] = st.take_matrix(b, b)?;
    let hp = WorkReq::all_of(&[
        TopK::workspace(n, params.ka),
        PenaltyTop::workspace(n, n_classes, params),
    ]);
    let part = engine::part_req::<T>(&lay, b, b.saturating_mul(b), hp);
    let tasks = part_count(ci.labeled().len(), b);
    let parts = st.take_slots(part_count(n, b), part)?;
    let mut eng = Engine::new_par(views, kernels, &lay, b, st, par)?;
    median::resolve(&mut eng, ci.labeled(), &mut sc, blk)?;
    eng.set_mode(Mode::Fused, Some(eta));
    if tasks == 0 {
        eng.sym(ci.labeled(), blk, &mut sinks)?;
    } else {
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
        let got = sym_in_parts(&ctx, (ci.labeled(), b * b), (tasks, parts), par, &|st| {
            labeled_heaps(n, (labels, n_classes), params, st)
        })?;
        for (s, p) in got.iter().flatten() {
            sinks.0.absorb(s);
            match (&mut sinks.1, p) {
                (Some(a), Some(b)) => a.absorb(b)?,
                (None, None) => {}
                _ => return Err(Error::Internal),
            }
        }
    }
    finish_approx(
        (&mut asm_a, &mut asm_p),
        (nbr, kk),
        sinks,
        request,
        ci.labeled(),
        (&mut affinity, &mut penalty),
    )
}

/// Offers item `i`'s list `(js, vs)` to the heaps `t` (a one-row block in `blk`).
fn offer_list<T: Real>(t: &mut TopK<'_>, i: usize, js: &[usize], vs: &[f64], blk: &mut [T]) {
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

/// The approximate schedule's end: the graphs from the global lists `nbr` (`N × kk`,
/// the first `ka` of each kept) and the labeled heaps.
fn finish_approx<VS: ?Sized, KS: ?Sized>(
    (asm_a, asm_p): (&mut Assembler<'_>, &mut Assembler<'_>),
    (nbr, kk): (&[usize], usize),
    (same, pen): LabeledHeaps<'_>,
    request: &Request<'_, VS, KS>,
    labeled: &[usize],
    (affinity, penalty): (&mut CsrOut<'_>, &mut CsrOut<'_>),
) -> Result<GraphNnz, Error> {
    let ka = request.params.ka;
    let global = |asm: &mut Assembler<'_>, unl: &dyn Fn(usize) -> bool| {
        for (i, row) in nbr.chunks_exact(kk.max(1)).enumerate() {
            for &j in row.iter().take(ka) {
                if j != NO_NEIGHBOR && j != i && (unl(i) || unl(j)) {
                    asm.add(i, j);
                }
            }
        }
    };
    assemble_tge(
        (asm_a, asm_p),
        global,
        (&same, pen.as_ref()),
        (request.labels, labeled, request.n_classes),
        request.params.sigma,
        (affinity, penalty),
    )
}
