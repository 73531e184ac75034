//! The one call into a raw-pointer kernel outside the exported C ABI: the
//! `gemm` crate's GEMM (hosted builds only).
//!
//! Why `gemm` and not matrixmultiply: on the benchmark's shapes (a 2000 × 1000
//! `X` against `K = 50` factors, AVX2 + FMA) it ran the two products of an NMF
//! iteration 1.2–1.3× faster, at the speed of OpenBLAS's dgemm; matrixmultiply
//! re-packs `X` with a slower packing loop (see README, Benchmarks). Like
//! matrixmultiply it detects the SIMD level at run time and allocates its own
//! packing buffers.
//!
//! # Safety
//! One `unsafe` block: the call into `gemm::gemm` with raw pointers, after
//! [`MatRef`] / [`MatMut`] construction proved every addressed element lies
//! inside its slice (the block's `SAFETY` comment gives the argument). This file
//! is one of the four in `linalg/` allowed `unsafe` (the others: `simd.rs`,
//! `spk.rs`, `microk.rs`); every other module of the core is `#![deny(unsafe_code)]`.
#![allow(unsafe_code)]

use crate::linalg::mat::{MatMut, MatRef};

/// Serial, or rayon's global pool with the `threading` feature
/// (`RAYON_NUM_THREADS` sets its size).
fn parallelism() -> gemm::Parallelism {
    #[cfg(feature = "threading")]
    {
        gemm::Parallelism::Rayon(0)
    }
    #[cfg(not(feature = "threading"))]
    {
        gemm::Parallelism::None
    }
}

macro_rules! hosted_gemm {
    ($name:ident, $t:ty) => {
        /// `C ← α·A·B + β·C` through the `gemm` crate (`β = 0`: C not read).
        /// Shapes must agree and be nonzero (checked by `linalg::gemm`).
        pub(crate) fn $name(
            alpha: $t,
            a: MatRef<'_, $t>,
            b: MatRef<'_, $t>,
            beta: $t,
            mut c: MatMut<'_, $t>,
        ) {
            let (m, k, n) = (a.rows(), a.cols(), b.cols());
            if m == 0
                || n == 0
                || k == 0
                || a.rows() != c.rows()
                || b.rows() != k
                || b.cols() != c.cols()
            {
                // Never reached from linalg::gemm, which handles these cases itself.
                return;
            }
            let ld = c.ld();
            // SAFETY: `MatRef::new` / `MatMut::new` proved that every element
            // `(i, j)` with `i < rows`, `j < cols` at `i*rs + j*cs` (C: `i + j*ld`)
            // lies inside its slice, and the strides of valid slices fit in
            // `isize`. `c` is an exclusive borrow, so it aliases neither `a` nor
            // `b`. `gemm` reads A and B and writes C only at those positions,
            // and reads C only when `read_dst` (here: `beta != 0`). Its `alpha`
            // scales the destination and its `beta` the product.
            unsafe {
                gemm::gemm(
                    m,
                    n,
                    k,
                    c.data_mut().as_mut_ptr(),
                    ld as isize,
                    1,
                    beta != 0.0,
                    a.data().as_ptr(),
                    a.cs() as isize,
                    a.rs() as isize,
                    b.data().as_ptr(),
                    b.cs() as isize,
                    b.rs() as isize,
                    beta,
                    alpha,
                    false,
                    false,
                    false,
                    parallelism(),
                );
            }
        }
    };
}

hosted_gemm!(dgemm, f64);
hosted_gemm!(sgemm, f32);
