//! Errors: one stable code per class of bad input (DESIGN §1).
//!
//! The numeric values are part of the C ABI (`mvnmf_status`): they never change,
//! and a retired value stays reserved.

use core::fmt;

/// The one list of statuses: for each, its doc, name, stable code and
/// message. It gives [`Error`], [`Error::ALL`], [`Error::code`],
/// [`Error::from_code`] and both messages, and (`src/ffi/types.rs`, through
/// `error_list!`) the C enum `mvnmf_status` with the same docs and its
/// conversion from [`Error`]: the docs speak to Rust and C callers alike.
macro_rules! errors {
    ($($(#[$doc:meta])* $name:ident = $code:literal, $msg:literal;)*) => {
        /// What was wrong. Each variant has a stable code ([`Error::code`]) and a static
        /// message ([`Error::message`]); the C ABI returns the same codes.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Error {
            $($(#[$doc])* $name,)*
        }

        impl Error {
            /// Every variant, in code order (for tests and tables).
            pub const ALL: [Error; [$($code),*].len()] = [$(Error::$name),*];

            /// The stable status code (the C enum `mvnmf_status`; 0 is success).
            pub const fn code(self) -> u32 {
                match self {
                    $(Error::$name => $code,)*
                }
            }

            /// The message as a NUL-terminated string (what `mvnmf_status_message`
            /// returns to C): the one table of messages.
            pub const fn c_message(self) -> &'static str {
                match self {
                    $(Error::$name => concat!($msg, "\0"),)*
                }
            }
        }
    };
}

/// The list itself: `error_list!(m)` calls `m!` with it (the callback
/// pattern: `errors!` here, the C status conversions in `src/ffi/status.rs`).
macro_rules! error_list {
    ($m:ident) => {
        $m! {
            /// A required pointer was NULL (C ABI only).
            NullPointer = 1,
                "a required pointer argument is NULL";
            /// A dimension is zero (rows, columns, number of views).
            ZeroDimension = 2,
                "a dimension (rows, items or number of views) is zero";
            /// Dimensions disagree (views with different numbers of items, a factor or
            /// output buffer whose length is not the documented size).
            DimensionMismatch = 3,
                "dimensions disagree (views with different item counts, or a buffer not of its documented size)";
            /// A size computation (`rows*cols`, workspace bytes, ...) overflows `usize` (`size_t`).
            SizeOverflow = 4,
                "a size computation overflows (rows*cols or workspace bytes)";
            /// A buffer is too short for its shape and stride (`col_stride < rows`, or a
            /// data slice shorter than `(cols-1)*col_stride + rows`).
            BufferTooShort = 5,
                "a buffer is too short for its shape and stride (col_stride < rows?)";
            /// The rank `K` is zero.
            BadRank = 6,
                "the rank K must be at least 1";
            /// The model needs nonnegative data and a value is negative.
            NegativeInput = 7,
                "the model needs nonnegative input and a value is negative";
            /// A value is NaN or infinite.
            NonFiniteInput = 8,
                "an input value is NaN or infinite";
            /// A label is out of range: a class label, or a byte of a 0/1 flag array (relevance
            /// flags, multi-label targets and decisions, item masks) that is neither 0 nor 1.
            BadLabel = 9,
                "a label is out of range";
            /// Too few labeled items for what was asked (e.g. neighbourhood sizes).
            TooFewLabeled = 10,
                "too few labeled items for the requested neighbourhoods";
            /// A parameter is out of its range (negative tolerance or ε, `vmax <= 0`,
            /// an unknown enum value, ...).
            BadParameter = 11,
                "a parameter is out of range (negative tol or eps, vmax <= 0, unknown option value)";
            /// A CSC matrix is malformed (`col_ptr` not starting at 0 or decreasing,
            /// row indices out of range or not strictly increasing within a column).
            MalformedCsc = 12,
                "malformed CSC matrix (col_ptr must start at 0 and not decrease; row indices in range and strictly increasing per column)";
            /// The workspace is smaller than its query said.
            WorkspaceTooSmall = 13,
                "the workspace is smaller than the workspace query returned";
            /// The progress callback asked to stop; the outputs hold the last complete
            /// iterate (a C status: the Rust API reports it as `Stop::Cancelled` in an
            /// `Ok` report).
            Cancelled = 14,
                "stopped by the progress callback; outputs hold the last complete iterate";
            /// An internal invariant failed: a bug in mvnmf (a checked read that
            /// validation should have made impossible, or a panic caught at the C
            /// boundary). Please report it. Also the factorization solvers'
            /// finite-output check: a solver whose objective or returned factors are
            /// not finite never returns OK but this, with the outputs holding the
            /// iterate where it was found (the magnitude rules make it impossible).
            Internal = 15,
                "internal error: an invariant of mvnmf failed (a bug; please report it)";
            /// A retrieval query is all zero: no term of the vocabulary to rank by
            /// (e.g. a keyword query whose words are all outside the vocabulary).
            EmptyQuery = 16,
                "a query is all zero: none of its terms is in the vocabulary";
            /// The data are too large for the factorization solvers: `½ Σ_v ‖X^(v)‖²_F`
            /// above `2^999` (about `5e300`, i.e. entries beyond about `1e150`), where
            /// the objective would not be representable. Divide the views by a common
            /// factor.
            InputTooLarge = 17,
                "the data are too large for the solver (half the sum of squares of all views above 2^999, about 5e300): divide the views by a common factor";
            /// The host's `parallel_for` (`mvnmf_parallel`) did not run every task
            /// exactly once: the outputs may be incomplete. Check the callback.
            ParallelFor = 18,
                "the parallel_for callback did not run every task exactly once: the outputs may be incomplete";
            /// A distributed run: another rank refused its input (or
            /// the ranks disagree on the shapes: rank, views, features, classes), so
            /// every rank stops before writing anything, or another rank's
            /// communication callback failed; that rank's status says why. Every rank
            /// leaves after the same call.
            PeerFailed = 19,
                "another rank of a distributed run refused its input or its communication failed, or the ranks disagree on the shapes; every rank left after the same call";
            /// A distributed run: this rank's communication callback reported a
            /// failure or did not deliver (a receive buffer left unwritten, status
            /// words or counts that no peer sent); the others return `PeerFailed`
            /// (`MVNMF_STATUS_PEER_FAILED`) after the same call. Before the start
            /// nothing is written; later the outputs hold a partial iterate.
            CommFailed = 20,
                "a communication callback of a distributed run failed or did not deliver on this rank; every rank left after the same call";
        }
    };
}
pub(crate) use error_list;

error_list!(errors);

impl Error {
    /// A static, human-readable message.
    pub fn message(self) -> &'static str {
        let m = self.c_message();
        &m[..m.len() - 1]
    }

    /// The error with this status code (`None` for 0, success, and unknown codes).
    pub fn from_code(code: u32) -> Option<Error> {
        Error::ALL.iter().copied().find(|e| e.code() == code)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}

/// Where a refusal points (issue 33): the offending argument's 1-based
/// position, as LAPACK's `INFO = -i` (0: none), and for data the view, row and
/// column of the first bad entry (0-based indices into the caller's arrays;
/// `usize::MAX` where they do not apply). The C ABI writes it to the
/// `where_*` fields of `mvnmf_report` when a call is refused.
///
/// [`Error`] stays a plain code; the Rust functions that check data say where
/// on demand ([`crate::data::locate_bad`], [`crate::data::locate_csc`]).
/// cbindgen:ignore
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Where {
    /// 1-based position of the offending argument; 0 when none applies.
    pub arg: u32,
    /// The view (or the factor of view `view`), 0-based; `usize::MAX`: not applicable.
    pub view: usize,
    /// The row of the first bad entry, 0-based; `usize::MAX`: not applicable.
    pub row: usize,
    /// The column of the first bad entry, 0-based; `usize::MAX`: not applicable.
    pub col: usize,
}

/// cbindgen:ignore
impl Where {
    /// Nothing located.
    pub const NONE: Where = Where {
        arg: 0,
        view: usize::MAX,
        row: usize::MAX,
        col: usize::MAX,
    };

    /// Argument `pos` (1-based), nothing inside it.
    pub const fn arg(pos: u32) -> Where {
        Where {
            arg: pos,
            ..Where::NONE
        }
    }

    /// View `view` of an argument not yet named (see [`Where::or_arg`]).
    pub const fn view(view: usize) -> Where {
        Where {
            view,
            ..Where::NONE
        }
    }

    /// Entry `(row, col)` of view `view` of an argument not yet named.
    pub const fn entry(view: usize, row: usize, col: usize) -> Where {
        Where {
            arg: 0,
            view,
            row,
            col,
        }
    }

    /// `self` with the argument `pos` when none is set yet (the innermost
    /// reader that knew the argument wins).
    pub const fn or_arg(self, pos: u32) -> Where {
        if self.arg == 0 {
            Where { arg: pos, ..self }
        } else {
            self
        }
    }
}

impl fmt::Display for Where {
    /// `argument 1, view 2, row 3, column 4` (the parts that apply; empty for [`Where::NONE`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut sep = "";
        if self.arg != 0 {
            write!(f, "argument {}", self.arg)?;
            sep = ", ";
        }
        for (name, i) in [("view", self.view), ("row", self.row), ("column", self.col)] {
            if i != usize::MAX {
                write!(f, "{sep}{name} {i}")?;
                sep = ", ";
            }
        }
        Ok(())
    }
}

/// An [`Error`] and [`Where`] it points: what the C ABI's readers return, so
/// that a refusal's report can say which argument, view, row and column.
/// cbindgen:ignore
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Located {
    /// What was wrong.
    pub error: Error,
    /// Where.
    pub at: Where,
}

impl Located {
    /// `error` at `at`.
    pub const fn new(error: Error, at: Where) -> Located {
        Located { error, at }
    }
}

impl From<Error> for Located {
    fn from(error: Error) -> Located {
        Located {
            error,
            at: Where::NONE,
        }
    }
}

impl From<Located> for Error {
    fn from(l: Located) -> Error {
        l.error
    }
}

impl fmt::Display for Located {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.error.message())?;
        if self.at != Where::NONE {
            write!(f, " ({})", self.at)?;
        }
        Ok(())
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Located {}

/// Checked sub-slices where validation already guarantees the range: a miss
/// is [`Error::Internal`] (a bug), never a panic (issue 15: no panic path).
/// The same bounds check as `&s[r]`, with the error returned instead.
pub(crate) trait Part<T> {
    /// `&self[r]`, or [`Error::Internal`].
    fn part<R: core::slice::SliceIndex<[T], Output = [T]>>(&self, r: R) -> Result<&[T], Error>;
    /// `&mut self[r]`, or [`Error::Internal`].
    fn part_mut<R: core::slice::SliceIndex<[T], Output = [T]>>(
        &mut self,
        r: R,
    ) -> Result<&mut [T], Error>;
    /// `self.copy_from_slice(src)`, or [`Error::Internal`] when the lengths differ.
    fn copy_checked(&mut self, src: &[T]) -> Result<(), Error>
    where
        T: Copy;
    /// `self[i]`, or [`Error::Internal`].
    fn at(&self, i: usize) -> Result<T, Error>
    where
        T: Copy;
    /// `&mut self[i]`, or [`Error::Internal`].
    fn at_mut(&mut self, i: usize) -> Result<&mut T, Error>;
}

impl<T> Part<T> for [T] {
    #[inline]
    fn part<R: core::slice::SliceIndex<[T], Output = [T]>>(&self, r: R) -> Result<&[T], Error> {
        self.get(r).ok_or(Error::Internal)
    }
    #[inline]
    fn part_mut<R: core::slice::SliceIndex<[T], Output = [T]>>(
        &mut self,
        r: R,
    ) -> Result<&mut [T], Error> {
        self.get_mut(r).ok_or(Error::Internal)
    }
    #[inline]
    fn copy_checked(&mut self, src: &[T]) -> Result<(), Error>
    where
        T: Copy,
    {
        if self.len() != src.len() {
            return Err(Error::Internal);
        }
        self.copy_from_slice(src);
        Ok(())
    }
    #[inline]
    fn at(&self, i: usize) -> Result<T, Error>
    where
        T: Copy,
    {
        self.get(i).copied().ok_or(Error::Internal)
    }
    #[inline]
    fn at_mut(&mut self, i: usize) -> Result<&mut T, Error> {
        self.get_mut(i).ok_or(Error::Internal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_and_in_order() {
        for (i, e) in Error::ALL.iter().enumerate() {
            assert_eq!(e.code() as usize, i + 1, "{e:?}");
            assert_eq!(Error::from_code(0), None);
            assert!(!e.message().is_empty() && !e.message().contains('\0'));
            assert!(e.c_message().ends_with('\0'));
            assert_eq!(Error::from_code(e.code()), Some(*e));
        }
    }

    #[test]
    fn where_says_the_parts_that_apply() {
        extern crate std;
        use std::string::ToString;
        assert_eq!(Where::NONE.to_string(), "");
        assert_eq!(Where::arg(5).to_string(), "argument 5");
        let at = Where::entry(2, 3, 4).or_arg(1).or_arg(7);
        assert_eq!(at.to_string(), "argument 1, view 2, row 3, column 4");
        let l = Located::new(Error::NonFiniteInput, at);
        assert_eq!(
            l.to_string(),
            "an input value is NaN or infinite (argument 1, view 2, row 3, column 4)"
        );
        assert_eq!(Error::from(l), Error::NonFiniteInput);
    }
}
