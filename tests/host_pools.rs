//! A host pool (`mvnmf_parallel` with a `parallel_for` callback) keeps the ADDRESS of the
//! struct it was read from (`types.rs`: the pool's `ctx` is read back at every region),
//! so every entry point must read it from the caller's struct in place, never from a copy
//! (9f454d2: `mvnmf_pipeline_fit` read `ann.parallel` from a local copy). The entry
//! points whose options carry a pool and that no other test runs with one: the
//! NN-descent options of `mvnmf_tge_build` and `mvnmf_fused_knn_graph_build`
//! (`ann->parallel`), `mvnmf_fused_knn` (`params->parallel`) and `mvnmf_deep_fit`
//! (`params->top.parallel`; the C harness covers joint NMF and MvSL, tests/pipeline the
//! pipeline). Each is called with a host pool whose `ctx` is a struct with a magic word:
//! the pool must be called (where the work splits), always with its own `ctx`, and give
//! the serial outputs.

use std::ffi::c_void;
use std::ptr::{null, null_mut};

use mvnmf::ffi::*;

mod common;
use common::capi::{dense, no_graph, uniform};

type S = mvnmf_status;

const MAGIC: u64 = 0x00C0_FFEE_5EED_0023;

/// What the host pool's `ctx` points at.
#[repr(C)]
struct Pool {
    magic: u64,
    calls: usize,
}

/// Runs the tasks in reverse order on the caller's thread, after checking its `ctx`.
unsafe extern "C" fn host(
    n_tasks: usize,
    task: mvnmf_task_fn,
    task_ctx: *mut c_void,
    ctx: *mut c_void,
) {
    let p = &mut *(ctx as *mut Pool);
    assert_eq!(
        p.magic, MAGIC,
        "the host pool was called with a ctx not its own"
    );
    p.calls += 1;
    let t = task.expect("a task function");
    (0..n_tasks).rev().for_each(|i| t(task_ctx, i));
}

fn hosted(pool: &mut Pool) -> mvnmf_parallel {
    mvnmf_parallel {
        threads: 2,
        reserved: 0,
        parallel_for: Some(host),
        ctx: (pool as *mut Pool).cast(),
    }
}

/// Two dense views of `n` items (5 and 4 features), one item in five labeled (2 classes).
struct Data {
    x: [Vec<f64>; 2],
    labels: Vec<u32>,
    n: usize,
}

impl Data {
    fn new(n: usize) -> Data {
        Data {
            x: [uniform(5 * n, 21), uniform(4 * n, 22)],
            labels: (0..n as u32)
                .map(|i| if i % 5 == 0 { i % 2 } else { MVNMF_UNLABELED })
                .collect(),
            n,
        }
    }
    fn views(&self) -> [mvnmf_view; 2] {
        [dense(&self.x[0], 5, self.n), dense(&self.x[1], 4, self.n)]
    }
}

/// One CSR graph's buffers.
struct Csr {
    row_ptr: Vec<usize>,
    col_idx: Vec<usize>,
    weights: Vec<f64>,
}

impl Csr {
    fn new(n: usize, cap: usize) -> Csr {
        Csr {
            row_ptr: vec![0; n + 1],
            col_idx: vec![0; cap],
            weights: vec![0.0; cap],
        }
    }
    fn buffers(&mut self) -> mvnmf_csr_buffers {
        mvnmf_csr_buffers {
            row_ptr: self.row_ptr.as_mut_ptr(),
            col_idx: self.col_idx.as_mut_ptr(),
            weights: self.weights.as_mut_ptr(),
            capacity: self.col_idx.len(),
        }
    }
    /// The graph written (`nnz` entries).
    fn graph(&self, nnz: usize) -> (Vec<usize>, Vec<usize>, Vec<u64>) {
        let w = self.weights[..nnz].iter().map(|x| x.to_bits()).collect();
        (self.row_ptr.clone(), self.col_idx[..nnz].to_vec(), w)
    }
}

type Graph = (Vec<usize>, Vec<usize>, Vec<u64>);

/// `mvnmf_tge_build` with NN-descent (`MVNMF_GRAPH_BUILD_APPROX`) and these options.
fn tge_build(d: &Data, ann: &mvnmf_ann_params) -> (S, Graph, Graph) {
    let (views, n) = (d.views(), d.n);
    let kernels = [mvnmf_kernel {
        kind: MVNMF_KERNEL_RBF,
        gamma: 0.0,
    }; 2];
    let eta = [0.5, 0.5];
    let approx = MVNMF_GRAPH_BUILD_APPROX;
    unsafe {
        let (mut ac, mut pc, mut bytes) = (0, 0, 0);
        assert_eq!(mvnmf_tge_capacity(n, 2, null(), &mut ac, &mut pc), S::Ok);
        let (vp, kp) = (views.as_ptr(), kernels.as_ptr());
        let q = mvnmf_tge_build_workspace(vp, 2, kp, 2, null(), approx, ann, &mut bytes);
        assert_eq!(q, S::Ok);
        let mut w = vec![0u8; bytes];
        let (mut a, mut p) = (Csr::new(n, ac), Csr::new(n, pc));
        let (ab, pb) = (a.buffers(), p.buffers());
        let (mut an, mut pn) = (0, 0);
        let (ep, lp, wp) = (eta.as_ptr(), d.labels.as_ptr(), w.as_mut_ptr().cast());
        let st = mvnmf_tge_build(
            vp,
            2,
            kp,
            ep,
            lp,
            2,
            null(),
            approx,
            ann,
            &ab,
            &pb,
            &mut an,
            &mut pn,
            wp,
            bytes,
        );
        (st, a.graph(an), p.graph(pn))
    }
}

/// `mvnmf_fused_knn_graph_build` (5 neighbours) with NN-descent and these options.
fn knn_graph_build(d: &Data, ann: &mvnmf_ann_params) -> (S, Graph) {
    let (views, n, s) = (d.views(), d.n, 5);
    let approx = MVNMF_GRAPH_BUILD_APPROX;
    unsafe {
        let (mut cap, mut bytes) = (0, 0);
        assert_eq!(mvnmf_fused_knn_graph_capacity(n, s, &mut cap), S::Ok);
        let vp = views.as_ptr();
        let q = mvnmf_fused_knn_graph_build_workspace(
            vp,
            2,
            s,
            null(),
            null(),
            approx,
            ann,
            &mut bytes,
        );
        assert_eq!(q, S::Ok);
        let mut w = vec![0u8; bytes];
        let mut o = Csr::new(n, cap);
        let ob = o.buffers();
        let mut nnz = 0;
        let wp = w.as_mut_ptr().cast();
        let st = mvnmf_fused_knn_graph_build(
            vp,
            2,
            s,
            null(),
            null(),
            approx,
            ann,
            &ob,
            &mut nnz,
            wp,
            bytes,
        );
        (st, o.graph(nnz))
    }
}

/// `mvnmf_fused_knn` (scope all) with these options: neighbours and similarities.
fn fused_knn(d: &Data, p: &mvnmf_fused_knn_params) -> (S, Vec<usize>, Vec<u64>) {
    let (views, n) = (d.views(), d.n);
    let kernels = [mvnmf_kernel {
        kind: MVNMF_KERNEL_RBF,
        gamma: 0.0,
    }; 2];
    let eta = [0.5, 0.5];
    unsafe {
        let (vp, kp, mut bytes) = (views.as_ptr(), kernels.as_ptr(), 0);
        assert_eq!(
            mvnmf_fused_knn_workspace(vp, 2, kp, 2, p, &mut bytes),
            S::Ok
        );
        let mut w = vec![0u8; bytes];
        let (mut nb, mut sims) = (vec![0usize; n * p.k], vec![0.0; n * p.k]);
        let (ep, lp, wp) = (eta.as_ptr(), d.labels.as_ptr(), w.as_mut_ptr().cast());
        let (np, sp, nul) = (nb.as_mut_ptr(), sims.as_mut_ptr(), null());
        let st = mvnmf_fused_knn(vp, 2, kp, ep, lp, 2, p, nul, nul, np, sp, wp, bytes);
        (st, nb, sims.iter().map(|x| x.to_bits()).collect())
    }
}

/// `mvnmf_deep_fit` (layers 20, 10; no graph) on two views of 400 items with 300 and 200
/// features: the factors and the encoding.
fn deep_fit(p: &mvnmf_deep_params) -> (S, Vec<Vec<u64>>, Vec<u64>) {
    let (n, rows, layers) = (400usize, [300usize, 200], [20usize, 10]);
    let x = [uniform(rows[0] * n, 31), uniform(rows[1] * n, 32)];
    let views = [dense(&x[0], rows[0], n), dense(&x[1], rows[1], n)];
    let g = no_graph(n);
    unsafe {
        let (vp, lp, mut bytes) = (views.as_ptr(), layers.as_ptr(), 0);
        assert_eq!(
            mvnmf_deep_fit_workspace(vp, 2, &g, lp, 2, p, &mut bytes),
            S::Ok
        );
        let mut w = vec![0u8; bytes];
        let mut us: Vec<Vec<f64>> = rows
            .iter()
            .map(|&r| {
                let mut len = 0;
                assert_eq!(mvnmf_deep_factor_len(r, lp, 2, &mut len), S::Ok);
                vec![0.0; len]
            })
            .collect();
        let ptrs: Vec<*mut f64> = us.iter_mut().map(|u| u.as_mut_ptr()).collect();
        let mut v = vec![0.0; layers[1] * n];
        let mut rep = std::mem::zeroed::<mvnmf_report>();
        let (up, vvp, wp) = (ptrs.as_ptr(), v.as_mut_ptr(), w.as_mut_ptr().cast());
        let st = mvnmf_deep_fit(
            vp,
            2,
            &g,
            lp,
            2,
            p,
            up,
            vvp,
            wp,
            bytes,
            None,
            null_mut(),
            &mut rep,
        );
        let bits = |xs: &[f64]| xs.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
        (st, us.iter().map(|u| bits(u)).collect(), bits(&v))
    }
}

/// `run` given a host pool (whose `ctx` every call checks) calls it and gives
/// `serial`, the outputs with the default serial runner, bit for bit.
fn same_with_pool<R: PartialEq>(name: &str, serial: &R, run: impl FnOnce(mvnmf_parallel) -> R) {
    let mut pool = Pool {
        magic: MAGIC,
        calls: 0,
    };
    let hosted_out = run(hosted(&mut pool));
    assert!(pool.calls > 0, "{name}: the host pool was not called");
    assert!(
        hosted_out == *serial,
        "{name}: the host pool changed the outputs"
    );
}

#[test]
fn nn_descent_pools_are_read_in_place() {
    // 2 600 items: NN-descent hands out tasks from 2 048 items on.
    let d = Data::new(2600);
    let mut ann = mvnmf_ann_params_default();
    let serial = tge_build(&d, &ann);
    assert_eq!(serial.0, S::Ok);
    same_with_pool("mvnmf_tge_build", &serial, |par| {
        ann.parallel = par;
        tge_build(&d, &ann)
    });
    let serial = knn_graph_build(&d, &mvnmf_ann_params_default());
    assert_eq!(serial.0, S::Ok);
    same_with_pool("mvnmf_fused_knn_graph_build", &serial, |par| {
        ann.parallel = par;
        knn_graph_build(&d, &ann)
    });
}

#[test]
fn fused_knn_and_deep_pools_are_read_in_place() {
    let d = Data::new(2600);
    let mut p = mvnmf_fused_knn_params_default();
    let serial = fused_knn(&d, &p);
    assert_eq!(serial.0, S::Ok);
    same_with_pool("mvnmf_fused_knn", &serial, |par| {
        p.parallel = par;
        fused_knn(&d, &p)
    });
    let mut p = mvnmf_deep_params_default();
    p.top.max_iter = 3;
    let serial = deep_fit(&p);
    assert_eq!(serial.0, S::Ok);
    same_with_pool("mvnmf_deep_fit", &serial, |par| {
        p.top.parallel = par;
        deep_fit(&p)
    });
}
