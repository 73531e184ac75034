//! The run-time SIMD levels (issue 18, item 1): each level this CPU has is
//! forced in turn (`force_level`) for dense and CSC joint NMF and an MCL fit
//! with the SGE graph, on `data/mfeat-sample`.
//!
//! * Within a level the results are deterministic: the same fits twice give
//!   the same bits.
//! * Across levels, hosted build (`std`): the same bits. Its dense products
//!   are the `gemm` crate's, and the kernels under `linalg::simd::dispatch`
//!   (the sparse gather/scatter) use no fused multiply-add and no
//!   reassociation, so the wider instruction sets only make them faster.
//! * Across levels, no_std build (`--no-default-features`, every dense
//!   product through the blocked GEMM): the AVX2 and AVX-512 register tiles
//!   fuse their multiply-adds (`linalg::microk`), so the factors differ from
//!   the portable tile's in the last bits; after the 30 + 20 iterations here
//!   they must agree within `1e-10` of each factor's largest entry.
//!
//! CI runs this file in both builds. One test in its own binary: the level
//! cap is process-wide.

mod common;

use common::*;
use mvnmf::graph::Sge;
use mvnmf::linalg::{active_level, detected_level, force_level, SimdLevel};
use mvnmf::models::mvsl::{self, MvslParams};
use mvnmf::models::nmf::{self, NmfParams};
use mvnmf::{Csc, Dense, View};

fn fits() -> Vec<Vec<f64>> {
    let (x1, m1, n) = read_view("mfeat-sample", 2); // fac, 216 x 500
    let (x2, m2, _) = read_view("mfeat-sample", 4); // pix, 240 x 500, 40 % zeros
    let c2 = to_csc(&x2, m2, n);
    let views = [
        View::from(Dense::new(&x1, m1, n, m1).unwrap()),
        View::from(Csc::new(m2, n, &c2.col_ptr, &c2.row_idx, &c2.values).unwrap()),
    ];
    let k = 10;
    let mut out = Vec::new();
    let np = NmfParams {
        max_iter: 30,
        tol: 0.0,
        seed: 3,
        ..NmfParams::default()
    };
    let (mut u1, mut u2, mut v) = (vec![0.0; m1 * k], vec![0.0; m2 * k], vec![0.0; k * n]);
    let shapes = [views[0].shape(), views[1].shape()];
    let mut w = vec![0u8; nmf::joint_fit_workspace::<f64>(shapes, k, &np).unwrap()];
    nmf::joint_fit(
        &views,
        k,
        &np,
        &mut [&mut u1[..], &mut u2[..]][..],
        &mut v,
        &mut w,
        None,
    )
    .unwrap();
    out.extend([u1.clone(), u2.clone(), v.clone()]);
    let labels: Vec<u32> = (0..n).map(|j| (j / 50) as u32).collect();
    let sge = Sge::new(&labels, 10).unwrap();
    let mp = MvslParams {
        max_iter: 20,
        tol: 0.0,
        alpha: 1.0,
        ..MvslParams::mcl()
    };
    let mut w = vec![0u8; mvsl::fit_workspace::<f64, _>(shapes, &sge, k, &mp).unwrap()];
    mvsl::fit(
        &views,
        &sge,
        k,
        &mp,
        &mut [&mut u1[..], &mut u2[..]][..],
        &mut v,
        &mut w,
        None,
    )
    .unwrap();
    out.extend([u1, u2, v]);
    out
}

/// Largest `|a − b|` over the factors, relative to each factor's largest entry.
fn max_rel_diff(a: &[Vec<f64>], b: &[Vec<f64>]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            let top = x
                .iter()
                .fold(0.0f64, |m, v| m.max(v.abs()))
                .max(f64::MIN_POSITIVE);
            x.iter()
                .zip(y)
                .fold(0.0f64, |m, (u, v)| m.max((u - v).abs()))
                / top
        })
        .fold(0.0, f64::max)
}

fn same_bits(a: &[Vec<f64>], b: &[Vec<f64>]) -> bool {
    a.iter()
        .zip(b)
        .all(|(x, y)| x.iter().zip(y).all(|(u, v)| u.to_bits() == v.to_bits()))
}

#[test]
fn every_simd_level_agrees() {
    let levels: Vec<SimdLevel> = [SimdLevel::Baseline, SimdLevel::Avx2, SimdLevel::Avx512]
        .into_iter()
        .filter(|&l| l <= detected_level())
        .collect();
    eprintln!("detected {:?}; comparing {levels:?}", detected_level());
    force_level(SimdLevel::Baseline);
    assert_eq!(active_level(), SimdLevel::Baseline);
    let base = fits();
    assert!(same_bits(&base, &fits()), "Baseline: not deterministic");
    for &l in &levels[1..] {
        force_level(l);
        assert_eq!(active_level(), l);
        let other = fits();
        assert!(same_bits(&other, &fits()), "{l:?}: not deterministic");
        let d = max_rel_diff(&base, &other);
        eprintln!("{l:?}: largest difference from the baseline {d:.2e} (relative)");
        if cfg!(feature = "std") {
            assert!(
                same_bits(&base, &other),
                "{l:?}: differs from the baseline's bits"
            );
        } else {
            assert!(d <= 1e-10, "{l:?}: differs from the baseline by {d:e}");
        }
    }
    force_level(SimdLevel::Avx512);
    assert_eq!(active_level(), detected_level());
}
