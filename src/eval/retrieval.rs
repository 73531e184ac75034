//! Retrieval metrics (DESIGN §7, seed 004): top-N selection, precision at N,
//! average precision / MAP and 11-point interpolated precision–recall.
//!
//! **Ranking.** Items are ranked by score, highest first; equal scores are
//! ordered by item index (lower first), the library's usual deterministic tie
//! rule. Every metric is computed on that one ranking (trec_eval's convention;
//! scikit-learn's `average_precision_score` instead counts tied items together,
//! which agrees whenever no relevant item ties with another item).
//!
//! **Definitions**, with `R` relevant items and `r_1 < … < r_R` their ranks:
//! * `AP = (1/R) Σ_k k / r_k` (0 when `R = 0`, as trec_eval and scikit-learn);
//! * `P@N = #{k : r_k ≤ N} / N` (divided by `N` even when fewer items exist);
//! * 11-point interpolated precision at recall `ρ = 0, 0.1, …, 1`:
//!   `max {k / r_k : k / R ≥ ρ}`, 0 when no such `k` (all zero when `R = 0`);
//!   the recall comparison is done exactly in integers (`10k ≥ iR`).
//!
//! Relevance flags are `u8`, `0` or `1` (anything else is
//! [`Error::BadLabel`]); scores must be finite ([`Error::NonFiniteInput`]).

use crate::error::Error;
use crate::linalg::mat::MatRef;
use crate::linalg::real::Real;
use crate::linalg::select::{precedes, sort_by, top_n_by};
use crate::linalg::{at, set_at};
use crate::work::{Stack, WorkReq};

/// The indices of the `out.len()` best-ranked items (see the module docs),
/// best first. Partial selection with a bounded heap kept in `out` itself:
/// `O(n log N)` time, no workspace, no full sort.
/// `out.len() ≤ scores.len()` ([`Error::DimensionMismatch`]); scores finite.
pub fn top_n<T: Real>(scores: &[T], out: &mut [usize]) -> Result<(), Error> {
    let (n, m) = (scores.len(), out.len());
    if n == 0 {
        return Err(Error::ZeroDimension);
    }
    if m > n {
        return Err(Error::DimensionMismatch);
    }
    if scores.iter().any(|s| !s.is_finite()) {
        return Err(Error::NonFiniteInput);
    }
    top_n_by(n, |j| at(scores, j), None, out);
    Ok(())
}

fn check_cutoffs(cutoffs: &[usize], precision_at: &[f64]) -> Result<(), Error> {
    if precision_at.len() != cutoffs.len() {
        return Err(Error::DimensionMismatch);
    }
    if cutoffs.contains(&0) {
        return Err(Error::BadParameter);
    }
    Ok(())
}

/// The smallest number of relevant hits that reaches recall level `i / 10`
/// (at least 1): `ceil(i R / 10)`, exact in integers.
#[inline]
fn hits_for_level(i: usize, n_relevant: usize) -> usize {
    (i * n_relevant).div_ceil(10).max(1)
}

/// The 11-point curve from the ranks of the hits, supplied by `rank_of(k)`
/// for `k = found, found − 1, …, 1` in that order (`k` = 1-based hit number):
/// level `i` gets `max {k / r_k : k ≥ hits_for_level(i)}`, 0 if none.
fn pr11_descending(
    n_relevant: usize,
    found: usize,
    mut rank_of: impl FnMut(usize) -> usize,
    out: &mut [f64; 11],
) {
    let mut best = 0.0f64;
    let mut k = found;
    for i in (0..=10).rev() {
        let kmin = hits_for_level(i, n_relevant);
        while k >= kmin && k >= 1 {
            best = best.max(k as f64 / rank_of(k) as f64);
            k -= 1;
        }
        out[i] = best;
    }
}

/// AP, P@N and the 11-point curve from `ranks[k]`, the (1-based) rank of the
/// (k+1)-th relevant item, increasing.
fn from_ranks(
    ranks: &[usize],
    cutoffs: &[usize],
    precision_at: &mut [f64],
    pr11: Option<&mut [f64; 11]>,
) -> f64 {
    let r = ranks.len();
    for (p, &cut) in precision_at.iter_mut().zip(cutoffs) {
        *p = ranks.partition_point(|&x| x <= cut) as f64 / cut as f64;
    }
    if let Some(pr) = pr11 {
        pr11_descending(r, r, |k| at(ranks, k.wrapping_sub(1)), pr);
    }
    if r == 0 {
        return 0.0;
    }
    let s: f64 = ranks
        .iter()
        .enumerate()
        .map(|(k, &x)| (k + 1) as f64 / x as f64)
        .sum();
    s / r as f64
}

/// Metrics of one ranked list: `relevant[p]` says whether the item at rank
/// `p + 1` is relevant, and `n_relevant` is the total number of relevant items
/// (at least those in the list; more when the list is a truncated top-N, whose
/// missing relevant items then count as never retrieved). Writes
/// `precision_at[i]` = P@`cutoffs[i]` and, if given, the 11-point curve;
/// returns AP (definitions in the module docs). No workspace;
/// `O(L · (1 + |cutoffs|))` for a list of length `L`.
pub fn ranked_list_metrics(
    relevant: &[u8],
    n_relevant: usize,
    cutoffs: &[usize],
    precision_at: &mut [f64],
    pr11: Option<&mut [f64; 11]>,
) -> Result<f64, Error> {
    check_cutoffs(cutoffs, precision_at)?;
    if relevant.iter().any(|&r| r > 1) {
        return Err(Error::BadLabel);
    }
    let found = relevant.iter().filter(|&&r| r == 1).count();
    if found > n_relevant {
        return Err(Error::BadParameter);
    }
    for (out, &cut) in precision_at.iter_mut().zip(cutoffs) {
        let hits = relevant[..cut.min(relevant.len())]
            .iter()
            .filter(|&&r| r == 1)
            .count();
        *out = hits as f64 / cut as f64;
    }
    if let Some(pr) = pr11 {
        // Hits come back in descending order: scan positions backwards.
        let mut pos = relevant.len();
        pr11_descending(
            n_relevant,
            found,
            |_| {
                // The previous relevant position (there is one for each hit).
                loop {
                    pos = pos.wrapping_sub(1);
                    match relevant.get(pos) {
                        Some(&r) if r != 1 => {}
                        _ => break,
                    }
                }
                pos.wrapping_add(1)
            },
            pr,
        );
    }
    if n_relevant == 0 {
        return Ok(0.0);
    }
    let (mut hits, mut ap) = (0usize, 0.0);
    for (p, &r) in relevant.iter().enumerate() {
        if r == 1 {
            hits += 1;
            ap += hits as f64 / (p + 1) as f64;
        }
    }
    Ok(ap / n_relevant as f64)
}

fn query_req(n_items: usize) -> WorkReq {
    WorkReq::all_of(&[
        WorkReq::new::<usize>(n_items),
        WorkReq::new::<usize>(n_items.saturating_add(1)),
    ])
}

/// Workspace bytes of [`query_metrics`] and [`retrieval_metrics`] for
/// `n_items` items.
pub fn query_metrics_workspace(n_items: usize) -> Result<usize, Error> {
    if n_items == 0 {
        return Err(Error::ZeroDimension);
    }
    query_req(n_items).bytes()
}

/// The ranks (1-based, increasing) of the relevant items of one query, any
/// layout (`score(j)`, `rel(j)` for `j < n`), in `cnt`.
///
/// No sort of the `n` items: the `R` relevant ones are sorted
/// (`O(R log R)`); item `j` is ranked before the relevant item at sorted
/// position `k` exactly when `k ≥ p(j)`, `p(j)` = the number of relevant items
/// ranked before `j` or equal to it (a binary search); counting the `p(j)` and
/// taking prefix sums gives every rank in `O(n log R)`.
fn relevant_ranks<'w, T: Real>(
    n: usize,
    score: impl Fn(usize) -> T,
    rel: impl Fn(usize) -> u8,
    idx: &mut [usize],
    cnt: &'w mut [usize],
) -> &'w [usize] {
    let mut r = 0;
    for j in 0..n {
        if rel(j) == 1 {
            set_at(idx, r, j);
            r += 1;
        }
    }
    // `idx` holds `n` and `cnt` `n + 1` indices: the prefixes below exist.
    let idx = idx.get_mut(..r).unwrap_or_default();
    // A total order (ties by index): the order of any sort.
    sort_by(idx, |&a, &b| precedes(score(a), a, score(b), b));
    let idx = &*idx;
    let cnt = cnt.get_mut(..=r).unwrap_or_default();
    cnt.fill(0);
    for j in 0..n {
        let sj = score(j);
        let p = idx.partition_point(|&q| q == j || precedes(score(q), q, sj, j));
        if let Some(c) = cnt.get_mut(p) {
            *c += 1;
        }
    }
    let mut before = 0;
    for c in cnt.iter_mut().take(r) {
        before += *c;
        *c = before + 1;
    }
    let cnt: &'w [usize] = cnt;
    cnt.get(..r).unwrap_or_default()
}

/// Metrics of one query from the scores of all `n` items (higher = more
/// relevant) and their relevance flags: writes `precision_at[i]` =
/// P@`cutoffs[i]` and, if given, the 11-point interpolated precision at recall
/// 0, 0.1, …, 1; returns the average precision (definitions in the module
/// docs). Cost `O(n log R + R log R)` for `R` relevant items (no full sort);
/// workspace `O(n)` indices ([`query_metrics_workspace`]).
pub fn query_metrics<T: Real>(
    scores: &[T],
    relevant: &[u8],
    cutoffs: &[usize],
    precision_at: &mut [f64],
    pr11: Option<&mut [f64; 11]>,
    work: &mut [u8],
) -> Result<f64, Error> {
    let n = scores.len();
    if n == 0 {
        return Err(Error::ZeroDimension);
    }
    if relevant.len() != n {
        return Err(Error::DimensionMismatch);
    }
    check_cutoffs(cutoffs, precision_at)?;
    if relevant.iter().any(|&r| r > 1) {
        return Err(Error::BadLabel);
    }
    if scores.iter().any(|s| !s.is_finite()) {
        return Err(Error::NonFiniteInput);
    }
    query_req(n).check(work.len())?;
    let mut st = Stack::new(work);
    let idx: &mut [usize] = st.take(n)?;
    let cnt: &mut [usize] = st.take(n + 1)?;
    let ranks = relevant_ranks(n, |j| at(scores, j), |j| at(relevant, j), idx, cnt);
    Ok(from_ranks(ranks, cutoffs, precision_at, pr11))
}

/// Metrics over several queries: column `q` of `scores` and of `relevant`
/// (both `n_items × n_queries`, any strides) is query `q`. Writes, if given,
/// the average precision of every query (`ap`, `n_queries` values), the mean
/// over queries of P@`cutoffs[i]` in `mean_precision_at[i]` and, if given, the
/// mean 11-point curve; returns MAP, the mean of the APs (a query without a
/// relevant item counts with AP = 0). Workspace:
/// [`query_metrics_workspace`]`(n_items)`.
pub fn retrieval_metrics<T: Real>(
    scores: MatRef<'_, T>,
    relevant: MatRef<'_, u8>,
    cutoffs: &[usize],
    mut ap: Option<&mut [f64]>,
    mean_precision_at: &mut [f64],
    mean_pr11: Option<&mut [f64; 11]>,
    work: &mut [u8],
) -> Result<f64, Error> {
    let (n, nq) = (scores.rows(), scores.cols());
    if n == 0 || nq == 0 {
        return Err(Error::ZeroDimension);
    }
    if relevant.rows() != n || relevant.cols() != nq || ap.as_ref().is_some_and(|a| a.len() != nq) {
        return Err(Error::DimensionMismatch);
    }
    check_cutoffs(cutoffs, mean_precision_at)?;
    for q in 0..nq {
        for j in 0..n {
            if relevant.at(j, q) > 1 {
                return Err(Error::BadLabel);
            }
        }
    }
    for q in 0..nq {
        for j in 0..n {
            if !scores.at(j, q).is_finite() {
                return Err(Error::NonFiniteInput);
            }
        }
    }
    query_req(n).check(work.len())?;
    let mut st = Stack::new(work);
    let idx: &mut [usize] = st.take(n)?;
    let cnt: &mut [usize] = st.take(n + 1)?;
    mean_precision_at.fill(0.0);
    let (mut pr_sum, mut ap_sum) = ([0.0f64; 11], 0.0);
    for q in 0..nq {
        let ranks = relevant_ranks(n, |j| scores.at(j, q), |j| relevant.at(j, q), idx, cnt);
        let mut pr = [0.0f64; 11];
        let a = from_ranks(ranks, &[], &mut [], Some(&mut pr));
        for (m, &cut) in mean_precision_at.iter_mut().zip(cutoffs) {
            *m += ranks.partition_point(|&x| x <= cut) as f64 / cut as f64;
        }
        if let Some(ap) = ap.as_deref_mut() {
            set_at(ap, q, a);
        }
        ap_sum += a;
        for (s, p) in pr_sum.iter_mut().zip(pr) {
            *s += p;
        }
    }
    let inv = 1.0 / nq as f64;
    mean_precision_at.iter_mut().for_each(|m| *m *= inv);
    if let Some(out) = mean_pr11 {
        for (o, s) in out.iter_mut().zip(pr_sum) {
            *o = s * inv;
        }
    }
    Ok(ap_sum * inv)
}
