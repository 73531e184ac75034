//! What every factorization model is built from (DESIGN §3–§5): the driver loop
//! with its report, monitor and stopping rule, the guarded multiplicative steps,
//! the composite-gradient U-step with its proximal maps, the bounded V-step,
//! and the random starts. Models ([`crate::models`]) compose these; they never
//! call each other.

mod driver;
pub mod prox;

pub use driver::{Init, Monitor, Objective, Progress, Report, Stop};
pub(crate) use driver::{notify, step};
