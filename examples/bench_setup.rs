//! Issue 30, item 2: the sampled set-up passes (`similarity::sample`) against the exact ones,
//! one run each (not a test; the numbers go in the docs and the report).
//!
//! Usage: `bench_setup [MFEAT_DIR] [SYNTH_N]` (defaults `../shared/data/mfeat`, 10000).
//!
//! * UCI mfeat, all 2000 items labeled (1 999 000 pairs), the six views as shipped, RBF with
//!   the median bandwidth: per view the sampled median's rank among all pairs and the
//!   relative difference of `γ` (default `m = 2¹⁷` pairs, five seeds); the MKL weights with
//!   the stratified alignment at `s` = 250, 500, 1000 items (five seeds): max `|Δη|`.
//! * Synthetic, `SYNTH_N` items all labeled in 10 classes, views of 100 (RBF), 50 (RBF) and
//!   100 (linear) features, each class a 5-dimensional nonnegative subspace plus small
//!   noise: the default rule (sampled above 4096 labeled items) against the exact path,
//!   `γ`, `η` and seconds of each.

use mvnmf::similarity::{self, Bandwidth, Kernel, MklParams, Sampling, SetupPath};
use mvnmf::{graph, Dense, View};
use std::time::Instant;

fn read_f64(path: &str) -> Vec<f64> {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    b.chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn gammas(
    views: &[View<'_, f64>],
    ks: &[Kernel],
    labels: &[u32],
    c: usize,
    s: &Sampling,
) -> Vec<f64> {
    let need =
        similarity::resolve_bandwidths_workspace::<f64>(views.iter().map(|v| v.shape()), ks, c, 0)
            .unwrap();
    let mut w = vec![0u8; need];
    let mut g = vec![0.0; views.len()];
    similarity::resolve_bandwidths_with(views, ks, labels, c, 0, s, &mut g, &mut w).unwrap();
    g
}

fn eta(views: &[View<'_, f64>], ks: &[Kernel], labels: &[u32], c: usize, s: &Sampling) -> Vec<f64> {
    let p = MklParams {
        sampling: *s,
        ..MklParams::default()
    };
    let need = similarity::mkl_weights_workspace::<f64>(views.iter().map(|v| v.shape()), ks, c, &p)
        .unwrap();
    let mut w = vec![0u8; need];
    let mut e = vec![0.0; views.len()];
    similarity::mkl_weights(views, ks, labels, c, &p, &mut e, &mut w).unwrap();
    e
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

struct Lcg(u64);
impl Lcg {
    fn u(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
}

/// `m × n`, class `j % c`: a nonnegative combination of the class's 5 nonnegative basis
/// vectors plus uniform noise of 0.05 (relative to entries of order 1).
fn synth(m: usize, n: usize, c: usize, seed: u64) -> Vec<f64> {
    let mut g = Lcg(seed);
    let r = 5;
    let basis: Vec<f64> = (0..m * r * c).map(|_| g.u()).collect();
    let mut x = vec![0.0; m * n];
    for j in 0..n {
        let b = &basis[(j % c) * m * r..(j % c + 1) * m * r];
        let w: Vec<f64> = (0..r).map(|_| g.u()).collect();
        for i in 0..m {
            let s: f64 = (0..r).map(|t| b[i + t * m] * w[t]).sum();
            x[i + j * m] = s / r as f64 + 0.05 * g.u();
        }
    }
    x
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = args
        .get(1)
        .cloned()
        .unwrap_or_else(|| "../shared/data/mfeat".into());
    let synth_n: usize = args.get(2).map_or(10_000, |s| s.parse().unwrap());
    let exact = Sampling {
        path: SetupPath::Exact,
        ..Sampling::default()
    };
    let sampled = |m: usize, s: usize, seed: u64| Sampling {
        path: SetupPath::Sampled,
        median_pairs: m,
        align_items: s,
        seed,
        ..Sampling::default()
    };

    // Real data: mfeat.
    let labels: Vec<u32> = std::fs::read_to_string(format!("{dir}/labels.txt"))
        .unwrap()
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect();
    let n = labels.len();
    let rows = [76, 216, 64, 240, 47, 6];
    let data: Vec<Vec<f64>> = (0..6)
        .map(|v| read_f64(&format!("{dir}/view{}.f64", v + 1)))
        .collect();
    let views: Vec<View<'_, f64>> = data
        .iter()
        .zip(rows)
        .map(|(x, m)| View::from(Dense::new(x, m, n, m).unwrap()))
        .collect();
    let ks = [Kernel::Rbf(Bandwidth::Median); 6];
    let t = Instant::now();
    let ge = gammas(&views, &ks, &labels, 10, &exact);
    println!(
        "mfeat: {n} labeled, exact median of all 6 views: {:.2} s",
        t.elapsed().as_secs_f64()
    );
    // Every pair's d² per view, for the ranks.
    let d2: Vec<Vec<f64>> = (0..6)
        .map(|v| {
            let (x, m) = (&data[v], rows[v]);
            let mut d = Vec::with_capacity(n * (n - 1) / 2);
            for i in 0..n {
                for j in i + 1..n {
                    d.push(
                        (0..m)
                            .map(|r| (x[r + i * m] - x[r + j * m]).powi(2))
                            .sum::<f64>(),
                    );
                }
            }
            d.sort_by(|a, b| a.partial_cmp(b).unwrap());
            d
        })
        .collect();
    let mut worst_rank: f64 = 0.0;
    let mut worst_g: f64 = 0.0;
    for seed in 0..5 {
        let t = Instant::now();
        let gs = gammas(&views, &ks, &labels, 10, &sampled(1 << 17, 2048, seed));
        let secs = t.elapsed().as_secs_f64();
        let mut line = format!("  sampled median m=2^17 seed {seed} ({secs:.2} s):");
        for v in 0..6 {
            let d = &d2[v];
            let q = 1.0 / gs[v];
            let lo = d.partition_point(|&y| y < q * (1.0 - 1e-9)) as f64 / d.len() as f64;
            let hi = d.partition_point(|&y| y <= q * (1.0 + 1e-9)) as f64 / d.len() as f64;
            let dev = if hi < 0.5 {
                0.5 - hi
            } else if lo > 0.5 {
                lo - 0.5
            } else {
                0.0
            };
            let rel = (gs[v] / ge[v] - 1.0).abs();
            worst_rank = worst_rank.max(dev);
            worst_g = worst_g.max(rel);
            line += &format!(" v{} rank±{dev:.4} Δγ/γ {rel:.1e};", v + 1);
        }
        println!("{line}");
    }
    println!("mfeat median: worst |rank − ½| {worst_rank:.4}, worst |Δγ|/γ {worst_g:.2e}");
    let t = Instant::now();
    let ee = eta(&views, &ks, &labels, 10, &exact);
    println!(
        "mfeat MKL exact ({:.2} s): η {ee:.4?}",
        t.elapsed().as_secs_f64()
    );
    // The exact alignment loss (ridge 0.1·mean diag G), to judge a sampled η by.
    let need =
        similarity::alignment_system_workspace::<f64>(views.iter().map(|v| v.shape()), &ks, 10, 0)
            .unwrap();
    let mut w = vec![0u8; need];
    let (mut g, mut b) = (vec![0.0; 36], vec![0.0; 6]);
    let c0 = similarity::alignment_system(&views[..], &ks, &labels, 10, 0, &mut g, &mut b, &mut w)
        .unwrap();
    let ridge = 0.1 * (0..6).map(|v| g[v * 7]).sum::<f64>() / 6.0;
    let loss = |e: &[f64]| {
        let mut l = c0;
        for u in 0..6 {
            l -= 2.0 * b[u] * e[u];
            l += ridge * e[u] * e[u];
            for v in 0..6 {
                l += e[u] * g[u + 6 * v] * e[v];
            }
        }
        l
    };
    let l0 = loss(&ee);
    println!("mfeat exact alignment loss at the exact η: {l0:.6}");
    for s in [250, 500, 1000] {
        let mut worst_loss: f64 = 0.0;
        let mut worst: f64 = 0.0;
        let mut secs = 0.0;
        for seed in 0..5 {
            let t = Instant::now();
            let es = eta(&views, &ks, &labels, 10, &sampled(1 << 17, s, seed));
            secs += t.elapsed().as_secs_f64();
            worst = worst.max(max_diff(&es, &ee));
            worst_loss = worst_loss.max(loss(&es) / l0 - 1.0);
            if seed == 0 {
                println!("  s={s} seed 0: η {es:.4?}");
            }
        }
        println!(
            "mfeat MKL s={s}: worst max|Δη| over 5 seeds {worst:.4}, worst excess exact loss {worst_loss:.2e} ({:.2} s each)",
            secs / 5.0
        );
    }

    // Synthetic.
    let (c, dims) = (10, [100usize, 50, 100]);
    let sx: Vec<Vec<f64>> = dims
        .iter()
        .enumerate()
        .map(|(v, &m)| synth(m, synth_n, c, 11 + v as u64))
        .collect();
    let sv: Vec<View<'_, f64>> = sx
        .iter()
        .zip(dims)
        .map(|(x, m)| View::from(Dense::new(x, m, synth_n, m).unwrap()))
        .collect();
    let sl: Vec<u32> = (0..synth_n).map(|j| (j % c) as u32).collect();
    let sk = [
        Kernel::Rbf(Bandwidth::Median),
        Kernel::Rbf(Bandwidth::Median),
        Kernel::Linear,
    ];
    let t = Instant::now();
    let ge = gammas(&sv, &sk, &sl, c, &exact);
    let te = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let gd = gammas(&sv, &sk, &sl, c, &Sampling::default());
    let td = t.elapsed().as_secs_f64();
    println!(
        "synthetic N_l={synth_n}: median exact {te:.2} s, default (sampled) {td:.3} s; γ exact {:.5?} sampled {:.5?}, |Δγ|/γ {:.2e} {:.2e}",
        &ge[..2],
        &gd[..2],
        (gd[0] / ge[0] - 1.0).abs(),
        (gd[1] / ge[1] - 1.0).abs()
    );
    let t = Instant::now();
    let ee = eta(&sv, &sk, &sl, c, &exact);
    let te = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let ed = eta(&sv, &sk, &sl, c, &Sampling::default());
    let td = t.elapsed().as_secs_f64();
    println!(
        "synthetic MKL: exact {te:.2} s η {ee:.4?}; default (sampled) {td:.2} s η {ed:.4?}; max|Δη| {:.4}",
        max_diff(&ee, &ed)
    );
    let mut worst: f64 = 0.0;
    for seed in 1..5 {
        let s = Sampling {
            seed,
            ..Sampling::default()
        };
        worst = worst.max(max_diff(&ee, &eta(&sv, &sk, &sl, c, &s)));
    }
    println!("synthetic MKL: worst max|Δη| over seeds 1..5 {worst:.4}");

    // What stays quadratic in the labeled items: LDGE (one pass over the labeled pairs
    // under the fused kernel, ka = 5, kp = 3 class pairs), exact.
    let gp = graph::GraphParams::default();
    let cap = graph::ldge_capacity(synth_n, c, &gp).unwrap();
    let need = graph::ldge_workspace::<f64>(sv.iter().map(|v| v.shape()), &sk, c, &gp).unwrap();
    let mut w = vec![0u8; need];
    let (mut arp, mut aci, mut aw) = (
        vec![0; synth_n + 1],
        vec![0; cap.affinity],
        vec![0.0; cap.affinity],
    );
    let (mut prp, mut pci, mut pw) = (
        vec![0; synth_n + 1],
        vec![0; cap.penalty],
        vec![0.0; cap.penalty],
    );
    let t = Instant::now();
    graph::ldge(
        &sv[..],
        &sk,
        &ee,
        &sl,
        c,
        &gp,
        graph::CsrOut {
            row_ptr: &mut arp,
            col_idx: &mut aci,
            weights: &mut aw,
        },
        graph::CsrOut {
            row_ptr: &mut prp,
            col_idx: &mut pci,
            weights: &mut pw,
        },
        &mut w,
    )
    .unwrap();
    let secs = t.elapsed().as_secs_f64();
    let pairs = (synth_n * (synth_n - 1) / 2) as f64;
    println!(
        "synthetic LDGE (exact, N_l={synth_n}, Σ M_v = 250): {secs:.2} s, {:.1} ns per labeled pair",
        secs / pairs * 1e9
    );
}
