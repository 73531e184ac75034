//! Whole solvers, built from [`crate::steps`] and used by [`crate::models`]
//! (lowest first):
//!
//! | module | what |
//! |---|---|
//! | `comm` | what a solver asks of the ranks it runs on (`Collective`): one process (`Local`, every collective a no-op), or a shard of the items (`models::dist`) |
//! //! | `shallow` | the one shallow solver (DESIGN §2, one layer) over a `Collective`: joint NMF's Lee–Seung steps and the MvSL family, on one process or across ranks |
//! | `encode` | out-of-sample encoding: the V-steps with the bases fixed (DESIGN §10) |

pub(crate) mod comm;
pub(crate) mod encode;
pub(crate) mod shallow;
