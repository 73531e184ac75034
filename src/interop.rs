//! nalgebra matrices in and out, without copies (feature `nalgebra`).
//!
//! A layer beside [`crate::data`] (it imports only `data` and `error`):
//!
//! * [`view`]: any contiguous nalgebra matrix or matrix view (`DMatrix`,
//!   `SMatrix`, `DMatrixView` of whole columns, ...) as a dense [`View`]
//!   over its storage — column-major, items are columns, as mvnmf's views.
//! * [`block`]: a block `rows × cols` of a contiguous matrix as a strided dense
//!   view (`col_stride` = the matrix's row count), e.g. the features of one
//!   view stored as a row block of a stacked matrix.
//! * The factors: `[&mut M]` and `[&M]` for contiguous nalgebra matrices `M`
//!   implement [`FactorsMut`] / [`Factors`], so a solver writes `U^(v)` into
//!   `DMatrix`es directly (`v` is `m.as_mut_slice()`). The solvers check each
//!   factor's length; [`check_factors`] checks the shapes too (`M_v × K` and
//!   `K × N`), which a length cannot (a transposed factor has the same length).
//!
//! nalgebra's strided views (`m.rows(i, r)` of a `DMatrix`) are not contiguous
//! and nalgebra gives their storage as a slice only through `unsafe`; with
//! `unsafe` confined to the C ABI and the named kernel files, [`block`] takes
//! the contiguous parent and the ranges instead. Row-strided views (a row
//! stride other than 1, e.g. a transposed view) are not column-major and are
//! not accepted by any function here.
//!
//! ```
//! use mvnmf::interop::{check_factors, view};
//! use mvnmf::models::nmf::{self, NmfParams};
//! use nalgebra::DMatrix;
//!
//! let x = DMatrix::from_fn(6, 10, |i, j| 1.0 + ((i * 7 + j * 3) % 5) as f64);
//! let k = 2;
//! let (mut u, mut v) = (DMatrix::<f64>::zeros(6, k), DMatrix::<f64>::zeros(k, 10));
//! let xv = view(&x).unwrap();
//! check_factors(&[xv], k, &[&u], &v).unwrap();
//! let p = NmfParams::default();
//! let mut work = vec![0u8; nmf::fit_workspace::<f64>(xv.shape(), k, &p).unwrap()];
//! nmf::fit(xv, k, &p, u.as_mut_slice(), v.as_mut_slice(), &mut work, None).unwrap();
//! assert!(v.iter().all(|&e| e >= 0.0));
//! ```

use core::ops::Range;

use nalgebra::{Dim, IsContiguous, Matrix, RawStorage, RawStorageMut};

use crate::data::{Dense, Factors, FactorsMut, View, ViewSet};
use crate::error::Error;
use crate::linalg::real::Real;

/// A contiguous nalgebra matrix (`rows × cols`, column-major) as a dense view
/// over its storage. [`Error::ZeroDimension`] for an empty matrix.
pub fn view<T, R, C, S>(m: &Matrix<T, R, C, S>) -> Result<View<'_, T>, Error>
where
    T: Real,
    R: Dim,
    C: Dim,
    S: RawStorage<T, R, C> + IsContiguous,
{
    let (rows, cols) = m.shape();
    Ok(View::from(Dense::new(m.as_slice(), rows, cols, rows)?))
}

/// Rows `rows` and columns `cols` of a contiguous matrix as a dense view with
/// column stride `m.nrows()`, without copies. [`Error::DimensionMismatch`]
/// for a range outside the matrix, [`Error::ZeroDimension`] for an empty one.
pub fn block<T, R, C, S>(
    m: &Matrix<T, R, C, S>,
    rows: Range<usize>,
    cols: Range<usize>,
) -> Result<View<'_, T>, Error>
where
    T: Real,
    R: Dim,
    C: Dim,
    S: RawStorage<T, R, C> + IsContiguous,
{
    let (nr, nc) = m.shape();
    if rows.start > rows.end || rows.end > nr || cols.start > cols.end || cols.end > nc {
        return Err(Error::DimensionMismatch);
    }
    if rows.is_empty() || cols.is_empty() {
        return Err(Error::ZeroDimension);
    }
    let first = cols.start * nr + rows.start;
    let data = &m.as_slice()[first..];
    Ok(View::from(Dense::new(data, rows.len(), cols.len(), nr)?))
}

/// Checks that `u[v]` is `M_v × k` and `v` is `k × N` for the views
/// `views` (`N` items): [`Error::DimensionMismatch`] otherwise, and when the
/// counts of views and bases differ.
pub fn check_factors<T, VS, R, C, S, R2, C2, S2>(
    views: &VS,
    k: usize,
    u: &[&Matrix<T, R, C, S>],
    v: &Matrix<T, R2, C2, S2>,
) -> Result<(), Error>
where
    T: Real,
    VS: ViewSet<T> + ?Sized,
    R: Dim,
    C: Dim,
    S: RawStorage<T, R, C>,
    R2: Dim,
    C2: Dim,
    S2: RawStorage<T, R2, C2>,
{
    let h = views.count();
    if u.len() != h || h == 0 {
        return Err(Error::DimensionMismatch);
    }
    let n = views.shape(0).cols;
    let ok = (0..h).all(|i| u[i].shape() == (views.shape(i).rows, k)) && v.shape() == (k, n);
    if ok {
        Ok(())
    } else {
        Err(Error::DimensionMismatch)
    }
}

impl<T, R, C, S> Factors<T> for [&Matrix<T, R, C, S>]
where
    R: Dim,
    C: Dim,
    S: RawStorage<T, R, C> + IsContiguous,
{
    fn count(&self) -> usize {
        self.len()
    }
    fn get(&self, i: usize) -> &[T] {
        self[i].as_slice()
    }
}

impl<T, R, C, S> Factors<T> for [&mut Matrix<T, R, C, S>]
where
    R: Dim,
    C: Dim,
    S: RawStorage<T, R, C> + IsContiguous,
{
    fn count(&self) -> usize {
        self.len()
    }
    fn get(&self, i: usize) -> &[T] {
        self[i].as_slice()
    }
}

impl<T, R, C, S> FactorsMut<T> for [&mut Matrix<T, R, C, S>]
where
    R: Dim,
    C: Dim,
    S: RawStorageMut<T, R, C> + IsContiguous,
{
    fn get_mut(&mut self, i: usize) -> &mut [T] {
        self[i].as_mut_slice()
    }
}
