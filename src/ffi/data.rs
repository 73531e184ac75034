//! C ABI of the per-view preprocessing (`crate::prep`).

use super::util::*;
use crate::error::Error;
use crate::prep::{self, PrepParams, PrepReport};

cparams! {
    /// Options of `mvnmf_prepare_view`; NULL means `mvnmf_prep_params_default()`.
    pub struct mvnmf_prep_params => PrepParams {
        /// 1: shift each feature (row) with a negative value by its minimum over
        /// the items; 0 (default): refuse negative values (`MVNMF_STATUS_NEGATIVE_INPUT`).
        pub shift: u32,
        /// 1 (default): scale the view to `||X||_F^2 = N`; 0: keep its scale.
        pub normalize: u32,
    };
    /// The default options of `mvnmf_prepare_view` (what a NULL `params` means):
    /// no shift, normalisation on.
    fn mvnmf_prep_params_default;
}

// The core's own struct, under its C name for Rust callers.
pub use crate::prep::PrepReport as mvnmf_prep_report;

export! {
    /// Preprocesses one dense column-major view `x[rows * cols]` (features × items)
    /// in place (DESIGN §9): with `params->shift`, every feature whose minimum over
    /// the items is negative is shifted by it (`x_ij - min_j x_ij`); with
    /// `params->normalize`, the view is then scaled to `||X||_F^2 = N` (`N = cols`).
    /// `report` (may be NULL) receives the raw minimum, the number of shifted
    /// features and the scale. Validated before anything is written:
    /// `MVNMF_STATUS_NON_FINITE_INPUT` (a NaN or infinity, or a scale that would not
    /// be finite), `MVNMF_STATUS_NEGATIVE_INPUT` (a negative value without
    /// `shift`), `MVNMF_STATUS_BAD_PARAMETER` (normalising a view that is all zero
    /// after the shift, or a flag other than 0 or 1). No workspace.
    fn mvnmf_prepare_view(
        rows, cols: usize,
        x: *mut f64 = "`rows × cols` doubles (read, then overwritten)",
        params: *const mvnmf_prep_params,
        report: *mut PrepReport,
    ) {
        let p = read_params(params)?;
        nonzero!(rows, cols);
        let len = rows.checked_mul(cols).ok_or(Error::SizeOverflow)?;
        let r = prep::prepare_view(slice_mut(x, len)?, rows, cols, &p)?;
        put_opt(report, r);
        Ok(mvnmf_status::Ok)
    };

    /// Standardises every feature (row) of one dense column-major view
    /// `x[rows * cols]` (features × items) in place: `(x_ij - mean_i) / sd_i`
    /// with the feature's mean and population standard deviation over the items;
    /// a constant feature becomes 0. `constant` (may be NULL) receives the number
    /// of constant features. For models that take features of any sign (MVEL's
    /// graphs) when a view's features have different units; not for NMF inputs.
    /// Validated before anything is written: `MVNMF_STATUS_ZERO_DIMENSION`,
    /// `MVNMF_STATUS_NON_FINITE_INPUT` (a NaN or infinity, or a mean or deviation
    /// that is not finite). No workspace.
    fn mvnmf_standardize_view(
        rows, cols: usize,
        x: *mut f64 = "`rows × cols` doubles (read, then overwritten)",
        constant: *mut usize = "one `size_t`",
    ) {
        nonzero!(rows, cols);
        let len = rows.checked_mul(cols).ok_or(Error::SizeOverflow)?;
        let k = prep::standardize_view(slice_mut(x, len)?, rows, cols)?;
        put_opt(constant, k);
        Ok(mvnmf_status::Ok)
    };
}
