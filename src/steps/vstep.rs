//! The bounded multiplicative V-step with graph embedding (DESIGN §5) and the
//! objective's weighted parts (the encode solver that runs them with U fixed is
//! `crate::solvers::encode`).

use crate::data::{Factors, ViewSet};
use crate::error::Error;
use crate::graph::GraphOp;
use crate::linalg::gemm;
use crate::linalg::mat::{MatMut, MatRef};
use crate::linalg::real::Real;
use crate::par::{chunk_len, tasks_for, Parallel};
use crate::steps::mu::{form_pq, gram};
use crate::steps::prox::Sparsity;
use crate::steps::scale::Scale;
use crate::steps::{MvslParams, Objective};
use crate::work::Stack;

/// The weighted parts: `rec`, `α Σ` of the group norms, `β/2 (ta, −tp)`, `γ ΣV`.
pub(crate) fn assemble<T: Real>(
    params: &MvslParams,
    rec: f64,
    norms: impl Iterator<Item = f64>,
    traces: (f64, f64),
    v: &[T],
) -> Objective {
    let sum_v = if params.gamma > 0.0 {
        v.iter().map(|x| x.to_f64()).sum::<f64>()
    } else {
        0.0
    };
    assemble_sum(params, rec, norms, traces, sum_v)
}

/// [`assemble`] given `Σ V` (a distributed fit's reduced sum, `steps::shard`).
pub(crate) fn assemble_sum(
    params: &MvslParams,
    rec: f64,
    norms: impl Iterator<Item = f64>,
    (ta, tp): (f64, f64),
    sum_v: f64,
) -> Objective {
    let sparsity = if params.sparsity == Sparsity::None || params.alpha == 0.0 {
        0.0
    } else {
        params.alpha * norms.sum::<f64>()
    };
    let affinity = 0.5 * params.beta * ta;
    let penalty = 0.0 - 0.5 * params.beta * tp; // +0.0, not −0.0, without a penalty
    let l1 = if params.gamma > 0.0 {
        params.gamma * sum_v
    } else {
        0.0
    };
    Objective::family(
        rec + sparsity + affinity + penalty + l1,
        rec,
        sparsity,
        affinity,
        penalty,
        l1,
    )
}

/// The bounded multiplicative V update of DESIGN §5 (guarded: `A + ε`, `B − ε`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn v_update<T: Real>(
    params: &MvslParams,
    v: &mut [T],
    pv: &[T],
    plus: &[T],
    minus: &[T],
    q: &[T],
    use_graph: bool,
) {
    let eps = T::from_f64(params.eps);
    let vmax = T::from_f64(params.vmax);
    let gamma = T::from_f64(params.gamma);
    let beta = T::from_f64(params.beta);
    let four = T::from_f64(4.0);
    // Every operand cut to `v`'s length once (callers pass equal lengths), so
    // that the indexing below is provably in bounds (no panic path). Without
    // the graph, `plus` and `minus` are never read: any slice of that length.
    let n = v.len();
    let (Some(pv), Some(q)) = (pv.get(..n), q.get(..n)) else {
        return;
    };
    let (plus, minus) = match (use_graph, plus.get(..n), minus.get(..n)) {
        (true, Some(p), Some(m)) => (p, m),
        (true, _, _) => return,
        (false, _, _) => (pv, pv),
    };
    for idx in 0..n {
        let (a, c) = if use_graph {
            (pv[idx] + beta * plus[idx] + eps, beta * minus[idx])
        } else {
            (pv[idx] + eps, T::ZERO)
        };
        if a <= T::ZERO || v[idx] == T::ZERO {
            // Only with ε = 0: no curvature (the entry does not move the
            // objective) or an entry that multiplicative steps cannot revive.
            v[idx] = v[idx].min(vmax);
            continue;
        }
        let factor = if c == T::ZERO {
            ((q[idx] - gamma) + eps).max(T::ZERO) / a
        } else {
            let b = (gamma - q[idx]) - eps;
            let disc = (b * b + four * a * c).sqrt();
            if disc.is_finite() {
                root(a, b, c, disc)
            } else {
                // `B² + 4AC` overflowed (graph weights or data far from 1): the
                // factor is homogeneous of degree 0 in (A, B, C), so take it at
                // (A, B, C)/m, m the largest of them (issue 15).
                let m = a.max(b.abs()).max(c);
                let (a, b, c) = (a / m, b / m, c / m);
                root(a, b, c, (b * b + four * a * c).sqrt())
            }
        };
        v[idx] = (v[idx] * factor).min(vmax);
    }
}

/// [`v_update`] on blocks of entries run as the tasks of one parallel region
/// (elementwise: the same bits for every thread count).
pub(crate) fn v_update_par<T: Real>(
    params: &MvslParams,
    v: &mut [T],
    (pv, plus, minus, q): (&[T], &[T], &[T], &[T]),
    use_graph: bool,
    par: Parallel,
) -> Result<(), Error> {
    let len = v.len();
    let chunk = chunk_len(len, tasks_for(len, 16), 64);
    fn part<T>(x: &[T], s: usize, e: usize) -> &[T] {
        x.get(s..e).unwrap_or(&[])
    }
    par.run_items(v.chunks_mut(chunk).enumerate(), &|(t, vb)| {
        let (s, e) = (t * chunk, t * chunk + vb.len());
        let (pv, q) = (part(pv, s, e), part(q, s, e));
        let (plus, minus) = if use_graph {
            (part(plus, s, e), part(minus, s, e))
        } else {
            (&[][..], &[][..])
        };
        if pv.len() != vb.len() || q.len() != vb.len() {
            return Err(Error::Internal);
        }
        v_update(params, vb, pv, plus, minus, q, use_graph);
        Ok(())
    })
}

/// The positive root factor `(−B + √(B² + 4AC)) / 2A` of the V update, in its
/// cancellation-free form `2C / (B + √…)` when `B > 0` (`disc = √(B² + 4AC)`).
#[inline]
fn root<T: Real>(a: T, b: T, c: T, disc: T) -> T {
    let two = T::from_f64(2.0);
    if b > T::ZERO {
        two * c / (b + disc)
    } else {
        (disc - b) / (two * a)
    }
}

/// `P = s²·Σ UᵀU`, `Q = s²·Σ UᵀX` of an encode with bases `u` in the caller's
/// units (the products formed, then scaled by `s` twice: exact).
#[allow(clippy::too_many_arguments)]
pub(crate) fn form_pq_encode<T: Real, VS: ViewSet<T> + ?Sized, F: Factors<T> + ?Sized>(
    views: &VS,
    scale: Scale,
    k: usize,
    u: &F,
    p: &mut [T],
    q: &mut [T],
    sc: &mut Stack<'_>,
) -> Result<(), Error> {
    form_pq(views, None, T::ONE, k, u, p, q, sc)?;
    if !scale.is_one() {
        let s = scale.t::<T>();
        p.iter_mut()
            .chain(q.iter_mut())
            .for_each(|x| *x = *x * s * s);
    }
    Ok(())
}

/// The graph's traces `(tr(V Lᵃ Vᵀ), tr(V Lᵖ Vᵀ))` at `v`, with the graph's
/// products left in `plus`, `minus` for the next V-step; zeros without a graph.
pub(crate) fn graph_traces<T: Real, G: GraphOp<T> + ?Sized>(
    graph: &G,
    use_graph: bool,
    v: &[T],
    k: usize,
    (plus, minus): (&mut [T], &mut [T]),
    sc: &mut Stack<'_>,
) -> Result<(f64, f64), Error> {
    if use_graph {
        graph.apply(v, k, plus, minus, sc)
    } else {
        Ok((0.0, 0.0))
    }
}

/// The V phase of one outer iteration (DESIGN §5): `v_inner` bounded updates
/// with `P`, `Q` fixed (`d` holds `PV`; `plus`, `minus` the graph's products,
/// already at the current `V` on the first update), then `G ← VVᵀ`; returns the
/// graph's traces at the new `V` (its products stay in `plus`, `minus`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn v_phase<T: Real, G: GraphOp<T> + ?Sized>(
    params: &MvslParams,
    graph: &G,
    (k, n): (usize, usize),
    v: &mut [T],
    (p, q): (&[T], &[T]),
    g: &mut [T],
    d: &mut [T],
    (plus, minus): (&mut [T], &mut [T]),
    sc: &mut Stack<'_>,
) -> Result<(f64, f64), Error> {
    let use_graph = params.beta > 0.0;
    for s in 0..params.v_inner {
        if use_graph && s > 0 {
            graph.apply(v, k, plus, minus, sc)?;
        }
        gemm(
            T::ONE,
            MatRef::col_major(p, k, k)?,
            MatRef::col_major(v, k, n)?,
            T::ZERO,
            MatMut::col_major(d, k, n)?,
            sc,
        )?;
        v_update_par(params, v, (d, plus, minus, q), use_graph, sc.par())?;
    }
    gram(v, k, n, g, sc)?;
    graph_traces(graph, use_graph, v, k, (plus, minus), sc)
}
