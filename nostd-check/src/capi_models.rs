//! Reserved for the C ABI's model entry points (NMF, joint NMF, β-NMF, MvSL, deep, JSNMF,
//! MVEL, distributed, data preparation), each to be called through `mvnmf::ffi`
//! with opaque arguments (exit codes 100..=199). Empty here: it calls nothing and
//! proves nothing yet; the calls and the fixes they need are on branch
//! `np-models` (issue 15), not merged.

/// 0: nothing is called yet.
pub fn run() -> i32 {
    0
}
