//! The C ABI of `models::mvel`: MVEL fit, prediction, thresholds, decisions.
//!
//! Each routine's body is written once, generic over the precision of its
//! factors and scores (`double`, and `float` for the `_f32` twins); labels are
//! bytes, thresholds and label frequencies `double` in both. The thresholds'
//! and decisions' workspace queries depend on `n` alone and serve both
//! precisions; the fit's, the anchored fit's and the prediction's have `_f32`
//! twins.
//!
//! Every export is declared once (`export!`, `ffi/declare.rs`), which writes
//! the twin and the `# Safety` section from the parameters.

use core::ffi::c_void;

use super::mvsl::{mvnmf_graph, read_graph};
use super::util::*;
use crate::linalg::mat::MatRef;
use crate::linalg::real::Real;
use crate::models::mvel::{self, MvelParams};

cparams! {
    /// Options of `mvnmf_mvel_fit`; get the defaults from `mvnmf_mvel_params_default()`.
    pub struct mvnmf_mvel_params => MvelParams {
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
    } validate;
    /// The default MVEL options.
    fn mvnmf_mvel_params_default;
}

/// Where a refusal of `mvel::fit` or `mvel::fit_anchored` points once the
/// readers' own were said: a label byte neither 0 nor 1 at its row (label)
/// and column (item) of `labels` (argument 1); a bad value at its first entry
/// among `data` (`(argument, values, rows)`: checked always), then `given`
/// (the start, read only under `MVNMF_INIT_GIVEN`), in the order the model
/// checks them; any other error at `arg(e)` (0: no one argument).
fn blame<T: Real>(
    e: Error,
    (labels, n_labels): (&[u8], usize),
    data: &[(u32, &[T], usize)],
    given: &[(u32, &[T], usize)],
    arg: impl Fn(Error) -> u32,
) -> Located {
    let nonneg = e == Error::NegativeInput;
    let at = match e {
        Error::BadLabel => labels.iter().position(|&b| b > 1).map(|i| {
            let (row, col) = (i % n_labels.max(1), i / n_labels.max(1));
            Where::entry(usize::MAX, row, col).or_arg(1)
        }),
        Error::NonFiniteInput | Error::NegativeInput => data.iter().chain(given).find_map(|d| {
            let (c, row, col) = crate::data::locate_bad_in(d.1, d.2, nonneg)?;
            (c == e).then(|| Where::entry(usize::MAX, row, col).or_arg(d.0))
        }),
        _ => None,
    };
    Located::new(e, at.unwrap_or(Where::arg(arg(e))))
}

/// The shape rule of `mvnmf_mvel_fit_anchored` on the arguments its query
/// takes too: no zero count, and the labels (`n_labels × n` bytes), `q`
/// (`n_labels × r`) and `a` (`r × m`) addressable.
fn anchored_dims<T>(n: usize, n_labels: usize, r: usize, m: usize) -> Result<(), Error> {
    nonzero!(n_labels, n, m);
    elems::<u8>(n_labels, n)?;
    elems::<T>(n_labels, r)?;
    elems::<T>(r, m)?;
    Ok(())
}

export! {
    /// MVEL (seed 002): `min −tr(YᵀQH) + θ₁ tr(H L_w Hᵀ) + θ₂ tr(HᵀQᵀL_ρQH)` over
    /// `‖h_u‖ ≤ 1`, `‖q_s‖ ≤ 1`, by alternating projected gradient with Armijo
    /// backtracking (the objective never increases).
    ///
    /// * `labels`: the incomplete labels, `n_labels × n` bytes 0/1 (column-major;
    ///   0 means unknown); `L_ρ` is formed from them.
    /// * `graph`: the affinity graph over the `n = graph->n` items
    ///   (`MVNMF_GRAPH_DENSE` from `mvnmf_fused_graph`, or `MVNMF_GRAPH_CSR`;
    ///   the `_f32` twin refuses the double weights of `MVNMF_GRAPH_DENSE` with
    ///   `MVNMF_STATUS_BAD_PARAMETER`: give the graph as CSR).
    /// * `q`: `n_labels × r`, `h`: `r × n` (written; read with
    ///   `MVNMF_INIT_GIVEN`).
    ///
    /// Cost per iteration: the graph's products for each trial step (dense:
    /// `2rn²` flops) plus `O(r²n + c r² + c² r)`. `MVNMF_STATUS_CANCELLED` when
    /// `progress` returns nonzero (outputs at the last complete iterate); on any
    /// other error the outputs are untouched and `report` says where (a label
    /// byte neither 0 nor 1: `MVNMF_STATUS_BAD_LABEL` at argument 1, its label
    /// as the row and its item as the column; a bad entry of a given start at
    /// `q` or `h`). Report terms:
    /// `MVNMF_TERM_LABEL_FIT`, `MVNMF_TERM_AFFINITY`, `MVNMF_TERM_LABEL_CORRELATION`.
    fn mvnmf_mvel_fit / mvnmf_mvel_fit_f32(
        labels: *const u8 = "`n_labels × n` bytes",
        n_labels: usize,
        graph: *const mvnmf_graph,
        r: usize,
        params: *const mvnmf_mvel_params,
        q: *mut T = "`n_labels × r`",
        h: *mut T = "`r × n`",
        ..solver(work, work_bytes, progress, user, report),
    ) at report {
        let p = read_params(params).arg(5)?;
        let g = read_graph(graph).arg(3)?;
        let g = g.op::<T>().arg(3)?;
        let n = g.items();
        first_at(Error::ZeroDimension, &[(n_labels == 0, 2)])?;
        let ys = slice_ab(labels, n_labels, n).arg(1)?;
        first_at(Error::NullPointer, &[(q.is_null(), 6), (h.is_null(), 7)])?;
        let (qq, hh) = (out_ab(q, n_labels, r).arg(6)?, out_ab(h, r, n).arg(7)?);
        let wk = work_of(work, work_bytes).arg(8)?;
        let y = MatRef::col_major(ys, n_labels, n).arg(1)?;
        let rep = with_monitor(progress, user, |m| {
            mvel::fit(y, g, r, &p, &mut *qq, &mut *hh, wk, m)
        });
        let rep = rep.map_err(|e| {
            let start = [(6, &*qq, n_labels), (7, &*hh, r)];
            // After the readers, a `BadParameter` is the graph's (a penalty
            // part), and so are the item count's checks (`n` is the graph's).
            let arg = |e| match e {
                Error::BadRank => 4,
                Error::WorkspaceTooSmall => 9,
                Error::BadParameter | Error::DimensionMismatch | Error::ZeroDimension => 3,
                _ => 0,
            };
            blame(e, (ys, n_labels), &[], if p.init == Init::Given { &start } else { &[] }, arg)
        })?;
        finish(rep, report).arg(0)
    }
    /// for `n_labels` labels, the graph's `n` items and dimension `r` (reads
    /// the graph descriptor).
    workspace mvnmf_mvel_fit_workspace / mvnmf_mvel_fit_f32_workspace(
        n_labels: usize,
        graph: *const mvnmf_graph,
        r: usize,
        params: *const mvnmf_mvel_params,
    ) {
        let p = read_params(params)?;
        let g = read_graph(graph)?;
        let g = g.op::<T>()?;
        mvel::fit_workspace::<T, _>(g.items(), n_labels, r, g, &p)
    };
}

export! {
    /// The label scores `QH` (`n_labels × n`; for the fit's factors each in
    /// [−1, 1] up to rounding, nothing clamped) into `scores`.
    ///
    /// `q` and `h` must be finite (else `MVNMF_STATUS_NON_FINITE_INPUT`), and
    /// `r · max|Q| · max|H|` at most a quarter of the largest finite value
    /// (`DBL_MAX`, `FLT_MAX` in the twin) rounded up to a power of 2 (else
    /// `MVNMF_STATUS_INPUT_TOO_LARGE`): then no score can overflow, and an
    /// `MVNMF_STATUS_OK` always comes with finite scores. The fit's factors
    /// (columns of norm at most 1) are far inside.
    fn mvnmf_mvel_predict / mvnmf_mvel_predict_f32(
        q: *const T = "`n_labels × r`",
        h: *const T = "`r × n`",
        n_labels, r, n: usize,
        scores: *mut T = "`n_labels × n`",
        ..work(work, work_bytes),
    ) {
        // The shape rule of the workspace query, then the buffers.
        mvel::predict_shape::<T>(n_labels, r, n)?;
        let (qq, hh) = (slice_ab(q, n_labels, r)?, slice_ab(h, r, n)?);
        let ss = out_ab(scores, n_labels, n)?;
        let wk = work_of(work, work_bytes)?;
        mvel::predict(qq, hh, n_labels, r, ss, wk)?;
        Ok(mvnmf_status::Ok)
    }
    /// with the call's shape checks: a zero dimension
    /// (`MVNMF_STATUS_ZERO_DIMENSION`), or `Q`, `H` or the scores beyond
    /// `PTRDIFF_MAX` bytes (`MVNMF_STATUS_SIZE_OVERFLOW`).
    workspace mvnmf_mvel_predict_workspace / mvnmf_mvel_predict_f32_workspace(
        n_labels, r, n: usize,
    ) {
        mvel::predict_workspace::<T>(n_labels, r, n)
    };
}

export! {
    /// Per-label thresholds `tau[n_labels]`: for each label the cut between two
    /// consecutive distinct scores that maximises the F1 of "score > tau" against
    /// the given labels (`n_labels × n` bytes 0/1); `DBL_MAX` for a label with no
    /// given positive. `O(c · n log n)`.
    fn mvnmf_mvel_thresholds / mvnmf_mvel_thresholds_f32(
        scores: *const T = "`n_labels × n`",
        labels: *const u8 = "`n_labels × n` bytes",
        n_labels, n: usize,
        tau: *mut f64 = "`n_labels` doubles",
        ..work(work, work_bytes),
    ) {
        let (s, y) = mat_pair(scores, labels, n_labels, n)?;
        let t = out_ab(tau, n_labels, 1)?;
        let wk = work_of(work, work_bytes)?;
        mvel::choose_thresholds(s, y, t, wk)?;
        Ok(mvnmf_status::Ok)
    }
    /// for `n` items.
    workspace mvnmf_mvel_thresholds_workspace(n: usize) {
        mvel::choose_thresholds_workspace(n)
    };
}

export! {
    /// Decisions `pred[s, u] = scores[s, u] > tau[s]` (`n_labels × n` bytes).
    fn mvnmf_mvel_decide / mvnmf_mvel_decide_f32(
        scores: *const T = "`n_labels × n`",
        tau: *const f64 = "`n_labels` doubles",
        n_labels, n: usize,
        pred: *mut u8 = "`n_labels × n` bytes",
    ) {
        nonzero!(n_labels, n);
        let s = mat_ab(scores, n_labels, n)?;
        let t = slice(tau, n_labels)?;
        let p = mat_out(pred, n_labels, n)?;
        mvel::decide(s, t, p)?;
        Ok(mvnmf_status::Ok)
    };
}

export! {
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
    fn mvnmf_mvel_decide_pu / mvnmf_mvel_decide_pu_f32(
        scores: *const T = "`n_labels × n`",
        labels: *const u8 = "`n_labels × n` bytes",
        n_labels, n: usize,
        label_freq: *const f64 = "`n_labels` doubles",
        tau, label_freq_used: *mut f64 = "`n_labels` doubles",
        pred: *mut u8 = "`n_labels × n` bytes",
        ..work(work, work_bytes),
    ) {
        let (s, y) = mat_pair(scores, labels, n_labels, n)?;
        let f = opt_slice(label_freq, n_labels)?;
        require!(tau, pred);
        let t = out_ab(tau, n_labels, 1)?;
        let used = opt_slice_mut(label_freq_used, n_labels)?;
        let p = mat_out(pred, n_labels, n)?;
        let wk = work_of(work, work_bytes)?;
        mvel::decide_pu(s, y, f, t, used, p, wk)?;
        Ok(mvnmf_status::Ok)
    }
    /// for `n` items.
    workspace mvnmf_mvel_decide_pu_workspace(n: usize) {
        mvel::pu_thresholds_workspace(n)
    };
}

export! {
    /// The label frequencies `freq[n_labels]` (the share of each label's
    /// positives that is given) from given positives held out of a refit — the
    /// `label_freq` of `mvnmf_mvel_decide_pu` and `mvnmf_mvel_count_thresholds`
    /// without the bias of scores the fit has seen (the Rust docs of
    /// `models::mvel::label_freq_holdout`: a mixture-proportion estimate, Blanchard,
    /// Lee & Scott 2010; Scott 2015).
    ///
    /// The caller splits the given positives into `fit_labels` (what a refit
    /// saw) and `held_labels` (a random share, disjoint from them; both
    /// `n_labels × n` bytes 0/1), refits on `fit_labels` and passes its
    /// `scores` (`n_labels × n`). Per label, over the items the refit saw as
    /// unknown (`U`): `alpha = min over thresholds with at least
    /// min(max(min_held, 1), H) held-out positives above of (U above / |U|) /
    /// (held above / H)`, clamped to `[H / |U|, 1]`; `freq = (P' + H) / (P' +
    /// alpha |U|)` (`P'`: the label's `fit_labels` positives, `H` its held-out
    /// ones); 0 (unknown) for a label without a held-out positive. Validated
    /// before anything is written: `MVNMF_STATUS_ZERO_DIMENSION`,
    /// `MVNMF_STATUS_BAD_LABEL` (a flag not 0/1, or an entry both held out and
    /// in `fit_labels`), `MVNMF_STATUS_NON_FINITE_INPUT` (a score),
    /// `MVNMF_STATUS_WORKSPACE_TOO_SMALL`. `O(n_labels · n log n)`.
    fn mvnmf_mvel_label_freq_holdout / mvnmf_mvel_label_freq_holdout_f32(
        scores: *const T = "`n_labels × n`",
        fit_labels, held_labels: *const u8 = "`n_labels × n` bytes",
        n_labels, n, min_held: usize,
        freq: *mut f64 = "`n_labels` doubles",
        ..work(work, work_bytes),
    ) {
        let (s, fit) = mat_pair(scores, fit_labels, n_labels, n)?;
        let held = mat_ab(held_labels, n_labels, n)?;
        let f = out_ab(freq, n_labels, 1)?;
        let wk = work_of(work, work_bytes)?;
        mvel::label_freq_holdout(s, fit, held, min_held, f, wk)?;
        Ok(mvnmf_status::Ok)
    }
    /// for `n` items (`MVNMF_STATUS_ZERO_DIMENSION` for `n = 0`).
    workspace mvnmf_mvel_label_freq_holdout_workspace(n: usize) {
        mvel::label_freq_holdout_workspace(n)
    };
}

export! {
    /// MVEL's decisions by the **count rule** (the Rust docs of
    /// `models::mvel::count_thresholds`): a label with `P_s` given positives and
    /// label frequency `label_freq[s]` (e.g. from `mvnmf_mvel_label_freq_holdout`)
    /// has about `m_s = round(P_s (1 − c_s) / c_s)` hidden positives; `tau[s]`
    /// lets exactly its `m_s` best-scoring unknown items through (`score >
    /// tau[s]`; half-way between the `m_s`-th and the next unknown score, or
    /// that score where they tie, so a tied run straddling the cut is left out).
    /// `tau[s] = +INFINITY` (nothing added) where `label_freq[s] = 0`, the label
    /// has no given positive or `m_s = 0`; `-INFINITY` where `m_s` reaches the
    /// label's unknown items. When `pred` is not NULL it receives the decisions
    /// (`n_labels × n` bytes): `1` where the label is given or `score > tau[s]`.
    /// `labels`: the given labels, `n_labels × n` bytes 0/1; `label_freq`
    /// (`n_labels` doubles in [0, 1]) is required. Validated before anything is
    /// written: `MVNMF_STATUS_ZERO_DIMENSION`, `MVNMF_STATUS_NULL_POINTER`,
    /// `MVNMF_STATUS_BAD_LABEL`, `MVNMF_STATUS_NON_FINITE_INPUT` (a score),
    /// `MVNMF_STATUS_BAD_PARAMETER` (a label frequency outside [0, 1] or NaN),
    /// `MVNMF_STATUS_WORKSPACE_TOO_SMALL`. `O(n_labels · n log n)`.
    fn mvnmf_mvel_count_thresholds / mvnmf_mvel_count_thresholds_f32(
        scores: *const T = "`n_labels × n`",
        labels: *const u8 = "`n_labels × n` bytes",
        n_labels, n: usize,
        label_freq: *const f64 = "`n_labels` doubles",
        tau: *mut f64 = "`n_labels` doubles",
        pred: *mut u8 = "`n_labels × n` bytes",
        ..work(work, work_bytes),
    ) {
        let (s, y) = mat_pair(scores, labels, n_labels, n)?;
        let f = slice(label_freq, n_labels)?;
        let t = out_ab(tau, n_labels, 1)?;
        let wk = work_of(work, work_bytes)?;
        if pred.is_null() {
            mvel::count_thresholds(s, y, f, t, wk)?;
        } else {
            let p = mat_out(pred, n_labels, n)?;
            mvel::decide_count(s, y, f, t, p, wk)?;
        }
        Ok(mvnmf_status::Ok)
    }
    /// for `n` items (`MVNMF_STATUS_ZERO_DIMENSION` for `n = 0`).
    workspace mvnmf_mvel_count_thresholds_workspace(n: usize) {
        mvel::count_thresholds_workspace(n)
    };
}

export! {
    /// MVEL on an anchor graph (seed 002 §2.3): the items' embeddings tied to `m`
    /// anchors, `H = A Z` with `(idx, z)` from `mvnmf_anchor_graph` (`s` anchors
    /// per item; the `_f32` twin takes `float` weights: convert them),
    /// `L_w = I − ZᵀΛ⁻¹Z`; the same objective as `mvnmf_mvel_fit` at
    /// `H = A Z`, with `||a_k|| <= 1` per anchor (so every `||h_u|| <= 1`). Writes
    /// `q` (`n_labels × r`) and the anchors' `a` (`r × m`); the items' `H` from
    /// `mvnmf_mvel_embed_anchored`. `labels`: `n_labels × n` bytes 0/1.
    ///
    /// Cost per iteration `O(r·m² + r²·m + c·r·m)`; workspace `O(m² + c·m + r·m)`
    /// (nothing of size `n`). Cancellation and errors as `mvnmf_mvel_fit`; an
    /// anchor index `≥ m` is `MVNMF_STATUS_BAD_PARAMETER` at `idx` (its slot as
    /// the row, its item as the column), a bad weight at `z` (likewise).
    fn mvnmf_mvel_fit_anchored / mvnmf_mvel_fit_anchored_f32(
        labels: *const u8 = "`n_labels × n` bytes",
        n_labels, n: usize,
        idx: *const usize = "`n × s` indices",
        z: *const T = "`n × s`",
        s, m, r: usize,
        params: *const mvnmf_mvel_params,
        q: *mut T = "`n_labels × r`",
        a: *mut T = "`r × m`",
        ..solver(work, work_bytes, progress, user, report),
    ) at report {
        let p = read_params(params).arg(9)?;
        let zero = [(n_labels == 0, 2), (n == 0, 3), (s == 0, 6), (m == 0, 7)];
        first_at(Error::ZeroDimension, &zero)?;
        // A count of values that overflows: no one argument.
        anchored_dims::<T>(n, n_labels, r, m).arg(0)?;
        let ys = slice_ab(labels, n_labels, n).arg(1)?;
        let (ii, zz) = (slice_ab(idx, n, s).arg(4)?, slice_ab(z, n, s).arg(5)?);
        first_at(Error::NullPointer, &[(q.is_null(), 10), (a.is_null(), 11)])?;
        let (qq, aa) = (out_ab(q, n_labels, r).arg(10)?, out_ab(a, r, m).arg(11)?);
        let wk = work_of(work, work_bytes).arg(12)?;
        let y = MatRef::col_major(ys, n_labels, n).arg(1)?;
        let rep = with_monitor(progress, user, |mo| {
            mvel::fit_anchored(y, ii, zz, s, m, r, &p, &mut *qq, &mut *aa, wk, mo)
        });
        let rep = rep.map_err(|e| {
            let start = [(10, &*qq, n_labels), (11, &*aa, r)];
            // The anchor graph's own checks: `s > m`, then an index `≥ m`
            // (its slot and item), then the weights `z` (`s × n`).
            let arg = |e| match e {
                Error::BadRank => 8,
                Error::BadParameter => 6,
                Error::WorkspaceTooSmall => 13,
                _ => 0,
            };
            let bad = ii.iter().position(|&i| i >= m).filter(|_| s <= m);
            match (e, bad) {
                (Error::BadParameter, Some(i)) => {
                    Located::new(e, Where::entry(usize::MAX, i % s.max(1), i / s.max(1)).or_arg(4))
                }
                _ => {
                    let given = if p.init == Init::Given { &start[..] } else { &[] };
                    blame(e, (ys, n_labels), &[(5, zz, s)], given, arg)
                }
            }
        })?;
        finish(rep, report).arg(0)
    }
    /// for `n` items, `n_labels` labels, dimension `r` and `m` anchors.
    workspace mvnmf_mvel_fit_anchored_workspace / mvnmf_mvel_fit_anchored_f32_workspace(
        n, n_labels, r, m: usize,
        params: *const mvnmf_mvel_params,
    ) {
        let p = read_params(params)?;
        anchored_dims::<T>(n, n_labels, r, m)?;
        mvel::fit_anchored_workspace::<T>(n, n_labels, r, m, &p)
    };
}

export! {
    /// The items' embeddings `H = A Z` (`r × n`) from the anchors' `a`
    /// (`r × m`) and an anchor graph `(idx, z)` (`s` per item): the fitted items,
    /// or new ones (`mvnmf_anchor_graph` with the training scales and views) —
    /// the out-of-sample `h(x) = A z(x)`. `O(n·s·r)`.
    fn mvnmf_mvel_embed_anchored / mvnmf_mvel_embed_anchored_f32(
        a: *const T = "`r × m`",
        r, m: usize,
        idx: *const usize = "`n × s` indices",
        z: *const T = "`n × s`",
        s, n: usize,
        h: *mut T = "`r × n`",
    ) {
        if r == 0 {
            return Err(Error::BadRank);
        }
        nonzero!(m, n, s);
        let aa = slice_ab(a, r, m)?;
        let (ii, zz) = (slice_ab(idx, n, s)?, slice_ab(z, n, s)?);
        let hh = out_ab(h, r, n)?;
        mvel::embed_anchored(aa, r, ii, zz, s, hh)?;
        Ok(mvnmf_status::Ok)
    };
}
