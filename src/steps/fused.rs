//! The multiplicative U-step of a CSC view fused with its share of the V-step's
//! products (`K ≤ 64`): NMF's hot loop on sparse data, block by block through
//! the sparse kernels of `linalg::sparse`.

use crate::data::{ViewKind, ViewShape};
use crate::error::{Error, Part};
use crate::linalg::mat::{MatMut, MatRef};
use crate::linalg::real::Real;
use crate::linalg::sparse::{
    gather_block, pad_into, padded_width, reduce_partials, scatter_block, scatter_split,
    sparse_split, ut_x_by_columns, Csc, Csr,
};
use crate::linalg::{gemm, gemm_req, gram_par, gram_req};
use crate::par::RowBlocks;
use crate::steps::scale::factor_cap;
use crate::steps::update::mu_step;
use crate::work::{Stack, WorkReq};

/// Rows per block of [`csc_u_step`].
const FUSED_ROWS: usize = 128;

/// Does [`csc_u_step`] apply to a CSC view at rank `k` (`K ≤ 64`)?
pub(crate) fn csc_u_step_applies(k: usize) -> bool {
    padded_width(k).is_some()
}

/// The split of [`csc_u_step`]: `(tasks, rows per task)` over the rows
/// (multiples of [`FUSED_ROWS`]), whether the rows scatter into per-task
/// partial results ([`scatter_split`]: tall views), and `(tasks, columns per
/// task)` for gathering `Q` by columns (the others).
fn splits(shape: ViewShape, k: usize) -> ((usize, usize), bool, (usize, usize)) {
    let dims = (shape.rows, shape.cols, shape.nnz);
    let scatter = scatter_split(dims, k, FUSED_ROWS);
    (
        scatter.unwrap_or_else(|| sparse_split(shape.rows, shape.nnz, k, FUSED_ROWS)),
        scatter.is_some(),
        sparse_split(shape.cols, shape.nnz, k, 8),
    )
}

/// One task's scratch: the blocks `A`, `B`, `U_b`, the padded `U_b` and the
/// block product's workspace, or the task's columns of `Q`.
fn slot_req<T>(shape: ViewShape, k: usize) -> WorkReq {
    let rb = FUSED_ROWS.min(shape.rows);
    let w = padded_width(k).unwrap_or(k);
    let (_, _, (_, cols)) = splits(shape, k);
    WorkReq::all_of(&[
        WorkReq::matrix::<T>(rb, k),
        WorkReq::matrix::<T>(rb, k),
        WorkReq::matrix::<T>(rb, k),
        WorkReq::matrix::<T>(rb, w),
        gemm_req::<T>(rb, k, k),
    ])
    .or(WorkReq::matrix::<T>(cols, k))
}

/// Workspace of [`csc_u_step`] (`None` when it does not apply: dense, or `K > 64`).
pub(crate) fn csc_u_step_req<T>(shape: ViewShape, k: usize) -> Option<WorkReq> {
    let w = padded_width(k)?;
    if shape.kind != ViewKind::Csc {
        return None;
    }
    let ((rt, _), scatter, (ct, _)) = splits(shape, k);
    // Tall views: the tasks' partial results; the others: the padded rows of U.
    let result = if scatter {
        WorkReq::matrix::<T>(shape.cols, w).times(rt)
    } else {
        WorkReq::matrix::<T>(shape.rows, w)
    };
    Some(WorkReq::all_of(&[
        WorkReq::matrix::<T>(shape.cols, w),
        result,
        slot_req::<T>(shape, k)
            .times(rt.max(ct))
            .or(gram_req::<T>(shape.rows, k)),
    ]))
}

/// The multiplicative U-step of a CSC view fused with its share of the V-step's
/// products (`K ≤ 64`), in three parallel phases on the stack's
/// [`crate::Parallel`] (each split by the shape alone: the same bits for
/// every thread count):
///
/// ```text
/// 1. each task, for its rows, block by block of FUSED_ROWS rows b:
///      A = s X_b Vᵀ,  B = U_b G,  U_b ← U_b ∘ (A + ε) ⊘ (B + ε),
///      then the new rows of U: tall views scatter them into the task's
///      partial Uᵀ X (in cache while the block is); the others keep them,
///      padded to stride w, for 2.
/// 2. Q (+)= s Uᵀ X: the partials added in task order (tall views), or each
///      task's columns gathered from the padded rows (the others)
/// 3. P (+)= UᵀU                                             (split over rows)
/// ```
///
/// for `X` (`csr`: row-sorted; `c`: the CSC arrays, the row-sorted entries of
/// `Xᵀ`) and `U` (`m × k` column-major), with `G = V Vᵀ` and `s` the data
/// scale (a power of two, 1 for data of ordinary magnitude; the products are
/// formed, then scaled). The same arithmetic for `U` as the unfused sequence
/// (`x_vt`, GEMM, `mu_step`); `Q` and `P` are those of `ut_x` and `UᵀU` with
/// the new U. `accumulate`: add into `p`, `q` (a later view) instead of
/// overwriting them.
#[allow(clippy::too_many_arguments)]
pub(crate) fn csc_u_step<T: Real>(
    csr: Csr<'_, T>,
    c: &Csc<'_, T>,
    k: usize,
    s: T,
    v: &[T],
    g: &[T],
    u: &mut [T],
    eps: T,
    p: &mut [T],
    q: &mut [T],
    accumulate: bool,
    st: &mut Stack<'_>,
) -> Result<(), Error> {
    let w = padded_width(k).ok_or(Error::Internal)?;
    // The bases' bound (`scale::factor_cap`): the same step as the dense path's.
    let cap = factor_cap::<T>(1);
    let (m, n) = (c.rows, c.cols);
    let shape = ViewShape {
        rows: m,
        cols: n,
        kind: ViewKind::Csc,
        nnz: c.nnz(),
    };
    let (split, scatter, cols) = splits(shape, k);
    let (rt, rows) = split;
    let rb = FUSED_ROWS.min(m);
    let par = st.par();
    let mut st = st.rest();
    let vp: &mut [T] = st.take_matrix(n, w)?;
    // Tall: rt partial results (n × w each); else the padded rows of U (m × w).
    let res: &mut [T] = if scatter {
        st.take_matrix(n * w, rt)?
    } else {
        st.take_matrix(m, w)?
    };
    pad_into(v, n, k, w, vp);
    let vp: &[T] = vp;
    let gm = MatRef::col_major(g, k, k)?;
    {
        let mut ph = st.rest();
        let slots = ph.take_slots(rt, slot_req::<T>(shape, k))?;
        let blocks = RowBlocks::new(u, m, k, rows).ok_or(Error::Internal)?;
        let per_task = if scatter { n * w } else { rows * w };
        let work = blocks.zip(res.chunks_mut(per_task.max(1))).zip(slots);
        par.run_items(work, &|((mut blk, out), slot)| {
            let mut st = Stack::new(slot);
            let a: &mut [T] = st.take_matrix(rb, k)?;
            let b: &mut [T] = st.take_matrix(rb, k)?;
            let ub: &mut [T] = st.take_matrix(rb, k)?;
            let padded: &mut [T] = st.take_matrix(rb, w)?;
            if scatter {
                out.fill(T::ZERO);
            }
            let len = blk.cols[0].len();
            // Nonzero sizes for `step_by` and the chunked iterators below
            // (`m, k ≥ 1`), where the compiler sees them.
            for s0 in (0..len).step_by(rb.max(1)) {
                let r = rb.min(len - s0);
                let i0 = blk.r0 + s0;
                let (Some(a), Some(b), Some(ub)) =
                    (a.get_mut(..r * k), b.get_mut(..r * k), ub.get_mut(..r * k))
                else {
                    return Err(Error::Internal);
                };
                gather_block(csr, (i0, i0 + r), (k, w), vp, a);
                if s != T::ONE {
                    a.iter_mut().for_each(|x| *x *= s);
                }
                for (dst, col) in ub.chunks_exact_mut(r.max(1)).zip(blk.cols.iter().take(k)) {
                    let src = col.part(s0..s0 + r)?;
                    for (d, &x) in dst.iter_mut().zip(src) {
                        *d = x;
                    }
                }
                gemm(
                    T::ONE,
                    MatRef::col_major(ub, r, k)?,
                    gm,
                    T::ZERO,
                    MatMut::col_major(b, r, k)?,
                    &mut st,
                )?;
                // The step in place, then the new rows padded to stride w.
                let mut step_and_pad = |pb: &mut [T]| {
                    let (r1, w1) = (r.max(1), w.max(1));
                    let ab = a.chunks_exact(r1).zip(b.chunks_exact(r1));
                    for (t, (col, (num, den))) in blk.cols.iter_mut().take(k).zip(ab).enumerate() {
                        let Some(ut) = col.get_mut(s0..s0 + r) else {
                            continue;
                        };
                        mu_step(ut, num, den, eps, cap);
                        for (row, &x) in pb.chunks_exact_mut(w1).zip(ut.iter()) {
                            if let Some(d) = row.get_mut(t) {
                                *d = x;
                            }
                        }
                    }
                    for row in pb.chunks_exact_mut(w1) {
                        if let Some(pad) = row.get_mut(k..) {
                            pad.fill(T::ZERO);
                        }
                    }
                };
                if scatter {
                    let pb = padded.part_mut(..r * w)?;
                    step_and_pad(pb);
                    scatter_block(csr, (i0, i0 + r), w, pb, out);
                } else {
                    let pb = out.get_mut(s0 * w..(s0 + r) * w).ok_or(Error::Internal)?;
                    step_and_pad(pb);
                }
            }
            Ok(())
        })?;
    }
    let beta = if accumulate { T::ONE } else { T::ZERO };
    if scatter {
        reduce_partials(res, (n, k, w), rt, (s, beta), q, par)?;
    } else {
        let mut ph = st.rest();
        let slots = ph.take_slots(cols.0, slot_req::<T>(shape, k))?;
        ut_x_by_columns(c, res, (k, w), (s, beta), cols, q, slots, par)?;
    }
    gram_par(
        MatRef::col_major(u, m, k)?,
        beta,
        MatMut::col_major(p, k, k)?,
        &mut st,
    )
}
