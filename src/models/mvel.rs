//! MVEL: multi-view embedding learning for incompletely labeled data (seed 002,
//! DESIGN §8).
//!
//! Items `u = 1..n` with an embedding `h_u ∈ ℝʳ` (`H`, `r × n`), a label map
//! `Q` (`c × r`) and incomplete labels `Y ∈ {0,1}^{c×n}` (a 0 means unknown):
//!
//! ```text
//! min f(Q, H) = −tr(Yᵀ Q H) + θ₁ tr(H L_w Hᵀ) + θ₂ tr(Hᵀ Qᵀ L_ρ Q H)
//! subject to   ‖h_u‖₂ ≤ 1 for every item,  ‖q_s‖₂ ≤ 1 for every row of Q
//! ```
//!
//! * `L_w = Λ − W`: any affinity graph (no penalty graph) as a [`GraphOp`] — the fused
//!   multi-view graph of [`crate::graph::fused_graph`] as a
//!   [`crate::graph::DenseGraph`], or a sparse one as [`crate::graph::CsrGraphs`].
//! * `L_ρ = D − F`, `F(s, t) = ρ(s, t)` for `s ≠ t`: the harmonic mean of the
//!   empirical conditionals `p(t|s) = n_st / n_s` and `p(s|t)`, which is
//!   `2 n_st / (n_s + n_t)` (`n_s`: items with label `s` given; `n_st`: with
//!   both); 0 when neither label occurs. Fixed during the fit: the paper's
//!   gradient step on `L_ρ` drives it to −∞ (DESIGN §8), so it is not learned.
//! * The constraints are DESIGN §8's bounded reading of the paper's relaxation
//!   `Ŷ = QH ∈ [−1, 1]` (by Cauchy–Schwarz `|ŷ| ≤ 1`); without them `f` is
//!   unbounded below.
//! * **Unknown entries** (a choice, off by default): with the constraints the
//!   paper's objective has a trivial global minimiser — every `h_u` and `q_s`
//!   the same unit vector, `Ŷ = 1` everywhere — since the fit term rewards
//!   positives only and both Laplacian terms vanish on constants. A fit that
//!   stops early keeps the NMF start's structure, but the scores crowd
//!   towards one. `unknown_weight = μ > 0` replaces `Y` by `Ỹ = (1 + μ) Y − μ 1 1ᵀ` in the
//!   fit term (an unknown entry counts as a weak negative of weight `μ`), which
//!   removes the trivial minimiser; the problem stays a linear term plus the
//!   same quadratics, so the algorithm and its guarantee are unchanged.
//!
//! **Algorithm**: alternating projected gradient. Each outer iteration takes
//! one step in `H` (`Q` fixed), then one in `Q` (`H` fixed); each block is a
//! convex quadratic over a product of balls, and each step is
//! `X⁺ = P(X − t ∇f)` with Armijo backtracking on the sufficient-decrease
//! condition `f(X⁺) ≤ f(X) + ⟨∇f, X⁺ − X⟩ + ‖X⁺ − X‖² / (2t)` (halving `t`;
//! the next iteration starts from `2t`). For a projection that condition
//! implies `f(X⁺) ≤ f(X)`, and a block whose 40 halvings all fail keeps its
//! value, so **`f` never increases**.
//!
//! ```text
//! ∇_H f = −QᵀỸ + 2θ₁ H L_w + 2θ₂ (Qᵀ L_ρ Q) H        ∇_Q f = −Ỹ Hᵀ + 2θ₂ L_ρ Q (H Hᵀ)
//! ```
//!
//! **Start** ([`Init::Random`]): NMF of `Y` (rank `r`, `nmf_iter` Lee–Seung
//! iterations from seed `seed`, as the paper), then `H` and `Q` rescaled by
//! `1/m` and `m` (`m` = the largest column norm of `H`, so `QH` is unchanged and
//! every `‖h_u‖ ≤ 1`), then `Q`'s rows projected. With [`Init::Given`] the
//! outputs hold the start (projected first).
//!
//! **Cost per iteration**: the graph products of each trial step (dense `W`:
//! one GEMM, `2rn²` flops; CSR: `O(r·nnz)`), `O(r² n + r·nnz(Y))` for the rest
//! of the H-step, `O(c r² + c² r)` for the Q-step.
//!
//! Report terms: [`Term::LabelFit`] `−tr(ỸᵀQH)` (`Ỹ = Y` with `μ = 0`), [`Term::Affinity`]
//! `θ₁ tr(H L_w Hᵀ)`, [`Term::LabelCorrelation`] `θ₂ tr(HᵀQᵀL_ρQH)`.
//!
//! **Anchors** ([`fit_anchored`], seed 002 §2.3): for large `n`, the items'
//! embeddings are tied to `m ≪ n` anchors, `H = A Z` with the anchor graph `Z`
//! of [`crate::graph::anchor_graph`] (each column a distribution over the
//! item's `s` nearest anchors), and `L_w = I − Zᵀ Λ⁻¹ Z`, so that
//! `tr(H L_w Hᵀ) = tr(A (ZZᵀ − ZZᵀΛ⁻¹ZZᵀ) Aᵀ)`. The same problem in `(Q, A)`:
//! the fit term `−tr((Ỹ Zᵀ)ᵀ Q A)`, the correlation term
//! `θ₂ tr(Qᵀ L_ρ Q · A ZZᵀ Aᵀ)`, and the constraint (a choice) `‖a_k‖ ≤ 1` per
//! anchor — since each `z_u` is a distribution, `‖h_u‖ = ‖A z_u‖ ≤ 1` follows
//! (the paper gives no constraint; the item-wise one is not a simple
//! projection in `A`). The start: NMF of `Y Zᵀ` (`c × m`, `≥ 0`). New items
//! embed as `h(x) = A z(x)` ([`embed_anchored`]). The reported objective is
//! the item objective at `H = A Z` with that `L_w`.
//!
//! **Prediction**: `Ŷ = QH` ([`predict`]); decisions by a threshold per label
//! (the paper: "by choosing a threshold for each row of Ŷ"), chosen from the
//! given positives only. The default rule ([`decide_pu`]: [`pu_thresholds`]
//! then [`decide_keep`]) is positive–unlabeled (Elkan & Noto 2008): per label,
//! `P(given | score)` by isotonic regression of the given flags on the scores,
//! the label frequency `c` (the share of the label's positives that is given)
//! from the caller or estimated as the mean calibrated score of the given
//! positives, an unknown entry decided positive where its posterior
//! `(1 − c) g / (c (1 − g))` exceeds ½, and every given positive kept. `c`
//! estimated from the scores of a fit that saw the given positives is biased
//! (they score above the hidden ones, so the estimate errs high and adds few;
//! on weakly ranking scores it errs low and adds many). **The unbiased rule**
//! ([`label_freq_holdout`]): hold a random share of the given positives out of
//! a first fit on the same graph; to that fit they are unseen positives like
//! the hidden ones, so the share of positives among its unknown items follows
//! from their scores (a mixture-proportion estimate, Blanchard, Lee & Scott
//! 2010; Scott 2015), and with it `c`; the fit on all given labels is then
//! decided with that `c` ([`pu_thresholds`]' `label_freq`). The older rules stay:
//! [`choose_thresholds`] (the threshold that maximises the F1 of label `s`
//! against the given positives; it errs towards fewer positives) with
//! [`decide`], and the sign of `Ŷ` (`tau = 0`).

use crate::data::check_values;
use crate::error::{Error, Part};
use crate::graph::anchor::{check_anchor_graph, gram_req};
use crate::graph::{anchor_gram, AnchorGraph, GraphOp};
use crate::linalg::mat::{MatMut, MatRef};
use crate::linalg::real::Real;
use crate::linalg::select::top_n_by;
use crate::linalg::{dot, gemm, gemm_into, gemm_req, sq_norm};
use crate::steps::{run, Init, Monitor, NmfParams, Objective, Report, StopRule, Term};
use crate::work::{Stack, WorkReq};

/// Options of [`fit`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MvelParams {
    /// Weight of the graph term `θ₁` (default 1; the fused graph's total
    /// weight is `n`, so this means the same at any `n`).
    pub theta1: f64,
    /// Weight of the label-correlation term `θ₂` (default 0.1).
    pub theta2: f64,
    /// Outer iterations at most (default 100).
    pub max_iter: u32,
    /// Relative-decrease tolerance (default 1e-6; 0 runs all iterations).
    pub tol: f64,
    /// Lee–Seung iterations of the NMF start (default 100).
    pub nmf_iter: u32,
    /// Seed of the NMF start (default 0).
    pub seed: u64,
    /// [`Init::Random`] (NMF of `Y`) or [`Init::Given`].
    pub init: Init,
    /// `μ ≥ 0`: the weight of an unknown (0) entry as a weak negative (default
    /// 0, the paper's objective); module docs.
    pub unknown_weight: f64,
}

impl Default for MvelParams {
    fn default() -> Self {
        MvelParams {
            theta1: 1.0,
            theta2: 0.1,
            max_iter: 100,
            tol: 1e-6,
            nmf_iter: 100,
            seed: 0,
            init: Init::Random,
            unknown_weight: 0.0,
        }
    }
}

impl MvelParams {
    /// [`Error::BadParameter`] unless `θ₁, θ₂, tol, μ` are finite and `≥ 0`.
    pub fn validate(&self) -> Result<(), Error> {
        let ok = |x: f64| x.is_finite() && x >= 0.0;
        if ok(self.theta1) && ok(self.theta2) && ok(self.tol) && ok(self.unknown_weight) {
            Ok(())
        } else {
            Err(Error::BadParameter)
        }
    }

    fn nmf(&self) -> NmfParams {
        NmfParams {
            max_iter: self.nmf_iter,
            tol: 0.0,
            seed: self.seed,
            ..NmfParams::default()
        }
    }
}

const BACKTRACKS: u32 = 40;

/// Workspace of the fit over `n` columns (items, or anchors with
/// `anchored`: one more `r × n` buffer for `X G`).
fn fit_req<T>(
    n: usize,
    c: usize,
    r: usize,
    graph_req: WorkReq,
    anchored: bool,
) -> Result<WorkReq, Error> {
    if n == 0 || c == 0 {
        return Err(Error::ZeroDimension);
    }
    if r == 0 {
        return Err(Error::BadRank);
    }
    n.checked_mul(r.max(c)).ok_or(Error::SizeOverflow)?;
    let rn = WorkReq::matrix::<T>(r, n);
    let cr = WorkReq::matrix::<T>(c, r);
    let rr = WorkReq::matrix::<T>(r, r);
    let y_view = crate::data::ViewShape {
        rows: c,
        cols: n,
        kind: crate::data::ViewKind::Dense,
        nnz: 0,
    };
    // Y as a dense matrix, and the NMF's own workspace (which it aligns again).
    let start = WorkReq::all_of(&[
        WorkReq::matrix::<T>(c, n),
        WorkReq::new::<u8>(crate::work::ALIGN),
        crate::solvers::shallow::nmf_fit_req::<T>([y_view], r)?,
    ]);
    Ok(WorkReq::all_of(&[
        WorkReq::matrix::<f64>(c, c),               // L_ρ
        rn,                                         // A = QᵀY
        rn,                                         // H L_w (current)
        rn,                                         // gradient
        rn,                                         // trial
        rn,                                         // plus
        rn,                                         // minus
        rn,                                         // M H
        rr,                                         // M = Qᵀ L_ρ Q, S = H Hᵀ
        cr,                                         // B = Y Hᵀ
        cr,                                         // L_ρ Q
        cr,                                         // Q trial
        cr,                                         // Q gradient
        cr,                                         // Q S
        if anchored { rn } else { WorkReq::EMPTY }, // X G
        start
            .or(graph_req)
            .or(gemm_req::<T>(r, n, r))
            .or(gemm_req::<T>(r, r, n))
            .or(crate::linalg::gram_req::<T>(n, r))
            .or(gemm_req::<T>(c, r, r))
            .or(gemm_req::<T>(r, r, c)),
    ]))
}

/// Workspace bytes of [`fit`] for `n` items, `c` labels, dimension `r` and
/// this graph.
pub fn fit_workspace<T: Real, G: GraphOp<T> + ?Sized>(
    n: usize,
    c: usize,
    r: usize,
    graph: &G,
    params: &MvelParams,
) -> Result<usize, Error> {
    params.validate()?;
    check_graph(graph, n)?;
    fit_req::<T>(n, c, r, graph.apply_req(r), false)?.bytes()
}

/// The graph spans the `n` items ([`Error::DimensionMismatch`]) and is an
/// affinity graph only: `L_w = Λ − W` has no penalty part
/// ([`Error::BadParameter`] for a graph with one, e.g. SGE).
fn check_graph<T: Real, G: GraphOp<T> + ?Sized>(graph: &G, n: usize) -> Result<(), Error> {
    if graph.items() != n {
        return Err(Error::DimensionMismatch);
    }
    if graph.has_penalty() {
        return Err(Error::BadParameter);
    }
    Ok(())
}

/// `L_ρ` (`c × c`, column-major) of the incomplete labels (module docs).
pub fn label_laplacian(y: MatRef<'_, u8>, out: &mut [f64]) -> Result<(), Error> {
    let (c, n) = (y.rows(), y.cols());
    if out.len() != c * c {
        return Err(Error::DimensionMismatch);
    }
    check_flags(y)?;
    out.fill(0.0);
    // Entry (s, t) of the `c × c` `out` (checked: no panic path).
    let at = |out: &[f64], s: usize, t: usize| out.get(s + t * c).copied().unwrap_or(0.0);
    let set = |out: &mut [f64], s: usize, t: usize, x: f64| {
        if let Some(o) = out.get_mut(s + t * c) {
            *o = x;
        }
    };
    // Co-occurrence counts into `out`, then ρ and the Laplacian.
    for u in 0..n {
        for s in 0..c {
            if y.at(s, u) == 1 {
                for t in 0..c {
                    if y.at(t, u) == 1 {
                        set(out, s, t, at(out, s, t) + 1.0);
                    }
                }
            }
        }
    }
    for s in 0..c {
        for t in 0..c {
            if s != t {
                let (ns, nt, nst) = (at(out, s, s), at(out, t, t), at(out, s, t));
                // ρ is symmetric; compute it from the upper triangle only.
                if s < t {
                    let rho = if ns + nt > 0.0 {
                        2.0 * nst / (ns + nt)
                    } else {
                        0.0
                    };
                    set(out, s, t, -rho);
                    set(out, t, s, -rho);
                }
            }
        }
    }
    for s in 0..c {
        let d = -(0..c)
            .filter(|&t| t != s)
            .map(|t| at(out, t, s))
            .sum::<f64>();
        set(out, s, s, d);
    }
    Ok(())
}

fn check_flags(y: MatRef<'_, u8>) -> Result<(), Error> {
    for u in 0..y.cols() {
        for s in 0..y.rows() {
            if y.at(s, u) > 1 {
                return Err(Error::BadLabel);
            }
        }
    }
    Ok(())
}

/// Projects every column of `h` (`r` rows) onto the unit ball.
fn project_cols<T: Real>(h: &mut [T], r: usize) {
    for col in h.chunks_mut(r.max(1)) {
        let nn = sq_norm(col);
        if nn > 1.0 {
            let s = T::from_f64(1.0 / libm::sqrt(nn));
            col.iter_mut().for_each(|x| *x *= s);
        }
    }
}

/// Projects every row of `q` (`c × r`) onto the unit ball.
fn project_rows<T: Real>(q: &mut [T], c: usize, r: usize) {
    // Row s: every c-th value from s, r of them.
    for s in 0..c {
        let row = q.iter().skip(s).step_by(c.max(1)).take(r);
        let nn: f64 = row
            .map(|x| {
                let v = x.to_f64();
                v * v
            })
            .sum();
        if nn > 1.0 {
            let f = T::from_f64(1.0 / libm::sqrt(nn));
            let row = q.iter_mut().skip(s).step_by(c.max(1)).take(r);
            row.for_each(|x| *x *= f);
        }
    }
}

/// Fits MVEL (module docs): `y` the incomplete labels (`c × n`, 0/1, any
/// strides), `graph` the affinity graph over the `n` items, `r` the embedding
/// dimension; writes `q` (`c × r`) and `h` (`r × n`), column-major. Everything
/// is validated before anything is written; cancelling returns `Ok` with the
/// last complete iterate.
///
/// ```
/// use mvnmf::graph::DenseGraph;
/// use mvnmf::linalg::mat::MatRef;
/// use mvnmf::models::mvel::{self, MvelParams};
///
/// // 6 items in two groups {0,1,2}, {3,4,5}; 2 labels, some given (1), the
/// // rest unknown (0); an affinity graph joining each group.
/// let (n, c, r) = (6, 2, 2);
/// let y: [u8; 12] = [1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1];
/// let w: Vec<f64> = (0..n * n).map(|i| if (i % n) / 3 == (i / n) / 3 { 1.0 } else { 0.0 }).collect();
/// let graph = DenseGraph::new(&w, n)?;
/// let params = MvelParams { max_iter: 50, ..MvelParams::default() };
/// let mut work = vec![0u8; mvel::fit_workspace::<f64, _>(n, c, r, &graph, &params)?];
/// let (mut q, mut h) = (vec![0.0; c * r], vec![0.0; r * n]);
/// let y = MatRef::col_major(&y[..], c, n)?;
/// let report = mvel::fit(y, &graph, r, &params, &mut q, &mut h, &mut work, None)?;
/// assert!(report.objective.total <= report.initial.total);
/// // Item 1's first label (not given) scores above item 4's (the other group).
/// let score = |s: usize, u: usize| (0..r).map(|t| q[s + t * c] * h[t + u * r]).sum::<f64>();
/// assert!(score(0, 1) > score(0, 4));
/// # Ok::<(), mvnmf::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn fit<T: Real, G: GraphOp<T> + ?Sized>(
    y: MatRef<'_, u8>,
    graph: &G,
    r: usize,
    params: &MvelParams,
    q: &mut [T],
    h: &mut [T],
    work: &mut [u8],
    monitor: Option<Monitor<'_>>,
) -> Result<Report, Error> {
    params.validate()?;
    let (c, n) = (y.rows(), y.cols());
    check_graph(graph, n)?;
    fit_req::<T>(n, c, r, graph.apply_req(r), false)?.check(work.len())?;
    if q.len() != c * r || h.len() != r * n {
        return Err(Error::DimensionMismatch);
    }
    check_flags(y)?;
    if params.init == Init::Given {
        check_values(q, false)?;
        check_values(h, false)?;
    }
    let mut st = Stack::new(work);
    let lr: &mut [f64] = st.take_matrix(c, c)?;
    label_laplacian(y, lr)?;
    let fill = |yd: &mut [T]| {
        for (u, col) in yd.chunks_exact_mut(c.max(1)).take(n).enumerate() {
            for (s, x) in col.iter_mut().enumerate() {
                *x = T::from_f64(f64::from(y.at(s, u)));
            }
        }
    };
    let target = Target::Items {
        y,
        mu: params.unknown_weight,
    };
    fit_core(target, lr, c, graph, r, params, q, h, &fill, st, monitor)
}

/// What the fit term and the Gram of the fitted columns `X` come from: the
/// items themselves (`X = H`), or anchors (`X = A`, `H = A Z`).
#[derive(Clone, Copy)]
enum Target<'a, T> {
    /// `Ỹ` from the 0/1 labels and `μ`; Gram `I`.
    Items { y: MatRef<'a, u8>, mu: f64 },
    /// `P = Ỹ Zᵀ` (`c × m`) and `G = Z Zᵀ` (`m × m`).
    Anchors { p: &'a [T], g: &'a [T] },
}

impl<T: Real> Target<'_, T> {
    /// `a = Qᵀ P` (`r × cols`).
    fn qt_y(
        &self,
        q: &[T],
        c: usize,
        r: usize,
        a: &mut [T],
        sc: &mut Stack<'_>,
    ) -> Result<(), Error> {
        match *self {
            Target::Items { y, mu } => {
                qt_y(q, y, c, r, mu, a);
                Ok(())
            }
            Target::Anchors { p, .. } => gemm_into(
                MatRef::col_major(q, c, r)?.t(),
                MatRef::col_major(p, c, p.len().checked_div(c).ok_or(Error::Internal)?)?,
                a,
                sc,
            ),
        }
    }

    /// `b = P Xᵀ` (`c × r`).
    fn y_ht(
        &self,
        x: &[T],
        c: usize,
        r: usize,
        b: &mut [T],
        sc: &mut Stack<'_>,
    ) -> Result<(), Error> {
        match *self {
            Target::Items { y, mu } => {
                y_ht(x, y, c, r, mu, b);
                Ok(())
            }
            Target::Anchors { p, .. } => {
                let m = p.len().checked_div(c).ok_or(Error::Internal)?;
                gemm_into(
                    MatRef::col_major(p, c, m)?,
                    MatRef::col_major(x, r, m)?.t(),
                    b,
                    sc,
                )
            }
        }
    }

    /// `X G` into `xg` for anchors (`G = ZZᵀ`); `X` itself for items.
    fn times_g<'x>(
        &self,
        x: &'x [T],
        r: usize,
        cols: usize,
        xg: &'x mut [T],
        sc: &mut Stack<'_>,
    ) -> Result<&'x [T], Error> {
        match *self {
            Target::Items { .. } => Ok(x),
            Target::Anchors { g, .. } => {
                gemm_into(
                    MatRef::col_major(x, r, cols)?,
                    MatRef::col_major(g, cols, cols)?,
                    xg,
                    sc,
                )?;
                Ok(xg)
            }
        }
    }

    /// `out = M X G` (`M` `r × r`); `xg` is scratch for `X G`.
    #[allow(clippy::too_many_arguments)]
    fn mxg(
        &self,
        mm: &[T],
        x: &[T],
        r: usize,
        cols: usize,
        xg: &mut [T],
        out: &mut [T],
        sc: &mut Stack<'_>,
    ) -> Result<(), Error> {
        let src = self.times_g(x, r, cols, xg, sc)?;
        gemm_into(
            MatRef::col_major(mm, r, r)?,
            MatRef::col_major(src, r, cols)?,
            out,
            sc,
        )
    }

    /// `s = X G Xᵀ` (`r × r`).
    fn gram(
        &self,
        x: &[T],
        r: usize,
        cols: usize,
        xg: &mut [T],
        s: &mut [T],
        sc: &mut Stack<'_>,
    ) -> Result<(), Error> {
        match *self {
            Target::Items { .. } => crate::steps::mu::gram(x, r, cols, s, sc),
            Target::Anchors { .. } => {
                let xg = self.times_g(x, r, cols, xg, sc)?;
                gemm_into(
                    MatRef::col_major(xg, r, cols)?,
                    MatRef::col_major(x, r, cols)?.t(),
                    s,
                    sc,
                )
            }
        }
    }
}

/// The alternating projected-gradient loop (module docs) over the columns
/// `h` (`r × cols`: items, or anchors) for `target`, after the checks; `lr`
/// is `L_ρ`, `fill` writes the NMF start's target (`c × cols`, `≥ 0`).
#[allow(clippy::too_many_arguments)]
fn fit_core<T: Real, G: GraphOp<T> + ?Sized>(
    target: Target<'_, T>,
    lr: &[f64],
    c: usize,
    graph: &G,
    r: usize,
    params: &MvelParams,
    q: &mut [T],
    h: &mut [T],
    fill: &dyn Fn(&mut [T]),
    mut st: Stack<'_>,
    monitor: Option<Monitor<'_>>,
) -> Result<Report, Error> {
    let n = h.len().checked_div(r).ok_or(Error::BadRank)?;
    let anchored = matches!(target, Target::Anchors { .. });
    let a: &mut [T] = st.take_matrix(r, n)?;
    let hl: &mut [T] = st.take_matrix(r, n)?;
    let g: &mut [T] = st.take_matrix(r, n)?;
    let trial: &mut [T] = st.take_matrix(r, n)?;
    let plus: &mut [T] = st.take_matrix(r, n)?;
    let minus: &mut [T] = st.take_matrix(r, n)?;
    let mh: &mut [T] = st.take_matrix(r, n)?;
    let m: &mut [T] = st.take_matrix(r, r)?;
    let b: &mut [T] = st.take_matrix(c, r)?;
    let lq: &mut [T] = st.take_matrix(c, r)?;
    let qt: &mut [T] = st.take_matrix(c, r)?;
    let gq: &mut [T] = st.take_matrix(c, r)?;
    let qs: &mut [T] = st.take_matrix(c, r)?;
    let xg: &mut [T] = st.take_matrix(if anchored { r } else { 0 }, n)?;
    let mut sc = st.rest();
    if params.init == Init::Random {
        nmf_start(fill, c, r, &params.nmf(), q, h, &mut sc)?;
    }
    project_cols(h, r);
    project_rows(q, c, r);
    let (t1, t2) = (params.theta1, params.theta2);

    // f at (Q, H) from A = QᵀY, the graph trace and M = Qᵀ L_ρ Q.
    let graph_trace =
        |hh: &[T], hl: &mut [T], plus: &mut [T], minus: &mut [T], sc: &mut Stack<'_>| {
            let (ta, _) = graph.apply(hh, r, plus, minus, sc)?;
            for ((o, &p), &mi) in hl.iter_mut().zip(plus.iter()).zip(minus.iter()) {
                *o = p - mi;
            }
            Ok::<f64, Error>(ta)
        };
    target.qt_y(q, c, r, a, &mut sc)?;
    form_m(q, lr, c, r, lq, m, &mut sc)?;
    let mut tr = graph_trace(h, hl, plus, minus, &mut sc)?;
    target.mxg(m, h, r, n, xg, mh, &mut sc)?;
    let objective = |fit: f64, tr: f64, corr: f64| {
        Objective::new(
            fit + t1 * tr + t2 * corr,
            &[
                (Term::LabelFit, fit),
                (Term::Affinity, t1 * tr),
                (Term::LabelCorrelation, t2 * corr),
            ],
        )
    };
    let initial = objective(-dot(a, h), tr, dot(h, mh));
    let (mut th, mut tq) = (1.0f64, 1.0f64);

    run(
        params.max_iter,
        (params.tol, StopRule::EveryIteration),
        initial,
        monitor,
        |_it| {
            // ---- H-step: A, M, H L_w, M H are current.
            let f0 = -dot(a, h) + t1 * tr + t2 * dot(h, mh);
            let terms = a.iter().zip(hl.iter()).zip(mh.iter());
            for (gi, ((&ai, &hli), &mhi)) in g.iter_mut().zip(terms).take(r * n) {
                *gi = -ai + T::from_f64(2.0 * t1) * hli + T::from_f64(2.0 * t2) * mhi;
            }
            th *= 2.0;
            for _ in 0..BACKTRACKS {
                let t = T::from_f64(th);
                for ((x, &hv), &gv) in trial.iter_mut().zip(h.iter()).zip(g.iter()) {
                    *x = hv - t * gv;
                }
                project_cols(trial, r);
                let trt = graph_trace(trial, minus, plus, mh, &mut sc)?;
                // `minus` holds trial·L_w now; `mh` was scratch: M·trial·G next.
                target.mxg(m, trial, r, n, xg, mh, &mut sc)?;
                let f1 = -dot(a, trial) + t1 * trt + t2 * dot(trial, mh);
                let (mut lin, mut sq) = (0.0, 0.0);
                for ((&x, &hv), &gv) in trial.iter().zip(h.iter()).zip(g.iter()) {
                    let d = (x - hv).to_f64();
                    lin += gv.to_f64() * d;
                    sq += d * d;
                }
                if f1 <= f0 + lin + sq / (2.0 * th) && f1 <= f0 {
                    h.copy_checked(trial)?;
                    hl.copy_checked(minus)?;
                    tr = trt;
                    break;
                }
                th *= 0.5;
            }
            // Restore M H G for the accepted (or kept) H.
            target.mxg(m, h, r, n, xg, mh, &mut sc)?;

            // ---- Q-step: g(Q) = −⟨Q, B⟩ + θ₂ ⟨L_ρ Q, Q S⟩ (the graph term is fixed).
            target.y_ht(h, c, r, b, &mut sc)?;
            let s = &mut *m; // S = H G Hᵀ (M is re-formed below)
            target.gram(h, r, n, xg, s, &mut sc)?;
            let gq_val =
                |qq: &[T], lq: &mut [T], qs: &mut [T], sc: &mut Stack<'_>| -> Result<f64, Error> {
                    lrho_times(lr, qq, c, r, lq);
                    gemm(
                        T::ONE,
                        MatRef::col_major(qq, c, r)?,
                        MatRef::col_major(s, r, r)?,
                        T::ZERO,
                        MatMut::col_major(qs, c, r)?,
                        sc,
                    )?;
                    Ok(-dot(qq, b) + t2 * dot(lq, qs))
                };
            let q0 = gq_val(q, lq, gq, &mut sc)?;
            // gradient: −B + 2θ₂ L_ρ Q S = −B + 2θ₂ (L_ρ Q) S; `gq` holds Q S, form (L_ρ Q) S.
            gemm(
                T::ONE,
                MatRef::col_major(lq, c, r)?,
                MatRef::col_major(s, r, r)?,
                T::ZERO,
                MatMut::col_major(gq, c, r)?,
                &mut sc,
            )?;
            for (x, &bv) in gq.iter_mut().zip(b.iter()) {
                *x = -bv + T::from_f64(2.0 * t2) * *x;
            }
            tq *= 2.0;
            for _ in 0..BACKTRACKS {
                let t = T::from_f64(tq);
                for ((x, &qv), &gv) in qt.iter_mut().zip(q.iter()).zip(gq.iter()) {
                    *x = qv - t * gv;
                }
                project_rows(qt, c, r);
                let (mut lin, mut sq) = (0.0, 0.0);
                for ((&x, &qv), &gv) in qt.iter().zip(q.iter()).zip(gq.iter()) {
                    let d = (x - qv).to_f64();
                    lin += gv.to_f64() * d;
                    sq += d * d;
                }
                let q1 = gq_val(qt, lq, qs, &mut sc)?;
                if q1 <= q0 + lin + sq / (2.0 * tq) && q1 <= q0 {
                    q.copy_checked(qt)?;
                    break;
                }
                tq *= 0.5;
            }
            // New A, M, M H for the next H-step and the objective.
            target.qt_y(q, c, r, a, &mut sc)?;
            form_m(q, lr, c, r, lq, m, &mut sc)?;
            target.mxg(m, h, r, n, xg, mh, &mut sc)?;
            Ok(objective(-dot(a, h), tr, dot(h, mh)))
        },
    )
}

fn anchored_req<T>(c: usize, r: usize, m: usize) -> Result<WorkReq, Error> {
    let mm = WorkReq::matrix::<T>(m, m);
    Ok(WorkReq::all_of(&[
        WorkReq::matrix::<f64>(c, c), // L_ρ
        WorkReq::matrix::<T>(c, m),   // P
        mm,                           // G
        mm,                           // K
        WorkReq::new::<f64>(m),       // λ = Z 1
        WorkReq::new::<u8>(crate::work::ALIGN),
        gram_req::<T>(m).or(fit_req::<T>(m, c, r, gemm_req::<T>(r, m, m), true)?),
    ]))
}

/// Workspace bytes of [`fit_anchored`] for `n` items, `c` labels, dimension
/// `r` and `m` anchors.
pub fn fit_anchored_workspace<T: Real>(
    n: usize,
    c: usize,
    r: usize,
    m: usize,
    params: &MvelParams,
) -> Result<usize, Error> {
    params.validate()?;
    if m == 0 || n == 0 {
        return Err(Error::ZeroDimension);
    }
    anchored_req::<T>(c, r, m)?.bytes()
}

/// Fits MVEL on an anchor graph (module docs, "Anchors"): `y` the incomplete
/// labels (`c × n`), `(idx, z)` the anchor graph of the `n` items over `m`
/// anchors with `s` per item ([`crate::graph::anchor_graph`]); writes `q`
/// (`c × r`) and the anchors' embeddings `a` (`r × m`), column-major; the
/// items' are `H = A Z` ([`embed_anchored`]). Validation as [`fit`], and the
/// anchor graph's ([`crate::graph::anchor_gram`]).
///
/// Cost per iteration: `O(r·m² + r²·m)` for the anchors' products of each
/// trial step plus `O(c·r·m)`; once, `O(n·s·(s + c) + m³)`. Workspace
/// `O(m² + c·m + r·m)`: nothing of size `n` but the caller's `y`, `idx`, `z`.
///
/// ```
/// use mvnmf::linalg::mat::MatRef;
/// use mvnmf::models::mvel::{self, MvelParams};
///
/// // 6 items, 2 labels, m = 2 anchors, s = 1 anchor per item (weight 1):
/// // items 0-2 on anchor 0, items 3-5 on anchor 1.
/// let (n, c, r, m, s) = (6, 2, 2, 2, 1);
/// let y: [u8; 12] = [1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1];
/// let idx = [0, 0, 0, 1, 1, 1];
/// let z = [1.0; 6];
/// let params = MvelParams { max_iter: 50, ..MvelParams::default() };
/// let mut work = vec![0u8; mvel::fit_anchored_workspace::<f64>(n, c, r, m, &params)?];
/// let (mut q, mut a) = (vec![0.0; c * r], vec![0.0; r * m]);
/// let y = MatRef::col_major(&y[..], c, n)?;
/// let report = mvel::fit_anchored(y, &idx, &z, s, m, r, &params, &mut q, &mut a, &mut work, None)?;
/// assert!(report.objective.total <= report.initial.total);
/// # Ok::<(), mvnmf::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn fit_anchored<T: Real>(
    y: MatRef<'_, u8>,
    idx: &[usize],
    z: &[T],
    s: usize,
    m: usize,
    r: usize,
    params: &MvelParams,
    q: &mut [T],
    a: &mut [T],
    work: &mut [u8],
    monitor: Option<Monitor<'_>>,
) -> Result<Report, Error> {
    params.validate()?;
    let (c, n) = (y.rows(), y.cols());
    if c == 0 || n == 0 {
        return Err(Error::ZeroDimension);
    }
    if r == 0 {
        return Err(Error::BadRank);
    }
    if check_anchor_graph(idx, z, s, m)? != n {
        return Err(Error::DimensionMismatch);
    }
    anchored_req::<T>(c, r, m)?.check(work.len())?;
    if q.len() != c * r || a.len() != r * m {
        return Err(Error::DimensionMismatch);
    }
    check_flags(y)?;
    if params.init == Init::Given {
        check_values(q, false)?;
        check_values(a, false)?;
    }
    let mut st = Stack::new(work);
    let lr: &mut [f64] = st.take_matrix(c, c)?;
    let p: &mut [T] = st.take_matrix(c, m)?;
    let g: &mut [T] = st.take_matrix(m, m)?;
    let k: &mut [T] = st.take_matrix(m, m)?;
    let lam: &mut [f64] = st.take(m)?;
    label_laplacian(y, lr)?;
    anchor_gram(idx, z, s, m, g, k, st.rest().take_rest())?;
    // Y Zᵀ (the NMF start's target), then P = (1 + μ) Y Zᵀ − μ 1 λᵀ.
    // Item u's anchors and weights: chunk u of `idx` and `z` (`s × n`,
    // checked); anchor `an`'s column of `out` (`c × m`; `an < m` checked).
    let yzt = |out: &mut [T]| {
        out.fill(T::ZERO);
        let items = idx.chunks_exact(s.max(1)).zip(z.chunks_exact(s.max(1)));
        for (u, (iu, zu)) in items.take(n).enumerate() {
            for (&an, &zv) in iu.iter().zip(zu) {
                let Some(col) = out.get_mut(an * c..(an + 1) * c) else {
                    continue;
                };
                for (l, o) in col.iter_mut().enumerate() {
                    if y.at(l, u) == 1 {
                        *o += zv;
                    }
                }
            }
        }
    };
    yzt(p);
    let mu = params.unknown_weight;
    if mu != 0.0 {
        let up = T::from_f64(1.0 + mu);
        lam.fill(0.0);
        for (&an, &zv) in idx.iter().zip(z) {
            if let Some(l) = lam.get_mut(an) {
                *l += zv.to_f64();
            }
        }
        for (pa, &la) in p.chunks_exact_mut(c).zip(lam.iter()).take(m) {
            let off = T::from_f64(mu * la);
            pa.iter_mut().for_each(|x| *x = up * *x - off);
        }
    }
    let graph = AnchorGraph::new(&*g, &*k, m)?;
    let target = Target::Anchors { p: &*p, g: &*g };
    fit_core(target, lr, c, &graph, r, params, q, a, &yzt, st, monitor)
}

/// The items' embeddings `H = A Z` (`r × n`) from the anchors' `a` (`r × m`)
/// and an anchor graph `(idx, z)` with `s` anchors per item — the fitted items,
/// or new ones ([`crate::graph::anchor_graph`] with the training scales):
/// the paper's out-of-sample `h(x) = A z(x)`. Errors: the anchor graph's
/// ([`crate::graph::anchor_gram`]), lengths. `O(n·s·r)`.
pub fn embed_anchored<T: Real>(
    a: &[T],
    r: usize,
    idx: &[usize],
    z: &[T],
    s: usize,
    h: &mut [T],
) -> Result<(), Error> {
    if r == 0 {
        return Err(Error::BadRank);
    }
    if a.is_empty() {
        return Err(Error::ZeroDimension);
    }
    if !a.len().is_multiple_of(r) {
        return Err(Error::DimensionMismatch);
    }
    let m = a.len() / r;
    let n = check_anchor_graph(idx, z, s, m)?;
    if h.len() != r * n {
        return Err(Error::DimensionMismatch);
    }
    check_values(a, false)?;
    // Item u: column u of `h`, chunk u of `idx` and `z` (`s ≥ 1` and the
    // lengths checked); anchor `an < m` (checked): column an of `a`.
    let items = idx.chunks_exact(s.max(1)).zip(z.chunks_exact(s.max(1)));
    for (col, (iu, zu)) in h.chunks_exact_mut(r).zip(items).take(n) {
        col.fill(T::ZERO);
        for (&an, &zv) in iu.iter().zip(zu) {
            let aa = a.get(an * r..(an + 1) * r).unwrap_or(&[]);
            for (x, &av) in col.iter_mut().zip(aa) {
                *x += zv * av;
            }
        }
    }
    Ok(())
}

/// `a = Qᵀ Ỹ` (`r × n`), `Ỹ = (1 + μ) Y − μ 1 1ᵀ`: from the positives of `y`
/// and the column sums of `Qᵀ`.
fn qt_y<T: Real>(q: &[T], y: MatRef<'_, u8>, c: usize, r: usize, mu: f64, a: &mut [T]) {
    let up = T::from_f64(1.0 + mu);
    // Column u of `a` (`r × n`); column k of `q` (`c × r`).
    for (u, col) in a.chunks_exact_mut(r.max(1)).take(y.cols()).enumerate() {
        for (x, qk) in col.iter_mut().zip(q.chunks_exact(c.max(1))) {
            let (mut pos, mut all) = (0.0, 0.0);
            for (s, &qv) in qk.iter().enumerate() {
                let v = qv.to_f64();
                all += v;
                if y.at(s, u) == 1 {
                    pos += v;
                }
            }
            *x = up * T::from_f64(pos) - T::from_f64(mu * all);
        }
    }
}

/// `b = Ỹ Hᵀ` (`c × r`).
fn y_ht<T: Real>(h: &[T], y: MatRef<'_, u8>, c: usize, r: usize, mu: f64, b: &mut [T]) {
    b.fill(T::ZERO);
    // Column u of `h` (`r × n`); row s of `b` (`c × r`): every c-th value from s.
    let c1 = c.max(1);
    for (u, hu) in h.chunks_exact(r.max(1)).take(y.cols()).enumerate() {
        for s in 0..c {
            if y.at(s, u) == 1 {
                for (x, &hk) in b.iter_mut().skip(s).step_by(c1).zip(hu) {
                    *x += hk;
                }
            }
        }
    }
    let up = T::from_f64(1.0 + mu);
    for (k, bk) in b.chunks_exact_mut(c1).take(r).enumerate() {
        let hk = h.iter().skip(k).step_by(r.max(1));
        let sum = T::from_f64(mu * hk.map(|x| x.to_f64()).sum::<f64>());
        bk.iter_mut().for_each(|x| *x = up * *x - sum);
    }
}

/// `out = L_ρ Q` (`c × r`).
fn lrho_times<T: Real>(lr: &[f64], q: &[T], c: usize, r: usize, out: &mut [T]) {
    // Column k of `q` and `out` (`c × r`); row s of `lr` (`c × c`).
    let c1 = c.max(1);
    for (qk, ok) in q.chunks_exact(c1).zip(out.chunks_exact_mut(c1)).take(r) {
        for (s, o) in ok.iter_mut().enumerate() {
            let lrs = lr.iter().skip(s).step_by(c1);
            let v: f64 = lrs.zip(qk).map(|(&l, &qv)| l * qv.to_f64()).sum();
            *o = T::from_f64(v);
        }
    }
}

/// `m = Qᵀ L_ρ Q` (`r × r`); `lq` receives `L_ρ Q`.
fn form_m<T: Real>(
    q: &[T],
    lr: &[f64],
    c: usize,
    r: usize,
    lq: &mut [T],
    m: &mut [T],
    sc: &mut Stack<'_>,
) -> Result<(), Error> {
    lrho_times(lr, q, c, r, lq);
    gemm(
        T::ONE,
        MatRef::col_major(q, c, r)?.t(),
        MatRef::col_major(lq, c, r)?,
        T::ZERO,
        MatMut::col_major(m, r, r)?,
        sc,
    )
}

/// The NMF start (module docs).
fn nmf_start<T: Real>(
    fill: &dyn Fn(&mut [T]),
    c: usize,
    r: usize,
    p: &NmfParams,
    q: &mut [T],
    h: &mut [T],
    st: &mut Stack<'_>,
) -> Result<(), Error> {
    let n = h.len().checked_div(r).ok_or(Error::BadRank)?;
    let mut st = st.rest();
    let yd: &mut [T] = st.take_matrix(c, n)?;
    fill(yd);
    let rest = st.take_rest();
    if yd.iter().all(|&x| x == T::ZERO) {
        // No label given at all: a deterministic small start.
        q.iter_mut()
            .for_each(|x| *x = T::from_f64(1.0 / (c * r) as f64));
        h.iter_mut().for_each(|x| *x = T::from_f64(1.0 / r as f64));
        return Ok(());
    }
    let yv = [crate::data::View::from(crate::data::Dense::new(
        &*yd, c, n, c,
    )?)];
    let mut us: [&mut [T]; 1] = [&mut *q];
    crate::solvers::shallow::nmf_fit(&yv[..], r, p, &mut us[..], h, rest, None)?;
    let mmax = h
        .chunks(r.max(1))
        .map(|col| libm::sqrt(sq_norm(col)))
        .fold(0.0, f64::max);
    if mmax > 0.0 {
        let (fh, fq) = (T::from_f64(1.0 / mmax), T::from_f64(mmax));
        h.iter_mut().for_each(|x| *x *= fh);
        q.iter_mut().for_each(|x| *x *= fq);
    }
    Ok(())
}

/// `scores = Q H` (`c × n`): the label scores. For the fit's factors (columns
/// of norm at most 1) each is in `[−1, 1]` up to rounding (a few units in the
/// last place: a score of `1.0000000000000004` can occur); nothing is clamped.
///
/// Errors (before anything is written): a zero dimension, lengths that do not
/// match, a NaN or infinite entry of `q` or `h` ([`Error::NonFiniteInput`]),
/// and factors whose scores could overflow: `r · max|Q| · max|H|` above a
/// quarter of `T`'s largest finite value ([`Error::InputTooLarge`]; every
/// score, and every partial sum of the product, is at most that bound, so an
/// accepted call writes finite scores).
///
/// ```
/// use mvnmf::models::mvel;
///
/// // Q (2 labels x r = 2) and H (r x 3 items): scores = Q H.
/// let (c, r) = (2, 2);
/// let q = [1.0, 0.0, 0.0, 1.0];
/// let h = [0.5, 0.5, 1.0, 0.0, 0.0, -1.0];
/// let mut scores = [0.0; 6];
/// let mut work = vec![0u8; mvel::predict_workspace::<f64>(c, r, 3)?];
/// mvel::predict(&q, &h, c, r, &mut scores, &mut work)?;
/// assert_eq!(scores, [0.5, 0.5, 1.0, 0.0, 0.0, -1.0]);
/// # Ok::<(), mvnmf::Error>(())
/// ```
pub fn predict<T: Real>(
    q: &[T],
    h: &[T],
    c: usize,
    r: usize,
    scores: &mut [T],
    work: &mut [u8],
) -> Result<(), Error> {
    if c == 0 || r == 0 || h.is_empty() {
        return Err(Error::ZeroDimension);
    }
    if c.checked_mul(r) != Some(q.len()) || !h.len().is_multiple_of(r) {
        return Err(Error::DimensionMismatch);
    }
    let n = h.len() / r;
    if c.checked_mul(n) != Some(scores.len()) {
        return Err(Error::DimensionMismatch);
    }
    check_predict_factors(q, h, r)?;
    gemm_req::<T>(c, n, r).check(work.len())?;
    let mut st = Stack::new(work);
    gemm(
        T::ONE,
        MatRef::col_major(q, c, r)?,
        MatRef::col_major(h, r, n)?,
        T::ZERO,
        MatMut::col_major(scores, c, n)?,
        &mut st,
    )
}

/// The factors of [`predict`]: finite, and `r · max|Q| · max|H|` at most
/// `2^(MAX_EXP − 2)` (a quarter of `T::MAX`, rounded up to a power of two), so
/// no score and no partial sum of one can overflow, in any summation order.
fn check_predict_factors<T: Real>(q: &[T], h: &[T], r: usize) -> Result<(), Error> {
    let mut big = [0.0f64; 2];
    for (b, xs) in big.iter_mut().zip([q, h]) {
        for &x in xs {
            if !x.is_finite() {
                return Err(Error::NonFiniteInput);
            }
            *b = b.max(x.abs().to_f64());
        }
    }
    // In f64 (for f32 exact enough; for f64 an overflow to ∞ is above the bound too).
    let bound = libm::ldexp(1.0, T::MAX_EXP - 2);
    if r as f64 * big[0] * big[1] > bound {
        return Err(Error::InputTooLarge);
    }
    Ok(())
}

/// Workspace bytes of [`predict`] for `c` labels, dimension `r` and `n` items:
/// the same shape checks as the call (a zero dimension, a product of two of
/// them or its bytes beyond `isize::MAX`: [`Error::SizeOverflow`]).
pub fn predict_workspace<T>(c: usize, r: usize, n: usize) -> Result<usize, Error> {
    predict_shape::<T>(c, r, n)?;
    gemm_req::<T>(c, n, r).bytes()
}

/// The shape rule of [`predict`] as a C caller passes it (`c`, `r`, `n`): none
/// zero ([`Error::ZeroDimension`]), and `Q` (`c × r`), `H` (`r × n`) and the
/// scores (`c × n`) each addressable ([`Error::SizeOverflow`] when a count or
/// its bytes exceed `isize::MAX`). Shared by the workspace query and the call.
pub fn predict_shape<T>(c: usize, r: usize, n: usize) -> Result<(), Error> {
    if c == 0 || r == 0 || n == 0 {
        return Err(Error::ZeroDimension);
    }
    for (a, b) in [(c, r), (r, n), (c, n)] {
        a.checked_mul(b)
            .and_then(|e| e.checked_mul(core::mem::size_of::<T>()))
            .filter(|&bytes| bytes <= isize::MAX as usize)
            .ok_or(Error::SizeOverflow)?;
    }
    Ok(())
}

/// Per-label thresholds (module docs): for label `s`, the midpoint between
/// two consecutive distinct scores of row `s` that maximises the F1 of
/// "score > τ" against the given positives of `y` (the first, i.e. highest,
/// τ among equals); a label without a given positive gets `τ = f64::MAX`
/// (never predicted). `O(c · n log n)`; the workspace holds `n` indices.
pub fn choose_thresholds<T: Real>(
    scores: MatRef<'_, T>,
    y: MatRef<'_, u8>,
    tau: &mut [f64],
    work: &mut [u8],
) -> Result<(), Error> {
    let (c, n) = (scores.rows(), scores.cols());
    if c == 0 || n == 0 {
        return Err(Error::ZeroDimension);
    }
    if y.rows() != c || y.cols() != n || tau.len() != c {
        return Err(Error::DimensionMismatch);
    }
    check_flags(y)?;
    for u in 0..n {
        for s in 0..c {
            if !scores.at(s, u).is_finite() {
                return Err(Error::NonFiniteInput);
            }
        }
    }
    WorkReq::new::<usize>(n).check(work.len())?;
    let mut st = Stack::new(work);
    let idx: &mut [usize] = st.take(n)?;
    for (s, t) in tau.iter_mut().enumerate() {
        let pos = (0..n).filter(|&u| y.at(s, u) == 1).count();
        if pos == 0 {
            *t = f64::MAX;
            continue;
        }
        // The items by decreasing score, ties by index (scores are finite:
        // a total order, so this is the one order every sort gives). A heap
        // sort from `top_n_by`, not core's sorts, which keep a panic for
        // comparisons that are not a total order.
        top_n_by(n, |u| scores.at(s, u), None, idx);
        // Predict the top `k` (k = 1..n, only where the next score differs).
        let (mut tp, mut best, mut best_t) = (0usize, -1.0f64, f64::MAX);
        for k in 1..=n {
            let Some(&ik) = idx.get(k - 1) else { break };
            tp += usize::from(y.at(s, ik) == 1);
            let cur = scores.at(s, ik).to_f64();
            let next = match (k < n, idx.get(k)) {
                (true, Some(&j)) => scores.at(s, j).to_f64(),
                _ => f64::NEG_INFINITY,
            };
            if k < n && next == cur {
                continue;
            }
            let f1 = 2.0 * tp as f64 / (k + pos) as f64;
            if f1 > best {
                best = f1;
                best_t = if k < n { 0.5 * (cur + next) } else { cur - 1.0 };
            }
        }
        *t = best_t;
    }
    Ok(())
}

/// Workspace bytes of [`choose_thresholds`] for `n` items.
pub fn choose_thresholds_workspace(n: usize) -> Result<usize, Error> {
    // The checks of [`choose_thresholds`] on `n`: at least one item, each
    // label's `n` scores addressable.
    if n == 0 {
        return Err(Error::ZeroDimension);
    }
    predict_shape::<f64>(1, 1, n)?;
    WorkReq::new::<usize>(n).bytes()
}

/// `pred[s, u] = 1` when `scores[s, u] > tau[s]`, else 0.
pub fn decide<T: Real>(
    scores: MatRef<'_, T>,
    tau: &[f64],
    pred: MatMut<'_, u8>,
) -> Result<(), Error> {
    let (c, n) = (scores.rows(), scores.cols());
    if tau.len() != c || pred.rows() != c || pred.cols() != n {
        return Err(Error::DimensionMismatch);
    }
    let mut pred = pred;
    for u in 0..n {
        let col = pred.col_mut(u);
        for (s, (x, &ts)) in col.iter_mut().zip(tau).take(c).enumerate() {
            *x = u8::from(scores.at(s, u).to_f64() > ts);
        }
    }
    Ok(())
}

/// Workspace of [`pu_thresholds`] / [`decide_pu`] for `n` items: the order
/// (`n` indices) and the isotonic blocks (`n` sums, `n` ends).
fn pu_req(n: usize) -> WorkReq {
    WorkReq::new::<usize>(n)
        .and(WorkReq::new::<f64>(n))
        .and(WorkReq::new::<usize>(n))
}

/// Workspace bytes of [`pu_thresholds`] and [`decide_pu`] for `n` items.
pub fn pu_thresholds_workspace(n: usize) -> Result<usize, Error> {
    pu_req(n).bytes()
}

/// Checks of [`pu_thresholds`]: shapes, flags, finite scores, label
/// frequencies in `[0, 1]`.
fn check_pu<T: Real>(
    scores: MatRef<'_, T>,
    y: MatRef<'_, u8>,
    label_freq: Option<&[f64]>,
    tau_len: usize,
    used_len: Option<usize>,
) -> Result<(), Error> {
    let (c, n) = (scores.rows(), scores.cols());
    if c == 0 || n == 0 {
        return Err(Error::ZeroDimension);
    }
    if y.rows() != c || y.cols() != n || tau_len != c || used_len.is_some_and(|l| l != c) {
        return Err(Error::DimensionMismatch);
    }
    if let Some(f) = label_freq {
        if f.len() != c {
            return Err(Error::DimensionMismatch);
        }
        // `!(x >= 0 && x <= 1)` refuses NaN too.
        if f.iter().any(|&x| !(0.0..=1.0).contains(&x)) {
            return Err(Error::BadParameter);
        }
    }
    check_flags(y)?;
    for u in 0..n {
        for s in 0..c {
            if !scores.at(s, u).is_finite() {
                return Err(Error::NonFiniteInput);
            }
        }
    }
    Ok(())
}

/// Per-label thresholds by a positive–unlabeled rule (Elkan & Noto 2008)
/// — the paper's "threshold for each row of Ŷ", chosen from the given
/// positives only (a 0 of `y` is unknown, not negative):
///
/// 1. **Calibration.** `g_s(x) = P(given | score = x)`: the isotonic
///    (non-decreasing in the score) least-squares fit of the given flags of
///    row `s` against its scores (pool-adjacent-violators; equal scores form
///    one block, so a threshold never splits them).
/// 2. **Label frequency** `c_s = P(given | label s present)`: the caller's
///    `label_freq[s]` where it is in `(0, 1]`; where it is 0 (or
///    `label_freq` is `None`), Elkan–Noto's estimate, the mean of `g_s` over
///    the given positives. On transductive scores (the fit saw the given
///    labels, so they score above the hidden positives) that estimate is
///    biased up, and on weakly ranking scores down; `c_s` is not
///    identifiable from the scores alone, so a caller who knows roughly
///    which share of the labels is given should say so.
/// 3. **Decision.** Under "selected completely at random", an unlabeled item
///    with calibrated `g` carries label `s` with probability
///    `(1 − c) g / (c (1 − g))`; it is decided positive where that exceeds
///    ½ (the Hamming-optimal decision), i.e. where `g > c / (2 − c)`. As `g`
///    is monotone in the score this is one threshold: `tau[s]` is the
///    highest score whose block falls at or below the cut (`score > tau[s]`
///    decides positive), `f64::MAX` when no block clears it or the label has
///    no given positive, `−∞` when every block does.
///
/// `used` (if given) receives the `c_s` used (0 for a label without a given
/// positive). The given positives are decided positive whatever their score
/// ([`decide_keep`]). Errors, outputs untouched: `ZeroDimension`,
/// `DimensionMismatch`, `BadLabel`, `NonFiniteInput` (a score),
/// `BadParameter` (a label frequency outside `[0, 1]` or NaN),
/// `WorkspaceTooSmall`. `O(c · n log n)`.
pub fn pu_thresholds<T: Real>(
    scores: MatRef<'_, T>,
    y: MatRef<'_, u8>,
    label_freq: Option<&[f64]>,
    tau: &mut [f64],
    used: Option<&mut [f64]>,
    work: &mut [u8],
) -> Result<(), Error> {
    check_pu(
        scores,
        y,
        label_freq,
        tau.len(),
        used.as_ref().map(|u| u.len()),
    )?;
    let n = scores.cols();
    pu_req(n).check(work.len())?;
    let mut st = Stack::new(work);
    let idx: &mut [usize] = st.take(n)?;
    let bsum: &mut [f64] = st.take(n)?;
    let bend: &mut [usize] = st.take(n)?;
    let mut used = used;
    for (s, t) in tau.iter_mut().enumerate() {
        let (ts, cs) = pu_one(scores, y, s, label_freq, idx, bsum, bend);
        *t = ts;
        if let Some(u) = used.as_deref_mut().and_then(|u| u.get_mut(s)) {
            *u = cs;
        }
    }
    Ok(())
}

/// One label of [`pu_thresholds`]: `(tau, c)`.
fn pu_one<T: Real>(
    scores: MatRef<'_, T>,
    y: MatRef<'_, u8>,
    s: usize,
    label_freq: Option<&[f64]>,
    idx: &mut [usize],
    bsum: &mut [f64],
    bend: &mut [usize],
) -> (f64, f64) {
    let n = scores.cols();
    let pos = (0..n).filter(|&u| y.at(s, u) == 1).count();
    if pos == 0 {
        return (f64::MAX, 0.0);
    }
    // Items by decreasing score (ties by index; a heap sort, no panic path).
    top_n_by(n, |u| scores.at(s, u), None, idx);
    let score_at = |k: usize| {
        idx.get(k)
            .map_or(f64::NEG_INFINITY, |&u| scores.at(s, u).to_f64())
    };
    let given_at = |k: usize| idx.get(k).map_or(0.0, |&u| f64::from(y.at(s, u)));
    // Pool adjacent violators along decreasing scores: block means must not
    // increase. Block b covers positions [end[b−1], end[b]) with sum bsum[b].
    let mut nb = 0usize;
    let mut k = 0usize;
    while k < n {
        // One block per run of equal scores.
        let (x, mut sum, mut e) = (score_at(k), 0.0, k);
        while e < n && score_at(e) == x {
            sum += given_at(e);
            e += 1;
        }
        k = e;
        let (Some(bs), Some(be)) = (bsum.get_mut(nb), bend.get_mut(nb)) else {
            break;
        };
        (*bs, *be) = (sum, e);
        nb += 1;
        // Merge while the previous block's mean is below this one's.
        while nb >= 2 {
            let start = |b: usize| {
                if b == 0 {
                    0
                } else {
                    bend.get(b - 1).copied().unwrap_or(0)
                }
            };
            let (p, q) = (nb - 2, nb - 1);
            let (sp, sq) = (
                bsum.get(p).copied().unwrap_or(0.0),
                bsum.get(q).copied().unwrap_or(0.0),
            );
            let (ep, eq) = (
                bend.get(p).copied().unwrap_or(0),
                bend.get(q).copied().unwrap_or(0),
            );
            let (np, nq) = ((ep - start(p)) as f64, (eq - ep) as f64);
            if sp * nq >= sq * np {
                break;
            }
            if let (Some(a), Some(b)) = (bsum.get_mut(p), bend.get_mut(p)) {
                *a = sp + sq;
                *b = eq;
            }
            nb -= 1;
        }
    }
    let mean = |b: usize| {
        let lo = if b == 0 {
            0
        } else {
            bend.get(b - 1).copied().unwrap_or(0)
        };
        let hi = bend.get(b).copied().unwrap_or(lo);
        bsum.get(b).copied().unwrap_or(0.0) / ((hi - lo).max(1)) as f64
    };
    // c: the caller's, or the mean calibrated g over the given positives.
    let c = match label_freq.and_then(|f| f.get(s)).copied() {
        Some(f) if f > 0.0 => f,
        _ => {
            (0..nb)
                .map(|b| mean(b) * bsum.get(b).copied().unwrap_or(0.0))
                .sum::<f64>()
                / pos as f64
        }
    };
    let cut = c / (2.0 - c);
    // The blocks above the cut are a prefix (means do not increase).
    let above = (0..nb).take_while(|&b| mean(b) > cut).count();
    let tau = if above == 0 {
        f64::MAX
    } else if above == nb {
        f64::NEG_INFINITY
    } else {
        score_at(bend.get(above - 1).copied().unwrap_or(0))
    };
    (tau, c)
}

/// `pred[s, u] = 1` when `y[s, u] = 1` (a given positive is kept) or
/// `scores[s, u] > tau[s]`, else 0.
pub fn decide_keep<T: Real>(
    scores: MatRef<'_, T>,
    tau: &[f64],
    y: MatRef<'_, u8>,
    pred: MatMut<'_, u8>,
) -> Result<(), Error> {
    let (c, n) = (scores.rows(), scores.cols());
    if tau.len() != c || pred.rows() != c || pred.cols() != n || y.rows() != c || y.cols() != n {
        return Err(Error::DimensionMismatch);
    }
    check_flags(y)?;
    let mut pred = pred;
    for u in 0..n {
        let col = pred.col_mut(u);
        for (s, (x, &ts)) in col.iter_mut().zip(tau).take(c).enumerate() {
            *x = u8::from(y.at(s, u) == 1 || scores.at(s, u).to_f64() > ts);
        }
    }
    Ok(())
}

/// [`pu_thresholds`] then [`decide_keep`]: the decisions of MVEL's default
/// rule, with the thresholds in `tau` and the label frequencies used in
/// `used` (if given). Everything is checked before anything is written.
pub fn decide_pu<T: Real>(
    scores: MatRef<'_, T>,
    y: MatRef<'_, u8>,
    label_freq: Option<&[f64]>,
    tau: &mut [f64],
    used: Option<&mut [f64]>,
    pred: MatMut<'_, u8>,
    work: &mut [u8],
) -> Result<(), Error> {
    check_pu(
        scores,
        y,
        label_freq,
        tau.len(),
        used.as_ref().map(|u| u.len()),
    )?;
    if pred.rows() != scores.rows() || pred.cols() != scores.cols() {
        return Err(Error::DimensionMismatch);
    }
    pu_req(scores.cols()).check(work.len())?;
    pu_thresholds(scores, y, label_freq, tau, used, work)?;
    decide_keep(scores, tau, y, pred)
}

/// Workspace bytes of [`label_freq_holdout`] for `n` items, with the call's checks on
/// `n` (at least one item, each label's `n` scores addressable).
pub fn label_freq_holdout_workspace(n: usize) -> Result<usize, Error> {
    choose_thresholds_workspace(n)
}

/// The label frequency `c_s` (the share of label `s`'s positives that is
/// given) from given positives **held out of a refit** — the input
/// [`pu_thresholds`] needs (`label_freq`), estimated without the bias of
/// scores the fit has seen.
///
/// The caller splits the given positives `Y` into the labels a refit sees
/// (`fit`) and the rest (`held`, a random share, disjoint from `fit`), refits
/// on `fit` and passes its scores. To that refit a held-out positive is an
/// unseen positive like a hidden one, so, per label, the scores of the held-out
/// positives are a sample of the scores of the positives among the items
/// `fit` leaves unknown (`U`, `n_U` items). Those scores mix the positives'
/// distribution with share `α` and the negatives' (Blanchard, Lee & Scott
/// 2010, "semi-supervised novelty detection"; Scott 2015, the mixture
/// proportion estimate of PU learning): `F̄_U(t) = α F̄_P(t) + (1 − α) F̄_N(t)`
/// for the upper tails, hence `α ≤ F̄_U(t) / F̄_P(t)` at every threshold `t`,
/// with equality where no negative scores above `t` (irreducibility). The
/// estimate:
///
/// ```text
/// α̂ = min over thresholds t (between distinct scores of U, with at least
///      m = min(max(min_held, 1), H) held-out positives above t) of
///      (#U above t / n_U) / (#held above t / H)
/// α̂ ← clamp(α̂, H / n_U, 1)            (the held-out positives are in U)
/// c_s = (P' + H) / (P' + α̂ n_U)        (given positives / estimated positives)
/// ```
///
/// (`P'`: the label's `fit` positives, `H`: its held-out ones). Where negatives
/// score among the top positives the minimum overstates `α` and so `c_s`
/// comes out low (more positives added), never high because of the fit
/// having seen them; `min_held` bounds the noise of the tail ratio at the
/// cost of that upward bias. `freq[s] = 0` (unknown: [`pu_thresholds`]
/// then uses its own estimate) where the label has no held-out positive.
///
/// Errors, outputs untouched: `ZeroDimension`, `DimensionMismatch`,
/// `BadLabel` (a flag not 0/1, or an entry held out and in `fit`),
/// `NonFiniteInput` (a score), `WorkspaceTooSmall`. `O(c · n log n)`.
pub fn label_freq_holdout<T: Real>(
    scores: MatRef<'_, T>,
    fit: MatRef<'_, u8>,
    held: MatRef<'_, u8>,
    min_held: usize,
    freq: &mut [f64],
    work: &mut [u8],
) -> Result<(), Error> {
    let (c, n) = (scores.rows(), scores.cols());
    if c == 0 || n == 0 {
        return Err(Error::ZeroDimension);
    }
    if fit.rows() != c || fit.cols() != n || held.rows() != c || held.cols() != n || freq.len() != c
    {
        return Err(Error::DimensionMismatch);
    }
    check_flags(fit)?;
    check_flags(held)?;
    for u in 0..n {
        for s in 0..c {
            if held.at(s, u) == 1 && fit.at(s, u) == 1 {
                return Err(Error::BadLabel);
            }
            if !scores.at(s, u).is_finite() {
                return Err(Error::NonFiniteInput);
            }
        }
    }
    WorkReq::new::<usize>(n).check(work.len())?;
    let mut st = Stack::new(work);
    let idx: &mut [usize] = st.take(n)?;
    for (s, f) in freq.iter_mut().enumerate() {
        let pf = (0..n).filter(|&u| fit.at(s, u) == 1).count();
        let h = (0..n).filter(|&u| held.at(s, u) == 1).count();
        let nu = n - pf;
        if h == 0 || nu == 0 {
            *f = 0.0;
            continue;
        }
        // `clamp(1, h)` without its `min <= max` assertion (h >= 1 here).
        let m = min_held.max(1).min(h);
        // Items by decreasing score (ties by index; a heap sort, no panic path).
        top_n_by(n, |u| scores.at(s, u), None, idx);
        let (mut k, mut a, mut alpha) = (0usize, 0usize, 1.0f64);
        let mut pos = 0usize;
        while pos < n {
            // One run of equal scores at a time: a threshold never splits it.
            let x = idx.get(pos).map_or(0.0, |&u| scores.at(s, u).to_f64());
            while let Some(&u) = idx.get(pos) {
                if scores.at(s, u).to_f64() != x {
                    break;
                }
                if fit.at(s, u) == 0 {
                    k += 1;
                    a += usize::from(held.at(s, u) == 1);
                }
                pos += 1;
            }
            if a >= m {
                let r = (k as f64 / nu as f64) / (a as f64 / h as f64);
                if r < alpha {
                    alpha = r;
                }
            }
        }
        let alpha = alpha.max(h as f64 / nu as f64).min(1.0);
        *f = ((pf + h) as f64 / (pf as f64 + alpha * nu as f64)).min(1.0);
    }
    Ok(())
}

/// Workspace bytes of [`count_thresholds`] for `n` items, with the call's checks on
/// `n` (at least one item, each label's `n` scores addressable).
pub fn count_thresholds_workspace(n: usize) -> Result<usize, Error> {
    choose_thresholds_workspace(n)
}

/// Per-label thresholds from the label frequencies alone (the **count rule**;
/// no calibration): a label with `P_s` given positives and label frequency
/// `c_s` has about `P_s / c_s` positives, so about
/// `m_s = round(P_s (1 − c_s) / c_s)` hidden ones, and `tau[s]` decides the
/// `m_s` highest-scoring of its unknown items (`score > tau[s]`, with the
/// given positives kept by [`decide_keep`]): half-way between the `m_s`-th
/// and the next unknown score, or that score itself where the two tie (a tied
/// run straddling the cut is left out). `tau[s] = +∞` (nothing added) where
/// `c_s = 0` (unknown), the label has no given positive, or `m_s = 0`;
/// `−∞` where `m_s` reaches the unknown items' count.
///
/// Why not the isotonic calibration of [`pu_thresholds`]: on the scores of a
/// transductive fit the given positives score above the hidden ones, so
/// `P(given | score)` at a hidden positive's score is low and the calibrated
/// rule adds too few even with the right `c_s`; the count needs only the
/// ranking of the unknown items and `c_s` (e.g. from [`label_freq_holdout`]).
///
/// Errors, outputs untouched: `ZeroDimension`, `DimensionMismatch`,
/// `BadLabel`, `NonFiniteInput` (a score), `BadParameter` (a label frequency
/// outside `[0, 1]` or NaN), `WorkspaceTooSmall`. `O(c · n log n)`.
pub fn count_thresholds<T: Real>(
    scores: MatRef<'_, T>,
    y: MatRef<'_, u8>,
    label_freq: &[f64],
    tau: &mut [f64],
    work: &mut [u8],
) -> Result<(), Error> {
    check_pu(scores, y, Some(label_freq), tau.len(), None)?;
    let n = scores.cols();
    WorkReq::new::<usize>(n).check(work.len())?;
    let mut st = Stack::new(work);
    let idx: &mut [usize] = st.take(n)?;
    for (s, (t, &cs)) in tau.iter_mut().zip(label_freq).enumerate() {
        *t = f64::INFINITY;
        let p = (0..n).filter(|&u| y.at(s, u) == 1).count();
        let nu = n - p;
        if cs <= 0.0 || p == 0 || nu == 0 {
            continue;
        }
        // round(P (1 − c) / c): `as` truncates a non-negative value (and
        // saturates a huge one), so adding ½ rounds; no `floor` in `core`.
        let m = (p as f64 * (1.0 - cs) / cs + 0.5) as usize;
        if m < 1 {
            continue;
        }
        if m >= nu {
            *t = f64::NEG_INFINITY;
            continue;
        }
        // Items by decreasing score (ties by index); the unknown ones in order.
        top_n_by(n, |u| scores.at(s, u), None, idx);
        let mut unknown = idx.iter().filter(|&&u| y.at(s, u) == 0);
        let (Some(&a), Some(&b)) = (unknown.nth(m - 1), unknown.next()) else {
            continue;
        };
        let (xa, xb) = (scores.at(s, a).to_f64(), scores.at(s, b).to_f64());
        *t = if xa == xb { xb } else { 0.5 * (xa + xb) };
    }
    Ok(())
}

/// [`count_thresholds`] then [`decide_keep`]: the count rule's thresholds in
/// `tau` and its decisions in `pred` (every given positive kept). Everything
/// is checked before anything is written; errors as [`count_thresholds`].
pub fn decide_count<T: Real>(
    scores: MatRef<'_, T>,
    y: MatRef<'_, u8>,
    label_freq: &[f64],
    tau: &mut [f64],
    pred: MatMut<'_, u8>,
    work: &mut [u8],
) -> Result<(), Error> {
    check_pu(scores, y, Some(label_freq), tau.len(), None)?;
    if pred.rows() != scores.rows() || pred.cols() != scores.cols() {
        return Err(Error::DimensionMismatch);
    }
    WorkReq::new::<usize>(scores.cols()).check(work.len())?;
    count_thresholds(scores, y, label_freq, tau, work)?;
    decide_keep(scores, tau, y, pred)
}
