//! Block evaluation of the per-view and fused kernels, and the block traversals.
//!
//! A block is `K(rows[a], cols[b])` for two short index lists (at most `b` items each), stored
//! column-major `nr × nc`. Dense linear and RBF views are *gathered* into two panels (the rows'
//! items and the columns' items, one column per item, the views stacked): in the fused mode the
//! active linear views are pre-scaled (`η_v / ‖x_i‖` on the row side, `1 / ‖x_j‖` on the column
//! side) so that their whole contribution is **one** GEMM `P_rowsᵀ P_cols`; each dense RBF view is
//! one GEMM of raw inner products turned into `η_v exp(−γ(‖x_i‖² + ‖x_j‖² − 2x_iᵀx_j))`; χ² and
//! intersection views are loops over the features, CSC views scatter one column into a dense
//! buffer and walk the other column's nonzeros. Diagonal entries (`rows[a] == cols[b]`) are
//! whatever the formula gives: the consumers ([`Sink`]s) never read them.
//!
//! Traversals: [`Engine::sym`] visits every unordered pair of a set once (blocks on and above the
//! diagonal), [`Engine::rect`] every (query, candidate) pair of two sets.

use super::{Bandwidth, Kernel, KernelSet, Layout};
use crate::data::{View, ViewSet};
use crate::error::{Error, Part};
use crate::linalg::mat::{MatMut, MatRef};
use crate::linalg::microk::prefetch;
use crate::linalg::real::Real;
use crate::linalg::{gemm, gemm_req};
use crate::par::{chunk_len, pieces_mut, tasks_for, Counted, Parallel};
use crate::work::{Slots, Stack, WorkReq};

/// What a block holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `Σ_v η_v K_v` (one block).
    Fused,
    /// `K_v` for every view (`H` consecutive blocks of `nr·nc`).
    PerView,
    /// Raw squared distances `‖x_i − x_j‖²` of one view (one block).
    SqDist(usize),
}

/// Where a visited block lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Block {
    /// `rows == cols` (the same items): only the pairs `a < b` are new.
    Diag,
    /// Two disjoint parts of the same set: every `(a, b)` is a new unordered pair.
    Off,
    /// Queries × candidates: every `(a, b)` with `rows[a] != cols[b]` is a (query, candidate) pair.
    Rect,
}

/// Consumes blocks.
pub(crate) trait Sink<T> {
    /// `blk[a + b·nr]` is the value for `(rows[a], cols[b])` (per-view mode: view `v` at
    /// offset `v·nr·nc`).
    fn visit(&mut self, rows: &[usize], cols: &[usize], blk: &[T], shape: Block);
}

impl<T, S: Sink<T> + ?Sized> Sink<T> for &mut S {
    fn visit(&mut self, rows: &[usize], cols: &[usize], blk: &[T], shape: Block) {
        (**self).visit(rows, cols, blk, shape);
    }
}

const NOT_IN_PANEL: usize = usize::MAX;
/// Items ahead whose columns [`Engine::gather`] prefetches (random items' columns: the
/// lists of NN-descent and of the sampled set-up passes).
const GATHER_AHEAD: usize = 4;

/// The evaluator: per-view normalisation scales, `γ`s, weights, panels and scratch.
pub(crate) struct Engine<'a, 'w, T, VS: ?Sized> {
    views: &'a VS,
    /// Kernel of each view (codes of [`kind_code`]).
    kind: &'w mut [u8],
    n: usize,
    h: usize,
    /// Resolved `γ` per view (0 for non-RBF views; NaN until a median is resolved).
    pub(crate) gamma: &'w mut [f64],
    weight: &'w mut [f64],
    /// Per view, the power of two `2^−e` every value is multiplied by before use (see
    /// [`view_inv_scale`]): 1 for ordinary data, so that the results are bitwise those of
    /// the unscaled formulas.
    inv: &'w mut [f64],
    /// `H × N`: linear `1/‖x‖`, RBF `‖x‖²`, χ²/intersection `1/√Σx` (0 for an all-zero item).
    scale: &'w mut [f64],
    off: &'w mut [usize],
    active: &'w mut [u8],
    mode: Mode,
    ld: usize,
    lin_rows: usize,
    bmax: usize,
    rpan: &'w mut [T],
    cpan: &'w mut [T],
    tmp: &'w mut [T],
    scat: &'w mut [T],
    gst: Stack<'w>,
    /// Panel products by one [`crate::linalg::dot`] per value instead of a GEMM (see
    /// [`Engine::set_direct`]).
    direct: bool,
    /// The rows' panel is the first columns of the columns' panel ([`Engine::block_prefix`]).
    rows_in_cols: bool,
}

/// Workspace of [`Engine::new`] for blocks of at most `b` items.
pub(crate) fn workspace<T>(lay: &Layout, b: usize) -> WorkReq {
    WorkReq::all_of(&[
        WorkReq::new::<f64>(lay.h),
        WorkReq::new::<f64>(lay.h),
        WorkReq::new::<f64>(lay.h),
        WorkReq::matrix::<f64>(lay.h, lay.n),
        WorkReq::new::<usize>(lay.h),
        WorkReq::new::<u8>(lay.h),
        WorkReq::new::<u8>(lay.h),
        WorkReq::matrix::<T>(lay.panel_rows, b),
        WorkReq::matrix::<T>(lay.panel_rows, b),
        WorkReq::matrix::<T>(b, b),
        WorkReq::new::<T>(lay.scatter_rows),
        gemm_req::<T>(b, b, lay.panel_rows),
    ])
}

const LIN: u8 = 0;
const RBF: u8 = 1;
const CHI: u8 = 2;
const INTER: u8 = 3;

fn kind_code(k: &Kernel) -> u8 {
    match k {
        Kernel::Linear => LIN,
        Kernel::Rbf(_) => RBF,
        Kernel::ChiSquared => CHI,
        Kernel::Intersection => INTER,
    }
}

/// Largest `|x|` of a view whose values need no scaling: `2^448`. With every `|x| ≤ 2^449`
/// (after scaling: `< 2`) and at most `2^64` features, `‖x‖²`, `‖x − y‖² ≤ 4‖x‖²`, `xᵀy` and
/// the χ² terms `2xy` stay far below `f64::MAX` (`2^1024`), so every kernel value is finite.
const SCALE_HI: f64 = 7.268387242956069e134; // 2^448
/// Smallest largest-`|x|` of a view that needs no scaling (`2^−448`): below it `d²` could
/// underflow to subnormals or 0 and the median bandwidth `1/median(d²)` overflow.
const SCALE_LO: f64 = 1.3758210268297284e-135; // 2^-448

/// The factor `2^−e` that brings a view with largest magnitude `amax` to `[1, 2)`, or 1
/// when `amax` is in `[2^−448, 2^448]` (or 0).
///
/// **Why (issue 15, D1):** on finite data near `1e299` the squared distances overflowed to
/// `+inf`, the median rule then gave `γ = 1/inf = 0`, `0 · inf` made the RBF values NaN and
/// kernel–target alignment ended in an internal error. Every normalised kernel here is
/// invariant to scaling a view by a constant (linear: a cosine; χ², intersection: homogeneous
/// of degree 1, normalised; RBF with the median bandwidth: `d²/median(d²)`), and an RBF with a
/// given `γ` is the same kernel on the scaled data with `γ·s²`. So each view is evaluated as
/// `x · 2^−e` (exact: a power of two) with `γ` in the scaled units, and every kernel value
/// is finite for every finite input. Data inside the bounds is not touched (factor 1), so
/// ordinary results do not change by a bit.
pub(crate) fn view_inv_scale(amax: f64) -> f64 {
    if !(amax > SCALE_HI || (amax > 0.0 && amax < SCALE_LO)) {
        return 1.0;
    }
    let e = ((amax.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    libm::scalbn(1.0, -e)
}

/// The largest `|x|` of a view (0 for an all-zero view).
pub(crate) fn view_max<T: Real>(view: View<'_, T>) -> f64 {
    view_max_of(view, 0..view.shape().cols)
}

/// The largest `|x|` of the items `items` of a view (0 if all are zero).
fn view_max_of<T: Real>(view: View<'_, T>, items: core::ops::Range<usize>) -> f64 {
    let amax = |vals: &[T]| {
        vals.iter()
            .fold(0.0f64, |m, x| m.max(libm::fabs(x.to_f64())))
    };
    match view {
        View::Dense(d) => items.fold(0.0f64, |m, j| m.max(amax(d.col(j)))),
        View::Csc(c) => items.fold(0.0f64, |m, j| m.max(amax(c.col(j).1))),
    }
}

/// [`view_max`] in tasks on `par` (fixed by the view's shape): the largest of the tasks'
/// largest values, which is the same number whatever the split (a maximum of finite
/// values does not depend on the order it is taken in).
fn view_max_par<T: Real>(view: View<'_, T>, par: Parallel) -> Result<f64, Error> {
    let s = view.shape();
    let n = s.cols;
    let per = s.rows.max(1);
    let tasks = tasks_for(n, per);
    if tasks <= 1 || par.is_serial() {
        return Ok(view_max(view));
    }
    let chunk = chunk_len(n, tasks, 1);
    let mut maxes = [0.0f64; crate::par::MAX_TASKS];
    let items = Counted::new(pieces_mut(&mut maxes[..tasks], 1).enumerate(), tasks);
    par.run_items(items, &|(t, m)| {
        let lo = (t * chunk).min(n);
        let hi = (lo + chunk).min(n);
        if let Some(m) = m.first_mut() {
            *m = view_max_of(view, lo..hi);
        }
        Ok(())
    })?;
    Ok(maxes.iter().take(tasks).fold(0.0f64, |m, &x| m.max(x)))
}

/// Fills `sc` (`N` values) with the per-item scales of view `view` (factor `inv`), in
/// tasks on `par` fixed by the view's shape: each item's scale is computed alone, so the
/// values are the same bits on every pool.
fn item_scales<T: Real>(
    kern: &Kernel,
    view: View<'_, T>,
    inv: f64,
    sc: &mut [f64],
    par: Parallel,
) -> Result<(), Error> {
    let s = view.shape();
    let n = sc.len();
    // The pieces of `chunk` items (fewer than the shape's tasks when `N` is small:
    // 9 items in 4 tasks are 3 pieces of 3), one task each.
    let chunk = chunk_len(n, tasks_for(n, s.rows.max(1)), 1);
    let tasks = n.div_ceil(chunk);
    let fill = |lo: usize, part: &mut [f64]| match view {
        View::Dense(d) => {
            for (j, s) in part.iter_mut().enumerate() {
                *s = item_scale(kern, d.col(lo + j), inv);
            }
        }
        View::Csc(c) => {
            for (j, s) in part.iter_mut().enumerate() {
                *s = item_scale(kern, c.col(lo + j).1, inv);
            }
        }
    };
    if tasks <= 1 || par.is_serial() {
        fill(0, sc);
        return Ok(());
    }
    let items = Counted::new(pieces_mut(sc, chunk).enumerate(), tasks);
    par.run_items(items, &|(t, part)| {
        fill(t * chunk, part);
        Ok(())
    })
}

/// Smallest `‖x‖²` taken as it is for the linear kernel's `1/‖x‖`: from `2^−1014` down, the
/// squares that underflowed could matter in the 60th bit or above.
const LINEAR_SS_MIN: f64 = f64::from_bits(9 << 52); // 2^-1014 (biased exponent 1023 - 1014)

/// Largest `s_i · s_j` (`1/‖x_i‖ · 1/‖x_j‖`) for which a CSC linear value is `xᵀy · s_i s_j`:
/// below it an underflowed part of `xᵀy` (at most ~`2^−1074` per term) stays below `2^−114`
/// of the cosine. `2^960`.
const LINEAR_SCALE_PRODUCT_MAX: f64 = f64::from_bits((1023 + 960) << 52);

/// Per-item normalisation scale of one column (see [`Engine::scale`]), of the values times
/// `inv` (see [`view_inv_scale`]).
fn item_scale<T: Real>(kernel: &Kernel, vals: &[T], inv: f64) -> f64 {
    let sq = || {
        if inv == 1.0 {
            crate::linalg::sq_norm(vals)
        } else {
            vals.iter()
                .map(|x| {
                    let y = x.to_f64() * inv;
                    y * y
                })
                .sum()
        }
    };
    match kernel {
        Kernel::Linear => {
            let ss = sq();
            if (LINEAR_SS_MIN..=f64::MAX).contains(&ss) {
                1.0 / libm::sqrt(ss)
            } else if ss > 0.0 || vals.iter().any(|x| x.to_f64() != 0.0) {
                // Squares near or below the subnormal range lose their precision (a cosine
                // of 1.0000034 between items of values ~1e-160, found by the fuzz driver,
                // issue 15): the norm of the column scaled by its largest entry instead.
                let m = vals
                    .iter()
                    .fold(0.0f64, |m, x| m.max(libm::fabs(x.to_f64() * inv)));
                let r: f64 = vals
                    .iter()
                    .map(|x| {
                        let y = x.to_f64() * inv / m;
                        y * y
                    })
                    .sum();
                let f = 1.0 / (m * libm::sqrt(r));
                if f.is_finite() {
                    f
                } else {
                    0.0
                }
            } else {
                0.0
            }
        }
        Kernel::Rbf(_) => sq(),
        Kernel::ChiSquared | Kernel::Intersection => {
            let s: f64 = vals.iter().map(|x| x.to_f64() * inv).sum();
            if s > 0.0 && s.is_finite() {
                1.0 / libm::sqrt(s)
            } else {
                0.0
            }
        }
    }
}

impl<'a, 'w, T: Real, VS: ViewSet<T> + ?Sized> Engine<'a, 'w, T, VS> {
    /// Carves its buffers from `st` (the remainder is the GEMM's scratch), computes the
    /// per-item scales (`O(nnz)`), and starts in [`Mode::PerView`]. Inputs validated already.
    pub(crate) fn new<KS: KernelSet + ?Sized>(
        views: &'a VS,
        kernels: &KS,
        lay: &Layout,
        b: usize,
        st: Stack<'w>,
    ) -> Result<Self, Error> {
        Self::new_with(views, kernels, lay, b, st, None)
    }

    /// [`Engine::new`] with the pass over the data (the views' largest values and the
    /// per-item scales) in tasks on `par`, fixed by the views' shapes: the same values,
    /// bit for bit, on every pool. For the one evaluator of a phase that runs on a pool
    /// (not for the evaluators inside a parallel region's tasks).
    pub(crate) fn new_par<KS: KernelSet + ?Sized>(
        views: &'a VS,
        kernels: &KS,
        lay: &Layout,
        b: usize,
        st: Stack<'w>,
        par: Parallel,
    ) -> Result<Self, Error> {
        Self::new_inner(views, kernels, lay, b, st, (None, par), true)
    }

    /// [`Engine::new`] without the per-item scales and the views' factors (no pass over the
    /// data): they must be copied from an engine over the same views ([`Engine::copy_scales`])
    /// before a value is computed. For the second and later engines of a parallel search.
    pub(crate) fn new_bare<KS: KernelSet + ?Sized>(
        views: &'a VS,
        kernels: &KS,
        lay: &Layout,
        b: usize,
        st: Stack<'w>,
    ) -> Result<Self, Error> {
        Self::new_inner(views, kernels, lay, b, st, (None, Parallel::Serial), false)
    }

    /// Copies the per-item scales, the views' factors and the `γ`s of `from` (an engine over
    /// the same views and kernels): the same values as computing them.
    pub(crate) fn copy_scales(&mut self, from: &Engine<'_, '_, T, VS>) -> Result<(), Error> {
        self.copy_scales_from(from.scale, from.inv, from.gamma)
    }

    /// [`Engine::copy_scales`] from the parts of an engine (its [`Engine::scale_parts`]).
    fn copy_scales_from(&mut self, scale: &[f64], inv: &[f64], gamma: &[f64]) -> Result<(), Error> {
        self.scale.copy_checked(scale)?;
        self.inv.copy_checked(inv)?;
        self.gamma.copy_checked(gamma)
    }

    /// The per-item scales (`H × N`) and the views' factors, for [`PartCtx`].
    pub(crate) fn scale_parts(&self) -> (&[f64], &[f64]) {
        (self.scale, self.inv)
    }

    /// [`Engine::new`] with each view's factor `2^−e` ([`view_inv_scale`]) given: the one of
    /// a larger set of items than `views` holds (a distributed build evaluates blocks of
    /// all items a few at a time: with the factors of all of them, every value is the one
    /// the engine over all items computes).
    pub(crate) fn new_with<KS: KernelSet + ?Sized>(
        views: &'a VS,
        kernels: &KS,
        lay: &Layout,
        b: usize,
        st: Stack<'w>,
        given_inv: Option<&[f64]>,
    ) -> Result<Self, Error> {
        Self::new_inner(
            views,
            kernels,
            lay,
            b,
            st,
            (given_inv, Parallel::Serial),
            true,
        )
    }

    fn new_inner<KS: KernelSet + ?Sized>(
        views: &'a VS,
        kernels: &KS,
        lay: &Layout,
        b: usize,
        mut st: Stack<'w>,
        (given_inv, par): (Option<&[f64]>, Parallel),
        compute: bool,
    ) -> Result<Self, Error> {
        let (n, h) = (lay.n, lay.h);
        let gamma: &mut [f64] = st.take(h)?;
        let weight: &mut [f64] = st.take(h)?;
        let inv: &mut [f64] = st.take(h)?;
        let scale: &mut [f64] = st.take_matrix(h, n)?;
        let off: &mut [usize] = st.take(h)?;
        let active: &mut [u8] = st.take(h)?;
        let kind: &mut [u8] = st.take(h)?;
        let rpan: &mut [T] = st.take_matrix(lay.panel_rows, b)?;
        let cpan: &mut [T] = st.take_matrix(lay.panel_rows, b)?;
        let tmp: &mut [T] = st.take_matrix(b, b)?;
        let scat: &mut [T] = st.take(lay.scatter_rows)?;
        scat.fill(T::ZERO);
        let per_view = kind.iter_mut().zip(inv.iter_mut()).zip(gamma.iter_mut());
        for (v, ((kind, inv), gamma)) in per_view.enumerate() {
            let kern = &kernels.kernel(v);
            *kind = kind_code(kern);
            *inv = match given_inv {
                Some(g) => g.at(v)?,
                None if compute => view_inv_scale(view_max_par(views.view(v), par)?),
                None => 1.0,
            };
            // NaN marks a median view until `median::resolve` sets it. A given `γ` in the
            // scaled units: `γ·s²` (may overflow to +inf: see `rbf_value`).
            *gamma = match kern {
                Kernel::Rbf(Bandwidth::Gamma(g)) => *g / *inv / *inv,
                Kernel::Rbf(Bandwidth::Median) => f64::NAN,
                _ => 0.0,
            };
            let sc = scale.get_mut(v * n..(v + 1) * n).ok_or(Error::Internal)?;
            if !compute {
                sc.fill(0.0);
                continue;
            }
            item_scales(kern, views.view(v), *inv, sc, par)?;
        }
        let mut e = Engine {
            views,
            kind,
            n,
            h,
            gamma,
            weight,
            inv,
            scale,
            off,
            active,
            mode: Mode::PerView,
            ld: 0,
            lin_rows: 0,
            bmax: b,
            rpan,
            cpan,
            tmp,
            scat,
            gst: st,
            direct: false,
            rows_in_cols: false,
        };
        e.set_mode(Mode::PerView, None);
        Ok(e)
    }

    /// Does view `v` still wait for its median bandwidth?
    pub(crate) fn needs_median(&self, v: usize) -> bool {
        self.kind.get(v) == Some(&RBF) && self.gamma.get(v).is_some_and(|g| g.is_nan())
    }

    /// View `v`'s `γ` in the caller's units (`γ` is kept in the units of the scaled view,
    /// see [`view_inv_scale`]; for a very large or very small view this may underflow or
    /// overflow, which only matters to a caller that asks for the number).
    pub(crate) fn gamma_unscaled(&self, v: usize) -> f64 {
        match (self.gamma.get(v), self.inv.get(v)) {
            (Some(&g), Some(&inv)) => g * inv * inv,
            _ => f64::NAN,
        }
    }

    /// View `v`'s per-item scales (`N` values; empty for a view it does not have).
    #[inline]
    fn scales(&self, v: usize) -> &[f64] {
        self.scale
            .get(v * self.n..(v + 1) * self.n)
            .unwrap_or_default()
    }

    /// Views.
    pub(crate) fn views(&self) -> usize {
        self.h
    }

    /// Switches mode. `eta` (validated, positive sum) is required for [`Mode::Fused`].
    pub(crate) fn set_mode(&mut self, mode: Mode, eta: Option<&[f64]>) {
        self.mode = mode;
        match (mode, eta) {
            (Mode::Fused, Some(eta)) => {
                let s: f64 = eta.iter().sum();
                for ((w, a), &e) in self.weight.iter_mut().zip(self.active.iter_mut()).zip(eta) {
                    *w = e / s;
                    *a = (*w > 0.0) as u8;
                }
            }
            (Mode::SqDist(u), _) => {
                let per_view = self.weight.iter_mut().zip(self.active.iter_mut());
                for (v, (w, a)) in per_view.enumerate() {
                    *w = 1.0;
                    *a = (v == u) as u8;
                }
            }
            _ => {
                self.weight.fill(1.0);
                self.active.fill(1);
            }
        }
        // Panel layout: active dense linear views first (one stacked GEMM when fused), then
        // active dense RBF views (and the SqDist view if dense).
        self.off.fill(NOT_IN_PANEL);
        let mut ld = 0;
        for pass in 0..2 {
            let per_view = self
                .active
                .iter()
                .zip(self.kind.iter())
                .zip(self.off.iter_mut());
            for (v, ((&active, &kind), off)) in per_view.enumerate() {
                if active == 0 || !matches!(self.views.view(v), View::Dense(_)) {
                    continue;
                }
                let lin = kind == LIN;
                let take = match mode {
                    Mode::SqDist(_) => pass == 0,
                    _ => (pass == 0 && lin) || (pass == 1 && kind == RBF),
                };
                if take {
                    *off = ld;
                    ld += self.views.shape(v).rows;
                }
            }
            if pass == 0 {
                self.lin_rows = if matches!(mode, Mode::SqDist(_)) {
                    0
                } else {
                    ld
                };
            }
        }
        self.ld = ld;
    }

    /// Computes every panel product value by value (`linalg::panel_dots`: eight partial
    /// sums in `f64`, vectorised at run time) instead of one GEMM per block: for the many tiny blocks of the
    /// approximate search (a few rows and columns), where a GEMM call costs more than its
    /// arithmetic. A value then no longer depends on the block's shape (the same bits
    /// whichever side each item is on). Off by default: the exact search keeps its GEMMs.
    pub(crate) fn set_direct(&mut self, on: bool) {
        self.direct = on;
    }

    /// Gathers the panel of `items` (row side when `rows`).
    fn gather(&mut self, items: &[usize], rows: bool) {
        let ld = self.ld;
        if ld == 0 {
            return;
        }
        let pan: &mut [T] = if rows {
            &mut *self.rpan
        } else {
            &mut *self.cpan
        };
        let per_view = self.off.iter().zip(self.kind.iter()).zip(self.inv.iter());
        let per_view = per_view
            .zip(self.weight.iter())
            .zip(self.scale.chunks_exact(self.n.max(1)));
        for (v, ((((&o, &kind), &inv), &weight), sc)) in per_view.enumerate() {
            if o == NOT_IN_PANEL {
                continue;
            }
            let View::Dense(d) = self.views.view(v) else {
                continue;
            };
            let lin = kind == LIN && self.mode != Mode::SqDist(v);
            let m = d.rows_len();
            let tinv = T::from_f64(inv);
            // The first columns ahead; then each column `GATHER_AHEAD` items ahead.
            for &j in items.iter().take(GATHER_AHEAD) {
                prefetch(d.col(j));
            }
            // Item `a`'s panel column, from row `o` on (`ld > 0` here).
            for (t, (col, &j)) in pan.chunks_exact_mut(ld.max(1)).zip(items).enumerate() {
                if let Some(&ja) = items.get(t + GATHER_AHEAD) {
                    prefetch(d.col(ja));
                }
                let Some(dst) = col.get_mut(o..o + m) else {
                    continue;
                };
                let src = d.col(j);
                if lin {
                    // Fused: `√w` on both sides, so that the value of a pair is bitwise the
                    // same whichever side each item is on (products commute; the sum over
                    // features runs in one order). Exact ties then stay exact ties.
                    let s = sc.get(j).copied().unwrap_or(0.0);
                    let f = if self.mode == Mode::Fused {
                        libm::sqrt(weight) * s
                    } else {
                        s
                    };
                    let f = T::from_f64(f);
                    if inv == 1.0 {
                        for (x, &y) in dst.iter_mut().zip(src) {
                            *x = y * f;
                        }
                    } else {
                        for (x, &y) in dst.iter_mut().zip(src) {
                            *x = (y * tinv) * f;
                        }
                    }
                } else if inv == 1.0 {
                    if dst.len() == src.len() {
                        dst.copy_from_slice(src);
                    }
                } else {
                    for (x, &y) in dst.iter_mut().zip(src) {
                        *x = y * tinv;
                    }
                }
            }
        }
    }

    /// `out = A_rowsᵀ A_cols` over panel rows `o..o+m` (`nr × nc`, column-major).
    fn panel_gemm(
        &mut self,
        o: usize,
        m: usize,
        nr: usize,
        nc: usize,
        to_tmp: bool,
        out: &mut [T],
    ) -> Result<(), Error> {
        let ld = self.ld;
        if self.direct {
            let out = if to_tmp {
                self.tmp.get_mut(..nr * nc).unwrap_or_default()
            } else {
                out.get_mut(..nr * nc).unwrap_or_default()
            };
            let rpan: &[T] = if self.rows_in_cols {
                self.cpan
            } else {
                self.rpan
            };
            crate::linalg::panel_dots(rpan, self.cpan, (o, m, ld), nr, nc, out);
            return Ok(());
        }
        let a = MatRef::new(self.rpan.get(o..).unwrap_or_default(), m, nr, 1, ld)?.t();
        let b = MatRef::new(self.cpan.get(o..).unwrap_or_default(), m, nc, 1, ld)?;
        let c = if to_tmp {
            MatMut::col_major(self.tmp.get_mut(..nr * nc).unwrap_or_default(), nr, nc)?
        } else {
            MatMut::col_major(out.get_mut(..nr * nc).unwrap_or_default(), nr, nc)?
        };
        gemm(T::ONE, a, b, T::ZERO, c, &mut self.gst)
    }

    /// Evaluates the block `rows × cols` into `out` (panels loaded by the traversal).
    fn eval(&mut self, rows: &[usize], cols: &[usize], out: &mut [T]) -> Result<(), Error> {
        let (nr, nc) = (rows.len(), cols.len());
        let sz = nr * nc;
        let first = out.part_mut(..sz)?;
        match self.mode {
            Mode::Fused => {
                let blk = first;
                if self.lin_rows > 0 {
                    let l = self.lin_rows;
                    self.panel_gemm(0, l, nr, nc, false, blk)?;
                } else {
                    blk.fill(T::ZERO);
                }
                for v in 0..self.h {
                    let (Some(&active), Some(&kind)) = (self.active.get(v), self.kind.get(v))
                    else {
                        return Err(Error::Internal);
                    };
                    if active == 0 {
                        continue;
                    }
                    let lin_dense = kind == LIN && matches!(self.views.view(v), View::Dense(_));
                    if !lin_dense {
                        self.view_block(v, rows, cols, true, blk)?;
                    }
                }
            }
            Mode::PerView => {
                for v in 0..self.h {
                    let blk = out.get_mut(v * sz..(v + 1) * sz).ok_or(Error::Internal)?;
                    self.view_block(v, rows, cols, false, blk)?;
                }
            }
            Mode::SqDist(v) => self.view_block(v, rows, cols, false, first)?,
        }
        Ok(())
    }

    /// One view's block: `out (+)= w·K_v` (or raw `d²` in SqDist mode).
    fn view_block(
        &mut self,
        v: usize,
        rows: &[usize],
        cols: &[usize],
        acc: bool,
        out: &mut [T],
    ) -> Result<(), Error> {
        let (nr, nc) = (rows.len(), cols.len());
        let raw = self.mode == Mode::SqDist(v);
        let per_view = (
            self.weight.get(v),
            self.kind.get(v),
            self.off.get(v),
            self.gamma.get(v),
            self.inv.get(v),
        );
        let (Some(&w), Some(&kern), Some(&o), Some(&gamma), Some(&inv)) = per_view else {
            return Err(Error::Internal);
        };
        let view = self.views.view(v);
        // Rows of `out` per column (`max(1)`: an empty block has no rows to walk).
        let nr1 = nr.max(1);
        match view {
            View::Dense(d) => {
                let m = d.rows_len();
                match kern {
                    _ if raw || kern == RBF => {
                        self.panel_gemm(o, m, nr, nc, true, out)?;
                        let sq = self.scales(v);
                        let dots = self.tmp.part(..nr * nc)?;
                        rbf_finish(dots, rows, cols, sq, gamma, w, raw, acc, out);
                    }
                    LIN => {
                        // Per-view mode only (fused linear views are stacked): scales in the panels.
                        self.panel_gemm(o, m, nr, nc, false, out)?;
                    }
                    _ => {
                        let sc = self.scales(v);
                        let chi = kern == CHI;
                        for (col, &j) in out.chunks_exact_mut(nr1).zip(cols) {
                            let y = d.col(j);
                            let Some(&sj) = sc.get(j) else { break };
                            for (dst, &i) in col.iter_mut().zip(rows) {
                                let Some(&si) = sc.get(i) else { break };
                                let x = d.col(i);
                                let s = if chi {
                                    chi2(x, y, inv)
                                } else {
                                    inter(x, y, inv)
                                };
                                put(dst, w * normalised(s, si, sj), acc);
                            }
                        }
                    }
                }
            }
            View::Csc(c) => {
                let sc = self
                    .scale
                    .get(v * self.n..(v + 1) * self.n)
                    .unwrap_or_default();
                let scat = &mut *self.scat;
                let tinv = T::from_f64(inv);
                for (col, &j) in out.chunks_exact_mut(nr1).zip(cols) {
                    let (ri, rv) = c.col(j);
                    for (&r, &x) in ri.iter().zip(rv) {
                        if let Some(s) = scat.get_mut(r) {
                            *s = x * tinv;
                        }
                    }
                    // The scattered column; every row of the view is inside it (a
                    // nonzero outside would end the sum: the same test as indexing).
                    let held = &*scat;
                    let Some(&sj) = sc.get(j) else { break };
                    for (dst, &i) in col.iter_mut().zip(rows) {
                        let Some(&si) = sc.get(i) else { break };
                        let (qi, qv) = c.col(i);
                        let val = match kern {
                            LIN | RBF => {
                                let mut dot = 0.0;
                                for (&r, &x) in qi.iter().zip(qv) {
                                    let Some(y) = held.get(r) else { break };
                                    dot += (x.to_f64() * inv) * y.to_f64();
                                }
                                if raw || kern == RBF {
                                    rbf_value(si + sj - 2.0 * dot, gamma, raw)
                                } else if si * sj < LINEAR_SCALE_PRODUCT_MAX {
                                    normalised(dot, si, sj)
                                } else {
                                    // Items so small that `xᵀy` may have underflowed into
                                    // the subnormals (a cosine of 1.000000013 between items
                                    // of 1e-44 and 1e-272, fuzz driver): the products of the
                                    // normalised values instead, as the dense panels do.
                                    let mut cos = 0.0;
                                    for (&r, &x) in qi.iter().zip(qv) {
                                        let Some(y) = held.get(r) else { break };
                                        cos += (x.to_f64() * inv * si) * (y.to_f64() * sj);
                                    }
                                    cos
                                }
                            }
                            CHI => {
                                let mut s = 0.0;
                                for (&r, &x) in qi.iter().zip(qv) {
                                    let Some(y) = held.get(r) else { break };
                                    let (x, y) = (x.to_f64() * inv, y.to_f64());
                                    let d = x + y;
                                    if d > 0.0 {
                                        s += chi2_term(x, y, d);
                                    }
                                }
                                normalised(s, si, sj)
                            }
                            _ => {
                                let mut s = 0.0;
                                for (&r, &x) in qi.iter().zip(qv) {
                                    let Some(y) = held.get(r) else { break };
                                    let (x, y) = (x.to_f64() * inv, y.to_f64());
                                    s += if x < y { x } else { y };
                                }
                                normalised(s, si, sj)
                            }
                        };
                        put(dst, w * val, acc);
                    }
                    for &r in ri {
                        if let Some(s) = scat.get_mut(r) {
                            *s = T::ZERO;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Evaluates the block `rows × cols` into `blk` (`nr·nc` values, as a traversal
    /// would hand it to a sink; at most `b` items each).
    pub(crate) fn block(
        &mut self,
        rows: &[usize],
        cols: &[usize],
        blk: &mut [T],
    ) -> Result<(), Error> {
        self.gather(rows, true);
        self.gather(cols, false);
        self.eval(rows, cols, blk)
    }

    /// [`Engine::block`] with the rows `cols[..nr]`: in the direct mode
    /// ([`Engine::set_direct`]) their panel is not gathered a second time.
    pub(crate) fn block_prefix(
        &mut self,
        cols: &[usize],
        nr: usize,
        blk: &mut [T],
    ) -> Result<(), Error> {
        let rows = cols.get(..nr).ok_or(Error::Internal)?;
        if !self.direct {
            return self.block(rows, cols, blk);
        }
        self.gather(cols, false);
        self.rows_in_cols = true;
        let r = self.eval(rows, cols, blk);
        self.rows_in_cols = false;
        r
    }

    /// Visits every unordered pair of `items` once: blocks `(I, J)` with `J ≥ I`.
    /// `blk` holds at least `bmax²` values (a block of pairs).
    pub(crate) fn sym<S: Sink<T>>(
        &mut self,
        items: &[usize],
        blk: &mut [T],
        sink: &mut S,
    ) -> Result<(), Error> {
        self.sym_part(items, blk, sink, (0, 1))
    }

    /// The part of [`Engine::sym`] that task `t` of `tasks` owns: the block
    /// rows `bi` with [`block_row_owner`]`(bi, tasks) == t` (every block
    /// `(bi, bj ≥ bi)` of them). The parts of all tasks visit every pair once.
    pub(crate) fn sym_part<S: Sink<T>>(
        &mut self,
        items: &[usize],
        blk: &mut [T],
        sink: &mut S,
        (t, tasks): (usize, usize),
    ) -> Result<(), Error> {
        let b = self.bmax.max(1);
        let mine = items.chunks(b).enumerate();
        for (bi, rows) in mine.filter(|&(bi, _)| block_row_owner(bi, tasks) == t) {
            self.gather(rows, true);
            for (bj, cols) in items.chunks(b).enumerate().skip(bi) {
                self.gather(cols, false);
                self.eval(rows, cols, blk)?;
                let shape = if bi == bj { Block::Diag } else { Block::Off };
                sink.visit(rows, cols, blk, shape);
            }
        }
        Ok(())
    }

    /// Visits every (query, candidate) pair of `queries × cands` (self pairs included in the
    /// block; sinks skip them).
    pub(crate) fn rect<S: Sink<T>>(
        &mut self,
        queries: &[usize],
        cands: &[usize],
        blk: &mut [T],
        sink: &mut S,
    ) -> Result<(), Error> {
        let b = self.bmax.max(1);
        for rows in queries.chunks(b) {
            self.gather(rows, true);
            for cols in cands.chunks(b) {
                self.gather(cols, false);
                self.eval(rows, cols, blk)?;
                sink.visit(rows, cols, blk, Block::Rect);
            }
        }
        Ok(())
    }
}

/// Most parts of a symmetric traversal run in parallel ([`sym_in_parts`]):
/// each holds its own evaluator and sink, so the workspace grows by that much
/// per part.
pub(crate) const MAX_PARTS: usize = 4;

/// The parts of [`Engine::sym`] over `n` items in blocks of `b`: the block
/// rows dealt to at most [`MAX_PARTS`] parts, from the shape alone (so every
/// pool gives the same result); 0 for a single block row (no parts: the
/// serial traversal).
pub(crate) fn part_count(n: usize, b: usize) -> usize {
    let t = n.div_ceil(b.max(1)).min(MAX_PARTS);
    if t > 1 {
        t
    } else {
        0
    }
}

/// One part's workspace for [`sym_in_parts`]: its sink's storage
/// (`sink_req`), its block of `blk_len` values and its evaluator.
pub(crate) fn part_req<T>(lay: &Layout, b: usize, blk_len: usize, sink_req: WorkReq) -> WorkReq {
    WorkReq::all_of(&[sink_req, WorkReq::new::<T>(blk_len), workspace::<T>(lay, b)])
}

/// What the parts of [`sym_in_parts`] share: the views and kernels, the
/// layout and block size, and the calling thread's evaluator's resolved
/// bandwidths and mode.
pub(crate) struct PartCtx<'a, VS: ?Sized, KS: ?Sized> {
    pub views: &'a VS,
    pub kernels: &'a KS,
    pub lay: &'a Layout,
    pub b: usize,
    pub gamma: &'a [f64],
    /// The calling thread's evaluator's per-item scales and views' factors
    /// ([`Engine::scale_parts`]): copied, not computed again by every part.
    pub scales: (&'a [f64], &'a [f64]),
    pub mode: Mode,
    pub eta: Option<&'a [f64]>,
}

/// [`Engine::sym`] over `items` in `tasks` parts on `par` ([`part_count`]):
/// part `t` takes from its slot (of [`part_req`]) the sink `sink` makes, a
/// block of `blk_len` values and an evaluator set up as `ctx` says, and
/// visits the block rows [`block_row_owner`] gives it ([`Engine::sym_part`]).
/// Returns each part's sink in task order (`tasks` of them): every pair was
/// offered to exactly one of them, and the caller merges them.
pub(crate) fn sym_in_parts<'s, T, VS, KS, S>(
    ctx: &PartCtx<'_, VS, KS>,
    (items, blk_len): (&[usize], usize),
    (tasks, mut parts): (usize, Slots<'s>),
    par: Parallel,
    sink: &(dyn Fn(&mut Stack<'s>) -> Result<S, Error> + Sync),
) -> Result<[Option<S>; MAX_PARTS], Error>
where
    T: Real,
    VS: ViewSet<T> + Sync + ?Sized,
    KS: KernelSet + Sync + ?Sized,
    S: Sink<T> + Send,
{
    let done = spin::Mutex::new(core::array::from_fn::<_, MAX_PARTS, _>(|_| None));
    par.run_items((&mut parts).take(tasks).enumerate(), &|(t, slot)| {
        let mut st = Stack::new(slot);
        let mut s = sink(&mut st)?;
        let blk: &mut [T] = st.take(blk_len)?;
        let mut eng = Engine::new_bare(ctx.views, ctx.kernels, ctx.lay, ctx.b, st)?;
        eng.copy_scales_from(ctx.scales.0, ctx.scales.1, ctx.gamma)?;
        eng.set_mode(ctx.mode, ctx.eta);
        eng.sym_part(items, blk, &mut s, (t, tasks))?;
        if let Some(d) = done.lock().get_mut(t) {
            *d = Some(s);
        }
        Ok(())
    })?;
    let done = done.into_inner();
    if done.iter().take(tasks).any(Option::is_none) {
        return Err(Error::Internal);
    }
    Ok(done)
}

/// Which of `tasks` tasks owns block row `bi` of a symmetric traversal: dealt
/// back and forth (0, 1, …, T−1, T−1, …, 1, 0, 0, 1, …), so that the long
/// first block rows (block row `bi` has `nb − bi` blocks) are spread evenly.
pub(crate) fn block_row_owner(bi: usize, tasks: usize) -> usize {
    let tasks = tasks.max(1);
    let (round, pos) = (bi / tasks, bi % tasks);
    if round % 2 == 0 {
        pos
    } else {
        tasks - 1 - pos
    }
}

#[inline(always)]
fn put<T: Real>(dst: &mut T, val: f64, acc: bool) {
    if acc {
        *dst += T::from_f64(val);
    } else {
        *dst = T::from_f64(val);
    }
}

/// RBF value from an unclamped `d²` (raw: the clamped `d²` itself). `d² ≤ 0` gives exactly 1
/// (what `exp(−γ·0)` gives for finite `γ`) without the product, so a `γ` that overflowed to
/// `+inf` in the scaled units (a given `γ` on a huge view) never meets `inf · 0`.
#[inline(always)]
fn rbf_value(d2: f64, gamma: f64, raw: bool) -> f64 {
    if raw {
        if d2 > 0.0 {
            d2
        } else {
            0.0
        }
    } else if d2 > 0.0 {
        libm::exp(-gamma * d2)
    } else {
        1.0
    }
}

#[allow(clippy::too_many_arguments)]
fn rbf_finish<T: Real>(
    dots: &[T],
    rows: &[usize],
    cols: &[usize],
    sq: &[f64],
    gamma: f64,
    w: f64,
    raw: bool,
    acc: bool,
    out: &mut [T],
) {
    let nr = rows.len().max(1);
    let per_col = dots.chunks_exact(nr).zip(out.chunks_exact_mut(nr));
    for ((dc, oc), &j) in per_col.zip(cols) {
        let Some(&sj) = sq.get(j) else { break };
        for ((&dot, dst), &i) in dc.iter().zip(oc.iter_mut()).zip(rows) {
            let Some(&si) = sq.get(i) else { break };
            let v = rbf_value(si + sj - 2.0 * dot.to_f64(), gamma, raw);
            put(dst, w * v, acc);
        }
    }
}

/// `k · (s_i · s_j)`: a kernel value times the normalisation scales of its two items. For an
/// item whose values are nearly all subnormal the scale `1/√Σx` approaches `1e162`, and the
/// product of two such scales overflows to `+inf` while `k` is 0 or tiny: `(k · s_i) · s_j`
/// is then taken, finite because `|k| ≤ 2 √(k(x,x) k(y,y))` (found by the fuzz driver,
/// issue 15). Bitwise the plain product whenever `s_i · s_j` is finite.
#[inline(always)]
fn normalised(k: f64, si: f64, sj: f64) -> f64 {
    let p = si * sj;
    if p.is_finite() {
        k * p
    } else {
        (k * si) * sj
    }
}

/// `Σ 2 x y / (x + y)` over features with `x + y > 0`, of the values times `inv`.
#[inline]
fn chi2<T: Real>(x: &[T], y: &[T], inv: f64) -> f64 {
    let mut s = 0.0;
    for (&a, &b) in x.iter().zip(y) {
        let (a, b) = (a.to_f64() * inv, b.to_f64() * inv);
        let d = a + b;
        if d > 0.0 {
            s += chi2_term(a, b, d);
        }
    }
    s
}

/// `2ab / d` (`d = a + b > 0`); `2a · (b / d)` when `2ab` leaves the normal range (it
/// underflows for values near `1e-160`, and the kernel then exceeded 1).
#[inline(always)]
fn chi2_term(a: f64, b: f64, d: f64) -> f64 {
    let p = 2.0 * a * b;
    if p >= f64::MIN_POSITIVE || p == 0.0 && (a == 0.0 || b == 0.0) {
        p / d
    } else {
        2.0 * a * (b / d)
    }
}

/// `Σ min(x, y)` of the values times `inv`.
#[inline]
fn inter<T: Real>(x: &[T], y: &[T], inv: f64) -> f64 {
    let mut s = 0.0;
    for (&a, &b) in x.iter().zip(y) {
        let (a, b) = (a.to_f64() * inv, b.to_f64() * inv);
        s += if a < b { a } else { b };
    }
    s
}

/// Per-item row count of a dense view (the `Dense::rows` field is private to `data`).
trait RowsLen {
    fn rows_len(&self) -> usize;
}

impl<T: Real> RowsLen for crate::data::Dense<'_, T> {
    fn rows_len(&self) -> usize {
        self.mat().rows()
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;
    use crate::data::Dense;

    /// Few items of many features: the shape asks for more tasks (4) than the chunk of
    /// `⌈N / tasks⌉` items makes (3 of 3 items each); every item still gets its scale,
    /// the same bits as serially.
    #[test]
    fn item_scales_with_fewer_pieces_than_tasks() {
        let (n, m) = (9, (4 << 20) / 9 + 1);
        assert_eq!(tasks_for(n, m), 4);
        let x: Vec<f64> = (0..n * m).map(|i| (i % 7) as f64 + 0.5).collect();
        let view = View::from(Dense::new(&x, m, n, m).unwrap());
        let kern = Kernel::Rbf(super::super::Bandwidth::Gamma(1.0));
        let (mut serial, mut pool) = ([0.0; 9], [f64::NAN; 9]);
        item_scales(&kern, view, 1.0, &mut serial, Parallel::Serial).unwrap();
        item_scales(&kern, view, 1.0, &mut pool, Parallel::Threads(2)).unwrap();
        assert_eq!(serial.map(f64::to_bits), pool.map(f64::to_bits));
    }
}
