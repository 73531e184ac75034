//! Stopping rules (issue 17, item 5; `StopRule` in `src/steps/driver.rs`).
//!
//! * `StopRule::ScikitLearn` stops where scikit-learn's `NMF(solver="mu")`
//!   does: the same iteration count (`n_iter_`) and final error from the same
//!   start and `tol`, on real views shipped in `data/` (Frobenius and KL, dense
//!   and CSC; fixture by `scripts/make_stopping_fixture.py`).
//! * Every factorization model takes the rule through its params: with
//!   `tol = 1` the per-iteration rule stops after iteration 1 and
//!   scikit-learn's after iteration 10 (its first check), with
//!   `Stop::Converged`; with `tol = 0` neither stops early.

mod common;

use common::*;
use mvnmf::graph::{NoGraph, Sge};
use mvnmf::models::beta::{self, BetaParams};
use mvnmf::models::deep::{self, DeepParams};
use mvnmf::models::jsnmf::{self, JsnmfParams};
use mvnmf::models::mvsl::{self, MvslParams};
use mvnmf::models::nmf::{self, NmfParams};
use mvnmf::{Csc, Dense, Init, Report, Stop, StopRule, View};

/// One line of tests/fixtures/sklearn_stopping.txt.
struct Case {
    name: String,
    dir: String,
    view: usize,
    beta: f64,
    k: usize,
    tol: f64,
    max_iter: u32,
    n_iter: u32,
    e0: f64,
    e_final: f64,
}

fn cases() -> Vec<Case> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sklearn_stopping.txt"
    ))
    .unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Case {
                name: f[0].into(),
                dir: f[1].into(),
                view: f[2].parse().unwrap(),
                beta: f[3].parse().unwrap(),
                k: f[4].parse().unwrap(),
                tol: f[5].parse().unwrap(),
                max_iter: f[6].parse().unwrap(),
                n_iter: f[7].parse().unwrap(),
                e0: f[8].parse().unwrap(),
                e_final: f[9].parse().unwrap(),
            }
        })
        .collect()
}

fn sklearn_params(c: &Case) -> NmfParams {
    NmfParams {
        max_iter: c.max_iter,
        tol: c.tol,
        stop: StopRule::ScikitLearn,
        init: Init::Given,
        ..NmfParams::default()
    }
}

#[test]
fn the_scikit_learn_rule_stops_where_scikit_learn_does() {
    for c in cases() {
        let (x, m, n) = read_view(&c.dir, c.view);
        let csc = to_csc(&x, m, n);
        let view = if c.dir.starts_with("ng20") {
            View::from(Csc::new(m, n, &csc.col_ptr, &csc.row_idx, &csc.values).unwrap())
        } else {
            View::from(Dense::new(&x, m, n, m).unwrap())
        };
        let (mut u, mut v) = (formula_start(m * c.k, 0), formula_start(c.k * n, 7));
        let np = sklearn_params(&c);
        let report = if c.beta == 2.0 {
            let mut w = vec![0u8; nmf::fit_workspace::<f64>(view.shape(), c.k, &np).unwrap()];
            nmf::fit(view, c.k, &np, &mut u, &mut v, &mut w, None).unwrap()
        } else {
            let bp = BetaParams {
                beta: c.beta,
                iter: np,
                ..BetaParams::default()
            };
            let mut w = vec![0u8; beta::fit_workspace::<f64>([view.shape()], c.k, &bp).unwrap()];
            beta::fit(
                &[view],
                c.k,
                &bp,
                &mut [&mut u[..]][..],
                &mut v,
                &mut w,
                None,
            )
            .unwrap()
        };
        let err = |total: f64| (2.0 * total).sqrt();
        assert_eq!(report.iterations, c.n_iter, "{}", c.name);
        assert_eq!(report.stop, Stop::Converged, "{}", c.name);
        let (e0, e1) = (err(report.initial.total), err(report.objective.total));
        assert!(
            (e0 - c.e0).abs() <= 1e-12 * c.e0,
            "{}: e0 {e0} sklearn {}",
            c.name,
            c.e0
        );
        assert!(
            (e1 - c.e_final).abs() <= 1e-9 * c.e_final,
            "{}: error {e1} sklearn {} (rel {:e})",
            c.name,
            c.e_final,
            (e1 - c.e_final).abs() / c.e_final
        );
    }
}

/// Two small nonnegative views over `n` items with three classes.
fn two_views(n: usize) -> (Vec<f64>, Vec<f64>, Vec<u32>) {
    let x1: Vec<f64> = random_matrix(9, n, 1.0, 11)
        .iter()
        .map(|x| x + 0.01)
        .collect();
    let x2: Vec<f64> = random_matrix(7, n, 1.0, 12)
        .iter()
        .map(|x| 3.0 * x + 0.01)
        .collect();
    let labels = (0..n).map(|j| (j % 3) as u32).collect();
    (x1, x2, labels)
}

/// The report of each model under `(tol, rule)`, `max_iter = 40`.
fn reports(tol: f64, stop: StopRule) -> Vec<(&'static str, Report)> {
    let (n, k) = (24, 3);
    let (x1, x2, labels) = two_views(n);
    let vs = [
        View::from(Dense::new(&x1, 9, n, 9).unwrap()),
        View::from(Dense::new(&x2, 7, n, 7).unwrap()),
    ];
    let np = NmfParams {
        max_iter: 40,
        tol,
        stop,
        ..NmfParams::default()
    };
    let mut out = Vec::new();
    let (mut u1, mut u2, mut v) = (vec![0.0; 9 * k], vec![0.0; 7 * k], vec![0.0; k * n]);

    let shapes = [vs[0].shape(), vs[1].shape()];
    let mut w = vec![0u8; nmf::joint_fit_workspace::<f64>(shapes, k, &np).unwrap()];
    let r = nmf::joint_fit(
        &vs,
        k,
        &np,
        &mut [&mut u1[..], &mut u2[..]][..],
        &mut v,
        &mut w,
        None,
    );
    out.push(("joint NMF", r.unwrap()));

    let bp = BetaParams {
        iter: np,
        ..BetaParams::default()
    };
    let mut w = vec![0u8; beta::fit_workspace::<f64>(shapes, k, &bp).unwrap()];
    let r = beta::fit(
        &vs,
        k,
        &bp,
        &mut [&mut u1[..], &mut u2[..]][..],
        &mut v,
        &mut w,
        None,
    );
    out.push(("KL NMF", r.unwrap()));

    let sge = Sge::new(&labels, 3).unwrap();
    let mp = MvslParams {
        max_iter: 40,
        tol,
        stop,
        alpha: 0.5,
        ..MvslParams::mcl()
    };
    let mut w = vec![0u8; mvsl::fit_workspace::<f64, _>(shapes, &sge, k, &mp).unwrap()];
    let r = mvsl::fit(
        &vs,
        &sge,
        k,
        &mp,
        &mut [&mut u1[..], &mut u2[..]][..],
        &mut v,
        &mut w,
        None,
    );
    out.push(("MCL", r.unwrap()));

    let dp = DeepParams {
        top: mp,
        ..DeepParams::dmcl()
    };
    let layers = [5, k];
    let mut d1 = vec![0.0; deep::factor_len(9, &layers).unwrap()];
    let mut d2 = vec![0.0; deep::factor_len(7, &layers).unwrap()];
    let mut w =
        vec![0u8; deep::fit_workspace::<f64, _>(shapes, &NoGraph { n }, &layers, &dp).unwrap()];
    let r = deep::fit(
        &vs,
        &NoGraph { n },
        &layers,
        &dp,
        &mut [&mut d1[..], &mut d2[..]][..],
        &mut v,
        &mut w,
        None,
    );
    out.push(("DMCL", r.unwrap()));

    let jp = JsnmfParams { iter: np };
    let ranks = [k + 1, k + 1];
    let (mut wj, mut h1, mut h2) = (
        vec![0.0; 9 * k],
        vec![0.0; (k + 1) * n],
        vec![0.0; (k + 1) * n],
    );
    let xs2: Vec<f64> = x1.iter().map(|x| 0.5 * x + 0.2).collect();
    let src = [
        View::from(Dense::new(&x1, 9, n, 9).unwrap()),
        View::from(Dense::new(&xs2, 9, n, 9).unwrap()),
    ];
    let (mut j1, mut j2) = (vec![0.0; 9], vec![0.0; 9]);
    let mut w = vec![
        0u8;
        jsnmf::fit_workspace::<f64>([src[0].shape(), src[1].shape()], k, &ranks, &jp)
            .unwrap()
    ];
    let r = jsnmf::fit(
        &src,
        k,
        &ranks,
        None,
        &jp,
        &mut wj,
        &mut [&mut j1[..], &mut j2[..]][..],
        &mut [&mut h1[..], &mut h2[..]][..],
        &mut w,
        None,
    );
    out.push(("JSNMF", r.unwrap()));
    out
}

#[test]
fn every_model_takes_the_rule_through_its_params() {
    for (name, r) in reports(1.0, StopRule::EveryIteration) {
        assert_eq!((r.iterations, r.stop), (1, Stop::Converged), "{name}");
    }
    for (name, r) in reports(1.0, StopRule::ScikitLearn) {
        assert_eq!((r.iterations, r.stop), (10, Stop::Converged), "{name}");
    }
    for rule in [StopRule::EveryIteration, StopRule::ScikitLearn] {
        for (name, r) in reports(0.0, rule) {
            assert_eq!((r.iterations, r.stop), (40, Stop::MaxIter), "{name}");
        }
    }
}

#[test]
fn the_scikit_learn_rule_checks_only_every_tenth_iteration() {
    // A tolerance the objective's decrease crosses between checks: the
    // scikit-learn rule stops on a multiple of 10, later than the first
    // iteration where the per-iteration rule would.
    let (n, k) = (30, 4);
    let (x1, _, _) = two_views(n);
    let view = View::from(Dense::new(&x1, 9, n, 9).unwrap());
    let run = |stop| {
        let p = NmfParams {
            max_iter: 500,
            tol: 1e-3,
            stop,
            ..NmfParams::default()
        };
        let (mut u, mut v) = (vec![0.0; 9 * k], vec![0.0; k * n]);
        let mut w = vec![0u8; nmf::fit_workspace::<f64>(view.shape(), k, &p).unwrap()];
        nmf::fit(view, k, &p, &mut u, &mut v, &mut w, None).unwrap()
    };
    let (every, sk) = (run(StopRule::EveryIteration), run(StopRule::ScikitLearn));
    assert_eq!(sk.stop, Stop::Converged);
    assert_eq!(sk.iterations % 10, 0, "{}", sk.iterations);
    assert!(sk.iterations >= 10 && every.iterations >= 1);
    assert_ne!(every.iterations, sk.iterations);
}
