//! The deep solver: monotone fine-tuning for every preset and layer shape,
//! M = 1 is MCL exactly, the cheap products equal the naive ones, the box stops
//! the scale drift, out-of-sample encoding through the stack.

mod common;

use common::*;
use mvnmf::eval::UNLABELED;
use mvnmf::graph::{GraphOp, NoGraph, Sge};
use mvnmf::models::deep::{self, DeepParams, DeepVInit};
use mvnmf::models::mvsl::{self, MvslParams};
use mvnmf::{Csc, Dense, Init, Report, View};

struct Data {
    xs: Vec<(usize, Vec<f64>)>,
    n: usize,
    labels: Vec<u32>,
}

fn data(n: usize, seed: u64) -> Data {
    let mut g = Lcg(seed);
    let truth: Vec<u32> = (0..n).map(|j| (j % 3) as u32).collect();
    let labels = truth
        .iter()
        .enumerate()
        .map(|(j, &c)| if j % 4 == 0 { c } else { UNLABELED })
        .collect();
    let mut gen = |m: usize, scale: f64| {
        let mut x = vec![0.0; m * n];
        for j in 0..n {
            for i in 0..m {
                let on = i % 3 == truth[j] as usize;
                x[i + j * m] = scale * if on { 1.0 } else { 0.2 } * g.uniform();
            }
        }
        x
    };
    let xs = vec![(24, gen(24, 1.0)), (12, gen(12, 30.0))];
    Data { xs, n, labels }
}

fn views(d: &Data) -> Vec<View<'_, f64>> {
    d.xs.iter()
        .map(|(m, x)| View::from(Dense::new(x, *m, d.n, *m).unwrap()))
        .collect()
}

fn fit<G: GraphOp<f64> + ?Sized>(
    vs: &[View<'_, f64>],
    g: &G,
    layers: &[usize],
    p: &DeepParams,
    u0: Option<&[Vec<f64>]>,
    v0: Option<&[f64]>,
) -> (Vec<Vec<f64>>, Vec<f64>, Vec<f64>, Report) {
    let n = vs[0].cols();
    let k = *layers.last().unwrap();
    let mut us: Vec<Vec<f64>> = match u0 {
        Some(u) => u.to_vec(),
        None => vs
            .iter()
            .map(|x| vec![0.0; deep::factor_len(x.rows(), layers).unwrap()])
            .collect(),
    };
    let mut v = v0.map_or(vec![0.0; k * n], |v| v.to_vec());
    let mut w = vec![
        0u8;
        deep::fit_workspace::<f64, G>(vs.iter().map(|x| x.shape()), g, layers, p)
            .unwrap()
    ];
    let mut obj = Vec::new();
    let mut rec = recorder(&mut obj);
    let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
    let r = deep::fit(
        vs,
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

#[test]
fn fine_tuning_never_increases_the_objective() {
    let d = data(48, 1);
    let c = to_csc(&d.xs[1].1, 12, d.n);
    let sge = Sge::new(&d.labels, 3).unwrap();
    let scale: f64 = d.xs.iter().map(|(_, x)| half_sq(x)).sum();
    let presets = [
        (
            "DMCL",
            DeepParams {
                top: MvslParams {
                    alpha: 2.0,
                    ..MvslParams::mcl()
                },
                ..DeepParams::dmcl()
            },
        ),
        ("DMCL preset α", DeepParams::dmcl()),
        (
            "DMCL paper α",
            DeepParams {
                top: MvslParams::mcl(),
                ..DeepParams::dmcl()
            },
        ),
        (
            "DMCL no box",
            DeepParams {
                box_lower: false,
                ..DeepParams::dmcl()
            },
        ),
        (
            "DMCL pretrained V",
            DeepParams {
                v_init: DeepVInit::Pretrained,
                ..DeepParams::dmcl()
            },
        ),
        ("ConcatDNMF", DeepParams::dnmf()),
    ];
    for (name, p0) in presets {
        let p = DeepParams {
            top: MvslParams {
                max_iter: 40,
                tol: 0.0,
                ..p0.top
            },
            pretrain_iter: 30,
            ..p0
        };
        for layers in [&[10, 6][..], &[16, 9, 4][..], &[5][..], &[50, 30, 5][..]] {
            for sparse in [false, true] {
                let mut vs = views(&d);
                if sparse {
                    vs[1] =
                        View::from(Csc::new(12, d.n, &c.col_ptr, &c.row_idx, &c.values).unwrap());
                }
                let (us, v, obj, r) = fit(&vs, &sge, layers, &p, None, None);
                let what = format!("{name} layers {layers:?} sparse {sparse}");
                assert_eq!(obj.len(), 41, "{what}");
                assert_monotone(&obj, 1e-10 * scale, &what);
                assert!(
                    v.iter().all(|&x| (0.0..=p.top.vmax).contains(&x)),
                    "{what}: V"
                );
                if p.box_lower && layers.len() > 1 {
                    for (i, (rows, _)) in d.xs.iter().enumerate() {
                        let lower: usize = deep::layer_dims(*rows, layers)
                            .take(layers.len() - 1)
                            .map(|(a, b)| a * b)
                            .sum();
                        assert!(
                            us[i][..lower].iter().all(|&x| (0.0..=1.0).contains(&x)),
                            "{what}: box"
                        );
                    }
                }
                let _ = r;
            }
        }
    }
}

#[test]
fn one_layer_is_mcl_exactly() {
    let d = data(40, 2);
    let vs = views(&d);
    let sge = Sge::new(&d.labels, 3).unwrap();
    let k = 5;
    let top = MvslParams {
        max_iter: 25,
        tol: 0.0,
        alpha: 3.0,
        init: Init::Given,
        ..MvslParams::mcl()
    };
    let u0: Vec<Vec<f64>> =
        d.xs.iter()
            .map(|(m, _)| random_matrix(*m, k, 1.0, *m as u64))
            .collect();
    let v0 = random_matrix(k, d.n, 1.0, 99);
    let (ud, vd, od, _) = fit(
        &vs,
        &sge,
        &[k],
        &DeepParams {
            top,
            ..DeepParams::dmcl()
        },
        Some(&u0),
        Some(&v0),
    );
    let mut us = u0.clone();
    let mut v = v0.clone();
    let mut w = vec![
        0u8;
        mvsl::fit_workspace::<f64, _>(vs.iter().map(|x| x.shape()), &sge, k, &top)
            .unwrap()
    ];
    let mut obj = Vec::new();
    let mut rec = recorder(&mut obj);
    let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
    mvsl::fit(
        &vs[..],
        &sge,
        k,
        &top,
        &mut refs[..],
        &mut v,
        &mut w,
        Some(&mut rec),
    )
    .unwrap();
    drop(rec);
    assert_eq!(vd, v, "V differs from the shallow MCL");
    assert_eq!(ud, us, "U differs from the shallow MCL");
    assert_eq!(od, obj, "objectives differ");
}

/// One sweep of a 2-layer model without regularisers, written the obvious way
/// (forming Φ = U_2 V and B explicitly), against the solver's cheap products.
#[test]
fn cheap_products_equal_the_naive_sweep() {
    let d = data(30, 3);
    let (m, x) = (&d.xs[0].0, &d.xs[0].1);
    let (m, n, p1, k) = (*m, d.n, 7, 4);
    let vs = [View::from(Dense::new(x, m, n, m).unwrap())];
    let u1 = random_matrix(m, p1, 1.0, 5)
        .iter()
        .map(|a| a * 0.9)
        .collect::<Vec<_>>();
    let u2 = random_matrix(p1, k, 1.0, 6);
    let v0 = random_matrix(k, n, 1.0, 7);
    let eps = 1e-12;
    let top = MvslParams {
        max_iter: 1,
        tol: 0.0,
        eps,
        init: Init::Given,
        ..MvslParams::joint_nmf()
    };
    let p = DeepParams {
        top,
        box_lower: false,
        ..DeepParams::dnmf()
    };
    let buf: Vec<f64> = u1.iter().chain(&u2).cloned().collect();
    let (us, v, _, _) = fit(&vs, &NoGraph { n }, &[p1, k], &p, Some(&[buf]), Some(&v0));
    // Naive: U1 ← U1 ∘ (X Φᵀ + ε)/(U1 Φ Φᵀ + ε), Φ = U2 V; U2 ← U2 ∘ (U1ᵀ X Vᵀ + ε)/(U1ᵀU1 U2 V Vᵀ + ε);
    // V ← V ∘ (Ũᵀ X + ε)/(ŨᵀŨ V + ε), Ũ = U1 U2.
    let mul = |a: &[f64], ar: usize, ac: usize, b: &[f64], bc: usize| {
        let mut c = vec![0.0; ar * bc];
        for j in 0..bc {
            for t in 0..ac {
                for i in 0..ar {
                    c[i + j * ar] += a[i + t * ar] * b[t + j * ac];
                }
            }
        }
        c
    };
    let tr = |a: &[f64], r: usize, c: usize| {
        let mut t = vec![0.0; r * c];
        for j in 0..c {
            for i in 0..r {
                t[j + i * c] = a[i + j * r];
            }
        }
        t
    };
    let mu = |x: &mut [f64], a: &[f64], b: &[f64]| {
        x.iter_mut()
            .zip(a)
            .zip(b)
            .for_each(|((x, a), b)| *x *= (a + eps) / (b + eps))
    };
    let mut u1n = u1.clone();
    let phi = mul(&u2, p1, k, &v0, n);
    let num = mul(x, m, n, &tr(&phi, p1, n), p1);
    let den = mul(&u1n, m, p1, &mul(&phi, p1, n, &tr(&phi, p1, n), p1), p1);
    mu(&mut u1n, &num, &den);
    let mut u2n = u2.clone();
    let u1t = tr(&u1n, m, p1);
    let num = mul(&mul(&u1t, p1, m, x, n), p1, n, &tr(&v0, k, n), k);
    let den = mul(
        &mul(&mul(&u1t, p1, m, &u1n, p1), p1, p1, &u2n, k),
        p1,
        k,
        &mul(&v0, k, n, &tr(&v0, k, n), k),
        k,
    );
    mu(&mut u2n, &num, &den);
    let ut = mul(&u1n, m, p1, &u2n, k);
    let utt = tr(&ut, m, k);
    let mut vn = v0.clone();
    let num = mul(&utt, k, m, x, n);
    let den = mul(&mul(&utt, k, m, &ut, k), k, k, &v0, n);
    mu(&mut vn, &num, &den);
    let got: Vec<f64> = us[0].clone();
    let want: Vec<f64> = u1n.iter().chain(&u2n).cloned().collect();
    assert!(
        max_rel_diff(&got, &want) < 1e-12,
        "U: {:e}",
        max_rel_diff(&got, &want)
    );
    assert!(
        max_rel_diff(&v, &vn) < 1e-12,
        "V: {:e}",
        max_rel_diff(&v, &vn)
    );
}

#[test]
fn the_box_stops_the_scale_drift() {
    // Without the box, L1,∞ on the top layer is dodged by growing the lower
    // layer (DESIGN §2); with it, lower layers stay in [0, 1].
    let d = data(60, 4);
    let vs = views(&d);
    let sge = Sge::new(&d.labels, 3).unwrap();
    let top = MvslParams {
        max_iter: 300,
        tol: 0.0,
        alpha: 20.0,
        ..MvslParams::mcl()
    };
    let layers = [10, 5];
    let lower_max = |us: &[Vec<f64>]| {
        us.iter()
            .zip(&d.xs)
            .map(|(u, (rows, _))| u[..rows * 10].iter().cloned().fold(0.0, f64::max))
            .fold(0.0, f64::max)
    };
    let (ub, _, ob, rb) = fit(
        &vs,
        &sge,
        &layers,
        &DeepParams {
            top,
            ..DeepParams::dmcl()
        },
        None,
        None,
    );
    let (uf, _, of, rf) = fit(
        &vs,
        &sge,
        &layers,
        &DeepParams {
            top,
            box_lower: false,
            ..DeepParams::dmcl()
        },
        None,
        None,
    );
    assert!(lower_max(&ub) <= 1.0);
    assert!(
        lower_max(&uf) > 3.0,
        "no drift without the box? max lower entry {}",
        lower_max(&uf)
    );
    assert!(
        rf.objective.sparsity() < 0.5 * rb.objective.sparsity(),
        "free {} box {}",
        rf.objective.sparsity(),
        rb.objective.sparsity()
    );
    let _ = (ob, of);
}

#[test]
fn encode_through_the_stack() {
    let d = data(40, 5);
    let vs = views(&d);
    let layers = [9, 5];
    let p = DeepParams {
        top: MvslParams {
            max_iter: 150,
            tol: 0.0,
            ..MvslParams::joint_nmf()
        },
        ..DeepParams::dnmf()
    };
    let (us, v, _, _) = fit(&vs, &NoGraph { n: d.n }, &layers, &p, None, None);
    let enc = DeepParams {
        top: MvslParams {
            max_iter: 400,
            init: Init::Given,
            ..p.top
        },
        ..p
    };
    let mut w = vec![
        0u8;
        deep::encode_workspace::<f64, _>(
            vs.iter().map(|x| x.shape()),
            &NoGraph { n: d.n },
            &layers,
            &enc
        )
        .unwrap()
    ];
    // Warm start from the fitted V: the encode objective must not exceed the fit's.
    let mut v2 = v.clone();
    let refs: Vec<&[f64]> = us.iter().map(|u| &u[..]).collect();
    let mut obj = Vec::new();
    let mut rec = recorder(&mut obj);
    let r = deep::encode(
        &vs[..],
        &NoGraph { n: d.n },
        &layers,
        &enc,
        &refs[..],
        &mut v2,
        &mut w,
        Some(&mut rec),
    )
    .unwrap();
    drop(rec);
    let scale: f64 = d.xs.iter().map(|(_, x)| half_sq(x)).sum();
    assert_monotone(&obj, 1e-10 * scale, "deep encode");
    let direct: f64 =
        d.xs.iter()
            .zip(&us)
            .map(|((m, x), u)| {
                let (u1, u2) = u.split_at(m * 9);
                let mut ut = vec![0.0; m * 5];
                for j in 0..5 {
                    for t in 0..9 {
                        for i in 0..*m {
                            ut[i + j * m] += u1[i + t * m] * u2[t + j * 9];
                        }
                    }
                }
                direct_objective(x, *m, d.n, &ut, &v2, 5)
            })
            .sum();
    assert!((direct - r.objective.reconstruction()).abs() < 1e-9 * scale);
}
