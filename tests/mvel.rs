//! MVEL (DESIGN §8): the objective never increases (projected gradient with
//! Armijo backtracking) on dense and CSR graphs; the constraints hold; the
//! label Laplacian is the harmonic mean of the conditionals, computed
//! independently here; thresholds maximise F1 on the given labels; on a
//! problem whose labels follow the graph, the completed labels recover
//! positives that were hidden; bad input gets its status, outputs untouched.

mod common;

use common::*;
use mvnmf::eval::{average_auroc, average_auroc_workspace};
use mvnmf::graph::{CsrGraph, CsrGraphs, DenseGraph};
use mvnmf::linalg::mat::{MatMut, MatRef};
use mvnmf::models::mvel::{self, MvelParams};
use mvnmf::{Error, Init};

/// `n` items in 3 clusters on a line; labels: cluster 0 → {0, 1}, 1 → {1, 2},
/// 2 → {3}; `keep` of the positives given (deterministic thinning).
struct Problem {
    n: usize,
    c: usize,
    w: Vec<f64>,
    truth: Vec<u8>,
    given: Vec<u8>,
}

fn problem(n: usize, keep: f64, seed: u64) -> Problem {
    let mut g = Lcg(seed);
    let cl: Vec<usize> = (0..n).map(|u| u % 3).collect();
    let x: Vec<f64> = cl.iter().map(|&k| k as f64 * 3.0 + g.uniform()).collect();
    let mut w = vec![0.0; n * n];
    for u in 0..n {
        for v in 0..n {
            w[u + v * n] = (-(x[u] - x[v]).powi(2)).exp();
        }
    }
    let total: f64 = w.iter().sum();
    w.iter_mut().for_each(|a| *a *= n as f64 / total);
    // exact symmetry
    for u in 0..n {
        for v in 0..u {
            w[u + v * n] = w[v + u * n];
        }
    }
    let c = 4;
    let sets = [[0usize, 1].as_slice(), &[1, 2], &[3]];
    let mut truth = vec![0u8; c * n];
    let mut given = vec![0u8; c * n];
    for u in 0..n {
        for &s in sets[cl[u]] {
            truth[s + u * c] = 1;
            if g.uniform() < keep {
                given[s + u * c] = 1;
            }
        }
    }
    Problem {
        n,
        c,
        w,
        truth,
        given,
    }
}

/// `(Q, H, objective per iteration)`.
type Fitted = (Vec<f64>, Vec<f64>, Vec<f64>);

fn fit_dense(p: &Problem, r: usize, prm: &MvelParams) -> Result<Fitted, Error> {
    let g = DenseGraph::new(&p.w, p.n)?;
    let y = MatRef::col_major(&p.given, p.c, p.n)?;
    let mut work = vec![0u8; mvel::fit_workspace::<f64, _>(p.n, p.c, r, &g, prm)?];
    let (mut q, mut h) = (vec![0.0; p.c * r], vec![0.0; r * p.n]);
    let mut obj = Vec::new();
    let mut rec = recorder(&mut obj);
    mvel::fit(y, &g, r, prm, &mut q, &mut h, &mut work, Some(&mut rec))?;
    drop(rec);
    Ok((q, h, obj))
}

#[test]
fn objective_never_increases_and_constraints_hold() {
    for (n, r, t1, t2, mu) in [
        (60, 4, 1.0, 0.1, 0.0),
        (45, 3, 10.0, 1.0, 0.0),
        (30, 6, 0.0, 0.0, 0.0),
        (50, 4, 2.0, 0.5, 0.3),
    ] {
        let p = problem(n, 0.4, n as u64);
        let prm = MvelParams {
            theta1: t1,
            theta2: t2,
            unknown_weight: mu,
            max_iter: 60,
            tol: 0.0,
            ..MvelParams::default()
        };
        let (q, h, obj) = fit_dense(&p, r, &prm).unwrap();
        assert_eq!(obj.len(), 61);
        let scale = obj.iter().map(|x| x.abs()).fold(1.0, f64::max);
        assert_monotone(&obj, 1e-12 * scale, &format!("n={n}"));
        assert!(obj[60] < obj[0], "no progress: {obj:?}");
        for col in h.chunks(r) {
            assert!(col.iter().map(|x| x * x).sum::<f64>() <= 1.0 + 1e-12);
        }
        for s in 0..p.c {
            assert!((0..r).map(|k| q[s + k * p.c].powi(2)).sum::<f64>() <= 1.0 + 1e-12);
        }
    }
}

#[test]
fn dense_and_csr_graphs_give_the_same_fit() {
    let p = problem(30, 0.5, 7);
    let prm = MvelParams {
        max_iter: 20,
        tol: 0.0,
        ..MvelParams::default()
    };
    let (q1, h1, o1) = fit_dense(&p, 3, &prm).unwrap();
    let n = p.n;
    let (mut rp, mut ci, mut ws) = (vec![0], vec![], vec![]);
    for u in 0..n {
        for v in 0..n {
            ci.push(v);
            ws.push(p.w[v + u * n]);
        }
        rp.push(ci.len());
    }
    let a = CsrGraph::new(n, &rp, &ci, &ws).unwrap();
    let g = CsrGraphs::new(n, Some(a), None).unwrap();
    let y = MatRef::col_major(&p.given, p.c, n).unwrap();
    let mut work = vec![0u8; mvel::fit_workspace::<f64, _>(n, p.c, 3, &g, &prm).unwrap()];
    let (mut q, mut h) = (vec![0.0; p.c * 3], vec![0.0; 3 * n]);
    let mut o2 = Vec::new();
    let mut rec = recorder(&mut o2);
    mvel::fit(y, &g, 3, &prm, &mut q, &mut h, &mut work, Some(&mut rec)).unwrap();
    drop(rec);
    assert!(max_rel_diff(&o1, &o2) < 1e-9, "{}", max_rel_diff(&o1, &o2));
    assert!(max_rel_diff(&q1, &q) < 1e-6 && max_rel_diff(&h1, &h) < 1e-6);
}

#[test]
fn label_laplacian_is_the_harmonic_mean_of_the_conditionals() {
    let p = problem(40, 0.6, 3);
    let c = p.c;
    let mut l = vec![0.0; c * c];
    mvel::label_laplacian(MatRef::col_major(&p.given, c, p.n).unwrap(), &mut l).unwrap();
    let cnt = |s: usize| (0..p.n).filter(|&u| p.given[s + u * c] == 1).count() as f64;
    let both = |s: usize, t: usize| {
        (0..p.n)
            .filter(|&u| p.given[s + u * c] == 1 && p.given[t + u * c] == 1)
            .count() as f64
    };
    for s in 0..c {
        let mut deg = 0.0;
        for t in 0..c {
            if s == t {
                continue;
            }
            let (pts, pst) = (both(s, t) / cnt(s), both(s, t) / cnt(t));
            let rho = if pts + pst > 0.0 {
                2.0 * pts * pst / (pts + pst)
            } else {
                0.0
            };
            assert!((l[s + t * c] + rho).abs() < 1e-14, "({s},{t})");
            deg += rho;
        }
        assert!((l[s + s * c] - deg).abs() < 1e-14);
    }
}

#[test]
fn completed_labels_recover_hidden_positives() {
    for mu in [0.0, 0.2] {
        completed(mu);
    }
}

fn completed(mu: f64) {
    let p = problem(90, 0.3, 11);
    let r = 4;
    let prm = MvelParams {
        theta1: 5.0,
        max_iter: 150,
        unknown_weight: mu,
        ..MvelParams::default()
    };
    let (q, h, _) = fit_dense(&p, r, &prm).unwrap();
    let (c, n) = (p.c, p.n);
    let mut sc = vec![0.0; c * n];
    let mut w = vec![0u8; mvel::predict_workspace::<f64>(c, r, n).unwrap()];
    mvel::predict(&q, &h, c, r, &mut sc, &mut w).unwrap();
    assert!(sc.iter().all(|x| x.abs() <= 1.0 + 1e-12));
    let mut tau = vec![0.0; c];
    let mut w2 = vec![0u8; mvel::choose_thresholds_workspace(n).unwrap()];
    mvel::choose_thresholds(
        MatRef::col_major(&sc, c, n).unwrap(),
        MatRef::col_major(&p.given, c, n).unwrap(),
        &mut tau,
        &mut w2,
    )
    .unwrap();
    let mut pred = vec![0u8; c * n];
    mvel::decide(
        MatRef::col_major(&sc, c, n).unwrap(),
        &tau,
        MatMut::col_major(&mut pred, c, n).unwrap(),
    )
    .unwrap();
    let f1 = |pr: &[u8]| {
        let (mut tp, mut fp, mut fnn) = (0.0, 0.0, 0.0);
        for (a, b) in pr.iter().zip(&p.truth) {
            match (a, b) {
                (1, 1) => tp += 1.0,
                (1, 0) => fp += 1.0,
                (0, 1) => fnn += 1.0,
                _ => {}
            }
        }
        2.0 * tp / (2.0 * tp + fp + fnn)
    };
    let zero = vec![0.0; c];
    let mut pz = vec![0u8; c * n];
    mvel::decide(
        MatRef::col_major(&sc, c, n).unwrap(),
        &zero,
        MatMut::col_major(&mut pz, c, n).unwrap(),
    )
    .unwrap();
    let (ours, given, sign) = (f1(&pred), f1(&p.given), f1(&pz));
    // Thresholds chosen on the given labels can only reproduce them (or do
    // better by accident): they are no worse.
    assert!(
        ours >= given,
        "micro-F1 {ours} vs the given labels' {given}"
    );
    if mu > 0.0 {
        // With unknowns as weak negatives the sign of the score decides well.
        assert!(
            sign > given + 0.2 && sign > 0.8,
            "mu {mu}: sign micro-F1 {sign} vs {given}"
        );
    }
    // The ranking: the model has no penalty on unknown (0) entries, so its
    // scores crowd towards 1 and the decisions depend on the thresholds; the
    // order of the scores is what it learns (AUROC against the full truth).
    let truth = MatRef::col_major(&p.truth, c, n).unwrap();
    let mut wa = vec![0u8; average_auroc_workspace(n).unwrap()];
    let ours = average_auroc(truth, MatRef::col_major(&sc, c, n).unwrap(), None, &mut wa).unwrap();
    let gf: Vec<f64> = p.given.iter().map(|&x| f64::from(x)).collect();
    let base = average_auroc(truth, MatRef::col_major(&gf, c, n).unwrap(), None, &mut wa).unwrap();
    assert!(
        ours.mean > 0.95 && ours.mean > base.mean + 0.2,
        "AUROC {} vs the given labels' {}",
        ours.mean,
        base.mean
    );
}

#[test]
fn thresholds_maximise_f1_on_the_given_labels() {
    // One label, scores 0.9 0.8 0.7 0.1, given 1 1 0 0: the best cut keeps 2.
    let sc = [0.9, 0.8, 0.7, 0.1];
    let y = [1u8, 1, 0, 0];
    let mut tau = [0.0];
    let mut w = vec![0u8; 256];
    mvel::choose_thresholds(
        MatRef::new(&sc, 1, 4, 1, 1).unwrap(),
        MatRef::new(&y, 1, 4, 1, 1).unwrap(),
        &mut tau,
        &mut w,
    )
    .unwrap();
    assert!((tau[0] - 0.75).abs() < 1e-15, "{}", tau[0]);
    let none = [0u8; 4];
    mvel::choose_thresholds(
        MatRef::new(&sc, 1, 4, 1, 1).unwrap(),
        MatRef::new(&none, 1, 4, 1, 1).unwrap(),
        &mut tau,
        &mut w,
    )
    .unwrap();
    assert_eq!(tau[0], f64::MAX);
}

#[test]
fn bad_input_is_refused_with_outputs_untouched() {
    let p = problem(20, 0.5, 5);
    let g = DenseGraph::new(&p.w, p.n).unwrap();
    let prm = MvelParams::default();
    let r = 3;
    let need = mvel::fit_workspace::<f64, _>(p.n, p.c, r, &g, &prm).unwrap();
    let attempt = |y: &[u8], c: usize, prm: &MvelParams, wl: usize, ql: usize| {
        let (mut q, mut h) = (vec![7.0; ql], vec![7.0; r * p.n]);
        let mut work = vec![0u8; wl];
        let e = mvel::fit(
            MatRef::col_major(y, c, p.n).unwrap(),
            &g,
            r,
            prm,
            &mut q,
            &mut h,
            &mut work,
            None,
        )
        .unwrap_err();
        assert!(q.iter().chain(&h).all(|&x| x == 7.0), "{e:?}");
        e
    };
    let mut bad = p.given.clone();
    bad[3] = 2;
    assert_eq!(attempt(&bad, p.c, &prm, need, p.c * r), Error::BadLabel);
    assert_eq!(
        attempt(&p.given, p.c, &prm, need - 1, p.c * r),
        Error::WorkspaceTooSmall
    );
    assert_eq!(
        attempt(&p.given, p.c, &prm, need, p.c * r + 1),
        Error::DimensionMismatch
    );
    let neg = MvelParams {
        theta1: -1.0,
        ..prm
    };
    assert_eq!(
        attempt(&p.given, p.c, &neg, need, p.c * r),
        Error::BadParameter
    );
    let given = MvelParams {
        init: Init::Given,
        ..prm
    };
    let (mut q, mut h) = (vec![f64::NAN; p.c * r], vec![0.1; r * p.n]);
    let mut work = vec![0u8; need];
    let y = MatRef::col_major(&p.given, p.c, p.n).unwrap();
    assert_eq!(
        mvel::fit(y, &g, r, &given, &mut q, &mut h, &mut work, None).unwrap_err(),
        Error::NonFiniteInput
    );
    assert!(h.iter().all(|&x| x == 0.1));
    // A graph over other items.
    let small = problem(10, 0.5, 1);
    let g2 = DenseGraph::new(&small.w, 10).unwrap();
    assert_eq!(
        mvel::fit_workspace::<f64, _>(p.n, p.c, r, &g2, &prm).unwrap_err(),
        Error::DimensionMismatch
    );
    // An asymmetric dense graph.
    let mut wa = p.w.clone();
    wa[1] += 1.0;
    assert_eq!(DenseGraph::new(&wa, p.n).unwrap_err(), Error::BadParameter);
}

/// Issue 31, E5: prediction refuses non-finite factors and factors whose scores could
/// overflow (`r · max|Q| · max|H| > 2^1022`), with the scores untouched; just inside the
/// bound it gives finite scores. The C query refuses what the call refuses.
#[test]
fn e5_predict_refuses_nan_and_overflowing_factors() {
    use mvnmf::ffi::*;
    let (c, r, n) = (2usize, 3usize, 4usize);
    let q0: Vec<f64> = (0..c * r).map(|i| 0.1 * (i as f64 + 1.0)).collect();
    let h0: Vec<f64> = (0..r * n).map(|i| 0.05 * (i as f64) - 0.2).collect();
    let mut w = vec![0u8; mvel::predict_workspace::<f64>(c, r, n).unwrap()];
    let run = |q: &[f64], h: &[f64], w: &mut [u8]| {
        let mut sc = vec![7.0; c * n];
        let e = mvel::predict(q, h, c, r, &mut sc, w);
        (e, sc)
    };
    // NaN or ±∞ anywhere in Q or H.
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        for at in [0, 5] {
            let mut q = q0.clone();
            q[at] = bad;
            let (e, sc) = run(&q, &h0, &mut w);
            assert_eq!(e, Err(Error::NonFiniteInput), "Q[{at}] = {bad}");
            assert!(sc.iter().all(|&x| x == 7.0), "scores written");
            let mut h = h0.clone();
            h[at] = bad;
            assert_eq!(run(&q0, &h, &mut w).0, Err(Error::NonFiniteInput));
        }
    }
    // Q and H near 1e200: the case (scores were ±∞ with OK).
    let big = |x: &[f64], s: f64| x.iter().map(|v| v * s).collect::<Vec<_>>();
    let (e, sc) = run(&big(&q0, 1e200), &big(&h0, 1e200), &mut w);
    assert_eq!(e, Err(Error::InputTooLarge));
    assert!(sc.iter().all(|&x| x == 7.0), "scores written");
    // At the bound: r · max|Q| · max|H| = 2^1022 exactly is accepted, finite.
    let mq = q0.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let mh = h0.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let (sq, sh) = (2f64.powi(511) / mq, 2f64.powi(511) / (mh * r as f64));
    let (qb, hb) = (big(&q0, sq), big(&h0, sh));
    let prod = r as f64
        * qb.iter().fold(0.0f64, |a, v| a.max(v.abs()))
        * hb.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let (e, sc) = run(&qb, &hb, &mut w);
    if prod <= 2f64.powi(1022) {
        assert_eq!(e, Ok(()));
        assert!(sc.iter().all(|x| x.is_finite()));
    } else {
        assert_eq!(e, Err(Error::InputTooLarge));
    }
    // Twice the bound: refused.
    assert_eq!(
        run(&big(&qb, 4.0), &hb, &mut w).0,
        Err(Error::InputTooLarge)
    );
    // The C ABI: the same statuses; the query refuses what the call refuses by shape.
    let mut sc = vec![7.0; c * n];
    let mut qn = q0.clone();
    qn[1] = f64::NAN;
    let s = unsafe {
        mvnmf_mvel_predict(
            qn.as_ptr(),
            h0.as_ptr(),
            c,
            r,
            n,
            sc.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            w.len(),
        )
    };
    assert_eq!(s, mvnmf_status::NonFiniteInput);
    let (qh, hh) = (big(&q0, 1e200), big(&h0, 1e200));
    let s = unsafe {
        mvnmf_mvel_predict(
            qh.as_ptr(),
            hh.as_ptr(),
            c,
            r,
            n,
            sc.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            w.len(),
        )
    };
    assert_eq!(s, mvnmf_status::InputTooLarge);
    assert!(sc.iter().all(|&x| x == 7.0));
    for (cc, rr, nn) in [
        (usize::MAX, r, n),
        (c, usize::MAX, n),
        (c, r, usize::MAX),
        (c, r, 1 << 61),
    ] {
        let mut b = 12345usize;
        let s = unsafe { mvnmf_mvel_predict_workspace(cc, rr, nn, &mut b) };
        assert_eq!(
            (s, b),
            (mvnmf_status::SizeOverflow, 12345),
            "query ({cc}, {rr}, {nn})"
        );
        let s = unsafe {
            mvnmf_mvel_predict(
                q0.as_ptr(),
                h0.as_ptr(),
                cc,
                rr,
                nn,
                sc.as_mut_ptr(),
                w.as_mut_ptr().cast(),
                w.len(),
            )
        };
        assert_eq!(s, mvnmf_status::SizeOverflow, "call ({cc}, {rr}, {nn})");
    }
    let mut b = 0usize;
    assert_eq!(
        unsafe { mvnmf_mvel_predict_workspace(0, r, n, &mut b) },
        mvnmf_status::ZeroDimension
    );
}
