//! The factorization solvers' power-of-two data scale (issue 15, D3–D5).
//!
//! Data far from 1 breaks the solvers' products long before its own values
//! overflow: with entries near `1e80`, `P = UᵀU` and `Q = UᵀX` reach `1e160` and
//! the V-step's `B² = (γ − Q)²` overflows; near `1e300` already `X Vᵀ` does. At
//! the other end, data near `1e-20` meets the guard `ε = 2⁻⁵²` in
//! `(XVᵀ + ε) ⊘ (UVVᵀ + ε)`, and the multiplicative steps stall at the start. So a
//! fit whose largest entry lies outside `[2^−b, 2^b]`, `b = MAX_EXP/16` (`2^±64`,
//! about `1.8e±19`, for `f64`), runs on `X/c` instead, `c = 2^e` the power of two
//! that puts the largest entry of all views in `[1, 2)` — one `c` for every view,
//! so the views keep their relative weights. Inside that band `c = 1` and nothing
//! changes (bit for bit).
//!
//! **Why the solution keeps its meaning.** With `Ũ` the bases (for the deep model
//! the top layer carries the factor, `Ũ = U_1⋯U_{M−1}·U_M`) and both group norms
//! 1-homogeneous,
//!
//! ```text
//! O(U, V; X, α, β, γ) = c² · O(U/c, V; X/c, α/c, β/c², γ/c²)
//! ```
//!
//! so the scaled problem, with the weights scaled as shown, has exactly the
//! minimisers of the caller's (`U` divided by `c`, `V` and its bound `vmax`
//! unchanged), the same Lipschitz constants (L₀ keeps its meaning), the same
//! relative decrease (`tol`), and every step of it is the caller's step scaled by
//! a power of two. The graph and L1 weights are *not* left as they are: a fixed
//! `β` against data divided by `c` would weigh the graph `c²` times more and
//! change the solution. What does not scale is the guard `ε`: it acts on the
//! scaled problem (a division guard, it only matters near zero entries). The
//! factors are returned in the caller's units (`U·c`), the objective and its
//! parts as `c²` times the scaled ones (exact for a power of two, and monotone:
//! a non-increasing scaled objective reports a non-increasing one).
//!
//! **Limits.** Data with `½ Σ_v ‖X^(v)‖²_F > 2^999` (about `5e300`; for `f32`
//! views `2^103`, see [`max_half_sq`]) is refused: the objective itself (or, in
//! single precision, the factors in the caller's units) is then not
//! representable ([`Error::InputTooLarge`], checked with the other inputs,
//! before anything is written). Scaling small data
//! up multiplies the weights by `1/c` and `1/c²`: it stops where a scaled weight
//! would pass `2^(MAX_EXP/4)` (`2^256`), and at `2^(7·MAX_EXP/8)` in any case
//! (data near `1e-300`), so that the scaled problem stays far from overflow; a
//! warm start limits it too (its bases are scaled with the data). There the
//! reconstruction is negligible beside the weighted terms anyway. The encodes
//! (bases fixed, read only) only scale large inputs down. In `f32` the top of
//! that range is `2^112` (about `5e33`): data whose largest entry, over all
//! views, is below `2^−112` (about `1.9e-34`: the bottom of the float range,
//! subnormals) stays far below 1 when scaled, its products fall into subnormals
//! and lose their precision, and the objective is not guaranteed to fall
//! (measured: the fuzz driver's `_f32` twins at `1e-37` .. `1e-44` rose, and
//! with `ε = 0` a ratio overflowed; the finite-output check then gives
//! [`Error::Internal`], never `Ok` with NaN). That range is outside the rule; a
//! view that low beside a larger one is inside it (next paragraph).
//!
//! **Only the weights that act limit the scale-up** ([`acting`], issue 31). A
//! weight that multiplies nothing — `α` without a group norm, `β` with no graph
//! or a graph without a nonzero weight ([`crate::graph::GraphOp::is_zero`]) —
//! neither limits `s` nor enters the scaled problem (it is 0 there: `0·β` is
//! `0` for every `β`, so objective, minimisers and steps are the caller's).
//! Before, such a weight stopped the `f32` scale-up at `2^32`: data near
//! `1e-24` stayed near `1e-19` scaled, `UᵀU` fell below float's normal range and
//! the objective rose by `1e-3` of itself (seeds `0x7014bc7`, `0x7002640`;
//! all 48 failures of a 10⁶-case fuzz run at `0xf000000` were this, and none
//! is left). Where a weight that acts limits the scale, it is above `2^31` in
//! the scaled problem, whose data stays below 1: the weighted term, not the
//! reconstruction, sets the objective's scale (`β·vmax²/‖X‖²` is the same under
//! every `X → X/c`, `U → U/(c·b)`, `V → V·b`: no scaling of data or factors
//! changes that), and rises are measured at that scale (the fuzz driver: the
//! parts at the start and `β·deg·K·N·vmax²`). Measured before this rule: a cap of `2^96` instead made such fits monotone near `1e-24`, but deep `f32`
//! fits near `1e-10` then ended `Internal` (seeds `0xd199278`, `0xd26cf74`,
//! `0xd306c3d`); the cap stays `2^32`.
//!
//! **Views far apart: the rule per view (issue 31).** Every view is measured on
//! its own (its `½‖X^(v)‖²_F` and its largest entry); the bound above is on their
//! sum, so it holds for each view, and the one scale `c` comes from the largest
//! entry of all. A view far below the others is solved at that common scale,
//! whatever the distance — in single precision its scaled entries may be tiny,
//! subnormal, or round to zero. That is a choice, made after measuring the
//! alternative:
//!
//! * Per-view powers of two `c_v` with the objective weights compensating,
//!   `½ Σ_v ‖X^(v) − U^(v)V‖² = ½ Σ_v c_v² ‖X^(v)/c_v − (U^(v)/c_v) V‖²`, is exact
//!   in exact arithmetic, but `V` is shared: the V-step's `P = Σ_v c_v² U_vᵀU_v`,
//!   `Q = Σ_v c_v² U_vᵀX_v` carry the same spread `c_v²` as the data did, so
//!   nothing is gained where the views meet; the weights must themselves be
//!   representable in `T` (views at most `2^(MAX_EXP/2)` apart), and every product
//!   of every fit would change (no bit of an ordinary run could stay).
//! * A refusal of views "too far apart" would refuse data the solvers handle:
//!   once the composite-gradient step's Lipschitz guess is kept where `1/L` is
//!   finite in `T` (`crate::steps::prox`: `T`'s smallest normal) and a trial step
//!   that is not finite is never accepted, a far-below view's factors stay finite
//!   and the objective never rises. A view whose share of the objective is
//!   below the total's rounding (`2^−53` of it) cannot move `V` in any scaling;
//!   its bases are fitted to `V` (or, under group sparsity, die: `α R(U^(v))`
//!   outweighs its reconstruction), as the caller's objective says.
//!
//! Measured (tests/magnitude.rs, the MvSL, MCL, DMCL, joint NMF and pipeline fits,
//! K = 5, 150 iterations): in `f32` views at `1e-4` and `1e4`, both at `1e-30`,
//! `1e-20` beside `1e12`, `1e-37` beside 1; in `f64` `1e-140` beside `1e140`, both
//! at `1e-300`, `1e-300` beside `1e100`, `1e-307` beside 1 — all `Ok`, finite,
//! monotone. Before issue 31 the `f32` cases gave `Ok` with NaN after 136
//! iterations (E1), and the `f64` ones after about 1030.
//!
//! **The finite-output check.** Behind these rules every solver of the family
//! passes one check before it returns `Ok` (`crate::steps::driver`): an objective
//! (any part, the start's or an iterate's) that is not finite ends the run, and a
//! non-finite entry in the returned factors is caught at the end; either gives
//! [`Error::Internal`] (a bug: the rules make it impossible), never `Ok`.

use crate::data::{Factors, ViewSet};
use crate::error::Error;
use crate::linalg::real::Real;
use crate::par::Parallel;
use crate::steps::prox::Sparsity;
use crate::steps::{MvslParams, Objective};

/// Largest `½ Σ_v ‖X^(v)‖²_F` the factorization solvers accept in precision
/// `T`: `2^(MAX_EXP − 25)` — `2^999` (about `5e300`) for `f64`, `2^103`
/// (about `1e31`, entries up to about `4e15`) for `f32`. The objective is
/// accumulated in `f64` either way; the bound is what keeps the factors, scaled
/// back to the caller's units (`U·c`), representable in `T`.
pub(crate) fn max_half_sq<T: Real>() -> f64 {
    libm::scalbn(1.0, T::MAX_EXP - 25)
}

/// The upper bound on the entries of a factor layer that nothing else bounds,
/// in the scaled problem: `2^(MAX_EXP/(4·m))` for `m` such layers in a product
/// (`2^32` for one `f32` layer, `2^256` for one `f64` layer; the deep model's
/// `M` layers without the box share the budget), so that `Ũ = U_1⋯U_M` stays
/// below `2^(MAX_EXP/4)` times its inner dimensions and `P = ŨᵀŨ` far from
/// overflow.
///
/// **Why a bound (issue 31, seed `0x1321c9e3`).** With `γ > 0` on `V` and no
/// weight that bounds the bases (`α = 0`, or no group norm; in the deep model
/// also the lower layers without the box, whose scale moves freely between
/// layers), the objective has no minimiser: `U → c·U`, `V → V/c` keeps the
/// reconstruction and sends `γ ΣV` to 0, so the descent runs `V → 0`,
/// `Ũ → ∞`. Measured: a deep `f32` fit of three layers on data near `1e-7`
/// with `γ = 0.005` took `V` from 1 to `3e-13` in 12 iterations and `P` past
/// `FLT_MAX` at the 13th (`Internal` from the finite-output check). The
/// fits solve the problem over `0 ≤ U ≤ cap` instead: the multiplicative
/// step clipped at the cap is still the exact minimiser of its separable
/// majoriser on the box (as the deep model's box does for `cap = 1`), so the
/// objective never rises; an ordinary fit (bases near the scaled data, at
/// most `2^(MAX_EXP/16)`) never reaches the cap, and its bits do not change.
pub(crate) fn factor_cap<T: Real>(layers: usize) -> T {
    let m = (layers.clamp(1, 64)) as i32;
    T::from_f64(libm::scalbn(1.0, T::MAX_EXP / (4 * m)))
}

/// `p` with the weights that cannot act set to 0 (issue 31): `α` without a
/// group norm (`sparsity = none`: no term carries it), `β` when every graph
/// weight is zero (`graph_zero`, [`crate::graph::GraphOp::is_zero`]: the
/// graph term is 0 for every `V`, and the V-step's graph products are 0).
/// The objective, its minimisers and every step are those of `p` (a term
/// `0·β` is `0`, whatever `β`); only the scale-up is no longer stopped by a
/// weight that multiplies nothing.
pub(crate) fn acting(p: &MvslParams, graph_zero: bool) -> MvslParams {
    MvslParams {
        alpha: if p.sparsity == Sparsity::None {
            0.0
        } else {
            p.alpha
        },
        beta: if graph_zero { 0.0 } else { p.beta },
        ..*p
    }
}

/// The data scale `s = 1/c` of one fit (a power of two).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Scale {
    s: f64,
}

/// `(½ Σ‖X‖²_F, largest entry)` of validated (finite, nonnegative) views: the sum
/// serial (a fixed order, the same bits as [`Scale::half_sq`] at scale 1), the largest
/// values in tasks on `par` (the same number on every pool).
fn measure<T: Real, VS: ViewSet<T> + ?Sized>(
    views: &VS,
    par: Parallel,
) -> Result<(f64, f64), Error> {
    let (mut half, mut max) = (0.0f64, 0.0f64);
    for i in 0..views.count() {
        let x = views.view(i);
        half += 0.5 * x.sq_frobenius();
        max = max.max(x.max_value_par(par)?);
    }
    Ok((half, max))
}

/// The binary exponent `k` with `max·2^k` in `[1, 2)` when `max` is outside
/// `[2^−b, 2^b]` (`b = MAX_EXP/16`), else 0; at most `7·MAX_EXP/8`.
pub(crate) fn exponent<T: Real>(max: f64) -> i32 {
    let b = T::MAX_EXP / 16;
    if max == 0.0 || (max >= libm::scalbn(1.0, -b) && max <= libm::scalbn(1.0, b)) {
        return 0;
    }
    // max = m·2^e with m in [0.5, 1): max·2^(1−e) is in [1, 2).
    let (_, e) = libm::frexp(max);
    (1 - e).min(7 * T::MAX_EXP / 8)
}

impl Scale {
    /// No scaling.
    pub(crate) const ONE: Scale = Scale { s: 1.0 };

    /// The data scale of a fit on these (validated: finite, nonnegative) views,
    /// before [`Scale::limited`]; [`Error::InputTooLarge`] when
    /// `½ Σ‖X‖²_F > 2^999`.
    pub(crate) fn of<T: Real, VS: ViewSet<T> + ?Sized>(views: &VS) -> Result<Scale, Error> {
        let (half, max) = measure(views, Parallel::Serial)?;
        Self::of_measures::<T>(half, max)
    }

    /// [`Scale::of`] with the largest values found in tasks on `par` (the same number on
    /// every pool), and the measured `½ Σ_v ‖X^(v)‖²_F` (serial: the same bits as
    /// [`Scale::half_sq`] at scale 1, which a fit at scale 1 need not compute again).
    pub(crate) fn of_par<T: Real, VS: ViewSet<T> + ?Sized>(
        views: &VS,
        par: Parallel,
    ) -> Result<(Scale, f64), Error> {
        let (half, max) = measure(views, par)?;
        Ok((Self::of_measures::<T>(half, max)?, half))
    }

    /// [`Scale::of`] from the measures of all views: `half = ½ Σ_v ‖X^(v)‖²_F`
    /// and `max` their largest entry (a distributed fit, `models::dist`, sums
    /// and gathers them over the ranks' shards).
    pub(crate) fn of_measures<T: Real>(half: f64, max: f64) -> Result<Scale, Error> {
        // Squares of finite values: the sum is finite or +∞, never NaN.
        if half > max_half_sq::<T>() {
            return Err(Error::InputTooLarge);
        }
        Ok(Scale {
            s: libm::scalbn(1.0, exponent::<T>(max)),
        })
    }

    /// The scale of an encode: the views and the fixed bases `u` (caller's
    /// units) scaled together, `P = s²·UᵀU`, `Q = s²·UᵀX` (both at most `2^1000`
    /// before scaling, by Cauchy–Schwarz); only ever down (`s ≤ 1`: the bases are
    /// read only, and their products with small data would underflow before any
    /// scaling). [`Error::InputTooLarge`] when half the sum of squares of the
    /// views, or of the bases, is above `2^999`.
    pub(crate) fn of_encode<T: Real, VS: ViewSet<T> + ?Sized, F: Factors<T> + ?Sized>(
        views: &VS,
        u: &F,
    ) -> Result<Scale, Error> {
        let (hx, mx) = measure(views, Parallel::Serial)?;
        let (mut hu, mut mu) = (0.0f64, 0.0f64);
        for i in 0..u.count() {
            for &b in u.get(i) {
                let b = b.to_f64();
                hu += 0.5 * b * b;
                mu = mu.max(b);
            }
        }
        if hx > max_half_sq::<T>() || hu > max_half_sq::<T>() {
            return Err(Error::InputTooLarge);
        }
        let k = exponent::<T>(mx).min(exponent::<T>(mu)).min(0);
        Ok(Scale {
            s: libm::scalbn(1.0, k),
        })
    }

    /// [`Scale::limited`] by the weights that act ([`acting`]).
    pub(crate) fn limited_acting<T: Real>(self, p: &MvslParams, graph_zero: bool) -> Scale {
        let w = acting(p, graph_zero);
        self.limited::<T>(w.alpha, w.beta, w.gamma)
    }

    /// The scaled problem's weights after [`Scale::limited_acting`]: `p`'s
    /// inside the band (`s = 1`: bit for bit), else [`Scale::mvsl`] of
    /// [`acting`]`(p, graph_zero)` (a weight that cannot act is 0 there, so it
    /// never leaves `T`'s range).
    pub(crate) fn mvsl_acting(&self, p: &MvslParams, graph_zero: bool) -> MvslParams {
        if self.is_one() {
            *p
        } else {
            self.mvsl(&acting(p, graph_zero))
        }
    }

    /// An upward scale (`s > 1`, small data) reduced so that the scaled
    /// weights `α·s`, `β·s²`, `γ·s²` stay at most `2^(MAX_EXP/4)` (not below 1; a
    /// downward scale only shrinks them and is returned as it is).
    pub(crate) fn limited<T: Real>(self, alpha: f64, beta: f64, gamma: f64) -> Scale {
        if self.s <= 1.0 {
            return self;
        }
        let w = T::MAX_EXP / 4;
        let mut k = libm::ilogb(self.s);
        for (weight, power) in [(alpha, 1), (beta, 2), (gamma, 2)] {
            if weight > 0.0 {
                // weight < 2^e
                let (_, e) = libm::frexp(weight);
                k = k.min((w - e).max(0) / power);
            }
        }
        Scale {
            s: libm::scalbn(1.0, k),
        }
    }

    /// An upward scale reduced so that a warm start's bases `u` (scaled with
    /// the data) stay at most `2^(MAX_EXP/4)`.
    pub(crate) fn limited_by_start<T: Real, F: Factors<T> + ?Sized>(self, u: &F) -> Scale {
        if self.s <= 1.0 {
            return self;
        }
        let max = (0..u.count())
            .flat_map(|i| u.get(i).iter())
            .fold(0.0f64, |m, x| m.max(x.to_f64()));
        if max == 0.0 {
            return self;
        }
        let (_, e) = libm::frexp(max);
        let k = libm::ilogb(self.s).min((T::MAX_EXP / 4 - e).max(0));
        Scale {
            s: libm::scalbn(1.0, k),
        }
    }

    /// `s = 1`: the fit runs on the caller's data as it is.
    pub(crate) fn is_one(&self) -> bool {
        self.s == 1.0
    }

    /// `s` (the factor the data is multiplied by).
    pub(crate) fn get(&self) -> f64 {
        self.s
    }

    /// `s` as `T`.
    pub(crate) fn t<T: Real>(&self) -> T {
        T::from_f64(self.s)
    }

    /// `½ Σ_v ‖s·X^(v)‖²_F` (for `s = 1` the sum the solvers always formed).
    pub(crate) fn half_sq<T: Real, VS: ViewSet<T> + ?Sized>(&self, views: &VS) -> f64 {
        let h = views.count();
        if self.is_one() {
            (0..h).map(|i| 0.5 * views.view(i).sq_frobenius()).sum()
        } else {
            (0..h)
                .map(|i| 0.5 * views.view(i).sq_frobenius_scaled(self.s))
                .sum()
        }
    }

    /// The scaled problem's objective in the caller's units: times `c² = 1/s²`,
    /// as two multiplications by `c` (`c²` itself may not be representable).
    pub(crate) fn objective(&self, o: Objective) -> Objective {
        if self.is_one() {
            o
        } else {
            let c = 1.0 / self.s;
            o.scaled(c).scaled(c)
        }
    }

    /// The scaled problem's weights: `α·s`, `β·s²`, `γ·s²` (module docs).
    pub(crate) fn mvsl(&self, p: &MvslParams) -> MvslParams {
        if self.is_one() {
            return *p;
        }
        MvslParams {
            alpha: p.alpha * self.s,
            beta: p.beta * self.s * self.s,
            gamma: p.gamma * self.s * self.s,
            ..*p
        }
    }

    /// Bases from the caller's units into the scaled problem's (`U·s`).
    pub(crate) fn apply<T: Real>(&self, u: &mut [T]) {
        if !self.is_one() {
            let s = self.t::<T>();
            u.iter_mut().for_each(|x| *x *= s);
        }
    }

    /// Bases from the scaled problem back into the caller's units (`U/s`).
    pub(crate) fn restore<T: Real>(&self, u: &mut [T]) {
        if !self.is_one() {
            let c = T::from_f64(1.0 / self.s);
            u.iter_mut().for_each(|x| *x *= c);
        }
    }
}
