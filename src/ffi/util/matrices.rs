//! The readers of `a × b` arrays that the evaluation, protocol, MVEL and JSNMF
//! entry points share (issue 33): one body for the product's check and the
//! slice, where each file wrote its own (`area`, `inp`, `out`, the workspace's
//! `slice_mut(work.cast::<u8>(), ...)`). Unsafe under the entry point's
//! contract, as the readers of `util.rs`.

use super::*;
use crate::linalg::mat::{MatMut, MatRef};

/// The `a × b` values at `p` ([`slice()`]; the product checked).
pub(crate) unsafe fn slice_ab<'a, T>(p: *const T, a: usize, b: usize) -> Result<&'a [T], Error> {
    c_unsafe!(slice(p, a.checked_mul(b).ok_or(Error::SizeOverflow)?))
}

/// A required output of `a × b` values (NULL: `MVNMF_STATUS_NULL_POINTER`
/// before the product is checked).
pub(crate) unsafe fn out_ab<'a, T>(p: *mut T, a: usize, b: usize) -> Result<&'a mut [T], Error> {
    require!(p);
    c_unsafe!(slice_mut(p, a.checked_mul(b).ok_or(Error::SizeOverflow)?))
}

/// The `rows × cols` column-major matrix at `p` ([`slice_ab`]).
pub(crate) unsafe fn mat_ab<'a, T: Copy>(
    p: *const T,
    rows: usize,
    cols: usize,
) -> Result<MatRef<'a, T>, Error> {
    MatRef::col_major(c_unsafe!(slice_ab(p, rows, cols))?, rows, cols)
}

/// The required `rows × cols` column-major output at `p` ([`out_ab`]).
pub(crate) unsafe fn mat_out<'a, T: Copy>(
    p: *mut T,
    rows: usize,
    cols: usize,
) -> Result<MatMut<'a, T>, Error> {
    MatMut::col_major(c_unsafe!(out_ab(p, rows, cols))?, rows, cols)
}

/// Two arrays of `rows × cols` values read side by side (truth and
/// prediction, scores and flags), after the zero-dimension check.
pub(crate) unsafe fn pair_ab<'a, A, B>(
    a: *const A,
    b: *const B,
    rows: usize,
    cols: usize,
) -> Result<(&'a [A], &'a [B]), Error> {
    nonzero!(rows, cols);
    c_unsafe!(Ok((slice_ab(a, rows, cols)?, slice_ab(b, rows, cols)?)))
}

/// [`pair_ab`] as two `rows × cols` column-major matrices.
pub(crate) unsafe fn mat_pair<'a, A: Copy, B: Copy>(
    a: *const A,
    b: *const B,
    rows: usize,
    cols: usize,
) -> Result<(MatRef<'a, A>, MatRef<'a, B>), Error> {
    let (x, y) = c_unsafe!(pair_ab(a, b, rows, cols))?;
    Ok((
        MatRef::col_major(x, rows, cols)?,
        MatRef::col_major(y, rows, cols)?,
    ))
}

/// The workspace as bytes (NULL only when `work_bytes` is 0).
pub(crate) unsafe fn work_of<'a>(
    work: *mut c_void,
    work_bytes: usize,
) -> Result<&'a mut [u8], Error> {
    c_unsafe!(slice_mut(work.cast::<u8>(), work_bytes))
}
