//! Issue 31, item 2 (E8): every workspace query runs the validation its call runs on the
//! arguments the query takes. Each case below gives a query and its call the same hostile
//! arguments (a zero or huge dimension, a broken CSC structure, a graph over another item
//! count, a rank the call cannot serve) and checks that both give the same status — or, when
//! only the call's small workspace stood in its way, that the query asked for more.
//!
//! The call gets real buffers sized for the small problem; the hostile dimension is always
//! one the call refuses on its own (a size beyond `isize::MAX` bytes, zero, a mismatch)
//! before it reads anything, so no case reads past a buffer.

use core::ptr::{null, null_mut};

use mvnmf::ffi::*;

mod common;
mod query_cases;
use query_cases::*;

/// The scalar families: the valid case is OK for both, then every dimension in turn takes
/// each hostile value (no pairs of moderately large ones: a call would take buffers of
/// that size as given, and these buffers are small).
#[test]
fn dimension_queries_refuse_what_their_calls_refuse() {
    let mut bad = vec![];
    for (name, nd, base, f) in families() {
        let mut b = Bufs::new();
        let o = f(base, &mut b);
        if !(o.query == S::Ok && agrees(&o)) {
            bad.push(format!(
                "{name}: the valid case: {:?}, {:?}",
                o.query, o.call
            ));
            continue;
        }
        let mut cases: Vec<Vec<usize>> = vec![];
        for i in 0..nd {
            for h in HOSTILE {
                let mut d = base.to_vec();
                d[i] = h;
                cases.push(d);
            }
        }
        for d in cases {
            let o = f(&d, &mut b);
            if !agrees(&o) {
                bad.push(format!(
                    "{name}{d:?}: query {:?} ({} bytes), call {:?}",
                    o.query, o.bytes, o.call
                ));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "queries and calls disagree:\n{}",
        bad.join("\n")
    );
}

// ------------------------------------------------------------------ views

/// Items of the view cases.
const N: usize = 12;
/// Rank of the view cases.
const K: usize = 3;

/// Two views of `N` items: a dense `5 × N` and a CSC `4 × N` (every entry stored).
struct Views {
    dense: Vec<f64>,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    values: Vec<f64>,
    labels: Vec<u32>,
}

impl Views {
    fn new() -> Views {
        let dense = (0..5 * N)
            .map(|i| 0.1 + (i * 7 % 11) as f64 / 11.0)
            .collect();
        let col_ptr = (0..=N).map(|j| 4 * j).collect();
        let row_idx = (0..4 * N).map(|i| i % 4).collect();
        let values = (0..4 * N)
            .map(|i| 0.2 + (i * 5 % 13) as f64 / 13.0)
            .collect();
        let labels = (0..N as u32)
            .map(|j| if j % 4 == 3 { MVNMF_UNLABELED } else { j % 2 })
            .collect();
        Views {
            dense,
            col_ptr,
            row_idx,
            values,
            labels,
        }
    }
    fn c(&self) -> [mvnmf_view; 2] {
        [
            mvnmf_view {
                kind: MVNMF_VIEW_DENSE,
                rows: 5,
                cols: N,
                values: self.dense.as_ptr(),
                col_stride: 5,
                col_ptr: null(),
                row_idx: null(),
            },
            mvnmf_view {
                kind: MVNMF_VIEW_CSC,
                rows: 4,
                cols: N,
                values: self.values.as_ptr(),
                col_stride: 0,
                col_ptr: self.col_ptr.as_ptr(),
                row_idx: self.row_idx.as_ptr(),
            },
        ]
    }
    /// The SGE graph over `n` items (the views' labels; `n ≤ N`).
    fn sge(&self, n: usize) -> mvnmf_graph {
        mvnmf_graph {
            labels: self.labels.as_ptr(),
            n_classes: 2,
            ..common::capi::graph(MVNMF_GRAPH_SGE, n)
        }
    }
}

/// A broken descriptor and the status every call gives it (`mvnmf_nmf_fit` and the rest
/// validate descriptors through one function).
struct Corrupt {
    what: &'static str,
    /// The view it breaks (0 dense, 1 CSC).
    view: usize,
    apply: fn(&mut [mvnmf_view; 2], &mut Vec<usize>, &mut Vec<usize>),
    status: S,
}

fn corruptions() -> Vec<Corrupt> {
    vec![
        Corrupt {
            what: "CSC col_ptr[cols] = SIZE_MAX",
            view: 1,
            apply: |_, cp, _| cp[N] = usize::MAX,
            status: S::SizeOverflow,
        },
        Corrupt {
            what: "CSC col_ptr[0] = 1",
            view: 1,
            apply: |_, cp, _| cp[0] = 1,
            status: S::MalformedCsc,
        },
        Corrupt {
            what: "CSC col_ptr decreasing",
            view: 1,
            apply: |_, cp, _| cp[3] = 0,
            status: S::MalformedCsc,
        },
        Corrupt {
            what: "CSC row index = rows",
            view: 1,
            apply: |_, _, ri| ri[5] = 4,
            status: S::MalformedCsc,
        },
        Corrupt {
            what: "CSC rows unsorted",
            view: 1,
            apply: |_, _, ri| ri.swap(0, 1),
            status: S::MalformedCsc,
        },
        Corrupt {
            what: "CSC col_ptr NULL",
            view: 1,
            apply: |v, _, _| v[1].col_ptr = null(),
            status: S::NullPointer,
        },
        Corrupt {
            what: "CSC row_idx NULL",
            view: 1,
            apply: |v, _, _| v[1].row_idx = null(),
            status: S::NullPointer,
        },
        Corrupt {
            what: "dense values NULL",
            view: 0,
            apply: |v, _, _| v[0].values = null(),
            status: S::NullPointer,
        },
        Corrupt {
            what: "dense col_stride < rows",
            view: 0,
            apply: |v, _, _| v[0].col_stride = 4,
            status: S::BufferTooShort,
        },
        Corrupt {
            what: "dense rows × cols beyond isize::MAX",
            view: 0,
            apply: |v, _, _| {
                v[0].rows = 1 << 62;
                v[0].col_stride = 1 << 62;
            },
            status: S::SizeOverflow,
        },
        Corrupt {
            what: "kind 7",
            view: 0,
            apply: |v, _, _| v[0].kind = 7,
            status: S::BadParameter,
        },
    ]
}

/// A view query: views (two), the SGE graph over the views' items.
/// Name, the views it reads (bit `i`: view `i`), the query.
type ViewQuery = (
    &'static str,
    u32,
    fn(&[mvnmf_view; 2], &mvnmf_graph, *mut usize) -> S,
);

fn view_queries() -> Vec<ViewQuery> {
    const KERNELS: [mvnmf_kernel; 2] = [mvnmf_kernel {
        kind: MVNMF_KERNEL_LINEAR,
        gamma: 0.0,
    }; 2];
    const LAYERS: [usize; 2] = [4, K];
    vec![
        ("joint_nmf_fit", 3, |v, _, b| unsafe {
            mvnmf_joint_nmf_fit_workspace(v.as_ptr(), 2, K, null(), b)
        }),
        ("joint_nmf_encode", 3, |v, _, b| unsafe {
            mvnmf_joint_nmf_encode_workspace(v.as_ptr(), 2, K, null(), b)
        }),
        ("nmf_fit (view 1)", 2, |v, _, b| unsafe {
            mvnmf_nmf_fit_workspace(&v[1], K, null(), b)
        }),
        ("nmf_fit (view 0)", 1, |v, _, b| unsafe {
            mvnmf_nmf_fit_workspace(&v[0], K, null(), b)
        }),
        ("nmf_encode (view 1)", 2, |v, _, b| unsafe {
            mvnmf_nmf_encode_workspace(&v[1], K, null(), b)
        }),
        ("nndsvd", 3, |v, _, b| unsafe {
            mvnmf_nndsvd_workspace(v.as_ptr(), 2, K, b)
        }),
        ("beta_nmf_fit", 3, |v, _, b| unsafe {
            mvnmf_beta_nmf_fit_workspace(v.as_ptr(), 2, K, 1.0, null(), b)
        }),
        ("mvsl_fit", 3, |v, g, b| unsafe {
            mvnmf_mvsl_fit_workspace(v.as_ptr(), 2, g, K, null(), b)
        }),
        ("mvsl_encode", 3, |v, g, b| unsafe {
            mvnmf_mvsl_encode_workspace(v.as_ptr(), 2, g, K, null(), b)
        }),
        ("deep_fit", 3, |v, g, b| unsafe {
            mvnmf_deep_fit_workspace(v.as_ptr(), 2, g, LAYERS.as_ptr(), 2, null(), b)
        }),
        ("deep_encode", 3, |v, g, b| unsafe {
            mvnmf_deep_encode_workspace(v.as_ptr(), 2, g, LAYERS.as_ptr(), 2, null(), b)
        }),
        ("pipeline_fit", 3, |v, _, b| unsafe {
            mvnmf_pipeline_fit_workspace(v.as_ptr(), 2, KERNELS.as_ptr(), 2, K, null(), b)
        }),
        ("kernel_bandwidths", 3, |v, _, b| unsafe {
            mvnmf_kernel_bandwidths_workspace(v.as_ptr(), 2, KERNELS.as_ptr(), 2, 0, b)
        }),
        ("mkl_weights", 3, |v, _, b| unsafe {
            mvnmf_mkl_weights_workspace(v.as_ptr(), 2, KERNELS.as_ptr(), 2, null(), b)
        }),
        ("alignment_system", 3, |v, _, b| unsafe {
            mvnmf_alignment_system_workspace(v.as_ptr(), 2, KERNELS.as_ptr(), 2, 0, b)
        }),
        ("fused_knn", 3, |v, _, b| unsafe {
            mvnmf_fused_knn_workspace(v.as_ptr(), 2, KERNELS.as_ptr(), 2, null(), b)
        }),
        ("class_pairs", 3, |v, _, b| unsafe {
            mvnmf_class_pairs_workspace(v.as_ptr(), 2, KERNELS.as_ptr(), 2, null(), b)
        }),
        ("ldge", 3, |v, _, b| unsafe {
            mvnmf_ldge_workspace(v.as_ptr(), 2, KERNELS.as_ptr(), 2, null(), b)
        }),
        ("tge", 3, |v, _, b| unsafe {
            mvnmf_tge_workspace(v.as_ptr(), 2, KERNELS.as_ptr(), 2, null(), b)
        }),
        ("fused_graph", 1, |v, _, b| unsafe {
            mvnmf_fused_graph_workspace(v.as_ptr(), 1, null(), b)
        }),
        ("anchors_kmeans", 1, |v, _, b| unsafe {
            mvnmf_anchors_kmeans_workspace(v.as_ptr(), 1, 3, null(), b)
        }),
        ("anchor_graph", 1, |v, _, b| unsafe {
            mvnmf_anchor_graph_workspace(v.as_ptr(), 1, N, 3, null(), null(), b)
        }),
        ("fused_knn_graph", 1, |v, _, b| unsafe {
            mvnmf_fused_knn_graph_workspace(v.as_ptr(), 1, 3, null(), null(), b)
        }),
        ("jsnmf_fit (view 1)", 2, |v, _, b| unsafe {
            // Two sources over view 1's vocabulary.
            let src = [v[1], v[1]];
            let ranks = [K, K];
            mvnmf_jsnmf_fit_workspace(src.as_ptr(), 2, K, ranks.as_ptr(), null(), b)
        }),
        ("jsnmf_encode (view 1)", 2, |v, _, b| unsafe {
            mvnmf_jsnmf_encode_workspace(&v[1], 2, null(), b)
        }),
        ("jsnmf_encode (view 0)", 1, |v, _, b| unsafe {
            mvnmf_jsnmf_encode_workspace(&v[0], 2, null(), b)
        }),
        ("jsnmf_query (view 1)", 2, |v, _, b| unsafe {
            mvnmf_jsnmf_query_workspace(&v[1], 2, 6, null(), b)
        }),
    ]
}

/// Every query that reads view descriptors refuses a broken one with the status its call
/// gives (the calls' side: [`view_calls_refuse_the_same`]); on the valid views, OK.
#[test]
fn view_queries_validate_descriptors_as_their_calls() {
    let mut bad = vec![];
    for (name, reads, f) in view_queries() {
        let vd = Views::new();
        let v = vd.c();
        let g = vd.sge(N);
        let (s, _) = q(|b| f(&v, &g, b));
        // Some queries refuse these views for their own reasons (e.g. the fused graph
        // needs dense views); those are left out of the corruption cases.
        let valid = s == S::Ok;
        for c in corruptions() {
            let mut vd = Views::new();
            let mut cp = vd.col_ptr.clone();
            let mut ri = vd.row_idx.clone();
            let mut v = vd.c();
            (c.apply)(&mut v, &mut cp, &mut ri);
            vd.col_ptr = cp;
            vd.row_idx = ri;
            // Re-point the CSC arrays at the corrupted copies (unless the case nulled them).
            if !v[1].col_ptr.is_null() {
                v[1].col_ptr = vd.col_ptr.as_ptr();
            }
            if !v[1].row_idx.is_null() {
                v[1].row_idx = vd.row_idx.as_ptr();
            }
            let g = vd.sge(N);
            let (s2, bytes) = q(|b| f(&v, &g, b));
            let want = if reads & (1 << c.view) != 0 {
                c.status
            } else {
                S::Ok
            };
            if valid && s2 != want {
                bad.push(format!(
                    "{name}, {}: {s2:?} ({bytes} bytes), the call gives {want:?}",
                    c.what
                ));
            }
            if s2 != S::Ok && bytes != usize::MAX {
                bad.push(format!("{name}, {}: *bytes written on {s2:?}", c.what));
            }
        }
        if !valid {
            eprintln!("{name}: refuses the base views with {s:?}; descriptor cases skipped");
        }
    }
    assert!(
        bad.is_empty(),
        "queries accept what their calls refuse:\n{}",
        bad.join("\n")
    );
}

/// The MvSL-S pipeline (an SGE graph of the labels; MvSL-T would want more labeled
/// items), 3 iterations.
fn mvsl_s() -> mvnmf_pipeline_params {
    let mut p = mvnmf_pipeline_params_default();
    assert_eq!(
        unsafe { mvnmf_pipeline_params_preset(MVNMF_METHOD_MVSL_S, &mut p) },
        S::Ok
    );
    p.solver.max_iter = 3;
    p
}

/// One model call on the two views with rank `k` (deep: layers `[4, k]`) and graph `g`;
/// real buffers for every output, a workspace of [`WORK`] bytes.
type ViewCall = (
    &'static str,
    fn(&[mvnmf_view; 2], &mvnmf_graph, usize, *mut usize) -> S,
    fn(&[mvnmf_view; 2], &mvnmf_graph, usize) -> S,
);

fn view_calls() -> Vec<ViewCall> {
    fn bufs() -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<u8>) {
        (
            vec![0.5; BIG],
            vec![0.5; BIG],
            vec![0.5; BIG],
            vec![0u8; WORK],
        )
    }
    vec![
        (
            "joint_nmf_fit",
            |v, _, k, b| unsafe { mvnmf_joint_nmf_fit_workspace(v.as_ptr(), 2, k, null(), b) },
            |v, _, k| {
                let (mut u0, mut u1, mut vv, mut w) = bufs();
                let us = [u0.as_mut_ptr(), u1.as_mut_ptr()];
                unsafe {
                    mvnmf_joint_nmf_fit(
                        v.as_ptr(),
                        2,
                        k,
                        null(),
                        us.as_ptr(),
                        vv.as_mut_ptr(),
                        w.as_mut_ptr().cast(),
                        WORK,
                        None,
                        null_mut(),
                        null_mut(),
                    )
                }
            },
        ),
        (
            "beta_nmf_fit",
            |v, _, k, b| unsafe { mvnmf_beta_nmf_fit_workspace(v.as_ptr(), 2, k, 1.0, null(), b) },
            |v, _, k| {
                let (mut u0, mut u1, mut vv, mut w) = bufs();
                let us = [u0.as_mut_ptr(), u1.as_mut_ptr()];
                unsafe {
                    mvnmf_beta_nmf_fit(
                        v.as_ptr(),
                        2,
                        k,
                        1.0,
                        -1.0,
                        null(),
                        null(),
                        us.as_ptr(),
                        vv.as_mut_ptr(),
                        w.as_mut_ptr().cast(),
                        WORK,
                        None,
                        null_mut(),
                        null_mut(),
                    )
                }
            },
        ),
        (
            "nndsvd",
            |v, _, k, b| unsafe { mvnmf_nndsvd_workspace(v.as_ptr(), 2, k, b) },
            |v, _, k| {
                let (mut u0, mut u1, mut vv, mut w) = bufs();
                let us = [u0.as_mut_ptr(), u1.as_mut_ptr()];
                unsafe {
                    mvnmf_nndsvd(
                        v.as_ptr(),
                        2,
                        k,
                        MVNMF_NNDSVDA,
                        0,
                        us.as_ptr(),
                        vv.as_mut_ptr(),
                        w.as_mut_ptr().cast(),
                        WORK,
                    )
                }
            },
        ),
        (
            "pipeline_fit",
            |v, _, k, b| unsafe {
                let ks = [mvnmf_kernel {
                    kind: MVNMF_KERNEL_LINEAR,
                    gamma: 0.0,
                }; 2];
                let p = mvsl_s();
                mvnmf_pipeline_fit_workspace(v.as_ptr(), 2, ks.as_ptr(), 2, k, &p, b)
            },
            |v, g, k| {
                let (mut u0, mut u1, mut vv, mut w) = bufs();
                let mut eta = [0.0f64; 2];
                let us = [u0.as_mut_ptr(), u1.as_mut_ptr()];
                let ks = [mvnmf_kernel {
                    kind: MVNMF_KERNEL_LINEAR,
                    gamma: 0.0,
                }; 2];
                let p = mvsl_s();
                unsafe {
                    mvnmf_pipeline_fit(
                        v.as_ptr(),
                        2,
                        ks.as_ptr(),
                        g.labels,
                        2,
                        k,
                        &p,
                        us.as_ptr(),
                        vv.as_mut_ptr(),
                        eta.as_mut_ptr(),
                        w.as_mut_ptr().cast(),
                        WORK,
                        None,
                        null_mut(),
                        null_mut(),
                    )
                }
            },
        ),
        (
            "mvsl_fit",
            |v, g, k, b| unsafe { mvnmf_mvsl_fit_workspace(v.as_ptr(), 2, g, k, null(), b) },
            |v, g, k| {
                let (mut u0, mut u1, mut vv, mut w) = bufs();
                let us = [u0.as_mut_ptr(), u1.as_mut_ptr()];
                unsafe {
                    mvnmf_mvsl_fit(
                        v.as_ptr(),
                        2,
                        g,
                        k,
                        null(),
                        us.as_ptr(),
                        vv.as_mut_ptr(),
                        w.as_mut_ptr().cast(),
                        WORK,
                        None,
                        null_mut(),
                        null_mut(),
                    )
                }
            },
        ),
        (
            "mvsl_encode",
            |v, g, k, b| unsafe { mvnmf_mvsl_encode_workspace(v.as_ptr(), 2, g, k, null(), b) },
            |v, g, k| {
                let (u0, u1, mut vv, mut w) = bufs();
                let us = [u0.as_ptr(), u1.as_ptr()];
                unsafe {
                    mvnmf_mvsl_encode(
                        v.as_ptr(),
                        2,
                        g,
                        k,
                        null(),
                        us.as_ptr(),
                        vv.as_mut_ptr(),
                        w.as_mut_ptr().cast(),
                        WORK,
                        None,
                        null_mut(),
                        null_mut(),
                    )
                }
            },
        ),
        (
            "deep_fit",
            |v, g, k, b| unsafe {
                let l = [4, k];
                mvnmf_deep_fit_workspace(v.as_ptr(), 2, g, l.as_ptr(), 2, null(), b)
            },
            |v, g, k| {
                let (mut u0, mut u1, mut vv, mut w) = bufs();
                let us = [u0.as_mut_ptr(), u1.as_mut_ptr()];
                let l = [4, k];
                unsafe {
                    mvnmf_deep_fit(
                        v.as_ptr(),
                        2,
                        g,
                        l.as_ptr(),
                        2,
                        null(),
                        us.as_ptr(),
                        vv.as_mut_ptr(),
                        w.as_mut_ptr().cast(),
                        WORK,
                        None,
                        null_mut(),
                        null_mut(),
                    )
                }
            },
        ),
        (
            "deep_encode",
            |v, g, k, b| unsafe {
                let l = [4, k];
                mvnmf_deep_encode_workspace(v.as_ptr(), 2, g, l.as_ptr(), 2, null(), b)
            },
            |v, g, k| {
                let (u0, u1, mut vv, mut w) = bufs();
                let us = [u0.as_ptr(), u1.as_ptr()];
                let l = [4, k];
                unsafe {
                    mvnmf_deep_encode(
                        v.as_ptr(),
                        2,
                        g,
                        l.as_ptr(),
                        2,
                        null(),
                        us.as_ptr(),
                        vv.as_mut_ptr(),
                        w.as_mut_ptr().cast(),
                        WORK,
                        None,
                        null_mut(),
                        null_mut(),
                    )
                }
            },
        ),
    ]
}

/// The calls give each broken descriptor the status the queries were checked against
/// above, and a query and its call agree on a graph over another item count (E8:
/// `mvnmf_deep_encode_workspace` accepted one) and on ranks no buffer can hold.
#[test]
fn view_calls_refuse_the_same() {
    let mut bad = vec![];
    for (name, query, call) in view_calls() {
        let vd = Views::new();
        let v = vd.c();
        let g = vd.sge(N);
        let (s, _) = q(|b| query(&v, &g, K, b));
        assert_eq!(
            (s, call(&v, &g, K)),
            (S::Ok, S::Ok),
            "{name}: the valid case"
        );
        for c in corruptions() {
            let mut vd = Views::new();
            let mut cp = vd.col_ptr.clone();
            let mut ri = vd.row_idx.clone();
            let mut v = vd.c();
            (c.apply)(&mut v, &mut cp, &mut ri);
            vd.col_ptr = cp;
            vd.row_idx = ri;
            if !v[1].col_ptr.is_null() {
                v[1].col_ptr = vd.col_ptr.as_ptr();
            }
            if !v[1].row_idx.is_null() {
                v[1].row_idx = vd.row_idx.as_ptr();
            }
            let g = vd.sge(N);
            let (sq, _) = q(|b| query(&v, &g, K, b));
            let sc = call(&v, &g, K);
            if sq != c.status || sc != c.status {
                bad.push(format!(
                    "{name}, {}: query {sq:?}, call {sc:?}, expected {:?}",
                    c.what, c.status
                ));
            }
        }
        // A graph over one item fewer (ignored by the graph-free models).
        let g = vd.sge(N - 1);
        let o = Outcome {
            query: q(|b| query(&v, &g, K, b)).0,
            bytes: 0,
            call: call(&v, &g, K),
        };
        if o.query != o.call {
            bad.push(format!(
                "{name}, graph.n = N - 1: query {:?}, call {:?}",
                o.query, o.call
            ));
        }
        // Ranks: zero, and ranks whose factors (M_v × K doubles) exceed isize::MAX bytes.
        let g = vd.sge(N);
        for k in [0, 1 << 61, (1 << 63) + 1, usize::MAX] {
            let (sq, bytes) = q(|b| query(&v, &g, k, b));
            let o = Outcome {
                query: sq,
                bytes,
                call: call(&v, &g, k),
            };
            if !agrees(&o) {
                bad.push(format!(
                    "{name}, K = {k}: query {sq:?} ({bytes} bytes), call {:?}",
                    o.call
                ));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "queries and calls disagree:\n{}",
        bad.join("\n")
    );
}
