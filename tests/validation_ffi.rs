//! Argument validation through the C ABI: class counts of stratified splits, zero rows, workspace
//! checks before reading, a pipeline's query and fit agreeing, label flags and NULL labels — each
//! bad argument gets its own status with the outputs untouched. Found by the adversarial run of
//! issue 15; the C harness (`ffi-tests/c/harness_regress.c`) has the same cases in C.

mod common;

use std::ptr::{null, null_mut};

use common::capi::*;
use mvnmf::eval;
use mvnmf::ffi::*;

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
    let graph = no_graph(n);
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

/// Issue 33: a refusal says where. The Rust API locates the first bad entry of a view set
/// (`data::locate_bad`, in the solvers' order: view, then column, then row; CSC views by their
/// stored entries) and of a malformed CSC structure (`data::locate_csc`); through the C ABI,
/// `mvnmf_mvsl_fit` writes the argument's position and the view, row and column to its report,
/// with the factor outputs untouched, and a clean view set locates nothing.
#[test]
fn refusal_says_argument_view_row_and_column() {
    use mvnmf::data::{locate_bad, locate_csc, Csc, Dense, View};
    use mvnmf::error::{Error, Located, Where};

    // Rust: NaN at view 2, row 1, column 3 of three views; a negative in view 1 comes first
    // only when negatives are refused.
    let (m, n) = ([4usize, 3, 5], 6usize);
    let mut xs: Vec<Vec<f64>> = (0..3).map(|v| uniform(m[v] * n, 11 + v as u64)).collect();
    xs[2][3 * m[2] + 1] = f64::NAN;
    xs[2][5 * m[2]] = f64::INFINITY; // later: not the first
    xs[1][4 * m[1] + 2] = -0.5;
    let views: Vec<View<f64>> = (0..3)
        .map(|v| Dense::new(&xs[v], m[v], n, m[v]).unwrap().into())
        .collect();
    assert_eq!(
        locate_bad(&views[..], false),
        Some((Error::NonFiniteInput, Where::entry(2, 1, 3)))
    );
    assert_eq!(
        locate_bad(&views[..], true),
        Some((Error::NegativeInput, Where::entry(1, 2, 4)))
    );
    let located = Located::new(Error::NonFiniteInput, Where::entry(2, 1, 3).or_arg(1));
    assert_eq!(
        located.to_string(),
        "an input value is NaN or infinite (argument 1, view 2, row 1, column 3)"
    );
    // A CSC view: the stored entry's row index and its column (column 1 is empty).
    let (cp, ri, cv) = (
        [0usize, 2, 2, 4],
        [0usize, 3, 1, 2],
        [1.0, 2.0, 3.0, f64::NAN],
    );
    let csc: [View<f64>; 1] = [Csc::new(4, 3, &cp, &ri, &cv).unwrap().into()];
    assert_eq!(
        locate_bad(&csc[..], true),
        Some((Error::NonFiniteInput, Where::entry(0, 2, 2)))
    );
    let clean: [View<f64>; 1] = [Dense::new(&xs[0], m[0], n, m[0]).unwrap().into()];
    assert_eq!(locate_bad(&clean[..], true), None);
    // Malformed CSC: row 0 after row 1 in column 2; a decreasing pointer at column 1.
    assert_eq!(locate_csc(4, &[0, 2, 2, 4], &[0, 3, 1, 0]), Some((0, 2)));
    assert_eq!(
        locate_csc(4, &[0, 3, 2, 4], &[0, 1, 2, 3]),
        Some((usize::MAX, 1))
    );
    assert_eq!(locate_csc(4, &cp, &ri), None);

    // C ABI: the same data (negative removed) through mvnmf_mvsl_fit.
    xs[1][4 * m[1] + 2] = 0.5;
    let cviews: Vec<mvnmf_view> = (0..3).map(|v| dense(&xs[v], m[v], n)).collect();
    let graph = no_graph(n);
    let k = 2;
    let mut w =
        bytes(|b| unsafe { mvnmf_mvsl_fit_workspace(cviews.as_ptr(), 3, &graph, k, null(), b) });
    let fit = |params: *const mvnmf_mvsl_params, w: &mut [u8]| {
        let mut us: Vec<Vec<f64>> = (0..3).map(|v| vec![-7.0; m[v] * k]).collect();
        let mut v = vec![-7.0; k * n];
        let ptrs: Vec<*mut f64> = us.iter_mut().map(|u| u.as_mut_ptr()).collect();
        // SAFETY: every buffer has its documented size; the report is written whole.
        let mut rep: mvnmf_report = unsafe { std::mem::zeroed() };
        rep.where_arg = 99;
        let st = unsafe {
            mvnmf_mvsl_fit(
                cviews.as_ptr(),
                3,
                &graph,
                k,
                params,
                ptrs.as_ptr(),
                v.as_mut_ptr(),
                w.as_mut_ptr().cast(),
                w.len(),
                None,
                null_mut(),
                &mut rep,
            )
        };
        let untouched = us.iter().flatten().chain(&v).all(|&x| x == -7.0);
        (st, rep, untouched)
    };
    let (st, rep, untouched) = fit(null(), &mut w);
    assert_eq!(st, S::NonFiniteInput);
    let at = (rep.where_arg, rep.where_view, rep.where_row, rep.where_col);
    assert_eq!(
        at,
        (1, 2, 1, 3),
        "views (argument 1), view 2, row 1, column 3"
    );
    assert!(untouched && rep.iterations == 0);
    // A bad params field: the params argument (5), nothing inside it.
    let mut p = mvnmf_mvsl_params_default();
    p.eps = -1.0;
    let (st, rep, untouched) = fit(&p, &mut w);
    assert_eq!(st, S::BadParameter);
    let at = (rep.where_arg, rep.where_view, rep.where_row, rep.where_col);
    assert_eq!(at, (5, usize::MAX, usize::MAX, usize::MAX));
    assert!(untouched);
}
