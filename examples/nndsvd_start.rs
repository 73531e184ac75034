//! mvnmf's side of the NNDSVDa comparison in docs/models.md ("Starts"): NMF (MU,
//! tol 0) from the NNDSVDa start and from the random start, K = 20, 200
//! iterations, on data/mfeat-sample view2 (fac, dense) and data/ng20-sample
//! view1 (text counts, as CSC). scikit-learn's side: scripts/nndsvd_compare.py.
//!
//! ```sh
//! cargo run --release --example nndsvd_start
//! ```

use std::io::Read;

use mvnmf::models::nmf::{self, NmfParams};
use mvnmf::steps::{nndsvd, nndsvd_workspace, Nndsvd};
use mvnmf::{Csc, Dense, Init, View};

fn read(dir: &str, file: &str, rows: usize, cols: usize) -> Vec<f64> {
    let path = format!("{}/data/{dir}/{file}", env!("CARGO_MANIFEST_DIR"));
    let mut raw = vec![];
    if file.ends_with(".gz") {
        let out = std::process::Command::new("gzip")
            .args(["-dc", &path])
            .output()
            .expect("gzip");
        raw = out.stdout;
    } else {
        std::fs::File::open(&path)
            .expect("open")
            .read_to_end(&mut raw)
            .unwrap();
    }
    assert_eq!(raw.len(), rows * cols * 8, "{path}");
    raw.chunks(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

fn main() {
    let k = 20;
    for (dir, file, rows, cols, sparse) in [
        ("mfeat-sample", "view2.f64", 216, 500, false),
        ("ng20-sample", "view1.f64.gz", 1500, 1350, true),
    ] {
        let x = read(dir, file, rows, cols);
        let (mut cp, mut ri, mut vals) = (vec![0usize], vec![], vec![]);
        for j in 0..cols {
            for i in 0..rows {
                if x[i + j * rows] != 0.0 {
                    ri.push(i);
                    vals.push(x[i + j * rows]);
                }
            }
            cp.push(ri.len());
        }
        let view = if sparse {
            View::from(Csc::new(rows, cols, &cp, &ri, &vals).unwrap())
        } else {
            View::from(Dense::new(&x, rows, cols, rows).unwrap())
        };
        let norm = x.iter().map(|a| a * a).sum::<f64>().sqrt();
        for start in ["nndsvda", "random"] {
            let (mut u, mut v) = (vec![0.0; rows * k], vec![0.0; k * cols]);
            let mut p = NmfParams {
                max_iter: 200,
                tol: 0.0,
                eps: 0.0,
                seed: 0,
                ..NmfParams::default()
            };
            if start == "nndsvda" {
                let need = nndsvd_workspace::<f64>([view.shape()], k).unwrap();
                nndsvd(
                    &[view][..],
                    k,
                    Nndsvd::A,
                    0,
                    &mut [&mut u[..]][..],
                    &mut v,
                    &mut vec![0u8; need],
                )
                .unwrap();
                p.init = Init::Given;
            }
            let need = nmf::fit_workspace::<f64>(view.shape(), k, &p).unwrap();
            let t = std::time::Instant::now();
            let r = nmf::fit(view, k, &p, &mut u, &mut v, &mut vec![0u8; need], None).unwrap();
            let err = (2.0 * r.objective.reconstruction()).sqrt() / norm;
            println!(
                "{dir:<14} {start:<8} mvnmf relative error {err:.6} ({} iterations, {:.2} s)",
                r.iterations,
                t.elapsed().as_secs_f64()
            );
        }
    }
}
