//! The shallow graph-regularised solver: monotone for every preset, reduces to
//! joint NMF, implements the derivation (not the papers' misprint), group
//! sparsity drops columns, implicit SGE equals explicit SGE.

mod common;

use common::*;
use mvnmf::eval::UNLABELED;
use mvnmf::graph::{CsrGraph, CsrGraphs, GraphOp, NoGraph, Sge};
use mvnmf::models::mvsl::{self, MvslParams};
use mvnmf::models::nmf::{self, NmfParams};
use mvnmf::steps::prox::Sparsity;
use mvnmf::{Csc, Dense, Init, Report, View};

/// Two views with a class structure: items of class c load on latent block c.
struct Problem {
    x1: Vec<f64>,
    x2: Vec<f64>,
    m1: usize,
    m2: usize,
    n: usize,
    labels: Vec<u32>,
}

fn problem(n: usize, classes: usize, labeled_every: usize, seed: u64) -> Problem {
    let (m1, m2) = (30, 12);
    let mut g = Lcg(seed);
    let truth: Vec<u32> = (0..n).map(|j| (j % classes) as u32).collect();
    let labels = truth
        .iter()
        .enumerate()
        .map(|(j, &c)| if j % labeled_every == 0 { c } else { UNLABELED })
        .collect();
    let mut gen = |m: usize, scale: f64| {
        let mut x = vec![0.0; m * n];
        for j in 0..n {
            let c = truth[j] as usize;
            for i in 0..m {
                let on = i % classes == c;
                x[i + j * m] = scale * (if on { 1.0 } else { 0.1 } * g.uniform());
            }
        }
        x
    };
    let x1 = gen(m1, 1.0);
    let x2 = gen(m2, 50.0);
    Problem {
        x1,
        x2,
        m1,
        m2,
        n,
        labels,
    }
}

fn views(p: &Problem) -> [View<'_, f64>; 2] {
    [
        View::from(Dense::new(&p.x1, p.m1, p.n, p.m1).unwrap()),
        View::from(Dense::new(&p.x2, p.m2, p.n, p.m2).unwrap()),
    ]
}

struct Fit {
    u1: Vec<f64>,
    u2: Vec<f64>,
    v: Vec<f64>,
    obj: Vec<f64>,
    report: Report,
}

fn run<G: GraphOp<f64> + ?Sized>(
    vs: &[View<'_, f64>],
    graph: &G,
    k: usize,
    params: &MvslParams,
) -> Fit {
    let shapes: Vec<_> = vs.iter().map(|v| v.shape()).collect();
    let n = vs[0].cols();
    let mut w =
        vec![0u8; mvsl::fit_workspace::<f64, G>(shapes.iter().copied(), graph, k, params).unwrap()];
    let (mut u1, mut u2, mut v) = (
        vec![0.0; vs[0].rows() * k],
        vec![0.0; vs[1].rows() * k],
        vec![0.0; k * n],
    );
    let mut obj = Vec::new();
    let mut rec = recorder(&mut obj);
    let report = mvsl::fit(
        vs,
        graph,
        k,
        params,
        &mut [&mut u1[..], &mut u2[..]][..],
        &mut v,
        &mut w,
        Some(&mut rec),
    )
    .unwrap();
    drop(rec);
    Fit {
        u1,
        u2,
        v,
        obj,
        report,
    }
}

/// CSR arrays: row pointers, column indices, weights.
type Csr = (Vec<usize>, Vec<usize>, Vec<f64>);

/// Explicit SGE matrices as two CSR graphs (affinity, penalty).
fn sge_csr(labels: &[u32], classes: usize) -> (Csr, Csr) {
    let n = labels.len();
    let nl = labels.iter().filter(|&&l| l != UNLABELED).count() as f64;
    let nc: Vec<f64> = (0..classes as u32)
        .map(|c| labels.iter().filter(|&&l| l == c).count() as f64)
        .collect();
    let (mut ap, mut ai, mut aw, mut pp, mut pi, mut pw) =
        (vec![0], vec![], vec![], vec![0], vec![], vec![]);
    for j in 0..n {
        for i in 0..n {
            if i == j || labels[i] == UNLABELED || labels[j] == UNLABELED {
                continue;
            }
            if labels[i] == labels[j] {
                let w = 1.0 / nc[labels[i] as usize] - 1.0 / nl;
                if w != 0.0 {
                    ai.push(i);
                    aw.push(w);
                }
            } else {
                pi.push(i);
                pw.push(1.0 / nl);
            }
        }
        ap.push(ai.len());
        pp.push(pi.len());
    }
    ((ap, ai, aw), (pp, pi, pw))
}

fn presets() -> Vec<(&'static str, MvslParams)> {
    let base = |p: MvslParams| MvslParams {
        max_iter: 60,
        tol: 0.0,
        seed: 7,
        eps: 1e-12,
        ..p
    };
    vec![
        ("joint NMF", base(MvslParams::joint_nmf())),
        ("GNMF", base(MvslParams::gnmf())),
        (
            "MvSL",
            base(MvslParams {
                alpha: 1.0,
                ..MvslParams::mvsl()
            }),
        ),
        ("MvSL paper α", base(MvslParams::mvsl())),
        (
            "MCL",
            base(MvslParams {
                alpha: 5.0,
                ..MvslParams::mcl()
            }),
        ),
        ("MCL paper α", base(MvslParams::mcl())),
        (
            "MvSL v_inner 3 u_inner 1",
            base(MvslParams {
                alpha: 1.0,
                v_inner: 3,
                u_inner: 1,
                ..MvslParams::mvsl()
            }),
        ),
    ]
}

#[test]
fn every_preset_is_monotone_with_implicit_and_explicit_graphs_dense_and_sparse() {
    let p = problem(60, 3, 4, 1);
    let k = 6;
    let sge = Sge::new(&p.labels, 3).unwrap();
    let ((ap, ai, aw), (pp, pi, pw)) = sge_csr(&p.labels, 3);
    let csr = CsrGraphs::new(
        p.n,
        Some(CsrGraph::new(p.n, &ap, &ai, &aw).unwrap()),
        Some(CsrGraph::new(p.n, &pp, &pi, &pw).unwrap()),
    )
    .unwrap();
    let c2 = to_csc(&p.x2, p.m2, p.n);
    let sparse2 = View::from(Csc::new(p.m2, p.n, &c2.col_ptr, &c2.row_idx, &c2.values).unwrap());
    let scale = half_sq(&p.x1) + half_sq(&p.x2);
    for (name, params) in presets() {
        for (gname, graph) in [
            ("SGE", &sge as &dyn GraphOp<f64>),
            ("CSR", &csr),
            ("none", &NoGraph { n: p.n }),
        ] {
            for sparse in [false, true] {
                let mut vs = views(&p);
                if sparse {
                    vs[1] = sparse2;
                }
                let f = run(&vs, graph, k, &params);
                let what = format!("{name} / {gname} / sparse={sparse}");
                assert_eq!(f.obj.len(), 61, "{what}");
                assert_monotone(&f.obj, 1e-10 * scale, &what);
                assert!(
                    f.v.iter().all(|&x| x >= 0.0 && x <= params.vmax),
                    "{what}: V out of [0, vmax]"
                );
                let parts = f.report.objective;
                let sum = parts.reconstruction()
                    + parts.sparsity()
                    + parts.affinity()
                    + parts.penalty()
                    + parts.l1();
                assert!(
                    (sum - parts.total).abs() <= 1e-12 * scale.max(1.0),
                    "{what}: parts do not add up"
                );
                let direct = direct_objective(&p.x1, p.m1, p.n, &f.u1, &f.v, k)
                    + direct_objective(&p.x2, p.m2, p.n, &f.u2, &f.v, k);
                assert!(
                    (direct - parts.reconstruction()).abs() <= 1e-9 * scale,
                    "{what}: reconstruction part"
                );
            }
        }
    }
}

#[test]
fn no_regularisers_and_vmax_inf_is_joint_nmf_exactly() {
    let p = problem(40, 2, 3, 3);
    let k = 4;
    let vs = views(&p);
    let params = MvslParams {
        max_iter: 30,
        tol: 0.0,
        seed: 9,
        ..MvslParams::joint_nmf()
    };
    let f = run(&vs, &NoGraph { n: p.n }, k, &params);
    let np = NmfParams {
        max_iter: 30,
        tol: 0.0,
        seed: 9,
        ..NmfParams::default()
    };
    let mut w =
        vec![0u8; nmf::joint_fit_workspace::<f64>(vs.iter().map(|v| v.shape()), k, &np).unwrap()];
    let (mut u1, mut u2, mut v) = (vec![0.0; p.m1 * k], vec![0.0; p.m2 * k], vec![0.0; k * p.n]);
    nmf::joint_fit(
        &vs,
        k,
        &np,
        &mut [&mut u1[..], &mut u2[..]][..],
        &mut v,
        &mut w,
        None,
    )
    .unwrap();
    assert_eq!(f.v, v);
    assert_eq!(f.u1, u1);
    assert_eq!(f.u2, u2);
    // A sparsity norm with α = 0: still the same iterates.
    let f2 = run(
        &vs,
        &NoGraph { n: p.n },
        k,
        &MvslParams {
            sparsity: Sparsity::L12,
            alpha: 0.0,
            ..params
        },
    );
    assert_eq!(f2.v, v);
}

#[test]
fn unlabeled_items_keep_their_encodings_erratum() {
    // Seed 000 eq. (26) / seed 003 eq. (41) print (Q − |Q|)/(2PV) for items in no
    // graph, which is 0 since Q ≥ 0: one iteration would zero every unlabeled
    // column of V. The derivation gives Q/(PV).
    let p = problem(45, 3, 5, 4);
    let k = 6;
    let sge = Sge::new(&p.labels, 3).unwrap();
    let params = MvslParams {
        max_iter: 1,
        tol: 0.0,
        alpha: 1.0,
        ..MvslParams::mvsl()
    };
    let f = run(&views(&p), &sge, k, &params);
    for j in (0..p.n).filter(|&j| p.labels[j] == UNLABELED) {
        let col = &f.v[j * k..(j + 1) * k];
        assert!(
            col.iter().cloned().fold(0.0, f64::max) > 1e-3,
            "unlabeled item {j} was zeroed: {col:?}"
        );
    }
}

#[test]
fn group_sparsity_drops_whole_columns_only_when_alpha_is_large() {
    let p = problem(60, 3, 4, 5);
    let k = 8;
    let sge = Sge::new(&p.labels, 3).unwrap();
    for sp in [Sparsity::L12, Sparsity::L1Inf] {
        let zero_cols = |u: &[f64], m: usize| {
            u.chunks_exact(m)
                .filter(|c| c.iter().all(|&x| x == 0.0))
                .count()
        };
        let small = run(
            &views(&p),
            &sge,
            k,
            &MvslParams {
                max_iter: 80,
                tol: 0.0,
                sparsity: sp,
                alpha: 1e-3,
                ..MvslParams::mvsl()
            },
        );
        assert_eq!(
            zero_cols(&small.u1, p.m1) + zero_cols(&small.u2, p.m2),
            0,
            "{sp:?}: small α zeroed columns"
        );
        // View 1 has entries ≤ 1 and view 2 ≤ 50: a large α kills some of view
        // 1's columns (whole columns: the prox zeroes a column or shrinks it)
        // and none of view 2's.
        let alpha = if sp == Sparsity::L12 { 20.0 } else { 100.0 };
        let big = run(
            &views(&p),
            &sge,
            k,
            &MvslParams {
                max_iter: 80,
                tol: 0.0,
                sparsity: sp,
                alpha,
                ..MvslParams::mvsl()
            },
        );
        let z1 = zero_cols(&big.u1, p.m1);
        assert!(
            z1 > 0 && z1 < k,
            "{sp:?}: α = {alpha} zeroed {z1} of view 1's columns"
        );
        assert_eq!(
            zero_cols(&big.u2, p.m2),
            0,
            "{sp:?}: the large-scale view lost columns"
        );
        assert_eq!(big.report.dead_views, 0);
        let huge = run(
            &views(&p),
            &sge,
            k,
            &MvslParams {
                max_iter: 20,
                tol: 0.0,
                sparsity: sp,
                alpha: 1e6,
                ..MvslParams::mvsl()
            },
        );
        assert_eq!(
            huge.report.dead_views, 2,
            "{sp:?}: α = 1e6 must kill both views, and the report must say so"
        );
    }
}

#[test]
fn implicit_sge_equals_explicit_sge_csr() {
    let p = problem(50, 4, 3, 6);
    let k = 5;
    let sge = Sge::new(&p.labels, 4).unwrap();
    let ((ap, ai, aw), (pp, pi, pw)) = sge_csr(&p.labels, 4);
    let csr = CsrGraphs::new(
        p.n,
        Some(CsrGraph::new(p.n, &ap, &ai, &aw).unwrap()),
        Some(CsrGraph::new(p.n, &pp, &pi, &pw).unwrap()),
    )
    .unwrap();
    let params = MvslParams {
        max_iter: 40,
        tol: 0.0,
        alpha: 2.0,
        ..MvslParams::mvsl()
    };
    let (a, b) = (
        run(&views(&p), &sge, k, &params),
        run(&views(&p), &csr, k, &params),
    );
    assert!(
        max_rel_diff(&a.v, &b.v) < 1e-12,
        "{:e}",
        max_rel_diff(&a.v, &b.v)
    );
    assert!(max_rel_diff(&a.u1, &b.u1) < 1e-12);
    assert!(
        (a.report.objective.total - b.report.objective.total).abs()
            < 1e-10 * a.report.objective.total.abs()
    );
}

#[test]
fn encode_is_monotone_and_reduces_to_nmf_encode() {
    let p = problem(40, 2, 3, 9);
    let k = 4;
    let vs = views(&p);
    let params = MvslParams {
        max_iter: 50,
        tol: 0.0,
        alpha: 1.0,
        ..MvslParams::mvsl()
    };
    let f = run(&vs, &NoGraph { n: p.n }, k, &params);
    let enc = MvslParams {
        init: Init::Random,
        gamma: 0.01,
        ..params
    };
    let mut w = vec![
        0u8;
        mvsl::encode_workspace::<f64, _>(
            vs.iter().map(|v| v.shape()),
            &NoGraph { n: p.n },
            k,
            &enc
        )
        .unwrap()
    ];
    let mut v = vec![0.0; k * p.n];
    let mut obj = Vec::new();
    let mut rec = recorder(&mut obj);
    mvsl::encode(
        &vs,
        &NoGraph { n: p.n },
        k,
        &enc,
        &[&f.u1[..], &f.u2[..]][..],
        &mut v,
        &mut w,
        Some(&mut rec),
    )
    .unwrap();
    drop(rec);
    assert_monotone(
        &obj,
        1e-10 * (half_sq(&p.x1) + half_sq(&p.x2)),
        "mvsl encode",
    );
    // γ = 0, no graph: equals nmf::joint_encode bit for bit.
    let enc0 = MvslParams { gamma: 0.0, ..enc };
    mvsl::encode(
        &vs,
        &NoGraph { n: p.n },
        k,
        &enc0,
        &[&f.u1[..], &f.u2[..]][..],
        &mut v,
        &mut w,
        None,
    )
    .unwrap();
    let np = NmfParams {
        max_iter: 50,
        tol: 0.0,
        vmax: 1.0,
        seed: enc.seed,
        eps: enc.eps,
        ..NmfParams::default()
    };
    let mut w2 = vec![
        0u8;
        nmf::joint_encode_workspace::<f64>(vs.iter().map(|v| v.shape()), k, &np)
            .unwrap()
    ];
    let mut v2 = vec![0.0; k * p.n];
    nmf::joint_encode(
        &vs,
        k,
        &np,
        &[&f.u1[..], &f.u2[..]][..],
        &mut v2,
        &mut w2,
        None,
    )
    .unwrap();
    assert_eq!(v, v2);
}
