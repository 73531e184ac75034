//! The scalar trait the numeric code is generic over (`f64` now; `f32` ready).

use crate::linalg::mat::{MatMut, MatRef};
use core::fmt::Debug;
use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// A real floating-point scalar: `f64` or `f32`.
///
/// The solvers are written once over `T: Real`, so an `f32` C entry point needs
/// no copied solver. Objectives are accumulated in `f64` whatever `T` is.
pub trait Real:
    Copy
    + Debug
    + Default
    + PartialOrd
    + bytemuck::Pod
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + DivAssign
    + Send
    + Sync
    + 'static
{
    /// 0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// Machine epsilon.
    const EPSILON: Self;
    /// +∞.
    const INFINITY: Self;
    /// One more than the largest binary exponent (`f64::MAX_EXP`, `f32::MAX_EXP`).
    const MAX_EXP: i32;
    /// Conversion (rounding for `f32`).
    fn from_f64(x: f64) -> Self;
    /// Exact widening to `f64`.
    fn to_f64(self) -> f64;
    /// Square root.
    fn sqrt(self) -> Self;
    /// Absolute value.
    fn abs(self) -> Self;
    /// Neither NaN nor infinite.
    fn is_finite(self) -> bool;
    /// The larger of two (NaN-ignoring, like `f64::max`).
    fn max(self, other: Self) -> Self;
    /// The smaller of two (NaN-ignoring, like `f64::min`).
    fn min(self, other: Self) -> Self;
    /// Hosted fast path for `C ← α·A·B + β·C` (the `gemm` crate with the `std`
    /// feature). Returns `false` when there is none and the blocked kernel must
    /// run (`Err` when the parallel region failed: a host pool that skipped or
    /// repeated a task). Shapes have been checked by the caller.
    #[doc(hidden)]
    fn gemm_hosted(
        alpha: Self,
        a: MatRef<'_, Self>,
        b: MatRef<'_, Self>,
        beta: Self,
        c: MatMut<'_, Self>,
        par: crate::par::Parallel,
    ) -> Result<bool, crate::error::Error>;
    /// The values as `f64` when `Self` is `f64` (the AVX tile of the blocked
    /// GEMM, `linalg::microk`, is written for `f64`); `None` otherwise.
    #[doc(hidden)]
    #[inline(always)]
    fn as_f64s(s: &[Self]) -> Option<&[f64]> {
        let _ = s;
        None
    }
    /// [`Real::as_f64s`] for a mutable slice (the destination of the AVX tile).
    #[doc(hidden)]
    #[inline(always)]
    fn as_f64s_mut(s: &mut [Self]) -> Option<&mut [f64]> {
        let _ = s;
        None
    }
    /// Hosted fast path for the row-sorted sparse gather (`data::xvt_rows`,
    /// padded width `w`; `entries` = row pointers, columns, values); `false`
    /// when there is none and the portable loop must run.
    #[doc(hidden)]
    #[inline(always)]
    fn gather_rows_hosted(
        (w, k): (usize, usize),
        rows: (usize, usize),
        entries: (&[usize], &[usize], &[Self]),
        vp: &[Self],
        out: &mut [Self],
    ) -> bool {
        let _ = (w, k, rows, entries, vp, out);
        false
    }
    /// Hosted fast path for the row-sorted sparse scatter (`data::utx_rows`);
    /// `false` when there is none.
    #[doc(hidden)]
    #[inline(always)]
    fn scatter_rows_hosted(
        w: usize,
        rows: (usize, usize),
        entries: (&[usize], &[usize], &[Self]),
        blk: &[Self],
        op: &mut [Self],
    ) -> bool {
        let _ = (w, rows, entries, blk, op);
        false
    }
}

impl Real for f64 {
    #[inline(always)]
    fn as_f64s(s: &[Self]) -> Option<&[f64]> {
        Some(s)
    }
    #[inline(always)]
    fn as_f64s_mut(s: &mut [Self]) -> Option<&mut [f64]> {
        Some(s)
    }
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    #[inline(always)]
    fn gather_rows_hosted(
        wk: (usize, usize),
        rows: (usize, usize),
        entries: (&[usize], &[usize], &[Self]),
        vp: &[Self],
        out: &mut [Self],
    ) -> bool {
        crate::linalg::spk::gather_rows(wk, rows, entries, vp, out)
    }
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    #[inline(always)]
    fn scatter_rows_hosted(
        w: usize,
        rows: (usize, usize),
        entries: (&[usize], &[usize], &[Self]),
        blk: &[Self],
        op: &mut [Self],
    ) -> bool {
        crate::linalg::spk::scatter_rows(w, rows, entries, blk, op)
    }
    #[inline]
    fn gemm_hosted(
        alpha: Self,
        a: MatRef<'_, Self>,
        b: MatRef<'_, Self>,
        beta: Self,
        c: MatMut<'_, Self>,
        par: crate::par::Parallel,
    ) -> Result<bool, crate::error::Error> {
        #[cfg(feature = "std")]
        {
            crate::linalg::hosted::dgemm(alpha, a, b, beta, c, par).map(|()| true)
        }
        #[cfg(not(feature = "std"))]
        {
            let _ = (alpha, a, b, beta, c, par);
            Ok(false)
        }
    }
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const EPSILON: Self = f64::EPSILON;
    const INFINITY: Self = f64::INFINITY;
    const MAX_EXP: i32 = f64::MAX_EXP;
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        x
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        libm::sqrt(self)
    }
    #[inline(always)]
    fn abs(self) -> Self {
        libm::fabs(self)
    }
    #[inline(always)]
    fn is_finite(self) -> bool {
        f64::is_finite(self)
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        f64::max(self, other)
    }
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        f64::min(self, other)
    }
}

impl Real for f32 {
    #[inline]
    fn gemm_hosted(
        alpha: Self,
        a: MatRef<'_, Self>,
        b: MatRef<'_, Self>,
        beta: Self,
        c: MatMut<'_, Self>,
        par: crate::par::Parallel,
    ) -> Result<bool, crate::error::Error> {
        #[cfg(feature = "std")]
        {
            crate::linalg::hosted::sgemm(alpha, a, b, beta, c, par).map(|()| true)
        }
        #[cfg(not(feature = "std"))]
        {
            let _ = (alpha, a, b, beta, c, par);
            Ok(false)
        }
    }
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const EPSILON: Self = f32::EPSILON;
    const INFINITY: Self = f32::INFINITY;
    const MAX_EXP: i32 = f32::MAX_EXP;
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        x as f32
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        libm::sqrtf(self)
    }
    #[inline(always)]
    fn abs(self) -> Self {
        libm::fabsf(self)
    }
    #[inline(always)]
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        f32::max(self, other)
    }
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        f32::min(self, other)
    }
}
