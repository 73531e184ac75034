//! Brute-force references for the kernel / graph tests (included with
//! `#[path = "graph_reference.rs"] mod reference;`; as a test crate of its own it has no tests).
//! Everything here is the textbook formula, evaluated pair by pair, with no blocking, no GEMM and
//! no cleverness, so that it is an independent check of `mvnmf::similarity` and `mvnmf::graph`.
#![allow(dead_code)]

use mvnmf::similarity::{Bandwidth, Kernel};

pub const U: u32 = u32::MAX;

/// A tiny deterministic generator (independent of the crate's).
pub struct Lcg(pub u64);

impl Lcg {
    pub fn uniform(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    pub fn below(&mut self, n: usize) -> usize {
        ((self.uniform() * n as f64) as usize).min(n - 1)
    }
}

/// A dense view kept as columns, plus its CSC arrays.
pub struct TestView {
    pub m: usize,
    pub n: usize,
    pub x: Vec<f64>,
    pub col_ptr: Vec<usize>,
    pub row_idx: Vec<usize>,
    pub values: Vec<f64>,
}

impl TestView {
    pub fn new(m: usize, n: usize, x: Vec<f64>) -> Self {
        assert_eq!(x.len(), m * n);
        let (mut col_ptr, mut row_idx, mut values) = (vec![0], vec![], vec![]);
        for j in 0..n {
            for i in 0..m {
                if x[i + j * m] != 0.0 {
                    row_idx.push(i);
                    values.push(x[i + j * m]);
                }
            }
            col_ptr.push(values.len());
        }
        TestView {
            m,
            n,
            x,
            col_ptr,
            row_idx,
            values,
        }
    }

    pub fn col(&self, j: usize) -> &[f64] {
        &self.x[j * self.m..(j + 1) * self.m]
    }

    pub fn dense(&self) -> mvnmf::View<'_, f64> {
        mvnmf::View::from(mvnmf::Dense::new(&self.x, self.m, self.n, self.m).unwrap())
    }

    pub fn csc(&self) -> mvnmf::View<'_, f64> {
        mvnmf::View::from(
            mvnmf::Csc::new(self.m, self.n, &self.col_ptr, &self.row_idx, &self.values).unwrap(),
        )
    }
}

/// Random nonnegative data with the given density (zeros elsewhere).
pub fn random_view(m: usize, n: usize, density: f64, seed: u64) -> TestView {
    let mut g = Lcg(seed);
    let x = (0..m * n)
        .map(|_| {
            let keep = g.uniform() < density;
            let v = g.uniform();
            if keep {
                v
            } else {
                0.0
            }
        })
        .collect();
    TestView::new(m, n, x)
}

/// The raw base kernel.
pub fn base(kern: &Kernel, gamma: f64, x: &[f64], y: &[f64]) -> f64 {
    match kern {
        Kernel::Linear => x.iter().zip(y).map(|(a, b)| a * b).sum(),
        Kernel::Rbf(_) => {
            (-gamma * x.iter().zip(y).map(|(a, b)| (a - b) * (a - b)).sum::<f64>()).exp()
        }
        Kernel::ChiSquared => x
            .iter()
            .zip(y)
            .map(|(a, b)| {
                if a + b > 0.0 {
                    2.0 * a * b / (a + b)
                } else {
                    0.0
                }
            })
            .sum(),
        Kernel::Intersection => x.iter().zip(y).map(|(a, b)| a.min(*b)).sum(),
    }
}

/// The normalised kernel with the all-zero-item rule (linear, χ², intersection).
pub fn normalised(kern: &Kernel, gamma: f64, x: &[f64], y: &[f64], same: bool) -> f64 {
    if same {
        return 1.0;
    }
    let rbf = matches!(kern, Kernel::Rbf(_));
    if !rbf && (x.iter().all(|&a| a == 0.0) || y.iter().all(|&a| a == 0.0)) {
        return 0.0;
    }
    base(kern, gamma, x, y) / (base(kern, gamma, x, x) * base(kern, gamma, y, y)).sqrt()
}

/// `γ` of a kernel (the given one; median views need `gammas`).
pub fn gamma_of(kern: &Kernel) -> f64 {
    match kern {
        Kernel::Rbf(Bandwidth::Gamma(g)) => *g,
        _ => 0.0,
    }
}

/// Fused kernel `Σ η_v K_v(i, j) / Σ η`.
pub fn fused(
    views: &[&TestView],
    kernels: &[Kernel],
    gammas: &[f64],
    eta: &[f64],
    i: usize,
    j: usize,
) -> f64 {
    let s: f64 = eta.iter().sum();
    (0..views.len())
        .map(|v| {
            eta[v] / s
                * normalised(
                    &kernels[v],
                    gammas[v],
                    views[v].col(i),
                    views[v].col(j),
                    i == j,
                )
        })
        .sum()
}

/// Top `k` of `cands` for query `i` by (similarity desc, index asc).
pub fn top_k(
    i: usize,
    k: usize,
    cands: impl Iterator<Item = usize>,
    sim: impl Fn(usize, usize) -> f64,
) -> Vec<(usize, f64)> {
    let mut v: Vec<(usize, f64)> = cands.filter(|&j| j != i).map(|j| (j, sim(i, j))).collect();
    v.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap().then(a.0.cmp(&b.0)));
    v.truncate(k);
    v
}

/// Exact lower median of `d²` over labeled pairs in a view.
pub fn median_sqdist(view: &TestView, labels: &[u32]) -> f64 {
    let lab: Vec<usize> = (0..labels.len()).filter(|&j| labels[j] != U).collect();
    let mut d = vec![];
    for a in 0..lab.len() {
        for b in a + 1..lab.len() {
            let (x, y) = (view.col(lab[a]), view.col(lab[b]));
            d.push(x.iter().zip(y).map(|(p, q)| (p - q) * (p - q)).sum::<f64>());
        }
    }
    d.sort_by(|a, b| a.partial_cmp(b).unwrap());
    d[(d.len() - 1) / 2]
}

/// Weighted edges `(i, j, w)`.
pub type Edges = Vec<(usize, usize, f64)>;

/// Symmetric CSR as a set of (i, j, w).
pub fn csr_edges(row_ptr: &[usize], col_idx: &[usize], w: &[f64]) -> Vec<(usize, usize, f64)> {
    let mut e = vec![];
    for i in 0..row_ptr.len() - 1 {
        for r in row_ptr[i]..row_ptr[i + 1] {
            e.push((i, col_idx[r], w[r]));
        }
    }
    e
}

/// An undirected edge list (i < j) as the full symmetric entry list, sorted.
pub fn sym_entries(edges: &[(usize, usize, f64)]) -> Vec<(usize, usize, f64)> {
    let mut e = vec![];
    for &(i, j, w) in edges {
        e.push((i, j, w));
        e.push((j, i, w));
    }
    e.sort_by_key(|a| (a.0, a.1));
    e.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
    e
}
