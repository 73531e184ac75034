//! Dense symmetric eigendecomposition on the caller's workspace, and what CCA
//! needs from it: the inverse square root of a positive definite matrix and
//! the top singular triplets of a small dense matrix (DESIGN §8).
//!
//! **Method.** [`sym_eig`] is the EISPACK pair `tred2` + `tql2` (as in JAMA
//! and Numerical Recipes), on the column-major matrix in place:
//!
//! 1. the lower triangle is scaled by `2^−e` (exact), `e` chosen so that its
//!    largest magnitude lies in `[½, 1)`: no sum of squares below can overflow
//!    or lose the matrix to underflow, whatever its units;
//! 2. Householder tridiagonalisation, each reflector scaled by the 1-norm of
//!    its column; the reflectors are then accumulated into `Q`;
//! 3. implicit QL on the tridiagonal matrix with Wilkinson shifts (the
//!    eigenvalue of the leading 2×2 block nearer its first diagonal entry),
//!    plane rotations applied to `Q`; an off-diagonal entry is set to zero when
//!    `|e_m| ≤ ε·max(t, ε²)`, `t` the running maximum of `|d_l| + |e_l|` over
//!    the eigenvalues found so far (the matrix norm is at least ½ after step 1,
//!    so this is a normwise backward-stable test);
//! 4. eigenvalues sorted ascending (selection sort, columns swapped with them),
//!    each eigenvector's sign fixed, eigenvalues scaled back by `2^e`.
//!
//! The result is backward stable: `‖AQ − QΛ‖ = O(n·ε·‖A‖)` and
//! `‖QᵀQ − I‖ = O(n·ε)` (tests/eig.rs measures both against nalgebra on random,
//! ill-conditioned, clustered, diagonal and tridiagonal matrices up to
//! `n = 200`, in the 1-norm: at most 1.4 and 2.2 times `n·ε`, against a bound
//! of 10 asserted). Eigenvalues are accurate to `O(n·ε·‖A‖)` in absolute terms:
//! eigenvalues much smaller than `‖A‖` have correspondingly fewer correct
//! digits, as with LAPACK's `dsyev`.
//!
//! **Cost.** About `(4/3)n³` flops for the reduction, `(4/3)n³` to accumulate
//! `Q` and `≈ 6n³` for the QL rotations on `Q` (1.5–2 sweeps per eigenvalue on
//! average): `≈ 9n³` in all (`n = 200`: ~70 Mflop, 10 ms; `n = 1000`: 1.4 s
//! in a release build on the 2-core development machine). Memory: `n` values of workspace (the off-diagonal).
//! Plain loops over contiguous columns, no SIMD dispatch and no fused
//! multiply-add: the same input gives the same bits on every machine.
//!
//! **Sign convention.** Each eigenvector's component of largest magnitude
//! (the first such, by row) is positive. Eigenvectors of a repeated
//! eigenvalue are an orthonormal basis of its eigenspace; which one is
//! determined by the algorithm (deterministic, but not unique
//! mathematically).
//!
//! **Convergence.** QL with Wilkinson shifts converges (cubically near the
//! end) for every symmetric tridiagonal matrix; the loop is capped at `30·n`
//! sweeps in all, after which [`Error::Internal`] is returned. That has never
//! been observed; it would leave `a` and `eigenvalues` overwritten.

use crate::error::{Error, Part};
use crate::linalg::mat::{MatMut, MatRef};
use crate::linalg::real::Real;
use crate::linalg::{at, gemm_into, gemm_req, gram_t, set_at, swap_at};
use crate::work::{Stack, WorkReq};

/// Internal workspace of [`sym_eig`]: the off-diagonal of the tridiagonal
/// matrix (`n` values).
pub(crate) fn sym_eig_req<T>(n: usize) -> WorkReq {
    WorkReq::new::<T>(n)
}

/// Workspace bytes of [`sym_eig`] for an `n × n` matrix (alignment slack
/// included): [`Error::ZeroDimension`] for `n = 0`, [`Error::SizeOverflow`] when
/// `n²` does not fit.
pub fn sym_eig_workspace<T>(n: usize) -> Result<usize, Error> {
    if n == 0 {
        return Err(Error::ZeroDimension);
    }
    n.checked_mul(n).ok_or(Error::SizeOverflow)?;
    sym_eig_req::<T>(n).bytes()
}

/// Eigendecomposition of the symmetric `n × n` matrix `a` (column-major,
/// contiguous; only the lower triangle, diagonal included, is read).
///
/// On return `a` holds orthonormal eigenvectors (column `i` for
/// `eigenvalues[i]`, its largest-magnitude component positive) and
/// `eigenvalues` is ascending. See the module docs for the method, accuracy
/// and cost (`≈ 9n³` flops).
///
/// Errors, before anything is written: `n = 0` [`Error::ZeroDimension`];
/// `a.len() ≠ n²` or `eigenvalues.len() ≠ n` [`Error::DimensionMismatch`]
/// ([`Error::SizeOverflow`] if `n²` overflows); a NaN or infinity in the lower
/// triangle, or a matrix whose Frobenius norm (which bounds every eigenvalue)
/// is not representable, [`Error::NonFiniteInput`]; a workspace shorter than
/// [`sym_eig_workspace`] [`Error::WorkspaceTooSmall`].
pub fn sym_eig<T: Real>(
    a: &mut [T],
    n: usize,
    eigenvalues: &mut [T],
    work: &mut [u8],
) -> Result<(), Error> {
    let scale = check(a, n, eigenvalues)?;
    sym_eig_req::<T>(n).check(work.len())?;
    let mut st = Stack::new(work);
    let e = st.take::<T>(n)?;
    decompose(a, n, eigenvalues, e, scale)
}

/// [`sym_eig`] with its workspace carved from `st` (same validation, same
/// errors; [`sym_eig_req`] bytes).
pub(crate) fn sym_eig_st<T: Real>(
    a: &mut [T],
    n: usize,
    eigenvalues: &mut [T],
    st: &mut Stack<'_>,
) -> Result<(), Error> {
    let scale = check(a, n, eigenvalues)?;
    let e = st.take::<T>(n)?;
    decompose(a, n, eigenvalues, e, scale)
}

/// Validates the arguments; returns the binary exponent `e` of the largest
/// magnitude (`max |a_ij| ∈ [2^(e−1), 2^e)`), or `None` for the zero matrix.
fn check<T: Real>(a: &[T], n: usize, w: &[T]) -> Result<Option<i32>, Error> {
    if n == 0 {
        return Err(Error::ZeroDimension);
    }
    let nn = n.checked_mul(n).ok_or(Error::SizeOverflow)?;
    if a.len() != nn || w.len() != n {
        return Err(Error::DimensionMismatch);
    }
    // Column `j`'s lower part: rows `j..n`.
    let lower = || {
        a.chunks_exact(n)
            .enumerate()
            .flat_map(|(j, col)| col.iter().skip(j))
    };
    let mut amax = 0.0f64;
    for &x in lower() {
        if !x.is_finite() {
            return Err(Error::NonFiniteInput);
        }
        amax = amax.max(x.abs().to_f64());
    }
    if amax == 0.0 {
        return Ok(None);
    }
    let (_, ex) = libm::frexp(amax);
    // ‖A‖_F in scaled units (at most n), then in the caller's: it bounds |λ|.
    let mut f2 = 0.0f64;
    for (j, col) in a.chunks_exact(n).enumerate() {
        for (i, &x) in col.iter().skip(j).enumerate() {
            let y = libm::ldexp(x.to_f64(), -ex);
            f2 += if i == 0 { y * y } else { 2.0 * y * y };
        }
    }
    let bound = libm::ldexp(libm::sqrt(f2), ex);
    if !T::from_f64(bound).is_finite() {
        return Err(Error::NonFiniteInput);
    }
    Ok(Some(ex))
}

/// `x · 2^e`, in steps that stay inside the range of `f32` (exact unless the
/// result is subnormal).
#[inline]
fn pow2<T: Real>(mut x: T, mut e: i32) -> T {
    while e != 0 {
        let s = e.clamp(-60, 60);
        x *= T::from_f64(libm::ldexp(1.0, s));
        e -= s;
    }
    x
}

/// `√(x² + y²)` without overflow or harmful underflow.
#[inline]
fn hypot<T: Real>(x: T, y: T) -> T {
    let (a, b) = (x.abs(), y.abs());
    let (big, small) = if a >= b { (a, b) } else { (b, a) };
    if big == T::ZERO {
        return T::ZERO;
    }
    let r = small / big;
    big * (T::ONE + r * r).sqrt()
}

/// The decomposition proper, on validated input (`scale` from [`check`]).
fn decompose<T: Real>(
    a: &mut [T],
    n: usize,
    d: &mut [T],
    e: &mut [T],
    scale: Option<i32>,
) -> Result<(), Error> {
    let Some(ex) = scale else {
        // The zero matrix: Λ = 0, Q = I.
        a.fill(T::ZERO);
        for x in a.iter_mut().step_by(n.wrapping_add(1).max(1)).take(n) {
            *x = T::ONE;
        }
        d.fill(T::ZERO);
        return Ok(());
    };
    for (j, col) in a.chunks_exact_mut(n.max(1)).enumerate() {
        for x in col.iter_mut().skip(j) {
            *x = pow2(*x, -ex);
        }
    }
    tred2(a, n, d, e);
    tql2(a, n, d, e)?;
    sort_and_sign(a, n, d);
    for x in d.iter_mut() {
        *x = pow2(*x, ex);
    }
    Ok(())
}

/// Householder reduction of the lower triangle of `v` to tridiagonal form
/// (`d` diagonal, `e[1..]` off-diagonal), the orthogonal transformation
/// accumulated in `v` (EISPACK `tred2`; only the lower triangle is read).
fn tred2<T: Real>(v: &mut [T], n: usize, d: &mut [T], e: &mut [T]) {
    // Entry (r, j) of `v` at `r + j·n`; every index below is inside (`v` is
    // `n × n`, `d` and `e` hold `n`), read and written through checked
    // sub-slices, `at` and `set_at`.
    for (j, dj) in d.iter_mut().enumerate().take(n) {
        *dj = at(v, (n - 1) + j * n);
    }
    for i in (1..n).rev() {
        let mut scale = T::ZERO;
        let mut h = T::ZERO;
        for &x in d.iter().take(i) {
            scale += x.abs();
        }
        if scale == T::ZERO {
            set_at(e, i, at(d, i - 1));
            for j in 0..i {
                set_at(d, j, at(v, (i - 1) + j * n));
                set_at(v, i + j * n, T::ZERO);
                set_at(v, j + i * n, T::ZERO);
            }
        } else {
            // The Householder vector, scaled by the 1-norm.
            for x in d.iter_mut().take(i) {
                *x /= scale;
                h += *x * *x;
            }
            let mut f = at(d, i - 1);
            let mut g = h.sqrt();
            if f > T::ZERO {
                g = -g;
            }
            set_at(e, i, scale * g);
            h -= f * g;
            set_at(d, i - 1, f - g);
            e.iter_mut().take(i).for_each(|x| *x = T::ZERO);
            // e ← A·u over the leading i×i block (lower triangle, by columns).
            for j in 0..i {
                f = at(d, j);
                set_at(v, j + i * n, f);
                let col = v.get(j * n..j * n + i).unwrap_or_default();
                g = at(e, j) + at(col, j) * f;
                // Rows j + 1 .. i of the column, of d and of e.
                let below = col.get(j + 1..).unwrap_or_default();
                let dk = d.get(j + 1..i).unwrap_or_default();
                let ek = e.get_mut(j + 1..i).unwrap_or_default();
                for ((&x, &dk), ek) in below.iter().zip(dk).zip(ek) {
                    g += x * dk;
                    *ek += x * f;
                }
                set_at(e, j, g);
            }
            f = T::ZERO;
            for (ej, &dj) in e.iter_mut().zip(d.iter()).take(i) {
                *ej /= h;
                f += *ej * dj;
            }
            let hh = f / (h + h);
            for (ej, &dj) in e.iter_mut().zip(d.iter()).take(i) {
                *ej -= hh * dj;
            }
            // Rank-2 update of the lower triangle of the leading block.
            for j in 0..i {
                f = at(d, j);
                g = at(e, j);
                let col = v.get_mut(j * n + j..j * n + i).unwrap_or_default();
                let ek = e.get(j..i).unwrap_or_default();
                let dk = d.get(j..i).unwrap_or_default();
                for ((x, &ek), &dk) in col.iter_mut().zip(ek).zip(dk) {
                    *x -= f * ek + g * dk;
                }
                set_at(d, j, at(v, (i - 1) + j * n));
                set_at(v, i + j * n, T::ZERO);
            }
        }
        set_at(d, i, h);
    }
    // Accumulate the transformations.
    for i in 0..n.saturating_sub(1) {
        set_at(v, (n - 1) + i * n, at(v, i + i * n));
        set_at(v, i + i * n, T::ONE);
        let h = at(d, i + 1);
        let Some((left, right)) = v.split_at_mut_checked((i + 1) * n) else {
            break;
        };
        let u = right.get_mut(..=i).unwrap_or_default();
        if h != T::ZERO {
            for (dk, &x) in d.iter_mut().zip(u.iter()).take(i + 1) {
                *dk = x / h;
            }
            for j in 0..=i {
                let col = left.get_mut(j * n..j * n + i + 1).unwrap_or_default();
                let mut g = T::ZERO;
                for (&x, &y) in u.iter().zip(col.iter()) {
                    g += x * y;
                }
                for (y, &dk) in col.iter_mut().zip(d.iter().take(i + 1)) {
                    *y -= g * dk;
                }
            }
        }
        u.fill(T::ZERO);
    }
    for (j, dj) in d.iter_mut().enumerate().take(n) {
        *dj = at(v, (n - 1) + j * n);
        set_at(v, (n - 1) + j * n, T::ZERO);
    }
    set_at(v, (n - 1) + (n - 1) * n, T::ONE);
    set_at(e, 0, T::ZERO);
}

/// Implicit QL with Wilkinson shifts on the tridiagonal `(d, e)` from
/// [`tred2`], rotations applied to the columns of `v` (EISPACK `tql2`).
fn tql2<T: Real>(v: &mut [T], n: usize, d: &mut [T], e: &mut [T]) -> Result<(), Error> {
    for i in 1..n {
        set_at(e, i - 1, at(e, i));
    }
    set_at(e, n.wrapping_sub(1), T::ZERO);
    let eps = T::EPSILON;
    let two = T::from_f64(2.0);
    let mut f = T::ZERO;
    let mut tst1 = eps * eps;
    let mut budget = 30usize.saturating_mul(n);
    for l in 0..n {
        // Find a negligible off-diagonal entry (e[n − 1] = 0 stops the search).
        tst1 = tst1.max(at(d, l).abs() + at(e, l).abs());
        let mut m = l;
        while m < n - 1 && at(e, m).abs() > eps * tst1 {
            m += 1;
        }
        if m > l {
            loop {
                if budget == 0 {
                    return Err(Error::Internal);
                }
                budget -= 1;
                // The shift.
                let mut g = at(d, l);
                let mut p = (at(d, l + 1) - g) / (two * at(e, l));
                let mut r = hypot(p, T::ONE);
                if p < T::ZERO {
                    r = -r;
                }
                set_at(d, l, at(e, l) / (p + r));
                set_at(d, l + 1, at(e, l) * (p + r));
                let dl1 = at(d, l + 1);
                let mut h = g - at(d, l);
                for x in d.iter_mut().skip(l + 2) {
                    *x -= h;
                }
                f += h;
                // The implicit QL sweep from m − 1 down to l.
                p = at(d, m);
                let (mut c, mut c2, mut c3) = (T::ONE, T::ONE, T::ONE);
                let el1 = at(e, l + 1);
                let (mut s, mut s2) = (T::ZERO, T::ZERO);
                for i in (l..m).rev() {
                    c3 = c2;
                    c2 = c;
                    s2 = s;
                    let ei = at(e, i);
                    g = c * ei;
                    h = c * p;
                    r = hypot(p, ei);
                    set_at(e, i + 1, s * r);
                    s = ei / r;
                    c = p / r;
                    let di = at(d, i);
                    p = c * di - s * g;
                    set_at(d, i + 1, h + s * (c * g + s * di));
                    // Columns i and i + 1 of v.
                    if let Some((left, right)) = v.split_at_mut_checked((i + 1) * n) {
                        let xs = left.get_mut(i * n..).unwrap_or_default();
                        for (x, y) in xs.iter_mut().zip(right.iter_mut().take(n)) {
                            let t = *y;
                            *y = s * *x + c * t;
                            *x = c * *x - s * t;
                        }
                    }
                }
                p = -s * s2 * c3 * el1 * at(e, l) / dl1;
                set_at(e, l, s * p);
                set_at(d, l, c * p);
                if at(e, l).abs() <= eps * tst1 {
                    break;
                }
            }
        }
        set_at(d, l, at(d, l) + f);
        set_at(e, l, T::ZERO);
    }
    Ok(())
}

/// Sorts ascending (selection sort: the first smallest wins, columns follow)
/// and makes each column's largest-magnitude component (the first such)
/// positive.
fn sort_and_sign<T: Real>(v: &mut [T], n: usize, d: &mut [T]) {
    for i in 0..n {
        let mut k = i;
        for j in i + 1..n {
            if at(d, j) < at(d, k) {
                k = j;
            }
        }
        if k != i {
            swap_at(d, i, k);
            if let Some((left, right)) = v.split_at_mut_checked(k * n) {
                let a = left.get_mut(i * n..(i + 1) * n).unwrap_or_default();
                let b = right.get_mut(..n).unwrap_or_default();
                if a.len() == b.len() {
                    a.swap_with_slice(b);
                }
            }
        }
    }
    for col in v.chunks_exact_mut(n.max(1)) {
        fix_sign(col);
    }
}

/// Negates `col` unless its largest-magnitude component (the first such) is
/// positive; returns whether it did.
pub(crate) fn fix_sign<T: Real>(col: &mut [T]) -> bool {
    let (mut best, mut big) = (0, col.first().map_or(T::ZERO, |x| x.abs()));
    for (i, x) in col.iter().enumerate() {
        if x.abs() > big {
            (best, big) = (i, x.abs());
        }
    }
    let neg = col.get(best).is_some_and(|&x| x < T::ZERO);
    if neg {
        col.iter_mut().for_each(|x| *x = -*x);
    }
    neg
}

/// Workspace of [`inv_sqrt_psd`] for an `n × n` matrix.
pub(crate) fn inv_sqrt_psd_req<T>(n: usize) -> WorkReq {
    WorkReq::all_of(&[
        WorkReq::matrix::<T>(n, n),
        WorkReq::new::<T>(n),
        WorkReq::any_of(&[sym_eig_req::<T>(n), gemm_req::<T>(n, n, n)]),
    ])
}

/// `out ← C^{−1/2}` for a symmetric positive (semi)definite `n × n` matrix `c`
/// (any strides; only the lower triangle is read), by the eigendecomposition
/// `C = QΛQᵀ`: `out = Q·diag(max(λ_i, τ)^{−1/2})·Qᵀ` with the floor
/// `τ = floor_rel · λ_max`. `out` (`n × n`) comes out exactly symmetric.
///
/// Returns the number of eigenvalues at or below the floor (`0`: `C` was
/// numerically positive definite at that threshold and `out` is its exact
/// inverse square root up to rounding). A sensible `floor_rel` is a small
/// multiple of `n·ε`, the relative accuracy of the computed eigenvalues.
///
/// Errors: [`Error::BadParameter`] when `λ_max ≤ 0` (no positive eigenvalue
/// to floor at), [`Error::NonFiniteInput`] for a non-finite `c` (as
/// [`sym_eig`]), [`Error::Internal`] for inconsistent shapes. Cost: the
/// eigendecomposition (`≈ 9n³`) and one symmetric product (`≈ n³`).
/// Workspace: [`inv_sqrt_psd_req`].
pub(crate) fn inv_sqrt_psd<T: Real>(
    c: MatRef<'_, T>,
    floor_rel: f64,
    out: MatMut<'_, T>,
    st: &mut Stack<'_>,
) -> Result<usize, Error> {
    let n = c.rows();
    if c.cols() != n || out.rows() != n || out.cols() != n {
        return Err(Error::Internal);
    }
    let q = st.take_matrix::<T>(n, n)?;
    let lam = st.take::<T>(n)?;
    for (j, col) in q.chunks_exact_mut(n.max(1)).enumerate() {
        for (i, x) in col.iter_mut().enumerate().skip(j) {
            *x = c.at(i, j);
        }
    }
    sym_eig_st(q, n, lam, &mut st.rest())?;
    let lmax = lam.last().copied().ok_or(Error::Internal)?;
    if lmax <= T::ZERO {
        return Err(Error::BadParameter);
    }
    let floor = T::from_f64(floor_rel) * lmax;
    let mut floored = 0;
    for (&l, col) in lam.iter().zip(q.chunks_exact_mut(n.max(1))) {
        if l <= floor {
            floored += 1;
        }
        // Column j of Q times λ^{−1/4}: then out = (QΛ^{−1/4})(QΛ^{−1/4})ᵀ.
        let w = T::ONE / l.max(floor).sqrt().sqrt();
        col.iter_mut().for_each(|x| *x *= w);
    }
    gram_t(
        MatRef::col_major(q, n, n)?.t(),
        T::ZERO,
        out,
        &mut st.rest(),
    )?;
    Ok(floored)
}

/// Workspace of [`top_svd`] for an `m × p` matrix and `k` triplets.
pub(crate) fn top_svd_req<T>(m: usize, p: usize, k: usize) -> WorkReq {
    let (s, l) = (m.min(p), m.max(p));
    WorkReq::all_of(&[
        WorkReq::matrix::<T>(s, s),
        WorkReq::new::<T>(s),
        WorkReq::any_of(&[
            gemm_req::<T>(s, s, l),
            sym_eig_req::<T>(s),
            gemm_req::<T>(l, k, s),
            WorkReq::new::<T>(l),
        ]),
    ])
}

/// The `k ≤ min(m, p)` largest singular triplets of `t` (`m × p`, any
/// strides): `u` (`m × k`) and `v` (`p × k`) column-major with orthonormal
/// columns, `s` (`k`) descending, `t·v_i = s_i·u_i` and `tᵀu_i = s_i·v_i` up to
/// rounding.
///
/// Method: the eigendecomposition of the Gram matrix of the smaller side
/// (`ttᵀ` when `m ≤ p`, else `tᵀt`) gives that side's vectors; the other
/// side's are `w_i = tᵀu_i` (resp. `t·v_i`), `s_i = ‖w_i‖` (accurate to
/// `O(ε·s_1)` absolutely, where `√λ_i` would only be accurate to
/// `O(ε·s_1²/s_i)`), made orthogonal to the previous ones by two passes of
/// Gram–Schmidt and normalised. Care for tiny `s_i`: when
/// `s_i ≤ (m + p)·ε·s_1` (or `s_1 = 0`), or when the Gram–Schmidt passes
/// remove more than half of `w_i`, `w_i` is numerical noise and is replaced by
/// the unit vector orthogonal to the previous ones that is nearest a
/// coordinate axis (the first axis with the largest residual): any unit vector
/// orthogonal to the others is then a valid singular vector. `s` is made
/// non-increasing by `s_i ← min(s_i, s_{i−1})` (a change at the rounding level
/// where two singular values nearly coincide).
///
/// Signs: the smaller side's vectors follow [`sym_eig`]'s convention (largest
/// component positive), the other side follows from `w_i`. Cost:
/// `s²·l` (Gram, symmetric half) `+ 9s³` (eigen) `+ 2·s·l·k` (other side)
/// `+ 2·l·k²` (Gram–Schmidt) flops with `s = min(m, p)`, `l = max(m, p)`.
/// Errors: [`Error::NonFiniteInput`] when the Gram matrix overflows,
/// [`Error::Internal`] for inconsistent shapes. Workspace: [`top_svd_req`].
pub(crate) fn top_svd<T: Real>(
    t: MatRef<'_, T>,
    k: usize,
    u: &mut [T],
    s: &mut [T],
    v: &mut [T],
    st: &mut Stack<'_>,
) -> Result<(), Error> {
    let (m, p) = (t.rows(), t.cols());
    if k == 0 || k > m.min(p) || u.len() != m * k || v.len() != p * k || s.len() != k {
        return Err(Error::Internal);
    }
    if m <= p {
        svd_side(t, k, u, s, v, st)
    } else {
        svd_side(t.t(), k, v, s, u, st)
    }
}

/// [`top_svd`] with the eigendecomposition on the rows of `t` (`m ≤ p`):
/// `a` (`m × k`) from the eigenvectors of `t·tᵀ`, `b` (`p × k`) from `tᵀa`.
fn svd_side<T: Real>(
    t: MatRef<'_, T>,
    k: usize,
    a: &mut [T],
    s: &mut [T],
    b: &mut [T],
    st: &mut Stack<'_>,
) -> Result<(), Error> {
    let (m, p) = (t.rows(), t.cols());
    let g = st.take_matrix::<T>(m, m)?;
    let lam = st.take::<T>(m)?;
    gram_t(t.t(), T::ZERO, MatMut::col_major(g, m, m)?, &mut st.rest())?;
    sym_eig_st(g, m, lam, &mut st.rest())?;
    // The eigenvectors of the k largest eigenvalues (the last columns), largest first.
    let m1 = m.max(1);
    for (ac, gc) in a.chunks_exact_mut(m1).zip(g.chunks_exact(m1).rev()).take(k) {
        ac.copy_from_slice(gc);
    }
    // b ← tᵀ·a (p × k).
    gemm_into(t.t(), MatRef::col_major(a, m, k)?, b, &mut st.rest())?;
    let eps = T::EPSILON.to_f64();
    let tiny = (m + p) as f64 * eps;
    let mut s1 = 0.0f64;
    let resid = st.rest().take::<T>(p)?;
    for i in 0..k {
        let (done, rest) = b.split_at_mut_checked(i * p).ok_or(Error::Internal)?;
        let w = rest.part_mut(..p)?;
        let norm0 = libm::sqrt(crate::linalg::sq_norm(w));
        if i == 0 {
            s1 = norm0;
        }
        let sv = if i == 0 {
            norm0
        } else {
            norm0.min(at(s, i - 1).to_f64())
        };
        set_at(s, i, T::from_f64(sv));
        let mut norm = norm0;
        let mut ok = s1 > 0.0 && norm0 > tiny * s1;
        if ok {
            for _ in 0..2 {
                orthogonalize(w, done, p);
            }
            norm = libm::sqrt(crate::linalg::sq_norm(w));
            ok = norm > 0.5 * norm0;
        }
        if ok {
            let inv = T::from_f64(1.0 / norm);
            w.iter_mut().for_each(|x| *x *= inv);
        } else {
            complete(w, done, p, resid);
        }
    }
    Ok(())
}

/// `w ← w − Σ_j (b_jᵀw)·b_j` over the orthonormal columns `b_j` of `done`.
fn orthogonalize<T: Real>(w: &mut [T], done: &[T], p: usize) {
    for bj in done.chunks_exact(p.max(1)) {
        let c = T::from_f64(crate::linalg::dot(bj, w));
        for (x, &y) in w.iter_mut().zip(bj) {
            *x -= c * y;
        }
    }
}

/// `w ←` the unit vector orthogonal to the columns of `done` obtained from the
/// coordinate axis with the largest residual (the first such); `resid` is
/// scratch of length `p`.
fn complete<T: Real>(w: &mut [T], done: &[T], p: usize, resid: &mut [T]) {
    // Residual of axis r: 1 − Σ_j b_j[r]².
    resid.fill(T::ONE);
    for bj in done.chunks_exact(p.max(1)) {
        for (r, &y) in resid.iter_mut().zip(bj) {
            *r -= y * y;
        }
    }
    let (mut best, mut big) = (0, at(resid, 0));
    for (r, &x) in resid.iter().enumerate() {
        if x > big {
            (best, big) = (r, x);
        }
    }
    w.fill(T::ZERO);
    set_at(w, best, T::ONE);
    for _ in 0..2 {
        orthogonalize(w, done, p);
    }
    let norm = libm::sqrt(crate::linalg::sq_norm(w));
    let inv = T::from_f64(1.0 / norm);
    w.iter_mut().for_each(|x| *x *= inv);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use std::vec;
    use std::vec::Vec;

    fn eig(a: &[f64], n: usize) -> (Vec<f64>, Vec<f64>) {
        let mut q = a.to_vec();
        let mut w = vec![0.0; n];
        let mut ws = vec![0u8; sym_eig_workspace::<f64>(n).unwrap()];
        sym_eig(&mut q, n, &mut w, &mut ws).unwrap();
        (q, w)
    }

    #[test]
    fn two_by_two_and_signs() {
        let (q, w) = eig(&[2.0, 1.0, f64::NAN, 2.0], 2);
        assert!((w[0] - 1.0).abs() < 1e-15 && (w[1] - 3.0).abs() < 1e-15);
        let r = 0.5f64.sqrt();
        // Largest component positive; for (1, −1)/√2 that is the first.
        assert!((q[0] - r).abs() < 1e-15 && (q[1] + r).abs() < 1e-15);
        assert!((q[2] - r).abs() < 1e-15 && (q[3] - r).abs() < 1e-15);
    }

    #[test]
    fn zero_matrix_and_scaling() {
        let (q, w) = eig(&[0.0; 9], 3);
        assert_eq!(w, [0.0; 3]);
        assert_eq!(q, [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
        for s in [1e-300, 1e300, 5e-324] {
            let (_, w) = eig(&[s, 0.0, 0.0, 2.0 * s], 2);
            assert_eq!(w, [s, 2.0 * s], "{s}");
        }
        // Too large for its eigenvalues to be representable.
        let mut a = [f64::MAX, f64::MAX, 0.0, f64::MAX];
        let mut w = [7.0; 2];
        let mut ws = [0u8; 256];
        assert_eq!(
            sym_eig(&mut a, 2, &mut w, &mut ws),
            Err(Error::NonFiniteInput)
        );
        assert_eq!(w, [7.0; 2]);
    }

    #[test]
    fn inv_sqrt_and_svd() {
        let mut rng = Rng::new(3);
        let (n, m) = (6, 20);
        let x: Vec<f64> = (0..n * m).map(|_| rng.uniform() - 0.5).collect();
        // C = X Xᵀ (n × n), positive definite.
        let mut c = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                c[i + j * n] = (0..m).map(|l| x[i + l * n] * x[j + l * n]).sum();
            }
        }
        let req = WorkReq::all_of(&[inv_sqrt_psd_req::<f64>(n), top_svd_req::<f64>(n, m, 4)]);
        let mut ws = vec![0u8; req.bytes().unwrap()];
        let mut st = Stack::new(&mut ws);
        let mut out = vec![0.0; n * n];
        let cv = MatRef::col_major(&c, n, n).unwrap();
        let fl = inv_sqrt_psd(
            cv,
            1e-13,
            MatMut::col_major(&mut out, n, n).unwrap(),
            &mut st,
        )
        .unwrap();
        assert_eq!(fl, 0);
        // out·C·out = I.
        for i in 0..n {
            for j in 0..n {
                let mut s = 0.0;
                for a in 0..n {
                    for b in 0..n {
                        s += out[i + a * n] * c[a + b * n] * out[b + j * n];
                    }
                }
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((s - want).abs() < 1e-12, "{i} {j} {s}");
            }
        }
        // SVD of X (n × m) and of Xᵀ: T v = s u.
        for tr in [false, true] {
            let xv = MatRef::col_major(&x, n, m).unwrap();
            let t = if tr { xv.t() } else { xv };
            let (r, c) = (t.rows(), t.cols());
            let k = 4;
            let (mut u, mut s, mut v) = (vec![0.0; r * k], vec![0.0; k], vec![0.0; c * k]);
            top_svd(t, k, &mut u, &mut s, &mut v, &mut st.rest()).unwrap();
            for i in 0..k {
                if i > 0 {
                    assert!(s[i] <= s[i - 1]);
                }
                for a in 0..r {
                    let tv: f64 = (0..c).map(|b| t.at(a, b) * v[b + i * c]).sum();
                    assert!((tv - s[i] * u[a + i * r]).abs() < 1e-13);
                }
            }
        }
    }

    #[test]
    fn tiny_singular_values_are_completed() {
        // Rank 1: the second and third right vectors must still be orthonormal.
        let (m, p) = (3, 5);
        let uu = [1.0, 2.0, 2.0];
        let vv = [1.0, 0.0, -1.0, 0.5, 0.0];
        let mut t = vec![0.0; m * p];
        for i in 0..m {
            for j in 0..p {
                t[i + j * m] = uu[i] * vv[j];
            }
        }
        let mut ws = vec![0u8; top_svd_req::<f64>(m, p, 3).bytes().unwrap()];
        let mut st = Stack::new(&mut ws);
        let (mut u, mut s, mut v) = (vec![0.0; m * 3], vec![0.0; 3], vec![0.0; p * 3]);
        top_svd(
            MatRef::col_major(&t, m, p).unwrap(),
            3,
            &mut u,
            &mut s,
            &mut v,
            &mut st,
        )
        .unwrap();
        assert!((s[0] - 3.0 * 1.5).abs() < 1e-14, "{s:?}");
        assert!(s[1] < 1e-14 && s[2] < 1e-14);
        for a in 0..3 {
            for b in 0..3 {
                let d: f64 = (0..p).map(|r| v[r + a * p] * v[r + b * p]).sum();
                let want = if a == b { 1.0 } else { 0.0 };
                assert!((d - want).abs() < 1e-14, "{a} {b} {d}");
            }
        }
    }
}
