/* C test harness of the model solvers of the mvnmf C ABI: the shallow
 * graph-regularised solver (mvnmf_mvsl_*) and the deep layer-wise solver
 * (mvnmf_deep_*).
 *
 * Built like harness.c (ffi-tests/build.rs): twice, as C99 and as C++11, with
 * -Wall -Wextra -Wpedantic -Werror; explicit casts from void *, no designated
 * initializers, compound literals or VLAs, `static` on everything but the entry
 * point HARNESS_MODELS_ENTRY (renamed per build), which returns the number of
 * failed checks and prints one line per failure (with verbose != 0 also one
 * line per test group). The small helpers of harness.c are repeated here so
 * that each file stands alone.
 *
 * What is checked (each a documented property a wrong library would break):
 *   1. the objective seen by the progress callback never increases (to 1e-10
 *      of 0.5 sum ||X_v||^2) for every shallow preset (also with a small alpha)
 *      x graph kind (NONE, SGE, CSR) x dense / CSC views of different scales x
 *      seeds, and for the deep presets with several layer lists (one layer,
 *      three layers, a hidden size clamped by a view's rows); the parts add up
 *      to the total; the reconstruction, sparsity, graph and L1 parts equal
 *      the ones computed here from U (for deep: U~ = U_1...U_M multiplied here
 *      from the documented buffer layout) and V; 0 <= V <= vmax, U >= 0, lower
 *      layers in [0, 1] with box_lower; nothing is written past any buffer;
 *   2. reductions: the JOINT_NMF preset is mvnmf_joint_nmf_fit bit for bit;
 *      deep with one layer from a given start is mvnmf_mvsl_fit (MCL) bit
 *      for bit;
 *   3. every error class returns its code with U, V and the report
 *      byte-for-byte untouched (and the workspace queries refuse the same
 *      inputs, leaving *bytes alone); the workspace query is exact at any
 *      alignment;
 *   4. cancellation at iteration 3 leaves the iterate of a max_iter = 3 run;
 *   5. the encoders: monotone; the shallow encoder without graph and L1 is
 *      mvnmf_joint_nmf_encode bit for bit; the deep encoder is the shallow one
 *      on U~; deep encoding reconstructs held-out items of low-rank data;
 *   and: a given deep start is rescaled into the box with U~ unchanged; the
 *      convergence rule; determinism; queries that read no data; one view,
 *      three views, a 3-row view with K = 6, an all-zero view, eps = 0.
 *
 * Regressions of two bugs this harness found: the deep workspace queries with
 * a huge K (an unchecked product panicked: INTERNAL instead of SIZE_OVERFLOW),
 * and a penalty graph with vmax = inf (unbounded objective: V = inf, NaN with
 * status OK; now refused with BAD_PARAMETER).
 */
#include "mvnmf.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
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

int HARNESS_MODELS_ENTRY(int verbose);
#ifdef __cplusplus
}
#endif

#define HARNESS_DENSE_HELPERS
#include "harness_common.h"

#define MAXV 4          /* views per problem, at most */
#define MAXL 4          /* layers, at most */
#define MAX_TRACE 1024  /* callback values recorded per run, at most */
#define PAD 64          /* guard bytes around every workspace */

/* ---- checks ------------------------------------------------------------ */

static unsigned g_runs;  /* varies the workspace alignment from run to run */


static int all_zero(const double *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (p[i] != 0.0)
            return 0;
    return 1;
}

/* ---- test matrices: harness_common.h (HARNESS_DENSE_HELPERS) ------------- */

/* ---- deep factor buffers, done here from the documented layout ----------- */

/* U_m is in[m] x out[m]: p_0 = rows, hidden p_m = min(layers[m], p_{m-1}), the
 * top layer K = layers[nl-1] unclamped; returns the buffer length. */
static size_t cdims(size_t rows, const size_t *layers, size_t nl, size_t *in, size_t *out)
{
    size_t m, prev = rows, len = 0;
    for (m = 0; m < nl; m++) {
        size_t o = m + 1 == nl ? layers[m] : (layers[m] < prev ? layers[m] : prev);
        in[m] = prev;
        out[m] = o;
        len += prev * o;
        prev = o;
    }
    return len;
}

/* ut (rows x K) = U_1 U_2 ... U_M from one view's buffer, left to right. */
static void cstack(const double *buf, size_t rows, const size_t *layers, size_t nl, double *ut)
{
    size_t in[MAXL], out[MAXL], m, i, j, l, off, wmax = 0;
    double *a, *b;
    cdims(rows, layers, nl, in, out);
    for (m = 0; m < nl; m++)
        if (out[m] > wmax)
            wmax = out[m];
    a = dalloc(rows * wmax);
    b = dalloc(rows * wmax);
    memcpy(a, buf, rows * out[0] * sizeof(double));
    off = rows * out[0];
    for (m = 1; m < nl; m++) {
        const double *um = buf + off;
        double *t;
        for (j = 0; j < out[m]; j++) {
            for (i = 0; i < rows; i++) {
                double s = 0.0;
                for (l = 0; l < in[m]; l++)
                    s += a[i + l * rows] * um[l + j * in[m]];
                b[i + j * rows] = s;
            }
        }
        off += in[m] * out[m];
        t = a;
        a = b;
        b = t;
    }
    memcpy(ut, a, rows * layers[nl - 1] * sizeof(double));
    free(a);
    free(b);
}

/* ---- graphs ---------------------------------------------------------------- */

/* A graph descriptor with its dense copies (for the traces computed here). */
typedef struct {
    size_t n;
    uint32_t *labels;
    size_t n_classes;
    double *wa, *wp;          /* dense n x n (symmetric); NULL: absent */
    size_t *arp, *aci, *prp, *pci;
    double *aw, *pw;
    mvnmf_graph g;
} hgraph;

enum { G_NONE, G_SGE, G_CSR, G_CSR_AFF };
static const char *const GNAME[] = { "none", "sge", "csr", "csr-aff" };

/* The labels of the test problems: class j % 3, every fourth item unlabeled. */
static uint32_t label_of(size_t j)
{
    return j % 4 == 1 ? MVNMF_UNLABELED : (uint32_t)(j % 3);
}

static void dense_to_csr(size_t n, const double *w, size_t **rp, size_t **ci, double **val)
{
    size_t i, j, nnz = 0, p = 0;
    for (i = 0; i < n * n; i++)
        nnz += w[i] != 0.0;
    *rp = (size_t *)malloc((n + 1) * sizeof(size_t));
    *ci = (size_t *)malloc((nnz + 1) * sizeof(size_t));
    *val = dalloc(nnz + 1);
    (*rp)[0] = 0;
    for (i = 0; i < n; i++) {
        for (j = 0; j < n; j++) {
            if (w[i + j * n] != 0.0) {
                (*ci)[p] = j;
                (*val)[p++] = w[i + j * n];
            }
        }
        (*rp)[i + 1] = p;
    }
}

/* kind G_NONE, G_SGE (labels label_of, 3 classes), G_CSR (a symmetric 4-NN
 * heat-kernel affinity graph over the columns of x and a penalty graph between
 * labeled items of different classes less than 6 apart) or G_CSR_AFF (the
 * affinity graph alone, with self-loops on every third item). */
static void hgraph_make(hgraph *h, int kind, const hmat *x)
{
    size_t n = x->cols, i, j, l;
    memset(h, 0, sizeof *h);
    h->n = n;
    h->g.kind = MVNMF_GRAPH_NONE;
    h->g.n = n;
    if (kind == G_NONE)
        return;
    h->labels = (uint32_t *)malloc(n * sizeof(uint32_t));
    for (j = 0; j < n; j++)
        h->labels[j] = label_of(j);
    h->n_classes = 3;
    h->wa = dalloc(n * n);
    if (kind != G_CSR_AFF)
        h->wp = dalloc(n * n);
    if (kind == G_SGE) {
        size_t nc[3] = { 0, 0, 0 }, nl = 0;
        for (j = 0; j < n; j++)
            if (h->labels[j] != MVNMF_UNLABELED) {
                nc[h->labels[j]]++;
                nl++;
            }
        for (i = 0; i < n; i++) {
            for (j = 0; j < n; j++) {
                uint32_t a = h->labels[i], b = h->labels[j];
                if (i == j || a == MVNMF_UNLABELED || b == MVNMF_UNLABELED)
                    continue;
                if (a == b)
                    h->wa[i + j * n] = 1.0 / (double)nc[a] - 1.0 / (double)nl;
                else
                    h->wp[i + j * n] = 1.0 / (double)nl;
            }
        }
        h->g.kind = MVNMF_GRAPH_SGE;
        h->g.labels = h->labels;
        h->g.n_classes = h->n_classes;
        return;
    }
    {
        double *d = dalloc(n * n), mean = 0.0;
        for (i = 0; i < n; i++) {
            for (j = 0; j < n; j++) {
                double s = 0.0;
                for (l = 0; l < x->rows; l++) {
                    double e = x->a[l + i * x->ld] - x->a[l + j * x->ld];
                    s += e * e;
                }
                d[i + j * n] = s;
                mean += s / (double)(n * n);
            }
        }
        for (i = 0; i < n; i++) {
            /* the 4 nearest other items of i (ties: lower index) */
            int taken[4] = { -1, -1, -1, -1 };
            size_t t;
            for (t = 0; t < 4; t++) {
                size_t best = n;
                for (j = 0; j < n; j++) {
                    int used = j == i;
                    size_t s;
                    for (s = 0; s < t; s++)
                        used |= taken[s] == (int)j;
                    if (!used && (best == n || d[i + j * n] < d[i + best * n]))
                        best = j;
                }
                taken[t] = (int)best;
                /* symmetric by construction: d is symmetric */
                h->wa[i + best * n] = h->wa[best + i * n] = exp(-d[i + best * n] / mean);
            }
        }
        free(d);
    }
    if (kind == G_CSR_AFF) /* self-loops too: they add to D and W alike */
        for (i = 0; i < n; i += 3)
            h->wa[i + i * n] = 0.3;
    if (h->wp != NULL)
        for (i = 0; i < n; i++)
            for (j = 0; j < n; j++)
                if (h->labels[i] != MVNMF_UNLABELED && h->labels[j] != MVNMF_UNLABELED &&
                    h->labels[i] != h->labels[j] && (i > j ? i - j : j - i) < 6)
                    h->wp[i + j * n] = 0.5;
    h->g.kind = MVNMF_GRAPH_CSR;
    dense_to_csr(n, h->wa, &h->arp, &h->aci, &h->aw);
    h->g.affinity_row_ptr = h->arp;
    h->g.affinity_col_idx = h->aci;
    h->g.affinity_weights = h->aw;
    if (h->wp != NULL) {
        dense_to_csr(n, h->wp, &h->prp, &h->pci, &h->pw);
        h->g.penalty_row_ptr = h->prp;
        h->g.penalty_col_idx = h->pci;
        h->g.penalty_weights = h->pw;
    }
}

static void hgraph_free(hgraph *h)
{
    free(h->labels); free(h->wa); free(h->wp); free(h->arp); free(h->aci); free(h->aw);
    free(h->prp); free(h->pci); free(h->pw);
    memset(h, 0, sizeof *h);
}

/* tr(V L V^T) = sum_j D_jj |v_j|^2 - sum_ij W_ij v_i.v_j for V k x n; *scale
 * gets sum_j D_jj |v_j|^2 (the size of the terms, for tolerances). */
static double graph_trace(const double *w, size_t n, const double *v, size_t k, double *scale)
{
    double t = 0.0, s = 0.0;
    size_t i, j, r;
    for (i = 0; i < n; i++) {
        double deg = 0.0, vi2 = 0.0;
        for (j = 0; j < n; j++)
            deg += w[i + j * n];
        for (r = 0; r < k; r++)
            vi2 += v[r + i * k] * v[r + i * k];
        s += deg * vi2;
        for (j = 0; j < n; j++) {
            double dotij = 0.0;
            if (w[i + j * n] == 0.0)
                continue;
            for (r = 0; r < k; r++)
                dotij += v[r + i * k] * v[r + j * k];
            t -= w[i + j * n] * dotij;
        }
    }
    *scale = s;
    return s + t;
}

/* ---- running the solvers -------------------------------------------------- */

enum { OP_SFIT, OP_SENC, OP_DFIT, OP_DENC };
static const char *const OPN[] = { "mvsl_fit", "mvsl_encode", "deep_fit", "deep_encode" };

/* Everything a call reads besides U, V, the workspace and the callback. */
typedef struct {
    const mvnmf_view *views;
    size_t nv;
    const mvnmf_graph *graph;
    size_t k;                 /* shallow rank */
    const size_t *layers;     /* deep */
    size_t nl;
    const mvnmf_mvsl_params *sp;
    const mvnmf_deep_params *dp;
} mspec;

static uint32_t mquery(int op, const mspec *s, size_t *bytes)
{
    switch (op) {
    case OP_SFIT: return mvnmf_mvsl_fit_workspace(s->views, s->nv, s->graph, s->k, s->sp, bytes);
    case OP_SENC: return mvnmf_mvsl_encode_workspace(s->views, s->nv, s->graph, s->k, s->sp, bytes);
    case OP_DFIT:
        return mvnmf_deep_fit_workspace(s->views, s->nv, s->graph, s->layers, s->nl, s->dp, bytes);
    default: return mvnmf_deep_encode_workspace(s->views, s->nv, s->graph, s->layers, s->nl, s->dp, bytes);
    }
}

static uint32_t mcall(int op, const mspec *s, double *const *u, double *v, void *work, size_t wb,
                      mvnmf_progress_fn cb, void *user, mvnmf_report *rep)
{
    const double *cu[MAXV];
    const double *const *cup = NULL;
    size_t i;
    if (u != NULL) {
        for (i = 0; i < s->nv && i < MAXV; i++)
            cu[i] = u[i];
        cup = cu;
    }
    switch (op) {
    case OP_SFIT: return mvnmf_mvsl_fit(s->views, s->nv, s->graph, s->k, s->sp, u, v, work, wb, cb, user, rep);
    case OP_SENC:
        return mvnmf_mvsl_encode(s->views, s->nv, s->graph, s->k, s->sp, cup, v, work, wb, cb, user, rep);
    case OP_DFIT:
        return mvnmf_deep_fit(s->views, s->nv, s->graph, s->layers, s->nl, s->dp, u, v, work, wb, cb, user, rep);
    default:
        return mvnmf_deep_encode(s->views, s->nv, s->graph, s->layers, s->nl, s->dp, cup, v, work, wb, cb, user,
                                 rep);
    }
}

/* Objectives seen by the callback; it returns nonzero at iteration stop_at. */
typedef struct {
    double obj[MAX_TRACE];
    unsigned n;
    int bad;       /* iterations out of sequence */
    int parts_bad; /* the parts do not add up to the total */
    long stop_at;  /* -1: never */
} mtrace_t;

static void trace_reset(mtrace_t *t, long stop_at)
{
    t->n = 0;
    t->bad = 0;
    t->parts_bad = 0;
    t->stop_at = stop_at;
}

/* The total is documented as the sum of the weighted parts: in this order it
 * is the same floating-point sum the library forms. */
static int parts_add_up(const mvnmf_objective *o)
{
    double s = mvnmf_objective_term(o, MVNMF_TERM_RECONSTRUCTION) + mvnmf_objective_term(o, MVNMF_TERM_SPARSITY) + mvnmf_objective_term(o, MVNMF_TERM_AFFINITY) + mvnmf_objective_term(o, MVNMF_TERM_PENALTY) + mvnmf_objective_term(o, MVNMF_TERM_L1);
    return s == o->total;
}

static int trace_cb(const mvnmf_progress *pr, void *user)
{
    mtrace_t *t = (mtrace_t *)user;
    if (pr->iter != t->n || t->n >= MAX_TRACE)
        t->bad = 1;
    else
        t->obj[t->n] = pr->objective.total;
    if (!parts_add_up(&pr->objective))
        t->parts_bad = 1;
    t->n++;
    return t->stop_at >= 0 && (long)pr->iter == t->stop_at;
}

/* Queries the workspace, allocates exactly that many bytes at a varying
 * alignment (filled with NaN bytes), runs `op` with the recording callback and
 * checks that nothing around the workspace was written. */
static uint32_t msolve(int op, const mspec *s, double *const *u, double *v, long stop_at, mtrace_t *t,
                       mvnmf_report *rep)
{
    size_t bytes = 0, off = (g_runs++ * 13u) % 64u;
    unsigned char *raw;
    uint32_t st = mquery(op, s, &bytes);
    trace_reset(t, stop_at);
    if (!CHECK_STATUS(st, MVNMF_STATUS_OK))
        return st;
    raw = (unsigned char *)malloc(off + bytes + PAD);
    if (!CHECK(raw != NULL))
        return MVNMF_STATUS_INTERNAL;
    memset(raw, 0x5A, off);
    memset(raw + off, 0xFF, bytes);
    memset(raw + off + bytes, 0x5A, PAD);
    st = mcall(op, s, u, v, raw + off, bytes, trace_cb, t, rep);
    CHECK(bytes_are(raw, off, 0x5A) && bytes_are(raw + off + bytes, PAD, 0x5A));
    free(raw);
    return st;
}

/* The trace is monotone (up to 1e-10 of 0.5 sum ||X||^2), its parts add up,
 * and it agrees with the report. */
static void check_trace(const mtrace_t *t, const mvnmf_report *rep, double hx2)
{
    unsigned i, ups = 0, first = 0;
    CHECK(!t->bad);
    CHECK(!t->parts_bad);
    CHECK(t->n == rep->iterations + 1u);
    if (t->bad || t->n == 0)
        return;
    for (i = 1; i < t->n; i++) {
        if (!(t->obj[i] <= t->obj[i - 1] + 1e-10 * hx2)) {
            if (!ups)
                first = i;
            ups++;
        }
    }
    if (!CHECK(ups == 0))
        printf("    objective rose at %u of %u iterations, first at %u: %.17g -> %.17g (0.5||X||^2 = %g)\n",
               ups, t->n - 1, first, t->obj[first - 1], t->obj[first], hx2);
    CHECK(rep->initial.total == t->obj[0]);
    CHECK(rep->objective.total == t->obj[t->n - 1]);
    CHECK(parts_add_up(&rep->initial) && parts_add_up(&rep->objective));
}

/* Field by field (the structs have padding bytes). */
static int sp_equal(const mvnmf_mvsl_params *a, const mvnmf_mvsl_params *b)
{
    return a->max_iter == b->max_iter && a->tol == b->tol && a->eps == b->eps && a->vmax == b->vmax &&
           a->seed == b->seed && a->init == b->init && a->sparsity == b->sparsity && a->alpha == b->alpha &&
           a->beta == b->beta && a->gamma == b->gamma && a->u_inner == b->u_inner && a->v_inner == b->v_inner &&
           a->eta_up == b->eta_up && a->eta_down == b->eta_down && a->l0 == b->l0;
}

/* ---- a model problem: views, graph, factors ------------------------------- */

typedef struct {
    hmat x[MAXV];
    mvnmf_view views[MAXV];
    size_t nv, n;
    double hx2;
    hgraph gr;
} mprob;

/* Views of the same n items, r0 x n (dense, stride r0 + 3, scale 1) and, if
 * r1 > 0, r1 x n (scale `scale1`), both CSC when `sparse`; the graph of `gkind`
 * over the first view's columns. */
static void mprob_make_rows(mprob *q, size_t r0, size_t r1, size_t n, int sparse, double scale1, int gkind,
                            uint64_t seed)
{
    size_t i;
    memset(q, 0, sizeof *q);
    hmat_make(&q->x[0], r0, n, sparse ? r0 : r0 + 3, sparse ? 0.35 : 1.0, 1.0, seed, seed + 50);
    q->nv = 1;
    if (r1 > 0) {
        hmat_make(&q->x[1], r1, n, r1, sparse ? 0.5 : 1.0, scale1, seed + 1, seed + 50);
        q->nv = 2;
    }
    q->n = n;
    for (i = 0; i < q->nv; i++) {
        q->views[i] = q->x[i].view;
        q->hx2 += half_sq(&q->x[i]);
    }
    hgraph_make(&q->gr, gkind, &q->x[0]);
}

/* The standard pair: 30 x n and 12 x n. */
static void mprob_make(mprob *q, size_t n, int sparse, double scale1, int gkind, uint64_t seed)
{
    mprob_make_rows(q, 30, 12, n, sparse, scale1, gkind, seed);
}

static void mprob_free(mprob *q)
{
    size_t i;
    for (i = 0; i < q->nv; i++)
        hmat_free(&q->x[i]);
    hgraph_free(&q->gr);
}

/* Factor buffers for the views of q: shallow (nl = 0, rank k) or deep. */
typedef struct {
    double *u[MAXV];
    size_t len[MAXV];
    double *v;
    size_t nv, k, n;
} mfacs;

static void mfacs_alloc(mfacs *f, const mprob *q, size_t k, const size_t *layers, size_t nl)
{
    size_t i, in[MAXL], out[MAXL];
    f->nv = q->nv;
    f->n = q->n;
    f->k = nl ? layers[nl - 1] : k;
    for (i = 0; i < q->nv; i++) {
        f->len[i] = nl ? cdims(q->x[i].rows, layers, nl, in, out) : q->x[i].rows * k;
        f->u[i] = dalloc(f->len[i]);
    }
    f->v = dalloc(f->k * q->n);
}

static void mfacs_free(mfacs *f)
{
    size_t i;
    for (i = 0; i < f->nv; i++)
        free(f->u[i]);
    free(f->v);
}

static void mfacs_copy(mfacs *dst, const mfacs *src)
{
    size_t i;
    for (i = 0; i < src->nv; i++)
        memcpy(dst->u[i], src->u[i], src->len[i] * sizeof(double));
    memcpy(dst->v, src->v, src->k * src->n * sizeof(double));
}

static int mfacs_same_u(const mfacs *a, const mfacs *b)
{
    size_t i;
    for (i = 0; i < a->nv; i++)
        if (memcmp(a->u[i], b->u[i], a->len[i] * sizeof(double)) != 0)
            return 0;
    return 1;
}

static int mfacs_same(const mfacs *a, const mfacs *b)
{
    return mfacs_same_u(a, b) && memcmp(a->v, b->v, a->k * a->n * sizeof(double)) == 0;
}

/* What the model is: the parameters of the run and, for deep, the layers. */
typedef struct {
    const mvnmf_mvsl_params *sp; /* the shallow parameters (deep: &dp->top) */
    const size_t *layers;
    size_t nl;                      /* 0: shallow */
    int box;                        /* deep: lower layers in [0, 1] */
} mmodel;

/* Checks a finished fit (enc = 0) or encode (enc = 1) of q with factors f:
 * bounds, guards, and every part of the report's objective against the value
 * computed here. Returns the number of views whose U~ is entirely zero. */
static unsigned check_parts(const mprob *q, const mmodel *md, const mvnmf_graph *g, const mfacs *f,
                            const mvnmf_report *rep, int enc)
{
    const mvnmf_mvsl_params *p = md->sp;
    const mvnmf_objective *o = &rep->objective;
    size_t i, j, c, m, k = f->k, in[MAXL], out[MAXL];
    double rec = 0.0, spars = 0.0, l1 = 0.0;
    int ok_u = 1, ok_box = 1;
    unsigned dead = 0;
    int use_graph = g->kind != MVNMF_GRAPH_NONE && p->beta > 0.0;

    for (i = 0; i < q->nv; i++) {
        size_t rows = q->x[i].rows, off = 0;
        double *ut = dalloc(rows * k);
        const double *top;
        size_t top_rows;
        ok_u &= all_in(f->u[i], f->len[i], 0.0, INFINITY) && guard_ok(f->u[i], f->len[i]);
        if (md->nl) {
            cdims(rows, md->layers, md->nl, in, out);
            for (m = 0; m + 1 < md->nl; m++) {
                if (md->box)
                    ok_box &= all_in(f->u[i] + off, in[m] * out[m], 0.0, 1.0);
                off += in[m] * out[m];
            }
            top = f->u[i] + off;
            top_rows = in[md->nl - 1];
            cstack(f->u[i], rows, md->layers, md->nl, ut);
        } else {
            top = f->u[i];
            top_rows = rows;
            memcpy(ut, f->u[i], rows * k * sizeof(double));
        }
        dead += all_zero(ut, rows * k);
        rec += half_resid(&q->x[i], ut, f->v, k);
        for (c = 0; c < k; c++) {
            const double *col = top + c * top_rows;
            double s = 0.0;
            for (j = 0; j < top_rows; j++) {
                if (p->sparsity == MVNMF_SPARSITY_L12)
                    s += col[j] * col[j];
                else if (col[j] > s)
                    s = col[j];
            }
            spars += p->sparsity == MVNMF_SPARSITY_L12 ? sqrt(s) : s;
        }
        free(ut);
    }
    CHECK(ok_u);
    CHECK(ok_box);
    CHECK(all_in(f->v, k * q->n, 0.0, p->vmax) && guard_ok(f->v, k * q->n));
    for (j = 0; j < k * q->n; j++)
        l1 += f->v[j];
    if (!CHECK(close_to(mvnmf_objective_term(o, MVNMF_TERM_RECONSTRUCTION), rec, 1e-8, 1e-13 * q->hx2)))
        printf("    reconstruction %.17g, computed here %.17g\n", mvnmf_objective_term(o, MVNMF_TERM_RECONSTRUCTION), rec);
    /* unused parts are exactly 0 */
    if (enc || p->sparsity == MVNMF_SPARSITY_NONE || p->alpha == 0.0)
        CHECK(mvnmf_objective_term(o, MVNMF_TERM_SPARSITY) == 0.0);
    else if (!CHECK(close_to(mvnmf_objective_term(o, MVNMF_TERM_SPARSITY), p->alpha * spars, 1e-12, 0.0)))
        printf("    sparsity %.17g, computed here %.17g\n", mvnmf_objective_term(o, MVNMF_TERM_SPARSITY), p->alpha * spars);
    if (p->gamma == 0.0)
        CHECK(mvnmf_objective_term(o, MVNMF_TERM_L1) == 0.0);
    else
        CHECK(close_to(mvnmf_objective_term(o, MVNMF_TERM_L1), p->gamma * l1, 1e-12, 0.0));
    if (!use_graph) {
        CHECK(mvnmf_objective_term(o, MVNMF_TERM_AFFINITY) == 0.0 && mvnmf_objective_term(o, MVNMF_TERM_PENALTY) == 0.0);
    } else {
        double sa = 0.0, sp = 0.0, ta = 0.0, tp = 0.0;
        if (q->gr.wa != NULL)
            ta = 0.5 * p->beta * graph_trace(q->gr.wa, q->n, f->v, k, &sa);
        if (q->gr.wp != NULL)
            tp = -0.5 * p->beta * graph_trace(q->gr.wp, q->n, f->v, k, &sp);
        if (!CHECK(close_to(mvnmf_objective_term(o, MVNMF_TERM_AFFINITY), ta, 0.0, 1e-10 * (0.5 * p->beta * sa + 1e-300)) &&
                   close_to(mvnmf_objective_term(o, MVNMF_TERM_PENALTY), tp, 0.0, 1e-10 * (0.5 * p->beta * sp + 1e-300))))
            printf("    affinity %.17g (here %.17g), penalty %.17g (here %.17g)\n", mvnmf_objective_term(o, MVNMF_TERM_AFFINITY), ta, mvnmf_objective_term(o, MVNMF_TERM_PENALTY),
                   tp);
    }
    CHECK(parts_add_up(o));
    return dead;
}

/* Nonzero columns of the top layers, summed over views (to show how much the
 * group sparsity removed). */
static size_t live_columns(const mprob *q, const mmodel *md, const mfacs *f)
{
    size_t i, c, live = 0, in[MAXL], out[MAXL];
    for (i = 0; i < q->nv; i++) {
        size_t rows = q->x[i].rows, off = 0, m;
        if (md->nl) {
            cdims(rows, md->layers, md->nl, in, out);
            for (m = 0; m + 1 < md->nl; m++)
                off += in[m] * out[m];
            rows = in[md->nl - 1];
        }
        for (c = 0; c < f->k; c++)
            live += !all_zero(f->u[i] + off + c * rows, rows);
    }
    return live;
}

/* ---- 1: monotonicity and the objective's parts ---------------------------- */

/* Fits q (max_iter iterations, tol 0) and checks the trace, the report and the
 * parts; then encodes the same items with the fitted bases, random start
 * (graph as in the fit) and checks the same. */
static void mono_run(const char *name, mprob *q, const mmodel *md, size_t k, const mvnmf_deep_params *dp)
{
    mspec s;
    mfacs f, f0;
    mtrace_t *t = (mtrace_t *)malloc(sizeof *t);
    mvnmf_report rep;
    uint32_t st;
    unsigned dead;
    int deep = md->nl > 0;

    memset(&s, 0, sizeof s);
    s.views = q->views;
    s.nv = q->nv;
    s.graph = &q->gr.g;
    s.k = k;
    s.layers = md->layers;
    s.nl = md->nl;
    s.sp = md->sp;
    s.dp = dp;
    mfacs_alloc(&f, q, k, md->layers, md->nl);
    mfacs_alloc(&f0, q, k, md->layers, md->nl);

    set_ctx("%s fit %s", deep ? "deep" : "shallow", name);
    memset(&rep, 0xA5, sizeof rep);
    st = msolve(deep ? OP_DFIT : OP_SFIT, &s, f.u, f.v, -1, t, &rep);
    if (CHECK_STATUS(st, MVNMF_STATUS_OK)) {
        check_trace(t, &rep, q->hx2);
        CHECK(rep.stop == MVNMF_STOP_MAX_ITER && rep.iterations == md->sp->max_iter);
        dead = check_parts(q, md, &q->gr.g, &f, &rep, 0);
        if (!CHECK(rep.dead_views == dead))
            printf("    dead_views %u, views with U~ = 0: %u\n", (unsigned)rep.dead_views, dead);
        note("  %-7s fit    %-44s: %.4e -> %.4e, live columns %zu/%zu, dead views %u", deep ? "deep" : "shallow",
             name, rep.initial.total, rep.objective.total, live_columns(q, md, &f), f.k * q->nv,
             (unsigned)rep.dead_views);
    }

    set_ctx("%s encode %s", deep ? "deep" : "shallow", name);
    mfacs_copy(&f0, &f);
    memset(&rep, 0xA5, sizeof rep);
    st = msolve(deep ? OP_DENC : OP_SENC, &s, f.u, f.v, -1, t, &rep);
    if (CHECK_STATUS(st, MVNMF_STATUS_OK)) {
        check_trace(t, &rep, q->hx2);
        CHECK(rep.stop == MVNMF_STOP_MAX_ITER && rep.iterations == md->sp->max_iter);
        CHECK(mfacs_same_u(&f, &f0)); /* U is read only */
        dead = check_parts(q, md, &q->gr.g, &f, &rep, 1);
        CHECK(rep.dead_views == dead);
        note("  %-7s encode %-44s: %.4e -> %.4e", deep ? "deep" : "shallow", name, rep.initial.total,
             rep.objective.total);
    }
    mfacs_free(&f);
    mfacs_free(&f0);
    free(t);
}

static void test_shallow_monotone(void)
{
    /* overrides: a negative value keeps the preset's */
    static const struct {
        uint32_t preset;
        double alpha, beta, gamma, eps;
        const char *name;
    } cases[] = {
        { MVNMF_MVSL_PRESET_JOINT_NMF, -1, -1, -1, -1, "joint" },
        { MVNMF_MVSL_PRESET_GNMF, -1, -1, -1, -1, "gnmf" },
        { MVNMF_MVSL_PRESET_MVSL, -1, -1, -1, -1, "mvsl" },
        { MVNMF_MVSL_PRESET_MVSL, 0.3, -1, -1, -1, "mvsl a=0.3" },
        { MVNMF_MVSL_PRESET_MCL, -1, -1, -1, -1, "mcl" },
        { MVNMF_MVSL_PRESET_MCL, 0.05, -1, -1, -1, "mcl a=0.05" },
        /* graph terms of the size of the reconstruction; a large L1 weight */
        { MVNMF_MVSL_PRESET_GNMF, -1, 20.0, -1, -1, "gnmf b=20" },
        { MVNMF_MVSL_PRESET_MVSL, 0.3, 50.0, -1, -1, "mvsl a=0.3 b=50" },
        { MVNMF_MVSL_PRESET_MCL, 0.05, 20.0, 0.5, -1, "mcl a=0.05 b=20 g=0.5" },
        /* eps = 0 (allowed; documented for graphs and gamma as "use eps > 0") */
        { MVNMF_MVSL_PRESET_MCL, 0.05, 20.0, -1, 0.0, "mcl a=0.05 b=20 eps=0" },
    };
    size_t c;
    int gk, sparse;
    uint64_t seed;
    char name[128];
    mprob q;
    mmodel md;
    mvnmf_mvsl_params p;

    note("shallow: monotonicity and the objective's parts (presets x graphs x dense/CSC x seeds)");
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (gk = G_NONE; gk <= G_CSR_AFF; gk++) {
            for (sparse = 0; sparse < 2; sparse++) {
                for (seed = 1; seed <= 3; seed++) {
                    if (gk == G_CSR_AFF && seed > 1)
                        continue;
                    set_ctx("preset %u", (unsigned)cases[c].preset);
                    CHECK_STATUS(mvnmf_mvsl_params_preset(cases[c].preset, &p), MVNMF_STATUS_OK);
                    if (cases[c].alpha >= 0.0)
                        p.alpha = cases[c].alpha;
                    if (cases[c].beta >= 0.0)
                        p.beta = cases[c].beta;
                    if (cases[c].gamma >= 0.0)
                        p.gamma = cases[c].gamma;
                    if (cases[c].eps >= 0.0)
                        p.eps = cases[c].eps;
                    p.max_iter = 60;
                    p.tol = 0.0;
                    p.seed = seed;
                    if (seed == 2) { /* the Lipschitz search's options */
                        p.u_inner = 5;
                        p.eta_up = 1.5;
                        p.eta_down = 1.0;
                        p.l0 = 10.0;
                    }
                    if (seed == 3) {
                        p.u_inner = 2;
                        p.v_inner = 2;
                    }
                    /* the second view 20x larger (seed 2: 1e-2 smaller) */
                    mprob_make(&q, 40, sparse, seed == 2 ? 1e-2 : 20.0, gk, seed * 10 + (uint64_t)c);
                    md.sp = &p;
                    md.layers = NULL;
                    md.nl = 0;
                    md.box = 0;
                    snprintf(name, sizeof name, "%s %s %s seed=%llu", cases[c].name, GNAME[gk],
                             sparse ? "csc" : "dense", (unsigned long long)seed);
                    mono_run(name, &q, &md, seed == 1 ? 4 : 3, NULL);
                    mprob_free(&q);
                }
            }
        }
    }
}

static void test_deep_monotone(void)
{
    static const size_t lay[][MAXL] = { { 10, 6 }, { 16, 9, 4 }, { 5 }, { 40, 20, 5 } };
    static const size_t nlay[] = { 2, 3, 1, 3 };
    static const struct {
        uint32_t preset;
        double alpha, beta; /* < 0: the preset's */
        const char *name;
    } cases[] = {
        { MVNMF_DEEP_PRESET_DMCL, -1, -1, "dmcl" },
        { MVNMF_DEEP_PRESET_DMCL, 0.05, -1, "dmcl a=0.05" },
        { MVNMF_DEEP_PRESET_DMCL, 0.05, 20.0, "dmcl a=0.05 b=20" },
        { MVNMF_DEEP_PRESET_DNMF, -1, -1, "dnmf" },
    };
    size_t c, l, i, len, in[MAXL], out[MAXL];
    int gk, sparse;
    uint64_t seed;
    char name[128];
    mprob q;
    mmodel md;
    mvnmf_deep_params dp;

    note("deep: monotonicity and the objective's parts (presets x layers x graphs x dense/CSC x seeds)");
    /* the factor lengths: {40, 20, 5} on 30 and 12 rows is clamped to
     * 30x30, 30x20, 20x5 and 12x12, 12x12, 12x5 */
    set_ctx("mvnmf_deep_factor_len, clamped hidden sizes");
    CHECK_STATUS(mvnmf_deep_factor_len(30, lay[3], 3, &len), MVNMF_STATUS_OK);
    CHECK(len == 30 * 30 + 30 * 20 + 20 * 5);
    CHECK_STATUS(mvnmf_deep_factor_len(12, lay[3], 3, &len), MVNMF_STATUS_OK);
    CHECK(len == 12 * 12 + 12 * 12 + 12 * 5);
    CHECK_STATUS(mvnmf_deep_factor_len(12, lay[1], 3, &len), MVNMF_STATUS_OK);
    CHECK(len == 12 * 12 + 12 * 9 + 9 * 4);
    CHECK_STATUS(mvnmf_deep_factor_len(3, lay[2], 1, &len), MVNMF_STATUS_OK);
    CHECK(len == 3 * 5); /* K is never clamped */
    for (l = 0; l < 4; l++)
        for (i = 1; i <= 40; i += 3) {
            CHECK_STATUS(mvnmf_deep_factor_len(i, lay[l], nlay[l], &len), MVNMF_STATUS_OK);
            CHECK(len == cdims(i, lay[l], nlay[l], in, out));
        }

    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (l = 0; l < 4; l++) {
            for (gk = G_NONE; gk <= G_CSR; gk++) {
                for (sparse = 0; sparse < 2; sparse++) {
                    for (seed = 1; seed <= 2; seed++) {
                        set_ctx("deep preset %u", (unsigned)cases[c].preset);
                        CHECK_STATUS(mvnmf_deep_params_preset(cases[c].preset, &dp), MVNMF_STATUS_OK);
                        if (cases[c].alpha >= 0.0)
                            dp.top.alpha = cases[c].alpha;
                        if (cases[c].beta >= 0.0)
                            dp.top.beta = cases[c].beta;
                        dp.top.max_iter = 40;
                        dp.top.tol = 0.0;
                        dp.top.seed = seed;
                        dp.pretrain_iter = 30;
                        if (seed == 2)
                            dp.v_init = MVNMF_DEEP_V_PRETRAINED;
                        if (seed == 2 && sparse)
                            dp.box_lower = 0; /* the papers' unconstrained form */
                        mprob_make(&q, 36, sparse, seed == 2 ? 1e-2 : 20.0, gk, seed * 10 + (uint64_t)c + 100);
                        md.sp = &dp.top;
                        md.layers = lay[l];
                        md.nl = nlay[l];
                        md.box = dp.box_lower != 0;
                        snprintf(name, sizeof name, "%s L=%zu:%zu:%zu %s %s seed=%llu%s%s", cases[c].name,
                                 lay[l][0], nlay[l] > 1 ? lay[l][1] : 0, nlay[l] > 2 ? lay[l][2] : 0, GNAME[gk],
                                 sparse ? "csc" : "dense", (unsigned long long)seed,
                                 dp.v_init == MVNMF_DEEP_V_PRETRAINED ? " vpre" : "", dp.box_lower ? "" : " nobox");
                        mono_run(name, &q, &md, 0, &dp);
                        mprob_free(&q);
                    }
                }
            }
        }
    }
}

/* ---- 2: reductions -------------------------------------------------------- */

static void test_reductions(void)
{
    mprob q;
    mspec s;
    mfacs a, b, start;
    mtrace_t *t = (mtrace_t *)malloc(sizeof *t), *t2 = (mtrace_t *)malloc(sizeof *t2);
    mvnmf_report ra, rb;
    mvnmf_mvsl_params sp;
    mvnmf_deep_params dp;
    mvnmf_nmf_params np = mvnmf_nmf_params_default();
    size_t bytes = 0, i, j;
    unsigned char *raw;
    int gk, sparse, variant;
    lcg_t g;

    note("reductions: JOINT_NMF preset = joint_nmf_fit; deep with one layer = shallow (MCL)");
    for (gk = G_NONE; gk <= G_CSR; gk++) {
        for (sparse = 0; sparse < 2; sparse++) {
            for (variant = 0; variant < 2; variant++) {
                mprob_make(&q, 30, sparse, 7.0, gk, 200 + (uint64_t)(gk * 4 + sparse * 2 + variant));
                mfacs_alloc(&a, &q, 3, NULL, 0);
                mfacs_alloc(&b, &q, 3, NULL, 0);
                CHECK_STATUS(mvnmf_mvsl_params_preset(MVNMF_MVSL_PRESET_JOINT_NMF, &sp), MVNMF_STATUS_OK);
                np = mvnmf_nmf_params_default();
                sp.max_iter = np.max_iter = 40;
                sp.tol = np.tol = 0.0;
                sp.seed = np.seed = 17 + (uint64_t)variant;
                if (variant) { /* any eps and vmax, the same in both */
                    sp.eps = np.eps = 1e-9;
                    sp.vmax = np.vmax = 0.5;
                }
                set_ctx("JOINT_NMF preset = joint_nmf_fit, graph %s (beta = 0), %s, variant %d", GNAME[gk],
                        sparse ? "csc" : "dense", variant);
                memset(&s, 0, sizeof s);
                s.views = q.views;
                s.nv = q.nv;
                s.graph = &q.gr.g;
                s.k = 3;
                s.sp = &sp;
                CHECK_STATUS(msolve(OP_SFIT, &s, a.u, a.v, -1, t, &ra), MVNMF_STATUS_OK);
                CHECK_STATUS(mvnmf_joint_nmf_fit_workspace(q.views, q.nv, 3, &np, &bytes), MVNMF_STATUS_OK);
                raw = (unsigned char *)malloc(bytes);
                trace_reset(t2, -1);
                CHECK_STATUS(mvnmf_joint_nmf_fit(q.views, q.nv, 3, &np, b.u, b.v, raw, bytes, trace_cb, t2, &rb),
                             MVNMF_STATUS_OK);
                free(raw);
                CHECK(mfacs_same(&a, &b));
                CHECK(same_report_values(&ra, &rb));
                CHECK(t->n == t2->n && memcmp(t->obj, t2->obj, t->n * sizeof(double)) == 0);
                mfacs_free(&a);
                mfacs_free(&b);
                mprob_free(&q);
            }
        }
    }

    /* deep, one layer {K}, given start = shallow from the same start */
    for (gk = G_NONE; gk <= G_CSR; gk++) {
        for (sparse = 0; sparse < 2; sparse++) {
            for (variant = 0; variant < 3; variant++) {
                size_t k = 4;
                mmodel md;
                mprob_make(&q, 30, sparse, 7.0, gk, 300 + (uint64_t)(gk * 6 + sparse * 3 + variant));
                mfacs_alloc(&a, &q, k, NULL, 0);
                mfacs_alloc(&b, &q, k, NULL, 0);
                mfacs_alloc(&start, &q, k, NULL, 0);
                g = lcg_seeded(77 + (uint64_t)variant);
                for (i = 0; i < q.nv; i++)
                    for (j = 0; j < start.len[i]; j++)
                        start.u[i][j] = 0.05 + 0.5 * lcg_next(&g);
                for (j = 0; j < k * q.n; j++)
                    start.v[j] = 0.05 + 1.1 * lcg_next(&g); /* some above vmax = 1: clipped */
                CHECK_STATUS(mvnmf_deep_params_preset(MVNMF_DEEP_PRESET_DMCL, &dp), MVNMF_STATUS_OK);
                CHECK_STATUS(mvnmf_mvsl_params_preset(MVNMF_MVSL_PRESET_MCL, &sp), MVNMF_STATUS_OK);
                sp.alpha = 10.0;
                CHECK(sp_equal(&dp.top, &sp)); /* DMCL's top is MCL with alpha = 10 (issue 20) */
                if (variant == 1)
                    sp.alpha = 0.05;
                if (variant == 2) {
                    sp.alpha = 0.0; /* the multiplicative U-step */
                    sp.u_inner = 2;
                    sp.v_inner = 3;
                }
                sp.max_iter = 40;
                sp.tol = 0.0;
                sp.init = MVNMF_INIT_GIVEN;
                dp.top = sp;
                set_ctx("deep {K} from a given start = shallow_fit MCL, graph %s, %s, variant %d", GNAME[gk],
                        sparse ? "csc" : "dense", variant);
                mfacs_copy(&a, &start);
                mfacs_copy(&b, &start);
                memset(&s, 0, sizeof s);
                s.views = q.views;
                s.nv = q.nv;
                s.graph = &q.gr.g;
                s.k = k;
                s.layers = &k;
                s.nl = 1;
                s.sp = &sp;
                s.dp = &dp;
                CHECK_STATUS(msolve(OP_SFIT, &s, a.u, a.v, -1, t, &ra), MVNMF_STATUS_OK);
                CHECK_STATUS(msolve(OP_DFIT, &s, b.u, b.v, -1, t2, &rb), MVNMF_STATUS_OK);
                CHECK(mfacs_same(&a, &b));
                CHECK(same_report(&ra, &rb));
                CHECK(t->n == t2->n && memcmp(t->obj, t2->obj, t->n * sizeof(double)) == 0);
                md.sp = &sp;
                md.layers = &k;
                md.nl = 1;
                md.box = 1;
                check_trace(t2, &rb, q.hx2);
                check_parts(&q, &md, &q.gr.g, &b, &rb, 0);
                if (gk == G_SGE && sparse == 0)
                    note("  deep {4} = shallow MCL (alpha %g): %s, max rel. difference V %.1e", sp.alpha,
                         mfacs_same(&a, &b) ? "bitwise equal" : "DIFFERENT", rel_diff(b.v, a.v, k * q.n));
                /* ... and encoding with those bases: deep {K} = shallow */
                set_ctx("deep_encode {K} = shallow_encode, graph %s, %s, variant %d", GNAME[gk],
                        sparse ? "csc" : "dense", variant);
                sp.init = MVNMF_INIT_RANDOM;
                dp.top = sp;
                CHECK_STATUS(msolve(OP_SENC, &s, a.u, a.v, -1, t, &ra), MVNMF_STATUS_OK);
                CHECK_STATUS(msolve(OP_DENC, &s, a.u, b.v, -1, t2, &rb), MVNMF_STATUS_OK);
                CHECK(memcmp(a.v, b.v, k * q.n * sizeof(double)) == 0);
                CHECK(same_report(&ra, &rb));
                mfacs_free(&a);
                mfacs_free(&b);
                mfacs_free(&start);
                mprob_free(&q);
            }
        }
    }
    free(t);
    free(t2);
}

/* ---- 3: every error class, outputs untouched ------------------------------ */

/* A valid two-view call (dense 6x5 stride 7, CSC 4x5) with an SGE graph, K = 2
 * (shallow) or layers {3, 2} (deep), that each error test breaks in one way. */
typedef struct {
    hmat x0;
    size_t cp[6], ri[6];
    double cv[6];
    mvnmf_view views[2];
    const mvnmf_view *vp;
    size_t nv;
    uint32_t labels[5];
    size_t arp[6], aci[8], prp[6], pci[8];
    double aw[8], pw[8];
    mvnmf_graph graph;
    const mvnmf_graph *gp;
    mvnmf_mvsl_params sp;
    const mvnmf_mvsl_params *spp;
    mvnmf_deep_params dp;
    const mvnmf_deep_params *dpp;
    size_t k;
    size_t layers[3];
    const size_t *lp;
    size_t nl;
    double ubuf0[128], ubuf1[128], vbuf[64];
    double *u[2];
    double *const *up;
    double *v;
    unsigned char *raw;
    void *work;
    size_t wb[4]; /* the queried sizes, per op */
    int keep;     /* U and V prepared by the test */
    int noquery;  /* do not call the workspace query (use the baseline's size) */
    mvnmf_report rep;
} mfixture;

static void mfx_spec(const mfixture *f, mspec *s)
{
    s->views = f->vp;
    s->nv = f->nv;
    s->graph = f->gp;
    s->k = f->k;
    s->layers = f->lp;
    s->nl = f->nl;
    s->sp = f->spp;
    s->dp = f->dpp;
}

/* A valid CSR graph over 4 items: the path 0-1-2-3, no penalty graph. */
static void mfx_csr4(mfixture *f)
{
    static const size_t arp[5] = { 0, 1, 3, 5, 6 }, aci[6] = { 1, 0, 2, 1, 3, 2 };
    static const double aw[6] = { 1, 1, 2, 2, 3, 3 };
    memcpy(f->arp, arp, sizeof arp);
    memcpy(f->aci, aci, sizeof aci);
    memcpy(f->aw, aw, sizeof aw);
    memset(&f->graph, 0, sizeof f->graph);
    f->graph.kind = MVNMF_GRAPH_CSR;
    f->graph.n = 4;
    f->graph.affinity_row_ptr = f->arp;
    f->graph.affinity_col_idx = f->aci;
    f->graph.affinity_weights = f->aw;
}

/* CSR affinity: the path 0-1-2-3-4 (weights 1, 2, 3, 4); penalty: 0-4 and 1-3. */
static void mfx_csr(mfixture *f)
{
    static const size_t arp[6] = { 0, 1, 3, 5, 7, 8 }, aci[8] = { 1, 0, 2, 1, 3, 2, 4, 3 };
    static const double aw[8] = { 1, 1, 2, 2, 3, 3, 4, 4 };
    static const size_t prp[6] = { 0, 1, 2, 2, 3, 4 }, pci[8] = { 4, 3, 1, 0, 0, 0, 0, 0 };
    static const double pw[8] = { 0.5, 0.25, 0.25, 0.5, 0, 0, 0, 0 };
    memcpy(f->arp, arp, sizeof arp);
    memcpy(f->aci, aci, sizeof aci);
    memcpy(f->aw, aw, sizeof aw);
    memcpy(f->prp, prp, sizeof prp);
    memcpy(f->pci, pci, sizeof pci);
    memcpy(f->pw, pw, sizeof pw);
    memset(&f->graph, 0, sizeof f->graph);
    f->graph.kind = MVNMF_GRAPH_CSR;
    f->graph.n = 5;
    f->graph.affinity_row_ptr = f->arp;
    f->graph.affinity_col_idx = f->aci;
    f->graph.affinity_weights = f->aw;
    f->graph.penalty_row_ptr = f->prp;
    f->graph.penalty_col_idx = f->pci;
    f->graph.penalty_weights = f->pw;
}

static void mfx_reset(mfixture *f)
{
    static const size_t cp[6] = { 0, 2, 3, 3, 5, 6 }, ri[6] = { 0, 3, 1, 0, 2, 3 };
    static const double cv[6] = { 1.0, 2.0, 3.0, 4.0, 5.0, 6.0 };
    size_t i;
    int op;
    mspec s;
    memcpy(f->cp, cp, sizeof cp);
    memcpy(f->ri, ri, sizeof ri);
    memcpy(f->cv, cv, sizeof cv);
    for (i = 0; i < 7 * 5; i++) /* row 6 is padding */
        f->x0.a[i] = i % 7 == 6 ? NAN : 1.0 + (double)(i % 4);
    f->views[0] = f->x0.view;
    memset(&f->views[1], 0, sizeof f->views[1]);
    f->views[1].kind = MVNMF_VIEW_CSC;
    f->views[1].rows = 4;
    f->views[1].cols = 5;
    f->views[1].values = f->cv;
    f->views[1].col_ptr = f->cp;
    f->views[1].row_idx = f->ri;
    f->vp = f->views;
    f->nv = 2;
    f->labels[0] = 0;
    f->labels[1] = 1;
    f->labels[2] = MVNMF_UNLABELED;
    f->labels[3] = 0;
    f->labels[4] = 2;
    memset(&f->graph, 0, sizeof f->graph);
    f->graph.kind = MVNMF_GRAPH_SGE;
    f->graph.n = 5;
    f->graph.labels = f->labels;
    f->graph.n_classes = 3;
    f->gp = &f->graph;
    CHECK_STATUS(mvnmf_mvsl_params_preset(MVNMF_MVSL_PRESET_MCL, &f->sp), MVNMF_STATUS_OK);
    f->sp.alpha = 0.1;
    f->sp.max_iter = 5;
    f->sp.tol = 0.0;
    f->spp = &f->sp;
    CHECK_STATUS(mvnmf_deep_params_preset(MVNMF_DEEP_PRESET_DMCL, &f->dp), MVNMF_STATUS_OK);
    f->dp.top = f->sp;
    f->dp.pretrain_iter = 5;
    f->dpp = &f->dp;
    f->k = 2;
    f->layers[0] = 3;
    f->layers[1] = 2;
    f->layers[2] = 0;
    f->lp = f->layers;
    f->nl = 2;
    f->u[0] = f->ubuf0;
    f->u[1] = f->ubuf1;
    f->up = f->u;
    f->v = f->vbuf;
    f->work = f->raw;
    f->keep = 0;
    f->noquery = 0;
    mfx_spec(f, &s);
    for (op = OP_SFIT; op <= OP_DENC; op++)
        CHECK_STATUS(mquery(op, &s, &f->wb[op]), MVNMF_STATUS_OK);
}

static void mfx_init(mfixture *f)
{
    memset(f, 0, sizeof *f);
    hmat_alloc(&f->x0, 6, 5, 7);
    hmat_finish(&f->x0, 0);
    f->raw = (unsigned char *)malloc(1 << 16);
    mfx_reset(f);
    CHECK(f->wb[0] + 64 <= (1 << 16) && f->wb[1] + 64 <= (1 << 16) && f->wb[2] + 64 <= (1 << 16) &&
          f->wb[3] + 64 <= (1 << 16));
}

static void fill(double *p, size_t n, double x)
{
    size_t i;
    for (i = 0; i < n; i++)
        p[i] = x;
}

/* Runs `op` on the fixture with work_bytes = its query + delta; on error U and V
 * must be untouched and the report a refusal (issue 33). With `q`, the workspace query must refuse
 * the same inputs with the same status and leave *bytes alone. */
static void mfx_expect(mfixture *f, int op, long delta, uint32_t want, int q, const char *what)
{
    double s0[128], s1[128], sv[64];
    mvnmf_report srep;
    size_t wb, bytes = 12345;
    uint32_t st, qst;
    mspec s;
    set_ctx("%s: %s", OPN[op], what);
    mfx_spec(f, &s);
    /* the workspace of these inputs (the valid baseline's if they are refused) */
    qst = f->noquery ? MVNMF_STATUS_INTERNAL : mquery(op, &s, &bytes);
    wb = (size_t)((long)(qst == MVNMF_STATUS_OK ? bytes : f->wb[op]) + delta);
    if (!f->keep) {
        if (op == OP_SENC || op == OP_DENC) {
            fill(f->ubuf0, 128, 0.5);
            fill(f->ubuf1, 128, 0.5);
        } else {
            memset(f->ubuf0, 0xA5, sizeof f->ubuf0);
            memset(f->ubuf1, 0xA5, sizeof f->ubuf1);
        }
        memset(f->vbuf, 0xA5, sizeof f->vbuf);
    }
    memset(&f->rep, 0xA5, sizeof f->rep);
    memcpy(s0, f->ubuf0, sizeof s0);
    memcpy(s1, f->ubuf1, sizeof s1);
    memcpy(sv, f->vbuf, sizeof sv);
    memcpy(&srep, &f->rep, sizeof srep);
    st = mcall(op, &s, f->up, f->v, f->work, wb, NULL, NULL, &f->rep);
    CHECK_STATUS(st, want);
    if (want != MVNMF_STATUS_OK)
        CHECK(memcmp(s0, f->ubuf0, sizeof s0) == 0 && memcmp(s1, f->ubuf1, sizeof s1) == 0 &&
              memcmp(sv, f->vbuf, sizeof sv) == 0 && refused_at(&f->rep, UINT32_MAX));
    else if (!CHECK(f->rep.iterations == 5 && all_in(f->vbuf, 10, 0.0, 1.0)))
        printf("    iterations %u, stop %u, V[0..3] %g %g %g %g\n", (unsigned)f->rep.iterations,
               (unsigned)f->rep.stop, f->vbuf[0], f->vbuf[1], f->vbuf[2], f->vbuf[3]);
    if (q) {
        set_ctx("%s_workspace: %s", OPN[op], what);
        CHECK_STATUS(qst, want);
        CHECK(want == MVNMF_STATUS_OK ? bytes != 12345u : bytes == 12345u);
    }
}

#define M_SH 3u   /* the shallow fit and encode */
#define M_DEEP 12u /* the deep fit and encode */
#define M_ALL 15u

static void mfx_ops(mfixture *f, unsigned mask, uint32_t want, int q, const char *what)
{
    int op;
    for (op = OP_SFIT; op <= OP_DENC; op++)
        if (mask & (1u << op))
            mfx_expect(f, op, 0, want, q, what);
}

static void test_errors(void)
{
    mfixture f;
    mvnmf_mvsl_params sp, sp0;
    mvnmf_deep_params dp, dp0;
    size_t i, len;
    static const uint32_t bad_presets[] = { 4, 5, 1000, 0xFFFFFFFFu };
    static const uint32_t bad_deep_presets[] = { 2, 3, 1000, 0xFFFFFFFFu };

    note("errors (outputs untouched), presets");

    /* presets: the documented values; unknown ones refused, out untouched */
    set_ctx("mvnmf_mvsl_params_preset");
    CHECK_STATUS(mvnmf_mvsl_params_preset(MVNMF_MVSL_PRESET_JOINT_NMF, &sp), MVNMF_STATUS_OK);
    CHECK(sp.sparsity == MVNMF_SPARSITY_NONE && sp.alpha == 0.0 && sp.beta == 0.0 && sp.gamma == 0.0 &&
          sp.vmax > DBL_MAX && sp.max_iter == 200 && sp.tol == 1e-6 && sp.eps == DBL_EPSILON && sp.seed == 0 &&
          sp.init == MVNMF_INIT_RANDOM && sp.u_inner == 3 && sp.v_inner == 1 && sp.eta_up == 2.0 &&
          sp.eta_down == 2.0 && sp.l0 == 0.0);
    sp0 = sp;
    CHECK_STATUS(mvnmf_mvsl_params_preset(MVNMF_MVSL_PRESET_GNMF, &sp), MVNMF_STATUS_OK);
    CHECK(sp.sparsity == MVNMF_SPARSITY_NONE && sp.alpha == 0.0 && sp.beta == 0.02 && sp.gamma == 0.0 &&
          sp.vmax == 1.0 && sp.u_inner == sp0.u_inner && sp.eps == sp0.eps);
    CHECK_STATUS(mvnmf_mvsl_params_preset(MVNMF_MVSL_PRESET_MVSL, &sp), MVNMF_STATUS_OK);
    CHECK(sp.sparsity == MVNMF_SPARSITY_L12 && sp.alpha == 15.0 && sp.beta == 0.02 && sp.gamma == 0.0 &&
          sp.vmax == 1.0);
    CHECK_STATUS(mvnmf_mvsl_params_preset(MVNMF_MVSL_PRESET_MCL, &sp), MVNMF_STATUS_OK);
    CHECK(sp.sparsity == MVNMF_SPARSITY_L1INF && sp.alpha == 100.0 && sp.beta == 0.015 && sp.gamma == 0.005 &&
          sp.vmax == 1.0);
    for (i = 0; i < sizeof bad_presets / sizeof bad_presets[0]; i++) {
        memset(&sp, 0xA5, sizeof sp);
        memcpy(&sp0, &sp, sizeof sp);
        CHECK_STATUS(mvnmf_mvsl_params_preset(bad_presets[i], &sp), MVNMF_STATUS_BAD_PARAMETER);
        CHECK(memcmp(&sp, &sp0, sizeof sp) == 0);
    }
    CHECK_STATUS(mvnmf_mvsl_params_preset(MVNMF_MVSL_PRESET_MCL, NULL), MVNMF_STATUS_NULL_POINTER);
    set_ctx("mvnmf_deep_params_preset");
    CHECK_STATUS(mvnmf_deep_params_preset(MVNMF_DEEP_PRESET_DMCL, &dp), MVNMF_STATUS_OK);
    CHECK_STATUS(mvnmf_mvsl_params_preset(MVNMF_MVSL_PRESET_MCL, &sp), MVNMF_STATUS_OK);
    CHECK(dp.top.alpha == 10.0 && sp.alpha == 100.0); /* DMCL: the paper's alpha / 10 (issue 20) */
    sp.alpha = 10.0;
    CHECK(sp_equal(&dp.top, &sp) && dp.box_lower == 1 && dp.v_init == MVNMF_DEEP_V_RANDOM &&
          dp.pretrain_iter == 100);
    CHECK_STATUS(mvnmf_deep_params_preset(MVNMF_DEEP_PRESET_DNMF, &dp), MVNMF_STATUS_OK);
    CHECK_STATUS(mvnmf_mvsl_params_preset(MVNMF_MVSL_PRESET_JOINT_NMF, &sp), MVNMF_STATUS_OK);
    CHECK(sp_equal(&dp.top, &sp) && dp.box_lower == 1 && dp.v_init == MVNMF_DEEP_V_RANDOM);
    for (i = 0; i < sizeof bad_deep_presets / sizeof bad_deep_presets[0]; i++) {
        memset(&dp, 0xA5, sizeof dp);
        memcpy(&dp0, &dp, sizeof dp);
        CHECK_STATUS(mvnmf_deep_params_preset(bad_deep_presets[i], &dp), MVNMF_STATUS_BAD_PARAMETER);
        CHECK(memcmp(&dp, &dp0, sizeof dp) == 0);
    }
    CHECK_STATUS(mvnmf_deep_params_preset(MVNMF_DEEP_PRESET_DMCL, NULL), MVNMF_STATUS_NULL_POINTER);

    set_ctx("mvnmf_deep_factor_len errors");
    {
        size_t two[2] = { 3, 0 }, ok2[2] = { 3, 2 };
        len = 777;
        CHECK_STATUS(mvnmf_deep_factor_len(6, ok2, 0, &len), MVNMF_STATUS_BAD_RANK);
        CHECK_STATUS(mvnmf_deep_factor_len(6, two, 2, &len), MVNMF_STATUS_BAD_RANK);
        CHECK_STATUS(mvnmf_deep_factor_len(6, NULL, 2, &len), MVNMF_STATUS_NULL_POINTER);
        CHECK_STATUS(mvnmf_deep_factor_len(SIZE_MAX / 2, ok2, 2, &len), MVNMF_STATUS_SIZE_OVERFLOW);
        CHECK(len == 777);
        CHECK_STATUS(mvnmf_deep_factor_len(6, ok2, 2, NULL), MVNMF_STATUS_NULL_POINTER);
        CHECK_STATUS(mvnmf_deep_factor_len(6, ok2, 2, &len), MVNMF_STATUS_OK);
        CHECK(len == 6 * 3 + 3 * 2);
    }

    mfx_init(&f);
    mfx_ops(&f, M_ALL, MVNMF_STATUS_OK, 1, "the valid baseline call");
    {
        int op;
        mspec s;
        mfx_spec(&f, &s);
        for (op = OP_SFIT; op <= OP_DENC; op++) {
            set_ctx("%s: progress and report may be NULL", OPN[op]);
            fill(f.ubuf0, 128, 0.5);
            fill(f.ubuf1, 128, 0.5);
            CHECK_STATUS(mcall(op, &s, f.up, f.v, f.work, f.wb[op], NULL, NULL, NULL), MVNMF_STATUS_OK);
        }
    }

/* Breaks the valid call in one way; the ops in `mask` must refuse it (q: and
 * their workspace queries). */
#define BROKEN(change, mask, want, q, what) \
    do {                                    \
        mfx_reset(&f);                      \
        change;                             \
        mfx_ops(&f, (mask), (want), (q), what); \
    } while (0)
/* A shallow parameter broken in both the shallow and the deep parameters. */
#define BROKEN_P(field, value, want, what) \
    BROKEN((f.sp.field = (value), f.dp.top.field = (value)), M_ALL, want, 1, what)

    BROKEN(f.vp = NULL, M_ALL, MVNMF_STATUS_NULL_POINTER, 1, "views = NULL");
    /* params = NULL means the defaults (mvnmf_*_params_default()): the same
     * status, workspace size and outputs as the default structs. */
    {
        int op;
        mspec s;
        mvnmf_mvsl_params sd = mvnmf_mvsl_params_default();
        mvnmf_deep_params dd = mvnmf_deep_params_default();
        double u0[2][128], v0[64];
        for (op = OP_SFIT; op <= OP_DENC; op++) {
            size_t b0 = 1, b1 = 2;
            uint32_t st0, st1, q0, q1;
            set_ctx("%s: params = NULL means the defaults", OPN[op]);
            mfx_reset(&f);
            mfx_spec(&f, &s);
            s.sp = &sd;
            s.dp = &dd;
            q0 = mquery(op, &s, &b0);
            fill(f.ubuf0, 128, 0.5);
            fill(f.ubuf1, 128, 0.5);
            fill(f.vbuf, 64, 0.5);
            st0 = mcall(op, &s, f.up, f.v, f.work, q0 == MVNMF_STATUS_OK ? b0 : 0, NULL, NULL, NULL);
            memcpy(u0[0], f.ubuf0, sizeof u0[0]);
            memcpy(u0[1], f.ubuf1, sizeof u0[1]);
            memcpy(v0, f.vbuf, sizeof v0);
            s.sp = NULL;
            s.dp = NULL;
            q1 = mquery(op, &s, &b1);
            fill(f.ubuf0, 128, 0.5);
            fill(f.ubuf1, 128, 0.5);
            fill(f.vbuf, 64, 0.5);
            st1 = mcall(op, &s, f.up, f.v, f.work, q1 == MVNMF_STATUS_OK ? b1 : 0, NULL, NULL, NULL);
            CHECK_STATUS(q0, MVNMF_STATUS_OK);
            CHECK_STATUS(q1, MVNMF_STATUS_OK);
            CHECK(b0 == b1 && b0 <= (1u << 16));
            CHECK_STATUS(st0, MVNMF_STATUS_OK);
            CHECK_STATUS(st1, st0);
            CHECK(memcmp(u0[0], f.ubuf0, sizeof u0[0]) == 0 && memcmp(u0[1], f.ubuf1, sizeof u0[1]) == 0 &&
                  memcmp(v0, f.vbuf, sizeof v0) == 0);
        }
    }
    BROKEN(f.gp = NULL, M_ALL, MVNMF_STATUS_NULL_POINTER, 1, "graph = NULL");
    BROKEN(f.up = NULL, M_ALL, MVNMF_STATUS_NULL_POINTER, 0, "u = NULL");
    BROKEN(f.u[1] = NULL, M_ALL, MVNMF_STATUS_NULL_POINTER, 0, "u[1] = NULL");
    BROKEN(f.v = NULL, M_ALL, MVNMF_STATUS_NULL_POINTER, 0, "v = NULL");
    BROKEN(f.work = NULL, M_ALL, MVNMF_STATUS_NULL_POINTER, 0, "work = NULL");
    BROKEN(f.lp = NULL, M_DEEP, MVNMF_STATUS_NULL_POINTER, 1, "layers = NULL");
    BROKEN(f.graph.labels = NULL, M_ALL, MVNMF_STATUS_NULL_POINTER, 1, "SGE labels = NULL");
    BROKEN(f.graph.kind = 7, M_ALL, MVNMF_STATUS_BAD_PARAMETER, 1, "graph kind 7");
    BROKEN(f.labels[4] = 3, M_ALL, MVNMF_STATUS_BAD_LABEL, 1, "SGE label 3 with 3 classes");
    BROKEN(f.labels[0] = MVNMF_UNLABELED - 1, M_ALL, MVNMF_STATUS_BAD_LABEL, 1, "SGE label UINT32_MAX - 1");
    BROKEN((f.labels[0] = f.labels[1] = f.labels[3] = MVNMF_UNLABELED), M_ALL, MVNMF_STATUS_TOO_FEW_LABELED, 1,
           "SGE with one labeled item");
    BROKEN((f.labels[0] = f.labels[1] = f.labels[3] = f.labels[4] = MVNMF_UNLABELED), M_ALL,
           MVNMF_STATUS_TOO_FEW_LABELED, 1, "SGE with no labeled item");
    BROKEN(f.graph.n_classes = 0, M_ALL, MVNMF_STATUS_ZERO_DIMENSION, 1, "SGE n_classes = 0");
    BROKEN(f.graph.n = 0, M_ALL, MVNMF_STATUS_ZERO_DIMENSION, 1, "graph n = 0");
    BROKEN(f.graph.n = 4, M_ALL, MVNMF_STATUS_DIMENSION_MISMATCH, 0, "SGE graph over 4 items, views of 5");
    BROKEN((f.graph.kind = MVNMF_GRAPH_NONE, f.graph.n = 6), M_ALL, MVNMF_STATUS_DIMENSION_MISMATCH, 0,
           "NONE graph over 6 items, views of 5");
    BROKEN(mfx_csr(&f), M_ALL, MVNMF_STATUS_OK, 1, "a valid CSR graph");
    BROKEN((mfx_csr(&f), f.graph.penalty_row_ptr = NULL), M_ALL, MVNMF_STATUS_OK, 1, "CSR affinity only");
    BROKEN((mfx_csr(&f), f.graph.affinity_row_ptr = NULL), M_ALL, MVNMF_STATUS_OK, 1, "CSR penalty only");
    BROKEN((mfx_csr(&f), f.graph.affinity_row_ptr = f.graph.penalty_row_ptr = NULL), M_ALL, MVNMF_STATUS_OK, 1,
           "CSR with neither graph");
    BROKEN(mfx_csr4(&f), M_ALL, MVNMF_STATUS_DIMENSION_MISMATCH, 0,
           "CSR graph over 4 items, views of 5");
    BROKEN((mfx_csr(&f), f.aw[2] = 2.5), M_ALL, MVNMF_STATUS_BAD_PARAMETER, 1, "CSR affinity W(1,2) != W(2,1)");
    BROKEN((mfx_csr(&f), f.pci[1] = 4, f.pci[0] = 3), M_ALL, MVNMF_STATUS_BAD_PARAMETER, 1,
           "CSR penalty edges 0-3, 1-4 stored one way only");
    BROKEN((mfx_csr(&f), f.arp[0] = 1), M_ALL, MVNMF_STATUS_MALFORMED_CSC, 1, "CSR row_ptr[0] != 0");
    BROKEN((mfx_csr(&f), f.arp[2] = 0), M_ALL, MVNMF_STATUS_MALFORMED_CSC, 1, "CSR decreasing row_ptr");
    BROKEN((mfx_csr(&f), f.aci[0] = 5), M_ALL, MVNMF_STATUS_MALFORMED_CSC, 1, "CSR column index >= n");
    BROKEN((mfx_csr(&f), f.aci[2] = 0), M_ALL, MVNMF_STATUS_MALFORMED_CSC, 1, "CSR repeated column index");
    BROKEN((mfx_csr(&f), f.aci[1] = 2, f.aci[2] = 0), M_ALL, MVNMF_STATUS_MALFORMED_CSC, 1,
           "CSR unsorted column indices");
    BROKEN((mfx_csr(&f), f.graph.affinity_col_idx = NULL), M_ALL, MVNMF_STATUS_NULL_POINTER, 1,
           "CSR col_idx = NULL");
    BROKEN((mfx_csr(&f), f.graph.penalty_weights = NULL), M_ALL, MVNMF_STATUS_NULL_POINTER, 1,
           "CSR weights = NULL");
    BROKEN((mfx_csr(&f), f.aw[0] = f.aw[1] = -1.0), M_ALL, MVNMF_STATUS_NEGATIVE_INPUT, 1,
           "CSR negative weight");
    BROKEN((mfx_csr(&f), f.pw[0] = f.pw[3] = NAN), M_ALL, MVNMF_STATUS_NON_FINITE_INPUT, 1, "CSR NaN weight");
    BROKEN_P(alpha, -1e-3, MVNMF_STATUS_BAD_PARAMETER, "alpha < 0");
    BROKEN_P(alpha, INFINITY, MVNMF_STATUS_BAD_PARAMETER, "alpha = inf");
    BROKEN_P(beta, NAN, MVNMF_STATUS_BAD_PARAMETER, "beta NaN");
    BROKEN_P(beta, -1.0, MVNMF_STATUS_BAD_PARAMETER, "beta < 0");
    BROKEN_P(gamma, -1e-9, MVNMF_STATUS_BAD_PARAMETER, "gamma < 0");
    BROKEN_P(u_inner, 0, MVNMF_STATUS_BAD_PARAMETER, "u_inner = 0");
    BROKEN_P(v_inner, 0, MVNMF_STATUS_BAD_PARAMETER, "v_inner = 0");
    BROKEN_P(eta_up, 1.0, MVNMF_STATUS_BAD_PARAMETER, "eta_up = 1");
    BROKEN_P(eta_up, 0.5, MVNMF_STATUS_BAD_PARAMETER, "eta_up < 1");
    BROKEN_P(eta_up, NAN, MVNMF_STATUS_BAD_PARAMETER, "eta_up NaN");
    BROKEN_P(eta_down, 0.99, MVNMF_STATUS_BAD_PARAMETER, "eta_down < 1");
    BROKEN_P(l0, -1.0, MVNMF_STATUS_BAD_PARAMETER, "l0 < 0");
    BROKEN_P(sparsity, 9, MVNMF_STATUS_BAD_PARAMETER, "sparsity = 9");
    BROKEN_P(init, 7, MVNMF_STATUS_BAD_PARAMETER, "init = 7");
    BROKEN_P(tol, -1.0, MVNMF_STATUS_BAD_PARAMETER, "tol < 0");
    BROKEN_P(eps, -1.0, MVNMF_STATUS_BAD_PARAMETER, "eps < 0");
    BROKEN_P(vmax, 0.0, MVNMF_STATUS_BAD_PARAMETER, "vmax = 0");
    BROKEN(f.k = 0, M_SH, MVNMF_STATUS_BAD_RANK, 1, "k = 0");
    BROKEN(f.nl = 0, M_DEEP, MVNMF_STATUS_BAD_RANK, 1, "n_layers = 0");
    BROKEN(f.layers[0] = 0, M_DEEP, MVNMF_STATUS_BAD_RANK, 1, "a zero hidden layer");
    BROKEN(f.layers[1] = 0, M_DEEP, MVNMF_STATUS_BAD_RANK, 1, "K = 0");
    BROKEN(f.layers[0] = SIZE_MAX, M_DEEP, MVNMF_STATUS_OK, 1, "hidden size SIZE_MAX (clamped to the rows)");
    /* A huge K: the fits and their workspace queries say SIZE_OVERFLOW. */
    BROKEN(f.layers[1] = SIZE_MAX / 4, M_DEEP, MVNMF_STATUS_SIZE_OVERFLOW, 1, "K = SIZE_MAX / 4");
    BROKEN(f.k = SIZE_MAX / 4, M_SH, MVNMF_STATUS_SIZE_OVERFLOW, 1, "k = SIZE_MAX / 4");
    BROKEN(f.dp.box_lower = 2, M_DEEP, MVNMF_STATUS_BAD_PARAMETER, 1, "box_lower = 2");
    BROKEN(f.dp.v_init = 5, M_DEEP, MVNMF_STATUS_BAD_PARAMETER, 1, "v_init = 5");
    BROKEN(f.nv = 0, M_ALL, MVNMF_STATUS_ZERO_DIMENSION, 1, "n_views = 0");
    BROKEN(f.views[1].cols = 4, M_ALL, MVNMF_STATUS_DIMENSION_MISMATCH, 0, "views with 5 and 4 items");
    BROKEN(f.x0.a[3 + 4 * 7] = -1.0, M_ALL, MVNMF_STATUS_NEGATIVE_INPUT, 0, "dense X(3,4) = -1");
    BROKEN(f.cv[5] = NAN, M_ALL, MVNMF_STATUS_NON_FINITE_INPUT, 0, "last CSC value NaN");
    BROKEN(f.ri[1] = 4, M_ALL, MVNMF_STATUS_MALFORMED_CSC, 0, "CSC row index >= rows");
#undef BROKEN_P
#undef BROKEN

    /* The workspace: one byte short fails; exactly the query works, at an
     * aligned and at misaligned addresses. */
    for (i = 0; i < 4; i++) {
        static const size_t shift[4] = { 0, 1, 7, 13 };
        int op;
        char what[64];
        for (op = OP_SFIT; op <= OP_DENC; op++) {
            mfx_reset(&f);
            f.work = f.raw + shift[i];
            snprintf(what, sizeof what, "work+%zu, one byte short", shift[i]);
            mfx_expect(&f, op, -1, MVNMF_STATUS_WORKSPACE_TOO_SMALL, 0, what);
            snprintf(what, sizeof what, "work+%zu, exact size", shift[i]);
            mfx_expect(&f, op, 0, MVNMF_STATUS_OK, 0, what);
        }
    }

    /* A given start is validated like the data. */
    for (i = 0; i < 3; i++) {
        static const char *const what[] = { "given U(3) = -1", "given V(4) = NaN", "valid given start" };
        static const uint32_t want[] = { MVNMF_STATUS_NEGATIVE_INPUT, MVNMF_STATUS_NON_FINITE_INPUT,
                                         MVNMF_STATUS_OK };
        int op;
        for (op = OP_SFIT; op <= OP_DENC; op++) {
            mfx_reset(&f);
            f.sp.init = MVNMF_INIT_GIVEN;
            f.dp.top.init = MVNMF_INIT_GIVEN;
            f.keep = 1;
            fill(f.ubuf0, 128, 0.5);
            fill(f.ubuf1, 128, 0.5);
            fill(f.vbuf, 64, 0.5);
            if (i == 0)
                f.ubuf1[3] = -1.0;
            if (i == 1)
                f.vbuf[4] = NAN;
            mfx_expect(&f, op, 0, want[i], 0, what[i]);
        }
    }
    free(f.raw);
    hmat_free(&f.x0);
}

/* ---- 4: cancellation ------------------------------------------------------ */

static void test_cancel(void)
{
    static const size_t layers[2] = { 8, 3 };
    mprob q;
    mspec s;
    mfacs base, a, b;
    mtrace_t *t = (mtrace_t *)malloc(sizeof *t), *t2 = (mtrace_t *)malloc(sizeof *t2);
    mvnmf_report ra, rb;
    mvnmf_deep_params dp;
    int op, deep, si;

    note("cancellation");
    mprob_make(&q, 30, 0, 5.0, G_SGE, 401);
    CHECK_STATUS(mvnmf_deep_params_preset(MVNMF_DEEP_PRESET_DMCL, &dp), MVNMF_STATUS_OK);
    dp.top.alpha = 0.1;
    dp.top.tol = 0.0;
    dp.top.seed = 9;
    dp.pretrain_iter = 20;
    memset(&s, 0, sizeof s);
    s.views = q.views;
    s.nv = q.nv;
    s.graph = &q.gr.g;
    s.k = 3;
    s.layers = layers;
    s.nl = 2;
    s.sp = &dp.top;
    s.dp = &dp;
    for (deep = 0; deep < 2; deep++) {
        mfacs_alloc(&base, &q, 3, deep ? layers : NULL, deep ? 2 : 0);
        mfacs_alloc(&a, &q, 3, deep ? layers : NULL, deep ? 2 : 0);
        mfacs_alloc(&b, &q, 3, deep ? layers : NULL, deep ? 2 : 0);
        dp.top.max_iter = 30;
        set_ctx("cancel: bases for the encode");
        CHECK_STATUS(msolve(deep ? OP_DFIT : OP_SFIT, &s, base.u, base.v, -1, t, &ra), MVNMF_STATUS_OK);
        for (op = deep ? OP_DFIT : OP_SFIT; op <= (deep ? OP_DENC : OP_SENC); op++) {
            for (si = 0; si < 2; si++) {
                long stop_at = si ? 0 : 3;
                set_ctx("%s, callback stops at iteration %ld", OPN[op], stop_at);
                mfacs_copy(&a, &base);
                mfacs_copy(&b, &base);
                dp.top.max_iter = 50;
                memset(&ra, 0xA5, sizeof ra);
                CHECK_STATUS(msolve(op, &s, a.u, a.v, stop_at, t, &ra), MVNMF_STATUS_CANCELLED);
                CHECK(ra.stop == MVNMF_STOP_CANCELLED && ra.iterations == (uint32_t)stop_at);
                CHECK(t->n == (unsigned)stop_at + 1 && ra.objective.total == t->obj[stop_at]);
                dp.top.max_iter = (uint32_t)stop_at;
                CHECK_STATUS(msolve(op, &s, b.u, b.v, -1, t2, &rb), MVNMF_STATUS_OK);
                CHECK(rb.stop == MVNMF_STOP_MAX_ITER && rb.iterations == (uint32_t)stop_at);
                CHECK(mfacs_same(&a, &b)); /* the iterate of max_iter = stop_at, bitwise */
                CHECK(memcmp(&ra.objective, &rb.objective, sizeof ra.objective) == 0);
                CHECK(memcmp(&ra.initial, &rb.initial, sizeof ra.initial) == 0);
                CHECK(ra.dead_views == rb.dead_views);
            }
        }
        mfacs_free(&base);
        mfacs_free(&a);
        mfacs_free(&b);
    }
    mprob_free(&q);
    free(t);
    free(t2);
}

/* ---- 5: encoders ----------------------------------------------------------- */

static void test_encode(void)
{
    static const size_t layers[2] = { 8, 4 };
    mprob q, qn;
    mspec s;
    mfacs f, fe, fj;
    mtrace_t *t = (mtrace_t *)malloc(sizeof *t), *t2 = (mtrace_t *)malloc(sizeof *t2);
    mvnmf_report r, r2;
    mvnmf_mvsl_params sp;
    mvnmf_deep_params dp;
    mvnmf_nmf_params np = mvnmf_nmf_params_default();
    size_t bytes = 0, i, j, l, n_train = 40, n_test = 12, k = 4;
    unsigned char *raw;
    const double *cu[MAXV];
    int variant, gk;

    note("encoders: = joint_nmf_encode without graph and L1; deep = shallow on U~; held-out items");
    /* shallow encode, NONE graph (or beta = 0), gamma = 0 = joint_nmf_encode */
    for (variant = 0; variant < 4; variant++) {
        mprob_make(&q, 30, variant & 1, 3.0, variant == 3 ? G_SGE : G_NONE, 500 + (uint64_t)variant);
        mfacs_alloc(&f, &q, 3, NULL, 0);
        mfacs_alloc(&fj, &q, 3, NULL, 0);
        CHECK_STATUS(mvnmf_mvsl_params_preset(variant < 2 ? MVNMF_MVSL_PRESET_MVSL : MVNMF_MVSL_PRESET_JOINT_NMF, &sp),
                     MVNMF_STATUS_OK);
        sp.gamma = 0.0;
        if (variant == 3)
            sp.beta = 0.0;
        sp.max_iter = np.max_iter = 50;
        sp.tol = np.tol = 0.0;
        sp.seed = np.seed = 31 + (uint64_t)variant;
        sp.eps = np.eps = variant == 2 ? 1e-7 : DBL_EPSILON;
        np.vmax = sp.vmax;
        {
            lcg_t g = lcg_seeded(41 + (uint64_t)variant);
            for (i = 0; i < q.nv; i++)
                for (j = 0; j < f.len[i]; j++)
                    f.u[i][j] = (i == 1 && j < q.x[1].rows) ? 0.0 : lcg_next(&g); /* a dead column too */
        }
        set_ctx("shallow_encode (graph %s, beta %g, gamma 0) = joint_nmf_encode, variant %d",
                GNAME[variant == 3 ? G_SGE : G_NONE], sp.beta, variant);
        memset(&s, 0, sizeof s);
        s.views = q.views;
        s.nv = q.nv;
        s.graph = &q.gr.g;
        s.k = 3;
        s.sp = &sp;
        CHECK_STATUS(msolve(OP_SENC, &s, f.u, f.v, -1, t, &r), MVNMF_STATUS_OK);
        CHECK_STATUS(mvnmf_joint_nmf_encode_workspace(q.views, q.nv, 3, &np, &bytes), MVNMF_STATUS_OK);
        raw = (unsigned char *)malloc(bytes + 1);
        for (i = 0; i < q.nv; i++)
            cu[i] = f.u[i];
        trace_reset(t2, -1);
        CHECK_STATUS(mvnmf_joint_nmf_encode(q.views, q.nv, 3, &np, cu, fj.v, raw + 1, bytes, trace_cb, t2, &r2),
                     MVNMF_STATUS_OK);
        free(raw);
        CHECK(memcmp(f.v, fj.v, 3 * q.n * sizeof(double)) == 0);
        CHECK(same_report_values(&r, &r2));
        CHECK(t->n == t2->n && memcmp(t->obj, t2->obj, t->n * sizeof(double)) == 0);
        check_trace(t, &r, q.hx2);
        mfacs_free(&f);
        mfacs_free(&fj);
        mprob_free(&q);
    }

    memset(&qn, 0, sizeof qn);
    /* deep encode = shallow encode on U~ = U_1 U_2 computed here (to rounding),
     * for each graph kind; deep fit on training items, then held-out items */
    for (gk = G_NONE; gk <= G_CSR; gk++) {
        mprob qa;
        hmat *xs;
        double rel_train = 0.0, rel_test = 0.0, nx = 0.0, nt = 0.0;
        mmodel md;
        double *ut[MAXV];
        /* low-rank data from known nonnegative factors: X_v = A_v B_v H,
         * A_v rows_v x 8, B_v 8 x 4, H 4 x (n_train + n_test) */
        memset(&qa, 0, sizeof qa);
        qa.nv = 2;
        {
            lcg_t g = lcg_seeded(600 + (uint64_t)gk);
            size_t rows[2] = { 25, 14 }, nall = n_train + n_test, v;
            double *H = dalloc(k * nall);
            for (i = 0; i < k * nall; i++)
                H[i] = lcg_next(&g) < 0.3 ? 0.0 : lcg_next(&g);
            for (v = 0; v < 2; v++) {
                double *A = dalloc(rows[v] * 8), *B = dalloc(8 * k), *AB = dalloc(rows[v] * k);
                for (i = 0; i < rows[v] * 8; i++)
                    A[i] = lcg_next(&g) < 0.4 ? 0.0 : lcg_next(&g);
                for (i = 0; i < 8 * k; i++)
                    B[i] = lcg_next(&g);
                for (i = 0; i < rows[v]; i++)
                    for (j = 0; j < k; j++) {
                        double sum = 0.0;
                        for (l = 0; l < 8; l++)
                            sum += A[i + l * rows[v]] * B[l + j * 8];
                        AB[i + j * rows[v]] = sum;
                    }
                /* training items in qa, held-out items in qn */
                hmat_alloc(&qa.x[v], rows[v], n_train, rows[v]);
                hmat_alloc(&qn.x[v], rows[v], n_test, rows[v]);
                for (j = 0; j < nall; j++) {
                    xs = j < n_train ? &qa.x[v] : &qn.x[v];
                    for (i = 0; i < rows[v]; i++) {
                        double sum = 0.0;
                        for (l = 0; l < k; l++)
                            sum += AB[i + l * rows[v]] * H[l + j * k];
                        xs->a[i + (j < n_train ? j : j - n_train) * rows[v]] = sum;
                    }
                }
                hmat_finish(&qa.x[v], v == 1);
                hmat_finish(&qn.x[v], v == 1);
                free(A); free(B); free(AB);
            }
            free(H);
        }
        qa.n = n_train;
        qn.nv = 2;
        qn.n = n_test;
        qn.hx2 = 0.0;
        for (i = 0; i < 2; i++) {
            qa.views[i] = qa.x[i].view;
            qn.views[i] = qn.x[i].view;
            qa.hx2 += half_sq(&qa.x[i]);
            qn.hx2 += half_sq(&qn.x[i]);
        }
        hgraph_make(&qa.gr, gk, &qa.x[0]);
        hgraph_make(&qn.gr, gk, &qn.x[0]);

        CHECK_STATUS(mvnmf_deep_params_preset(MVNMF_DEEP_PRESET_DNMF, &dp), MVNMF_STATUS_OK);
        dp.top.max_iter = 400;
        dp.top.tol = 0.0;
        dp.top.seed = 3;
        dp.top.beta = gk == G_NONE ? 0.0 : 1e-3;
        if (gk != G_NONE)
            dp.top.vmax = 1.0; /* a penalty graph needs a bounded V (else BAD_PARAMETER) */
        mfacs_alloc(&f, &qa, 0, layers, 2);
        mfacs_alloc(&fe, &qn, 0, layers, 2);
        mfacs_alloc(&fj, &qn, k, NULL, 0);
        memset(&s, 0, sizeof s);
        s.views = qa.views;
        s.nv = 2;
        s.graph = &qa.gr.g;
        s.k = k;
        s.layers = layers;
        s.nl = 2;
        s.sp = &dp.top;
        s.dp = &dp;
        md.sp = &dp.top;
        md.layers = layers;
        md.nl = 2;
        md.box = 1;
        set_ctx("deep fit of low-rank data, graph %s", GNAME[gk]);
        CHECK_STATUS(msolve(OP_DFIT, &s, f.u, f.v, -1, t, &r), MVNMF_STATUS_OK);
        check_trace(t, &r, qa.hx2);
        check_parts(&qa, &md, &qa.gr.g, &f, &r, 0);
        rel_train = sqrt(mvnmf_objective_term(&r.objective, MVNMF_TERM_RECONSTRUCTION) / qa.hx2);

        /* held-out items, encoded with the graph over them (and without) */
        set_ctx("deep encode of held-out items, graph %s", GNAME[gk]);
        s.views = qn.views;
        s.graph = &qn.gr.g;
        dp.top.max_iter = 300;
        for (i = 0; i < 2; i++)
            memcpy(fe.u[i], f.u[i], f.len[i] * sizeof(double));
        CHECK_STATUS(msolve(OP_DENC, &s, fe.u, fe.v, -1, t, &r), MVNMF_STATUS_OK);
        check_trace(t, &r, qn.hx2);
        check_parts(&qn, &md, &qn.gr.g, &fe, &r, 1);
        CHECK(mfacs_same_u(&fe, &f)); /* U is read only */
        for (i = 0; i < 2; i++) {
            ut[i] = dalloc(qn.x[i].rows * k);
            cstack(f.u[i], qn.x[i].rows, layers, 2, ut[i]);
            nt += half_resid(&qn.x[i], ut[i], fe.v, k);
            nx += half_sq(&qn.x[i]);
        }
        rel_test = sqrt(nt / nx);
        CHECK(rel_train < 0.05);
        CHECK(rel_test < 0.05 && rel_test < 3.0 * rel_train + 0.01);
        note("  graph %-4s: relative error, training items %.2e, held-out items %.2e", GNAME[gk], rel_train,
             rel_test);

        /* = the shallow encoder on U~ computed here */
        set_ctx("deep_encode = shallow_encode on U~ = U_1 U_2, graph %s", GNAME[gk]);
        for (i = 0; i < 2; i++)
            memcpy(fj.u[i], ut[i], qn.x[i].rows * k * sizeof(double));
        s.k = k;
        CHECK_STATUS(msolve(OP_SENC, &s, fj.u, fj.v, -1, t2, &r2), MVNMF_STATUS_OK);
        CHECK(rel_diff(fj.v, fe.v, k * n_test) <= 1e-9);
        CHECK(r2.iterations == r.iterations && close_to(r2.objective.total, r.objective.total, 1e-9, 1e-14 * qn.hx2));
        for (i = 0; i < 2; i++)
            free(ut[i]);
        mfacs_free(&f);
        mfacs_free(&fe);
        mfacs_free(&fj);
        mprob_free(&qa);
        mprob_free(&qn);
    }
    free(t);
    free(t2);
}

/* ---- given starts, the convergence rule, determinism, edge cases ----------- */

static void test_misc(void)
{
    static const size_t layers[3] = { 7, 5, 3 }, tiny_layers[2] = { 10, 6 };
    mprob q;
    mspec s;
    mfacs a, b;
    mtrace_t *t = (mtrace_t *)malloc(sizeof *t);
    mvnmf_report r, r2;
    mvnmf_deep_params dp;
    mvnmf_mvsl_params sp;
    mmodel md;
    size_t i, j, m, in[MAXL], out[MAXL], bytes, bytes2;
    double *ut0[MAXV], *ut1[MAXV], rec0;
    int op, box, ti;
    lcg_t g;

    note("given starts (box rescaling), convergence rule, determinism, queries, edge cases");

    /* A given deep start with lower layers above 1: with box_lower they are
     * rescaled into [0, 1] with the product unchanged, then evaluated
     * (max_iter = 0); without, the buffers are used as they are. */
    mprob_make(&q, 25, 0, 3.0, G_SGE, 701);
    mfacs_alloc(&a, &q, 0, layers, 3);
    for (box = 0; box < 2; box++) {
        set_ctx("deep given start, lower layers up to 3, box_lower = %d, max_iter = 0", box);
        g = lcg_seeded(702);
        rec0 = 0.0;
        for (i = 0; i < q.nv; i++) {
            for (j = 0; j < a.len[i]; j++)
                a.u[i][j] = 3.0 * lcg_next(&g);
            ut0[i] = dalloc(q.x[i].rows * 3);
            ut1[i] = dalloc(q.x[i].rows * 3);
        }
        for (j = 0; j < 3 * q.n; j++)
            a.v[j] = 1.5 * lcg_next(&g); /* some above vmax = 1 */
        for (j = 0; j < 3 * q.n; j++)
            if (a.v[j] > 1.0)
                break;
        CHECK(j < 3 * q.n);
        mfacs_alloc(&b, &q, 0, layers, 3);
        mfacs_copy(&b, &a);
        for (j = 0; j < 3 * q.n; j++)
            b.v[j] = b.v[j] < 1.0 ? b.v[j] : 1.0;
        for (i = 0; i < q.nv; i++) {
            cstack(a.u[i], q.x[i].rows, layers, 3, ut0[i]);
            rec0 += half_resid(&q.x[i], ut0[i], b.v, 3);
        }
        CHECK_STATUS(mvnmf_deep_params_preset(MVNMF_DEEP_PRESET_DMCL, &dp), MVNMF_STATUS_OK);
        dp.top.init = MVNMF_INIT_GIVEN;
        dp.top.max_iter = 0;
        dp.box_lower = (uint32_t)box;
        memset(&s, 0, sizeof s);
        s.views = q.views;
        s.nv = q.nv;
        s.graph = &q.gr.g;
        s.layers = layers;
        s.nl = 3;
        s.dp = &dp;
        s.sp = &dp.top;
        CHECK_STATUS(msolve(OP_DFIT, &s, a.u, a.v, -1, t, &r), MVNMF_STATUS_OK);
        CHECK(r.iterations == 0 && r.stop == MVNMF_STOP_MAX_ITER && t->n == 1);
        CHECK(memcmp(&r.initial, &r.objective, sizeof r.initial) == 0);
        CHECK(memcmp(a.v, b.v, 3 * q.n * sizeof(double)) == 0); /* V clipped to vmax */
        if (!CHECK(close_to(mvnmf_objective_term(&r.initial, MVNMF_TERM_RECONSTRUCTION), rec0, 1e-10, 0.0)))
            printf("    reconstruction %.17g, from the given start %.17g\n", mvnmf_objective_term(&r.initial, MVNMF_TERM_RECONSTRUCTION), rec0);
        for (i = 0; i < q.nv; i++) {
            size_t off = 0;
            cstack(a.u[i], q.x[i].rows, layers, 3, ut1[i]);
            CHECK(rel_diff(ut1[i], ut0[i], q.x[i].rows * 3) <= 1e-14);
            cdims(q.x[i].rows, layers, 3, in, out);
            for (m = 0; m < 2; m++) {
                double mx = 0.0;
                for (j = 0; j < in[m] * out[m]; j++)
                    mx = a.u[i][off + j] > mx ? a.u[i][off + j] : mx;
                CHECK(box ? mx <= 1.0 : mx > 1.0);
                off += in[m] * out[m];
            }
            if (!box)
                CHECK(memcmp(a.u[i], b.u[i], a.len[i] * sizeof(double)) == 0);
            free(ut0[i]);
            free(ut1[i]);
        }
        md.sp = &dp.top;
        md.layers = layers;
        md.nl = 3;
        md.box = box;
        check_parts(&q, &md, &q.gr.g, &a, &r, 0);
        mfacs_free(&b);
    }
    mfacs_free(&a);

    /* The convergence rule: stop when the relative decrease is at most tol,
     * and not before. */
    for (op = OP_SFIT; op <= OP_DENC; op++) {
        static const double tols[2] = { 1e-3, 1e-6 };
        int deep = op >= OP_DFIT;
        for (ti = 0; ti < 2; ti++) {
            set_ctx("%s: convergence rule, tol %g", OPN[op], tols[ti]);
            CHECK_STATUS(mvnmf_deep_params_preset(MVNMF_DEEP_PRESET_DMCL, &dp), MVNMF_STATUS_OK);
            dp.top.alpha = 0.05;
            dp.top.tol = tols[ti];
            dp.top.max_iter = 500;
            dp.pretrain_iter = 20;
            memset(&s, 0, sizeof s);
            s.views = q.views;
            s.nv = q.nv;
            s.graph = &q.gr.g;
            s.k = 3;
            s.layers = layers;
            s.nl = 3;
            s.dp = &dp;
            s.sp = &dp.top;
            mfacs_alloc(&a, &q, 3, deep ? layers : NULL, deep ? 3 : 0);
            if (op == OP_SENC || op == OP_DENC)
                CHECK_STATUS(msolve(op - 1, &s, a.u, a.v, -1, t, &r), MVNMF_STATUS_OK);
            CHECK_STATUS(msolve(op, &s, a.u, a.v, -1, t, &r), MVNMF_STATUS_OK);
            check_trace(t, &r, q.hx2);
            for (i = 1; i < t->n && !t->bad; i++) {
                int small = t->obj[i - 1] - t->obj[i] <= dp.top.tol * fabs(t->obj[i - 1]);
                if (i + 1 < t->n)
                    CHECK(!small);
                else
                    CHECK(small == (r.stop == MVNMF_STOP_CONVERGED));
            }
            CHECK(r.stop == MVNMF_STOP_CONVERGED || (ti == 1 && r.stop == MVNMF_STOP_MAX_ITER && r.iterations == 500));
            note("  %-14s tol %g: stop %u after %u iterations", OPN[op], dp.top.tol, (unsigned)r.stop,
                 (unsigned)r.iterations);
            mfacs_free(&a);
        }
    }

    /* Determinism: the same seed gives the same bits, another seed other bits. */
    for (op = OP_SFIT; op <= OP_DENC; op++) {
        int deep = op >= OP_DFIT;
        mfacs c;
        set_ctx("%s: same seed, same bits; another seed, other bits", OPN[op]);
        CHECK_STATUS(mvnmf_deep_params_preset(MVNMF_DEEP_PRESET_DMCL, &dp), MVNMF_STATUS_OK);
        dp.top.alpha = 0.05;
        dp.top.max_iter = 20;
        dp.top.tol = 0.0;
        dp.pretrain_iter = 20;
        dp.top.seed = 5;
        memset(&s, 0, sizeof s);
        s.views = q.views;
        s.nv = q.nv;
        s.graph = &q.gr.g;
        s.k = 3;
        s.layers = layers;
        s.nl = 3;
        s.dp = &dp;
        s.sp = &dp.top;
        mfacs_alloc(&a, &q, 3, deep ? layers : NULL, deep ? 3 : 0);
        mfacs_alloc(&b, &q, 3, deep ? layers : NULL, deep ? 3 : 0);
        mfacs_alloc(&c, &q, 3, deep ? layers : NULL, deep ? 3 : 0);
        if (op == OP_SENC || op == OP_DENC) {
            CHECK_STATUS(msolve(op - 1, &s, a.u, a.v, -1, t, &r), MVNMF_STATUS_OK);
            mfacs_copy(&b, &a);
            mfacs_copy(&c, &a);
        }
        CHECK_STATUS(msolve(op, &s, a.u, a.v, -1, t, &r), MVNMF_STATUS_OK);
        CHECK_STATUS(msolve(op, &s, b.u, b.v, -1, t, &r2), MVNMF_STATUS_OK);
        CHECK(mfacs_same(&a, &b) && same_report(&r, &r2));
        dp.top.seed = 6;
        CHECK_STATUS(msolve(op, &s, c.u, c.v, -1, t, &r2), MVNMF_STATUS_OK);
        CHECK(memcmp(a.v, c.v, a.k * q.n * sizeof(double)) != 0 && r.initial.total != r2.initial.total);
        if (op == OP_SFIT || op == OP_DFIT)
            CHECK(memcmp(a.u[0], c.u[0], a.len[0] * sizeof(double)) != 0);
        mfacs_free(&a);
        mfacs_free(&b);
        mfacs_free(&c);
    }

    /* The workspace queries validate the views as their calls do (issue 31):
     * descriptors without their data are refused. */
    {
        mvnmf_view nodata[MAXV];
        for (op = OP_SFIT; op <= OP_DENC; op++) {
            set_ctx("%s_workspace validates the descriptors as its call", OPN[op]);
            memset(&s, 0, sizeof s);
            s.views = q.views;
            s.nv = q.nv;
            s.graph = &q.gr.g;
            s.k = 3;
            s.layers = layers;
            s.nl = 3;
            s.dp = &dp;
            s.sp = &dp.top;
            CHECK_STATUS(mquery(op, &s, &bytes), MVNMF_STATUS_OK);
            for (i = 0; i < q.nv; i++) {
                nodata[i] = q.views[i];
                nodata[i].values = NULL;
                nodata[i].col_ptr = NULL;
                nodata[i].row_idx = NULL;
            }
            s.views = nodata;
            bytes2 = 0;
            CHECK_STATUS(mquery(op, &s, &bytes2), MVNMF_STATUS_NULL_POINTER);
            CHECK(bytes2 == 0);
        }
    }
    mprob_free(&q);

    /* Edge cases, through the monotonicity run: one view; a view of 3 rows with
     * K = 6 and the hidden size 10 clamped to 3; K larger than the rows of a
     * view (shallow); eps = 0 in the deep solver. */
    CHECK_STATUS(mvnmf_deep_params_preset(MVNMF_DEEP_PRESET_DMCL, &dp), MVNMF_STATUS_OK);
    dp.top.alpha = 0.05;
    dp.top.max_iter = 40;
    dp.top.tol = 0.0;
    dp.pretrain_iter = 20;
    md.sp = &dp.top;
    md.box = 1;
    set_ctx("mvnmf_deep_factor_len of 3 rows, layers {10, 6}");
    CHECK_STATUS(mvnmf_deep_factor_len(3, tiny_layers, 2, &bytes), MVNMF_STATUS_OK);
    CHECK(bytes == 3 * 3 + 3 * 6);
    for (i = 0; i < 3; i++) {
        static const char *const names[3] = { "one view 20x30, L=7:5:3, csr", "views 20x30 + 3x30, L=10:6, sge",
                                              "views 20x30 + 3x30, L=10:6, sge, eps=0" };
        mprob_make_rows(&q, 20, i == 0 ? 0 : 3, 30, 0, 2.0, i == 0 ? G_CSR : G_SGE, 710 + i);
        md.layers = i == 0 ? layers : tiny_layers;
        md.nl = i == 0 ? 3 : 2;
        dp.top.eps = i == 2 ? 0.0 : DBL_EPSILON;
        dp.pretrain_iter = i == 0 ? 0 : 20; /* 0: random layers */
        mono_run(names[i], &q, &md, 0, &dp);
        md.layers = NULL;
        md.nl = 0;
        mono_run(names[i], &q, &md, i == 0 ? 3 : 6, NULL); /* shallow, K = 6 > 3 rows */
        mprob_free(&q);
    }

    /* Three views (dense, CSC, dense x 1e3) and an SGE graph declaring 5
     * classes of which 2 are empty. */
    dp.pretrain_iter = 20;
    dp.top.eps = DBL_EPSILON;
    for (i = 0; i < 2; i++) {
        const char *name = i ? "3 views, sge with 5 classes, dense x 1e3" : "3 views, csr, dense x 1e3";
        mprob_make(&q, 28, 0, 1.0, i ? G_SGE : G_CSR, 730 + i);
        hmat_free(&q.x[1]);
        hmat_make(&q.x[1], 12, 28, 12, 0.4, 1.0, 731 + i, 730 + i + 50);
        hmat_make(&q.x[2], 9, 28, 9, 1.0, 1e3, 732 + i, 730 + i + 50);
        q.nv = 3;
        q.hx2 = 0.0;
        for (j = 0; j < 3; j++) {
            q.views[j] = q.x[j].view;
            q.hx2 += half_sq(&q.x[j]);
        }
        if (i)
            q.gr.g.n_classes = 5;
        md.layers = layers;
        md.nl = 3;
        mono_run(name, &q, &md, 0, &dp);
        md.layers = NULL;
        md.nl = 0;
        mono_run(name, &q, &md, 4, NULL);
        mprob_free(&q);
    }

    /* An all-zero view: its basis dies, nothing turns NaN. */
    {
        static const char *const names[2] = { "views 20x30 + zero 6x30", "views 20x30 + zero 6x30 csc" };
        for (i = 0; i < 2; i++) {
            mprob_make_rows(&q, 20, 6, 30, (int)i, 0.0, G_SGE, 720 + i);
            CHECK(q.x[1].view.kind == MVNMF_VIEW_DENSE || q.x[1].nnz == 0);
            md.layers = tiny_layers;
            md.nl = 2;
            dp.top.eps = DBL_EPSILON;
            mono_run(names[i], &q, &md, 0, &dp);
            md.layers = NULL;
            md.nl = 0;
            sp = dp.top;
            md.sp = &sp;
            mono_run(names[i], &q, &md, 4, NULL);
            md.sp = &dp.top;
            mprob_free(&q);
        }
    }
    free(t);
}

/* A penalty graph with vmax = inf makes the objective unbounded below: the
 * solver refuses it (BAD_PARAMETER, outputs untouched) instead of returning
 * V = inf and a NaN objective. */
static void test_penalty_unbounded(void)
{
    mprob q;
    mspec s;
    mfacs a;
    mtrace_t *t = (mtrace_t *)malloc(sizeof *t);
    mvnmf_report r;
    mvnmf_mvsl_params sp;
    uint32_t st;
    note("penalty graph with vmax = inf is refused");
    mprob_make(&q, 20, 0, 1.0, G_CSR, 801);
    q.gr.g.affinity_row_ptr = NULL; /* the penalty graph alone */
    CHECK_STATUS(mvnmf_mvsl_params_preset(MVNMF_MVSL_PRESET_JOINT_NMF, &sp), MVNMF_STATUS_OK);
    sp.beta = 100.0;
    sp.max_iter = 100;
    sp.tol = 0.0;
    memset(&s, 0, sizeof s);
    s.views = q.views;
    s.nv = q.nv;
    s.graph = &q.gr.g;
    s.k = 3;
    s.sp = &sp;
    mfacs_alloc(&a, &q, 3, NULL, 0);
    set_ctx("shallow fit, penalty graph only, beta 100, vmax = inf");
    {
        size_t bytes = 7;
        st = mquery(OP_SFIT, &s, &bytes);
        CHECK(st == MVNMF_STATUS_BAD_PARAMETER && bytes == 7);
    }
    sp.vmax = 1.0;
    set_ctx("shallow fit, penalty graph only, beta 100, vmax = 1");
    st = msolve(OP_SFIT, &s, a.u, a.v, -1, t, &r);
    CHECK(st == MVNMF_STATUS_OK);
    CHECK(all_in(a.v, 3 * q.n, 0.0, 1.0));
    CHECK(r.objective.total - r.objective.total == 0.0);
    mfacs_free(&a);
    mprob_free(&q);
    free(t);
}

/* ---- 6. who runs the parallel regions (issue 18) ----------------------- */

/* A host's pool: three pthreads take task numbers from a shared counter,
 * from the top down, so the order differs from the library's own. */
typedef struct {
    pthread_mutex_t lock;
    size_t next;
    mvnmf_task_fn task;
    void *task_ctx;
    int calls;
} host_pool;

static void *host_worker(void *arg)
{
    host_pool *h = (host_pool *)arg;
    for (;;) {
        size_t i;
        pthread_mutex_lock(&h->lock);
        if (h->next == 0) {
            pthread_mutex_unlock(&h->lock);
            return NULL;
        }
        i = --h->next;
        pthread_mutex_unlock(&h->lock);
        h->task(h->task_ctx, i);
    }
}

static void host_parallel_for(size_t n_tasks, mvnmf_task_fn task, void *task_ctx, void *ctx)
{
    host_pool *h = (host_pool *)ctx;
    pthread_t t[3];
    int i;
    h->next = n_tasks;
    h->task = task;
    h->task_ctx = task_ctx;
    h->calls++;
    for (i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, host_worker, h);
    for (i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
}

/* A broken pool: runs every task but the last. */
static void skipping_parallel_for(size_t n_tasks, mvnmf_task_fn task, void *task_ctx, void *ctx)
{
    size_t i;
    (void)ctx;
    for (i = 0; i + 1 < n_tasks; i++)
        task(task_ctx, i);
}

/* Joint NMF and MvSL (SGE) on a dense and a CSC view, large enough that every
 * product splits into several tasks: serial, the built-in pool with 2 and 3
 * threads and the pthread pool give the same bytes (U, V, report); a pool
 * that skips a task gives MVNMF_STATUS_PARALLEL_FOR. */
static void test_parallel(void)
{
    const size_t n = 400, k = 20, nv = 2, rows[2] = { 300, 3000 };
    hmat x[2];
    mvnmf_view views[2];
    uint32_t *labels = (uint32_t *)malloc(n * sizeof(uint32_t));
    mvnmf_graph g;
    host_pool pool;
    size_t i, j, ulen = (rows[0] + rows[1]) * k;
    int model, way;
    set_ctx("parallel");
    pthread_mutex_init(&pool.lock, NULL);
    pool.calls = 0;
    hmat_make(&x[0], rows[0], n, rows[0], 1.0, 1.0, 61, 62);
    hmat_make(&x[1], rows[1], n, rows[1], 0.05, 3.0, 63, 62);
    for (i = 0; i < nv; i++)
        views[i] = x[i].view;
    for (j = 0; j < n; j++)
        labels[j] = j % 4 == 0 ? MVNMF_UNLABELED : (uint32_t)(j % 3);
    memset(&g, 0, sizeof g);
    g.kind = MVNMF_GRAPH_SGE;
    g.n = n;
    g.labels = labels;
    g.n_classes = 3;
    for (model = 0; model < 2; model++) {
        double *u0 = NULL, *v0 = NULL;
        mvnmf_report r0;
        memset(&r0, 0, sizeof r0);
        for (way = 0; way < 5; way++) {
            mvnmf_nmf_params np = mvnmf_nmf_params_default();
            mvnmf_mvsl_params sp = mvnmf_mvsl_params_default();
            mvnmf_parallel *par = model == 0 ? &np.parallel : &sp.parallel;
            double *us[2], *u = dalloc(ulen), *v = dalloc(k * n);
            void *work;
            size_t bytes = 0;
            mvnmf_report rep;
            uint32_t st, want = MVNMF_STATUS_OK;
            np.max_iter = sp.max_iter = 4;
            np.tol = sp.tol = 0.0;
            np.seed = sp.seed = 9;
            if (way == 1 || way == 2)
                par->threads = (uint32_t)way + 1;
            if (way == 3) {
                par->parallel_for = host_parallel_for;
                par->ctx = &pool;
            }
            if (way == 4) {
                par->parallel_for = skipping_parallel_for;
                want = MVNMF_STATUS_PARALLEL_FOR;
            }
            us[0] = u;
            us[1] = u + rows[0] * k;
            set_ctx("parallel: %s, way %d", model ? "mvsl" : "joint nmf", way);
            st = model == 0 ? mvnmf_joint_nmf_fit_workspace(views, nv, k, &np, &bytes)
                            : mvnmf_mvsl_fit_workspace(views, nv, &g, k, &sp, &bytes);
            CHECK_STATUS(st, MVNMF_STATUS_OK);
            work = malloc(bytes);
            memset(&rep, 0, sizeof rep);
            st = model == 0 ? mvnmf_joint_nmf_fit(views, nv, k, &np, us, v, work, bytes, NULL, NULL, &rep)
                            : mvnmf_mvsl_fit(views, nv, &g, k, &sp, us, v, work, bytes, NULL, NULL, &rep);
            CHECK_STATUS(st, want);
            if (way == 0) {
                u0 = u;
                v0 = v;
                r0 = rep;
                free(work);
                continue;
            }
            if (want == MVNMF_STATUS_OK) {
                CHECK(memcmp(u, u0, ulen * sizeof(double)) == 0);
                CHECK(memcmp(v, v0, k * n * sizeof(double)) == 0);
                CHECK(memcmp(&rep, &r0, sizeof rep) == 0);
            }
            free(work);
            free(u);
            free(v);
        }
        free(u0);
        free(v0);
    }
    CHECK(pool.calls > 0);
    pthread_mutex_destroy(&pool.lock);
    for (i = 0; i < nv; i++)
        hmat_free(&x[i]);
    free(labels);
}

int HARNESS_MODELS_ENTRY(int verbose)
{
    g_failures = 0;
    g_verbose = verbose;
    g_runs = 0;
    test_errors();
    test_reductions();
    test_cancel();
    test_encode();
    test_misc();
    test_penalty_unbounded();
    test_parallel();
    test_shallow_monotone();
    test_deep_monotone();
    if (verbose || g_failures)
        printf("[%s] mvnmf C ABI harness (models): %d failed checks\n", LANG, g_failures);
    fflush(stdout);
    return g_failures;
}
