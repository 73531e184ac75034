//! The MKL weight problem: a small quadratic program on the probability simplex,
//!
//! ```text
//! min_η  ηᵀAη − 2bᵀη      s.t.  η ≥ 0,  Σ η = 1          (A symmetric positive semidefinite, H × H)
//! ```
//!
//! solved exactly. Every solution satisfies, for some `μ`, `(Aη)_v + μ = b_v` on its support and
//! `(Aη)_v + μ ≥ b_v` off it (KKT). For `H ≤ 16` every support `S` is tried: the equality-
//! constrained stationary point on the face of `S` comes from one `(|S|+1)`-square linear solve
//! (`[A_SS 1; 1ᵀ 0] [η_S; μ] = [b_S; 1]`, partial pivoting; singular systems skipped), and the best
//! feasible one is the global minimum (an optimal point with a minimal support always has a
//! nonsingular system: a null vector would be a direction of constant objective along which the
//! support shrinks). Ties go to the support enumerated first. For `H > 16` a primal active-set
//! method (finite for strictly convex problems) runs on `A + δI`, `δ = 1e-12·max|A|`. The problem
//! is scaled by `max|A|` first, so tolerances are relative.

use crate::error::{Error, Part};
use crate::linalg::{at, set_at, swap_at};
use crate::work::{Stack, WorkReq};

/// Largest `H` solved by enumerating supports.
const ENUM_MAX: usize = 16;

/// What `simplex_qp` reports.
// `repr(C)`: the C ABI's `mvnmf_qp_report` (renamed in cbindgen.toml), these docs
// included: a change here changes the C ABI.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QpReport {
    /// `ηᵀAη − 2bᵀη` at the solution.
    pub objective: f64,
    /// The KKT residual, relative to `max(max|A|, max|b|)`: stationarity on the support,
    /// dual feasibility off it, `|Σ η − 1|` (negative entries cannot occur). About 1e-15..1e-12.
    pub kkt_residual: f64,
    /// Nonzero weights.
    pub support: usize,
}

/// Workspace bytes of [`simplex_qp`] for `h` weights.
pub fn simplex_qp_workspace(h: usize) -> Result<usize, Error> {
    // The shape checks of [`simplex_qp`]: `h ≥ 1`, and `a` (`h × h`) addressable.
    if h == 0 {
        return Err(Error::ZeroDimension);
    }
    h.checked_mul(h)
        .and_then(|n| n.checked_mul(core::mem::size_of::<f64>()))
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or(Error::SizeOverflow)?;
    workspace(h).bytes()
}

pub(crate) fn workspace(h: usize) -> WorkReq {
    let h1 = h.saturating_add(1);
    WorkReq::all_of(&[
        WorkReq::matrix::<f64>(h1, h1.saturating_add(1)),
        WorkReq::matrix::<f64>(h, 5),
        WorkReq::new::<usize>(h),
        WorkReq::new::<u8>(h),
    ])
}

/// Solves `min ηᵀAη − 2bᵀη` on the simplex (see the module docs). `a` is `h × h` (symmetric,
/// column-major), `b` has `h` entries, `eta` receives the solution.
///
/// Errors: `h = 0` ([`Error::ZeroDimension`]), lengths ([`Error::DimensionMismatch`]),
/// non-finite entries, or entries above `f64::MAX / 4` in magnitude, for which the objective
/// could overflow ([`Error::NonFiniteInput`]), `a` not symmetric to 1e-12 relative
/// ([`Error::BadParameter`]), workspace.
pub fn simplex_qp(
    a: &[f64],
    b: &[f64],
    eta: &mut [f64],
    work: &mut [u8],
) -> Result<QpReport, Error> {
    let h = b.len();
    if h == 0 {
        return Err(Error::ZeroDimension);
    }
    if a.len() != h.checked_mul(h).ok_or(Error::SizeOverflow)? || eta.len() != h {
        return Err(Error::DimensionMismatch);
    }
    crate::data::check_values(a, false)?;
    crate::data::check_values(b, false)?;
    let amax = a.iter().fold(0.0f64, |m, x| m.max(libm::fabs(*x)));
    let bmax = b.iter().fold(0.0f64, |m, x| m.max(libm::fabs(*x)));
    // On the simplex |ηᵀAη| <= max|A| and |bᵀη| <= max|b|: the objective (and the report) is
    // finite when both are at most DBL_MAX/4; larger entries could overflow it (issue 15).
    if amax > f64::MAX / 4.0 || bmax > f64::MAX / 4.0 {
        return Err(Error::NonFiniteInput);
    }
    for i in 0..h {
        for j in 0..i {
            if libm::fabs(at(a, i + j * h) - at(a, j + i * h)) > 1e-12 * amax {
                return Err(Error::BadParameter);
            }
        }
    }
    workspace(h).check(work.len())?;
    let mut st = Stack::new(work);
    solve(a, b, eta, &mut st, h > ENUM_MAX)
}

/// The solver proper (inputs validated); `active_set` forces the method.
pub(crate) fn solve(
    a: &[f64],
    b: &[f64],
    eta: &mut [f64],
    st: &mut Stack<'_>,
    active_set: bool,
) -> Result<QpReport, Error> {
    let h = b.len();
    let kkt: &mut [f64] = st.take_matrix(h + 1, h + 2)?;
    let vecs: &mut [f64] = st.take_matrix(h, 5)?;
    let idx: &mut [usize] = st.take(h)?;
    let free: &mut [u8] = st.take(h)?;
    let (x, rest) = vecs.split_at_mut(h);
    let (y, rest) = rest.split_at_mut(h);
    let (best, rest) = rest.split_at_mut(h);
    let (ax, _) = rest.split_at_mut(h);
    // Scale so that max|A| = 1 (or max|b| = 1 when A = 0, or when b dominates A by more than
    // 2^20: `b / max|A|` could overflow, and beyond ~2^52 the face solve's back-substitution
    // cancels to η = 0 on every face — both found by the fuzz driver (issue 15): A = 1e-111,
    // b = -3.6e79 and A = 5e136, b = -4.5e153 ended as internal errors).
    let amax = a.iter().fold(0.0f64, |m, v| m.max(libm::fabs(*v)));
    let bmax = b.iter().fold(0.0f64, |m, v| m.max(libm::fabs(*v)));
    let alpha = if amax > 0.0 && bmax <= amax * 1048576.0 {
        amax
    } else if bmax > 0.0 {
        bmax
    } else {
        1.0
    };
    let s = |i: usize, j: usize| at(a, i + j * h) / alpha;
    let sb = |i: usize| at(b, i) / alpha;
    if active_set {
        let delta = if amax > 0.0 { 1e-12 } else { 0.0 };
        active(h, &s, &sb, delta, kkt, x, y, ax, free, idx)?;
        best.copy_from_slice(x);
    } else {
        let mut best_f = f64::INFINITY;
        for mask in 1u32..(1u32 << h) {
            let mut m = 0;
            for v in 0..h {
                if mask & (1 << v) != 0 {
                    set_at(idx, m, v);
                    m += 1;
                }
            }
            if face_solve(m, idx, &s, &sb, 0.0, kkt, y).is_none() {
                continue;
            }
            if y.iter().take(m).any(|&t| t < -1e-12) {
                continue;
            }
            x.fill(0.0);
            let mut sum = 0.0;
            for (&i, &yp) in idx.iter().zip(y.iter()).take(m) {
                let t = yp.max(0.0);
                set_at(x, i, t);
                sum += t;
            }
            if sum <= 0.0 {
                continue;
            }
            x.iter_mut().for_each(|t| *t /= sum);
            let f = objective(h, &s, &sb, x);
            if f < best_f {
                best_f = f;
                best.copy_from_slice(x);
            }
        }
        if !best_f.is_finite() {
            return Err(Error::Internal);
        }
    }
    // `eta.len() == h` was checked on entry.
    eta.copy_checked(best)?;
    let objective = objective(h, &|i, j| at(a, i + j * h), &|i| at(b, i), eta);
    let (kkt_residual, support) = residual(a, b, eta, ax, bmax.max(amax));
    Ok(QpReport {
        objective,
        kkt_residual,
        support,
    })
}

#[allow(clippy::needless_range_loop)]
fn objective(
    h: usize,
    a: &impl Fn(usize, usize) -> f64,
    b: &impl Fn(usize) -> f64,
    x: &[f64],
) -> f64 {
    let mut f = 0.0;
    for (i, &xi) in x.iter().enumerate().take(h) {
        let mut r = 0.0;
        for (j, &xj) in x.iter().enumerate().take(h) {
            r += a(i, j) * xj;
        }
        f += xi * (r - 2.0 * b(i));
    }
    f
}

/// KKT residual (relative to `scale`) and support size of `x`.
fn residual(a: &[f64], b: &[f64], x: &[f64], g: &mut [f64], scale: f64) -> (f64, usize) {
    let h = b.len();
    let mut support = 0;
    let mut mu = 0.0;
    for (i, ((gi, &bi), &xi)) in g.iter_mut().zip(b).zip(x).enumerate() {
        *gi = (0..h).map(|j| at(a, i + j * h) * at(x, j)).sum::<f64>() - bi;
        if xi > 0.0 {
            support += 1;
            mu -= *gi;
        }
    }
    mu /= support.max(1) as f64;
    let mut r = libm::fabs(x.iter().sum::<f64>() - 1.0);
    for (&gi, &xi) in g.iter().zip(x).take(h) {
        let z = gi + mu;
        r = r.max(if xi > 0.0 {
            libm::fabs(z)
        } else {
            (-z).max(0.0)
        });
    }
    let scale = if scale > 0.0 { scale } else { 1.0 };
    (r / scale, support)
}

/// Solves `[A_SS + δI 1; 1ᵀ 0] [y; μ] = [b_S; 1]` for the support `idx[..m]`; `y[..m]` receives
/// `η_S` and the result is `μ`, or `None` when the system is singular.
fn face_solve(
    m: usize,
    idx: &[usize],
    a: &impl Fn(usize, usize) -> f64,
    b: &impl Fn(usize) -> f64,
    delta: f64,
    kkt: &mut [f64],
    y: &mut [f64],
) -> Option<f64> {
    let n = m + 1;
    let w = n + 1;
    // The system is `n × w` (the right-hand side in column `n`), row `r` at `r·w`.
    if kkt.len() < n.checked_mul(w)? || idx.len() < m || y.len() < m {
        return None;
    }
    let kk = |kkt: &[f64], r: usize, c: usize| at(kkt, r * w + c);
    for r in 0..n {
        for c in 0..n {
            let v = match (r < m, c < m) {
                (true, true) => a(at(idx, r), at(idx, c)) + if r == c { delta } else { 0.0 },
                (true, false) | (false, true) => 1.0,
                (false, false) => 0.0,
            };
            set_at(kkt, r * w + c, v);
        }
        set_at(kkt, r * w + n, if r < m { b(at(idx, r)) } else { 1.0 });
    }
    // Gaussian elimination with partial pivoting (entries are O(1) after scaling).
    for p in 0..n {
        let mut piv = p;
        for r in p + 1..n {
            if libm::fabs(kk(kkt, r, p)) > libm::fabs(kk(kkt, piv, p)) {
                piv = r;
            }
        }
        if libm::fabs(kk(kkt, piv, p)) < 1e-13 {
            return None;
        }
        if piv != p {
            for c in 0..w {
                swap_at(kkt, p * w + c, piv * w + c);
            }
        }
        let d = kk(kkt, p, p);
        for r in p + 1..n {
            let f = kk(kkt, r, p) / d;
            if f != 0.0 {
                for c in p..w {
                    let v = kk(kkt, r, c) - f * kk(kkt, p, c);
                    set_at(kkt, r * w + c, v);
                }
            }
        }
    }
    for r in (0..n).rev() {
        let mut s = kk(kkt, r, n);
        for c in r + 1..n {
            s -= kk(kkt, r, c) * kk(kkt, c, n);
        }
        set_at(kkt, r * w + n, s / kk(kkt, r, r));
    }
    for (r, yr) in y.iter_mut().enumerate().take(m) {
        *yr = kk(kkt, r, n);
    }
    Some(kk(kkt, m, n))
}

/// Primal active-set method (Nocedal & Wright, Alg. 16.3) on the scaled problem.
#[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
fn active(
    h: usize,
    a: &impl Fn(usize, usize) -> f64,
    b: &impl Fn(usize) -> f64,
    delta: f64,
    kkt: &mut [f64],
    x: &mut [f64],
    y: &mut [f64],
    g: &mut [f64],
    free: &mut [u8],
    idx: &mut [usize],
) -> Result<(), Error> {
    // Start at the best vertex.
    let mut v0 = 0;
    for v in 1..h {
        if a(v, v) - 2.0 * b(v) < a(v0, v0) - 2.0 * b(v0) {
            v0 = v;
        }
    }
    x.fill(0.0);
    set_at(x, v0, 1.0);
    free.fill(0);
    set_at(free, v0, 1);
    for _ in 0..(50 * h + 100) {
        let mut m = 0;
        for (v, &f) in free.iter().enumerate().take(h) {
            if f != 0 {
                set_at(idx, m, v);
                m += 1;
            }
        }
        let mu = face_solve(m, idx, a, b, delta, kkt, y).ok_or(Error::Internal)?;
        if y.iter().take(m).all(|&t| t >= 0.0) {
            x.fill(0.0);
            for (&i, &yp) in idx.iter().zip(y.iter()).take(m) {
                set_at(x, i, yp);
            }
            // Multipliers of the bounds z_v = (Ax)_v + μ − b_v; add the most negative.
            let mut add = None;
            let mut zmin = -1e-14;
            for (v, (gv, &f)) in g.iter_mut().zip(free.iter()).enumerate().take(h) {
                if f != 0 {
                    continue;
                }
                *gv = (0..h)
                    .map(|j| (a(v, j) + if v == j { delta } else { 0.0 }) * at(x, j))
                    .sum();
                let z = *gv + mu - b(v);
                if z < zmin {
                    zmin = z;
                    add = Some(v);
                }
            }
            match add {
                None => return Ok(()),
                Some(v) => set_at(free, v, 1),
            }
        } else {
            // Step toward y until the first free weight reaches 0.
            let mut step = 1.0;
            let mut block = None;
            for (&i, &yi) in idx.iter().zip(y.iter()).take(m) {
                let xi = at(x, i);
                if yi < 0.0 {
                    let t = xi / (xi - yi);
                    if t < step {
                        step = t;
                        block = Some(i);
                    }
                }
            }
            for (&i, &yp) in idx.iter().zip(y.iter()).take(m) {
                let Some(xi) = x.get_mut(i) else {
                    continue;
                };
                *xi += step * (yp - *xi);
                if *xi <= 0.0 {
                    *xi = 0.0;
                    set_at(free, i, 0);
                }
            }
            if let Some(i) = block {
                set_at(x, i, 0.0);
                set_at(free, i, 0);
            }
            let s: f64 = x.iter().sum();
            x.iter_mut().for_each(|t| *t /= s);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn random_psd(h: usize, rank: usize, seed: u64) -> (std::vec::Vec<f64>, std::vec::Vec<f64>) {
        let mut g = Rng::new(seed);
        let f: std::vec::Vec<f64> = (0..h * rank).map(|_| g.uniform() - 0.3).collect();
        let mut a = std::vec![0.0; h * h];
        for i in 0..h {
            for j in 0..h {
                a[i + j * h] = (0..rank).map(|r| f[i + r * h] * f[j + r * h]).sum();
            }
        }
        let b = (0..h).map(|_| g.uniform() - 0.2).collect();
        (a, b)
    }

    #[test]
    fn active_set_equals_enumeration() {
        for seed in 0..60u64 {
            let h = 2 + (seed as usize % 8);
            let rank = if seed % 3 == 0 {
                h
            } else {
                1 + seed as usize % h
            };
            let (mut a, b) = random_psd(h, rank, seed);
            for i in 0..h {
                a[i + i * h] += 1e-3; // strictly convex: the minimiser is unique
            }
            let mut w = std::vec![0u8; workspace(h).bytes().unwrap()];
            let (mut e1, mut e2) = (std::vec![0.0; h], std::vec![0.0; h]);
            let r1 = solve(&a, &b, &mut e1, &mut Stack::new(&mut w), false).unwrap();
            let r2 = solve(&a, &b, &mut e2, &mut Stack::new(&mut w), true).unwrap();
            for v in 0..h {
                assert!((e1[v] - e2[v]).abs() < 1e-9, "seed {seed}: {e1:?} {e2:?}");
            }
            assert!(
                r1.kkt_residual < 1e-12 && r2.kkt_residual < 1e-9,
                "{r1:?} {r2:?}"
            );
        }
    }

    #[test]
    fn singular_and_zero_problems() {
        // Two identical views (A singular, no ridge): any split of their weight is optimal;
        // the enumeration returns a minimal support.
        let a = [1.0, 1.0, 1.0, 1.0];
        let b = [0.5, 0.5];
        let mut e = [0.0; 2];
        let mut w = std::vec![0u8; simplex_qp_workspace(2).unwrap()];
        let r = simplex_qp(&a, &b, &mut e, &mut w).unwrap();
        assert_eq!(r.support, 1);
        assert!((r.objective - 0.0).abs() < 1e-15 && r.kkt_residual < 1e-15);
        // A = 0: the best vertex (largest b, lowest index on ties).
        let r = simplex_qp(&[0.0; 4], &[0.3, 0.7], &mut e, &mut w).unwrap();
        assert_eq!(e, [0.0, 1.0]);
        assert_eq!(r.support, 1);
    }
}
