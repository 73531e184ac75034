//! The AVX register tile of the blocked GEMM (`f64`, x86-64, with or without
//! `std`; issue 18, item 1).
//!
//! The portable tile (`blocked::micro`) is written so that the compiler can
//! vectorise it, and it does for AVX2, but measured on an AVX-512 machine
//! (`cargo run --release --no-default-features --example bench_levels`) the
//! compiled loop ran the dense NMF at 25 ms per iteration under AVX2 and 36 ms
//! under AVX-512 (one 512-bit register per column of the `8 × 4` tile: four
//! accumulators, too few to hide the adder's latency), against 14 ms for the
//! hosted `gemm` crate. Here the `8 × 4` tile is eight `__m256d` accumulators
//! held in registers for the whole inner loop: per step two loads of `A`, four
//! broadcasts of `B`, eight products and eight sums. It reads its operands
//! through strides, so the blocked GEMM hands it column-major operands in
//! place instead of packing them (`X` in `X·Vᵀ` and `Uᵀ·X`: one pass over
//! `X` less per product).
//!
//! **Same bits as the portable tile.** Each accumulator is updated as
//! `acc ← acc + (a·b)` with the product rounded before the sum — a multiply
//! and an add, never a fused multiply-add — in the same order over `p` as
//! `blocked::micro`, so every level gives the same results
//! (tests/simd_levels.rs). On CPUs with separate add and multiply pipes (AMD
//! Zen) this loses nothing to FMA; on Intel cores it costs up to half of the
//! peak, the price of results that do not depend on the CPU.
//!
//! # Safety
//! The `unsafe` here: the loads of `A` and `B`, each inside a slice whose
//! length was checked first (`8·kb` and `4·kb` values); the call into the
//! `#[target_feature(enable = "avx")]` function, made only through an
//! [`AvxTile`] token, which exists only when the detected SIMD level is AVX2 or
//! higher. One of the four files of `linalg/` allowed `unsafe`.
#![allow(unsafe_code)]

#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::{
    __m256d, _mm256_add_pd, _mm256_broadcast_sd, _mm256_loadu_pd, _mm256_mul_pd, _mm256_setzero_pd,
    _mm256_storeu_pd,
};

use super::simd::{active_level, SimdLevel};

/// Proof that this CPU runs AVX (the detected and allowed level is AVX2 or
/// AVX-512); only [`AvxTile::new`] makes one. The flag: the level is AVX-512
/// (the 512-bit tile runs).
#[derive(Clone, Copy, Debug)]
pub(crate) struct AvxTile(bool);

impl AvxTile {
    /// The token, when the active SIMD level is AVX2 or higher (x86-64).
    pub(crate) fn new() -> Option<Self> {
        let level = active_level();
        (cfg!(target_arch = "x86_64") && level >= SimdLevel::Avx2)
            .then_some(AvxTile(level == SimdLevel::Avx512))
    }

    /// `acc[j][i] = Σ_p a[p·lda + i] · b[p·ldb.0 + j·ldb.1]` over `p < kb`,
    /// in order of `p` (packed slivers: `lda = 8`, `ldb = (4, 1)`; the
    /// blocked GEMM also passes column-major operands in place). `None` when
    /// an index would fall outside `a` or `b`.
    #[inline(always)]
    pub(crate) fn tile(
        self,
        (a, lda): (&[f64], usize),
        (b, ldb): (&[f64], (usize, usize)),
        kb: usize,
    ) -> Option<[[f64; 8]; 4]> {
        let last = kb.checked_sub(1)?;
        let a_end = last.checked_mul(lda)?.checked_add(8)?;
        let b_end = last
            .checked_mul(ldb.0)?
            .checked_add(ldb.1.checked_mul(3)?)?
            .checked_add(1)?;
        if a.len() < a_end || b.len() < b_end {
            return None;
        }
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: the token exists only when the CPU has AVX2 (hence AVX),
            // its flag only when it has AVX-512F; every index read is below
            // `a_end` / `b_end` (checked above).
            Some(unsafe {
                if self.0 {
                    tile_8x4_512((a, lda), (b, ldb), kb)
                } else {
                    tile_8x4((a, lda), (b, ldb), kb)
                }
            })
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            None
        }
    }
}

impl AvxTile {
    /// Asks for the cache lines of `s[at + c·stride ..][..len]` for `c < 4`
    /// (the next sliver of an operand read in place; what is out of range is
    /// skipped).
    #[inline(always)]
    pub(crate) fn prefetch(self, s: &[f64], at: usize, stride: usize, len: usize) {
        #[cfg(target_arch = "x86_64")]
        for c in 0..4usize {
            let Some(col) = c
                .checked_mul(stride)
                .and_then(|o| o.checked_add(at))
                .and_then(|o| s.get(o..o.saturating_add(len)))
            else {
                continue;
            };
            for line in col.chunks(8) {
                // SAFETY: a prefetch does not access memory; the address is
                // inside `s`.
                unsafe {
                    core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                        line.as_ptr() as *const i8,
                    )
                };
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (s, at, stride, len);
    }
}

/// The tile; every index `p·lda + i` (`i < 8`) is inside `a` and every
/// `p·ldb.0 + j·ldb.1` (`j < 4`) inside `b`, for `p < kb` (checked by the caller).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx")]
unsafe fn tile_8x4(
    (a, lda): (&[f64], usize),
    (b, (ldb_p, ldb_j)): (&[f64], (usize, usize)),
    kb: usize,
) -> [[f64; 8]; 4] {
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let mut c: [__m256d; 8] = [_mm256_setzero_pd(); 8];
    for p in 0..kb {
        // SAFETY: p·lda + 7 < a.len() and p·ldb_p + 3·ldb_j < b.len() (caller).
        let (lo, hi) = unsafe {
            (
                _mm256_loadu_pd(pa.add(p * lda)),
                _mm256_loadu_pd(pa.add(p * lda + 4)),
            )
        };
        for j in 0..4 {
            // SAFETY: as above.
            let bj = unsafe { _mm256_broadcast_sd(&*pb.add(p * ldb_p + j * ldb_j)) };
            c[2 * j] = _mm256_add_pd(c[2 * j], _mm256_mul_pd(lo, bj));
            c[2 * j + 1] = _mm256_add_pd(c[2 * j + 1], _mm256_mul_pd(hi, bj));
        }
    }
    let mut out = [[0.0f64; 8]; 4];
    for (j, col) in out.iter_mut().enumerate() {
        // SAFETY: `col` holds 8 values: two stores of 4.
        unsafe {
            _mm256_storeu_pd(col.as_mut_ptr(), c[2 * j]);
            _mm256_storeu_pd(col.as_mut_ptr().add(4), c[2 * j + 1]);
        }
    }
    out
}

/// [`tile_8x4`] with one 512-bit register per column of the tile: half the
/// instructions per product (AVX-512F; same bits: each lane still gets a
/// product, rounded, then a sum).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn tile_8x4_512(
    (a, lda): (&[f64], usize),
    (b, (ldb_p, ldb_j)): (&[f64], (usize, usize)),
    kb: usize,
) -> [[f64; 8]; 4] {
    use core::arch::x86_64::{
        __m512d, _mm512_add_pd, _mm512_loadu_pd, _mm512_mul_pd, _mm512_set1_pd, _mm512_setzero_pd,
        _mm512_storeu_pd,
    };
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let mut c: [__m512d; 4] = [_mm512_setzero_pd(); 4];
    for p in 0..kb {
        // SAFETY: p·lda + 7 < a.len() and p·ldb_p + 3·ldb_j < b.len() (caller).
        let col = unsafe { _mm512_loadu_pd(pa.add(p * lda)) };
        for (j, cj) in c.iter_mut().enumerate() {
            // SAFETY: as above.
            let bj = _mm512_set1_pd(unsafe { *pb.add(p * ldb_p + j * ldb_j) });
            *cj = _mm512_add_pd(*cj, _mm512_mul_pd(col, bj));
        }
    }
    let mut out = [[0.0f64; 8]; 4];
    for (o, cj) in out.iter_mut().zip(c) {
        // SAFETY: `o` holds 8 values.
        unsafe { _mm512_storeu_pd(o.as_mut_ptr(), cj) };
    }
    out
}
