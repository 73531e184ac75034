//! NMF and joint multi-view NMF: monotonicity, agreement with scikit-learn,
//! reductions between presets, determinism, encoding, errors, cancellation.

mod common;

use common::*;
use mvnmf::models::nmf::{self, NmfParams};
use mvnmf::{Csc, Dense, Error, Init, Stop, View};
use std::ops::ControlFlow;

fn work_for(bytes: usize) -> Vec<u8> {
    vec![0u8; bytes]
}

/// Fits one view, recording objectives; returns (u, v, objectives, report).
fn fit_one(
    x: View<'_, f64>,
    k: usize,
    params: &NmfParams,
) -> (Vec<f64>, Vec<f64>, Vec<f64>, mvnmf::Report) {
    let (m, n) = (x.rows(), x.cols());
    let mut w = work_for(nmf::fit_workspace::<f64>(x.shape(), k, params).unwrap());
    let (mut u, mut v) = (vec![0.0; m * k], vec![0.0; k * n]);
    let mut obj = Vec::new();
    let mut rec = recorder(&mut obj);
    let r = nmf::fit(x, k, params, &mut u, &mut v, &mut w, Some(&mut rec)).unwrap();
    drop(rec);
    (u, v, obj, r)
}

#[test]
fn objective_never_increases_dense_and_sparse() {
    let shapes = [
        (40, 30, 5),
        (200, 15, 4),
        (15, 200, 4),
        (30, 30, 1),
        (10, 12, 20),
        // K > 64: the sparse U-step's unfused path (200 x 15 above: several fused blocks).
        (150, 80, 70),
    ];
    for &(m, n, k) in &shapes {
        for seed in 0..3u64 {
            for &density in &[1.0, 0.2] {
                let x = random_matrix(m, n, density, seed + 100);
                let csc = to_csc(&x, m, n);
                let params = NmfParams {
                    max_iter: 60,
                    tol: 0.0,
                    seed,
                    ..NmfParams::default()
                };
                let dense = View::from(Dense::new(&x, m, n, m).unwrap());
                let sparse =
                    View::from(Csc::new(m, n, &csc.col_ptr, &csc.row_idx, &csc.values).unwrap());
                let scale = half_sq(&x);
                for (name, view) in [("dense", dense), ("csc", sparse)] {
                    let (u, v, obj, r) = fit_one(view, k, &params);
                    let what = format!("{name} {m}x{n} k={k} seed={seed} density={density}");
                    assert_eq!(obj.len(), 61, "{what}");
                    assert_monotone(&obj, 1e-10 * scale, &what);
                    let direct = direct_objective(&x, m, n, &u, &v, k);
                    assert!(
                        (direct - r.objective.total).abs() <= 1e-9 * scale,
                        "{what}: {direct} vs {}",
                        r.objective.total
                    );
                    assert!(
                        r.objective.total < 0.9 * r.initial.total,
                        "{what}: no progress"
                    );
                    assert_eq!(r.stop, Stop::MaxIter);
                }
            }
        }
    }
}

#[test]
fn sparse_and_dense_give_the_same_iterates() {
    // One row block of the fused sparse U-step; several (M > 128) with K = 50; K > 64 (the
    // unfused path); K = 1.
    for (m, n, k) in [(50, 40, 6), (300, 60, 50), (300, 60, 70), (200, 30, 1)] {
        let x = random_matrix(m, n, 0.15, 7);
        let csc = to_csc(&x, m, n);
        let params = NmfParams {
            max_iter: 30,
            tol: 0.0,
            seed: 3,
            ..NmfParams::default()
        };
        let (ud, vd, _, _) = fit_one(View::from(Dense::new(&x, m, n, m).unwrap()), k, &params);
        let (us, vs, _, _) = fit_one(
            View::from(Csc::new(m, n, &csc.col_ptr, &csc.row_idx, &csc.values).unwrap()),
            k,
            &params,
        );
        assert!(max_rel_diff(&ud, &us) < 1e-10, "{m} {n} {k}");
        assert!(max_rel_diff(&vd, &vs) < 1e-10, "{m} {n} {k}");
    }
}

#[test]
fn joint_sparse_and_dense_views_give_the_same_iterates() {
    // Mixed views: P and Q accumulate over fused sparse U-steps and dense ones in any order.
    let (n, k) = (45, 12);
    let dims = [(260, 0.1), (30, 1.0), (140, 0.2)];
    let xs: Vec<Vec<f64>> = dims
        .iter()
        .enumerate()
        .map(|(i, &(m, d))| random_matrix(m, n, d, 20 + i as u64))
        .collect();
    let cscs: Vec<_> = xs
        .iter()
        .zip(&dims)
        .map(|(x, &(m, _))| to_csc(x, m, n))
        .collect();
    let params = NmfParams {
        max_iter: 25,
        tol: 0.0,
        seed: 4,
        ..NmfParams::default()
    };
    let run = |sparse: [bool; 3]| {
        let views: Vec<View<'_, f64>> = (0..3)
            .map(|i| {
                let m = dims[i].0;
                if sparse[i] {
                    let c = &cscs[i];
                    View::from(Csc::new(m, n, &c.col_ptr, &c.row_idx, &c.values).unwrap())
                } else {
                    View::from(Dense::new(&xs[i], m, n, m).unwrap())
                }
            })
            .collect();
        let shapes: Vec<_> = views.iter().map(|v| v.shape()).collect();
        let mut w = work_for(nmf::joint_fit_workspace::<f64>(shapes, k, &params).unwrap());
        let mut us: Vec<Vec<f64>> = dims.iter().map(|&(m, _)| vec![0.0; m * k]).collect();
        let mut v = vec![0.0; k * n];
        let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
        let r =
            nmf::joint_fit(&views[..], k, &params, &mut refs[..], &mut v, &mut w, None).unwrap();
        (us.concat(), v, r.objective.total)
    };
    let (ud, vd, od) = run([false; 3]);
    for sparse in [[true, false, true], [false, true, true], [true; 3]] {
        let (us, vs, os) = run(sparse);
        assert!(max_rel_diff(&ud, &us) < 1e-10, "{sparse:?}");
        assert!(max_rel_diff(&vd, &vs) < 1e-10, "{sparse:?}");
        assert!((od - os).abs() <= 1e-10 * od.abs(), "{sparse:?}");
    }
}

/// Parses a fixture written by scripts/make_sklearn_fixture.py.
struct Fixture {
    m: usize,
    n: usize,
    k: usize,
    iters: u32,
    x: Vec<f64>,
    u0: Vec<f64>,
    v0: Vec<f64>,
    u: Vec<f64>,
    v: Vec<f64>,
}

fn load_fixture(name: &str) -> Fixture {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut lines = text.lines();
    let dims: Vec<usize> = lines
        .next()
        .unwrap()
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect();
    let _version = lines.next().unwrap();
    let mut mat = || -> Vec<f64> {
        lines
            .next()
            .unwrap()
            .split_whitespace()
            .map(|t| t.parse().unwrap())
            .collect()
    };
    let (x, u0, v0, u, v) = (mat(), mat(), mat(), mat(), mat());
    let (m, n, k) = (dims[0], dims[1], dims[2]);
    assert_eq!(
        (x.len(), u0.len(), v0.len(), u.len(), v.len()),
        (m * n, m * k, k * n, m * k, k * n)
    );
    Fixture {
        m,
        n,
        k,
        iters: dims[3] as u32,
        x,
        u0,
        v0,
        u,
        v,
    }
}

fn check_against_sklearn(name: &str, sparse: bool) {
    let f = load_fixture(name);
    let csc = to_csc(&f.x, f.m, f.n);
    let view = if sparse {
        View::from(Csc::new(f.m, f.n, &csc.col_ptr, &csc.row_idx, &csc.values).unwrap())
    } else {
        View::from(Dense::new(&f.x, f.m, f.n, f.m).unwrap())
    };
    // eps = 0: the plain Lee–Seung ratio, which is what scikit-learn computes
    // (it only replaces exactly-zero denominators).
    let params = NmfParams {
        max_iter: f.iters,
        tol: 0.0,
        eps: 0.0,
        init: Init::Given,
        ..NmfParams::default()
    };
    let mut w = work_for(nmf::fit_workspace::<f64>(view.shape(), f.k, &params).unwrap());
    let (mut u, mut v) = (f.u0.clone(), f.v0.clone());
    let r = nmf::fit(view, f.k, &params, &mut u, &mut v, &mut w, None).unwrap();
    assert_eq!(r.iterations, f.iters);
    let (du, dv) = (max_rel_diff(&u, &f.u), max_rel_diff(&v, &f.v));
    assert!(
        du < 1e-9 && dv < 1e-9,
        "{name}: differs from scikit-learn: U {du:e}, V {dv:e}"
    );
}

#[test]
fn agrees_with_scikit_learn_dense() {
    check_against_sklearn("sklearn_mu_dense.txt", false);
}

#[test]
fn agrees_with_scikit_learn_sparse() {
    check_against_sklearn("sklearn_mu_sparse.txt", true);
}

#[test]
fn same_seed_same_bits_other_seed_other_bits() {
    let (m, n, k) = (30, 25, 4);
    let x = random_matrix(m, n, 1.0, 1);
    let view = View::from(Dense::new(&x, m, n, m).unwrap());
    let p = NmfParams {
        max_iter: 25,
        tol: 0.0,
        seed: 42,
        ..NmfParams::default()
    };
    let (u1, v1, _, _) = fit_one(view, k, &p);
    let (u2, v2, _, _) = fit_one(view, k, &p);
    assert!(u1.iter().zip(&u2).all(|(a, b)| a.to_bits() == b.to_bits()));
    assert!(v1.iter().zip(&v2).all(|(a, b)| a.to_bits() == b.to_bits()));
    let (u3, _, _, _) = fit_one(view, k, &NmfParams { seed: 43, ..p });
    assert!(u1 != u3);
}

#[test]
fn joint_nmf_equals_nmf_of_stacked_views() {
    // ConcatNMF identity: per-view bases stacked = NMF of the stacked matrix.
    let (m1, m2, n, k) = (20, 35, 30, 5);
    let x1 = random_matrix(m1, n, 1.0, 5);
    let x2: Vec<f64> = random_matrix(m2, n, 0.3, 6)
        .iter()
        .map(|v| v * 1e3)
        .collect();
    let mut stacked = vec![0.0; (m1 + m2) * n];
    for j in 0..n {
        stacked[j * (m1 + m2)..j * (m1 + m2) + m1].copy_from_slice(&x1[j * m1..(j + 1) * m1]);
        stacked[j * (m1 + m2) + m1..(j + 1) * (m1 + m2)].copy_from_slice(&x2[j * m2..(j + 1) * m2]);
    }
    let u1_0: Vec<f64> = random_matrix(m1, k, 1.0, 8);
    let u2_0: Vec<f64> = random_matrix(m2, k, 1.0, 9)
        .iter()
        .map(|v| v * 30.0)
        .collect();
    let v0 = random_matrix(k, n, 1.0, 10);
    let mut us0 = vec![0.0; (m1 + m2) * k];
    for p in 0..k {
        us0[p * (m1 + m2)..p * (m1 + m2) + m1].copy_from_slice(&u1_0[p * m1..(p + 1) * m1]);
        us0[p * (m1 + m2) + m1..(p + 1) * (m1 + m2)].copy_from_slice(&u2_0[p * m2..(p + 1) * m2]);
    }
    let params = NmfParams {
        max_iter: 40,
        tol: 0.0,
        init: Init::Given,
        ..NmfParams::default()
    };

    let views = [
        View::from(Dense::new(&x1, m1, n, m1).unwrap()),
        View::from(Dense::new(&x2, m2, n, m2).unwrap()),
    ];
    let shapes = [views[0].shape(), views[1].shape()];
    let mut w = work_for(nmf::joint_fit_workspace::<f64>(shapes, k, &params).unwrap());
    let (mut u1, mut u2, mut v) = (u1_0.clone(), u2_0.clone(), v0.clone());
    nmf::joint_fit(
        &views,
        k,
        &params,
        &mut [&mut u1[..], &mut u2[..]][..],
        &mut v,
        &mut w,
        None,
    )
    .unwrap();

    let sv = View::from(Dense::new(&stacked, m1 + m2, n, m1 + m2).unwrap());
    let mut w = work_for(nmf::fit_workspace::<f64>(sv.shape(), k, &params).unwrap());
    let (mut us, mut vs) = (us0.clone(), v0.clone());
    nmf::fit(sv, k, &params, &mut us, &mut vs, &mut w, None).unwrap();

    let mut joint_u = vec![0.0; (m1 + m2) * k];
    for p in 0..k {
        joint_u[p * (m1 + m2)..p * (m1 + m2) + m1].copy_from_slice(&u1[p * m1..(p + 1) * m1]);
        joint_u[p * (m1 + m2) + m1..(p + 1) * (m1 + m2)].copy_from_slice(&u2[p * m2..(p + 1) * m2]);
    }
    assert!(
        max_rel_diff(&v, &vs) < 1e-10,
        "V: {:e}",
        max_rel_diff(&v, &vs)
    );
    assert!(max_rel_diff(&joint_u, &us) < 1e-10);
}

#[test]
fn multiview_scales_and_vmax() {
    let (m1, m2, n, k) = (25, 8, 40, 4);
    let x1 = random_matrix(m1, n, 1.0, 11);
    let x2: Vec<f64> = random_matrix(m2, n, 0.5, 12)
        .iter()
        .map(|v| v * 1e4)
        .collect();
    let views = [
        View::from(Dense::new(&x1, m1, n, m1).unwrap()),
        View::from(Dense::new(&x2, m2, n, m2).unwrap()),
    ];
    let params = NmfParams {
        max_iter: 80,
        tol: 0.0,
        vmax: 1.0,
        ..NmfParams::default()
    };
    let mut w = work_for(
        nmf::joint_fit_workspace::<f64>([views[0].shape(), views[1].shape()], k, &params).unwrap(),
    );
    let (mut u1, mut u2, mut v) = (vec![0.0; m1 * k], vec![0.0; m2 * k], vec![0.0; k * n]);
    let mut obj = Vec::new();
    let mut rec = recorder(&mut obj);
    let r = nmf::joint_fit(
        &views,
        k,
        &params,
        &mut [&mut u1[..], &mut u2[..]][..],
        &mut v,
        &mut w,
        Some(&mut rec),
    )
    .unwrap();
    drop(rec);
    assert_monotone(
        &obj,
        1e-10 * (half_sq(&x1) + half_sq(&x2)),
        "two views, scales 1 and 1e4, vmax 1",
    );
    assert!(v.iter().all(|&x| (0.0..=1.0).contains(&x)));
    let direct =
        direct_objective(&x1, m1, n, &u1, &v, k) + direct_objective(&x2, m2, n, &u2, &v, k);
    assert!((direct - r.objective.total).abs() <= 1e-9 * (half_sq(&x1) + half_sq(&x2)));
}

#[test]
fn encode_recovers_a_planted_encoding() {
    let (m, n, k) = (30, 20, 4);
    let u = random_matrix(m, k, 1.0, 21);
    let vt = random_matrix(k, n, 1.0, 22);
    let mut x = vec![0.0; m * n];
    for j in 0..n {
        for i in 0..m {
            x[i + j * m] = (0..k).map(|p| u[i + p * m] * vt[p + j * k]).sum();
        }
    }
    let view = View::from(Dense::new(&x, m, n, m).unwrap());
    let params = NmfParams {
        max_iter: 3000,
        tol: 0.0,
        ..NmfParams::default()
    };
    let mut w = work_for(nmf::encode_workspace::<f64>(view.shape(), k, &params).unwrap());
    let mut v = vec![0.0; k * n];
    let mut obj = Vec::new();
    let mut rec = recorder(&mut obj);
    nmf::encode(view, k, &params, &u, &mut v, &mut w, Some(&mut rec)).unwrap();
    drop(rec);
    assert_monotone(&obj, 1e-10 * half_sq(&x), "encode");
    assert!(
        max_rel_diff(&v, &vt) < 1e-4,
        "planted V not recovered: {:e}",
        max_rel_diff(&v, &vt)
    );
}

#[test]
fn cancel_keeps_the_last_complete_iterate() {
    let (m, n, k) = (20, 15, 3);
    let x = random_matrix(m, n, 1.0, 31);
    let view = View::from(Dense::new(&x, m, n, m).unwrap());
    let p = NmfParams {
        max_iter: 50,
        tol: 0.0,
        seed: 5,
        ..NmfParams::default()
    };
    let mut w = work_for(nmf::fit_workspace::<f64>(view.shape(), k, &p).unwrap());
    let (mut u, mut v) = (vec![0.0; m * k], vec![0.0; k * n]);
    let mut stop_at_3 = |pr: &mvnmf::Progress| {
        if pr.iter == 3 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let r = nmf::fit(view, k, &p, &mut u, &mut v, &mut w, Some(&mut stop_at_3)).unwrap();
    assert_eq!((r.stop, r.iterations), (Stop::Cancelled, 3));
    let (u3, v3, _, _) = fit_one(view, k, &NmfParams { max_iter: 3, ..p });
    assert_eq!(u, u3);
    assert_eq!(v, v3);
}

#[test]
fn bad_input_leaves_outputs_untouched() {
    let (m, n, k) = (6, 5, 2);
    let mut x = random_matrix(m, n, 1.0, 41);
    let p = NmfParams::default();
    let need = nmf::fit_workspace::<f64>(
        mvnmf::ViewShape {
            rows: m,
            cols: n,
            kind: mvnmf::ViewKind::Dense,
            nnz: 0,
        },
        k,
        &p,
    )
    .unwrap();
    let run = |x: &[f64], k: usize, p: &NmfParams, ulen: usize, wlen: usize| {
        let view = View::from(Dense::new(x, m, n, m).unwrap());
        let (mut u, mut v) = (vec![7.0; ulen], vec![7.0; k * n]);
        let mut w = work_for(wlen);
        let r = nmf::fit(view, k, p, &mut u, &mut v, &mut w, None);
        assert!(
            u.iter().chain(&v).all(|&a| a == 7.0),
            "outputs touched on {r:?}"
        );
        r.err()
    };
    assert_eq!(
        run(&x, k, &p, m * k, need - 1),
        Some(Error::WorkspaceTooSmall)
    );
    assert_eq!(run(&x, 0, &p, 0, need), Some(Error::BadRank));
    assert_eq!(
        run(&x, k, &p, m * k + 1, need),
        Some(Error::DimensionMismatch)
    );
    assert_eq!(
        run(&x, k, &NmfParams { tol: -1.0, ..p }, m * k, need),
        Some(Error::BadParameter)
    );
    assert_eq!(
        run(&x, k, &NmfParams { vmax: 0.0, ..p }, m * k, need),
        Some(Error::BadParameter)
    );
    assert_eq!(
        run(&x, k, &NmfParams { eps: f64::NAN, ..p }, m * k, need),
        Some(Error::BadParameter)
    );
    x[3] = -1.0;
    assert_eq!(run(&x, k, &p, m * k, need), Some(Error::NegativeInput));
    x[3] = f64::NAN;
    assert_eq!(run(&x, k, &p, m * k, need), Some(Error::NonFiniteInput));
}

#[test]
fn bad_sparse_input_leaves_outputs_untouched() {
    // The sparse fit's workspace (row-sorted copy, fused U-step blocks) is what the query says:
    // one byte short is refused, exactly enough runs; bad values are refused; nothing is written.
    let (m, n, k) = (300, 40, 50);
    let x = random_matrix(m, n, 0.9, 42); // the row-sorted copy outweighs the scratch
    let csc = to_csc(&x, m, n);
    let p = NmfParams {
        max_iter: 3,
        ..NmfParams::default()
    };
    let run = |values: &[f64], wlen: usize| {
        let view = View::from(Csc::new(m, n, &csc.col_ptr, &csc.row_idx, values).unwrap());
        let (mut u, mut v) = (vec![7.0; m * k], vec![7.0; k * n]);
        let mut w = work_for(wlen);
        let r = nmf::fit(view, k, &p, &mut u, &mut v, &mut w, None);
        if r.is_err() {
            assert!(
                u.iter().chain(&v).all(|&a| a == 7.0),
                "outputs touched on {r:?}"
            );
        }
        r.err()
    };
    let shape =
        View::from(Csc::new(m, n, &csc.col_ptr, &csc.row_idx, &csc.values).unwrap()).shape();
    let need = nmf::fit_workspace::<f64>(shape, k, &p).unwrap();
    assert_eq!(run(&csc.values, need - 1), Some(Error::WorkspaceTooSmall));
    assert_eq!(run(&csc.values, need), None);
    let mut bad = csc.values.clone();
    bad[5] = -1.0;
    assert_eq!(run(&bad, need), Some(Error::NegativeInput));
    bad[5] = f64::INFINITY;
    assert_eq!(run(&bad, need), Some(Error::NonFiniteInput));
}

#[test]
fn f32_solver_is_monotone_too() {
    let (m, n, k) = (30, 20, 3);
    let x: Vec<f32> = random_matrix(m, n, 1.0, 51)
        .iter()
        .map(|&v| v as f32)
        .collect();
    let view = View::from(Dense::new(&x, m, n, m).unwrap());
    let p = NmfParams {
        max_iter: 40,
        tol: 0.0,
        ..NmfParams::default()
    };
    let mut w = work_for(nmf::fit_workspace::<f32>(view.shape(), k, &p).unwrap());
    let (mut u, mut v) = (vec![0.0f32; m * k], vec![0.0f32; k * n]);
    let mut obj = Vec::new();
    let mut rec = recorder(&mut obj);
    let r = nmf::fit(view, k, &p, &mut u, &mut v, &mut w, Some(&mut rec)).unwrap();
    drop(rec);
    let scale: f64 = x.iter().map(|&a| 0.5 * (a as f64).powi(2)).sum();
    assert_monotone(&obj, 1e-5 * scale, "f32");
    assert!(r.objective.total < 0.5 * r.initial.total);
}
