//! Stratified random labeled/unlabeled split.

use crate::error::Error;
use crate::linalg::select::sort_by;
use crate::linalg::{at, set_at, swap_at};
use crate::rng::Rng;
use crate::work::{Stack, WorkReq};

/// Workspace bytes of [`stratified_split`] for `n` items.
pub fn stratified_split_workspace(n: usize) -> Result<usize, Error> {
    WorkReq::new::<usize>(n).bytes()
}

/// Marks, in every class, `round(fraction · n_c)` items as labeled (at least one
/// when `fraction > 0` and the class has items), chosen uniformly at random from
/// `seed` (a partial Fisher–Yates shuffle per class, classes in order).
///
/// `labels[j] < n_classes` for every item (else [`Error::BadLabel`]);
/// `0 ≤ fraction ≤ 1` (else [`Error::BadParameter`]). Writes `labeled[j]`.
/// Cost `O(N log N)` time (a sort of the items by class; classes without items
/// cost nothing, so any `n_classes` is cheap), `N` indices of workspace.
pub fn stratified_split(
    labels: &[u32],
    n_classes: usize,
    fraction: f64,
    seed: u64,
    labeled: &mut [bool],
    work: &mut [u8],
) -> Result<(), Error> {
    split_into(
        labels, n_classes, fraction, seed, labeled, true, false, work,
    )
}

/// [`stratified_split`] writing `yes` / `no` flags of any type (the C ABI
/// writes `uint8_t` 1 / 0).
#[allow(clippy::too_many_arguments)]
pub(crate) fn split_into<F: Copy>(
    labels: &[u32],
    n_classes: usize,
    fraction: f64,
    seed: u64,
    labeled: &mut [F],
    yes: F,
    no: F,
    work: &mut [u8],
) -> Result<(), Error> {
    let n = labels.len();
    if n == 0 || n_classes == 0 {
        return Err(Error::ZeroDimension);
    }
    if labeled.len() != n {
        return Err(Error::DimensionMismatch);
    }
    if !(0.0..=1.0).contains(&fraction) {
        return Err(Error::BadParameter);
    }
    if labels.iter().any(|&l| l as usize >= n_classes) {
        return Err(Error::BadLabel);
    }
    WorkReq::new::<usize>(n).check(work.len())?;
    let mut st = Stack::new(work);
    let idx: &mut [usize] = st.take(n)?;
    let mut rng = Rng::new(seed);
    labeled.fill(no);
    // The items grouped by class, classes increasing and items in index order
    // within a class: the same per-class lists (and so the same random draws) as
    // one pass per class, but `O(N log N)` whatever `n_classes` is: the work is
    // bounded by the input's size, never by a count the caller passes (a pass per
    // class took seconds for `n_classes = 2^28` and never ended for `SIZE_MAX`).
    for (j, x) in idx.iter_mut().enumerate() {
        *x = j;
    }
    // A total order (ties by index): the order of any sort.
    let label = |j: usize| at(labels, j);
    sort_by(idx, |&a, &b| (label(a), a) < (label(b), b));
    let mut rest = &mut idx[..];
    while let Some(&first) = rest.first() {
        let c = label(first);
        let nc = rest.iter().take_while(|&&j| label(j) == c).count().max(1);
        let (class, after) = core::mem::take(&mut rest)
            .split_at_mut_checked(nc)
            .unwrap_or_default();
        rest = after;
        let mut take = libm::round(fraction * nc as f64) as usize;
        if fraction > 0.0 {
            take = take.max(1);
        }
        let take = take.min(class.len());
        for t in 0..take {
            let r = t + rng.below(nc - t);
            swap_at(class, t, r);
            if let Some(&j) = class.get(t) {
                set_at(labeled, j, yes);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stratified_counts_and_determinism() {
        let labels: std::vec::Vec<u32> = (0..100).map(|j| (j % 3) as u32).collect(); // 34, 33, 33
        let mut w = std::vec![0u8; stratified_split_workspace(100).unwrap()];
        let mut a = std::vec![false; 100];
        stratified_split(&labels, 3, 0.3, 7, &mut a, &mut w).unwrap();
        for c in 0..3u32 {
            let nc = labels.iter().filter(|&&l| l == c).count();
            let got = (0..100).filter(|&j| a[j] && labels[j] == c).count();
            assert_eq!(got, (0.3 * nc as f64).round() as usize);
        }
        let mut b = std::vec![false; 100];
        stratified_split(&labels, 3, 0.3, 7, &mut b, &mut w).unwrap();
        assert_eq!(a, b);
        stratified_split(&labels, 3, 0.3, 8, &mut b, &mut w).unwrap();
        assert_ne!(a, b);
        assert_eq!(
            stratified_split(&labels, 2, 0.3, 8, &mut b, &mut w),
            Err(Error::BadLabel)
        );
        assert_eq!(
            stratified_split(&labels, 3, 1.5, 8, &mut b, &mut w),
            Err(Error::BadParameter)
        );
    }
}
