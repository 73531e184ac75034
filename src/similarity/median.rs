//! The RBF median heuristic: the exact lower median of `d²` over all labeled pairs (or, past
//! a size, over a seeded sample of them: [`super::sample`]), by radix selection on the bits of `d²` (nonnegative `f64`s order like their bit patterns). Each pass
//! evaluates the labeled pairs block by block (one GEMM per block for a dense view) and either
//! histograms the next 12 bits of the values that share the prefix found so far, or, once at
//! most `CAP` values share it, collects and sorts them. Memory: 4096 counters and `CAP` values.

use super::engine::{Block, Engine, Mode, Sink};
use super::sample::Sampling;
use super::{check_labels, check_views, layout, ClassIndex, KernelSet, Layout};
use crate::data::{ViewSet, ViewShape};
use crate::error::{Error, Part};
use crate::linalg::real::Real;
use crate::linalg::select::select_nth_by;
use crate::work::{Stack, WorkReq};

const DIGIT: u32 = 12;
const BINS: usize = 1 << DIGIT;
const CAP: usize = 8192;

/// Sampled `d²` values kept per item (at most [`KEEP_MAX`] in all): a sample that fits is
/// evaluated once per view, and its radix passes read the kept values instead of evaluating
/// the pairs again (the same values in the same order: the same bits).
const KEEP_PER_ITEM: usize = 16;
/// The default sample ([`Sampling::median_pairs`]'s default, `2¹⁷`).
const KEEP_MAX: usize = 1 << 17;

fn keep_len(n: usize) -> usize {
    n.saturating_mul(KEEP_PER_ITEM).min(KEEP_MAX)
}

/// Scratch of [`resolve`] (counters, the collect buffer and the kept sample); empty when no
/// view needs it.
pub(crate) fn scratch_req(lay: &Layout) -> WorkReq {
    if lay.median {
        WorkReq::all_of(&[
            WorkReq::new::<u64>(BINS),
            WorkReq::new::<u64>(CAP),
            WorkReq::new::<f64>(keep_len(lay.n)),
        ])
    } else {
        WorkReq::EMPTY
    }
}

/// Counters and buffer for [`resolve`].
pub(crate) struct Scratch<'w> {
    bins: &'w mut [u64],
    buf: &'w mut [u64],
    keep: &'w mut [f64],
}

impl<'w> Scratch<'w> {
    pub(crate) fn new(lay: &Layout, st: &mut Stack<'w>) -> Result<Self, Error> {
        let (nb, nc, nk) = if lay.median {
            (BINS, CAP, keep_len(lay.n))
        } else {
            (0, 0, 0)
        };
        Ok(Scratch {
            bins: st.take(nb)?,
            buf: st.take(nc)?,
            keep: st.take(nk)?,
        })
    }
}

/// One pass over the pairs: histogram of the next digit, or collection, of the values whose
/// top `known` bits equal `prefix`.
struct Pass<'s> {
    prefix: u64,
    known: u32,
    width: u32,
    bins: Option<&'s mut [u64]>,
    buf: &'s mut [u64],
    len: usize,
    sum: f64,
}

impl Pass<'_> {
    #[inline(always)]
    fn take(&mut self, d2: f64) {
        self.sum += d2;
        let key = d2.to_bits();
        if self.known > 0 && key >> (64 - self.known) != self.prefix {
            return;
        }
        match &mut self.bins {
            Some(b) => {
                let d = (key >> (64 - self.known - self.width)) & ((1u64 << self.width) - 1);
                if let Some(c) = b.get_mut(d as usize) {
                    *c += 1;
                }
            }
            None => {
                if let Some(x) = self.buf.get_mut(self.len) {
                    *x = key;
                }
                self.len += 1;
            }
        }
    }
}

impl<T: Real> Sink<T> for Pass<'_> {
    fn visit(&mut self, rows: &[usize], cols: &[usize], blk: &[T], shape: Block) {
        let nr = rows.len();
        for b in 0..cols.len() {
            let amax = if shape == Block::Diag { b } else { nr };
            let Some(col) = blk.get(b * nr..b * nr + amax) else {
                break;
            };
            for &x in col {
                // +0.0 for anything not positive (never -0.0: its bits would sort last).
                let d2 = x.to_f64();
                self.take(if d2 > 0.0 { d2 } else { 0.0 });
            }
        }
    }
}

/// Resolves every `Median` view's `γ` into `eng.gamma` (the engine is left in SqDist mode:
/// the caller sets its own mode next). `labeled` holds at least 2 items (checked by callers).
/// The path by [`Sampling::default`] (exact up to its threshold of labeled items).
pub(crate) fn resolve<T: Real, VS: ViewSet<T> + ?Sized>(
    eng: &mut Engine<'_, '_, T, VS>,
    labeled: &[usize],
    sc: &mut Scratch<'_>,
    blk: &mut [T],
) -> Result<(), Error> {
    resolve_with(eng, labeled, sc, blk, &Sampling::default())
}

/// [`resolve`] with the sampling rule `smp` (validated): the exact lower median over all
/// labeled pairs, or that of `smp.median_pairs` pairs drawn from them (`super::sample`).
pub(crate) fn resolve_with<T: Real, VS: ViewSet<T> + ?Sized>(
    eng: &mut Engine<'_, '_, T, VS>,
    labeled: &[usize],
    sc: &mut Scratch<'_>,
    blk: &mut [T],
    smp: &Sampling,
) -> Result<(), Error> {
    let nl = labeled.len() as u64;
    let sampled = smp.median_pairs_for(labeled.len());
    let pairs = match sampled {
        Some(m) => m,
        None => {
            nl.checked_mul(nl.saturating_sub(1))
                .ok_or(Error::SizeOverflow)?
                / 2
        }
    };
    for v in 0..eng.views() {
        if !eng.needs_median(v) {
            continue;
        }
        if pairs == 0 {
            return Err(Error::TooFewLabeled);
        }
        eng.set_mode(Mode::SqDist(v), None);
        // A sample that fits is evaluated once, here.
        let kept = match sampled {
            Some(m) if m <= sc.keep.len() as u64 => {
                let vals = sc.keep.part_mut(..m as usize)?;
                sampled_values(eng, labeled, smp, blk, vals)?;
                Some(m as usize)
            }
            _ => None,
        };
        let mut rank = (pairs - 1) / 2;
        let (mut prefix, mut known, mut in_prefix) = (0u64, 0u32, pairs);
        let mut sum = None;
        let key = loop {
            if known == 64 {
                break prefix;
            }
            let collect = in_prefix <= CAP as u64;
            let width = DIGIT.min(64 - known);
            if !collect {
                sc.bins.fill(0);
            }
            let mut pass = Pass {
                prefix,
                known,
                width,
                bins: if collect { None } else { Some(&mut *sc.bins) },
                buf: &mut *sc.buf,
                len: 0,
                sum: 0.0,
            };
            match (kept, sampled) {
                (Some(m), _) => {
                    for &d2 in sc.keep.part(..m)? {
                        pass.take(d2);
                    }
                }
                (None, None) => eng.sym(labeled, blk, &mut pass)?,
                (None, Some(m)) => sampled_pass(eng, labeled, m, smp, blk, &mut pass)?,
            }
            let (len, s) = (pass.len, pass.sum);
            sum.get_or_insert(s);
            if collect {
                let vals = sc.buf.part_mut(..len)?;
                if len as u64 != in_prefix {
                    return Err(Error::Internal);
                }
                // The `rank`-th smallest: what sorting and indexing gives, in `O(len)`.
                break select_nth_by(vals, rank as usize, |a, b| a < b).ok_or(Error::Internal)?;
            }
            let mut acc = 0u64;
            let mut digit = BINS;
            for (d, &c) in sc.bins.iter().enumerate().take(1 << width) {
                if acc + c > rank {
                    digit = d;
                    break;
                }
                acc += c;
            }
            if digit == BINS {
                return Err(Error::Internal);
            }
            rank -= acc;
            in_prefix = sc.bins.at(digit)?;
            prefix = (prefix << width) | digit as u64;
            known += width;
        };
        let median = f64::from_bits(key);
        let mean = sum.unwrap_or(0.0) / pairs as f64;
        // `γ` is finite and positive whatever the data: the first of `1/median`, `1/mean`
        // and 1 that is. (The distances are those of the scaled view, see
        // `engine::view_inv_scale`: finite and not tiny for any finite input; the finiteness
        // test is the second line of defence — issue 15, D1 — `1/inf = 0` there once made
        // the kernel NaN.)
        let ok = |g: f64| g.is_finite() && g > 0.0;
        *eng.gamma.at_mut(v)? = [1.0 / median, 1.0 / mean]
            .into_iter()
            .find(|&g| ok(g))
            .unwrap_or(1.0);
    }
    Ok(())
}

/// One pass over `m` pairs drawn uniformly (with replacement) among the unordered pairs of
/// `labeled` (at least 2 items), the same stream from `smp`'s seed at every pass.
fn sampled_pass<T: Real, VS: ViewSet<T> + ?Sized>(
    eng: &mut Engine<'_, '_, T, VS>,
    labeled: &[usize],
    m: u64,
    smp: &Sampling,
    blk: &mut [T],
    pass: &mut Pass<'_>,
) -> Result<(), Error> {
    let nl = labeled.len();
    if nl < 2 {
        return Err(Error::Internal);
    }
    let mut rng = smp.median_rng();
    for _ in 0..m {
        let a = rng.below(nl);
        let mut b = rng.below(nl - 1);
        if b >= a {
            b += 1;
        }
        let (i, j) = (labeled.at(a)?, labeled.at(b)?);
        eng.block(&[i], &[j], blk)?;
        let d2 = blk.at(0)?.to_f64();
        pass.take(if d2 > 0.0 { d2 } else { 0.0 });
    }
    Ok(())
}

/// The values `d²` (clamped at 0) of [`sampled_pass`]'s pairs, in its order, into `out`
/// (`out.len()` pairs).
fn sampled_values<T: Real, VS: ViewSet<T> + ?Sized>(
    eng: &mut Engine<'_, '_, T, VS>,
    labeled: &[usize],
    smp: &Sampling,
    blk: &mut [T],
    out: &mut [f64],
) -> Result<(), Error> {
    let nl = labeled.len();
    if nl < 2 {
        return Err(Error::Internal);
    }
    let mut rng = smp.median_rng();
    for o in out.iter_mut() {
        let a = rng.below(nl);
        let mut b = rng.below(nl - 1);
        if b >= a {
            b += 1;
        }
        let (i, j) = (labeled.at(a)?, labeled.at(b)?);
        eng.block(&[i], &[j], blk)?;
        let d2 = blk.at(0)?.to_f64();
        *o = if d2 > 0.0 { d2 } else { 0.0 };
    }
    Ok(())
}

/// Workspace bytes of [`resolve_bandwidths`].
pub fn resolve_bandwidths_workspace<T>(
    shapes: impl IntoIterator<Item = ViewShape>,
    kernels: &(impl KernelSet + ?Sized),
    n_classes: usize,
    block: usize,
) -> Result<usize, Error> {
    let lay = layout(shapes, kernels)?;
    let b = super::block_size(block, lay.n);
    WorkReq::all_of(&[
        ClassIndex::workspace(lay.n, n_classes),
        scratch_req(&lay),
        WorkReq::matrix::<T>(b, b),
        super::engine::workspace::<T>(&lay, b),
    ])
    .bytes()
}

/// The `γ` of every RBF view (`Gamma(g)`: `g`; `Median`: the median heuristic, see the module
/// docs of [`crate::similarity`]); 0 for the other views. Pass the result back as
/// `Kernel::Rbf(Bandwidth::Gamma(γ))` to avoid recomputing it.
///
/// `labels` (one per item, or empty when no view uses the median) and `n_classes` as
/// everywhere; `block` items per block side (0: default). Cost: per median view 1–6 passes
/// over the `N_l(N_l − 1)/2` labeled pairs (`O(N_l² M_v)` each; typically 2–3 passes); past
/// [`super::sample::AUTO_ABOVE`] labeled items, over a seeded sample of `2¹⁷` of them instead
/// ([`super::sample`]: the rule, its rank bound, [`resolve_bandwidths_with`] to choose).
///
/// Errors: shapes ([`Error::ZeroDimension`], [`Error::DimensionMismatch`]), values
/// ([`Error::NonFiniteInput`], [`Error::NegativeInput`] for χ²/intersection views), `γ`
/// ([`Error::BadParameter`]), labels ([`Error::BadLabel`]), fewer than 2 labeled items with a
/// median view ([`Error::TooFewLabeled`]), `gammas.len() != H`, workspace.
#[allow(clippy::too_many_arguments)]
pub fn resolve_bandwidths<T: Real, VS: ViewSet<T> + ?Sized, KS: KernelSet + ?Sized>(
    views: &VS,
    kernels: &KS,
    labels: &[u32],
    n_classes: usize,
    block: usize,
    gammas: &mut [f64],
    work: &mut [u8],
) -> Result<(), Error> {
    let smp = Sampling::default();
    resolve_bandwidths_with(views, kernels, labels, n_classes, block, &smp, gammas, work)
}

/// [`resolve_bandwidths`] with the sampling rule `sampling` (exact or sampled median, see
/// [`super::sample`]; its workspace is that of [`resolve_bandwidths_workspace`]).
///
/// Errors: as [`resolve_bandwidths`]; `sampling` ([`Error::BadParameter`]).
#[allow(clippy::too_many_arguments)]
pub fn resolve_bandwidths_with<T: Real, VS: ViewSet<T> + ?Sized, KS: KernelSet + ?Sized>(
    views: &VS,
    kernels: &KS,
    labels: &[u32],
    n_classes: usize,
    block: usize,
    sampling: &Sampling,
    gammas: &mut [f64],
    work: &mut [u8],
) -> Result<(), Error> {
    sampling.validate()?;
    let lay = check_views(views, kernels)?;
    let nl = check_labels(labels, lay.n, n_classes)?;
    if gammas.len() != lay.h {
        return Err(Error::DimensionMismatch);
    }
    if lay.median && nl < 2 {
        return Err(Error::TooFewLabeled);
    }
    let need = resolve_bandwidths_workspace::<T>(
        (0..lay.h).map(|v| views.shape(v)),
        kernels,
        n_classes,
        block,
    )?;
    if work.len() < need {
        return Err(Error::WorkspaceTooSmall);
    }
    let b = super::block_size(block, lay.n);
    let mut st = Stack::new(work);
    let ci = ClassIndex::new(labels, lay.n, n_classes, &mut st)?;
    let mut sc = Scratch::new(&lay, &mut st)?;
    let blk: &mut [T] = st.take_matrix(b, b)?;
    let mut eng = Engine::new(views, kernels, &lay, b, st)?;
    resolve_with(&mut eng, ci.labeled(), &mut sc, blk, sampling)?;
    for (v, g) in gammas.iter_mut().enumerate() {
        *g = match kernels.kernel(v) {
            super::Kernel::Rbf(super::Bandwidth::Gamma(given)) => given,
            _ => eng.gamma_unscaled(v),
        };
    }
    Ok(())
}
