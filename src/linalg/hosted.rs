//! The one call into a raw-pointer kernel outside the exported C ABI: the
//! `gemm` crate's GEMM (hosted builds only).
//!
//! Why `gemm` and not matrixmultiply: on the benchmark's shapes (a 2000 × 1000
//! `X` against `K = 50` factors, AVX2 + FMA) it ran the two products of an NMF
//! iteration 1.2–1.3× faster, at the speed of OpenBLAS's dgemm; matrixmultiply
//! re-packs `X` with a slower packing loop (see docs/benchmarks.md). Like
//! matrixmultiply it detects the SIMD level at run time and allocates its own
//! packing buffers.
//!
//! Each product is split into column (or row) blocks of C by a fixed,
//! shape-only partition and the blocks run as the tasks of one parallel
//! region (`crate::par`): any thread count gives the same bits.
//!
//! # Safety
//! One `unsafe` block: the call into `gemm::gemm` with raw pointers, after
//! [`MatRef`] / [`MatMut`] construction proved every addressed element lies
//! inside its slice (the block's `SAFETY` comment gives the argument). This file
//! is one of the four in `linalg/` allowed `unsafe` (the others: `simd.rs`,
//! `spk.rs`, `microk.rs`); every other module of the core is `#![deny(unsafe_code)]`.
#![allow(unsafe_code)]

use crate::error::Error;
use crate::linalg::mat::{MatMut, MatRef};
use crate::par::{chunk_len, tasks_for, Parallel};

/// A base address shared by the tasks of one product, each of which touches
/// only its own block (see the `SAFETY` comments of the macro below).
#[derive(Clone, Copy)]
struct Base<P>(P);
// SAFETY: the pointers are only offset and passed to `gemm::gemm`; the
// blocks written through them are disjoint (one block of C per task), and the
// blocks read (A, B) are not written during the product.
unsafe impl<P> Send for Base<P> {}
// SAFETY: as for `Send`: shared reads, disjoint writes.
unsafe impl<P> Sync for Base<P> {}

/// The fixed partition of a product `C (m×n) ← A (m×k) B (k×n)`: split the
/// columns of C when `n ≥ m`, else its rows, into [`tasks_for`] blocks of a
/// multiple of 8. From the shape alone, so every thread count computes every
/// block by the same call: the same bits (`crate::par`).
fn partition(m: usize, n: usize, k: usize) -> (bool, usize, usize) {
    let by_cols = n >= m;
    let (len, other) = if by_cols { (n, m) } else { (m, n) };
    let tasks = tasks_for(len, other.saturating_mul(k));
    let chunk = chunk_len(len, tasks, 8);
    (by_cols, chunk, len.div_ceil(chunk))
}

macro_rules! hosted_gemm {
    ($name:ident, $t:ty) => {
        /// `C ← α·A·B + β·C` through the `gemm` crate (`β = 0`: C not read),
        /// split into the blocks of [`partition`], run on `par`.
        /// Shapes must agree and be nonzero (checked by `linalg::gemm`).
        pub(crate) fn $name(
            alpha: $t,
            a: MatRef<'_, $t>,
            b: MatRef<'_, $t>,
            beta: $t,
            mut c: MatMut<'_, $t>,
            par: Parallel,
        ) -> Result<(), Error> {
            let (m, k, n) = (a.rows(), a.cols(), b.cols());
            if m == 0
                || n == 0
                || k == 0
                || a.rows() != c.rows()
                || b.rows() != k
                || b.cols() != c.cols()
            {
                // Never reached from linalg::gemm, which handles these cases itself.
                return Err(Error::Internal);
            }
            let ld = c.ld();
            let (ars, acs, brs, bcs) = (a.rs(), a.cs(), b.rs(), b.cs());
            let pa = Base(a.data().as_ptr());
            let pb = Base(b.data().as_ptr());
            let pc = Base(c.data_mut().as_mut_ptr());
            let (by_cols, chunk, tasks) = partition(m, n, k);
            let block = |t: usize| {
                let (pa, pb, pc) = (pa, pb, pc);
                let s = t * chunk;
                // The block's rows `i0..i0+bm` and columns `j0..j0+bn` of C.
                let (i0, bm, j0, bn) = if by_cols {
                    (0, m, s, chunk.min(n - s))
                } else {
                    (s, chunk.min(m - s), 0, n)
                };
                // SAFETY: `MatRef::new` / `MatMut::new` proved that every element
                // `(i, j)` with `i < rows`, `j < cols` at `i*rs + j*cs` (C:
                // `i + j*ld`) lies inside its slice, and the strides of valid
                // slices fit in `isize`; `s < len` (t < tasks), so the block
                // `i0..i0+bm × j0..j0+bn` lies inside C, and its rows of A
                // (`i0..i0+bm`) and columns of B (`j0..j0+bn`) inside A and B:
                // the offsets below stay inside the slices. `c` is an exclusive
                // borrow (it aliases neither `a` nor `b`), and the tasks' blocks
                // of C are disjoint, so no element is written twice or read
                // while another task writes it. `gemm` reads A and B and writes
                // C only inside the block, and reads C only when `read_dst`
                // (here: `beta != 0`). Its `alpha` scales the destination and
                // its `beta` the product. The calls return before `$name` does,
                // so the borrows outlive them.
                unsafe {
                    gemm::gemm(
                        bm,
                        bn,
                        k,
                        pc.0.add(i0 + j0 * ld),
                        ld as isize,
                        1,
                        beta != 0.0,
                        pa.0.add(i0 * ars),
                        acs as isize,
                        ars as isize,
                        pb.0.add(j0 * bcs),
                        bcs as isize,
                        brs as isize,
                        beta,
                        alpha,
                        false,
                        false,
                        false,
                        gemm::Parallelism::None,
                    );
                }
                Ok(())
            };
            // A host pool that skipped or repeated a block: an error, not a
            // result.
            par.run(tasks, &block)
        }
    };
}

hosted_gemm!(dgemm, f64);
hosted_gemm!(sgemm, f32);
