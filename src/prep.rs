//! Per-view preprocessing (DESIGN §9): make a view nonnegative and bring the
//! views to one scale before a multi-view fit.
//!
//! Real views differ in scale by up to 10⁴ (mfeat: `fou` ≤ 0.8, `mor` ≤
//! 17 572), so without care one view dominates every multi-view objective.
//! [`prepare_view`] works in place on a dense column-major `M × N` buffer:
//!
//! 1. **shift** (only when asked, [`PrepParams::shift`]): every feature (row)
//!    whose minimum over the items is negative is shifted by that minimum,
//!    `x_ij ← x_ij − min_j x_ij`, so its smallest value becomes 0; features
//!    without negative values are left as they are. Without `shift` a negative
//!    value is refused ([`Error::NegativeInput`]): NMF needs nonnegative data
//!    and the shift changes the data, so it is never silent.
//! 2. **normalise** ([`PrepParams::normalize`], on by default): the view is
//!    scaled by `s = sqrt(N / ‖X‖²_F)` (after the shift), so `‖X‖²_F = N`, the
//!    same for every view.
//!
//! Everything is validated before anything is written (the buffer is untouched
//! on error): finite values, no negative value without `shift`, and, when
//! normalising, a view that is not all zero after the shift and whose squared
//! norm and scale are representable. Cost: `O(MN)` reads for the checks (one
//! strided pass per feature), `O(MN)` for the shift and the scaling. No
//! allocation; f64 only (the C ABI's type).
//!
//! The sums run in the buffer's order (column-major), so the result is the same
//! bits as the straightforward loops of `examples-c/reproduce.c` before this
//! function existed.
//!
//! [`standardize_view`] is the other preparation, for models that take
//! features of any sign (MVEL's RBF and CCA graphs): every feature to mean 0
//! and variance 1, so a feature with large units (a year next to a
//! log-count) does not dominate the distances.

use crate::error::Error;

/// Options of [`prepare_view`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrepParams {
    /// Shift each feature with a negative value by its minimum (default off).
    pub shift: bool,
    /// Scale the view to `‖X‖²_F = N` (default on).
    pub normalize: bool,
}

impl Default for PrepParams {
    /// No shift (negative values are refused), normalisation on.
    fn default() -> Self {
        PrepParams {
            shift: false,
            normalize: true,
        }
    }
}

/// What `prepare_view` did.
// `repr(C)`: the C ABI's `mvnmf_prep_report` (renamed in cbindgen.toml), these docs
// included: a change here changes the C ABI.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PrepReport {
    /// The smallest value of the view before the shift.
    pub min: f64,
    /// Features (rows) shifted by their minimum.
    pub shifted: usize,
    /// The factor the view was multiplied by (1 when not normalising).
    pub scale: f64,
}

/// Minimum and maximum of row `r` of the column-major `rows × cols` buffer;
/// `NonFiniteInput` at the first NaN or infinity.
fn row_range(x: &[f64], rows: usize, cols: usize, r: usize) -> Result<(f64, f64), Error> {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    // Row r: every `rows`-th value from r (`x` is `rows × cols`, checked).
    for &v in x.iter().skip(r).step_by(rows.max(1)).take(cols) {
        if !v.is_finite() {
            return Err(Error::NonFiniteInput);
        }
        lo = if v < lo { v } else { lo };
        hi = if v > hi { v } else { hi };
    }
    Ok((lo, hi))
}

/// Shifts (if asked) and normalises (if asked) the dense column-major view
/// `x` of `rows × cols` (features × items) in place; see the module doc.
///
/// Errors, with `x` untouched: `ZeroDimension` (`rows` or `cols` is 0),
/// `SizeOverflow`, `DimensionMismatch` (`x.len() != rows·cols`),
/// `NonFiniteInput` (a NaN or infinity, or a normalisation whose squared norm
/// or scale would not be finite), `NegativeInput` (a negative value without
/// `shift`), `BadParameter` (`normalize` on a view that is all zero after the
/// shift).
pub fn prepare_view(
    x: &mut [f64],
    rows: usize,
    cols: usize,
    params: &PrepParams,
) -> Result<PrepReport, Error> {
    if rows == 0 || cols == 0 {
        return Err(Error::ZeroDimension);
    }
    let len = rows.checked_mul(cols).ok_or(Error::SizeOverflow)?;
    if x.len() != len {
        return Err(Error::DimensionMismatch);
    }
    // Checks, reading only: the smallest value, and the largest value after
    // the shift (row max − row min for shifted rows: the same subtraction).
    let (mut min, mut top, mut shifted) = (f64::INFINITY, 0.0f64, 0usize);
    for r in 0..rows {
        let (lo, hi) = row_range(x, rows, cols, r)?;
        min = if lo < min { lo } else { min };
        let after = if lo < 0.0 { hi - lo } else { hi };
        top = if after > top { after } else { top };
        shifted += usize::from(lo < 0.0);
    }
    if min < 0.0 && !params.shift {
        return Err(Error::NegativeInput);
    }
    if params.normalize {
        if top == 0.0 {
            return Err(Error::BadParameter);
        }
        // ‖X‖² lies in [top², len·top²]: both it and N/‖X‖² must be finite
        // and nonzero.
        let sq = top * top;
        let representable = sq >= f64::MIN_POSITIVE
            && (2.0 * sq * len as f64).is_finite()
            && (cols as f64 / sq).is_finite();
        if !representable {
            return Err(Error::NonFiniteInput);
        }
    }
    // Writes.
    for r in (0..rows).filter(|_| min < 0.0) {
        let (lo, _) = row_range(x, rows, cols, r)?;
        if lo < 0.0 {
            let row = x.iter_mut().skip(r).step_by(rows.max(1)).take(cols);
            row.for_each(|v| *v -= lo);
        }
    }
    let mut scale = 1.0;
    if params.normalize {
        let mut ss = 0.0;
        for &v in x.iter() {
            ss += v * v;
        }
        scale = libm::sqrt(cols as f64 / ss);
        for v in x.iter_mut() {
            *v *= scale;
        }
    }
    Ok(PrepReport {
        min,
        shifted: if min < 0.0 { shifted } else { 0 },
        scale,
    })
}

/// Mean and population standard deviation of row `r` of the column-major
/// `rows × cols` buffer (two passes: the mean, then the squared deviations);
/// `NonFiniteInput` at a NaN or infinity, or where either is not finite.
fn row_moments(x: &[f64], rows: usize, cols: usize, r: usize) -> Result<(f64, f64), Error> {
    let mut sum = 0.0;
    for &v in x.iter().skip(r).step_by(rows.max(1)).take(cols) {
        if !v.is_finite() {
            return Err(Error::NonFiniteInput);
        }
        sum += v;
    }
    let mean = sum / cols as f64;
    let mut ss = 0.0;
    for &v in x.iter().skip(r).step_by(rows.max(1)).take(cols) {
        let d = v - mean;
        ss += d * d;
    }
    let sd = libm::sqrt(ss / cols as f64);
    if !mean.is_finite() || !sd.is_finite() || (sd > 0.0 && !(1.0 / sd).is_finite()) {
        return Err(Error::NonFiniteInput);
    }
    Ok((mean, sd))
}

/// Standardises every feature (row) of the dense column-major view `x` of
/// `rows × cols` (features × items) in place: `x_ij ← (x_ij − μ_i) / σ_i`
/// with the feature's mean `μ_i` and population standard deviation `σ_i`
/// over the items, so each feature has mean 0 and variance 1. A constant
/// feature (`σ_i = 0`) becomes 0. Returns the number of constant features.
///
/// For models that take features of any sign (MVEL's RBF and CCA graphs): a
/// view whose features have different units (a year next to a log-count)
/// has distances dominated by the widest feature otherwise. Not for NMF
/// inputs (the result has negative values); [`prepare_view`] is.
///
/// Errors, with `x` untouched: `ZeroDimension`, `SizeOverflow`,
/// `DimensionMismatch` (`x.len() != rows·cols`), `NonFiniteInput` (a NaN or
/// infinity, or a mean or deviation that is not finite, e.g. values near
/// `f64::MAX`, or a deviation so small that its inverse is not). Cost: three passes over the buffer for the checks and the
/// writes, no allocation.
pub fn standardize_view(x: &mut [f64], rows: usize, cols: usize) -> Result<usize, Error> {
    if rows == 0 || cols == 0 {
        return Err(Error::ZeroDimension);
    }
    let len = rows.checked_mul(cols).ok_or(Error::SizeOverflow)?;
    if x.len() != len {
        return Err(Error::DimensionMismatch);
    }
    let mut constant = 0usize;
    for r in 0..rows {
        let (_, sd) = row_moments(x, rows, cols, r)?;
        constant += usize::from(sd == 0.0);
    }
    // Writes: the same arithmetic again, so it cannot fail now.
    for r in 0..rows {
        let (mean, sd) = row_moments(x, rows, cols, r)?;
        let inv = if sd > 0.0 { 1.0 / sd } else { 0.0 };
        let row = x.iter_mut().skip(r).step_by(rows.max(1)).take(cols);
        row.for_each(|v| *v = (*v - mean) * inv);
    }
    Ok(constant)
}
