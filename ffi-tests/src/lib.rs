//! Runs the C harness (`c/harness.c`, built as C99 and as C++11 by `build.rs`)
//! and the C example against the C ABI of the `mvnmf` crate.
//!
//! The tests live in this library crate (not in `tests/`) on purpose: rustc
//! links a crate's own native libraries before its Rust dependencies, so the
//! harness's references to `mvnmf_*` resolve against the `mvnmf` rlib.

#[cfg(test)]
use std::ffi::c_int;

// Link the library whose C ABI the harness calls.
use mvnmf as _;

#[cfg(test)]
extern "C" {
    fn mvnmf_harness_c(verbose: c_int) -> c_int;
    fn mvnmf_harness_cpp(verbose: c_int) -> c_int;
    fn mvnmf_harness_models_c(verbose: c_int) -> c_int;
    fn mvnmf_harness_models_cpp(verbose: c_int) -> c_int;
    fn mvnmf_harness_graph_c(verbose: c_int) -> c_int;
    fn mvnmf_harness_graph_cpp(verbose: c_int) -> c_int;
    fn mvnmf_harness_protocol_c(verbose: c_int) -> c_int;
    fn mvnmf_harness_protocol_cpp(verbose: c_int) -> c_int;
    fn mvnmf_harness_regress_c(verbose: c_int) -> c_int;
    fn mvnmf_harness_regress_cpp(verbose: c_int) -> c_int;
    fn mvnmf_harness_jsnmf_c(verbose: c_int) -> c_int;
    fn mvnmf_harness_jsnmf_cpp(verbose: c_int) -> c_int;
    fn mvnmf_harness_mvel_c(verbose: c_int) -> c_int;
    fn mvnmf_harness_mvel_cpp(verbose: c_int) -> c_int;
    fn mvnmf_harness_linalg_c(verbose: c_int) -> c_int;
    fn mvnmf_harness_linalg_cpp(verbose: c_int) -> c_int;
    fn mvnmf_harness_twins_c(verbose: c_int) -> c_int;
    fn mvnmf_harness_twins_cpp(verbose: c_int) -> c_int;
    fn mvnmf_harness_where_c(verbose: c_int) -> c_int;
    fn mvnmf_harness_where_cpp(verbose: c_int) -> c_int;
    fn mvnmf_harness_dist_c(verbose: c_int) -> c_int;
    fn mvnmf_harness_dist_cpp(verbose: c_int) -> c_int;
    fn mvnmf_example_quickstart() -> c_int;
}

#[cfg(test)]
fn verbose() -> c_int {
    std::env::var_os("MVNMF_HARNESS_VERBOSE").is_some() as c_int
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_harness_c99() {
        // The harness prints a line per failed check; the count is returned.
        let failures = unsafe { mvnmf_harness_c(verbose()) };
        assert_eq!(
            failures, 0,
            "C99 build of the harness: {failures} failed checks (see stdout)"
        );
    }

    #[test]
    fn c_harness_cpp() {
        let failures = unsafe { mvnmf_harness_cpp(verbose()) };
        assert_eq!(
            failures, 0,
            "C++ build of the harness: {failures} failed checks (see stdout)"
        );
    }

    #[test]
    fn c_harness_models_c99() {
        // The shallow and deep solvers (`c/harness_models.c`).
        let failures = unsafe { mvnmf_harness_models_c(verbose()) };
        assert_eq!(
            failures, 0,
            "C99 build of the models harness: {failures} failed checks (see stdout)"
        );
    }

    #[test]
    fn c_harness_models_cpp() {
        let failures = unsafe { mvnmf_harness_models_cpp(verbose()) };
        assert_eq!(
            failures, 0,
            "C++ build of the models harness: {failures} failed checks (see stdout)"
        );
    }

    #[test]
    fn c_harness_graph_c99() {
        // MKL, fused kNN, LDGE / TGE, the pipeline and the evaluation
        // routines (`c/harness_graph.c`).
        let failures = unsafe { mvnmf_harness_graph_c(verbose()) };
        assert_eq!(
            failures, 0,
            "C99 build of the graph harness: {failures} failed checks (see stdout)"
        );
    }

    #[test]
    fn c_harness_graph_cpp() {
        let failures = unsafe { mvnmf_harness_graph_cpp(verbose()) };
        assert_eq!(
            failures, 0,
            "C++ build of the graph harness: {failures} failed checks (see stdout)"
        );
    }

    #[test]
    fn c_harness_protocol_c99() {
        // The evaluation protocol: cross-validation, splits, mean ± std
        // (`c/harness_protocol.c`).
        let failures = unsafe { mvnmf_harness_protocol_c(verbose()) };
        assert_eq!(
            failures, 0,
            "C99 build of the protocol harness: {failures} failed checks (see stdout)"
        );
    }

    #[test]
    fn c_harness_regress_c99() {
        // The regression cases of issue 15 (`c/harness_regress.c`).
        let failures = unsafe { mvnmf_harness_regress_c(verbose()) };
        assert_eq!(
            failures, 0,
            "C99 build of the regression harness: {failures} failed checks (see stdout)"
        );
    }

    #[test]
    fn c_harness_protocol_cpp() {
        let failures = unsafe { mvnmf_harness_protocol_cpp(verbose()) };
        assert_eq!(
            failures, 0,
            "C++ build of the protocol harness: {failures} failed checks (see stdout)"
        );
    }

    #[test]
    fn c_harness_regress_cpp() {
        let failures = unsafe { mvnmf_harness_regress_cpp(verbose()) };
        assert_eq!(
            failures, 0,
            "C++ build of the regression harness: {failures} failed checks (see stdout)"
        );
    }

    #[test]
    fn c_example_quickstart() {
        assert_eq!(unsafe { mvnmf_example_quickstart() }, 0);
    }

    #[test]
    fn c_harness_jsnmf_c99() {
        // JSNMF fit and retrieval (`c/harness_jsnmf.c`).
        let failures = unsafe { mvnmf_harness_jsnmf_c(verbose()) };
        assert_eq!(
            failures, 0,
            "C99 build of the JSNMF harness: {failures} failed checks (see stdout)"
        );
    }

    #[test]
    fn c_harness_jsnmf_cpp() {
        let failures = unsafe { mvnmf_harness_jsnmf_cpp(verbose()) };
        assert_eq!(
            failures, 0,
            "C++ build of the JSNMF harness: {failures} failed checks (see stdout)"
        );
    }

    #[test]
    fn c_harness_mvel_c99() {
        // MVEL fit, prediction and the dense graph kind (`c/harness_mvel.c`).
        let failures = unsafe { mvnmf_harness_mvel_c(verbose()) };
        assert_eq!(
            failures, 0,
            "C99 build of the MVEL harness: {failures} failed checks (see stdout)"
        );
    }

    #[test]
    fn c_harness_mvel_cpp() {
        let failures = unsafe { mvnmf_harness_mvel_cpp(verbose()) };
        assert_eq!(
            failures, 0,
            "C++ build of the MVEL harness: {failures} failed checks (see stdout)"
        );
    }

    #[test]
    fn c_harness_linalg_c99() {
        // The symmetric eigensolver and CCA (`c/harness_linalg.c`).
        let failures = unsafe { mvnmf_harness_linalg_c(verbose()) };
        assert_eq!(
            failures, 0,
            "C99 build of the linalg harness: {failures} failed checks (see stdout)"
        );
    }

    #[test]
    fn c_harness_linalg_cpp() {
        let failures = unsafe { mvnmf_harness_linalg_cpp(verbose()) };
        assert_eq!(
            failures, 0,
            "C++ build of the linalg harness: {failures} failed checks (see stdout)"
        );
    }

    #[test]
    fn c_harness_twins_c99() {
        // The `_f32` twins of evaluation against their double routines (`c/harness_twins.c`).
        let failures = unsafe { mvnmf_harness_twins_c(verbose()) };
        assert_eq!(
            failures, 0,
            "C99 build of the twins harness: {failures} failed checks (see stdout)"
        );
    }

    #[test]
    fn c_harness_twins_cpp() {
        let failures = unsafe { mvnmf_harness_twins_cpp(verbose()) };
        assert_eq!(
            failures, 0,
            "C++ build of the twins harness: {failures} failed checks (see stdout)"
        );
    }

    #[test]
    fn c_harness_where_c99() {
        // Where a refusal points (`c/harness_where.c`, issue 33): argument,
        // view, row and column in the report.
        let failures = unsafe { mvnmf_harness_where_c(verbose()) };
        assert_eq!(
            failures, 0,
            "C99 build of the where harness: {failures} failed checks (see stdout)"
        );
    }

    #[test]
    fn c_harness_where_cpp() {
        let failures = unsafe { mvnmf_harness_where_cpp(verbose()) };
        assert_eq!(
            failures, 0,
            "C++ build of the where harness: {failures} failed checks (see stdout)"
        );
    }

    #[test]
    fn c_harness_dist_c99() {
        // The approximate graph across ranks, one rank (`c/harness_dist.c`).
        let failures = unsafe { mvnmf_harness_dist_c(verbose()) };
        assert_eq!(
            failures, 0,
            "C99 build of the dist harness: {failures} failed checks (see stdout)"
        );
    }

    #[test]
    fn c_harness_dist_cpp() {
        let failures = unsafe { mvnmf_harness_dist_cpp(verbose()) };
        assert_eq!(
            failures, 0,
            "C++ build of the dist harness: {failures} failed checks (see stdout)"
        );
    }
}
