//! The C ABI of the evaluation module, called from Rust: results agree with
//! the Rust API; NULL pointers, bad enums and bad sizes give their status codes
//! and leave every output untouched; workspace queries are exact at any
//! alignment.

use std::ptr::{null, null_mut};

use mvnmf::eval::{self, KMeansParams, NmiNorm};
use mvnmf::ffi::*;
use mvnmf::linalg::mat::MatRef;

type S = mvnmf_status;

fn ws(f: impl FnOnce(*mut usize) -> S) -> Vec<u8> {
    let mut b = 0usize;
    assert_eq!(f(&mut b), S::Ok);
    vec![0u8; b]
}

#[test]
fn constants() {
    assert_eq!(MVNMF_UNLABELED, eval::UNLABELED);
    let d = mvnmf_kmeans_params_default();
    let r = KMeansParams::default();
    assert_eq!(
        (d.restarts, d.max_iter, d.tol, d.seed),
        (r.restarts, r.max_iter, r.tol, r.seed)
    );
    let k = mvnmf_knn_params_default();
    assert_eq!((k.k, k.metric), (9, MVNMF_METRIC_EUCLIDEAN));
}

#[test]
fn split_and_knn() {
    let n = 60;
    let labels: Vec<u32> = (0..n).map(|j| (j % 3) as u32).collect();
    let mut w = ws(|b| unsafe { mvnmf_stratified_split_workspace(n, b) });
    let mut mask = vec![7u8; n];
    let s = unsafe {
        mvnmf_stratified_split(
            labels.as_ptr(),
            n,
            3,
            0.25,
            5,
            mask.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            w.len(),
        )
    };
    assert_eq!(s, S::Ok);
    let mut rust = vec![false; n];
    eval::stratified_split(&labels, 3, 0.25, 5, &mut rust, &mut w).unwrap();
    assert_eq!(mask, rust.iter().map(|&b| b as u8).collect::<Vec<_>>());

    // Errors leave the mask untouched.
    let before = mask.clone();
    let bad_labels: Vec<u32> = (0..n).map(|j| (j % 4) as u32).collect();
    for (st, l, frac, out) in [
        (S::BadLabel, bad_labels.as_ptr(), 0.25, mask.as_mut_ptr()),
        (S::BadParameter, labels.as_ptr(), 1.5, mask.as_mut_ptr()),
        (S::NullPointer, null(), 0.25, mask.as_mut_ptr()),
        (S::NullPointer, labels.as_ptr(), 0.25, null_mut()),
    ] {
        let got = unsafe {
            mvnmf_stratified_split(l, n, 3, frac, 5, out, w.as_mut_ptr().cast(), w.len())
        };
        assert_eq!(got, st);
    }
    let got = unsafe {
        mvnmf_stratified_split(
            labels.as_ptr(),
            n,
            3,
            0.2,
            5,
            mask.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            8,
        )
    };
    assert_eq!(got, S::WorkspaceTooSmall);
    assert_eq!(mask, before);

    // kNN on 1-d points: class = position / 20.
    let x: Vec<f64> = (0..n).map(|j| j as f64).collect();
    let truth: Vec<u32> = (0..n).map(|j| (j / 20) as u32).collect();
    let masked: Vec<u32> = (0..n)
        .map(|j| {
            if mask[j] == 1 {
                truth[j]
            } else {
                MVNMF_UNLABELED
            }
        })
        .collect();
    let p = mvnmf_knn_params {
        k: 3,
        metric: MVNMF_METRIC_EUCLIDEAN,
    };
    let mut wk = ws(|b| unsafe { mvnmf_knn_predict_workspace(3, &p, b) });
    let mut pred = vec![99u32; n];
    let st = unsafe {
        mvnmf_knn_predict(
            x.as_ptr(),
            1,
            n,
            masked.as_ptr(),
            x.as_ptr(),
            n,
            3,
            &p,
            pred.as_mut_ptr(),
            wk.as_mut_ptr().cast(),
            wk.len(),
        )
    };
    assert_eq!(st, S::Ok);
    let mut acc = -1.0;
    let test: Vec<u8> = mask.iter().map(|&m| 1 - m).collect();
    assert_eq!(
        unsafe { mvnmf_accuracy(pred.as_ptr(), truth.as_ptr(), n, test.as_ptr(), &mut acc) },
        S::Ok
    );
    assert!(acc > 0.8, "kNN accuracy {acc}");
    let rust_acc = eval::accuracy(
        &pred,
        &truth,
        Some(&test.iter().map(|&t| t == 1).collect::<Vec<_>>()),
    );
    assert_eq!(acc, rust_acc);

    // Bad metric, k = 0, too few labeled, NULL output: untouched predictions.
    let snapshot = pred.clone();
    let bad = mvnmf_knn_params { k: 3, metric: 7 };
    let zero = mvnmf_knn_params { k: 0, metric: 0 };
    let many = mvnmf_knn_params { k: 50, metric: 0 };
    let mut big = ws(|b| unsafe { mvnmf_knn_predict_workspace(3, &many, b) });
    for (prm, out, status) in [
        (&bad, pred.as_mut_ptr(), S::BadParameter),
        (&zero, pred.as_mut_ptr(), S::BadParameter),
        (&many, pred.as_mut_ptr(), S::TooFewLabeled),
        (&p, null_mut(), S::NullPointer),
    ] {
        let st = unsafe {
            mvnmf_knn_predict(
                x.as_ptr(),
                1,
                n,
                masked.as_ptr(),
                x.as_ptr(),
                n,
                3,
                prm,
                out,
                big.as_mut_ptr().cast(),
                big.len(),
            )
        };
        assert_eq!(st, status);
    }
    assert_eq!(pred, snapshot);
    assert_eq!(
        unsafe { mvnmf_knn_predict_workspace(3, &bad, null_mut()) },
        S::NullPointer
    );
    let mut b = 0;
    assert_eq!(
        unsafe { mvnmf_knn_predict_workspace(3, &bad, &mut b) },
        S::BadParameter
    );
    let mask2 = vec![2u8; n];
    assert_eq!(
        unsafe { mvnmf_accuracy(pred.as_ptr(), truth.as_ptr(), n, mask2.as_ptr(), &mut acc) },
        S::BadLabel
    );
}

#[test]
fn kmeans_assignment_clustering() {
    let (d, n, k) = (2usize, 40usize, 4usize);
    let x: Vec<f64> = (0..d * n)
        .map(|t| ((t * 7919) % 101) as f64 / 10.0 + 20.0 * ((t / d) % 4) as f64)
        .collect();
    let p = mvnmf_kmeans_params {
        restarts: 3,
        ..mvnmf_kmeans_params_default()
    };
    let mut w = ws(|b| unsafe { mvnmf_kmeans_workspace(d, n, k, &p, b) });
    let mut a = vec![0u32; n];
    let mut c = vec![0.0; d * k];
    let mut rep = mvnmf_kmeans_report {
        inertia: -1.0,
        iterations: 0,
        converged: 0,
        best_restart: 0,
        reseeded: 0,
    };
    let st = unsafe {
        mvnmf_kmeans(
            x.as_ptr(),
            d,
            n,
            k,
            &p,
            a.as_mut_ptr(),
            c.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            w.len(),
            &mut rep,
        )
    };
    assert_eq!(st, S::Ok);
    let rp = KMeansParams {
        restarts: 3,
        ..KMeansParams::default()
    };
    let mut a2 = vec![0u32; n];
    let r = eval::kmeans(
        MatRef::col_major(&x, d, n).unwrap(),
        k,
        &rp,
        &mut a2,
        None,
        &mut w,
    )
    .unwrap();
    assert_eq!(a, a2);
    assert_eq!(rep.inertia, r.inertia);
    assert_eq!(rep.converged, r.converged as u32);
    // NULL centroids and report are fine; NULL x or assign are not.
    let st = unsafe {
        mvnmf_kmeans(
            x.as_ptr(),
            d,
            n,
            k,
            null(),
            a.as_mut_ptr(),
            null_mut(),
            w.as_mut_ptr().cast(),
            w.len(),
            null_mut(),
        )
    };
    assert_eq!(st, S::Ok);
    let snap = (a.clone(), c.clone());
    let bad = mvnmf_kmeans_params { restarts: 0, ..p };
    for (xp, kk, prm, ap, status) in [
        (null(), k, &p, a.as_mut_ptr(), S::NullPointer),
        (x.as_ptr(), k, &p, null_mut(), S::NullPointer),
        (x.as_ptr(), n + 1, &p, a.as_mut_ptr(), S::BadParameter),
        (x.as_ptr(), k, &bad, a.as_mut_ptr(), S::BadParameter),
    ] {
        let st = unsafe {
            mvnmf_kmeans(
                xp,
                d,
                n,
                kk,
                prm,
                ap,
                c.as_mut_ptr(),
                w.as_mut_ptr().cast(),
                w.len(),
                &mut rep,
            )
        };
        assert_eq!(st, status);
    }
    assert_eq!((a.clone(), c.clone()), snap);

    // Clustering accuracy and NMI of the k-means result against the blocks.
    let truth: Vec<u32> = (0..n).map(|j| (j % 4) as u32).collect();
    let mut wa = ws(|b| unsafe { mvnmf_clustering_accuracy_workspace(4, k, b) });
    let mut acc = -1.0;
    assert_eq!(
        unsafe {
            mvnmf_clustering_accuracy(
                truth.as_ptr(),
                a.as_ptr(),
                n,
                4,
                k,
                &mut acc,
                wa.as_mut_ptr().cast(),
                wa.len(),
            )
        },
        S::Ok
    );
    assert_eq!(
        acc,
        eval::clustering_accuracy(&truth, &a, 4, k, &mut wa).unwrap()
    );
    let mut wn = ws(|b| unsafe { mvnmf_nmi_workspace(4, k, b) });
    for (code, norm) in [
        (MVNMF_NMI_MAX, NmiNorm::Max),
        (MVNMF_NMI_ARITHMETIC, NmiNorm::Arithmetic),
        (MVNMF_NMI_GEOMETRIC, NmiNorm::Geometric),
        (MVNMF_NMI_MIN, NmiNorm::Min),
    ] {
        let mut v = -1.0;
        assert_eq!(
            unsafe {
                mvnmf_nmi(
                    truth.as_ptr(),
                    a.as_ptr(),
                    n,
                    4,
                    k,
                    code,
                    &mut v,
                    wn.as_mut_ptr().cast(),
                    wn.len(),
                )
            },
            S::Ok
        );
        assert_eq!(v, eval::nmi(&truth, &a, 4, k, norm, &mut wn).unwrap());
    }
    let mut v = -1.0;
    assert_eq!(
        unsafe {
            mvnmf_nmi(
                truth.as_ptr(),
                a.as_ptr(),
                n,
                4,
                k,
                4,
                &mut v,
                wn.as_mut_ptr().cast(),
                wn.len(),
            )
        },
        S::BadParameter
    );
    assert_eq!(
        unsafe {
            mvnmf_nmi(
                truth.as_ptr(),
                a.as_ptr(),
                n,
                3,
                k,
                0,
                &mut v,
                wn.as_mut_ptr().cast(),
                wn.len(),
            )
        },
        S::BadLabel
    );
    assert_eq!(v, -1.0);

    // Assignment: rectangular, rows left over get SIZE_MAX.
    let cost = [1.0, 5.0, 2.0, 4.0, 3.0, 9.0]; // 3 x 2
    let mut wa = ws(|b| unsafe { mvnmf_assignment_workspace(3, 2, b) });
    let mut m = [0usize; 3];
    let mut total = 0.0;
    assert_eq!(
        unsafe {
            mvnmf_assignment(
                cost.as_ptr(),
                3,
                2,
                0,
                m.as_mut_ptr(),
                &mut total,
                wa.as_mut_ptr().cast(),
                wa.len(),
            )
        },
        S::Ok
    );
    // rows (1,4), (5,3), (2,9): best is row0->col0 (1) + row1->col1 (3) = 4.
    assert_eq!(total, 4.0);
    assert_eq!(m, [0, 1, usize::MAX]);
    let bad = [1.0, f64::NAN];
    let mut m2 = [5usize; 1];
    assert_eq!(
        unsafe {
            mvnmf_assignment(
                bad.as_ptr(),
                1,
                2,
                0,
                m2.as_mut_ptr(),
                &mut total,
                wa.as_mut_ptr().cast(),
                wa.len(),
            )
        },
        S::NonFiniteInput
    );
    assert_eq!((m2, total), ([5], 4.0));
}

#[test]
fn retrieval_and_multilabel() {
    let scores = [0.9, 0.8, 0.7, 0.6, 0.5];
    let rel = [1u8, 0, 1, 0, 1];
    let cut = [1usize, 2, 5];
    let mut w = ws(|b| unsafe { mvnmf_query_metrics_workspace(5, b) });
    let (mut ap, mut pa, mut pr) = (-1.0, [-1.0; 3], [-1.0; 11]);
    let st = unsafe {
        mvnmf_query_metrics(
            scores.as_ptr(),
            rel.as_ptr(),
            5,
            cut.as_ptr(),
            3,
            &mut ap,
            pa.as_mut_ptr(),
            pr.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            w.len(),
        )
    };
    assert_eq!(st, S::Ok);
    assert!((ap - (1.0 + 2.0 / 3.0 + 0.6) / 3.0).abs() < 1e-15);
    assert_eq!(pa, [1.0, 0.5, 0.6]);
    // Bad relevance flag, zero cutoff, NULL AP: untouched.
    let (ap0, pa0, pr0) = (ap, pa, pr);
    let bad_rel = [1u8, 0, 3, 0, 1];
    let zero_cut = [0usize, 2, 5];
    assert_eq!(
        unsafe {
            mvnmf_query_metrics(
                scores.as_ptr(),
                bad_rel.as_ptr(),
                5,
                cut.as_ptr(),
                3,
                &mut ap,
                pa.as_mut_ptr(),
                pr.as_mut_ptr(),
                w.as_mut_ptr().cast(),
                w.len(),
            )
        },
        S::BadLabel
    );
    assert_eq!(
        unsafe {
            mvnmf_query_metrics(
                scores.as_ptr(),
                rel.as_ptr(),
                5,
                zero_cut.as_ptr(),
                3,
                &mut ap,
                pa.as_mut_ptr(),
                pr.as_mut_ptr(),
                w.as_mut_ptr().cast(),
                w.len(),
            )
        },
        S::BadParameter
    );
    assert_eq!(
        unsafe {
            mvnmf_query_metrics(
                scores.as_ptr(),
                rel.as_ptr(),
                5,
                cut.as_ptr(),
                3,
                null_mut(),
                pa.as_mut_ptr(),
                pr.as_mut_ptr(),
                w.as_mut_ptr().cast(),
                w.len(),
            )
        },
        S::NullPointer
    );
    assert_eq!(
        unsafe {
            mvnmf_query_metrics(
                scores.as_ptr(),
                rel.as_ptr(),
                5,
                cut.as_ptr(),
                3,
                &mut ap,
                null_mut(),
                pr.as_mut_ptr(),
                w.as_mut_ptr().cast(),
                w.len(),
            )
        },
        S::NullPointer
    );
    assert_eq!((ap, pa, pr), (ap0, pa0, pr0));

    // Two queries as a matrix: MAP is the mean AP; the list form agrees.
    let s2 = [0.9, 0.8, 0.7, 0.6, 0.5, 0.1, 0.2, 0.3, 0.4, 0.5];
    let r2 = [1u8, 0, 1, 0, 1, 1, 0, 0, 0, 0];
    let (mut map, mut aps, mut mpa) = (0.0, [0.0; 2], [0.0; 3]);
    let st = unsafe {
        mvnmf_retrieval_metrics(
            s2.as_ptr(),
            r2.as_ptr(),
            5,
            2,
            cut.as_ptr(),
            3,
            aps.as_mut_ptr(),
            &mut map,
            mpa.as_mut_ptr(),
            null_mut(),
            w.as_mut_ptr().cast(),
            w.len(),
        )
    };
    assert_eq!(st, S::Ok);
    assert_eq!(aps[0], ap);
    assert!((aps[1] - 0.2).abs() < 1e-15); // the one relevant item is ranked last of 5
    assert!((map - (ap + 0.2) / 2.0).abs() < 1e-15);
    let mut lap = 0.0;
    let mut lpa = [0.0; 3];
    assert_eq!(
        unsafe {
            mvnmf_ranked_list_metrics(
                rel.as_ptr(),
                5,
                3,
                cut.as_ptr(),
                3,
                &mut lap,
                lpa.as_mut_ptr(),
                null_mut(),
            )
        },
        S::Ok
    );
    assert_eq!((lap, lpa), (ap, pa));
    let mut top = [0usize; 2];
    assert_eq!(
        unsafe { mvnmf_top_n(s2.as_ptr().add(5), 5, 2, top.as_mut_ptr()) },
        S::Ok
    );
    assert_eq!(top, [4, 3]);
    assert_eq!(
        unsafe { mvnmf_top_n(s2.as_ptr(), 5, 6, top.as_mut_ptr()) },
        S::DimensionMismatch
    );

    // Multi-label: 2 labels x 3 items.
    let t = [1u8, 0, 0, 0, 1, 0];
    let p = [1u8, 0, 1, 0, 0, 0];
    let mut out = mvnmf_multilabel_scores {
        macro_f1: -1.0,
        micro_f1: -1.0,
        hamming_loss: -1.0,
    };
    assert_eq!(
        unsafe { mvnmf_multilabel_metrics(t.as_ptr(), p.as_ptr(), 2, 3, &mut out) },
        S::Ok
    );
    assert_eq!((out.macro_f1, out.micro_f1), (0.25, 0.5));
    let bad = [1u8, 0, 2, 0, 1, 0];
    let before = out;
    assert_eq!(
        unsafe { mvnmf_multilabel_metrics(t.as_ptr(), bad.as_ptr(), 2, 3, &mut out) },
        S::BadLabel
    );
    assert_eq!(out.macro_f1, before.macro_f1);
    let sc = [0.8, 0.3, 0.8, 0.2, 0.3, 0.9];
    let mut wa = ws(|b| unsafe { mvnmf_average_auroc_workspace(3, b) });
    let (mut mean, mut per, mut scored) = (0.0, [0.0; 2], 0usize);
    assert_eq!(
        unsafe {
            mvnmf_average_auroc(
                t.as_ptr(),
                sc.as_ptr(),
                2,
                3,
                per.as_mut_ptr(),
                &mut mean,
                &mut scored,
                wa.as_mut_ptr().cast(),
                wa.len(),
            )
        },
        S::Ok
    );
    // label 0: positives at 0.8 and 0.3, negative at 0.8 -> (0.5 + 0) / 2; label 1 constant.
    assert_eq!(per[0], 0.25);
    assert!(per[1].is_nan());
    assert_eq!((mean, scored), (0.25, 1));
}

#[test]
fn workspace_queries_are_exact_at_any_alignment() {
    let n = 30;
    let truth: Vec<u32> = (0..n).map(|j| (j % 3) as u32).collect();
    let pred: Vec<u32> = (0..n).map(|j| (j % 5) as u32).collect();
    let scores: Vec<f64> = (0..n).map(|j| ((j * 37) % 11) as f64).collect();
    let rel: Vec<u8> = (0..n).map(|j| (j % 4 == 0) as u8).collect();
    let x: Vec<f64> = (0..2 * n).map(|t| ((t * 13) % 7) as f64).collect();
    let mut raw = vec![0u8; 1 << 16];
    for shift in [0usize, 1, 7, 8, 33, 63] {
        let mut b = 0;
        unsafe {
            assert_eq!(mvnmf_clustering_accuracy_workspace(3, 5, &mut b), S::Ok);
            let w = raw[shift..].as_mut_ptr().cast();
            let mut v = 0.0;
            assert_eq!(
                mvnmf_clustering_accuracy(truth.as_ptr(), pred.as_ptr(), n, 3, 5, &mut v, w, b),
                S::Ok
            );
            assert_eq!(
                mvnmf_clustering_accuracy(truth.as_ptr(), pred.as_ptr(), n, 3, 5, &mut v, w, b - 1),
                S::WorkspaceTooSmall
            );
            assert_eq!(mvnmf_nmi_workspace(3, 5, &mut b), S::Ok);
            assert_eq!(
                mvnmf_nmi(truth.as_ptr(), pred.as_ptr(), n, 3, 5, 0, &mut v, w, b),
                S::Ok
            );
            assert_eq!(mvnmf_query_metrics_workspace(n, &mut b), S::Ok);
            assert_eq!(
                mvnmf_query_metrics(
                    scores.as_ptr(),
                    rel.as_ptr(),
                    n,
                    null(),
                    0,
                    &mut v,
                    null_mut(),
                    null_mut(),
                    w,
                    b
                ),
                S::Ok
            );
            assert_eq!(mvnmf_average_auroc_workspace(n, &mut b), S::Ok);
            assert_eq!(
                mvnmf_average_auroc(
                    rel.as_ptr(),
                    scores.as_ptr(),
                    1,
                    n,
                    null_mut(),
                    &mut v,
                    null_mut(),
                    w,
                    b
                ),
                S::Ok
            );
            assert_eq!(mvnmf_kmeans_workspace(2, n, 4, null(), &mut b), S::Ok);
            let mut a = vec![0u32; n];
            assert_eq!(
                mvnmf_kmeans(
                    x.as_ptr(),
                    2,
                    n,
                    4,
                    null(),
                    a.as_mut_ptr(),
                    null_mut(),
                    w,
                    b,
                    null_mut()
                ),
                S::Ok
            );
            assert_eq!(mvnmf_assignment_workspace(4, 6, &mut b), S::Ok);
            let mut m = [0usize; 4];
            assert_eq!(
                mvnmf_assignment(scores.as_ptr(), 4, 6, 1, m.as_mut_ptr(), null_mut(), w, b),
                S::Ok
            );
            assert_eq!(mvnmf_stratified_split_workspace(n, &mut b), S::Ok);
            let mut mask = vec![0u8; n];
            assert_eq!(
                mvnmf_stratified_split(truth.as_ptr(), n, 3, 0.5, 1, mask.as_mut_ptr(), w, b),
                S::Ok
            );
        }
    }
}
