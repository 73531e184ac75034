//! Errors: one stable code per class of bad input (DESIGN §1).
//!
//! The numeric values are part of the C ABI (`mvnmf_status`): they never change,
//! and a retired value stays reserved.

use core::fmt;

/// What was wrong. Each variant has a stable code ([`Error::code`]) and a static
/// message ([`Error::message`]); the C ABI returns the same codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// A required pointer was NULL (C ABI only).
    NullPointer,
    /// A dimension is zero (rows, columns, number of views).
    ZeroDimension,
    /// Dimensions disagree (views with different numbers of items, a factor or
    /// output buffer whose length is not the documented size).
    DimensionMismatch,
    /// A size computation (`rows*cols`, workspace bytes, ...) overflows `usize`.
    SizeOverflow,
    /// A buffer is too short for its shape and stride (`col_stride < rows`, or a
    /// data slice shorter than `(cols-1)*col_stride + rows`).
    BufferTooShort,
    /// The rank `K` is zero.
    BadRank,
    /// The model needs nonnegative data and a value is negative.
    NegativeInput,
    /// A value is NaN or infinite.
    NonFiniteInput,
    /// A label is out of range: a class label, or a byte of a 0/1 flag array (relevance
    /// flags, multi-label targets and decisions, item masks) that is neither 0 nor 1.
    BadLabel,
    /// Too few labeled items for what was asked (e.g. neighbourhood sizes).
    TooFewLabeled,
    /// A parameter is out of its range (negative tolerance or ε, `vmax <= 0`,
    /// an unknown enum value, ...).
    BadParameter,
    /// A CSC matrix is malformed (`col_ptr` not starting at 0 or decreasing,
    /// row indices out of range or not strictly increasing within a column).
    MalformedCsc,
    /// The workspace is smaller than its query said.
    WorkspaceTooSmall,
    /// The monitor asked to stop (C ABI status; the Rust API reports it as
    /// [`crate::Stop::Cancelled`] in an `Ok` report).
    Cancelled,
    /// An internal invariant failed: a bug in mvnmf (a checked read that
    /// validation should have made impossible, or a panic caught at the C
    /// boundary). Please report it. Also the factorization solvers'
    /// finite-output check (issue 31): a solver whose objective or returned
    /// factors are not finite never returns OK but this, with the outputs
    /// holding the iterate where it was found (the magnitude rules make it
    /// impossible; `steps::scale`).
    Internal,
    /// A retrieval query is all zero: no term of the vocabulary to rank by
    /// (e.g. a keyword query whose words are all outside the vocabulary).
    EmptyQuery,
    /// The data are too large for the factorization solvers: `½ Σ_v ‖X^(v)‖²_F`
    /// above `2^999` (about `5e300`, i.e. entries beyond about `1e150`), where
    /// the objective would not be representable (issue 15). Divide the views by a
    /// common factor.
    InputTooLarge,
    /// The host's `parallel_for` did not run every task exactly once (issue
    /// 18): the outputs may be incomplete. Check the callback.
    ParallelFor,
    /// A distributed run (`models::dist`): another rank refused its input (or
    /// the ranks disagree on the shapes: rank, views, features, classes), so
    /// every rank stops before writing anything, or another rank's
    /// communication callback failed; that rank's status says why. Every rank
    /// leaves after the same call.
    PeerFailed,
    /// A distributed run: this rank's communication callback reported a
    /// failure or did not deliver (a receive buffer left unwritten, status
    /// words or counts that no peer sent); the others return [`Error::PeerFailed`]
    /// after the same call. Before the start nothing is written; later the
    /// outputs hold a partial iterate.
    CommFailed,
}

impl Error {
    /// Every variant, in code order (for tests and tables).
    pub const ALL: [Error; 20] = [
        Error::NullPointer,
        Error::ZeroDimension,
        Error::DimensionMismatch,
        Error::SizeOverflow,
        Error::BufferTooShort,
        Error::BadRank,
        Error::NegativeInput,
        Error::NonFiniteInput,
        Error::BadLabel,
        Error::TooFewLabeled,
        Error::BadParameter,
        Error::MalformedCsc,
        Error::WorkspaceTooSmall,
        Error::Cancelled,
        Error::Internal,
        Error::EmptyQuery,
        Error::InputTooLarge,
        Error::ParallelFor,
        Error::PeerFailed,
        Error::CommFailed,
    ];

    /// The stable status code (the C enum `mvnmf_status`; 0 is success).
    pub const fn code(self) -> u32 {
        match self {
            Error::NullPointer => 1,
            Error::ZeroDimension => 2,
            Error::DimensionMismatch => 3,
            Error::SizeOverflow => 4,
            Error::BufferTooShort => 5,
            Error::BadRank => 6,
            Error::NegativeInput => 7,
            Error::NonFiniteInput => 8,
            Error::BadLabel => 9,
            Error::TooFewLabeled => 10,
            Error::BadParameter => 11,
            Error::MalformedCsc => 12,
            Error::WorkspaceTooSmall => 13,
            Error::Cancelled => 14,
            Error::Internal => 15,
            Error::EmptyQuery => 16,
            Error::InputTooLarge => 17,
            Error::ParallelFor => 18,
            Error::PeerFailed => 19,
            Error::CommFailed => 20,
        }
    }

    /// The message as a NUL-terminated string (what `mvnmf_status_message`
    /// returns to C): the one table of messages.
    pub const fn c_message(self) -> &'static str {
        match self {
            Error::NullPointer => "a required pointer argument is NULL\0",
            Error::ZeroDimension => "a dimension (rows, items or number of views) is zero\0",
            Error::DimensionMismatch => {
                "dimensions disagree (views with different item counts, or a buffer not of its documented size)\0"
            }
            Error::SizeOverflow => "a size computation overflows (rows*cols or workspace bytes)\0",
            Error::BufferTooShort => "a buffer is too short for its shape and stride (col_stride < rows?)\0",
            Error::BadRank => "the rank K must be at least 1\0",
            Error::NegativeInput => "the model needs nonnegative input and a value is negative\0",
            Error::NonFiniteInput => "an input value is NaN or infinite\0",
            Error::BadLabel => "a label is out of range\0",
            Error::TooFewLabeled => "too few labeled items for the requested neighbourhoods\0",
            Error::BadParameter => {
                "a parameter is out of range (negative tol or eps, vmax <= 0, unknown option value)\0"
            }
            Error::MalformedCsc => {
                "malformed CSC matrix (col_ptr must start at 0 and not decrease; row indices in range and strictly increasing per column)\0"
            }
            Error::WorkspaceTooSmall => "the workspace is smaller than the workspace query returned\0",
            Error::Cancelled => "stopped by the progress callback; outputs hold the last complete iterate\0",
            Error::Internal => "internal error: an invariant of mvnmf failed (a bug; please report it)\0",
            Error::EmptyQuery => "a query is all zero: none of its terms is in the vocabulary\0",
            Error::ParallelFor => {
                "the parallel_for callback did not run every task exactly once: the outputs may be incomplete\0"
            }
            Error::InputTooLarge => {
                "the data are too large for the solver (half the sum of squares of all views above 2^999, about 5e300): divide the views by a common factor\0"
            }
            Error::PeerFailed => {
                "another rank of a distributed run refused its input or its communication failed, or the ranks disagree on the shapes; every rank left after the same call\0"
            }
            Error::CommFailed => {
                "a communication callback of a distributed run failed or did not deliver on this rank; every rank left after the same call\0"
            }
        }
    }

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
}
