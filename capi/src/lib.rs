//! The C library of mvnmf.
//!
//! Builds `libmvnmf.a` and `libmvnmf.so` from the `mvnmf` crate's C ABI
//! (`mvnmf::ffi`, header `include/mvnmf.h`) with the hosted (`std`) kernels.
//! It is a separate crate because Cargo builds every crate type a library lists
//! even when it is only a dependency, and a staticlib of the `no_std` core would
//! need a panic handler. Build it with `cargo build --release -p mvnmf-capi`.
pub use mvnmf_core::ffi::*;
