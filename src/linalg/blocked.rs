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
        } = self;
        for jc in (0..n).step_by(nc) {
            let nb = nc.min(n - jc);
            for pc in (0..k).step_by(kc) {
                let kb = kc.min(k - pc);
                pack_b(b, pc, kb, jc, nb, bpack);
                for ic in (0..m).step_by(mc) {
                    let mb = mc.min(m - ic);
                    pack_a(a, ic, mb, pc, kb, apack);
                    for js in 0..nb.div_ceil(NR) {
                        let bs = &bpack[js * kb * NR..(js + 1) * kb * NR];
                        let ncols = NR.min(nb - js * NR);
                        for is in 0..mb.div_ceil(MR) {
                            let as_ = &apack[is * kb * MR..(is + 1) * kb * MR];
                            let acc = micro(as_, bs);
                            let nrows = MR.min(mb - is * MR);
                            let r0 = ic + is * MR;
                            for (jj, accj) in acc.iter().enumerate().take(ncols) {
                                let col = (jc + js * NR + jj) * ld + r0;
                                let dst = &mut cdata[col..col + nrows];
                                for (d, &v) in dst.iter_mut().zip(accj.iter()) {
                                    *d += alpha * v;
                                }
                            }
                        }
                    }
                }
            }
        }
    }
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

/// A block `a[ic..ic+mb, pc..pc+kb]` into `MR`-row slivers, `p`-major, zero-padded.
#[inline(always)]
fn pack_a<T: Real>(a: MatRef<'_, T>, ic: usize, mb: usize, pc: usize, kb: usize, out: &mut [T]) {
    for s in 0..mb.div_ceil(MR) {
        let r0 = ic + s * MR;
        let rows = MR.min(ic + mb - r0);
        let sl = &mut out[s * kb * MR..(s + 1) * kb * MR];
        for (p, dst) in sl.chunks_exact_mut(MR).enumerate() {
            for (i, d) in dst.iter_mut().enumerate() {
                *d = if i < rows {
                    a.at(r0 + i, pc + p)
                } else {
                    T::ZERO
                };
            }
        }
    }
}

/// A panel `b[pc..pc+kb, jc..jc+nb]` into `NR`-column slivers, `p`-major, zero-padded.
#[inline(always)]
fn pack_b<T: Real>(b: MatRef<'_, T>, pc: usize, kb: usize, jc: usize, nb: usize, out: &mut [T]) {
    for s in 0..nb.div_ceil(NR) {
        let c0 = jc + s * NR;
        let cols = NR.min(jc + nb - c0);
        let sl = &mut out[s * kb * NR..(s + 1) * kb * NR];
        for (p, dst) in sl.chunks_exact_mut(NR).enumerate() {
            for (j, d) in dst.iter_mut().enumerate() {
                *d = if j < cols {
                    b.at(pc + p, c0 + j)
                } else {
                    T::ZERO
                };
            }
        }
    }
}
