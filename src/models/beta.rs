//! NMF and joint NMF under a β-divergence (issue 17, item 2): Kullback–Leibler
//! (`β = 1`), Itakura–Saito (`β = 0`) and any `β ∈ [0, 2]`, by the
//! majorise–minimise multiplicative updates of Févotte & Idier (2011), as
//! scikit-learn's `NMF(solver="mu", beta_loss=β)`.
//!
//! ```text
//! min Σ_v D_β(X⁽ᵛ⁾ | U⁽ᵛ⁾ V),   D_β(X | Y) = Σ_ij d_β(x_ij | y_ij),   U, V ≥ 0
//! d_β(x|y) = x/y − log(x/y) − 1                            β = 0
//!          = x log(x/y) − x + y                            β = 1
//!          = (x^β + (β−1) y^β − β x y^(β−1)) / (β(β−1))    otherwise (β = 2: ½(x − y)²)
//! U ← U ∘ [((X ∘ Y^(β−2)) Vᵀ) / (Y^(β−1) Vᵀ)]^γ            per view, Y = U V
//! V ← V ∘ [(Σ_v Uᵀ (X ∘ Y^(β−2))) / (Σ_v Uᵀ Y^(β−1))]^γ    γ = 1/(2 − β) for β < 1, else 1
//! ```
//!
//! Each block update minimises an auxiliary function of the divergence (the
//! views' auxiliary functions add up for the shared `V`), so **the objective
//! never increases** — exactly so where `x_ij > 0` (there `Y` is floored only at
//! `ω_v·2^−256` on the scaled views below, in both precisions, whatever `clip`).
//! The default `clip` is
//! scikit-learn's (`float32` epsilon): where `x_ij = 0`, `Y` below it is raised
//! to it in `Y^(β−1)` (for `β < 1`; in `X ∘ Y^(β−2)` the entry is 0 anyway), and a
//! zero denominator becomes `clip`; that keeps the iterates equal
//! to scikit-learn's wherever every observed `y_ij ≥ clip` (the floor acts on the
//! internally scaled data below, so on data far from 1 in size it differs from
//! scikit-learn's absolute one). **Where `x_ij > 0` the clip does not act**
//! (issue 31, seed `0x200d38d`): scikit-learn also raises `Y` there, which caps
//! the ratio `x/y` of an entry fitted below `clip`; the capped update is not an
//! MM step, and from a start with zero entries on a view spread over many decades
//! a factor pair shrank geometrically until `y_ij = 0` at an `x_ij > 0` (an
//! infinite divergence). The
//! reported objective is always the exact divergence.
//!
//! **The clip per view** (issue 31): view `v`'s floor of `Y` (where `x = 0`) is
//! `ω_v · max(min(clip, x̃_min), 2^−256)`, `x̃_min` its smallest positive scaled
//! entry. For one view, or views at one scale (`ω = 1`) whose entries are all
//! at least `clip` (scikit-learn's typical data), that is scikit-learn's
//! clip value (the iterates equal scikit-learn's where every observed `y ≥ clip`). (Before the clip was limited
//! to `x = 0`, the factors `ω_v` and `x̃_min` kept it below a light view's
//! optimum `y ≈ ω_v·x̃`, where a column observed only by that view shrank by
//! `ω_v/clip` per iteration and underflowed; fuzz seeds `0x4023754`, `0x203e5f6`.)
//!
//! **Precision**: every iterate and product (`Ũ⁽ᵛ⁾`, `V`, `Y`, `X ∘ Y^(β−2)`,
//! the numerators and denominators, the weights `ω_v`) is held in `f64`,
//! for `f32` data too (whose entries are read exactly); the `f32` factors are
//! the `f64` iterates rounded once at the end. In float, `ω_v` of views far
//! apart underflowed, `Y` had to be floored at `2^−32` (above entries spread
//! over ten decades), and the fit rose or ended `Internal` (issue 31).
//!
//! **Magnitudes** (issue 31: one rule per view, as the views may lie far
//! apart). `d_β` is homogeneous of degree `β`: `d_β(cx | cy) = c^β d_β(x | y)`.
//! So each view is read as `s_v X⁽ᵛ⁾`, `s_v` the power of two that puts its
//! largest (observed) entry in `[1, 2)` (an all-zero view takes
//! the largest view's), its basis as `s_v U⁽ᵛ⁾`, and the fit minimises
//! `Σ_v ω_v D_β(s_v X⁽ᵛ⁾ | s_v U⁽ᵛ⁾ V)` with `ω_v = (s_min/s_v)^β ≤ 1` (`s_min`:
//! the largest view's scale) — exactly `s_min^β` times the caller's objective,
//! so it has the caller's minimisers, the updates are the MM updates of the
//! weighted sum (`ω_v` cancels in the U-steps and weighs the views' terms in
//! the V-step), and the objective is reported in the caller's units (`s_min^−β`
//! times the scaled one: monotone). For `β = 0` the weights are 1 (Itakura–Saito
//! is scale-invariant). A view of values near `1e-10` beside one near `1e10`
//! is then fitted as two views near 1 (before, one common scale left the small
//! view below `clip`, and the objective rose). Views at one scale keep their
//! bits (`ω = 1`, each `s_v` the common scale).
//!
//! **Limits**, checked with the other inputs before anything is written
//! ([`Error::InputTooLarge`]): `Σ_v Σ_ij x_ij^β ≤ 2^1000` over the observed
//! entries (for `β = 2` the factorization family's `½ Σ‖X‖²_F ≤ 2^999`; for
//! `β = 0` no bound: the objective does not depend on the scale), so the
//! objective is representable; for `β ∈ (0, 2)`, views at most `2^(256/β)`
//! apart (`ω_v ≥ 2^−256`: every floor `ω_v·2^−256` keeps `X ∘ Y^(β−2)`
//! finite; `β = 1`: largest entries within about `1e77` of each other, `β =
//! 0.5`: `1e154`; β = 0 and 2 need no floor); and every entry at most `2^(MAX_EXP − 25)` of the
//! precision (`2^999 ≈ 5e300` for `f64`, `2^103 ≈ 1e31` for `f32`), so the bases
//! in the caller's units (`U⁽ᵛ⁾ = Ũ⁽ᵛ⁾/s_v`) are. Tiny data (down to the
//! smallest subnormal) is fitted as data near 1. A given start
//! whose objective is not finite (`U V = 0` where `X > 0` for `β ≤ 1`, or
//! a start too large for `U V`) is refused with [`Error::BadParameter`]. Behind
//! these rules, [`fit`] never returns `Ok` with a non-finite factor or
//! objective: it would return [`Error::Internal`] (outputs at the last
//! iterate; `crate::steps::finite`).
//!
//! A given start is read at the views' scales (`s_v U⁽ᵛ⁾`, `V`): its entries and
//! each view's largest `s_v (U V)_ij` (a CSC view's over its stored entries,
//! `O(nnz·K)`) must lie within `2^(MAX_EXP/4)`
//! (`2^256`; `f32`: `2^32`) of the scaled data (at most that, and for a view
//! with a nonzero entry at least its inverse), else [`Error::BadParameter`]
//! (a start that far off the data's scale underflows the first update).
//!
//! **Data**: dense views for every `β`; CSC views for `β = 1` (the ratio only at
//! the stored entries, the denominators from the factors' sums: `O(nnz·K)` per
//! product, no `M × N` buffer). For `β ≤ 0` a zero in `X` makes `d_β` infinite:
//! refused ([`Error::BadParameter`], as scikit-learn refuses it).
//!
//! The graph and sparsity models (MvSL/MCL, DMCL) keep the Frobenius loss:
//! their monotone V-step is derived for it; this module offers the
//! divergences for NMF and joint NMF only.
//!
//! **Start**: [`Init::Random`] as [`crate::models::nmf`] (same stream and
//! scales), or [`Init::Given`] (e.g. an NNDSVD start, [`crate::steps::nndsvd()`]).
//!
//! **Cost per iteration** (dense): per view three products `U V` and four
//! `M × N × K` products, `O(M·N·K)`, plus `M·N` powers for `β ∉ {0, 1, 2}`;
//! workspace (in `f64` whatever the precision) two `max M_v × N` buffers and
//! `O((Σ M_v + N)·K)`.

use crate::data::{FactorsMut, View, ViewSet, ViewShape};
use crate::error::{Error, Part};
use crate::linalg::mat::{MatMut, MatRef};
use crate::linalg::real::Real;
use crate::linalg::{gemm, gemm_into, gemm_req};
use crate::steps::finite::{all_finite, factors_finite, finite_report};
use crate::steps::init::random_start_with;
use crate::steps::{run, Init, Monitor, NmfParams, Objective, Report, Term};
use crate::work::{Stack, WorkReq};

/// scikit-learn's `EPSILON` (`np.finfo(np.float32).eps`).
pub const SKLEARN_EPSILON: f64 = 1.1920928955078125e-07;

/// Options of [`fit`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BetaParams {
    /// `β ∈ [0, 2]` (default 1, Kullback–Leibler).
    pub beta: f64,
    /// Iterations, tolerance, seed, start as [`NmfParams`] (`eps`, `vmax`
    /// and `parallel` unused: β-NMF runs serially).
    pub iter: NmfParams,
    /// The floor of `Y = U V` in the ratios (module docs; default
    /// [`SKLEARN_EPSILON`], 0 for the exact MM update).
    pub clip: f64,
}

impl Default for BetaParams {
    fn default() -> Self {
        BetaParams {
            beta: 1.0,
            iter: NmfParams::default(),
            clip: SKLEARN_EPSILON,
        }
    }
}

impl BetaParams {
    /// [`Error::BadParameter`] unless `β ∈ [0, 2]`, `clip ≥ 0` finite and the
    /// iteration options are valid.
    pub fn validate(&self) -> Result<(), Error> {
        if !((0.0..=2.0).contains(&self.beta) && self.clip.is_finite() && self.clip >= 0.0) {
            return Err(Error::BadParameter);
        }
        self.iter.validate()
    }

    fn gamma(&self) -> f64 {
        if self.beta < 1.0 {
            1.0 / (2.0 - self.beta)
        } else {
            1.0
        }
    }
}

fn req(shapes: impl IntoIterator<Item = ViewShape>, k: usize) -> Result<WorkReq, Error> {
    let (mut n, mut mmax, mut h, mut msum) = (None, 0usize, 0usize, 0usize);
    for s in shapes {
        if s.rows == 0 || s.cols == 0 {
            return Err(Error::ZeroDimension);
        }
        if *n.get_or_insert(s.cols) != s.cols {
            return Err(Error::DimensionMismatch);
        }
        mmax = mmax.max(s.rows);
        msum = msum.checked_add(s.rows).ok_or(Error::SizeOverflow)?;
        h += 1;
    }
    if h == 0 {
        return Err(Error::ZeroDimension);
    }
    let n = n.unwrap_or(0);
    if k == 0 {
        return Err(Error::BadRank);
    }
    mmax.checked_mul(n).ok_or(Error::SizeOverflow)?;
    // Every iterate and product is held in `f64` whatever `T` (module docs,
    // "Precision"): the factors' copies, then the buffers.
    Ok(WorkReq::all_of(&[
        WorkReq::new::<f64>(h.checked_mul(3).ok_or(Error::SizeOverflow)?), // s_v, ω_v, c_v
        WorkReq::matrix::<f64>(msum, k),                                   // Ũ⁽ᵛ⁾, stacked
        WorkReq::matrix::<f64>(k, n),                                      // V
        WorkReq::matrix::<f64>(mmax, n),                                   // Y
        WorkReq::matrix::<f64>(mmax, n),                                   // R = X ∘ Y^(β−2)
        WorkReq::matrix::<f64>(mmax, k),                                   // U numerator
        WorkReq::matrix::<f64>(mmax, k),                                   // U denominator
        WorkReq::matrix::<f64>(k, n),                                      // V numerator
        WorkReq::matrix::<f64>(k, n),                                      // V denominator
        WorkReq::new::<u8>(crate::work::ALIGN),
        gemm_req::<f64>(mmax, n, k)
            .or(gemm_req::<f64>(mmax, k, n))
            .or(gemm_req::<f64>(k, n, mmax)),
    ]))
}

/// Workspace bytes of [`fit`].
pub fn fit_workspace<T>(
    shapes: impl IntoIterator<Item = ViewShape>,
    k: usize,
    params: &BetaParams,
) -> Result<usize, Error> {
    params.validate()?;
    req(shapes, k)?.bytes()
}

/// `d_β(x | y)` (module docs); `x ≥ 0`, `y ≥ 0`.
fn d_beta(beta: f64, x: f64, y: f64) -> f64 {
    if beta == 2.0 {
        0.5 * (x - y) * (x - y)
    } else if beta == 1.0 {
        if x == 0.0 {
            y
        } else {
            x * libm::log(x / y) - x + y
        }
    } else if beta == 0.0 {
        x / y - libm::log(x / y) - 1.0
    } else if x == 0.0 {
        // (β−1) y^β / (β(β−1)); also 0 at y = 0 (where the general form
        // would read 0·∞).
        libm::pow(y, beta) / beta
    } else {
        (libm::pow(x, beta) + (beta - 1.0) * libm::pow(y, beta)
            - beta * x * libm::pow(y, beta - 1.0))
            / (beta * (beta - 1.0))
    }
}

/// Fits `X⁽ᵛ⁾ ≈ U⁽ᵛ⁾ V` under the β-divergence (module docs); `u` per view
/// `M_v × K`, `v` `K × N`, column-major. Validation before anything is
/// written: shapes, `k`, options, values (finite, `≥ 0`; no zero for `β ≤ 0`;
/// CSC views only with `β = 1` — [`Error::BadParameter`]), a given start
/// (finite, `≥ 0`, a finite objective, near the data's scale), the workspace, the magnitudes (module
/// docs, "Limits": [`Error::InputTooLarge`]). Cancelling returns `Ok` with the
/// last complete iterate. `Ok` always carries finite factors and objectives.
///
/// ```
/// use mvnmf::models::beta::{self, BetaParams};
/// use mvnmf::models::nmf::NmfParams;
/// use mvnmf::{Dense, View};
///
/// // Kullback-Leibler NMF (β = 1) of counts: 5 features x 8 items, rank 2,
/// // with the exact MM update (clip 0), whose objective never rises.
/// let (m, n, k) = (5, 8, 2);
/// let x: Vec<f64> = (0..m * n).map(|i| (i * 7 % 5) as f64).collect();
/// let views = [View::from(Dense::new(&x, m, n, m)?)];
/// let iter = NmfParams { max_iter: 50, seed: 3, ..NmfParams::default() };
/// let params = BetaParams { beta: 1.0, iter, clip: 0.0 };
/// let mut work = vec![0u8; beta::fit_workspace::<f64>([views[0].shape()], k, &params)?];
/// let (mut u, mut v) = (vec![0.0; m * k], vec![0.0; k * n]);
/// let report = beta::fit(&views[..], k, &params, &mut [&mut u[..]][..], &mut v, &mut work, None)?;
/// assert!(report.objective.total < report.initial.total);
/// # Ok::<(), mvnmf::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn fit<T: Real, VS: ViewSet<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
    views: &VS,
    k: usize,
    params: &BetaParams,
    u: &mut F,
    v: &mut [T],
    work: &mut [u8],
    monitor: Option<Monitor<'_>>,
) -> Result<Report, Error> {
    let none: &[Option<&[u8]>] = &[];
    fit_masked(views, none, k, params, u, v, work, monitor)
}

/// The per-view masks of [`fit_masked`]: `count()` 0 (no masks) or one per
/// view; `mask(i)` `None` (all observed) or `M_i × N` bytes.
pub trait ViewMasks {
    /// Number of masks (0, or the number of views).
    fn count(&self) -> usize;
    /// The mask of view `i < count()`.
    fn mask(&self, i: usize) -> Option<&[u8]>;
}

impl ViewMasks for [Option<&[u8]>] {
    fn count(&self) -> usize {
        self.len()
    }
    fn mask(&self, i: usize) -> Option<&[u8]> {
        self[i]
    }
}

/// [`fit`] with **missing values** (issue 17, item 3): `masks` empty (every
/// entry observed) or one per view, `None` (all observed) or `M_v × N` bytes
/// (column-major, 1 observed, 0 missing). Unobserved entries do not count in
/// the loss — `Σ_v Σ_ij w_ij d_β(x_ij | y_ij)` — and are never read for
/// anything (their values may be anything, NaN included): the weighted MM
/// updates `U ← U ∘ [((W∘X∘Y^(β−2)) Vᵀ) / ((W∘Y^(β−1)) Vᵀ)]^γ` (and alike for
/// `V`), monotone for every `β ∈ [0, 2]` (β = 2: weighted Frobenius NMF). The
/// random start's scales come from the observed entries' means; the data scale
/// from the largest observed entry. A mask with every entry observed is no
/// mask (the same bits as [`fit`]). Masks on CSC views: [`Error::BadParameter`]
/// (a CSC view's missing entries would be its unstored ones — not built);
/// a mask byte other than 0/1: [`Error::BadParameter`].
///
/// ```
/// use mvnmf::models::beta::{self, BetaParams};
/// use mvnmf::{Dense, View};
///
/// // 4 x 6 data with two entries missing (NaN: never read); Frobenius (β = 2).
/// let (m, n, k) = (4, 6, 2);
/// let mut x: Vec<f64> = (0..m * n).map(|i| (i * 5 % 7 + 1) as f64).collect();
/// let mut mask = vec![1u8; m * n];
/// for i in [3, 17] {
///     x[i] = f64::NAN;
///     mask[i] = 0;
/// }
/// let views = [View::from(Dense::new(&x, m, n, m)?)];
/// let params = BetaParams { beta: 2.0, clip: 0.0, ..BetaParams::default() };
/// let mut work = vec![0u8; beta::fit_workspace::<f64>([views[0].shape()], k, &params)?];
/// let (mut u, mut v) = (vec![0.0; m * k], vec![0.0; k * n]);
/// let masks: &[Option<&[u8]>] = &[Some(&mask[..])];
/// let us = &mut [&mut u[..]][..];
/// let report = beta::fit_masked(&views[..], masks, k, &params, us, &mut v, &mut work, None)?;
/// assert!(report.objective.total.is_finite() && report.objective.total < report.initial.total);
/// # Ok::<(), mvnmf::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn fit_masked<
    T: Real,
    VS: ViewSet<T> + ?Sized,
    M: ViewMasks + ?Sized,
    F: FactorsMut<T> + ?Sized,
>(
    views: &VS,
    masks: &M,
    k: usize,
    params: &BetaParams,
    u: &mut F,
    v: &mut [T],
    work: &mut [u8],
    monitor: Option<Monitor<'_>>,
) -> Result<Report, Error> {
    params.validate()?;
    let r = req((0..views.count()).map(|i| views.shape(i)), k)?;
    let h = views.count();
    let n = views.shape(0).cols;
    if u.count() != h || Some(v.len()) != k.checked_mul(n) {
        return Err(Error::DimensionMismatch);
    }
    for i in 0..h {
        if Some(u.get(i).len()) != views.shape(i).rows.checked_mul(k) {
            return Err(Error::DimensionMismatch);
        }
    }
    let beta = params.beta;
    if masks.count() != 0 && masks.count() != h {
        return Err(Error::DimensionMismatch);
    }
    let given = |i: usize| -> Option<&[u8]> {
        if masks.count() == 0 {
            None
        } else {
            masks.mask(i)
        }
    };
    // An all-observed mask is no mask.
    let mask_of = |i: usize| -> Option<&[u8]> { given(i).filter(|w| w.iter().any(|&b| b != 1)) };
    for i in 0..h {
        let x = views.view(i);
        if let Some(w) = given(i) {
            if w.len() != x.rows() * n {
                return Err(Error::DimensionMismatch);
            }
            if w.iter().any(|&b| b > 1) {
                return Err(Error::BadParameter);
            }
        }
        match (mask_of(i), x) {
            (Some(_), View::Csc(_)) => return Err(Error::BadParameter),
            (Some(w), View::Dense(d)) => {
                let m = d.mat();
                // `w` is `rows × n` (checked above): column j is chunk j.
                for (j, wj) in w.chunks_exact(m.rows().max(1)).enumerate() {
                    for (a, &wa) in wj.iter().enumerate() {
                        if wa == 1 {
                            let xv = m.at(a, j);
                            if !xv.is_finite() {
                                return Err(Error::NonFiniteInput);
                            }
                            if xv < T::ZERO {
                                return Err(Error::NegativeInput);
                            }
                        }
                    }
                }
            }
            (None, _) => x.check_values(true)?,
        }
        if let View::Csc(_) = x {
            if beta != 1.0 {
                return Err(Error::BadParameter);
            }
        }
        if beta <= 0.0 {
            if let View::Dense(d) = x {
                let m = d.mat();
                let w = mask_of(i);
                for j in 0..n {
                    for a in 0..m.rows() {
                        let seen = w.is_none_or(|w| w.get(a + j * m.rows()) == Some(&1));
                        if seen && m.at(a, j) == T::ZERO {
                            return Err(Error::BadParameter);
                        }
                    }
                }
            }
        }
    }
    if params.iter.init == Init::Given {
        for i in 0..h {
            crate::data::check_values(u.get(i), true)?;
        }
        crate::data::check_values(v, true)?;
    }
    r.check(work.len())?;
    let mut st = Stack::new(work);
    let mmax = (0..h).map(|i| views.shape(i).rows).max().unwrap_or(0);
    let msum: usize = (0..h).map(|i| views.shape(i).rows).sum();
    // The iterates in f64 (module docs, "Precision"): Ũ⁽ᵛ⁾ stacked, then V.
    let ub: &mut [f64] = st.take_matrix(msum, k)?;
    let vb: &mut [f64] = st.take_matrix(k, n)?;
    let y: &mut [f64] = st.take_matrix(mmax, n)?;
    let rr: &mut [f64] = st.take_matrix(mmax, n)?;
    let nu: &mut [f64] = st.take_matrix(mmax, k)?;
    let du: &mut [f64] = st.take_matrix(mmax, k)?;
    let nv: &mut [f64] = st.take_matrix(k, n)?;
    let dv: &mut [f64] = st.take_matrix(k, n)?;
    let sw: &mut [f64] = st.take(3 * h)?;
    // Checked splits: `3 * h` is proven to fit by the workspace query, not by the optimiser
    // (the link-time no-panic proof, scripts/panic_sites.sh).
    let (sv, wv) = sw.split_at_mut_checked(h).ok_or(Error::Internal)?;
    let (wv, cv) = wv.split_at_mut_checked(h).ok_or(Error::Internal)?;
    let mut sc = st.rest();
    // View i's block of `ub`: rows `off(i) .. off(i) + M_i` of the stacked bases.
    let off = |i: usize| k * (0..i).map(|j| views.shape(j).rows).sum::<usize>();
    let span = |i: usize| off(i)..off(i) + k * views.shape(i).rows;
    // The magnitude rule (module docs): view v is read as s_v·X⁽ᵛ⁾, its
    // divergence weighted by ω_v; refused here if out of range (nothing
    // written yet).
    let back = view_scales::<T, _>(views, &mask_of, beta, sv, wv)?;
    let (clip, gamma) = (params.clip.max(floor()), params.gamma());
    let ctx = Ctx {
        beta,
        clip,
        low: floor(),
        k,
        n,
        s: (1.0, 1.0),
    };
    // View i's floor of Y (module docs, "The clip"): `clip`, but at most the
    // view's smallest positive scaled entry and at least `floor`, times the
    // view's weight ω_v.
    for (i, c) in cv.iter_mut().enumerate() {
        let s = split(sv.get(i).copied().unwrap_or(0.0));
        let x_min = min_positive(&views.view(i), mask_of(i)) * s.0 * s.1;
        let w = wv.get(i).copied().unwrap_or(1.0);
        *c = params.clip.min(x_min).max(floor()) * w;
    }
    let weight = |i: usize| wv.get(i).copied().unwrap_or(1.0);
    let at = |i: usize| Ctx {
        s: split(sv.get(i).copied().unwrap_or(0.0)),
        clip: cv.get(i).copied().unwrap_or(clip),
        low: floor() * wv.get(i).copied().unwrap_or(1.0),
        ..ctx
    };
    let objective = |d: f64| {
        let d = back.apply(d);
        Objective::new(d, &[(Term::Divergence, d)])
    };
    match params.iter.init {
        Init::Random => {
            // The views' means at their scales (the same bits as scaling the
            // plain means, where those are representable).
            let mean = |i: usize| scaled_mean(&views.view(i), mask_of(i), &|x| at(i).sx(x));
            random_start_with(&mean, k, &params.iter, 1.0, u, v);
            for i in 0..h {
                copy_in(u.get(i), ub.part_mut(span(i))?, 1.0);
            }
            copy_in(v, vb, 1.0);
        }
        Init::Given => {
            for i in 0..h {
                copy_in(u.get(i), ub.part_mut(span(i))?, 1.0);
            }
            copy_in(v, vb, 1.0);
            // The start's objective must be finite, and the scaled start
            // within 2^±(MAX_EXP/4) of the data's scale (read only: Y in the
            // caller's units times s_v, exactly Ũ V).
            let band = libm::ldexp(1.0, T::MAX_EXP / 4);
            let within = |a: f64| a <= band;
            let mut total = 0.0;
            let mut fits = vb.iter().all(|&b| within(b));
            for i in 0..h {
                let (c, x) = (at(i), views.view(i));
                let ui = ub.part(span(i))?;
                let d = c.divergence(&x, mask_of(i), ui, vb, y, c.s, &mut sc)?;
                total += weight(i) * d;
                // The largest s_v (U V)_ij over the observed entries: from `y`
                // for a dense view (`divergence` wrote U V there), at the
                // stored entries for a CSC one (which forms no M × N product).
                let ymax = c.sx(c.max_product(&x, ui, vb, y));
                let data = max_entry(&x, mask_of(i)) > 0.0;
                fits &= ui.iter().all(|&b| within(c.sx(b)));
                fits &= within(ymax) && (!data || within(1.0 / ymax));
            }
            if !fits || !objective(total).total.is_finite() {
                return Err(Error::BadParameter);
            }
            for i in 0..h {
                let c = at(i);
                ub.part_mut(span(i))?.iter_mut().for_each(|x| *x = c.sx(*x));
            }
        }
    }
    let mut total = 0.0;
    for i in 0..h {
        let ui = ub.part(span(i))?;
        let d = at(i).divergence(&views.view(i), mask_of(i), ui, vb, y, (1.0, 1.0), &mut sc)?;
        total += weighted(weight(i), d);
    }
    let initial = objective(total);
    // The entries' caps (`apply`): in `f32`, what rounds to a finite float once
    // `U` is taken back to its view's scale (`2^−s_v`) with a margin of two
    // binades; in `f64`, none.
    let narrow = T::MAX_EXP < f64::MAX_EXP;
    let top = T::MAX_EXP - 2;
    let cap_u = |i: usize| {
        if narrow {
            libm::ldexp(1.0, top + sv.get(i).copied().unwrap_or(0.0) as i32)
        } else {
            f64::INFINITY
        }
    };
    let cap_v = if narrow {
        libm::ldexp(1.0, top)
    } else {
        f64::INFINITY
    };
    let report = run(
        params.iter.max_iter,
        params.iter.stopping(),
        initial,
        monitor,
        |_it| {
            // U-steps, view by view (ω_v cancels in a view's own ratio).
            for i in 0..h {
                let x = views.view(i);
                let m = x.rows();
                let ui = ub.part_mut(span(i))?;
                let (num, den) = (nu.part_mut(..m * k)?, du.part_mut(..m * k)?);
                at(i).u_terms(&x, mask_of(i), ui, vb, y, rr, num, den, &mut sc)?;
                apply(ui, num, den, clip, gamma, cap_u(i));
            }
            // The V-step: the views' terms added up, weighted by ω_v.
            nv.fill(0.0);
            dv.fill(0.0);
            for i in 0..h {
                let x = views.view(i);
                let ui = ub.part(span(i))?;
                at(i).v_terms(&x, mask_of(i), ui, vb, y, rr, nv, dv, weight(i), &mut sc)?;
            }
            apply(vb, nv, dv, clip, gamma, cap_v);
            let mut total = 0.0;
            for i in 0..h {
                let ui = ub.part(span(i))?;
                let d =
                    at(i).divergence(&views.view(i), mask_of(i), ui, vb, y, (1.0, 1.0), &mut sc)?;
                total += weighted(weight(i), d);
            }
            Ok(objective(total))
        },
    );
    // The iterates out, U back to the data's scale (also after a cancel).
    for i in 0..h {
        let inv = libm::ldexp(1.0, -(sv.get(i).copied().unwrap_or(0.0) as i32));
        copy_out(ub.part(span(i))?, u.get_mut(i), inv);
    }
    copy_out(vb, v, 1.0);
    let outputs_finite = factors_finite(u) && all_finite(v);
    finite_report(report?, outputs_finite)
}

/// `to[i] = from[i]·c` in f64 (`c` a power of two or 1).
fn copy_in<T: Real>(from: &[T], to: &mut [f64], c: f64) {
    for (t, &f) in to.iter_mut().zip(from) {
        *t = f.to_f64() * c;
    }
}

/// `to[i] = from[i]·c` rounded to `T` (`c` a power of two or 1: exact for `f64`).
fn copy_out<T: Real>(from: &[f64], to: &mut [T], c: f64) {
    for (t, &f) in to.iter_mut().zip(from) {
        *t = T::from_f64(if c == 1.0 { f } else { f * c });
    }
}

/// `ω·d`, with `ω = 1` (every view at the largest view's scale) exactly `d`.
fn weighted(w: f64, d: f64) -> f64 {
    if w == 1.0 {
        d
    } else {
        w * d
    }
}

/// The factor that takes the scaled problem's objective back to the caller's
/// units: `c^β` with `c = 2^−k` the largest view's scale, as one
/// multiplication where `c^β` is a normal number, else as two by `c^(β/2)`
/// (monotone either way).
#[derive(Clone, Copy)]
struct Back {
    one: f64,
    half: f64,
}

impl Back {
    fn apply(&self, d: f64) -> f64 {
        if self.one.is_normal() {
            d * self.one
        } else {
            d * self.half * self.half
        }
    }
}

/// Exponent bound of the entries in precision `T`: a view whose largest entry
/// is above `2^(MAX_EXP − 25)` (`2^999` for `f64`, `2^103` for `f32`) is refused.
fn max_entry_exp<T: Real>() -> i32 {
    T::MAX_EXP - 25
}

/// `log₂` of the largest `Σ_v Σ_ij x_ij^β` accepted (for `β = 2` this is the
/// factorization family's `½ Σ‖X‖²_F ≤ 2^999`).
const MAX_LOG2_SIZE: f64 = 1000.0;

/// `log₂` of the smallest view weight `ω_v` accepted for `β ∈ (0, 2)`: views
/// more than `2^(256/β)` apart (the largest entries' powers of two) are refused.
const MAX_LOG2_WEIGHT: f64 = 256.0;

/// Fills the per-view scales' exponents `k_v` in `sv` (`s_v = 2^k_v`, view
/// `v`'s largest observed entry times `s_v` in `[1, 2)`, `k_v ≤ 1075`; an
/// all-zero view gets the largest view's) and weights `ω_v = (s_min/s_v)^β ≤ 1` (rounded to `T`),
/// checks the magnitude rule ([`Error::InputTooLarge`]) and returns the
/// objective's way back to the caller's units.
fn view_scales<'m, T: Real, VS: ViewSet<T> + ?Sized>(
    views: &VS,
    mask_of: &dyn Fn(usize) -> Option<&'m [u8]>,
    beta: f64,
    sv: &mut [f64],
    wv: &mut [f64],
) -> Result<Back, Error> {
    let h = views.count();
    let mut kmin: Option<i32> = None;
    // Exponents first (in `wv`, as f64 integers; NaN for an all-zero view).
    for (i, e) in wv.iter_mut().enumerate().take(h) {
        let x_max = max_entry(&views.view(i), mask_of(i));
        if x_max > 0.0 {
            let (_, ex) = libm::frexp(x_max);
            if ex > max_entry_exp::<T>() {
                return Err(Error::InputTooLarge);
            }
            let kv = 1 - ex;
            kmin = Some(kmin.map_or(kv, |a| a.min(kv)));
            *e = kv as f64;
        } else {
            *e = f64::NAN;
        }
    }
    let kmin = kmin.unwrap_or(0);
    for (s, e) in sv.iter_mut().zip(wv.iter_mut()) {
        let kv = if e.is_nan() { kmin } else { *e as i32 };
        *s = f64::from(kv);
        *e = f64::from(kv);
    }
    // Σ_v Σ_ij x_ij^β = Σ_v 2^(−β k_v) σ_v, σ_v = Σ_ij (s_v x_ij)^β (β = 0:
    // the number of entries, always accepted).
    if beta > 0.0 {
        let mut logs = (f64::NEG_INFINITY, 0.0f64); // (t, Σ 2^(L_v − t))
        for (i, &kv) in sv.iter().enumerate().take(h) {
            let (a, b) = split(kv);
            let sigma = power_sum(&views.view(i), mask_of(i), &|x| x * a * b, beta);
            if sigma > 0.0 {
                let l = libm::log2(sigma) - beta * kv;
                let (t, acc) = logs;
                logs = if l > t {
                    (l, acc * libm::exp2(t - l) + 1.0)
                } else {
                    (t, acc + libm::exp2(l - t))
                };
            }
        }
        let (t, acc) = logs;
        if acc > 0.0 && t + libm::log2(acc) > MAX_LOG2_SIZE {
            return Err(Error::InputTooLarge);
        }
    }
    for e in wv.iter_mut().take(h) {
        let d = f64::from(kmin) - *e; // ≤ 0
        let w = if d == 0.0 {
            1.0
        } else {
            libm::pow(2.0, beta * d)
        };
        // For β ∈ (0, 2) a light view's floor of Y is `ω_v·floor`; below
        // 2^−MAX_LOG2_WEIGHT, X ∘ Y^(β−2) at that floor could overflow.
        if beta > 0.0 && beta < 2.0 && beta * d < -MAX_LOG2_WEIGHT {
            return Err(Error::InputTooLarge);
        }
        *e = w;
    }
    let one = if kmin < f64::MAX_EXP {
        libm::pow(libm::ldexp(1.0, kmin), -beta)
    } else {
        libm::pow(2.0, -beta * f64::from(kmin))
    };
    Ok(Back {
        one,
        half: libm::pow(2.0, -beta * f64::from(kmin) / 2.0),
    })
}

/// `2^k` as two factors, each finite (`k ≤ 1075`: the smallest subnormal's
/// scale): `(2^k, 1)` up to `2^1023`, else `(2^1023, 2^(k − 1023))`.
fn split(k: f64) -> (f64, f64) {
    let k = k as i32;
    let top = f64::MAX_EXP - 1;
    if k <= top {
        (libm::ldexp(1.0, k), 1.0)
    } else {
        (libm::ldexp(1.0, top), libm::ldexp(1.0, k - top))
    }
}

/// `Σ (s·x)^β` over a validated view's observed entries (`β > 0`; `sx` the
/// scaling).
fn power_sum<T: Real>(
    x: &View<'_, T>,
    w: Option<&[u8]>,
    sx: &dyn Fn(f64) -> f64,
    beta: f64,
) -> f64 {
    let p = |a: f64| {
        let a = sx(a);
        if beta == 1.0 {
            a
        } else if beta == 2.0 {
            a * a
        } else {
            libm::pow(a, beta)
        }
    };
    match x {
        View::Dense(d) => {
            let m = d.mat();
            let mut acc = 0.0f64;
            for j in 0..m.cols() {
                for i in 0..m.rows() {
                    if w.is_none_or(|w| w.get(i + j * m.rows()) == Some(&1)) {
                        acc += p(m.at(i, j).to_f64());
                    }
                }
            }
            acc
        }
        View::Csc(c) => c.values.iter().map(|a| p(a.to_f64())).sum(),
    }
}

/// The smallest floor of `Y` even with `clip = 0` (times the view's weight):
/// `2^(−MAX_EXP/4)` of `f64`, `2^−256`, in both precisions (the data are scaled so that each
/// view's largest entry lies in `[1, 2)`, and a `Y` entry this small arises
/// only where a row of `U` or a column of `V` nearly vanishes): with the
/// weight rule (`ω_v ≥ 2^−256`, and `ω_v = 2^(−β d)` with `d ≤ 2100` the views'
/// binary distance) keeps `X ∘ Y^(β−2)` below `2^962`, so it stays finite.
fn floor() -> f64 {
    libm::ldexp(1.0, -f64::MAX_EXP / 4)
}

/// The largest observed entry of a validated view.
fn max_entry<T: Real>(x: &View<'_, T>, w: Option<&[u8]>) -> f64 {
    match x {
        View::Dense(d) => {
            let m = d.mat();
            let mut a = 0.0f64;
            for j in 0..m.cols() {
                for i in 0..m.rows() {
                    if w.is_none_or(|w| w.get(i + j * m.rows()) == Some(&1)) {
                        a = a.max(m.at(i, j).to_f64());
                    }
                }
            }
            a
        }
        View::Csc(c) => c.values.iter().fold(0.0f64, |a, &x| a.max(x.to_f64())),
    }
}

/// The smallest positive observed entry of a validated view (`+∞` if none).
fn min_positive<T: Real>(x: &View<'_, T>, w: Option<&[u8]>) -> f64 {
    let pos = |a: f64, b: f64| if b > 0.0 { a.min(b) } else { a };
    match x {
        View::Dense(d) => {
            let m = d.mat();
            let mut a = f64::INFINITY;
            for j in 0..m.cols() {
                for i in 0..m.rows() {
                    if w.is_none_or(|w| w.get(i + j * m.rows()) == Some(&1)) {
                        a = pos(a, m.at(i, j).to_f64());
                    }
                }
            }
            a
        }
        View::Csc(c) => c
            .values
            .iter()
            .fold(f64::INFINITY, |a, &x| pos(a, x.to_f64())),
    }
}

/// The mean of a view's observed entries times `s` (0 when none is), summed
/// in the order of [`View::sum`] from the scaled values: the same bits as
/// `s·mean` where that is representable, and finite where it is not.
fn scaled_mean<T: Real>(x: &View<'_, T>, w: Option<&[u8]>, sx: &dyn Fn(f64) -> f64) -> f64 {
    match (x, w) {
        (View::Dense(d), Some(w)) => {
            let m = d.mat();
            let (mut acc, mut c) = (0.0f64, 0usize);
            for j in 0..m.cols() {
                for i in 0..m.rows() {
                    if w.get(i + j * m.rows()) == Some(&1) {
                        acc += sx(m.at(i, j).to_f64());
                        c += 1;
                    }
                }
            }
            if c > 0 {
                acc / c as f64
            } else {
                0.0
            }
        }
        _ => {
            let f = |xs: &[T]| xs.iter().map(|a| sx(a.to_f64())).sum::<f64>();
            let sum: f64 = match x {
                View::Dense(d) => (0..d.mat().cols()).map(|j| f(d.col(j))).sum(),
                View::Csc(c) => f(c.values),
            };
            sum / (x.rows() as f64 * x.cols() as f64)
        }
    }
}

/// `a ← a ∘ (num / den)^γ` (a zero denominator counts as `clip`, as
/// scikit-learn's `EPSILON`; with `clip = 0` the entry keeps its value).
///
/// `cap`: the largest value an entry may take (infinite in `f64`, where the
/// bits are the plain update's). In `f32` a masked fit's minimiser can hold an
/// entry beyond float's range (a row observed only in columns where the shared
/// `V` is tiny: seeds 0xd48fc61, 0xe05621e of issue 31): the entry is held at
/// the cap, the largest value that rounds to a finite float. The MM surrogate
/// is separable and unimodal in each entry, so its minimiser over `[0, cap]`
/// is the clamped one and the objective still never rises.
fn apply(a: &mut [f64], num: &[f64], den: &[f64], clip: f64, gamma: f64, cap: f64) {
    for ((x, &p), &q) in a.iter_mut().zip(num).zip(den) {
        let q = if q == 0.0 { clip } else { q };
        if q > 0.0 {
            let ratio = p / q;
            let f = if gamma == 1.0 {
                ratio
            } else {
                libm::pow(ratio, gamma)
            };
            let y = *x * f;
            // Not `min`: a NaN stays NaN (the finite-output check reports it).
            *x = if y > cap { cap } else { y };
        }
    }
}

#[derive(Clone, Copy)]
struct Ctx {
    beta: f64,
    /// The floor of `Y` where `x = 0` (module docs, "The clip"): the view's
    /// `ω_v·max(min(clip, x̃_min), 2^−256)`.
    clip: f64,
    /// The floor of `Y` where `x > 0`: `ω_v·2^−256` (the exact MM update's).
    low: f64,
    k: usize,
    n: usize,
    /// The view's data scale `s_v` (a power of two) as two finite factors
    /// ([`split`]): every `x` is read as `s·x`.
    s: (f64, f64),
}

impl Ctx {
    /// `s_v·x` (exact: a power of two; the second factor is 1 but for
    /// subnormal data).
    fn sx(&self, x: f64) -> f64 {
        x * self.s.0 * self.s.1
    }

    /// `Y = U V` (`m × n`) into `y`.
    fn product(
        &self,
        m: usize,
        u: &[f64],
        v: &[f64],
        y: &mut [f64],
        sc: &mut Stack<'_>,
    ) -> Result<(), Error> {
        gemm_into(
            MatRef::col_major(u, m, self.k)?,
            MatRef::col_major(v, self.k, self.n)?,
            y.part_mut(..m * self.n)?,
            sc,
        )
    }

    /// `y` at a stored entry of a CSC view: `Σ_l u[i, l] v[l, j]` (`vj`
    /// column j of `v`).
    fn at(&self, m: usize, u: &[f64], vj: &[f64], i: usize) -> f64 {
        let ui = |l: usize| u.get(i + l * m).copied().unwrap_or(0.0);
        vj.iter().enumerate().map(|(l, &b)| ui(l) * b).sum()
    }

    /// The largest `(U V)_ij`: of a dense view every entry of `y` (which
    /// holds `U V` after [`Ctx::divergence`]); of a CSC view the stored
    /// entries', from the factors (`O(nnz·K)`; `y` is not read).
    fn max_product<T: Real>(&self, x: &View<'_, T>, u: &[f64], v: &[f64], y: &[f64]) -> f64 {
        match x {
            View::Dense(d) => {
                let mn = d.mat().rows() * self.n;
                let ys = y.get(..mn).unwrap_or(&[]);
                ys.iter().fold(0.0f64, |a, &b| a.max(b))
            }
            View::Csc(c) => {
                let mut a = 0.0f64;
                for j in 0..self.n {
                    let (rows, _) = c.col(j);
                    let vj = self.col(v, j);
                    for &i in rows {
                        a = a.max(self.at(x.rows(), u, vj, i));
                    }
                }
                a
            }
        }
    }

    /// Column `j` of `v` (`k × n`; empty past the end, which validation excludes).
    fn col<'v, T>(&self, v: &'v [T], j: usize) -> &'v [T] {
        v.get(j * self.k..(j + 1) * self.k).unwrap_or(&[])
    }

    /// `r = x · y^(β−2)` with `y` floored at `low` for `β < 2` (`x > 0`: the
    /// clip acts only where `x = 0`, where `r = 0` anyway).
    fn ratio(&self, x: f64, y: f64) -> f64 {
        let x = self.sx(x);
        let y = if self.beta < 2.0 { y.max(self.low) } else { y };
        if x == 0.0 {
            0.0
        } else if self.beta == 1.0 {
            x / y
        } else if self.beta == 0.0 {
            x / (y * y)
        } else if self.beta == 2.0 {
            x
        } else {
            x * libm::pow(y, self.beta - 2.0)
        }
    }

    /// `y^(β−1)` with `y` floored for `β < 1`: at `clip` where `x = 0`, at
    /// `low` where `x > 0` (module docs, "The clip").
    fn power(&self, x: f64, y: f64) -> f64 {
        if self.beta == 2.0 {
            y
        } else {
            let c = if x == 0.0 { self.clip } else { self.low };
            let y = if self.beta < 1.0 { y.max(c) } else { y };
            libm::pow(y, self.beta - 1.0)
        }
    }

    /// Writes `y = U V`, `rr = X ∘ Y^(β−2)` and overwrites `y` with `Y^(β−1)`
    /// (dense views; `β ≠ 1` or dense).
    /// With a mask `w`, unobserved entries get `rr = 0` and `y = 0` (and for
    /// `β = 1` the observed ones `y = 1`: then `y Vᵀ` is the masked `1 Vᵀ`).
    #[allow(clippy::too_many_arguments)]
    fn dense_terms<T: Real>(
        &self,
        x: MatRef<'_, T>,
        w: Option<&[u8]>,
        u: &[f64],
        v: &[f64],
        y: &mut [f64],
        rr: &mut [f64],
        sc: &mut Stack<'_>,
    ) -> Result<(), Error> {
        let m = x.rows();
        self.product(m, u, v, y, sc)?;
        // Column j of y, rr (and w) is chunk j (`m × n`, column-major).
        let m1 = m.max(1);
        let cols = y.chunks_exact_mut(m1).zip(rr.chunks_exact_mut(m1));
        for (j, (yj, rj)) in cols.take(self.n).enumerate() {
            let wj = w.map(|w| w.get(j * m..(j + 1) * m).unwrap_or(&[]));
            for (i, (yt, rt)) in yj.iter_mut().zip(rj.iter_mut()).enumerate() {
                if wj.is_some_and(|w| w.get(i) == Some(&0)) {
                    *rt = 0.0;
                    *yt = 0.0;
                    continue;
                }
                let (xx, yy) = (x.at(i, j).to_f64(), *yt);
                *rt = self.ratio(xx, yy);
                if self.beta != 1.0 {
                    *yt = self.power(xx, yy);
                } else if w.is_some() {
                    *yt = 1.0;
                }
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn u_terms<T: Real>(
        &self,
        x: &View<'_, T>,
        w: Option<&[u8]>,
        u: &[f64],
        v: &[f64],
        y: &mut [f64],
        rr: &mut [f64],
        nu: &mut [f64],
        du: &mut [f64],
        sc: &mut Stack<'_>,
    ) -> Result<(), Error> {
        let (m, k, n) = (x.rows(), self.k, self.n);
        match x {
            View::Dense(d) => {
                self.dense_terms(d.mat(), w, u, v, y, rr, sc)?;
                let vt = MatRef::col_major(v, k, n)?.t();
                gemm_into(MatRef::col_major(rr.part(..m * n)?, m, n)?, vt, nu, sc)?;
                if self.beta == 1.0 && w.is_none() {
                    self.row_sums_of_v(v, m, du);
                } else {
                    gemm_into(MatRef::col_major(y.part(..m * n)?, m, n)?, vt, du, sc)?;
                }
            }
            View::Csc(c) => {
                // β = 1 (checked): the ratio at the stored entries only.
                nu.fill(0.0);
                for j in 0..n {
                    let ((rows, vals), vj) = (c.col(j), self.col(v, j));
                    for (&i, &xv) in rows.iter().zip(vals) {
                        let r = self.ratio(xv.to_f64(), self.at(m, u, vj, i));
                        // Row i of nu (`m × k`; `i < m` validated).
                        for (l, &vl) in vj.iter().enumerate() {
                            if let Some(d) = nu.get_mut(i + l * m) {
                                *d += r * vl;
                            }
                        }
                    }
                }
                self.row_sums_of_v(v, m, du);
            }
        }
        Ok(())
    }

    /// `du[i, l] = Σ_j v[l, j]` (KL's U denominator, `1 Vᵀ`).
    fn row_sums_of_v(&self, v: &[f64], m: usize, du: &mut [f64]) {
        for (l, dl) in du.chunks_exact_mut(m.max(1)).take(self.k).enumerate() {
            let vl = v.iter().skip(l).step_by(self.k.max(1)).take(self.n);
            let s: f64 = vl.sum();
            dl.fill(s);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn v_terms<T: Real>(
        &self,
        x: &View<'_, T>,
        w: Option<&[u8]>,
        u: &[f64],
        v: &[f64],
        y: &mut [f64],
        rr: &mut [f64],
        nv: &mut [f64],
        dv: &mut [f64],
        wt: f64,
        sc: &mut Stack<'_>,
    ) -> Result<(), Error> {
        let (m, k, n) = (x.rows(), self.k, self.n);
        let ut = MatRef::col_major(u, m, k)?.t();
        match x {
            View::Dense(d) => {
                self.dense_terms(d.mat(), w, u, v, y, rr, sc)?;
                gemm(
                    wt,
                    ut,
                    MatRef::col_major(rr.part(..m * n)?, m, n)?,
                    1.0,
                    MatMut::col_major(nv, k, n)?,
                    sc,
                )?;
                if self.beta == 1.0 && w.is_none() {
                    self.col_sums_of_u(u, m, wt, dv);
                } else {
                    gemm(
                        wt,
                        ut,
                        MatRef::col_major(y.part(..m * n)?, m, n)?,
                        1.0,
                        MatMut::col_major(dv, k, n)?,
                        sc,
                    )?;
                }
            }
            View::Csc(c) => {
                for (j, nvj) in nv.chunks_exact_mut(k.max(1)).take(n).enumerate() {
                    let ((rows, vals), vj) = (c.col(j), self.col(v, j));
                    for (&i, &xv) in rows.iter().zip(vals) {
                        let r = self.ratio(xv.to_f64(), self.at(m, u, vj, i)) * wt;
                        for (l, d) in nvj.iter_mut().enumerate() {
                            if let Some(&ul) = u.get(i + l * m) {
                                *d += r * ul;
                            }
                        }
                    }
                }
                self.col_sums_of_u(u, m, wt, dv);
            }
        }
        Ok(())
    }

    /// `dv[l, j] += ω Σ_i u[i, l]` (KL's V denominator, `ω Uᵀ 1`).
    fn col_sums_of_u(&self, u: &[f64], m: usize, wt: f64, dv: &mut [f64]) {
        for (l, ul) in u.chunks_exact(m.max(1)).take(self.k).enumerate() {
            let s = ul.iter().sum::<f64>() * wt;
            for j in 0..self.n {
                if let Some(d) = dv.get_mut(l + j * self.k) {
                    *d += s;
                }
            }
        }
    }

    /// `D_β(s·X | ys·U V)`, exact (no clipping); `ys` (two factors, as `s`) is
    /// 1 in the iterations (`U` at the view's scale) and `s` for a given start
    /// in the caller's units.
    #[allow(clippy::too_many_arguments)]
    fn divergence<T: Real>(
        &self,
        x: &View<'_, T>,
        w: Option<&[u8]>,
        u: &[f64],
        v: &[f64],
        y: &mut [f64],
        ys: (f64, f64),
        sc: &mut Stack<'_>,
    ) -> Result<f64, Error> {
        let (m, n) = (x.rows(), self.n);
        let yv = |a: f64| if ys == (1.0, 1.0) { a } else { a * ys.0 * ys.1 };
        match x {
            View::Dense(d) => {
                self.product(m, u, v, y, sc)?;
                let xm = d.mat();
                let mut s = 0.0;
                for (j, yj) in y.chunks_exact(m.max(1)).take(n).enumerate() {
                    let wj = w.map(|w| w.get(j * m..(j + 1) * m).unwrap_or(&[]));
                    for (i, &yt) in yj.iter().enumerate() {
                        if wj.is_some_and(|w| w.get(i) == Some(&0)) {
                            continue;
                        }
                        s += d_beta(self.beta, self.sx(xm.at(i, j).to_f64()), yv(yt));
                    }
                }
                Ok(s)
            }
            View::Csc(c) => {
                // β = 1: Σ_stored (x log(x/y) − x) + Σ_all y, Σ_all y = Σ_l (Σ_i u_il)(Σ_j v_lj).
                let mut s = 0.0;
                for j in 0..n {
                    let ((rows, vals), vj) = (c.col(j), self.col(v, j));
                    for (&i, &x) in rows.iter().zip(vals) {
                        let xv = self.sx(x.to_f64());
                        if xv > 0.0 {
                            let y = yv(self.at(m, u, vj, i));
                            s += xv * libm::log(xv / y) - xv;
                        }
                    }
                }
                for (l, ul) in u.chunks_exact(m.max(1)).take(self.k).enumerate() {
                    let su: f64 = ul.iter().sum();
                    let vl = v.iter().skip(l).step_by(self.k.max(1)).take(n);
                    let sv: f64 = vl.sum();
                    s += yv(su * sv);
                }
                Ok(s)
            }
        }
    }
}
