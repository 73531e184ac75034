//! k-means: determinism for a seed, restarts never worse than one run, the
//! fixed-point properties of the result, empty-cluster re-seeding, strided and
//! f32 input, errors with outputs untouched.

use mvnmf::eval::{self, KMeansParams};
use mvnmf::linalg::mat::MatRef;
use mvnmf::Error;

/// `k` Gaussian-ish blobs (sum of uniforms), `per` items each, `d` features.
fn blobs(d: usize, k: usize, per: usize, spread: f64, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E3779B97F4A7C15) | 1;
    let mut u = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let centres: Vec<f64> = (0..d * k).map(|_| 10.0 * u()).collect();
    let mut x = Vec::with_capacity(d * k * per);
    for j in 0..k * per {
        let c = j % k;
        for i in 0..d {
            let noise = (u() + u() + u() - 1.5) * spread;
            x.push(centres[i + c * d] + noise);
        }
    }
    x
}

fn run(
    x: &[f64],
    d: usize,
    k: usize,
    p: &KMeansParams,
) -> (Vec<u32>, Vec<f64>, eval::KMeansReport) {
    let n = x.len() / d;
    let mut w = vec![0u8; eval::kmeans_workspace(d, n, k, p).unwrap()];
    let mut a = vec![0u32; n];
    let mut c = vec![0.0; d * k];
    let r = eval::kmeans(
        MatRef::col_major(x, d, n).unwrap(),
        k,
        p,
        &mut a,
        Some(&mut c),
        &mut w,
    )
    .unwrap();
    (a, c, r)
}

fn inertia_of(x: &[f64], d: usize, a: &[u32], c: &[f64]) -> f64 {
    a.iter()
        .enumerate()
        .map(|(j, &l)| {
            (0..d)
                .map(|i| (x[i + j * d] - c[i + l as usize * d]).powi(2))
                .sum::<f64>()
        })
        .sum()
}

#[test]
fn deterministic_for_a_seed() {
    let (d, k) = (4, 5);
    let x = blobs(d, k, 30, 6.0, 1); // overlapping blobs: runs differ
    let p = KMeansParams {
        seed: 42,
        ..KMeansParams::default()
    };
    let (a1, c1, r1) = run(&x, d, k, &p);
    let (a2, c2, r2) = run(&x, d, k, &p);
    assert_eq!(a1, a2);
    assert_eq!(
        c1.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        c2.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    assert_eq!(r1, r2);
    // Another seed explores other starts (with high probability other runs).
    let mut differs = false;
    for seed in 0..5 {
        let (_, c3, _) = run(&x, d, k, &KMeansParams { seed, ..p });
        differs |= c3 != c1;
    }
    assert!(differs, "every seed gave the same centroids bit for bit");
}

#[test]
fn restarts_never_worse_than_one_run() {
    let (d, k) = (3, 6);
    for seed in 0..8 {
        let x = blobs(d, k, 20, 8.0, 100 + seed);
        let one = KMeansParams {
            restarts: 1,
            seed,
            ..KMeansParams::default()
        };
        let many = KMeansParams {
            restarts: 10,
            ..one
        };
        let (_, _, r1) = run(&x, d, k, &one);
        let (_, _, r10) = run(&x, d, k, &many);
        // The first of the 10 runs is the single run (same stream).
        assert!(
            r10.inertia <= r1.inertia,
            "seed {seed}: {} > {}",
            r10.inertia,
            r1.inertia
        );
        assert!(r10.best_restart < 10);
    }
}

#[test]
fn result_is_a_lloyd_fixed_point() {
    let (d, k) = (5, 4);
    let x = blobs(d, k, 25, 3.0, 7);
    let n = x.len() / d;
    let p = KMeansParams {
        tol: 0.0,
        ..KMeansParams::default()
    };
    let (a, c, r) = run(&x, d, k, &p);
    assert!(r.converged);
    assert!((inertia_of(&x, d, &a, &c) - r.inertia).abs() <= 1e-9 * r.inertia);
    // Every item is at its nearest centroid, and centroids are the means.
    for j in 0..n {
        let dist = |l: usize| {
            (0..d)
                .map(|i| (x[i + j * d] - c[i + l * d]).powi(2))
                .sum::<f64>()
        };
        let own = dist(a[j] as usize);
        assert!(
            (0..k).all(|l| dist(l) >= own),
            "item {j} not at its nearest centroid"
        );
    }
    for l in 0..k {
        let members: Vec<usize> = (0..n).filter(|&j| a[j] as usize == l).collect();
        assert!(!members.is_empty());
        for i in 0..d {
            let mean = members.iter().map(|&j| x[i + j * d]).sum::<f64>() / members.len() as f64;
            assert!((mean - c[i + l * d]).abs() <= 1e-12 * (1.0 + mean.abs()));
        }
    }
}

#[test]
fn separated_blobs_are_recovered() {
    let (d, k, per) = (2, 5, 20);
    let x = blobs(d, k, per, 0.1, 3);
    let (a, _, _) = run(&x, d, k, &KMeansParams::default());
    // Item j belongs to blob j % k: the clustering accuracy must be 1.
    let truth: Vec<u32> = (0..k * per).map(|j| (j % k) as u32).collect();
    let mut w = vec![0u8; eval::clustering_accuracy_workspace(k, k).unwrap()];
    assert_eq!(
        eval::clustering_accuracy(&truth, &a, k, k, &mut w).unwrap(),
        1.0
    );
}

#[test]
fn empty_clusters_are_reseeded_deterministically() {
    // Two distinct points, five items, three clusters: seeding must reuse a
    // point, so a cluster starts empty and is re-seeded (the re-seeding rule
    // itself is unit-tested in src/eval/kmeans.rs). Coinciding centroids give
    // their items to the lower id, so one cluster ends empty: documented.
    let x = [0.0, 0.0, 0.0, 5.0, 5.0];
    for seed in 0..20 {
        let p = KMeansParams {
            restarts: 1,
            seed,
            ..KMeansParams::default()
        };
        let (a, c, r) = run(&x, 1, 3, &p);
        assert!(r.reseeded >= 1, "seed {seed}: {r:?}");
        assert!(r.converged);
        assert_eq!(r.inertia, 0.0);
        for (j, &l) in a.iter().enumerate() {
            assert_eq!(c[l as usize], x[j]);
        }
        let (a2, c2, r2) = run(&x, 1, 3, &p);
        assert_eq!((a, c, r), (a2, c2, r2));
    }
    // k = n: every item alone, inertia 0.
    let x = [1.0, 2.0, 4.0, 8.0];
    let (a, _, r) = run(&x, 1, 4, &KMeansParams::default());
    let mut s = a.clone();
    s.sort();
    assert_eq!(s, [0, 1, 2, 3]);
    assert_eq!(r.inertia, 0.0);
}

#[test]
fn strided_and_f32_input() {
    let (d, k) = (3, 4);
    let x = blobs(d, k, 15, 2.0, 9);
    let n = x.len() / d;
    let p = KMeansParams::default();
    let (a, c, r) = run(&x, d, k, &p);
    // The same data stored item-major (n x d column-major), viewed transposed.
    let xt: Vec<f64> = (0..n * d).map(|t| x[(t / n) + (t % n) * d]).collect();
    let view = MatRef::col_major(&xt, n, d).unwrap().t();
    let mut w = vec![0u8; eval::kmeans_workspace(d, n, k, &p).unwrap()];
    let mut a2 = vec![0u32; n];
    let mut c2 = vec![0.0; d * k];
    let r2 = eval::kmeans(view, k, &p, &mut a2, Some(&mut c2), &mut w).unwrap();
    assert_eq!((a.clone(), c.clone(), r), (a2, c2, r2));
    // f32 data: same algorithm (f64 accumulation); on separated blobs same labels.
    let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let mut a3 = vec![0u32; n];
    let mut c3 = vec![0.0f32; d * k];
    eval::kmeans(
        MatRef::col_major(&x32, d, n).unwrap(),
        k,
        &p,
        &mut a3,
        Some(&mut c3),
        &mut w,
    )
    .unwrap();
    let truth: Vec<u32> = a.clone();
    let mut wa = vec![0u8; eval::clustering_accuracy_workspace(k, k).unwrap()];
    assert_eq!(
        eval::clustering_accuracy(&truth, &a3, k, k, &mut wa).unwrap(),
        1.0
    );
}

#[test]
fn errors_leave_outputs_untouched() {
    let x = [0.0, 1.0, 2.0, 3.0];
    let m = MatRef::col_major(&x, 1, 4).unwrap();
    let p = KMeansParams::default();
    let mut w = vec![0u8; eval::kmeans_workspace(1, 4, 4, &p).unwrap()];
    let mut a = [9u32; 4];
    let mut c = [9.0; 2];
    let call = |m: MatRef<'_, f64>,
                k: usize,
                p: &KMeansParams,
                a: &mut [u32],
                c: &mut [f64],
                w: &mut [u8]| { eval::kmeans(m, k, p, a, Some(c), w) };
    assert_eq!(
        call(m, 5, &p, &mut a, &mut c, &mut w),
        Err(Error::BadParameter)
    );
    assert_eq!(
        call(m, 0, &p, &mut a, &mut c, &mut w),
        Err(Error::ZeroDimension)
    );
    let bad = KMeansParams { restarts: 0, ..p };
    assert_eq!(
        call(m, 2, &bad, &mut a, &mut c, &mut w),
        Err(Error::BadParameter)
    );
    let bad = KMeansParams { tol: f64::NAN, ..p };
    assert_eq!(
        call(m, 2, &bad, &mut a, &mut c, &mut w),
        Err(Error::BadParameter)
    );
    assert_eq!(
        call(m, 2, &p, &mut a[..3], &mut c, &mut w),
        Err(Error::DimensionMismatch)
    );
    assert_eq!(
        call(m, 3, &p, &mut a, &mut c, &mut w),
        Err(Error::DimensionMismatch) // centroids hold d*k = 3 values, not 2
    );
    let nan = [0.0, f64::NAN, 2.0, 3.0];
    assert_eq!(
        call(
            MatRef::col_major(&nan, 1, 4).unwrap(),
            2,
            &p,
            &mut a,
            &mut c,
            &mut w
        ),
        Err(Error::NonFiniteInput)
    );
    let need = eval::kmeans_workspace(1, 4, 2, &p).unwrap();
    assert_eq!(
        call(m, 2, &p, &mut a, &mut c, &mut w[..need - 1]),
        Err(Error::WorkspaceTooSmall)
    );
    assert_eq!(a, [9; 4]);
    assert_eq!(c, [9.0; 2]);
    assert_eq!(
        eval::kmeans_workspace(usize::MAX, 2, 2, &p),
        Err(Error::SizeOverflow)
    );
}
