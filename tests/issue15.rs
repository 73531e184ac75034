//! Regression tests for the defects of issue 15 (an adversarial run over the C ABI): each test
//! fails on the code before its fix. They call the C ABI from Rust, as a C caller would; the
//! C harness (`ffi-tests/c/harness_regress.c`) has the same cases in C.

use std::ptr::{null, null_mut};

use mvnmf::eval;
use mvnmf::ffi::*;

type S = mvnmf_status;

fn dense(x: &[f64], rows: usize, cols: usize) -> mvnmf_view {
    assert_eq!(x.len(), rows * cols);
    mvnmf_view {
        kind: MVNMF_VIEW_DENSE,
        rows,
        cols,
        values: x.as_ptr(),
        col_stride: rows,
        col_ptr: null(),
        row_idx: null(),
    }
}

fn rbf_median() -> mvnmf_kernel {
    mvnmf_kernel {
        kind: MVNMF_KERNEL_RBF,
        gamma: 0.0,
    }
}

fn bytes(f: impl FnOnce(*mut usize) -> S) -> Vec<u8> {
    let mut b = 0usize;
    assert_eq!(f(&mut b), S::Ok);
    vec![0u8; b]
}

/// Deterministic data in (0, 1).
fn uniform(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        })
        .collect()
}

fn mkl(views: &[mvnmf_view], kernels: &[mvnmf_kernel], labels: &[u32], c: usize) -> (S, Vec<f64>) {
    let p = mvnmf_mkl_params_default();
    let h = views.len();
    let mut w = bytes(|b| unsafe {
        mvnmf_mkl_weights_workspace(views.as_ptr(), h, kernels.as_ptr(), c, &p, b)
    });
    let mut eta = vec![f64::NAN; h];
    let mut rep = std::mem::MaybeUninit::<mvnmf_mkl_report>::zeroed();
    let s = unsafe {
        mvnmf_mkl_weights(
            views.as_ptr(),
            h,
            kernels.as_ptr(),
            labels.as_ptr(),
            c,
            &p,
            eta.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            w.len(),
            rep.as_mut_ptr(),
        )
    };
    (s, eta)
}

fn alignment(
    views: &[mvnmf_view],
    kernels: &[mvnmf_kernel],
    labels: &[u32],
    c: usize,
) -> (S, Vec<f64>, Vec<f64>) {
    let h = views.len();
    let mut w = bytes(|b| unsafe {
        mvnmf_alignment_system_workspace(views.as_ptr(), h, kernels.as_ptr(), c, 0, b)
    });
    let (mut g, mut b, mut k) = (vec![f64::NAN; h * h], vec![f64::NAN; h], f64::NAN);
    let s = unsafe {
        mvnmf_alignment_system(
            views.as_ptr(),
            h,
            kernels.as_ptr(),
            labels.as_ptr(),
            c,
            0,
            g.as_mut_ptr(),
            b.as_mut_ptr(),
            &mut k,
            w.as_mut_ptr().cast(),
            w.len(),
        )
    };
    (s, g, b)
}

/// D1: the case — a 3×4 view of 0.5 with one entry 1e299, RBF with the median
/// bandwidth — was INTERNAL from `mvnmf_mkl_weights` and NaN from the alignment system.
#[test]
fn d1_huge_entry_rbf_median_is_finite() {
    let mut x = vec![0.5; 12];
    x[4] = 1e299;
    let views = [dense(&x, 3, 4)];
    let kernels = [rbf_median()];
    let labels = [0u32, 0, 1, 1];
    let (s, eta) = mkl(&views, &kernels, &labels, 2);
    assert_eq!(s, S::Ok);
    assert!(eta.iter().all(|e| e.is_finite()) && (eta.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    let (s, g, b) = alignment(&views, &kernels, &labels, 2);
    assert_eq!(s, S::Ok);
    assert!(g.iter().chain(&b).all(|x| x.is_finite()), "{g:?} {b:?}");
    // Two views, one of them huge: still a finite point of the simplex.
    let y = uniform(12, 3);
    let views = [dense(&x, 3, 4), dense(&y, 3, 4)];
    let kernels = [rbf_median(), rbf_median()];
    let (s, eta) = mkl(&views, &kernels, &labels, 2);
    assert_eq!(s, S::Ok);
    assert!(eta.iter().all(|e| e.is_finite() && *e >= 0.0));
}

/// D1, the property behind the fix: every normalised kernel (and RBF with the median
/// bandwidth) is invariant to scaling a view, so a view times 2^600 (or 2^-600) gives the
/// same alignment system as the view itself, for every kernel kind.
#[test]
fn d1_kernels_are_scale_invariant_at_extreme_magnitudes() {
    let (rows, n) = (5, 9);
    let x = uniform(rows * n, 11);
    let labels: Vec<u32> = (0..n as u32).map(|j| j % 3).collect();
    let kinds = [
        MVNMF_KERNEL_LINEAR,
        MVNMF_KERNEL_RBF,
        MVNMF_KERNEL_CHI_SQUARED,
        MVNMF_KERNEL_INTERSECTION,
    ];
    for &kind in &kinds {
        let kernels = [mvnmf_kernel { kind, gamma: 0.0 }];
        let (s0, g0, b0) = alignment(&[dense(&x, rows, n)], &kernels, &labels, 3);
        assert_eq!(s0, S::Ok);
        for f in [2f64.powi(600), 2f64.powi(-600), 1e300, 1e-300] {
            let xs: Vec<f64> = x.iter().map(|v| v * f).collect();
            let (s, g, b) = alignment(&[dense(&xs, rows, n)], &kernels, &labels, 3);
            assert_eq!(s, S::Ok, "kind {kind} factor {f:e}");
            for (a, e) in g.iter().chain(&b).zip(g0.iter().chain(&b0)) {
                assert!(
                    (a - e).abs() <= 1e-9 * e.abs().max(1.0),
                    "kind {kind} factor {f:e}: {a} vs {e}"
                );
            }
        }
    }
}

/// D1 through the pipeline: learned weights (MKL, median RBF) on data with huge entries.
#[test]
fn d1_pipeline_learned_weights_on_huge_data() {
    let (rows, n, k) = (4, 12, 2);
    // The D1 shape: most items coincide (median d² = 0, so the mean decides), one entry huge.
    let mut x = vec![0.5; rows * n];
    x[7] = 1e299;
    let y = uniform(rows * n, 6);
    let views = [dense(&x, rows, n), dense(&y, rows, n)];
    let kernels = [rbf_median(), rbf_median()];
    let labels: Vec<u32> = (0..n as u32)
        .map(|j| if j % 4 == 3 { MVNMF_UNLABELED } else { j % 2 })
        .collect();
    for method in [MVNMF_METHOD_MVSL_L, MVNMF_METHOD_MVSL_T, MVNMF_METHOD_GNMF] {
        let mut p = std::mem::MaybeUninit::<mvnmf_pipeline_params>::zeroed();
        assert_eq!(
            unsafe { mvnmf_pipeline_params_preset(method, p.as_mut_ptr()) },
            S::Ok
        );
        let mut p = unsafe { p.assume_init() };
        p.learn_eta = 1;
        p.graph.ka = 2;
        p.graph.kp = 1;
        p.solver.max_iter = 5;
        let mut w = bytes(|b| unsafe {
            mvnmf_pipeline_fit_workspace(views.as_ptr(), 2, kernels.as_ptr(), 2, k, &p, b)
        });
        let mut u0 = vec![0.0; rows * k];
        let mut u1 = vec![0.0; rows * k];
        let mut v = vec![0.0; k * n];
        let mut eta = vec![0.0; 2];
        let us = [u0.as_mut_ptr(), u1.as_mut_ptr()];
        let s = unsafe {
            mvnmf_pipeline_fit(
                views.as_ptr(),
                2,
                kernels.as_ptr(),
                labels.as_ptr(),
                2,
                k,
                &p,
                us.as_ptr(),
                v.as_mut_ptr(),
                eta.as_mut_ptr(),
                w.as_mut_ptr().cast(),
                w.len(),
                None,
                null_mut(),
                null_mut(),
            )
        };
        // INTERNAL before the fix. Data this large (½‖X‖² near 1e598) is beyond what the
        // solvers take (issue 15's D4): refused before `eta` or the factors are written.
        assert_eq!(s, S::InputTooLarge, "method {method}");
        assert!(eta.iter().all(|&e| e == 0.0));
    }
}

/// D1: a given γ on a huge view (γ·s² overflows in the scaled units) gives exact 1 for
/// coinciding items and 0 for distinct ones, never NaN; `mvnmf_kernel_bandwidths` reports a
/// given γ unchanged.
#[test]
fn d1_given_gamma_on_huge_view() {
    let mut x = vec![1e300; 8];
    x[0] = 3e300;
    x[6] = 2e300; // items: (3e300,1e300) (1e300,1e300) (1e300,1e300) (2e300,1e300)
    let views = [dense(&x, 2, 4)];
    let kernels = [mvnmf_kernel {
        kind: MVNMF_KERNEL_RBF,
        gamma: 0.5,
    }];
    let labels = [0u32, 1, 1, 0];
    let (s, g, b) = alignment(&views, &kernels, &labels, 2);
    assert_eq!(s, S::Ok);
    assert!(g.iter().chain(&b).all(|x| x.is_finite()));
    let mut w = bytes(|b| unsafe {
        mvnmf_kernel_bandwidths_workspace(views.as_ptr(), 1, kernels.as_ptr(), 2, 0, b)
    });
    let mut gam = [f64::NAN];
    let s = unsafe {
        mvnmf_kernel_bandwidths(
            views.as_ptr(),
            1,
            kernels.as_ptr(),
            labels.as_ptr(),
            2,
            0,
            gam.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            w.len(),
        )
    };
    assert_eq!((s, gam[0]), (S::Ok, 0.5));
}

/// D2: `n_classes` was truncated to 32 bits (2^32 + 1 labelled class 0 only) and looped
/// over once per class.
#[test]
fn d2_stratified_split_any_class_count() {
    let n = 40;
    let labels: Vec<u32> = (0..n as u32).map(|j| (j * 7) % 5).collect();
    let mut w = bytes(|b| unsafe { mvnmf_stratified_split_workspace(n, b) });
    let split = |c: usize, frac: f64, out: &mut [u8], w: &mut [u8]| unsafe {
        mvnmf_stratified_split(
            labels.as_ptr(),
            n,
            c,
            frac,
            9,
            out.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            w.len(),
        )
    };
    // Fraction 1 labels every item whatever the (valid) class count.
    for c in [5usize, (1usize << 32) + 1, 1 << 40, usize::MAX] {
        let mut out = vec![7u8; n];
        assert_eq!(split(c, 1.0, &mut out, &mut w), S::Ok, "n_classes {c}");
        assert!(out.iter().all(|&b| b == 1), "n_classes {c}: {out:?}");
    }
    // Classes without items change nothing: the same split as the exact class count.
    let mut a = vec![0u8; n];
    let mut b = vec![0u8; n];
    assert_eq!(split(5, 0.4, &mut a, &mut w), S::Ok);
    let t = std::time::Instant::now();
    assert_eq!(split(usize::MAX, 0.4, &mut b, &mut w), S::Ok);
    assert!(
        t.elapsed().as_secs() < 5,
        "work bounded by N, not n_classes"
    );
    assert_eq!(a, b);
    // Per class: round(0.4 · n_c) items.
    for c in 0..5u32 {
        let nc = labels.iter().filter(|&&l| l == c).count();
        let got = (0..n).filter(|&j| labels[j] == c && a[j] == 1).count();
        assert_eq!(got, (0.4 * nc as f64).round() as usize);
    }
    // The Rust API agrees.
    let mut r = vec![false; n];
    eval::stratified_split(&labels, usize::MAX, 0.4, 9, &mut r, &mut w).unwrap();
    assert!(r.iter().zip(&a).all(|(&x, &y)| x == (y == 1)));
}

/// `mvnmf_deep_factor_len(rows = 0)` was OK (every other routine refuses a zero dimension).
#[test]
fn deep_factor_len_refuses_zero_rows() {
    let layers = [4usize, 2];
    let mut len = 12345usize;
    let s = unsafe { mvnmf_deep_factor_len(0, layers.as_ptr(), 2, &mut len) };
    assert_eq!((s, len), (S::ZeroDimension, 12345));
    let s = unsafe { mvnmf_deep_factor_len(6, layers.as_ptr(), 2, &mut len) };
    assert_eq!((s, len), (S::Ok, 6 * 4 + 4 * 2));
}

/// `mvnmf_deep_encode` read all of `u` (and refused a NaN in it) before checking the
/// workspace: the cheap check must come first.
#[test]
fn deep_encode_checks_workspace_before_reading_u() {
    let (rows, n) = (6, 5);
    let layers = [3usize, 2];
    let x = uniform(rows * n, 2);
    let views = [dense(&x, rows, n)];
    let mut dp = std::mem::MaybeUninit::<mvnmf_deep_params>::zeroed();
    assert_eq!(
        unsafe { mvnmf_deep_params_preset(MVNMF_DEEP_PRESET_DNMF, dp.as_mut_ptr()) },
        S::Ok
    );
    let dp = unsafe { dp.assume_init() };
    let graph = mvnmf_graph {
        kind: MVNMF_GRAPH_NONE,
        n,
        labels: null(),
        n_classes: 0,
        affinity_row_ptr: null(),
        affinity_col_idx: null(),
        affinity_weights: null(),
        penalty_row_ptr: null(),
        penalty_col_idx: null(),
        penalty_weights: null(),
    };
    let w = bytes(|b| unsafe {
        mvnmf_deep_encode_workspace(views.as_ptr(), 1, &graph, layers.as_ptr(), 2, &dp, b)
    });
    let u = vec![f64::NAN; rows * 3 + 3 * 2];
    let ups = [u.as_ptr()];
    let mut v = vec![-7.0; 2 * n];
    let mut short = vec![0u8; w.len() / 2];
    let s = unsafe {
        mvnmf_deep_encode(
            views.as_ptr(),
            1,
            &graph,
            layers.as_ptr(),
            2,
            &dp,
            ups.as_ptr(),
            v.as_mut_ptr(),
            short.as_mut_ptr().cast(),
            short.len(),
            None,
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(s, S::WorkspaceTooSmall);
    assert!(v.iter().all(|&x| x == -7.0));
    // With the workspace, the NaN is found.
    let mut w = w;
    let s = unsafe {
        mvnmf_deep_encode(
            views.as_ptr(),
            1,
            &graph,
            layers.as_ptr(),
            2,
            &dp,
            ups.as_ptr(),
            v.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            w.len(),
            None,
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(s, S::NonFiniteInput);
    assert!(v.iter().all(|&x| x == -7.0));
}

/// The pipeline's workspace query accepted `ka = N`, which the fit refuses: they agree now.
#[test]
fn pipeline_query_and_fit_agree_on_neighbour_count() {
    let (rows, n, k) = (3, 8, 2);
    let x = uniform(rows * n, 4);
    let views = [dense(&x, rows, n)];
    let kernels = [mvnmf_kernel {
        kind: MVNMF_KERNEL_LINEAR,
        gamma: 0.0,
    }];
    let labels: Vec<u32> = (0..n as u32).map(|j| j % 2).collect();
    for method in [MVNMF_METHOD_GNMF, MVNMF_METHOD_MVSL_L, MVNMF_METHOD_MVSL_T] {
        for (ka, kp, pen) in [
            (n, 0, MVNMF_PENALTY_CLASS_PAIRS),
            (n + 1, 0, MVNMF_PENALTY_CLASS_PAIRS),
            (1, n, MVNMF_PENALTY_ITEM_NEIGHBORS),
            (1, 1, MVNMF_PENALTY_ITEM_NEIGHBORS),
        ] {
            let mut p = std::mem::MaybeUninit::<mvnmf_pipeline_params>::zeroed();
            assert_eq!(
                unsafe { mvnmf_pipeline_params_preset(method, p.as_mut_ptr()) },
                S::Ok
            );
            let mut p = unsafe { p.assume_init() };
            p.learn_eta = 0;
            p.graph.ka = ka;
            p.graph.kp = kp;
            p.graph.penalty = pen;
            p.solver.max_iter = 3;
            let mut b = 0usize;
            let q = unsafe {
                mvnmf_pipeline_fit_workspace(views.as_ptr(), 1, kernels.as_ptr(), 2, k, &p, &mut b)
            };
            let mut w = vec![0u8; if q == S::Ok { b } else { 1 << 20 }];
            let mut u = vec![0.0; rows * k];
            let mut v = vec![0.0; k * n];
            let mut eta = [0.0];
            let us = [u.as_mut_ptr()];
            let f = unsafe {
                mvnmf_pipeline_fit(
                    views.as_ptr(),
                    1,
                    kernels.as_ptr(),
                    labels.as_ptr(),
                    2,
                    k,
                    &p,
                    us.as_ptr(),
                    v.as_mut_ptr(),
                    eta.as_mut_ptr(),
                    w.as_mut_ptr().cast(),
                    w.len(),
                    None,
                    null_mut(),
                    null_mut(),
                )
            };
            let refused = |s: S| s == S::BadParameter;
            assert_eq!(
                refused(q),
                refused(f),
                "method {method} ka {ka} kp {kp}: query {q:?}, fit {f:?}"
            );
        }
    }
}

/// `mvnmf_assignment` returned OK with an infinite total for costs near ±1e308: refused up
/// front now; large but admissible costs give a finite, optimal total.
#[test]
fn assignment_total_stays_finite() {
    let (r, c) = (3usize, 3usize);
    let mut w = bytes(|b| unsafe { mvnmf_assignment_workspace(r, c, b) });
    let run = |cost: &[f64], max: i32, w: &mut [u8]| {
        let mut map = vec![usize::MAX - 1; r];
        let mut total = 42.0;
        let s = unsafe {
            mvnmf_assignment(
                cost.as_ptr(),
                r,
                c,
                max,
                map.as_mut_ptr(),
                &mut total,
                w.as_mut_ptr().cast(),
                w.len(),
            )
        };
        (s, map, total)
    };
    for sign in [1.0, -1.0] {
        let cost: Vec<f64> = (0..9).map(|i| sign * (1e308 - i as f64 * 1e306)).collect();
        for max in [0, 1] {
            let (s, map, total) = run(&cost, max, &mut w);
            assert!(s != S::Ok || total.is_finite(), "OK with total {total}");
            assert_eq!((s, total), (S::NonFiniteInput, 42.0));
            assert!(map.iter().all(|&m| m == usize::MAX - 1));
        }
    }
    // Huge but admissible: the same matching as the costs scaled down, a finite total.
    let base: Vec<f64> = uniform(9, 8).iter().map(|x| x - 0.5).collect();
    let big: Vec<f64> = base.iter().map(|x| x * 4e307 / 4.0).collect();
    for max in [0, 1] {
        let (s0, m0, t0) = run(&base, max, &mut w);
        let (s1, m1, t1) = run(&big, max, &mut w);
        assert_eq!((s0, s1), (S::Ok, S::Ok));
        assert_eq!(m0, m1);
        assert!(t1.is_finite());
        assert!((t1 / 1e307 - t0).abs() < 1e-12);
    }
}

/// A 0/1 flag of 2 was BAD_LABEL in the retrieval and multi-label metrics but BAD_PARAMETER
/// in `mvnmf_accuracy` (and the kNN masks): one rule, BAD_LABEL, everywhere.
#[test]
fn flag_of_two_is_bad_label_everywhere() {
    let pred = [0u32, 1, 1, 0];
    let truth = [0u32, 1, 0, 0];
    let mask = [1u8, 2, 1, 0];
    let mut acc = 5.0;
    let s = unsafe { mvnmf_accuracy(pred.as_ptr(), truth.as_ptr(), 4, mask.as_ptr(), &mut acc) };
    assert_eq!((s, acc), (S::BadLabel, 5.0));
    // A kNN mask byte of 2.
    let x = uniform(3 * 4, 1);
    let views = [dense(&x, 3, 4)];
    let kernels = [mvnmf_kernel {
        kind: MVNMF_KERNEL_LINEAR,
        gamma: 0.0,
    }];
    let mut kp = mvnmf_fused_knn_params_default();
    kp.k = 1;
    kp.scope = MVNMF_SCOPE_MASKED;
    let mut w = bytes(|b| unsafe {
        mvnmf_fused_knn_workspace(views.as_ptr(), 1, kernels.as_ptr(), 1, &kp, b)
    });
    let ones = [1u8; 4];
    let (mut nb, mut sims) = ([9usize; 4], [9.0f64; 4]);
    let s = unsafe {
        mvnmf_fused_knn(
            views.as_ptr(),
            1,
            kernels.as_ptr(),
            [1.0].as_ptr(),
            null(),
            1,
            &kp,
            mask.as_ptr(),
            ones.as_ptr(),
            nb.as_mut_ptr(),
            sims.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            w.len(),
        )
    };
    assert_eq!(s, S::BadLabel);
    assert!(nb.iter().all(|&x| x == 9));
}

/// `labels = NULL` where the call needs labeled items was TOO_FEW_LABELED, which no header
/// said: it is NULL_POINTER now (and NULL where labels are not needed still works).
#[test]
fn null_labels_where_needed_is_null_pointer() {
    let x = uniform(3 * 6, 1);
    let views = [dense(&x, 3, 6)];
    let med = [rbf_median()];
    let lin = [mvnmf_kernel {
        kind: MVNMF_KERNEL_LINEAR,
        gamma: 0.0,
    }];
    let band = |ks: &[mvnmf_kernel]| {
        let mut w = bytes(|b| unsafe {
            mvnmf_kernel_bandwidths_workspace(views.as_ptr(), 1, ks.as_ptr(), 2, 0, b)
        });
        let mut g = [7.0];
        let s = unsafe {
            mvnmf_kernel_bandwidths(
                views.as_ptr(),
                1,
                ks.as_ptr(),
                null(),
                2,
                0,
                g.as_mut_ptr(),
                w.as_mut_ptr().cast(),
                w.len(),
            )
        };
        (s, g[0])
    };
    assert_eq!(band(&med), (S::NullPointer, 7.0));
    assert_eq!(band(&lin), (S::Ok, 0.0));
    let knn = |ks: &[mvnmf_kernel], scope: u32| {
        let mut kp = mvnmf_fused_knn_params_default();
        kp.k = 1;
        kp.scope = scope;
        let mut w = bytes(|b| unsafe {
            mvnmf_fused_knn_workspace(views.as_ptr(), 1, ks.as_ptr(), 2, &kp, b)
        });
        let (mut nb, mut sims) = ([9usize; 6], [9.0f64; 6]);
        unsafe {
            mvnmf_fused_knn(
                views.as_ptr(),
                1,
                ks.as_ptr(),
                [1.0].as_ptr(),
                null(),
                2,
                &kp,
                null(),
                null(),
                nb.as_mut_ptr(),
                sims.as_mut_ptr(),
                w.as_mut_ptr().cast(),
                w.len(),
            )
        }
    };
    assert_eq!(knn(&lin, MVNMF_SCOPE_ALL), S::Ok);
    assert_eq!(knn(&med, MVNMF_SCOPE_ALL), S::NullPointer);
    for scope in [
        MVNMF_SCOPE_LABELED,
        MVNMF_SCOPE_SAME_CLASS,
        MVNMF_SCOPE_OTHER_CLASS,
    ] {
        assert_eq!(knn(&lin, scope), S::NullPointer, "scope {scope}");
    }
    let tge = |ks: &[mvnmf_kernel], kp: usize| {
        let mut gp = mvnmf_graph_params_default();
        gp.ka = 2;
        gp.kp = kp;
        let mut w =
            bytes(|b| unsafe { mvnmf_tge_workspace(views.as_ptr(), 1, ks.as_ptr(), 2, &gp, b) });
        let (mut ac, mut pc) = (0usize, 0usize);
        assert_eq!(
            unsafe { mvnmf_tge_capacity(6, 2, &gp, &mut ac, &mut pc) },
            S::Ok
        );
        let (mut arp, mut aci, mut aw) = (vec![0usize; 7], vec![0usize; ac], vec![0.0; ac]);
        let (mut prp, mut pci, mut pw) = (
            vec![0usize; 7],
            vec![0usize; pc.max(1)],
            vec![0.0; pc.max(1)],
        );
        let a = mvnmf_csr_buffers {
            row_ptr: arp.as_mut_ptr(),
            col_idx: aci.as_mut_ptr(),
            weights: aw.as_mut_ptr(),
            capacity: ac,
        };
        let p = mvnmf_csr_buffers {
            row_ptr: prp.as_mut_ptr(),
            col_idx: pci.as_mut_ptr(),
            weights: pw.as_mut_ptr(),
            capacity: pc.max(1),
        };
        let (mut an, mut pn) = (0usize, 0usize);
        unsafe {
            mvnmf_tge(
                views.as_ptr(),
                1,
                ks.as_ptr(),
                [1.0].as_ptr(),
                null(),
                2,
                &gp,
                &a,
                &p,
                &mut an,
                &mut pn,
                w.as_mut_ptr().cast(),
                w.len(),
            )
        }
    };
    assert_eq!(tge(&lin, 0), S::Ok);
    assert_eq!(tge(&lin, 1), S::NullPointer);
    assert_eq!(tge(&med, 0), S::NullPointer);
}

// ------------------------------------------------- found by the fuzz driver (tests/fuzz_ffi.rs)

fn qp(a: &[f64], b: &[f64]) -> (S, Vec<f64>) {
    let h = b.len();
    let mut w = bytes(|q| unsafe { mvnmf_simplex_qp_workspace(h, q) });
    let mut eta = vec![-3.0; h];
    let mut rep = std::mem::MaybeUninit::<mvnmf_qp_report>::zeroed();
    let s = unsafe {
        mvnmf_simplex_qp(
            a.as_ptr(),
            b.as_ptr(),
            h,
            eta.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            w.len(),
            rep.as_mut_ptr(),
        )
    };
    (s, eta)
}

/// `mvnmf_simplex_qp` with `b` far larger than `A` was INTERNAL: scaled by `max|A|`, `b`
/// overflowed or the face solve cancelled to η = 0 on every face. The minimiser is then the
/// vertex of the largest `b_v`.
#[test]
fn simplex_qp_with_dominant_b() {
    for (a, b) in [
        (5.165919703107464e136, -4.5225629127625724e153),
        (9.37857084093865e-111, -3.591088159952124e79),
        (3.640760318179235e-18, -4.533875583352967e205),
    ] {
        assert_eq!(qp(&[a], &[b]), (S::Ok, vec![1.0]), "a {a:e} b {b:e}");
    }
    // Three weights, A tiny against b: the vertex of the largest b.
    let a = [1e-200, 0.0, 0.0, 0.0, 1e-200, 0.0, 0.0, 0.0, 1e-200];
    let (s, eta) = qp(&a, &[1e100, 3e100, 2e100]);
    assert_eq!(s, S::Ok);
    assert!((eta[1] - 1.0).abs() < 1e-12 && eta[0].abs() < 1e-12 && eta[2].abs() < 1e-12);
    // The active-set method (H > 16) on A = 0: the vertex of the largest b.
    let h = 18;
    let b: Vec<f64> = (0..h).map(|v| ((v * 7) % h) as f64).collect();
    let (s, eta) = qp(&vec![0.0; h * h], &b);
    assert_eq!(s, S::Ok);
    let best = (0..h).max_by(|&i, &j| b[i].total_cmp(&b[j])).unwrap();
    assert!((eta[best] - 1.0).abs() < 1e-9, "{eta:?}");
    // Entries whose objective could overflow are refused, output untouched.
    assert_eq!(qp(&[1.0], &[1e308]), (S::NonFiniteInput, vec![-3.0]));
}

fn knn_sims(x: &[f64], rows: usize, n: usize, kind: u32) -> Vec<f64> {
    let views = [dense(x, rows, n)];
    let kernels = [mvnmf_kernel { kind, gamma: 0.0 }];
    let mut kp = mvnmf_fused_knn_params_default();
    kp.k = n - 1;
    kp.scope = MVNMF_SCOPE_ALL;
    let mut w = bytes(|b| unsafe {
        mvnmf_fused_knn_workspace(views.as_ptr(), 1, kernels.as_ptr(), 1, &kp, b)
    });
    let (mut nb, mut sims) = (vec![0usize; n * (n - 1)], vec![0.0; n * (n - 1)]);
    let s = unsafe {
        mvnmf_fused_knn(
            views.as_ptr(),
            1,
            kernels.as_ptr(),
            [1.0].as_ptr(),
            null(),
            1,
            &kp,
            null(),
            null(),
            nb.as_mut_ptr(),
            sims.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            w.len(),
        )
    };
    assert_eq!(s, S::Ok);
    // Sorted by item pair, so that lists of two scalings compare entry by entry.
    let mut out = vec![0.0; n * n];
    for i in 0..n {
        for t in 0..n - 1 {
            out[i * n + nb[i * (n - 1) + t]] = sims[i * (n - 1) + t];
        }
    }
    out
}

/// Items whose values are ~1e-160 in a view whose largest value is ordinary: their squares
/// (linear kernel) and the χ² terms `2xy` underflowed, and the cosine came out as 1.0000034.
/// Both kernels are invariant to scaling an item (linear) or the view (χ²): the similarities
/// equal those of the same items at ordinary magnitude.
#[test]
fn kernels_of_items_near_the_subnormal_range() {
    let (rows, n) = (3, 8);
    let mut x = uniform(rows * n, 21);
    for v in x.iter_mut().skip(rows) {
        *v *= 1e-160;
    }
    x[0] = 1e-86; // item 0 keeps the view out of the scaled range
    let ordinary: Vec<f64> = x.iter().map(|v| v * 1e160).collect();
    let mut ordinary_lin = ordinary.clone();
    ordinary_lin[..rows].copy_from_slice(&x[..rows]); // a cosine is per-item invariant
    let tiny = knn_sims(&x, rows, n, MVNMF_KERNEL_LINEAR);
    let base = knn_sims(&ordinary_lin, rows, n, MVNMF_KERNEL_LINEAR);
    for (a, b) in tiny.iter().zip(&base) {
        assert!(
            *a <= 1.0 + 1e-12 && (a - b).abs() < 1e-12,
            "linear: {a} vs {b}"
        );
    }
    let tiny = knn_sims(&x, rows, n, MVNMF_KERNEL_CHI_SQUARED);
    let base = knn_sims(&ordinary, rows, n, MVNMF_KERNEL_CHI_SQUARED);
    for (a, b) in tiny.iter().zip(&base).skip(n) {
        assert!(
            *a <= 1.0 + 1e-12 && (a - b).abs() < 1e-12,
            "chi2: {a} vs {b}"
        );
    }
}

/// χ² items whose values are subnormal: the product of their two normalisation scales
/// (`1/√Σx ≈ 1e158` each) overflowed to +inf against a kernel value of 0: NaN in the
/// alignment system with status OK.
#[test]
fn chi2_items_with_subnormal_sums_stay_finite() {
    let x = [1.0, 0.5, 1e-318, 2e-318, 3e-318, 1e-318, 2e-318, 2e-318];
    let views = [dense(&x, 2, 4)];
    for kind in [
        MVNMF_KERNEL_CHI_SQUARED,
        MVNMF_KERNEL_INTERSECTION,
        MVNMF_KERNEL_LINEAR,
    ] {
        let kernels = [mvnmf_kernel { kind, gamma: 0.0 }];
        let (s, g, b) = alignment(&views, &kernels, &[0, 1, 1, 0], 2);
        assert_eq!(s, S::Ok);
        assert!(
            g.iter().chain(&b).all(|v| v.is_finite()),
            "kind {kind}: {g:?} {b:?}"
        );
    }
}

/// A CSC linear view with items of 1e-44 and 1e-272: `xᵀy` underflowed into the subnormals
/// and the cosine of two one-feature items (exactly 1) came out as 1.000000013 (fuzz seed
/// 0x6c9 of the long run).
#[test]
fn csc_cosine_of_tiny_items() {
    let col_ptr = [0usize, 1, 2, 3, 4];
    let row_idx = [0usize, 0, 0, 0];
    let vals = [1.0178601471044408e-44, 3.86448965980197e-45, 1e-272, 6e-45];
    let view = mvnmf_view {
        kind: MVNMF_VIEW_CSC,
        rows: 1,
        cols: 4,
        values: vals.as_ptr(),
        col_stride: 0,
        col_ptr: col_ptr.as_ptr(),
        row_idx: row_idx.as_ptr(),
    };
    let kernels = [mvnmf_kernel {
        kind: MVNMF_KERNEL_LINEAR,
        gamma: 0.0,
    }];
    let mut kp = mvnmf_fused_knn_params_default();
    kp.k = 3;
    let mut w =
        bytes(|b| unsafe { mvnmf_fused_knn_workspace(&view, 1, kernels.as_ptr(), 1, &kp, b) });
    let (mut nb, mut sims) = ([0usize; 12], [0.0f64; 12]);
    let s = unsafe {
        mvnmf_fused_knn(
            &view,
            1,
            kernels.as_ptr(),
            [1.0].as_ptr(),
            null(),
            1,
            &kp,
            null(),
            null(),
            nb.as_mut_ptr(),
            sims.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            w.len(),
        )
    };
    assert_eq!(s, S::Ok);
    // Positive one-feature items: every cosine is 1.
    assert!(sims.iter().all(|&c| (c - 1.0).abs() < 1e-15), "{sims:?}");
}

// ------------------------------------------------- D3–D5: the solvers at extreme magnitudes

/// What a fit's progress callback saw. The objective may not rise by more than `1e-10` of
/// its scale: the larger of `½‖X‖²` and the sum of its parts' absolute values at the start.
struct Watch {
    prev: f64,
    tol: f64,
    rise: Option<(u32, f64, f64)>,
    nonfinite: bool,
    calls: u32,
}

impl Watch {
    fn new(half_sq: f64) -> Watch {
        Watch {
            prev: f64::INFINITY,
            tol: (1e-10 * half_sq).max(f64::MIN_POSITIVE),
            rise: None,
            nonfinite: false,
            calls: 0,
        }
    }
    fn user(&mut self) -> *mut std::ffi::c_void {
        (self as *mut Watch).cast()
    }
    fn check(&self, what: &str) {
        assert!(self.calls > 0, "{what}: the callback never ran");
        assert!(!self.nonfinite, "{what}: non-finite objective");
        if let Some((it, a, b)) = self.rise {
            panic!(
                "{what}: objective rose at iteration {it}: {a:e} -> {b:e} (+{:.3e} relative)",
                (b - a) / a.abs()
            );
        }
    }
}

unsafe extern "C" fn on_progress(p: *const mvnmf_progress, user: *mut std::ffi::c_void) -> i32 {
    let (p, m) = unsafe { (&*p, &mut *user.cast::<Watch>()) };
    let t = p.objective.total;
    if m.calls == 0 {
        let parts: f64 = p.objective.terms[..p.objective.n_terms as usize]
            .iter()
            .map(|t| t.value.abs())
            .sum();
        m.tol = m.tol.max(1e-10 * parts);
    }
    m.nonfinite |= !t.is_finite();
    if m.calls > 0 && t > m.prev + m.tol && m.rise.is_none() {
        m.rise = Some((p.iter, m.prev, t));
    }
    m.prev = t;
    m.calls += 1;
    0
}

/// Views of `n` items: `rows[i]` features each, values in (0.05, 1.05) times `scale[i]`.
fn scaled_views(rows: &[usize], n: usize, scale: &[f64], seed: u64) -> Vec<Vec<f64>> {
    rows.iter()
        .zip(scale)
        .enumerate()
        .map(|(i, (&r, &s))| {
            uniform(r * n, seed + i as u64)
                .iter()
                .map(|x| (0.05 + x) * s)
                .collect()
        })
        .collect()
}

fn half_sq_of(xs: &[Vec<f64>]) -> f64 {
    0.5 * xs.iter().flatten().map(|x| x * x).sum::<f64>()
}

/// Factor buffers filled with a sentinel.
const SENTINEL: f64 = -7.25;

fn untouched(bufs: &[Vec<f64>]) -> bool {
    bufs.iter().flatten().all(|&x| x == SENTINEL)
}

fn all_finite(bufs: &[Vec<f64>]) -> bool {
    bufs.iter().flatten().all(|x| x.is_finite())
}

fn no_graph(n: usize) -> mvnmf_graph {
    mvnmf_graph {
        kind: MVNMF_GRAPH_NONE,
        n,
        labels: null(),
        n_classes: 0,
        affinity_row_ptr: null(),
        affinity_col_idx: null(),
        affinity_weights: null(),
        penalty_row_ptr: null(),
        penalty_col_idx: null(),
        penalty_weights: null(),
    }
}

fn sge(labels: &[u32], c: usize) -> mvnmf_graph {
    mvnmf_graph {
        kind: MVNMF_GRAPH_SGE,
        labels: labels.as_ptr(),
        n_classes: c,
        ..no_graph(labels.len())
    }
}

/// Two classes, every third item unlabeled.
fn two_classes(n: usize) -> Vec<u32> {
    (0..n as u32)
        .map(|j| if j % 3 == 2 { MVNMF_UNLABELED } else { j % 2 })
        .collect()
}

/// A fit's outputs: status, factors (one buffer per view), V, the report, the watch.
struct Fit {
    s: S,
    u: Vec<Vec<f64>>,
    v: Vec<f64>,
    report: mvnmf_report,
    watch: Watch,
}

fn joint_fit(xs: &[Vec<f64>], rows: &[usize], n: usize, k: usize, p: &mvnmf_nmf_params) -> Fit {
    let views: Vec<mvnmf_view> = xs.iter().zip(rows).map(|(x, &r)| dense(x, r, n)).collect();
    let h = views.len();
    let mut w = bytes(|b| unsafe { mvnmf_joint_nmf_fit_workspace(views.as_ptr(), h, k, p, b) });
    let mut u: Vec<Vec<f64>> = rows.iter().map(|&r| vec![SENTINEL; r * k]).collect();
    let mut v = vec![SENTINEL; k * n];
    let ptrs: Vec<*mut f64> = u.iter_mut().map(|b| b.as_mut_ptr()).collect();
    let mut watch = Watch::new(half_sq_of(xs));
    let mut report = std::mem::MaybeUninit::<mvnmf_report>::zeroed();
    let s = unsafe {
        if h == 1 {
            mvnmf_nmf_fit(
                &views[0],
                k,
                p,
                ptrs[0],
                v.as_mut_ptr(),
                w.as_mut_ptr().cast(),
                w.len(),
                Some(on_progress),
                watch.user(),
                report.as_mut_ptr(),
            )
        } else {
            mvnmf_joint_nmf_fit(
                views.as_ptr(),
                h,
                k,
                p,
                ptrs.as_ptr(),
                v.as_mut_ptr(),
                w.as_mut_ptr().cast(),
                w.len(),
                Some(on_progress),
                watch.user(),
                report.as_mut_ptr(),
            )
        }
    };
    let report = unsafe { report.assume_init() };
    Fit {
        s,
        u,
        v,
        report,
        watch,
    }
}

#[allow(clippy::too_many_arguments)]
fn mvsl_fit(
    xs: &[Vec<f64>],
    rows: &[usize],
    n: usize,
    k: usize,
    graph: &mvnmf_graph,
    p: &mvnmf_mvsl_params,
) -> Fit {
    let views: Vec<mvnmf_view> = xs.iter().zip(rows).map(|(x, &r)| dense(x, r, n)).collect();
    let h = views.len();
    let mut w = bytes(|b| unsafe { mvnmf_mvsl_fit_workspace(views.as_ptr(), h, graph, k, p, b) });
    let mut u: Vec<Vec<f64>> = rows.iter().map(|&r| vec![SENTINEL; r * k]).collect();
    let mut v = vec![SENTINEL; k * n];
    let ptrs: Vec<*mut f64> = u.iter_mut().map(|b| b.as_mut_ptr()).collect();
    let mut watch = Watch::new(half_sq_of(xs));
    let mut report = std::mem::MaybeUninit::<mvnmf_report>::zeroed();
    let s = unsafe {
        mvnmf_mvsl_fit(
            views.as_ptr(),
            h,
            graph,
            k,
            p,
            ptrs.as_ptr(),
            v.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            w.len(),
            Some(on_progress),
            watch.user(),
            report.as_mut_ptr(),
        )
    };
    let report = unsafe { report.assume_init() };
    Fit {
        s,
        u,
        v,
        report,
        watch,
    }
}

fn deep_fit(
    xs: &[Vec<f64>],
    rows: &[usize],
    n: usize,
    layers: &[usize],
    graph: &mvnmf_graph,
    p: &mvnmf_deep_params,
) -> Fit {
    let views: Vec<mvnmf_view> = xs.iter().zip(rows).map(|(x, &r)| dense(x, r, n)).collect();
    let (h, nl) = (views.len(), layers.len());
    let mut w = bytes(|b| unsafe {
        mvnmf_deep_fit_workspace(views.as_ptr(), h, graph, layers.as_ptr(), nl, p, b)
    });
    let mut u: Vec<Vec<f64>> = rows
        .iter()
        .map(|&r| {
            let mut len = 0usize;
            assert_eq!(
                unsafe { mvnmf_deep_factor_len(r, layers.as_ptr(), nl, &mut len) },
                S::Ok
            );
            vec![SENTINEL; len]
        })
        .collect();
    let k = *layers.last().unwrap();
    let mut v = vec![SENTINEL; k * n];
    let ptrs: Vec<*mut f64> = u.iter_mut().map(|b| b.as_mut_ptr()).collect();
    let mut watch = Watch::new(half_sq_of(xs));
    let mut report = std::mem::MaybeUninit::<mvnmf_report>::zeroed();
    let s = unsafe {
        mvnmf_deep_fit(
            views.as_ptr(),
            h,
            graph,
            layers.as_ptr(),
            nl,
            p,
            ptrs.as_ptr(),
            v.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            w.len(),
            Some(on_progress),
            watch.user(),
            report.as_mut_ptr(),
        )
    };
    let report = unsafe { report.assume_init() };
    Fit {
        s,
        u,
        v,
        report,
        watch,
    }
}

fn pipeline_fit(
    xs: &[Vec<f64>],
    rows: &[usize],
    n: usize,
    k: usize,
    labels: &[u32],
    p: &mvnmf_pipeline_params,
) -> (Fit, Vec<f64>) {
    let views: Vec<mvnmf_view> = xs.iter().zip(rows).map(|(x, &r)| dense(x, r, n)).collect();
    let h = views.len();
    let kernels = vec![rbf_median(); h];
    let mut w = bytes(|b| unsafe {
        mvnmf_pipeline_fit_workspace(views.as_ptr(), h, kernels.as_ptr(), 2, k, p, b)
    });
    let mut u: Vec<Vec<f64>> = rows.iter().map(|&r| vec![SENTINEL; r * k]).collect();
    let mut v = vec![SENTINEL; k * n];
    let mut eta = vec![SENTINEL; h];
    let ptrs: Vec<*mut f64> = u.iter_mut().map(|b| b.as_mut_ptr()).collect();
    let mut watch = Watch::new(half_sq_of(xs));
    let mut report = std::mem::MaybeUninit::<mvnmf_report>::zeroed();
    let s = unsafe {
        mvnmf_pipeline_fit(
            views.as_ptr(),
            h,
            kernels.as_ptr(),
            labels.as_ptr(),
            2,
            k,
            p,
            ptrs.as_ptr(),
            v.as_mut_ptr(),
            eta.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            w.len(),
            Some(on_progress),
            watch.user(),
            report.as_mut_ptr(),
        )
    };
    let report = unsafe { report.assume_init() };
    (
        Fit {
            s,
            u,
            v,
            report,
            watch,
        },
        eta,
    )
}

fn mvsl_preset(preset: u32) -> mvnmf_mvsl_params {
    let mut p = std::mem::MaybeUninit::<mvnmf_mvsl_params>::zeroed();
    assert_eq!(
        unsafe { mvnmf_mvsl_params_preset(preset, p.as_mut_ptr()) },
        S::Ok
    );
    let mut p = unsafe { p.assume_init() };
    p.max_iter = 30;
    p.tol = 0.0;
    p
}

fn deep_preset(preset: u32) -> mvnmf_deep_params {
    let mut p = std::mem::MaybeUninit::<mvnmf_deep_params>::zeroed();
    assert_eq!(
        unsafe { mvnmf_deep_params_preset(preset, p.as_mut_ptr()) },
        S::Ok
    );
    let mut p = unsafe { p.assume_init() };
    p.top.max_iter = 30;
    p.top.tol = 0.0;
    p.pretrain_iter = 20;
    p
}

fn pipeline_preset(method: u32) -> mvnmf_pipeline_params {
    let mut p = std::mem::MaybeUninit::<mvnmf_pipeline_params>::zeroed();
    assert_eq!(
        unsafe { mvnmf_pipeline_params_preset(method, p.as_mut_ptr()) },
        S::Ok
    );
    let mut p = unsafe { p.assume_init() };
    p.solver.max_iter = 30;
    p.solver.tol = 0.0;
    p.graph.ka = 2;
    p.graph.kp = 1;
    p
}

fn check_ok(f: &Fit, what: &str) {
    assert_eq!(f.s, S::Ok, "{what}");
    f.watch.check(what);
    assert!(
        all_finite(&f.u) && f.v.iter().all(|x| x.is_finite()),
        "{what}: non-finite factors"
    );
    assert!(f.report.objective.total.is_finite(), "{what}");
}

fn check_refused(f: &Fit, what: &str) {
    assert_eq!(f.s, S::InputTooLarge, "{what}");
    assert_eq!(f.watch.calls, 0, "{what}: the callback ran");
    assert!(
        untouched(&f.u) && f.v.iter().all(|&x| x == SENTINEL),
        "{what}: outputs written"
    );
}

/// Found by the fuzz driver (seed 0x173, a deep fit on data near 1e25, L1,∞ with α = 10):
/// the objective rose from 4.7e51 to 8.3e51 at iteration 1. The L1,∞ proximal map's
/// threshold search tested `s₁ > s₁ − τ` for its first candidate, false once `τ = α/L` is
/// below half an ulp of the column's largest entry: θ stayed 0 and the whole column was
/// zeroed. Not a matter of magnitude: a tiny α on ordinary data did the same.
#[test]
fn l1inf_prox_with_threshold_below_an_ulp() {
    let (rows, n) = ([5usize, 4], 12);
    let labels = two_classes(n);
    let xs = scaled_views(&rows, n, &[1.0, 1.0], 31);
    for alpha in [1e-20, 1e-30] {
        let mut p = mvsl_preset(MVNMF_MVSL_PRESET_MCL);
        p.alpha = alpha;
        let f = mvsl_fit(&xs, &rows, n, 3, &sge(&labels, 2), &p);
        check_ok(&f, &format!("MCL, α = {alpha:e}"));
        // Nothing may die under such an α.
        assert_eq!(f.report.dead_views, 0);
        let mut d = deep_preset(MVNMF_DEEP_PRESET_DMCL);
        d.top.alpha = alpha;
        let f = deep_fit(&xs, &rows, n, &[4, 2], &sge(&labels, 2), &d);
        check_ok(&f, &format!("DMCL, α = {alpha:e}"));
    }
    // The fuzz case itself: one 2 × 5 view near 1e25, layers [4, 1, 1], no box, V from the
    // pre-trained encodings, one pre-training iteration.
    let mut x = vec![0.0; 10];
    x[2] = 4.2856312589380835e25;
    x[4] = 5.076789761975765e25;
    x[7] = 9.59989650569489e25;
    x[8] = 5.469571189842065e25;
    x[9] = 1.0000000000000001e24;
    let mut d = deep_preset(MVNMF_DEEP_PRESET_DMCL);
    d.top = mvsl_preset(MVNMF_MVSL_PRESET_MCL);
    d.top.max_iter = 6;
    d.top.tol = 1e-6;
    d.top.seed = 8685130724608528470;
    d.top.alpha = 10.0;
    d.top.beta = 0.0;
    d.top.gamma = 0.0;
    d.pretrain_iter = 1;
    d.box_lower = 0;
    d.v_init = MVNMF_DEEP_V_PRETRAINED;
    let f = deep_fit(&[x], &[2], 5, &[4, 1, 1], &no_graph(5), &d);
    check_ok(&f, "fuzz seed 0x173");
}

/// D3: `mvnmf_deep_fit` on finite data near 1e300 wrote layer 1 into `u` in pre-training,
/// then refused the overflowed intermediate as "input is NaN or infinite". Such data is
/// refused now, up front (`INPUT_TOO_LARGE`, nothing written); data just below the bound is
/// solved, with finite factors and an objective that never rises.
#[test]
fn d3_deep_fit_on_huge_data() {
    let (rows, n) = ([6usize, 4], 10);
    let labels = two_classes(n);
    for preset in [MVNMF_DEEP_PRESET_DMCL, MVNMF_DEEP_PRESET_DNMF] {
        for box_lower in [1, 0] {
            let mut p = deep_preset(preset);
            p.box_lower = box_lower;
            let graph = if preset == MVNMF_DEEP_PRESET_DMCL {
                sge(&labels, 2)
            } else {
                no_graph(n)
            };
            let what = format!("preset {preset} box {box_lower}");
            let xs = scaled_views(&rows, n, &[1e300, 1e300], 7);
            check_refused(&deep_fit(&xs, &rows, n, &[4, 2], &graph, &p), &what);
            // One view huge is enough.
            let xs = scaled_views(&rows, n, &[1e300, 1.0], 7);
            check_refused(&deep_fit(&xs, &rows, n, &[4, 2], &graph, &p), &what);
            for s in [1e145, 1e100, 1e30, 1e-100, 1e-300] {
                let xs = scaled_views(&rows, n, &[s, s], 7);
                let f = deep_fit(&xs, &rows, n, &[4, 2], &graph, &p);
                check_ok(&f, &format!("{what}, data at {s:e}"));
            }
        }
    }
}

/// D4: `mvnmf_nmf_fit` / `mvnmf_joint_nmf_fit` on finite data near 1e300 returned OK with
/// every V entry non-finite and a NaN objective. Refused now (`INPUT_TOO_LARGE`, nothing
/// written); below the bound every magnitude is solved.
#[test]
fn d4_nmf_on_huge_data() {
    let n = 9;
    let mut p = mvnmf_nmf_params_default();
    p.max_iter = 40;
    p.tol = 0.0;
    for rows in [&[7usize][..], &[5, 3]] {
        let h = rows.len();
        for vmax in [f64::INFINITY, 1.0] {
            p.vmax = vmax;
            let what = format!("{h} views, vmax {vmax}");
            check_refused(
                &joint_fit(&scaled_views(rows, n, &[1e300; 2][..h], 3), rows, n, 3, &p),
                &what,
            );
            check_refused(
                &joint_fit(&scaled_views(rows, n, &[1e155; 2][..h], 3), rows, n, 3, &p),
                &what,
            );
            for s in [1e149, 1e120, 1e40, 1e-40, 1e-150, 1e-300] {
                let f = joint_fit(&scaled_views(rows, n, &[s; 2][..h], 3), rows, n, 3, &p);
                check_ok(&f, &format!("{what}, data at {s:e}"));
            }
        }
    }
}

/// The scaling keeps the solution's meaning: data times `c = 2^200` (scaled down inside)
/// or `2^-300` (scaled up) with the weights `α·c`, `β·c²`, `γ·c²` gives the factors of the
/// original problem, `U` times `c` and `V` unchanged, bit for bit (the internal scale undoes
/// `c` exactly), and the objective times `c²`. (A fixed `β` against data times `c` would
/// weigh the graph `c²` less: a different problem, which the scaling does not pretend to be.)
#[test]
fn scaled_data_with_scaled_weights_gives_scaled_factors() {
    let (rows, n) = ([5usize, 4], 12);
    let labels = two_classes(n);
    // Largest entry in [1, 2): the internal scale of the scaled data is exactly 1/c (the
    // data itself is inside the band where the scale is 1).
    let xs: Vec<Vec<f64>> = scaled_views(&rows, n, &[1.0, 0.5], 5)
        .into_iter()
        .map(|x| x.iter().map(|v| v * 1.8).collect())
        .collect();
    for c in [2f64.powi(200), 2f64.powi(-300)] {
        let big: Vec<Vec<f64>> = xs
            .iter()
            .map(|x| x.iter().map(|v| v * c).collect())
            .collect();
        let what = |m: &str| format!("{m}, data times {c:e}");
        let joint = |a: &Fit, b: &Fit, m: &str| {
            check_ok(a, &what(m));
            check_ok(b, &what(m));
            assert_eq!(a.v, b.v, "{}", what(m));
            for (ua, ub) in a.u.iter().zip(&b.u) {
                assert!(ua.iter().zip(ub).all(|(x, y)| x * c == *y), "{}", what(m));
            }
            assert_eq!(
                a.report.objective.total * (c * c),
                b.report.objective.total,
                "{}",
                what(m)
            );
        };
        for preset in [
            MVNMF_MVSL_PRESET_JOINT_NMF,
            MVNMF_MVSL_PRESET_GNMF,
            MVNMF_MVSL_PRESET_MVSL,
            MVNMF_MVSL_PRESET_MCL,
        ] {
            let p = mvsl_preset(preset);
            let mut q = p;
            q.alpha *= c;
            q.beta *= c * c;
            q.gamma *= c * c;
            let a = mvsl_fit(&xs, &rows, n, 3, &sge(&labels, 2), &p);
            let b = mvsl_fit(&big, &rows, n, 3, &sge(&labels, 2), &q);
            joint(&a, &b, &format!("preset {preset}"));
        }
        let mut p = mvnmf_nmf_params_default();
        p.max_iter = 30;
        let (a, b) = (
            joint_fit(&xs, &rows, n, 3, &p),
            joint_fit(&big, &rows, n, 3, &p),
        );
        joint(&a, &b, "joint NMF");
        let d = deep_preset(MVNMF_DEEP_PRESET_DMCL);
        let mut e = d;
        e.top.alpha *= c;
        e.top.beta *= c * c;
        e.top.gamma *= c * c;
        let a = deep_fit(&xs, &rows, n, &[4, 2], &sge(&labels, 2), &d);
        let b = deep_fit(&big, &rows, n, &[4, 2], &sge(&labels, 2), &e);
        check_ok(&a, &what("deep"));
        check_ok(&b, &what("deep"));
        assert_eq!(a.v, b.v);
        for (i, (ua, ub)) in a.u.iter().zip(&b.u).enumerate() {
            // The lower layer (rows × 4) is the same; the top layer (4 × 2) carries c.
            let low = rows[i] * 4;
            assert_eq!(ua[..low], ub[..low]);
            assert!(ua[low..].iter().zip(&ub[low..]).all(|(x, y)| x * c == *y));
        }
    }
}

/// D5: with one view times 1e20 or more, MCL and DMCL's objective rose (up to 167 %, mostly
/// at iteration 1: the L1,∞ prox of `l1inf_prox_with_threshold_below_an_ulp` on the large
/// view); from 1e100 MvSL and the MvSL-T pipeline too (the V-step's `B² + 4AC` overflowed).
/// Every factor finite, the objective never rising, for views apart by up to 1e290.
#[test]
fn d5_views_far_apart() {
    let (rows, n) = ([5usize, 4], 12);
    let labels = two_classes(n);
    for f in [1e20, 1e50, 1e100, 1e145, 1e-20, 1e-100, 1e-145] {
        let xs = scaled_views(&rows, n, &[f, 1.0], 11);
        for preset in [
            MVNMF_MVSL_PRESET_MCL,
            MVNMF_MVSL_PRESET_MVSL,
            MVNMF_MVSL_PRESET_GNMF,
        ] {
            let fit = mvsl_fit(&xs, &rows, n, 3, &sge(&labels, 2), &mvsl_preset(preset));
            check_ok(&fit, &format!("preset {preset}, one view times {f:e}"));
        }
        let fit = deep_fit(
            &xs,
            &rows,
            n,
            &[4, 2],
            &sge(&labels, 2),
            &deep_preset(MVNMF_DEEP_PRESET_DMCL),
        );
        check_ok(&fit, &format!("DMCL, one view times {f:e}"));
        for method in [MVNMF_METHOD_MVSL_T, MVNMF_METHOD_MCL, MVNMF_METHOD_MVSL_L] {
            let (fit, eta) = pipeline_fit(&xs, &rows, n, 3, &labels, &pipeline_preset(method));
            check_ok(&fit, &format!("pipeline {method}, one view times {f:e}"));
            assert!(eta.iter().all(|e| e.is_finite()));
        }
    }
    // Apart by 1e290: one view near 1e145, the other near 1e-145.
    let xs = scaled_views(&rows, n, &[1e145, 1e-145], 11);
    let fit = mvsl_fit(
        &xs,
        &rows,
        n,
        3,
        &sge(&labels, 2),
        &mvsl_preset(MVNMF_MVSL_PRESET_MCL),
    );
    check_ok(&fit, "MCL, views 1e290 apart");
}

/// The encodes at extreme magnitudes: data and bases near 1e140 are solved (before: NaN),
/// small ones stay finite; bases beyond the bound are refused with `v` untouched.
#[test]
fn encodes_at_extreme_magnitudes() {
    let (rows, n, k) = (6usize, 8, 3);
    let p = mvnmf_nmf_params_default();
    for s in [1e140, 1e60, 1e-140] {
        let x: Vec<f64> = uniform(rows * n, 3)
            .iter()
            .map(|v| (0.05 + v) * s)
            .collect();
        let u: Vec<f64> = uniform(rows * k, 4)
            .iter()
            .map(|v| (0.05 + v) * s)
            .collect();
        let view = dense(&x, rows, n);
        let mut w = bytes(|b| unsafe { mvnmf_nmf_encode_workspace(&view, k, &p, b) });
        let mut v = vec![SENTINEL; k * n];
        let st = unsafe {
            mvnmf_nmf_encode(
                &view,
                k,
                &p,
                u.as_ptr(),
                v.as_mut_ptr(),
                w.as_mut_ptr().cast(),
                w.len(),
                None,
                null_mut(),
                null_mut(),
            )
        };
        assert_eq!(st, S::Ok, "{s:e}");
        assert!(v.iter().all(|x| x.is_finite()), "{s:e}: {v:?}");
        if s > 1.0 {
            // Against the bases' own scale V is of order 1. (Small inputs are not scaled up
            // by the encodes: there the guard ε may hold V near its start.)
            assert!(
                v.iter().any(|&x| x > 1e-3) && v.iter().all(|&x| x < 1e3),
                "{s:e}: {v:?}"
            );
        }
        // Bases beyond the bound.
        let huge: Vec<f64> = u.iter().map(|b| b / s * 1e300).collect();
        let st = unsafe {
            mvnmf_nmf_encode(
                &view,
                k,
                &p,
                huge.as_ptr(),
                v.as_mut_ptr(),
                w.as_mut_ptr().cast(),
                w.len(),
                None,
                null_mut(),
                null_mut(),
            )
        };
        assert_eq!(st, S::InputTooLarge);
    }
}

/// `mvnmf_deep_encode` with finite layers whose product overflows (two layers near 1e200):
/// refused as too large, `v` untouched (it was `NON_FINITE_INPUT`, blaming the caller's
/// values); layers near 1e70 (product near 1e140) are encoded.
#[test]
fn deep_encode_with_an_overflowing_stack() {
    let (rows, n, layers) = (6usize, 5usize, [3usize, 2]);
    let x: Vec<f64> = uniform(rows * n, 2).iter().map(|v| 0.05 + v).collect();
    let views = [dense(&x, rows, n)];
    let dp = deep_preset(MVNMF_DEEP_PRESET_DNMF);
    let graph = no_graph(n);
    let mut w = bytes(|b| unsafe {
        mvnmf_deep_encode_workspace(views.as_ptr(), 1, &graph, layers.as_ptr(), 2, &dp, b)
    });
    for (layer_scale, want) in [(1e200, S::InputTooLarge), (1e70, S::Ok)] {
        let u: Vec<f64> = uniform(rows * 3 + 3 * 2, 8)
            .iter()
            .map(|v| (0.05 + v) * layer_scale)
            .collect();
        let ups = [u.as_ptr()];
        let mut v = vec![SENTINEL; 2 * n];
        let s = unsafe {
            mvnmf_deep_encode(
                views.as_ptr(),
                1,
                &graph,
                layers.as_ptr(),
                2,
                &dp,
                ups.as_ptr(),
                v.as_mut_ptr(),
                w.as_mut_ptr().cast(),
                w.len(),
                None,
                null_mut(),
                null_mut(),
            )
        };
        assert_eq!(s, want, "layers at {layer_scale:e}");
        if want == S::Ok {
            assert!(v.iter().all(|x| x.is_finite()));
        } else {
            assert!(v.iter().all(|&x| x == SENTINEL));
        }
    }
}

/// The V-step's `B² + 4AC` overflowed with graph weights near 1e170 or more on ordinary data
/// (the root became ∞, V jumped to vmax and the penalty's gain was lost: the objective rose
/// from −4.7e198 to 22): the factor is now taken at `(A, B, C)/max` when the discriminant
/// overflows — the same factor, unchanged wherever it did not.
#[test]
fn huge_graph_weights_keep_the_v_step_finite() {
    let (rows, n) = ([5usize, 4], 12);
    let xs = scaled_views(&rows, n, &[1.0, 1.0], 13);
    // A ring of light affinity edges, a ring of heavy penalty edges two apart (symmetric).
    let ring = |step: usize, w: f64| {
        let mut rp = vec![0usize];
        let (mut ci, mut ws) = (vec![], vec![]);
        for j in 0..n {
            let mut nb = [(j + step) % n, (j + n - step) % n];
            nb.sort();
            for i in nb {
                ci.push(i);
                ws.push(w);
            }
            rp.push(ci.len());
        }
        (rp, ci, ws)
    };
    for w in [1e200, 1e170, 1e150, 1.0] {
        let (arp, aci, aw) = ring(1, w * 1e-3);
        let (prp, pci, pw) = ring(2, w);
        let g = mvnmf_graph {
            kind: MVNMF_GRAPH_CSR,
            affinity_row_ptr: arp.as_ptr(),
            affinity_col_idx: aci.as_ptr(),
            affinity_weights: aw.as_ptr(),
            penalty_row_ptr: prp.as_ptr(),
            penalty_col_idx: pci.as_ptr(),
            penalty_weights: pw.as_ptr(),
            ..no_graph(n)
        };
        for preset in [MVNMF_MVSL_PRESET_MVSL, MVNMF_MVSL_PRESET_GNMF] {
            let f = mvsl_fit(&xs, &rows, n, 3, &g, &mvsl_preset(preset));
            check_ok(&f, &format!("preset {preset}, graph weights {w:e}"));
        }
    }
}
