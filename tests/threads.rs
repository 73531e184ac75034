//! Issue 18, item 2: a fit gives the same bits whoever runs its parallel
//! regions — serially, on the built-in pool with 1, 2 or 3 threads, or on a
//! host's own pool (which here runs the tasks in reverse order on three
//! threads, to show that neither order nor placement matters) — and a host
//! pool that skips or repeats a task is reported, not trusted.

mod common;

use common::*;
use mvnmf::eval::UNLABELED;
use mvnmf::graph::Sge;
use mvnmf::models::{deep, mvsl, nmf};
use mvnmf::par::Task;
use mvnmf::pipeline::{self, Method, PipelineParams};
use mvnmf::similarity::Kernel;
use mvnmf::steps::{MvslParams, NmfParams};
use mvnmf::{Csc, Dense, Error, HostPool, Parallel, View};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A host pool: three threads take task numbers from the top down.
fn reverse_on_three(_ctx: usize, n: usize, task: Task<'_>) {
    let next = AtomicUsize::new(n);
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| loop {
                let i = next.fetch_sub(1, Ordering::Relaxed);
                if i == 0 || i > n {
                    break;
                }
                task(i - 1);
            });
        }
    });
    // Undo the wrap of the last fetch_sub past zero.
    next.store(0, Ordering::Relaxed);
}

/// Runs every task but the last.
fn skips_one(_ctx: usize, n: usize, task: Task<'_>) {
    (0..n.saturating_sub(1)).for_each(task);
}

/// Every way of running the regions the tests compare.
fn pools() -> Vec<(&'static str, Parallel)> {
    vec![
        ("serial", Parallel::Serial),
        ("1 thread", Parallel::Threads(1)),
        ("2 threads", Parallel::Threads(2)),
        ("3 threads", Parallel::Threads(3)),
        (
            "host pool",
            Parallel::Host(HostPool {
                parallel_for: reverse_on_three,
                ctx: 0,
            }),
        ),
    ]
}

/// (U's, V, objective trace) as bits.
type FitBits = (Vec<u64>, Vec<u64>, Vec<u64>);

fn bits(x: &[f64]) -> Vec<u64> {
    x.iter().map(|a| a.to_bits()).collect()
}

/// Joint NMF of `views` under `par`: (U's, V, objective trace).
fn joint(views: &[View<'_, f64>], k: usize, par: Parallel) -> Result<FitBits, Error> {
    let n = views[0].cols();
    let params = NmfParams {
        max_iter: 6,
        tol: 0.0,
        seed: 11,
        parallel: par,
        ..NmfParams::default()
    };
    let shapes: Vec<_> = views.iter().map(|v| v.shape()).collect();
    let mut w = vec![0u8; nmf::joint_fit_workspace::<f64>(shapes, k, &params)?];
    let mut us: Vec<Vec<f64>> = views.iter().map(|x| vec![0.0; x.rows() * k]).collect();
    let mut v = vec![0.0; k * n];
    let mut obj = Vec::new();
    {
        let mut rec = recorder(&mut obj);
        let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
        nmf::joint_fit(
            views,
            k,
            &params,
            &mut refs[..],
            &mut v,
            &mut w,
            Some(&mut rec),
        )?;
    }
    assert_monotone(&obj, 1e-10, "joint NMF");
    Ok((bits(&us.concat()), bits(&v), bits(&obj)))
}

/// Large enough that every product splits into several tasks: 12 for the
/// dense products; as CSC, a tall view whose `Uᵀ·X` scatters into per-task
/// partials (20 000 × 700 at 1 %) and a wide one gathered by columns (400 ×
/// 700 at 50 %), each over several tasks (`linalg::sparse` unit tests check
/// which mode each shape takes).
fn problem() -> (Vec<(usize, Vec<f64>)>, usize) {
    let n = 700;
    let views = vec![
        (900, random_matrix(900, n, 1.0, 1)),
        (20000, random_matrix(20000, n, 0.01, 2)),
        (400, random_matrix(400, n, 0.5, 3)),
    ];
    (views, n)
}

/// The views of [`problem`], dense or CSC.
fn views_of<'a>(
    xs: &'a [(usize, Vec<f64>)],
    cscs: &'a [CscOwned],
    n: usize,
    sparse: bool,
) -> Vec<View<'a, f64>> {
    xs.iter()
        .zip(cscs)
        .map(|((m, x), c)| {
            if sparse {
                View::from(Csc::new(*m, n, &c.col_ptr, &c.row_idx, &c.values).unwrap())
            } else {
                View::from(Dense::new(x, *m, n, *m).unwrap())
            }
        })
        .collect()
}

#[test]
fn joint_nmf_dense_and_csc_same_bits_for_every_pool() {
    let (xs, n) = problem();
    let k = 24;
    let cscs: Vec<CscOwned> = xs.iter().map(|(m, x)| to_csc(x, *m, n)).collect();
    for sparse in [false, true] {
        let views = views_of(&xs, &cscs, n, sparse);
        let reference = joint(&views, k, Parallel::Serial).unwrap();
        for (name, par) in pools() {
            assert!(
                joint(&views, k, par).unwrap() == reference,
                "sparse {sparse}: {name}"
            );
        }
    }
}

/// Several fits at once on the same built-in pools (their workers stay awake
/// between regions and run any caller's tasks): every fit still gives the
/// serial bits, and none waits forever.
#[test]
fn concurrent_fits_share_the_built_in_pools() {
    let (xs, n) = problem();
    let k = 12;
    let cscs: Vec<CscOwned> = xs.iter().map(|(m, x)| to_csc(x, *m, n)).collect();
    let dense = views_of(&xs, &cscs, n, false);
    let sparse = views_of(&xs, &cscs, n, true);
    let want = [
        joint(&dense, k, Parallel::Serial).unwrap(),
        joint(&sparse, k, Parallel::Serial).unwrap(),
    ];
    std::thread::scope(|s| {
        let runs: Vec<_> = (0..4)
            .map(|i| {
                let (views, threads) = if i % 2 == 0 {
                    (&dense, 2)
                } else {
                    (&sparse, 3)
                };
                s.spawn(move || (i % 2, joint(views, k, Parallel::Threads(threads)).unwrap()))
            })
            .collect();
        for r in runs {
            let (which, got) = r.join().unwrap();
            assert!(got == want[which], "concurrent fit {which}");
        }
    });
}

/// MvSL (L1,2, SGE) on the CSC views: its products go through the unfused
/// sparse `Uᵀ·X` (both modes) and `X·Vᵀ`, its V-step through the parallel
/// bounded update. Never rising, and the same bits for every pool.
#[test]
fn mvsl_on_csc_views_never_rises_and_gives_the_same_bits_for_every_pool() {
    let (xs, n) = problem();
    let k = 16;
    let cscs: Vec<CscOwned> = xs.iter().map(|(m, x)| to_csc(x, *m, n)).collect();
    let views = views_of(&xs, &cscs, n, true);
    let labels: Vec<u32> = (0..n)
        .map(|j| {
            if j % 4 == 0 {
                (j % 5) as u32
            } else {
                UNLABELED
            }
        })
        .collect();
    let sge = Sge::new(&labels, 5).unwrap();
    let run = |par: Parallel| {
        let p = MvslParams {
            max_iter: 5,
            tol: 0.0,
            alpha: 0.5,
            parallel: par,
            ..MvslParams::mvsl()
        };
        let shapes: Vec<_> = views.iter().map(|v| v.shape()).collect();
        let mut w = vec![0u8; mvsl::fit_workspace::<f64, _>(shapes, &sge, k, &p).unwrap()];
        let mut us: Vec<Vec<f64>> = views.iter().map(|x| vec![0.0; x.rows() * k]).collect();
        let mut v = vec![0.0; k * n];
        let mut obj = Vec::new();
        {
            let mut rec = recorder(&mut obj);
            let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
            mvsl::fit(
                &views[..],
                &sge,
                k,
                &p,
                &mut refs[..],
                &mut v,
                &mut w,
                Some(&mut rec),
            )
            .unwrap();
        }
        assert_monotone(&obj, 1e-10, "MvSL on CSC views");
        (bits(&us.concat()), bits(&v), bits(&obj))
    };
    let reference = run(Parallel::Serial);
    for (name, par) in pools() {
        assert!(run(par) == reference, "MvSL on CSC: {name}");
    }
}

#[test]
fn a_host_pool_that_skips_a_task_is_an_error() {
    let (xs, n) = problem();
    let views: Vec<View<'_, f64>> = xs
        .iter()
        .map(|(m, x)| View::from(Dense::new(x, *m, n, *m).unwrap()))
        .collect();
    let par = Parallel::Host(HostPool {
        parallel_for: skips_one,
        ctx: 0,
    });
    assert_eq!(joint(&views, 24, par).unwrap_err(), Error::ParallelFor);
}

/// The MvSL-T pipeline (MKL, TGE graph, the composite-gradient U-step, the
/// bounded V-step) and DMCL on the shipped mfeat sample; the pipeline also
/// with small blocks, its set-up's passes in parts on the pool.
#[test]
fn pipeline_and_deep_same_bits_for_every_pool() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/data/mfeat-sample");
    let truth: Vec<u32> = std::fs::read_to_string(format!("{dir}/labels.txt"))
        .unwrap()
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect();
    let n = truth.len();
    let views: Vec<(usize, Vec<f64>)> = [(1, 76), (2, 216), (5, 47)]
        .iter()
        .map(|&(f, m)| {
            let (x, rows, cols) = read_view("mfeat-sample", f);
            assert_eq!((rows, cols), (m, n));
            (m, x)
        })
        .collect();
    let vs: Vec<View<'_, f64>> = views
        .iter()
        .map(|(m, x)| View::from(Dense::new(x, *m, n, *m).unwrap()))
        .collect();
    let labels: Vec<u32> = (0..n)
        .map(|j| if j % 10 < 3 { truth[j] } else { UNLABELED })
        .collect();
    let ks = [Kernel::Linear, Kernel::Linear, Kernel::Linear];
    let k = 20;
    // `small`: blocks of 32 items, so the set-up's passes run in parts (the
    // MKL weights over 150 labeled items in four, the TGE graph in four).
    let pipe = |par: Parallel, small: bool| {
        let mut p = PipelineParams::preset(Method::MvslT);
        p.solver.max_iter = 5;
        p.solver.parallel = par;
        if small {
            p.mkl.block = 32;
            p.graph.block = 32;
        }
        let need = pipeline::fit_workspace::<f64>(vs.iter().map(|x| x.shape()), &ks[..], 10, k, &p)
            .unwrap();
        let mut w = vec![0u8; need];
        let mut us: Vec<Vec<f64>> = vs.iter().map(|x| vec![0.0; x.rows() * k]).collect();
        let (mut v, mut eta) = (vec![0.0; k * n], vec![0.0; vs.len()]);
        let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
        pipeline::fit(
            &vs[..],
            &ks[..],
            &labels,
            10,
            k,
            &p,
            &mut refs[..],
            &mut v,
            &mut eta,
            &mut w,
            None,
        )
        .unwrap();
        (bits(&us.concat()), bits(&v), bits(&eta))
    };
    let dmcl = |par: Parallel| {
        let mut p = deep::DeepParams::dmcl();
        p.top.max_iter = 4;
        p.pretrain_iter = 5;
        p.top.parallel = par;
        let layers = [40, k];
        let sge = Sge::new(&labels, 10).unwrap();
        let shapes: Vec<_> = vs.iter().map(|x| x.shape()).collect();
        let need = deep::fit_workspace::<f64, _>(shapes, &sge, &layers, &p).unwrap();
        let mut w = vec![0u8; need];
        let lens: Vec<usize> = vs
            .iter()
            .map(|x| deep::factor_len(x.rows(), &layers).unwrap())
            .collect();
        let mut us: Vec<Vec<f64>> = lens.iter().map(|&l| vec![0.0; l]).collect();
        let mut v = vec![0.0; k * n];
        let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
        deep::fit(
            &vs[..],
            &sge,
            &layers,
            &p,
            &mut refs[..],
            &mut v,
            &mut w,
            None,
        )
        .unwrap();
        (bits(&us.concat()), bits(&v))
    };
    let (p0, d0) = (pipe(Parallel::Serial, false), dmcl(Parallel::Serial));
    let p1 = pipe(Parallel::Serial, true);
    for (name, par) in pools() {
        assert!(pipe(par, false) == p0, "MvSL-T pipeline: {name}");
        assert!(
            pipe(par, true) == p1,
            "MvSL-T pipeline, small blocks: {name}"
        );
        assert!(dmcl(par) == d0, "DMCL: {name}");
    }
}

/// The fused kNN over all items: every pool gives the serial lists, bit for
/// bit (the parts' heaps merge to the serial top k: a strict total order).
#[test]
fn fused_knn_same_lists_for_every_pool() {
    use mvnmf::similarity::{self, KnnParams, Scope};
    let n = 1100;
    let xs = [
        (30, random_matrix(30, n, 1.0, 5)),
        (12, random_matrix(12, n, 0.5, 6)),
    ];
    let vs: Vec<View<'_, f64>> = xs
        .iter()
        .map(|(m, x)| View::from(Dense::new(x, *m, n, *m).unwrap()))
        .collect();
    let ks = [Kernel::Linear, Kernel::Linear];
    let eta = [0.7, 0.3];
    let k = 7;
    let run = |par: Parallel| {
        let p = KnnParams {
            k,
            block: 64,
            parallel: par,
        };
        let shapes = vs.iter().map(|x| x.shape());
        let need = similarity::fused_knn_workspace::<f64>(shapes, &ks[..], 0, &p).unwrap();
        let mut w = vec![0u8; need];
        let (mut nb, mut sims) = (vec![0usize; n * k], vec![0.0; n * k]);
        similarity::fused_knn(
            &vs[..],
            &ks[..],
            &eta,
            &[],
            0,
            Scope::All,
            &p,
            &mut nb,
            &mut sims,
            &mut w,
        )
        .unwrap();
        (nb, bits(&sims))
    };
    let reference = run(Parallel::Serial);
    // A brute-force check of a few rows: the serial lists are the true top k.
    for i in [0, 517, n - 1] {
        let mut all: Vec<(f64, usize)> = (0..n)
            .filter(|&j| j != i)
            .map(|j| {
                let kv = |(m, x): &(usize, Vec<f64>)| {
                    let (a, b) = (&x[i * m..(i + 1) * m], &x[j * m..(j + 1) * m]);
                    let d = |u: &[f64], v: &[f64]| u.iter().zip(v).map(|(p, q)| p * q).sum::<f64>();
                    d(a, b) / (d(a, a) * d(b, b)).sqrt()
                };
                (eta[0] * kv(&xs[0]) + eta[1] * kv(&xs[1]), j)
            })
            .collect();
        all.sort_by(|p, q| q.0.total_cmp(&p.0).then(p.1.cmp(&q.1)));
        let want: Vec<usize> = all[..k].iter().map(|p| p.1).collect();
        assert_eq!(&reference.0[i * k..(i + 1) * k], &want[..], "row {i}");
    }
    for (name, par) in pools() {
        assert!(run(par) == reference, "fused kNN: {name}");
    }
}

/// A view of few features over many items: `X·Vᵀ` (40 × 16, summed over
/// 30 000 items) is split over the items into per-task partial products that
/// are added in task order (`linalg::gemm_k`), and `VVᵀ` over rows of `Vᵀ`;
/// joint NMF with a second such view gives the same bits for every pool and
/// never rises.
#[test]
fn few_features_many_items_split_over_the_items_and_give_the_same_bits() {
    let n = 30_000;
    let xs = [
        (40, random_matrix(40, n, 1.0, 7)),
        (12, random_matrix(12, n, 1.0, 8)),
    ];
    let views: Vec<View<'_, f64>> = xs
        .iter()
        .map(|(m, x)| View::from(Dense::new(x, *m, n, *m).unwrap()))
        .collect();
    let reference = joint(&views, 16, Parallel::Serial).unwrap();
    for (name, par) in pools() {
        assert!(
            joint(&views, 16, par).unwrap() == reference,
            "few features, many items: {name}"
        );
    }
}
