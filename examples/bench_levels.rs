//! The run-time SIMD levels (issue 18, item 1): NMF at every level this CPU
//! has (`mvnmf::linalg::force_level`), dense 2000 × 1000 and sparse 20000 ×
//! 2000 at 1 %, K = 50, median ms per iteration over interleaved rounds. Run it
//! in both builds and compare the rows:
//!
//! ```sh
//! cargo run --release --example bench_levels                          # hosted (gemm crate for dense)
//! cargo run --release --no-default-features --example bench_levels    # no_std core (blocked kernel)
//! cargo run --release --example bench_levels 3 dense Avx2              # one problem at one level
//! ```
//! Not a test: speed is measured here, never asserted.

use mvnmf::linalg::{detected_level, force_level, SimdLevel};
use mvnmf::models::nmf::{self, NmfParams};
use mvnmf::{Csc, Dense, Init, View};
use std::time::Instant;

mod common;
use common::{median, Rng};

fn per_iter(view: View<'_, f64>, k: usize, u0: &[f64], v0: &[f64], iters: u32) -> (f64, f64) {
    let p = NmfParams {
        max_iter: iters,
        tol: 0.0,
        init: Init::Given,
        ..NmfParams::default()
    };
    let mut w = vec![0u8; nmf::fit_workspace::<f64>(view.shape(), k, &p).unwrap()];
    let (mut u, mut v) = (u0.to_vec(), v0.to_vec());
    let t = Instant::now();
    let r = nmf::fit(view, k, &p, &mut u, &mut v, &mut w, None).unwrap();
    (t.elapsed().as_secs_f64() / iters as f64, r.objective.total)
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map_or(3, |a| a.parse().expect("ROUNDS"));
    // Optional: one problem ("dense" or "sparse") and one level ("Avx2", ...), for profiling.
    let only = std::env::args().nth(2);
    let at_level = std::env::args().nth(3);
    let mut rng = Rng(18);
    let (m, n, k) = (2000, 1000, 50);
    let dense: Vec<f64> = (0..m * n).map(|_| rng.next()).collect();
    let (sm, sn) = (20000, 2000);
    let (mut cp, mut ri, mut vals) = (vec![0], vec![], vec![]);
    for _ in 0..sn {
        for i in 0..sm {
            if rng.next() < 0.01 {
                ri.push(i);
                vals.push(rng.next());
            }
        }
        cp.push(ri.len());
    }
    let levels: Vec<SimdLevel> = [SimdLevel::Baseline, SimdLevel::Avx2, SimdLevel::Avx512]
        .into_iter()
        .filter(|&l| l <= detected_level())
        .filter(|l| at_level.as_ref().is_none_or(|a| *a == format!("{l:?}")))
        .collect();
    println!(
        "mvnmf {}: detected {:?}; median ms/iteration over {rounds} rounds",
        env!("CARGO_PKG_VERSION"),
        detected_level()
    );
    println!("| problem | level | ms/iter | objective |");
    println!("|---|---|---|---|");
    let problems: [(&str, View<'_, f64>, usize, usize, u32); 2] = [
        (
            "dense 2000 x 1000",
            View::from(Dense::new(&dense, m, n, m).unwrap()),
            m,
            n,
            10,
        ),
        (
            "sparse 20000 x 2000, 1 %",
            View::from(Csc::new(sm, sn, &cp, &ri, &vals).unwrap()),
            sm,
            sn,
            10,
        ),
    ];
    for (name, view, rows, cols, iters) in problems {
        if only.as_ref().is_some_and(|o| !name.starts_with(o.as_str())) {
            continue;
        }
        let u0: Vec<f64> = (0..rows * k).map(|_| 0.05 + rng.next()).collect();
        let v0: Vec<f64> = (0..k * cols).map(|_| 0.05 + rng.next()).collect();
        let mut times = vec![vec![]; levels.len()];
        let mut objs = vec![0.0; levels.len()];
        for _ in 0..rounds {
            for (i, &l) in levels.iter().enumerate() {
                force_level(l);
                let (t, o) = per_iter(view, k, &u0, &v0, iters);
                times[i].push(t);
                objs[i] = o;
            }
        }
        force_level(SimdLevel::Avx512);
        for (i, l) in levels.iter().enumerate() {
            let t = median(std::mem::take(&mut times[i]));
            println!("| {name} | {l:?} | {:.2} | {:.12e} |", 1e3 * t, objs[i]);
        }
    }
}
