//! # mvnmf — semi-supervised multi-view nonnegative factorization on caller buffers
//!
//! mvnmf factorizes several feature views `X^(v)` (`M_v × N`, items are columns)
//! of the same `N` items into per-view bases `U^(v)` (`M_v × K`) and one shared
//! nonnegative encoding `V` (`K × N`):
//!
//! ```text
//! O(U, V) = ½ Σ_v ‖X^(v) − Ũ^(v) V‖²_F + α Σ_v R(U^(v)) + β/2 [tr(V Lᵃ Vᵀ) − tr(V Lᵖ Vᵀ)] + γ ΣV
//! s.t.  U ≥ 0,  0 ≤ V ≤ vmax,     Ũ^(v) = U_1^(v) ⋯ U_M^(v)
//! ```
//!
//! with presets for the papers' models and baselines. Where to start:
//!
//! | module | what |
//! |---|---|
//! | [`models::nmf`] | NMF and joint multi-view NMF (ConcatNMF), out-of-sample encoding |
//! | [`models::mvsl`] | the graph-regularised solver: MvSL-S/L/T, GNMF, MCL presets |
//! | [`models::deep`] | layer-wise deep factorization: DMCL, DNMF (MCL = one layer) |
//! | [`pipeline`] | labels → MKL weights → graph → factorization in one call |
//! | [`graph`], [`similarity`] | SGE/LDGE/TGE graphs, base kernels, MKL, fused kNN |
//! | [`eval`] | splits, kNN, k-means, ACC/NMI, retrieval and multi-label metrics |
//! | [`ffi`] | the C ABI (`include/mvnmf.h`) |
//!
//! The modules are layers, lowest first: [`error`], [`work`] → [`linalg`] →
//! [`data`] → [`similarity`] → [`graph`] → [`steps`] → [`models`] →
//! [`pipeline`] → [`eval`] → [`ffi`]; each imports only from the layers before
//! it, and no model imports another (`CONTRIBUTING.md`, "Layers").
//!
//! ## Conventions
//! * **Column-major, items are columns.** A dense view is `(data, rows, cols,
//!   col_stride)`; a sparse view is CSC (`col_ptr[N+1]`, `row_idx`, `values`).
//!   Both go through [`View`], which offers exactly the products the solvers
//!   need: `X·Vᵀ` and `Uᵀ·X` (sparse: `O(nnz·K)`), `‖X‖²_F`.
//! * **No allocation.** Every routine `foo` has a twin `foo_workspace(...)` that
//!   returns, from dimensions and options alone, the number of bytes of scratch
//!   it needs, alignment slack included: pass a `&mut [u8]` of at least that
//!   many bytes, of any alignment. See [`work`].
//! * **Validate first.** Every argument is checked before anything is written;
//!   on error the outputs are untouched and the [`Error`] says what was wrong.
//! * **Monotone.** Every solver's objective never increases (guarded
//!   multiplicative updates, DESIGN §3); the optional monitor sees it each
//!   iteration and may stop the solver.
//! * **Deterministic.** Random initialisation comes from a seed; same inputs,
//!   same seed, same build: bitwise the same output, whatever runs the
//!   parallel regions ([`Parallel`] in the solvers' options: serial by default,
//!   the built-in pool at any size, or the host's own pool; [`par`]).
//!
//! ## Features
//! * `std` (default): dense products through the `gemm` crate (run-time SIMD
//!   detection; it allocates its own packing buffers), and on x86-64 CPUs with
//!   AVX2 + FMA (not AVX-512) hand-written kernels for the sparse products of
//!   `f64` views (`linalg::spk`). Without it the crate is
//!   `#![no_std]`, never allocates, and uses the blocked kernel in
//!   `linalg::blocked`, which packs into the caller's workspace, compiled for
//!   the widest instruction set the CPU has (detected with `cpuid`:
//!   [`linalg::detected_level`]; FMA register tiles on AVX2 and AVX-512, so the
//!   levels differ in the last bits, each deterministic).
//!   `std` also brings the built-in thread pool of [`Parallel::Threads`]
//!   (rayon); without it `Threads(n)` is serial and [`Parallel::Host`] is the
//!   way to use several cores.
//! * `threading`: kept for compatibility, the same as `std` (threads are an
//!   option of each call now).
//! * `nalgebra`: `interop` — nalgebra matrices and contiguous views as views,
//!   blocks of them as strided views, and nalgebra matrices as the factors a
//!   solver writes, all without copies (no_std: nalgebra without its `std`).
//!
//! ## Safety
//! `unsafe` lives in [`ffi`] (the exported C ABI) and in four named files of
//! [`linalg`], each with a `# Safety` section: `linalg::hosted` (the call into
//! the `gemm` crate's raw-pointer GEMM, after the operands' extents have been
//! checked against their slices), `linalg::simd` (run-time SIMD dispatch),
//! `linalg::spk` (the vector loads and stores of the hosted sparse row kernels,
//! each on a range checked against its slice) and `linalg::microk` (the AVX
//! register tile of the no_std GEMM, its operands' extents checked first). Everything else is
//! `#![deny(unsafe_code)]`.
#![cfg_attr(not(feature = "std"), no_std)]
#![deny(unsafe_code)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

#[cfg(test)]
extern crate std;

// Layers, lowest first; each module imports only from the ones above it here
// (CONTRIBUTING.md: "Layers").
pub mod error;
pub mod par;
pub(crate) mod rng;
pub mod work;

pub mod linalg;

pub mod data;
#[cfg(feature = "nalgebra")]
pub mod interop;

pub mod prep;

pub mod similarity;

pub mod graph;

pub mod steps;

pub(crate) mod solvers;

pub mod models;

pub mod pipeline;

pub mod eval;

pub mod ffi;

pub use data::{Csc, Dense, View, ViewKind, ViewSet, ViewShape};
pub use error::Error;
pub use linalg::real::Real;
pub use par::{HostPool, Parallel};
pub use steps::{Init, Monitor, Objective, Progress, Report, Stop, StopRule, Term};
pub use work::{Stack, WorkReq};
