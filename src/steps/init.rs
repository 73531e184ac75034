//! Random starts (DESIGN §3): one xoshiro256++ stream from the seed, `V` first,
//! then `U^(1)`, …, `U^(H)`; scales from the views' means (module docs of
//! [`crate::models::nmf`] give the rule).

use crate::data::{FactorsMut, View, ViewSet};
use crate::linalg::real::Real;
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
    for i in 0..h {
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
