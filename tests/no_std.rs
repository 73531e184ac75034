//! The no_std build is proven by a build: `nostd-check/` is a `#![no_std]`
//! `#![no_main]` binary with its own panic handler that links the core with
//! default features off. Anything that pulls std into the core makes that link
//! fail ("duplicate lang item `panic_impl`"). The binary then runs small fits
//! (NMF dense and CSC, joint NMF, MvSL with SGE) and a 3×3 symmetric
//! eigendecomposition on static buffers and exits 0 when every objective fell
//! and the eigenvalues are right. (`scripts/panic_sites.sh` builds the same
//! binary with fat LTO as the link-time no-panic proof.)

use std::path::PathBuf;
use std::process::Command;

#[test]
fn core_builds_links_and_runs_without_std() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let target = root.join("target").join("nostd-check");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(root.join("nostd-check/Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .env_remove("RUSTFLAGS")
        .output()
        .expect("running cargo");
    assert!(
        out.status.success(),
        "the no_std check did not build:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status = Command::new(target.join("release/mvnmf-nostd-check"))
        .status()
        .expect("running the no_std binary");
    assert_eq!(status.code(), Some(0), "the no_std binary failed");
}

/// The link-time no-panic proof (`scripts/panic_sites.sh`) covers the C ABI
/// only as far as `nostd-check/src/capi_*.rs` use it: every function the
/// header declares (`include/mvnmf.h`, generated from the expanded `src/ffi/`
/// — most entry points are written by `export!` — and checked fresh by
/// `ffi-tests/tests/header.rs`) must be named there (called, or taken as a
/// function value and called), so a new entry point cannot stay outside the
/// proof unnoticed.
#[test]
fn every_c_entry_point_is_called_by_the_panic_proof() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let read_dir = |d: &str| -> Vec<String> {
        let mut files: Vec<_> = std::fs::read_dir(root.join(d))
            .expect("listing a source directory")
            .map(|e| e.expect("a directory entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .collect();
        files.sort();
        files
            .iter()
            .map(|p| std::fs::read_to_string(p).expect("reading a source file"))
            .collect()
    };
    let header = std::fs::read_to_string(root.join("include/mvnmf.h")).expect("the header");
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    // A declaration: `mvnmf_name(` outside a comment (doc comments name
    // functions too; callback typedefs are `(*mvnmf_name_fn)(`).
    let mut entry_points = Vec::new();
    for line in header.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for (i, _) in line.match_indices("mvnmf_") {
            let name: String = line[i..].chars().take_while(|&c| ident(c)).collect();
            let before = line[..i].chars().next_back();
            if !before.is_some_and(ident) && line[i + name.len()..].starts_with('(') {
                entry_points.push(name);
            }
        }
    }
    assert!(
        entry_points.len() >= 160,
        "found only {} entry points",
        entry_points.len()
    );
    let calls = read_dir("nostd-check/src").concat();
    // Named as a whole identifier (`mvnmf_tge` is not in `mvnmf_tge_workspace`).
    let called = |name: &str| {
        calls.match_indices(name).any(|(i, _)| {
            let before = calls[..i].chars().next_back();
            let after = calls[i + name.len()..].chars().next();
            !before.is_some_and(ident) && !after.is_some_and(ident)
        })
    };
    let missing: Vec<_> = entry_points.iter().filter(|n| !called(n)).collect();
    assert!(
        missing.is_empty(),
        "C entry points not called by nostd-check (outside the no-panic proof): {missing:?}"
    );
}
