//! Exact nonnegative proximal maps of the group norms (DESIGN §4).
//!
//! Both norms are absolute and monotone, so `prox_{τR + ι(U ≥ 0)}(b)` is the
//! norm's prox applied to `[b]₊`. Columns of `U` are the groups.

use crate::error::Error;
use crate::linalg::mat::{MatMut, MatRef};
use crate::linalg::real::Real;
use crate::linalg::{dot, gemm, sq_norm};
use crate::steps::MvslParams;
use crate::work::Stack;

/// Which group norm regularises the bases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sparsity {
    /// No group sparsity.
    None,
    /// `L1,2 = Σ_k ‖u_k‖₂` (MvSL).
    L12,
    /// `L1,∞ = Σ_k max_i |U_ik|` (MCL, DMCL).
    L1Inf,
}

/// `R(U)` for `U` (`rows × k`, column-major).
pub fn group_norm<T: Real>(s: Sparsity, u: &[T], rows: usize) -> f64 {
    if rows == 0 {
        return 0.0;
    }
    u.chunks_exact(rows)
        .map(|c| match s {
            Sparsity::None => 0.0,
            Sparsity::L12 => libm::sqrt(c.iter().map(|x| x.to_f64() * x.to_f64()).sum::<f64>()),
            Sparsity::L1Inf => c.iter().fold(0.0f64, |m, x| m.max(x.abs().to_f64())),
        })
        .sum()
}

/// `u ← argmin_{u ≥ 0} τ‖u‖₂ + ½‖u − b‖²` in place:
/// `max(0, 1 − τ/‖[b]₊‖₂) · [b]₊` (a column with `‖[b]₊‖ ≤ τ` becomes zero).
pub fn prox_l2_nonneg<T: Real>(b: &mut [T], tau: f64) {
    let mut n2 = 0.0;
    for x in b.iter_mut() {
        *x = x.max(T::ZERO);
        n2 += x.to_f64() * x.to_f64();
    }
    let norm = libm::sqrt(n2);
    if norm <= tau {
        b.fill(T::ZERO);
    } else {
        let s = T::from_f64(1.0 - tau / norm);
        b.iter_mut().for_each(|x| *x *= s);
    }
}

/// `u ← argmin_{u ≥ 0} τ‖u‖_∞ + ½‖u − b‖²` in place. By Moreau,
/// `prox_{τ‖·‖∞} = I − Π_{τB₁}`: with `c = [b]₊`, zero if `Σc ≤ τ`, else
/// `min(c, θ)` with `θ > 0` solving `Σ max(c_i − θ, 0) = τ` (found from the
/// values in decreasing order, a heap of a copy in `scratch`, `len ≥ b.len()`).
/// Cost `O(M + ρ log M)`, `ρ` the number of values above `θ`.
pub fn prox_linf_nonneg<T: Real>(b: &mut [T], tau: f64, scratch: &mut [T]) {
    let m = b.len();
    let mut sum = 0.0;
    for x in b.iter_mut() {
        *x = x.max(T::ZERO);
        sum += x.to_f64();
    }
    if sum <= tau {
        b.fill(T::ZERO);
        return;
    }
    if tau <= 0.0 {
        return;
    }
    let Some(s) = scratch.get_mut(..m) else {
        return;
    };
    s.copy_from_slice(b);
    // The values in decreasing order, from a max-heap (`O(M)` to build, then
    // `O(log M)` per value taken, and only the values up to ρ are taken): the
    // same sequence of values as a full sort, hence the same sums. Not
    // `sort_unstable_by`: core's sorts keep a panic for comparisons that are
    // not a total order, which the optimiser cannot rule out for floats.
    let mut heap = MaxHeap::new(s);
    // θ = (Σ_{i≤ρ} s_i − τ)/ρ for the largest ρ with s_ρ > θ_ρ. ρ = 1 always
    // qualifies (θ₁ = s₁ − τ < s₁ for τ > 0); its test is not evaluated, since with
    // τ below half an ulp of s₁ it reads `s₁ > s₁` and left θ = 0, zeroing the
    // column and raising the objective (issue 15: α/L ~ 1e-45 of U on data near 1e25,
    // or a tiny α on ordinary data).
    let (mut cum, mut theta) = (0.0, 0.0);
    let mut j = 0usize;
    while let Some(x) = heap.pop() {
        let x = x.to_f64();
        let t = (cum + x - tau) / (j + 1) as f64;
        if j == 0 || x > t {
            cum += x;
            theta = t;
        } else {
            break;
        }
        j += 1;
    }
    let th = T::from_f64(theta.max(0.0));
    b.iter_mut().for_each(|x| *x = x.min(th));
}

/// A max-heap over a slice (values not NaN), for [`prox_linf_nonneg`]: built
/// in place, popped from the front; indexing only through `get`/`swap` on
/// checked positions (no panic path).
struct MaxHeap<'a, T> {
    s: &'a mut [T],
    len: usize,
}

impl<'a, T: Real> MaxHeap<'a, T> {
    fn new(s: &'a mut [T]) -> Self {
        let len = s.len();
        let mut h = MaxHeap { s, len };
        for node in (0..len / 2).rev() {
            h.sift_down(node);
        }
        h
    }

    /// The largest value left.
    fn pop(&mut self) -> Option<T> {
        let last = self.len.checked_sub(1)?;
        let top = *self.s.first()?;
        if let Some(&x) = self.s.get(last) {
            if let Some(d) = self.s.first_mut() {
                *d = x;
            }
        }
        self.len = last;
        self.sift_down(0);
        Some(top)
    }

    fn sift_down(&mut self, mut node: usize) {
        let Some(s) = self.s.get_mut(..self.len) else {
            return;
        };
        loop {
            let mut child = 2 * node + 1;
            let Some(&c0) = s.get(child) else {
                return;
            };
            let mut c = c0;
            if let Some(&c1) = s.get(child + 1) {
                if c1 > c0 {
                    (child, c) = (child + 1, c1);
                }
            }
            let Some(&x) = s.get(node) else {
                return;
            };
            if c <= x {
                return;
            }
            if let Some(a) = s.get_mut(node) {
                *a = c;
            }
            if let Some(b) = s.get_mut(child) {
                *b = x;
            }
            node = child;
        }
    }
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
    params: &MvslParams,
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
    let trace = |g: &[T], n: usize| {
        let diag = g.iter().step_by(n.saturating_add(1)).take(n);
        diag.map(|x| x.to_f64()).sum::<f64>()
    };
    let start = trace(g2, k) * g1.map_or(1.0, |g| trace(g, m));
    let mut l = if *lip > 0.0 {
        *lip / params.eta_down
    } else {
        start
    };
    // Not below T's smallest normal `2^(2 − MAX_EXP)`, so that `1/L` is finite in
    // `T` (issue 31, E1: a dead view accepts every step with `Δ = 0`, its guess
    // halves every outer iteration, and in `f32` after ~130 iterations `1/L`
    // rounded to `inf`; `f64::MIN_POSITIVE` was the bound for `f64` only).
    l = l.max(params.l0).max(min_lipschitz::<T>());
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
            for col in s.t.chunks_exact_mut(m.max(1)) {
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
                    let (m1, k1) = (m.max(1), k.max(1));
                    for (a, g2c) in s.g1d.chunks_exact(m1).zip(g2.chunks_exact(k1)).take(k) {
                        for (d, &g) in s.delta.chunks_exact(m1).zip(g2c) {
                            q += g.to_f64() * dot(a, d);
                        }
                    }
                    (0.5 * q, sq_norm(s.delta))
                }
            };
            // A trial that is not finite (its step `∇f/L` overflowed `T`) is never
            // accepted: `inf ≤ inf` would hold (issue 31, E1); `L` grows instead.
            if lhs.is_finite() && delta2.is_finite() && lhs <= 0.5 * l * delta2 * (1.0 + 1e-12) {
                u.iter_mut().zip(s.t.iter()).for_each(|(d, &x)| *d = x);
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
/// The smallest Lipschitz guess of [`prox_gradient`] in precision `T`: `T`'s
/// smallest normal, `2^(2 − MAX_EXP)` (`2^−1022` for `f64`, `2^−126` for
/// `f32`), so that the step `1/L` is finite in `T`.
fn min_lipschitz<T: Real>() -> f64 {
    libm::scalbn(1.0, 2 - T::MAX_EXP)
}

/// `(½ tr(ΔᵀΔ G), ‖Δ‖²)` for `Δ = T − U` (`m × k`), `O(m k²)`, using `h` (k×k).
fn quad_delta<T: Real>(t: &[T], u: &[T], m: usize, k: usize, g: &[T], h: &mut [T]) -> (f64, f64) {
    // h = ΔᵀΔ, accumulated column pair by column pair in f64.
    let mut d2 = 0.0;
    fn col<T>(x: &[T], m: usize, c: usize) -> &[T] {
        x.get(c * m..(c + 1) * m).unwrap_or_default()
    }
    for a in 0..k {
        for b in 0..=a {
            let (ta, ua) = (col(t, m, a), col(u, m, a));
            let (tb, ub) = (col(t, m, b), col(u, m, b));
            let mut s = 0.0;
            for (((x, y), z), w) in ta.iter().zip(ua).zip(tb).zip(ub) {
                s += (x.to_f64() - y.to_f64()) * (z.to_f64() - w.to_f64());
            }
            for at in [a + b * k, b + a * k] {
                if let Some(x) = h.get_mut(at) {
                    *x = T::from_f64(s);
                }
            }
            if a == b {
                d2 += s;
            }
        }
    }
    (0.5 * dot(h, g), d2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// Brute force for L2: minimise τ‖u‖₂ + ½‖u − b‖² over u ≥ 0 by
    /// coordinate search with shrinking steps (the objective is smooth off 0).
    fn brute(b: &[f64], tau: f64, linf: bool) -> std::vec::Vec<f64> {
        let f = |u: &[f64]| {
            let n = if linf {
                u.iter().fold(0.0f64, |m, x| m.max(x.abs()))
            } else {
                u.iter().map(|x| x * x).sum::<f64>().sqrt()
            };
            tau * n + 0.5 * u.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>()
        };
        let mut u: std::vec::Vec<f64> = b.iter().map(|x| x.max(0.0)).collect();
        let mut step = 0.5;
        while step > 1e-10 {
            let mut improved = true;
            while improved {
                improved = false;
                for i in 0..u.len() {
                    for d in [step, -step] {
                        let old = u[i];
                        u[i] = (old + d).max(0.0);
                        if f(&u)
                            < f(&{
                                let mut w = u.clone();
                                w[i] = old;
                                w
                            }) - 1e-15
                        {
                            improved = true;
                        } else {
                            u[i] = old;
                        }
                    }
                }
            }
            step *= 0.5;
        }
        u
    }

    /// Brute force for L∞: for a fixed level t = max u the best u ≥ 0 is
    /// min([b]₊, t), so minimise the 1-D function of t by a fine scan and
    /// golden-section refinement.
    fn brute_linf(b: &[f64], tau: f64) -> std::vec::Vec<f64> {
        let c: std::vec::Vec<f64> = b.iter().map(|x| x.max(0.0)).collect();
        let f = |t: f64| tau * t + 0.5 * c.iter().map(|x| (x - x.min(t)).powi(2)).sum::<f64>();
        let hi = c.iter().fold(0.0f64, |m, x| m.max(*x));
        let n = 20000;
        let best =
            (0..=n)
                .map(|i| hi * i as f64 / n as f64)
                .fold(0.0, |a, t| if f(t) < f(a) { t } else { a });
        let (mut lo, mut up) = (
            (best - hi / n as f64).max(0.0),
            (best + hi / n as f64).min(hi),
        );
        for _ in 0..200 {
            let (m1, m2) = (lo + (up - lo) * 0.382, lo + (up - lo) * 0.618);
            if f(m1) <= f(m2) {
                up = m2;
            } else {
                lo = m1;
            }
        }
        let t = 0.5 * (lo + up);
        c.iter().map(|x| x.min(t)).collect()
    }

    #[test]
    fn proximal_maps_match_brute_force() {
        let mut g = Rng::new(11);
        for trial in 0..40 {
            let m = 1 + trial % 5;
            let b: std::vec::Vec<f64> = (0..m).map(|_| 2.0 * g.uniform() - 0.6).collect();
            let tau = 0.05 + g.uniform();
            let mut u2 = b.clone();
            prox_l2_nonneg(&mut u2, tau);
            let mut ui = b.clone();
            let mut sc = std::vec![0.0; m];
            prox_linf_nonneg(&mut ui, tau, &mut sc);
            let (r2, ri) = (brute(&b, tau, false), brute_linf(&b, tau));
            for i in 0..m {
                assert!(
                    (u2[i] - r2[i]).abs() < 1e-6,
                    "L2 b={b:?} tau={tau}: {u2:?} vs {r2:?}"
                );
                assert!(
                    (ui[i] - ri[i]).abs() < 1e-6,
                    "Linf b={b:?} tau={tau}: {ui:?} vs {ri:?}"
                );
            }
        }
    }

    /// Issue 15 (fuzz seed 0x173): with `τ` below half an ulp of the largest entry the
    /// first candidate's test read `s₁ > s₁` and the column came out zero; the prox of so
    /// small a `τ` is the column itself (to rounding), whatever its magnitude.
    #[test]
    fn linf_prox_with_threshold_below_an_ulp() {
        let mut sc = [0.0; 3];
        for (b, tau) in [
            ([1.33e6, 0.0, 2.0e5], 2.3e-39),
            ([1.0, 0.5, 0.25], 1e-17),
            ([3.0e200, 1.0e200, 0.0], 1.0),
        ] {
            let mut u = b;
            prox_linf_nonneg(&mut u, tau, &mut sc);
            assert_eq!(u, b, "τ = {tau:e}");
        }
        // Above half an ulp the top entry is cut by τ, as before.
        let mut u = [1.0, 0.5, 0.25];
        prox_linf_nonneg(&mut u, 1e-3, &mut sc);
        assert_eq!(u, [1.0 - 1e-3, 0.5, 0.25]);
    }

    #[test]
    fn group_norms() {
        let u = [3.0, -4.0, 1.0, 2.0]; // columns (3,-4), (1,2)
        assert!((group_norm(Sparsity::L12, &u, 2) - (5.0 + 5f64.sqrt())).abs() < 1e-15);
        assert_eq!(group_norm(Sparsity::L1Inf, &u, 2), 6.0);
        assert_eq!(group_norm(Sparsity::None, &u, 2), 0.0);
    }
}
