//! Builds one of the C example programs for a test: the C library (`mvnmf-capi`
//! in its own target directory, `target/capi-build`, shared with
//! `ffi-tests/tests/shared_library.rs`), then `examples-c/<name>.c` and its
//! companions `examples-c/<name>_*.c` with `-std=c99 -Wall -Wextra -Wpedantic
//! -Werror` against it. Returns the executable (`target/capi-build/<name>`).

use std::path::PathBuf;
use std::process::Command;

/// The program's other translation units, `examples-c/<name>_*.c` (e.g.
/// `reproduce_tables.c`), in name order.
fn companions(root: &std::path::Path, name: &str) -> Vec<PathBuf> {
    let prefix = format!("{name}_");
    let mut found: Vec<PathBuf> = std::fs::read_dir(root.join("examples-c"))
        .expect("reading examples-c")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let file = p.file_name().and_then(|f| f.to_str()).unwrap_or("");
            file.starts_with(&prefix) && file.ends_with(".c")
        })
        .collect();
    found.sort();
    found
}

/// Builds `name` once per test process (the tests of one file run in parallel
/// threads: a second build would rewrite the executable while the first test
/// runs it — "text file busy").
pub fn build(name: &str) -> PathBuf {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let mut built = BUILT
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(exe) = built.get(name) {
        return exe.clone();
    }
    let exe = build_now(name);
    built.insert(name.to_string(), exe.clone());
    exe
}

fn build_now(name: &str) -> PathBuf {
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
        .args(companions(&root, name))
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
