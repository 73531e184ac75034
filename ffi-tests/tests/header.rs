//! `include/mvnmf.h` must be exactly what cbindgen generates from the source.
//! Regenerate it with `MVNMF_BLESS=1 cargo test -p mvnmf-ffi-tests --test header`.

use std::path::PathBuf;

#[test]
fn header_is_fresh() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    // cbindgen reads the macro-expanded crate (`[parse.expand]` in
    // cbindgen.toml): `cargo rustc -- -Zunpretty=expanded`, an unstable flag,
    // allowed for this crate alone on a stable compiler; its own target
    // directory, under target/, so the expansion never waits for the lock
    // of the build running this test.
    std::env::set_var("RUSTC_BOOTSTRAP", "mvnmf");
    std::env::set_var(
        "CARGO_EXPAND_TARGET_DIR",
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cbindgen-expand"),
    );
    let mut out = Vec::new();
    cbindgen::Builder::new()
        .with_crate(&root)
        .with_config(config)
        .generate()
        .expect("cbindgen failed on src/")
        .write(&mut out);
    let generated = String::from_utf8(out).unwrap();
    let path = root.join("include/mvnmf.h");
    if std::env::var_os("MVNMF_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "include/mvnmf.h is stale: regenerate it with MVNMF_BLESS=1 cargo test -p mvnmf-ffi-tests --test header"
    );
}
