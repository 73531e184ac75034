//! mvnmf on a Cortex-M4F: a joint NMF of two small views with the `no_std`
//! core, no allocator, the scratch memory a `static` buffer, the objective of
//! every iterate printed over semihosting. Exits (semihosting) with status 0
//! when the objective never rose and fell at least 20-fold, 1 otherwise.
//!
//! Run under QEMU (`embedded/run.sh`, or `cargo run --release` here):
//! `qemu-system-arm -machine mps2-an386` emulates a Cortex-M4 with FPU; f64
//! arithmetic is software (the M4F's FPU is single precision).
#![no_std]
#![no_main]

use core::ops::ControlFlow;

use cortex_m_rt::entry;
use cortex_m_semihosting::{debug, hprintln};
use mvnmf::models::nmf::{self, NmfParams};
use mvnmf::{Dense, Progress, View};

/// Two views (8 and 6 features) of the same 16 items, rank 3.
const M1: usize = 8;
const M2: usize = 6;
const N: usize = 16;
const K: usize = 3;
const ITERS: u32 = 60;
/// The static workspace; the program prints how much of it the fit needs.
const WORK_BYTES: usize = 4096;

/// A tiny deterministic generator: the same data everywhere.
struct Lcg(u64);

impl Lcg {
    fn uniform(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / 9007199254740992.0
    }
}

/// `x = u v` (`rows × N`, column-major) from nonnegative `u` (`rows × K`) and
/// `v` (`K × N`), each entry times `1 ± 1%`.
fn product(x: &mut [f64], u: &[f64], v: &[f64], rows: usize, rng: &mut Lcg) {
    for j in 0..N {
        for i in 0..rows {
            let s: f64 = (0..K).map(|l| u[i + l * rows] * v[l + j * K]).sum();
            x[i + j * rows] = s * (1.0 + 0.01 * (2.0 * rng.uniform() - 1.0));
        }
    }
}

fn run() -> Result<(), &'static str> {
    let work: &'static mut [u8; WORK_BYTES] =
        cortex_m::singleton!(: [u8; WORK_BYTES] = [0; WORK_BYTES]).ok_or("workspace taken")?;

    let mut rng = Lcg(42);
    let (mut u1, mut u2, mut vt) = ([0.0; M1 * K], [0.0; M2 * K], [0.0; K * N]);
    for e in u1.iter_mut().chain(u2.iter_mut()).chain(vt.iter_mut()) {
        *e = rng.uniform();
    }
    let (mut x1, mut x2) = ([0.0; M1 * N], [0.0; M2 * N]);
    product(&mut x1, &u1, &vt, M1, &mut rng);
    product(&mut x2, &u2, &vt, M2, &mut rng);

    let views = [
        View::Dense(Dense::new(&x1, M1, N, M1).map_err(|_| "view 1")?),
        View::Dense(Dense::new(&x2, M2, N, M2).map_err(|_| "view 2")?),
    ];
    let params = NmfParams {
        max_iter: ITERS,
        tol: 0.0,
        seed: 7,
        ..NmfParams::default()
    };
    let need = nmf::joint_fit_workspace::<f64>(views.iter().map(|v| v.shape()), K, &params)
        .map_err(|_| "workspace query")?;
    hprintln!(
        "mvnmf (no_std, no allocator) on a Cortex-M4F: joint NMF of {}x{} and {}x{}, K = {}, {} iterations",
        M1,
        N,
        M2,
        N,
        K,
        ITERS
    );
    hprintln!("workspace: {} of {} static bytes", need, WORK_BYTES);
    if need > WORK_BYTES {
        return Err("static workspace too small");
    }

    // The monitor sees the start (iteration 0) and every iterate.
    let (mut prev, mut rises, mut first) = (f64::INFINITY, 0u32, 0.0);
    let mut monitor = |p: &Progress| {
        let total = p.objective.total;
        hprintln!("iter {:3}  objective {:.9e}", p.iter, total);
        if p.iter == 0 {
            first = total;
        }
        // Rounding near the optimum: the tolerance of tests/nmf.rs, 1e-10 of the start.
        if total > prev + 1e-10 * first {
            rises += 1;
        }
        prev = total;
        ControlFlow::Continue(())
    };
    let (mut f1, mut f2, mut v) = ([0.0; M1 * K], [0.0; M2 * K], [0.0; K * N]);
    let mut u: [&mut [f64]; 2] = [&mut f1, &mut f2];
    let report = nmf::joint_fit(
        &views,
        K,
        &params,
        &mut u[..],
        &mut v,
        &mut work[..need],
        Some(&mut monitor),
    )
    .map_err(|_| "fit failed")?;
    hprintln!(
        "objective {:.6e} -> {:.6e} in {} iterations; rises: {}",
        report.initial.total,
        report.objective.total,
        report.iterations,
        rises
    );
    if rises != 0 {
        return Err("the objective rose");
    }
    if report.objective.total * 20.0 > report.initial.total {
        return Err("the objective fell less than 20-fold");
    }
    Ok(())
}

#[entry]
fn main() -> ! {
    match run() {
        Ok(()) => {
            hprintln!("ok: the objective never rose");
            debug::exit(debug::EXIT_SUCCESS);
        }
        Err(e) => {
            hprintln!("FAILED: {}", e);
            debug::exit(debug::EXIT_FAILURE);
        }
    }
    // Without a debugger attached, exit returns: wait here.
    loop {
        cortex_m::asm::wfi();
    }
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    hprintln!("panic: {}", info);
    debug::exit(debug::EXIT_FAILURE);
    // Without a debugger attached, exit returns: wait here.
    loop {
        cortex_m::asm::wfi();
    }
}
