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

/// A monitor that records the objective of every iterate (the pipeline's set-up phases,
/// which have none, aside).
pub fn recorder(out: &mut Vec<f64>) -> impl FnMut(&mvnmf::Progress) -> ControlFlow<()> + '_ {
    move |p| {
        if p.phase != mvnmf::Phase::Iterations {
            return ControlFlow::Continue(());
        }
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

/// The library's CCA (`dims` directions) of two dense views (`da × n`,
/// `db × n`) with the fused graph's ridge rule (`1e-3 ×` the mean feature
/// variance of the two views). The reference the MVEL graph tests assemble
/// their expected cross-view kernels from.
pub struct FusedCca {
    pub phi_a: Vec<f64>,
    pub phi_b: Vec<f64>,
    pub rho: Vec<f64>,
    pub mu_a: Vec<f64>,
    pub mu_b: Vec<f64>,
}

pub fn fused_cca(xa: &[f64], da: usize, xb: &[f64], db: usize, n: usize, dims: usize) -> FusedCca {
    let var = |x: &[f64], d: usize| -> f64 {
        (0..d)
            .map(|i| {
                let mu: f64 = (0..n).map(|u| x[i + u * d]).sum::<f64>() / n as f64;
                (0..n).map(|u| (x[i + u * d] - mu).powi(2)).sum::<f64>() / (n - 1) as f64
            })
            .sum()
    };
    let reg = 1e-3 * (var(xa, da) + var(xb, db)) / (da + db) as f64;
    let (va, vb) = (
        mvnmf::Dense::new(xa, da, n, da).unwrap(),
        mvnmf::Dense::new(xb, db, n, db).unwrap(),
    );
    let (mut pa, mut pb, mut rho, mut ma, mut mb) = (
        vec![0.0; da * dims],
        vec![0.0; db * dims],
        vec![0.0; dims],
        vec![0.0; da],
        vec![0.0; db],
    );
    let mut wk = vec![0u8; mvnmf::similarity::cca_workspace::<f64>(da, db, n, dims).unwrap()];
    mvnmf::similarity::cca(
        &va, &vb, reg, dims, &mut pa, &mut pb, &mut rho, &mut ma, &mut mb, &mut wk,
    )
    .unwrap();
    FusedCca {
        phi_a: pa,
        phi_b: pb,
        rho,
        mu_a: ma,
        mu_b: mb,
    }
}

/// `data/<dir>/viewV.f64[.gz]` and its shape from `meta.txt`.
pub fn read_view(dir: &str, v: usize) -> (Vec<f64>, usize, usize) {
    let root = format!("{}/data/{dir}", env!("CARGO_MANIFEST_DIR"));
    let meta = std::fs::read_to_string(format!("{root}/meta.txt")).unwrap();
    let line = meta
        .lines()
        .find(|l| l.starts_with(&format!("view{v}.f64")))
        .unwrap();
    let field = |key: &str| -> usize {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(key))
            .unwrap()
            .parse()
            .unwrap()
    };
    let (rows, cols) = (field("rows="), field("cols="));
    let path = format!("{root}/view{v}.f64");
    let bytes = std::fs::read(&path).unwrap_or_else(|_| {
        let out = std::process::Command::new("gzip")
            .args(["-dc", &format!("{path}.gz")])
            .output()
            .expect("gzip -dc (is gzip installed?)");
        assert!(out.status.success());
        out.stdout
    });
    let x = le_f64(&bytes);
    assert_eq!(x.len(), rows * cols);
    (x, rows, cols)
}

/// Little-endian `f64`s.
fn le_f64(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// The shipped real sample `data/yeast-sample` (the first 600 genes of the MULAN yeast set):
/// `(views, truth, given, c)` — its 103 features split 79 + 24 into two views (items are
/// columns), each standardised per feature; the full labels (`c = 14` per gene, gene-major,
/// 0/1); and the given ones: each gene keeps round(P/3) of its P positives, at least one,
/// chosen by a seeded generator.
pub fn yeast_sample() -> (Vec<Vec<f64>>, Vec<u8>, Vec<u8>, usize) {
    let (x, d, n) = read_view("yeast-sample", 1);
    let c = 14;
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/yeast-sample/labels.f64");
    let y = le_f64(&std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}")));
    assert_eq!((d, y.len()), (103, c * n));
    let mut views = Vec::new();
    for (lo, hi) in [(0, 79), (79, 103)] {
        let m = hi - lo;
        let mut v: Vec<f64> = (0..n)
            .flat_map(|u| x[u * d + lo..u * d + hi].to_vec())
            .collect();
        mvnmf::prep::standardize_view(&mut v, m, n).unwrap();
        views.push(v);
    }
    let truth: Vec<u8> = y.iter().map(|&a| a as u8).collect();
    let mut given = vec![0u8; c * n];
    let mut g = Lcg(7);
    for u in 0..n {
        let mut pos: Vec<usize> = (0..c).filter(|&s| truth[s + u * c] == 1).collect();
        let keep = ((pos.len() as f64 / 3.0).round() as usize)
            .max(1)
            .min(pos.len());
        for i in 0..keep {
            let k = i + ((g.uniform() * (pos.len() - i) as f64) as usize).min(pos.len() - i - 1);
            pos.swap(i, k);
            given[pos[i] + u * c] = 1;
        }
    }
    (views, truth, given, c)
}

/// The shipped real sample `data/mfeat-sample`: its six views as `(rows, values)`
/// (column-major, items are columns) and its labels.
pub fn mfeat_sample() -> (Vec<(usize, Vec<f64>)>, Vec<u32>) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/data/mfeat-sample");
    let labels: Vec<u32> = std::fs::read_to_string(format!("{dir}/labels.txt"))
        .unwrap()
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect();
    let views = (1..=6)
        .map(|v| {
            let (x, rows, cols) = read_view("mfeat-sample", v);
            assert_eq!(cols, labels.len());
            (rows, x)
        })
        .collect();
    (views, labels)
}

/// A start both sides of a comparison (Rust and a scikit-learn fixture, or
/// two precisions) evaluate exactly: entry `t` (column-major) is
/// `0.05 + ((t + offset)·2654435761 mod 1009) / 1009`.
pub fn formula_start(len: usize, offset: u64) -> Vec<f64> {
    (0..len as u64)
        .map(|t| 0.05 + (((t + offset) * 2_654_435_761) % 1009) as f64 / 1009.0)
        .collect()
}
pub mod capi;

/// A host pool that runs the tasks last to first (a pool's order must not change a bit).
pub fn reversed(_ctx: usize, n: usize, task: &(dyn Fn(usize) + Sync)) {
    (0..n).rev().for_each(task);
}

/// The pools a "same bits for every pool" test compares with `Parallel::Serial`: the
/// built-in pool at 1, 2 and 3 threads, and a host pool running the tasks in reverse.
pub fn pools() -> [mvnmf::Parallel; 4] {
    [
        mvnmf::Parallel::Threads(1),
        mvnmf::Parallel::Threads(2),
        mvnmf::Parallel::Threads(3),
        mvnmf::Parallel::Host(mvnmf::HostPool {
            parallel_for: reversed,
            ctx: 0,
        }),
    ]
}

/// A CSR graph output owned by a test (row pointers, columns, weights).
#[derive(Clone, Debug, PartialEq)]
pub struct Csr {
    pub rp: Vec<usize>,
    pub ci: Vec<usize>,
    pub w: Vec<f64>,
}

impl Csr {
    /// `n` rows and room for `e` entries, every index `idx` and every weight `w`.
    pub fn filled(n: usize, e: usize, idx: usize, w: f64) -> Csr {
        Csr {
            rp: vec![idx; n + 1],
            ci: vec![idx; e],
            w: vec![w; e],
        }
    }

    /// The graph trimmed to its first `nnz` entries, weights as bits (compared exactly).
    pub fn bits(&self, nnz: usize) -> (Vec<usize>, Vec<usize>, Vec<u64>) {
        let w = self.w[..nnz].iter().map(|x| x.to_bits()).collect();
        (self.rp.clone(), self.ci[..nnz].to_vec(), w)
    }
}

/// The builders' output descriptor of `a`.
pub fn outs(a: &mut Csr) -> mvnmf::graph::CsrOut<'_> {
    mvnmf::graph::CsrOut {
        row_ptr: &mut a.rp,
        col_idx: &mut a.ci,
        weights: &mut a.w,
    }
}
