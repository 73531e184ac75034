//! What the benchmark examples share: a seeded uniform generator and the
//! issue-18 problems (dense 2000 × 1000 and sparse 20000 × 2000 at 1 %).
#![allow(dead_code)]

/// splitmix64 uniforms in [0, 1): the data and the starts, reproducible.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A dense `m × n` uniform matrix, column-major.
pub fn dense(rng: &mut Rng, m: usize, n: usize) -> Vec<f64> {
    (0..m * n).map(|_| rng.next()).collect()
}

/// An `m × n` CSC matrix, each entry stored with probability `density`
/// (uniform values): `(col_ptr, row_idx, values)`.
pub fn sparse(
    rng: &mut Rng,
    m: usize,
    n: usize,
    density: f64,
) -> (Vec<usize>, Vec<usize>, Vec<f64>) {
    let (mut cp, mut ri, mut vals) = (vec![0], vec![], vec![]);
    for _ in 0..n {
        for i in 0..m {
            if rng.next() < density {
                ri.push(i);
                vals.push(rng.next());
            }
        }
        cp.push(ri.len());
    }
    (cp, ri, vals)
}

/// The median (the input reordered).
pub fn median(mut x: Vec<f64>) -> f64 {
    x.sort_by(f64::total_cmp);
    x[x.len() / 2]
}

/// Times a fit's iterations from its monitor, as `bench/bench_nmf.py` times
/// mvnmf: from the start's report (iteration 0) to the last one, so that the
/// start and the workspace's first touch are excluded.
#[derive(Default)]
pub struct IterTimer {
    first: Option<std::time::Instant>,
    last: Option<std::time::Instant>,
}

impl IterTimer {
    /// The monitor to pass to the fit.
    pub fn monitor(&mut self) -> impl FnMut(&mvnmf::Progress) -> std::ops::ControlFlow<()> + '_ {
        |pr| {
            let now = std::time::Instant::now();
            if pr.iter == 0 {
                self.first = Some(now);
            }
            self.last = Some(now);
            std::ops::ControlFlow::Continue(())
        }
    }

    /// Seconds from `t0` (taken before the fit) to the start report: the
    /// fit's set-up before its first iteration.
    pub fn setup_since(&self, t0: std::time::Instant) -> f64 {
        (self.first.unwrap() - t0).as_secs_f64()
    }

    /// Seconds per iteration over `iters` iterations.
    pub fn per_iter(&self, iters: u32) -> f64 {
        (self.last.unwrap() - self.first.unwrap()).as_secs_f64() / f64::from(iters)
    }
}
