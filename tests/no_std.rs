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
