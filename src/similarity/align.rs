//! Fusion weights by kernel–target alignment (seed 000 eq. 11, seed 003 eq. 19):
//!
//! ```text
//! min_η  Σ_{i,j labeled} t_ij (Σ_v η_v K_v(i,j) − K_ideal(i,j))² + λ‖η‖²     s.t.  η ≥ 0, Σ η = 1
//! t_ij = 1/n_{y_i}²  (y_i = y_j),   1/(2 n_{y_i} n_{y_j})  otherwise;   K_ideal(i,j) = [y_i = y_j]
//! ```
//!
//! (`n_c` labeled items in class `c`; the sum runs over all ordered pairs, `i = j` included, as
//! printed). Expanded, it is the `H × H` QP `min ηᵀ(G + λI)η − 2bᵀη (+ c)` with
//! `G_uv = Σ t_ij K_u(i,j) K_v(i,j)`, `b_v = Σ t_ij K_v(i,j) K_ideal(i,j)` and
//! `c = Σ t_ij K_ideal(i,j)² =` the number of classes with labeled items. `G` and `b` are
//! accumulated in **one** pass over the unordered labeled pairs, all views' blocks evaluated
//! together (so `O(N_l² Σ_v M_v)` work, `O(H·block²)` memory), each pair counted twice and the
//! diagonal (`K_v(i,i) = 1`) added in closed form. The QP is solved exactly by
//! [`super::simplex_qp`]. Past 4096 labeled items (by default) the pass runs over a stratified
//! sample of them ([`super::sample`]).
//!
//! **λ is relative**: the ridge is `λ · mean_v(G_vv)`, so the same `λ` means the same thing
//! whatever the number of classes and the kernels' scale (the papers leave it unscaled). Small
//! values let the weights land on a single view (measured on real data, DESIGN §6); `λ → ∞`
//! gives uniform weights.

use super::engine::{part_count, part_req, sym_in_parts, Block, Engine, Mode, PartCtx, Sink};
use super::median::{self, Scratch};
use super::qp::{self, QpReport};
use super::sample::{self as smpl, Sampling};
use super::{
    block_size, check_labels, check_views, check_views_par, class_of, layout, ClassIndex,
    KernelSet, Layout,
};
use crate::data::{ViewSet, ViewShape};
use crate::error::{Error, Part};
use crate::linalg::real::Real;
use crate::linalg::{at, set_at};
use crate::par::Parallel;
use crate::work::{Stack, WorkReq};

/// Options of [`mkl_weights`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MklParams {
    /// Ridge relative to `mean(diag G)` (default 0.1; must be finite and `>= 0`).
    pub lambda: f64,
    /// Items per block side (0: [`super::DEFAULT_BLOCK`]).
    pub block: usize,
    /// Exact or sampled passes over the labeled pairs, for the alignment and the median
    /// bandwidths it resolves (default: exact up to 4096 labeled items, see [`super::sample`]).
    pub sampling: Sampling,
}

impl Default for MklParams {
    fn default() -> Self {
        MklParams {
            lambda: 0.1,
            block: 0,
            sampling: Sampling::default(),
        }
    }
}

impl MklParams {
    /// [`Error::BadParameter`] unless `lambda` is finite and `>= 0` and `sampling` is valid.
    pub fn validate(&self) -> Result<(), Error> {
        if self.lambda.is_finite() && self.lambda >= 0.0 {
            self.sampling.validate()
        } else {
            Err(Error::BadParameter)
        }
    }
}

/// What `mkl_weights` reports.
// `repr(C)`: the C ABI's `mvnmf_mkl_report` (renamed in cbindgen.toml), these docs
// included: a change here changes the C ABI.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MklReport {
    /// The absolute ridge `lambda · mean(diag G)`.
    pub ridge: f64,
    /// `mean_v G_vv`.
    pub mean_diag: f64,
    /// The alignment loss at `η`: `Σ t_ij (K(i,j) − K_ideal(i,j))² + ridge·‖η‖²`.
    pub loss: f64,
    /// The simplex QP's relative KKT residual (about 1e-15..1e-12).
    pub kkt_residual: f64,
    /// Views with nonzero weight.
    pub support: usize,
}

/// Accumulates `G` and `b` over the unordered labeled pairs of per-view blocks.
struct AlignSink<'w> {
    h: usize,
    labels: &'w [u32],
    /// Per class: the cross-class factor (`1/n_c`, sampled `1/s_c`) ...
    inv_n: &'w [f64],
    /// ... and the weight of one order of a same-class pair (`1/n_c²`, sampled
    /// `(n_c − 1)/(n_c s_c (s_c − 1))`).
    same: &'w [f64],
    g: &'w mut [f64],
    b: &'w mut [f64],
    gb: &'w mut [f64],
    bb: &'w mut [f64],
    kv: &'w mut [f64],
}

impl<'w> AlignSink<'w> {
    /// A sink with its own zeroed `G` and `b` and its scratch, from `st`.
    fn from_stack<'s: 'w>(
        h: usize,
        (labels, inv_n, same): (&'w [u32], &'w [f64], &'w [f64]),
        st: &mut Stack<'s>,
    ) -> Result<Self, Error> {
        let g: &mut [f64] = st.take_matrix(h, h)?;
        let b: &mut [f64] = st.take(h)?;
        g.fill(0.0);
        b.fill(0.0);
        Ok(AlignSink {
            h,
            labels,
            inv_n,
            same,
            g,
            b,
            gb: st.take_matrix(h, h)?,
            bb: st.take(h)?,
            kv: st.take(h)?,
        })
    }
}

impl<T: Real> Sink<T> for AlignSink<'_> {
    fn visit(&mut self, rows: &[usize], cols: &[usize], blk: &[T], shape: Block) {
        let (h, nr) = (self.h, rows.len());
        let sz = nr * cols.len();
        self.gb.fill(0.0);
        self.bb.fill(0.0);
        let inv_n = |c: usize| self.inv_n.get(c).copied().unwrap_or(0.0);
        let same_w = |c: usize| self.same.get(c).copied().unwrap_or(0.0);
        for (bc, &j) in cols.iter().enumerate() {
            let cj = class_of(self.labels, j).unwrap_or(0);
            let amax = if shape == Block::Diag { bc } else { nr };
            for (a, &i) in rows.iter().enumerate().take(amax) {
                let ci = class_of(self.labels, i).unwrap_or(0);
                let same = ci == cj;
                // Both orders (i, j) and (j, i).
                // (`2·(1/n²)` is bitwise the former `(2/n)·(1/n)`: doubling is exact.)
                let w = if same {
                    2.0 * same_w(ci)
                } else {
                    inv_n(ci) * inv_n(cj)
                };
                // The pair's value in each view's block (view `u` at `u·sz`).
                // (`H` is a handful: plain loops, each access checked.)
                let p = a + bc * nr;
                for u in 0..h {
                    set_at(self.kv, u, blk.get(u * sz + p).map_or(0.0, |x| x.to_f64()));
                }
                for v in 0..h {
                    let wv = w * at(self.kv, v);
                    for u in 0..=v {
                        if let Some(g) = self.gb.get_mut(u + v * h) {
                            *g += wv * at(self.kv, u);
                        }
                    }
                    if same {
                        if let Some(b) = self.bb.get_mut(v) {
                            *b += wv;
                        }
                    }
                }
            }
        }
        for (g, &x) in self.g.iter_mut().zip(self.gb.iter()) {
            *g += x;
        }
        for (b, &x) in self.b.iter_mut().zip(self.bb.iter()) {
            *b += x;
        }
    }
}

fn system_req<T>(
    shapes: impl IntoIterator<Item = ViewShape>,
    kernels: &(impl KernelSet + ?Sized),
    n_classes: usize,
    (block, smp): (usize, &Sampling),
) -> Result<WorkReq, Error> {
    let lay = layout(shapes, kernels)?;
    let b = block_size(block, lay.n);
    let h = lay.h;
    Ok(WorkReq::all_of(&[
        ClassIndex::workspace(lay.n, n_classes),
        WorkReq::new::<f64>(n_classes).times(2),
        WorkReq::new::<usize>(smp.align_cap(lay.n, n_classes)),
        WorkReq::matrix::<f64>(h, h),
        WorkReq::new::<f64>(h),
        WorkReq::new::<f64>(h),
        median::scratch_req(&lay),
        WorkReq::matrix::<T>(h, b.saturating_mul(b)),
        super::engine::workspace::<T>(&lay, b),
        align_part_req::<T>(&lay, b).times(part_count(lay.n, b)),
    ]))
}

/// One part's workspace of the pass in parts: its [`AlignSink`] (`G`, `b`
/// and the sink's scratch), its `H` blocks and its evaluator.
fn align_part_req<T>(lay: &Layout, b: usize) -> WorkReq {
    let h = lay.h;
    let sink = WorkReq::all_of(&[
        WorkReq::matrix::<f64>(h, h).times(2),
        WorkReq::new::<f64>(h).times(3),
    ]);
    part_req::<T>(lay, b, h.saturating_mul(b.saturating_mul(b)), sink)
}

/// Workspace bytes of [`alignment_system`].
pub fn alignment_system_workspace<T>(
    shapes: impl IntoIterator<Item = ViewShape>,
    kernels: &(impl KernelSet + ?Sized),
    n_classes: usize,
    block: usize,
) -> Result<usize, Error> {
    system_req::<T>(shapes, kernels, n_classes, (block, &Sampling::default()))?.bytes()
}

/// The alignment system: writes `G` (`H × H`, column-major, symmetric) and `b` (`H`) of the
/// module docs and returns the constant `c`, so that the loss is `ηᵀGη − 2bᵀη + c`.
///
/// `labels` has one entry per item (class `< n_classes` or [`crate::data::UNLABELED`]); at
/// least 2 labeled items (the sampling rule is [`Sampling::default`]: exact up to 4096 labeled
/// items, [`super::sample`]). Cost `O(N_l² Σ_v M_v)` (one blocked pass, plus the median passes of
/// RBF views with [`super::Bandwidth::Median`]). Past one block row of labeled items the pass is
/// summed in parts (at most four, from the shape; the pipeline runs them on its pool, this
/// function on the calling thread): `G` and `b` are then the same for every pool but differ in
/// the last bits from a one-part sum.
///
/// Errors: as [`super::resolve_bandwidths`]; `g.len() != H²` or `b.len() != H`
/// ([`Error::DimensionMismatch`]); fewer than 2 labeled items ([`Error::TooFewLabeled`]).
#[allow(clippy::too_many_arguments)]
pub fn alignment_system<T: Real, VS: ViewSet<T> + Sync + ?Sized, KS: KernelSet + Sync + ?Sized>(
    views: &VS,
    kernels: &KS,
    labels: &[u32],
    n_classes: usize,
    block: usize,
    g: &mut [f64],
    b: &mut [f64],
    work: &mut [u8],
) -> Result<f64, Error> {
    let lay = check_views(views, kernels)?;
    if labels.is_empty() {
        return Err(Error::TooFewLabeled);
    }
    let nl = check_labels(labels, lay.n, n_classes)?;
    let h = lay.h;
    if g.len() != h * h || b.len() != h {
        return Err(Error::DimensionMismatch);
    }
    if nl < 2 {
        return Err(Error::TooFewLabeled);
    }
    let smp = Sampling::default();
    let shapes = (0..h).map(|v| views.shape(v));
    system_req::<T>(shapes, kernels, n_classes, (block, &smp))?.check(work.len())?;
    let mut st = Stack::new(work);
    let sys = (&lay, labels, n_classes, (block, &smp));
    system(views, kernels, sys, g, b, &mut st, Parallel::Serial)
}

/// [`alignment_system`] after validation, the pass over the labeled pairs in
/// parts on `par` past one block row of labeled items ([`part_count`]): each
/// part sums its blocks into a `G` and `b` of its own ([`sym_in_parts`]), and
/// the parts are added in task order.
fn system<T: Real, VS: ViewSet<T> + Sync + ?Sized, KS: KernelSet + Sync + ?Sized>(
    views: &VS,
    kernels: &KS,
    (lay, labels, n_classes, (block, smp)): (&Layout, &[u32], usize, (usize, &Sampling)),
    g: &mut [f64],
    bvec: &mut [f64],
    st: &mut Stack<'_>,
    par: Parallel,
) -> Result<f64, Error> {
    let (h, bs) = (lay.h, block_size(block, lay.n));
    let mut st = st.rest();
    let ci = ClassIndex::new(labels, lay.n, n_classes, &mut st)?;
    let inv_n: &mut [f64] = st.take(n_classes)?;
    let same: &mut [f64] = st.take(n_classes)?;
    let chosen: &mut [usize] = st.take(smp.align_cap(lay.n, n_classes))?;
    let gb: &mut [f64] = st.take_matrix(h, h)?;
    let bb: &mut [f64] = st.take(h)?;
    let kv: &mut [f64] = st.take(h)?;
    let mut sc = Scratch::new(lay, &mut st)?;
    let blk: &mut [T] = st.take_matrix(h, bs * bs)?;
    let nl = ci.labeled().len();
    let sampled = smp.align_sampled(nl, (0..n_classes).map(|c| ci.count(c)));
    let mut present = 0.0;
    let mut diag = 0.0;
    let mut taken = 0;
    let mut rng = smp.align_rng();
    for (c, (inv, same)) in inv_n.iter_mut().zip(same.iter_mut()).enumerate() {
        let nc = ci.count(c);
        *inv = if nc > 0 { 1.0 / nc as f64 } else { 0.0 };
        *same = *inv * *inv;
        if nc > 0 {
            present += 1.0;
            diag += *inv; // Σ_{i in c} t_ii = n_c / n_c²
        }
        if sampled && nc > 0 {
            // The stratified sample (`super::sample`): `s_c` of the class's items, and the
            // weights that make each class-pair block an unbiased estimate.
            let want = smp.class_share(nc, nl);
            let out = chosen.get_mut(taken..).unwrap_or_default();
            let sc = smpl::select(ci.class(c), want, &mut rng, out);
            taken += sc;
            let (n, s) = (nc as f64, sc as f64);
            *inv = 1.0 / s;
            *same = if sc > 1 {
                (n - 1.0) / (n * s * (s - 1.0))
            } else {
                0.0
            };
        }
    }
    let items: &[usize] = if sampled {
        chosen.part(..taken)?
    } else {
        ci.labeled()
    };
    let tasks = part_count(items.len(), bs);
    let parts = st.take_slots(tasks, align_part_req::<T>(lay, bs))?;
    let mut eng = Engine::new_par(views, kernels, lay, bs, st, par)?;
    median::resolve_with(&mut eng, ci.labeled(), &mut sc, blk, smp)?;
    eng.set_mode(Mode::PerView, None);
    g.fill(0.0);
    bvec.fill(0.0);
    if tasks == 0 {
        let mut sink = AlignSink {
            h,
            labels,
            inv_n,
            same,
            g: &mut *g,
            b: &mut *bvec,
            gb,
            bb,
            kv,
        };
        eng.sym(items, blk, &mut sink)?;
    } else {
        let ctx = PartCtx {
            views,
            kernels,
            lay,
            b: bs,
            gamma: eng.gamma,
            scales: eng.scale_parts(),
            mode: Mode::PerView,
            eta: None,
        };
        let blk_len = h * bs * bs;
        let (inv_n, same) = (&*inv_n, &*same);
        let got = sym_in_parts(&ctx, (items, blk_len), (tasks, parts), par, &|st| {
            AlignSink::from_stack(h, (labels, inv_n, same), st)
        })?;
        for part in got.iter().flatten() {
            g.iter_mut().zip(&*part.g).for_each(|(x, &y)| *x += y);
            bvec.iter_mut().zip(&*part.b).for_each(|(x, &y)| *x += y);
        }
    }
    for (v, b) in bvec.iter_mut().enumerate().take(h) {
        *b += diag;
        for u in 0..=v {
            let Some(x) = g.get_mut(u + v * h) else {
                continue;
            };
            *x += diag;
            let x = *x;
            if let Some(y) = g.get_mut(v + u * h) {
                *y = x;
            }
        }
    }
    Ok(present)
}

/// Workspace bytes of [`mkl_weights`].
pub fn mkl_weights_workspace<T>(
    shapes: impl IntoIterator<Item = ViewShape>,
    kernels: &(impl KernelSet + ?Sized),
    n_classes: usize,
    params: &MklParams,
) -> Result<usize, Error> {
    let h = kernels.count();
    WorkReq::all_of(&[
        WorkReq::matrix::<f64>(h, h),
        WorkReq::new::<f64>(h),
        system_req::<T>(shapes, kernels, n_classes, (params.block, &params.sampling))?
            .or(qp::workspace(h)),
    ])
    .bytes()
}

/// Learns the fusion weights `η` (written, `H` entries on the simplex) by kernel–target
/// alignment: [`alignment_system`], the ridge `params.lambda · mean(diag G)`, then the exact
/// simplex QP. Cost as [`alignment_system`] plus `O(2^H H³)` for `H ≤ 16`. Past
/// `params.sampling`'s threshold (default 4096 labeled items) `G` and `b` are summed over the
/// pairs of a stratified sample of the labeled items instead, `O(s² Σ_v M_v)`
/// ([`super::sample`]: the estimator and its measured effect on `η`).
///
/// Errors: as [`alignment_system`]; `params.lambda` ([`Error::BadParameter`]);
/// `eta.len() != H`.
#[allow(clippy::too_many_arguments)]
pub fn mkl_weights<T: Real, VS: ViewSet<T> + Sync + ?Sized, KS: KernelSet + Sync + ?Sized>(
    views: &VS,
    kernels: &KS,
    labels: &[u32],
    n_classes: usize,
    params: &MklParams,
    eta: &mut [f64],
    work: &mut [u8],
) -> Result<MklReport, Error> {
    mkl_weights_in(
        views,
        kernels,
        (labels, n_classes),
        params,
        eta,
        work,
        Parallel::Serial,
    )
}

/// [`mkl_weights`] with the pass over the labeled pairs in parts on `par`
/// (more than one block row of labeled items: at most four parts from the
/// shape, so the same weights for every pool).
pub(crate) fn mkl_weights_in<
    T: Real,
    VS: ViewSet<T> + Sync + ?Sized,
    KS: KernelSet + Sync + ?Sized,
>(
    views: &VS,
    kernels: &KS,
    (labels, n_classes): (&[u32], usize),
    params: &MklParams,
    eta: &mut [f64],
    work: &mut [u8],
    par: Parallel,
) -> Result<MklReport, Error> {
    params.validate()?;
    let lay = check_views_par(views, kernels, par)?;
    if labels.is_empty() {
        return Err(Error::TooFewLabeled);
    }
    let nl = check_labels(labels, lay.n, n_classes)?;
    let h = lay.h;
    if eta.len() != h {
        return Err(Error::DimensionMismatch);
    }
    if nl < 2 {
        return Err(Error::TooFewLabeled);
    }
    let need =
        mkl_weights_workspace::<T>((0..h).map(|v| views.shape(v)), kernels, n_classes, params)?;
    if work.len() < need {
        return Err(Error::WorkspaceTooSmall);
    }
    let mut st = Stack::new(work);
    let g: &mut [f64] = st.take_matrix(h, h)?;
    let b: &mut [f64] = st.take(h)?;
    let sys = (&lay, labels, n_classes, (params.block, &params.sampling));
    let c = system(views, kernels, sys, g, b, &mut st, par)?;
    // The diagonal: every `H + 1`-th entry.
    let step = h.wrapping_add(1).max(1);
    let mean_diag = g.iter().step_by(step).take(h).sum::<f64>() / h as f64;
    let ridge = params.lambda * mean_diag;
    for x in g.iter_mut().step_by(step).take(h) {
        *x += ridge;
    }
    // The kernel values are finite for every finite input (the engine scales huge or tiny
    // views, see `engine::view_inv_scale`), and so is the system. Should that ever fail, the
    // data is refused here as out of range instead of meeting the QP, whose non-finite
    // objective is an internal error (issue 15, D1: that is how finite data ended in
    // `Internal`).
    if !(g.iter().all(|x| x.is_finite()) && b.iter().all(|x| x.is_finite()) && ridge.is_finite()) {
        return Err(Error::NonFiniteInput);
    }
    let r: QpReport = qp::solve(g, b, eta, &mut st, h > 16)?;
    Ok(MklReport {
        ridge,
        mean_diag,
        loss: r.objective + c,
        kkt_residual: r.kkt_residual,
        support: r.support,
    })
}
