//! The models: siblings that each use only the layers below them (the
//! solvers and [`crate::steps`] they share, the views of [`crate::data`], the graph
//! operators of [`crate::graph`]) and never each other.
//!
//! | module | model | objective |
//! |---|---|---|
//! | [`nmf`] | NMF, joint multi-view NMF (ConcatNMF) | `½ Σ_v ‖X^(v) − U^(v) V‖²` |
//! | [`mvsl`] | MvSL-S/L/T, GNMF, MCL (one layer, group sparsity, graph, γ) | DESIGN §2 with `M = 1` |
//! | [`dist`] | NMF, joint NMF, MvSL/MCL with SGE or explicit graphs across ranks (the shallow solver over a caller's allreduce) | as `nmf`, `mvsl` |
//! | [`deep`] | DMCL, DNMF (layer-wise, MCL = one layer) | DESIGN §2 |
//! | [`jsnmf`] | JSNMF: sources over one vocabulary sharing `K` basis vectors | DESIGN §7 |
//! | [`mvel`] | MVEL: embedding and label map from incomplete multi-labels over a graph | DESIGN §8 |

pub mod beta;
pub mod deep;
pub mod dist;
pub mod jsnmf;
pub mod mvel;
pub mod mvsl;
pub mod nmf;
