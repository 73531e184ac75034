/* What the three C harnesses (harness.c, harness_models.c, harness_graph.c)
 * share: failure counting with a context string, the CHECK macros, and a
 * portable 64-bit LCG. Each harness is its own translation unit with its own
 * copy of the state below; define LANG (the build's name) before including. */
#ifndef MVNMF_HARNESS_COMMON_H
#define MVNMF_HARNESS_COMMON_H

#include "mvnmf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
    return a->total == b->total && a->reconstruction == b->reconstruction && a->sparsity == b->sparsity &&
           a->affinity == b->affinity && a->penalty == b->penalty && a->l1 == b->l1;
}

static inline int same_report_values(const mvnmf_report *a, const mvnmf_report *b)
{
    return a->iterations == b->iterations && a->stop == b->stop && a->dead_views == b->dead_views &&
           obj_equal(&a->initial, &b->initial) && obj_equal(&a->objective, &b->objective);
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

/* A kernel descriptor. */
static inline mvnmf_kernel kernel_of(uint32_t kind, double gamma)
{
    mvnmf_kernel k;
    k.kind = kind;
    k.gamma = gamma;
    return k;
}

#endif
