//! Single precision end to end through the C ABI (issue 17, item 4): every
//! `_f32` entry point on real data (`data/mfeat-sample`, four nonnegative
//! views scaled to ‖X‖²_F = N, 500 items), from the same start as its `double`
//! twin. Each run's objective never rises (beyond f32 rounding, 1e-5 of the
//! start), ends within 1e-4 of the double run's (measured: 5e-8 to 3e-6), and
//! the encodings classify the digits as well (1-NN from 30 % labeled items,
//! within 1 point; measured: equal). A dense
//! graph (double weights) is refused by the f32 solvers with the outputs
//! untouched, and the f32 workspace is smaller.

mod common;

use std::ffi::c_void;
use std::ptr::{null, null_mut};

use common::*;
use mvnmf::ffi::*;

type S = mvnmf_status;
/// A fit from the given start into (U's, V), recording the objective trace.
type Call<'a, T> = &'a dyn Fn(&mut [Vec<T>], &mut [T], &mut Vec<f64>) -> S;

const N: usize = 500;
const K: usize = 12;

/// The views fou, fac, zer, mor, each scaled to ‖X‖²_F = N: (values, rows).
fn views64() -> Vec<(Vec<f64>, usize)> {
    [1, 2, 5, 6]
        .iter()
        .map(|&v| {
            let (x, m, n) = read_view("mfeat-sample", v);
            assert_eq!(n, N);
            let s = (x.iter().map(|a| a * a).sum::<f64>() / N as f64).sqrt();
            (x.iter().map(|a| a / s).collect(), m)
        })
        .collect()
}

fn labels() -> Vec<u32> {
    (0..N).map(|j| (j / 50) as u32).collect()
}

/// 15 labeled items per class (every third of the first 45), the rest unlabeled.
fn labeled(j: usize) -> bool {
    j % 50 < 45 && (j % 50).is_multiple_of(3)
}

fn dense64(x: &[f64], m: usize) -> mvnmf_view {
    mvnmf_view {
        kind: MVNMF_VIEW_DENSE,
        rows: m,
        cols: x.len() / m,
        values: x.as_ptr(),
        col_stride: m,
        col_ptr: null(),
        row_idx: null(),
    }
}

fn dense32(x: &[f32], m: usize) -> mvnmf_view_f32 {
    mvnmf_view_f32 {
        kind: MVNMF_VIEW_DENSE,
        rows: m,
        cols: x.len() / m,
        values: x.as_ptr(),
        col_stride: m,
        col_ptr: null(),
        row_idx: null(),
    }
}

unsafe extern "C" fn record(p: *const mvnmf_progress, user: *mut c_void) -> i32 {
    if unsafe { (*p).phase } != MVNMF_PHASE_ITERATIONS {
        return 0; // the pipeline's set-up phases: no iterate
    }
    unsafe { (*user.cast::<Vec<f64>>()).push((*p).objective.total) };
    0
}

/// One fit in both precisions: the double and float buffers (U's then V) after
/// `run64` / `run32`, each given the start, the workspace and the trace.
struct Pair {
    obj64: Vec<f64>,
    obj32: Vec<f64>,
    v64: Vec<f64>,
    v32: Vec<f32>,
}

fn check(name: &str, p: &Pair) {
    let rises = |o: &[f64]| {
        o.windows(2)
            .map(|w| (w[1] - w[0]) / o[0])
            .fold(f64::MIN, f64::max)
    };
    assert!(
        p.obj64.len() > 1 && p.obj32.len() == p.obj64.len(),
        "{name}: traces {} {}",
        p.obj64.len(),
        p.obj32.len()
    );
    assert!(
        rises(&p.obj64) <= 1e-12,
        "{name}: f64 rose {:e}",
        rises(&p.obj64)
    );
    assert!(
        rises(&p.obj32) <= 1e-5,
        "{name}: f32 rose {:e}",
        rises(&p.obj32)
    );
    let (a, b) = (p.obj64.last().unwrap(), p.obj32.last().unwrap());
    assert!(
        (a - b).abs() <= 1e-4 * a.abs(),
        "{name}: objective f64 {a} f32 {b}"
    );
    let (acc64, acc32) = (
        one_nn(&p.v64),
        one_nn(&p.v32.iter().map(|&x| x as f64).collect::<Vec<_>>()),
    );
    assert!(
        (acc64 - acc32).abs() <= 0.01,
        "{name}: 1-NN accuracy f64 {acc64} f32 {acc32}"
    );
    eprintln!("{name}: objective f64 {a:.6} f32 {b:.6} (rel {:.1e}); 1-NN accuracy f64 {acc64:.3} f32 {acc32:.3}", (a - b).abs() / a.abs());
}

/// 1-NN accuracy of the unlabeled items from the labeled ones (`v`: K × N).
fn one_nn(v: &[f64]) -> f64 {
    let y = labels();
    let (train, test): (Vec<usize>, Vec<usize>) = (0..N).partition(|&j| labeled(j));
    let col = |j: usize| &v[j * K..(j + 1) * K];
    let hits = test
        .iter()
        .filter(|&&j| {
            let best = train
                .iter()
                .min_by(|&&a, &&b| {
                    let d = |i: usize| {
                        col(i)
                            .iter()
                            .zip(col(j))
                            .map(|(p, q)| (p - q).powi(2))
                            .sum::<f64>()
                    };
                    d(a).total_cmp(&d(b))
                })
                .unwrap();
            y[*best] == y[j]
        })
        .count();
    hits as f64 / test.len() as f64
}

/// Runs `f(work, bytes)` with a workspace of `bytes`.
fn with_work<T>(bytes: usize, f: impl FnOnce(*mut c_void, usize) -> T) -> T {
    let mut w = vec![0u8; bytes.max(1)];
    f(w.as_mut_ptr().cast(), bytes)
}

#[test]
fn every_f32_entry_point_is_monotone_and_agrees_with_f64() {
    let xs = views64();
    let xs32: Vec<Vec<f32>> = xs
        .iter()
        .map(|(x, _)| x.iter().map(|&a| a as f32).collect())
        .collect();
    let v64: Vec<mvnmf_view> = xs.iter().map(|(x, m)| dense64(x, *m)).collect();
    let v32: Vec<mvnmf_view_f32> = xs32
        .iter()
        .zip(&xs)
        .map(|(x, (_, m))| dense32(x, *m))
        .collect();
    let h = xs.len();
    let y: Vec<u32> = labels()
        .iter()
        .enumerate()
        .map(|(j, &c)| if labeled(j) { c } else { MVNMF_UNLABELED })
        .collect();

    // The start (given) in both precisions.
    let u0: Vec<Vec<f64>> = xs
        .iter()
        .enumerate()
        .map(|(i, (_, m))| formula_start(m * K, 100 * i as u64))
        .collect();
    let v0 = formula_start(K * N, 7);
    let run = |name: &str, f64_call: Call<'_, f64>, f32_call: Call<'_, f32>| {
        let (mut u, mut v, mut o64) = (u0.clone(), v0.clone(), Vec::new());
        assert_eq!(f64_call(&mut u, &mut v, &mut o64), S::Ok, "{name} f64");
        let mut u32s: Vec<Vec<f32>> = u0
            .iter()
            .map(|x| x.iter().map(|&a| a as f32).collect())
            .collect();
        let mut v32s: Vec<f32> = v0.iter().map(|&a| a as f32).collect();
        let mut o32 = Vec::new();
        assert_eq!(
            f32_call(&mut u32s, &mut v32s, &mut o32),
            S::Ok,
            "{name} f32"
        );
        check(
            name,
            &Pair {
                obj64: o64,
                obj32: o32,
                v64: v,
                v32: v32s,
            },
        );
    };

    // Joint NMF.
    let mut np = mvnmf_nmf_params_default();
    np.max_iter = 150;
    np.tol = 0.0;
    np.init = MVNMF_INIT_GIVEN;
    let (mut b64, mut b32) = (0usize, 0usize);
    unsafe {
        assert_eq!(
            mvnmf_joint_nmf_fit_workspace(v64.as_ptr(), h, K, &np, &mut b64),
            S::Ok
        );
        assert_eq!(
            mvnmf_joint_nmf_fit_f32_workspace(v32.as_ptr(), h, K, &np, &mut b32),
            S::Ok
        );
    }
    assert!(b32 < b64, "f32 workspace {b32} >= f64 {b64}");
    run(
        "joint NMF",
        &|u, v, o| {
            let ptrs: Vec<*mut f64> = u.iter_mut().map(|x| x.as_mut_ptr()).collect();
            with_work(b64, |w, b| unsafe {
                mvnmf_joint_nmf_fit(
                    v64.as_ptr(),
                    h,
                    K,
                    &np,
                    ptrs.as_ptr(),
                    v.as_mut_ptr(),
                    w,
                    b,
                    Some(record),
                    (o as *mut Vec<f64>).cast(),
                    null_mut(),
                )
            })
        },
        &|u, v, o| {
            let ptrs: Vec<*mut f32> = u.iter_mut().map(|x| x.as_mut_ptr()).collect();
            with_work(b32, |w, b| unsafe {
                mvnmf_joint_nmf_fit_f32(
                    v32.as_ptr(),
                    h,
                    K,
                    &np,
                    ptrs.as_ptr(),
                    v.as_mut_ptr(),
                    w,
                    b,
                    Some(record),
                    (o as *mut Vec<f64>).cast(),
                    null_mut(),
                )
            })
        },
    );

    // KL NMF (beta = 1).
    let (mut b64, mut b32) = (0usize, 0usize);
    unsafe {
        assert_eq!(
            mvnmf_beta_nmf_fit_workspace(v64.as_ptr(), h, K, 1.0, &np, &mut b64),
            S::Ok
        );
        assert_eq!(
            mvnmf_beta_nmf_fit_f32_workspace(v32.as_ptr(), h, K, 1.0, &np, &mut b32),
            S::Ok
        );
    }
    run(
        "KL NMF",
        &|u, v, o| {
            let ptrs: Vec<*mut f64> = u.iter_mut().map(|x| x.as_mut_ptr()).collect();
            with_work(b64, |w, b| unsafe {
                mvnmf_beta_nmf_fit(
                    v64.as_ptr(),
                    h,
                    K,
                    1.0,
                    -1.0,
                    null(),
                    &np,
                    ptrs.as_ptr(),
                    v.as_mut_ptr(),
                    w,
                    b,
                    Some(record),
                    (o as *mut Vec<f64>).cast(),
                    null_mut(),
                )
            })
        },
        &|u, v, o| {
            let ptrs: Vec<*mut f32> = u.iter_mut().map(|x| x.as_mut_ptr()).collect();
            with_work(b32, |w, b| unsafe {
                mvnmf_beta_nmf_fit_f32(
                    v32.as_ptr(),
                    h,
                    K,
                    1.0,
                    -1.0,
                    null(),
                    &np,
                    ptrs.as_ptr(),
                    v.as_mut_ptr(),
                    w,
                    b,
                    Some(record),
                    (o as *mut Vec<f64>).cast(),
                    null_mut(),
                )
            })
        },
    );

    // MCL with the SGE graph of the labeled items.
    let mut mp = mvnmf_mvsl_params_default();
    unsafe {
        assert_eq!(
            mvnmf_mvsl_params_preset(MVNMF_MVSL_PRESET_MCL, &mut mp),
            S::Ok
        )
    };
    mp.max_iter = 100;
    mp.tol = 0.0;
    mp.alpha = 1.0;
    mp.init = MVNMF_INIT_GIVEN;
    let mut g: mvnmf_graph = unsafe { std::mem::zeroed() };
    g.kind = MVNMF_GRAPH_SGE;
    g.n = N;
    g.labels = y.as_ptr();
    g.n_classes = 10;
    let (mut b64, mut b32) = (0usize, 0usize);
    unsafe {
        assert_eq!(
            mvnmf_mvsl_fit_workspace(v64.as_ptr(), h, &g, K, &mp, &mut b64),
            S::Ok
        );
        assert_eq!(
            mvnmf_mvsl_fit_f32_workspace(v32.as_ptr(), h, &g, K, &mp, &mut b32),
            S::Ok
        );
    }
    run(
        "MCL",
        &|u, v, o| {
            let ptrs: Vec<*mut f64> = u.iter_mut().map(|x| x.as_mut_ptr()).collect();
            with_work(b64, |w, b| unsafe {
                mvnmf_mvsl_fit(
                    v64.as_ptr(),
                    h,
                    &g,
                    K,
                    &mp,
                    ptrs.as_ptr(),
                    v.as_mut_ptr(),
                    w,
                    b,
                    Some(record),
                    (o as *mut Vec<f64>).cast(),
                    null_mut(),
                )
            })
        },
        &|u, v, o| {
            let ptrs: Vec<*mut f32> = u.iter_mut().map(|x| x.as_mut_ptr()).collect();
            with_work(b32, |w, b| unsafe {
                mvnmf_mvsl_fit_f32(
                    v32.as_ptr(),
                    h,
                    &g,
                    K,
                    &mp,
                    ptrs.as_ptr(),
                    v.as_mut_ptr(),
                    w,
                    b,
                    Some(record),
                    (o as *mut Vec<f64>).cast(),
                    null_mut(),
                )
            })
        },
    );

    // The pipeline (MvSL-T: MKL weights, TGE graph, factorization), seeded start.
    let mut pp: mvnmf_pipeline_params = unsafe { std::mem::zeroed() };
    unsafe {
        assert_eq!(
            mvnmf_pipeline_params_preset(MVNMF_METHOD_MVSL_T, &mut pp),
            S::Ok
        )
    };
    pp.solver.max_iter = 60;
    pp.solver.tol = 0.0;
    pp.solver.alpha = 1.5;
    let ks = vec![
        mvnmf_kernel {
            kind: MVNMF_KERNEL_RBF,
            gamma: 0.0
        };
        h
    ];
    let (mut b64, mut b32) = (0usize, 0usize);
    unsafe {
        assert_eq!(
            mvnmf_pipeline_fit_workspace(v64.as_ptr(), h, ks.as_ptr(), 10, K, &pp, &mut b64),
            S::Ok
        );
        assert_eq!(
            mvnmf_pipeline_fit_f32_workspace(v32.as_ptr(), h, ks.as_ptr(), 10, K, &pp, &mut b32),
            S::Ok
        );
    }
    let (mut e64, mut e32) = (vec![0.0; h], vec![0.0; h]);
    let (e64p, e32p) = (e64.as_mut_ptr(), e32.as_mut_ptr());
    run(
        "pipeline MvSL-T",
        &|u, v, o| {
            let ptrs: Vec<*mut f64> = u.iter_mut().map(|x| x.as_mut_ptr()).collect();
            with_work(b64, |w, b| unsafe {
                mvnmf_pipeline_fit(
                    v64.as_ptr(),
                    h,
                    ks.as_ptr(),
                    y.as_ptr(),
                    10,
                    K,
                    &pp,
                    ptrs.as_ptr(),
                    v.as_mut_ptr(),
                    e64p,
                    w,
                    b,
                    Some(record),
                    (o as *mut Vec<f64>).cast(),
                    null_mut(),
                )
            })
        },
        &|u, v, o| {
            let ptrs: Vec<*mut f32> = u.iter_mut().map(|x| x.as_mut_ptr()).collect();
            with_work(b32, |w, b| unsafe {
                mvnmf_pipeline_fit_f32(
                    v32.as_ptr(),
                    h,
                    ks.as_ptr(),
                    y.as_ptr(),
                    10,
                    K,
                    &pp,
                    ptrs.as_ptr(),
                    v.as_mut_ptr(),
                    e32p,
                    w,
                    b,
                    Some(record),
                    (o as *mut Vec<f64>).cast(),
                    null_mut(),
                )
            })
        },
    );
    assert!(
        e64.iter().zip(&e32).all(|(a, b)| (a - b).abs() <= 1e-4),
        "eta {e64:?} {e32:?}"
    );

    // A dense graph (double weights) is refused by the f32 solver, outputs untouched.
    let aff = vec![0.0f64; N * N];
    let mut gd: mvnmf_graph = unsafe { std::mem::zeroed() };
    gd.kind = MVNMF_GRAPH_DENSE;
    gd.n = N;
    gd.affinity_weights = aff.as_ptr();
    let mut bytes = 0usize;
    assert_eq!(
        unsafe { mvnmf_mvsl_fit_f32_workspace(v32.as_ptr(), h, &gd, K, &mp, &mut bytes) },
        S::BadParameter
    );
    let mut u: Vec<Vec<f32>> = xs.iter().map(|(_, m)| vec![0.25; m * K]).collect();
    let mut v = vec![0.25f32; K * N];
    let ptrs: Vec<*mut f32> = u.iter_mut().map(|x| x.as_mut_ptr()).collect();
    let s = with_work(b32, |w, b| unsafe {
        mvnmf_mvsl_fit_f32(
            v32.as_ptr(),
            h,
            &gd,
            K,
            &mp,
            ptrs.as_ptr(),
            v.as_mut_ptr(),
            w,
            b,
            None,
            null_mut(),
            null_mut(),
        )
    });
    assert_eq!(s, S::BadParameter);
    assert!(v.iter().all(|&x| x == 0.25) && u.iter().flatten().all(|&x| x == 0.25));
}

#[test]
fn f32_deep_encode_and_jsnmf_run_and_stay_monotone() {
    let xs = views64();
    let xs32: Vec<Vec<f32>> = xs
        .iter()
        .map(|(x, _)| x.iter().map(|&a| a as f32).collect())
        .collect();
    let v32: Vec<mvnmf_view_f32> = xs32
        .iter()
        .zip(&xs)
        .map(|(x, (_, m))| dense32(x, *m))
        .collect();
    let h = xs.len();
    let y = labels();
    let mut g: mvnmf_graph = unsafe { std::mem::zeroed() };
    g.kind = MVNMF_GRAPH_SGE;
    g.n = N;
    g.labels = y.as_ptr();
    g.n_classes = 10;
    let mut dp = unsafe { std::mem::zeroed() };
    unsafe {
        assert_eq!(
            mvnmf_deep_params_preset(MVNMF_DEEP_PRESET_DMCL, &mut dp),
            S::Ok
        )
    };
    dp.top.max_iter = 40;
    dp.top.tol = 0.0;
    dp.top.alpha = 1.0;
    let layers = [20usize, K];
    let lens: Vec<usize> = xs
        .iter()
        .map(|(_, m)| {
            let mut l = 0;
            assert_eq!(
                unsafe { mvnmf_deep_factor_len(*m, layers.as_ptr(), 2, &mut l) },
                S::Ok
            );
            l
        })
        .collect();
    let mut us: Vec<Vec<f32>> = lens.iter().map(|&l| vec![0.0; l]).collect();
    let mut v = vec![0.0f32; K * N];
    let mut bytes = 0;
    unsafe {
        assert_eq!(
            mvnmf_deep_fit_f32_workspace(v32.as_ptr(), h, &g, layers.as_ptr(), 2, &dp, &mut bytes),
            S::Ok
        )
    };
    let mut trace = Vec::new();
    let ptrs: Vec<*mut f32> = us.iter_mut().map(|x| x.as_mut_ptr()).collect();
    let s = with_work(bytes, |w, b| unsafe {
        mvnmf_deep_fit_f32(
            v32.as_ptr(),
            h,
            &g,
            layers.as_ptr(),
            2,
            &dp,
            ptrs.as_ptr(),
            v.as_mut_ptr(),
            w,
            b,
            Some(record),
            (&mut trace as *mut Vec<f64>).cast(),
            null_mut(),
        )
    });
    assert_eq!(s, S::Ok);
    assert!(
        trace.windows(2).all(|w| w[1] <= w[0] + 1e-5 * trace[0]),
        "DMCL f32 rose"
    );
    // Encode the same items against the fitted stacks: close to the fit's V.
    let gn = mvnmf_graph {
        kind: MVNMF_GRAPH_NONE,
        ..g
    };
    let mut ve = vec![0.0f32; K * N];
    unsafe {
        assert_eq!(
            mvnmf_deep_encode_f32_workspace(
                v32.as_ptr(),
                h,
                &gn,
                layers.as_ptr(),
                2,
                &dp,
                &mut bytes
            ),
            S::Ok
        )
    };
    let cptrs: Vec<*const f32> = us.iter().map(|x| x.as_ptr()).collect();
    let s = with_work(bytes, |w, b| unsafe {
        mvnmf_deep_encode_f32(
            v32.as_ptr(),
            h,
            &gn,
            layers.as_ptr(),
            2,
            &dp,
            cptrs.as_ptr(),
            ve.as_mut_ptr(),
            w,
            b,
            None,
            null_mut(),
            null_mut(),
        )
    });
    assert_eq!(s, S::Ok);
    assert!(ve.iter().all(|x| x.is_finite() && *x >= 0.0));

    // JSNMF on two sources over fac's 216 features: items 0..250 and 250..500.
    let (fac, m) = (&xs32[1], xs[1].1);
    let src = [dense32(&fac[..m * 250], m), dense32(&fac[m * 250..], m)];
    let mut jp = mvnmf_jsnmf_params_default();
    jp.max_iter = 60;
    jp.tol = 0.0;
    let (k, ranks) = (6usize, [10usize, 10]);
    unsafe {
        assert_eq!(
            mvnmf_jsnmf_fit_f32_workspace(src.as_ptr(), 2, k, ranks.as_ptr(), &jp, &mut bytes),
            S::Ok
        )
    };
    let mut w = vec![0.0f32; m * k];
    let mut uu = [vec![0.0f32; m * 4], vec![0.0f32; m * 4]];
    let mut hh = [vec![0.0f32; 10 * 250], vec![0.0f32; 10 * 250]];
    let up: Vec<*mut f32> = uu.iter_mut().map(|x| x.as_mut_ptr()).collect();
    let hp: Vec<*mut f32> = hh.iter_mut().map(|x| x.as_mut_ptr()).collect();
    let mut trace = Vec::new();
    let s = with_work(bytes, |wk, b| unsafe {
        mvnmf_jsnmf_fit_f32(
            src.as_ptr(),
            2,
            k,
            ranks.as_ptr(),
            null(),
            &jp,
            w.as_mut_ptr(),
            up.as_ptr(),
            hp.as_ptr(),
            wk,
            b,
            Some(record),
            (&mut trace as *mut Vec<f64>).cast(),
            null_mut(),
        )
    });
    assert_eq!(s, S::Ok);
    assert!(
        trace.len() == 61 && trace.windows(2).all(|w| w[1] <= w[0] + 1e-5 * trace[0]),
        "JSNMF f32"
    );
    // Encode source 1's items against [W | U_1] in single precision: finite, ≥ 0.
    let qp = mvnmf_jsnmf_query_params_default();
    unsafe {
        assert_eq!(
            mvnmf_jsnmf_encode_f32_workspace(&src[0], 10, &qp, &mut bytes),
            S::Ok
        )
    };
    let mut he = vec![-1.0f32; 10 * 250];
    let s = with_work(bytes, |wk, b| unsafe {
        mvnmf_jsnmf_encode_f32(
            &src[0],
            k,
            10,
            &qp,
            w.as_ptr(),
            uu[0].as_ptr(),
            he.as_mut_ptr(),
            wk,
            b,
        )
    });
    assert_eq!(s, S::Ok);
    assert!(he.iter().all(|x| x.is_finite() && *x >= 0.0));
}

#[test]
fn f32_magnitudes_are_refused_where_float_factors_would_overflow() {
    // Found by the fuzz driver: views near 1e38 (finite floats) gave OK with
    // infinite factors. The f32 solvers now refuse ½‖X‖² > 2^103 (entries above
    // about 4e15) with INPUT_TOO_LARGE and nothing written; below that they
    // solve at an internal power-of-two scale and return finite factors.
    let (m, n, k) = (6, 9, 2);
    for (scale, want) in [
        (1e37f32, S::InputTooLarge),
        (1e20, S::InputTooLarge),
        (1e12, S::Ok),
        (1e-30, S::Ok),
    ] {
        let x: Vec<f32> = (0..m * n).map(|t| scale * (1.0 + (t % 5) as f32)).collect();
        let view = dense32(&x, m);
        let p = mvnmf_nmf_params_default();
        let mut bytes = 0;
        unsafe { assert_eq!(mvnmf_nmf_fit_f32_workspace(&view, k, &p, &mut bytes), S::Ok) };
        let (mut u, mut v) = (vec![-1.0f32; m * k], vec![-1.0f32; k * n]);
        let s = with_work(bytes, |w, b| unsafe {
            mvnmf_nmf_fit_f32(
                &view,
                k,
                &p,
                u.as_mut_ptr(),
                v.as_mut_ptr(),
                w,
                b,
                None,
                null_mut(),
                null_mut(),
            )
        });
        assert_eq!(s, want, "entries near {scale:e}");
        if s == S::Ok {
            assert!(
                u.iter().chain(&v).all(|x| x.is_finite() && *x >= 0.0),
                "{scale:e}"
            );
        } else {
            assert!(
                u.iter().chain(&v).all(|&x| x == -1.0),
                "{scale:e}: written on error"
            );
        }
    }
}

/// Every `_f32` entry point refuses a negative entry (NEGATIVE_INPUT) and a
/// NULL view array (NULL_POINTER) with its outputs untouched; and the MvSL
/// encode in single precision never raises its objective.
#[test]
fn every_f32_entry_point_refuses_bad_input_untouched() {
    let (m, n, k) = (6usize, 9usize, 2usize);
    let good: Vec<f32> = (0..m * n).map(|t| 0.2 + (t % 7) as f32 / 7.0).collect();
    let mut bad = good.clone();
    bad[4] = -1.0;
    let labels: Vec<u32> = (0..n).map(|j| (j % 2) as u32).collect();
    let mut sge: mvnmf_graph = unsafe { std::mem::zeroed() };
    sge.kind = MVNMF_GRAPH_SGE;
    sge.n = n;
    sge.labels = labels.as_ptr();
    sge.n_classes = 2;
    let none = mvnmf_graph {
        kind: MVNMF_GRAPH_NONE,
        ..sge
    };
    let np = mvnmf_nmf_params_default();
    let mp = mvnmf_mvsl_params_default();
    let mut dp = unsafe { std::mem::zeroed() };
    unsafe {
        assert_eq!(
            mvnmf_deep_params_preset(MVNMF_DEEP_PRESET_DMCL, &mut dp),
            S::Ok
        )
    };
    let mut pp: mvnmf_pipeline_params = unsafe { std::mem::zeroed() };
    unsafe {
        assert_eq!(
            mvnmf_pipeline_params_preset(MVNMF_METHOD_MVSL_S, &mut pp),
            S::Ok
        )
    };
    let jp = mvnmf_jsnmf_params_default();
    let qp = mvnmf_jsnmf_query_params_default();
    let ks = [mvnmf_kernel {
        kind: MVNMF_KERNEL_RBF,
        gamma: 0.0,
    }];
    let layers = [3usize, k];
    let mut dlen = 0;
    unsafe {
        assert_eq!(
            mvnmf_deep_factor_len(m, layers.as_ptr(), 2, &mut dlen),
            S::Ok
        )
    };
    let ranks = [k + 1];

    // (name, call(view array, u, v, work, bytes) -> status); u has room for any model's factor.
    type Call<'a> =
        Box<dyn Fn(*const mvnmf_view_f32, *mut f32, *mut f32, *mut c_void, usize) -> S + 'a>;
    let calls: Vec<(&str, Call)> = vec![
        (
            "nmf_fit",
            Box::new(|x, u, v, w, b| unsafe {
                mvnmf_nmf_fit_f32(x, k, &np, u, v, w, b, None, null_mut(), null_mut())
            }),
        ),
        (
            "nmf_encode",
            Box::new(|x, u, v, w, b| unsafe {
                mvnmf_nmf_encode_f32(x, k, &np, u, v, w, b, None, null_mut(), null_mut())
            }),
        ),
        (
            "joint_nmf_fit",
            Box::new(|x, u, v, w, b| unsafe {
                mvnmf_joint_nmf_fit_f32(
                    x,
                    1,
                    k,
                    &np,
                    [u].as_ptr(),
                    v,
                    w,
                    b,
                    None,
                    null_mut(),
                    null_mut(),
                )
            }),
        ),
        (
            "joint_nmf_encode",
            Box::new(|x, u, v, w, b| unsafe {
                mvnmf_joint_nmf_encode_f32(
                    x,
                    1,
                    k,
                    &np,
                    [u.cast_const()].as_ptr(),
                    v,
                    w,
                    b,
                    None,
                    null_mut(),
                    null_mut(),
                )
            }),
        ),
        (
            "beta_nmf_fit",
            Box::new(|x, u, v, w, b| unsafe {
                mvnmf_beta_nmf_fit_f32(
                    x,
                    1,
                    k,
                    1.0,
                    -1.0,
                    null(),
                    &np,
                    [u].as_ptr(),
                    v,
                    w,
                    b,
                    None,
                    null_mut(),
                    null_mut(),
                )
            }),
        ),
        (
            "mvsl_fit",
            Box::new(|x, u, v, w, b| unsafe {
                mvnmf_mvsl_fit_f32(
                    x,
                    1,
                    &sge,
                    k,
                    &mp,
                    [u].as_ptr(),
                    v,
                    w,
                    b,
                    None,
                    null_mut(),
                    null_mut(),
                )
            }),
        ),
        (
            "mvsl_encode",
            Box::new(|x, u, v, w, b| unsafe {
                mvnmf_mvsl_encode_f32(
                    x,
                    1,
                    &none,
                    k,
                    &mp,
                    [u.cast_const()].as_ptr(),
                    v,
                    w,
                    b,
                    None,
                    null_mut(),
                    null_mut(),
                )
            }),
        ),
        (
            "deep_fit",
            Box::new(|x, u, v, w, b| unsafe {
                mvnmf_deep_fit_f32(
                    x,
                    1,
                    &sge,
                    layers.as_ptr(),
                    2,
                    &dp,
                    [u].as_ptr(),
                    v,
                    w,
                    b,
                    None,
                    null_mut(),
                    null_mut(),
                )
            }),
        ),
        (
            "deep_encode",
            Box::new(|x, u, v, w, b| unsafe {
                mvnmf_deep_encode_f32(
                    x,
                    1,
                    &none,
                    layers.as_ptr(),
                    2,
                    &dp,
                    [u.cast_const()].as_ptr(),
                    v,
                    w,
                    b,
                    None,
                    null_mut(),
                    null_mut(),
                )
            }),
        ),
        (
            "pipeline_fit",
            Box::new(|x, u, v, w, b| {
                let mut eta = [0.0];
                unsafe {
                    mvnmf_pipeline_fit_f32(
                        x,
                        1,
                        ks.as_ptr(),
                        labels.as_ptr(),
                        2,
                        k,
                        &pp,
                        [u].as_ptr(),
                        v,
                        eta.as_mut_ptr(),
                        w,
                        b,
                        None,
                        null_mut(),
                        null_mut(),
                    )
                }
            }),
        ),
        (
            "jsnmf_fit",
            Box::new(|x, u, v, w, b| unsafe {
                // W = u's first m·k floats, U_1 its next m, H = v.
                mvnmf_jsnmf_fit_f32(
                    x,
                    1,
                    k,
                    ranks.as_ptr(),
                    null(),
                    &jp,
                    u,
                    [u.add(m * k)].as_ptr(),
                    [v].as_ptr(),
                    w,
                    b,
                    None,
                    null_mut(),
                    null_mut(),
                )
            }),
        ),
        (
            "jsnmf_encode",
            Box::new(|x, u, v, w, b| unsafe {
                mvnmf_jsnmf_encode_f32(x, k, k + 1, &qp, u, u.add(m * k), v, w, b)
            }),
        ),
    ];
    let view = |x: &[f32]| dense32(x, m);
    for (name, call) in &calls {
        let gv = view(&good);
        // A workspace that is enough for every entry point here.
        let bytes = 1 << 20;
        let mut u = vec![0.5f32; dlen.max(m * (k + 1))];
        let mut v = vec![0.5f32; (k + 1) * n];
        assert_eq!(
            with_work(bytes, |w, b| call(
                &gv,
                u.as_mut_ptr(),
                v.as_mut_ptr(),
                w,
                b
            )),
            S::Ok,
            "{name}: good input"
        );
        for (what, arr, want) in [
            ("negative entry", Some(view(&bad)), S::NegativeInput),
            ("NULL views", None, S::NullPointer),
        ] {
            let (mut u, mut v) = (vec![0.5f32; u.len()], vec![0.5f32; v.len()]);
            let p = arr.as_ref().map_or(null(), |a| a as *const mvnmf_view_f32);
            let s = with_work(bytes, |w, b| call(p, u.as_mut_ptr(), v.as_mut_ptr(), w, b));
            assert_eq!(s, want, "{name}: {what}");
            assert!(
                u.iter().chain(&v).all(|&x| x == 0.5),
                "{name}: {what}: outputs written"
            );
        }
    }

    // MvSL encode in single precision: the objective of the V-steps never rises.
    let gv = view(&good);
    let u = vec![0.5f32; m * k];
    let mut v = vec![0.0f32; k * n];
    let mut trace = Vec::new();
    let mut p = mp;
    p.tol = 0.0;
    p.max_iter = 50;
    let s = with_work(1 << 20, |w, b| unsafe {
        mvnmf_mvsl_encode_f32(
            &gv,
            1,
            &none,
            k,
            &p,
            [u.as_ptr()].as_ptr(),
            v.as_mut_ptr(),
            w,
            b,
            Some(record),
            (&mut trace as *mut Vec<f64>).cast(),
            null_mut(),
        )
    });
    assert_eq!(s, S::Ok);
    assert!(
        trace.len() == 51 && trace.windows(2).all(|w| w[1] <= w[0] + 1e-5 * trace[0]),
        "mvsl_encode_f32 rose"
    );
}
