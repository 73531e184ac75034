//! Benchmark driver for `bench/bench_knn.py` (which runs scikit-learn on the same data in the
//! same run and prints the ratio). Not a test.
//!
//! Usage: `bench_knn DIR N K M1 M2 ... [--block B]`. DIR holds `view{v}.f64` (dense, f64 LE,
//! column-major `M_v × N`, items are columns) and `eta.f64` (`H` weights). Runs the fused
//! kNN (linear kernels, every item among all others) once and prints
//!
//! ```text
//! seconds=<wall time of mvnmf::similarity::fused_knn>
//! workspace_bytes=<the workspace query's answer>
//! output_bytes=<neighbours + similarities, N·K·16>
//! peak_rss_bytes=<VmHWM of this process, data included>
//! ```
//!
//! and writes the neighbour lists to `DIR/mvnmf_neighbors.u64` (`N × K`, u64 LE, row-major).
//! `MVNMF_THREADS=N` runs the search on the built-in pool of N threads (the same lists).

use mvnmf::data::ViewSet;
use mvnmf::similarity::{self, Kernel, KnnParams, Scope};
use mvnmf::{Dense, Parallel, View};
use std::time::Instant;

fn read_f64(path: &str) -> Vec<f64> {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    b.chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|x| x.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut block = 0;
    if let Some(p) = args.iter().position(|a| a == "--block") {
        block = args[p + 1].parse().expect("block");
        args.drain(p..p + 2);
    }
    if args.len() < 4 {
        eprintln!("usage: bench_knn DIR N K M1 [M2 ...] [--block B]");
        std::process::exit(2);
    }
    let dir = &args[0];
    let n: usize = args[1].parse().unwrap();
    let k: usize = args[2].parse().unwrap();
    let ms: Vec<usize> = args[3..].iter().map(|a| a.parse().unwrap()).collect();
    let data: Vec<Vec<f64>> = (0..ms.len())
        .map(|v| read_f64(&format!("{dir}/view{v}.f64")))
        .collect();
    let eta = read_f64(&format!("{dir}/eta.f64"));
    let views: Vec<View<'_, f64>> = data
        .iter()
        .zip(&ms)
        .map(|(x, &m)| View::from(Dense::new(x, m, n, m).unwrap()))
        .collect();
    let kernels = vec![Kernel::Linear; ms.len()];
    let threads: usize = std::env::var("MVNMF_THREADS").map_or(1, |t| t.parse().expect("threads"));
    let p = KnnParams {
        k,
        block,
        parallel: Parallel::Threads(threads),
    };
    let need = similarity::fused_knn_workspace::<f64>(
        (0..views.len()).map(|v| views.shape(v)),
        &kernels[..],
        0,
        &p,
    )
    .unwrap();
    let mut work = vec![0u8; need];
    let (mut nb, mut sims) = (vec![0usize; n * k], vec![0.0; n * k]);
    let t = Instant::now();
    similarity::fused_knn(
        &views[..],
        &kernels[..],
        &eta,
        &[],
        0,
        Scope::All,
        &p,
        &mut nb,
        &mut sims,
        &mut work,
    )
    .unwrap();
    let secs = t.elapsed().as_secs_f64();
    println!("seconds={secs}");
    println!("workspace_bytes={need}");
    println!("output_bytes={}", n * k * 16);
    println!("peak_rss_bytes={}", peak_rss());
    let out: Vec<u8> = nb.iter().flat_map(|&j| (j as u64).to_le_bytes()).collect();
    std::fs::write(format!("{dir}/mvnmf_neighbors.u64"), out).unwrap();
}
