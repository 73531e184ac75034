//! JSNMF: joint shared nonnegative matrix factorization of several sources over
//! one vocabulary (seed 004, DESIGN §7).
//!
//! Sources `s = 1..S` (a [`SourceSet`]: `M` terms each, `N_s` items each) share
//! `K` basis vectors and keep `R_s − K` of their own:
//!
//! ```text
//! X_s ≈ F_s H_s,   F_s = [W | U_s],   W ≥ 0 (M × K),  U_s ≥ 0 (M × (R_s − K)),  H_s ≥ 0 (R_s × N_s)
//! D = ½ Σ_s λ_s ‖X_s − F_s H_s‖²_F,  λ_1 = 1,  λ_s = ‖X_1‖²/‖X_s‖² (default; or the caller's)
//! ```
//!
//! `K = 0` is `S` independent NMFs, `K = R_s` for every source the fully shared
//! model (the paper's two baselines).
//!
//! **Updates** (one sweep: `W`, then every `U_s` with the new `W`, then every
//! `H_s` with the new bases), each the exact minimiser of a majoriser, guarded as
//! in DESIGN §3, so `D` never increases for any `ε ≥ 0`:
//!
//! ```text
//! W   ← W   ∘ (Σ_s λ_s X_s H_s^wᵀ + ε) ⊘ (Σ_s λ_s F_s (H_s H_s^wᵀ) + ε)
//! U_s ← U_s ∘ (X_s H_s^uᵀ + ε)       ⊘ (F_s (H_s H_s^uᵀ) + ε)
//! H_s ← H_s ∘ (F_sᵀ X_s + ε)         ⊘ ((F_sᵀ F_s) H_s + ε)
//! ```
//!
//! (`H_s^w`, `H_s^u`: the first `K` and the last `R_s − K` rows of `H_s`.) The
//! W-step's majoriser: `D(W)` is quadratic with the linear term
//! `Σ λ_s ⟨W, U_s H_s^u H_s^wᵀ⟩ ≥ 0`, bounded by `w ≤ (w²/wᵗ + wᵗ)/2`; the
//! quadratic part by the usual Lee–Seung diagonal bound. After each sweep the
//! columns of `W` and `U_s` are scaled to unit L2 norm and the matching rows of
//! every `H_s` by the inverse (`D` unchanged; a zero column stays as it is).
//!
//! **Cost per sweep:** each source is read exactly twice (`X_s H_sᵀ`,
//! `F_sᵀ X_s`: dense `4 M N_s R_s` flops, CSC `O(nnz_s·R_s)`), plus
//! `O(M R_s² + R_s² N_s)` per source. The objective comes from products already
//! formed: `½ λ_s (‖X_s‖² − 2⟨F_sᵀX_s, H_s⟩ + ⟨F_sᵀF_s, H_s H_sᵀ⟩)`.
//!
//! **Start** ([`Init::Random`], one xoshiro256++ stream from `seed`, in the
//! order `W`, then per source `U_s`, `H_s`): with `m_s = mean(X_s)`, `U_s` and
//! `H_s` uniform in `(0, 1]·√(m_s/R_s)`, `W` uniform in `(0, 1]·√(m̄/R̄)`
//! (means over the sources): scikit-learn's scale for each source. With
//! [`Init::Given`] the outputs hold the start.
//!
//! Report: one term, [`Term::Reconstruction`] = `D` (the weighted sum).
//!
//! **Scale** (issue 31). When the largest entry of some source lies outside
//! the solvers' band `[2^−b, 2^b]` (`crate::steps::scale`: `2^±64` for `f64`,
//! `2^±8` for `f32`), every source `s` is fitted as `s_s X_s ≈ F_s (s_s H_s)`,
//! `s_s = 2^e_s` the power of two that puts its largest entry in `[1, 2)` (all
//! sources then meet `W` at one magnitude, and the random start's scales agree;
//! at most `2^(MAX_EXP−2)`;
//! with [`Init::Given`] also at most what keeps `s_s H_s ≤ 2^(MAX_EXP/4)`). `W`
//! and `U_s` are shared by the scaled and the caller's problem; the scale goes
//! into `H_s` (returned in the caller's units). Since
//! `λ_s ½‖X_s − F_s H_s‖² = λ_s s_s^−2 · ½‖s_s X_s − F_s s_s H_s‖²`, the scaled
//! problem has the weights `λ_s s_s^−2`; they are applied divided by a common
//! power of two `2^L` (the largest of them brought to `[1, 2)`), and `D` is
//! reported times `2^L` (exact, monotone). So no part of the objective
//! underflows (`½‖X_s‖²` of data near `1e-161` is subnormal, of data near
//! `1e-165` zero), the guard `ε` acts on data near 1, and the updates are those
//! of the caller's problem in exact arithmetic. The default weights come from
//! the scaled norms (`‖X_1‖²/‖X_s‖² = ‖s_1X_1‖²/‖s_sX_s‖² · 2^(2e_s − 2e_1)`),
//! so a source whose `½‖X_s‖²` underflows gets its weight, not 1. Where every
//! source lies inside the band nothing changes, bit for bit. The products with
//! a source (`X_s H̃_sᵀ`, `F_sᵀ X_s`) take the upward part of `s_s` on the other
//! factor before they are formed (as much as keeps it at most `2^(MAX_EXP/2)`),
//! the rest after: so `f32` data below the normal range (`1.2e-38`, subnormal,
//! down to `1.4e-45`) is multiplied near 1, not below it (issue 31: formed on the
//! caller's data, its products kept a few bits and `_f32` fits at `1e-39`,
//! `1e-40` rose; fuzz seed `0x7000ada`). Powers of two: where nothing under- or
//! overflows, the same bits either way.
//!
//! **Limits** (issue 31, the factorization family's magnitude rule with the
//! weights): every `½‖X_s‖²_F` and the weighted `Σ_s λ_s ½‖X_s‖²_F` (`D` at
//! `F_s H_s = 0`) must be at most `2^999` (about `5e300`) for `f64` sources,
//! `2^103` (about `1e31`, entries up to about `4e15`) for `f32` ones — the
//! objective, and in single precision the products `λ_s X_s H_sᵀ`, stay
//! representable. Data beyond it is refused with [`Error::InputTooLarge`], weights
//! `λ` beyond it (e.g. `λ = {1e308, 1e-308}`), or a single `λ_s` above the
//! same bound, with [`Error::BadParameter`],
//! before anything is written. The weighted sum is formed from the scaled
//! norms ("Scale"), so it does not underflow for tiny nonzero data. (A weight
//! may be as small as it likes: a source whose scaled weight underflows beside
//! the others' just stops pulling on `W`.)
//! Behind the rule, a fit never returns `Ok` with a non-finite factor or
//! objective ([`Error::Internal`] instead, `crate::steps::finite`).

mod query;

pub use query::{
    encode, encode_workspace, query, query_workspace, rank, rank_workspace, QueryParams, Ranking,
};

use crate::data::{
    check_sources, check_values, prepared_req, Csr, FactorsMut, Prepared, SourceSet, View,
    ViewShape,
};
use crate::error::{Error, Part};
use crate::linalg::mat::{MatMut, MatRef};
use crate::linalg::real::Real;
use crate::linalg::{dot, gemm, gemm_req, sq_norm};
use crate::rng::Rng;
use crate::steps::finite::{all_finite, factors_finite, finite_report};
use crate::steps::mu::{gram, mu_step, products_req};
use crate::steps::scale::{exponent, max_half_sq};
use crate::steps::{run, Init, Monitor, NmfParams, Objective, Report, Term};
use crate::work::{Stack, WorkReq};

/// Options of [`fit`]: the iteration options of NMF (`vmax` must be `+∞`:
/// the model bounds nothing) and the sources' weights.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JsnmfParams {
    /// Iterations, tolerance, guard `ε`, seed, start (`vmax` unused, must be ∞).
    pub iter: NmfParams,
}

impl JsnmfParams {
    /// [`Error::BadParameter`] unless the iteration options are valid and
    /// `vmax = +∞`.
    pub fn validate(&self) -> Result<(), Error> {
        self.iter.validate()?;
        if self.iter.vmax != f64::INFINITY {
            return Err(Error::BadParameter);
        }
        Ok(())
    }
}

/// Checks the ranks and weights against `ns` sources of `m` rows; returns
/// `(M, max R_s)`.
fn check_ranks(
    m: usize,
    k: usize,
    ranks: &[usize],
    ns: usize,
    lambda: Option<&[f64]>,
) -> Result<(usize, usize), Error> {
    if ranks.len() != ns {
        return Err(Error::DimensionMismatch);
    }
    if ranks.iter().any(|&r| r == 0 || r < k) {
        return Err(Error::BadRank);
    }
    if let Some(l) = lambda {
        if l.len() != ns {
            return Err(Error::DimensionMismatch);
        }
        if l.iter().any(|&x| !x.is_finite() || x <= 0.0) {
            return Err(Error::BadParameter);
        }
    }
    let rmax = ranks.iter().copied().max().unwrap_or(0);
    m.checked_mul(rmax).ok_or(Error::SizeOverflow)?;
    Ok((m, rmax))
}

/// The binary exponent `e` of a source's scale `s = 2^e` (module docs,
/// "Scale") when some source lies outside the solvers' band: the one putting
/// its largest entry in `[1, 2)`, at most `MAX_EXP − 2` (so that `s` is a normal
/// number of `T`); 0 for an all-zero source.
fn source_exponent<T: Real>(max: f64) -> i32 {
    if max == 0.0 {
        return 0;
    }
    let (_, e) = libm::frexp(max);
    (1 - e).min(T::MAX_EXP - 2)
}

/// The magnitude rule of [`fit`] (module docs, "Limits"), before anything is
/// written: every `½‖X_s‖²_F` and the weighted `Σ_s λ_s ½‖X_s‖²_F` (the
/// objective at `F_s H_s = 0`) at most [`max_half_sq`] of `T` (`2^999` for
/// `f64`, `2^103` for `f32`). `half_x2(s)` is `½‖X_s‖²_F` in the caller's
/// units, `scaled(s)` the pair `(½‖2^e X_s‖²_F, e)` (the weighted sum is
/// formed from it, so that it never underflows to 0 for nonzero data).
fn check_magnitude<T: Real>(
    ns: usize,
    half_x2: &dyn Fn(usize) -> f64,
    scaled: &dyn Fn(usize) -> (f64, i32),
    lambda: Option<&[f64]>,
) -> Result<(), Error> {
    let limit = max_half_sq::<T>();
    let mut weighted = 0.0f64;
    let (x1, e1) = scaled(0);
    for s in 0..ns {
        let h = half_x2(s);
        if h.is_nan() || h > limit {
            return Err(Error::InputTooLarge);
        }
        let (hs, e) = scaled(s);
        match lambda {
            None => {
                // λ_s ½‖X_s‖² = ½‖X_1‖² (λ_s = 1 where a sum is 0).
                weighted += if hs > 0.0 && x1 > 0.0 {
                    libm::scalbn(x1, -2 * e1)
                } else {
                    libm::scalbn(hs, -2 * e)
                };
            }
            Some(l) => {
                let ls = l.get(s).copied().unwrap_or(0.0);
                // Each weight representable in `T` with room (in `f32`, 1e39
                // would be ∞).
                if ls > limit {
                    return Err(Error::BadParameter);
                }
                weighted += libm::scalbn(ls * hs, -2 * e);
            }
        }
    }
    if weighted.is_nan() || weighted > limit {
        return Err(if lambda.is_some() {
            Error::BadParameter
        } else {
            Error::InputTooLarge
        });
    }
    Ok(())
}

/// The workspace of [`fit`].
fn fit_req<T>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    k: usize,
    ranks: &[usize],
) -> Result<WorkReq, Error> {
    let d = check_sources(shapes.clone())?;
    let ns = shapes.clone().into_iter().count();
    let (m, rmax) = check_ranks(d.rows, k, ranks, ns, None)?;
    let rsum = ranks
        .iter()
        .try_fold(0usize, |a, &r| a.checked_add(r))
        .ok_or(Error::SizeOverflow)?;
    let r2sum = ranks
        .iter()
        .try_fold(0usize, |a, &r| a.checked_add(r.checked_mul(r)?))
        .ok_or(Error::SizeOverflow)?;
    let big = m.max(rmax);
    let mut scratch = WorkReq::EMPTY;
    for (s, &r) in shapes.clone().into_iter().zip(ranks) {
        scratch = scratch
            .or(products_req::<T>([s], r, s.cols))
            .or(gemm_req::<T>(m, r, r));
    }
    Ok(WorkReq::all_of(&[
        WorkReq::matrix::<T>(m, rmax),                   // F_s = [W | U_s]
        WorkReq::matrix::<T>(m, rsum),                   // X_s H_sᵀ, every source
        WorkReq::new::<T>(r2sum),                        // H_s H_sᵀ, every source
        WorkReq::matrix::<T>(m, k),                      // W-step numerator
        WorkReq::matrix::<T>(m, k),                      // W-step denominator
        WorkReq::matrix::<T>(big, rmax.max(d.max_cols)), // other denominators
        WorkReq::matrix::<T>(rmax, d.max_cols),          // F_sᵀ X_s
        WorkReq::matrix::<T>(rmax, rmax),                // F_sᵀ F_s
        WorkReq::new::<f64>(ns),                         // λ_s (normalised)
        WorkReq::new::<f64>(ns),                         // s_s, the sources' scales
        prepared_req::<T>(shapes),
        scratch,
    ]))
}

/// Workspace bytes of [`fit`] for sources of these shapes, `k` shared and
/// `ranks[s] = R_s` basis vectors per source.
pub fn fit_workspace<T>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    k: usize,
    ranks: &[usize],
    params: &JsnmfParams,
) -> Result<usize, Error> {
    params.validate()?;
    fit_req::<T>(shapes, k, ranks)?.bytes()
}

/// Fits JSNMF (module docs: objective, updates, cost, start).
///
/// * `sources`: `S ≥ 1` nonnegative, finite sources over the same `M` terms.
/// * `k`: shared basis vectors; `ranks[s] = R_s ≥ max(k, 1)`.
/// * `lambda`: the sources' weights (`S` values, finite, `> 0`, with
///   `Σ_s λ_s ½‖X_s‖²_F` within the module's limits), or `None` for
///   `λ_s = ‖X_1‖²/‖X_s‖²`.
/// * `w`: `M × K` (written; read with [`Init::Given`]); `u`: `S` buffers
///   `M × (R_s − K)`; `h`: `S` buffers `R_s × N_s` (column-major).
/// * `work`: at least [`fit_workspace`] bytes, any alignment.
///
/// Everything is validated before anything is written (outputs untouched on
/// `Err`), the magnitudes too (module docs, "Limits": [`Error::InputTooLarge`],
/// for the weights [`Error::BadParameter`]); cancelling returns `Ok` with the
/// last complete sweep. `Ok` always carries finite factors and objectives (a
/// non-finite one would be [`Error::Internal`], outputs at the last sweep).
///
/// ```
/// use mvnmf::models::jsnmf::{self, JsnmfParams};
/// use mvnmf::models::nmf::NmfParams;
/// use mvnmf::{Dense, View};
///
/// // Two sources over the same 6 terms, with 5 and 4 documents; k = 2 shared
/// // basis vectors, one source-specific vector each (R_s = 3).
/// let (m, k, ranks) = (6, 2, [3, 3]);
/// let x1: Vec<f64> = (0..m * 5).map(|i| (i * 5 % 9) as f64 + 0.5).collect();
/// let x2: Vec<f64> = (0..m * 4).map(|i| (i * 2 % 7) as f64 + 0.5).collect();
/// let sources = [View::from(Dense::new(&x1, m, 5, m)?), View::from(Dense::new(&x2, m, 4, m)?)];
/// let params = JsnmfParams { iter: NmfParams { max_iter: 40, ..NmfParams::default() } };
/// let shapes = sources.iter().map(|x| x.shape());
/// let mut work = vec![0u8; jsnmf::fit_workspace::<f64>(shapes, k, &ranks, &params)?];
/// let mut w = vec![0.0; m * k]; // shared basis W (M x k)
/// let (mut u1, mut u2) = (vec![0.0; m], vec![0.0; m]); // U_s: M x (R_s - k)
/// let (mut h1, mut h2) = (vec![0.0; 3 * 5], vec![0.0; 3 * 4]); // H_s: R_s x N_s
/// let report = jsnmf::fit(
///     &sources[..], k, &ranks, None, &params, &mut w,
///     &mut [&mut u1[..], &mut u2[..]][..], &mut [&mut h1[..], &mut h2[..]][..], &mut work, None,
/// )?;
/// assert!(report.objective.total < report.initial.total);
/// assert!(w.iter().chain(&h1).chain(&h2).all(|&e| e >= 0.0));
/// # Ok::<(), mvnmf::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn fit<
    T: Real,
    S: SourceSet<T> + ?Sized,
    U: FactorsMut<T> + ?Sized,
    H: FactorsMut<T> + ?Sized,
>(
    sources: &S,
    k: usize,
    ranks: &[usize],
    lambda: Option<&[f64]>,
    params: &JsnmfParams,
    w: &mut [T],
    u: &mut U,
    h: &mut H,
    work: &mut [u8],
    monitor: Option<Monitor<'_>>,
) -> Result<Report, Error> {
    params.validate()?;
    let ns = sources.count();
    let d = check_sources((0..ns).map(|s| sources.shape(s)))?;
    let (m, rmax) = check_ranks(d.rows, k, ranks, ns, lambda)?;
    if w.len() != m * k || u.count() != ns || h.count() != ns {
        return Err(Error::DimensionMismatch);
    }
    for (s, &r) in ranks.iter().enumerate() {
        let n = sources.shape(s).cols;
        let hn = r.checked_mul(n).ok_or(Error::SizeOverflow)?;
        if u.get(s).len() != m * (r - k) || h.get(s).len() != hn {
            return Err(Error::DimensionMismatch);
        }
    }
    fit_req::<T>((0..ns).map(|s| sources.shape(s)), k, ranks)?.check(work.len())?;
    for s in 0..ns {
        sources.source(s).check_values(true)?;
    }
    if params.iter.init == Init::Given {
        check_values(w, true)?;
        for s in 0..ns {
            check_values(u.get(s), true)?;
            check_values(h.get(s), true)?;
        }
    }
    // The sources' scales s_s = 2^e_s (module docs, "Scale"), limited by a
    // given start's H_s (scaled with the data).
    let any_out = (0..ns).any(|s| exponent::<T>(sources.source(s).max_value()) != 0);
    let exps = |s: usize| -> i32 {
        if !any_out {
            return 0;
        }
        let mut e = source_exponent::<T>(sources.source(s).max_value());
        if e > 0 && params.iter.init == Init::Given {
            let hmax = h.get(s).iter().fold(0.0f64, |a, x| a.max(x.to_f64()));
            if hmax > 0.0 {
                let (_, eh) = libm::frexp(hmax);
                e = e.min((T::MAX_EXP / 4 - eh).max(0));
            }
        }
        e
    };
    // ½‖s_s X_s‖²_F (for s_s = 1 the sum formed before the scale existed).
    let half_scaled = |s: usize, e: i32| -> f64 {
        let x = sources.source(s);
        if e == 0 {
            0.5 * x.sq_frobenius()
        } else {
            0.5 * x.sq_frobenius_scaled(libm::scalbn(1.0, e))
        }
    };
    let half_x2 = |s: usize| 0.5 * sources.source(s).sq_frobenius();
    check_magnitude::<T>(
        ns,
        &half_x2,
        &|s| {
            let e = exps(s);
            (half_scaled(s, e), e)
        },
        lambda,
    )?;

    let rsum: usize = ranks.iter().sum();
    let nmax = d.max_cols;
    let mut st = Stack::new(work).with_par(params.iter.parallel);
    let f: &mut [T] = st.take_matrix(m, rmax)?;
    let xht: &mut [T] = st.take_matrix(m, rsum)?;
    let hh: &mut [T] = st.take(ranks.iter().map(|r| r * r).sum())?;
    let num_w: &mut [T] = st.take_matrix(m, k)?;
    let den_w: &mut [T] = st.take_matrix(m, k)?;
    let den: &mut [T] = st.take_matrix(m.max(rmax), rmax.max(nmax))?;
    let ftx: &mut [T] = st.take_matrix(rmax, nmax)?;
    let ftf: &mut [T] = st.take_matrix(rmax, rmax)?;
    let lam: &mut [f64] = st.take(ns)?;
    let sc_of: &mut [f64] = st.take(ns)?;
    let prep = Prepared::new(sources, &mut st)?;
    // λ_s·s_s^-2 = m_s·2^(p_s): the caller's weight in the scaled problem's
    // units; `lam` gets m_s·2^(p_s − L), L the largest binary exponent of them,
    // and the objective is reported times 2^L.
    let mut any_scaled = false;
    for (s, (l, c)) in lam.iter_mut().zip(sc_of.iter_mut()).enumerate() {
        let e = exps(s);
        any_scaled |= e != 0;
        *c = e as f64;
        *l = match lambda {
            Some(l) => l.get(s).copied().unwrap_or(1.0),
            None => 1.0,
        };
    }
    let e1 = sc_of.first().copied().unwrap_or(0.0) as i32;
    let x1 = half_scaled(0, e1);
    // p_s per source (recomputed: no room is kept for it).
    let p_of = |e: i32, xs: f64| -> i32 {
        match lambda {
            Some(_) => -2 * e,
            None if xs > 0.0 && x1 > 0.0 => -2 * e1,
            None => -2 * e,
        }
    };
    let mut big_l = i32::MIN;
    for (s, l) in lam.iter_mut().enumerate() {
        let e = sc_of.get(s).copied().unwrap_or(0.0) as i32;
        let xs = half_scaled(s, e);
        if lambda.is_none() {
            *l = if xs > 0.0 && x1 > 0.0 { x1 / xs } else { 1.0 };
        }
        big_l = big_l.max(libm::ilogb(*l) + p_of(e, xs));
    }
    // Without a scale the weights stay as they were (bit for bit).
    let big_l = if any_scaled { big_l } else { 0 };
    if any_scaled {
        for (s, l) in lam.iter_mut().enumerate() {
            let e = sc_of.get(s).copied().unwrap_or(0.0) as i32;
            let xs = half_scaled(s, e);
            *l = libm::scalbn(*l, p_of(e, xs) - big_l);
        }
    }
    // ½‖X̃_s‖² per source (in the scaled units).
    let half_t = |s: usize| -> f64 {
        let e = sc_of.get(s).copied().unwrap_or(0.0) as i32;
        half_scaled(s, e)
    };
    let st_of = |s: usize| -> T {
        T::from_f64(libm::scalbn(
            1.0,
            sc_of.get(s).copied().unwrap_or(0.0) as i32,
        ))
    };
    let report_of = |total: f64| -> f64 { libm::scalbn(total, big_l) };
    match params.iter.init {
        Init::Random => random_start(sources, ranks, params.iter.seed, &|s| st_of(s), w, u, h),
        _ => {
            // H̃_s = s_s H_s (the scale was limited so that it stays finite).
            for s in 0..ns {
                let c = st_of(s);
                if c != T::ONE {
                    h.get_mut(s).iter_mut().for_each(|x| *x *= c);
                }
            }
        }
    }
    let result = fit_scaled(
        sources,
        k,
        ranks,
        params,
        w,
        u,
        h,
        monitor,
        &prep,
        m,
        f,
        xht,
        hh,
        num_w,
        den_w,
        den,
        ftx,
        ftf,
        lam,
        &half_t,
        &st_of,
        &report_of,
        st.rest(),
    );
    // H_s back into the caller's units (also after an error in the loop: the
    // outputs hold the last sweep).
    for s in 0..ns {
        let c = st_of(s);
        if c != T::ONE {
            let inv = T::ONE / c;
            h.get_mut(s).iter_mut().for_each(|x| *x *= inv);
        }
    }
    let report = result?;
    let outputs_finite = all_finite(w) && factors_finite(u) && factors_finite(h);
    finite_report(report, outputs_finite)
}

/// The loop of [`fit`] on the scaled problem: `s_s X_s ≈ F_s H̃_s` with the
/// normalised weights `lam`; objectives reported through `report_of`.
#[allow(clippy::too_many_arguments)]
fn fit_scaled<
    T: Real,
    S: SourceSet<T> + ?Sized,
    U: FactorsMut<T> + ?Sized,
    H: FactorsMut<T> + ?Sized,
>(
    sources: &S,
    k: usize,
    ranks: &[usize],
    params: &JsnmfParams,
    w: &mut [T],
    u: &mut U,
    h: &mut H,
    monitor: Option<Monitor<'_>>,
    prep: &Prepared<'_, T>,
    m: usize,
    f: &mut [T],
    xht: &mut [T],
    hh: &mut [T],
    num_w: &mut [T],
    den_w: &mut [T],
    den: &mut [T],
    ftx: &mut [T],
    ftf: &mut [T],
    lam: &[f64],
    half_x2: &dyn Fn(usize) -> f64,
    st_of: &dyn Fn(usize) -> T,
    report_of: &dyn Fn(f64) -> f64,
    mut sc: Stack<'_>,
) -> Result<Report, Error> {
    let eps = T::from_f64(params.iter.eps);
    let hh_at = |s: usize| -> usize { ranks.iter().take(s).map(|r| r * r).sum() };
    let xht_at = |s: usize| -> usize { m * ranks.iter().take(s).sum::<usize>() };

    // F_s = [W | U_s] into `f` (m × R_s).
    let assemble = |f: &mut [T], w: &[T], us: &[T]| -> Result<(), Error> {
        f.part_mut(..m * k)?.copy_checked(w)?;
        f.part_mut(m * k..m * k + us.len())?.copy_checked(us)
    };

    // The start's objective (and H_s H_sᵀ for the first sweep).
    let mut total = 0.0;
    for (s, (&r, &ls)) in ranks.iter().zip(lam.iter()).enumerate() {
        let x = sources.source(s);
        let n = x.cols();
        let hs = h.get(s);
        assemble(f, w, u.get(s))?;
        gemm(
            T::ONE,
            MatRef::col_major(f.part(..m * r)?, m, r)?.t(),
            MatRef::col_major(f.part(..m * r)?, m, r)?,
            T::ZERO,
            MatMut::col_major(ftf.part_mut(..r * r)?, r, r)?,
            &mut sc,
        )?;
        ut_x_pre(
            x,
            prep.get(sources, s),
            st_of(s),
            f.part_mut(..m * r)?,
            r,
            ftx.part_mut(..r * n)?,
            &mut sc,
        )?;
        let g = hh.part_mut(hh_at(s)..hh_at(s) + r * r)?;
        gram(hs, r, n, g, &mut sc)?;
        total += ls * (half_x2(s) - dot(ftx.part(..r * n)?, hs) + 0.5 * dot(ftf.part(..r * r)?, g));
    }
    let total = report_of(total);
    let initial = Objective::new(total, &[(Term::Reconstruction, total)]);

    run(
        params.iter.max_iter,
        params.iter.stopping(),
        initial,
        monitor,
        |_it| {
            // X_s H_sᵀ for every source; the W-step's sums.
            num_w.fill(T::ZERO);
            den_w.fill(T::ZERO);
            for (s, (&r, &ls)) in ranks.iter().zip(lam.iter()).enumerate() {
                let x = sources.source(s);
                let xs = xht.part_mut(xht_at(s)..xht_at(s) + m * r)?;
                x_vt_pre(
                    x,
                    prep.get(sources, s),
                    st_of(s),
                    h.get_mut(s),
                    r,
                    xs,
                    &mut sc,
                )?;
                if k == 0 {
                    continue;
                }
                let l = T::from_f64(ls);
                assemble(f, w, u.get(s))?;
                let g = hh.part(hh_at(s)..hh_at(s) + r * r)?;
                // den_w += λ_s F_s (H_s H_s^wᵀ); num_w += λ_s X_s H_s^wᵀ.
                gemm(
                    l,
                    MatRef::col_major(f.part(..m * r)?, m, r)?,
                    MatRef::new(g, r, k, 1, r)?,
                    T::ONE,
                    MatMut::col_major(den_w, m, k)?,
                    &mut sc,
                )?;
                for (a, &b) in num_w.iter_mut().zip(xs.part(..m * k)?) {
                    *a += l * b;
                }
            }
            mu_step(w, num_w, den_w, eps, T::INFINITY);
            // U_s with the new W.
            for (s, &r) in ranks.iter().enumerate() {
                if r == k {
                    continue;
                }
                let p = r - k;
                assemble(f, w, u.get(s))?;
                let g = hh.part(hh_at(s)..hh_at(s) + r * r)?;
                let d = den.part_mut(..m * p)?;
                gemm(
                    T::ONE,
                    MatRef::col_major(f.part(..m * r)?, m, r)?,
                    MatRef::new(g.part(k * r..)?, r, p, 1, r)?,
                    T::ZERO,
                    MatMut::col_major(d, m, p)?,
                    &mut sc,
                )?;
                let xs = xht.part(xht_at(s) + m * k..xht_at(s) + m * r)?;
                mu_step(u.get_mut(s), xs, d, eps, T::INFINITY);
            }
            // H_s with the new bases; the objective from the products formed.
            let mut total = 0.0;
            for (s, (&r, &ls)) in ranks.iter().zip(lam.iter()).enumerate() {
                let x = sources.source(s);
                let n = x.cols();
                assemble(f, w, u.get(s))?;
                gemm(
                    T::ONE,
                    MatRef::col_major(f.part(..m * r)?, m, r)?.t(),
                    MatRef::col_major(f.part(..m * r)?, m, r)?,
                    T::ZERO,
                    MatMut::col_major(ftf.part_mut(..r * r)?, r, r)?,
                    &mut sc,
                )?;
                ut_x_pre(
                    x,
                    prep.get(sources, s),
                    st_of(s),
                    f.part_mut(..m * r)?,
                    r,
                    ftx.part_mut(..r * n)?,
                    &mut sc,
                )?;
                let hs = h.get_mut(s);
                let d = den.part_mut(..r * n)?;
                gemm(
                    T::ONE,
                    MatRef::col_major(ftf.part(..r * r)?, r, r)?,
                    MatRef::col_major(hs, r, n)?,
                    T::ZERO,
                    MatMut::col_major(d, r, n)?,
                    &mut sc,
                )?;
                mu_step(hs, ftx.part(..r * n)?, d, eps, T::INFINITY);
                let g = hh.part_mut(hh_at(s)..hh_at(s) + r * r)?;
                gram(hs, r, n, g, &mut sc)?;
                total += ls
                    * (half_x2(s) - dot(ftx.part(..r * n)?, hs) + 0.5 * dot(ftf.part(..r * r)?, g));
            }
            normalize(m, k, ranks, w, u, h, hh);
            let total = report_of(total);
            Ok(Objective::new(total, &[(Term::Reconstruction, total)]))
        },
    )
}

/// A source's scale `s` (a power of two) split as `(pre, post)`, `pre·post = s`
/// (module docs, "Scale"): `pre` goes onto the other operand of a product with
/// the source before the product is formed, as much of an upward `s` as keeps
/// that operand (largest entry `max`) at most `2^(MAX_EXP/2)`; `post` onto the
/// product. So the products of tiny data (`f32` subnormals) are formed near 1,
/// not below the normal range; where nothing underflows or overflows, both
/// orders give the same bits (powers of two).
fn pre_post<T: Real>(s: T, max: f64) -> (T, T) {
    if s <= T::ONE || max == 0.0 {
        return (T::ONE, s);
    }
    let es = libm::ilogb(s.to_f64());
    let (_, eo) = libm::frexp(max);
    let pre = es.min((T::MAX_EXP / 2 - eo).max(0));
    (
        T::from_f64(libm::scalbn(1.0, pre)),
        T::from_f64(libm::scalbn(1.0, es - pre)),
    )
}

/// `out ← s·Fᵀ X` with the upward part of `s` put on `f` first ([`pre_post`]);
/// `f` (the assembled `[W | U_s]`, reassembled before its next use) is left scaled.
fn ut_x_pre<T: Real>(
    x: View<'_, T>,
    csr: Option<Csr<'_, T>>,
    s: T,
    f: &mut [T],
    r: usize,
    out: &mut [T],
    sc: &mut Stack<'_>,
) -> Result<(), Error> {
    let (pre, post) = pre_post(s, f.iter().fold(0.0f64, |a, b| a.max(b.to_f64())));
    if pre != T::ONE {
        f.iter_mut().for_each(|a| *a *= pre);
    }
    x.ut_x_scaled(csr, post, f, r, T::ZERO, out, sc)
}

/// `out ← s·X H̃ᵀ` with the upward part of `s` put on `h` for the product
/// ([`pre_post`]) and taken off after (exact: powers of two within range).
fn x_vt_pre<T: Real>(
    x: View<'_, T>,
    csr: Option<Csr<'_, T>>,
    s: T,
    h: &mut [T],
    r: usize,
    out: &mut [T],
    sc: &mut Stack<'_>,
) -> Result<(), Error> {
    let (pre, post) = pre_post(s, h.iter().fold(0.0f64, |a, b| a.max(b.to_f64())));
    if pre != T::ONE {
        h.iter_mut().for_each(|a| *a *= pre);
    }
    let r = x.x_vt_scaled(csr, post, h, r, out, sc);
    if pre != T::ONE {
        let inv = T::ONE / pre;
        h.iter_mut().for_each(|a| *a *= inv);
    }
    r
}

/// Unit L2 columns of `W` and every `U_s`, the matching rows of every `H_s`
/// scaled by the norms (and `H_s H_sᵀ` by both factors), so `F_s H_s` and the
/// objective are unchanged. A zero column stays as it is.
fn normalize<T: Real, U: FactorsMut<T> + ?Sized, H: FactorsMut<T> + ?Sized>(
    m: usize,
    k: usize,
    ranks: &[usize],
    w: &mut [T],
    u: &mut U,
    h: &mut H,
    hh: &mut [T],
) {
    let scale_col = |col: &mut [T]| -> T {
        let n = T::from_f64(libm::sqrt(sq_norm(col)));
        if n > T::ZERO {
            col.iter_mut().for_each(|x| *x /= n);
            n
        } else {
            T::ONE
        }
    };
    // Shared columns: one norm for every source's H_s. (The slices are
    // within the buffers, which `fit` checked: the `get`s never miss.)
    let m1 = m.max(1);
    for (c, wc) in w.chunks_exact_mut(m1).take(k).enumerate() {
        let n = scale_col(wc);
        let mut off = 0;
        for (s, &r) in ranks.iter().enumerate() {
            scale_row(h.get_mut(s), r, c, n);
            if let Some(g) = hh.get_mut(off..off + r * r) {
                scale_gram(g, r, c, n);
            }
            off += r * r;
        }
    }
    let mut off = 0;
    for (s, &r) in ranks.iter().enumerate() {
        for c in k..r {
            let n = match u.get_mut(s).get_mut((c - k) * m..(c - k + 1) * m) {
                Some(col) => scale_col(col),
                None => T::ONE,
            };
            scale_row(h.get_mut(s), r, c, n);
            if let Some(g) = hh.get_mut(off..off + r * r) {
                scale_gram(g, r, c, n);
            }
        }
        off += r * r;
    }
}

/// Row `c` of the column-major `r × n` matrix `h` times `x`.
fn scale_row<T: Real>(h: &mut [T], r: usize, c: usize, x: T) {
    if x != T::ONE {
        h.iter_mut().skip(c).step_by(r.max(1)).for_each(|v| *v *= x);
    }
}

/// Row and column `c` of the symmetric `r × r` matrix `g` times `x` (the Gram
/// of `H` after its row `c` was scaled by `x`).
fn scale_gram<T: Real>(g: &mut [T], r: usize, c: usize, x: T) {
    if x != T::ONE {
        g.iter_mut().skip(c).step_by(r.max(1)).for_each(|v| *v *= x);
        if let Some(col) = g.get_mut(c * r..(c + 1) * r) {
            col.iter_mut().for_each(|v| *v *= x);
        }
    }
}

/// The random start (module docs), in the scaled problem's units: the means
/// are those of `s_s X_s`, so `H_s` comes out as `H̃_s`.
#[allow(clippy::too_many_arguments)]
fn random_start<
    T: Real,
    S: SourceSet<T> + ?Sized,
    U: FactorsMut<T> + ?Sized,
    H: FactorsMut<T> + ?Sized,
>(
    sources: &S,
    ranks: &[usize],
    seed: u64,
    scale: &dyn Fn(usize) -> T,
    w: &mut [T],
    u: &mut U,
    h: &mut H,
) {
    let ns = sources.count();
    let mean = |s: usize| {
        let x = sources.source(s);
        let c = scale(s);
        let m = x.sum() / (x.rows() as f64 * x.cols() as f64);
        if c == T::ONE {
            m
        } else {
            m * c.to_f64()
        }
    };
    let mbar = (0..ns).map(mean).sum::<f64>() / ns as f64;
    let rbar = ranks.iter().sum::<usize>() as f64 / ns as f64;
    let mut rng = Rng::new(seed);
    let sw = libm::sqrt(mbar / rbar);
    w.iter_mut()
        .for_each(|x| *x = T::from_f64(rng.uniform() * sw));
    for (s, &r) in ranks.iter().enumerate() {
        let sc = libm::sqrt(mean(s) / r as f64);
        u.get_mut(s)
            .iter_mut()
            .for_each(|x| *x = T::from_f64(rng.uniform() * sc));
        h.get_mut(s)
            .iter_mut()
            .for_each(|x| *x = T::from_f64(rng.uniform() * sc));
    }
}
