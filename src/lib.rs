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
//! ## Example
//!
//! A joint NMF of two views of the same six items, one dense and one sparse
//! (CSC); the caller asks for the workspace size, provides every buffer and may
//! watch the objective fall:
//!
//! ```
//! use core::ops::ControlFlow;
//! use mvnmf::models::nmf::{self, NmfParams};
//! use mvnmf::{Csc, Dense, Progress, View};
//!
//! let (n, k) = (6, 2); // items, rank
//! // View 1: 4 features x 6 items, dense, column-major (items are columns).
//! let x1: Vec<f64> = (0..4 * n).map(|i| 1.0 + (i * 7 % 5) as f64).collect();
//! // View 2: 3 features x 6 items, CSC (column pointers, row indices, values).
//! let (col_ptr, row_idx) = ([0, 1, 2, 4, 5, 6, 8], [0, 2, 1, 2, 0, 1, 0, 2]);
//! let values = [1.0, 2.0, 3.0, 1.0, 2.0, 1.0, 4.0, 2.0];
//! let views = [
//!     View::from(Dense::new(&x1, 4, n, 4)?),
//!     View::from(Csc::new(3, n, &col_ptr, &row_idx, &values)?),
//! ];
//!
//! let params = NmfParams { max_iter: 50, ..NmfParams::default() };
//! // The scratch memory: its size from the shapes alone, the buffer from the caller.
//! let bytes = nmf::joint_fit_workspace::<f64>(views.iter().map(|x| x.shape()), k, &params)?;
//! let mut work = vec![0u8; bytes];
//! // The outputs: U1 (4 x k), U2 (3 x k) and the shared V (k x n), column-major.
//! let (mut u1, mut u2, mut v) = (vec![0.0; 4 * k], vec![0.0; 3 * k], vec![0.0; k * n]);
//!
//! let mut trace = Vec::new();
//! let mut watch = |p: &Progress| {
//!     trace.push(p.objective.total);
//!     ControlFlow::Continue(()) // ControlFlow::Break(()) would stop the fit
//! };
//! let us = &mut [&mut u1[..], &mut u2[..]][..];
//! let report = nmf::joint_fit(&views[..], k, &params, us, &mut v, &mut work, Some(&mut watch))?;
//!
//! // The start and one value per iteration, never rising.
//! assert_eq!(trace.len(), report.iterations as usize + 1);
//! assert!(trace.windows(2).all(|w| w[1] <= w[0] + 1e-10 * trace[0]));
//! assert!(report.objective.total < report.initial.total);
//! assert!(v.iter().chain(&u1).chain(&u2).all(|&e| e >= 0.0));
//! # Ok::<(), mvnmf::Error>(())
//! ```
//!
//! The same pattern — `*_workspace` for the size, then the call on the
//! caller's buffers — holds for every routine: the semi-supervised solver
//! ([`models::mvsl::fit`], example there), the deep one
//! ([`models::deep::fit`]), the whole method in one call ([`pipeline::fit`]).
//! Without the `std` feature the `Vec`s become any `&mut` slices, static
//! buffers included (`embedded/cortex-m4f` in the repository).
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
// The C ABI's `export!` (src/ffi/declare.rs) resolves a block of declarations
// one at a time, a shared parameter list one token at a time.
#![recursion_limit = "256"]

#[cfg(test)]
extern crate std;

// Layers, lowest first; each module imports only from the ones above it here
// (CONTRIBUTING.md: "Layers").
pub mod comm;
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
pub use steps::{Init, Monitor, Objective, Phase, Progress, Report, Stop, StopRule, Term};
pub use work::{Stack, WorkReq};
