//! Every run-time SIMD level gives the same bits (issue 18, item 1): the
//! kernels under `linalg::simd::dispatch` (the blocked GEMM of the no_std
//! build, the sparse gather/scatter kernels) use no fused multiply-add and no
//! reassociation, so the wider instruction sets only make them faster. Each
//! level this CPU has is forced in turn (`force_level`) for dense and CSC joint
//! NMF and an MCL fit with the SGE graph, on `data/mfeat-sample`; the factors
//! must be equal bit for bit. CI runs this file in both builds (hosted, and
//! `--no-default-features`, where every dense product is the blocked kernel).
//! One test in its own binary: the level cap is process-wide.

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

#[test]
fn every_simd_level_gives_the_same_bits() {
    let levels: Vec<SimdLevel> = [SimdLevel::Baseline, SimdLevel::Avx2, SimdLevel::Avx512]
        .into_iter()
        .filter(|&l| l <= detected_level())
        .collect();
    eprintln!("detected {:?}; comparing {levels:?}", detected_level());
    force_level(SimdLevel::Baseline);
    assert_eq!(active_level(), SimdLevel::Baseline);
    let base = fits();
    for &l in &levels[1..] {
        force_level(l);
        assert_eq!(active_level(), l);
        let other = fits();
        for (i, (a, b)) in base.iter().zip(&other).enumerate() {
            let same = a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
            assert!(same, "{l:?}: factor {i} differs from the baseline's");
        }
    }
    force_level(SimdLevel::Avx512);
    assert_eq!(active_level(), detected_level());
}
