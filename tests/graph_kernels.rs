//! Kernels, fused neighbour search and MKL weights against brute-force references.

#[path = "graph_reference.rs"]
mod reference;

use mvnmf::data::ViewSet;
use mvnmf::similarity::{self, Bandwidth, KnnParams, MklParams, Scope, NO_NEIGHBOR};
use mvnmf::{Error, View};
use reference::*;

/// Three views of 37 items: dense nonnegative with some all-zero columns.
fn data() -> (Vec<TestView>, Vec<u32>) {
    let n = 37;
    let mut v0 = random_view(11, n, 0.7, 1);
    let v1 = random_view(6, n, 0.9, 2);
    let mut v2 = random_view(23, n, 0.3, 3);
    // All-zero items in two views (a missing view).
    for i in 0..11 {
        v0.x[i + 5 * 11] = 0.0;
    }
    for i in 0..23 {
        v2.x[i + 9 * 23] = 0.0;
        v2.x[i + 10 * 23] = 0.0;
    }
    let (v0, v2) = (TestView::new(11, n, v0.x), TestView::new(23, n, v2.x));
    let mut g = Lcg(7);
    let labels = (0..n)
        .map(|j| if j % 3 == 1 { U } else { g.below(3) as u32 })
        .collect();
    (vec![v0, v1, v2], labels)
}

fn kernel_sets() -> Vec<[similarity::Kernel; 3]> {
    use similarity::Kernel::*;
    vec![
        [Linear, Linear, Linear],
        [Rbf(Bandwidth::Gamma(0.7)), Linear, ChiSquared],
        [Intersection, Rbf(Bandwidth::Gamma(2.0)), Linear],
        [ChiSquared, Intersection, Rbf(Bandwidth::Median)],
    ]
}

fn views_of<'a>(tv: &'a [TestView], sparse: [bool; 3]) -> Vec<View<'a, f64>> {
    tv.iter()
        .zip(sparse)
        .map(|(v, s)| if s { v.csc() } else { v.dense() })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn run_knn(
    views: &[View<'_, f64>],
    kernels: &[similarity::Kernel],
    eta: &[f64],
    labels: &[u32],
    c: usize,
    scope: Scope<'_>,
    k: usize,
    block: usize,
) -> Result<(Vec<usize>, Vec<f64>), Error> {
    let n = views[0].cols();
    let p = KnnParams {
        k,
        block,
        ..KnnParams::default()
    };
    let need = similarity::fused_knn_workspace::<f64>(
        (0..views.len()).map(|v| views.shape(v)),
        kernels,
        c,
        &p,
    )
    .unwrap();
    let mut w = vec![0u8; need];
    let (mut nb, mut s) = (vec![7usize; n * k], vec![7.0; n * k]);
    similarity::fused_knn(
        views, kernels, eta, labels, c, scope, &p, &mut nb, &mut s, &mut w,
    )?;
    Ok((nb, s))
}

fn gammas(
    views: &[View<'_, f64>],
    kernels: &[similarity::Kernel],
    labels: &[u32],
    c: usize,
) -> Vec<f64> {
    let need = similarity::resolve_bandwidths_workspace::<f64>(
        (0..views.len()).map(|v| views.shape(v)),
        kernels,
        c,
        0,
    )
    .unwrap();
    let mut w = vec![0u8; need];
    let mut g = vec![0.0; views.len()];
    similarity::resolve_bandwidths(views, kernels, labels, c, 0, &mut g, &mut w).unwrap();
    g
}

#[test]
fn median_heuristic_is_the_exact_lower_median_over_labeled_pairs() {
    let (tv, labels) = data();
    for sparse in [false, true] {
        let views = views_of(&tv, [sparse; 3]);
        let ks = [similarity::Kernel::Rbf(Bandwidth::Median); 3];
        let g = gammas(&views, &ks, &labels, 3);
        for v in 0..3 {
            let med = median_sqdist(&tv[v], &labels);
            assert!(
                (g[v] * med - 1.0).abs() < 1e-12,
                "view {v} sparse {sparse}: γ {} vs 1/{med}",
                g[v]
            );
        }
    }
    // Many pairs: the radix passes (more than the 8192 collected values) agree too.
    let n = 300;
    let tv = random_view(5, n, 1.0, 11);
    let labels: Vec<u32> = (0..n)
        .map(|j| if j % 10 == 0 { U } else { (j % 4) as u32 })
        .collect();
    let views = [tv.dense()];
    let g = gammas(
        &views,
        &[similarity::Kernel::Rbf(Bandwidth::Median)],
        &labels,
        4,
    );
    let med = median_sqdist(&tv, &labels);
    assert!((g[0] * med - 1.0).abs() < 1e-12, "{} {}", g[0], 1.0 / med);
}

#[test]
fn fused_knn_equals_brute_force_dense_and_sparse() {
    let (tv, labels) = data();
    let n = labels.len();
    let trefs: Vec<&TestView> = tv.iter().collect();
    let eta = [0.5, 0.2, 0.3];
    for ks in kernel_sets() {
        for sparse in [[false; 3], [true; 3], [false, true, false]] {
            let views = views_of(&tv, sparse);
            let gam = gammas(&views, &ks, &labels, 3);
            let sim = |i: usize, j: usize| fused(&trefs, &ks, &gam, &eta, i, j);
            let qmask: Vec<bool> = (0..n).map(|j| j % 4 != 0).collect();
            let cmask: Vec<bool> = (0..n).map(|j| j % 5 != 2).collect();
            let scopes: Vec<(Scope<'_>, usize)> = vec![
                (Scope::All, 6),
                (Scope::Labeled, 4),
                (Scope::SameClass, 2),
                (Scope::OtherClass, 3),
                (
                    Scope::Masked {
                        query: &qmask,
                        candidate: &cmask,
                    },
                    5,
                ),
            ];
            for (scope, k) in scopes {
                for block in [0, 5, 16] {
                    let (nb, s) = run_knn(&views, &ks, &eta, &labels, 3, scope, k, block).unwrap();
                    for i in 0..n {
                        let li = labels[i];
                        let query = match scope {
                            Scope::All => true,
                            Scope::Masked { query, .. } => query[i],
                            _ => li != U,
                        };
                        let got = &nb[i * k..(i + 1) * k];
                        if !query {
                            assert!(got.iter().all(|&j| j == NO_NEIGHBOR));
                            assert!(s[i * k..(i + 1) * k]
                                .iter()
                                .all(|&x| x == f64::NEG_INFINITY));
                            continue;
                        }
                        let cands = (0..n).filter(|&j| match scope {
                            Scope::All => true,
                            Scope::Labeled => labels[j] != U,
                            Scope::SameClass => labels[j] == li,
                            Scope::OtherClass => labels[j] != U && labels[j] != li,
                            Scope::Masked { candidate, .. } => candidate[j],
                        });
                        let want = top_k(i, k, cands, sim);
                        let wi: Vec<usize> = want.iter().map(|x| x.0).collect();
                        assert_eq!(
                            got,
                            &wi[..],
                            "{ks:?} {sparse:?} {scope:?} block {block} item {i}"
                        );
                        for (p, w) in want.iter().enumerate() {
                            assert!((s[i * k + p] - w.1).abs() < 1e-12);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn ties_break_by_lower_index_and_runs_are_bitwise_identical() {
    // Duplicated items: exact ties in every view.
    let base = random_view(9, 12, 0.8, 5);
    let mut x = base.x.clone();
    for j in [3usize, 7] {
        x.extend_from_slice(base.col(j)); // item 12 = item 3, item 13 = item 7
    }
    x.extend_from_slice(base.col(3)); // item 14 = item 3
    let tv = TestView::new(9, 15, x);
    let views = [tv.dense()];
    let k = 4;
    for ks in [similarity::Kernel::Linear, similarity::Kernel::Intersection] {
        let (nb, s) = run_knn(&views, &[ks], &[1.0], &[], 0, Scope::All, k, 0).unwrap();
        // Item 3's best are its copies 12 and 14 (similarity 1), in index order.
        assert_eq!(&nb[3 * k..3 * k + 2], &[12, 14]);
        assert_eq!(&nb[12 * k..12 * k + 2], &[3, 14]);
        assert!((s[3 * k] - 1.0).abs() < 1e-14 && s[3 * k] == s[3 * k + 1]);
        let (nb2, s2) = run_knn(&views, &[ks], &[1.0], &[], 0, Scope::All, k, 0).unwrap();
        assert_eq!(nb, nb2);
        assert_eq!(
            s.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            s2.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
    }
}

#[test]
fn weighted_fused_kernel_is_bitwise_symmetric_so_copies_tie_exactly() {
    // Items 20 and 31 copy item 4 in every view; the fused kernel with unequal weights, kernels
    // of every kind, dense and sparse, and blocks that put the copies in different blocks (the
    // symmetric traversal computes a pair once, with either item on the row side). Every query's
    // similarities to the copies must be bitwise equal, so the copies appear in index order.
    let n = 40;
    let copies = [4usize, 20, 31];
    let mk = |m: usize, seed: u64| {
        let mut x = random_view(m, n, 0.8, seed).x;
        for &c in &copies[1..] {
            let src: Vec<f64> = x[4 * m..5 * m].to_vec();
            x[c * m..(c + 1) * m].copy_from_slice(&src);
        }
        TestView::new(m, n, x)
    };
    let tv = [mk(13, 21), mk(7, 22), mk(9, 23)];
    let labels: Vec<u32> = (0..n).map(|j| (j % 2) as u32).collect();
    let eta = [0.37, 0.21, 0.42];
    let k = n - 1; // every candidate ranked
    for ks in kernel_sets() {
        for sparse in [[false; 3], [true; 3], [true, false, true]] {
            let views = views_of(&tv, sparse);
            for block in [0, 3, 7] {
                for scope in [Scope::All, Scope::Labeled] {
                    let (nb, s) = run_knn(&views, &ks, &eta, &labels, 2, scope, k, block).unwrap();
                    for i in 0..n {
                        let row = &nb[i * k..(i + 1) * k];
                        let pos: Vec<usize> = copies
                            .iter()
                            .filter(|&&c| c != i)
                            .map(|&c| row.iter().position(|&j| j == c).unwrap())
                            .collect();
                        let what = format!("{ks:?} {sparse:?} block {block} query {i}");
                        assert!(pos.windows(2).all(|w| w[1] == w[0] + 1), "{what}: {row:?}");
                        let sims: Vec<u64> = pos.iter().map(|&p| s[i * k + p].to_bits()).collect();
                        assert!(sims.windows(2).all(|w| w[0] == w[1]), "{what}");
                    }
                }
            }
        }
    }
}

#[test]
#[allow(clippy::needless_range_loop)]
fn class_pairs_equal_brute_force() {
    let (tv, labels) = data();
    let n = labels.len();
    let trefs: Vec<&TestView> = tv.iter().collect();
    let eta = [0.2, 0.5, 0.3];
    for ks in kernel_sets() {
        let views = views_of(&tv, [false, true, false]);
        let gam = gammas(&views, &ks, &labels, 3);
        let kp = 4;
        let p = KnnParams {
            k: kp,
            block: 7,
            ..KnnParams::default()
        };
        let need =
            similarity::class_pairs_workspace::<f64>((0..3).map(|v| views.shape(v)), &ks, 4, &p)
                .unwrap();
        let mut w = vec![0u8; need];
        // Four classes declared, class 3 has no labeled item.
        let (mut pairs, mut s) = (vec![0; 2 * 4 * kp], vec![0.0; 4 * kp]);
        similarity::class_pairs(
            &views[..],
            &ks,
            &eta,
            &labels,
            4,
            &p,
            &mut pairs,
            &mut s,
            &mut w,
        )
        .unwrap();
        for c in 0..3u32 {
            let mut all = vec![];
            for i in (0..n).filter(|&i| labels[i] == c) {
                for j in (0..n).filter(|&j| labels[j] != U && labels[j] != c) {
                    all.push((i, j, fused(&trefs, &ks, &gam, &eta, i, j)));
                }
            }
            all.sort_by(|a, b| {
                b.2.partial_cmp(&a.2)
                    .unwrap()
                    .then((a.0.min(a.1), a.0.max(a.1)).cmp(&(b.0.min(b.1), b.0.max(b.1))))
            });
            for p in 0..kp {
                let q = c as usize * kp + p;
                assert_eq!(
                    (pairs[2 * q], pairs[2 * q + 1]),
                    (all[p].0, all[p].1),
                    "{ks:?} class {c}"
                );
                assert!((s[q] - all[p].2).abs() < 1e-12);
            }
        }
        assert!(pairs[2 * 3 * kp..].iter().all(|&x| x == NO_NEIGHBOR));
    }
}

#[test]
fn knn_errors_have_their_codes_and_leave_outputs_untouched() {
    let (tv, labels) = data();
    let views = views_of(&tv, [false; 3]);
    let ks = [similarity::Kernel::Linear; 3];
    let eta = [1.0, 1.0, 1.0];
    let n = labels.len();
    let try_knn = |labels: &[u32], scope: Scope<'_>, k: usize, eta: &[f64]| {
        let p = KnnParams {
            k,
            block: 0,
            ..KnnParams::default()
        };
        let need =
            similarity::fused_knn_workspace::<f64>((0..3).map(|v| views.shape(v)), &ks, 3, &p)
                .unwrap();
        let mut w = vec![0u8; need];
        let (mut nb, mut s) = (vec![7usize; n * k], vec![7.0; n * k]);
        let r = similarity::fused_knn(
            &views[..],
            &ks,
            eta,
            labels,
            3,
            scope,
            &p,
            &mut nb,
            &mut s,
            &mut w,
        );
        if r.is_err() {
            assert!(nb.iter().all(|&x| x == 7) && s.iter().all(|&x| x == 7.0));
        }
        r
    };
    assert_eq!(
        try_knn(&labels, Scope::All, n, &eta),
        Err(Error::BadParameter)
    );
    assert_eq!(
        try_knn(&labels, Scope::All, 0, &eta),
        Err(Error::BadParameter)
    );
    let mut bad = labels.clone();
    bad[4] = 3;
    assert_eq!(try_knn(&bad, Scope::All, 3, &eta), Err(Error::BadLabel));
    // A class with 3 labeled items cannot give 3 same-class neighbours.
    let mut few = labels.clone();
    let c0: Vec<usize> = (0..n).filter(|&j| few[j] == 0).collect();
    for &j in &c0[3..] {
        few[j] = 1;
    }
    assert_eq!(
        try_knn(&few, Scope::SameClass, 3, &eta),
        Err(Error::TooFewLabeled)
    );
    assert!(try_knn(&few, Scope::SameClass, 2, &eta).is_ok());
    assert_eq!(
        try_knn(&[], Scope::Labeled, 2, &eta),
        Err(Error::TooFewLabeled)
    );
    assert_eq!(
        try_knn(&labels, Scope::All, 3, &[1.0, -1.0, 1.0]),
        Err(Error::BadParameter)
    );
    assert_eq!(
        try_knn(&labels, Scope::All, 3, &[0.0; 3]),
        Err(Error::BadParameter)
    );
    assert_eq!(
        try_knn(&labels, Scope::All, 3, &[1.0; 2]),
        Err(Error::DimensionMismatch)
    );
    let q = vec![true; n];
    let c: Vec<bool> = (0..n).map(|j| j < 3).collect();
    assert_eq!(
        try_knn(
            &labels,
            Scope::Masked {
                query: &q,
                candidate: &c
            },
            3,
            &eta
        ),
        Err(Error::BadParameter)
    );
    // χ² on negative data.
    let mut neg = tv[0].x.clone();
    neg[3] = -0.5;
    let nv = TestView::new(11, n, neg);
    let vs = [nv.dense()];
    let p = KnnParams {
        k: 2,
        block: 0,
        ..KnnParams::default()
    };
    let mut w = vec![0u8; 1 << 20];
    let (mut nb, mut s) = (vec![0; 2 * n], vec![0.0; 2 * n]);
    let r = similarity::fused_knn(
        &vs,
        &[similarity::Kernel::ChiSquared],
        &[1.0],
        &[],
        0,
        Scope::All,
        &p,
        &mut nb,
        &mut s,
        &mut w,
    );
    assert_eq!(r, Err(Error::NegativeInput));
    // Workspace one byte short.
    let need = similarity::fused_knn_workspace::<f64>(
        [vs[0].shape()],
        &[similarity::Kernel::Linear],
        0,
        &p,
    )
    .unwrap();
    let r = similarity::fused_knn(
        &vs[..],
        &[similarity::Kernel::Linear],
        &[1.0],
        &[],
        0,
        Scope::All,
        &p,
        &mut nb,
        &mut s,
        &mut w[..need - 1],
    );
    assert_eq!(r, Err(Error::WorkspaceTooSmall));
}

fn alignment(
    views: &[View<'_, f64>],
    ks: &[similarity::Kernel],
    labels: &[u32],
    c: usize,
    block: usize,
) -> (Vec<f64>, Vec<f64>, f64) {
    let h = views.len();
    let need =
        similarity::alignment_system_workspace::<f64>((0..h).map(|v| views.shape(v)), ks, c, block)
            .unwrap();
    let mut w = vec![0u8; need];
    let (mut g, mut b) = (vec![0.0; h * h], vec![0.0; h]);
    let cst =
        similarity::alignment_system(views, ks, labels, c, block, &mut g, &mut b, &mut w).unwrap();
    (g, b, cst)
}

#[test]
fn alignment_system_equals_the_sum_over_labeled_pairs() {
    let (tv, labels) = data();
    let n = labels.len();
    for ks in kernel_sets() {
        let views = views_of(&tv, [true, false, true]);
        let gam = gammas(&views, &ks, &labels, 3);
        let (g, b, cst) = alignment(&views, &ks, &labels, 3, 6);
        let cnt = |c: u32| labels.iter().filter(|&&l| l == c).count() as f64;
        let (mut g0, mut b0, mut c0) = (vec![0.0; 9], [0.0; 3], 0.0);
        for i in (0..n).filter(|&i| labels[i] != U) {
            for j in (0..n).filter(|&j| labels[j] != U) {
                let same = labels[i] == labels[j];
                let t = if same {
                    1.0 / (cnt(labels[i]) * cnt(labels[i]))
                } else {
                    1.0 / (2.0 * cnt(labels[i]) * cnt(labels[j]))
                };
                let kv: Vec<f64> = (0..3)
                    .map(|v| normalised(&ks[v], gam[v], tv[v].col(i), tv[v].col(j), i == j))
                    .collect();
                for u in 0..3 {
                    for v in 0..3 {
                        g0[u + 3 * v] += t * kv[u] * kv[v];
                    }
                    if same {
                        b0[u] += t * kv[u];
                    }
                }
                if same {
                    c0 += t;
                }
            }
        }
        for q in 0..9 {
            assert!(
                (g[q] - g0[q]).abs() < 1e-12 * g0[q].abs().max(1.0),
                "{ks:?} G {g:?} {g0:?}"
            );
        }
        for q in 0..3 {
            assert!((b[q] - b0[q]).abs() < 1e-12 * b0[q].abs().max(1.0));
        }
        assert!((cst - c0).abs() < 1e-12);
    }
}

#[test]
fn simplex_qp_matches_a_fine_grid() {
    let mut g = Lcg(3);
    for trial in 0..40 {
        let h = 2 + trial % 2;
        let r = 1 + trial % h;
        let f: Vec<f64> = (0..h * r).map(|_| g.uniform() - 0.4).collect();
        let mut a = vec![0.0; h * h];
        for i in 0..h {
            for j in 0..h {
                a[i + j * h] = (0..r).map(|q| f[i + q * h] * f[j + q * h]).sum();
            }
        }
        let b: Vec<f64> = (0..h).map(|_| g.uniform() - 0.3).collect();
        let obj = |e: &[f64]| {
            let mut s = 0.0;
            for i in 0..h {
                for j in 0..h {
                    s += e[i] * a[i + j * h] * e[j];
                }
                s -= 2.0 * b[i] * e[i];
            }
            s
        };
        let mut eta = vec![0.0; h];
        let mut w = vec![0u8; similarity::simplex_qp_workspace(h).unwrap()];
        let rep = similarity::simplex_qp(&a, &b, &mut eta, &mut w).unwrap();
        assert!(rep.kkt_residual < 1e-12, "{rep:?}");
        assert!((eta.iter().sum::<f64>() - 1.0).abs() < 1e-14 && eta.iter().all(|&e| e >= 0.0));
        assert!((obj(&eta) - rep.objective).abs() < 1e-13);
        // Brute force on a grid of step 1/1000 (H = 2) or 1/400 (H = 3).
        let steps = if h == 2 { 1000 } else { 400 };
        let mut best = f64::INFINITY;
        for p in 0..=steps {
            if h == 2 {
                let e = [p as f64 / steps as f64, 1.0 - p as f64 / steps as f64];
                best = best.min(obj(&e));
            } else {
                for q in 0..=steps - p {
                    let e = [
                        p as f64 / steps as f64,
                        q as f64 / steps as f64,
                        (steps - p - q) as f64 / steps as f64,
                    ];
                    best = best.min(obj(&e));
                }
            }
        }
        assert!(
            rep.objective <= best + 1e-14,
            "trial {trial}: qp {} grid {best}",
            rep.objective
        );
        assert!(
            best - rep.objective < 1e-4,
            "trial {trial}: qp {} grid {best}",
            rep.objective
        );
    }
    // Errors.
    let mut e = [0.0; 2];
    let mut w = vec![0u8; similarity::simplex_qp_workspace(2).unwrap()];
    assert_eq!(
        similarity::simplex_qp(&[1.0, 0.5, 0.0, 1.0], &[0.0; 2], &mut e, &mut w),
        Err(Error::BadParameter)
    );
    assert_eq!(
        similarity::simplex_qp(&[1.0, 0.0, 0.0, f64::NAN], &[0.0; 2], &mut e, &mut w),
        Err(Error::NonFiniteInput)
    );
    assert_eq!(
        similarity::simplex_qp(&[], &[], &mut [], &mut w),
        Err(Error::ZeroDimension)
    );
}

/// 3 classes; view 0 carries the classes, views 1 and 2 are noise.
fn informative(n: usize, seed: u64) -> (Vec<TestView>, Vec<u32>) {
    let mut g = Lcg(seed);
    let labels: Vec<u32> = (0..n).map(|j| (j % 3) as u32).collect();
    let m0 = 12;
    let mut x0 = vec![0.0; m0 * n];
    for j in 0..n {
        let c = labels[j] as usize;
        for i in 0..m0 {
            let centre = if i % 3 == c { 1.0 } else { 0.1 };
            x0[i + j * m0] = centre + 0.3 * g.uniform();
        }
    }
    let v1 = random_view(20, n, 1.0, seed + 1);
    let v2 = random_view(7, n, 0.6, seed + 2);
    (vec![TestView::new(m0, n, x0), v1, v2], labels)
}

#[test]
fn mkl_weights_concentrate_on_the_informative_view() {
    use similarity::Kernel::*;
    let n = 90;
    let (tv, full) = informative(n, 21);
    // Half of the items labeled.
    let labels: Vec<u32> = (0..n)
        .map(|j| if j % 2 == 0 { full[j] } else { U })
        .collect();
    for ks in [
        [Linear, Linear, Linear],
        [Rbf(Bandwidth::Median), ChiSquared, Intersection],
    ] {
        for (lambda, floor) in [(0.0, 0.99), (0.01, 0.9), (0.1, 0.6)] {
            let views = views_of(&tv, [false, true, false]);
            let p = MklParams {
                lambda,
                block: 8,
                ..MklParams::default()
            };
            let need = similarity::mkl_weights_workspace::<f64>(
                (0..3).map(|v| views.shape(v)),
                &ks,
                3,
                &p,
            )
            .unwrap();
            let mut w = vec![0u8; need];
            let mut eta = vec![0.0; 3];
            let rep =
                similarity::mkl_weights(&views[..], &ks, &labels, 3, &p, &mut eta, &mut w).unwrap();
            assert!(eta[0] > floor, "{ks:?} λ {lambda}: η = {eta:?} {rep:?}");
            assert!(eta[0] > eta[1] && eta[0] > eta[2]);
            assert!(rep.kkt_residual < 1e-12, "{rep:?}");
            // The loss equals the alignment objective evaluated by brute force.
            let gam = gammas(&views, &ks, &labels, 3);
            let trefs: Vec<&TestView> = tv.iter().collect();
            let cnt = |c: u32| labels.iter().filter(|&&l| l == c).count() as f64;
            let mut loss = rep.ridge * eta.iter().map(|e| e * e).sum::<f64>();
            for i in (0..n).filter(|&i| labels[i] != U) {
                for j in (0..n).filter(|&j| labels[j] != U) {
                    let same = labels[i] == labels[j];
                    let t = if same {
                        1.0 / (cnt(labels[i]) * cnt(labels[i]))
                    } else {
                        1.0 / (2.0 * cnt(labels[i]) * cnt(labels[j]))
                    };
                    let kf = fused(&trefs, &ks, &gam, &eta, i, j);
                    let ideal = if same { 1.0 } else { 0.0 };
                    loss += t * (kf - ideal) * (kf - ideal);
                }
            }
            assert!(
                (loss - rep.loss).abs() < 1e-10 * loss.max(1.0),
                "{loss} {}",
                rep.loss
            );
        }
    }
    // Very large λ: nearly uniform weights.
    let views = views_of(&tv, [false; 3]);
    let ks = [Linear; 3];
    let p = MklParams {
        lambda: 1e6,
        block: 0,
        ..MklParams::default()
    };
    let need = similarity::mkl_weights_workspace::<f64>((0..3).map(|v| views.shape(v)), &ks, 3, &p)
        .unwrap();
    let mut w = vec![0u8; need];
    let mut eta = vec![0.0; 3];
    similarity::mkl_weights(&views[..], &ks, &labels, 3, &p, &mut eta, &mut w).unwrap();
    assert!(eta.iter().all(|&e| (e - 1.0 / 3.0).abs() < 1e-3), "{eta:?}");
    // Errors.
    let bad = MklParams {
        lambda: -1.0,
        block: 0,
        ..MklParams::default()
    };
    assert_eq!(
        similarity::mkl_weights(&views[..], &ks, &labels, 3, &bad, &mut eta, &mut w),
        Err(Error::BadParameter)
    );
    let one: Vec<u32> = (0..n).map(|j| if j == 0 { 0 } else { U }).collect();
    assert_eq!(
        similarity::mkl_weights(&views[..], &ks, &one, 3, &p, &mut eta, &mut w),
        Err(Error::TooFewLabeled)
    );
}
