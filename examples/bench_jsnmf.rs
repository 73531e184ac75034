//! JSNMF cost on the shipped real sample (`data/ng20-sample`, tf-idf, CSC),
//! in one run with interleaved rounds: one JSNMF sweep against one NMF
//! iteration of each source alone (the paper's complexity analysis says about
//! the same cost), and the latency of one query and of a batch of 1,000 queries
//! (Algorithm 2: encode against `[W | U_1]`, rank the target's 1,350 documents,
//! top 20). Not a test; prints medians and ratios.
//!
//! Usage: `cargo run --release --example bench_jsnmf [K R ROUNDS]` (default 20 40 7).

use mvnmf::models::jsnmf::{self, JsnmfParams, QueryParams, Ranking};
use mvnmf::models::nmf::{self, NmfParams};
use mvnmf::{Csc, Dense, View};
use std::ops::ControlFlow;
use std::time::Instant;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/data/ng20-sample");

fn read_gz(name: &str) -> Vec<f64> {
    let out = std::process::Command::new("gzip")
        .args(["-dc", &format!("{DIR}/{name}")])
        .output()
        .expect("gzip -dc");
    out.stdout
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// tf-idf with unit columns, as dense and as CSC arrays.
fn tfidf(x: &[f64], m: usize) -> (Vec<f64>, Vec<usize>, Vec<usize>, Vec<f64>) {
    let n = x.len() / m;
    let idf: Vec<f64> = (0..m)
        .map(|i| {
            let df = (0..n).filter(|&j| x[i + j * m] > 0.0).count();
            if df > 0 {
                (n as f64 / df as f64).ln()
            } else {
                0.0
            }
        })
        .collect();
    let mut d: Vec<f64> = x.iter().enumerate().map(|(t, &v)| v * idf[t % m]).collect();
    for col in d.chunks_mut(m) {
        let nn = col.iter().map(|a| a * a).sum::<f64>().sqrt();
        if nn > 0.0 {
            col.iter_mut().for_each(|a| *a /= nn);
        }
    }
    let (mut cp, mut ri, mut vals) = (vec![0], vec![], vec![]);
    for col in d.chunks(m) {
        for (i, &v) in col.iter().enumerate() {
            if v != 0.0 {
                ri.push(i);
                vals.push(v);
            }
        }
        cp.push(vals.len());
    }
    (d, cp, ri, vals)
}

/// Seconds per iteration from the monitor's reports (start to last).
fn per_iter(
    iters: u32,
    run: impl FnOnce(&mut dyn FnMut(&mvnmf::Progress) -> ControlFlow<()>),
) -> f64 {
    let mut marks = Vec::new();
    let mut mon = |_: &mvnmf::Progress| {
        marks.push(Instant::now());
        ControlFlow::Continue(())
    };
    run(&mut mon);
    (marks[marks.len() - 1] - marks[0]).as_secs_f64() / iters as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let a: Vec<usize> = std::env::args()
        .skip(1)
        .map(|s| s.parse().expect("a number"))
        .collect();
    let (k, r, rounds) = (
        *a.first().unwrap_or(&20),
        *a.get(1).unwrap_or(&40),
        *a.get(2).unwrap_or(&7),
    );
    let m = 1500;
    let (da, ca, ra, va) = tfidf(&read_gz("view1.f64.gz"), m);
    let (_, cb, rb, vb) = tfidf(&read_gz("view2.f64.gz"), m);
    let (na, nb) = (ca.len() - 1, cb.len() - 1);
    let views = [
        View::from(Csc::new(m, na, &ca, &ra, &va).unwrap()),
        View::from(Csc::new(m, nb, &cb, &rb, &vb).unwrap()),
    ];
    let iters = 20;
    let np = NmfParams {
        max_iter: iters,
        tol: 0.0,
        ..NmfParams::default()
    };
    let jp = JsnmfParams { iter: np };
    let ranks = [r, r];
    let mut wj = vec![
        0u8;
        jsnmf::fit_workspace::<f64>(views.iter().map(|v| v.shape()), k, &ranks, &jp)
            .unwrap()
    ];
    let mut w = vec![0.0; m * k];
    let mut u = vec![vec![0.0; m * (r - k)]; 2];
    let mut h = [vec![0.0; r * na], vec![0.0; r * nb]];
    let (mut tj, mut tn) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        tj.push(per_iter(iters, |mon| {
            let mut ur: Vec<&mut [f64]> = u.iter_mut().map(|x| &mut x[..]).collect();
            let mut hr: Vec<&mut [f64]> = h.iter_mut().map(|x| &mut x[..]).collect();
            jsnmf::fit(
                &views,
                k,
                &ranks,
                None,
                &jp,
                &mut w,
                &mut ur[..],
                &mut hr[..],
                &mut wj,
                Some(mon),
            )
            .unwrap();
        }));
        let mut both = 0.0;
        for v in &views {
            let n = v.cols();
            let mut wn = vec![0u8; nmf::fit_workspace::<f64>(v.shape(), r, &np).unwrap()];
            let (mut un, mut vn) = (vec![0.0; m * r], vec![0.0; r * n]);
            both += per_iter(iters, |mon| {
                nmf::fit(*v, r, &np, &mut un, &mut vn, &mut wn, Some(mon)).unwrap();
            });
        }
        tn.push(both);
    }
    let (tj, tn) = (median(tj), median(tn));
    println!("JSNMF on data/ng20-sample (tf-idf, CSC; 1500 terms, {na} + {nb} documents), K = {k}, R = {r},{r}");
    println!("| what | time | ratio |\n|---|---|---|");
    println!("| one JSNMF sweep | {:.2} ms | {:.2} |", tj * 1e3, tj / tn);
    println!(
        "| one NMF iteration of each source (R = {r}), together | {:.2} ms | 1 |",
        tn * 1e3
    );

    // Queries: the target's own (non-empty) documents as dense term vectors, top 20.
    let qd: Vec<f64> = da
        .chunks(m)
        .filter(|c| c.iter().any(|&x| x > 0.0))
        .flatten()
        .copied()
        .collect();
    let qp = QueryParams::default();
    let nq = 1000.min(qd.len() / m);
    let lat = |n_q: usize| -> f64 {
        let qv = View::from(Dense::new(&qd[..m * n_q], m, n_q, m).unwrap());
        let x = Ranking {
            target: &h[0],
            queries: &[],
            r,
            n_top: 20,
            exclude: None,
        };
        let mut wq = vec![0u8; jsnmf::query_workspace::<f64>(qv.shape(), r, na, &qp).unwrap()];
        let mut idx = vec![0; 20 * n_q];
        let mut ts = Vec::new();
        for _ in 0..rounds {
            let t0 = Instant::now();
            jsnmf::query(&w, &u[0], k, &qv, &qp, &x, &mut idx, None, &mut wq).unwrap();
            ts.push(t0.elapsed().as_secs_f64());
        }
        median(ts)
    };
    let (t1, tb) = (lat(1), lat(nq));
    println!(
        "| one query (encode + rank {na} documents, top 20) | {:.3} ms | |",
        t1 * 1e3
    );
    println!(
        "| a batch of {nq} queries, one call | {:.1} ms ({:.3} ms per query) | {:.2} per query vs one |",
        tb * 1e3,
        tb * 1e3 / nq as f64,
        tb / nq as f64 / t1
    );
}
