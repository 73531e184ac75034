//! The guarded multiplicative steps (DESIGN §3) and the products every model of
//! the family forms from them: `P = Σ UᵀU`, `Q = Σ UᵀX`, `G = VVᵀ`, the
//! reconstruction term without another pass over X (the Lee–Seung solver that
//! runs them is `crate::solvers::shallow`).

use crate::data::{ut_x_req, x_vt_req, Csr, Factors, Prepared, View, ViewSet, ViewShape};
use crate::error::Error;
use crate::linalg::mat::{MatMut, MatRef};
use crate::linalg::real::Real;
use crate::linalg::{dot, gemm_req, gram_par, gram_req};
pub(crate) use crate::steps::update::mu_step;
use crate::steps::Objective;
use crate::work::{Stack, WorkReq};

/// Scratch of the product phases (reused by every view and product).
pub(crate) fn products_req<T>(
    shapes: impl IntoIterator<Item = ViewShape>,
    k: usize,
    n: usize,
) -> WorkReq {
    let mut r = WorkReq::any_of(&[gemm_req::<T>(k, n, k), gram_req::<T>(n, k)]);
    for s in shapes {
        r = r.or(x_vt_req::<T>(s, k));
        r = r.or(ut_x_req::<T>(s, k));
        r = r.or(gemm_req::<T>(s.rows, k, k));
        r = r.or(gram_req::<T>(s.rows, k));
    }
    r
}

/// `P ← Σ_v UᵀU` (K×K), `Q ← Σ_v Uᵀ(sX)` (K×N; `s` the data scale, 1 for
/// data of ordinary magnitude).
#[allow(clippy::too_many_arguments)]
pub(crate) fn form_pq<T: Real, VS: ViewSet<T> + ?Sized, F: Factors<T> + ?Sized>(
    views: &VS,
    prep: Option<&Prepared<'_, T>>,
    s: T,
    k: usize,
    u: &F,
    p: &mut [T],
    q: &mut [T],
    st: &mut Stack<'_>,
) -> Result<(), Error> {
    for i in 0..views.count() {
        let csr = prep.and_then(|pr| pr.get(views, i));
        pq_view(&views.view(i), csr, s, u.get(i), k, i > 0, p, q, st)?;
    }
    Ok(())
}

/// One view's `P (+)= UᵀU`, `Q (+)= Uᵀ(sX)` (`accumulate`: add, else overwrite).
#[allow(clippy::too_many_arguments)]
pub(crate) fn pq_view<T: Real>(
    x: &View<'_, T>,
    csr: Option<Csr<'_, T>>,
    s: T,
    u: &[T],
    k: usize,
    accumulate: bool,
    p: &mut [T],
    q: &mut [T],
    st: &mut Stack<'_>,
) -> Result<(), Error> {
    let beta = if accumulate { T::ONE } else { T::ZERO };
    let um = MatRef::col_major(u, x.rows(), k)?;
    gram_par(um, beta, MatMut::col_major(p, k, k)?, st)?;
    x.ut_x_scaled(csr, s, u, k, beta, q, st)
}

/// `G ← V Vᵀ`.
pub(crate) fn gram<T: Real>(
    v: &[T],
    k: usize,
    n: usize,
    g: &mut [T],
    st: &mut Stack<'_>,
) -> Result<(), Error> {
    let vm = MatRef::col_major(v, k, n)?;
    gram_par(vm.t(), T::ZERO, MatMut::col_major(g, k, k)?, st)
}

/// `½‖X‖² − ⟨Q, V⟩ + ½⟨P, G⟩`.
pub(crate) fn objective<T: Real>(half_x2: f64, q: &[T], v: &[T], p: &[T], g: &[T]) -> Objective {
    let r = half_x2 - dot(q, v) + 0.5 * dot(p, g);
    Objective::family(r, r, 0.0, 0.0, 0.0, 0.0)
}

pub(crate) fn dead_views<T: Real, F: Factors<T> + ?Sized>(u: &F) -> u32 {
    (0..u.count())
        .filter(|&i| u.get(i).iter().all(|&x| x == T::ZERO))
        .count() as u32
}
