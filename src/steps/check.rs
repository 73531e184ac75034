//! Validation shared by the solvers: shapes, buffers, values, graph; all of it
//! runs before anything is written.

use crate::data::{check_values, Factors, ViewSet, ViewShape};
use crate::error::Error;
use crate::graph::GraphOp;
use crate::linalg::real::Real;
use crate::par::Parallel;
use crate::steps::scale::Scale;
use crate::steps::{Init, MvslParams, NmfParams};
use crate::work::WorkReq;

/// Common shape checks: at least one view, `K ≥ 1`, all views with `N` items.
/// Returns `(N, max M_v)`.
pub(crate) fn check_shapes(
    shapes: impl IntoIterator<Item = ViewShape>,
    k: usize,
) -> Result<(usize, usize), Error> {
    let mut n = None;
    let mut mmax = 0;
    for s in shapes {
        if s.rows == 0 || s.cols == 0 {
            return Err(Error::ZeroDimension);
        }
        if *n.get_or_insert(s.cols) != s.cols {
            return Err(Error::DimensionMismatch);
        }
        s.rows.checked_mul(s.cols).ok_or(Error::SizeOverflow)?;
        mmax = mmax.max(s.rows);
    }
    let n = n.ok_or(Error::ZeroDimension)?;
    if k == 0 {
        return Err(Error::BadRank);
    }
    Ok((n, mmax))
}

/// What [`validate_par`] measured of inputs it accepted: what a fit on the same inputs
/// need not check or measure again (`models::mvsl::fit_checked`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Checked {
    /// Items.
    pub(crate) n: usize,
    /// The largest `M_v`.
    pub(crate) mmax: usize,
    /// The data scale ([`Scale::of`]).
    pub(crate) scale: Scale,
    /// `½ Σ_v ‖X^(v)‖²_F`, the same bits as [`Scale::half_sq`] at scale 1.
    pub(crate) half: f64,
}

/// Validates everything a fit or an encode reads; returns `(N, max M_v)` and
/// the data scale of a fit ([`Scale::of`]: data too large for the objective to
/// be representable is refused here, with [`Error::InputTooLarge`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn validate<T: Real, VS: ViewSet<T> + ?Sized, F: Factors<T> + ?Sized>(
    views: &VS,
    k: usize,
    params: &NmfParams,
    u: &F,
    u_is_input: bool,
    v: &[T],
    work_len: usize,
    req: impl Fn() -> Result<WorkReq, Error>,
) -> Result<(usize, usize, Scale), Error> {
    let c = validate_par(
        views,
        k,
        params,
        u,
        u_is_input,
        v,
        work_len,
        req,
        Parallel::Serial,
    )?;
    Ok((c.n, c.mmax, c.scale))
}

/// [`validate`] with the passes over the views' values on `par` (the checks and the
/// largest values in tasks fixed by the shapes: the same outcome and error on every
/// pool), returning what it measured ([`Checked`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn validate_par<T: Real, VS: ViewSet<T> + ?Sized, F: Factors<T> + ?Sized>(
    views: &VS,
    k: usize,
    params: &NmfParams,
    u: &F,
    u_is_input: bool,
    v: &[T],
    work_len: usize,
    req: impl Fn() -> Result<WorkReq, Error>,
    par: Parallel,
) -> Result<Checked, Error> {
    params.validate()?;
    let h = views.count();
    let (n, mmax) = check_shapes((0..h).map(|i| views.shape(i)), k)?;
    if u.count() != h {
        return Err(Error::DimensionMismatch);
    }
    for i in 0..h {
        let len = views
            .shape(i)
            .rows
            .checked_mul(k)
            .ok_or(Error::SizeOverflow)?;
        if u.get(i).len() != len {
            return Err(Error::DimensionMismatch);
        }
    }
    if v.len() != k.checked_mul(n).ok_or(Error::SizeOverflow)? {
        return Err(Error::DimensionMismatch);
    }
    req()?.check(work_len)?;
    for i in 0..h {
        views.view(i).check_values_par(true, par)?;
    }
    if u_is_input {
        for i in 0..h {
            check_values(u.get(i), true)?;
        }
    }
    if params.init == Init::Given {
        check_values(v, true)?;
    }
    let (scale, half) = Scale::of_par(views, par)?;
    Ok(Checked {
        n,
        mmax,
        scale,
        half,
    })
}

/// The graph spans the views' items, and a penalty graph comes with a bound on
/// V (else `−β/2 tr(V Lᵖ Vᵀ)` is unbounded below: [`Error::BadParameter`]).
pub(crate) fn check_graph<T: Real, G: GraphOp<T> + ?Sized>(
    params: &MvslParams,
    graph: &G,
    shapes: impl IntoIterator<Item = ViewShape>,
) -> Result<(), Error> {
    if let Some(s) = shapes.into_iter().next() {
        if s.cols != graph.items() {
            return Err(Error::DimensionMismatch);
        }
    }
    if params.beta > 0.0 && !params.vmax.is_finite() && graph.has_penalty() {
        return Err(Error::BadParameter);
    }
    Ok(())
}
