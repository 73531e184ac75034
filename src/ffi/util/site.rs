//! Errors that say where (issue 33): `.arg(pos)` on a reader's result, the
//! buffers a call reads besides the views ([`Given`]) and the argument
//! positions of an entry point ([`Site`]) that the core's own refusals map to.

use super::*;

/// Names the argument a reader's error concerns: `.arg(pos)` with its 1-based
/// position in the entry point's C signature. On an [`Error`] it gives
/// [`Where::arg`]; on a [`Located`] error that already names an argument (a
/// reader that knew better) it keeps that, else it adds `pos` and keeps the
/// view, row and column.
///
/// How an entry point says where (issue 33; `cabi5`'s files can adopt it one
/// entry point at a time, since `?` converts both ways between [`Error`]
/// and [`Located`]):
/// 1. its body runs under `entry_at!(report, { ... })` (a body returning
///    `Result<mvnmf_status, Located>`) instead of `entry!`;
/// 2. each reader's result is tagged: `read_params(params).arg(5)?`,
///    `read_views_at(views, n_views, 1)?` (views at 1, `n_views` at 2: view,
///    row and column of a malformed descriptor come with it),
///    `factors_at(u, &vs, k, &[], null, 6)?`, `outputs(v, k, n, (work, work_bytes), (7, 8))?`;
/// 3. the core's own refusal (after the readers) goes through a [`Site`]
///    listing the argument positions: `.map_err(|e| site.blame(e, &vs, &[...]))?`,
///    which finds the first bad value of the views (or of factors the call
///    reads) and maps the other checks (rank, workspace, options, graph) to
///    their argument;
/// 4. `finish(r, report)` as before (a success writes `where_arg = 0`).
pub(crate) trait Blame<T> {
    /// The error, located at argument `pos` (1-based).
    fn arg(self, pos: u32) -> Result<T, Located>;
}

impl<T> Blame<T> for Result<T, Error> {
    fn arg(self, pos: u32) -> Result<T, Located> {
        self.map_err(|e| Located::new(e, Where::arg(pos)))
    }
}

impl<T> Blame<T> for Result<T, Located> {
    fn arg(self, pos: u32) -> Result<T, Located> {
        self.map_err(|l| Located::new(l.error, l.at.or_arg(pos)))
    }
}

/// The first of `checks` that holds (`(refused, pos)`, in the order the
/// arguments are read) as `e` at its argument: several sizes that must not be
/// 0, or pointers that must not be NULL, each said at its own position.
pub(crate) fn first_at(e: Error, checks: &[(bool, u32)]) -> Result<(), Located> {
    match checks.iter().find(|c| c.0) {
        Some(&(_, pos)) => Err(Located::new(e, Where::arg(pos))),
        None => Ok(()),
    }
}

/// A buffer the core reads values from besides the views, for [`Site::blame`]:
/// the argument position and the buffer(s).
pub(crate) enum Given<'a, T> {
    /// Per-view factors `rows_v × k` (column-major), at this argument.
    Factors(u32, &'a dyn Factors<T>),
    /// Per-view stacks whose layout is not one matrix (deep factors): the
    /// flat index within view `v`'s buffer is given as the row.
    Stacks(u32, &'a dyn Factors<T>),
    /// Per-view buffers of `rows[i] × ·` values (column-major): JSNMF's `h`.
    Rows(u32, &'a dyn Factors<T>, &'a [usize]),
    /// One column-major buffer with this many rows (an encoding `V` read with
    /// `MVNMF_INIT_GIVEN`), at this argument.
    Buf(u32, &'a [T], usize),
}

/// The 1-based argument positions of an entry point that the core's own
/// checks concern (0: the entry point has no such argument): what
/// [`Site::blame`] maps a core error to.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Site {
    /// The view array (values, `InputTooLarge`, item counts that differ).
    pub(crate) views: u32,
    /// The rank (`BadRank`).
    pub(crate) k: u32,
    /// The options (`BadParameter`, `ParallelFor`).
    pub(crate) params: u32,
    /// The graph or labels (`DimensionMismatch` against the views' items,
    /// `BadLabel`, `TooFewLabeled`).
    pub(crate) graph: u32,
    /// `work_bytes` (`WorkspaceTooSmall`).
    pub(crate) work: u32,
    /// Where any other error points (0: nowhere).
    pub(crate) other: u32,
    /// The views share their features (JSNMF's sources) rather than their
    /// items: a `DimensionMismatch` is then rows that differ.
    pub(crate) share_rows: bool,
}

impl Site {
    /// Where the core's refusal `e` points. Values (`NonFiniteInput`,
    /// `NegativeInput`, `InputTooLarge`): the first bad entry of the views
    /// ([`crate::data::locate_bad`], the order the solvers check in; the
    /// nonnegative check for `NegativeInput`), else of the `given` buffers in
    /// order, else the views argument alone. The solvers check the views
    /// before what else they read, so the first bad entry of the views is the
    /// one refused. Run only on the error path.
    pub(crate) fn blame<T: crate::linalg::real::Real, VS: ViewSet<T> + ?Sized>(
        &self,
        e: Error,
        views: &VS,
        given: &[Given<'_, T>],
    ) -> Located {
        let at = match e {
            Error::NonFiniteInput | Error::NegativeInput => {
                let nonneg = e == Error::NegativeInput;
                let hit = |l: Option<(Error, Where)>| l.filter(|(c, _)| *c == e).map(|(_, w)| w);
                hit(crate::data::locate_bad(views, nonneg))
                    .map(|w| w.or_arg(self.views))
                    .or_else(|| given.iter().find_map(|g| locate_given(g, e, views)))
                    .unwrap_or(Where::arg(self.views))
            }
            Error::InputTooLarge => Where::arg(self.views),
            Error::DimensionMismatch => {
                let dim = |i: usize| {
                    let s = views.shape(i);
                    if self.share_rows {
                        s.rows
                    } else {
                        s.cols
                    }
                };
                match (0..views.count()).find(|&i| dim(i) != dim(0)) {
                    Some(i) => Where::view(i).or_arg(self.views),
                    None => Where::arg(if self.graph != 0 {
                        self.graph
                    } else {
                        self.other
                    }),
                }
            }
            Error::BadRank => Where::arg(self.k),
            Error::BadParameter | Error::ParallelFor => Where::arg(self.params),
            Error::BadLabel | Error::TooFewLabeled => Where::arg(self.graph),
            Error::WorkspaceTooSmall => Where::arg(self.work),
            Error::Internal | Error::Cancelled => Where::NONE,
            _ => Where::arg(self.other),
        };
        Located::new(e, at)
    }

    /// The positions of `views`, `k`, `params`, the graph (0: none) and
    /// `work_bytes`; other errors point nowhere, the views share their items.
    pub(crate) const fn at(views: u32, k: u32, params: u32, graph: u32, work: u32) -> Site {
        Site {
            views,
            k,
            params,
            graph,
            work,
            other: 0,
            share_rows: false,
        }
    }

    /// The same positions for views that share their features (rows).
    pub(crate) const fn sharing_rows(self) -> Site {
        Site {
            share_rows: true,
            ..self
        }
    }

    /// [`Site::blame`] for a solver whose `given` buffers (the start) it reads
    /// only under `MVNMF_INIT_GIVEN`: with another `init` they are not looked at.
    pub(crate) fn blame_start<T: crate::linalg::real::Real, VS: ViewSet<T> + ?Sized>(
        &self,
        e: Error,
        views: &VS,
        init: Init,
        given: &[Given<'_, T>],
    ) -> Located {
        self.blame(e, views, if init == Init::Given { given } else { &[] })
    }
}

/// The first entry of a [`Given`] buffer refused with `e`.
fn locate_given<T: crate::linalg::real::Real, VS: ViewSet<T> + ?Sized>(
    g: &Given<'_, T>,
    e: Error,
    views: &VS,
) -> Option<Where> {
    let nonneg = e == Error::NegativeInput;
    let is = |l: Option<(Error, usize, usize)>| l.filter(|(c, _, _)| *c == e);
    match *g {
        Given::Factors(pos, f) | Given::Stacks(pos, f) | Given::Rows(pos, f, _) => (0..f.count())
            .find_map(|i| {
                let rows = match *g {
                    Given::Factors(..) => views.shape(i).rows,
                    Given::Rows(_, _, rows) => rows.get(i).copied().unwrap_or(0),
                    _ => 0,
                };
                let (_, r, c) = is(crate::data::locate_bad_in(f.get(i), rows, nonneg))?;
                Some(Where::entry(i, r, c).or_arg(pos))
            }),
        Given::Buf(pos, xs, rows) => {
            let (_, r, c) = is(crate::data::locate_bad_in(xs, rows, nonneg))?;
            Some(Where::entry(usize::MAX, r, c).or_arg(pos))
        }
    }
}
