//! Helpers shared by the integration tests (included with `mod common;`).
#![allow(dead_code)]

use std::ops::ControlFlow;

/// A tiny deterministic generator for test data (independent of the crate's).
pub struct Lcg(pub u64);

impl Lcg {
    pub fn uniform(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
}

/// `rows × cols` column-major, uniform (0,1) with the given density of nonzeros.
pub fn random_matrix(rows: usize, cols: usize, density: f64, seed: u64) -> Vec<f64> {
    let mut g = Lcg(seed);
    (0..rows * cols)
        .map(|_| {
            let keep = g.uniform() < density;
            let x = g.uniform();
            if keep {
                x
            } else {
                0.0
            }
        })
        .collect()
}

/// CSC arrays of a dense column-major matrix.
pub struct CscOwned {
    pub col_ptr: Vec<usize>,
    pub row_idx: Vec<usize>,
    pub values: Vec<f64>,
}

pub fn to_csc(x: &[f64], rows: usize, cols: usize) -> CscOwned {
    let mut c = CscOwned {
        col_ptr: vec![0],
        row_idx: vec![],
        values: vec![],
    };
    for j in 0..cols {
        for i in 0..rows {
            let v = x[i + j * rows];
            if v != 0.0 {
                c.row_idx.push(i);
                c.values.push(v);
            }
        }
        c.col_ptr.push(c.values.len());
    }
    c
}

/// `½‖X − UV‖²_F` by brute force.
pub fn direct_objective(
    x: &[f64],
    rows: usize,
    cols: usize,
    u: &[f64],
    v: &[f64],
    k: usize,
) -> f64 {
    let mut s = 0.0;
    for j in 0..cols {
        for i in 0..rows {
            let mut uv = 0.0;
            for p in 0..k {
                uv += u[i + p * rows] * v[p + j * k];
            }
            let r = x[i + j * rows] - uv;
            s += r * r;
        }
    }
    0.5 * s
}

pub fn half_sq(x: &[f64]) -> f64 {
    0.5 * x.iter().map(|a| a * a).sum::<f64>()
}

/// A monitor that records every objective.
pub fn recorder(out: &mut Vec<f64>) -> impl FnMut(&mvnmf::Progress) -> ControlFlow<()> + '_ {
    move |p| {
        out.push(p.objective.total);
        ControlFlow::Continue(())
    }
}

/// Asserts `obj[t] <= obj[t-1] + tol`.
pub fn assert_monotone(obj: &[f64], tol: f64, what: &str) {
    for t in 1..obj.len() {
        assert!(
            obj[t] <= obj[t - 1] + tol,
            "{what}: objective rose at iteration {t}: {} -> {} (tol {tol})",
            obj[t - 1],
            obj[t]
        );
    }
}

pub fn max_rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let scale = a
        .iter()
        .chain(b)
        .fold(0.0f64, |m, x| m.max(x.abs()))
        .max(f64::MIN_POSITIVE);
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
        / scale
}
