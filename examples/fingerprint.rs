//! Fingerprints of a fixed set of fits: one line per case with a hash of every
//! output byte (factors, encodings, fusion weights) and of the report's
//! objective bits.
//!
//! A change of structure must not change these lines on the same machine
//! (the SIMD paths differ between CPUs, so compare before/after on one host):
//!
//! ```sh
//! cargo run --release --example fingerprint > /tmp/before.txt
//! # ... change ...
//! cargo run --release --example fingerprint | diff /tmp/before.txt -
//! ```
//!
//! Cases: every pipeline method (MKL + graphs + the shallow solver), NMF, joint
//! NMF and their encodes, MvSL encode, DMCL and DNMF (deep) and deep encode,
//! JSNMF, β-NMF; MVEL (fused graph, item fit; anchors by k-means, anchor graph,
//! anchored fit and embedding) and the symmetric eigensolver on dense views;
//! each on dense views and on the same views as CSC, for two seeds.

use mvnmf::eval::KMeansParams;
use mvnmf::eval::UNLABELED;
use mvnmf::graph::{
    anchor_graph, anchor_graph_workspace, anchor_scales_len, anchors_by_kmeans,
    anchors_by_kmeans_workspace, fused_graph, fused_graph_workspace, DenseGraph, FusedParams,
    NoGraph, Sge,
};
use mvnmf::linalg::eig::{sym_eig, sym_eig_workspace};
use mvnmf::linalg::mat::MatRef;
use mvnmf::models::beta::{self, BetaParams};
use mvnmf::models::deep::{self, DeepParams};
use mvnmf::models::jsnmf::{self, JsnmfParams};
use mvnmf::models::mvel::{self, MvelParams};
use mvnmf::models::mvsl::{self, MvslParams};
use mvnmf::models::nmf::{self, NmfParams};
use mvnmf::pipeline::{self, Method, PipelineParams};
use mvnmf::similarity::{Bandwidth, Kernel};
use mvnmf::{Csc, Dense, Report, View};

/// FNV-1a over the bytes of f64 slices.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf29ce484222325)
    }
    fn f64s(&mut self, xs: &[f64]) {
        for x in xs {
            for b in x.to_le_bytes() {
                self.0 ^= b as u64;
                self.0 = self.0.wrapping_mul(0x100000001b3);
            }
        }
    }
    fn report(&mut self, r: &Report) {
        let o = r.objective;
        self.f64s(&[
            r.iterations as f64,
            o.total,
            o.reconstruction(),
            o.sparsity(),
            o.affinity(),
            o.penalty(),
            o.l1(),
        ]);
    }
}

struct Data {
    n: usize,
    xs: Vec<(usize, Vec<f64>)>,
    csc: Vec<(Vec<usize>, Vec<usize>, Vec<f64>)>,
    labels: Vec<u32>,
}

/// Three views of `n` items of 4 classes, a third of the entries zero, a
/// third of the items labeled.
fn data(n: usize, seed: u64) -> Data {
    let mut s = seed.wrapping_mul(0x9e3779b97f4a7c15) | 1;
    let mut uni = move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    let xs: Vec<(usize, Vec<f64>)> = [17usize, 9, 30]
        .iter()
        .map(|&m| {
            let x = (0..m * n)
                .map(|t| {
                    let (i, j) = (t % m, t / m);
                    let z = uni();
                    if z < 0.33 {
                        0.0
                    } else {
                        z + if i % 4 == j % 4 { 1.0 } else { 0.0 }
                    }
                })
                .collect();
            (m, x)
        })
        .collect();
    let csc = xs
        .iter()
        .map(|(m, x)| {
            let (mut cp, mut ri, mut vs) = (vec![0], vec![], vec![]);
            for j in 0..n {
                for i in 0..*m {
                    let v = x[i + j * m];
                    if v != 0.0 {
                        ri.push(i);
                        vs.push(v);
                    }
                }
                cp.push(ri.len());
            }
            (cp, ri, vs)
        })
        .collect();
    let labels = (0..n)
        .map(|j| {
            if j % 3 == 0 {
                (j % 4) as u32
            } else {
                UNLABELED
            }
        })
        .collect();
    Data { n, xs, csc, labels }
}

fn views<'a>(d: &'a Data, sparse: bool) -> Vec<View<'a, f64>> {
    if sparse {
        d.xs.iter()
            .zip(&d.csc)
            .map(|((m, _), (cp, ri, vs))| View::from(Csc::new(*m, d.n, cp, ri, vs).unwrap()))
            .collect()
    } else {
        d.xs.iter()
            .map(|(m, x)| View::from(Dense::new(x, *m, d.n, *m).unwrap()))
            .collect()
    }
}

fn main() {
    let k = 6;
    for seed in [1u64, 2] {
        let d = data(96, seed);
        let n = d.n;
        for sparse in [false, true] {
            let vs = views(&d, sparse);
            let tag = |what: &str| {
                format!(
                    "{what} seed={seed} {}",
                    if sparse { "csc" } else { "dense" }
                )
            };
            let shapes = || vs.iter().map(|x| x.shape());
            let mut us: Vec<Vec<f64>> = vs.iter().map(|x| vec![0.0; x.rows() * k]).collect();
            let mut v = vec![0.0; k * n];

            // Pipeline: every method (MKL weights, graphs, shallow solver).
            for method in [
                Method::JointNmf,
                Method::Gnmf,
                Method::MvslS,
                Method::MvslL,
                Method::MvslT,
                Method::Mcl,
            ] {
                let mut p = PipelineParams::preset(method);
                p.solver.max_iter = 25;
                p.solver.tol = 0.0;
                p.solver.alpha /= 10.0;
                p.solver.seed = seed;
                p.graph.ka = 3;
                p.graph.kp = p.graph.kp.min(2);
                let ks = [
                    Kernel::Rbf(Bandwidth::Median),
                    Kernel::Linear,
                    Kernel::Rbf(Bandwidth::Median),
                ];
                let need = pipeline::fit_workspace::<f64>(shapes(), &ks[..], 4, k, &p).unwrap();
                let mut w = vec![0u8; need];
                let mut eta = vec![0.0; vs.len()];
                let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
                let r = pipeline::fit(
                    &vs[..],
                    &ks[..],
                    &d.labels,
                    4,
                    k,
                    &p,
                    &mut refs[..],
                    &mut v,
                    &mut eta,
                    &mut w,
                    None,
                )
                .unwrap();
                let mut h = Fnv::new();
                us.iter().for_each(|u| h.f64s(u));
                h.f64s(&v);
                h.f64s(&eta);
                h.report(&r);
                println!("{:<32} {:016x}", tag(&format!("pipeline {method:?}")), h.0);
            }

            // MvSL encode of the last fit (MCL) with its SGE graph.
            {
                let mut p = MvslParams::mcl();
                p.max_iter = 20;
                p.tol = 0.0;
                let sge = Sge::new(&d.labels, 4).unwrap();
                let need = mvsl::encode_workspace::<f64, _>(shapes(), &sge, k, &p).unwrap();
                let mut w = vec![0u8; need];
                let refs: Vec<&[f64]> = us.iter().map(|u| &u[..]).collect();
                let mut v2 = vec![0.0; k * n];
                let r =
                    mvsl::encode(&vs[..], &sge, k, &p, &refs[..], &mut v2, &mut w, None).unwrap();
                let mut h = Fnv::new();
                h.f64s(&v2);
                h.report(&r);
                println!("{:<32} {:016x}", tag("mvsl encode"), h.0);
            }

            // NMF of each view, joint NMF, their encodes.
            let np = NmfParams {
                max_iter: 40,
                tol: 0.0,
                seed,
                ..NmfParams::default()
            };
            for (i, x) in vs.iter().enumerate() {
                let m = x.rows();
                let mut u = vec![0.0; m * k];
                let need = nmf::fit_workspace::<f64>(x.shape(), k, &np).unwrap();
                let mut w = vec![0u8; need];
                let r = nmf::fit(*x, k, &np, &mut u, &mut v, &mut w, None).unwrap();
                let mut h = Fnv::new();
                h.f64s(&u);
                h.f64s(&v);
                h.report(&r);
                let need = nmf::encode_workspace::<f64>(x.shape(), k, &np).unwrap();
                let mut w = vec![0u8; need];
                let mut v2 = vec![0.0; k * n];
                let r = nmf::encode(*x, k, &np, &u, &mut v2, &mut w, None).unwrap();
                h.f64s(&v2);
                h.report(&r);
                println!("{:<32} {:016x}", tag(&format!("nmf view{i}")), h.0);
            }
            {
                let need = nmf::joint_fit_workspace::<f64>(shapes(), k, &np).unwrap();
                let mut w = vec![0u8; need];
                let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
                let r =
                    nmf::joint_fit(&vs[..], k, &np, &mut refs[..], &mut v, &mut w, None).unwrap();
                let mut h = Fnv::new();
                us.iter().for_each(|u| h.f64s(u));
                h.f64s(&v);
                h.report(&r);
                println!("{:<32} {:016x}", tag("joint nmf"), h.0);
            }

            // JSNMF over the first and third views' first 9 features as two
            // "sources" of different item counts (items 0..60 and 30..96);
            // dense only (the CSC sources' path is the same as the views').
            if !sparse {
                let m = 9;
                let cut = |v: usize, a: usize, b: usize| -> Vec<f64> {
                    let (mv, x) = (&d.xs[v].0, &d.xs[v].1);
                    (a..b)
                        .flat_map(|j| x[j * mv..j * mv + m].iter().copied())
                        .collect()
                };
                let (s1, s2) = (cut(0, 0, 60), cut(2, 30, n));
                let srcs = [
                    View::from(Dense::new(&s1, m, 60, m).unwrap()),
                    View::from(Dense::new(&s2, m, n - 30, m).unwrap()),
                ];
                let (kk, ranks) = (2usize, [4usize, 5]);
                let p = JsnmfParams {
                    iter: NmfParams {
                        max_iter: 30,
                        tol: 0.0,
                        seed,
                        ..NmfParams::default()
                    },
                };
                let need =
                    jsnmf::fit_workspace::<f64>(srcs.iter().map(|x| x.shape()), kk, &ranks, &p)
                        .unwrap();
                let mut work = vec![0u8; need];
                let mut w = vec![0.0; m * kk];
                let mut u: Vec<Vec<f64>> = ranks.iter().map(|&r| vec![0.0; m * (r - kk)]).collect();
                let mut h: Vec<Vec<f64>> = srcs
                    .iter()
                    .zip(ranks)
                    .map(|(x, r)| vec![0.0; r * x.cols()])
                    .collect();
                let mut ur: Vec<&mut [f64]> = u.iter_mut().map(|x| &mut x[..]).collect();
                let mut hr: Vec<&mut [f64]> = h.iter_mut().map(|x| &mut x[..]).collect();
                let r = jsnmf::fit(
                    &srcs[..],
                    kk,
                    &ranks,
                    None,
                    &p,
                    &mut w,
                    &mut ur[..],
                    &mut hr[..],
                    &mut work,
                    None,
                )
                .unwrap();
                let mut hs = Fnv::new();
                hs.f64s(&w);
                u.iter().chain(&h).for_each(|x| hs.f64s(x));
                hs.report(&r);
                println!("{:<32} {:016x}", tag("jsnmf"), hs.0);
            }

            // β-NMF (joint, three views): KL on dense and CSC views, the other
            // divergences on dense ones; and with the first view times 8 (views
            // at different scales: issue 31's per-view rule).
            let betas: &[f64] = if sparse {
                &[1.0]
            } else {
                &[0.5, 1.0, 1.5, 2.0]
            };
            for &b in betas {
                for apart in [false, true] {
                    let x8: Vec<f64> = d.xs[0].1.iter().map(|x| 8.0 * x).collect();
                    let mut bvs = vs.clone();
                    if apart && !sparse {
                        bvs[0] = View::from(Dense::new(&x8, d.xs[0].0, n, d.xs[0].0).unwrap());
                    } else if apart {
                        continue;
                    }
                    let p = BetaParams {
                        beta: b,
                        iter: NmfParams {
                            max_iter: 30,
                            tol: 0.0,
                            seed,
                            ..NmfParams::default()
                        },
                        ..BetaParams::default()
                    };
                    let need =
                        beta::fit_workspace::<f64>(bvs.iter().map(|x| x.shape()), k, &p).unwrap();
                    let mut w = vec![0u8; need];
                    let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
                    let r =
                        beta::fit(&bvs[..], k, &p, &mut refs[..], &mut v, &mut w, None).unwrap();
                    let mut h = Fnv::new();
                    us.iter().for_each(|u| h.f64s(u));
                    h.f64s(&v);
                    h.report(&r);
                    let what = format!("beta_nmf b={b}{}", if apart { " x8" } else { "" });
                    println!("{:<32} {:016x}", tag(&what), h.0);
                }
            }

            // MVEL (dense only: the fused graph takes dense views): the fused
            // graph, the item fit on it, and the symmetric eigensolver.
            if !sparse {
                mvel_lines(&vs, &d, n, seed, &tag);
            }

            // Deep: DMCL with SGE, DNMF without a graph, then deep encode.
            let layers = [9usize, k];
            let sge = Sge::new(&d.labels, 4).unwrap();
            for (name, mut p) in [("dmcl", DeepParams::dmcl()), ("dnmf", DeepParams::dnmf())] {
                p.top.max_iter = 20;
                p.top.tol = 0.0;
                // Fixed weights (the fingerprint follows the numerics, not
                // the presets): DMCL α = 10, DNMF none.
                p.top.alpha = if name == "dmcl" { 10.0 } else { 0.0 };
                p.top.seed = seed;
                p.pretrain_iter = 15;
                let mut du: Vec<Vec<f64>> = vs
                    .iter()
                    .map(|x| vec![0.0; deep::factor_len(x.rows(), &layers).unwrap()])
                    .collect();
                let mut h = Fnv::new();
                let r = if name == "dmcl" {
                    let need = deep::fit_workspace::<f64, _>(shapes(), &sge, &layers, &p).unwrap();
                    let mut w = vec![0u8; need];
                    let mut refs: Vec<&mut [f64]> = du.iter_mut().map(|u| &mut u[..]).collect();
                    deep::fit(
                        &vs[..],
                        &sge,
                        &layers,
                        &p,
                        &mut refs[..],
                        &mut v,
                        &mut w,
                        None,
                    )
                } else {
                    let g = NoGraph { n };
                    let need = deep::fit_workspace::<f64, _>(shapes(), &g, &layers, &p).unwrap();
                    let mut w = vec![0u8; need];
                    let mut refs: Vec<&mut [f64]> = du.iter_mut().map(|u| &mut u[..]).collect();
                    deep::fit(
                        &vs[..],
                        &g,
                        &layers,
                        &p,
                        &mut refs[..],
                        &mut v,
                        &mut w,
                        None,
                    )
                }
                .unwrap();
                du.iter().for_each(|u| h.f64s(u));
                h.f64s(&v);
                h.report(&r);
                let g = NoGraph { n };
                let need = deep::encode_workspace::<f64, _>(shapes(), &g, &layers, &p).unwrap();
                let mut w = vec![0u8; need];
                let refs: Vec<&[f64]> = du.iter().map(|u| &u[..]).collect();
                let mut v2 = vec![0.0; k * n];
                let r = deep::encode(&vs[..], &g, &layers, &p, &refs[..], &mut v2, &mut w, None)
                    .unwrap();
                h.f64s(&v2);
                h.report(&r);
                println!("{:<32} {:016x}", tag(&format!("deep {name}")), h.0);
            }
        }
    }
}

/// MVEL's lines (see `main`): labels = the one-hot classes of the labeled items.
fn mvel_lines(vs: &[View<'_, f64>], d: &Data, n: usize, seed: u64, tag: &dyn Fn(&str) -> String) {
    let c = 4;
    let mut y = vec![0u8; c * n];
    for (u, &l) in d.labels.iter().enumerate() {
        if l != UNLABELED {
            y[l as usize + u * c] = 1;
        }
    }
    let ym = MatRef::col_major(&y, c, n).unwrap();
    let r = 3;
    let prm = MvelParams {
        max_iter: 25,
        tol: 0.0,
        nmf_iter: 20,
        seed,
        unknown_weight: 0.2,
        ..MvelParams::default()
    };
    let fp = FusedParams::default();
    let need = fused_graph_workspace::<f64>(vs.iter().map(|x| x.shape()), &fp).unwrap();
    let mut w = vec![0.0; n * n];
    fused_graph(vs, None, None, &fp, &mut w, &mut vec![0u8; need]).unwrap();
    let g = DenseGraph::new(&w, n).unwrap();
    let need = mvel::fit_workspace::<f64, _>(n, c, r, &g, &prm).unwrap();
    let (mut q, mut h) = (vec![0.0; c * r], vec![0.0; r * n]);
    let rep = mvel::fit(ym, &g, r, &prm, &mut q, &mut h, &mut vec![0u8; need], None).unwrap();
    let mut hs = Fnv::new();
    hs.f64s(&w);
    hs.f64s(&q);
    hs.f64s(&h);
    hs.report(&rep);
    println!("{:<32} {:016x}", tag("mvel"), hs.0);

    // Anchors by k-means, the anchor graph, the anchored fit and H = A Z.
    let (m, sn) = (12, 3);
    let kp = KMeansParams {
        restarts: 2,
        seed,
        ..KMeansParams::default()
    };
    let need = anchors_by_kmeans_workspace::<f64>(vs.iter().map(|x| x.shape()), m, &kp).unwrap();
    let mut an: Vec<Vec<f64>> = vs.iter().map(|x| vec![0.0; x.rows() * m]).collect();
    {
        let mut refs: Vec<&mut [f64]> = an.iter_mut().map(|x| &mut x[..]).collect();
        anchors_by_kmeans(vs, m, &kp, &mut refs[..], &mut vec![0u8; need]).unwrap();
    }
    let av: Vec<View<'_, f64>> = an
        .iter()
        .map(|x| View::from(Dense::new(x, x.len() / m, m, x.len() / m).unwrap()))
        .collect();
    let need =
        anchor_graph_workspace::<f64>(vs.iter().map(|x| x.shape()), n, m, None, &fp).unwrap();
    let mut scales = vec![0.0; anchor_scales_len(vs.len())];
    let (mut idx, mut z) = (vec![0usize; n * sn], vec![0.0; n * sn]);
    anchor_graph(
        vs,
        None,
        &av[..],
        sn,
        None,
        &fp,
        &mut scales,
        &mut idx,
        &mut z,
        &mut vec![0u8; need],
    )
    .unwrap();
    let need = mvel::fit_anchored_workspace::<f64>(n, c, r, m, &prm).unwrap();
    let mut a = vec![0.0; r * m];
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
        &mut vec![0u8; need],
        None,
    )
    .unwrap();
    mvel::embed_anchored(&a, r, &idx, &z, sn, &mut h).unwrap();
    let mut hs = Fnv::new();
    an.iter().for_each(|x| hs.f64s(x));
    hs.f64s(&scales);
    hs.f64s(&idx.iter().map(|&i| i as f64).collect::<Vec<_>>());
    hs.f64s(&z);
    hs.f64s(&q);
    hs.f64s(&a);
    hs.f64s(&h);
    hs.report(&rep);
    println!("{:<32} {:016x}", tag("mvel anchors"), hs.0);

    // The eigensolver on W's leading 40 × 40 block.
    let k = 40;
    let mut a: Vec<f64> = (0..k * k).map(|t| w[t % k + (t / k) * n]).collect();
    let mut ev = vec![0.0; k];
    let need = sym_eig_workspace::<f64>(k).unwrap();
    sym_eig(&mut a, k, &mut ev, &mut vec![0u8; need]).unwrap();
    let mut hs = Fnv::new();
    hs.f64s(&a);
    hs.f64s(&ev);
    println!("{:<32} {:016x}", tag("sym_eig"), hs.0);
}
