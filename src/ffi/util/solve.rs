//! The body of a fit/encode pair (issue 33): once a call has read its options
//! (and graph), what is left is the same for every model — the views, the
//! bases (written by the fit, read by the encode), the encoding and the
//! workspace read, the model run under the progress callback, a refusal
//! located, the report written. `mvsl.rs`'s `solve` reads the options (and
//! graph, and deep's layers) of `mvnmf_mvsl_*` and `mvnmf_deep_*`, `nmf.rs`'s
//! `joint` the options of `mvnmf_nmf_*` and `mvnmf_joint_nmf_*`, and each hands
//! the rest to [`Site::solve`] with the model's two calls.

use super::*;
use crate::steps::Monitor;

/// The bases of a call: written by a fit, read by an encode.
pub(crate) enum Bases<T> {
    Fit(*const *mut T),
    Encode(*const *const T),
}

impl Site {
    /// The rest of a fit's or an encode's body: the views (argument 1), the
    /// bases `u` (argument `at`; `M_v × k` each, or deep stacks when `layers`
    /// is not empty), `v` (`at + 1`, `k × N`) and the workspace (`at + 2`);
    /// then `fit` or `encode` as `u` says, a refusal located through this
    /// site (the fit's start only under `MVNMF_INIT_GIVEN`), and the report
    /// written.
    #[allow(clippy::type_complexity)]
    pub(crate) unsafe fn solve<D: ViewDesc>(
        &self,
        (views, n_views): (*const D, usize),
        (k, layers): (usize, &[usize]),
        (u, v, at): (Bases<D::T>, *mut D::T, u32),
        (init, (work, work_bytes, progress, user, report)): (Init, Tail),
        fit: impl FnOnce(
            &CViews<'_, D>,
            &mut CFactors<'_, *mut D::T, D>,
            &mut [D::T],
            &mut [u8],
            Option<Monitor<'_>>,
        ) -> Result<Report, Error>,
        encode: impl FnOnce(
            &CViews<'_, D>,
            &CFactors<'_, *const D::T, D>,
            &mut [D::T],
            &mut [u8],
            Option<Monitor<'_>>,
        ) -> Result<Report, Error>,
    ) -> Result<mvnmf_status, Located> {
        c_unsafe!({
            let (vs, n) = read_views_at(views, n_views, 1)?;
            // How the blame reads the bases: one matrix a view, or deep stacks.
            let given = if layers.is_empty() {
                Given::Factors
            } else {
                Given::Stacks
            };
            let r = match u {
                Bases::Fit(u) => {
                    let mut us = factors_at(u, &vs, k, layers, |p: *mut D::T| p.is_null(), at)?;
                    let (vv, w) = outputs(v, k, n, (work, work_bytes), (at + 1, at + 2))?;
                    let r = with_monitor(progress, user, |m| fit(&vs, &mut us, &mut *vv, w, m));
                    r.map_err(|e| {
                        let start = [given(at, &us), Given::Buf(at + 1, &*vv, k)];
                        self.blame_start(e, &vs, init, &start)
                    })
                }
                Bases::Encode(u) => {
                    let us = factors_at(u, &vs, k, layers, |p: *const D::T| p.is_null(), at)?;
                    let (vv, w) = outputs(v, k, n, (work, work_bytes), (at + 1, at + 2))?;
                    let r = with_monitor(progress, user, |m| encode(&vs, &us, vv, w, m));
                    r.map_err(|e| self.blame(e, &vs, &[given(at, &us)]))
                }
            }?;
            finish(r, report).arg(0)
        })
    }
}
