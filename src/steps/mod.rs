//! What every factorization model is built from (DESIGN §3–§5), lowest first:
//!
//! | module | what |
//! |---|---|
//! | `driver` | the outer loop every solver runs: report, monitor, cancel, stopping rule |
//! | `params` | [`NmfParams`], [`MvslParams`]: the options of the DESIGN §2 family |
//! | `check` | validation shared by the solvers (shapes, buffers, values, graph) |
//! | `scale` | the power-of-two data scale of a fit (data far above 1; issue 15) |
//! | `finite` | the finite-output check before a solver returns `Ok` (issue 31) |
//! | `init` | seeded random starts |
//! | `update`, `mu`, `fused` | the guarded multiplicative update, `P`, `Q`, `G`, the reconstruction term; the fused sparse U-step |
//! | [`prox`] | the composite-gradient U-step and the group norms' proximal maps (DESIGN §4) |
//! | [`shard`] | a shard's partial statistics (sums over items) and the [`shard::Comm`] of a distributed fit |
//! | `vstep` | the bounded V-step with graph embedding (DESIGN §5), the weighted objective |
//!
//! Whole solvers built from these are in `crate::solvers`; models
//! ([`crate::models`]) compose both and never call each other.

pub(crate) mod check;
mod driver;
pub(crate) mod finite;
pub(crate) mod fused;
pub(crate) mod init;
pub(crate) mod mu;
pub mod nndsvd;
mod params;
pub mod prox;
pub(crate) mod scale;
pub mod shard;
pub(crate) mod update;
pub(crate) mod vstep;

pub(crate) use driver::run;
pub use driver::{
    Init, Monitor, Objective, Phase, Progress, Report, Stop, StopRule, Term, MAX_TERMS,
};
pub(crate) use finite::finite_outputs;
pub use nndsvd::{nndsvd, nndsvd_workspace, Nndsvd};
pub use params::{MvslParams, NmfParams};
