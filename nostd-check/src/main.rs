//! Links the mvnmf core in a `#![no_std]` binary and runs a small
//! factorization and a symmetric eigendecomposition on static buffers: exit
//! status 0 when the objective fell and the eigenvalues are right.
#![no_std]
#![no_main]

use mvnmf::models::nmf::{self, NmfParams};
use mvnmf::{Dense, View};

const M: usize = 12;
const N: usize = 10;
const K: usize = 3;

static mut WORK: [u8; 1 << 16] = [0; 1 << 16];

extern "C" {
    fn exit(code: i32) -> !;
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    unsafe { exit(101) }
}

#[no_mangle]
pub extern "C" fn rust_eh_personality() {}

fn run() -> i32 {
    let mut x = [0.0f64; M * N];
    for (i, v) in x.iter_mut().enumerate() {
        *v = ((i * 7919) % 97) as f64 / 97.0;
    }
    let view = match Dense::new(&x, M, N, M) {
        Ok(d) => View::Dense(d),
        Err(_) => return 2,
    };
    let params = NmfParams { max_iter: 50, tol: 0.0, ..NmfParams::default() };
    let need = match nmf::fit_workspace::<f64>(view.shape(), K, &params) {
        Ok(b) => b,
        Err(_) => return 3,
    };
    // SAFETY: single-threaded program; the only reference to WORK.
    let work: &mut [u8] = unsafe { &mut *core::ptr::addr_of_mut!(WORK) };
    if need > work.len() {
        return 4;
    }
    let (mut u, mut v) = ([0.0f64; M * K], [0.0f64; K * N]);
    match nmf::fit(view, K, &params, &mut u, &mut v, &mut work[..need], None) {
        Ok(r) if r.objective.total < r.initial.total => 0,
        Ok(_) => 5,
        Err(_) => 6,
    }
}

/// The 1-D Laplacian of order 3: eigenvalues `2 − √2, 2, 2 + √2`.
fn eig() -> i32 {
    let mut a = [2.0, -1.0, 0.0, -1.0, 2.0, -1.0, 0.0, -1.0, 2.0];
    let mut w = [0.0f64; 3];
    let mut work = [0u8; 256];
    let need = match mvnmf::linalg::sym_eig_workspace::<f64>(3) {
        Ok(b) if b <= work.len() => b,
        _ => return 7,
    };
    if mvnmf::linalg::sym_eig(&mut a, 3, &mut w, &mut work[..need]).is_err() {
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

/// Called by the C runtime's start files (libc's `__libc_start_main`).
#[no_mangle]
pub extern "C" fn main(_argc: i32, _argv: *const *const u8) -> i32 {
    match run() {
        0 => eig(),
        e => e,
    }
}
