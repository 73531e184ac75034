//! JSNMF (DESIGN §7): the objective never increases for two and three sources,
//! dense and CSC; CSC equals dense; K = 0 is independent NMFs of the sources;
//! the reported objective is the directly computed one; bad input is refused
//! with its status and the outputs untouched.

mod common;

use common::*;
use mvnmf::models::jsnmf::{self, JsnmfParams};
use mvnmf::models::nmf::{self, NmfParams};
use mvnmf::{Csc, Dense, Error, Init, Report, View};

/// `S` sources over `m` terms with item counts `ns`, built from shared and
/// private topics (about half the entries zero).
fn sources(m: usize, ns: &[usize], seed: u64) -> Vec<Vec<f64>> {
    let mut g = Lcg(seed);
    ns.iter()
        .enumerate()
        .map(|(s, &n)| {
            (0..m * n)
                .map(|t| {
                    let (i, j) = (t % m, t / m);
                    let topic = (j % 3 == i % 3) as u8 as f64 + (s == i % 4) as u8 as f64;
                    let z = g.uniform();
                    if z < 0.5 {
                        0.0
                    } else {
                        z * (0.2 + topic)
                    }
                })
                .collect()
        })
        .collect()
}

/// A given start: `W`, the `U_s`, the `H_s`.
type Start<'a> = (&'a [f64], &'a [Vec<f64>], &'a [Vec<f64>]);

struct Fit {
    w: Vec<f64>,
    u: Vec<Vec<f64>>,
    h: Vec<Vec<f64>>,
    obj: Vec<f64>,
    report: Report,
}

#[allow(clippy::too_many_arguments)]
fn run(
    vs: &[View<'_, f64>],
    k: usize,
    ranks: &[usize],
    lambda: Option<&[f64]>,
    p: &JsnmfParams,
    start: Option<Start<'_>>,
) -> Result<Fit, Error> {
    let m = vs[0].rows();
    let need = jsnmf::fit_workspace::<f64>(vs.iter().map(|x| x.shape()), k, ranks, p)?;
    let mut work = vec![0u8; need];
    let (mut w, mut u, mut h) = match start {
        Some((w, u, h)) => (w.to_vec(), u.to_vec(), h.to_vec()),
        None => (
            vec![0.0; m * k],
            ranks.iter().map(|&r| vec![0.0; m * (r - k)]).collect(),
            vs.iter()
                .zip(ranks)
                .map(|(x, &r)| vec![0.0; r * x.cols()])
                .collect::<Vec<_>>(),
        ),
    };
    let mut obj = Vec::new();
    let mut rec = recorder(&mut obj);
    let mut ur: Vec<&mut [f64]> = u.iter_mut().map(|x| &mut x[..]).collect();
    let mut hr: Vec<&mut [f64]> = h.iter_mut().map(|x| &mut x[..]).collect();
    let report = jsnmf::fit(
        vs,
        k,
        ranks,
        lambda,
        p,
        &mut w,
        &mut ur[..],
        &mut hr[..],
        &mut work,
        Some(&mut rec),
    )?;
    drop(rec);
    Ok(Fit {
        w,
        u,
        h,
        obj,
        report,
    })
}

fn dense_views<'a>(xs: &'a [Vec<f64>], m: usize) -> Vec<View<'a, f64>> {
    xs.iter()
        .map(|x| View::from(Dense::new(x, m, x.len() / m, m).unwrap()))
        .collect()
}

fn params(iters: u32) -> JsnmfParams {
    JsnmfParams {
        iter: NmfParams {
            max_iter: iters,
            tol: 0.0,
            seed: 3,
            ..NmfParams::default()
        },
    }
}

/// `F_s H_s` for source `s`.
fn product(f: &Fit, s: usize, m: usize, k: usize, r: usize, n: usize) -> Vec<f64> {
    let mut out = vec![0.0; m * n];
    for j in 0..n {
        for c in 0..r {
            let hv = f.h[s][c + j * r];
            for i in 0..m {
                let b = if c < k {
                    f.w[i + c * m]
                } else {
                    f.u[s][i + (c - k) * m]
                };
                out[i + j * m] += b * hv;
            }
        }
    }
    out
}

#[test]
fn objective_never_increases_dense_and_csc_two_and_three_sources() {
    let m = 24;
    for (ns, ranks, k) in [
        (vec![30usize, 17], vec![5usize, 6], 3usize),
        (vec![12, 40, 25], vec![4, 4, 7], 2),
        (vec![20, 20], vec![4, 4], 0),
        (vec![20, 33], vec![4, 4], 4),
    ] {
        let xs = sources(m, &ns, 7);
        let scale: f64 = xs.iter().map(|x| half_sq(x)).sum::<f64>() * 10.0;
        let csc: Vec<CscOwned> = xs.iter().map(|x| to_csc(x, m, x.len() / m)).collect();
        let dense = dense_views(&xs, m);
        let sparse: Vec<View<'_, f64>> = csc
            .iter()
            .zip(&ns)
            .map(|(c, &n)| View::from(Csc::new(m, n, &c.col_ptr, &c.row_idx, &c.values).unwrap()))
            .collect();
        let a = run(&dense, k, &ranks, None, &params(60), None).unwrap();
        let b = run(&sparse, k, &ranks, None, &params(60), None).unwrap();
        assert_monotone(
            &a.obj,
            1e-10 * scale,
            &format!("dense S={} K={k}", ns.len()),
        );
        assert_monotone(&b.obj, 1e-10 * scale, &format!("csc S={} K={k}", ns.len()));
        assert!(a.obj[60] < 0.8 * a.obj[0], "{:?}", (a.obj[0], a.obj[60]));
        // CSC equals dense (the products' summation orders differ).
        assert!(max_rel_diff(&a.w, &b.w) < 1e-9);
        for s in 0..ns.len() {
            assert!(max_rel_diff(&a.h[s], &b.h[s]) < 1e-9);
        }
        // The report is the directly computed objective (default λ_s).
        let x1 = half_sq(&xs[0]);
        let direct: f64 = (0..ns.len())
            .map(|s| {
                let p = product(&a, s, m, k, ranks[s], ns[s]);
                let lam = x1 / half_sq(&xs[s]);
                lam * 0.5
                    * xs[s]
                        .iter()
                        .zip(&p)
                        .map(|(x, y)| (x - y).powi(2))
                        .sum::<f64>()
            })
            .sum();
        let reported = a.report.objective.total;
        assert!(
            (direct - reported).abs() <= 1e-9 * scale,
            "{direct} vs {reported}"
        );
        assert_eq!(a.report.objective.reconstruction(), reported);
        // Columns of W and U_s have unit norm after every sweep.
        for c in 0..k {
            let n2: f64 = a.w[c * m..(c + 1) * m].iter().map(|x| x * x).sum();
            assert!((n2 - 1.0).abs() < 1e-12 || n2 == 0.0);
        }
    }
}

/// K = 0 is independent NMFs: from the same start and with ε = 0, the products
/// `U_s H_s` equal NMF's `U V` of each source (the column normalisation only
/// rescales the factors: the multiplicative steps are equivariant to it).
#[test]
fn k_zero_is_independent_nmfs() {
    let m = 15;
    let ns = [21usize, 9];
    let xs = sources(m, &ns, 11);
    let dense = dense_views(&xs, m);
    let r = 4;
    let mut g = Lcg(5);
    let u0: Vec<Vec<f64>> = ns
        .iter()
        .map(|_| (0..m * r).map(|_| g.uniform()).collect())
        .collect();
    let h0: Vec<Vec<f64>> = ns
        .iter()
        .map(|&n| (0..r * n).map(|_| g.uniform()).collect())
        .collect();
    let mut p = params(25);
    p.iter.init = Init::Given;
    p.iter.eps = 0.0;
    let j = run(&dense, 0, &[r, r], None, &p, Some((&[], &u0, &h0))).unwrap();
    for s in 0..2 {
        let n = ns[s];
        let np = NmfParams {
            max_iter: 25,
            tol: 0.0,
            eps: 0.0,
            init: Init::Given,
            ..NmfParams::default()
        };
        let (mut u, mut v) = (u0[s].clone(), h0[s].clone());
        let mut w = vec![0u8; nmf::fit_workspace::<f64>(dense[s].shape(), r, &np).unwrap()];
        nmf::fit(dense[s], r, &np, &mut u, &mut v, &mut w, None).unwrap();
        let mut uv = vec![0.0; m * n];
        for jj in 0..n {
            for c in 0..r {
                for i in 0..m {
                    uv[i + jj * m] += u[i + c * m] * v[c + jj * r];
                }
            }
        }
        let js = product(&j, s, m, 0, r, n);
        assert!(
            max_rel_diff(&uv, &js) < 1e-10,
            "source {s}: {}",
            max_rel_diff(&uv, &js)
        );
    }
}

#[test]
fn bad_input_is_refused_with_outputs_untouched() {
    let m = 10;
    let xs = sources(m, &[8, 6], 2);
    let dense = dense_views(&xs, m);
    let ranks = [3usize, 4];
    let k = 2;
    let p = params(5);
    let need = jsnmf::fit_workspace::<f64>(dense.iter().map(|x| x.shape()), k, &ranks, &p).unwrap();
    let check = |vs: &[View<'_, f64>],
                 k: usize,
                 ranks: &[usize],
                 lambda: Option<&[f64]>,
                 p: &JsnmfParams,
                 wb: usize,
                 want: Error| {
        let mut w = vec![7.0; m * k];
        let mut u: Vec<Vec<f64>> = ranks
            .iter()
            .map(|&r| vec![7.0; m * r.saturating_sub(k)])
            .collect();
        let mut h: Vec<Vec<f64>> = vs
            .iter()
            .zip(ranks)
            .map(|(x, &r)| vec![7.0; r * x.cols()])
            .collect();
        let mut work = vec![0u8; wb];
        let mut ur: Vec<&mut [f64]> = u.iter_mut().map(|x| &mut x[..]).collect();
        let mut hr: Vec<&mut [f64]> = h.iter_mut().map(|x| &mut x[..]).collect();
        let r = jsnmf::fit(
            vs,
            k,
            ranks,
            lambda,
            p,
            &mut w,
            &mut ur[..],
            &mut hr[..],
            &mut work,
            None,
        );
        assert_eq!(r.err(), Some(want));
        assert!(w.iter().all(|&x| x == 7.0));
        assert!(u.iter().chain(&h).all(|b| b.iter().all(|&x| x == 7.0)));
    };
    check(
        &dense,
        k,
        &ranks,
        None,
        &p,
        need - 1,
        Error::WorkspaceTooSmall,
    );
    check(&dense, 5, &ranks, None, &p, need, Error::BadRank);
    check(
        &dense,
        k,
        &ranks[..1],
        None,
        &p,
        need,
        Error::DimensionMismatch,
    );
    check(
        &dense,
        k,
        &ranks,
        Some(&[1.0, -1.0]),
        &p,
        need,
        Error::BadParameter,
    );
    let mut bounded = p;
    bounded.iter.vmax = 1.0;
    check(&dense, k, &ranks, None, &bounded, need, Error::BadParameter);
    let other = vec![1.0; 9 * 6];
    let mixed = [dense[0], View::from(Dense::new(&other, 9, 6, 9).unwrap())];
    check(&mixed, k, &ranks, None, &p, need, Error::DimensionMismatch);
    let mut neg = xs[1].clone();
    neg[3] = -1.0;
    let with_neg = [dense[0], View::from(Dense::new(&neg, m, 6, m).unwrap())];
    check(&with_neg, k, &ranks, None, &p, need, Error::NegativeInput);
}

/// `(status, W, U_s, H_s, objective trace)` of a fit in precision `T`.
type Got<T> = (
    Result<Report, Error>,
    Vec<T>,
    Vec<Vec<T>>,
    Vec<Vec<T>>,
    Vec<f64>,
);

/// [`Got`] of a fit in precision `T` (outputs start at 7).
fn fit_any<T: mvnmf::Real>(
    xs: &[Vec<T>],
    m: usize,
    k: usize,
    ranks: &[usize],
    lambda: Option<&[f64]>,
) -> Got<T> {
    let vs: Vec<View<'_, T>> = xs
        .iter()
        .map(|x| View::from(Dense::new(x, m, x.len() / m, m).unwrap()))
        .collect();
    let p = params(60);
    let need = jsnmf::fit_workspace::<T>(vs.iter().map(|x| x.shape()), k, ranks, &p).unwrap();
    let seven = T::from_f64(7.0);
    let mut w = vec![seven; m * k];
    let mut u: Vec<Vec<T>> = ranks.iter().map(|&r| vec![seven; m * (r - k)]).collect();
    let mut h: Vec<Vec<T>> = vs
        .iter()
        .zip(ranks)
        .map(|(x, &r)| vec![seven; r * x.cols()])
        .collect();
    let mut obj = vec![];
    let mut rec = recorder(&mut obj);
    let mut ur: Vec<&mut [T]> = u.iter_mut().map(|x| &mut x[..]).collect();
    let mut hr: Vec<&mut [T]> = h.iter_mut().map(|x| &mut x[..]).collect();
    let r = jsnmf::fit(
        &vs[..],
        k,
        ranks,
        lambda,
        &p,
        &mut w,
        &mut ur[..],
        &mut hr[..],
        &mut vec![0u8; need],
        Some(&mut rec),
    );
    drop(rec);
    (r, w, u, h, obj)
}

/// E4 (issue 31): `λ = {1e308, 1e-308}` gave OK with non-finite factors; now
/// refused (`BadParameter`: `Σ λ_s ½‖X_s‖²` above 2^999), outputs untouched;
/// weights far apart inside the bound (`{1e290, 1e-308}`) are fitted: finite,
/// monotone. `f32` sources near `1e30` gave OK with non-finite factors; now
/// refused (`InputTooLarge`: `½‖X_s‖²` above 2^103), and near `1e14` fitted.
#[test]
fn issue31_e4_weights_and_single_precision_data_have_a_bound() {
    let m = 7;
    let xs: Vec<Vec<f64>> = sources(m, &[9, 6], 10)
        .into_iter()
        .map(|x| x.iter().map(|a| a + 0.05).collect())
        .collect();
    let (k, ranks) = (1, [2usize, 3]);
    let untouched = |got: &Got<f32>| {
        got.1
            .iter()
            .chain(got.2.iter().flatten())
            .chain(got.3.iter().flatten())
            .all(|&a| a == 7.0)
    };
    let fitted = |r: &Result<Report, Error>, outs: Vec<f64>, obj: &[f64], what: &str| {
        let r = r.unwrap_or_else(|e| panic!("{what}: {e:?}"));
        assert!(
            outs.iter().all(|a| a.is_finite()),
            "{what}: non-finite factor"
        );
        assert!(
            r.objective.total.is_finite() && obj.iter().all(|o| o.is_finite()),
            "{what}"
        );
        assert_monotone(obj, 1e-12 * obj[0].abs(), what);
        assert!(obj[obj.len() - 1] < obj[0], "{what}");
    };
    let flat = |w: &[f64], u: &[Vec<f64>], h: &[Vec<f64>]| -> Vec<f64> {
        w.iter()
            .chain(u.iter().flatten())
            .chain(h.iter().flatten())
            .copied()
            .collect()
    };
    let got = fit_any(&xs, m, k, &ranks, Some(&[1e308, 1e-308]));
    assert_eq!(got.0.err(), Some(Error::BadParameter));
    assert!(flat(&got.1, &got.2, &got.3).iter().all(|&a| a == 7.0));
    for lam in [[1e290, 1e-308], [1e-308, 1e290], [1e-300, 1e-300]] {
        let got = fit_any(&xs, m, k, &ranks, Some(&lam));
        fitted(
            &got.0,
            flat(&got.1, &got.2, &got.3),
            &got.4,
            &format!("lambda {lam:?}"),
        );
    }
    let at = |c: f64| -> Vec<Vec<f32>> {
        xs.iter()
            .map(|x| x.iter().map(|&a| (a * c) as f32).collect())
            .collect()
    };
    for c in [1e30, 1e20] {
        let got = fit_any(&at(c), m, k, &ranks, None);
        assert_eq!(got.0.err(), Some(Error::InputTooLarge), "f32 {c:e}");
        assert!(untouched(&got), "f32 {c:e}: outputs written");
    }
    // λ times f32 data: the weighted sum is bounded in single precision too.
    let got = fit_any(&at(1.0), m, k, &ranks, Some(&[1e35, 1.0]));
    assert_eq!(got.0.err(), Some(Error::BadParameter));
    assert!(untouched(&got));
    for c in [1e14, 1.0] {
        let got = fit_any(&at(c), m, k, &ranks, None);
        let wide = |v: &[f32]| -> Vec<f64> { v.iter().map(|&a| a as f64).collect() };
        let u: Vec<Vec<f64>> = got.2.iter().map(|x| wide(x)).collect();
        let h: Vec<Vec<f64>> = got.3.iter().map(|x| wide(x)).collect();
        // f32 rounding: the objective may wobble at its own precision.
        let r = got.0.unwrap();
        assert!(
            flat(&wide(&got.1), &u, &h).iter().all(|a| a.is_finite()),
            "f32 {c:e}"
        );
        assert!(r.objective.total.is_finite(), "f32 {c:e}");
        assert_monotone(&got.4, 1e-5 * got.4[0].abs(), &format!("f32 {c:e}"));
    }
}

/// Issue 31 (JSNMF on subnormal data): sources near `1e-161`, whose `½‖X_s‖²`
/// is subnormal (`1e-320`) or underflows to 0, with weights up to `1e244`:
/// the objective rose at iteration 1–2 (the parts of the expanded objective had
/// 1–4 significant digits) and the guard `ε` froze the updates. With the
/// per-source power-of-two scale (module docs, "Scale"): `Ok`, finite, an
/// objective that never rises and falls as the same data's does at scale 1;
/// in `f32` the same for data near `1e-30`.
#[test]
fn issue31_jsnmf_subnormal_sources_and_extreme_weights() {
    let m = 7;
    let xs: Vec<Vec<f64>> = sources(m, &[9, 6], 10)
        .into_iter()
        .map(|x| x.iter().map(|a| a + 0.05).collect())
        .collect();
    let (k, ranks) = (1, [2usize, 3]);
    let at = |c: [f64; 2]| -> Vec<Vec<f64>> {
        xs.iter()
            .zip(c)
            .map(|(x, c)| x.iter().map(|&a| a * c).collect())
            .collect()
    };
    let unit = fit_any(&xs, m, k, &ranks, None);
    let fall = unit.4[unit.4.len() - 1] / unit.4[0];
    assert!(fall < 0.9, "unit data: {fall}");
    let cases: [([f64; 2], Option<[f64; 2]>); 4] = [
        ([4.8e-162, 2.4e-161], Some([1e-82, 1e208])),
        ([3.6e-162, 5.3e-165], Some([1e33, 1e244])),
        ([3.6e-162, 5.3e-165], None),
        ([1e-300, 1e-310], Some([1e300, 1e-5])),
    ];
    for (c, lam) in cases {
        let what = format!("sources at {c:?}, lambda {lam:?}");
        let got = fit_any(&at(c), m, k, &ranks, lam.as_ref().map(|l| &l[..]));
        let r = got.0.unwrap_or_else(|e| panic!("{what}: {e:?}"));
        assert!(
            got.1
                .iter()
                .chain(got.2.iter().flatten())
                .chain(got.3.iter().flatten())
                .all(|a| a.is_finite()),
            "{what}: non-finite factor"
        );
        let obj = &got.4;
        assert!(r.objective.total.is_finite() && obj[0] > 0.0, "{what}");
        assert_monotone(obj, 1e-12 * obj[0], &what);
        // The fit moves (before: frozen from iteration 2 on).
        assert!(obj[obj.len() - 1] < 0.9 * obj[0], "{what}: {obj:?}");
    }
    // Single precision: float data near 1e-30 (½‖X‖² near 1e-60 is 0 in f32
    // units and far below the guard).
    let xf: Vec<Vec<f32>> = xs
        .iter()
        .map(|x| x.iter().map(|&a| (a * 1e-30) as f32).collect())
        .collect();
    let got = fit_any(&xf, m, k, &ranks, None);
    let r = got.0.unwrap();
    assert!(r.objective.total.is_finite());
    assert!(got
        .1
        .iter()
        .chain(got.3.iter().flatten())
        .all(|a| a.is_finite()));
    assert_monotone(&got.4, 1e-5 * got.4[0], "f32 1e-30");
    assert!(
        got.4[got.4.len() - 1] < 0.9 * got.4[0],
        "f32 1e-30: {:?}",
        got.4
    );
}

/// Issue 31 (fuzz seed 0x7000ada under `MVNMF_FUZZ_OPEN=1`): `f32` sources of
/// subnormal float data (below `1.2e-38`, down to a few ulps of the smallest
/// subnormal). The products `X_s H̃_sᵀ` and `F_sᵀ X_s` were formed on the caller's
/// data and scaled after: subnormal, a few significant bits, and the objective
/// rose. Now the upward part of the per-source scale goes onto the other factor
/// before the product (module docs, "Scale"): `Ok`, finite, never rising at
/// float's precision, and falling as the same data's does near 1.
#[test]
fn issue31_f32_subnormal_sources_are_fitted() {
    let m = 7;
    let xs: Vec<Vec<f64>> = sources(m, &[9, 6], 10)
        .into_iter()
        .map(|x| x.iter().map(|a| a + 0.05).collect())
        .collect();
    let (k, ranks) = (1, [2usize, 3]);
    for c in [[1e-39, 1e-40], [1e-40, 1e-42], [3e-43, 3e-43]] {
        let what = format!("f32 sources at {c:?}");
        let xf: Vec<Vec<f32>> = xs
            .iter()
            .zip(c)
            .map(|(x, c)| x.iter().map(|&a| (a * c) as f32).collect())
            .collect();
        assert!(xf.iter().flatten().all(|a| !a.is_normal() || *a == 0.0));
        let got = fit_any(&xf, m, k, &ranks, None);
        let r = got.0.unwrap_or_else(|e| panic!("{what}: {e:?}"));
        assert!(r.objective.total.is_finite(), "{what}");
        assert!(
            got.1
                .iter()
                .chain(got.2.iter().flatten())
                .chain(got.3.iter().flatten())
                .all(|a| a.is_finite()),
            "{what}: non-finite factor"
        );
        let obj = &got.4;
        assert!(obj[0] > 0.0, "{what}");
        assert_monotone(obj, 1e-5 * obj[0], &what);
        assert!(obj[obj.len() - 1] < 0.9 * obj[0], "{what}: {obj:?}");
    }
}
