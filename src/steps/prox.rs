//! Exact nonnegative proximal maps of the group norms (DESIGN §4).
//!
//! Both norms are absolute and monotone, so `prox_{τR + ι(U ≥ 0)}(b)` is the
//! norm's prox applied to `[b]₊`. Columns of `U` are the groups.

use crate::linalg::real::Real;

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
/// `min(c, θ)` with `θ > 0` solving `Σ max(c_i − θ, 0) = τ` (found by sorting a
/// copy in `scratch`, `len ≥ b.len()`). Cost `O(M log M)`.
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
    let s = &mut scratch[..m];
    s.copy_from_slice(b);
    s.sort_unstable_by(|x, y| y.partial_cmp(x).unwrap_or(core::cmp::Ordering::Equal));
    // θ = (Σ_{i≤ρ} s_i − τ)/ρ for the largest ρ with s_ρ > θ_ρ.
    let (mut cum, mut theta) = (0.0, 0.0);
    for (j, x) in s.iter().enumerate() {
        let x = x.to_f64();
        let t = (cum + x - tau) / (j + 1) as f64;
        if x > t {
            cum += x;
            theta = t;
        } else {
            break;
        }
    }
    let th = T::from_f64(theta.max(0.0));
    b.iter_mut().for_each(|x| *x = x.min(th));
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

    #[test]
    fn group_norms() {
        let u = [3.0, -4.0, 1.0, 2.0]; // columns (3,-4), (1,2)
        assert!((group_norm(Sparsity::L12, &u, 2) - (5.0 + 5f64.sqrt())).abs() < 1e-15);
        assert_eq!(group_norm(Sparsity::L1Inf, &u, 2), 6.0);
        assert_eq!(group_norm(Sparsity::None, &u, 2), 0.0);
    }
}
