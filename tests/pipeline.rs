//! The one-call pipeline (views + labels → MKL → graphs → factorization) is
//! exactly the composition of its pieces, monotone for every method on real
//! data, and validates before writing.

mod common;

use common::*;
use mvnmf::eval::UNLABELED;
use mvnmf::graph::{self, CsrGraph, CsrGraphs, CsrOut, GraphNnz, Sge};
use mvnmf::models::mvsl;
use mvnmf::pipeline::{self, Method, PipelineParams};
use mvnmf::similarity::{self, Kernel};
use mvnmf::{Dense, Error, Parallel, View};

/// (rows, column-major data) per view.
type Views = Vec<(usize, Vec<f64>)>;

/// Three views of the shipped mfeat sample (fou, zer, mor: nonnegative), 30 % labeled.
fn sample() -> (Views, Vec<u32>, usize) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/data/mfeat-sample");
    let truth: Vec<u32> = std::fs::read_to_string(format!("{dir}/labels.txt"))
        .unwrap()
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect();
    let n = truth.len();
    let views = [(1, 76), (5, 47), (6, 6)]
        .iter()
        .map(|&(f, m)| {
            let b = std::fs::read(format!("{dir}/view{f}.f64")).unwrap();
            let mut x: Vec<f64> = b
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
                .collect();
            let s = (n as f64 / x.iter().map(|a| a * a).sum::<f64>()).sqrt();
            x.iter_mut().for_each(|a| *a *= s);
            (m, x)
        })
        .collect();
    let labels = (0..n)
        .map(|j| if j % 10 < 3 { truth[j] } else { UNLABELED })
        .collect();
    (views, labels, n)
}

struct Out {
    us: Vec<Vec<f64>>,
    v: Vec<f64>,
    eta: Vec<f64>,
    obj: Vec<f64>,
}

fn run(
    vs: &[View<'_, f64>],
    ks: &[Kernel],
    labels: &[u32],
    k: usize,
    p: &PipelineParams,
) -> Result<Out, Error> {
    let n = labels.len();
    let need = pipeline::fit_workspace::<f64>(vs.iter().map(|x| x.shape()), ks, 10, k, p)?;
    let mut w = vec![0u8; need];
    let mut us: Vec<Vec<f64>> = vs.iter().map(|x| vec![0.0; x.rows() * k]).collect();
    let (mut v, mut eta) = (vec![0.0; k * n], vec![0.0; vs.len()]);
    let mut obj = Vec::new();
    let mut rec = recorder(&mut obj);
    let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
    pipeline::fit(
        vs,
        ks,
        labels,
        10,
        k,
        p,
        &mut refs[..],
        &mut v,
        &mut eta,
        &mut w,
        Some(&mut rec),
    )?;
    drop(rec);
    Ok(Out { us, v, eta, obj })
}

fn small(method: Method) -> PipelineParams {
    let mut p = PipelineParams::preset(method);
    p.solver.max_iter = 30;
    p.solver.tol = 0.0;
    p.solver.alpha /= 10.0;
    p
}

/// `p` with blocks of 32 items and two threads: the set-up's passes run in
/// parts on the pool (MKL over the 150 labeled items and TGE over all 500,
/// four parts each).
fn in_parts(mut p: PipelineParams) -> PipelineParams {
    p.mkl.block = 32;
    p.graph.block = 32;
    p.solver.parallel = Parallel::Threads(2);
    p
}

#[test]
fn every_method_is_monotone_on_real_views() {
    let (xs, labels, n) = sample();
    let vs: Vec<View<'_, f64>> = xs
        .iter()
        .map(|(m, x)| View::from(Dense::new(x, *m, n, *m).unwrap()))
        .collect();
    let ks = [Kernel::Linear, Kernel::Linear, Kernel::Linear];
    let scale: f64 = xs.iter().map(|(_, x)| half_sq(x)).sum();
    for m in [
        Method::JointNmf,
        Method::Gnmf,
        Method::MvslS,
        Method::MvslL,
        Method::MvslT,
        Method::Mcl,
    ] {
        let ps = [small(m), in_parts(small(m))];
        for (p, tag) in ps.iter().zip(["", " (set-up in parts)"]) {
            let o = run(&vs, &ks, &labels, 8, p).unwrap();
            assert_monotone(&o.obj, 1e-10 * scale, &format!("{m:?}{tag}"));
            assert!(o.v.iter().all(|&x| (0.0..=p.solver.vmax).contains(&x)));
            let e = &o.eta;
            assert!((e.iter().sum::<f64>() - 1.0).abs() < 1e-12 && e.iter().all(|&e| e >= 0.0));
        }
    }
}

#[test]
fn pipeline_is_the_composition_of_its_pieces() {
    let (xs, labels, n) = sample();
    let vs: Vec<View<'_, f64>> = xs
        .iter()
        .map(|(m, x)| View::from(Dense::new(x, *m, n, *m).unwrap()))
        .collect();
    let ks = [Kernel::Linear, Kernel::Linear, Kernel::Linear];
    let k = 6;
    // MvSL-S: the SGE operator directly.
    let p = small(Method::MvslS);
    let a = run(&vs, &ks, &labels, k, &p).unwrap();
    let sge = Sge::new(&labels, 10).unwrap();
    let mut w = vec![
        0u8;
        mvsl::fit_workspace::<f64, _>(vs.iter().map(|x| x.shape()), &sge, k, &p.solver)
            .unwrap()
    ];
    let mut us: Vec<Vec<f64>> = vs.iter().map(|x| vec![0.0; x.rows() * k]).collect();
    let mut v = vec![0.0; k * n];
    let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
    mvsl::fit(
        &vs[..],
        &sge,
        k,
        &p.solver,
        &mut refs[..],
        &mut v,
        &mut w,
        None,
    )
    .unwrap();
    assert_eq!(a.v, v);
    assert_eq!(a.us, us);

    // MvSL-T: MKL weights, the TGE builder, then the solver on the CSR graphs;
    // also with the pipeline's set-up in parts on a pool, against the public
    // (serial) MKL weights and TGE builder: the same weights and graph.
    for p in [small(Method::MvslT), in_parts(small(Method::MvslT))] {
        let a = run(&vs, &ks, &labels, k, &p).unwrap();
        let shapes: Vec<_> = vs.iter().map(|x| x.shape()).collect();
        let mut eta = vec![0.0; 3];
        let mut w = vec![
            0u8;
            similarity::mkl_weights_workspace::<f64>(
                shapes.iter().copied(),
                &ks[..],
                10,
                &p.mkl
            )
            .unwrap()
        ];
        similarity::mkl_weights(&vs[..], &ks[..], &labels, 10, &p.mkl, &mut eta, &mut w).unwrap();
        assert_eq!(a.eta, eta);
        let cap = graph::tge_capacity(n, 10, &p.graph).unwrap();
        let (mut arp, mut aci, mut aw) = (
            vec![0; n + 1],
            vec![0; cap.affinity],
            vec![0.0; cap.affinity],
        );
        let (mut prp, mut pci, mut pw) =
            (vec![0; n + 1], vec![0; cap.penalty], vec![0.0; cap.penalty]);
        let mut w = vec![
            0u8;
            graph::tge_workspace::<f64>(shapes.iter().copied(), &ks[..], 10, &p.graph)
                .unwrap()
        ];
        let nnz = graph::tge(
            &vs[..],
            &ks[..],
            &eta,
            &labels,
            10,
            &p.graph,
            CsrOut {
                row_ptr: &mut arp,
                col_idx: &mut aci,
                weights: &mut aw,
            },
            CsrOut {
                row_ptr: &mut prp,
                col_idx: &mut pci,
                weights: &mut pw,
            },
            &mut w,
        )
        .unwrap();
        let ga = CsrGraph::new(n, &arp, &aci[..nnz.affinity], &aw[..nnz.affinity]).unwrap();
        let gp = if nnz.penalty > 0 {
            Some(CsrGraph::new(n, &prp, &pci[..nnz.penalty], &pw[..nnz.penalty]).unwrap())
        } else {
            None
        };
        let gs = CsrGraphs::new(n, Some(ga), gp).unwrap();
        let mut w = vec![
            0u8;
            mvsl::fit_workspace::<f64, _>(shapes.iter().copied(), &gs, k, &p.solver)
                .unwrap()
        ];
        let mut us: Vec<Vec<f64>> = vs.iter().map(|x| vec![0.0; x.rows() * k]).collect();
        let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
        mvsl::fit(
            &vs[..],
            &gs,
            k,
            &p.solver,
            &mut refs[..],
            &mut v,
            &mut w,
            None,
        )
        .unwrap();
        assert_eq!(a.v, v);
        assert_eq!(a.us, us);
    }
}

/// The entries of the graphs `p`'s builder gives under the fusion weights `eta`
/// (none for the methods without a neighbour graph).
fn builder_nnz(
    vs: &[View<'_, f64>],
    ks: &[Kernel],
    eta: &[f64],
    labels: &[u32],
    p: &PipelineParams,
) -> GraphNnz {
    let n = labels.len();
    let shapes = || vs.iter().map(|x| x.shape());
    let tge = match p.method {
        Method::MvslT => true,
        Method::Gnmf | Method::MvslL => false,
        _ => return GraphNnz::default(),
    };
    let (cap, bytes) = if tge {
        (
            graph::tge_capacity(n, 10, &p.graph).unwrap(),
            graph::tge_workspace::<f64>(shapes(), ks, 10, &p.graph).unwrap(),
        )
    } else {
        (
            graph::ldge_capacity(n, 10, &p.graph).unwrap(),
            graph::ldge_workspace::<f64>(shapes(), ks, 10, &p.graph).unwrap(),
        )
    };
    let (mut arp, mut aci, mut aw) = (
        vec![0; n + 1],
        vec![0; cap.affinity],
        vec![0.0; cap.affinity],
    );
    let (mut prp, mut pci, mut pw) = (vec![0; n + 1], vec![0; cap.penalty], vec![0.0; cap.penalty]);
    let a = CsrOut {
        row_ptr: &mut arp,
        col_idx: &mut aci,
        weights: &mut aw,
    };
    let q = CsrOut {
        row_ptr: &mut prp,
        col_idx: &mut pci,
        weights: &mut pw,
    };
    let mut w = vec![0u8; bytes];
    if tge {
        graph::tge(vs, ks, eta, labels, 10, &p.graph, a, q, &mut w).unwrap()
    } else {
        graph::ldge(vs, ks, eta, labels, 10, &p.graph, a, q, &mut w).unwrap()
    }
}

#[test]
fn fit_report_is_fit_with_the_graph_sizes() {
    let (xs, labels, n) = sample();
    let vs: Vec<View<'_, f64>> = xs
        .iter()
        .map(|(m, x)| View::from(Dense::new(x, *m, n, *m).unwrap()))
        .collect();
    let ks = [Kernel::Linear, Kernel::Linear, Kernel::Linear];
    let k = 5;
    for m in [
        Method::JointNmf,
        Method::Gnmf,
        Method::MvslS,
        Method::MvslL,
        Method::MvslT,
        Method::Mcl,
    ] {
        let p = small(m);
        let want = run(&vs, &ks, &labels, k, &p).unwrap();
        let need = pipeline::fit_workspace::<f64>(vs.iter().map(|x| x.shape()), &ks[..], 10, k, &p)
            .unwrap();
        let mut w = vec![0u8; need];
        let mut us: Vec<Vec<f64>> = vs.iter().map(|x| vec![0.0; x.rows() * k]).collect();
        let (mut v, mut eta) = (vec![0.0; k * n], vec![0.0; 3]);
        let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
        let r = pipeline::fit_report(
            &vs[..],
            &ks[..],
            &labels,
            10,
            k,
            &p,
            &mut refs[..],
            &mut v,
            &mut eta,
            &mut w,
            None,
        )
        .unwrap();
        assert_eq!((&us, &v, &eta), (&want.us, &want.v, &want.eta), "{m:?}");
        assert_eq!(r.fit.iterations, p.solver.max_iter);
        assert_eq!(r.fit.objective.total, *want.obj.last().unwrap());
        let nnz = builder_nnz(&vs, &ks, &eta, &labels, &p);
        assert_eq!(r.graph, nnz, "{m:?}");
        let graph = matches!(m, Method::Gnmf | Method::MvslL | Method::MvslT);
        assert_eq!(r.graph.affinity > 0, graph, "{m:?}");
        assert_eq!(r.graph.penalty > 0, graph && m != Method::Gnmf, "{m:?}");
    }
}

#[test]
fn bad_input_is_refused_before_anything_is_written() {
    let (xs, mut labels, n) = sample();
    let vs: Vec<View<'_, f64>> = xs
        .iter()
        .map(|(m, x)| View::from(Dense::new(x, *m, n, *m).unwrap()))
        .collect();
    let ks = [Kernel::Linear, Kernel::Linear, Kernel::Linear];
    let k = 4;
    let p = small(Method::MvslT);
    let need =
        pipeline::fit_workspace::<f64>(vs.iter().map(|x| x.shape()), &ks[..], 10, k, &p).unwrap();
    let attempt = |labels: &[u32], p: &PipelineParams, wlen: usize| {
        let mut w = vec![0u8; wlen];
        let mut us: Vec<Vec<f64>> = vs.iter().map(|x| vec![7.0; x.rows() * k]).collect();
        let (mut v, mut eta) = (vec![7.0; k * n], vec![7.0; 3]);
        let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
        let r = pipeline::fit(
            &vs[..],
            &ks[..],
            labels,
            10,
            k,
            p,
            &mut refs[..],
            &mut v,
            &mut eta,
            &mut w,
            None,
        );
        assert!(
            us.iter().flatten().chain(&v).chain(&eta).all(|&x| x == 7.0),
            "outputs touched: {r:?}"
        );
        r.err()
    };
    assert_eq!(
        attempt(&labels, &p, need - 1),
        Some(Error::WorkspaceTooSmall)
    );
    // The set-up in parts: its larger workspace is counted before anything runs.
    let q = in_parts(p);
    let need_q =
        pipeline::fit_workspace::<f64>(vs.iter().map(|x| x.shape()), &ks[..], 10, k, &q).unwrap();
    assert_eq!(
        attempt(&labels, &q, need_q - 1),
        Some(Error::WorkspaceTooSmall)
    );
    let mut inf = p;
    inf.solver.vmax = f64::INFINITY;
    assert_eq!(attempt(&labels, &inf, need), Some(Error::BadParameter));
    // A class with too few labeled items for `ka` (found by the graph builder, which runs
    // after MKL): refused before `η` is written, learned or uniform, LDGE or TGE.
    let mut few = labels.clone();
    let mut kept = 0;
    for l in few.iter_mut().filter(|l| **l == 3) {
        kept += 1;
        if kept > 2 {
            *l = UNLABELED;
        }
    }
    for method in [Method::MvslL, Method::MvslT, Method::Gnmf] {
        for learn_eta in [false, true] {
            let mut q = small(method);
            q.learn_eta = learn_eta;
            q.graph.ka = 2;
            let need =
                pipeline::fit_workspace::<f64>(vs.iter().map(|x| x.shape()), &ks[..], 10, k, &q)
                    .unwrap();
            assert_eq!(
                attempt(&few, &q, need),
                Some(Error::TooFewLabeled),
                "{method:?}"
            );
        }
    }
    labels[0] = 10;
    assert_eq!(attempt(&labels, &p, need), Some(Error::BadLabel));
    assert_eq!(attempt(&labels, &q, need_q), Some(Error::BadLabel));
}

#[test]
fn c_abi_gives_the_rust_result() {
    use mvnmf::ffi::*;
    let (xs, labels, n) = sample();
    let vs: Vec<View<'_, f64>> = xs
        .iter()
        .map(|(m, x)| View::from(Dense::new(x, *m, n, *m).unwrap()))
        .collect();
    let ks = [Kernel::Linear, Kernel::Linear, Kernel::Linear];
    let k = 5;
    let p = small(Method::MvslT);
    let want = run(&vs, &ks, &labels, k, &p).unwrap();

    let cviews: Vec<mvnmf_view> = xs
        .iter()
        .map(|(m, x)| mvnmf_view {
            kind: MVNMF_VIEW_DENSE,
            rows: *m,
            cols: n,
            values: x.as_ptr(),
            col_stride: *m,
            col_ptr: std::ptr::null(),
            row_idx: std::ptr::null(),
        })
        .collect();
    let ck = [mvnmf_kernel {
        kind: MVNMF_KERNEL_LINEAR,
        gamma: 0.0,
    }; 3];
    // SAFETY (whole block): every pointer refers to a live buffer of the documented size.
    unsafe {
        let mut cp = std::mem::zeroed::<mvnmf_pipeline_params>();
        assert_eq!(
            mvnmf_pipeline_params_preset(MVNMF_METHOD_MVSL_T, &mut cp),
            mvnmf_status::Ok
        );
        assert_eq!(
            mvnmf_pipeline_params_preset(99, &mut cp),
            mvnmf_status::BadParameter
        );
        cp.solver.max_iter = p.solver.max_iter;
        cp.solver.tol = 0.0;
        cp.solver.alpha = p.solver.alpha;
        let mut bytes = 0usize;
        assert_eq!(
            mvnmf_pipeline_fit_workspace(cviews.as_ptr(), 3, ck.as_ptr(), 10, k, &cp, &mut bytes),
            mvnmf_status::Ok
        );
        let mut w = vec![0u8; bytes];
        let mut us: Vec<Vec<f64>> = xs.iter().map(|(m, _)| vec![0.0; m * k]).collect();
        let ptrs: Vec<*mut f64> = us.iter_mut().map(|u| u.as_mut_ptr()).collect();
        let (mut v, mut eta) = (vec![0.0; k * n], vec![0.0; 3]);
        let mut rep = std::mem::zeroed::<mvnmf_report>();
        let st = mvnmf_pipeline_fit(
            cviews.as_ptr(),
            3,
            ck.as_ptr(),
            labels.as_ptr(),
            10,
            k,
            &cp,
            ptrs.as_ptr(),
            v.as_mut_ptr(),
            eta.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            bytes,
            None,
            std::ptr::null_mut(),
            &mut rep,
        );
        assert_eq!(st, mvnmf_status::Ok);
        assert_eq!(v, want.v);
        assert_eq!(eta, want.eta);
        assert_eq!(rep.iterations, p.solver.max_iter);

        // mvnmf_pipeline_fit_report: the same outputs, and the graphs' sizes.
        let mut full = std::mem::zeroed::<mvnmf_pipeline_report>();
        let (mut v2, mut eta2) = (vec![0.0; k * n], vec![0.0; 3]);
        let st = mvnmf_pipeline_fit_report(
            cviews.as_ptr(),
            3,
            ck.as_ptr(),
            labels.as_ptr(),
            10,
            k,
            &cp,
            ptrs.as_ptr(),
            v2.as_mut_ptr(),
            eta2.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            bytes,
            None,
            std::ptr::null_mut(),
            &mut full,
        );
        assert_eq!(st, mvnmf_status::Ok);
        assert_eq!((v2, eta2), (want.v, want.eta.clone()));
        assert_eq!(full.fit.iterations, rep.iterations);
        assert_eq!(full.fit.objective.total, rep.objective.total);
        let nnz = builder_nnz(&vs, &ks, &want.eta, &labels, &p);
        assert_eq!(
            (full.affinity_nnz, full.penalty_nnz),
            (nnz.affinity, nnz.penalty)
        );
        assert!(nnz.affinity > 0 && nnz.penalty > 0);

        // A host pool in `ann.parallel` (the approximate graph): it is called, with
        // its own `ctx`, on the caller's struct (read in place, not a copy gone by
        // the time the search runs), and the outputs are the serial ones. The
        // sample five times over (2 500 items): NN-descent hands out tasks from
        // 2 048 items on.
        unsafe extern "C" fn host(
            n_tasks: usize,
            task: mvnmf_task_fn,
            task_ctx: *mut std::ffi::c_void,
            ctx: *mut std::ffi::c_void,
        ) {
            *(ctx as *mut usize) += 1;
            let task = task.unwrap();
            (0..n_tasks).for_each(|i| task(task_ctx, i));
        }
        let n5 = 5 * n;
        let x5: Vec<Vec<f64>> = xs.iter().map(|(_, x)| x.repeat(5)).collect();
        let labels5 = labels.repeat(5);
        let views5: Vec<mvnmf_view> = cviews
            .iter()
            .zip(&x5)
            .map(|(c, x)| mvnmf_view {
                cols: n5,
                values: x.as_ptr(),
                ..*c
            })
            .collect();
        cp.graph_build = MVNMF_GRAPH_BUILD_APPROX;
        let fit = |cp: &mvnmf_pipeline_params| {
            let (vp5, kp) = (views5.as_ptr(), ck.as_ptr());
            let mut bytes = 0usize;
            let q = mvnmf_pipeline_fit_workspace(vp5, 3, kp, 10, k, cp, &mut bytes);
            assert_eq!(q, mvnmf_status::Ok);
            let mut w = vec![0u8; bytes];
            let mut us: Vec<Vec<f64>> = xs.iter().map(|(m, _)| vec![0.0; m * k]).collect();
            let ptrs: Vec<*mut f64> = us.iter_mut().map(|u| u.as_mut_ptr()).collect();
            let (mut v, mut eta) = (vec![0.0; k * n5], vec![0.0; 3]);
            let mut rep = std::mem::zeroed::<mvnmf_report>();
            let (l, wp) = (labels5.as_ptr(), w.as_mut_ptr().cast());
            let (vp, ep, nul) = (v.as_mut_ptr(), eta.as_mut_ptr(), std::ptr::null_mut());
            let st = mvnmf_pipeline_fit(
                vp5,
                3,
                kp,
                l,
                10,
                k,
                cp,
                ptrs.as_ptr(),
                vp,
                ep,
                wp,
                bytes,
                None,
                nul,
                &mut rep,
            );
            (st, v, eta)
        };
        let serial = fit(&cp);
        assert_eq!(serial.0, mvnmf_status::Ok);
        let mut calls = 0usize;
        cp.ann.parallel = mvnmf_parallel {
            threads: 2,
            reserved: 0,
            parallel_for: Some(host),
            ctx: (&mut calls as *mut usize).cast(),
        };
        let hosted = fit(&cp);
        assert_eq!(hosted.0, mvnmf_status::Ok);
        assert!(calls > 0, "the host pool was not called");
        assert_eq!(hosted, serial);
    }
}

/// The monitor hears of every phase (issue 30, item 5): with a graph, the set-up
/// (fusion weights) and the graph, each at fraction 0 and 1 (the approximate graph also
/// after each NN-descent tree and iteration), with no iterate, before the
/// iterations (`fraction = iter / max_iter`); a method without a graph reports only its
/// iterations. Stopped at any set-up report, the run is `Ok` with `Stop::Cancelled`, no
/// iteration, and `u`, `v`, `eta` untouched; not stopped, the result is bitwise the run
/// without a monitor.
#[test]
fn every_phase_is_reported_and_the_set_up_cancels_cleanly() {
    use mvnmf::graph::GraphBuild;
    use mvnmf::{Phase, Progress, Stop};
    use std::ops::ControlFlow;
    let (xs, labels, n) = sample();
    let vs: Vec<View<'_, f64>> = xs
        .iter()
        .map(|(m, x)| View::from(Dense::new(x, *m, n, *m).unwrap()))
        .collect();
    let ks = [Kernel::Linear; 3];
    let k = 6;
    let fit = |p: &PipelineParams,
               b: &GraphBuild,
               stop_at: Option<usize>,
               seen: &mut Vec<(Phase, u32, f64, f64)>| {
        let shapes = vs.iter().map(|x| x.shape());
        let need = pipeline::fit_graph_workspace::<f64>(shapes, &ks[..], 10, k, p, b).unwrap();
        let mut us: Vec<Vec<f64>> = vs.iter().map(|x| vec![7.0; x.rows() * k]).collect();
        let (mut v, mut eta) = (vec![7.0; k * n], vec![7.0; 3]);
        let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
        let mut mon = |pr: &Progress| {
            seen.push((pr.phase, pr.iter, pr.fraction, pr.objective.total));
            if stop_at == Some(seen.len()) {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let r = pipeline::fit_graph(
            &vs[..],
            &ks[..],
            (&labels, 10, k),
            p,
            b,
            (&mut refs[..], &mut v, &mut eta),
            &mut vec![0u8; need],
            Some(&mut mon),
        )
        .unwrap();
        (r, us, v, eta)
    };
    let mut p = small(Method::MvslT);
    p.solver.max_iter = 8;
    for b in [GraphBuild::Exact, GraphBuild::Approx(Default::default())] {
        let mut seen = Vec::new();
        let (r, us, v, eta) = fit(&p, &b, None, &mut seen);
        // The set-up: Setup 0 and 1, Graph 0, (approximate graph: after each NN-descent
        // tree and iteration, fractions rising inside (0, 1)), Graph 1.
        let ns = seen.len() - 9;
        let exact = matches!(b, GraphBuild::Exact);
        if exact {
            assert_eq!(ns, 4, "{b:?}");
        } else {
            assert!(ns > 4, "{b:?}: no progress inside NN-descent");
        }
        for (i, s) in seen[..ns].iter().enumerate() {
            let want = match i {
                0 | 1 => (Phase::Setup, i as f64),
                2 => (Phase::Graph, 0.0),
                _ if i == ns - 1 => (Phase::Graph, 1.0),
                _ => {
                    assert!(s.2 >= seen[i - 1].2, "{b:?}: fraction fell at {i}");
                    assert!(s.2 > 0.0 && s.2 < 1.0, "{b:?}: fraction {}", s.2);
                    (Phase::Graph, s.2)
                }
            };
            assert_eq!(*s, (want.0, 0, want.1, 0.0), "{b:?}: set-up report {i}");
        }
        for (t, s) in seen[ns..].iter().enumerate() {
            assert_eq!(
                (s.0, s.1, s.2),
                (Phase::Iterations, t as u32, t as f64 / 8.0)
            );
            assert!(
                t == 0 || s.3 <= seen[ns + t - 1].3 * (1.0 + 1e-12),
                "{b:?}: rose at {t}"
            );
        }
        assert_eq!(r.fit.stop, Stop::MaxIter);
        // Bitwise the run without a monitor.
        let shapes = vs.iter().map(|x| x.shape());
        let need = pipeline::fit_graph_workspace::<f64>(shapes, &ks[..], 10, k, &p, &b).unwrap();
        let mut us2: Vec<Vec<f64>> = vs.iter().map(|x| vec![0.0; x.rows() * k]).collect();
        let (mut v2, mut eta2) = (vec![0.0; k * n], vec![0.0; 3]);
        let mut refs: Vec<&mut [f64]> = us2.iter_mut().map(|u| &mut u[..]).collect();
        let r2 = pipeline::fit_graph(
            &vs[..],
            &ks[..],
            (&labels, 10, k),
            &p,
            &b,
            (&mut refs[..], &mut v2, &mut eta2),
            &mut vec![0u8; need],
            None,
        )
        .unwrap();
        assert_eq!((r, us, v, eta), (r2, us2, v2, eta2), "{b:?}");
        // Stopped at each set-up report (inside NN-descent too).
        for stop in 1..=ns {
            let mut seen = Vec::new();
            let (r, us, v, eta) = fit(&p, &b, Some(stop), &mut seen);
            assert_eq!(seen.len(), stop, "{b:?}: stopped at {stop}");
            assert_eq!((r.fit.stop, r.fit.iterations), (Stop::Cancelled, 0));
            assert_eq!(r.fit.objective.total, 0.0);
            assert_eq!(
                r.graph.affinity > 0,
                stop == ns,
                "{b:?}: graph sizes at {stop}"
            );
            assert!(us.iter().flatten().chain(&v).chain(&eta).all(|&x| x == 7.0));
        }
    }
    // Without a graph: the iterations only.
    let mut seen = Vec::new();
    let mut p = small(Method::MvslS);
    p.solver.max_iter = 3;
    fit(&p, &GraphBuild::Exact, None, &mut seen);
    assert_eq!(seen.len(), 4);
    assert!(seen.iter().all(|s| s.0 == Phase::Iterations));
}
