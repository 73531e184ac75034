//! The numerical floor: the scalar trait [`real::Real`], strided matrix views
//! ([`mat`]), and every product the solvers form (DESIGN §11).
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | `gemm` (one entry for every dense product), `gram_t`, dot products, norms |
//! | `blocked.rs` | the no_std GEMM on workspace panels |
//! | `microk.rs` | its FMA register tiles and transposing pack (`f64`, x86-64 AVX2/AVX-512; `unsafe`) |
//! | [`eig`] | dense symmetric eigendecomposition (Householder + implicit QL), `C^{−1/2}`, top singular triplets |
//! | `hosted.rs` | the `gemm` crate's GEMM (std builds; `unsafe`) |
//! | `select.rs` | the `N` best-scored items (no full sort), a panic-free sort and `k`-th element |
//! | `sparse.rs` | the CSC type and its `O(nnz·K)` products |
//! | `simd.rs` | run-time SIMD dispatch of the portable loops (`unsafe`) |
//! | `spk.rs` | AVX2 + FMA sparse row kernels (std, x86-64; `unsafe`) |
//!
//! Dense products:
//!
//! * no_std: `blocked::gemm`, an allocation-free Goto-style GEMM that packs
//!   panels of A and B into the caller's workspace and runs a register-tiled
//!   micro-kernel: the portable `8 × 4` tile written so that the compiler
//!   vectorises it, or (x86-64, run-time dispatch) the FMA tiles of
//!   `microk.rs`, `12 × 4` on AVX2 and `24 × 8` on AVX-512.
//! * `std`: the `gemm` crate's kernels (run-time AVX/AVX2/AVX-512/FMA detection),
//!   reached through [`crate::Real`]'s hosted hook; they allocate their own
//!   packing buffers. The workspace queries still reserve the blocked kernel's
//!   panels, so a query's answer does not depend on the build.
//!
//! nalgebra's gemm is not used on any path: without std it is a naive loop, and
//! with a strided left operand it is unsound (nalgebra issue #1616).

pub(crate) mod blocked;
pub mod eig;
#[cfg(feature = "std")]
pub(crate) mod hosted;
pub mod mat;
pub(crate) mod microk;
pub mod real;
pub(crate) mod select;
pub(crate) mod simd;
pub use simd::{active_level, detected_level, force_level, SimdLevel};
pub(crate) mod sparse;
#[cfg(all(feature = "std", target_arch = "x86_64"))]
pub(crate) mod spk;

pub use eig::{sym_eig, sym_eig_workspace};

use crate::error::{Error, Part};
use crate::linalg::mat::{MatMut, MatRef};
use crate::linalg::real::Real;
use crate::par::{chunk_len, even_tasks_for, Counted};
use crate::work::{Stack, WorkReq};

/// `v[i]`, or the default (zero) past the end: the read of an index the
/// caller knows is inside, with the bounds check but without a panic path.
/// (`error::Part::at` is the read that returns `Error::Internal` instead.)
#[inline(always)]
pub(crate) fn at<T: Copy + Default>(v: &[T], i: usize) -> T {
    v.get(i).copied().unwrap_or_default()
}

/// Swaps `v[i]` and `v[j]`; nothing when either is past the end (the
/// comparisons right before the swap let the optimiser drop its own checks,
/// which it cannot always prove from an earlier `get`).
#[inline(always)]
pub(crate) fn swap_at<T>(v: &mut [T], i: usize, j: usize) {
    if i < v.len() && j < v.len() {
        v.swap(i, j);
    }
}

/// `v[i] = x`; nothing past the end (see [`at`]).
#[inline(always)]
pub(crate) fn set_at<T>(v: &mut [T], i: usize, x: T) {
    if let Some(d) = v.get_mut(i) {
        *d = x;
    }
}

/// Workspace of [`gemm()`] for `C (m×n) ← α A (m×k) B (k×n) + β C`.
pub(crate) fn gemm_req<T>(m: usize, n: usize, k: usize) -> WorkReq {
    blocked::workspace::<T>(m, n, k)
}

/// `C ← α·A·B + β·C`. When `β = 0`, `C` is not read (NaN in it does not leak).
pub(crate) fn gemm<T: Real>(
    alpha: T,
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    beta: T,
    mut c: MatMut<'_, T>,
    st: &mut Stack<'_>,
) -> Result<(), Error> {
    let (m, n, k) = (c.rows(), c.cols(), a.cols());
    if a.rows() != m || b.cols() != n || b.rows() != k {
        return Err(Error::Internal);
    }
    if m == 0 || n == 0 {
        return Ok(());
    }
    if k == 0 || alpha == T::ZERO {
        scale(beta, &mut c);
        return Ok(());
    }
    if T::gemm_hosted(alpha, a, b, beta, c.rb(), st.par())? {
        return Ok(());
    }
    blocked::gemm(alpha, a, b, beta, c, st)
}

/// Rows of `C` per strip of [`gram_t`]: two of the hosted micro-kernels' row
/// tiles on AVX2 (8 doubles), one on AVX-512.
const GRAM_STRIP: usize = 16;

/// Rows of `A` per block of [`gram_t`] in the no_std build (a multiple of the
/// blocked GEMM's `KC`: the sums are taken in the same blocks of 256).
const GRAM_ROWS: usize = 512;

/// `c ← A·B`, `c` column-major `A.rows() × B.cols()`: [`gemm()`] with `α = 1`,
/// `β = 0` (`c` not read).
pub(crate) fn gemm_into<T: Real>(
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    c: &mut [T],
    st: &mut Stack<'_>,
) -> Result<(), Error> {
    let (m, n) = (a.rows(), b.cols());
    gemm(T::ONE, a, b, T::ZERO, MatMut::col_major(c, m, n)?, st)
}

/// `C (k×k) ← β·C + AᵀA` for `A` (`m × k`), a symmetric rank-`m` update.
///
/// Only the strips `C[s..e, s..k]` (`e − s ≤ 16`) of the upper block triangle
/// are formed, by GEMM, about `(k + 16) / 2k` of a full product's flops (65 %
/// at `k = 50`); then the strictly lower triangle is copied from the upper one,
/// so `C` comes out exactly symmetric. With `β ≠ 0`, `C` must be symmetric on
/// entry (its strictly lower triangle does not affect the result). Workspace:
/// that of `gemm(k, k, m)`.
pub(crate) fn gram_t<T: Real>(
    a: MatRef<'_, T>,
    beta: T,
    mut c: MatMut<'_, T>,
    st: &mut Stack<'_>,
) -> Result<(), Error> {
    let k = a.cols();
    if c.rows() != k || c.cols() != k {
        return Err(Error::Internal);
    }
    let ld = c.ld();
    let data = c.data_mut();
    // The blocked GEMM (no_std) takes the rows of `A` in blocks of
    // `GRAM_ROWS`, every strip per block, so that each block of `A` comes from
    // memory once and stays in cache for all the strips (strip by strip, a
    // tall `A` — 20 000 × 50 in the sparse NMF — was streamed from memory once
    // per strip: 2× the traffic). The hosted `gemm` crate runs each strip whole
    // (its sums, hence the hosted results, unchanged).
    let m = a.rows();
    let step = if cfg!(feature = "std") {
        m.max(1)
    } else {
        GRAM_ROWS
    };
    for p0 in (0..m.max(1)).step_by(step) {
        let p1 = (p0 + step).min(m);
        let ab = a.t().col_range(p0.min(m), p1)?.t();
        let b = if p0 == 0 { beta } else { T::ONE };
        for s in (0..k).step_by(GRAM_STRIP) {
            let e = (s + GRAM_STRIP).min(k);
            let rest = data.part_mut(s + s * ld..)?;
            let strip = MatMut::new(rest, e - s, k - s, ld)?;
            gemm(
                T::ONE,
                ab.col_range(s, e)?.t(),
                ab.col_range(s, k)?,
                b,
                strip,
                st,
            )?;
        }
    }
    for j in 0..k {
        for i in j + 1..k {
            let upper = data.get(j + i * ld).copied();
            if let (Some(x), Some(d)) = (upper, data.get_mut(i + j * ld)) {
                *d = x;
            }
        }
    }
    Ok(())
}

/// The fixed split of [`gram_par`] over the `m` rows of `A`: `(tasks, rows
/// per task)`, from the shape alone (`crate::par`).
fn gram_split(m: usize, k: usize) -> (usize, usize) {
    // Per row of `A`: the multiply-adds of `gram_t`'s strips, about `k(k + 16)/2`.
    let tasks = even_tasks_for(m, k.saturating_mul(k.saturating_add(GRAM_STRIP)) / 2);
    let chunk = chunk_len(m, tasks, 8);
    (m.div_ceil(chunk.max(1)), chunk)
}

/// Workspace of [`gram_par`] for `A` (`m × k`).
pub(crate) fn gram_req<T>(m: usize, k: usize) -> WorkReq {
    let (tasks, chunk) = gram_split(m, k);
    if tasks <= 1 {
        return gemm_req::<T>(k, k, m);
    }
    WorkReq::all_of(&[
        WorkReq::matrix::<T>(k, k).times(tasks),
        gemm_req::<T>(k, k, chunk).times(tasks),
    ])
}

/// [`gram_t`] split over the rows of `A` (`m × k`, any strides) into the
/// tasks of [`gram_split`], run on the stack's [`crate::Parallel`]: task `t` forms
/// `A_tᵀA_t` for its block of rows, then `C ← β·C + Σ_t A_tᵀA_t` adds the
/// blocks in task order. Same bits for every thread count; a tall `A` (`UᵀU`
/// of a view with many features, `VVᵀ` over many items) is the case it is for.
/// Workspace: [`gram_req`].
pub(crate) fn gram_par<T: Real>(
    a: MatRef<'_, T>,
    beta: T,
    mut c: MatMut<'_, T>,
    st: &mut Stack<'_>,
) -> Result<(), Error> {
    let (m, k) = (a.rows(), a.cols());
    let (tasks, chunk) = gram_split(m, k);
    if tasks <= 1 {
        return gram_t(a, beta, c, st);
    }
    if c.rows() != k || c.cols() != k {
        return Err(Error::Internal);
    }
    let par = st.par();
    let mut st = st.rest();
    let parts: &mut [T] = st.take_matrix(k * k, tasks)?;
    let slots = st.take_slots(tasks, gemm_req::<T>(k, k, chunk))?;
    let kk = (k * k).max(1);
    par.run_items(parts.chunks_mut(kk).zip(slots).enumerate(), &|(
        t,
        (part, slot),
    )| {
        let r0 = t * chunk;
        let rows = a.t().col_range(r0, (r0 + chunk).min(m))?.t();
        gram_t(
            rows,
            T::ZERO,
            MatMut::col_major(part, k, k)?,
            &mut Stack::new(slot),
        )
    })?;
    for j in 0..k {
        let col = c.col_mut(j);
        for (i, d) in col.iter_mut().enumerate() {
            let at = i + j * k;
            let mut parts = parts.chunks_exact(kk).filter_map(|p| p.get(at).copied());
            let Some(mut acc) = parts.next() else {
                return Err(Error::Internal);
            };
            for x in parts {
                acc += x;
            }
            *d = if beta == T::ZERO {
                acc
            } else {
                beta * *d + acc
            };
        }
    }
    Ok(())
}

/// Largest `C` (`m·n` elements) that [`gemm_k`] splits over the inner
/// dimension: each task keeps a whole `C` of its own (256 KiB at this size).
const K_SPLIT_MAX_C: usize = 1 << 15;

/// The fixed split of [`gemm_k`] over the inner dimension `k`: `(tasks,
/// inner indices per task)`, from the shape alone (`crate::par`). One task
/// unless `C` is small (at most [`K_SPLIT_MAX_C`] elements) and the inner
/// dimension long (`k ≥ 4·max(m, n)`); an even number of parts, multiples
/// of 16.
fn k_split(m: usize, n: usize, k: usize) -> (usize, usize) {
    let mn = m.saturating_mul(n);
    if mn > K_SPLIT_MAX_C || k / 4 < m.max(n) {
        return (1, k);
    }
    let chunk = chunk_len(k, even_tasks_for(k, mn), 16).max(1);
    (k.div_ceil(chunk), chunk)
}

/// Workspace of [`gemm_k`] for `C (m×n) ← α A (m×k) B (k×n) + β C`.
pub(crate) fn gemm_k_req<T>(m: usize, n: usize, k: usize) -> WorkReq {
    let (tasks, chunk) = k_split(m, n, k);
    if tasks <= 1 {
        return gemm_req::<T>(m, n, k);
    }
    WorkReq::all_of(&[
        WorkReq::matrix::<T>(m.saturating_mul(n), tasks),
        gemm_req::<T>(m, n, chunk).times(tasks),
    ])
}

/// [`gemm()`] for a small `C` and a long inner dimension (`X·Vᵀ`: a view's
/// features × the rank, summed over all items): split over the inner
/// dimension into the tasks of [`k_split`], run on the stack's
/// [`crate::Parallel`]. Task `t` forms `A_t·B_t` (its block of columns of `A`
/// and rows of `B`) whole, and `C ← α·Σ_t A_t·B_t + β·C` adds the parts in
/// task order: the same bits for every thread count. Splitting `C`'s rows
/// instead (what [`gemm()`] does) hands every task all of `B`, and a slice of
/// a few rows that makes poor use of the register tiles. Other shapes: one
/// task, [`gemm()`] itself. Workspace: [`gemm_k_req`].
pub(crate) fn gemm_k<T: Real>(
    alpha: T,
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    beta: T,
    mut c: MatMut<'_, T>,
    st: &mut Stack<'_>,
) -> Result<(), Error> {
    let (m, n, k) = (c.rows(), c.cols(), a.cols());
    let (tasks, chunk) = k_split(m, n, k);
    if tasks <= 1 || alpha == T::ZERO {
        return gemm(alpha, a, b, beta, c, st);
    }
    if a.rows() != m || b.cols() != n || b.rows() != k {
        return Err(Error::Internal);
    }
    let par = st.par();
    let mut st = st.rest();
    let mn = (m * n).max(1);
    let parts: &mut [T] = st.take_matrix(mn, tasks)?;
    let slots = st.take_slots(tasks, gemm_req::<T>(m, n, chunk))?;
    let items = Counted::new(parts.chunks_mut(mn).zip(slots).enumerate(), tasks);
    par.run_items(items, &|(t, (part, slot))| {
        let (p0, p1) = (t * chunk, ((t + 1) * chunk).min(k));
        gemm(
            T::ONE,
            a.col_range(p0, p1)?,
            b.t().col_range(p0, p1)?.t(),
            T::ZERO,
            MatMut::col_major(part, m, n)?,
            &mut Stack::new(slot),
        )
    })?;
    // Σ_t in task order, into the first part.
    let (first, rest) = parts.split_at_mut(mn.min(parts.len()));
    for p in rest.chunks_exact(mn) {
        first.iter_mut().zip(p).for_each(|(x, &y)| *x += y);
    }
    for (j, sum) in first.chunks_exact(m.max(1)).enumerate().take(n) {
        let col = c.col_mut(j);
        for (d, &x) in col.iter_mut().zip(sum) {
            *d = if beta == T::ZERO {
                alpha * x
            } else {
                alpha * x + beta * *d
            };
        }
    }
    Ok(())
}

/// `C ← β C` (`β = 0` writes zeros without reading).
pub(crate) fn scale<T: Real>(beta: T, c: &mut MatMut<'_, T>) {
    if beta == T::ONE {
        return;
    }
    for j in 0..c.cols() {
        let col = c.col_mut(j);
        if beta == T::ZERO {
            col.fill(T::ZERO);
        } else {
            col.iter_mut().for_each(|x| *x *= beta);
        }
    }
}

/// `Σ a_i b_i` accumulated in f64.
#[inline]
pub(crate) fn dot<T: Real>(a: &[T], b: &[T]) -> f64 {
    // Four partial sums: vectorisable and less rounding than one chain.
    let mut s = [0.0f64; 4];
    let mut ca = a.chunks_exact(4);
    let mut cb = b.chunks_exact(4);
    for (x, y) in (&mut ca).zip(&mut cb) {
        for i in 0..4 {
            s[i] += x[i].to_f64() * y[i].to_f64();
        }
    }
    let mut r = (s[0] + s[1]) + (s[2] + s[3]);
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        r += x.to_f64() * y.to_f64();
    }
    r
}

/// `out[a + b·nr] = Σ_f x_a[f] y_b[f]` (f64 sums, eight partial sums in a fixed order) for
/// the `nr` columns `x_a = xs[a·ld + o ..][..m]` and the `nc` columns `y_b` of `ys` alike:
/// small panel products value by value, under the widest instruction set the CPU has
/// (`simd::dispatch`; no fused multiply-add, so the same bits at every level). On AVX-512,
/// `f64` panels go four columns at a time (`microk::AvxTile::partial_dots4_f64`: four
/// independent chains where one value's single chain waits on the adds' latency), each value
/// the same bits.
#[allow(clippy::too_many_arguments)]
pub(crate) fn panel_dots<T: Real>(
    xs: &[T],
    ys: &[T],
    (o, m, ld): (usize, usize, usize),
    nr: usize,
    nc: usize,
    out: &mut [T],
) {
    simd::dispatch(PanelDots {
        xs,
        ys,
        o,
        m,
        ld,
        nr,
        nc,
        out,
    });
}

struct PanelDots<'a, T> {
    xs: &'a [T],
    ys: &'a [T],
    o: usize,
    m: usize,
    ld: usize,
    nr: usize,
    nc: usize,
    out: &'a mut [T],
}

impl<T: Real> simd::Kernel for PanelDots<'_, T> {
    type Out = ();
    #[inline(always)]
    fn run(self) {
        let ld = self.ld.max(1);
        let (o, m, nr) = (self.o, self.m, self.nr);
        // `f64` panels on the AVX-512 level: four columns at a time (`x_a` loaded once, four
        // independent chains instead of one), each value the bits of `panel_dot`.
        if let (Some(tile), Some(xs), Some(ys)) = (
            microk::AvxTile::new().filter(|t| t.is_512()),
            T::as_f64s(self.xs),
            T::as_f64s(self.ys),
        ) {
            let col = |b: usize| -> &[f64] {
                b.checked_mul(ld)
                    .and_then(|r| r.checked_add(o))
                    .and_then(|r| ys.get(r..r.checked_add(m)?))
                    .unwrap_or_default()
            };
            let per_group = self
                .out
                .chunks_mut((4 * nr).max(1))
                .take(self.nc.div_ceil(4));
            for (g, og) in per_group.enumerate() {
                let b0 = 4 * g;
                let nb = (self.nc - b0).min(4);
                let at = |t: usize| col(b0 + t.min(nb - 1));
                let y = [at(0), at(1), at(2), at(3)];
                for (a, ac) in xs.chunks_exact(ld).take(nr).enumerate() {
                    let x = ac.get(o..o + m).unwrap_or_default();
                    let vals = match tile.partial_dots4_f64(x, y) {
                        Some(s) => {
                            let mut v = [0.0f64; 4];
                            for ((v, s), yt) in v.iter_mut().zip(&s).zip(y) {
                                *v = finish8(s, x, yt);
                            }
                            v
                        }
                        None => y.map(|yt| panel_dot(x, yt)),
                    };
                    for (t, &r) in vals.iter().enumerate().take(nb) {
                        if let Some(d) = og.get_mut(a + t * nr) {
                            *d = T::from_f64(r);
                        }
                    }
                }
            }
            return;
        }
        let rcols = self.xs.chunks_exact(ld).take(nr);
        let per_col = self
            .out
            .chunks_exact_mut(nr.max(1))
            .zip(self.ys.chunks_exact(ld));
        for (oc, bc) in per_col.take(self.nc) {
            let y = bc.get(o..o + m).unwrap_or_default();
            for (dst, ac) in oc.iter_mut().zip(rcols.clone()) {
                let x = ac.get(o..o + m).unwrap_or_default();
                *dst = T::from_f64(panel_dot(x, y));
            }
        }
    }
}

/// One value of [`panel_dots`]: eight partial sums `s[l] = Σ_{f ≡ l (mod 8)} x_f y_f` over
/// the whole chunks of eight, then [`finish8`] (`n`: the shorter length).
#[inline(always)]
fn panel_dot<T: Real>(x: &[T], y: &[T]) -> f64 {
    let mut s = [0.0f64; 8];
    let mut cx = x.chunks_exact(8);
    let mut cy = y.chunks_exact(8);
    for (a, b) in (&mut cx).zip(&mut cy) {
        for i in 0..8 {
            s[i] += a[i].to_f64() * b[i].to_f64();
        }
    }
    finish8(&s, x, y)
}

/// The end of a [`panel_dots`] value after its eight partial sums: the fixed tree
/// `((s₀ + s₁) + (s₂ + s₃)) + ((s₄ + s₅) + (s₆ + s₇))`, then the products past the last
/// multiple of 8 (of the shorter of `x`, `y`) added in order.
#[inline(always)]
fn finish8<T: Real>(s: &[f64; 8], x: &[T], y: &[T]) -> f64 {
    let n = x.len().min(y.len());
    let n8 = n / 8 * 8;
    let mut r = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    let (tx, ty) = (
        x.get(n8..n).unwrap_or_default(),
        y.get(n8..n).unwrap_or_default(),
    );
    for (a, b) in tx.iter().zip(ty) {
        r += a.to_f64() * b.to_f64();
    }
    r
}

/// `out[t] = Σ_f x[f] y_t[f]` in `f32` for `m` values `x` and the item rows
/// `y_t = z[q_t·ld + o ..][..m]` of an item-major `f32` table `z` (the candidate scoring
/// of `similarity::approx_knn`): sixteen partial sums per value, reduced in a fixed tree, no
/// fused multiply-add (AVX2 registers when the CPU has them, `microk`), so the same bits at
/// every SIMD level and whichever of two items is `x`. A row outside `z` (or `x` not of
/// `m` values) gives 0.
pub(crate) fn dots_f32(
    z: &[f32],
    ld: usize,
    (o, m): (usize, usize),
    x: &[f32],
    qs: &[usize],
    out: &mut [f32],
) {
    let tile = microk::AvxTile::new();
    for (dst, &q) in out.iter_mut().zip(qs) {
        let y = row_f32(z, ld, (o, m), q);
        *dst = if y.len() == m && x.len() == m {
            dot16(tile, x, y)
        } else {
            0.0
        };
    }
}

/// Row `i` of an item-major table (`m` values from `o`; empty outside).
#[inline]
pub(crate) fn row_f32(z: &[f32], ld: usize, (o, m): (usize, usize), i: usize) -> &[f32] {
    i.checked_mul(ld)
        .and_then(|r| r.checked_add(o))
        .and_then(|r| z.get(r..r.checked_add(m)?))
        .unwrap_or_default()
}

#[inline(always)]
fn dot16(tile: Option<microk::AvxTile>, x: &[f32], y: &[f32]) -> f32 {
    let mut s = [0.0f32; 16];
    let mut cx = x.chunks_exact(16);
    let mut cy = y.chunks_exact(16);
    match tile {
        Some(t) => s = t.partial_dots_f32(x, y),
        None => {
            for (a, b) in (&mut cx).zip(&mut cy) {
                for ((s, &a), &b) in s.iter_mut().zip(a).zip(b) {
                    *s += a * b;
                }
            }
        }
    }
    microk::finish16(&s, x, y)
}

/// `Σ a_i²` in f64.
#[inline]
pub(crate) fn sq_norm<T: Real>(a: &[T]) -> f64 {
    dot(a, a)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::rng::Rng;

    /// A `rows × cols` operand over `data`: column-major, or (`t`) the
    /// transpose of a column-major `cols × rows` matrix (strided rows).
    fn operand(data: &[f64], rows: usize, cols: usize, t: bool) -> MatRef<'_, f64> {
        if t {
            MatRef::col_major(data, cols, rows).unwrap().t()
        } else {
            MatRef::col_major(data, rows, cols).unwrap()
        }
    }

    fn check(m: usize, n: usize, k: usize, ta: bool, tb: bool, beta: f64, hosted: bool) {
        let mut rng = Rng::new(((m * 31 + n) * 17 + k) as u64);
        let mut a = std::vec![0.0; m * k];
        let mut b = std::vec![0.0; k * n];
        let mut c = std::vec![0.0; m * n];
        a.iter_mut().for_each(|x| *x = rng.uniform() - 0.5);
        b.iter_mut().for_each(|x| *x = rng.uniform() - 0.5);
        c.iter_mut().for_each(|x| *x = rng.uniform());
        let c0 = c.clone();
        let (av, bv) = (operand(&a, m, k, ta), operand(&b, k, n, tb));
        let need = gemm_req::<f64>(m, n, k).bytes().unwrap();
        let mut w = std::vec![0u8; need];
        let mut st = Stack::new(&mut w);
        let cm = MatMut::col_major(&mut c, m, n).unwrap();
        if hosted {
            gemm(1.5, av, bv, beta, cm, &mut st).unwrap();
        } else {
            blocked::gemm(1.5, av, bv, beta, cm, &mut st).unwrap();
        }
        for j in 0..n {
            for i in 0..m {
                let mut s = 0.0;
                for p in 0..k {
                    s += av.at(i, p) * bv.at(p, j);
                }
                let want = 1.5 * s + beta * c0[i + j * m];
                let got = c[i + j * m];
                assert!(
                    (want - got).abs() <= 1e-13 * (k as f64 + 1.0),
                    "m{m} n{n} k{k} ta{ta} tb{tb} ({i},{j}) {want} {got}"
                );
            }
        }
    }

    #[test]
    fn blocked_matches_naive() {
        for &(m, n, k) in &[
            (1, 1, 1),
            (7, 3, 5),
            (8, 4, 256),
            (9, 5, 257),
            (130, 70, 300),
            (33, 2049, 3),
            (300, 9, 40),
        ] {
            for &(ta, tb) in &[(false, false), (true, false), (false, true), (true, true)] {
                check(m, n, k, ta, tb, 0.0, false);
                check(m, n, k, ta, tb, 0.5, false);
                check(m, n, k, ta, tb, 0.5, true);
            }
        }
    }

    /// The blocked kernel at every SIMD level this CPU has: the same bits for
    /// the same inputs within a level (run twice), and within `1e-12` of each
    /// entry's magnitude `|α|·Σ_p |a_ip b_pj| + |β c_ij|` of the portable tile's
    /// result across levels (the AVX tiles fuse the multiply-adds), operands
    /// packed or read in place, edge tiles included.
    #[test]
    fn blocked_levels_agree() {
        use crate::linalg::simd::{detected_level, force_level, SimdLevel};
        let (alpha, beta, c0) = (0.75, 0.5, 0.25);
        let run = |m: usize, n: usize, k: usize, ta: bool, tb: bool| {
            let mut rng = Rng::new((m * 7 + n * 3 + k) as u64);
            let a: std::vec::Vec<f64> = (0..m * k).map(|_| rng.uniform() - 0.4).collect();
            let b: std::vec::Vec<f64> = (0..k * n).map(|_| rng.uniform() - 0.4).collect();
            let (av, bv) = (operand(&a, m, k, ta), operand(&b, k, n, tb));
            let mut w = std::vec![0u8; gemm_req::<f64>(m, n, k).bytes().unwrap()];
            let mut c = std::vec![c0; m * n];
            let cm = MatMut::col_major(&mut c, m, n).unwrap();
            blocked::gemm(alpha, av, bv, beta, cm, &mut Stack::new(&mut w)).unwrap();
            let mut mag = std::vec![0.0; m * n];
            for j in 0..n {
                for i in 0..m {
                    let s: f64 = (0..k).map(|p| (av.at(i, p) * bv.at(p, j)).abs()).sum();
                    mag[i + j * m] = alpha * s + beta * c0;
                }
            }
            (c, mag)
        };
        let levels = [SimdLevel::Baseline, SimdLevel::Avx2, SimdLevel::Avx512];
        for &(m, n, k) in &[
            (9, 5, 257),
            (130, 70, 300),
            (50, 1000, 40),
            (300, 9, 600),
            (50, 50, 50),
            (23, 7, 3),
        ] {
            for &(ta, tb) in &[(false, false), (true, false), (false, true), (true, true)] {
                force_level(SimdLevel::Baseline);
                let (want, mag) = run(m, n, k, ta, tb);
                for &l in levels.iter().filter(|&&l| l <= detected_level()) {
                    force_level(l);
                    let (got, _) = run(m, n, k, ta, tb);
                    let (again, _) = run(m, n, k, ta, tb);
                    let bits =
                        |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<std::vec::Vec<_>>();
                    assert!(
                        bits(&got) == bits(&again),
                        "{l:?} not deterministic m{m} n{n} k{k}"
                    );
                    for (idx, ((g, w), s)) in got.iter().zip(&want).zip(&mag).enumerate() {
                        assert!(
                            (g - w).abs() <= 1e-12 * s,
                            "{l:?} m{m} n{n} k{k} ta{ta} tb{tb} at {idx}: {g} {w}"
                        );
                    }
                }
                force_level(SimdLevel::Avx512);
            }
        }
    }

    /// [`gemm_k`] on `X·Vᵀ` shapes it splits (and one it does not): within
    /// rounding of the plain sums, with α and β; the same bits on every pool
    /// (serial, 1–3 built-in threads, or none in no_std); the workspace of
    /// [`gemm_k_req`] is enough, and one that is short fails before C is written.
    #[test]
    fn gemm_k_splits_the_inner_dimension() {
        use crate::par::Parallel;
        for &(m, n, k, split) in &[
            (64, 20, 10_000, true),
            (75, 20, 6_000, true),
            (4, 3, 200_000, true),
            (300, 50, 1_000, false),
        ] {
            assert_eq!(k_split(m, n, k).0 > 1, split, "m{m} n{n} k{k}");
            let (tasks, chunk) = k_split(m, n, k);
            assert!(tasks == 1 || tasks % 2 == 0, "{tasks} tasks");
            assert!(tasks * chunk >= k && (tasks - 1) * chunk < k);
            let mut rng = Rng::new((m + n + k) as u64);
            let x: std::vec::Vec<f64> = (0..m * k).map(|_| rng.uniform()).collect();
            let v: std::vec::Vec<f64> = (0..n * k).map(|_| rng.uniform()).collect();
            let c0: std::vec::Vec<f64> = (0..m * n).map(|_| rng.uniform()).collect();
            let (a, b) = (operand(&x, m, k, false), operand(&v, k, n, true));
            let need = gemm_k_req::<f64>(m, n, k).bytes().unwrap();
            let run = |par: Parallel, bytes: usize| {
                let mut w = std::vec![0u8; bytes];
                let mut c = c0.clone();
                let cm = MatMut::col_major(&mut c, m, n).unwrap();
                let r = gemm_k(0.5, a, b, 2.0, cm, &mut Stack::new(&mut w).with_par(par));
                (r, c)
            };
            let (r, want) = run(Parallel::Serial, need);
            r.unwrap();
            for j in 0..n {
                for i in 0..m {
                    let s: f64 = (0..k).map(|p| a.at(i, p) * b.at(p, j)).sum();
                    let exact = 0.5 * s + 2.0 * c0[i + j * m];
                    let got = want[i + j * m];
                    assert!(
                        (got - exact).abs() <= 1e-13 * exact,
                        "({i},{j}) {got} {exact}"
                    );
                }
            }
            for par in [
                Parallel::Threads(1),
                Parallel::Threads(2),
                Parallel::Threads(3),
            ] {
                let (r, got) = run(par, need);
                r.unwrap();
                let bits = |c: &[f64]| c.iter().map(|x| x.to_bits()).collect::<std::vec::Vec<_>>();
                assert!(bits(&got) == bits(&want), "{par:?} m{m} n{n} k{k}");
            }
            if split {
                // Short of the need less the alignment slack: too small
                // however the buffer is aligned; C untouched.
                let (r, c) = run(Parallel::Serial, need - crate::work::ALIGN - 1);
                assert_eq!(r, Err(Error::WorkspaceTooSmall));
                assert!(c == c0);
            }
        }
    }

    #[test]
    fn gram_t_is_the_symmetric_product() {
        // k across the strip width (16), A plain and transposed (strided), β = 0 and 1.
        for &(m, k) in &[
            (1, 1),
            (5, 15),
            (40, 16),
            (40, 17),
            (300, 50),
            (9, 70),
            (0, 20),
        ] {
            for ta in [false, true] {
                for beta in [0.0, 1.0] {
                    let mut rng = Rng::new((m * 97 + k) as u64);
                    let a: std::vec::Vec<f64> = (0..m * k).map(|_| rng.uniform() - 0.3).collect();
                    let av = if ta {
                        MatRef::col_major(&a, k, m).unwrap().t()
                    } else {
                        MatRef::col_major(&a, m, k).unwrap()
                    };
                    // A symmetric starting C (required when β ≠ 0) with a NaN below the
                    // diagonal when β = 0 or the lower triangle is never read.
                    let mut c = std::vec![0.0; k * k];
                    for j in 0..k {
                        for i in 0..=j {
                            let x = rng.uniform();
                            c[i + j * k] = x;
                            c[j + i * k] = if i == j { x } else { f64::NAN };
                        }
                    }
                    let c0 = c.clone();
                    let need = gemm_req::<f64>(k, k, m).bytes().unwrap();
                    let mut w = std::vec![0u8; need];
                    let mut st = Stack::new(&mut w);
                    gram_t(av, beta, MatMut::col_major(&mut c, k, k).unwrap(), &mut st).unwrap();
                    for j in 0..k {
                        for i in 0..k {
                            let s: f64 = (0..m).map(|p| av.at(p, i) * av.at(p, j)).sum();
                            let (lo, hi) = (i.min(j), i.max(j));
                            let want = s + beta * c0[lo + hi * k];
                            let got = c[i + j * k];
                            assert!(
                                (want - got).abs() <= 1e-13 * (m as f64 + 1.0),
                                "m{m} k{k} ta{ta} β{beta} ({i},{j}) {want} {got}"
                            );
                            assert_eq!(got.to_bits(), c[j + i * k].to_bits(), "not symmetric");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn beta_zero_ignores_nan() {
        let a = [1.0, 2.0];
        let b = [3.0];
        let mut c = [f64::NAN, f64::NAN];
        let need = gemm_req::<f64>(2, 1, 1).bytes().unwrap();
        let mut w = std::vec![0u8; need];
        let mut st = Stack::new(&mut w);
        blocked::gemm(
            1.0,
            MatRef::col_major(&a, 2, 1).unwrap(),
            MatRef::col_major(&b, 1, 1).unwrap(),
            0.0,
            MatMut::col_major(&mut c, 2, 1).unwrap(),
            &mut st,
        )
        .unwrap();
        assert_eq!(c, [3.0, 6.0]);
    }

    /// `panel_dots` gives, for every shape (a column count that is not a multiple of four,
    /// rows of lengths with and without a tail past 8, panels with an offset), the bits of
    /// the documented order: eight partial sums, the tree, the tail in order (the
    /// four-column AVX-512 path and the one-value loop alike).
    #[test]
    fn panel_dots_bits_of_the_documented_order() {
        let mut rng = Rng::new(11);
        for &(ld, o, m) in &[
            (649, 0, 649),
            (20, 3, 16),
            (20, 0, 7),
            (13, 2, 11),
            (5, 0, 0),
        ] {
            let (nr, nc_max) = (3, 9);
            let xs: std::vec::Vec<f64> = (0..nr * ld).map(|_| rng.uniform() - 0.4).collect();
            let ys: std::vec::Vec<f64> = (0..nc_max * ld).map(|_| rng.uniform() - 0.4).collect();
            for nc in 0..=nc_max {
                let mut out = std::vec![7.0f64; nr * nc];
                panel_dots(&xs, &ys, (o, m, ld), nr, nc, &mut out);
                for b in 0..nc {
                    for a in 0..nr {
                        let x = &xs[a * ld + o..a * ld + o + m];
                        let y = &ys[b * ld + o..b * ld + o + m];
                        let mut s = [0.0f64; 8];
                        for f in 0..m / 8 * 8 {
                            s[f % 8] += x[f] * y[f];
                        }
                        let mut r =
                            ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
                        for f in m / 8 * 8..m {
                            r += x[f] * y[f];
                        }
                        assert_eq!(
                            out[a + b * nr].to_bits(),
                            r.to_bits(),
                            "m {m} nc {nc} ({a}, {b})"
                        );
                    }
                }
            }
        }
    }
}
