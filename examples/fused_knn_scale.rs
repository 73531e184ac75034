//! Build time and edge recall of MVEL's kNN-sparsified fused graph, exact sweep
//! (`graph::fused_knn_graph`) against NN-descent (`graph::fused_knn_graph_build` with
//! `GraphBuild::Approx`, default options), one thread unless `--threads T`.
//!
//! `cargo run --release --example fused_knn_scale -- mfeat` (the 2000 items of
//! `../shared/data/mfeat`, six views) or `-- synth N` (two views of 100 and 50
//! features, 20 clusters, each a rank-5 nonnegative subspace plus 5 % noise);
//! `-- synth N approx` skips the exact sweep; `--threads T` (anywhere) runs the approximate
//! build on the built-in pool of `T` threads (the exact sweep stays serial). Prints wall and
//! process CPU seconds of the approximate build, the busiest thread's CPU seconds (Linux: on
//! a loaded machine the wall time the build would take on idle cores, spinning included) and
//! the share of the exact graph's edges the approximate graph has.

use mvnmf::graph::{
    fused_knn_graph, fused_knn_graph_build, fused_knn_graph_build_workspace,
    fused_knn_graph_capacity, fused_knn_graph_workspace, CsrOut, FusedParams, GraphBuild,
};
use mvnmf::similarity::AnnParams;
use mvnmf::{Dense, Parallel, View};
use std::time::Instant;

/// CPU seconds (user + system) in a /proc `stat` file's text (0 when unreadable).
fn stat_secs(stat: &str) -> f64 {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

/// CPU seconds of this process so far (from /proc/self/stat; 0 elsewhere).
fn cpu_secs() -> f64 {
    std::fs::read_to_string("/proc/self/stat").map_or(0.0, |s| stat_secs(&s))
}

/// CPU seconds of each of this process's threads so far, by thread id (Linux).
fn thread_secs() -> Vec<(String, f64)> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let s = std::fs::read_to_string(e.path().join("stat")).ok()?;
        Some((e.file_name().to_string_lossy().into_owned(), stat_secs(&s)))
    })
    .collect()
}

const S: usize = 10;

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
}

fn read_f64(path: &str) -> Vec<f64> {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    b.chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn synth(n: usize) -> Vec<(Vec<f64>, usize)> {
    let mut g = Lcg(42);
    let (nc, r) = (20, 5);
    let label: Vec<usize> = (0..n).map(|u| u % nc).collect();
    let coef: Vec<f64> = (0..n * r).map(|_| g.next()).collect();
    [100usize, 50]
        .iter()
        .map(|&d| {
            let basis: Vec<f64> = (0..nc * d * r).map(|_| g.next()).collect();
            let mut x = vec![0.0; d * n];
            for u in 0..n {
                let b = &basis[label[u] * d * r..(label[u] + 1) * d * r];
                for f in 0..d {
                    let mut v = 0.0;
                    for k in 0..r {
                        v += b[f + k * d] * coef[u * r + k];
                    }
                    x[f + u * d] = v + 0.05 * r as f64 * g.next();
                }
            }
            (x, d)
        })
        .collect()
}

struct Csr {
    rp: Vec<usize>,
    ci: Vec<usize>,
}

fn run(vs: &[View<'_, f64>], n: usize, b: Option<&GraphBuild>) -> (Csr, f64, f64) {
    let p = FusedParams::default();
    let sh = || vs.iter().map(|v| v.shape());
    let bytes = match b {
        Some(b) => fused_knn_graph_build_workspace::<f64>(sh(), S, None, &p, b),
        None => fused_knn_graph_workspace::<f64>(sh(), S, None, &p),
    }
    .unwrap();
    let mut work = vec![0u8; bytes];
    let cap = fused_knn_graph_capacity(n, S).unwrap();
    let (mut rp, mut ci, mut w) = (vec![0; n + 1], vec![0; cap], vec![0.0; cap]);
    let mut o = CsrOut {
        row_ptr: &mut rp,
        col_idx: &mut ci,
        weights: &mut w,
    };
    let (t, c0, th0) = (Instant::now(), cpu_secs(), thread_secs());
    let nnz = match b {
        Some(b) => fused_knn_graph_build(vs, S, None, &p, b, &mut o, &mut work),
        None => fused_knn_graph(vs, S, None, &p, &mut o, &mut work),
    }
    .unwrap();
    let secs = t.elapsed().as_secs_f64();
    let cpu = cpu_secs() - c0;
    // The busiest thread's CPU seconds in the build: the wall time on idle cores, whatever
    // else shares the machine (spinning waits count: an upper bound).
    let busiest = thread_secs()
        .iter()
        .map(|(id, x)| x - th0.iter().find(|(j, _)| j == id).map_or(0.0, |y| y.1))
        .fold(0.0, f64::max);
    eprintln!("  busiest thread {busiest:.2} s CPU");
    ci.truncate(nnz);
    eprintln!(
        "  workspace {:.1} MiB, nnz {nnz}",
        bytes as f64 / (1 << 20) as f64
    );
    (Csr { rp, ci }, secs, cpu)
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let threads = match args.iter().position(|a| a == "--threads") {
        Some(i) => {
            let t = args.get(i + 1).and_then(|s| s.parse().ok()).unwrap_or(1);
            args.drain(i..(i + 2).min(args.len()));
            t
        }
        None => 1,
    };
    let data: Vec<(Vec<f64>, usize)> = match args.first().map(String::as_str) {
        Some("mfeat") => {
            let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/mfeat");
            [76usize, 216, 64, 240, 47, 6]
                .iter()
                .enumerate()
                .map(|(i, &d)| (read_f64(&format!("{dir}/view{}.f64", i + 1)), d))
                .collect()
        }
        _ => synth(args.get(1).and_then(|s| s.parse().ok()).unwrap_or(2000)),
    };
    let n = data[0].0.len() / data[0].1;
    let vs: Vec<View<'_, f64>> = data
        .iter()
        .map(|(x, d)| View::from(Dense::new(x, *d, n, *d).unwrap()))
        .collect();
    let b = GraphBuild::Approx(AnnParams {
        parallel: Parallel::Threads(threads),
        ..AnnParams::default()
    });
    let (a, ta, ca) = run(&vs, n, Some(&b));
    println!("n = {n}, s = {S}, {threads} thread(s): approx {ta:.2} s wall, {ca:.2} s CPU");
    if args.get(2).map(String::as_str) == Some("approx") {
        return;
    }
    let (e, te, _) = run(&vs, n, None);
    let (mut hit, mut all) = (0usize, 0usize);
    for u in 0..n {
        let ea = &a.ci[a.rp[u]..a.rp[u + 1]];
        for j in &e.ci[e.rp[u]..e.rp[u + 1]] {
            all += 1;
            hit += ea.binary_search(j).is_ok() as usize;
        }
    }
    println!(
        "n = {n}, s = {S}: exact {te:.2} s, approx {ta:.2} s ({:.1}x), edge recall {:.4}",
        te / ta,
        hit as f64 / all as f64
    );
}
