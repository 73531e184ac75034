//! Version and ABI checks: what a program, or a binding that mirrors the
//! header's structs (Python `ctypes`, Julia, R glue), compares at start-up to
//! find out that it was built against another `mvnmf.h` than the library it
//! loaded.
//!
//! * `MVNMF_VERSION_MAJOR` / `_MINOR` / `_PATCH`: the version of the header, at
//!   compile time; `mvnmf_version()` gives the library's as a string.
//! * `MVNMF_ABI_VERSION` and `mvnmf_abi_version()`: one number, raised on every
//!   incompatible change of the C ABI (a struct's layout, a function's
//!   signature, a constant's meaning); additions do not raise it. A program
//!   compares the two; they differ when the header and the library do.
//! * `mvnmf_struct_size(MVNMF_STRUCT_…)`: the library's `sizeof` of each public
//!   struct, for bindings that declare the structs themselves (0 for an unknown
//!   code). Codes are stable and never reused; a new struct gets the next one.
//!
//! The shared library's SONAME is `libmvnmf.so.<MVNMF_VERSION_MAJOR>`.

use core::mem::size_of;

use super::*;

/// Major version of the header (the crate's; also the shared library's SONAME
/// suffix).
pub const MVNMF_VERSION_MAJOR: u32 = 0;
/// Minor version of the header.
pub const MVNMF_VERSION_MINOR: u32 = 1;
/// Patch version of the header.
pub const MVNMF_VERSION_PATCH: u32 = 0;

// The three numbers are the crate's: a version bump that forgets them fails
// to compile.
const _: () = assert!(MVNMF_VERSION_MAJOR == number(env!("CARGO_PKG_VERSION_MAJOR")));
const _: () = assert!(MVNMF_VERSION_MINOR == number(env!("CARGO_PKG_VERSION_MINOR")));
const _: () = assert!(MVNMF_VERSION_PATCH == number(env!("CARGO_PKG_VERSION_PATCH")));

/// ABI version of the header: compare it with `mvnmf_abi_version()`.
///
/// 5: `mvnmf_pipeline_params` gained `graph_build` and `ann` (the neighbour search:
/// exact, NN-descent or by size), `mvnmf_progress` gained `phase` and `fraction` (the
/// pipeline reports its set-up phases through the callback too).
///
/// 6: `mvnmf_report` gained `where_arg`, `where_view`, `where_row` and `where_col`
/// (issue 33: where a refusal points, written on refusal too by the solvers that
/// say where).
pub const MVNMF_ABI_VERSION: u32 = 6;

/// The ABI version of the library (`MVNMF_ABI_VERSION` of the header it was
/// built from). A program built against another header finds a different
/// number here.
#[no_mangle]
pub extern "C" fn mvnmf_abi_version() -> u32 {
    MVNMF_ABI_VERSION
}

/// One line per public struct (code constant, stable and never reused: a new
/// struct gets the next one; its type) gives the `MVNMF_STRUCT_*` constants and
/// `mvnmf_struct_size`.
macro_rules! struct_codes {
    ($($name:ident = $code:literal: $t:ident,)*) => {
        $(
            #[doc = concat!(" `mvnmf_struct_size`: `struct ", stringify!($t), "`.")]
            pub const $name: u32 = $code;
        )*

        /// The library's size in bytes of the public struct `which`
        /// (`MVNMF_STRUCT_*`); 0 for an unknown code. A binding that declares the
        /// structs itself compares its sizes with these.
        #[no_mangle]
        pub extern "C" fn mvnmf_struct_size(which: u32) -> usize {
            match which {
                $($name => size_of::<$t>(),)*
                _ => 0,
            }
        }
    };
}

struct_codes! {
    MVNMF_STRUCT_VIEW = 0: mvnmf_view,
    MVNMF_STRUCT_TERM = 1: mvnmf_term,
    MVNMF_STRUCT_OBJECTIVE = 2: mvnmf_objective,
    MVNMF_STRUCT_PROGRESS = 3: mvnmf_progress,
    MVNMF_STRUCT_REPORT = 4: mvnmf_report,
    MVNMF_STRUCT_NMF_PARAMS = 5: mvnmf_nmf_params,
    MVNMF_STRUCT_MVSL_PARAMS = 6: mvnmf_mvsl_params,
    MVNMF_STRUCT_GRAPH = 7: mvnmf_graph,
    MVNMF_STRUCT_DEEP_PARAMS = 8: mvnmf_deep_params,
    MVNMF_STRUCT_JSNMF_PARAMS = 9: mvnmf_jsnmf_params,
    MVNMF_STRUCT_JSNMF_QUERY_PARAMS = 10: mvnmf_jsnmf_query_params,
    MVNMF_STRUCT_MVEL_PARAMS = 11: mvnmf_mvel_params,
    MVNMF_STRUCT_PIPELINE_PARAMS = 12: mvnmf_pipeline_params,
    MVNMF_STRUCT_PIPELINE_REPORT = 13: mvnmf_pipeline_report,
    MVNMF_STRUCT_PREP_PARAMS = 14: mvnmf_prep_params,
    MVNMF_STRUCT_PREP_REPORT = 15: mvnmf_prep_report,
    MVNMF_STRUCT_KERNEL = 16: mvnmf_kernel,
    MVNMF_STRUCT_MKL_PARAMS = 17: mvnmf_mkl_params,
    MVNMF_STRUCT_MKL_REPORT = 18: mvnmf_mkl_report,
    MVNMF_STRUCT_QP_REPORT = 19: mvnmf_qp_report,
    MVNMF_STRUCT_FUSED_KNN_PARAMS = 20: mvnmf_fused_knn_params,
    MVNMF_STRUCT_GRAPH_PARAMS = 21: mvnmf_graph_params,
    MVNMF_STRUCT_FUSED_GRAPH_PARAMS = 22: mvnmf_fused_graph_params,
    MVNMF_STRUCT_CSR_BUFFERS = 23: mvnmf_csr_buffers,
    MVNMF_STRUCT_KNN_PARAMS = 24: mvnmf_knn_params,
    MVNMF_STRUCT_KMEANS_PARAMS = 25: mvnmf_kmeans_params,
    MVNMF_STRUCT_KMEANS_REPORT = 26: mvnmf_kmeans_report,
    MVNMF_STRUCT_MULTILABEL_SCORES = 27: mvnmf_multilabel_scores,
    MVNMF_STRUCT_EVAL_PARAMS = 28: mvnmf_eval_params,
    MVNMF_STRUCT_PROTOCOL_PARAMS = 29: mvnmf_protocol_params,
    MVNMF_STRUCT_CV_PARAMS = 30: mvnmf_cv_params,
    MVNMF_STRUCT_SPLIT_SCORES = 31: mvnmf_split_scores,
    MVNMF_STRUCT_SCORE_SUMMARY = 32: mvnmf_score_summary,
    MVNMF_STRUCT_PROTOCOL_FIT = 33: mvnmf_protocol_fit,
    MVNMF_STRUCT_CV_FIT = 34: mvnmf_cv_fit,
    MVNMF_STRUCT_VIEW_F32 = 35: mvnmf_view_f32,
    MVNMF_STRUCT_PARALLEL = 36: mvnmf_parallel,
    MVNMF_STRUCT_DIST_COMM = 37: mvnmf_dist_comm,
    MVNMF_STRUCT_DIST_TRAFFIC = 38: mvnmf_dist_traffic,
    MVNMF_STRUCT_DIST_GRAPH_TRAFFIC = 39: mvnmf_dist_graph_traffic,
    MVNMF_STRUCT_ANN_PARAMS = 40: mvnmf_ann_params,
}

/// The decimal number `s` (a Cargo version component), at compile time.
const fn number(s: &str) -> u32 {
    let b = s.as_bytes();
    let mut i = 0;
    let mut n = 0u32;
    while i < b.len() {
        assert!(b[i].is_ascii_digit());
        n = n * 10 + (b[i] - b'0') as u32;
        i += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every code up to the last is known and has a nonzero size; the first
    /// unused code answers 0. (The C compiler's `sizeof` of each is
    /// compared with these by ffi-tests/tests/abi.rs.)
    #[test]
    fn every_code_has_a_size_and_unknown_codes_have_none() {
        for code in 0..=MVNMF_STRUCT_ANN_PARAMS {
            assert!(mvnmf_struct_size(code) > 0, "code {code}");
        }
        assert_eq!(mvnmf_struct_size(MVNMF_STRUCT_ANN_PARAMS + 1), 0);
        assert_eq!(mvnmf_struct_size(u32::MAX), 0);
        assert_eq!(mvnmf_abi_version(), MVNMF_ABI_VERSION);
        assert_eq!(number("0"), 0);
        assert_eq!(number("107"), 107);
    }
}
