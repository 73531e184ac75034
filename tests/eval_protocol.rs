//! The evaluation protocol (`eval::evaluate_protocol`, `evaluate_split`,
//! `cross_validate`, `mean_std`, `summarize_scores`): folds partition the
//! labeled items and are stratified, hidden labels never reach the fit
//! callback, the clearly right candidate wins, mean/std agree with a direct
//! computation, the protocol's scores are those of the split routines called
//! by hand, and every bad input gives its status with the outputs untouched.

#![allow(clippy::needless_range_loop)] // item indices address several arrays

use mvnmf::eval::{self, CvParams, EvalParams, ProtocolParams, SplitScores, UNLABELED};
use mvnmf::linalg::mat::MatRef;
use mvnmf::Error;

/// A portable LCG in [0, 1).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `n` items of `c` classes (shuffled), features `d × n`: a class template
/// plus noise of size `noise`.
fn dataset(n: usize, c: usize, d: usize, noise: f64, seed: u64) -> (Vec<u32>, Vec<f64>) {
    let mut g = Lcg(seed);
    let labels: Vec<u32> = (0..n).map(|j| ((j * 7 + j / 5) % c) as u32).collect();
    let templ: Vec<f64> = (0..d * c).map(|_| 4.0 * g.next()).collect();
    let mut x = vec![0.0; d * n];
    for j in 0..n {
        for i in 0..d {
            x[i + j * d] = templ[i + labels[j] as usize * d] + noise * g.next();
        }
    }
    (labels, x)
}

/// Hides the labels of all but every `keep`-th item.
fn partly_labeled(labels: &[u32], keep: usize) -> Vec<u32> {
    labels
        .iter()
        .enumerate()
        .map(|(j, &l)| if j % keep == 0 { l } else { UNLABELED })
        .collect()
}

fn cv_ws(k: usize, n: usize, c: usize, cands: usize, p: &CvParams) -> Vec<u8> {
    vec![0u8; eval::cross_validate_workspace(k, n, c, cands, p).unwrap()]
}

#[test]
fn mean_std_is_numpys() {
    let mut g = Lcg(3);
    for n in [1usize, 2, 5, 17] {
        let x: Vec<f64> = (0..n).map(|_| 100.0 * g.next() - 30.0).collect();
        let (m, s) = eval::mean_std(&x).unwrap();
        // Direct: numpy's definition, summed another way (by pairs).
        let direct_m = x.iter().sum::<f64>() / n as f64;
        let var = x.iter().map(|v| (v - direct_m).powi(2)).sum::<f64>() / n as f64;
        assert!((m - direct_m).abs() <= 1e-12 * (1.0 + direct_m.abs()));
        assert!((s - var.sqrt()).abs() <= 1e-12 * (1.0 + s));
        // Population std: sqrt(E[x²] − m²) agrees to rounding.
        let e2 = x.iter().map(|v| v * v).sum::<f64>() / n as f64;
        assert!((s * s - (e2 - m * m)).abs() <= 1e-9 * (1.0 + e2));
    }
    assert_eq!(eval::mean_std(&[2.0, 4.0]).unwrap(), (3.0, 1.0));
    assert_eq!(eval::mean_std(&[]), Err(Error::ZeroDimension));
    assert_eq!(eval::mean_std(&[1.0, f64::NAN]), Err(Error::NonFiniteInput));
}

#[test]
fn summaries_are_mean_std_of_each_column() {
    let mut g = Lcg(9);
    let (nf, ns) = (3, 4);
    let scores: Vec<SplitScores> = (0..nf * ns)
        .map(|i| SplitScores {
            knn_accuracy: g.next(),
            kmeans_accuracy: g.next(),
            kmeans_nmi: g.next(),
            knn_k: 9 - i % 3,
        })
        .collect();
    let mut out = vec![eval::ScoreSummary::default(); nf];
    eval::summarize_scores(&scores, ns, &mut out).unwrap();
    for f in 0..nf {
        let row = &scores[f * ns..(f + 1) * ns];
        let col = |get: fn(&SplitScores) -> f64| {
            eval::mean_std(&row.iter().map(get).collect::<Vec<_>>()).unwrap()
        };
        assert_eq!((out[f].knn_mean, out[f].knn_std), col(|s| s.knn_accuracy));
        assert_eq!(
            (out[f].kmeans_accuracy_mean, out[f].kmeans_accuracy_std),
            col(|s| s.kmeans_accuracy)
        );
        assert_eq!(
            (out[f].kmeans_nmi_mean, out[f].kmeans_nmi_std),
            col(|s| s.kmeans_nmi)
        );
        assert_eq!(out[f].knn_k_min, row.iter().map(|s| s.knn_k).min().unwrap());
    }
    let before = out.clone();
    assert_eq!(
        eval::summarize_scores(&scores[1..], ns, &mut out),
        Err(Error::DimensionMismatch)
    );
    assert_eq!(
        eval::summarize_scores(&scores, 0, &mut out),
        Err(Error::ZeroDimension)
    );
    assert_eq!(out, before);
}

/// A fit callback of `cross_validate`, as a trait object.
type CvFitFn<'a> = dyn FnMut(&eval::CvFit<'_>, &mut [f64]) -> Result<(), Error> + 'a;

/// Every call of the fit callback, as the callback saw it.
struct Seen {
    candidate: usize,
    fold: usize,
    labels: Vec<u32>,
}

#[test]
fn folds_partition_the_labeled_items_and_are_stratified() {
    // Class sizes 31, 23, 2 and one class with a single labeled item: the
    // small classes are smaller than the number of folds.
    let n = 150;
    let mut labels = vec![UNLABELED; n];
    let mut truth = vec![0u32; n];
    for j in 0..n {
        truth[j] = (j % 4) as u32;
    }
    let mut counts = [0usize; 4];
    for j in 0..n {
        let c = truth[j] as usize;
        let cap = [31, 23, 2, 1][c];
        if counts[c] < cap && j % 3 != 1 {
            labels[j] = truth[j];
            counts[c] += 1;
        }
    }
    let labeled: Vec<usize> = (0..n).filter(|&j| labels[j] != UNLABELED).collect();
    let (k, c) = (3, 4);
    for folds in [2usize, 3, 5] {
        let p = CvParams {
            folds,
            seed: 11,
            knn: eval::KnnParams {
                k: 3,
                ..Default::default()
            },
        };
        let grid = [0.5, 1.0];
        let mut scores = vec![0.0; 2];
        let mut seen = Vec::new();
        let mut w = cv_ws(k, n, c, 2, &p);
        eval::cross_validate(&labels, c, k, &grid, 1, &p, &mut scores, &mut w, |r, v| {
            seen.push(Seen {
                candidate: r.candidate,
                fold: r.fold,
                labels: r.labels.to_vec(),
            });
            assert_eq!(r.params, &grid[r.candidate..r.candidate + 1]);
            for j in 0..n {
                for i in 0..k {
                    v[i + j * k] = truth[j] as f64 * (i + 1) as f64 + 0.01 * j as f64;
                }
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(seen.len(), 2 * folds);
        // The held-out fold of each call: labeled items whose label is hidden.
        let mut fold_of = vec![usize::MAX; n];
        for s in seen.iter().filter(|s| s.candidate == 0) {
            for &j in &labeled {
                if s.labels[j] == UNLABELED {
                    assert_eq!(fold_of[j], usize::MAX, "item {j} held out twice");
                    fold_of[j] = s.fold;
                }
            }
        }
        // A partition of the labeled items into `folds` non-empty folds...
        for &j in &labeled {
            assert!(fold_of[j] < folds, "labeled item {j} never held out");
        }
        let sizes: Vec<usize> = (0..folds)
            .map(|f| labeled.iter().filter(|&&j| fold_of[j] == f).count())
            .collect();
        assert!(sizes.iter().all(|&s| s > 0), "{sizes:?}");
        assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1);
        // ... stratified: each class's counts differ by at most one per fold.
        for cl in 0..4u32 {
            let per: Vec<usize> = (0..folds)
                .map(|f| {
                    labeled
                        .iter()
                        .filter(|&&j| truth[j] == cl && fold_of[j] == f)
                        .count()
                })
                .collect();
            assert!(
                per.iter().max().unwrap() - per.iter().min().unwrap() <= 1,
                "class {cl}: {per:?}"
            );
        }
        // Every candidate sees the same folds.
        for s in seen.iter().filter(|s| s.candidate == 1) {
            for &j in &labeled {
                assert_eq!(s.labels[j] == UNLABELED, fold_of[j] == s.fold);
            }
        }
        // Both candidates got the same encoding on the same folds.
        assert_eq!(scores[0], scores[1]);
        assert!(scores[0] > 0.0 && scores[0] <= 1.0);
    }
}

#[test]
fn hidden_labels_never_reach_the_callback() {
    let (labels_all, _) = dataset(90, 3, 4, 1.0, 5);
    let labels = partly_labeled(&labels_all, 2);
    let n = labels.len();
    let n_labeled = labels.iter().filter(|&&l| l != UNLABELED).count();
    let p = CvParams::default();
    let (k, c) = (2, 3);
    let mut w = cv_ws(k, n, c, 3, &p);
    let mut scores = vec![0.0; 3];
    let mut calls = 0;
    eval::cross_validate(&labels, c, k, &[], 0, &p, &mut scores, &mut w, |r, v| {
        calls += 1;
        let visible = r.labels.iter().filter(|&&l| l != UNLABELED).count();
        // One fold (a third of the labeled items, ± 1) is hidden.
        assert!(visible < n_labeled && visible + n_labeled / 3 + 1 >= n_labeled);
        for j in 0..n {
            if labels[j] == UNLABELED {
                assert_eq!(r.labels[j], UNLABELED, "an unlabeled item's class leaked");
            } else {
                assert!(r.labels[j] == labels[j] || r.labels[j] == UNLABELED);
            }
        }
        v.fill(1.0);
        Ok(())
    })
    .unwrap();
    assert_eq!(calls, 3 * p.folds);

    // The protocol: the fit sees the labeled items' classes only.
    let pp = ProtocolParams {
        splits: 2,
        ..Default::default()
    };
    let fr = [0.2, 0.5];
    let mut w = vec![0u8; eval::evaluate_protocol_workspace(k, n, c, 2, &pp).unwrap()];
    let mut out = vec![SplitScores::default(); 4];
    let mut g = Lcg(1);
    eval::evaluate_protocol(&labels_all, c, &fr, k, &pp, &mut out, &mut w, |r, v| {
        for j in 0..n {
            assert_eq!(r.labels[j] != UNLABELED, r.labeled[j] == 1);
            if r.labeled[j] == 1 {
                assert_eq!(r.labels[j], labels_all[j]);
            }
        }
        for cl in 0..3u32 {
            let nc = labels_all.iter().filter(|&&l| l == cl).count();
            let got = r.labels.iter().filter(|&&l| l == cl).count();
            assert_eq!(got, (r.fraction * nc as f64).round() as usize);
        }
        assert_eq!(r.seed, pp.seed + r.split as u64);
        v.iter_mut().for_each(|x| *x = g.next());
        Ok(())
    })
    .unwrap();
}

#[test]
fn the_clearly_right_candidate_wins() {
    let (truth, x) = dataset(120, 4, 6, 0.3, 8);
    let labels = partly_labeled(&truth, 3);
    let n = truth.len();
    let (k, c) = (6, 4);
    let mut noise = Lcg(77);
    let noise: Vec<f64> = (0..k * n).map(|_| 10.0 * noise.next()).collect();
    // Candidate weight w: encoding = w·X + (1 − w)·noise. Only w = 1 keeps the
    // classes apart; the fit never reads a label.
    let grid = [0.0, 0.05, 1.0, 0.1];
    let p = CvParams {
        folds: 4,
        ..Default::default()
    };
    let mut w = cv_ws(k, n, c, 4, &p);
    let mut scores = vec![0.0; 4];
    let best = eval::cross_validate(&labels, c, k, &grid, 1, &p, &mut scores, &mut w, |r, v| {
        let wt = r.params[0];
        for t in 0..k * n {
            v[t] = wt * x[t] + (1.0 - wt) * noise[t];
        }
        Ok(())
    })
    .unwrap();
    assert_eq!(best, 2, "{scores:?}");
    assert!(scores[2] > 0.95, "{scores:?}");
    assert!(scores[0] < 0.6, "{scores:?}");
    // Ties go to the lowest index: every candidate the same.
    let best = eval::cross_validate(&labels, c, k, &grid, 1, &p, &mut scores, &mut w, |_, v| {
        v.copy_from_slice(&x);
        Ok(())
    })
    .unwrap();
    assert_eq!(best, 0);
    assert!(scores.iter().all(|&s| s == scores[0]));
}

#[test]
fn cross_validation_errors_leave_scores_untouched() {
    let (truth, x) = dataset(60, 3, 4, 0.5, 2);
    let labels = partly_labeled(&truth, 2);
    let n = truth.len();
    let (k, c) = (4, 3);
    let p = CvParams::default();
    let grid = [1.0, 2.0];
    let need = eval::cross_validate_workspace(k, n, c, 2, &p).unwrap();
    let fill = |_: &eval::CvFit<'_>, v: &mut [f64]| -> Result<(), Error> {
        v.copy_from_slice(&x);
        Ok(())
    };
    let run = |labels: &[u32],
               c: usize,
               k: usize,
               grid: &[f64],
               p: &CvParams,
               cands: usize,
               bytes: usize,
               fit: &mut CvFitFn<'_>| {
        let mut scores = vec![-5.0; cands];
        let mut w = vec![0u8; bytes];
        let r = eval::cross_validate(labels, c, k, grid, 1, p, &mut scores, &mut w, |a, b| {
            fit(a, b)
        });
        assert!(
            scores.iter().all(|&s| s == -5.0),
            "outputs written on error"
        );
        r
    };
    let mut ok = fill;
    assert_eq!(
        run(&labels, c, k, &grid, &p, 2, need - 1, &mut ok),
        Err(Error::WorkspaceTooSmall)
    );
    assert_eq!(
        run(&labels, c, 0, &grid, &p, 2, need, &mut ok),
        Err(Error::ZeroDimension)
    );
    assert_eq!(
        run(&labels, c, k, &grid, &p, 0, need, &mut ok),
        Err(Error::ZeroDimension)
    );
    assert_eq!(
        run(&labels, c, k, &grid[..1], &p, 2, need, &mut ok),
        Err(Error::DimensionMismatch)
    );
    assert_eq!(
        run(&labels, c, k, &[1.0, f64::NAN], &p, 2, need, &mut ok),
        Err(Error::NonFiniteInput)
    );
    let mut bad = labels.clone();
    bad[0] = 3;
    assert_eq!(
        run(&bad, c, k, &grid, &p, 2, need, &mut ok),
        Err(Error::BadLabel)
    );
    let p1 = CvParams { folds: 1, ..p };
    assert_eq!(
        run(&labels, c, k, &grid, &p1, 2, need, &mut ok),
        Err(Error::BadParameter)
    );
    let few: Vec<u32> = (0..n)
        .map(|j| if j < 2 { truth[j] } else { UNLABELED })
        .collect();
    assert_eq!(
        run(&few, c, k, &grid, &p, 2, need, &mut ok),
        Err(Error::TooFewLabeled)
    );
    // The callback fails (C: a nonzero return) in the middle of the grid.
    let mut calls = 0;
    let mut cancel = |r: &eval::CvFit<'_>, v: &mut [f64]| {
        calls += 1;
        if r.candidate == 1 {
            return Err(Error::Cancelled);
        }
        v.copy_from_slice(&x);
        Ok(())
    };
    assert_eq!(
        run(&labels, c, k, &grid, &p, 2, need, &mut cancel),
        Err(Error::Cancelled)
    );
    assert_eq!(calls, p.folds + 1);
    // A non-finite encoding.
    let mut nan = |_: &eval::CvFit<'_>, v: &mut [f64]| {
        v.fill(f64::NAN);
        Ok(())
    };
    assert_eq!(
        run(&labels, c, k, &grid, &p, 2, need, &mut nan),
        Err(Error::NonFiniteInput)
    );
    // And the same call with a good callback and enough workspace works.
    let mut scores = vec![0.0; 2];
    let mut w = vec![0u8; need];
    eval::cross_validate(&labels, c, k, &grid, 1, &p, &mut scores, &mut w, fill).unwrap();
}

#[test]
fn protocol_scores_are_the_split_routines_called_by_hand() {
    let (labels, x) = dataset(80, 4, 5, 2.0, 4);
    let n = labels.len();
    let (k, c) = (5, 4);
    let pp = ProtocolParams {
        splits: 3,
        seed: 40,
        eval: EvalParams {
            knn: eval::KnnParams {
                k: 3,
                ..Default::default()
            },
            ..Default::default()
        },
    };
    let fr = [0.1, 0.3, 0.6];
    let need = eval::evaluate_protocol_workspace(k, n, c, fr.len(), &pp).unwrap();
    let mut w = vec![0u8; need];
    let mut out = vec![SplitScores::default(); fr.len() * pp.splits];
    let mut fits = 0;
    // An "unsupervised" fit: writes the encoding at the first fraction of each
    // split only; the buffer keeps it for the other fractions.
    eval::evaluate_protocol(&labels, c, &fr, k, &pp, &mut out, &mut w, |r, v| {
        if r.fraction_index == 0 {
            fits += 1;
            for t in 0..k * n {
                v[t] = x[t] * (1.0 + r.split as f64);
            }
        }
        Ok(())
    })
    .unwrap();
    assert_eq!(fits, pp.splits);
    for s in 0..pp.splits {
        let seed = pp.seed + s as u64;
        let v: Vec<f64> = x.iter().map(|t| t * (1.0 + s as f64)).collect();
        for (f, &fraction) in fr.iter().enumerate() {
            let mut mask = vec![false; n];
            let mut sw = vec![0u8; eval::stratified_split_workspace(n).unwrap()];
            eval::stratified_split(&labels, c, fraction, seed, &mut mask, &mut sw).unwrap();
            let mut e = pp.eval;
            e.kmeans.seed = seed;
            let mut ew = vec![0u8; eval::evaluate_split_workspace(k, n, c, &e).unwrap()];
            let direct = eval::evaluate_split(
                MatRef::col_major(&v, k, n).unwrap(),
                &labels,
                c,
                &mask,
                &e,
                &mut ew,
            )
            .unwrap();
            assert_eq!(
                out[f * pp.splits + s],
                direct,
                "split {s}, fraction {fraction}"
            );
        }
    }
    // 10 % of 20 items per class = 2 labeled per class, 8 in all: k = 3 is
    // kept; the scores are fractions of the test items.
    for r in &out {
        assert_eq!(r.knn_k, 3);
        for a in [r.knn_accuracy, r.kmeans_accuracy, r.kmeans_nmi] {
            assert!((0.0..=1.0).contains(&a));
        }
    }

    // Errors leave the scores untouched.
    let before = out.clone();
    let mut fill = |_: &eval::ProtocolFit<'_>, v: &mut [f64]| -> Result<(), Error> {
        v.copy_from_slice(&x);
        Ok(())
    };
    let mut short = vec![0u8; need - 1];
    assert_eq!(
        eval::evaluate_protocol(&labels, c, &fr, k, &pp, &mut out, &mut short, &mut fill),
        Err(Error::WorkspaceTooSmall)
    );
    assert_eq!(
        eval::evaluate_protocol(
            &labels,
            c,
            &[0.1, 1.0, 0.5],
            k,
            &pp,
            &mut out,
            &mut w,
            &mut fill
        ),
        Err(Error::BadParameter)
    );
    assert_eq!(
        eval::evaluate_protocol(&labels, c, &fr, k, &pp, &mut out[1..], &mut w, &mut fill),
        Err(Error::DimensionMismatch)
    );
    let mut bad = labels.clone();
    bad[3] = UNLABELED;
    assert_eq!(
        eval::evaluate_protocol(&bad, c, &fr, k, &pp, &mut out, &mut w, &mut fill),
        Err(Error::BadLabel)
    );
    let p0 = ProtocolParams { splits: 0, ..pp };
    assert_eq!(
        eval::evaluate_protocol(&labels, c, &fr, k, &p0, &mut out, &mut w, &mut fill),
        Err(Error::ZeroDimension)
    );
    let mut calls = 0;
    assert_eq!(
        eval::evaluate_protocol(&labels, c, &fr, k, &pp, &mut out, &mut w, |r, v| {
            calls += 1;
            if r.split == 1 {
                return Err(Error::Cancelled);
            }
            v.copy_from_slice(&x);
            Ok(())
        }),
        Err(Error::Cancelled)
    );
    assert_eq!(calls, fr.len() + 1);
    assert_eq!(out, before);
}

#[test]
fn evaluate_split_knn_rule_and_errors() {
    let (labels, x) = dataset(40, 2, 3, 0.5, 6);
    let n = labels.len();
    let (k, c) = (3, 2);
    // Two labeled items per class: fewer than k = 9, so k = 2 (smallest class).
    let mut mask = vec![false; n];
    let mut per = [0; 2];
    for j in 0..n {
        if per[labels[j] as usize] < 2 {
            per[labels[j] as usize] += 1;
            mask[j] = true;
        }
    }
    let e = EvalParams::default();
    let need = eval::evaluate_split_workspace(k, n, c, &e).unwrap();
    let mut w = vec![0u8; need];
    let v = MatRef::col_major(&x, k, n).unwrap();
    let r = eval::evaluate_split(v, &labels, c, &mask, &e, &mut w).unwrap();
    assert_eq!(r.knn_k, 2);
    let masked: Vec<u32> = (0..n)
        .map(|j| if mask[j] { labels[j] } else { UNLABELED })
        .collect();
    assert_eq!(eval::knn_k_for(&masked, c, 9), 2);
    assert_eq!(eval::knn_k_for(&labels, c, 9), 9);
    // kNN accuracy against knn_predict + accuracy called directly.
    let test: Vec<usize> = (0..n).filter(|&j| !mask[j]).collect();
    let q: Vec<f64> = test
        .iter()
        .flat_map(|&j| x[j * k..(j + 1) * k].to_vec())
        .collect();
    let mut pred = vec![0u32; test.len()];
    let kp = eval::KnnParams {
        k: 2,
        ..Default::default()
    };
    let mut kw = vec![0u8; eval::knn_predict_workspace(&kp, c).unwrap()];
    eval::knn_predict(
        v,
        &masked,
        MatRef::col_major(&q, k, test.len()).unwrap(),
        c,
        &kp,
        &mut pred,
        &mut kw,
    )
    .unwrap();
    let truth: Vec<u32> = test.iter().map(|&j| labels[j]).collect();
    assert_eq!(r.knn_accuracy, eval::accuracy(&pred, &truth, None));

    let mut short = vec![0u8; need - 1];
    assert_eq!(
        eval::evaluate_split(v, &labels, c, &mask, &e, &mut short),
        Err(Error::WorkspaceTooSmall)
    );
    assert_eq!(
        eval::evaluate_split(v, &labels, c, &vec![true; n], &e, &mut w),
        Err(Error::ZeroDimension)
    );
    assert_eq!(
        eval::evaluate_split(v, &labels, c, &vec![false; n], &e, &mut w),
        Err(Error::TooFewLabeled)
    );
    assert_eq!(
        eval::evaluate_split(v, &labels, 1, &mask, &e, &mut w),
        Err(Error::BadLabel)
    );
    assert_eq!(
        eval::evaluate_split(v, &labels, c, &mask[1..], &e, &mut w),
        Err(Error::DimensionMismatch)
    );

    // The C entry point: the same scores from 0/1 flags; a flag neither 0 nor 1
    // is `BAD_PARAMETER` (its documented status, not the mask reader's
    // `BAD_LABEL`) with `*scores` untouched; a NULL `labeled` is `NULL_POINTER`.
    use mvnmf::ffi::{mvnmf_evaluate_split, mvnmf_split_scores, mvnmf_status as S};
    let mut flags: Vec<u8> = mask.iter().map(|&m| m as u8).collect();
    let call = |flags: *const u8, s: &mut mvnmf_split_scores, w: &mut [u8]| unsafe {
        let wp = w.as_mut_ptr().cast();
        let (l, nul) = (labels.as_ptr(), core::ptr::null());
        mvnmf_evaluate_split(x.as_ptr(), k, n, l, c, flags, nul, s, wp, w.len())
    };
    let mut s = mvnmf_split_scores::default();
    assert_eq!(call(flags.as_ptr(), &mut s, &mut w), S::Ok);
    assert_eq!(s, r);
    flags[n / 2] = 2;
    let before = s;
    assert_eq!(call(flags.as_ptr(), &mut s, &mut w), S::BadParameter);
    assert_eq!(s, before);
    assert_eq!(call(core::ptr::null(), &mut s, &mut w), S::NullPointer);
    assert_eq!(s, before);
}

/// Issue 31, E6: finite values anywhere in the `f64` range give a finite mean and
/// deviation (they overflowed to ±∞ near `DBL_MAX` and ±1e200, and the deviation of
/// values near 1e-300 underflowed to 0); ordinary data keeps the same bits.
#[test]
fn e6_mean_std_of_extreme_finite_values() {
    let m = f64::MAX;
    assert_eq!(eval::mean_std(&[m, m, m]).unwrap(), (m, 0.0));
    assert_eq!(eval::mean_std(&[m, -m]).unwrap(), (0.0, m));
    assert_eq!(eval::mean_std(&[-m, -m]).unwrap(), (-m, 0.0));
    // a, −a, a: mean a/3, std a·√(8/9).
    for a in [1e200, 1e300, 1e-300, 2f64.powi(-1060)] {
        let (mean, std) = eval::mean_std(&[a, -a, a]).unwrap();
        assert!(mean.is_finite() && std.is_finite());
        assert!((mean - a / 3.0).abs() <= 1e-15 * a, "{a}: mean {mean}");
        let want = a * (8.0f64 / 9.0).sqrt();
        assert!(
            (std - want).abs() <= 1e-15 * a + 1e-320,
            "{a}: std {std}, want {want}"
        );
    }
    // Many values near DBL_MAX: a sum would overflow; the mean stays in [min, max].
    let x: Vec<f64> = (0..1000)
        .map(|i| m * (1.0 - (i % 7) as f64 * 1e-3))
        .collect();
    let (mean, std) = eval::mean_std(&x).unwrap();
    assert!(mean.is_finite() && std.is_finite() && mean <= m && std <= 3.5e-3 * m);
    // Inside 2^±500 the passes are the plain ones: the same bits as the direct formula.
    let mut g = Lcg(9);
    let x: Vec<f64> = (0..33).map(|_| 1e100 * (g.next() - 0.5)).collect();
    let n = x.len() as f64;
    let dm = x.iter().fold(0.0, |a, v| a + v) / n;
    let dv = x.iter().fold(0.0, |a, v| a + (v - dm) * (v - dm)) / n;
    assert_eq!(eval::mean_std(&x).unwrap(), (dm, dv.sqrt()));
    // Through the C ABI.
    let (mut cm, mut cs) = (0.0, 0.0);
    let s = unsafe { mvnmf::ffi::mvnmf_mean_std([m, m, -m].as_ptr(), 3, &mut cm, &mut cs) };
    assert_eq!(s, mvnmf::ffi::mvnmf_status::Ok);
    assert!(cm.is_finite() && cs.is_finite());
    assert!((cm - m / 3.0).abs() <= 1e-15 * m);
}
