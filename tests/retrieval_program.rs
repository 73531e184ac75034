//! `examples-c/retrieval.c` end to end: the C library is built (`mvnmf-capi`,
//! its own target directory), the program compiled with `-std=c99 -Wall
//! -Wextra -Wpedantic -Werror` and run on the shipped `data/ng20-sample` (with
//! labels: every column of the table filled, MAP far above chance) and on a
//! copy without labels (the known-item columns only), and refused a shared
//! dimension larger than a rank.

mod c_program;

use std::path::PathBuf;
use std::process::Command;

/// The table's rows: `K` and the six cells after it.
fn rows(out: &str) -> Vec<(usize, Vec<String>)> {
    out.lines()
        .filter(|l| l.starts_with("| ") && l.as_bytes().get(2).is_some_and(|b| b.is_ascii_digit()))
        .map(|l| {
            let c: Vec<String> = l.split('|').map(|s| s.trim().to_string()).collect();
            (c[1].parse().unwrap(), c[2..8].to_vec())
        })
        .collect()
}

#[test]
fn retrieval_runs_on_the_shipped_sample_with_and_without_labels() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let exe = c_program::build("retrieval");
    let data = root.join("data/ng20-sample");
    let args = [
        "--ks",
        "0,4,8",
        "--ranks",
        "8,8",
        "--iters",
        "30",
        "--queries",
        "150",
        "--pr",
        "4",
    ];
    let out = Command::new(&exe).args(args).arg(&data).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = rows(&text);
    assert_eq!(
        r.iter().map(|x| x.0).collect::<Vec<_>>(),
        [0, 4, 8],
        "{text}"
    );
    for (k, cells) in &r {
        let v: Vec<f64> = cells[..5].iter().map(|c| c.parse().unwrap()).collect();
        assert!(
            v.iter().all(|&x| (0.0..=1.0).contains(&x)),
            "K={k}: {cells:?}"
        );
        // Chance MAP with 4 top-level groups is about 0.26.
        assert!(v[0] > 0.35 && v[3] > 0.3, "K={k}: {cells:?}");
    }
    assert!(text.contains("11-point P at recall"), "{text}");

    // Without labels: the known-item columns only.
    let bare = root.join("target/capi-build/ng20-unlabeled");
    let _ = std::fs::remove_dir_all(&bare);
    std::fs::create_dir_all(&bare).unwrap();
    for f in ["meta.txt", "view1.f64.gz", "view2.f64.gz"] {
        std::fs::copy(data.join(f), bare.join(f)).unwrap();
    }
    let out = Command::new(&exe)
        .args(&args[..8])
        .arg(&bare)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for (k, cells) in rows(&text) {
        assert_eq!(&cells[..3], ["-", "-", "-"], "K={k}");
        assert!(cells[3].parse::<f64>().unwrap() > 0.3, "K={k}: {cells:?}");
    }

    // K larger than a rank: refused with a message, exit status 1.
    let out = Command::new(&exe)
        .args(["--ks", "9", "--ranks", "8,8"])
        .arg(&data)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("K <= min"));
}

/// The share of relevant items printed in the header (about a random ranking's MAP).
fn chance(out: &str) -> f64 {
    let at = out
        .find("random ranking's MAP: ")
        .expect("the header gives the chance level")
        + 22;
    out[at..at + 6].parse().unwrap()
}

/// The paper's setting (`--tags`): noisy tags, an accurate auxiliary, keyword
/// queries. Every selection is printed, every metric is a probability, the
/// test queries' MAP is above a random ranking's for every model, the same
/// seed gives the same table, and bad options are refused.
#[test]
fn retrieval_tag_setting_runs_and_ranks_above_chance() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let exe = c_program::build("retrieval");
    let data = root.join("data/ng20-sample");
    for aux in ["same", "other"] {
        let args = [
            "--tags",
            "8",
            "--keywords",
            "40",
            "--ks",
            "0,4,8",
            "--ranks",
            "8,8",
            "--iters",
            "30",
            "--lams",
            "1,4",
            "--aux",
            aux,
        ];
        let run = || {
            let out = Command::new(&exe).args(args).arg(&data).output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        let text = run();
        let c = chance(&text);
        assert!(c > 0.01 && c < 0.2, "{text}");
        let r = rows(&text);
        // K = 0 once (the weight changes nothing there), K = 4 and 8 at both weights.
        assert_eq!(
            r.iter().map(|x| x.0).collect::<Vec<_>>(),
            [0, 4, 8, 4, 8],
            "{text}"
        );
        for (k, cells) in &r {
            let v: Vec<f64> = cells[1..].iter().map(|c| c.parse().unwrap()).collect();
            assert!(
                v.iter().all(|&x| (0.0..=1.0).contains(&x)),
                "K={k}: {cells:?}"
            );
            assert!(
                v[3] > 1.2 * c,
                "K={k}: test MAP {} vs chance {c}\n{text}",
                v[3]
            );
        }
        for sel in ["select chosen K=4 ", "select K=0 K=0 ", "select K=R K=8 "] {
            assert!(text.contains(sel), "{sel}\n{text}");
        }
        let again = run();
        let table = |t: &str| {
            t.lines()
                .filter(|l| !l.starts_with("wall"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(
            table(&text),
            table(&again),
            "the same seed gives the same table"
        );
    }
    for (opt, val) in [("--noise", "1"), ("--aux", "both")] {
        let out = Command::new(&exe)
            .args(["--tags", "8", opt, val])
            .arg(&data)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{opt} {val}");
    }
}
