//! Reserved for the C ABI's graph, similarity, kernel, pipeline and evaluation entry
//! points, each to be called through `mvnmf::ffi`
//! with opaque arguments (exit codes 200..=299). Empty here: it calls nothing and
//! proves nothing yet; the calls and the fixes they need are on branch
//! `np-graph` (issue 15), not merged.

/// 0: nothing is called yet.
pub fn run() -> i32 {
    0
}
