//! Input views: dense column-major or sparse CSC, behind one abstraction.
//!
//! A view is `M × N` (features × items). [`View`] offers exactly the products
//! the solvers need, at these costs:
//!
//! | product | dense | CSC |
//! |---|---|---|
//! | `X·Vᵀ` (`M × K`) | GEMM, `2MNK` | `O(nnz·K + M·K)` |
//! | `Uᵀ·X` (`K × N`) | GEMM, `2MNK` | `O(nnz·K + M·K)` |
//! | `‖X‖²_F`, `ΣX` | `O(MN)` | `O(nnz)` |
//!
//! The products themselves live in [`crate::linalg`] (dense GEMM, and the
//! sparse loops of `linalg::sparse`); this layer holds the view types, the
//! sets of views a model takes, and the per-fit row-sorted copies of CSC views.
//! Inputs are never modified.

use crate::error::{Error, Part, Where};
use crate::linalg::mat::{MatMut, MatRef};
use crate::linalg::real::Real;
pub use crate::linalg::sparse::Csc;
pub(crate) use crate::linalg::sparse::Csr;
use crate::linalg::sparse::{self, csr_fill};
use crate::linalg::{gemm, gemm_k, gemm_k_req, gemm_req, sq_norm};
use crate::par::{chunk_len, pieces_mut, tasks_for, Counted, Parallel, MAX_TASKS};
use crate::work::{Stack, WorkReq};

/// The label of an item whose class is unknown (`MVNMF_UNLABELED` in C).
/// cbindgen:ignore
pub const UNLABELED: u32 = u32::MAX;

/// Dense or sparse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewKind {
    /// Column-major dense.
    Dense,
    /// Compressed sparse columns.
    Csc,
}

/// What a workspace query needs to know about a view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ViewShape {
    /// Features (`M`).
    pub rows: usize,
    /// Items (`N`).
    pub cols: usize,
    /// Dense or CSC.
    pub kind: ViewKind,
    /// Stored entries of a CSC view (its products need `O(nnz)` scratch); 0 for dense.
    pub nnz: usize,
}

/// A dense column-major `rows × cols` matrix; column `j` starts at `j*col_stride`.
#[derive(Clone, Copy, Debug)]
pub struct Dense<'a, T> {
    mat: MatRef<'a, T>,
    rows: usize,
    cols: usize,
    col_stride: usize,
}

impl<'a, T: Real> Dense<'a, T> {
    /// Checks the shape: `rows, cols > 0`, `col_stride >= rows`, and
    /// `data.len() >= (cols-1)*col_stride + rows` (checked arithmetic).
    pub fn new(data: &'a [T], rows: usize, cols: usize, col_stride: usize) -> Result<Self, Error> {
        if rows == 0 || cols == 0 {
            return Err(Error::ZeroDimension);
        }
        if col_stride < rows {
            return Err(Error::BufferTooShort);
        }
        rows.checked_mul(cols).ok_or(Error::SizeOverflow)?;
        let need = Self::min_len(rows, cols, col_stride).ok_or(Error::SizeOverflow)?;
        if data.len() < need {
            return Err(Error::BufferTooShort);
        }
        let mat = MatRef::new(data, rows, cols, 1, col_stride)?;
        Ok(Dense {
            mat,
            rows,
            cols,
            col_stride,
        })
    }

    /// Re-creates a view that [`Dense::new`] accepted with the same arguments.
    pub(crate) fn from_validated(
        data: &'a [T],
        rows: usize,
        cols: usize,
        col_stride: usize,
    ) -> Self {
        let mat = MatRef::from_validated(data, rows, cols, 1, col_stride);
        Dense {
            mat,
            rows,
            cols,
            col_stride,
        }
    }

    /// The shortest data slice a `rows × cols` view with this stride needs.
    pub fn min_len(rows: usize, cols: usize, col_stride: usize) -> Option<usize> {
        (cols.checked_sub(1)?)
            .checked_mul(col_stride)?
            .checked_add(rows)
    }

    /// Column `j` (`j < cols`; empty past the last column).
    #[inline]
    pub fn col(&self, j: usize) -> &'a [T] {
        let s = j * self.col_stride;
        self.mat.data().get(s..s + self.rows).unwrap_or_default()
    }

    /// The strided matrix view.
    #[inline]
    pub fn mat(&self) -> MatRef<'a, T> {
        self.mat
    }
}

/// One view of the data, dense or sparse.
#[derive(Clone, Copy, Debug)]
pub enum View<'a, T> {
    /// Dense column-major.
    Dense(Dense<'a, T>),
    /// Sparse CSC.
    Csc(Csc<'a, T>),
}

impl<'a, T: Real> From<Dense<'a, T>> for View<'a, T> {
    fn from(d: Dense<'a, T>) -> Self {
        View::Dense(d)
    }
}

impl<'a, T: Real> From<Csc<'a, T>> for View<'a, T> {
    fn from(c: Csc<'a, T>) -> Self {
        View::Csc(c)
    }
}

impl<'a, T: Real> View<'a, T> {
    /// The 0 × 0 dense view: what a [`ViewSet`] gives for an index past its
    /// end (the solvers never ask for one; no panic path).
    pub(crate) fn empty() -> Self {
        View::Dense(Dense::from_validated(&[], 0, 0, 0))
    }

    /// Features.
    pub fn rows(&self) -> usize {
        match self {
            View::Dense(d) => d.rows,
            View::Csc(c) => c.rows,
        }
    }

    /// Items.
    pub fn cols(&self) -> usize {
        match self {
            View::Dense(d) => d.cols,
            View::Csc(c) => c.cols,
        }
    }

    /// Shape and kind.
    pub fn shape(&self) -> ViewShape {
        let (kind, nnz) = match self {
            View::Dense(_) => (ViewKind::Dense, 0),
            View::Csc(c) => (ViewKind::Csc, c.nnz()),
        };
        ViewShape {
            rows: self.rows(),
            cols: self.cols(),
            kind,
            nnz,
        }
    }

    /// Every stored value finite, and (if `nonneg`) `>= 0`:
    /// [`Error::NonFiniteInput`] / [`Error::NegativeInput`] otherwise.
    pub fn check_values(&self, nonneg: bool) -> Result<(), Error> {
        let check = |xs: &[T]| check_values(xs, nonneg);
        match self {
            View::Dense(d) => (0..d.cols).try_for_each(|j| check(d.col(j))),
            View::Csc(c) => check(c.values),
        }
    }

    /// `Σ_ij X_ij` (f64 accumulation).
    pub fn sum(&self) -> f64 {
        let s = |xs: &[T]| xs.iter().map(|x| x.to_f64()).sum::<f64>();
        match self {
            View::Dense(d) => (0..d.cols).map(|j| s(d.col(j))).sum(),
            View::Csc(c) => s(c.values),
        }
    }

    /// `‖X‖²_F` (f64 accumulation).
    pub fn sq_frobenius(&self) -> f64 {
        match self {
            View::Dense(d) => (0..d.cols).map(|j| sq_norm(d.col(j))).sum(),
            View::Csc(c) => sq_norm(c.values),
        }
    }

    /// `‖s·X‖²_F` (f64 accumulation; the scaled values squared, so that neither
    /// tiny nor huge data loses the sum).
    pub(crate) fn sq_frobenius_scaled(&self, s: f64) -> f64 {
        let sq = |xs: &[T]| {
            xs.iter()
                .map(|x| {
                    let y = x.to_f64() * s;
                    y * y
                })
                .sum::<f64>()
        };
        match self {
            View::Dense(d) => (0..d.cols).map(|j| sq(d.col(j))).sum(),
            View::Csc(c) => sq(c.values),
        }
    }

    /// The split of a pass over the stored values on a pool, fixed by the view's shape:
    /// `(units, chunk)`, units the columns (dense) or the stored values (CSC), `chunk` units
    /// per task (the last may have fewer).
    fn pass_split(&self) -> (usize, usize) {
        let (units, per) = match self {
            View::Dense(d) => (d.cols, d.rows.max(1)),
            View::Csc(c) => (c.values.len(), 1),
        };
        (units, chunk_len(units, tasks_for(units, per), 1))
    }

    /// Calls `f` on the stored values of the units `lo..hi` ([`View::pass_split`]) in the
    /// order of [`View::check_values`], stopping at the first error.
    fn values_in(
        &self,
        lo: usize,
        hi: usize,
        f: &mut dyn FnMut(&[T]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        match self {
            View::Dense(d) => (lo..hi).try_for_each(|j| f(d.col(j))),
            View::Csc(c) => f(c.values.get(lo..hi).unwrap_or(&[])),
        }
    }

    /// One result per task of a pass over the stored values on `par` (tasks fixed by the
    /// shape, [`View::pass_split`]): `part(lo, hi)` of each task's units, in task order,
    /// into `out`; the number of tasks.
    fn pass_par<R: Copy + Send>(
        &self,
        par: Parallel,
        out: &mut [R; MAX_TASKS],
        part: &(dyn Fn(usize, usize) -> R + Sync),
    ) -> Result<usize, Error> {
        let (units, chunk) = self.pass_split();
        // At most `MAX_TASKS` by `tasks_for`; more would be a defect (`Internal`), never
        // units left out.
        let tasks = units.div_ceil(chunk.max(1)).max(1);
        let slots = out.get_mut(..tasks).ok_or(Error::Internal)?;
        let items = Counted::new(pieces_mut(slots, 1).enumerate(), tasks);
        par.run_items(items, &|(t, slot)| {
            let lo = t.saturating_mul(chunk).min(units);
            let hi = lo.saturating_add(chunk).min(units);
            if let Some(r) = slot.first_mut() {
                *r = part(lo, hi);
            }
            Ok(())
        })?;
        Ok(tasks)
    }

    /// [`View::check_values`] in tasks on `par` fixed by the view's shape: each task finds
    /// the first refused entry of its part, and the first task's that has one is the
    /// error, so every pool gives the error of the serial scan.
    pub(crate) fn check_values_par(&self, nonneg: bool, par: Parallel) -> Result<(), Error> {
        if par.is_serial() {
            return self.check_values(nonneg);
        }
        let mut errs = [None; MAX_TASKS];
        let tasks = self.pass_par(par, &mut errs, &|lo, hi| {
            self.values_in(lo, hi, &mut |xs| check_values(xs, nonneg))
                .err()
        })?;
        match errs.iter().take(tasks).find_map(|e| *e) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// [`View::max_value`] in tasks on `par` fixed by the view's shape: the largest of the
    /// tasks' largest values (NaN-ignoring as the serial pass; a maximum does not depend on
    /// the order it is taken in).
    pub(crate) fn max_value_par(&self, par: Parallel) -> Result<f64, Error> {
        if par.is_serial() {
            return Ok(self.max_value());
        }
        let mut maxes = [0.0f64; MAX_TASKS];
        let tasks = self.pass_par(par, &mut maxes, &|lo, hi| {
            let mut m = 0.0f64;
            let _ = self.values_in(lo, hi, &mut |xs| {
                m = xs.iter().fold(m, |a, x| a.max(x.to_f64()));
                Ok(())
            });
            m
        })?;
        Ok(maxes.iter().take(tasks).fold(0.0f64, |a, &x| a.max(x)))
    }

    /// The largest stored value (0 for an empty view; NaN-ignoring).
    pub(crate) fn max_value(&self) -> f64 {
        let m = |xs: &[T]| xs.iter().fold(0.0f64, |a, x| a.max(x.to_f64()));
        match self {
            View::Dense(d) => (0..d.cols).map(|j| m(d.col(j))).fold(0.0, f64::max),
            View::Csc(c) => m(c.values),
        }
    }

    /// [`View::x_vt`] of the view times `s` (a power of two, the solvers' data
    /// scale): `out ← s·X·Vᵀ`, the product formed first and scaled after
    /// (exact; `s = 1` is [`View::x_vt`] itself).
    pub(crate) fn x_vt_scaled(
        &self,
        csr: Option<Csr<'_, T>>,
        s: T,
        v: &[T],
        k: usize,
        out: &mut [T],
        st: &mut Stack<'_>,
    ) -> Result<(), Error> {
        self.x_vt(csr, v, k, out, st)?;
        if s != T::ONE {
            out.iter_mut().for_each(|x| *x *= s);
        }
        Ok(())
    }

    /// [`View::ut_x`] of the view times `s` (a power of two):
    /// `out ← β·out + s·Uᵀ·X`, as `s·(β·out/s + UᵀX)` (exact; `s = 1` is
    /// [`View::ut_x`] itself).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn ut_x_scaled(
        &self,
        csr: Option<Csr<'_, T>>,
        s: T,
        u: &[T],
        k: usize,
        beta: T,
        out: &mut [T],
        st: &mut Stack<'_>,
    ) -> Result<(), Error> {
        if s == T::ONE {
            return self.ut_x(csr, u, k, beta, out, st);
        }
        if beta != T::ZERO {
            let inv = T::ONE / s;
            out.iter_mut().for_each(|x| *x *= inv);
        }
        self.ut_x(csr, u, k, beta, out, st)?;
        out.iter_mut().for_each(|x| *x *= s);
        Ok(())
    }

    /// `out (M×K, col-major) ← X·Vᵀ` for `v` `K×N` col-major. A CSC view needs
    /// its entries sorted by row (`csr`, built once per fit by [`Prepared`]).
    pub(crate) fn x_vt(
        &self,
        csr: Option<Csr<'_, T>>,
        v: &[T],
        k: usize,
        out: &mut [T],
        st: &mut Stack<'_>,
    ) -> Result<(), Error> {
        let (m, n) = (self.rows(), self.cols());
        match self {
            View::Dense(d) => gemm_k(
                T::ONE,
                d.mat(),
                MatRef::col_major(v, k, n)?.t(),
                T::ZERO,
                MatMut::col_major(out, m, k)?,
                st,
            ),
            View::Csc(_) => sparse::csr_x_vt(csr.ok_or(Error::Internal)?, (m, n, k), v, out, st),
        }
    }

    /// `out (K×N, col-major) ← β·out + Uᵀ·X` for `u` `M×K` col-major
    /// (`β = 0`: `out` not read).
    ///
    /// With `csr` (the entries sorted by row, see [`Prepared`]) and `K ≤ 64` a CSC
    /// view streams them once; otherwise it walks the columns block by block.
    pub(crate) fn ut_x(
        &self,
        csr: Option<Csr<'_, T>>,
        u: &[T],
        k: usize,
        beta: T,
        out: &mut [T],
        st: &mut Stack<'_>,
    ) -> Result<(), Error> {
        let (m, n) = (self.rows(), self.cols());
        match self {
            View::Dense(d) => gemm(
                T::ONE,
                MatRef::col_major(u, m, k)?.t(),
                d.mat(),
                beta,
                MatMut::col_major(out, k, n)?,
                st,
            ),
            View::Csc(c) => sparse::csc_ut_x(c, csr, u, k, beta, out, st),
        }
    }
}

/// The row-sorted copies of a fit's CSC views (dense views have none), in two
/// contiguous workspace regions: per CSC view `M + 1 + nnz` indices and `nnz`
/// values. `O(nnz + M)` per CSC view, built once, `O(nnz + M)` time.
pub(crate) struct Prepared<'w, T> {
    words: &'w [usize],
    vals: &'w [T],
}

/// (indices, values) a view's row-sorted copy takes (`None`: overflow).
fn prepared_len(s: ViewShape) -> Option<(usize, usize)> {
    match s.kind {
        ViewKind::Dense => Some((0, 0)),
        ViewKind::Csc => Some((s.rows.checked_add(1)?.checked_add(s.nnz)?, s.nnz)),
    }
}

/// Workspace of [`Prepared::new`] for views of these shapes.
pub(crate) fn prepared_req<T>(shapes: impl IntoIterator<Item = ViewShape>) -> WorkReq {
    let mut tot = Some((0usize, 0usize));
    for s in shapes {
        tot = tot.and_then(|(w, v)| {
            let (a, b) = prepared_len(s)?;
            Some((w.checked_add(a)?, v.checked_add(b)?))
        });
    }
    match tot {
        Some((w, v)) => WorkReq::new::<usize>(w).and(WorkReq::new::<T>(v)),
        None => WorkReq::OVERFLOW,
    }
}

impl<'w, T: Real> Prepared<'w, T> {
    /// Takes the regions from `st` and sorts every CSC view's entries by row.
    pub(crate) fn new<VS: ViewSet<T> + ?Sized>(
        views: &VS,
        st: &mut Stack<'w>,
    ) -> Result<Self, Error> {
        let (mut nw, mut nv) = (0usize, 0usize);
        for i in 0..views.count() {
            let (a, b) = prepared_len(views.shape(i)).ok_or(Error::SizeOverflow)?;
            nw = nw.checked_add(a).ok_or(Error::SizeOverflow)?;
            nv = nv.checked_add(b).ok_or(Error::SizeOverflow)?;
        }
        let words: &'w mut [usize] = st.take(nw)?;
        let vals: &'w mut [T] = st.take(nv)?;
        let (mut ow, mut ov) = (0, 0);
        for i in 0..views.count() {
            if let View::Csc(c) = views.view(i) {
                let (m, nnz) = (c.rows, c.nnz());
                let region = words.get_mut(ow..ow + m + 1 + nnz);
                let region = region.ok_or(Error::Internal)?;
                let (rp, rest) = region.split_at_mut_checked(m + 1).ok_or(Error::Internal)?;
                let vs = vals.part_mut(ov..ov + nnz)?;
                csr_fill(&c, rp, rest, vs);
                ow += m + 1 + nnz;
                ov += nnz;
            }
        }
        Ok(Prepared { words, vals })
    }

    /// View `i`'s row-sorted copy (`None` for a dense view).
    pub(crate) fn get<VS: ViewSet<T> + ?Sized>(&self, views: &VS, i: usize) -> Option<Csr<'_, T>> {
        let (mut ow, mut ov) = (0, 0);
        for j in 0..i {
            let (a, b) = prepared_len(views.shape(j))?;
            ow += a;
            ov += b;
        }
        let s = views.shape(i);
        if s.kind != ViewKind::Csc {
            return None;
        }
        let (m, nnz) = (s.rows, s.nnz);
        Some(Csr::new(
            self.words.get(ow..ow + m + 1)?,
            self.words.get(ow + m + 1..ow + m + 1 + nnz)?,
            self.vals.get(ov..ov + nnz)?,
        ))
    }
}

/// Workspace of [`View::x_vt`] for a view of this shape and rank `k` (CSC: `V`
/// at a padded stride; the row-sorted entries come from [`Prepared`]).
pub(crate) fn x_vt_req<T>(shape: ViewShape, k: usize) -> WorkReq {
    match shape.kind {
        ViewKind::Dense => gemm_k_req::<T>(shape.rows, k, shape.cols),
        ViewKind::Csc => sparse::csr_x_vt_req::<T>(shape.rows, shape.cols, shape.nnz, k),
    }
}

/// Workspace of [`View::ut_x`] (CSC: a row block of `Uᵀ`, and `N` cursors or the
/// padded result).
pub(crate) fn ut_x_req<T>(shape: ViewShape, k: usize) -> WorkReq {
    match shape.kind {
        ViewKind::Dense => gemm_req::<T>(k, shape.cols, shape.rows),
        ViewKind::Csc => sparse::csc_ut_x_req::<T>(shape.rows, shape.cols, shape.nnz, k),
    }
}

/// Finite (and nonnegative if asked) check of a slice.
pub(crate) fn check_values<T: Real>(xs: &[T], nonneg: bool) -> Result<(), Error> {
    for &x in xs {
        if !x.is_finite() {
            return Err(Error::NonFiniteInput);
        }
        if nonneg && x < T::ZERO {
            return Err(Error::NegativeInput);
        }
    }
    Ok(())
}

/// The class of `x` as [`check_values`] sees it: `None` when it passes.
fn bad_class<T: Real>(x: T, nonneg: bool) -> Option<Error> {
    if !x.is_finite() {
        Some(Error::NonFiniteInput)
    } else if nonneg && x < T::ZERO {
        Some(Error::NegativeInput)
    } else {
        None
    }
}

impl<T: Real> View<'_, T> {
    /// The first entry that [`View::check_values`] refuses, in its order
    /// (column by column, rows within a column): `(error, row, col)`, or
    /// `None` when every value passes. `O(rows·cols)` dense, `O(nnz)` CSC;
    /// run only on the error path.
    pub fn locate_bad(&self, nonneg: bool) -> Option<(Error, usize, usize)> {
        match self {
            View::Dense(d) => (0..d.cols).find_map(|j| {
                let (i, e) = d
                    .col(j)
                    .iter()
                    .enumerate()
                    .find_map(|(i, &x)| bad_class(x, nonneg).map(|e| (i, e)))?;
                Some((e, i, j))
            }),
            View::Csc(c) => {
                let (p, e) = c
                    .values
                    .iter()
                    .enumerate()
                    .find_map(|(p, &x)| bad_class(x, nonneg).map(|e| (p, e)))?;
                // The column holding stored entry `p`: the last `j` with `col_ptr[j] <= p`.
                let j = c.col_ptr.partition_point(|&s| s <= p).saturating_sub(1);
                Some((e, c.row_idx.get(p).copied().unwrap_or(usize::MAX), j))
            }
        }
    }
}

/// Where the values of a view set fail [`View::check_values`] (what the
/// solvers run on every view, in view order): the first bad entry's view, row
/// and column, and its error ([`Error::NonFiniteInput`] or, with `nonneg`,
/// [`Error::NegativeInput`]); `None` when every value passes. A caller that got
/// one of those errors from a fit asks this to say where (`arg` of the
/// [`Where`] is 0: the caller names the argument).
///
/// ```
/// use mvnmf::data::{locate_bad, Dense, View};
/// use mvnmf::error::{Error, Where};
/// let a = [1.0, 2.0, 3.0, 4.0];
/// let b = [1.0, 2.0, f64::NAN, 4.0, 5.0, 6.0];
/// let views = [
///     View::from(Dense::new(&a, 2, 2, 2).unwrap()),
///     View::from(Dense::new(&b, 3, 2, 3).unwrap()),
/// ];
/// assert_eq!(locate_bad(&views[..], true), Some((Error::NonFiniteInput, Where::entry(1, 2, 0))));
/// ```
pub fn locate_bad<T: Real, VS: ViewSet<T> + ?Sized>(
    views: &VS,
    nonneg: bool,
) -> Option<(Error, Where)> {
    (0..views.count()).find_map(|v| {
        let (e, i, j) = views.view(v).locate_bad(nonneg)?;
        Some((e, Where::entry(v, i, j)))
    })
}

/// [`locate_bad`] for one column-major `rows × (len/rows)` buffer (a factor
/// `U_v`, an encoding `V`): `(error, row, col)` of its first bad value.
/// `rows == 0` gives the flat index as the row.
pub fn locate_bad_in<T: Real>(
    xs: &[T],
    rows: usize,
    nonneg: bool,
) -> Option<(Error, usize, usize)> {
    let (p, e) = xs
        .iter()
        .enumerate()
        .find_map(|(p, &x)| bad_class(x, nonneg).map(|e| (p, e)))?;
    Some(match rows {
        0 => (e, p, usize::MAX),
        r => (e, p % r, p / r),
    })
}

/// Where a CSC structure fails [`Csc::new`]'s checks with
/// [`Error::MalformedCsc`]: `(row, col)`, `col` the first column whose
/// pointers (`col_ptr[0] != 0`: column 0; decreasing, or past `nnz`) or row
/// indices (out of range, not strictly increasing) are wrong, `row` the
/// offending row index (`usize::MAX` when the column's pointers are wrong).
/// `None` when the structure passes. Run only on the error path.
pub fn locate_csc(rows: usize, col_ptr: &[usize], row_idx: &[usize]) -> Option<(usize, usize)> {
    let nnz = *col_ptr.last()?;
    if col_ptr.first() != Some(&0) {
        return Some((usize::MAX, 0));
    }
    for (j, pair) in col_ptr.windows(2).enumerate() {
        let &[s, e] = pair else {
            return Some((usize::MAX, j));
        };
        let Some(col) = row_idx.get(s..e).filter(|_| e <= nnz) else {
            return Some((usize::MAX, j));
        };
        let mut prev: Option<usize> = None;
        for &r in col {
            if r >= rows || prev.is_some_and(|p| r <= p) {
                return Some((r, j));
            }
            prev = Some(r);
        }
    }
    None
}

/// A set of views of the same items, indexable without allocation: a slice of
/// [`View`]s, or the C ABI's array of `mvnmf_view` descriptors. The solvers of
/// views check that they share the item count `N` (`steps::check`); a
/// [`SourceSet`] is the same kind of list whose members share the features.
pub trait ViewSet<T: Real> {
    /// Number of views.
    fn count(&self) -> usize;
    /// View `i` (`i < count()`).
    fn view(&self, i: usize) -> View<'_, T>;
    /// Shape of view `i`.
    fn shape(&self, i: usize) -> ViewShape {
        self.view(i).shape()
    }
}

impl<'a, T: Real> ViewSet<T> for [View<'a, T>] {
    fn count(&self) -> usize {
        self.len()
    }
    /// View `i`; past the end the empty view (never asked for; no panic path).
    fn view(&self, i: usize) -> View<'_, T> {
        <[_]>::get(self, i).copied().unwrap_or_else(View::empty)
    }
}

impl<'a, T: Real, const H: usize> ViewSet<T> for [View<'a, T>; H] {
    fn count(&self) -> usize {
        H
    }
    /// View `i`; past the end the empty view (never asked for; no panic path).
    fn view(&self, i: usize) -> View<'_, T> {
        <[_]>::get(self, i).copied().unwrap_or_else(View::empty)
    }
}

/// Sources over one feature space (JSNMF, DESIGN §7): `S` matrices with the same
/// rows (`M` terms of one vocabulary), each with its own item count `N_s` —
/// where a [`ViewSet`] holds views of the same items, each with its own
/// features. Any view list is one (a slice of [`View`]s, the C ABI's descriptor
/// array); what differs is the check a solver runs: [`check_sources`] instead
/// of the same-items check.
pub trait SourceSet<T: Real>: ViewSet<T> {
    /// Source `s` (`s < count()`), `M × N_s`.
    fn source(&self, s: usize) -> View<'_, T> {
        self.view(s)
    }
}

impl<T: Real, S: ViewSet<T> + ?Sized> SourceSet<T> for S {}

/// The dimensions of a source set ([`check_sources`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceDims {
    /// The common number of rows `M` (terms).
    pub rows: usize,
    /// The largest item count `max_s N_s`.
    pub max_cols: usize,
    /// All items `Σ_s N_s`.
    pub total_cols: usize,
}

/// Checks the shapes of a source set: at least one source
/// ([`Error::ZeroDimension`]), every source `M × N_s` with `M, N_s ≥ 1`
/// ([`Error::ZeroDimension`]), one `M` for all ([`Error::DimensionMismatch`]),
/// `M·N_s` and `Σ_s N_s` without overflow ([`Error::SizeOverflow`]).
pub fn check_sources(shapes: impl IntoIterator<Item = ViewShape>) -> Result<SourceDims, Error> {
    let mut d: Option<SourceDims> = None;
    for s in shapes {
        if s.rows == 0 || s.cols == 0 {
            return Err(Error::ZeroDimension);
        }
        s.rows.checked_mul(s.cols).ok_or(Error::SizeOverflow)?;
        let cur = d.get_or_insert(SourceDims {
            rows: s.rows,
            max_cols: 0,
            total_cols: 0,
        });
        if cur.rows != s.rows {
            return Err(Error::DimensionMismatch);
        }
        cur.max_cols = cur.max_cols.max(s.cols);
        cur.total_cols = cur
            .total_cols
            .checked_add(s.cols)
            .ok_or(Error::SizeOverflow)?;
    }
    d.ok_or(Error::ZeroDimension)
}

/// Per-view factor matrices (`U^(v)`, `M_v × K` col-major each), read-only.
pub trait Factors<T> {
    /// Number of factors.
    fn count(&self) -> usize;
    /// Factor `i`.
    fn get(&self, i: usize) -> &[T];
}

/// Per-view factor matrices, writable (solver outputs).
pub trait FactorsMut<T>: Factors<T> {
    /// Factor `i`, writable.
    fn get_mut(&mut self, i: usize) -> &mut [T];
}

impl<T> Factors<T> for [&[T]] {
    fn count(&self) -> usize {
        self.len()
    }
    /// Factor `i`; past the end an empty slice (no panic path).
    fn get(&self, i: usize) -> &[T] {
        <[_]>::get(self, i).map_or(&[], |f| f)
    }
}

impl<T> Factors<T> for [&mut [T]] {
    fn count(&self) -> usize {
        self.len()
    }
    /// Factor `i`; past the end an empty slice (no panic path).
    fn get(&self, i: usize) -> &[T] {
        <[_]>::get(self, i).map_or(&[], |f| f)
    }
}

impl<T> FactorsMut<T> for [&mut [T]] {
    /// Factor `i`; past the end an empty slice (no panic path).
    fn get_mut(&mut self, i: usize) -> &mut [T] {
        <[_]>::get_mut(self, i).map_or(&mut [], |f| f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use std::vec::Vec;

    use crate::linalg::sparse::tests::random_sparse;

    #[test]
    fn sparse_products_equal_dense() {
        // Padded widths 8..64 (one register-resident pass), then K > 64 (chunks).
        sparse_vs_dense(23, 17, 5, 0.2);
        sparse_vs_dense(300, 40, 16, 0.05);
        sparse_vs_dense(3000, 40, 50, 0.01); // several row blocks (row_block(50, 3000) = 655)
        sparse_vs_dense(700, 30, 70, 0.05); // K > 64: the chunked path, several row blocks
    }

    fn sparse_vs_dense(m: usize, n: usize, k: usize, density: f64) {
        let (dense, cp, ri, vals) = random_sparse(m, n, density, 3);
        let dv = View::from(Dense::new(&dense, m, n, m).unwrap());
        let sv = View::from(Csc::new(m, n, &cp, &ri, &vals).unwrap());
        let mut rng = Rng::new(9);
        let v: Vec<f64> = (0..k * n).map(|_| rng.uniform()).collect();
        let u: Vec<f64> = (0..m * k).map(|_| rng.uniform()).collect();
        let sh = sv.shape();
        let need = x_vt_req::<f64>(sh, k)
            .or(ut_x_req::<f64>(sh, k))
            .or(x_vt_req::<f64>(dv.shape(), k))
            .or(ut_x_req::<f64>(dv.shape(), k));
        let mut w = std::vec![0u8; need.bytes().unwrap()];
        // The row-sorted copy, after a dense view (which has none).
        let both = [dv, sv];
        let pneed = prepared_req::<f64>([dv.shape(), sh]).bytes().unwrap();
        let mut pw = std::vec![0u8; pneed];
        let mut pst = Stack::new(&mut pw);
        let prep = Prepared::new(&both[..], &mut pst).unwrap();
        assert!(prep.get(&both[..], 0).is_none());
        let csr = prep.get(&both[..], 1);
        assert!(csr.is_some());
        let (mut a, mut b) = (std::vec![0.0; m * k], std::vec![0.0; m * k]);
        dv.x_vt(None, &v, k, &mut a, &mut Stack::new(&mut w))
            .unwrap();
        sv.x_vt(csr, &v, k, &mut b, &mut Stack::new(&mut w))
            .unwrap();
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() < 1e-12);
        }
        assert_eq!(
            sv.x_vt(None, &v, k, &mut b, &mut Stack::new(&mut w)),
            Err(Error::Internal)
        );
        // Uᵀ X: dense, sparse from the row-sorted copy, sparse by column blocks.
        let mut a = std::vec![1.0; k * n];
        dv.ut_x(None, &u, k, 0.5, &mut a, &mut Stack::new(&mut w))
            .unwrap();
        for sparse_csr in [csr, None] {
            let mut b = std::vec![1.0; k * n];
            sv.ut_x(sparse_csr, &u, k, 0.5, &mut b, &mut Stack::new(&mut w))
                .unwrap();
            for (x, y) in a.iter().zip(&b) {
                assert!((x - y).abs() < 1e-12);
            }
        }
        assert!((dv.sq_frobenius() - sv.sq_frobenius()).abs() < 1e-12);
        assert!((dv.sum() - sv.sum()).abs() < 1e-12);
    }

    #[test]
    fn dense_validation() {
        let d = [0.0; 10];
        assert!(Dense::new(&d, 3, 3, 3).is_ok());
        assert_eq!(Dense::new(&d, 3, 3, 4).err(), Some(Error::BufferTooShort)); // needs 2*4+3 = 11
        assert!(Dense::new(&d, 3, 2, 7).is_ok()); // needs 7+3 = 10
        assert_eq!(Dense::new(&d, 3, 3, 2).err(), Some(Error::BufferTooShort));
        assert_eq!(Dense::new(&d, 0, 3, 2).err(), Some(Error::ZeroDimension));
        assert_eq!(
            Dense::new(&d, usize::MAX, 3, usize::MAX).err(),
            Some(Error::SizeOverflow)
        );
    }

    /// Sources share the rows, not the items: `check_sources` says so, and the
    /// per-fit row-sorted copies serve sources of different item counts.
    #[test]
    fn sources_over_one_feature_space() {
        let m = 30;
        let (d1, cp1, ri1, v1) = random_sparse(m, 11, 0.2, 1);
        let (d2, cp2, ri2, v2) = random_sparse(m, 23, 0.2, 2);
        let srcs = [
            View::from(Csc::new(m, 11, &cp1, &ri1, &v1).unwrap()),
            View::from(Csc::new(m, 23, &cp2, &ri2, &v2).unwrap()),
        ];
        let dims = check_sources(srcs.iter().map(|x| x.shape())).unwrap();
        assert_eq!(
            dims,
            SourceDims {
                rows: m,
                max_cols: 23,
                total_cols: 34
            }
        );
        let x3 = std::vec![1.0; 29 * 4];
        let other = View::from(Dense::new(&x3, 29, 4, 29).unwrap());
        let sh = |v: &View<'_, f64>| v.shape();
        assert_eq!(
            check_sources([sh(&srcs[0]), sh(&other)]),
            Err(Error::DimensionMismatch)
        );
        assert_eq!(check_sources([]), Err(Error::ZeroDimension));
        let mut z = sh(&srcs[0]);
        z.cols = 0;
        assert_eq!(check_sources([z]), Err(Error::ZeroDimension));
        // X_s Vᵀ from the row-sorted copy of each source equals the dense product.
        let k = 5;
        let mut pw =
            std::vec![0u8; prepared_req::<f64>(srcs.iter().map(|x| x.shape())).bytes().unwrap()];
        let mut pst = Stack::new(&mut pw);
        let prep = Prepared::new(&srcs[..], &mut pst).unwrap();
        for (s, (dense, n)) in [(&d1, 11usize), (&d2, 23)].into_iter().enumerate() {
            let x = srcs[..].source(s);
            assert_eq!(x.cols(), n);
            let v: std::vec::Vec<f64> = (0..k * n).map(|t| (t % 7) as f64 * 0.25).collect();
            let mut out = std::vec![0.0; m * k];
            let mut w = std::vec![0u8; x_vt_req::<f64>(x.shape(), k).bytes().unwrap()];
            x.x_vt(
                prep.get(&srcs[..], s),
                &v,
                k,
                &mut out,
                &mut Stack::new(&mut w),
            )
            .unwrap();
            for i in 0..m {
                for t in 0..k {
                    let want: f64 = (0..n).map(|j| dense[i + j * m] * v[t + j * k]).sum();
                    assert!((want - out[i + t * m]).abs() < 1e-12);
                }
            }
        }
    }
}
