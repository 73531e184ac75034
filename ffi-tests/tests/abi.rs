//! The header's version and ABI checks (`src/ffi/abi.rs`), seen from C and C++:
//!
//! * every macro of `include/mvnmf.h` is `MVNMF_`-prefixed, and every one
//!   expands cleanly in C++17 under `-Wold-style-cast -Wuseless-cast
//!   -Wzero-as-null-pointer-constant -Wconversion -Wundef -Werror`;
//! * every `struct mvnmf_*` of the header has its `MVNMF_STRUCT_*` code, and
//!   the C (C99) and C++ (C++17) compilers' `sizeof` of each equals the
//!   library's `mvnmf_struct_size`;
//! * `MVNMF_VERSION_MAJOR/MINOR/PATCH` spell `mvnmf_version()`, which is the
//!   version of the C library's crate (`capi/Cargo.toml`) too.
//!
//! The programs are generated from the header, so a new struct or macro is
//! checked without editing this file.

use std::collections::BTreeMap;
use std::ffi::CStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use mvnmf::ffi::{mvnmf_struct_size, mvnmf_version};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn header() -> String {
    std::fs::read_to_string(root().join("include/mvnmf.h")).unwrap()
}

/// The names the header `#define`s.
fn macros(h: &str) -> Vec<String> {
    h.lines()
        .filter_map(|l| l.trim_start().strip_prefix("#define "))
        .filter_map(|l| l.split_whitespace().next())
        .map(|n| n.split('(').next().unwrap().to_string())
        .collect()
}

/// The `typedef struct mvnmf_x {` names of the header.
fn structs(h: &str) -> Vec<String> {
    h.lines()
        .filter_map(|l| l.strip_prefix("typedef struct "))
        .filter_map(|l| l.strip_suffix(" {"))
        .map(str::to_string)
        .collect()
}

/// `MVNMF_STRUCT_X` for `mvnmf_x`.
fn code_macro(name: &str) -> String {
    format!(
        "MVNMF_STRUCT_{}",
        name.trim_start_matches("mvnmf_").to_uppercase()
    )
}

/// Compiles `src` (written to a file named `file`) with `compiler` and `flags`,
/// runs it and returns its output.
fn compile_and_run(compiler: &str, flags: &[&str], file: &str, src: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("abi");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(file);
    std::fs::write(&path, src).unwrap();
    let exe = dir.join(format!("{file}.out"));
    let out = Command::new(compiler)
        .args(flags)
        .arg("-I")
        .arg(root().join("include"))
        .arg(&path)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("running {compiler}: {e}"));
    assert!(
        out.status.success(),
        "{compiler} {flags:?} {}:\n{}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success(), "{} failed", exe.display());
    String::from_utf8(run.stdout).unwrap()
}

fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".into())
}

fn cxx() -> String {
    std::env::var("CXX").unwrap_or_else(|_| "c++".into())
}

const CXX_STRICT: &[&str] = &[
    "-x",
    "c++",
    "-std=c++17",
    "-Wall",
    "-Wextra",
    "-Wpedantic",
    "-Wold-style-cast",
    "-Wuseless-cast",
    "-Wzero-as-null-pointer-constant",
    "-Wconversion",
    "-Wsign-conversion",
    "-Wshadow",
    "-Wundef",
    "-Werror",
];

#[test]
fn every_macro_is_prefixed_and_expands_cleanly_in_cpp17() {
    let h = header();
    let names = macros(&h);
    assert!(names.len() > 50, "found only {names:?}");
    let bad: Vec<_> = names.iter().filter(|n| !n.starts_with("MVNMF_")).collect();
    assert!(bad.is_empty(), "macros without the MVNMF_ prefix: {bad:?}");

    let mut src = String::from("#include \"mvnmf.h\"\n#include <cstdio>\nint main() {\n");
    for n in names.iter().filter(|n| *n != "MVNMF_H") {
        src += &format!("    static_cast<void>({n});\n");
    }
    src += "    std::puts(\"ok\");\n    return 0;\n}\n";
    assert_eq!(
        compile_and_run(&cxx(), CXX_STRICT, "macros.cpp", &src),
        "ok\n"
    );
}

#[test]
fn struct_sizes_seen_from_c_and_cpp_are_the_librarys() {
    let h = header();
    let names = structs(&h);
    assert!(names.len() >= 30, "found only {names:?}");
    let missing: Vec<_> = names
        .iter()
        .map(|n| code_macro(n))
        .filter(|m| !h.contains(&format!("#define {m} ")))
        .collect();
    assert!(
        missing.is_empty(),
        "structs without a code for mvnmf_struct_size (add them to src/ffi/abi.rs): {missing:?}"
    );

    let mut src = String::from("#include <stdio.h>\n#include \"mvnmf.h\"\nint main(void) {\n");
    for n in &names {
        src += &format!(
            "    {{ unsigned code = {}; printf(\"{n} %u %zu\\n\", code, sizeof(struct {n})); }}\n",
            code_macro(n)
        );
    }
    src += "    return 0;\n}\n";
    let c_flags = ["-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Werror"];
    for (compiler, flags, file) in [
        (cc(), &c_flags[..], "sizes.c"),
        (cxx(), CXX_STRICT, "sizes.cpp"),
    ] {
        let out = compile_and_run(&compiler, flags, file, &src);
        let mut codes = BTreeMap::new();
        for line in out.lines() {
            let f: Vec<_> = line.split_whitespace().collect();
            let (name, code, size): (&str, u32, usize) =
                (f[0], f[1].parse().unwrap(), f[2].parse().unwrap());
            assert_eq!(
                mvnmf_struct_size(code),
                size,
                "{file}: sizeof(struct {name}) vs mvnmf_struct_size({})",
                code_macro(name)
            );
            assert!(codes.insert(code, name).is_none(), "code {code} used twice");
        }
        assert_eq!(codes.len(), names.len());
    }
}

#[test]
fn version_macros_are_the_librarys_version() {
    let h = header();
    let get = |m: &str| {
        h.lines()
            .find_map(|l| l.strip_prefix(&format!("#define {m} ")))
            .unwrap_or_else(|| panic!("{m} is not defined"))
            .trim()
            .to_string()
    };
    let from_macros = format!(
        "{}.{}.{}",
        get("MVNMF_VERSION_MAJOR"),
        get("MVNMF_VERSION_MINOR"),
        get("MVNMF_VERSION_PATCH")
    );
    // SAFETY: a static NUL-terminated string.
    let lib = unsafe { CStr::from_ptr(mvnmf_version()) }.to_str().unwrap();
    assert_eq!(from_macros, lib);
    let capi = std::fs::read_to_string(root().join("capi/Cargo.toml")).unwrap();
    assert!(
        capi.lines().any(|l| l == format!("version = \"{lib}\"")),
        "capi/Cargo.toml must carry the library's version {lib} (its SONAME is built from it)"
    );
}

#[test]
fn the_header_parsers_find_what_they_look_for() {
    let h = "#define MVNMF_A 1\n  #define MVNMF_F(x) x\ntypedef struct mvnmf_view {\n\
             struct mvnmf_x y;\ntypedef struct mvnmf_nmf_params {\n";
    assert_eq!(macros(h), ["MVNMF_A", "MVNMF_F"]);
    assert_eq!(structs(h), ["mvnmf_view", "mvnmf_nmf_params"]);
    assert_eq!(code_macro("mvnmf_nmf_params"), "MVNMF_STRUCT_NMF_PARAMS");
}
