//! SGE, the simple graph embedding (seeds 000 §3.2, 003 §4), as an implicit operator.

use super::GraphOp;
use crate::data::UNLABELED;
use crate::error::Error;
use crate::linalg::real::Real;
use crate::work::{Stack, WorkReq};

/// The simple graph embedding over the labeled items:
///
/// ```text
/// Wᵃ_ij = 1/N_c − 1/N^l   labeled i ≠ j of the same class c
/// Wᵖ_ij = 1/N^l           labeled i, j of different classes
/// ```
///
/// (`N_c` labeled items in class c, `N^l` labeled in all; unlabeled items are in
/// no graph). Never materialised: with class sums `S_kc = Σ_{i∈c} V_ki` and
/// `T_k = Σ_c S_kc`, `(Wᵃ v̄_k)_j = w_c (S_kc − V_kj)`, `Dᵃ_jj = (N_c − 1) w_c`,
/// `(Wᵖ v̄_k)_j = (T_k − S_kc)/N^l`, `Dᵖ_jj = (N^l − N_c)/N^l`. Cost `O(K·N)` per
/// product, workspace `K·C`.
#[derive(Clone, Copy, Debug)]
pub struct Sge<'a> {
    labels: &'a [u32],
    n_classes: usize,
}

impl<'a> Sge<'a> {
    /// `labels[j]` is a class `< n_classes` or [`UNLABELED`]. At least two
    /// labeled items are needed ([`Error::TooFewLabeled`]).
    pub fn new(labels: &'a [u32], n_classes: usize) -> Result<Self, Error> {
        if labels.is_empty() || n_classes == 0 {
            return Err(Error::ZeroDimension);
        }
        let mut nl = 0;
        for &l in labels {
            if l != UNLABELED {
                if l as usize >= n_classes {
                    return Err(Error::BadLabel);
                }
                nl += 1;
            }
        }
        if nl < 2 {
            return Err(Error::TooFewLabeled);
        }
        Ok(Sge { labels, n_classes })
    }
}

impl<T: Real> GraphOp<T> for Sge<'_> {
    fn items(&self) -> usize {
        self.labels.len()
    }

    fn apply_req(&self, k: usize) -> WorkReq {
        WorkReq::all_of(&[
            WorkReq::matrix::<f64>(k, self.n_classes),
            WorkReq::new::<usize>(self.n_classes),
        ])
    }

    fn apply(
        &self,
        v: &[T],
        k: usize,
        plus: &mut [T],
        minus: &mut [T],
        st: &mut Stack<'_>,
    ) -> Result<(f64, f64), Error> {
        let c = self.n_classes;
        let mut st = st.rest();
        let sums: &mut [f64] = st.take_matrix(k, c)?; // column c: S_·c
        let counts: &mut [usize] = st.take(c)?;
        sums.fill(0.0);
        counts.fill(0);
        // Columns of V, of plus and minus, and of `sums` by chunks of k
        // (labels below n_classes: `Sge::new` checked them; no panic path).
        let k1 = k.max(1);
        for (&l, vj) in self.labels.iter().zip(v.chunks_exact(k1)) {
            if l != UNLABELED {
                let l = l as usize;
                if let (Some(n), Some(sl)) = (counts.get_mut(l), sums.get_mut(l * k..(l + 1) * k)) {
                    *n += 1;
                    for (s, &x) in sl.iter_mut().zip(vj) {
                        *s += x.to_f64();
                    }
                }
            }
        }
        let nl = counts.iter().sum::<usize>() as f64;
        let (mut ta, mut tp) = (0.0, 0.0);
        let pm = plus.chunks_exact_mut(k1).zip(minus.chunks_exact_mut(k1));
        for ((&l, vj), (pj, mj)) in self.labels.iter().zip(v.chunks_exact(k1)).zip(pm) {
            let l = l as usize;
            let found = (counts.get(l), sums.get(l * k..(l + 1) * k));
            let (false, Some(&nc), Some(sl)) = (l == UNLABELED as usize, found.0, found.1) else {
                // Unlabeled (or, never, a label past the classes).
                pj.fill(T::ZERO);
                mj.fill(T::ZERO);
                continue;
            };
            let nc = nc as f64;
            let wc = 1.0 / nc - 1.0 / nl;
            let da = (nc - 1.0) * wc;
            let dp = (nl - nc) / nl;
            let rows = pj.iter_mut().zip(mj.iter_mut()).zip(vj.iter().zip(sl));
            for (r, ((p, mm), (&xv, &s))) in rows.enumerate() {
                let x = xv.to_f64();
                let t: f64 = sums.iter().skip(r).step_by(k1).take(c).sum();
                let wav = wc * (s - x);
                let wpv = (t - s) / nl;
                *p = T::from_f64(da * x + wpv);
                *mm = T::from_f64(dp * x + wav);
                ta += x * (da * x - wav);
                tp += x * (dp * x - wpv);
            }
        }
        Ok((ta, tp))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::tests::dense_apply;
    use crate::rng::Rng;

    #[test]
    fn implicit_sge_equals_the_explicit_matrices() {
        let (n, k, c) = (23, 3, 4);
        let mut g = Rng::new(5);
        let labels: std::vec::Vec<u32> = (0..n)
            .map(|j| {
                if j % 5 == 2 {
                    UNLABELED
                } else {
                    g.below(c) as u32
                }
            })
            .collect();
        let v: std::vec::Vec<f64> = (0..k * n).map(|_| g.uniform()).collect();
        let lab: std::vec::Vec<usize> = (0..n).filter(|&j| labels[j] != UNLABELED).collect();
        let nl = lab.len() as f64;
        let nc = |cl: u32| labels.iter().filter(|&&l| l == cl).count() as f64;
        let (mut wa, mut wp) = (std::vec![0.0; n * n], std::vec![0.0; n * n]);
        for &i in &lab {
            for &j in &lab {
                if i == j {
                    continue;
                }
                if labels[i] == labels[j] {
                    wa[i * n + j] = 1.0 / nc(labels[i]) - 1.0 / nl;
                } else {
                    wp[i * n + j] = 1.0 / nl;
                }
            }
        }
        let (p0, m0, ta0, tp0) = dense_apply(&wa, &wp, n, &v, k);
        let sge = Sge::new(&labels, c).unwrap();
        let mut w = std::vec![0u8; GraphOp::<f64>::apply_req(&sge, k).bytes().unwrap()];
        let (mut p, mut m) = (std::vec![0.0; k * n], std::vec![0.0; k * n]);
        let (ta, tp) = sge
            .apply(&v, k, &mut p, &mut m, &mut Stack::new(&mut w))
            .unwrap();
        for i in 0..k * n {
            assert!((p[i] - p0[i]).abs() < 1e-12 && (m[i] - m0[i]).abs() < 1e-12);
        }
        assert!((ta - ta0).abs() < 1e-12 && (tp - tp0).abs() < 1e-12);
    }
}
