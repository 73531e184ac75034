//! The workspace model: requirements as values, scratch carved from caller bytes.
//!
//! Every routine `foo` that needs scratch memory has a twin `foo_workspace(...)`
//! that returns a [`WorkReq`] computed from dimensions and options alone.
//! Requirements compose like faer's `StackReq`: [`WorkReq::all_of`] for
//! buffers alive at the same time, [`WorkReq::any_of`] for phases that reuse the
//! same memory. Arithmetic is checked: an overflow is the value
//! [`WorkReq::OVERFLOW`], which turns into [`Error::SizeOverflow`] when asked for
//! its byte count, never a panic or a wrap.
//!
//! Every buffer is rounded up to [`ALIGN`] bytes, and [`WorkReq::bytes`] adds
//! `ALIGN` bytes of slack, so the caller may pass a byte buffer of any
//! alignment. The routine carves it with a [`Stack`].

use crate::error::{Error, Part};
use crate::par::Parallel;

/// Alignment (bytes) of every buffer carved from a workspace: one cache line.
pub const ALIGN: usize = 64;

/// A workspace requirement: a number of bytes, or "overflowed".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkReq {
    bytes: Option<usize>,
}

impl WorkReq {
    /// Nothing needed.
    pub const EMPTY: WorkReq = WorkReq { bytes: Some(0) };
    /// A size computation overflowed.
    pub const OVERFLOW: WorkReq = WorkReq { bytes: None };

    /// Room for `n` values of `T`, rounded up to [`ALIGN`].
    pub fn new<T>(n: usize) -> WorkReq {
        let bytes = n
            .checked_mul(core::mem::size_of::<T>())
            .and_then(|b| b.checked_add(ALIGN - 1))
            .map(|b| b / ALIGN * ALIGN);
        WorkReq { bytes }
    }

    /// Room for a `rows × cols` matrix of `T` (checked product).
    pub fn matrix<T>(rows: usize, cols: usize) -> WorkReq {
        match rows.checked_mul(cols) {
            Some(n) => WorkReq::new::<T>(n),
            None => WorkReq::OVERFLOW,
        }
    }

    /// Buffers alive at the same time: the sum.
    pub fn all_of(reqs: &[WorkReq]) -> WorkReq {
        reqs.iter().fold(WorkReq::EMPTY, |a, &b| a.and(b))
    }

    /// Phases that reuse the same memory: the maximum.
    pub fn any_of(reqs: &[WorkReq]) -> WorkReq {
        reqs.iter().fold(WorkReq::EMPTY, |a, &b| a.or(b))
    }

    /// `self` and `other` alive together.
    pub fn and(self, other: WorkReq) -> WorkReq {
        match (self.bytes, other.bytes) {
            (Some(a), Some(b)) => WorkReq {
                bytes: a.checked_add(b),
            },
            _ => WorkReq::OVERFLOW,
        }
    }

    /// `self` or `other`, one after the other, in the same memory.
    pub fn or(self, other: WorkReq) -> WorkReq {
        match (self.bytes, other.bytes) {
            (Some(a), Some(b)) => WorkReq {
                bytes: Some(a.max(b)),
            },
            _ => WorkReq::OVERFLOW,
        }
    }

    /// `n` copies of `self` alive at once: one per task of a parallel region
    /// (`crate::par`), each [`WorkReq::slot`] bytes.
    pub fn times(self, n: usize) -> WorkReq {
        WorkReq {
            bytes: self.bytes.and_then(|b| b.max(ALIGN).checked_mul(n)),
        }
    }

    /// The bytes of one copy in [`WorkReq::times`]: a multiple of [`ALIGN`], at
    /// least `ALIGN`.
    pub fn slot(self) -> Result<usize, Error> {
        self.bytes.map(|b| b.max(ALIGN)).ok_or(Error::SizeOverflow)
    }

    /// The byte count a caller must provide (alignment slack included), or
    /// [`Error::SizeOverflow`] — also when it is beyond `isize::MAX`, the
    /// largest buffer Rust (and the C ABI's calls) can take: a query never
    /// names a size its call could not be given (issue 31, E8).
    pub fn bytes(self) -> Result<usize, Error> {
        self.bytes
            .and_then(|b| b.checked_add(ALIGN))
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or(Error::SizeOverflow)
    }

    /// `Ok(())` when a buffer of `len` bytes is enough, else
    /// [`Error::WorkspaceTooSmall`] (or [`Error::SizeOverflow`]).
    pub fn check(self, len: usize) -> Result<(), Error> {
        if len >= self.bytes()? {
            Ok(())
        } else {
            Err(Error::WorkspaceTooSmall)
        }
    }
}

/// Scratch memory carved from a caller's byte buffer, front to back.
///
/// [`Stack::take`] hands out aligned, zero-initialised-or-not (contents are
/// unspecified) slices that live as long as the buffer; [`Stack::rest`]
/// reborrows the remainder for a phase whose buffers are dropped afterwards
/// (the `any_of` pattern).
pub struct Stack<'a> {
    buf: &'a mut [u8],
    par: Parallel,
}

impl<'a> Stack<'a> {
    /// Starts at the first [`ALIGN`]-aligned byte of `buf`.
    pub fn new(buf: &'a mut [u8]) -> Stack<'a> {
        let off = buf.as_ptr().align_offset(ALIGN).min(buf.len());
        let (_, rest) = buf.split_at_mut(off);
        Stack {
            buf: rest,
            par: Parallel::Serial,
        }
    }

    /// The same stack, whose parallel regions run on `par` (the products and
    /// steps that split their work, `crate::linalg::par`; the results do not
    /// depend on it).
    pub fn with_par(mut self, par: Parallel) -> Stack<'a> {
        self.par = par;
        self
    }

    /// Who runs this stack's parallel regions.
    pub fn par(&self) -> Parallel {
        self.par
    }

    /// Bytes left.
    pub fn remaining(&self) -> usize {
        self.buf.len()
    }

    /// `n` values of `T` (`T`'s alignment must divide [`ALIGN`]); the contents
    /// are whatever the buffer held. The slice takes a multiple of [`ALIGN`]
    /// bytes, as [`WorkReq::new`] counts it.
    pub fn take<T: bytemuck::Pod>(&mut self, n: usize) -> Result<&'a mut [T], Error> {
        let bytes = n
            .checked_mul(core::mem::size_of::<T>())
            .ok_or(Error::SizeOverflow)?;
        let rounded = bytes.checked_add(ALIGN - 1).ok_or(Error::SizeOverflow)? / ALIGN * ALIGN;
        if rounded > self.buf.len() {
            return Err(Error::WorkspaceTooSmall);
        }
        let buf = core::mem::take(&mut self.buf);
        let (head, tail) = buf.split_at_mut(rounded);
        self.buf = tail;
        let head = head.part_mut(..bytes)?;
        bytemuck::try_cast_slice_mut(head).map_err(|_| Error::Internal)
    }

    /// A matrix-sized buffer (`rows*cols` values, checked).
    pub fn take_matrix<T: bytemuck::Pod>(
        &mut self,
        rows: usize,
        cols: usize,
    ) -> Result<&'a mut [T], Error> {
        self.take(rows.checked_mul(cols).ok_or(Error::SizeOverflow)?)
    }

    /// `n` scratch buffers of `req` each ([`WorkReq::times`]), one per task of
    /// a parallel region: hand them to the tasks with
    /// [`crate::par::Parallel::run_items`] and make each a [`Stack::new`].
    pub fn take_slots(&mut self, n: usize, req: WorkReq) -> Result<Slots<'a>, Error> {
        let per = req.slot()?;
        let slab = self.take::<u8>(per.checked_mul(n).ok_or(Error::SizeOverflow)?)?;
        Ok(Slots { rest: slab, per })
    }

    /// All remaining bytes, as a plain buffer (for a routine that carves its
    /// own workspace from a byte slice).
    pub fn take_rest(&mut self) -> &'a mut [u8] {
        core::mem::take(&mut self.buf)
    }

    /// The remainder as a stack of its own, for one phase.
    pub fn rest(&mut self) -> Stack<'_> {
        Stack {
            buf: &mut *self.buf,
            par: self.par,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compose_and_overflow() {
        let a = WorkReq::new::<f64>(3); // 24 -> 64
        let b = WorkReq::new::<f64>(9); // 72 -> 128
        assert_eq!(WorkReq::all_of(&[a, b]).bytes().unwrap(), 192 + ALIGN);
        assert_eq!(WorkReq::any_of(&[a, b]).bytes().unwrap(), 128 + ALIGN);
        assert_eq!(WorkReq::matrix::<f64>(usize::MAX, 2), WorkReq::OVERFLOW);
        assert_eq!(
            WorkReq::new::<f64>(usize::MAX / 4).bytes(),
            Err(Error::SizeOverflow)
        );
        assert_eq!(a.and(WorkReq::OVERFLOW).bytes(), Err(Error::SizeOverflow));
        assert_eq!(WorkReq::EMPTY.bytes().unwrap(), ALIGN);
    }

    #[test]
    fn any_alignment_works() {
        let req = WorkReq::all_of(&[WorkReq::new::<f64>(5), WorkReq::new::<usize>(7)]);
        let need = req.bytes().unwrap();
        let mut raw = [0u8; 512];
        for shift in 0..ALIGN {
            let buf = &mut raw[shift..shift + need];
            let mut st = Stack::new(buf);
            let x: &mut [f64] = st.take(5).unwrap();
            let y: &mut [usize] = st.take(7).unwrap();
            x.fill(1.0);
            y.fill(2);
            assert_eq!(x.as_ptr() as usize % ALIGN, 0);
            // one byte short fails cleanly
            let buf = &mut raw[shift..shift + need - 1];
            let mut st = Stack::new(buf);
            let r1 = st.take::<f64>(5);
            let ok = r1.is_ok() && st.take::<usize>(7).is_ok();
            // With less than the slack used, it can still fit; never panics.
            let _ = ok;
        }
    }

    #[test]
    fn slots_are_n_pieces_of_the_slot_size() {
        let mut buf = std::vec![0u8; 4096];
        let mut st = Stack::new(&mut buf);
        let req = WorkReq::new::<f64>(5);
        let per = req.slot().unwrap();
        let slots = st.take_slots(3, req).unwrap();
        assert_eq!(slots.len(), 3);
        let lens: std::vec::Vec<usize> = slots.map(|s| s.len()).collect();
        assert_eq!(lens, std::vec![per; 3]);
        assert!(st.take_slots(usize::MAX, req).is_err());
    }
}

/// The scratch slots of [`Stack::take_slots`], `per` bytes each, in order.
/// (A `ChunksMut` would do, but its length divides by a chunk size the
/// compiler cannot see is nonzero inside a zipped iterator: a panic path.)
#[derive(Debug)]
pub struct Slots<'a> {
    rest: &'a mut [u8],
    per: usize,
}

impl<'a> Iterator for Slots<'a> {
    type Item = &'a mut [u8];

    fn next(&mut self) -> Option<&'a mut [u8]> {
        if self.rest.is_empty() {
            return None;
        }
        let at = self.per.clamp(1, self.rest.len());
        let (head, tail) = core::mem::take(&mut self.rest).split_at_mut_checked(at)?;
        self.rest = tail;
        Some(head)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match self.per {
            0 => usize::from(!self.rest.is_empty()),
            p => self.rest.len().div_ceil(p),
        };
        (n, Some(n))
    }
}

impl ExactSizeIterator for Slots<'_> {}
