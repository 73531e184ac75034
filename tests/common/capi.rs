//! Helpers for the integration tests that call the C ABI from Rust, as a C caller would
//! (views, kernels, workspace buffers, MKL weights and the alignment system).
#![allow(dead_code)]

use std::ptr::null;

use mvnmf::ffi::*;

pub type S = mvnmf_status;

/// A graph descriptor of `kind` over `n` items with no arrays (`MVNMF_GRAPH_NONE`; fill
/// in the fields the kind reads).
pub fn graph(kind: u32, n: usize) -> mvnmf_graph {
    mvnmf_graph {
        kind,
        n,
        labels: null(),
        n_classes: 0,
        affinity_row_ptr: null(),
        affinity_col_idx: null(),
        affinity_weights: null(),
        penalty_row_ptr: null(),
        penalty_col_idx: null(),
        penalty_weights: null(),
    }
}

/// No graph over `n` items.
pub fn no_graph(n: usize) -> mvnmf_graph {
    graph(MVNMF_GRAPH_NONE, n)
}

/// An affinity graph in CSR over `n` items (no penalty graph).
pub fn csr_graph(n: usize, row_ptr: &[usize], col_idx: &[usize], weights: &[f64]) -> mvnmf_graph {
    mvnmf_graph {
        affinity_row_ptr: row_ptr.as_ptr(),
        affinity_col_idx: col_idx.as_ptr(),
        affinity_weights: weights.as_ptr(),
        ..graph(MVNMF_GRAPH_CSR, n)
    }
}

pub fn dense(x: &[f64], rows: usize, cols: usize) -> mvnmf_view {
    assert_eq!(x.len(), rows * cols);
    mvnmf_view {
        kind: MVNMF_VIEW_DENSE,
        rows,
        cols,
        values: x.as_ptr(),
        col_stride: rows,
        col_ptr: null(),
        row_idx: null(),
    }
}

pub fn rbf_median() -> mvnmf_kernel {
    mvnmf_kernel {
        kind: MVNMF_KERNEL_RBF,
        gamma: 0.0,
    }
}

pub fn bytes(f: impl FnOnce(*mut usize) -> S) -> Vec<u8> {
    let mut b = 0usize;
    assert_eq!(f(&mut b), S::Ok);
    vec![0u8; b]
}

/// Deterministic data in (0, 1).
pub fn uniform(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        })
        .collect()
}

pub fn mkl(
    views: &[mvnmf_view],
    kernels: &[mvnmf_kernel],
    labels: &[u32],
    c: usize,
) -> (S, Vec<f64>) {
    let p = mvnmf_mkl_params_default();
    let h = views.len();
    let mut w = bytes(|b| unsafe {
        mvnmf_mkl_weights_workspace(views.as_ptr(), h, kernels.as_ptr(), c, &p, b)
    });
    let mut eta = vec![f64::NAN; h];
    let mut rep = std::mem::MaybeUninit::<mvnmf_mkl_report>::zeroed();
    let s = unsafe {
        mvnmf_mkl_weights(
            views.as_ptr(),
            h,
            kernels.as_ptr(),
            labels.as_ptr(),
            c,
            &p,
            eta.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            w.len(),
            rep.as_mut_ptr(),
        )
    };
    (s, eta)
}

pub fn alignment(
    views: &[mvnmf_view],
    kernels: &[mvnmf_kernel],
    labels: &[u32],
    c: usize,
) -> (S, Vec<f64>, Vec<f64>) {
    let h = views.len();
    let mut w = bytes(|b| unsafe {
        mvnmf_alignment_system_workspace(views.as_ptr(), h, kernels.as_ptr(), c, 0, b)
    });
    let (mut g, mut b, mut k) = (vec![f64::NAN; h * h], vec![f64::NAN; h], f64::NAN);
    let s = unsafe {
        mvnmf_alignment_system(
            views.as_ptr(),
            h,
            kernels.as_ptr(),
            labels.as_ptr(),
            c,
            0,
            g.as_mut_ptr(),
            b.as_mut_ptr(),
            &mut k,
            w.as_mut_ptr().cast(),
            w.len(),
        )
    };
    (s, g, b)
}
