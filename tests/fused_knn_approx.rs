//! MVEL's kNN-sparsified fused graph found by NN-descent
//! (`graph::fused_knn_graph_build` with `GraphBuild::Approx`) against the exact sweep
//! (`graph::fused_knn_graph`) on real data — `data/yeast-sample`, 600 genes, two
//! standardised views of 79 and 24 features, within-view RBF and CCA cross-view parts:
//! recall of the neighbour lists, MVEL's AUC of the hidden positives with either graph,
//! the same bits on every pool (the built-in one at 1, 2, 3 threads, a host's running the
//! tasks in reverse) as serially, `Auto` bitwise exact below its threshold, and bad input
//! (a host pool that skips a task among it) refused with the outputs untouched.

mod common;

use common::yeast_sample;
use mvnmf::graph::{
    fused_knn_graph, fused_knn_graph_build, fused_knn_graph_build_workspace,
    fused_knn_graph_capacity, fused_knn_graph_workspace, CsrGraph, CsrGraphs, CsrOut, FusedParams,
    GraphBuild,
};
use mvnmf::linalg::mat::MatRef;
use mvnmf::models::mvel::{self, MvelParams};
use mvnmf::similarity::AnnParams;
use mvnmf::{Dense, Error, Parallel, View};

const N: usize = 600;
const S: usize = 10;

fn as_views(views: &[Vec<f64>]) -> Vec<View<'_, f64>> {
    views
        .iter()
        .map(|x| View::from(Dense::new(x, x.len() / N, N, x.len() / N).unwrap()))
        .collect()
}

struct Csr {
    rp: Vec<usize>,
    ci: Vec<usize>,
    w: Vec<f64>,
}

fn build(views: &[View<'_, f64>], b: &GraphBuild) -> Result<Csr, Error> {
    let p = FusedParams::default();
    let bytes =
        fused_knn_graph_build_workspace::<f64>(views.iter().map(|v| v.shape()), S, None, &p, b)?;
    let mut work = vec![0u8; bytes];
    let cap = fused_knn_graph_capacity(N, S).unwrap();
    let (mut rp, mut ci, mut w) = (vec![0; N + 1], vec![0; cap], vec![0.0; cap]);
    let mut o = CsrOut {
        row_ptr: &mut rp,
        col_idx: &mut ci,
        weights: &mut w,
    };
    let nnz = fused_knn_graph_build(views, S, None, &p, b, &mut o, &mut work)?;
    ci.truncate(nnz);
    w.truncate(nnz);
    Ok(Csr { rp, ci, w })
}

fn exact(views: &[View<'_, f64>]) -> Csr {
    let p = FusedParams::default();
    let bytes =
        fused_knn_graph_workspace::<f64>(views.iter().map(|v| v.shape()), S, None, &p).unwrap();
    let mut work = vec![0u8; bytes];
    let cap = fused_knn_graph_capacity(N, S).unwrap();
    let (mut rp, mut ci, mut w) = (vec![0; N + 1], vec![0; cap], vec![0.0; cap]);
    let mut o = CsrOut {
        row_ptr: &mut rp,
        col_idx: &mut ci,
        weights: &mut w,
    };
    let nnz = fused_knn_graph(views, S, None, &p, &mut o, &mut work).unwrap();
    ci.truncate(nnz);
    w.truncate(nnz);
    Csr { rp, ci, w }
}

/// Each item's `S` neighbours of largest weight in `P`: the entries of `W = (P + Pᵀ)/2`
/// are not `P`'s, so the lists compared are the graph's edges (row supports).
fn edges(g: &Csr, u: usize) -> Vec<usize> {
    g.ci[g.rp[u]..g.rp[u + 1]].to_vec()
}

/// Edge recall: the share of the exact graph's edges the approximate graph has.
fn recall(a: &Csr, e: &Csr) -> f64 {
    let (mut hit, mut all) = (0usize, 0usize);
    for u in 0..N {
        let ea = edges(a, u);
        for j in edges(e, u) {
            all += 1;
            hit += ea.binary_search(&j).is_ok() as usize;
        }
    }
    hit as f64 / all as f64
}

/// MVEL on the graph; AUC of the hidden positives among the unknown entries.
fn auc(g: &Csr, truth: &[u8], given: &[u8], c: usize) -> f64 {
    let a = CsrGraph::new(N, &g.rp, &g.ci, &g.w).unwrap();
    let gr = CsrGraphs::new(N, Some(a), None).unwrap();
    let pos = given.iter().filter(|&&a| a == 1).count();
    let prm = MvelParams {
        unknown_weight: pos as f64 / (c * N - pos) as f64,
        ..MvelParams::default()
    };
    let r = c;
    let y = MatRef::col_major(given, c, N).unwrap();
    let mut work = vec![0u8; mvel::fit_workspace::<f64, _>(N, c, r, &gr, &prm).unwrap()];
    let (mut q, mut h) = (vec![0.0; c * r], vec![0.0; r * N]);
    mvel::fit(y, &gr, r, &prm, &mut q, &mut h, &mut work, None).unwrap();
    let mut s = vec![0.0; c * N];
    let mut work = vec![0u8; mvel::predict_workspace::<f64>(c, r, N).unwrap()];
    mvel::predict(&q, &h, c, r, &mut s, &mut work).unwrap();
    let mut sc: Vec<(f64, u8)> = (0..c * N)
        .filter(|&i| given[i] == 0)
        .map(|i| (s[i], truth[i]))
        .collect();
    sc.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
    let (np, nn) = (
        sc.iter().filter(|x| x.1 == 1).count() as f64,
        sc.iter().filter(|x| x.1 == 0).count() as f64,
    );
    let rank_sum: f64 = sc
        .iter()
        .enumerate()
        .filter(|x| x.1 .1 == 1)
        .map(|(i, _)| (i + 1) as f64)
        .sum();
    (rank_sum - np * (np + 1.0) / 2.0) / (np * nn)
}

#[test]
fn approximate_graph_recalls_the_exact_edges_and_keeps_mvels_auc() {
    let (views, truth, given, c) = yeast_sample();
    let vs = as_views(&views);
    let e = exact(&vs);
    let a = build(&vs, &GraphBuild::Approx(AnnParams::default())).unwrap();
    let r = recall(&a, &e);
    // Total weight n, symmetric, no self-loops, as the exact graph.
    let tot: f64 = a.w.iter().sum();
    assert!((tot - N as f64).abs() < 1e-9, "total {tot}");
    for u in 0..N {
        assert!(!edges(&a, u).contains(&u));
    }
    let (ae, aa) = (auc(&e, &truth, &given, c), auc(&a, &truth, &given, c));
    eprintln!("yeast n={N} s={S}: edge recall {r:.4}, AUC exact {ae:.4} approx {aa:.4}");
    assert!(r >= 0.95, "edge recall {r}");
    assert!((ae - aa).abs() <= 0.01, "AUC exact {ae} approx {aa}");
    assert!(aa > 0.6, "AUC {aa}");
}

fn same_bits(a: &Csr, b: &Csr) -> bool {
    a.rp == b.rp
        && a.ci == b.ci
        && a.w.len() == b.w.len()
        && a.w
            .iter()
            .zip(&b.w)
            .all(|(x, y)| x.to_bits() == y.to_bits())
}

#[test]
fn same_bits_on_every_pool() {
    // NN-descent, the projections and the re-ranking (600 items: five tasks) on the
    // built-in pool at 1, 2 and 3 threads and on a host pool running the tasks last to
    // first: the serial graph bit for bit.
    let (views, ..) = yeast_sample();
    let vs = as_views(&views);
    let serial = build(&vs, &GraphBuild::Approx(AnnParams::default())).unwrap();
    for par in common::pools() {
        let b = GraphBuild::Approx(AnnParams {
            parallel: par,
            ..AnnParams::default()
        });
        let g = build(&vs, &b).unwrap();
        assert!(same_bits(&serial, &g), "{par:?}");
    }
    // Another seed samples other pairs: still a graph of total weight n.
    let other = build(
        &vs,
        &GraphBuild::Approx(AnnParams {
            seed: 9,
            ..AnnParams::default()
        }),
    )
    .unwrap();
    assert!((other.w.iter().sum::<f64>() - N as f64).abs() < 1e-9);
    assert!(!same_bits(&serial, &other));
}

/// A host pool that never runs the last task.
fn skips_last(_ctx: usize, n: usize, task: &(dyn Fn(usize) + Sync)) {
    (0..n.saturating_sub(1)).for_each(task);
}

#[test]
fn a_host_pool_that_skips_a_task_is_refused_with_outputs_untouched() {
    let (views, ..) = yeast_sample();
    let vs = as_views(&views);
    let p = FusedParams::default();
    let b = GraphBuild::Approx(AnnParams {
        parallel: Parallel::Host(mvnmf::HostPool {
            parallel_for: skips_last,
            ctx: 0,
        }),
        ..AnnParams::default()
    });
    let bytes =
        fused_knn_graph_build_workspace::<f64>(vs.iter().map(|v| v.shape()), S, None, &p, &b)
            .unwrap();
    let mut work = vec![0u8; bytes];
    let cap = fused_knn_graph_capacity(N, S).unwrap();
    let (mut rp, mut ci, mut w) = (vec![7; N + 1], vec![7; cap], vec![7.0; cap]);
    let mut o = CsrOut {
        row_ptr: &mut rp,
        col_idx: &mut ci,
        weights: &mut w,
    };
    assert_eq!(
        fused_knn_graph_build(&vs[..], S, None, &p, &b, &mut o, &mut work),
        Err(Error::ParallelFor)
    );
    assert!(rp.iter().all(|&x| x == 7) && ci.iter().all(|&x| x == 7));
    assert!(w.iter().all(|&x| x == 7.0));
}

#[test]
fn auto_below_the_threshold_is_bitwise_exact() {
    let (views, ..) = yeast_sample();
    let vs = as_views(&views);
    let e = exact(&vs);
    let a = build(&vs, &GraphBuild::Auto).unwrap();
    assert_eq!(e.rp, a.rp);
    assert_eq!(e.ci, a.ci);
    assert!(e
        .w
        .iter()
        .zip(&a.w)
        .all(|(x, y)| x.to_bits() == y.to_bits()));
}

#[test]
fn bad_input_is_refused_with_outputs_untouched() {
    let (mut views, ..) = yeast_sample();
    let p = FusedParams::default();
    let b = GraphBuild::Approx(AnnParams::default());
    let cap = fused_knn_graph_capacity(N, S).unwrap();
    let run = |vs: &[View<'_, f64>], s: usize, b: &GraphBuild| -> (Result<usize, Error>, bool) {
        let mut work = vec![0u8; 64 << 20];
        let (mut rp, mut ci, mut w) = (vec![7; N + 1], vec![7; cap], vec![7.0; cap]);
        let mut o = CsrOut {
            row_ptr: &mut rp,
            col_idx: &mut ci,
            weights: &mut w,
        };
        let r = fused_knn_graph_build(vs, s, None, &p, b, &mut o, &mut work);
        let untouched =
            rp.iter().all(|&x| x == 7) && ci.iter().all(|&x| x == 7) && w.iter().all(|&x| x == 7.0);
        (r, untouched)
    };
    let vs = as_views(&views);
    for s in [0, N] {
        let (r, u) = run(&vs, s, &b);
        assert_eq!(r, Err(Error::BadParameter));
        assert!(u);
    }
    let bad_leaf = GraphBuild::Approx(AnnParams {
        leaf: 1,
        ..AnnParams::default()
    });
    let (r, u) = run(&vs, S, &bad_leaf);
    assert_eq!(r, Err(Error::BadParameter));
    assert!(u);
    // Too small a workspace.
    let mut small = vec![0u8; 1024];
    let (mut rp, mut ci, mut w) = (vec![7; N + 1], vec![7; cap], vec![7.0; cap]);
    let mut o = CsrOut {
        row_ptr: &mut rp,
        col_idx: &mut ci,
        weights: &mut w,
    };
    assert_eq!(
        fused_knn_graph_build(&vs[..], S, None, &p, &b, &mut o, &mut small),
        Err(Error::WorkspaceTooSmall)
    );
    assert!(rp.iter().all(|&x| x == 7) && w.iter().all(|&x| x == 7.0));
    drop(vs);
    views[1][5] = f64::NAN;
    let vs = as_views(&views);
    let (r, u) = run(&vs, S, &b);
    assert_eq!(r, Err(Error::NonFiniteInput));
    assert!(u);
}
