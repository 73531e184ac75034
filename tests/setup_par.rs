//! The set-up's passes over all items on the pool (issue 30, item 6): the evaluator's
//! per-item scales and views' largest values, and the CSR graph's checks, split into
//! tasks fixed by the shapes, give the same bits (and the same errors) for every pool; so do
//! the pipeline's checks of the values and the data scale's largest values (done once, before
//! the set-up, and taken by the solver).

mod common;

use common::{outs, pools, Csr, Lcg};
use mvnmf::eval::UNLABELED;
use mvnmf::graph::{self, CsrGraph, GraphBuild, GraphParams, Penalty};
use mvnmf::pipeline::{self, Method, PipelineParams};
use mvnmf::similarity::{AnnParams, Bandwidth, Kernel};
use mvnmf::{Dense, Error, Parallel, View};

const N: usize = 3000;
/// `N · M ≥ 2²¹`: the passes over a view split into two tasks.
const M: [usize; 2] = [800, 720];
const C: usize = 4;
const KS: [Kernel; 2] = [Kernel::Rbf(Bandwidth::Median), Kernel::Linear];

/// Two views of 4 clusters (a nonnegative centre per cluster plus noise), every third
/// item labeled. The last item of view 0 holds `1e140` (past the evaluator's no-scaling
/// bound, `2^448`): the view is then evaluated scaled by a power of two found from its
/// largest value, which lies in the last task's items only.
fn data() -> (Vec<Vec<f64>>, Vec<u32>) {
    let mut r = Lcg(7);
    let truth: Vec<u32> = (0..N).map(|j| (j % C) as u32).collect();
    let xs = M
        .iter()
        .map(|&m| {
            let centres: Vec<f64> = (0..C * m).map(|_| r.uniform()).collect();
            let mut x = vec![0.0; m * N];
            for (j, col) in x.chunks_exact_mut(m).enumerate() {
                let c = truth[j] as usize;
                for (f, o) in col.iter_mut().enumerate() {
                    *o = centres[c * m + f] + 0.3 * r.uniform();
                }
            }
            x
        })
        .collect::<Vec<_>>();
    let mut xs = xs;
    xs[0][M[0] * N - 1] = 1e140;
    let labels = (0..N)
        .map(|j| if j % 3 == 0 { truth[j] } else { UNLABELED })
        .collect();
    (xs, labels)
}

/// The affinity and penalty graphs, trimmed, weights as bits.
type Bits = (Vec<usize>, Vec<usize>, Vec<u64>);

fn tge(
    vs: &[View<'_, f64>],
    labels: &[u32],
    gp: &GraphParams,
    b: &GraphBuild,
    par: Parallel,
) -> (Bits, Bits) {
    let eta = [0.6, 0.4];
    let cap = graph::tge_capacity(N, C, gp).unwrap();
    let need =
        graph::tge_build_workspace::<f64>(vs.iter().map(|v| v.shape()), &KS, C, gp, b).unwrap();
    let mut w = vec![0u8; need];
    let (mut a, mut p) = (
        Csr::filled(N, cap.affinity, 0, 0.0),
        Csr::filled(N, cap.penalty, 0, 0.0),
    );
    let nnz = graph::tge_build(
        vs,
        &KS,
        (&eta, labels, C),
        gp,
        b,
        outs(&mut a),
        outs(&mut p),
        &mut w,
        par,
    )
    .unwrap();
    (a.bits(nnz.affinity), p.bits(nnz.penalty))
}

#[test]
fn graphs_on_the_pool_are_the_serial_bits() {
    let (xs, labels) = data();
    let vs: Vec<View<'_, f64>> = xs
        .iter()
        .zip(M)
        .map(|(x, m)| View::from(Dense::new(x, m, N, m).unwrap()))
        .collect();
    let gp = GraphParams {
        penalty: Penalty::ItemNeighbors,
        ..GraphParams::default()
    };
    // The labeled lists by the exact sweep (below its threshold) and by NN-descent.
    for b in [
        GraphBuild::Approx(AnnParams::default()),
        GraphBuild::ApproxAll(AnnParams::default()),
        GraphBuild::Exact,
    ] {
        let (a0, p0) = tge(&vs, &labels, &gp, &b, Parallel::Serial);
        assert!(a0.1.len() > N, "{b:?}: a graph with edges");
        for par in pools() {
            let (a, p) = tge(&vs, &labels, &gp, &b, par);
            assert!(a == a0, "{b:?} {par:?}: affinity");
            assert!(p == p0, "{b:?} {par:?}: penalty");
        }
    }
    // The outlier matters: without it (a view evaluated unscaled) the graph differs, so a
    // pass that missed the last items' largest value would be seen above.
    let mut ys = xs.clone();
    ys[0][M[0] * N - 1] = 1.0;
    let ws: Vec<View<'_, f64>> = ys
        .iter()
        .zip(M)
        .map(|(x, m)| View::from(Dense::new(x, m, N, m).unwrap()))
        .collect();
    let b = GraphBuild::Approx(AnnParams::default());
    let (a0, _) = tge(&vs, &labels, &gp, &b, Parallel::Serial);
    let (a1, _) = tge(&ws, &labels, &gp, &b, Parallel::Serial);
    assert!(a0 != a1, "the scaled view gives other values");
}

/// A ring of `n` items, each joined to the 2 nearest on each side (weight by distance).
fn ring(n: usize) -> (Vec<usize>, Vec<usize>, Vec<f64>) {
    let (mut rp, mut ci, mut w) = (vec![0], Vec::new(), Vec::new());
    for j in 0..n {
        let mut row: Vec<(usize, f64)> = [n - 2, n - 1, 1, 2]
            .iter()
            .map(|&d| ((j + d) % n, if d == 1 || d == n - 1 { 1.0 } else { 0.5 }))
            .collect();
        row.sort_by_key(|e| e.0);
        for (c, x) in row {
            ci.push(c);
            w.push(x);
        }
        rp.push(ci.len());
    }
    (rp, ci, w)
}

#[test]
fn csr_checks_on_the_pool_give_the_serial_answer() {
    // 4·10⁵ items of degree 4: the checks split into two tasks.
    let n = 400_000;
    let (rp, ci, w) = ring(n);
    let late = n - 10; // a row of the last task
    let check = |rp: &[usize], ci: &[usize], w: &[f64]| {
        let want = CsrGraph::new(n, rp, ci, w).map(|g| g.nnz());
        for par in pools() {
            let got = CsrGraph::new_par(n, rp, ci, w, par).map(|g| g.nnz());
            assert_eq!(got, want, "{par:?}");
        }
        want
    };
    assert_eq!(check(&rp, &ci, &w), Ok(4 * n));
    // Asymmetric weight in a late row.
    let mut w1 = w.clone();
    w1[rp[late]] = 0.75;
    assert_eq!(check(&rp, &ci, &w1), Err(Error::BadParameter));
    // Unsorted columns in a late row.
    let mut c1 = ci.clone();
    c1.swap(rp[late], rp[late] + 1);
    assert_eq!(check(&rp, &c1, &w), Err(Error::MalformedCsc));
    // A column out of range in a late row, and a bad weight earlier: the structure is
    // checked first, on every pool.
    let mut c2 = ci.clone();
    c2[rp[late + 1] - 1] = n;
    let mut w2 = w.clone();
    w2[3] = f64::NAN;
    assert_eq!(check(&rp, &c2, &w2), Err(Error::MalformedCsc));
    // A negative weight and an asymmetry: the weights are checked first.
    let mut w3 = w1.clone();
    w3[rp[late + 5]] = -1.0;
    let serial = CsrGraph::new(n, &rp, &ci, &w3).err();
    assert!(serial.is_some() && serial != Some(Error::BadParameter));
    assert_eq!(check(&rp, &ci, &w3), Err(serial.unwrap()));
}

/// MvSL-T through the pipeline on `par`, a few iterations: `u`, `v`, `eta` as bits, or
/// the error (with the outputs checked untouched).
fn pipeline_bits(
    vs: &[View<'_, f64>],
    labels: &[u32],
    par: Parallel,
) -> Result<(Vec<u64>, Vec<u64>), Error> {
    let (k, b) = (4, GraphBuild::Approx(AnnParams::default()));
    let mut p = PipelineParams::preset(Method::MvslT);
    p.solver.max_iter = 3;
    p.solver.parallel = par;
    let shapes = vs.iter().map(|x| x.shape());
    let need = pipeline::fit_graph_workspace::<f64>(shapes, &KS, C, k, &p, &b).unwrap();
    let mut w = vec![0u8; need];
    let (mut u0, mut u1, mut v) = (vec![7.0; M[0] * k], vec![7.0; M[1] * k], vec![7.0; k * N]);
    let mut eta = [7.0; 2];
    let us = &mut [&mut u0[..], &mut u1[..]][..];
    let r = pipeline::fit_graph(
        vs,
        &KS,
        (labels, C, k),
        &p,
        &b,
        (us, &mut v, &mut eta),
        &mut w,
        None,
    );
    let bits = |x: &[f64]| x.iter().map(|e| e.to_bits()).collect::<Vec<_>>();
    match r {
        Ok(_) => {
            let uu = [bits(&u0), bits(&u1), bits(&eta)].concat();
            Ok((uu, bits(&v)))
        }
        Err(e) => {
            let all = [&u0[..], &u1[..], &v[..], &eta[..]].concat();
            assert!(all.iter().all(|&x| x == 7.0), "{par:?}: outputs untouched");
            Err(e)
        }
    }
}

#[test]
fn pipeline_checks_on_the_pool_give_the_serial_answer() {
    // `N · M_v ≥ 2²¹` in both views: the checks of the values and the largest values run in
    // two tasks per view (the scaled view's largest value is in the last task's items).
    let (xs, labels) = data();
    let views = |xs: &[Vec<f64>]| -> Vec<Vec<f64>> { xs.to_vec() };
    let run = |xs: &[Vec<f64>]| {
        let vs: Vec<View<'_, f64>> = xs
            .iter()
            .zip(M)
            .map(|(x, m)| View::from(Dense::new(x, m, N, m).unwrap()))
            .collect();
        let want = pipeline_bits(&vs, &labels, Parallel::Serial);
        for par in pools() {
            assert!(pipeline_bits(&vs, &labels, par) == want, "{par:?}");
        }
        want
    };
    assert!(run(&xs).is_ok());
    let late = (N - 3) * M[0]; // an entry of the last task of view 0
                               // A NaN late and a negative later still: the first in the serial order.
    let mut a = views(&xs);
    a[0][late] = f64::NAN;
    a[0][late + 2 * M[0]] = -1.0;
    assert_eq!(run(&a).err(), Some(Error::NonFiniteInput));
    // The other way round.
    let mut b = views(&xs);
    b[0][late] = -1.0;
    b[0][late + 2 * M[0]] = f64::INFINITY;
    assert_eq!(run(&b).err(), Some(Error::NegativeInput));
    // View 0 before view 1, whatever task holds the entry.
    let mut c = views(&xs);
    c[1][5] = -1.0;
    c[0][late] = f64::NAN;
    assert_eq!(run(&c).err(), Some(Error::NonFiniteInput));
}

#[test]
fn csc_checks_on_the_pool_give_the_serial_answer() {
    // View 1 stored as CSC with every entry (`N · M_1 ≥ 2²¹` stored values: two tasks).
    let (xs, labels) = data();
    let m = M[1];
    let cp: Vec<usize> = (0..=N).map(|j| j * m).collect();
    let ri: Vec<usize> = (0..N).flat_map(|_| 0..m).collect();
    let run = |x1: &[f64]| {
        let vs = [
            View::from(Dense::new(&xs[0], M[0], N, M[0]).unwrap()),
            View::from(mvnmf::data::Csc::new(m, N, &cp, &ri, x1).unwrap()),
        ];
        let want = pipeline_bits(&vs, &labels, Parallel::Serial);
        for par in pools() {
            assert!(pipeline_bits(&vs, &labels, par) == want, "{par:?}");
        }
        want
    };
    assert!(run(&xs[1]).is_ok());
    let mut x1 = xs[1].clone();
    x1[N * m - 7] = -2.0;
    x1[N * m - 2] = f64::NAN;
    assert_eq!(run(&x1).err(), Some(Error::NegativeInput));
    x1[3] = f64::NEG_INFINITY;
    assert_eq!(run(&x1).err(), Some(Error::NonFiniteInput));
}

#[test]
fn random_start_on_the_pool_is_the_serial_stream() {
    use mvnmf::graph::NoGraph;
    use mvnmf::models::mvsl::{self, MvslParams};
    // `K · N ≥ 2²¹` draws for `V`: its start is drawn in several tasks, each from its place
    // in the one seeded stream; the bases from where `V`'s draws end.
    let (n, k, m) = (1 << 19, 5, [3, 2]);
    let mut r = Lcg(3);
    let xs: Vec<Vec<f64>> = m
        .iter()
        .map(|&mv| (0..mv * n).map(|_| r.uniform()).collect())
        .collect();
    let vs: Vec<View<'_, f64>> = xs
        .iter()
        .zip(m)
        .map(|(x, mv)| View::from(Dense::new(x, mv, n, mv).unwrap()))
        .collect();
    let start = |par: Parallel, vmax: f64| {
        let p = MvslParams {
            max_iter: 0,
            parallel: par,
            vmax,
            seed: 11,
            ..MvslParams::joint_nmf()
        };
        let g = NoGraph { n };
        let shapes = vs.iter().map(|x| x.shape());
        let mut w = vec![0u8; mvsl::fit_workspace::<f64, _>(shapes, &g, k, &p).unwrap()];
        let (mut u0, mut u1, mut v) = (vec![0.0; m[0] * k], vec![0.0; m[1] * k], vec![0.0; k * n]);
        let us = &mut [&mut u0[..], &mut u1[..]][..];
        mvsl::fit(&vs[..], &g, k, &p, us, &mut v, &mut w, None).unwrap();
        let bits = |x: &[f64]| x.iter().map(|e| e.to_bits()).collect::<Vec<_>>();
        [bits(&u0), bits(&u1), bits(&v)].concat()
    };
    for vmax in [1.0, f64::INFINITY] {
        let want = start(Parallel::Serial, vmax);
        assert!(
            want.iter().all(|&b| f64::from_bits(b) > 0.0),
            "a start in (0, s]"
        );
        for par in pools() {
            assert!(start(par, vmax) == want, "{par:?} vmax {vmax}");
        }
    }
}
