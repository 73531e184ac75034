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
 *      the workspace query refusing 0 ranks;
 *   3. the _f32 twins of the distributed fits (mvnmf_dist_joint_nmf_fit_f32,
 *      mvnmf_dist_mvsl_fit_f32 with SGE; issue 33) on 1, 2 and 3 ranks
 *      simulated by threads agree with the single-process _f32 fits (V and U
 *      within 1e-3 relative, the objective within 1e-5 of the start), their
 *      objective never rises (beyond 1e-5 of the start), every rank gets the
 *      same bases and objectives; an allreduce that fails on one rank of three
 *      makes that rank return MVNMF_STATUS_COMM_FAILED and the others
 *      MVNMF_STATUS_PEER_FAILED (every thread returns); a NaN in a view on
 *      one rank (of 1, of 3) makes that rank return
 *      MVNMF_STATUS_NON_FINITE_INPUT and the others MVNMF_STATUS_PEER_FAILED,
 *      with every rank's U and V untouched;
 *      (issue 33) the rank with the NaN says where (argument 2, view 0, row 2,
 *      the column within its shard), the others say nowhere (where_arg 0);
 *   4. the exact build (mvnmf_dist_tge, class-pair penalty) on 2 threads, one
 *      rank's allreduce delivering 2x + 1 at one call, each call in turn: every
 *      rank returns, OK only with valid rows, the statuses agree (issue 31);
 *   5. errors that say where (issue 33) of mvnmf_dist_joint_nmf_fit and
 *      mvnmf_dist_mvsl_fit (SGE): on one rank, a NaN in view 1 (argument 2,
 *      view 1, its row and column), a bad params field (5 / 6), k = 0 (4 / 5),
 *      a workspace one byte short (9 / 10), a communicator that cannot be read
 *      and an allreduce that fails (1), a label out of range (graph, 4), a CSR
 *      graph without the exchange (comm, 1): each refusal's report zero but
 *      where_*, U, V and the traffic untouched; on 2 ranks, rank 1's view with
 *      the NaN: rank 1 says where (the column within its shard), rank 0
 *      MVNMF_STATUS_PEER_FAILED with where_arg 0.
 */
#if !defined(_POSIX_C_SOURCE) && !defined(__cplusplus)
#define _POSIX_C_SOURCE 200112L
#endif
#include "mvnmf.h"

#include <pthread.h>

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

/* A refusal's report (issue 33): every field zero but where_*, which are these. */
static int refusal_at(const mvnmf_report *r, uint32_t arg, size_t view, size_t row, size_t col)
{
    int ok = r->where_arg == arg && r->where_view == view && r->where_row == row &&
             r->where_col == col;
    if (!ok)
        printf("[%s] where: arg %u view %zu row %zu col %zu; expected arg %u view %zu row %zu "
               "col %zu\n",
               LANG, (unsigned)r->where_arg, r->where_view, r->where_row, r->where_col,
               (unsigned)arg, view, row, col);
    return ok && r->iterations == 0 && r->stop == 0 && r->dead_views == 0 &&
           r->initial.total == 0.0 && r->initial.n_terms == 0 && r->objective.total == 0.0 &&
           r->objective.n_terms == 0;
}

/* ---- 3. The _f32 twins of the distributed fits (issue 33) on 1, 2 and 3
 * ranks simulated by threads: the allreduce stores each rank's buffer, waits
 * for all and sums them in rank order (the same sum on every rank). */

#define KF 4
#define MAXR 3
#define FIT_ITERS 30

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ranks, arrived;
    unsigned long gen;
    double *bufs[MAXR];
    size_t lens[MAXR];
    int lie_rank;  /* the rank whose allreduce lies (-1: none) */
    size_t lie_at; /* at this call and every later one: it fails after the data moved */
    int garbage;   /* instead: at call lie_at only, it delivers 2x + 1 of every word, returning 0 */
    const double *sends[MAXR];   /* the exchange's send buffers, */
    const size_t *scounts[MAXR]; /* and their counts per destination */
} hub_t;

typedef struct {
    hub_t *hub;
    int rank;
    size_t calls;
} rank_ctx_t;

static void hub_wait(hub_t *h)
{
    unsigned long gen;
    pthread_mutex_lock(&h->mu);
    gen = h->gen;
    if (++h->arrived == h->ranks) {
        h->arrived = 0;
        h->gen++;
        pthread_cond_broadcast(&h->cv);
    } else {
        while (gen == h->gen)
            pthread_cond_wait(&h->cv, &h->mu);
    }
    pthread_mutex_unlock(&h->mu);
}

static int thread_allreduce(double *buf, size_t len, void *ctx)
{
    rank_ctx_t *c = (rank_ctx_t *)ctx;
    hub_t *h = c->hub;
    double *sum = (double *)malloc(len > 0 ? len * sizeof(double) : 1);
    size_t i;
    int q, same = 1, lie = !h->garbage && c->rank == h->lie_rank && c->calls >= h->lie_at;
    int garbage = h->garbage && c->rank == h->lie_rank && c->calls == h->lie_at;
    c->calls++;
    h->bufs[c->rank] = buf;
    h->lens[c->rank] = len;
    hub_wait(h);
    for (q = 0; q < h->ranks; q++)
        same = same && h->lens[q] == len;
    for (i = 0; sum != NULL && same && i < len; i++) {
        double a = 0.0;
        for (q = 0; q < h->ranks; q++)
            a += h->bufs[q][i];
        sum[i] = a;
    }
    hub_wait(h);
    if (sum != NULL && same)
        memcpy(buf, sum, len * sizeof(double));
    for (i = 0; garbage && i < len; i++)
        buf[i] = 2.0 * buf[i] + 1.0;
    free(sum);
    return sum == NULL || !same || lie;
}

/* An all-to-all over the threads (rank r receives, from each q, the part of
 * q's send buffer after q's counts for ranks below r); counts that are not
 * what the peer sends fail the call. */
static int thread_exchange(const double *send, const size_t *send_counts, double *recv,
                           const size_t *recv_counts, void *ctx)
{
    rank_ctx_t *c = (rank_ctx_t *)ctx;
    hub_t *h = c->hub;
    size_t at = 0, from, r;
    int q, ok = 1;
    h->sends[c->rank] = send;
    h->scounts[c->rank] = send_counts;
    hub_wait(h);
    for (q = 0; q < h->ranks && ok; q++) {
        ok = h->scounts[q][c->rank] == recv_counts[q];
        for (from = 0, r = 0; r < (size_t)c->rank; r++)
            from += h->scounts[q][r];
        if (ok && recv_counts[q] > 0)
            memcpy(recv + at, h->sends[q] + from, recv_counts[q] * sizeof(double));
        at += recv_counts[q];
    }
    hub_wait(h);
    return !ok;
}

static int record_progress(const mvnmf_progress *p, void *user)
{
    double *trace = (double *)user;
    if (p->phase == MVNMF_PHASE_ITERATIONS && p->iter <= FIT_ITERS)
        trace[p->iter] = p->objective.total;
    return 0;
}

typedef struct {
    /* the problem */
    const float *x1, *x2;
    const uint32_t *labels;
    int sge; /* 1: mvnmf_dist_mvsl_fit_f32 with SGE, 0: mvnmf_dist_joint_nmf_fit_f32 */
    size_t a, b;
    rank_ctx_t ctx;
    /* the outcome */
    mvnmf_status st;
    float u1[M1 * KF], u2[M2 * KF];
    float *v; /* KF × (b − a), inside the caller's KF × NI */
    double trace[FIT_ITERS + 1];
    mvnmf_report rep;
} fit_rank_t;

static mvnmf_mvsl_params fit_mvsl_params(void)
{
    mvnmf_mvsl_params p = mvnmf_mvsl_params_default();
    p.max_iter = FIT_ITERS;
    p.tol = 0.0;
    p.seed = 11;
    return p;
}

static mvnmf_nmf_params fit_nmf_params(void)
{
    mvnmf_nmf_params p = mvnmf_nmf_params_default();
    p.max_iter = FIT_ITERS;
    p.tol = 0.0;
    p.seed = 11;
    return p;
}

static void *fit_rank_main(void *arg)
{
    fit_rank_t *f = (fit_rank_t *)arg;
    size_t n = f->b - f->a, need = 0;
    mvnmf_view_f32 views[2];
    mvnmf_graph g;
    mvnmf_dist_comm comm;
    mvnmf_mvsl_params mp = fit_mvsl_params();
    mvnmf_nmf_params np = fit_nmf_params();
    float *us[2];
    void *w;
    mvnmf_status st;

    memset(views, 0, sizeof views);
    views[0].kind = MVNMF_VIEW_DENSE;
    views[0].rows = M1;
    views[0].cols = n;
    views[0].values = f->x1 + f->a * M1;
    views[0].col_stride = M1;
    views[1] = views[0];
    views[1].rows = M2;
    views[1].values = f->x2 + f->a * M2;
    views[1].col_stride = M2;
    memset(&g, 0, sizeof g);
    g.kind = MVNMF_GRAPH_SGE;
    g.n = n;
    g.labels = f->labels + f->a;
    g.n_classes = CLASSES;
    memset(&comm, 0, sizeof comm);
    comm.allreduce = thread_allreduce;
    comm.ctx = &f->ctx;
    comm.rank = (size_t)f->ctx.rank;
    comm.n_ranks = (size_t)f->ctx.hub->ranks;
    us[0] = f->u1;
    us[1] = f->u2;
    st = f->sge ? mvnmf_dist_mvsl_fit_f32_workspace(views, 2, &g, KF, comm.n_ranks, &mp, &need)
                : mvnmf_dist_joint_nmf_fit_f32_workspace(views, 2, KF, comm.n_ranks, &np, &need);
    if (st != MVNMF_STATUS_OK) {
        /* Cannot happen with these inputs; every rank fails alike. */
        f->st = st;
        return NULL;
    }
    w = xalloc(need);
    if (f->sge)
        f->st = mvnmf_dist_mvsl_fit_f32(&comm, views, 2, &g, KF, &mp, us, f->v, w, need,
                                        record_progress, f->trace, &f->rep, NULL);
    else
        f->st = mvnmf_dist_joint_nmf_fit_f32(&comm, views, 2, KF, &np, us, f->v, w, need,
                                             record_progress, f->trace, &f->rep, NULL);
    free(w);
    return NULL;
}

#define F32_SENTINEL (-7.0f)

static void f32_fill(float *x, size_t n, float value)
{
    size_t i;
    for (i = 0; i < n; i++)
        x[i] = value;
}

/* Every entry still `value`. */
static int f32_all(const float *x, size_t n, float value)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (x[i] != value)
            return 0;
    return 1;
}

/* Runs the fit on `ranks` threads (uneven cuts; U sentinel-filled), the liar as given. */
static void fit_on_ranks(fit_rank_t *fr, int ranks, int sge, const float *x1, const float *x2,
                         const uint32_t *labels, float *v, int lie_rank, size_t lie_at)
{
    hub_t hub;
    pthread_t th[MAXR];
    int r;
    memset(&hub, 0, sizeof hub);
    pthread_mutex_init(&hub.mu, NULL);
    pthread_cond_init(&hub.cv, NULL);
    hub.ranks = ranks;
    hub.lie_rank = lie_rank;
    hub.lie_at = lie_at;
    for (r = 0; r < ranks; r++) {
        fit_rank_t *f = &fr[r];
        memset(f, 0, sizeof *f);
        f->x1 = x1;
        f->x2 = x2;
        f->labels = labels;
        f->sge = sge;
        f->a = NI * (size_t)r / (size_t)ranks + (r > 0 ? 7 : 0);
        f->b = r + 1 == ranks ? NI : NI * (size_t)(r + 1) / (size_t)ranks + 7;
        f->ctx.hub = &hub;
        f->ctx.rank = r;
        f->v = v + f->a * KF;
        f32_fill(f->u1, M1 * KF, F32_SENTINEL);
        f32_fill(f->u2, M2 * KF, F32_SENTINEL);
    }
    for (r = 0; r < ranks; r++)
        pthread_create(&th[r], NULL, fit_rank_main, &fr[r]);
    for (r = 0; r < ranks; r++)
        pthread_join(th[r], NULL);
    pthread_cond_destroy(&hub.cv);
    pthread_mutex_destroy(&hub.mu);
}

static double max_rel_diff_f(const float *a, const float *b, size_t n)
{
    double scale = 0.0, d = 0.0;
    size_t i;
    for (i = 0; i < n; i++) {
        double x = fabs((double)a[i]), y = fabs((double)b[i]);
        scale = x > scale ? x : scale;
        scale = y > scale ? y : scale;
    }
    for (i = 0; i < n; i++) {
        double e = fabs((double)a[i] - (double)b[i]);
        d = e > d ? e : d;
    }
    return scale > 0.0 ? d / scale : d;
}

static void dist_f32_case(const double *x1d, const double *x2d, const uint32_t *labels)
{
    float *x1 = (float *)xalloc(M1 * NI * sizeof(float));
    float *x2 = (float *)xalloc(M2 * NI * sizeof(float));
    float *v1 = (float *)xalloc(KF * NI * sizeof(float));
    float *vd = (float *)xalloc(KF * NI * sizeof(float));
    float *xn = (float *)xalloc(M1 * NI * sizeof(float));
    float u1[M1 * KF], u2[M2 * KF];
    float *us[2];
    double trace[FIT_ITERS + 1];
    fit_rank_t fr[MAXR];
    mvnmf_view_f32 views[2];
    mvnmf_graph g;
    mvnmf_mvsl_params mp = fit_mvsl_params();
    mvnmf_nmf_params np = fit_nmf_params();
    mvnmf_report rep;
    size_t i, need = 0;
    int sge, ranks, r, t;
    void *w;

    for (i = 0; i < M1 * NI; i++)
        x1[i] = (float)x1d[i];
    for (i = 0; i < M2 * NI; i++)
        x2[i] = (float)x2d[i];
    /* The first view with a NaN at item 150: rank 0 of 1, rank 1 of 3 (items
     * 107 .. 207, fit_on_ranks's cuts). */
    memcpy(xn, x1, M1 * NI * sizeof(float));
    xn[150 * M1 + 2] = NAN;
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
    memset(&g, 0, sizeof g);
    g.kind = MVNMF_GRAPH_SGE;
    g.n = NI;
    g.labels = labels;
    g.n_classes = CLASSES;
    us[0] = u1;
    us[1] = u2;
    for (sge = 0; sge <= 1; sge++) {
        const char *what = sge ? "mvnmf_dist_mvsl_fit_f32 (SGE)" : "mvnmf_dist_joint_nmf_fit_f32";
        /* The single-process _f32 fit. */
        set_ctx("%s: the single-process fit", what);
        memset(trace, 0, sizeof trace);
        if (sge) {
            CHECK_STATUS(mvnmf_mvsl_fit_f32_workspace(views, 2, &g, KF, &mp, &need),
                         MVNMF_STATUS_OK);
            w = xalloc(need);
            CHECK_STATUS(mvnmf_mvsl_fit_f32(views, 2, &g, KF, &mp, us, v1, w, need,
                                            record_progress, trace, &rep),
                         MVNMF_STATUS_OK);
        } else {
            CHECK_STATUS(mvnmf_joint_nmf_fit_f32_workspace(views, 2, KF, &np, &need),
                         MVNMF_STATUS_OK);
            w = xalloc(need);
            CHECK_STATUS(mvnmf_joint_nmf_fit_f32(views, 2, KF, &np, us, v1, w, need,
                                                 record_progress, trace, &rep),
                         MVNMF_STATUS_OK);
        }
        free(w);
        for (ranks = 1; ranks <= MAXR; ranks++) {
            double dv, du = 0.0, dobj = 0.0;
            set_ctx("%s on %d ranks", what, ranks);
            for (i = 0; i < KF * NI; i++)
                vd[i] = -1.0f;
            fit_on_ranks(fr, ranks, sge, x1, x2, labels, vd, -1, 0);
            for (r = 0; r < ranks; r++) {
                CHECK_STATUS(fr[r].st, MVNMF_STATUS_OK);
                CHECK(fr[r].rep.iterations == rep.iterations);
                /* Every rank: the same bases and objectives. */
                CHECK(memcmp(fr[r].u1, fr[0].u1, sizeof u1) == 0);
                CHECK(memcmp(fr[r].u2, fr[0].u2, sizeof u2) == 0);
                CHECK(memcmp(fr[r].trace, fr[0].trace, sizeof trace) == 0);
                for (t = 1; t <= FIT_ITERS; t++)
                    CHECK(fr[r].trace[t] <= fr[r].trace[t - 1] + 1e-5 * fr[r].trace[0]);
            }
            dv = max_rel_diff_f(vd, v1, KF * NI);
            du = max_rel_diff_f(fr[0].u1, u1, M1 * KF);
            if (max_rel_diff_f(fr[0].u2, u2, M2 * KF) > du)
                du = max_rel_diff_f(fr[0].u2, u2, M2 * KF);
            for (t = 0; t <= FIT_ITERS; t++) {
                double e = fabs(fr[0].trace[t] - trace[t]) / trace[0];
                dobj = e > dobj ? e : dobj;
            }
            CHECK(dv <= 1e-3 && du <= 1e-3 && dobj <= 1e-5);
            note("%s, %d ranks: V %.1e, U %.1e, objective %.1e of the start", what, ranks, dv,
                 du, dobj);
        }
        /* A lying callback: rank 1 of 3 fails from its 9th allreduce on
         * (after the data moved): it returns COMM_FAILED, the others
         * PEER_FAILED, and every rank returns (the joins). */
        set_ctx("%s, a failing allreduce on rank 1 of 3", what);
        fit_on_ranks(fr, 3, sge, x1, x2, labels, vd, 1, 8);
        CHECK_STATUS(fr[1].st, MVNMF_STATUS_COMM_FAILED);
        CHECK_STATUS(fr[0].st, MVNMF_STATUS_PEER_FAILED);
        CHECK_STATUS(fr[2].st, MVNMF_STATUS_PEER_FAILED);
        /* A NaN in a view on one rank: it returns NON_FINITE_INPUT, the others
         * PEER_FAILED, and no rank writes U or V. */
        for (ranks = 1; ranks <= MAXR; ranks += 2) {
            int bad = ranks == 1 ? 0 : 1;
            set_ctx("%s, a NaN in a view on rank %d of %d", what, bad, ranks);
            f32_fill(vd, KF * NI, F32_SENTINEL);
            fit_on_ranks(fr, ranks, sge, xn, x2, labels, vd, -1, 0);
            for (r = 0; r < ranks; r++) {
                CHECK_STATUS(fr[r].st, r == bad ? MVNMF_STATUS_NON_FINITE_INPUT
                                                : MVNMF_STATUS_PEER_FAILED);
                /* Issue 33: the NaN's rank says where (view 0, row 2, item 150
                 * as its shard's column), the others nowhere. */
                if (r == bad)
                    CHECK(refusal_at(&fr[r].rep, 2, 0, 2, 150 - fr[r].a));
                else
                    CHECK(refusal_at(&fr[r].rep, 0, SIZE_MAX, SIZE_MAX, SIZE_MAX));
                CHECK(f32_all(fr[r].u1, M1 * KF, F32_SENTINEL));
                CHECK(f32_all(fr[r].u2, M2 * KF, F32_SENTINEL));
            }
            CHECK(f32_all(vd, KF * NI, F32_SENTINEL));
        }
    }
    free(xn);
    free(x1);
    free(x2);
    free(v1);
    free(vd);
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

/* ---- 4. The exact distributed TGE build (mvnmf_dist_tge, class-pair penalty)
 * on 2 threads, rank 0's allreduce delivering 2x + 1 of every word at one call,
 * each call in turn (issue 31, seed 0x17227954: the class-pair lists gathered
 * through the allreduce carried item indices past N into the penalty rows, OK).
 * Every rank returns; a rank that returns OK holds valid rows (in order, columns
 * below N, finite weights); the statuses agree (all OK, or the liar's
 * COMM_FAILED with the others' PEER_FAILED or, at the closing call, OK). */

#define TN 24
#define TCL 3

typedef struct {
    const double *x1, *x2;
    const uint32_t *labels;
    size_t a, b;
    rank_ctx_t ctx;
    mvnmf_status st;
    int valid;
} tge_rank_t;

/* Rows `0 .. rows` of a CSR with `nnz` entries: in order, columns below `n`, weights finite. */
static int csr_valid(const csr_t *g, size_t rows, size_t nnz, size_t n)
{
    size_t i;
    if (g->rp[0] != 0 || g->rp[rows] != nnz || nnz > g->b.capacity)
        return 0;
    for (i = 0; i < rows; i++)
        if (g->rp[i] > g->rp[i + 1])
            return 0;
    for (i = 0; i < nnz; i++)
        if (g->ci[i] >= n || !(g->w[i] - g->w[i] == 0.0))
            return 0;
    return 1;
}

static void *tge_rank_main(void *arg)
{
    tge_rank_t *t = (tge_rank_t *)arg;
    size_t n = t->b - t->a, need = 0, capa = 0, capp = 0, na = 0, np = 0;
    mvnmf_view views[2];
    mvnmf_kernel kernels[2];
    double eta[2] = {0.5, 0.5};
    mvnmf_graph_params gp = mvnmf_graph_params_default();
    mvnmf_dist_comm comm;
    csr_t ga, gq;
    void *w;

    memset(views, 0, sizeof views);
    views[0].kind = MVNMF_VIEW_DENSE;
    views[0].rows = M1;
    views[0].cols = n;
    views[0].values = t->x1 + t->a * M1;
    views[0].col_stride = M1;
    views[1] = views[0];
    views[1].rows = M2;
    views[1].values = t->x2 + t->a * M2;
    views[1].col_stride = M2;
    kernels[0].kind = MVNMF_KERNEL_RBF;
    kernels[0].gamma = 0.0;
    kernels[1].kind = MVNMF_KERNEL_LINEAR;
    kernels[1].gamma = 0.0;
    gp.ka = 2;
    gp.kp = 4;
    gp.penalty = MVNMF_PENALTY_CLASS_PAIRS;
    gp.block = 4;
    memset(&comm, 0, sizeof comm);
    comm.allreduce = thread_allreduce;
    comm.exchange = thread_exchange;
    comm.ctx = &t->ctx;
    comm.rank = (size_t)t->ctx.rank;
    comm.n_ranks = (size_t)t->ctx.hub->ranks;
    t->valid = 0;
    t->st = mvnmf_dist_tge_capacity(TN, n, TCL, &gp, &capa, &capp);
    if (t->st == MVNMF_STATUS_OK)
        t->st = mvnmf_dist_tge_workspace(views, 2, kernels, t->labels, TN, TCL, comm.n_ranks,
                                         &gp, &need);
    if (t->st != MVNMF_STATUS_OK)
        return NULL;
    csr_make(&ga, n, capa);
    csr_make(&gq, n, capp);
    w = xalloc(need);
    t->st = mvnmf_dist_tge(&comm, views, 2, kernels, eta, t->labels, TN, TCL, &gp, &ga.b, &gq.b,
                           &na, &np, w, need, NULL);
    t->valid = t->st != MVNMF_STATUS_OK || (csr_valid(&ga, n, na, TN) && csr_valid(&gq, n, np, TN));
    free(w);
    csr_free(&ga);
    csr_free(&gq);
    return NULL;
}

/* Runs the build on 2 threads (cut at item 11); returns rank 0's allreduce calls. */
static size_t tge_on_ranks(tge_rank_t *tr, const double *x1, const double *x2,
                           const uint32_t *labels, int lie_rank, size_t lie_at)
{
    hub_t hub;
    pthread_t th[2];
    int r;
    memset(&hub, 0, sizeof hub);
    pthread_mutex_init(&hub.mu, NULL);
    pthread_cond_init(&hub.cv, NULL);
    hub.ranks = 2;
    hub.lie_rank = lie_rank;
    hub.lie_at = lie_at;
    hub.garbage = 1;
    for (r = 0; r < 2; r++) {
        tr[r].x1 = x1;
        tr[r].x2 = x2;
        tr[r].labels = labels;
        tr[r].a = r == 0 ? 0 : 11;
        tr[r].b = r == 0 ? 11 : TN;
        tr[r].ctx.hub = &hub;
        tr[r].ctx.rank = r;
        tr[r].ctx.calls = 0;
        pthread_create(&th[r], NULL, tge_rank_main, &tr[r]);
    }
    for (r = 0; r < 2; r++)
        pthread_join(th[r], NULL);
    pthread_cond_destroy(&hub.cv);
    pthread_mutex_destroy(&hub.mu);
    return tr[0].ctx.calls;
}

static void dist_tge_lies_case(const double *x1, const double *x2)
{
    uint32_t labels[TN];
    tge_rank_t tr[2];
    size_t i, calls, at, ok = 0, failed = 0;
    /* Three labeled items per class: items 1, 2, 3 (rank 0) and 12 to 17 (rank 1),
     * class i mod 3. Rank 0's rows then hold class pairs (lo, hi) with hi ≥ 12,
     * whose 2x + 1 is a column past N in a row of rank 0. */
    for (i = 0; i < TN; i++)
        labels[i] = (i >= 1 && i <= 3) || (i >= 12 && i <= 17) ? (uint32_t)(i % TCL)
                                                               : MVNMF_UNLABELED;
    set_ctx("dist_tge on 2 ranks, honest");
    calls = tge_on_ranks(tr, x1, x2, labels, -1, 0);
    CHECK_STATUS(tr[0].st, MVNMF_STATUS_OK);
    CHECK_STATUS(tr[1].st, MVNMF_STATUS_OK);
    CHECK(tr[0].valid && tr[1].valid && tr[1].ctx.calls == calls && calls > 2);
    for (at = 0; at < calls; at++) {
        int all_ok, blamed, closing;
        set_ctx("dist_tge on 2 ranks, rank 0's allreduce delivering 2x + 1 at call %zu of %zu", at,
                calls);
        tge_on_ranks(tr, x1, x2, labels, 0, at);
        CHECK(tr[0].valid && tr[1].valid);
        all_ok = tr[0].st == MVNMF_STATUS_OK && tr[1].st == MVNMF_STATUS_OK;
        blamed = tr[0].st == MVNMF_STATUS_COMM_FAILED && tr[1].st == MVNMF_STATUS_PEER_FAILED;
        closing = at + 1 == calls && tr[0].st == MVNMF_STATUS_COMM_FAILED &&
                  tr[1].st == MVNMF_STATUS_OK;
        CHECK(all_ok || blamed || closing);
        ok += (size_t)all_ok;
        failed += (size_t)(blamed || closing);
    }
    /* The lie at the class-pair lists' call is seen (not every lie can be: a sum of
     * maxima may stay a valid scale). */
    CHECK(failed > 0);
    note("dist_tge, 2 ranks: %zu allreduce calls; a lie at each: %zu OK (valid rows), %zu COMM_FAILED", calls, ok,
         failed);
}

/* ---- 5. Errors that say where (issue 33): the distributed fits in double,
 * on one rank (the one-process callbacks) and on 2 threads. */

#define D_SENTINEL (-7.0)

/* One rank's call: its shard a .. b of the items, everything it passes and gets. */
typedef struct {
    const double *x1, *x2;
    const uint32_t *labels;
    size_t a, b;
    int mvsl; /* 1: mvnmf_dist_mvsl_fit with SGE, 0: mvnmf_dist_joint_nmf_fit */
    rank_ctx_t ctx;
    mvnmf_status st;
    double u1[M1 * KF], u2[M2 * KF];
    double v[KF * NI];
    mvnmf_report rep;
    mvnmf_dist_traffic tr;
} where_rank_t;

/* Every double of x still `value`. */
static int d_all(const double *x, size_t n, double value)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (x[i] != value)
            return 0;
    return 1;
}

/* U, V and the traffic as the caller left them. */
static int where_untouched(const where_rank_t *w)
{
    return d_all(w->u1, M1 * KF, D_SENTINEL) && d_all(w->u2, M2 * KF, D_SENTINEL) &&
           d_all(w->v, KF * NI, D_SENTINEL) && bytes_are(&w->tr, sizeof w->tr, 0xAB);
}

/* Sentinels in U and V, 0xAB bytes in the report and the traffic. */
static void where_reset(where_rank_t *w)
{
    size_t i;
    for (i = 0; i < M1 * KF; i++)
        w->u1[i] = D_SENTINEL;
    for (i = 0; i < M2 * KF; i++)
        w->u2[i] = D_SENTINEL;
    for (i = 0; i < KF * NI; i++)
        w->v[i] = D_SENTINEL;
    memset(&w->rep, 0xAB, sizeof w->rep);
    memset(&w->tr, 0xAB, sizeof w->tr);
    w->st = MVNMF_STATUS_INTERNAL;
}

/* The fit on `comm` (graph: NULL for SGE over the shard's labels) with this k
 * and these options, the workspace `short_by` bytes less than the query gives
 * for rank KF and the default options on `comm`'s ranks. */
static void where_call(where_rank_t *w, const mvnmf_dist_comm *comm, const mvnmf_graph *graph,
                       size_t k, const mvnmf_nmf_params *np, const mvnmf_mvsl_params *mp,
                       size_t short_by)
{
    size_t n = w->b - w->a, need = 0, ranks = comm->n_ranks > 0 ? comm->n_ranks : 1;
    mvnmf_view views[2];
    mvnmf_graph g;
    mvnmf_nmf_params np0 = fit_nmf_params();
    mvnmf_mvsl_params mp0 = fit_mvsl_params();
    double *us[2];
    void *work;
    mvnmf_status qs;

    views[0] = dense_view(w->x1 + w->a * M1, M1, n);
    views[1] = dense_view(w->x2 + w->a * M2, M2, n);
    memset(&g, 0, sizeof g);
    g.kind = MVNMF_GRAPH_SGE;
    g.n = n;
    g.labels = w->labels + w->a;
    g.n_classes = CLASSES;
    us[0] = w->u1;
    us[1] = w->u2;
    qs = w->mvsl ? mvnmf_dist_mvsl_fit_workspace(views, 2, &g, KF, ranks, &mp0, &need)
                 : mvnmf_dist_joint_nmf_fit_workspace(views, 2, KF, ranks, &np0, &need);
    if (qs != MVNMF_STATUS_OK) {
        w->st = qs;
        return;
    }
    need -= short_by;
    work = xalloc(need);
    if (w->mvsl)
        w->st = mvnmf_dist_mvsl_fit(comm, views, 2, graph != NULL ? graph : &g, k, mp, us, w->v,
                                    work, need, NULL, NULL, &w->rep, &w->tr);
    else
        w->st = mvnmf_dist_joint_nmf_fit(comm, views, 2, k, np, us, w->v, work, need, NULL, NULL,
                                         &w->rep, &w->tr);
    free(work);
}

static void *where_rank_main(void *arg)
{
    where_rank_t *w = (where_rank_t *)arg;
    mvnmf_dist_comm comm;
    mvnmf_nmf_params np = fit_nmf_params();
    mvnmf_mvsl_params mp = fit_mvsl_params();
    memset(&comm, 0, sizeof comm);
    comm.allreduce = thread_allreduce;
    comm.ctx = &w->ctx;
    comm.rank = (size_t)w->ctx.rank;
    comm.n_ranks = (size_t)w->ctx.hub->ranks;
    where_call(w, &comm, NULL, KF, &np, &mp, 0);
    return NULL;
}

static void dist_where_case(const double *x1, const double *x2, const uint32_t *labels)
{
    /* View 1 with a NaN at row 5 of item 123 (the one-rank calls) or at row 3
     * of item 200 (rank 1's column 60, the 2-rank cut at 140). */
    double *x2n = (double *)xalloc(M2 * NI * sizeof(double));
    uint32_t *bad_labels = (uint32_t *)xalloc(NI * sizeof(uint32_t));
    size_t *zeros = (size_t *)xalloc((NI + 1) * sizeof(size_t));
    where_rank_t *wr = (where_rank_t *)xalloc(2 * sizeof(where_rank_t));
    where_rank_t *w = &wr[0];
    mvnmf_dist_comm one;
    mvnmf_nmf_params np;
    mvnmf_mvsl_params mp;
    mvnmf_graph csr;
    hub_t hub;
    pthread_t th[2];
    int mvsl, r;
    uint32_t off; /* the mvsl fit's positions are one later from `graph` (4) on */

    memcpy(x2n, x2, M2 * NI * sizeof(double));
    x2n[123 * M2 + 5] = NAN;
    memcpy(bad_labels, labels, NI * sizeof(uint32_t));
    bad_labels[77] = CLASSES; /* out of range */
    memset(zeros, 0, (NI + 1) * sizeof(size_t));
    memset(&csr, 0, sizeof csr);
    csr.kind = MVNMF_GRAPH_CSR;
    csr.n = NI;
    csr.affinity_row_ptr = zeros; /* no edges */
    csr.affinity_col_idx = zeros;
    csr.affinity_weights = x1;
    memset(&one, 0, sizeof one);
    one.allreduce = ok_allreduce;
    one.rank = 0;
    one.n_ranks = 1;

    for (mvsl = 0; mvsl <= 1; mvsl++) {
        const char *what = mvsl ? "mvnmf_dist_mvsl_fit (SGE)" : "mvnmf_dist_joint_nmf_fit";
        memset(w, 0, sizeof *w);
        w->x1 = x1;
        w->x2 = x2;
        w->labels = labels;
        w->a = 0;
        w->b = NI;
        w->mvsl = mvsl;
        off = (uint32_t)mvsl;
        np = fit_nmf_params();
        mp = fit_mvsl_params();

        set_ctx("%s, one rank: a NaN at view 1, row 5, item 123", what);
        where_reset(w);
        x2n[123 * M2 + 5] = NAN;
        x2n[200 * M2 + 3] = x2[200 * M2 + 3];
        w->x2 = x2n;
        where_call(w, &one, NULL, KF, &np, &mp, 0);
        w->x2 = x2;
        CHECK_STATUS(w->st, MVNMF_STATUS_NON_FINITE_INPUT);
        CHECK(refusal_at(&w->rep, 2, 1, 5, 123));
        CHECK(where_untouched(w));

        set_ctx("%s, one rank: tol = -1", what);
        where_reset(w);
        np.tol = -1.0;
        mp.tol = -1.0;
        where_call(w, &one, NULL, KF, &np, &mp, 0);
        np = fit_nmf_params();
        mp = fit_mvsl_params();
        CHECK_STATUS(w->st, MVNMF_STATUS_BAD_PARAMETER);
        CHECK(refusal_at(&w->rep, 5 + off, SIZE_MAX, SIZE_MAX, SIZE_MAX));
        CHECK(where_untouched(w));

        set_ctx("%s, one rank: k = 0", what);
        where_reset(w);
        where_call(w, &one, NULL, 0, &np, &mp, 0);
        CHECK_STATUS(w->st, MVNMF_STATUS_BAD_RANK);
        CHECK(refusal_at(&w->rep, 4 + off, SIZE_MAX, SIZE_MAX, SIZE_MAX));
        CHECK(where_untouched(w));

        set_ctx("%s, one rank: the workspace one byte short", what);
        where_reset(w);
        where_call(w, &one, NULL, KF, &np, &mp, 1);
        CHECK_STATUS(w->st, MVNMF_STATUS_WORKSPACE_TOO_SMALL);
        CHECK(refusal_at(&w->rep, 9 + off, SIZE_MAX, SIZE_MAX, SIZE_MAX));
        CHECK(where_untouched(w));

        set_ctx("%s, one rank: rank 1 of 1", what);
        where_reset(w);
        one.rank = 1;
        where_call(w, &one, NULL, KF, &np, &mp, 0);
        one.rank = 0;
        CHECK_STATUS(w->st, MVNMF_STATUS_BAD_PARAMETER);
        CHECK(refusal_at(&w->rep, 1, SIZE_MAX, SIZE_MAX, SIZE_MAX));
        CHECK(where_untouched(w));

        set_ctx("%s, one rank: an allreduce that fails", what);
        where_reset(w);
        one.allreduce = bad_allreduce;
        where_call(w, &one, NULL, KF, &np, &mp, 0);
        one.allreduce = ok_allreduce;
        CHECK_STATUS(w->st, MVNMF_STATUS_COMM_FAILED);
        CHECK(refusal_at(&w->rep, 1, SIZE_MAX, SIZE_MAX, SIZE_MAX));
        CHECK(where_untouched(w));

        if (mvsl) {
            set_ctx("%s, one rank: a label out of range", what);
            where_reset(w);
            w->labels = bad_labels;
            where_call(w, &one, NULL, KF, &np, &mp, 0);
            w->labels = labels;
            CHECK_STATUS(w->st, MVNMF_STATUS_BAD_LABEL);
            CHECK(refusal_at(&w->rep, 4, SIZE_MAX, SIZE_MAX, SIZE_MAX));
            CHECK(where_untouched(w));

            set_ctx("%s, one rank: a CSR graph without the exchange", what);
            where_reset(w);
            where_call(w, &one, &csr, KF, &np, &mp, 0);
            CHECK_STATUS(w->st, MVNMF_STATUS_NULL_POINTER);
            CHECK(refusal_at(&w->rep, 1, SIZE_MAX, SIZE_MAX, SIZE_MAX));
            CHECK(where_untouched(w));
        }

        /* Two ranks (items 0 .. 140 and 140 .. 300), rank 1's view 1 with the
         * NaN of item 200: rank 1 says where, rank 0 nowhere. */
        set_ctx("%s, 2 ranks: a NaN on rank 1 at view 1, row 3, item 200", what);
        x2n[123 * M2 + 5] = x2[123 * M2 + 5];
        x2n[200 * M2 + 3] = NAN;
        memset(&hub, 0, sizeof hub);
        pthread_mutex_init(&hub.mu, NULL);
        pthread_cond_init(&hub.cv, NULL);
        hub.ranks = 2;
        hub.lie_rank = -1;
        for (r = 0; r < 2; r++) {
            memset(&wr[r], 0, sizeof wr[r]);
            wr[r].x1 = x1;
            wr[r].x2 = x2n;
            wr[r].labels = labels;
            wr[r].a = r == 0 ? 0 : 140;
            wr[r].b = r == 0 ? 140 : NI;
            wr[r].mvsl = mvsl;
            wr[r].ctx.hub = &hub;
            wr[r].ctx.rank = r;
            where_reset(&wr[r]);
        }
        for (r = 0; r < 2; r++)
            pthread_create(&th[r], NULL, where_rank_main, &wr[r]);
        for (r = 0; r < 2; r++)
            pthread_join(th[r], NULL);
        pthread_cond_destroy(&hub.cv);
        pthread_mutex_destroy(&hub.mu);
        CHECK_STATUS(wr[1].st, MVNMF_STATUS_NON_FINITE_INPUT);
        CHECK(refusal_at(&wr[1].rep, 2, 1, 3, 60));
        CHECK_STATUS(wr[0].st, MVNMF_STATUS_PEER_FAILED);
        CHECK(refusal_at(&wr[0].rep, 0, SIZE_MAX, SIZE_MAX, SIZE_MAX));
        CHECK(where_untouched(&wr[0]) && where_untouched(&wr[1]));
        note("%s: refusals say where (one rank; rank 1 of 2, rank 0 PEER_FAILED nowhere)", what);
    }
    free(wr);
    free(zeros);
    free(bad_labels);
    free(x2n);
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

    dist_f32_case(x1, x2, labels);
    dist_tge_lies_case(x1, x2);
    dist_where_case(x1, x2, labels);

    free(x1);
    free(x2);
    return g_failures;
}
