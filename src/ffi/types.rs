//! The C types every entry point shares (status, views, objective, report,
//! parallelism, progress) and the exports that read them.

use core::ffi::{c_char, c_int, c_void};

use crate::error::Error;
use crate::ffi::util::CField;
use crate::par::{HostPool, Parallel, Task};
use crate::steps::{Init, Objective, Phase, Report, Stop, StopRule, Term};

/// The C status enum from the one list in `src/error.rs` (`Ok = 0`, then every
/// `Error` with its code and docs), and `Error` → `mvnmf_status` by name.
macro_rules! c_status {
    ($($(#[$doc:meta])* $name:ident = $code:literal, $msg:literal;)*) => {
        /// Status codes. Values are stable; retired values stay reserved.
        #[repr(u32)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum mvnmf_status {
            /// Success.
            Ok = 0,
            $($(#[$doc])* $name = $code,)*
        }
        impl From<Error> for mvnmf_status {
            fn from(e: Error) -> Self {
                match e {
                    $(Error::$name => mvnmf_status::$name,)*
                }
            }
        }
    };
}
crate::error::error_list!(c_status);

/// `mvnmf_view.kind`: dense column-major (`values`, `col_stride`).
pub const MVNMF_VIEW_DENSE: u32 = 0;
/// `mvnmf_view.kind`: compressed sparse columns (`col_ptr`, `row_idx`, `values`).
pub const MVNMF_VIEW_CSC: u32 = 1;
/// `init`: seeded random start.
pub const MVNMF_INIT_RANDOM: u32 = 0;
/// `init`: warm start from the contents of the output buffers.
pub const MVNMF_INIT_GIVEN: u32 = 1;
/// `mvnmf_report.stop`: `max_iter` iterations ran.
pub const MVNMF_STOP_MAX_ITER: u32 = 0;
/// `mvnmf_report.stop`: relative decrease at most `tol`.
pub const MVNMF_STOP_CONVERGED: u32 = 1;
/// `mvnmf_report.stop`: the callback asked to stop.
pub const MVNMF_STOP_CANCELLED: u32 = 2;
/// `stop_rule` (default): after every iteration, stop when the objective's
/// relative decrease `(f_{t-1} - f_t) / |f_{t-1}|` is at most `tol`.
pub const MVNMF_STOP_RULE_EVERY_ITERATION: u32 = 0;
/// `stop_rule`: scikit-learn's (`NMF(solver="mu")`): with `e_t = sqrt(2 f_t)`,
/// at iterations 10, 20, ... stop when `(e_{t-10} - e_t) / e_0 < tol`; the
/// same `tol` and start give scikit-learn's `n_iter_`.
pub const MVNMF_STOP_RULE_SKLEARN: u32 = 1;

/// One list (C code => Rust variant) gives an enum's conversions both ways
/// (`CField<Enum> for u32`; a code not listed is `MVNMF_STATUS_BAD_PARAMETER`),
/// in the manner of rustls-ffi's `u32_enum_builder!`:
/// `c_enum!(Init { MVNMF_INIT_RANDOM => Random, MVNMF_INIT_GIVEN => Given });`
macro_rules! c_enum {
    ($r:ident { $($code:ident => $v:ident),+ $(,)? }) => {
        impl $crate::ffi::util::CField<$r> for u32 {
            fn to_rust(&self) -> Result<$r, $crate::error::Error> {
                match *self {
                    $($code => Ok($r::$v),)+
                    _ => Err($crate::error::Error::BadParameter),
                }
            }
            fn from_rust(r: &$r) -> u32 {
                match r {
                    $($r::$v => $code,)+
                }
            }
        }
    };
}
pub(crate) use c_enum;

c_enum!(StopRule {
    MVNMF_STOP_RULE_EVERY_ITERATION => EveryIteration,
    MVNMF_STOP_RULE_SKLEARN => ScikitLearn,
});
c_enum!(Init { MVNMF_INIT_RANDOM => Random, MVNMF_INIT_GIVEN => Given });

/// A C view descriptor of either precision: what the validation and the
/// [`ViewSet`](crate::data::ViewSet) adapter read.
pub(crate) trait ViewDesc {
    /// The scalar of `values`.
    type T: crate::linalg::real::Real;
    fn kind(&self) -> u32;
    fn rows(&self) -> usize;
    fn cols(&self) -> usize;
    fn values(&self) -> *const Self::T;
    fn col_stride(&self) -> usize;
    fn col_ptr(&self) -> *const usize;
    fn row_idx(&self) -> *const usize;
}

/// The view descriptors of both precisions: one field list (the scalar of
/// `values` apart, `$s`) gives each struct and its [`ViewDesc`], whose methods
/// read the fields of the same names.
macro_rules! c_views {
    ($($(#[$doc:meta])* pub struct $name:ident($s:ty);)*) => {$(
        $(#[$doc])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug)]
        pub struct $name {
            /// `MVNMF_VIEW_DENSE` or `MVNMF_VIEW_CSC`.
            pub kind: u32,
            /// Features.
            pub rows: usize,
            /// Items.
            pub cols: usize,
            /// Dense entries, or the CSC nonzero values.
            pub values: *const $s,
            /// Dense: distance between column starts (`>= rows`).
            pub col_stride: usize,
            /// CSC: `cols + 1` column pointers.
            pub col_ptr: *const usize,
            /// CSC: row index of each nonzero.
            pub row_idx: *const usize,
        }
        impl ViewDesc for $name {
            type T = $s;
            c_views!(@get kind: u32, rows: usize, cols: usize, values: *const $s);
            c_views!(@get col_stride: usize, col_ptr: *const usize, row_idx: *const usize);
        }
    )*};
    (@get $($f:ident: $t:ty),*) => {
        $(
            fn $f(&self) -> $t {
                self.$f
            }
        )*
    };
}

c_views! {
    /// One view of the data, `rows × cols` (features × items).
    ///
    /// Dense (`kind = MVNMF_VIEW_DENSE`): entry `(i, j)` at `values[i + j*col_stride]`,
    /// `col_stride >= rows`; `col_ptr`, `row_idx` unused.
    /// CSC (`kind = MVNMF_VIEW_CSC`): column `j` holds rows
    /// `row_idx[col_ptr[j] .. col_ptr[j+1]]` (strictly increasing) with their
    /// `values`; `col_ptr` has `cols + 1` entries starting at 0; `col_stride` unused.
    pub struct mvnmf_view(f64);

    /// `mvnmf_view` with single-precision values: the views of the `_f32` entry
    /// points (`mvnmf_nmf_fit_f32`, ...), whose factors and encodings are `float`
    /// too (objectives, weights, graphs and reports stay `double`). Same fields,
    /// same rules. Magnitudes: the `_f32` solvers refuse data with
    /// `½ Σ_v ‖X_v‖²_F > 2^103` (about 1e31: entries above about 4e15) with
    /// `MVNMF_STATUS_INPUT_TOO_LARGE`, where the double ones refuse above `2^999`,
    /// so that the factors stay representable in `float`.
    pub struct mvnmf_view_f32(f32);
}

/// `mvnmf_term.kind`: `½ Σ_v ‖X_v − U_v V‖²_F` (the DESIGN §2 family's parts
/// come in this order; other models add their kinds after these).
pub const MVNMF_TERM_RECONSTRUCTION: u32 = 0;
/// `mvnmf_term.kind`: `α Σ_v R(U_v)` (group sparsity).
pub const MVNMF_TERM_SPARSITY: u32 = 1;
/// `mvnmf_term.kind`: `β/2 tr(V La Vᵀ)` (affinity graph).
pub const MVNMF_TERM_AFFINITY: u32 = 2;
/// `mvnmf_term.kind`: `−β/2 tr(V Lp Vᵀ)` (penalty graph).
pub const MVNMF_TERM_PENALTY: u32 = 3;
/// `mvnmf_term.kind`: `γ Σ V`.
pub const MVNMF_TERM_L1: u32 = 4;
/// `mvnmf_term.kind`: `−tr(Yᵀ Q H)` (MVEL's fit to the given labels).
pub const MVNMF_TERM_LABEL_FIT: u32 = 5;
/// `mvnmf_term.kind`: `θ₂ tr(Hᵀ Qᵀ L_ρ Q H)` (MVEL's label correlations).
pub const MVNMF_TERM_LABEL_CORRELATION: u32 = 6;
/// `mvnmf_term.kind`: `Σ_v D_β(X_v | U_v V)` (the β-divergence of `mvnmf_beta_nmf_fit`).
pub const MVNMF_TERM_DIVERGENCE: u32 = 7;
/// Most parts an `mvnmf_objective` carries.
pub const MVNMF_MAX_TERMS: usize = 8;
const _: () = assert!(MVNMF_MAX_TERMS == crate::steps::MAX_TERMS);

/// One named part of an objective.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mvnmf_term {
    /// `MVNMF_TERM_*` (`mvnmf_term_name` gives its name).
    pub kind: u32,
    /// 0 (explicit, so the struct has no padding bytes and equal reports
    /// compare equal byte for byte).
    pub reserved: u32,
    /// Its value, weighted as it enters the total.
    pub value: f64,
}

/// The objective: the total and the model's named parts (`terms[0 ..
/// n_terms]`; the DESIGN §2 family reports its five parts, unused ones as 0).
/// Read a part with `mvnmf_objective_term`. A model with other parts uses
/// other kinds, not another struct.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mvnmf_objective {
    /// Sum of the weighted parts.
    pub total: f64,
    /// Parts used in `terms` (at most `MVNMF_MAX_TERMS`).
    pub n_terms: u32,
    /// 0 (no padding bytes: see `mvnmf_term.reserved`).
    pub reserved: u32,
    /// The parts; unused entries are zero.
    pub terms: [mvnmf_term; 8],
}

/// The value of the part `kind` (`MVNMF_TERM_*`) of `objective`; 0 when the
/// model has no such part or `objective` is NULL.
///
/// # Safety
/// `objective` is NULL or valid for reading one struct.
#[no_mangle]
pub unsafe extern "C" fn mvnmf_objective_term(objective: *const mvnmf_objective, kind: u32) -> f64 {
    c_unsafe!({
        if objective.is_null() {
            return 0.0;
        }
        let o = &*objective;
        o.terms
            .iter()
            .take((o.n_terms as usize).min(MVNMF_MAX_TERMS))
            .find(|t| t.kind == kind)
            .map_or(0.0, |t| t.value)
    })
}

/// The name of a part (`MVNMF_TERM_*`), static and NUL-terminated;
/// "unknown" for other values.
#[no_mangle]
pub extern "C" fn mvnmf_term_name(kind: u32) -> *const c_char {
    Term::from_code(kind)
        .map_or("unknown\0", |t| t.c_name())
        .as_ptr()
        .cast()
}

/// `mvnmf_progress.phase`: the solver's outer iterations (`iter`, `objective` are the
/// iterate's). The solvers report only this phase.
pub const MVNMF_PHASE_ITERATIONS: u32 = 0;
/// `mvnmf_progress.phase`: the pipeline's set-up before the graph (the fusion weights by
/// kernel–target alignment); `iter` 0, objective zero.
pub const MVNMF_PHASE_SETUP: u32 = 1;
/// `mvnmf_progress.phase`: the pipeline's neighbour graph build; `iter` 0, objective zero.
pub const MVNMF_PHASE_GRAPH: u32 = 2;

/// What the progress callback receives (ABI 5: `phase` and `fraction` added; `iter` and
/// `objective` keep their offsets, `phase` takes the former padding after `iter`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mvnmf_progress {
    /// Outer iterations completed (0 = the start; 0 in the set-up phases).
    pub iter: u32,
    /// `MVNMF_PHASE_*`: which phase this is about.
    pub phase: u32,
    /// Objective at this iterate (`MVNMF_PHASE_ITERATIONS`; zero in the set-up phases).
    pub objective: mvnmf_objective,
    /// How far the phase is, in [0, 1]: `iter / max_iter` in the iterations (a run that
    /// converges stops before 1), 0 at the start and 1 at the end of a set-up phase.
    pub fraction: f64,
}

c_enum!(Phase {
    MVNMF_PHASE_ITERATIONS => Iterations,
    MVNMF_PHASE_SETUP => Setup,
    MVNMF_PHASE_GRAPH => Graph,
});
c_enum!(Stop {
    MVNMF_STOP_MAX_ITER => MaxIter,
    MVNMF_STOP_CONVERGED => Converged,
    MVNMF_STOP_CANCELLED => Cancelled,
});

/// What a solver reports: written on `MVNMF_STATUS_OK` and
/// `MVNMF_STATUS_CANCELLED`, and — the one exception to "on error nothing is
/// written" — by every call that takes a report (the fits and encodes of NMF,
/// joint and β-NMF, MvSL, deep, JSNMF, MVEL, the pipeline, the distributed
/// fits, `mvnmf_check_views`, and their `_f32` twins) on a refusal too: then
/// every field is zero but `where_*`.
///
/// `where_*` (issue 33) say where a refusal points, as LAPACK's `INFO = -i`:
/// `where_arg` is the 1-based position of the offending argument in the
/// call's C signature (0: none applies, and always 0 on success); for data,
/// `where_view`, `where_row` and `where_col` are the 0-based view (index into
/// the `views` array, or into a per-view factor array such as `u`), row and
/// column of the first bad entry (a NaN, a negative value, a malformed CSC
/// index: `where_row` the offending row index, `SIZE_MAX` when the column's
/// pointers are wrong); `SIZE_MAX` where a part does not apply.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mvnmf_report {
    /// Outer iterations run.
    pub iterations: u32,
    /// `MVNMF_STOP_MAX_ITER`, `MVNMF_STOP_CONVERGED` or `MVNMF_STOP_CANCELLED`.
    pub stop: u32,
    /// Views whose basis ended entirely zero.
    pub dead_views: u32,
    /// Objective at the start.
    pub initial: mvnmf_objective,
    /// Objective at the returned factors.
    pub objective: mvnmf_objective,
    /// On a refusal: the 1-based position of the offending argument (0: none).
    pub where_arg: u32,
    /// On a refusal: the 0-based view of the first bad entry (`SIZE_MAX`: n/a).
    pub where_view: usize,
    /// On a refusal: the 0-based row of the first bad entry (`SIZE_MAX`: n/a).
    pub where_row: usize,
    /// On a refusal: the 0-based column of the first bad entry (`SIZE_MAX`: n/a).
    pub where_col: usize,
}

/// One task of a parallel region: the host's `parallel_for` calls
/// `task(task_ctx, i)` once for every `i < n_tasks`.
pub type mvnmf_task_fn = Option<unsafe extern "C" fn(task_ctx: *mut c_void, i: usize)>;

/// A host's parallel-for: run `task(task_ctx, i)` once for every
/// `i < n_tasks`, on any threads and in any order, and return when every call
/// has returned. `ctx` is `mvnmf_parallel.ctx`. The tasks never call back into
/// the host's pool and never block on each other, so a pool of any size
/// (one thread included) completes them.
pub type mvnmf_parallel_for_fn = Option<
    unsafe extern "C" fn(
        n_tasks: usize,
        task: mvnmf_task_fn,
        task_ctx: *mut c_void,
        ctx: *mut c_void,
    ),
>;

/// Who runs a solver's parallel regions (a member of the solvers' options).
/// The results are the same bits whatever is chosen: every region is split
/// into tasks by the problem's shape alone, never by the number of threads.
///
/// * `parallel_for` NULL: the library's own pool with `threads` threads
///   (1, the default: serial on the calling thread; 0: one per core). Its
///   workers keep spinning for work up to 2 ms after each region, so that
///   the next region of a running fit finds them awake: a worker's core
///   stays busy that long after the call returns;
/// * `parallel_for` set: the host's pool (TBB, OpenMP, its own), `threads`
///   ignored; `ctx` is passed back to it. The struct must stay unchanged
///   until the call returns (the library reads it in place). A callback that
///   does not run every task exactly once gives `MVNMF_STATUS_PARALLEL_FOR`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mvnmf_parallel {
    /// Threads of the built-in pool when `parallel_for` is NULL (default 1).
    pub threads: u32,
    /// Zero.
    pub reserved: u32,
    /// The host's parallel-for, or NULL.
    pub parallel_for: mvnmf_parallel_for_fn,
    /// Passed to `parallel_for`.
    pub ctx: *mut c_void,
}

impl CField<Parallel> for mvnmf_parallel {
    /// What it asks for; `self` must stay where it is until the solver has
    /// returned (the host pool keeps its address).
    fn to_rust(&self) -> Result<Parallel, Error> {
        Ok(match (self.parallel_for, self.threads) {
            (Some(_), _) => Parallel::Host(HostPool {
                parallel_for: host_parallel_for,
                ctx: self as *const mvnmf_parallel as usize,
            }),
            (None, 1) => Parallel::Serial,
            (None, t) => Parallel::Threads(t as usize),
        })
    }

    /// The C form of `p` (a host pool has no C form: it becomes the default).
    fn from_rust(p: &Parallel) -> Self {
        let threads = match *p {
            Parallel::Threads(t) => u32::try_from(t).unwrap_or(u32::MAX),
            _ => 1,
        };
        mvnmf_parallel {
            threads,
            reserved: 0,
            parallel_for: None,
            ctx: core::ptr::null_mut(),
        }
    }
}

/// [`HostPool::parallel_for`] of a C host: `ctx` is the address of its
/// `mvnmf_parallel`.
fn host_parallel_for(ctx: usize, n_tasks: usize, task: Task<'_>) {
    // SAFETY: `ctx` was made by `mvnmf_parallel::read` from a reference to the
    // caller's struct, which the caller keeps in place until the entry point
    // returns (its documented contract), and this runs inside that call.
    let p = unsafe { &*(ctx as *const mvnmf_parallel) };
    let Some(f) = p.parallel_for else { return };
    let task_ctx = &task as *const Task<'_> as *mut c_void;
    // SAFETY: the host's function, called as its type says; `task_ctx`
    // points to `task`, alive until `f` returns (the contract: every task
    // call has returned by then).
    unsafe { f(n_tasks, Some(run_task), task_ctx, p.ctx) }
}

/// The C face of one task: `task_ctx` is the `&Task` of [`host_parallel_for`].
/// A panic (a bug) stops at this boundary; the task then counts as not run,
/// so the region reports `MVNMF_STATUS_PARALLEL_FOR`.
unsafe extern "C" fn run_task(task_ctx: *mut c_void, i: usize) {
    if task_ctx.is_null() {
        return;
    }
    // SAFETY: `task_ctx` is what `host_parallel_for` passed: a `&Task` that
    // lives until the host's `parallel_for` has returned, i.e. beyond this call.
    let task = unsafe { &*(task_ctx as *const Task<'_>) };
    crate::ffi::util::catch(|| task(i), ());
}

/// Progress callback: called once per outer iteration (and for the start), and by the
/// pipeline at the start and the end of each set-up phase (`mvnmf_progress.phase`); a
/// nonzero return stops the call (`MVNMF_STATUS_CANCELLED`).
pub type mvnmf_progress_fn =
    Option<unsafe extern "C" fn(progress: *const mvnmf_progress, user: *mut c_void) -> c_int>;

impl From<Objective> for mvnmf_objective {
    fn from(o: Objective) -> Self {
        let mut c = mvnmf_objective {
            total: o.total,
            ..mvnmf_objective::default()
        };
        for (d, &(kind, value)) in c.terms.iter_mut().zip(o.terms()) {
            *d = mvnmf_term {
                kind: kind as u32,
                reserved: 0,
                value,
            };
            c.n_terms += 1;
        }
        c
    }
}

impl From<Report> for mvnmf_report {
    fn from(r: Report) -> Self {
        mvnmf_report {
            iterations: r.iterations,
            stop: CField::from_rust(&r.stop),
            dead_views: r.dead_views,
            initial: r.initial.into(),
            objective: r.objective.into(),
            where_arg: 0,
            where_view: usize::MAX,
            where_row: usize::MAX,
            where_col: usize::MAX,
        }
    }
}

/// A static, NUL-terminated message for a status code (any value).
#[no_mangle]
pub extern "C" fn mvnmf_status_message(status: u32) -> *const c_char {
    let m = match Error::from_code(status) {
        Some(e) => e.c_message(),
        None if status == 0 => "success\0",
        None => "unknown status code\0",
    };
    m.as_ptr().cast()
}

/// The library version, e.g. "0.1.0" (static, NUL-terminated).
#[no_mangle]
pub extern "C" fn mvnmf_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;

    /// The C enum and `Error` agree on every code and name.
    #[test]
    fn status_codes_and_names_are_errors() {
        for e in Error::ALL {
            let st = mvnmf_status::from(e);
            assert_eq!(st as u32, e.code());
            assert_eq!(format!("{st:?}"), format!("{e:?}"));
            // SAFETY: the message is a static NUL-terminated string.
            let c = unsafe { core::ffi::CStr::from_ptr(mvnmf_status_message(e.code())) };
            assert_eq!(c.to_str().unwrap(), e.message());
        }
    }

    /// The C term kinds are `Term`'s codes, and their names its names.
    #[test]
    fn term_kinds_are_terms() {
        let c = [
            MVNMF_TERM_RECONSTRUCTION,
            MVNMF_TERM_SPARSITY,
            MVNMF_TERM_AFFINITY,
            MVNMF_TERM_PENALTY,
            MVNMF_TERM_L1,
            MVNMF_TERM_LABEL_FIT,
            MVNMF_TERM_LABEL_CORRELATION,
            MVNMF_TERM_DIVERGENCE,
        ];
        assert_eq!(c.len(), Term::ALL.len());
        for (t, code) in Term::ALL.iter().zip(c) {
            assert_eq!(*t as u32, code);
            // SAFETY: a static NUL-terminated string.
            let name = unsafe { core::ffi::CStr::from_ptr(mvnmf_term_name(code)) };
            assert_eq!(name.to_str().unwrap(), t.name());
        }
        let o: mvnmf_objective =
            Objective::new(3.0, &[(Term::Affinity, 2.0), (Term::L1, 1.0)]).into();
        assert_eq!(o.n_terms, 2);
        // SAFETY: a valid struct, and NULL.
        unsafe {
            assert_eq!(mvnmf_objective_term(&o, MVNMF_TERM_AFFINITY), 2.0);
            assert_eq!(mvnmf_objective_term(&o, MVNMF_TERM_L1), 1.0);
            assert_eq!(mvnmf_objective_term(&o, MVNMF_TERM_SPARSITY), 0.0);
            assert_eq!(mvnmf_objective_term(core::ptr::null(), MVNMF_TERM_L1), 0.0);
        }
    }
}
