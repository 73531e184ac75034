//! The C ABI's graph, similarity, kernel, pipeline and evaluation entry
//! points, each called through `mvnmf::ffi` with opaque arguments. Exit codes
//! 200..=299.
//!
//! Every entry point of `src/ffi/graph.rs` (35), `src/ffi/eval.rs` (34) and
//! `src/ffi/pipeline.rs` (7) is called at least once. Every argument
//! (pointers, sizes, `k`, option structs, kernels, labels, masks, CSC arrays,
//! the callbacks and the `mvnmf_parallel` host pool) passes through
//! [`black_box`], so what the link proves holds for any argument values: the
//! kinds, scopes, penalties, methods and norms the run uses are only the ones
//! checked at run time, not the only ones the proof covers.
//!
//! The data: 18 items of 3 classes (`j % 3`), a dense view of 12 features and
//! a sparse one of 9 (CSC, and a dense copy for the dense-only routines), the
//! class showing in every third feature; 12 items labeled. The checks: status
//! OK, finite outputs, values in range (weights on the simplex, scores in
//! [0, 1], indices in range), the pipeline's objectives fell, and the
//! separable data classified and clustered without error.

use core::ffi::{c_int, c_void};
use core::hint::black_box as bb;
use core::ptr::{addr_of_mut, null, null_mut};

use mvnmf::ffi::*;

/// Items, classes, features of the two views, rank, views.
const N: usize = 18;
const C: usize = 3;
const M0: usize = 12;
const M1: usize = 9;
const K: usize = 3;
const H: usize = 2;
/// Labeled items (the first `NL`; 4 per class).
const NL: usize = 12;
/// Anchors, anchor neighbours, kNN-graph neighbours.
const NA: usize = 4;
const SA: usize = 2;
const SK: usize = 3;
/// Entries of an `N`-item graph without self-loops (always a large enough capacity).
const CAP: usize = N * (N - 1);

// 2 MiB: mvnmf_tge_build with NN-descent asks for 1.7 MB even at 18 items (measured).
static mut WORK: [u8; 1 << 21] = [0; 1 << 21];

/// A failed check: its exit code.
type R<T = ()> = Result<T, i32>;

fn check(ok: bool, code: i32) -> R {
    if ok {
        Ok(())
    } else {
        Err(code)
    }
}

fn ok(s: mvnmf_status, code: i32) -> R {
    check(s == mvnmf_status::Ok, code)
}

fn finite(x: &[f64]) -> bool {
    x.iter().all(|v| v.is_finite())
}

fn unit(x: f64) -> bool {
    (0.0..=1.0).contains(&x)
}

/// The workspace query's answer, and the workspace (pointer, bytes) it asks for.
fn work(query: impl FnOnce(*mut usize) -> mvnmf_status, code: i32) -> R<(*mut c_void, usize)> {
    let mut bytes = 0usize;
    ok(query(bb(&mut bytes as *mut usize)), code)?;
    // SAFETY: single-threaded program; each call takes the buffer in turn
    // and no reference to it outlives this function.
    let len = unsafe { (*addr_of_mut!(WORK)).len() };
    check(bytes <= len, code)?;
    // Only a raw pointer leaves.
    let p = addr_of_mut!(WORK).cast::<c_void>();
    Ok((bb(p), bb(bytes)))
}

/// The progress callback: checks the objective, never stops the solver.
unsafe extern "C" fn progress(p: *const mvnmf_progress, user: *mut c_void) -> c_int {
    if p.is_null() {
        return 1;
    }
    // SAFETY: the library passes a valid progress record for this call.
    let total = unsafe { (*p).objective.total };
    if !user.is_null() {
        // SAFETY: `user` is the `u32` counter the caller passed, alive for the call.
        unsafe { *user.cast::<u32>() += 1 };
    }
    c_int::from(!total.is_finite())
}

fn host() -> mvnmf_parallel {
    bb(mvnmf_parallel {
        threads: 1,
        reserved: 0,
        parallel_for: bb(Some(crate::serial_for as unsafe extern "C" fn(_, _, _, _))),
        ctx: null_mut(),
    })
}

/// The data, and the view descriptors pointing into it.
struct Data {
    x0: [f64; M0 * N],
    x1: [f64; M1 * N],
    col_ptr: [usize; N + 1],
    row_idx: [usize; M1 * N],
    vals: [f64; M1 * N],
    x0f: [f32; M0 * N],
    valsf: [f32; M1 * N],
    truth: [u32; N],
    labels: [u32; N],
}

fn class(j: usize) -> u32 {
    (j % C) as u32
}

fn data() -> Data {
    let mut d = Data {
        x0: [0.0; M0 * N],
        x1: [0.0; M1 * N],
        col_ptr: [0; N + 1],
        row_idx: [0; M1 * N],
        vals: [0.0; M1 * N],
        x0f: [0.0; M0 * N],
        valsf: [0.0; M1 * N],
        truth: [0; N],
        labels: [MVNMF_UNLABELED; N],
    };
    for (j, col) in d.x0.chunks_exact_mut(M0).enumerate() {
        for (i, x) in col.iter_mut().enumerate() {
            let noise = 0.1 * ((i * 7 + j * 5) % 11) as f64 / 11.0;
            *x = noise + if i as u32 % 3 == class(j) { 1.0 } else { 0.0 };
        }
    }
    for (j, col) in d.x1.chunks_exact_mut(M1).enumerate() {
        for (i, x) in col.iter_mut().enumerate() {
            *x = if i as u32 % 3 == class(j) {
                0.8 + 0.1 * ((i + j) % 4) as f64
            } else if (i + 2 * j) % 5 == 0 {
                0.3
            } else {
                0.0
            };
        }
    }
    let mut nnz = 0;
    let mut slots = d.row_idx.iter_mut().zip(d.vals.iter_mut());
    for (ptr, col) in d.col_ptr.iter_mut().skip(1).zip(d.x1.chunks_exact(M1)) {
        for (i, &x) in col.iter().enumerate() {
            if x != 0.0 {
                if let Some((r, v)) = slots.next() {
                    (*r, *v) = (i, x);
                    nnz += 1;
                }
            }
        }
        *ptr = nnz;
    }
    for (f, &x) in d.x0f.iter_mut().zip(&d.x0) {
        *f = x as f32;
    }
    for (f, &x) in d.valsf.iter_mut().zip(&d.vals) {
        *f = x as f32;
    }
    for (j, (t, l)) in d.truth.iter_mut().zip(d.labels.iter_mut()).enumerate() {
        *t = class(j);
        if j < NL {
            *l = class(j);
        }
    }
    d
}

fn dense(x: &[f64], rows: usize) -> mvnmf_view {
    mvnmf_view {
        kind: MVNMF_VIEW_DENSE,
        rows,
        cols: x.len() / rows.max(1),
        values: x.as_ptr(),
        col_stride: rows,
        col_ptr: null(),
        row_idx: null(),
    }
}

fn csc(d: &Data) -> mvnmf_view {
    mvnmf_view {
        kind: MVNMF_VIEW_CSC,
        rows: M1,
        cols: N,
        values: d.vals.as_ptr(),
        col_stride: 0,
        col_ptr: d.col_ptr.as_ptr(),
        row_idx: d.row_idx.as_ptr(),
    }
}

/// The views (dense + CSC), opaque.
fn mixed(d: &Data) -> [mvnmf_view; H] {
    bb([dense(&d.x0, M0), csc(d)])
}

/// The views, both dense (CCA, the fused graph, anchors).
fn both_dense(d: &Data) -> [mvnmf_view; H] {
    bb([dense(&d.x0, M0), dense(&d.x1, M1)])
}

fn kernel(kind: u32, gamma: f64) -> mvnmf_kernel {
    mvnmf_kernel { kind, gamma }
}

/// Kernel sets: every kind, the median and a given RBF bandwidth.
fn kernel_sets() -> [[mvnmf_kernel; H]; 3] {
    [
        [
            kernel(MVNMF_KERNEL_RBF, 0.0),
            kernel(MVNMF_KERNEL_CHI_SQUARED, 0.0),
        ],
        [
            kernel(MVNMF_KERNEL_LINEAR, 0.0),
            kernel(MVNMF_KERNEL_INTERSECTION, 0.0),
        ],
        [
            kernel(MVNMF_KERNEL_RBF, 0.5),
            kernel(MVNMF_KERNEL_LINEAR, 0.0),
        ],
    ]
}

/// On the simplex (up to rounding)?
fn simplex(x: &[f64]) -> bool {
    x.iter().all(|&v| v >= 0.0) && (x.iter().sum::<f64>() - 1.0).abs() < 1e-12
}

/// 0 when every call succeeded and checked out, else its code.
pub fn run() -> i32 {
    let d = data();
    let mut v = [0.0f64; K * N];
    let mut w = [0.0f64; N * N];
    match pipeline(&d, &mut v)
        .and_then(|()| kernels(&d))
        .and_then(|()| graphs(&d, &mut w))
        .and_then(|()| neighbors(&d))
        .and_then(|()| eval(&d, &v, &w))
    {
        Ok(()) => 0,
        Err(code) => code,
    }
}

// ----------------------------------------------------------------- neighbors

/// The neighbour-graph request (issue 30): TGE with every `graph_build` (exact and auto
/// below the threshold agree with `mvnmf_tge`'s entry count; NN-descent gives a graph
/// within capacity), a bad NN-descent option refused, MVEL's anchors from a sample.
/// Codes 400..=419.
fn neighbors(d: &Data) -> R {
    let views = mixed(d);
    let ks = bb(kernel_sets()[0]);
    let eta = bb([0.6f64, 0.4]);
    let lab = bb(d.labels.as_ptr());
    let gp = bb(mvnmf_graph_params {
        ka: 2,
        kp: 1,
        ..mvnmf_graph_params_default()
    });
    let ann = bb(mvnmf_ann_params_default());
    check(ann.k == 10 && ann.delta == 0.001, 400)?;
    let mut nnz = [0usize; 3];
    for (i, build) in [
        MVNMF_GRAPH_BUILD_EXACT,
        MVNMF_GRAPH_BUILD_AUTO,
        MVNMF_GRAPH_BUILD_APPROX,
    ]
    .into_iter()
    .enumerate()
    {
        // SAFETY: `views`, `ks` hold `H` entries; valid options and out-pointer.
        let (wk, wb) = work(
            |b| unsafe {
                mvnmf_tge_build_workspace(
                    bb(views.as_ptr()),
                    bb(H),
                    bb(ks.as_ptr()),
                    bb(C),
                    bb(&gp),
                    bb(build),
                    bb(&ann),
                    b,
                )
            },
            401,
        )?;
        let (mut arp, mut aci, mut aw) = ([0usize; N + 1], [0usize; CAP], [0.0f64; CAP]);
        let (mut prp, mut pci, mut pw) = ([0usize; N + 1], [0usize; CAP], [0.0f64; CAP]);
        let abuf = bb(mvnmf_csr_buffers {
            row_ptr: arp.as_mut_ptr(),
            col_idx: aci.as_mut_ptr(),
            weights: aw.as_mut_ptr(),
            capacity: CAP,
        });
        let pbuf = bb(mvnmf_csr_buffers {
            row_ptr: prp.as_mut_ptr(),
            col_idx: pci.as_mut_ptr(),
            weights: pw.as_mut_ptr(),
            capacity: CAP,
        });
        let (mut an, mut pn) = (0usize, 0usize);
        // SAFETY: the CSR buffers hold `N + 1` row pointers and `CAP` entries; the
        // workspace is the queried size; the rest as above.
        let st = unsafe {
            mvnmf_tge_build(
                bb(views.as_ptr()),
                bb(H),
                bb(ks.as_ptr()),
                bb(eta.as_ptr()),
                lab,
                bb(C),
                bb(&gp),
                bb(build),
                bb(&ann),
                bb(&abuf),
                bb(&pbuf),
                bb(&mut an),
                bb(&mut pn),
                wk,
                wb,
            )
        };
        ok(st, 402)?;
        check(an > 0 && arp[N] == an && pn > 0 && prp[N] == pn, 403)?;
        nnz[i] = an;
        // A leaf of one item: refused, nothing written.
        let bad = bb(mvnmf_ann_params { leaf: 1, ..ann });
        let (mut an2, mut pn2) = (7usize, 7usize);
        // SAFETY: as above.
        let st = unsafe {
            mvnmf_tge_build(
                bb(views.as_ptr()),
                bb(H),
                bb(ks.as_ptr()),
                bb(eta.as_ptr()),
                lab,
                bb(C),
                bb(&gp),
                bb(build),
                bb(&bad),
                bb(&abuf),
                bb(&pbuf),
                bb(&mut an2),
                bb(&mut pn2),
                wk,
                wb,
            )
        };
        check(st == mvnmf_status::BadParameter && an2 == 7 && pn2 == 7, 404)?;
    }
    check(nnz[0] == nnz[1], 405)?;

    // MVEL's anchors from a sample of 10 of the 18 items.
    let dv = both_dense(d);
    let kmp = bb(mvnmf_kmeans_params {
        restarts: 2,
        max_iter: 20,
        ..mvnmf_kmeans_params_default()
    });
    // SAFETY: `dv` holds `H` descriptors; valid out-pointer.
    let (wk, wb) = work(
        |b| unsafe {
            mvnmf_anchors_kmeans_sampled_workspace(
                bb(dv.as_ptr()),
                bb(H),
                bb(NA),
                bb(&kmp),
                bb(10),
                b,
            )
        },
        406,
    )?;
    let (mut a0, mut a1) = ([0.0f64; M0 * NA], [0.0f64; M1 * NA]);
    let aptr = bb([a0.as_mut_ptr(), a1.as_mut_ptr()]);
    let mut krep = core::mem::MaybeUninit::<mvnmf_kmeans_report>::zeroed();
    // SAFETY: `aptr` holds `H` buffers of `d_v × NA`; the workspace is the queried size.
    let st = unsafe {
        mvnmf_anchors_kmeans_sampled(
            bb(dv.as_ptr()),
            bb(H),
            bb(NA),
            bb(&kmp),
            bb(10),
            bb(aptr.as_ptr()),
            wk,
            wb,
            bb(krep.as_mut_ptr()),
        )
    };
    ok(st, 407)?;
    // SAFETY: written on success.
    let krep = unsafe { krep.assume_init() };
    check(finite(&a0) && finite(&a1) && krep.inertia.is_finite(), 408)?;
    Ok(())
}

// ------------------------------------------------------------------ pipeline

/// The pipeline, every method (f64), then the report and the f32 twin:
/// every objective fell. Leaves the MvSL-T encoding in `v_out`. Codes 280..=299.
fn pipeline(d: &Data, v_out: &mut [f64; K * N]) -> R {
    let views = mixed(d);
    let ks = bb(kernel_sets()[0]);
    let def = bb(mvnmf_pipeline_params_default());
    check(def.method == MVNMF_METHOD_MVSL_T, 280)?;
    let fell = |r: &mvnmf_report| {
        r.initial.total.is_finite() && r.objective.total < r.initial.total && r.iterations == 20
    };
    for method in [
        MVNMF_METHOD_JOINT_NMF,
        MVNMF_METHOD_GNMF,
        MVNMF_METHOD_MVSL_S,
        MVNMF_METHOD_MVSL_L,
        MVNMF_METHOD_MVSL_T,
        MVNMF_METHOD_MCL,
    ] {
        let mut p = def;
        // SAFETY: `p` is a valid place for one struct.
        ok(
            unsafe { mvnmf_pipeline_params_preset(bb(method), bb(&mut p as *mut _)) },
            281,
        )?;
        p.solver.max_iter = 20;
        p.solver.tol = 0.0;
        p.solver.parallel = host();
        p.graph.ka = 2;
        p.graph.kp = 1;
        p.learn_eta = 1;
        let p = bb(p);
        // SAFETY: `views` and `ks` hold `H` valid descriptors each.
        let (wk, wb) = work(
            |b| unsafe {
                mvnmf_pipeline_fit_workspace(
                    bb(views.as_ptr()),
                    bb(H),
                    bb(ks.as_ptr()),
                    bb(C),
                    bb(K),
                    bb(&p),
                    b,
                )
            },
            282,
        )?;
        let (mut u0, mut u1, mut v) = ([0.0f64; M0 * K], [0.0f64; M1 * K], [0.0f64; K * N]);
        let us = bb([u0.as_mut_ptr(), u1.as_mut_ptr()]);
        let mut eta = [0.0f64; H];
        let mut calls = 0u32;
        let mut rep = core::mem::MaybeUninit::<mvnmf_report>::zeroed();
        // SAFETY: every buffer has the documented size; the workspace is the
        // queried size; the callback's `user` is `calls`.
        let st = unsafe {
            mvnmf_pipeline_fit(
                bb(views.as_ptr()),
                bb(H),
                bb(ks.as_ptr()),
                bb(d.labels.as_ptr()),
                bb(C),
                bb(K),
                bb(&p),
                bb(us.as_ptr()),
                bb(v.as_mut_ptr()),
                bb(eta.as_mut_ptr()),
                wk,
                wb,
                bb(Some(progress as unsafe extern "C" fn(_, _) -> _)),
                bb((&mut calls as *mut u32).cast()),
                bb(rep.as_mut_ptr()),
            )
        };
        ok(st, 283)?;
        // SAFETY: written on success.
        let rep = unsafe { rep.assume_init() };
        // 20 iterations and the start; with a graph, the four set-up reports before them.
        let graph = matches!(
            method,
            MVNMF_METHOD_GNMF | MVNMF_METHOD_MVSL_L | MVNMF_METHOD_MVSL_T
        );
        check(fell(&rep) && calls == 21 + 4 * u32::from(graph), 284)?;
        check(
            finite(&u0) && finite(&u1) && finite(&v) && simplex(&eta),
            285,
        )?;
        if method == MVNMF_METHOD_MVSL_T {
            *v_out = v;
        }
    }
    // The full report (MvSL-T: both graphs built) and the f32 twin.
    let mut p = def;
    p.solver.max_iter = 20;
    p.solver.tol = 0.0;
    p.solver.parallel = host();
    p.graph.ka = 2;
    p.graph.kp = 1;
    let p = bb(p);
    // SAFETY: as above.
    let (wk, wb) = work(
        |b| unsafe {
            mvnmf_pipeline_fit_workspace(
                bb(views.as_ptr()),
                bb(H),
                bb(ks.as_ptr()),
                bb(C),
                bb(K),
                bb(&p),
                b,
            )
        },
        286,
    )?;
    let (mut u0, mut u1, mut v) = ([0.0f64; M0 * K], [0.0f64; M1 * K], [0.0f64; K * N]);
    let us = bb([u0.as_mut_ptr(), u1.as_mut_ptr()]);
    let mut eta = [0.0f64; H];
    let mut full = core::mem::MaybeUninit::<mvnmf_pipeline_report>::zeroed();
    // SAFETY: as above (no `user`).
    let st = unsafe {
        mvnmf_pipeline_fit_report(
            bb(views.as_ptr()),
            bb(H),
            bb(ks.as_ptr()),
            bb(d.labels.as_ptr()),
            bb(C),
            bb(K),
            bb(&p),
            bb(us.as_ptr()),
            bb(v.as_mut_ptr()),
            bb(eta.as_mut_ptr()),
            wk,
            wb,
            bb(Some(progress as unsafe extern "C" fn(_, _) -> _)),
            bb(null_mut()),
            bb(full.as_mut_ptr()),
        )
    };
    ok(st, 287)?;
    // SAFETY: written on success.
    let full = unsafe { full.assume_init() };
    check(
        fell(&full.fit) && full.affinity_nnz > 0 && full.penalty_nnz > 0,
        288,
    )?;
    check(
        finite(&u0) && finite(&u1) && finite(&v) && simplex(&eta),
        289,
    )?;

    let views32 = bb([
        mvnmf_view_f32 {
            kind: MVNMF_VIEW_DENSE,
            rows: M0,
            cols: N,
            values: d.x0f.as_ptr(),
            col_stride: M0,
            col_ptr: null(),
            row_idx: null(),
        },
        mvnmf_view_f32 {
            kind: MVNMF_VIEW_CSC,
            rows: M1,
            cols: N,
            values: d.valsf.as_ptr(),
            col_stride: 0,
            col_ptr: d.col_ptr.as_ptr(),
            row_idx: d.row_idx.as_ptr(),
        },
    ]);
    // SAFETY: as above.
    let (wk, wb) = work(
        |b| unsafe {
            mvnmf_pipeline_fit_f32_workspace(
                bb(views32.as_ptr()),
                bb(H),
                bb(ks.as_ptr()),
                bb(C),
                bb(K),
                bb(&p),
                b,
            )
        },
        290,
    )?;
    let (mut u0, mut u1, mut v) = ([0.0f32; M0 * K], [0.0f32; M1 * K], [0.0f32; K * N]);
    let us = bb([u0.as_mut_ptr(), u1.as_mut_ptr()]);
    let mut eta = [0.0f64; H];
    let mut rep = core::mem::MaybeUninit::<mvnmf_report>::zeroed();
    // SAFETY: as above.
    let st = unsafe {
        mvnmf_pipeline_fit_f32(
            bb(views32.as_ptr()),
            bb(H),
            bb(ks.as_ptr()),
            bb(d.labels.as_ptr()),
            bb(C),
            bb(K),
            bb(&p),
            bb(us.as_ptr()),
            bb(v.as_mut_ptr()),
            bb(eta.as_mut_ptr()),
            wk,
            wb,
            bb(Some(progress as unsafe extern "C" fn(_, _) -> _)),
            bb(null_mut()),
            bb(rep.as_mut_ptr()),
        )
    };
    ok(st, 291)?;
    // SAFETY: written on success.
    let rep = unsafe { rep.assume_init() };
    let finite32 = |x: &[f32]| x.iter().all(|v| v.is_finite());
    check(fell(&rep), 292)?;
    check(
        finite32(&u0) && finite32(&u1) && finite32(&v) && simplex(&eta),
        293,
    )
}

// ------------------------------------------------------- kernels, MKL, kNN

/// Bandwidths, MKL, the alignment system, the simplex QP, fused kNN (every
/// scope) and class pairs, for every kernel set. Codes 200..=219.
fn kernels(d: &Data) -> R {
    let views = mixed(d);
    let lab = bb(d.labels.as_ptr());
    let qmask: [u8; N] = core::array::from_fn(|j| u8::from(j % 2 == 0));
    let cmask: [u8; N] = core::array::from_fn(|j| u8::from(j % 3 != 1));
    for set in kernel_sets() {
        let ks = bb(set);
        let block = bb(5usize);
        // Bandwidths.
        // SAFETY: `views` and `ks` hold `H` valid descriptors each; every
        // output has its documented size.
        let (wk, wb) = work(
            |b| unsafe {
                mvnmf_kernel_bandwidths_workspace(
                    bb(views.as_ptr()),
                    bb(H),
                    bb(ks.as_ptr()),
                    bb(C),
                    block,
                    b,
                )
            },
            200,
        )?;
        let mut gammas = [f64::NAN; H];
        // SAFETY: as above.
        let st = unsafe {
            mvnmf_kernel_bandwidths(
                bb(views.as_ptr()),
                bb(H),
                bb(ks.as_ptr()),
                lab,
                bb(C),
                block,
                bb(gammas.as_mut_ptr()),
                wk,
                wb,
            )
        };
        ok(st, 201)?;
        check(
            gammas
                .iter()
                .zip(&set)
                .all(|(&g, k)| g.is_finite() && (g > 0.0) == (k.kind == MVNMF_KERNEL_RBF)),
            202,
        )?;
        // MKL weights.
        let mp = bb(mvnmf_mkl_params {
            block: 4,
            ..mvnmf_mkl_params_default()
        });
        // SAFETY: as above.
        let (wk, wb) = work(
            |b| unsafe {
                mvnmf_mkl_weights_workspace(
                    bb(views.as_ptr()),
                    bb(H),
                    bb(ks.as_ptr()),
                    bb(C),
                    bb(&mp),
                    b,
                )
            },
            203,
        )?;
        let mut eta = [0.0f64; H];
        let mut rep = mvnmf_mkl_report::default();
        // SAFETY: as above.
        let st = unsafe {
            mvnmf_mkl_weights(
                bb(views.as_ptr()),
                bb(H),
                bb(ks.as_ptr()),
                lab,
                bb(C),
                bb(&mp),
                bb(eta.as_mut_ptr()),
                wk,
                wb,
                bb(&mut rep),
            )
        };
        ok(st, 204)?;
        check(
            simplex(&eta)
                && finite(&[rep.ridge, rep.mean_diag, rep.loss, rep.kkt_residual])
                && (1..=H).contains(&rep.support),
            205,
        )?;
        // The alignment system and its simplex QP.
        // SAFETY: as above.
        let (wk, wb) = work(
            |b| unsafe {
                mvnmf_alignment_system_workspace(
                    bb(views.as_ptr()),
                    bb(H),
                    bb(ks.as_ptr()),
                    bb(C),
                    block,
                    b,
                )
            },
            206,
        )?;
        let (mut g, mut b, mut constant) = ([0.0f64; H * H], [0.0f64; H], f64::NAN);
        // SAFETY: as above.
        let st = unsafe {
            mvnmf_alignment_system(
                bb(views.as_ptr()),
                bb(H),
                bb(ks.as_ptr()),
                lab,
                bb(C),
                block,
                bb(g.as_mut_ptr()),
                bb(b.as_mut_ptr()),
                bb(&mut constant),
                wk,
                wb,
            )
        };
        ok(st, 207)?;
        check(finite(&g) && finite(&b) && constant > 0.0, 208)?;
        // SAFETY: `b` is a valid out-pointer.
        let (wk, wb) = work(
            |bytes| unsafe { mvnmf_simplex_qp_workspace(bb(H), bytes) },
            209,
        )?;
        let mut qp = [0.0f64; H];
        let mut qrep = mvnmf_qp_report::default();
        // SAFETY: `g` is `H × H`, `b` and `qp` hold `H`.
        let st = unsafe {
            mvnmf_simplex_qp(
                bb(g.as_ptr()),
                bb(b.as_ptr()),
                bb(H),
                bb(qp.as_mut_ptr()),
                wk,
                wb,
                bb(&mut qrep),
            )
        };
        ok(st, 210)?;
        check(simplex(&qp) && qrep.objective.is_finite(), 211)?;
        // Fused kNN, every scope, on the host pool.
        for (scope, k) in [
            (MVNMF_SCOPE_ALL, 3),
            (MVNMF_SCOPE_LABELED, 3),
            (MVNMF_SCOPE_SAME_CLASS, 2),
            (MVNMF_SCOPE_OTHER_CLASS, 3),
            (MVNMF_SCOPE_MASKED, 2),
        ] {
            let kp = bb(mvnmf_fused_knn_params {
                k,
                scope,
                block: 4,
                parallel: host(),
            });
            // SAFETY: as above.
            let (wk, wb) = work(
                |b| unsafe {
                    mvnmf_fused_knn_workspace(
                        bb(views.as_ptr()),
                        bb(H),
                        bb(ks.as_ptr()),
                        bb(C),
                        bb(&kp),
                        b,
                    )
                },
                212,
            )?;
            let (mut nb, mut sims) = ([0usize; N * 3], [0.0f64; N * 3]);
            // SAFETY: as above; `nb` and `sims` hold `N·k` (`k <= 3`), the masks `N`.
            let st = unsafe {
                mvnmf_fused_knn(
                    bb(views.as_ptr()),
                    bb(H),
                    bb(ks.as_ptr()),
                    bb(eta.as_ptr()),
                    lab,
                    bb(C),
                    bb(&kp),
                    bb(qmask.as_ptr()),
                    bb(cmask.as_ptr()),
                    bb(nb.as_mut_ptr()),
                    bb(sims.as_mut_ptr()),
                    wk,
                    wb,
                )
            };
            ok(st, 213)?;
            let good = nb.iter().zip(&sims).take(N * k).all(|(&j, &s)| {
                (j < N && s.is_finite() && s <= 1.0 + 1e-12)
                    || (j == MVNMF_NO_NEIGHBOR && s == f64::NEG_INFINITY)
            });
            check(good && nb.first().is_some_and(|&j| j < N), 214)?;
        }
        // Class pairs.
        let kp = bb(mvnmf_fused_knn_params {
            k: 2,
            ..mvnmf_fused_knn_params_default()
        });
        // SAFETY: as above.
        let (wk, wb) = work(
            |b| unsafe {
                mvnmf_class_pairs_workspace(
                    bb(views.as_ptr()),
                    bb(H),
                    bb(ks.as_ptr()),
                    bb(C),
                    bb(&kp),
                    b,
                )
            },
            215,
        )?;
        let (mut pairs, mut sims) = ([0usize; 2 * C * 2], [0.0f64; C * 2]);
        // SAFETY: as above; `pairs` holds `2·C·k`, `sims` `C·k`.
        let st = unsafe {
            mvnmf_class_pairs(
                bb(views.as_ptr()),
                bb(H),
                bb(ks.as_ptr()),
                bb(eta.as_ptr()),
                lab,
                bb(C),
                bb(&kp),
                bb(pairs.as_mut_ptr()),
                bb(sims.as_mut_ptr()),
                wk,
                wb,
            )
        };
        ok(st, 216)?;
        let good = pairs.chunks_exact(2).all(|p| match *p {
            [i, j] => i < NL && j < NL && class(i) != class(j),
            _ => false,
        });
        check(good && finite(&sims), 217)?;
    }
    Ok(())
}

// ------------------------------------------------------------------ graphs

/// LDGE / TGE (both penalties) and their degrees, CCA, the fused graph, the
/// anchors and anchor graph (with and without training views), the fused kNN
/// graph. Leaves the fused graph in `w_out`. Codes 220..=239 (and 430, 431: the kNN graph by
/// NN-descent).
fn graphs(d: &Data, w_out: &mut [f64; N * N]) -> R {
    let views = mixed(d);
    let ks = bb(kernel_sets()[0]);
    let eta = bb([0.6f64, 0.4]);
    let lab = bb(d.labels.as_ptr());
    let def = bb(mvnmf_graph_params_default());
    for penalty in [MVNMF_PENALTY_CLASS_PAIRS, MVNMF_PENALTY_ITEM_NEIGHBORS] {
        for tge in [false, true] {
            let gp = bb(mvnmf_graph_params {
                ka: 2,
                kp: 1,
                penalty,
                block: 4,
                ..def
            });
            let (mut ac, mut pc) = (0usize, 0usize);
            // SAFETY: valid out-pointers; `views`, `ks` hold `H` descriptors.
            let st = unsafe {
                if bb(tge) {
                    mvnmf_tge_capacity(bb(N), bb(C), bb(&gp), bb(&mut ac), bb(&mut pc))
                } else {
                    mvnmf_ldge_capacity(bb(N), bb(C), bb(&gp), bb(&mut ac), bb(&mut pc))
                }
            };
            ok(st, 220)?;
            check(ac <= CAP && pc <= CAP, 221)?;
            let (wk, wb) = work(
                |b| unsafe {
                    // SAFETY: as above.
                    if bb(tge) {
                        mvnmf_tge_workspace(
                            bb(views.as_ptr()),
                            bb(H),
                            bb(ks.as_ptr()),
                            bb(C),
                            bb(&gp),
                            b,
                        )
                    } else {
                        mvnmf_ldge_workspace(
                            bb(views.as_ptr()),
                            bb(H),
                            bb(ks.as_ptr()),
                            bb(C),
                            bb(&gp),
                            b,
                        )
                    }
                },
                222,
            )?;
            let (mut arp, mut aci, mut aw) = ([0usize; N + 1], [0usize; CAP], [0.0f64; CAP]);
            let (mut prp, mut pci, mut pw) = ([0usize; N + 1], [0usize; CAP], [0.0f64; CAP]);
            let abuf = bb(mvnmf_csr_buffers {
                row_ptr: arp.as_mut_ptr(),
                col_idx: aci.as_mut_ptr(),
                weights: aw.as_mut_ptr(),
                capacity: ac,
            });
            let pbuf = bb(mvnmf_csr_buffers {
                row_ptr: prp.as_mut_ptr(),
                col_idx: pci.as_mut_ptr(),
                weights: pw.as_mut_ptr(),
                capacity: pc,
            });
            let (mut an, mut pn) = (0usize, 0usize);
            let f = if bb(tge) { mvnmf_tge } else { mvnmf_ldge };
            // SAFETY: the CSR buffers hold `N + 1` row pointers and the
            // capacities the query gave; the rest as above.
            let st = unsafe {
                bb(f)(
                    bb(views.as_ptr()),
                    bb(H),
                    bb(ks.as_ptr()),
                    bb(eta.as_ptr()),
                    lab,
                    bb(C),
                    bb(&gp),
                    bb(&abuf),
                    bb(&pbuf),
                    bb(&mut an),
                    bb(&mut pn),
                    wk,
                    wb,
                )
            };
            ok(st, 223)?;
            check(an > 0 && an <= ac && pn > 0 && pn <= pc, 224)?;
            check(arp.last() == Some(&an) && prp.last() == Some(&pn), 225)?;
            // Degrees of the affinity graph: its weights, row by row.
            let mut deg = [f64::NAN; N];
            // SAFETY: `arp` holds `N + 1`, `aci` and `aw` at least `an` entries.
            let st = unsafe {
                mvnmf_graph_degrees(
                    bb(N),
                    bb(arp.as_ptr()),
                    bb(aci.as_ptr()),
                    bb(aw.as_ptr()),
                    bb(deg.as_mut_ptr()),
                )
            };
            ok(st, 226)?;
            let total: f64 = aw.iter().take(an).sum();
            check(
                finite(&deg)
                    && deg.iter().all(|&x| x >= 0.0)
                    && (deg.iter().sum::<f64>() - total).abs() <= 1e-12 * total,
                227,
            )?;
        }
    }

    // CCA of the two dense views.
    let dv = both_dense(d);
    let dims = bb(2usize);
    // SAFETY: a valid out-pointer.
    let (wk, wb) = work(
        |b| unsafe { mvnmf_cca_workspace(bb(M0), bb(M1), bb(N), dims, b) },
        228,
    )?;
    let (mut phi_i, mut phi_j, mut rho) = ([0.0f64; M0 * 2], [0.0f64; M1 * 2], [0.0f64; 2]);
    let (mut mu_i, mut mu_j) = ([0.0f64; M0], [0.0f64; M1]);
    let [xi, xj] = dv;
    // SAFETY: two valid dense descriptors; every output has its documented size.
    let st = unsafe {
        mvnmf_cca(
            bb(&xi),
            bb(&xj),
            bb(1e-3),
            dims,
            bb(phi_i.as_mut_ptr()),
            bb(phi_j.as_mut_ptr()),
            bb(rho.as_mut_ptr()),
            bb(mu_i.as_mut_ptr()),
            bb(mu_j.as_mut_ptr()),
            wk,
            wb,
        )
    };
    ok(st, 229)?;
    check(
        finite(&phi_i)
            && finite(&phi_j)
            && finite(&mu_i)
            && finite(&mu_j)
            && rho.iter().all(|&r| (0.0..=1.0 + 1e-9).contains(&r)),
        230,
    )?;

    // The fused graph (cross-view, given priors, one given bandwidth).
    let fp = bb(mvnmf_fused_graph_params {
        cross_view: 1,
        cca_dims: 2,
        ..mvnmf_fused_graph_params_default()
    });
    let priors = bb([0.3f64, 0.2, 0.2, 0.3]);
    let gammas = bb([0.0f64, 0.5]);
    // SAFETY: `dv` holds `H` dense descriptors.
    let (wk, wb) = work(
        |b| unsafe { mvnmf_fused_graph_workspace(bb(dv.as_ptr()), bb(H), bb(&fp), b) },
        231,
    )?;
    let mut w = [0.0f64; N * N];
    // SAFETY: `gammas` holds `H`, `priors` `H²`, `w` `N²`.
    let st = unsafe {
        mvnmf_fused_graph(
            bb(dv.as_ptr()),
            bb(H),
            bb(gammas.as_ptr()),
            bb(priors.as_ptr()),
            bb(&fp),
            bb(w.as_mut_ptr()),
            wk,
            wb,
        )
    };
    ok(st, 232)?;
    let tot: f64 = w.iter().sum();
    check(
        finite(&w) && w.iter().all(|&x| x >= 0.0) && (tot - N as f64).abs() < 1e-9,
        233,
    )?;
    *w_out = w;

    // Anchors by k-means, then the anchor graph: the training items
    // themselves (no `train`, scales chosen), then as new items (`train`
    // given, the scales of the first run).
    let kmp = bb(mvnmf_kmeans_params {
        restarts: 2,
        max_iter: 20,
        ..mvnmf_kmeans_params_default()
    });
    // SAFETY: as above.
    let (wk, wb) = work(
        |b| unsafe { mvnmf_anchors_kmeans_workspace(bb(dv.as_ptr()), bb(H), bb(NA), bb(&kmp), b) },
        234,
    )?;
    let (mut a0, mut a1) = ([0.0f64; M0 * NA], [0.0f64; M1 * NA]);
    let aptr = bb([a0.as_mut_ptr(), a1.as_mut_ptr()]);
    let mut krep = core::mem::MaybeUninit::<mvnmf_kmeans_report>::zeroed();
    // SAFETY: `aptr` holds `H` buffers of `d_v × NA`.
    let st = unsafe {
        mvnmf_anchors_kmeans(
            bb(dv.as_ptr()),
            bb(H),
            bb(NA),
            bb(&kmp),
            bb(aptr.as_ptr()),
            wk,
            wb,
            bb(krep.as_mut_ptr()),
        )
    };
    ok(st, 235)?;
    // SAFETY: written on success.
    let krep = unsafe { krep.assume_init() };
    check(finite(&a0) && finite(&a1) && krep.inertia.is_finite(), 235)?;
    let anchors = bb([dense(&a0, M0), dense(&a1, M1)]);
    let jl = bb(mvnmf_anchor_scales_len(bb(H)));
    check(jl == 2 * H * H, 236)?;
    let mut scales = [0.0f64; 2 * H * H];
    for train in [false, true] {
        let tv = if bb(train) { dv.as_ptr() } else { null() };
        // SAFETY: as above; `priors` holds `H²`.
        let (wk, wb) = work(
            |b| unsafe {
                mvnmf_anchor_graph_workspace(
                    bb(dv.as_ptr()),
                    bb(H),
                    bb(N),
                    bb(NA),
                    bb(priors.as_ptr()),
                    bb(&fp),
                    b,
                )
            },
            236,
        )?;
        let (mut idx, mut z) = ([0usize; N * SA], [0.0f64; N * SA]);
        // SAFETY: `scales` holds `mvnmf_anchor_scales_len(H)`, `idx` and `z` `N·s`.
        let st = unsafe {
            mvnmf_anchor_graph(
                bb(dv.as_ptr()),
                bb(H),
                bb(tv),
                bb(anchors.as_ptr()),
                bb(SA),
                bb(priors.as_ptr()),
                bb(&fp),
                bb(scales.as_mut_ptr()),
                bb(idx.as_mut_ptr()),
                bb(z.as_mut_ptr()),
                wk,
                wb,
            )
        };
        ok(st, 237)?;
        check(
            finite(&scales)
                && scales.iter().all(|&s| s > 0.0)
                && idx.iter().all(|&a| a < NA)
                && z.chunks_exact(SA).all(simplex),
            237,
        )?;
    }

    // The kNN-sparsified fused graph (priors uniform, within-view only).
    let fp = bb(mvnmf_fused_graph_params {
        cross_view: 0,
        ..mvnmf_fused_graph_params_default()
    });
    let mut cap = 0usize;
    // SAFETY: a valid out-pointer.
    ok(
        unsafe { mvnmf_fused_knn_graph_capacity(bb(N), bb(SK), bb(&mut cap)) },
        238,
    )?;
    check(cap <= CAP, 238)?;
    // SAFETY: as above.
    let (wk, wb) = work(
        |b| unsafe {
            mvnmf_fused_knn_graph_workspace(bb(dv.as_ptr()), bb(H), bb(SK), bb(null()), bb(&fp), b)
        },
        238,
    )?;
    let (mut rp, mut ci, mut cw) = ([0usize; N + 1], [0usize; CAP], [0.0f64; CAP]);
    let out = bb(mvnmf_csr_buffers {
        row_ptr: rp.as_mut_ptr(),
        col_idx: ci.as_mut_ptr(),
        weights: cw.as_mut_ptr(),
        capacity: cap,
    });
    let mut nnz = 0usize;
    // SAFETY: the buffers hold `N + 1` and `cap` entries.
    let st = unsafe {
        mvnmf_fused_knn_graph(
            bb(dv.as_ptr()),
            bb(H),
            bb(SK),
            bb(null()),
            bb(&fp),
            bb(&out),
            bb(&mut nnz),
            wk,
            wb,
        )
    };
    ok(st, 239)?;
    let tot: f64 = cw.iter().take(nnz).sum();
    check(
        nnz <= cap
            && rp.last() == Some(&nnz)
            && ci.iter().take(nnz).all(|&j| j < N)
            && (tot - N as f64).abs() < 1e-9,
        239,
    )?;

    // The same graph with its neighbours by NN-descent (`MVNMF_GRAPH_BUILD_APPROX`).
    let ann = bb(mvnmf_ann_params_default());
    // SAFETY: as above.
    let (wk, wb) = work(
        |b| unsafe {
            mvnmf_fused_knn_graph_build_workspace(
                bb(dv.as_ptr()),
                bb(H),
                bb(SK),
                bb(null()),
                bb(&fp),
                bb(MVNMF_GRAPH_BUILD_APPROX),
                bb(&ann),
                b,
            )
        },
        430,
    )?;
    let mut nnz = 0usize;
    // SAFETY: the buffers hold `N + 1` and `cap` entries.
    let st = unsafe {
        mvnmf_fused_knn_graph_build(
            bb(dv.as_ptr()),
            bb(H),
            bb(SK),
            bb(null()),
            bb(&fp),
            bb(MVNMF_GRAPH_BUILD_APPROX),
            bb(&ann),
            bb(&out),
            bb(&mut nnz),
            wk,
            wb,
        )
    };
    ok(st, 431)?;
    let tot: f64 = cw.iter().take(nnz).sum();
    check(
        nnz <= cap
            && rp.last() == Some(&nnz)
            && ci.iter().take(nnz).all(|&j| j < N)
            && (tot - N as f64).abs() < 1e-9,
        431,
    )
}

// -------------------------------------------------------------------- eval

/// The encoding `user` points at (`K × N` doubles), copied into `v`.
unsafe fn copy_encoding(k: usize, n: usize, v: *mut f64, user: *mut c_void) -> c_int {
    if v.is_null() || user.is_null() || k.checked_mul(n) != Some(K * N) {
        return 1;
    }
    // SAFETY: `user` is the caller's `K × N` encoding and `v` the library's
    // `k × n` buffer, `k·n = K·N`, not overlapping.
    let (src, dst) = unsafe {
        (
            core::slice::from_raw_parts(user.cast::<f64>(), K * N),
            core::slice::from_raw_parts_mut(v, K * N),
        )
    };
    for (d, s) in dst.iter_mut().zip(src) {
        *d = *s;
    }
    0
}

/// `mvnmf_evaluate_protocol`'s fit: the fixed encoding.
unsafe extern "C" fn proto_fit(
    fit: *const mvnmf_protocol_fit,
    v: *mut f64,
    user: *mut c_void,
) -> c_int {
    if fit.is_null() {
        return 1;
    }
    // SAFETY: the library passes a valid record; `user` is ours.
    unsafe { copy_encoding((*fit).k, (*fit).n, v, user) }
}

/// `mvnmf_cross_validate`'s fit: the fixed encoding.
unsafe extern "C" fn cv_fit(fit: *const mvnmf_cv_fit, v: *mut f64, user: *mut c_void) -> c_int {
    if fit.is_null() {
        return 1;
    }
    // SAFETY: as above.
    unsafe { copy_encoding((*fit).k, (*fit).n, v, user) }
}

/// Every evaluation entry point: on the data (kNN, k-means), on the
/// pipeline's encoding `v` (split, protocol, cross-validation, AUROC) and on
/// the fused graph `w` (retrieval). Codes 240..=279.
fn eval(d: &Data, v: &[f64; K * N], w: &[f64; N * N]) -> R {
    let truth = bb(d.truth.as_ptr());
    let x0 = bb(d.x0.as_ptr());
    // Stratified split.
    // SAFETY: a valid out-pointer.
    let (wk, wb) = work(
        |b| unsafe { mvnmf_stratified_split_workspace(bb(N), b) },
        240,
    )?;
    let mut split = [9u8; N];
    // SAFETY: `truth` and `split` hold `N`.
    let st = unsafe {
        mvnmf_stratified_split(
            truth,
            bb(N),
            bb(C),
            bb(0.5),
            bb(7u64),
            bb(split.as_mut_ptr()),
            wk,
            wb,
        )
    };
    ok(st, 241)?;
    let nl = split.iter().filter(|&&b| b == 1).count();
    check(split.iter().all(|&b| b <= 1) && nl == 9, 242)?;

    // kNN prediction of every item from the labeled ones, its accuracy on the others.
    let knn = bb(mvnmf_knn_params {
        k: 3,
        ..mvnmf_knn_params_default()
    });
    // SAFETY: a valid out-pointer.
    let (wk, wb) = work(
        |b| unsafe { mvnmf_knn_predict_workspace(bb(C), bb(&knn), b) },
        243,
    )?;
    let mut pred = [u32::MAX; N];
    // SAFETY: `x0` is `M0 × N`, labels and `pred` `N`.
    let st = unsafe {
        mvnmf_knn_predict(
            x0,
            bb(M0),
            bb(N),
            bb(d.labels.as_ptr()),
            x0,
            bb(N),
            bb(C),
            bb(&knn),
            bb(pred.as_mut_ptr()),
            wk,
            wb,
        )
    };
    ok(st, 244)?;
    let test: [u8; N] = core::array::from_fn(|j| u8::from(j >= NL));
    let mut acc = f64::NAN;
    // SAFETY: `pred`, `truth`, `test` hold `N`.
    let st = unsafe {
        mvnmf_accuracy(
            bb(pred.as_ptr()),
            truth,
            bb(N),
            bb(test.as_ptr()),
            bb(&mut acc),
        )
    };
    ok(st, 245)?;
    check(acc == 1.0, 246)?;

    // k-means of the data; clustering accuracy, NMI (every norm), assignment.
    let kmp = bb(mvnmf_kmeans_params {
        restarts: 2,
        max_iter: 50,
        ..mvnmf_kmeans_params_default()
    });
    // SAFETY: a valid out-pointer.
    let (wk, wb) = work(
        |b| unsafe { mvnmf_kmeans_workspace(bb(M0), bb(N), bb(C), bb(&kmp), b) },
        247,
    )?;
    let mut assign = [u32::MAX; N];
    let mut cent = [f64::NAN; M0 * C];
    let mut krep = core::mem::MaybeUninit::<mvnmf_kmeans_report>::zeroed();
    // SAFETY: `assign` holds `N`, `cent` `M0 × C`.
    let st = unsafe {
        mvnmf_kmeans(
            x0,
            bb(M0),
            bb(N),
            bb(C),
            bb(&kmp),
            bb(assign.as_mut_ptr()),
            bb(cent.as_mut_ptr()),
            wk,
            wb,
            bb(krep.as_mut_ptr()),
        )
    };
    ok(st, 248)?;
    // SAFETY: written on success.
    let krep = unsafe { krep.assume_init() };
    check(
        assign.iter().all(|&a| (a as usize) < C) && finite(&cent) && krep.inertia.is_finite(),
        249,
    )?;
    let assign_p = bb(assign.as_ptr());
    // SAFETY: a valid out-pointer.
    let (wk, wb) = work(
        |b| unsafe { mvnmf_clustering_accuracy_workspace(bb(C), bb(C), b) },
        250,
    )?;
    let mut cacc = f64::NAN;
    // SAFETY: `truth` and `assign` hold `N`.
    let st = unsafe {
        mvnmf_clustering_accuracy(truth, assign_p, bb(N), bb(C), bb(C), bb(&mut cacc), wk, wb)
    };
    ok(st, 251)?;
    check(cacc == 1.0, 252)?;
    for norm in [
        MVNMF_NMI_MAX,
        MVNMF_NMI_ARITHMETIC,
        MVNMF_NMI_GEOMETRIC,
        MVNMF_NMI_MIN,
    ] {
        // SAFETY: a valid out-pointer.
        let (wk, wb) = work(|b| unsafe { mvnmf_nmi_workspace(bb(C), bb(C), b) }, 253)?;
        let mut nmi = f64::NAN;
        // SAFETY: as above.
        let st = unsafe {
            mvnmf_nmi(
                truth,
                assign_p,
                bb(N),
                bb(C),
                bb(C),
                bb(norm),
                bb(&mut nmi),
                wk,
                wb,
            )
        };
        ok(st, 254)?;
        check((nmi - 1.0).abs() < 1e-12, 255)?;
    }
    // The contingency table as a cost matrix, maximised: the best map hits every item.
    let mut cost = [0.0f64; C * C];
    for (&t, &a) in d.truth.iter().zip(&assign) {
        if let Some(c) = cost.get_mut(t as usize + C * a as usize) {
            *c += 1.0;
        }
    }
    // SAFETY: a valid out-pointer.
    let (wk, wb) = work(
        |b| unsafe { mvnmf_assignment_workspace(bb(C), bb(C), b) },
        256,
    )?;
    let (mut map, mut total) = ([usize::MAX; C], f64::NAN);
    // SAFETY: `cost` is `C × C`, `map` holds `C`.
    let st = unsafe {
        mvnmf_assignment(
            bb(cost.as_ptr()),
            bb(C),
            bb(C),
            bb(1),
            bb(map.as_mut_ptr()),
            bb(&mut total),
            wk,
            wb,
        )
    };
    ok(st, 257)?;
    check(total == N as f64 && map.iter().all(|&c| c < C), 258)?;

    // Retrieval on the fused graph: item 0's row as scores, its class as relevant.
    let scores = bb(w.as_ptr());
    let rel: [u8; N * N] = core::array::from_fn(|x| u8::from(class(x % N) == class(x / N)));
    let cutoffs = bb([1usize, 3, 5]);
    let mut top = [usize::MAX; 5];
    // SAFETY: `scores` holds `N`, `top` 5.
    ok(
        unsafe { mvnmf_top_n(scores, bb(N), bb(5), bb(top.as_mut_ptr())) },
        259,
    )?;
    let sc = |j: usize| w.get(j).copied().unwrap_or(f64::NAN);
    check(
        top.iter().all(|&j| j < N)
            && top.windows(2).all(|p| match *p {
                [a, b] => sc(a) >= sc(b),
                _ => false,
            }),
        259,
    )?;
    // SAFETY: a valid out-pointer.
    let (wk, wb) = work(|b| unsafe { mvnmf_query_metrics_workspace(bb(N), b) }, 260)?;
    let (mut ap, mut pat, mut pr11) = (f64::NAN, [f64::NAN; 3], [f64::NAN; 11]);
    // SAFETY: `scores` and `rel` hold `N` (the first column), `cutoffs` and
    // `pat` 3, `pr11` 11.
    let st = unsafe {
        mvnmf_query_metrics(
            scores,
            bb(rel.as_ptr()),
            bb(N),
            bb(cutoffs.as_ptr()),
            bb(3),
            bb(&mut ap),
            bb(pat.as_mut_ptr()),
            bb(pr11.as_mut_ptr()),
            wk,
            wb,
        )
    };
    ok(st, 261)?;
    check(
        unit(ap) && pat.iter().all(|&x| unit(x)) && pr11.iter().all(|&x| unit(x)),
        262,
    )?;
    let (mut aps, mut map_, mut mpat, mut mpr11) =
        ([f64::NAN; N], f64::NAN, [f64::NAN; 3], [f64::NAN; 11]);
    // SAFETY: `scores` and `rel` are `N × N`, `aps` holds `N`; the workspace
    // is the query's of `N` items.
    let st = unsafe {
        mvnmf_retrieval_metrics(
            scores,
            bb(rel.as_ptr()),
            bb(N),
            bb(N),
            bb(cutoffs.as_ptr()),
            bb(3),
            bb(aps.as_mut_ptr()),
            bb(&mut map_),
            bb(mpat.as_mut_ptr()),
            bb(mpr11.as_mut_ptr()),
            wk,
            wb,
        )
    };
    ok(st, 263)?;
    check(
        unit(map_)
            && map_ > 0.5
            && aps.iter().all(|&x| unit(x))
            && mpat.iter().all(|&x| unit(x))
            && mpr11.iter().all(|&x| unit(x)),
        264,
    )?;
    let ranked: [u8; 5] =
        core::array::from_fn(|p| u8::from(top.get(p).is_some_and(|&j| class(j) == class(0))));
    let (mut ap, mut pat, mut pr11) = (f64::NAN, [f64::NAN; 3], [f64::NAN; 11]);
    // SAFETY: `ranked` holds 5, `cutoffs` and `pat` 3, `pr11` 11.
    let st = unsafe {
        mvnmf_ranked_list_metrics(
            bb(ranked.as_ptr()),
            bb(5),
            bb(N / C),
            bb(cutoffs.as_ptr()),
            bb(3),
            bb(&mut ap),
            bb(pat.as_mut_ptr()),
            bb(pr11.as_mut_ptr()),
        )
    };
    ok(st, 265)?;
    check(
        unit(ap) && pat.iter().all(|&x| unit(x)) && pr11.iter().all(|&x| unit(x)),
        265,
    )?;

    // Multi-label metrics and AUROC: one-hot classes against the kNN
    // decisions, and against the encoding as scores.
    let onehot: [u8; C * N] = core::array::from_fn(|x| u8::from(class(x / C) == (x % C) as u32));
    let dec: [u8; C * N] =
        core::array::from_fn(|x| u8::from(pred.get(x / C).is_some_and(|&p| p == (x % C) as u32)));
    let mut ml = core::mem::MaybeUninit::<mvnmf_multilabel_scores>::zeroed();
    // SAFETY: both are `C × N`.
    let st = unsafe {
        mvnmf_multilabel_metrics(
            bb(onehot.as_ptr()),
            bb(dec.as_ptr()),
            bb(C),
            bb(N),
            bb(ml.as_mut_ptr()),
        )
    };
    ok(st, 266)?;
    // SAFETY: written on success.
    let ml = unsafe { ml.assume_init() };
    check(
        unit(ml.macro_f1) && unit(ml.micro_f1) && unit(ml.hamming_loss),
        266,
    )?;
    // SAFETY: a valid out-pointer.
    let (wk, wb) = work(|b| unsafe { mvnmf_average_auroc_workspace(bb(N), b) }, 267)?;
    let (mut per, mut mean, mut scored) = ([f64::NAN; K], f64::NAN, 0usize);
    // SAFETY: `onehot` and `v` are `K × N` (`K = C`), `per` holds `K`.
    let st = unsafe {
        mvnmf_average_auroc(
            bb(onehot.as_ptr()),
            bb(v.as_ptr()),
            bb(K),
            bb(N),
            bb(per.as_mut_ptr()),
            bb(&mut mean),
            bb(&mut scored),
            wk,
            wb,
        )
    };
    ok(st, 268)?;
    check(
        unit(mean) && per.iter().all(|&x| unit(x)) && scored == K,
        268,
    )?;

    // The `_f32` twins of evaluation on float copies: the same labels,
    // assignments and indices as their double routines, metrics to float
    // rounding.
    let xf: [f32; M0 * N] = core::array::from_fn(|i| d.x0.get(i).map_or(f32::NAN, |&x| x as f32));
    let xf_p = bb(xf.as_ptr());
    let (wk, wb) = work(
        |b| unsafe { mvnmf_knn_predict_workspace(bb(C), bb(&knn), b) },
        280,
    )?;
    let mut predf = [u32::MAX; N];
    // SAFETY: `xf` is `M0 × N`, labels and `predf` `N`.
    let st = unsafe {
        mvnmf_knn_predict_f32(
            xf_p,
            bb(M0),
            bb(N),
            bb(d.labels.as_ptr()),
            xf_p,
            bb(N),
            bb(C),
            bb(&knn),
            bb(predf.as_mut_ptr()),
            wk,
            wb,
        )
    };
    ok(st, 281)?;
    check(predf == pred, 281)?;
    // SAFETY: a valid out-pointer.
    let (wk, wb) = work(
        |b| unsafe { mvnmf_kmeans_f32_workspace(bb(M0), bb(N), bb(C), bb(&kmp), b) },
        282,
    )?;
    let mut assignf = [u32::MAX; N];
    let mut centf = [f32::NAN; M0 * C];
    // SAFETY: `assignf` holds `N`, `centf` `M0 × C`; the report may be NULL.
    let st = unsafe {
        mvnmf_kmeans_f32(
            xf_p,
            bb(M0),
            bb(N),
            bb(C),
            bb(&kmp),
            bb(assignf.as_mut_ptr()),
            bb(centf.as_mut_ptr()),
            wk,
            wb,
            bb(core::ptr::null_mut()),
        )
    };
    ok(st, 283)?;
    check(assignf.iter().all(|&a| (a as usize) < C) && centf.iter().all(|c| c.is_finite()), 283)?;
    let costf: [f32; C * C] = core::array::from_fn(|i| cost.get(i).map_or(f32::NAN, |&c| c as f32));
    // SAFETY: a valid out-pointer.
    let (wk, wb) = work(
        |b| unsafe { mvnmf_assignment_workspace(bb(C), bb(C), b) },
        284,
    )?;
    let (mut mapf, mut totalf) = ([usize::MAX; C], f64::NAN);
    // SAFETY: `costf` is `C × C`, `mapf` holds `C`.
    let st = unsafe {
        mvnmf_assignment_f32(
            bb(costf.as_ptr()),
            bb(C),
            bb(C),
            bb(1),
            bb(mapf.as_mut_ptr()),
            bb(&mut totalf),
            wk,
            wb,
        )
    };
    ok(st, 285)?;
    check(mapf == map && totalf == total, 285)?;
    let wf: [f32; N * N] = core::array::from_fn(|i| w.get(i).map_or(f32::NAN, |&x| x as f32));
    let scoresf = bb(wf.as_ptr());
    let mut topf = [usize::MAX; 5];
    // SAFETY: `scoresf` holds `N`, `topf` 5.
    ok(
        unsafe { mvnmf_top_n_f32(scoresf, bb(N), bb(5), bb(topf.as_mut_ptr())) },
        286,
    )?;
    check(topf.iter().all(|&j| j < N), 286)?;
    // SAFETY: a valid out-pointer.
    let (wk, wb) = work(|b| unsafe { mvnmf_query_metrics_workspace(bb(N), b) }, 287)?;
    let (mut apf, mut patf) = (f64::NAN, [f64::NAN; 3]);
    // SAFETY: `scoresf` and `rel` hold `N`, `cutoffs` and `patf` 3; `pr11` may be NULL.
    let st = unsafe {
        mvnmf_query_metrics_f32(
            scoresf,
            bb(rel.as_ptr()),
            bb(N),
            bb(cutoffs.as_ptr()),
            bb(3),
            bb(&mut apf),
            bb(patf.as_mut_ptr()),
            bb(core::ptr::null_mut()),
            wk,
            wb,
        )
    };
    ok(st, 288)?;
    check(unit(apf) && patf.iter().all(|&x| unit(x)), 288)?;
    let (mut mapf_, mut mpatf) = (f64::NAN, [f64::NAN; 3]);
    // SAFETY: `scoresf` and `rel` are `N × N`; the optional outputs NULL.
    let st = unsafe {
        mvnmf_retrieval_metrics_f32(
            scoresf,
            bb(rel.as_ptr()),
            bb(N),
            bb(N),
            bb(cutoffs.as_ptr()),
            bb(3),
            bb(core::ptr::null_mut()),
            bb(&mut mapf_),
            bb(mpatf.as_mut_ptr()),
            bb(core::ptr::null_mut()),
            wk,
            wb,
        )
    };
    ok(st, 289)?;
    check(unit(mapf_) && mpatf.iter().all(|&x| unit(x)), 289)?;
    let vf: [f32; K * N] = core::array::from_fn(|i| v.get(i).map_or(f32::NAN, |&x| x as f32));
    // SAFETY: a valid out-pointer.
    let (wk, wb) = work(|b| unsafe { mvnmf_average_auroc_workspace(bb(N), b) }, 290)?;
    let mut meanf = f64::NAN;
    // SAFETY: `onehot` and `vf` are `K × N`; the optional outputs NULL.
    let st = unsafe {
        mvnmf_average_auroc_f32(
            bb(onehot.as_ptr()),
            bb(vf.as_ptr()),
            bb(K),
            bb(N),
            bb(core::ptr::null_mut()),
            bb(&mut meanf),
            bb(core::ptr::null_mut()),
            wk,
            wb,
        )
    };
    ok(st, 291)?;
    check(unit(meanf), 291)?;

    // The defaults, mean ± std.
    let ep = bb(mvnmf_eval_params_default());
    let pp = bb(mvnmf_protocol_params_default());
    let cp = bb(mvnmf_cv_params_default());
    check(ep.knn.k > 0 && pp.splits > 0 && cp.folds > 1, 269)?;
    let (mut m, mut s) = (f64::NAN, f64::NAN);
    // SAFETY: `v` holds `K·N`.
    ok(
        unsafe { mvnmf_mean_std(bb(v.as_ptr()), bb(K * N), bb(&mut m), bb(&mut s)) },
        270,
    )?;
    check(m.is_finite() && s.is_finite() && s >= 0.0, 270)?;

    // One split scored, then the protocol and the cross-validation on the encoding.
    let ep = bb(mvnmf_eval_params {
        knn: mvnmf_knn_params { k: 3, ..ep.knn },
        kmeans: mvnmf_kmeans_params {
            restarts: 2,
            ..ep.kmeans
        },
        ..ep
    });
    let good = |s: &mvnmf_split_scores| {
        unit(s.knn_accuracy) && unit(s.kmeans_accuracy) && unit(s.kmeans_nmi) && s.knn_k > 0
    };
    // SAFETY: a valid out-pointer.
    let (wk, wb) = work(
        |b| unsafe { mvnmf_evaluate_split_workspace(bb(K), bb(N), bb(C), bb(&ep), b) },
        271,
    )?;
    let mut one = mvnmf_split_scores::default();
    // SAFETY: `v` is `K × N`, `truth` and `split` hold `N`.
    let st = unsafe {
        mvnmf_evaluate_split(
            bb(v.as_ptr()),
            bb(K),
            bb(N),
            truth,
            bb(C),
            bb(split.as_ptr()),
            bb(&ep),
            bb(&mut one),
            wk,
            wb,
        )
    };
    ok(st, 272)?;
    check(good(&one), 272)?;
    let pp = bb(mvnmf_protocol_params {
        splits: 2,
        eval: ep,
        ..pp
    });
    let fractions = bb([0.3f64, 0.6]);
    // SAFETY: a valid out-pointer.
    let (wk, wb) = work(
        |b| unsafe { mvnmf_evaluate_protocol_workspace(bb(K), bb(N), bb(C), bb(2), bb(&pp), b) },
        273,
    )?;
    let user = bb(v.as_ptr().cast_mut().cast::<c_void>());
    let mut scores = [mvnmf_split_scores::default(); 4];
    // SAFETY: `fractions` holds 2, `scores` 2 × 2; the callback only reads
    // `user` (the encoding).
    let st = unsafe {
        mvnmf_evaluate_protocol(
            truth,
            bb(N),
            bb(C),
            bb(fractions.as_ptr()),
            bb(2),
            bb(K),
            bb(&pp),
            bb(scores.as_mut_ptr()),
            wk,
            wb,
            bb(Some(proto_fit as unsafe extern "C" fn(_, _, _) -> _)),
            user,
        )
    };
    ok(st, 274)?;
    check(scores.iter().all(good), 274)?;
    let mut summary = [mvnmf_score_summary::default(); 2];
    // SAFETY: `scores` holds 2 × 2, `summary` 2.
    let st = unsafe {
        mvnmf_summarize_scores(bb(scores.as_ptr()), bb(2), bb(2), bb(summary.as_mut_ptr()))
    };
    ok(st, 275)?;
    check(
        summary
            .iter()
            .all(|s| unit(s.knn_mean) && s.knn_std.is_finite() && unit(s.kmeans_nmi_mean)),
        275,
    )?;
    let cp = bb(mvnmf_cv_params {
        folds: 3,
        knn: mvnmf_knn_params { k: 3, ..cp.knn },
        ..cp
    });
    let grid = bb([1.0f64, 2.0]);
    // SAFETY: a valid out-pointer.
    let (wk, wb) = work(
        |b| unsafe { mvnmf_cross_validate_workspace(bb(K), bb(N), bb(C), bb(2), bb(&cp), b) },
        276,
    )?;
    let (mut cvs, mut best) = ([f64::NAN; 2], usize::MAX);
    // SAFETY: `grid` holds 2 × 1, `cvs` 2; the callback as above.
    let st = unsafe {
        mvnmf_cross_validate(
            bb(d.labels.as_ptr()),
            bb(N),
            bb(C),
            bb(K),
            bb(grid.as_ptr()),
            bb(2),
            bb(1),
            bb(&cp),
            bb(cvs.as_mut_ptr()),
            bb(&mut best),
            wk,
            wb,
            bb(Some(cv_fit as unsafe extern "C" fn(_, _, _) -> _)),
            user,
        )
    };
    ok(st, 277)?;
    check(best < 2 && cvs.iter().all(|&x| unit(x)), 277)
}
