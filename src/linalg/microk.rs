//! The FMA register tiles of the blocked GEMM (`f64`, x86-64, with or without
//! `std`; issue 18, item 1).
//!
//! The portable tile (`blocked::micro`, `8 × 4`) is written so that the
//! compiler can vectorise it; here the tile is written with intrinsics, as
//! the `gemm` crate's kernels are, sized to the register file of each level:
//!
//! | level | tile | accumulators | per step of `p` |
//! |---|---|---|---|
//! | AVX-512F | `24 × 8` | 24 `__m512d` | 3 loads of `A`, 8 broadcasts of `B`, 24 FMAs |
//! | AVX2 + FMA | `12 × 4` | 12 `__m256d` | 3 loads of `A`, 4 broadcasts of `B`, 12 FMAs |
//!
//! The edge tiles of a block (fewer rows or columns) are the same loop with
//! fewer registers (one, two or three vectors of rows; any number of columns
//! up to the full width), so no multiply-add is spent on padding beyond the
//! last vector; the partial last vector of rows is written through a mask
//! (AVX-512) or element by element (AVX2). The tile reads its operands
//! through strides, so the blocked GEMM hands it column-major operands in
//! place instead of packing them (`X` in `X·Vᵀ` and `Uᵀ·X`).
//!
//! **Rounding.** Each accumulator is updated by a fused multiply-add (one
//! rounding per step, against two in the portable tile), and the tile is
//! added to `C` as `C + α·acc`, also fused. So the levels differ in the last
//! bits (the products agree to a few units of rounding of their magnitude;
//! `tests/simd_levels.rs` and the unit test `blocked_levels_agree` check
//! it), while each level is deterministic: the same operands give the same
//! bits, every sum taken in the same order over `p`.
//!
//! # Safety
//! The `unsafe` here: the loads of `A` and `B` and the loads and stores of
//! `C`, each inside a slice whose length was checked first against the last
//! index the tile touches ([`AvxTile::tile_add`]; the masked AVX-512 accesses
//! touch only the unmasked elements, inside the checked range); the calls into
//! the `#[target_feature]` functions, made only through an [`AvxTile`] token,
//! which exists only when the detected SIMD level is AVX2 (with FMA) or
//! higher, its AVX-512 flag only when the level is AVX-512F; prefetches (no
//! memory access). One of the four files of `linalg/` allowed `unsafe`.
#![allow(unsafe_code)]

use super::simd::{active_level, SimdLevel};

/// Proof that this CPU runs AVX2 and FMA (the detected and allowed level is
/// AVX2 or AVX-512); only [`AvxTile::new`] makes one. The flag: the level is
/// AVX-512 (the `24 × 8` tile runs).
#[derive(Clone, Copy, Debug)]
pub(crate) struct AvxTile(bool);

/// The largest tile of any level on this architecture, rows × columns (sizes
/// the workspace, which does not depend on the level): the AVX-512 tile on
/// x86-64, else the portable `8 × 4` (so a microcontroller's workspace does
/// not grow for tiles it never runs).
pub(crate) const MR_MAX: usize = if cfg!(target_arch = "x86_64") { 24 } else { 8 };
/// See [`MR_MAX`].
pub(crate) const NR_MAX: usize = if cfg!(target_arch = "x86_64") { 8 } else { 4 };

impl AvxTile {
    /// The token, when the active SIMD level is AVX2 or higher (x86-64).
    pub(crate) fn new() -> Option<Self> {
        let level = active_level();
        (cfg!(target_arch = "x86_64") && level >= SimdLevel::Avx2)
            .then_some(AvxTile(level == SimdLevel::Avx512))
    }

    /// The sixteen partial sums `s[l] = Σ_{i ≡ l (mod 16), i < 16·⌊n/16⌋} x_i y_i` in `f32`
    /// (`n`: the shorter length), each a multiply then an add (no fused multiply-add), so
    /// lane for lane the bits of the portable loop of `linalg::dots_f32`.
    #[inline(always)]
    pub(crate) fn partial_dots_f32(self, x: &[f32], y: &[f32]) -> [f32; 16] {
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
        let mut s = [0.0f32; 16];
        #[cfg(target_arch = "x86_64")]
        {
            let n16 = x.len().min(y.len()) / 16 * 16;
            let (Some(x), Some(y)) = (x.get(..n16), y.get(..n16)) else {
                return s;
            };
            // SAFETY: the token proves AVX2; both slices hold `n16` values, the loads read
            // `x[i..i + 16]` and `y[i..i + 16]` for `i + 16 <= n16` only.
            unsafe { dots16_avx2(x.as_ptr(), y.as_ptr(), n16, &mut s) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (x, y); // no token exists off x86-64 (`new` gives None)
        s
    }

    /// The sixteen partial sums of `x·y0` and of `x·y1` in one pass over `x` (three loads per
    /// sixteen values of both products instead of four, four independent accumulator chains
    /// instead of two): each lane for lane the bits of [`AvxTile::partial_dots_f32`] of that
    /// pair (`n`: the shortest of the three lengths, which must then be that of each pair).
    #[inline(always)]
    pub(crate) fn partial_dots2_f32(self, x: &[f32], y0: &[f32], y1: &[f32]) -> [[f32; 16]; 2] {
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
        let mut s = [[0.0f32; 16]; 2];
        #[cfg(target_arch = "x86_64")]
        {
            let n16 = x.len().min(y0.len()).min(y1.len()) / 16 * 16;
            let (Some(x), Some(y0), Some(y1)) = (x.get(..n16), y0.get(..n16), y1.get(..n16)) else {
                return s;
            };
            // SAFETY: the token proves AVX2; the three slices hold `n16` values, the loads read
            // `[i..i + 16]` of each for `i + 16 <= n16` only.
            unsafe { dots16x2_avx2(x.as_ptr(), (y0.as_ptr(), y1.as_ptr()), n16, &mut s) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (x, y0, y1); // no token exists off x86-64 (`new` gives None)
        s
    }

    /// The four finished products `x·y_t` (each the bits of [`super::dots_f32`] of that pair:
    /// the sixteen partial sums of [`AvxTile::partial_dots_f32`], the reduction tree of
    /// [`finish16`] and its tail, in that order), on the AVX-512 level only (one 16-lane
    /// register per product holds exactly the sixteen partial sums, so four independent
    /// chains; the tree is taken in registers for the four at once, lane for lane the same
    /// additions). `None` below AVX-512 or when a `y_t` is not as long as `x`.
    #[inline(always)]
    pub(crate) fn dots4_f32(self, x: &[f32], y: [&[f32]; 4]) -> Option<[f32; 4]> {
        if !self.0 || y.iter().any(|y| y.len() != x.len()) {
            return None;
        }
        #[cfg(target_arch = "x86_64")]
        {
            let ys = [y[0].as_ptr(), y[1].as_ptr(), y[2].as_ptr(), y[3].as_ptr()];
            // SAFETY: the token's flag proves AVX-512F; the five slices hold `x.len()` values
            // each, the loads read `[i..i + 16]` for `i + 16 <= len` and the masked loads of
            // the tail only its lanes below `len`.
            Some(unsafe { dots4_avx512(x.as_ptr(), ys, x.len()) })
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (x, y);
            None
        }
    }

    /// The eight `f64` partial sums `s[l] = Σ_{i ≡ l (mod 8), i < 8·⌊n/8⌋} x_i y_t,i` of four
    /// products at once (`linalg::panel_dots`' partial sums, each a multiply then an add in
    /// order over `i`: lane for lane its bits), on the AVX-512 level only (one 8-lane
    /// register per product, four independent chains). `None` below AVX-512 or when a `y_t`
    /// is not as long as `x`.
    #[inline(always)]
    pub(crate) fn partial_dots4_f64(self, x: &[f64], y: [&[f64]; 4]) -> Option<[[f64; 8]; 4]> {
        if !self.0 || y.iter().any(|y| y.len() != x.len()) {
            return None;
        }
        #[cfg(target_arch = "x86_64")]
        {
            let mut s = [[0.0f64; 8]; 4];
            let ys = [y[0].as_ptr(), y[1].as_ptr(), y[2].as_ptr(), y[3].as_ptr()];
            // SAFETY: the token's flag proves AVX-512F; the five slices hold `x.len()` values
            // each, the loads read `[i..i + 8]` for `i + 8 <= len` only.
            unsafe { dots8x4_f64_avx512(x.as_ptr(), ys, x.len() / 8 * 8, &mut s) };
            Some(s)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (x, y);
            None
        }
    }

    /// Whether this is the AVX-512 tile (`24 × 8`; else `12 × 4`).
    #[inline(always)]
    pub(crate) fn is_512(self) -> bool {
        self.0
    }

    /// `C[i + j·ldc] += α · Σ_p a[p·lda + i] · b[p·ldb.0 + j·ldb.1]` for
    /// `i < rows`, `j < cols` (at most the tile: `24 × 8` on AVX-512, `12 × 4`
    /// on AVX2), each sum in order of `p < kb`. The rows are read as whole
    /// vectors (8 or 4 values): `a[p·lda + i]` must exist up to the vector
    /// that holds row `rows − 1` (packed slivers are zero padded to the full
    /// tile). `false` (nothing written) when an index would fall outside a
    /// slice or the shape exceeds the tile.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn tile_add(
        self,
        (a, lda): (&[f64], usize),
        (b, (ldb_p, ldb_j)): (&[f64], (usize, usize)),
        kb: usize,
        (c, ldc): (&mut [f64], usize),
        (rows, cols): (usize, usize),
        alpha: f64,
    ) -> bool {
        let (mr, nr, lanes) = if self.0 { (24, 8, 8) } else { (12, 4, 4) };
        if rows == 0 || cols == 0 || kb == 0 {
            return true;
        }
        if rows > mr || cols > nr {
            return false;
        }
        let mv = rows.div_ceil(lanes);
        let ends = (|| {
            let last = kb - 1;
            let a_end = last.checked_mul(lda)?.checked_add(mv * lanes)?;
            let b_end = last
                .checked_mul(ldb_p)?
                .checked_add((cols - 1).checked_mul(ldb_j)?)?
                .checked_add(1)?;
            let c_end = (cols - 1).checked_mul(ldc)?.checked_add(rows)?;
            Some((a_end, b_end, c_end))
        })();
        let Some((a_end, b_end, c_end)) = ends else {
            return false;
        };
        if a.len() < a_end || b.len() < b_end || c.len() < c_end {
            return false;
        }
        #[cfg(target_arch = "x86_64")]
        {
            let args = Args {
                a: a.as_ptr(),
                lda,
                b: b.as_ptr(),
                ldb: (ldb_p, ldb_j),
                kb,
                c: c.as_mut_ptr(),
                ldc,
                rows,
                alpha,
            };
            /// `$f::<MV, NB, UNIT>(args)` for the shape `(mv, cols)` and
            /// whether B's columns are adjacent (`ldb.1 = 1`: a packed sliver,
            /// whose broadcasts then have constant offsets).
            macro_rules! shapes {
                ($f:ident, $sel:expr, $(($m:literal, $n:literal)),*) => {
                    match ($sel, ldb_j == 1) {
                        $((($m, $n), true) => $f::<$m, $n, true>(args),)*
                        $((($m, $n), false) => $f::<$m, $n, false>(args),)*
                        _ => return false,
                    }
                };
            }
            // SAFETY: the token exists only when the CPU has AVX2 and FMA, its
            // flag only when it has AVX-512F; every index the kernel reads or
            // writes is below `a_end`, `b_end` and `c_end` (checked above).
            unsafe {
                if self.0 {
                    shapes!(
                        k512,
                        (mv, cols),
                        (1, 1),
                        (1, 2),
                        (1, 3),
                        (1, 4),
                        (1, 5),
                        (1, 6),
                        (1, 7),
                        (1, 8),
                        (2, 1),
                        (2, 2),
                        (2, 3),
                        (2, 4),
                        (2, 5),
                        (2, 6),
                        (2, 7),
                        (2, 8),
                        (3, 1),
                        (3, 2),
                        (3, 3),
                        (3, 4),
                        (3, 5),
                        (3, 6),
                        (3, 7),
                        (3, 8)
                    )
                } else {
                    shapes!(
                        k256,
                        (mv, cols),
                        (1, 1),
                        (1, 2),
                        (1, 3),
                        (1, 4),
                        (2, 1),
                        (2, 2),
                        (2, 3),
                        (2, 4),
                        (3, 1),
                        (3, 2),
                        (3, 3),
                        (3, 4)
                    )
                }
            }
            true
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (alpha, ldc);
            false
        }
    }
}

impl AvxTile {
    /// Packs a sliver of a row-contiguous operand, transposed:
    /// `out[p·w + i] = data[at + i·rs + p]` for `i < rows`, `p < kb`, and
    /// zeros for `rows ≤ i < w` (`w` a multiple of 8, `rows ≤ w`). In 8 × 8
    /// blocks transposed in registers (AVX-512 only; the compiled portable
    /// loop stored one value at a time, through scatters). `false` (nothing
    /// written) on AVX2 or when an index would fall outside a slice.
    #[inline(always)]
    pub(crate) fn pack_rows(
        self,
        (data, at, rs): (&[f64], usize, usize),
        (rows, kb): (usize, usize),
        w: usize,
        out: &mut [f64],
    ) -> bool {
        if !self.0 || !w.is_multiple_of(8) || rows == 0 || rows > w || kb == 0 {
            return false;
        }
        let end = (rows - 1)
            .checked_mul(rs)
            .and_then(|x| x.checked_add(at))
            .and_then(|x| x.checked_add(kb));
        let out_len = kb.checked_mul(w);
        match (end, out_len) {
            (Some(e), Some(o)) if e <= data.len() && o <= out.len() => {}
            _ => return false,
        }
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: AVX-512F (the token's flag); every `at + i·rs + p`
            // (`i < rows`, `p < kb`) is below `end ≤ data.len()` and every
            // `p·w + i` (`i < w`) below `kb·w ≤ out.len()` (checked above).
            unsafe { pack_rows_512(data.as_ptr().add(at), rs, (rows, kb), w, out.as_mut_ptr()) };
            true
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }
}

/// [`AvxTile::pack_rows`] after its checks: `src` points at `(row 0, p 0)`.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn pack_rows_512(
    src: *const f64,
    rs: usize,
    (rows, kb): (usize, usize),
    w: usize,
    out: *mut f64,
) {
    use core::arch::x86_64::{
        __m512d, _mm512_loadu_pd, _mm512_permutex2var_pd, _mm512_set_epi64, _mm512_setzero_pd,
        _mm512_shuffle_f64x2, _mm512_storeu_pd, _mm512_unpackhi_pd, _mm512_unpacklo_pd,
    };
    let k8 = kb / 8 * 8;
    // Stage 2 of the transpose: rows 0-3 of columns (q, q + 4) from two
    // stage-1 vectors (`_mm512_set_epi64` lists lanes 7 to 0).
    let lo = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
    let hi = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
    for i0 in (0..w).step_by(8) {
        let n = rows.saturating_sub(i0).min(8);
        if n == 8 {
            let mut p = 0;
            while p < k8 {
                let mut r = [_mm512_setzero_pd(); 8];
                for (i, ri) in r.iter_mut().enumerate() {
                    // SAFETY: row i0 + i < rows, values p .. p + 8 ≤ kb.
                    *ri = unsafe { _mm512_loadu_pd(src.add((i0 + i) * rs + p)) };
                }
                // Stage 1: pairs of rows, even and odd columns.
                let t: [__m512d; 8] = [
                    _mm512_unpacklo_pd(r[0], r[1]),
                    _mm512_unpackhi_pd(r[0], r[1]),
                    _mm512_unpacklo_pd(r[2], r[3]),
                    _mm512_unpackhi_pd(r[2], r[3]),
                    _mm512_unpacklo_pd(r[4], r[5]),
                    _mm512_unpackhi_pd(r[4], r[5]),
                    _mm512_unpacklo_pd(r[6], r[7]),
                    _mm512_unpackhi_pd(r[6], r[7]),
                ];
                // Stage 2: four rows; s[0] holds columns 0 and 4, s[1] 2 and 6,
                // s[2] 1 and 5, s[3] 3 and 7 (rows 0-3), s[4..8] the same for rows 4-7.
                let s: [__m512d; 8] = [
                    _mm512_permutex2var_pd(t[0], lo, t[2]),
                    _mm512_permutex2var_pd(t[0], hi, t[2]),
                    _mm512_permutex2var_pd(t[1], lo, t[3]),
                    _mm512_permutex2var_pd(t[1], hi, t[3]),
                    _mm512_permutex2var_pd(t[4], lo, t[6]),
                    _mm512_permutex2var_pd(t[4], hi, t[6]),
                    _mm512_permutex2var_pd(t[5], lo, t[7]),
                    _mm512_permutex2var_pd(t[5], hi, t[7]),
                ];
                // Stage 3: whole columns (rows 0-3 from s[x], 4-7 from s[x + 4]).
                let cols: [__m512d; 8] = [
                    _mm512_shuffle_f64x2::<0x44>(s[0], s[4]),
                    _mm512_shuffle_f64x2::<0x44>(s[2], s[6]),
                    _mm512_shuffle_f64x2::<0x44>(s[1], s[5]),
                    _mm512_shuffle_f64x2::<0x44>(s[3], s[7]),
                    _mm512_shuffle_f64x2::<0xEE>(s[0], s[4]),
                    _mm512_shuffle_f64x2::<0xEE>(s[2], s[6]),
                    _mm512_shuffle_f64x2::<0xEE>(s[1], s[5]),
                    _mm512_shuffle_f64x2::<0xEE>(s[3], s[7]),
                ];
                for (q, &c) in cols.iter().enumerate() {
                    // SAFETY: (p + q)·w + i0 + 8 ≤ kb·w.
                    unsafe { _mm512_storeu_pd(out.add((p + q) * w + i0), c) };
                }
                p += 8;
            }
            for p in k8..kb {
                for i in 0..8 {
                    // SAFETY: as above, element by element.
                    unsafe { *out.add(p * w + i0 + i) = *src.add((i0 + i) * rs + p) };
                }
            }
        } else {
            for p in 0..kb {
                for i in 0..8 {
                    // SAFETY: as above; rows past `rows` are not read.
                    unsafe {
                        *out.add(p * w + i0 + i) = if i < n {
                            *src.add((i0 + i) * rs + p)
                        } else {
                            0.0
                        }
                    };
                }
            }
        }
    }
}

/// The operands of one tile, as checked by [`AvxTile::tile_add`].
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Args {
    a: *const f64,
    lda: usize,
    b: *const f64,
    ldb: (usize, usize),
    kb: usize,
    c: *mut f64,
    ldc: usize,
    rows: usize,
    alpha: f64,
}

/// The AVX-512 tile: `MV` vectors of 8 rows, `NB` columns. Every index
/// `p·lda + i` (`i < 8·MV`) is inside `A`, every `p·ldb.0 + j·ldb.1`
/// (`j < NB`) inside `B`, every `i + j·ldc` (`i < rows`, `j < NB`) inside `C`,
/// and `8·(MV − 1) < rows ≤ 8·MV` (checked by the caller).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn k512<const MV: usize, const NB: usize, const UNIT: bool>(x: Args) {
    use core::arch::x86_64::{
        __m512d, _mm512_fmadd_pd, _mm512_loadu_pd, _mm512_mask_storeu_pd, _mm512_maskz_loadu_pd,
        _mm512_set1_pd, _mm512_setzero_pd, _mm512_storeu_pd,
    };
    let (ldb_p, ldb_j) = x.ldb;
    let mut acc: [[__m512d; MV]; NB] = [[_mm512_setzero_pd(); MV]; NB];
    let (mut pa, mut pb) = (x.a, x.b);
    for _ in 0..x.kb {
        let mut av: [__m512d; MV] = [_mm512_setzero_pd(); MV];
        for (v, r) in av.iter_mut().enumerate() {
            // SAFETY: row block v of step p is inside A (caller).
            *r = unsafe { _mm512_loadu_pd(pa.add(8 * v)) };
        }
        for (j, accj) in acc.iter_mut().enumerate() {
            // SAFETY: b(p, j) is inside B (caller).
            let bj = _mm512_set1_pd(unsafe { *pb.add(if UNIT { j } else { j * ldb_j }) });
            for (s, &r) in accj.iter_mut().zip(&av) {
                *s = _mm512_fmadd_pd(r, bj, *s);
            }
        }
        // The last step's advance points past the operands; never read.
        pa = pa.wrapping_add(x.lda);
        pb = pb.wrapping_add(ldb_p);
    }
    let al = _mm512_set1_pd(x.alpha);
    for (j, accj) in acc.iter().enumerate() {
        // SAFETY: column j of the tile is inside C (caller).
        let cj = unsafe { x.c.add(j * x.ldc) };
        for (v, &s) in accj.iter().enumerate() {
            let r = x.rows - 8 * v;
            // SAFETY: rows 8v .. 8v + min(r, 8) of column j are inside C; the
            // masked accesses touch only those.
            unsafe {
                let p = cj.add(8 * v);
                if r >= 8 {
                    _mm512_storeu_pd(p, _mm512_fmadd_pd(al, s, _mm512_loadu_pd(p)));
                } else {
                    let m = ((1u32 << r) - 1) as u8;
                    let d = _mm512_maskz_loadu_pd(m, p);
                    _mm512_mask_storeu_pd(p, m, _mm512_fmadd_pd(al, s, d));
                }
            }
        }
    }
}

/// The AVX2 tile: `MV` vectors of 4 rows, `NB` columns (conditions as for
/// [`k512`] with 4 for 8).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2,fma")]
unsafe fn k256<const MV: usize, const NB: usize, const UNIT: bool>(x: Args) {
    use core::arch::x86_64::{
        __m256d, _mm256_broadcast_sd, _mm256_fmadd_pd, _mm256_loadu_pd, _mm256_set1_pd,
        _mm256_setzero_pd, _mm256_storeu_pd,
    };
    let (ldb_p, ldb_j) = x.ldb;
    let mut acc: [[__m256d; MV]; NB] = [[_mm256_setzero_pd(); MV]; NB];
    let (mut pa, mut pb) = (x.a, x.b);
    for _ in 0..x.kb {
        let mut av: [__m256d; MV] = [_mm256_setzero_pd(); MV];
        for (v, r) in av.iter_mut().enumerate() {
            // SAFETY: row block v of step p is inside A (caller).
            *r = unsafe { _mm256_loadu_pd(pa.add(4 * v)) };
        }
        for (j, accj) in acc.iter_mut().enumerate() {
            // SAFETY: b(p, j) is inside B (caller).
            let bj = unsafe { _mm256_broadcast_sd(&*pb.add(if UNIT { j } else { j * ldb_j })) };
            for (s, &r) in accj.iter_mut().zip(&av) {
                *s = _mm256_fmadd_pd(r, bj, *s);
            }
        }
        // The last step's advance points past the operands; never read.
        pa = pa.wrapping_add(x.lda);
        pb = pb.wrapping_add(ldb_p);
    }
    let al = _mm256_set1_pd(x.alpha);
    for (j, accj) in acc.iter().enumerate() {
        // SAFETY: column j of the tile is inside C (caller).
        let cj = unsafe { x.c.add(j * x.ldc) };
        for (v, &s) in accj.iter().enumerate() {
            let r = x.rows - 4 * v;
            // SAFETY: rows 4v .. 4v + min(r, 4) of column j are inside C.
            unsafe {
                let p = cj.add(4 * v);
                if r >= 4 {
                    _mm256_storeu_pd(p, _mm256_fmadd_pd(al, s, _mm256_loadu_pd(p)));
                } else {
                    let mut d = [0.0f64; 4];
                    for (i, di) in d.iter_mut().enumerate().take(r) {
                        *di = *p.add(i);
                    }
                    let mut out = [0.0f64; 4];
                    let dv = _mm256_loadu_pd(d.as_ptr());
                    _mm256_storeu_pd(out.as_mut_ptr(), _mm256_fmadd_pd(al, s, dv));
                    for (i, &o) in out.iter().enumerate().take(r) {
                        *p.add(i) = o;
                    }
                }
            }
        }
    }
}

/// [`super::dots_f32`] with the candidates taken four at a time on AVX-512
/// ([`AvxTile::dots4_f32`]: the reduction trees and tails in registers too; a last group of
/// one to three candidates padded with its last one), two at a time on AVX2
/// ([`AvxTile::partial_dots2_f32`]): `x` loaded once for all of them, and more independent
/// accumulator chains (the one-row loop waits on the latency of its two chains).
/// `out[t] = Σ_f x[f] y_t[f]`, the same bits as `super::dots_f32` for every `t` (each
/// product's sixteen partial sums, their reduction tree and its tail are those of the
/// one-row loop). Without the AVX2 token, or for an odd last candidate on AVX2, the one-row
/// loop itself.
pub(crate) fn dots2_f32(
    z: &[f32],
    ld: usize,
    (o, m): (usize, usize),
    x: &[f32],
    qs: &[usize],
    out: &mut [f32],
) {
    let Some(tile) = AvxTile::new() else {
        return super::dots_f32(z, ld, (o, m), x, qs, out);
    };
    let n = out.len().min(qs.len());
    let (out, qs) = (
        out.get_mut(..n).unwrap_or_default(),
        qs.get(..n).unwrap_or_default(),
    );
    let row = |q: usize| super::row_f32(z, ld, (o, m), q);
    // Four at a time on the AVX-512 level (a last group of one to three candidates padded
    // with its last one, the extra values dropped: one pass of four chains costs about what
    // one product's single chain does), then two at a time.
    let n4 = if tile.is_512() { n } else { 0 };
    let (Some((out4, out)), Some((qs4, qs))) =
        (out.split_at_mut_checked(n4), qs.split_at_checked(n4))
    else {
        return;
    };
    for (d, q) in out4.chunks_mut(4).zip(qs4.chunks(4)) {
        let Some(&last) = q.last() else {
            continue;
        };
        let at = |t: usize| q.get(t).copied().unwrap_or(last);
        let y = [row(at(0)), row(at(1)), row(at(2)), row(at(3))];
        match tile.dots4_f32(x, y) {
            Some(v) if x.len() == m => {
                for (d, &v) in d.iter_mut().zip(&v) {
                    *d = v;
                }
            }
            _ => super::dots_f32(z, ld, (o, m), x, q, d),
        }
    }
    let n = n - n4;
    let mut pairs = out.chunks_exact_mut(2).zip(qs.chunks_exact(2));
    for (d, q) in &mut pairs {
        let (Some(&q0), Some(&q1)) = (q.first(), q.get(1)) else {
            continue;
        };
        let (y0, y1) = (row(q0), row(q1));
        if x.len() == m && y0.len() == m && y1.len() == m {
            let [s0, s1] = tile.partial_dots2_f32(x, y0, y1);
            if let Some([d0, d1]) = d.get_mut(..2) {
                *d0 = finish16(&s0, x, y0);
                *d1 = finish16(&s1, x, y1);
            }
        } else {
            super::dots_f32(z, ld, (o, m), x, q, d);
        }
    }
    let rest = n / 2 * 2;
    if let (Some(d), Some(q)) = (out.get_mut(rest..), qs.get(rest..)) {
        super::dots_f32(z, ld, (o, m), x, q, d);
    }
}

/// The end of a 16-lane dot product after its partial sums `s` (`linalg`'s `dot16` and the
/// kernels here): the fixed reduction tree, then the values past the last multiple of 16, so
/// every path gives the same bits.
#[inline(always)]
pub(crate) fn finish16(s: &[f32; 16], x: &[f32], y: &[f32]) -> f32 {
    let (cx, cy) = (
        x.get(x.len() / 16 * 16..).unwrap_or_default(),
        y.get(y.len() / 16 * 16..).unwrap_or_default(),
    );
    let (s0, s1) = s.split_at(8);
    let mut h = [0.0f32; 8];
    for ((h, &a), &b) in h.iter_mut().zip(s0).zip(s1) {
        *h = a + b;
    }
    let q = [h[0] + h[4], h[1] + h[5], h[2] + h[6], h[3] + h[7]];
    let mut r = (q[0] + q[2]) + (q[1] + q[3]);
    for (a, b) in cx.iter().zip(cy) {
        r += a * b;
    }
    r
}

/// Asks for the cache lines of `s` (data about to be read at random places: the candidate
/// rows, heaps and lists of NN-descent, the columns an evaluator gathers; each such read
/// otherwise waits for memory). No effect on any value; nothing off x86-64.
#[inline(always)]
pub(crate) fn prefetch<T>(s: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        let p = s.as_ptr() as *const i8;
        let bytes = core::mem::size_of_val(s);
        let mut b = 0;
        while b < bytes {
            // SAFETY: a prefetch does not access memory; the address is inside `s`.
            unsafe {
                core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.add(b))
            };
            b += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = s;
}

/// See [`AvxTile::partial_dots_f32`]: `x`, `y` readable for `n16` values, `n16` a multiple
/// of 16.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn dots16_avx2(x: *const f32, y: *const f32, n16: usize, s: &mut [f32; 16]) {
    use core::arch::x86_64::{
        _mm256_add_ps, _mm256_loadu_ps, _mm256_mul_ps, _mm256_setzero_ps, _mm256_storeu_ps,
    };
    let (mut a0, mut a1) = (_mm256_setzero_ps(), _mm256_setzero_ps());
    let mut i = 0;
    while i + 16 <= n16 {
        // SAFETY: `i + 16 <= n16` values of each operand are readable.
        let (x0, x1, y0, y1) = unsafe {
            (
                _mm256_loadu_ps(x.add(i)),
                _mm256_loadu_ps(x.add(i + 8)),
                _mm256_loadu_ps(y.add(i)),
                _mm256_loadu_ps(y.add(i + 8)),
            )
        };
        a0 = _mm256_add_ps(a0, _mm256_mul_ps(x0, y0));
        a1 = _mm256_add_ps(a1, _mm256_mul_ps(x1, y1));
        i += 16;
    }
    let p = s.as_mut_ptr();
    // SAFETY: `s` holds 16 values.
    unsafe {
        _mm256_storeu_ps(p, a0);
        _mm256_storeu_ps(p.add(8), a1);
    }
}

/// See [`AvxTile::partial_dots2_f32`]: `x`, `y.0`, `y.1` readable for `n16` values, `n16` a
/// multiple of 16. Each product's two accumulators are updated exactly as in
/// [`dots16_avx2`] (a multiply, then an add, in the same order over `i`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn dots16x2_avx2(
    x: *const f32,
    y: (*const f32, *const f32),
    n16: usize,
    s: &mut [[f32; 16]; 2],
) {
    use core::arch::x86_64::{
        _mm256_add_ps, _mm256_loadu_ps, _mm256_mul_ps, _mm256_setzero_ps, _mm256_storeu_ps,
    };
    let (mut a0, mut a1) = (_mm256_setzero_ps(), _mm256_setzero_ps());
    let (mut b0, mut b1) = (_mm256_setzero_ps(), _mm256_setzero_ps());
    let mut i = 0;
    while i + 16 <= n16 {
        // SAFETY: `i + 16 <= n16` values of each operand are readable.
        let (x0, x1, p0, p1, q0, q1) = unsafe {
            (
                _mm256_loadu_ps(x.add(i)),
                _mm256_loadu_ps(x.add(i + 8)),
                _mm256_loadu_ps(y.0.add(i)),
                _mm256_loadu_ps(y.0.add(i + 8)),
                _mm256_loadu_ps(y.1.add(i)),
                _mm256_loadu_ps(y.1.add(i + 8)),
            )
        };
        a0 = _mm256_add_ps(a0, _mm256_mul_ps(x0, p0));
        a1 = _mm256_add_ps(a1, _mm256_mul_ps(x1, p1));
        b0 = _mm256_add_ps(b0, _mm256_mul_ps(x0, q0));
        b1 = _mm256_add_ps(b1, _mm256_mul_ps(x1, q1));
        i += 16;
    }
    let [s0, s1] = s;
    // SAFETY: `s0` and `s1` hold 16 values each.
    unsafe {
        _mm256_storeu_ps(s0.as_mut_ptr(), a0);
        _mm256_storeu_ps(s0.as_mut_ptr().add(8), a1);
        _mm256_storeu_ps(s1.as_mut_ptr(), b0);
        _mm256_storeu_ps(s1.as_mut_ptr().add(8), b1);
    }
}

/// See [`AvxTile::dots4_f32`]: `x` and the four `y` readable for `n` values. Lane `l` of
/// product `t`'s register is the sum over `i` (in order) of `x[i + l]·y_t[i + l]`, a multiply
/// then an add: the partial sum `l` of [`dots16_avx2`]. Then [`finish16`]'s tree in
/// registers (`h = s[..8] + s[8..]`, `q = h[..4] + h[4..]`, `(q₀ + q₂) + (q₁ + q₃)`), the four
/// products side by side after a transpose, and the tail's products added one after another.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn dots4_avx512(x: *const f32, y: [*const f32; 4], n: usize) -> [f32; 4] {
    use core::arch::x86_64::{
        __m128, __m512, _mm256_add_ps, _mm256_castpd_ps, _mm256_castps256_ps128,
        _mm256_extractf128_ps, _mm512_add_ps, _mm512_castps512_ps256, _mm512_castps_pd,
        _mm512_extractf64x4_pd, _mm512_loadu_ps, _mm512_maskz_loadu_ps, _mm512_mul_ps,
        _mm512_setzero_ps, _mm512_storeu_ps, _mm_add_ps, _mm_movehl_ps, _mm_movelh_ps, _mm_setr_ps,
        _mm_storeu_ps, _mm_unpackhi_ps, _mm_unpacklo_ps,
    };
    let [y0, y1, y2, y3] = y;
    let n16 = n / 16 * 16;
    let (mut a0, mut a1) = (_mm512_setzero_ps(), _mm512_setzero_ps());
    let (mut a2, mut a3) = (_mm512_setzero_ps(), _mm512_setzero_ps());
    let mut i = 0;
    while i + 16 <= n16 {
        // SAFETY: `i + 16 <= n16 <= n` values of each operand are readable.
        let (xv, p0, p1, p2, p3) = unsafe {
            (
                _mm512_loadu_ps(x.add(i)),
                _mm512_loadu_ps(y0.add(i)),
                _mm512_loadu_ps(y1.add(i)),
                _mm512_loadu_ps(y2.add(i)),
                _mm512_loadu_ps(y3.add(i)),
            )
        };
        a0 = _mm512_add_ps(a0, _mm512_mul_ps(xv, p0));
        a1 = _mm512_add_ps(a1, _mm512_mul_ps(xv, p1));
        a2 = _mm512_add_ps(a2, _mm512_mul_ps(xv, p2));
        a3 = _mm512_add_ps(a3, _mm512_mul_ps(xv, p3));
        i += 16;
    }
    // `q[j] = (s[j] + s[j + 8]) + (s[j + 4] + s[j + 12])` for `j < 4`, as `finish16`.
    let quarter = |a: __m512| -> __m128 {
        let lo = _mm512_castps512_ps256(a);
        let hi = _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(a)));
        let h = _mm256_add_ps(lo, hi);
        _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps::<1>(h))
    };
    let (q0, q1, q2, q3) = (quarter(a0), quarter(a1), quarter(a2), quarter(a3));
    // Transpose: `c_j` holds `q[j]` of the four products.
    let (t0, t1) = (_mm_unpacklo_ps(q0, q1), _mm_unpacklo_ps(q2, q3));
    let (t2, t3) = (_mm_unpackhi_ps(q0, q1), _mm_unpackhi_ps(q2, q3));
    let (c0, c1) = (_mm_movelh_ps(t0, t1), _mm_movehl_ps(t1, t0));
    let (c2, c3) = (_mm_movelh_ps(t2, t3), _mm_movehl_ps(t3, t2));
    let mut r = _mm_add_ps(_mm_add_ps(c0, c2), _mm_add_ps(c1, c3));
    let tail = n - n16;
    if tail > 0 {
        // (`tail < 16`.)
        let mask = (1u32 << (tail & 15)).wrapping_sub(1) as u16;
        let mut p = [[0.0f32; 16]; 4];
        // SAFETY: the masked loads read only the lanes below `tail`, i.e. `[n16..n)` of
        // each operand; `p[t]` holds 16 values.
        unsafe {
            let xt = _mm512_maskz_loadu_ps(mask, x.add(n16));
            for (pt, yt) in p.iter_mut().zip([y0, y1, y2, y3]) {
                let v = _mm512_mul_ps(xt, _mm512_maskz_loadu_ps(mask, yt.add(n16)));
                _mm512_storeu_ps(pt.as_mut_ptr(), v);
            }
        }
        let [p0, p1, p2, p3] = &p;
        for (((&a, &b), &c), &d) in p0.iter().zip(p1).zip(p2).zip(p3).take(tail) {
            r = _mm_add_ps(r, _mm_setr_ps(a, b, c, d));
        }
    }
    let mut out = [0.0f32; 4];
    // SAFETY: `out` holds 4 values.
    unsafe { _mm_storeu_ps(out.as_mut_ptr(), r) };
    out
}

/// See [`AvxTile::partial_dots4_f64`]: `x` and the four `y` readable for `n8` values, `n8` a
/// multiple of 8. Lane `l` of product `t`'s register is the sum over `i` (in order) of
/// `x[i + l]·y_t[i + l]`, a multiply then an add.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn dots8x4_f64_avx512(x: *const f64, y: [*const f64; 4], n8: usize, s: &mut [[f64; 8]; 4]) {
    use core::arch::x86_64::{
        _mm512_add_pd, _mm512_loadu_pd, _mm512_mul_pd, _mm512_setzero_pd, _mm512_storeu_pd,
    };
    let [y0, y1, y2, y3] = y;
    let (mut a0, mut a1) = (_mm512_setzero_pd(), _mm512_setzero_pd());
    let (mut a2, mut a3) = (_mm512_setzero_pd(), _mm512_setzero_pd());
    let mut i = 0;
    while i + 8 <= n8 {
        // SAFETY: `i + 8 <= n8` values of each operand are readable.
        let (xv, p0, p1, p2, p3) = unsafe {
            (
                _mm512_loadu_pd(x.add(i)),
                _mm512_loadu_pd(y0.add(i)),
                _mm512_loadu_pd(y1.add(i)),
                _mm512_loadu_pd(y2.add(i)),
                _mm512_loadu_pd(y3.add(i)),
            )
        };
        a0 = _mm512_add_pd(a0, _mm512_mul_pd(xv, p0));
        a1 = _mm512_add_pd(a1, _mm512_mul_pd(xv, p1));
        a2 = _mm512_add_pd(a2, _mm512_mul_pd(xv, p2));
        a3 = _mm512_add_pd(a3, _mm512_mul_pd(xv, p3));
        i += 8;
    }
    let [s0, s1, s2, s3] = s;
    // SAFETY: each of `s0..s3` holds 8 values.
    unsafe {
        _mm512_storeu_pd(s0.as_mut_ptr(), a0);
        _mm512_storeu_pd(s1.as_mut_ptr(), a1);
        _mm512_storeu_pd(s2.as_mut_ptr(), a2);
        _mm512_storeu_pd(s3.as_mut_ptr(), a3);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// The two-rows-per-call loop gives the bits of the one-row loop for every candidate:
    /// lengths with and without a tail past 16, odd and even counts, rows outside the table
    /// and an `x` of the wrong length (both give 0).
    #[test]
    fn dots2_matches_dots_bitwise() {
        let mut rng = Rng::new(7);
        for &(ld, o, m) in &[
            (649, 0, 649),
            (40, 0, 16),
            (40, 3, 37),
            (9, 0, 9),
            (150, 20, 130),
        ] {
            let n = 23;
            let z: std::vec::Vec<f32> = (0..n * ld).map(|_| rng.uniform() as f32 - 0.3).collect();
            let x: std::vec::Vec<f32> = z[5 * ld + o..5 * ld + o + m].to_vec();
            for nq in [0, 1, 2, 3, 5, 6, 7, 8, 13] {
                let qs: std::vec::Vec<usize> = (0..nq).map(|t| (t * 7 + 3) % (n + 2)).collect();
                let (mut a, mut b) = (std::vec![9.0f32; nq], std::vec![8.0f32; nq]);
                crate::linalg::dots_f32(&z, ld, (o, m), &x, &qs, &mut a);
                dots2_f32(&z, ld, (o, m), &x, &qs, &mut b);
                let bits = |v: &[f32]| v.iter().map(|y| y.to_bits()).collect::<std::vec::Vec<_>>();
                assert_eq!(bits(&a), bits(&b), "ld {ld} o {o} m {m} nq {nq}");
                assert!(qs.iter().zip(&a).all(|(&q, &v)| q < n || v == 0.0));
                // `x` of the wrong length: zeros from both.
                crate::linalg::dots_f32(&z, ld, (o, m), &x[1..], &qs, &mut a);
                dots2_f32(&z, ld, (o, m), &x[1..], &qs, &mut b);
                assert_eq!(bits(&a), bits(&b));
                assert!(b.iter().all(|&v| v == 0.0));
            }
        }
    }
}
