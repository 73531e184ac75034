//! The C ABI of `models::jsnmf`: JSNMF fit over sources of different item
//! counts, query encoding, ranking, and the two in one call.
//!
//! Every export is declared once, in one `export!` list (`ffi/declare.rs`):
//! the `double` calls in order, then the `_f32` twins of the fit and the
//! encoding (`float` sources, queries and factors; `lambda`, options and
//! report stay `double`), the header's order.

use core::ffi::c_void;

use super::util::*;
use crate::models::jsnmf::{self, JsnmfParams, QueryParams, Ranking};
use crate::steps::NmfParams;

cparams! {
    /// Options of `mvnmf_jsnmf_fit`; get the defaults from `mvnmf_jsnmf_params_default()`.
    pub struct mvnmf_jsnmf_params => JsnmfParams.iter: NmfParams {
        /// Sweeps at most (default 200).
        pub max_iter: u32,
        /// Relative-decrease tolerance (default 1e-6; 0 runs all sweeps).
        pub tol: f64,
        /// Division guard ε ≥ 0 (default DBL_EPSILON).
        pub eps: f64,
        /// Seed of the random start (default 0).
        pub seed: u64,
        /// `MVNMF_INIT_RANDOM` (default) or `MVNMF_INIT_GIVEN`.
        pub init: u32,
        /// How `tol` is applied: `MVNMF_STOP_RULE_EVERY_ITERATION` (default) or
        /// `MVNMF_STOP_RULE_SKLEARN`.
        pub stop_rule: u32 as stop,
    } ..default validate;
    /// The default JSNMF options.
    fn mvnmf_jsnmf_params_default;
}

cparams! {
    /// Options of query encoding (`mvnmf_jsnmf_encode`, `mvnmf_jsnmf_query`); get
    /// the defaults from `mvnmf_jsnmf_query_params_default()`.
    pub struct mvnmf_jsnmf_query_params => QueryParams {
        /// Multiplicative updates per query at most (default 100).
        pub max_iter: u32,
        /// Stop a query when `‖F h − q‖²` improves by at most `tol` relative
        /// (default 1e-4; 0 runs all updates).
        pub tol: f64,
        /// Division guard δ ≥ 0 (default DBL_EPSILON).
        pub eps: f64,
    } validate;
    /// The default query options.
    fn mvnmf_jsnmf_query_params_default;
}

/// The ranks `R_s` (`n` values, each `≥ max(k, 1)`) and their products with `m`.
unsafe fn read_ranks<'a>(
    ranks: *const usize,
    n: usize,
    m: usize,
    k: usize,
) -> Result<&'a [usize], Error> {
    c_unsafe!({
        let r = slice(ranks, n)?;
        if r.iter().any(|&x| x == 0 || x < k) {
            return Err(Error::BadRank);
        }
        for &x in r {
            m.checked_mul(x).ok_or(Error::SizeOverflow)?;
        }
        Ok(r)
    })
}

/// The argument positions of `mvnmf_jsnmf_fit` and its `_f32` twin
/// (`sources` 1, `n_sources` 2, `k` 3, `ranks` 4, `lambda` 5, `params` 6,
/// `w` 7, `u` 8, `h` 9, `work` 10, `work_bytes` 11, `progress` 12, `user`
/// 13, `report` 14) that the core's own checks concern (the sources share
/// their features).
const SITE: Site = Site::at(1, 3, 6, 0, 11).sharing_rows();

/// The shape of the one view of queries, validated as the calls validate it.
unsafe fn query_shape<D: ViewDesc>(queries: *const D) -> Result<ViewShape, Error> {
    c_unsafe!(shapes(queries, 1))?
        .next()
        .ok_or(Error::ZeroDimension)
}

/// The rule of the encodes (and the batch query) on the arguments their
/// workspace queries take too, shared by both: `r ≥ 1` (`BadRank`), the basis
/// (`M × r` in all) and the encodings (`r × n_q`) addressable.
fn encode_dims<T>(queries: ViewShape, r: usize) -> Result<(), Error> {
    if r == 0 {
        return Err(Error::BadRank);
    }
    elems::<T>(queries.rows, r)?;
    elems::<T>(r, queries.cols)?;
    Ok(())
}

/// `w` (`m × k`) and `u` (`m × (r − k)`) as slices.
unsafe fn basis<'a, T>(
    w: *const T,
    u: *const T,
    m: usize,
    k: usize,
    r: usize,
) -> Result<(&'a [T], &'a [T]), Error> {
    if r == 0 || r < k {
        return Err(Error::BadRank);
    }
    // Both products fit: the callers checked `m × r` (`encode_dims`).
    c_unsafe!(Ok((slice_ab(w, m, k)?, slice_ab(u, m, r - k)?)))
}

type RankOut<'a> = (&'a mut [usize], Option<&'a mut [f64]>, &'a mut [u8]);

/// The ranking's outputs (`n_top × n_queries` each; `scores` optional) and the workspace.
unsafe fn rank_outputs<'a>(
    n_top: usize,
    n_queries: usize,
    idx: *mut usize,
    scores: *mut f64,
    work: *mut c_void,
    work_bytes: usize,
) -> Result<RankOut<'a>, Error> {
    c_unsafe!({
        let len = n_top.checked_mul(n_queries).ok_or(Error::SizeOverflow)?;
        require!(idx);
        let ii = slice_mut(idx, len)?;
        let ss = opt_slice_mut(scores, len)?;
        Ok((ii, ss, work_of(work, work_bytes)?))
    })
}

export! {
    /// JSNMF (seed 004): `min ½ Σ_s λ_s ‖X_s − [W | U_s] H_s‖²_F` over
    /// `W, U_s, H_s ≥ 0`, for `n_sources ≥ 1` sources over the same `M` terms
    /// (rows), each with its own item count `N_s` (columns), dense or CSC.
    ///
    /// * `k` shared basis vectors; `ranks[s] = R_s ≥ max(k, 1)`. `k = 0`:
    ///   independent NMFs; `k = R_s` for all: the fully shared model.
    /// * `lambda`: `n_sources` weights (finite, > 0), or NULL for
    ///   `λ_s = ‖X_1‖²/‖X_s‖²`.
    /// * Limits (the objective representable): every `½‖X_s‖²_F` and the weighted
    ///   `Σ_s λ_s ½‖X_s‖²_F` at most `2^999` (about `5e300`; `_f32`: `2^103`, about
    ///   `1e31`, entries up to about `4e15`). Data beyond: `MVNMF_STATUS_INPUT_TOO_LARGE`;
    ///   weights beyond, or a `λ_s` above the bound itself (e.g. `{1e308, 1e-308}`):
    ///   `MVNMF_STATUS_BAD_PARAMETER`;
    ///   nothing written.
    /// * `w`: `M × k` doubles (NULL when `k = 0`); `u[s]`: `M × (R_s − k)` (NULL
    ///   when `R_s = k`); `h[s]`: `R_s × N_s`. Written; read with `MVNMF_INIT_GIVEN`.
    ///   After every sweep the columns of `W`, `U_s` have unit L2 norm (the rows
    ///   of `H_s` carry the scale).
    /// * `work`: at least `mvnmf_jsnmf_fit_workspace` bytes.
    ///
    /// Cost per sweep: each source read twice (dense `4 M N_s R_s` flops, CSC
    /// `O(nnz_s R_s)`) plus `O(M R_s² + R_s² N_s)`. The objective never increases.
    /// Returns `MVNMF_STATUS_CANCELLED` (report written, outputs at the last
    /// complete sweep) when `progress` returns nonzero; on any other error the
    /// outputs are untouched. `MVNMF_STATUS_OK` always comes with finite factors
    /// and objectives (a non-finite one, which the limits exclude, would be
    /// `MVNMF_STATUS_INTERNAL`, outputs at the last sweep).
    fn mvnmf_jsnmf_fit / mvnmf_jsnmf_fit_f32(
        sources: *const V = "`n_sources`",
        n_sources, k: usize,
        ranks: *const usize = "`n_sources` values",
        lambda: *const f64 = "`n_sources` doubles",
        params: *const mvnmf_jsnmf_params,
        w: *mut T = "`M × k`",
        u: *const *mut T = "`n_sources` pointers to `M × (R_s − k)`",
        h: *const *mut T = "`n_sources` pointers to `R_s × N_s`",
        ..solver(work, work_bytes, progress, user, report),
    ) at report {
        let p = read_params(params).arg(6)?;
        let (vs, _) = read_views_at(sources, n_sources, 1)?;
        let m = vs.shape(0).rows;
        let r = read_ranks(ranks, n_sources, m, k).arg(4)?;
        let lam = opt_slice(lambda, n_sources).arg(5)?;
        let wl = m.checked_mul(k).ok_or(Error::SizeOverflow).arg(3)?;
        let ww = slice_mut(w, wl).arg(7)?;
        let ul = |s: usize| r.get(s).map_or(0, |&rs| m * (rs - k));
        let mut us = bufs(u, n_sources, ul, false).arg(8)?;
        let cols = |s: usize| vs.shape(s).cols;
        for (s, &rs) in r.iter().enumerate() {
            rs.checked_mul(cols(s)).ok_or(Error::SizeOverflow).arg(4)?;
        }
        let hl = |s: usize| r.get(s).map_or(0, |&rs| rs * cols(s));
        let mut hs = bufs(h, n_sources, hl, false).arg(9)?;
        let wk = work_of(work, work_bytes).arg(10)?;
        let rep = with_monitor(progress, user, |mon| {
            jsnmf::fit(&vs, k, r, lam, &p, &mut *ww, &mut us, &mut hs, wk, mon)
        });
        let rep = rep.map_err(|e| {
            let given = [
                Given::Buf(7, &*ww, m),
                Given::Factors(8, &us as &dyn Factors<T>),
                Given::Rows(9, &hs as &dyn Factors<T>, r),
            ];
            SITE.blame_start(e, &vs, p.iter.init, &given)
        })?;
        finish(rep, report).arg(0)
    }
    /// (validates the source descriptors as the call does, values aside, and
    /// `ranks`).
    workspace mvnmf_jsnmf_fit_workspace / mvnmf_jsnmf_fit_f32_workspace(..4,
        params: *const mvnmf_jsnmf_params,
    ) {
        let p = read_params(params)?;
        let r = slice(ranks, n_sources)?;
        jsnmf::fit_workspace::<T>(shapes(sources, n_sources)?, k, r, &p)
    };

    /// Encodes the columns of `queries` (`M × n_q` term vectors, dense or CSC,
    /// finite, ≥ 0, none all zero: `MVNMF_STATUS_EMPTY_QUERY`) against one
    /// source's basis `[W | U_s]` (`w`: `M × k`, `u`: `M × (r − k)`): writes `h`
    /// (`r × n_q`). Each query on its own: `h ← h ∘ (Fᵀq + δ) ⊘ (FᵀF h + δ)`
    /// from the best constant vector, until `‖F h − q‖²` improves by at most
    /// `tol` relative. Keyword queries are CSC columns; against `U_s` of source
    /// `s` this is the out-of-sample encoding of new items of that source. Cost:
    /// `FᵀF` and `FᵀQ` once, then `2r²` flops per query and update.
    fn mvnmf_jsnmf_encode / mvnmf_jsnmf_encode_f32(
        queries: *const V = "one",
        k, r: usize,
        params: *const mvnmf_jsnmf_query_params,
        w: *const T = "`M × k`",
        u: *const T = "`M × (r − k)`",
        h: *mut T = "`r × n_q`",
        ..work(work, work_bytes),
    ) {
        let p = read_params(params)?;
        let (qs, nq) = read_views(queries, 1)?;
        encode_dims::<T>(qs.shape(0), r)?;
        let (ww, uu) = basis(w, u, qs.shape(0).rows, k, r)?;
        let hh = out_ab(h, r, nq)?;
        let wk = work_of(work, work_bytes)?;
        jsnmf::encode(ww, uu, k, r, &qs.view(0), &p, hh, wk)?;
        Ok(mvnmf_status::Ok)
    }
    /// for these queries and a basis of `r` columns.
    workspace mvnmf_jsnmf_encode_workspace / mvnmf_jsnmf_encode_f32_workspace(
        queries: *const V = "one",
        r: usize,
        params: *const mvnmf_jsnmf_query_params,
    ) {
        let p = read_params(params)?;
        let s = query_shape(queries)?;
        encode_dims::<T>(s, r)?;
        jsnmf::encode_workspace::<T>(s, r, &p)
    };

    /// Ranks the target's items for each query by cosine similarity of the
    /// encodings: `target_h` is `H_1` (`r × n_items`), `query_h` holds
    /// `n_queries` encodings (`r × n_queries`: from `mvnmf_jsnmf_encode`, or
    /// columns of `H_1` for query by example). Writes the `n_top` best items per
    /// query, best first (ties: lower index first), into `idx` (`n_top ×
    /// n_queries`, column `q` for query `q`) and, if `scores` is not NULL, their
    /// similarities (same shape). `exclude`: NULL, or `n_queries` item indices
    /// never returned for their query (`SIZE_MAX`: none), e.g. the query item
    /// itself; `n_top ≤ n_items`, one less for a query with an exclusion. Partial
    /// selection, `O(n_items (r + log n_top))` per query.
    fn mvnmf_jsnmf_rank(
        target_h: *const f64 = "`r × n_items` doubles",
        r, n_items: usize,
        query_h: *const f64 = "`r × n_queries` doubles",
        n_queries, n_top: usize,
        exclude: *const usize = "`n_queries` values",
        idx: *mut usize = "`n_top × n_queries` values",
        scores: *mut f64 = "`n_top × n_queries` doubles",
        ..work(work, work_bytes),
    ) {
        nonzero!(n_items, n_queries, n_top);
        if r == 0 {
            return Err(Error::BadRank);
        }
        let x = Ranking {
            target: slice_ab(target_h, r, n_items)?,
            queries: slice_ab(query_h, r, n_queries)?,
            r,
            n_top,
            exclude: opt_slice(exclude, n_queries)?,
        };
        let (ii, ss, wk) = rank_outputs(n_top, n_queries, idx, scores, work, work_bytes)?;
        jsnmf::rank(&x, ii, ss, wk)?;
        Ok(mvnmf_status::Ok)
    }
    /// over `n_items` target items.
    workspace mvnmf_jsnmf_rank_workspace(n_items: usize) {
        jsnmf::rank_workspace::<f64>(n_items)
    };

    /// Retrieval (seed 004, Algorithm 2) for a batch of queries in one call:
    /// `mvnmf_jsnmf_encode` of `queries` against the target's basis `[W | U_1]`,
    /// then `mvnmf_jsnmf_rank` of the target's items (`target_h` = `H_1`,
    /// `r × n_items`). Arguments and outputs as those two functions'; nothing is
    /// written on error.
    fn mvnmf_jsnmf_query(
        queries: *const V = "one",
        k, r: usize,
        params: *const mvnmf_jsnmf_query_params,
        w: *const f64 = "`M × k` doubles",
        u: *const f64 = "`M × (r − k)` doubles",
        target_h: *const f64 = "`r × n_items` doubles",
        n_items, n_top: usize,
        exclude: *const usize = "`n_q` values",
        idx: *mut usize = "`n_top × n_q` values",
        scores: *mut f64 = "`n_top × n_q` doubles",
        ..work(work, work_bytes),
    ) {
        let p = read_params(params)?;
        let (qs, nq) = read_views(queries, 1)?;
        nonzero!(n_items, n_top);
        encode_dims::<f64>(qs.shape(0), r)?;
        elems::<f64>(r, n_items)?;
        let (ww, uu) = basis(w, u, qs.shape(0).rows, k, r)?;
        let x = Ranking {
            target: slice_ab(target_h, r, n_items)?,
            queries: &[],
            r,
            n_top,
            exclude: opt_slice(exclude, nq)?,
        };
        let (ii, ss, wk) = rank_outputs(n_top, nq, idx, scores, work, work_bytes)?;
        jsnmf::query(ww, uu, k, &qs.view(0), &p, &x, ii, ss, wk)?;
        Ok(mvnmf_status::Ok)
    }
    workspace mvnmf_jsnmf_query_workspace(
        queries: *const V = "one",
        r, n_items: usize,
        params: *const mvnmf_jsnmf_query_params,
    ) {
        let p = read_params(params)?;
        let s = query_shape(queries)?;
        nonzero!(n_items);
        encode_dims::<f64>(s, r)?;
        elems::<f64>(r, n_items)?;
        jsnmf::query_workspace::<f64>(s, r, n_items, &p)
    };
}
