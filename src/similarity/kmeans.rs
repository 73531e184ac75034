//! k-means clustering: greedy k-means++ seeding, Lloyd iterations, seeded
//! restarts keeping the lowest inertia (DESIGN §9). Here, below the graphs,
//! because MVEL's anchor graphs ([`crate::graph::anchor`]) are built from its
//! centroids; the evaluation re-exports it (`crate::eval::kmeans`).

use crate::error::{Error, Part};
use crate::linalg::mat::MatRef;
use crate::linalg::real::Real;
use crate::rng::Rng;
use crate::work::{Stack, WorkReq};

/// Options of [`kmeans`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KMeansParams {
    /// Independent seeded runs; the one with the lowest inertia is kept
    /// (default 10, scikit-learn's `n_init` for k-means++; at least 1).
    pub restarts: u32,
    /// Lloyd iterations per run at most (default 300, as scikit-learn).
    pub max_iter: u32,
    /// A run stops when the assignments no longer change, or when the squared
    /// centroid shift of an iteration, summed over clusters, is at most
    /// `tol × (mean over features of the per-feature variance)` (scikit-learn's
    /// rule; default 1e-4; 0 runs until the assignments are stable).
    pub tol: f64,
    /// Seed of the random stream (default 0).
    pub seed: u64,
}

impl Default for KMeansParams {
    fn default() -> Self {
        KMeansParams {
            restarts: 10,
            max_iter: 300,
            tol: 1e-4,
            seed: 0,
        }
    }
}

impl KMeansParams {
    /// [`Error::BadParameter`] unless `restarts ≥ 1` and `tol ≥ 0` finite.
    pub fn validate(&self) -> Result<(), Error> {
        if self.restarts >= 1 && self.tol.is_finite() && self.tol >= 0.0 {
            Ok(())
        } else {
            Err(Error::BadParameter)
        }
    }
}

/// What [`kmeans`] reports about the run it kept.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KMeansReport {
    /// Sum over items of the squared Euclidean distance to their centroid.
    pub inertia: f64,
    /// Lloyd iterations of the kept run.
    pub iterations: u32,
    /// Whether the kept run stopped by its rule (not by `max_iter`).
    pub converged: bool,
    /// Which run was kept (`0..restarts`).
    pub best_restart: u32,
    /// Empty clusters re-seeded during the kept run (see [`kmeans`]).
    pub reseeded: u32,
}

fn check(d: usize, n: usize, k: usize, params: &KMeansParams) -> Result<WorkReq, Error> {
    params.validate()?;
    if d == 0 || n == 0 || k == 0 {
        return Err(Error::ZeroDimension);
    }
    if k > n {
        return Err(Error::BadParameter);
    }
    let dk = WorkReq::matrix::<f64>(d, k);
    Ok(WorkReq::all_of(&[
        dk,                       // centroids of the current run
        dk,                       // their update
        dk,                       // the best run's centroids
        WorkReq::new::<usize>(k), // cluster sizes
        WorkReq::new::<u32>(n),   // assignments of the current run
        WorkReq::new::<f64>(n),   // distances to the assigned / closest centroid
    ]))
}

/// Workspace bytes of [`kmeans`] for `n` items of dimension `d` and `k` clusters.
pub fn kmeans_workspace(
    d: usize,
    n: usize,
    k: usize,
    params: &KMeansParams,
) -> Result<usize, Error> {
    check(d, n, k, params)?.bytes()
}

/// Squared Euclidean distance between column `j` of `x` and centroid `c`
/// (`d` values). Contiguous columns (row stride 1, the usual case) take a
/// slice path with four partial sums, which the compiler vectorises.
#[inline]
fn dist2<T: Real>(x: MatRef<'_, T>, j: usize, c: &[f64]) -> f64 {
    if x.rs() == 1 {
        let start = j * x.cs();
        // Inside the matrix for every column `j < cols` (`c.len()` = rows).
        let Some(col) = x.data().get(start..start + c.len()) else {
            return f64::INFINITY;
        };
        let mut acc = [0.0f64; 4];
        let (ch, cc) = (col.chunks_exact(4), c.chunks_exact(4));
        let (rx, rc) = (ch.remainder(), cc.remainder());
        for (a, b) in ch.zip(cc) {
            for l in 0..4 {
                let t = a[l].to_f64() - b[l];
                acc[l] += t * t;
            }
        }
        let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
        for (a, b) in rx.iter().zip(rc) {
            let t = a.to_f64() - b;
            s += t * t;
        }
        s
    } else {
        let mut s = 0.0;
        for (i, &ci) in c.iter().enumerate() {
            let t = x.at(i, j).to_f64() - ci;
            s += t * t;
        }
        s
    }
}

fn copy_item<T: Real>(x: MatRef<'_, T>, j: usize, c: &mut [f64]) {
    for (i, ci) in c.iter_mut().enumerate() {
        *ci = x.at(i, j).to_f64();
    }
}

/// Draws an item with probability proportional to `w` (total `total > 0`).
fn draw(w: &[f64], total: f64, rng: &mut Rng) -> usize {
    let target = rng.uniform() * total; // in (0, total]
    let mut acc = 0.0;
    let mut last = 0;
    for (j, &x) in w.iter().enumerate() {
        if x > 0.0 {
            acc += x;
            last = j;
            if acc >= target {
                return j;
            }
        }
    }
    last // rounding left `acc` a hair below `target`
}

/// Greedy k-means++ (scikit-learn's `_kmeans_plusplus`): the first centre is a
/// uniformly random item; each next one is the best, by the potential it
/// leaves, of `2 + ⌊ln k⌋` candidates drawn with probability ∝ D². Leaves in
/// `closest` the squared distance of every item to its nearest centre.
/// `cand` (`d` values) is scratch.
fn seed_plusplus<T: Real>(
    x: MatRef<'_, T>,
    k: usize,
    rng: &mut Rng,
    centers: &mut [f64],
    closest: &mut [f64],
    cand_buf: &mut [f64],
) {
    let (d, n) = (x.rows(), x.cols());
    let trials = 2 + libm::floor(libm::log(k as f64)) as usize;
    let first = rng.below(n);
    let mut cs = centers.chunks_exact_mut(d.max(1)).take(k);
    let Some(c0) = cs.next() else {
        return;
    };
    copy_item(x, first, c0);
    let mut pot = 0.0;
    for (j, c) in closest.iter_mut().enumerate() {
        *c = dist2(x, j, c0);
        pot += *c;
    }
    for cc in cs {
        let mut best = (f64::INFINITY, 0usize);
        for _ in 0..trials {
            // All items coincide with a centre: any item will do.
            let cand = if pot > 0.0 {
                draw(closest, pot, rng)
            } else {
                rng.below(n)
            };
            copy_item(x, cand, cand_buf);
            let mut p = 0.0;
            for (j, &dj) in closest.iter().enumerate() {
                p += dj.min(dist2(x, j, cand_buf));
            }
            if p < best.0 {
                best = (p, cand);
            }
        }
        copy_item(x, best.1, cc);
        pot = 0.0;
        for (j, cl) in closest.iter_mut().enumerate() {
            *cl = cl.min(dist2(x, j, cc));
            pot += *cl;
        }
    }
}

/// Assigns every item to its nearest centroid (ties: the lower cluster id).
/// Returns how many assignments changed.
fn assign<T: Real>(
    x: MatRef<'_, T>,
    centers: &[f64],
    k: usize,
    labels: &mut [u32],
    dist: &mut [f64],
) -> usize {
    let d = x.rows();
    let mut changed = 0;
    let per_item = labels.iter_mut().zip(dist.iter_mut());
    for (j, (l, dj)) in per_item.enumerate().take(x.cols()) {
        let mut best = (f64::INFINITY, 0usize);
        for (c, cc) in centers.chunks_exact(d.max(1)).take(k).enumerate() {
            let s = dist2(x, j, cc);
            if s < best.0 {
                best = (s, c);
            }
        }
        if *l != best.1 as u32 {
            changed += 1;
            *l = best.1 as u32;
        }
        *dj = best.0;
    }
    changed
}

/// Centroids as means of the assignments. An empty cluster is re-seeded
/// deterministically with the item farthest from its own centroid (`dist`;
/// ties: the lower item index) among clusters of two or more items; that item
/// moves to the empty cluster. Returns the number of re-seeded clusters.
fn update<T: Real>(
    x: MatRef<'_, T>,
    k: usize,
    labels: &mut [u32],
    dist: &mut [f64],
    sums: &mut [f64],
    counts: &mut [usize],
) -> u32 {
    let d = x.rows();
    sums.fill(0.0);
    counts.fill(0);
    // Cluster `c`'s sums (empty for a cluster it does not have: labels are `< k`).
    let span = |c: usize| c.wrapping_mul(d)..c.wrapping_add(1).wrapping_mul(d);
    for (j, &l) in labels.iter().enumerate() {
        let c = l as usize;
        if let Some(n) = counts.get_mut(c) {
            *n += 1;
        }
        for (i, s) in sums
            .get_mut(span(c))
            .unwrap_or_default()
            .iter_mut()
            .enumerate()
        {
            *s += x.at(i, j).to_f64();
        }
    }
    let mut reseeded = 0;
    for c in 0..k {
        if counts.get(c) != Some(&0) {
            continue;
        }
        // n >= k guarantees a cluster with two or more items while one is empty.
        let mut far = (f64::NEG_INFINITY, usize::MAX);
        for (j, (&l, &dj)) in labels.iter().zip(dist.iter()).enumerate() {
            if counts.get(l as usize).is_some_and(|&m| m > 1) && dj > far.0 {
                far = (dj, j);
            }
        }
        let j = far.1;
        let (Some(l), Some(dj)) = (labels.get_mut(j), dist.get_mut(j)) else {
            continue; // unreachable for n >= k
        };
        let old = *l as usize;
        if let Some(m) = counts.get_mut(old) {
            *m -= 1;
        }
        for i in 0..d {
            let v = x.at(i, j).to_f64();
            if let Some(s) = sums.get_mut(old.wrapping_mul(d).wrapping_add(i)) {
                *s -= v;
            }
            if let Some(s) = sums.get_mut(c * d + i) {
                *s = v;
            }
        }
        if let Some(m) = counts.get_mut(c) {
            *m = 1;
        }
        *l = c as u32;
        *dj = 0.0;
        reseeded += 1;
    }
    for (&m, cs) in counts.iter().zip(sums.chunks_exact_mut(d.max(1))).take(k) {
        let inv = 1.0 / m.max(1) as f64;
        for s in cs {
            *s *= inv;
        }
    }
    reseeded
}

/// k-means clustering of the `n` columns of `x` (`d × n`, any strides) into `k`
/// clusters: minimises the inertia `Σ_j ‖x_j − c_{a(j)}‖²`.
///
/// Each of `params.restarts` runs seeds its centroids by greedy k-means++
/// (scikit-learn's variant: `2 + ⌊ln k⌋` D²-sampled candidates per centre, the
/// one leaving the lowest potential wins), then alternates assignment (nearest
/// centroid, ties to the lower id) and update (means) until the assignments are
/// stable, the centroid shift falls below the tolerance, or `max_iter`; the
/// returned assignments are always those of the nearest final centroid. The run
/// with the lowest inertia is kept (ties: the earlier run). All runs draw from
/// one xoshiro256++ stream seeded by `params.seed`: same inputs, same seed,
/// bitwise the same result.
///
/// **Empty clusters** are re-seeded deterministically: the item farthest from
/// its centroid (ties: lower index) among clusters with two or more items moves
/// to the empty cluster and becomes its centroid (scikit-learn relocates to far
/// points too). With fewer distinct items than `k` some centroids must
/// coincide; the nearest-centroid rule then gives their items to the lowest id,
/// so the returned assignment can leave such clusters empty (inertia is still
/// minimal).
///
/// Writes `assign[j] ∈ 0..k` for every item and, if given, `centroids`
/// (`d × k` column-major). Errors (nothing written): zero dimensions,
/// `k > n` or bad `params` ([`Error::BadParameter`]), `assign.len() != n` or
/// `centroids.len() != d·k`, non-finite data, short workspace.
///
/// Cost per Lloyd iteration `O(n·k·d)`; seeding `O(n·d·k·log k)`; workspace
/// `O(d·k + n)`. Distances are accumulated in `f64` whatever `T` is.
pub fn kmeans<T: Real>(
    x: MatRef<'_, T>,
    k: usize,
    params: &KMeansParams,
    assign_out: &mut [u32],
    centroids: Option<&mut [T]>,
    work: &mut [u8],
) -> Result<KMeansReport, Error> {
    let (d, n) = (x.rows(), x.cols());
    let req = check(d, n, k, params)?;
    if assign_out.len() != n || centroids.as_ref().is_some_and(|c| c.len() != d * k) {
        return Err(Error::DimensionMismatch);
    }
    for j in 0..n {
        for i in 0..d {
            if !x.at(i, j).is_finite() {
                return Err(Error::NonFiniteInput);
            }
        }
    }
    req.check(work.len())?;
    let mut st = Stack::new(work);
    let centers: &mut [f64] = st.take_matrix(d, k)?;
    let next: &mut [f64] = st.take_matrix(d, k)?;
    let best_centers: &mut [f64] = st.take_matrix(d, k)?;
    let counts: &mut [usize] = st.take(k)?;
    let labels: &mut [u32] = st.take(n)?;
    let dist: &mut [f64] = st.take(n)?;

    // scikit-learn's tolerance: tol × mean over features of the variance.
    let mut var_sum = 0.0;
    for i in 0..d {
        let mean = (0..n).map(|j| x.at(i, j).to_f64()).sum::<f64>() / n as f64;
        var_sum += (0..n)
            .map(|j| {
                let t = x.at(i, j).to_f64() - mean;
                t * t
            })
            .sum::<f64>()
            / n as f64;
    }
    let tol = params.tol * var_sum / d as f64;

    let mut rng = Rng::new(params.seed);
    let mut best: Option<KMeansReport> = None;
    for run in 0..params.restarts {
        let cand = next.part_mut(..d)?;
        seed_plusplus(x, k, &mut rng, centers, dist, cand);
        labels.fill(u32::MAX);
        assign(x, centers, k, labels, dist);
        let (mut iterations, mut converged, mut reseeded) = (0u32, false, 0u32);
        while iterations < params.max_iter {
            reseeded += update(x, k, labels, dist, next, counts);
            let shift: f64 = centers
                .iter()
                .zip(next.iter())
                .map(|(a, b)| (a - b) * (a - b))
                .sum();
            centers.copy_from_slice(next);
            iterations += 1;
            let changed = assign(x, centers, k, labels, dist);
            if changed == 0 || shift <= tol {
                converged = true;
                break;
            }
        }
        let inertia: f64 = dist.iter().sum();
        if best.is_none_or(|b| inertia < b.inertia) {
            best = Some(KMeansReport {
                inertia,
                iterations,
                converged,
                best_restart: run,
                reseeded,
            });
            best_centers.copy_from_slice(centers);
            assign_out.copy_from_slice(labels);
        }
    }
    if let Some(c) = centroids {
        for (o, &v) in c.iter_mut().zip(best_centers.iter()) {
            *o = T::from_f64(v);
        }
    }
    best.ok_or(Error::Internal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_reseeds_an_empty_cluster_with_the_farthest_item() {
        // 1-d items 0, 1, 2, 10, 11; all in cluster 0 but item 4, cluster 1 empty.
        let x = [0.0, 1.0, 2.0, 10.0, 11.0];
        let m = MatRef::col_major(&x, 1, 5).unwrap();
        let mut labels = [0u32, 0, 0, 0, 2];
        // Distances to the current centroids: item 3 is the farthest (ties: lower index).
        let mut dist = [4.0, 1.0, 0.0, 64.0, 0.0];
        let mut sums = [0.0; 3];
        let mut counts = [0usize; 3];
        let r = update(m, 3, &mut labels, &mut dist, &mut sums, &mut counts);
        assert_eq!(r, 1);
        assert_eq!(labels, [0, 0, 0, 1, 2]);
        assert_eq!(counts, [3, 1, 1]);
        assert_eq!(sums, [1.0, 10.0, 11.0]);
        // A singleton cluster never donates its item.
        let mut labels = [0u32, 0, 1, 1, 1];
        let mut dist = [0.0, 0.0, 1.0, 81.0, 100.0];
        update(m, 3, &mut labels, &mut dist, &mut sums, &mut counts);
        assert_eq!(labels, [0, 0, 1, 1, 2]);
    }
}
