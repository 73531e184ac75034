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
    // Every index is checked (`get`, and `swap` behind the same test): no
    // panic path.
    let sift_down = |h: &mut [usize], mut i: usize, len: usize| {
        let len = len.min(h.len());
        let h = &mut h[..len];
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let Some(&hi) = h.get(i) else { break };
            let (mut w, mut hw) = (i, hi);
            if let Some(&hl) = h.get(l) {
                if worse(hl, hw) {
                    (w, hw) = (l, hl);
                }
            }
            if let Some(&hr) = h.get(r) {
                if worse(hr, hw) {
                    w = r;
                }
            }
            if w == i || w >= h.len() {
                break;
            }
            h.swap(i, w);
            i = w;
        }
    };
    let mut items = (0..n).filter(|&j| Some(j) != skip);
    for (o, j) in out.iter_mut().zip(&mut items) {
        *o = j;
    }
    for i in (0..m / 2).rev() {
        sift_down(out, i, m);
    }
    for j in items {
        let Some(top) = out.first_mut() else { break };
        if precedes(score(j), j, score(*top), *top) {
            *top = j;
            sift_down(out, 0, m);
        }
    }
    // Heap sort: move the worst to the end, repeatedly -> best first.
    for end in (1..m).rev() {
        if end < out.len() {
            out.swap(0, end);
        }
        sift_down(out, 0, end);
    }
}

/// Sorts `v` ascending: an insertion sort up to 24 values, a heap sort
/// (`O(n log n)`) above, in place, no workspace, every index checked. For a total order (integers) the result is the
/// one sorted order, the same as `sort_unstable`'s; unlike core's sorts it has
/// no panic path (they keep one for comparisons that are not a total order,
/// which the optimiser cannot rule out).
pub(crate) fn sort_unstable<T: Ord + Copy>(v: &mut [T]) {
    // Short slices (a graph row, typically): insertion sort.
    if v.len() <= 24 {
        for i in 1..v.len() {
            let mut j = i;
            while let (Some(&a), Some(&b)) = (j.checked_sub(1).and_then(|p| v.get(p)), v.get(j)) {
                if a <= b {
                    break;
                }
                v.swap(j - 1, j);
                j -= 1;
            }
        }
        return;
    }
    let sift_down = |h: &mut [T], mut i: usize| loop {
        let (l, r) = (2 * i + 1, 2 * i + 2);
        let Some(&hi) = h.get(i) else { break };
        let (mut w, mut hw) = (i, hi);
        if let Some(&hl) = h.get(l) {
            if hl > hw {
                (w, hw) = (l, hl);
            }
        }
        if let Some(&hr) = h.get(r) {
            if hr > hw {
                w = r;
            }
        }
        if w == i || w >= h.len() {
            break;
        }
        h.swap(i, w);
        i = w;
    };
    let n = v.len();
    for i in (0..n / 2).rev() {
        sift_down(v, i);
    }
    for end in (1..n).rev() {
        if end < v.len() {
            v.swap(0, end);
        }
        if let Some(h) = v.get_mut(..end) {
            sift_down(h, 0);
        }
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

    /// The sort gives core's sorted order (duplicates, lengths 0..40: the
    /// insertion sort of short slices and the heap sort of longer ones).
    #[test]
    fn heap_sort_sorts() {
        let mut rng = crate::rng::Rng::new(5);
        for n in 0..40 {
            let mut a: std::vec::Vec<u64> = (0..n).map(|_| (rng.uniform() * 9.0) as u64).collect();
            let mut b = a.clone();
            sort_unstable(&mut a);
            b.sort_unstable();
            assert_eq!(a, b);
        }
    }
}
