//! Evaluation metrics: hand-computed cases, agreement with scikit-learn /
//! scipy on random cases to 1e-12 (fixtures from `scripts/make_eval_fixtures.py`),
//! Kuhn–Munkres against brute force, error handling.

use std::collections::HashMap;

use mvnmf::eval::{self, NmiNorm, UNASSIGNED};
use mvnmf::linalg::mat::MatRef;
use mvnmf::Error;

const TOL: f64 = 1e-12;

// ------------------------------------------------------------------ fixtures

type Case = HashMap<String, Vec<String>>;

fn fixture(name: &str) -> Vec<(String, Case)> {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut cases: Vec<(String, Case)> = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut it = line.split_whitespace();
        let key = it.next().unwrap().to_string();
        let vals: Vec<String> = it.map(str::to_string).collect();
        if key == "case" {
            cases.push((vals[0].clone(), Case::new()));
        } else {
            cases
                .last_mut()
                .expect("a key before the first case")
                .1
                .insert(key, vals);
        }
    }
    assert!(!cases.is_empty(), "{path} has no case");
    cases
}

fn f(c: &Case, k: &str) -> Vec<f64> {
    c.get(k)
        .unwrap_or_else(|| panic!("missing {k}"))
        .iter()
        .map(|s| {
            if s == "nan" {
                f64::NAN
            } else {
                s.parse().unwrap()
            }
        })
        .collect()
}
fn f1(c: &Case, k: &str) -> f64 {
    f(c, k)[0]
}
fn u(c: &Case, k: &str) -> Vec<usize> {
    c[k].iter().map(|s| s.parse().unwrap()).collect()
}
fn u1(c: &Case, k: &str) -> usize {
    u(c, k)[0]
}
fn u32s(c: &Case, k: &str) -> Vec<u32> {
    c[k].iter().map(|s| s.parse().unwrap()).collect()
}
fn u8s(c: &Case, k: &str) -> Vec<u8> {
    c[k].iter().map(|s| s.parse().unwrap()).collect()
}

fn close(a: f64, b: f64, tol: f64, what: &str) {
    assert!(
        (a.is_nan() && b.is_nan()) || (a - b).abs() <= tol,
        "{what}: mvnmf {a:.17} vs reference {b:.17} (diff {:.3e})",
        (a - b).abs()
    );
}

fn work(bytes: usize) -> Vec<u8> {
    vec![0xA5; bytes] // garbage: routines must not rely on zeroed scratch
}

// ---------------------------------------------------------------- clustering

#[test]
fn clustering_accuracy_and_nmi_match_sklearn() {
    for (name, c) in fixture("eval_cluster.txt") {
        let (nc, nk) = (u1(&c, "n_classes"), u1(&c, "n_clusters"));
        let (t, p) = (u32s(&c, "truth"), u32s(&c, "pred"));
        let mut w = work(eval::clustering_accuracy_workspace(nc, nk).unwrap());
        let acc = eval::clustering_accuracy(&t, &p, nc, nk, &mut w).unwrap();
        close(acc, f1(&c, "accuracy"), TOL, &format!("{name} accuracy"));
        let mut w = work(eval::nmi_workspace(nc, nk).unwrap());
        for (norm, key) in [
            (NmiNorm::Max, "nmi_max"),
            (NmiNorm::Arithmetic, "nmi_arithmetic"),
            (NmiNorm::Geometric, "nmi_geometric"),
            (NmiNorm::Min, "nmi_min"),
        ] {
            let v = eval::nmi(&t, &p, nc, nk, norm, &mut w).unwrap();
            close(v, f1(&c, key), TOL, &format!("{name} {key}"));
        }
    }
}

#[test]
fn clustering_hand_cases() {
    // Classes 0,1,2 map to clusters 1,0,2; one item of class 2 is in cluster 0.
    let t = [0, 0, 1, 1, 2, 2];
    let p = [1, 1, 0, 0, 0, 2];
    let mut w = work(eval::clustering_accuracy_workspace(3, 3).unwrap());
    close(
        eval::clustering_accuracy(&t, &p, 3, 3, &mut w).unwrap(),
        5.0 / 6.0,
        TOL,
        "acc",
    );
    // Relabelled perfect clustering: 1; more clusters than classes: surplus wrong.
    let mut w = work(eval::clustering_accuracy_workspace(2, 4).unwrap());
    close(
        eval::clustering_accuracy(&[0, 0, 1, 1], &[3, 3, 2, 0], 2, 4, &mut w).unwrap(),
        0.75,
        TOL,
        "acc surplus",
    );
    // NMI by hand: truth [0,0,1,1], pred [0,0,0,1].
    let ln = f64::ln;
    let mi = 0.5 * ln(4.0 / 3.0) + 0.25 * ln(2.0 / 3.0) + 0.25 * ln(2.0);
    let ht = ln(2.0);
    let hp = -(0.75 * ln(0.75) + 0.25 * ln(0.25));
    let mut w = work(eval::nmi_workspace(2, 2).unwrap());
    let t = [0, 0, 1, 1];
    let p = [0, 0, 0, 1];
    for (norm, d) in [
        (NmiNorm::Max, ht.max(hp)),
        (NmiNorm::Arithmetic, (ht + hp) / 2.0),
        (NmiNorm::Geometric, (ht * hp).sqrt()),
        (NmiNorm::Min, ht.min(hp)),
    ] {
        close(
            eval::nmi(&t, &p, 2, 2, norm, &mut w).unwrap(),
            mi / d,
            1e-15,
            "nmi",
        );
    }
    // Max <= arithmetic <= geometric <= min on the same clustering.
    let v: Vec<f64> = [
        NmiNorm::Max,
        NmiNorm::Arithmetic,
        NmiNorm::Geometric,
        NmiNorm::Min,
    ]
    .iter()
    .map(|&n| eval::nmi(&t, &p, 2, 2, n, &mut w).unwrap())
    .collect();
    assert!(v.windows(2).all(|x| x[0] <= x[1]), "{v:?}");
}

#[test]
fn clustering_errors() {
    let mut w = work(eval::clustering_accuracy_workspace(2, 2).unwrap());
    assert_eq!(
        eval::clustering_accuracy(&[0, 2], &[0, 1], 2, 2, &mut w),
        Err(Error::BadLabel)
    );
    assert_eq!(
        eval::clustering_accuracy(&[0, 1], &[0, 1, 1], 2, 2, &mut w),
        Err(Error::DimensionMismatch)
    );
    assert_eq!(
        eval::clustering_accuracy(&[], &[], 2, 2, &mut w),
        Err(Error::ZeroDimension)
    );
    assert_eq!(
        eval::clustering_accuracy(&[0, 1], &[0, 1], 2, 2, &mut w[..10]),
        Err(Error::WorkspaceTooSmall)
    );
    let mut w = work(eval::nmi_workspace(2, 2).unwrap());
    assert_eq!(
        eval::nmi(&[0, 1], &[0, 5], 2, 2, NmiNorm::Max, &mut w),
        Err(Error::BadLabel)
    );
    assert_eq!(eval::nmi_workspace(0, 2), Err(Error::ZeroDimension));
    assert_eq!(
        eval::clustering_accuracy_workspace(usize::MAX, 2),
        Err(Error::SizeOverflow)
    );
}

// ---------------------------------------------------------------- assignment

/// Best total over all injective maps rows -> cols (`r <= c`), by recursion.
fn brute(cost: &[f64], r: usize, c: usize, maximize: bool) -> f64 {
    fn go(cost: &[f64], r: usize, c: usize, i: usize, used: &mut Vec<bool>, maximize: bool) -> f64 {
        if i == r {
            return 0.0;
        }
        let mut best = if maximize {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
        for j in 0..c {
            if !used[j] {
                used[j] = true;
                let v = cost[i + j * r] + go(cost, r, c, i + 1, used, maximize);
                used[j] = false;
                best = if maximize { best.max(v) } else { best.min(v) };
            }
        }
        best
    }
    if r <= c {
        go(cost, r, c, 0, &mut vec![false; c], maximize)
    } else {
        // Transpose.
        let t: Vec<f64> = (0..r * c).map(|k| cost[(k / c) + (k % c) * r]).collect();
        go(&t, c, r, 0, &mut vec![false; r], maximize)
    }
}

fn check_matching(cost: &[f64], r: usize, c: usize, m: &[usize], total: f64) {
    let mut seen = vec![false; c];
    let mut sum = 0.0;
    let mut matched = 0;
    for (i, &j) in m.iter().enumerate() {
        if j == UNASSIGNED {
            continue;
        }
        assert!(j < c && !seen[j], "column {j} reused or out of range");
        seen[j] = true;
        sum += cost[i + j * r];
        matched += 1;
    }
    assert_eq!(matched, r.min(c));
    close(sum, total, 1e-9, "matching total");
}

#[test]
fn kuhn_munkres_matches_brute_force() {
    let mut state = 12345u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as f64 / (1u64 << 31) as f64
    };
    for r in 1..=6 {
        for c in 1..=6 {
            for rep in 0..6 {
                // Half the cases integer-valued with many ties.
                let cost: Vec<f64> = (0..r * c)
                    .map(|_| {
                        let x = next();
                        if rep % 2 == 0 {
                            (x * 4.0).floor()
                        } else {
                            x * 10.0 - 5.0
                        }
                    })
                    .collect();
                let m = MatRef::col_major(&cost, r, c).unwrap();
                let mut w = work(eval::assignment_workspace(r, c).unwrap());
                for maximize in [false, true] {
                    let mut out = vec![0usize; r];
                    let t = eval::assignment(m, maximize, &mut out, &mut w).unwrap();
                    let b = brute(&cost, r, c, maximize);
                    close(t, b, 1e-9, &format!("{r}x{c} rep {rep} max={maximize}"));
                    check_matching(&cost, r, c, &out, t);
                    // Deterministic.
                    let mut again = vec![0usize; r];
                    eval::assignment(m, maximize, &mut again, &mut w).unwrap();
                    assert_eq!(out, again);
                }
            }
        }
    }
}

#[test]
fn kuhn_munkres_matches_scipy() {
    for (name, c) in fixture("eval_assignment.txt") {
        let (r, cc) = (u1(&c, "rows"), u1(&c, "cols"));
        let cost = f(&c, "cost");
        let m = MatRef::col_major(&cost, r, cc).unwrap();
        let mut w = work(eval::assignment_workspace(r, cc).unwrap());
        let mut out = vec![0usize; r];
        let t = eval::assignment(m, false, &mut out, &mut w).unwrap();
        close(t, f1(&c, "min_total"), 1e-10, &format!("{name} min"));
        check_matching(&cost, r, cc, &out, t);
        let t = eval::assignment(m, true, &mut out, &mut w).unwrap();
        close(t, f1(&c, "max_total"), 1e-10, &format!("{name} max"));
        check_matching(&cost, r, cc, &out, t);
    }
}

#[test]
fn assignment_strided_and_errors() {
    // A transposed view (row stride != 1) gives the transposed matching.
    let cost = [4.0, 2.0, 3.0, 1.0, 0.0, 2.0]; // 3x2 column-major
    let m = MatRef::col_major(&cost, 3, 2).unwrap();
    let mut w = work(eval::assignment_workspace(3, 2).unwrap());
    let mut out = [0usize; 3];
    let t = eval::assignment(m, false, &mut out, &mut w).unwrap();
    // Rows (4,1), (2,0), (3,2): the best two-row matchings cost 1+2 or 3+0.
    assert_eq!(t, 3.0);
    check_matching(&cost, 3, 2, &out, t);
    let mut out_t = [0usize; 2];
    let t2 = eval::assignment(m.t(), false, &mut out_t, &mut w).unwrap();
    assert_eq!(t, t2);
    for (i, &j) in out.iter().enumerate() {
        if j != UNASSIGNED {
            assert_eq!(out_t[j], i);
        }
    }
    let bad = [1.0, f64::NAN];
    let mut o = [7usize; 1];
    assert_eq!(
        eval::assignment(
            MatRef::col_major(&bad, 1, 2).unwrap(),
            false,
            &mut o,
            &mut w
        ),
        Err(Error::NonFiniteInput)
    );
    assert_eq!(o, [7]);
    assert_eq!(
        eval::assignment(m, false, &mut [0usize; 2], &mut w),
        Err(Error::DimensionMismatch)
    );
    assert_eq!(eval::assignment_workspace(0, 3), Err(Error::ZeroDimension));
}

// ----------------------------------------------------------------- retrieval

#[test]
fn retrieval_matches_sklearn() {
    for (name, c) in fixture("eval_retrieval.txt") {
        let cutoffs = u(&c, "cutoffs");
        if name == "map" {
            let (n, nq) = (u1(&c, "n_items"), u1(&c, "n_queries"));
            let (s, r) = (f(&c, "scores"), u8s(&c, "relevant"));
            let mut w = work(eval::query_metrics_workspace(n).unwrap());
            let mut ap = vec![0.0; nq];
            let mut pa = vec![0.0; cutoffs.len()];
            let mut pr = [0.0; 11];
            let map = eval::retrieval_metrics(
                MatRef::col_major(&s, n, nq).unwrap(),
                MatRef::col_major(&r, n, nq).unwrap(),
                &cutoffs,
                Some(&mut ap),
                &mut pa,
                Some(&mut pr),
                &mut w,
            )
            .unwrap();
            close(map, f1(&c, "map"), TOL, "MAP");
            for (q, (&a, &b)) in ap.iter().zip(&f(&c, "ap_per_query")).enumerate() {
                close(a, b, TOL, &format!("AP of query {q}"));
            }
            for (i, (&a, &b)) in pa.iter().zip(&f(&c, "mean_precision_at")).enumerate() {
                close(a, b, TOL, &format!("mean P@{}", cutoffs[i]));
            }
            for (i, (&a, &b)) in pr.iter().zip(&f(&c, "mean_pr11")).enumerate() {
                close(a, b, TOL, &format!("mean 11-point level {i}"));
            }
            continue;
        }
        let (s, r) = (f(&c, "scores"), u8s(&c, "relevant"));
        let n = s.len();
        let mut w = work(eval::query_metrics_workspace(n).unwrap());
        let mut pa = vec![0.0; cutoffs.len()];
        let mut pr = [0.0; 11];
        let ap = eval::query_metrics(&s, &r, &cutoffs, &mut pa, Some(&mut pr), &mut w).unwrap();
        close(ap, f1(&c, "ap"), TOL, &format!("{name} AP"));
        for (i, (&a, &b)) in pa.iter().zip(&f(&c, "precision_at")).enumerate() {
            close(a, b, TOL, &format!("{name} P@{}", cutoffs[i]));
        }
        for (i, (&a, &b)) in pr.iter().zip(&f(&c, "pr11")).enumerate() {
            close(a, b, TOL, &format!("{name} 11-point level {i}"));
        }
        // The same ranking given as a list: identical values.
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| s[b].partial_cmp(&s[a]).unwrap().then(a.cmp(&b)));
        let list: Vec<u8> = order.iter().map(|&j| r[j]).collect();
        let nrel = r.iter().filter(|&&x| x == 1).count();
        let mut pa2 = vec![0.0; cutoffs.len()];
        let mut pr2 = [0.0; 11];
        let ap2 =
            eval::ranked_list_metrics(&list, nrel, &cutoffs, &mut pa2, Some(&mut pr2)).unwrap();
        close(ap2, ap, 1e-15, &format!("{name} list AP"));
        assert_eq!(pa, pa2, "{name}");
        assert_eq!(pr, pr2, "{name}");
        // top_n is the head of that ranking.
        for m in [1, 7.min(n), n] {
            let mut top = vec![0usize; m];
            eval::top_n(&s, &mut top).unwrap();
            assert_eq!(top, order[..m], "{name} top {m}");
        }
    }
}

#[test]
fn retrieval_hand_cases() {
    let s = [0.9, 0.8, 0.7, 0.6, 0.5];
    let r = [1, 0, 1, 0, 1];
    let cut = [1, 2, 5, 10];
    let mut w = work(eval::query_metrics_workspace(5).unwrap());
    let mut pa = [0.0; 4];
    let mut pr = [0.0; 11];
    let ap = eval::query_metrics(&s, &r, &cut, &mut pa, Some(&mut pr), &mut w).unwrap();
    close(ap, (1.0 + 2.0 / 3.0 + 3.0 / 5.0) / 3.0, 1e-15, "AP");
    assert_eq!(pa, [1.0, 0.5, 0.6, 0.3]);
    let (a, b, c) = (1.0, 2.0 / 3.0, 0.6);
    assert_eq!(pr, [a, a, a, a, b, b, b, c, c, c, c]);

    // Ties break by index: the relevant item last of three equal scores.
    let ap = eval::query_metrics(&[1.0, 1.0, 1.0], &[0, 0, 1], &[], &mut [], None, &mut w).unwrap();
    close(ap, 1.0 / 3.0, 1e-15, "tied AP");
    // No relevant item: AP 0, curve 0.
    let mut pr = [9.0; 11];
    let ap = eval::query_metrics(
        &[0.3, 0.1],
        &[0, 0],
        &[1],
        &mut [9.0],
        Some(&mut pr),
        &mut w,
    )
    .unwrap();
    assert_eq!(ap, 0.0);
    assert_eq!(pr, [0.0; 11]);

    // A truncated ranked list with 4 relevant items in total.
    let mut pa = [0.0; 2];
    let mut pr = [0.0; 11];
    let ap = eval::ranked_list_metrics(&[1, 0, 1], 4, &[1, 3], &mut pa, Some(&mut pr)).unwrap();
    close(ap, (1.0 + 2.0 / 3.0) / 4.0, 1e-15, "list AP");
    assert_eq!(pa, [1.0, 2.0 / 3.0]);
    // Hits at ranks 1 and 3 (recall 1/4, 2/4); higher recall is never reached.
    let b = 2.0 / 3.0;
    assert_eq!(pr, [1.0, 1.0, 1.0, b, b, b, 0.0, 0.0, 0.0, 0.0, 0.0]);

    let mut top = [0usize; 3];
    eval::top_n(&[3.0, 1.0, 3.0, 2.0, 5.0], &mut top).unwrap();
    assert_eq!(top, [4, 0, 2]);
}

#[test]
fn retrieval_errors_leave_outputs() {
    let mut w = work(eval::query_metrics_workspace(3).unwrap());
    let mut pa = [7.0; 1];
    let mut pr = [7.0; 11];
    assert_eq!(
        eval::query_metrics(
            &[1.0, 2.0, 3.0],
            &[0, 2, 1],
            &[1],
            &mut pa,
            Some(&mut pr),
            &mut w
        ),
        Err(Error::BadLabel)
    );
    assert_eq!(
        eval::query_metrics(
            &[1.0, f64::NAN, 3.0],
            &[0, 1, 1],
            &[1],
            &mut pa,
            None,
            &mut w
        ),
        Err(Error::NonFiniteInput)
    );
    assert_eq!(
        eval::query_metrics(&[1.0, 2.0, 3.0], &[0, 1, 1], &[0], &mut pa, None, &mut w),
        Err(Error::BadParameter)
    );
    assert_eq!(
        eval::query_metrics(&[1.0, 2.0, 3.0], &[0, 1], &[1], &mut pa, None, &mut w),
        Err(Error::DimensionMismatch)
    );
    assert_eq!(
        eval::query_metrics(
            &[1.0, 2.0, 3.0],
            &[0, 1, 1],
            &[1],
            &mut pa,
            None,
            &mut w[..8]
        ),
        Err(Error::WorkspaceTooSmall)
    );
    assert_eq!(pa, [7.0]);
    assert_eq!(pr, [7.0; 11]);
    assert_eq!(
        eval::ranked_list_metrics(&[1, 1], 1, &[1], &mut pa, None),
        Err(Error::BadParameter)
    );
    let mut top = [9usize; 4];
    assert_eq!(
        eval::top_n(&[1.0, 2.0, 3.0], &mut top),
        Err(Error::DimensionMismatch)
    );
    assert_eq!(top, [9; 4]);
}

// --------------------------------------------------------------- multi-label

#[test]
fn multilabel_matches_sklearn() {
    for (name, c) in fixture("eval_multilabel.txt") {
        let (nl, n) = (u1(&c, "n_labels"), u1(&c, "n_items"));
        let (t, p, s) = (u8s(&c, "truth"), u8s(&c, "pred"), f(&c, "scores"));
        let tm = MatRef::col_major(&t, nl, n).unwrap();
        let sc = eval::multilabel_scores(tm, MatRef::col_major(&p, nl, n).unwrap()).unwrap();
        close(
            sc.macro_f1,
            f1(&c, "macro_f1"),
            TOL,
            &format!("{name} macro F1"),
        );
        close(
            sc.micro_f1,
            f1(&c, "micro_f1"),
            TOL,
            &format!("{name} micro F1"),
        );
        close(
            sc.hamming_loss,
            f1(&c, "hamming_loss"),
            TOL,
            &format!("{name} Hamming"),
        );
        let mut w = work(eval::average_auroc_workspace(n).unwrap());
        let mut per = vec![0.0; nl];
        let a = eval::average_auroc(
            tm,
            MatRef::col_major(&s, nl, n).unwrap(),
            Some(&mut per),
            &mut w,
        )
        .unwrap();
        for (l, (&x, &y)) in per.iter().zip(&f(&c, "auroc")).enumerate() {
            close(x, y, TOL, &format!("{name} AUROC of label {l}"));
        }
        close(
            a.mean,
            f1(&c, "auroc_mean"),
            TOL,
            &format!("{name} mean AUROC"),
        );
        assert_eq!(a.labels_scored, u1(&c, "labels_scored"), "{name}");
    }
}

#[test]
fn multilabel_hand_cases() {
    // 2 labels x 3 items, column-major (item j's labels at 2j, 2j+1).
    // label 0: truth 1 0 1, pred 1 1 0 -> F1 = 2/(2+2); label 1 never true nor predicted -> 0.
    let t = [1, 0, 0, 0, 1, 0];
    let p = [1, 0, 1, 0, 0, 0];
    let s = eval::multilabel_scores(
        MatRef::col_major(&t, 2, 3).unwrap(),
        MatRef::col_major(&p, 2, 3).unwrap(),
    )
    .unwrap();
    close(s.macro_f1, 0.25, 1e-15, "macro");
    close(s.micro_f1, 0.5, 1e-15, "micro");
    close(s.hamming_loss, 2.0 / 6.0, 1e-15, "hamming");
    // AUROC with a tie between a positive and a negative: (0.5 + 1 + 0 + 1) / 4.
    let t = [1, 0, 1, 0];
    let sc = [0.8, 0.8, 0.3, 0.1];
    let mut w = work(eval::average_auroc_workspace(4).unwrap());
    let a = eval::average_auroc(
        MatRef::col_major(&t, 1, 4).unwrap(),
        MatRef::col_major(&sc, 1, 4).unwrap(),
        None,
        &mut w,
    )
    .unwrap();
    close(a.mean, 0.625, 1e-15, "auroc");
    // Constant truth: no AUROC.
    let a = eval::average_auroc(
        MatRef::col_major(&[1u8, 1, 1, 1], 1, 4).unwrap(),
        MatRef::col_major(&sc, 1, 4).unwrap(),
        None,
        &mut w,
    )
    .unwrap();
    assert!(a.mean.is_nan());
    assert_eq!(a.labels_scored, 0);
    // Errors.
    assert_eq!(
        eval::multilabel_scores(
            MatRef::col_major(&[2u8, 0], 1, 2).unwrap(),
            MatRef::col_major(&[0u8, 0], 1, 2).unwrap()
        ),
        Err(Error::BadLabel)
    );
    let mut per = [5.0; 1];
    assert_eq!(
        eval::average_auroc(
            MatRef::col_major(&t, 1, 4).unwrap(),
            MatRef::col_major(&[0.1, f64::INFINITY, 0.0, 0.0], 1, 4).unwrap(),
            Some(&mut per),
            &mut w
        ),
        Err(Error::NonFiniteInput)
    );
    assert_eq!(per, [5.0]);
}

// -------------------------------------------------------------------- k-means

#[test]
fn kmeans_finds_sklearns_optimum_on_separated_blobs() {
    for (name, c) in fixture("eval_kmeans.txt") {
        let (d, n, k) = (u1(&c, "d"), u1(&c, "n"), u1(&c, "k"));
        let x = f(&c, "x");
        let p = eval::KMeansParams::default();
        let mut w = work(eval::kmeans_workspace(d, n, k, &p).unwrap());
        let mut a = vec![0u32; n];
        let r = eval::kmeans(
            MatRef::col_major(&x, d, n).unwrap(),
            k,
            &p,
            &mut a,
            None,
            &mut w,
        )
        .unwrap();
        let reference = f1(&c, "inertia");
        assert!(
            (r.inertia - reference).abs() <= 1e-12 * reference,
            "{name}: inertia {} vs sklearn {}",
            r.inertia,
            reference
        );
    }
}
