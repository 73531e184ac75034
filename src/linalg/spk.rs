//! Hosted AVX2 + FMA kernels for the two row-sorted sparse products of CSC
//! views with `K ≤ 64`: `X·Vᵀ` (gather; also `Uᵀ·X` by columns, from the CSC
//! arrays as the row-sorted entries of `Xᵀ`) and `Uᵀ·X` (scatter), in the
//! fused NMF U-step and the `x_vt` / `ut_x` products of the other solvers
//! (`f64`, x86-64, `std` builds only; `linalg::sparse::xvt_rows_portable` and
//! `utx_rows_portable` are the portable versions and the specification).
//!
//! Why not the portable loops under [`super::simd::dispatch`]: for `K = 50`
//! the row of the result (`W = 56` values) needs 14 of the 16 vector
//! registers, and the compiler, working on `[f64; W]` arrays, rotated them
//! through the register file and spilled to the stack on every entry (and does
//! not contract `a += x·b` into an FMA). Written with one `__m256d` per four
//! values the whole row stays in registers, and the rows of the entries a few
//! places ahead are prefetched. Measured (`bench/bench_nmf.py`, sparse problem,
//! AMD EPYC Zen 1, AVX2, same binary otherwise): 37–39 → 34–36 ms per NMF
//! iteration. The gain is small because most of the cost is the arithmetic
//! and loads themselves: each entry reads a padded row of `W` values that no
//! other entry of the block shares. Timed alone, the gather took 9.8 ns per
//! entry with those rows in L1, 13.5 ns in L2 and 16 ns from L3 (prefetched).
//!
//! Rounding: one FMA per entry and value instead of a product and a sum, so
//! results differ from the portable loops in the last bits (the dense path,
//! through the `gemm` crate, uses FMA as well). Within one machine the results
//! are deterministic: the same entries are summed in the same order.
//!
//! `unsafe` here: the vector loads and stores, each on a range whose bounds
//! were checked on the slice it points into (`get` / `get_mut` of `W` values),
//! and the call into the `#[target_feature]` functions after run-time
//! detection.
//!
//! # Safety
//! The vector loads and stores, each on a range whose bounds were checked on the
//! slice it points into (`get` / `get_mut` of `W` values); a prefetch (which
//! does not access memory); the calls into the `#[target_feature]` kernels after
//! run-time detection. One of the four files of `linalg/` allowed `unsafe`.
#![allow(unsafe_code)]

use core::arch::x86_64::{
    __m256d, _mm256_fmadd_pd, _mm256_loadu_pd, _mm256_set1_pd, _mm256_setzero_pd, _mm256_storeu_pd,
};

/// Entries ahead whose rows are prefetched.
const PF: usize = 6;

/// Asks for the cache lines of `src[at..at + len]` (nothing if out of range).
#[inline(always)]
fn prefetch_row(src: &[f64], at: usize, len: usize) {
    if let Some(r) = src.get(at..at + len) {
        let p = r.as_ptr() as *const i8;
        let mut b = 0;
        while b < len * 8 {
            // SAFETY: a prefetch does not access memory; the address is inside `r`.
            unsafe {
                core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.add(b))
            };
            b += 64;
        }
    }
}

/// Whether these kernels run for padded width `w`: a multiple of 8 up to 64,
/// on a CPU with AVX2 and FMA but not AVX-512F (the detection results are
/// cached by std). On AVX-512 machines the portable loops, compiled for
/// AVX-512 by [`super::simd::dispatch`], hold a row of `W ≤ 64` values in at
/// most 8 of 32 registers and were measured there (session notes, README):
/// these 4-wide kernels are not used, rather than used unmeasured.
fn applies(w: usize) -> bool {
    w.is_multiple_of(8)
        && w <= 64
        && std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("fma")
        && !std::is_x86_feature_detected!("avx512f")
}

/// Calls `$f::<R>(args)` with `R = w / 4` vectors per pass (`R = 8`, two
/// passes, for `w = 64`: 16 vectors of sums would leave no register for the
/// entry). `w` passed [`applies`], so the CPU has AVX2 and FMA.
macro_rules! by_lanes {
    ($w:expr, $f:ident, $($a:expr),*) => {
        // SAFETY: the CPU has AVX2 and FMA (`applies`), the features the
        // kernels are compiled for.
        unsafe {
            match $w {
                8 => $f::<2>($($a),*),
                16 => $f::<4>($($a),*),
                24 => $f::<6>($($a),*),
                40 => $f::<10>($($a),*),
                48 => $f::<12>($($a),*),
                56 => $f::<14>($($a),*),
                _ => $f::<8>($($a),*),
            }
        }
    };
}

/// Rows `i0..i1` of `X·Vᵀ` (see `data::xvt_rows`): row `i` of the result is
/// `Σ_e vals[e] · vp[col_idx[e]·w ..][..w]` over the row's entries, and its
/// first `k` values go to `out[i − i0 + t·(i1 − i0)]`. `w` is a multiple of 8,
/// at most 64. Returns `false` (nothing written) when the CPU lacks AVX2/FMA
/// or has AVX-512F.
pub(crate) fn gather_rows(
    (w, k): (usize, usize),
    rows: (usize, usize),
    entries: (&[usize], &[usize], &[f64]),
    vp: &[f64],
    out: &mut [f64],
) -> bool {
    if !applies(w) || k > w {
        return false;
    }
    let a = Args {
        e: Entries::new(rows, entries),
        w,
        k,
        src: vp,
    };
    by_lanes!(w, gather, &a, out);
    true
}

/// Rows `rows.0..rows.1` of a row-sorted matrix: row `i`'s entries are
/// `col_idx[row_ptr[i]..row_ptr[i + 1]]` with values `vals[..]`.
struct Entries<'a> {
    rows: (usize, usize),
    row_ptr: &'a [usize],
    col_idx: &'a [usize],
    vals: &'a [f64],
}

impl<'a> Entries<'a> {
    fn new(
        rows: (usize, usize),
        (row_ptr, col_idx, vals): (&'a [usize], &'a [usize], &'a [f64]),
    ) -> Self {
        Entries {
            rows,
            row_ptr,
            col_idx,
            vals,
        }
    }

    /// Row `i`'s columns and values.
    fn row(&self, i: usize) -> (&'a [usize], &'a [f64]) {
        let (s, e) = (self.row_ptr[i], self.row_ptr[i + 1]);
        (&self.col_idx[s..e], &self.vals[s..e])
    }
}

/// What both kernels read: the entries, and the dense rows at stride `w` they
/// pair with (`V` or `U` padded for the gather, a block of `U` for the
/// scatter; `k` is the gather's output width).
struct Args<'a> {
    e: Entries<'a>,
    w: usize,
    k: usize,
    src: &'a [f64],
}

/// `acc += x · src[at..at + 4R]` (nothing when that is out of range).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn add_row<const R: usize>(acc: &mut [__m256d; R], x: f64, src: &[f64], at: usize) {
    if let Some(src) = src.get(at..at + 4 * R) {
        let x = _mm256_set1_pd(x);
        for (t, sum) in acc.iter_mut().enumerate() {
            // SAFETY: `src` holds 4R values; this reads 4 at 4t < 4R.
            let v = unsafe { _mm256_loadu_pd(src.as_ptr().add(4 * t)) };
            *sum = _mm256_fmadd_pd(x, v, *sum);
        }
    }
}

/// `R` vectors of sums per pass (`4R ≤ w`; two passes when `w = 64`); when `R`
/// is small, entries alternate between two sets of sums to cover the FMA latency.
#[target_feature(enable = "avx2,fma")]
fn gather<const R: usize>(a: &Args<'_>, out: &mut [f64]) {
    // Sets of sums in use (a constant for each `R`).
    let sets = if R <= 6 { 2 } else { 1 };
    let (i0, i1) = a.e.rows;
    let ld = i1 - i0;
    // Four rows of results, written to `out` together: four neighbours in each
    // column instead of one value every `ld` (a conflict-prone stride).
    let mut rows = [[0.0f64; 64]; 4];
    for i in i0..i1 {
        let q = (i - i0) % 4;
        let row = &mut rows[q];
        let (idx, xs) = a.e.row(i);
        for off in (0..a.w).step_by(4 * R) {
            let mut acc = [[_mm256_setzero_pd(); R]; 2];
            let mut ic = idx.chunks_exact(sets);
            let mut xc = xs.chunks_exact(sets);
            for (n, (ii, xx)) in (&mut ic).zip(&mut xc).enumerate() {
                // Past the row's end: the next rows' entries (all of `col_idx`).
                if let Some(&jf) = a.e.col_idx.get(a.e.row_ptr[i] + n * sets + PF) {
                    prefetch_row(a.src, jf * a.w + off, 4 * R);
                }
                for (set, (&j, &x)) in acc.iter_mut().zip(ii.iter().zip(xx)) {
                    add_row(set, x, a.src, j * a.w + off);
                }
            }
            for (&j, &xv) in ic.remainder().iter().zip(xc.remainder()) {
                add_row(&mut acc[0], xv, a.src, j * a.w + off);
            }
            let dst = &mut row[off..off + 4 * R];
            for t in 0..R {
                let mut v: __m256d = acc[0][t];
                for set in acc.iter().take(sets).skip(1) {
                    v = core::arch::x86_64::_mm256_add_pd(v, set[t]);
                }
                // SAFETY: `dst` holds 4R values; this writes 4 at 4t < 4R.
                unsafe { _mm256_storeu_pd(dst.as_mut_ptr().add(4 * t), v) };
            }
        }
        if q == 3 || i + 1 == i1 {
            let first = i - q - i0;
            for t in 0..a.k {
                if let Some(dst) = out.get_mut(first + t * ld..=first + t * ld + q) {
                    for (d, r) in dst.iter_mut().zip(&rows) {
                        *d = r[t];
                    }
                }
            }
        }
    }
}

/// `op[j·w ..][..w] += x · blk[(i − i0)·w ..][..w]` for the entries `(i, j, x)`
/// of rows `i0..i1` (see `data::utx_rows`). `w` is a multiple of 8, at most
/// 64. Returns `false` (nothing written) when the CPU lacks AVX2/FMA or has
/// AVX-512F.
pub(crate) fn scatter_rows(
    w: usize,
    rows: (usize, usize),
    entries: (&[usize], &[usize], &[f64]),
    blk: &[f64],
    op: &mut [f64],
) -> bool {
    if !applies(w) {
        return false;
    }
    let a = Args {
        e: Entries::new(rows, entries),
        w,
        k: w,
        src: blk,
    };
    by_lanes!(w, scatter, &a, op);
    true
}

/// `R` vectors of the row of U held in registers per pass (two passes when `w = 64`).
#[target_feature(enable = "avx2,fma")]
fn scatter<const R: usize>(a: &Args<'_>, op: &mut [f64]) {
    let (i0, i1) = a.e.rows;
    for i in i0..i1 {
        let (idx, xs) = a.e.row(i);
        for off in (0..a.w).step_by(4 * R) {
            let base = (i - i0) * a.w + off;
            let Some(ur) = a.src.get(base..base + 4 * R) else {
                continue;
            };
            let mut u = [_mm256_setzero_pd(); R];
            for (t, ut) in u.iter_mut().enumerate() {
                // SAFETY: `ur` holds 4R values; this reads 4 at 4t < 4R.
                *ut = unsafe { _mm256_loadu_pd(ur.as_ptr().add(4 * t)) };
            }
            for (n, (&j, &xv)) in idx.iter().zip(xs).enumerate() {
                // Past the row's end: the next rows' entries (all of `col_idx`).
                if let Some(&jf) = a.e.col_idx.get(a.e.row_ptr[i] + n + PF) {
                    prefetch_row(op, jf * a.w + off, 4 * R);
                }
                if let Some(o) = op.get_mut(j * a.w + off..j * a.w + off + 4 * R) {
                    let x = _mm256_set1_pd(xv);
                    let p = o.as_mut_ptr();
                    for (t, &ut) in u.iter().enumerate() {
                        // SAFETY: `o` holds 4R values; this reads and writes 4 at 4t < 4R.
                        unsafe {
                            let d = _mm256_loadu_pd(p.add(4 * t));
                            _mm256_storeu_pd(p.add(4 * t), _mm256_fmadd_pd(x, ut, d));
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use std::vec::Vec;

    /// A random row-sorted `m × n` pattern with empty rows and a full row.
    fn pattern(m: usize, n: usize, rng: &mut Rng) -> (Vec<usize>, Vec<usize>, Vec<f64>) {
        let (mut ptr, mut idx, mut val) = (std::vec![0], Vec::new(), Vec::new());
        for i in 0..m {
            for j in 0..n {
                if i == 3 || (i % 5 != 0 && rng.uniform() < 0.2) {
                    idx.push(j);
                    val.push(rng.uniform());
                }
            }
            ptr.push(idx.len());
        }
        (ptr, idx, val)
    }

    #[test]
    fn kernels_match_the_plain_sums_at_every_width() {
        let (m, n) = (37, 23);
        for w in (8..=64).step_by(8) {
            for k in [w - 7, w] {
                let mut rng = Rng::new((w * 100 + k) as u64);
                let (ptr, idx, val) = pattern(m, n, &mut rng);
                let vp: Vec<f64> = (0..n * w).map(|_| rng.uniform() - 0.5).collect();
                let (i0, i1) = (2, m - 1);
                let r = i1 - i0;
                // Gather: out[i − i0 + t·r] = Σ_e x_e · vp[j_e·w + t], t < k.
                let mut out = std::vec![f64::NAN; r * k + 3];
                let done = gather_rows((w, k), (i0, i1), (&ptr, &idx, &val), &vp, &mut out);
                assert_eq!(done, applies(w));
                if !done {
                    return;
                }
                for i in i0..i1 {
                    for t in 0..k {
                        let want: f64 = (ptr[i]..ptr[i + 1])
                            .map(|e| val[e] * vp[idx[e] * w + t])
                            .sum();
                        let got = out[i - i0 + t * r];
                        assert!(
                            (want - got).abs() <= 1e-14 * n as f64,
                            "w{w} k{k} ({i},{t})"
                        );
                    }
                }
                assert!(
                    out[r * k..].iter().all(|x| x.is_nan()),
                    "wrote past the block"
                );
            }
        }
    }
}
