//! Base kernels per view, their fusion by learned weights (MKL), and exact
//! neighbour search under the fused kernel (DESIGN §6; seeds 000 §3.2, 003 §4.4).
//!
//! **Base kernels** (per view `v`, items `x, y` are columns of `X^(v)`):
//!
//! | [`Kernel`] | `k(x, y)` | data | evaluated |
//! |---|---|---|---|
//! | `Linear` | `xᵀy` | any finite | blocked GEMM (dense), scatter-dot (CSC) |
//! | `Rbf` | `exp(−γ‖x − y‖²)`, `‖x − y‖² = ‖x‖² + ‖y‖² − 2xᵀy` clamped at 0 | any finite | GEMM + `exp` (dense), scatter-dot (CSC) |
//! | `ChiSquared` | `Σ_k 2x_k y_k / (x_k + y_k)` (terms with `x_k + y_k = 0` are 0) | nonnegative | loops |
//! | `Intersection` | `Σ_k min(x_k, y_k)` | nonnegative | loops |
//!
//! Every kernel is normalised (eq. 6 / 14) to `K_v(i,j) = k(x_i,x_j) / √(k(x_i,x_i) k(x_j,x_j))`, so
//! `K_v(i,i) = 1` and, for nonnegative data, `K_v ∈ [0, 1]` (with negative features a linear
//! kernel lies in `[−1, 1]`; RBF is already normalised). **All-zero items:** where the
//! normalisation is undefined — `k(x_i, x_i) = 0`, which for the linear, χ² and intersection
//! kernels means the item's column of view `v` is entirely zero — the item carries no
//! information in that view: `K_v(i,i) = 1` and `K_v(i,j) = 0` for every `j ≠ i`. (Under RBF
//! `k(x, x) = 1` always, and a zero column is an ordinary point, e.g. the mean of centred
//! features.)
//!
//! **RBF bandwidth.** Either given (`γ > 0`) or the median heuristic `γ = 1 / median(d²)`, the median
//! taken over **every unordered pair `{i, j}`, `i ≠ j`, of labeled items** (labels other than
//! [`crate::data::UNLABELED`]), `d² = ‖x_i − x_j‖²` in that view; with `P` pairs it is the lower
//! median, the element of rank `⌊(P − 1)/2⌋` (0-based) in increasing order. It is exact and uses
//! `O(1)` memory: a radix selection on the bits of `d²` (12 bits per pass, usually 2–3 passes over
//! the labeled pairs, each pass GEMM-shaped). If that median is 0 (more than half the labeled pairs
//! coincide in the view), `γ = 1/mean(d²)` over the same pairs; if every pair coincides, `γ = 1`. At least two labeled
//! items are needed ([`Error::TooFewLabeled`]). Past 4096 labeled items the median is that of a
//! seeded sample of labeled pairs, with a stated rank bound ([`sample`]). [`resolve_bandwidths`] computes the `γ`s once so
//! that later calls can pass them explicitly (every routine here resolves `Median` itself otherwise).
//!
//! **Magnitudes.** Any finite data works: a view whose largest `|x|` lies outside
//! `[2^−448, 2^448]` is evaluated as `x · 2^−e` (a power of two, exact) with its largest value
//! brought into `[1, 2)`, a given `γ` becoming `γ·2^{2e}`. Every normalised kernel above is
//! invariant to that scaling (RBF with the median bandwidth included), so the values are the
//! same and always finite; before, `‖x − y‖²` overflowed near `1e155` and turned the kernels
//! into NaN (issue 15, D1). [`resolve_bandwidths`] reports a median `γ` in the caller's units,
//! which for such a view may underflow to 0 or overflow (the C ABI's `gamma = 0` then means
//! "the median" again). Precision is that of the scaled values: a view whose values span
//! more than ~`1e300` (e.g. `1e-89` next to `1e234`) has its smallest ones subnormal or zero
//! after scaling, and the similarities among those items lose digits (measured: a χ² value
//! of 1.006); every value stays finite.
//!
//! **Fusion.** `K = Σ_v η_v K_v` with `η` on the simplex (a caller-given `η ≥ 0` with a positive
//! sum is used as `η / Σ η`). After normalisation `K(i,i) = 1`, so `d²(i,j) = 2 − 2K(i,j)` and
//! the nearest items are those with the largest fused kernel. [`mkl_weights`] learns `η` by
//! kernel–target alignment (eq. 11 / 19).
//!
//! **Neighbour search** ([`fused_knn`], [`class_pairs`]) evaluates `K` block by block (all dense
//! linear views stacked into *one* GEMM per block, each dense RBF view one GEMM, the rest by
//! loops) and keeps the best `k` per query in a heap: memory `O(N·(k + H) + block·(block + Σ M_v))`,
//! never an `N × N` matrix. When queries and candidates are the same set, only the blocks on and
//! above the diagonal are computed and each value feeds both items' heaps (half the work). Order:
//! larger `K` first, ties by the lower index, so results are deterministic. Measured
//! (`bench/bench_knn.py`, N = 10 000, views of 64/144/75/128 dims, k = 10, one thread each):
//! 1.1–1.8 s against scikit-learn's brute force 1.8–4.0 s on the equivalent concatenated
//! features (1.4–1.8× faster on a shared machine), identical neighbour lists, 5.4 MiB of
//! workspace and outputs against the 763 MiB of a dense kernel matrix.
//!
//! **Caveat (measured on `data/mfeat-sample`):** kernel–target alignment is uncentred, as in the
//! papers. With linear kernels on nonnegative features every pair has a high cosine and the
//! weights favour the view with the most spread; they still beat every single view but not the
//! uniform weights there. With RBF kernels (median bandwidth) the learned weights beat both.
//!
//! **CCA** ([`cca()`](fn@cca), DESIGN §8): regularised canonical correlation analysis of two dense views
//! (any sign), for MVEL's cross-view similarities; the canonical directions come from
//! [`crate::linalg::eig`]. It takes two [`crate::Dense`] views rather than a view set.
//!
//! All routines take the views as a [`ViewSet`] (dense or CSC) and the kernels as a
//! [`KernelSet`] (a slice of [`Kernel`]s, or the C ABI's array), validate everything before they
//! write, and have `*_workspace` twins. The hosted build's GEMM (the `gemm` crate) allocates its own
//! packing buffers; without `std` the blocked kernel packs into the workspace.

mod align;
pub(crate) mod cca;
pub(crate) mod engine;
pub(crate) mod kmeans;
pub(crate) mod knn;
pub(crate) mod median;
pub(crate) mod nndescent;
pub(crate) mod nndescent_dist;
mod qp;
pub mod sample;
pub(crate) mod topk;

pub(crate) use align::mkl_weights_in;
pub use align::{
    alignment_system, alignment_system_workspace, mkl_weights, mkl_weights_workspace, MklParams,
    MklReport,
};
pub use cca::{cca, cca_workspace};
pub use knn::{
    class_pairs, class_pairs_workspace, fused_knn, fused_knn_workspace, KnnParams, Scope,
    NO_NEIGHBOR,
};
pub use median::{resolve_bandwidths, resolve_bandwidths_with, resolve_bandwidths_workspace};
pub use nndescent::{approx_knn, approx_knn_progress, approx_knn_workspace, AnnParams, AnnReport};
pub use qp::{simplex_qp, simplex_qp_workspace, QpReport};
pub use sample::{Sampling, SetupPath};

use crate::data::UNLABELED;
use crate::data::{ViewKind, ViewSet, ViewShape};
use crate::error::Error;
use crate::linalg::real::Real;
use crate::par::Parallel;
use crate::work::{Stack, WorkReq};

/// Default block size (items per side of a kernel block).
/// cbindgen:ignore
pub const DEFAULT_BLOCK: usize = 256;

/// RBF bandwidth.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bandwidth {
    /// `k(x, y) = exp(−γ‖x − y‖²)` with this `γ > 0`.
    Gamma(f64),
    /// `γ = 1 / median(d²)` over the labeled pairs (see the module docs for the exact rule).
    Median,
}

/// The base kernel of one view (see the module docs for the formulas).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kernel {
    /// `xᵀy`, normalised: the cosine similarity.
    Linear,
    /// Gaussian `exp(−γ‖x − y‖²)`.
    Rbf(Bandwidth),
    /// Additive χ²: `Σ 2 x_k y_k / (x_k + y_k)` (nonnegative data).
    ChiSquared,
    /// Histogram intersection `Σ min(x_k, y_k)` (nonnegative data).
    Intersection,
}

/// The kernels of a set of views, indexable without allocation: a slice or array of
/// [`Kernel`]s, or the C ABI's array of `mvnmf_kernel` descriptors.
pub trait KernelSet {
    /// Number of kernels.
    fn count(&self) -> usize;
    /// Kernel `v` (`v < count()`).
    fn kernel(&self, v: usize) -> Kernel;
}

impl KernelSet for [Kernel] {
    fn count(&self) -> usize {
        self.len()
    }
    fn kernel(&self, v: usize) -> Kernel {
        // `v < count()` (the callers' contract); past it, a linear kernel.
        self.get(v).copied().unwrap_or(Kernel::Linear)
    }
}

impl<const H: usize> KernelSet for [Kernel; H] {
    fn count(&self) -> usize {
        H
    }
    fn kernel(&self, v: usize) -> Kernel {
        self.as_slice().kernel(v)
    }
}

impl Kernel {
    /// Does this kernel need nonnegative data?
    pub fn needs_nonnegative(&self) -> bool {
        matches!(self, Kernel::ChiSquared | Kernel::Intersection)
    }

    /// [`Error::BadParameter`] for an RBF `γ` that is not finite and positive.
    pub fn validate(&self) -> Result<(), Error> {
        match *self {
            Kernel::Rbf(Bandwidth::Gamma(g)) if !(g.is_finite() && g > 0.0) => {
                Err(Error::BadParameter)
            }
            _ => Ok(()),
        }
    }

    pub(crate) fn is_median(&self) -> bool {
        matches!(self, Kernel::Rbf(Bandwidth::Median))
    }
}

/// What the workspace queries need to know about the inputs (from shapes and kernels alone).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    /// Items.
    pub n: usize,
    /// Views.
    pub h: usize,
    /// Rows of all dense linear and RBF views (the GEMM panels).
    pub panel_rows: usize,
    /// Largest row count of a CSC view (its scatter buffer).
    pub scatter_rows: usize,
    /// Some view uses the median heuristic.
    pub median: bool,
}

/// Checks shapes against kernels: at least one view, one kernel per view, the same `N` items.
pub(crate) fn layout<KS: KernelSet + ?Sized>(
    shapes: impl IntoIterator<Item = ViewShape>,
    kernels: &KS,
) -> Result<Layout, Error> {
    let mut n = None;
    let (mut h, mut panel_rows, mut scatter_rows) = (0usize, 0usize, 0usize);
    for s in shapes {
        if s.rows == 0 || s.cols == 0 {
            return Err(Error::ZeroDimension);
        }
        if *n.get_or_insert(s.cols) != s.cols {
            return Err(Error::DimensionMismatch);
        }
        if h >= kernels.count() {
            return Err(Error::DimensionMismatch);
        }
        let kern = kernels.kernel(h);
        kern.validate()?;
        match (s.kind, kern) {
            (ViewKind::Dense, Kernel::Linear | Kernel::Rbf(_)) => {
                panel_rows = panel_rows.checked_add(s.rows).ok_or(Error::SizeOverflow)?;
            }
            (ViewKind::Csc, _) => scatter_rows = scatter_rows.max(s.rows),
            _ => {}
        }
        h += 1;
    }
    let n = n.ok_or(Error::ZeroDimension)?;
    if h != kernels.count() {
        return Err(Error::DimensionMismatch);
    }
    Ok(Layout {
        n,
        h,
        panel_rows,
        scatter_rows,
        median: (0..h).any(|v| kernels.kernel(v).is_median()),
    })
}

/// Shapes and kernels, then every value: finite, and nonnegative for χ² / intersection views.
pub(crate) fn check_views<T: Real, VS: ViewSet<T> + ?Sized, KS: KernelSet + ?Sized>(
    views: &VS,
    kernels: &KS,
) -> Result<Layout, Error> {
    check_views_par(views, kernels, Parallel::Serial)
}

/// [`check_views`] with the values checked in tasks on `par` fixed by each view's shape
/// (`View::check_values_par`: the same error as the serial scan on every pool).
pub(crate) fn check_views_par<T: Real, VS: ViewSet<T> + ?Sized, KS: KernelSet + ?Sized>(
    views: &VS,
    kernels: &KS,
    par: Parallel,
) -> Result<Layout, Error> {
    let lay = layout((0..views.count()).map(|i| views.shape(i)), kernels)?;
    for v in 0..lay.h {
        views
            .view(v)
            .check_values_par(kernels.kernel(v).needs_nonnegative(), par)?;
    }
    Ok(lay)
}

/// `η`: one weight per view, finite, `>= 0`, positive sum ([`Error::BadParameter`]).
pub(crate) fn check_eta(eta: &[f64], h: usize) -> Result<f64, Error> {
    if eta.len() != h {
        return Err(Error::DimensionMismatch);
    }
    let mut s = 0.0;
    for &e in eta {
        if !(e.is_finite() && e >= 0.0) {
            return Err(Error::BadParameter);
        }
        s += e;
    }
    if s > 0.0 && s.is_finite() {
        Ok(s)
    } else {
        Err(Error::BadParameter)
    }
}

/// Labels: empty (no labels: every item unlabeled) or one per item, each `< n_classes` or
/// [`UNLABELED`]. Returns the number of labeled items.
pub(crate) fn check_labels(labels: &[u32], n: usize, n_classes: usize) -> Result<usize, Error> {
    if labels.is_empty() {
        return Ok(0);
    }
    if labels.len() != n {
        return Err(Error::DimensionMismatch);
    }
    let mut nl = 0;
    for &l in labels {
        if l != UNLABELED {
            if l as usize >= n_classes {
                return Err(Error::BadLabel);
            }
            nl += 1;
        }
    }
    Ok(nl)
}

/// Class of item `j` (`None`: unlabeled or no labels at all).
#[inline(always)]
pub(crate) fn class_of(labels: &[u32], j: usize) -> Option<usize> {
    match labels.get(j) {
        Some(&l) if l != UNLABELED => Some(l as usize),
        _ => None,
    }
}

/// Labeled items sorted by class (counting sort, increasing index within a class).
pub(crate) struct ClassIndex<'w> {
    /// `perm[off[c]..off[c+1]]`: the items of class `c`; `perm[..off[C]]`: all labeled items.
    pub perm: &'w mut [usize],
    /// `C + 1` offsets.
    pub off: &'w mut [usize],
}

impl<'w> ClassIndex<'w> {
    pub(crate) fn workspace(n: usize, n_classes: usize) -> WorkReq {
        WorkReq::all_of(&[
            WorkReq::new::<usize>(n),
            WorkReq::new::<usize>(n_classes.saturating_add(1)),
        ])
    }

    /// Builds the index (labels validated already).
    pub(crate) fn new(
        labels: &[u32],
        n: usize,
        n_classes: usize,
        st: &mut Stack<'w>,
    ) -> Result<Self, Error> {
        let perm: &mut [usize] = st.take(n)?;
        let off: &mut [usize] = st.take(n_classes.checked_add(1).ok_or(Error::SizeOverflow)?)?;
        off.fill(0);
        for j in 0..labels.len() {
            if let Some(o) = class_of(labels, j).and_then(|c| off.get_mut(c.wrapping_add(1))) {
                *o += 1;
            }
        }
        let mut sum = 0;
        for o in off.iter_mut() {
            sum += *o;
            *o = sum;
        }
        // Fill with a moving cursor per class: reuse off[c] as the cursor, then shift back.
        for j in 0..labels.len() {
            if let Some(cur) = class_of(labels, j).and_then(|c| off.get_mut(c)) {
                if let Some(p) = perm.get_mut(*cur) {
                    *p = j;
                }
                *cur += 1;
            }
        }
        let mut prev = 0;
        for o in off.iter_mut() {
            (*o, prev) = (prev, *o);
        }
        Ok(ClassIndex { perm, off })
    }

    /// Labeled items.
    pub(crate) fn labeled(&self) -> &[usize] {
        let nl = self.off.last().copied().unwrap_or(0);
        self.perm.get(..nl).unwrap_or_default()
    }

    /// Items of class `c`.
    pub(crate) fn class(&self, c: usize) -> &[usize] {
        match self.off.get(c..c.wrapping_add(2)) {
            Some(&[s, e]) => self.perm.get(s..e).unwrap_or_default(),
            _ => &[],
        }
    }

    /// Labeled items in class `c`.
    pub(crate) fn count(&self, c: usize) -> usize {
        self.class(c).len()
    }

    pub(crate) fn n_classes(&self) -> usize {
        self.off.len().saturating_sub(1)
    }
}

/// The effective block size: `b` (`0` → [`DEFAULT_BLOCK`]), at most `n`, at least 1.
pub(crate) fn block_size(b: usize, n: usize) -> usize {
    let b = if b == 0 { DEFAULT_BLOCK } else { b };
    b.min(n).max(1)
}
