//! The agreement protocol of a run across ranks (issue 31, E7: "no rank is left
//! waiting"): the caller's [`Comm`] with every allreduce carrying [`STATUS`]
//! words, received buffers checked, a failing rank taking part until the
//! next allreduce, the agreement on the inputs before anything is written and
//! the closing agreement; what was passed to the callbacks is counted
//! (`crate::models::dist` turns the counts into its traffic report). The
//! distributed fit and the distributed graph build both run under it.

use super::Comm;
use crate::error::{Error, Part};

/// Words every allreduce of a distributed run carries after its data: a one
/// from every rank (their sum must come back as the number of ranks) and
/// this rank's failure flag (the protocol, module docs).
pub const STATUS: usize = 2;

/// What a receive buffer holds before an exchange or an all-gather (a quiet
/// NaN with a payload): every word a run sends is finite, so a word that is
/// not afterwards (this one among them) was not delivered.
pub(crate) const UNWRITTEN: u64 = 0x7ff8_d157_5e47_1e11;

/// `x` is a whole number in `0 ..= 2^53` (`false` for NaN).
pub(crate) fn whole(x: f64) -> bool {
    (0.0..=9_007_199_254_740_992.0).contains(&x) && (x as u64) as f64 == x
}

/// The caller's communicator under the agreement protocol (module docs), with
/// what was passed to it counted.
///
/// * A callback that fails, an all-gather or exchange that leaves a word of its
///   receive buffer unwritten (or delivers one that is not finite), an allreduce whose
///   status words are not what every rank sent: this rank is *failed* (the
///   error is kept); its received words become zeros, and it goes on taking
///   part in the same calls with the same lengths.
/// * Every allreduce carries [`STATUS`] words: each rank's one and failure
///   flag. A rank that sent a failure leaves after that call with its error;
///   a rank that receives a nonzero flag sum leaves after it with
///   [`Error::PeerFailed`]; so every rank leaves after the same call.
/// * A failure seen in a call's result continues to the next allreduce (a
///   failed rank's sends stay well-formed: its received garbage is zeros).
/// * [`Counted::settle`] is the closing agreement: every rank that has not
///   left calls it, with its result.
pub(crate) struct Counted<'c, C: ?Sized> {
    pub(crate) comm: &'c mut C,
    pub(crate) calls: u64,
    pub(crate) words: u64,
    pub(crate) ex_calls: u64,
    pub(crate) ex_words: u64,
    pub(crate) ag_calls: u64,
    pub(crate) ag_sent: u64,
    pub(crate) ag_received: u64,
    /// This rank's failure, not yet told to the others.
    pub(crate) failed: Option<Error>,
    /// Left at an agreed failure: no call may follow.
    pub(crate) left: bool,
}

impl<'c, C: Comm + ?Sized> Counted<'c, C> {
    pub(crate) fn new(comm: &'c mut C) -> Self {
        Counted {
            comm,
            calls: 0,
            words: 0,
            ex_calls: 0,
            ex_words: 0,
            ag_calls: 0,
            ag_sent: 0,
            ag_received: 0,
            failed: None,
            left: false,
        }
    }

    /// Records this rank's failure (the first one is kept).
    pub(crate) fn fail(&mut self, e: Error) {
        if self.failed.is_none() {
            self.failed = Some(e);
        }
    }

    /// A received buffer: `Ok` delivered and complete; otherwise this rank
    /// fails and the buffer becomes zeros.
    pub(crate) fn received(&mut self, r: Result<(), Error>, buf: &mut [f64]) {
        let lost = match r {
            Err(Error::BadParameter) => Some(Error::BadParameter),
            Err(_) => Some(Error::CommFailed),
            // Every word a run sends is finite: one that is not (the
            // sentinel among them) was not delivered.
            Ok(()) if buf.iter().any(|x| !x.is_finite()) => Some(Error::CommFailed),
            Ok(()) => None,
        };
        if let Some(e) = lost {
            self.fail(e);
            buf.fill(0.0);
        }
    }

    pub(crate) fn allgather(
        &mut self,
        part: &[f64],
        counts: &[usize],
        out: &mut [f64],
    ) -> Result<(), Error> {
        self.ag_calls += 1;
        self.ag_sent += part.len() as u64;
        self.ag_received += out.len() as u64;
        out.fill(f64::from_bits(UNWRITTEN));
        let r = self.comm.allgather(part, counts, out);
        self.received(r, out);
        Ok(())
    }

    /// `buf ← Σ_ranks buf` with the agreement: the last [`STATUS`] words of
    /// `buf` are the protocol's. `Err` only when every rank leaves after this
    /// call (this rank's own error, or [`Error::PeerFailed`]).
    pub(crate) fn sum(&mut self, buf: &mut [f64]) -> Result<(), Error> {
        self.calls += 1;
        self.words += buf.len() as u64;
        let ranks = self.comm.ranks() as f64;
        let at = buf.len().checked_sub(STATUS).ok_or(Error::Internal)?;
        let mine = self.failed;
        buf.part_mut(at..)?
            .copy_checked(&[1.0, if mine.is_some() { 1.0 } else { 0.0 }])?;
        let r = self.comm.allreduce(buf);
        if let Some(e) = mine {
            self.left = true;
            return Err(e);
        }
        let flags = match (r, buf.part(at..)?) {
            (Ok(()), &[ones, f]) if ones == ranks && whole(f) && f <= ranks => f,
            _ => {
                // This rank cannot tell what the others received: it goes on
                // to the next allreduce, where it tells them.
                self.fail(Error::CommFailed);
                buf.fill(0.0);
                return Ok(());
            }
        };
        if flags != 0.0 {
            self.left = true;
            return Err(Error::PeerFailed);
        }
        Ok(())
    }

    /// An agreement on `local` alone (a decision taken from received data).
    pub(crate) fn checkpoint(&mut self, local: Result<(), Error>) -> Result<(), Error> {
        if let Err(e) = local {
            self.fail(e);
        }
        self.sum(&mut [0.0; STATUS])
    }

    /// The closing agreement of a run whose body returned `r`: unless every
    /// rank has already left, one allreduce of `buf` (zeroed; its length the
    /// same as that of the call the others may be making instead, module
    /// docs) with this rank's outcome; `Ok` on every rank or on none.
    pub(crate) fn settle<T>(&mut self, r: Result<T, Error>, buf: &mut [f64]) -> Result<T, Error> {
        if self.left {
            return r;
        }
        if let Err(e) = &r {
            self.fail(*e);
        }
        buf.fill(0.0);
        self.sum(buf)?;
        self.left = true;
        match self.failed {
            // The closing call itself failed here: nothing follows it, so
            // every rank leaves; the others may have succeeded.
            Some(e) => Err(e),
            None => r,
        }
    }

    pub(crate) fn exchange(
        &mut self,
        send: &[f64],
        send_counts: &[usize],
        recv: &mut [f64],
        recv_counts: &[usize],
    ) -> Result<(), Error> {
        self.ex_calls += 1;
        self.ex_words += send.len() as u64;
        recv.fill(f64::from_bits(UNWRITTEN));
        let r = self.comm.exchange(send, send_counts, recv, recv_counts);
        self.received(r, recv);
        Ok(())
    }
}

/// The longest configuration of a distributed entry point (the fit's, 25
/// words; `models::dist` checks its own against it).
pub(crate) const MAX_CONFIG: usize = 25;

/// The ranks agree before anything is written (module docs): rank 0's
/// configuration is broadcast and compared, then every rank votes. Returns
/// this rank's error, [`Error::PeerFailed`] when another rank failed or the
/// configurations differ, or `Ok` on every rank.
pub(crate) fn agree<C: Comm + ?Sized, const L: usize>(
    cm: &mut Counted<'_, C>,
    cfg: &[f64; L],
    local: Result<(), Error>,
) -> Result<(), Error> {
    let mut buf = [0.0; MAX_CONFIG + STATUS];
    let b = buf.part_mut(..L + STATUS)?;
    if cm.comm.rank() == 0 {
        b.part_mut(..L)?.copy_checked(cfg)?;
    }
    if let Err(e) = local {
        cm.fail(e);
    }
    // A rank that refused its input leaves after this call, and so does
    // every other.
    cm.sum(b)?;
    let same = b.iter().zip(cfg).all(|(x, y)| x.to_bits() == y.to_bits());
    cm.checkpoint(if same { Ok(()) } else { Err(Error::PeerFailed) })
}

/// `models::dist::refuse` for an entry point whose agreement compares `L` words.
pub(crate) fn refuse_as<C: Comm + ?Sized, const L: usize>(comm: &mut C, e: Error) -> Error {
    if comm.ranks() == 0 || comm.rank() >= comm.ranks() {
        return Error::BadParameter;
    }
    let mut cm = Counted::new(comm);
    match agree(&mut cm, &[f64::NAN; L], Err(e)) {
        Err(x) => x,
        Ok(()) => Error::Internal,
    }
}
