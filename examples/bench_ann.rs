//! Benchmark driver for `bench/bench_ann.py` (which runs pynndescent and hnswlib on the same
//! data and similarity in the same run). Not a test.
//!
//! Usage: `bench_ann DIR N K THREADS M1 [M2 ...] [--cand C] [--trees T] [--leaf L] [--iters I]
//! [--seed S] [--build-k K2] [--kernel lin|rbf:GAMMA] [--repeat R] [--dump FILE] [--cold]` (`--dump`:
//! the lists and values written, u64 then f64 bits, to compare two builds; `--build-k`: lists of
//! `K2 > K` neighbours built, the best `K` kept; `--repeat`: the build run `R` times, the times
//! printed are the mean per build, for small `N` where one build is a few CPU ticks of 10 ms). DIR holds `view{v}.f64` (dense, f64 LE, column-major
//! `M_v × N`), `eta.f64` (`H` weights) and `sample.u64` (the query items whose exact lists
//! give the recall). Every view gets the same kernel (default linear: cosine).
//!
//! On the first run it computes the exact fused lists of the sample (`fused_knn`, masked
//! scope: sample × all items) and writes them to `DIR/truth.u64` (`S × K`, u64 LE); later runs
//! read them. Then it runs `approx_knn` once and prints
//!
//! ```text
//! seconds=<wall time of approx_knn (mean over the repeats)>
//! cpu_seconds=<CPU time of the process during approx_knn, every thread (mean)>
//! recall=<recall@K on the sample>
//! evaluations=<kernel values evaluated>  iterations=<NN-descent iterations>
//! workspace_bytes=<the workspace query's answer>
//! thread_cpu_seconds=<CPU of each thread during approx_knn (mean), this one first>
//! peak_rss_bytes=<VmHWM of this process, data included>
//! ```

use mvnmf::data::ViewSet;
use mvnmf::similarity::{self, AnnParams, Bandwidth, Kernel, KnnParams, Scope};
use mvnmf::{Dense, Parallel, View};
use std::time::Instant;

fn read_f64(path: &str) -> Vec<f64> {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    b.chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn read_u64(path: &str) -> Option<Vec<usize>> {
    let b = std::fs::read(path).ok()?;
    Some(
        b.chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()) as usize)
            .collect(),
    )
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

/// CPU seconds of this process (user + system, every thread).
fn cpu_seconds() -> f64 {
    stat_cpu("/proc/self/stat")
}

/// CPU seconds of each thread of this process, by thread id.
fn thread_cpu() -> Vec<(u64, f64)> {
    let mut v: Vec<(u64, f64)> = std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.filter_map(|e| {
                let id: u64 = e.ok()?.file_name().to_str()?.parse().ok()?;
                Some((id, stat_cpu(&format!("/proc/self/task/{id}/stat"))))
            })
            .collect()
        })
        .unwrap_or_default();
    v.sort_by_key(|x| x.0);
    v
}

/// User + system seconds of a `stat` file.
fn stat_cpu(path: &str) -> f64 {
    let s = std::fs::read_to_string(path).unwrap_or_default();
    let f: Vec<&str> = s
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let t = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    (t(11) + t(12)) / 100.0
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    // `--cold`: the workspace is not touched before the clock (a fresh allocation, as in the
    // pipeline: the first touch of its pages is part of the build).
    let cold = args
        .iter()
        .position(|a| a == "--cold")
        .map(|p| args.remove(p))
        .is_some();
    let mut opt = |name: &str| -> Option<String> {
        let p = args.iter().position(|a| a == name)?;
        let v = args[p + 1].clone();
        args.drain(p..p + 2);
        Some(v)
    };
    let num = |s: Option<String>| s.map_or(0, |v| v.parse().unwrap());
    let cand = num(opt("--cand"));
    let trees = num(opt("--trees"));
    let leaf = num(opt("--leaf"));
    let iters = num(opt("--iters"));
    let seed = num(opt("--seed")) as u64;
    let build_k = num(opt("--build-k"));
    let repeat = num(opt("--repeat")).max(1);
    let dump = opt("--dump");
    let kernel = match opt("--kernel").as_deref() {
        None | Some("lin") => Kernel::Linear,
        Some(s) => {
            let g: f64 = s
                .strip_prefix("rbf:")
                .expect("lin or rbf:GAMMA")
                .parse()
                .unwrap();
            Kernel::Rbf(Bandwidth::Gamma(g))
        }
    };
    if args.len() < 5 {
        eprintln!("usage: bench_ann DIR N K THREADS M1 [M2 ...] [options]");
        std::process::exit(2);
    }
    let dir = &args[0];
    let n: usize = args[1].parse().unwrap();
    let k: usize = args[2].parse().unwrap();
    let threads: usize = args[3].parse().unwrap();
    let ms: Vec<usize> = args[4..].iter().map(|a| a.parse().unwrap()).collect();
    let data: Vec<Vec<f64>> = (0..ms.len())
        .map(|v| read_f64(&format!("{dir}/view{v}.f64")))
        .collect();
    let eta = read_f64(&format!("{dir}/eta.f64"));
    let views: Vec<View<'_, f64>> = data
        .iter()
        .zip(&ms)
        .map(|(x, &m)| View::from(Dense::new(x, m, n, m).unwrap()))
        .collect();
    let ks = vec![kernel; ms.len()];
    let shapes = || (0..views.len()).map(|v| views.shape(v));
    let sample = read_u64(&format!("{dir}/sample.u64")).expect("sample.u64");
    let truth_path = format!("{dir}/truth.u64");
    let truth = match read_u64(&truth_path) {
        Some(t) if t.len() == sample.len() * k => t,
        _ => {
            let mut query = vec![false; n];
            for &i in &sample {
                query[i] = true;
            }
            let cand = vec![true; n];
            let p = KnnParams {
                k,
                ..KnnParams::default()
            };
            let need = similarity::fused_knn_workspace::<f64>(shapes(), &ks[..], 0, &p).unwrap();
            let mut w = vec![0u8; need];
            let (mut nb, mut s) = (vec![0; n * k], vec![0.0; n * k]);
            let t0 = Instant::now();
            let scope = Scope::Masked {
                query: &query,
                candidate: &cand,
            };
            similarity::fused_knn(
                &views[..],
                &ks[..],
                &eta,
                &[],
                0,
                scope,
                &p,
                &mut nb,
                &mut s,
                &mut w,
            )
            .unwrap();
            eprintln!(
                "exact lists of the sample: {:.2} s",
                t0.elapsed().as_secs_f64()
            );
            let mut t = Vec::with_capacity(sample.len() * k);
            for &i in &sample {
                t.extend_from_slice(&nb[i * k..(i + 1) * k]);
            }
            let bytes: Vec<u8> = t.iter().flat_map(|&j| (j as u64).to_le_bytes()).collect();
            std::fs::write(&truth_path, bytes).unwrap();
            t
        }
    };
    // `--build-k K2`: build lists of K2 > K neighbours and keep the best K of each.
    let kb = build_k.max(k);
    let p = AnnParams {
        k: kb,
        seed,
        trees,
        leaf,
        candidates: cand,
        iters,
        parallel: if threads > 1 {
            Parallel::Threads(threads)
        } else {
            Parallel::Serial
        },
        ..AnnParams::default()
    };
    let need = similarity::approx_knn_workspace::<f64>(shapes(), &ks[..], 0, &p).unwrap();
    let mut w = vec![0u8; need];
    let (mut nb, mut s) = (vec![0; n * kb], vec![0.0; n * kb]);
    // The workspace's pages are touched once before the clock starts (as a caller reusing its
    // workspace would have them).
    if !cold {
        w.fill(1);
    }
    let c0 = cpu_seconds();
    let th0 = thread_cpu();
    let t0 = Instant::now();
    let mut rep = Default::default();
    for _ in 0..repeat {
        rep = similarity::approx_knn(
            &views[..],
            &ks[..],
            &eta,
            &[],
            0,
            &p,
            &mut nb,
            &mut s,
            &mut w,
        )
        .unwrap();
    }
    let secs = t0.elapsed().as_secs_f64() / repeat as f64;
    let cpu = (cpu_seconds() - c0) / repeat as f64;
    // Each thread's CPU during the builds (the first: this one, which runs the serial parts).
    let per_thread: Vec<String> = thread_cpu()
        .iter()
        .map(|&(id, c)| {
            let before = th0.iter().find(|x| x.0 == id).map_or(0.0, |x| x.1);
            format!("{:.2}", (c - before) / repeat as f64)
        })
        .collect();
    let mut hit = 0;
    for (q, &i) in sample.iter().enumerate() {
        let tr = &truth[q * k..(q + 1) * k];
        hit += nb[i * kb..i * kb + k]
            .iter()
            .filter(|j| tr.contains(j))
            .count();
    }
    if let Some(path) = dump {
        // The lists and their values, as u64 and f64 bits (LE): to compare two builds.
        let mut b: Vec<u8> = nb.iter().flat_map(|&j| (j as u64).to_le_bytes()).collect();
        b.extend(s.iter().flat_map(|v| v.to_bits().to_le_bytes()));
        std::fs::write(path, b).unwrap();
    }
    println!("seconds={secs:.4}");
    println!("cpu_seconds={cpu:.4}");
    println!("recall={:.4}", hit as f64 / truth.len() as f64);
    println!(
        "evaluations={} iterations={} last_updates={}",
        rep.evaluations, rep.iterations, rep.last_updates
    );
    println!("thread_cpu_seconds={}", per_thread.join(","));
    println!("workspace_bytes={need}");
    println!("peak_rss_bytes={}", peak_rss());
}
