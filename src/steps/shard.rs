//! Partial statistics of a shard of items (issue 19): what one rank of a
//! distributed fit (`models::dist`) computes on its own columns, and the
//! communication interface the ranks combine them through.
//!
//! The items (columns of every view, and of `V`) are split into contiguous
//! shards, one per rank; the bases `U^(v)` are replicated. Every quantity the
//! DESIGN §2 solvers need from the items is a **sum over items**, so a rank
//! forms its shard's share and a sum over ranks (an allreduce) gives every rank
//! the whole:
//!
//! | quantity | shape | used by |
//! |---|---|---|
//! | `R_v = X_v Vᵀ = Σ_s X_v,s V_sᵀ` | `M_v × K` per view | the U-step (Lee–Seung, or the composite-gradient step with its line search: `f`, `∇f` and the acceptance test need only `R`, `G`) |
//! | `G = V Vᵀ = Σ_s V_s V_sᵀ` | `K × K` | the U-step, the reconstruction term |
//! | `S = [Σ_{j∈c, j labeled} v_j]_c` | `K × C` | the SGE products of the V-step and its traces |
//! | `q_c = Σ_{j∈c} ‖v_j‖²` | `C` | the SGE traces |
//! | `⟨Q, V⟩ = Σ_j q_jᵀ v_j`, `Σ V` | 2 | the reconstruction and L1 terms |
//!
//! while `P = Σ_v UᵀU` and the group norms depend on the bases only (the same on
//! every rank), and the V-step is local to each item given `P`, `Q_s = Σ_v Uᵀ X_s`
//! and the graph products — for SGE those are `O(K·C)` from `S` and the class
//! counts (DESIGN §6), so the SGE graph needs no exchange of `V` rows.
//! The SGE traces from the sums: with `w_c = 1/N_c − 1/N^l`,
//!
//! ```text
//! tr(V Lᵃ Vᵀ) = Σ_c w_c (N_c q_c − ‖S_c‖²)
//! tr(V Lᵖ Vᵀ) = Σ_c [ (N^l − N_c)/N^l · q_c − S_cᵀ (T − S_c) / N^l ],   T = Σ_c S_c
//! ```
//!
//! (the single-process operator `graph::Sge` sums the same per-item terms item
//! by item; the results agree to rounding).

use crate::data::{Prepared, ViewSet, UNLABELED};
use crate::error::{Error, Part};
use crate::linalg::dot;
use crate::linalg::real::Real;
use crate::linalg::sparse::span;
use crate::work::Stack;

pub use crate::comm::{Comm, SingleRank};

/// Where the reduced statistics live in one `f64` buffer: `R_1 … R_H` (`M_v × K`
/// each, column-major, one after the other), then `G` (`K × K`), `S` (`K × C`),
/// `q` (`C`), and the scalars `⟨Q, V⟩`, `Σ V` (and, with an explicit graph,
/// the shard's shares of its two traces). The first part is reduced before
/// each U-step, the rest after each V-step.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    /// `Σ_v M_v · K`.
    pub(crate) mk: usize,
    /// Rank.
    pub(crate) k: usize,
    /// Classes of the SGE graph (0 without one).
    pub(crate) c: usize,
    /// Scalars: 2, or 4 with an explicit graph.
    pub(crate) scalars: usize,
}

impl Layout {
    /// `None` on overflow.
    pub(crate) fn new(sum_rows: usize, k: usize, c: usize, traces: bool) -> Option<Layout> {
        let l = Layout {
            mk: sum_rows.checked_mul(k)?,
            k,
            c,
            scalars: if traces { 4 } else { 2 },
        };
        l.len_checked().map(|_| l)
    }

    fn len_checked(&self) -> Option<usize> {
        self.mk
            .checked_add(self.k.checked_mul(self.k)?)?
            .checked_add(self.k.checked_mul(self.c)?)?
            .checked_add(self.c)?
            .checked_add(self.scalars)
    }

    /// Values of the whole buffer.
    pub(crate) fn len(&self) -> usize {
        self.mk + self.k * self.k + self.k * self.c + self.c + self.scalars
    }

    /// Splits the buffer's V part into `(G, S, q, scalars)` ([`Error::Internal`]
    /// for a buffer shorter than the layout, which the workspace excludes).
    #[allow(clippy::type_complexity)]
    pub(crate) fn split_v<'a>(
        &self,
        vpart: &'a mut [f64],
    ) -> Result<(&'a mut [f64], &'a mut [f64], &'a mut [f64], &'a mut [f64]), Error> {
        let (g, rest) = vpart
            .split_at_mut_checked(self.k * self.k)
            .ok_or(Error::Internal)?;
        let (s, rest) = rest
            .split_at_mut_checked(self.k * self.c)
            .ok_or(Error::Internal)?;
        let (q, sc) = rest.split_at_mut_checked(self.c).ok_or(Error::Internal)?;
        Ok((g, s, q, sc))
    }
}

/// `R_v ← s·X_v,s V_sᵀ` for every view, one block after the other in `r`
/// ([`Layout`]'s first part): the shard's share of the U-steps' products.
pub(crate) fn x_vt_all<T: Real, VS: ViewSet<T> + ?Sized>(
    views: &VS,
    prep: &Prepared<'_, T>,
    s: T,
    v: &[T],
    k: usize,
    r: &mut [T],
    st: &mut Stack<'_>,
) -> Result<(), Error> {
    let mut off = 0;
    for i in 0..views.count() {
        let x = views.view(i);
        let mk = x.rows() * k;
        let out = r.part_mut(off..off + mk)?;
        x.x_vt_scaled(prep.get(views, i), s, v, k, out, st)?;
        off += mk;
    }
    Ok(())
}

/// The shard's share of the V part of [`Layout`] but `G = V_s V_sᵀ` (formed
/// by the caller in the solver's scalar, `crate::steps::mu::gram`): the SGE
/// class sums `S` and squares `q` (when `sge` is given), `⟨Q_s, V_s⟩` and
/// `Σ V_s`, in `f64` (as the single process forms them).
pub(crate) fn v_stats<T: Real>(
    layout: &Layout,
    v: &[T],
    q: &[T],
    sge: Option<&SgeShard<'_>>,
    vpart: &mut [f64],
) -> Result<(), Error> {
    let k = layout.k;
    let (_, s, sq, sc) = layout.split_v(vpart)?;
    match sge {
        Some(sg) => sg.local_sums(v, k, s, sq),
        None => {
            s.fill(0.0);
            sq.fill(0.0);
        }
    }
    let [qv, sum_v, ..] = sc else {
        return Err(Error::Internal);
    };
    *qv = dot(q, v);
    *sum_v = v.iter().map(|x| x.to_f64()).sum::<f64>();
    Ok(())
}

/// The SGE graph (DESIGN §6, `graph::Sge`) over a shard: the shard's labels,
/// and the global class counts once they are known.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SgeShard<'a> {
    /// One per item of the shard: a class `< n_classes` or [`UNLABELED`].
    pub(crate) labels: &'a [u32],
    /// Classes `C`.
    pub(crate) n_classes: usize,
}

impl SgeShard<'_> {
    /// [`Error::BadLabel`] for a label out of range (the count of labeled items
    /// is checked over all ranks, from the summed counts).
    pub(crate) fn check(&self) -> Result<(), Error> {
        if self.n_classes == 0 {
            return Err(Error::ZeroDimension);
        }
        if self
            .labels
            .iter()
            .any(|&l| l != UNLABELED && l as usize >= self.n_classes)
        {
            return Err(Error::BadLabel);
        }
        Ok(())
    }

    /// Adds the shard's labeled items per class to `counts` (`C`).
    pub(crate) fn add_counts(&self, counts: &mut [f64]) {
        for &l in self.labels {
            if l == UNLABELED {
                continue;
            }
            if let Some(c) = counts.get_mut(l as usize) {
                *c += 1.0;
            }
        }
    }

    /// `S_·c ← Σ_{j∈c} v_j` (`K × C`) and `q_c ← Σ_{j∈c} ‖v_j‖²` over the shard.
    pub(crate) fn local_sums<T: Real>(&self, v: &[T], k: usize, sums: &mut [f64], sq: &mut [f64]) {
        sums.fill(0.0);
        sq.fill(0.0);
        // Item j is column j of `v` (`k × n`); class l's sums are column l of
        // `sums` (`k × C`); labels are below C (checked).
        for (&l, vj) in self.labels.iter().zip(v.chunks_exact(k.max(1))) {
            if l != UNLABELED {
                let l = l as usize;
                let (Some(sl), Some(ql)) = (sums.get_mut(l * k..(l + 1) * k), sq.get_mut(l)) else {
                    continue;
                };
                for (s, x) in sl.iter_mut().zip(vj) {
                    let x = x.to_f64();
                    *s += x;
                    *ql += x * x;
                }
            }
        }
    }

    /// The V-step's graph products for the shard's items from the global class
    /// counts and sums (`graph::Sge::apply`'s per-item formulas):
    /// `plus = (Dᵃ + Wᵖ) v̄`, `minus = (Dᵖ + Wᵃ) v̄` (zero for unlabeled items),
    /// formed in `f64`.
    pub(crate) fn products<T: Real>(
        &self,
        counts: &[f64],
        sums: &[f64],
        v: &[T],
        k: usize,
        plus: &mut [T],
        minus: &mut [T],
    ) {
        let c = self.n_classes;
        let nl: f64 = counts.iter().sum();
        // Columns of `v`, `plus`, `minus` (`k × n`) and of `sums` (`k × C`).
        let k1 = k.max(1);
        let pm = plus.chunks_exact_mut(k1).zip(minus.chunks_exact_mut(k1));
        for ((&l, vj), (pj, mj)) in self.labels.iter().zip(v.chunks_exact(k1)).zip(pm) {
            // Unlabeled first: `UNLABELED · k` overflows `usize` on 32-bit targets.
            let found = if l == UNLABELED {
                None
            } else {
                let l = l as usize;
                counts.get(l).zip(sums.get(l * k..(l + 1) * k))
            };
            let Some((&nc, sl)) = found else {
                // Unlabeled (or, never, a label past the classes).
                pj.fill(T::ZERO);
                mj.fill(T::ZERO);
                continue;
            };
            let wc = 1.0 / nc - 1.0 / nl;
            let da = (nc - 1.0) * wc;
            let dp = (nl - nc) / nl;
            let rows = pj.iter_mut().zip(mj.iter_mut()).zip(vj.iter().zip(sl));
            for (r, ((p, m), (x, &s))) in rows.enumerate() {
                let x = x.to_f64();
                let t: f64 = sums.iter().skip(r).step_by(k1).take(c).sum();
                *p = T::from_f64(da * x + (t - s) / nl);
                *m = T::from_f64(dp * x + wc * (s - x));
            }
        }
    }

    /// `(tr(V Lᵃ Vᵀ), tr(V Lᵖ Vᵀ))` over all items from the global counts, sums
    /// and squares (module docs).
    pub(crate) fn traces(&self, counts: &[f64], sums: &[f64], sq: &[f64], k: usize) -> (f64, f64) {
        let c = self.n_classes;
        let nl: f64 = counts.iter().sum();
        let (mut ta, mut tp) = (0.0, 0.0);
        let k1 = k.max(1);
        for (l, (&nc, &sql)) in counts.iter().zip(sq).enumerate().take(c) {
            if nc == 0.0 {
                continue;
            }
            let wc = 1.0 / nc - 1.0 / nl;
            let sl = sums.get(l * k..(l + 1) * k).unwrap_or(&[]);
            let s2: f64 = sl.iter().map(|x| x * x).sum();
            let cross: f64 = sl
                .iter()
                .enumerate()
                .map(|(r, &slr)| {
                    let t: f64 = sums.iter().skip(r).step_by(k1).take(c).sum();
                    slr * (t - slr)
                })
                .sum();
            ta += wc * (nc * sql - s2);
            tp += (nl - nc) / nl * sql - cross / nl;
        }
        (ta, tp)
    }
}

/// This rank's rows of an explicit symmetric `N × N` graph (`graph::CsrGraph`):
/// row `j` (the shard's item `j`) holds the global item indices
/// `col_idx[row_ptr[j]..row_ptr[j+1]]` (strictly increasing, `< N`) with their
/// `weights` (finite, `≥ 0`). The graph over all ranks must be symmetric
/// (`W_ij = W_ji`; not checked across ranks, except that the items a rank is
/// asked for are bounded by its own edges to other ranks).
#[derive(Clone, Copy, Debug)]
pub struct ShardRows<'a> {
    /// `N_r + 1` row pointers, starting at 0.
    pub row_ptr: &'a [usize],
    /// Global column indices.
    pub col_idx: &'a [usize],
    /// Weights.
    pub weights: &'a [f64],
}

impl ShardRows<'_> {
    /// Structure and weights for a shard of `n` items ([`Error::MalformedCsc`],
    /// [`Error::DimensionMismatch`], [`Error::BufferTooShort`], value errors);
    /// the bound `< N` is checked once `N` is known.
    pub(crate) fn check(&self, n: usize) -> Result<(), Error> {
        if n.checked_add(1) != Some(self.row_ptr.len()) {
            return Err(Error::DimensionMismatch);
        }
        let (Some(&first), Some(&nnz)) = (self.row_ptr.first(), self.row_ptr.last()) else {
            return Err(Error::DimensionMismatch);
        };
        if first != 0 {
            return Err(Error::MalformedCsc);
        }
        if nnz > self.col_idx.len() || nnz > self.weights.len() {
            return Err(Error::BufferTooShort);
        }
        for w in self.row_ptr.windows(2) {
            let &[s, e] = w else {
                return Err(Error::MalformedCsc);
            };
            if e < s || e > nnz {
                return Err(Error::MalformedCsc);
            }
            let cols = self.col_idx.get(s..e).ok_or(Error::MalformedCsc)?;
            if !cols.windows(2).all(|p| matches!(*p, [a, b] if a < b)) {
                return Err(Error::MalformedCsc);
            }
        }
        crate::data::check_values(self.weights.get(..nnz).ok_or(Error::BufferTooShort)?, true)
    }

    /// Stored edges.
    pub(crate) fn nnz(&self) -> usize {
        self.row_ptr.last().copied().unwrap_or(0)
    }

    /// The largest column index (0 without edges).
    pub(crate) fn max_col(&self) -> usize {
        let cols = self.col_idx.get(..self.nnz()).unwrap_or(&[]);
        cols.iter().copied().max().unwrap_or(0)
    }
}

/// One graph's contribution to row `j`: `diag = D_jj v_j`, `off = Σ_i W_ji v_i`,
/// where column `pos[t]` of `[V_r | halo]` holds `v_i` of edge `t`
/// (`graph::CsrGraphs`'s per-row arithmetic, in the same order).
#[allow(clippy::too_many_arguments)]
fn accumulate<T: Real>(
    g: &ShardRows<'_>,
    pos: &[usize],
    v: &[T],
    halo: &[f64],
    k: usize,
    j: usize,
    diag: &mut [f64],
    off: &mut [f64],
) {
    // Row j's edges: their columns of `[V_r | halo]` and weights (empty past
    // the arrays, which the checks exclude); columns of `k` values.
    let (cols, ws) = span(g.row_ptr, j, pos, g.weights);
    let d: f64 = ws.iter().sum();
    let n = v.len().checked_div(k).unwrap_or(0);
    let vj = v.get(j * k..(j + 1) * k).unwrap_or(&[]);
    for ((dr, or), x) in diag.iter_mut().zip(off.iter_mut()).zip(vj) {
        *dr = d * x.to_f64();
        *or = 0.0;
    }
    for (&p, &w) in cols.iter().zip(ws) {
        if p < n {
            let vi = v.get(p * k..(p + 1) * k).unwrap_or(&[]);
            for (or, x) in off.iter_mut().zip(vi) {
                *or += w * x.to_f64();
            }
        } else {
            let vi = halo.get((p - n) * k..(p - n + 1) * k).unwrap_or(&[]);
            for (or, &x) in off.iter_mut().zip(vi) {
                *or += w * x;
            }
        }
    }
}

/// The V-step's graph products of explicit graphs for the shard's rows
/// (`plus = (Dᵃ + Wᵖ) v̄`, `minus = (Dᵖ + Wᵃ) v̄`), with the neighbours on other
/// ranks read from `halo`; returns the shard's shares of `(tr(V Lᵃ Vᵀ), tr(V Lᵖ
/// Vᵀ))`. `pos_a`, `pos_p`: per edge, the column of `[V_r | halo]`; `row` is
/// scratch of `4K` values.
#[allow(clippy::too_many_arguments)]
pub(crate) fn csr_products<T: Real>(
    affinity: Option<(&ShardRows<'_>, &[usize])>,
    penalty: Option<(&ShardRows<'_>, &[usize])>,
    v: &[T],
    halo: &[f64],
    k: usize,
    plus: &mut [T],
    minus: &mut [T],
    row: &mut [f64],
) -> (f64, f64) {
    // `row`: four vectors of `k`; columns of `v`, `plus`, `minus` (`k × n`).
    let k1 = k.max(1);
    let mut parts = row.chunks_exact_mut(k1);
    let (Some(da), Some(wa), Some(dp), Some(wp)) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return (0.0, 0.0);
    };
    let (mut ta, mut tp) = (0.0, 0.0);
    let cols = v.chunks_exact(k1).zip(plus.chunks_exact_mut(k1));
    for (j, ((vj, pj), mj)) in cols.zip(minus.chunks_exact_mut(k1)).enumerate() {
        da.fill(0.0);
        wa.fill(0.0);
        dp.fill(0.0);
        wp.fill(0.0);
        if let Some((g, pos)) = affinity {
            accumulate(g, pos, v, halo, k, j, da, wa);
        }
        if let Some((g, pos)) = penalty {
            accumulate(g, pos, v, halo, k, j, dp, wp);
        }
        let out = pj.iter_mut().zip(mj.iter_mut()).zip(vj);
        let sums = da.iter().zip(wa.iter()).zip(dp.iter().zip(wp.iter()));
        for (((p, m), x), ((&dar, &war), (&dpr, &wpr))) in out.zip(sums) {
            let x = x.to_f64();
            *p = T::from_f64(dar + wpr);
            *m = T::from_f64(dpr + war);
            ta += x * (dar - war);
            tp += x * (dpr - wpr);
        }
    }
    (ta, tp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{GraphOp, Sge};
    use crate::rng::Rng;

    /// The SGE products and traces from class sums split over shards equal the
    /// single-process operator's.
    #[test]
    fn sharded_sge_equals_the_operator() {
        let (n, k, c) = (31, 4, 3);
        let mut g = Rng::new(9);
        let labels: std::vec::Vec<u32> = (0..n)
            .map(|j| {
                if j % 4 == 1 {
                    UNLABELED
                } else {
                    g.below(c) as u32
                }
            })
            .collect();
        let v: std::vec::Vec<f64> = (0..k * n).map(|_| g.uniform()).collect();
        let sge = Sge::new(&labels, c).unwrap();
        let mut w = std::vec![0u8; GraphOp::<f64>::apply_req(&sge, k).bytes().unwrap()];
        let (mut p0, mut m0) = (std::vec![0.0; k * n], std::vec![0.0; k * n]);
        let (ta0, tp0) = sge
            .apply(&v, k, &mut p0, &mut m0, &mut Stack::new(&mut w))
            .unwrap();
        // Three shards: 0..10, 10..11, 11..31.
        let cuts = [0, 10, 11, n];
        let (mut counts, mut sums, mut sq) =
            (std::vec![0.0; c], std::vec![0.0; k * c], std::vec![0.0; c]);
        for w in cuts.windows(2) {
            let sh = SgeShard {
                labels: &labels[w[0]..w[1]],
                n_classes: c,
            };
            sh.check().unwrap();
            sh.add_counts(&mut counts);
            let (mut s, mut q) = (std::vec![0.0; k * c], std::vec![0.0; c]);
            sh.local_sums(&v[w[0] * k..w[1] * k], k, &mut s, &mut q);
            sums.iter_mut().zip(&s).for_each(|(a, b)| *a += b);
            sq.iter_mut().zip(&q).for_each(|(a, b)| *a += b);
        }
        let full = SgeShard {
            labels: &labels,
            n_classes: c,
        };
        let (ta, tp) = full.traces(&counts, &sums, &sq, k);
        assert!((ta - ta0).abs() <= 1e-12 * ta0.abs().max(1.0), "{ta} {ta0}");
        assert!((tp - tp0).abs() <= 1e-12 * tp0.abs().max(1.0), "{tp} {tp0}");
        for w in cuts.windows(2) {
            let sh = SgeShard {
                labels: &labels[w[0]..w[1]],
                n_classes: c,
            };
            let len = (w[1] - w[0]) * k;
            let (mut p, mut m) = (std::vec![0.0; len], std::vec![0.0; len]);
            sh.products(&counts, &sums, &v[w[0] * k..w[1] * k], k, &mut p, &mut m);
            for i in 0..len {
                assert!((p[i] - p0[w[0] * k + i]).abs() < 1e-12);
                assert!((m[i] - m0[w[0] * k + i]).abs() < 1e-12);
            }
        }
    }
}
