/* C test harness of the approximate graph built across ranks with the items
 * sharded (mvnmf_dist_tge_approx, issue 30 item 4), through one rank whose
 * callbacks are those of a one-process MPI job (the allreduce leaves the sum as
 * it is, the exchange and the all-gather copy).
 *
 * Built like the other harnesses (ffi-tests/build.rs): twice, as C99 and as
 * C++11, with -Wall -Wextra -Wpedantic -Werror; `static` on everything but the
 * entry point HARNESS_DIST_ENTRY (renamed per build), which returns the number
 * of failed checks.
 *
 *   1. 300 clustered items in two views (linear and RBF with the median
 *      bandwidth), 20 % labeled, class-pair penalty: the rank's rows are
 *      bitwise mvnmf_tge_build's approximate graph (MVNMF_GRAPH_BUILD_APPROX,
 *      the same NN-descent options), and the traffic is counted;
 *   2. errors, each with its status and every output untouched: NULL nnz
 *      pointers, no exchange callback, a workspace one byte short,
 *      ann->leaf = 1, an allreduce that fails (MVNMF_STATUS_COMM_FAILED), and
 *      the workspace query refusing 0 ranks.
 */
#include "mvnmf.h"

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
int HARNESS_DIST_ENTRY(int verbose);
#ifdef __cplusplus
}
#endif

#include "harness_common.h"

#define NI 300
#define M1 12
#define M2 8
#define CLASSES 5

static int ok_allreduce(double *buf, size_t len, void *ctx)
{
    (void)buf;
    (void)len;
    (void)ctx;
    return 0;
}

static int bad_allreduce(double *buf, size_t len, void *ctx)
{
    (void)buf;
    (void)len;
    (void)ctx;
    return 1;
}

static int copy_exchange(const double *send, const size_t *send_counts, double *recv,
                         const size_t *recv_counts, void *ctx)
{
    (void)ctx;
    if (send_counts[0] != recv_counts[0])
        return 1;
    memcpy(recv, send, send_counts[0] * sizeof(double));
    return 0;
}

static int copy_allgather(const double *part, size_t part_len, double *out,
                          const size_t *counts, void *ctx)
{
    (void)ctx;
    if (counts[0] != part_len)
        return 1;
    memcpy(out, part, part_len * sizeof(double));
    return 0;
}

static void *xalloc(size_t bytes)
{
    void *p = malloc(bytes > 0 ? bytes : 1);
    if (p == NULL) {
        printf("[%s] out of memory\n", LANG);
        exit(1);
    }
    return p;
}

typedef struct {
    size_t *rp, *ci;
    double *w;
    mvnmf_csr_buffers b;
} csr_t;

static void csr_make(csr_t *g, size_t rows, size_t cap)
{
    size_t i;
    g->rp = (size_t *)xalloc((rows + 1) * sizeof(size_t));
    g->ci = (size_t *)xalloc(cap * sizeof(size_t));
    g->w = (double *)xalloc(cap * sizeof(double));
    for (i = 0; i <= rows; i++)
        g->rp[i] = 7;
    for (i = 0; i < cap; i++) {
        g->ci[i] = 7;
        g->w[i] = -7.0;
    }
    g->b.row_ptr = g->rp;
    g->b.col_idx = g->ci;
    g->b.weights = g->w;
    g->b.capacity = cap;
}

static void csr_free(csr_t *g)
{
    free(g->rp);
    free(g->ci);
    free(g->w);
}

/* Every entry still the sentinel. */
static int csr_untouched(const csr_t *g, size_t rows)
{
    size_t i;
    for (i = 0; i <= rows; i++)
        if (g->rp[i] != 7)
            return 0;
    for (i = 0; i < g->b.capacity; i++)
        if (g->ci[i] != 7 || g->w[i] != -7.0)
            return 0;
    return 1;
}

int HARNESS_DIST_ENTRY(int verbose)
{
    double *x1 = (double *)xalloc(M1 * NI * sizeof(double));
    double *x2 = (double *)xalloc(M2 * NI * sizeof(double));
    double c1[CLASSES][M1], c2[CLASSES][M2];
    uint32_t labels[NI];
    mvnmf_view views[2];
    mvnmf_kernel kernels[2];
    double eta[2] = {0.5, 0.5};
    mvnmf_graph_params gp = mvnmf_graph_params_default();
    mvnmf_ann_params ann = mvnmf_ann_params_default();
    mvnmf_dist_comm comm;
    mvnmf_dist_graph_traffic tr;
    size_t capa = 0, capp = 0, sa_cap = 0, sp_cap = 0, need = 0, sneed = 0, na = 0, np = 0;
    size_t sna = 0, snp = 0, i, j;
    csr_t da, dp, sa, sp;
    void *w, *sw;
    lcg_t g = lcg_seeded(42);
    int same;

    g_failures = 0;
    g_verbose = verbose;
    for (i = 0; i < CLASSES; i++) {
        for (j = 0; j < M1; j++)
            c1[i][j] = lcg_next(&g);
        for (j = 0; j < M2; j++)
            c2[i][j] = lcg_next(&g);
    }
    for (i = 0; i < NI; i++) {
        size_t c = (size_t)(lcg_next(&g) * CLASSES) % CLASSES;
        for (j = 0; j < M1; j++)
            x1[i * M1 + j] = c1[c][j] + 0.1 * lcg_next(&g);
        for (j = 0; j < M2; j++)
            x2[i * M2 + j] = c2[c][j] + 0.1 * lcg_next(&g);
        labels[i] = i % 5 == 0 ? (uint32_t)c : MVNMF_UNLABELED;
    }
    memset(views, 0, sizeof views);
    views[0].kind = MVNMF_VIEW_DENSE;
    views[0].rows = M1;
    views[0].cols = NI;
    views[0].values = x1;
    views[0].col_stride = M1;
    views[1] = views[0];
    views[1].rows = M2;
    views[1].values = x2;
    views[1].col_stride = M2;
    kernels[0].kind = MVNMF_KERNEL_LINEAR;
    kernels[0].gamma = 0.0;
    kernels[1].kind = MVNMF_KERNEL_RBF;
    kernels[1].gamma = 0.0;
    gp.ka = 5;
    gp.kp = 2;
    ann.k = 6;
    ann.iters = 2;
    ann.seed = 5;
    comm.allreduce = ok_allreduce;
    comm.exchange = copy_exchange;
    comm.allgather = copy_allgather;
    comm.ctx = NULL;
    comm.rank = 0;
    comm.n_ranks = 1;

    /* 1. One rank: the single-process approximate graph, bit for bit. */
    set_ctx("one rank against mvnmf_tge_build");
    CHECK_STATUS(mvnmf_dist_tge_capacity(NI, NI, CLASSES, &gp, &capa, &capp), MVNMF_STATUS_OK);
    CHECK_STATUS(mvnmf_tge_capacity(NI, CLASSES, &gp, &sa_cap, &sp_cap), MVNMF_STATUS_OK);
    CHECK_STATUS(mvnmf_dist_tge_approx_workspace(views, 2, kernels, labels, NI, CLASSES, 1, &gp,
                                                 &ann, &need),
                 MVNMF_STATUS_OK);
    CHECK_STATUS(mvnmf_tge_build_workspace(views, 2, kernels, CLASSES, &gp,
                                           MVNMF_GRAPH_BUILD_APPROX, &ann, &sneed),
                 MVNMF_STATUS_OK);
    csr_make(&da, NI, capa);
    csr_make(&dp, NI, capp);
    csr_make(&sa, NI, sa_cap);
    csr_make(&sp, NI, sp_cap);
    w = xalloc(need);
    sw = xalloc(sneed);
    CHECK_STATUS(mvnmf_tge_build(views, 2, kernels, eta, labels, CLASSES, &gp,
                                 MVNMF_GRAPH_BUILD_APPROX, &ann, &sa.b, &sp.b, &sna, &snp, sw,
                                 sneed),
                 MVNMF_STATUS_OK);
    memset(&tr, 0, sizeof tr);
    CHECK_STATUS(mvnmf_dist_tge_approx(&comm, views, 2, kernels, eta, labels, NI, CLASSES, &gp,
                                       &ann, &da.b, &dp.b, &na, &np, w, need, &tr),
                 MVNMF_STATUS_OK);
    CHECK(na == sna && np == snp && sna > 0 && snp > 0);
    same = memcmp(da.rp, sa.rp, (NI + 1) * sizeof(size_t)) == 0 &&
           memcmp(dp.rp, sp.rp, (NI + 1) * sizeof(size_t)) == 0;
    CHECK(same);
    if (na == sna && np == snp) {
        CHECK(memcmp(da.ci, sa.ci, na * sizeof(size_t)) == 0);
        CHECK(memcmp(da.w, sa.w, na * sizeof(double)) == 0);
        CHECK(memcmp(dp.ci, sp.ci, np * sizeof(size_t)) == 0);
        CHECK(memcmp(dp.w, sp.w, np * sizeof(double)) == 0);
    }
    CHECK(tr.allreduce_calls > 0 && tr.allgather_calls == 1);
    note("one rank: %zu affinity and %zu penalty entries, as mvnmf_tge_build", na, np);
    csr_free(&da);
    csr_free(&dp);

    /* 2. Errors: each status, every output untouched. */
    csr_make(&da, NI, capa);
    csr_make(&dp, NI, capp);
    na = np = 99;
    set_ctx("NULL nnz");
    CHECK_STATUS(mvnmf_dist_tge_approx(&comm, views, 2, kernels, eta, labels, NI, CLASSES, &gp,
                                       &ann, &da.b, &dp.b, NULL, &np, w, need, NULL),
                 MVNMF_STATUS_NULL_POINTER);
    set_ctx("no exchange");
    comm.exchange = NULL;
    CHECK_STATUS(mvnmf_dist_tge_approx(&comm, views, 2, kernels, eta, labels, NI, CLASSES, &gp,
                                       &ann, &da.b, &dp.b, &na, &np, w, need, NULL),
                 MVNMF_STATUS_NULL_POINTER);
    comm.exchange = copy_exchange;
    set_ctx("workspace one byte short");
    CHECK_STATUS(mvnmf_dist_tge_approx(&comm, views, 2, kernels, eta, labels, NI, CLASSES, &gp,
                                       &ann, &da.b, &dp.b, &na, &np, w, need - 1, NULL),
                 MVNMF_STATUS_WORKSPACE_TOO_SMALL);
    set_ctx("leaf 1");
    ann.leaf = 1;
    CHECK_STATUS(mvnmf_dist_tge_approx(&comm, views, 2, kernels, eta, labels, NI, CLASSES, &gp,
                                       &ann, &da.b, &dp.b, &na, &np, w, need, NULL),
                 MVNMF_STATUS_BAD_PARAMETER);
    ann.leaf = 0;
    set_ctx("failing allreduce");
    comm.allreduce = bad_allreduce;
    CHECK_STATUS(mvnmf_dist_tge_approx(&comm, views, 2, kernels, eta, labels, NI, CLASSES, &gp,
                                       &ann, &da.b, &dp.b, &na, &np, w, need, NULL),
                 MVNMF_STATUS_COMM_FAILED);
    comm.allreduce = ok_allreduce;
    CHECK(na == 99 && np == 99);
    CHECK(csr_untouched(&da, NI) && csr_untouched(&dp, NI));
    set_ctx("workspace query, 0 ranks");
    need = 5;
    CHECK_STATUS(mvnmf_dist_tge_approx_workspace(views, 2, kernels, labels, NI, CLASSES, 0, &gp,
                                                 &ann, &need),
                 MVNMF_STATUS_BAD_PARAMETER);
    CHECK(need == 5);

    csr_free(&da);
    csr_free(&dp);
    csr_free(&sa);
    csr_free(&sp);
    free(w);
    free(sw);
    free(x1);
    free(x2);
    return g_failures;
}
