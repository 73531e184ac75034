//! A dense symmetric affinity graph (`n × n`, caller buffer): MVEL's fused
//! multi-view graph (`crate::graph::fused_graph`) or any graph a caller has
//! as a matrix. Memory `n²` values; each product is one GEMM, `2Kn²` flops.

use super::GraphOp;
use crate::error::Error;
use crate::linalg::mat::{MatMut, MatRef};
use crate::linalg::real::Real;
use crate::linalg::{gemm, gemm_req};
use crate::work::{Stack, WorkReq};

/// A symmetric nonnegative affinity matrix `W` (`n × n`, column-major); no
/// penalty graph. `Lᵃ = D − W` (self-loops cancel in it).
#[derive(Clone, Copy, Debug)]
pub struct DenseGraph<'a, T> {
    n: usize,
    w: &'a [T],
}

impl<'a, T: Real> DenseGraph<'a, T> {
    /// Checks the shape ([`Error::ZeroDimension`], [`Error::DimensionMismatch`]),
    /// the values (finite, `≥ 0`) and symmetry (exact; [`Error::BadParameter`]
    /// otherwise), `O(n²)`.
    pub fn new(w: &'a [T], n: usize) -> Result<Self, Error> {
        if n == 0 {
            return Err(Error::ZeroDimension);
        }
        if n.checked_mul(n) != Some(w.len()) {
            return Err(Error::DimensionMismatch);
        }
        crate::data::check_values(w, true)?;
        for j in 0..n {
            for i in j + 1..n {
                if w.get(i + j * n) != w.get(j + i * n) {
                    return Err(Error::BadParameter);
                }
            }
        }
        Ok(DenseGraph { n, w })
    }

    /// Items.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The matrix (column-major).
    pub fn weights(&self) -> &'a [T] {
        self.w
    }
}

impl<T: Real> GraphOp<T> for DenseGraph<'_, T> {
    fn items(&self) -> usize {
        self.n
    }
    fn has_penalty(&self) -> bool {
        false
    }

    fn apply_req(&self, k: usize) -> WorkReq {
        WorkReq::new::<f64>(self.n).and(gemm_req::<T>(k, self.n, self.n))
    }

    fn apply(
        &self,
        v: &[T],
        k: usize,
        plus: &mut [T],
        minus: &mut [T],
        st: &mut Stack<'_>,
    ) -> Result<(f64, f64), Error> {
        let n = self.n;
        let mut st = st.rest();
        let deg: &mut [f64] = st.take(n)?;
        // Column j of the `n × n` weights, of `v`, `plus`, `minus` (`k × n`).
        for (d, wj) in deg.iter_mut().zip(self.w.chunks_exact(n.max(1))) {
            *d = wj.iter().map(|x| x.to_f64()).sum();
        }
        gemm(
            T::ONE,
            MatRef::col_major(v, k, n)?,
            MatRef::col_major(self.w, n, n)?,
            T::ZERO,
            MatMut::col_major(minus, k, n)?,
            &mut st,
        )?;
        let mut ta = 0.0;
        let k1 = k.max(1);
        let cols = v.chunks_exact(k1).zip(plus.chunks_exact_mut(k1));
        for ((vj, pj), (mj, &dj)) in cols.zip(minus.chunks_exact(k1).zip(deg.iter())) {
            for ((&x, p), &m) in vj.iter().zip(pj.iter_mut()).zip(mj) {
                *p = x * T::from_f64(dj);
                ta += x.to_f64() * (*p - m).to_f64();
            }
        }
        Ok((ta, 0.0))
    }
}
