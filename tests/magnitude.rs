//! Views of far-apart magnitudes through the DESIGN §2 family (issue 31, E1):
//! every fit returns `Ok` with finite factors and an objective that never rose,
//! or its documented refusal (`InputTooLarge`) with the outputs untouched —
//! never `Ok` with NaN.
//!
//! E1 itself: `mvsl::fit` in `f32`, MvSL preset, two dense views of 20 and 15
//! features × 60 items, uniform `[0, 1)` values times `1e-4` (view 1) and `1e4`
//! (view 2), or both times `1e-30`, SGE from 30 labeled items in 3 classes,
//! K = 5, 150 iterations, tol 0, returned `Ok` with NaN in U and a NaN
//! objective: the first view's bases die (group sparsity), every step of its
//! composite-gradient U-step is then accepted with `Δ = 0`, its Lipschitz guess
//! halves every outer iteration, and after 136 iterations `1/L` (L ≈ 2e-39)
//! rounded to `inf` in `f32`; the non-finite trial passed the test `inf ≤ inf`.
//! The same for MCL, DMCL and the pipeline. In `f64` the guess stops at
//! `f64::MIN_POSITIVE`, where `1/L` is finite (measured: the `f64` cases below
//! were `Ok` and finite before the fix too, and so was E1's case in `f64` run for
//! 1300 iterations); they guard the rule in both precisions.

mod common;

use common::*;
use mvnmf::eval::UNLABELED;
use mvnmf::graph::Sge;
use mvnmf::models::deep::{self, DeepParams};
use mvnmf::models::mvsl::{self, MvslParams};
use mvnmf::models::nmf::{self, NmfParams};
use mvnmf::pipeline::{self, Method, PipelineParams};
use mvnmf::similarity::Kernel;
use mvnmf::{Dense, Error, Real, Report, View};

const N: usize = 60;
const M: [usize; 2] = [20, 15];
const K: usize = 5;
const ITERS: u32 = 150;

/// E1's views: uniform `[0, 1)` values times `s[v]`, in precision `T`.
fn views<T: Real>(s: [f64; 2]) -> [Vec<T>; 2] {
    let mut g = Lcg(1);
    let mut gen =
        |m: usize, s: f64| -> Vec<T> { (0..m * N).map(|_| T::from_f64(g.uniform() * s)).collect() };
    [gen(M[0], s[0]), gen(M[1], s[1])]
}

/// 30 labeled items in 3 classes, the rest unlabeled.
fn labels() -> Vec<u32> {
    (0..N)
        .map(|j| if j < 30 { (j % 3) as u32 } else { UNLABELED })
        .collect()
}

#[derive(Clone, Copy, Debug)]
enum Fit {
    JointNmf,
    Mvsl,
    Mcl,
    Deep,
    Pipeline(Method),
}

/// What a fit returned: its result, the objective trace, all outputs.
struct Out<T> {
    result: Result<Report, Error>,
    trace: Vec<f64>,
    outputs: Vec<T>,
}

/// One fit of E1's problem with the views times `s`, outputs filled with 7
/// before the call (so a refusal can be seen to leave them untouched).
fn fit<T: Real>(which: Fit, s: [f64; 2], iters: u32) -> Out<T> {
    let [x1, x2] = views::<T>(s);
    let vs = [
        View::from(Dense::new(&x1, M[0], N, M[0]).unwrap()),
        View::from(Dense::new(&x2, M[1], N, M[1]).unwrap()),
    ];
    let shapes: Vec<_> = vs.iter().map(|v| v.shape()).collect();
    let labels = labels();
    let sge = Sge::new(&labels, 3).unwrap();
    let layers = [8, K];
    let seven = T::from_f64(7.0);
    let ulen = |m: usize| match which {
        Fit::Deep => deep::factor_len(m, &layers).unwrap(),
        _ => m * K,
    };
    let (mut u1, mut u2, mut v) = (
        vec![seven; ulen(M[0])],
        vec![seven; ulen(M[1])],
        vec![seven; K * N],
    );
    let mut trace = Vec::new();
    let mut rec = recorder(&mut trace);
    let mon = Some(&mut rec as mvnmf::Monitor<'_>);
    let mut us = [&mut u1[..], &mut u2[..]];
    let base = |p: MvslParams| MvslParams {
        max_iter: iters,
        tol: 0.0,
        ..p
    };
    let result = match which {
        Fit::JointNmf => {
            let p = NmfParams {
                max_iter: iters,
                tol: 0.0,
                ..NmfParams::default()
            };
            let mut w =
                vec![0u8; nmf::joint_fit_workspace::<T>(shapes.iter().copied(), K, &p).unwrap()];
            nmf::joint_fit(&vs[..], K, &p, &mut us[..], &mut v, &mut w, mon)
        }
        Fit::Mvsl | Fit::Mcl => {
            let p = base(match which {
                Fit::Mvsl => MvslParams::mvsl(),
                _ => MvslParams::mcl(),
            });
            let need = mvsl::fit_workspace::<T, _>(shapes.iter().copied(), &sge, K, &p).unwrap();
            let mut w = vec![0u8; need];
            mvsl::fit(&vs[..], &sge, K, &p, &mut us[..], &mut v, &mut w, mon)
        }
        Fit::Deep => {
            let p = DeepParams {
                top: base(DeepParams::dmcl().top),
                ..DeepParams::dmcl()
            };
            let need =
                deep::fit_workspace::<T, _>(shapes.iter().copied(), &sge, &layers, &p).unwrap();
            let mut w = vec![0u8; need];
            deep::fit(&vs[..], &sge, &layers, &p, &mut us[..], &mut v, &mut w, mon)
        }
        Fit::Pipeline(method) => {
            let mut p = PipelineParams::preset(method);
            p.solver = base(p.solver);
            let ks = [Kernel::Linear, Kernel::Linear];
            let need =
                pipeline::fit_workspace::<T>(shapes.iter().copied(), &ks[..], 3, K, &p).unwrap();
            let mut w = vec![0u8; need];
            let mut eta = [0.0; 2];
            pipeline::fit(
                &vs[..],
                &ks[..],
                &labels,
                3,
                K,
                &p,
                &mut us[..],
                &mut v,
                &mut eta,
                &mut w,
                mon,
            )
        }
    };
    drop(rec);
    let outputs = u1.into_iter().chain(u2).chain(v).collect();
    Out {
        result,
        trace,
        outputs,
    }
}

/// `Ok` with finite outputs, a finite objective that never rose (beyond the
/// rounding of precision `T`: `1e-5` of the start for `f32`, `1e-10` for `f64`,
/// relative to the largest magnitude of the trace), or `InputTooLarge` with
/// the outputs untouched. Returns whether it was `Ok`.
fn check<T: Real>(which: Fit, s: [f64; 2], iters: u32) -> bool {
    let o = fit::<T>(which, s, iters);
    let what = format!("{which:?} {} s = {s:?}", core::any::type_name::<T>());
    match o.result {
        Ok(r) => {
            assert!(
                o.outputs.iter().all(|x| x.is_finite()),
                "{what}: Ok with non-finite outputs"
            );
            assert!(
                r.objective.total.is_finite() && r.initial.total.is_finite(),
                "{what}: Ok with objective {:e} (initial {:e})",
                r.objective.total,
                r.initial.total
            );
            assert_eq!(o.trace.len(), iters as usize + 1, "{what}: trace");
            let tol = if T::MAX_EXP == f32::MAX_EXP {
                1e-5
            } else {
                1e-10
            };
            let scale = o.trace.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            assert_monotone(&o.trace, tol * scale, &what);
            true
        }
        Err(e) => {
            assert_eq!(e, Error::InputTooLarge, "{what}");
            assert!(
                o.outputs.iter().all(|&x| x == T::from_f64(7.0)),
                "{what}: refused with the outputs written"
            );
            false
        }
    }
}

const FITS: [Fit; 6] = [
    Fit::JointNmf,
    Fit::Mvsl,
    Fit::Mcl,
    Fit::Deep,
    Fit::Pipeline(Method::MvslS),
    Fit::Pipeline(Method::Mcl),
];

/// E1 exactly: `f32` MvSL with views at 1e-4 and 1e4, and both at 1e-30.
#[test]
fn e1_f32_mvsl_views_far_apart_or_tiny() {
    for s in [[1e-4, 1e4], [1e-30, 1e-30]] {
        assert!(check::<f32>(Fit::Mvsl, s, ITERS), "E1 {s:?} refused");
    }
}

/// E1's variants in `f32`: every fit of the family, views far apart either way,
/// both tiny, both large (within the `f32` bound) and ordinary.
#[test]
fn f32_family_on_views_far_apart() {
    for which in FITS {
        for s in [
            [1.0, 1.0],
            [1e-4, 1e4],
            [1e4, 1e-4],
            [1e-30, 1e-30],
            [1e-20, 1e12],
            [1e12, 1e-30],
            [1e-37, 1.0],
            [1e12, 1e12],
        ] {
            check::<f32>(which, s, ITERS);
        }
    }
}

/// The same in `f64`, at magnitudes that stress `f64` as E1 stresses `f32`.
#[test]
fn f64_family_on_views_far_apart() {
    for which in FITS {
        for s in [
            [1.0, 1.0],
            [1e-4, 1e4],
            [1e-30, 1e-30],
            [1e-140, 1e140],
            [1e140, 1e-140],
            [1e-300, 1e-300],
            [1e-300, 1e100],
            [1e-307, 1.0],
            [1e140, 1e140],
        ] {
            check::<f64>(which, s, ITERS);
        }
    }
}
