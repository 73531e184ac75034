//! Every dense product goes through here (DESIGN §11).
//!
//! * no_std: [`blocked::gemm`], an allocation-free Goto-style GEMM that packs
//!   panels of A and B into the caller's workspace and runs a register-tiled
//!   `MR × NR` micro-kernel written so that the compiler vectorises it.
//! * `std`: the `gemm` crate's kernels (run-time AVX/AVX2/AVX-512/FMA detection),
//!   reached through [`crate::Real`]'s hosted hook; they allocate their own
//!   packing buffers. The workspace queries still reserve the blocked kernel's
//!   panels, so a query's answer does not depend on the build.
//!
//! nalgebra's gemm is not used on any path: without std it is a naive loop, and
//! with a strided left operand it is unsound (nalgebra issue #1616).

pub(crate) mod blocked;

use crate::error::Error;
use crate::mat::{MatMut, MatRef};
use crate::real::Real;
use crate::work::{Stack, WorkReq};

/// Workspace of [`gemm`] for `C (m×n) ← α A (m×k) B (k×n) + β C`.
pub(crate) fn gemm_workspace<T>(m: usize, n: usize, k: usize) -> WorkReq {
    blocked::workspace::<T>(m, n, k)
}

/// `C ← α·A·B + β·C`. When `β = 0`, `C` is not read (NaN in it does not leak).
pub(crate) fn gemm<T: Real>(
    alpha: T,
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    beta: T,
    mut c: MatMut<'_, T>,
    st: &mut Stack<'_>,
) -> Result<(), Error> {
    let (m, n, k) = (c.rows(), c.cols(), a.cols());
    if a.rows() != m || b.cols() != n || b.rows() != k {
        return Err(Error::Internal);
    }
    if m == 0 || n == 0 {
        return Ok(());
    }
    if k == 0 || alpha == T::ZERO {
        scale(beta, &mut c);
        return Ok(());
    }
    if T::gemm_hosted(alpha, a, b, beta, c.rb()) {
        return Ok(());
    }
    blocked::gemm(alpha, a, b, beta, c, st)
}

/// `C ← β C` (`β = 0` writes zeros without reading).
pub(crate) fn scale<T: Real>(beta: T, c: &mut MatMut<'_, T>) {
    if beta == T::ONE {
        return;
    }
    for j in 0..c.cols() {
        let col = c.col_mut(j);
        if beta == T::ZERO {
            col.fill(T::ZERO);
        } else {
            col.iter_mut().for_each(|x| *x *= beta);
        }
    }
}

/// `Σ a_i b_i` accumulated in f64.
#[inline]
pub(crate) fn dot<T: Real>(a: &[T], b: &[T]) -> f64 {
    // Four partial sums: vectorisable and less rounding than one chain.
    let mut s = [0.0f64; 4];
    let mut ca = a.chunks_exact(4);
    let mut cb = b.chunks_exact(4);
    for (x, y) in (&mut ca).zip(&mut cb) {
        for i in 0..4 {
            s[i] += x[i].to_f64() * y[i].to_f64();
        }
    }
    let mut r = (s[0] + s[1]) + (s[2] + s[3]);
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        r += x.to_f64() * y.to_f64();
    }
    r
}

/// `Σ a_i²` in f64.
#[inline]
pub(crate) fn sq_norm<T: Real>(a: &[T]) -> f64 {
    dot(a, a)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::rng::Rng;

    fn check(m: usize, n: usize, k: usize, ta: bool, tb: bool, beta: f64, hosted: bool) {
        let mut rng = Rng::new(((m * 31 + n) * 17 + k) as u64);
        let mut a = std::vec![0.0; m * k];
        let mut b = std::vec![0.0; k * n];
        let mut c = std::vec![0.0; m * n];
        a.iter_mut().for_each(|x| *x = rng.uniform() - 0.5);
        b.iter_mut().for_each(|x| *x = rng.uniform() - 0.5);
        c.iter_mut().for_each(|x| *x = rng.uniform());
        let c0 = c.clone();
        let av = if ta {
            MatRef::col_major(&a, k, m).unwrap().t()
        } else {
            MatRef::col_major(&a, m, k).unwrap()
        };
        let bv = if tb {
            MatRef::col_major(&b, n, k).unwrap().t()
        } else {
            MatRef::col_major(&b, k, n).unwrap()
        };
        let need = gemm_workspace::<f64>(m, n, k).bytes().unwrap();
        let mut w = std::vec![0u8; need];
        let mut st = Stack::new(&mut w);
        let cm = MatMut::col_major(&mut c, m, n).unwrap();
        if hosted {
            gemm(1.5, av, bv, beta, cm, &mut st).unwrap();
        } else {
            blocked::gemm(1.5, av, bv, beta, cm, &mut st).unwrap();
        }
        for j in 0..n {
            for i in 0..m {
                let mut s = 0.0;
                for p in 0..k {
                    s += av.at(i, p) * bv.at(p, j);
                }
                let want = 1.5 * s + beta * c0[i + j * m];
                let got = c[i + j * m];
                assert!(
                    (want - got).abs() <= 1e-13 * (k as f64 + 1.0),
                    "m{m} n{n} k{k} ta{ta} tb{tb} ({i},{j}) {want} {got}"
                );
            }
        }
    }

    #[test]
    fn blocked_matches_naive() {
        for &(m, n, k) in &[
            (1, 1, 1),
            (7, 3, 5),
            (8, 4, 256),
            (9, 5, 257),
            (130, 70, 300),
            (33, 2049, 3),
            (300, 9, 40),
        ] {
            for &(ta, tb) in &[(false, false), (true, false), (false, true), (true, true)] {
                check(m, n, k, ta, tb, 0.0, false);
                check(m, n, k, ta, tb, 0.5, false);
                check(m, n, k, ta, tb, 0.5, true);
            }
        }
    }

    #[test]
    fn beta_zero_ignores_nan() {
        let a = [1.0, 2.0];
        let b = [3.0];
        let mut c = [f64::NAN, f64::NAN];
        let need = gemm_workspace::<f64>(2, 1, 1).bytes().unwrap();
        let mut w = std::vec![0u8; need];
        let mut st = Stack::new(&mut w);
        blocked::gemm(
            1.0,
            MatRef::col_major(&a, 2, 1).unwrap(),
            MatRef::col_major(&b, 1, 1).unwrap(),
            0.0,
            MatMut::col_major(&mut c, 2, 1).unwrap(),
            &mut st,
        )
        .unwrap();
        assert_eq!(c, [3.0, 6.0]);
    }
}
