//! The C ABI's model entry points (NMF, joint NMF, NNDSVD, β-NMF, MvSL, deep,
//! JSNMF, MVEL, distributed, data preparation, eigensolver, ABI and status
//! helpers), each called through `mvnmf::ffi` as a Rust function with every
//! argument passed through [`black_box`] (the `call!` macro): pointers,
//! dimensions, ranks, option structs, labels, CSC arrays, the progress
//! callback, the host `parallel_for` of `mvnmf_parallel`, the communicator.
//! So the link-time proof holds for whatever a C caller passes, not for these
//! values. Every call is then checked (status OK, objectives fell, outputs
//! finite). Exit codes 100..=199.
//!
//! Covered: every `#[no_mangle]` function of `src/ffi/{nmf, mvsl, deep, jsnmf,
//! mvel, dist, data, abi, linalg}.rs` and the four of `src/ffi/mod.rs` (103).

use core::ffi::{c_char, c_int, c_void};
use core::hint::black_box;
use core::ptr::{null, null_mut};

use mvnmf::ffi::*;

const M: usize = 12;
const N: usize = 10;
const K: usize = 3;
/// The deep model's layer sizes (`K` on top).
const LAYERS: [usize; 2] = [6, K];
/// Room for one view's deep factor buffer (`12·6 + 6·3 = 90` values).
const DEEP_LEN: usize = 96;
/// MVEL: labels, embedding dimension, anchors, anchors per item.
const C: usize = 3;
const R: usize = 2;
const ANCHORS: usize = 4;
const S: usize = 2;
/// JSNMF: shared basis vectors, each source's rank.
const JK: usize = 2;
const JR: usize = 3;
/// Top items per query of the JSNMF ranking.
const TOP: usize = 3;
/// Capacity of the distributed TGE's CSR outputs.
const CAP: usize = 256;
/// Ring graph over the items: two neighbours each.
const RING: usize = 2 * N;

/// The workspace of these calls (2 MiB, 8-byte aligned: NN-descent's pair
/// buffers in `mvnmf_dist_tge_approx` take 1.5 MiB).
static mut WS: [u64; 1 << 18] = [0; 1 << 18];

/// Calls `$f` with every argument through `black_box`.
macro_rules! call {
    ($f:path $(, $a:expr)* $(,)?) => {
        $f($(black_box($a)),*)
    };
}

/// The workspace as a C pointer and `need` bytes, or `Err(code)` when the
/// static buffer is smaller.
fn ws(need: usize, code: i32) -> Result<(*mut c_void, usize), i32> {
    if need > core::mem::size_of::<[u64; 1 << 18]>() {
        return Err(code);
    }
    Ok((core::ptr::addr_of_mut!(WS).cast::<c_void>(), need))
}

/// `Ok` for `MVNMF_STATUS_OK`, else `Err(code)`.
fn ok(s: mvnmf_status, code: i32) -> Result<(), i32> {
    if s == mvnmf_status::Ok {
        Ok(())
    } else {
        Err(code)
    }
}

fn check(cond: bool, code: i32) -> Result<(), i32> {
    if cond {
        Ok(())
    } else {
        Err(code)
    }
}

/// Every value finite.
fn finite<T: Copy + Into<f64>>(s: &[T]) -> bool {
    s.iter().all(|&x| x.into().is_finite())
}

/// A report to be written.
fn report() -> mvnmf_report {
    mvnmf_report {
        iterations: 0,
        stop: u32::MAX,
        dead_views: 0,
        initial: mvnmf_objective::default(),
        objective: mvnmf_objective::default(),
        where_arg: u32::MAX,
        where_view: 0,
        where_row: 0,
        where_col: 0,
    }
}

/// The objective fell and the callback saw every iteration and the start.
fn fell(r: &mvnmf_report, calls: u32, code: i32) -> Result<(), i32> {
    check(
        r.objective.total.is_finite()
            && r.objective.total < r.initial.total
            && r.iterations > 0
            && calls == r.iterations + 1,
        code,
    )
}

/// The progress callback: counts its calls in `*user` (a `u32`), never stops.
unsafe extern "C" fn progress(p: *const mvnmf_progress, user: *mut c_void) -> c_int {
    // SAFETY: the library passes a valid progress record; `user` is the
    // caller's `u32` counter (or NULL).
    unsafe {
        if !user.is_null() && !p.is_null() && (*p).objective.total.is_finite() {
            *user.cast::<u32>() += 1;
        }
    }
    0
}
const PROGRESS: mvnmf_progress_fn = Some(progress);

/// The host pool of these calls.
fn parallel() -> mvnmf_parallel {
    mvnmf_parallel {
        threads: 1,
        reserved: 0,
        parallel_for: Some(crate::serial_for),
        ctx: null_mut(),
    }
}

/// Single rank: the sum over ranks is the buffer itself.
unsafe extern "C" fn allreduce(_buf: *mut f64, _len: usize, _ctx: *mut c_void) -> c_int {
    0
}

/// Single rank: what is sent to rank 0 is what rank 0 receives.
unsafe extern "C" fn exchange(
    send: *const f64,
    send_counts: *const usize,
    recv: *mut f64,
    recv_counts: *const usize,
    _ctx: *mut c_void,
) -> c_int {
    // SAFETY: one rank: each count array has one entry, the buffers that many
    // values.
    unsafe {
        let (s, r) = (*send_counts, *recv_counts);
        if s != r {
            return 1;
        }
        if s > 0 {
            core::ptr::copy_nonoverlapping(send, recv, s);
        }
    }
    0
}

/// Single rank: the gathered buffer is the rank's part.
unsafe extern "C" fn allgather(
    part: *const f64,
    part_len: usize,
    out: *mut f64,
    counts: *const usize,
    _ctx: *mut c_void,
) -> c_int {
    // SAFETY: one rank: `counts` has one entry, `out` that many values.
    unsafe {
        if *counts != part_len {
            return 1;
        }
        if part_len > 0 {
            core::ptr::copy_nonoverlapping(part, out, part_len);
        }
    }
    0
}

/// A static C string's length (at most 256), 0 for NULL.
fn c_len(p: *const c_char) -> usize {
    if p.is_null() {
        return 0;
    }
    // SAFETY: the library returns static NUL-terminated strings; the scan
    // stops at the NUL (or after 256 bytes, which none reaches).
    (0..256).find(|&i| unsafe { *p.add(i) } == 0).unwrap_or(256)
}

/// The inputs: a dense `M × N` view and a CSC one (the entries with
/// `(i + j) % 3 != 0`, plus 0.5), in double and single precision; labels
/// (SGE: every other item, two classes; TGE: all but two); a symmetric ring
/// graph over the items (CSR) and a dense one; MVEL's 0/1 labels and anchor
/// graph.
struct Data {
    x: [f64; M * N],
    xf: [f32; M * N],
    col_ptr: [usize; N + 1],
    row_idx: [usize; M * N],
    vals: [f64; M * N],
    valsf: [f32; M * N],
    sge: [u32; N],
    tge: [u32; N],
    ring_ptr: [usize; N + 1],
    ring_idx: [usize; RING],
    ring_w: [f64; RING],
    dense_graph: [f64; N * N],
    y: [u8; C * N],
    anchor_idx: [usize; S * N],
    anchor_z: [f64; S * N],
}

impl Data {
    fn new() -> Data {
        let mut d = Data {
            x: [0.0; M * N],
            xf: [0.0; M * N],
            col_ptr: [0; N + 1],
            row_idx: [0; M * N],
            vals: [0.0; M * N],
            valsf: [0.0; M * N],
            sge: [mvnmf::eval::UNLABELED; N],
            tge: [mvnmf::eval::UNLABELED; N],
            ring_ptr: [0; N + 1],
            ring_idx: [0; RING],
            ring_w: [1.0; RING],
            dense_graph: [0.0; N * N],
            y: [0; C * N],
            anchor_idx: [0; S * N],
            anchor_z: [0.0; S * N],
        };
        for (i, (v, f)) in d.x.iter_mut().zip(d.xf.iter_mut()).enumerate() {
            *v = ((i * 7919) % 97) as f64 / 97.0;
            *f = *v as f32;
        }
        let mut nnz = 0;
        let mut slots = d
            .row_idx
            .iter_mut()
            .zip(d.vals.iter_mut().zip(&mut d.valsf));
        for (j, (ptr, col)) in d
            .col_ptr
            .iter_mut()
            .skip(1)
            .zip(d.x.chunks_exact(M))
            .enumerate()
        {
            for (i, &xi) in col.iter().enumerate() {
                if (i + j) % 3 != 0 {
                    if let Some((r, (v, f))) = slots.next() {
                        (*r, *v, *f) = (i, 0.5 + xi, (0.5 + xi) as f32);
                        nnz += 1;
                    }
                }
            }
            *ptr = nnz;
        }
        for (j, l) in d.sge.iter_mut().enumerate().step_by(2) {
            *l = (j % 4 / 2) as u32;
        }
        for (j, l) in d.tge.iter_mut().enumerate().take(N - 2) {
            *l = (j % 2) as u32;
        }
        for j in 0..N {
            // Neighbours j − 1 and j + 1 (mod N), sorted.
            let (a, b) = ((j + N - 1) % N, (j + 1) % N);
            d.ring_idx[2 * j] = a.min(b);
            d.ring_idx[2 * j + 1] = a.max(b);
            d.ring_ptr[j + 1] = 2 * j + 2;
            for i in 0..N {
                if i != j {
                    d.dense_graph[i + j * N] = 1.0 / (1 + i.abs_diff(j)) as f64;
                }
            }
            for s in 0..C {
                d.y[s + j * C] = ((j + s) % 3 == 0) as u8;
            }
            d.anchor_idx[S * j] = j % ANCHORS;
            d.anchor_idx[S * j + 1] = (j + 1) % ANCHORS;
            d.anchor_z[S * j] = 0.6;
            d.anchor_z[S * j + 1] = 0.4;
        }
        d
    }

    /// The dense and the CSC view.
    fn views(&self) -> [mvnmf_view; 2] {
        [
            mvnmf_view {
                kind: MVNMF_VIEW_DENSE,
                rows: M,
                cols: N,
                values: self.x.as_ptr(),
                col_stride: M,
                col_ptr: null(),
                row_idx: null(),
            },
            mvnmf_view {
                kind: MVNMF_VIEW_CSC,
                rows: M,
                cols: N,
                values: self.vals.as_ptr(),
                col_stride: 0,
                col_ptr: self.col_ptr.as_ptr(),
                row_idx: self.row_idx.as_ptr(),
            },
        ]
    }

    /// The same in single precision.
    fn views_f32(&self) -> [mvnmf_view_f32; 2] {
        [
            mvnmf_view_f32 {
                kind: MVNMF_VIEW_DENSE,
                rows: M,
                cols: N,
                values: self.xf.as_ptr(),
                col_stride: M,
                col_ptr: null(),
                row_idx: null(),
            },
            mvnmf_view_f32 {
                kind: MVNMF_VIEW_CSC,
                rows: M,
                cols: N,
                values: self.valsf.as_ptr(),
                col_stride: 0,
                col_ptr: self.col_ptr.as_ptr(),
                row_idx: self.row_idx.as_ptr(),
            },
        ]
    }

    /// A graph descriptor of `kind` over the items (SGE labels, the ring as
    /// CSR affinity, or the dense graph).
    fn graph(&self, kind: u32) -> mvnmf_graph {
        mvnmf_graph {
            kind,
            n: N,
            labels: self.sge.as_ptr(),
            n_classes: 2,
            affinity_row_ptr: self.ring_ptr.as_ptr(),
            affinity_col_idx: self.ring_idx.as_ptr(),
            affinity_weights: if kind == MVNMF_GRAPH_DENSE {
                self.dense_graph.as_ptr()
            } else {
                self.ring_w.as_ptr()
            },
            penalty_row_ptr: null(),
            penalty_col_idx: null(),
            penalty_weights: null(),
        }
    }
}

/// 0 when every call succeeded and checked out, else its code.
pub fn run() -> i32 {
    let d = Data::new();
    let parts: [fn(&Data) -> Result<(), i32>; 10] = [
        nmf, nmf_f32, mvsl, deep, jsnmf, mvel, mvel_f32, dist, dist_f32, misc,
    ];
    for part in parts {
        if let Err(code) = part(&d) {
            return code;
        }
    }
    0
}

/// NMF options for these calls: few iterations, every one run, the host pool.
fn nmf_params() -> mvnmf_nmf_params {
    mvnmf_nmf_params {
        max_iter: 25,
        tol: 0.0,
        parallel: parallel(),
        ..mvnmf_nmf_params_default()
    }
}

/// `src/ffi/nmf.rs`, double precision: NMF and its encode on each view,
/// joint NMF and its encode on both, NNDSVD, β-NMF (KL, a mask on the dense
/// view). Codes 100..=119.
fn nmf(d: &Data) -> Result<(), i32> {
    let p = nmf_params();
    let views = d.views();
    // SAFETY (every call of this function): the views point at `d`'s arrays of
    // the sizes they state; every output buffer has the documented size; the
    // workspace holds the queried bytes; nothing overlaps.
    for (i, view) in views.iter().enumerate() {
        let c = 100 + 2 * i as i32;
        let (mut u, mut v, mut e) = ([0.0f64; M * K], [0.0f64; K * N], [0.0f64; K * N]);
        let (mut need, mut calls, mut rep) = (0usize, 0u32, report());
        ok(
            unsafe { call!(mvnmf_nmf_fit_workspace, view, K, &p, &mut need) },
            c,
        )?;
        let (w, wb) = ws(need, c)?;
        ok(
            unsafe {
                call!(
                    mvnmf_nmf_fit,
                    view,
                    K,
                    &p,
                    u.as_mut_ptr(),
                    v.as_mut_ptr(),
                    w,
                    wb,
                    PROGRESS,
                    (&mut calls as *mut u32).cast(),
                    &mut rep
                )
            },
            c,
        )?;
        fell(&rep, calls, c)?;
        check(finite(&u) && finite(&v), c)?;
        ok(
            unsafe { call!(mvnmf_nmf_encode_workspace, view, K, &p, &mut need) },
            c + 1,
        )?;
        let (w, wb) = ws(need, c + 1)?;
        calls = 0;
        ok(
            unsafe {
                call!(
                    mvnmf_nmf_encode,
                    view,
                    K,
                    &p,
                    u.as_ptr(),
                    e.as_mut_ptr(),
                    w,
                    wb,
                    PROGRESS,
                    (&mut calls as *mut u32).cast(),
                    &mut rep
                )
            },
            c + 1,
        )?;
        check(finite(&e) && calls > 0, c + 1)?;
    }
    // Joint NMF and its encode on both views.
    let (mut u1, mut u2, mut v) = ([0.0f64; M * K], [0.0f64; M * K], [0.0f64; K * N]);
    let us = [u1.as_mut_ptr(), u2.as_mut_ptr()];
    let (mut need, mut calls, mut rep) = (0usize, 0u32, report());
    ok(
        unsafe {
            call!(
                mvnmf_joint_nmf_fit_workspace,
                views.as_ptr(),
                2,
                K,
                &p,
                &mut need
            )
        },
        104,
    )?;
    let (w, wb) = ws(need, 104)?;
    ok(
        unsafe {
            call!(
                mvnmf_joint_nmf_fit,
                views.as_ptr(),
                2,
                K,
                &p,
                us.as_ptr(),
                v.as_mut_ptr(),
                w,
                wb,
                PROGRESS,
                (&mut calls as *mut u32).cast(),
                &mut rep
            )
        },
        104,
    )?;
    fell(&rep, calls, 104)?;
    check(finite(&u1) && finite(&u2) && finite(&v), 104)?;
    let mut e = [0.0f64; K * N];
    let ub = [u1.as_ptr(), u2.as_ptr()];
    ok(
        unsafe {
            call!(
                mvnmf_joint_nmf_encode_workspace,
                views.as_ptr(),
                2,
                K,
                &p,
                &mut need
            )
        },
        105,
    )?;
    let (w, wb) = ws(need, 105)?;
    ok(
        unsafe {
            call!(
                mvnmf_joint_nmf_encode,
                views.as_ptr(),
                2,
                K,
                &p,
                ub.as_ptr(),
                e.as_mut_ptr(),
                w,
                wb,
                PROGRESS,
                null_mut(),
                &mut rep
            )
        },
        105,
    )?;
    check(finite(&e), 105)?;
    // NNDSVDa of the two views stacked, then a warm-started fit from it.
    ok(
        unsafe { call!(mvnmf_nndsvd_workspace, views.as_ptr(), 2, K, &mut need) },
        106,
    )?;
    let (w, wb) = ws(need, 106)?;
    ok(
        unsafe {
            call!(
                mvnmf_nndsvd,
                views.as_ptr(),
                2,
                K,
                MVNMF_NNDSVDA,
                7u64,
                us.as_ptr(),
                v.as_mut_ptr(),
                w,
                wb
            )
        },
        106,
    )?;
    check(finite(&u1) && finite(&u2) && finite(&v), 106)?;
    let warm = mvnmf_nmf_params {
        init: MVNMF_INIT_GIVEN,
        ..p
    };
    calls = 0;
    let (w, wb) = ws(
        {
            ok(
                unsafe {
                    call!(
                        mvnmf_joint_nmf_fit_workspace,
                        views.as_ptr(),
                        2,
                        K,
                        &warm,
                        &mut need
                    )
                },
                107,
            )?;
            need
        },
        107,
    )?;
    ok(
        unsafe {
            call!(
                mvnmf_joint_nmf_fit,
                views.as_ptr(),
                2,
                K,
                &warm,
                us.as_ptr(),
                v.as_mut_ptr(),
                w,
                wb,
                PROGRESS,
                (&mut calls as *mut u32).cast(),
                &mut rep
            )
        },
        107,
    )?;
    fell(&rep, calls, 107)?;
    // β-NMF, Kullback–Leibler (CSC views need β = 1), a mask on the dense view.
    let mut mask = [1u8; M * N];
    mask.iter_mut().step_by(7).for_each(|b| *b = 0);
    let masks = [mask.as_ptr(), null()];
    ok(
        unsafe {
            call!(
                mvnmf_beta_nmf_fit_workspace,
                views.as_ptr(),
                2,
                K,
                1.0f64,
                &p,
                &mut need
            )
        },
        108,
    )?;
    let (w, wb) = ws(need, 108)?;
    calls = 0;
    ok(
        unsafe {
            call!(
                mvnmf_beta_nmf_fit,
                views.as_ptr(),
                2,
                K,
                1.0f64,
                -1.0f64,
                masks.as_ptr(),
                &p,
                us.as_ptr(),
                v.as_mut_ptr(),
                w,
                wb,
                PROGRESS,
                (&mut calls as *mut u32).cast(),
                &mut rep
            )
        },
        108,
    )?;
    fell(&rep, calls, 108)?;
    check(
        finite(&u1)
            && finite(&u2)
            && finite(&v)
            && unsafe { call!(mvnmf_objective_term, &rep.objective, MVNMF_TERM_DIVERGENCE) }
                == rep.objective.total,
        108,
    )
}

/// `src/ffi/nmf.rs`, the `_f32` twins. Codes 120..=129.
fn nmf_f32(d: &Data) -> Result<(), i32> {
    let p = nmf_params();
    let views = d.views_f32();
    // SAFETY (every call of this function): as in `nmf`, with `float` buffers.
    for (i, view) in views.iter().enumerate() {
        let c = 120 + 2 * i as i32;
        let (mut u, mut v, mut e) = ([0.0f32; M * K], [0.0f32; K * N], [0.0f32; K * N]);
        let (mut need, mut calls, mut rep) = (0usize, 0u32, report());
        ok(
            unsafe { call!(mvnmf_nmf_fit_f32_workspace, view, K, &p, &mut need) },
            c,
        )?;
        let (w, wb) = ws(need, c)?;
        ok(
            unsafe {
                call!(
                    mvnmf_nmf_fit_f32,
                    view,
                    K,
                    &p,
                    u.as_mut_ptr(),
                    v.as_mut_ptr(),
                    w,
                    wb,
                    PROGRESS,
                    (&mut calls as *mut u32).cast(),
                    &mut rep
                )
            },
            c,
        )?;
        fell(&rep, calls, c)?;
        check(finite(&u) && finite(&v), c)?;
        ok(
            unsafe { call!(mvnmf_nmf_encode_f32_workspace, view, K, &p, &mut need) },
            c + 1,
        )?;
        let (w, wb) = ws(need, c + 1)?;
        ok(
            unsafe {
                call!(
                    mvnmf_nmf_encode_f32,
                    view,
                    K,
                    &p,
                    u.as_ptr(),
                    e.as_mut_ptr(),
                    w,
                    wb,
                    PROGRESS,
                    null_mut(),
                    &mut rep
                )
            },
            c + 1,
        )?;
        check(finite(&e), c + 1)?;
    }
    let (mut u1, mut u2, mut v) = ([0.0f32; M * K], [0.0f32; M * K], [0.0f32; K * N]);
    let us = [u1.as_mut_ptr(), u2.as_mut_ptr()];
    let (mut need, mut calls, mut rep) = (0usize, 0u32, report());
    ok(
        unsafe {
            call!(
                mvnmf_joint_nmf_fit_f32_workspace,
                views.as_ptr(),
                2,
                K,
                &p,
                &mut need
            )
        },
        124,
    )?;
    let (w, wb) = ws(need, 124)?;
    ok(
        unsafe {
            call!(
                mvnmf_joint_nmf_fit_f32,
                views.as_ptr(),
                2,
                K,
                &p,
                us.as_ptr(),
                v.as_mut_ptr(),
                w,
                wb,
                PROGRESS,
                (&mut calls as *mut u32).cast(),
                &mut rep
            )
        },
        124,
    )?;
    fell(&rep, calls, 124)?;
    check(finite(&u1) && finite(&u2) && finite(&v), 124)?;
    let mut e = [0.0f32; K * N];
    let ub = [u1.as_ptr(), u2.as_ptr()];
    ok(
        unsafe {
            call!(
                mvnmf_joint_nmf_encode_f32_workspace,
                views.as_ptr(),
                2,
                K,
                &p,
                &mut need
            )
        },
        125,
    )?;
    let (w, wb) = ws(need, 125)?;
    ok(
        unsafe {
            call!(
                mvnmf_joint_nmf_encode_f32,
                views.as_ptr(),
                2,
                K,
                &p,
                ub.as_ptr(),
                e.as_mut_ptr(),
                w,
                wb,
                PROGRESS,
                null_mut(),
                &mut rep
            )
        },
        125,
    )?;
    check(finite(&e), 125)?;
    let mask = [1u8; M * N];
    let masks = [mask.as_ptr(), null()];
    ok(
        unsafe {
            call!(
                mvnmf_beta_nmf_fit_f32_workspace,
                views.as_ptr(),
                2,
                K,
                1.0f64,
                &p,
                &mut need
            )
        },
        126,
    )?;
    let (w, wb) = ws(need, 126)?;
    calls = 0;
    ok(
        unsafe {
            call!(
                mvnmf_beta_nmf_fit_f32,
                views.as_ptr(),
                2,
                K,
                1.0f64,
                0.0f64,
                masks.as_ptr(),
                &p,
                us.as_ptr(),
                v.as_mut_ptr(),
                w,
                wb,
                PROGRESS,
                (&mut calls as *mut u32).cast(),
                &mut rep
            )
        },
        126,
    )?;
    fell(&rep, calls, 126)?;
    check(finite(&u1) && finite(&u2) && finite(&v), 126)
}

/// MvSL options from a preset: few iterations, the host pool.
fn mvsl_params(preset: u32, code: i32) -> Result<mvnmf_mvsl_params, i32> {
    let mut p = mvnmf_mvsl_params_default();
    // SAFETY: `p` is a valid output struct.
    ok(
        unsafe { call!(mvnmf_mvsl_params_preset, preset, &mut p) },
        code,
    )?;
    Ok(mvnmf_mvsl_params {
        max_iter: 15,
        tol: 0.0,
        parallel: parallel(),
        ..p
    })
}

/// `src/ffi/mvsl.rs`: MvSL with SGE on both views and its encode without a
/// graph; MCL on the `float` views with the ring as CSR and its encode; GNMF
/// with the dense graph. Codes 130..=139.
fn mvsl(d: &Data) -> Result<(), i32> {
    let views = d.views();
    let views_f = d.views_f32();
    let sge = d.graph(MVNMF_GRAPH_SGE);
    let none = d.graph(MVNMF_GRAPH_NONE);
    let csr = d.graph(MVNMF_GRAPH_CSR);
    let dense = d.graph(MVNMF_GRAPH_DENSE);
    let (mut u1, mut u2, mut v) = ([0.0f64; M * K], [0.0f64; M * K], [0.0f64; K * N]);
    let us = [u1.as_mut_ptr(), u2.as_mut_ptr()];
    let (mut need, mut calls, mut rep);
    (need, rep) = (0usize, report());
    // SAFETY (every call of this function): the views and graphs point at
    // `d`'s arrays of the sizes they state; outputs of the documented sizes;
    // the workspace holds the queried bytes; nothing overlaps.
    for (preset, g, c) in [
        (MVNMF_MVSL_PRESET_MVSL, &sge, 130),
        (MVNMF_MVSL_PRESET_GNMF, &dense, 131),
    ] {
        let p = mvsl_params(preset, c)?;
        ok(
            unsafe {
                call!(
                    mvnmf_mvsl_fit_workspace,
                    views.as_ptr(),
                    2,
                    g,
                    K,
                    &p,
                    &mut need
                )
            },
            c,
        )?;
        let (w, wb) = ws(need, c)?;
        calls = 0;
        ok(
            unsafe {
                call!(
                    mvnmf_mvsl_fit,
                    views.as_ptr(),
                    2,
                    g,
                    K,
                    &p,
                    us.as_ptr(),
                    v.as_mut_ptr(),
                    w,
                    wb,
                    PROGRESS,
                    (&mut calls as *mut u32).cast(),
                    &mut rep
                )
            },
            c,
        )?;
        fell(&rep, calls, c)?;
        check(finite(&u1) && finite(&u2) && finite(&v), c)?;
    }
    let p = mvsl_params(MVNMF_MVSL_PRESET_MVSL, 132)?;
    let ub = [u1.as_ptr(), u2.as_ptr()];
    let mut e = [0.0f64; K * N];
    ok(
        unsafe {
            call!(
                mvnmf_mvsl_encode_workspace,
                views.as_ptr(),
                2,
                &none,
                K,
                &p,
                &mut need
            )
        },
        132,
    )?;
    let (w, wb) = ws(need, 132)?;
    ok(
        unsafe {
            call!(
                mvnmf_mvsl_encode,
                views.as_ptr(),
                2,
                &none,
                K,
                &p,
                ub.as_ptr(),
                e.as_mut_ptr(),
                w,
                wb,
                PROGRESS,
                null_mut(),
                &mut rep
            )
        },
        132,
    )?;
    check(finite(&e), 132)?;
    // Single precision, MCL with the ring graph.
    let p = mvsl_params(MVNMF_MVSL_PRESET_MCL, 133)?;
    let (mut f1, mut f2, mut fv) = ([0.0f32; M * K], [0.0f32; M * K], [0.0f32; K * N]);
    let fs = [f1.as_mut_ptr(), f2.as_mut_ptr()];
    ok(
        unsafe {
            call!(
                mvnmf_mvsl_fit_f32_workspace,
                views_f.as_ptr(),
                2,
                &csr,
                K,
                &p,
                &mut need
            )
        },
        133,
    )?;
    let (w, wb) = ws(need, 133)?;
    calls = 0;
    ok(
        unsafe {
            call!(
                mvnmf_mvsl_fit_f32,
                views_f.as_ptr(),
                2,
                &csr,
                K,
                &p,
                fs.as_ptr(),
                fv.as_mut_ptr(),
                w,
                wb,
                PROGRESS,
                (&mut calls as *mut u32).cast(),
                &mut rep
            )
        },
        133,
    )?;
    fell(&rep, calls, 133)?;
    check(finite(&f1) && finite(&f2) && finite(&fv), 133)?;
    let fb = [f1.as_ptr(), f2.as_ptr()];
    let mut fe = [0.0f32; K * N];
    ok(
        unsafe {
            call!(
                mvnmf_mvsl_encode_f32_workspace,
                views_f.as_ptr(),
                2,
                &csr,
                K,
                &p,
                &mut need
            )
        },
        134,
    )?;
    let (w, wb) = ws(need, 134)?;
    ok(
        unsafe {
            call!(
                mvnmf_mvsl_encode_f32,
                views_f.as_ptr(),
                2,
                &csr,
                K,
                &p,
                fb.as_ptr(),
                fe.as_mut_ptr(),
                w,
                wb,
                PROGRESS,
                null_mut(),
                &mut rep
            )
        },
        134,
    )?;
    check(finite(&fe), 134)
}

/// Deep options from a preset: few iterations, the host pool.
fn deep_params(preset: u32, code: i32) -> Result<mvnmf_deep_params, i32> {
    let mut p = mvnmf_deep_params_default();
    // SAFETY: `p` is a valid output struct.
    ok(
        unsafe { call!(mvnmf_deep_params_preset, preset, &mut p) },
        code,
    )?;
    Ok(mvnmf_deep_params {
        top: mvnmf_mvsl_params {
            max_iter: 12,
            tol: 0.0,
            parallel: parallel(),
            ..p.top
        },
        pretrain_iter: 10,
        v_init: MVNMF_DEEP_V_PRETRAINED,
        ..p
    })
}

/// `src/ffi/deep.rs`: DMCL with SGE (double) and DNMF with the ring graph
/// (`float`), two layers, on both views; each encoded. Codes 140..=149.
fn deep(d: &Data) -> Result<(), i32> {
    let views = d.views();
    let views_f = d.views_f32();
    let sge = d.graph(MVNMF_GRAPH_SGE);
    let csr = d.graph(MVNMF_GRAPH_CSR);
    let mut len = 0usize;
    // SAFETY (every call of this function): as in `mvsl`; the factor buffers
    // hold `mvnmf_deep_factor_len` values (checked against `DEEP_LEN`).
    ok(
        unsafe {
            call!(
                mvnmf_deep_factor_len,
                M,
                LAYERS.as_ptr(),
                LAYERS.len(),
                &mut len
            )
        },
        140,
    )?;
    check(len == M * LAYERS[0] + LAYERS[0] * K && len <= DEEP_LEN, 140)?;
    let p = deep_params(MVNMF_DEEP_PRESET_DMCL, 141)?;
    let (mut u1, mut u2, mut v) = ([0.0f64; DEEP_LEN], [0.0f64; DEEP_LEN], [0.0f64; K * N]);
    let us = [u1.as_mut_ptr(), u2.as_mut_ptr()];
    let (mut need, mut calls, mut rep) = (0usize, 0u32, report());
    ok(
        unsafe {
            call!(
                mvnmf_deep_fit_workspace,
                views.as_ptr(),
                2,
                &sge,
                LAYERS.as_ptr(),
                LAYERS.len(),
                &p,
                &mut need
            )
        },
        141,
    )?;
    let (w, wb) = ws(need, 141)?;
    ok(
        unsafe {
            call!(
                mvnmf_deep_fit,
                views.as_ptr(),
                2,
                &sge,
                LAYERS.as_ptr(),
                LAYERS.len(),
                &p,
                us.as_ptr(),
                v.as_mut_ptr(),
                w,
                wb,
                PROGRESS,
                (&mut calls as *mut u32).cast(),
                &mut rep
            )
        },
        141,
    )?;
    fell(&rep, calls, 141)?;
    check(finite(&u1) && finite(&u2) && finite(&v), 141)?;
    let ub = [u1.as_ptr(), u2.as_ptr()];
    let mut e = [0.0f64; K * N];
    ok(
        unsafe {
            call!(
                mvnmf_deep_encode_workspace,
                views.as_ptr(),
                2,
                &sge,
                LAYERS.as_ptr(),
                LAYERS.len(),
                &p,
                &mut need
            )
        },
        142,
    )?;
    let (w, wb) = ws(need, 142)?;
    ok(
        unsafe {
            call!(
                mvnmf_deep_encode,
                views.as_ptr(),
                2,
                &sge,
                LAYERS.as_ptr(),
                LAYERS.len(),
                &p,
                ub.as_ptr(),
                e.as_mut_ptr(),
                w,
                wb,
                PROGRESS,
                null_mut(),
                &mut rep
            )
        },
        142,
    )?;
    check(finite(&e), 142)?;
    let p = deep_params(MVNMF_DEEP_PRESET_DNMF, 143)?;
    let (mut f1, mut f2, mut fv) = ([0.0f32; DEEP_LEN], [0.0f32; DEEP_LEN], [0.0f32; K * N]);
    let fs = [f1.as_mut_ptr(), f2.as_mut_ptr()];
    ok(
        unsafe {
            call!(
                mvnmf_deep_fit_f32_workspace,
                views_f.as_ptr(),
                2,
                &csr,
                LAYERS.as_ptr(),
                LAYERS.len(),
                &p,
                &mut need
            )
        },
        143,
    )?;
    let (w, wb) = ws(need, 143)?;
    calls = 0;
    ok(
        unsafe {
            call!(
                mvnmf_deep_fit_f32,
                views_f.as_ptr(),
                2,
                &csr,
                LAYERS.as_ptr(),
                LAYERS.len(),
                &p,
                fs.as_ptr(),
                fv.as_mut_ptr(),
                w,
                wb,
                PROGRESS,
                (&mut calls as *mut u32).cast(),
                &mut rep
            )
        },
        143,
    )?;
    fell(&rep, calls, 143)?;
    check(finite(&f1) && finite(&f2) && finite(&fv), 143)?;
    let fb = [f1.as_ptr(), f2.as_ptr()];
    let mut fe = [0.0f32; K * N];
    ok(
        unsafe {
            call!(
                mvnmf_deep_encode_f32_workspace,
                views_f.as_ptr(),
                2,
                &csr,
                LAYERS.as_ptr(),
                LAYERS.len(),
                &p,
                &mut need
            )
        },
        144,
    )?;
    let (w, wb) = ws(need, 144)?;
    ok(
        unsafe {
            call!(
                mvnmf_deep_encode_f32,
                views_f.as_ptr(),
                2,
                &csr,
                LAYERS.as_ptr(),
                LAYERS.len(),
                &p,
                fb.as_ptr(),
                fe.as_mut_ptr(),
                w,
                wb,
                PROGRESS,
                null_mut(),
                &mut rep
            )
        },
        144,
    )?;
    check(finite(&fe), 144)
}

/// The rankings are item indices, each query's best first.
fn ranked(idx: &[usize], scores: &[f64]) -> bool {
    idx.iter().all(|&i| i < N)
        && finite(scores)
        && scores
            .chunks_exact(TOP)
            .all(|s| s.windows(2).all(|w| w[0] >= w[1]))
}

/// `src/ffi/jsnmf.rs`: JSNMF of the two views as two sources (double and
/// `float`), the CSC view's columns encoded as queries against source 1's
/// basis, ranked against its items; the one-call query with exclusions.
/// Codes 150..=164.
fn jsnmf(d: &Data) -> Result<(), i32> {
    let views = d.views();
    let views_f = d.views_f32();
    let p = mvnmf_jsnmf_params {
        max_iter: 25,
        tol: 0.0,
        ..mvnmf_jsnmf_params_default()
    };
    let qp = mvnmf_jsnmf_query_params {
        max_iter: 30,
        ..mvnmf_jsnmf_query_params_default()
    };
    let ranks = [JR, JR];
    let lambda = [1.0f64, 0.5];
    let mut w = [0.0f64; M * JK];
    let (mut u1, mut u2) = ([0.0f64; M * (JR - JK)], [0.0f64; M * (JR - JK)]);
    let (mut h1, mut h2) = ([0.0f64; JR * N], [0.0f64; JR * N]);
    let us = [u1.as_mut_ptr(), u2.as_mut_ptr()];
    let hs = [h1.as_mut_ptr(), h2.as_mut_ptr()];
    let (mut need, mut calls, mut rep) = (0usize, 0u32, report());
    // SAFETY (every call of this function): the views point at `d`'s arrays;
    // `w` is `M × JK`, `u[s]` `M × (JR − JK)`, `h[s]` `JR × N`, the encodings
    // `JR × N`, the rankings `TOP × N`; the workspace holds the queried bytes.
    ok(
        unsafe {
            call!(
                mvnmf_jsnmf_fit_workspace,
                views.as_ptr(),
                2,
                JK,
                ranks.as_ptr(),
                &p,
                &mut need
            )
        },
        150,
    )?;
    let (wk, wb) = ws(need, 150)?;
    ok(
        unsafe {
            call!(
                mvnmf_jsnmf_fit,
                views.as_ptr(),
                2,
                JK,
                ranks.as_ptr(),
                lambda.as_ptr(),
                &p,
                w.as_mut_ptr(),
                us.as_ptr(),
                hs.as_ptr(),
                wk,
                wb,
                PROGRESS,
                (&mut calls as *mut u32).cast(),
                &mut rep
            )
        },
        150,
    )?;
    fell(&rep, calls, 150)?;
    check(
        finite(&w) && finite(&u1) && finite(&u2) && finite(&h1) && finite(&h2),
        150,
    )?;
    // The CSC view's columns as queries against source 1.
    let queries = &views[1];
    let mut hq = [0.0f64; JR * N];
    ok(
        unsafe { call!(mvnmf_jsnmf_encode_workspace, queries, JR, &qp, &mut need) },
        151,
    )?;
    let (wk, wb) = ws(need, 151)?;
    ok(
        unsafe {
            call!(
                mvnmf_jsnmf_encode,
                queries,
                JK,
                JR,
                &qp,
                w.as_ptr(),
                u1.as_ptr(),
                hq.as_mut_ptr(),
                wk,
                wb
            )
        },
        151,
    )?;
    check(finite(&hq), 151)?;
    let (mut idx, mut scores) = ([0usize; TOP * N], [0.0f64; TOP * N]);
    let mut exclude = [0usize; N];
    for (q, e) in exclude.iter_mut().enumerate() {
        *e = if q % 3 == 0 { usize::MAX } else { q };
    }
    ok(
        unsafe { call!(mvnmf_jsnmf_rank_workspace, N, &mut need) },
        152,
    )?;
    let (wk, wb) = ws(need, 152)?;
    ok(
        unsafe {
            call!(
                mvnmf_jsnmf_rank,
                h1.as_ptr(),
                JR,
                N,
                hq.as_ptr(),
                N,
                TOP,
                exclude.as_ptr(),
                idx.as_mut_ptr(),
                scores.as_mut_ptr(),
                wk,
                wb
            )
        },
        152,
    )?;
    check(ranked(&idx, &scores), 152)?;
    // The dense view's columns through the one-call query.
    ok(
        unsafe {
            call!(
                mvnmf_jsnmf_query_workspace,
                &views[0],
                JR,
                N,
                &qp,
                &mut need
            )
        },
        153,
    )?;
    let (wk, wb) = ws(need, 153)?;
    ok(
        unsafe {
            call!(
                mvnmf_jsnmf_query,
                &views[0],
                JK,
                JR,
                &qp,
                w.as_ptr(),
                u1.as_ptr(),
                h1.as_ptr(),
                N,
                TOP,
                exclude.as_ptr(),
                idx.as_mut_ptr(),
                scores.as_mut_ptr(),
                wk,
                wb
            )
        },
        153,
    )?;
    check(
        ranked(&idx, &scores)
            && idx
                .chunks_exact(TOP)
                .zip(exclude)
                .all(|(col, e)| !col.contains(&e)),
        153,
    )?;
    // Single precision: fit, then encode the dense `float` view.
    let mut wf = [0.0f32; M * JK];
    let (mut g1, mut g2) = ([0.0f32; M * (JR - JK)], [0.0f32; M * (JR - JK)]);
    let (mut k1, mut k2) = ([0.0f32; JR * N], [0.0f32; JR * N]);
    let gs = [g1.as_mut_ptr(), g2.as_mut_ptr()];
    let ks = [k1.as_mut_ptr(), k2.as_mut_ptr()];
    ok(
        unsafe {
            call!(
                mvnmf_jsnmf_fit_f32_workspace,
                views_f.as_ptr(),
                2,
                JK,
                ranks.as_ptr(),
                &p,
                &mut need
            )
        },
        154,
    )?;
    let (wk, wb) = ws(need, 154)?;
    calls = 0;
    ok(
        unsafe {
            call!(
                mvnmf_jsnmf_fit_f32,
                views_f.as_ptr(),
                2,
                JK,
                ranks.as_ptr(),
                null(),
                &p,
                wf.as_mut_ptr(),
                gs.as_ptr(),
                ks.as_ptr(),
                wk,
                wb,
                PROGRESS,
                (&mut calls as *mut u32).cast(),
                &mut rep
            )
        },
        154,
    )?;
    fell(&rep, calls, 154)?;
    check(
        finite(&wf) && finite(&g1) && finite(&g2) && finite(&k1) && finite(&k2),
        154,
    )?;
    let mut hf = [0.0f32; JR * N];
    ok(
        unsafe {
            call!(
                mvnmf_jsnmf_encode_f32_workspace,
                &views_f[0],
                JR,
                &qp,
                &mut need
            )
        },
        155,
    )?;
    let (wk, wb) = ws(need, 155)?;
    ok(
        unsafe {
            call!(
                mvnmf_jsnmf_encode_f32,
                &views_f[0],
                JK,
                JR,
                &qp,
                wf.as_ptr(),
                g1.as_ptr(),
                hf.as_mut_ptr(),
                wk,
                wb
            )
        },
        155,
    )?;
    check(finite(&hf), 155)
}

/// `src/ffi/mvel.rs`: MVEL on the dense graph, its scores, thresholds and
/// decisions; the anchored fit and the items' embeddings. Codes 165..=179.
fn mvel(d: &Data) -> Result<(), i32> {
    let g = d.graph(MVNMF_GRAPH_DENSE);
    let p = mvnmf_mvel_params {
        max_iter: 20,
        tol: 0.0,
        nmf_iter: 20,
        unknown_weight: 0.1,
        ..mvnmf_mvel_params_default()
    };
    let (mut q, mut h) = ([0.0f64; C * R], [0.0f64; R * N]);
    let (mut need, mut calls, mut rep) = (0usize, 0u32, report());
    // SAFETY (every call of this function): the labels are `C × N` bytes,
    // the graph `N × N` doubles, the anchor graph `S × N` indices and
    // weights; `q` is `C × R`, `h` `R × N`, `a` `R × ANCHORS`, the scores and
    // decisions `C × N`; the workspace holds the queried bytes.
    ok(
        unsafe { call!(mvnmf_mvel_fit_workspace, C, &g, R, &p, &mut need) },
        165,
    )?;
    let (w, wb) = ws(need, 165)?;
    ok(
        unsafe {
            call!(
                mvnmf_mvel_fit,
                d.y.as_ptr(),
                C,
                &g,
                R,
                &p,
                q.as_mut_ptr(),
                h.as_mut_ptr(),
                w,
                wb,
                PROGRESS,
                (&mut calls as *mut u32).cast(),
                &mut rep
            )
        },
        165,
    )?;
    fell(&rep, calls, 165)?;
    check(finite(&q) && finite(&h), 165)?;
    let mut scores = [0.0f64; C * N];
    ok(
        unsafe { call!(mvnmf_mvel_predict_workspace, C, R, N, &mut need) },
        166,
    )?;
    let (w, wb) = ws(need, 166)?;
    ok(
        unsafe {
            call!(
                mvnmf_mvel_predict,
                q.as_ptr(),
                h.as_ptr(),
                C,
                R,
                N,
                scores.as_mut_ptr(),
                w,
                wb
            )
        },
        166,
    )?;
    // `QH` with unit-ball columns: in [−1, 1] up to rounding.
    check(scores.iter().all(|s| s.abs() <= 1.0 + 1e-12), 166)?;
    let mut tau = [0.0f64; C];
    ok(
        unsafe { call!(mvnmf_mvel_thresholds_workspace, N, &mut need) },
        167,
    )?;
    let (w, wb) = ws(need, 167)?;
    ok(
        unsafe {
            call!(
                mvnmf_mvel_thresholds,
                scores.as_ptr(),
                d.y.as_ptr(),
                C,
                N,
                tau.as_mut_ptr(),
                w,
                wb
            )
        },
        167,
    )?;
    check(tau.iter().all(|t| !t.is_nan()), 167)?;
    let mut pred = [7u8; C * N];
    ok(
        unsafe {
            call!(
                mvnmf_mvel_decide,
                scores.as_ptr(),
                tau.as_ptr(),
                C,
                N,
                pred.as_mut_ptr()
            )
        },
        168,
    )?;
    check(pred.iter().all(|&b| b <= 1), 168)?;
    // PU decisions: every given positive kept.
    ok(
        unsafe { call!(mvnmf_mvel_decide_pu_workspace, N, &mut need) },
        310,
    )?;
    let (w, wb) = ws(need, 310)?;
    let mut used = [0.0f64; C];
    ok(
        unsafe {
            call!(
                mvnmf_mvel_decide_pu,
                scores.as_ptr(),
                d.y.as_ptr(),
                C,
                N,
                core::ptr::null::<f64>(),
                tau.as_mut_ptr(),
                used.as_mut_ptr(),
                pred.as_mut_ptr(),
                w,
                wb
            )
        },
        311,
    )?;
    check(
        pred.iter().zip(d.y.iter()).all(|(&p, &g)| p <= 1 && p >= g)
            && used.iter().all(|u| (0.0..=1.0).contains(u)),
        311,
    )?;
    // The label frequencies from held-out positives (all of them held out
    // of a fit that saw none), then the count rule with them.
    let none = [0u8; C * N];
    let mut freq = [0.0f64; C];
    ok(
        unsafe { call!(mvnmf_mvel_label_freq_holdout_workspace, N, &mut need) },
        171,
    )?;
    let (w, wb) = ws(need, 171)?;
    ok(
        unsafe {
            call!(
                mvnmf_mvel_label_freq_holdout,
                scores.as_ptr(),
                none.as_ptr(),
                d.y.as_ptr(),
                C,
                N,
                1usize,
                freq.as_mut_ptr(),
                w,
                wb
            )
        },
        171,
    )?;
    check(freq.iter().all(|f| (0.0..=1.0).contains(f)), 171)?;
    ok(
        unsafe { call!(mvnmf_mvel_count_thresholds_workspace, N, &mut need) },
        172,
    )?;
    let (w, wb) = ws(need, 172)?;
    ok(
        unsafe {
            call!(
                mvnmf_mvel_count_thresholds,
                scores.as_ptr(),
                d.y.as_ptr(),
                C,
                N,
                freq.as_ptr(),
                tau.as_mut_ptr(),
                pred.as_mut_ptr(),
                w,
                wb
            )
        },
        172,
    )?;
    check(
        pred.iter().zip(d.y.iter()).all(|(&p, &g)| p <= 1 && p >= g)
            && tau.iter().all(|t| !t.is_nan()),
        172,
    )?;
    // Anchored.
    let mut a = [0.0f64; R * ANCHORS];
    ok(
        unsafe {
            call!(
                mvnmf_mvel_fit_anchored_workspace,
                N,
                C,
                R,
                ANCHORS,
                &p,
                &mut need
            )
        },
        169,
    )?;
    let (w, wb) = ws(need, 169)?;
    calls = 0;
    ok(
        unsafe {
            call!(
                mvnmf_mvel_fit_anchored,
                d.y.as_ptr(),
                C,
                N,
                d.anchor_idx.as_ptr(),
                d.anchor_z.as_ptr(),
                S,
                ANCHORS,
                R,
                &p,
                q.as_mut_ptr(),
                a.as_mut_ptr(),
                w,
                wb,
                PROGRESS,
                (&mut calls as *mut u32).cast(),
                &mut rep
            )
        },
        169,
    )?;
    fell(&rep, calls, 169)?;
    check(finite(&q) && finite(&a), 169)?;
    ok(
        unsafe {
            call!(
                mvnmf_mvel_embed_anchored,
                a.as_ptr(),
                R,
                ANCHORS,
                d.anchor_idx.as_ptr(),
                d.anchor_z.as_ptr(),
                S,
                N,
                h.as_mut_ptr()
            )
        },
        170,
    )?;
    check(
        h.chunks_exact(R)
            .all(|c| c.iter().map(|x| x * x).sum::<f64>() <= 1.0 + 1e-12),
        170,
    )
}

/// The `_f32` twins of `src/ffi/mvel.rs`: MVEL on the CSR ring, its scores,
/// thresholds, decisions and label frequencies; the anchored fit and the
/// items' embeddings. Codes 173..=179.
fn mvel_f32(d: &Data) -> Result<(), i32> {
    let g = d.graph(MVNMF_GRAPH_CSR);
    let p = mvnmf_mvel_params {
        max_iter: 20,
        tol: 0.0,
        nmf_iter: 20,
        unknown_weight: 0.1,
        ..mvnmf_mvel_params_default()
    };
    let (mut q, mut h) = ([0.0f32; C * R], [0.0f32; R * N]);
    let (mut need, mut calls, mut rep) = (0usize, 0u32, report());
    // SAFETY (every call of this function): as in `mvel`, with `float`
    // factors, scores and anchor weights of the same sizes.
    ok(
        unsafe { call!(mvnmf_mvel_fit_f32_workspace, C, &g, R, &p, &mut need) },
        173,
    )?;
    let (w, wb) = ws(need, 173)?;
    ok(
        unsafe {
            call!(
                mvnmf_mvel_fit_f32,
                d.y.as_ptr(),
                C,
                &g,
                R,
                &p,
                q.as_mut_ptr(),
                h.as_mut_ptr(),
                w,
                wb,
                PROGRESS,
                (&mut calls as *mut u32).cast(),
                &mut rep
            )
        },
        173,
    )?;
    fell(&rep, calls, 173)?;
    check(finite(&q) && finite(&h), 173)?;
    let mut scores = [0.0f32; C * N];
    ok(
        unsafe { call!(mvnmf_mvel_predict_f32_workspace, C, R, N, &mut need) },
        174,
    )?;
    let (w, wb) = ws(need, 174)?;
    ok(
        unsafe {
            call!(
                mvnmf_mvel_predict_f32,
                q.as_ptr(),
                h.as_ptr(),
                C,
                R,
                N,
                scores.as_mut_ptr(),
                w,
                wb
            )
        },
        174,
    )?;
    check(scores.iter().all(|s| s.abs() <= 1.0 + 1e-5), 174)?;
    let mut tau = [0.0f64; C];
    let mut pred = [7u8; C * N];
    ok(
        unsafe { call!(mvnmf_mvel_thresholds_workspace, N, &mut need) },
        175,
    )?;
    let (w, wb) = ws(need, 175)?;
    ok(
        unsafe {
            call!(
                mvnmf_mvel_thresholds_f32,
                scores.as_ptr(),
                d.y.as_ptr(),
                C,
                N,
                tau.as_mut_ptr(),
                w,
                wb
            )
        },
        175,
    )?;
    ok(
        unsafe {
            call!(
                mvnmf_mvel_decide_f32,
                scores.as_ptr(),
                tau.as_ptr(),
                C,
                N,
                pred.as_mut_ptr()
            )
        },
        175,
    )?;
    check(pred.iter().all(|&b| b <= 1), 175)?;
    ok(
        unsafe { call!(mvnmf_mvel_decide_pu_workspace, N, &mut need) },
        176,
    )?;
    let (w, wb) = ws(need, 176)?;
    ok(
        unsafe {
            call!(
                mvnmf_mvel_decide_pu_f32,
                scores.as_ptr(),
                d.y.as_ptr(),
                C,
                N,
                core::ptr::null::<f64>(),
                tau.as_mut_ptr(),
                core::ptr::null_mut::<f64>(),
                pred.as_mut_ptr(),
                w,
                wb
            )
        },
        176,
    )?;
    check(pred.iter().zip(d.y.iter()).all(|(&p, &g)| p <= 1 && p >= g), 176)?;
    let none = [0u8; C * N];
    let mut freq = [0.0f64; C];
    ok(
        unsafe { call!(mvnmf_mvel_label_freq_holdout_workspace, N, &mut need) },
        177,
    )?;
    let (w, wb) = ws(need, 177)?;
    ok(
        unsafe {
            call!(
                mvnmf_mvel_label_freq_holdout_f32,
                scores.as_ptr(),
                none.as_ptr(),
                d.y.as_ptr(),
                C,
                N,
                1usize,
                freq.as_mut_ptr(),
                w,
                wb
            )
        },
        177,
    )?;
    check(freq.iter().all(|f| (0.0..=1.0).contains(f)), 177)?;
    ok(
        unsafe { call!(mvnmf_mvel_count_thresholds_workspace, N, &mut need) },
        178,
    )?;
    let (w, wb) = ws(need, 178)?;
    ok(
        unsafe {
            call!(
                mvnmf_mvel_count_thresholds_f32,
                scores.as_ptr(),
                d.y.as_ptr(),
                C,
                N,
                freq.as_ptr(),
                tau.as_mut_ptr(),
                pred.as_mut_ptr(),
                w,
                wb
            )
        },
        178,
    )?;
    check(pred.iter().zip(d.y.iter()).all(|(&p, &g)| p <= 1 && p >= g), 178)?;
    // Anchored, with `float` anchor weights.
    let mut z = [0.0f32; S * N];
    for (zf, &zd) in z.iter_mut().zip(d.anchor_z.iter()) {
        *zf = zd as f32;
    }
    let mut a = [0.0f32; R * ANCHORS];
    ok(
        unsafe {
            call!(
                mvnmf_mvel_fit_anchored_f32_workspace,
                N,
                C,
                R,
                ANCHORS,
                &p,
                &mut need
            )
        },
        179,
    )?;
    let (w, wb) = ws(need, 179)?;
    calls = 0;
    ok(
        unsafe {
            call!(
                mvnmf_mvel_fit_anchored_f32,
                d.y.as_ptr(),
                C,
                N,
                d.anchor_idx.as_ptr(),
                z.as_ptr(),
                S,
                ANCHORS,
                R,
                &p,
                q.as_mut_ptr(),
                a.as_mut_ptr(),
                w,
                wb,
                PROGRESS,
                (&mut calls as *mut u32).cast(),
                &mut rep
            )
        },
        179,
    )?;
    fell(&rep, calls, 179)?;
    ok(
        unsafe {
            call!(
                mvnmf_mvel_embed_anchored_f32,
                a.as_ptr(),
                R,
                ANCHORS,
                d.anchor_idx.as_ptr(),
                z.as_ptr(),
                S,
                N,
                h.as_mut_ptr()
            )
        },
        179,
    )?;
    check(finite(&q) && finite(&a) && finite(&h), 179)
}

/// `src/ffi/dist.rs` on one rank (the callbacks are the identity): joint
/// NMF, MvSL with SGE and with the ring as explicit CSR rows, the TGE graphs
/// built "across" the one rank. Codes 180..=189.
fn dist(d: &Data) -> Result<(), i32> {
    let comm = mvnmf_dist_comm {
        allreduce: Some(allreduce),
        exchange: Some(exchange),
        ctx: null_mut(),
        rank: 0,
        n_ranks: 1,
        allgather: Some(allgather),
    };
    let views = d.views();
    check(
        call!(
            mvnmf_dist_words_per_iteration,
            2 * M,
            K,
            2usize,
            1u32,
            1u32,
            0u32
        ) > 0,
        180,
    )?;
    let p = nmf_params();
    let (mut u1, mut u2, mut v) = ([0.0f64; M * K], [0.0f64; M * K], [0.0f64; K * N]);
    let us = [u1.as_mut_ptr(), u2.as_mut_ptr()];
    let (mut need, mut calls, mut rep) = (0usize, 0u32, report());
    let mut traffic = mvnmf_dist_traffic::default();
    // SAFETY (every call of this function): the communicator's callbacks
    // follow its contract for one rank; the views, graphs and outputs as in
    // `nmf` and `mvsl`; the CSR output buffers hold `N + 1` row pointers and
    // `CAP` entries (checked against the capacities); the workspace holds the
    // queried bytes.
    ok(
        unsafe {
            call!(
                mvnmf_dist_joint_nmf_fit_workspace,
                views.as_ptr(),
                2,
                K,
                1usize,
                &p,
                &mut need
            )
        },
        181,
    )?;
    let (w, wb) = ws(need, 181)?;
    ok(
        unsafe {
            call!(
                mvnmf_dist_joint_nmf_fit,
                &comm,
                views.as_ptr(),
                2,
                K,
                &p,
                us.as_ptr(),
                v.as_mut_ptr(),
                w,
                wb,
                PROGRESS,
                (&mut calls as *mut u32).cast(),
                &mut rep,
                &mut traffic
            )
        },
        181,
    )?;
    fell(&rep, calls, 181)?;
    check(
        finite(&u1) && finite(&u2) && finite(&v) && traffic.iter_calls > 0,
        181,
    )?;
    for (g, c) in [
        (d.graph(MVNMF_GRAPH_SGE), 182),
        (d.graph(MVNMF_GRAPH_CSR), 183),
    ] {
        let mp = mvsl_params(MVNMF_MVSL_PRESET_MVSL, c)?;
        ok(
            unsafe {
                call!(
                    mvnmf_dist_mvsl_fit_workspace,
                    views.as_ptr(),
                    2,
                    &g,
                    K,
                    1usize,
                    &mp,
                    &mut need
                )
            },
            c,
        )?;
        let (w, wb) = ws(need, c)?;
        calls = 0;
        ok(
            unsafe {
                call!(
                    mvnmf_dist_mvsl_fit,
                    &comm,
                    views.as_ptr(),
                    2,
                    &g,
                    K,
                    &mp,
                    us.as_ptr(),
                    v.as_mut_ptr(),
                    w,
                    wb,
                    PROGRESS,
                    (&mut calls as *mut u32).cast(),
                    &mut rep,
                    &mut traffic
                )
            },
            c,
        )?;
        fell(&rep, calls, c)?;
        check(finite(&u1) && finite(&u2) && finite(&v), c)?;
    }
    // TGE's graphs over the dense view twice (RBF with the median bandwidth,
    // and linear).
    let tv = [views[0], views[0]];
    let kernels = [
        mvnmf_kernel {
            kind: MVNMF_KERNEL_RBF,
            gamma: 0.0,
        },
        mvnmf_kernel {
            kind: MVNMF_KERNEL_LINEAR,
            gamma: 0.0,
        },
    ];
    let eta = [0.5f64, 0.5];
    let gp = mvnmf_graph_params {
        ka: 2,
        kp: 1,
        penalty: MVNMF_PENALTY_CLASS_PAIRS,
        sigma: 2.0,
        block: 4,
    };
    let (mut ca, mut cq) = (0usize, 0usize);
    ok(
        unsafe { call!(mvnmf_dist_tge_capacity, N, N, 2usize, &gp, &mut ca, &mut cq) },
        184,
    )?;
    check(ca <= CAP && cq <= CAP, 184)?;
    ok(
        unsafe {
            call!(
                mvnmf_dist_tge_workspace,
                tv.as_ptr(),
                2,
                kernels.as_ptr(),
                d.tge.as_ptr(),
                N,
                2usize,
                1usize,
                &gp,
                &mut need
            )
        },
        185,
    )?;
    let (w, wb) = ws(need, 185)?;
    let (mut arp, mut aci, mut aw) = ([0usize; N + 1], [0usize; CAP], [0.0f64; CAP]);
    let (mut prp, mut pci, mut pw) = ([0usize; N + 1], [0usize; CAP], [0.0f64; CAP]);
    let ab = mvnmf_csr_buffers {
        row_ptr: arp.as_mut_ptr(),
        col_idx: aci.as_mut_ptr(),
        weights: aw.as_mut_ptr(),
        capacity: ca,
    };
    let qb = mvnmf_csr_buffers {
        row_ptr: prp.as_mut_ptr(),
        col_idx: pci.as_mut_ptr(),
        weights: pw.as_mut_ptr(),
        capacity: cq,
    };
    let (mut na, mut nq) = (usize::MAX, usize::MAX);
    let mut gt = mvnmf_dist_graph_traffic::default();
    ok(
        unsafe {
            call!(
                mvnmf_dist_tge,
                &comm,
                tv.as_ptr(),
                2,
                kernels.as_ptr(),
                eta.as_ptr(),
                d.tge.as_ptr(),
                N,
                2usize,
                &gp,
                &ab,
                &qb,
                &mut na,
                &mut nq,
                w,
                wb,
                &mut gt
            )
        },
        186,
    )?;
    check(
        na > 0
            && na <= ca
            && nq <= cq
            && arp[N] == na
            && prp[N] == nq
            && aci.get(..na).is_some_and(|c| c.iter().all(|&j| j < N))
            && aw.get(..na).is_some_and(finite)
            && gt.allreduce_calls > 0,
        186,
    )?;
    // The approximate graph with the items sharded (one rank: NN-descent's
    // graph), k = 3 neighbours.
    let ann = mvnmf_ann_params {
        k: 3,
        ..mvnmf_ann_params_default()
    };
    ok(
        unsafe {
            call!(
                mvnmf_dist_tge_approx_workspace,
                tv.as_ptr(),
                2,
                kernels.as_ptr(),
                d.tge.as_ptr(),
                N,
                2usize,
                1usize,
                &gp,
                &ann,
                &mut need
            )
        },
        187,
    )?;
    let (w, wb) = ws(need, 187)?;
    let (mut na, mut nq) = (usize::MAX, usize::MAX);
    ok(
        unsafe {
            call!(
                mvnmf_dist_tge_approx,
                &comm,
                tv.as_ptr(),
                2,
                kernels.as_ptr(),
                eta.as_ptr(),
                d.tge.as_ptr(),
                N,
                2usize,
                &gp,
                &ann,
                &ab,
                &qb,
                &mut na,
                &mut nq,
                w,
                wb,
                &mut gt
            )
        },
        188,
    )?;
    check(
        na > 0
            && na <= ca
            && nq <= cq
            && arp[N] == na
            && prp[N] == nq
            && aci.get(..na).is_some_and(|c| c.iter().all(|&j| j < N))
            && aw.get(..na).is_some_and(finite),
        188,
    )
}

/// `src/ffi/dist.rs`'s `_f32` twins on one rank: joint NMF, MvSL with SGE
/// and with the ring as explicit CSR rows, on the `float` views. Code 189.
fn dist_f32(d: &Data) -> Result<(), i32> {
    let comm = mvnmf_dist_comm {
        allreduce: Some(allreduce),
        exchange: Some(exchange),
        ctx: null_mut(),
        rank: 0,
        n_ranks: 1,
        allgather: Some(allgather),
    };
    let views = d.views_f32();
    let p = nmf_params();
    let (mut u1, mut u2, mut v) = ([0.0f32; M * K], [0.0f32; M * K], [0.0f32; K * N]);
    let us = [u1.as_mut_ptr(), u2.as_mut_ptr()];
    let (mut need, mut calls, mut rep) = (0usize, 0u32, report());
    let mut traffic = mvnmf_dist_traffic::default();
    // SAFETY (every call of this function): as in `dist`, with `float` views,
    // bases and encoding.
    ok(
        unsafe {
            call!(
                mvnmf_dist_joint_nmf_fit_f32_workspace,
                views.as_ptr(),
                2,
                K,
                1usize,
                &p,
                &mut need
            )
        },
        189,
    )?;
    let (w, wb) = ws(need, 189)?;
    ok(
        unsafe {
            call!(
                mvnmf_dist_joint_nmf_fit_f32,
                &comm,
                views.as_ptr(),
                2,
                K,
                &p,
                us.as_ptr(),
                v.as_mut_ptr(),
                w,
                wb,
                PROGRESS,
                (&mut calls as *mut u32).cast(),
                &mut rep,
                &mut traffic
            )
        },
        189,
    )?;
    fell(&rep, calls, 189)?;
    check(
        finite(&u1) && finite(&u2) && finite(&v) && traffic.iter_calls > 0,
        189,
    )?;
    for g in [d.graph(MVNMF_GRAPH_SGE), d.graph(MVNMF_GRAPH_CSR)] {
        let mp = mvsl_params(MVNMF_MVSL_PRESET_MVSL, 189)?;
        ok(
            unsafe {
                call!(
                    mvnmf_dist_mvsl_fit_f32_workspace,
                    views.as_ptr(),
                    2,
                    &g,
                    K,
                    1usize,
                    &mp,
                    &mut need
                )
            },
            189,
        )?;
        let (w, wb) = ws(need, 189)?;
        calls = 0;
        ok(
            unsafe {
                call!(
                    mvnmf_dist_mvsl_fit_f32,
                    &comm,
                    views.as_ptr(),
                    2,
                    &g,
                    K,
                    &mp,
                    us.as_ptr(),
                    v.as_mut_ptr(),
                    w,
                    wb,
                    PROGRESS,
                    (&mut calls as *mut u32).cast(),
                    &mut rep,
                    &mut traffic
                )
            },
            189,
        )?;
        fell(&rep, calls, 189)?;
        check(finite(&u1) && finite(&u2) && finite(&v), 189)?;
    }
    Ok(())
}

/// `src/ffi/{data, abi, linalg, mod}.rs`: preprocessing, the ABI queries,
/// the views' check, the eigensolver, the status and term helpers. Codes
/// 190..=199.
fn misc(d: &Data) -> Result<(), i32> {
    // Preprocessing: a copy of the dense view, shifted by −0.25 so that the
    // shift applies, then normalised to ‖X‖²_F = N.
    let mut x = d.x;
    x.iter_mut().for_each(|v| *v -= 0.25);
    let pp = mvnmf_prep_params {
        shift: 1,
        ..mvnmf_prep_params_default()
    };
    let mut pr = mvnmf_prep_report::default();
    // SAFETY (every call of this function): `x` is `M × N`, `a` `3 × 3`, the
    // eigenvalues 3, the workspace holds the queried bytes; the report and
    // objective are valid structs; the strings are the library's static ones.
    ok(
        unsafe { call!(mvnmf_prepare_view, M, N, x.as_mut_ptr(), &pp, &mut pr) },
        190,
    )?;
    let mut xs = x;
    let mut nconst = 0usize;
    ok(
        unsafe { call!(mvnmf_standardize_view, M, N, xs.as_mut_ptr(), &mut nconst) },
        312,
    )?;
    check(xs.iter().all(|v| v.is_finite()) && nconst <= M, 312)?;
    // The views' check, both precisions (the data are nonnegative and finite:
    // OK, the report saying nowhere).
    let mut rep = mvnmf_report::default();
    let (views, views_f32) = (d.views(), d.views_f32());
    ok(
        unsafe { call!(mvnmf_check_views, views.as_ptr(), 2usize, 1u32, &mut rep) },
        196,
    )?;
    ok(
        unsafe { call!(mvnmf_check_views_f32, views_f32.as_ptr(), 2usize, 1u32, &mut rep) },
        196,
    )?;
    check(rep.where_arg == 0, 196)?;
    let ss: f64 = x.iter().map(|v| v * v).sum();
    check(
        pr.shifted > 0
            && pr.scale.is_finite()
            && (ss - N as f64).abs() < 1e-12
            && x.iter().all(|&v| v >= 0.0),
        190,
    )?;
    // ABI.
    check(
        call!(mvnmf_abi_version) == MVNMF_ABI_VERSION
            && call!(mvnmf_struct_size, MVNMF_STRUCT_VIEW) == core::mem::size_of::<mvnmf_view>()
            && call!(mvnmf_struct_size, MVNMF_STRUCT_DIST_COMM)
                == core::mem::size_of::<mvnmf_dist_comm>()
            && call!(mvnmf_struct_size, u32::MAX) == 0,
        191,
    )?;
    // The eigensolver: the 1-D Laplacian of order 3.
    let mut a = [2.0, -1.0, 0.0, -1.0, 2.0, -1.0, 0.0, -1.0, 2.0];
    let mut ev = [0.0f64; 3];
    let mut need = 0usize;
    ok(
        unsafe { call!(mvnmf_sym_eig_workspace, 3usize, &mut need) },
        192,
    )?;
    let (w, wb) = ws(need, 192)?;
    ok(
        unsafe {
            call!(
                mvnmf_sym_eig,
                a.as_mut_ptr(),
                3usize,
                ev.as_mut_ptr(),
                w,
                wb
            )
        },
        193,
    )?;
    let r = core::f64::consts::SQRT_2;
    check(
        ev.iter()
            .zip([2.0 - r, 2.0, 2.0 + r])
            .all(|(x, y)| (x - y).abs() < 1e-14),
        193,
    )?;
    // Status, term and version helpers.
    let o = mvnmf_objective {
        total: 3.0,
        n_terms: 2,
        reserved: 0,
        terms: {
            let mut t = [mvnmf_term::default(); MVNMF_MAX_TERMS];
            t[0] = mvnmf_term {
                kind: MVNMF_TERM_RECONSTRUCTION,
                reserved: 0,
                value: 2.0,
            };
            t[1] = mvnmf_term {
                kind: MVNMF_TERM_L1,
                reserved: 0,
                value: 1.0,
            };
            t
        },
    };
    check(
        unsafe { call!(mvnmf_objective_term, &o, MVNMF_TERM_L1) } == 1.0
            && unsafe { call!(mvnmf_objective_term, &o, MVNMF_TERM_SPARSITY) } == 0.0
            && unsafe { call!(mvnmf_objective_term, null(), MVNMF_TERM_L1) } == 0.0,
        194,
    )?;
    check(
        c_len(call!(mvnmf_term_name, MVNMF_TERM_AFFINITY)) > 0
            && c_len(call!(mvnmf_term_name, u32::MAX)) > 0
            && c_len(call!(mvnmf_status_message, mvnmf_status::Ok as u32)) > 0
            && c_len(call!(mvnmf_status_message, mvnmf_status::CommFailed as u32)) > 0
            && c_len(call!(mvnmf_status_message, u32::MAX)) > 0
            && c_len(call!(mvnmf_version)) >= 5,
        195,
    )
}
