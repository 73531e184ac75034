/* C test harness of "errors that say where" (issue 33, item 2): a refused call
 * writes its report with where_arg (the 1-based position of the offending
 * argument in the C signature, as LAPACK's INFO = -i) and, for data,
 * where_view / where_row / where_col (0-based view, row and column of the
 * first bad entry; SIZE_MAX where they do not apply), and leaves every other
 * output untouched.
 *
 * Built like the other harnesses (ffi-tests/build.rs): twice, as C99 and as
 * C++11, with -Wall -Wextra -Wpedantic -Werror; `static` on everything but the
 * entry point HARNESS_WHERE_ENTRY (renamed per build), which returns the
 * number of failed checks and prints one line per failure.
 *
 *   1. mvnmf_mvsl_fit on three views: a NaN in view 2 (row 1, column 3) is
 *      NON_FINITE_INPUT at argument 1 (`views`), view 2, row 1, column 3, with
 *      u, v and the workspace's neighbours untouched; the same NaN in a CSC
 *      view 2; a negative entry of CSC view 1; a malformed CSC index; a bad
 *      params field (argument 5); a NULL u[1] (argument 6, view 1); k = 0
 *      (argument 4); a workspace one byte short (argument 9); n_views = 0
 *      (argument 2); a success says where_arg = 0;
 *   2. the other solvers: mvnmf_nmf_fit (one view: x is argument 1, params 3;
 *      a NULL work of nonzero size: argument 6, not v),
 *      mvnmf_joint_nmf_encode (a NaN in the basis u[1]: argument 5), the
 *      _f32 twin of mvnmf_mvsl_fit, mvnmf_deep_fit (n_layers = 0: argument 5),
 *      mvnmf_jsnmf_fit (a NaN in source 1) and mvnmf_pipeline_fit_report (a
 *      label out of range: argument 4, and the graph sizes 0);
 *   3. MVEL: mvnmf_mvel_fit (a label byte 2: argument 1 at its label and item;
 *      a NaN in a given h: argument 7; params 5, r = 0 at 4, workspace 9, a
 *      NULL h 7), its _f32 twin, and mvnmf_mvel_fit_anchored (a NaN weight z:
 *      argument 5 at its slot and item; an anchor index >= m: argument 4; s > m
 *      at 6, m = 0 at 7, params 9; a success says 0);
 *   4. mvnmf_check_views, for the calls that take no report: mvnmf_fused_graph
 *      answers a NaN in view 2 with NON_FINITE_INPUT alone, and the check of
 *      the same views says argument 1, view 2, row 1, column 3; a negative
 *      (nonneg 1 only), a malformed CSC index, a NaN in CSC view 2, nonneg 2
 *      (argument 3), n_views 0 (2), NULL views (1), the _f32 twin; a success
 *      says where_arg 0 over a stale report.
 */
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
int HARNESS_WHERE_ENTRY(int verbose);
#ifdef __cplusplus
}
#endif

#include "harness_common.h"

#define NV 3      /* views */
#define N 6       /* items */
#define K 2       /* rank */
#define MAXM 5    /* rows of the largest view */
static const size_t ROWS[NV] = {4, 3, 5};
static const double SENTINEL = -31.5;

/* The data: positive dense views, view v's entry (i, j) = 1 + v + i + 2j. */
typedef struct {
    double x[NV][MAXM * N];
    mvnmf_view views[NV];
    double u[NV][MAXM * K];
    double *up[NV];
    double v[K * N];
    /* a CSC copy of view 2 (every entry stored) */
    size_t cp[N + 1];
    size_t ri[MAXM * N];
    double cv[MAXM * N];
} prob;

static void prob_init(prob *p)
{
    size_t v, i, j;
    for (v = 0; v < NV; v++) {
        for (j = 0; j < N; j++)
            for (i = 0; i < ROWS[v]; i++)
                p->x[v][j * ROWS[v] + i] = 1.0 + (double)v + (double)i + 2.0 * (double)j;
        p->views[v] = dense_view(p->x[v], ROWS[v], N);
        for (i = 0; i < MAXM * K; i++)
            p->u[v][i] = SENTINEL;
        p->up[v] = p->u[v];
    }
    for (i = 0; i < K * N; i++)
        p->v[i] = SENTINEL;
}

/* View 2 as CSC (the same values; every entry stored). */
static void make_csc(prob *p, size_t v)
{
    size_t i, j, e = 0;
    for (j = 0; j < N; j++) {
        p->cp[j] = e;
        for (i = 0; i < ROWS[v]; i++, e++) {
            p->ri[e] = i;
            p->cv[e] = p->x[v][j * ROWS[v] + i];
        }
    }
    p->cp[N] = e;
    p->views[v].kind = MVNMF_VIEW_CSC;
    p->views[v].values = p->cv;
    p->views[v].col_stride = 0;
    p->views[v].col_ptr = p->cp;
    p->views[v].row_idx = p->ri;
}

static int outputs_untouched(const prob *p)
{
    size_t v, i;
    for (v = 0; v < NV; v++)
        for (i = 0; i < MAXM * K; i++)
            if (p->u[v][i] != SENTINEL)
                return 0;
    for (i = 0; i < K * N; i++)
        if (p->v[i] != SENTINEL)
            return 0;
    return 1;
}

/* A report whose every byte is 0xAB: what a call did not write. */
static mvnmf_report stale_report(void)
{
    mvnmf_report r;
    memset(&r, 0xAB, sizeof r);
    return r;
}

static int refusal_at(const mvnmf_report *r, uint32_t arg, size_t view, size_t row, size_t col)
{
    int ok = r->where_arg == arg && r->where_view == view && r->where_row == row && r->where_col == col;
    if (!ok)
        printf("[%s] where: arg %u view %zu row %zu col %zu; expected arg %u view %zu row %zu col %zu\n",
               LANG, (unsigned)r->where_arg, r->where_view, r->where_row, r->where_col, (unsigned)arg, view,
               row, col);
    /* the rest of a refusal's report is zero */
    return ok && r->iterations == 0 && r->stop == 0 && r->dead_views == 0 && r->objective.n_terms == 0 &&
           r->objective.total == 0.0 && r->initial.total == 0.0;
}

static mvnmf_graph no_graph(size_t n)
{
    mvnmf_graph g;
    memset(&g, 0, sizeof g);
    g.kind = MVNMF_GRAPH_NONE;
    g.n = n;
    return g;
}

/* mvnmf_mvsl_fit with a workspace of its query's size (minus `short_by`). */
static uint32_t mvsl_fit(prob *p, size_t n_views, size_t k, const mvnmf_mvsl_params *par, size_t short_by,
                         mvnmf_report *rep)
{
    mvnmf_graph g = no_graph(N);
    size_t bytes = 0;
    mvnmf_view good[NV];
    double xs[NV][MAXM * N];
    size_t v;
    uint32_t st;
    void *work;
    /* the query on these views (it does not read values), or on dense views of the same
     * shapes when it refuses their structure (then the call refuses it too) */
    st = (uint32_t)mvnmf_mvsl_fit_workspace(p->views, NV, &g, K, NULL, &bytes);
    if (st != MVNMF_STATUS_OK) {
        for (v = 0; v < NV; v++) {
            memcpy(xs[v], p->x[v], sizeof xs[v]);
            good[v] = dense_view(xs[v], ROWS[v], N);
        }
        st = (uint32_t)mvnmf_mvsl_fit_workspace(good, NV, &g, K, NULL, &bytes);
    }
    CHECK_STATUS(st, MVNMF_STATUS_OK);
    work = malloc(bytes + 1);
    st = (uint32_t)mvnmf_mvsl_fit(p->views, n_views, &g, k, par, p->up, p->v, work, bytes - short_by, NULL,
                                  NULL, rep);
    free(work);
    return st;
}

static void test_mvsl(void)
{
    prob p;
    mvnmf_report rep;
    mvnmf_mvsl_params par;
    uint32_t st;

    set_ctx("mvsl_fit: NaN in dense view 2");
    prob_init(&p);
    p.x[2][3 * ROWS[2] + 1] = NAN;
    p.x[2][5 * ROWS[2] + 4] = NAN; /* a later one: not the first */
    rep = stale_report();
    st = mvsl_fit(&p, NV, K, NULL, 0, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_NON_FINITE_INPUT);
    CHECK(refusal_at(&rep, 1, 2, 1, 3));
    CHECK(outputs_untouched(&p));

    set_ctx("mvsl_fit: NaN in CSC view 2");
    prob_init(&p);
    p.x[2][3 * ROWS[2] + 1] = NAN;
    make_csc(&p, 2);
    rep = stale_report();
    st = mvsl_fit(&p, NV, K, NULL, 0, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_NON_FINITE_INPUT);
    CHECK(refusal_at(&rep, 1, 2, 1, 3));
    CHECK(outputs_untouched(&p));

    set_ctx("mvsl_fit: a negative entry of view 1 comes before a NaN of view 2");
    prob_init(&p);
    p.x[1][4 * ROWS[1] + 2] = -1.0;
    p.x[2][0] = NAN;
    rep = stale_report();
    st = mvsl_fit(&p, NV, K, NULL, 0, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_NEGATIVE_INPUT);
    CHECK(refusal_at(&rep, 1, 1, 2, 4));
    CHECK(outputs_untouched(&p));

    set_ctx("mvsl_fit: malformed CSC view 2 (row indices of column 4 not increasing)");
    prob_init(&p);
    make_csc(&p, 2);
    p.ri[p.cp[4] + 2] = 0; /* column 4 holds rows 0, 1, 0, 3, 4 */
    rep = stale_report();
    st = mvsl_fit(&p, NV, K, NULL, 0, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_MALFORMED_CSC);
    CHECK(refusal_at(&rep, 1, 2, 0, 4));
    CHECK(outputs_untouched(&p));

    set_ctx("mvsl_fit: a bad params field (tol < 0)");
    prob_init(&p);
    par = mvnmf_mvsl_params_default();
    par.tol = -1.0;
    rep = stale_report();
    st = mvsl_fit(&p, NV, K, &par, 0, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_BAD_PARAMETER);
    CHECK(refusal_at(&rep, 5, SIZE_MAX, SIZE_MAX, SIZE_MAX));
    CHECK(outputs_untouched(&p));

    set_ctx("mvsl_fit: u[1] NULL");
    prob_init(&p);
    p.up[1] = NULL;
    rep = stale_report();
    st = mvsl_fit(&p, NV, K, NULL, 0, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_NULL_POINTER);
    CHECK(refusal_at(&rep, 6, 1, SIZE_MAX, SIZE_MAX));
    CHECK(outputs_untouched(&p));

    set_ctx("mvsl_fit: k = 0");
    prob_init(&p);
    rep = stale_report();
    st = mvsl_fit(&p, NV, 0, NULL, 0, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_BAD_RANK);
    CHECK(refusal_at(&rep, 4, SIZE_MAX, SIZE_MAX, SIZE_MAX));
    CHECK(outputs_untouched(&p));

    set_ctx("mvsl_fit: workspace one byte short");
    prob_init(&p);
    rep = stale_report();
    st = mvsl_fit(&p, NV, K, NULL, 1, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_WORKSPACE_TOO_SMALL);
    CHECK(refusal_at(&rep, 9, SIZE_MAX, SIZE_MAX, SIZE_MAX));
    CHECK(outputs_untouched(&p));

    set_ctx("mvsl_fit: n_views = 0");
    prob_init(&p);
    rep = stale_report();
    st = mvsl_fit(&p, 0, K, NULL, 0, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_ZERO_DIMENSION);
    CHECK(refusal_at(&rep, 2, SIZE_MAX, SIZE_MAX, SIZE_MAX));
    CHECK(outputs_untouched(&p));

    set_ctx("mvsl_fit: success says where_arg = 0");
    prob_init(&p);
    par = mvnmf_mvsl_params_default();
    par.max_iter = 3;
    rep = stale_report();
    st = mvsl_fit(&p, NV, K, &par, 0, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_OK);
    CHECK(rep.where_arg == 0 && rep.where_view == SIZE_MAX && rep.where_row == SIZE_MAX &&
          rep.where_col == SIZE_MAX && rep.iterations == 3);
}

static void test_others(void)
{
    prob p;
    mvnmf_report rep;
    mvnmf_nmf_params np = mvnmf_nmf_params_default();
    size_t bytes = 0, v;
    void *work;
    uint32_t st;

    set_ctx("nmf_fit (one view): NaN at row 2, column 5");
    prob_init(&p);
    p.x[0][5 * ROWS[0] + 2] = INFINITY;
    CHECK_STATUS(mvnmf_nmf_fit_workspace(&p.views[0], K, NULL, &bytes), MVNMF_STATUS_OK);
    work = malloc(bytes + 1);
    rep = stale_report();
    st = (uint32_t)mvnmf_nmf_fit(&p.views[0], K, NULL, p.u[0], p.v, work, bytes, NULL, NULL, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_NON_FINITE_INPUT);
    CHECK(refusal_at(&rep, 1, 0, 2, 5));
    CHECK(outputs_untouched(&p));

    set_ctx("nmf_fit (one view): bad params (eps < 0) is argument 3");
    p.x[0][5 * ROWS[0] + 2] = 1.0;
    np.eps = -1.0;
    rep = stale_report();
    st = (uint32_t)mvnmf_nmf_fit(&p.views[0], K, &np, p.u[0], p.v, work, bytes, NULL, NULL, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_BAD_PARAMETER);
    CHECK(refusal_at(&rep, 3, SIZE_MAX, SIZE_MAX, SIZE_MAX));
    CHECK(outputs_untouched(&p));

    set_ctx("nmf_fit (one view): a NULL work of nonzero size is argument 6 (work), not 5 (v)");
    rep = stale_report();
    st = (uint32_t)mvnmf_nmf_fit(&p.views[0], K, NULL, p.u[0], p.v, NULL, bytes, NULL, NULL, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_NULL_POINTER);
    CHECK(refusal_at(&rep, 6, SIZE_MAX, SIZE_MAX, SIZE_MAX));
    CHECK(outputs_untouched(&p));
    free(work);

    set_ctx("joint_nmf_encode: NaN in the basis u[1] (row 1, column 1)");
    prob_init(&p);
    for (v = 0; v < NV; v++) {
        size_t i;
        for (i = 0; i < ROWS[v] * K; i++)
            p.u[v][i] = 0.5;
    }
    p.u[1][1 * ROWS[1] + 1] = NAN;
    CHECK_STATUS(mvnmf_joint_nmf_encode_workspace(p.views, NV, K, NULL, &bytes), MVNMF_STATUS_OK);
    work = malloc(bytes + 1);
    rep = stale_report();
    st = (uint32_t)mvnmf_joint_nmf_encode(p.views, NV, K, NULL, (const double *const *)p.up, p.v, work, bytes,
                                          NULL, NULL, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_NON_FINITE_INPUT);
    CHECK(refusal_at(&rep, 5, 1, 1, 1));
    {
        size_t i;
        int ok = 1;
        for (i = 0; i < K * N; i++)
            ok &= p.v[i] == SENTINEL;
        CHECK(ok);
    }
    free(work);

    set_ctx("mvsl_fit_f32: NaN in view 2");
    {
        float xf[NV][MAXM * N], uf[NV][MAXM * K], vf[K * N];
        float *ufp[NV];
        mvnmf_view_f32 vs[NV];
        mvnmf_graph g = no_graph(N);
        size_t i;
        int ok = 1;
        for (v = 0; v < NV; v++) {
            for (i = 0; i < ROWS[v] * N; i++)
                xf[v][i] = (float)(1.0 + (double)i);
            for (i = 0; i < MAXM * K; i++)
                uf[v][i] = -3.0f;
            ufp[v] = uf[v];
            vs[v].kind = MVNMF_VIEW_DENSE;
            vs[v].rows = ROWS[v];
            vs[v].cols = N;
            vs[v].values = xf[v];
            vs[v].col_stride = ROWS[v];
            vs[v].col_ptr = NULL;
            vs[v].row_idx = NULL;
        }
        for (i = 0; i < K * N; i++)
            vf[i] = -3.0f;
        CHECK_STATUS(mvnmf_mvsl_fit_f32_workspace(vs, NV, &g, K, NULL, &bytes), MVNMF_STATUS_OK);
        xf[2][4 * ROWS[2] + 3] = (float)NAN;
        work = malloc(bytes + 1);
        rep = stale_report();
        st = (uint32_t)mvnmf_mvsl_fit_f32(vs, NV, &g, K, NULL, ufp, vf, work, bytes, NULL, NULL, &rep);
        CHECK_STATUS(st, MVNMF_STATUS_NON_FINITE_INPUT);
        CHECK(refusal_at(&rep, 1, 2, 3, 4));
        for (v = 0; v < NV; v++)
            for (i = 0; i < MAXM * K; i++)
                ok &= uf[v][i] == -3.0f;
        for (i = 0; i < K * N; i++)
            ok &= vf[i] == -3.0f;
        CHECK(ok);
        free(work);
    }

    set_ctx("deep_fit: n_layers = 0 is argument 5");
    {
        mvnmf_graph g = no_graph(N);
        size_t layers[1] = {K};
        prob_init(&p);
        rep = stale_report();
        st = (uint32_t)mvnmf_deep_fit(p.views, NV, &g, layers, 0, NULL, p.up, p.v, NULL, 0, NULL, NULL, &rep);
        CHECK_STATUS(st, MVNMF_STATUS_BAD_RANK);
        CHECK(refusal_at(&rep, 5, SIZE_MAX, SIZE_MAX, SIZE_MAX));
        CHECK(outputs_untouched(&p));
    }

    set_ctx("jsnmf_fit: NaN in source 1 (row 0, column 2)");
    {
        /* two sources sharing 4 features: 4 x 6 and 4 x 5 */
        double s0[4 * 6], s1[4 * 5], w[4 * 1], u0[4 * 1], u1[4 * 1], h0[2 * 6], h1[2 * 5];
        double *us[2], *hs[2];
        mvnmf_view src[2];
        size_t ranks[2] = {2, 2}, i;
        int ok = 1;
        for (i = 0; i < 24; i++)
            s0[i] = 1.0 + (double)i;
        for (i = 0; i < 20; i++)
            s1[i] = 2.0 + (double)i;
        src[0] = dense_view(s0, 4, 6);
        src[1] = dense_view(s1, 4, 5);
        for (i = 0; i < 4; i++)
            w[i] = u0[i] = u1[i] = SENTINEL;
        for (i = 0; i < 12; i++)
            h0[i] = SENTINEL;
        for (i = 0; i < 10; i++)
            h1[i] = SENTINEL;
        us[0] = u0;
        us[1] = u1;
        hs[0] = h0;
        hs[1] = h1;
        CHECK_STATUS(mvnmf_jsnmf_fit_workspace(src, 2, 1, ranks, NULL, &bytes), MVNMF_STATUS_OK);
        s1[2 * 4 + 0] = NAN;
        work = malloc(bytes + 1);
        rep = stale_report();
        st = (uint32_t)mvnmf_jsnmf_fit(src, 2, 1, ranks, NULL, NULL, w, us, hs, work, bytes, NULL, NULL, &rep);
        CHECK_STATUS(st, MVNMF_STATUS_NON_FINITE_INPUT);
        CHECK(refusal_at(&rep, 1, 1, 0, 2));
        for (i = 0; i < 4; i++)
            ok &= w[i] == SENTINEL && u0[i] == SENTINEL && u1[i] == SENTINEL;
        for (i = 0; i < 12; i++)
            ok &= h0[i] == SENTINEL;
        for (i = 0; i < 10; i++)
            ok &= h1[i] == SENTINEL;
        CHECK(ok);
        free(work);
    }

    set_ctx("pipeline_fit_report: a label out of range is argument 4");
    {
        mvnmf_kernel ks[NV];
        uint32_t labels[N] = {0, 1, 7, MVNMF_UNLABELED, 0, 1};
        double eta[NV] = {SENTINEL, SENTINEL, SENTINEL};
        mvnmf_pipeline_report full;
        mvnmf_pipeline_params pp = mvnmf_pipeline_params_default();
        prob_init(&p);
        for (v = 0; v < NV; v++)
            ks[v] = kernel_of(MVNMF_KERNEL_LINEAR, 0.0);
        CHECK_STATUS(mvnmf_pipeline_fit_workspace(p.views, NV, ks, 2, K, &pp, &bytes), MVNMF_STATUS_OK);
        work = malloc(bytes + 1);
        memset(&full, 0xAB, sizeof full);
        st = (uint32_t)mvnmf_pipeline_fit_report(p.views, NV, ks, labels, 2, K, &pp, p.up, p.v, eta, work, bytes,
                                                 NULL, NULL, &full);
        CHECK_STATUS(st, MVNMF_STATUS_BAD_LABEL);
        CHECK(refusal_at(&full.fit, 4, SIZE_MAX, SIZE_MAX, SIZE_MAX));
        CHECK(full.affinity_nnz == 0 && full.penalty_nnz == 0);
        CHECK(outputs_untouched(&p) && eta[0] == SENTINEL && eta[2] == SENTINEL);
        free(work);
    }
}

/* MVEL (fit and anchored fit): labels c x n bytes, a dense graph over n items. */
#define MC 3 /* labels */
#define MR 2 /* embedding dimension */
#define MM 3 /* anchors */
#define MS 2 /* anchors per item */

static int all_sentinel(const double *x, size_t len)
{
    size_t i;
    for (i = 0; i < len; i++)
        if (x[i] != SENTINEL)
            return 0;
    return 1;
}

static uint32_t mvel_call(const uint8_t *y, size_t r, const mvnmf_mvel_params *par, double *q, double *h,
                          size_t short_by, mvnmf_report *rep)
{
    static double w[N * N];
    mvnmf_graph g = no_graph(N);
    size_t i, j, bytes = 0;
    uint32_t st;
    void *work;
    for (j = 0; j < N; j++)
        for (i = 0; i < N; i++)
            w[j * N + i] = i == j ? 0.0 : 1.0 / (double)N;
    g.kind = MVNMF_GRAPH_DENSE;
    g.affinity_weights = w;
    CHECK_STATUS(mvnmf_mvel_fit_workspace(MC, &g, MR, NULL, &bytes), MVNMF_STATUS_OK);
    work = malloc(bytes + 1);
    *rep = stale_report();
    st = (uint32_t)mvnmf_mvel_fit(y, MC, &g, r, par, q, h, work, bytes - short_by, NULL, NULL, rep);
    free(work);
    return st;
}

/* mvnmf_mvel_fit_anchored on MC labels at dimension MR, its report made stale first. */
static uint32_t anchored_call(const uint8_t *y, size_t n, const size_t *idx, const double *z, size_t s, size_t m,
                              const mvnmf_mvel_params *par, double *q, double *a, void *work, size_t bytes,
                              mvnmf_report *rep)
{
    *rep = stale_report();
    return (uint32_t)mvnmf_mvel_fit_anchored(y, MC, n, idx, z, s, m, MR, par, q, a, work, bytes, NULL, NULL, rep);
}

static void test_mvel(void)
{
    uint8_t y[MC * N];
    double q[MC * MR], h[MR * N], a[MR * MM], z[MS * N];
    size_t idx[MS * N], i, bytes = 0;
    mvnmf_mvel_params par = mvnmf_mvel_params_default();
    mvnmf_report rep;
    uint32_t st;
    void *work;

    for (i = 0; i < MC * N; i++)
        y[i] = (uint8_t)(i % 4 == 0);
#define RESET()                                                                                                \
    do {                                                                                                       \
        for (i = 0; i < MC * MR; i++)                                                                          \
            q[i] = SENTINEL;                                                                                   \
        for (i = 0; i < MR * N; i++)                                                                           \
            h[i] = SENTINEL;                                                                                   \
    } while (0)
#define UNTOUCHED() (all_sentinel(q, MC * MR) && all_sentinel(h, MR * N))

    set_ctx("mvel_fit: a label byte 2 is argument 1 at its label and item");
    RESET();
    y[4 * MC + 1] = 2;
    y[5 * MC + 2] = 3; /* a later one: not the first */
    st = mvel_call(y, MR, NULL, q, h, 0, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_BAD_LABEL);
    CHECK(refusal_at(&rep, 1, SIZE_MAX, 1, 4));
    CHECK(UNTOUCHED());
    y[4 * MC + 1] = 0;
    y[5 * MC + 2] = 0;

    set_ctx("mvel_fit: a NaN in the given h is argument 7 at its row and column");
    for (i = 0; i < MC * MR; i++)
        q[i] = 0.25;
    for (i = 0; i < MR * N; i++)
        h[i] = 0.25;
    h[2 * MR + 1] = NAN;
    par.init = MVNMF_INIT_GIVEN;
    st = mvel_call(y, MR, &par, q, h, 0, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_NON_FINITE_INPUT);
    CHECK(refusal_at(&rep, 7, SIZE_MAX, 1, 2));
    CHECK(q[0] == 0.25 && h[0] == 0.25);
    par.init = MVNMF_INIT_RANDOM;

    set_ctx("mvel_fit: a negative theta1 is argument 5 (params)");
    RESET();
    par.theta1 = -1.0;
    st = mvel_call(y, MR, &par, q, h, 0, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_BAD_PARAMETER);
    CHECK(refusal_at(&rep, 5, SIZE_MAX, SIZE_MAX, SIZE_MAX));
    CHECK(UNTOUCHED());
    par.theta1 = 1.0;

    set_ctx("mvel_fit: r = 0 is argument 4, a workspace one byte short argument 9, NULL h argument 7");
    RESET();
    st = mvel_call(y, 0, NULL, q, h, 0, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_BAD_RANK);
    CHECK(refusal_at(&rep, 4, SIZE_MAX, SIZE_MAX, SIZE_MAX));
    st = mvel_call(y, MR, NULL, q, h, 1, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_WORKSPACE_TOO_SMALL);
    CHECK(refusal_at(&rep, 9, SIZE_MAX, SIZE_MAX, SIZE_MAX));
    st = mvel_call(y, MR, NULL, q, NULL, 0, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_NULL_POINTER);
    CHECK(refusal_at(&rep, 7, SIZE_MAX, SIZE_MAX, SIZE_MAX));
    CHECK(UNTOUCHED());

    set_ctx("mvel_fit_f32: a label byte 7 is argument 1 (a CSR graph: the twin takes no dense weights)");
    {
        static double wd[N * N];
        static size_t ci[N * N];
        float qf[MC * MR], hf[MR * N];
        size_t rp[N + 1], c, e = 0;
        mvnmf_graph g = no_graph(N);
        for (i = 0; i < N; i++) {
            rp[i] = e;
            for (c = 0; c < N; c++)
                if (c != i) {
                    ci[e] = c;
                    wd[e++] = 1.0 / (double)N;
                }
        }
        rp[N] = e;
        g.kind = MVNMF_GRAPH_CSR;
        g.affinity_row_ptr = rp;
        g.affinity_col_idx = ci;
        g.affinity_weights = wd;
        CHECK_STATUS(mvnmf_mvel_fit_f32_workspace(MC, &g, MR, NULL, &bytes), MVNMF_STATUS_OK);
        work = malloc(bytes + 1);
        for (i = 0; i < MC * MR; i++)
            qf[i] = (float)SENTINEL;
        y[3 * MC + 2] = 7;
        rep = stale_report();
        st = (uint32_t)mvnmf_mvel_fit_f32(y, MC, &g, MR, NULL, qf, hf, work, bytes, NULL, NULL, &rep);
        CHECK_STATUS(st, MVNMF_STATUS_BAD_LABEL);
        CHECK(refusal_at(&rep, 1, SIZE_MAX, 2, 3));
        CHECK(qf[0] == (float)SENTINEL);
        y[3 * MC + 2] = 0;
        free(work);
    }

    /* the anchored fit: item u's anchors idx[k + u*MS] = (u + k) % MM, weights 1/2 */
    for (i = 0; i < MS * N; i++) {
        idx[i] = (i / MS + i % MS) % MM;
        z[i] = 0.5;
    }
    CHECK_STATUS(mvnmf_mvel_fit_anchored_workspace(N, MC, MR, MM, NULL, &bytes), MVNMF_STATUS_OK);
    work = malloc(bytes + 1);
    for (i = 0; i < MR * MM; i++)
        a[i] = SENTINEL;
    RESET();

    set_ctx("mvel_fit_anchored: a NaN weight is argument 5 at its slot and item");
    z[3 * MS + 1] = NAN;
    st = anchored_call(y, N, idx, z, MS, MM, NULL, q, a, work, bytes, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_NON_FINITE_INPUT);
    CHECK(refusal_at(&rep, 5, SIZE_MAX, 1, 3));
    z[3 * MS + 1] = 0.5;

    set_ctx("mvel_fit_anchored: an anchor index >= m is argument 4 at its slot and item");
    idx[2 * MS + 0] = MM;
    st = anchored_call(y, N, idx, z, MS, MM, NULL, q, a, work, bytes, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_BAD_PARAMETER);
    CHECK(refusal_at(&rep, 4, SIZE_MAX, 0, 2));
    idx[2 * MS + 0] = 2 % MM;

    set_ctx("mvel_fit_anchored: s > m is argument 6, m = 0 argument 7, params argument 9");
    st = anchored_call(y, N / 2, idx, z, MM + 1, MM, NULL, q, a, work, bytes, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_BAD_PARAMETER);
    CHECK(refusal_at(&rep, 6, SIZE_MAX, SIZE_MAX, SIZE_MAX));
    st = anchored_call(y, N, idx, z, MS, 0, NULL, q, a, work, bytes, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_ZERO_DIMENSION);
    CHECK(refusal_at(&rep, 7, SIZE_MAX, SIZE_MAX, SIZE_MAX));
    par.theta2 = -1.0;
    st = anchored_call(y, N, idx, z, MS, MM, &par, q, a, work, bytes, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_BAD_PARAMETER);
    CHECK(refusal_at(&rep, 9, SIZE_MAX, SIZE_MAX, SIZE_MAX));
    par.theta2 = 0.1;
    CHECK(UNTOUCHED() && all_sentinel(a, MR * MM));

    set_ctx("mvel_fit_anchored: success says where_arg 0");
    st = anchored_call(y, N, idx, z, MS, MM, NULL, q, a, work, bytes, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_OK);
    CHECK(rep.where_arg == 0);
    free(work);
#undef RESET
#undef UNTOUCHED
}

/* mvnmf_check_views(p->views, n_views, nonneg) into a stale report. */
static uint32_t check_views(const prob *p, size_t n_views, uint32_t nonneg, mvnmf_report *rep)
{
    *rep = stale_report();
    return (uint32_t)mvnmf_check_views(p->views, n_views, nonneg, rep);
}

static void test_check_views(void)
{
    prob p;
    mvnmf_report rep;
    uint32_t st;
    size_t bytes = 0;
    double w[N * N];
    void *work;

    set_ctx("check_views: a call without a report says what; the check says where");
    prob_init(&p);
    CHECK_STATUS(mvnmf_fused_graph_workspace(p.views, NV, NULL, &bytes), MVNMF_STATUS_OK);
    work = malloc(bytes + 1);
    p.x[2][3 * ROWS[2] + 1] = NAN;
    p.x[2][5 * ROWS[2] + 4] = NAN; /* a later one: not the first */
    st = (uint32_t)mvnmf_fused_graph(p.views, NV, NULL, NULL, NULL, w, work, bytes);
    free(work);
    CHECK_STATUS(st, MVNMF_STATUS_NON_FINITE_INPUT);
    st = check_views(&p, NV, 0, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_NON_FINITE_INPUT);
    CHECK(refusal_at(&rep, 1, 2, 1, 3));

    set_ctx("check_views: NaN in CSC view 2");
    prob_init(&p);
    p.x[2][3 * ROWS[2] + 1] = NAN;
    make_csc(&p, 2);
    st = check_views(&p, NV, 1, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_NON_FINITE_INPUT);
    CHECK(refusal_at(&rep, 1, 2, 1, 3));

    set_ctx("check_views: a negative entry of view 1 is refused with nonneg 1 only");
    prob_init(&p);
    p.x[1][4 * ROWS[1] + 2] = -1.0;
    st = check_views(&p, NV, 1, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_NEGATIVE_INPUT);
    CHECK(refusal_at(&rep, 1, 1, 2, 4));
    st = check_views(&p, NV, 0, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_OK);
    CHECK(rep.where_arg == 0 && rep.where_view == SIZE_MAX && rep.iterations == 0);

    set_ctx("check_views: malformed CSC view 2 (row indices of column 4 not increasing)");
    prob_init(&p);
    make_csc(&p, 2);
    p.ri[p.cp[4] + 2] = 0;
    st = check_views(&p, NV, 0, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_MALFORMED_CSC);
    CHECK(refusal_at(&rep, 1, 2, 0, 4));

    set_ctx("check_views: nonneg 2, n_views 0, NULL views");
    prob_init(&p);
    st = check_views(&p, NV, 2, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_BAD_PARAMETER);
    CHECK(refusal_at(&rep, 3, SIZE_MAX, SIZE_MAX, SIZE_MAX));
    st = check_views(&p, 0, 0, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_ZERO_DIMENSION);
    CHECK(refusal_at(&rep, 2, SIZE_MAX, SIZE_MAX, SIZE_MAX));
    rep = stale_report();
    st = (uint32_t)mvnmf_check_views(NULL, NV, 0, &rep);
    CHECK_STATUS(st, MVNMF_STATUS_NULL_POINTER);
    CHECK(refusal_at(&rep, 1, SIZE_MAX, SIZE_MAX, SIZE_MAX));

    set_ctx("check_views_f32: an infinity in view 1; a success says 0");
    {
        float xf[2][MAXM * N];
        mvnmf_view_f32 vf[2];
        size_t i, v;
        for (v = 0; v < 2; v++) {
            for (i = 0; i < MAXM * N; i++)
                xf[v][i] = (float)i;
            vf[v] = dense_view_f32(xf[v], MAXM, N);
        }
        rep = stale_report();
        CHECK_STATUS(mvnmf_check_views_f32(vf, 2, 1, &rep), MVNMF_STATUS_OK);
        CHECK(rep.where_arg == 0);
        xf[1][3 * MAXM + 4] = (float)INFINITY;
        rep = stale_report();
        CHECK_STATUS(mvnmf_check_views_f32(vf, 2, 0, &rep), MVNMF_STATUS_NON_FINITE_INPUT);
        CHECK(refusal_at(&rep, 1, 1, 4, 3));
    }
}

int HARNESS_WHERE_ENTRY(int verbose)
{
    g_failures = 0;
    g_verbose = verbose;
    test_mvsl();
    test_others();
    test_mvel();
    test_check_views();
    if (verbose || g_failures)
        printf("[%s] mvnmf C ABI harness (where a refusal points): %d failed checks\n", LANG, g_failures);
    fflush(stdout);
    return g_failures;
}
