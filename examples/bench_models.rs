//! Per-iteration cost of the models against plain joint NMF, in one run on the
//! same data (a program, not a test). `bench/bench_models.py` runs it and the
//! numpy implementations of the same updates, and prints the ratios.
//!
//! Usage: `bench_models N [K] [ITERS]` — four dense views of 64/144/75/128
//! features (the MM2.0 shape), N items, 30 % labeled in 10 classes; prints one
//! `name seconds_per_iter` line per model:
//!
//! * `nmf`      joint multi-view NMF;
//! * `mvsl_t`   MvSL with L1,2 and a TGE-shaped graph (affinity: each item's 5
//!   nearest neighbours, symmetrised, weight 2 within labeled classes; penalty:
//!   3 nearest other-class labeled neighbours per labeled item), built here from
//!   random neighbours (the cost depends on the edge count, not on which);
//! * `mcl`      shallow MCL (L1,∞, SGE);
//! * `dmcl3`    a DMCL fine-tuning sweep with layers [100, 50, K] (SGE).
//!
//! Times are medians over repetitions of (time from the iteration-0 report to
//! the last) / iterations: pre-training and set-up are excluded.

use mvnmf::graph::{CsrGraph, CsrGraphs, GraphOp, Sge};
use mvnmf::models::deep::{self, DeepParams};
use mvnmf::models::mvsl::{self, MvslParams};
use mvnmf::models::nmf::{self, NmfParams};
use mvnmf::{Dense, View};
use std::ops::ControlFlow;
use std::time::Instant;

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() * n as f64) as usize % n
    }
}

/// A monitor, and a run that reports through one.
type Mon<'a> = &'a mut dyn FnMut(&mvnmf::Progress) -> ControlFlow<()>;
type Run<'a> = &'a mut dyn FnMut(Mon<'_>);

/// Times `run` `reps` times.
fn time(reps: usize, iters: u32, run: Run<'_>) -> f64 {
    let mut t = Vec::new();
    for _ in 0..reps {
        let (mut t0, mut t1) = (None, None);
        let mut mon = |p: &mvnmf::Progress| {
            if p.iter == 0 {
                t0 = Some(Instant::now());
            }
            if p.iter == iters {
                t1 = Some(Instant::now());
            }
            ControlFlow::Continue(())
        };
        run(&mut mon);
        t.push((t1.unwrap() - t0.unwrap()).as_secs_f64() / iters as f64);
    }
    t.sort_by(|a, b| a.partial_cmp(b).unwrap());
    t[reps / 2]
}

/// A symmetric CSR graph from an edge list (duplicates merged by max weight).
fn csr(n: usize, edges: &[(usize, usize, f64)]) -> (Vec<usize>, Vec<usize>, Vec<f64>) {
    let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
    for &(i, j, w) in edges {
        if i != j {
            rows[i].push((j, w));
            rows[j].push((i, w));
        }
    }
    let (mut rp, mut ci, mut ws) = (vec![0], vec![], vec![]);
    for r in rows.iter_mut() {
        r.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.partial_cmp(&a.1).unwrap()));
        r.dedup_by_key(|e| e.0);
        for &(j, w) in r.iter() {
            ci.push(j);
            ws.push(w);
        }
        rp.push(ci.len());
    }
    (rp, ci, ws)
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let n: usize = a.get(1).map_or(2000, |s| s.parse().unwrap());
    let k: usize = a.get(2).map_or(20, |s| s.parse().unwrap());
    let iters: u32 = a.get(3).map_or(10, |s| s.parse().unwrap());
    let reps = 3;
    let dims = [64usize, 144, 75, 128];
    let mut g = Lcg(7);
    let xs: Vec<Vec<f64>> = dims
        .iter()
        .map(|&m| (0..m * n).map(|_| g.next()).collect())
        .collect();
    let views: Vec<View<'_, f64>> = xs
        .iter()
        .zip(&dims)
        .map(|(x, &m)| View::from(Dense::new(x, m, n, m).unwrap()))
        .collect();
    let shapes: Vec<_> = views.iter().map(|v| v.shape()).collect();
    let classes = 10;
    let labels: Vec<u32> = (0..n)
        .map(|j| {
            if g.next() < 0.3 {
                (j % classes) as u32
            } else {
                mvnmf::eval::UNLABELED
            }
        })
        .collect();
    // TGE-shaped graph.
    let mut aff = Vec::new();
    let mut pen = Vec::new();
    for j in 0..n {
        for _ in 0..5 {
            let i = g.below(n);
            let same = labels[i] != mvnmf::eval::UNLABELED && labels[i] == labels[j];
            aff.push((i, j, if same { 2.0 } else { 1.0 }));
        }
        if labels[j] != mvnmf::eval::UNLABELED {
            for _ in 0..3 {
                let i = g.below(n);
                if labels[i] != mvnmf::eval::UNLABELED && labels[i] != labels[j] {
                    pen.push((i, j, 2.0));
                }
            }
        }
    }
    let (ar, ac, aw) = csr(n, &aff);
    let (pr, pc, pw) = csr(n, &pen);
    let tge = CsrGraphs::new(
        n,
        Some(CsrGraph::new(n, &ar, &ac, &aw).unwrap()),
        Some(CsrGraph::new(n, &pr, &pc, &pw).unwrap()),
    )
    .unwrap();
    let sge = Sge::new(&labels, classes).unwrap();
    println!(
        "# N={n} K={k} views={dims:?} iters={iters} graph nnz: affinity {} penalty {}",
        ac.len(),
        pc.len()
    );

    let np = NmfParams {
        max_iter: iters,
        tol: 0.0,
        ..NmfParams::default()
    };
    let mut w = vec![0u8; nmf::joint_fit_workspace::<f64>(shapes.iter().copied(), k, &np).unwrap()];
    let mut us: Vec<Vec<f64>> = dims.iter().map(|&m| vec![0.0; m * k]).collect();
    let mut v = vec![0.0; k * n];
    let t_nmf = time(reps, iters, &mut |mon| {
        let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
        nmf::joint_fit(&views[..], k, &np, &mut refs[..], &mut v, &mut w, Some(mon)).unwrap();
    });
    println!("nmf {t_nmf:.6e}  workspace_bytes {}", w.len());

    let mut shallow = |name: &str, graph: &dyn GraphOp<f64>, p: MvslParams| -> f64 {
        let mut w =
            vec![0u8; mvsl::fit_workspace::<f64, _>(shapes.iter().copied(), graph, k, &p).unwrap()];
        let t = time(reps, iters, &mut |mon| {
            let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
            mvsl::fit(
                &views[..],
                graph,
                k,
                &p,
                &mut refs[..],
                &mut v,
                &mut w,
                Some(mon),
            )
            .unwrap();
        });
        println!("{name} {t:.6e}  workspace_bytes {}", w.len());
        t
    };
    let t_mvsl = shallow(
        "mvsl_t",
        &tge,
        MvslParams {
            max_iter: iters,
            tol: 0.0,
            alpha: 1.5,
            ..MvslParams::mvsl()
        },
    );
    let t_mcl = shallow(
        "mcl",
        &sge,
        MvslParams {
            max_iter: iters,
            tol: 0.0,
            alpha: 10.0,
            ..MvslParams::mcl()
        },
    );

    let layers = [100, 50, k];
    let dp = DeepParams {
        top: MvslParams {
            max_iter: iters,
            tol: 0.0,
            alpha: 10.0,
            ..MvslParams::mcl()
        },
        pretrain_iter: 5,
        ..DeepParams::dmcl()
    };
    let mut w = vec![
        0u8;
        deep::fit_workspace::<f64, _>(shapes.iter().copied(), &sge, &layers, &dp)
            .unwrap()
    ];
    let mut ud: Vec<Vec<f64>> = dims
        .iter()
        .map(|&m| vec![0.0; deep::factor_len(m, &layers).unwrap()])
        .collect();
    let t_deep = time(reps, iters, &mut |mon| {
        let mut refs: Vec<&mut [f64]> = ud.iter_mut().map(|u| &mut u[..]).collect();
        deep::fit(
            &views[..],
            &sge,
            &layers,
            &dp,
            &mut refs[..],
            &mut v,
            &mut w,
            Some(mon),
        )
        .unwrap();
    });
    println!("dmcl3 {t_deep:.6e}  workspace_bytes {}", w.len());
    println!(
        "# ratios: mvsl_t/nmf = {:.2}  mcl/nmf = {:.2}  dmcl3/mcl = {:.2}",
        t_mvsl / t_nmf,
        t_mcl / t_nmf,
        t_deep / t_mcl
    );
}
