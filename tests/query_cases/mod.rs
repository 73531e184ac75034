//! The dimension-only workspace queries beside their calls (issue 31, E8): shared by
//! `tests/workspace_queries.rs` and the fuzz driver (`tests/fuzz_ffi.rs`), each of which
//! also includes `common` (its `capi::graph`).
#![allow(dead_code)]

use core::ffi::{c_int, c_void};
use core::ptr::{null, null_mut};

use mvnmf::ffi::*;

pub type S = mvnmf_status;

/// Elements in every caller buffer: far more than any small case reads.
pub const BIG: usize = 1 << 12;
/// Workspace bytes handed to every call.
pub const WORK: usize = 1 << 22;

/// The dimension values a hostile case substitutes: zero, one whose buffer is beyond
/// `isize::MAX` bytes for any element size, and `SIZE_MAX`.
pub const HOSTILE: [usize; 3] = [0, (1 << 63) + 1, usize::MAX];

pub struct Bufs {
    f: Vec<f64>,
    u32s: Vec<u32>,
    u8s: Vec<u8>,
    us: Vec<usize>,
    work: Vec<u8>,
    out_f: Vec<f64>,
    out_u32: Vec<u32>,
    out_u8: Vec<u8>,
    out_us: Vec<usize>,
}

impl Bufs {
    pub fn new() -> Bufs {
        Bufs {
            // Values in (0, 1], labels 0/1 alternating, flags 0/1 alternating.
            f: (0..BIG)
                .map(|i| 0.25 + 0.5 * ((i * 7 % 13) as f64 / 13.0))
                .collect(),
            u32s: (0..BIG).map(|i| (i % 2) as u32).collect(),
            u8s: (0..BIG).map(|i| (i % 2) as u8).collect(),
            us: (0..BIG).map(|i| 1 + i % 3).collect(),
            work: vec![0u8; WORK],
            out_f: vec![0.0; BIG],
            out_u32: vec![0; BIG],
            out_u8: vec![0; BIG],
            out_us: vec![0; BIG],
        }
    }
    fn w(&mut self) -> *mut c_void {
        self.work.as_mut_ptr().cast()
    }
}

/// A query's status and bytes beside its call's status.
pub struct Outcome {
    pub query: S,
    pub bytes: usize,
    pub call: S,
}

/// The promise: the same status, or (the call's workspace was the smaller) the query said
/// OK with more bytes than the call had. A call cancelled by its callback (the protocol's
/// fits here) passed its validation: OK.
pub fn agrees(o: &Outcome) -> bool {
    let call = if o.call == S::Cancelled {
        S::Ok
    } else {
        o.call
    };
    o.query == call || (call == S::WorkspaceTooSmall && o.query == S::Ok && o.bytes > WORK)
}

pub fn q(f: impl FnOnce(*mut usize) -> S) -> (S, usize) {
    let mut b = usize::MAX;
    let s = f(&mut b);
    (s, b)
}

unsafe extern "C" fn protocol_fit(
    _: *const mvnmf_protocol_fit,
    _: *mut f64,
    _: *mut c_void,
) -> c_int {
    1
}

unsafe extern "C" fn cv_fit(_: *const mvnmf_cv_fit, _: *mut f64, _: *mut c_void) -> c_int {
    1
}

pub type Family = (
    &'static str,
    usize,
    &'static [usize],
    fn(&[usize], &mut Bufs) -> Outcome,
);

/// The families whose queries take dimensions only: name, number of dimensions, a valid
/// small choice of them, and the query and call on given dimensions.
pub fn families() -> Vec<Family> {
    vec![
        ("stratified_split", 1, &[6], |d, b| {
            let (query, bytes) = q(|p| unsafe { mvnmf_stratified_split_workspace(d[0], p) });
            let w = b.w();
            let call = unsafe {
                mvnmf_stratified_split(
                    b.u32s.as_ptr(),
                    d[0],
                    2,
                    0.5,
                    1,
                    b.out_u8.as_mut_ptr(),
                    w,
                    WORK,
                )
            };
            Outcome { query, bytes, call }
        }),
        ("knn_predict", 1, &[2], |d, b| {
            let kp = mvnmf_knn_params {
                k: 1,
                metric: MVNMF_METRIC_EUCLIDEAN,
            };
            let (query, bytes) = q(|p| unsafe { mvnmf_knn_predict_workspace(d[0], &kp, p) });
            let w = b.w();
            let call = unsafe {
                mvnmf_knn_predict(
                    b.f.as_ptr(),
                    2,
                    6,
                    b.u32s.as_ptr(),
                    b.f.as_ptr(),
                    3,
                    d[0],
                    &kp,
                    b.out_u32.as_mut_ptr(),
                    w,
                    WORK,
                )
            };
            Outcome { query, bytes, call }
        }),
        ("kmeans", 3, &[2, 6, 2], |d, b| {
            let (query, bytes) =
                q(|p| unsafe { mvnmf_kmeans_workspace(d[0], d[1], d[2], null(), p) });
            let w = b.w();
            let call = unsafe {
                mvnmf_kmeans(
                    b.f.as_ptr(),
                    d[0],
                    d[1],
                    d[2],
                    null(),
                    b.out_u32.as_mut_ptr(),
                    b.out_f.as_mut_ptr(),
                    w,
                    WORK,
                    null_mut(),
                )
            };
            Outcome { query, bytes, call }
        }),
        ("assignment", 2, &[3, 4], |d, b| {
            let (query, bytes) = q(|p| unsafe { mvnmf_assignment_workspace(d[0], d[1], p) });
            let w = b.w();
            let call = unsafe {
                mvnmf_assignment(
                    b.f.as_ptr(),
                    d[0],
                    d[1],
                    0,
                    b.out_us.as_mut_ptr(),
                    null_mut(),
                    w,
                    WORK,
                )
            };
            Outcome { query, bytes, call }
        }),
        ("clustering_accuracy", 2, &[2, 2], |d, b| {
            let (query, bytes) =
                q(|p| unsafe { mvnmf_clustering_accuracy_workspace(d[0], d[1], p) });
            let w = b.w();
            let call = unsafe {
                mvnmf_clustering_accuracy(
                    b.u32s.as_ptr(),
                    b.u32s.as_ptr(),
                    6,
                    d[0],
                    d[1],
                    b.out_f.as_mut_ptr(),
                    w,
                    WORK,
                )
            };
            Outcome { query, bytes, call }
        }),
        ("nmi", 2, &[2, 2], |d, b| {
            let (query, bytes) = q(|p| unsafe { mvnmf_nmi_workspace(d[0], d[1], p) });
            let w = b.w();
            let call = unsafe {
                mvnmf_nmi(
                    b.u32s.as_ptr(),
                    b.u32s.as_ptr(),
                    6,
                    d[0],
                    d[1],
                    MVNMF_NMI_MAX,
                    b.out_f.as_mut_ptr(),
                    w,
                    WORK,
                )
            };
            Outcome { query, bytes, call }
        }),
        ("query_metrics", 1, &[6], |d, b| {
            let (query, bytes) = q(|p| unsafe { mvnmf_query_metrics_workspace(d[0], p) });
            let w = b.w();
            let (ap, pa) = b.out_f.split_at_mut(1);
            let call = unsafe {
                mvnmf_query_metrics(
                    b.f.as_ptr(),
                    b.u8s.as_ptr(),
                    d[0],
                    b.us.as_ptr(),
                    2,
                    ap.as_mut_ptr(),
                    pa.as_mut_ptr(),
                    null_mut(),
                    w,
                    WORK,
                )
            };
            Outcome { query, bytes, call }
        }),
        ("average_auroc", 1, &[6], |d, b| {
            let (query, bytes) = q(|p| unsafe { mvnmf_average_auroc_workspace(d[0], p) });
            let w = b.w();
            let call = unsafe {
                mvnmf_average_auroc(
                    b.u8s.as_ptr(),
                    b.f.as_ptr(),
                    1,
                    d[0],
                    null_mut(),
                    b.out_f.as_mut_ptr(),
                    null_mut(),
                    w,
                    WORK,
                )
            };
            Outcome { query, bytes, call }
        }),
        ("evaluate_split", 3, &[2, 12, 2], |d, b| {
            let (query, bytes) =
                q(|p| unsafe { mvnmf_evaluate_split_workspace(d[0], d[1], d[2], null(), p) });
            let w = b.w();
            let mut sc = [mvnmf_split_scores::default(); 1];
            let call = unsafe {
                mvnmf_evaluate_split(
                    b.f.as_ptr(),
                    d[0],
                    d[1],
                    b.u32s.as_ptr(),
                    d[2],
                    b.u8s.as_ptr(),
                    null(),
                    sc.as_mut_ptr(),
                    w,
                    WORK,
                )
            };
            Outcome { query, bytes, call }
        }),
        ("evaluate_protocol", 4, &[2, 12, 2, 1], |d, b| {
            let (query, bytes) = q(|p| unsafe {
                mvnmf_evaluate_protocol_workspace(d[0], d[1], d[2], d[3], null(), p)
            });
            let w = b.w();
            let mut sc = vec![mvnmf_split_scores::default(); 64];
            let fr = [0.5f64; 64];
            let call = unsafe {
                mvnmf_evaluate_protocol(
                    b.u32s.as_ptr(),
                    d[1],
                    d[2],
                    fr.as_ptr(),
                    d[3],
                    d[0],
                    null(),
                    sc.as_mut_ptr(),
                    w,
                    WORK,
                    Some(protocol_fit),
                    null_mut(),
                )
            };
            Outcome { query, bytes, call }
        }),
        ("cross_validate", 4, &[2, 12, 2, 2], |d, b| {
            let (query, bytes) =
                q(
                    |p| unsafe {
                        mvnmf_cross_validate_workspace(d[0], d[1], d[2], d[3], null(), p)
                    },
                );
            let w = b.w();
            let mut best = 0usize;
            let call = unsafe {
                mvnmf_cross_validate(
                    b.u32s.as_ptr(),
                    d[1],
                    d[2],
                    d[0],
                    b.f.as_ptr(),
                    d[3],
                    1,
                    null(),
                    b.out_f.as_mut_ptr(),
                    &mut best,
                    w,
                    WORK,
                    Some(cv_fit),
                    null_mut(),
                )
            };
            Outcome { query, bytes, call }
        }),
        ("sym_eig", 1, &[4], |d, b| {
            let (query, bytes) = q(|p| unsafe { mvnmf_sym_eig_workspace(d[0], p) });
            let w = b.w();
            let mut a = b.f.clone();
            let call =
                unsafe { mvnmf_sym_eig(a.as_mut_ptr(), d[0], b.out_f.as_mut_ptr(), w, WORK) };
            Outcome { query, bytes, call }
        }),
        ("simplex_qp", 1, &[3], |d, b| {
            let (query, bytes) = q(|p| unsafe { mvnmf_simplex_qp_workspace(d[0], p) });
            let w = b.w();
            // A symmetric PSD `a`: the identity.
            let mut a = vec![0.0; BIG];
            for i in 0..3 {
                a[i * 4] = 1.0;
            }
            let call = unsafe {
                mvnmf_simplex_qp(
                    a.as_ptr(),
                    b.f.as_ptr(),
                    d[0],
                    b.out_f.as_mut_ptr(),
                    w,
                    WORK,
                    null_mut(),
                )
            };
            Outcome { query, bytes, call }
        }),
        ("mvel_predict", 3, &[2, 3, 5], |d, b| {
            let (query, bytes) =
                q(|p| unsafe { mvnmf_mvel_predict_workspace(d[0], d[1], d[2], p) });
            let w = b.w();
            let call = unsafe {
                mvnmf_mvel_predict(
                    b.f.as_ptr(),
                    b.f.as_ptr(),
                    d[0],
                    d[1],
                    d[2],
                    b.out_f.as_mut_ptr(),
                    w,
                    WORK,
                )
            };
            Outcome { query, bytes, call }
        }),
        ("mvel_thresholds", 1, &[6], |d, b| {
            let (query, bytes) = q(|p| unsafe { mvnmf_mvel_thresholds_workspace(d[0], p) });
            let w = b.w();
            let call = unsafe {
                mvnmf_mvel_thresholds(
                    b.f.as_ptr(),
                    b.u8s.as_ptr(),
                    2,
                    d[0],
                    b.out_f.as_mut_ptr(),
                    w,
                    WORK,
                )
            };
            Outcome { query, bytes, call }
        }),
        ("jsnmf_rank", 1, &[6], |d, b| {
            let (query, bytes) = q(|p| unsafe { mvnmf_jsnmf_rank_workspace(d[0], p) });
            let w = b.w();
            let call = unsafe {
                mvnmf_jsnmf_rank(
                    b.f.as_ptr(),
                    2,
                    d[0],
                    b.f.as_ptr(),
                    1,
                    2,
                    null(),
                    b.out_us.as_mut_ptr(),
                    b.out_f.as_mut_ptr(),
                    w,
                    WORK,
                )
            };
            Outcome { query, bytes, call }
        }),
        ("mvel_fit_anchored", 4, &[6, 2, 2, 3], |d, b| {
            let (query, bytes) = q(|p| unsafe {
                mvnmf_mvel_fit_anchored_workspace(d[0], d[1], d[2], d[3], null(), p)
            });
            let w = b.w();
            // Each item's 2 nearest anchors (< m = 3), weights summing to 1.
            let idx: Vec<usize> = (0..BIG).map(|i| i % 2 + (i / 2) % 2).collect();
            let z = vec![0.5f64; BIG];
            let (qq, a) = b.out_f.split_at_mut(BIG / 2);
            let call = unsafe {
                mvnmf_mvel_fit_anchored(
                    b.u8s.as_ptr(),
                    d[1],
                    d[0],
                    idx.as_ptr(),
                    z.as_ptr(),
                    2,
                    d[3],
                    d[2],
                    null(),
                    qq.as_mut_ptr(),
                    a.as_mut_ptr(),
                    w,
                    WORK,
                    None,
                    null_mut(),
                    null_mut(),
                )
            };
            Outcome { query, bytes, call }
        }),
        ("mvel_fit", 2, &[2, 3], |d, b| {
            // A dense graph over 6 items (all weights 1/6).
            let w6 = vec![1.0 / 6.0; 36];
            let g = mvnmf_graph {
                affinity_weights: w6.as_ptr(),
                ..crate::common::capi::graph(MVNMF_GRAPH_DENSE, 6)
            };
            let mut p = mvnmf_mvel_params_default();
            p.max_iter = 2;
            p.nmf_iter = 2;
            let (query, bytes) =
                q(|bb| unsafe { mvnmf_mvel_fit_workspace(d[0], &g, d[1], &p, bb) });
            let w = b.w();
            let (qq, h) = b.out_f.split_at_mut(BIG / 2);
            let call = unsafe {
                mvnmf_mvel_fit(
                    b.u8s.as_ptr(),
                    d[0],
                    &g,
                    d[1],
                    &p,
                    qq.as_mut_ptr(),
                    h.as_mut_ptr(),
                    w,
                    WORK,
                    None,
                    null_mut(),
                    null_mut(),
                )
            };
            Outcome { query, bytes, call }
        }),
        ("cca", 4, &[3, 2, 8, 2], |d, b| {
            let (query, bytes) = q(|p| unsafe { mvnmf_cca_workspace(d[0], d[1], d[2], d[3], p) });
            let view = |rows: usize, x: &[f64]| mvnmf_view {
                kind: MVNMF_VIEW_DENSE,
                rows,
                cols: d[2],
                values: x.as_ptr(),
                col_stride: rows,
                col_ptr: null(),
                row_idx: null(),
            };
            let (xi, xj) = (view(d[0], &b.f), view(d[1], &b.f[7..]));
            let w = b.w();
            let (o1, rest) = b.out_f.split_at_mut(BIG / 4);
            let (o2, rest) = rest.split_at_mut(BIG / 4);
            let (o3, rest) = rest.split_at_mut(BIG / 8);
            let (o4, o5) = rest.split_at_mut(BIG / 8);
            let call = unsafe {
                mvnmf_cca(
                    &xi,
                    &xj,
                    1e-3,
                    d[3],
                    o1.as_mut_ptr(),
                    o2.as_mut_ptr(),
                    o3.as_mut_ptr(),
                    o4.as_mut_ptr(),
                    o5.as_mut_ptr(),
                    w,
                    WORK,
                )
            };
            Outcome { query, bytes, call }
        }),
    ]
}
