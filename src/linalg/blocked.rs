//! Allocation-free blocked GEMM (Goto/BLIS structure) on workspace panels.
//!
//! Loops: `jc` over columns of C in blocks of `NC`, `pc` over the inner
//! dimension in blocks of `KC` (B panel packed once, `KC × NC`, in `NR`-wide
//! slivers), `ic` over rows in blocks of `MC` (A block packed, `MC × KC`, in
//! `MR`-tall slivers), then an `MR × NR` register tile per sliver pair. Packing
//! zero-pads the edges, so the micro-kernel has no edge cases; the tile is
//! added to C with bounds. Any strides are accepted (transposes are free).

use crate::error::Error;
use crate::linalg::mat::{MatMut, MatRef};
use crate::linalg::microk::AvxTile;
use crate::linalg::real::Real;
use crate::linalg::simd::{self, Kernel};
use crate::work::{Stack, WorkReq};

pub(crate) const MR: usize = 8;
pub(crate) const NR: usize = 4;
const KC: usize = 256;
const MC: usize = 128;
const NC: usize = 2048;

fn round_up(x: usize, m: usize) -> usize {
    x.div_ceil(m) * m
}

fn blocks(m: usize, n: usize, k: usize) -> (usize, usize, usize) {
    (MC.min(round_up(m, MR)), NC.min(round_up(n, NR)), KC.min(k))
}

/// Workspace: one packed A block and one packed B panel.
pub(crate) fn workspace<T>(m: usize, n: usize, k: usize) -> WorkReq {
    if m == 0 || n == 0 || k == 0 {
        return WorkReq::EMPTY;
    }
    let (mc, nc, kc) = blocks(m, n, k);
    WorkReq::all_of(&[WorkReq::matrix::<T>(mc, kc), WorkReq::matrix::<T>(kc, nc)])
}

/// `C ← α·A·B + β·C` (`β = 0`: C not read).
pub(crate) fn gemm<T: Real>(
    alpha: T,
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    beta: T,
    mut c: MatMut<'_, T>,
    st: &mut Stack<'_>,
) -> Result<(), Error> {
    let (m, n, k) = (c.rows(), c.cols(), a.cols());
    if a.rows() != m || b.cols() != n || b.rows() != k {
        return Err(Error::Internal);
    }
    super::scale(beta, &mut c);
    if m == 0 || n == 0 || k == 0 || alpha == T::ZERO {
        return Ok(());
    }
    let (mc, nc, kc) = blocks(m, n, k);
    let mut st = st.rest();
    let apack: &mut [T] = st.take_matrix(mc, kc)?;
    let bpack: &mut [T] = st.take_matrix(kc, nc)?;
    let ld = c.ld();
    simd::dispatch(Blocked {
        alpha,
        a,
        b,
        c: c.data_mut(),
        ld,
        dims: (m, n, k),
        blocks: (mc, nc, kc),
        apack,
        bpack,
        tile: AvxTile::new(),
    });
    Ok(())
}

/// The loop nest of [`gemm()`] after the checks, as a [`Kernel`]: run under the
/// widest instruction set the CPU has (`simd::dispatch`; no FMA contraction,
/// so every level gives the same bits).
struct Blocked<'a, 'm, T> {
    alpha: T,
    a: MatRef<'m, T>,
    b: MatRef<'m, T>,
    c: &'a mut [T],
    ld: usize,
    dims: (usize, usize, usize),
    blocks: (usize, usize, usize),
    apack: &'a mut [T],
    bpack: &'a mut [T],
    /// The AVX tile (`f64` on AVX2/AVX-512 CPUs; same bits as [`micro`]).
    tile: Option<AvxTile>,
}

impl<T: Real> Kernel for Blocked<'_, '_, T> {
    type Out = ();
    #[inline(always)]
    fn run(self) {
        let Blocked {
            alpha,
            a,
            b,
            c: cdata,
            ld,
            dims: (m, n, k),
            blocks: (mc, nc, kc),
            apack,
            bpack,
            tile,
        } = self;
        // With the AVX tile, column-major operands are read in place: full
        // slivers of A (8 adjacent rows) and of B (4 columns) are not packed,
        // only the edge slivers are. Same products in the same order: same bits.
        let in_place =
            |x: MatRef<'_, T>| tile.is_some() && x.rs() == 1 && T::as_f64s(x.data()).is_some();
        let (direct_a, direct_b) = (in_place(a), in_place(b));
        for jc in (0..n).step_by(nc) {
            let nb = nc.min(n - jc);
            let full_b = if direct_b { nb / NR } else { 0 };
            for pc in (0..k).step_by(kc) {
                let kb = kc.min(k - pc);
                let rest = &mut bpack[full_b * kb * NR..];
                pack::<T, NR>(b.t(), (jc + full_b * NR, nb - full_b * NR), (pc, kb), rest);
                for ic in (0..m).step_by(mc) {
                    let mb = mc.min(m - ic);
                    let full_a = if direct_a { mb / MR } else { 0 };
                    let rest = &mut apack[full_a * kb * MR..];
                    pack::<T, MR>(a, (ic + full_a * MR, mb - full_a * MR), (pc, kb), rest);
                    let blk = Block {
                        a,
                        b,
                        apack,
                        bpack,
                        tile,
                        at: (ic, jc, pc),
                        size: (mb, nb, kb),
                        full: (full_a, full_b),
                    };
                    let (ms, ns) = (mb.div_ceil(MR), nb.div_ceil(NR));
                    // A read in place and B packed (X·Vᵀ): each A sliver (8
                    // rows, `kb` columns far apart) stays in L1 while the B
                    // panel streams past; else the usual order, a B sliver in
                    // L1 (with the next one prefetched when B is read in place).
                    if direct_a && !direct_b {
                        for is in 0..ms {
                            for js in 0..ns {
                                blk.one(js, is, cdata, ld, alpha);
                            }
                        }
                    } else {
                        for js in 0..ns {
                            if let (Some(t), Some(b64)) = (blk.tile, T::as_f64s(b.data())) {
                                if js + 1 < full_b {
                                    let next = pc + (jc + (js + 1) * NR) * b.cs();
                                    t.prefetch(b64, next, b.cs(), kb);
                                }
                            }
                            for is in 0..ms {
                                blk.one(js, is, cdata, ld, alpha);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// One `(ic, jc, pc)` block of [`Blocked`]: the operands, packed or in place
/// (`full` slivers of A and of B read in place, the rest packed). Methods, not
/// closures: a closure is compiled without the target features of the
/// function around it, and the AVX tile could not be inlined into it.
struct Block<'x, T> {
    a: MatRef<'x, T>,
    b: MatRef<'x, T>,
    apack: &'x [T],
    bpack: &'x [T],
    tile: Option<AvxTile>,
    at: (usize, usize, usize),
    size: (usize, usize, usize),
    full: (usize, usize),
}

impl<'x, T: Real> Block<'x, T> {
    /// Sliver `is` of A: `(values, lda)`.
    #[inline(always)]
    fn a_of(&self, is: usize) -> (&'x [T], usize) {
        let ((ic, _, pc), (_, _, kb)) = (self.at, self.size);
        if is < self.full.0 {
            let at = ic + is * MR + pc * self.a.cs();
            (self.a.data().get(at..).unwrap_or(&[]), self.a.cs())
        } else {
            (&self.apack[is * kb * MR..(is + 1) * kb * MR], MR)
        }
    }

    /// Sliver `js` of B: `(values, (step in p, step in j))`.
    #[inline(always)]
    fn b_of(&self, js: usize) -> (&'x [T], (usize, usize)) {
        let ((_, jc, pc), (_, _, kb)) = (self.at, self.size);
        if js < self.full.1 {
            let at = pc + (jc + js * NR) * self.b.cs();
            (self.b.data().get(at..).unwrap_or(&[]), (1, self.b.cs()))
        } else {
            (&self.bpack[js * kb * NR..(js + 1) * kb * NR], (NR, 1))
        }
    }

    /// `C[tile (is, js)] += α · A_is B_js`.
    #[inline(always)]
    fn one(&self, js: usize, is: usize, cdata: &mut [T], ld: usize, alpha: T) {
        let ((ic, jc, _), (mb, nb, kb)) = (self.at, self.size);
        let acc = tile_of(self.tile, self.a_of(is), self.b_of(js), kb);
        let r0 = ic + is * MR;
        let (nrows, ncols) = (MR.min(mb - is * MR), NR.min(nb - js * NR));
        for (jj, accj) in acc.iter().enumerate().take(ncols) {
            let col = (jc + js * NR + jj) * ld + r0;
            let dst = &mut cdata[col..col + nrows];
            for (d, &v) in dst.iter_mut().zip(accj.iter()) {
                *d += alpha * v;
            }
        }
    }
}

/// The register tile of `a` (`(values, lda)`: `a(p, i) = values[p·lda + i]`)
/// and `b` (`b(p, j) = values[p·ldb.0 + j·ldb.1]`): the AVX one
/// (`linalg::microk`) when there is one for `T` and this CPU, else [`micro`]
/// on packed slivers (`lda = MR`, `ldb = (NR, 1)`), else (operands in place
/// whose bounds the AVX tile refused — not reached: `MatRef` guarantees them)
/// [`micro_strided`]. All three give the same bits.
#[inline(always)]
fn tile_of<T: Real>(
    tile: Option<AvxTile>,
    (a, lda): (&[T], usize),
    (b, ldb): (&[T], (usize, usize)),
    kb: usize,
) -> [[T; MR]; NR] {
    if let (Some(t), Some(a64), Some(b64)) = (tile, T::as_f64s(a), T::as_f64s(b)) {
        if let Some(acc) = t.tile((a64, lda), (b64, ldb), kb) {
            return acc.map(|col| col.map(T::from_f64));
        }
    }
    if lda == MR && ldb == (NR, 1) {
        micro(&a[..kb * MR], &b[..kb * NR])
    } else {
        micro_strided((a, lda), (b, ldb), kb)
    }
}

/// [`micro`] on strided operands, element by element (values outside the
/// slices read as zero).
fn micro_strided<T: Real>(
    (a, lda): (&[T], usize),
    (b, (ldb_p, ldb_j)): (&[T], (usize, usize)),
    kb: usize,
) -> [[T; MR]; NR] {
    let at = |s: &[T], i: usize| s.get(i).copied().unwrap_or(T::ZERO);
    let mut acc = [[T::ZERO; MR]; NR];
    for p in 0..kb {
        for (j, accj) in acc.iter_mut().enumerate() {
            let bj = at(b, p * ldb_p + j * ldb_j);
            for (i, x) in accj.iter_mut().enumerate() {
                *x += at(a, p * lda + i) * bj;
            }
        }
    }
    acc
}

/// The register tile: `acc[j][i] = Σ_p a[p][i] · b[p][j]`.
#[inline(always)]
fn micro<T: Real>(a: &[T], b: &[T]) -> [[T; MR]; NR] {
    let mut acc = [[T::ZERO; MR]; NR];
    for (ap, bp) in a.chunks_exact(MR).zip(b.chunks_exact(NR)) {
        for j in 0..NR {
            let bj = bp[j];
            for i in 0..MR {
                acc[j][i] += ap[i] * bj;
            }
        }
    }
    acc
}

/// Rows `i0..i0+ni` and columns `p0..p0+kb` of `m` into `W`-row slivers: sliver
/// `s` holds rows `i0 + W·s ..`, and its value `(i, p)` goes to
/// `out[s·kb·W + p·W + i]` (rows past the block are zeros). Unit strides take
/// slices of `W` (column-contiguous) or `kb` (row-contiguous) values at once,
/// one bounds check per slice instead of one per value; every path writes
/// the same values.
#[inline(always)]
fn pack<T: Real, const W: usize>(
    m: MatRef<'_, T>,
    (i0, ni): (usize, usize),
    (p0, kb): (usize, usize),
    out: &mut [T],
) {
    let (data, rs, cs) = (m.data(), m.rs(), m.cs());
    for s in 0..ni.div_ceil(W) {
        let r0 = i0 + s * W;
        let rows = W.min(i0 + ni - r0);
        let sl = &mut out[s * kb * W..(s + 1) * kb * W];
        if rs == 1 {
            // Column-contiguous: rows r0.. of column p0 + p are adjacent.
            for (p, dst) in sl.chunks_exact_mut(W).enumerate() {
                let at = r0 + (p0 + p) * cs;
                match data.get(at..at + rows) {
                    // An element loop, not `copy_from_slice`: a call to
                    // memmove for 8 values cost 11 % of the dense NMF.
                    Some(src) => {
                        for (d, &v) in dst.iter_mut().zip(src) {
                            *d = v;
                        }
                    }
                    None => fill_general(m, r0, p0 + p, &mut dst[..rows]),
                }
                for d in &mut dst[rows..] {
                    *d = T::ZERO;
                }
            }
        } else if cs == 1 {
            // Row-contiguous: columns p0.. of row r0 + i are adjacent.
            for i in 0..W {
                let at = (r0 + i) * rs + p0;
                match data.get(at..at + kb) {
                    Some(src) if i < rows => {
                        for (dst, &v) in sl.chunks_exact_mut(W).zip(src) {
                            dst[i] = v;
                        }
                    }
                    _ => {
                        for (p, dst) in sl.chunks_exact_mut(W).enumerate() {
                            dst[i] = if i < rows {
                                m.at(r0 + i, p0 + p)
                            } else {
                                T::ZERO
                            };
                        }
                    }
                }
            }
        } else {
            for (p, dst) in sl.chunks_exact_mut(W).enumerate() {
                fill_general(m, r0, p0 + p, &mut dst[..rows]);
                for d in &mut dst[rows..] {
                    *d = T::ZERO;
                }
            }
        }
    }
}

/// `dst[i] = m(r0 + i, col)` for `i < dst.len()`, element by element.
#[inline(always)]
fn fill_general<T: Real>(m: MatRef<'_, T>, r0: usize, col: usize, dst: &mut [T]) {
    for (i, d) in dst.iter_mut().enumerate() {
        *d = m.at(r0 + i, col);
    }
}
