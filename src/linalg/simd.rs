//! Run-time CPU dispatch for the hand-written loops (hosted x86-64 builds).
//!
//! A [`Kernel`] is a loop nest written once in safe, generic Rust with an
//! `#[inline(always)]` `run`; [`dispatch`] runs it inside a function compiled
//! for AVX-512F or AVX2+FMA when the CPU has them (so the compiler vectorises
//! it 8 or 4 doubles wide), else as compiled for the baseline target. Without
//! `std` (no run-time detection) it simply runs the baseline code.
//!
//! # Safety
//! Two `unsafe` calls, each into a `#[target_feature]` function right after
//! `is_x86_feature_detected!` confirmed that this CPU has every feature it is
//! compiled for. One of the three files of `linalg/` allowed `unsafe`.
#![allow(unsafe_code)]

/// A loop nest to run under the best available instruction set.
pub(crate) trait Kernel {
    /// What it returns.
    type Out;
    /// The loop nest; implementations mark it `#[inline(always)]`.
    fn run(self) -> Self::Out;
}

#[cfg(all(feature = "std", target_arch = "x86_64"))]
#[target_feature(enable = "avx512f,avx2,fma")]
fn run_avx512<K: Kernel>(k: K) -> K::Out {
    k.run()
}

#[cfg(all(feature = "std", target_arch = "x86_64"))]
#[target_feature(enable = "avx2,fma")]
fn run_avx2<K: Kernel>(k: K) -> K::Out {
    k.run()
}

/// Runs `k` with the widest vector instructions this CPU has.
#[inline]
pub(crate) fn dispatch<K: Kernel>(k: K) -> K::Out {
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    {
        if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU supports every feature `run_avx512` is compiled for.
            return unsafe { run_avx512(k) };
        }
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU supports every feature `run_avx2` is compiled for.
            return unsafe { run_avx2(k) };
        }
    }
    k.run()
}
