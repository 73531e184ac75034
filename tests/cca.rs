//! Regularised CCA (`mvnmf::similarity::cca`) against a dense computation with
//! nalgebra as the oracle (issue 14): the canonical correlations are the
//! singular values of `T = C_ii^{-1/2} C_ij C_jj^{-1/2}` (to 1e-10 relative);
//! the canonical variables `Φᵀ(x − μ)` have sample covariance `I − reg·ΦᵀΦ`
//! (the identity as reg → 0) and cross-covariance `diag(ρ)`; two views sharing
//! a latent signal get `ρ₁ ≈ 1`; views with more features than items need
//! `reg > 0`; bad inputs give their status with the outputs untouched.

#![allow(clippy::needless_range_loop)] // index loops read like the formulas

mod common;

use common::Lcg;
use mvnmf::similarity::{cca, cca_workspace};
use mvnmf::{Dense, Error};
use nalgebra::DMatrix;

/// A `rows × n` column-major matrix, uniform in (−1, 1).
fn random(rows: usize, n: usize, seed: u64) -> Vec<f64> {
    let mut g = Lcg(seed);
    (0..rows * n).map(|_| 2.0 * g.uniform() - 1.0).collect()
}

/// `C^{-1/2}` by nalgebra's symmetric eigendecomposition.
fn inv_sqrt(c: &DMatrix<f64>) -> DMatrix<f64> {
    let se = c.clone().symmetric_eigen();
    let d = se.eigenvalues.map(|l| 1.0 / l.sqrt());
    &se.eigenvectors * DMatrix::from_diagonal(&d) * se.eigenvectors.transpose()
}

fn centred(x: &[f64], rows: usize, n: usize) -> DMatrix<f64> {
    let mut m = DMatrix::from_column_slice(rows, n, x);
    for r in 0..rows {
        let mu = m.row(r).sum() / n as f64;
        m.row_mut(r).add_scalar_mut(-mu);
    }
    m
}

/// The singular values of `T`, descending, computed densely with nalgebra.
fn oracle_rho(xi: &[f64], di: usize, xj: &[f64], dj: usize, n: usize, reg: f64) -> Vec<f64> {
    let (ci, cj) = (centred(xi, di, n), centred(xj, dj, n));
    let s = 1.0 / (n as f64 - 1.0);
    let cii = &ci * ci.transpose() * s + DMatrix::identity(di, di) * reg;
    let cjj = &cj * cj.transpose() * s + DMatrix::identity(dj, dj) * reg;
    let cij = &ci * cj.transpose() * s;
    let t = inv_sqrt(&cii) * cij * inv_sqrt(&cjj);
    let mut sv: Vec<f64> = t
        .svd(false, false)
        .singular_values
        .iter()
        .copied()
        .collect();
    sv.sort_by(|a, b| b.total_cmp(a));
    sv
}

struct Out {
    phi_i: Vec<f64>,
    phi_j: Vec<f64>,
    rho: Vec<f64>,
    mu_i: Vec<f64>,
    mu_j: Vec<f64>,
}

fn run(
    xi: &[f64],
    di: usize,
    xj: &[f64],
    dj: usize,
    n: usize,
    reg: f64,
    dims: usize,
) -> Result<Out, Error> {
    let vi = Dense::new(xi, di, n, di).unwrap();
    let vj = Dense::new(xj, dj, n, dj).unwrap();
    let mut o = Out {
        phi_i: vec![0.0; di * dims],
        phi_j: vec![0.0; dj * dims],
        rho: vec![0.0; dims],
        mu_i: vec![0.0; di],
        mu_j: vec![0.0; dj],
    };
    let mut ws = vec![0u8; cca_workspace::<f64>(di, dj, n, dims).unwrap()];
    cca(
        &vi,
        &vj,
        reg,
        dims,
        &mut o.phi_i,
        &mut o.phi_j,
        &mut o.rho,
        &mut o.mu_i,
        &mut o.mu_j,
        &mut ws,
    )?;
    Ok(o)
}

/// `Z = Φᵀ(X − μ1ᵀ)` (dims × n).
fn canonical(x: &[f64], d: usize, n: usize, phi: &[f64], mu: &[f64], dims: usize) -> DMatrix<f64> {
    let mut xc = DMatrix::from_column_slice(d, n, x);
    for r in 0..d {
        xc.row_mut(r).add_scalar_mut(-mu[r]);
    }
    DMatrix::from_column_slice(d, dims, phi).transpose() * xc
}

/// Checks ρ against the oracle and the covariance identities; returns ρ.
fn check_case(
    name: &str,
    di: usize,
    dj: usize,
    n: usize,
    reg: f64,
    dims: usize,
    seed: u64,
) -> Vec<f64> {
    let xi = random(di, n, seed);
    let xj: Vec<f64> = {
        // Correlated with xi through a few shared directions.
        let mut g = Lcg(seed + 1);
        let mix: Vec<f64> = (0..dj * di).map(|_| 2.0 * g.uniform() - 1.0).collect();
        let noise = random(dj, n, seed + 2);
        (0..dj * n)
            .map(|k| {
                let (r, q) = (k % dj, k / dj);
                let s: f64 = (0..di).map(|c| mix[r + c * dj] * xi[c + q * di]).sum();
                0.3 * s / di as f64 + noise[k]
            })
            .collect()
    };
    let o = run(&xi, di, &xj, dj, n, reg, dims).unwrap();
    let want = oracle_rho(&xi, di, &xj, dj, n, reg);
    eprintln!("{name}: rho {:?}", &o.rho);
    for k in 0..dims {
        let rel = (o.rho[k] - want[k]).abs() / want[k];
        assert!(
            rel <= 1e-10,
            "{name}: rho[{k}] {} vs nalgebra {} (rel {rel:e})",
            o.rho[k],
            want[k]
        );
        if k > 0 {
            assert!(o.rho[k] <= o.rho[k - 1]);
        }
    }
    // Means.
    for r in 0..di {
        let m: f64 = (0..n).map(|q| xi[r + q * di]).sum::<f64>() / n as f64;
        assert!((m - o.mu_i[r]).abs() <= 1e-15);
    }
    // Covariances of the canonical variables.
    let zi = canonical(&xi, di, n, &o.phi_i, &o.mu_i, dims);
    let zj = canonical(&xj, dj, n, &o.phi_j, &o.mu_j, dims);
    let s = 1.0 / (n as f64 - 1.0);
    let pi = DMatrix::from_column_slice(di, dims, &o.phi_i);
    let pj = DMatrix::from_column_slice(dj, dims, &o.phi_j);
    let want_ii = DMatrix::identity(dims, dims) - pi.transpose() * &pi * reg;
    let want_jj = DMatrix::identity(dims, dims) - pj.transpose() * &pj * reg;
    let cov_ii = &zi * zi.transpose() * s;
    let cov_jj = &zj * zj.transpose() * s;
    let cross = &zi * zj.transpose() * s;
    let e_ii = (&cov_ii - &want_ii).abs().max();
    let e_jj = (&cov_jj - &want_jj).abs().max();
    let e_ij = (&cross - DMatrix::from_diagonal(&nalgebra::DVector::from_column_slice(&o.rho)))
        .abs()
        .max();
    eprintln!("{name}: covariance errors {e_ii:.1e} {e_jj:.1e} cross {e_ij:.1e}");
    assert!(e_ii < 1e-10 && e_jj < 1e-10 && e_ij < 1e-10, "{name}");
    // Sign convention: φ_i's largest-magnitude component positive.
    for k in 0..dims {
        let col = &o.phi_i[k * di..(k + 1) * di];
        let best = col
            .iter()
            .fold(0.0f64, |m, x| if x.abs() > m.abs() { *x } else { m });
        assert!(best > 0.0);
    }
    o.rho
}

#[test]
fn matches_nalgebra_and_covariances() {
    // Both SVD sides (di < dj, di > dj, equal), reg = 0 and reg > 0.
    for &(di, dj, n) in &[
        (5, 7, 200),
        (7, 5, 200),
        (6, 6, 50),
        (1, 3, 10),
        (12, 30, 400),
    ] {
        let dims = di.min(dj);
        for reg in [0.0, 1e-3, 0.1] {
            let name = format!("di {di} dj {dj} n {n} reg {reg}");
            check_case(&name, di, dj, n, reg, dims, (di * 100 + dj * 10 + n) as u64);
        }
        // Fewer directions than possible: the top ones, the same values.
        if dims > 1 {
            let all = check_case("all", di, dj, n, 0.01, dims, 5);
            let top = check_case("top", di, dj, n, 0.01, dims - 1, 5);
            assert_eq!(&all[..dims - 1], &top[..]);
        }
    }
}

#[test]
fn canonical_variables_are_white_as_reg_vanishes() {
    let (di, dj, n) = (4, 6, 500);
    let xi = random(di, n, 1);
    let xj = random(dj, n, 2);
    let o = run(&xi, di, &xj, dj, n, 0.0, 4).unwrap();
    let zi = canonical(&xi, di, n, &o.phi_i, &o.mu_i, 4);
    let cov = &zi * zi.transpose() / (n as f64 - 1.0);
    assert!((cov - DMatrix::identity(4, 4)).abs().max() < 1e-12);
}

#[test]
fn shared_latent_signal_has_correlation_one() {
    // Two latent signals seen by both views through different mixings, plus noise.
    let (di, dj, n) = (6, 4, 300);
    let z = random(2, n, 9);
    let ai = random(di, 2, 10);
    let aj = random(dj, 2, 11);
    let ni = random(di, n, 12);
    let nj = random(dj, n, 13);
    let mk = |a: &[f64], d: usize, noise: &[f64]| -> Vec<f64> {
        (0..d * n)
            .map(|k| {
                let (r, q) = (k % d, k / d);
                5.0 + a[r] * z[2 * q] + a[r + d] * z[2 * q + 1] + 1e-3 * noise[k]
            })
            .collect()
    };
    let xi = mk(&ai, di, &ni);
    let xj = mk(&aj, dj, &nj);
    let o = run(&xi, di, &xj, dj, n, 1e-8, 3).unwrap();
    eprintln!("shared latent: rho {:?}", o.rho);
    assert!(o.rho[0] > 0.999 && o.rho[1] > 0.999, "{:?}", o.rho);
    assert!(o.rho[2] < 0.5, "{:?}", o.rho);
    // The first canonical variables of the two views nearly coincide.
    let zi = canonical(&xi, di, n, &o.phi_i, &o.mu_i, 3);
    let zj = canonical(&xj, dj, n, &o.phi_j, &o.mu_j, 3);
    let d: f64 = (0..n)
        .map(|q| (zi[(0, q)] - zj[(0, q)]).powi(2))
        .sum::<f64>()
        / n as f64;
    assert!(d < 1e-3, "{d}");
}

#[test]
fn more_features_than_items_needs_reg() {
    let (di, dj, n) = (30, 8, 20);
    let xi = random(di, n, 21);
    let xj = random(dj, n, 22);
    // Singular C_ii: refused without regularisation.
    assert_eq!(
        run(&xi, di, &xj, dj, n, 0.0, 5).err(),
        Some(Error::BadParameter)
    );
    // Regularised: agrees with the oracle, correlations in [0, 1].
    let o = run(&xi, di, &xj, dj, n, 0.05, 8).unwrap();
    let want = oracle_rho(&xi, di, &xj, dj, n, 0.05);
    for k in 0..8 {
        assert!(
            (o.rho[k] - want[k]).abs() <= 1e-10 * want[k],
            "{} vs {}",
            o.rho[k],
            want[k]
        );
        assert!(o.rho[k] >= 0.0 && o.rho[k] <= 1.0 + 1e-12);
    }
    // A constant feature also makes C singular.
    let mut xc = random(3, 50, 3);
    for q in 0..50 {
        xc[1 + q * 3] = 2.5;
    }
    let xk = random(3, 50, 4);
    assert_eq!(
        run(&xc, 3, &xk, 3, 50, 0.0, 2).err(),
        Some(Error::BadParameter)
    );
    assert!(run(&xc, 3, &xk, 3, 50, 1e-6, 2).is_ok());
}

#[test]
fn strided_views_give_the_same_bits() {
    let (di, dj, n, dims) = (5, 3, 40, 3);
    let xi = random(di, n, 31);
    let xj = random(dj, n, 32);
    let a = run(&xi, di, &xj, dj, n, 0.01, dims).unwrap();
    // Column stride di + 2 and dj + 1, padding NaN.
    let mut pi = vec![f64::NAN; (di + 2) * n];
    let mut pj = vec![f64::NAN; (dj + 1) * n];
    for q in 0..n {
        pi[q * (di + 2)..q * (di + 2) + di].copy_from_slice(&xi[q * di..(q + 1) * di]);
        pj[q * (dj + 1)..q * (dj + 1) + dj].copy_from_slice(&xj[q * dj..(q + 1) * dj]);
    }
    let vi = Dense::new(&pi, di, n, di + 2).unwrap();
    let vj = Dense::new(&pj, dj, n, dj + 1).unwrap();
    let (mut fi, mut fj, mut r, mut mi, mut mj) = (
        vec![0.0; di * dims],
        vec![0.0; dj * dims],
        vec![0.0; dims],
        vec![0.0; di],
        vec![0.0; dj],
    );
    let mut ws = vec![0u8; cca_workspace::<f64>(di, dj, n, dims).unwrap() + 5];
    cca(
        &vi,
        &vj,
        0.01,
        dims,
        &mut fi,
        &mut fj,
        &mut r,
        &mut mi,
        &mut mj,
        &mut ws[5..],
    )
    .unwrap();
    assert_eq!(fi, a.phi_i);
    assert_eq!(fj, a.phi_j);
    assert_eq!(r, a.rho);
    assert_eq!((mi, mj), (a.mu_i, a.mu_j));
}

#[test]
fn bad_inputs_leave_outputs_untouched() {
    let (di, dj, n, dims) = (4, 3, 30, 2);
    let xi = random(di, n, 41);
    let xj = random(dj, n, 42);
    let need = cca_workspace::<f64>(di, dj, n, dims).unwrap();
    let s = -9.5;
    #[allow(clippy::too_many_arguments)]
    let call = |xi: &[f64],
                di: usize,
                ni: usize,
                xj: &[f64],
                dj: usize,
                nj: usize,
                reg: f64,
                dims: usize,
                lens: [usize; 5],
                wbytes: usize| {
        let vi = Dense::new(xi, di, ni, di).unwrap();
        let vj = Dense::new(xj, dj, nj, dj).unwrap();
        let mut outs: Vec<Vec<f64>> = lens.iter().map(|&l| vec![s; l]).collect();
        let mut ws = vec![0u8; wbytes];
        let [a, b, c, d, e] = &mut outs[..] else {
            unreachable!()
        };
        let r = cca(&vi, &vj, reg, dims, a, b, c, d, e, &mut ws);
        if r.is_err() {
            assert!(
                outs.iter().flatten().all(|&x| x == s),
                "an output was written"
            );
        }
        r.err()
    };
    let lens = [di * dims, dj * dims, dims, di, dj];
    assert_eq!(call(&xi, di, n, &xj, dj, n, 0.1, dims, lens, need), None);
    // Item counts differ.
    assert_eq!(
        call(
            &xi,
            di,
            n,
            &xj[..dj * (n - 1)],
            dj,
            n - 1,
            0.1,
            dims,
            lens,
            need
        ),
        Some(Error::DimensionMismatch)
    );
    // One item: no covariance.
    assert_eq!(
        call(
            &xi[..di],
            di,
            1,
            &xj[..dj],
            dj,
            1,
            0.1,
            1,
            [di, dj, 1, di, dj],
            need
        ),
        Some(Error::ZeroDimension)
    );
    // dims out of range.
    assert_eq!(
        call(&xi, di, n, &xj, dj, n, 0.1, 0, [0, 0, 0, di, dj], need),
        Some(Error::BadRank)
    );
    assert_eq!(
        call(
            &xi,
            di,
            n,
            &xj,
            dj,
            n,
            0.1,
            4,
            [di * 4, dj * 4, 4, di, dj],
            need
        ),
        Some(Error::BadRank)
    );
    // reg.
    for reg in [-1e-9, f64::NAN, f64::INFINITY] {
        assert_eq!(
            call(&xi, di, n, &xj, dj, n, reg, dims, lens, need),
            Some(Error::BadParameter)
        );
    }
    // Output lengths.
    for k in 0..5 {
        let mut l = lens;
        l[k] += 1;
        assert_eq!(
            call(&xi, di, n, &xj, dj, n, 0.1, dims, l, need),
            Some(Error::DimensionMismatch)
        );
    }
    // NaN / infinity in a view.
    for bad in [f64::NAN, f64::INFINITY] {
        let mut b = xj.clone();
        b[7] = bad;
        assert_eq!(
            call(&xi, di, n, &b, dj, n, 0.1, dims, lens, need),
            Some(Error::NonFiniteInput)
        );
    }
    // Values whose covariance overflows.
    let big: Vec<f64> = xi.iter().map(|x| x * 1e200).collect();
    assert_eq!(
        call(&big, di, n, &xj, dj, n, 0.1, dims, lens, need),
        Some(Error::NonFiniteInput)
    );
    // Workspace one byte short.
    assert_eq!(
        call(&xi, di, n, &xj, dj, n, 0.1, dims, lens, need - 1),
        Some(Error::WorkspaceTooSmall)
    );
    // Workspace queries.
    assert_eq!(cca_workspace::<f64>(0, 3, 10, 1), Err(Error::ZeroDimension));
    assert_eq!(cca_workspace::<f64>(3, 3, 1, 1), Err(Error::ZeroDimension));
    assert_eq!(cca_workspace::<f64>(3, 3, 10, 0), Err(Error::BadRank));
    assert_eq!(cca_workspace::<f64>(3, 2, 10, 3), Err(Error::BadRank));
    assert_eq!(
        cca_workspace::<f64>(usize::MAX / 2, 2, 10, 1),
        Err(Error::SizeOverflow)
    );
}

#[test]
fn deterministic() {
    let (di, dj, n) = (8, 9, 700);
    let xi = random(di, n, 51);
    let xj = random(dj, n, 52);
    let a = run(&xi, di, &xj, dj, n, 0.0, 8).unwrap();
    let b = run(&xi, di, &xj, dj, n, 0.0, 8).unwrap();
    assert_eq!(a.phi_i, b.phi_i);
    assert_eq!(a.phi_j, b.phi_j);
    assert_eq!(a.rho, b.rho);
}
