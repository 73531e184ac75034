//! The C ABI of the approximate graph across ranks with the items sharded
//! (`graph::dist::tge_approx`, issue 30 item 4): `mvnmf_dist_tge_approx` and
//! its workspace query, beside `mvnmf_dist_tge` (the exact rows, `dist.rs`).

use core::ffi::{c_int, c_void};

use super::graph::csr_out;
use super::neighbors::read_ann;
use super::similarity::{any_median, ceta, ckernels, clabels, read_graph};
use super::*;
use crate::comm::allgather_by_sum;
use crate::models::dist::{self, Comm};

/// The C communicator as a [`Comm`] (the callbacks of `mvnmf_dist_comm`).
///
/// The same adapter as `ffi::dist`'s, whose type is private to that file.
struct CComm {
    f: unsafe extern "C" fn(*mut f64, usize, *mut c_void) -> c_int,
    ex: mvnmf_exchange_fn,
    ag: mvnmf_allgather_fn,
    ctx: *mut c_void,
    rank: usize,
    ranks: usize,
}

impl Comm for CComm {
    fn rank(&self) -> usize {
        self.rank
    }
    fn ranks(&self) -> usize {
        self.ranks
    }
    fn allreduce(&mut self, buf: &mut [f64]) -> Result<(), Error> {
        // SAFETY: the caller supplied this function for this purpose; `buf` is
        // a valid, exclusively borrowed slice of `buf.len()` doubles.
        if unsafe { (self.f)(buf.as_mut_ptr(), buf.len(), self.ctx) } == 0 {
            Ok(())
        } else {
            Err(Error::CommFailed)
        }
    }
    fn exchange(
        &mut self,
        send: &[f64],
        send_counts: &[usize],
        recv: &mut [f64],
        recv_counts: &[usize],
    ) -> Result<(), Error> {
        let ex = self.ex.ok_or(Error::NullPointer)?;
        if send_counts.len() != self.ranks
            || recv_counts.len() != self.ranks
            || send_counts.iter().sum::<usize>() != send.len()
            || recv_counts.iter().sum::<usize>() != recv.len()
        {
            return Err(Error::Internal);
        }
        // SAFETY: the caller supplied this function for this purpose; the
        // buffers are valid for the lengths their counts sum to (checked).
        let r = unsafe {
            ex(
                send.as_ptr(),
                send_counts.as_ptr(),
                recv.as_mut_ptr(),
                recv_counts.as_ptr(),
                self.ctx,
            )
        };
        if r == 0 {
            Ok(())
        } else {
            Err(Error::CommFailed)
        }
    }
    fn allgather(&mut self, part: &[f64], counts: &[usize], out: &mut [f64]) -> Result<(), Error> {
        let Some(ag) = self.ag else {
            return allgather_by_sum(self, part, counts, out);
        };
        if counts.len() != self.ranks
            || counts.get(self.rank) != Some(&part.len())
            || counts.iter().sum::<usize>() != out.len()
        {
            return Err(Error::Internal);
        }
        // SAFETY: the caller supplied this function for this purpose; `part`
        // holds `counts[rank]` values and `out` `Σ counts` (checked), `counts`
        // `n_ranks` entries.
        let r = unsafe {
            ag(
                part.as_ptr(),
                part.len(),
                out.as_mut_ptr(),
                counts.as_ptr(),
                self.ctx,
            )
        };
        if r == 0 {
            Ok(())
        } else {
            Err(Error::CommFailed)
        }
    }
}

/// The communicator (required; its `allreduce` too; the rank in range).
///
/// # Safety
/// `c` is NULL or points to a readable `mvnmf_dist_comm` whose callbacks are
/// what their types document.
unsafe fn read_comm(c: *const mvnmf_dist_comm) -> Result<CComm, Error> {
    c_unsafe!({
        if c.is_null() {
            return Err(Error::NullPointer);
        }
        let c = *c;
        let f = c.allreduce.ok_or(Error::NullPointer)?;
        if c.n_ranks == 0 || c.rank >= c.n_ranks {
            return Err(Error::BadParameter);
        }
        Ok(CComm {
            f,
            ex: c.exchange,
            ag: c.allgather,
            ctx: c.ctx,
            rank: c.rank,
            ranks: c.n_ranks,
        })
    })
}

/// Workspace bytes of `mvnmf_dist_tge_approx` on a rank whose views (its items,
/// dense) have these shapes, for `n` items over `n_ranks ≥ 1` ranks with these
/// labels (all `n` items, or NULL as `mvnmf_dist_tge_approx` allows), these
/// graph options and NN-descent options (`ann`; NULL: `mvnmf_ann_params_default()`).
/// `MVNMF_STATUS_BAD_PARAMETER` for 0 ranks, as the call.
///
/// # Safety
/// Every pointer is NULL or valid for the documented number of elements:
/// `views` and `kernels` `n_views`, `labels` `n`, `params`, `ann` and `bytes`
/// one.
#[no_mangle]
pub unsafe extern "C" fn mvnmf_dist_tge_approx_workspace(
    views: *const mvnmf_view,
    n_views: usize,
    kernels: *const mvnmf_kernel,
    labels: *const u32,
    n: usize,
    n_classes: usize,
    n_ranks: usize,
    params: *const mvnmf_graph_params,
    ann: *const mvnmf_ann_params,
    bytes: *mut usize,
) -> mvnmf_status {
    workspace!(bytes, {
        let p = read_graph(params)?;
        let a = read_ann(ann)?;
        let ks = ckernels(kernels, n_views)?;
        let lab = clabels(labels, n, p.kp > 0 || any_median(&ks))?;
        dist::tge_approx_workspace(
            shapes(views, n_views)?,
            &ks,
            n,
            lab,
            n_classes,
            n_ranks,
            &p,
            &a,
        )
    })
}

/// The approximate TGE / kNN graph (`mvnmf_tge_build` with
/// `MVNMF_GRAPH_BUILD_APPROX`) built across ranks with the items sharded:
/// arguments, partition, outputs and errors as `mvnmf_dist_tge` (capacities
/// from `mvnmf_dist_tge_capacity`; `exchange` required, `allgather`
/// recommended), plus the NN-descent options `ann` (NULL:
/// `mvnmf_ann_params_default()`; the same on every rank, agreed before anything
/// is written).
///
/// Each rank holds only its items' columns: NN-descent starts over its own
/// items, takes a fixed sample of every rank's items as remote candidates,
/// then iterates with the lists of its items' remote neighbours and the
/// columns of its items' remote candidates fetched from their ranks a batch at
/// a time (`exchange`); the labeled items' columns are gathered (`allgather`)
/// for the exact same-class and penalty lists and the median bandwidths. With
/// one rank the rows are bitwise `mvnmf_tge_build`'s approximate graph; with
/// several the labeled lists are still the same and the global neighbours are
/// another NN-descent approximation (recall and traffic: `docs/mpi.md`).
///
/// # Safety
/// `comm` points to a readable `mvnmf_dist_comm` whose callbacks are what
/// their types document; every other pointer is NULL or valid for the
/// documented number of elements (`views`, `kernels`, `eta`: `n_views`;
/// `labels`: `n`; the CSR buffers as `mvnmf_csr_buffers` documents for
/// `n_r + 1` rows; `work`: `work_bytes` bytes), and the outputs do not
/// overlap each other, the inputs or the workspace. Every rank calls it at the
/// same time.
#[no_mangle]
pub unsafe extern "C" fn mvnmf_dist_tge_approx(
    comm: *const mvnmf_dist_comm,
    views: *const mvnmf_view,
    n_views: usize,
    kernels: *const mvnmf_kernel,
    eta: *const f64,
    labels: *const u32,
    n: usize,
    n_classes: usize,
    params: *const mvnmf_graph_params,
    ann: *const mvnmf_ann_params,
    affinity: *const mvnmf_csr_buffers,
    penalty: *const mvnmf_csr_buffers,
    affinity_nnz: *mut usize,
    penalty_nnz: *mut usize,
    work: *mut c_void,
    work_bytes: usize,
    traffic: *mut mvnmf_dist_graph_traffic,
) -> mvnmf_status {
    entry!({
        let mut cm = read_comm(comm)?;
        let r = (|| {
            if cm.ex.is_none() || affinity_nnz.is_null() || penalty_nnz.is_null() {
                return Err(Error::NullPointer);
            }
            let p = read_graph(params)?;
            let a = read_ann(ann)?;
            let vs = CViews::new(views, n_views)?;
            let ks = ckernels(kernels, n_views)?;
            let e = ceta(eta, n_views)?;
            let lab = clabels(labels, n, p.kp > 0 || any_median(&ks))?;
            let n_r = vs.shape(0).cols;
            let aff = csr_out(affinity, n_r)?;
            let pen = csr_out(penalty, n_r)?;
            let w = slice_mut(work.cast::<u8>(), work_bytes)?;
            Ok(dist::tge_approx(
                &mut cm,
                &vs,
                &ks,
                e,
                lab,
                (n, n_classes),
                (&p, &a),
                (aff, pen),
                w,
            ))
        })();
        match r {
            // An argument that cannot be read: this rank takes part in the
            // agreement with its error, so that no other rank waits.
            Err(e) => Err(dist::refuse_tge(&mut cm, e)),
            Ok(r) => {
                let r = r?;
                *affinity_nnz = r.nnz.affinity;
                *penalty_nnz = r.nnz.penalty;
                if !traffic.is_null() {
                    *traffic = r.traffic.into();
                }
                Ok(mvnmf_status::Ok)
            }
        }
    })
}
