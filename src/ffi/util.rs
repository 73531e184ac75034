//! What the entry points share: reading options, views and factor arrays from
//! C, the panic boundary, the workspace query, the progress callback and the
//! report.

// The `unsafe` of the C ABI, written once (these three macros). Every entry
// point is an `unsafe extern "C" fn` whose caller upholds its contract: its doc
// and the module doc's rules (each pointer NULL or valid for the documented
// size and kind, outputs not overlapping the inputs, the workspace or each
// other, the buffers unchanged until the call returns). Every helper below is
// an `unsafe fn` whose caller, an entry point, hands on exactly what it was
// given. The blocks these macros write rely on that contract and nothing
// else; a block that relies on more is written out with its own `SAFETY`
// comment.

/// `unsafe { body }` under the entry point's contract (see above).
macro_rules! c_unsafe {
    ($($body:tt)*) => {
        // SAFETY: the caller upholds this function's contract (above).
        unsafe { $($body)* }
    };
}

/// The body of an entry point: `body` (a `Result<mvnmf_status, Error>`) under
/// the contract, behind the panic boundary ([`guard`]).
macro_rules! entry {
    ($body:block) => {
        // SAFETY: the caller upholds this function's contract (above).
        unsafe { $crate::ffi::util::guard(|| $body) }
    };
}

/// The body of an entry point that says where it refused: `body` (a
/// `Result<mvnmf_status, Located>`) under the contract, behind the panic
/// boundary; on a refusal the located error is written to `*report` (when not
/// NULL) by [`refuse`] ([`guard_at`]).
macro_rules! entry_at {
    ($report:expr, $body:block) => {
        // SAFETY: the caller upholds this function's contract (above).
        unsafe { $crate::ffi::util::guard_at($report, || $body) }
    };
}

/// The body of a `_workspace` query: `body` (a `Result<usize, Error>`) under
/// the contract; the size is written to `*bytes` only on success ([`query`]).
macro_rules! workspace {
    ($bytes:expr, $body:block) => {
        // SAFETY: the caller upholds this function's contract (above).
        unsafe { $crate::ffi::util::query($bytes, || $body) }
    };
}

/// `MVNMF_STATUS_NULL_POINTER` (returned as an `Error`) when any of the
/// pointers is NULL: `require!(labels, eta);`.
macro_rules! require {
    ($($p:expr),+ $(,)?) => {
        if $($p.is_null())||+ {
            return Err($crate::error::Error::NullPointer);
        }
    };
}

/// `MVNMF_STATUS_ZERO_DIMENSION` (returned as an `Error`) when any of the
/// sizes is 0: `nonzero!(rows, cols);`.
macro_rules! nonzero {
    ($($n:expr),+ $(,)?) => {
        if $($n == 0)||+ {
            return Err($crate::error::Error::ZeroDimension);
        }
    };
}

use core::ops::ControlFlow;

// The factor and buffer arrays a call takes as C pointer arrays.
mod arrays;
pub(crate) use arrays::*;

// Where a refusal points: the readers' `.arg(pos)` and the entry points' `Site`.
mod site;
pub(crate) use site::*;

// The `a × b` readers of the evaluation, protocol, MVEL and JSNMF entry points.
mod matrices;
pub(crate) use matrices::*;

// The body of a fit/encode pair once its options are read (`Site::solve`).
mod solve;
pub(crate) use solve::*;

// What every file of `ffi` uses, imported here once (`ffi/mod.rs` glob-imports
// this file for its children).
pub(crate) use super::types::*;
pub(crate) use crate::data::{Csc, Dense, Factors, FactorsMut, View, ViewKind, ViewSet, ViewShape};
pub(crate) use crate::error::{Error, Located, Where};
pub(crate) use crate::steps::{Init, Progress, Report, Stop};
pub(crate) use core::ffi::c_void;

/// One field of a C options struct and the Rust value it stands for: the
/// conversions both ways that `cparams!` composes (a plain number is itself;
/// an enum code, a pool description or a nested options struct convert).
pub(crate) trait CField<R>: Sized {
    /// The Rust value (`MVNMF_STATUS_BAD_PARAMETER` for a code out of range).
    fn to_rust(&self) -> Result<R, Error>;
    /// The C form of `r` (what `mvnmf_*_params_default()` returns).
    fn from_rust(r: &R) -> Self;
}

impl<T: Copy> CField<T> for T {
    fn to_rust(&self) -> Result<T, Error> {
        Ok(*self)
    }
    fn from_rust(r: &T) -> T {
        *r
    }
}

/// A 0/1 flag (other values: `MVNMF_STATUS_BAD_PARAMETER`).
impl CField<bool> for u32 {
    fn to_rust(&self) -> Result<bool, Error> {
        match *self {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(Error::BadParameter),
        }
    }
    fn from_rust(r: &bool) -> u32 {
        u32::from(*r)
    }
}

/// One field list gives a C options struct (`#[repr(C)]`, with its docs), its
/// conversions both ways, its `CParams` (what NULL means: `Rust::default()`)
/// and its `mvnmf_*_params_default()` (the Rust defaults, through `from_rust`):
///
/// ```text
/// cparams! {
///     /// What the options are for.
///     pub struct mvnmf_x_params => XParams {
///         /// A field's doc (the header's).
///         pub a: u32,
///         pub b: f64 as rust_b,
///     } validate;
///     /// The default options.
///     fn mvnmf_x_params_default;
/// }
/// ```
///
/// lists every field of both structs once (C name and type, then ` as ` the
/// Rust name where they differ; a field missing on either side does not
/// compile, unless `..default` follows the list: the Rust fields C does not
/// carry then read as their defaults; `pub f: T = value` is a field of C alone,
/// `value` in the defaults, read by the call itself); `validate` runs the Rust options' own
/// `validate()` after reading, `check f` runs `f(&options)`.
/// `=> Outer.path: Inner { ... }` reads a flat C struct into `Outer`'s one
/// field `path` (`validate` is `Outer`'s). Without the `fn` line the
/// default function is written elsewhere (where the header lists it).
macro_rules! cparams {
    (
        $(#[$sdoc:meta])*
        pub struct $c:ident => $r:ident $(. $path:ident: $inner:ident)? {
            $(
                $(#[$fdoc:meta])*
                pub $cf:ident: $t:ty $(as $rf:ident)? $(= $only:expr)?
            ),* $(,)?
        } $(..$dfl:ident)? $($v:ident)*;
        $(
            $(#[$ddoc:meta])*
            fn $def:ident;
        )?
    ) => {
        $(#[$sdoc])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug)]
        pub struct $c {
            $(
                $(#[$fdoc])*
                pub $cf: $t,
            )*
        }
        cparams!(@munch $c, [$r $(. $path: $inner)?], [$($v)*] [$($dfl)?], [] [],
            $($cf $(as $rf)? $(= $only)?,)*);
        $(
            $(#[$ddoc])*
            #[no_mangle]
            pub extern "C" fn $def() -> $c {
                $crate::ffi::util::CField::from_rust(&$r::default())
            }
        )?
    };
    (@munch $c:ident, $r:tt, $v:tt $o:tt, [$($d:tt)*] $co:tt, $cf:ident as $rf:ident, $($rest:tt)*) => {
        cparams!(@munch $c, $r, $v $o, [$($d)* ($cf $rf)] $co, $($rest)*);
    };
    (@munch $c:ident, $r:tt, $v:tt $o:tt, $d:tt [$($co:tt)*], $cf:ident = $e:expr, $($rest:tt)*) => {
        cparams!(@munch $c, $r, $v $o, $d [$($co)* ($cf $e)], $($rest)*);
    };
    (@munch $c:ident, $r:tt, $v:tt $o:tt, [$($d:tt)*] $co:tt, $cf:ident, $($rest:tt)*) => {
        cparams!(@munch $c, $r, $v $o, [$($d)* ($cf $cf)] $co, $($rest)*);
    };
    (@munch $c:ident, $r:tt, $v:tt $o:tt, $d:tt $co:tt, $(,)*) => {
        cparams!(@emit $c, $r, $v $o, $d $co);
    };
    (@check [validate], $out:ident) => {
        $out.validate()?;
    };
    (@check [check $f:ident], $out:ident) => {
        $f(&$out)?;
    };
    (@check [], $out:ident) => {};
    // The Rust value built from the C fields: the options themselves, or (with
    // `=> Outer.path: Inner`) the `Outer` whose one field `path` is `Inner`.
    (@build [$r:ident] [$($dfl:ident)?] $($f:tt)*) => {
        $r { $($f)* $(..$r::$dfl())? }
    };
    (@build [$r:ident . $path:ident: $inner:ident] [$($dfl:ident)?] $($f:tt)*) => {
        $r { $path: $inner { $($f)* $(..$inner::$dfl())? } }
    };
    (@part $x:ident [$r:ident]) => { $x };
    (@part $x:ident [$r:ident . $path:ident: $inner:ident]) => { &$x.$path };
    (@emit $c:ident, [$r:ident $($nest:tt)*], $v:tt $o:tt, [$(($cf:ident $rf:ident))*]
        [$(($co:ident $ce:expr))*]) => {
        impl $crate::ffi::util::CField<$r> for $c {
            fn to_rust(&self) -> Result<$r, Error> {
                use $crate::ffi::util::CField;
                let out = cparams!(@build [$r $($nest)*] $o
                    $($rf: CField::to_rust(&self.$cf)?,)*);
                cparams!(@check $v, out);
                Ok(out)
            }
            fn from_rust(r: &$r) -> Self {
                use $crate::ffi::util::CField;
                let part = cparams!(@part r [$r $($nest)*]);
                $c { $($cf: CField::from_rust(&part.$rf),)* $($co: $ce,)* }
            }
        }
        impl $crate::ffi::util::CParams for $c {
            type Rust = $r;
        }
    };
}

/// A C options struct: the Rust options it reads into (and validates, through
/// its `CField`; `MVNMF_STATUS_BAD_PARAMETER` when out of range). One rule for
/// every options pointer of the C ABI: NULL means the defaults, exactly what
/// the struct's `mvnmf_*_params_default()` returns.
pub(crate) trait CParams {
    /// The Rust options; their `default()` is what NULL means.
    type Rust: Default;
}

/// `*p` read and validated, or the defaults when `p` is NULL.
pub(crate) unsafe fn read_params<P: CParams + CField<P::Rust>>(
    p: *const P,
) -> Result<P::Rust, Error> {
    c_unsafe!({
        if p.is_null() {
            Ok(P::Rust::default())
        } else {
            (*p).to_rust()
        }
    })
}

/// The C struct itself, or its defaults when `p` is NULL: what a call reads
/// of the fields C alone has. A copy: never read an `mvnmf_parallel` from it
/// (a host pool keeps the address of the struct it was read from).
pub(crate) unsafe fn c_params<P: CParams + CField<P::Rust> + Copy>(p: *const P) -> P {
    c_unsafe!(if p.is_null() {
        P::from_rust(&P::Rust::default())
    } else {
        *p
    })
}

/// `f()`, or `panicked` if it panics (a bug; caught with `std` only: without
/// it the panic handler, which no entry point reaches, decides).
pub(crate) fn catch<R>(f: impl FnOnce() -> R, panicked: R) -> R {
    #[cfg(feature = "std")]
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(panicked);
    #[cfg(not(feature = "std"))]
    let r = {
        let _ = panicked;
        f()
    };
    r
}

/// Runs `f`, turning a panic (a bug) into `MVNMF_STATUS_INTERNAL`.
pub(crate) fn guard(f: impl FnOnce() -> Result<mvnmf_status, Error>) -> mvnmf_status {
    catch(f, Err(Error::Internal)).unwrap_or_else(mvnmf_status::from)
}

/// [`guard`] for a body that says where it refused: on `Err(l)` (and on a
/// caught panic, as `MVNMF_STATUS_INTERNAL` located nowhere) the report is
/// written by [`refuse`] before the status is returned.
///
/// # Safety
/// `report` is NULL or valid for writing one `mvnmf_report`.
pub(crate) unsafe fn guard_at(
    report: *mut mvnmf_report,
    f: impl FnOnce() -> Result<mvnmf_status, Located>,
) -> mvnmf_status {
    match catch(f, Err(Located::from(Error::Internal))) {
        Ok(s) => s,
        Err(l) => {
            c_unsafe!(refuse(report, l.at));
            l.error.into()
        }
    }
}

/// Writes a refusal to `*report` (nothing when NULL): every field zero (no
/// iteration ran, no objective) but the `where_*` fields, which say where.
///
/// # Safety
/// `report` is NULL or valid for writing one `mvnmf_report`.
pub(crate) unsafe fn refuse(report: *mut mvnmf_report, at: Where) {
    let r = mvnmf_report {
        where_arg: at.arg,
        where_view: at.view,
        where_row: at.row,
        where_col: at.col,
        ..mvnmf_report::default()
    };
    c_unsafe!(write_report(report, r));
}

/// A slice from C, NULL allowed only when empty; the byte size must fit `isize`.
pub(crate) unsafe fn slice<'a, T>(p: *const T, len: usize) -> Result<&'a [T], Error> {
    if !borrowable(p, len)? {
        return Ok(&[]);
    }
    c_unsafe!(Ok(core::slice::from_raw_parts(p, len)))
}

pub(crate) unsafe fn slice_mut<'a, T>(p: *mut T, len: usize) -> Result<&'a mut [T], Error> {
    if !borrowable(p, len)? {
        return Ok(&mut []);
    }
    c_unsafe!(Ok(core::slice::from_raw_parts_mut(p, len)))
}

/// [`slice()`] of an optional array: `None` for NULL.
pub(crate) unsafe fn opt_slice<'a, T>(p: *const T, len: usize) -> Result<Option<&'a [T]>, Error> {
    c_unsafe!((!p.is_null()).then(|| slice(p, len)).transpose())
}

/// [`slice_mut`] of an optional output: `None` for NULL.
pub(crate) unsafe fn opt_slice_mut<'a, T>(
    p: *mut T,
    len: usize,
) -> Result<Option<&'a mut [T]>, Error> {
    c_unsafe!((!p.is_null()).then(|| slice_mut(p, len)).transpose())
}

/// The checks of [`slice()`] and [`slice_mut`]: `false` for an empty slice
/// (any pointer), else `p` non-NULL and `len` values at most `isize::MAX`
/// bytes.
fn borrowable<T>(p: *const T, len: usize) -> Result<bool, Error> {
    if len == 0 {
        return Ok(false);
    }
    require!(p);
    elems::<T>(len, 1).map(|_| true)
}

/// The element count `a × b` of a buffer of `T` that a call takes from C,
/// checked as [`slice()`] checks it (the count and its bytes at most
/// `isize::MAX`, else [`Error::SizeOverflow`]): the shape rules a workspace
/// query shares with its call are written with it.
pub(crate) fn elems<T>(a: usize, b: usize) -> Result<usize, Error> {
    a.checked_mul(b)
        .filter(|&n| {
            n.checked_mul(core::mem::size_of::<T>())
                .is_some_and(|b| b <= isize::MAX as usize)
        })
        .ok_or(Error::SizeOverflow)
}

/// The `cols + 1` column pointers of a CSC descriptor (required).
unsafe fn col_ptr<'a, D: ViewDesc>(v: &D) -> Result<&'a [usize], Error> {
    require!(v.col_ptr());
    c_unsafe!(slice(
        v.col_ptr(),
        v.cols().checked_add(1).ok_or(Error::SizeOverflow)?
    ))
}

/// Kind, rows, cols and (CSC) `nnz = col_ptr[cols]` of a descriptor.
pub(crate) unsafe fn shape_of<D: ViewDesc>(v: &D) -> Result<ViewShape, Error> {
    c_unsafe!({
        let (kind, nnz) = match v.kind() {
            MVNMF_VIEW_DENSE => (ViewKind::Dense, 0),
            MVNMF_VIEW_CSC => (ViewKind::Csc, col_ptr(v)?[v.cols()]),
            _ => return Err(Error::BadParameter),
        };
        Ok(ViewShape {
            rows: v.rows(),
            cols: v.cols(),
            kind,
            nnz,
        })
    })
}

/// The raw slices a descriptor points at (pointers checked, lengths computed).
pub(crate) struct Parts<'a, T> {
    pub(crate) values: &'a [T],
    pub(crate) col_ptr: &'a [usize],
    pub(crate) row_idx: &'a [usize],
}

pub(crate) unsafe fn parts<'a, D: ViewDesc>(v: &D) -> Result<Parts<'a, D::T>, Error> {
    c_unsafe!({
        let (rows, cols) = (v.rows(), v.cols());
        match shape_of(v)?.kind {
            ViewKind::Dense => {
                nonzero!(rows, cols);
                if v.col_stride() < rows {
                    return Err(Error::BufferTooShort);
                }
                let len = Dense::<D::T>::min_len(rows, cols, v.col_stride())
                    .ok_or(Error::SizeOverflow)?;
                Ok(Parts {
                    values: slice(v.values(), len)?,
                    col_ptr: &[],
                    row_idx: &[],
                })
            }
            ViewKind::Csc => {
                let col_ptr = col_ptr(v)?;
                let nnz = col_ptr[cols];
                Ok(Parts {
                    values: slice(v.values(), nnz)?,
                    col_ptr,
                    row_idx: slice(v.row_idx(), nnz)?,
                })
            }
        }
    })
}

/// Full validation of one descriptor (structure, not values), with the row
/// and column of a malformed CSC structure ([`crate::data::locate_csc`];
/// `usize::MAX` for the rest).
unsafe fn check_view<D: ViewDesc>(v: &D) -> Result<(), (Error, (usize, usize))> {
    const NA: (usize, usize) = (usize::MAX, usize::MAX);
    c_unsafe!({
        let p = parts(v).map_err(|e| (e, NA))?;
        let (rows, cols) = (v.rows(), v.cols());
        // `parts` accepted the kind: dense or CSC.
        let r = if v.kind() == MVNMF_VIEW_CSC {
            Csc::new(rows, cols, p.col_ptr, p.row_idx, p.values).map(|_| ())
        } else {
            Dense::new(p.values, rows, cols, v.col_stride()).map(|_| ())
        };
        r.map_err(|e| match e {
            Error::MalformedCsc => (
                e,
                crate::data::locate_csc(rows, p.col_ptr, p.row_idx).unwrap_or(NA),
            ),
            _ => (e, NA),
        })
    })
}

/// The shape of a view that is not there (unreachable after validation).
const NO_SHAPE: ViewShape = ViewShape {
    rows: 0,
    cols: 0,
    kind: ViewKind::Dense,
    nnz: 0,
};

/// The C array of view descriptors as a [`ViewSet`]; built only after every
/// descriptor passed `check_view`.
pub(crate) struct CViews<'a, D = mvnmf_view> {
    pub(crate) views: &'a [D],
}

// SAFETY: a `CViews` only reads the caller's view descriptors and the data
// they point to (every access goes through the shared `View`s it hands out),
// and the C contract is that those buffers stay unchanged until the call
// returns; so the tasks of a parallel region may read them from any thread.
unsafe impl<D: ViewDesc> Sync for CViews<'_, D> {}

impl<'a, D: ViewDesc> CViews<'a, D> {
    pub(crate) unsafe fn new(views: *const D, n_views: usize) -> Result<Self, Error> {
        c_unsafe!(Self::located(views, n_views).map_err(Error::from))
    }

    /// [`CViews::new`] saying where: the view (and for a malformed CSC view
    /// the row and column, [`crate::data::locate_csc`]) of the first
    /// descriptor refused; no argument named ([`read_views_at`] names them).
    pub(crate) unsafe fn located(views: *const D, n_views: usize) -> Result<Self, Located> {
        c_unsafe!({
            if n_views == 0 {
                return Err(Error::ZeroDimension.into());
            }
            let views = slice(views, n_views)?;
            for (i, v) in views.iter().enumerate() {
                check_view(v).map_err(|(e, (r, c))| Located::new(e, Where::entry(i, r, c)))?;
            }
            Ok(CViews { views })
        })
    }
}

impl<D: ViewDesc> ViewSet<D::T> for CViews<'_, D> {
    fn count(&self) -> usize {
        self.views.len()
    }

    fn view(&self, i: usize) -> View<'_, D::T> {
        // SAFETY: `CViews::new` ran `parts` and `check_view` on this very
        // descriptor, so the same calls succeed and the slices are valid.
        match self.views.get(i).map(|v| (v, unsafe { parts(v) })) {
            Some((v, Ok(p))) if v.kind() == MVNMF_VIEW_CSC => View::Csc(Csc::from_validated(
                v.rows(),
                v.cols(),
                p.col_ptr,
                p.row_idx,
                p.values,
            )),
            Some((v, Ok(p))) => View::Dense(Dense::from_validated(
                p.values,
                v.rows(),
                v.cols(),
                v.col_stride(),
            )),
            // Unreachable (an index below `count`, a descriptor `CViews::new`
            // checked); an empty view rather than a panic.
            _ => View::Dense(Dense::from_validated(&[], 0, 0, 0)),
        }
    }

    fn shape(&self, i: usize) -> ViewShape {
        // SAFETY: `CViews::new` validated this descriptor (its `col_ptr` has
        // `cols + 1` readable entries), so `shape_of` succeeds.
        let s = self.views.get(i).map(|v| unsafe { shape_of(v) });
        s.and_then(Result::ok).unwrap_or(NO_SHAPE)
    }
}

/// Shapes of a C view array for a workspace query, after the validation the
/// call runs on the same descriptors ([`CViews::new`]: pointers, dense strides,
/// the whole CSC structure; not the values), so a query accepts exactly the
/// descriptors its call accepts.
pub(crate) unsafe fn shapes<'a, D: ViewDesc + 'a>(
    views: *const D,
    n_views: usize,
) -> Result<impl Iterator<Item = ViewShape> + Clone + 'a, Error> {
    c_unsafe!({
        let views: &'a [D] = CViews::new(views, n_views)?.views;
        Ok(views.iter().map(|v| shape_of(v).unwrap_or(NO_SHAPE)))
    })
}

/// [`read_views`] saying where: the array is argument `pos` and its count
/// `pos + 1` (the order of every entry point: `views, n_views`); a refused
/// descriptor's view (row and column for a malformed CSC structure) comes
/// with it.
pub(crate) unsafe fn read_views_at<'a, D: ViewDesc>(
    views: *const D,
    n_views: usize,
    pos: u32,
) -> Result<(CViews<'a, D>, usize), Located> {
    c_unsafe!({
        first_at(Error::ZeroDimension, &[(n_views == 0, pos + 1)])?;
        let vs = CViews::located(views, n_views).arg(pos)?;
        let n = vs.shape(0).cols;
        Ok((vs, n))
    })
}

/// The validated views and their item count ([`read_views_at`], not saying where).
pub(crate) unsafe fn read_views<'a, D: ViewDesc>(
    views: *const D,
    n_views: usize,
) -> Result<(CViews<'a, D>, usize), Error> {
    c_unsafe!(read_views_at(views, n_views, 0)).map_err(Error::from)
}

/// The `k × n` encoding buffer (argument `pos.0`) and the workspace (`work`,
/// argument `pos.1`).
pub(crate) unsafe fn outputs<'a, T>(
    v: *mut T,
    k: usize,
    n: usize,
    (work, work_bytes): (*mut c_void, usize),
    pos: (u32, u32),
) -> Result<(&'a mut [T], &'a mut [u8]), Located> {
    c_unsafe!(Ok((
        out_ab(v, k, n).arg(pos.0)?,
        work_of(work, work_bytes).arg(pos.1)?
    )))
}

/// The arguments a solver's C signature ends with, in their order: `work`,
/// `work_bytes`, `progress`, `user`, `report`.
pub(crate) type Tail = (
    *mut c_void,
    usize,
    mvnmf_progress_fn,
    *mut c_void,
    *mut mvnmf_report,
);

/// Adapts the C callback to a Rust monitor.
pub(crate) fn with_monitor<R>(
    progress: mvnmf_progress_fn,
    user: *mut c_void,
    f: impl FnOnce(Option<crate::steps::Monitor<'_>>) -> R,
) -> R {
    match progress {
        None => f(None),
        Some(cb) => {
            let mut m = |p: &Progress| {
                let cp = mvnmf_progress {
                    iter: p.iter,
                    phase: CField::from_rust(&p.phase),
                    objective: p.objective.into(),
                    fraction: p.fraction,
                };
                // SAFETY: the caller supplied this function pointer for this purpose.
                if unsafe { cb(&cp, user) } != 0 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            };
            f(Some(&mut m))
        }
    }
}

/// Writes `v` to an optional output: `*p = v`, nothing when `p` is NULL.
pub(crate) unsafe fn put_opt<T>(p: *mut T, v: T) {
    if !p.is_null() {
        c_unsafe!(*p = v);
    }
}

/// Writes the report (if asked) and maps the stop reason to a status.
pub(crate) unsafe fn finish(r: Report, report: *mut mvnmf_report) -> Result<mvnmf_status, Error> {
    c_unsafe!({
        write_report(report, r.into());
        Ok(if r.stop == Stop::Cancelled {
            mvnmf_status::Cancelled
        } else {
            mvnmf_status::Ok
        })
    })
}

/// Writes `r` to `*report` (nothing when NULL) with every byte defined: the
/// struct has 4 padding bytes after `dead_views`, which a typed store leaves as
/// they were (issue 31, E7): zero them all, then store the fields one by one.
///
/// # Safety
/// `report` is NULL or valid for writing one `mvnmf_report`.
unsafe fn write_report(report: *mut mvnmf_report, r: mvnmf_report) {
    if report.is_null() {
        return;
    }
    // SAFETY: the caller guarantees `report` is valid for one write; every
    // pointer below is a field of it.
    unsafe {
        core::ptr::write_bytes(report.cast::<u8>(), 0, core::mem::size_of::<mvnmf_report>());
        macro_rules! put {
            ($($f:ident),*) => { $(core::ptr::addr_of_mut!((*report).$f).write(r.$f);)* };
        }
        put!(iterations, stop, dead_views, initial, objective);
        put!(where_arg, where_view, where_row, where_col);
    }
}

/// The body of every `*_workspace` entry point: `bytes` is required, `size`
/// validates what it reads and computes the size, which is written only on
/// success; a panic becomes `MVNMF_STATUS_INTERNAL`.
pub(crate) unsafe fn query(
    bytes: *mut usize,
    size: impl FnOnce() -> Result<usize, Error>,
) -> mvnmf_status {
    entry!({
        require!(bytes);
        let b = size()?;
        *bytes = b;
        Ok(mvnmf_status::Ok)
    })
}
