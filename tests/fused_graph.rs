//! MVEL's fused multi-view graph (DESIGN §8): symmetric, total weight n; the
//! within-view part equals an RBF graph computed here with the exact median
//! bandwidth; the cross-view part equals the kernel of the CCA projections
//! (computed here from the library's CCA); priors weigh the parts; bad input is
//! refused with `w` untouched.

mod common;

use common::*;
use mvnmf::graph::{fused_graph, fused_graph_workspace, FusedParams};
use mvnmf::{Dense, Error, View};

fn views(n: usize, dims: &[usize], seed: u64) -> Vec<Vec<f64>> {
    // A shared latent signal so the views correlate, plus noise; any sign.
    let mut g = Lcg(seed);
    let z: Vec<f64> = (0..2 * n).map(|_| g.uniform() - 0.5).collect();
    dims.iter()
        .map(|&d| {
            let a: Vec<f64> = (0..d * 2).map(|_| g.uniform() - 0.5).collect();
            (0..d * n)
                .map(|t| {
                    let (i, u) = (t % d, t / d);
                    a[i] * z[u] + a[i + d] * z[u + n] + 0.1 * (g.uniform() - 0.5)
                })
                .collect()
        })
        .collect()
}

fn build(
    xs: &[Vec<f64>],
    n: usize,
    p: &FusedParams,
    priors: Option<&[f64]>,
) -> Result<Vec<f64>, Error> {
    let vs: Vec<View<'_, f64>> = xs
        .iter()
        .map(|x| View::from(Dense::new(x, x.len() / n, n, x.len() / n).unwrap()))
        .collect();
    let mut work = vec![0u8; fused_graph_workspace::<f64>(vs.iter().map(|v| v.shape()), p)?];
    let mut w = vec![0.0; n * n];
    fused_graph(&vs[..], None, priors, p, &mut w, &mut work)?;
    Ok(w)
}

fn rbf_median(a: &[Vec<f64>], b: &[Vec<f64>], skip_diag: bool) -> Vec<f64> {
    let n = a.len();
    let mut d = vec![0.0; n * n];
    let mut all = vec![];
    for v in 0..n {
        for u in 0..n {
            let x: f64 = a[u].iter().zip(&b[v]).map(|(p, q)| (p - q) * (p - q)).sum();
            d[u + v * n] = x;
            if !(skip_diag && u == v) {
                all.push(x);
            }
        }
    }
    all.sort_by(|p, q| p.partial_cmp(q).unwrap());
    let g = 1.0 / all[(all.len() - 1) / 2];
    d.iter().map(|x| (-g * x).exp()).collect()
}

fn cols(x: &[f64], d: usize) -> Vec<Vec<f64>> {
    x.chunks(d).map(|c| c.to_vec()).collect()
}

#[test]
fn within_view_graph_is_the_median_rbf_and_the_whole_is_symmetric_with_weight_n() {
    let n = 40;
    let xs = views(n, &[5, 3], 1);
    let p = FusedParams {
        cross_view: false,
        ..FusedParams::default()
    };
    let w = build(&xs, n, &p, None).unwrap();
    let mut want = vec![0.0; n * n];
    for (x, d) in xs.iter().zip([5, 3]) {
        let c = cols(x, d);
        let k = rbf_median(&c, &c, true);
        let vol: f64 = k.iter().sum();
        want.iter_mut()
            .zip(&k)
            .for_each(|(a, b)| *a += 0.5 * b / vol * n as f64);
    }
    assert!(
        max_rel_diff(&w, &want) < 1e-12,
        "{}",
        max_rel_diff(&w, &want)
    );
    let total: f64 = w.iter().sum();
    assert!((total - n as f64).abs() < 1e-9 * n as f64);
}

#[test]
fn cross_view_graph_is_the_kernel_of_the_cca_projections() {
    let n = 30;
    let dims = [4usize, 6];
    let xs = views(n, &dims, 2);
    let p = FusedParams {
        cca_dims: 2,
        ..FusedParams::default()
    };
    let w = build(&xs, n, &p, None).unwrap();
    for v in 0..n {
        for u in 0..v {
            assert_eq!(w[u + v * n], w[v + u * n]);
        }
    }
    // Independent assembly: within parts (1/4 each) + the cross pair (1/4 + 1/4).
    let mut want = vec![0.0; n * n];
    for (x, &d) in xs.iter().zip(&dims) {
        let c = cols(x, d);
        let k = rbf_median(&c, &c, true);
        let vol: f64 = k.iter().sum();
        want.iter_mut()
            .zip(&k)
            .for_each(|(a, b)| *a += 0.25 * b / vol * n as f64);
    }
    // The CCA of the two views with the same ridge rule (relative to the mean variance).
    let FusedCca {
        phi_a: pa,
        phi_b: pb,
        rho,
        mu_a: ma,
        mu_b: mb,
    } = fused_cca(&xs[0], 4, &xs[1], 6, n, 2);
    let proj = |x: &[f64], d: usize, phi: &[f64], mu: &[f64]| -> Vec<Vec<f64>> {
        (0..n)
            .map(|u| {
                (0..2)
                    .map(|r| {
                        (0..d)
                            .map(|i| phi[i + r * d] * (x[i + u * d] - mu[i]))
                            .sum()
                    })
                    .collect()
            })
            .collect()
    };
    let (za, zb) = (proj(&xs[0], 4, &pa, &ma), proj(&xs[1], 6, &pb, &mb));
    let k = rbf_median(&za, &zb, false);
    let vol: f64 = k.iter().sum();
    for v in 0..n {
        for u in 0..n {
            want[u + v * n] += 0.25 * (k[u + v * n] + k[v + u * n]) / vol * n as f64;
        }
    }
    assert!(
        max_rel_diff(&w, &want) < 1e-9,
        "{}",
        max_rel_diff(&w, &want)
    );
    assert!(rho[0] > 0.9, "the views share a signal: rho {rho:?}");
}

#[test]
fn priors_weigh_the_parts_and_bad_input_is_refused() {
    let n = 20;
    let xs = views(n, &[3, 4], 3);
    let p = FusedParams::default();
    // All weight on view 1's own graph = the within-view graph of view 1 alone.
    let only1 = build(&xs, n, &p, Some(&[1.0, 0.0, 0.0, 0.0])).unwrap();
    let alone = build(
        &xs[..1],
        n,
        &FusedParams {
            cross_view: false,
            ..p
        },
        None,
    )
    .unwrap();
    assert!(max_rel_diff(&only1, &alone) < 1e-13);
    for (pr, e) in [
        (vec![0.5, 0.2, 0.1, 0.2], Error::BadParameter), // asymmetric
        (vec![0.5, 0.0, 0.0, 0.4], Error::BadParameter), // sum != 1
        (vec![1.0, 0.0, 0.0], Error::DimensionMismatch),
    ] {
        assert_eq!(build(&xs, n, &p, Some(&pr)).unwrap_err(), e);
    }
    let mut bad = xs.clone();
    bad[1][5] = f64::NAN;
    let vs: Vec<View<'_, f64>> = bad
        .iter()
        .map(|x| View::from(Dense::new(x, x.len() / n, n, x.len() / n).unwrap()))
        .collect();
    let mut work =
        vec![0u8; fused_graph_workspace::<f64>(vs.iter().map(|v| v.shape()), &p).unwrap()];
    let mut w = vec![7.0; n * n];
    assert_eq!(
        fused_graph(&vs[..], None, None, &p, &mut w, &mut work).unwrap_err(),
        Error::NonFiniteInput
    );
    assert!(w.iter().all(|&x| x == 7.0));
    let short = xs[1][..4 * (n - 1)].to_vec();
    let vs2 = [
        View::from(Dense::new(&xs[0], 3, n, 3).unwrap()),
        View::from(Dense::new(&short, 4, n - 1, 4).unwrap()),
    ];
    assert_eq!(
        fused_graph_workspace::<f64>(vs2.iter().map(|v| v.shape()), &p).unwrap_err(),
        Error::DimensionMismatch
    );
    let zero = FusedParams { cca_reg: 0.0, ..p };
    assert_eq!(
        fused_graph_workspace::<f64>(vs.iter().map(|v| v.shape()), &zero).unwrap_err(),
        Error::BadParameter
    );
}
