//! Run-time CPU dispatch for the hand-written loops (x86-64, with or without
//! `std`).
//!
//! A [`Kernel`] is a loop nest written once in safe, generic Rust with an
//! `#[inline(always)]` `run`; [`dispatch`] runs it inside a function compiled
//! for AVX-512F or AVX2+FMA when the CPU has them (so the compiler vectorises
//! it 8 or 4 doubles wide), else as compiled for the baseline target. The
//! portable loops use no fused multiply-add and no reassociation, so they give
//! the same bits at every level (the sparse gather/scatter); the blocked GEMM
//! runs its FMA register tiles (`linalg::microk`) at the AVX levels, which
//! differ from the portable tile in the last bits (tests/simd_levels.rs checks
//! determinism within a level and agreement across levels).
//!
//! Detection: with `std`, `is_x86_feature_detected!`; without it (the
//! embedded/no_std build, issue 18), `cpuid` and `xgetbv` through `core::arch`
//! — AVX2 and FMA from `cpuid` leaves 1 and 7, AVX-512F from leaf 7, each only
//! when the OS saves the wider registers (`OSXSAVE` and the `XCR0` bits). The
//! level is detected once and cached. [`force_level`] caps it (tests and
//! benchmarks run every path on one machine); other architectures run the
//! baseline code (NEON is aarch64's baseline, so the baseline build already
//! vectorises there).
//!
//! # Safety
//! The `unsafe` here: the calls into the `#[target_feature]` functions, each
//! made only when the detected level says this CPU has every feature the
//! function is compiled for; `cpuid` (always present on x86-64); and `xgetbv`,
//! executed only when `cpuid` reports `OSXSAVE`. One of the four files of
//! `linalg/` allowed `unsafe`.
#![allow(unsafe_code)]

use core::sync::atomic::{AtomicU8, Ordering};

/// A loop nest to run under the best available instruction set.
pub(crate) trait Kernel {
    /// What it returns.
    type Out;
    /// The loop nest; implementations mark it `#[inline(always)]`.
    fn run(self) -> Self::Out;
}

/// The instruction sets the dispatched kernels choose between.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum SimdLevel {
    /// The target's baseline (x86-64: SSE2).
    Baseline = 1,
    /// AVX2 and FMA.
    Avx2 = 2,
    /// AVX-512F (with AVX2 and FMA).
    Avx512 = 3,
}

/// 0: not detected yet; else the detected level.
static DETECTED: AtomicU8 = AtomicU8::new(0);
/// The cap set by [`force_level`] (`Avx512`: none).
static CAP: AtomicU8 = AtomicU8::new(SimdLevel::Avx512 as u8);

fn level_of(code: u8) -> SimdLevel {
    match code {
        3 => SimdLevel::Avx512,
        2 => SimdLevel::Avx2,
        _ => SimdLevel::Baseline,
    }
}

#[cfg(all(feature = "std", target_arch = "x86_64"))]
fn detect() -> SimdLevel {
    if std::is_x86_feature_detected!("avx512f")
        && std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("fma")
    {
        SimdLevel::Avx512
    } else if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        SimdLevel::Avx2
    } else {
        SimdLevel::Baseline
    }
}

#[cfg(all(not(feature = "std"), target_arch = "x86_64"))]
#[target_feature(enable = "xsave")]
fn xcr0() -> u64 {
    // SAFETY: only called after cpuid reported OSXSAVE (the OS enabled XGETBV).
    unsafe { core::arch::x86_64::_xgetbv(0) }
}

#[cfg(all(not(feature = "std"), target_arch = "x86_64"))]
// `__cpuid` became a safe function in newer Rust than the crate's minimum.
#[allow(unused_unsafe)]
fn detect() -> SimdLevel {
    use core::arch::x86_64::{__cpuid, __cpuid_count};
    // SAFETY: cpuid exists on every x86-64 CPU; leaf 0 gives the highest leaf.
    let max_leaf = unsafe { __cpuid(0) }.eax;
    if max_leaf < 7 {
        return SimdLevel::Baseline;
    }
    // SAFETY: leaves 1 and 7 are at most `max_leaf`.
    let (l1, l7) = unsafe { (__cpuid(1), __cpuid_count(7, 0)) };
    let (fma, osxsave, avx) = (
        l1.ecx >> 12 & 1 == 1,
        l1.ecx >> 27 & 1 == 1,
        l1.ecx >> 28 & 1 == 1,
    );
    if !(osxsave && avx && fma) {
        return SimdLevel::Baseline;
    }
    // SAFETY: OSXSAVE is set, so XGETBV is enabled.
    let xcr = unsafe { xcr0() };
    let ymm = xcr & 0b110 == 0b110; // XMM and YMM state
    let zmm = xcr & 0b1110_0110 == 0b1110_0110; // plus opmask, ZMM_Hi256, Hi16_ZMM
    let (avx2, avx512f) = (l7.ebx >> 5 & 1 == 1, l7.ebx >> 16 & 1 == 1);
    if ymm && avx2 && zmm && avx512f {
        SimdLevel::Avx512
    } else if ymm && avx2 {
        SimdLevel::Avx2
    } else {
        SimdLevel::Baseline
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> SimdLevel {
    SimdLevel::Baseline
}

/// The level this CPU supports (detected once).
pub fn detected_level() -> SimdLevel {
    match DETECTED.load(Ordering::Relaxed) {
        0 => {
            let l = detect();
            DETECTED.store(l as u8, Ordering::Relaxed);
            l
        }
        c => level_of(c),
    }
}

/// Caps the level the dispatched kernels use (`SimdLevel::Avx512`: no cap, the
/// default), for every thread; the detected level is never exceeded. For
/// tests and benchmarks (every path on one machine).
#[doc(hidden)]
pub fn force_level(cap: SimdLevel) {
    CAP.store(cap as u8, Ordering::Relaxed);
}

/// The level the dispatched kernels run at now: the detected one, capped.
pub fn active_level() -> SimdLevel {
    detected_level().min(level_of(CAP.load(Ordering::Relaxed)))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
fn run_avx512<K: Kernel>(k: K) -> K::Out {
    k.run()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn run_avx2<K: Kernel>(k: K) -> K::Out {
    k.run()
}

/// Runs `k` with the widest vector instructions this CPU has (up to the cap).
#[inline]
pub(crate) fn dispatch<K: Kernel>(k: K) -> K::Out {
    #[cfg(target_arch = "x86_64")]
    match active_level() {
        // SAFETY: the detected level says the CPU supports every feature
        // `run_avx512` is compiled for.
        SimdLevel::Avx512 => return unsafe { run_avx512(k) },
        // SAFETY: likewise for `run_avx2`.
        SimdLevel::Avx2 => return unsafe { run_avx2(k) },
        SimdLevel::Baseline => {}
    }
    k.run()
}
