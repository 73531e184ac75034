//! C ABI of the dense symmetric eigensolver (`crate::linalg::eig`). Same
//! conventions as the rest of the C ABI.

use core::ffi::c_void;

use super::util::*;
use crate::error::Error;
use crate::linalg::eig;

export! {
    /// Eigendecomposition of the symmetric `n × n` matrix `a[n*n]` (column-major;
    /// only the lower triangle, diagonal included, is read), in place: on return
    /// `a` holds orthonormal eigenvectors (column `i` for `eigenvalues[i]`, its
    /// component of largest magnitude positive) and `eigenvalues[n]` is ascending.
    ///
    /// Householder tridiagonalisation and implicit QL with Wilkinson shifts on the
    /// matrix scaled by a power of two (any finite magnitudes), about `9 n^3` flops;
    /// residual `||AQ - QL||` and `||Q^T Q - I||` of order `n * DBL_EPSILON`
    /// (relative to `||A||`); deterministic (the same bits on every machine).
    /// Errors, before anything is written: `MVNMF_STATUS_ZERO_DIMENSION` (`n = 0`),
    /// `MVNMF_STATUS_NULL_POINTER`, `MVNMF_STATUS_NON_FINITE_INPUT` (a NaN or
    /// infinity in the lower triangle, or a Frobenius norm beyond `DBL_MAX`),
    /// `MVNMF_STATUS_WORKSPACE_TOO_SMALL` (see `mvnmf_sym_eig_workspace`).
    fn mvnmf_sym_eig(
        a: *mut f64 = "`n × n` doubles (read, then overwritten)",
        n: usize,
        eigenvalues: *mut f64 = "`n` doubles",
        ..work(work, work_bytes),
    ) {
        nonzero!(n);
        require!(a, eigenvalues);
        let aa = slice_mut(a, n.checked_mul(n).ok_or(Error::SizeOverflow)?)?;
        let w = slice_mut(eigenvalues, n)?;
        let ws = slice_mut(work.cast::<u8>(), work_bytes)?;
        eig::sym_eig(aa, n, w, ws)?;
        Ok(mvnmf_status::Ok)
    }
    /// for an `n × n` matrix (`MVNMF_STATUS_ZERO_DIMENSION` for `n = 0`).
    workspace mvnmf_sym_eig_workspace(n: usize) {
        eig::sym_eig_workspace::<f64>(n)
    };
}
