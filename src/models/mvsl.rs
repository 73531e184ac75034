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

use crate::data::{FactorsMut, ViewSet, ViewShape};
use crate::error::Error;
use crate::graph::GraphOp;
use crate::linalg::{dot, gemm, gemm_workspace};
use crate::linalg::mat::{MatMut, MatRef};
use crate::models::nmf::{self, NmfParams};
use crate::steps::prox::{group_norm, prox_l2_nonneg, prox_linf_nonneg, Sparsity};
use crate::linalg::real::Real;
use crate::steps::{notify, step, Init, Monitor, Objective, Report, Stop};
use crate::work::{Stack, WorkReq};

/// Options of the shallow solver. Start from a preset ([`ShallowParams::mvsl`],
/// [`ShallowParams::mcl`], [`ShallowParams::gnmf`], [`ShallowParams::joint_nmf`])
/// and override fields.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShallowParams {
    /// Outer iterations at most.
    pub max_iter: u32,
    /// Relative-decrease tolerance (0: run all iterations).
    pub tol: f64,
    /// Division guard ε ≥ 0 (use ε > 0 with graphs or γ > 0).
    pub eps: f64,
    /// Upper bound on V (the papers: 1).
    pub vmax: f64,
    /// Seed of the random start.
    pub seed: u64,
    /// Random or warm start.
    pub init: Init,
    /// Group norm on each `U^(v)`.
    pub sparsity: Sparsity,
    /// Its weight α ≥ 0.
    pub alpha: f64,
    /// Graph weight β ≥ 0.
    pub beta: f64,
    /// L1 weight γ ≥ 0 on V.
    pub gamma: f64,
    /// Accepted composite-gradient steps per U-step (≥ 1; default 3).
    pub u_inner: u32,
    /// V updates per outer iteration (≥ 1; default 1).
    pub v_inner: u32,
    /// Lipschitz search: increase factor η_u > 1 (default 2).
    pub eta_up: f64,
    /// Lipschitz search: decrease factor η_d ≥ 1 (default 2).
    pub eta_down: f64,
    /// Lower bound L₀ ≥ 0 of the Lipschitz guess (default 0).
    pub l0: f64,
}

impl ShallowParams {
    /// Plain joint multi-view NMF (α = β = γ = 0, vmax = ∞): iterates equal
    /// [`nmf::joint_fit`]'s.
    pub fn joint_nmf() -> Self {
        let n = NmfParams::default();
        ShallowParams {
            max_iter: n.max_iter,
            tol: n.tol,
            eps: n.eps,
            vmax: n.vmax,
            seed: n.seed,
            init: n.init,
            sparsity: Sparsity::None,
            alpha: 0.0,
            beta: 0.0,
            gamma: 0.0,
            u_inner: 3,
            v_inner: 1,
            eta_up: 2.0,
            eta_down: 2.0,
            l0: 0.0,
        }
    }

    /// MvSL (seed 003 defaults: L1,2 with α = 15, β = 0.02, vmax = 1; seed 000
    /// used α = 10). Pair it with SGE, LDGE or TGE graphs for MvSL-S/L/T.
    pub fn mvsl() -> Self {
        ShallowParams {
            sparsity: Sparsity::L12,
            alpha: 15.0,
            beta: 0.02,
            vmax: 1.0,
            ..Self::joint_nmf()
        }
    }

    /// MCL (seed 001 eq. 1, the one-layer DMCL): L1,∞ with α = 100, β = 0.015,
    /// γ = 0.005, vmax = 1, with the SGE graph.
    pub fn mcl() -> Self {
        ShallowParams {
            sparsity: Sparsity::L1Inf,
            alpha: 100.0,
            beta: 0.015,
            gamma: 0.005,
            vmax: 1.0,
            ..Self::joint_nmf()
        }
    }

    /// Semi-supervised multi-view GNMF baseline: no sparsity, a within-class kNN
    /// affinity graph only, β = 0.02 (the MvSL papers' graph weight; the
    /// baseline has no published value), vmax = 1. Note the scale degeneracy
    /// (DESIGN §2): with no penalty on U, V can shrink while U grows to make
    /// `tr(V Lᵃ Vᵀ)` vanish; the bound vmax = 1 does not prevent shrinking.
    pub fn gnmf() -> Self {
        ShallowParams {
            beta: 0.02,
            vmax: 1.0,
            ..Self::joint_nmf()
        }
    }

    /// [`Error::BadParameter`] unless every weight is finite and in range.
    pub fn validate(&self) -> Result<(), Error> {
        self.nmf_params().validate()?;
        let nonneg = |x: f64| x.is_finite() && x >= 0.0;
        let ok = nonneg(self.alpha)
            && nonneg(self.beta)
            && nonneg(self.gamma)
            && nonneg(self.l0)
            && self.u_inner >= 1
            && self.v_inner >= 1
            && self.eta_up.is_finite()
            && self.eta_up > 1.0
            && self.eta_down.is_finite()
            && self.eta_down >= 1.0;
        if ok {
            Ok(())
        } else {
            Err(Error::BadParameter)
        }
    }

    pub(crate) fn nmf_params(&self) -> NmfParams {
        NmfParams {
            max_iter: self.max_iter,
            tol: self.tol,
            eps: self.eps,
            vmax: self.vmax,
            seed: self.seed,
            init: self.init,
        }
    }

    fn proximal(&self) -> bool {
        self.sparsity != Sparsity::None && self.alpha > 0.0
    }
}

impl Default for ShallowParams {
    fn default() -> Self {
        Self::mvsl()
    }
}

pub(crate) fn fit_req<T>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    k: usize,
    graph_req: WorkReq,
) -> Result<WorkReq, Error> {
    let (n, mmax) = nmf::check_shapes(shapes.clone(), k)?;
    let h = shapes.clone().into_iter().count();
    let kk = WorkReq::matrix::<T>(k, k);
    let kn = WorkReq::matrix::<T>(k, n);
    let mk = WorkReq::matrix::<T>(mmax, k);
    let scratch = nmf::products_req::<T>(shapes.clone(), k, n)
        .or(graph_req)
        .or(gemm_workspace::<T>(k, k, mmax));
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
        crate::data::prepared_workspace::<T>(shapes.clone()),
        scratch,
    ]))
}

/// The graph spans the views' items, and a penalty graph comes with a bound on
/// V (else `−β/2 tr(V Lᵖ Vᵀ)` is unbounded below: [`Error::BadParameter`]).
pub(crate) fn check_graph<T: Real, G: GraphOp<T> + ?Sized>(
    params: &ShallowParams,
    graph: &G,
    shapes: impl IntoIterator<Item = ViewShape>,
) -> Result<(), Error> {
    if let Some(s) = shapes.into_iter().next() {
        if s.cols != graph.items() {
            return Err(Error::DimensionMismatch);
        }
    }
    if params.beta > 0.0 && !params.vmax.is_finite() && graph.has_penalty() {
        return Err(Error::BadParameter);
    }
    Ok(())
}

/// Workspace bytes of [`fit`] for views of these shapes, this graph and rank `k`.
pub fn fit_workspace<T: Real, G: GraphOp<T> + ?Sized>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    graph: &G,
    k: usize,
    params: &ShallowParams,
) -> Result<usize, Error> {
    params.validate()?;
    check_graph(params, graph, shapes.clone())?;
    fit_req::<T>(shapes, k, graph.apply_workspace(k))?.bytes()
}

/// Buffers of one run, carved from the workspace.
struct Bufs<'a, T> {
    g: &'a mut [T],
    p: &'a mut [T],
    h: &'a mut [T],
    q: &'a mut [T],
    d: &'a mut [T],
    plus: &'a mut [T],
    minus: &'a mut [T],
    a: &'a mut [T],
    b: &'a mut [T],
    c: &'a mut [T],
    sort: &'a mut [T],
    lip: &'a mut [f64],
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
/// Cancelling returns `Ok` with [`Stop::Cancelled`] and the last complete iterate.
#[allow(clippy::too_many_arguments)]
pub fn fit<T: Real, VS: ViewSet<T> + ?Sized, G: GraphOp<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
    views: &VS,
    graph: &G,
    k: usize,
    params: &ShallowParams,
    u: &mut F,
    v: &mut [T],
    work: &mut [u8],
    mut monitor: Option<Monitor<'_>>,
) -> Result<Report, Error> {
    params.validate()?;
    let np = params.nmf_params();
    let hv = views.count();
    let shapes = |i| views.shape(i);
    let (n, mmax) = nmf::validate(
        views,
        k,
        &np,
        &*u,
        params.init == Init::Given,
        v,
        work.len(),
        || fit_req::<T>((0..hv).map(shapes), k, graph.apply_workspace(k)),
    )?;
    check_graph(params, graph, (0..hv).map(|i| views.shape(i)))?;

    let mut st = Stack::new(work);
    let mut bf = Bufs {
        g: st.take_matrix(k, k)?,
        p: st.take_matrix(k, k)?,
        h: st.take_matrix(k, k)?,
        q: st.take_matrix(k, n)?,
        d: st.take_matrix(k, n)?,
        plus: st.take_matrix(k, n)?,
        minus: st.take_matrix(k, n)?,
        a: st.take_matrix(mmax, k)?,
        b: st.take_matrix(mmax, k)?,
        c: st.take_matrix(mmax, k)?,
        sort: st.take(mmax)?,
        lip: st.take(hv)?,
    };
    let prep = crate::data::Prepared::new(views, &mut st)?;
    bf.lip.fill(0.0);
    let vmax = T::from_f64(params.vmax);
    let half_x2: f64 = (0..hv).map(|i| 0.5 * views.view(i).sq_frobenius()).sum();
    match params.init {
        Init::Random => nmf::random_start(views, k, &np, u, v),
        Init::Given => v.iter_mut().for_each(|x| *x = x.min(vmax)),
    }
    let use_graph = params.beta > 0.0;

    let mut sc = st.rest();
    nmf::form_pq(views, Some(&prep), k, &*u, bf.p, bf.q, &mut sc)?;
    nmf::gram(v, k, n, bf.g, &mut sc)?;
    let traces = if use_graph {
        graph.apply(v, k, bf.plus, bf.minus, &mut sc)?
    } else {
        (0.0, 0.0)
    };
    let mut obj = objective(params, views, &*u, half_x2, &bf, v, traces);
    let mut report = Report {
        iterations: 0,
        initial: obj,
        objective: obj,
        stop: Stop::MaxIter,
        dead_views: 0,
    };
    if notify(&mut monitor, 0, obj) {
        report.stop = Stop::Cancelled;
        report.dead_views = nmf::dead_views(&*u);
        return Ok(report);
    }
    let mut graph_fresh = use_graph;

    for it in 1..=params.max_iter {
        for i in 0..hv {
            let x = views.view(i);
            let m = x.rows();
            x.x_vt(prep.get(views, i), v, k, &mut bf.a[..m * k], &mut sc)?;
            if params.proximal() {
                u_step_proximal(params, u.get_mut(i), m, k, &mut bf, i, &mut sc)?;
            } else {
                let ui = u.get_mut(i);
                gemm(
                    T::ONE,
                    MatRef::col_major(ui, m, k)?,
                    MatRef::col_major(bf.g, k, k)?,
                    T::ZERO,
                    MatMut::col_major(&mut bf.b[..m * k], m, k)?,
                    &mut sc,
                )?;
                nmf::mu_step(
                    ui,
                    &bf.a[..m * k],
                    &bf.b[..m * k],
                    T::from_f64(params.eps),
                    T::INFINITY,
                );
            }
        }
        nmf::form_pq(views, Some(&prep), k, &*u, bf.p, bf.q, &mut sc)?;
        for s in 0..params.v_inner {
            if use_graph && !(s == 0 && graph_fresh) {
                graph.apply(v, k, bf.plus, bf.minus, &mut sc)?;
            }
            gemm(
                T::ONE,
                MatRef::col_major(bf.p, k, k)?,
                MatRef::col_major(v, k, n)?,
                T::ZERO,
                MatMut::col_major(bf.d, k, n)?,
                &mut sc,
            )?;
            v_update(params, v, bf.d, bf.plus, bf.minus, bf.q, use_graph);
        }
        nmf::gram(v, k, n, bf.g, &mut sc)?;
        let traces = if use_graph {
            graph.apply(v, k, bf.plus, bf.minus, &mut sc)?
        } else {
            (0.0, 0.0)
        };
        graph_fresh = use_graph;
        let prev = obj.total;
        obj = objective(params, views, &*u, half_x2, &bf, v, traces);
        if step(&mut report, &mut monitor, it, prev, obj, params.tol) {
            break;
        }
    }
    report.dead_views = nmf::dead_views(&*u);
    Ok(report)
}

/// The full objective and its parts at the current iterate (`bf.p`, `bf.q` from
/// the current U, `bf.g = VVᵀ`, graph traces at the current V).
fn objective<T: Real, VS: ViewSet<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
    params: &ShallowParams,
    views: &VS,
    u: &F,
    half_x2: f64,
    bf: &Bufs<'_, T>,
    v: &[T],
    traces: (f64, f64),
) -> Objective {
    let rec = nmf::objective(half_x2, bf.q, v, bf.p, bf.g).reconstruction;
    let norms = |i: usize| group_norm(params.sparsity, u.get(i), views.shape(i).rows);
    assemble(params, rec, (0..views.count()).map(norms), traces, v)
}

/// The weighted parts: `rec`, `α Σ` of the group norms, `β/2 (ta, −tp)`, `γ ΣV`.
pub(crate) fn assemble<T: Real>(
    params: &ShallowParams,
    rec: f64,
    norms: impl Iterator<Item = f64>,
    (ta, tp): (f64, f64),
    v: &[T],
) -> Objective {
    let sparsity = if params.sparsity == Sparsity::None || params.alpha == 0.0 {
        0.0
    } else {
        params.alpha * norms.sum::<f64>()
    };
    let affinity = 0.5 * params.beta * ta;
    let penalty = 0.0 - 0.5 * params.beta * tp; // +0.0, not −0.0, without a penalty
    let l1 = if params.gamma > 0.0 {
        params.gamma * v.iter().map(|x| x.to_f64()).sum::<f64>()
    } else {
        0.0
    };
    Objective {
        total: rec + sparsity + affinity + penalty + l1,
        reconstruction: rec,
        sparsity,
        affinity,
        penalty,
        l1,
    }
}

/// Composite gradient mapping on `φ(U) = ½‖X‖² − tr(UᵀR) + ½tr(UᵀU G) + αR(U)`,
/// `R = bf.a`, `G = bf.g`; `u_inner` accepted steps.
fn u_step_proximal<T: Real>(
    params: &ShallowParams,
    u: &mut [T],
    m: usize,
    k: usize,
    bf: &mut Bufs<'_, T>,
    view: usize,
    sc: &mut Stack<'_>,
) -> Result<(), Error> {
    let mut s = ProxScratch {
        grad: &mut bf.b[..m * k],
        t: &mut bf.c[..m * k],
        delta: &mut [],
        g1d: &mut [],
        h: &mut *bf.h,
        sort: &mut *bf.sort,
    };
    prox_gradient(
        params,
        u,
        m,
        k,
        &bf.a[..m * k],
        None,
        bf.g,
        &mut bf.lip[view],
        &mut s,
        sc,
    )
}

/// Scratch of [`prox_gradient`]: `grad`, `t` (`p × K`); with a left Gram `G₁`
/// also `delta`, `g1d` (`p × K`); `h` (`K × K`), `sort` (`p`).
pub(crate) struct ProxScratch<'a, T> {
    pub(crate) grad: &'a mut [T],
    pub(crate) t: &'a mut [T],
    pub(crate) delta: &'a mut [T],
    pub(crate) g1d: &'a mut [T],
    pub(crate) h: &'a mut [T],
    pub(crate) sort: &'a mut [T],
}

/// Composite gradient mapping (seed 001 Alg. 2, DESIGN §4) on
/// `φ(U) = ½‖X‖² − tr(UᵀR) + ½tr(UᵀG₁UG₂) + αR(U)` over `U ≥ 0` (`p × K`), with
/// `G₁ = I` when `g1` is `None` (shallow models) or `BᵀB` for the top layer of
/// a deep stack. `lip` carries the Lipschitz guess between outer iterations
/// (0: start from `tr(G₁)·tr(G₂) ≥ λmax(G₁)λmax(G₂)`). Never touches X.
#[allow(clippy::too_many_arguments)]
pub(crate) fn prox_gradient<T: Real>(
    params: &ShallowParams,
    u: &mut [T],
    m: usize,
    k: usize,
    r: &[T],
    g1: Option<&[T]>,
    g2: &[T],
    lip: &mut f64,
    s: &mut ProxScratch<'_, T>,
    sc: &mut Stack<'_>,
) -> Result<(), Error> {
    let trace = |g: &[T], n: usize| (0..n).map(|i| g[i + i * n].to_f64()).sum::<f64>();
    let start = trace(g2, k) * g1.map_or(1.0, |g| trace(g, m));
    let mut l = if *lip > 0.0 {
        *lip / params.eta_down
    } else {
        start
    };
    l = l.max(params.l0).max(f64::MIN_POSITIVE);
    for _ in 0..params.u_inner {
        // ∇f = G₁ U G₂ − R
        match g1 {
            None => gemm(
                T::ONE,
                MatRef::col_major(u, m, k)?,
                MatRef::col_major(g2, k, k)?,
                T::ZERO,
                MatMut::col_major(s.grad, m, k)?,
                sc,
            )?,
            Some(g1) => {
                gemm(
                    T::ONE,
                    MatRef::col_major(u, m, k)?,
                    MatRef::col_major(g2, k, k)?,
                    T::ZERO,
                    MatMut::col_major(s.delta, m, k)?,
                    sc,
                )?;
                gemm(
                    T::ONE,
                    MatRef::col_major(g1, m, m)?,
                    MatRef::col_major(s.delta, m, k)?,
                    T::ZERO,
                    MatMut::col_major(s.grad, m, k)?,
                    sc,
                )?;
            }
        }
        s.grad.iter_mut().zip(r).for_each(|(g, &ri)| *g -= ri);
        let mut accepted = false;
        for _ in 0..2000 {
            let inv_l = T::from_f64(1.0 / l);
            for ((ti, &ui), &gi) in s.t.iter_mut().zip(u.iter()).zip(s.grad.iter()) {
                *ti = ui - gi * inv_l;
            }
            let tau = params.alpha / l;
            for col in s.t.chunks_exact_mut(m) {
                match params.sparsity {
                    Sparsity::L12 => prox_l2_nonneg(col, tau),
                    Sparsity::L1Inf => prox_linf_nonneg(col, tau, s.sort),
                    Sparsity::None => col.iter_mut().for_each(|x| *x = x.max(T::ZERO)),
                }
            }
            // Sufficient decrease: f(T) − f(U) − ⟨∇f, Δ⟩ = ½tr(ΔᵀG₁ΔG₂) ≤ (L/2)‖Δ‖².
            let (lhs, delta2) = match g1 {
                None => quad_delta(s.t, u, m, k, g2, s.h),
                Some(g1) => {
                    for ((d, &ti), &ui) in s.delta.iter_mut().zip(s.t.iter()).zip(u.iter()) {
                        *d = ti - ui;
                    }
                    gemm(
                        T::ONE,
                        MatRef::col_major(g1, m, m)?,
                        MatRef::col_major(s.delta, m, k)?,
                        T::ZERO,
                        MatMut::col_major(s.g1d, m, k)?,
                        sc,
                    )?;
                    let mut q = 0.0;
                    for c in 0..k {
                        let a = &s.g1d[c * m..(c + 1) * m];
                        for kk in 0..k {
                            q += g2[kk + c * k].to_f64() * dot(a, &s.delta[kk * m..(kk + 1) * m]);
                        }
                    }
                    (0.5 * q, crate::linalg::sq_norm(s.delta))
                }
            };
            if lhs <= 0.5 * l * delta2 * (1.0 + 1e-12) {
                u.copy_from_slice(s.t);
                accepted = true;
                break;
            }
            l *= params.eta_up;
        }
        if !accepted {
            // λmax(G₁)λmax(G₂) is finite, so the search always ends; keep U if not.
            break;
        }
    }
    *lip = l;
    Ok(())
}

/// `(½ tr(ΔᵀΔ G), ‖Δ‖²)` for `Δ = T − U` (`m × k`), `O(m k²)`, using `h` (k×k).
fn quad_delta<T: Real>(t: &[T], u: &[T], m: usize, k: usize, g: &[T], h: &mut [T]) -> (f64, f64) {
    // h = ΔᵀΔ, accumulated column pair by column pair in f64.
    let mut d2 = 0.0;
    for a in 0..k {
        for b in 0..=a {
            let (ta, ua) = (&t[a * m..(a + 1) * m], &u[a * m..(a + 1) * m]);
            let (tb, ub) = (&t[b * m..(b + 1) * m], &u[b * m..(b + 1) * m]);
            let mut s = 0.0;
            for i in 0..m {
                s += (ta[i].to_f64() - ua[i].to_f64()) * (tb[i].to_f64() - ub[i].to_f64());
            }
            h[a + b * k] = T::from_f64(s);
            h[b + a * k] = T::from_f64(s);
            if a == b {
                d2 += s;
            }
        }
    }
    (0.5 * dot(h, g), d2)
}

/// The bounded multiplicative V update of DESIGN §5 (guarded: `A + ε`, `B − ε`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn v_update<T: Real>(
    params: &ShallowParams,
    v: &mut [T],
    pv: &[T],
    plus: &[T],
    minus: &[T],
    q: &[T],
    use_graph: bool,
) {
    let eps = T::from_f64(params.eps);
    let vmax = T::from_f64(params.vmax);
    let gamma = T::from_f64(params.gamma);
    let beta = T::from_f64(params.beta);
    let two = T::from_f64(2.0);
    let four = T::from_f64(4.0);
    for idx in 0..v.len() {
        let (a, c) = if use_graph {
            (pv[idx] + beta * plus[idx] + eps, beta * minus[idx])
        } else {
            (pv[idx] + eps, T::ZERO)
        };
        if a <= T::ZERO || v[idx] == T::ZERO {
            // Only with ε = 0: no curvature (the entry does not move the
            // objective) or an entry that multiplicative steps cannot revive.
            v[idx] = v[idx].min(vmax);
            continue;
        }
        let factor = if c == T::ZERO {
            ((q[idx] - gamma) + eps).max(T::ZERO) / a
        } else {
            let b = (gamma - q[idx]) - eps;
            let disc = (b * b + four * a * c).sqrt();
            if b > T::ZERO {
                two * c / (b + disc)
            } else {
                (disc - b) / (two * a)
            }
        };
        v[idx] = (v[idx] * factor).min(vmax);
    }
}

/// Workspace bytes of [`encode`].
pub fn encode_workspace<T: Real, G: GraphOp<T> + ?Sized>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    graph: &G,
    k: usize,
    params: &ShallowParams,
) -> Result<usize, Error> {
    fit_workspace::<T, G>(shapes, graph, k, params)
}

/// Out-of-sample encoding (DESIGN §10): the V-steps of [`fit`] with the bases
/// fixed, `min_{0 ≤ V ≤ vmax} ½ Σ_v ‖X^(v) − U^(v)V‖² + β/2[…graph…] + γΣV`.
/// Pass [`crate::graph::NoGraph`] (or β = 0) for new items outside any graph.
/// `u` is read only; `v` (`K × N`) written (read with [`Init::Given`]). Random
/// start: `V ~ U(0,1]·vmax` (bounded) or `√(m̄/K)` scale (unbounded).
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
    params: &ShallowParams,
    u: &F,
    v: &mut [T],
    work: &mut [u8],
    mut monitor: Option<Monitor<'_>>,
) -> Result<Report, Error> {
    params.validate()?;
    let np = params.nmf_params();
    let hv = views.count();
    let shapes = |i| views.shape(i);
    let (n, _) = nmf::validate(views, k, &np, u, true, v, work.len(), || {
        fit_req::<T>((0..hv).map(shapes), k, graph.apply_workspace(k))
    })?;
    check_graph(params, graph, (0..hv).map(|i| views.shape(i)))?;
    let mut st = Stack::new(work);
    let g: &mut [T] = st.take_matrix(k, k)?;
    let p: &mut [T] = st.take_matrix(k, k)?;
    let q: &mut [T] = st.take_matrix(k, n)?;
    let d: &mut [T] = st.take_matrix(k, n)?;
    let plus: &mut [T] = st.take_matrix(k, n)?;
    let minus: &mut [T] = st.take_matrix(k, n)?;
    let vmax = T::from_f64(params.vmax);
    let half_x2: f64 = (0..hv).map(|i| 0.5 * views.view(i).sq_frobenius()).sum();
    match params.init {
        Init::Random => {
            let (sv, _) = nmf::start_scales(views, k, params.vmax);
            let mut rng = crate::rng::Rng::new(params.seed);
            v.iter_mut()
                .for_each(|x| *x = T::from_f64(rng.uniform() * sv));
        }
        Init::Given => v.iter_mut().for_each(|x| *x = x.min(vmax)),
    }
    let use_graph = params.beta > 0.0;
    let mut sc = st.rest();
    nmf::form_pq(views, None, k, u, p, q, &mut sc)?;
    let eval = |v: &[T],
                g: &mut [T],
                plus: &mut [T],
                minus: &mut [T],
                sc: &mut Stack<'_>|
     -> Result<Objective, Error> {
        nmf::gram(v, k, n, g, sc)?;
        let (ta, tp) = if use_graph {
            graph.apply(v, k, plus, minus, sc)?
        } else {
            (0.0, 0.0)
        };
        let rec = nmf::objective(half_x2, q, v, p, g).reconstruction;
        let l1 = params.gamma * v.iter().map(|x| x.to_f64()).sum::<f64>();
        let (affinity, penalty) = (0.5 * params.beta * ta, -0.5 * params.beta * tp);
        Ok(Objective {
            total: rec + affinity + penalty + l1,
            reconstruction: rec,
            affinity,
            penalty,
            l1,
            sparsity: 0.0,
        })
    };
    let mut obj = eval(v, g, plus, minus, &mut sc)?;
    let mut report = Report {
        iterations: 0,
        initial: obj,
        objective: obj,
        stop: Stop::MaxIter,
        dead_views: nmf::dead_views(u),
    };
    if notify(&mut monitor, 0, obj) {
        report.stop = Stop::Cancelled;
        return Ok(report);
    }
    for it in 1..=params.max_iter {
        gemm(
            T::ONE,
            MatRef::col_major(p, k, k)?,
            MatRef::col_major(v, k, n)?,
            T::ZERO,
            MatMut::col_major(d, k, n)?,
            &mut sc,
        )?;
        v_update(params, v, d, plus, minus, q, use_graph);
        let prev = obj.total;
        obj = eval(v, g, plus, minus, &mut sc)?;
        if step(&mut report, &mut monitor, it, prev, obj, params.tol) {
            break;
        }
    }
    Ok(report)
}
