//! The neighbour-graph option (issue 30): TGE and the pipeline with the global neighbours from
//! NN-descent against the exact sweep on real data; `Auto` below its threshold is bitwise the
//! exact builder; bad requests are refused before anything is written. Also the sampled
//! k-means anchors of MVEL.

mod common;

use common::*;
use mvnmf::eval::KMeansParams;
use mvnmf::eval::UNLABELED;
use mvnmf::graph::{
    self, CsrOut, GraphBuild, GraphNnz, GraphParams, Penalty, AUTO_EXACT_BELOW, LABELED_EXACT_BELOW,
};
use mvnmf::pipeline::{self, Method, PipelineParams, PipelineReport};
use mvnmf::similarity::{AnnParams, Bandwidth, Kernel};
use mvnmf::{Dense, Error, HostPool, Monitor, Parallel, View};

/// Views as (rows, column-major values).
type Views = Vec<(usize, Vec<f64>)>;

/// Views fou, zer, mor of the shipped mfeat sample (scaled to unit mean squared norm), 30 %
/// labeled; and the true labels.
fn sample() -> (Views, Vec<u32>, Vec<u32>) {
    let (views, truth) = mfeat_sample();
    let pick = [0usize, 4, 5];
    let xs = pick
        .iter()
        .map(|&v| {
            let (m, x) = &views[v];
            let n = truth.len();
            let s = (n as f64 / x.iter().map(|a| a * a).sum::<f64>()).sqrt();
            (*m, x.iter().map(|a| a * s).collect())
        })
        .collect();
    let labels = (0..truth.len())
        .map(|j| if j % 10 < 3 { truth[j] } else { UNLABELED })
        .collect();
    (xs, labels, truth)
}

fn views(xs: &[(usize, Vec<f64>)], n: usize) -> Vec<View<'_, f64>> {
    xs.iter()
        .map(|(m, x)| View::from(Dense::new(x, *m, n, *m).unwrap()))
        .collect()
}

const KS: [Kernel; 3] = [Kernel::Rbf(Bandwidth::Median); 3];

/// Affinity and penalty outputs of `cap`'s sizes, filled with sentinels.
fn sentinel_outs(n: usize, cap: GraphNnz) -> (Csr, Csr) {
    let new = |e: usize| Csr::filled(n, e, SENTINEL, -1.0);
    (new(cap.affinity), new(cap.penalty))
}

const SENTINEL: usize = 7;

/// A builder's result `r` on [`sentinel_outs`]: the graphs trimmed to their counts, or the
/// error with both outputs checked untouched and the workspace query (`need`), if it refused,
/// refusing alike.
fn settle(
    r: Result<GraphNnz, Error>,
    need: Result<usize, Error>,
    (mut a, mut p): (Csr, Csr),
) -> Result<(Csr, Csr), Error> {
    match r {
        Ok(nnz) => {
            assert!(need.is_ok());
            a.ci.truncate(nnz.affinity);
            a.w.truncate(nnz.affinity);
            p.ci.truncate(nnz.penalty);
            p.w.truncate(nnz.penalty);
            Ok((a, p))
        }
        Err(e) => {
            for c in [&a, &p] {
                assert!(c.rp.iter().chain(&c.ci).all(|&x| x == SENTINEL), "{e:?}");
                assert!(c.w.iter().all(|&x| x == -1.0), "{e:?}");
            }
            if let Err(q) = need {
                assert_eq!(q, e, "the query and the call refuse alike");
            }
            Err(e)
        }
    }
}

/// TGE through `tge_build`: affinity, penalty (CSR, trimmed), or the error with the outputs
/// checked untouched ([`settle`]).
fn tge(
    vs: &[View<'_, f64>],
    labels: &[u32],
    gp: &GraphParams,
    b: &GraphBuild,
    par: Parallel,
) -> Result<(Csr, Csr), Error> {
    let n = labels.len();
    let eta = [0.5, 0.3, 0.2];
    let cap = graph::tge_capacity(n, 10, gp)?;
    let need = graph::tge_build_workspace::<f64>(vs.iter().map(|v| v.shape()), &KS, 10, gp, b);
    // A bad request: the call refuses it too, with its outputs untouched.
    let mut w = vec![0u8; need.unwrap_or(1 << 20)];
    let (mut a, mut p) = sentinel_outs(n, cap);
    let r = graph::tge_build(
        vs,
        &KS,
        (&eta, labels, 10),
        gp,
        b,
        outs(&mut a),
        outs(&mut p),
        &mut w,
        par,
    );
    settle(r, need, (a, p))
}

fn edges(g: &Csr) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (i, r) in g.rp.windows(2).enumerate() {
        for &j in &g.ci[r[0]..r[1]] {
            out.push((i, j));
        }
    }
    out
}

fn approx() -> GraphBuild {
    GraphBuild::Approx(AnnParams::default())
}

#[test]
fn approximate_tge_keeps_the_labeled_lists_and_most_global_edges() {
    let (xs, labels, _) = sample();
    let n = labels.len();
    let vs = views(&xs, n);
    for penalty in [Penalty::ClassPairs, Penalty::ItemNeighbors] {
        let gp = GraphParams {
            penalty,
            ..GraphParams::default()
        };
        let (ea, ep) = tge(&vs, &labels, &gp, &GraphBuild::Exact, Parallel::Serial).unwrap();
        let (aa, ap) = tge(&vs, &labels, &gp, &approx(), Parallel::Serial).unwrap();
        // The penalty is over the labeled items only: the same graph.
        assert_eq!(edges(&ep), edges(&ap), "{penalty:?}");
        assert_eq!(ep.w, ap.w);
        // The affinity: labeled same-class edges (weight σ) exact, global edges mostly.
        let (e, a) = (edges(&ea), edges(&aa));
        let se: std::collections::BTreeSet<_> = e.iter().copied().collect();
        let common = a.iter().filter(|x| se.contains(x)).count();
        let recall = common as f64 / e.len() as f64;
        assert!(recall >= 0.95, "{penalty:?}: edge recall {recall}");
        let sigma_edges = |g: &Csr| {
            let mut s: Vec<(usize, usize)> = edges(g)
                .into_iter()
                .zip(&g.w)
                .filter(|(_, &w)| w == gp.sigma)
                .map(|(x, _)| x)
                .collect();
            s.sort();
            s
        };
        assert_eq!(sigma_edges(&ea), sigma_edges(&aa), "{penalty:?}");
        // Symmetric, no self-loops.
        let sa: std::collections::BTreeSet<_> = a.iter().copied().collect();
        assert!(a.iter().all(|&(i, j)| i != j && sa.contains(&(j, i))));
        // The same graph on two threads.
        let (a2, p2) = tge(&vs, &labels, &gp, &approx(), Parallel::Threads(2)).unwrap();
        assert_eq!((a2.rp, a2.ci, a2.w), (aa.rp, aa.ci, aa.w));
        assert_eq!((p2.rp, p2.ci), (ap.rp, ap.ci));
    }
}

/// Fraction of `want`'s edges found in `got`.
fn edge_recall(want: &[(usize, usize)], got: &[(usize, usize)]) -> f64 {
    let g: std::collections::BTreeSet<_> = got.iter().copied().collect();
    want.iter().filter(|x| g.contains(x)).count() as f64 / want.len().max(1) as f64
}

fn weighted_edges(g: &Csr, w: f64) -> Vec<(usize, usize)> {
    edges(g)
        .into_iter()
        .zip(&g.w)
        .filter(|(_, &x)| x == w)
        .map(|(e, _)| e)
        .collect()
}

#[test]
fn labeled_lists_by_nn_descent_recall_the_exact_ones() {
    let (xs, labels, _) = sample();
    let n = labels.len();
    let nl = labels.iter().filter(|&&l| l != UNLABELED).count();
    assert!(nl < LABELED_EXACT_BELOW);
    assert!(!approx().labeled_approx(nl) && GraphBuild::Auto.labeled_approx(LABELED_EXACT_BELOW));
    let all = GraphBuild::ApproxAll(AnnParams::default());
    assert!(all.labeled_approx(2));
    let vs = views(&xs, n);
    for penalty in [Penalty::ClassPairs, Penalty::ItemNeighbors] {
        let gp = GraphParams {
            penalty,
            ..GraphParams::default()
        };
        let (ea, ep) = tge(&vs, &labels, &gp, &GraphBuild::Exact, Parallel::Serial).unwrap();
        let (aa, ap) = tge(&vs, &labels, &gp, &all, Parallel::Serial).unwrap();
        // Same-class lists: the σ-weighted affinity edges.
        let (se, sa) = (weighted_edges(&ea, gp.sigma), weighted_edges(&aa, gp.sigma));
        let rs = edge_recall(&se, &sa);
        let rp = edge_recall(&edges(&ep), &edges(&ap));
        eprintln!("{penalty:?}: same-class edge recall {rs:.4}, penalty edge recall {rp:.4}");
        assert!(rs >= 0.99, "{penalty:?}: same-class edge recall {rs}");
        assert!(rp >= 0.95, "{penalty:?}: penalty edge recall {rp}");
        // Every σ edge joins two labeled items of one class; every penalty edge two of
        // different classes; symmetric graphs.
        for &(i, j) in &sa {
            assert!(labels[i] != UNLABELED && labels[i] == labels[j]);
        }
        for &(i, j) in &edges(&ap) {
            assert!(labels[i] != UNLABELED && labels[j] != UNLABELED && labels[i] != labels[j]);
        }
        let set: std::collections::BTreeSet<_> = sa.iter().copied().collect();
        assert!(sa.iter().all(|&(i, j)| set.contains(&(j, i))));
        // The same graphs on two threads.
        let (a2, p2) = tge(&vs, &labels, &gp, &all, Parallel::Threads(2)).unwrap();
        assert_eq!((a2.rp, a2.ci, a2.w), (aa.rp, aa.ci, aa.w));
        assert_eq!((p2.rp, p2.ci, p2.w), (ap.rp, ap.ci, ap.w));
    }
}

/// FNV-1a of a graph's rows, columns and weight bits.
fn fingerprint(g: &Csr) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for x in g.rp.iter().chain(&g.ci).map(|&x| x as u64) {
        h = (h ^ x).wrapping_mul(0x100_0000_01b3);
    }
    for x in &g.w {
        h = (h ^ x.to_bits()).wrapping_mul(0x100_0000_01b3);
    }
    h
}

#[test]
fn labeled_lists_by_nn_descent_are_the_same_bits_for_every_pool() {
    // All 500 items labeled (seven tasks over the labeled items) and 30 % (two tasks).
    let (xs, part, truth) = sample();
    let n = truth.len();
    let vs = views(&xs, n);
    let all = GraphBuild::ApproxAll(AnnParams::default());
    let host = Parallel::Host(HostPool {
        parallel_for: reversed,
        ctx: 0,
    });
    for (labels, penalty) in [
        (&truth, Penalty::ClassPairs),
        (&truth, Penalty::ItemNeighbors),
        (&part, Penalty::ItemNeighbors),
    ] {
        let gp = GraphParams {
            penalty,
            ..GraphParams::default()
        };
        let (a0, p0) = tge(&vs, labels, &gp, &all, Parallel::Serial).unwrap();
        // The same graphs as the search on one thread before it was split into tasks
        // (fingerprints printed by the serial search at commit 1239d2d).
        eprintln!(
            "{penalty:?}, {} labeled: fingerprints {:016x} {:016x}",
            labels.iter().filter(|&&l| l != UNLABELED).count(),
            fingerprint(&a0),
            fingerprint(&p0)
        );
        for par in [
            Parallel::Threads(1),
            Parallel::Threads(2),
            Parallel::Threads(3),
            host,
        ] {
            let (a, p) = tge(&vs, labels, &gp, &all, par).unwrap();
            assert_eq!(fingerprint(&a), fingerprint(&a0), "{penalty:?} {par:?}");
            assert_eq!(fingerprint(&p), fingerprint(&p0), "{penalty:?} {par:?}");
            assert_eq!((a.rp, a.ci), (a0.rp.clone(), a0.ci.clone()));
            assert_eq!((p.rp, p.ci), (p0.rp.clone(), p0.ci.clone()));
        }
    }
}

/// LDGE through `ldge` (`b` `None`) or `ldge_build`: affinity, penalty (CSR, trimmed), or the
/// error with the outputs checked untouched ([`settle`]).
fn ldge(
    vs: &[View<'_, f64>],
    labels: &[u32],
    gp: &GraphParams,
    b: Option<&GraphBuild>,
    par: Parallel,
) -> Result<(Csr, Csr), Error> {
    let n = labels.len();
    let eta = [0.5, 0.3, 0.2];
    let cap = graph::ldge_capacity(n, 10, gp)?;
    let shapes = || vs.iter().map(|v| v.shape());
    let need = match b {
        None => graph::ldge_workspace::<f64>(shapes(), &KS, 10, gp),
        Some(b) => graph::ldge_build_workspace::<f64>(shapes(), &KS, 10, gp, b),
    };
    // A bad request: the call refuses it too, with its outputs untouched.
    let mut w = vec![0u8; need.unwrap_or(1 << 20)];
    let (mut a, mut p) = sentinel_outs(n, cap);
    let r = match b {
        None => graph::ldge(
            vs,
            &KS,
            &eta,
            labels,
            10,
            gp,
            outs(&mut a),
            outs(&mut p),
            &mut w,
        ),
        Some(b) => graph::ldge_build(
            vs,
            &KS,
            (&eta, labels, 10),
            gp,
            b,
            outs(&mut a),
            outs(&mut p),
            &mut w,
            par,
        ),
    };
    settle(r, need, (a, p))
}

#[test]
fn ldge_by_nn_descent_over_the_labeled_items() {
    let (xs, part, truth) = sample();
    let n = truth.len();
    let vs = views(&xs, n);
    let all = GraphBuild::ApproxAll(AnnParams::default());
    let host = Parallel::Host(HostPool {
        parallel_for: reversed,
        ctx: 0,
    });
    for (labels, penalty) in [
        (&part, Penalty::ClassPairs),
        (&truth, Penalty::ItemNeighbors),
    ] {
        let gp = GraphParams {
            penalty,
            ..GraphParams::default()
        };
        let (ea, ep) = ldge(&vs, labels, &gp, None, Parallel::Serial).unwrap();
        // Below the threshold `Approx` and `Auto` are the exact builder, bitwise.
        for b in [approx(), GraphBuild::Auto, GraphBuild::Exact] {
            let (a, p) = ldge(&vs, labels, &gp, Some(&b), Parallel::Threads(2)).unwrap();
            assert_eq!(fingerprint(&a), fingerprint(&ea), "{b:?}");
            assert_eq!(fingerprint(&p), fingerprint(&ep), "{b:?}");
        }
        // By NN-descent: nearly every edge, and the same bits for every pool.
        let (aa, ap) = ldge(&vs, labels, &gp, Some(&all), Parallel::Serial).unwrap();
        let (ra, rp) = (
            edge_recall(&edges(&ea), &edges(&aa)),
            edge_recall(&edges(&ep), &edges(&ap)),
        );
        eprintln!("LDGE {penalty:?}: affinity edge recall {ra:.4}, penalty {rp:.4}");
        assert!(ra >= 0.99 && rp >= 0.95, "{penalty:?}: {ra} {rp}");
        assert_ne!(fingerprint(&ea), 0);
        for par in [Parallel::Threads(2), Parallel::Threads(3), host] {
            let (a, p) = ldge(&vs, labels, &gp, Some(&all), par).unwrap();
            assert_eq!(fingerprint(&a), fingerprint(&aa), "{par:?}");
            assert_eq!(fingerprint(&p), fingerprint(&ap), "{par:?}");
        }
    }
}

/// The pipeline through `fit_graph` (10 classes, rank `k`, the graph built by `b`): `V` and
/// the report.
fn fit_graph(
    vs: &[View<'_, f64>],
    labels: &[u32],
    k: usize,
    p: &PipelineParams,
    b: &GraphBuild,
    monitor: Option<Monitor<'_>>,
) -> (Vec<f64>, PipelineReport) {
    let n = labels.len();
    let need = pipeline::fit_graph_workspace::<f64>(vs.iter().map(|v| v.shape()), &KS, 10, k, p, b)
        .unwrap();
    let mut us: Vec<Vec<f64>> = vs.iter().map(|x| vec![0.0; x.rows() * k]).collect();
    let (mut v, mut eta) = (vec![0.0; k * n], vec![0.0; 3]);
    let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
    let r = pipeline::fit_graph(
        vs,
        &KS,
        (labels, 10, k),
        p,
        b,
        (&mut refs[..], &mut v, &mut eta),
        &mut vec![0u8; need],
        monitor,
    )
    .unwrap();
    (v, r)
}

#[test]
fn pipeline_with_ldge_by_nn_descent_classifies_as_the_exact_one() {
    let (xs, labels, truth) = sample();
    let n = labels.len();
    let vs = views(&xs, n);
    let k = 10;
    let mut p = PipelineParams::preset(Method::MvslL);
    p.solver.max_iter = 60;
    p.solver.tol = 0.0;
    let run = |b: &GraphBuild| fit_graph(&vs, &labels, k, &p, b, None).0;
    let ve = run(&GraphBuild::Exact);
    let va = run(&GraphBuild::ApproxAll(AnnParams::default()));
    let (acc_e, acc_a) = (
        knn_accuracy(&ve, k, &labels, &truth),
        knn_accuracy(&va, k, &labels, &truth),
    );
    eprintln!("MvSL-L kNN accuracy: exact LDGE {acc_e:.2} %, by NN-descent {acc_a:.2} %");
    assert!(acc_e > 50.0, "exact graph: {acc_e}");
    assert!(
        (acc_e - acc_a).abs() <= 0.5,
        "kNN accuracy: exact {acc_e:.2} %, approximate {acc_a:.2} %"
    );
    // Below the threshold `Auto` is the exact graph: the same factors.
    let vu = run(&GraphBuild::Auto);
    assert!(vu.iter().zip(&ve).all(|(a, b)| a.to_bits() == b.to_bits()));
}

#[test]
fn auto_is_the_exact_builder_below_its_threshold() {
    let (xs, labels, _) = sample();
    let n = labels.len();
    assert!(n < AUTO_EXACT_BELOW);
    let vs = views(&xs, n);
    let gp = GraphParams {
        block: 64,
        ..GraphParams::default()
    };
    let (ea, ep) = tge(&vs, &labels, &gp, &GraphBuild::Exact, Parallel::Serial).unwrap();
    let (aa, ap) = tge(&vs, &labels, &gp, &GraphBuild::Auto, Parallel::Threads(2)).unwrap();
    assert_eq!((&ea.rp, &ea.ci), (&aa.rp, &aa.ci));
    assert_eq!((&ep.rp, &ep.ci), (&ap.rp, &ap.ci));
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&ea.w), bits(&aa.w));
    assert_eq!(bits(&ep.w), bits(&ap.w));
    assert_eq!(GraphBuild::Auto.resolve(n, 5, Parallel::Serial), None);
    let big = GraphBuild::Auto
        .resolve(AUTO_EXACT_BELOW, 5, Parallel::Threads(2))
        .unwrap();
    assert_eq!(big.k, AnnParams::default().k);
    assert_eq!(big.parallel, Parallel::Threads(2));
    // The list length is raised to ka and capped at N − 1.
    let p = GraphBuild::Approx(AnnParams {
        k: 2,
        ..AnnParams::default()
    });
    assert_eq!(p.resolve(100, 5, Parallel::Serial).unwrap().k, 5);
    assert_eq!(approx().resolve(8, 5, Parallel::Serial).unwrap().k, 7);
}

/// `labels` with only the first two labeled items of class 3 kept.
fn two_in_class_3(labels: &[u32]) -> Vec<u32> {
    let mut few = labels.to_vec();
    let mut kept = 0;
    for l in few.iter_mut().filter(|l| **l == 3) {
        if kept == 2 {
            *l = UNLABELED;
        } else {
            kept += 1;
        }
    }
    assert_eq!(kept, 2);
    few
}

#[test]
fn bad_requests_are_refused_before_anything_is_written() {
    let (xs, labels, _) = sample();
    let n = labels.len();
    let vs = views(&xs, n);
    let gp = GraphParams::default();
    let bad = |f: fn(&mut AnnParams)| {
        let mut p = AnnParams::default();
        f(&mut p);
        GraphBuild::Approx(p)
    };
    for (b, want) in [
        (bad(|p| p.leaf = 1), Error::BadParameter),
        (bad(|p| p.delta = f64::NAN), Error::BadParameter),
        (bad(|p| p.delta = -1.0), Error::BadParameter),
    ] {
        let r = tge(&vs, &labels, &gp, &b, Parallel::Serial);
        assert_eq!(r.err(), Some(want), "{b:?}");
    }
    // The graph's own checks come first whatever the build.
    let r = tge(
        &vs,
        &labels,
        &GraphParams { ka: n, ..gp },
        &approx(),
        Parallel::Serial,
    );
    assert_eq!(r.err(), Some(Error::BadParameter));
    // Class 3 with only two labeled items (ka = 5 needs more).
    let r = tge(
        &vs,
        &two_in_class_3(&labels),
        &gp,
        &approx(),
        Parallel::Serial,
    );
    assert_eq!(r.err(), Some(Error::TooFewLabeled));
    // A workspace one byte short.
    let need =
        graph::tge_build_workspace::<f64>(vs.iter().map(|v| v.shape()), &KS, 10, &gp, &approx())
            .unwrap();
    let cap = graph::tge_capacity(n, 10, &gp).unwrap();
    let (mut rp, mut ci, mut w) = (
        vec![3; n + 1],
        vec![3; cap.affinity],
        vec![3.0; cap.affinity],
    );
    let (mut rp2, mut ci2, mut w2) = (vec![3; n + 1], vec![3; cap.penalty], vec![3.0; cap.penalty]);
    let r = graph::tge_build(
        &vs[..],
        &KS,
        (&[0.5, 0.3, 0.2], &labels, 10),
        &gp,
        &approx(),
        CsrOut {
            row_ptr: &mut rp,
            col_idx: &mut ci,
            weights: &mut w,
        },
        CsrOut {
            row_ptr: &mut rp2,
            col_idx: &mut ci2,
            weights: &mut w2,
        },
        &mut vec![0u8; need - 1],
        Parallel::Serial,
    );
    assert_eq!(r.err(), Some(Error::WorkspaceTooSmall));
    assert!(rp
        .iter()
        .chain(&ci)
        .chain(&rp2)
        .chain(&ci2)
        .all(|&x| x == 3));
    assert!(w.iter().chain(&w2).all(|&x| x == 3.0));
    // The pipeline refuses the same request with its outputs untouched.
    let p = PipelineParams::preset(Method::MvslT);
    let b = bad(|p| p.leaf = 1);
    assert_eq!(
        pipeline::fit_graph_workspace::<f64>(vs.iter().map(|v| v.shape()), &KS, 10, 6, &p, &b),
        Err(Error::BadParameter)
    );
    let need = pipeline::fit_graph_workspace::<f64>(
        vs.iter().map(|v| v.shape()),
        &KS,
        10,
        6,
        &p,
        &approx(),
    )
    .unwrap();
    let mut us: Vec<Vec<f64>> = vs.iter().map(|x| vec![9.0; x.rows() * 6]).collect();
    let (mut v, mut eta) = (vec![9.0; 6 * n], vec![9.0; 3]);
    let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
    let r = pipeline::fit_graph(
        &vs[..],
        &KS,
        (&labels, 10, 6),
        &p,
        &b,
        (&mut refs[..], &mut v, &mut eta),
        &mut vec![0u8; need],
        None,
    );
    assert_eq!(r.err(), Some(Error::BadParameter));
    assert!(us.iter().flatten().chain(&v).chain(&eta).all(|&x| x == 9.0));
}

#[test]
fn bad_ldge_requests_are_refused_before_anything_is_written() {
    let (xs, labels, _) = sample();
    let n = labels.len();
    let vs = views(&xs, n);
    let gp = GraphParams::default();
    let all = GraphBuild::ApproxAll(AnnParams::default());
    // NN-descent's options: `delta` finite and nonnegative, for every build that may search
    // (`Approx` too, though below its threshold it would not).
    let ann = |delta: f64| AnnParams {
        delta,
        ..AnnParams::default()
    };
    for b in [
        GraphBuild::ApproxAll(ann(f64::NAN)),
        GraphBuild::ApproxAll(ann(-1.0)),
        GraphBuild::Approx(ann(f64::INFINITY)),
    ] {
        let r = ldge(&vs, &labels, &gp, Some(&b), Parallel::Serial);
        assert_eq!(r.err(), Some(Error::BadParameter), "{b:?}");
    }
    // The graph's own checks, the same for `ldge` and every build.
    let few = two_in_class_3(&labels);
    let mut one = vec![UNLABELED; n];
    one[0] = labels[0];
    let mut nan = xs.clone();
    nan[1].1[17] = f64::NAN;
    let vnan = views(&nan, n);
    let item = GraphParams {
        penalty: Penalty::ItemNeighbors,
        kp: n,
        ..gp
    };
    let g = |ka: usize, sigma: f64| GraphParams { ka, sigma, ..gp };
    let cases = [
        ("ka = N", &vs, &labels, g(n, gp.sigma), Error::BadParameter),
        ("ka = 0", &vs, &labels, g(0, gp.sigma), Error::BadParameter),
        (
            "σ NaN",
            &vs,
            &labels,
            g(gp.ka, f64::NAN),
            Error::BadParameter,
        ),
        (
            "kp = N, item neighbours",
            &vs,
            &labels,
            item,
            Error::BadParameter,
        ),
        (
            "a class with 2 labeled, ka = 5",
            &vs,
            &few,
            gp,
            Error::TooFewLabeled,
        ),
        ("one labeled item", &vs, &one, gp, Error::TooFewLabeled),
        ("a NaN in a view", &vnan, &labels, gp, Error::NonFiniteInput),
    ];
    for (what, v, l, g, want) in cases {
        for b in [None, Some(GraphBuild::Exact), Some(approx()), Some(all)] {
            let r = ldge(v, l, &g, b.as_ref(), Parallel::Serial);
            assert_eq!(r.err(), Some(want), "{what}, {b:?}");
        }
    }
    // The outputs and the workspace, after the lists are found: each refused with nothing
    // written, and the exact sizes accepted.
    let cap = graph::ldge_capacity(n, 10, &gp).unwrap();
    for b in [GraphBuild::Exact, all] {
        let nnz = ldge(&vs, &labels, &gp, Some(&b), Parallel::Serial)
            .unwrap()
            .0
            .ci
            .len();
        let need =
            graph::ldge_build_workspace::<f64>(vs.iter().map(|v| v.shape()), &KS, 10, &gp, &b)
                .unwrap();
        let call = |rows: usize, entries: usize, work: usize| {
            let new = |e: usize| Csr::filled(rows, e, SENTINEL, -1.0);
            let (mut a, mut p) = (new(entries), new(cap.penalty));
            let r = graph::ldge_build(
                &vs[..],
                &KS,
                (&[0.5, 0.3, 0.2], &labels, 10),
                &gp,
                &b,
                outs(&mut a),
                outs(&mut p),
                &mut vec![0u8; work],
                Parallel::Serial,
            );
            settle(r, Ok(need), (a, p)).err()
        };
        assert_eq!(
            call(n, nnz, need - 1),
            Some(Error::WorkspaceTooSmall),
            "{b:?}"
        );
        assert_eq!(
            call(n - 1, nnz, need),
            Some(Error::DimensionMismatch),
            "{b:?}"
        );
        assert_eq!(call(n, nnz - 1, need), Some(Error::BufferTooShort), "{b:?}");
        assert_eq!(call(n, nnz, need), None, "{b:?}");
    }
}

/// 1-NN accuracy (cosine in `V`) of the unlabeled items against the labeled ones, in %.
fn knn_accuracy(v: &[f64], k: usize, labels: &[u32], truth: &[u32]) -> f64 {
    let n = labels.len();
    let col = |j: usize| {
        let c = &v[j * k..(j + 1) * k];
        let s = c.iter().map(|a| a * a).sum::<f64>().sqrt().max(1e-300);
        c.iter().map(|a| a / s).collect::<Vec<_>>()
    };
    let lab: Vec<usize> = (0..n).filter(|&j| labels[j] != UNLABELED).collect();
    let (mut hit, mut tot) = (0, 0);
    for j in (0..n).filter(|&j| labels[j] == UNLABELED) {
        let cj = col(j);
        let best = lab
            .iter()
            .map(|&i| (col(i).iter().zip(&cj).map(|(a, b)| a * b).sum::<f64>(), i))
            .fold((f64::NEG_INFINITY, 0), |a, b| if b.0 > a.0 { b } else { a });
        hit += usize::from(labels[best.1] == truth[j]);
        tot += 1;
    }
    100.0 * hit as f64 / tot as f64
}

#[test]
fn pipeline_with_the_approximate_graph_classifies_as_the_exact_one() {
    let (xs, labels, truth) = sample();
    let n = labels.len();
    let vs = views(&xs, n);
    let k = 10;
    let mut p = PipelineParams::preset(Method::MvslT);
    p.solver.max_iter = 60;
    p.solver.tol = 0.0;
    let run = |b: &GraphBuild| {
        let mut obj = Vec::new();
        let mut rec = recorder(&mut obj);
        let (v, r) = fit_graph(&vs, &labels, k, &p, b, Some(&mut rec));
        drop(rec);
        let scale: f64 = xs.iter().map(|(_, x)| half_sq(x)).sum();
        assert_monotone(&obj, 1e-10 * scale, &format!("{b:?}"));
        (v, r)
    };
    let (ve, re) = run(&GraphBuild::Exact);
    let (va, ra) = run(&approx());
    let (acc_e, acc_a) = (
        knn_accuracy(&ve, k, &labels, &truth),
        knn_accuracy(&va, k, &labels, &truth),
    );
    assert!(acc_e > 50.0, "exact graph: {acc_e}");
    assert!(
        (acc_e - acc_a).abs() <= 0.5,
        "kNN accuracy: exact {acc_e:.2} %, approximate {acc_a:.2} %"
    );
    assert_eq!(re.graph.penalty, ra.graph.penalty);
    // The labeled lists by NN-descent too.
    let (vl, _) = run(&GraphBuild::ApproxAll(AnnParams::default()));
    let acc_l = knn_accuracy(&vl, k, &labels, &truth);
    eprintln!(
        "kNN accuracy: exact {acc_e:.2} %, approx {acc_a:.2} %, approx labeled lists {acc_l:.2} %"
    );
    assert!(
        (acc_e - acc_l).abs() <= 0.5,
        "kNN accuracy: exact {acc_e:.2} %, labeled lists by NN-descent {acc_l:.2} %"
    );
    // Exact through the option is bitwise `fit_report`.
    let need =
        pipeline::fit_workspace::<f64>(vs.iter().map(|v| v.shape()), &KS, 10, k, &p).unwrap();
    let mut us: Vec<Vec<f64>> = vs.iter().map(|x| vec![0.0; x.rows() * k]).collect();
    let (mut v, mut eta) = (vec![0.0; k * n], vec![0.0; 3]);
    let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
    pipeline::fit(
        &vs[..],
        &KS,
        &labels,
        10,
        k,
        &p,
        &mut refs[..],
        &mut v,
        &mut eta,
        &mut vec![0u8; need],
        None,
    )
    .unwrap();
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&v), bits(&ve));
}

#[test]
fn sampled_anchors_are_the_full_ones_for_a_full_sample_and_close_otherwise() {
    let (xs, _, _) = sample();
    let n = xs[0].1.len() / xs[0].0;
    let vs = views(&xs, n);
    let m = 20;
    let kp = KMeansParams {
        restarts: 3,
        ..KMeansParams::default()
    };
    let run = |sample: Option<usize>| {
        let shapes = vs.iter().map(|v| v.shape());
        let need = match sample {
            None => graph::anchors_by_kmeans_workspace::<f64>(shapes, m, &kp),
            Some(s) => graph::anchors_by_kmeans_sampled_workspace::<f64>(shapes, m, &kp, s),
        }
        .unwrap();
        let mut out: Vec<Vec<f64>> = xs.iter().map(|(r, _)| vec![0.0; r * m]).collect();
        let mut refs: Vec<&mut [f64]> = out.iter_mut().map(|a| a.as_mut_slice()).collect();
        let mut w = vec![0u8; need];
        match sample {
            None => graph::anchors_by_kmeans(&vs[..], m, &kp, &mut refs[..], &mut w),
            Some(s) => graph::anchors_by_kmeans_sampled(&vs[..], m, &kp, s, &mut refs[..], &mut w),
        }
        .unwrap();
        out
    };
    let full = run(None);
    let bits = |a: &[Vec<f64>]| a.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&run(Some(n))), bits(&full));
    assert_eq!(bits(&run(Some(10 * n))), bits(&full));
    let half = run(Some(n / 2));
    assert_eq!(bits(&run(Some(n / 2))), bits(&half), "seeded");
    assert_ne!(bits(&half), bits(&full));
    // The inertia over all items of the sampled anchors (in the unscaled views, summed over
    // views) is within 10 % of the full k-means'.
    let inertia = |a: &[Vec<f64>]| -> f64 {
        (0..n)
            .map(|u| {
                (0..m)
                    .map(|c| {
                        xs.iter()
                            .zip(a)
                            .map(|((r, x), av)| {
                                (0..*r)
                                    .map(|f| (x[u * r + f] - av[c * r + f]).powi(2))
                                    .sum::<f64>()
                            })
                            .sum::<f64>()
                    })
                    .fold(f64::INFINITY, f64::min)
            })
            .sum()
    };
    // The first m items as anchors: what a sample of m items would give at worst.
    let first: Vec<Vec<f64>> = xs.iter().map(|(r, x)| x[..r * m].to_vec()).collect();
    let (i_full, i_half, i_first) = (inertia(&full), inertia(&half), inertia(&first));
    assert!(
        i_half <= 1.2 * i_full && i_half < i_first,
        "full {i_full}, half sample {i_half}, first items {i_first}"
    );
    // Too few clusters for the sample: `m > n` still refused.
    assert_eq!(
        graph::anchors_by_kmeans_sampled_workspace::<f64>(
            vs.iter().map(|v| v.shape()),
            n + 1,
            &kp,
            10
        ),
        Err(Error::BadParameter)
    );
}
