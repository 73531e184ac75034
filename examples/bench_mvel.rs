//! MVEL, dense fused graph vs anchor graph: time per phase and memory, at
//! n = 2,000 and n = 20,000 items (issue 14, item 10). Synthetic data: two
//! views (60 and 40 features) of items in 20 clusters, 14 labels tied to the
//! clusters, 40 % of the positives given.
//!
//! ```sh
//! cargo run --release --example bench_mvel            # n = 2000 and 20000
//! cargo run --release --example bench_mvel -- 2000    # one size
//! ```
//!
//! Memory is what the library asks for: the graph (`n²` doubles dense;
//! `n·s` indices and weights anchored) plus the largest workspace of the
//! phases; the process's peak RSS is printed too. The dense fit at n = 20,000
//! runs `DENSE_BIG_ITERS` iterations only (each costs two `r × n × n` GEMMs per
//! trial step); the time per iteration is what to compare.

use std::time::Instant;

use mvnmf::eval::KMeansParams;
use mvnmf::graph::{
    anchor_graph, anchor_graph_workspace, anchor_scales_len, anchors_by_kmeans,
    anchors_by_kmeans_workspace, fused_graph, fused_graph_workspace, DenseGraph, FusedParams,
};
use mvnmf::linalg::mat::MatRef;
use mvnmf::models::mvel::{self, MvelParams};
use mvnmf::{Dense, View};

const DENSE_BIG_ITERS: u32 = 5;

fn lcg(s: &mut u64) -> f64 {
    *s = s
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

fn peak_rss_mib() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|k| k.parse::<f64>().ok())
        .map_or(f64::NAN, |k| k / 1024.0)
}

fn mib(b: usize) -> f64 {
    b as f64 / 1048576.0
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![2000, 20000]
    } else {
        sizes
    };
    println!("| n | graph | build s | fit s (iters) | s / iter | graph MiB | peak workspace MiB |");
    println!("|---|---|---|---|---|---|---|");
    for &n in &sizes {
        run(n);
    }
    println!("\nprocess peak RSS {:.0} MiB", peak_rss_mib());
}

fn run(n: usize) {
    let (d1, d2, c, r, k) = (60usize, 40usize, 14usize, 10usize, 20usize);
    let mut s = 7u64;
    let centers: Vec<f64> = (0..k * (d1 + d2)).map(|_| lcg(&mut s) * 4.0).collect();
    let cl: Vec<usize> = (0..n).map(|u| u % k).collect();
    let mut x1 = vec![0.0; d1 * n];
    let mut x2 = vec![0.0; d2 * n];
    for u in 0..n {
        for f in 0..d1 {
            x1[f + u * d1] = centers[f + cl[u] * (d1 + d2)] + lcg(&mut s) - 0.5;
        }
        for f in 0..d2 {
            x2[f + u * d2] = centers[d1 + f + cl[u] * (d1 + d2)] + lcg(&mut s) - 0.5;
        }
    }
    let mut y = vec![0u8; c * n];
    for u in 0..n {
        for l in [cl[u] % c, (cl[u] * 3 + 1) % c] {
            if lcg(&mut s) < 0.4 {
                y[l + u * c] = 1;
            }
        }
    }
    let ym = MatRef::col_major(&y, c, n).unwrap();
    let vs = [
        View::from(Dense::new(&x1, d1, n, d1).unwrap()),
        View::from(Dense::new(&x2, d2, n, d2).unwrap()),
    ];
    let fp = FusedParams::default();
    let prm = MvelParams {
        max_iter: 50,
        tol: 0.0,
        ..MvelParams::default()
    };

    // Anchors: m = 500, s = 5.
    let (m, sn) = (500usize.min(n / 4), 5usize);
    let t0 = Instant::now();
    let kp = KMeansParams {
        restarts: 1,
        max_iter: 30,
        ..KMeansParams::default()
    };
    let wa = anchors_by_kmeans_workspace::<f64>(vs.iter().map(|v| v.shape()), m, &kp).unwrap();
    let mut an = [vec![0.0; d1 * m], vec![0.0; d2 * m]];
    {
        let mut refs: Vec<&mut [f64]> = an.iter_mut().map(|a| &mut a[..]).collect();
        anchors_by_kmeans(&vs[..], m, &kp, &mut refs[..], &mut vec![0u8; wa]).unwrap();
    }
    let av = [
        View::from(Dense::new(&an[0], d1, m, d1).unwrap()),
        View::from(Dense::new(&an[1], d2, m, d2).unwrap()),
    ];
    let wg = anchor_graph_workspace::<f64>(vs.iter().map(|v| v.shape()), n, m, None, &fp).unwrap();
    let mut scales = vec![0.0; anchor_scales_len(2)];
    let (mut idx, mut z) = (vec![0usize; n * sn], vec![0.0; n * sn]);
    anchor_graph(
        &vs[..],
        None,
        &av[..],
        sn,
        None,
        &fp,
        &mut scales,
        &mut idx,
        &mut z,
        &mut vec![0u8; wg],
    )
    .unwrap();
    let build = t0.elapsed().as_secs_f64();
    let wf = mvel::fit_anchored_workspace::<f64>(n, c, r, m, &prm).unwrap();
    let (mut q, mut a, mut h) = (vec![0.0; c * r], vec![0.0; r * m], vec![0.0; r * n]);
    let t1 = Instant::now();
    let rep = mvel::fit_anchored(
        ym,
        &idx,
        &z,
        sn,
        m,
        r,
        &prm,
        &mut q,
        &mut a,
        &mut vec![0u8; wf],
        None,
    )
    .unwrap();
    mvel::embed_anchored(&a, r, &idx, &z, sn, &mut h).unwrap();
    let fit = t1.elapsed().as_secs_f64();
    println!(
        "| {n} | anchors m={m} s={sn} | {build:.2} | {fit:.2} ({}) | {:.4} | {:.2} | {:.1} |",
        rep.iterations,
        fit / f64::from(rep.iterations.max(1)),
        mib(n * sn * 16),
        mib(wa.max(wg).max(wf)),
    );

    // Dense.
    let wd = fused_graph_workspace::<f64>(vs.iter().map(|v| v.shape()), &fp).unwrap();
    let t0 = Instant::now();
    let mut w = vec![0.0; n * n];
    fused_graph(&vs[..], None, None, &fp, &mut w, &mut vec![0u8; wd]).unwrap();
    let build = t0.elapsed().as_secs_f64();
    let g = DenseGraph::new(&w, n).unwrap();
    let prm = MvelParams {
        max_iter: if n > 5000 {
            DENSE_BIG_ITERS
        } else {
            prm.max_iter
        },
        ..prm
    };
    let wf = mvel::fit_workspace::<f64, _>(n, c, r, &g, &prm).unwrap();
    let t1 = Instant::now();
    let rep = mvel::fit(ym, &g, r, &prm, &mut q, &mut h, &mut vec![0u8; wf], None).unwrap();
    let fit = t1.elapsed().as_secs_f64();
    println!(
        "| {n} | dense | {build:.2} | {fit:.2} ({}) | {:.4} | {:.1} | {:.1} |",
        rep.iterations,
        fit / f64::from(rep.iterations.max(1)),
        mib(n * n * 8),
        mib(wd.max(wf)),
    );
}
