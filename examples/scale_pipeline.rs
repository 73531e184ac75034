//! The MvSL-T pipeline at scale (issue 30): synthetic data shaped like real features, the
//! neighbour graph exact, approximate (NN-descent) or chosen by size. Not a test.
//!
//! Usage:
//!
//! ```text
//! cargo run --release --example scale_pipeline -- N [THREADS] [--graph exact|approx|auto] [--iters I] [--phases all|nosweep]
//! cargo run --release --example scale_pipeline -- crossover [N1 N2 ...]
//! cargo run --release --example scale_pipeline -- labeled [N1 N2 ...]
//! ```
//!
//! Data: two views of 100 and 50 features; 20 clusters, each a random 5-dimensional
//! nonnegative subspace per view (basis and coefficients uniform in [0, 1]) plus uniform noise
//! of 5 % of the mean value; every 10th item labeled with its cluster. Kernels: RBF with the
//! median bandwidth per view; `η` learned (MKL, sampled above 4096 labeled); `K = 20`;
//! 100 iterations (`tol = 0`). The pipeline is one call, [`mvnmf::pipeline::fit_graph`]; its
//! phases are timed from the progress callback (set-up = MKL + graph + start, ends at the
//! callback of iteration 0), and the MKL phase alone once more before it (sampled: cheap).
//! Peak memory: `VmHWM` of `/proc/self/status` (data included).
//!
//! `crossover`: TGE alone ([`mvnmf::graph::tge_build`]), exact and approximate, one thread,
//! at each N (default 4000 8000 16000; below about 4000 items some of the 20 classes
//! have too few labeled items for TGE): the measurement behind
//! [`mvnmf::graph::AUTO_EXACT_BELOW`].
//!
//! `labeled`: TGE's labeled lists (issue 30, item 2) at each N (default 20000 100000), one
//! thread, CPU seconds: the exact sweep over the labeled pairs (LDGE alone, which is that
//! sweep and its heaps), NN-descent over all items alone, TGE with `GraphBuild::ApproxAll`
//! (NN-descent for both), and the recall of the same-class and penalty edges of that TGE
//! against LDGE's (the exact lists), for both penalties. The measurement behind
//! [`mvnmf::graph::LABELED_EXACT_BELOW`].
//!
//! `lists`: the labeled lists by NN-descent alone (TGE with `GraphBuild::ApproxAll`, timed
//! from the progress report that ends NN-descent over all items to the return), at each N
//! (default 300000 1000000, 10 % labeled) on 1 then 2 threads: wall and CPU seconds of the
//! process (the CPU of both threads), and whether both graphs are the same bits.

use mvnmf::graph::{self, CsrOut, GraphBuild, GraphParams};
use mvnmf::pipeline::{self, Method, PipelineParams};
use mvnmf::similarity::{self, AnnParams, Bandwidth, Kernel};
use mvnmf::{Dense, Parallel, Phase, Progress, View, ViewKind, ViewShape};
use std::ops::ControlFlow;
use std::time::Instant;

const M: [usize; 2] = [100, 50];
const C: usize = 20;
const RANK: usize = 5;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn uniform(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Views (column-major `M_v × N`), labels (10 % labeled), true clusters.
fn data(n: usize, seed: u64) -> (Vec<Vec<f64>>, Vec<u32>, Vec<u32>) {
    let mut r = Rng(seed);
    let truth: Vec<u32> = (0..n).map(|_| (r.next() % C as u64) as u32).collect();
    let views = M
        .iter()
        .map(|&m| {
            let bases: Vec<f64> = (0..C * m * RANK).map(|_| r.uniform()).collect();
            let mut x = vec![0.0; m * n];
            let mut a = [0.0; RANK];
            for (j, col) in x.chunks_exact_mut(m).enumerate() {
                let c = truth[j] as usize;
                a.iter_mut().for_each(|t| *t = r.uniform());
                let b = &bases[c * m * RANK..(c + 1) * m * RANK];
                for (f, o) in col.iter_mut().enumerate() {
                    let s: f64 = (0..RANK).map(|q| b[q * m + f] * a[q]).sum();
                    *o = s + 0.05 * 1.25 * r.uniform();
                }
            }
            x
        })
        .collect();
    let labels = (0..n)
        .map(|j| {
            if j % 10 == 0 {
                truth[j]
            } else {
                mvnmf::eval::UNLABELED
            }
        })
        .collect();
    (views, labels, truth)
}

fn peak_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|x| x.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn cpu_seconds() -> f64 {
    stat_cpu("/proc/self/stat")
}

/// CPU seconds of the calling thread alone (the pool's other threads excluded).
fn thread_cpu_seconds() -> f64 {
    stat_cpu("/proc/thread-self/stat")
}

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

fn crossover(ns: &[usize]) {
    let ks = [Kernel::Rbf(Bandwidth::Median); 2];
    let gp = GraphParams::default();
    println!("n, exact_s, approx_s (TGE alone, one thread)");
    for &n in ns {
        let (xs, labels, _) = data(n, 1);
        let vs: Vec<View<'_, f64>> = xs
            .iter()
            .zip(M)
            .map(|(x, m)| View::from(Dense::new(x, m, n, m).unwrap()))
            .collect();
        let eta = [0.5, 0.5];
        let cap = graph::tge_capacity(n, C, &gp).unwrap();
        let mut row = format!("{n}");
        for b in [GraphBuild::Exact, GraphBuild::Approx(AnnParams::default())] {
            let need = graph::tge_build_workspace::<f64>(
                vs.iter().map(|v| v.shape()),
                &ks[..],
                C,
                &gp,
                &b,
            )
            .unwrap();
            let mut w = vec![0u8; need];
            let (mut arp, mut aci, mut aw) = (
                vec![0; n + 1],
                vec![0; cap.affinity],
                vec![0.0; cap.affinity],
            );
            let (mut prp, mut pci, mut pw) =
                (vec![0; n + 1], vec![0; cap.penalty], vec![0.0; cap.penalty]);
            let t = Instant::now();
            graph::tge_build(
                &vs[..],
                &ks[..],
                (&eta, &labels, C),
                &gp,
                &b,
                CsrOut {
                    row_ptr: &mut arp,
                    col_idx: &mut aci,
                    weights: &mut aw,
                },
                CsrOut {
                    row_ptr: &mut prp,
                    col_idx: &mut pci,
                    weights: &mut pw,
                },
                &mut w,
                Parallel::Serial,
            )
            .unwrap();
            row += &format!(", {:.2}", t.elapsed().as_secs_f64());
        }
        println!("{row}");
    }
}

type Graph = (Vec<usize>, Vec<usize>, Vec<f64>);

fn edges((rp, ci, _): &Graph) -> std::collections::BTreeSet<(usize, usize)> {
    let mut out = std::collections::BTreeSet::new();
    for (i, r) in rp.windows(2).enumerate() {
        for &j in &ci[r[0]..r[1]] {
            out.insert((i, j));
        }
    }
    out
}

fn recall(want: &std::collections::BTreeSet<(usize, usize)>, got: &[(usize, usize)]) -> f64 {
    let g: std::collections::BTreeSet<_> = got.iter().copied().collect();
    want.iter().filter(|x| g.contains(x)).count() as f64 / want.len().max(1) as f64
}

/// `data(n, 1)` without the truth: the views' values, the labels and how many items carry one.
fn labeled_data(n: usize) -> (Vec<Vec<f64>>, Vec<u32>, usize) {
    let (xs, labels, _) = data(n, 1);
    let nl = labels
        .iter()
        .filter(|&&l| l != mvnmf::eval::UNLABELED)
        .count();
    (xs, labels, nl)
}

/// The views' values of `data` (items are columns) as views.
fn views(xs: &[Vec<f64>], n: usize) -> Vec<View<'_, f64>> {
    xs.iter()
        .zip(M)
        .map(|(x, m)| View::from(Dense::new(x, m, n, m).unwrap()))
        .collect()
}

fn labeled(ns: &[usize]) {
    let ks = [Kernel::Rbf(Bandwidth::Median); 2];
    let eta = [0.5, 0.5];
    println!("n, labeled, penalty, ldge_exact_cpu_s, nndescent_cpu_s, tge_approx_all_cpu_s, same_recall, penalty_recall");
    for &n in ns {
        let (xs, labels, nl) = labeled_data(n);
        let vs = views(&xs, n);
        let shapes = || vs.iter().map(|v| v.shape());
        // NN-descent over all items alone.
        let ann = AnnParams {
            k: 10,
            ..AnnParams::default()
        };
        let need = similarity::approx_knn_workspace::<f64>(shapes(), &ks[..], C, &ann).unwrap();
        let (mut nb, mut sm) = (vec![0; n * 10], vec![0.0; n * 10]);
        let c0 = cpu_seconds();
        similarity::approx_knn(
            &vs[..],
            &ks[..],
            &eta,
            &labels,
            C,
            &ann,
            &mut nb,
            &mut sm,
            &mut vec![0u8; need],
        )
        .unwrap();
        let ann_cpu = cpu_seconds() - c0;
        drop((nb, sm));
        for penalty in [graph::Penalty::ClassPairs, graph::Penalty::ItemNeighbors] {
            let gp = GraphParams {
                penalty,
                ..GraphParams::default()
            };
            let cap = graph::tge_capacity(n, C, &gp).unwrap();
            let new = |e: usize| -> Graph { (vec![0; n + 1], vec![0; e], vec![0.0; e]) };
            // The exact labeled sweep: LDGE.
            let (mut la, mut lp) = (new(cap.affinity), new(cap.penalty));
            let need = graph::ldge_workspace::<f64>(shapes(), &ks[..], C, &gp).unwrap();
            let c0 = cpu_seconds();
            graph::ldge(
                &vs[..],
                &ks[..],
                &eta,
                &labels,
                C,
                &gp,
                CsrOut {
                    row_ptr: &mut la.0,
                    col_idx: &mut la.1,
                    weights: &mut la.2,
                },
                CsrOut {
                    row_ptr: &mut lp.0,
                    col_idx: &mut lp.1,
                    weights: &mut lp.2,
                },
                &mut vec![0u8; need],
            )
            .unwrap();
            let exact_cpu = cpu_seconds() - c0;
            // TGE with NN-descent for every list.
            let b = GraphBuild::ApproxAll(AnnParams::default());
            let need = graph::tge_build_workspace::<f64>(shapes(), &ks[..], C, &gp, &b).unwrap();
            let (mut ta, mut tp) = (new(cap.affinity), new(cap.penalty));
            let c0 = cpu_seconds();
            graph::tge_build(
                &vs[..],
                &ks[..],
                (&eta, &labels, C),
                &gp,
                &b,
                CsrOut {
                    row_ptr: &mut ta.0,
                    col_idx: &mut ta.1,
                    weights: &mut ta.2,
                },
                CsrOut {
                    row_ptr: &mut tp.0,
                    col_idx: &mut tp.1,
                    weights: &mut tp.2,
                },
                &mut vec![0u8; need],
                Parallel::Serial,
            )
            .unwrap();
            let tge_cpu = cpu_seconds() - c0;
            let sigma: Vec<(usize, usize)> = {
                let mut v = Vec::new();
                for (i, r) in ta.0.windows(2).enumerate() {
                    for t in r[0]..r[1] {
                        if ta.2[t] == gp.sigma {
                            v.push((i, ta.1[t]));
                        }
                    }
                }
                v
            };
            let rs = recall(&edges(&la), &sigma);
            let pe: Vec<_> = edges(&tp).into_iter().collect();
            let rp = recall(&edges(&lp), &pe);
            println!(
                "{n}, {nl}, {penalty:?}, {exact_cpu:.2}, {ann_cpu:.2}, {tge_cpu:.2}, {rs:.4}, {rp:.4}"
            );
        }
    }
}

fn lists(ns: &[usize]) {
    let ks = [Kernel::Rbf(Bandwidth::Median); 2];
    let eta = [0.5, 0.5];
    println!("n, labeled, threads, lists_wall_s, lists_cpu_s, total_wall_s, same_bits");
    for &n in ns {
        let (xs, labels, nl) = labeled_data(n);
        let vs = views(&xs, n);
        let shapes = || vs.iter().map(|v| v.shape());
        let gp = GraphParams::default();
        let cap = graph::tge_capacity(n, C, &gp).unwrap();
        let b = GraphBuild::ApproxAll(AnnParams::default());
        let need = graph::tge_build_workspace::<f64>(shapes(), &ks[..], C, &gp, &b).unwrap();
        let mut first: Option<(Graph, Graph)> = None;
        for threads in [1, 2] {
            let new = |e: usize| -> Graph { (vec![0; n + 1], vec![0; e], vec![0.0; e]) };
            let (mut ta, mut tp) = (new(cap.affinity), new(cap.penalty));
            let mut work = vec![0u8; need];
            let t0 = Instant::now();
            let mut mark: Option<(Instant, f64)> = None;
            graph::tge_build_progress(
                &vs[..],
                &ks[..],
                (&eta, &labels, C),
                (&gp, &b),
                (
                    CsrOut {
                        row_ptr: &mut ta.0,
                        col_idx: &mut ta.1,
                        weights: &mut ta.2,
                    },
                    CsrOut {
                        row_ptr: &mut tp.0,
                        col_idx: &mut tp.1,
                        weights: &mut tp.2,
                    },
                ),
                &mut work,
                Parallel::Threads(threads),
                &mut |f| {
                    if f >= 0.5 && mark.is_none() {
                        mark = Some((Instant::now(), cpu_seconds()));
                    }
                    false
                },
            )
            .unwrap();
            let (tw, tc) = mark.unwrap();
            let (wall, cpu) = (tw.elapsed().as_secs_f64(), cpu_seconds() - tc);
            let total = t0.elapsed().as_secs_f64();
            let same = match &first {
                None => {
                    first = Some((ta, tp));
                    true
                }
                Some((fa, fp)) => {
                    let bits = |g: &Graph| g.2.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    (&fa.0, &fa.1, bits(fa), &fp.0, &fp.1, bits(fp))
                        == (&ta.0, &ta.1, bits(&ta), &tp.0, &tp.1, bits(&tp))
                }
            };
            println!("{n}, {nl}, {threads}, {wall:.2}, {cpu:.2}, {total:.2}, {same}");
        }
    }
}

/// `memory`: the pipeline's workspace (`pipeline::fit_graph_workspace`, MvSL-T, the
/// approximate graph) over a grid of `N`, features `M` (two dense views), `K` and `k`, and
/// the bytes per item it comes to: the figures behind README's memory formula. Only the
/// query runs (no data).
fn memory() {
    let ws = |n: usize, m: [usize; 2], k: usize, kk: usize| -> f64 {
        let shapes = m.map(|rows| ViewShape {
            rows,
            cols: n,
            kind: ViewKind::Dense,
            nnz: 0,
        });
        let ks = [Kernel::Rbf(Bandwidth::Median); 2];
        let mut p = PipelineParams::preset(Method::MvslT);
        p.solver.max_iter = 100;
        let ann = AnnParams {
            k: kk,
            ..AnnParams::default()
        };
        let b = GraphBuild::Approx(ann);
        pipeline::fit_graph_workspace::<f64>(shapes, &ks[..], C, k, &p, &b).unwrap() as f64
    };
    println!("N, M = M1 + M2, K, k (NN-descent's; ka the preset's): workspace MB, bytes per item");
    for &(n, m, k, kk) in &[
        (100_000, [100, 50], 20, 10),
        (1_000_000, [100, 50], 20, 10),
        (1_000_000, [200, 100], 20, 10),
        (1_000_000, [100, 50], 40, 10),
        (1_000_000, [100, 50], 20, 20),
        (1_000_000, [400, 200], 50, 15),
        (4_000_000, [100, 50], 20, 10),
    ] {
        let b = ws(n, m, k, kk);
        println!(
            "{n}, {} = {}+{}, {k}, {kk}: {:.0} MB, {:.0} B/item",
            m[0] + m[1],
            m[0],
            m[1],
            b / 1048576.0,
            b / n as f64
        );
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("labeled") {
        let ns: Vec<usize> = args[1..].iter().map(|a| a.parse().unwrap()).collect();
        let ns = if ns.is_empty() {
            vec![20_000, 100_000]
        } else {
            ns
        };
        labeled(&ns);
        return;
    }
    if args.first().map(String::as_str) == Some("lists") {
        let ns: Vec<usize> = args[1..].iter().map(|a| a.parse().unwrap()).collect();
        let ns = if ns.is_empty() {
            vec![300_000, 1_000_000]
        } else {
            ns
        };
        lists(&ns);
        return;
    }
    if args.first().map(String::as_str) == Some("memory") {
        memory();
        return;
    }
    if args.first().map(String::as_str) == Some("crossover") {
        let ns: Vec<usize> = args[1..].iter().map(|a| a.parse().unwrap()).collect();
        let ns = if ns.is_empty() {
            vec![4000, 8000, 16000]
        } else {
            ns
        };
        crossover(&ns);
        return;
    }
    let mut opt = |name: &str| -> Option<String> {
        let p = args.iter().position(|a| a == name)?;
        let v = args[p + 1].clone();
        args.drain(p..p + 2);
        Some(v)
    };
    let build = match opt("--graph").as_deref() {
        None | Some("approx") => GraphBuild::Approx(AnnParams::default()),
        Some("exact") => GraphBuild::Exact,
        Some("auto") => GraphBuild::Auto,
        Some(o) => panic!("--graph exact|approx|auto, not {o}"),
    };
    let phases = opt("--phases");
    let iters: u32 = opt("--iters").map_or(100, |s| s.parse().unwrap());
    let n: usize = args.first().map_or(100_000, |a| a.parse().unwrap());
    let threads: usize = args.get(1).map_or(1, |a| a.parse().unwrap());
    let k = 20;
    let t0 = Instant::now();
    let (xs, labels, truth) = data(n, 1);
    let vs: Vec<View<'_, f64>> = xs
        .iter()
        .zip(M)
        .map(|(x, m)| View::from(Dense::new(x, m, n, m).unwrap()))
        .collect();
    let ks = [Kernel::Rbf(Bandwidth::Median); 2];
    println!(
        "N={n} views=100+50 labeled={} K={k} iters={iters} threads={threads} graph={build:?}",
        n / 10
    );
    println!(
        "data: {:.1} s, peak {:.0} MB",
        t0.elapsed().as_secs_f64(),
        peak_mb()
    );
    let mut p = PipelineParams::preset(Method::MvslT);
    p.solver.max_iter = iters;
    p.solver.tol = 0.0;
    p.solver.parallel = if threads > 1 {
        Parallel::Threads(threads)
    } else {
        Parallel::Serial
    };
    // MKL alone (the pipeline runs it again inside).
    {
        let t = Instant::now();
        let need = similarity::mkl_weights_workspace::<f64>(
            vs.iter().map(|v| v.shape()),
            &ks[..],
            C,
            &p.mkl,
        )
        .unwrap();
        let mut w = vec![0u8; need];
        let mut eta = [0.0; 2];
        similarity::mkl_weights(&vs[..], &ks[..], &labels, C, &p.mkl, &mut eta, &mut w).unwrap();
        println!(
            "mkl alone: {:.2} s, eta {:?}",
            t.elapsed().as_secs_f64(),
            eta
        );
    }
    // Phases alone, on the pipeline's pool (`--phases`; `--phases nosweep` skips TGE alone,
    // whose labeled sweep is quadratic in the labeled count): the median bandwidths (serial),
    // NN-descent over all items (the graph's neighbours) and TGE (NN-descent + the labeled
    // sweep); the sweep's time is TGE's minus NN-descent's.
    if let Some(what) = phases {
        let lab = (&labels[..], C);
        let t = Instant::now();
        let c = cpu_seconds();
        let need = similarity::resolve_bandwidths_workspace::<f64>(
            vs.iter().map(|v| v.shape()),
            &ks[..],
            C,
            0,
        )
        .unwrap();
        let mut w = vec![0u8; need];
        let mut g = [0.0; 2];
        similarity::resolve_bandwidths(&vs[..], &ks[..], lab.0, C, 0, &mut g, &mut w).unwrap();
        drop(w);
        println!(
            "phase median: {:.2} s wall, {:.2} s CPU (serial)",
            t.elapsed().as_secs_f64(),
            cpu_seconds() - c
        );
        let eta = [0.5, 0.5];
        let ann = build
            .resolve(n, p.graph.ka, p.solver.parallel)
            .unwrap_or_default();
        let t = Instant::now();
        let c = cpu_seconds();
        let need =
            similarity::approx_knn_workspace::<f64>(vs.iter().map(|v| v.shape()), &ks[..], C, &ann)
                .unwrap();
        let mut w = vec![0u8; need];
        let (mut nb, mut sm) = (vec![0usize; n * ann.k], vec![0.0; n * ann.k]);
        let rep = similarity::approx_knn(
            &vs[..],
            &ks[..],
            &eta,
            lab.0,
            C,
            &ann,
            &mut nb,
            &mut sm,
            &mut w,
        )
        .unwrap();
        drop((w, nb, sm));
        let (gw, gc) = (t.elapsed().as_secs_f64(), cpu_seconds() - c);
        println!(
            "phase graph (NN-descent, k {}): {gw:.2} s wall, {gc:.2} s CPU, {} iterations, {} values, peak {:.0} MB",
            ann.k,
            rep.iterations,
            rep.evaluations,
            peak_mb()
        );
        if what != "nosweep" {
            let gp = p.graph;
            let cap = graph::tge_capacity(n, C, &gp).unwrap();
            let need = graph::tge_build_workspace::<f64>(
                vs.iter().map(|v| v.shape()),
                &ks[..],
                C,
                &gp,
                &build,
            )
            .unwrap();
            let mut w = vec![0u8; need];
            let (mut arp, mut aci, mut aw) = (
                vec![0; n + 1],
                vec![0; cap.affinity],
                vec![0.0; cap.affinity],
            );
            let (mut prp, mut pci, mut pw) =
                (vec![0; n + 1], vec![0; cap.penalty], vec![0.0; cap.penalty]);
            let t = Instant::now();
            let c = cpu_seconds();
            graph::tge_build(
                &vs[..],
                &ks[..],
                (&eta, &labels, C),
                &gp,
                &build,
                CsrOut {
                    row_ptr: &mut arp,
                    col_idx: &mut aci,
                    weights: &mut aw,
                },
                CsrOut {
                    row_ptr: &mut prp,
                    col_idx: &mut pci,
                    weights: &mut pw,
                },
                &mut w,
                p.solver.parallel,
            )
            .unwrap();
            let (tw, tc) = (t.elapsed().as_secs_f64(), cpu_seconds() - c);
            println!(
                "phase TGE (graph + labeled sweep): {tw:.2} s wall, {tc:.2} s CPU; sweep alone ~ {:.2} s wall, {:.2} s CPU",
                tw - gw,
                tc - gc
            );
        }
    }
    let need = pipeline::fit_graph_workspace::<f64>(
        vs.iter().map(|v| v.shape()),
        &ks[..],
        C,
        k,
        &p,
        &build,
    )
    .unwrap();
    println!("workspace: {:.0} MB", need as f64 / 1048576.0);
    let mut w = vec![0u8; need];
    let mut us: Vec<Vec<f64>> = M.iter().map(|&m| vec![0.0; m * k]).collect();
    let (mut v, mut eta) = (vec![0.0; k * n], vec![0.0; 2]);
    let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
    let start = Instant::now();
    let cpu0 = cpu_seconds();
    let tcpu0 = thread_cpu_seconds();
    let mut setup = (0.0, 0.0, 0.0);
    // The set-up's phases from the progress reports: (name, wall, CPU, calling thread's CPU)
    // at each phase's end.
    let mut marks: Vec<(&str, f64, f64, f64)> = Vec::new();
    let mut last_graph = None;
    let mut mon = |pr: &Progress| {
        let now = (
            start.elapsed().as_secs_f64(),
            cpu_seconds() - cpu0,
            thread_cpu_seconds() - tcpu0,
        );
        let name = match (pr.phase, pr.fraction) {
            (Phase::Setup, 0.0) => Some("checks (before MKL)"),
            (Phase::Setup, _) => Some("MKL weights"),
            (Phase::Graph, 0.0) => None,
            (Phase::Graph, f) if f < 1.0 => {
                last_graph = Some(now);
                None
            }
            (Phase::Graph, _) => {
                if let Some(g) = last_graph.take() {
                    marks.push(("graph: NN-descent (to its last report)", g.0, g.1, g.2));
                }
                Some("graph: labeled lists, assembly, CSR checks")
            }
            (Phase::Iterations, _) if pr.iter == 0 => Some("start of the fit"),
            _ => None,
        };
        if let Some(name) = name {
            marks.push((name, now.0, now.1, now.2));
        }
        if pr.iter == 0 && pr.phase == Phase::Iterations {
            setup = (now.0, now.1, peak_mb());
        }
        ControlFlow::Continue(())
    };
    let r = pipeline::fit_graph(
        &vs[..],
        &ks[..],
        (&labels, C, k),
        &p,
        &build,
        (&mut refs[..], &mut v, &mut eta),
        &mut w,
        Some(&mut mon),
    )
    .unwrap();
    let total = start.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    let mut prev = (0.0, 0.0, 0.0);
    for (name, w, c, t) in &marks {
        println!(
            "phase {name}: {:.2} s wall, {:.2} s CPU ({:.2} s on the calling thread, {:.2} s on the others)",
            w - prev.0,
            c - prev.1,
            t - prev.2,
            (c - prev.1) - (t - prev.2)
        );
        prev = (*w, *c, *t);
    }
    println!(
        "set-up (MKL + graph + start): {:.1} s wall, {:.1} s CPU, peak {:.0} MB",
        setup.0, setup.1, setup.2
    );
    println!(
        "iterations ({}): {:.1} s wall, {:.1} s CPU",
        r.fit.iterations,
        total - setup.0,
        cpu - setup.1
    );
    println!(
        "pipeline total: {:.1} s wall, {:.1} s CPU; graph nnz {:?}; peak {:.0} MB",
        total,
        cpu,
        r.graph,
        peak_mb()
    );
    // Transductive accuracy of the unlabeled items: the majority true cluster per argmax
    // column of V is not needed; report 1-NN-in-V accuracy on a sample instead.
    let lab: Vec<usize> = (0..n).filter(|j| j % 10 == 0).collect();
    let mut hit = 0;
    let sample: Vec<usize> = (0..n)
        .filter(|j| j % 10 != 0)
        .step_by((n / 2000).max(1))
        .collect();
    for &j in &sample {
        let vj = &v[j * k..(j + 1) * k];
        let nj = vj.iter().map(|a| a * a).sum::<f64>().sqrt().max(1e-300);
        let mut best = (f64::NEG_INFINITY, 0);
        for &i in &lab {
            let vi = &v[i * k..(i + 1) * k];
            let ni = vi.iter().map(|a| a * a).sum::<f64>().sqrt().max(1e-300);
            let s = vi.iter().zip(vj).map(|(a, b)| a * b).sum::<f64>() / (ni * nj);
            if s > best.0 {
                best = (s, i);
            }
        }
        hit += usize::from(truth[best.1] == truth[j]);
    }
    println!(
        "1-NN (cosine in V) accuracy on {} unlabeled items: {:.2} %",
        sample.len(),
        100.0 * hit as f64 / sample.len() as f64
    );
}
