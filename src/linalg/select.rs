//! Partial selection: the `N` best-ranked of `n` scored items without a full
//! sort (the retrieval metrics' `top_n`, JSNMF's ranking).
//!
//! Ranking: higher score first; equal scores by item index, lower first (the
//! library's deterministic tie rule).

use crate::linalg::real::Real;

/// `a` is ranked before `b`: higher score, or equal score and lower index.
#[inline]
pub(crate) fn precedes<T: Real>(sa: T, a: usize, sb: T, b: usize) -> bool {
    sa > sb || (sa == sb && a < b)
}

/// Writes into `out` the indices of the `out.len()` best-ranked items among
/// `0..n` except `skip` (if any), best first: a bounded heap kept in `out`
/// itself, `O(n log N)` time, no workspace.
///
/// The caller guarantees `out.len() ≤ n − [skip < n]` and that `score` is
/// finite for every item (a NaN would make the order inconsistent, never
/// unsafe).
pub(crate) fn top_n_by<T: Real>(
    n: usize,
    score: impl Fn(usize) -> T,
    skip: Option<usize>,
    out: &mut [usize],
) {
    let m = out.len();
    if m == 0 {
        return;
    }
    // `worse(a, b)`: item a is ranked after item b. The heap keeps the worst
    // retained item at the root.
    let worse = |a: usize, b: usize| precedes(score(b), b, score(a), a);
    let sift_down = |h: &mut [usize], mut i: usize, len: usize| loop {
        let (l, r) = (2 * i + 1, 2 * i + 2);
        let mut w = i;
        if l < len && worse(h[l], h[w]) {
            w = l;
        }
        if r < len && worse(h[r], h[w]) {
            w = r;
        }
        if w == i {
            break;
        }
        h.swap(i, w);
        i = w;
    };
    let mut items = (0..n).filter(|&j| Some(j) != skip);
    for (o, j) in out.iter_mut().zip(&mut items) {
        *o = j;
    }
    for i in (0..m / 2).rev() {
        sift_down(out, i, m);
    }
    for j in items {
        if precedes(score(j), j, score(out[0]), out[0]) {
            out[0] = j;
            sift_down(out, 0, m);
        }
    }
    // Heap sort: move the worst to the end, repeatedly -> best first.
    for end in (1..m).rev() {
        out.swap(0, end);
        sift_down(out, 0, end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selects_best_first_with_ties_by_index_and_skips() {
        let s = [0.5, 0.9, 0.5, 0.1, 0.9, 0.7];
        let mut out = [0usize; 4];
        top_n_by(s.len(), |j| s[j], None, &mut out);
        assert_eq!(out, [1, 4, 5, 0]);
        top_n_by(s.len(), |j| s[j], Some(4), &mut out);
        assert_eq!(out, [1, 5, 0, 2]);
        let mut all = [0usize; 5];
        top_n_by(s.len(), |j| s[j], Some(1), &mut all);
        assert_eq!(all, [4, 5, 0, 2, 3]);
    }
}
