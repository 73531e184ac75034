//! What every iterative solver shares: initialisation choice, objective parts,
//! progress reports to a monitor, the final report.

use crate::error::Error;
use core::ops::ControlFlow;

/// How the factors start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Init {
    /// Seeded uniform random start (the scale is documented per solver).
    Random,
    /// Warm start: the output buffers hold the initial factors on entry
    /// (checked: finite, nonnegative, `V <= vmax`).
    Given,
}

/// The objective and its parts (unused parts are 0).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Objective {
    /// Everything: the sum of the parts below, with their weights.
    pub total: f64,
    /// `½ Σ_v ‖X^(v) − U^(v) V‖²_F`.
    pub reconstruction: f64,
    /// `α Σ_v R(U^(v))` (group sparsity).
    pub sparsity: f64,
    /// `β/2 tr(V Lᵃ Vᵀ)` (affinity graph).
    pub affinity: f64,
    /// `−β/2 tr(V Lᵖ Vᵀ)` (penalty graph; enters the total with this sign).
    pub penalty: f64,
    /// `γ Σ V`.
    pub l1: f64,
}

/// What the monitor sees once per outer iteration (iteration 0 is the start).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    /// Outer iterations completed (0: the initial factors).
    pub iter: u32,
    /// The objective at this iterate.
    pub objective: Objective,
}

/// Why a solver stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// `max_iter` iterations ran (not an error).
    MaxIter,
    /// The relative decrease of the objective fell to `tol` or below.
    Converged,
    /// The monitor asked to stop; the outputs hold the last complete iterate.
    Cancelled,
}

/// What a solver returns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Report {
    /// Outer iterations run.
    pub iterations: u32,
    /// Objective at the start (iteration 0).
    pub initial: Objective,
    /// Objective at the returned factors.
    pub objective: Objective,
    /// Why it stopped.
    pub stop: Stop,
    /// Number of views whose basis `U^(v)` is entirely zero at the end (that
    /// view no longer takes part; for regularised models α was too large).
    pub dead_views: u32,
}

/// The progress callback: called once per outer iteration (and once for the
/// start, `iter = 0`); `ControlFlow::Break(())` stops the solver, which then
/// reports [`Stop::Cancelled`] with the outputs at the last complete iterate.
pub type Monitor<'m> = &'m mut dyn FnMut(&Progress) -> ControlFlow<()>;

/// Relative-decrease test shared by the solvers: stop when
/// `prev − cur <= tol·|prev|` (never when `tol == 0`).
#[inline]
pub(crate) fn converged(prev: f64, cur: f64, tol: f64) -> bool {
    tol > 0.0 && prev - cur <= tol * prev.abs()
}

/// Calls the monitor if there is one; `true` means "stop".
#[inline]
pub(crate) fn notify(monitor: &mut Option<Monitor<'_>>, iter: u32, objective: Objective) -> bool {
    match monitor {
        Some(m) => m(&Progress { iter, objective }).is_break(),
        None => false,
    }
}

/// Records iteration `it` (objective `obj`, previous total `prev`) in the
/// report and tells the monitor; `true` when the run stops here (cancelled, or
/// converged under `tol`).
#[inline]
pub(crate) fn step(
    report: &mut Report,
    monitor: &mut Option<Monitor<'_>>,
    it: u32,
    prev: f64,
    obj: Objective,
    tol: f64,
) -> bool {
    report.iterations = it;
    report.objective = obj;
    if notify(monitor, it, obj) {
        report.stop = Stop::Cancelled;
        return true;
    }
    if converged(prev, obj.total, tol) {
        report.stop = Stop::Converged;
        return true;
    }
    false
}

/// The outer loop of every solver (DESIGN §1, "Progress"). Tells the monitor
/// about the start (`initial`, iteration 0), then for `it = 1..=max_iter` runs
/// `iterate(it)` — one outer iteration, returning the objective at the new
/// iterate — records it, tells the monitor, and stops when the monitor asks
/// (`Stop::Cancelled`, the outputs at the last complete iterate) or when the
/// relative decrease is at most `tol` (`Stop::Converged`). An error from
/// `iterate` ends the run with that error. `dead_views` is left 0: the model
/// knows what a dead view is.
pub(crate) fn run(
    max_iter: u32,
    tol: f64,
    initial: Objective,
    mut monitor: Option<Monitor<'_>>,
    mut iterate: impl FnMut(u32) -> Result<Objective, Error>,
) -> Result<Report, Error> {
    let mut report = Report {
        iterations: 0,
        initial,
        objective: initial,
        stop: Stop::MaxIter,
        dead_views: 0,
    };
    if notify(&mut monitor, 0, initial) {
        report.stop = Stop::Cancelled;
        return Ok(report);
    }
    let mut prev = initial.total;
    for it in 1..=max_iter {
        let obj = iterate(it)?;
        if step(&mut report, &mut monitor, it, prev, obj, tol) {
            break;
        }
        prev = obj.total;
    }
    Ok(report)
}
