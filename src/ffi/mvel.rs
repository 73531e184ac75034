//! The C ABI of `models::mvel`: MVEL fit, prediction, thresholds, decisions.

use core::ffi::c_void;

use super::mvsl::{mvnmf_graph, read_graph};
use super::*;
use crate::graph::GraphOp;
use crate::linalg::mat::{MatMut, MatRef};
use crate::models::mvel::{self, MvelParams};

/// Options of `mvnmf_mvel_fit`; get the defaults from `mvnmf_mvel_params_default()`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mvnmf_mvel_params {
    /// Graph weight θ₁ ≥ 0 (default 1; the fused graph has total weight n).
    pub theta1: f64,
    /// Label-correlation weight θ₂ ≥ 0 (default 0.1).
    pub theta2: f64,
    /// Outer iterations at most (default 100).
    pub max_iter: u32,
    /// Relative-decrease tolerance (default 1e-6; 0 runs all iterations).
    pub tol: f64,
    /// Lee–Seung iterations of the NMF-of-Y start (default 100).
    pub nmf_iter: u32,
    /// Seed of the start (default 0).
    pub seed: u64,
    /// `MVNMF_INIT_RANDOM` (NMF of Y; default) or `MVNMF_INIT_GIVEN`.
    pub init: u32,
    /// μ ≥ 0: an unknown (0) label counts as a weak negative of this weight
    /// (default 0, the paper's objective, whose constrained minimiser is the
    /// trivial all-ones prediction; see the Rust docs of `models::mvel`).
    pub unknown_weight: f64,
}

cparams!(mvnmf_mvel_params => MvelParams {
    theta1, theta2, max_iter, tol, nmf_iter, seed, init, unknown_weight
} validate);

/// The default MVEL options.
#[no_mangle]
pub extern "C" fn mvnmf_mvel_params_default() -> mvnmf_mvel_params {
    CField::from_rust(&MvelParams::default())
}

/// Workspace bytes of `mvnmf_mvel_fit` for `n_labels` labels, the graph's
/// `n` items and dimension `r` (reads the graph descriptor).
#[no_mangle]
pub unsafe extern "C" fn mvnmf_mvel_fit_workspace(
    n_labels: usize,
    graph: *const mvnmf_graph,
    r: usize,
    params: *const mvnmf_mvel_params,
    bytes: *mut usize,
) -> mvnmf_status {
    workspace!(bytes, {
        let p = read_params(params)?;
        let g = read_graph(graph)?;
        mvel::fit_workspace::<f64, _>(GraphOp::<f64>::items(&g), n_labels, r, &g, &p)
    })
}

/// MVEL (seed 002): `min −tr(YᵀQH) + θ₁ tr(H L_w Hᵀ) + θ₂ tr(HᵀQᵀL_ρQH)` over
/// `‖h_u‖ ≤ 1`, `‖q_s‖ ≤ 1`, by alternating projected gradient with Armijo
/// backtracking (the objective never increases).
///
/// * `labels`: the incomplete labels, `n_labels × n` bytes 0/1 (column-major;
///   0 means unknown); `L_ρ` is formed from them.
/// * `graph`: the affinity graph over the `n = graph->n` items
///   (`MVNMF_GRAPH_DENSE` from `mvnmf_fused_graph`, or `MVNMF_GRAPH_CSR`).
/// * `q`: `n_labels × r`, `h`: `r × n` doubles (written; read with
///   `MVNMF_INIT_GIVEN`).
///
/// Cost per iteration: the graph's products for each trial step (dense:
/// `2rn²` flops) plus `O(r²n + c r² + c² r)`. `MVNMF_STATUS_CANCELLED` when
/// `progress` returns nonzero (outputs at the last complete iterate); on any
/// other error the outputs are untouched. Report terms:
/// `MVNMF_TERM_LABEL_FIT`, `MVNMF_TERM_AFFINITY`, `MVNMF_TERM_LABEL_CORRELATION`.
#[no_mangle]
pub unsafe extern "C" fn mvnmf_mvel_fit(
    labels: *const u8,
    n_labels: usize,
    graph: *const mvnmf_graph,
    r: usize,
    params: *const mvnmf_mvel_params,
    q: *mut f64,
    h: *mut f64,
    work: *mut c_void,
    work_bytes: usize,
    progress: mvnmf_progress_fn,
    user: *mut c_void,
    report: *mut mvnmf_report,
) -> mvnmf_status {
    entry!({
        let p = read_params(params)?;
        let g = read_graph(graph)?;
        let n = GraphOp::<f64>::items(&g);
        if n_labels == 0 {
            return Err(Error::ZeroDimension);
        }
        let cn = n_labels.checked_mul(n).ok_or(Error::SizeOverflow)?;
        let y = MatRef::col_major(slice(labels, cn)?, n_labels, n)?;
        if q.is_null() || h.is_null() {
            return Err(Error::NullPointer);
        }
        let qq = slice_mut(q, n_labels.checked_mul(r).ok_or(Error::SizeOverflow)?)?;
        let hh = slice_mut(h, r.checked_mul(n).ok_or(Error::SizeOverflow)?)?;
        let wk = slice_mut(work.cast::<u8>(), work_bytes)?;
        let rep = with_monitor(progress, user, |m| mvel::fit(y, &g, r, &p, qq, hh, wk, m))?;
        finish(rep, report)
    })
}

/// Workspace bytes of `mvnmf_mvel_predict`, with the call's shape checks: a
/// zero dimension (`MVNMF_STATUS_ZERO_DIMENSION`), or `Q`, `H` or the scores
/// beyond `PTRDIFF_MAX` bytes (`MVNMF_STATUS_SIZE_OVERFLOW`).
#[no_mangle]
pub unsafe extern "C" fn mvnmf_mvel_predict_workspace(
    n_labels: usize,
    r: usize,
    n: usize,
    bytes: *mut usize,
) -> mvnmf_status {
    c_unsafe! { query(bytes, || mvel::predict_workspace::<f64>(n_labels, r, n)) }
}

/// The label scores `QH` (`n_labels × n`; for the fit's factors each in
/// [−1, 1] up to rounding, nothing clamped) into `scores`.
///
/// `q` and `h` must be finite (else `MVNMF_STATUS_NON_FINITE_INPUT`), and
/// `r · max|Q| · max|H|` at most 2^1022, a quarter of `DBL_MAX` rounded up
/// (else `MVNMF_STATUS_INPUT_TOO_LARGE`): then no score can overflow, and an
/// `MVNMF_STATUS_OK` always comes with finite scores. The fit's factors
/// (columns of norm at most 1) are far inside.
#[no_mangle]
pub unsafe extern "C" fn mvnmf_mvel_predict(
    q: *const f64,
    h: *const f64,
    n_labels: usize,
    r: usize,
    n: usize,
    scores: *mut f64,
    work: *mut c_void,
    work_bytes: usize,
) -> mvnmf_status {
    entry!({
        // The shape rule of the workspace query, then the buffers.
        mvel::predict_shape::<f64>(n_labels, r, n)?;
        let qq = slice(q, n_labels.checked_mul(r).ok_or(Error::SizeOverflow)?)?;
        let hh = slice(h, r.checked_mul(n).ok_or(Error::SizeOverflow)?)?;
        if scores.is_null() {
            return Err(Error::NullPointer);
        }
        let ss = slice_mut(scores, n_labels.checked_mul(n).ok_or(Error::SizeOverflow)?)?;
        let wk = slice_mut(work.cast::<u8>(), work_bytes)?;
        mvel::predict(qq, hh, n_labels, r, ss, wk)?;
        Ok(mvnmf_status::Ok)
    })
}

/// Workspace bytes of `mvnmf_mvel_thresholds` for `n` items.
#[no_mangle]
pub unsafe extern "C" fn mvnmf_mvel_thresholds_workspace(
    n: usize,
    bytes: *mut usize,
) -> mvnmf_status {
    c_unsafe! { query(bytes, || mvel::choose_thresholds_workspace(n)) }
}

/// Per-label thresholds `tau[n_labels]`: for each label the cut between two
/// consecutive distinct scores that maximises the F1 of "score > tau" against
/// the given labels (`n_labels × n` bytes 0/1); `DBL_MAX` for a label with no
/// given positive. `O(c · n log n)`.
#[no_mangle]
pub unsafe extern "C" fn mvnmf_mvel_thresholds(
    scores: *const f64,
    labels: *const u8,
    n_labels: usize,
    n: usize,
    tau: *mut f64,
    work: *mut c_void,
    work_bytes: usize,
) -> mvnmf_status {
    entry!({
        if n_labels == 0 || n == 0 {
            return Err(Error::ZeroDimension);
        }
        let cn = n_labels.checked_mul(n).ok_or(Error::SizeOverflow)?;
        let s = MatRef::col_major(slice(scores, cn)?, n_labels, n)?;
        let y = MatRef::col_major(slice(labels, cn)?, n_labels, n)?;
        if tau.is_null() {
            return Err(Error::NullPointer);
        }
        let t = slice_mut(tau, n_labels)?;
        let wk = slice_mut(work.cast::<u8>(), work_bytes)?;
        mvel::choose_thresholds(s, y, t, wk)?;
        Ok(mvnmf_status::Ok)
    })
}

/// Decisions `pred[s, u] = scores[s, u] > tau[s]` (`n_labels × n` bytes).
#[no_mangle]
pub unsafe extern "C" fn mvnmf_mvel_decide(
    scores: *const f64,
    tau: *const f64,
    n_labels: usize,
    n: usize,
    pred: *mut u8,
) -> mvnmf_status {
    entry!({
        if n_labels == 0 || n == 0 {
            return Err(Error::ZeroDimension);
        }
        let cn = n_labels.checked_mul(n).ok_or(Error::SizeOverflow)?;
        let s = MatRef::col_major(slice(scores, cn)?, n_labels, n)?;
        let t = slice(tau, n_labels)?;
        if pred.is_null() {
            return Err(Error::NullPointer);
        }
        let p = MatMut::col_major(slice_mut(pred, cn)?, n_labels, n)?;
        mvel::decide(s, t, p)?;
        Ok(mvnmf_status::Ok)
    })
}

/// Workspace bytes of `mvnmf_mvel_decide_pu` for `n` items.
#[no_mangle]
pub unsafe extern "C" fn mvnmf_mvel_decide_pu_workspace(
    n: usize,
    bytes: *mut usize,
) -> mvnmf_status {
    c_unsafe! { query(bytes, || mvel::pu_thresholds_workspace(n)) }
}

/// MVEL's decisions by a positive–unlabeled rule (Elkan & Noto 2008; the
/// module docs of `models::mvel::pu_thresholds`): per label, the given flags
/// calibrated against the scores by isotonic regression (`g = P(given |
/// score)`), the label frequency `c` (the share of the label's true positives
/// that are given) from `label_freq[s]` where it is in (0, 1] or, where it
/// is 0 or `label_freq` is NULL, estimated as the mean of `g` over the given
/// positives; an unlabeled item decided positive where `g > c / (2 − c)`
/// (its PU posterior exceeds 1/2), i.e. `scores > tau[s]`; every given
/// positive decided positive. Writes `tau[n_labels]` (`DBL_MAX`: none added;
/// `-INFINITY`: all), `pred` (`n_labels × n` bytes 0/1) and, if not NULL,
/// `label_freq_used[n_labels]` (0 for a label with no given positive).
/// `labels`: the given labels, `n_labels × n` bytes 0/1. Validated before
/// anything is written: `MVNMF_STATUS_NON_FINITE_INPUT` (a score),
/// `MVNMF_STATUS_BAD_LABEL`, `MVNMF_STATUS_BAD_PARAMETER` (a label frequency
/// outside [0, 1] or NaN), `MVNMF_STATUS_WORKSPACE_TOO_SMALL`.
/// `O(n_labels · n log n)`.
#[no_mangle]
pub unsafe extern "C" fn mvnmf_mvel_decide_pu(
    scores: *const f64,
    labels: *const u8,
    n_labels: usize,
    n: usize,
    label_freq: *const f64,
    tau: *mut f64,
    label_freq_used: *mut f64,
    pred: *mut u8,
    work: *mut c_void,
    work_bytes: usize,
) -> mvnmf_status {
    entry!({
        if n_labels == 0 || n == 0 {
            return Err(Error::ZeroDimension);
        }
        let cn = n_labels.checked_mul(n).ok_or(Error::SizeOverflow)?;
        let s = MatRef::col_major(slice(scores, cn)?, n_labels, n)?;
        let y = MatRef::col_major(slice(labels, cn)?, n_labels, n)?;
        let f = if label_freq.is_null() {
            None
        } else {
            Some(slice(label_freq, n_labels)?)
        };
        if tau.is_null() || pred.is_null() {
            return Err(Error::NullPointer);
        }
        let t = slice_mut(tau, n_labels)?;
        let used = if label_freq_used.is_null() {
            None
        } else {
            Some(slice_mut(label_freq_used, n_labels)?)
        };
        let p = MatMut::col_major(slice_mut(pred, cn)?, n_labels, n)?;
        let wk = slice_mut(work.cast::<u8>(), work_bytes)?;
        mvel::decide_pu(s, y, f, t, used, p, wk)?;
        Ok(mvnmf_status::Ok)
    })
}

/// Workspace bytes of `mvnmf_mvel_fit_anchored` for `n` items, `n_labels`
/// labels, dimension `r` and `m` anchors.
#[no_mangle]
pub unsafe extern "C" fn mvnmf_mvel_fit_anchored_workspace(
    n: usize,
    n_labels: usize,
    r: usize,
    m: usize,
    params: *const mvnmf_mvel_params,
    bytes: *mut usize,
) -> mvnmf_status {
    workspace!(bytes, {
        let p = read_params(params)?;
        anchored_dims(n, n_labels, r, m)?;
        mvel::fit_anchored_workspace::<f64>(n, n_labels, r, m, &p)
    })
}

/// The shape rule of `mvnmf_mvel_fit_anchored` on the arguments its query
/// takes too: no zero count, and the labels (`n_labels × n` bytes), `q`
/// (`n_labels × r`) and `a` (`r × m`) addressable.
fn anchored_dims(n: usize, n_labels: usize, r: usize, m: usize) -> Result<(), Error> {
    if n_labels == 0 || n == 0 || m == 0 {
        return Err(Error::ZeroDimension);
    }
    elems::<u8>(n_labels, n)?;
    elems::<f64>(n_labels, r)?;
    elems::<f64>(r, m)?;
    Ok(())
}

/// MVEL on an anchor graph (seed 002 §2.3): the items' embeddings tied to `m`
/// anchors, `H = A Z` with `(idx, z)` from `mvnmf_anchor_graph` (`s` anchors
/// per item), `L_w = I − ZᵀΛ⁻¹Z`; the same objective as `mvnmf_mvel_fit` at
/// `H = A Z`, with `||a_k|| <= 1` per anchor (so every `||h_u|| <= 1`). Writes
/// `q` (`n_labels × r`) and the anchors' `a` (`r × m`); the items' `H` from
/// `mvnmf_mvel_embed_anchored`. `labels`: `n_labels × n` bytes 0/1.
///
/// Cost per iteration `O(r·m² + r²·m + c·r·m)`; workspace `O(m² + c·m + r·m)`
/// (nothing of size `n`). Cancellation and errors as `mvnmf_mvel_fit`.
#[no_mangle]
pub unsafe extern "C" fn mvnmf_mvel_fit_anchored(
    labels: *const u8,
    n_labels: usize,
    n: usize,
    idx: *const usize,
    z: *const f64,
    s: usize,
    m: usize,
    r: usize,
    params: *const mvnmf_mvel_params,
    q: *mut f64,
    a: *mut f64,
    work: *mut c_void,
    work_bytes: usize,
    progress: mvnmf_progress_fn,
    user: *mut c_void,
    report: *mut mvnmf_report,
) -> mvnmf_status {
    entry!({
        let p = read_params(params)?;
        if n_labels == 0 || n == 0 || s == 0 || m == 0 {
            return Err(Error::ZeroDimension);
        }
        anchored_dims(n, n_labels, r, m)?;
        let cn = n_labels.checked_mul(n).ok_or(Error::SizeOverflow)?;
        let y = MatRef::col_major(slice(labels, cn)?, n_labels, n)?;
        let ns = n.checked_mul(s).ok_or(Error::SizeOverflow)?;
        let ii = slice(idx, ns)?;
        let zz = slice(z, ns)?;
        if q.is_null() || a.is_null() {
            return Err(Error::NullPointer);
        }
        let qq = slice_mut(q, n_labels.checked_mul(r).ok_or(Error::SizeOverflow)?)?;
        let aa = slice_mut(a, r.checked_mul(m).ok_or(Error::SizeOverflow)?)?;
        let wk = slice_mut(work.cast::<u8>(), work_bytes)?;
        let rep = with_monitor(progress, user, |mo| {
            mvel::fit_anchored(y, ii, zz, s, m, r, &p, qq, aa, wk, mo)
        })?;
        finish(rep, report)
    })
}

/// The items' embeddings `H = A Z` (`r × n` doubles) from the anchors' `a`
/// (`r × m`) and an anchor graph `(idx, z)` (`s` per item): the fitted items,
/// or new ones (`mvnmf_anchor_graph` with the training scales and views) —
/// the out-of-sample `h(x) = A z(x)`. `O(n·s·r)`.
#[no_mangle]
pub unsafe extern "C" fn mvnmf_mvel_embed_anchored(
    a: *const f64,
    r: usize,
    m: usize,
    idx: *const usize,
    z: *const f64,
    s: usize,
    n: usize,
    h: *mut f64,
) -> mvnmf_status {
    entry!({
        if r == 0 {
            return Err(Error::BadRank);
        }
        if m == 0 || n == 0 || s == 0 {
            return Err(Error::ZeroDimension);
        }
        let aa = slice(a, r.checked_mul(m).ok_or(Error::SizeOverflow)?)?;
        let ns = n.checked_mul(s).ok_or(Error::SizeOverflow)?;
        let ii = slice(idx, ns)?;
        let zz = slice(z, ns)?;
        if h.is_null() {
            return Err(Error::NullPointer);
        }
        let hh = slice_mut(h, r.checked_mul(n).ok_or(Error::SizeOverflow)?)?;
        mvel::embed_anchored(aa, r, ii, zz, s, hh)?;
        Ok(mvnmf_status::Ok)
    })
}
