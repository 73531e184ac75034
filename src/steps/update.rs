//! The guarded multiplicative update itself (DESIGN §3), elementwise: the
//! bottom of the steps layer, shared by the Lee–Seung solver, the fused sparse
//! U-step and every model's multiplicative steps.

use crate::error::Error;
use crate::linalg::real::Real;
use crate::par::{chunk_len, tasks_for, Parallel};

/// `x ← min(cap, x ∘ (num + ε) ⊘ (den + ε))`.
///
/// With `ε = 0` a zero entry stays zero and a zero denominator leaves the entry
/// as it is (the objective does not depend on it then), so no `0/0` arises.
#[inline]
pub(crate) fn mu_step<T: Real>(x: &mut [T], num: &[T], den: &[T], eps: T, cap: T) {
    for ((xi, &a), &b) in x.iter_mut().zip(num).zip(den) {
        let d = b + eps;
        if d > T::ZERO && *xi != T::ZERO {
            *xi = (*xi * ((a + eps) / d)).min(cap);
        } else {
            *xi = xi.min(cap);
        }
    }
}

/// [`mu_step`] on blocks of entries run as the tasks of one parallel region
/// (elementwise: the same bits for every thread count).
pub(crate) fn mu_step_par<T: Real>(
    x: &mut [T],
    (num, den): (&[T], &[T]),
    (eps, cap): (T, T),
    par: Parallel,
) -> Result<(), Error> {
    let len = x.len();
    if num.len() < len || den.len() < len {
        return Err(Error::Internal);
    }
    let chunk = chunk_len(len, tasks_for(len, 8), 64).max(1);
    par.run_items(x.chunks_mut(chunk).enumerate(), &|(t, xb)| {
        let s = t * chunk;
        let e = s + xb.len();
        let (Some(nb), Some(db)) = (num.get(s..e), den.get(s..e)) else {
            return Err(Error::Internal);
        };
        mu_step(xb, nb, db, eps, cap);
        Ok(())
    })
}
