//! Threads (issue 18, item 2): the workloads the issue names at 1, 2 and 3
//! threads of the built-in pool, in interleaved rounds (1, 2, 3, 1, 2, 3, …,
//! so a slow spell of this shared machine hits every count), median ms per
//! iteration and the speed-up over one thread; and whether every thread count
//! gave the same bits (it must: `tests/threads.rs` asserts it).
//!
//! ```sh
//! cargo run --release --example bench_threads            # 5 rounds, every workload
//! cargo run --release --example bench_threads 9 sparse   # 9 rounds, one workload
//! BENCH_THREADS=2 cargo run --release --example bench_threads 5 sparse  # only 2 threads (for perf)
//! ```
//! Not a test: speed is measured here, never asserted.

use mvnmf::eval::UNLABELED;
use mvnmf::models::nmf::{self, NmfParams};
use mvnmf::pipeline::{self, Method, PipelineParams};
use mvnmf::similarity::{self, Kernel};
use mvnmf::{Csc, Dense, Init, Parallel, View};
use std::time::Instant;

mod common;
use common::{median, IterTimer, Rng};

/// Seconds per NMF iteration (from the start's report to the last one, as
/// `bench/bench_nmf.py` times mvnmf: the start and the workspace's first
/// touch excluded) and the bits of V.
fn nmf_iter(view: View<'_, f64>, k: usize, u0: &[f64], v0: &[f64], par: Parallel) -> (f64, u64) {
    let iters = 20;
    let p = NmfParams {
        max_iter: iters,
        tol: 0.0,
        init: Init::Given,
        parallel: par,
        ..NmfParams::default()
    };
    let mut w = vec![0u8; nmf::fit_workspace::<f64>(view.shape(), k, &p).unwrap()];
    let (mut u, mut v) = (u0.to_vec(), v0.to_vec());
    let mut timer = IterTimer::default();
    nmf::fit(
        view,
        k,
        &p,
        &mut u,
        &mut v,
        &mut w,
        Some(&mut timer.monitor()),
    )
    .unwrap();
    (timer.per_iter(iters), hash(&v))
}

/// Column-major dense views of `n` items over `xs`, one width each.
fn dense_views<'a>(xs: &'a [Vec<f64>], widths: &[usize], n: usize) -> Vec<View<'a, f64>> {
    xs.iter()
        .zip(widths)
        .map(|(x, &w)| View::from(Dense::new(x, w, n, w).unwrap()))
        .collect()
}

fn hash(x: &[f64]) -> u64 {
    x.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, a| {
        (h ^ a.to_bits()).wrapping_mul(0x100_0000_01b3)
    })
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map_or(5, |a| a.parse().expect("ROUNDS"));
    let only = std::env::args().nth(2);
    let threads: Vec<usize> = std::env::var("BENCH_THREADS").map_or(vec![1, 2, 3], |s| {
        s.split(',')
            .map(|t| t.parse().expect("BENCH_THREADS"))
            .collect()
    });
    let mut rng = Rng(18);
    let (m, n, k) = (2000, 1000, 50);
    let dense = common::dense(&mut rng, m, n);
    let (sm, sn) = (20000, 2000);
    let (cp, ri, vals) = common::sparse(&mut rng, sm, sn, 0.01);
    // MvSL-T iteration and the fused kNN: four dense views of 10 000 items
    // (the widths of bench_models), 30 % labeled, K = 20.
    let (tn, widths, tk) = (10_000, [64usize, 144, 75, 128], 20);
    let tviews: Vec<Vec<f64>> = widths
        .iter()
        .map(|&w| common::dense(&mut rng, w, tn))
        .collect();
    let labels: Vec<u32> = (0..tn)
        .map(|j| {
            if j % 10 < 3 {
                (j % 7) as u32
            } else {
                UNLABELED
            }
        })
        .collect();

    println!(
        "mvnmf {}, {} cores seen; median ms over {rounds} rounds; speed-up over 1 thread",
        env!("CARGO_PKG_VERSION"),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    // Columns: a time per thread count, then each count's speed-up over the first.
    let head: Vec<String> = threads
        .iter()
        .map(|&t| format!("{t} thread{}", if t == 1 { "" } else { "s" }))
        .collect();
    let ratios: Vec<String> = threads[1..]
        .iter()
        .map(|t| format!("{t} / {}", threads[0]))
        .collect();
    println!(
        "| workload | {} | {}same bits |",
        head.join(" | "),
        ratios.iter().map(|r| format!("{r} | ")).collect::<String>()
    );
    println!("|---|{}---|", "---|".repeat(head.len() + ratios.len()));

    type Run<'a> = Box<dyn Fn(Parallel) -> (f64, u64) + 'a>;
    let mut work: Vec<(&str, Run<'_>)> = Vec::new();
    {
        let u0: Vec<f64> = (0..m * k).map(|_| 0.05 + rng.next()).collect();
        let v0: Vec<f64> = (0..k * n).map(|_| 0.05 + rng.next()).collect();
        let view = View::from(Dense::new(&dense, m, n, m).unwrap());
        work.push((
            "NMF dense 2000 x 1000, K = 50 (ms/iter)",
            Box::new(move |par| nmf_iter(view, k, &u0, &v0, par)),
        ));
    }
    {
        let u0: Vec<f64> = (0..sm * k).map(|_| 0.05 + rng.next()).collect();
        let v0: Vec<f64> = (0..k * sn).map(|_| 0.05 + rng.next()).collect();
        let view = View::from(Csc::new(sm, sn, &cp, &ri, &vals).unwrap());
        work.push((
            "NMF sparse 20000 x 2000 1 %, K = 50 (ms/iter)",
            Box::new(move |par| nmf_iter(view, k, &u0, &v0, par)),
        ));
    }
    {
        let tv = &tviews;
        let labels = &labels;
        // The MvSL-T pipeline on these views: per iteration (`setup` false:
        // from the start report to the last; the set-up before it excluded),
        // or its set-up (`setup` true: from the call to the start report —
        // the MKL weights and the TGE graph).
        let fit = move |par: Parallel, setup: bool| {
            let vs = dense_views(tv, &widths, tn);
            let ks = [Kernel::Linear; 4];
            let iters = if setup { 1 } else { 10 };
            let mut p = PipelineParams::preset(Method::MvslT);
            p.solver.max_iter = iters;
            p.solver.tol = 0.0;
            p.solver.parallel = par;
            let need =
                pipeline::fit_workspace::<f64>(vs.iter().map(|x| x.shape()), &ks[..], 7, tk, &p)
                    .unwrap();
            let mut w = vec![0u8; need];
            let mut us: Vec<Vec<f64>> = widths.iter().map(|&r| vec![0.0; r * tk]).collect();
            let (mut v, mut eta) = (vec![0.0; tk * tn], vec![0.0; 4]);
            let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
            let mut timer = IterTimer::default();
            let t0 = Instant::now();
            pipeline::fit(
                &vs[..],
                &ks[..],
                labels,
                7,
                tk,
                &p,
                &mut refs[..],
                &mut v,
                &mut eta,
                &mut w,
                Some(&mut timer.monitor()),
            )
            .unwrap();
            let t = if setup {
                timer.setup_since(t0)
            } else {
                timer.per_iter(iters)
            };
            (t, hash(&v))
        };
        work.push((
            "MvSL-T, 4 views, N = 10000, K = 20 (ms/iter)",
            Box::new(move |par| fit(par, false)),
        ));
        work.push((
            "MvSL-T set-up: MKL weights + TGE graph (ms)",
            Box::new(move |par| fit(par, true)),
        ));
    }
    {
        let tv = &tviews;
        work.push((
            "fused kNN, 4 views, N = 10000, k = 10 (ms)",
            Box::new(move |par| {
                let vs = dense_views(tv, &widths, tn);
                let ks = [Kernel::Linear; 4];
                let p = similarity::KnnParams {
                    k: 10,
                    block: 0,
                    parallel: par,
                };
                let shapes = vs.iter().map(|x| x.shape());
                let need = similarity::fused_knn_workspace::<f64>(shapes, &ks[..], 0, &p).unwrap();
                let mut w = vec![0u8; need];
                let (mut nb, mut sims) = (vec![0usize; tn * 10], vec![0.0; tn * 10]);
                let eta = [0.25; 4];
                let t = Instant::now();
                similarity::fused_knn(
                    &vs[..],
                    &ks[..],
                    &eta,
                    &[],
                    0,
                    similarity::Scope::All,
                    &p,
                    &mut nb,
                    &mut sims,
                    &mut w,
                )
                .unwrap();
                (t.elapsed().as_secs_f64(), hash(&sims))
            }),
        ));
    }
    work.push((
        "empty region of 12 tasks, back to back (us)",
        Box::new(|par| {
            // What a region costs besides its work: the workers' hand-off and
            // the join (issue 18: about ten regions per NMF iteration).
            let reps = 2000;
            let t = Instant::now();
            for _ in 0..reps {
                par.run(12, &|_| Ok(())).unwrap();
            }
            // Printed as ms by the table: µs per region.
            (1e3 * t.elapsed().as_secs_f64() / reps as f64, 0)
        }),
    ));
    let mut table = Vec::new();
    for (name, run) in &work {
        if only
            .as_ref()
            .is_some_and(|o| !name.to_lowercase().contains(o.as_str()))
        {
            continue;
        }
        let mut times = vec![vec![]; threads.len()];
        let mut hashes = vec![0u64; threads.len()];
        for _ in 0..rounds {
            for (i, &t) in threads.iter().enumerate() {
                let (s, h) = run(Parallel::Threads(t));
                times[i].push(s);
                hashes[i] = h;
            }
        }
        let med: Vec<f64> = times.into_iter().map(median).collect();
        let same = hashes.iter().all(|&h| h == hashes[0]);
        let cells: String = med
            .iter()
            .map(|t| format!("{:.2} | ", 1e3 * t))
            .chain(med[1..].iter().map(|t| format!("{:.2}x | ", med[0] / t)))
            .collect();
        let row = format!("| {name} | {cells}{} |", if same { "yes" } else { "NO" });
        println!("{row}");
        table.push(row);
    }
}
