//! Deterministic SVD-based starts (Boutsidis & Gallopoulos 2008), as
//! scikit-learn's `NMF(init="nndsvd" | "nndsvda" | "nndsvdar")` defines them
//! (`sklearn.decomposition._nmf._initialize_nmf`), for every factorization
//! model through one mechanism: [`nndsvd`] writes the start into the factor
//! buffers, and the model is then fitted with [`crate::Init::Given`].
//!
//! For `X ≈ U V` (`M × N`, features × items) with the top `K` singular
//! triplets `(σ_j, x_j, y_j)` of `X`:
//!
//! ```text
//! u_1 = √σ_1 |x_1|,  v_1 = √σ_1 |y_1|
//! j ≥ 2: x⁺, x⁻, y⁺, y⁻ the positive and negative parts; m⁺ = ‖x⁺‖‖y⁺‖, m⁻ = ‖x⁻‖‖y⁻‖;
//!        the larger pair (ties: the negative one, as scikit-learn's `m_p > m_n`),
//!        normalised, times √(σ_j m±)
//! entries below 1e-6 set to 0 (scikit-learn's `eps`, absolute: for data far
//! below 1 every entry falls under it — rescale such data first), then
//!   nndsvd:   kept 0 (sparse; a multiplicative update never moves a 0 — use with care)
//!   nndsvda:  0 → the mean of X (over all M·N entries, stored or not)
//!   nndsvdar: 0 → |mean · g| / 100, g standard normal (this crate's stream from `seed`,
//!             not numpy's: the same law, not the same numbers)
//! ```
//!
//! The result does not depend on the signs of the singular vectors (flipping
//! `x_j` and `y_j` together swaps the two parts); only an exact tie `m⁺ = m⁻`
//! could, and there both choices are valid.
//!
//! **Several views** (joint NMF, the MvSL/MCL family, a deep model's top
//! layer): the start of the stacked matrix `[X⁽¹⁾; …; X⁽ᴴ⁾]` (`Σ M_v × N`),
//! split into the `U⁽ᵛ⁾` blocks, with the shared `V` — a choice (the views as
//! given: normalise them first, e.g. `crate::prep`, if their scales differ).
//! With one view this is exactly scikit-learn's start.
//!
//! **Truncated SVD** (a choice): exact, by the eigendecomposition of the
//! smaller Gram matrix (`crate::linalg::eig`), where scikit-learn uses a
//! randomized SVD (to its tolerance the same triplets when the spectrum
//! separates them). CSC views are expanded into the workspace.
//!
//! **Cost**: `s²·l + 9s³ + 4·s·l·K` flops with `s = min(ΣM, N)`,
//! `l = max(ΣM, N)`; workspace `ΣM·N` values (the stacked copy) plus the
//! SVD's (`s²` and `(ΣM + N)·K`).

use crate::data::{FactorsMut, View, ViewSet, ViewShape};
use crate::error::Error;
use crate::linalg::eig::{top_svd, top_svd_req};
use crate::linalg::mat::MatRef;
use crate::linalg::real::Real;
use crate::rng::Rng;
use crate::work::{Stack, WorkReq};

/// Which NNDSVD variant (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nndsvd {
    /// Zeros kept.
    Plain,
    /// Zeros filled with the mean of `X`.
    A,
    /// Zeros filled with small random values `|mean · g| / 100`.
    Ar,
}

/// scikit-learn's threshold below which an entry of the start is set to 0.
const EPS: f64 = 1e-6;

/// `(Σ M_v, N)` of views that share `N ≥ 1` items.
fn stacked_dims(shapes: impl IntoIterator<Item = ViewShape>) -> Result<(usize, usize), Error> {
    let (mut m, mut n) = (0usize, None);
    for s in shapes {
        if s.rows == 0 || s.cols == 0 {
            return Err(Error::ZeroDimension);
        }
        if *n.get_or_insert(s.cols) != s.cols {
            return Err(Error::DimensionMismatch);
        }
        m = m.checked_add(s.rows).ok_or(Error::SizeOverflow)?;
    }
    Ok((m, n.ok_or(Error::ZeroDimension)?))
}

fn req<T>(m: usize, n: usize, k: usize) -> Result<WorkReq, Error> {
    if k == 0 || k > m.min(n) {
        return Err(Error::BadRank);
    }
    m.checked_mul(n).ok_or(Error::SizeOverflow)?;
    Ok(WorkReq::all_of(&[
        WorkReq::matrix::<T>(m, n),
        WorkReq::matrix::<T>(m, k),
        WorkReq::matrix::<T>(n, k),
        WorkReq::new::<T>(k),
        WorkReq::new::<u8>(crate::work::ALIGN),
        top_svd_req::<T>(m, n, k),
    ]))
}

/// Workspace bytes of [`nndsvd`] for views of these shapes and rank `k`.
pub fn nndsvd_workspace<T>(
    shapes: impl IntoIterator<Item = ViewShape>,
    k: usize,
) -> Result<usize, Error> {
    let (m, n) = stacked_dims(shapes)?;
    req::<T>(m, n, k)?.bytes()
}

/// Writes the NNDSVD start (module docs) of `views` at rank `k` into `u`
/// (`M_v × K` per view, column-major) and `v` (`K × N`); `seed` is used by
/// [`Nndsvd::Ar`] only. Then fit with [`crate::Init::Given`].
///
/// Errors, before anything is written: shapes ([`Error::ZeroDimension`],
/// [`Error::DimensionMismatch`] — also for output lengths), `k = 0` or
/// `k > min(ΣM, N)` ([`Error::BadRank`]), values (NaN, infinite or negative:
/// [`Error::NonFiniteInput`], [`Error::NegativeInput`]; `½ Σ ‖X‖² > 2^999`:
/// [`Error::InputTooLarge`]), the workspace.
pub fn nndsvd<T: Real, VS: ViewSet<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
    views: &VS,
    k: usize,
    variant: Nndsvd,
    seed: u64,
    u: &mut F,
    v: &mut [T],
    work: &mut [u8],
) -> Result<(), Error> {
    let h = views.count();
    let (m, n) = stacked_dims((0..h).map(|i| views.shape(i)))?;
    let r = req::<T>(m, n, k)?;
    if u.count() != h || v.len() != k * n {
        return Err(Error::DimensionMismatch);
    }
    for i in 0..h {
        if u.get(i).len() != views.shape(i).rows * k {
            return Err(Error::DimensionMismatch);
        }
    }
    let mut half = 0.0;
    for i in 0..h {
        let x = views.view(i);
        x.check_values(true)?;
        half += 0.5 * x.sq_frobenius();
    }
    if half.is_nan() || half > crate::steps::scale::max_half_sq::<T>() {
        return Err(Error::InputTooLarge);
    }
    r.check(work.len())?;
    let mut st = Stack::new(work);
    let d: &mut [T] = st.take_matrix(m, n)?;
    let w: &mut [T] = st.take_matrix(m, k)?;
    let hh: &mut [T] = st.take_matrix(n, k)?;
    let s: &mut [T] = st.take(k)?;
    // The stacked copy, and the mean over all entries.
    d.fill(T::ZERO);
    // Column j of the stacked `m × n` copy is chunk j; view i's rows start at
    // `off` in it (the shapes were checked: no `get` misses).
    let mut off = 0usize;
    for i in 0..h {
        let cols = d.chunks_exact_mut(m.max(1)).take(n).enumerate();
        match views.view(i) {
            View::Dense(x) => {
                let xm = x.mat();
                for (j, dj) in cols {
                    let dst = dj.get_mut(off..off + xm.rows()).unwrap_or(&mut []);
                    for (r, a) in dst.iter_mut().enumerate() {
                        *a = xm.at(r, j);
                    }
                }
            }
            View::Csc(c) => {
                for (j, dj) in cols {
                    let (rows, vals) = c.col(j);
                    for (&r, &x) in rows.iter().zip(vals) {
                        if let Some(a) = dj.get_mut(off + r) {
                            *a = x;
                        }
                    }
                }
            }
        }
        off += views.shape(i).rows;
    }
    // The mean over the stacked copy (so that a split into views does not
    // change the rounding).
    let total: f64 = d.iter().map(|x| x.to_f64()).sum();
    let avg = total / (m as f64 * n as f64);
    top_svd(MatRef::col_major(&*d, m, n)?, k, w, s, hh, &mut st.rest())?;
    // Column j of W (m) and row j of H (stored as column j of hh, n).
    for (j, &sj) in s.iter().enumerate().take(k) {
        let (Some(x), Some(y)) = (
            w.get_mut(j * m..(j + 1) * m),
            hh.get_mut(j * n..(j + 1) * n),
        ) else {
            break;
        };
        let sj = sj.to_f64().max(0.0);
        if j == 0 {
            let f = T::from_f64(libm::sqrt(sj));
            x.iter_mut().for_each(|a| *a = a.abs() * f);
            y.iter_mut().for_each(|a| *a = a.abs() * f);
            continue;
        }
        let norms = |z: &[T]| {
            let (mut p, mut q) = (0.0f64, 0.0f64);
            for &a in z {
                let a = a.to_f64();
                if a > 0.0 {
                    p += a * a;
                } else {
                    q += a * a;
                }
            }
            (libm::sqrt(p), libm::sqrt(q))
        };
        let ((xp, xn), (yp, yn)) = (norms(x), norms(y));
        let (mp, mn) = (xp * yp, xn * yn);
        let positive = mp > mn;
        let (nx, ny, sigma) = if positive { (xp, yp, mp) } else { (xn, yn, mn) };
        let lbd = libm::sqrt(sj * sigma);
        let part = |z: &mut [T], nz: f64| {
            let f = if nz > 0.0 { lbd / nz } else { 0.0 };
            for a in z.iter_mut() {
                let t = a.to_f64();
                let keep = if positive { t.max(0.0) } else { (-t).max(0.0) };
                *a = T::from_f64(keep * f);
            }
        };
        part(x, nx);
        part(y, ny);
    }
    // Threshold, then the variant's fill; W row-blocks into u, Hᵀ into v.
    let mut rng = Rng::new(seed);
    let mut fill = |a: T| -> T {
        if a.to_f64() >= EPS {
            return a;
        }
        match variant {
            Nndsvd::Plain => T::ZERO,
            Nndsvd::A => T::from_f64(avg),
            Nndsvd::Ar => T::from_f64((avg * normal(&mut rng) / 100.0).abs()),
        }
    };
    // scikit-learn fills W's zeros, then H's, each in C (row-major) order.
    let mut off = 0;
    for r in 0..m {
        while off + 1 < h && r >= prefix(views, off + 1) {
            off += 1;
        }
        let base = prefix(views, off);
        let mv = views.shape(off).rows;
        let ui = u.get_mut(off);
        for j in 0..k {
            let a = fill(w.get(r + j * m).copied().unwrap_or(T::ZERO));
            if let Some(o) = ui.get_mut((r - base) + j * mv) {
                *o = a;
            }
        }
    }
    for j in 0..k {
        for c in 0..n {
            let a = fill(hh.get(c + j * n).copied().unwrap_or(T::ZERO));
            if let Some(o) = v.get_mut(j + c * k) {
                *o = a;
            }
        }
    }
    Ok(())
}

/// `Σ_{i < upto} M_i`.
fn prefix<T: Real, VS: ViewSet<T> + ?Sized>(views: &VS, upto: usize) -> usize {
    (0..upto).map(|i| views.shape(i).rows).sum()
}

/// A standard normal draw (Box–Muller on two uniforms of the stream).
fn normal(rng: &mut Rng) -> f64 {
    let u1 = rng.uniform().max(f64::MIN_POSITIVE);
    let u2 = rng.uniform();
    libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(2.0 * core::f64::consts::PI * u2)
}
