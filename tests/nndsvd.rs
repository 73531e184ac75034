//! NNDSVD starts (issue 17, item 1): NNDSVD and NNDSVDa equal scikit-learn's
//! `_initialize_nmf` (with the exact truncated SVD; the fixture script says
//! how) to 1e-9 on dense, sparse (CSC) and wide data; the NMF fitted from
//! mvnmf's NNDSVDa start equals scikit-learn's MU fit from its start; several
//! views start as their stack, split; NNDSVDar fills exactly the zeros of
//! NNDSVD with small positive values; bad input is refused with the outputs
//! untouched.

mod common;

use common::*;
use mvnmf::models::nmf::{self, NmfParams};
use mvnmf::steps::{nndsvd, nndsvd_workspace, Nndsvd};
use mvnmf::{Csc, Dense, Error, Init, View};

struct Case {
    name: String,
    m: usize,
    n: usize,
    k: usize,
    x: Vec<f64>,
    w: [Vec<f64>; 2],
    h: [Vec<f64>; 2],
    w_fit: Vec<f64>,
    h_fit: Vec<f64>,
    err_fit: f64,
}

fn load() -> (u32, Vec<Case>) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sklearn_nndsvd.txt"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    let iters: u32 = head[3].parse().unwrap();
    let nums = |l: &str| -> Vec<f64> { l.split_whitespace().map(|t| t.parse().unwrap()).collect() };
    let mut cases = vec![];
    while let Some(l) = lines.next() {
        let t: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(t[0], "case");
        let (m, n, k) = (
            t[2].parse().unwrap(),
            t[3].parse().unwrap(),
            t[4].parse().unwrap(),
        );
        let mut next = || nums(lines.next().unwrap());
        let x = next();
        let (w0, h0, w1, h1) = (next(), next(), next(), next());
        let (w_fit, h_fit) = (next(), next());
        let err_fit = next()[0];
        cases.push(Case {
            name: t[1].to_string(),
            m,
            n,
            k,
            x,
            w: [w0, w1],
            h: [h0, h1],
            w_fit,
            h_fit,
            err_fit,
        });
    }
    (iters, cases)
}

fn start(
    views: &[View<'_, f64>],
    k: usize,
    variant: Nndsvd,
    seed: u64,
) -> Result<(Vec<Vec<f64>>, Vec<f64>), Error> {
    let n = views[0].cols();
    let need = nndsvd_workspace::<f64>(views.iter().map(|v| v.shape()), k)?;
    let mut us: Vec<Vec<f64>> = views.iter().map(|v| vec![0.0; v.rows() * k]).collect();
    let mut v = vec![0.0; k * n];
    {
        let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
        nndsvd(
            views,
            k,
            variant,
            seed,
            &mut refs[..],
            &mut v,
            &mut vec![0u8; need],
        )?;
    }
    Ok((us, v))
}

#[test]
fn nndsvd_and_nndsvda_equal_scikit_learn() {
    let (_, cases) = load();
    for c in &cases {
        let csc = to_csc(&c.x, c.m, c.n);
        for sparse in [false, true] {
            let view = if sparse {
                View::from(Csc::new(c.m, c.n, &csc.col_ptr, &csc.row_idx, &csc.values).unwrap())
            } else {
                View::from(Dense::new(&c.x, c.m, c.n, c.m).unwrap())
            };
            for (i, variant) in [Nndsvd::Plain, Nndsvd::A].into_iter().enumerate() {
                let (u, v) = start(&[view], c.k, variant, 0).unwrap();
                let (du, dv) = (max_rel_diff(&u[0], &c.w[i]), max_rel_diff(&v, &c.h[i]));
                assert!(
                    du < 1e-9 && dv < 1e-9,
                    "{} {variant:?} sparse={sparse}: W {du:e}, H {dv:e}",
                    c.name
                );
                // The zeros of NNDSVD are exactly scikit-learn's.
                if variant == Nndsvd::Plain {
                    let zeros = |a: &[f64]| a.iter().filter(|&&x| x == 0.0).count();
                    assert_eq!(zeros(&u[0]), zeros(&c.w[0]), "{}", c.name);
                    assert_eq!(zeros(&v), zeros(&c.h[0]), "{}", c.name);
                }
            }
        }
    }
}

#[test]
fn nmf_from_nndsvda_equals_scikit_learn_end_to_end() {
    let (iters, cases) = load();
    for c in &cases {
        let view = View::from(Dense::new(&c.x, c.m, c.n, c.m).unwrap());
        let (u0, v0) = start(&[view], c.k, Nndsvd::A, 0).unwrap();
        let p = NmfParams {
            max_iter: iters,
            tol: 0.0,
            eps: 0.0,
            init: Init::Given,
            ..NmfParams::default()
        };
        let mut w = vec![0u8; nmf::fit_workspace::<f64>(view.shape(), c.k, &p).unwrap()];
        let (mut u, mut v) = (u0[0].clone(), v0);
        nmf::fit(view, c.k, &p, &mut u, &mut v, &mut w, None).unwrap();
        let (du, dv) = (max_rel_diff(&u, &c.w_fit), max_rel_diff(&v, &c.h_fit));
        assert!(du < 1e-8 && dv < 1e-8, "{}: W {du:e}, H {dv:e}", c.name);
        let mut r2 = 0.0;
        for j in 0..c.n {
            for i in 0..c.m {
                let y: f64 = (0..c.k).map(|l| u[i + l * c.m] * v[l + j * c.k]).sum();
                r2 += (c.x[i + j * c.m] - y).powi(2);
            }
        }
        let err = (r2 / c.x.iter().map(|x| x * x).sum::<f64>()).sqrt();
        assert!(
            (err - c.err_fit).abs() <= 1e-9 * c.err_fit,
            "{}: {err} vs {}",
            c.name,
            c.err_fit
        );
    }
}

#[test]
fn several_views_start_as_their_stack() {
    let (_, cases) = load();
    let c = &cases[0];
    let m1 = 11;
    let (m2, n) = (c.m - m1, c.n);
    let x1: Vec<f64> = (0..n)
        .flat_map(|j| c.x[j * c.m..j * c.m + m1].to_vec())
        .collect();
    let x2: Vec<f64> = (0..n)
        .flat_map(|j| c.x[j * c.m + m1..(j + 1) * c.m].to_vec())
        .collect();
    let views = [
        View::from(Dense::new(&x1, m1, n, m1).unwrap()),
        View::from(Dense::new(&x2, m2, n, m2).unwrap()),
    ];
    let whole = [View::from(Dense::new(&c.x, c.m, n, c.m).unwrap())];
    for variant in [Nndsvd::Plain, Nndsvd::A, Nndsvd::Ar] {
        let (us, v) = start(&views, c.k, variant, 9).unwrap();
        let (uw, vw) = start(&whole, c.k, variant, 9).unwrap();
        assert_eq!(v, vw);
        for l in 0..c.k {
            assert_eq!(us[0][l * m1..(l + 1) * m1], uw[0][l * c.m..l * c.m + m1]);
            assert_eq!(
                us[1][l * m2..(l + 1) * m2],
                uw[0][l * c.m + m1..(l + 1) * c.m]
            );
        }
    }
}

#[test]
fn nndsvdar_fills_the_zeros_with_small_positive_values() {
    let (_, cases) = load();
    let c = &cases[1];
    let view = View::from(Dense::new(&c.x, c.m, c.n, c.m).unwrap());
    let (u0, v0) = start(&[view], c.k, Nndsvd::Plain, 0).unwrap();
    let (u1, v1) = start(&[view], c.k, Nndsvd::Ar, 3).unwrap();
    let (u2, _) = start(&[view], c.k, Nndsvd::Ar, 3).unwrap();
    let (u3, _) = start(&[view], c.k, Nndsvd::Ar, 4).unwrap();
    assert_eq!(u1, u2);
    assert_ne!(u1, u3);
    let avg = c.x.iter().sum::<f64>() / c.x.len() as f64;
    let mut filled = 0;
    for (a, b) in u0[0].iter().chain(&v0).zip(u1[0].iter().chain(&v1)) {
        if *a == 0.0 {
            assert!(*b >= 0.0 && *b < avg * 0.07, "{b}");
            filled += 1;
        } else {
            assert_eq!(a, b);
        }
    }
    assert!(filled > 0);
}

#[test]
fn bad_input_is_refused_with_outputs_untouched() {
    let x = random_matrix(6, 5, 1.0, 2);
    let view = View::from(Dense::new(&x, 6, 5, 6).unwrap());
    assert_eq!(
        nndsvd_workspace::<f64>([view.shape()], 6),
        Err(Error::BadRank)
    );
    assert_eq!(
        nndsvd_workspace::<f64>([view.shape()], 0),
        Err(Error::BadRank)
    );
    let need = nndsvd_workspace::<f64>([view.shape()], 3).unwrap();
    let mut bad = x.clone();
    bad[4] = -1.0;
    let bview = View::from(Dense::new(&bad, 6, 5, 6).unwrap());
    let (mut u, mut v) = (vec![7.0; 18], vec![7.0; 15]);
    let e = nndsvd(
        &[bview][..],
        3,
        Nndsvd::A,
        0,
        &mut [&mut u[..]][..],
        &mut v,
        &mut vec![0u8; need],
    );
    assert_eq!(e, Err(Error::NegativeInput));
    bad[4] = f64::NAN;
    let bview = View::from(Dense::new(&bad, 6, 5, 6).unwrap());
    let e = nndsvd(
        &[bview][..],
        3,
        Nndsvd::A,
        0,
        &mut [&mut u[..]][..],
        &mut v,
        &mut vec![0u8; need],
    );
    assert_eq!(e, Err(Error::NonFiniteInput));
    let e = nndsvd(
        &[view][..],
        3,
        Nndsvd::A,
        0,
        &mut [&mut u[..]][..],
        &mut v,
        &mut vec![0u8; need - 1],
    );
    assert_eq!(e, Err(Error::WorkspaceTooSmall));
    let e = nndsvd(
        &[view][..],
        3,
        Nndsvd::A,
        0,
        &mut [&mut u[..5]][..],
        &mut v,
        &mut vec![0u8; need],
    );
    assert_eq!(e, Err(Error::DimensionMismatch));
    assert!(u.iter().chain(&v).all(|&a| a == 7.0));
}
