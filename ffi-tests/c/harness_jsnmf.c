/* C harness of JSNMF (seed 004) and its retrieval (src/ffi/jsnmf.rs).
 *
 *   * the objective never increases (progress callback), S = 2 and S = 3
 *     sources of different item counts, dense and CSC, K between 0 and R;
 *   * the reported objective equals 0.5 sum_s lambda_s ||X_s - [W U_s] H_s||^2
 *     computed here from the (normalised) outputs, and a restart from them
 *     with zero sweeps reports the same value: normalisation leaves it alone;
 *   * K = 0 equals independent mvnmf_nmf_fit runs from the same start;
 *   * CSC sources give the dense results (to rounding);
 *   * retrieval: mvnmf_jsnmf_query = mvnmf_jsnmf_encode + mvnmf_jsnmf_rank
 *     (bitwise), query by example finds the item, exclusion, a keyword query
 *     (a CSC column) equals its dense one-hot form;
 *   * bad input (sources whose row counts differ, K > min R_s, NaN or negative
 *     counts, an empty query, N larger than the target, a short workspace)
 *     gets its own status, and the outputs are untouched.
 *
 * Built like the other harnesses (ffi-tests/build.rs): C99 and C++11, warnings
 * as errors; HARNESS_JSNMF_ENTRY returns the number of failed checks. */
#include "mvnmf.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
#define LANG "c++11"
extern "C" {
#else
#define LANG "c99"
#endif
int HARNESS_JSNMF_ENTRY(int verbose);
#ifdef __cplusplus
}
#endif

#define HARNESS_DENSE_HELPERS
#include "harness_common.h"

#define MAXS 3
#define MAX_TRACE 512
#define SENTINEL 7.25

typedef struct {
    double obj[MAX_TRACE];
    size_t n;
} trace_t;

static int record(const mvnmf_progress *p, void *user)
{
    trace_t *t = (trace_t *)user;
    if (t->n < MAX_TRACE)
        t->obj[t->n++] = p->objective.total;
    return 0;
}

static int monotone(const trace_t *t, double scale)
{
    size_t i;
    for (i = 1; i < t->n; i++)
        if (t->obj[i] > t->obj[i - 1] + 1e-10 * scale)
            return 0;
    return t->n > 1;
}

/* A JSNMF problem: S sources over m terms, outputs, workspace. */
typedef struct {
    size_t m, s, k, r[MAXS];
    hmat x[MAXS];
    mvnmf_view v[MAXS];
    double *w, *u[MAXS], *h[MAXS];
    void *work;
    size_t bytes;
} prob;

static void prob_make(prob *p, size_t m, size_t s, const size_t *n, size_t k, const size_t *r, int sparse)
{
    size_t i;
    memset(p, 0, sizeof *p);
    p->m = m;
    p->s = s;
    p->k = k;
    for (i = 0; i < s; i++) {
        p->r[i] = r[i];
        /* Sources share the first term factors (seed_a) but not their items. */
        hmat_make(&p->x[i], m, n[i], m + (i == 1), sparse ? 0.6 : 1.0, 1.0 + (double)i, 5, 10 + i);
        p->v[i] = p->x[i].view;
        p->u[i] = dalloc(m * (r[i] - k) + 1);
        p->h[i] = dalloc(r[i] * n[i]);
    }
    p->w = dalloc(m * k + 1);
}

static void prob_free(prob *p)
{
    size_t i;
    for (i = 0; i < p->s; i++) {
        hmat_free(&p->x[i]);
        free(p->u[i]);
        free(p->h[i]);
    }
    free(p->w);
    free(p->work);
}

static uint32_t fit(prob *p, const mvnmf_jsnmf_params *par, trace_t *t, mvnmf_report *rep)
{
    size_t need = 0;
    uint32_t st = mvnmf_jsnmf_fit_workspace(p->v, p->s, p->k, p->r, par, &need);
    if (st != MVNMF_STATUS_OK)
        return st;
    free(p->work);
    p->work = malloc(need);
    p->bytes = need;
    if (t)
        t->n = 0;
    return mvnmf_jsnmf_fit(p->v, p->s, p->k, p->r, NULL, par, p->w, p->u, p->h, p->work, p->bytes,
                           t ? record : NULL, t, rep);
}

/* 0.5 sum_s lambda_s ||X_s - [W U_s] H_s||^2 with the default weights. */
static double direct_objective(const prob *p)
{
    double tot = 0.0, x1 = half_sq(&p->x[0]);
    size_t s, i, j, c;
    for (s = 0; s < p->s; s++) {
        double xs = half_sq(&p->x[s]), lam = (xs > 0.0 && x1 > 0.0) ? x1 / xs : 1.0, e = 0.0;
        size_t r = p->r[s], n = p->x[s].cols;
        for (j = 0; j < n; j++)
            for (i = 0; i < p->m; i++) {
                double f = 0.0;
                for (c = 0; c < r; c++) {
                    double b = c < p->k ? p->w[i + c * p->m] : p->u[s][i + (c - p->k) * p->m];
                    f += b * p->h[s][c + j * r];
                }
                f -= p->x[s].a[i + j * p->x[s].ld];
                e += 0.5 * f * f;
            }
        tot += lam * e;
    }
    return tot;
}

static void test_monotone_and_normalised(void)
{
    static const size_t n2[] = { 23, 11 }, n3[] = { 17, 9, 30 };
    static const size_t r2[] = { 5, 4 }, r3[] = { 4, 6, 5 };
    size_t ks[] = { 0, 2, 4 };
    int sparse, s3;
    size_t ki;
    note("jsnmf fit: monotone, normalised, reported = direct objective");
    for (s3 = 0; s3 < 2; s3++)
        for (sparse = 0; sparse < 2; sparse++)
            for (ki = 0; ki < 3; ki++) {
                prob p;
                trace_t t;
                mvnmf_report rep, rep2;
                mvnmf_jsnmf_params par = mvnmf_jsnmf_params_default();
                size_t k = ks[ki], s, c;
                double scale = 0.0, direct;
                par.max_iter = 40;
                par.tol = 0.0;
                par.seed = 7 + ki;
                prob_make(&p, 31, s3 ? 3 : 2, s3 ? n3 : n2, k, s3 ? r3 : r2, sparse);
                set_ctx("S=%zu %s K=%zu", p.s, sparse ? "csc" : "dense", k);
                for (s = 0; s < p.s; s++)
                    scale += half_sq(&p.x[s]);
                if (!CHECK_STATUS(fit(&p, &par, &t, &rep), MVNMF_STATUS_OK)) {
                    prob_free(&p);
                    continue;
                }
                CHECK(monotone(&t, scale));
                CHECK(t.n == 41);
                direct = direct_objective(&p);
                CHECK(close_to(rep.objective.total, direct, 1e-10, 1e-12 * scale));
                /* Unit columns of W and U_s. */
                for (c = 0; c < k; c++) {
                    double nn = 0.0;
                    size_t i;
                    for (i = 0; i < p.m; i++)
                        nn += p.w[i + c * p.m] * p.w[i + c * p.m];
                    CHECK(nn == 0.0 || fabs(nn - 1.0) < 1e-12);
                }
                /* Restart from the outputs, zero sweeps: the same objective. */
                par.init = MVNMF_INIT_GIVEN;
                par.max_iter = 0;
                CHECK_STATUS(fit(&p, &par, NULL, &rep2), MVNMF_STATUS_OK);
                CHECK(close_to(rep2.objective.total, rep.objective.total, 1e-12, 0.0));
                prob_free(&p);
            }
}

static void test_k0_is_independent_nmf(void)
{
    static const size_t n[] = { 19, 8 }, r[] = { 4, 4 };
    prob p;
    trace_t t;
    mvnmf_report rep;
    mvnmf_jsnmf_params par = mvnmf_jsnmf_params_default();
    mvnmf_nmf_params np = mvnmf_nmf_params_default();
    size_t s, i, j, c;
    double *u0[2], *h0[2];
    note("jsnmf K = 0: independent NMFs");
    prob_make(&p, 14, 2, n, 0, r, 0);
    for (s = 0; s < 2; s++) {
        lcg_t g = lcg_seeded(40 + s);
        u0[s] = dalloc(14 * 4);
        h0[s] = dalloc(4 * n[s]);
        for (i = 0; i < 14 * 4; i++)
            p.u[s][i] = u0[s][i] = 0.1 + lcg_next(&g);
        for (i = 0; i < 4 * n[s]; i++)
            p.h[s][i] = h0[s][i] = 0.1 + lcg_next(&g);
    }
    par.init = MVNMF_INIT_GIVEN;
    par.max_iter = 25;
    par.tol = 0.0;
    par.eps = 0.0;
    set_ctx("jsnmf K=0");
    CHECK_STATUS(fit(&p, &par, &t, &rep), MVNMF_STATUS_OK);
    np.init = MVNMF_INIT_GIVEN;
    np.max_iter = 25;
    np.tol = 0.0;
    np.eps = 0.0;
    for (s = 0; s < 2; s++) {
        size_t need = 0, m = 14;
        void *w;
        double worst = 0.0;
        set_ctx("jsnmf K=0 vs nmf, source %zu", s);
        CHECK_STATUS(mvnmf_nmf_fit_workspace(&p.v[s], 4, &np, &need), MVNMF_STATUS_OK);
        w = malloc(need);
        CHECK_STATUS(mvnmf_nmf_fit(&p.v[s], 4, &np, u0[s], h0[s], w, need, NULL, NULL, NULL), MVNMF_STATUS_OK);
        free(w);
        /* The products agree (JSNMF's normalisation moves scale between factors). */
        for (j = 0; j < n[s]; j++)
            for (i = 0; i < m; i++) {
                double a = 0.0, b = 0.0;
                for (c = 0; c < 4; c++) {
                    a += u0[s][i + c * m] * h0[s][c + j * 4];
                    b += p.u[s][i + c * m] * p.h[s][c + j * 4];
                }
                if (fabs(a - b) > worst * (fabs(a) + 1e-300))
                    worst = fabs(a - b) / (fabs(a) + 1e-300);
            }
        CHECK(worst < 1e-12);
        free(u0[s]);
        free(h0[s]);
    }
    prob_free(&p);
}

static void test_csc_equals_dense(void)
{
    static const size_t n[] = { 21, 13 }, r[] = { 5, 3 };
    prob a, b;
    mvnmf_report ra, rb;
    mvnmf_jsnmf_params par = mvnmf_jsnmf_params_default();
    size_t s;
    note("jsnmf: CSC sources = dense sources");
    par.max_iter = 30;
    prob_make(&a, 26, 2, n, 2, r, 1);
    prob_make(&b, 26, 2, n, 2, r, 1);
    /* b: the same numbers as dense views. */
    for (s = 0; s < 2; s++) {
        b.x[s].view.kind = MVNMF_VIEW_DENSE;
        b.x[s].view.values = b.x[s].a;
        b.x[s].view.col_stride = b.x[s].ld;
        b.v[s] = b.x[s].view;
    }
    set_ctx("jsnmf csc vs dense");
    CHECK_STATUS(fit(&a, &par, NULL, &ra), MVNMF_STATUS_OK);
    CHECK_STATUS(fit(&b, &par, NULL, &rb), MVNMF_STATUS_OK);
    CHECK(close_to(ra.objective.total, rb.objective.total, 1e-10, 0.0));
    CHECK(rel_diff(a.w, b.w, 26 * 2) < 1e-8);
    for (s = 0; s < 2; s++)
        CHECK(rel_diff(a.h[s], b.h[s], r[s] * n[s]) < 1e-8);
    prob_free(&a);
    prob_free(&b);
}

static void test_retrieval(void)
{
    static const size_t n[] = { 40, 25 }, r[] = { 6, 5 };
    prob p;
    mvnmf_report rep;
    mvnmf_jsnmf_params par = mvnmf_jsnmf_params_default();
    mvnmf_jsnmf_query_params qp = mvnmf_jsnmf_query_params_default();
    size_t m = 30, k = 3, nt = 5, nq, need = 0, need2 = 0, j, found = 0;
    size_t *idx, *idx2, *excl;
    double *sc, *sc2, *hq;
    void *w;
    note("jsnmf retrieval: query = encode + rank, query by example, keywords");
    par.max_iter = 100;
    prob_make(&p, m, 2, n, k, r, 0);
    set_ctx("jsnmf retrieval fit");
    if (!CHECK_STATUS(fit(&p, &par, NULL, &rep), MVNMF_STATUS_OK)) {
        prob_free(&p);
        return;
    }
    /* Query by example: every target document, itself excluded. */
    nq = n[0];
    idx = (size_t *)malloc(nt * nq * sizeof(size_t));
    idx2 = (size_t *)malloc(nt * nq * sizeof(size_t));
    excl = (size_t *)malloc(nq * sizeof(size_t));
    sc = dalloc(nt * nq);
    sc2 = dalloc(nt * nq);
    hq = dalloc(6 * nq);
    for (j = 0; j < nq; j++)
        excl[j] = j % 4 == 0 ? SIZE_MAX : j;
    set_ctx("mvnmf_jsnmf_query");
    CHECK_STATUS(mvnmf_jsnmf_query_workspace(&p.v[0], 6, n[0], &qp, &need), MVNMF_STATUS_OK);
    w = malloc(need);
    CHECK_STATUS(mvnmf_jsnmf_query(&p.v[0], k, 6, &qp, p.w, p.u[0], p.h[0], n[0], nt, excl, idx, sc, w, need),
                 MVNMF_STATUS_OK);
    free(w);
    for (j = 0; j < nq; j++) {
        size_t t;
        for (t = 0; t < nt; t++) {
            CHECK(idx[t + j * nt] < n[0] && idx[t + j * nt] != excl[j]);
            CHECK(t == 0 || sc[t + j * nt] <= sc[t - 1 + j * nt]);
            CHECK(sc[t + j * nt] >= 0.0 && sc[t + j * nt] <= 1.0 + 1e-12);
        }
    }
    set_ctx("mvnmf_jsnmf_encode + mvnmf_jsnmf_rank");
    CHECK_STATUS(mvnmf_jsnmf_encode_workspace(&p.v[0], 6, NULL, &need), MVNMF_STATUS_OK);
    w = malloc(need);
    CHECK_STATUS(mvnmf_jsnmf_encode(&p.v[0], k, 6, NULL, p.w, p.u[0], hq, w, need), MVNMF_STATUS_OK);
    free(w);
    CHECK_STATUS(mvnmf_jsnmf_rank_workspace(n[0], &need2), MVNMF_STATUS_OK);
    w = malloc(need2);
    CHECK_STATUS(mvnmf_jsnmf_rank(p.h[0], 6, n[0], hq, nq, nt, excl, idx2, sc2, w, need2), MVNMF_STATUS_OK);
    CHECK(memcmp(idx, idx2, nt * nq * sizeof(size_t)) == 0);
    CHECK(memcmp(sc, sc2, nt * nq * sizeof(double)) == 0);
    /* Out-of-sample: a target document encoded against [W U_1] is close in
     * direction to its fitted encoding. */
    for (j = 0; j < nq; j++) {
        double d = 0.0, a = 0.0, b = 0.0;
        size_t c;
        for (c = 0; c < 6; c++) {
            d += hq[c + j * 6] * p.h[0][c + j * 6];
            a += hq[c + j * 6] * hq[c + j * 6];
            b += p.h[0][c + j * 6] * p.h[0][c + j * 6];
        }
        found += d >= 0.95 * sqrt(a * b);
    }
    CHECK(found >= nq - 2);
    /* Query by example with the stored encodings (no encoding step). */
    CHECK_STATUS(mvnmf_jsnmf_rank(p.h[0], 6, n[0], p.h[0], nq, nt, NULL, idx2, NULL, w, need2),
                 MVNMF_STATUS_OK);
    for (j = 0, found = 0; j < nq; j++)
        found += idx2[j * nt] == j;
    CHECK(found >= nq - 2);
    free(w);

    /* A keyword query (terms 2, 9, 17) as CSC and as dense one-hot. */
    {
        size_t cp[2] = { 0, 3 }, ri[3] = { 2, 9, 17 };
        double val[3] = { 1.0, 1.0, 1.0 }, *onehot = dalloc(m), ha[6], hb[6];
        mvnmf_view kv, dv;
        memset(&kv, 0, sizeof kv);
        kv.kind = MVNMF_VIEW_CSC;
        kv.rows = m;
        kv.cols = 1;
        kv.col_ptr = cp;
        kv.row_idx = ri;
        kv.values = val;
        for (j = 0; j < m; j++)
            onehot[j] = (j == 2 || j == 9 || j == 17) ? 1.0 : 0.0;
        dv = dense_view(onehot, m, 1);
        set_ctx("keyword query");
        CHECK_STATUS(mvnmf_jsnmf_encode_workspace(&kv, 6, NULL, &need), MVNMF_STATUS_OK);
        CHECK_STATUS(mvnmf_jsnmf_encode_workspace(&dv, 6, NULL, &need2), MVNMF_STATUS_OK);
        w = malloc(need > need2 ? need : need2);
        CHECK_STATUS(mvnmf_jsnmf_encode(&kv, k, 6, NULL, p.w, p.u[0], ha, w, need), MVNMF_STATUS_OK);
        CHECK_STATUS(mvnmf_jsnmf_encode(&dv, k, 6, NULL, p.w, p.u[0], hb, w, need2), MVNMF_STATUS_OK);
        CHECK(rel_diff(ha, hb, 6) < 1e-12);
        free(w);
        free(onehot);
    }
    free(idx);
    free(idx2);
    free(excl);
    free(sc);
    free(sc2);
    free(hq);
    prob_free(&p);
}

static void test_bad_input(void)
{
    static const size_t n[] = { 12, 7 }, r[] = { 4, 3 }, rbig[] = { 4, 2 };
    prob p;
    mvnmf_jsnmf_params par = mvnmf_jsnmf_params_default();
    mvnmf_report rep;
    size_t need = 0, s, i, idx[40];
    double sc[40], hq[8];
    void *w;
    note("jsnmf: bad input gets its status, outputs untouched");
    prob_make(&p, 18, 2, n, 2, r, 0);
    CHECK_STATUS(mvnmf_jsnmf_fit_workspace(p.v, 2, 2, p.r, NULL, &need), MVNMF_STATUS_OK);
    w = malloc(need);
    for (i = 0; i < 18 * 2; i++)
        p.w[i] = SENTINEL;
    for (s = 0; s < 2; s++)
        for (i = 0; i < r[s] * n[s]; i++)
            p.h[s][i] = SENTINEL;
#define UNTOUCHED() (all_in(p.w, 36, SENTINEL, SENTINEL) && all_in(p.h[0], 48, SENTINEL, SENTINEL) && \
                     all_in(p.h[1], 21, SENTINEL, SENTINEL))
#define FIT(views, kk, rr) mvnmf_jsnmf_fit(views, 2, kk, rr, NULL, &par, p.w, p.u, p.h, w, need, NULL, NULL, &rep)
    set_ctx("rows differ");
    {
        mvnmf_view bad[2];
        bad[0] = p.v[0];
        bad[1] = p.v[1];
        bad[1].rows = 17;
        CHECK_STATUS(FIT(bad, 2, p.r), MVNMF_STATUS_DIMENSION_MISMATCH);
        CHECK(UNTOUCHED());
    }
    set_ctx("K > min R_s");
    CHECK_STATUS(FIT(p.v, 4, p.r), MVNMF_STATUS_BAD_RANK);
    CHECK_STATUS(FIT(p.v, 3, rbig), MVNMF_STATUS_BAD_RANK);
    CHECK(UNTOUCHED());
    set_ctx("NaN count");
    p.x[1].a[5] = NAN;
    CHECK_STATUS(FIT(p.v, 2, p.r), MVNMF_STATUS_NON_FINITE_INPUT);
    CHECK(UNTOUCHED());
    set_ctx("negative count");
    p.x[1].a[5] = -1.0;
    CHECK_STATUS(FIT(p.v, 2, p.r), MVNMF_STATUS_NEGATIVE_INPUT);
    CHECK(UNTOUCHED());
    p.x[1].a[5] = 0.5;
    set_ctx("workspace one byte short");
    CHECK_STATUS(mvnmf_jsnmf_fit(p.v, 2, 2, p.r, NULL, &par, p.w, p.u, p.h, w, need - 1, NULL, NULL, &rep),
                 MVNMF_STATUS_WORKSPACE_TOO_SMALL);
    CHECK(UNTOUCHED());
    set_ctx("bad lambda");
    {
        double lam[2] = { 1.0, -2.0 };
        CHECK_STATUS(mvnmf_jsnmf_fit(p.v, 2, 2, p.r, lam, &par, p.w, p.u, p.h, w, need, NULL, NULL, &rep),
                     MVNMF_STATUS_BAD_PARAMETER);
        CHECK(UNTOUCHED());
    }
    set_ctx("NULL h");
    {
        double *hn[2];
        hn[0] = p.h[0];
        hn[1] = NULL;
        CHECK_STATUS(mvnmf_jsnmf_fit(p.v, 2, 2, p.r, NULL, &par, p.w, p.u, hn, w, need, NULL, NULL, &rep),
                     MVNMF_STATUS_NULL_POINTER);
        CHECK(UNTOUCHED());
    }
    /* Retrieval: an empty query, N larger than the target. */
    CHECK_STATUS(FIT(p.v, 2, p.r), MVNMF_STATUS_OK);
    free(w);
    {
        double zero[18];
        mvnmf_view zv;
        size_t excl[1] = { 3 };
        memset(zero, 0, sizeof zero);
        zv = dense_view(zero, 18, 1);
        for (i = 0; i < 8; i++)
            hq[i] = SENTINEL;
        for (i = 0; i < 40; i++) {
            idx[i] = 77;
            sc[i] = SENTINEL;
        }
        set_ctx("empty query");
        CHECK_STATUS(mvnmf_jsnmf_encode_workspace(&zv, 4, NULL, &need), MVNMF_STATUS_OK);
        w = malloc(need);
        CHECK_STATUS(mvnmf_jsnmf_encode(&zv, 2, 4, NULL, p.w, p.u[0], hq, w, need), MVNMF_STATUS_EMPTY_QUERY);
        CHECK(all_in(hq, 4, SENTINEL, SENTINEL));
        free(w);
        CHECK_STATUS(mvnmf_jsnmf_query_workspace(&zv, 4, n[0], NULL, &need), MVNMF_STATUS_OK);
        w = malloc(need);
        CHECK_STATUS(mvnmf_jsnmf_query(&zv, 2, 4, NULL, p.w, p.u[0], p.h[0], n[0], 3, NULL, idx, sc, w, need),
                     MVNMF_STATUS_EMPTY_QUERY);
        set_ctx("N larger than the target");
        free(w);
        CHECK_STATUS(mvnmf_jsnmf_query_workspace(&p.v[0], 4, n[0], NULL, &need), MVNMF_STATUS_OK);
        w = malloc(need);
        CHECK_STATUS(mvnmf_jsnmf_query(&p.v[0], 2, 4, NULL, p.w, p.u[0], p.h[0], n[0], n[0] + 1, NULL, idx, sc, w,
                                       need),
                     MVNMF_STATUS_DIMENSION_MISMATCH);
        free(w);
        CHECK_STATUS(mvnmf_jsnmf_rank_workspace(n[0], &need), MVNMF_STATUS_OK);
        w = malloc(need);
        CHECK_STATUS(mvnmf_jsnmf_rank(p.h[0], 4, n[0], p.h[0], 1, n[0], excl, idx, sc, w, need),
                     MVNMF_STATUS_DIMENSION_MISMATCH);
        CHECK_STATUS(mvnmf_jsnmf_rank(p.h[0], 4, n[0], p.h[0], 1, 0, NULL, idx, sc, w, need),
                     MVNMF_STATUS_ZERO_DIMENSION);
        CHECK_STATUS(mvnmf_jsnmf_rank(p.h[0], 4, n[0], p.h[0], 1, 3, NULL, NULL, sc, w, need),
                     MVNMF_STATUS_NULL_POINTER);
        CHECK_STATUS(mvnmf_jsnmf_rank(p.h[0], 4, n[0], p.h[0], 1, 3, NULL, idx, sc, w, need - 1),
                     MVNMF_STATUS_WORKSPACE_TOO_SMALL);
        free(w);
        for (i = 0; i < 40; i++)
            CHECK(idx[i] == 77 && sc[i] == SENTINEL);
    }
#undef UNTOUCHED
#undef FIT
    prob_free(&p);
}

int HARNESS_JSNMF_ENTRY(int verbose)
{
    g_verbose = verbose;
    g_failures = 0;
    test_monotone_and_normalised();
    test_k0_is_independent_nmf();
    test_csc_equals_dense();
    test_retrieval();
    test_bad_input();
    printf("[%s] jsnmf harness: %d failed checks\n", LANG, g_failures);
    return g_failures;
}
