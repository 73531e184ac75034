/* What the C harnesses (harness.c, harness_models.c, harness_graph.c,
 * harness_protocol.c) share: failure counting with a context string, the CHECK
 * macros, a portable 64-bit LCG, close_to and, with HARNESS_DENSE_HELPERS
 * defined before the include, the guarded buffers and test views of harness.c
 * and harness_models.c. Each harness is its own translation unit with its own
 * copy of the state below; define LANG (the build's name) before including. */
#ifndef MVNMF_HARNESS_COMMON_H
#define MVNMF_HARNESS_COMMON_H

#include "mvnmf.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_failures;
static int g_verbose;
static char g_ctx[240]; /* what is being tested; printed with each failure */

static inline void set_ctx(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_ctx, sizeof g_ctx, fmt, ap);
    va_end(ap);
}

/* A progress line, printed only when verbose. */
static inline void note(const char *fmt, ...)
{
    va_list ap;
    if (!g_verbose)
        return;
    printf("[%s] ", LANG);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

static inline int check_at(int ok, const char *what, const char *file, int line)
{
    if (!ok) {
        g_failures++;
        printf("[%s] FAIL %s:%d: %s [%s]\n", LANG, file, line, what, g_ctx);
    }
    return ok;
}

static inline int check_status_at(uint32_t got, uint32_t want, const char *file, int line)
{
    if (got != want) {
        g_failures++;
        printf("[%s] FAIL %s:%d: status %u (%s), expected %u (%s) [%s]\n", LANG, file, line,
               (unsigned)got, mvnmf_status_message(got), (unsigned)want,
               mvnmf_status_message(want), g_ctx);
    }
    return got == want;
}

#define CHECK(cond) check_at((cond) ? 1 : 0, #cond, __FILE__, __LINE__)
#define CHECK_STATUS(got, want) check_status_at((uint32_t)(got), (uint32_t)(want), __FILE__, __LINE__)

/* A 64-bit LCG (Knuth's MMIX constants): the same numbers on every platform. */
typedef struct {
    uint64_t s;
} lcg_t;

static inline double lcg_next(lcg_t *g)
{
    g->s = g->s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(g->s >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) */
}

static inline lcg_t lcg_seeded(uint64_t seed)
{
    lcg_t g;
    int i;
    g.s = seed * 0x9E3779B97F4A7C15ULL + 12345u;
    for (i = 0; i < 4; i++)
        lcg_next(&g);
    return g;
}

/* Every entry finite and in [lo, hi]. */
static inline int all_in(const double *p, size_t n, double lo, double hi)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (!(p[i] >= lo && p[i] <= hi && p[i] - p[i] == 0.0))
            return 0;
    return 1;
}

/* Every one of n bytes equals b. */
static inline int bytes_are(const void *p, size_t n, unsigned char b)
{
    const unsigned char *q = (const unsigned char *)p;
    size_t i;
    for (i = 0; i < n; i++)
        if (q[i] != b)
            return 0;
    return 1;
}

/* The same numbers (== on every part: an unused part may be +0 in one report
 * and -0 in the other). */
static inline int obj_equal(const mvnmf_objective *a, const mvnmf_objective *b)
{
    uint32_t i;
    if (a->total != b->total || a->n_terms != b->n_terms || a->n_terms > MVNMF_MAX_TERMS)
        return 0;
    for (i = 0; i < a->n_terms; i++)
        if (a->terms[i].kind != b->terms[i].kind || a->terms[i].value != b->terms[i].value)
            return 0;
    return 1;
}

static inline int same_report_values(const mvnmf_report *a, const mvnmf_report *b)
{
    return a->iterations == b->iterations && a->stop == b->stop && a->dead_views == b->dead_views &&
           obj_equal(&a->initial, &b->initial) && obj_equal(&a->objective, &b->objective);
}


/* |got - want| <= rel |want| + abs_tol. */
/* |got - want| <= rel * |want| + abs (NaN fails). */
static inline int close_to(double got, double want, double rel, double abs_tol)
{
    return fabs(got - want) <= rel * fabs(want) + abs_tol;
}

#ifdef HARNESS_DENSE_HELPERS
/* The dense-matrix helpers of harness.c and harness_models.c: guarded buffers,
 * test views with a dense copy, residuals computed by plain loops. */

#define GUARD 8 /* guard doubles after every factor buffer */

static const double GUARD_VAL = -7.25e300;

/* n doubles (zero) followed by GUARD guard values. */
static inline double *dalloc(size_t n)
{
    double *p = (double *)malloc((n + GUARD) * sizeof(double));
    size_t i;
    if (p == NULL) {
        printf("[%s] out of memory\n", LANG);
        exit(1);
    }
    for (i = 0; i < n + GUARD; i++)
        p[i] = i < n ? 0.0 : GUARD_VAL;
    return p;
}

static inline int guard_ok(const double *p, size_t n)
{
    size_t i;
    for (i = 0; i < GUARD; i++)
        if (p[n + i] != GUARD_VAL)
            return 0;
    return 1;
}

/* max|a - b| / max|b| (NaN-propagating). */
static inline double rel_diff(const double *a, const double *b, size_t n)
{
    double d = 0.0, m = 0.0;
    size_t i;
    for (i = 0; i < n; i++) {
        double e = fabs(a[i] - b[i]);
        if (!(e <= d))
            d = e;
        if (fabs(b[i]) > m)
            m = fabs(b[i]);
    }
    return m > 0.0 ? d / m : d;
}

/* A view together with its dense copy (for residuals computed here). */
typedef struct {
    size_t rows, cols, ld, nnz;
    double *a;                 /* ld x cols, column-major; padding rows are NaN */
    size_t *col_ptr, *row_idx; /* CSC structure (sparse only) */
    double *nz;                /* CSC values */
    mvnmf_view view;
} hmat;

static inline void hmat_alloc(hmat *x, size_t rows, size_t cols, size_t ld)
{
    size_t i;
    memset(x, 0, sizeof *x);
    x->rows = rows;
    x->cols = cols;
    x->ld = ld;
    x->a = dalloc(ld * cols);
    for (i = 0; i < ld * cols; i++)
        x->a[i] = NAN; /* the solver must never read the padding */
}

/* Sets x->view: dense over x->a, or CSC of the nonzeros of x->a. */
static inline void hmat_finish(hmat *x, int sparse)
{
    size_t i, j, p = 0;
    memset(&x->view, 0, sizeof x->view);
    x->view.rows = x->rows;
    x->view.cols = x->cols;
    if (!sparse) {
        x->view.kind = MVNMF_VIEW_DENSE;
        x->view.values = x->a;
        x->view.col_stride = x->ld;
        return;
    }
    x->nnz = 0;
    for (j = 0; j < x->cols; j++)
        for (i = 0; i < x->rows; i++)
            x->nnz += x->a[i + j * x->ld] != 0.0;
    x->col_ptr = (size_t *)malloc((x->cols + 1) * sizeof(size_t));
    x->row_idx = (size_t *)malloc((x->nnz + 1) * sizeof(size_t));
    x->nz = dalloc(x->nnz + 1);
    x->col_ptr[0] = 0;
    for (j = 0; j < x->cols; j++) {
        for (i = 0; i < x->rows; i++) {
            if (x->a[i + j * x->ld] != 0.0) {
                x->row_idx[p] = i;
                x->nz[p++] = x->a[i + j * x->ld];
            }
        }
        x->col_ptr[j + 1] = p;
    }
    x->view.kind = MVNMF_VIEW_CSC;
    x->view.values = x->nz;
    x->view.col_ptr = x->col_ptr;
    x->view.row_idx = x->row_idx;
}

/* X = scale * (A B / 3 + 0.05 noise), A rows x 3 from seed_a, B 3 x cols from
 * seed_b (views with the same seed_b share their items); density < 1 gives a
 * CSC view keeping each entry with that probability, rows i % 5 == 2 and
 * columns j % 7 == 3 empty. */
static inline void hmat_make(hmat *x, size_t rows, size_t cols, size_t ld, double density, double scale,
                      uint64_t seed_a, uint64_t seed_b)
{
    const size_t r = 3;
    lcg_t ga = lcg_seeded(seed_a), gb = lcg_seeded(seed_b + 1000), gn = lcg_seeded(seed_a * 7919 + seed_b);
    double *A = dalloc(rows * r), *B = dalloc(r * cols);
    size_t i, j, l;
    int sparse = density < 1.0;
    for (i = 0; i < rows * r; i++)
        A[i] = lcg_next(&ga);
    for (i = 0; i < r * cols; i++)
        B[i] = lcg_next(&gb);
    hmat_alloc(x, rows, cols, ld);
    for (j = 0; j < cols; j++) {
        for (i = 0; i < rows; i++) {
            double s = 0.05 * lcg_next(&gn);
            for (l = 0; l < r; l++)
                s += A[i + l * rows] * B[l + j * r] / (double)r;
            if (sparse && (i % 5 == 2 || j % 7 == 3 || lcg_next(&gn) >= density))
                s = 0.0;
            x->a[i + j * ld] = scale * s;
        }
    }
    free(A); free(B);
    hmat_finish(x, sparse);
}

static inline void hmat_free(hmat *x)
{
    free(x->a); free(x->col_ptr); free(x->row_idx); free(x->nz);
    memset(x, 0, sizeof *x);
}

static inline double half_sq(const hmat *x)
{
    double s = 0.0;
    size_t i, j;
    for (j = 0; j < x->cols; j++)
        for (i = 0; i < x->rows; i++)
            s += x->a[i + j * x->ld] * x->a[i + j * x->ld];
    return 0.5 * s;
}

/* 0.5 ||X - U V||^2 with U rows x k and V k x cols, by plain loops. */
static inline double half_resid(const hmat *x, const double *u, const double *v, size_t k)
{
    double s = 0.0;
    size_t i, j, l;
    for (j = 0; j < x->cols; j++) {
        for (i = 0; i < x->rows; i++) {
            double e = x->a[i + j * x->ld];
            for (l = 0; l < k; l++)
                e -= u[i + l * x->rows] * v[l + j * k];
            s += e * e;
        }
    }
    return 0.5 * s;
}

static inline int same_report(const mvnmf_report *a, const mvnmf_report *b)
{
    return a->iterations == b->iterations && a->stop == b->stop && a->dead_views == b->dead_views &&
           memcmp(&a->initial, &b->initial, sizeof a->initial) == 0 &&
           memcmp(&a->objective, &b->objective, sizeof a->objective) == 0;
}
#endif /* HARNESS_DENSE_HELPERS */

/* A refusal's report (issue 33): every field zero but where_*; where_arg, the
 * 1-based position of the argument refused, is `arg` (any position when
 * arg = UINT32_MAX). */
static inline int refused_at(const mvnmf_report *r, uint32_t arg)
{
    return r->iterations == 0 && r->stop == 0 && r->dead_views == 0 && r->initial.total == 0.0 &&
           r->initial.n_terms == 0 && r->objective.total == 0.0 && r->objective.n_terms == 0 &&
           (arg == UINT32_MAX ? r->where_arg <= 20 : r->where_arg == arg);
}

/* A dense column-major view of x (rows x cols, col_stride = rows). */
static inline mvnmf_view dense_view(const double *x, size_t rows, size_t cols)
{
    mvnmf_view v;
    v.kind = MVNMF_VIEW_DENSE;
    v.rows = rows;
    v.cols = cols;
    v.values = x;
    v.col_stride = rows;
    v.col_ptr = NULL;
    v.row_idx = NULL;
    return v;
}

/* The same in single precision. */
static inline mvnmf_view_f32 dense_view_f32(const float *x, size_t rows, size_t cols)
{
    mvnmf_view_f32 v;
    v.kind = MVNMF_VIEW_DENSE;
    v.rows = rows;
    v.cols = cols;
    v.values = x;
    v.col_stride = rows;
    v.col_ptr = NULL;
    v.row_idx = NULL;
    return v;
}

/* A kernel descriptor. */
static inline mvnmf_kernel kernel_of(uint32_t kind, double gamma)
{
    mvnmf_kernel k;
    k.kind = kind;
    k.gamma = gamma;
    return k;
}

#endif
