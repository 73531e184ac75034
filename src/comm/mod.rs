//! The communicator of a run across ranks (issue 19) and its agreement
//! protocol (`comm::protocol`, issue 31 E7): what the distributed fit
//! (`models::dist`) and the distributed neighbour-graph schedule
//! (`graph::dist`) talk through. A base module: the caller's callbacks
//! (`MPI_Allreduce`, `MPI_Alltoallv`, `MPI_Allgatherv` in
//! `examples-c/mpi_fit.c`) behind a trait, no MPI, no threads, no allocation.

pub(crate) mod protocol;

use crate::error::{Error, Part};

/// The communicator of a distributed fit: this rank's number, how many ranks,
/// and a sum over all ranks in place. Every rank calls [`Comm::allreduce`] the
/// same number of times with buffers of the same lengths (the solvers
/// guarantee it once the ranks agree on the shapes), and every rank must
/// receive the same sum (MPI's `MPI_Allreduce` with `MPI_SUM` does in practice;
/// a reduction in a fixed rank order does by construction), since each rank
/// derives the replicated bases from it.
pub trait Comm {
    /// This rank, `0 ≤ rank < ranks`.
    fn rank(&self) -> usize;
    /// Number of ranks (`≥ 1`).
    fn ranks(&self) -> usize;
    /// `buf ← Σ_ranks buf` in place; an `Err` ([`Error::CommFailed`]) ends the fit.
    fn allreduce(&mut self, buf: &mut [f64]) -> Result<(), Error>;

    /// Point to point, every rank at once (`MPI_Alltoallv`): sends
    /// `send_counts[q]` values of `send` (in rank order, the blocks one after
    /// the other) to rank `q`, and receives `recv_counts[q]` values from rank
    /// `q` into `recv` (the same layout). Only graphs with edges between the
    /// ranks' items need it (the halo of `V`); the default refuses
    /// ([`Error::BadParameter`]).
    fn exchange(
        &mut self,
        send: &[f64],
        send_counts: &[usize],
        recv: &mut [f64],
        recv_counts: &[usize],
    ) -> Result<(), Error> {
        let _ = (send, send_counts, recv, recv_counts);
        Err(Error::BadParameter)
    }

    /// Every rank's part, concatenated in rank order, to every rank
    /// (`MPI_Allgatherv`): rank `q` contributes `counts[q]` values (`part` is
    /// this rank's, `counts[rank]` long), and `out` (`Σ counts` long) receives
    /// them one after the other. The distributed graph build streams the items'
    /// columns with it. The default sums `out`, `−0.0` but for this rank's part,
    /// with [`Comm::allreduce`]: the same result (a value plus `−0.0` is that
    /// value; `−0.0` sent becomes `+0.0`, which compares equal), at twice an
    /// all-gather's traffic; a word still `−0.0` afterwards was not delivered
    /// ([`Error::CommFailed`]).
    fn allgather(&mut self, part: &[f64], counts: &[usize], out: &mut [f64]) -> Result<(), Error> {
        allgather_by_sum(self, part, counts, out)
    }
}

/// [`Comm::allgather`] through [`Comm::allreduce`] (the trait's default):
/// `out` zero but for this rank's part, summed over the ranks.
pub(crate) fn allgather_by_sum<C: Comm + ?Sized>(
    comm: &mut C,
    part: &[f64],
    counts: &[usize],
    out: &mut [f64],
) -> Result<(), Error> {
    let rank = comm.rank();
    let at: usize = counts.part(..rank)?.iter().sum();
    if counts.get(rank) != Some(&part.len()) || counts.iter().sum::<usize>() != out.len() {
        return Err(Error::Internal);
    }
    // The other ranks' parts start as −0.0 and this rank's part has no −0.0
    // (`x + 0.0`): `x + (−0.0) = x` exactly, so the sum is every part, and a
    // word still −0.0 afterwards was not delivered (the allreduce did not
    // write its result here: issue 31, E7).
    out.fill(-0.0);
    for (o, &x) in out.part_mut(at..at + part.len())?.iter_mut().zip(part) {
        *o = x + 0.0;
    }
    comm.allreduce(out)?;
    if out.iter().any(|x| x.to_bits() == (-0.0f64).to_bits()) {
        return Err(Error::CommFailed);
    }
    Ok(())
}

/// One rank (no communication): a distributed fit with it is the single-process fit.
#[derive(Clone, Copy, Debug, Default)]
pub struct SingleRank;

impl Comm for SingleRank {
    fn rank(&self) -> usize {
        0
    }
    fn ranks(&self) -> usize {
        1
    }
    fn allreduce(&mut self, _buf: &mut [f64]) -> Result<(), Error> {
        Ok(())
    }
    fn exchange(
        &mut self,
        send: &[f64],
        _send_counts: &[usize],
        recv: &mut [f64],
        _recv_counts: &[usize],
    ) -> Result<(), Error> {
        if send.len() != recv.len() {
            return Err(Error::DimensionMismatch);
        }
        recv.copy_from_slice(send);
        Ok(())
    }
    fn allgather(&mut self, part: &[f64], _counts: &[usize], out: &mut [f64]) -> Result<(), Error> {
        if part.len() != out.len() {
            return Err(Error::DimensionMismatch);
        }
        out.copy_from_slice(part);
        Ok(())
    }
}
