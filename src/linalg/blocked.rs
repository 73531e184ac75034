//! Allocation-free blocked GEMM (Goto/BLIS structure) on workspace panels.
//!
//! Loops: `jc` over columns of C in blocks of `NC`, `pc` over the inner
//! dimension in blocks of `KC` (B panel packed once, `KC × NC`, in `NR`-wide
//! slivers), `ic` over rows in blocks of `MC` (A block packed, `MC × KC`, in
//! `MR`-tall slivers), then an `MR × NR` register tile per sliver pair: the
//! portable `8 × 4` tile, or on x86-64 with AVX2 + FMA / AVX-512F the FMA
//! tiles of `linalg::microk` (`12 × 4` / `24 × 8`), which also read
//! column-major operands in place (only their edge slivers are packed).
//! Packing zero-pads the edges; the tile is added to C with bounds. Any
//! strides are accepted (transposes are free). Each level sums every product
//! in the same order for the same inputs (deterministic); the levels differ in
//! rounding (fused or separate multiply-adds).

use crate::error::Error;
use crate::linalg::mat::{MatMut, MatRef};
use crate::linalg::microk::{AvxTile, MR_MAX, NR_MAX};
use crate::linalg::real::Real;
use crate::linalg::simd::{self, Kernel};
use crate::work::{Stack, WorkReq};

/// The portable tile, rows × columns (the AVX tiles: `linalg::microk`).
pub(crate) const MR: usize = 8;
/// See [`MR`].
pub(crate) const NR: usize = 4;
const KC: usize = 256;
/// The inner block when B is read in place (see [`Blocked::nest`]).
const KC_DIRECT: usize = 1024;
/// A multiple of every level's tile height (8, 12 and 24 rows).
const MC: usize = 144;
const NC: usize = 2048;

/// `x` rounded up to a multiple of `m`, saturating at the largest multiple
/// (a block size is then capped by its constant anyway: a workspace query with
/// a dimension near `usize::MAX` must not wrap, nor panic in a debug build).
fn round_up(x: usize, m: usize) -> usize {
    x.div_ceil(m).saturating_mul(m)
}

/// Block sizes, padded for the largest tile of any level (the workspace does
/// not depend on the level).
fn blocks(m: usize, n: usize, k: usize) -> (usize, usize, usize) {
    (
        MC.min(round_up(m, MR_MAX)),
        NC.min(round_up(n, NR_MAX)),
        KC.min(k),
    )
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
    // The AVX tiles are written for `f64`; other types run the portable one.
    let tile = T::as_f64s(&[]).and_then(|_| AvxTile::new());
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
        tile,
    });
    Ok(())
}

/// The loop nest of [`gemm()`] after the checks, as a [`Kernel`]: run under the
/// widest instruction set the CPU has (`simd::dispatch`), with that level's
/// tile (`24 × 8` FMA on AVX-512, `12 × 4` FMA on AVX2, else the portable
/// `8 × 4`).
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
    /// The AVX tile (`f64` on AVX2/AVX-512 CPUs).
    tile: Option<AvxTile>,
}

impl<T: Real> Kernel for Blocked<'_, '_, T> {
    type Out = ();
    #[inline(always)]
    fn run(self) {
        match self.tile {
            Some(t) if t.is_512() => self.nest::<24, 8>(),
            Some(_) => self.nest::<12, 4>(),
            None => self.nest::<MR, NR>(),
        }
    }
}

impl<T: Real> Blocked<'_, '_, T> {
    /// The loops for an `R × C` tile.
    #[inline(always)]
    fn nest<const R: usize, const C: usize>(self) {
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
        // Nonzero by `blocks` (for nonempty products); `max(1)` lets the
        // compiler see it (no division by zero, no `step_by(0)`).
        let (mc, nc, kc) = (mc.max(1), nc.max(1), kc.max(1));
        // With the AVX tile, column-major operands are read in place: full
        // slivers of A (`R` adjacent rows) and of B (`C` columns) are not
        // packed, only the edge slivers are.
        let in_place =
            |x: MatRef<'_, T>| tile.is_some() && x.rs() == 1 && T::as_f64s(x.data()).is_some();
        let (direct_a, direct_b) = (in_place(a), in_place(b));
        // B read in place: its panel buffer holds one edge sliver at most, so
        // the larger of the two buffers takes the A block and the inner
        // dimension goes in longer blocks (up to `KC_DIRECT`): longer runs of
        // each column of B for the hardware prefetcher, fewer passes over C.
        let (apack, bpack, kc) = if direct_b {
            let (x, y) = if bpack.len() > apack.len() {
                (bpack, apack)
            } else {
                (apack, bpack)
            };
            let kc2 = k.min(KC_DIRECT).min(x.len() / mc).min(y.len() / C).max(1);
            (x, y, kc2)
        } else {
            (apack, bpack, kc)
        };
        for jc in (0..n).step_by(nc) {
            let nb = nc.min(n - jc);
            let full_b = if direct_b { nb / C } else { 0 };
            for pc in (0..k).step_by(kc) {
                let kb = kc.min(k - pc);
                pack::<T, C>(
                    b.t(),
                    (jc + full_b * C, nb - full_b * C),
                    (pc, kb),
                    bpack,
                    tile,
                );
                for ic in (0..m).step_by(mc) {
                    let mb = mc.min(m - ic);
                    let full_a = if direct_a { mb / R } else { 0 };
                    pack::<T, R>(a, (ic + full_a * R, mb - full_a * R), (pc, kb), apack, tile);
                    let blk = Block::<T, R, C> {
                        a,
                        b,
                        apack,
                        bpack,
                        tile,
                        at: (ic, jc, pc),
                        size: (mb, nb, kb),
                        full: (full_a, full_b),
                    };
                    let (ms, ns) = (mb.div_ceil(R), nb.div_ceil(C));
                    // A read in place and B packed (X·Vᵀ): each A sliver (`R`
                    // rows, `kb` columns far apart) is read from memory once
                    // while the packed B panel (in L2) streams past; else the
                    // usual order, a B sliver in L1 and the A block in L2.
                    // (Software prefetching of the next sliver, of A or of B,
                    // was measured slower: the hardware streams the columns.)
                    if direct_a && !direct_b {
                        for is in 0..ms {
                            for js in 0..ns {
                                blk.one(js, is, cdata, ld, alpha);
                            }
                        }
                    } else {
                        for js in 0..ns {
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

/// One `(ic, jc, pc)` block of [`Blocked`] for an `R × C` tile: the operands,
/// packed or in place (`full` slivers of A and of B read in place, the rest
/// packed). Methods, not closures: a closure is compiled without the target
/// features of the function around it, and the AVX tile could not be inlined
/// into it.
struct Block<'x, T, const R: usize, const C: usize> {
    a: MatRef<'x, T>,
    b: MatRef<'x, T>,
    apack: &'x [T],
    bpack: &'x [T],
    tile: Option<AvxTile>,
    at: (usize, usize, usize),
    size: (usize, usize, usize),
    full: (usize, usize),
}

impl<'x, T: Real, const R: usize, const C: usize> Block<'x, T, R, C> {
    /// Sliver `is` of A: `(values, lda)`.
    #[inline(always)]
    fn a_of(&self, is: usize) -> (&'x [T], usize) {
        let ((ic, _, pc), (_, _, kb)) = (self.at, self.size);
        if is < self.full.0 {
            let at = ic + is * R + pc * self.a.cs();
            (self.a.data().get(at..).unwrap_or(&[]), self.a.cs())
        } else {
            let s = is - self.full.0;
            let sliver = self.apack.get(s * kb * R..(s + 1) * kb * R);
            (sliver.unwrap_or_default(), R)
        }
    }

    /// Sliver `js` of B: `(values, (step in p, step in j))`.
    #[inline(always)]
    fn b_of(&self, js: usize) -> (&'x [T], (usize, usize)) {
        let ((_, jc, pc), (_, _, kb)) = (self.at, self.size);
        if js < self.full.1 {
            let at = pc + (jc + js * C) * self.b.cs();
            (self.b.data().get(at..).unwrap_or(&[]), (1, self.b.cs()))
        } else {
            let s = js - self.full.1;
            let sliver = self.bpack.get(s * kb * C..(s + 1) * kb * C);
            (sliver.unwrap_or_default(), (C, 1))
        }
    }

    /// `C[tile (is, js)] += α · A_is B_js`.
    #[inline(always)]
    fn one(&self, js: usize, is: usize, cdata: &mut [T], ld: usize, alpha: T) {
        let ((ic, jc, _), (mb, nb, kb)) = (self.at, self.size);
        let (r0, c0) = (ic + is * R, jc + js * C);
        let (nrows, ncols) = (R.min(mb - is * R), C.min(nb - js * C));
        let (a, b) = (self.a_of(is), self.b_of(js));
        if let Some(t) = self.tile {
            let dst = cdata.get_mut(r0 + c0 * ld..).and_then(T::as_f64s_mut);
            if let (Some(a64), Some(b64), Some(c64)) = (T::as_f64s(a.0), T::as_f64s(b.0), dst) {
                let done = t.tile_add(
                    (a64, a.1),
                    (b64, b.1),
                    kb,
                    (c64, ld),
                    (nrows, ncols),
                    alpha.to_f64(),
                );
                if done {
                    return;
                }
            }
        }
        let acc = tile_of::<T, R, C>(a, b, kb);
        for (jj, accj) in acc.iter().enumerate().take(ncols) {
            let col = (c0 + jj) * ld + r0;
            let Some(dst) = cdata.get_mut(col..col + nrows) else {
                return;
            };
            for (d, &v) in dst.iter_mut().zip(accj.iter()) {
                *d += alpha * v;
            }
        }
    }
}

/// The portable register tile of `a` (`(values, lda)`: `a(p, i) =
/// values[p·lda + i]`) and `b` (`b(p, j) = values[p·ldb.0 + j·ldb.1]`):
/// [`micro`] on packed slivers (`lda = R`, `ldb = (C, 1)`), else (operands in
/// place that the AVX tile refused — not reached: `MatRef` guarantees their
/// bounds — or a sliver shorter than `kb` steps, which the workspace sizes
/// exclude) [`micro_strided`]. Both give the same bits.
#[inline(always)]
fn tile_of<T: Real, const R: usize, const C: usize>(
    (a, lda): (&[T], usize),
    (b, ldb): (&[T], (usize, usize)),
    kb: usize,
) -> [[T; R]; C] {
    match (a.get(..kb * R), b.get(..kb * C)) {
        (Some(ap), Some(bp)) if lda == R && ldb == (C, 1) => micro::<T, R, C>(ap, bp),
        _ => micro_strided::<T, R, C>((a, lda), (b, ldb), kb),
    }
}

/// [`micro`] on strided operands, element by element (values outside the
/// slices read as zero).
fn micro_strided<T: Real, const R: usize, const C: usize>(
    (a, lda): (&[T], usize),
    (b, (ldb_p, ldb_j)): (&[T], (usize, usize)),
    kb: usize,
) -> [[T; R]; C] {
    let at = |s: &[T], i: usize| s.get(i).copied().unwrap_or(T::ZERO);
    let mut acc = [[T::ZERO; R]; C];
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

/// The portable register tile: `acc[j][i] = Σ_p a[p][i] · b[p][j]` (a
/// multiply, a rounding, an add).
#[inline(always)]
fn micro<T: Real, const R: usize, const C: usize>(a: &[T], b: &[T]) -> [[T; R]; C] {
    let mut acc = [[T::ZERO; R]; C];
    for (ap, bp) in a.chunks_exact(R).zip(b.chunks_exact(C)) {
        for j in 0..C {
            let bj = bp[j];
            for i in 0..R {
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
/// one bounds check per slice instead of one per value; row-contiguous `f64`
/// slivers go through the AVX-512 transposing pack when there is one
/// (`tile`); every path writes the same values.
#[inline(always)]
fn pack<T: Real, const W: usize>(
    m: MatRef<'_, T>,
    (i0, ni): (usize, usize),
    (p0, kb): (usize, usize),
    out: &mut [T],
    tile: Option<AvxTile>,
) {
    let (data, rs, cs) = (m.data(), m.rs(), m.cs());
    for s in 0..ni.div_ceil(W) {
        let r0 = i0 + s * W;
        let rows = W.min(i0 + ni - r0);
        let Some(sl) = out.get_mut(s * kb * W..(s + 1) * kb * W) else {
            return;
        };
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
                    None => fill_general(m, r0, p0 + p, dst.get_mut(..rows).unwrap_or_default()),
                }
                for d in dst.iter_mut().skip(rows) {
                    *d = T::ZERO;
                }
            }
        } else if cs == 1 {
            // Row-contiguous: columns p0.. of row r0 + i are adjacent.
            if let (Some(t), Some(d64)) = (tile, T::as_f64s(data)) {
                if let Some(o64) = T::as_f64s_mut(sl) {
                    if t.pack_rows((d64, r0 * rs + p0, rs), (rows, kb), W, o64) {
                        continue;
                    }
                }
            }
            for i in 0..W {
                let at = (r0 + i) * rs + p0;
                match data.get(at..at + kb) {
                    Some(src) if i < rows => {
                        for (dst, &v) in sl.chunks_exact_mut(W).zip(src) {
                            if let Some(d) = dst.get_mut(i) {
                                *d = v;
                            }
                        }
                    }
                    _ => {
                        for (p, d) in sl
                            .chunks_exact_mut(W)
                            .filter_map(|c| c.get_mut(i))
                            .enumerate()
                        {
                            *d = if i < rows {
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
                fill_general(m, r0, p0 + p, dst.get_mut(..rows).unwrap_or_default());
                for d in dst.iter_mut().skip(rows) {
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
