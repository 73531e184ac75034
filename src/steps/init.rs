//! Random starts (DESIGN §3): one xoshiro256++ stream from the seed, `V` first,
//! then `U^(1)`, …, `U^(H)`; scales from the views' means (module docs of
//! [`crate::models::nmf`] give the rule).

use crate::data::{FactorsMut, View, ViewSet};
use crate::error::Error;
use crate::linalg::real::Real;
use crate::par::{chunk_len, pieces_mut, tasks_for, Counted, Parallel};
use crate::rng::Rng;
use crate::steps::NmfParams;

/// `(scale of V, m̄)` of the random start, for the data times `s` (the fit's
/// power-of-two scale, `crate::steps::scale`; 1 for data of ordinary magnitude).
pub(crate) fn start_scales<T: Real, VS: ViewSet<T> + ?Sized>(
    views: &VS,
    k: usize,
    vmax: f64,
    s: f64,
) -> (f64, f64) {
    scales_from(&|i| mean(&views.view(i)), views.count(), k, vmax, s)
}

/// [`start_scales`] from the `h` views' means `mean_of(i)`.
fn scales_from(
    mean_of: &dyn Fn(usize) -> f64,
    h: usize,
    k: usize,
    vmax: f64,
    s: f64,
) -> (f64, f64) {
    let mbar = (0..h).map(|i| mean_of(i) * s).sum::<f64>() / h as f64;
    let sv = if vmax.is_finite() {
        vmax
    } else {
        libm::sqrt(mbar / k as f64)
    };
    (sv, mbar)
}

fn mean<T: Real>(x: &View<'_, T>) -> f64 {
    x.sum() / (x.rows() as f64 * x.cols() as f64)
}

/// The random start of `u`, `v` for the data times `s` (as [`start_scales`]).
pub(crate) fn random_start<T: Real, VS: ViewSet<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
    views: &VS,
    k: usize,
    params: &NmfParams,
    s: f64,
    u: &mut F,
    v: &mut [T],
) {
    random_start_with(&|i| mean(&views.view(i)), k, params, s, u, v)
}

/// [`random_start`] with the views' means given (`mean_of(i)` for view `i`; a
/// fit that ignores some entries passes the means of the others).
pub(crate) fn random_start_with<T: Real, F: FactorsMut<T> + ?Sized>(
    mean_of: &dyn Fn(usize) -> f64,
    k: usize,
    params: &NmfParams,
    s: f64,
    u: &mut F,
    v: &mut [T],
) {
    let n = v.len().checked_div(k).unwrap_or(0);
    random_start_shard(mean_of, k, params, s, (0, n), u, v)
}

/// Most views whose means [`random_start_par`] keeps (more: each is summed again where
/// it is used, as [`random_start`] does).
const MEANS_KEPT: usize = 16;

/// [`random_start`] with `V`'s draws in tasks on `par`, fixed by its shape: the task of the
/// items `lo .. hi` draws from the stream [`Rng::skipped`] `K·lo` draws on, the bases from
/// where `V`'s draws end; the same values as the one serial stream, for every pool. Each
/// view's mean is computed once (the serial start sums every view twice).
pub(crate) fn random_start_par<T: Real, VS: ViewSet<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
    views: &VS,
    k: usize,
    params: &NmfParams,
    s: f64,
    u: &mut F,
    v: &mut [T],
    par: Parallel,
) -> Result<(), Error> {
    let h = views.count();
    let mut kept = [0.0f64; MEANS_KEPT];
    if h <= MEANS_KEPT {
        for (i, m) in kept.iter_mut().enumerate().take(h) {
            *m = mean(&views.view(i));
        }
    }
    let mean_of = |i: usize| match kept.get(i) {
        Some(&m) if h <= MEANS_KEPT => m,
        _ => mean(&views.view(i)),
    };
    let n = v.len().checked_div(k).unwrap_or(0);
    let tasks = tasks_for(n, k);
    if tasks <= 1 || par.is_serial() {
        random_start_shard(&mean_of, k, params, s, (0, n), u, v);
        return Ok(());
    }
    let (sv, mbar) = scales_from(&mean_of, h, k, params.vmax, s);
    let base = Rng::new(params.seed);
    // Whole items per task (`chunk` items of `K` draws).
    let piece = chunk_len(n, tasks, 1).saturating_mul(k).max(1);
    let parts = v.len().div_ceil(piece);
    let items = Counted::new(pieces_mut(v, piece).enumerate(), parts);
    par.run_items(items, &|(t, part)| {
        let mut rng = base.skipped(t.saturating_mul(piece) as u64);
        part.iter_mut()
            .for_each(|x| *x = T::from_f64(rng.uniform() * sv));
        Ok(())
    })?;
    let mut rng = base.skipped(v.len() as u64);
    bases(&mean_of, k, params, s, mbar, &mut rng, u);
    Ok(())
}

/// The bases' draws of a random start, from `rng` where `V`'s end.
fn bases<T: Real, F: FactorsMut<T> + ?Sized>(
    mean_of: &dyn Fn(usize) -> f64,
    k: usize,
    params: &NmfParams,
    s: f64,
    mbar: f64,
    rng: &mut Rng,
    u: &mut F,
) {
    for i in 0..u.count() {
        let mv = mean_of(i) * s;
        let su = if params.vmax.is_finite() {
            4.0 * mv / (k as f64 * params.vmax)
        } else if mbar > 0.0 {
            mv / libm::sqrt(mbar * k as f64)
        } else {
            0.0
        };
        u.get_mut(i)
            .iter_mut()
            .for_each(|x| *x = T::from_f64(rng.uniform() * su));
    }
}

/// [`random_start_with`] for a shard of the items (`models::dist`): the same
/// stream, of which `v` (`K × n_s`) receives the columns `offset .. offset +
/// n_s` of the whole `K × n` start (the draws of the other columns are
/// generated and discarded, `O(K·n)`), and `u` the bases the whole start gets.
/// `mean_of(i)` is the mean of view `i` over all `n` items.
pub(crate) fn random_start_shard<T: Real, F: FactorsMut<T> + ?Sized>(
    mean_of: &dyn Fn(usize) -> f64,
    k: usize,
    params: &NmfParams,
    s: f64,
    (offset, n): (usize, usize),
    u: &mut F,
    v: &mut [T],
) {
    let h = u.count();
    let (sv, mbar) = scales_from(mean_of, h, k, params.vmax, s);
    let mut rng = Rng::new(params.seed);
    let before = k * offset;
    let after = (k * n).saturating_sub(before + v.len());
    (0..before).for_each(|_| {
        rng.uniform();
    });
    v.iter_mut()
        .for_each(|x| *x = T::from_f64(rng.uniform() * sv));
    (0..after).for_each(|_| {
        rng.uniform();
    });
    bases(mean_of, k, params, s, mbar, &mut rng, u);
}
