//! The solvers at extreme magnitudes through the C ABI: NMF, joint NMF, MvSL, deep fits, the
//! pipeline and the encodes on data near the representable bounds, on views far apart and with
//! huge weights — solved (finite, never rising, scaled data giving scaled factors) or refused up
//! front with the outputs untouched. Found by the adversarial run of issue 15; the C harness
//! (`ffi-tests/c/harness_regress.c`) has the same cases in C.

mod common;

use std::ptr::null_mut;

use common::capi::*;
use mvnmf::ffi::*;

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
    if p.phase != mvnmf::ffi::MVNMF_PHASE_ITERATIONS {
        return 0; // the pipeline's set-up phases: no iterate
    }
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
