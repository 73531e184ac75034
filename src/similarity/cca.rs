//! Regularised canonical correlation analysis of two dense views of the same
//! items (DESIGN §8: MVEL's cross-view similarity).
//!
//! For views `X^i` (`d_i × n`) and `X^j` (`d_j × n`), real-valued (any sign):
//!
//! 1. means `μ_i`, `μ_j` over the items; centred `X̄ = X − μ1ᵀ`;
//! 2. covariances `C_ii = X̄^i X̄^iᵀ/(n−1) + r·I`, `C_jj` likewise,
//!    `C_ij = X̄^i X̄^jᵀ/(n−1)` (`r` = `reg`, the same for both views);
//! 3. `C_ii^{−1/2}`, `C_jj^{−1/2}` from their eigendecompositions
//!    ([`crate::linalg::eig`]), eigenvalues floored at
//!    `τ = 8·(d + n)·ε·λ_max` (`d` the view's dimension);
//! 4. `T = C_ii^{−1/2} C_ij C_jj^{−1/2}` and its top `dims` singular triplets
//!    `(ρ_k, ψ_k, ψ̃_k)` (eigendecomposition of the Gram matrix of the smaller
//!    side, the other side by `Tᵀψ/ρ` with care for tiny `ρ`);
//! 5. `Φ^i = C_ii^{−1/2}Ψ`, `Φ^j = C_jj^{−1/2}Ψ̃`.
//!
//! **What the outputs satisfy.** `Φ^iᵀ C_ii Φ^i = I` and `Φ^jᵀ C_jj Φ^j = I`
//! with the *regularised* covariances, and `Φ^iᵀ C_ij Φ^j = diag(ρ)`. So the
//! canonical variables `z_i = Φ^iᵀ(x − μ_i)` of the `n` items have sample
//! covariance `I − r·Φ^iᵀΦ^i` (the identity as `r → 0`), and sample
//! cross-covariance with `z_j` equal to `diag(ρ)`. The canonical correlations
//! `ρ_1 ≥ … ≥ ρ_dims ≥ 0` are at most 1 (up to rounding) and shrink as `r`
//! grows. New items project as `Φ^iᵀ(x − μ_i)`.
//!
//! **Signs.** Each pair `(φ^i_k, φ^j_k)` is determined up to a common sign:
//! the component of `φ^i_k` of largest magnitude (the first such) is positive.
//!
//! **Regularisation.** With `d_i ≥ n` (more features than items, common in
//! practice) `C_ii` is singular without `r`. `reg = 0` is accepted only when
//! both covariances are numerically positive definite (no eigenvalue at or
//! below the floor `τ`); otherwise [`Error::BadParameter`]. With `reg > 0`, an
//! eigenvalue below `τ` (only when `reg < τ`) is raised to `τ`, a further
//! regularisation at the rounding level.
//!
//! **Cost.** With `D = d_i + d_j`, `s = min(d_i, d_j)`, `l = max(d_i, d_j)`:
//! `≈ D²·n` flops for the joint covariance (one symmetric rank-`n` update, in
//! blocks of 256 items), `≈ 10(d_i³ + d_j³)` for the two inverse square roots,
//! `2·d_i·d_j·(d_i + d_j)` for `T`, `s²·l + 9s³` for its SVD and
//! `2(d_i² + d_j²)·dims` for `Φ`. Workspace `O(D² + D·256)` values
//! ([`cca_workspace`]), independent of `n` beyond the block.

use crate::data::{Dense, View};
use crate::error::{Error, Part};
use crate::linalg::eig::{inv_sqrt_psd, inv_sqrt_psd_req, top_svd, top_svd_req};
use crate::linalg::mat::{MatMut, MatRef};
use crate::linalg::real::Real;
use crate::linalg::{gemm_into, gemm_req, gram_t};
use crate::work::{Stack, WorkReq};

/// Items per block of the covariance accumulation.
const BLOCK: usize = 256;

/// The floor of the covariances' eigenvalues, relative to the largest, for a
/// `d × d` covariance of `n` items: `8·(d + n)·ε` (a bound on the rounding
/// error of the computed covariance and of its eigenvalues).
fn floor_rel<T: Real>(d: usize, n: usize) -> f64 {
    8.0 * (d as f64 + n as f64) * T::EPSILON.to_f64()
}

/// Shape checks shared by [`cca`] and [`cca_workspace`].
fn check_shape(di: usize, dj: usize, n: usize, dims: usize) -> Result<(), Error> {
    if di == 0 || dj == 0 || n == 0 {
        return Err(Error::ZeroDimension);
    }
    if n < 2 {
        // n − 1 = 0 degrees of freedom: no covariance.
        return Err(Error::ZeroDimension);
    }
    if dims == 0 || dims > di.min(dj) {
        return Err(Error::BadRank);
    }
    di.checked_add(dj)
        .and_then(|d| d.checked_mul(d))
        .ok_or(Error::SizeOverflow)?;
    di.checked_mul(dims).ok_or(Error::SizeOverflow)?;
    dj.checked_mul(dims).ok_or(Error::SizeOverflow)?;
    Ok(())
}

/// Internal workspace of [`cca`].
pub(crate) fn cca_req<T>(di: usize, dj: usize, n: usize, dims: usize) -> WorkReq {
    let Some(d) = di.checked_add(dj) else {
        return WorkReq::OVERFLOW;
    };
    let b = BLOCK.min(n);
    let accumulate = WorkReq::all_of(&[WorkReq::matrix::<T>(d, b), gemm_req::<T>(d, d, b)]);
    let svd = WorkReq::all_of(&[
        WorkReq::matrix::<T>(di, dims),
        WorkReq::matrix::<T>(dj, dims),
        WorkReq::new::<T>(dims),
        WorkReq::any_of(&[
            top_svd_req::<T>(di, dj, dims),
            WorkReq::all_of(&[
                WorkReq::matrix::<T>(di, dims),
                WorkReq::matrix::<T>(dj, dims),
                WorkReq::any_of(&[gemm_req::<T>(di, dims, di), gemm_req::<T>(dj, dims, dj)]),
            ]),
        ]),
    ]);
    let product = WorkReq::all_of(&[
        WorkReq::matrix::<T>(di, dj),
        WorkReq::any_of(&[gemm_req::<T>(di, dj, di), gemm_req::<T>(di, dj, dj)]),
    ]);
    let after = WorkReq::all_of(&[
        WorkReq::matrix::<T>(di, di),
        WorkReq::matrix::<T>(dj, dj),
        WorkReq::any_of(&[
            inv_sqrt_psd_req::<T>(di),
            inv_sqrt_psd_req::<T>(dj),
            WorkReq::all_of(&[
                WorkReq::matrix::<T>(di, dj),
                WorkReq::any_of(&[product, svd]),
            ]),
        ]),
    ]);
    WorkReq::all_of(&[
        WorkReq::matrix::<T>(d, d),
        WorkReq::new::<T>(d),
        WorkReq::any_of(&[accumulate, after]),
    ])
}

/// Workspace bytes of [`cca`] for views of `di` and `dj` features over `n`
/// items and `dims` canonical pairs (alignment slack included). Errors as
/// [`cca`]'s shape checks: [`Error::ZeroDimension`] (a zero size, or `n < 2`),
/// [`Error::BadRank`] (`dims = 0` or `dims > min(di, dj)`),
/// [`Error::SizeOverflow`].
pub fn cca_workspace<T>(di: usize, dj: usize, n: usize, dims: usize) -> Result<usize, Error> {
    check_shape(di, dj, n, dims)?;
    cca_req::<T>(di, dj, n, dims).bytes()
}

/// Regularised CCA of `xi` (`di × n`) and `xj` (`dj × n`), dense views of the
/// same `n` items with any column stride (see the module docs for the method,
/// what the outputs satisfy, and the cost).
///
/// `reg ≥ 0` is added to the diagonal of both covariance matrices
/// (`C = X̄X̄ᵀ/(n−1) + reg·I`, `X̄` centred). Writes the top `dims` canonical
/// directions `phi_i` (`di × dims`) and `phi_j` (`dj × dims`), column-major,
/// the canonical correlations `rho` (`dims`, descending) and the means `mu_i`
/// (`di`), `mu_j` (`dj`) used for centring, so that new items project as
/// `phi_iᵀ(x − mu_i)`. `dims ≤ min(di, dj)`.
///
/// Errors, before anything is written: views of different item counts or an
/// output of the wrong length [`Error::DimensionMismatch`]; `n < 2`
/// [`Error::ZeroDimension`]; `dims = 0` or `dims > min(di, dj)`
/// [`Error::BadRank`]; `reg` negative or not finite [`Error::BadParameter`]; a
/// NaN or infinity in a view, or a covariance entry that overflows (values
/// beyond about `1e150`), [`Error::NonFiniteInput`]; `reg = 0` with a
/// covariance that is singular at the floor `τ` of the module docs (always the
/// case when a view has `n` or more features, or a constant feature)
/// [`Error::BadParameter`]; a workspace shorter than [`cca_workspace`]
/// [`Error::WorkspaceTooSmall`].
#[allow(clippy::too_many_arguments)]
pub fn cca<T: Real>(
    xi: &Dense<'_, T>,
    xj: &Dense<'_, T>,
    reg: f64,
    dims: usize,
    phi_i: &mut [T],
    phi_j: &mut [T],
    rho: &mut [T],
    mu_i: &mut [T],
    mu_j: &mut [T],
    work: &mut [u8],
) -> Result<(), Error> {
    let (mi, mj) = (xi.mat(), xj.mat());
    let (di, dj, n) = (mi.rows(), mj.rows(), mi.cols());
    if mj.cols() != n {
        return Err(Error::DimensionMismatch);
    }
    check_shape(di, dj, n, dims)?;
    if !(reg.is_finite() && reg >= 0.0) {
        return Err(Error::BadParameter);
    }
    if phi_i.len() != di * dims
        || phi_j.len() != dj * dims
        || rho.len() != dims
        || mu_i.len() != di
        || mu_j.len() != dj
    {
        return Err(Error::DimensionMismatch);
    }
    View::Dense(*xi).check_values(false)?;
    View::Dense(*xj).check_values(false)?;
    cca_req::<T>(di, dj, n, dims).check(work.len())?;

    let d = di + dj;
    let mut st = Stack::new(work);
    let c = st.take_matrix::<T>(d, d)?;
    let mu = st.take::<T>(d)?;
    let (mu_a, mu_b) = mu.split_at_mut_checked(di).ok_or(Error::Internal)?;
    mean_rows(mi, mu_a)?;
    mean_rows(mj, mu_b)?;

    // Joint covariance of the stacked centred views, block by block.
    {
        let mut ph = st.rest();
        let b = BLOCK.min(n);
        let blk = ph.take_matrix::<T>(d, b)?;
        let mut s = 0;
        while s < n {
            let e = (s + b).min(n);
            let w = e - s;
            for (t, col) in blk.chunks_exact_mut(d.max(1)).enumerate().take(w) {
                let q = s + t;
                let (top, bottom) = col.split_at_mut_checked(di).ok_or(Error::Internal)?;
                for (r, (x, &m)) in top.iter_mut().zip(mu_a.iter()).enumerate() {
                    *x = mi.at(r, q) - m;
                }
                for (r, (x, &m)) in bottom.iter_mut().zip(mu_b.iter()).enumerate() {
                    *x = mj.at(r, q) - m;
                }
            }
            let beta = if s == 0 { T::ZERO } else { T::ONE };
            gram_t(
                MatRef::col_major(blk.part(..d * w)?, d, w)?.t(),
                beta,
                MatMut::col_major(c, d, d)?,
                &mut ph.rest(),
            )?;
            s = e;
        }
    }
    let inv = T::ONE / T::from_f64((n - 1) as f64);
    for x in c.iter_mut() {
        *x *= inv;
        if !x.is_finite() {
            return Err(Error::NonFiniteInput);
        }
    }
    let r = T::from_f64(reg);
    for x in c.iter_mut().step_by(d.wrapping_add(1).max(1)).take(d) {
        *x += r;
    }

    // C_ii^{-1/2}, C_jj^{-1/2}.
    let pi = st.take_matrix::<T>(di, di)?;
    let pj = st.take_matrix::<T>(dj, dj)?;
    let cii = MatRef::new(c, di, di, 1, d)?;
    let cjj = MatRef::new(c.part(di + di * d..)?, dj, dj, 1, d)?;
    let fi = inv_sqrt_psd(
        cii,
        floor_rel::<T>(di, n),
        MatMut::col_major(pi, di, di)?,
        &mut st.rest(),
    )?;
    let fj = inv_sqrt_psd(
        cjj,
        floor_rel::<T>(dj, n),
        MatMut::col_major(pj, dj, dj)?,
        &mut st.rest(),
    )?;
    if reg == 0.0 && (fi > 0 || fj > 0) {
        return Err(Error::BadParameter);
    }
    let pim = MatRef::col_major(pi, di, di)?;
    let pjm = MatRef::col_major(pj, dj, dj)?;

    // T = C_ii^{-1/2} C_ij C_jj^{-1/2}.
    let t = st.take_matrix::<T>(di, dj)?;
    {
        let mut ph = st.rest();
        let m = ph.take_matrix::<T>(di, dj)?;
        let cij = MatRef::new(c.part(di * d..)?, di, dj, 1, d)?;
        gemm_into(pim, cij, m, &mut ph.rest())?;
        gemm_into(MatRef::col_major(m, di, dj)?, pjm, t, &mut ph.rest())?;
    }

    // Top singular triplets of T, then Φ.
    let psi = st.take_matrix::<T>(di, dims)?;
    let psit = st.take_matrix::<T>(dj, dims)?;
    let sv = st.take::<T>(dims)?;
    top_svd(
        MatRef::col_major(t, di, dj)?,
        dims,
        psi,
        sv,
        psit,
        &mut st.rest(),
    )?;
    let fi_out = st.take_matrix::<T>(di, dims)?;
    let fj_out = st.take_matrix::<T>(dj, dims)?;
    gemm_into(
        pim,
        MatRef::col_major(psi, di, dims)?,
        fi_out,
        &mut st.rest(),
    )?;
    gemm_into(
        pjm,
        MatRef::col_major(psit, dj, dims)?,
        fj_out,
        &mut st.rest(),
    )?;
    for (k, fi) in fi_out.chunks_exact_mut(di.max(1)).enumerate().take(dims) {
        if crate::linalg::eig::fix_sign(fi) {
            let fj = fj_out.get_mut(k * dj..(k + 1) * dj).unwrap_or_default();
            fj.iter_mut().for_each(|x| *x = -*x);
        }
    }
    if fi_out.iter().chain(fj_out.iter()).any(|x| !x.is_finite()) {
        return Err(Error::NonFiniteInput);
    }

    phi_i.copy_checked(fi_out)?;
    phi_j.copy_checked(fj_out)?;
    // Correlations lie in [0, 1]; rounding (at extreme magnitudes, a fuzz
    // finding: 1 + 5e-8) may step outside.
    for (r, &s) in rho.iter_mut().zip(sv.iter()) {
        *r = s.max(T::ZERO).min(T::ONE);
    }
    mu_i.copy_checked(mu_a)?;
    mu_j.copy_checked(mu_b)?;
    Ok(())
}

/// `mu[r] ←` the mean of row `r` of `x` over its columns (summed in `f64`;
/// by `x/n` terms when the plain sum overflows).
fn mean_rows<T: Real>(x: MatRef<'_, T>, mu: &mut [T]) -> Result<(), Error> {
    let n = x.cols();
    let inv = 1.0 / n as f64;
    for (r, m) in mu.iter_mut().enumerate() {
        let mut s = 0.0f64;
        for q in 0..n {
            s += x.at(r, q).to_f64();
        }
        let mut v = s * inv;
        if !v.is_finite() {
            v = (0..n).map(|q| x.at(r, q).to_f64() * inv).sum();
        }
        *m = T::from_f64(v);
        if !m.is_finite() {
            return Err(Error::NonFiniteInput);
        }
    }
    Ok(())
}
