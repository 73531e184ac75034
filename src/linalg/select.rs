//! Partial selection: the `N` best-ranked of `n` scored items without a full
//! sort (the retrieval metrics' `top_n`, JSNMF's ranking); and [`sort_by`],
//! the in-place sort of the callers that need a full one.
//!
//! Ranking: higher score first; equal scores by item index, lower first (the
//! library's deterministic tie rule).
//!
//! No panic path: every position is read through `get` or swapped after a
//! `get` found it (core's `sort_unstable*` keep a panic for comparisons that
//! are not a total order, which the optimiser cannot rule out).

use crate::linalg::real::Real;
use crate::linalg::swap_at;

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
    let worse = |a: &usize, b: &usize| precedes(score(*b), *b, score(*a), *a);
    let mut items = (0..n).filter(|&j| Some(j) != skip);
    for (o, j) in out.iter_mut().zip(&mut items) {
        *o = j;
    }
    for i in (0..m / 2).rev() {
        sift_down(out, i, &worse);
    }
    for j in items {
        let Some(root) = out.first_mut() else {
            return;
        };
        if precedes(score(j), j, score(*root), *root) {
            *root = j;
            sift_down(out, 0, &worse);
        }
    }
    // Heap sort: move the worst to the end, repeatedly -> best first.
    sort_heap(out, &worse);
}

/// Restores the heap property below `node`: `first(h[node], child)` for each
/// child (the root is the element no other comes before).
#[inline]
fn sift_down<T: Copy>(h: &mut [T], mut node: usize, first: &impl Fn(&T, &T) -> bool) {
    loop {
        let left = node.wrapping_mul(2).wrapping_add(1);
        let Some(&l) = h.get(left) else {
            return;
        };
        let right = left.wrapping_add(1);
        let (c, x) = match h.get(right) {
            Some(&r) if first(&r, &l) => (right, r),
            _ => (left, l),
        };
        match h.get(node) {
            Some(p) if first(&x, p) => {
                swap_at(h, node, c);
                node = c;
            }
            _ => return,
        }
    }
}

/// A heap (by `first`) sorted in place so that no element comes `first`
/// before an earlier one: the root moved to the end, repeatedly.
fn sort_heap<T: Copy>(h: &mut [T], first: &impl Fn(&T, &T) -> bool) {
    for end in (1..h.len()).rev() {
        let Some(part) = h.get_mut(..=end) else {
            return;
        };
        swap_at(part, 0, end);
        if let Some(rest) = part.get_mut(..end) {
            sift_down(rest, 0, first);
        }
    }
}

/// Sorts `v` in place so that `less(v[j], v[i])` never holds for `i < j`
/// (`less` a strict weak order). Not stable: the callers' orders are total
/// (ties broken by an index) or their equal elements interchangeable, so the
/// result is the one of any sort. Introsort: quicksort (median-of-three
/// pivot, Hoare partition), insertion sort up to 20 elements, heap sort
/// past `2 log₂ n` levels: `O(n log n)`, no
/// allocation, no panic path.
pub(crate) fn sort_by<T: Copy>(v: &mut [T], less: impl Fn(&T, &T) -> bool) {
    let depth = 2 * (usize::BITS - v.len().leading_zeros()) as usize;
    introsort(v, &less, depth);
}

fn introsort<T: Copy>(mut v: &mut [T], less: &impl Fn(&T, &T) -> bool, mut depth: usize) {
    loop {
        if v.len() <= 20 {
            insertion_sort(v, less);
            return;
        }
        let m = match (depth, pivot(v, less)) {
            (1.., Some(pv)) => partition(v, pv, less),
            _ => 0,
        };
        if m == 0 || m >= v.len() {
            heap_sort(v, less);
            return;
        }
        depth -= 1;
        // The smaller side by recursion (depth `O(log n)`), the larger by the loop.
        let (left, right) = core::mem::take(&mut v)
            .split_at_mut_checked(m)
            .unwrap_or_default();
        if left.len() < right.len() {
            introsort(left, less, depth);
            v = right;
        } else {
            introsort(right, less, depth);
            v = left;
        }
    }
}

fn insertion_sort<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    for i in 1..v.len() {
        let mut j = i;
        while j > 0 {
            match (v.get(j - 1), v.get(j)) {
                (Some(a), Some(b)) if less(b, a) => swap_at(v, j - 1, j),
                _ => break,
            }
            j -= 1;
        }
    }
}

fn heap_sort<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    // A max-heap (the greatest at the root), then sorted ascending.
    let greater = |a: &T, b: &T| less(b, a);
    for node in (0..v.len() / 2).rev() {
        sift_down(v, node, &greater);
    }
    sort_heap(v, &greater);
}

/// The median of the first, middle and last elements (`None` when empty).
fn pivot<T: Copy>(v: &[T], less: &impl Fn(&T, &T) -> bool) -> Option<T> {
    let (a, b, c) = (*v.first()?, *v.get(v.len() / 2)?, *v.last()?);
    Some(if less(&a, &b) {
        if less(&b, &c) {
            b
        } else if less(&a, &c) {
            c
        } else {
            a
        }
    } else if less(&a, &c) {
        a
    } else if less(&b, &c) {
        c
    } else {
        b
    })
}

/// Hoare partition around the value `pv` (one of the elements): returns `m`
/// with nothing in `v[..m]` after `pv` and nothing in `v[m..]` before it;
/// `0 < m < v.len()` for two or more elements and a consistent `less` (0 or
/// `len` otherwise: the callers then stop partitioning). Elements equal to
/// the pivot stop both scans, so runs of equal values split evenly.
fn partition<T: Copy>(v: &mut [T], pv: T, less: &impl Fn(&T, &T) -> bool) -> usize {
    let (mut i, mut j) = (0usize, v.len());
    loop {
        while let Some(x) = v.get(i).filter(|_| i < j) {
            if !less(x, &pv) {
                break;
            }
            i += 1;
        }
        while let Some(x) = v.get(j.wrapping_sub(1)).filter(|_| j > i) {
            if !less(&pv, x) {
                break;
            }
            j -= 1;
        }
        // v[..i] not after the pivot, v[j..] not before it.
        if i >= j {
            return i;
        }
        if i + 1 == j {
            // v[i] is equal to the pivot: either side; keep both sides non-empty.
            return if i == 0 { 1 } else { i };
        }
        swap_at(v, i, j - 1);
        i += 1;
        j -= 1;
    }
}

/// Reorders `v` so that the element at `k` is the one a full sort by `less`
/// would put there (`less` a strict weak order; the elements before it not
/// after it, those after it not before it, in no particular order) and
/// returns it; `None` for `k >= v.len()`. Quickselect (median-of-three pivot,
/// the Hoare partition of [`sort_by`]), insertion sort for 20 elements or
/// fewer, heap sort past `2 log₂ n` rounds: `O(n)` expected, `O(n log n)` at
/// worst, no allocation, no panic path. The value returned is the one of any
/// selection; the order left around it is this algorithm's.
pub(crate) fn select_nth_by<T: Copy>(
    v: &mut [T],
    k: usize,
    less: impl Fn(&T, &T) -> bool,
) -> Option<T> {
    if k >= v.len() {
        return None;
    }
    let mut rounds = 2 * (usize::BITS - v.len().leading_zeros()) as usize;
    let (mut lo, mut hi) = (0usize, v.len());
    loop {
        let part = v.get_mut(lo..hi)?;
        if part.len() <= 20 {
            insertion_sort(part, &less);
            return v.get(k).copied();
        }
        let m = match (rounds, pivot(part, &less)) {
            (1.., Some(pv)) => partition(part, pv, &less),
            _ => 0,
        };
        if m == 0 || m >= part.len() {
            heap_sort(part, &less);
            return v.get(k).copied();
        }
        rounds -= 1;
        if k - lo < m {
            hi = lo + m;
        } else {
            lo += m;
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

    #[test]
    fn sort_by_sorts_small_and_large() {
        let mut rng = crate::rng::Rng::new(7);
        for n in [0usize, 1, 2, 5, 20, 21, 22, 100, 1000] {
            let v: std::vec::Vec<u64> = (0..n).map(|_| rng.below(n / 3 + 1) as u64).collect();
            let mut a = v.clone();
            sort_by(&mut a, |x, y| x < y);
            let mut b = v.clone();
            b.sort_unstable();
            assert_eq!(a, b, "n = {n}");
            // Descending, with an index tie-break: a total order.
            let mut idx: std::vec::Vec<usize> = (0..n).collect();
            sort_by(&mut idx, |&i, &j| precedes(v[i] as f64, i, v[j] as f64, j));
            let mut want: std::vec::Vec<usize> = (0..n).collect();
            want.sort_unstable_by(|&i, &j| v[j].cmp(&v[i]).then(i.cmp(&j)));
            assert_eq!(idx, want, "n = {n}");
        }
        // Sorted, reversed, constant, organ-pipe and sawtooth inputs.
        for n in [21usize, 64, 1000, 5000] {
            let shapes: [&dyn Fn(usize) -> u64; 5] = [
                &|i| i as u64,
                &|i| (n - i) as u64,
                &|_| 7,
                &|i| i.min(n - i) as u64,
                &|i| (i % 17) as u64,
            ];
            for f in shapes {
                let v: std::vec::Vec<u64> = (0..n).map(f).collect();
                let mut a = v.clone();
                sort_by(&mut a, |x, y| x < y);
                let mut b = v;
                b.sort_unstable();
                assert_eq!(a, b, "n = {n}");
            }
        }
    }

    #[test]
    fn select_nth_by_finds_the_order_statistic() {
        let mut rng = crate::rng::Rng::new(11);
        for n in [1usize, 2, 3, 16, 17, 40, 1000, 5000] {
            for distinct in [1usize, 3, n] {
                let v: std::vec::Vec<f64> =
                    (0..n).map(|_| rng.below(distinct) as f64 * 0.5).collect();
                let mut sorted = v.clone();
                sorted.sort_unstable_by(|a, b| a.partial_cmp(b).unwrap());
                for k in [0, n / 3, (n - 1) / 2, n - 1] {
                    let mut w = v.clone();
                    let got = select_nth_by(&mut w, k, |a, b| a < b);
                    assert_eq!(got, Some(sorted[k]), "n {n} distinct {distinct} k {k}");
                    assert!(w[..k].iter().all(|&x| x <= sorted[k]));
                    assert!(w[k + 1..].iter().all(|&x| x >= sorted[k]));
                    let mut back = w.clone();
                    back.sort_unstable_by(|a, b| a.partial_cmp(b).unwrap());
                    assert_eq!(back, sorted);
                }
                assert_eq!(select_nth_by(&mut v.clone(), n, |a, b| a < b), None);
            }
        }
    }
}
