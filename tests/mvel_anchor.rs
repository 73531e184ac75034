//! MVEL's anchor graphs and the anchored fit (seed 002 §2.3, DESIGN §8):
//! the graph equals a brute-force assembly of the fused item–anchor weights
//! (median bandwidths, volumes, CCA parts) with each item's s best anchors;
//! new items with the training scales reproduce the training graph (to
//! rounding); the anchored fit never increases its objective, keeps every
//! `‖h_u‖ ≤ 1`, reports the item objective at `H = A Z` under
//! `L = I − ZᵀΛ⁻¹Z`, and reduces to the item fit when every item is its own
//! anchor; bad input gets its status with outputs untouched; the workspace at
//! n = 20,000 is a small fraction of a dense graph's.

#![allow(clippy::too_many_arguments, clippy::needless_range_loop)]

mod common;

use common::*;
use mvnmf::eval::KMeansParams;
use mvnmf::graph::{
    anchor_graph, anchor_graph_workspace, anchor_scales_len, anchors_by_kmeans,
    anchors_by_kmeans_workspace, fused_graph_workspace, DenseGraph, FusedParams, GraphOp,
};
use mvnmf::linalg::mat::MatRef;
use mvnmf::models::mvel::{self, MvelParams};
use mvnmf::{Dense, Error, Init, View, ViewKind, ViewShape};

/// Two views of `n` items in 3 clusters (any sign), `d = [4, 6]`.
fn views(n: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut g = Lcg(seed);
    let z: Vec<f64> = (0..n).map(|u| (u % 3) as f64 + 0.3 * g.uniform()).collect();
    [4usize, 6]
        .iter()
        .map(|&d| {
            let a: Vec<f64> = (0..d).map(|_| g.uniform() - 0.5).collect();
            (0..d * n)
                .map(|t| a[t % d] * z[t / d] + 0.2 * (g.uniform() - 0.5))
                .collect()
        })
        .collect()
}

fn as_views(xs: &[Vec<f64>], n: usize) -> Vec<View<'_, f64>> {
    xs.iter()
        .map(|x| View::from(Dense::new(x, x.len() / n, n, x.len() / n).unwrap()))
        .collect()
}

fn anchors(xs: &[Vec<f64>], n: usize, m: usize) -> Vec<Vec<f64>> {
    let vs = as_views(xs, n);
    let kp = KMeansParams {
        restarts: 2,
        ..KMeansParams::default()
    };
    let mut work = vec![
        0u8;
        anchors_by_kmeans_workspace::<f64>(vs.iter().map(|v| v.shape()), m, &kp)
            .unwrap()
    ];
    let mut out: Vec<Vec<f64>> = xs.iter().map(|x| vec![0.0; x.len() / n * m]).collect();
    {
        let mut refs: Vec<&mut [f64]> = out.iter_mut().map(|a| a.as_mut_slice()).collect();
        anchors_by_kmeans(&vs[..], m, &kp, &mut refs[..], &mut work).unwrap();
    }
    out
}

struct Graph {
    idx: Vec<usize>,
    z: Vec<f64>,
    scales: Vec<f64>,
}

fn graph(
    xs: &[Vec<f64>],
    n: usize,
    train: Option<(&[Vec<f64>], usize)>,
    an: &[Vec<f64>],
    m: usize,
    s: usize,
    p: &FusedParams,
    scales: Option<&[f64]>,
) -> Result<Graph, Error> {
    let vs = as_views(xs, n);
    let av = as_views(an, m);
    let tv = train.map(|(t, nt)| as_views(t, nt));
    let nt = train.map_or(n, |t| t.1);
    let mut work =
        vec![0u8; anchor_graph_workspace::<f64>(vs.iter().map(|v| v.shape()), nt, m, None, p)?];
    let mut sc = scales.map_or(vec![0.0; anchor_scales_len(xs.len())], |s| s.to_vec());
    let (mut idx, mut z) = (vec![0usize; n * s], vec![0.0; n * s]);
    anchor_graph(
        &vs[..],
        tv.as_deref(),
        &av[..],
        s,
        None,
        p,
        &mut sc,
        &mut idx,
        &mut z,
        &mut work,
    )?;
    Ok(Graph { idx, z, scales: sc })
}

fn sqd(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

#[test]
fn anchor_graph_is_the_brute_force_fused_weight_of_the_best_anchors() {
    let (n, m, s) = (60, 9, 3);
    let dims = [4usize, 6];
    let xs = views(n, 3);
    let an = anchors(&xs, n, m);
    let p = FusedParams {
        cca_dims: 2,
        ..FusedParams::default()
    };
    let g = graph(&xs, n, None, &an, m, s, &p, None).unwrap();
    // Brute force: distances per part (item's view i, anchor's view j).
    let col = |x: &[f64], d: usize, u: usize| x[u * d..(u + 1) * d].to_vec();
    let FusedCca {
        phi_a: pa,
        phi_b: pb,
        rho: _,
        mu_a: ma,
        mu_b: mb,
    } = fused_cca(&xs[0], 4, &xs[1], 6, n, 2);
    let proj = |x: &[f64], phi: &[f64], mu: &[f64], d: usize| -> Vec<f64> {
        (0..2)
            .map(|k| (0..d).map(|i| phi[i + k * d] * (x[i] - mu[i])).sum())
            .collect()
    };
    let mut dist = vec![vec![0.0; n * m]; 4]; // part i + 2j
    for u in 0..n {
        for a in 0..m {
            for i in 0..2 {
                for j in 0..2 {
                    let xu = col(&xs[i], dims[i], u);
                    let aj = col(&an[j], dims[j], a);
                    let d = if i == j {
                        sqd(&xu, &aj)
                    } else {
                        let (pi, mi) = if i == 0 { (&pa, &ma) } else { (&pb, &mb) };
                        let (pj, mj) = if j == 0 { (&pa, &ma) } else { (&pb, &mb) };
                        sqd(&proj(&xu, pi, mi, dims[i]), &proj(&aj, pj, mj, dims[j]))
                    };
                    dist[i + 2 * j][u + a * n] = d;
                }
            }
        }
    }
    // Bandwidths: 1 / lower median over all n·m pairs (n is below the sample size).
    for part in 0..4 {
        let mut all = dist[part].clone();
        all.sort_by(|x, y| x.partial_cmp(y).unwrap());
        let want = 1.0 / all[(all.len() - 1) / 2];
        let got = g.scales[part];
        assert!(
            (got - want).abs() <= 1e-12 * want,
            "part {part}: {got} vs {want}"
        );
    }
    let mut w = vec![0.0; n * m];
    for part in 0..4 {
        let gm = g.scales[part];
        let k: Vec<f64> = dist[part].iter().map(|d| (-gm * d).exp()).collect();
        let vol = k.iter().sum::<f64>() / n as f64;
        let got = g.scales[4 + part];
        assert!(
            (got - vol).abs() <= 1e-12 * vol,
            "volume {part}: {got} vs {vol}"
        );
        w.iter_mut().zip(&k).for_each(|(a, b)| *a += 0.25 * b / vol);
    }
    for u in 0..n {
        let mut order: Vec<usize> = (0..m).collect();
        order.sort_by(|&a, &b| {
            w[u + b * n]
                .partial_cmp(&w[u + a * n])
                .unwrap()
                .then(a.cmp(&b))
        });
        assert_eq!(&g.idx[u * s..(u + 1) * s], &order[..s], "item {u}");
        let total: f64 = order[..s].iter().map(|&a| w[u + a * n]).sum();
        for k in 0..s {
            let want = w[u + order[k] * n] / total;
            assert!((g.z[k + u * s] - want).abs() <= 1e-12, "item {u}");
        }
        let sum: f64 = g.z[u * s..(u + 1) * s].iter().sum();
        assert!((sum - 1.0).abs() < 1e-14);
    }
}

#[test]
fn new_items_with_the_training_scales_get_the_training_graph() {
    let (n, m, s) = (70, 8, 4);
    let xs = views(n, 5);
    let an = anchors(&xs, n, m);
    let p = FusedParams::default();
    let g = graph(&xs, n, None, &an, m, s, &p, None).unwrap();
    // The last 20 items as "new" items, with the training views for the CCA.
    let k = 20;
    let new: Vec<Vec<f64>> = xs
        .iter()
        .map(|x| {
            let d = x.len() / n;
            x[(n - k) * d..].to_vec()
        })
        .collect();
    let h = graph(&new, k, Some((&xs, n)), &an, m, s, &p, Some(&g.scales)).unwrap();
    // The same anchors; weights to rounding (the distance GEMMs see other
    // blocks of items, so their sums may round differently).
    assert_eq!(h.idx, g.idx[(n - k) * s..]);
    assert!(max_rel_diff(&h.z, &g.z[(n - k) * s..]) < 1e-13);
    assert_eq!(h.scales, g.scales);
}

/// The item fit's problem of `tests/mvel.rs`, small: labels follow clusters.
fn labels(n: usize, keep: f64, seed: u64) -> (usize, Vec<u8>) {
    let mut g = Lcg(seed);
    let c = 4;
    let sets = [[0usize, 1].as_slice(), &[1, 2], &[3]];
    let mut y = vec![0u8; c * n];
    for u in 0..n {
        for &l in sets[u % 3] {
            if g.uniform() < keep {
                y[l + u * c] = 1;
            }
        }
    }
    (c, y)
}

/// The item fit (`mvel::fit`) on `graph`, from `q`, `h` as `prm.init` says;
/// returns the objective trace.
fn item_fit<G: GraphOp<f64>>(
    y: &[u8],
    c: usize,
    graph: &G,
    r: usize,
    prm: &MvelParams,
    q: &mut [f64],
    h: &mut [f64],
) -> Vec<f64> {
    let n = y.len() / c;
    let mut wk = vec![0u8; mvel::fit_workspace::<f64, _>(n, c, r, graph, prm).unwrap()];
    let mut obj = Vec::new();
    let mut rec = recorder(&mut obj);
    mvel::fit(
        MatRef::col_major(y, c, n).unwrap(),
        graph,
        r,
        prm,
        q,
        h,
        &mut wk,
        Some(&mut rec),
    )
    .unwrap();
    drop(rec);
    obj
}

struct AnchoredFit {
    q: Vec<f64>,
    a: Vec<f64>,
    obj: Vec<f64>,
}

fn fit_anchored(
    y: &[u8],
    c: usize,
    g: &Graph,
    s: usize,
    m: usize,
    r: usize,
    prm: &MvelParams,
) -> Result<AnchoredFit, Error> {
    let n = y.len() / c;
    let mut work = vec![0u8; mvel::fit_anchored_workspace::<f64>(n, c, r, m, prm)?];
    let (mut q, mut a) = (vec![0.0; c * r], vec![0.0; r * m]);
    let mut obj = Vec::new();
    let mut rec = recorder(&mut obj);
    mvel::fit_anchored(
        MatRef::col_major(y, c, n)?,
        &g.idx,
        &g.z,
        s,
        m,
        r,
        prm,
        &mut q,
        &mut a,
        &mut work,
        Some(&mut rec),
    )?;
    drop(rec);
    Ok(AnchoredFit { q, a, obj })
}

#[test]
fn anchored_fit_is_monotone_bounded_and_reports_the_item_objective() {
    let (n, m, s, r) = (90, 12, 3, 4);
    let xs = views(n, 7);
    let an = anchors(&xs, n, m);
    let g = graph(&xs, n, None, &an, m, s, &FusedParams::default(), None).unwrap();
    let (c, y) = labels(n, 0.4, 8);
    for mu in [0.0, 0.3] {
        let prm = MvelParams {
            theta1: 2.0,
            theta2: 0.5,
            unknown_weight: mu,
            max_iter: 50,
            tol: 0.0,
            ..MvelParams::default()
        };
        let f = fit_anchored(&y, c, &g, s, m, r, &prm).unwrap();
        assert_eq!(f.obj.len(), 51);
        let scale = f.obj.iter().map(|x| x.abs()).fold(1.0, f64::max);
        assert_monotone(&f.obj, 1e-12 * scale, "anchored");
        assert!(f.obj[50] < f.obj[0]);
        for col in f.a.chunks(r) {
            assert!(col.iter().map(|x| x * x).sum::<f64>() <= 1.0 + 1e-12);
        }
        let mut h = vec![0.0; r * n];
        mvel::embed_anchored(&f.a, r, &g.idx, &g.z, s, &mut h).unwrap();
        for col in h.chunks(r) {
            assert!(col.iter().map(|x| x * x).sum::<f64>() <= 1.0 + 1e-12);
        }
        // The item objective at (Q, H = A Z) with W = Zᵀ Λ⁻¹ Z (rows sum to 1),
        // evaluated by the item fit with a given start and no iteration.
        let mut lam = vec![0.0; m];
        for (&i, &zv) in g.idx.iter().zip(&g.z) {
            lam[i] += zv;
        }
        let mut w = vec![0.0; n * n];
        for u in 0..n {
            for v in 0..=u {
                let mut x = 0.0;
                for k in 0..s {
                    for l in 0..s {
                        let (a, b) = (g.idx[k + u * s], g.idx[l + v * s]);
                        if a == b {
                            x += g.z[k + u * s] * g.z[l + v * s] / lam[a];
                        }
                    }
                }
                w[u + v * n] = x;
                w[v + u * n] = x;
            }
        }
        let dg = DenseGraph::new(&w, n).unwrap();
        let given = MvelParams {
            init: Init::Given,
            max_iter: 0,
            ..prm
        };
        let (mut q2, mut h2) = (f.q.clone(), h.clone());
        let obj2 = item_fit(&y, c, &dg, r, &given, &mut q2, &mut h2);
        let last = *f.obj.last().unwrap();
        assert!(
            (obj2[0] - last).abs() <= 1e-10 * scale,
            "mu {mu}: item objective {} vs anchored {last}",
            obj2[0]
        );
    }
}

#[test]
fn every_item_its_own_anchor_is_the_item_fit_without_graph() {
    let (n, r) = (45, 3);
    let (c, y) = labels(n, 0.5, 9);
    let g = Graph {
        idx: (0..n).collect(),
        z: vec![1.0; n],
        scales: vec![],
    };
    let prm = MvelParams {
        theta1: 3.0,
        theta2: 0.4,
        unknown_weight: 0.2,
        max_iter: 40,
        tol: 0.0,
        ..MvelParams::default()
    };
    let f = fit_anchored(&y, c, &g, 1, n, r, &prm).unwrap();
    // G = I and L̃ = I − I = 0: the item fit with no graph term.
    let w = vec![0.0; n * n];
    let dg = DenseGraph::new(&w, n).unwrap();
    let (mut q, mut h) = (vec![0.0; c * r], vec![0.0; r * n]);
    let obj = item_fit(&y, c, &dg, r, &prm, &mut q, &mut h);
    assert!(max_rel_diff(&f.obj, &obj) < 1e-10, "{:?} {:?}", f.obj, obj);
    // The factors: 1e-8. The objectives agree to ~1e-15, but the two paths
    // round differently (hosted: 7e-10 apart after 40 iterations; the no_std
    // build's FMA register tiles, `linalg::microk`: 3.4e-9, AVX-512).
    assert!(max_rel_diff(&f.q, &q) < 1e-8);
    assert!(max_rel_diff(&f.a, &h) < 1e-8);
}

#[test]
fn bad_input_is_refused_with_outputs_untouched() {
    let (n, m, s, r) = (30, 5, 2, 3);
    let xs = views(n, 11);
    let an = anchors(&xs, n, m);
    let p = FusedParams::default();
    let g = graph(&xs, n, None, &an, m, s, &p, None).unwrap();
    // Graph builder: s > m, s = 0, negative scale, views of different item counts.
    assert_eq!(
        graph(&xs, n, None, &an, m, m + 1, &p, None).err(),
        Some(Error::BadParameter)
    );
    assert_eq!(
        graph(&xs, n, None, &an, m, 0, &p, None).err(),
        Some(Error::BadParameter)
    );
    let mut neg = vec![0.0; 8];
    neg[0] = -1.0;
    assert_eq!(
        graph(&xs, n, None, &an, m, s, &p, Some(&neg)).err(),
        Some(Error::BadParameter)
    );
    let short = [xs[0].clone(), xs[1][..6 * (n - 1)].to_vec()];
    {
        let vs = [
            View::from(Dense::new(&short[0], 4, n, 4).unwrap()),
            View::from(Dense::new(&short[1], 6, n - 1, 6).unwrap()),
        ];
        let av = as_views(&an, m);
        let mut sc = vec![0.0; 8];
        let (mut idx, mut z) = (vec![7usize; n * s], vec![7.0; n * s]);
        let mut work = vec![0u8; 1 << 20];
        let e = anchor_graph(
            &vs[..],
            None,
            &av[..],
            s,
            None,
            &p,
            &mut sc,
            &mut idx,
            &mut z,
            &mut work,
        );
        assert_eq!(e, Err(Error::DimensionMismatch));
        assert!(
            idx.iter().all(|&i| i == 7)
                && z.iter().all(|&x| x == 7.0)
                && sc.iter().all(|&x| x == 0.0)
        );
    }
    // A NaN in a view: refused, outputs untouched.
    {
        let mut bad = xs.clone();
        bad[1][5] = f64::NAN;
        let vs = as_views(&bad, n);
        let av = as_views(&an, m);
        let mut sc = vec![0.0; 8];
        let (mut idx, mut z) = (vec![7usize; n * s], vec![7.0; n * s]);
        let mut work = vec![0u8; 1 << 20];
        let e = anchor_graph(
            &vs[..],
            None,
            &av[..],
            s,
            None,
            &p,
            &mut sc,
            &mut idx,
            &mut z,
            &mut work,
        );
        assert_eq!(e, Err(Error::NonFiniteInput));
        assert!(idx.iter().all(|&i| i == 7) && z.iter().all(|&x| x == 7.0));
    }
    // k-means anchors: m > n.
    {
        let vs = as_views(&xs, n);
        let kp = KMeansParams::default();
        assert_eq!(
            anchors_by_kmeans_workspace::<f64>(vs.iter().map(|v| v.shape()), n + 1, &kp),
            Err(Error::BadParameter)
        );
    }
    // The anchored fit: index ≥ m, negative weight, labels other than 0/1, wrong n.
    let (c, y) = labels(n, 0.5, 1);
    let prm = MvelParams::default();
    let mut work = vec![0u8; mvel::fit_anchored_workspace::<f64>(n, c, r, m, &prm).unwrap()];
    let try_fit = |y: &[u8], idx: &[usize], z: &[f64], work: &mut [u8]| {
        let (mut q, mut a) = (vec![5.0; c * r], vec![5.0; r * m]);
        let e = mvel::fit_anchored(
            MatRef::col_major(y, c, y.len() / c).unwrap(),
            idx,
            z,
            s,
            m,
            r,
            &prm,
            &mut q,
            &mut a,
            work,
            None,
        );
        assert!(q.iter().chain(&a).all(|&x| x == 5.0));
        e.err()
    };
    let mut idx = g.idx.clone();
    idx[3] = m;
    assert_eq!(
        try_fit(&y, &idx, &g.z, &mut work),
        Some(Error::BadParameter)
    );
    let mut z = g.z.clone();
    z[4] = -0.1;
    assert_eq!(
        try_fit(&y, &g.idx, &z, &mut work),
        Some(Error::NegativeInput)
    );
    let mut y2 = y.clone();
    y2[2] = 2;
    assert_eq!(try_fit(&y2, &g.idx, &g.z, &mut work), Some(Error::BadLabel));
    assert_eq!(
        try_fit(&y[..c * (n - 1)], &g.idx, &g.z, &mut work),
        Some(Error::DimensionMismatch)
    );
    assert_eq!(
        try_fit(&y, &g.idx, &g.z, &mut work[..64]),
        Some(Error::WorkspaceTooSmall)
    );
}

#[test]
fn anchors_at_twenty_thousand_items_need_a_small_fraction_of_a_dense_graph() {
    let (n, m) = (20_000usize, 500usize);
    let shapes = [
        ViewShape {
            rows: 60,
            cols: n,
            kind: ViewKind::Dense,
            nnz: 0,
        },
        ViewShape {
            rows: 40,
            cols: n,
            kind: ViewKind::Dense,
            nnz: 0,
        },
    ];
    let p = FusedParams::default();
    let graph = anchor_graph_workspace::<f64>(shapes, n, m, None, &p).unwrap();
    let fit = mvel::fit_anchored_workspace::<f64>(n, 14, 10, m, &MvelParams::default()).unwrap();
    let dense = fused_graph_workspace::<f64>(shapes, &p).unwrap() + n * n * 8;
    // The CCA's covariance accumulation is O(d²) and its data pass blockwise:
    // nothing of size n·m or n².
    assert!(graph < 16 << 20, "anchor graph workspace {graph}");
    assert!(fit < 16 << 20, "anchored fit workspace {fit}");
    assert!(dense > 100 * (graph + fit), "dense {dense}");
}

#[test]
fn three_views_run_in_exactly_the_queried_workspace() {
    let (n, m, s) = (50, 7, 2);
    let mut xs = views(n, 13);
    let extra: Vec<f64> = (0..3 * n)
        .map(|t| xs[0][t % (4 * n)] * 0.5 + (t % 7) as f64 * 0.01)
        .collect();
    xs.push(extra);
    let an = anchors(&xs, n, m);
    // `graph` allocates exactly the queried bytes; one less is refused.
    let g = graph(&xs, n, None, &an, m, s, &FusedParams::default(), None).unwrap();
    assert!(g
        .z
        .chunks(s)
        .all(|c| (c.iter().sum::<f64>() - 1.0).abs() < 1e-14));
    let vs = as_views(&xs, n);
    let av = as_views(&an, m);
    let p = FusedParams::default();
    let need = anchor_graph_workspace::<f64>(vs.iter().map(|v| v.shape()), n, m, None, &p).unwrap();
    let mut work = vec![0u8; need - 1];
    let mut sc = vec![0.0; anchor_scales_len(3)];
    let (mut idx, mut z) = (vec![0usize; n * s], vec![0.0; n * s]);
    let e = anchor_graph(
        &vs[..],
        None,
        &av[..],
        s,
        None,
        &p,
        &mut sc,
        &mut idx,
        &mut z,
        &mut work,
    );
    assert_eq!(e, Err(Error::WorkspaceTooSmall));
}

#[test]
fn knn_sparsified_graph_is_the_symmetrised_top_s_of_the_fused_weights() {
    use mvnmf::graph::{
        fused_knn_graph, fused_knn_graph_capacity, fused_knn_graph_workspace, CsrGraph, CsrGraphs,
        CsrOut,
    };
    let (n, s) = (40, 4);
    let dims = [4usize, 6];
    let xs = views(n, 17);
    let p = FusedParams {
        cross_view: false,
        ..FusedParams::default()
    };
    let vs = as_views(&xs, n);
    let need = fused_knn_graph_workspace::<f64>(vs.iter().map(|v| v.shape()), s, None, &p).unwrap();
    let cap = fused_knn_graph_capacity(n, s).unwrap();
    let (mut rp, mut ci, mut w) = (vec![0usize; n + 1], vec![0usize; cap], vec![0.0; cap]);
    let nnz = {
        let mut out = CsrOut {
            row_ptr: &mut rp,
            col_idx: &mut ci,
            weights: &mut w,
        };
        fused_knn_graph(&vs[..], s, None, &p, &mut out, &mut vec![0u8; need]).unwrap()
    };
    assert_eq!(rp[n], nnz);
    // Brute force: per view the RBF kernel with 1 / (lower median of all n²
    // distances, the zero diagonal included: every item is also an anchor),
    // weights Σ_v (1/J) K_v / (vol_v / n); each row's s best others, normalised;
    // (P + Pᵀ)/2.
    let mut wf = vec![0.0; n * n];
    for (x, &d) in xs.iter().zip(&dims) {
        let dist: Vec<f64> = (0..n * n)
            .map(|t| {
                sqd(
                    &x[(t % n) * d..(t % n + 1) * d],
                    &x[(t / n) * d..(t / n + 1) * d],
                )
            })
            .collect();
        let mut all = dist.clone();
        all.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let g = 1.0 / all[(all.len() - 1) / 2];
        let k: Vec<f64> = dist.iter().map(|x| (-g * x).exp()).collect();
        let vol = k.iter().sum::<f64>() / n as f64;
        wf.iter_mut().zip(&k).for_each(|(a, b)| *a += 0.5 * b / vol);
    }
    let mut pm = vec![0.0; n * n];
    for u in 0..n {
        let mut order: Vec<usize> = (0..n).filter(|&v| v != u).collect();
        order.sort_by(|&a, &b| {
            wf[u + b * n]
                .partial_cmp(&wf[u + a * n])
                .unwrap()
                .then(a.cmp(&b))
        });
        let t: f64 = order[..s].iter().map(|&v| wf[u + v * n]).sum();
        for &v in &order[..s] {
            pm[u + v * n] = wf[u + v * n] / t;
        }
    }
    let mut total = 0.0;
    for u in 0..n {
        let want: Vec<usize> = (0..n)
            .filter(|&v| pm[u + v * n] + pm[v + u * n] > 0.0)
            .collect();
        assert_eq!(&ci[rp[u]..rp[u + 1]], &want[..], "row {u}");
        for r in rp[u]..rp[u + 1] {
            let v = ci[r];
            let x = 0.5 * (pm[u + v * n] + pm[v + u * n]);
            assert!((w[r] - x).abs() < 1e-12, "({u},{v}) {} vs {x}", w[r]);
            total += w[r];
        }
    }
    assert!((total - n as f64).abs() < 1e-10);
    // And MVEL on it: monotone.
    let gr = CsrGraphs::new(
        n,
        Some(CsrGraph::new(n, &rp, &ci[..nnz], &w[..nnz]).unwrap()),
        None,
    )
    .unwrap();
    let (c, y) = labels(n, 0.5, 3);
    let prm = MvelParams {
        max_iter: 30,
        tol: 0.0,
        ..MvelParams::default()
    };
    let r = 3;
    let (mut q, mut h) = (vec![0.0; c * r], vec![0.0; r * n]);
    let obj = item_fit(&y, c, &gr, r, &prm, &mut q, &mut h);
    let scale = obj.iter().map(|x| x.abs()).fold(1.0, f64::max);
    assert_monotone(&obj, 1e-12 * scale, "mvel on the kNN graph");
    // s ≥ n is refused; a short output too, untouched.
    assert_eq!(
        fused_knn_graph_workspace::<f64>(vs.iter().map(|v| v.shape()), n, None, &p),
        Err(Error::BadParameter)
    );
    let (mut rp2, mut ci2, mut w2) = (vec![9usize; n + 1], vec![9usize; 3], vec![9.0; 3]);
    let mut out = CsrOut {
        row_ptr: &mut rp2,
        col_idx: &mut ci2,
        weights: &mut w2,
    };
    assert_eq!(
        fused_knn_graph(&vs[..], s, None, &p, &mut out, &mut vec![0u8; need]),
        Err(Error::BufferTooShort)
    );
    assert!(rp2.iter().all(|&x| x == 9) && w2.iter().all(|&x| x == 9.0));
}
