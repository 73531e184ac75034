//! Strided matrix views over borrowed slices (column-major by default).
//!
//! A [`MatRef`] addresses element `(i, j)` at `i*rs + j*cs`; a transpose swaps
//! the strides. Construction checks that every addressed element lies inside the
//! slice, so the kernels may rely on it.

use crate::error::{Error, Part};

/// A read-only `rows × cols` view, element `(i, j)` at `data[i*rs + j*cs]`.
#[derive(Clone, Copy, Debug)]
pub struct MatRef<'a, T> {
    data: &'a [T],
    rows: usize,
    cols: usize,
    rs: usize,
    cs: usize,
}

/// Index one past the last addressed element, checked.
fn extent(rows: usize, cols: usize, rs: usize, cs: usize) -> Option<usize> {
    if rows == 0 || cols == 0 {
        return Some(0);
    }
    (rows - 1)
        .checked_mul(rs)?
        .checked_add((cols - 1).checked_mul(cs)?)?
        .checked_add(1)
}

impl<'a, T: Copy> MatRef<'a, T> {
    /// A general strided view; fails if an element would lie outside `data`.
    pub fn new(
        data: &'a [T],
        rows: usize,
        cols: usize,
        rs: usize,
        cs: usize,
    ) -> Result<Self, Error> {
        let end = extent(rows, cols, rs, cs).ok_or(Error::SizeOverflow)?;
        if end > data.len() {
            return Err(Error::BufferTooShort);
        }
        Ok(MatRef {
            data,
            rows,
            cols,
            rs,
            cs,
        })
    }

    /// A view whose extent the caller has already checked with [`MatRef::new`]
    /// on the same arguments (the C ABI re-creates views it validated before).
    pub(crate) fn from_validated(
        data: &'a [T],
        rows: usize,
        cols: usize,
        rs: usize,
        cs: usize,
    ) -> Self {
        debug_assert!(Self::new(data, rows, cols, rs, cs).is_ok());
        MatRef {
            data,
            rows,
            cols,
            rs,
            cs,
        }
    }

    /// A contiguous column-major view (`rs = 1`, `cs = rows`).
    pub fn col_major(data: &'a [T], rows: usize, cols: usize) -> Result<Self, Error> {
        Self::new(data, rows, cols, 1, rows)
    }

    /// Columns `s..e` (no copy).
    pub(crate) fn col_range(self, s: usize, e: usize) -> Result<Self, Error> {
        if s > e || e > self.cols {
            return Err(Error::Internal);
        }
        if s == e || self.rows == 0 {
            return Self::new(&[], self.rows, e - s, self.rs, self.cs);
        }
        let rest = self.data.part(s * self.cs..)?;
        Self::new(rest, self.rows, e - s, self.rs, self.cs)
    }

    /// The transpose (no copy).
    #[inline]
    pub fn t(self) -> Self {
        MatRef {
            data: self.data,
            rows: self.cols,
            cols: self.rows,
            rs: self.cs,
            cs: self.rs,
        }
    }

    /// Rows.
    #[inline]
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Columns.
    #[inline]
    pub fn cols(&self) -> usize {
        self.cols
    }
    /// Row stride.
    #[inline]
    pub fn rs(&self) -> usize {
        self.rs
    }
    /// Column stride.
    #[inline]
    pub fn cs(&self) -> usize {
        self.cs
    }
    /// The underlying slice.
    #[inline]
    pub fn data(&self) -> &'a [T] {
        self.data
    }
}

impl<T: Copy + Default> MatRef<'_, T> {
    /// Element `(i, j)` for `i < rows`, `j < cols` (inside the data by
    /// construction); an index past the data reads `T::default()` (zero)
    /// instead of panicking.
    #[inline(always)]
    pub fn at(&self, i: usize, j: usize) -> T {
        self.data
            .get(
                i.wrapping_mul(self.rs)
                    .wrapping_add(j.wrapping_mul(self.cs)),
            )
            .copied()
            .unwrap_or_default()
    }
}

/// A mutable `rows × cols` column-major view with leading dimension `ld >= rows`.
#[derive(Debug)]
pub struct MatMut<'a, T> {
    data: &'a mut [T],
    rows: usize,
    cols: usize,
    ld: usize,
}

impl<'a, T: Copy> MatMut<'a, T> {
    /// A column-major view with leading dimension `ld`.
    pub fn new(data: &'a mut [T], rows: usize, cols: usize, ld: usize) -> Result<Self, Error> {
        if ld < rows {
            return Err(Error::BufferTooShort);
        }
        let end = extent(rows, cols, 1, ld).ok_or(Error::SizeOverflow)?;
        if end > data.len() {
            return Err(Error::BufferTooShort);
        }
        Ok(MatMut {
            data,
            rows,
            cols,
            ld,
        })
    }

    /// A contiguous column-major view.
    pub fn col_major(data: &'a mut [T], rows: usize, cols: usize) -> Result<Self, Error> {
        Self::new(data, rows, cols, rows)
    }

    /// Rows.
    #[inline]
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Columns.
    #[inline]
    pub fn cols(&self) -> usize {
        self.cols
    }
    /// Leading dimension.
    #[inline]
    pub fn ld(&self) -> usize {
        self.ld
    }
    /// The underlying slice.
    #[inline]
    pub fn data_mut(&mut self) -> &mut [T] {
        self.data
    }
    /// Column `j` (`j < cols`; empty past the last column).
    #[inline]
    pub fn col_mut(&mut self, j: usize) -> &mut [T] {
        let s = j.saturating_mul(self.ld);
        self.data
            .get_mut(s..s.saturating_add(self.rows))
            .unwrap_or_default()
    }
    /// A shorter-lived reborrow.
    #[inline]
    pub fn rb(&mut self) -> MatMut<'_, T> {
        MatMut {
            data: &mut *self.data,
            rows: self.rows,
            cols: self.cols,
            ld: self.ld,
        }
    }
}
