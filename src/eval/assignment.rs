//! Optimal assignment (Kuhn–Munkres, the Hungarian method) on a rectangular
//! cost matrix.

use crate::error::Error;
use crate::linalg::mat::MatRef;
use crate::linalg::real::Real;
use crate::linalg::{at, set_at};
use crate::work::{Stack, WorkReq};

/// `row_to_col[i]` of a row left without a column (only when `rows > cols`).
/// cbindgen:ignore
pub const UNASSIGNED: usize = usize::MAX;

fn req(rows: usize, cols: usize) -> WorkReq {
    // The solver runs on the orientation with `r <= c`.
    let c = rows.max(cols);
    let c1 = c.saturating_add(1);
    let r1 = rows.min(cols).saturating_add(1);
    WorkReq::all_of(&[
        WorkReq::new::<f64>(r1),   // row potentials
        WorkReq::new::<f64>(c1),   // column potentials
        WorkReq::new::<f64>(c1),   // slack (minv)
        WorkReq::new::<usize>(c1), // row matched to each column
        WorkReq::new::<usize>(c1), // augmenting path
        WorkReq::new::<u8>(c1),    // visited columns
    ])
}

/// Workspace bytes of [`assignment`] for a `rows × cols` cost matrix.
pub fn assignment_workspace(rows: usize, cols: usize) -> Result<usize, Error> {
    if rows == 0 || cols == 0 {
        return Err(Error::ZeroDimension);
    }
    rows.checked_mul(cols).ok_or(Error::SizeOverflow)?;
    req(rows, cols).bytes()
}

/// Solves the linear assignment problem on a `rows × cols` cost matrix (any
/// strides, rectangular allowed): matches `min(rows, cols)` rows to distinct
/// columns so that the total cost is minimal (`maximize = false`) or maximal
/// (`maximize = true`). Returns that total; writes `row_to_col[i]`, the column
/// of row `i`, or [`UNASSIGNED`] for the `rows − cols` rows left over when
/// `rows > cols`.
///
/// Method: shortest augmenting paths with dual potentials (Kuhn–Munkres in
/// the Jonker–Volgenant form), `O(r²c)` for `r = min(rows, cols)`,
/// `c = max(rows, cols)`; workspace `O(c)`. Deterministic: among equally good
/// columns the lowest index is taken first, so equal inputs give equal
/// matchings. Costs are read in `f64`; they must be finite and of magnitude at
/// most `f64::MAX / (max(rows, cols) + 1)` (≈ `1.8e308 / n`), so that the total
/// is finite: others are [`Error::NonFiniteInput`]. `row_to_col.len()` must
/// equal `rows`.
pub fn assignment<T: Real>(
    cost: MatRef<'_, T>,
    maximize: bool,
    row_to_col: &mut [usize],
    work: &mut [u8],
) -> Result<f64, Error> {
    let (rows, cols) = (cost.rows(), cost.cols());
    if rows == 0 || cols == 0 {
        return Err(Error::ZeroDimension);
    }
    if row_to_col.len() != rows {
        return Err(Error::DimensionMismatch);
    }
    let mut amax = 0.0f64;
    for j in 0..cols {
        for i in 0..rows {
            let x = cost.at(i, j).to_f64();
            if !x.is_finite() {
                return Err(Error::NonFiniteInput);
            }
            amax = amax.max(libm::fabs(x));
        }
    }
    // Issue 15: costs near ±1e308 gave OK with an infinite total. A total of at most
    // `max(rows, cols)` costs is finite when each is below `f64::MAX / (max(rows, cols) + 1)`;
    // larger ones are refused up front (their sum could be infinite), as non-finite input.
    if amax > f64::MAX / (rows.max(cols) as f64 + 1.0) {
        return Err(Error::NonFiniteInput);
    }
    // The search itself runs on costs scaled by a power of two (exact) to magnitude <= 1 when
    // they are huge, so that its potentials and reduced costs (sums and differences of up to
    // ~2·max(rows, cols) costs) cannot overflow; the matching is scale-invariant. Costs below
    // 2^500 are used as they are (bitwise the results of before).
    let inv = if amax > 3.273390607896142e150 {
        libm::scalbn(1.0, -(((amax.to_bits() >> 52) & 0x7ff) as i32 - 1022))
    } else {
        1.0
    };
    req(rows, cols).check(work.len())?;
    let transposed = rows > cols;
    let a = if transposed { cost.t() } else { cost };
    let sign = if maximize { -1.0 } else { 1.0 };
    let (r, c) = (a.rows(), a.cols());
    let mut st = Stack::new(work);
    let u: &mut [f64] = st.take(r + 1)?;
    let v: &mut [f64] = st.take(c + 1)?;
    let minv: &mut [f64] = st.take(c + 1)?;
    let p: &mut [usize] = st.take(c + 1)?;
    let way: &mut [usize] = st.take(c + 1)?;
    let used: &mut [u8] = st.take(c + 1)?;
    solve(
        r,
        c,
        |i, j| sign * (a.at(i, j).to_f64() * inv),
        u,
        v,
        minv,
        p,
        way,
        used,
    );

    // p[j] (1-based) = the row of `a` matched to column j (0: none).
    row_to_col.fill(UNASSIGNED);
    let mut total = 0.0;
    for (j, &pj) in p.iter().enumerate().skip(1) {
        if pj != 0 {
            let (i, jj) = (pj - 1, j - 1);
            total += a.at(i, jj).to_f64();
            if transposed {
                set_at(row_to_col, jj, i);
            } else {
                set_at(row_to_col, i, jj);
            }
        }
    }
    Ok(total)
}

/// The shortest-augmenting-path Hungarian method on an `r × c` cost (`r <= c`),
/// 1-based arrays as in the classical formulation: row `i` is added, then a
/// Dijkstra-like search over reduced costs finds the cheapest augmenting path.
#[allow(clippy::too_many_arguments)]
fn solve(
    r: usize,
    c: usize,
    a: impl Fn(usize, usize) -> f64,
    u: &mut [f64],
    v: &mut [f64],
    minv: &mut [f64],
    p: &mut [usize],
    way: &mut [usize],
    used: &mut [u8],
) {
    u.fill(0.0);
    v.fill(0.0);
    p.fill(0);
    way.fill(0);
    // Columns `0..=c` of `v`, `minv`, `p`, `way`, `used` (`c + 1` each) and rows
    // `0..=r` of `u`: every index below is inside (checked reads and zipped
    // columns, no panic path).
    for i in 1..=r {
        set_at(p, 0, i);
        let mut j0 = 0;
        minv.fill(f64::INFINITY);
        used.fill(0);
        loop {
            set_at(used, j0, 1);
            let i0 = at(p, j0);
            let ui0 = at(u, i0);
            let mut delta = f64::INFINITY;
            let mut j1 = 0;
            let cols = used
                .iter()
                .zip(v.iter())
                .zip(minv.iter_mut().zip(way.iter_mut()));
            for (j, ((&uj, &vj), (mj, wj))) in cols.enumerate().take(c + 1).skip(1) {
                if uj == 0 {
                    let cur = a(i0 - 1, j - 1) - ui0 - vj;
                    if cur < *mj {
                        *mj = cur;
                        *wj = j0;
                    }
                    if *mj < delta || j1 == 0 {
                        delta = *mj;
                        j1 = j;
                    }
                }
            }
            let cols = used
                .iter()
                .zip(p.iter())
                .zip(v.iter_mut().zip(minv.iter_mut()));
            for ((&uj, &pj), (vj, mj)) in cols.take(c + 1) {
                if uj != 0 {
                    if let Some(x) = u.get_mut(pj) {
                        *x += delta;
                    }
                    *vj -= delta;
                } else {
                    *mj -= delta;
                }
            }
            j0 = j1;
            if at(p, j0) == 0 {
                break;
            }
        }
        loop {
            let j1 = at(way, j0);
            set_at(p, j0, at(p, j1));
            j0 = j1;
            if j0 == 0 {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classic_square_case() {
        // Known optimum 5 + 0 + ... : rows -> cols (0->1, 1->0, 2->2), cost 1+2+2 = 5.
        let c = [4.0, 2.0, 3.0, 1.0, 0.0, 2.0, 3.0, 5.0, 2.0]; // column-major 3x3
        let m = MatRef::col_major(&c, 3, 3).unwrap();
        let mut w = std::vec![0u8; assignment_workspace(3, 3).unwrap()];
        let mut out = [0usize; 3];
        let t = assignment(m, false, &mut out, &mut w).unwrap();
        assert_eq!(t, 5.0);
        assert_eq!(out, [1, 0, 2]);
    }
}
