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
//! never increases** — exactly so with `clip = 0` (then `Y` is floored at
//! 1e-150 only, on data scaled internally by a power of two so that the
//! largest entry lies in `[1, 2)`: any finite magnitude works, and the factors
//! come back at the data's scale). The default `clip` is
//! scikit-learn's (`float32` epsilon): `Y` below it is raised to it in
//! `X ∘ Y^(β−2)` (for `β < 2`) and in `Y^(β−1)` (for `β < 1`), as scikit-learn
//! does, and a zero denominator becomes `clip`; that keeps the iterates equal
//! to scikit-learn's (the floor acts on the internally scaled data below, so
//! on data far from 1 in size it differs from scikit-learn's absolute one), and
//! it changes nothing where every `y_ij ≥ clip`. The
//! reported objective is always the exact divergence.
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
//! workspace two `max M_v × N` buffers and `O((max M_v + N)·K)`.

use crate::data::{FactorsMut, View, ViewSet, ViewShape};
use crate::error::{Error, Part};
use crate::linalg::mat::{MatMut, MatRef};
use crate::linalg::real::Real;
use crate::linalg::{gemm, gemm_into, gemm_req};
use crate::steps::init::{random_start, random_start_with};
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

fn req<T>(shapes: impl IntoIterator<Item = ViewShape>, k: usize) -> Result<WorkReq, Error> {
    let (mut n, mut mmax, mut h) = (None, 0usize, 0usize);
    for s in shapes {
        if s.rows == 0 || s.cols == 0 {
            return Err(Error::ZeroDimension);
        }
        if *n.get_or_insert(s.cols) != s.cols {
            return Err(Error::DimensionMismatch);
        }
        mmax = mmax.max(s.rows);
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
    Ok(WorkReq::all_of(&[
        WorkReq::matrix::<T>(mmax, n), // Y
        WorkReq::matrix::<T>(mmax, n), // R = X ∘ Y^(β−2)
        WorkReq::matrix::<T>(mmax, k), // U numerator
        WorkReq::matrix::<T>(mmax, k), // U denominator
        WorkReq::matrix::<T>(k, n),    // V numerator
        WorkReq::matrix::<T>(k, n),    // V denominator
        WorkReq::new::<u8>(crate::work::ALIGN),
        gemm_req::<T>(mmax, n, k)
            .or(gemm_req::<T>(mmax, k, n))
            .or(gemm_req::<T>(k, n, mmax)),
    ]))
}

/// Workspace bytes of [`fit`].
pub fn fit_workspace<T>(
    shapes: impl IntoIterator<Item = ViewShape>,
    k: usize,
    params: &BetaParams,
) -> Result<usize, Error> {
    params.validate()?;
    req::<T>(shapes, k)?.bytes()
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
    } else {
        (libm::pow(x, beta) + (beta - 1.0) * libm::pow(y, beta)
            - beta * x * libm::pow(y, beta - 1.0))
            / (beta * (beta - 1.0))
    }
}

/// Fits `X⁽ᵛ⁾ ≈ U⁽ᵛ⁾ V` under the β-divergence (module docs); `u` per view
/// `M_v × K`, `v` `K × N`, column-major. Validation before anything is
/// written: shapes, `k`, options, values (finite, `≥ 0`; no zero for `β ≤ 0`;
/// CSC views only with `β = 1` — [`Error::BadParameter`]), a given start,
/// the workspace. Cancelling returns `Ok` with the last complete iterate.
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
    let r = req::<T>((0..views.count()).map(|i| views.shape(i)), k)?;
    let h = views.count();
    let n = views.shape(0).cols;
    if u.count() != h || v.len() != k * n {
        return Err(Error::DimensionMismatch);
    }
    for i in 0..h {
        if u.get(i).len() != views.shape(i).rows * k {
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
    let y: &mut [T] = st.take_matrix(mmax, n)?;
    let rr: &mut [T] = st.take_matrix(mmax, n)?;
    let nu: &mut [T] = st.take_matrix(mmax, k)?;
    let du: &mut [T] = st.take_matrix(mmax, k)?;
    let nv: &mut [T] = st.take_matrix(k, n)?;
    let dv: &mut [T] = st.take_matrix(k, n)?;
    let mut sc = st.rest();
    // Work on the data times s (a power of two: exact), the largest entry in
    // [1, 2); U times s with it, V as is; D_β(X | UV) = s^−β D_β(sX | sUV).
    let mut x_max = 0.0f64;
    for i in 0..h {
        x_max = x_max.max(max_entry(&views.view(i), mask_of(i)));
    }
    let scale = data_scale(x_max);
    match params.iter.init {
        Init::Random if (0..h).all(|i| mask_of(i).is_none()) => {
            random_start(views, k, &params.iter, scale, u, v)
        }
        Init::Random => {
            let mean = |i: usize| observed_mean(&views.view(i), mask_of(i));
            random_start_with(&mean, k, &params.iter, scale, u, v)
        }
        Init::Given => {
            for i in 0..h {
                u.get_mut(i)
                    .iter_mut()
                    .for_each(|x| *x = T::from_f64(x.to_f64() * scale));
            }
        }
    }
    let (clip, gamma) = (params.clip.max(FLOOR), params.gamma());
    let ctx = Ctx {
        beta,
        clip,
        k,
        n,
        s: scale,
    };
    let back = libm::pow(scale, -beta);
    let objective = |d: f64| {
        let d = d * back;
        Objective::new(d, &[(Term::Divergence, d)])
    };
    let mut total = 0.0;
    for i in 0..h {
        total += ctx.divergence(&views.view(i), mask_of(i), u.get(i), v, y, &mut sc)?;
    }
    let initial = objective(total);
    let report = run(
        params.iter.max_iter,
        params.iter.stopping(),
        initial,
        monitor,
        |_it| {
            // U-steps, view by view.
            for i in 0..h {
                let x = views.view(i);
                let m = x.rows();
                let ui = u.get_mut(i);
                let (num, den) = (nu.part_mut(..m * k)?, du.part_mut(..m * k)?);
                ctx.u_terms(&x, mask_of(i), ui, v, y, rr, num, den, &mut sc)?;
                apply(ui, num, den, clip, gamma);
            }
            // The V-step: the views' terms added up.
            nv.fill(T::ZERO);
            dv.fill(T::ZERO);
            for i in 0..h {
                let x = views.view(i);
                ctx.v_terms(&x, mask_of(i), u.get(i), v, y, rr, nv, dv, &mut sc)?;
            }
            apply(v, nv, dv, clip, gamma);
            let mut total = 0.0;
            for i in 0..h {
                total += ctx.divergence(&views.view(i), mask_of(i), u.get(i), v, y, &mut sc)?;
            }
            Ok(objective(total))
        },
    );
    // U back to the data's scale (also after a cancel).
    let inv = 1.0 / scale;
    for i in 0..h {
        u.get_mut(i)
            .iter_mut()
            .for_each(|x| *x = T::from_f64(x.to_f64() * inv));
    }
    report
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

/// The mean of a dense view's observed entries (0 when none is).
fn observed_mean<T: Real>(x: &View<'_, T>, w: Option<&[u8]>) -> f64 {
    match (x, w) {
        (View::Dense(d), Some(w)) => {
            let m = d.mat();
            let (mut s, mut c) = (0.0f64, 0usize);
            for j in 0..m.cols() {
                for i in 0..m.rows() {
                    if w.get(i + j * m.rows()) == Some(&1) {
                        s += m.at(i, j).to_f64();
                        c += 1;
                    }
                }
            }
            if c > 0 {
                s / c as f64
            } else {
                0.0
            }
        }
        _ => x.sum() / (x.rows() as f64 * x.cols() as f64),
    }
}

/// `a ← a ∘ (num / den)^γ` (a zero denominator counts as `clip`, as
/// scikit-learn's `EPSILON`; with `clip = 0` the entry keeps its value).
fn apply<T: Real>(a: &mut [T], num: &[T], den: &[T], clip: f64, gamma: f64) {
    for ((x, &p), &q) in a.iter_mut().zip(num).zip(den) {
        let q = q.to_f64();
        let q = if q == 0.0 { clip } else { q };
        if q > 0.0 {
            let ratio = p.to_f64() / q;
            let f = if gamma == 1.0 {
                ratio
            } else {
                libm::pow(ratio, gamma)
            };
            *x = T::from_f64(x.to_f64() * f);
        }
    }
}

struct Ctx {
    beta: f64,
    /// The floor of `Y` (module docs): `max(clip, FLOOR)`.
    clip: f64,
    k: usize,
    n: usize,
    /// The data scale (a power of two): every `x` is read as `s·x`.
    s: f64,
}

/// The smallest floor of `Y` even with `clip = 0` (the data are scaled so that
/// their largest entry lies in `[1, 2)`; a `Y` entry is 0 only where a row of
/// `U` or a column of `V` is): keeps `Y^(β−2)` finite.
const FLOOR: f64 = 1e-150;

/// `2^−e` with the largest entry `x_max ∈ [2^(e−1), 2^e)` times it in `[1, 2)`
/// (1 for all-zero data).
fn data_scale(x_max: f64) -> f64 {
    if x_max > 0.0 {
        let (_, e) = libm::frexp(x_max);
        libm::ldexp(1.0, 1 - e)
    } else {
        1.0
    }
}

impl Ctx {
    /// `Y = U V` (`m × n`) into `y`.
    fn product<T: Real>(
        &self,
        m: usize,
        u: &[T],
        v: &[T],
        y: &mut [T],
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
    fn at<T: Real>(&self, m: usize, u: &[T], vj: &[T], i: usize) -> f64 {
        let ui = |l: usize| u.get(i + l * m).map_or(0.0, |a| a.to_f64());
        vj.iter()
            .enumerate()
            .map(|(l, &b)| ui(l) * b.to_f64())
            .sum()
    }

    /// Column `j` of `v` (`k × n`; empty past the end, which validation excludes).
    fn col<'v, T>(&self, v: &'v [T], j: usize) -> &'v [T] {
        v.get(j * self.k..(j + 1) * self.k).unwrap_or(&[])
    }

    /// `r = x · y^(β−2)` with `y` floored at `clip` for `β < 2`.
    fn ratio(&self, x: f64, y: f64) -> f64 {
        let x = x * self.s;
        let y = if self.beta < 2.0 { y.max(self.clip) } else { y };
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

    /// `y^(β−1)` with `y` floored at `clip` for `β < 1`.
    fn power(&self, y: f64) -> f64 {
        if self.beta == 2.0 {
            y
        } else {
            let y = if self.beta < 1.0 { y.max(self.clip) } else { y };
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
        u: &[T],
        v: &[T],
        y: &mut [T],
        rr: &mut [T],
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
                    *rt = T::ZERO;
                    *yt = T::ZERO;
                    continue;
                }
                let yy = yt.to_f64();
                *rt = T::from_f64(self.ratio(x.at(i, j).to_f64(), yy));
                if self.beta != 1.0 {
                    *yt = T::from_f64(self.power(yy));
                } else if w.is_some() {
                    *yt = T::ONE;
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
        u: &[T],
        v: &[T],
        y: &mut [T],
        rr: &mut [T],
        nu: &mut [T],
        du: &mut [T],
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
                nu.fill(T::ZERO);
                for j in 0..n {
                    let ((rows, vals), vj) = (c.col(j), self.col(v, j));
                    for (&i, &xv) in rows.iter().zip(vals) {
                        let r = self.ratio(xv.to_f64(), self.at(m, u, vj, i));
                        // Row i of nu (`m × k`; `i < m` validated).
                        for (l, &vl) in vj.iter().enumerate() {
                            if let Some(d) = nu.get_mut(i + l * m) {
                                *d += T::from_f64(r * vl.to_f64());
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
    fn row_sums_of_v<T: Real>(&self, v: &[T], m: usize, du: &mut [T]) {
        for (l, dl) in du.chunks_exact_mut(m.max(1)).take(self.k).enumerate() {
            let vl = v.iter().skip(l).step_by(self.k.max(1)).take(self.n);
            let s: f64 = vl.map(|x| x.to_f64()).sum();
            dl.fill(T::from_f64(s));
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn v_terms<T: Real>(
        &self,
        x: &View<'_, T>,
        w: Option<&[u8]>,
        u: &[T],
        v: &[T],
        y: &mut [T],
        rr: &mut [T],
        nv: &mut [T],
        dv: &mut [T],
        sc: &mut Stack<'_>,
    ) -> Result<(), Error> {
        let (m, k, n) = (x.rows(), self.k, self.n);
        let ut = MatRef::col_major(u, m, k)?.t();
        match x {
            View::Dense(d) => {
                self.dense_terms(d.mat(), w, u, v, y, rr, sc)?;
                gemm(
                    T::ONE,
                    ut,
                    MatRef::col_major(rr.part(..m * n)?, m, n)?,
                    T::ONE,
                    MatMut::col_major(nv, k, n)?,
                    sc,
                )?;
                if self.beta == 1.0 && w.is_none() {
                    self.col_sums_of_u(u, m, dv);
                } else {
                    gemm(
                        T::ONE,
                        ut,
                        MatRef::col_major(y.part(..m * n)?, m, n)?,
                        T::ONE,
                        MatMut::col_major(dv, k, n)?,
                        sc,
                    )?;
                }
            }
            View::Csc(c) => {
                for (j, nvj) in nv.chunks_exact_mut(k.max(1)).take(n).enumerate() {
                    let ((rows, vals), vj) = (c.col(j), self.col(v, j));
                    for (&i, &xv) in rows.iter().zip(vals) {
                        let r = self.ratio(xv.to_f64(), self.at(m, u, vj, i));
                        for (l, d) in nvj.iter_mut().enumerate() {
                            if let Some(&ul) = u.get(i + l * m) {
                                *d += T::from_f64(r * ul.to_f64());
                            }
                        }
                    }
                }
                self.col_sums_of_u(u, m, dv);
            }
        }
        Ok(())
    }

    /// `dv[l, j] += Σ_i u[i, l]` (KL's V denominator, `Uᵀ 1`).
    fn col_sums_of_u<T: Real>(&self, u: &[T], m: usize, dv: &mut [T]) {
        for (l, ul) in u.chunks_exact(m.max(1)).take(self.k).enumerate() {
            let s = T::from_f64(ul.iter().map(|x| x.to_f64()).sum());
            for j in 0..self.n {
                if let Some(d) = dv.get_mut(l + j * self.k) {
                    *d += s;
                }
            }
        }
    }

    /// `D_β(X | U V)`, exact (no clipping).
    fn divergence<T: Real>(
        &self,
        x: &View<'_, T>,
        w: Option<&[u8]>,
        u: &[T],
        v: &[T],
        y: &mut [T],
        sc: &mut Stack<'_>,
    ) -> Result<f64, Error> {
        let (m, n) = (x.rows(), self.n);
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
                        s += d_beta(self.beta, xm.at(i, j).to_f64() * self.s, yt.to_f64());
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
                        let xv = x.to_f64() * self.s;
                        if xv > 0.0 {
                            let yv = self.at(m, u, vj, i);
                            s += xv * libm::log(xv / yv) - xv;
                        }
                    }
                }
                for (l, ul) in u.chunks_exact(m.max(1)).take(self.k).enumerate() {
                    let su: f64 = ul.iter().map(|x| x.to_f64()).sum();
                    let vl = v.iter().skip(l).step_by(self.k.max(1)).take(n);
                    let sv: f64 = vl.map(|x| x.to_f64()).sum();
                    s += su * sv;
                }
                Ok(s)
            }
        }
    }
}
