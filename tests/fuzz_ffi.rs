//! Seeded random fuzzing of the C ABI (issue 15, item 2; no nightly toolchain needed).
//!
//! Every case is derived from one 64-bit seed (a splitmix64 stream): the entry point, the
//! dimensions, strides, CSC structure, values and their magnitudes, labels, graphs,
//! parameters, workspace size and alignment, and the corruption (if any) of one of them —
//! a NaN, a negative entry, a short stride, an unsorted or out-of-range CSC index, a zero
//! dimension, a label out of range, a bad parameter, a workspace one byte short. The call
//! goes through the C ABI exactly as a C caller makes it, and the driver checks the promises
//! of DESIGN §1:
//!
//! * the status is a known code and never `MVNMF_STATUS_INTERNAL`;
//! * on error every output (factors, encodings, weights, graphs, reports, `*total`, ...) is
//!   byte for byte what the caller put there (a sentinel pattern, or the given start);
//! * the guard bytes after every output and after the workspace are intact;
//! * on OK the outputs are finite (where the header promises it) and in range;
//! * the objective seen by the progress callback never rises (tolerance `1e-10 · ½‖X‖²`);
//!   a callback that stops gives `MVNMF_STATUS_CANCELLED` with finite outputs.
//!
//! `MVNMF_FUZZ_ITERS` sets the number of cases (default [`DEFAULT_ITERS`], a few seconds),
//! `MVNMF_FUZZ_SEED` the first seed (default fixed, so CI is reproducible). A failing case
//! prints its seed; `MVNMF_FUZZ_SEED=<seed> MVNMF_FUZZ_ITERS=1` replays it alone. Long run:
//!
//! ```text
//! MVNMF_FUZZ_ITERS=10000000 MVNMF_FUZZ_SEED=$RANDOM cargo test --release --test fuzz_ffi
//! ```
//!
//! Distributed runs (issue 31, E7; a quarter of the `shallow_fit` seeds): 2–3 ranks as
//! threads through the C ABI (`mvnmf_dist_mvsl_fit` with no graph, SGE or CSR graphs,
//! `mvnmf_dist_joint_nmf_fit`, both with their `_f32` twins, `mvnmf_dist_tge` and
//! `mvnmf_dist_tge_approx`), one rank's callback lying at a random call (fails after the data
//! moved, from one call on, returns 0 without writing, delivers garbage) or one rank's input
//! spoiled: every rank returns, the statuses agree, the report's padding is zero.
//!
//! Evaluation twins (issue 31): the assignment, k-means and kNN cases also run their
//! `_f32` twin on the same data at a float magnitude anywhere in `1e-45..1e38` (the
//! assignment's total checked against its own map and the double routine); top-N, one
//! and several queries' retrieval metrics and the average AUROC run in both precisions
//! on the same float scores (ties included) and must agree bit for bit.
//!
//! `MVNMF_FUZZ_DUMP` prints the `_f32` solver cases' data and options,
//! `MVNMF_FUZZ_OBJ` every objective a progress callback sees (replaying one seed).
//!
//! Magnitudes: every routine gets values anywhere in `1e-300..1e300`; the views of a
//! multi-view solver case lie up to 1e300 apart ([`SOLVER_SPREADS`]). The solvers refuse
//! data whose objective is not representable (`½ Σ‖X‖²_F > 2^999`) with
//! `MVNMF_STATUS_INPUT_TOO_LARGE`, and only that data ([`check_magnitude`]).
//! `MVNMF_FUZZ_DECADES` / `MVNMF_FUZZ_SPREAD` override the magnitudes (e.g. `3` / `2`, the
//! ordinary range the driver used before issue 15's D3–D5 were fixed).
//!
//! Single precision (issue 31, E1): on every other seed the joint NMF, shallow, deep and
//! pipeline cases also run their `_f32` twin on the same views as floats, each view
//! rescaled to its own magnitude in the float range, views up to 1e40 apart
//! ([`F32Views`]), with the same checks (tolerance `1e-5`: float rounding), the `_f32`
//! bound `½ Σ‖X‖²_F > 2^103` ([`check_magnitude_f32`]), and on a quarter of them 150
//! iterations (E1 needed 136).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

use mvnmf::ffi::*;

mod common;
mod query_cases;

type S = mvnmf_status;

/// Cases per `cargo test` run.
const DEFAULT_ITERS: u64 = 20_000;
/// Decades of magnitude (each side of 1) for solver inputs: the whole `f64` range (issue
/// 15, D3–D5). Data with `½ Σ‖X‖²_F` above `2^999` must be refused with
/// `MVNMF_STATUS_INPUT_TOO_LARGE`, everything below solved ([`check_magnitude`]).
const SOLVER_DECADES: i32 = 300;
/// Decades (each side) between the views of a multi-view solver case, one of these per
/// case: views as close as the papers' (mfeat: 1e4 apart) and as far apart as the range
/// allows (D5: 1e20 and more).
const SOLVER_SPREADS: &[i32] = &[1, 2, 20, 150];

fn env_i32(name: &str) -> Option<i32> {
    std::env::var(name).ok().and_then(|s| s.trim().parse().ok())
}

/// [`SOLVER_DECADES`], or `MVNMF_FUZZ_DECADES` when set (experiments).
fn solver_decades() -> i32 {
    static D: std::sync::OnceLock<i32> = std::sync::OnceLock::new();
    *D.get_or_init(|| env_i32("MVNMF_FUZZ_DECADES").unwrap_or(SOLVER_DECADES))
}

/// One of [`SOLVER_SPREADS`], or `MVNMF_FUZZ_SPREAD` when set (experiments).
fn solver_spread(g: &mut G) -> i32 {
    static D: std::sync::OnceLock<Option<i32>> = std::sync::OnceLock::new();
    let pick = g.pick(SOLVER_SPREADS);
    D.get_or_init(|| env_i32("MVNMF_FUZZ_SPREAD"))
        .unwrap_or(pick)
}

/// Guard bytes after every output buffer and the workspace.
const GUARD: usize = 24;
/// The sentinel byte outputs are filled with.
const FILL: u8 = 0xA7;
/// Seeds that once failed (kept as regression inputs; replayed first). Issue 15, on the
/// solvers before D3–D5 were fixed: D4, OK with a NaN objective (nmf_fit at 1e217, joint at
/// 1e208, shallow at 1e200, the pipeline with one view at 1e228); D3, deep_fit wrote `u`
/// and blamed the data (1e271); D5 and the L1,∞ prox, the objective rising (shallow with
/// views at 1e21..1e24, 1e31, 1e27 beside 1e-151; deep at 1e32, 1e57; the pipeline with
/// views at 1e49 and 1e69 beside 1e-112). And one that failed the oracle, not the library
/// (0x177aa369: a graph trace's rounding at data near 1e-37, see [`monitor`]; 0xa45ed0b,
/// 0xa50a192, 0xa862e7b: MVEL's kNN graph with an edge of weight exactly 0, an item far
/// from its neighbours where the heat kernel underflows, which the oracle refused).
/// Issue 31: JSNMF on subnormal data with weights up to 1e244, the objective rising at
/// iteration 1–2 (0x2028955, 0x40033d8, 0x400b430, 0x4016d7f); an `_f32` twin whose first
/// view was all zero, which put its only nonzero view at 1e-40, outside the float rule
/// (0x4027d9c, a driver fix); JSNMF with one source inside the band and the others scaled,
/// whose random start then met `W` at two magnitudes (`INTERNAL`: an infinite start
/// objective; 0x94db950, 0x99058bb, found by the long run of the first version of the scale).
const REGRESSION_SEEDS: &[u64] = &[
    0x1500a1, 0x150032, 0x150005, 0x150161, 0x1500cb, 0x1507e9, 0x1506b0, 0x150936, 0x150989,
    0x15026c, 0x150404, 0x177aa369, 0xa45ed0b, 0xa50a192, 0xa862e7b, 0x2028955, 0x40033d8,
    0x400b430, 0x4016d7f, 0x4027d9c, 0x94db950, 0x99058bb,
    // Issue 31, β-NMF: a given start far below CSC data (now BAD_PARAMETER); a light
    // view's column pulled below the clip; f32 on views far apart / entries over 20
    // decades; views more than 2^(256/β) apart (now INPUT_TOO_LARGE).
    0x201d4e1, 0x3027770, 0x30448ca, 0x402b60b, 0x4023754, 0x203e5f6, 0x2000297, 0x2001053,
    0x200243a, 0x20043ca, 0x2004630, 0x4013bd1, 0x30128a5,
    // Issue 31, the classes open until now: β-NMF's clip capping x/y below it (0x200d38d);
    // JSNMF `_f32` on subnormal float data (0x7000ada); `_f32` fits on views near
    // 1e-24 whose scale-up stopped at a weight that multiplies nothing, `β` without a
    // graph weight (0x7014bc7 shallow, 0x7002640 deep; closed: `scale::acting`); a
    // twin scaled by an unread padding entry, its read entries at 1e-41 (0x9231320, a
    // driver fix).
    0x200d38d, 0x7000ada, 0x7014bc7, 0x7002640, 0x9231320,
    // Issue 31, the same class from the 10^6-case run at 0xf000000 (48 failures, all
    // fixed by `scale::acting`): shallow 0xf00022f (CSR graph of zero
    // weights), 0xf021a58, deep 0xf007c63, 0xf0102e8; and a twin whose view near 1e308
    // was taken to zeros by an underflowed factor (0xf0b9167, a driver fix).
    0xf00022f, 0xf021a58, 0xf007c63, 0xf0102e8, 0xf0b9167,
    // Issue 31: f32 β-NMF with masks whose minimiser held an entry beyond float's range
    // (INTERNAL; now the entries are capped at what rounds to a finite float).
    0xd48fc61, 0xe05621e,
    // Issue 31: a deep `_f32` fit (three layers without the box, data near 1e-7, `γ`
    // with `α = 0`) whose objective has no minimiser: `V → 0`, `Ũ → ∞`, `UᵀU` past
    // FLT_MAX at iteration 13 (INTERNAL; now the unbounded layers are capped,
    // `scale::factor_cap`).
    0x1321c9e3,
    // Issue 31: `mvnmf_dist_tge` with class-pair penalties, a callback delivering
    // `2x + 1` at the allgather of the class-pair lists: item indices past `N` went
    // unchecked into the penalty rows (OK with a column ≥ N). Now every received
    // triple is checked (`graph::dist`, COMM_FAILED / PEER_FAILED).
    0x17227954,
];

// ------------------------------------------------------------------- generator

struct G(u64);

impl G {
    fn u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.u64() % n as u64) as usize
    }
    /// In `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
    /// True with probability `1/n`.
    fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }
    /// Uniform in `[0, 1)`.
    fn f(&mut self) -> f64 {
        (self.u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
    /// `10^e` for a random integer `e` in `-d..=d`.
    fn decade(&mut self, d: i32) -> f64 {
        10f64.powi(self.range(0, 2 * d as usize) as i32 - d)
    }
}

// ----------------------------------------------------------------- buffers

/// A caller-owned output: `len` bytes (8-aligned) then `GUARD` guard bytes, filled with
/// `FILL` or a given start; remembers what it held before the call.
struct Out {
    buf: Vec<u64>,
    len: usize,
    before: Vec<u8>,
}

impl Out {
    fn bytes(len: usize) -> Out {
        let words = (len + GUARD).div_ceil(8);
        let mut o = Out {
            buf: vec![0u64; words],
            len,
            before: vec![],
        };
        o.as_bytes_mut().fill(FILL);
        o.before = o.as_bytes().to_vec();
        o
    }
    fn f64s(n: usize) -> Out {
        Out::bytes(n * 8)
    }
    /// An output that holds `start` before the call (a given initialisation).
    fn given(start: &[f64]) -> Out {
        let mut o = Out::f64s(start.len());
        o.f64_mut().copy_from_slice(start);
        o.before = o.as_bytes().to_vec();
        o
    }
    fn as_bytes(&self) -> &[u8] {
        let b: &[u8] = bytemuck_u8(&self.buf);
        &b[..self.len + GUARD]
    }
    fn as_bytes_mut(&mut self) -> &mut [u8] {
        let n = self.len + GUARD;
        let b = bytemuck_u8_mut(&mut self.buf);
        &mut b[..n]
    }
    fn ptr<T>(&mut self) -> *mut T {
        self.buf.as_mut_ptr().cast()
    }
    fn f64(&self) -> &[f64] {
        // SAFETY: `buf` is 8-aligned and holds at least `len` bytes.
        unsafe { std::slice::from_raw_parts(self.buf.as_ptr().cast(), self.len / 8) }
    }
    fn f64_mut(&mut self) -> &mut [f64] {
        unsafe { std::slice::from_raw_parts_mut(self.buf.as_mut_ptr().cast(), self.len / 8) }
    }
    fn usizes(&self) -> &[usize] {
        unsafe { std::slice::from_raw_parts(self.buf.as_ptr().cast(), self.len / 8) }
    }
    fn u32s(&self) -> &[u32] {
        unsafe { std::slice::from_raw_parts(self.buf.as_ptr().cast(), self.len / 4) }
    }
    fn untouched(&self) -> bool {
        self.as_bytes() == &self.before[..]
    }
    fn guard_ok(&self) -> bool {
        self.as_bytes()[self.len..] == self.before[self.len..]
    }
    /// A refusal's `mvnmf_report` (issue 33): every field zero but `where_*`.
    fn is_refusal(&self) -> bool {
        self.len == std::mem::size_of::<mvnmf_report>() && {
            // SAFETY: `buf` is 8-aligned and holds one report.
            let r = unsafe { &*self.buf.as_ptr().cast::<mvnmf_report>() };
            r.iterations == 0
                && r.stop == 0
                && r.dead_views == 0
                && r.initial.total == 0.0
                && r.objective.total == 0.0
                && r.objective.n_terms == 0
                && r.where_arg <= 20
        }
    }
    /// The `where_*` fields of an `mvnmf_report` (arg, view, row, col).
    fn where_at(&self) -> (u32, usize, usize, usize) {
        // SAFETY: `buf` is 8-aligned and holds one report.
        let r = unsafe { &*self.buf.as_ptr().cast::<mvnmf_report>() };
        (r.where_arg, r.where_view, r.where_row, r.where_col)
    }
}

fn bytemuck_u8(x: &[u64]) -> &[u8] {
    unsafe { std::slice::from_raw_parts(x.as_ptr().cast(), x.len() * 8) }
}

fn bytemuck_u8_mut(x: &mut [u64]) -> &mut [u8] {
    unsafe { std::slice::from_raw_parts_mut(x.as_mut_ptr().cast(), x.len() * 8) }
}

/// The workspace: `bytes` at a random alignment (offset 0..7), then guard bytes.
/// A CSR output of `rows` rows and room for `cap` entries (sentinel-filled), and its C
/// descriptor.
struct CsrOuts {
    rp: Out,
    ci: Out,
    w: Out,
}

impl CsrOuts {
    fn new(rows: usize, cap: usize) -> CsrOuts {
        CsrOuts {
            rp: Out::bytes((rows + 1) * 8),
            ci: Out::bytes(cap * 8),
            w: Out::f64s(cap),
        }
    }
    fn c(&mut self) -> mvnmf_csr_buffers {
        mvnmf_csr_buffers {
            row_ptr: self.rp.ptr(),
            col_idx: self.ci.ptr(),
            weights: self.w.ptr(),
            capacity: self.w.len / 8,
        }
    }
}

struct Work {
    buf: Vec<u8>,
    off: usize,
    bytes: usize,
}

impl Work {
    fn new(g: &mut G, need: usize, bad: bool) -> Work {
        let bytes = if bad && need > 0 {
            need - 1 - g.below(need.min(64))
        } else {
            need + g.pick(&[0, 0, 0, 1, 13])
        };
        let off = g.below(8);
        let mut buf = vec![0u8; off + bytes + GUARD];
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(31) ^ FILL;
        }
        Work { buf, off, bytes }
    }
    fn ptr(&mut self) -> *mut c_void {
        self.buf[self.off..].as_mut_ptr().cast()
    }
    fn guard_ok(&self) -> bool {
        self.buf[self.off + self.bytes..]
            .iter()
            .enumerate()
            .all(|(i, &b)| b == ((i + self.off + self.bytes) as u8).wrapping_mul(31) ^ FILL)
    }
}

// ------------------------------------------------------------------ data

/// One view's arrays (dense or CSC) and the descriptor pointing into them.
struct ViewData {
    kind: u32,
    rows: usize,
    cols: usize,
    stride: usize,
    vals: Vec<f64>,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
}

impl ViewData {
    fn c(&self) -> mvnmf_view {
        mvnmf_view {
            kind: self.kind,
            rows: self.rows,
            cols: self.cols,
            values: self.vals.as_ptr(),
            col_stride: self.stride,
            col_ptr: if self.kind == MVNMF_VIEW_CSC {
                self.col_ptr.as_ptr()
            } else {
                null()
            },
            row_idx: if self.kind == MVNMF_VIEW_CSC {
                self.row_idx.as_ptr()
            } else {
                null()
            },
        }
    }
    /// `‖X‖²_F` of the valid view (for the monotonicity tolerance).
    fn sq_norm(&self) -> f64 {
        if self.kind == MVNMF_VIEW_CSC {
            self.vals.iter().map(|x| x * x).sum()
        } else {
            let mut s = 0.0;
            for j in 0..self.cols {
                for i in 0..self.rows {
                    // (A corrupted stride may point past the array: the call refuses it.)
                    let x = self.vals.get(i + j * self.stride).copied().unwrap_or(0.0);
                    s += x * x;
                }
            }
            s
        }
    }
}

/// A random value at magnitude `scale` (some exact zeros).
fn value(g: &mut G, scale: f64) -> f64 {
    if g.one_in(6) {
        0.0
    } else {
        (0.05 + g.f()) * scale
    }
}

fn gen_view(g: &mut G, rows: usize, cols: usize, scale: f64) -> ViewData {
    if g.one_in(3) {
        let mut col_ptr = vec![0usize];
        let (mut row_idx, mut vals) = (vec![], vec![]);
        for _ in 0..cols {
            for i in 0..rows {
                if g.one_in(2) {
                    row_idx.push(i);
                    vals.push(value(g, scale).max(scale * 0.01));
                }
            }
            col_ptr.push(vals.len());
        }
        ViewData {
            kind: MVNMF_VIEW_CSC,
            rows,
            cols,
            stride: 0,
            vals,
            col_ptr,
            row_idx,
        }
    } else {
        let stride = rows + g.pick(&[0, 0, 0, 1, 3]);
        let len = if cols == 0 {
            0
        } else {
            (cols - 1) * stride + rows
        };
        let vals = (0..len).map(|_| value(g, scale)).collect();
        ViewData {
            kind: MVNMF_VIEW_DENSE,
            rows,
            cols,
            stride,
            vals,
            col_ptr: vec![],
            row_idx: vec![],
        }
    }
}

/// Corrupts one thing of one view (the case then expects an error, or an OK where the
/// corruption is harmless for that routine, e.g. a negative entry under a linear kernel).
fn corrupt_view(g: &mut G, v: &mut ViewData) {
    match g.below(7) {
        0 if !v.vals.is_empty() => {
            let i = g.below(v.vals.len());
            v.vals[i] = g.pick(&[f64::NAN, f64::INFINITY, f64::NEG_INFINITY]);
        }
        1 if !v.vals.is_empty() => {
            let i = g.below(v.vals.len());
            v.vals[i] = -1.0 - v.vals[i];
        }
        2 if v.kind == MVNMF_VIEW_DENSE => v.stride = v.rows.saturating_sub(1),
        3 if v.kind == MVNMF_VIEW_CSC && !v.row_idx.is_empty() => {
            let i = g.below(v.row_idx.len());
            v.row_idx[i] = v.rows + g.below(3);
        }
        4 if v.kind == MVNMF_VIEW_CSC && v.row_idx.len() >= 2 => {
            // Swap two neighbours: unsorted within a column, or a column boundary moved.
            let i = g.below(v.row_idx.len() - 1);
            v.row_idx.swap(i, i + 1);
            if v.row_idx[i] == v.row_idx[i + 1] {
                v.row_idx[i] = v.rows;
            }
        }
        5 if v.kind == MVNMF_VIEW_CSC && v.col_ptr.len() > 2 => {
            let j = 1 + g.below(v.col_ptr.len() - 2);
            v.col_ptr[j] = v.col_ptr[j + 1] + 1;
        }
        _ => v.kind = g.pick(&[2, 7, u32::MAX]),
    }
}

/// Views of a case: `h` views over `n` items, magnitudes from `mag` decades each side.
/// `bad`: corrupt one of them.
fn gen_views(g: &mut G, h: usize, n: usize, decades: i32, spread: i32, bad: bool) -> Vec<ViewData> {
    let base = g.decade(decades);
    let mut scales = vec![];
    let mut vs: Vec<ViewData> = (0..h)
        .map(|_| {
            let rows = g.range(1, 7);
            let s = base * g.decade(spread);
            scales.push(s);
            gen_view(g, rows, n, s)
        })
        .collect();
    MAGS.with(|m| {
        *m.borrow_mut() = scales
            .iter()
            .map(|s| format!("{s:.0e}"))
            .collect::<Vec<_>>()
            .join(" ")
    });
    if bad && h > 0 {
        let i = g.below(h);
        if g.one_in(4) {
            vs[i].rows = 0;
        } else {
            corrupt_view(g, &mut vs[i]);
        }
    }
    vs
}

fn half_sq(vs: &[ViewData]) -> f64 {
    0.5 * vs.iter().map(ViewData::sq_norm).sum::<f64>()
}

/// Labels: a class `< c`, or unlabeled; `bad`: one out of range.
fn gen_labels(g: &mut G, n: usize, c: usize, bad: bool) -> Vec<u32> {
    let unl = g.pick(&[0usize, 4, 2]);
    let mut l: Vec<u32> = (0..n)
        .map(|_| {
            if unl > 0 && g.one_in(unl) {
                MVNMF_UNLABELED
            } else {
                g.below(c.max(1)) as u32
            }
        })
        .collect();
    if bad && n > 0 {
        let j = g.below(n);
        l[j] = c as u32 + g.below(3) as u32;
    }
    l
}

fn gen_kernels(g: &mut G, h: usize, bad: bool) -> Vec<mvnmf_kernel> {
    let mut ks: Vec<mvnmf_kernel> = (0..h)
        .map(|_| {
            let kind = g.below(4) as u32;
            let gamma = if kind == MVNMF_KERNEL_RBF && g.one_in(2) {
                g.decade(4)
            } else {
                0.0
            };
            mvnmf_kernel { kind, gamma }
        })
        .collect();
    if bad && h > 0 {
        let i = g.below(h);
        ks[i] = g.pick(&[
            mvnmf_kernel {
                kind: 9,
                gamma: 0.0,
            },
            mvnmf_kernel {
                kind: MVNMF_KERNEL_RBF,
                gamma: -1.0,
            },
            mvnmf_kernel {
                kind: MVNMF_KERNEL_RBF,
                gamma: f64::NAN,
            },
        ]);
    }
    ks
}

/// A random symmetric nonnegative CSR graph (sorted columns); `bad`: broken symmetry or order.
fn gen_csr(g: &mut G, n: usize, bad: bool) -> (Vec<usize>, Vec<usize>, Vec<f64>) {
    let mut w = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..i {
            if g.one_in(3) {
                let r = g.f();
                let x = g.pick(&[1.0, 0.5, 2.0, r]);
                w[i + j * n] = x;
                w[j + i * n] = x;
            }
        }
    }
    let (mut rp, mut ci, mut wv) = (vec![0usize], vec![], vec![]);
    for i in 0..n {
        for j in 0..n {
            if w[i + j * n] != 0.0 {
                ci.push(j);
                wv.push(w[i + j * n]);
            }
        }
        rp.push(ci.len());
    }
    if bad && !wv.is_empty() {
        let e = g.below(wv.len());
        match g.below(3) {
            0 => wv[e] = -wv[e],
            1 => wv[e] += 1.0,
            _ => ci[e] = n + 1,
        }
    }
    (rp, ci, wv)
}

// --------------------------------------------------------------- the monitor

/// What the progress callback saw.
struct Mon {
    prev: f64,
    tol: f64,
    rose: Option<(u32, f64, f64)>,
    nonfinite: bool,
    calls: u32,
    stop_at: u32,
    /// The relative tolerance: `1e-10` (double), `1e-5` (the `_f32` twins: float rounding).
    rel: f64,
}

unsafe extern "C" fn progress(p: *const mvnmf_progress, user: *mut c_void) -> i32 {
    let m = &mut *user.cast::<Mon>();
    let p = &*p;
    if p.phase != MVNMF_PHASE_ITERATIONS {
        return 0; // the pipeline's set-up reports carry no objective
    }
    let t = p.objective.total;
    if !t.is_finite() {
        m.nonfinite = true;
    }
    if std::env::var_os("MVNMF_FUZZ_OBJ").is_some() {
        let parts: Vec<f64> = p.objective.terms[..(p.objective.n_terms as usize).min(8)]
            .iter()
            .map(|t| t.value)
            .collect();
        eprintln!("  iter {} objective {t:e} parts {parts:?}", p.iter);
    }
    if m.calls == 0 {
        // The objective's own scale: its parts at the start, before they cancel.
        let parts: f64 = p.objective.terms[..(p.objective.n_terms as usize).min(8)]
            .iter()
            .map(|t| t.value.abs())
            .sum();
        if parts.is_finite() {
            m.tol = m.tol.max(m.rel * parts);
        }
    }
    // The largest rise, judged after the call (the tolerance may grow by the graph's scale,
    // which for an unbounded V is only known from the result: `Mon::graph`).
    if m.calls > 0 && t > m.prev && m.rose.is_none_or(|(_, a, b)| t - m.prev > b - a) {
        m.rose = Some((p.iter, m.prev, t));
    }
    m.prev = t;
    m.calls += 1;
    (m.calls == m.stop_at) as i32
}

/// The monitor of a solver case. The objective may not rise by more than `1e-10` of its
/// scale, the largest of
/// * `½‖X‖²` (the reconstruction is `½‖X‖² − ⟨Q, V⟩ + ½⟨P, G⟩`: it cancels near a fit);
/// * the sum of the absolute values of its parts at the start;
/// * the graph terms' own scale ([`Mon::graph`]): the traces are differences
///   `⟨V, D V⟩ − ⟨V, W V⟩`, rounded at the scale of those products, which the parts do not
///   show once they cancel. With tiny or all-zero data the graph carries the objective, and
///   `½‖X‖²` alone would ask for more than `f64` has (long-run seed 0x20226: 3.86e-34 ->
///   4.79e-34 on all-zero data; seed 0x177aa369: an SGE penalty trace of items with
///   encodings near 1e-16 flipped sign, −3.6e-49 -> 3.6e-49, data near 1e-37);
///
/// and never below the smallest normal number (subnormal objectives have no relative
/// precision).
fn monitor(g: &mut G, half_sq_x: f64) -> Mon {
    Mon {
        prev: f64::INFINITY,
        tol: (1e-10 * half_sq_x).max(f64::MIN_POSITIVE),
        rose: None,
        nonfinite: false,
        calls: 0,
        stop_at: if g.one_in(8) { g.range(1, 4) as u32 } else { 0 },
        rel: 1e-10,
    }
}

/// The monitor of an `_f32` twin ([`F32Views`]): tolerance `1e-5` of the same scales
/// (float rounding), never stops (no draw from the case's stream).
fn monitor_f32(half_sq_x: f64) -> Mon {
    Mon {
        prev: f64::INFINITY,
        tol: (1e-5 * half_sq_x).max(f64::MIN_POSITIVE),
        rose: None,
        nonfinite: false,
        calls: 0,
        stop_at: 0,
        rel: 1e-5,
    }
}

impl Mon {
    /// Widens the tolerance by the graph terms' scale, the graph's analogue of `½‖X‖²`:
    /// `β·deg·K·N·vscale²` bounds `β⟨V, (D + W) V⟩` for a graph whose rows (degree plus
    /// weights, affinity and penalty) sum to at most `deg` and `V ≤ vscale` (`vmax`, or for an
    /// unbounded V the largest entry of the result).
    fn graph(&mut self, beta: f64, deg: f64, k: usize, n: usize, vscale: f64) {
        let gs = beta * deg * (k * n) as f64 * vscale * vscale;
        if gs.is_finite() {
            self.tol = self.tol.max(self.rel * gs);
        }
    }
}

/// Row-sum bound `deg` of a case's graph ([`Mon::graph`]): SGE's degrees and weights are
/// each at most 1 per graph; a CSR graph's, twice its largest row sum.
fn graph_degree(gd: &GraphData) -> f64 {
    let rows = |(rp, _, w): &(Vec<usize>, Vec<usize>, Vec<f64>), on: bool| {
        if !on || rp.len() < 2 {
            return 0.0f64;
        }
        (0..rp.len() - 1)
            .map(|j| w[rp[j]..rp[j + 1]].iter().map(|x| x.abs()).sum::<f64>())
            .fold(0.0, f64::max)
    };
    match gd.kind {
        MVNMF_GRAPH_SGE => 4.0,
        MVNMF_GRAPH_CSR => 2.0 * (rows(&gd.aff, gd.has_aff) + rows(&gd.pen, gd.has_pen)),
        _ => 0.0,
    }
}

/// The largest entry of a result (`V`), for [`Mon::graph`] when V is unbounded.
fn max_entry(xs: &[f64]) -> f64 {
    xs.iter().fold(0.0f64, |m, &x| m.max(x.abs()))
}

// ------------------------------------------------------------------ checks

type R = Result<(), String>;

fn fail(what: impl Into<String>) -> R {
    Err(what.into())
}

thread_local! {
    /// The magnitudes of the case's views (printed with a failure).
    static MAGS: RefCell<String> = const { RefCell::new(String::new()) };
    /// Calls per (target, status), for the summary.
    static TALLY: RefCell<BTreeMap<(&'static str, String), u64>> = const { RefCell::new(BTreeMap::new()) };
    static CURRENT: RefCell<&'static str> = const { RefCell::new("") };
}

/// The status promises; `outs` are the outputs (and the workspace guard).
fn check_call(s: S, outs: &[(&str, &Out)], work: Option<&Work>) -> R {
    // Issue 31 (E8): a query runs its call's validation on the arguments it takes, so a
    // call refused for its shapes or descriptors (the statuses no value or buffer causes)
    // after its query said OK is a query that checked less than its call.
    if QUERY_OK.with(|q| q.replace(false))
        && matches!(s, S::MalformedCsc | S::SizeOverflow | S::ZeroDimension)
    {
        return fail(format!(
            "the call refused ({s:?}) what its workspace query accepted"
        ));
    }
    if let Some(q) = REFUSED.with(|r| *r.borrow()) {
        if q == S::Internal {
            return fail("the workspace query returned INTERNAL or wrote *bytes on error");
        }
        if s == S::Ok {
            return fail(format!(
                "the workspace query refused ({q:?}) but the call gave OK"
            ));
        }
    }
    let target = CURRENT.with(|c| *c.borrow());
    TALLY.with(|t| {
        *t.borrow_mut()
            .entry((target, format!("{s:?}")))
            .or_insert(0) += 1
    });
    let code = s as u32;
    if code != 0 && mvnmf::Error::from_code(code).is_none() {
        return fail(format!("status {code} out of range"));
    }
    if s == S::Internal {
        return fail("status INTERNAL");
    }
    for (name, o) in outs {
        if !o.guard_ok() {
            return fail(format!(
                "guard bytes after `{name}` overwritten (status {s:?})"
            ));
        }
        // Issue 33: a refused solver writes its report saying where (every field zero
        // but `where_*`); the other outputs stay untouched.
        let refusal = name.starts_with("report") && o.is_refusal();
        if s != S::Ok && s != S::Cancelled && !o.untouched() && !refusal {
            return fail(format!("`{name}` written although the status is {s:?}"));
        }
        // ... and says which argument: every refusal but a peer's.
        let refused = !matches!(s, S::Ok | S::Cancelled | S::PeerFailed);
        let solver_report = o.len == std::mem::size_of::<mvnmf_report>();
        if refused
            && name.starts_with("report")
            && solver_report
            && !(refusal && o.where_at().0 >= 1)
        {
            return fail(format!(
                "`{name}` does not say where ({s:?}, at {:?})",
                o.where_at()
            ));
        }
    }
    if let Some(w) = work {
        if !w.guard_ok() {
            return fail("guard bytes after the workspace overwritten");
        }
    }
    Ok(())
}

fn finite(name: &str, xs: &[f64]) -> R {
    match xs.iter().position(|x| !x.is_finite()) {
        Some(i) => fail(format!("`{name}[{i}]` = {} on OK", xs[i])),
        None => Ok(()),
    }
}

/// The solvers refuse data with `INPUT_TOO_LARGE` exactly when `½ Σ‖X‖²_F > 2^999`
/// (up to the rounding of the sum), and solve everything below.
fn check_magnitude(s: S, vs: &[ViewData]) -> R {
    let half = half_sq(vs);
    let lim = 2f64.powi(999);
    if s == S::InputTooLarge && half < lim * (1.0 - 1e-9) {
        return fail(format!("INPUT_TOO_LARGE for ½‖X‖² = {half:e}"));
    }
    if (s == S::Ok || s == S::Cancelled) && half > lim * (1.0 + 1e-9) {
        return fail(format!("{s:?} for ½‖X‖² = {half:e} (above 2^999)"));
    }
    Ok(())
}

/// The `_f32` solvers' bound (`½ Σ‖X‖²_F > 2^103`, computed in double from the floats),
/// as [`check_magnitude`].
fn check_magnitude_f32(s: S, fv: &F32Views) -> R {
    let half = fv.half_sq();
    let lim = 2f64.powi(103);
    if s == S::InputTooLarge && half < lim * (1.0 - 1e-6) {
        return fail(format!("f32: INPUT_TOO_LARGE for ½‖X‖² = {half:e}"));
    }
    if (s == S::Ok || s == S::Cancelled) && half > lim * (1.0 + 1e-6) {
        return fail(format!("f32: {s:?} for ½‖X‖² = {half:e} (above 2^103)"));
    }
    Ok(())
}

fn check_mon(s: S, m: &Mon) -> R {
    if let Some((it, a, b)) = m.rose.filter(|&(_, a, b)| b > a + m.tol) {
        return fail(format!(
            "objective rose at iteration {it}: {a:e} -> {b:e} (tol {:e})",
            m.tol
        ));
    }
    if m.nonfinite && (s == S::Ok || s == S::Cancelled) {
        return fail(format!("non-finite objective with status {s:?}"));
    }
    if m.stop_at > 0 && m.calls >= m.stop_at && s == S::Ok {
        return fail("the callback asked to stop and the status is OK");
    }
    Ok(())
}

thread_local! {
    /// The case's workspace query refused its arguments: the call must not succeed.
    static REFUSED: RefCell<Option<S>> = const { RefCell::new(None) };
    /// The last workspace query said OK (cleared by the next `check_call`), in a target
    /// whose queries take every shape argument of their calls ([`STRICT_TARGETS`]).
    static QUERY_OK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The case's target is one of [`STRICT_TARGETS`].
    static STRICT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Bytes of a workspace query; when it refuses, records that (the call itself must then
/// refuse too: query and call agree) and returns a generous size so the call is still made.
fn query(f: impl FnOnce(*mut usize) -> S) -> usize {
    let mut b = usize::MAX;
    let s = f(&mut b);
    QUERY_OK.with(|q| q.set(s == S::Ok && STRICT.with(|t| t.get())));
    if s == S::Ok {
        b
    } else {
        if b != usize::MAX || s == S::Internal {
            // Reported by the next `check_call` (as `Internal`: the case fails).
            REFUSED.with(|r| *r.borrow_mut() = Some(S::Internal));
        } else {
            REFUSED.with(|r| *r.borrow_mut() = Some(s));
        }
        1 << 16
    }
}

// ------------------------------------------------------------------ targets

fn nmf_params(g: &mut G, bad: bool) -> mvnmf_nmf_params {
    let mut p = mvnmf_nmf_params_default();
    p.max_iter = g.range(0, 12) as u32;
    p.tol = g.pick(&[0.0, 1e-6, 1e-3]);
    p.eps = g.pick(&[f64::EPSILON, 0.0, 1e-9]);
    p.vmax = g.pick(&[f64::INFINITY, 1.0, 0.5]);
    p.seed = g.u64();
    p.init = g.pick(&[MVNMF_INIT_RANDOM, MVNMF_INIT_GIVEN]);
    // Both stopping rules, from a bit of the seed (no new draw: the cases of
    // earlier seeds stay what they were).
    p.stop_rule = (p.seed >> 7 & 1) as u32;
    if bad && g.one_in(3) {
        match g.below(4) {
            0 => p.tol = -1.0,
            1 => p.eps = f64::NAN,
            2 => p.vmax = 0.0,
            _ if p.seed & 1 == 0 => p.init = 5,
            _ => p.stop_rule = 2 + (p.seed >> 8) as u32 % 1000,
        }
    }
    p
}

/// Starts for `u` (or sentinels for a random start).
fn start(g: &mut G, n: usize, given: bool, vmax: f64) -> Out {
    if given {
        let s: Vec<f64> = (0..n).map(|_| g.f().min(vmax * 0.999) + 1e-3).collect();
        Out::given(&s)
    } else {
        Out::f64s(n)
    }
}

fn t_nmf(g: &mut G, bad: bool) -> R {
    let n = g.range(1, 10);
    let k = if bad && g.one_in(5) { 0 } else { g.range(1, 4) };
    let bad_2 = bad && g.one_in(2);
    let vs = gen_views(g, 1, n, solver_decades(), 0, bad_2);
    let p = nmf_params(g, bad);
    let x = vs[0].c();
    let need = query(|b| unsafe { mvnmf_nmf_fit_workspace(&x, k, &p, b) });
    let given = p.init == MVNMF_INIT_GIVEN;
    let mut u = start(g, x.rows * k, given, 1.0);
    let mut v = start(g, k * n, given, p.vmax.min(1.0));
    let mut rep = Out::bytes(std::mem::size_of::<mvnmf_report>());
    let bad_3 = bad && g.one_in(3);
    let mut w = Work::new(g, need, bad_3);
    let mut m = monitor(g, half_sq(&vs));
    let s = unsafe {
        mvnmf_nmf_fit(
            &x,
            k,
            &p,
            u.ptr(),
            v.ptr(),
            w.ptr(),
            w.bytes,
            Some(progress),
            (&mut m as *mut Mon).cast(),
            rep.ptr(),
        )
    };
    check_call(s, &[("u", &u), ("v", &v), ("report", &rep)], Some(&w))?;
    check_mon(s, &m)?;
    check_magnitude(s, &vs)?;
    if s == S::Ok || s == S::Cancelled {
        finite("u", u.f64())?;
        finite("v", v.f64())?;
    }
    Ok(())
}

fn factors(g: &mut G, vs: &[ViewData], k: usize, given: bool) -> Vec<Out> {
    vs.iter()
        .map(|v| start(g, v.rows * k, given, 1.0))
        .collect()
}

fn t_joint(g: &mut G, bad: bool) -> R {
    let (h, n) = (g.range(1, 3), g.range(1, 10));
    let k = g.range(1, 4);
    let bad_2 = bad && g.one_in(2);
    let spread = solver_spread(g);
    let vs = gen_views(g, h, n, solver_decades(), spread, bad_2);
    let cv: Vec<mvnmf_view> = vs.iter().map(ViewData::c).collect();
    let p = nmf_params(g, bad);
    let need = query(|b| unsafe { mvnmf_joint_nmf_fit_workspace(cv.as_ptr(), h, k, &p, b) });
    let given = p.init == MVNMF_INIT_GIVEN;
    let mut us = factors(g, &vs, k, given);
    let ptrs: Vec<*mut f64> = us.iter_mut().map(|u| u.ptr()).collect();
    let mut v = start(g, k * n, given, p.vmax.min(1.0));
    // The `_f32` twin's starts: the same as the double call's (not its results, which
    // may lie far outside the float range).
    let (us32, v32): (Vec<Out>, Out) = (us.iter().map(as_f32).collect(), as_f32(&v));
    let mut rep = Out::bytes(std::mem::size_of::<mvnmf_report>());
    let bad_3 = bad && g.one_in(3);
    let mut w = Work::new(g, need, bad_3);
    let mut m = monitor(g, half_sq(&vs));
    let s = unsafe {
        mvnmf_joint_nmf_fit(
            cv.as_ptr(),
            h,
            k,
            &p,
            ptrs.as_ptr(),
            v.ptr(),
            w.ptr(),
            w.bytes,
            Some(progress),
            (&mut m as *mut Mon).cast(),
            rep.ptr(),
        )
    };
    let mut outs: Vec<(&str, &Out)> = us.iter().map(|u| ("u", u)).collect();
    outs.push(("v", &v));
    outs.push(("report", &rep));
    check_call(s, &outs, Some(&w))?;
    check_mon(s, &m)?;
    check_magnitude(s, &vs)?;
    if s == S::Ok || s == S::Cancelled {
        for u in &us {
            finite("u", u.f64())?;
        }
        finite("v", v.f64())?;
    }
    check_views_agrees(s, &cv, &rep)?;
    // Single precision on every other seed (a bit of the seed: no new draw, the
    // cases of earlier seeds stay what they were): the same views and factors
    // as floats through mvnmf_joint_nmf_fit_f32, with the same checks.
    if p.seed >> 9 & 1 == 1 {
        joint_f32(&vs, k, &p, us32, v32)?;
    }
    Ok(())
}

/// `mvnmf_check_views` (nonnegative) against a solver's call on the same views: where the
/// solver refused its views (`where_arg` 1) for a descriptor or a value, the check says the
/// same status at the same view, row and column; where the solver ran, the check passes.
/// (The magnitude bound and the item counts are the solver's alone.) No draw from the seed.
fn check_views_agrees(s: S, cv: &[mvnmf_view], rep: &Out) -> R {
    let views_refused = s != S::Ok && s != S::Cancelled && rep.where_at().0 == 1;
    let solver_only = matches!(s, S::InputTooLarge | S::DimensionMismatch);
    if !(s == S::Ok || s == S::Cancelled || views_refused && !solver_only) {
        return Ok(());
    }
    let mut crep = Out::bytes(std::mem::size_of::<mvnmf_report>());
    let c = unsafe { mvnmf_check_views(cv.as_ptr(), cv.len(), 1, crep.ptr()) };
    let (want, at) = if views_refused {
        (s, rep.where_at())
    } else {
        (S::Ok, (0, usize::MAX, usize::MAX, usize::MAX))
    };
    if c != want || crep.where_at() != at {
        return fail(format!(
            "check_views: {c:?} at {:?}, the solver {s:?} at {:?}",
            crep.where_at(),
            rep.where_at()
        ));
    }
    Ok(())
}

/// An output holding `o`'s values as floats (its FILL pattern when `o` is not
/// a given start: the content does not matter then).
fn as_f32(o: &Out) -> Out {
    let vals: Vec<f32> = o.f64().iter().map(|&x| x as f32).collect();
    let mut out = Out::bytes(vals.len() * 4);
    for (i, x) in vals.iter().enumerate() {
        out.as_bytes_mut()[4 * i..4 * i + 4].copy_from_slice(&x.to_ne_bytes());
    }
    out.before = out.as_bytes().to_vec();
    out
}

fn f32s(o: &Out) -> Vec<f32> {
    o.as_bytes()[..o.len]
        .chunks_exact(4)
        .map(|c| f32::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

/// Decades (each side of a base) between the views of an `_f32` twin: from the papers'
/// (1e4 apart) to the whole float range (issue 31, E1: 1e-4 beside 1e4 already gave NaN).
const F32_SPREADS: &[i32] = &[0, 1, 2, 4, 10, 20, 40];

/// A case's views as floats for its `_f32` twin, view `i` rescaled so that its largest
/// entry is `10^e_i`: the first view at a base in `-33..=16`, the others up to one of
/// [`F32_SPREADS`] decades below it, clamped to `-44` — views far apart anywhere in the float range,
/// subnormal ones included, and past the `_f32` bound (`2^103`) at the top. Drawn from a
/// generator seeded by the case's solver seed, not from the case's stream (earlier seeds'
/// cases stay what they were).
struct F32Views {
    vals: Vec<Vec<f32>>,
    cv: Vec<mvnmf_view_f32>,
    exps: Vec<i32>,
}

impl F32Views {
    fn new(vs: &[ViewData], seed: u64) -> F32Views {
        let mut g = G(seed ^ 0xF32F_32F3_2F32_F32F);
        // The largest view at `10^base ≥ 1e-33` (`2^-112` is the `f32` solvers'
        // furthest scale-up: below it the scaled products fall into subnormals,
        // `crate::steps::scale`, "Limits"); the others anywhere below it.
        // Issue 31: down to 1e-33 with graph or sparsity weights too (before, the
        // scale-up stopped at a weight that multiplies nothing, `β` without a graph
        // weight or `α` without a group norm, and the products of the scaled data
        // lost their precision: `crate::steps::scale::acting`).
        let base = g.range(0, 49) as i32 - 33;
        let spread = g.pick(F32_SPREADS);
        // The view at the base: the first one with a nonzero entry (an all-zero
        // first view would put every other view below the base, outside the
        // range; issue 31, 0x4027d9c).
        // The entries the call reads ([`stored`]): a dense view's stride padding
        // is never read (issue 31, 0x9231320: a padding entry at 1e-19 put the
        // view's read entries at 1e-41, outside the float rule).
        let read: Vec<Vec<f64>> = vs.iter().map(stored).collect();
        let lead = read
            .iter()
            .position(|x| x.iter().any(|a| a.is_finite() && *a != 0.0))
            .unwrap_or(0);
        let mut exps = vec![];
        let vals: Vec<Vec<f32>> = vs
            .iter()
            .enumerate()
            .map(|(i, x)| {
                // The first view at the base, the others up to `spread` decades below.
                let below = if i == lead {
                    0
                } else {
                    g.range(0, spread as usize) as i32
                };
                let e = (base - below).clamp(-44, 17);
                exps.push(e);
                let max = read[i]
                    .iter()
                    .filter(|a| a.is_finite())
                    .fold(0.0f64, |m, a| m.max(a.abs()));
                let f = if max > 0.0 { 10f64.powi(e) / max } else { 1.0 };
                // A factor outside the normal range (a view near 1e308 taken to 1e-26:
                // `f` = 1e-334 underflowed to 0 and the view to zeros, which put the
                // twin's data at its other view's 1e-40, outside the float rule; issue
                // 31, 0xf0b9167, a driver fix): divide by `max` first.
                let split = !f.is_normal();
                // NaN and ±∞ (a corrupted view) stay what they are.
                x.vals
                    .iter()
                    .map(|&a| {
                        if !a.is_finite() {
                            a as f32
                        } else if split {
                            (a / max * 10f64.powi(e)) as f32
                        } else {
                            (a * f) as f32
                        }
                    })
                    .collect()
            })
            .collect();
        let cv = vs
            .iter()
            .zip(&vals)
            .map(|(x, f)| {
                let c = x.c();
                mvnmf_view_f32 {
                    kind: c.kind,
                    rows: c.rows,
                    cols: c.cols,
                    values: f.as_ptr(),
                    col_stride: c.col_stride,
                    col_ptr: c.col_ptr,
                    row_idx: c.row_idx,
                }
            })
            .collect();
        let fv = F32Views { vals, cv, exps };
        MAGS.with(|m| {
            let mut m = m.borrow_mut();
            *m += &format!(
                "; f32 twin at {}",
                fv.exps
                    .iter()
                    .map(|e| format!("1e{e}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        });
        fv
    }

    /// `½ Σ‖X‖²_F` in double, over the entries the views address (as [`ViewData::sq_norm`]).
    fn half_sq(&self) -> f64 {
        let mut s = 0.0;
        for (c, f) in self.cv.iter().zip(&self.vals) {
            if c.kind == MVNMF_VIEW_CSC {
                s += f.iter().map(|&x| x as f64 * x as f64).sum::<f64>();
            } else {
                for j in 0..c.cols {
                    for i in 0..c.rows {
                        let x = f.get(i + j * c.col_stride).copied().unwrap_or(0.0) as f64;
                        s += x * x;
                    }
                }
            }
        }
        0.5 * s
    }

    /// Before the twin's call: its own target name in the tally, no refusal recorded.
    fn begin(name: &'static str) {
        CURRENT.with(|c| *c.borrow_mut() = name);
        REFUSED.with(|r| *r.borrow_mut() = None);
    }
}

/// An `_f32` twin's checks after [`check_call`]: the monitor (float tolerance), the
/// magnitude rule, finite float outputs (all but the last of `outs`, the report).
fn check_f32(s: S, m: &Mon, fv: &F32Views, outs: &[(&str, &Out)]) -> R {
    check_mon(s, m).map_err(|e| format!("{} (f32 twin): {e}", CURRENT.with(|c| *c.borrow())))?;
    check_magnitude_f32(s, fv)?;
    if s == S::Ok || s == S::Cancelled {
        for (name, o) in &outs[..outs.len() - 1] {
            if let Some(i) = f32s(o).iter().position(|x| !x.is_finite()) {
                return fail(format!("`{name}[{i}]` = {} on {s:?}", f32s(o)[i]));
            }
        }
    }
    Ok(())
}

/// Iterations of an `_f32` twin: the case's, or on a quarter of the seeds 150 (E1 needed
/// 136 for a dead view's Lipschitz guess to leave the float range).
fn f32_iters(seed: u64, max_iter: u32) -> u32 {
    if seed >> 12 & 3 == 0 {
        150
    } else {
        max_iter
    }
}

fn joint_f32(vs: &[ViewData], k: usize, p: &mvnmf_nmf_params, mut uf: Vec<Out>, mut vf: Out) -> R {
    let fv = F32Views::new(vs, p.seed);
    let cv = &fv.cv;
    F32Views::begin("joint_nmf_fit_f32");
    let mut p = *p;
    p.max_iter = f32_iters(p.seed, p.max_iter);
    let p = &p;
    let h = cv.len();
    let need = query(|b| unsafe { mvnmf_joint_nmf_fit_f32_workspace(cv.as_ptr(), h, k, p, b) });
    let ptrs: Vec<*mut f32> = uf.iter_mut().map(|u| u.ptr()).collect();
    let mut rep = Out::bytes(std::mem::size_of::<mvnmf_report>());
    let mut w = vec![0u8; need.max(1)];
    let mut m = monitor_f32(fv.half_sq());
    let s = unsafe {
        mvnmf_joint_nmf_fit_f32(
            cv.as_ptr(),
            h,
            k,
            p,
            ptrs.as_ptr(),
            vf.ptr(),
            w.as_mut_ptr().cast(),
            need,
            Some(progress),
            (&mut m as *mut Mon).cast(),
            rep.ptr(),
        )
    };
    let mut outs: Vec<(&str, &Out)> = uf.iter().map(|u| ("u (f32)", u)).collect();
    outs.push(("v (f32)", &vf));
    outs.push(("report (f32)", &rep));
    check_call(s, &outs, None)?;
    check_f32(s, &m, &fv, &outs)
}

/// A graph descriptor with its arrays kept alive.
struct GraphData {
    labels: Vec<u32>,
    aff: (Vec<usize>, Vec<usize>, Vec<f64>),
    pen: (Vec<usize>, Vec<usize>, Vec<f64>),
    kind: u32,
    n: usize,
    c: usize,
    has_aff: bool,
    has_pen: bool,
}

impl GraphData {
    fn gen(g: &mut G, n: usize, bad: bool) -> GraphData {
        let kind = g.below(3) as u32;
        let c = g.range(1, 4);
        let (b1, b2, b3) = (bad && g.one_in(3), bad && g.one_in(3), bad && g.one_in(3));
        // A graph over the wrong number of items (its arrays sized for that number: a C
        // caller's arrays always match what it says they hold).
        let n = if bad && g.one_in(6) { n + 1 } else { n };
        GraphData {
            labels: gen_labels(g, n, c, b1),
            aff: gen_csr(g, n, b2),
            pen: gen_csr(g, n, b3),
            kind: if bad && g.one_in(6) { 7 } else { kind },
            n,
            c,
            has_aff: g.one_in(2) || n < 2,
            has_pen: g.one_in(2),
        }
    }
    fn c(&self) -> mvnmf_graph {
        let opt = |yes: bool, p: *const usize| if yes { p } else { null() };
        mvnmf_graph {
            kind: self.kind,
            n: self.n,
            labels: self.labels.as_ptr(),
            n_classes: self.c,
            affinity_row_ptr: opt(self.has_aff, self.aff.0.as_ptr()),
            affinity_col_idx: self.aff.1.as_ptr(),
            affinity_weights: self.aff.2.as_ptr(),
            penalty_row_ptr: opt(self.has_pen, self.pen.0.as_ptr()),
            penalty_col_idx: self.pen.1.as_ptr(),
            penalty_weights: self.pen.2.as_ptr(),
        }
    }
}

fn shallow_params(g: &mut G, bad: bool) -> mvnmf_mvsl_params {
    let mut p = std::mem::MaybeUninit::<mvnmf_mvsl_params>::zeroed();
    let preset = if bad && g.one_in(8) {
        9
    } else {
        g.below(4) as u32
    };
    let s = unsafe { mvnmf_mvsl_params_preset(preset, p.as_mut_ptr()) };
    let mut p = unsafe { p.assume_init() };
    if s != S::Ok {
        p.u_inner = 0; // stays a bad parameter set
    }
    p.max_iter = g.range(0, 10) as u32;
    p.seed = g.u64();
    p.tol = g.pick(&[0.0, 1e-6]);
    p.stop_rule = (p.seed >> 7 & 1) as u32;
    let f = g.pick(&[0.0, 0.1, 1.0, 10.0]);
    p.alpha *= f;
    p.beta *= g.pick(&[0.0, 0.1, 1.0, 10.0]);
    p.gamma *= g.pick(&[0.0, 1.0]);
    p.init = g.pick(&[MVNMF_INIT_RANDOM, MVNMF_INIT_RANDOM, MVNMF_INIT_GIVEN]);
    p.u_inner = p.u_inner.max(1) * g.range(1, 2) as u32;
    if bad && g.one_in(3) {
        match g.below(5) {
            0 => p.alpha = -1.0,
            1 => p.eta_up = 1.0,
            2 => p.vmax = f64::NAN,
            3 => p.sparsity = 5,
            _ => p.u_inner = 0,
        }
    }
    p
}

fn t_shallow(g: &mut G, bad: bool) -> R {
    let (h, n) = (g.range(1, 3), g.range(1, 10));
    let k = g.range(1, 4);
    let bad_2 = bad && g.one_in(2);
    let spread = solver_spread(g);
    let vs = gen_views(g, h, n, solver_decades(), spread, bad_2);
    let cv: Vec<mvnmf_view> = vs.iter().map(ViewData::c).collect();
    let bad_2 = bad && g.one_in(2);
    let gd = GraphData::gen(g, n, bad_2);
    let gr = gd.c();
    let p = shallow_params(g, bad);
    let need = query(|b| unsafe { mvnmf_mvsl_fit_workspace(cv.as_ptr(), h, &gr, k, &p, b) });
    let given = p.init == MVNMF_INIT_GIVEN;
    let mut us = factors(g, &vs, k, given);
    let ptrs: Vec<*mut f64> = us.iter_mut().map(|u| u.ptr()).collect();
    let vmax = if p.vmax.is_finite() { p.vmax } else { 1.0 };
    let mut v = start(g, k * n, given, vmax);
    // The `_f32` twin's starts: the same as the double call's.
    let (us32, v32): (Vec<Out>, Out) = (us.iter().map(as_f32).collect(), as_f32(&v));
    let mut rep = Out::bytes(std::mem::size_of::<mvnmf_report>());
    let bad_3 = bad && g.one_in(3);
    let mut w = Work::new(g, need, bad_3);
    let mut m = monitor(g, half_sq(&vs));
    let s = unsafe {
        mvnmf_mvsl_fit(
            cv.as_ptr(),
            h,
            &gr,
            k,
            &p,
            ptrs.as_ptr(),
            v.ptr(),
            w.ptr(),
            w.bytes,
            Some(progress),
            (&mut m as *mut Mon).cast(),
            rep.ptr(),
        )
    };
    let mut outs: Vec<(&str, &Out)> = us.iter().map(|u| ("u", u)).collect();
    outs.push(("v", &v));
    outs.push(("report", &rep));
    check_call(s, &outs, Some(&w))?;
    if s == S::Ok || s == S::Cancelled {
        let vscale = if p.vmax.is_finite() {
            p.vmax
        } else {
            max_entry(v.f64())
        };
        m.graph(p.beta, graph_degree(&gd), k, n, vscale);
    }
    check_mon(s, &m)?;
    check_magnitude(s, &vs)?;
    if s == S::Ok || s == S::Cancelled {
        for u in &us {
            finite("u", u.f64())?;
        }
        finite("v", v.f64())?;
        if v.f64().iter().any(|&x| x < 0.0 || x > p.vmax) {
            return fail("V outside [0, vmax]");
        }
    }
    // The distributed entry points (issue 31, E7) on a quarter of these seeds
    // (bits of the seed: no draw before this point changes, the cases of
    // earlier seeds stay what they were).
    if p.seed >> 41 & 3 == 0 {
        t_dist(g, bad)?;
    }
    // Single precision on every other seed (a bit of the seed, no new draw): the views
    // as floats far apart ([`F32Views`]) through mvnmf_mvsl_fit_f32, with the same checks.
    if p.seed >> 9 & 1 == 1 {
        shallow_f32(&vs, &gd, k, &p, us32, v32)?;
    }
    Ok(())
}

fn shallow_f32(
    vs: &[ViewData],
    gd: &GraphData,
    k: usize,
    p: &mvnmf_mvsl_params,
    mut uf: Vec<Out>,
    mut vf: Out,
) -> R {
    let fv = F32Views::new(vs, p.seed);
    let (cv, h, gr) = (&fv.cv, vs.len(), gd.c());
    F32Views::begin("shallow_fit_f32");
    let mut p = *p;
    p.max_iter = f32_iters(p.seed, p.max_iter);
    let p = &p;
    let need = query(|b| unsafe { mvnmf_mvsl_fit_f32_workspace(cv.as_ptr(), h, &gr, k, p, b) });
    let ptrs: Vec<*mut f32> = uf.iter_mut().map(|u| u.ptr()).collect();
    let mut rep = Out::bytes(std::mem::size_of::<mvnmf_report>());
    let mut w = vec![0u8; need.max(1)];
    let mut m = monitor_f32(fv.half_sq());
    if std::env::var_os("MVNMF_FUZZ_DUMP").is_some() {
        eprintln!(
            "shallow_f32: exps {:?} half_sq {:e} k {k} alpha {} beta {} gamma {} vmax {} init {} sparsity {} iters {} graph kind {}",
            fv.exps, fv.half_sq(), p.alpha, p.beta, p.gamma, p.vmax, p.init, p.sparsity, p.max_iter, gd.kind
        );
        for (x, c) in fv.vals.iter().zip(cv.iter()) {
            eprintln!("  view {}x{} kind {} {:?}", c.rows, c.cols, c.kind, x);
        }
    }
    let s = unsafe {
        mvnmf_mvsl_fit_f32(
            cv.as_ptr(),
            h,
            &gr,
            k,
            p,
            ptrs.as_ptr(),
            vf.ptr(),
            w.as_mut_ptr().cast(),
            need,
            Some(progress),
            (&mut m as *mut Mon).cast(),
            rep.ptr(),
        )
    };
    let mut outs: Vec<(&str, &Out)> = uf.iter().map(|u| ("u (f32)", u)).collect();
    outs.push(("v (f32)", &vf));
    outs.push(("report (f32)", &rep));
    check_call(s, &outs, None)?;
    if s == S::Ok || s == S::Cancelled {
        let vscale = if p.vmax.is_finite() {
            p.vmax
        } else {
            f32s(&vf).iter().fold(0.0f64, |a, &x| a.max(x.abs() as f64))
        };
        m.graph(p.beta, graph_degree(gd), k, gr.n, vscale);
        if f32s(&vf).iter().any(|&x| x < 0.0 || x as f64 > p.vmax) {
            return fail("V (f32) outside [0, vmax]");
        }
    }
    check_f32(s, &m, &fv, &outs)
}

fn t_deep(g: &mut G, bad: bool) -> R {
    let (h, n) = (g.range(1, 2), g.range(1, 8));
    let bad_2 = bad && g.one_in(2);
    let spread = solver_spread(g);
    let vs = gen_views(g, h, n, solver_decades(), spread, bad_2);
    let cv: Vec<mvnmf_view> = vs.iter().map(ViewData::c).collect();
    let nl = g.range(1, 3);
    let mut layers: Vec<usize> = (0..nl).map(|_| g.range(1, 5)).collect();
    if bad && g.one_in(6) {
        layers[0] = 0;
    }
    let bad_3 = bad && g.one_in(3);
    let gd = GraphData::gen(g, n, bad_3);
    let gr = gd.c();
    let mut dp = std::mem::MaybeUninit::<mvnmf_deep_params>::zeroed();
    unsafe { mvnmf_deep_params_preset(g.below(2) as u32, dp.as_mut_ptr()) };
    let mut dp = unsafe { dp.assume_init() };
    let bad_top = bad && g.one_in(2);
    dp.top = shallow_params(g, bad_top);
    dp.top.init = MVNMF_INIT_RANDOM;
    dp.pretrain_iter = g.range(0, 6) as u32;
    dp.box_lower = g.below(2) as u32;
    dp.v_init = g.below(2) as u32;
    if bad && g.one_in(6) {
        dp.v_init = 3;
    }
    let need = query(|b| unsafe {
        mvnmf_deep_fit_workspace(cv.as_ptr(), h, &gr, layers.as_ptr(), nl, &dp, b)
    });
    let mut us: Vec<Out> = vs
        .iter()
        .map(|v| {
            let mut len = 0usize;
            unsafe { mvnmf_deep_factor_len(v.rows.max(1), layers.as_ptr(), nl, &mut len) };
            Out::f64s(len.min(1 << 16))
        })
        .collect();
    let ptrs: Vec<*mut f64> = us.iter_mut().map(|u| u.ptr()).collect();
    let k = *layers.last().unwrap_or(&1);
    let mut v = Out::f64s(k * n);
    let mut rep = Out::bytes(std::mem::size_of::<mvnmf_report>());
    let bad_3 = bad && g.one_in(3);
    let mut w = Work::new(g, need, bad_3);
    let mut m = monitor(g, half_sq(&vs));
    let s = unsafe {
        mvnmf_deep_fit(
            cv.as_ptr(),
            h,
            &gr,
            layers.as_ptr(),
            nl,
            &dp,
            ptrs.as_ptr(),
            v.ptr(),
            w.ptr(),
            w.bytes,
            Some(progress),
            (&mut m as *mut Mon).cast(),
            rep.ptr(),
        )
    };
    let mut outs: Vec<(&str, &Out)> = us.iter().map(|u| ("u", u)).collect();
    outs.push(("v", &v));
    outs.push(("report", &rep));
    check_call(s, &outs, Some(&w))?;
    if s == S::Ok || s == S::Cancelled {
        let vmax = dp.top.vmax;
        let vscale = if vmax.is_finite() {
            vmax
        } else {
            max_entry(v.f64())
        };
        m.graph(dp.top.beta, graph_degree(&gd), k, n, vscale);
    }
    check_mon(s, &m)?;
    check_magnitude(s, &vs)?;
    if s == S::Ok || s == S::Cancelled {
        for u in &us {
            finite("u", u.f64())?;
        }
        finite("v", v.f64())?;
    }
    // Single precision on every other seed, as for the shallow model.
    if dp.top.seed >> 9 & 1 == 1 {
        deep_f32(&vs, &gd, &layers, &dp, us.iter().map(|u| u.len).collect())?;
    }
    Ok(())
}

fn deep_f32(
    vs: &[ViewData],
    gd: &GraphData,
    layers: &[usize],
    dp: &mvnmf_deep_params,
    ulens: Vec<usize>,
) -> R {
    let fv = F32Views::new(vs, dp.top.seed);
    let (cv, h, gr, nl) = (&fv.cv, vs.len(), gd.c(), layers.len());
    F32Views::begin("deep_fit_f32");
    let mut dp = *dp;
    dp.top.max_iter = f32_iters(dp.top.seed, dp.top.max_iter);
    let dp = &dp;
    let need = query(|b| unsafe {
        mvnmf_deep_fit_f32_workspace(cv.as_ptr(), h, &gr, layers.as_ptr(), nl, dp, b)
    });
    let k = *layers.last().unwrap_or(&1);
    let n = vs.first().map_or(0, |x| x.cols);
    let mut uf: Vec<Out> = ulens.iter().map(|&l| Out::bytes(l / 2)).collect();
    let ptrs: Vec<*mut f32> = uf.iter_mut().map(|u| u.ptr()).collect();
    let mut vf = Out::bytes(4 * k * n);
    let mut rep = Out::bytes(std::mem::size_of::<mvnmf_report>());
    let mut w = vec![0u8; need.max(1)];
    let mut m = monitor_f32(fv.half_sq());
    if std::env::var_os("MVNMF_FUZZ_DUMP").is_some() {
        eprintln!(
            "deep_f32: exps {:?} half_sq {:e} layers {layers:?} alpha {} beta {} gamma {} vmax {} sparsity {} iters {} stop {} v_init {} box_lower {} pretrain {} graph kind {}",
            fv.exps, fv.half_sq(), dp.top.alpha, dp.top.beta, dp.top.gamma, dp.top.vmax, dp.top.sparsity,
            dp.top.max_iter, dp.top.stop_rule, dp.v_init, dp.box_lower, dp.pretrain_iter, gd.kind
        );
        eprintln!("  graph aff {:?} pen {:?}", gd.aff, gd.pen);
        for (x, c) in fv.vals.iter().zip(cv.iter()) {
            eprintln!("  view {}x{} kind {} {:?}", c.rows, c.cols, c.kind, x);
        }
    }
    let s = unsafe {
        mvnmf_deep_fit_f32(
            cv.as_ptr(),
            h,
            &gr,
            layers.as_ptr(),
            nl,
            dp,
            ptrs.as_ptr(),
            vf.ptr(),
            w.as_mut_ptr().cast(),
            need,
            Some(progress),
            (&mut m as *mut Mon).cast(),
            rep.ptr(),
        )
    };
    let mut outs: Vec<(&str, &Out)> = uf.iter().map(|u| ("u (f32)", u)).collect();
    outs.push(("v (f32)", &vf));
    outs.push(("report (f32)", &rep));
    check_call(s, &outs, None)?;
    if s == S::Ok || s == S::Cancelled {
        let vscale = if dp.top.vmax.is_finite() {
            dp.top.vmax
        } else {
            f32s(&vf).iter().fold(0.0f64, |a, &x| a.max(x.abs() as f64))
        };
        m.graph(dp.top.beta, graph_degree(gd), k, n, vscale);
    }
    check_f32(s, &m, &fv, &outs)
}

fn t_pipeline(g: &mut G, bad: bool) -> R {
    let (h, n) = (g.range(1, 3), g.range(2, 12));
    let k = g.range(1, 3);
    let c = g.range(1, 3);
    let bad_2 = bad && g.one_in(2);
    let spread = solver_spread(g);
    let vs = gen_views(g, h, n, solver_decades(), spread, bad_2);
    let cv: Vec<mvnmf_view> = vs.iter().map(ViewData::c).collect();
    let bad_4 = bad && g.one_in(4);
    let ks = gen_kernels(g, h, bad_4);
    let bad_4 = bad && g.one_in(4);
    let labels = gen_labels(g, n, c, bad_4);
    let mut p = std::mem::MaybeUninit::<mvnmf_pipeline_params>::zeroed();
    let method = if bad && g.one_in(10) {
        8
    } else {
        g.below(6) as u32
    };
    let st = unsafe { mvnmf_pipeline_params_preset(method, p.as_mut_ptr()) };
    let mut p = unsafe { p.assume_init() };
    if st != S::Ok {
        p.method = method;
    }
    p.learn_eta = g.below(2) as u32;
    p.graph.ka = g.range(1, 4);
    p.graph.kp = g.range(0, 3);
    p.graph.penalty = g.below(2) as u32;
    p.solver.max_iter = g.range(0, 6) as u32;
    p.solver.seed = g.u64();
    p.solver.init = MVNMF_INIT_RANDOM;
    let need = query(|b| unsafe {
        mvnmf_pipeline_fit_workspace(cv.as_ptr(), h, ks.as_ptr(), c, k, &p, b)
    });
    let mut us = factors(g, &vs, k, false);
    let ptrs: Vec<*mut f64> = us.iter_mut().map(|u| u.ptr()).collect();
    let mut v = Out::f64s(k * n);
    let mut eta = Out::f64s(h);
    let mut rep = Out::bytes(std::mem::size_of::<mvnmf_report>());
    let bad_3 = bad && g.one_in(3);
    let mut w = Work::new(g, need, bad_3);
    let mut m = monitor(g, half_sq(&vs));
    let s = unsafe {
        mvnmf_pipeline_fit(
            cv.as_ptr(),
            h,
            ks.as_ptr(),
            labels.as_ptr(),
            c,
            k,
            &p,
            ptrs.as_ptr(),
            v.ptr(),
            eta.ptr(),
            w.ptr(),
            w.bytes,
            Some(progress),
            (&mut m as *mut Mon).cast(),
            rep.ptr(),
        )
    };
    let mut outs: Vec<(&str, &Out)> = us.iter().map(|u| ("u", u)).collect();
    outs.push(("v", &v));
    outs.push(("eta", &eta));
    outs.push(("report", &rep));
    check_call(s, &outs, Some(&w))?;
    if s == S::Ok || s == S::Cancelled {
        // SGE for MvSL-S and MCL; the built graphs (GNMF, MvSL-L/T): weights up to σ = 2,
        // at most N neighbours per graph.
        let deg = match p.method {
            MVNMF_METHOD_JOINT_NMF => 0.0,
            MVNMF_METHOD_MVSL_S | MVNMF_METHOD_MCL => 4.0,
            _ => 8.0 * n as f64 * p.graph.sigma.max(1.0),
        };
        let vmax = p.solver.vmax;
        let vscale = if vmax.is_finite() {
            vmax
        } else {
            max_entry(v.f64())
        };
        m.graph(p.solver.beta, deg, k, n, vscale);
    }
    check_mon(s, &m)?;
    check_magnitude(s, &vs)?;
    if s == S::Ok || s == S::Cancelled {
        for u in &us {
            finite("u", u.f64())?;
        }
        finite("v", v.f64())?;
        finite("eta", eta.f64())?;
    }
    // Single precision on every other seed, as for the shallow model.
    if p.solver.seed >> 9 & 1 == 1 {
        pipeline_f32(&vs, &ks, &labels, c, k, &p)?;
    }
    Ok(())
}

fn pipeline_f32(
    vs: &[ViewData],
    ks: &[mvnmf_kernel],
    labels: &[u32],
    c: usize,
    k: usize,
    p: &mvnmf_pipeline_params,
) -> R {
    let fv = F32Views::new(vs, p.solver.seed);
    let (cv, h) = (&fv.cv, vs.len());
    F32Views::begin("pipeline_fit_f32");
    let mut p = *p;
    p.solver.max_iter = f32_iters(p.solver.seed, p.solver.max_iter);
    let p = &p;
    let need = query(|b| unsafe {
        mvnmf_pipeline_fit_f32_workspace(cv.as_ptr(), h, ks.as_ptr(), c, k, p, b)
    });
    let n = labels.len();
    let mut uf: Vec<Out> = vs.iter().map(|x| Out::bytes(4 * x.rows * k)).collect();
    let ptrs: Vec<*mut f32> = uf.iter_mut().map(|u| u.ptr()).collect();
    let mut vf = Out::bytes(4 * k * n);
    let mut eta = Out::f64s(h);
    let mut rep = Out::bytes(std::mem::size_of::<mvnmf_report>());
    let mut w = vec![0u8; need.max(1)];
    let mut m = monitor_f32(fv.half_sq());
    let s = unsafe {
        mvnmf_pipeline_fit_f32(
            cv.as_ptr(),
            h,
            ks.as_ptr(),
            labels.as_ptr(),
            c,
            k,
            p,
            ptrs.as_ptr(),
            vf.ptr(),
            eta.ptr(),
            w.as_mut_ptr().cast(),
            need,
            Some(progress),
            (&mut m as *mut Mon).cast(),
            rep.ptr(),
        )
    };
    let mut outs: Vec<(&str, &Out)> = uf.iter().map(|u| ("u (f32)", u)).collect();
    outs.push(("v (f32)", &vf));
    outs.push(("eta", &eta));
    outs.push(("report (f32)", &rep));
    check_call(s, &outs, None)?;
    if s == S::Ok || s == S::Cancelled {
        finite("eta", eta.f64())?;
        let deg = match p.method {
            MVNMF_METHOD_JOINT_NMF => 0.0,
            MVNMF_METHOD_MVSL_S | MVNMF_METHOD_MCL => 4.0,
            _ => 8.0 * n as f64 * p.graph.sigma.max(1.0),
        };
        let vscale = if p.solver.vmax.is_finite() {
            p.solver.vmax
        } else {
            f32s(&vf).iter().fold(0.0f64, |a, &x| a.max(x.abs() as f64))
        };
        m.graph(p.solver.beta, deg, k, n, vscale);
    }
    // eta (double) is checked above; the float outputs here.
    let float_outs: Vec<(&str, &Out)> = outs
        .iter()
        .filter(|(name, _)| *name != "eta")
        .copied()
        .collect();
    check_f32(s, &m, &fv, &float_outs)
}

/// Views, kernels and labels of a kernel-side case: any magnitude in 1e-300..1e300.
struct KCase {
    /// The arrays `cv` points into.
    _vs: Vec<ViewData>,
    cv: Vec<mvnmf_view>,
    ks: Vec<mvnmf_kernel>,
    labels: Vec<u32>,
    eta: Vec<f64>,
    h: usize,
    n: usize,
    c: usize,
}

fn kcase(g: &mut G, bad: bool) -> KCase {
    let (h, n, c) = (g.range(1, 3), g.range(2, 14), g.range(1, 4));
    let bad_3 = bad && g.one_in(3);
    let vs = gen_views(g, h, n, 300, 0, bad_3);
    // Some views get an outlier of a very different magnitude (the issue's D1 case), up to
    // 1e150 times their largest value: a view whose values span more than ~1e300 has its
    // smallest ones subnormal once scaled, and its similarities then exceed 1 by up to ~1%
    // (long-run seed 0x461a10, χ² on a CSC view of 1e-89 and 1e234: 1.0062) — a documented
    // limit (crate::kernel, "Magnitudes"), not checked here.
    let mut vs = vs;
    for v in vs.iter_mut() {
        if g.one_in(4) && !v.vals.is_empty() {
            let i = g.below(v.vals.len());
            let top = v.vals.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            let o = (top.max(1e-300) * g.decade(150)).min(1e300);
            v.vals[i] = o;
        }
    }
    let cv = vs.iter().map(ViewData::c).collect();
    let bad_4 = bad && g.one_in(4);
    let ks = gen_kernels(g, h, bad_4);
    let bad_4 = bad && g.one_in(4);
    let labels = gen_labels(g, n, c, bad_4);
    let mut eta: Vec<f64> = (0..h)
        .map(|_| {
            let r = g.f();
            g.pick(&[0.0, 1.0, r])
        })
        .collect();
    if eta.iter().all(|&e| e == 0.0) {
        eta[0] = 1.0;
    }
    if bad && g.one_in(5) {
        eta[0] = g.pick(&[-1.0, f64::NAN]);
    }
    if std::env::var_os("MVNMF_FUZZ_SHOW").is_some() {
        for v in &vs {
            println!(
                "view kind {} {}x{} stride {} vals {:?} col_ptr {:?} row_idx {:?}",
                v.kind, v.rows, v.cols, v.stride, v.vals, v.col_ptr, v.row_idx
            );
        }
        println!(
            "kernels {:?} labels {labels:?} c {c} eta {eta:?}",
            ks.iter().map(|k| (k.kind, k.gamma)).collect::<Vec<_>>()
        );
    }
    KCase {
        _vs: vs,
        cv,
        ks,
        labels,
        eta,
        h,
        n,
        c,
    }
}

fn t_mkl(g: &mut G, bad: bool) -> R {
    let kc = kcase(g, bad);
    let mut p = mvnmf_mkl_params_default();
    p.lambda = g.pick(&[0.1, 0.0, 1.0, 1e3]);
    if bad && g.one_in(5) {
        p.lambda = -1.0;
    }
    p.block = g.pick(&[0, 1, 2, 5]);
    let need = query(|b| unsafe {
        mvnmf_mkl_weights_workspace(kc.cv.as_ptr(), kc.h, kc.ks.as_ptr(), kc.c, &p, b)
    });
    let mut eta = Out::f64s(kc.h);
    let mut rep = Out::bytes(std::mem::size_of::<mvnmf_mkl_report>());
    let bad_3 = bad && g.one_in(3);
    let mut w = Work::new(g, need, bad_3);
    let s = unsafe {
        mvnmf_mkl_weights(
            kc.cv.as_ptr(),
            kc.h,
            kc.ks.as_ptr(),
            kc.labels.as_ptr(),
            kc.c,
            &p,
            eta.ptr(),
            w.ptr(),
            w.bytes,
            rep.ptr(),
        )
    };
    check_call(s, &[("eta", &eta), ("report", &rep)], Some(&w))?;
    if s == S::Ok {
        finite("eta", eta.f64())?;
        let sum: f64 = eta.f64().iter().sum();
        if eta.f64().iter().any(|&e| e < 0.0) || (sum - 1.0).abs() > 1e-9 {
            return fail(format!("eta not on the simplex: {:?}", eta.f64()));
        }
    }
    Ok(())
}

fn t_alignment(g: &mut G, bad: bool) -> R {
    let kc = kcase(g, bad);
    let block = g.pick(&[0, 1, 3]);
    let need = query(|b| unsafe {
        mvnmf_alignment_system_workspace(kc.cv.as_ptr(), kc.h, kc.ks.as_ptr(), kc.c, block, b)
    });
    let (mut gm, mut b, mut c0) = (Out::f64s(kc.h * kc.h), Out::f64s(kc.h), Out::f64s(1));
    let bad_3 = bad && g.one_in(3);
    let mut w = Work::new(g, need, bad_3);
    let s = unsafe {
        mvnmf_alignment_system(
            kc.cv.as_ptr(),
            kc.h,
            kc.ks.as_ptr(),
            kc.labels.as_ptr(),
            kc.c,
            block,
            gm.ptr(),
            b.ptr(),
            c0.ptr(),
            w.ptr(),
            w.bytes,
        )
    };
    check_call(s, &[("g", &gm), ("b", &b), ("constant", &c0)], Some(&w))?;
    if s == S::Ok {
        finite("g", gm.f64())?;
        finite("b", b.f64())?;
        finite("constant", c0.f64())?;
    }
    Ok(())
}

fn t_bandwidths(g: &mut G, bad: bool) -> R {
    let kc = kcase(g, bad);
    let block = g.pick(&[0, 1, 4]);
    let need = query(|b| unsafe {
        mvnmf_kernel_bandwidths_workspace(kc.cv.as_ptr(), kc.h, kc.ks.as_ptr(), kc.c, block, b)
    });
    let labels = if g.one_in(6) {
        null()
    } else {
        kc.labels.as_ptr()
    };
    let mut gam = Out::f64s(kc.h);
    let bad_3 = bad && g.one_in(3);
    let mut w = Work::new(g, need, bad_3);
    let s = unsafe {
        mvnmf_kernel_bandwidths(
            kc.cv.as_ptr(),
            kc.h,
            kc.ks.as_ptr(),
            labels,
            kc.c,
            block,
            gam.ptr(),
            w.ptr(),
            w.bytes,
        )
    };
    check_call(s, &[("gammas", &gam)], Some(&w))?;
    if s == S::Ok && gam.f64().iter().any(|x| x.is_nan() || *x < 0.0) {
        return fail(format!("gammas {:?}", gam.f64()));
    }
    Ok(())
}

fn t_knn(g: &mut G, bad: bool) -> R {
    let kc = kcase(g, bad);
    let mut p = mvnmf_fused_knn_params_default();
    p.k = if bad && g.one_in(5) {
        g.pick(&[0, kc.n])
    } else {
        g.range(1, kc.n - 1)
    };
    p.scope = if bad && g.one_in(8) {
        9
    } else {
        g.below(5) as u32
    };
    p.block = g.pick(&[0, 1, 3]);
    let qm: Vec<u8> = (0..kc.n)
        .map(|_| {
            if bad && g.one_in(20) {
                2
            } else {
                g.below(2) as u8
            }
        })
        .collect();
    let cm: Vec<u8> = (0..kc.n).map(|_| g.below(2) as u8).collect();
    let need = query(|b| unsafe {
        mvnmf_fused_knn_workspace(kc.cv.as_ptr(), kc.h, kc.ks.as_ptr(), kc.c, &p, b)
    });
    let nk = kc.n * p.k;
    let (mut nb, mut sims) = (Out::bytes(nk * 8), Out::f64s(nk));
    let bad_3 = bad && g.one_in(3);
    let mut w = Work::new(g, need, bad_3);
    let s = unsafe {
        mvnmf_fused_knn(
            kc.cv.as_ptr(),
            kc.h,
            kc.ks.as_ptr(),
            kc.eta.as_ptr(),
            kc.labels.as_ptr(),
            kc.c,
            &p,
            qm.as_ptr(),
            cm.as_ptr(),
            nb.ptr(),
            sims.ptr(),
            w.ptr(),
            w.bytes,
        )
    };
    check_call(s, &[("neighbors", &nb), ("sims", &sims)], Some(&w))?;
    if s == S::Ok {
        for (&j, &x) in nb.usizes().iter().zip(sims.f64()) {
            if !(j == MVNMF_NO_NEIGHBOR || j < kc.n) || x.is_nan() || x > 1.0 + 1e-9 {
                return fail(format!("neighbour {j} similarity {x}"));
            }
            if j != MVNMF_NO_NEIGHBOR && !x.is_finite() {
                return fail(format!("neighbour {j} with similarity {x}"));
            }
        }
    }
    Ok(())
}

fn t_graph(g: &mut G, bad: bool) -> R {
    let kc = kcase(g, bad);
    let tge = g.one_in(2);
    let mut p = mvnmf_graph_params_default();
    p.ka = if bad && g.one_in(6) {
        g.pick(&[0, kc.n])
    } else {
        g.range(1, 3.min(kc.n - 1))
    };
    p.kp = g.range(0, 2);
    p.penalty = if bad && g.one_in(10) {
        4
    } else {
        g.below(2) as u32
    };
    p.sigma = g.pick(&[2.0, 1.0, 0.5]);
    p.block = g.pick(&[0, 1, 3]);
    let (mut acap, mut pcap) = (0usize, 0usize);
    let cap = unsafe {
        if tge {
            mvnmf_tge_capacity(kc.n, kc.c, &p, &mut acap, &mut pcap)
        } else {
            mvnmf_ldge_capacity(kc.n, kc.c, &p, &mut acap, &mut pcap)
        }
    };
    if cap != S::Ok {
        return Ok(());
    }
    if g.one_in(6) {
        acap = acap.saturating_sub(g.range(1, 3));
    }
    let need = query(|b| unsafe {
        if tge {
            mvnmf_tge_workspace(kc.cv.as_ptr(), kc.h, kc.ks.as_ptr(), kc.c, &p, b)
        } else {
            mvnmf_ldge_workspace(kc.cv.as_ptr(), kc.h, kc.ks.as_ptr(), kc.c, &p, b)
        }
    });
    let (acap, pcap) = (acap.min(1 << 16), pcap.min(1 << 16));
    let mut arp = Out::bytes((kc.n + 1) * 8);
    let mut aci = Out::bytes(acap * 8);
    let mut aw = Out::f64s(acap);
    let mut prp = Out::bytes((kc.n + 1) * 8);
    let mut pci = Out::bytes(pcap * 8);
    let mut pw = Out::f64s(pcap);
    let a = mvnmf_csr_buffers {
        row_ptr: arp.ptr(),
        col_idx: aci.ptr(),
        weights: aw.ptr(),
        capacity: acap,
    };
    let q = mvnmf_csr_buffers {
        row_ptr: prp.ptr(),
        col_idx: pci.ptr(),
        weights: pw.ptr(),
        capacity: pcap,
    };
    let (mut an, mut pn) = (Out::bytes(8), Out::bytes(8));
    let bad_3 = bad && g.one_in(3);
    let mut w = Work::new(g, need, bad_3);
    let labels = if g.one_in(8) {
        null()
    } else {
        kc.labels.as_ptr()
    };
    let s = unsafe {
        let f = if tge { mvnmf_tge } else { mvnmf_ldge };
        f(
            kc.cv.as_ptr(),
            kc.h,
            kc.ks.as_ptr(),
            kc.eta.as_ptr(),
            labels,
            kc.c,
            &p,
            &a,
            &q,
            an.ptr(),
            pn.ptr(),
            w.ptr(),
            w.bytes,
        )
    };
    check_call(
        s,
        &[
            ("affinity row_ptr", &arp),
            ("affinity col_idx", &aci),
            ("affinity weights", &aw),
            ("penalty row_ptr", &prp),
            ("penalty col_idx", &pci),
            ("penalty weights", &pw),
            ("affinity_nnz", &an),
            ("penalty_nnz", &pn),
        ],
        Some(&w),
    )?;
    if s == S::Ok {
        for (rp, ci, wv, nnz, cap) in [
            (&arp, &aci, &aw, an.usizes()[0], acap),
            (&prp, &pci, &pw, pn.usizes()[0], pcap),
        ] {
            let rp = rp.usizes();
            if nnz > cap || rp[kc.n] != nnz || rp.windows(2).any(|w| w[0] > w[1]) {
                return fail(format!(
                    "CSR structure: nnz {nnz}, cap {cap}, row_ptr {rp:?}"
                ));
            }
            if ci.usizes()[..nnz].iter().any(|&j| j >= kc.n) {
                return fail("CSR column out of range");
            }
            if wv.f64()[..nnz].iter().any(|x| !x.is_finite() || *x < 0.0) {
                return fail("CSR weight negative or non-finite");
            }
        }
    }
    Ok(())
}

fn t_qp(g: &mut G, bad: bool) -> R {
    let h = if bad && g.one_in(6) {
        0
    } else if g.one_in(8) {
        g.range(17, 20) // the active-set method
    } else {
        g.range(1, 5)
    };
    let m = g.range(1, 4);
    let sa = if g.one_in(10) { 0.0 } else { g.decade(300) };
    let sb = g.decade(300);
    let bm: Vec<f64> = (0..h * m).map(|_| g.f() - 0.3).collect();
    let mut a = vec![0.0; h * h];
    for i in 0..h {
        for j in 0..h {
            let dot: f64 = (0..m).map(|t| bm[i + t * h] * bm[j + t * h]).sum();
            a[i + j * h] = dot * sa;
        }
    }
    let mut b: Vec<f64> = (0..h).map(|_| (g.f() - 0.5) * sb).collect();
    if bad && h > 0 && g.one_in(3) {
        if g.one_in(2) {
            b[0] = f64::NAN;
        } else if h > 1 {
            a[1] += sa;
        }
    }
    if std::env::var_os("MVNMF_FUZZ_SHOW").is_some() {
        println!("simplex_qp h={h} a={a:?} b={b:?}");
    }
    let need = query(|q| unsafe { mvnmf_simplex_qp_workspace(h, q) });
    let mut eta = Out::f64s(h);
    let mut rep = Out::bytes(std::mem::size_of::<mvnmf_qp_report>());
    let bad_3 = bad && g.one_in(3);
    let mut w = Work::new(g, need, bad_3);
    let s = unsafe {
        mvnmf_simplex_qp(
            a.as_ptr(),
            b.as_ptr(),
            h,
            eta.ptr(),
            w.ptr(),
            w.bytes,
            rep.ptr(),
        )
    };
    check_call(s, &[("eta", &eta), ("report", &rep)], Some(&w))?;
    if s == S::Ok {
        finite("eta", eta.f64())?;
        let sum: f64 = eta.f64().iter().sum();
        if eta.f64().iter().any(|&e| e < 0.0) || (sum - 1.0).abs() > 1e-9 {
            return fail(format!("eta not on the simplex: {:?}", eta.f64()));
        }
    }
    Ok(())
}

fn t_eval(g: &mut G, bad: bool) -> R {
    // An eighth of the evaluation cases go to issue 31's classes (in this target, so that
    // the seed → target map of the others stays as it was).
    if g.one_in(8) {
        return match g.below(3) {
            0 => t_mean_std(g, bad),
            1 => t_predict(g, bad),
            _ => t_query_dims(g),
        };
    }
    let n = if bad && g.one_in(8) {
        0
    } else {
        g.range(1, 30)
    };
    let c = g.range(1, 5);
    match g.below(6) {
        0 => {
            let bad_3 = bad && g.one_in(3);
            let labels = gen_labels(g, n, c, bad_3);
            let labels: Vec<u32> = labels
                .iter()
                .map(|&l| if l == MVNMF_UNLABELED { 0 } else { l })
                .collect();
            let nc = g.pick(&[c, c + 5, (1usize << 32) + 1, usize::MAX, 0]);
            let frac = if bad && g.one_in(4) {
                g.pick(&[-0.1, 1.5, f64::NAN])
            } else {
                g.f()
            };
            let need = query(|b| unsafe { mvnmf_stratified_split_workspace(n, b) });
            let mut out = Out::bytes(n);
            let bad_3 = bad && g.one_in(3);
            let mut w = Work::new(g, need, bad_3);
            let s = unsafe {
                mvnmf_stratified_split(
                    labels.as_ptr(),
                    n,
                    nc,
                    frac,
                    g.u64(),
                    out.ptr(),
                    w.ptr(),
                    w.bytes,
                )
            };
            check_call(s, &[("labeled", &out)], Some(&w))?;
            if s == S::Ok && out.as_bytes()[..n].iter().any(|&b| b > 1) {
                return fail("split flag not 0/1");
            }
        }
        1 => {
            let (r, cc) = (g.range(1, 6), g.range(1, 6));
            let scale = g.decade(308).min(f64::MAX / 8.0);
            let cost: Vec<f64> = (0..r * cc).map(|_| (g.f() - 0.5) * scale).collect();
            let need = query(|b| unsafe { mvnmf_assignment_workspace(r, cc, b) });
            let mut map = Out::bytes(r * 8);
            let mut total = Out::f64s(1);
            let bad_3 = bad && g.one_in(3);
            let mut w = Work::new(g, need, bad_3);
            let s = unsafe {
                mvnmf_assignment(
                    cost.as_ptr(),
                    r,
                    cc,
                    g.below(2) as i32,
                    map.ptr(),
                    total.ptr(),
                    w.ptr(),
                    w.bytes,
                )
            };
            check_call(s, &[("row_to_col", &map), ("total", &total)], Some(&w))?;
            if s == S::Ok {
                finite("total", total.f64())?;
            }
            // The `_f32` twin (draws after the double call's: its case is unchanged).
            CURRENT.with(|c| *c.borrow_mut() = "assignment_f32");
            let cf = to_f32_at(g, &cost, bad);
            let maximize = g.below(2) as i32;
            let mut map = Out::bytes(r * 8);
            let mut total = Out::f64s(1);
            let bad_3 = bad && g.one_in(3);
            let mut w = Work::new(g, need, bad_3);
            let s = unsafe {
                mvnmf_assignment_f32(
                    cf.as_ptr(),
                    r,
                    cc,
                    maximize,
                    map.ptr(),
                    total.ptr(),
                    w.ptr(),
                    w.bytes,
                )
            };
            check_call(
                s,
                &[("row_to_col (f32)", &map), ("total (f32)", &total)],
                Some(&w),
            )?;
            if s == S::Ok {
                finite("total (f32)", total.f64())?;
                // The total is the cost of the map it returned (in double), and the
                // double routine on the widened costs finds an assignment as good.
                let m = &map.usizes()[..r];
                let mut cols = vec![false; cc];
                let mut sum = 0.0f64;
                let mut scale = 0.0f64;
                for (i, &j) in m.iter().enumerate() {
                    if j == usize::MAX {
                        continue;
                    }
                    if j >= cc || cols[j] {
                        return fail("f32 assignment: a column out of range or used twice");
                    }
                    cols[j] = true;
                    sum += cf[i + j * r] as f64;
                }
                for &c in &cf {
                    scale += (c as f64).abs();
                }
                if m.iter().filter(|&&j| j != usize::MAX).count() != r.min(cc) {
                    return fail("f32 assignment: not min(rows, cols) rows matched");
                }
                let t = total.f64()[0];
                if (t - sum).abs() > 1e-6 * scale {
                    return fail(format!(
                        "f32 assignment: total {t:e}, its map costs {sum:e}"
                    ));
                }
                let wide: Vec<f64> = cf.iter().map(|&x| x as f64).collect();
                let mut map2 = vec![0usize; r];
                let mut t2 = 0.0f64;
                let mut w2 = vec![0u8; need.max(1)];
                let s2 = unsafe {
                    mvnmf_assignment(
                        wide.as_ptr(),
                        r,
                        cc,
                        maximize,
                        map2.as_mut_ptr(),
                        &mut t2,
                        w2.as_mut_ptr().cast(),
                        need,
                    )
                };
                if s2 != S::Ok || (t - t2).abs() > 1e-6 * scale {
                    return fail(format!(
                        "f32 assignment: total {t:e}, the double routine's {t2:e} ({s2:?})"
                    ));
                }
            }
        }
        2 => {
            let truth = gen_labels(g, n, c, false);
            let truth: Vec<u32> = truth.iter().map(|&l| l.min(c as u32 - 1)).collect();
            let k2 = g.range(1, 5);
            let pred: Vec<u32> = (0..n)
                .map(|_| {
                    if bad && g.one_in(10) {
                        k2 as u32
                    } else {
                        g.below(k2) as u32
                    }
                })
                .collect();
            let nmi = g.one_in(2);
            let norm = if bad && g.one_in(8) {
                9
            } else {
                g.below(4) as u32
            };
            let need = query(|b| unsafe {
                if nmi {
                    mvnmf_nmi_workspace(c, k2, b)
                } else {
                    mvnmf_clustering_accuracy_workspace(c, k2, b)
                }
            });
            let mut out = Out::f64s(1);
            let bad_3 = bad && g.one_in(3);
            let mut w = Work::new(g, need, bad_3);
            let s = unsafe {
                if nmi {
                    mvnmf_nmi(
                        truth.as_ptr(),
                        pred.as_ptr(),
                        n,
                        c,
                        k2,
                        norm,
                        out.ptr(),
                        w.ptr(),
                        w.bytes,
                    )
                } else {
                    mvnmf_clustering_accuracy(
                        truth.as_ptr(),
                        pred.as_ptr(),
                        n,
                        c,
                        k2,
                        out.ptr(),
                        w.ptr(),
                        w.bytes,
                    )
                }
            };
            check_call(s, &[("score", &out)], Some(&w))?;
            if s == S::Ok && out.f64()[0].is_nan() && !nmi {
                return fail("clustering accuracy NaN");
            }
        }
        3 => {
            let pred = gen_labels(g, n, c, false);
            let truth = gen_labels(g, n, c, false);
            let mask: Vec<u8> = (0..n)
                .map(|_| {
                    if bad && g.one_in(10) {
                        2
                    } else {
                        g.below(2) as u8
                    }
                })
                .collect();
            let mut acc = Out::f64s(1);
            let s = unsafe {
                mvnmf_accuracy(
                    pred.as_ptr(),
                    truth.as_ptr(),
                    n,
                    if g.one_in(3) { null() } else { mask.as_ptr() },
                    acc.ptr(),
                )
            };
            check_call(s, &[("accuracy", &acc)], None)?;
            // The retrieval and AUROC routines and their `_f32` twins (draws after
            // the accuracy's: its case is unchanged).
            retrieval_twins(g, bad)?;
        }
        4 => {
            let d = g.range(1, 5);
            let k = if bad && g.one_in(6) { 0 } else { g.range(1, 4) };
            let scale = g.decade(150);
            let mut x: Vec<f64> = (0..d * n).map(|_| (g.f() - 0.5) * scale).collect();
            if bad && !x.is_empty() && g.one_in(4) {
                x[0] = f64::NAN;
            }
            let mut p = mvnmf_kmeans_params_default();
            p.restarts = g.range(1, 3) as u32;
            p.max_iter = g.range(1, 20) as u32;
            p.seed = g.u64();
            let need = query(|b| unsafe { mvnmf_kmeans_workspace(d, n, k, &p, b) });
            let mut assign = Out::bytes(n * 4);
            let mut cent = Out::f64s(d * k);
            let mut rep = Out::bytes(std::mem::size_of::<mvnmf_kmeans_report>());
            let bad_3 = bad && g.one_in(3);
            let mut w = Work::new(g, need, bad_3);
            let s = unsafe {
                mvnmf_kmeans(
                    x.as_ptr(),
                    d,
                    n,
                    k,
                    &p,
                    assign.ptr(),
                    cent.ptr(),
                    w.ptr(),
                    w.bytes,
                    rep.ptr(),
                )
            };
            check_call(
                s,
                &[("assign", &assign), ("centroids", &cent), ("report", &rep)],
                Some(&w),
            )?;
            if s == S::Ok {
                finite("centroids", cent.f64())?;
                if assign.u32s()[..n].iter().any(|&a| a as usize >= k) {
                    return fail("k-means assignment out of range");
                }
            }
            // The `_f32` twin on the data at a float magnitude.
            CURRENT.with(|c| *c.borrow_mut() = "kmeans_f32");
            let xf = to_f32_at(g, &x, bad);
            let need = query(|b| unsafe { mvnmf_kmeans_f32_workspace(d, n, k, &p, b) });
            let mut assign = Out::bytes(n * 4);
            let mut cent = Out::bytes(4 * d * k);
            let mut rep = Out::bytes(std::mem::size_of::<mvnmf_kmeans_report>());
            let bad_3 = bad && g.one_in(3);
            let mut w = Work::new(g, need, bad_3);
            let s = unsafe {
                mvnmf_kmeans_f32(
                    xf.as_ptr(),
                    d,
                    n,
                    k,
                    &p,
                    assign.ptr(),
                    cent.ptr(),
                    w.ptr(),
                    w.bytes,
                    rep.ptr(),
                )
            };
            check_call(
                s,
                &[
                    ("assign (f32)", &assign),
                    ("centroids (f32)", &cent),
                    ("report (f32)", &rep),
                ],
                Some(&w),
            )?;
            if s == S::Ok {
                if f32s(&cent).iter().any(|c| !c.is_finite()) {
                    return fail("k-means (f32): a centroid not finite on OK");
                }
                if assign.u32s()[..n].iter().any(|&a| a as usize >= k) {
                    return fail("k-means (f32) assignment out of range");
                }
            }
        }
        _ => {
            let d = g.range(1, 4);
            let nq = g.range(1, 5);
            let scale = g.decade(150);
            let r: Vec<f64> = (0..d * n).map(|_| (g.f() - 0.5) * scale).collect();
            let q: Vec<f64> = (0..d * nq).map(|_| (g.f() - 0.5) * scale).collect();
            let bad_3 = bad && g.one_in(3);
            let rl = gen_labels(g, n, c, bad_3);
            let mut p = mvnmf_knn_params_default();
            p.k = g.range(if bad { 0 } else { 1 }, 4);
            p.metric = if bad && g.one_in(8) {
                5
            } else {
                g.below(2) as u32
            };
            let need = query(|b| unsafe { mvnmf_knn_predict_workspace(c, &p, b) });
            let mut pred = Out::bytes(nq * 4);
            let bad_3 = bad && g.one_in(3);
            let mut w = Work::new(g, need, bad_3);
            let s = unsafe {
                mvnmf_knn_predict(
                    r.as_ptr(),
                    d,
                    n,
                    rl.as_ptr(),
                    q.as_ptr(),
                    nq,
                    c,
                    &p,
                    pred.ptr(),
                    w.ptr(),
                    w.bytes,
                )
            };
            check_call(s, &[("pred", &pred)], Some(&w))?;
            if s == S::Ok && pred.u32s()[..nq].iter().any(|&l| l as usize >= c) {
                return fail("predicted class out of range");
            }
            // The `_f32` twin: reference and query at one float magnitude.
            CURRENT.with(|c| *c.borrow_mut() = "knn_predict_f32");
            let mut rq = r.clone();
            rq.extend_from_slice(&q);
            let rqf = to_f32_at(g, &rq, bad);
            let (rf, qf) = rqf.split_at(r.len());
            let mut pred = Out::bytes(nq * 4);
            let bad_3 = bad && g.one_in(3);
            let mut w = Work::new(g, need, bad_3);
            let s = unsafe {
                mvnmf_knn_predict_f32(
                    rf.as_ptr(),
                    d,
                    n,
                    rl.as_ptr(),
                    qf.as_ptr(),
                    nq,
                    c,
                    &p,
                    pred.ptr(),
                    w.ptr(),
                    w.bytes,
                )
            };
            check_call(s, &[("pred (f32)", &pred)], Some(&w))?;
            if s == S::Ok && pred.u32s()[..nq].iter().any(|&l| l as usize >= c) {
                return fail("predicted class (f32) out of range");
            }
        }
    }
    Ok(())
}

/// `xs` as floats, rescaled (a power of ten) so that the largest magnitude is `10^e`, `e`
/// anywhere in `-45..=38` (subnormal floats included); `bad`: on a few, one entry NaN or
/// infinite (the twin must refuse it as its double routine does).
fn to_f32_at(g: &mut G, xs: &[f64], bad: bool) -> Vec<f32> {
    let e = g.range(0, 83) as i32 - 45;
    let max = xs
        .iter()
        .filter(|x| x.is_finite())
        .fold(0.0f64, |m, x| m.max(x.abs()));
    let k = if max > 0.0 { 10f64.powi(e) / max } else { 1.0 };
    let mut out: Vec<f32> = xs
        .iter()
        .map(|&x| {
            let y = (x * k) as f32;
            if x.is_finite() && y.is_infinite() {
                f32::MAX.copysign(y)
            } else {
                y
            }
        })
        .collect();
    if bad && !out.is_empty() && g.one_in(4) {
        let j = g.below(out.len());
        out[j] = g.pick(&[f32::NAN, f32::INFINITY, f32::NEG_INFINITY]);
    }
    out
}

/// Top-N, one query's and several queries' retrieval metrics and the average AUROC, each
/// in double and through its `_f32` twin on the same scores as floats: the statuses agree,
/// a refusal writes nothing, and on OK the results are the same bits (every one depends on
/// the scores' order and ties alone, which widening a float to double keeps) and in range.
fn retrieval_twins(g: &mut G, bad: bool) -> R {
    CURRENT.with(|c| *c.borrow_mut() = "eval_retrieval (and f32)");
    let n = if bad && g.one_in(8) {
        0
    } else {
        g.range(1, 25)
    };
    let nq = g.range(1, 4);
    let sf: Vec<f32> = {
        let e = g.range(0, 83) as i32 - 45;
        let scale = 10f64.powi(e);
        // Few distinct levels on some cases: ties.
        let levels = g.pick(&[0usize, 0, 3]);
        let mut v: Vec<f32> = (0..n * nq)
            .map(|_| {
                let u = if levels > 0 {
                    g.below(levels) as f64 / levels as f64
                } else {
                    g.f()
                };
                ((u - 0.3) * scale) as f32
            })
            .collect();
        if bad && !v.is_empty() && g.one_in(4) {
            let j = g.below(v.len());
            v[j] = g.pick(&[f32::NAN, f32::INFINITY, f32::NEG_INFINITY]);
        }
        v
    };
    let sd: Vec<f64> = sf.iter().map(|&x| x as f64).collect();
    let rel: Vec<u8> = (0..n * nq)
        .map(|_| {
            if bad && g.one_in(20) {
                2
            } else {
                g.below(2) as u8
            }
        })
        .collect();
    let nc = g.range(if bad { 0 } else { 1 }, 4);
    let cutoffs: Vec<usize> = (0..nc)
        .map(|_| {
            if bad && g.one_in(6) {
                0
            } else {
                g.range(1, n.max(1) + 2)
            }
        })
        .collect();
    let which = g.below(4);
    let need = query(|b| unsafe {
        if which == 3 {
            mvnmf_average_auroc_workspace(n, b)
        } else {
            mvnmf_query_metrics_workspace(n, b)
        }
    });
    let bad_3 = bad && g.one_in(3);
    let mut w = Work::new(g, need, bad_3);
    let refused = REFUSED.with(|r| *r.borrow());
    let top = if bad && g.one_in(4) {
        n + 1
    } else {
        n.min(nq * 3)
    };
    let (null_a, null_b) = (g.one_in(3), g.one_in(3));
    let mut w2 = Work::new(g, need, bad_3);
    // Both precisions on the same arguments: (status, outputs).
    let run = |f32: bool, w: &mut Work| -> Result<(S, Vec<Out>), String> {
        REFUSED.with(|r| *r.borrow_mut() = refused);
        let (s, outs, names): (S, Vec<Out>, &[&str]) = match which {
            0 => {
                let mut idx = Out::bytes(8 * top);
                let s = unsafe {
                    if f32 {
                        mvnmf_top_n_f32(sf.as_ptr(), n, top, idx.ptr())
                    } else {
                        mvnmf_top_n(sd.as_ptr(), n, top, idx.ptr())
                    }
                };
                (s, vec![idx], &["indices"])
            }
            1 => {
                let (mut ap, mut pa, mut pr) = (Out::f64s(1), Out::f64s(nc), Out::f64s(11));
                let pr11 = if null_a { null_mut() } else { pr.ptr() };
                let s = unsafe {
                    if f32 {
                        mvnmf_query_metrics_f32(
                            sf.as_ptr(),
                            rel.as_ptr(),
                            n,
                            cutoffs.as_ptr(),
                            nc,
                            ap.ptr(),
                            pa.ptr(),
                            pr11,
                            w.ptr(),
                            w.bytes,
                        )
                    } else {
                        mvnmf_query_metrics(
                            sd.as_ptr(),
                            rel.as_ptr(),
                            n,
                            cutoffs.as_ptr(),
                            nc,
                            ap.ptr(),
                            pa.ptr(),
                            pr11,
                            w.ptr(),
                            w.bytes,
                        )
                    }
                };
                (
                    s,
                    vec![ap, pa, pr],
                    &["average_precision", "precision_at", "pr11"],
                )
            }
            2 => {
                let (mut ap, mut map, mut pa, mut pr) =
                    (Out::f64s(nq), Out::f64s(1), Out::f64s(nc), Out::f64s(11));
                let app = if null_a { null_mut() } else { ap.ptr() };
                let pr11 = if null_b { null_mut() } else { pr.ptr() };
                let s = unsafe {
                    if f32 {
                        mvnmf_retrieval_metrics_f32(
                            sf.as_ptr(),
                            rel.as_ptr(),
                            n,
                            nq,
                            cutoffs.as_ptr(),
                            nc,
                            app,
                            map.ptr(),
                            pa.ptr(),
                            pr11,
                            w.ptr(),
                            w.bytes,
                        )
                    } else {
                        mvnmf_retrieval_metrics(
                            sd.as_ptr(),
                            rel.as_ptr(),
                            n,
                            nq,
                            cutoffs.as_ptr(),
                            nc,
                            app,
                            map.ptr(),
                            pa.ptr(),
                            pr11,
                            w.ptr(),
                            w.bytes,
                        )
                    }
                };
                (
                    s,
                    vec![ap, map, pa, pr],
                    &["average_precision", "map", "mean_precision_at", "mean_pr11"],
                )
            }
            _ => {
                let (mut pl, mut mean, mut ns) = (Out::f64s(nq), Out::f64s(1), Out::bytes(8));
                let plp = if null_a { null_mut() } else { pl.ptr() };
                let nsp = if null_b { null_mut() } else { ns.ptr() };
                // `nq` labels over `n` items (the scores' layout read as labels × items).
                let s = unsafe {
                    if f32 {
                        mvnmf_average_auroc_f32(
                            rel.as_ptr(),
                            sf.as_ptr(),
                            nq,
                            n,
                            plp,
                            mean.ptr(),
                            nsp,
                            w.ptr(),
                            w.bytes,
                        )
                    } else {
                        mvnmf_average_auroc(
                            rel.as_ptr(),
                            sd.as_ptr(),
                            nq,
                            n,
                            plp,
                            mean.ptr(),
                            nsp,
                            w.ptr(),
                            w.bytes,
                        )
                    }
                };
                (
                    s,
                    vec![pl, mean, ns],
                    &["per_label", "mean", "labels_scored"],
                )
            }
        };
        let named: Vec<(&str, &Out)> = names.iter().copied().zip(outs.iter()).collect();
        check_call(s, &named, Some(w))?;
        Ok((s, outs))
    };
    let (sd_, od) = run(false, &mut w)?;
    let (sf_, of) = run(true, &mut w2)?;
    if sd_ != sf_ {
        return fail(format!(
            "retrieval twin {which}: double {sd_:?}, f32 {sf_:?}"
        ));
    }
    if sf_ == S::Ok {
        for (a, b) in od.iter().zip(&of) {
            if a.as_bytes() != b.as_bytes() {
                return fail(format!(
                    "retrieval twin {which}: the f32 results differ from the double routine's"
                ));
            }
        }
        if which != 0 {
            // Metrics in [0, 1] (NaN only for an AUROC without both classes).
            for o in &of[..of.len() - usize::from(which == 3)] {
                if o.untouched() {
                    continue;
                }
                if o.f64()
                    .iter()
                    .any(|&x| !((0.0..=1.0).contains(&x) || x.is_nan() && which == 3))
                {
                    return fail(format!("retrieval twin {which}: a metric outside [0, 1]"));
                }
            }
        }
    }
    Ok(())
}

fn jsnmf_params(g: &mut G, bad: bool) -> mvnmf_jsnmf_params {
    let mut p = mvnmf_jsnmf_params_default();
    p.max_iter = g.range(0, 12) as u32;
    p.tol = g.pick(&[0.0, 1e-6, 1e-3]);
    p.seed = g.u64();
    p.init = if g.one_in(3) {
        MVNMF_INIT_GIVEN
    } else {
        MVNMF_INIT_RANDOM
    };
    if bad && g.one_in(4) {
        match g.below(3) {
            0 => p.tol = -1.0,
            1 => p.eps = f64::NAN,
            _ => p.init = 5,
        }
    }
    p
}

/// JSNMF: `S` sources over one vocabulary with their own item counts, then a
/// batch of queries against the fitted target (encode + rank in one call).
fn t_jsnmf(g: &mut G, bad: bool) -> R {
    let ns = g.range(1, 3);
    let m = g.range(1, 7);
    let base = g.decade(SOLVER_DECADES);
    let mut vs: Vec<ViewData> = (0..ns)
        .map(|_| {
            let n = g.range(1, 9);
            let sc = base * g.decade(2);
            gen_view(g, m, n, sc)
        })
        .collect();
    let k = g.range(0, 3);
    let mut ranks: Vec<usize> = (0..ns).map(|_| k.max(1) + g.below(3)).collect();
    if bad && g.one_in(2) {
        match g.below(4) {
            0 => ranks[g.below(ns)] = k.saturating_sub(1),
            1 => {
                // A source over another vocabulary (its arrays sized for it: a C
                // caller's arrays hold what its descriptor says).
                let v = &mut vs[g.below(ns)];
                v.rows = m + 1;
                if v.kind == MVNMF_VIEW_DENSE {
                    v.stride = v.stride.max(m + 1);
                    v.vals.resize((v.cols - 1) * v.stride + v.rows, 0.5);
                }
            }
            2 => ranks[0] = 0,
            _ => {
                let i = g.below(ns);
                corrupt_view(g, &mut vs[i]);
            }
        }
    }
    // The library takes M from the first source (a changed row count of a
    // single source is a valid problem of that size).
    let m = vs[0].rows;
    let cv: Vec<mvnmf_view> = vs.iter().map(ViewData::c).collect();
    let p = jsnmf_params(g, bad);
    // Weights: ordinary, or (issue 31, E4) anywhere in 1e±308.
    let wide_lam = g.one_in(3);
    let lam: Vec<f64> = (0..ns)
        .map(|_| {
            if bad && g.one_in(6) {
                -1.0
            } else if wide_lam {
                // Anywhere in 1e±308: with subnormal data the weighted objective
                // is tiny (issue 31; fixed by JSNMF's per-source scale).
                g.decade(308)
            } else {
                0.5 + g.f()
            }
        })
        .collect();
    let use_lam = g.one_in(3) || wide_lam;
    let need =
        query(|b| unsafe { mvnmf_jsnmf_fit_workspace(cv.as_ptr(), ns, k, ranks.as_ptr(), &p, b) });
    let given = p.init == MVNMF_INIT_GIVEN;
    let mut w = start(g, m * k, given, 1.0);
    let mut us: Vec<Out> = ranks
        .iter()
        .map(|&r| start(g, m * r.saturating_sub(k), given, 1.0))
        .collect();
    let mut hs: Vec<Out> = vs
        .iter()
        .zip(&ranks)
        .map(|(v, &r)| start(g, r * v.cols, given, 1.0))
        .collect();
    let up: Vec<*mut f64> = us.iter_mut().map(|u| u.ptr()).collect();
    let hp: Vec<*mut f64> = hs.iter_mut().map(|h| h.ptr()).collect();
    let mut rep = Out::bytes(std::mem::size_of::<mvnmf_report>());
    let bad_3 = bad && g.one_in(3);
    let mut wk = Work::new(g, need, bad_3);
    // λ_s-weighted ½‖X‖² bounds the objective's scale.
    let weighted = if use_lam {
        halves(&vs, false)
            .iter()
            .zip(&lam)
            .map(|(h, l)| h * l)
            .sum::<f64>()
    } else {
        half_sq(&vs)
    };
    let mut mon = monitor(g, 1e4 * weighted.min(f64::MAX));
    let s = unsafe {
        mvnmf_jsnmf_fit(
            cv.as_ptr(),
            ns,
            k,
            ranks.as_ptr(),
            if use_lam { lam.as_ptr() } else { null() },
            &p,
            w.ptr(),
            up.as_ptr(),
            hp.as_ptr(),
            wk.ptr(),
            wk.bytes,
            Some(progress),
            (&mut mon as *mut Mon).cast(),
            rep.ptr(),
        )
    };
    let mut outs: Vec<(&str, &Out)> = vec![("w", &w), ("report", &rep)];
    outs.extend(us.iter().map(|u| ("u", u)));
    outs.extend(hs.iter().map(|h| ("h", h)));
    check_call(s, &outs, Some(&wk))?;
    check_mon(s, &mon)?;
    if !bad {
        let l = if use_lam { Some(&lam[..]) } else { None };
        check_jsnmf_magnitude(s, &halves(&vs, false), l, 2f64.powi(999))?;
    }
    if s != S::Ok && s != S::Cancelled {
        return Ok(());
    }
    finite("w", w.f64())?;
    for h in &hs {
        finite("h", h.f64())?;
    }
    // Queries against the target: some of its own documents (maybe corrupted).
    let r = ranks[0];
    let n = vs[0].cols;
    let nq = g.range(1, 4);
    let mut q = gen_view(g, m, nq, base);
    if bad && g.one_in(2) {
        corrupt_view(g, &mut q);
    }
    let qc = q.c();
    let qp = mvnmf_jsnmf_query_params_default();
    let n_top = if bad && g.one_in(4) {
        n + 1
    } else {
        g.range(1, n)
    };
    let excl: Vec<usize> = (0..nq)
        .map(|_| {
            if g.one_in(2) {
                usize::MAX
            } else {
                g.below(n + 1)
            }
        })
        .collect();
    let use_excl = g.one_in(2);
    let need = query(|b| unsafe { mvnmf_jsnmf_query_workspace(&qc, r, n, &qp, b) });
    let mut idx = Out::bytes(n_top * nq * 8);
    let mut sc = Out::f64s(n_top * nq);
    let short = bad && g.one_in(3);
    let mut wk = Work::new(g, need, short);
    let u0 = us[0].f64().as_ptr();
    let s = unsafe {
        mvnmf_jsnmf_query(
            &qc,
            k,
            r,
            &qp,
            w.f64().as_ptr(),
            u0,
            hs[0].f64().as_ptr(),
            n,
            n_top,
            if use_excl { excl.as_ptr() } else { null() },
            idx.ptr(),
            sc.ptr(),
            wk.ptr(),
            wk.bytes,
        )
    };
    check_call(s, &[("idx", &idx), ("scores", &sc)], Some(&wk))?;
    if s == S::Ok {
        for (c, col) in idx.usizes()[..n_top * nq].chunks(n_top).enumerate() {
            if col.iter().any(|&i| i >= n || (use_excl && i == excl[c])) {
                return fail("ranked item out of range or excluded");
            }
        }
        if sc.f64()[..n_top * nq]
            .iter()
            .any(|x| !(0.0..=1.0 + 1e-12).contains(x))
        {
            return fail("cosine score outside [0, 1]");
        }
    }
    Ok(())
}

/// MVEL on a random dense or CSR graph, then prediction, thresholds, decisions.
fn t_mvel(g: &mut G, bad: bool) -> R {
    // A third of the MVEL cases exercise the anchor functions (in this target,
    // so that the seed → target map of the other targets stays as it was).
    if g.one_in(3) {
        return t_mvel_anchor(g, bad);
    }
    // The graph says how many items there are (a C caller sizes its arrays by it).
    let bad_graph = bad && g.one_in(4);
    let n0 = g.range(1, 10);
    let gd = GraphData::gen(g, n0, bad_graph);
    let n = gd.n;
    let c = g.range(1, 4);
    let r = if bad && g.one_in(6) { 0 } else { g.range(1, 4) };
    let mut y: Vec<u8> = (0..c * n).map(|_| g.one_in(3) as u8).collect();
    if bad && g.one_in(4) {
        let i = g.below(c * n);
        y[i] = 2;
    }
    let dense = g.one_in(2);
    let mut wd: Vec<f64> = vec![0.0; n * n];
    for j in 0..n {
        for i in 0..=j {
            let x = g.f() * g.decade(3);
            wd[i + j * n] = x;
            wd[j + i * n] = x;
        }
    }
    if bad && dense && g.one_in(3) {
        let i = g.below(n * n);
        wd[i] = g.pick(&[f64::NAN, -1.0, wd[i] + 1.0]);
    }
    let mut gc = gd.c();
    if dense {
        gc.kind = MVNMF_GRAPH_DENSE;
        gc.affinity_weights = wd.as_ptr();
    }
    let mut p = mvnmf_mvel_params_default();
    p.max_iter = g.range(0, 10) as u32;
    p.nmf_iter = g.range(0, 20) as u32;
    p.theta1 = g.pick(&[0.0, 1.0, 10.0]);
    p.theta2 = g.pick(&[0.0, 0.1, 1.0]);
    p.unknown_weight = g.pick(&[0.0, 0.2, 1.0]);
    p.tol = g.pick(&[0.0, 1e-6]);
    p.seed = g.u64();
    if bad && g.one_in(4) {
        p.theta2 = g.pick(&[-1.0, f64::NAN, f64::INFINITY]);
    }
    let given = g.one_in(4);
    if given {
        p.init = MVNMF_INIT_GIVEN;
    }
    let need = query(|b| unsafe { mvnmf_mvel_fit_workspace(c, &gc, r, &p, b) });
    let mut q = if given {
        Out::given(&(0..c * r).map(|_| g.f() - 0.5).collect::<Vec<_>>())
    } else {
        Out::f64s(c * r)
    };
    let mut h = if given {
        Out::given(&(0..r * n).map(|_| g.f() - 0.5).collect::<Vec<_>>())
    } else {
        Out::f64s(r * n)
    };
    let mut rep = Out::bytes(std::mem::size_of::<mvnmf_report>());
    let short = bad && g.one_in(3);
    let mut wk = Work::new(g, need, short);
    // The objective is at most about n·c in size.
    let mut mon = monitor(g, 1e2 * (1 + n * c) as f64);
    let s = unsafe {
        mvnmf_mvel_fit(
            y.as_ptr(),
            c,
            &gc,
            r,
            &p,
            q.ptr(),
            h.ptr(),
            wk.ptr(),
            wk.bytes,
            Some(progress),
            (&mut mon as *mut Mon).cast(),
            rep.ptr(),
        )
    };
    check_call(s, &[("q", &q), ("h", &h), ("report", &rep)], Some(&wk))?;
    check_mon(s, &mon)?;
    if s != S::Ok && s != S::Cancelled {
        return Ok(());
    }
    finite("q", q.f64())?;
    finite("h", h.f64())?;
    let need = query(|b| unsafe { mvnmf_mvel_predict_workspace(c, r, n, b) });
    let mut sc = Out::f64s(c * n);
    let short = bad && g.one_in(3);
    let mut wk = Work::new(g, need, short);
    let s = unsafe {
        mvnmf_mvel_predict(
            q.f64().as_ptr(),
            h.f64().as_ptr(),
            c,
            r,
            n,
            sc.ptr(),
            wk.ptr(),
            wk.bytes,
        )
    };
    check_call(s, &[("scores", &sc)], Some(&wk))?;
    if s != S::Ok {
        return Ok(());
    }
    if sc.f64()[..c * n].iter().any(|x| x.abs() > 1.0 + 1e-9) {
        return fail("an MVEL score outside [-1, 1]");
    }
    let need = query(|b| unsafe { mvnmf_mvel_thresholds_workspace(n, b) });
    let mut tau = Out::f64s(c);
    let short = bad && g.one_in(3);
    let mut wk = Work::new(g, need, short);
    let s = unsafe {
        mvnmf_mvel_thresholds(
            sc.f64().as_ptr(),
            y.as_ptr(),
            c,
            n,
            tau.ptr(),
            wk.ptr(),
            wk.bytes,
        )
    };
    check_call(s, &[("tau", &tau)], Some(&wk))?;
    if s == S::Ok {
        let mut pred = Out::bytes(c * n);
        let s =
            unsafe { mvnmf_mvel_decide(sc.f64().as_ptr(), tau.f64().as_ptr(), c, n, pred.ptr()) };
        check_call(s, &[("pred", &pred)], None)?;
        if s == S::Ok && pred.as_bytes()[..c * n].iter().any(|&b| b > 1) {
            return fail("a decision other than 0/1");
        }
    }
    Ok(())
}

/// The symmetric eigensolver, CCA and MVEL's fused graph.
/// 1..3 views (1..5 features) of 1..8 items at one magnitude in 1e±300, one
/// corrupted in half the bad cases (NNDSVD and β-NMF cases).
fn small_solver_views(g: &mut G, bad: bool) -> (Vec<ViewData>, usize) {
    let h = g.range(1, 3);
    let n = g.range(1, 8);
    let sc = g.decade(SOLVER_DECADES);
    let mut vs: Vec<ViewData> = (0..h)
        .map(|_| {
            let d = g.range(1, 5);
            gen_view(g, d, n, sc)
        })
        .collect();
    if bad && g.one_in(2) {
        let i = g.below(h);
        corrupt_view(g, &mut vs[i]);
    }
    (vs, n)
}

fn t_linalg(g: &mut G, bad: bool) -> R {
    match g.below(5) {
        4 => {
            // β-divergence NMF over 1..3 views.
            let (vs, n) = small_solver_views(g, bad);
            let h = vs.len();
            let cv: Vec<mvnmf_view> = vs.iter().map(ViewData::c).collect();
            let k = if bad && g.one_in(8) { 0 } else { g.range(1, 4) };
            let beta = if bad && g.one_in(6) {
                g.pick(&[-1.0, 2.5, f64::NAN])
            } else {
                g.pick(&[0.0, 0.5, 1.0, 1.0, 1.5, 2.0])
            };
            let clip = g.pick(&[-1.0, 0.0, 1e-12]);
            let mut p = mvnmf_nmf_params_default();
            p.max_iter = g.range(0, 15) as u32;
            p.tol = g.pick(&[0.0, 1e-6]);
            p.seed = g.u64();
            let need =
                query(|b| unsafe { mvnmf_beta_nmf_fit_workspace(cv.as_ptr(), h, k, beta, &p, b) });
            // Masks: per view none, or random 0/1 bytes (rarely a 2).
            let use_masks = g.one_in(2);
            let masks: Vec<Option<Vec<u8>>> = vs
                .iter()
                .map(|v| {
                    if g.one_in(2) {
                        None
                    } else {
                        Some(
                            (0..v.rows * n)
                                .map(|_| {
                                    if bad && g.one_in(50) {
                                        2
                                    } else {
                                        u8::from(!g.one_in(4))
                                    }
                                })
                                .collect(),
                        )
                    }
                })
                .collect();
            let mptrs: Vec<*const u8> = masks
                .iter()
                .map(|m| m.as_ref().map_or(std::ptr::null(), |m| m.as_ptr()))
                .collect();
            let mut us: Vec<Out> = vs.iter().map(|v| Out::f64s(v.rows * k)).collect();
            let ptrs: Vec<*mut f64> = us.iter_mut().map(|o| o.ptr()).collect();
            let mut v = Out::f64s(k * n);
            let mut rep = Out::bytes(std::mem::size_of::<mvnmf_report>());
            let short = bad && g.one_in(3);
            let mut wk = Work::new(g, need, short);
            let s = unsafe {
                mvnmf_beta_nmf_fit(
                    cv.as_ptr(),
                    h,
                    k,
                    beta,
                    clip,
                    if use_masks {
                        mptrs.as_ptr()
                    } else {
                        std::ptr::null()
                    },
                    &p,
                    ptrs.as_ptr(),
                    v.ptr(),
                    wk.ptr(),
                    wk.bytes,
                    None,
                    std::ptr::null_mut(),
                    rep.ptr(),
                )
            };
            let mut named: Vec<(&str, &Out)> = us.iter().map(|o| ("u", o)).collect();
            named.push(("v", &v));
            named.push(("report", &rep));
            check_call(s, &named, Some(&wk))?;
            if s == S::Ok {
                for o in us.iter().chain(std::iter::once(&v)) {
                    finite("factor", o.f64())?;
                }
            }
        }
        3 => {
            // NNDSVD starts over 1..3 views, any magnitude.
            let (vs, n) = small_solver_views(g, bad);
            let h = vs.len();
            let cv: Vec<mvnmf_view> = vs.iter().map(ViewData::c).collect();
            let mtot: usize = vs.iter().map(|v| v.rows).sum();
            let k = if bad && g.one_in(5) {
                g.pick(&[0, mtot.min(n) + 1])
            } else {
                g.range(1, mtot.min(n))
            };
            let variant = if bad && g.one_in(8) {
                3
            } else {
                g.below(3) as u32
            };
            let need = query(|b| unsafe { mvnmf_nndsvd_workspace(cv.as_ptr(), h, k, b) });
            let mut us: Vec<Out> = vs.iter().map(|v| Out::f64s(v.rows * k)).collect();
            let ptrs: Vec<*mut f64> = us.iter_mut().map(|o| o.ptr()).collect();
            let mut v = Out::f64s(k * n);
            let short = bad && g.one_in(3);
            let mut wk = Work::new(g, need, short);
            let s = unsafe {
                mvnmf_nndsvd(
                    cv.as_ptr(),
                    h,
                    k,
                    variant,
                    g.u64(),
                    ptrs.as_ptr(),
                    v.ptr(),
                    wk.ptr(),
                    wk.bytes,
                )
            };
            let mut named: Vec<(&str, &Out)> = us.iter().map(|o| ("u", o)).collect();
            named.push(("v", &v));
            check_call(s, &named, Some(&wk))?;
            if s == S::Ok {
                for o in us.iter().chain(std::iter::once(&v)) {
                    finite("start", o.f64())?;
                    if o.f64().iter().any(|&x| x < 0.0) {
                        return fail("a negative NNDSVD start");
                    }
                }
            }
        }
        0 => {
            let n = if bad && g.one_in(6) { 0 } else { g.range(1, 9) };
            let sc = g.decade(100);
            let mut a = vec![0.0; n * n];
            for j in 0..n {
                for i in j..n {
                    let x = (g.f() - 0.5) * sc;
                    a[i + j * n] = x;
                    a[j + i * n] = x;
                }
            }
            if bad && n > 0 && g.one_in(3) {
                let i = g.below(n * n);
                a[i] = g.pick(&[f64::NAN, f64::INFINITY]);
            }
            let need = query(|b| unsafe { mvnmf_sym_eig_workspace(n, b) });
            let mut ao = Out::given(&a);
            let mut ev = Out::f64s(n);
            let short = bad && g.one_in(3);
            let mut w = Work::new(g, need, short);
            let s = unsafe { mvnmf_sym_eig(ao.ptr(), n, ev.ptr(), w.ptr(), w.bytes) };
            check_call(s, &[("a", &ao), ("eigenvalues", &ev)], Some(&w))?;
            if s == S::Ok {
                finite("eigenvalues", ev.f64())?;
                finite("eigenvectors", ao.f64())?;
                let (q, l) = (ao.f64(), ev.f64());
                if l.windows(2).any(|p| p[0] > p[1]) {
                    return fail("eigenvalues not ascending");
                }
                let norm = a.iter().map(|x| x.abs()).fold(0.0, f64::max) * n as f64;
                for j in 0..n {
                    for i in 0..n {
                        let aq: f64 = (0..n).map(|k| a[i + k * n] * q[k + j * n]).sum();
                        if (aq - l[j] * q[i + j * n]).abs() > 1e-10 * norm.max(f64::MIN_POSITIVE) {
                            return fail(format!(
                                "eigen residual at ({i},{j}): {aq} vs {}",
                                l[j] * q[i + j * n]
                            ));
                        }
                    }
                }
            }
        }
        1 => {
            let n = g.range(1, 10);
            let (di, dj) = (g.range(1, 4), g.range(1, 4));
            let sc = g.decade(SOLVER_DECADES);
            let mut xi = gen_view(g, di, n, sc);
            let xj = gen_view(g, dj, n, sc);
            if bad && g.one_in(2) {
                corrupt_view(g, &mut xi);
            }
            let dims = if bad && g.one_in(5) {
                di.min(dj) + 1
            } else {
                g.range(1, di.min(dj))
            };
            let reg = if bad && g.one_in(6) {
                -1.0
            } else {
                g.pick(&[0.0, 1e-6, 1e-3, 1.0])
            };
            let need = query(|b| unsafe { mvnmf_cca_workspace(di, dj, n, dims, b) });
            let (ci, cj) = (xi.c(), xj.c());
            let mut outs: Vec<Out> = [di * dims, dj * dims, dims, di, dj]
                .iter()
                .map(|&l| Out::f64s(l))
                .collect();
            let ptrs: Vec<*mut f64> = outs.iter_mut().map(|o| o.ptr()).collect();
            let short = bad && g.one_in(3);
            let mut w = Work::new(g, need, short);
            let s = unsafe {
                mvnmf_cca(
                    &ci,
                    &cj,
                    reg,
                    dims,
                    ptrs[0],
                    ptrs[1],
                    ptrs[2],
                    ptrs[3],
                    ptrs[4],
                    w.ptr(),
                    w.bytes,
                )
            };
            let named: Vec<(&str, &Out)> = ["phi_i", "phi_j", "rho", "mu_i", "mu_j"]
                .into_iter()
                .zip(outs.iter())
                .collect();
            check_call(s, &named, Some(&w))?;
            if s == S::Ok {
                for (nm, o) in &named {
                    finite(nm, o.f64())?;
                }
                if outs[2]
                    .f64()
                    .iter()
                    .any(|&r| !(-1e-9..=1.0 + 1e-9).contains(&r))
                {
                    return fail(format!(
                        "canonical correlation out of [0, 1]: {:?}",
                        outs[2].f64()
                    ));
                }
            }
        }
        _ => {
            let h = g.range(1, 3);
            let n = g.range(1, 8);
            let sc = g.decade(SOLVER_DECADES);
            let mut vs: Vec<ViewData> = (0..h)
                .map(|_| {
                    let d = g.range(1, 4);
                    gen_view(g, d, n, sc)
                })
                .collect();
            if bad && g.one_in(2) {
                let i = g.below(h);
                corrupt_view(g, &mut vs[i]);
            }
            let cv: Vec<mvnmf_view> = vs.iter().map(ViewData::c).collect();
            let mut p = mvnmf_fused_graph_params_default();
            p.cross_view = g.below(2) as u32;
            p.cca_dims = g.below(3);
            if bad && g.one_in(4) {
                p.cca_reg = g.pick(&[0.0, -1.0, f64::NAN]);
            }
            let gm: Vec<f64> = (0..h)
                .map(|_| if g.one_in(2) { 0.0 } else { g.f() + 0.1 })
                .collect();
            let use_gm = g.one_in(2);
            let need = query(|b| unsafe { mvnmf_fused_graph_workspace(cv.as_ptr(), h, &p, b) });
            let mut w = Out::f64s(n * n);
            let short = bad && g.one_in(3);
            let mut wk = Work::new(g, need, short);
            let s = unsafe {
                mvnmf_fused_graph(
                    cv.as_ptr(),
                    h,
                    if use_gm { gm.as_ptr() } else { null() },
                    null(),
                    &p,
                    w.ptr(),
                    wk.ptr(),
                    wk.bytes,
                )
            };
            check_call(s, &[("w", &w)], Some(&wk))?;
            if s == S::Ok {
                let x = w.f64();
                finite("w", x)?;
                let tot: f64 = x.iter().sum();
                if (tot - n as f64).abs() > 1e-9 * n as f64 || x.iter().any(|&v| v < 0.0) {
                    return fail(format!(
                        "fused graph weight {tot} (want {n}) or a negative entry: w {x:?}, views {:?}",
                        vs.iter().map(|v| (v.kind, v.rows, &v.vals)).collect::<Vec<_>>()
                    ));
                }
                for v in 0..n {
                    for u in 0..v {
                        if x[u + v * n] != x[v + u * n] {
                            return fail("fused graph not symmetric");
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// MVEL's anchors: k-means anchors, the anchor graph (with or without
/// training views and given scales), the anchored fit and the embedding.
fn t_mvel_anchor(g: &mut G, bad: bool) -> R {
    let h = g.range(1, 3);
    let n = g.range(1, 9);
    let sc = g.decade(SOLVER_DECADES);
    let dims: Vec<usize> = (0..h).map(|_| g.range(1, 4)).collect();
    let mut vs: Vec<ViewData> = dims.iter().map(|&d| gen_view(g, d, n, sc)).collect();
    if bad && g.one_in(2) {
        let i = g.below(h);
        corrupt_view(g, &mut vs[i]);
    }
    let cv: Vec<mvnmf_view> = vs.iter().map(ViewData::c).collect();
    let m = if bad && g.one_in(6) {
        g.pick(&[0, n + 1])
    } else {
        g.range(1, n)
    };
    match g.below(4) {
        3 => {
            let s_near = if bad && g.one_in(6) {
                g.pick(&[0, n])
            } else {
                g.range(1, n.saturating_sub(1).max(1))
            };
            let mut p = mvnmf_fused_graph_params_default();
            p.cross_view = g.below(2) as u32;
            p.cca_dims = g.below(3);
            // Half the cases through `mvnmf_fused_knn_graph_build` (exact, approximate,
            // auto, or an unknown build), the others through `mvnmf_fused_knn_graph`.
            let build = g.one_in(2).then(|| {
                if bad && g.one_in(4) {
                    3
                } else {
                    g.below(3) as u32
                }
            });
            let mut ann = mvnmf_ann_params_default();
            ann.seed = g.u64();
            if bad && g.one_in(6) {
                ann.leaf = 1;
            }
            if build.is_some() {
                CURRENT.with(|c| *c.borrow_mut() = "fused_knn_graph_build");
            }
            let need = query(|b| unsafe {
                match build {
                    Some(gb) => mvnmf_fused_knn_graph_build_workspace(
                        cv.as_ptr(),
                        h,
                        s_near,
                        null(),
                        &p,
                        gb,
                        &ann,
                        b,
                    ),
                    None => mvnmf_fused_knn_graph_workspace(cv.as_ptr(), h, s_near, null(), &p, b),
                }
            });
            let mut cap = 0usize;
            let full = unsafe { mvnmf_fused_knn_graph_capacity(n, s_near, &mut cap) } == S::Ok;
            let cap = if bad && g.one_in(4) { cap / 2 } else { cap };
            let mut out = CsrOuts::new(n, cap);
            let bufs = out.c();
            let mut nnz = Out::bytes(8);
            let short = bad && g.one_in(3);
            let mut wk = Work::new(g, need, short);
            let run = |gb: Option<u32>,
                       bufs: &mvnmf_csr_buffers,
                       nnz: *mut usize,
                       wk: &mut Work| unsafe {
                match gb {
                    Some(gb) => mvnmf_fused_knn_graph_build(
                        cv.as_ptr(),
                        h,
                        s_near,
                        null(),
                        &p,
                        gb,
                        &ann,
                        bufs,
                        nnz,
                        wk.ptr(),
                        wk.bytes,
                    ),
                    None => mvnmf_fused_knn_graph(
                        cv.as_ptr(),
                        h,
                        s_near,
                        null(),
                        &p,
                        bufs,
                        nnz,
                        wk.ptr(),
                        wk.bytes,
                    ),
                }
            };
            let s = run(build, &bufs, nnz.ptr(), &mut wk);
            check_call(
                s,
                &[
                    ("row_ptr", &out.rp),
                    ("col_idx", &out.ci),
                    ("weights", &out.w),
                    ("nnz", &nnz),
                ],
                Some(&wk),
            )?;
            if s == S::Ok {
                if !full {
                    return fail("graph built where the capacity query refused");
                }
                let w = &out.w;
                let k = nnz.usizes()[0];
                finite("weights", &w.f64()[..k])?;
                let tot: f64 = w.f64()[..k].iter().sum();
                // Weights are `≥ 0`, not `> 0`: a neighbour whose fused weight is
                // below 2^-1074 of its row's largest (the heat kernel underflows, e.g.
                // one item far from the others) keeps its edge with weight 0.
                if (tot - n as f64).abs() > 1e-9 * n as f64 || w.f64()[..k].iter().any(|&x| x < 0.0)
                {
                    return fail(format!("kNN graph total weight {tot} (want {n})"));
                }
                // The exact build, and auto at these sizes, is bitwise the plain call.
                if matches!(build, Some(0 | 2)) {
                    let mut out2 = CsrOuts::new(n, cap);
                    let bufs2 = out2.c();
                    let mut nnz2 = Out::bytes(8);
                    let need2 = query(|b| unsafe {
                        mvnmf_fused_knn_graph_workspace(cv.as_ptr(), h, s_near, null(), &p, b)
                    });
                    let mut wk2 = Work::new(g, need2, false);
                    let s2 = run(None, &bufs2, nnz2.ptr(), &mut wk2);
                    let same = s2 == S::Ok
                        && nnz2.usizes()[0] == k
                        && out2.rp.as_bytes() == out.rp.as_bytes()
                        && out2.ci.usizes()[..k] == out.ci.usizes()[..k]
                        && out2.w.f64()[..k]
                            .iter()
                            .zip(&w.f64()[..k])
                            .all(|(a, b)| a.to_bits() == b.to_bits());
                    if !same {
                        return fail(format!(
                            "graph_build {build:?} differs from mvnmf_fused_knn_graph ({s2:?})"
                        ));
                    }
                }
            }
        }
        0 => {
            let mut kp = mvnmf_kmeans_params_default();
            kp.restarts = g.range(1, 2) as u32;
            kp.max_iter = g.range(1, 20) as u32;
            kp.seed = g.u64();
            let need =
                query(|b| unsafe { mvnmf_anchors_kmeans_workspace(cv.as_ptr(), h, m, &kp, b) });
            let mut outs: Vec<Out> = dims.iter().map(|&d| Out::f64s(d * m)).collect();
            let ptrs: Vec<*mut f64> = outs.iter_mut().map(|o| o.ptr()).collect();
            let mut rep = Out::bytes(std::mem::size_of::<mvnmf_kmeans_report>());
            let short = bad && g.one_in(3);
            let mut wk = Work::new(g, need, short);
            let s = unsafe {
                mvnmf_anchors_kmeans(
                    cv.as_ptr(),
                    h,
                    m,
                    &kp,
                    ptrs.as_ptr(),
                    wk.ptr(),
                    wk.bytes,
                    rep.ptr(),
                )
            };
            let mut named: Vec<(&str, &Out)> = outs.iter().map(|o| ("anchors", o)).collect();
            named.push(("report", &rep));
            check_call(s, &named, Some(&wk))?;
            if s == S::Ok {
                for o in &outs {
                    finite("anchors", o.f64())?;
                }
            }
        }
        1 => {
            // Anchors: any dense points with the views' features.
            let m = m.max(1);
            let an: Vec<ViewData> = dims
                .iter()
                .map(|&d| {
                    let mut v = gen_view(g, d, m, sc);
                    if v.kind != MVNMF_VIEW_DENSE && !bad {
                        v = gen_view(g, d, m, sc);
                    }
                    v
                })
                .collect();
            let ac: Vec<mvnmf_view> = an.iter().map(ViewData::c).collect();
            let train = if g.one_in(3) {
                let nt = g.range(1, 9);
                Some(
                    dims.iter()
                        .map(|&d| gen_view(g, d, nt, sc))
                        .collect::<Vec<_>>(),
                )
            } else {
                None
            };
            let tc: Option<Vec<mvnmf_view>> =
                train.as_ref().map(|t| t.iter().map(ViewData::c).collect());
            let nt = train.as_ref().map_or(n, |t| t[0].cols);
            let s_near = if bad && g.one_in(6) {
                g.pick(&[0, m + 1])
            } else {
                g.range(1, m)
            };
            let mut p = mvnmf_fused_graph_params_default();
            p.cross_view = g.below(2) as u32;
            p.cca_dims = g.below(3);
            if bad && g.one_in(5) {
                p.cca_reg = g.pick(&[0.0, -1.0, f64::NAN]);
            }
            let jl = mvnmf_anchor_scales_len(h);
            let mut start = vec![0.0; jl];
            for x in start.iter_mut() {
                if !g.one_in(2) {
                    *x = g.f() * g.decade(3) + 1e-3;
                }
                if bad && g.one_in(8) {
                    *x = g.pick(&[-1.0, f64::NAN]);
                }
            }
            let need = query(|b| unsafe {
                mvnmf_anchor_graph_workspace(cv.as_ptr(), h, nt, m, null(), &p, b)
            });
            let mut scales = Out::given(&start);
            let mut idx = Out::bytes(n * s_near * 8);
            let mut z = Out::f64s(n * s_near);
            let short = bad && g.one_in(3);
            let mut wk = Work::new(g, need, short);
            let s = unsafe {
                mvnmf_anchor_graph(
                    cv.as_ptr(),
                    h,
                    tc.as_ref().map_or(null(), |t| t.as_ptr()),
                    ac.as_ptr(),
                    s_near,
                    null(),
                    &p,
                    scales.ptr(),
                    idx.ptr(),
                    z.ptr(),
                    wk.ptr(),
                    wk.bytes,
                )
            };
            check_call(
                s,
                &[("scales", &scales), ("idx", &idx), ("z", &z)],
                Some(&wk),
            )?;
            if s == S::Ok {
                finite("z", z.f64())?;
                finite("scales", scales.f64())?;
                if idx.usizes().iter().any(|&a| a >= m) {
                    return fail("anchor index out of range");
                }
                for col in z.f64().chunks(s_near) {
                    let t: f64 = col.iter().sum();
                    if col.iter().any(|&x| x < 0.0) || (t - 1.0).abs() > 1e-12 {
                        return fail(format!("anchor weights not a distribution: {col:?}"));
                    }
                }
            }
        }
        _ => {
            let m = m.max(1);
            let s_near = g.range(1, m);
            let c = g.range(1, 4);
            let r = if bad && g.one_in(6) { 0 } else { g.range(1, 4) };
            let mut idx: Vec<usize> = (0..n * s_near).map(|_| g.below(m)).collect();
            let mut z: Vec<f64> = (0..n * s_near).map(|_| g.f() + 0.01).collect();
            for col in z.chunks_mut(s_near) {
                let t: f64 = col.iter().sum();
                col.iter_mut().for_each(|x| *x /= t);
            }
            if bad && g.one_in(4) {
                let i = g.below(n * s_near);
                match g.below(3) {
                    0 => idx[i] = m + g.below(3),
                    1 => z[i] = -0.5,
                    _ => z[i] = f64::NAN,
                }
            }
            let mut y: Vec<u8> = (0..c * n).map(|_| g.one_in(3) as u8).collect();
            if bad && g.one_in(4) {
                let i = g.below(c * n);
                y[i] = 2;
            }
            let mut p = mvnmf_mvel_params_default();
            p.max_iter = g.range(0, 10) as u32;
            p.nmf_iter = g.range(0, 20) as u32;
            p.theta1 = g.pick(&[0.0, 1.0, 10.0]);
            p.theta2 = g.pick(&[0.0, 0.1, 1.0]);
            p.unknown_weight = g.pick(&[0.0, 0.2, 1.0]);
            p.tol = g.pick(&[0.0, 1e-6]);
            p.seed = g.u64();
            if bad && g.one_in(5) {
                p.theta1 = g.pick(&[-1.0, f64::NAN]);
            }
            let need = query(|b| unsafe { mvnmf_mvel_fit_anchored_workspace(n, c, r, m, &p, b) });
            let mut q = Out::f64s(c * r);
            let mut a = Out::f64s(r * m);
            let mut rep = Out::bytes(std::mem::size_of::<mvnmf_report>());
            let short = bad && g.one_in(3);
            let mut wk = Work::new(g, need, short);
            let mut mon = monitor(g, 1e2 * (1 + n * c) as f64);
            let s = unsafe {
                mvnmf_mvel_fit_anchored(
                    y.as_ptr(),
                    c,
                    n,
                    idx.as_ptr(),
                    z.as_ptr(),
                    s_near,
                    m,
                    r,
                    &p,
                    q.ptr(),
                    a.ptr(),
                    wk.ptr(),
                    wk.bytes,
                    Some(progress),
                    (&mut mon as *mut Mon).cast(),
                    rep.ptr(),
                )
            };
            check_call(s, &[("q", &q), ("a", &a), ("report", &rep)], Some(&wk))?;
            check_mon(s, &mon)?;
            if s != S::Ok && s != S::Cancelled {
                return Ok(());
            }
            finite("q", q.f64())?;
            finite("a", a.f64())?;
            for col in a.f64().chunks(r) {
                if col.iter().map(|x| x * x).sum::<f64>() > 1.0 + 1e-9 {
                    return fail("an anchor embedding outside the unit ball");
                }
            }
            let mut hh = Out::f64s(r * n);
            let s = unsafe {
                mvnmf_mvel_embed_anchored(
                    a.f64().as_ptr(),
                    r,
                    m,
                    idx.as_ptr(),
                    z.as_ptr(),
                    s_near,
                    n,
                    hh.ptr(),
                )
            };
            check_call(s, &[("h", &hh)], None)?;
            if s == S::Ok {
                finite("h", hh.f64())?;
            }
        }
    }
    Ok(())
}

// ------------------------------------------------------------- distributed

/// How one rank's callback lies (issue 31, E7): the data move (it takes part
/// in the call), and then it reports a failure (from one call on, or at one),
/// reports success without writing its result, or delivers `2x + 1` of
/// every word (counts and indices no peer sent).
#[derive(Clone, Copy, Debug, PartialEq)]
enum DLie {
    Fails,
    FailsFromOn,
    Unwritten,
    Garbage,
}

/// The simulated ranks' meeting point.
struct DHub {
    ranks: usize,
    barrier: std::sync::Barrier,
    slots: std::sync::Mutex<Vec<Vec<f64>>>,
    counts: std::sync::Mutex<Vec<Vec<usize>>>,
    ops: std::sync::Mutex<Vec<(u8, usize)>>,
    /// The ranks were not in the same call, or asked for counts their peers
    /// did not send: the protocol is broken (the case fails).
    broken: std::sync::atomic::AtomicBool,
}

/// A rank's callback context.
struct DRank {
    rank: usize,
    hub: std::sync::Arc<DHub>,
    lie: Option<(usize, DLie)>,
    calls: usize,
}

impl DRank {
    fn lie(&mut self) -> Option<DLie> {
        let c = self.calls;
        self.calls += 1;
        match self.lie {
            Some((at, DLie::FailsFromOn)) if c >= at => Some(DLie::FailsFromOn),
            Some((at, l)) if c == at => Some(l),
            _ => None,
        }
    }
    /// Every rank in the same call (no panic: this runs inside a C callback).
    fn same_call(&self, op: u8, len: usize) -> bool {
        self.hub.ops.lock().unwrap()[self.rank] = (op, len);
        self.hub.barrier.wait();
        let same = {
            let ops = self.hub.ops.lock().unwrap();
            ops.iter().all(|&o| o == ops[0])
        };
        self.hub.barrier.wait();
        if !same {
            self.hub
                .broken
                .store(true, std::sync::atomic::Ordering::SeqCst);
        }
        same
    }
    fn deliver(lie: Option<DLie>, got: &[f64], out: &mut [f64]) -> i32 {
        match lie {
            None => out.copy_from_slice(got),
            Some(DLie::Fails | DLie::FailsFromOn) => {
                out.copy_from_slice(got);
                return 1;
            }
            Some(DLie::Unwritten) => {}
            Some(DLie::Garbage) => out
                .iter_mut()
                .zip(got)
                .for_each(|(o, &g)| *o = 2.0 * g + 1.0),
        }
        0
    }
}

unsafe extern "C" fn d_allreduce(buf: *mut f64, len: usize, ctx: *mut c_void) -> i32 {
    let (d, b) = (
        &mut *ctx.cast::<DRank>(),
        std::slice::from_raw_parts_mut(buf, len),
    );
    let lie = d.lie();
    if !d.same_call(0, len) {
        return 1;
    }
    d.hub.slots.lock().unwrap()[d.rank] = b.to_vec();
    d.hub.barrier.wait();
    let sum: Vec<f64> = {
        let s = d.hub.slots.lock().unwrap();
        (0..len)
            .map(|i| s.iter().fold(0.0, |a, r| a + r[i]))
            .collect()
    };
    d.hub.barrier.wait();
    DRank::deliver(lie, &sum, b)
}

unsafe extern "C" fn d_exchange(
    send: *const f64,
    send_counts: *const usize,
    recv: *mut f64,
    recv_counts: *const usize,
    ctx: *mut c_void,
) -> i32 {
    let d = &mut *ctx.cast::<DRank>();
    let p = d.hub.ranks;
    let (sc, rc) = (
        std::slice::from_raw_parts(send_counts, p),
        std::slice::from_raw_parts(recv_counts, p),
    );
    let s = std::slice::from_raw_parts(send, sc.iter().sum());
    let r = std::slice::from_raw_parts_mut(recv, rc.iter().sum());
    let lie = d.lie();
    if !d.same_call(1, 0) {
        return 1;
    }
    d.hub.slots.lock().unwrap()[d.rank] = s.to_vec();
    d.hub.counts.lock().unwrap()[d.rank] = sc.to_vec();
    d.hub.barrier.wait();
    let got: Option<Vec<f64>> = {
        let (s, c) = (d.hub.slots.lock().unwrap(), d.hub.counts.lock().unwrap());
        let mut got = vec![];
        let mut ok = true;
        for q in 0..p {
            let from: usize = c[q][..d.rank].iter().sum();
            let len = c[q][d.rank];
            ok &= len == rc[q];
            got.extend_from_slice(&s[q][from..from + len]);
        }
        ok.then_some(got)
    };
    d.hub.barrier.wait();
    match got {
        Some(got) => DRank::deliver(lie, &got, r),
        None => {
            // Counts the peers did not send: a library that asks for them
            // would hang a real MPI_Alltoallv.
            d.hub
                .broken
                .store(true, std::sync::atomic::Ordering::SeqCst);
            1
        }
    }
}

unsafe extern "C" fn d_allgather(
    part: *const f64,
    part_len: usize,
    out: *mut f64,
    counts: *const usize,
    ctx: *mut c_void,
) -> i32 {
    let d = &mut *ctx.cast::<DRank>();
    let c = std::slice::from_raw_parts(counts, d.hub.ranks);
    let o = std::slice::from_raw_parts_mut(out, c.iter().sum());
    let lie = d.lie();
    if !d.same_call(2, o.len()) {
        return 1;
    }
    d.hub.slots.lock().unwrap()[d.rank] = std::slice::from_raw_parts(part, part_len).to_vec();
    d.hub.barrier.wait();
    let got: Vec<f64> = d.hub.slots.lock().unwrap().concat();
    d.hub.barrier.wait();
    if got.len() != o.len() {
        d.hub
            .broken
            .store(true, std::sync::atomic::Ordering::SeqCst);
        return 1;
    }
    DRank::deliver(lie, &got, o)
}

/// One rank's outcome: its status, whether an output was written although
/// the status is an error (`untouched` false), the report's padding bytes
/// (on OK), whether its outputs are finite (on OK).
#[derive(Debug)]
struct DOut {
    st: S,
    untouched: bool,
    /// The fit's refusal says where (issue 33; always for the graph builds,
    /// which have no report): `MVNMF_STATUS_PEER_FAILED` nowhere,
    /// `MVNMF_STATUS_COMM_FAILED` at `comm` (1), a spoiled value at `views`
    /// (2), view 0, row 0, column 0.
    said: bool,
    padding: [u8; 4],
    finite: bool,
}

/// A distributed case: `ranks` ranks of `n_r` items each; one rank may lie
/// from a call on, one may have a spoiled input; `tge`: the graph build
/// (else the fit, graph `kind` 0 none, 1 SGE, 2 CSR).
#[derive(Clone, Debug)]
struct DCase {
    ranks: usize,
    cuts: Vec<usize>,
    rows: Vec<usize>,
    /// Per view: all items' values (column-major).
    x: Vec<Vec<f64>>,
    k: usize,
    kind: u32,
    tge: bool,
    lie: Option<(usize, usize, DLie)>,
    spoil: Option<usize>,
    iters: u32,
    seed: u64,
}

/// Dense C view descriptors (`$ty`: `mvnmf_view` or `mvnmf_view_f32`) of each
/// view's `n` columns in `owned`, `rows[v]` features each.
macro_rules! dense_views {
    ($ty:ident, $owned:expr, $rows:expr, $n:expr) => {
        $owned
            .iter()
            .zip(&$rows)
            .map(|(x, &m)| $ty {
                kind: MVNMF_VIEW_DENSE,
                rows: m,
                cols: $n,
                values: x.as_ptr(),
                col_stride: m,
                col_ptr: null(),
                row_idx: null(),
            })
            .collect::<Vec<$ty>>()
    };
}

fn dist_rank(c: &DCase, r: usize, comm_ctx: *mut c_void) -> DOut {
    let (a, b) = (c.cuts[r], c.cuts[r + 1]);
    let n = *c.cuts.last().unwrap();
    let n_r = b - a;
    let mut owned: Vec<Vec<f64>> =
        c.x.iter()
            .zip(&c.rows)
            .map(|(x, &m)| x[a * m..b * m].to_vec())
            .collect();
    let mut k = c.k;
    if c.spoil == Some(r) {
        match c.seed % 3 {
            0 => owned[0][0] = f64::NAN,
            1 => k += 1,
            _ => owned[0][0] = -1.0,
        }
    }
    let views = dense_views!(mvnmf_view, owned, c.rows, n_r);
    let h = views.len();
    let comm = mvnmf_dist_comm {
        allreduce: Some(d_allreduce),
        exchange: Some(d_exchange),
        ctx: comm_ctx,
        rank: r,
        n_ranks: c.ranks,
        allgather: if c.seed & 1 == 0 {
            Some(d_allgather)
        } else {
            None
        },
    };
    let labels: Vec<u32> = (0..n)
        .map(|j| {
            if j % 3 == 2 {
                MVNMF_UNLABELED
            } else {
                (j % 2) as u32
            }
        })
        .collect();
    if c.tge {
        let mut gp = mvnmf_graph_params_default();
        gp.ka = 1 + (c.seed as usize >> 3) % 3;
        gp.kp = (c.seed as usize >> 5) % 3;
        gp.penalty = (c.seed >> 7 & 1) as u32;
        gp.block = 1 + (c.seed as usize >> 8) % 6;
        let kern: Vec<mvnmf_kernel> = (0..h)
            .map(|v| mvnmf_kernel {
                kind: if v == 0 {
                    MVNMF_KERNEL_RBF
                } else {
                    MVNMF_KERNEL_LINEAR
                },
                gamma: 0.0,
            })
            .collect();
        let eta = vec![1.0 / h as f64; h];
        let (mut ca, mut cq, mut wb) = (0, 0, 0);
        // The approximate graph (`mvnmf_dist_tge_approx`) on half of the graph cases (a
        // bit of the case's seed, no new draw), NN-descent options from the seed too
        // (NULL: the defaults, on a third).
        let approx = c.seed >> 11 & 1 == 1;
        let mut ann = mvnmf_ann_params_default();
        ann.seed = c.seed >> 17;
        ann.k = (c.seed as usize >> 13) % 4;
        let annp: *const mvnmf_ann_params = if (c.seed >> 15).is_multiple_of(3) {
            null()
        } else {
            &ann
        };
        let s1 = unsafe { mvnmf_dist_tge_capacity(n, n_r, 2, &gp, &mut ca, &mut cq) };
        let s2 = unsafe {
            if approx {
                mvnmf_dist_tge_approx_workspace(
                    views.as_ptr(),
                    h,
                    kern.as_ptr(),
                    labels.as_ptr(),
                    n,
                    2,
                    c.ranks,
                    &gp,
                    annp,
                    &mut wb,
                )
            } else {
                mvnmf_dist_tge_workspace(
                    views.as_ptr(),
                    h,
                    kern.as_ptr(),
                    labels.as_ptr(),
                    n,
                    2,
                    c.ranks,
                    &gp,
                    &mut wb,
                )
            }
        };
        if s1 != S::Ok || s2 != S::Ok {
            wb = 1 << 16;
            (ca, cq) = (n * n, n * n);
        }
        let mut outs = [
            Out::bytes(8 * (n_r + 1)),
            Out::bytes(8 * ca),
            Out::f64s(ca),
            Out::bytes(8 * (n_r + 1)),
            Out::bytes(8 * cq),
            Out::f64s(cq),
        ];
        let bufs = |o: &mut [Out], i: usize, cap: usize| mvnmf_csr_buffers {
            row_ptr: o[i].ptr(),
            col_idx: o[i + 1].ptr(),
            weights: o[i + 2].ptr(),
            capacity: cap,
        };
        let (ab, pb) = (bufs(&mut outs, 0, ca), bufs(&mut outs, 3, cq));
        let (mut an, mut pn) = (Out::bytes(8), Out::bytes(8));
        let mut w = vec![0u8; wb.max(1)];
        let mut tr = Out::bytes(std::mem::size_of::<mvnmf_dist_graph_traffic>());
        let st = unsafe {
            if approx {
                mvnmf_dist_tge_approx(
                    &comm,
                    views.as_ptr(),
                    h,
                    kern.as_ptr(),
                    eta.as_ptr(),
                    labels.as_ptr(),
                    n,
                    2,
                    &gp,
                    annp,
                    &ab,
                    &pb,
                    an.ptr(),
                    pn.ptr(),
                    w.as_mut_ptr().cast(),
                    wb,
                    if c.seed >> 12 & 1 == 1 {
                        tr.ptr()
                    } else {
                        null_mut()
                    },
                )
            } else {
                mvnmf_dist_tge(
                    &comm,
                    views.as_ptr(),
                    h,
                    kern.as_ptr(),
                    eta.as_ptr(),
                    labels.as_ptr(),
                    n,
                    2,
                    &gp,
                    &ab,
                    &pb,
                    an.ptr(),
                    pn.ptr(),
                    w.as_mut_ptr().cast(),
                    wb,
                    null_mut(),
                )
            }
        };
        let untouched = st == S::Ok || outs.iter().chain([&an, &pn, &tr]).all(Out::untouched);
        // On OK the rows are a CSR graph of this rank's items: row pointers from 0,
        // non-decreasing, up to the count returned, columns below `n`, weights finite.
        if st == S::Ok {
            for (i, nnz) in [(0usize, &an), (3, &pn)] {
                let nz = nnz.usizes()[0];
                let rp = &outs[i].usizes()[..n_r + 1];
                let ci = &outs[i + 1].usizes()[..nz.min(outs[i + 1].len / 8)];
                let wt = &outs[i + 2].f64()[..nz.min(outs[i + 2].len / 8)];
                if rp[0] != 0
                    || rp[n_r] != nz
                    || rp.windows(2).any(|p| p[0] > p[1])
                    || ci.len() != nz
                    || ci.iter().any(|&j| j >= n)
                    || wt.iter().any(|x| !x.is_finite())
                {
                    return DOut {
                        st,
                        untouched,
                        said: true,
                        padding: [0; 4],
                        finite: false,
                    };
                }
            }
        }
        return DOut {
            st,
            untouched,
            said: true,
            padding: [0; 4],
            finite: true,
        };
    }
    let mut p = std::mem::MaybeUninit::<mvnmf_mvsl_params>::zeroed();
    unsafe { mvnmf_mvsl_params_preset((c.seed % 3) as u32, p.as_mut_ptr()) };
    let mut p = unsafe { p.assume_init() };
    p.max_iter = c.iters;
    p.tol = 0.0;
    p.seed = c.seed;
    p.v_inner = 1 + (c.seed >> 4 & 1) as u32;
    let ring = |a: usize, b: usize, ds: &[usize]| {
        let (mut rp, mut ci) = (vec![0usize], vec![]);
        for i in a..b {
            let mut row: Vec<usize> = ds
                .iter()
                .flat_map(|&d| [(i + d) % n, (i + n - d) % n])
                .filter(|&j| j != i)
                .collect();
            row.sort();
            row.dedup();
            ci.extend(row);
            rp.push(ci.len());
        }
        let w = vec![0.5; ci.len()];
        (rp, ci, w)
    };
    let (aff, pen) = (ring(a, b, &[1]), ring(a, b, &[n / 2]));
    let g = mvnmf_graph {
        kind: c.kind,
        n: n_r,
        labels: labels[a..b].as_ptr(),
        n_classes: 2,
        affinity_row_ptr: aff.0.as_ptr(),
        affinity_col_idx: aff.1.as_ptr(),
        affinity_weights: aff.2.as_ptr(),
        penalty_row_ptr: pen.0.as_ptr(),
        penalty_col_idx: pen.1.as_ptr(),
        penalty_weights: pen.2.as_ptr(),
    };
    // The fit: MvSL (f64 or `_f32`, seed bit 12) or, one case in four (seed
    // bits 13–14), joint NMF without a graph (`mvnmf_dist_joint_nmf_fit(_f32)`).
    let f32 = c.seed >> 12 & 1 == 1;
    let joint = c.seed >> 13 & 3 == 0;
    let mut np = mvnmf_nmf_params_default();
    np.max_iter = c.iters;
    np.tol = 0.0;
    np.seed = c.seed;
    let owned32: Vec<Vec<f32>> = owned
        .iter()
        .map(|x| x.iter().map(|&y| y as f32).collect())
        .collect();
    let views32 = dense_views!(mvnmf_view_f32, owned32, c.rows, n_r);
    let (vp, vp32) = (views.as_ptr(), views32.as_ptr());
    let mut wb = 0;
    let s = unsafe {
        match (joint, f32) {
            (false, false) => mvnmf_dist_mvsl_fit_workspace(vp, h, &g, k, c.ranks, &p, &mut wb),
            (false, true) => {
                mvnmf_dist_mvsl_fit_f32_workspace(vp32, h, &g, k, c.ranks, &p, &mut wb)
            }
            (true, false) => mvnmf_dist_joint_nmf_fit_workspace(vp, h, k, c.ranks, &np, &mut wb),
            (true, true) => {
                mvnmf_dist_joint_nmf_fit_f32_workspace(vp32, h, k, c.ranks, &np, &mut wb)
            }
        }
    };
    if s != S::Ok {
        wb = 1 << 16;
    }
    let word = if f32 { 4 } else { 8 };
    let mut us: Vec<Out> = c.rows.iter().map(|&m| Out::bytes(m * k * word)).collect();
    let ptrs: Vec<*mut f64> = us.iter_mut().map(|u| u.ptr()).collect();
    let ptrs32: Vec<*mut f32> = us.iter_mut().map(|u| u.ptr()).collect();
    let mut v = Out::bytes(k * n_r * word);
    let mut rep = Out::bytes(std::mem::size_of::<mvnmf_report>());
    let mut tr = Out::bytes(std::mem::size_of::<mvnmf_dist_traffic>());
    let mut w = vec![0u8; wb.max(1)];
    let (wp, rp, tp) = (w.as_mut_ptr().cast(), rep.ptr(), tr.ptr());
    let st = unsafe {
        match (joint, f32) {
            (false, false) => mvnmf_dist_mvsl_fit(
                &comm,
                vp,
                h,
                &g,
                k,
                &p,
                ptrs.as_ptr(),
                v.ptr(),
                wp,
                wb,
                None,
                null_mut(),
                rp,
                tp,
            ),
            (false, true) => mvnmf_dist_mvsl_fit_f32(
                &comm,
                vp32,
                h,
                &g,
                k,
                &p,
                ptrs32.as_ptr(),
                v.ptr(),
                wp,
                wb,
                None,
                null_mut(),
                rp,
                tp,
            ),
            (true, false) => mvnmf_dist_joint_nmf_fit(
                &comm,
                vp,
                h,
                k,
                &np,
                ptrs.as_ptr(),
                v.ptr(),
                wp,
                wb,
                None,
                null_mut(),
                rp,
                tp,
            ),
            (true, true) => mvnmf_dist_joint_nmf_fit_f32(
                &comm,
                vp32,
                h,
                k,
                &np,
                ptrs32.as_ptr(),
                v.ptr(),
                wp,
                wb,
                None,
                null_mut(),
                rp,
                tp,
            ),
        }
    };
    // A rank's failure after the start leaves a partial iterate (documented):
    // only the traffic stays untouched then, and the report is a refusal's
    // (issue 33: every field zero but `where_*`).
    let untouched = st == S::Ok
        || (rep.is_refusal()
            && tr.untouched()
            && (c.lie.is_some() || us.iter().chain([&v]).all(Out::untouched)));
    let at = rep.where_at();
    let said = match st {
        S::Ok | S::Cancelled => true,
        S::PeerFailed => at == (0, usize::MAX, usize::MAX, usize::MAX),
        S::CommFailed => at == (1, usize::MAX, usize::MAX, usize::MAX),
        S::NonFiniteInput | S::NegativeInput if c.spoil == Some(r) => at == (2, 0, 0, 0),
        _ => at.0 <= 14,
    };
    let mut padding = [0u8; 4];
    padding.copy_from_slice(&rep.as_bytes()[12..16]);
    let finite_out = |o: &Out| {
        if f32 {
            o.as_bytes()
                .chunks_exact(4)
                .all(|b| f32::from_ne_bytes([b[0], b[1], b[2], b[3]]).is_finite())
        } else {
            o.f64().iter().all(|x| x.is_finite())
        }
    };
    let finite = st != S::Ok || us.iter().chain([&v]).all(finite_out);
    DOut {
        st,
        untouched,
        said,
        padding,
        finite,
    }
}

/// Runs a distributed case on threads; `Err` when a rank never returns (it
/// waits in a collective: the guard, not a timing assertion) or the ranks
/// were not in the same call.
fn dist_run(c: DCase) -> Result<Vec<DOut>, String> {
    use std::sync::{atomic::Ordering, Arc, Barrier, Mutex};
    let hub = Arc::new(DHub {
        ranks: c.ranks,
        barrier: Barrier::new(c.ranks),
        slots: Mutex::new(vec![vec![]; c.ranks]),
        counts: Mutex::new(vec![vec![]; c.ranks]),
        ops: Mutex::new(vec![(0, 0); c.ranks]),
        broken: false.into(),
    });
    let c = Arc::new(c);
    let (tx, rx) = std::sync::mpsc::channel();
    for r in 0..c.ranks {
        let (hub, c, tx) = (hub.clone(), c.clone(), tx.clone());
        std::thread::spawn(move || {
            let lie = c.lie.filter(|l| l.0 == r).map(|l| (l.1, l.2));
            let mut d = DRank {
                rank: r,
                hub,
                lie,
                calls: 0,
            };
            let out = dist_rank(&c, r, (&mut d as *mut DRank).cast());
            let _ = tx.send((r, out));
        });
    }
    let mut out: Vec<Option<DOut>> = (0..c.ranks).map(|_| None).collect();
    for _ in 0..c.ranks {
        match rx.recv_timeout(std::time::Duration::from_secs(120)) {
            Ok((r, o)) => out[r] = Some(o),
            Err(_) => {
                return Err(format!(
                    "a rank never returned (it waits in a collective): {c:?}, returned {:?}",
                    out.iter()
                        .map(|o| o.as_ref().map(|x| x.st))
                        .collect::<Vec<_>>()
                ))
            }
        }
    }
    if hub.broken.load(Ordering::SeqCst) {
        return Err(format!("the ranks were not in the same call: {c:?}"));
    }
    Ok(out.into_iter().map(Option::unwrap).collect())
}

/// Distributed fits and graph builds through the C ABI with a lying callback
/// or a spoiled input on one rank (issue 31, E7): every rank returns, never
/// INTERNAL, the statuses agree (all OK; or all failed, each rank its own
/// error or `PEER_FAILED`; or, a lie at the closing agreement, the liar's
/// `COMM_FAILED` and the others' OK), nothing written on an error before the
/// start, the report's padding zero, finite outputs on OK.
fn t_dist(g: &mut G, bad: bool) -> R {
    CURRENT.with(|c| *c.borrow_mut() = "dist");
    REFUSED.with(|r| *r.borrow_mut() = None);
    let ranks = g.range(2, 3);
    let mut cuts = vec![0];
    for _ in 0..ranks {
        let n_r = g.range(1, 5);
        cuts.push(cuts.last().unwrap() + n_r);
    }
    let n = *cuts.last().unwrap();
    let h = g.range(1, 2);
    let rows: Vec<usize> = (0..h).map(|_| g.range(1, 4)).collect();
    let x: Vec<Vec<f64>> = rows
        .iter()
        .map(|&m| {
            let s = g.decade(3);
            (0..m * n).map(|_| value(g, s)).collect()
        })
        .collect();
    let lie = g.one_in(2).then(|| {
        let l = g.pick(&[
            DLie::Fails,
            DLie::FailsFromOn,
            DLie::Unwritten,
            DLie::Garbage,
        ]);
        (g.below(ranks), g.below(40), l)
    });
    let c = DCase {
        ranks,
        cuts,
        rows,
        x,
        k: g.range(1, 3),
        kind: g.below(3) as u32,
        tge: g.one_in(3),
        lie,
        // One fault at a time: a rank's own refusal carried by the very call
        // at which another rank's callback fails cannot reach that rank.
        spoil: (bad && lie.is_none()).then(|| g.below(ranks)),
        iters: g.range(0, 4) as u32,
        seed: g.u64(),
    };
    let what = format!("{c:?}");
    if c.tge {
        // Tallied apart: the exact rows and the approximate graph (`dist_rank`).
        let name = if c.seed >> 11 & 1 == 1 {
            "dist_tge_approx"
        } else {
            "dist_tge"
        };
        CURRENT.with(|n| *n.borrow_mut() = name);
    } else {
        // Tallied apart: the fits' precisions and models (`dist_rank`).
        let name = match (c.seed >> 13 & 3 == 0, c.seed >> 12 & 1 == 1) {
            (false, false) => "dist",
            (false, true) => "dist_f32",
            (true, false) => "dist_joint",
            (true, true) => "dist_joint_f32",
        };
        CURRENT.with(|n| *n.borrow_mut() = name);
    }
    let out = dist_run(c.clone())?;
    let st: Vec<S> = out.iter().map(|o| o.st).collect();
    for o in &out {
        check_call(o.st, &[], None)?;
        if !o.untouched {
            return fail(format!("an output written with status {:?}: {what}", o.st));
        }
        if !o.said {
            return fail(format!("the refusal {:?} does not say where: {what}", o.st));
        }
        if o.st == S::Ok && o.padding != [0; 4] {
            return fail(format!("the report's padding is {:?}: {what}", o.padding));
        }
        if !o.finite {
            return fail(format!("OK with outputs not finite: {what}"));
        }
    }
    let all_same = st.iter().all(|&s| s == st[0]);
    // Every rank failed: each its own error (ranks may refuse their own
    // inputs alike) or PEER_FAILED, and at least one not PEER_FAILED.
    let one_blamed = st.iter().any(|&s| s != S::PeerFailed) && st.iter().all(|&s| s != S::Ok);
    let closing = c.lie.is_some_and(|(r, _, _)| {
        st[r] == S::CommFailed && st.iter().enumerate().all(|(q, &s)| q == r || s == S::Ok)
    });
    if !(all_same || one_blamed || closing) {
        return fail(format!("the ranks' statuses disagree {st:?}: {what}"));
    }
    if c.lie.is_none() && c.spoil.is_none() && !all_same {
        return fail(format!("an honest run's statuses differ {st:?}: {what}"));
    }
    Ok(())
}

// ------------------------------------------------------- issue 31 (E5, E6, E8)

/// `mvnmf_mean_std` anywhere in the `f64` range (E6: values near `DBL_MAX` gave ±∞ with
/// OK): finite results inside the data's range, the deviation at most half the range;
/// `bad`: a NaN or ±∞ somewhere, refused.
fn t_mean_std(g: &mut G, bad: bool) -> R {
    let n = g.range(1, 40);
    let any = g.decade(308);
    let scale = g.pick(&[1.0, 1e200, 1e300, f64::MAX, 1e-300, 5e-324, any]);
    let mut x: Vec<f64> = (0..n)
        .map(|_| match g.below(6) {
            0 => scale,
            1 => -scale,
            _ => (2.0 * g.f() - 1.0) * scale,
        })
        .collect();
    let nonfinite = bad && g.one_in(2);
    if nonfinite {
        let i = g.below(n);
        x[i] = g.pick(&[f64::NAN, f64::INFINITY, f64::NEG_INFINITY]);
    }
    MAGS.with(|m| *m.borrow_mut() = format!("mean_std at {scale:e}"));
    let mut out = Out::f64s(2);
    let (pm, ps): (*mut f64, *mut f64) = {
        let p = out.ptr::<f64>();
        (p, p.wrapping_add(1))
    };
    let s = unsafe { mvnmf_mean_std(x.as_ptr(), n, pm, ps) };
    check_call(s, &[("mean/std", &out)], None)?;
    if nonfinite {
        return if s == S::NonFiniteInput {
            Ok(())
        } else {
            fail(format!("mean_std of a non-finite value: {s:?}"))
        };
    }
    if s != S::Ok {
        return fail(format!("mean_std of finite values: {s:?}"));
    }
    let (m, sd) = (out.f64()[0], out.f64()[1]);
    let lo = x.iter().fold(f64::INFINITY, |a, &v| a.min(v));
    let hi = x.iter().fold(f64::NEG_INFINITY, |a, &v| a.max(v));
    if !(m.is_finite() && sd.is_finite()) {
        return fail(format!("mean_std: ({m:e}, {sd:e}) on OK"));
    }
    // Half the range, computed without overflow (up to the halving of subnormals).
    let half = (hi / 2.0 - lo / 2.0) * (1.0 + 1e-12) + f64::from_bits(1);
    if m < lo || m > hi || sd < 0.0 || sd > half {
        return fail(format!(
            "mean_std: ({m:e}, {sd:e}) outside the data's range [{lo:e}, {hi:e}]"
        ));
    }
    if n == 1 && (m != x[0] || sd != 0.0) {
        return fail("mean_std of one value");
    }
    Ok(())
}

// ------------------------------------------------- β-NMF and JSNMF magnitudes (issue 31)

/// `f32` copies of views and their C descriptors (pointing into `vals`).
fn views_f32(vs: &[ViewData], vals: &[Vec<f32>]) -> Vec<mvnmf_view_f32> {
    vs.iter()
        .zip(vals)
        .map(|(x, f)| {
            let c = x.c();
            mvnmf_view_f32 {
                kind: c.kind,
                rows: c.rows,
                cols: c.cols,
                values: f.as_ptr(),
                col_stride: c.col_stride,
                col_ptr: c.col_ptr,
                row_idx: c.row_idx,
            }
        })
        .collect()
}

/// The stored values of a valid view (dense: within the stride), as the call reads them.
fn stored(v: &ViewData) -> Vec<f64> {
    if v.kind == MVNMF_VIEW_CSC {
        v.vals.clone()
    } else {
        (0..v.cols)
            .flat_map(|j| (0..v.rows).map(move |i| (i, j)))
            .filter_map(|(i, j)| v.vals.get(i + j * v.stride).copied())
            .collect()
    }
}

/// The binary exponent `e` of `x > 0` (`x = m·2^e`, `m ∈ [0.5, 1)`), subnormals included.
fn binary_exp(x: f64) -> i32 {
    let (x, shift) = if x < f64::MIN_POSITIVE {
        (x * 2f64.powi(64), 64)
    } else {
        (x, 0)
    };
    ((x.to_bits() >> 52) & 0x7ff) as i32 - 1022 - shift
}

/// `log₂ Σ x^β` over values (`β > 0`), without overflow: per view at its own
/// power of two.
fn log2_power_sum(views: &[Vec<f64>], beta: f64) -> f64 {
    let mut logs = vec![];
    for xs in views {
        let mx = xs.iter().fold(0.0f64, |a, &b| a.max(b));
        if mx == 0.0 {
            continue;
        }
        let e = mx.log2().floor();
        let sum: f64 = xs.iter().map(|&x| (x * 2f64.powf(-e)).powf(beta)).sum();
        logs.push(sum.log2() + beta * e);
    }
    let t = logs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    if t == f64::NEG_INFINITY {
        return t;
    }
    t + logs.iter().map(|l| 2f64.powf(l - t)).sum::<f64>().log2()
}

/// β-NMF (issue 31, E2 and E3): 1..3 dense views (CSC ones for β = 1), each at
/// its own magnitude — a base anywhere in `1e±300` (`f32` cases: `1e±40`,
/// subnormals included) and views up to [`SOLVER_SPREADS`] decades apart —,
/// sometimes with a spread of magnitudes inside a view; every β (0, 0.5, 1, 2
/// and others in `[0, 2]`), both precisions, masks, random and given starts,
/// `clip` default, 0 or tiny. Checks: refusal with `INPUT_TOO_LARGE` exactly
/// per the documented rule (an entry above `2^(MAX_EXP − 25)`, or `Σ x^β` above
/// `2^1000`); on OK finite factors and objectives; with `clip = 0` (the exact
/// MM update) an objective that never rises.
fn t_beta(g: &mut G, bad: bool) -> R {
    let single = g.one_in(3);
    let h = g.range(1, 3);
    let n = g.range(1, 8);
    let beta = if bad && g.one_in(6) {
        g.pick(&[-1.0, 2.5, f64::NAN])
    } else if g.one_in(4) {
        2.0 * g.f()
    } else {
        g.pick(&[0.0, 0.5, 1.0, 2.0, 0.25, 1.5, 1.9])
    };
    let (lo, hi) = if single { (-45, 38) } else { (-323, 307) };
    let base = if single {
        g.decade(40)
    } else {
        g.decade(solver_decades())
    };
    let spread = solver_spread(g);
    let mut scales = vec![];
    let mut vs: Vec<ViewData> = (0..h)
        .map(|_| {
            let d = g.range(1, 5);
            let s = (base * g.decade(spread)).clamp(10f64.powi(lo), 10f64.powi(hi));
            scales.push(s);
            let mut v = gen_view(g, d, n, s);
            if beta != 1.0 && v.kind == MVNMF_VIEW_CSC && !g.one_in(8) {
                v = gen_view(g, d, n, s);
                if v.kind == MVNMF_VIEW_CSC {
                    v = ViewData {
                        kind: MVNMF_VIEW_DENSE,
                        rows: d,
                        cols: n,
                        stride: d,
                        vals: (0..d * n).map(|_| value(g, s)).collect(),
                        col_ptr: vec![],
                        row_idx: vec![],
                    };
                }
            }
            if v.kind == MVNMF_VIEW_DENSE {
                // Entries spread over 20 decades inside a view (issue 31, seed
                // 0x200d38d: the clip capped `x/y` of entries fitted below it and
                // a factor pair collapsed; the clip now acts only where `x = 0`).
                let wide = g.one_in(4);
                for x in v.vals.iter_mut() {
                    if beta <= 0.0 && *x == 0.0 && !g.one_in(20) {
                        *x = 0.05 * s;
                    }
                    if wide {
                        // Entries spread over 20 decades below the view's scale.
                        *x *= 10f64.powi(-(g.below(21) as i32));
                    }
                }
            }
            v
        })
        .collect();
    MAGS.with(|m| {
        *m.borrow_mut() = scales
            .iter()
            .map(|s| format!("{s:.0e}"))
            .collect::<Vec<_>>()
            .join(" ")
    });
    if bad && g.one_in(2) {
        let i = g.below(h);
        corrupt_view(g, &mut vs[i]);
    }
    let k = if bad && g.one_in(8) { 0 } else { g.range(1, 4) };
    let clip = g.pick(&[-1.0, 0.0, 0.0, 1e-12]);
    let mut p = mvnmf_nmf_params_default();
    p.max_iter = g.range(0, 20) as u32;
    p.tol = g.pick(&[0.0, 0.0, 1e-6]);
    p.seed = g.u64();
    let given = g.one_in(4);
    p.init = if given {
        MVNMF_INIT_GIVEN
    } else {
        MVNMF_INIT_RANDOM
    };
    let masks: Vec<Option<Vec<u8>>> = vs
        .iter()
        .map(|v| {
            if v.kind == MVNMF_VIEW_CSC || !g.one_in(3) {
                None
            } else {
                Some((0..v.rows * n).map(|_| u8::from(!g.one_in(4))).collect())
            }
        })
        .collect();
    let use_masks = masks.iter().any(|m| m.is_some());
    let mptrs: Vec<*const u8> = masks
        .iter()
        .map(|m| m.as_ref().map_or(null(), |m| m.as_ptr()))
        .collect();
    // The values the call reads (rounded to float in single precision), observed only.
    let fvals: Vec<Vec<f32>> = vs
        .iter()
        .map(|x| x.vals.iter().map(|&a| a as f32).collect())
        .collect();
    let read: Vec<Vec<f64>> = vs
        .iter()
        .zip(&fvals)
        .zip(&masks)
        .map(|((v, f), m)| {
            let wide = ViewData {
                vals: if single {
                    f.iter().map(|&a| a as f64).collect()
                } else {
                    v.vals.clone()
                },
                col_ptr: v.col_ptr.clone(),
                row_idx: v.row_idx.clone(),
                ..*v
            };
            let xs = stored(&wide);
            match m {
                Some(m) if use_masks => xs
                    .iter()
                    .zip(m)
                    .filter(|(_, &b)| b == 1)
                    .map(|(&x, _)| x)
                    .collect(),
                _ => xs,
            }
        })
        .collect();
    let starts: Vec<Out> = vs
        .iter()
        .map(|v| start(g, v.rows * k, given, f64::INFINITY))
        .collect();
    let v0 = start(g, k * n, given, f64::INFINITY);
    // The tolerance: the objective's own scale (its start), in single
    // precision at float's.
    let mut mon = monitor(g, 0.0);
    let rel = if single { 1e-4 } else { 1e-10 };
    let cv: Vec<mvnmf_view> = vs.iter().map(ViewData::c).collect();
    let mut rep = Out::bytes(std::mem::size_of::<mvnmf_report>());
    let short = bad && g.one_in(3);
    let trace = |s: S| {
        if std::env::var_os("MVNMF_FUZZ_TRACE").is_some() {
            eprintln!(
                "beta {beta} single {single} given {given} clip {clip} iters {} k {k} masks {use_masks} status {s:?}",
                p.max_iter
            );
        }
    };
    let (s, outs_ok) = if single {
        let cf = views_f32(&vs, &fvals);
        let need =
            query(|b| unsafe { mvnmf_beta_nmf_fit_f32_workspace(cf.as_ptr(), h, k, beta, &p, b) });
        let mut uf: Vec<Out> = starts.iter().map(as_f32).collect();
        let ptrs: Vec<*mut f32> = uf.iter_mut().map(|o| o.ptr()).collect();
        let mut vf = as_f32(&v0);
        let mut wk = Work::new(g, need, short);
        let s = unsafe {
            mvnmf_beta_nmf_fit_f32(
                cf.as_ptr(),
                h,
                k,
                beta,
                clip,
                if use_masks { mptrs.as_ptr() } else { null() },
                &p,
                ptrs.as_ptr(),
                vf.ptr(),
                wk.ptr(),
                wk.bytes,
                Some(progress),
                (&mut mon as *mut Mon).cast(),
                rep.ptr(),
            )
        };
        trace(s);
        let mut named: Vec<(&str, &Out)> = uf.iter().map(|o| ("u (f32)", o)).collect();
        named.push(("v (f32)", &vf));
        named.push(("report", &rep));
        check_call(s, &named, Some(&wk))?;
        let fin = uf
            .iter()
            .chain(std::iter::once(&vf))
            .all(|o| f32s(o).iter().all(|x| x.is_finite()));
        (s, fin)
    } else {
        let need =
            query(|b| unsafe { mvnmf_beta_nmf_fit_workspace(cv.as_ptr(), h, k, beta, &p, b) });
        if std::env::var_os("MVNMF_FUZZ_DUMP").is_some() {
            for (x, m) in vs.iter().zip(&masks) {
                eprintln!(
                    "view {} {}x{} vals {:?} col_ptr {:?} row_idx {:?} mask {:?}",
                    x.kind, x.rows, x.cols, x.vals, x.col_ptr, x.row_idx, m
                );
            }
            for u in &starts {
                eprintln!("u0 {:?}", u.f64());
            }
            eprintln!("v0 {:?} iters {} clip {clip}", v0.f64(), p.max_iter);
        }
        let mut us: Vec<Out> = starts;
        let ptrs: Vec<*mut f64> = us.iter_mut().map(|o| o.ptr()).collect();
        let mut vo = v0;
        let mut wk = Work::new(g, need, short);
        let s = unsafe {
            mvnmf_beta_nmf_fit(
                cv.as_ptr(),
                h,
                k,
                beta,
                clip,
                if use_masks { mptrs.as_ptr() } else { null() },
                &p,
                ptrs.as_ptr(),
                vo.ptr(),
                wk.ptr(),
                wk.bytes,
                Some(progress),
                (&mut mon as *mut Mon).cast(),
                rep.ptr(),
            )
        };
        trace(s);
        let mut named: Vec<(&str, &Out)> = us.iter().map(|o| ("u", o)).collect();
        named.push(("v", &vo));
        named.push(("report", &rep));
        check_call(s, &named, Some(&wk))?;
        let fin = us
            .iter()
            .chain(std::iter::once(&vo))
            .all(|o| o.f64().iter().all(|x| x.is_finite()));
        (s, fin)
    };
    let ok = s == S::Ok || s == S::Cancelled;
    if ok && !outs_ok {
        return fail(format!("a non-finite factor with {s:?}"));
    }
    if ok {
        // The report's objectives (double).
        let r: &mvnmf_report = unsafe { &*rep.buf.as_ptr().cast() };
        if !(r.objective.total.is_finite() && r.initial.total.is_finite()) {
            return fail(format!("a non-finite objective in the report with {s:?}"));
        }
    }
    // Monotone only with the exact MM update (clip = 0; the default clip is
    // scikit-learn's, which may rise where Y is below it). The tolerance is
    // 1e-10 of the start's objective (`monitor`), in single precision 1e-4.
    if clip != 0.0 {
        mon.rose = None;
    }
    mon.tol *= rel / 1e-10;
    check_mon(s, &mon)?;
    // The magnitude rule, judged on valid cases only.
    if !bad && (0.0..=2.0).contains(&beta) && k > 0 {
        let exp_max = if single { 128 - 25 } else { 1024 - 25 };
        let big = read
            .iter()
            .flatten()
            .any(|&x| x > 0.0 && x.log2().floor() as i32 + 1 > exp_max);
        let size = if beta > 0.0 {
            log2_power_sum(&read, beta)
        } else {
            f64::NEG_INFINITY
        };
        // Views more than 2^(256/β) apart (their largest entries' binary
        // exponents), β ∈ (0, 2): refused (a light view's weight below 2^-256).
        let exps: Vec<i32> = read
            .iter()
            .filter_map(|xs| {
                let mx = xs.iter().fold(0.0f64, |a, &b| a.max(b));
                (mx > 0.0).then(|| binary_exp(mx))
            })
            .collect();
        let (emin, emax) = (
            exps.iter().copied().min().unwrap_or(0),
            exps.iter().copied().max().unwrap_or(0),
        );
        let apart = beta > 0.0 && beta < 2.0 && beta * f64::from(emin - emax) < -256.0;
        let must = big || apart || size > 1000.0 + 1e-6;
        let may = big || apart || size > 1000.0 - 1e-6;
        if s == S::InputTooLarge && !may {
            return fail(format!(
                "INPUT_TOO_LARGE for log2 Σx^β = {size}, views 2^{} apart, beta {beta}",
                emax - emin
            ));
        }
        if ok && must {
            return fail(format!(
                "{s:?} for log2 Σx^β = {size} (big entry {big}), beta {beta}"
            ));
        }
    }
    Ok(())
}

/// `mvnmf_mvel_predict` on factors at any magnitude, with NaN or ±∞ in the bad cases (E5:
/// OK with NaN or infinite scores): OK only with finite scores and `r·max|Q|·max|H| ≤
/// 2^1022`; `INPUT_TOO_LARGE` only above it; `NON_FINITE_INPUT` only for a non-finite entry.
fn t_predict(g: &mut G, bad: bool) -> R {
    let (c, r, n) = (g.range(1, 4), g.range(1, 4), g.range(1, 9));
    let (sq, sh) = (g.decade(300), g.decade(300));
    let mut q: Vec<f64> = (0..c * r).map(|_| (2.0 * g.f() - 1.0) * sq).collect();
    let mut h: Vec<f64> = (0..r * n).map(|_| (2.0 * g.f() - 1.0) * sh).collect();
    let nonfinite = bad && g.one_in(2);
    if nonfinite {
        let v = g.pick(&[f64::NAN, f64::INFINITY, f64::NEG_INFINITY]);
        if g.one_in(2) {
            let i = g.below(c * r);
            q[i] = v;
        } else {
            let i = g.below(r * n);
            h[i] = v;
        }
    }
    MAGS.with(|m| *m.borrow_mut() = format!("Q at {sq:e}, H at {sh:e}"));
    let need = query(|b| unsafe { mvnmf_mvel_predict_workspace(c, r, n, b) });
    let mut sc = Out::f64s(c * n);
    let short = bad && g.one_in(4);
    let mut wk = Work::new(g, need, short);
    let s = unsafe {
        mvnmf_mvel_predict(
            q.as_ptr(),
            h.as_ptr(),
            c,
            r,
            n,
            sc.ptr(),
            wk.ptr(),
            wk.bytes,
        )
    };
    check_call(s, &[("scores", &sc)], Some(&wk))?;
    let amax = |x: &[f64]| x.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let bound = r as f64 * amax(&q) * amax(&h);
    let lim = 2f64.powi(1022);
    match s {
        S::Ok => {
            if nonfinite || bound > lim * (1.0 + 1e-12) {
                return fail(format!(
                    "predict OK with r·|Q|·|H| = {bound:e} (non-finite: {nonfinite})"
                ));
            }
            finite("scores", &sc.f64()[..c * n])?;
            if sc.f64()[..c * n]
                .iter()
                .any(|x| x.abs() > bound * (1.0 + 1e-12))
            {
                return fail("a score above r·max|Q|·max|H|");
            }
        }
        S::NonFiniteInput if !nonfinite => return fail("NON_FINITE_INPUT for finite factors"),
        S::InputTooLarge if nonfinite || bound < lim * (1.0 - 1e-12) => {
            return fail(format!("INPUT_TOO_LARGE for r·|Q|·|H| = {bound:e}"))
        }
        _ => {}
    }
    Ok(())
}

/// A dimension-only workspace query and its call (E8: a query that checked less than its
/// call), one dimension hostile: zero, or one whose buffer exceeds `isize::MAX` bytes.
/// Both must give the same status (or the query OK with more than the call's workspace).
fn t_query_dims(g: &mut G) -> R {
    let fams = query_cases::families();
    let (name, nd, base, f) = fams[g.below(fams.len())];
    let mut d = base.to_vec();
    let i = g.below(nd);
    d[i] = match g.below(3) {
        0 => 0,
        1 => usize::MAX - g.below(1 << 20),
        _ => (1usize << 63) + 1 + (g.u64() as usize >> 2),
    };
    MAGS.with(|m| *m.borrow_mut() = format!("{name}{d:?}"));
    let mut b = query_cases::Bufs::new();
    let o = f(&d, &mut b);
    if !query_cases::agrees(&o) {
        return fail(format!(
            "{name}{d:?}: query {:?} ({} bytes), call {:?}",
            o.query, o.bytes, o.call
        ));
    }
    if o.query != S::Ok && o.bytes != usize::MAX {
        return fail(format!("{name}{d:?}: *bytes written on {:?}", o.query));
    }
    Ok(())
}

/// `½‖X‖²_F` of each view (valid views; `f32` cases: of the float values).
fn halves(vs: &[ViewData], single: bool) -> Vec<f64> {
    vs.iter()
        .map(|v| {
            let xs = stored(v);
            0.5 * xs
                .iter()
                .map(|&x| {
                    let x = if single { x as f32 as f64 } else { x };
                    x * x
                })
                .sum::<f64>()
        })
        .collect()
}

/// The weights of a JSNMF case: none (the default), ordinary, or anywhere in
/// `1e±range` (issue 31, E4: `λ = {1e308, 1e-308}`).
fn jsnmf_lambda(g: &mut G, ns: usize, bad: bool, range: i32) -> Option<Vec<f64>> {
    match g.below(3) {
        0 => None,
        1 => Some(
            (0..ns)
                .map(|_| {
                    if bad && g.one_in(6) {
                        -1.0
                    } else {
                        0.5 + g.f()
                    }
                })
                .collect(),
        ),
        _ => Some((0..ns).map(|_| g.decade(range)).collect()),
    }
}

/// JSNMF's magnitude rule (issue 31): `INPUT_TOO_LARGE` when some `½‖X_s‖²`
/// (or with the default weights `S·½‖X_1‖²`) is above `lim`, `BAD_PARAMETER`
/// when given weights make `Σ λ_s ½‖X_s‖²` so, or one `λ_s` is above `lim`
/// (judged on valid cases, up to the rounding of the sums).
fn check_jsnmf_magnitude(s: S, half: &[f64], lambda: Option<&[f64]>, lim: f64) -> R {
    let over = |x: f64, t: f64| x > lim * (1.0 + t);
    let data = |t: f64| half.iter().any(|&h| over(h, t));
    let weighted: f64 = match lambda {
        Some(l) => l.iter().zip(half).map(|(a, b)| a * b).sum(),
        None => half
            .iter()
            .map(|&h| if h > 0.0 && half[0] > 0.0 { half[0] } else { h })
            .sum(),
    };
    // A single weight above the bound is refused as well.
    let big = lambda.is_some_and(|l| l.iter().any(|&x| x > lim));
    let must = data(1e-9) || over(weighted, 1e-9) || big;
    let may = data(-1e-9) || over(weighted, -1e-9) || big;
    let want = if data(-1e-9) || lambda.is_none() {
        S::InputTooLarge
    } else {
        S::BadParameter
    };
    if (s == S::Ok || s == S::Cancelled) && must {
        return fail(format!("{s:?} with Σλ½‖X‖² = {weighted:e} (limit {lim:e})"));
    }
    if (s == S::InputTooLarge || (s == S::BadParameter && lambda.is_some())) && !may {
        return fail(format!("{s:?} with Σλ½‖X‖² = {weighted:e} (limit {lim:e})"));
    }
    if must && s != want && (s == S::InputTooLarge || s == S::BadParameter) && !data(1e-9) {
        return fail(format!("{s:?} where {want:?} is documented"));
    }
    Ok(())
}

/// JSNMF in single precision (issue 31, E4): sources at magnitudes `1e±40`
/// (a little apart), weights none, ordinary or in `1e±40`, random or given
/// starts. Checks: the status promises, `INPUT_TOO_LARGE` / `BAD_PARAMETER`
/// exactly per the documented rule (`2^103`), on OK finite factors and an
/// objective that never rises (at float's precision).
fn t_jsnmf_f32(g: &mut G, bad: bool) -> R {
    let ns = g.range(1, 3);
    let m = g.range(1, 7);
    let base = g.decade(40);
    // Subnormal float data too (issue 31, 0x7000ada: its products were formed
    // before the per-source scale and the objective rose).
    let floor = 1e-45;
    let mut vs: Vec<ViewData> = (0..ns)
        .map(|_| {
            let n = g.range(1, 9);
            let sc = (base * g.decade(2)).clamp(floor, 1e38);
            gen_view(g, m, n, sc)
        })
        .collect();
    MAGS.with(|mm| *mm.borrow_mut() = format!("{base:.0e} (f32)"));
    if bad && g.one_in(2) {
        let i = g.below(ns);
        corrupt_view(g, &mut vs[i]);
    }
    let k = g.range(0, 2);
    let ranks: Vec<usize> = (0..ns).map(|_| k.max(1) + g.below(3)).collect();
    let p = jsnmf_params(g, bad);
    let lam = jsnmf_lambda(g, ns, bad, 40);
    let fvals: Vec<Vec<f32>> = vs
        .iter()
        .map(|x| x.vals.iter().map(|&a| a as f32).collect())
        .collect();
    let cf = views_f32(&vs, &fvals);
    let need = query(|b| unsafe {
        mvnmf_jsnmf_fit_f32_workspace(cf.as_ptr(), ns, k, ranks.as_ptr(), &p, b)
    });
    let given = p.init == MVNMF_INIT_GIVEN;
    let mut w = as_f32(&start(g, m * k, given, 1.0));
    let mut us: Vec<Out> = ranks
        .iter()
        .map(|&r| as_f32(&start(g, m * (r - k), given, 1.0)))
        .collect();
    let mut hs: Vec<Out> = vs
        .iter()
        .zip(&ranks)
        .map(|(v, &r)| as_f32(&start(g, r * v.cols, given, 1.0)))
        .collect();
    let up: Vec<*mut f32> = us.iter_mut().map(|u| u.ptr()).collect();
    let hp: Vec<*mut f32> = hs.iter_mut().map(|h| h.ptr()).collect();
    let mut rep = Out::bytes(std::mem::size_of::<mvnmf_report>());
    let short = bad && g.one_in(3);
    let mut wk = Work::new(g, need, short);
    let mut mon = monitor(g, 0.0);
    let s = unsafe {
        mvnmf_jsnmf_fit_f32(
            cf.as_ptr(),
            ns,
            k,
            ranks.as_ptr(),
            lam.as_ref().map_or(null(), |l| l.as_ptr()),
            &p,
            w.ptr(),
            up.as_ptr(),
            hp.as_ptr(),
            wk.ptr(),
            wk.bytes,
            Some(progress),
            (&mut mon as *mut Mon).cast(),
            rep.ptr(),
        )
    };
    if std::env::var_os("MVNMF_FUZZ_TRACE").is_some() {
        eprintln!(
            "jsnmf f32 given {given} k {k} ranks {ranks:?} lam {lam:?} iters {} status {s:?}",
            p.max_iter
        );
    }
    let mut outs: Vec<(&str, &Out)> = vec![("w (f32)", &w), ("report", &rep)];
    outs.extend(us.iter().map(|u| ("u (f32)", u)));
    outs.extend(hs.iter().map(|h| ("h (f32)", h)));
    check_call(s, &outs, Some(&wk))?;
    // Float's precision: 1e-4 of the start's objective.
    mon.tol *= 1e6;
    check_mon(s, &mon)?;
    if s == S::Ok || s == S::Cancelled {
        for (name, o) in outs.iter().filter(|(n, _)| *n != "report") {
            if let Some(i) = f32s(o).iter().position(|x| !x.is_finite()) {
                return fail(format!("`{name}[{i}]` not finite with {s:?}"));
            }
        }
    }
    if !bad {
        check_jsnmf_magnitude(s, &halves(&vs, true), lam.as_deref(), 2f64.powi(103))?;
    }
    Ok(())
}

type Target = fn(&mut G, bool) -> R;

const TARGETS: &[(&str, Target)] = &[
    ("nmf_fit", t_nmf),
    ("joint_nmf_fit", t_joint),
    ("shallow_fit", t_shallow),
    ("deep_fit", t_deep),
    ("pipeline_fit", t_pipeline),
    ("mkl_weights", t_mkl),
    ("alignment_system", t_alignment),
    ("kernel_bandwidths", t_bandwidths),
    ("fused_knn", t_knn),
    ("ldge/tge", t_graph),
    ("simplex_qp", t_qp),
    ("eval", t_eval),
    ("jsnmf", t_jsnmf),
    ("jsnmf_fit_f32", t_jsnmf_f32),
    ("beta_nmf_fit", t_beta),
    ("mvel", t_mvel),
    ("eig/cca/fused_graph", t_linalg),
];

/// Targets whose workspace queries take every shape argument of their calls (views,
/// graph, rank; the calls add only buffers whose sizes those imply): there a call refused
/// for its shapes or descriptors after its query said OK is a query that checked less
/// than its call (issue 31, E8). Elsewhere a call takes shapes its query does not (a
/// split's class count, a query's item count) and [`t_query_dims`] checks the agreement.
const STRICT_TARGETS: &[&str] = &[
    "nmf_fit",
    "joint_nmf_fit",
    "shallow_fit",
    "deep_fit",
    "pipeline_fit",
];

/// Runs the case of `seed`: `Err((target, what))` on a broken promise.
fn run_case(seed: u64) -> Result<(), (&'static str, String)> {
    let mut g = G(seed);
    let (name, t) = TARGETS[g.below(TARGETS.len())];
    CURRENT.with(|c| *c.borrow_mut() = name);
    REFUSED.with(|r| *r.borrow_mut() = None);
    QUERY_OK.with(|q| q.set(false));
    STRICT.with(|t| t.set(STRICT_TARGETS.contains(&name)));
    MAGS.with(|m| m.borrow_mut().clear());
    let bad = g.one_in(3);
    t(&mut g, bad).map_err(|e| (name, e))
}

fn env_u64(name: &str) -> Option<u64> {
    let s = std::env::var(name).ok()?;
    let s = s.trim();
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

#[test]
fn fuzz_c_abi() {
    let iters = env_u64("MVNMF_FUZZ_ITERS").unwrap_or(DEFAULT_ITERS);
    let first = env_u64("MVNMF_FUZZ_SEED").unwrap_or(0x15_0000);
    let mut failures = vec![];
    let seeds = REGRESSION_SEEDS
        .iter()
        .copied()
        .chain((0..iters).map(|i| first.wrapping_add(i)));
    let t0 = std::time::Instant::now();
    let mut done = 0u64;
    let trace = std::env::var_os("MVNMF_FUZZ_TRACE").is_some();
    for seed in seeds {
        if trace {
            // Before the call: a crash leaves this as the last line.
            eprintln!("fuzz: case {seed:#x}");
        }
        if let Err((name, what)) = run_case(seed) {
            let mags = MAGS.with(|m| m.borrow().clone());
            println!("fuzz: {name}: {what} (views at {mags}); replay: MVNMF_FUZZ_SEED={seed:#x} MVNMF_FUZZ_ITERS=1");
            failures.push(seed);
            if failures.len() >= env_i32("MVNMF_FUZZ_MAX_FAILURES").unwrap_or(20) as usize {
                break;
            }
        }
        done += 1;
        if done.is_multiple_of(1_000_000) {
            println!("fuzz: {done} cases, {:.0} s", t0.elapsed().as_secs_f64());
        }
    }
    println!(
        "fuzz: {done} cases from seed {first:#x} in {:.1} s, {} failures",
        t0.elapsed().as_secs_f64(),
        failures.len()
    );
    // What the cases reached (cases whose workspace query refused never call the routine).
    TALLY.with(|t| {
        let t = t.borrow();
        let mut last = "";
        let mut line = String::new();
        for ((target, status), count) in t.iter() {
            if *target != last {
                if !line.is_empty() {
                    println!("{line}");
                }
                line = format!("fuzz:   {target}:");
                last = target;
            }
            line += &format!(" {status} {count}");
        }
        println!("{line}");
    });
    assert!(failures.is_empty(), "failing seeds: {failures:x?}");
}
