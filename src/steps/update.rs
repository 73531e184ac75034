//! The guarded multiplicative update itself (DESIGN §3), elementwise: the
//! bottom of the steps layer, shared by the Lee–Seung solver, the fused sparse
//! U-step and every model's multiplicative steps.

use crate::linalg::real::Real;

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
