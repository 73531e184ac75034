//! What every iterative solver shares: initialisation choice, objective parts,
//! progress reports to a monitor, the final report.

use crate::error::Error;
use crate::steps::finite::objective_finite;
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

/// A named part of an objective. The DESIGN §2 family (NMF, joint NMF, the
/// MvSL/MCL family, DMCL) reports the first five; a model with other parts
/// adds its own kinds here, and its reports carry them in the same
/// [`Objective`] (the C ABI's `mvnmf_objective` does not change).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Term {
    /// `½ Σ_v ‖X^(v) − U^(v) V‖²_F`.
    Reconstruction = 0,
    /// `α Σ_v R(U^(v))` (group sparsity).
    Sparsity = 1,
    /// `β/2 tr(V Lᵃ Vᵀ)` (affinity graph).
    Affinity = 2,
    /// `−β/2 tr(V Lᵖ Vᵀ)` (penalty graph; enters the total with this sign).
    Penalty = 3,
    /// `γ Σ V`.
    L1 = 4,
    /// `−tr(Yᵀ Q H)`: MVEL's fit to the given labels (enters with this sign).
    LabelFit = 5,
    /// `θ₂ tr(Hᵀ Qᵀ L_ρ Q H)`: MVEL's label-correlation term.
    LabelCorrelation = 6,
    /// `Σ_v D_β(X^(v) | U^(v) V)`: the β-divergence of `models::beta`.
    Divergence = 7,
}

impl Term {
    /// Every kind, in code order.
    pub const ALL: [Term; 8] = [
        Term::Reconstruction,
        Term::Sparsity,
        Term::Affinity,
        Term::Penalty,
        Term::L1,
        Term::LabelFit,
        Term::LabelCorrelation,
        Term::Divergence,
    ];

    /// The kind with this code (`MVNMF_TERM_*`).
    pub fn from_code(code: u32) -> Option<Term> {
        Term::ALL.iter().copied().find(|t| *t as u32 == code)
    }

    /// Its name, NUL-terminated (for C).
    pub const fn c_name(self) -> &'static str {
        match self {
            Term::Reconstruction => "reconstruction\0",
            Term::Sparsity => "sparsity\0",
            Term::Affinity => "affinity\0",
            Term::Penalty => "penalty\0",
            Term::L1 => "l1\0",
            Term::LabelFit => "label_fit\0",
            Term::LabelCorrelation => "label_correlation\0",
            Term::Divergence => "divergence\0",
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        let n = self.c_name();
        &n[..n.len() - 1]
    }
}

/// Most parts one objective reports.
pub const MAX_TERMS: usize = 8;

/// The objective: its total and its named parts (at most [`MAX_TERMS`]; the
/// DESIGN §2 family reports all five of its parts, unused ones as 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Objective {
    /// Everything: the sum of the parts, with their weights.
    pub total: f64,
    n_terms: usize,
    terms: [(Term, f64); MAX_TERMS],
}

impl Default for Objective {
    fn default() -> Self {
        Objective {
            total: 0.0,
            n_terms: 0,
            terms: [(Term::Reconstruction, 0.0); MAX_TERMS],
        }
    }
}

impl Objective {
    /// `total` with these parts (at most [`MAX_TERMS`]; further ones are dropped).
    pub fn new(total: f64, parts: &[(Term, f64)]) -> Self {
        let mut o = Objective {
            total,
            ..Objective::default()
        };
        for (d, &p) in o.terms.iter_mut().zip(parts) {
            *d = p;
            o.n_terms += 1;
        }
        o
    }

    /// The parts of the DESIGN §2 objective, in [`Term`] order.
    pub(crate) fn family(
        total: f64,
        rec: f64,
        sparsity: f64,
        affinity: f64,
        penalty: f64,
        l1: f64,
    ) -> Self {
        Objective::new(
            total,
            &[
                (Term::Reconstruction, rec),
                (Term::Sparsity, sparsity),
                (Term::Affinity, affinity),
                (Term::Penalty, penalty),
                (Term::L1, l1),
            ],
        )
    }

    /// The total and every part times `f` (the solvers' power-of-two data
    /// scale back to the caller's units; exact).
    pub(crate) fn scaled(mut self, f: f64) -> Self {
        self.total *= f;
        self.terms
            .iter_mut()
            .take(self.n_terms)
            .for_each(|t| t.1 *= f);
        self
    }

    /// The parts, in the model's order.
    pub fn terms(&self) -> &[(Term, f64)] {
        self.terms.get(..self.n_terms).unwrap_or_default()
    }

    /// The value of part `t` (0 when the model has no such part).
    pub fn get(&self, t: Term) -> f64 {
        self.terms()
            .iter()
            .find(|(k, _)| *k == t)
            .map_or(0.0, |&(_, x)| x)
    }

    /// [`Term::Reconstruction`].
    pub fn reconstruction(&self) -> f64 {
        self.get(Term::Reconstruction)
    }
    /// [`Term::Sparsity`].
    pub fn sparsity(&self) -> f64 {
        self.get(Term::Sparsity)
    }
    /// [`Term::Affinity`].
    pub fn affinity(&self) -> f64 {
        self.get(Term::Affinity)
    }
    /// [`Term::Penalty`].
    pub fn penalty(&self) -> f64 {
        self.get(Term::Penalty)
    }
    /// [`Term::L1`].
    pub fn l1(&self) -> f64 {
        self.get(Term::L1)
    }
}

/// The phase of a call a [`Progress`] reports on. The solvers report only
/// [`Phase::Iterations`]; the pipeline ([`crate::pipeline`]) reports its set-up phases
/// before them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Phase {
    /// The solver's outer iterations (`iter` and `objective` are the iterate's).
    #[default]
    Iterations,
    /// The set-up before the neighbour graph: the fusion weights (kernel–target alignment).
    Setup,
    /// The neighbour graph build.
    Graph,
}

/// What the monitor sees: once per outer iteration (iteration 0 is the start), and in
/// the pipeline at the start and the end of each set-up phase.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    /// Outer iterations completed (0: the initial factors; 0 in the set-up phases).
    pub iter: u32,
    /// The objective at this iterate ([`Phase::Iterations`] only; zero in the set-up
    /// phases, which have no iterate yet).
    pub objective: Objective,
    /// Which phase this is about.
    pub phase: Phase,
    /// How far the phase is, in `[0, 1]`: `iter / max_iter` in the iterations (1 for
    /// `max_iter = 0`; a run that converges stops before 1), 0 at the start and 1 at the
    /// end of a set-up phase.
    pub fraction: f64,
}

impl Progress {
    /// The report of a set-up `phase` at `fraction` (no iterate: `iter` 0, objective zero).
    pub fn setup(phase: Phase, fraction: f64) -> Self {
        Progress {
            iter: 0,
            objective: Objective::default(),
            phase,
            fraction,
        }
    }
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

/// When a solver stops before `max_iter` iterations (never when `tol == 0`).
/// `f_t` is the objective's total after iteration `t` (`f_0`: the start).
///
/// * [`StopRule::EveryIteration`] (the default): after every iteration, stop
///   when `f_{t−1} − f_t ≤ tol·|f_{t−1}|`.
/// * [`StopRule::ScikitLearn`]: scikit-learn's rule for `NMF(solver="mu")`
///   (`_fit_multiplicative_update`): with the error `e_t = √(2·f_t)` (for NMF
///   `‖X − UV‖_F`, for β-NMF `√(2·D_β)`, scikit-learn's `_beta_divergence(…,
///   square_root=True)`), checked at `t = 10, 20, …` only: stop when
///   `(e_{t−10} − e_t) / e_0 < tol`. The same `tol` and start give the same
///   iteration count as scikit-learn's `n_iter_` (tests/stopping.rs). For the
///   regularised models `f_t` is the whole objective; a start with `e_0 = 0`
///   stops at the first check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum StopRule {
    /// Relative decrease of the objective, every iteration.
    #[default]
    EveryIteration,
    /// scikit-learn's: the error's decrease over 10 iterations relative to the
    /// initial error, checked every 10 iterations.
    ScikitLearn,
}

/// The state of a stopping rule over one run.
struct Stopping {
    tol: f64,
    rule: StopRule,
    /// `EveryIteration`: `f_{t−1}`; `ScikitLearn`: `e` at the last check.
    prev: f64,
    /// `ScikitLearn`: `e_0`.
    first: f64,
}

impl Stopping {
    /// scikit-learn's error `√(2 f)` (a rounding-negative `f` counts as 0).
    fn error(total: f64) -> f64 {
        libm::sqrt(2.0 * total.max(0.0))
    }

    fn new(tol: f64, rule: StopRule, initial: f64) -> Self {
        let first = match rule {
            StopRule::EveryIteration => initial,
            StopRule::ScikitLearn => Self::error(initial),
        };
        Stopping {
            tol,
            rule,
            prev: first,
            first,
        }
    }

    /// Whether the run stops after iteration `it` with objective `cur`.
    fn stop(&mut self, it: u32, cur: f64) -> bool {
        if self.tol <= 0.0 {
            return false;
        }
        match self.rule {
            StopRule::EveryIteration => {
                let stop = self.prev - cur <= self.tol * self.prev.abs();
                self.prev = cur;
                stop
            }
            StopRule::ScikitLearn => {
                if !it.is_multiple_of(10) {
                    return false;
                }
                let e = Self::error(cur);
                let stop = self.first == 0.0 || (self.prev - e) / self.first < self.tol;
                self.prev = e;
                stop
            }
        }
    }
}

/// Calls the monitor if there is one; `true` means "stop".
#[inline]
pub(crate) fn notify(
    monitor: &mut Option<Monitor<'_>>,
    (iter, max_iter): (u32, u32),
    objective: Objective,
) -> bool {
    match monitor {
        Some(m) => {
            let fraction = if max_iter == 0 {
                1.0
            } else {
                f64::from(iter) / f64::from(max_iter)
            };
            let phase = Phase::Iterations;
            let p = Progress {
                iter,
                objective,
                phase,
                fraction,
            };
            m(&p).is_break()
        }
        None => false,
    }
}

/// The outer loop of every solver (DESIGN §1, "Progress"). Tells the monitor
/// about the start (`initial`, iteration 0), then for `it = 1..=max_iter` runs
/// `iterate(it)` — one outer iteration, returning the objective at the new
/// iterate — records it, tells the monitor, and stops when the monitor asks
/// (`Stop::Cancelled`, the outputs at the last complete iterate) or when
/// `rule` says so under `tol` (`Stop::Converged`, [`StopRule`]). An error from
/// `iterate` ends the run with that error. An objective (the start's or an
/// iterate's, its total or any part) that is not finite ends it with
/// [`Error::Internal`] at once, before the monitor sees it (issue 31: never `Ok`
/// with a non-finite objective; the magnitude rules make it impossible, so it is
/// a bug; the outputs hold that iterate). `dead_views` is left 0: the model
/// knows what a dead view is.
pub(crate) fn run(
    max_iter: u32,
    (tol, rule): (f64, StopRule),
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
    if !objective_finite(&initial) {
        return Err(Error::Internal);
    }
    if notify(&mut monitor, (0, max_iter), initial) {
        report.stop = Stop::Cancelled;
        return Ok(report);
    }
    let mut stopping = Stopping::new(tol, rule, initial.total);
    for it in 1..=max_iter {
        let obj = iterate(it)?;
        if !objective_finite(&obj) {
            return Err(Error::Internal);
        }
        report.iterations = it;
        report.objective = obj;
        if notify(&mut monitor, (it, max_iter), obj) {
            report.stop = Stop::Cancelled;
            break;
        }
        if stopping.stop(it, obj.total) {
            report.stop = Stop::Converged;
            break;
        }
    }
    Ok(report)
}
