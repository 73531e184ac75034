//! Sparse products of CSC matrices at `O(nnz·K)`: the CSC type itself, its
//! row-sorted copy (CSR, built once per fit), and the loops behind
//! `X·Vᵀ` (gather) and `Uᵀ·X` (scatter), portable and (x86-64 AVX2 + FMA,
//! hosted) through the hand-written kernels of [`super::spk`].
//!
//! | product | path | cost |
//! |---|---|---|
//! | `X·Vᵀ` | row-sorted entries, each result row in registers (`K ≤ 64`: `V` padded to a multiple of 8; else 8 columns at a time) | `O(nnz·K + M·K)` |
//! | `Uᵀ·X` | row-sorted entries scattered into a padded result (`K ≤ 64`), else column blocks of `RB` rows | `O(nnz·K + (M + N)·K)` |
//!
//! The fused NMF U-step (`steps::fused`) drives the block gather and scatter
//! directly; the views of [`crate::data`] reach the whole products through
//! [`csr_x_vt`] and [`csc_ut_x`].

use crate::error::{Error, Part};
use crate::linalg::real::Real;
use crate::linalg::simd::{self, Kernel};
use crate::par::{chunk_len, tasks_for, Parallel, RowBlocks};
use crate::work::{Slots, Stack, WorkReq};

/// Calls `$f::<T, W>(args)` for the padded width `$w` (a multiple of 8 ≤ 64).
macro_rules! by_width {
    ($w:expr, $f:ident, $($a:expr),*) => {
        match $w {
            8 => $f::<T, 8>($($a),*),
            16 => $f::<T, 16>($($a),*),
            24 => $f::<T, 24>($($a),*),
            32 => $f::<T, 32>($($a),*),
            40 => $f::<T, 40>($($a),*),
            48 => $f::<T, 48>($($a),*),
            56 => $f::<T, 56>($($a),*),
            _ => $f::<T, 64>($($a),*),
        }
    };
}

/// A CSC matrix: column `j` holds `row_idx[col_ptr[j]..col_ptr[j+1]]` (strictly
/// increasing) with `values` alongside. `nnz = col_ptr[cols]`.
#[derive(Clone, Copy, Debug)]
pub struct Csc<'a, T> {
    pub(crate) col_ptr: &'a [usize],
    pub(crate) row_idx: &'a [usize],
    pub(crate) values: &'a [T],
    pub(crate) rows: usize,
    pub(crate) cols: usize,
}

impl<'a, T: Real> Csc<'a, T> {
    /// Checks the structure in `O(nnz + cols)`: `col_ptr.len() == cols+1`,
    /// `col_ptr[0] == 0`, non-decreasing, `col_ptr[cols] <= row_idx.len(), values.len()`,
    /// row indices `< rows` and strictly increasing within each column.
    pub fn new(
        rows: usize,
        cols: usize,
        col_ptr: &'a [usize],
        row_idx: &'a [usize],
        values: &'a [T],
    ) -> Result<Self, Error> {
        if rows == 0 || cols == 0 {
            return Err(Error::ZeroDimension);
        }
        rows.checked_mul(cols).ok_or(Error::SizeOverflow)?;
        if cols.checked_add(1) != Some(col_ptr.len()) {
            return Err(Error::DimensionMismatch);
        }
        let (Some(&first), Some(&nnz)) = (col_ptr.first(), col_ptr.last()) else {
            return Err(Error::DimensionMismatch);
        };
        if first != 0 {
            return Err(Error::MalformedCsc);
        }
        let values = values.get(..nnz).ok_or(Error::BufferTooShort)?;
        if nnz > row_idx.len() {
            return Err(Error::BufferTooShort);
        }
        for pair in col_ptr.windows(2) {
            let &[s, e] = pair else {
                return Err(Error::MalformedCsc);
            };
            let col = row_idx.get(s..e).filter(|_| e <= nnz);
            let col = col.ok_or(Error::MalformedCsc)?;
            let mut prev: Option<usize> = None;
            for &r in col {
                if r >= rows || prev.is_some_and(|p| r <= p) {
                    return Err(Error::MalformedCsc);
                }
                prev = Some(r);
            }
        }
        Ok(Csc {
            col_ptr,
            row_idx,
            values,
            rows,
            cols,
        })
    }

    /// Re-creates a matrix that [`Csc::new`] accepted with the same arguments
    /// (skips the `O(nnz)` scan; indexing stays bounds-checked).
    pub(crate) fn from_validated(
        rows: usize,
        cols: usize,
        col_ptr: &'a [usize],
        row_idx: &'a [usize],
        values: &'a [T],
    ) -> Self {
        let nnz = col_ptr.get(cols).copied().unwrap_or(0);
        Csc {
            col_ptr,
            row_idx,
            values: values.get(..nnz).unwrap_or_default(),
            rows,
            cols,
        }
    }

    /// Stored entries.
    #[inline]
    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    /// Column `j`: (row indices, values).
    #[inline]
    pub fn col(&self, j: usize) -> (&'a [usize], &'a [T]) {
        span(self.col_ptr, j, self.row_idx, self.values)
    }
}

/// Width of the register-held accumulators of the sparse kernels.
const CHUNK: usize = 8;

/// `CHUNK` values at `off`, as an array (so the compiler sees the length).
/// `None` never happens for the callers' offsets (indices of validated
/// matrices); they skip the entry rather than panic.
#[inline(always)]
fn chunk_at<T: Real>(src: &[T], off: usize) -> Option<&[T; CHUNK]> {
    src.get(off..off + CHUNK)
        .and_then(|s| <&[T; CHUNK]>::try_from(s).ok())
}

/// Entries `ptr[i]..ptr[i + 1]` of `idx` and `vals` (row `i` of a CSR, column
/// `i` of a CSC); empty for a range outside the arrays, which a validated
/// matrix never has (no panic path: the same checks as indexing).
#[inline(always)]
pub(crate) fn span<'s, T>(
    ptr: &[usize],
    i: usize,
    idx: &'s [usize],
    vals: &'s [T],
) -> (&'s [usize], &'s [T]) {
    if let Some(&[s, e]) = ptr.get(i..i.wrapping_add(2)) {
        if let (Some(a), Some(b)) = (idx.get(s..e), vals.get(s..e)) {
            return (a, b);
        }
    }
    (&[], &[])
}

/// `Σ_e xs[e] · src[idx[e]·k + kc ..][..w]` (`w ≤ CHUNK`) with four independent
/// accumulators, so that the additions pipeline instead of waiting on each other.
#[inline(always)]
fn gather_sum<T: Real>(
    idx: &[usize],
    xs: &[T],
    src: &[T],
    k: usize,
    kc: usize,
    w: usize,
) -> [T; CHUNK] {
    let (mut a0, mut a1, mut a2, mut a3) = (
        [T::ZERO; CHUNK],
        [T::ZERO; CHUNK],
        [T::ZERO; CHUNK],
        [T::ZERO; CHUNK],
    );
    if w == CHUNK {
        let mut ic = idx.chunks_exact(4);
        let mut xc = xs.chunks_exact(4);
        for (i4, x4) in (&mut ic).zip(&mut xc) {
            let rows = (
                chunk_at(src, i4[0] * k + kc),
                chunk_at(src, i4[1] * k + kc),
                chunk_at(src, i4[2] * k + kc),
                chunk_at(src, i4[3] * k + kc),
            );
            let (Some(r0), Some(r1), Some(r2), Some(r3)) = rows else {
                continue;
            };
            for t in 0..CHUNK {
                a0[t] += x4[0] * r0[t];
                a1[t] += x4[1] * r1[t];
                a2[t] += x4[2] * r2[t];
                a3[t] += x4[3] * r3[t];
            }
        }
        for (&i, &x) in ic.remainder().iter().zip(xc.remainder()) {
            if let Some(r) = chunk_at(src, i * k + kc) {
                for t in 0..CHUNK {
                    a0[t] += x * r[t];
                }
            }
        }
    } else {
        for (&i, &x) in idx.iter().zip(xs) {
            let off = i * k + kc;
            let row = src.get(off..off + w).unwrap_or_default();
            for (a, &y) in a0.iter_mut().zip(row) {
                *a += x * y;
            }
        }
    }
    for t in 0..CHUNK {
        a0[t] = (a0[t] + a1[t]) + (a2[t] + a3[t]);
    }
    a0
}

/// The entries of a CSC view sorted by row (CSR): built once per fit into the
/// workspace (`data::Prepared`) so that no product sorts per call.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Csr<'w, T> {
    row_ptr: &'w [usize],
    col_idx: &'w [usize],
    vals: &'w [T],
}

impl<'w, T> Csr<'w, T> {
    /// Row pointers (`M + 1`), column indices and values (`nnz`) filled by [`csr_fill`].
    pub(crate) fn new(row_ptr: &'w [usize], col_idx: &'w [usize], vals: &'w [T]) -> Self {
        Csr {
            row_ptr,
            col_idx,
            vals,
        }
    }
}

/// Sorts `c`'s entries by row into `row_ptr` (`M + 1`), `col_idx`, `vals` (`nnz`): a
/// counting sort, `O(nnz + M)`, columns increasing within each row. `row_ptr[i]` serves as
/// row `i`'s write cursor, then everything shifts back by one row.
pub(crate) fn csr_fill<T: Real>(
    c: &Csc<'_, T>,
    row_ptr: &mut [usize],
    col_idx: &mut [usize],
    vals: &mut [T],
) {
    let Some(row_ptr) = row_ptr.get_mut(..=c.rows) else {
        return;
    };
    row_ptr.fill(0);
    for &i in c.row_idx.get(..c.nnz()).unwrap_or_default() {
        if let Some(r) = row_ptr.get_mut(i + 1) {
            *r += 1;
        }
    }
    let mut sum = 0;
    for r in row_ptr.iter_mut() {
        sum += *r;
        *r = sum;
    }
    for j in 0..c.cols {
        let (idx, val) = c.col(j);
        for (&i, &x) in idx.iter().zip(val) {
            let Some(r) = row_ptr.get_mut(i) else {
                continue;
            };
            let p = *r;
            if let (Some(ci), Some(v)) = (col_idx.get_mut(p), vals.get_mut(p)) {
                (*ci, *v) = (j, x);
            }
            *r = p + 1;
        }
    }
    let mut prev = 0;
    for r in row_ptr.iter_mut() {
        (*r, prev) = (prev, *r);
    }
}

/// `out (M×K) ← X·Vᵀ` from the row-sorted entries: each row of the result is
/// accumulated in registers from the columns of `V` it needs (`V` copied to a
/// padded stride when `K ≤ 64`, else `CHUNK` columns at a time); `O(nnz·K)`, no
/// read-modify-write.
struct CsrXvt<'a, T> {
    csr: Csr<'a, T>,
    m: usize,
    n: usize,
    v: &'a [T],
    k: usize,
    vp: &'a mut [T],
    out: &'a mut [T],
}

impl<T: Real> Kernel for CsrXvt<'_, T> {
    type Out = ();
    #[inline(always)]
    fn run(self) {
        let CsrXvt {
            csr,
            m,
            n,
            v,
            k,
            vp,
            out,
        } = self;
        if let Some(w) = padded_width(k) {
            // V padded to stride w: each row of the result in registers, one pass.
            pad_into(v, n, k, w, vp);
            by_width!(w, xvt_rows, &csr, (0, m), k, vp, out);
            return;
        }
        let Csr {
            row_ptr,
            col_idx,
            vals,
        } = csr;
        for i in 0..m {
            let (cols, xs) = span(row_ptr, i, col_idx, vals);
            for kc in (0..k).step_by(CHUNK) {
                let w = CHUNK.min(k - kc);
                let acc = gather_sum(cols, xs, v, k, kc, w);
                for (t, &a) in acc.iter().enumerate().take(w) {
                    if let Some(o) = out.get_mut(i + (kc + t) * m) {
                        *o = a;
                    }
                }
            }
        }
    }
}

/// Rows `i0..i1` of the column-major `m × k` matrix `u`, row-major at stride `w`
/// (zero padded) into `blk`.
#[inline(always)]
pub(crate) fn rows_padded<T: Real>(
    u: &[T],
    m: usize,
    k: usize,
    w: usize,
    i0: usize,
    i1: usize,
    blk: &mut [T],
) {
    for col in 0..k {
        let src = u.get(i0 + col * m..i1 + col * m).unwrap_or_default();
        for (row, &x) in blk.chunks_exact_mut(w.max(1)).zip(src) {
            if let Some(d) = row.get_mut(col) {
                *d = x;
            }
        }
    }
    for row in blk.chunks_exact_mut(w.max(1)).take(i1 - i0) {
        if let Some(pad) = row.get_mut(k..) {
            pad.fill(T::ZERO);
        }
    }
}

/// The columns of the column-major `k × n` matrix `v` at the padded stride `w` (zeros after
/// the first `k` of each), into `vp` .
#[inline(always)]
pub(crate) fn pad_into<T: Real>(v: &[T], n: usize, k: usize, w: usize, vp: &mut [T]) {
    for (dst, src) in vp
        .chunks_exact_mut(w.max(1))
        .zip(v.chunks_exact(k.max(1)))
        .take(n)
    {
        let (head, pad) = dst.split_at_mut(k.min(dst.len()));
        for (d, &x) in head.iter_mut().zip(src) {
            *d = x;
        }
        pad.fill(T::ZERO);
    }
}

/// Rows `rows` (`i0..i1`) of `X·Vᵀ` into the column-major `(i1 − i0) × k`
/// block `out`, from `V` padded to stride `w` ([`pad_into`]).
#[inline]
pub(crate) fn gather_block<T: Real>(
    csr: Csr<'_, T>,
    rows: (usize, usize),
    (k, w): (usize, usize),
    vp: &[T],
    out: &mut [T],
) {
    simd::dispatch(BlockGather {
        csr,
        rows,
        k,
        w,
        vp,
        out,
    });
}

/// `op[j] += x · U[i]` for the entries of rows `rows`, with the rows of `U`
/// in `blk` at stride `w` ([`rows_padded`]) and `op` at stride `w`.
#[inline]
pub(crate) fn scatter_block<T: Real>(
    csr: Csr<'_, T>,
    rows: (usize, usize),
    w: usize,
    blk: &[T],
    op: &mut [T],
) {
    simd::dispatch(BlockScatter {
        csr,
        rows,
        w,
        blk,
        op,
    });
}

/// Rows `rows` of `X·Vᵀ` into a column-major block (see [`xvt_rows`]).
struct BlockGather<'a, T> {
    csr: Csr<'a, T>,
    rows: (usize, usize),
    k: usize,
    w: usize,
    vp: &'a [T],
    out: &'a mut [T],
}

impl<T: Real> Kernel for BlockGather<'_, T> {
    type Out = ();
    #[inline(always)]
    fn run(self) {
        let BlockGather {
            csr,
            rows,
            k,
            w,
            vp,
            out,
        } = self;
        by_width!(w, xvt_rows, &csr, rows, k, vp, out);
    }
}

/// `op[j] += x · U[i]` for the entries of rows `rows` (see [`utx_rows`]).
struct BlockScatter<'a, T> {
    csr: Csr<'a, T>,
    rows: (usize, usize),
    w: usize,
    blk: &'a [T],
    op: &'a mut [T],
}

impl<T: Real> Kernel for BlockScatter<'_, T> {
    type Out = ();
    #[inline(always)]
    fn run(self) {
        let BlockScatter {
            csr,
            rows,
            w,
            blk,
            op,
        } = self;
        by_width!(w, utx_rows, &csr, rows.0, rows.1, blk, op);
    }
}

/// Rows `i0..i1` of `Uᵀ·X` scattered into `op` (stride `W`): `op[j] += x · U[i]`.
#[inline(always)]
fn utx_rows<T: Real, const W: usize>(
    csr: &Csr<'_, T>,
    i0: usize,
    i1: usize,
    blk: &[T],
    op: &mut [T],
) {
    let entries = (csr.row_ptr, csr.col_idx, csr.vals);
    if !T::scatter_rows_hosted(W, (i0, i1), entries, blk, op) {
        utx_rows_portable::<T, W>(csr, i0, i1, blk, op);
    }
}

/// [`utx_rows`] without the hosted kernel (`ffi::spk`), whose specification it is.
#[inline(always)]
fn utx_rows_portable<T: Real, const W: usize>(
    csr: &Csr<'_, T>,
    i0: usize,
    i1: usize,
    blk: &[T],
    op: &mut [T],
) {
    for i in i0..i1 {
        let Some(ur) = row_w::<T, W>(blk, (i - i0) * W) else {
            continue;
        };
        let ur = *ur;
        let (cols, xs) = span(csr.row_ptr, i, csr.col_idx, csr.vals);
        for (&j, &x) in cols.iter().zip(xs) {
            if let Some(o) = op
                .get_mut(j * W..(j + 1) * W)
                .and_then(|o| <&mut [T; W]>::try_from(o).ok())
            {
                for t in 0..W {
                    o[t] += x * ur[t];
                }
            }
        }
    }
}

/// `out (K×N) ← β·out + Uᵀ·X` for CSC `X`, by blocks of `RB` rows: the block of
/// `Uᵀ` (`K × RB`, rows of U contiguous, about 256 KiB) stays in cache while
/// each column's entries in the block are summed in registers, `CHUNK` rows of
/// the result at a time; `cursor[j]` remembers where column j's next block
/// starts. `O(nnz·K + M·K)`.
struct CscUtx<'a, 'c, T> {
    c: &'a Csc<'c, T>,
    u: &'a [T],
    k: usize,
    beta: T,
    ut: &'a mut [T],
    cursor: &'a mut [usize],
    out: &'a mut [T],
}

impl<T: Real> Kernel for CscUtx<'_, '_, T> {
    type Out = ();
    #[inline(always)]
    fn run(self) {
        let CscUtx {
            c,
            u,
            k,
            beta,
            ut,
            cursor,
            out,
        } = self;
        let (m, n) = (c.rows, c.cols);
        let stride = padded_width(k).unwrap_or(k).max(1);
        // At least one row per block (the workspace holds `row_block` rows).
        let rb = (ut.len() / stride).max(1);
        let (Some(ptr0), Some(out)) = (c.col_ptr.get(..n), out.get_mut(..k * n)) else {
            return;
        };
        for (d, &p) in cursor.iter_mut().zip(ptr0) {
            *d = p;
        }
        if beta == T::ZERO {
            out.fill(T::ZERO);
        } else if beta != T::ONE {
            out.iter_mut().for_each(|x| *x *= beta);
        }
        if let Some(w) = padded_width(k) {
            for i0 in (0..m).step_by(rb) {
                let i1 = (i0 + rb).min(m);
                let Some(blk) = ut.get_mut(..(i1 - i0) * w) else {
                    return;
                };
                blk.fill(T::ZERO);
                rows_padded(u, m, k, w, i0, i1, blk);
                by_width!(w, utx_block, c, i0, i1, k, blk, cursor, out);
            }
            return;
        }
        for i0 in (0..m).step_by(rb) {
            let i1 = (i0 + rb).min(m);
            for col in 0..k {
                let src = u.get(i0 + col * m..i1 + col * m).unwrap_or_default();
                for (row, &x) in ut.chunks_exact_mut(k).zip(src) {
                    if let Some(d) = row.get_mut(col) {
                        *d = x;
                    }
                }
            }
            let ends = c.col_ptr.get(1..).unwrap_or_default();
            for ((cur, &e), o) in cursor.iter_mut().zip(ends).zip(out.chunks_exact_mut(k)) {
                let (idx, xs) = block_entries(c, cur, e, i1);
                if idx.is_empty() {
                    continue;
                }
                // Row indices relative to the block: subtract i0 on the fly.
                for (kc, oc) in (0..k).step_by(CHUNK).zip(o.chunks_mut(CHUNK)) {
                    let w = CHUNK.min(k - kc);
                    let acc = gather_sum_off(idx, i0, xs, ut, k, kc, w);
                    for (d, &a) in oc.iter_mut().zip(&acc) {
                        *d += a;
                    }
                }
            }
        }
    }
}

/// [`gather_sum`] with row indices offset by `-base`.
#[inline(always)]
fn gather_sum_off<T: Real>(
    idx: &[usize],
    base: usize,
    xs: &[T],
    src: &[T],
    k: usize,
    kc: usize,
    w: usize,
) -> [T; CHUNK] {
    let (mut a0, mut a1) = ([T::ZERO; CHUNK], [T::ZERO; CHUNK]);
    if w == CHUNK {
        let mut ic = idx.chunks_exact(2);
        let mut xc = xs.chunks_exact(2);
        for (i2, x2) in (&mut ic).zip(&mut xc) {
            let rows = (
                chunk_at(src, (i2[0] - base) * k + kc),
                chunk_at(src, (i2[1] - base) * k + kc),
            );
            let (Some(r0), Some(r1)) = rows else { continue };
            for t in 0..CHUNK {
                a0[t] += x2[0] * r0[t];
                a1[t] += x2[1] * r1[t];
            }
        }
        for (&i, &x) in ic.remainder().iter().zip(xc.remainder()) {
            if let Some(r) = chunk_at(src, (i - base) * k + kc) {
                for t in 0..CHUNK {
                    a0[t] += x * r[t];
                }
            }
        }
    } else {
        for (&i, &x) in idx.iter().zip(xs) {
            let off = (i - base) * k + kc;
            let row = src.get(off..off + w).unwrap_or_default();
            for (a, &y) in a0.iter_mut().zip(row) {
                *a += x * y;
            }
        }
    }
    for t in 0..CHUNK {
        a0[t] += a1[t];
    }
    a0
}

/// `K` rounded up to a multiple of 8 when `K ≤ 64`: the width of the padded
/// rows of the register-resident path (one pass per entry, the whole row of the
/// result in vector registers); `None` for wider `K` (chunked path).
pub(crate) fn padded_width(k: usize) -> Option<usize> {
    if k <= 64 {
        Some(k.div_ceil(8) * 8)
    } else {
        None
    }
}

/// `W` values at `off` as an array (`None` never happens for the callers' offsets).
#[inline(always)]
fn row_w<T: Real, const W: usize>(src: &[T], off: usize) -> Option<&[T; W]> {
    src.get(off..off + W)
        .and_then(|s| <&[T; W]>::try_from(s).ok())
}

/// `Σ_e xs[e] · src[(idx[e] − base)·W ..][..W]`: rows of stride `W`, two
/// independent accumulators of `W` values (held in registers).
#[inline(always)]
fn gather_full<T: Real, const W: usize>(idx: &[usize], base: usize, xs: &[T], src: &[T]) -> [T; W] {
    if W >= 32 {
        // One accumulator row: W/4 independent chains already cover the FMA latency, and a
        // second row would not fit in the 16 vector registers (spills).
        let mut a = [T::ZERO; W];
        for (&i, &x) in idx.iter().zip(xs) {
            if let Some(r) = row_w::<T, W>(src, (i - base) * W) {
                for t in 0..W {
                    a[t] += x * r[t];
                }
            }
        }
        return a;
    }
    let (mut a0, mut a1) = ([T::ZERO; W], [T::ZERO; W]);
    let mut ic = idx.chunks_exact(2);
    let mut xc = xs.chunks_exact(2);
    for (i2, x2) in (&mut ic).zip(&mut xc) {
        let rows = (
            row_w::<T, W>(src, (i2[0] - base) * W),
            row_w::<T, W>(src, (i2[1] - base) * W),
        );
        let (Some(r0), Some(r1)) = rows else { continue };
        for t in 0..W {
            a0[t] += x2[0] * r0[t];
            a1[t] += x2[1] * r1[t];
        }
    }
    for (&i, &x) in ic.remainder().iter().zip(xc.remainder()) {
        if let Some(r) = row_w::<T, W>(src, (i - base) * W) {
            for t in 0..W {
                a0[t] += x * r[t];
            }
        }
    }
    for t in 0..W {
        a0[t] += a1[t];
    }
    a0
}

/// Rows of `X·Vᵀ` from the row-sorted entries and `V` padded to stride `W`.
#[inline(always)]
fn xvt_rows<T: Real, const W: usize>(
    csr: &Csr<'_, T>,
    rows: (usize, usize),
    k: usize,
    vp: &[T],
    out: &mut [T],
) {
    let entries = (csr.row_ptr, csr.col_idx, csr.vals);
    if !T::gather_rows_hosted((W, k), rows, entries, vp, out) {
        xvt_rows_portable::<T, W>(csr, rows, k, vp, out);
    }
}

/// [`xvt_rows`] without the hosted kernel (`ffi::spk`), whose specification it is.
#[inline(always)]
fn xvt_rows_portable<T: Real, const W: usize>(
    csr: &Csr<'_, T>,
    (i0, i1): (usize, usize),
    k: usize,
    vp: &[T],
    out: &mut [T],
) {
    let (row_ptr, col_idx, vals) = (csr.row_ptr, csr.col_idx, csr.vals);
    // Rows i0..i1 into `out` (column-major, leading dimension i1 - i0).
    let ld = i1 - i0;
    for i in i0..i1 {
        let (cols, xs) = span(row_ptr, i, col_idx, vals);
        let acc = gather_full::<T, W>(cols, 0, xs, vp);
        for (t, &a) in acc.iter().enumerate().take(k) {
            if let Some(o) = out.get_mut(i - i0 + t * ld) {
                *o = a;
            }
        }
    }
}

/// One row block of `Uᵀ·X` (block `ut` of stride `W`), added into `out`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn utx_block<T: Real, const W: usize>(
    c: &Csc<'_, T>,
    i0: usize,
    i1: usize,
    k: usize,
    ut: &[T],
    cursor: &mut [usize],
    out: &mut [T],
) {
    let ends = c.col_ptr.get(1..).unwrap_or_default();
    for ((cur, &e), o) in cursor
        .iter_mut()
        .zip(ends)
        .zip(out.chunks_exact_mut(k.max(1)))
    {
        let (idx, xs) = block_entries(c, cur, e, i1);
        if idx.is_empty() {
            continue;
        }
        let acc = gather_full::<T, W>(idx, i0, xs, ut);
        for (d, &a) in o.iter_mut().zip(acc.iter()) {
            *d += a;
        }
    }
}

/// The entries of a column from `*cursor` up to its end `e` whose rows are
/// below `i1` (row indices and values); advances `*cursor` past them.
#[inline(always)]
fn block_entries<'c, T>(
    c: &Csc<'c, T>,
    cursor: &mut usize,
    e: usize,
    i1: usize,
) -> (&'c [usize], &'c [T]) {
    let s = *cursor;
    let (Some(rows), Some(vals)) = (c.row_idx.get(s..e), c.values.get(s..e)) else {
        return (&[], &[]);
    };
    let len = rows.iter().take_while(|&&r| r < i1).count();
    *cursor = s + len;
    match (rows.get(..len), vals.get(..len)) {
        (Some(a), Some(b)) => (a, b),
        _ => (&[], &[]),
    }
}

/// Rows per block of [`CscUtx`]: `K × rows` values of about 256 KiB.
fn row_block(k: usize, m: usize) -> usize {
    (32768 / k.max(1)).max(16).min(m.max(1))
}

/// The fixed split of a sparse product over `len` rows (of `X`, or of `Xᵀ`)
/// holding `nnz` entries at rank `k`: `(tasks, rows per task)`, a multiple of
/// `align`, from the shape alone (`crate::par`).
pub(crate) fn sparse_split(len: usize, nnz: usize, k: usize, align: usize) -> (usize, usize) {
    let per_row = (nnz / len.max(1)).saturating_mul(k).max(k);
    let tasks = tasks_for(len, per_row);
    let chunk = chunk_len(len, tasks, align);
    (len.div_ceil(chunk.max(1)), chunk)
}

/// `out (M×K, col-major) ← X·Vᵀ` for `v` `K×N` col-major, from the row-sorted
/// entries `csr` of an `M × N` matrix (see [`csr_x_vt_req`]). With `K ≤ 64`
/// the rows are split as [`sparse_split`] says and the blocks run on the
/// stack's [`crate::Parallel`] (each row's sum is the same whichever task
/// forms it: the same bits for every thread count).
pub(crate) fn csr_x_vt<T: Real>(
    csr: Csr<'_, T>,
    (m, n, k): (usize, usize, usize),
    v: &[T],
    out: &mut [T],
    st: &mut Stack<'_>,
) -> Result<(), Error> {
    let par = st.par();
    let mut st = st.rest();
    let nnz = csr.row_ptr.get(m).copied().unwrap_or(0);
    let (tasks, chunk) = sparse_split(m, nnz, k, CHUNK);
    let vp: &mut [T] = st.take_matrix(n, padded_width(k).unwrap_or(0))?;
    let Some(w) = padded_width(k).filter(|_| tasks > 1) else {
        simd::dispatch(CsrXvt {
            csr,
            m,
            n,
            v,
            k,
            vp,
            out,
        });
        return Ok(());
    };
    pad_into(v, n, k, w, vp);
    let vp: &[T] = vp;
    let slots = st.take_slots(tasks, WorkReq::matrix::<T>(chunk, k))?;
    let blocks = RowBlocks::new(out, m, k, chunk).ok_or(Error::Internal)?;
    par.run_items(blocks.zip(slots), &|(mut blk, slot)| {
        let r = blk.cols[0].len();
        let buf: &mut [T] = Stack::new(slot).take_matrix(r, k)?;
        gather_block(csr, (blk.r0, blk.r0 + r), (k, w), vp, buf);
        for (col, src) in blk.cols.iter_mut().take(k).zip(buf.chunks_exact(r.max(1))) {
            for (d, &x) in col.iter_mut().zip(src) {
                *d = x;
            }
        }
        Ok(())
    })
}

/// Whether `Uᵀ·X` of an `m × n` CSC matrix (`nnz` entries, `K ≤ 64`) is
/// scattered by row blocks into one partial result per task, and then with
/// how many tasks of how many rows (a multiple of `align`): when `X` is tall
/// (the `tasks` partials of `n × w` take at most twice the `m × w` of the
/// padded `U` that the gather by columns needs). Scattering reads each row of
/// `U` once and keeps its partial result in cache, where the gather by
/// columns reads the rows of `U` at random; for wide `X` the gather wins
/// (and needs no reduction). From the shape alone.
pub(crate) fn scatter_split(
    (m, n, nnz): (usize, usize, usize),
    k: usize,
    align: usize,
) -> Option<(usize, usize)> {
    let (tasks, _) = sparse_split(m, nnz, k, align);
    // Each partial costs a zeroing and a read in the reduction: at most
    // SCATTER_TASKS of them (even shares for 2 and 4 threads).
    let tasks = tasks.min(SCATTER_TASKS);
    let rows = chunk_len(m, tasks, align);
    let tasks = m.div_ceil(rows.max(1));
    (n.saturating_mul(tasks) <= m.saturating_mul(2)).then_some((tasks, rows))
}

/// Most partial results of a scattered `Uᵀ·X` ([`scatter_split`]).
const SCATTER_TASKS: usize = 4;

/// `out (K×N) ← β·out + s·Σ_t parts_t` for the `tasks` partial results
/// `parts_t` (`n × w`, padded stride `w`, one after the other), added in task
/// order; columns split into tasks of their own on `par`.
pub(crate) fn reduce_partials<T: Real>(
    parts: &[T],
    (n, k, w): (usize, usize, usize),
    tasks: usize,
    (s, beta): (T, T),
    out: &mut [T],
    par: Parallel,
) -> Result<(), Error> {
    let out = out.part_mut(..k * n)?;
    if parts.len() < tasks * n * w || tasks == 0 {
        return Err(Error::Internal);
    }
    let chunk = chunk_len(n, tasks_for(n, tasks.saturating_mul(k)), 1);
    // (`max(1)` at each use: nonzero sizes the compiler can see, even inside
    // the task, which reads them from its captures.)
    par.run_items(out.chunks_mut((k * chunk).max(1)).enumerate(), &|(c, o)| {
        let mut acc = [T::ZERO; 64];
        let acc = acc.part_mut(..w)?;
        for (jj, oc) in o.chunks_exact_mut(k.max(1)).enumerate() {
            let j = c * chunk + jj;
            // Part by part (each a contiguous row of w values), in task order.
            let rows = parts.chunks_exact(w.max(1)).skip(j);
            let mut rows = rows.step_by(n.max(1)).take(tasks);
            let first = rows.next().ok_or(Error::Internal)?;
            acc.iter_mut().zip(first).for_each(|(a, &x)| *a = x);
            for row in rows {
                acc.iter_mut().zip(row).for_each(|(a, &x)| *a += x);
            }
            for (d, &a) in oc.iter_mut().zip(acc.iter()) {
                let x = s * a;
                *d = if beta == T::ZERO { x } else { beta * *d + x };
            }
        }
        Ok(())
    })
}

/// `out (K×N) ← β·out + Uᵀ·X` scattered by row blocks ([`scatter_split`]):
/// task `t` adds its rows' entries into its own partial `parts_t`, then
/// [`reduce_partials`]. `slots`: one `rows × w` block per task.
#[allow(clippy::too_many_arguments)]
fn ut_x_scatter<T: Real>(
    csr: Csr<'_, T>,
    (m, n, k, w): (usize, usize, usize, usize),
    u: &[T],
    beta: T,
    (tasks, rows): (usize, usize),
    parts: &mut [T],
    slots: Slots<'_>,
    out: &mut [T],
    par: Parallel,
) -> Result<(), Error> {
    let rb = rows.min(ROW_BLOCK_SCATTER);
    par.run_items(
        parts
            .chunks_mut((n * w).max(1))
            .take(tasks)
            .enumerate()
            .zip(slots),
        &|((t, op), slot)| {
            op.fill(T::ZERO);
            let blk: &mut [T] = Stack::new(slot).take_matrix(rb, w)?;
            let (r0, r1) = (t * rows, ((t + 1) * rows).min(m));
            for i0 in (r0..r1).step_by(rb.max(1)) {
                let i1 = (i0 + rb).min(r1);
                let b = blk.get_mut(..(i1 - i0) * w).ok_or(Error::Internal)?;
                rows_padded(u, m, k, w, i0, i1, b);
                scatter_block(csr, (i0, i1), w, b, op);
            }
            Ok(())
        },
    )?;
    reduce_partials(parts, (n, k, w), tasks, (T::ONE, beta), out, par)
}

/// Rows of `U` per padded block of [`ut_x_scatter`] (about 28 KiB at `w = 56`).
const ROW_BLOCK_SCATTER: usize = 64;

/// `out (K×N) ← β·out + s·Uᵀ·X` by columns of `X` (`K ≤ 64`): the CSC arrays
/// are the row-sorted entries of `Xᵀ`, so column `j` of the result is the
/// gather of [`xvt_rows`] over column `j`'s entries from the rows of `U`
/// padded to stride `w` (`up`, `M × w`). The columns are split as
/// [`sparse_split`] says and run on `par`, each task with a `chunk × k`
/// scratch slot; no two tasks write the same column (no reduction).
#[allow(clippy::too_many_arguments)]
pub(crate) fn ut_x_by_columns<T: Real>(
    c: &Csc<'_, T>,
    up: &[T],
    (k, w): (usize, usize),
    (s, beta): (T, T),
    (tasks, chunk): (usize, usize),
    out: &mut [T],
    slots: Slots<'_>,
    par: Parallel,
) -> Result<(), Error> {
    let n = c.cols;
    let xt = Csr::new(c.col_ptr, c.row_idx, c.values);
    let out = out.part_mut(..k * n)?;
    let per = k
        .checked_mul(chunk)
        .filter(|&p| p > 0)
        .ok_or(Error::Internal)?;
    if out.chunks(per).len() != tasks {
        return Err(Error::Internal);
    }
    par.run_items(out.chunks_mut(per).enumerate().zip(slots), &|(
        (t, o),
        slot,
    )| {
        let (j0, r) = (t * chunk, o.len() / k.max(1));
        let buf: &mut [T] = Stack::new(slot).take_matrix(r, k)?;
        gather_block(xt, (j0, j0 + r), (k, w), up, buf);
        for (jj, oc) in o.chunks_exact_mut(k.max(1)).enumerate() {
            for (tt, d) in oc.iter_mut().enumerate() {
                let x = s * buf.get(jj + tt * r).copied().unwrap_or(T::ZERO);
                *d = if beta == T::ZERO { x } else { beta * *d + x };
            }
        }
        Ok(())
    })
}

/// `out (K×N, col-major) ← β·out + Uᵀ·X` for `u` `M×K` col-major (`β = 0`:
/// `out` not read), in parallel on the stack's [`crate::Parallel`] when
/// `K ≤ 64`: for a tall `X` with its row-sorted entries `csr`, scattered by
/// row blocks into per-task partial results ([`scatter_split`]); otherwise
/// gathered by columns ([`ut_x_by_columns`]). Wider `K`: the columns walked
/// block by block of rows (serial).
pub(crate) fn csc_ut_x<T: Real>(
    c: &Csc<'_, T>,
    csr: Option<Csr<'_, T>>,
    u: &[T],
    k: usize,
    beta: T,
    out: &mut [T],
    st: &mut Stack<'_>,
) -> Result<(), Error> {
    let (m, n) = (c.rows, c.cols);
    let par = st.par();
    let mut st = st.rest();
    if let (Some(w), Some(csr), Some(split)) = (
        padded_width(k),
        csr,
        scatter_split((m, n, c.nnz()), k, CHUNK),
    ) {
        let parts: &mut [T] = st.take_matrix(n * w, split.0)?;
        let rb = split.1.min(ROW_BLOCK_SCATTER);
        let slots = st.take_slots(split.0, WorkReq::matrix::<T>(rb, w))?;
        return ut_x_scatter(csr, (m, n, k, w), u, beta, split, parts, slots, out, par);
    }
    if let Some(w) = padded_width(k) {
        let split = sparse_split(n, c.nnz(), k, CHUNK);
        let up: &mut [T] = st.take_matrix(m, w)?;
        rows_padded(u, m, k, w, 0, m, up);
        let slots = st.take_slots(split.0, WorkReq::matrix::<T>(split.1, k))?;
        return ut_x_by_columns(c, up, (k, w), (T::ONE, beta), split, out, slots, par);
    }
    let ut: &mut [T] = st.take_matrix(k, row_block(k, m))?;
    let cursor: &mut [usize] = st.take(n)?;
    simd::dispatch(CscUtx {
        c,
        u,
        k,
        beta,
        ut,
        cursor,
        out,
    });
    Ok(())
}

/// Workspace of [`csr_x_vt`] for an `rows × cols` matrix with `nnz` entries at
/// rank `k` (`V` at a padded stride, and the tasks' blocks).
pub(crate) fn csr_x_vt_req<T>(rows: usize, cols: usize, nnz: usize, k: usize) -> WorkReq {
    let vp = WorkReq::matrix::<T>(cols, padded_width(k).unwrap_or(0));
    let (tasks, chunk) = sparse_split(rows, nnz, k, CHUNK);
    if tasks <= 1 || padded_width(k).is_none() {
        return vp;
    }
    vp.and(WorkReq::matrix::<T>(chunk, k).times(tasks))
}

/// Workspace of [`csc_ut_x`]: `K ≤ 64`, the tasks' partial results and blocks
/// (tall `X`) or the padded rows of `U` and the tasks' blocks; else a row
/// block of `Uᵀ` and `N` cursors.
pub(crate) fn csc_ut_x_req<T>(rows: usize, cols: usize, nnz: usize, k: usize) -> WorkReq {
    let scatter = padded_width(k).zip(scatter_split((rows, cols, nnz), k, CHUNK));
    let scatter = scatter.map_or(WorkReq::EMPTY, |(w, (tasks, per))| {
        WorkReq::all_of(&[
            WorkReq::matrix::<T>(cols, w).times(tasks),
            WorkReq::matrix::<T>(per.min(ROW_BLOCK_SCATTER), w).times(tasks),
        ])
    });
    scatter.or(match padded_width(k) {
        Some(w) => {
            let (tasks, chunk) = sparse_split(cols, nnz, k, CHUNK);
            WorkReq::matrix::<T>(rows, w).and(WorkReq::matrix::<T>(chunk, k).times(tasks))
        }
        None => WorkReq::matrix::<T>(k, row_block(k, rows)).and(WorkReq::new::<usize>(cols)),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::rng::Rng;
    use std::vec::Vec;

    pub(crate) fn random_sparse(
        m: usize,
        n: usize,
        density: f64,
        seed: u64,
    ) -> (Vec<f64>, Vec<usize>, Vec<usize>, Vec<f64>) {
        let mut rng = Rng::new(seed);
        let mut dense = std::vec![0.0; m * n];
        let (mut cp, mut ri, mut vals) = (std::vec![0usize], Vec::new(), Vec::new());
        for j in 0..n {
            for i in 0..m {
                if rng.uniform() < density {
                    let x = rng.uniform();
                    dense[i + j * m] = x;
                    ri.push(i);
                    vals.push(x);
                }
            }
            cp.push(ri.len());
        }
        (dense, cp, ri, vals)
    }

    /// `cols = usize::MAX` with an empty `col_ptr`: `cols + 1` wraps to the
    /// length 0, and the check used to pass and then index `col_ptr[0]` (a
    /// panic). Refused now, as any `col_ptr` of the wrong length.
    #[test]
    fn csc_new_refuses_a_column_count_that_wraps() {
        let r = Csc::<f64>::new(1, usize::MAX, &[], &[], &[]);
        assert_eq!(r.err(), Some(Error::DimensionMismatch));
        let r = Csc::<f64>::new(2, 1, &[0, 3], &[0, 1], &[1.0, 2.0]);
        assert_eq!(r.err(), Some(Error::BufferTooShort));
        let r = Csc::<f64>::new(2, 2, &[0, 2, 1], &[0, 1], &[1.0, 2.0]);
        assert_eq!(r.err(), Some(Error::MalformedCsc));
    }

    /// The portable row loops (the hosted build runs `ffi::spk` instead on
    /// AVX2 machines, so the fits' tests do not reach them there).
    #[test]
    fn portable_row_loops_match_the_plain_sums() {
        fn at_width<const W: usize>() {
            let (m, n) = (41, 19);
            let (dense, cp, ri, vals) = random_sparse(m, n, 0.25, W as u64);
            let c = Csc::new(m, n, &cp, &ri, &vals).unwrap();
            let (mut rp, mut ci, mut cv) = (
                std::vec![0; m + 1],
                std::vec![0; ri.len()],
                std::vec![0.0; ri.len()],
            );
            csr_fill(&c, &mut rp, &mut ci, &mut cv);
            let csr = Csr {
                row_ptr: &rp,
                col_idx: &ci,
                vals: &cv,
            };
            let k = W - 3;
            let mut rng = Rng::new(7);
            let vp: Vec<f64> = (0..n * W).map(|_| rng.uniform()).collect();
            let blk: Vec<f64> = (0..m * W).map(|_| rng.uniform()).collect();
            let (i0, i1) = (4, m - 2);
            let r = i1 - i0;
            let mut out = std::vec![0.0; r * k];
            xvt_rows_portable::<f64, W>(&csr, (i0, i1), k, &vp, &mut out);
            // Uᵀ·X by columns: the CSC arrays as the row-sorted entries of Xᵀ,
            // gathered from the padded rows of U (`blk`, m × W).
            let xt = Csr::new(&cp, &ri, &vals);
            let (j0, j1) = (2, n - 1);
            let rc = j1 - j0;
            let mut ut = std::vec![0.0; rc * k];
            xvt_rows_portable::<f64, W>(&xt, (j0, j1), k, &blk, &mut ut);
            for i in i0..i1 {
                for t in 0..k {
                    let want: f64 = (0..n).map(|j| dense[i + j * m] * vp[j * W + t]).sum();
                    assert!((want - out[i - i0 + t * r]).abs() < 1e-13, "W{W} ({i},{t})");
                }
            }
            for j in j0..j1 {
                for t in 0..k {
                    let want: f64 = (0..m).map(|i| dense[i + j * m] * blk[i * W + t]).sum();
                    assert!((want - ut[j - j0 + t * rc]).abs() < 1e-13, "W{W} ({j},{t})");
                }
            }
        }
        at_width::<8>();
        at_width::<24>();
        at_width::<56>();
        at_width::<64>();
    }

    /// `Uᵀ·X` of a tall view (scattered into per-task partials) and of a wide
    /// one (gathered by columns), and `X·Vᵀ` by row blocks, each split into
    /// several tasks: the plain sums to rounding, and the same bits serially
    /// and on 2 and 3 threads.
    #[test]
    fn parallel_products_match_the_plain_sums_in_both_modes() {
        use crate::par::Parallel;
        let k = 24;
        for (m, n, density, tall) in [(20000, 300, 0.02, true), (400, 700, 0.5, false)] {
            let (dense, cp, ri, vals) = random_sparse(m, n, density, m as u64);
            let c = Csc::new(m, n, &cp, &ri, &vals).unwrap();
            let nnz = c.nnz();
            assert_eq!(scatter_split((m, n, nnz), k, CHUNK).is_some(), tall);
            let tasks = if tall {
                scatter_split((m, n, nnz), k, CHUNK).unwrap().0
            } else {
                sparse_split(n, nnz, k, CHUNK).0
            };
            assert!(tasks > 1, "{m} x {n}: {tasks} task(s)");
            let (mut rp, mut ci, mut cv) =
                (std::vec![0; m + 1], std::vec![0; nnz], std::vec![0.0; nnz]);
            csr_fill(&c, &mut rp, &mut ci, &mut cv);
            let csr = Csr::new(&rp, &ci, &cv);
            let mut rng = Rng::new(3);
            let u: Vec<f64> = (0..m * k).map(|_| rng.uniform()).collect();
            let v: Vec<f64> = (0..k * n).map(|_| rng.uniform()).collect();
            let req = csc_ut_x_req::<f64>(m, n, nnz, k).or(csr_x_vt_req::<f64>(m, n, nnz, k));
            let mut work = std::vec![0u8; req.bytes().unwrap()];
            let run = |par: Parallel, work: &mut [u8]| {
                let (mut q, mut a) = (std::vec![0.0; k * n], std::vec![0.0; m * k]);
                let mut st = Stack::new(work).with_par(par);
                csc_ut_x(&c, Some(csr), &u, k, 0.0, &mut q, &mut st).unwrap();
                csr_x_vt(csr, (m, n, k), &v, &mut a, &mut st).unwrap();
                (q, a)
            };
            let (q, a) = run(Parallel::Serial, &mut work);
            for j in (0..n).step_by(37) {
                for t in 0..k {
                    let want: f64 = (0..m).map(|i| u[i + t * m] * dense[i + j * m]).sum();
                    assert!((want - q[t + j * k]).abs() <= 1e-12 * want.abs().max(1.0));
                }
            }
            for i in (0..m).step_by(997) {
                for t in 0..k {
                    let want: f64 = (0..n).map(|j| dense[i + j * m] * v[t + j * k]).sum();
                    assert!((want - a[i + t * m]).abs() <= 1e-12 * want.abs().max(1.0));
                }
            }
            for par in [Parallel::Threads(2), Parallel::Threads(3)] {
                let (q2, a2) = run(par, &mut work);
                let bits = |x: &[f64]| x.iter().map(|y| y.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&q2), bits(&q), "{m} x {n}: Uᵀ·X, {par:?}");
                assert_eq!(bits(&a2), bits(&a), "{m} x {n}: X·Vᵀ, {par:?}");
            }
        }
    }

    #[test]
    fn csc_validation() {
        let v = [1.0, 2.0, 3.0];
        assert_eq!(
            Csc::new(3, 2, &[0, 2, 3], &[0, 2, 1], &v).map(|_| ()),
            Ok(())
        );
        assert_eq!(
            Csc::new(3, 2, &[1, 2, 3], &[0, 2, 1], &v).err(),
            Some(Error::MalformedCsc)
        );
        assert_eq!(
            Csc::new(3, 2, &[0, 2, 3], &[2, 0, 1], &v).err(),
            Some(Error::MalformedCsc)
        );
        assert_eq!(
            Csc::new(3, 2, &[0, 2, 3], &[0, 0, 1], &v).err(),
            Some(Error::MalformedCsc)
        );
        assert_eq!(
            Csc::new(3, 2, &[0, 2, 3], &[0, 3, 1], &v).err(),
            Some(Error::MalformedCsc)
        );
        assert_eq!(
            Csc::new(3, 2, &[0, 2, 1], &[0, 2, 1], &v).err(),
            Some(Error::MalformedCsc)
        );
        assert_eq!(
            Csc::new(3, 2, &[0, 2, 4], &[0, 2, 1], &v).err(),
            Some(Error::BufferTooShort)
        );
        assert_eq!(
            Csc::new(3, 2, &[0, 2], &[0, 2, 1], &v).err(),
            Some(Error::DimensionMismatch)
        );
        assert_eq!(
            Csc::<f64>::new(0, 2, &[0, 0, 0], &[], &[]).err(),
            Some(Error::ZeroDimension)
        );
    }
}
