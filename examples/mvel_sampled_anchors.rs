//! MVEL's anchors from k-means on all items vs on a sample (issue 30, item 2): time of
//! the anchors, of the anchor graph and of the fit, and the effect on MVEL's result (AUC of
//! the hidden positives among the unknown entries, and the final objective). Not a test.
//!
//! ```sh
//! cargo run --release --example mvel_sampled_anchors -- 20000 100000
//! ```
//!
//! Data as `bench_mvel`: two views (60 and 40 features) of items in 20 clusters, 14 labels
//! tied to the clusters, 40 % of the positives given; `m = min(500, n/4)` anchors, `s = 5`,
//! k-means with 1 restart and at most 30 Lloyd iterations (as `bench_mvel`). Samples: all
//! items, `20·m` and `10·m`.

use std::time::Instant;

use mvnmf::eval::KMeansParams;
use mvnmf::graph::{
    anchor_graph, anchor_graph_workspace, anchor_scales_len, anchors_by_kmeans_sampled,
    anchors_by_kmeans_sampled_workspace, FusedParams,
};
use mvnmf::linalg::mat::MatRef;
use mvnmf::models::mvel::{self, MvelParams};
use mvnmf::{Dense, View};

fn lcg(s: &mut u64) -> f64 {
    *s = s
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() { vec![20000] } else { sizes };
    println!("| n | k-means sample | anchors s | graph s | fit s | AUC hidden | objective |");
    println!("|---|---|---|---|---|---|---|");
    for &n in &sizes {
        run(n);
    }
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
    let mut truth = vec![0u8; c * n];
    for u in 0..n {
        for l in [cl[u] % c, (cl[u] * 3 + 1) % c] {
            truth[l + u * c] = 1;
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
    let (m, sn) = (500usize.min(n / 4), 5usize);
    let kp = KMeansParams {
        restarts: 1,
        max_iter: 30,
        ..KMeansParams::default()
    };
    for sample in [n, 20 * m, 10 * m] {
        if sample > n {
            continue;
        }
        let t0 = Instant::now();
        let wa = anchors_by_kmeans_sampled_workspace::<f64>(
            vs.iter().map(|v| v.shape()),
            m,
            &kp,
            sample,
        )
        .unwrap();
        let mut an = [vec![0.0; d1 * m], vec![0.0; d2 * m]];
        {
            let mut refs: Vec<&mut [f64]> = an.iter_mut().map(|a| &mut a[..]).collect();
            anchors_by_kmeans_sampled(&vs[..], m, &kp, sample, &mut refs[..], &mut vec![0u8; wa])
                .unwrap();
        }
        let t_anchor = t0.elapsed().as_secs_f64();
        let av = [
            View::from(Dense::new(&an[0], d1, m, d1).unwrap()),
            View::from(Dense::new(&an[1], d2, m, d2).unwrap()),
        ];
        let t1 = Instant::now();
        let wg =
            anchor_graph_workspace::<f64>(vs.iter().map(|v| v.shape()), n, m, None, &fp).unwrap();
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
        let t_graph = t1.elapsed().as_secs_f64();
        let wf = mvel::fit_anchored_workspace::<f64>(n, c, r, m, &prm).unwrap();
        let (mut q, mut a, mut h) = (vec![0.0; c * r], vec![0.0; r * m], vec![0.0; r * n]);
        let t2 = Instant::now();
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
        let t_fit = t2.elapsed().as_secs_f64();
        // AUC over the unknown entries (y = 0): hidden positives against true negatives.
        let mut sc: Vec<(f64, u8)> = Vec::new();
        for u in 0..n {
            for l in 0..c {
                if y[l + u * c] == 0 {
                    let f: f64 = (0..r).map(|t| q[l + t * c] * h[t + u * r]).sum();
                    sc.push((f, truth[l + u * c]));
                }
            }
        }
        sc.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
        let (mut neg, mut pairs) = (0u64, 0u64);
        let pos = sc.iter().filter(|x| x.1 == 1).count() as u64;
        let negs = sc.len() as u64 - pos;
        for &(_, t) in &sc {
            if t == 1 {
                pairs += neg;
            } else {
                neg += 1;
            }
        }
        let auc = pairs as f64 / (pos * negs).max(1) as f64;
        let label = if sample >= n {
            "all".to_string()
        } else {
            format!("{sample}")
        };
        println!(
            "| {n} | {label} | {t_anchor:.2} | {t_graph:.2} | {t_fit:.2} | {auc:.4} | {:.6e} |",
            rep.objective.total
        );
    }
}
