//! Links the mvnmf core in a `#![no_std]` binary and runs, on static buffers:
//! NMF on a dense view and on a CSC view, joint NMF on both, MvSL with an SGE
//! graph on both, and a symmetric eigendecomposition: exit status 0 when
//! every objective fell and the eigenvalues are right. `scripts/panic_sites.sh`
//! builds it with a panic handler that calls an undefined symbol (a link-time
//! proof that none of these calls can reach a panic).
//!
//! Every input passes through [`black_box`] (data, CSC structure, labels,
//! dimensions, rank, options, the eigensolver's matrix and order), so the
//! optimiser cannot fold the calls for these particular values: what the link
//! proves holds for whatever the caller passes, every option included.
//! [`capi_models`] and [`capi_graph_eval`] do the same for every C entry
//! point (163: the `#[no_mangle]` functions of `src/ffi/`), the C ABI's own
//! argument handling included.
#![no_std]
#![no_main]

use core::hint::black_box;

mod capi_graph_eval;
mod capi_models;

use mvnmf::eval::UNLABELED;
use mvnmf::graph::Sge;
use mvnmf::models::mvsl::{self, MvslParams};
use mvnmf::models::nmf::{self, NmfParams};
use mvnmf::{Csc, Dense, Report, View};

const M: usize = 12;
const N: usize = 10;
const K: usize = 3;

static mut WORK: [u8; 1 << 18] = [0; 1 << 18];

extern "C" {
    fn exit(code: i32) -> !;
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    unsafe { exit(101) }
}

#[no_mangle]
pub extern "C" fn rust_eh_personality() {}

/// 0 when the fit succeeded and its objective fell, else `code`.
fn fell(r: Result<Report, mvnmf::Error>, code: i32) -> i32 {
    match r {
        Ok(r) if r.objective.total < r.initial.total => 0,
        _ => code,
    }
}

/// The workspace, `need` bytes of it (`None` if it is smaller).
fn work(need: usize) -> Option<&'static mut [u8]> {
    // SAFETY: single-threaded program; each fit takes the buffer in turn and
    // drops it before the next one.
    let work: &'static mut [u8] = unsafe { &mut *core::ptr::addr_of_mut!(WORK) };
    work.get_mut(..need)
}

fn run() -> i32 {
    let mut x = [0.0f64; M * N];
    for (i, v) in x.iter_mut().enumerate() {
        *v = ((i * 7919) % 97) as f64 / 97.0;
    }
    // A second view, sparse: the entries of the first with (i + j) % 3 != 0.
    let (mut col_ptr, mut row_idx, mut vals) = ([0usize; N + 1], [0usize; M * N], [0.0f64; M * N]);
    let mut nnz = 0;
    let mut slots = row_idx.iter_mut().zip(vals.iter_mut());
    for (j, (ptr, col)) in col_ptr
        .iter_mut()
        .skip(1)
        .zip(x.chunks_exact(M))
        .enumerate()
    {
        for (i, &xi) in col.iter().enumerate() {
            if (i + j) % 3 != 0 {
                if let Some((r, v)) = slots.next() {
                    (*r, *v) = (i, 0.5 + xi);
                    nnz += 1;
                }
            }
        }
        *ptr = nnz;
    }
    let (dense, csc) = match (
        Dense::new(black_box(&x), black_box(M), black_box(N), black_box(M)),
        Csc::new(
            black_box(M),
            black_box(N),
            black_box(&col_ptr),
            black_box(&row_idx),
            black_box(&vals),
        ),
    ) {
        (Ok(d), Ok(c)) => (View::Dense(d), View::Csc(c)),
        _ => return 2,
    };
    let params = black_box(NmfParams {
        max_iter: 50,
        tol: 0.0,
        ..NmfParams::default()
    });
    let k = black_box(K);
    // NMF, one view at a time.
    for (view, code) in [(dense, 3), (csc, 4)] {
        let Some(w) = nmf::fit_workspace::<f64>(view.shape(), k, &params)
            .ok()
            .and_then(work)
        else {
            return code;
        };
        let (mut u, mut v) = ([0.0f64; M * K], [0.0f64; K * N]);
        let e = fell(nmf::fit(view, k, &params, &mut u, &mut v, w, None), code);
        if e != 0 {
            return e;
        }
    }
    // Joint NMF and MvSL on both views.
    let views = [dense, csc];
    let (mut u1, mut u2, mut v) = ([0.0f64; M * K], [0.0f64; M * K], [0.0f64; K * N]);
    let Some(w) = nmf::joint_fit_workspace::<f64>(views.iter().map(View::shape), k, &params)
        .ok()
        .and_then(work)
    else {
        return 5;
    };
    let e = fell(
        nmf::joint_fit(
            &views,
            k,
            &params,
            &mut [&mut u1[..], &mut u2[..]][..],
            &mut v,
            w,
            None,
        ),
        5,
    );
    if e != 0 {
        return e;
    }
    let mut labels = [UNLABELED; N];
    for (j, l) in labels.iter_mut().enumerate().step_by(2) {
        *l = (j % 4 / 2) as u32;
    }
    let Ok(sge) = Sge::new(black_box(&labels), black_box(2)) else {
        return 6;
    };
    let mp = black_box(MvslParams {
        max_iter: 30,
        tol: 0.0,
        ..MvslParams::mvsl()
    });
    let Some(w) = mvsl::fit_workspace::<f64, _>(views.iter().map(View::shape), &sge, k, &mp)
        .ok()
        .and_then(work)
    else {
        return 6;
    };
    fell(
        mvsl::fit(
            &views,
            &sge,
            k,
            &mp,
            &mut [&mut u1[..], &mut u2[..]][..],
            &mut v,
            w,
            None,
        ),
        6,
    )
}

/// The 1-D Laplacian of order 3: eigenvalues `2 − √2, 2, 2 + √2`.
fn eig() -> i32 {
    let mut a = [2.0, -1.0, 0.0, -1.0, 2.0, -1.0, 0.0, -1.0, 2.0];
    let mut w = [0.0f64; 3];
    let mut work = [0u8; 256];
    let n = black_box(3usize);
    let need = match mvnmf::linalg::sym_eig_workspace::<f64>(n) {
        Ok(b) if b <= work.len() => b,
        _ => return 7,
    };
    if mvnmf::linalg::sym_eig(black_box(&mut a), n, &mut w, &mut work[..need]).is_err() {
        return 8;
    }
    let r = core::f64::consts::SQRT_2;
    let want = [2.0 - r, 2.0, 2.0 + r];
    if w.iter().zip(want).all(|(x, y)| (x - y).abs() < 1e-14) {
        0
    } else {
        9
    }
}

/// A host `parallel_for` (`mvnmf_parallel`) that runs the tasks serially, in
/// order, on this thread (the C ABI modules' host pool).
unsafe extern "C" fn serial_for(
    n_tasks: usize,
    task: mvnmf::ffi::mvnmf_task_fn,
    task_ctx: *mut core::ffi::c_void,
    _ctx: *mut core::ffi::c_void,
) {
    if let Some(t) = task {
        for i in 0..n_tasks {
            // SAFETY: the library's task, called as its contract says (once per index).
            unsafe { t(task_ctx, i) };
        }
    }
}

/// Called by the C runtime's start files (libc's `__libc_start_main`).
#[no_mangle]
pub extern "C" fn main(_argc: i32, _argv: *const *const u8) -> i32 {
    for part in [run, eig, capi_models::run, capi_graph_eval::run] {
        let e = part();
        if e != 0 {
            return e;
        }
    }
    0
}
