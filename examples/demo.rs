//! The main job on a small real dataset shipped with mvnmf: 500 handwritten
//! digits described by six feature views (UCI Multiple Features sample,
//! `data/mfeat-sample`, CC BY 4.0). It factorizes each view alone (NMF) and all
//! views together (joint multi-view NMF), then judges the encodings as the
//! papers do: kNN accuracy (k = 9) of the unlabeled items from a stratified
//! random labeled fraction, mean ± std over 5 splits.
//!
//! Run: `cargo run --release --example demo [DATASET_DIR]`
//!
//! Preprocessing (printed): views with negative values are shifted per feature
//! by their minimum; every view is scaled to `‖X‖²_F = N` so that no view
//! dominates by its units (DESIGN §9).

use mvnmf::eval::{self, KnnParams, UNLABELED};
use mvnmf::graph::Sge;
use mvnmf::linalg::mat::MatRef;
use mvnmf::models::deep::{self, DeepParams};
use mvnmf::models::mvsl::MvslParams;
use mvnmf::models::nmf::{self, NmfParams};
use mvnmf::pipeline::{self, Method, PipelineParams};
use mvnmf::similarity::{Bandwidth, Kernel};
use mvnmf::{Dense, View};
use std::time::Instant;

struct DataSet {
    names: Vec<String>,
    views: Vec<(usize, Vec<f64>)>, // (rows, column-major data)
    labels: Vec<u32>,
    n: usize,
    shifted: Vec<String>,
}

fn load(dir: &str) -> DataSet {
    let meta = std::fs::read_to_string(format!("{dir}/meta.txt"))
        .unwrap_or_else(|e| panic!("{dir}/meta.txt: {e}"));
    let labels: Vec<u32> = std::fs::read_to_string(format!("{dir}/labels.txt"))
        .expect("labels.txt")
        .split_whitespace()
        .map(|t| t.parse().expect("a class id"))
        .collect();
    let n = labels.len();
    let (mut names, mut views, mut shifted) = (vec![], vec![], vec![]);
    for line in meta
        .lines()
        .filter(|l| l.starts_with("view") && l.contains(".f64 "))
    {
        let mut it = line.split_whitespace();
        let file = it.next().unwrap();
        let field = |key: &str| {
            line.split_whitespace()
                .find_map(|t| t.strip_prefix(key))
                .unwrap_or("?")
                .to_string()
        };
        let rows: usize = field("rows=").parse().expect("rows=");
        let bytes = std::fs::read(format!("{dir}/{file}")).expect("view file");
        let mut x: Vec<f64> = bytes
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(
            x.len(),
            rows * n,
            "{file}: size does not match rows × items"
        );
        let name = field("name=");
        // Shift features with negative values by their minimum (documented).
        let mut any = false;
        for i in 0..rows {
            let min = (0..n)
                .map(|j| x[i + j * rows])
                .fold(f64::INFINITY, f64::min);
            if min < 0.0 {
                any = true;
                (0..n).for_each(|j| x[i + j * rows] -= min);
            }
        }
        if any {
            shifted.push(name.clone());
        }
        // Normalise to ‖X‖²_F = N.
        let s = (n as f64 / x.iter().map(|v| v * v).sum::<f64>()).sqrt();
        x.iter_mut().for_each(|v| *v *= s);
        names.push(format!("{name} ({rows})"));
        views.push((rows, x));
    }
    DataSet {
        names,
        views,
        labels,
        n,
        shifted,
    }
}

/// kNN accuracy of the unlabeled items, for each labeled fraction: (mean, std) over splits.
fn knn_table(
    v: &[f64],
    k: usize,
    labels: &[u32],
    fractions: &[f64],
    splits: u64,
) -> Vec<(f64, f64)> {
    knn_table_with(k, labels, fractions, splits, &mut |_| v.to_vec())
}

/// As [`knn_table`], with the encoding computed per split from the masked
/// labels (semi-supervised methods see only the labeled items' classes).
fn knn_table_with(
    k: usize,
    labels: &[u32],
    fractions: &[f64],
    splits: u64,
    encode: &mut dyn FnMut(&[u32]) -> Vec<f64>,
) -> Vec<(f64, f64)> {
    let n = labels.len();
    let n_classes = *labels.iter().max().unwrap() as usize + 1;
    let kp = KnnParams::default();
    let mut work = vec![
        0u8;
        eval::stratified_split_workspace(n)
            .unwrap()
            .max(eval::knn_predict_workspace(&kp, n_classes).unwrap())
    ];
    fractions
        .iter()
        .map(|&f| {
            let accs: Vec<f64> = (0..splits)
                .map(|seed| {
                    let mut labeled = vec![false; n];
                    eval::stratified_split(labels, n_classes, f, seed, &mut labeled, &mut work)
                        .unwrap();
                    let masked: Vec<u32> = (0..n)
                        .map(|j| if labeled[j] { labels[j] } else { UNLABELED })
                        .collect();
                    let v = encode(&masked);
                    let vm = MatRef::col_major(&v, k, n).unwrap();
                    let mut pred = vec![0u32; n];
                    eval::knn_predict(vm, &masked, vm, n_classes, &kp, &mut pred, &mut work)
                        .unwrap();
                    let test: Vec<bool> = labeled.iter().map(|&l| !l).collect();
                    eval::accuracy(&pred, labels, Some(&test))
                })
                .collect();
            let mean = accs.iter().sum::<f64>() / accs.len() as f64;
            let var = accs.iter().map(|a| (a - mean).powi(2)).sum::<f64>()
                / (accs.len() as f64 - 1.0).max(1.0);
            (mean, var.sqrt())
        })
        .collect()
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/data/mfeat-sample").into());
    let ds = load(&dir);
    let (k, iters, splits) = (20, 200, 3);
    let fractions = [0.1, 0.3, 0.5];
    let params = NmfParams {
        max_iter: iters,
        tol: 0.0,
        seed: 1,
        ..NmfParams::default()
    };
    // The data folder as the user would type it: relative to the project when
    // it lies inside it (no machine path in the printout).
    let shown = std::path::Path::new(&dir)
        .strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .map_or_else(|_| dir.clone(), |p| p.display().to_string());
    println!(
        "mvnmf {} demo: {} items, {} views, {} classes ({shown})",
        env!("CARGO_PKG_VERSION"),
        ds.n,
        ds.views.len(),
        ds.labels.iter().max().unwrap() + 1
    );
    println!("K = {k}, {iters} iterations, seed 1; every view scaled to ||X||_F^2 = N; shifted per feature to be nonnegative: {}", if ds.shifted.is_empty() { "none".into() } else { ds.shifted.join(", ") });
    println!(
        "kNN (k = 9) accuracy of the unlabeled items, mean ± std over {splits} stratified splits\n"
    );
    println!(
        "{:<24} {:>10} {:>9}   {:>13} {:>13} {:>13}",
        "method", "rel.error", "time", "10% labeled", "30% labeled", "50% labeled"
    );
    let t_all = Instant::now();
    let row = |name: &str, err: f64, secs: f64, tab: &[(f64, f64)]| {
        let cells: Vec<String> = tab
            .iter()
            .map(|(m, s)| format!("{:>6.1} ± {:<4.1}", 100.0 * m, 100.0 * s))
            .collect();
        let time = if secs.is_nan() {
            "-".to_string()
        } else {
            format!("{:.0}ms", secs * 1e3)
        };
        println!("{name:<24} {err:>10.4} {time:>9}   {}", cells.join(" "));
    };

    // (view name, relative error, accuracy table) of the best single view.
    type Best = (String, f64, Vec<(f64, f64)>);
    let mut best: Option<Best> = None;
    for (name, (rows, x)) in ds.names.iter().zip(&ds.views) {
        let view = View::from(Dense::new(x, *rows, ds.n, *rows).unwrap());
        let mut work = vec![0u8; nmf::fit_workspace::<f64>(view.shape(), k, &params).unwrap()];
        let (mut u, mut v) = (vec![0.0; rows * k], vec![0.0; k * ds.n]);
        let t = Instant::now();
        let r = nmf::fit(view, k, &params, &mut u, &mut v, &mut work, None).unwrap();
        let secs = t.elapsed().as_secs_f64();
        let err = (2.0 * r.objective.reconstruction() / ds.n as f64)
            .max(0.0)
            .sqrt();
        let tab = knn_table(&v, k, &ds.labels, &fractions, splits);
        row(&format!("NMF {name}"), err, secs, &tab);
        if best.as_ref().is_none_or(|b| tab[0].0 > b.2[0].0) {
            best = Some((name.clone(), err, tab));
        }
    }
    let (bname, berr, btab) = best.unwrap();
    row(
        &format!("NMF-b (best: {})", bname.split(' ').next().unwrap()),
        berr,
        f64::NAN,
        &btab,
    );

    let views: Vec<View<'_, f64>> = ds
        .views
        .iter()
        .map(|(r, x)| View::from(Dense::new(x, *r, ds.n, *r).unwrap()))
        .collect();
    let shapes: Vec<_> = views.iter().map(|v| v.shape()).collect();
    let mut work =
        vec![0u8; nmf::joint_fit_workspace::<f64>(shapes.iter().copied(), k, &params).unwrap()];
    let mut us: Vec<Vec<f64>> = ds.views.iter().map(|(r, _)| vec![0.0; r * k]).collect();
    let mut v = vec![0.0; k * ds.n];
    let t = Instant::now();
    let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
    let r = nmf::joint_fit(
        &views[..],
        k,
        &params,
        &mut refs[..],
        &mut v,
        &mut work,
        None,
    )
    .unwrap();
    let secs = t.elapsed().as_secs_f64();
    let err = (2.0 * r.objective.reconstruction() / (ds.n * ds.views.len()) as f64)
        .max(0.0)
        .sqrt();
    let tab = knn_table(&v, k, &ds.labels, &fractions, splits);
    row(
        &format!("joint NMF (all {})", ds.views.len()),
        err,
        secs,
        &tab,
    );

    // Semi-supervised: the graph is built from each split's labeled items, so
    // every split is a new fit (one call: MKL weights -> graph -> factorization).
    // Weights: α = the papers' / 10 (on these small normalised views the papers'
    // α zeroes most columns, DESIGN §9), β = 0.2, ka = 3 (5 labeled digits per
    // class at 10 %), RBF kernels with the median bandwidth, learned fusion.
    let n_classes = *ds.labels.iter().max().unwrap() as usize + 1;
    let kernels = vec![Kernel::Rbf(Bandwidth::Median); ds.views.len()];
    let fits = (fractions.len() as u64 * splits) as f64;
    for (name, method) in [
        ("GNMF (kNN graph)", Method::Gnmf),
        ("MvSL-S (SGE, L1,2)", Method::MvslS),
        ("MvSL-L (LDGE, L1,2)", Method::MvslL),
        ("MvSL-T (TGE, L1,2)", Method::MvslT),
        ("MCL (SGE, L1,inf)", Method::Mcl),
    ] {
        let mut p = PipelineParams::preset(method);
        p.solver = MvslParams {
            max_iter: iters,
            tol: 0.0,
            seed: 1,
            alpha: p.solver.alpha / 10.0,
            beta: 0.2,
            ..p.solver
        };
        p.graph.ka = 3;
        let t = Instant::now();
        let mut last_err = 0.0;
        let tab = knn_table_with(k, &ds.labels, &fractions, splits, &mut |masked| {
            let need = pipeline::fit_workspace::<f64>(
                shapes.iter().copied(),
                &kernels[..],
                n_classes,
                k,
                &p,
            )
            .unwrap();
            let mut work = vec![0u8; need];
            let mut us: Vec<Vec<f64>> = ds.views.iter().map(|(r, _)| vec![0.0; r * k]).collect();
            let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
            let (mut v, mut eta) = (vec![0.0; k * ds.n], vec![0.0; ds.views.len()]);
            let r = pipeline::fit(
                &views[..],
                &kernels[..],
                masked,
                n_classes,
                k,
                &p,
                &mut refs[..],
                &mut v,
                &mut eta,
                &mut work,
                None,
            )
            .unwrap();
            last_err = (2.0 * r.objective.reconstruction() / (ds.n * ds.views.len()) as f64)
                .max(0.0)
                .sqrt();
            v
        });
        row(name, last_err, t.elapsed().as_secs_f64() / fits, &tab);
    }
    let layers = [60, k];
    let p = DeepParams {
        top: MvslParams {
            max_iter: iters,
            tol: 0.0,
            seed: 1,
            alpha: 10.0,
            ..MvslParams::mcl()
        },
        ..DeepParams::dmcl()
    };
    let t = Instant::now();
    let mut last_err = 0.0;
    let tab = knn_table_with(k, &ds.labels, &fractions, splits, &mut |masked| {
        let sge = Sge::new(masked, n_classes).unwrap();
        let need =
            deep::fit_workspace::<f64, _>(shapes.iter().copied(), &sge, &layers, &p).unwrap();
        let mut work = vec![0u8; need];
        let mut us: Vec<Vec<f64>> = ds
            .views
            .iter()
            .map(|(r, _)| vec![0.0; deep::factor_len(*r, &layers).unwrap()])
            .collect();
        let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
        let mut v = vec![0.0; k * ds.n];
        let r = deep::fit(
            &views[..],
            &sge,
            &layers,
            &p,
            &mut refs[..],
            &mut v,
            &mut work,
            None,
        )
        .unwrap();
        last_err = (2.0 * r.objective.reconstruction() / (ds.n * ds.views.len()) as f64)
            .max(0.0)
            .sqrt();
        v
    });
    row(
        "DMCL (60-20, SGE, L1,inf)",
        last_err,
        t.elapsed().as_secs_f64() / fits,
        &tab,
    );

    println!("\nrel.error = ||X - UV||_F / ||X||_F over the views used (semi-supervised: the last split's fit);");
    println!(
        "time = one fit. Total {:.1} s.",
        t_all.elapsed().as_secs_f64()
    );
}
