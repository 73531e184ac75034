//! JSNMF retrieval (Algorithm 2, DESIGN §7): query encoding never increases
//! its objective and reaches the nonnegative least-squares optimum of an
//! independent solver; a batch gives the bits of its queries one by one; CSC
//! and keyword queries equal their dense forms; the ranking equals a full sort
//! of independently computed cosines; exclusion; out-of-sample encoding does
//! at least as well as the fitted encodings; bad input gets its status with
//! the outputs untouched.

mod common;

use common::*;
use mvnmf::models::jsnmf::{self, QueryParams, Ranking};
use mvnmf::{Csc, Dense, Error, View};

/// A random nonnegative basis `[W | U]` (`m × r`, `k` shared columns) and
/// queries that are noisy nonnegative combinations of its columns.
struct Case {
    m: usize,
    k: usize,
    r: usize,
    w: Vec<f64>,
    u: Vec<f64>,
    q: Vec<f64>,
    nq: usize,
}

fn case(m: usize, k: usize, r: usize, nq: usize, seed: u64) -> Case {
    let f = random_matrix(m, r, 0.6, seed);
    let (w, u) = (f[..m * k].to_vec(), f[m * k..].to_vec());
    let h = random_matrix(r, nq, 0.5, seed + 1);
    let noise = random_matrix(m, nq, 0.3, seed + 2);
    let mut q = vec![0.0; m * nq];
    for j in 0..nq {
        for i in 0..m {
            let mut s = 0.1 * noise[i + j * m];
            for c in 0..r {
                s += f[i + c * m] * h[c + j * r];
            }
            q[i + j * m] = s;
        }
    }
    // Every query has at least one term.
    for j in 0..nq {
        q[j * m] += 0.5;
    }
    Case {
        m,
        k,
        r,
        w,
        u,
        q,
        nq,
    }
}

impl Case {
    fn f(&self) -> Vec<f64> {
        [&self.w[..], &self.u[..]].concat()
    }
    fn view(&self) -> View<'_, f64> {
        View::from(Dense::new(&self.q, self.m, self.nq, self.m).unwrap())
    }
}

fn encode(c: &Case, q: &View<'_, f64>, p: &QueryParams) -> Result<Vec<f64>, Error> {
    let need = jsnmf::encode_workspace::<f64>(q.shape(), c.r, p)?;
    let mut work = vec![0u8; need];
    let mut h = vec![0.0; c.r * q.cols()];
    jsnmf::encode(&c.w, &c.u, c.k, c.r, q, p, &mut h, &mut work)?;
    Ok(h)
}

/// `½‖F h − q‖²` for column `j`, by brute force.
fn residual(f: &[f64], m: usize, r: usize, h: &[f64], q: &[f64]) -> f64 {
    (0..m)
        .map(|i| {
            let fh: f64 = (0..r).map(|c| f[i + c * m] * h[c]).sum();
            0.5 * (fh - q[i]) * (fh - q[i])
        })
        .sum()
}

/// Nonnegative least squares by cyclic coordinate descent to convergence
/// (an independent solver: exact coordinate minimisation, not MU).
fn nnls(f: &[f64], m: usize, r: usize, q: &[f64]) -> Vec<f64> {
    let mut h = vec![0.0; r];
    let mut res: Vec<f64> = q.iter().map(|x| -x).collect(); // F h − q
    for _ in 0..20000 {
        let mut change = 0.0f64;
        for c in 0..r {
            let col = &f[c * m..(c + 1) * m];
            let nn: f64 = col.iter().map(|x| x * x).sum();
            if nn == 0.0 {
                continue;
            }
            let g: f64 = col.iter().zip(&res).map(|(a, b)| a * b).sum();
            let new = (h[c] - g / nn).max(0.0);
            let d = new - h[c];
            if d != 0.0 {
                res.iter_mut().zip(col).for_each(|(x, a)| *x += d * a);
                h[c] = new;
                change = change.max(d.abs());
            }
        }
        if change < 1e-15 {
            break;
        }
    }
    h
}

#[test]
fn encoding_never_increases_and_reaches_the_nnls_optimum() {
    for &(m, k, r) in &[(40, 3, 8), (25, 0, 5), (30, 6, 6)] {
        let c = case(m, k, r, 4, 11 + m as u64);
        let f = c.f();
        let q = c.view();
        for j in 0..c.nq {
            let qj = &c.q[j * m..(j + 1) * m];
            let mut prev = f64::INFINITY;
            for t in 0..40 {
                let p = QueryParams {
                    max_iter: t,
                    tol: 0.0,
                    ..QueryParams::default()
                };
                let h = encode(&c, &q, &p).unwrap();
                let obj = residual(&f, m, r, &h[j * r..(j + 1) * r], qj);
                assert!(
                    obj <= prev * (1.0 + 1e-12),
                    "m={m} k={k} query {j}: iteration {t} rose {prev} -> {obj}"
                );
                prev = obj;
            }
            let long = QueryParams {
                max_iter: 20000,
                tol: 0.0,
                ..QueryParams::default()
            };
            let h = encode(&c, &q, &long).unwrap();
            let ours = residual(&f, m, r, &h[j * r..(j + 1) * r], qj);
            let best = residual(&f, m, r, &nnls(&f, m, r, qj), qj);
            let scale = 0.5 * qj.iter().map(|x| x * x).sum::<f64>();
            assert!(
                ours >= best - 1e-12 * scale && ours - best <= 1e-6 * scale,
                "m={m} k={k} query {j}: MU {ours} vs NNLS {best}"
            );
            // The defaults stop early, but near the optimum.
            let h = encode(&c, &q, &QueryParams::default()).unwrap();
            let dflt = residual(&f, m, r, &h[j * r..(j + 1) * r], qj);
            assert!(
                dflt - best <= 0.05 * best + 1e-9 * scale,
                "defaults: {dflt} vs {best}"
            );
        }
    }
}

#[test]
fn a_batch_gives_the_bits_of_its_queries_one_by_one() {
    let c = case(50, 4, 10, 7, 5);
    let p = QueryParams::default();
    let all = encode(&c, &c.view(), &p).unwrap();
    for j in 0..c.nq {
        let one = Case {
            q: c.q[j * c.m..(j + 1) * c.m].to_vec(),
            nq: 1,
            w: c.w.clone(),
            u: c.u.clone(),
            ..c
        };
        let h = encode(&one, &one.view(), &p).unwrap();
        assert_eq!(h, all[j * c.r..(j + 1) * c.r], "query {j}");
    }
}

#[test]
fn csc_and_keyword_queries_equal_their_dense_forms() {
    let c = case(60, 5, 9, 5, 21);
    // Sparsify the queries: keep every third term.
    let mut q = c.q.clone();
    for (t, x) in q.iter_mut().enumerate() {
        if t % 3 != 0 {
            *x = 0.0;
        }
    }
    let dense = View::from(Dense::new(&q, c.m, c.nq, c.m).unwrap());
    let cs = to_csc(&q, c.m, c.nq);
    let sparse = View::from(Csc::new(c.m, c.nq, &cs.col_ptr, &cs.row_idx, &cs.values).unwrap());
    let p = QueryParams::default();
    let (a, b) = (
        encode(&c, &dense, &p).unwrap(),
        encode(&c, &sparse, &p).unwrap(),
    );
    assert!(max_rel_diff(&a, &b) < 1e-10, "{}", max_rel_diff(&a, &b));
    // A keyword query: terms 3, 17 and 42 with weight 1.
    let (ptr, idx, val) = ([0usize, 3], [3usize, 17, 42], [1.0; 3]);
    let kw = View::from(Csc::new(c.m, 1, &ptr, &idx, &val).unwrap());
    let mut onehot = vec![0.0; c.m];
    idx.iter().for_each(|&i| onehot[i] = 1.0);
    let d1 = View::from(Dense::new(&onehot, c.m, 1, c.m).unwrap());
    let (a, b) = (encode(&c, &kw, &p).unwrap(), encode(&c, &d1, &p).unwrap());
    assert!(max_rel_diff(&a, &b) < 1e-10);
    assert!(a.iter().any(|&x| x > 0.0));
}

fn cosine(a: &[f64], b: &[f64]) -> f64 {
    let d: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    let nb = b.iter().map(|x| x * x).sum::<f64>().sqrt();
    if na * nb > 0.0 {
        d / (na * nb)
    } else {
        0.0
    }
}

fn rank(x: &Ranking<'_, f64>, nq: usize) -> Result<(Vec<usize>, Vec<f64>), Error> {
    let n = x.target.len() / x.r;
    let mut work = vec![0u8; jsnmf::rank_workspace::<f64>(n)?];
    let (mut idx, mut sc) = (vec![0; x.n_top * nq], vec![0.0; x.n_top * nq]);
    jsnmf::rank(x, &mut idx, Some(&mut sc), &mut work)?;
    Ok((idx, sc))
}

#[test]
fn ranking_equals_a_full_sort_of_cosines_with_exclusion() {
    let (r, n, nq) = (6, 200, 5);
    let mut target = random_matrix(r, n, 0.5, 8);
    // Ties: item 7 duplicates item 3; item 11 is zero (scores 0).
    let dup: Vec<f64> = target[3 * r..4 * r].to_vec();
    target[7 * r..8 * r].copy_from_slice(&dup);
    target[11 * r..12 * r].fill(0.0);
    let queries = random_matrix(r, nq, 0.7, 9);
    for &(n_top, excl) in &[(10, false), (n, false), (n - 1, true), (1, true)] {
        let exclude: Vec<usize> = (0..nq)
            .map(|q| if q == 2 { usize::MAX } else { 3 + q })
            .collect();
        let x = Ranking {
            target: &target,
            queries: &queries,
            r,
            n_top: if excl { n_top } else { n_top.min(n) },
            exclude: excl.then_some(&exclude[..]),
        };
        let (idx, sc) = rank(&x, nq).unwrap();
        for q in 0..nq {
            let h = &queries[q * r..(q + 1) * r];
            let mut all: Vec<(f64, usize)> = (0..n)
                .filter(|&i| !(excl && exclude[q] == i))
                .map(|i| (cosine(h, &target[i * r..(i + 1) * r]), i))
                .collect();
            all.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap().then(a.1.cmp(&b.1)));
            let got = &idx[q * x.n_top..(q + 1) * x.n_top];
            for (p, &(s, i)) in all.iter().take(x.n_top).enumerate() {
                assert!((sc[q * x.n_top + p] - s).abs() <= 1e-14, "score");
                // Equal up to rounding: the same item, or a tie within 1e-14.
                if got[p] != i {
                    let sg = cosine(h, &target[got[p] * r..(got[p] + 1) * r]);
                    assert!((sg - s).abs() <= 1e-14, "q {q} rank {p}: {} vs {i}", got[p]);
                }
            }
            if excl && exclude[q] < n {
                assert!(!got.contains(&exclude[q]));
            }
        }
    }
    // The duplicate ties: item 3 before item 7 whenever both are returned.
    let x = Ranking {
        target: &target,
        queries: &queries,
        r,
        n_top: n,
        exclude: None,
    };
    let (idx, _) = rank(&x, nq).unwrap();
    for q in 0..nq {
        let col = &idx[q * n..(q + 1) * n];
        let pos = |i| col.iter().position(|&x| x == i).unwrap();
        assert!(pos(3) < pos(7));
        assert_eq!(pos(11), n - 1 - col[pos(11) + 1..].len());
    }
}

#[test]
fn query_is_encode_then_rank_and_finds_the_item_a_query_was_cut_from() {
    let c = case(80, 4, 12, 1, 31);
    // The target: 30 items, encodings of noisy copies of the basis' columns.
    let n = 30;
    let f = c.f();
    let hs = random_matrix(c.r, n, 0.4, 33);
    let mut x = vec![0.0; c.m * n];
    for j in 0..n {
        for i in 0..c.m {
            x[i + j * c.m] = (0..c.r)
                .map(|t| f[i + t * c.m] * hs[t + j * c.r])
                .sum::<f64>();
        }
        x[j * c.m] += 1e-3;
    }
    let xv = View::from(Dense::new(&x, c.m, n, c.m).unwrap());
    let long = QueryParams {
        max_iter: 2000,
        tol: 0.0,
        ..QueryParams::default()
    };
    let h = encode(&c, &xv, &long).unwrap();
    // Query by example: each item's own terms, the item itself first.
    let p = QueryParams::default();
    let x_rank = Ranking {
        target: &h,
        queries: &[],
        r: c.r,
        n_top: 3,
        exclude: None,
    };
    let need = jsnmf::query_workspace::<f64>(xv.shape(), c.r, n, &p).unwrap();
    let mut work = vec![0u8; need];
    let mut idx = vec![0; 3 * n];
    let mut sc = vec![0.0; 3 * n];
    jsnmf::query(
        &c.w,
        &c.u,
        c.k,
        &xv,
        &p,
        &x_rank,
        &mut idx,
        Some(&mut sc),
        &mut work,
    )
    .unwrap();
    let hits = (0..n).filter(|&j| idx[3 * j] == j).count();
    assert!(hits >= n - 1, "{hits} of {n} items found themselves first");
    // The same as encode + rank by hand.
    let hq = encode(&c, &xv, &p).unwrap();
    let (i2, s2) = rank(
        &Ranking {
            queries: &hq,
            ..x_rank
        },
        n,
    )
    .unwrap();
    assert_eq!((idx, sc), (i2, s2));
}

#[test]
fn bad_input_is_refused_with_outputs_untouched() {
    let c = case(20, 2, 5, 3, 41);
    let p = QueryParams::default();
    let q = c.view();
    let need = jsnmf::encode_workspace::<f64>(q.shape(), c.r, &p).unwrap();
    let try_encode = |w: &[f64],
                      u: &[f64],
                      k: usize,
                      r: usize,
                      q: &View<'_, f64>,
                      p: &QueryParams,
                      hl: usize,
                      wl: usize| {
        let mut h = vec![7.0; hl];
        let mut work = vec![0u8; wl];
        let e = jsnmf::encode(w, u, k, r, q, p, &mut h, &mut work).unwrap_err();
        assert!(h.iter().all(|&x| x == 7.0), "{e:?}: output touched");
        e
    };
    let hl = c.r * c.nq;
    assert_eq!(
        try_encode(&c.w, &c.u, c.k, c.r, &q, &p, hl, need - 1),
        Error::WorkspaceTooSmall
    );
    assert_eq!(
        try_encode(&c.w, &c.u, c.k, c.r, &q, &p, hl + 1, need),
        Error::DimensionMismatch
    );
    assert_eq!(
        try_encode(&c.w, &c.u[1..], c.k, c.r, &q, &p, hl, need),
        Error::DimensionMismatch
    );
    assert_eq!(
        try_encode(&c.w, &c.u, c.r + 1, c.r, &q, &p, hl, need),
        Error::BadRank
    );
    let bad = QueryParams { tol: -1.0, ..p };
    assert_eq!(
        try_encode(&c.w, &c.u, c.k, c.r, &q, &bad, hl, need),
        Error::BadParameter
    );
    let mut w = c.w.clone();
    w[3] = f64::NAN;
    assert_eq!(
        try_encode(&w, &c.u, c.k, c.r, &q, &p, hl, need),
        Error::NonFiniteInput
    );
    let mut qq = c.q.clone();
    qq[5] = -1.0;
    let qv = View::from(Dense::new(&qq, c.m, c.nq, c.m).unwrap());
    assert_eq!(
        try_encode(&c.w, &c.u, c.k, c.r, &qv, &p, hl, need),
        Error::NegativeInput
    );
    qq[5] = f64::INFINITY;
    let qv = View::from(Dense::new(&qq, c.m, c.nq, c.m).unwrap());
    assert_eq!(
        try_encode(&c.w, &c.u, c.k, c.r, &qv, &p, hl, need),
        Error::NonFiniteInput
    );
    // An all-zero query (a keyword query outside the vocabulary).
    let mut qq = c.q.clone();
    qq[c.m..2 * c.m].fill(0.0);
    let qv = View::from(Dense::new(&qq, c.m, c.nq, c.m).unwrap());
    assert_eq!(
        try_encode(&c.w, &c.u, c.k, c.r, &qv, &p, hl, need),
        Error::EmptyQuery
    );
    let empty = View::from(Csc::new(c.m, 1, &[0, 0], &[], &[]).unwrap());
    let ne = jsnmf::encode_workspace::<f64>(empty.shape(), c.r, &p).unwrap();
    assert_eq!(
        try_encode(&c.w, &c.u, c.k, c.r, &empty, &p, c.r, ne),
        Error::EmptyQuery
    );
    // A query over another vocabulary.
    let other = View::from(Dense::new(&c.q[..19 * 3], 19, 3, 19).unwrap());
    let no = jsnmf::encode_workspace::<f64>(other.shape(), c.r, &p).unwrap();
    assert_eq!(
        try_encode(&c.w, &c.u, c.k, c.r, &other, &p, hl, no),
        Error::DimensionMismatch
    );

    // Ranking: N larger than the target, exclusions, shapes.
    let (r, n) = (4, 10);
    let target = random_matrix(r, n, 0.5, 1);
    let qh = random_matrix(r, 2, 0.9, 2);
    let try_rank = |x: &Ranking<'_, f64>, il: usize, wl: usize| {
        let mut idx = vec![99usize; il];
        let mut sc = vec![7.0; il];
        let mut work = vec![0u8; wl];
        let e = jsnmf::rank(x, &mut idx, Some(&mut sc), &mut work).unwrap_err();
        assert!(idx.iter().all(|&x| x == 99) && sc.iter().all(|&x| x == 7.0));
        e
    };
    let wl = jsnmf::rank_workspace::<f64>(n).unwrap();
    let base = Ranking {
        target: &target,
        queries: &qh,
        r,
        n_top: 3,
        exclude: None,
    };
    assert_eq!(
        try_rank(
            &Ranking {
                n_top: n + 1,
                ..base
            },
            2 * (n + 1),
            wl
        ),
        Error::DimensionMismatch
    );
    assert_eq!(
        try_rank(&Ranking { n_top: 0, ..base }, 0, wl),
        Error::ZeroDimension
    );
    let ex = [0usize, usize::MAX];
    assert_eq!(
        try_rank(
            &Ranking {
                n_top: n,
                exclude: Some(&ex),
                ..base
            },
            2 * n,
            wl
        ),
        Error::DimensionMismatch
    );
    assert_eq!(
        try_rank(
            &Ranking {
                exclude: Some(&ex[..1]),
                ..base
            },
            6,
            wl
        ),
        Error::DimensionMismatch
    );
    assert_eq!(try_rank(&base, 5, wl), Error::DimensionMismatch);
    assert_eq!(try_rank(&base, 6, wl - 1), Error::WorkspaceTooSmall);
    assert_eq!(
        try_rank(&Ranking { r: 3, ..base }, 6, wl),
        Error::DimensionMismatch
    );
    let mut neg = qh.clone();
    neg[1] = -0.5;
    assert_eq!(
        try_rank(
            &Ranking {
                queries: &neg,
                ..base
            },
            6,
            wl
        ),
        Error::NegativeInput
    );
    // N = n − 1 with one exclusion is fine.
    let (idx, _) = rank(
        &Ranking {
            n_top: n - 1,
            exclude: Some(&ex),
            ..base
        },
        2,
    )
    .unwrap_or_default();
    assert_eq!(idx.len(), 2 * (n - 1));
}

#[test]
fn out_of_sample_encoding_of_a_source_does_at_least_as_well_as_its_fit() {
    use mvnmf::models::jsnmf::JsnmfParams;
    use mvnmf::models::nmf::NmfParams;
    let (m, ns, k, ranks) = (24, [30usize, 18], 3, [6usize, 5]);
    let xs: Vec<Vec<f64>> = ns
        .iter()
        .enumerate()
        .map(|(s, &n)| random_matrix(m, n, 0.6, 50 + s as u64))
        .collect();
    let views: Vec<View<'_, f64>> = xs
        .iter()
        .zip(ns)
        .map(|(x, n)| View::from(Dense::new(x, m, n, m).unwrap()))
        .collect();
    let p = JsnmfParams {
        iter: NmfParams {
            max_iter: 50,
            tol: 0.0,
            ..NmfParams::default()
        },
    };
    let mut work = vec![
        0u8;
        jsnmf::fit_workspace::<f64>(views.iter().map(|v| v.shape()), k, &ranks, &p)
            .unwrap()
    ];
    let mut w = vec![0.0; m * k];
    let mut u: Vec<Vec<f64>> = ranks.iter().map(|&r| vec![0.0; m * (r - k)]).collect();
    let mut h: Vec<Vec<f64>> = ranks
        .iter()
        .zip(ns)
        .map(|(&r, n)| vec![0.0; r * n])
        .collect();
    {
        let mut ur: Vec<&mut [f64]> = u.iter_mut().map(|x| &mut x[..]).collect();
        let mut hr: Vec<&mut [f64]> = h.iter_mut().map(|x| &mut x[..]).collect();
        jsnmf::fit(
            &views[..],
            k,
            &ranks,
            None,
            &p,
            &mut w,
            &mut ur[..],
            &mut hr[..],
            &mut work,
            None,
        )
        .unwrap();
    }
    let long = QueryParams {
        max_iter: 3000,
        tol: 0.0,
        ..QueryParams::default()
    };
    for s in 0..2 {
        let (r, n) = (ranks[s], ns[s]);
        let c = Case {
            m,
            k,
            r,
            w: w.clone(),
            u: u[s].clone(),
            q: xs[s].clone(),
            nq: n,
        };
        let enc = encode(&c, &views[s], &long).unwrap();
        let f = c.f();
        for j in 0..n {
            let xj = &xs[s][j * m..(j + 1) * m];
            let fitted = residual(&f, m, r, &h[s][j * r..(j + 1) * r], xj);
            let ours = residual(&f, m, r, &enc[j * r..(j + 1) * r], xj);
            assert!(
                ours <= fitted * (1.0 + 1e-9) + 1e-12,
                "source {s} item {j}: {ours} > {fitted}"
            );
        }
    }
}
