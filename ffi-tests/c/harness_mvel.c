/* C harness of MVEL (seed 002; src/ffi/mvel.rs) and its dense graph kind.
 *
 *   * the objective never increases (progress callback) on a dense graph
 *     (MVNMF_GRAPH_DENSE) and on the same graph as CSR, and both give the same
 *     objective trace (to rounding); the constraints hold (every column of H
 *     and row of Q in the unit ball); the report's terms add up;
 *   * predict = Q H computed here; thresholds and decisions are consistent
 *     (pred = score > tau);
 *   * mvnmf_fused_graph: symmetric, total weight n, within-view graph = the RBF
 *     graph with the median bandwidth computed here; bad views refused;
 *   * bad input (a label byte other than 0/1, a graph over other items, an
 *     asymmetric dense graph, NaN in a given start, a short workspace) gets its
 *     own status and leaves the outputs untouched.
 *
 * Built like the other harnesses (ffi-tests/build.rs): C99 and C++11, warnings
 * as errors; HARNESS_MVEL_ENTRY returns the number of failed checks. */
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
int HARNESS_MVEL_ENTRY(int verbose);
#ifdef __cplusplus
}
#endif

#define HARNESS_DENSE_HELPERS
#include "harness_common.h"

#define MAX_TRACE 256
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

/* n items in 3 clusters on a line: a dense RBF graph (total weight n), its
 * CSR copy, labels {0,1}, {1,2}, {3} by cluster with 40 % of them given. */
typedef struct {
    size_t n, c;
    double *w, *cw;
    size_t *rp, *ci;
    uint8_t *y;
    mvnmf_graph dense, csr;
} mprob;

static void mprob_make(mprob *p, size_t n, uint64_t seed)
{
    static const int sets[3][2] = { { 0, 1 }, { 1, 2 }, { 3, -1 } };
    lcg_t g = lcg_seeded(seed);
    double *x = dalloc(n), tot = 0.0;
    size_t u, v, k;
    memset(p, 0, sizeof *p);
    p->n = n;
    p->c = 4;
    for (u = 0; u < n; u++)
        x[u] = 3.0 * (double)(u % 3) + lcg_next(&g);
    p->w = dalloc(n * n);
    for (v = 0; v < n; v++)
        for (u = 0; u < n; u++)
            tot += p->w[u + v * n] = exp(-(x[u] - x[v]) * (x[u] - x[v]));
    for (u = 0; u < n * n; u++)
        p->w[u] *= (double)n / tot;
    for (v = 0; v < n; v++) /* exact symmetry */
        for (u = 0; u < v; u++)
            p->w[v + u * n] = p->w[u + v * n];
    p->rp = (size_t *)malloc((n + 1) * sizeof(size_t));
    p->ci = (size_t *)malloc(n * n * sizeof(size_t));
    p->cw = dalloc(n * n);
    for (u = 0, k = 0; u < n; u++) {
        p->rp[u] = k;
        for (v = 0; v < n; v++, k++) {
            p->ci[k] = v;
            p->cw[k] = p->w[v + u * n];
        }
    }
    p->rp[n] = k;
    p->y = (uint8_t *)calloc(p->c * n, 1);
    for (u = 0; u < n; u++)
        for (k = 0; k < 2; k++)
            if (sets[u % 3][k] >= 0 && lcg_next(&g) < 0.4)
                p->y[(size_t)sets[u % 3][k] + u * p->c] = 1;
    memset(&p->dense, 0, sizeof p->dense);
    p->dense.kind = MVNMF_GRAPH_DENSE;
    p->dense.n = n;
    p->dense.affinity_weights = p->w;
    memset(&p->csr, 0, sizeof p->csr);
    p->csr.kind = MVNMF_GRAPH_CSR;
    p->csr.n = n;
    p->csr.affinity_row_ptr = p->rp;
    p->csr.affinity_col_idx = p->ci;
    p->csr.affinity_weights = p->cw;
    free(x);
}

static void mprob_free(mprob *p)
{
    free(p->w);
    free(p->cw);
    free(p->rp);
    free(p->ci);
    free(p->y);
}

static uint32_t mvel_fit(const mprob *p, const mvnmf_graph *g, size_t r, const mvnmf_mvel_params *par, double *q,
                         double *h, trace_t *t, mvnmf_report *rep)
{
    size_t need = 0;
    void *w;
    uint32_t st = mvnmf_mvel_fit_workspace(p->c, g, r, par, &need);
    if (st != MVNMF_STATUS_OK)
        return st;
    w = malloc(need);
    if (t)
        t->n = 0;
    st = mvnmf_mvel_fit(p->y, p->c, g, r, par, q, h, w, need, t ? record : NULL, t, rep);
    free(w);
    return st;
}

static void test_monotone_dense_csr(void)
{
    mprob p;
    trace_t ta, tb;
    mvnmf_report ra, rb;
    mvnmf_mvel_params par = mvnmf_mvel_params_default();
    size_t r = 3, i, s, u;
    double *qa, *ha, *qb, *hb, scale = 1.0;
    note("mvel: monotone on dense and CSR graphs, the same trace, constraints");
    mprob_make(&p, 36, 3);
    qa = dalloc(p.c * r);
    ha = dalloc(r * p.n);
    qb = dalloc(p.c * r);
    hb = dalloc(r * p.n);
    par.max_iter = 40;
    par.tol = 0.0;
    par.theta1 = 5.0;
    set_ctx("mvel dense");
    CHECK_STATUS(mvel_fit(&p, &p.dense, r, &par, qa, ha, &ta, &ra), MVNMF_STATUS_OK);
    set_ctx("mvel csr");
    CHECK_STATUS(mvel_fit(&p, &p.csr, r, &par, qb, hb, &tb, &rb), MVNMF_STATUS_OK);
    CHECK(ta.n == 41 && tb.n == 41);
    for (i = 0; i < ta.n; i++)
        if (fabs(ta.obj[i]) > scale)
            scale = fabs(ta.obj[i]);
    for (i = 1; i < ta.n; i++) {
        CHECK(ta.obj[i] <= ta.obj[i - 1] + 1e-12 * scale);
        CHECK(close_to(ta.obj[i], tb.obj[i], 1e-9, 1e-12 * scale));
    }
    CHECK(ta.obj[40] < ta.obj[0]);
    CHECK(close_to(ra.objective.total,
                   mvnmf_objective_term(&ra.objective, MVNMF_TERM_LABEL_FIT) +
                       mvnmf_objective_term(&ra.objective, MVNMF_TERM_AFFINITY) +
                       mvnmf_objective_term(&ra.objective, MVNMF_TERM_LABEL_CORRELATION),
                   1e-12, 1e-12 * scale));
    CHECK(mvnmf_objective_term(&ra.objective, MVNMF_TERM_LABEL_FIT) < 0.0);
    for (u = 0; u < p.n; u++) {
        double nn = 0.0;
        for (i = 0; i < r; i++)
            nn += ha[i + u * r] * ha[i + u * r];
        CHECK(nn <= 1.0 + 1e-12);
    }
    for (s = 0; s < p.c; s++) {
        double nn = 0.0;
        for (i = 0; i < r; i++)
            nn += qa[s + i * p.c] * qa[s + i * p.c];
        CHECK(nn <= 1.0 + 1e-12);
    }

    /* predict = Q H; thresholds; decisions. */
    {
        size_t need = 0, c = p.c, n = p.n;
        double *sc = dalloc(c * n), tau[4];
        uint8_t *pred = (uint8_t *)malloc(c * n);
        void *w;
        set_ctx("mvel predict");
        CHECK_STATUS(mvnmf_mvel_predict_workspace(c, r, n, &need), MVNMF_STATUS_OK);
        w = malloc(need);
        CHECK_STATUS(mvnmf_mvel_predict(qa, ha, c, r, n, sc, w, need), MVNMF_STATUS_OK);
        free(w);
        for (u = 0; u < n; u++)
            for (s = 0; s < c; s++) {
                double want = 0.0;
                for (i = 0; i < r; i++)
                    want += qa[s + i * c] * ha[i + u * r];
                CHECK(fabs(sc[s + u * c] - want) <= 1e-13);
            }
        set_ctx("mvel thresholds");
        CHECK_STATUS(mvnmf_mvel_thresholds_workspace(n, &need), MVNMF_STATUS_OK);
        w = malloc(need);
        CHECK_STATUS(mvnmf_mvel_thresholds(sc, p.y, c, n, tau, w, need), MVNMF_STATUS_OK);
        free(w);
        CHECK_STATUS(mvnmf_mvel_decide(sc, tau, c, n, pred), MVNMF_STATUS_OK);
        for (u = 0; u < c * n; u++)
            CHECK(pred[u] == (sc[u] > tau[u % c]));
        free(sc);
        free(pred);
    }
    free(qa);
    free(ha);
    free(qb);
    free(hb);
    mprob_free(&p);
}

static void test_bad_input(void)
{
    mprob p;
    mvnmf_mvel_params par = mvnmf_mvel_params_default();
    mvnmf_report rep;
    size_t r = 3, need = 0, i;
    double *q, *h, saved;
    void *w;
    note("mvel: bad input gets its status, outputs untouched");
    mprob_make(&p, 24, 5);
    q = dalloc(p.c * r);
    h = dalloc(r * p.n);
    for (i = 0; i < p.c * r; i++)
        q[i] = SENTINEL;
    for (i = 0; i < r * p.n; i++)
        h[i] = SENTINEL;
#define UNTOUCHED() (all_in(q, p.c * r, SENTINEL, SENTINEL) && all_in(h, r * p.n, SENTINEL, SENTINEL))
    CHECK_STATUS(mvnmf_mvel_fit_workspace(p.c, &p.dense, r, &par, &need), MVNMF_STATUS_OK);
    w = malloc(need);
    set_ctx("label byte 2");
    p.y[5] = 2;
    CHECK_STATUS(mvnmf_mvel_fit(p.y, p.c, &p.dense, r, &par, q, h, w, need, NULL, NULL, &rep),
                 MVNMF_STATUS_BAD_LABEL);
    CHECK(UNTOUCHED());
    p.y[5] = 0;
    set_ctx("workspace one byte short");
    CHECK_STATUS(mvnmf_mvel_fit(p.y, p.c, &p.dense, r, &par, q, h, w, need - 1, NULL, NULL, &rep),
                 MVNMF_STATUS_WORKSPACE_TOO_SMALL);
    CHECK(UNTOUCHED());
    set_ctx("asymmetric dense graph");
    saved = p.w[1];
    p.w[1] += 0.5;
    CHECK_STATUS(mvnmf_mvel_fit(p.y, p.c, &p.dense, r, &par, q, h, w, need, NULL, NULL, &rep),
                 MVNMF_STATUS_BAD_PARAMETER);
    CHECK(UNTOUCHED());
    p.w[1] = saved;
    set_ctx("NaN in the given start");
    par.init = MVNMF_INIT_GIVEN;
    q[0] = NAN;
    CHECK_STATUS(mvnmf_mvel_fit(p.y, p.c, &p.dense, r, &par, q, h, w, need, NULL, NULL, &rep),
                 MVNMF_STATUS_NON_FINITE_INPUT);
    CHECK(all_in(h, r * p.n, SENTINEL, SENTINEL));
    q[0] = SENTINEL;
    par.init = MVNMF_INIT_RANDOM;
    set_ctx("negative theta");
    par.theta1 = -1.0;
    CHECK_STATUS(mvnmf_mvel_fit(p.y, p.c, &p.dense, r, &par, q, h, w, need, NULL, NULL, &rep),
                 MVNMF_STATUS_BAD_PARAMETER);
    CHECK(UNTOUCHED());
    par.theta1 = 1.0;
    set_ctx("NULL graph");
    CHECK_STATUS(mvnmf_mvel_fit(p.y, p.c, NULL, r, &par, q, h, w, need, NULL, NULL, &rep),
                 MVNMF_STATUS_NULL_POINTER);
    CHECK(UNTOUCHED());
    set_ctx("r = 0");
    CHECK_STATUS(mvnmf_mvel_fit_workspace(p.c, &p.dense, 0, &par, &need), MVNMF_STATUS_BAD_RANK);
#undef UNTOUCHED
    free(w);
    free(q);
    free(h);
    mprob_free(&p);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void test_fused_graph(void)
{
    const size_t n = 25, d1 = 4, d2 = 3;
    double *x1 = dalloc(d1 * n), *x2 = dalloc(d2 * n), *w = dalloc(n * n), *want = dalloc(n * n);
    double *dist = dalloc(n * n), *sorted = dalloc(n * n), tot = 0.0, vol = 0.0, g;
    mvnmf_view v[2];
    mvnmf_fused_graph_params p = mvnmf_fused_graph_params_default();
    size_t need = 0, i, u, k, m;
    lcg_t gen = lcg_seeded(9);
    void *wk;
    note("mvnmf_fused_graph: symmetric, weight n, median RBF, bad views");
    for (i = 0; i < d1 * n; i++)
        x1[i] = lcg_next(&gen) - 0.5;
    for (i = 0; i < d2 * n; i++)
        x2[i] = lcg_next(&gen) - 0.5;
    v[0] = dense_view(x1, d1, n);
    v[1] = dense_view(x2, d2, n);
    set_ctx("fused graph, cross views");
    CHECK_STATUS(mvnmf_fused_graph_workspace(v, 2, &p, &need), MVNMF_STATUS_OK);
    wk = malloc(need);
    CHECK_STATUS(mvnmf_fused_graph(v, 2, NULL, NULL, &p, w, wk, need), MVNMF_STATUS_OK);
    for (u = 0; u < n; u++)
        for (i = 0; i < n; i++) {
            CHECK(w[i + u * n] == w[u + i * n] && w[i + u * n] >= 0.0);
            tot += w[i + u * n];
        }
    CHECK(close_to(tot, (double)n, 1e-12, 0.0));
    free(wk);
    /* One view, within only: the median-bandwidth RBF graph, total weight n. */
    set_ctx("fused graph, one view");
    p.cross_view = 0;
    CHECK_STATUS(mvnmf_fused_graph_workspace(v, 1, &p, &need), MVNMF_STATUS_OK);
    wk = malloc(need);
    CHECK_STATUS(mvnmf_fused_graph(v, 1, NULL, NULL, &p, w, wk, need), MVNMF_STATUS_OK);
    for (u = 0, m = 0; u < n; u++)
        for (i = 0; i < n; i++) {
            double s = 0.0;
            for (k = 0; k < d1; k++)
                s += (x1[k + i * d1] - x1[k + u * d1]) * (x1[k + i * d1] - x1[k + u * d1]);
            dist[i + u * n] = s;
            if (i != u)
                sorted[m++] = s;
        }
    qsort(sorted, m, sizeof(double), cmp_double);
    g = 1.0 / sorted[(m - 1) / 2];
    for (i = 0; i < n * n; i++)
        vol += want[i] = exp(-g * dist[i]);
    for (i = 0; i < n * n; i++)
        CHECK(close_to(w[i], want[i] * (double)n / vol, 1e-11, 1e-15));
    /* Bad views: NaN, different item counts, CSC; w untouched. */
    for (i = 0; i < n * n; i++)
        w[i] = SENTINEL;
    p.cross_view = 1;
    set_ctx("fused graph, NaN");
    x2[3] = NAN;
    CHECK_STATUS(mvnmf_fused_graph(v, 2, NULL, NULL, &p, w, wk, need), MVNMF_STATUS_WORKSPACE_TOO_SMALL);
    free(wk);
    CHECK_STATUS(mvnmf_fused_graph_workspace(v, 2, &p, &need), MVNMF_STATUS_OK);
    wk = malloc(need);
    CHECK_STATUS(mvnmf_fused_graph(v, 2, NULL, NULL, &p, w, wk, need), MVNMF_STATUS_NON_FINITE_INPUT);
    x2[3] = 0.25;
    set_ctx("fused graph, item counts differ");
    v[1].cols = n - 1;
    CHECK_STATUS(mvnmf_fused_graph(v, 2, NULL, NULL, &p, w, wk, need), MVNMF_STATUS_DIMENSION_MISMATCH);
    v[1].cols = n;
    set_ctx("fused graph, zero ridge");
    p.cca_reg = 0.0;
    CHECK_STATUS(mvnmf_fused_graph(v, 2, NULL, NULL, &p, w, wk, need), MVNMF_STATUS_BAD_PARAMETER);
    CHECK(all_in(w, n * n, SENTINEL, SENTINEL));
    free(wk);
    free(x1);
    free(x2);
    free(w);
    free(want);
    free(dist);
    free(sorted);
}

int HARNESS_MVEL_ENTRY(int verbose)
{
    g_verbose = verbose;
    g_failures = 0;
    test_monotone_dense_csr();
    test_bad_input();
    test_fused_graph();
    printf("[%s] mvel harness: %d failed checks\n", LANG, g_failures);
    return g_failures;
}
