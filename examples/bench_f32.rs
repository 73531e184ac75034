//! f32 against f64: the same NMF (Lee–Seung MU, the same start rounded to
//! f32) in both precisions, interleaved rounds on this machine, median
//! seconds per iteration and the ratio. Not a test (speed is measured here,
//! never asserted). Issue 17, item 4.
//!
//! `cargo run --release --example bench_f32 [ROUNDS]` (default 5). Problems:
//! the issue-18 shapes (dense 2000 × 1000 and sparse 20000 × 2000 at 1 %,
//! K = 50, uniform values from a fixed seed) and the real sample
//! (`data/mfeat-sample`, fac 216 × 500, K = 20).

use mvnmf::models::nmf::{self, NmfParams};
use mvnmf::{Csc, Dense, Init, Real, View};
use std::time::Instant;

mod common;
use common::{median, Rng};

enum Data {
    Dense(Vec<f64>),
    Csc(Vec<usize>, Vec<usize>, Vec<f64>),
}

struct Problem {
    name: &'static str,
    m: usize,
    n: usize,
    k: usize,
    iters: u32,
    data: Data,
}

/// Seconds per iteration of `iters` MU iterations in precision `T` from the start.
fn time<T: Real>(p: &Problem, u0: &[f64], v0: &[f64]) -> (f64, f64) {
    let conv = |x: &[f64]| -> Vec<T> { x.iter().map(|&a| T::from_f64(a)).collect() };
    let (dense, cp, ri, vals);
    let view = match &p.data {
        Data::Dense(x) => {
            dense = conv(x);
            View::from(Dense::new(&dense, p.m, p.n, p.m).unwrap())
        }
        Data::Csc(c, r, v) => {
            (cp, ri, vals) = (c.clone(), r.clone(), conv(v));
            View::from(Csc::new(p.m, p.n, &cp, &ri, &vals).unwrap())
        }
    };
    let params = NmfParams {
        max_iter: p.iters,
        tol: 0.0,
        init: Init::Given,
        ..NmfParams::default()
    };
    let mut work = vec![0u8; nmf::fit_workspace::<T>(view.shape(), p.k, &params).unwrap()];
    let (mut u, mut v) = (conv(u0), conv(v0));
    let t = Instant::now();
    let r = nmf::fit(view, p.k, &params, &mut u, &mut v, &mut work, None).unwrap();
    (
        t.elapsed().as_secs_f64() / p.iters as f64,
        r.objective.total,
    )
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map_or(5, |a| a.parse().expect("ROUNDS"));
    let mut rng = Rng(2026);
    let mut problems = vec![
        Problem {
            name: "dense 2000 x 1000, K = 50",
            m: 2000,
            n: 1000,
            k: 50,
            iters: 20,
            data: Data::Dense(common::dense(&mut rng, 2000, 1000)),
        },
        {
            let (m, n) = (20000, 2000);
            let (cp, ri, vals) = common::sparse(&mut rng, m, n, 0.01);
            Problem {
                name: "sparse 20000 x 2000, 1 %, K = 50",
                m,
                n,
                k: 50,
                iters: 20,
                data: Data::Csc(cp, ri, vals),
            }
        },
    ];
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/data/mfeat-sample/view2.f64");
    if let Ok(b) = std::fs::read(dir) {
        let x: Vec<f64> = b
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        problems.push(Problem {
            name: "mfeat-sample fac 216 x 500, K = 20",
            m: 216,
            n: 500,
            k: 20,
            iters: 100,
            data: Data::Dense(x),
        });
    }
    println!(
        "mvnmf {} f32 vs f64, {rounds} interleaved rounds, median s/iteration",
        env!("CARGO_PKG_VERSION")
    );
    println!("| problem | f64 ms/iter | f32 ms/iter | f64 / f32 | objective rel. diff |");
    println!("|---|---|---|---|---|");
    for p in &problems {
        let u0: Vec<f64> = (0..p.m * p.k).map(|_| 0.05 + rng.next()).collect();
        let v0: Vec<f64> = (0..p.k * p.n).map(|_| 0.05 + rng.next()).collect();
        let (mut t64, mut t32, mut o) = (vec![], vec![], (0.0, 0.0));
        for _ in 0..rounds {
            let (a, oa) = time::<f64>(p, &u0, &v0);
            let (b, ob) = time::<f32>(p, &u0, &v0);
            t64.push(a);
            t32.push(b);
            o = (oa, ob);
        }
        let (a, b) = (median(t64), median(t32));
        println!(
            "| {} | {:.2} | {:.2} | {:.2}x | {:.1e} |",
            p.name,
            1e3 * a,
            1e3 * b,
            a / b,
            (o.0 - o.1).abs() / o.0.abs()
        );
    }
}
