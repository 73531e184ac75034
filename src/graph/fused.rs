//! MVEL's multi-graph similarity (seed 002 §2.1, DESIGN §8): the fused graph
//! of a random walk over the `J²` view graphs, dense (`n × n`).
//!
//! ```text
//! w(u, v) = n · Σ_{i,j} p(G_ij) · w_ij(u, v) / vol_ij,      vol_ij = Σ_{u,v} w_ij(u, v)
//! w_ii(u, v) = exp(−γ_i ‖x_u⁽ⁱ⁾ − x_v⁽ⁱ⁾‖²)                  (within view i)
//! w_ij(u, v) = exp(−σ_ij ‖Φⁱᵀ(x_u⁽ⁱ⁾ − μ_i) − Φʲᵀ(x_v⁽ʲ⁾ − μ_j)‖²)   (across views, i ≠ j, by CCA)
//! ```
//!
//! * Bandwidths: `γ_i` given, or (0) the median heuristic `γ = 1 / median d²`
//!   over the pairs `u ≠ v` (the exact lower median, by selection); `σ_ij`
//!   likewise over all `n²` pairs of the cross-view distances.
//! * Cross-view directions: regularised CCA of views `i` and `j`
//!   ([`crate::similarity::cca()`]) with `dims` directions and ridge `reg`.
//!   `w_ji(u, v) = w_ij(v, u)` and `vol_ji = vol_ij`, so with symmetric priors
//!   the fused `W` is symmetric (the paper's `p(u)p(u→v) = p(v)p(v→u)`).
//! * Priors `p(G_ij)`: given (`J × J`, symmetric, `≥ 0`, summing to 1) or
//!   uniform `1/J²`; with `cross_view = false`, `1/J` on the diagonal only (the
//!   paper's "ours−" uses one concatenated view instead).
//! * Scale (a choice): the factor `n` makes the total weight `n` (mean degree
//!   1), so a weight `θ₁` on `tr(H L Hᵀ)` means the same at any `n`.
//!
//! Views are dense and real-valued (this model is not NMF: negative features
//! are fine). Self-loops are kept (`w(u, u) > 0`); they cancel in `L = D − W`.
//!
//! **Cost**: per view `O(n² d_i)` (one GEMM for the distances, twice with the
//! median), per view pair the CCA (`O(n (d_i + d_j)² + (d_i + d_j)³)`) and
//! `O(n² dims)`; memory: the output and one `n × n` scratch matrix.

use crate::data::{Dense, View, ViewSet, ViewShape};
use crate::error::{Error, Part};
use crate::linalg::mat::{MatMut, MatRef};
use crate::linalg::real::Real;
use crate::linalg::select::select_nth_by;
use crate::linalg::{gemm, gemm_req};
use crate::similarity::cca;
use crate::similarity::cca::cca_req;
use crate::work::{Stack, WorkReq};

/// `2^999`: the largest `‖X‖²_F` of a view (as for the solvers).
pub(super) const TOO_LARGE: f64 = 5.357543035931337e300;

/// Options of [`fused_graph`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FusedParams {
    /// Cross-view graphs by CCA (default `true`); `false`: within-view graphs only.
    pub cross_view: bool,
    /// CCA directions per view pair (default 0: `min(d_i, d_j, 10)`).
    pub cca_dims: usize,
    /// Ridge added to both covariance matrices, relative to the mean feature
    /// variance of the two views (default `1e-3`; must be `> 0` with
    /// `cross_view`: views often have more features than items).
    pub cca_reg: f64,
    /// Cross-view bandwidth `σ` (default 0: the median heuristic per pair).
    pub sigma: f64,
}

impl Default for FusedParams {
    fn default() -> Self {
        FusedParams {
            cross_view: true,
            cca_dims: 0,
            cca_reg: 1e-3,
            sigma: 0.0,
        }
    }
}

impl FusedParams {
    /// [`Error::BadParameter`] unless `sigma` is finite and `≥ 0` and
    /// `cca_reg` finite and `> 0` (`≥ 0` without `cross_view`).
    pub fn validate(&self) -> Result<(), Error> {
        let ok = |x: f64| x.is_finite() && x >= 0.0;
        if ok(self.cca_reg) && ok(self.sigma) && (!self.cross_view || self.cca_reg > 0.0) {
            Ok(())
        } else {
            Err(Error::BadParameter)
        }
    }

    pub(super) fn dims(&self, di: usize, dj: usize) -> usize {
        let d = di.min(dj);
        if self.cca_dims == 0 {
            d.min(10)
        } else {
            self.cca_dims.min(d)
        }
    }
}

/// Shapes: `J ≥ 1` dense views of the same `n ≥ 2` items; returns `(n, J)`.
fn check_shapes(shapes: impl IntoIterator<Item = ViewShape>) -> Result<(usize, usize), Error> {
    let mut n = None;
    let mut j = 0;
    for s in shapes {
        if s.rows == 0 || s.cols == 0 {
            return Err(Error::ZeroDimension);
        }
        if s.kind != crate::data::ViewKind::Dense {
            return Err(Error::BadParameter);
        }
        if *n.get_or_insert(s.cols) != s.cols {
            return Err(Error::DimensionMismatch);
        }
        j += 1;
    }
    let n = n.ok_or(Error::ZeroDimension)?;
    if n < 2 {
        return Err(Error::ZeroDimension);
    }
    n.checked_mul(n).ok_or(Error::SizeOverflow)?;
    Ok((n, j))
}

fn fused_req<T>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    params: &FusedParams,
) -> Result<WorkReq, Error> {
    let (n, _) = check_shapes(shapes.clone())?;
    let mut phase = WorkReq::EMPTY;
    for (a, sa) in shapes.clone().into_iter().enumerate() {
        let da = sa.rows;
        // `sq_dists`: the two sides' squared norms (n each), then the product.
        phase = phase.or(WorkReq::all_of(&[
            WorkReq::new::<T>(n),
            WorkReq::new::<T>(n),
            gemm_req::<T>(n, n, da),
        ]));
        if !params.cross_view {
            continue;
        }
        for sb in shapes.clone().into_iter().skip(a + 1) {
            let db = sb.rows;
            let p = params.dims(da, db);
            let c = cca_req::<T>(da, db, n, p).and(WorkReq::new::<u8>(crate::work::ALIGN));
            phase = phase.or(WorkReq::all_of(&[
                WorkReq::matrix::<T>(da, p),
                WorkReq::matrix::<T>(db, p),
                WorkReq::new::<T>(p),
                WorkReq::new::<T>(da),
                WorkReq::new::<T>(db),
                WorkReq::matrix::<T>(p, n),
                WorkReq::matrix::<T>(p, n),
                WorkReq::new::<T>(n),
                WorkReq::new::<T>(n),
                c.or(gemm_req::<T>(n, n, p))
                    .or(gemm_req::<T>(p, n, da.max(db))),
            ]));
        }
    }
    // The scratch n × n matrix, and the phases' buffers.
    Ok(WorkReq::all_of(&[
        WorkReq::matrix::<T>(n, n),
        WorkReq::new::<u8>(crate::work::ALIGN),
        phase,
    ]))
}

/// Workspace bytes of [`fused_graph`] for dense views of these shapes.
pub fn fused_graph_workspace<T>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    params: &FusedParams,
) -> Result<usize, Error> {
    params.validate()?;
    fused_req::<T>(shapes, params)?.bytes()
}

/// Checks priors for `nv` views: `nv × nv`, finite, `≥ 0`, symmetric, summing
/// to 1 (within `1e-9`); with `cross_view = false` the off-diagonal must be 0.
pub(super) fn check_priors(p: &[f64], nv: usize, cross_view: bool) -> Result<(), Error> {
    if p.len() != nv * nv {
        return Err(Error::DimensionMismatch);
    }
    let mut sum = 0.0;
    let at = |i: usize| p.get(i).copied().unwrap_or(f64::NAN);
    for a in 0..nv {
        for b in 0..nv {
            let x = at(a + b * nv);
            if !x.is_finite()
                || x < 0.0
                || x != at(b + a * nv)
                || (!cross_view && a != b && x != 0.0)
            {
                return Err(Error::BadParameter);
            }
            sum += x;
        }
    }
    if (sum - 1.0).abs() > 1e-9 {
        return Err(Error::BadParameter);
    }
    Ok(())
}

/// The prior `p(G_ab)`: given, or uniform `1/J²` (with cross-view graphs), or
/// `1/J` on the diagonal only.
pub(super) fn prior_of(
    priors: Option<&[f64]>,
    nv: usize,
    cross_view: bool,
    a: usize,
    b: usize,
) -> f64 {
    match priors {
        Some(p) => p.get(a + b * nv).copied().unwrap_or(0.0),
        None if cross_view => 1.0 / (nv * nv) as f64,
        None => {
            if a == b {
                1.0 / nv as f64
            } else {
                0.0
            }
        }
    }
}

/// Builds the fused graph `W` (`n × n`, column-major, symmetric, total weight
/// `n`) of the dense `views` (module docs). `gammas`: one `γ_i > 0` per view,
/// 0 for the median heuristic, or `None` (all median). `priors`: `J × J`
/// (column-major) or `None` (uniform). Writes `w` only on success.
///
/// Errors: views not dense ([`Error::BadParameter`]), shapes
/// ([`Error::ZeroDimension`] — fewer than 2 items too —,
/// [`Error::DimensionMismatch`]), values ([`Error::NonFiniteInput`];
/// [`Error::InputTooLarge`] for a view with `‖X‖²_F > 2^999`), options
/// and priors ([`Error::BadParameter`]), a singular covariance in CCA with
/// `cca_reg = 0`, the workspace.
pub fn fused_graph<T: Real, VS: ViewSet<T> + ?Sized>(
    views: &VS,
    gammas: Option<&[f64]>,
    priors: Option<&[f64]>,
    params: &FusedParams,
    w: &mut [T],
    work: &mut [u8],
) -> Result<(), Error> {
    params.validate()?;
    let nv = views.count();
    let (n, _) = check_shapes((0..nv).map(|i| views.shape(i)))?;
    if w.len() != n * n {
        return Err(Error::DimensionMismatch);
    }
    if let Some(g) = gammas {
        if g.len() != nv {
            return Err(Error::DimensionMismatch);
        }
        if g.iter().any(|&x| !x.is_finite() || x < 0.0) {
            return Err(Error::BadParameter);
        }
    }
    if let Some(p) = priors {
        check_priors(p, nv, params.cross_view)?;
    }
    fused_req::<T>((0..nv).map(|i| views.shape(i)), params)?.check(work.len())?;
    for i in 0..nv {
        let v = views.view(i);
        v.check_values(false)?;
        // The solvers' magnitude rule (issue 15): squared distances and the
        // CCA's covariances stay finite.
        let sq = v.sq_frobenius();
        if sq.is_nan() || sq > TOO_LARGE {
            return Err(Error::InputTooLarge);
        }
    }
    let dense = |i: usize| -> Result<Dense<'_, T>, Error> {
        match views.view(i) {
            View::Dense(d) => Ok(d),
            // `check_shapes` refused CSC views.
            View::Csc(_) => Err(Error::BadParameter),
        }
    };
    let prior = |a: usize, b: usize| prior_of(priors, nv, params.cross_view, a, b);
    let mut st = Stack::new(work);
    let s: &mut [T] = st.take_matrix(n, n)?;
    let rest = st.take_rest();
    // CCA can still refuse a pair (a covariance whose spectrum vanishes at
    // extreme magnitudes): run each pair's CCA once before `w` is touched,
    // so that an error leaves it as it was (the second run gives the same bits).
    if params.cross_view {
        for i in 0..nv {
            for j in i + 1..nv {
                if prior(i, j) == 0.0 {
                    continue;
                }
                let (x, y) = (dense(i)?, dense(j)?);
                let (di, dj) = (x.mat().rows(), y.mat().rows());
                let p = params.dims(di, dj);
                let reg = params.cca_reg * mean_variance(&x, &y);
                let mut ph = Stack::new(&mut rest[..]);
                let phi_i: &mut [T] = ph.take_matrix(di, p)?;
                let phi_j: &mut [T] = ph.take_matrix(dj, p)?;
                let rho: &mut [T] = ph.take(p)?;
                let mu_i: &mut [T] = ph.take(di)?;
                let mu_j: &mut [T] = ph.take(dj)?;
                let _z: &mut [T] = ph.take_matrix(2 * p, n)?;
                let _norms: &mut [T] = ph.take(2 * n)?;
                let inner = ph.take_rest();
                cca(&x, &y, reg, p, phi_i, phi_j, rho, mu_i, mu_j, inner)?;
            }
        }
    }
    w.fill(T::ZERO);
    for i in 0..nv {
        let x = dense(i)?;
        let g = gammas.map_or(0.0, |g| g.get(i).copied().unwrap_or(0.0));
        let mut ph = Stack::new(&mut rest[..]);
        sq_dists(x.mat(), x.mat(), true, s, &mut ph)?;
        let gamma = if g > 0.0 { g } else { bandwidth(s, n, true) };
        if g == 0.0 {
            sq_dists(x.mat(), x.mat(), true, s, &mut ph)?;
        }
        add_kernel(s, gamma, prior(i, i), false, w);
        if !params.cross_view {
            continue;
        }
        for j in i + 1..nv {
            if prior(i, j) == 0.0 {
                continue;
            }
            let y = dense(j)?;
            let (di, dj) = (x.mat().rows(), y.mat().rows());
            let reg = params.cca_reg * mean_variance(&x, &y);
            let p = params.dims(di, dj);
            let mut ph = Stack::new(&mut rest[..]);
            let phi_i: &mut [T] = ph.take_matrix(di, p)?;
            let phi_j: &mut [T] = ph.take_matrix(dj, p)?;
            let rho: &mut [T] = ph.take(p)?;
            let mu_i: &mut [T] = ph.take(di)?;
            let mu_j: &mut [T] = ph.take(dj)?;
            let zi: &mut [T] = ph.take_matrix(p, n)?;
            let zj: &mut [T] = ph.take_matrix(p, n)?;
            let _norms: &mut [T] = ph.take(2 * n)?;
            let inner = ph.take_rest();
            cca(&x, &y, reg, p, phi_i, phi_j, rho, mu_i, mu_j, inner)?;
            let mut ph2 = Stack::new(inner);
            project(x.mat(), phi_i, mu_i, p, zi, &mut ph2)?;
            project(y.mat(), phi_j, mu_j, p, zj, &mut ph2)?;
            let (za, zb) = (MatRef::col_major(zi, p, n)?, MatRef::col_major(zj, p, n)?);
            sq_dists(za, zb, false, s, &mut ph2)?;
            let sigma = if params.sigma > 0.0 {
                params.sigma
            } else {
                let g = bandwidth(s, n, false);
                sq_dists(za, zb, false, s, &mut ph2)?;
                g
            };
            add_kernel(s, sigma, prior(i, j), true, w);
        }
    }
    // Total weight n. Each part adds weight p (its kernel divided by its
    // volume), so this is the factor n up to rounding — and it also covers a
    // part whose kernel underflowed to zero everywhere (skipped, weight 0).
    let total: f64 = w.iter().map(|x| x.to_f64()).sum();
    let nf = T::from_f64(if total > 0.0 {
        n as f64 / total
    } else {
        n as f64
    });
    w.iter_mut().for_each(|x| *x *= nf);
    Ok(())
}

/// The mean feature variance over the features of two views (the ridge's
/// unit); 1 when it is 0.
pub(super) fn mean_variance<T: Real>(x: &Dense<'_, T>, y: &Dense<'_, T>) -> f64 {
    let n = x.mat().cols() as f64;
    let var = |d: &Dense<'_, T>| -> f64 {
        (0..d.mat().rows())
            .map(|i| {
                let (mut s, mut q) = (0.0, 0.0);
                for u in 0..d.mat().cols() {
                    let v = d.mat().at(i, u).to_f64();
                    s += v;
                    q += v * v;
                }
                (q - s * s / n).max(0.0) / (n - 1.0)
            })
            .sum()
    };
    let m = (var(x) + var(y)) / (x.mat().rows() + y.mat().rows()) as f64;
    if m > 0.0 && m.is_finite() {
        m
    } else {
        1.0
    }
}

/// `z = Φᵀ (X − μ 1ᵀ)` (`p × n`).
pub(super) fn project<T: Real>(
    x: MatRef<'_, T>,
    phi: &[T],
    mu: &[T],
    p: usize,
    z: &mut [T],
    st: &mut Stack<'_>,
) -> Result<(), Error> {
    let (d, n) = (x.rows(), x.cols());
    let phim = MatRef::col_major(phi, d, p)?;
    gemm(
        T::ONE,
        phim.t(),
        x,
        T::ZERO,
        MatMut::col_major(z, p, n)?,
        st,
    )?;
    for (r, col) in phi.chunks_exact(d.max(1)).take(p).enumerate() {
        let off: f64 = col
            .iter()
            .zip(mu)
            .map(|(f, m)| f.to_f64() * m.to_f64())
            .sum();
        let off = T::from_f64(off);
        z.iter_mut().skip(r).step_by(p).for_each(|v| *v -= off);
    }
    Ok(())
}

/// `x²` in f64.
fn sq<T: Real>(x: T) -> f64 {
    let v = x.to_f64();
    v * v
}

/// `s[u + v n_a] = ‖a_u − b_v‖²` (columns of `a` (`d × n_a`) and `b`
/// (`d × n_b`)), clamped at 0; `same` (`a` is `b`): the diagonal exactly 0 (the
/// GEMM's `‖a‖² + ‖a‖² − 2aᵀa` need not be, and at large magnitudes its
/// rounding would zero the kernel). Workspace: `n_a + n_b` values and the GEMM's.
pub(super) fn sq_dists<T: Real>(
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    same: bool,
    s: &mut [T],
    st: &mut Stack<'_>,
) -> Result<(), Error> {
    let (n, nbc) = (a.cols(), b.cols());
    let mut st = st.rest();
    let na: &mut [T] = st.take(n)?;
    let nb: &mut [T] = st.take(nbc)?;
    for (u, x) in na.iter_mut().enumerate() {
        *x = T::from_f64((0..a.rows()).map(|i| sq(a.at(i, u))).sum());
    }
    for (v, x) in nb.iter_mut().enumerate() {
        *x = T::from_f64((0..b.rows()).map(|i| sq(b.at(i, v))).sum());
    }
    gemm(
        -T::ONE - T::ONE,
        a.t(),
        b,
        T::ZERO,
        MatMut::col_major(s.part_mut(..n * nbc)?, n, nbc)?,
        &mut st,
    )?;
    let cols = s.chunks_exact_mut(n.max(1)).zip(nb.iter());
    for (v, (col, &nbv)) in cols.enumerate().take(nbc) {
        for (u, (x, &nau)) in col.iter_mut().zip(na.iter()).enumerate() {
            let y = *x + nau + nbv;
            *x = if y > T::ZERO && !(same && u == v) {
                y
            } else {
                T::ZERO
            };
        }
    }
    Ok(())
}

/// `1 / median d²` over the pairs `u ≠ v` (`skip_diag`, `s` square `n × n`)
/// or all of `s`, by selection in place (destroys `s`); falls back to
/// `1 / mean`, then 1, when the median is 0.
pub(super) fn bandwidth<T: Real>(s: &mut [T], n: usize, skip_diag: bool) -> f64 {
    let big = T::from_f64(f64::MAX);
    if skip_diag {
        for x in s.iter_mut().step_by(n.wrapping_add(1).max(1)).take(n) {
            *x = big;
        }
    }
    let valid = if skip_diag {
        n.saturating_mul(n.saturating_sub(1))
    } else {
        s.len()
    };
    // The lower median of the valid values (the diagonal's `big` sorts last); the
    // order selection leaves `s` in is this selection's (it decides the rounding of
    // the mean below, which only degenerate data reaches).
    let k = valid.saturating_sub(1) / 2;
    let Some(med) = select_nth_by(s, k, |a, b| a < b) else {
        return 1.0;
    };
    let med = med.to_f64();
    // 1/median, or 1/mean, or 1 — whichever is first finite and positive (a
    // subnormal median would give γ = ∞, and ∞ · 0 on the diagonal NaN).
    let ok = |g: f64| g.is_finite() && g > 0.0;
    if ok(1.0 / med) {
        return 1.0 / med;
    }
    let mean = s
        .iter()
        .map(|x| x.to_f64())
        .filter(|&x| x < f64::MAX)
        .sum::<f64>()
        / valid as f64;
    if ok(1.0 / mean) {
        1.0 / mean
    } else {
        1.0
    }
}

/// `w += p/vol · (K + Kᵀ)/2` (`cross`: `p/vol · (K + Kᵀ)`) with
/// `K = exp(−γ s)`, `vol = Σ K` (computed in `s`). Both forms add the same
/// value at `(u, v)` and `(v, u)`, so `w` stays exactly symmetric (a GEMM's
/// `XᵀX` need not be).
fn add_kernel<T: Real>(s: &mut [T], gamma: f64, p: f64, cross: bool, w: &mut [T]) {
    let mut vol = 0.0;
    for x in s.iter_mut() {
        let k = libm::exp(-gamma * x.to_f64());
        *x = T::from_f64(k);
        vol += k;
    }
    if vol <= 0.0 || p == 0.0 {
        return;
    }
    let c = T::from_f64(if cross { p / vol } else { 0.5 * p / vol });
    let n = libm::sqrt(s.len() as f64) as usize;
    let cols = w.chunks_exact_mut(n.max(1)).zip(s.chunks_exact(n.max(1)));
    for (v, (wc, sc)) in cols.enumerate().take(n) {
        // `s[v + u n]`: row `v` of `s`, walked down the columns.
        let row = s.iter().skip(v).step_by(n.max(1));
        for ((x, &a), &b) in wc.iter_mut().zip(sc).zip(row) {
            *x += c * (a + b);
        }
    }
}
