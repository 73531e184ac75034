//! On the real sample shipped in `data/mfeat-sample` (500 handwritten digits,
//! six views; CC BY 4.0): joint NMF never increases its objective, with dense
//! and sparse views, and its encodings classify better than any single view's.

mod common;

use common::*;
use mvnmf::eval::{self, KnnParams, UNLABELED};
use mvnmf::linalg::mat::MatRef;
use mvnmf::models::nmf::{self, NmfParams};
use mvnmf::{Csc, Dense, View};

fn load() -> (Vec<(usize, Vec<f64>)>, Vec<u32>) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/data/mfeat-sample");
    let labels: Vec<u32> = std::fs::read_to_string(format!("{dir}/labels.txt"))
        .unwrap()
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect();
    let n = labels.len();
    let rows = [76, 216, 64, 240, 47, 6];
    let views = rows
        .iter()
        .enumerate()
        .map(|(v, &m)| {
            let b = std::fs::read(format!("{dir}/view{}.f64", v + 1)).unwrap();
            let mut x: Vec<f64> = b
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
                .collect();
            assert_eq!(x.len(), m * n);
            for i in 0..m {
                let min = (0..n).map(|j| x[i + j * m]).fold(f64::INFINITY, f64::min);
                if min < 0.0 {
                    (0..n).for_each(|j| x[i + j * m] -= min);
                }
            }
            let s = (n as f64 / x.iter().map(|a| a * a).sum::<f64>()).sqrt();
            x.iter_mut().for_each(|a| *a *= s);
            (m, x)
        })
        .collect();
    (views, labels)
}

fn knn_accuracy(v: &[f64], k: usize, labels: &[u32], fraction: f64, seed: u64) -> f64 {
    let n = labels.len();
    let kp = KnnParams::default();
    let mut w = vec![0u8; 1 << 16];
    let mut labeled = vec![false; n];
    eval::stratified_split(labels, 10, fraction, seed, &mut labeled, &mut w).unwrap();
    let masked: Vec<u32> = (0..n)
        .map(|j| if labeled[j] { labels[j] } else { UNLABELED })
        .collect();
    let vm = MatRef::col_major(v, k, n).unwrap();
    let mut pred = vec![0; n];
    eval::knn_predict(vm, &masked, vm, 10, &kp, &mut pred, &mut w).unwrap();
    let test: Vec<bool> = labeled.iter().map(|&l| !l).collect();
    eval::accuracy(&pred, labels, Some(&test))
}

#[test]
fn joint_nmf_on_real_views_is_monotone_and_beats_single_views() {
    let (views, labels) = load();
    let n = labels.len();
    let k = 20;
    let params = NmfParams {
        max_iter: 150,
        tol: 0.0,
        seed: 1,
        ..NmfParams::default()
    };
    // pix (view 4) has 40 % zeros: pass it as CSC to exercise the sparse path.
    let (pm, px) = (&views[3].0, &views[3].1);
    let csc = to_csc(px, *pm, n);
    let vs: Vec<View<'_, f64>> = views
        .iter()
        .enumerate()
        .map(|(i, (m, x))| {
            if i == 3 {
                View::from(Csc::new(*m, n, &csc.col_ptr, &csc.row_idx, &csc.values).unwrap())
            } else {
                View::from(Dense::new(x, *m, n, *m).unwrap())
            }
        })
        .collect();
    let mut w = vec![
        0u8;
        nmf::joint_fit_workspace::<f64>(vs.iter().map(|v| v.shape()), k, &params)
            .unwrap()
    ];
    let mut us: Vec<Vec<f64>> = views.iter().map(|(m, _)| vec![0.0; m * k]).collect();
    let mut v = vec![0.0; k * n];
    let mut obj = Vec::new();
    let mut rec = recorder(&mut obj);
    let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
    nmf::joint_fit(
        &vs[..],
        k,
        &params,
        &mut refs[..],
        &mut v,
        &mut w,
        Some(&mut rec),
    )
    .unwrap();
    drop(rec);
    let scale = 0.5 * n as f64 * views.len() as f64;
    assert_monotone(&obj, 1e-10 * scale, "joint NMF on mfeat-sample");
    let joint = (0..3)
        .map(|s| knn_accuracy(&v, k, &labels, 0.3, s))
        .sum::<f64>()
        / 3.0;

    let mut best_single: f64 = 0.0;
    for (m, x) in &views {
        let view = View::from(Dense::new(x, *m, n, *m).unwrap());
        let mut w = vec![0u8; nmf::fit_workspace::<f64>(view.shape(), k, &params).unwrap()];
        let (mut u, mut v) = (vec![0.0; m * k], vec![0.0; k * n]);
        nmf::fit(view, k, &params, &mut u, &mut v, &mut w, None).unwrap();
        let acc = (0..3)
            .map(|s| knn_accuracy(&v, k, &labels, 0.3, s))
            .sum::<f64>()
            / 3.0;
        best_single = best_single.max(acc);
    }
    assert!(joint > 0.85, "joint NMF kNN accuracy {joint}");
    assert!(
        joint > best_single,
        "joint {joint} vs best single view {best_single}"
    );
}
