//! C ABI of the per-view preprocessing (`crate::prep`) and of the views'
//! check that says where (`crate::data::locate_bad`).

use super::util::*;
use crate::data::locate_bad;
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

    /// Checks views as every call that takes them does, and says where the
    /// first refusal points, in the order the calls check: the descriptors
    /// (pointers, sizes, strides, CSC structure), then the values, view by
    /// view, column by column: `MVNMF_STATUS_NON_FINITE_INPUT` (a NaN or
    /// infinity) and, with `nonneg = 1`, `MVNMF_STATUS_NEGATIVE_INPUT` (a value
    /// below 0). Each view is checked on its own: that the views share their
    /// items is the calling function's check. On a refusal `report` says where
    /// (as a solver's refusal does: `where_arg` 1 for `views`, `where_view`,
    /// and for data or a malformed CSC structure `where_row` and `where_col`;
    /// every other field 0); on success `where_arg` is 0.
    ///
    /// The calls that take no report (graph builders, evaluation, queries)
    /// answer a bad value with its status alone: call this on the same views
    /// to find the entry (the Python bindings do, and name it in their
    /// exception). `O(Σ rows·cols)` dense, `O(nnz)` CSC; no workspace.
    fn mvnmf_check_views / mvnmf_check_views_f32(
        views: *const V = "`n_views`",
        n_views: usize,
        nonneg: u32,
        report: *mut mvnmf_report,
    ) at report {
        let nonneg: bool = CField::to_rust(&nonneg).arg(3)?;
        let (vs, _) = read_views_at(views, n_views, 1)?;
        if let Some((e, at)) = locate_bad(&vs, nonneg) {
            return Err(Located::new(e, at.or_arg(1)));
        }
        // Nothing located: a report reused from a refusal says so.
        refuse(report, Where::NONE);
        Ok(mvnmf_status::Ok)
    };
}
