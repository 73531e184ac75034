//! Builds one of the C example programs for a test: the C library (`mvnmf-capi`
//! in its own target directory, `target/capi-build`, shared with
//! `ffi-tests/tests/shared_library.rs`), then `examples-c/<name>.c` with
//! `-std=c99 -Wall -Wextra -Wpedantic -Werror` against it. Returns the
//! executable (`target/capi-build/<name>`).

use std::path::PathBuf;
use std::process::Command;

pub fn build(name: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let target = root.join("target").join("capi-build");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["build", "--quiet", "-p", "mvnmf-capi", "--manifest-path"])
        .arg(root.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .env_remove("RUSTFLAGS")
        .output()
        .expect("running cargo");
    assert!(
        out.status.success(),
        "building the C library failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let exe = target.join(name);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(cc)
        .args([
            "-std=c99",
            "-O1",
            "-Wall",
            "-Wextra",
            "-Wpedantic",
            "-Werror",
            "-I",
        ])
        .arg(root.join("include"))
        .arg("-o")
        .arg(&exe)
        .arg(root.join(format!("examples-c/{name}.c")))
        .arg(target.join("debug/libmvnmf.a"))
        .args(["-lm", "-lpthread", "-ldl"])
        .output()
        .expect("running cc");
    assert!(
        out.status.success(),
        "compiling {name}.c failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}
