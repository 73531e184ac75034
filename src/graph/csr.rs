//! Explicit symmetric graphs in CSR form (caller buffers).

use super::GraphOp;
use crate::error::Error;
use crate::linalg::mat::MatRef;
use crate::linalg::real::Real;
use crate::linalg::sparse::span;
use crate::par::{chunk_len, tasks_for, Parallel, MAX_TASKS};
use crate::work::{Stack, WorkReq};

/// A symmetric nonnegative `n × n` graph in CSR: row `j` holds columns
/// `col_idx[row_ptr[j]..row_ptr[j+1]]` (strictly increasing) with `weights`.
/// Memory `O(nnz)`, not `O(n²)`.
#[derive(Clone, Copy, Debug)]
pub struct CsrGraph<'a> {
    n: usize,
    row_ptr: &'a [usize],
    col_idx: &'a [usize],
    weights: &'a [f64],
}

impl<'a> CsrGraph<'a> {
    /// Validates structure (as for CSC: [`Error::MalformedCsc`]), weights
    /// (finite, `>= 0`) and symmetry (`W_ij == W_ji`, [`Error::BadParameter`]
    /// otherwise) in `O(nnz log d)`.
    pub fn new(
        n: usize,
        row_ptr: &'a [usize],
        col_idx: &'a [usize],
        weights: &'a [f64],
    ) -> Result<Self, Error> {
        Self::new_par(n, row_ptr, col_idx, weights, Parallel::Serial)
    }

    /// [`CsrGraph::new`] with the structure and symmetry checks in tasks on `par`
    /// (rows in contiguous ranges fixed by `n` and `nnz`): the same result, and on a
    /// bad graph the same error, for every pool (the structure is checked in full
    /// before the weights, and the weights before the symmetry, as in the serial
    /// order; every failure of one check has the same code).
    pub fn new_par(
        n: usize,
        row_ptr: &'a [usize],
        col_idx: &'a [usize],
        weights: &'a [f64],
        par: Parallel,
    ) -> Result<Self, Error> {
        if n == 0 {
            return Err(Error::ZeroDimension);
        }
        // `n + 1` checked: for `n = usize::MAX` it wrapped to 0, an empty `row_ptr`
        // passed and `row_ptr[0]` panicked.
        if n.checked_add(1) != Some(row_ptr.len()) {
            return Err(Error::DimensionMismatch);
        }
        let (Some(&first), Some(&nnz)) = (row_ptr.first(), row_ptr.last()) else {
            return Err(Error::DimensionMismatch);
        };
        if first != 0 {
            return Err(Error::MalformedCsc);
        }
        let weights = weights.get(..nnz).ok_or(Error::BufferTooShort)?;
        if nnz > col_idx.len() {
            return Err(Error::BufferTooShort);
        }
        // Rows `lo..hi` of task `t` (contiguous, from `n` and `nnz` alone).
        let tasks = tasks_for(n, nnz.checked_div(n).unwrap_or(0) + 1);
        let chunk = crate::par::chunk_len(n, tasks, 1);
        let rows = |t: usize| {
            let lo = (t * chunk).min(n);
            (lo, lo.saturating_add(chunk).min(n))
        };
        par.run(tasks, &|t| {
            let (lo, hi) = rows(t);
            let ptr = row_ptr.get(lo..=hi).ok_or(Error::MalformedCsc)?;
            for pair in ptr.windows(2) {
                let &[s, e] = pair else {
                    return Err(Error::MalformedCsc);
                };
                let cols = col_idx.get(s..e).filter(|_| e <= nnz);
                let cols = cols.ok_or(Error::MalformedCsc)?;
                let mut prev: Option<usize> = None;
                for &c in cols {
                    if c >= n || prev.is_some_and(|p| c <= p) {
                        return Err(Error::MalformedCsc);
                    }
                    prev = Some(c);
                }
            }
            Ok(())
        })?;
        crate::data::check_values(weights, true)?;
        let g = CsrGraph {
            n,
            row_ptr,
            col_idx,
            weights,
        };
        par.run(tasks, &|t| {
            let (lo, hi) = rows(t);
            for j in lo..hi {
                let (cols, ws) = g.row(j);
                for (&i, &w) in cols.iter().zip(ws) {
                    let (ci, wi) = g.row(i);
                    match ci.binary_search(&j) {
                        Ok(p) if wi.get(p) == Some(&w) => {}
                        _ => return Err(Error::BadParameter),
                    }
                }
            }
            Ok(())
        })?;
        Ok(g)
    }

    /// Items.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Stored edges (both directions count).
    pub fn nnz(&self) -> usize {
        self.weights.len()
    }

    /// Row `j`: (neighbours, weights).
    #[inline]
    pub fn row(&self, j: usize) -> (&'a [usize], &'a [f64]) {
        span(self.row_ptr, j, self.col_idx, self.weights)
    }

    /// Degree `D_jj = Σ_i W_ji`.
    #[inline]
    pub fn degree(&self, j: usize) -> f64 {
        self.row(j).1.iter().sum()
    }
}

/// An affinity graph and a penalty graph (either may be absent) as a [`GraphOp`].
#[derive(Clone, Copy, Debug)]
pub struct CsrGraphs<'a> {
    /// `Wᵃ` (pulls items together).
    pub affinity: Option<CsrGraph<'a>>,
    /// `Wᵖ` (pushes items apart).
    pub penalty: Option<CsrGraph<'a>>,
    n: usize,
}

impl<'a> CsrGraphs<'a> {
    /// Both graphs (if present) must span the same `n` items.
    pub fn new(
        n: usize,
        affinity: Option<CsrGraph<'a>>,
        penalty: Option<CsrGraph<'a>>,
    ) -> Result<Self, Error> {
        for g in [affinity, penalty].iter().flatten() {
            if g.n != n {
                return Err(Error::DimensionMismatch);
            }
        }
        Ok(CsrGraphs {
            affinity,
            penalty,
            n,
        })
    }
}

/// `out[:, j] = D_jj v_j` (`scale_d`) plus `Σ_i W_ji v_i` of the other graph, etc.
fn accumulate<T: Real>(
    g: &CsrGraph<'_>,
    v: &[T],
    k: usize,
    j: usize,
    diag: &mut [f64],
    off: &mut [f64],
) {
    let (cols, ws) = g.row(j);
    let d: f64 = ws.iter().sum();
    // Column `i` of `v` (`k` values; every item `< n` has one).
    let col = |i: usize| v.get(i * k..i * k + k).unwrap_or_default();
    for ((dr, or), x) in diag.iter_mut().zip(off.iter_mut()).zip(col(j)) {
        *dr = d * x.to_f64();
        *or = 0.0;
    }
    for (&i, &w) in cols.iter().zip(ws) {
        for (or, x) in off.iter_mut().zip(col(i)) {
            *or += w * x.to_f64();
        }
    }
}

impl<T: Real> GraphOp<T> for CsrGraphs<'_> {
    fn items(&self) -> usize {
        self.n
    }
    fn has_penalty(&self) -> bool {
        self.penalty.is_some_and(|g| g.nnz() > 0)
    }
    fn is_zero(&self) -> bool {
        let zero = |g: &Option<CsrGraph<'_>>| g.is_none_or(|g| g.weights.iter().all(|&w| w == 0.0));
        zero(&self.affinity) && zero(&self.penalty)
    }

    fn apply_req(&self, k: usize) -> WorkReq {
        let (tasks, _) = self.split(k);
        WorkReq::all_of(&[WorkReq::new::<f64>(k); 4]).times(tasks)
    }

    /// Items in blocks, one task each, on the stack's [`crate::Parallel`]:
    /// every column of `plus` and `minus` is formed as in the serial loop,
    /// and the traces are summed per block, then block by block in order (the
    /// same bits for every thread count).
    fn apply(
        &self,
        v: &[T],
        k: usize,
        plus: &mut [T],
        minus: &mut [T],
        st: &mut Stack<'_>,
    ) -> Result<(f64, f64), Error> {
        let n = self.n;
        let (tasks, chunk) = self.split(k);
        // `v` must hold `K × N` (as for the dense graph; a shorter `v` indexed
        // past its end before, a panic).
        MatRef::col_major(v, k, n)?;
        let (Some(plus), Some(minus)) = (plus.get_mut(..k * n), minus.get_mut(..k * n)) else {
            return Err(Error::Internal);
        };
        let par = st.par();
        let mut st = st.rest();
        let slots = st.take_slots(tasks, WorkReq::all_of(&[WorkReq::new::<f64>(k); 4]))?;
        let blocks = plus
            .chunks_mut((k * chunk).max(1))
            .zip(minus.chunks_mut((k * chunk).max(1)))
            .enumerate()
            .zip(slots);
        let traces = spin::Mutex::new([(0.0f64, 0.0f64); MAX_TASKS]);
        par.run_items(blocks, &|((t, (pl, mi)), slot)| {
            let mut st = Stack::new(slot);
            let da: &mut [f64] = st.take(k)?;
            let wa: &mut [f64] = st.take(k)?;
            let dp: &mut [f64] = st.take(k)?;
            let wp: &mut [f64] = st.take(k)?;
            let (mut ta, mut tp) = (0.0, 0.0);
            let j0 = t * chunk;
            for (jj, (pc, mc)) in pl
                .chunks_exact_mut(k.max(1))
                .zip(mi.chunks_exact_mut(k.max(1)))
                .enumerate()
            {
                let j = j0 + jj;
                da.fill(0.0);
                wa.fill(0.0);
                dp.fill(0.0);
                wp.fill(0.0);
                if let Some(g) = &self.affinity {
                    accumulate(g, v, k, j, da, wa);
                }
                if let Some(g) = &self.penalty {
                    accumulate(g, v, k, j, dp, wp);
                }
                let vj = v.get(j * k..j * k + k).unwrap_or_default();
                let aff = da.iter().zip(wa.iter());
                let pen = dp.iter().zip(wp.iter());
                let rows = pc.iter_mut().zip(mc.iter_mut()).zip(vj).zip(aff.zip(pen));
                for (((p, m), x), ((&d_a, &w_a), (&d_p, &w_p))) in rows {
                    let x = x.to_f64();
                    *p = T::from_f64(d_a + w_p);
                    *m = T::from_f64(d_p + w_a);
                    ta += x * (d_a - w_a);
                    tp += x * (d_p - w_p);
                }
            }
            if let Some(slot) = traces.lock().get_mut(t) {
                *slot = (ta, tp);
            }
            Ok(())
        })?;
        let traces = traces.into_inner();
        let (mut ta, mut tp) = (0.0, 0.0);
        for &(a, p) in traces.iter().take(tasks) {
            ta += a;
            tp += p;
        }
        Ok((ta, tp))
    }
}

impl CsrGraphs<'_> {
    /// The fixed split of [`GraphOp::apply`] over the items: `(tasks, items
    /// per task)`, from the shape alone.
    fn split(&self, k: usize) -> (usize, usize) {
        let nnz = [self.affinity, self.penalty]
            .iter()
            .flatten()
            .map(|g| g.nnz())
            .sum::<usize>();
        let per_item = (nnz / self.n.max(1) + 2).saturating_mul(k);
        let tasks = tasks_for(self.n, per_item);
        let chunk = chunk_len(self.n, tasks, 1);
        (self.n.div_ceil(chunk.max(1)), chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::tests::dense_apply;
    use crate::rng::Rng;
    use std::vec::Vec;

    fn to_csr(w: &[f64], n: usize) -> (Vec<usize>, Vec<usize>, Vec<f64>) {
        let (mut rp, mut ci, mut ws) = (std::vec![0], Vec::new(), Vec::new());
        for j in 0..n {
            for i in 0..n {
                if w[j * n + i] != 0.0 {
                    ci.push(i);
                    ws.push(w[j * n + i]);
                }
            }
            rp.push(ci.len());
        }
        (rp, ci, ws)
    }

    #[test]
    fn csr_products_equal_dense_and_symmetry_is_checked() {
        let (n, k) = (15, 3);
        let mut g = Rng::new(1);
        let mut sym = |p: f64| {
            let mut w = std::vec![0.0; n * n];
            for i in 0..n {
                for j in 0..i {
                    if g.uniform() < p {
                        let x = g.uniform();
                        w[i * n + j] = x;
                        w[j * n + i] = x;
                    }
                }
            }
            w
        };
        let (wa, wp) = (sym(0.3), sym(0.2));
        let mut g = Rng::new(2);
        let v: Vec<f64> = (0..k * n).map(|_| g.uniform()).collect();
        let (a, p) = (to_csr(&wa, n), to_csr(&wp, n));
        let ga = CsrGraph::new(n, &a.0, &a.1, &a.2).unwrap();
        let gp = CsrGraph::new(n, &p.0, &p.1, &p.2).unwrap();
        let gs = CsrGraphs::new(n, Some(ga), Some(gp)).unwrap();
        let mut w = std::vec![0u8; GraphOp::<f64>::apply_req(&gs, k).bytes().unwrap()];
        let (mut pl, mut mi) = (std::vec![0.0; k * n], std::vec![0.0; k * n]);
        let (ta, tp) = gs
            .apply(&v, k, &mut pl, &mut mi, &mut Stack::new(&mut w))
            .unwrap();
        let (p0, m0, ta0, tp0) = dense_apply(&wa, &wp, n, &v, k);
        for i in 0..k * n {
            assert!((pl[i] - p0[i]).abs() < 1e-12 && (mi[i] - m0[i]).abs() < 1e-12);
        }
        assert!((ta - ta0).abs() < 1e-12 && (tp - tp0).abs() < 1e-12);
        // An asymmetric weight is refused.
        let mut bad = a.2.clone();
        bad[0] += 1.0;
        assert_eq!(
            CsrGraph::new(n, &a.0, &a.1, &bad).err(),
            Some(Error::BadParameter)
        );
    }
}
