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

/// `mvnmf_struct_size`: `struct mvnmf_view`.
pub const MVNMF_STRUCT_VIEW: u32 = 0;
/// `mvnmf_struct_size`: `struct mvnmf_term`.
pub const MVNMF_STRUCT_TERM: u32 = 1;
/// `mvnmf_struct_size`: `struct mvnmf_objective`.
pub const MVNMF_STRUCT_OBJECTIVE: u32 = 2;
/// `mvnmf_struct_size`: `struct mvnmf_progress`.
pub const MVNMF_STRUCT_PROGRESS: u32 = 3;
/// `mvnmf_struct_size`: `struct mvnmf_report`.
pub const MVNMF_STRUCT_REPORT: u32 = 4;
/// `mvnmf_struct_size`: `struct mvnmf_nmf_params`.
pub const MVNMF_STRUCT_NMF_PARAMS: u32 = 5;
/// `mvnmf_struct_size`: `struct mvnmf_mvsl_params`.
pub const MVNMF_STRUCT_MVSL_PARAMS: u32 = 6;
/// `mvnmf_struct_size`: `struct mvnmf_graph`.
pub const MVNMF_STRUCT_GRAPH: u32 = 7;
/// `mvnmf_struct_size`: `struct mvnmf_deep_params`.
pub const MVNMF_STRUCT_DEEP_PARAMS: u32 = 8;
/// `mvnmf_struct_size`: `struct mvnmf_jsnmf_params`.
pub const MVNMF_STRUCT_JSNMF_PARAMS: u32 = 9;
/// `mvnmf_struct_size`: `struct mvnmf_jsnmf_query_params`.
pub const MVNMF_STRUCT_JSNMF_QUERY_PARAMS: u32 = 10;
/// `mvnmf_struct_size`: `struct mvnmf_mvel_params`.
pub const MVNMF_STRUCT_MVEL_PARAMS: u32 = 11;
/// `mvnmf_struct_size`: `struct mvnmf_pipeline_params`.
pub const MVNMF_STRUCT_PIPELINE_PARAMS: u32 = 12;
/// `mvnmf_struct_size`: `struct mvnmf_pipeline_report`.
pub const MVNMF_STRUCT_PIPELINE_REPORT: u32 = 13;
/// `mvnmf_struct_size`: `struct mvnmf_prep_params`.
pub const MVNMF_STRUCT_PREP_PARAMS: u32 = 14;
/// `mvnmf_struct_size`: `struct mvnmf_prep_report`.
pub const MVNMF_STRUCT_PREP_REPORT: u32 = 15;
/// `mvnmf_struct_size`: `struct mvnmf_kernel`.
pub const MVNMF_STRUCT_KERNEL: u32 = 16;
/// `mvnmf_struct_size`: `struct mvnmf_mkl_params`.
pub const MVNMF_STRUCT_MKL_PARAMS: u32 = 17;
/// `mvnmf_struct_size`: `struct mvnmf_mkl_report`.
pub const MVNMF_STRUCT_MKL_REPORT: u32 = 18;
/// `mvnmf_struct_size`: `struct mvnmf_qp_report`.
pub const MVNMF_STRUCT_QP_REPORT: u32 = 19;
/// `mvnmf_struct_size`: `struct mvnmf_fused_knn_params`.
pub const MVNMF_STRUCT_FUSED_KNN_PARAMS: u32 = 20;
/// `mvnmf_struct_size`: `struct mvnmf_graph_params`.
pub const MVNMF_STRUCT_GRAPH_PARAMS: u32 = 21;
/// `mvnmf_struct_size`: `struct mvnmf_fused_graph_params`.
pub const MVNMF_STRUCT_FUSED_GRAPH_PARAMS: u32 = 22;
/// `mvnmf_struct_size`: `struct mvnmf_csr_buffers`.
pub const MVNMF_STRUCT_CSR_BUFFERS: u32 = 23;
/// `mvnmf_struct_size`: `struct mvnmf_knn_params`.
pub const MVNMF_STRUCT_KNN_PARAMS: u32 = 24;
/// `mvnmf_struct_size`: `struct mvnmf_kmeans_params`.
pub const MVNMF_STRUCT_KMEANS_PARAMS: u32 = 25;
/// `mvnmf_struct_size`: `struct mvnmf_kmeans_report`.
pub const MVNMF_STRUCT_KMEANS_REPORT: u32 = 26;
/// `mvnmf_struct_size`: `struct mvnmf_multilabel_scores`.
pub const MVNMF_STRUCT_MULTILABEL_SCORES: u32 = 27;
/// `mvnmf_struct_size`: `struct mvnmf_eval_params`.
pub const MVNMF_STRUCT_EVAL_PARAMS: u32 = 28;
/// `mvnmf_struct_size`: `struct mvnmf_protocol_params`.
pub const MVNMF_STRUCT_PROTOCOL_PARAMS: u32 = 29;
/// `mvnmf_struct_size`: `struct mvnmf_cv_params`.
pub const MVNMF_STRUCT_CV_PARAMS: u32 = 30;
/// `mvnmf_struct_size`: `struct mvnmf_split_scores`.
pub const MVNMF_STRUCT_SPLIT_SCORES: u32 = 31;
/// `mvnmf_struct_size`: `struct mvnmf_score_summary`.
pub const MVNMF_STRUCT_SCORE_SUMMARY: u32 = 32;
/// `mvnmf_struct_size`: `struct mvnmf_protocol_fit`.
pub const MVNMF_STRUCT_PROTOCOL_FIT: u32 = 33;
/// `mvnmf_struct_size`: `struct mvnmf_cv_fit`.
pub const MVNMF_STRUCT_CV_FIT: u32 = 34;
/// `mvnmf_struct_size`: `struct mvnmf_view_f32`.
pub const MVNMF_STRUCT_VIEW_F32: u32 = 35;
/// `mvnmf_struct_size`: `struct mvnmf_parallel`.
pub const MVNMF_STRUCT_PARALLEL: u32 = 36;
/// `mvnmf_struct_size`: `struct mvnmf_dist_comm`.
pub const MVNMF_STRUCT_DIST_COMM: u32 = 37;
/// `mvnmf_struct_size`: `struct mvnmf_dist_traffic`.
pub const MVNMF_STRUCT_DIST_TRAFFIC: u32 = 38;
/// `mvnmf_struct_size`: `struct mvnmf_dist_graph_traffic`.
pub const MVNMF_STRUCT_DIST_GRAPH_TRAFFIC: u32 = 39;
/// `mvnmf_struct_size`: `struct mvnmf_ann_params`.
pub const MVNMF_STRUCT_ANN_PARAMS: u32 = 40;

/// The ABI version of the library (`MVNMF_ABI_VERSION` of the header it was
/// built from). A program built against another header finds a different
/// number here.
#[no_mangle]
pub extern "C" fn mvnmf_abi_version() -> u32 {
    MVNMF_ABI_VERSION
}

/// The library's size in bytes of the public struct `which`
/// (`MVNMF_STRUCT_*`); 0 for an unknown code. A binding that declares the
/// structs itself compares its sizes with these.
#[no_mangle]
pub extern "C" fn mvnmf_struct_size(which: u32) -> usize {
    match which {
        MVNMF_STRUCT_VIEW => size_of::<mvnmf_view>(),
        MVNMF_STRUCT_TERM => size_of::<mvnmf_term>(),
        MVNMF_STRUCT_OBJECTIVE => size_of::<mvnmf_objective>(),
        MVNMF_STRUCT_PROGRESS => size_of::<mvnmf_progress>(),
        MVNMF_STRUCT_REPORT => size_of::<mvnmf_report>(),
        MVNMF_STRUCT_NMF_PARAMS => size_of::<mvnmf_nmf_params>(),
        MVNMF_STRUCT_MVSL_PARAMS => size_of::<mvnmf_mvsl_params>(),
        MVNMF_STRUCT_GRAPH => size_of::<mvnmf_graph>(),
        MVNMF_STRUCT_DEEP_PARAMS => size_of::<mvnmf_deep_params>(),
        MVNMF_STRUCT_JSNMF_PARAMS => size_of::<mvnmf_jsnmf_params>(),
        MVNMF_STRUCT_JSNMF_QUERY_PARAMS => size_of::<mvnmf_jsnmf_query_params>(),
        MVNMF_STRUCT_MVEL_PARAMS => size_of::<mvnmf_mvel_params>(),
        MVNMF_STRUCT_PIPELINE_PARAMS => size_of::<mvnmf_pipeline_params>(),
        MVNMF_STRUCT_PIPELINE_REPORT => size_of::<mvnmf_pipeline_report>(),
        MVNMF_STRUCT_PREP_PARAMS => size_of::<mvnmf_prep_params>(),
        MVNMF_STRUCT_PREP_REPORT => size_of::<mvnmf_prep_report>(),
        MVNMF_STRUCT_KERNEL => size_of::<mvnmf_kernel>(),
        MVNMF_STRUCT_MKL_PARAMS => size_of::<mvnmf_mkl_params>(),
        MVNMF_STRUCT_MKL_REPORT => size_of::<mvnmf_mkl_report>(),
        MVNMF_STRUCT_QP_REPORT => size_of::<mvnmf_qp_report>(),
        MVNMF_STRUCT_FUSED_KNN_PARAMS => size_of::<mvnmf_fused_knn_params>(),
        MVNMF_STRUCT_GRAPH_PARAMS => size_of::<mvnmf_graph_params>(),
        MVNMF_STRUCT_FUSED_GRAPH_PARAMS => size_of::<mvnmf_fused_graph_params>(),
        MVNMF_STRUCT_CSR_BUFFERS => size_of::<mvnmf_csr_buffers>(),
        MVNMF_STRUCT_KNN_PARAMS => size_of::<mvnmf_knn_params>(),
        MVNMF_STRUCT_KMEANS_PARAMS => size_of::<mvnmf_kmeans_params>(),
        MVNMF_STRUCT_KMEANS_REPORT => size_of::<mvnmf_kmeans_report>(),
        MVNMF_STRUCT_MULTILABEL_SCORES => size_of::<mvnmf_multilabel_scores>(),
        MVNMF_STRUCT_EVAL_PARAMS => size_of::<mvnmf_eval_params>(),
        MVNMF_STRUCT_PROTOCOL_PARAMS => size_of::<mvnmf_protocol_params>(),
        MVNMF_STRUCT_CV_PARAMS => size_of::<mvnmf_cv_params>(),
        MVNMF_STRUCT_SPLIT_SCORES => size_of::<mvnmf_split_scores>(),
        MVNMF_STRUCT_SCORE_SUMMARY => size_of::<mvnmf_score_summary>(),
        MVNMF_STRUCT_PROTOCOL_FIT => size_of::<mvnmf_protocol_fit>(),
        MVNMF_STRUCT_CV_FIT => size_of::<mvnmf_cv_fit>(),
        MVNMF_STRUCT_VIEW_F32 => size_of::<mvnmf_view_f32>(),
        MVNMF_STRUCT_PARALLEL => size_of::<mvnmf_parallel>(),
        MVNMF_STRUCT_DIST_COMM => size_of::<mvnmf_dist_comm>(),
        MVNMF_STRUCT_DIST_TRAFFIC => size_of::<mvnmf_dist_traffic>(),
        MVNMF_STRUCT_DIST_GRAPH_TRAFFIC => size_of::<mvnmf_dist_graph_traffic>(),
        MVNMF_STRUCT_ANN_PARAMS => size_of::<mvnmf_ann_params>(),
        _ => 0,
    }
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
