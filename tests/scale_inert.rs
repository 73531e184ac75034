//! Issue 31, the last open class: `_f32` fits of data far below 1 whose
//! graph or sparsity weight multiplies nothing (`β > 0` with no graph or a
//! graph of zero weights, `α > 0` without a group norm). Such a weight used to
//! stop the data's scale-up at `2^32` (`crate::steps::scale`, "Only the weights
//! that act"): data near `1e-24` stayed near `1e-19`, `UᵀU` fell below float's
//! normal range and the objective rose (fuzz seeds 0x7014bc7 shallow,
//! 0x7002640 deep). Now such a weight plays no part: the fit is bit for bit the
//! fit with that weight at 0, `Ok`, finite, and its objective never rises.

mod common;

use common::{assert_monotone, random_matrix, recorder};
use mvnmf::graph::{CsrGraph, CsrGraphs, GraphOp, NoGraph};
use mvnmf::models::deep::{self, DeepParams};
use mvnmf::models::mvsl::{self, MvslParams};
use mvnmf::steps::prox::Sparsity;
use mvnmf::{Dense, Report, View};

const N: usize = 10;
const ROWS: [usize; 2] = [6, 4];

/// Two dense float views, entries in `(0, 1]·scale[v]`.
fn data(scale: [f64; 2]) -> Vec<Vec<f32>> {
    ROWS.iter()
        .zip(scale)
        .enumerate()
        .map(|(i, (&m, s))| {
            random_matrix(m, N, 1.0, 31 + i as u64)
                .iter()
                .map(|x| ((0.05 + x) * s) as f32)
                .collect()
        })
        .collect()
}

fn views(xs: &[Vec<f32>]) -> Vec<View<'_, f32>> {
    xs.iter()
        .zip(ROWS)
        .map(|(x, m)| View::from(Dense::new(x, m, N, m).unwrap()))
        .collect()
}

fn half_sq(xs: &[Vec<f32>]) -> f64 {
    xs.iter()
        .flatten()
        .map(|&x| 0.5 * (x as f64) * (x as f64))
        .sum()
}

type Fit = (Vec<Vec<f32>>, Vec<f32>, Vec<f64>, Report);

fn shallow<G: GraphOp<f32> + ?Sized>(xs: &[Vec<f32>], g: &G, k: usize, p: &MvslParams) -> Fit {
    let vs = views(xs);
    let shapes = vs.iter().map(|x| x.shape());
    let mut w = vec![0u8; mvsl::fit_workspace::<f32, G>(shapes, g, k, p).unwrap()];
    let mut us: Vec<Vec<f32>> = ROWS.iter().map(|&m| vec![0.0; m * k]).collect();
    let mut v = vec![0.0f32; k * N];
    let mut obj = vec![];
    let mut rec = recorder(&mut obj);
    let mut refs: Vec<&mut [f32]> = us.iter_mut().map(|u| &mut u[..]).collect();
    let r = mvsl::fit(
        &vs[..],
        g,
        k,
        p,
        &mut refs[..],
        &mut v,
        &mut w,
        Some(&mut rec),
    )
    .unwrap();
    drop(rec);
    (us, v, obj, r)
}

fn deep_fit<G: GraphOp<f32> + ?Sized>(
    xs: &[Vec<f32>],
    g: &G,
    layers: &[usize],
    p: &DeepParams,
) -> Fit {
    let vs = views(xs);
    let k = *layers.last().unwrap();
    let shapes = vs.iter().map(|x| x.shape());
    let mut w = vec![0u8; deep::fit_workspace::<f32, G>(shapes, g, layers, p).unwrap()];
    let mut us: Vec<Vec<f32>> = ROWS
        .iter()
        .map(|&m| vec![0.0; deep::factor_len(m, layers).unwrap()])
        .collect();
    let mut v = vec![0.0f32; k * N];
    let mut obj = vec![];
    let mut rec = recorder(&mut obj);
    let mut refs: Vec<&mut [f32]> = us.iter_mut().map(|u| &mut u[..]).collect();
    let r = deep::fit(
        &vs[..],
        g,
        layers,
        p,
        &mut refs[..],
        &mut v,
        &mut w,
        Some(&mut rec),
    )
    .unwrap();
    drop(rec);
    (us, v, obj, r)
}

/// `Ok`, finite factors, the objective never rising (float rounding: `1e-5` of
/// `½‖X‖²`, as the fuzz driver), and the same bits as `reference`.
fn check(fit: &Fit, reference: &Fit, xs: &[Vec<f32>], what: &str) {
    let (us, v, obj, r) = fit;
    assert!(
        us.iter().flatten().chain(v.iter()).all(|x| x.is_finite()),
        "{what}: non-finite factors"
    );
    assert!(
        obj.iter().all(|o| o.is_finite()),
        "{what}: non-finite objective"
    );
    assert!(r.objective.total.is_finite(), "{what}");
    assert_monotone(obj, 1e-5 * half_sq(xs), what);
    // The fit did something: the reconstruction fell.
    assert!(obj.last().unwrap() < &obj[0], "{what}: {obj:?}");
    let bits = |f: &Fit| {
        let (us, v, obj, _) = f;
        let mut b: Vec<u64> = us
            .iter()
            .flatten()
            .chain(v.iter())
            .map(|x| x.to_bits() as u64)
            .collect();
        b.extend(obj.iter().map(|o| o.to_bits()));
        b
    };
    assert_eq!(
        bits(fit),
        bits(reference),
        "{what}: not the fit without the weight"
    );
}

#[test]
fn issue31_f32_inert_weights_do_not_stop_the_scale_up() {
    // Both views near 1e-24 (the fuzz seeds' magnitude), and 1e-30 beside 1e-24.
    for scale in [[1e-24, 1e-24], [1e-24, 1e-30], [1e-33, 1e-33]] {
        let xs = data(scale);
        let none = NoGraph { n: N };
        // A CSR affinity graph whose weights are all zero (0x7014bc7's family,
        // 0xf00022f): every product zero, like no graph at all.
        let (rp, ci, wz) = ring();
        let zero = CsrGraphs::new(N, Some(CsrGraph::new(N, &rp, &ci, &wz).unwrap()), None).unwrap();
        let plain = MvslParams {
            max_iter: 150,
            tol: 0.0,
            vmax: 1.0,
            ..MvslParams::joint_nmf()
        };
        let reference = shallow(&xs, &none, 4, &plain);
        // β = 0.02 without a graph weight, α = 15 without a group norm.
        let inert = MvslParams {
            beta: 0.02,
            alpha: 15.0,
            sparsity: Sparsity::None,
            ..plain
        };
        let what = format!("MvSL f32 at {scale:?}");
        check(
            &shallow(&xs, &none, 4, &inert),
            &reference,
            &xs,
            &format!("{what}, no graph"),
        );
        check(
            &shallow(&xs, &zero, 4, &inert),
            &reference,
            &xs,
            &format!("{what}, zero CSR graph"),
        );

        // Deep (0x7002640): the DMCL preset without its graph and group norm.
        let dp = DeepParams {
            top: MvslParams {
                sparsity: Sparsity::None,
                alpha: 0.0,
                beta: 0.0,
                gamma: 0.0,
                max_iter: 150,
                tol: 0.0,
                ..DeepParams::dmcl().top
            },
            ..DeepParams::dmcl()
        };
        let layers = [3, 2];
        let reference = deep_fit(&xs, &none, &layers, &dp);
        let inert = DeepParams {
            top: MvslParams {
                beta: 0.2,
                alpha: 10.0,
                ..dp.top
            },
            ..dp
        };
        let what = format!("deep f32 at {scale:?}");
        check(
            &deep_fit(&xs, &none, &layers, &inert),
            &reference,
            &xs,
            &format!("{what}, no graph"),
        );
        check(
            &deep_fit(&xs, &zero, &layers, &inert),
            &reference,
            &xs,
            &format!("{what}, zero CSR graph"),
        );
    }
}

/// The ring graph's CSR arrays (item `j` linked to `j ± 1`), all weights 0.
fn ring() -> (Vec<usize>, Vec<usize>, Vec<f64>) {
    let mut rp = vec![0];
    let mut ci = vec![];
    for j in 0..N {
        let mut nb = vec![(j + N - 1) % N, (j + 1) % N];
        nb.sort();
        nb.dedup();
        ci.extend(nb);
        rp.push(ci.len());
    }
    let w = vec![0.0; ci.len()];
    (rp, ci, w)
}

/// Where the weight acts (a real graph) it still limits the scale: the fit is
/// `Ok`, finite, and monotone at the graph's scale.
#[test]
fn issue31_f32_acting_graph_weight_still_limits_the_scale() {
    let xs = data([1e-24, 1e-24]);
    let (rp, ci, _) = ring();
    let w = vec![1.0; ci.len()];
    let g = CsrGraphs::new(N, Some(CsrGraph::new(N, &rp, &ci, &w).unwrap()), None).unwrap();
    let p = MvslParams {
        max_iter: 150,
        tol: 0.0,
        vmax: 1.0,
        beta: 0.02,
        ..MvslParams::joint_nmf()
    };
    let (us, v, obj, _) = shallow(&xs, &g, 4, &p);
    assert!(us.iter().flatten().chain(v.iter()).all(|x| x.is_finite()));
    // The graph term's scale: β·deg·K·N·vmax² (deg ≤ 2·2 for the ring).
    let tol = 1e-5 * (half_sq(&xs) + 0.02 * 4.0 * (4 * N) as f64);
    assert_monotone(&obj, tol, "MvSL f32 at 1e-24 with a ring graph");
}
