//! The graph-regularised multi-view solver (DESIGN §2 with one layer, §4, §5):
//! MvSL-S/L/T, GNMF, MCL and plain joint NMF are presets of one model.
//!
//! ```text
//! O(U, V) = ½ Σ_v ‖X^(v) − U^(v) V‖²_F                     reconstruction
//!         + α Σ_v R(U^(v))                                 group sparsity: none | L1,2 | L1,∞
//!         + β/2 [ tr(V Lᵃ Vᵀ) − tr(V Lᵖ Vᵀ) ]              graph embedding (any GraphOp)
//!         + γ Σ V                                           L1 on the encodings
//! s.t. U ≥ 0,  0 ≤ V ≤ vmax
//! ```
//!
//! **U-step**, per view, from `R = X Vᵀ` and `G = V Vᵀ` only (the inner loop
//! never touches X): with `R = none` (or `α = 0`) the guarded Lee–Seung step of
//! [`crate::models::nmf`] (so this solver reduces to joint NMF exactly); otherwise
//! Nesterov's composite gradient mapping (seed 000 §4.1, seed 001 Alg. 2):
//! `L ← max(L₀, L_prev/η_d)`, then `T = prox_{α/L}(U − (U G − R)/L)`, accepted
//! when `½ tr(ΔᵀΔ G) ≤ (L/2)‖Δ‖²` (`Δ = T − U`; that is `f(T) ≤ m_L(U; T)` for
//! this quadratic `f`), else `L ← η_u L`. Accepting implies `φ(T) ≤ φ(U)`:
//! monotone. `u_inner` accepted steps per outer iteration.
//!
//! **V-step** (DESIGN §5): with `P = Σ UᵀU`, `Q = Σ UᵀX` and the graph products
//! of [`GraphOp`],
//! `A = P V + β(Dᵃ+Wᵖ)V̄ + ε`, `B = γ − Q − ε`, `C = β(Dᵖ+Wᵃ)V̄`,
//! `V ← min(vmax, V ∘ (−B + √(B² + 4AC)) / (2A))` (cancellation-free
//! `2C/(B + √(B²+4AC))` when `B > 0`; `max(Q − γ + ε, 0)/A` when `C = 0`). Items
//! in no graph get `C = 0`, i.e. `V ← V ∘ (Q − γ + ε)₊/(P V + ε)`: the
//! derivation, not the misprint `(Q − |Q|)/(2PV)` of seed 000 eq. (26) / seed 003
//! eq. (41), which would zero every unlabeled encoding. With `γ > 0` an entry
//! that reaches 0 stays 0 (multiplicative updates cannot revive it).
//!
//! **Cost per outer iteration:** each view touched twice (`X Vᵀ`, `Uᵀ X`), plus
//! `O((Σ M_v) K² · u_inner)` for the U-steps, `O(K²N + K·nnz(graph))` per inner
//! V-step (SGE: `O(KN)`), and one graph product for the objective (reused by
//! the next V-step). The objective parts are reported to the monitor.
//!
//! **Initialisation:** as [`crate::models::nmf`] (bounded models: `V ~ U(0,1]·vmax`,
//! `U^(v) ~ U(0,1]·4 mean(X^(v))/(K vmax)`, DESIGN §3). If every column of a
//! view's `U` becomes zero (α too large for the data), that view no longer takes
//! part: [`Report::dead_views`] counts them.
//!
//! **Magnitudes** (`crate::steps::scale`): data with `½ Σ_v ‖X^(v)‖²_F > 2^999`
//! is refused ([`crate::Error::InputTooLarge`]); data whose largest entry is
//! outside `[2^−64, 2^64]` is solved as `X/c` for a power of two `c`, with the bases
//! divided by `c` and the weights scaled to keep the minimisers (`α/c`,
//! `β/c²`, `γ/c²`); factors and objective are returned in the caller's units.
//! Small data is scaled up only while the scaled weights that act stay below
//! `2^256` (`2^32` in `f32`; `α` without a group norm and `β` without a graph
//! weight multiply nothing and do not count).

use crate::data::{FactorsMut, ViewSet, ViewShape};
use crate::error::Error;
use crate::graph::GraphOp;
use crate::linalg::gemm_req;
use crate::linalg::real::Real;
use crate::solvers::comm::Local;
use crate::solvers::encode;
use crate::solvers::shallow::{self, DataScale, Steps};
use crate::steps::check::{check_graph, check_shapes, validate_par, Checked};
use crate::steps::mu::products_req;
pub use crate::steps::MvslParams;
use crate::steps::{Init, Monitor, Report};
use crate::work::{Stack, WorkReq};

pub(crate) fn fit_req<T>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    k: usize,
    graph_req: WorkReq,
) -> Result<WorkReq, Error> {
    let (n, mmax) = check_shapes(shapes.clone(), k)?;
    let h = shapes.clone().into_iter().count();
    let kk = WorkReq::matrix::<T>(k, k);
    let kn = WorkReq::matrix::<T>(k, n);
    let mk = WorkReq::matrix::<T>(mmax, k);
    let scratch = products_req::<T>(shapes.clone(), k, n)
        .or(graph_req)
        .or(gemm_req::<T>(k, k, mmax));
    Ok(WorkReq::all_of(&[
        kk,
        kk,
        kk,
        kn,
        kn,
        kn,
        kn,
        mk,
        mk,
        mk,
        WorkReq::new::<T>(mmax),
        WorkReq::new::<f64>(h),
        crate::data::prepared_req::<T>(shapes.clone()),
        scratch,
    ]))
}

/// Workspace bytes of [`fit`] for views of these shapes, this graph and rank `k`.
pub fn fit_workspace<T: Real, G: GraphOp<T> + ?Sized>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    graph: &G,
    k: usize,
    params: &MvslParams,
) -> Result<usize, Error> {
    params.validate()?;
    check_graph(params, graph, shapes.clone())?;
    fit_req::<T>(shapes, k, graph.apply_req(k))?.bytes()
}

/// Fits the shallow model (module docs: objective, updates, cost).
///
/// * `views`: `H ≥ 1` nonnegative views of the same `N` items.
/// * `graph`: the graph operator over the `N` items (`NoGraph` when β = 0;
///   [`crate::graph::Sge`], [`crate::graph::CsrGraphs`], ...).
/// * `u`: `H` buffers `M_v × K`; `v`: `K × N` (written; read with [`Init::Given`]).
/// * `work`: at least [`fit_workspace`] bytes (any alignment).
///
/// Validation happens before anything is written (outputs untouched on `Err`).
/// Cancelling returns `Ok` with [`Stop::Cancelled`](crate::steps::Stop::Cancelled) and the last complete iterate.
///
/// ```
/// use mvnmf::data::UNLABELED;
/// use mvnmf::graph::Sge;
/// use mvnmf::models::mvsl::{self, MvslParams};
/// use mvnmf::{Dense, View};
///
/// // Two views of 8 items (4 and 3 features, column-major); rank 2.
/// let (n, k) = (8, 2);
/// let x1: Vec<f64> = (0..4 * n).map(|i| (i * 5 % 9 + 1) as f64).collect();
/// let x2: Vec<f64> = (0..3 * n).map(|i| (i * 2 % 7 + 1) as f64).collect();
/// let views = [View::from(Dense::new(&x1, 4, n, 4)?), View::from(Dense::new(&x2, 3, n, 3)?)];
/// // Four labeled items of two classes, four unknown: the SGE graph (MvSL-S).
/// let labels = [0, 0, 1, 1, UNLABELED, UNLABELED, UNLABELED, UNLABELED];
/// let graph = Sge::new(&labels, 2)?;
/// let params = MvslParams { max_iter: 50, ..MvslParams::mvsl() };
///
/// let shapes = views.iter().map(|x| x.shape());
/// let mut work = vec![0u8; mvsl::fit_workspace::<f64, _>(shapes, &graph, k, &params)?];
/// let (mut u1, mut u2, mut v) = (vec![0.0; 4 * k], vec![0.0; 3 * k], vec![0.0; k * n]);
/// let us = &mut [&mut u1[..], &mut u2[..]][..];
/// let report = mvsl::fit(&views[..], &graph, k, &params, us, &mut v, &mut work, None)?;
/// assert!(report.objective.total < report.initial.total);
/// // V is the items' shared encoding (K x N), within [0, vmax].
/// assert!(v.iter().all(|&e| (0.0..=params.vmax).contains(&e)));
/// # Ok::<(), mvnmf::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn fit<T: Real, VS: ViewSet<T> + ?Sized, G: GraphOp<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
    views: &VS,
    graph: &G,
    k: usize,
    params: &MvslParams,
    u: &mut F,
    v: &mut [T],
    work: &mut [u8],
    monitor: Option<Monitor<'_>>,
) -> Result<Report, Error> {
    params.validate()?;
    let np = params.nmf_params();
    let hv = views.count();
    let shapes = |i| views.shape(i);
    let checked = validate_par(
        views,
        k,
        &np,
        &*u,
        params.init == Init::Given,
        v,
        work.len(),
        || fit_req::<T>((0..hv).map(shapes), k, graph.apply_req(k)),
        params.parallel,
    )?;
    run(views, graph, k, params, u, v, work, monitor, checked)
}

/// [`fit`] on inputs whose values the caller has checked and measured with the same
/// options ([`validate_par`] on these `views`, `u`, `v`, `k` and `params.nmf_params()`,
/// nothing written since): the pipeline's set-up checks them before it builds the graph,
/// and this skips the second pass over the data (the checks of the values, the scale's
/// measures and `½‖X‖²`). Everything else [`fit`] checks is checked here too, in the
/// same order; the same outcome bit for bit.
#[allow(clippy::too_many_arguments)]
pub(crate) fn fit_checked<
    T: Real,
    VS: ViewSet<T> + ?Sized,
    G: GraphOp<T> + ?Sized,
    F: FactorsMut<T> + ?Sized,
>(
    views: &VS,
    graph: &G,
    k: usize,
    params: &MvslParams,
    u: &mut F,
    v: &mut [T],
    work: &mut [u8],
    monitor: Option<Monitor<'_>>,
    checked: Checked,
) -> Result<Report, Error> {
    params.validate()?;
    let hv = views.count();
    fit_req::<T>((0..hv).map(|i| views.shape(i)), k, graph.apply_req(k))?.check(work.len())?;
    run(views, graph, k, params, u, v, work, monitor, checked)
}

/// The fit after [`validate_par`]: the graph's check, then the solver.
#[allow(clippy::too_many_arguments)]
fn run<T: Real, VS: ViewSet<T> + ?Sized, G: GraphOp<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
    views: &VS,
    graph: &G,
    k: usize,
    params: &MvslParams,
    u: &mut F,
    v: &mut [T],
    work: &mut [u8],
    monitor: Option<Monitor<'_>>,
    checked: Checked,
) -> Result<Report, Error> {
    let hv = views.count();
    check_graph(params, graph, (0..hv).map(|i| views.shape(i)))?;
    let st = Stack::new(work).with_par(params.parallel);
    shallow::fit(
        &mut Local::new(graph).with_half(checked.half),
        views,
        k,
        params,
        Steps::Mvsl,
        (checked.n, checked.mmax),
        DataScale::Measured(checked.scale),
        u,
        v,
        st,
        monitor,
    )
}

/// Workspace bytes of [`encode()`].
pub fn encode_workspace<T: Real, G: GraphOp<T> + ?Sized>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    graph: &G,
    k: usize,
    params: &MvslParams,
) -> Result<usize, Error> {
    params.validate()?;
    check_graph(params, graph, shapes.clone())?;
    encode::encode_req::<T>(shapes, k, graph.apply_req(k))?.bytes()
}

/// Out-of-sample encoding (DESIGN §10): the V-steps of [`fit`] with the bases
/// fixed, `min_{0 ≤ V ≤ vmax} ½ Σ_v ‖X^(v) − U^(v)V‖² + β/2[…graph…] + γΣV`.
/// Pass [`crate::graph::NoGraph`] (or β = 0) for new items outside any graph.
/// `u` is read only; `v` (`K × N`) written (read with [`Init::Given`]). Random
/// start: `V ~ U(0,1]·vmax` (bounded) or `√(m̄/K)` scale (unbounded).
///
/// ```
/// use mvnmf::graph::NoGraph;
/// use mvnmf::models::mvsl::{self, MvslParams};
/// use mvnmf::{Dense, View};
///
/// // Two views (3 and 2 features) of 4 new items, against fixed bases (K = 2);
/// // no graph for items outside the training set.
/// let (n, k) = (4, 2);
/// let u1 = [1.0, 0.0, 1.0, 0.0, 1.0, 1.0];
/// let u2 = [1.0, 0.5, 0.5, 1.0];
/// let y1: Vec<f64> = (0..3 * n).map(|i| (i % 5 + 1) as f64 / 5.0).collect();
/// let y2: Vec<f64> = (0..2 * n).map(|i| (i % 3 + 1) as f64 / 3.0).collect();
/// let views = [View::from(Dense::new(&y1, 3, n, 3)?), View::from(Dense::new(&y2, 2, n, 2)?)];
/// let graph = NoGraph { n };
/// let params = MvslParams { max_iter: 100, ..MvslParams::mvsl() };
/// let shapes = views.iter().map(|x| x.shape());
/// let mut work = vec![0u8; mvsl::encode_workspace::<f64, _>(shapes, &graph, k, &params)?];
/// let mut v = vec![0.0; k * n];
/// let us = &[&u1[..], &u2[..]][..];
/// let report = mvsl::encode(&views[..], &graph, k, &params, us, &mut v, &mut work, None)?;
/// assert!(report.objective.total <= report.initial.total);
/// assert!(v.iter().all(|&e| (0.0..=params.vmax).contains(&e)));
/// # Ok::<(), mvnmf::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn encode<
    T: Real,
    VS: ViewSet<T> + ?Sized,
    G: GraphOp<T> + ?Sized,
    F: crate::data::Factors<T> + ?Sized,
>(
    views: &VS,
    graph: &G,
    k: usize,
    params: &MvslParams,
    u: &F,
    v: &mut [T],
    work: &mut [u8],
    monitor: Option<Monitor<'_>>,
) -> Result<Report, Error> {
    encode::encode(views, graph, k, params, u, v, work, monitor)
}
