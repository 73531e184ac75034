//! On the real sample shipped in `data/ng20-sample` (20 Newsgroups term counts
//! in two domains over one vocabulary; CC BY 4.0): JSNMF with CSC sources never
//! increases its objective, and query-by-example retrieval over the target
//! (Algorithm 2, relevant = same top-level group) is far above chance for the
//! shared model and both baselines (K = 0, K = R).

mod common;

use common::*;
use mvnmf::eval::ranked_list_metrics;
use mvnmf::models::jsnmf::{self, JsnmfParams, QueryParams, Ranking};
use mvnmf::models::nmf::NmfParams;
use mvnmf::{Csc, View};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/data/ng20-sample");

/// `viewV.f64.gz` through `gzip -dc` (the test's only outside tool).
fn read_gz(name: &str) -> Vec<f64> {
    let out = std::process::Command::new("gzip")
        .args(["-dc", &format!("{DIR}/{name}")])
        .output()
        .expect("gzip -dc (is gzip installed?)");
    assert!(out.status.success());
    out.stdout
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Every `step`-th document of a corpus as tf-idf with unit columns, in CSC.
fn tfidf(x: &[f64], m: usize, step: usize) -> (CscOwned, usize) {
    let n_all = x.len() / m;
    let docs: Vec<usize> = (0..n_all).step_by(step).collect();
    let n = docs.len();
    let idf: Vec<f64> = (0..m)
        .map(|i| {
            let df = docs.iter().filter(|&&j| x[i + j * m] > 0.0).count();
            if df > 0 {
                (n as f64 / df as f64).ln()
            } else {
                0.0
            }
        })
        .collect();
    let mut d = vec![0.0; m * n];
    for (c, &j) in docs.iter().enumerate() {
        let col = &mut d[c * m..(c + 1) * m];
        for i in 0..m {
            col[i] = x[i + j * m] * idf[i];
        }
        let nn = col.iter().map(|a| a * a).sum::<f64>().sqrt();
        if nn > 0.0 {
            col.iter_mut().for_each(|a| *a /= nn);
        }
    }
    (to_csc(&d, m, n), n)
}

#[test]
fn jsnmf_on_ng20_is_monotone_and_retrieves_far_above_chance() {
    let m = 1500;
    let labels: Vec<u32> = std::fs::read_to_string(format!("{DIR}/labels_view1.txt"))
        .unwrap()
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect();
    let (a, na) = tfidf(&read_gz("view1.f64.gz"), m, 3);
    let (b, _) = tfidf(&read_gz("view2.f64.gz"), m, 3);
    let lab: Vec<u32> = labels.iter().step_by(3).copied().collect();
    let views = [
        View::from(Csc::new(m, na, &a.col_ptr, &a.row_idx, &a.values).unwrap()),
        View::from(Csc::new(m, b.col_ptr.len() - 1, &b.col_ptr, &b.row_idx, &b.values).unwrap()),
    ];
    // Chance MAP: the mean over queries of the share of relevant items.
    let chance: f64 = lab
        .iter()
        .map(|&l| (lab.iter().filter(|&&x| x == l).count() - 1) as f64 / (na - 1) as f64)
        .sum::<f64>()
        / na as f64;
    let r = 16;
    for k in [0, 8, r] {
        let p = JsnmfParams {
            iter: NmfParams {
                max_iter: 60,
                tol: 0.0,
                seed: 1,
                ..NmfParams::default()
            },
        };
        let ranks = [r, r];
        let mut work =
            vec![
                0u8;
                jsnmf::fit_workspace::<f64>(views.iter().map(|v| v.shape()), k, &ranks, &p)
                    .unwrap()
            ];
        let mut w = vec![0.0; m * k];
        let mut u = vec![vec![0.0; m * (r - k)]; 2];
        let mut h = [vec![0.0; r * na], vec![0.0; r * views[1].cols()]];
        let mut obj = Vec::new();
        let mut rec = recorder(&mut obj);
        {
            let mut ur: Vec<&mut [f64]> = u.iter_mut().map(|x| &mut x[..]).collect();
            let mut hr: Vec<&mut [f64]> = h.iter_mut().map(|x| &mut x[..]).collect();
            jsnmf::fit(
                &views,
                k,
                &ranks,
                None,
                &p,
                &mut w,
                &mut ur[..],
                &mut hr[..],
                &mut work,
                Some(&mut rec),
            )
            .unwrap();
        }
        drop(rec);
        assert_monotone(&obj, 1e-10 * obj[0], &format!("ng20 K={k}"));
        assert!(obj[obj.len() - 1] < 0.95 * obj[0], "K={k}: {obj:?}");

        // Query by example: every target document (non-empty), itself excluded.
        let qs: Vec<usize> = (0..na)
            .filter(|&j| a.col_ptr[j + 1] > a.col_ptr[j])
            .collect();
        let mut dense = vec![0.0; m * qs.len()];
        for (c, &j) in qs.iter().enumerate() {
            for t in a.col_ptr[j]..a.col_ptr[j + 1] {
                dense[c * m + a.row_idx[t]] = a.values[t];
            }
        }
        let qv = View::from(mvnmf::Dense::new(&dense, m, qs.len(), m).unwrap());
        let qp = QueryParams::default();
        let x = Ranking {
            target: &h[0],
            queries: &[],
            r,
            n_top: na - 1,
            exclude: Some(&qs),
        };
        let mut work = vec![0u8; jsnmf::query_workspace::<f64>(qv.shape(), r, na, &qp).unwrap()];
        let mut idx = vec![0; (na - 1) * qs.len()];
        jsnmf::query(&w, &u[0], k, &qv, &qp, &x, &mut idx, None, &mut work).unwrap();
        let mut map = 0.0;
        for (c, &j) in qs.iter().enumerate() {
            let rel: Vec<u8> = idx[c * (na - 1)..(c + 1) * (na - 1)]
                .iter()
                .map(|&i| (lab[i] == lab[j]) as u8)
                .collect();
            let nrel = rel.iter().filter(|&&x| x == 1).count();
            map += ranked_list_metrics(&rel, nrel, &[], &mut [], None).unwrap();
        }
        map /= qs.len() as f64;
        // Measured: MAP 0.48 (K = 0), 0.50 (K = 8), 0.48 (K = 16); chance 0.26.
        assert!(map > chance + 0.15, "K={k}: MAP {map} vs chance {chance}");
    }
}
