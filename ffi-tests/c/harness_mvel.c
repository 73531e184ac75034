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
 *   * anchors (mvnmf_anchors_kmeans, mvnmf_anchor_graph, mvnmf_mvel_fit_anchored,
 *     mvnmf_mvel_embed_anchored): every z column a distribution over distinct
 *     anchors, best first; the anchored fit monotone with ||a_k|| <= 1 and
 *     H = A Z computed here, in the unit ball; new items with the training
 *     scales get the training rows; every item its own anchor gives the item
 *     fit's trace on an all-zero graph; bad input refused, outputs untouched;
 *   * mvnmf_fused_knn_graph: symmetric, no self-loops, total weight n; MVEL on it
 *     monotone; a short output refused and untouched;
 *   * mvnmf_mvel_label_freq_holdout and mvnmf_mvel_count_thresholds (and _f32)
 *     equal references written out here; the count rule adds exactly its
 *     count; the _f32 fit is monotone and near the double fit's objective;
 *     bad input refused, outputs untouched;
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
        set_ctx("mvel decide_pu");
        CHECK_STATUS(mvnmf_mvel_decide_pu_workspace(n, &need), MVNMF_STATUS_OK);
        w = malloc(need);
        {
            double used[8], bad_f[8], keep_tau[8];
            uint8_t *keep_pred = (uint8_t *)malloc(c * n);
            CHECK(c <= 8);
            CHECK_STATUS(mvnmf_mvel_decide_pu(sc, p.y, c, n, NULL, tau, used, pred, w, need), MVNMF_STATUS_OK);
            for (u = 0; u < c * n; u++) /* given positives kept, the rest by the threshold */
                CHECK(pred[u] == (p.y[u] || sc[u] > tau[u % c]));
            for (s = 0; s < c; s++)
                CHECK(used[s] >= 0.0 && used[s] <= 1.0);
            /* Bad input: outputs untouched. */
            memcpy(keep_tau, tau, c * sizeof(double));
            memcpy(keep_pred, pred, c * n);
            for (s = 0; s < c; s++)
                bad_f[s] = 0.5;
            bad_f[0] = 1.5;
            CHECK_STATUS(mvnmf_mvel_decide_pu(sc, p.y, c, n, bad_f, tau, NULL, pred, w, need),
                         MVNMF_STATUS_BAD_PARAMETER);
            used[0] = sc[1];
            sc[1] = NAN;
            CHECK_STATUS(mvnmf_mvel_decide_pu(sc, p.y, c, n, NULL, tau, NULL, pred, w, need),
                         MVNMF_STATUS_NON_FINITE_INPUT);
            sc[1] = used[0];
            CHECK_STATUS(mvnmf_mvel_decide_pu(sc, p.y, c, n, NULL, tau, NULL, pred, w, need - 1),
                         MVNMF_STATUS_WORKSPACE_TOO_SMALL);
            CHECK(memcmp(keep_tau, tau, c * sizeof(double)) == 0 && memcmp(keep_pred, pred, c * n) == 0);
            free(keep_pred);
        }
        free(w);
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

/* Two views of the mprob items (3 clusters): x1 4 × n, x2 3 × n. */
static void two_views(size_t n, uint64_t seed, double *x1, double *x2)
{
    lcg_t g = lcg_seeded(seed);
    size_t u, k;
    for (u = 0; u < n; u++) {
        double c = (double)(u % 3);
        for (k = 0; k < 4; k++)
            x1[k + u * 4] = (k % 2 ? -1.0 : 1.0) * c * (0.5 + 0.25 * (double)k) + 0.3 * (lcg_next(&g) - 0.5);
        for (k = 0; k < 3; k++)
            x2[k + u * 3] = c * (1.0 - 0.4 * (double)k) + 0.3 * (lcg_next(&g) - 0.5);
    }
}

static void test_anchors(void)
{
    const size_t n = 60, m = 9, s = 3, r = 3, k_new = 10;
    mprob p;
    double *x1 = dalloc(4 * n), *x2 = dalloc(3 * n), *a1 = dalloc(4 * m), *a2 = dalloc(3 * m);
    double *z = dalloc(s * n), *z2 = dalloc(s * k_new), *q = dalloc(4 * r), *a = dalloc(r * m);
    double *h = dalloc(r * n), *h2 = dalloc(r * k_new), scales[8], scales2[8];
    size_t *idx = (size_t *)malloc(s * n * sizeof(size_t)), *idx2 = (size_t *)malloc(s * k_new * sizeof(size_t));
    double *anchors[2];
    mvnmf_view v[2], av[2], nv[2];
    mvnmf_kmeans_params kp = mvnmf_kmeans_params_default();
    mvnmf_fused_graph_params fp = mvnmf_fused_graph_params_default();
    mvnmf_mvel_params par = mvnmf_mvel_params_default();
    mvnmf_report rep;
    trace_t t;
    size_t need = 0, u, i, k;
    void *wk;
    note("anchors: k-means anchors, anchor graph, anchored fit, embedding, new items");
    mprob_make(&p, n, 31);
    two_views(n, 32, x1, x2);
    v[0] = dense_view(x1, 4, n);
    v[1] = dense_view(x2, 3, n);
    anchors[0] = a1;
    anchors[1] = a2;
    set_ctx("anchors by k-means");
    kp.restarts = 3;
    CHECK_STATUS(mvnmf_anchors_kmeans_workspace(v, 2, m, &kp, &need), MVNMF_STATUS_OK);
    wk = malloc(need);
    CHECK_STATUS(mvnmf_anchors_kmeans(v, 2, m, &kp, anchors, wk, need, NULL), MVNMF_STATUS_OK);
    free(wk);
    CHECK(all_in(a1, 4 * m, -1e300, 1e300) && all_in(a2, 3 * m, -1e300, 1e300));
    av[0] = dense_view(a1, 4, m);
    av[1] = dense_view(a2, 3, m);

    set_ctx("anchor graph");
    CHECK(mvnmf_anchor_scales_len(2) == 8);
    for (i = 0; i < 8; i++)
        scales[i] = 0.0;
    CHECK_STATUS(mvnmf_anchor_graph_workspace(v, 2, n, m, NULL, &fp, &need), MVNMF_STATUS_OK);
    wk = malloc(need);
    CHECK_STATUS(mvnmf_anchor_graph(v, 2, NULL, av, s, NULL, &fp, scales, idx, z, wk, need), MVNMF_STATUS_OK);
    free(wk);
    for (u = 0; u < n; u++) {
        double tot = 0.0;
        for (k = 0; k < s; k++) {
            CHECK(idx[k + u * s] < m && z[k + u * s] >= 0.0);
            if (k > 0)
                CHECK(z[k + u * s] <= z[k - 1 + u * s] && idx[k + u * s] != idx[k - 1 + u * s]);
            tot += z[k + u * s];
        }
        CHECK(close_to(tot, 1.0, 1e-14, 0.0));
    }
    for (i = 0; i < 8; i++)
        CHECK(scales[i] > 0.0);

    set_ctx("anchored fit");
    par.max_iter = 40;
    par.tol = 0.0;
    par.theta1 = 2.0;
    par.unknown_weight = 0.2;
    CHECK_STATUS(mvnmf_mvel_fit_anchored_workspace(n, p.c, r, m, &par, &need), MVNMF_STATUS_OK);
    wk = malloc(need);
    t.n = 0;
    CHECK_STATUS(mvnmf_mvel_fit_anchored(p.y, p.c, n, idx, z, s, m, r, &par, q, a, wk, need, record, &t, &rep),
                 MVNMF_STATUS_OK);
    free(wk);
    CHECK(t.n == 41);
    for (i = 1; i < t.n; i++)
        CHECK(t.obj[i] <= t.obj[i - 1] + 1e-12 * fabs(t.obj[0]));
    CHECK(t.obj[t.n - 1] < t.obj[0]);
    CHECK(close_to(rep.objective.total, t.obj[t.n - 1], 1e-14, 0.0));
    for (k = 0; k < m; k++) {
        double nn = 0.0;
        for (i = 0; i < r; i++)
            nn += a[i + k * r] * a[i + k * r];
        CHECK(nn <= 1.0 + 1e-12);
    }
    CHECK_STATUS(mvnmf_mvel_embed_anchored(a, r, m, idx, z, s, n, h), MVNMF_STATUS_OK);
    for (u = 0; u < n; u++) {
        double nn = 0.0, want;
        for (i = 0; i < r; i++) {
            want = 0.0;
            for (k = 0; k < s; k++)
                want += z[k + u * s] * a[i + idx[k + u * s] * r];
            CHECK(close_to(h[i + u * r], want, 1e-14, 1e-300));
            nn += h[i + u * r] * h[i + u * r];
        }
        CHECK(nn <= 1.0 + 1e-12);
    }

    /* New items = the last k_new items, with the training views and scales:
     * the same anchors and weights (to rounding), hence the same embedding. */
    set_ctx("anchor graph, new items");
    nv[0] = dense_view(x1 + 4 * (n - k_new), 4, k_new);
    nv[1] = dense_view(x2 + 3 * (n - k_new), 3, k_new);
    memcpy(scales2, scales, sizeof scales);
    CHECK_STATUS(mvnmf_anchor_graph_workspace(nv, 2, n, m, NULL, &fp, &need), MVNMF_STATUS_OK);
    wk = malloc(need + 64);
    CHECK_STATUS(mvnmf_anchor_graph(nv, 2, v, av, s, NULL, &fp, scales2, idx2, z2, wk, need), MVNMF_STATUS_OK);
    for (i = 0; i < s * k_new; i++) {
        CHECK(idx2[i] == idx[i + s * (n - k_new)]);
        CHECK(close_to(z2[i], z[i + s * (n - k_new)], 1e-13, 0.0));
    }
    CHECK(memcmp(scales2, scales, sizeof scales) == 0);
    CHECK_STATUS(mvnmf_mvel_embed_anchored(a, r, m, idx2, z2, s, k_new, h2), MVNMF_STATUS_OK);
    for (i = 0; i < r * k_new; i++)
        CHECK(close_to(h2[i], h[i + r * (n - k_new)], 1e-12, 1e-15));

    /* Bad input; outputs untouched. */
    for (i = 0; i < s * k_new; i++) {
        z2[i] = SENTINEL;
        idx2[i] = 77;
    }
    set_ctx("anchor graph, s > m");
    CHECK_STATUS(mvnmf_anchor_graph(nv, 2, v, av, m + 1, NULL, &fp, scales2, idx2, z2, wk, need),
                 MVNMF_STATUS_BAD_PARAMETER);
    set_ctx("anchor graph, NaN in a view");
    x2[3 * (n - 1)] = NAN;
    CHECK_STATUS(mvnmf_anchor_graph(nv, 2, v, av, s, NULL, &fp, scales2, idx2, z2, wk, need),
                 MVNMF_STATUS_NON_FINITE_INPUT);
    x2[3 * (n - 1)] = 0.5;
    set_ctx("anchor graph, negative scale");
    scales2[1] = -1.0;
    CHECK_STATUS(mvnmf_anchor_graph(nv, 2, v, av, s, NULL, &fp, scales2, idx2, z2, wk, need),
                 MVNMF_STATUS_BAD_PARAMETER);
    scales2[1] = scales[1];
    set_ctx("anchor graph, anchors of other features");
    av[1].rows = 2;
    CHECK_STATUS(mvnmf_anchor_graph(nv, 2, v, av, s, NULL, &fp, scales2, idx2, z2, wk, need),
                 MVNMF_STATUS_DIMENSION_MISMATCH);
    av[1].rows = 3;
    CHECK(all_in(z2, s * k_new, SENTINEL, SENTINEL));
    for (i = 0; i < s * k_new; i++)
        CHECK(idx2[i] == 77);
    free(wk);
    set_ctx("anchors by k-means, m > n");
    CHECK_STATUS(mvnmf_anchors_kmeans_workspace(v, 2, n + 1, &kp, &need), MVNMF_STATUS_BAD_PARAMETER);
    {
        double qs[16], as_[64], z4;
        for (i = 0; i < 16; i++)
            qs[i] = SENTINEL;
        for (i = 0; i < r * m; i++)
            as_[i] = SENTINEL;
        CHECK_STATUS(mvnmf_mvel_fit_anchored_workspace(n, p.c, r, m, &par, &need), MVNMF_STATUS_OK);
        wk = malloc(need);
        set_ctx("anchored fit, index >= m");
        idx[5] = m;
        CHECK_STATUS(mvnmf_mvel_fit_anchored(p.y, p.c, n, idx, z, s, m, r, &par, qs, as_, wk, need, NULL, NULL, NULL),
                     MVNMF_STATUS_BAD_PARAMETER);
        idx[5] = 0;
        set_ctx("anchored fit, label 2");
        p.y[7] = 2;
        CHECK_STATUS(mvnmf_mvel_fit_anchored(p.y, p.c, n, idx, z, s, m, r, &par, qs, as_, wk, need, NULL, NULL, NULL),
                     MVNMF_STATUS_BAD_LABEL);
        p.y[7] = 0;
        set_ctx("anchored fit, negative weight");
        z4 = z[4];
        z[4] = -0.5;
        CHECK_STATUS(mvnmf_mvel_fit_anchored(p.y, p.c, n, idx, z, s, m, r, &par, qs, as_, wk, need, NULL, NULL, NULL),
                     MVNMF_STATUS_NEGATIVE_INPUT);
        z[4] = z4;
        set_ctx("anchored fit, short workspace");
        CHECK_STATUS(mvnmf_mvel_fit_anchored(p.y, p.c, n, idx, z, s, m, r, &par, qs, as_, wk, 16, NULL, NULL, NULL),
                     MVNMF_STATUS_WORKSPACE_TOO_SMALL);
        CHECK(all_in(qs, p.c * r, SENTINEL, SENTINEL) && all_in(as_, r * m, SENTINEL, SENTINEL));
        free(wk);
    }
    mprob_free(&p);
    free(x1);
    free(x2);
    free(a1);
    free(a2);
    free(z);
    free(z2);
    free(q);
    free(a);
    free(h);
    free(h2);
    free(idx);
    free(idx2);
}

/* Every item its own anchor (m = n, s = 1, z = 1): G = I and the anchor
 * Laplacian vanishes, so the anchored fit is the item fit on an all-zero
 * dense graph — the same objective trace to rounding. */
static void test_anchors_reduce_to_items(void)
{
    const size_t n = 30, r = 3;
    mprob p;
    size_t *idx = (size_t *)malloc(n * sizeof(size_t)), need = 0, i;
    double *z = dalloc(n), *w0 = dalloc(n * n), *q1 = dalloc(4 * r), *q2 = dalloc(4 * r), *a = dalloc(r * n),
           *h = dalloc(r * n);
    mvnmf_mvel_params par = mvnmf_mvel_params_default();
    mvnmf_graph g;
    trace_t t1, t2;
    void *wk;
    note("anchors: every item its own anchor = the item fit without graph");
    set_ctx("identity anchors");
    mprob_make(&p, n, 41);
    for (i = 0; i < n; i++) {
        idx[i] = i;
        z[i] = 1.0;
    }
    for (i = 0; i < n * n; i++)
        w0[i] = 0.0;
    memset(&g, 0, sizeof g);
    g.kind = MVNMF_GRAPH_DENSE;
    g.n = n;
    g.affinity_weights = w0;
    par.max_iter = 30;
    par.tol = 0.0;
    par.theta2 = 0.5;
    par.unknown_weight = 0.3;
    CHECK_STATUS(mvnmf_mvel_fit_anchored_workspace(n, p.c, r, n, &par, &need), MVNMF_STATUS_OK);
    wk = malloc(need);
    t1.n = 0;
    CHECK_STATUS(mvnmf_mvel_fit_anchored(p.y, p.c, n, idx, z, 1, n, r, &par, q1, a, wk, need, record, &t1, NULL),
                 MVNMF_STATUS_OK);
    free(wk);
    CHECK_STATUS(mvel_fit(&p, &g, r, &par, q2, h, &t2, NULL), MVNMF_STATUS_OK);
    CHECK(t1.n == t2.n && t1.n == 31);
    for (i = 0; i < t1.n && i < t2.n; i++)
        CHECK(close_to(t1.obj[i], t2.obj[i], 1e-10, 1e-12));
    for (i = 0; i < r * n; i++)
        CHECK(close_to(a[i], h[i], 1e-9, 1e-12));
    mprob_free(&p);
    free(idx);
    free(z);
    free(w0);
    free(q1);
    free(q2);
    free(a);
    free(h);
}

/* The kNN-sparsified fused graph: symmetric, no self-loops, total weight n,
 * at most 2 s entries per item on average; MVEL on it monotone; a short
 * output refused, untouched. */
static void test_fused_knn_graph(void)
{
    const size_t n = 45, s = 4, r = 3;
    mprob p;
    double *x1 = dalloc(4 * n), *x2 = dalloc(3 * n), *w, *q = dalloc(4 * r), *h = dalloc(r * n), tot = 0.0;
    size_t cap = 0, need = 0, nnz = 0, u, k, *rp = (size_t *)malloc((n + 1) * sizeof(size_t)), *ci;
    mvnmf_view v[2];
    mvnmf_csr_buffers out;
    mvnmf_graph g;
    mvnmf_mvel_params par = mvnmf_mvel_params_default();
    trace_t t;
    void *wk;
    note("mvnmf_fused_knn_graph: symmetric kNN graph of the fused weights; MVEL on it");
    set_ctx("fused kNN graph");
    mprob_make(&p, n, 51);
    two_views(n, 52, x1, x2);
    v[0] = dense_view(x1, 4, n);
    v[1] = dense_view(x2, 3, n);
    CHECK_STATUS(mvnmf_fused_knn_graph_capacity(n, s, &cap), MVNMF_STATUS_OK);
    CHECK(cap == 2 * n * s);
    ci = (size_t *)malloc(cap * sizeof(size_t));
    w = dalloc(cap);
    out.row_ptr = rp;
    out.col_idx = ci;
    out.weights = w;
    out.capacity = cap;
    CHECK_STATUS(mvnmf_fused_knn_graph_workspace(v, 2, s, NULL, NULL, &need), MVNMF_STATUS_OK);
    wk = malloc(need);
    CHECK_STATUS(mvnmf_fused_knn_graph(v, 2, s, NULL, NULL, &out, &nnz, wk, need), MVNMF_STATUS_OK);
    CHECK(rp[0] == 0 && rp[n] == nnz && nnz <= cap);
    for (u = 0; u < n; u++) {
        CHECK(rp[u + 1] - rp[u] >= s);
        for (k = rp[u]; k < rp[u + 1]; k++) {
            size_t v2 = ci[k], l, found = 0;
            CHECK(v2 != u && v2 < n && w[k] > 0.0);
            if (k > rp[u])
                CHECK(ci[k] > ci[k - 1]);
            for (l = rp[v2]; l < rp[v2 + 1]; l++)
                if (ci[l] == u) {
                    found = 1;
                    CHECK(w[l] == w[k]);
                }
            CHECK(found);
            tot += w[k];
        }
    }
    CHECK(close_to(tot, (double)n, 1e-12, 0.0));
    memset(&g, 0, sizeof g);
    g.kind = MVNMF_GRAPH_CSR;
    g.n = n;
    g.affinity_row_ptr = rp;
    g.affinity_col_idx = ci;
    g.affinity_weights = w;
    par.max_iter = 30;
    par.tol = 0.0;
    par.unknown_weight = 0.2;
    CHECK_STATUS(mvel_fit(&p, &g, r, &par, q, h, &t, NULL), MVNMF_STATUS_OK);
    CHECK(t.n == 31);
    for (k = 1; k < t.n; k++)
        CHECK(t.obj[k] <= t.obj[k - 1] + 1e-12 * fabs(t.obj[0]));
    set_ctx("fused kNN graph, short output");
    for (k = 0; k < cap; k++)
        w[k] = SENTINEL;
    out.capacity = nnz / 2;
    CHECK_STATUS(mvnmf_fused_knn_graph(v, 2, s, NULL, NULL, &out, &nnz, wk, need), MVNMF_STATUS_BUFFER_TOO_SHORT);
    CHECK(all_in(w, cap, SENTINEL, SENTINEL));
    set_ctx("fused kNN graph, s >= n");
    CHECK_STATUS(mvnmf_fused_knn_graph_workspace(v, 2, n, NULL, NULL, &need), MVNMF_STATUS_BAD_PARAMETER);
    free(wk);
    mprob_free(&p);
    free(x1);
    free(x2);
    free(w);
    free(q);
    free(h);
    free(rp);
    free(ci);
}

/* The mixture-proportion estimate of models::mvel::label_freq_holdout written
 * out here (the reference the C program carried before the C ABI had it). */
static const double *g_ref_key;
static int ref_desc(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    if (g_ref_key[a] != g_ref_key[b])
        return g_ref_key[a] > g_ref_key[b] ? -1 : 1;
    return a < b ? -1 : a > b;
}

static void ref_holdout(const double *sc, const uint8_t *fitl, const uint8_t *held, size_t c, size_t n,
                        size_t min_held, double *freq)
{
    size_t s, u, *idx = (size_t *)malloc(n * sizeof(size_t));
    double *row = dalloc(n);
    for (s = 0; s < c; s++) {
        size_t pf = 0, h = 0, nu, m, k = 0, a = 0, pos = 0;
        double alpha = 1.0;
        for (u = 0; u < n; u++) {
            pf += fitl[s + u * c];
            h += held[s + u * c];
            row[u] = sc[s + u * c];
            idx[u] = u;
        }
        nu = n - pf;
        if (h == 0 || nu == 0) {
            freq[s] = 0.0;
            continue;
        }
        m = min_held < 1 ? 1 : min_held > h ? h : min_held;
        g_ref_key = row;
        qsort(idx, n, sizeof(size_t), ref_desc);
        while (pos < n) {
            double x = row[idx[pos]];
            while (pos < n && row[idx[pos]] == x) {
                if (!fitl[s + idx[pos] * c]) {
                    k++;
                    a += held[s + idx[pos] * c];
                }
                pos++;
            }
            if (a >= m) {
                double r = ((double)k / (double)nu) / ((double)a / (double)h);
                if (r < alpha)
                    alpha = r;
            }
        }
        if (alpha < (double)h / (double)nu)
            alpha = (double)h / (double)nu;
        freq[s] = (double)(pf + h) / ((double)pf + alpha * (double)nu);
        if (freq[s] > 1.0)
            freq[s] = 1.0;
    }
    free(idx);
    free(row);
}

/* The count rule of models::mvel::count_thresholds written out here. */
static void ref_count(const double *sc, const uint8_t *given, const double *lf, size_t c, size_t n, double *tau)
{
    size_t s, u, *idx = (size_t *)malloc(n * sizeof(size_t));
    double *row = dalloc(n);
    for (s = 0; s < c; s++) {
        size_t p = 0, nu = 0, m;
        tau[s] = INFINITY;
        for (u = 0; u < n; u++) {
            if (given[s + u * c])
                p++;
            else {
                row[nu] = sc[s + u * c];
                idx[nu] = nu;
                nu++;
            }
        }
        if (!(lf[s] > 0.0) || p == 0 || nu == 0)
            continue;
        m = (size_t)floor((double)p * (1.0 - lf[s]) / lf[s] + 0.5);
        if (m == 0)
            continue;
        if (m >= nu) {
            tau[s] = -INFINITY;
            continue;
        }
        g_ref_key = row;
        qsort(idx, nu, sizeof(size_t), ref_desc);
        tau[s] = row[idx[m - 1]] == row[idx[m]] ? row[idx[m]] : 0.5 * (row[idx[m - 1]] + row[idx[m]]);
    }
    free(idx);
    free(row);
}

/* mvnmf_mvel_label_freq_holdout and mvnmf_mvel_count_thresholds (and their
 * _f32 twins): equal to the references above on a fit's scores, the count
 * rule's decisions keep the given positives and add exactly the items above
 * tau, bad input gets its status with the outputs untouched. */
static void test_holdout_count(void)
{
    mprob p;
    mvnmf_mvel_params par = mvnmf_mvel_params_default();
    size_t r = 3, c, n, u, s, need = 0, i;
    double *q, *h, *sc, *scf, freq[4], want[4], tau[4], tref[4], lf[4], keep[4];
    float *sc32;
    uint8_t *fitl, *held, *pred, *keep_pred;
    lcg_t g = lcg_seeded(17);
    void *w;
    note("mvel: label_freq_holdout and count_thresholds (+ _f32) against references, bad input");
    mprob_make(&p, 45, 11);
    c = p.c;
    n = p.n;
    q = dalloc(c * r);
    h = dalloc(r * n);
    sc = dalloc(c * n);
    scf = dalloc(c * n);
    sc32 = (float *)dalloc(c * n); /* room for as many floats (doubles are larger) */
    fitl = (uint8_t *)dalloc(c * n);
    held = (uint8_t *)dalloc(c * n);
    pred = (uint8_t *)dalloc(c * n);
    keep_pred = (uint8_t *)dalloc(c * n);
    par.max_iter = 30;
    par.unknown_weight = 0.2;
    /* The labels a refit sees and the held-out rest (40 % of the given). */
    for (i = 0; i < c * n; i++) {
        held[i] = p.y[i] && lcg_next(&g) < 0.4;
        fitl[i] = p.y[i] && !held[i];
    }
    set_ctx("refit on the kept labels");
    {
        uint8_t *save = p.y;
        p.y = fitl;
        CHECK_STATUS(mvel_fit(&p, &p.dense, r, &par, q, h, NULL, NULL), MVNMF_STATUS_OK);
        p.y = save;
    }
    CHECK_STATUS(mvnmf_mvel_predict_workspace(c, r, n, &need), MVNMF_STATUS_OK);
    w = malloc(need);
    CHECK_STATUS(mvnmf_mvel_predict(q, h, c, r, n, sc, w, need), MVNMF_STATUS_OK);
    free(w);
    for (i = 0; i < c * n; i++) {
        sc32[i] = (float)sc[i];
        scf[i] = (double)sc32[i];
    }

    set_ctx("label_freq_holdout");
    CHECK_STATUS(mvnmf_mvel_label_freq_holdout_workspace(0, &need), MVNMF_STATUS_ZERO_DIMENSION);
    CHECK_STATUS(mvnmf_mvel_label_freq_holdout_workspace(n, &need), MVNMF_STATUS_OK);
    w = malloc(need);
    for (i = 1; i <= 3; i += 2) {
        ref_holdout(sc, fitl, held, c, n, i, want);
        CHECK_STATUS(mvnmf_mvel_label_freq_holdout(sc, fitl, held, c, n, i, freq, w, need), MVNMF_STATUS_OK);
        for (s = 0; s < c; s++)
            CHECK(freq[s] == want[s] && freq[s] >= 0.0 && freq[s] <= 1.0);
        ref_holdout(scf, fitl, held, c, n, i, want);
        CHECK_STATUS(mvnmf_mvel_label_freq_holdout_f32(sc32, fitl, held, c, n, i, freq, w, need),
                     MVNMF_STATUS_OK);
        for (s = 0; s < c; s++)
            CHECK(freq[s] == want[s]);
    }
    for (s = 0; s < c; s++) { /* an estimate exactly where the label has a held-out positive */
        size_t hs = 0;
        for (u = 0; u < n; u++)
            hs += held[s + u * c];
        CHECK((freq[s] > 0.0) == (hs > 0));
    }
    /* Bad input: outputs untouched. */
    memcpy(keep, freq, sizeof freq);
    set_ctx("holdout: an entry both held out and kept");
    for (i = 0; i < c * n && !held[i]; i++)
        ;
    CHECK(i < c * n);
    fitl[i] = 1;
    CHECK_STATUS(mvnmf_mvel_label_freq_holdout(sc, fitl, held, c, n, 1, freq, w, need), MVNMF_STATUS_BAD_LABEL);
    fitl[i] = 0;
    set_ctx("holdout: a flag 2");
    held[i] = 2;
    CHECK_STATUS(mvnmf_mvel_label_freq_holdout(sc, fitl, held, c, n, 1, freq, w, need), MVNMF_STATUS_BAD_LABEL);
    held[i] = 1;
    set_ctx("holdout: NaN score");
    sc[3] = NAN;
    CHECK_STATUS(mvnmf_mvel_label_freq_holdout(sc, fitl, held, c, n, 1, freq, w, need),
                 MVNMF_STATUS_NON_FINITE_INPUT);
    sc32[3] = NAN;
    CHECK_STATUS(mvnmf_mvel_label_freq_holdout_f32(sc32, fitl, held, c, n, 1, freq, w, need),
                 MVNMF_STATUS_NON_FINITE_INPUT);
    sc[3] = scf[3] = (double)(sc32[3] = (float)sc[4]); /* any finite value */
    set_ctx("holdout: short workspace, NULL output, zero labels");
    CHECK_STATUS(mvnmf_mvel_label_freq_holdout(sc, fitl, held, c, n, 1, freq, w, need - 1),
                 MVNMF_STATUS_WORKSPACE_TOO_SMALL);
    CHECK_STATUS(mvnmf_mvel_label_freq_holdout(sc, fitl, held, c, n, 1, NULL, w, need), MVNMF_STATUS_NULL_POINTER);
    CHECK_STATUS(mvnmf_mvel_label_freq_holdout(sc, fitl, NULL, c, n, 1, freq, w, need), MVNMF_STATUS_NULL_POINTER);
    CHECK_STATUS(mvnmf_mvel_label_freq_holdout(sc, fitl, held, 0, n, 1, freq, w, need),
                 MVNMF_STATUS_ZERO_DIMENSION);
    CHECK(memcmp(keep, freq, sizeof freq) == 0);
    free(w);

    set_ctx("count_thresholds");
    CHECK_STATUS(mvnmf_mvel_count_thresholds_workspace(0, &need), MVNMF_STATUS_ZERO_DIMENSION);
    CHECK_STATUS(mvnmf_mvel_count_thresholds_workspace(n, &need), MVNMF_STATUS_OK);
    w = malloc(need);
    /* The estimate above, a label frequency of 1 (nothing hidden), one of 0
     * (unknown: nothing added) and a small one (every unknown added). */
    for (s = 0; s < c; s++)
        lf[s] = freq[s];
    lf[1] = 1.0;
    lf[2] = 0.0;
    lf[3] = 0.01;
    ref_count(sc, p.y, lf, c, n, tref);
    CHECK_STATUS(mvnmf_mvel_count_thresholds(sc, p.y, c, n, lf, tau, pred, w, need), MVNMF_STATUS_OK);
    for (s = 0; s < c; s++)
        CHECK(tau[s] == tref[s]);
    CHECK(tau[1] == INFINITY && tau[2] == INFINITY && tau[3] == -INFINITY);
    for (u = 0; u < c * n; u++)
        CHECK(pred[u] == (p.y[u] || sc[u] > tau[u % c]));
    {
        /* Label 0: exactly round(P (1 - c) / c) unknown items added (no ties
         * in these scores). */
        size_t pp = 0, added = 0, m;
        for (u = 0; u < n; u++) {
            pp += p.y[u * c];
            added += pred[u * c] && !p.y[u * c];
        }
        m = lf[0] > 0.0 && pp > 0 ? (size_t)floor((double)pp * (1.0 - lf[0]) / lf[0] + 0.5) : 0;
        CHECK(added == (m < n - pp ? m : n - pp));
    }
    /* tau alone (pred NULL) is the same. */
    for (s = 0; s < c; s++)
        tau[s] = SENTINEL;
    CHECK_STATUS(mvnmf_mvel_count_thresholds(sc, p.y, c, n, lf, tau, NULL, w, need), MVNMF_STATUS_OK);
    for (s = 0; s < c; s++)
        CHECK(tau[s] == tref[s]);
    set_ctx("count_thresholds_f32");
    ref_count(scf, p.y, lf, c, n, tref);
    CHECK_STATUS(mvnmf_mvel_count_thresholds_f32(sc32, p.y, c, n, lf, tau, pred, w, need), MVNMF_STATUS_OK);
    for (s = 0; s < c; s++)
        CHECK(tau[s] == tref[s]);
    for (u = 0; u < c * n; u++)
        CHECK(pred[u] == (p.y[u] || (double)sc32[u] > tau[u % c]));
    /* Bad input: tau and pred untouched. */
    memcpy(keep, tau, sizeof tau);
    memcpy(keep_pred, pred, c * n);
    set_ctx("count: label frequency 1.5, NaN");
    lf[0] = 1.5;
    CHECK_STATUS(mvnmf_mvel_count_thresholds(sc, p.y, c, n, lf, tau, pred, w, need), MVNMF_STATUS_BAD_PARAMETER);
    lf[0] = NAN;
    CHECK_STATUS(mvnmf_mvel_count_thresholds(sc, p.y, c, n, lf, tau, pred, w, need), MVNMF_STATUS_BAD_PARAMETER);
    lf[0] = 0.5;
    set_ctx("count: NULL label frequencies, NULL tau");
    CHECK_STATUS(mvnmf_mvel_count_thresholds(sc, p.y, c, n, NULL, tau, pred, w, need), MVNMF_STATUS_NULL_POINTER);
    CHECK_STATUS(mvnmf_mvel_count_thresholds(sc, p.y, c, n, lf, NULL, pred, w, need), MVNMF_STATUS_NULL_POINTER);
    set_ctx("count: label byte 2, infinite score, short workspace, zero items");
    p.y[7] = 2;
    CHECK_STATUS(mvnmf_mvel_count_thresholds(sc, p.y, c, n, lf, tau, pred, w, need), MVNMF_STATUS_BAD_LABEL);
    p.y[7] = 0;
    sc[9] = INFINITY;
    CHECK_STATUS(mvnmf_mvel_count_thresholds(sc, p.y, c, n, lf, tau, pred, w, need), MVNMF_STATUS_NON_FINITE_INPUT);
    sc32[9] = INFINITY;
    CHECK_STATUS(mvnmf_mvel_count_thresholds_f32(sc32, p.y, c, n, lf, tau, pred, w, need),
                 MVNMF_STATUS_NON_FINITE_INPUT);
    sc[9] = 0.0;
    sc32[9] = 0.0f;
    CHECK_STATUS(mvnmf_mvel_count_thresholds(sc, p.y, c, n, lf, tau, pred, w, need - 1),
                 MVNMF_STATUS_WORKSPACE_TOO_SMALL);
    CHECK_STATUS(mvnmf_mvel_count_thresholds(sc, p.y, c, 0, lf, tau, pred, w, need), MVNMF_STATUS_ZERO_DIMENSION);
    CHECK(memcmp(keep, tau, sizeof tau) == 0 && memcmp(keep_pred, pred, c * n) == 0);
    free(w);
    free(q);
    free(h);
    free(sc);
    free(scf);
    free(sc32);
    free(fitl);
    free(held);
    free(pred);
    free(keep_pred);
    mprob_free(&p);
}

/* The _f32 twins of the fit and prediction: on the CSR graph the float fit
 * never increases its objective and ends near the double fit's objective; its
 * scores are Q H; the dense (double) graph and bad input are refused with the
 * outputs untouched. */
static void test_mvel_f32(void)
{
    mprob p;
    trace_t ta, tb;
    mvnmf_report ra, rb;
    mvnmf_mvel_params par = mvnmf_mvel_params_default();
    size_t r = 3, c, n, need = 0, i, s, u;
    double *q, *h, scale = 1.0;
    float *qf, *hf, *scf;
    void *w;
    note("mvel: the _f32 fit and predict, monotone, close to the double fit, bad input");
    mprob_make(&p, 30, 7);
    c = p.c;
    n = p.n;
    q = dalloc(c * r);
    h = dalloc(r * n);
    qf = (float *)dalloc(c * r); /* room for as many floats */
    hf = (float *)dalloc(r * n);
    scf = (float *)dalloc(c * n);
    par.max_iter = 25;
    par.tol = 0.0;
    par.unknown_weight = 0.1;
    set_ctx("mvel fit (double, CSR)");
    CHECK_STATUS(mvel_fit(&p, &p.csr, r, &par, q, h, &ta, &ra), MVNMF_STATUS_OK);
    set_ctx("mvel fit_f32 (CSR)");
    CHECK_STATUS(mvnmf_mvel_fit_f32_workspace(c, &p.csr, r, &par, &need), MVNMF_STATUS_OK);
    w = malloc(need);
    tb.n = 0;
    CHECK_STATUS(mvnmf_mvel_fit_f32(p.y, c, &p.csr, r, &par, qf, hf, w, need, record, &tb, &rb), MVNMF_STATUS_OK);
    CHECK(tb.n == ta.n && tb.n == 26);
    for (i = 0; i < ta.n; i++)
        if (fabs(ta.obj[i]) > scale)
            scale = fabs(ta.obj[i]);
    for (i = 1; i < tb.n; i++)
        CHECK(tb.obj[i] <= tb.obj[i - 1] + 1e-6 * scale);
    CHECK(fabs(rb.objective.total - ra.objective.total) <= 1e-3 * scale);
    set_ctx("fit_f32: the dense graph (double weights) refused, outputs untouched");
    for (i = 0; i < c * r; i++)
        qf[i] = (float)SENTINEL;
    CHECK_STATUS(mvnmf_mvel_fit_f32_workspace(c, &p.dense, r, &par, &need), MVNMF_STATUS_BAD_PARAMETER);
    CHECK_STATUS(mvnmf_mvel_fit_f32(p.y, c, &p.dense, r, &par, qf, hf, w, need, NULL, NULL, NULL),
                 MVNMF_STATUS_BAD_PARAMETER);
    set_ctx("fit_f32: label byte 2");
    p.y[2] = 2;
    CHECK_STATUS(mvnmf_mvel_fit_f32(p.y, c, &p.csr, r, &par, qf, hf, w, need, NULL, NULL, NULL),
                 MVNMF_STATUS_BAD_LABEL);
    p.y[2] = 0;
    for (i = 0; i < c * r; i++)
        CHECK(qf[i] == (float)SENTINEL);
    free(w);
    /* Refit to have factors again, then the scores. */
    CHECK_STATUS(mvnmf_mvel_fit_f32_workspace(c, &p.csr, r, &par, &need), MVNMF_STATUS_OK);
    w = malloc(need);
    CHECK_STATUS(mvnmf_mvel_fit_f32(p.y, c, &p.csr, r, &par, qf, hf, w, need, NULL, NULL, NULL), MVNMF_STATUS_OK);
    free(w);
    set_ctx("predict_f32");
    CHECK_STATUS(mvnmf_mvel_predict_f32_workspace(c, r, n, &need), MVNMF_STATUS_OK);
    w = malloc(need);
    CHECK_STATUS(mvnmf_mvel_predict_f32(qf, hf, c, r, n, scf, w, need), MVNMF_STATUS_OK);
    for (u = 0; u < n; u++)
        for (s = 0; s < c; s++) {
            double want = 0.0;
            for (i = 0; i < r; i++)
                want += (double)qf[s + i * c] * (double)hf[i + u * r];
            CHECK(fabs((double)scf[s + u * c] - want) <= 1e-5);
        }
    qf[0] = NAN;
    scf[0] = (float)SENTINEL;
    CHECK_STATUS(mvnmf_mvel_predict_f32(qf, hf, c, r, n, scf, w, need), MVNMF_STATUS_NON_FINITE_INPUT);
    CHECK(scf[0] == (float)SENTINEL);
    free(w);
    free(q);
    free(h);
    free(qf);
    free(hf);
    free(scf);
    mprob_free(&p);
}

int HARNESS_MVEL_ENTRY(int verbose)
{
    g_verbose = verbose;
    g_failures = 0;
    test_monotone_dense_csr();
    test_bad_input();
    test_holdout_count();
    test_mvel_f32();
    test_fused_graph();
    test_anchors();
    test_anchors_reduce_to_items();
    test_fused_knn_graph();
    printf("[%s] mvel harness: %d failed checks\n", LANG, g_failures);
    return g_failures;
}
