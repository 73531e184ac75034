//! The one call into a raw-pointer kernel outside the exported C ABI:
//! matrixmultiply's GEMM (hosted builds only).

use crate::mat::{MatMut, MatRef};

macro_rules! mm_gemm {
    ($name:ident, $t:ty) => {
        /// `C ← α·A·B + β·C` through matrixmultiply (`β = 0`: C not read).
        /// Shapes must agree and be nonzero (checked by `kernels::gemm`).
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
                // Never reached from kernels::gemm, which handles these cases itself.
                return;
            }
            let ld = c.ld();
            // SAFETY: `MatRef::new` / `MatMut::new` proved that every element
            // `(i, j)` with `i < rows`, `j < cols` at `i*rs + j*cs` (C: `i + j*ld`)
            // lies inside its slice, and the strides of valid slices fit in
            // `isize`. `c` is an exclusive borrow, so it aliases neither `a` nor
            // `b`. matrixmultiply reads A and B and writes C only at those
            // positions, and does not read C when `beta == 0`.
            unsafe {
                matrixmultiply::$name(
                    m,
                    k,
                    n,
                    alpha,
                    a.data().as_ptr(),
                    a.rs() as isize,
                    a.cs() as isize,
                    b.data().as_ptr(),
                    b.rs() as isize,
                    b.cs() as isize,
                    beta,
                    c.data_mut().as_mut_ptr(),
                    1,
                    ld as isize,
                );
            }
        }
    };
}

mm_gemm!(dgemm, f64);
mm_gemm!(sgemm, f32);
