//! LDGE and TGE graphs: exact edge sets on hand-made cases, agreement with a brute-force
//! construction on random data, symmetry (accepted by CsrGraph::new), determinism, errors; and
//! the implicit SGE operator against SGE passed as an explicit CSR graph.

#[path = "graph_reference.rs"]
mod reference;

use mvnmf::data::ViewSet;
use mvnmf::graph::{
    self, CsrGraph, CsrGraphs, CsrOut, GraphNnz, GraphOp, GraphParams, Penalty, Sge,
};
use mvnmf::similarity::{Bandwidth, Kernel};
use mvnmf::{Error, Stack, View};
use reference::*;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Which {
    Ldge,
    Tge,
}

struct Built {
    a: (Vec<usize>, Vec<usize>, Vec<f64>),
    p: (Vec<usize>, Vec<usize>, Vec<f64>),
    nnz: GraphNnz,
}

fn build(
    which: Which,
    views: &[View<'_, f64>],
    ks: &[Kernel],
    eta: &[f64],
    labels: &[u32],
    c: usize,
    p: &GraphParams,
) -> Result<Built, Error> {
    let n = views[0].cols();
    let shapes = (0..views.len()).map(|v| views.shape(v));
    let (need, cap) = match which {
        Which::Ldge => (
            graph::ldge_workspace::<f64>(shapes, ks, c, p)?,
            graph::ldge_capacity(n, c, p)?,
        ),
        Which::Tge => (
            graph::tge_workspace::<f64>(shapes, ks, c, p)?,
            graph::tge_capacity(n, c, p)?,
        ),
    };
    let mut w = vec![0u8; need];
    let mut a = (
        vec![9; n + 1],
        vec![9; cap.affinity],
        vec![9.0; cap.affinity],
    );
    let mut q = (vec![9; n + 1], vec![9; cap.penalty], vec![9.0; cap.penalty]);
    let ao = CsrOut {
        row_ptr: &mut a.0,
        col_idx: &mut a.1,
        weights: &mut a.2,
    };
    let po = CsrOut {
        row_ptr: &mut q.0,
        col_idx: &mut q.1,
        weights: &mut q.2,
    };
    let r = match which {
        Which::Ldge => graph::ldge(views, ks, eta, labels, c, p, ao, po, &mut w),
        Which::Tge => graph::tge(views, ks, eta, labels, c, p, ao, po, &mut w),
    };
    match r {
        Err(e) => {
            assert!(a.0.iter().all(|&x| x == 9) && q.0.iter().all(|&x| x == 9));
            Err(e)
        }
        Ok(nnz) => {
            assert!(nnz.affinity <= cap.affinity && nnz.penalty <= cap.penalty);
            a.1.truncate(nnz.affinity);
            a.2.truncate(nnz.affinity);
            q.1.truncate(nnz.penalty);
            q.2.truncate(nnz.penalty);
            // Symmetric, sorted, nonnegative: the solver's graph type accepts both.
            CsrGraph::new(n, &a.0, &a.1, &a.2).expect("affinity accepted");
            CsrGraph::new(n, &q.0, &q.1, &q.2).expect("penalty accepted");
            Ok(Built { a, p: q, nnz })
        }
    }
}

fn entries(g: &(Vec<usize>, Vec<usize>, Vec<f64>)) -> Vec<(usize, usize, f64)> {
    csr_edges(&g.0, &g.1, &g.2)
}

/// Eight points on a line, RBF kernel: nearest = closest on the line.
///
/// ```text
/// item   0    1    2    3    4    5    6    7
/// x      0    1    3   3.5   7    8   10   20
/// label  0    0    0    1    1    1    U    U
/// ```
fn line() -> (TestView, Vec<u32>) {
    // (x = 0 is an ordinary point under RBF.)
    let x = vec![0.0, 1.0, 3.0, 3.5, 7.0, 8.0, 10.0, 20.0];
    (TestView::new(1, 8, x), vec![0, 0, 0, 1, 1, 1, U, U])
}

const RBF: Kernel = Kernel::Rbf(Bandwidth::Gamma(0.01));

#[test]
fn ldge_and_tge_exact_edges_on_a_line() {
    let (tv, labels) = line();
    let views = [tv.dense()];
    let base = GraphParams {
        ka: 1,
        kp: 1,
        penalty: Penalty::ItemNeighbors,
        sigma: 2.0,
        block: 3,
    };
    // LDGE, per-item penalty (seed 000).
    let g = build(Which::Ldge, &views, &[RBF], &[1.0], &labels, 2, &base).unwrap();
    let one = |e: &[(usize, usize)]| {
        sym_entries(&e.iter().map(|&(i, j)| (i, j, 1.0)).collect::<Vec<_>>())
    };
    assert_eq!(entries(&g.a), one(&[(0, 1), (1, 2), (3, 4), (4, 5)]));
    assert_eq!(
        entries(&g.p),
        one(&[(0, 3), (1, 3), (2, 3), (2, 4), (2, 5)])
    );
    // LDGE, per-class pairs (seed 003): the nearest cross pair is (2, 3), then (1, 3).
    let pairs = GraphParams {
        penalty: Penalty::ClassPairs,
        ..base
    };
    let g = build(Which::Ldge, &views, &[RBF], &[1.0], &labels, 2, &pairs).unwrap();
    assert_eq!(entries(&g.p), one(&[(2, 3)]));
    let g = build(
        Which::Ldge,
        &views,
        &[RBF],
        &[1.0],
        &labels,
        2,
        &GraphParams { kp: 2, ..pairs },
    )
    .unwrap();
    assert_eq!(entries(&g.p), one(&[(2, 3), (1, 3)]));
    // kp = 0: no penalty graph.
    let g = build(
        Which::Ldge,
        &views,
        &[RBF],
        &[1.0],
        &labels,
        2,
        &GraphParams { kp: 0, ..base },
    )
    .unwrap();
    assert_eq!(g.nnz.penalty, 0);
    assert_eq!(g.p.0, vec![0; 9]);
    assert_eq!(entries(&g.a), one(&[(0, 1), (1, 2), (3, 4), (4, 5)]));
    // TGE: σ on the same-class edges, 1 on global-neighbour edges touching an unlabeled item
    // (the global pair (2, 3) is labeled/labeled of different classes: dropped).
    let g = build(Which::Tge, &views, &[RBF], &[1.0], &labels, 2, &base).unwrap();
    let want = sym_entries(&[
        (0, 1, 2.0),
        (1, 2, 2.0),
        (3, 4, 2.0),
        (4, 5, 2.0),
        (5, 6, 1.0),
        (6, 7, 1.0),
    ]);
    assert_eq!(entries(&g.a), want);
    let pen: Vec<_> = one(&[(0, 3), (1, 3), (2, 3), (2, 4), (2, 5)])
        .into_iter()
        .map(|(i, j, _)| (i, j, 2.0))
        .collect();
    assert_eq!(entries(&g.p), pen);
    // Without labels and kp = 0, TGE is the plain symmetric kNN graph.
    let g = build(
        Which::Tge,
        &views,
        &[RBF],
        &[1.0],
        &[],
        0,
        &GraphParams { kp: 0, ..base },
    )
    .unwrap();
    assert_eq!(
        entries(&g.a),
        one(&[(0, 1), (2, 3), (4, 5), (5, 6), (6, 7)])
    );
}

#[test]
fn ties_on_the_line_go_to_the_lower_index() {
    // Item 1 at 0 has items 0 and 2 at distance 1: the lower index wins.
    let tv = TestView::new(1, 4, vec![-1.0, 0.0, 1.0, 5.0]);
    let views = [tv.dense()];
    let p = GraphParams {
        ka: 1,
        kp: 0,
        ..GraphParams::default()
    };
    let g = build(Which::Tge, &views, &[RBF], &[1.0], &[], 0, &p).unwrap();
    // 0 -> 1, 1 -> 0 (tie with 2), 2 -> 1, 3 -> 2.
    let one = |e: &[(usize, usize)]| {
        sym_entries(&e.iter().map(|&(i, j)| (i, j, 1.0)).collect::<Vec<_>>())
    };
    assert_eq!(entries(&g.a), one(&[(0, 1), (1, 2), (2, 3)]));
}

/// Brute-force LDGE / TGE from the reference fused kernel.
fn reference_graphs(
    which: Which,
    tv: &[&TestView],
    ks: &[Kernel],
    eta: &[f64],
    labels: &[u32],
    c: usize,
    p: &GraphParams,
) -> (Edges, Edges) {
    let n = labels.len();
    let gam: Vec<f64> = ks.iter().map(gamma_of).collect();
    let sim = |i: usize, j: usize| fused(tv, ks, &gam, eta, i, j);
    let lab = |j: usize| labels[j] != U;
    let sigma = if which == Which::Tge { p.sigma } else { 1.0 };
    let mut aff = vec![];
    for i in (0..n).filter(|&i| lab(i)) {
        for (j, _) in top_k(i, p.ka, (0..n).filter(|&j| labels[j] == labels[i]), sim) {
            aff.push((i, j, sigma));
        }
    }
    if which == Which::Tge {
        for i in 0..n {
            for (j, _) in top_k(i, p.ka, 0..n, sim) {
                if !lab(i) || !lab(j) {
                    aff.push((i, j, 1.0));
                }
            }
        }
    }
    let mut pen = vec![];
    if p.kp > 0 {
        match p.penalty {
            Penalty::ItemNeighbors => {
                for i in (0..n).filter(|&i| lab(i)) {
                    let cands = (0..n).filter(|&j| lab(j) && labels[j] != labels[i]);
                    for (j, _) in top_k(i, p.kp, cands, sim) {
                        pen.push((i, j, sigma));
                    }
                }
            }
            Penalty::ClassPairs => {
                for cl in 0..c as u32 {
                    let mut all = vec![];
                    for i in (0..n).filter(|&i| labels[i] == cl) {
                        for j in (0..n).filter(|&j| lab(j) && labels[j] != cl) {
                            all.push((i.min(j), i.max(j), sim(i, j)));
                        }
                    }
                    all.sort_by(|a, b| {
                        b.2.partial_cmp(&a.2)
                            .unwrap()
                            .then((a.0, a.1).cmp(&(b.0, b.1)))
                    });
                    for &(i, j, _) in all.iter().take(p.kp) {
                        pen.push((i, j, sigma));
                    }
                }
            }
        }
    }
    (sym_entries(&aff), sym_entries(&pen))
}

#[test]
fn random_graphs_equal_brute_force_and_are_deterministic() {
    let n = 61;
    let tv = [
        random_view(13, n, 0.6, 31),
        random_view(40, n, 0.15, 32),
        random_view(8, n, 1.0, 33),
    ];
    let trefs: Vec<&TestView> = tv.iter().collect();
    let mut g = Lcg(5);
    let labels: Vec<u32> = (0..n)
        .map(|j| if j % 3 == 2 { U } else { g.below(4) as u32 })
        .collect();
    let kss = [
        [Kernel::Linear, Kernel::Linear, Kernel::Linear],
        [
            Kernel::ChiSquared,
            Kernel::Linear,
            Kernel::Rbf(Bandwidth::Gamma(0.3)),
        ],
        [
            Kernel::Intersection,
            Kernel::Rbf(Bandwidth::Gamma(1.5)),
            Kernel::ChiSquared,
        ],
    ];
    let eta = [0.3, 0.45, 0.25];
    for ks in &kss {
        for sparse in [false, true] {
            let views: Vec<View<'_, f64>> = tv
                .iter()
                .enumerate()
                .map(|(v, t)| if sparse && v != 2 { t.csc() } else { t.dense() })
                .collect();
            for which in [Which::Ldge, Which::Tge] {
                for penalty in [Penalty::ClassPairs, Penalty::ItemNeighbors] {
                    for (ka, kp) in [(2, 3), (3, 0), (1, 5)] {
                        let p = GraphParams {
                            ka,
                            kp,
                            penalty,
                            sigma: 3.0,
                            block: 9,
                        };
                        let got = build(which, &views, ks, &eta, &labels, 4, &p).unwrap();
                        let (wa, wp) = reference_graphs(which, &trefs, ks, &eta, &labels, 4, &p);
                        let tag =
                            format!("{ks:?} sparse {sparse} {which:?} {penalty:?} ka {ka} kp {kp}");
                        assert_eq!(entries(&got.a), wa, "{tag}");
                        assert_eq!(entries(&got.p), wp, "{tag}");
                        let again = build(which, &views, ks, &eta, &labels, 4, &p).unwrap();
                        assert_eq!(got.a, again.a);
                        assert_eq!(got.p, again.p);
                        // Other block sizes: the same graph.
                        let other = build(
                            which,
                            &views,
                            ks,
                            &eta,
                            &labels,
                            4,
                            &GraphParams { block: 0, ..p },
                        )
                        .unwrap();
                        assert_eq!(got.a, other.a, "{tag}");
                        assert_eq!(got.p, other.p, "{tag}");
                    }
                }
            }
        }
    }
}

#[test]
fn graph_errors_have_their_codes() {
    let (tv, labels) = line();
    let views = [tv.dense()];
    let p = GraphParams {
        ka: 1,
        kp: 1,
        penalty: Penalty::ItemNeighbors,
        sigma: 2.0,
        block: 0,
    };
    let run = |which, labels: &[u32], p: &GraphParams| {
        build(which, &views, &[RBF], &[1.0], labels, 2, p).map(|_| ())
    };
    for which in [Which::Ldge, Which::Tge] {
        // Bad label.
        let mut bad = labels.clone();
        bad[2] = 2;
        assert_eq!(run(which, &bad, &p), Err(Error::BadLabel));
        // Too few items in a class for ka = 3 (each class has 3 labeled items).
        assert_eq!(
            run(which, &labels, &GraphParams { ka: 3, ..p }),
            Err(Error::TooFewLabeled)
        );
        assert!(run(which, &labels, &GraphParams { ka: 2, ..p }).is_ok());
        // ka >= N, ka = 0, kp >= N (item neighbours), bad σ.
        assert_eq!(
            run(which, &labels, &GraphParams { ka: 8, ..p }),
            Err(Error::BadParameter)
        );
        assert_eq!(
            run(which, &labels, &GraphParams { ka: 0, ..p }),
            Err(Error::BadParameter)
        );
        assert_eq!(
            run(which, &labels, &GraphParams { kp: 8, ..p }),
            Err(Error::BadParameter)
        );
        assert_eq!(
            run(
                which,
                &labels,
                &GraphParams {
                    sigma: f64::NAN,
                    ..p
                }
            ),
            Err(Error::BadParameter)
        );
        // Too few other-class items / cross pairs for kp.
        assert_eq!(
            run(which, &labels, &GraphParams { kp: 4, ..p }),
            Err(Error::TooFewLabeled)
        );
        let cp = GraphParams {
            kp: 10,
            penalty: Penalty::ClassPairs,
            ..p
        };
        assert_eq!(run(which, &labels, &cp), Err(Error::TooFewLabeled));
        assert!(run(which, &labels, &GraphParams { kp: 9, ..cp }).is_ok());
        // One class only: no cross pairs at all.
        let single: Vec<u32> = labels.iter().map(|&l| if l == 1 { U } else { l }).collect();
        assert_eq!(run(which, &single, &p), Err(Error::TooFewLabeled));
    }
    assert_eq!(run(Which::Ldge, &[], &p), Err(Error::TooFewLabeled));
    // Output buffers: wrong row_ptr length, too-short column buffer.
    let mut w = vec![0u8; graph::ldge_workspace::<f64>([views[0].shape()], &[RBF], 2, &p).unwrap()];
    let (mut rp, mut ci, mut wt) = (vec![0; 8], vec![0; 100], vec![0.0; 100]);
    let (mut rp2, mut ci2, mut wt2) = (vec![0; 9], vec![0; 3], vec![0.0; 3]);
    let r = graph::ldge(
        &views[..],
        &[RBF],
        &[1.0],
        &labels,
        2,
        &p,
        CsrOut {
            row_ptr: &mut rp,
            col_idx: &mut ci,
            weights: &mut wt,
        },
        CsrOut {
            row_ptr: &mut rp2,
            col_idx: &mut ci2,
            weights: &mut wt2,
        },
        &mut w,
    );
    assert_eq!(r, Err(Error::DimensionMismatch));
    let mut rp = vec![7; 9];
    let r = graph::ldge(
        &views[..],
        &[RBF],
        &[1.0],
        &labels,
        2,
        &p,
        CsrOut {
            row_ptr: &mut rp,
            col_idx: &mut ci,
            weights: &mut wt,
        },
        CsrOut {
            row_ptr: &mut rp2,
            col_idx: &mut ci2,
            weights: &mut wt2,
        },
        &mut w,
    );
    assert_eq!(r, Err(Error::BufferTooShort));
    assert!(rp.iter().all(|&x| x == 7) && rp2.iter().all(|&x| x == 0));
}

#[test]
fn sge_operator_equals_sge_as_explicit_csr() {
    let n = 41;
    let k = 4;
    let mut g = Lcg(17);
    let labels: Vec<u32> = (0..n)
        .map(|j| if j % 4 == 3 { U } else { g.below(3) as u32 })
        .collect();
    let v: Vec<f64> = (0..k * n).map(|_| g.uniform()).collect();
    let nl = labels.iter().filter(|&&l| l != U).count() as f64;
    let cnt = |c: u32| labels.iter().filter(|&&l| l == c).count() as f64;
    let (mut wa, mut wp) = (vec![], vec![]);
    for i in 0..n {
        for j in 0..n {
            if i == j || labels[i] == U || labels[j] == U {
                continue;
            }
            if labels[i] == labels[j] {
                wa.push((i, j, 1.0 / cnt(labels[i]) - 1.0 / nl));
            } else {
                wp.push((i, j, 1.0 / nl));
            }
        }
    }
    let csr = |e: &[(usize, usize, f64)]| {
        let mut rp = vec![0];
        let (mut ci, mut w) = (vec![], vec![]);
        for i in 0..n {
            for &(a, b, x) in e.iter().filter(|t| t.0 == i) {
                let _ = a;
                ci.push(b);
                w.push(x);
            }
            rp.push(ci.len());
        }
        (rp, ci, w)
    };
    let (a, p) = (csr(&wa), csr(&wp));
    let ga = CsrGraph::new(n, &a.0, &a.1, &a.2).unwrap();
    let gp = CsrGraph::new(n, &p.0, &p.1, &p.2).unwrap();
    let explicit = CsrGraphs::new(n, Some(ga), Some(gp)).unwrap();
    let sge = Sge::new(&labels, 3).unwrap();
    let mut w = vec![0u8; 1 << 16];
    let (mut p1, mut m1) = (vec![0.0; k * n], vec![0.0; k * n]);
    let (mut p2, mut m2) = (vec![0.0; k * n], vec![0.0; k * n]);
    let t1 = sge
        .apply(&v, k, &mut p1, &mut m1, &mut Stack::new(&mut w))
        .unwrap();
    let t2 = explicit
        .apply(&v, k, &mut p2, &mut m2, &mut Stack::new(&mut w))
        .unwrap();
    for q in 0..k * n {
        assert!((p1[q] - p2[q]).abs() < 1e-12 && (m1[q] - m2[q]).abs() < 1e-12);
    }
    assert!((t1.0 - t2.0).abs() < 1e-12 && (t1.1 - t2.1).abs() < 1e-12);
}

#[test]
fn built_graphs_feed_the_v_step_operator() {
    // An LDGE graph through CsrGraphs equals the dense products (D + W) v̄.
    let n = 30;
    let tv = [random_view(10, n, 0.8, 41)];
    let mut g = Lcg(2);
    let labels: Vec<u32> = (0..n)
        .map(|j| if j % 5 == 0 { U } else { g.below(2) as u32 })
        .collect();
    let views = [tv[0].dense()];
    let p = GraphParams {
        ka: 3,
        kp: 2,
        penalty: Penalty::ItemNeighbors,
        ..GraphParams::default()
    };
    let b = build(
        Which::Tge,
        &views,
        &[Kernel::Linear],
        &[1.0],
        &labels,
        2,
        &p,
    )
    .unwrap();
    let ga = CsrGraph::new(n, &b.a.0, &b.a.1, &b.a.2).unwrap();
    let gp = CsrGraph::new(n, &b.p.0, &b.p.1, &b.p.2).unwrap();
    let ops = CsrGraphs::new(n, Some(ga), Some(gp)).unwrap();
    let k = 3;
    let v: Vec<f64> = (0..k * n).map(|_| g.uniform()).collect();
    let mut w = vec![0u8; GraphOp::<f64>::apply_req(&ops, k).bytes().unwrap()];
    let (mut plus, mut minus) = (vec![0.0; k * n], vec![0.0; k * n]);
    ops.apply(&v, k, &mut plus, &mut minus, &mut Stack::new(&mut w))
        .unwrap();
    let dense = |e: &[(usize, usize, f64)]| {
        let mut m = vec![0.0; n * n];
        for &(i, j, x) in e {
            m[i * n + j] = x;
        }
        m
    };
    let (wa, wp) = (dense(&entries(&b.a)), dense(&entries(&b.p)));
    for r in 0..k {
        for j in 0..n {
            let da: f64 = (0..n).map(|i| wa[j * n + i]).sum();
            let dp: f64 = (0..n).map(|i| wp[j * n + i]).sum();
            let wav: f64 = (0..n).map(|i| wa[j * n + i] * v[r + i * k]).sum();
            let wpv: f64 = (0..n).map(|i| wp[j * n + i] * v[r + i * k]).sum();
            assert!((plus[r + j * k] - (da * v[r + j * k] + wpv)).abs() < 1e-12);
            assert!((minus[r + j * k] - (dp * v[r + j * k] + wav)).abs() < 1e-12);
            assert!((ga.degree(j) - da).abs() < 1e-12);
        }
    }
}
