//! The layers of CONTRIBUTING.md ("Layers"): every `crate::…` path in the
//! code of `src/` (comments and docs aside) names a module of the same layer
//! or of one below it, and no model names another model.

use std::fs;
use std::path::{Path, PathBuf};

/// Layers, lowest first (CONTRIBUTING.md's table).
const LAYERS: &[&[&str]] = &[
    &["error", "work", "par", "rng", "comm"],
    &["linalg"],
    &["data", "prep", "interop"],
    &["similarity"],
    &["graph"],
    &["steps"],
    &["solvers"],
    &["models"],
    &["pipeline"],
    &["eval"],
    &["ffi"],
];

/// The crate root's re-exports (`src/lib.rs`) and the module they come from.
const ROOT: &[(&str, &str)] = &[
    ("Csc", "data"),
    ("Dense", "data"),
    ("View", "data"),
    ("ViewKind", "data"),
    ("ViewSet", "data"),
    ("ViewShape", "data"),
    ("Error", "error"),
    ("Real", "linalg"),
    ("HostPool", "par"),
    ("Parallel", "par"),
    ("Init", "steps"),
    ("Monitor", "steps"),
    ("Objective", "steps"),
    ("Phase", "steps"),
    ("Progress", "steps"),
    ("Report", "steps"),
    ("Stop", "steps"),
    ("StopRule", "steps"),
    ("Term", "steps"),
    ("Stack", "work"),
    ("WorkReq", "work"),
];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The `crate::…` paths of a line's code: `(first segment, second segment)`.
fn paths(code: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().last();
        rest = &rest[i + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `mycrate::`, not this crate
        }
        let seg = |s: &str| -> String {
            s.chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        };
        let first = seg(rest);
        let second = rest
            .get(first.len()..)
            .and_then(|r| r.strip_prefix("::"))
            .map(seg)
            .unwrap_or_default();
        out.push((first, second));
    }
    out
}

#[test]
fn imports_run_only_downward() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    assert!(all.len() > 50, "{} files", all.len());
    let mut bad = Vec::new();
    let mut seen = 0;
    for f in &all {
        let rel = f.strip_prefix(&src).unwrap();
        let mut comps = rel.components().map(|c| c.as_os_str().to_str().unwrap());
        let top = comps.next().unwrap().trim_end_matches(".rs").to_string();
        if top == "lib" {
            continue;
        }
        // The model a file of `src/models/` belongs to.
        let model =
            (top == "models").then(|| comps.next().unwrap().trim_end_matches(".rs").to_string());
        let here = layer(&top).unwrap_or_else(|| panic!("{rel:?}: no layer for `{top}`"));
        let text = fs::read_to_string(f).unwrap();
        for (no, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap();
            for (first, second) in paths(code) {
                seen += 1;
                let module = if first.starts_with(char::is_uppercase) {
                    match ROOT.iter().find(|(n, _)| *n == first) {
                        Some((_, m)) => m.to_string(),
                        None => panic!("{rel:?}:{}: crate::{first} unknown", no + 1),
                    }
                } else {
                    first.clone()
                };
                let Some(there) = layer(&module) else {
                    panic!("{rel:?}:{}: no layer for crate::{module}", no + 1);
                };
                let cross_model = module == "models"
                    && model.as_deref().is_some_and(|m| m != "mod" && m != second);
                if there > here || cross_model {
                    bad.push(format!("{}:{}: {}", rel.display(), no + 1, line.trim()));
                }
            }
        }
    }
    assert!(seen > 300, "only {seen} crate paths found");
    assert!(bad.is_empty(), "imports that run up:\n{}", bad.join("\n"));
}

#[test]
fn the_check_sees_an_upward_import() {
    assert_eq!(
        paths("use crate::models::nmf::fit; x = mycrate::y; crate::Error"),
        vec![
            ("models".to_string(), "nmf".to_string()),
            ("Error".to_string(), String::new())
        ]
    );
    assert!(layer("models") > layer("solvers"));
    assert!(layer("solvers") > layer("steps"));
}
