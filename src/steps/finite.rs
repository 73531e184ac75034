//! The finite-output check a solver runs before it returns `Ok` (issue 31).
//!
//! A solver's magnitude rules (its documented bounds on data, weights and
//! starts) are what keep its iterates finite; this check is the last line
//! behind them: a report whose objective (the total or a part, initial or
//! final) is not finite, or a factor with a non-finite entry, is never
//! returned as `Ok`. The solver returns [`Error::Internal`] instead (the rules
//! should have made it impossible: a bug, please report it); the outputs then
//! hold the last iterate, as after any error past validation.

use crate::data::Factors;
use crate::error::Error;
use crate::linalg::real::Real;
use crate::steps::{Objective, Report};

/// Every entry of `xs` finite.
pub(crate) fn all_finite<T: Real>(xs: &[T]) -> bool {
    xs.iter().all(|x| x.is_finite())
}

/// Every factor of `f` finite.
pub(crate) fn factors_finite<T: Real, F: Factors<T> + ?Sized>(f: &F) -> bool {
    (0..f.count()).all(|i| all_finite(f.get(i)))
}

/// The total and every part of an objective finite (also checked by
/// `crate::steps::run` at every iterate).
pub(crate) fn objective_finite(o: &Objective) -> bool {
    o.total.is_finite() && o.terms().iter().all(|t| t.1.is_finite())
}

/// `Ok(report)` when its objectives are finite and `outputs_finite` holds,
/// else [`Error::Internal`] (module docs).
pub(crate) fn finite_report(report: Report, outputs_finite: bool) -> Result<Report, Error> {
    if outputs_finite && objective_finite(&report.initial) && objective_finite(&report.objective) {
        Ok(report)
    } else {
        Err(Error::Internal)
    }
}

/// [`finite_report`] for the DESIGN §2 family: bases `u` and encodings `v`
/// (in the caller's units), checked as the last thing before `Ok`.
pub(crate) fn finite_outputs<T: Real, F: Factors<T> + ?Sized>(
    report: Report,
    u: &F,
    v: &[T],
) -> Result<Report, Error> {
    finite_report(report, factors_finite(u) && all_finite(v))
}
