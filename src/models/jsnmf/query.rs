//! Retrieval with a learned JSNMF model (seed 004, Algorithm 2; DESIGN §7).
//!
//! A query is a term vector `q ≥ 0` over the `M` terms of the vocabulary: a
//! keyword query (weight 1 on each of its words: one CSC column with those
//! row indices), a document of any source (query by example), or a new item
//! of a source (out-of-sample encoding). Three steps, each a function:
//!
//! 1. [`encode`]: `h = argmin_{h ≥ 0} ½‖F h − q‖²` against the basis
//!    `F = [W | U_s]` of one source (the target, `s = 1`, for retrieval), by
//!    the guarded multiplicative update `h ← h ∘ (Fᵀq + δ) ⊘ (FᵀF h + δ)`
//!    (DESIGN §3: `‖F h − q‖²` never increases), **per query**, stopping when
//!    the query's objective improves by at most `tol` relative to its previous
//!    value (or after `max_iter` updates).
//! 2. [`rank`]: cosine similarity of each query's `h` with every column of
//!    the target's `H` (a zero column or a zero `h` scores 0), and the top `N`
//!    indices and scores by partial selection (`O(N_items log N)`, no full
//!    sort), best first, ties by lower index. One item per query may be
//!    excluded (query by example over the target: the query item itself).
//! 3. [`query`]: both, for a batch of queries in one call and one workspace.
//!
//! **Start** (a choice; the paper does not give one): `h₀ = c·1` with
//! `c = ⟨F1, q⟩ / ‖F1‖²`, the best constant vector — deterministic, positive
//! whenever `q` meets the bases' support, and the same for a query alone or
//! in a batch.
//!
//! **Determinism.** Every query is encoded and ranked on its own (its
//! iterations do not depend on the other queries of the batch), so a batch
//! returns the same bits as the queries one by one.
//!
//! **Cost.** Encoding a batch `Q` (`M × n_q`): `FᵀF` once (`M R²`), `FᵀQ` once
//! (dense `2 M R n_q` flops, CSC `O(nnz·R)`), then `2R²` flops per query and
//! update. Ranking: `2 R N_items` flops per query plus the selection.

use crate::data::{check_values, ut_x_req, View, ViewShape};
use crate::error::{Error, Part};
use crate::linalg::mat::{MatMut, MatRef};
use crate::linalg::real::Real;
use crate::linalg::select::top_n_by;
use crate::linalg::{dot, gemm, gemm_req, sq_norm};
use crate::steps::mu::mu_step;
use crate::work::{Stack, WorkReq};

/// Options of query encoding ([`encode`], [`query`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueryParams {
    /// Multiplicative updates per query at most (default 100; 0 keeps the start).
    pub max_iter: u32,
    /// Stop a query when `‖F h − q‖²` improves by at most `tol` times its
    /// previous value (default 1e-4; 0 runs all `max_iter` updates).
    pub tol: f64,
    /// Division guard `δ ≥ 0` (default `f64::EPSILON`).
    pub eps: f64,
}

impl Default for QueryParams {
    fn default() -> Self {
        QueryParams {
            max_iter: 100,
            tol: 1e-4,
            eps: f64::EPSILON,
        }
    }
}

impl QueryParams {
    /// [`Error::BadParameter`] unless `tol` and `eps` are finite and `≥ 0`.
    pub fn validate(&self) -> Result<(), Error> {
        let ok = |x: f64| x.is_finite() && x >= 0.0;
        if ok(self.tol) && ok(self.eps) {
            Ok(())
        } else {
            Err(Error::BadParameter)
        }
    }
}

/// The model's dimensions for one source's basis `F = [W | U_s]`: `m` terms,
/// `k` shared, `r ≥ max(k, 1)` in all.
fn check_basis<T: Real>(w: &[T], u: &[T], m: usize, k: usize, r: usize) -> Result<(), Error> {
    if m == 0 {
        return Err(Error::ZeroDimension);
    }
    if r == 0 || r < k {
        return Err(Error::BadRank);
    }
    let wl = m.checked_mul(k).ok_or(Error::SizeOverflow)?;
    let ul = m.checked_mul(r - k).ok_or(Error::SizeOverflow)?;
    if w.len() != wl || u.len() != ul {
        return Err(Error::DimensionMismatch);
    }
    Ok(())
}

fn encode_req<T>(queries: ViewShape, r: usize) -> Result<WorkReq, Error> {
    let (m, nq) = (queries.rows, queries.cols);
    if m == 0 || nq == 0 {
        return Err(Error::ZeroDimension);
    }
    if r == 0 {
        return Err(Error::BadRank);
    }
    Ok(WorkReq::all_of(&[
        WorkReq::matrix::<T>(m, r),  // F
        WorkReq::matrix::<T>(r, r),  // FᵀF
        WorkReq::matrix::<T>(r, nq), // FᵀQ
        WorkReq::new::<T>(r),        // FᵀF h
        gemm_req::<T>(r, r, m).or(ut_x_req::<T>(queries, r)),
    ]))
}

/// Workspace bytes of [`encode`] for `queries` of this shape and a basis of
/// `r` columns.
pub fn encode_workspace<T>(
    queries: ViewShape,
    r: usize,
    params: &QueryParams,
) -> Result<usize, Error> {
    params.validate()?;
    encode_req::<T>(queries, r)?.bytes()
}

/// Encodes every column of `queries` (`M × n_q`, dense or CSC, finite, `≥ 0`,
/// none all zero) against `F = [W | U_s]`: `w` is `M × k`, `u` is
/// `M × (r − k)` (column-major, finite, `≥ 0`); writes `h` (`r × n_q`).
/// Module docs: the update, its stopping rule, start and cost.
///
/// Errors, before anything is written: shapes ([`Error::DimensionMismatch`],
/// [`Error::ZeroDimension`], [`Error::BadRank`]), values
/// ([`Error::NonFiniteInput`], [`Error::NegativeInput`]), an all-zero query
/// ([`Error::EmptyQuery`]), a short workspace ([`Error::WorkspaceTooSmall`]).
///
/// ```
/// use mvnmf::models::jsnmf::{self, QueryParams};
/// use mvnmf::{Dense, View};
///
/// // F = [W | U_s] over 4 terms: two shared vectors (W) and one of the source (U_s).
/// let (m, k, r) = (4, 2, 3);
/// let w = [1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0];
/// let u = [0.0, 1.0, 1.0, 0.0];
/// // Two queries made of F with codes (2, 1, 0.5) and (1, 0.5, 1).
/// let q = [2.0, 2.5, 1.5, 1.0, 1.0, 2.0, 1.5, 0.5];
/// let queries = View::from(Dense::new(&q, m, 2, m)?);
/// let params = QueryParams { max_iter: 2000, tol: 0.0, ..QueryParams::default() };
/// let mut work = vec![0u8; jsnmf::encode_workspace::<f64>(queries.shape(), r, &params)?];
/// let mut h = vec![0.0; r * 2];
/// jsnmf::encode(&w, &u, k, r, &queries, &params, &mut h, &mut work)?;
/// assert!(h.iter().zip([2.0f64, 1.0, 0.5, 1.0, 0.5, 1.0]).all(|(a, b)| (a - b).abs() < 1e-2));
/// # Ok::<(), mvnmf::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn encode<T: Real>(
    w: &[T],
    u: &[T],
    k: usize,
    r: usize,
    queries: &View<'_, T>,
    params: &QueryParams,
    h: &mut [T],
    work: &mut [u8],
) -> Result<(), Error> {
    params.validate()?;
    let (m, nq) = (queries.rows(), queries.cols());
    encode_req::<T>(queries.shape(), r)?.check(work.len())?;
    check_basis(w, u, m, k, r)?;
    if h.len() != r.checked_mul(nq).ok_or(Error::SizeOverflow)? {
        return Err(Error::DimensionMismatch);
    }
    check_values(w, true)?;
    check_values(u, true)?;
    queries.check_values(true)?;
    let mut q2 = (0..nq).map(|j| col_sq_norm(queries, j));
    if q2.any(|x| x == 0.0) {
        return Err(Error::EmptyQuery);
    }
    let mut st = Stack::new(work);
    let f: &mut [T] = st.take_matrix(m, r)?;
    let p: &mut [T] = st.take_matrix(r, r)?;
    let a: &mut [T] = st.take_matrix(r, nq)?;
    let d: &mut [T] = st.take(r)?;
    let mut sc = st.rest();
    f.part_mut(..m * k)?.copy_checked(w)?;
    f.part_mut(m * k..)?.copy_checked(u)?;
    let fm = MatRef::col_major(f, m, r)?;
    gemm(
        T::ONE,
        fm.t(),
        fm,
        T::ZERO,
        MatMut::col_major(p, r, r)?,
        &mut sc,
    )?;
    queries.ut_x(None, f, r, T::ZERO, a, &mut sc)?;
    let p_sum: f64 = p.iter().map(|x| x.to_f64()).sum();
    let eps = T::from_f64(params.eps);
    // Query j: column j of `a` and of `h` (`r × nq` each; `h` checked above).
    // (Indexed, not two zipped `chunks_exact`: a zip of those, where it is not
    // inlined, divides by a chunk size it cannot see is nonzero.)
    for (j, hj) in h.chunks_exact_mut(r.max(1)).take(nq).enumerate() {
        let aj = a.part(j * r..(j + 1) * r)?;
        let half_q2 = 0.5 * col_sq_norm(queries, j);
        encode_one(p, aj, half_q2, p_sum, eps, params, hj, d);
    }
    Ok(())
}

/// One query (module docs): `p = FᵀF` (`r × r`), `a = Fᵀq`; `d` is scratch.
#[allow(clippy::too_many_arguments)]
fn encode_one<T: Real>(
    p: &[T],
    a: &[T],
    half_q2: f64,
    p_sum: f64,
    eps: T,
    params: &QueryParams,
    h: &mut [T],
    d: &mut [T],
) {
    let r = a.len();
    let a_sum: f64 = a.iter().map(|x| x.to_f64()).sum();
    let c = if p_sum > 0.0 { a_sum / p_sum } else { 0.0 };
    h.fill(T::from_f64(c));
    let mut prev = f64::INFINITY;
    for it in 0..=params.max_iter {
        // Row i of the symmetric `p` is its column i (`p` is `r × r`).
        for (i, di) in d.iter_mut().enumerate() {
            let Some(pi) = p.get(i * r..(i + 1) * r) else {
                break;
            };
            *di = T::from_f64(dot(pi, h));
        }
        // ½‖F h − q‖² = ½‖q‖² − ⟨a, h⟩ + ½⟨h, P h⟩ (at least 0 up to rounding).
        let obj = (half_q2 - dot(a, h) + 0.5 * dot(h, d)).max(0.0);
        if it == params.max_iter || obj == 0.0 || (it > 0 && prev - obj <= params.tol * prev) {
            break;
        }
        prev = obj;
        mu_step(h, a, d, eps, T::INFINITY);
    }
}

/// `‖q_j‖²` of column `j` of a view.
fn col_sq_norm<T: Real>(q: &View<'_, T>, j: usize) -> f64 {
    match q {
        View::Dense(d) => sq_norm(d.col(j)),
        View::Csc(c) => sq_norm(c.col(j).1),
    }
}

fn rank_req<T>(n_items: usize) -> WorkReq {
    WorkReq::all_of(&[WorkReq::new::<T>(n_items), WorkReq::new::<T>(n_items)])
}

/// Workspace bytes of [`rank`] over `n_items` target items.
pub fn rank_workspace<T>(n_items: usize) -> Result<usize, Error> {
    if n_items == 0 {
        return Err(Error::ZeroDimension);
    }
    rank_req::<T>(n_items).bytes()
}

/// The ranking's inputs (see [`rank`]).
#[derive(Clone, Copy, Debug)]
pub struct Ranking<'a, T> {
    /// The target's encodings `H` (`r × n_items`, column-major, finite, `≥ 0`).
    pub target: &'a [T],
    /// The queries' encodings (`r × n_q`, finite, `≥ 0`), e.g. from [`encode`],
    /// or columns of `H` itself (query by example over the target).
    pub queries: &'a [T],
    /// Rows of both (the basis size `r`).
    pub r: usize,
    /// Items to return per query, `1 ≤ n_top ≤ n_items` (one less where an
    /// item is excluded).
    pub n_top: usize,
    /// `None`, or one item per query that is never returned (`usize::MAX`, or
    /// any value `≥ n_items`: none for that query).
    pub exclude: Option<&'a [usize]>,
}

/// Checks a ranking for `nq` queries and outputs of `idx_len` (and
/// `scores_len`) values: the target's shape and values, `n_top`, the
/// exclusions; returns `n_items`.
fn check_ranking<T: Real>(
    x: &Ranking<'_, T>,
    nq: usize,
    idx_len: usize,
    scores_len: Option<usize>,
) -> Result<usize, Error> {
    let r = x.r;
    if x.target.is_empty() || x.n_top == 0 {
        return Err(Error::ZeroDimension);
    }
    if !x.target.len().is_multiple_of(r) {
        return Err(Error::DimensionMismatch);
    }
    let n = x.target.len().checked_div(r).ok_or(Error::BadRank)?;
    let out_len = x.n_top.checked_mul(nq).ok_or(Error::SizeOverflow)?;
    if idx_len != out_len || scores_len.is_some_and(|l| l != out_len) {
        return Err(Error::DimensionMismatch);
    }
    if let Some(e) = x.exclude {
        if e.len() != nq {
            return Err(Error::DimensionMismatch);
        }
    }
    let excluded = |q: usize| x.exclude.is_some_and(|e| e.get(q).is_some_and(|&i| i < n));
    if (0..nq).any(|q| x.n_top > n - usize::from(excluded(q))) {
        return Err(Error::DimensionMismatch);
    }
    check_values(x.target, true)?;
    Ok(n)
}

/// Ranks the target's items for every query by cosine similarity (module
/// docs) and writes the `n_top` best, best first: `idx` (`n_top × n_q`,
/// column `q` for query `q`) and, if given, their similarities `scores` (same
/// shape). Errors before anything is written; workspace [`rank_workspace`].
pub fn rank<T: Real>(
    x: &Ranking<'_, T>,
    idx: &mut [usize],
    scores: Option<&mut [T]>,
    work: &mut [u8],
) -> Result<(), Error> {
    let r = x.r;
    if r == 0 {
        return Err(Error::BadRank);
    }
    if x.queries.is_empty() {
        return Err(Error::ZeroDimension);
    }
    if !x.queries.len().is_multiple_of(r) {
        return Err(Error::DimensionMismatch);
    }
    let nq = x.queries.len() / r;
    let n = check_ranking(x, nq, idx.len(), scores.as_ref().map(|s| s.len()))?;
    let excluded = |q: usize| x.exclude.and_then(|e| e.get(q).copied()).filter(|&i| i < n);
    check_values(x.queries, true)?;
    rank_req::<T>(n).check(work.len())?;
    let mut st = Stack::new(work);
    let norms: &mut [T] = st.take(n)?;
    let s: &mut [T] = st.take(n)?;
    // Item i is column i of the target (`r × n`), query q column q of the
    // queries (`r × nq`); the outputs' column q is chunk q (`n_top ≥ 1`).
    let items = || x.target.chunks_exact(r);
    for (nm, ti) in norms.iter_mut().zip(items()) {
        *nm = T::from_f64(libm::sqrt(sq_norm(ti)));
    }
    let mut sc_cols = scores.map(|sc| sc.chunks_exact_mut(x.n_top));
    for (q, out) in idx.chunks_exact_mut(x.n_top).enumerate() {
        let h = x.queries.part(q * r..(q + 1) * r)?;
        let hn = T::from_f64(libm::sqrt(sq_norm(h)));
        for ((si, &nm), ti) in s.iter_mut().zip(norms.iter()).zip(items()) {
            let den = hn * nm;
            // A cosine of nonnegative vectors is in [0, 1]; rounding (norms
            // near the subnormal range, a fuzz finding) may step outside.
            *si = if den > T::ZERO {
                (T::from_f64(dot(ti, h)) / den).min(T::ONE)
            } else {
                T::ZERO
            };
        }
        let score = |i: usize| s.get(i).copied().unwrap_or(T::ZERO);
        top_n_by(n, score, excluded(q), out);
        if let Some(sq) = sc_cols.as_mut().and_then(Iterator::next) {
            for (o, &i) in sq.iter_mut().zip(&*out) {
                *o = score(i);
            }
        }
    }
    Ok(())
}

fn query_req<T>(queries: ViewShape, r: usize, n_items: usize) -> Result<WorkReq, Error> {
    Ok(WorkReq::all_of(&[
        WorkReq::matrix::<T>(r, queries.cols),
        // The phases below get the rest as a byte buffer of their own, which
        // they align again.
        WorkReq::new::<u8>(crate::work::ALIGN),
        encode_req::<T>(queries, r)?.or(rank_req::<T>(n_items)),
    ]))
}

/// Workspace bytes of [`query`].
pub fn query_workspace<T>(
    queries: ViewShape,
    r: usize,
    n_items: usize,
    params: &QueryParams,
) -> Result<usize, Error> {
    params.validate()?;
    if n_items == 0 {
        return Err(Error::ZeroDimension);
    }
    query_req::<T>(queries, r, n_items)?.bytes()
}

/// Algorithm 2 for a batch: [`encode`] every column of `queries` against
/// `[W | U_1]` (`w`: `M × k`, `u`: `M × (x.r − k)`), then [`rank`] the
/// target's items (`x.target` = `H_1`, `r × n_items`; `x.queries` is not read
/// and may be empty). Outputs as [`rank`]'s; errors of both, before anything
/// is written.
#[allow(clippy::too_many_arguments)]
pub fn query<T: Real>(
    w: &[T],
    u: &[T],
    k: usize,
    queries: &View<'_, T>,
    params: &QueryParams,
    x: &Ranking<'_, T>,
    idx: &mut [usize],
    scores: Option<&mut [T]>,
    work: &mut [u8],
) -> Result<(), Error> {
    params.validate()?;
    let (r, nq) = (x.r, queries.cols());
    if r == 0 {
        return Err(Error::BadRank);
    }
    if nq == 0 || x.target.is_empty() {
        return Err(Error::ZeroDimension);
    }
    if !x.target.len().is_multiple_of(r) {
        return Err(Error::DimensionMismatch);
    }
    let n_items = x.target.len().checked_div(r).ok_or(Error::BadRank)?;
    query_req::<T>(queries.shape(), r, n_items)?.check(work.len())?;
    check_ranking(x, nq, idx.len(), scores.as_ref().map(|s| s.len()))?;
    let mut st = Stack::new(work);
    let hq: &mut [T] = st.take_matrix(r, nq)?;
    let rest = st.take_rest();
    encode(w, u, k, r, queries, params, hq, rest)?;
    let ranking = Ranking { queries: hq, ..*x };
    rank(&ranking, idx, scores, rest)
}
