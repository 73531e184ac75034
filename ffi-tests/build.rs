//! Compiles the C harness (`c/harness.c`, `c/harness_models.c`,
//! `c/harness_graph.c`, `c/harness_protocol.c`, `c/harness_regress.c`, `c/harness_jsnmf.c`,
//! `c/harness_mvel.c`, `c/harness_linalg.c`, `c/harness_twins.c`,
//! `c/harness_where.c`, `c/harness_dist.c`) twice — as C99 and as
//! C++11 — and the C example, all
//! with warnings as errors, against the checked-in `include/mvnmf.h`.
//! The entry points are renamed per build so both link into one test binary.

use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("..");
    let include = root.join("include");
    let harness = root.join("ffi-tests/c/harness.c");
    let models = root.join("ffi-tests/c/harness_models.c");
    let graph = root.join("ffi-tests/c/harness_graph.c");
    let protocol = root.join("ffi-tests/c/harness_protocol.c");
    let regress = root.join("ffi-tests/c/harness_regress.c");
    let jsnmf = root.join("ffi-tests/c/harness_jsnmf.c");
    let mvel = root.join("ffi-tests/c/harness_mvel.c");
    let linalg = root.join("ffi-tests/c/harness_linalg.c");
    let twins = root.join("ffi-tests/c/harness_twins.c");
    let whr = root.join("ffi-tests/c/harness_where.c");
    let distc = root.join("ffi-tests/c/harness_dist.c");
    let common = root.join("ffi-tests/c/harness_common.h");
    let example = root.join("examples-c/quickstart.c");
    for p in [
        &harness,
        &models,
        &graph,
        &protocol,
        &regress,
        &jsnmf,
        &mvel,
        &linalg,
        &twins,
        &whr,
        &distc,
        &common,
        &example,
        &include.join("mvnmf.h"),
    ] {
        println!("cargo:rerun-if-changed={}", p.display());
    }
    let strict = ["-Wall", "-Wextra", "-Wpedantic", "-Werror"];

    let mut c = cc::Build::new();
    c.file(&harness)
        .file(&models)
        .file(&graph)
        .file(&protocol)
        .file(&regress)
        .file(&jsnmf)
        .file(&mvel)
        .file(&linalg)
        .file(&twins)
        .file(&whr)
        .file(&distc)
        .include(&include)
        .std("c99")
        .define("HARNESS_ENTRY", "mvnmf_harness_c")
        .define("HARNESS_MODELS_ENTRY", "mvnmf_harness_models_c")
        .define("HARNESS_GRAPH_ENTRY", "mvnmf_harness_graph_c")
        .define("HARNESS_PROTOCOL_ENTRY", "mvnmf_harness_protocol_c")
        .define("HARNESS_REGRESS_ENTRY", "mvnmf_harness_regress_c")
        .define("HARNESS_JSNMF_ENTRY", "mvnmf_harness_jsnmf_c")
        .define("HARNESS_MVEL_ENTRY", "mvnmf_harness_mvel_c")
        .define("HARNESS_LINALG_ENTRY", "mvnmf_harness_linalg_c")
        .define("HARNESS_TWINS_ENTRY", "mvnmf_harness_twins_c")
        .define("HARNESS_WHERE_ENTRY", "mvnmf_harness_where_c")
        .define("HARNESS_DIST_ENTRY", "mvnmf_harness_dist_c");
    strict.iter().for_each(|f| {
        c.flag(f);
    });
    c.compile("mvnmf_harness_c");

    let mut cpp = cc::Build::new();
    cpp.cpp(true)
        .file(&harness)
        .file(&models)
        .file(&graph)
        .file(&protocol)
        .file(&regress)
        .file(&jsnmf)
        .file(&mvel)
        .file(&linalg)
        .file(&twins)
        .file(&whr)
        .file(&distc)
        .include(&include)
        .flag("-x")
        .flag("c++")
        .std("c++11")
        .define("HARNESS_ENTRY", "mvnmf_harness_cpp")
        .define("HARNESS_MODELS_ENTRY", "mvnmf_harness_models_cpp")
        .define("HARNESS_GRAPH_ENTRY", "mvnmf_harness_graph_cpp")
        .define("HARNESS_PROTOCOL_ENTRY", "mvnmf_harness_protocol_cpp")
        .define("HARNESS_REGRESS_ENTRY", "mvnmf_harness_regress_cpp")
        .define("HARNESS_JSNMF_ENTRY", "mvnmf_harness_jsnmf_cpp")
        .define("HARNESS_MVEL_ENTRY", "mvnmf_harness_mvel_cpp")
        .define("HARNESS_LINALG_ENTRY", "mvnmf_harness_linalg_cpp")
        .define("HARNESS_TWINS_ENTRY", "mvnmf_harness_twins_cpp")
        .define("HARNESS_WHERE_ENTRY", "mvnmf_harness_where_cpp")
        .define("HARNESS_DIST_ENTRY", "mvnmf_harness_dist_cpp");
    strict.iter().for_each(|f| {
        cpp.flag(f);
    });
    cpp.compile("mvnmf_harness_cpp");

    let mut ex = cc::Build::new();
    ex.file(&example)
        .include(&include)
        .std("c99")
        .define("main", "mvnmf_example_quickstart");
    strict.iter().for_each(|f| {
        ex.flag(f);
    });
    ex.compile("mvnmf_example_quickstart");
}
