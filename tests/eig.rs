//! The dense symmetric eigensolver (`mvnmf::linalg::eig`) against nalgebra's
//! `SymmetricEigen` as the oracle (issue 14): eigenvalues, eigenvectors up to
//! sign (eigenspaces for repeated eigenvalues), the scaled residual
//! `‖AQ − QΛ‖₁ / (n·ε·‖A‖₁)` and orthogonality `‖QᵀQ − I‖₁ / (n·ε)` (both
//! computed with compensated dot products, so they measure the solver and not
//! the check), on random, ill-conditioned, clustered, diagonal and tridiagonal
//! matrices; bad input statuses with the outputs untouched; a workspace one
//! byte short. Run with `--nocapture` to see the largest values observed.

#![allow(clippy::needless_range_loop)] // index loops read like the formulas

mod common;

use common::Lcg;
use mvnmf::linalg::eig::{sym_eig, sym_eig_workspace};
use mvnmf::Error;
use nalgebra::DMatrix;
use std::sync::Mutex;

const EPS: f64 = f64::EPSILON;
/// Bound asserted on both scaled measures.
const BOUND: f64 = 10.0;

/// Largest scaled residual and orthogonality seen (printed by `report`).
static WORST: Mutex<(f64, f64)> = Mutex::new((0.0, 0.0));

/// `a·b + c` exactly split: `(s, e)` with `s + e = a·b` (TwoProd by FMA).
fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, a.mul_add(b, -p))
}

fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let z = s - a;
    (s, (a - (s - z)) + (b - z))
}

/// `Σ x_i y_i` in twice the working precision (Ogita–Rump–Oishi Dot2).
fn dot2(x: impl IntoIterator<Item = (f64, f64)>) -> f64 {
    let (mut s, mut c) = (0.0, 0.0);
    for (a, b) in x {
        let (p, pe) = two_prod(a, b);
        let (t, se) = two_sum(s, p);
        s = t;
        c += pe + se;
    }
    s + c
}

/// `‖A‖_F` without overflow or underflow (nalgebra's `norm` squares the entries).
fn frobenius(a: &[f64]) -> f64 {
    let amax = a.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    if amax == 0.0 {
        return 0.0;
    }
    amax * a
        .iter()
        .map(|x| (x / amax) * (x / amax))
        .sum::<f64>()
        .sqrt()
}

fn one_norm(a: &[f64], n: usize) -> f64 {
    (0..n)
        .map(|j| a[j * n..(j + 1) * n].iter().map(|x| x.abs()).sum::<f64>())
        .fold(0.0, f64::max)
}

/// The full symmetric matrix from its lower triangle.
fn symmetrize(a: &mut [f64], n: usize) {
    for j in 0..n {
        for i in 0..j {
            a[i + j * n] = a[j + i * n];
        }
    }
}

/// `(‖AQ − QΛ‖₁ / (n ε ‖A‖₁), ‖QᵀQ − I‖₁ / (n ε))`.
fn measures(a: &[f64], n: usize, q: &[f64], w: &[f64]) -> (f64, f64) {
    let anorm = one_norm(a, n).max(f64::MIN_POSITIVE);
    let (mut res, mut orth) = (0.0f64, 0.0f64);
    for j in 0..n {
        let (mut rc, mut oc) = (0.0, 0.0);
        for i in 0..n {
            let aq = dot2(
                (0..n)
                    .map(|k| (a[i + k * n], q[k + j * n]))
                    .chain([(-q[i + j * n], w[j])]),
            );
            rc += aq.abs();
            let qq = dot2((0..n).map(|k| (q[k + i * n], q[k + j * n])));
            oc += (qq - if i == j { 1.0 } else { 0.0 }).abs();
        }
        res = res.max(rc);
        orth = orth.max(oc);
    }
    let nf = n as f64;
    (res / (nf * EPS * anorm), orth / (nf * EPS))
}

/// Runs the solver on `a` (full symmetric, column-major), checks everything
/// against nalgebra and returns `(Q, Λ)`.
fn solve_and_check(name: &str, a: &[f64], n: usize) -> (Vec<f64>, Vec<f64>) {
    // Only the lower triangle is read: poison the strict upper one.
    let mut q = a.to_vec();
    for j in 0..n {
        for i in 0..j {
            q[i + j * n] = f64::NAN;
        }
    }
    let mut w = vec![0.0; n];
    let mut ws = vec![0u8; sym_eig_workspace::<f64>(n).unwrap()];
    sym_eig(&mut q, n, &mut w, &mut ws).unwrap();
    assert!(w.windows(2).all(|p| p[0] <= p[1]), "{name}: not ascending");

    let (res, orth) = measures(a, n, &q, &w);
    {
        let mut worst = WORST.lock().unwrap();
        worst.0 = worst.0.max(res);
        worst.1 = worst.1.max(orth);
    }
    eprintln!("{name:<28} n={n:<4} residual {res:6.3}  orthogonality {orth:6.3}");
    assert!(res < BOUND, "{name}: scaled residual {res}");
    assert!(orth < BOUND, "{name}: orthogonality {orth}");

    // Sign convention: each column's largest-magnitude component is positive.
    for j in 0..n {
        let col = &q[j * n..(j + 1) * n];
        let mut best = 0;
        for (i, x) in col.iter().enumerate() {
            if x.abs() > col[best].abs() {
                best = i;
            }
        }
        assert!(col[best] > 0.0, "{name}: sign of column {j}");
    }

    // nalgebra: eigenvalues to n·ε·‖A‖.
    let m = DMatrix::from_column_slice(n, n, a);
    let se = m.clone().symmetric_eigen();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&x, &y| se.eigenvalues[x].total_cmp(&se.eigenvalues[y]));
    let anorm = frobenius(a);
    for (i, &k) in order.iter().enumerate() {
        let d = (w[i] - se.eigenvalues[k]).abs();
        assert!(
            d <= 8.0 * n as f64 * EPS * anorm.max(f64::MIN_POSITIVE),
            "{name}: eigenvalue {i}: {} vs nalgebra {}",
            w[i],
            se.eigenvalues[k]
        );
    }
    // Eigenvectors up to sign where the eigenvalue is separated (error bound
    // ~ ε‖A‖/gap); the projector onto each cluster of close eigenvalues otherwise.
    let sep = 1e-6 * anorm;
    let mut s = 0;
    while s < n {
        let mut e = s + 1;
        while e < n && w[e] - w[e - 1] <= sep {
            e += 1;
        }
        let gap = [
            if s > 0 {
                w[s] - w[s - 1]
            } else {
                f64::INFINITY
            },
            if e < n {
                w[e] - w[e - 1]
            } else {
                f64::INFINITY
            },
        ]
        .into_iter()
        .fold(f64::INFINITY, f64::min);
        let tol = 64.0 * n as f64 * EPS * anorm / gap.min(anorm.max(f64::MIN_POSITIVE));
        if e == s + 1 {
            let k = order[s];
            let r = se.eigenvectors.column(k);
            let dot: f64 = (0..n).map(|i| q[i + s * n] * r[i]).sum();
            let sign = dot.signum();
            let diff = (0..n)
                .map(|i| (q[i + s * n] - sign * r[i]).abs())
                .fold(0.0, f64::max);
            assert!(
                diff <= tol.max(1e-14),
                "{name}: eigenvector {s}: {diff} (tol {tol})"
            );
        } else {
            // P = Σ q qᵀ over the cluster, the same for both.
            for i in 0..n {
                for j in 0..n {
                    let p: f64 = (s..e).map(|c| q[i + c * n] * q[j + c * n]).sum();
                    let pr: f64 = order[s..e]
                        .iter()
                        .map(|&c| se.eigenvectors[(i, c)] * se.eigenvectors[(j, c)])
                        .sum();
                    assert!(
                        (p - pr).abs() <= tol.max(1e-13),
                        "{name}: cluster projector"
                    );
                }
            }
        }
        s = e;
    }
    (q, w)
}

fn random_symmetric(n: usize, seed: u64) -> Vec<f64> {
    let mut g = Lcg(seed);
    let mut a = vec![0.0; n * n];
    for j in 0..n {
        for i in j..n {
            a[i + j * n] = 2.0 * g.uniform() - 1.0;
        }
    }
    symmetrize(&mut a, n);
    a
}

/// A random orthogonal matrix (Q of the QR factorisation of a random one).
fn random_orthogonal(n: usize, seed: u64) -> DMatrix<f64> {
    let mut g = Lcg(seed);
    let m = DMatrix::from_fn(n, n, |_, _| 2.0 * g.uniform() - 1.0);
    m.qr().q()
}

/// `Q diag(lam) Qᵀ`, made exactly symmetric.
fn with_spectrum(lam: &[f64], seed: u64) -> Vec<f64> {
    let n = lam.len();
    let q = random_orthogonal(n, seed);
    let a = &q * DMatrix::from_diagonal(&nalgebra::DVector::from_column_slice(lam)) * q.transpose();
    let mut v = a.as_slice().to_vec();
    symmetrize(&mut v, n);
    v
}

#[test]
fn random_matrices() {
    for &n in &[1, 2, 3, 4, 7, 16, 50, 200] {
        let a = random_symmetric(n, 100 + n as u64);
        solve_and_check("random", &a, n);
    }
}

#[test]
fn ill_conditioned() {
    for &n in &[3, 50, 200] {
        // Eigenvalues log-spaced over 1e-14..1, some negative.
        let lam: Vec<f64> = (0..n)
            .map(|i| {
                let t = if n > 1 {
                    i as f64 / (n - 1) as f64
                } else {
                    0.0
                };
                let v = 10f64.powf(-14.0 * t);
                if i % 3 == 1 {
                    -v
                } else {
                    v
                }
            })
            .collect();
        let a = with_spectrum(&lam, 7 + n as u64);
        let (_, w) = solve_and_check("ill-conditioned 1e-14..1", &a, n);
        // The large eigenvalues to full relative accuracy.
        let mut sorted = lam.clone();
        sorted.sort_by(f64::total_cmp);
        for (x, y) in w.iter().zip(&sorted) {
            assert!((x - y).abs() <= 8.0 * n as f64 * EPS, "{x} vs {y}");
        }
    }
}

#[test]
fn repeated_eigenvalues() {
    for &n in &[3, 50, 200] {
        let lam: Vec<f64> = (0..n).map(|i| [1.0, 2.0, -0.5][i % 3]).collect();
        let a = with_spectrum(&lam, 31 + n as u64);
        let (_, w) = solve_and_check("repeated (3 values)", &a, n);
        let mut sorted = lam.clone();
        sorted.sort_by(f64::total_cmp);
        for (x, y) in w.iter().zip(&sorted) {
            assert!((x - y).abs() <= 8.0 * n as f64 * EPS * 2.0, "{x} vs {y}");
        }
    }
    // A multiple of the identity, and rank one.
    for &n in &[2, 50] {
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            a[i + i * n] = 3.0;
        }
        let (q, w) = solve_and_check("3·I", &a, n);
        assert!(w.iter().all(|&x| x == 3.0));
        assert!(q
            .iter()
            .enumerate()
            .all(|(k, &x)| x == if k % (n + 1) == 0 { 1.0 } else { 0.0 }));
        let v: Vec<f64> = (0..n).map(|i| 1.0 + i as f64).collect();
        let mut a = vec![0.0; n * n];
        for j in 0..n {
            for i in 0..n {
                a[i + j * n] = v[i] * v[j];
            }
        }
        solve_and_check("rank one", &a, n);
    }
}

#[test]
fn diagonal_and_tridiagonal() {
    for &n in &[1, 2, 3, 50, 200] {
        let mut g = Lcg(5 + n as u64);
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            a[i + i * n] = 4.0 * g.uniform() - 2.0;
        }
        let (_, w) = solve_and_check("diagonal", &a, n);
        let mut d: Vec<f64> = (0..n).map(|i| a[i + i * n]).collect();
        d.sort_by(f64::total_cmp);
        assert_eq!(
            w, d,
            "a diagonal matrix's eigenvalues are its diagonal, exactly"
        );

        // Random tridiagonal.
        let mut t = vec![0.0; n * n];
        for i in 0..n {
            t[i + i * n] = 2.0 * g.uniform() - 1.0;
            if i + 1 < n {
                let x = 2.0 * g.uniform() - 1.0;
                t[i + 1 + i * n] = x;
                t[i + (i + 1) * n] = x;
            }
        }
        solve_and_check("tridiagonal", &t, n);

        // The 1-D Laplacian: λ_k = 2 − 2cos(kπ/(n+1)).
        let mut l = vec![0.0; n * n];
        for i in 0..n {
            l[i + i * n] = 2.0;
            if i + 1 < n {
                l[i + 1 + i * n] = -1.0;
                l[i + (i + 1) * n] = -1.0;
            }
        }
        let (_, w) = solve_and_check("1-D Laplacian", &l, n);
        for (k, x) in w.iter().enumerate() {
            let want = 2.0 - 2.0 * (((k + 1) as f64) * std::f64::consts::PI / (n + 1) as f64).cos();
            assert!(
                (x - want).abs() <= 8.0 * n as f64 * EPS * 4.0,
                "k {k}: {x} vs {want}"
            );
        }
    }
    // Wilkinson's W21+: pairs of nearly equal eigenvalues.
    let n = 21;
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        a[i + i * n] = (10.0 - i as f64).abs();
        if i + 1 < n {
            a[i + 1 + i * n] = 1.0;
            a[i + (i + 1) * n] = 1.0;
        }
    }
    solve_and_check("Wilkinson W21+", &a, n);
}

#[test]
fn extreme_scales() {
    // Eigenvectors do not depend on the scale; eigenvalues scale exactly
    // (powers of two) unless they leave the normal range.
    let n = 30;
    let a = random_symmetric(n, 77);
    let (q0, w0) = solve_and_check("scale 1", &a, n);
    for &s in &[
        2f64.powi(-1000),
        2f64.powi(-600),
        2f64.powi(600),
        2f64.powi(1000),
    ] {
        let b: Vec<f64> = a.iter().map(|x| x * s).collect();
        let (q, w) = solve_and_check("scaled by 2^±600/1000", &b, n);
        assert_eq!(q, q0);
        for (x, y) in w.iter().zip(&w0) {
            assert_eq!(*x, y * s);
        }
    }
    // Entries near the largest double: fine while the Frobenius norm is finite.
    let b: Vec<f64> = a.iter().map(|x| x * 1e306).collect();
    solve_and_check("entries ~1e306", &b, n);
    // A graded matrix: diagonal 1, 1e-8, ..., 1e-120 with couplings.
    let n = 16;
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        a[i + i * n] = 10f64.powi(-8 * i as i32);
        if i + 1 < n {
            let x = 0.5 * 10f64.powi(-8 * i as i32 - 4);
            a[i + 1 + i * n] = x;
            a[i + (i + 1) * n] = x;
        }
    }
    solve_and_check("graded 1..1e-120", &a, n);
}

#[test]
fn deterministic_and_any_alignment() {
    let n = 40;
    let a = random_symmetric(n, 9);
    let need = sym_eig_workspace::<f64>(n).unwrap();
    let mut raw = vec![0u8; need + 64];
    let mut first: Option<(Vec<f64>, Vec<f64>)> = None;
    for shift in [0, 1, 7, 33] {
        let mut q = a.clone();
        let mut w = vec![0.0; n];
        sym_eig(&mut q, n, &mut w, &mut raw[shift..shift + need]).unwrap();
        match &first {
            None => first = Some((q, w)),
            Some((q0, w0)) => {
                assert_eq!(
                    q0.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                    q.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
                );
                assert_eq!(w0, &w);
            }
        }
    }
}

#[test]
fn bad_inputs_leave_outputs_untouched() {
    let n = 4;
    let a = random_symmetric(n, 3);
    let need = sym_eig_workspace::<f64>(n).unwrap();
    let mut ws = vec![0u8; need];
    let sentinel = -123.25;
    let run = |a_in: &mut Vec<f64>, n: usize, wlen: usize, ws: &mut [u8]| {
        let before = a_in.clone();
        let mut w = vec![sentinel; wlen];
        let r = sym_eig(a_in, n, &mut w, ws);
        assert!(w.iter().all(|&x| x == sentinel), "eigenvalues written");
        assert_eq!(
            before.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            a_in.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            "matrix written"
        );
        r
    };
    assert_eq!(run(&mut vec![], 0, 0, &mut ws), Err(Error::ZeroDimension));
    assert_eq!(sym_eig_workspace::<f64>(0), Err(Error::ZeroDimension));
    assert_eq!(
        sym_eig_workspace::<f64>(usize::MAX),
        Err(Error::SizeOverflow)
    );
    assert_eq!(
        run(&mut a[..15].to_vec(), n, n, &mut ws),
        Err(Error::DimensionMismatch)
    );
    assert_eq!(
        run(&mut a.clone(), n, n + 1, &mut ws),
        Err(Error::DimensionMismatch)
    );
    assert_eq!(
        run(&mut a.clone(), n, n - 1, &mut ws),
        Err(Error::DimensionMismatch)
    );
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let mut b = a.clone();
        b[2 + n] = bad; // lower triangle
        assert_eq!(run(&mut b, n, n, &mut ws), Err(Error::NonFiniteInput));
        let mut b = a.clone();
        b[3 + 3 * n] = bad; // diagonal
        assert_eq!(run(&mut b, n, n, &mut ws), Err(Error::NonFiniteInput));
    }
    // Eigenvalues that could not be represented.
    let mut b = vec![f64::MAX; n * n];
    assert_eq!(run(&mut b, n, n, &mut ws), Err(Error::NonFiniteInput));
    // A workspace one byte short, and none at all.
    assert_eq!(
        run(&mut a.clone(), n, n, &mut ws[..need - 1]),
        Err(Error::WorkspaceTooSmall)
    );
    assert_eq!(
        run(&mut a.clone(), n, n, &mut []),
        Err(Error::WorkspaceTooSmall)
    );
    // NaN above the diagonal is never read.
    let mut b = a.clone();
    b[n] = f64::NAN;
    let mut w = vec![0.0; n];
    sym_eig(&mut b, n, &mut w, &mut ws).unwrap();
    assert!(w.iter().chain(&b).all(|x| x.is_finite()));
}

#[test]
fn f32_matches_f64() {
    let n = 20;
    let a = random_symmetric(n, 11);
    let mut a32: Vec<f32> = a.iter().map(|&x| x as f32).collect();
    let mut w32 = vec![0.0f32; n];
    let mut ws = vec![0u8; sym_eig_workspace::<f32>(n).unwrap()];
    sym_eig(&mut a32, n, &mut w32, &mut ws).unwrap();
    let a64: Vec<f64> = a.iter().map(|&x| x as f32 as f64).collect();
    let se = DMatrix::from_column_slice(n, n, &a64).symmetric_eigen();
    let mut want: Vec<f64> = se.eigenvalues.iter().copied().collect();
    want.sort_by(f64::total_cmp);
    for (x, y) in w32.iter().zip(&want) {
        assert!(
            (*x as f64 - y).abs() <= 8.0 * n as f64 * f32::EPSILON as f64 * 10.0,
            "{x} vs {y}"
        );
    }
}

/// Runs last in name order within this binary's output only by chance; the
/// bound is asserted per case, this prints the overall maxima.
#[test]
fn z_report_worst() {
    random_matrices();
    ill_conditioned();
    repeated_eigenvalues();
    diagonal_and_tridiagonal();
    extreme_scales();
    let w = WORST.lock().unwrap();
    eprintln!(
        "max scaled residual {:.3}, max orthogonality {:.3} (bound {BOUND})",
        w.0, w.1
    );
    assert!(w.0 < BOUND && w.1 < BOUND);
}
