//! The arrays of per-view buffers a call takes from C as pointer arrays
//! (factors `u[v]`, JSNMF's per-source factors, β-NMF's masks), checked once
//! and read as [`Factors`] / [`FactorsMut`].

use super::*;

/// The factor buffers of a C pointer array: `M_v × K` each, or with `layers`
/// non-empty, a deep stack of `crate::models::deep::factor_len(M_v, layers)` values.
pub(crate) struct CFactors<'a, P, D = mvnmf_view> {
    ptrs: &'a [P],
    lens: &'a CViews<'a, D>,
    k: usize,
    layers: &'a [usize],
}

pub(crate) unsafe fn factors<'a, P: Copy, D: ViewDesc>(
    ptrs: *const P,
    views: &'a CViews<'a, D>,
    k: usize,
    layers: &'a [usize],
    is_null: impl Fn(P) -> bool,
) -> Result<CFactors<'a, P, D>, Error> {
    c_unsafe!({
        let ptrs = slice(ptrs, views.count())?;
        for (i, &p) in ptrs.iter().enumerate() {
            if is_null(p) {
                return Err(Error::NullPointer);
            }
            elems::<f64>(factor_len(views.shape(i).rows, k, layers)?, 1)?;
        }
        Ok(CFactors {
            ptrs,
            lens: views,
            k,
            layers,
        })
    })
}

/// Values of a factor of `rows` rows: `rows × k`, or with `layers` the deep stack's.
fn factor_len(rows: usize, k: usize, layers: &[usize]) -> Result<usize, Error> {
    if layers.is_empty() {
        rows.checked_mul(k).ok_or(Error::SizeOverflow)
    } else {
        crate::models::deep::factor_len(rows, layers)
    }
}

impl<P: Copy, D: ViewDesc> CFactors<'_, P, D> {
    fn len(&self, i: usize) -> usize {
        // Checked in `factors`.
        factor_len(self.lens.shape(i).rows, self.k, self.layers).unwrap_or(0)
    }
}

/// A C pointer to `T`, read-only or not: what [`CFactors`] reads through.
pub(crate) trait CPtr<T>: Copy {
    fn ptr(self) -> *const T;
}

impl<T> CPtr<T> for *const T {
    fn ptr(self) -> *const T {
        self
    }
}

impl<T> CPtr<T> for *mut T {
    fn ptr(self) -> *const T {
        self.cast_const()
    }
}

impl<T, P: CPtr<T>, D: ViewDesc<T = T>> Factors<T> for CFactors<'_, P, D> {
    fn count(&self) -> usize {
        self.ptrs.len()
    }
    fn get(&self, i: usize) -> &[T] {
        let Some(&p) = self.ptrs.get(i) else {
            return &[];
        };
        // SAFETY: non-NULL and size checked in `factors`; the caller promises
        // `M_v × K` values that no output or workspace overlaps.
        unsafe { core::slice::from_raw_parts(p.ptr(), self.len(i)) }
    }
}

impl<T, D: ViewDesc<T = T>> FactorsMut<T> for CFactors<'_, *mut T, D> {
    fn get_mut(&mut self, i: usize) -> &mut [T] {
        let Some(&p) = self.ptrs.get(i) else {
            return &mut [];
        };
        // SAFETY: as for `get`; `&mut self` makes this the only live borrow.
        unsafe { core::slice::from_raw_parts_mut(p, self.len(i)) }
    }
}

/// Per-view buffers from a C pointer array, buffer `i` of `len(i)` values
/// (JSNMF's per-source factors, β-NMF's masks).
pub(crate) struct CBufs<'a, P, L> {
    ptrs: &'a [P],
    len: L,
}

/// The `n` pointers at `ptrs` as [`CBufs`], each buffer checked: NULL is
/// refused where its length is not 0, unless `optional`, which also lets
/// `ptrs` itself be NULL (no buffers) and a NULL buffer stand for none.
pub(crate) unsafe fn bufs<'a, T, P: CPtr<T>, L: Fn(usize) -> usize>(
    ptrs: *const P,
    n: usize,
    len: L,
    optional: bool,
) -> Result<CBufs<'a, P, L>, Error> {
    c_unsafe!({
        if optional && ptrs.is_null() {
            return Ok(CBufs { ptrs: &[], len });
        }
        let ptrs = slice(ptrs, n)?;
        for (i, &p) in ptrs.iter().enumerate() {
            if !(optional && p.ptr().is_null()) {
                slice(p.ptr(), len(i))?;
            }
        }
        Ok(CBufs { ptrs, len })
    })
}

impl<P, L: Fn(usize) -> usize> CBufs<'_, P, L> {
    /// Buffer `i`'s pointer and length, `None` where it is NULL or empty.
    fn at<T>(&self, i: usize) -> Option<(P, usize)>
    where
        P: CPtr<T>,
    {
        let (&p, n) = (self.ptrs.get(i)?, (self.len)(i));
        (n > 0 && !p.ptr().is_null()).then_some((p, n))
    }
}

impl<T, P: CPtr<T>, L: Fn(usize) -> usize> Factors<T> for CBufs<'_, P, L> {
    fn count(&self) -> usize {
        self.ptrs.len()
    }
    fn get(&self, i: usize) -> &[T] {
        let Some((p, n)) = self.at(i) else {
            return &[];
        };
        // SAFETY: non-NULL and size checked in `bufs`; the caller promises
        // `len(i)` values that no other argument overlaps.
        unsafe { core::slice::from_raw_parts(p.ptr(), n) }
    }
}

impl<T, L: Fn(usize) -> usize> FactorsMut<T> for CBufs<'_, *mut T, L> {
    fn get_mut(&mut self, i: usize) -> &mut [T] {
        let Some((p, n)) = self.at(i) else {
            return &mut [];
        };
        // SAFETY: as for `get`; `&mut self` makes this the only live borrow.
        unsafe { core::slice::from_raw_parts_mut(p, n) }
    }
}

/// The masks of `mvnmf_beta_nmf_fit`: a NULL mask is a view fully observed.
impl<L: Fn(usize) -> usize> crate::models::beta::ViewMasks for CBufs<'_, *const u8, L> {
    fn count(&self) -> usize {
        self.ptrs.len()
    }
    fn mask(&self, i: usize) -> Option<&[u8]> {
        let p = *self.ptrs.get(i)?;
        (!p.is_null()).then(|| Factors::get(self, i))
    }
}

/// [`factors`] saying where: argument `pos` (1-based), and the view of a
/// NULL or oversized factor pointer.
pub(crate) unsafe fn factors_at<'a, P: Copy, D: ViewDesc>(
    ptrs: *const P,
    views: &'a CViews<'a, D>,
    k: usize,
    layers: &'a [usize],
    is_null: impl Fn(P) -> bool,
    pos: u32,
) -> Result<CFactors<'a, P, D>, Located> {
    c_unsafe!({
        let list = slice(ptrs, views.count()).arg(pos)?;
        if let Some(i) = list.iter().position(|&p| is_null(p)) {
            return Err(Located::new(Error::NullPointer, Where::view(i).or_arg(pos)));
        }
        factors(ptrs, views, k, layers, is_null).arg(pos)
    })
}
