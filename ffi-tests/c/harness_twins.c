/* The `_f32` twins of the evaluation routines (issue 33, `export!` in
 * src/ffi/declare.rs): each twin on the float copy of the data agrees with its
 * double routine to float tolerance (the same labels, indices and
 * assignments where the data leave no near-tie), and a bad input gives the
 * double routine's status with the outputs untouched. Built as C99 and C++11
 * with warnings as errors; HARNESS_TWINS_ENTRY returns the failed checks. */
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
int HARNESS_TWINS_ENTRY(int verbose);
#ifdef __cplusplus
}
#endif

#include "harness_common.h"

#define D 3
#define N 24
#define K 3

static void *work_of(size_t bytes)
{
    return malloc(bytes ? bytes : 1);
}

static void to_float(const double *x, float *y, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        y[i] = (float)x[i];
}

/* N items in K well-separated clusters of dimension D, labels by cluster. */
static void clusters(double *x, uint32_t *labels)
{
    lcg_t g = lcg_seeded(33);
    size_t j, i;
    for (j = 0; j < N; j++) {
        labels[j] = (uint32_t)(j % K);
        for (i = 0; i < D; i++)
            x[j * D + i] = 10.0 * (double)((j % K) == i) + lcg_next(&g);
    }
}

static void test_knn(void)
{
    double x[D * N];
    float xf[D * N];
    uint32_t labels[N], pred[N], predf[N], bad[N];
    size_t bytes = 0, j;
    void *w;
    mvnmf_knn_params p = mvnmf_knn_params_default();
    p.k = 3;
    set_ctx("knn_predict_f32");
    clusters(x, labels);
    to_float(x, xf, D * N);
    CHECK_STATUS(mvnmf_knn_predict_workspace(K, &p, &bytes), MVNMF_STATUS_OK);
    w = work_of(bytes);
    CHECK_STATUS(mvnmf_knn_predict(x, D, N, labels, x, N, K, &p, pred, w, bytes), MVNMF_STATUS_OK);
    CHECK_STATUS(mvnmf_knn_predict_f32(xf, D, N, labels, xf, N, K, &p, predf, w, bytes),
                 MVNMF_STATUS_OK);
    for (j = 0; j < N; j++)
        CHECK(pred[j] == predf[j] && pred[j] == labels[j]);
    /* A NaN feature: the double routine's status, nothing written. */
    xf[5] = NAN;
    x[5] = NAN;
    memset(bad, 0xAB, sizeof bad);
    CHECK_STATUS(mvnmf_knn_predict_f32(xf, D, N, labels, xf, N, K, &p, bad, w, bytes),
                 mvnmf_knn_predict(x, D, N, labels, x, N, K, &p, pred, w, bytes));
    CHECK(mvnmf_knn_predict_f32(xf, D, N, labels, xf, N, K, &p, bad, w, bytes) != MVNMF_STATUS_OK);
    for (j = 0; j < N; j++)
        CHECK(bad[j] == 0xABABABABu);
    free(w);
}

static void test_kmeans(void)
{
    double x[D * N], c[D * K];
    float xf[D * N], cf[D * K], badc[D * K];
    uint32_t labels[N], a[N], af[N];
    size_t bytes = 0, bytesf = 0, j;
    void *w;
    mvnmf_kmeans_report r, rf;
    mvnmf_kmeans_params p = mvnmf_kmeans_params_default();
    set_ctx("kmeans_f32");
    clusters(x, labels);
    to_float(x, xf, D * N);
    CHECK_STATUS(mvnmf_kmeans_workspace(D, N, K, &p, &bytes), MVNMF_STATUS_OK);
    CHECK_STATUS(mvnmf_kmeans_f32_workspace(D, N, K, &p, &bytesf), MVNMF_STATUS_OK);
    if (bytesf > bytes)
        bytes = bytesf;
    w = work_of(bytes);
    CHECK_STATUS(mvnmf_kmeans(x, D, N, K, &p, a, c, w, bytes, &r), MVNMF_STATUS_OK);
    CHECK_STATUS(mvnmf_kmeans_f32(xf, D, N, K, &p, af, cf, w, bytes, &rf), MVNMF_STATUS_OK);
    for (j = 0; j < N; j++)
        CHECK(a[j] == af[j]);
    for (j = 0; j < D * K; j++)
        CHECK(fabs(c[j] - (double)cf[j]) <= 1e-5 * (1.0 + fabs(c[j])));
    CHECK(fabs(r.inertia - rf.inertia) <= 1e-5 * (1.0 + r.inertia));
    /* k > n: refused as the double routine refuses it, centroids untouched. */
    for (j = 0; j < D * K; j++)
        badc[j] = 7.25f;
    CHECK_STATUS(mvnmf_kmeans_f32(xf, D, 2, K, &p, af, badc, w, bytes, &rf),
                 mvnmf_kmeans(x, D, 2, K, &p, a, c, w, bytes, &r));
    CHECK(mvnmf_kmeans_f32(xf, D, 2, K, &p, af, badc, w, bytes, &rf) != MVNMF_STATUS_OK);
    for (j = 0; j < D * K; j++)
        CHECK(badc[j] == 7.25f);
    free(w);
}

static void test_assignment(void)
{
    /* Column-major 3×3, optimum rows→cols 1, 0, 2 (total 5). */
    double cost[9] = {4.0, 2.0, 3.0, 1.0, 0.0, 2.0, 3.0, 5.0, 2.0};
    float costf[9];
    size_t map[3], mapf[3], bytes = 0, j;
    double total = 0.0, totalf = 0.0, untouched = 7.25;
    void *w;
    set_ctx("assignment_f32");
    to_float(cost, costf, 9);
    CHECK_STATUS(mvnmf_assignment_workspace(3, 3, &bytes), MVNMF_STATUS_OK);
    w = work_of(bytes);
    CHECK_STATUS(mvnmf_assignment(cost, 3, 3, 0, map, &total, w, bytes), MVNMF_STATUS_OK);
    CHECK_STATUS(mvnmf_assignment_f32(costf, 3, 3, 0, mapf, &totalf, w, bytes), MVNMF_STATUS_OK);
    for (j = 0; j < 3; j++)
        CHECK(map[j] == mapf[j]);
    CHECK(total == 5.0 && totalf == 5.0);
    costf[4] = INFINITY;
    cost[4] = INFINITY;
    mapf[0] = 99;
    CHECK_STATUS(mvnmf_assignment_f32(costf, 3, 3, 0, mapf, &untouched, w, bytes),
                 mvnmf_assignment(cost, 3, 3, 0, map, &total, w, bytes));
    CHECK(mvnmf_assignment_f32(costf, 3, 3, 0, mapf, &untouched, w, bytes) != MVNMF_STATUS_OK);
    CHECK(mapf[0] == 99 && untouched == 7.25);
    free(w);
}

static void test_retrieval(void)
{
    double s[N * 2];
    float sf[N * 2];
    uint8_t rel[N * 2];
    size_t cut[2] = {1, 5}, top[5], topf[5], bytes = 0, j;
    double ap = 0, apf = 0, pa[2], paf[2], pr[11], prf[11], map = 0, mapf = 0, aps[2], apsf[2];
    double mpa[2], mpaf[2], untouched = 7.25;
    void *w;
    lcg_t g = lcg_seeded(7);
    set_ctx("retrieval_f32");
    for (j = 0; j < N * 2; j++) {
        s[j] = (double)((j * 7) % (N * 2)) + 0.25 * lcg_next(&g);
        rel[j] = (uint8_t)(j % 3 == 0);
    }
    to_float(s, sf, N * 2);
    CHECK_STATUS(mvnmf_top_n(s, N, 5, top), MVNMF_STATUS_OK);
    CHECK_STATUS(mvnmf_top_n_f32(sf, N, 5, topf), MVNMF_STATUS_OK);
    for (j = 0; j < 5; j++)
        CHECK(top[j] == topf[j]);
    CHECK_STATUS(mvnmf_query_metrics_workspace(N, &bytes), MVNMF_STATUS_OK);
    w = work_of(bytes);
    CHECK_STATUS(mvnmf_query_metrics(s, rel, N, cut, 2, &ap, pa, pr, w, bytes), MVNMF_STATUS_OK);
    CHECK_STATUS(mvnmf_query_metrics_f32(sf, rel, N, cut, 2, &apf, paf, prf, w, bytes),
                 MVNMF_STATUS_OK);
    CHECK(ap == apf && pa[0] == paf[0] && pa[1] == paf[1]);
    for (j = 0; j < 11; j++)
        CHECK(pr[j] == prf[j]);
    CHECK_STATUS(mvnmf_retrieval_metrics(s, rel, N, 2, cut, 2, aps, &map, mpa, NULL, w, bytes),
                 MVNMF_STATUS_OK);
    CHECK_STATUS(
        mvnmf_retrieval_metrics_f32(sf, rel, N, 2, cut, 2, apsf, &mapf, mpaf, NULL, w, bytes),
        MVNMF_STATUS_OK);
    CHECK(map == mapf && aps[0] == apsf[0] && aps[1] == apsf[1] && mpa[1] == mpaf[1]);
    /* A relevance flag of 2 and a NaN score: refused, nothing written. */
    rel[3] = 2;
    CHECK_STATUS(mvnmf_query_metrics_f32(sf, rel, N, cut, 2, &untouched, paf, NULL, w, bytes),
                 mvnmf_query_metrics(s, rel, N, cut, 2, &ap, pa, NULL, w, bytes));
    CHECK(untouched == 7.25);
    rel[3] = 1;
    sf[2] = NAN;
    s[2] = NAN;
    topf[0] = 99;
    CHECK_STATUS(mvnmf_top_n_f32(sf, N, 5, topf), mvnmf_top_n(s, N, 5, top));
    CHECK(mvnmf_top_n_f32(sf, N, 5, topf) != MVNMF_STATUS_OK && topf[0] == 99);
    CHECK_STATUS(
        mvnmf_retrieval_metrics_f32(sf, rel, N, 2, cut, 2, NULL, &untouched, mpaf, NULL, w, bytes),
        mvnmf_retrieval_metrics(s, rel, N, 2, cut, 2, NULL, &map, mpa, NULL, w, bytes));
    CHECK(untouched == 7.25);
    free(w);
}

static void test_auroc(void)
{
    double s[2 * N], per[2], perf[2], mean = 0, meanf = 0, untouched = 7.25;
    float sf[2 * N];
    uint8_t truth[2 * N];
    size_t scored = 0, scoredf = 0, bytes = 0, j;
    void *w;
    lcg_t g = lcg_seeded(11);
    set_ctx("average_auroc_f32");
    for (j = 0; j < 2 * N; j++) {
        truth[j] = (uint8_t)(lcg_next(&g) < 0.4);
        s[j] = 0.5 * truth[j] + lcg_next(&g);
    }
    to_float(s, sf, 2 * N);
    CHECK_STATUS(mvnmf_average_auroc_workspace(N, &bytes), MVNMF_STATUS_OK);
    w = work_of(bytes);
    CHECK_STATUS(mvnmf_average_auroc(truth, s, 2, N, per, &mean, &scored, w, bytes),
                 MVNMF_STATUS_OK);
    CHECK_STATUS(mvnmf_average_auroc_f32(truth, sf, 2, N, perf, &meanf, &scoredf, w, bytes),
                 MVNMF_STATUS_OK);
    CHECK(scored == scoredf && fabs(mean - meanf) <= 1e-12);
    CHECK(fabs(per[0] - perf[0]) <= 1e-12 && fabs(per[1] - perf[1]) <= 1e-12);
    sf[1] = NAN;
    s[1] = NAN;
    CHECK_STATUS(mvnmf_average_auroc_f32(truth, sf, 2, N, NULL, &untouched, NULL, w, bytes),
                 mvnmf_average_auroc(truth, s, 2, N, NULL, &mean, NULL, w, bytes));
    CHECK(mvnmf_average_auroc_f32(truth, sf, 2, N, NULL, &untouched, NULL, w, bytes) !=
          MVNMF_STATUS_OK);
    CHECK(untouched == 7.25);
    free(w);
}

int HARNESS_TWINS_ENTRY(int verbose)
{
    g_verbose = verbose;
    g_failures = 0;
    test_knn();
    test_kmeans();
    test_assignment();
    test_retrieval();
    test_auroc();
    note("twins: %d failures", g_failures);
    return g_failures;
}
