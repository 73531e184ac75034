//! The options of the DESIGN §2 family of solvers: [`NmfParams`] (iterations,
//! tolerance, guard, bound, start) and [`MvslParams`] (those plus the weights of
//! group sparsity, graph and L1, and the U-step's search), shared by the models
//! that solve that objective ([`crate::models::nmf`], [`crate::models::mvsl`],
//! [`crate::models::deep`]).

use crate::error::Error;
use crate::par::Parallel;
use crate::steps::prox::Sparsity;
use crate::steps::{Init, StopRule};

/// Options of the NMF solvers (fit and encode).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NmfParams {
    /// Outer iterations at most (default 200; 0 evaluates the start only).
    pub max_iter: u32,
    /// Stop when the objective's relative decrease in one iteration is at most
    /// `tol` (default 1e-6; 0 runs all `max_iter` iterations); `stop` says
    /// how it is measured.
    pub tol: f64,
    /// The stopping rule `tol` applies to (default every iteration;
    /// [`StopRule::ScikitLearn`] is scikit-learn's).
    pub stop: StopRule,
    /// The guard `ε ≥ 0` in `(a + ε)/(b + ε)` (default `f64::EPSILON`; any value
    /// keeps the updates monotone, larger ones slow them near zero entries).
    pub eps: f64,
    /// Upper bound on `V` (default `+∞`, plain NMF; the papers' models use 1).
    pub vmax: f64,
    /// Seed of the random start (default 0).
    pub seed: u64,
    /// Random or caller-given start (default random).
    pub init: Init,
    /// Who runs the parallel regions (default [`Parallel::Serial`]); the
    /// results are the same bits for every choice (`crate::par`).
    pub parallel: Parallel,
}

impl Default for NmfParams {
    fn default() -> Self {
        NmfParams {
            max_iter: 200,
            tol: 1e-6,
            stop: StopRule::EveryIteration,
            eps: f64::EPSILON,
            vmax: f64::INFINITY,
            seed: 0,
            init: Init::Random,
            parallel: Parallel::Serial,
        }
    }
}

impl NmfParams {
    /// [`Error::BadParameter`] unless `tol, eps ≥ 0` finite and `vmax > 0` (∞ allowed).
    pub fn validate(&self) -> Result<(), Error> {
        let ok = self.tol.is_finite()
            && self.tol >= 0.0
            && self.eps.is_finite()
            && self.eps >= 0.0
            && self.vmax > 0.0
            && !self.vmax.is_nan();
        if ok {
            Ok(())
        } else {
            Err(Error::BadParameter)
        }
    }

    /// `(tol, stop)`: what the solver loop stops on.
    pub(crate) fn stopping(&self) -> (f64, StopRule) {
        (self.tol, self.stop)
    }
}

/// Options of the shallow solver. Start from a preset ([`MvslParams::mvsl`],
/// [`MvslParams::mcl`], [`MvslParams::gnmf`], [`MvslParams::joint_nmf`])
/// and override fields.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MvslParams {
    /// Outer iterations at most.
    pub max_iter: u32,
    /// Relative-decrease tolerance (0: run all iterations).
    pub tol: f64,
    /// The stopping rule `tol` applies to ([`StopRule`]).
    pub stop: StopRule,
    /// Division guard ε ≥ 0 (use ε > 0 with graphs or γ > 0).
    pub eps: f64,
    /// Upper bound on V (the papers: 1).
    pub vmax: f64,
    /// Seed of the random start.
    pub seed: u64,
    /// Random or warm start.
    pub init: Init,
    /// Who runs the parallel regions (default serial; same bits for every choice).
    pub parallel: Parallel,
    /// Group norm on each `U^(v)`.
    pub sparsity: Sparsity,
    /// Its weight α ≥ 0.
    pub alpha: f64,
    /// Graph weight β ≥ 0.
    pub beta: f64,
    /// L1 weight γ ≥ 0 on V.
    pub gamma: f64,
    /// Accepted composite-gradient steps per U-step (≥ 1; default 3).
    pub u_inner: u32,
    /// V updates per outer iteration (≥ 1; default 1).
    pub v_inner: u32,
    /// Lipschitz search: increase factor η_u > 1 (default 2).
    pub eta_up: f64,
    /// Lipschitz search: decrease factor η_d ≥ 1 (default 2).
    pub eta_down: f64,
    /// Lower bound L₀ ≥ 0 of the Lipschitz guess (default 0).
    pub l0: f64,
}

impl MvslParams {
    /// Plain joint multi-view NMF (α = β = γ = 0, vmax = ∞): iterates equal
    /// [`crate::models::nmf::joint_fit`]'s.
    pub fn joint_nmf() -> Self {
        let n = NmfParams::default();
        MvslParams {
            max_iter: n.max_iter,
            tol: n.tol,
            stop: n.stop,
            eps: n.eps,
            vmax: n.vmax,
            seed: n.seed,
            init: n.init,
            parallel: n.parallel,
            sparsity: Sparsity::None,
            alpha: 0.0,
            beta: 0.0,
            gamma: 0.0,
            u_inner: 3,
            v_inner: 1,
            eta_up: 2.0,
            eta_down: 2.0,
            l0: 0.0,
        }
    }

    /// MvSL (seed 003 defaults: L1,2 with α = 15, β = 0.02, vmax = 1; seed 000
    /// used α = 10). Pair it with SGE, LDGE or TGE graphs for MvSL-S/L/T.
    pub fn mvsl() -> Self {
        MvslParams {
            sparsity: Sparsity::L12,
            alpha: 15.0,
            beta: 0.02,
            vmax: 1.0,
            ..Self::joint_nmf()
        }
    }

    /// MCL (seed 001 eq. 1, the one-layer DMCL): L1,∞ with α = 100, β = 0.015,
    /// γ = 0.005, vmax = 1, with the SGE graph.
    pub fn mcl() -> Self {
        MvslParams {
            sparsity: Sparsity::L1Inf,
            alpha: 100.0,
            beta: 0.015,
            gamma: 0.005,
            vmax: 1.0,
            ..Self::joint_nmf()
        }
    }

    /// Semi-supervised multi-view GNMF baseline: no sparsity, a within-class kNN
    /// affinity graph only, β = 0.02 (the MvSL papers' graph weight; the
    /// baseline has no published value), vmax = 1. Note the scale degeneracy
    /// (DESIGN §2): with no penalty on U, V can shrink while U grows to make
    /// `tr(V Lᵃ Vᵀ)` vanish; the bound vmax = 1 does not prevent shrinking.
    pub fn gnmf() -> Self {
        MvslParams {
            beta: 0.02,
            vmax: 1.0,
            ..Self::joint_nmf()
        }
    }

    /// [`Error::BadParameter`] unless every weight is finite and in range.
    pub fn validate(&self) -> Result<(), Error> {
        self.nmf_params().validate()?;
        let nonneg = |x: f64| x.is_finite() && x >= 0.0;
        let ok = nonneg(self.alpha)
            && nonneg(self.beta)
            && nonneg(self.gamma)
            && nonneg(self.l0)
            && self.u_inner >= 1
            && self.v_inner >= 1
            && self.eta_up.is_finite()
            && self.eta_up > 1.0
            && self.eta_down.is_finite()
            && self.eta_down >= 1.0;
        if ok {
            Ok(())
        } else {
            Err(Error::BadParameter)
        }
    }

    /// The iteration options alone (for the solvers that take [`NmfParams`]).
    pub fn nmf_params(&self) -> NmfParams {
        NmfParams {
            max_iter: self.max_iter,
            tol: self.tol,
            stop: self.stop,
            eps: self.eps,
            vmax: self.vmax,
            seed: self.seed,
            init: self.init,
            parallel: self.parallel,
        }
    }

    /// `(tol, stop)`: what the solver loop stops on.
    pub(crate) fn stopping(&self) -> (f64, StopRule) {
        (self.tol, self.stop)
    }

    pub(crate) fn proximal(&self) -> bool {
        self.sparsity != Sparsity::None && self.alpha > 0.0
    }
}

impl Default for MvslParams {
    fn default() -> Self {
        Self::mvsl()
    }
}
