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

/// Every function of the header that takes a pointer has a `# Safety`
/// section naming each pointer parameter (issue 33 item 1: the export!
/// declarations write it from their parameters; a hand-written export must
/// too). Reads the checked-in header, which `header_is_fresh` keeps current.
#[test]
fn every_pointer_parameter_has_a_safety_line() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let header = std::fs::read_to_string(root.join("include/mvnmf.h")).unwrap();
    let (mut doc, mut decl, mut checked, mut missing) = (Vec::new(), String::new(), 0, Vec::new());
    for line in header.lines() {
        let t = line.trim();
        // A declaration starts unindented (`mvnmf_status mvnmf_x(`); callback
        // typedefs and struct fields do not.
        let starts =
            line == t && !t.starts_with("//") && !t.starts_with("typedef") && !t.starts_with('#');
        let named = t.contains(" mvnmf_") || t.contains("*mvnmf_");
        if !decl.is_empty() || (starts && named && t.contains('(')) {
            decl.push_str(t);
            if !t.ends_with(");") {
                continue;
            }
            let (head, args) = decl.split_once('(').unwrap();
            let name = head
                .split_whitespace()
                .last()
                .unwrap()
                .trim_start_matches('*');
            let safety = doc
                .iter()
                .position(|l: &&str| l.contains("# Safety"))
                .map(|i| doc[i..].join("\n"));
            for arg in args
                .trim_end_matches(");")
                .split(',')
                .filter(|a| a.contains('*'))
            {
                let p = arg.trim().rsplit([' ', '*']).next().unwrap();
                checked += 1;
                if !safety
                    .as_deref()
                    .is_some_and(|s| s.contains(&format!("`{p}`")))
                {
                    missing.push(format!("{name}: {p}"));
                }
            }
            decl.clear();
            doc.clear();
        } else if let Some(c) = t.strip_prefix("//") {
            doc.push(c);
        } else {
            doc.clear();
        }
    }
    assert!(
        checked > 800,
        "only {checked} pointer parameters found: the parser is broken"
    );
    assert!(
        missing.is_empty(),
        "pointer parameters without a # Safety line: {missing:?}"
    );
}
