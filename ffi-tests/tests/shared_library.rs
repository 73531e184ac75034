//! The shared library (`libmvnmf.so`), loaded at run time the way Python's
//! `ctypes`, Julia's `ccall` and R's `dyn.load` load it.
//!
//! The rest of the C harness links the library statically into the test
//! binary, and `cargo test` never builds the `cdylib`. This test builds it
//! (`cargo build -p mvnmf-capi` in `target/capi-build`, shared with
//! `tests/eval_reproduce.rs` and apart from the outer build so that it does not
//! wait on its lock; about 40 s when neither has run before), checks that
//! it exports every function `include/mvnmf.h` declares, and then runs
//! `ffi-tests/python/shared_library.py` on it: a joint NMF on a dense and a CSC
//! view from Python-owned buffers with a Python progress callback (objective
//! never increasing, outputs written in place and nothing past them, a
//! workspace at an odd address, same bytes twice, cancellation, two bad inputs
//! with their status codes and outputs untouched). Without `python3` on the
//! PATH that second part is skipped with a message; the build and the export
//! check still run.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The functions the header declares: `name(` on a line that is not a comment,
/// a typedef or a preprocessor line.
fn header_functions(header: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in header.lines() {
        let t = line.trim_start();
        if line.starts_with(char::is_whitespace)
            || t.starts_with("//")
            || t.starts_with('#')
            || t.starts_with("typedef")
        {
            continue;
        }
        let mut rest = t;
        while let Some(at) = rest.find("mvnmf_") {
            let tail = &rest[at..];
            let end = tail
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(tail.len());
            if tail[end..].starts_with('(') {
                names.insert(tail[..end].to_string());
            }
            rest = &tail[end..];
        }
    }
    names
}

/// Builds the shared library and returns its path.
fn build_shared_library() -> PathBuf {
    // The directory and flags of tests/eval_reproduce.rs, which builds the same
    // crate for its static library: whichever test runs second finds it built.
    let target = root().join("target").join("capi-build");
    let out = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "-p", "mvnmf-capi", "--manifest-path"])
        .arg(root().join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .env_remove("RUSTFLAGS")
        .output()
        .expect("running cargo");
    assert!(
        out.status.success(),
        "cargo build -p mvnmf-capi failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let name = format!(
        "{}mvnmf{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let lib = target.join("debug").join(name);
    assert!(lib.is_file(), "{} was not built", lib.display());
    lib
}

/// The global functions the library defines (`nm`).
fn exported(lib: &Path) -> BTreeSet<String> {
    let args: &[&str] = if cfg!(target_os = "macos") {
        &["-gU"]
    } else {
        &["-D", "--defined-only"]
    };
    let out = Command::new("nm")
        .args(args)
        .arg(lib)
        .output()
        .expect("running nm (binutils)");
    assert!(out.status.success(), "nm failed on {}", lib.display());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace().rev();
            let (name, kind) = (f.next()?, f.next()?);
            (kind == "T").then(|| name.trim_start_matches('_').to_string())
        })
        .collect()
}

#[test]
#[cfg(unix)]
fn shared_library_exports_the_header_and_runs_from_python_ctypes() {
    let header = std::fs::read_to_string(root().join("include/mvnmf.h")).unwrap();
    let declared = header_functions(&header);
    assert!(
        declared.len() >= 50 && declared.contains("mvnmf_joint_nmf_fit"),
        "header parse found only {declared:?}"
    );

    let lib = build_shared_library();
    let defined = exported(&lib);
    let missing: Vec<_> = declared.difference(&defined).collect();
    assert!(
        missing.is_empty(),
        "{} does not export {missing:?}",
        lib.display()
    );

    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("python3 not found: the ctypes checks of the shared library did not run");
        return;
    }
    let script = root().join("ffi-tests/python/shared_library.py");
    // The script's ctypes mirrors of the structs must have the library's sizes.
    use mvnmf::ffi::{mvnmf_nmf_params, mvnmf_objective, mvnmf_progress, mvnmf_report, mvnmf_view};
    use std::mem::size_of;
    let sizes = format!(
        "View={},NmfParams={},Objective={},Progress={},Report={}",
        size_of::<mvnmf_view>(),
        size_of::<mvnmf_nmf_params>(),
        size_of::<mvnmf_objective>(),
        size_of::<mvnmf_progress>(),
        size_of::<mvnmf_report>()
    );
    let out = Command::new("python3")
        .arg(&script)
        .arg(&lib)
        .arg(&sizes)
        .output()
        .expect("running python3");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{} failed:\n{text}", script.display());
    eprint!("{text}");
}

/// The Python package (`python/`: generated ctypes bindings, scikit-learn-style
/// estimators) runs its pytest suite against this shared library. The
/// interpreter is `$MVNMF_PYTHON` (default `python3`) and needs numpy, scipy
/// pytest and scikit-learn (the package depends on it); without them
/// the suite is skipped with a message, except with `$MVNMF_REQUIRE_PYTHON`
/// set (`.ci/run` sets it after installing them), where that is a failure.
#[test]
#[cfg(unix)]
fn python_package_passes_its_tests() {
    let python = std::env::var("MVNMF_PYTHON").unwrap_or_else(|_| "python3".into());
    let probe = Command::new(&python)
        .args(["-c", "import numpy, scipy, pytest, sklearn"])
        .output();
    if !probe.as_ref().is_ok_and(|o| o.status.success()) {
        let why =
            "needs numpy, scipy, pytest and scikit-learn (set MVNMF_PYTHON to an interpreter that has them)";
        assert!(
            std::env::var_os("MVNMF_REQUIRE_PYTHON").is_none(),
            "{python}: the Python package's tests {why}"
        );
        eprintln!("{python}: the Python package's tests did not run: it {why}");
        return;
    }
    let lib = build_shared_library();
    let out = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"])
        .current_dir(root().join("python"))
        .env("MVNMF_LIBRARY", &lib)
        .env("PYTHONPATH", root().join("python"))
        .output()
        .expect("running pytest");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "pytest python/tests failed:\n{text}");
    eprint!("{text}");
}

#[test]
fn the_header_parse_finds_declarations_only() {
    let h = "// mvnmf_comment(x)\n#define MVNMF_X mvnmf_macro(1)\n\
             typedef int (*mvnmf_progress_fn)(const void *p);\n\
             mvnmf_status mvnmf_a(const struct mvnmf_view *views,\n    size_t mvnmf_not_a_fn);\n\
             const char *mvnmf_b(uint32_t s);\nstruct mvnmf_params mvnmf_c(void);\n";
    let got: Vec<_> = header_functions(h).into_iter().collect();
    assert_eq!(got, ["mvnmf_a", "mvnmf_b", "mvnmf_c"]);
}
