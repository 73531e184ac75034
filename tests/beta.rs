//! β-divergence NMF (issue 17, item 2): the iterates equal scikit-learn's
//! `NMF(solver="mu", beta_loss=β)` from the same start (KL dense and sparse,
//! IS, β = 0.5); the objective never increases for every β offered, one view
//! and several, with the exact MM update (`clip = 0`); β = 2 is the Frobenius
//! NMF's objective; joint NMF under KL equals KL-NMF of the stacked views;
//! bad input is refused with the outputs untouched.

mod common;

use common::*;
use mvnmf::models::beta::{self, BetaParams};
use mvnmf::models::nmf::NmfParams;
use mvnmf::{Csc, Dense, Error, Init, View};

struct Case {
    name: String,
    m: usize,
    n: usize,
    k: usize,
    beta: f64,
    sparse: bool,
    iters: u32,
    x: Vec<f64>,
    u0: Vec<f64>,
    v0: Vec<f64>,
    u: Vec<f64>,
    v: Vec<f64>,
}

fn load() -> Vec<Case> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sklearn_beta.txt"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines().skip(1);
    let nums = |l: &str| -> Vec<f64> { l.split_whitespace().map(|t| t.parse().unwrap()).collect() };
    let mut out = vec![];
    while let Some(l) = lines.next() {
        let t: Vec<&str> = l.split_whitespace().collect();
        let mut next = || nums(lines.next().unwrap());
        out.push(Case {
            name: t[1].into(),
            m: t[2].parse().unwrap(),
            n: t[3].parse().unwrap(),
            k: t[4].parse().unwrap(),
            beta: t[5].parse().unwrap(),
            sparse: t[6] == "1",
            iters: t[7].parse().unwrap(),
            x: next(),
            u0: next(),
            v0: next(),
            u: next(),
            v: next(),
        });
    }
    out
}

fn run(
    views: &[View<'_, f64>],
    k: usize,
    p: &BetaParams,
    u: &mut [Vec<f64>],
    v: &mut [f64],
) -> Result<Vec<f64>, Error> {
    let mut w = vec![0u8; beta::fit_workspace::<f64>(views.iter().map(|x| x.shape()), k, p)?];
    let mut obj = vec![];
    let mut rec = recorder(&mut obj);
    let mut refs: Vec<&mut [f64]> = u.iter_mut().map(|x| &mut x[..]).collect();
    beta::fit(views, k, p, &mut refs[..], v, &mut w, Some(&mut rec))?;
    drop(rec);
    Ok(obj)
}

#[test]
fn iterates_equal_scikit_learn() {
    for c in load() {
        let csc = to_csc(&c.x, c.m, c.n);
        let view = if c.sparse {
            View::from(Csc::new(c.m, c.n, &csc.col_ptr, &csc.row_idx, &csc.values).unwrap())
        } else {
            View::from(Dense::new(&c.x, c.m, c.n, c.m).unwrap())
        };
        let p = BetaParams {
            beta: c.beta,
            iter: NmfParams {
                max_iter: c.iters,
                tol: 0.0,
                init: Init::Given,
                ..NmfParams::default()
            },
            ..BetaParams::default()
        };
        let (mut u, mut v) = (vec![c.u0.clone()], c.v0.clone());
        let obj = run(&[view], c.k, &p, &mut u, &mut v).unwrap();
        let (du, dv) = (max_rel_diff(&u[0], &c.u), max_rel_diff(&v, &c.v));
        assert!(du < 1e-9 && dv < 1e-9, "{}: U {du:e}, V {dv:e}", c.name);
        assert_eq!(obj.len() as u32, c.iters + 1);
        assert_monotone(&obj, 1e-12 * obj[0].abs(), &c.name);
    }
}

#[test]
fn objective_never_increases_for_every_beta_and_view_count() {
    let (m1, m2, n, k) = (14, 9, 16, 3);
    let x1: Vec<f64> = random_matrix(m1, n, 1.0, 3)
        .iter()
        .map(|x| x + 0.01)
        .collect();
    let x2: Vec<f64> = random_matrix(m2, n, 1.0, 4)
        .iter()
        .map(|x| 5.0 * x + 0.01)
        .collect();
    for b in [0.0, 0.3, 0.5, 1.0, 1.5, 2.0] {
        for two in [false, true] {
            let mut views = vec![View::from(Dense::new(&x1, m1, n, m1).unwrap())];
            if two {
                views.push(View::from(Dense::new(&x2, m2, n, m2).unwrap()));
            }
            let p = BetaParams {
                beta: b,
                clip: 0.0,
                iter: NmfParams {
                    max_iter: 60,
                    tol: 0.0,
                    seed: 5,
                    ..NmfParams::default()
                },
            };
            let mut u: Vec<Vec<f64>> = views.iter().map(|x| vec![0.0; x.rows() * k]).collect();
            let mut v = vec![0.0; k * n];
            let obj = run(&views, k, &p, &mut u, &mut v).unwrap();
            assert_monotone(&obj, 1e-12 * obj[0].abs(), &format!("beta {b} two {two}"));
            assert!(
                obj[60] < 0.9 * obj[0],
                "beta {b}: {} -> {}",
                obj[0],
                obj[60]
            );
        }
    }
}

#[test]
fn beta_two_is_the_frobenius_objective_and_kl_joint_is_kl_of_the_stack() {
    let (m1, m2, n, k) = (10, 7, 12, 3);
    let x1: Vec<f64> = random_matrix(m1, n, 1.0, 8)
        .iter()
        .map(|x| x + 0.01)
        .collect();
    let x2: Vec<f64> = random_matrix(m2, n, 1.0, 9)
        .iter()
        .map(|x| x + 0.01)
        .collect();
    let mut st = vec![0.0; (m1 + m2) * n];
    for j in 0..n {
        st[j * (m1 + m2)..j * (m1 + m2) + m1].copy_from_slice(&x1[j * m1..(j + 1) * m1]);
        st[j * (m1 + m2) + m1..(j + 1) * (m1 + m2)].copy_from_slice(&x2[j * m2..(j + 1) * m2]);
    }
    let views = [
        View::from(Dense::new(&x1, m1, n, m1).unwrap()),
        View::from(Dense::new(&x2, m2, n, m2).unwrap()),
    ];
    let whole = [View::from(Dense::new(&st, m1 + m2, n, m1 + m2).unwrap())];
    let p = BetaParams {
        beta: 1.0,
        clip: 0.0,
        iter: NmfParams {
            max_iter: 30,
            tol: 0.0,
            seed: 2,
            ..NmfParams::default()
        },
    };
    // Same start for both: the stacked U is the two U's stacked.
    let mut u = vec![vec![0.0; m1 * k], vec![0.0; m2 * k]];
    let mut v = vec![0.0; k * n];
    let p0 = BetaParams {
        iter: NmfParams {
            max_iter: 0,
            ..p.iter
        },
        ..p
    };
    run(&views, k, &p0, &mut u, &mut v).unwrap();
    let mut us = vec![vec![0.0; (m1 + m2) * k]];
    for l in 0..k {
        us[0][l * (m1 + m2)..l * (m1 + m2) + m1].copy_from_slice(&u[0][l * m1..(l + 1) * m1]);
        us[0][l * (m1 + m2) + m1..(l + 1) * (m1 + m2)].copy_from_slice(&u[1][l * m2..(l + 1) * m2]);
    }
    let mut vs = v.clone();
    let given = BetaParams {
        iter: NmfParams {
            init: Init::Given,
            ..p.iter
        },
        ..p
    };
    let o1 = run(&views, k, &given, &mut u, &mut v).unwrap();
    let o2 = run(&whole, k, &given, &mut us, &mut vs).unwrap();
    assert!(max_rel_diff(&o1, &o2) < 1e-12);
    assert!(max_rel_diff(&v, &vs) < 1e-12);
    // β = 2: half the squared Frobenius distance.
    let p2 = BetaParams {
        beta: 2.0,
        iter: NmfParams {
            max_iter: 0,
            init: Init::Given,
            ..p.iter
        },
        ..p
    };
    let (mut u2, mut v2) = (vec![us[0].clone()], vs.clone());
    let o = run(&whole, k, &p2, &mut u2, &mut v2).unwrap();
    let mut want = 0.0;
    for j in 0..n {
        for i in 0..m1 + m2 {
            let y: f64 = (0..k)
                .map(|l| us[0][i + l * (m1 + m2)] * vs[l + j * k])
                .sum();
            want += 0.5 * (st[i + j * (m1 + m2)] - y).powi(2);
        }
    }
    assert!((o[0] - want).abs() < 1e-12 * want);
}

#[test]
fn bad_input_is_refused_with_outputs_untouched() {
    let (m, n, k) = (6, 5, 2);
    let mut x = random_matrix(m, n, 1.0, 1);
    x[3] = 0.0;
    let csc = to_csc(&x, m, n);
    let dense = View::from(Dense::new(&x, m, n, m).unwrap());
    let sparse = View::from(Csc::new(m, n, &csc.col_ptr, &csc.row_idx, &csc.values).unwrap());
    let mut bad = x.clone();
    bad[1] = f64::NAN;
    let nan = View::from(Dense::new(&bad, m, n, m).unwrap());
    let try_fit = |view: View<'_, f64>, b: f64| {
        let p = BetaParams {
            beta: b,
            ..BetaParams::default()
        };
        let (mut u, mut v) = (vec![7.0; m * k], vec![7.0; k * n]);
        let need = beta::fit_workspace::<f64>([view.shape()], k, &p).unwrap_or(1 << 16);
        let e = beta::fit(
            &[view][..],
            k,
            &p,
            &mut [&mut u[..]][..],
            &mut v,
            &mut vec![0u8; need],
            None,
        );
        if e.is_err() {
            assert!(u.iter().chain(&v).all(|&a| a == 7.0));
        }
        e.err()
    };
    assert_eq!(try_fit(dense, 0.0), Some(Error::BadParameter)); // a zero under IS
    assert_eq!(try_fit(sparse, 0.5), Some(Error::BadParameter)); // CSC only with KL
    assert_eq!(try_fit(dense, 2.5), Some(Error::BadParameter));
    assert_eq!(try_fit(dense, -0.5), Some(Error::BadParameter));
    assert_eq!(try_fit(nan, 1.0), Some(Error::NonFiniteInput));
    assert_eq!(try_fit(sparse, 1.0), None);
}

/// `(U per view, V, objective trace)`.
type Fitted = (Vec<Vec<f64>>, Vec<f64>, Vec<f64>);

fn fit_masked(
    views: &[View<'_, f64>],
    masks: &[Option<&[u8]>],
    k: usize,
    p: &BetaParams,
) -> Result<Fitted, Error> {
    let n = views[0].cols();
    let mut w = vec![0u8; beta::fit_workspace::<f64>(views.iter().map(|x| x.shape()), k, p)?];
    let mut u: Vec<Vec<f64>> = views.iter().map(|x| vec![0.0; x.rows() * k]).collect();
    let mut v = vec![0.0; k * n];
    let mut obj = vec![];
    let mut rec = recorder(&mut obj);
    {
        let mut refs: Vec<&mut [f64]> = u.iter_mut().map(|x| &mut x[..]).collect();
        beta::fit_masked(
            views,
            masks,
            k,
            p,
            &mut refs[..],
            &mut v,
            &mut w,
            Some(&mut rec),
        )?;
    }
    drop(rec);
    Ok((u, v, obj))
}

fn mask(m: usize, n: usize, missing: f64, seed: u64) -> Vec<u8> {
    let mut g = Lcg(seed);
    (0..m * n)
        .map(|_| u8::from(g.uniform() >= missing))
        .collect()
}

#[test]
fn masked_entries_have_no_effect_and_the_objective_never_rises() {
    let (m1, m2, n, k) = (12, 9, 14, 3);
    let x1: Vec<f64> = random_matrix(m1, n, 1.0, 21)
        .iter()
        .map(|x| x + 0.05)
        .collect();
    let x2: Vec<f64> = random_matrix(m2, n, 1.0, 22)
        .iter()
        .map(|x| 2.0 * x + 0.05)
        .collect();
    let w1 = mask(m1, n, 0.25, 5);
    for b in [0.0, 0.5, 1.0, 2.0] {
        let p = BetaParams {
            beta: b,
            clip: 0.0,
            iter: NmfParams {
                max_iter: 40,
                tol: 0.0,
                seed: 3,
                ..NmfParams::default()
            },
        };
        let mut runs = vec![];
        for fill in [f64::NAN, 1e300, -5.0, 0.0] {
            let mut y1 = x1.clone();
            for (a, &o) in y1.iter_mut().zip(&w1) {
                if o == 0 {
                    *a = fill;
                }
            }
            let views = [
                View::from(Dense::new(&y1, m1, n, m1).unwrap()),
                View::from(Dense::new(&x2, m2, n, m2).unwrap()),
            ];
            let (u, v, obj) = fit_masked(&views, &[Some(&w1), None], k, &p).unwrap();
            assert_monotone(&obj, 1e-12 * obj[0].abs(), &format!("masked beta {b}"));
            assert!(obj[40] < obj[0]);
            runs.push((u, v, obj));
        }
        for r in &runs[1..] {
            let same =
                |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
            assert!(
                same(&r.1, &runs[0].1) && same(&r.0[0], &runs[0].0[0]) && same(&r.2, &runs[0].2),
                "beta {b}"
            );
        }
    }
}

#[test]
fn an_all_observed_mask_is_no_mask_bit_for_bit() {
    let (m, n, k) = (10, 12, 3);
    let x: Vec<f64> = random_matrix(m, n, 1.0, 31)
        .iter()
        .map(|x| x + 0.05)
        .collect();
    let ones = vec![1u8; m * n];
    let view = [View::from(Dense::new(&x, m, n, m).unwrap())];
    for b in [0.0, 1.0, 2.0] {
        let p = BetaParams {
            beta: b,
            iter: NmfParams {
                max_iter: 25,
                tol: 0.0,
                ..NmfParams::default()
            },
            ..BetaParams::default()
        };
        let a = fit_masked(&view, &[Some(&ones)], k, &p).unwrap();
        let c = fit_masked(&view, &[], k, &p).unwrap();
        assert!(a
            .1
            .iter()
            .zip(&c.1)
            .all(|(x, y)| x.to_bits() == y.to_bits()));
        assert!(a
            .2
            .iter()
            .zip(&c.2)
            .all(|(x, y)| x.to_bits() == y.to_bits()));
    }
}

#[test]
fn missing_entries_of_a_low_rank_matrix_are_recovered() {
    let (m, n, k) = (30, 25, 3);
    let a = random_matrix(m, k, 1.0, 41);
    let b = random_matrix(k, n, 1.0, 42);
    let mut x = vec![0.0; m * n];
    for j in 0..n {
        for i in 0..m {
            x[i + j * m] = (0..k).map(|l| a[i + l * m] * b[l + j * k]).sum::<f64>() + 0.01;
        }
    }
    let w = mask(m, n, 0.2, 7);
    let mut hidden = x.clone();
    for (h, &o) in hidden.iter_mut().zip(&w) {
        if o == 0 {
            *h = f64::NAN;
        }
    }
    let p = BetaParams {
        beta: 2.0,
        clip: 0.0,
        iter: NmfParams {
            max_iter: 3000,
            tol: 0.0,
            ..NmfParams::default()
        },
    };
    let view = [View::from(Dense::new(&hidden, m, n, m).unwrap())];
    let (u, v, _) = fit_masked(&view, &[Some(&w)], k, &p).unwrap();
    let (mut e2, mut t2) = (0.0, 0.0);
    for j in 0..n {
        for i in 0..m {
            if w[i + j * m] == 0 {
                let y: f64 = (0..k).map(|l| u[0][i + l * m] * v[l + j * k]).sum();
                e2 += (y - x[i + j * m]).powi(2);
                t2 += x[i + j * m].powi(2);
            }
        }
    }
    assert!(
        (e2 / t2).sqrt() < 0.05,
        "relative error on the missing entries {}",
        (e2 / t2).sqrt()
    );
}

#[test]
fn bad_masks_are_refused() {
    let (m, n, k) = (5, 4, 2);
    let x = random_matrix(m, n, 1.0, 1);
    let csc = to_csc(&x, m, n);
    let dense = [View::from(Dense::new(&x, m, n, m).unwrap())];
    let sparse = [View::from(
        Csc::new(m, n, &csc.col_ptr, &csc.row_idx, &csc.values).unwrap(),
    )];
    let p = BetaParams::default();
    let mut w = vec![1u8; m * n];
    w[2] = 0;
    assert_eq!(
        fit_masked(&sparse, &[Some(&w)], k, &p).err(),
        Some(Error::BadParameter)
    );
    let mut bad = w.clone();
    bad[1] = 2;
    assert_eq!(
        fit_masked(&dense, &[Some(&bad)], k, &p).err(),
        Some(Error::BadParameter)
    );
    assert_eq!(
        fit_masked(&dense, &[Some(&w[1..])], k, &p).err(),
        Some(Error::DimensionMismatch)
    );
    assert_eq!(
        fit_masked(&dense, &[None, None], k, &p).err(),
        Some(Error::DimensionMismatch)
    );
    let mut y = x.clone();
    y[3] = f64::NAN; // observed
    let nan = [View::from(Dense::new(&y, m, n, m).unwrap())];
    assert_eq!(
        fit_masked(&nan, &[Some(&w)], k, &p).err(),
        Some(Error::NonFiniteInput)
    );
}

// ---- issue 31: the magnitude rule per view, the finite-output check.

/// `(status, U per view, V, objective trace)` of a fit.
type Got<T> = (Result<mvnmf::Report, Error>, Vec<Vec<T>>, Vec<T>, Vec<f64>);

/// [`Got`] of a fit of dense views (`(values, rows)`, `n` items) in precision
/// `T`; outputs start at 7.
fn fit_any<T: mvnmf::Real>(xs: &[(Vec<T>, usize)], n: usize, k: usize, p: &BetaParams) -> Got<T> {
    let views: Vec<View<'_, T>> = xs
        .iter()
        .map(|(x, m)| View::from(Dense::new(x, *m, n, *m).unwrap()))
        .collect();
    let need = beta::fit_workspace::<T>(views.iter().map(|x| x.shape()), k, p).unwrap();
    let seven = T::from_f64(7.0);
    let mut u: Vec<Vec<T>> = xs.iter().map(|(_, m)| vec![seven; m * k]).collect();
    let mut v = vec![seven; k * n];
    let mut obj = vec![];
    let mut rec = recorder(&mut obj);
    let mut refs: Vec<&mut [T]> = u.iter_mut().map(|x| &mut x[..]).collect();
    let r = beta::fit(
        &views[..],
        k,
        p,
        &mut refs[..],
        &mut v,
        &mut vec![0u8; need],
        Some(&mut rec),
    );
    drop(rec);
    (r, u, v, obj)
}

fn iters(b: f64, n: u32) -> BetaParams {
    BetaParams {
        beta: b,
        iter: NmfParams {
            max_iter: n,
            tol: 0.0,
            seed: 11,
            ..NmfParams::default()
        },
        ..BetaParams::default()
    }
}

/// Asserts a refusal with `want` and every output still 7.
fn assert_refused<T: mvnmf::Real>(got: &Got<T>, want: Error, what: &str) {
    assert_eq!(got.0.err(), Some(want), "{what}");
    let seven = T::from_f64(7.0);
    assert!(
        got.1.iter().flatten().chain(&got.2).all(|&a| a == seven),
        "{what}: outputs written"
    );
}

/// Asserts OK, finite factors and objectives, an objective that never rose
/// (relative tolerance `1e-12`) and fell.
fn assert_fitted<T: mvnmf::Real>(got: &Got<T>, what: &str) {
    let r = got.0.unwrap_or_else(|e| panic!("{what}: {e:?}"));
    assert!(
        got.1
            .iter()
            .flatten()
            .chain(&got.2)
            .all(|a| a.to_f64().is_finite()),
        "{what}: a non-finite factor"
    );
    let obj = &got.3;
    assert!(obj.iter().all(|o| o.is_finite()), "{what}: {obj:?}");
    assert!(r.objective.total.is_finite() && r.initial.total.is_finite());
    assert_monotone(obj, 1e-12 * obj[0].abs(), what);
    // (Denormal data under β = 2: the objective itself underflows to 0.)
    assert!(
        obj[obj.len() - 1] < obj[0] || obj[0] < 1e-300,
        "{what}: {} -> {}",
        obj[0],
        obj[obj.len() - 1]
    );
}

/// E2: entries near `DBL_MAX` (any β) and `FLT_MAX/2` in single precision are
/// refused with `InputTooLarge` and the outputs untouched (they gave OK with
/// non-finite factors); denormal data (β = 0.5, 1, 0, 2) and `f32` data near
/// `1e30`, inside the rule, are fitted: finite, monotone.
#[test]
fn issue31_e2_magnitudes_beyond_the_rule_are_refused_tiny_data_is_fitted() {
    let (m, n, k) = (8, 10, 3);
    let base = random_matrix(m, n, 1.0, 1);
    let at = |c: f64| -> Vec<f64> { base.iter().map(|x| (0.5 + 0.5 * x) * c).collect() };
    for b in [0.0, 0.5, 1.0, 2.0] {
        let got = fit_any(&[(at(f64::MAX), m)], n, k, &iters(b, 30));
        assert_refused(&got, Error::InputTooLarge, &format!("DBL_MAX, beta {b}"));
        let f: Vec<f32> = at(f32::MAX as f64 / 2.0)
            .iter()
            .map(|&x| x as f32)
            .collect();
        let got = fit_any(&[(f, m)], n, k, &iters(b, 30));
        assert_refused(&got, Error::InputTooLarge, &format!("FLT_MAX/2, beta {b}"));
        // Denormals (down to 2^-1074 · 2^k: the scale stops at 2^1023).
        for c in [1e-310, 1e-320] {
            let got = fit_any(&[(at(c), m)], n, k, &iters(b, 30));
            assert_fitted(&got, &format!("{c:e}, beta {b}"));
        }
        let f: Vec<f32> = at(1e30).iter().map(|&x| x as f32).collect();
        assert_fitted(
            &fit_any(&[(f, m)], n, k, &iters(b, 30)),
            &format!("f32 1e30, beta {b}"),
        );
    }
    // The bound on Σ x^β: β = 2 refuses what the Frobenius family refuses
    // (½‖X‖² above 2^999), β = 0 (scale-invariant) accepts entries up to 2^999.
    let got = fit_any(&[(at(1e151), m)], n, k, &iters(2.0, 5));
    assert_refused(&got, Error::InputTooLarge, "1e151, beta 2");
    assert_fitted(
        &fit_any(&[(at(1e300), m)], n, k, &iters(0.0, 20)),
        "1e300, beta 0",
    );
    assert_fitted(
        &fit_any(&[(at(1e149), m)], n, k, &iters(2.0, 20)),
        "1e149, beta 2",
    );
}

/// E3: two dense views near `1e-10` and `1e10`, β = 0.5 and 0 (and the others),
/// 150 iterations with the default clip: the objective rose 33 times and
/// ended infinite; now each view has its own scale: OK, finite, never rising,
/// and the small view fitted as well as the large one.
#[test]
fn issue31_e3_views_far_apart_are_fitted_monotonically() {
    let (m1, m2, n, k) = (8, 6, 10, 3);
    let lo: Vec<f64> = random_matrix(m1, n, 1.0, 1)
        .iter()
        .map(|x| (0.1 + x) * 1e-10)
        .collect();
    let hi: Vec<f64> = random_matrix(m2, n, 1.0, 2)
        .iter()
        .map(|x| (0.1 + x) * 1e10)
        .collect();
    for b in [0.0, 0.5, 1.0, 1.5, 2.0] {
        let got = fit_any(&[(lo.clone(), m1), (hi.clone(), m2)], n, k, &iters(b, 150));
        assert_fitted(&got, &format!("views 1e-10 and 1e10, beta {b}"));
        // The small view is fitted: its relative reconstruction error below 50%.
        let (u, v) = (&got.1[0], &got.2);
        let (mut e, mut t) = (0.0, 0.0);
        for j in 0..n {
            for i in 0..m1 {
                let y: f64 = (0..k).map(|l| u[i + l * m1] * v[l + j * k]).sum();
                e += (lo[i + j * m1] - y).powi(2);
                t += lo[i + j * m1].powi(2);
            }
        }
        assert!(
            (e / t).sqrt() < 0.5,
            "beta {b}: small view's error {}",
            (e / t).sqrt()
        );
    }
    // β = 0 is scale-invariant: a view times 2^40 gives its basis times 2^40
    // and the same V, bit for bit (each view has its own scale).
    let lo2: Vec<f64> = lo.iter().map(|x| x * 2f64.powi(40)).collect();
    let a = fit_any(&[(lo.clone(), m1), (hi.clone(), m2)], n, k, &iters(0.0, 40));
    let b = fit_any(&[(lo2, m1), (hi.clone(), m2)], n, k, &iters(0.0, 40));
    assert_eq!(a.2, b.2);
    assert_eq!(a.1[1], b.1[1]);
    let scaled: Vec<f64> = a.1[0].iter().map(|x| x * 2f64.powi(40)).collect();
    assert_eq!(scaled, b.1[0]);
}

/// A given start whose objective is infinite (`U V = 0` where `X > 0`, KL) is
/// refused with `BadParameter`, outputs untouched.
#[test]
fn issue31_a_given_start_with_an_infinite_objective_is_refused() {
    let (m, n, k) = (5, 6, 2);
    let x: Vec<f64> = random_matrix(m, n, 1.0, 3)
        .iter()
        .map(|a| a + 0.1)
        .collect();
    let view = [View::from(Dense::new(&x, m, n, m).unwrap())];
    let mut p = iters(1.0, 10);
    p.iter.init = Init::Given;
    let need = beta::fit_workspace::<f64>([view[0].shape()], k, &p).unwrap();
    let mut u = vec![0.0; m * k]; // U V = 0
    let mut v = vec![1.0; k * n];
    let e = beta::fit(
        &view[..],
        k,
        &p,
        &mut [&mut u[..]][..],
        &mut v,
        &mut vec![0u8; need],
        None,
    );
    assert_eq!(e.err(), Some(Error::BadParameter));
    assert!(u.iter().all(|&a| a == 0.0) && v.iter().all(|&a| a == 1.0));
    // A usable start is accepted and kept in the caller's units.
    let mut u = vec![0.5; m * k];
    let r = beta::fit(
        &view[..],
        k,
        &p,
        &mut [&mut u[..]][..],
        &mut v,
        &mut vec![0u8; need],
        None,
    );
    assert!(r.is_ok() && u.iter().chain(&v).all(|a| a.is_finite()));
}

/// `(status, U per view, V, objective trace)` of a fit of mixed views (`Ok`
/// the CSC ones as `(values, rows)` converted), the outputs starting at `u0`
/// and `v0` (a given start when `p` says so).
fn fit_mixed(views: &[View<'_, f64>], k: usize, p: &BetaParams, u0: f64, v0: f64) -> Got<f64> {
    let n = views[0].cols();
    let need = beta::fit_workspace::<f64>(views.iter().map(|x| x.shape()), k, p).unwrap();
    let mut u: Vec<Vec<f64>> = views.iter().map(|x| vec![u0; x.rows() * k]).collect();
    let mut v = vec![v0; k * n];
    let mut obj = vec![];
    let mut rec = recorder(&mut obj);
    let mut refs: Vec<&mut [f64]> = u.iter_mut().map(|x| &mut x[..]).collect();
    let r = beta::fit(
        views,
        k,
        p,
        &mut refs[..],
        &mut v,
        &mut vec![0u8; need],
        Some(&mut rec),
    );
    drop(rec);
    (r, u, v, obj)
}

/// Issue 31, route A (fuzz seeds 0x201d4e1, 0x3027770, 0x30448ca, 0x402b60b):
/// a given start far below CSC data (KL) passed the start check, which read
/// the `y` buffer that a CSC view never writes, and ended INTERNAL; now the
/// check covers CSC views (the largest `U V` at the stored entries): refused,
/// outputs untouched. A start at the data's scale is accepted and fitted.
#[test]
fn issue31_a_given_start_far_below_csc_data_is_refused() {
    let (m, n, k) = (6, 7, 2);
    for c in [1e282, 1e130, 1e-200] {
        let x: Vec<f64> = random_matrix(m, n, 0.5, 4).iter().map(|a| a * c).collect();
        let csc = to_csc(&x, m, n);
        let view = [View::from(
            Csc::new(m, n, &csc.col_ptr, &csc.row_idx, &csc.values).unwrap(),
        )];
        let mut p = iters(1.0, 20);
        p.iter.init = Init::Given;
        let got = fit_mixed(&view, k, &p, 1.0, 1.0);
        assert_eq!(
            got.0.err(),
            Some(Error::BadParameter),
            "start 1, data {c:e}"
        );
        assert!(got.1.iter().flatten().chain(&got.2).all(|&a| a == 1.0));
        // U at the data's scale: fitted, monotone with the exact update.
        p.clip = 0.0;
        let got = fit_mixed(&view, k, &p, c, 1.0);
        let got = (got.0, got.1, got.2, got.3);
        assert_fitted(&got, &format!("start at data {c:e}"));
    }
}

/// Issue 31, route B (fuzz seeds 0x4023754, 0x203e5f6): a light dense view
/// (weight ω far below `clip`) is the only one observing a column that a heavy
/// CSC view holds at 0. That column's optimum lies near ω (scaled units);
/// `clip` floored it there, V shrank by ω/clip each iteration, underflowed, and
/// KL became infinite (INTERNAL). Now each view's clip is times ω_v: OK,
/// finite, the objective never rising (default clip and exact update).
#[test]
fn issue31_a_light_views_own_column_is_fitted() {
    let (m1, m2, n, k) = (5, 4, 7, 3);
    let mut heavy = random_matrix(m1, n, 1.0, 5);
    for i in 0..m1 {
        heavy[i + 3 * m1] = 0.0; // column 3 not stored
    }
    let heavy: Vec<f64> = heavy.iter().map(|a| a * 1e107).collect();
    let light: Vec<f64> = random_matrix(m2, n, 1.0, 6)
        .iter()
        .map(|a| (0.1 + a) * 1e75)
        .collect();
    let csc = to_csc(&heavy, m1, n);
    let views = [
        View::from(Dense::new(&light, m2, n, m2).unwrap()),
        View::from(Csc::new(m1, n, &csc.col_ptr, &csc.row_idx, &csc.values).unwrap()),
    ];
    for clip in [beta::SKLEARN_EPSILON, 1e-12, 0.0] {
        let mut p = iters(1.0, 60);
        p.clip = clip;
        let got = fit_mixed(&views, k, &p, 7.0, 7.0);
        assert_fitted(&got, &format!("clip {clip:e}"));
    }
}

/// Issue 31 (fuzz seeds 0x2000297, 0x2001053, 0x200243a, 0x2004630): `f32`
/// β-NMF on views far apart, entries spread over 20 decades inside a view —
/// its products were held in float (weights ω_v underflowed, `Y` was floored
/// at 2^-32 above the data): it rose or ended INTERNAL. Now every iterate and
/// product is held in `f64`: OK, finite, never rising, every β, for `f32` and
/// `f64` alike (f64 seed 0x20043ca: entries below the clip inside one view).
#[test]
fn issue31_wide_views_are_fitted_in_both_precisions() {
    let (m1, m2, n, k) = (6, 5, 8, 3);
    let spread = |seed: u64, m: usize, c: f64| -> Vec<f64> {
        let r = random_matrix(m, n, 1.0, seed);
        let e = random_matrix(m, n, 1.0, seed + 100);
        r.iter()
            .zip(&e)
            .map(|(a, b)| (0.1 + a) * c * 10f64.powi(-((b * 20.0) as i32)))
            .collect()
    };
    let (a, b) = (spread(7, m1, 1e30), spread(8, m2, 1e-20));
    for beta in [0.0, 0.25, 0.5, 1.0, 1.5, 2.0] {
        for clip in [0.0, beta::SKLEARN_EPSILON] {
            let mut p = iters(beta, 40);
            p.clip = clip;
            let f = |x: &[f64]| x.iter().map(|&a| a as f32).collect::<Vec<f32>>();
            let got = fit_any(&[(f(&a), m1), (f(&b), m2)], n, k, &p);
            assert_fitted(&got, &format!("f32, beta {beta}, clip {clip:e}"));
            let got = fit_any(&[(a.clone(), m1), (b.clone(), m2)], n, k, &p);
            assert_fitted(&got, &format!("f64, beta {beta}, clip {clip:e}"));
        }
    }
}

/// Issue 31 (fuzz seeds 0x4013bd1, 0x30128a5): views more than `2^(256/β)`
/// apart, `β ∈ (0, 2)`, are refused with `InputTooLarge` (a light view's
/// weight below 2^-256: its column optimum near ω_v lies below any floor of
/// `Y` that keeps `X ∘ Y^(β−2)` finite); just inside the rule they are fitted;
/// β = 0 and β = 2 have no such rule.
#[test]
fn issue31_views_too_far_apart_are_refused() {
    let (m1, m2, n, k) = (4, 5, 6, 2);
    let base1 = random_matrix(m1, n, 1.0, 9);
    let base2 = random_matrix(m2, n, 1.0, 10);
    // Largest entries 2^e (binary exponents e + 1 apart by d).
    let at = |b: &[f64], e: i32| -> Vec<f64> {
        let mx = b.iter().fold(0.0f64, |a, &x| a.max(x));
        b.iter().map(|x| x / mx * 2f64.powi(e)).collect()
    };
    for (beta, d) in [(1.0, 256), (0.5, 512), (1.5, 170)] {
        let ok = fit_any(
            &[(at(&base1, 100), m1), (at(&base2, 100 - d), m2)],
            n,
            k,
            &iters(beta, 20),
        );
        assert_fitted(&ok, &format!("beta {beta}, 2^{d} apart"));
        let no = fit_any(
            &[(at(&base1, 100), m1), (at(&base2, 99 - d), m2)],
            n,
            k,
            &iters(beta, 20),
        );
        assert_refused(
            &no,
            Error::InputTooLarge,
            &format!("beta {beta}, 2^{} apart", d + 1),
        );
    }
    for beta in [0.0, 2.0] {
        let got = fit_any(
            &[(at(&base1, 400), m1), (at(&base2, -400), m2)],
            n,
            k,
            &iters(beta, 20),
        );
        assert_fitted(&got, &format!("beta {beta}, 2^800 apart"));
    }
}

/// Issue 31 (fuzz seed 0x200d38d, open until now): KL on one masked dense view
/// near `1e-46` whose entries spread over 14 decades, with zeros, from a given
/// start about `1e46` above the data, `clip` 1e-12: the clip capped the ratio
/// `x/y` of entries fitted below it, a factor pair shrank until `y = 0` at an
/// observed `x > 0`, and the divergence became infinite (`Internal`). The clip
/// now acts only where `x = 0` (module docs, "The clip"): OK, finite, the
/// objective never rising, for the default clip, 1e-12 and the exact update.
#[test]
fn issue31_the_clip_acts_only_on_zeros() {
    let (m, n, k) = (4, 4, 2);
    let x = [
        0.0,
        0.0,
        5.928901078828264e-50,
        7.262064535823769e-51,
        0.0,
        2.9934831628066242e-56,
        0.0,
        1.7207297455117518e-57,
        2.2877903121789016e-53,
        8.920889519422416e-60,
        1.9630164695477233e-47,
        9.096725638827827e-55,
        0.0,
        3.552991740646627e-46,
        7.621965402841634e-52,
        7.198380153240428e-59,
    ];
    let w: [u8; 16] = [0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 1];
    let u0 = [
        0.5529154379280902,
        0.5590986870886917,
        0.5472519038190725,
        0.6592349309954595,
        0.262621614623601,
        0.4852446365744477,
        0.40726039822559756,
        0.9718915503766227,
    ];
    let v0 = [
        0.055219177834043176,
        0.025965450591014294,
        0.702695358705992,
        0.18400394188601987,
        0.7895748309792631,
        0.04634204705277567,
        0.17936530226054404,
        0.9345065697357325,
    ];
    let views = [View::from(Dense::new(&x, m, n, m).unwrap())];
    let masks: [Option<&[u8]>; 1] = [Some(&w)];
    for clip in [1e-12, beta::SKLEARN_EPSILON, 0.0] {
        for iters in [5, 60] {
            let what = format!("clip {clip:e}, {iters} iterations");
            let mut p = BetaParams {
                beta: 1.0,
                iter: NmfParams {
                    max_iter: iters,
                    tol: 0.0,
                    init: Init::Given,
                    ..NmfParams::default()
                },
                clip,
            };
            p.iter.seed = 1;
            let need = beta::fit_workspace::<f64>(views.iter().map(|x| x.shape()), k, &p).unwrap();
            let (mut u, mut v) = (u0.to_vec(), v0.to_vec());
            let mut obj = vec![];
            let mut rec = recorder(&mut obj);
            let r = {
                let mut refs: [&mut [f64]; 1] = [&mut u[..]];
                beta::fit_masked(
                    &views[..],
                    &masks[..],
                    k,
                    &p,
                    &mut refs[..],
                    &mut v,
                    &mut vec![0u8; need],
                    Some(&mut rec),
                )
            };
            drop(rec);
            let r = r.unwrap_or_else(|e| panic!("{what}: {e:?}"));
            assert!(r.objective.total.is_finite(), "{what}");
            assert!(u.iter().chain(&v).all(|a| a.is_finite()), "{what}");
            assert!(obj.iter().all(|o| o.is_finite()), "{what}: {obj:?}");
            assert_monotone(&obj, 1e-12 * obj[0], &what);
            assert!(obj[obj.len() - 1] < obj[0], "{what}: {obj:?}");
        }
    }
}
