//! Benchmark driver for `bench/bench_nmf.py` (which runs the peers on the same
//! data in the same run and prints the ratios). Not a test.
//!
//! Usage: `bench_nmf dense DIR M N K R` or `bench_nmf sparse DIR M N K R`.
//! DIR holds `X.f64` (dense, column-major) or `colptr.u64`/`rowidx.u64`/
//! `values.f64` (CSC), and `U0.f64`, `V0.f64`. Prints `seconds_per_iter=…`:
//! the median over repetitions of (time from the start report to the R-th
//! iteration report) / R, i.e. full iterations including the objective.
//! Threads: `MVNMF_THREADS` (or `RAYON_NUM_THREADS`, which `bench_nmf.py` sets)
//! = N runs the solver's parallel regions on the built-in pool of N threads
//! (`mvnmf::Parallel::Threads`); unset or 1: serial.

use mvnmf::models::nmf::{self, NmfParams};
use mvnmf::{Csc, Dense, Init, Parallel, View};
use std::ops::ControlFlow;
use std::time::Instant;

fn read_f64(path: &str) -> Vec<f64> {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    b.chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn read_u64(path: &str) -> Vec<usize> {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    b.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()) as usize)
        .collect()
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() != 7 {
        eprintln!("usage: bench_nmf dense|sparse DIR M N K R");
        std::process::exit(2);
    }
    let (kind, dir) = (a[1].as_str(), a[2].as_str());
    let p = |i: usize| a[i].parse::<usize>().expect("a number");
    let (m, n, k, r) = (p(3), p(4), p(5), p(6));
    let u0 = read_f64(&format!("{dir}/U0.f64"));
    let v0 = read_f64(&format!("{dir}/V0.f64"));
    let (xd, cp, ri, vals);
    let view = match kind {
        "dense" => {
            xd = read_f64(&format!("{dir}/X.f64"));
            View::from(Dense::new(&xd, m, n, m).unwrap())
        }
        "sparse" => {
            cp = read_u64(&format!("{dir}/colptr.u64"));
            ri = read_u64(&format!("{dir}/rowidx.u64"));
            vals = read_f64(&format!("{dir}/values.f64"));
            View::from(Csc::new(m, n, &cp, &ri, &vals).unwrap())
        }
        _ => panic!("dense or sparse"),
    };
    let threads: usize = ["MVNMF_THREADS", "RAYON_NUM_THREADS"]
        .iter()
        .find_map(|v| std::env::var(v).ok())
        .map_or(1, |t| t.parse().expect("a thread count"));
    let params = NmfParams {
        max_iter: r as u32,
        tol: 0.0,
        init: Init::Given,
        parallel: Parallel::Threads(threads),
        ..NmfParams::default()
    };
    let mut work = vec![0u8; nmf::fit_workspace::<f64>(view.shape(), k, &params).unwrap()];
    let reps = 5;
    let mut times = Vec::new();
    for _ in 0..reps {
        let (mut u, mut v) = (u0.clone(), v0.clone());
        let mut t0 = None;
        let mut t1 = None;
        let mut mon = |pr: &mvnmf::Progress| {
            if pr.iter == 0 {
                t0 = Some(Instant::now());
            }
            if pr.iter as usize == r {
                t1 = Some(Instant::now());
            }
            ControlFlow::Continue(())
        };
        nmf::fit(view, k, &params, &mut u, &mut v, &mut work, Some(&mut mon)).unwrap();
        times.push((t1.unwrap() - t0.unwrap()).as_secs_f64() / r as f64);
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "mvnmf kernel: {}, {threads} thread(s)",
        if cfg!(feature = "std") {
            "gemm crate"
        } else {
            "blocked (no_std)"
        }
    );
    println!("seconds_per_iter={:.6e}", times[reps / 2]);
}
