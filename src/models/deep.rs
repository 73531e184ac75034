//! Deep layer-wise multi-view factorization: DMCL (seed 001), with DNMF,
//! ConcatDNMF and MCL (one layer) as presets (DESIGN §2, §4, §5).
//!
//! ```text
//! O = ½ Σ_v ‖X^(v) − U_1^(v) ⋯ U_M^(v) V‖²_F + α Σ_v R(U_M^(v))
//!   + β/2 [tr(V Lᵃ Vᵀ) − tr(V Lᵖ Vᵀ)] + γ ΣV
//! s.t. U_m ≥ 0 (and 0 ≤ U_m ≤ 1 for m < M, "box"), 0 ≤ V ≤ vmax
//! ```
//!
//! **Layers.** `layers = [p_1, …, p_M]` with `K = p_M` the rank of the shared
//! `V`. For a view with `M_v` features, hidden layer `m < M` has
//! `p_m^(v) = min(p_m, p_{m−1}^(v))` (`p_0^(v) = M_v`): a layer never grows
//! past its input, so one `layers` list serves views of any width. The factor
//! buffer of a view holds `U_1 (M_v × p_1), U_2 (p_1 × p_2), …, U_M (p_{M−1} × K)`
//! one after the other, column-major ([`factor_len`], [`layer_dims`]).
//!
//! **Scale degeneracy (DESIGN §2).** `U_{M−1} U_M` is unchanged by
//! `U_{M−1} ← sU_{M−1}`, `U_M ← U_M/s`, which sends `α‖U_M‖_{1,∞}` to zero at no
//! cost. With `box_lower` (default) the lower layers live in `[0, 1]` (any
//! solution can be rescaled into the box with the scale pushed up into `U_M`);
//! the clipped multiplicative step is still the exact majoriser minimiser.
//! `box_lower = false` is the papers' unconstrained form.
//!
//! **Pre-training** ([`Init::Random`], Algorithm 1 lines 1–3): per view, NMF of
//! `X` with rank `p_1`, then of each layer's encoding with the next rank
//! (`pretrain_iter` iterations each, seeds derived from `seed`); then each lower
//! layer is rescaled into the box with the scale pushed into the next layer
//! (product unchanged). `V` starts uniform in `(0, vmax]` as in the paper, or
//! (option [`DeepVInit::Pretrained`]) as the mean of the views' top encodings.
//! With [`Init::Given`] the buffers hold the start (lower layers rescaled into
//! the box first when `box_lower`).
//!
//! **Fine-tuning sweep**, per view, from `R = X Vᵀ` and `G = V Vᵀ` (X touched
//! once here and once for `Q = Σ ŨᵀX`, `Ũ = U_1⋯U_M`): with `B = U_1⋯U_{m−1}`,
//! `S = U_{m+1}⋯U_M`, lower layers by the multiplicative rule (seed 001 eq. 17)
//! `U_m ← min(1, U_m ∘ (BᵀR Sᵀ + ε) ⊘ (BᵀB U_m (S G Sᵀ) + ε))` — that is
//! `XΦᵀ = (XVᵀ)Sᵀ`, `ΦΦᵀ = S(VVᵀ)Sᵀ`, never a `p × N` temporary; the top layer
//! by composite gradient mapping with the L1,∞ prox on `G₁ = BᵀB`, `G₂ = G`,
//! `R_M = BᵀR` (multiplicative when α = 0); then the V-step of
//! [`crate::models::mvsl`]. Cost per sweep: `4 M_v N K` (dense) per view plus
//! `O(M_v p (p + K) + p² K)` per layer and the V-step's `O(K²N + K·nnz)`.
//! With `M = 1` every computation is the shallow solver's: the iterates equal
//! [`crate::models::mvsl::fit`]'s (MCL) bit for bit.
//!
//! **Magnitudes** (`crate::steps::scale`): data with `½ Σ_v ‖X^(v)‖²_F > 2^999`
//! is refused ([`crate::Error::InputTooLarge`]); data whose largest entry is
//! outside `[2^−64, 2^64]` is solved as `X/c` for a power of two `c` (pre-training too),
//! with the top layer divided by `c` and the weights scaled to keep the
//! minimisers (`α/c`, `β/c²`, `γ/c²`); factors and objective are returned in the
//! caller's units.
//! Small data is scaled up only while the scaled weights that act stay below
//! `2^256` (`2^32` in `f32`; `α` without a group norm and `β` without a graph
//! weight multiply nothing and do not count). The layers nothing else bounds
//! (the top layer on the multiplicative path, every layer without the box)
//! are capped at `crate::steps::scale::factor_cap` in the scaled problem: with
//! `γ > 0` and no acting `α` the objective has no minimiser (`V → 0`,
//! `Ũ → ∞`; issue 31, seed `0x1321c9e3`), and the cap keeps the products
//! finite. Ordinary fits never reach it.

use crate::data::{Dense, Factors, FactorsMut, View, ViewSet, ViewShape};
use crate::error::{Error, Part};
use crate::graph::GraphOp;
use crate::linalg::mat::MatRef;
use crate::linalg::real::Real;
use crate::linalg::{gemm_into, gemm_req};
use crate::steps::check::{check_graph, check_shapes};
use crate::steps::init::start_scales;
use crate::steps::mu::{gram, mu_step, objective, pq_view, products_req};
use crate::steps::prox::{group_norm, Sparsity};
use crate::steps::prox::{prox_gradient, ProxScratch};
use crate::steps::scale::{factor_cap, Scale};
use crate::steps::vstep::{assemble, graph_traces, v_phase};
use crate::steps::{finite_outputs, run, Init, Monitor, Report, StopRule};
use crate::steps::{MvslParams, NmfParams};
use crate::work::{Stack, WorkReq};

/// How `V` starts after pre-training.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeepVInit {
    /// Uniform in `(0, vmax]` (the paper's Algorithm 1).
    Random,
    /// The mean over views of the pre-trained top encodings, clipped to vmax.
    Pretrained,
}

/// Options of the deep solver.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeepParams {
    /// Everything the shallow solver has; `sparsity`/`alpha` act on the top layer.
    pub top: MvslParams,
    /// NMF iterations per layer in pre-training (default 100).
    pub pretrain_iter: u32,
    /// Lower layers in `[0, 1]` (default true; DESIGN §2).
    pub box_lower: bool,
    /// Start of `V` after pre-training (default random, as the paper).
    pub v_init: DeepVInit,
}

impl DeepParams {
    /// DMCL (seed 001): L1,∞ on the top layer with α = 10, β = 0.015,
    /// γ = 0.005, vmax = 1, SGE graph (the caller's), box on, random `V`
    /// after 100 pre-training iterations per layer.
    ///
    /// **α = 10, not the paper's 100** (issue 20): under the box every scale
    /// sits in the top layer, and with two or three layers α = 100 lost to
    /// α = 10 on both data sets tried (`examples-c/REPRODUCE.md`, "DMCL and
    /// depth"): kNN accuracy at 10 / 30 / 50 % labeled, depth 2, full mfeat
    /// 92.4 / 95.4 / 96.0 against 93.5 / 95.6 / 96.7, two-view 20 Newsgroups
    /// 39.9 / 43.2 / 40.7 against 42.7 / 47.0 / 46.8. The other options
    /// were no better there: no box, `V` from the pre-trained
    /// encodings, 20 or 300 pre-training iterations, wider layers.
    /// [`MvslParams::mcl`] keeps the paper's α = 100 (one layer, where it
    /// was the better weight on the text set).
    pub fn dmcl() -> Self {
        DeepParams {
            top: MvslParams {
                alpha: 10.0,
                ..MvslParams::mcl()
            },
            pretrain_iter: 100,
            box_lower: true,
            v_init: DeepVInit::Random,
        }
    }

    /// DNMF / ConcatDNMF: no regularisers, vmax = ∞ (one view: DNMF).
    pub fn dnmf() -> Self {
        DeepParams {
            top: MvslParams::joint_nmf(),
            ..Self::dmcl()
        }
    }

    fn validate(&self) -> Result<(), Error> {
        self.top.validate()
    }
}

impl Default for DeepParams {
    fn default() -> Self {
        Self::dmcl()
    }
}

/// `(input, output)` dimensions of each layer of a view with `rows` features:
/// `U_m` is `input × output`.
pub fn layer_dims(
    rows: usize,
    layers: &[usize],
) -> impl Iterator<Item = (usize, usize)> + Clone + '_ {
    let last = layers.len().saturating_sub(1);
    layers.iter().enumerate().scan(rows, move |prev, (m, &p)| {
        let out = if m == last { p } else { p.min(*prev) };
        let r = (*prev, out);
        *prev = out;
        Some(r)
    })
}

/// Length of a view's factor buffer (all layers), checked.
pub fn factor_len(rows: usize, layers: &[usize]) -> Result<usize, Error> {
    check_layers(layers)?;
    if rows == 0 {
        // Like every other routine: a view without features is refused (issue 15).
        return Err(Error::ZeroDimension);
    }
    layer_dims(rows, layers).try_fold(0usize, |acc, (a, b)| {
        a.checked_mul(b)
            .and_then(|x| acc.checked_add(x))
            .ok_or(Error::SizeOverflow)
    })
}

fn check_layers(layers: &[usize]) -> Result<(), Error> {
    if layers.is_empty() || layers.contains(&0) {
        return Err(Error::BadRank);
    }
    Ok(())
}

/// Largest hidden input dimension `p_{M−1}` (or K) and the total S-stack size over views.
fn dims_max(shapes: impl IntoIterator<Item = ViewShape>, layers: &[usize]) -> (usize, usize) {
    let k = *layers.last().unwrap_or(&1);
    let (mut pmax, mut smax) = (k, 0);
    for s in shapes {
        let mut sstack = 0;
        for (a, b) in layer_dims(s.rows, layers) {
            if a != s.rows {
                pmax = pmax.max(a);
            }
            pmax = pmax.max(b);
            sstack = b.saturating_mul(k).saturating_add(sstack);
        }
        smax = smax.max(sstack);
    }
    (pmax, smax)
}

fn finetune_req<T>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    layers: &[usize],
    graph_req: WorkReq,
) -> Result<WorkReq, Error> {
    let k = *layers.last().ok_or(Error::BadRank)?;
    let (n, mmax) = check_shapes(shapes.clone(), k)?;
    let h = shapes.clone().into_iter().count();
    let (pmax, smax) = dims_max(shapes.clone(), layers);
    let d = mmax.max(pmax).max(k);
    let kk = WorkReq::matrix::<T>(k, k);
    let kn = WorkReq::matrix::<T>(k, n);
    let mk = WorkReq::matrix::<T>(mmax, k);
    let mp = WorkReq::matrix::<T>(mmax, pmax);
    let pp = WorkReq::matrix::<T>(pmax, pmax);
    let pk = WorkReq::matrix::<T>(pmax, k);
    let wide = WorkReq::matrix::<T>(mmax.max(pmax), pmax.max(k));
    let scratch = products_req::<T>(shapes.clone(), k, n)
        .or(graph_req)
        .or(gemm_req::<T>(d, d, d));
    Ok(WorkReq::all_of(&[
        kk,
        kk,
        kk,
        kn,
        kn,
        kn,
        kn, // g p h q d plus minus
        mk,
        mk, // r, ut (Ũ)
        mp,
        mp, // b, b2
        pp,
        pp,
        wide,
        wide, // c (BᵀB), w (S G Sᵀ), num, den
        pk,
        wide,
        wide,
        pk,
        pk, // t1, grad, t, delta, g1d
        WorkReq::matrix::<T>(smax.max(1), 1),
        WorkReq::new::<T>(pmax.max(mmax)),
        WorkReq::new::<f64>(h),
        crate::data::prepared_req::<T>(shapes.clone()),
        scratch,
    ]))
}

fn pretrain_req<T>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    layers: &[usize],
) -> Result<WorkReq, Error> {
    let k = *layers.last().ok_or(Error::BadRank)?;
    let (n, _) = check_shapes(shapes.clone(), k)?;
    let mut req = WorkReq::EMPTY;
    let mut hmax = 0;
    for s in shapes {
        for (m, (a, b)) in layer_dims(s.rows, layers).enumerate() {
            hmax = hmax.max(b);
            let shape = if m == 0 {
                s
            } else {
                ViewShape {
                    rows: a,
                    cols: n,
                    kind: crate::data::ViewKind::Dense,
                    nnz: 0,
                }
            };
            req = req.or(fit_nmf_req::<T>(shape, b)?);
        }
    }
    let hbuf = WorkReq::matrix::<T>(hmax, n);
    Ok(WorkReq::all_of(&[hbuf, hbuf, req]))
}

fn fit_nmf_req<T>(shape: ViewShape, k: usize) -> Result<WorkReq, Error> {
    // The byte count (with its alignment slack) as a requirement.
    let b = crate::solvers::shallow::nmf_fit_req::<T>([shape], k)?.bytes()?;
    Ok(WorkReq::new::<u8>(b))
}

/// Workspace bytes of [`fit`]: pre-training and fine-tuning reuse the same
/// memory (`any_of`).
pub fn fit_workspace<T: Real, G: GraphOp<T> + ?Sized>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    graph: &G,
    layers: &[usize],
    params: &DeepParams,
) -> Result<usize, Error> {
    params.validate()?;
    check_layers(layers)?;
    check_graph(&params.top, graph, shapes.clone())?;
    let ft = finetune_req::<T>(
        shapes.clone(),
        layers,
        graph.apply_req(*layers.last().unwrap_or(&1)),
    )?;
    ft.or(pretrain_req::<T>(shapes, layers)?).bytes()
}

/// Fits the deep model (module docs: objective, layers, pre-training, sweep, cost).
///
/// * `u`: one buffer per view of [`factor_len`]`(M_v, layers)` values (all layers).
/// * `v`: `K × N`, `K = layers.last()`.
/// * `work`: at least [`fit_workspace`] bytes.
///
/// Validated before anything is written; the monitor sees fine-tuning
/// (iteration 0 is the start of fine-tuning, after pre-training).
///
/// ```
/// use mvnmf::graph::NoGraph;
/// use mvnmf::models::deep::{self, DeepParams};
/// use mvnmf::{Dense, View};
///
/// // Two views of 10 items (6 and 5 features); layers of 4 and 2 (K = 2):
/// // X^(v) ~ U_1^(v) U_2^(v) V. DNMF: no graph, no regulariser.
/// let (n, layers) = (10, [4, 2]);
/// let x1: Vec<f64> = (0..6 * n).map(|i| (i * 5 % 11 + 1) as f64).collect();
/// let x2: Vec<f64> = (0..5 * n).map(|i| (i * 3 % 7 + 1) as f64).collect();
/// let views = [View::from(Dense::new(&x1, 6, n, 6)?), View::from(Dense::new(&x2, 5, n, 5)?)];
/// let mut params = DeepParams::dnmf();
/// (params.pretrain_iter, params.top.max_iter) = (20, 30);
///
/// let graph = NoGraph { n };
/// let shapes = views.iter().map(|x| x.shape());
/// let mut work = vec![0u8; deep::fit_workspace::<f64, _>(shapes, &graph, &layers, &params)?];
/// // Each view's buffer holds all its layers' factors, one after the other.
/// let mut u1 = vec![0.0; deep::factor_len(6, &layers)?];
/// let mut u2 = vec![0.0; deep::factor_len(5, &layers)?];
/// let mut v = vec![0.0; 2 * n];
/// let us = &mut [&mut u1[..], &mut u2[..]][..];
/// let report = deep::fit(&views[..], &graph, &layers, &params, us, &mut v, &mut work, None)?;
/// assert!(report.objective.total <= report.initial.total);
/// # Ok::<(), mvnmf::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn fit<T: Real, VS: ViewSet<T> + ?Sized, G: GraphOp<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
    views: &VS,
    graph: &G,
    layers: &[usize],
    params: &DeepParams,
    u: &mut F,
    v: &mut [T],
    work: &mut [u8],
    monitor: Option<Monitor<'_>>,
) -> Result<Report, Error> {
    params.validate()?;
    check_layers(layers)?;
    let tp = &params.top;
    let k = *layers.last().unwrap_or(&1);
    let hv = views.count();
    let (n, mmax) = check_shapes((0..hv).map(|i| views.shape(i)), k)?;
    if u.count() != hv {
        return Err(Error::DimensionMismatch);
    }
    for i in 0..hv {
        if u.get(i).len() != factor_len(views.shape(i).rows, layers)? {
            return Err(Error::DimensionMismatch);
        }
    }
    if v.len() != k.checked_mul(n).ok_or(Error::SizeOverflow)? {
        return Err(Error::DimensionMismatch);
    }
    check_graph(tp, graph, (0..hv).map(|i| views.shape(i)))?;
    let need = fit_workspace::<T, G>((0..hv).map(|i| views.shape(i)), graph, layers, params)?;
    if work.len() < need {
        return Err(Error::WorkspaceTooSmall);
    }
    for i in 0..hv {
        views.view(i).check_values(true)?;
    }
    if tp.init == Init::Given {
        for i in 0..hv {
            crate::data::check_values(u.get(i), true)?;
        }
        crate::data::check_values(v, true)?;
    }
    // From here on the fit runs on the data times `s` (1 unless the data is far
    // above 1; `crate::steps::scale`): pre-training included, the top layers
    // carrying the factor, the weights those of the scaled problem.
    // Only the weights that act limit the scale-up (`scale::acting`: no group
    // norm leaves `α` inert, a graph without a nonzero weight `β`; issue 31).
    let zero = graph.is_zero();
    let scale = Scale::of(views)?.limited_acting::<T>(tp, zero);
    let scale = if tp.init == Init::Given {
        scale.limited_by_start(&*u)
    } else {
        scale
    };
    let params = &DeepParams {
        top: scale.mvsl_acting(&params.top, zero),
        ..*params
    };
    let tp = &params.top;
    let s = scale.t::<T>();
    let top_of = |rows: usize| {
        let (off, (a, _)) = top_offset(rows, layers);
        (off, off + a * k)
    };

    let vmax = T::from_f64(tp.vmax);
    if tp.init == Init::Random {
        pretrain(views, scale, layers, params, u, v, work, n)?;
    } else {
        v.iter_mut().for_each(|x| *x = x.min(vmax));
        for i in 0..hv {
            let buf = u.get_mut(i);
            let (a, b) = top_of(views.shape(i).rows);
            scale.apply(buf.part_mut(a..b)?);
        }
    }
    if params.box_lower {
        for i in 0..hv {
            rescale_into_box(u.get_mut(i), views.shape(i).rows, layers, T::ONE);
        }
    } else {
        // Without the box every layer is bounded by the cap (`scale::factor_cap`:
        // otherwise `γ > 0` drives `V → 0`, `Ũ → ∞`); a start above it is rescaled
        // (product unchanged) and the top layer clipped, before the start's objective.
        let cap = factor_cap::<T>(layers.len());
        for i in 0..hv {
            let buf = u.get_mut(i);
            rescale_into_box(buf, views.shape(i).rows, layers, cap);
        }
    }
    if !top_prox(tp) {
        let cap = unbounded_cap::<T>(params, layers);
        for i in 0..hv {
            let (a, b) = top_of(views.shape(i).rows);
            buf_clip(u.get_mut(i).part_mut(a..b)?, cap);
        }
    }

    // ---- fine-tuning ----
    let mut st = Stack::new(work).with_par(tp.parallel);
    let g: &mut [T] = st.take_matrix(k, k)?;
    let p: &mut [T] = st.take_matrix(k, k)?;
    let h: &mut [T] = st.take_matrix(k, k)?;
    let q: &mut [T] = st.take_matrix(k, n)?;
    let d: &mut [T] = st.take_matrix(k, n)?;
    let plus: &mut [T] = st.take_matrix(k, n)?;
    let minus: &mut [T] = st.take_matrix(k, n)?;
    let (pmax, smax) = dims_max((0..hv).map(|i| views.shape(i)), layers);
    let mut t = Temps {
        r: st.take_matrix(mmax, k)?,
        ut: st.take_matrix(mmax, k)?,
        b: st.take_matrix(mmax, pmax)?,
        b2: st.take_matrix(mmax, pmax)?,
        c: st.take_matrix(pmax, pmax)?,
        w: st.take_matrix(pmax, pmax)?,
        num: st.take_matrix(mmax.max(pmax), pmax.max(k))?,
        den: st.take_matrix(mmax.max(pmax), pmax.max(k))?,
        t1: st.take_matrix(pmax, k)?,
        grad: st.take_matrix(mmax.max(pmax), pmax.max(k))?,
        tt: st.take_matrix(mmax.max(pmax), pmax.max(k))?,
        delta: st.take_matrix(pmax, k)?,
        g1d: st.take_matrix(pmax, k)?,
        s: st.take(smax.max(1))?,
        sort: st.take(pmax.max(mmax))?,
    };
    let lip: &mut [f64] = st.take(hv)?;
    let prep = crate::data::Prepared::new(views, &mut st)?;
    lip.fill(0.0);
    let half_x2: f64 = scale.half_sq(views);
    let use_graph = tp.beta > 0.0;
    let mut sc = st.rest();

    form_pq_deep(views, &prep, s, layers, k, &*u, p, q, &mut t, &mut sc)?;
    gram(v, k, n, g, &mut sc)?;
    let traces = graph_traces(graph, use_graph, v, k, (plus, minus), &mut sc)?;
    let rec = objective(half_x2, q, v, p, g).reconstruction();
    let obj = assemble(tp, rec, top_norms(tp, views, &*u, layers), traces, v);
    let mut report = run(
        tp.max_iter,
        tp.stopping(),
        scale.objective(obj),
        monitor,
        |_it| {
            for (i, lip_i) in lip.iter_mut().enumerate() {
                let x = views.view(i);
                let rows = x.rows();
                x.x_vt_scaled(
                    prep.get(views, i),
                    s,
                    v,
                    k,
                    t.r.part_mut(..rows * k)?,
                    &mut sc,
                )?;
                sweep_view(
                    params,
                    layers,
                    k,
                    rows,
                    u.get_mut(i),
                    g,
                    h,
                    lip_i,
                    &mut t,
                    &mut sc,
                )?;
            }
            form_pq_deep(views, &prep, s, layers, k, &*u, p, q, &mut t, &mut sc)?;
            let traces = v_phase(tp, graph, (k, n), v, (p, q), g, d, (plus, minus), &mut sc)?;
            let rec = objective(half_x2, q, v, p, g).reconstruction();
            Ok(scale.objective(assemble(
                tp,
                rec,
                top_norms(tp, views, &*u, layers),
                traces,
                v,
            )))
        },
    )?;
    for i in 0..hv {
        let buf = u.get_mut(i);
        let (a, b) = top_of(views.shape(i).rows);
        scale.restore(buf.part_mut(a..b)?);
    }
    report.dead_views = dead(&*u, views, layers);
    finite_outputs(report, &*u, v)
}

/// `R(U_M^(v))` for each view, in view order.
fn top_norms<'a, T: Real, VS: ViewSet<T> + ?Sized, F: Factors<T> + ?Sized>(
    tp: &'a MvslParams,
    views: &'a VS,
    u: &'a F,
    layers: &'a [usize],
) -> impl Iterator<Item = f64> + 'a {
    (0..views.count()).map(move |i| {
        let (buf, rows) = (u.get(i), views.shape(i).rows);
        let (off, (a, _)) = top_offset(rows, layers);
        group_norm(tp.sparsity, buf.get(off..).unwrap_or(&[]), a)
    })
}

/// Scratch of a sweep (sizes: `mmax × K`, `mmax × pmax`, `pmax × pmax`, `pmax × K`).
struct Temps<'a, T> {
    r: &'a mut [T],
    ut: &'a mut [T],
    b: &'a mut [T],
    b2: &'a mut [T],
    c: &'a mut [T],
    w: &'a mut [T],
    num: &'a mut [T],
    den: &'a mut [T],
    t1: &'a mut [T],
    grad: &'a mut [T],
    tt: &'a mut [T],
    delta: &'a mut [T],
    g1d: &'a mut [T],
    s: &'a mut [T],
    sort: &'a mut [T],
}

/// Offset of the top layer in a view's buffer, and its dims.
fn top_offset(rows: usize, layers: &[usize]) -> (usize, (usize, usize)) {
    let mut off = 0;
    let mut last = (rows, 0);
    for (a, b) in layer_dims(rows, layers) {
        last = (a, b);
        off += a * b;
    }
    (off - last.0 * last.1, last)
}

fn dead<T: Real, VS: ViewSet<T> + ?Sized, F: Factors<T> + ?Sized>(
    u: &F,
    views: &VS,
    layers: &[usize],
) -> u32 {
    (0..u.count())
        .filter(|&i| {
            let buf = u.get(i);
            let mut off = 0;
            layer_dims(views.shape(i).rows, layers).any(|(a, b)| {
                let layer = buf.get(off..off + a * b).unwrap_or(&[]);
                off += a * b;
                layer.iter().all(|&x| x == T::ZERO)
            })
        })
        .count() as u32
}

/// The top layer takes the composite-gradient step (a group norm that acts),
/// else the multiplicative one.
fn top_prox(tp: &MvslParams) -> bool {
    tp.sparsity != Sparsity::None && tp.alpha > 0.0
}

/// The bound of the layers nothing else bounds (`scale::factor_cap`): with the
/// box the top layer alone, without it all `M` layers share the budget.
fn unbounded_cap<T: Real>(params: &DeepParams, layers: &[usize]) -> T {
    factor_cap::<T>(if params.box_lower { 1 } else { layers.len() })
}

/// Every entry at most `cap`.
fn buf_clip<T: Real>(buf: &mut [T], cap: T) {
    buf.iter_mut().for_each(|x| *x = x.min(cap));
}

/// Lower layers into `[0, hi]`: a column of `U_m` with maximum `s > hi` is divided
/// by `s/hi` and the matching row of `U_{m+1}` multiplied by `s/hi` (product
/// unchanged). `hi = 1`: the box.
fn rescale_into_box<T: Real>(buf: &mut [T], rows: usize, layers: &[usize], hi: T) {
    let dims: usize = layers.len();
    let mut off = 0;
    for (m, (a, b)) in layer_dims(rows, layers).enumerate() {
        if m + 1 == dims {
            break;
        }
        let next_off = off + a * b;
        let next_cols = layer_dims(rows, layers).nth(m + 1).map_or(0, |d| d.1);
        for j in 0..b {
            let Some(col) = buf.get_mut(off + j * a..off + (j + 1) * a) else {
                break;
            };
            let s = col.iter().fold(T::ZERO, |mx, &x| mx.max(x));
            if s > hi {
                let s = if hi == T::ONE { s } else { s / hi };
                col.iter_mut().for_each(|x| *x /= s);
                // Row j of the next layer (`b × next_cols`): every b-th value.
                let row = buf.iter_mut().skip(next_off + j).step_by(b.max(1));
                row.take(next_cols).for_each(|x| *x *= s);
            }
        }
        off = next_off;
    }
}

/// `Ũ = U_1 ⋯ U_M` into `out` (`rows × K`), right to left
/// (`O(Σ_m p_{m−1} p_m K)`), intermediates (`p × K`) ping-ponging in `ta`, `tb`.
/// With one layer nothing is computed and the layer itself is returned.
#[allow(clippy::too_many_arguments)]
fn stack_product<'s, T: Real>(
    buf: &'s [T],
    rows: usize,
    layers: &[usize],
    k: usize,
    out: &'s mut [T],
    ta: &mut [T],
    tb: &mut [T],
    sc: &mut Stack<'_>,
) -> Result<&'s [T], Error> {
    let nl = layers.len();
    if nl == 1 {
        return buf.part(..rows * k);
    }
    let dims = |m: usize| layer_dims(rows, layers).nth(m).unwrap_or((0, 0));
    let offs = |m: usize| {
        layer_dims(rows, layers)
            .take(m)
            .map(|(a, b)| a * b)
            .sum::<usize>()
    };
    let (a_top, _) = dims(nl - 1);
    let top = buf.part(offs(nl - 1)..offs(nl - 1) + a_top * k)?;
    // `cur`: 0 = the top layer in `buf`, 1 = ta, 2 = tb.
    let mut cur = 0;
    for m in (0..nl - 1).rev() {
        let (a, b) = dims(m);
        let layer = cm(buf.part(offs(m)..offs(m) + a * b)?, a, b)?;
        let last = m == 0;
        match cur {
            0 => {
                let dst = if last {
                    out.part_mut(..rows * k)?
                } else {
                    ta.part_mut(..a * k)?
                };
                gemm_into(layer, cm(top, b, k)?, dst, sc)?;
                cur = 1;
            }
            1 => {
                let dst = if last {
                    out.part_mut(..rows * k)?
                } else {
                    tb.part_mut(..a * k)?
                };
                gemm_into(layer, cm(ta.part(..b * k)?, b, k)?, dst, sc)?;
                cur = 2;
            }
            _ => {
                let dst = if last {
                    out.part_mut(..rows * k)?
                } else {
                    ta.part_mut(..a * k)?
                };
                gemm_into(layer, cm(tb.part(..b * k)?, b, k)?, dst, sc)?;
                cur = 1;
            }
        }
    }
    out.part(..rows * k)
}

/// `P = Σ ŨᵀŨ`, `Q = Σ ŨᵀX` (the same calls as the shallow solver's when `M = 1`).
#[allow(clippy::too_many_arguments)]
fn form_pq_deep<T: Real, VS: ViewSet<T> + ?Sized, F: Factors<T> + ?Sized>(
    views: &VS,
    prep: &crate::data::Prepared<'_, T>,
    s: T,
    layers: &[usize],
    k: usize,
    u: &F,
    p: &mut [T],
    q: &mut [T],
    t: &mut Temps<'_, T>,
    sc: &mut Stack<'_>,
) -> Result<(), Error> {
    for i in 0..views.count() {
        let x = views.view(i);
        let rows = x.rows();
        let ut = stack_product(u.get(i), rows, layers, k, t.ut, t.t1, t.delta, sc)?;
        pq_view(&x, prep.get(views, i), s, ut, k, i > 0, p, q, sc)?;
    }
    Ok(())
}

/// Where a view's layers and its `S` products live: layer `m` is `a_m × b_m`
/// ([`layer_dims`]) at offset `offs(m)` of the view's buffer; `S_m = U_{m+1} ⋯ U_M`
/// (`b_m × K`, `m < M − 1`) at offset `s_at(m)` of `Temps::s`.
struct Layout<'l> {
    rows: usize,
    layers: &'l [usize],
    k: usize,
}

impl Layout<'_> {
    fn dims(&self, m: usize) -> (usize, usize) {
        layer_dims(self.rows, self.layers).nth(m).unwrap_or((0, 0))
    }
    fn offs(&self, m: usize) -> usize {
        layer_dims(self.rows, self.layers)
            .take(m)
            .map(|(a, b)| a * b)
            .sum::<usize>()
    }
    fn s_at(&self, m: usize) -> usize {
        (0..m).map(|j| self.dims(j).1 * self.k).sum::<usize>()
    }
}

/// One fine-tuning sweep over the layers of one view (`t.r = X Vᵀ` on entry):
/// the `S` products top-down, then every lower layer by the boxed
/// multiplicative rule and the top layer by composite gradient mapping (or
/// multiplicatively when α = 0), carrying `B = U_1 ⋯ U_{m−1}` upwards.
#[allow(clippy::too_many_arguments)]
fn sweep_view<T: Real>(
    params: &DeepParams,
    layers: &[usize],
    k: usize,
    rows: usize,
    buf: &mut [T],
    g: &[T],
    h: &mut [T],
    lip: &mut f64,
    t: &mut Temps<'_, T>,
    sc: &mut Stack<'_>,
) -> Result<(), Error> {
    let ly = Layout { rows, layers, k };
    let nl = layers.len();
    s_products(&ly, buf, t, sc)?;
    for m in 0..nl {
        if m + 1 < nl {
            lower_layer(params, &ly, m, buf, g, t, sc)?;
        } else {
            top_layer(params, &ly, m, buf, g, h, lip, t, sc)?;
        }
    }
    Ok(())
}

/// `S_m = U_{m+1} ⋯ U_M` for `m = M−1 … 1`, stored top-down in `t.s`.
fn s_products<T: Real>(
    ly: &Layout<'_>,
    buf: &[T],
    t: &mut Temps<'_, T>,
    sc: &mut Stack<'_>,
) -> Result<(), Error> {
    let (nl, k) = (ly.layers.len(), ly.k);
    let (dims, offs, s_at) = (|m| ly.dims(m), |m| ly.offs(m), |m| ly.s_at(m));
    for m in (0..nl.saturating_sub(1)).rev() {
        let (_, bm) = dims(m);
        let (a1, b1) = dims(m + 1); // a1 == bm
        let next = buf.part(offs(m + 1)..offs(m + 1) + a1 * b1)?;
        let (lo, hi) = t.s.split_at_mut(s_at(m + 1).min(t.s.len()));
        let dst = lo.part_mut(s_at(m)..s_at(m) + bm * k)?;
        if m + 1 == nl - 1 {
            dst.copy_checked(next)?; // S_{M−1} = U_M
        } else {
            let s_next = hi.part(..b1 * k)?;
            gemm_into(cm(next, a1, b1)?, cm(s_next, b1, k)?, dst, sc)?;
        }
    }
    Ok(())
}

/// Lower layer `m < M`: `U_m ← min(cap, U_m ∘ (Bᵀ R Sᵀ + ε) ⊘ (BᵀB U_m (S G Sᵀ) + ε))`,
/// then `B ← B U_m`.
fn lower_layer<T: Real>(
    params: &DeepParams,
    ly: &Layout<'_>,
    m: usize,
    buf: &mut [T],
    g: &[T],
    t: &mut Temps<'_, T>,
    sc: &mut Stack<'_>,
) -> Result<(), Error> {
    let (rows, k) = (ly.rows, ly.k);
    let (a, b) = ly.dims(m);
    let off = ly.offs(m);
    let s_at = |m| ly.s_at(m);
    let eps = T::from_f64(params.top.eps);
    let cap = if params.box_lower {
        T::ONE
    } else {
        unbounded_cap::<T>(params, ly.layers)
    };
    let s_m = t.s.part(s_at(m)..s_at(m) + b * k)?;
    // num = Bᵀ R Sᵀ  (a × b)
    let t1: &[T] = if m == 0 {
        t.r.part(..rows * k)?
    } else {
        gemm_into(
            cm(t.b.part(..rows * a)?, rows, a)?.t(),
            cm(t.r.part(..rows * k)?, rows, k)?,
            t.t1.part_mut(..a * k)?,
            sc,
        )?;
        t.t1.part(..a * k)?
    };
    gemm_into(
        cm(t1, a, k)?,
        cm(s_m, b, k)?.t(),
        t.num.part_mut(..a * b)?,
        sc,
    )?;
    // w = S G Sᵀ (b × b), via grad as (b × K) scratch
    gemm_into(cm(s_m, b, k)?, cm(g, k, k)?, t.grad.part_mut(..b * k)?, sc)?;
    gemm_into(
        cm(t.grad.part(..b * k)?, b, k)?,
        cm(s_m, b, k)?.t(),
        t.w.part_mut(..b * b)?,
        sc,
    )?;
    // den = BᵀB U_m W  (a × b)
    let layer = buf.part_mut(off..off + a * b)?;
    if m == 0 {
        gemm_into(
            cm(layer, a, b)?,
            cm(t.w.part(..b * b)?, b, b)?,
            t.den.part_mut(..a * b)?,
            sc,
        )?;
    } else {
        gemm_into(
            cm(t.b.part(..rows * a)?, rows, a)?.t(),
            cm(t.b.part(..rows * a)?, rows, a)?,
            t.c.part_mut(..a * a)?,
            sc,
        )?;
        gemm_into(
            cm(layer, a, b)?,
            cm(t.w.part(..b * b)?, b, b)?,
            t.tt.part_mut(..a * b)?,
            sc,
        )?;
        gemm_into(
            cm(t.c.part(..a * a)?, a, a)?,
            cm(t.tt.part(..a * b)?, a, b)?,
            t.den.part_mut(..a * b)?,
            sc,
        )?;
    }
    mu_step(layer, t.num.part(..a * b)?, t.den.part(..a * b)?, eps, cap);
    // B ← B U_m
    if m == 0 {
        t.b.part_mut(..rows * b)?.copy_checked(layer)?;
    } else {
        gemm_into(
            cm(t.b.part(..rows * a)?, rows, a)?,
            cm(layer, a, b)?,
            t.b2.part_mut(..rows * b)?,
            sc,
        )?;
        t.b.part_mut(..rows * b)?
            .copy_checked(t.b2.part(..rows * b)?)?;
    }
    Ok(())
}

/// Top layer `U_M` (`a × K`): composite gradient mapping on `G₁ = BᵀB`,
/// `G₂ = G`, `R_M = BᵀR` with the top layer's group norm, or the guarded
/// multiplicative step when α = 0.
#[allow(clippy::too_many_arguments)]
fn top_layer<T: Real>(
    params: &DeepParams,
    ly: &Layout<'_>,
    m: usize,
    buf: &mut [T],
    g: &[T],
    h: &mut [T],
    lip: &mut f64,
    t: &mut Temps<'_, T>,
    sc: &mut Stack<'_>,
) -> Result<(), Error> {
    let tp = &params.top;
    let (rows, k) = (ly.rows, ly.k);
    let (a, _) = ly.dims(m);
    let off = ly.offs(m);
    let eps = T::from_f64(tp.eps);
    let (rm, g1): (&[T], Option<&[T]>) = if m == 0 {
        (t.r.part(..rows * k)?, None)
    } else {
        gemm_into(
            cm(t.b.part(..rows * a)?, rows, a)?.t(),
            cm(t.r.part(..rows * k)?, rows, k)?,
            t.t1.part_mut(..a * k)?,
            sc,
        )?;
        gemm_into(
            cm(t.b.part(..rows * a)?, rows, a)?.t(),
            cm(t.b.part(..rows * a)?, rows, a)?,
            t.c.part_mut(..a * a)?,
            sc,
        )?;
        (t.t1.part(..a * k)?, Some(t.c.part(..a * a)?))
    };
    let layer = buf.part_mut(off..off + a * k)?;
    if top_prox(tp) {
        let mut s = ProxScratch {
            grad: t.grad.part_mut(..a * k)?,
            t: t.tt.part_mut(..a * k)?,
            delta: if g1.is_some() {
                t.delta.part_mut(..a * k)?
            } else {
                &mut []
            },
            g1d: if g1.is_some() {
                t.g1d.part_mut(..a * k)?
            } else {
                &mut []
            },
            h: &mut *h,
            sort: &mut *t.sort,
        };
        prox_gradient(tp, layer, a, k, rm, g1, g, lip, &mut s, sc)?;
    } else {
        // Multiplicative: U ← U ∘ (R_M + ε) ⊘ (G₁ U G + ε).
        let den = t.den.part_mut(..a * k)?;
        match g1 {
            None => gemm_into(cm(layer, a, k)?, cm(g, k, k)?, den, sc)?,
            Some(g1) => {
                gemm_into(
                    cm(layer, a, k)?,
                    cm(g, k, k)?,
                    t.grad.part_mut(..a * k)?,
                    sc,
                )?;
                gemm_into(cm(g1, a, a)?, cm(t.grad.part(..a * k)?, a, k)?, den, sc)?;
            }
        }
        mu_step(layer, rm, den, eps, unbounded_cap::<T>(params, ly.layers));
    }
    Ok(())
}

/// Layer-wise pre-training into the output buffers (module docs), on the data
/// times the fit's scale (the first layer's NMF at `scale`, the later ones on the
/// encodings, already in those units).
#[allow(clippy::too_many_arguments)]
fn pretrain<T: Real, VS: ViewSet<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
    views: &VS,
    scale: Scale,
    layers: &[usize],
    params: &DeepParams,
    u: &mut F,
    v: &mut [T],
    work: &mut [u8],
    n: usize,
) -> Result<(), Error> {
    let tp = &params.top;
    let k = *layers.last().unwrap_or(&1);
    let hv = views.count();
    let mut st = Stack::new(work).with_par(tp.parallel);
    let hmax = (0..hv)
        .flat_map(|i| {
            layer_dims(views.shape(i).rows, layers)
                .map(|d| d.1)
                .collect_max()
        })
        .max()
        .unwrap_or(k);
    let h1: &mut [T] = st.take_matrix(hmax, n)?;
    let h2: &mut [T] = st.take_matrix(hmax, n)?;
    let wbuf: &mut [u8] = st.take_rest();
    if params.v_init == DeepVInit::Pretrained {
        v.fill(T::ZERO);
    }
    for i in 0..hv {
        let x = views.view(i);
        let buf = u.get_mut(i);
        let mut off = 0;
        let mut input_is_h1 = false;
        for (m, (a, b)) in layer_dims(x.rows(), layers).enumerate() {
            let top = m + 1 == layers.len();
            let np = NmfParams {
                max_iter: params.pretrain_iter,
                tol: 0.0,
                stop: StopRule::EveryIteration,
                eps: tp.eps.max(f64::EPSILON),
                vmax: if top { tp.vmax } else { f64::INFINITY },
                seed: tp.seed.wrapping_add(1 + (i as u64) * 1009 + m as u64),
                init: Init::Random,
                parallel: tp.parallel,
            };
            let layer = buf.part_mut(off..off + a * b)?;
            off += a * b;
            let (src, dst): (&[T], &mut [T]) = if input_is_h1 {
                (&*h1, &mut *h2)
            } else {
                (&*h2, &mut *h1)
            };
            let input = if m == 0 {
                x
            } else {
                View::Dense(Dense::new(src.part(..a * n)?, a, n, a)?)
            };
            let at = if m == 0 { scale } else { Scale::ONE };
            crate::solvers::shallow::nmf_fit_in(
                &[input],
                Some(at),
                b,
                &np,
                &mut [layer][..],
                dst.part_mut(..b * n)?,
                wbuf,
                None,
            )?;
            input_is_h1 = !input_is_h1;
            if top && params.v_init == DeepVInit::Pretrained {
                let enc: &[T] = if input_is_h1 { &*h1 } else { &*h2 };
                let w = T::from_f64(1.0 / hv as f64);
                v.iter_mut()
                    .zip(enc.part(..k * n)?)
                    .for_each(|(vi, &e)| *vi += w * e);
            }
        }
    }
    let vmax = T::from_f64(tp.vmax);
    match params.v_init {
        DeepVInit::Pretrained => v.iter_mut().for_each(|x| *x = x.min(vmax)),
        DeepVInit::Random => {
            let (sv, _) = start_scales(views, k, tp.vmax, scale.get());
            let mut rng = crate::rng::Rng::new(tp.seed);
            v.iter_mut()
                .for_each(|x| *x = T::from_f64(rng.uniform() * sv));
        }
    }
    Ok(())
}

trait CollectMax {
    fn collect_max(self) -> Option<usize>;
}

impl<I: Iterator<Item = usize>> CollectMax for I {
    fn collect_max(self) -> Option<usize> {
        self.max()
    }
}

/// The effective bases `Ũ^(v) = U_1⋯U_M` stored one after the other.
struct Stacked<'a, T> {
    data: &'a [T],
    rows: &'a dyn Fn(usize) -> usize,
    count: usize,
    k: usize,
}

impl<T> Factors<T> for Stacked<'_, T> {
    fn count(&self) -> usize {
        self.count
    }
    fn get(&self, i: usize) -> &[T] {
        let off: usize = (0..i).map(|j| (self.rows)(j) * self.k).sum();
        self.data
            .get(off..off + (self.rows)(i) * self.k)
            .unwrap_or(&[])
    }
}

fn encode_req<T: Real, G: GraphOp<T> + ?Sized>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    graph: &G,
    layers: &[usize],
) -> Result<WorkReq, Error> {
    let k = *layers.last().ok_or(Error::BadRank)?;
    let (_, mmax) = check_shapes(shapes.clone(), k)?;
    let (pmax, _) = dims_max(shapes.clone(), layers);
    let total_rows = shapes
        .clone()
        .into_iter()
        .try_fold(0usize, |a, s| a.checked_add(s.rows))
        .ok_or(Error::SizeOverflow)?;
    let enc = crate::solvers::encode::encode_req::<T>(shapes, k, graph.apply_req(k))?.bytes()?;
    Ok(WorkReq::all_of(&[
        WorkReq::matrix::<T>(total_rows, k),
        WorkReq::matrix::<T>(pmax.max(k).saturating_mul(2), k),
        WorkReq::new::<u8>(enc).or(gemm_req::<T>(mmax, pmax.max(k), pmax.max(k))),
    ]))
}

/// Workspace bytes of [`encode`].
pub fn encode_workspace<T: Real, G: GraphOp<T> + ?Sized>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    graph: &G,
    layers: &[usize],
    params: &DeepParams,
) -> Result<usize, Error> {
    params.validate()?;
    check_layers(layers)?;
    // The call's checks in the call's order: shapes and sizes, then the graph
    // (issue 31, E8: a graph over another item count was accepted here).
    let req = encode_req::<T, G>(shapes.clone(), graph, layers)?;
    check_graph(&params.top, graph, shapes)?;
    req.bytes()
}

/// Out-of-sample encoding through the whole stack (DESIGN §10): forms
/// `Ũ^(v) = U_1⋯U_M` once (`O(M_v p K)` per view), then runs
/// the V-steps of [`crate::models::mvsl::encode`] with those bases (graph optional, γ, `0 ≤ V ≤ vmax`).
/// `u`: the fitted per-view buffers (read only); `v`: `K × N` written.
///
/// ```
/// use mvnmf::graph::NoGraph;
/// use mvnmf::models::deep::{self, DeepParams};
/// use mvnmf::{Dense, View};
///
/// // Fit DNMF (layers 3 -> K = 2) on 8 items of one 5-feature view, then
/// // encode 3 new items through both layers.
/// let (n, layers) = (8, [3, 2]);
/// let x: Vec<f64> = (0..5 * n).map(|i| (i * 3 % 7 + 1) as f64).collect();
/// let views = [View::from(Dense::new(&x, 5, n, 5)?)];
/// let mut params = DeepParams::dnmf();
/// (params.pretrain_iter, params.top.max_iter) = (10, 20);
/// let graph = NoGraph { n };
/// let mut work = vec![0u8; deep::fit_workspace::<f64, _>([views[0].shape()], &graph, &layers, &params)?];
/// let mut u = vec![0.0; deep::factor_len(5, &layers)?];
/// let mut v = vec![0.0; 2 * n];
/// deep::fit(&views[..], &graph, &layers, &params, &mut [&mut u[..]][..], &mut v, &mut work, None)?;
///
/// let new = [View::from(Dense::new(&x[..5 * 3], 5, 3, 5)?)];
/// let graph = NoGraph { n: 3 };
/// let mut work = vec![0u8; deep::encode_workspace::<f64, _>([new[0].shape()], &graph, &layers, &params)?];
/// let mut v_new = vec![0.0; 2 * 3];
/// deep::encode(&new[..], &graph, &layers, &params, &[&u[..]][..], &mut v_new, &mut work, None)?;
/// assert!(v_new.iter().all(|&e| e >= 0.0) && v_new.iter().any(|&e| e > 0.0));
/// # Ok::<(), mvnmf::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn encode<T: Real, VS: ViewSet<T> + ?Sized, G: GraphOp<T> + ?Sized, F: Factors<T> + ?Sized>(
    views: &VS,
    graph: &G,
    layers: &[usize],
    params: &DeepParams,
    u: &F,
    v: &mut [T],
    work: &mut [u8],
    monitor: Option<Monitor<'_>>,
) -> Result<Report, Error> {
    params.validate()?;
    check_layers(layers)?;
    let k = *layers.last().unwrap_or(&1);
    let hv = views.count();
    let (n, _) = check_shapes((0..hv).map(|i| views.shape(i)), k)?;
    if u.count() != hv {
        return Err(Error::DimensionMismatch);
    }
    for i in 0..hv {
        if u.get(i).len() != factor_len(views.shape(i).rows, layers)? {
            return Err(Error::DimensionMismatch);
        }
    }
    if v.len() != k.checked_mul(n).ok_or(Error::SizeOverflow)? {
        return Err(Error::DimensionMismatch);
    }
    encode_req::<T, G>((0..hv).map(|i| views.shape(i)), graph, layers)?.check(work.len())?;
    // The factors' values after the cheap checks (issue 15: a short workspace was
    // reported only after reading all of `u`).
    for i in 0..hv {
        crate::data::check_values(u.get(i), true)?;
    }
    let (pmax, _) = dims_max((0..hv).map(|i| views.shape(i)), layers);
    let total_rows: usize = (0..hv).map(|i| views.shape(i).rows).sum();
    let mut st = Stack::new(work).with_par(params.top.parallel);
    let stacked: &mut [T] = st.take_matrix(total_rows, k)?;
    let tmp: &mut [T] = st.take_matrix(pmax.max(k).saturating_mul(2), k)?;
    let mut sc = st.rest();
    let mut off = 0;
    for i in 0..hv {
        let rows = views.shape(i).rows;
        let dst = stacked.part_mut(off..off + rows * k)?;
        if layers.len() == 1 {
            dst.copy_checked(u.get(i).part(..rows * k)?)?;
        } else {
            let (ta, tb) = tmp
                .split_at_mut_checked(pmax.max(k) * k)
                .ok_or(Error::Internal)?;
            stack_product(u.get(i), rows, layers, k, dst, ta, tb, &mut sc)?;
        }
        off += rows * k;
    }
    // Finite layers whose product is not (layers near 1e200): too large, not
    // non-finite input — and refused before `v` is written.
    if crate::data::check_values(stacked, true).is_err() {
        return Err(Error::InputTooLarge);
    }
    let rows_of = |i: usize| views.shape(i).rows;
    let bases = Stacked {
        data: stacked,
        rows: &rows_of,
        count: hv,
        k,
    };
    let w: &mut [u8] = sc.take_rest();
    crate::solvers::encode::encode(views, graph, k, &params.top, &bases, v, w, monitor)
}

/// The column-major `rows × cols` matrix over `x`.
fn cm<T: Copy>(x: &[T], rows: usize, cols: usize) -> Result<MatRef<'_, T>, Error> {
    MatRef::col_major(x, rows, cols)
}
