//! The multiplicative U-step of a CSC view fused with its share of the V-step's
//! products (`K ≤ 64`): NMF's hot loop on sparse data, block by block through
//! the sparse kernels of `linalg::sparse`.

use crate::data::{ViewKind, ViewShape};
use crate::error::Error;
use crate::linalg::mat::{MatMut, MatRef};
use crate::linalg::real::Real;
use crate::linalg::sparse::{
    gather_block, pad_into, padded_width, rows_padded, scatter_block, unpad_into, Csr,
};
use crate::linalg::{gemm, gemm_req, gram_t};
use crate::steps::update::mu_step;
use crate::work::{Stack, WorkReq};

/// Rows per block of [`csc_u_step`].
const FUSED_ROWS: usize = 128;

/// Does [`csc_u_step`] apply to a CSC view at rank `k` (`K ≤ 64`)?
pub(crate) fn csc_u_step_applies(k: usize) -> bool {
    padded_width(k).is_some()
}

/// Workspace of [`csc_u_step`] (`None` when it does not apply: dense, or `K > 64`).
pub(crate) fn csc_u_step_req<T>(shape: ViewShape, k: usize) -> Option<WorkReq> {
    let w = padded_width(k)?;
    if shape.kind != ViewKind::Csc {
        return None;
    }
    let rb = FUSED_ROWS.min(shape.rows);
    Some(WorkReq::all_of(&[
        WorkReq::matrix::<T>(shape.cols, w),
        WorkReq::matrix::<T>(shape.cols, w),
        WorkReq::matrix::<T>(rb, k),
        WorkReq::matrix::<T>(rb, k),
        WorkReq::matrix::<T>(rb, w),
        WorkReq::any_of(&[gemm_req::<T>(rb, k, k), gemm_req::<T>(k, k, shape.rows)]),
    ]))
}

/// The multiplicative U-step of a CSC view fused with its share of the V-step's
/// products, one block of [`FUSED_ROWS`] rows at a time (`K ≤ 64`):
///
/// ```text
/// A = s X_b Vᵀ,  B = U_b G,  U_b ← U_b ∘ (A + ε) ⊘ (B + ε),  Q (+)= s U_bᵀ X_b
/// ```
///
/// for each row block `b` of `X` (row-sorted `csr`) and `U` (`m × k` column-major),
/// with `G = V Vᵀ` and `s` the data scale (a power of two, 1 for data of
/// ordinary magnitude; the products are formed, then scaled), then
/// `P (+)= UᵀU` by [`gram_t`]. The same arithmetic
/// as the unfused sequence (`x_vt`, GEMM, `mu_step`, then `UᵀU`, `ut_x` with the
/// new U), but `U`, `A`, `B` and the entries are each streamed once while the
/// block is in cache. `accumulate`: add into `p`, `q` (a later view) instead of
/// overwriting them.
#[allow(clippy::too_many_arguments)]
pub(crate) fn csc_u_step<T: Real>(
    csr: Csr<'_, T>,
    (m, n, k): (usize, usize, usize),
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
    let rb = FUSED_ROWS.min(m);
    let mut st = st.rest();
    let vp: &mut [T] = st.take_matrix(n, w)?;
    let op: &mut [T] = st.take_matrix(n, w)?;
    let ab: &mut [T] = st.take_matrix(rb, k)?;
    let bb: &mut [T] = st.take_matrix(rb, k)?;
    let ut: &mut [T] = st.take_matrix(rb, w)?;
    pad_into(v, n, k, w, vp);
    op.fill(T::ZERO);
    let gm = MatRef::col_major(g, k, k)?;
    for i0 in (0..m).step_by(rb) {
        let i1 = (i0 + rb).min(m);
        let r = i1 - i0;
        let (a, b) = (&mut ab[..r * k], &mut bb[..r * k]);
        gather_block(csr, (i0, i1), (k, w), vp, a);
        if s != T::ONE {
            a.iter_mut().for_each(|x| *x *= s);
        }
        let ub = MatRef::new(&u[i0..], r, k, 1, m)?;
        gemm(
            T::ONE,
            ub,
            gm,
            T::ZERO,
            MatMut::col_major(b, r, k)?,
            &mut st,
        )?;
        for t in 0..k {
            mu_step(
                &mut u[i0 + t * m..i1 + t * m],
                &a[t * r..(t + 1) * r],
                &b[t * r..(t + 1) * r],
                eps,
                T::INFINITY,
            );
        }
        let blk = &mut ut[..r * w];
        rows_padded(u, m, k, w, i0, i1, blk);
        scatter_block(csr, (i0, i1), w, blk, op);
    }
    let beta = if accumulate { T::ONE } else { T::ZERO };
    if s != T::ONE {
        op.iter_mut().for_each(|x| *x *= s);
    }
    unpad_into(op, n, k, w, beta, q);
    // One symmetric product over all of U after the blocks: the strips of
    // `gram_t` need a third fewer flops than `Σ_b U_bᵀU_b` by full GEMMs, and one
    // call packs less often than one per block.
    gram_t(
        MatRef::col_major(u, m, k)?,
        beta,
        MatMut::col_major(p, k, k)?,
        &mut st,
    )
}
