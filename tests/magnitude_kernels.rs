//! Kernels, MKL weights, the alignment system, the simplex QP, the kNN similarities and the
//! assignment's total at extreme magnitudes (1e±300, subnormal items), through the C ABI as a C
//! caller would use it: finite results, scale invariance where the maths has it, refusals where
//! the objective could overflow. Found by the adversarial run of issue 15 and the fuzz driver; the
//! C harness (`ffi-tests/c/harness_regress.c`) has the same cases in C.

mod common;

use std::ptr::{null, null_mut};

use common::capi::*;
use mvnmf::ffi::*;

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
