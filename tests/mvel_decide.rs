//! MVEL's default decisions (`mvel::decide_pu`: per-label positive–unlabeled
//! thresholds, given positives kept) and the per-feature standardisation
//! (`prep::standardize_view`).
//!
//! On real data — `data/yeast-sample`, the first 600 genes of the MULAN
//! yeast set shipped with the project (its 103 features split 79 + 24 into
//! two views as the README does) with a third of each gene's labels given — the decisions are
//! not one constant label set for every item, keep every given positive and
//! add positives beyond them; and the rule's threshold is the analytic PU cut
//! on a case worked by hand. Bad input gives its status with outputs untouched.

mod common;

use common::{yeast_sample, Lcg};
use mvnmf::graph::{fused_graph, fused_graph_workspace, DenseGraph, FusedParams};
use mvnmf::linalg::mat::{MatMut, MatRef};
use mvnmf::models::mvel::{self, MvelParams};
use mvnmf::prep::standardize_view;
use mvnmf::{Dense, Error, View};

const N: usize = 600;

fn scores_of(views: &[Vec<f64>], given: &[u8], c: usize) -> Vec<f64> {
    let vs: Vec<View<'_, f64>> = views
        .iter()
        .map(|x| View::from(Dense::new(x, x.len() / N, N, x.len() / N).unwrap()))
        .collect();
    let p = FusedParams::default();
    let mut work =
        vec![0u8; fused_graph_workspace::<f64>(vs.iter().map(|v| v.shape()), &p).unwrap()];
    let mut w = vec![0.0; N * N];
    fused_graph(&vs[..], None, None, &p, &mut w, &mut work).unwrap();
    let g = DenseGraph::new(&w, N).unwrap();
    let pos = given.iter().filter(|&&a| a == 1).count();
    let prm = MvelParams {
        unknown_weight: pos as f64 / (c * N - pos) as f64,
        ..MvelParams::default()
    };
    let r = c;
    let y = MatRef::col_major(given, c, N).unwrap();
    let mut work = vec![0u8; mvel::fit_workspace::<f64, _>(N, c, r, &g, &prm).unwrap()];
    let (mut q, mut h) = (vec![0.0; c * r], vec![0.0; r * N]);
    mvel::fit(y, &g, r, &prm, &mut q, &mut h, &mut work, None).unwrap();
    let mut s = vec![0.0; c * N];
    let mut work = vec![0u8; mvel::predict_workspace::<f64>(c, r, N).unwrap()];
    mvel::predict(&q, &h, c, r, &mut s, &mut work).unwrap();
    s
}

#[test]
fn decisions_on_yeast_vary_across_items_and_keep_the_given_positives() {
    let (views, truth, given, c) = yeast_sample();
    let s = scores_of(&views, &given, c);
    let (sm, ym) = (
        MatRef::col_major(&s, c, N).unwrap(),
        MatRef::col_major(&given, c, N).unwrap(),
    );
    let mut work = vec![0u8; mvel::pu_thresholds_workspace(N).unwrap()];
    let (mut tau, mut used, mut pred) = (vec![0.0; c], vec![0.0; c], vec![9u8; c * N]);
    mvel::decide_pu(
        sm,
        ym,
        None,
        &mut tau,
        Some(&mut used),
        MatMut::col_major(&mut pred, c, N).unwrap(),
        &mut work,
    )
    .unwrap();
    // Every given positive is decided positive; every decision is 0/1.
    assert!(given
        .iter()
        .zip(&pred)
        .all(|(&g, &p)| p <= 1 && (g == 0 || p == 1)));
    // Not one label set for every item.
    let first = &pred[..c];
    assert!(
        pred.chunks(c).any(|col| col != first),
        "one constant decision for every item"
    );
    // Positives added beyond the given ones, and more of them right than the
    // share of hidden positives among the unknown entries would give at random.
    let added: Vec<usize> = (0..c * N)
        .filter(|&k| pred[k] == 1 && given[k] == 0)
        .collect();
    assert!(
        !added.is_empty(),
        "the rule adds nothing to the given labels"
    );
    let hit = added.iter().filter(|&&k| truth[k] == 1).count() as f64 / added.len() as f64;
    let unknown = (0..c * N).filter(|&k| given[k] == 0).count() as f64;
    let hidden = (0..c * N)
        .filter(|&k| given[k] == 0 && truth[k] == 1)
        .count() as f64;
    assert!(
        hit > hidden / unknown,
        "added positives no better than chance: {hit} vs {}",
        hidden / unknown
    );
    // The label frequencies used: Elkan–Noto estimates in (0, 1], 0 for a
    // label without a given positive (the rarest label among these genes).
    for (l, &u) in used.iter().enumerate() {
        let has = (0..N).any(|i| given[l + i * c] == 1);
        assert!(
            if has {
                u > 0.0 && u <= 1.0 + 1e-12
            } else {
                u == 0.0
            },
            "{used:?}"
        );
    }
    // Each label's decisions are "given or score > tau".
    for u in 0..N {
        for l in 0..c {
            let want = given[l + u * c] == 1 || s[l + u * c] > tau[l];
            assert_eq!(pred[l + u * c] == 1, want);
        }
    }
}

/// Two score levels: the top 10 items half given, the bottom 10 none given.
/// Isotonic calibration gives g = 0.5 and 0; with c = 0.5 the cut is
/// c / (2 − c) = 1/3, so the top block is decided positive and tau is the
/// highest score below it; with c = 1 the cut is 1 and nothing is added; the
/// Elkan–Noto estimate is the mean g over the given positives, 0.5.
#[test]
fn threshold_is_the_pu_cut_on_a_worked_case() {
    let n = 20;
    let s: Vec<f64> = (0..n).map(|u| if u < 10 { 1.0 } else { -0.25 }).collect();
    let y: Vec<u8> = (0..n).map(|u| u8::from(u < 10 && u % 2 == 0)).collect();
    let (sm, ym) = (
        MatRef::col_major(&s, 1, n).unwrap(),
        MatRef::col_major(&y, 1, n).unwrap(),
    );
    let mut work = vec![0u8; mvel::pu_thresholds_workspace(n).unwrap()];
    for (freq, want_tau, want_c) in [
        (Some(0.5), -0.25, 0.5),
        (Some(1.0), f64::MAX, 1.0),
        (None, -0.25, 0.5),
    ] {
        let f = freq.map(|x| [x]);
        let (mut tau, mut used) = ([0.0], [0.0]);
        mvel::pu_thresholds(
            sm,
            ym,
            f.as_ref().map(|a| &a[..]),
            &mut tau,
            Some(&mut used),
            &mut work,
        )
        .unwrap();
        assert_eq!((tau[0], used[0]), (want_tau, want_c), "label_freq {freq:?}");
    }
    // Scores that do not rank (all equal): one block, g = the given share.
    let flat = vec![0.5; n];
    let fm = MatRef::col_major(&flat, 1, n).unwrap();
    let mut tau = [0.0];
    mvel::pu_thresholds(fm, ym, Some(&[0.9][..]), &mut tau, None, &mut work).unwrap();
    assert_eq!(tau[0], f64::MAX); // g = 0.25 < 0.9 / 1.1
}

#[test]
fn bad_input_is_refused_with_outputs_untouched() {
    let (c, n) = (2, 5);
    let s: Vec<f64> = (0..c * n).map(|k| k as f64 * 0.1).collect();
    let y: Vec<u8> = (0..c * n).map(|k| u8::from(k % 3 == 0)).collect();
    let ok = vec![0u8; mvel::pu_thresholds_workspace(n).unwrap()];
    let run = |s: &[f64], y: &[u8], f: Option<&[f64]>, wk: usize, pc: usize| {
        let (mut tau, mut used, mut pred) = (vec![7.0; c], vec![7.0; c], vec![7u8; pc * n]);
        let mut work = vec![0u8; wk];
        let e = mvel::decide_pu(
            MatRef::col_major(s, c, n).unwrap(),
            MatRef::col_major(y, c, n).unwrap(),
            f,
            &mut tau,
            Some(&mut used),
            MatMut::col_major(&mut pred, pc, n).unwrap(),
            &mut work,
        )
        .unwrap_err();
        assert!(tau.iter().chain(&used).all(|&t| t == 7.0) && pred.iter().all(|&p| p == 7));
        e
    };
    let mut nan = s.clone();
    nan[3] = f64::NAN;
    assert_eq!(run(&nan, &y, None, ok.len(), c), Error::NonFiniteInput);
    let mut inf = s.clone();
    inf[0] = f64::INFINITY;
    assert_eq!(run(&inf, &y, None, ok.len(), c), Error::NonFiniteInput);
    let mut bad = y.clone();
    bad[1] = 2;
    assert_eq!(run(&s, &bad, None, ok.len(), c), Error::BadLabel);
    for f in [[1.5, 0.5], [f64::NAN, 0.5], [-0.1, 0.5]] {
        assert_eq!(run(&s, &y, Some(&f), ok.len(), c), Error::BadParameter);
    }
    assert_eq!(
        run(&s, &y, Some(&[0.5][..]), ok.len(), c),
        Error::DimensionMismatch
    );
    assert_eq!(run(&s, &y, None, ok.len() - 1, c), Error::WorkspaceTooSmall);
    assert_eq!(run(&s, &y, None, ok.len(), c + 1), Error::DimensionMismatch);

    // standardize_view: a NaN or a value whose moments overflow leaves x as it was.
    for v in [f64::NAN, f64::MAX] {
        let mut x = vec![1.0, -f64::MAX, 3.0, 4.0, 5.0, 6.0];
        x[2] = v;
        let before = x.clone();
        assert_eq!(standardize_view(&mut x, 2, 3), Err(Error::NonFiniteInput));
        assert!(x
            .iter()
            .zip(&before)
            .all(|(a, b)| a.to_bits() == b.to_bits()));
    }
    let mut x = vec![1.0; 6];
    assert_eq!(
        standardize_view(&mut x, 2, 4),
        Err(Error::DimensionMismatch)
    );
    assert_eq!(standardize_view(&mut x, 0, 4), Err(Error::ZeroDimension));
}

#[test]
fn standardized_features_have_mean_zero_and_unit_variance() {
    // Features of very different scales (a year next to a log-count), one constant.
    let (m, n) = (3, 50);
    let mut g = Lcg(3);
    let mut x = vec![0.0; m * n];
    for u in 0..n {
        x[u * m] = 1950.0 + 60.0 * g.uniform();
        x[1 + u * m] = 2.0 + 3.0 * g.uniform();
        x[2 + u * m] = 4.0;
    }
    assert_eq!(standardize_view(&mut x, m, n), Ok(1));
    for r in 0..2 {
        let row: Vec<f64> = (0..n).map(|u| x[r + u * m]).collect();
        let mean = row.iter().sum::<f64>() / n as f64;
        let var = row.iter().map(|a| (a - mean) * (a - mean)).sum::<f64>() / n as f64;
        assert!(
            mean.abs() < 1e-12 && (var - 1.0).abs() < 1e-12,
            "row {r}: {mean} {var}"
        );
    }
    assert!((0..n).all(|u| x[2 + u * m] == 0.0));
}

/// `label_freq_holdout` on a case worked by hand: one label, 10 items, fit
/// positives {0, 1}, held-out positives {2, 3}, so P' = 2, H = 2 and U = the
/// 8 items 2..9. U by decreasing score: 2 (held, 0.9), 4 (0.85), 3 (held,
/// 0.8), 5 (0.7), then 6..9 (0.4 and below; 7 and 8 tie at 0.3).
/// Tail ratios (U share / held share): after 2: (1/8)/(1/2) = 0.25; after 4:
/// (2/8)/(1/2) = 0.5; after 3: (3/8)/1 = 0.375; later ones larger.
/// min_held = 1: α = 0.25 (= H/n_U, the clamp), c = 4 / (2 + 2) = 1.
/// min_held = 2: α = 0.375, c = 4 / (2 + 3) = 0.8.
#[test]
fn holdout_label_frequency_on_a_worked_case() {
    let n = 10;
    let s = [1.0, 0.95, 0.9, 0.8, 0.85, 0.7, 0.4, 0.3, 0.3, 0.1];
    let mut fit = vec![0u8; n];
    let mut held = vec![0u8; n];
    fit[0] = 1;
    fit[1] = 1;
    held[2] = 1;
    held[3] = 1;
    let mut work = vec![0u8; mvel::label_freq_holdout_workspace(n).unwrap()];
    for (m, want) in [(1usize, 1.0), (2, 0.8), (5, 0.8)] {
        let mut f = [f64::NAN];
        mvel::label_freq_holdout(
            MatRef::col_major(&s, 1, n).unwrap(),
            MatRef::col_major(&fit, 1, n).unwrap(),
            MatRef::col_major(&held, 1, n).unwrap(),
            m,
            &mut f,
            &mut work,
        )
        .unwrap();
        assert!(
            (f[0] - want).abs() < 1e-12,
            "min_held {m}: {} vs {want}",
            f[0]
        );
    }
    // A label without held-out positives: 0 (unknown).
    let mut f = [f64::NAN];
    mvel::label_freq_holdout(
        MatRef::col_major(&s, 1, n).unwrap(),
        MatRef::col_major(&fit, 1, n).unwrap(),
        MatRef::col_major(&[0u8; 10], 1, n).unwrap(),
        1,
        &mut f,
        &mut work,
    )
    .unwrap();
    assert_eq!(f[0], 0.0);
    // Bad input: a held-out entry also in `fit`, a non-finite score, a short
    // workspace, a wrong length; the output stays untouched.
    let mut both = held.clone();
    both[0] = 1;
    let mut nan = s;
    nan[5] = f64::NAN;
    // (scores, held, output length, workspace bytes, the status)
    type Case<'a> = (&'a [f64], &'a [u8], usize, usize, Error);
    let cases: [Case<'_>; 4] = [
        (&s, &both, 1, work.len(), Error::BadLabel),
        (&nan, &held, 1, work.len(), Error::NonFiniteInput),
        (&s, &held, 1, work.len() - 1, Error::WorkspaceTooSmall),
        (&s, &held, 2, work.len(), Error::DimensionMismatch),
    ];
    for (sc, h, len, wl, err) in cases {
        let mut out = vec![7.0; len];
        let got = mvel::label_freq_holdout(
            MatRef::col_major(sc, 1, n).unwrap(),
            MatRef::col_major(&fit, 1, n).unwrap(),
            MatRef::col_major(h, 1, n).unwrap(),
            1,
            &mut out,
            &mut work[..wl],
        );
        assert_eq!(got, Err(err));
        assert!(out.iter().all(|&x| x == 7.0));
    }
}

/// The bias the hold-out removes. 4,000 items, 1,000 positives of which 400
/// (c = 0.4) are given; 30 % of those held out of the "refit". Scores as a
/// transductive fit gives them: the positives it saw score high, U(0.8,
/// 1.2); the positives it did not see (held-out and hidden alike) U(0.3,
/// 1.0); negatives U(0, 0.5). Elkan–Noto's estimate from the same scores
/// (the mean calibrated score of the given positives) comes out far too
/// high; the hold-out estimate is within 0.05 of the true 0.4.
#[test]
fn holdout_label_frequency_removes_the_in_sample_bias() {
    let n = 4000;
    let mut g = Lcg(21);
    let (mut s, mut fit, mut held, mut given) =
        (vec![0.0; n], vec![0u8; n], vec![0u8; n], vec![0u8; n]);
    for u in 0..n {
        if u < 1000 {
            if u < 400 {
                given[u] = 1;
                if g.uniform() < 0.3 {
                    held[u] = 1;
                } else {
                    fit[u] = 1;
                }
            }
            s[u] = if fit[u] == 1 {
                0.8 + 0.4 * g.uniform()
            } else {
                0.3 + 0.7 * g.uniform()
            };
        } else {
            s[u] = 0.5 * g.uniform();
        }
    }
    let mut work = vec![0u8; mvel::label_freq_holdout_workspace(n).unwrap()];
    let mut f = [0.0];
    mvel::label_freq_holdout(
        MatRef::col_major(&s, 1, n).unwrap(),
        MatRef::col_major(&fit, 1, n).unwrap(),
        MatRef::col_major(&held, 1, n).unwrap(),
        10,
        &mut f,
        &mut work,
    )
    .unwrap();
    assert!((f[0] - 0.4).abs() < 0.05, "hold-out estimate {}", f[0]);
    // Elkan–Noto on the in-sample scores of a fit that saw all 400 given
    // positives (they score U(0.8, 1.2), the 600 hidden ones U(0.3, 1.0)).
    let s_all: Vec<f64> = (0..n)
        .map(|u| {
            if given[u] == 1 {
                0.8 + 0.4 * g.uniform()
            } else {
                s[u]
            }
        })
        .collect();
    let (mut tau, mut used) = ([0.0], [0.0]);
    let mut w2 = vec![0u8; mvel::pu_thresholds_workspace(n).unwrap()];
    mvel::pu_thresholds(
        MatRef::col_major(&s_all, 1, n).unwrap(),
        MatRef::col_major(&given, 1, n).unwrap(),
        None,
        &mut tau,
        Some(&mut used),
        &mut w2,
    )
    .unwrap();
    assert!(used[0] > 0.55, "Elkan-Noto in-sample estimate {}", used[0]);
}

/// The hold-out rule end to end on yeast: 30 % of the given positives held
/// out of a first fit, `c` per label from that fit's scores
/// (`label_freq_holdout`), the fit on all given labels decided with it. Every
/// estimate lies in (0, 1]; the decisions keep the given positives, differ
/// from item to item and, label by label, are not all one value for a label
/// whose scores rank (AUROC against the truth above 0.6); and the positives
/// they add are right more often than chance.
#[test]
fn holdout_decisions_on_yeast_are_not_constant_where_scores_rank() {
    let (views, truth, given, c) = yeast_sample();
    let mut g = Lcg(99);
    let mut fit = vec![0u8; c * N];
    let mut held = vec![0u8; c * N];
    for k in 0..c * N {
        if given[k] == 1 {
            if g.uniform() < 0.3 {
                held[k] = 1;
            } else {
                fit[k] = 1;
            }
        }
    }
    let s1 = scores_of(&views, &fit, c);
    let mut freq = vec![f64::NAN; c];
    let mut work = vec![0u8; mvel::label_freq_holdout_workspace(N).unwrap()];
    mvel::label_freq_holdout(
        MatRef::col_major(&s1, c, N).unwrap(),
        MatRef::col_major(&fit, c, N).unwrap(),
        MatRef::col_major(&held, c, N).unwrap(),
        10,
        &mut freq,
        &mut work,
    )
    .unwrap();
    for (l, &f) in freq.iter().enumerate() {
        let h = (0..N).any(|u| held[l + u * c] == 1);
        assert!(if h { f > 0.0 && f <= 1.0 } else { f == 0.0 }, "{freq:?}");
    }
    let s = scores_of(&views, &given, c);
    let mut work = vec![0u8; mvel::pu_thresholds_workspace(N).unwrap()];
    let (mut tau, mut pred) = (vec![0.0; c], vec![9u8; c * N]);
    mvel::decide_pu(
        MatRef::col_major(&s, c, N).unwrap(),
        MatRef::col_major(&given, c, N).unwrap(),
        Some(&freq),
        &mut tau,
        None,
        MatMut::col_major(&mut pred, c, N).unwrap(),
        &mut work,
    )
    .unwrap();
    assert!(given
        .iter()
        .zip(&pred)
        .all(|(&g, &p)| p <= 1 && (g == 0 || p == 1)));
    let mut ranking = 0;
    for l in 0..c {
        // AUROC of label l's scores against the truth (ties count half).
        let (pos, neg): (Vec<f64>, Vec<f64>) = (
            (0..N)
                .filter(|&u| truth[l + u * c] == 1)
                .map(|u| s[l + u * c])
                .collect(),
            (0..N)
                .filter(|&u| truth[l + u * c] == 0)
                .map(|u| s[l + u * c])
                .collect(),
        );
        if pos.is_empty() || neg.is_empty() {
            continue;
        }
        let mut a = 0.0;
        for &p in &pos {
            for &q in &neg {
                a += if p > q {
                    1.0
                } else if p == q {
                    0.5
                } else {
                    0.0
                };
            }
        }
        if a / (pos.len() * neg.len()) as f64 > 0.6 {
            ranking += 1;
            let on = (0..N).filter(|&u| pred[l + u * c] == 1).count();
            assert!(on > 0 && on < N, "label {l}: one decision for every item");
        }
    }
    assert!(ranking >= 3, "only {ranking} labels rank");
    let added: Vec<usize> = (0..c * N)
        .filter(|&k| pred[k] == 1 && given[k] == 0)
        .collect();
    assert!(!added.is_empty());
    let hit = added.iter().filter(|&&k| truth[k] == 1).count() as f64 / added.len() as f64;
    let unknown = (0..c * N).filter(|&k| given[k] == 0).count() as f64;
    let hidden = (0..c * N)
        .filter(|&k| given[k] == 0 && truth[k] == 1)
        .count() as f64;
    assert!(hit > hidden / unknown, "{hit} vs {}", hidden / unknown);
}

/// The count rule on a case worked by hand: one label, 8 items, given
/// positives {0, 5} (P = 2), unknown scores (by item) 1: 0.9, 2: 0.7,
/// 3: 0.5, 4: 0.5, 6: 0.2, 7: 0.1. With c = 0.5, m = round(2·0.5/0.5) = 2:
/// tau half-way between the 2nd and 3rd unknown scores, 0.7 and 0.5, = 0.6,
/// deciding items 1 and 2. With c = 0.4, m = round(2·0.6/0.4) = 3:
/// the 3rd and 4th tie at 0.5, so tau = 0.5 and only 2 are added (a tie is
/// never split). c = 0.2: m = 8 ≥ 6 unknowns, tau = −∞. c = 0 or 1: +∞.
#[test]
fn count_thresholds_on_a_worked_case() {
    let n = 8;
    let s = [3.0, 0.9, 0.7, 0.5, 0.5, -1.0, 0.2, 0.1];
    let mut y = [0u8; 8];
    y[0] = 1;
    y[5] = 1;
    let mut work = vec![0u8; mvel::count_thresholds_workspace(n).unwrap()];
    for (c, want) in [
        (0.5, 0.5 * (0.7 + 0.5)),
        (0.4, 0.5),
        (0.2, f64::NEG_INFINITY),
        (0.0, f64::INFINITY),
        (1.0, f64::INFINITY),
    ] {
        let mut tau = [f64::NAN];
        mvel::count_thresholds(
            MatRef::col_major(&s, 1, n).unwrap(),
            MatRef::col_major(&y, 1, n).unwrap(),
            &[c],
            &mut tau,
            &mut work,
        )
        .unwrap();
        assert_eq!(tau[0], want, "c = {c}");
    }
    let mut tau = [7.0];
    assert_eq!(
        mvel::count_thresholds(
            MatRef::col_major(&s, 1, n).unwrap(),
            MatRef::col_major(&y, 1, n).unwrap(),
            &[1.5],
            &mut tau,
            &mut work,
        ),
        Err(Error::BadParameter)
    );
    assert_eq!(tau[0], 7.0);
}

/// `decide_count` on the worked case above: the given positives kept, exactly
/// the items above tau added (c = 0.5: items 1 and 2; c = 0.4: the same two,
/// the tie at 0.5 left out); bad input (a label frequency of 1.5, a score
/// NaN, pred of another shape, a short workspace) refused with tau and pred
/// untouched; the workspace query refuses n = 0.
#[test]
fn decide_count_keeps_the_given_and_adds_the_count() {
    let n = 8;
    let mut s = [3.0, 0.9, 0.7, 0.5, 0.5, -1.0, 0.2, 0.1];
    let mut y = [0u8; 8];
    y[0] = 1;
    y[5] = 1;
    let mut work = vec![0u8; mvel::count_thresholds_workspace(n).unwrap()];
    assert_eq!(
        mvel::count_thresholds_workspace(0),
        Err(Error::ZeroDimension)
    );
    for c in [0.5, 0.4] {
        let (mut tau, mut pred) = ([f64::NAN], [9u8; 8]);
        mvel::decide_count(
            MatRef::col_major(&s, 1, n).unwrap(),
            MatRef::col_major(&y, 1, n).unwrap(),
            &[c],
            &mut tau,
            MatMut::col_major(&mut pred, 1, n).unwrap(),
            &mut work,
        )
        .unwrap();
        assert_eq!(pred, [1, 1, 1, 0, 0, 1, 0, 0], "c = {c}");
    }
    let (mut tau, mut pred) = ([7.0], [9u8; 8]);
    let mut short = [9u8; 7];
    let bad = |e: Result<(), Error>, want: Error, tau: &[f64], pred: &[u8]| {
        assert_eq!(e, Err(want));
        assert_eq!(tau, &[7.0]);
        assert!(pred.iter().all(|&p| p == 9));
    };
    let e = mvel::decide_count(
        MatRef::col_major(&s, 1, n).unwrap(),
        MatRef::col_major(&y, 1, n).unwrap(),
        &[1.5],
        &mut tau,
        MatMut::col_major(&mut pred, 1, n).unwrap(),
        &mut work,
    );
    bad(e, Error::BadParameter, &tau, &pred);
    let e = mvel::decide_count(
        MatRef::col_major(&s, 1, n).unwrap(),
        MatRef::col_major(&y, 1, n).unwrap(),
        &[0.5],
        &mut tau,
        MatMut::col_major(&mut short, 1, n - 1).unwrap(),
        &mut work,
    );
    bad(e, Error::DimensionMismatch, &tau, &short);
    let e = mvel::decide_count(
        MatRef::col_major(&s, 1, n).unwrap(),
        MatRef::col_major(&y, 1, n).unwrap(),
        &[0.5],
        &mut tau,
        MatMut::col_major(&mut pred, 1, n).unwrap(),
        &mut work[1..],
    );
    bad(e, Error::WorkspaceTooSmall, &tau, &pred);
    s[3] = f64::NAN;
    let e = mvel::decide_count(
        MatRef::col_major(&s, 1, n).unwrap(),
        MatRef::col_major(&y, 1, n).unwrap(),
        &[0.5],
        &mut tau,
        MatMut::col_major(&mut pred, 1, n).unwrap(),
        &mut work,
    );
    bad(e, Error::NonFiniteInput, &tau, &pred);
}
