/* C test harness of the mvnmf C ABI (include/mvnmf.h).
 *
 * ffi-tests/build.rs compiles this file twice, as C99 and as C++11, with
 * -Wall -Wextra -Wpedantic -Werror, so it keeps to the common subset: explicit
 * casts from void *, no designated initializers, compound literals or VLAs,
 * `static` on everything but the entry point. HARNESS_ENTRY (renamed per build)
 * returns the number of failed checks and prints one line per failure; with
 * verbose != 0 it also prints one line per test group.
 *
 * Every check is a documented property that a wrong library would break:
 *   - the objective reported to the callback never increases (dense, CSC,
 *     strided dense, views 1e4 apart in scale, K = 1, K > min(M, N));
 *   - the report agrees with the callback trace and with the residual computed
 *     here; U >= 0 and 0 <= V <= vmax;
 *   - every error class returns its code with the outputs byte-for-byte
 *     untouched; the workspace query is exact at any alignment, and nothing is
 *     written outside the workspace or read from it before being written;
 *   - cancellation, determinism, warm starts, the convergence rule;
 *   - two identities: mvnmf_nmf_fit is the joint fit with one view, and the
 *     joint fit is NMF of the vertically stacked views.
 */
#include "mvnmf.h"

#include <math.h>
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
int HARNESS_ENTRY(int verbose);
#ifdef __cplusplus
}
#endif

#define HARNESS_DENSE_HELPERS
#include "harness_common.h"

#define MAXV 4         /* views per problem, at most */
#define MAX_TRACE 512  /* callback values recorded per run, at most */
#define PAD 64         /* guard bytes around every workspace */

/* ---- checks: harness_common.h ------------------------------------------ */

static unsigned g_runs;  /* varies the workspace alignment from run to run */

/* ---- test matrices ------------------------------------------------------ */

/* ---- running the solvers ------------------------------------------------ */

enum { OP_FIT, OP_ENCODE, OP_FIT1, OP_ENCODE1 }; /* joint fit/encode, one-view fit/encode */
static const char *const OP_NAME[] = { "joint_nmf_fit", "joint_nmf_encode", "nmf_fit", "nmf_encode" };

/* Objectives seen by the callback; it returns nonzero at iteration stop_at. */
typedef struct {
    double obj[MAX_TRACE];
    unsigned n;
    int bad;      /* iterations out of sequence, or parts other than reconstruction */
    long stop_at; /* -1: never */
} trace_t;

static void trace_reset(trace_t *t, long stop_at)
{
    t->n = 0;
    t->bad = 0;
    t->stop_at = stop_at;
}

static int trace_cb(const mvnmf_progress *pr, void *user)
{
    trace_t *t = (trace_t *)user;
    const mvnmf_objective *o = &pr->objective;
    if (pr->iter != t->n || t->n >= MAX_TRACE)
        t->bad = 1;
    else
        t->obj[t->n] = o->total;
    if (mvnmf_objective_term(o, MVNMF_TERM_RECONSTRUCTION) != o->total || mvnmf_objective_term(o, MVNMF_TERM_SPARSITY) != 0.0 || mvnmf_objective_term(o, MVNMF_TERM_AFFINITY) != 0.0 ||
        mvnmf_objective_term(o, MVNMF_TERM_PENALTY) != 0.0 || mvnmf_objective_term(o, MVNMF_TERM_L1) != 0.0)
        t->bad = 1;
    t->n++;
    return t->stop_at >= 0 && (long)pr->iter == t->stop_at;
}

static uint32_t query_ws(int op, const mvnmf_view *views, size_t nv, size_t k,
                         const mvnmf_nmf_params *p, size_t *bytes)
{
    switch (op) {
    case OP_FIT: return mvnmf_joint_nmf_fit_workspace(views, nv, k, p, bytes);
    case OP_ENCODE: return mvnmf_joint_nmf_encode_workspace(views, nv, k, p, bytes);
    case OP_FIT1: return mvnmf_nmf_fit_workspace(views, k, p, bytes);
    default: return mvnmf_nmf_encode_workspace(views, k, p, bytes);
    }
}

/* Queries the workspace, allocates exactly that many bytes at a varying
 * alignment, fills them with NaN bytes, runs `op` with the callback recording
 * into `t` (and stopping at `stop_at`), and checks that nothing around the
 * workspace was written. */
static uint32_t solve(int op, const mvnmf_view *views, size_t nv, size_t k, const mvnmf_nmf_params *p,
                      double *const *u, double *v, long stop_at, trace_t *t, mvnmf_report *rep)
{
    size_t bytes = 0, off = (g_runs++ * 13u) % 64u, i;
    const double *cu[MAXV];
    unsigned char *raw;
    void *work;
    uint32_t st = query_ws(op, views, nv, k, p, &bytes);
    trace_reset(t, stop_at);
    if (!CHECK_STATUS(st, MVNMF_STATUS_OK))
        return st;
    raw = (unsigned char *)malloc(off + bytes + PAD);
    if (!CHECK(raw != NULL))
        return MVNMF_STATUS_INTERNAL;
    memset(raw, 0x5A, off);
    memset(raw + off, 0xFF, bytes);
    memset(raw + off + bytes, 0x5A, PAD);
    work = raw + off;
    for (i = 0; i < nv && i < MAXV; i++)
        cu[i] = u[i];
    switch (op) {
    case OP_FIT: st = mvnmf_joint_nmf_fit(views, nv, k, p, u, v, work, bytes, trace_cb, t, rep); break;
    case OP_ENCODE: st = mvnmf_joint_nmf_encode(views, nv, k, p, cu, v, work, bytes, trace_cb, t, rep); break;
    case OP_FIT1: st = mvnmf_nmf_fit(views, k, p, u[0], v, work, bytes, trace_cb, t, rep); break;
    default: st = mvnmf_nmf_encode(views, k, p, cu[0], v, work, bytes, trace_cb, t, rep); break;
    }
    CHECK(bytes_are(raw, off, 0x5A) && bytes_are(raw + off + bytes, PAD, 0x5A));
    free(raw);
    return st;
}

/* The trace is monotone (up to 1e-10 of 0.5||X||^2) and agrees with the report. */
static void check_trace(const trace_t *t, const mvnmf_report *rep, double hx2)
{
    unsigned i, ups = 0, first = 0;
    CHECK(!t->bad);
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
    CHECK(mvnmf_objective_term(&rep->objective, MVNMF_TERM_RECONSTRUCTION) == rep->objective.total);
    CHECK(mvnmf_objective_term(&rep->objective, MVNMF_TERM_SPARSITY) == 0.0 && mvnmf_objective_term(&rep->objective, MVNMF_TERM_AFFINITY) == 0.0 &&
          mvnmf_objective_term(&rep->objective, MVNMF_TERM_PENALTY) == 0.0 && mvnmf_objective_term(&rep->objective, MVNMF_TERM_L1) == 0.0);
}

/* ---- 1, 2, 8: monotonicity, report, bounds, one view = joint ------------- */

/* Bounds on the final objective: at most `fit`/`enc` times the initial one
 * (fit/encode) and, for data the rank can explain, at most `resid` (fit) or
 * 2 resid (encode) times 0.5||X||^2 (1 = no bound). */
typedef struct {
    double fit, enc, resid;
} goal_t;

/* Fits the views `xs` (150 iterations, tol 0), then encodes the new items `xn`
 * (same bases) with the fitted U. With one view, the one-view entry points
 * must give bitwise the same results as the joint ones. */
static void mono_case(const char *name, const hmat *xs, const hmat *xn, size_t nv, size_t k,
                      uint64_t seed, double vmax, goal_t goal)
{
    mvnmf_view views[MAXV], nviews[MAXV];
    double *u[MAXV], *u1[MAXV], *v, *v1, *ve, *ve1;
    size_t i, n = xs[0].cols, nn = xn[0].cols;
    double hx2 = 0.0, hn2 = 0.0, direct = 0.0;
    mvnmf_nmf_params p = mvnmf_nmf_params_default();
    mvnmf_report rep, rep1;
    trace_t t, t1;
    uint32_t st;

    p.max_iter = 150;
    p.tol = 0.0;
    p.seed = seed;
    p.vmax = vmax;
    for (i = 0; i < nv; i++) {
        views[i] = xs[i].view;
        nviews[i] = xn[i].view;
        u[i] = dalloc(xs[i].rows * k);
        u1[i] = dalloc(xs[i].rows * k);
        hx2 += half_sq(&xs[i]);
        hn2 += half_sq(&xn[i]);
    }
    v = dalloc(k * n);
    v1 = dalloc(k * n);
    ve = dalloc(k * nn);
    ve1 = dalloc(k * nn);

    set_ctx("fit %s K=%zu seed=%llu vmax=%g", name, k, (unsigned long long)seed, vmax);
    memset(&rep, 0xA5, sizeof rep);
    st = solve(OP_FIT, views, nv, k, &p, u, v, -1, &t, &rep);
    if (CHECK_STATUS(st, MVNMF_STATUS_OK)) {
        check_trace(&t, &rep, hx2);
        CHECK(rep.stop == MVNMF_STOP_MAX_ITER && rep.iterations == p.max_iter);
        CHECK(rep.dead_views == 0);
        for (i = 0; i < nv; i++) {
            CHECK(all_in(u[i], xs[i].rows * k, 0.0, INFINITY) && guard_ok(u[i], xs[i].rows * k));
            direct += half_resid(&xs[i], u[i], v, k);
        }
        CHECK(all_in(v, k * n, 0.0, vmax) && guard_ok(v, k * n));
        CHECK(fabs(direct - mvnmf_objective_term(&rep.objective, MVNMF_TERM_RECONSTRUCTION)) <= 1e-8 * hx2);
        CHECK(rep.objective.total <= goal.fit * rep.initial.total && rep.objective.total <= goal.resid * hx2);
        note("  fit    %-22s K=%-2zu seed=%llu vmax=%-3g: %.3e -> %.3e (ratio %.2e)", name, k,
             (unsigned long long)seed, vmax, rep.initial.total, rep.objective.total,
             rep.objective.total / rep.initial.total);
    }
    if (nv == 1) {
        set_ctx("nmf_fit = joint fit with one view, %s K=%zu seed=%llu", name, k, (unsigned long long)seed);
        st = solve(OP_FIT1, views, 1, k, &p, u1, v1, -1, &t1, &rep1);
        CHECK_STATUS(st, MVNMF_STATUS_OK);
        check_trace(&t1, &rep1, hx2);
        CHECK(memcmp(u[0], u1[0], xs[0].rows * k * sizeof(double)) == 0);
        CHECK(memcmp(v, v1, k * n * sizeof(double)) == 0);
        CHECK(same_report(&rep, &rep1) && t1.n == t.n);
    }

    set_ctx("encode %s K=%zu seed=%llu vmax=%g", name, k, (unsigned long long)seed, vmax);
    for (i = 0; i < nv; i++)
        memcpy(u1[i], u[i], xs[i].rows * k * sizeof(double));
    p.seed = seed + 100;
    memset(&rep, 0xA5, sizeof rep);
    st = solve(OP_ENCODE, nviews, nv, k, &p, u, ve, -1, &t, &rep);
    if (CHECK_STATUS(st, MVNMF_STATUS_OK)) {
        check_trace(&t, &rep, hn2);
        CHECK(rep.stop == MVNMF_STOP_MAX_ITER && rep.iterations == p.max_iter);
        direct = 0.0;
        for (i = 0; i < nv; i++) {
            CHECK(memcmp(u[i], u1[i], xs[i].rows * k * sizeof(double)) == 0); /* U is read only */
            direct += half_resid(&xn[i], u[i], ve, k);
        }
        CHECK(all_in(ve, k * nn, 0.0, vmax) && guard_ok(ve, k * nn));
        CHECK(fabs(direct - mvnmf_objective_term(&rep.objective, MVNMF_TERM_RECONSTRUCTION)) <= 1e-8 * hn2);
        CHECK(rep.objective.total <= goal.enc * rep.initial.total && rep.objective.total <= 2.0 * goal.resid * hn2);
        note("  encode %-22s K=%-2zu seed=%llu vmax=%-3g: %.3e -> %.3e (ratio %.2e)", name, k,
             (unsigned long long)seed, vmax, rep.initial.total, rep.objective.total,
             rep.objective.total / rep.initial.total);
    }
    if (nv == 1) {
        set_ctx("nmf_encode = joint encode with one view, %s K=%zu", name, k);
        st = solve(OP_ENCODE1, nviews, 1, k, &p, u, ve1, -1, &t1, &rep1);
        CHECK_STATUS(st, MVNMF_STATUS_OK);
        check_trace(&t1, &rep1, hn2);
        CHECK(memcmp(ve, ve1, k * nn * sizeof(double)) == 0);
        CHECK(same_report(&rep, &rep1));
    }

    for (i = 0; i < nv; i++) {
        free(u[i]); free(u1[i]);
    }
    free(v); free(v1); free(ve); free(ve1);
}

static void test_monotone(void)
{
    static const struct {
        const char *name;
        size_t m, n, k;
    } shapes[] = {
        { "thin 200x15", 200, 15, 4 }, { "wide 15x200", 15, 200, 4 }, { "square 40x40", 40, 40, 6 },
        { "K=1 30x25", 30, 25, 1 },    { "K>min 8x12", 8, 12, 10 },
        /* several 128-row blocks of the fused sparse U-step; K > 64 (unfused path) */
        { "tall 300x20", 300, 20, 6 }, { "K=70 150x90", 150, 90, 70 },
    };
    /* The data are rank 3 plus 5% noise: with K >= 3 the fit explains 99% of
     * 0.5||X||^2; K = 1 and the masked CSC data are bounded by the decrease. */
    const goal_t g_dense = { 0.05, 0.3, 0.01 }, g_rank1 = { 0.05, 0.3, 0.05 }, g_sparse = { 0.8, 0.95, 1.0 };
    size_t s, i;
    int sparse;
    uint64_t seed;
    char name[64];
    hmat x[MAXV], xn[MAXV];

    note("monotonicity, reports, bounds; one view");
    for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        for (sparse = 0; sparse < 2; sparse++) {
            for (seed = 1; seed <= 3; seed++) {
                size_t m = shapes[s].m, ld = sparse ? m : m + (seed == 2 ? 5 : 0);
                double density = sparse ? 0.25 : 1.0;
                snprintf(name, sizeof name, "%s %s%s", shapes[s].name, sparse ? "csc" : "dense",
                         ld > m ? " ld+5" : "");
                hmat_make(&x[0], m, shapes[s].n, ld, density, 1.0, seed, seed + 10);
                hmat_make(&xn[0], m, 9, ld, density, 1.0, seed, seed + 20);
                mono_case(name, x, xn, 1, shapes[s].k, seed, seed == 3 ? 1.0 : INFINITY,
                          sparse ? g_sparse : shapes[s].k >= 3 ? g_dense : g_rank1);
                hmat_free(&x[0]); hmat_free(&xn[0]);
            }
        }
    }

    note("monotonicity, reports, bounds; three views (dense ld 37 > 30, CSC, dense x 1e4)");
    for (seed = 1; seed <= 3; seed++) {
        hmat_make(&x[0], 30, 40, 37, 1.0, 1.0, seed, seed + 10);
        hmat_make(&x[1], 25, 40, 25, 0.3, 1.0, seed + 1, seed + 10);
        hmat_make(&x[2], 10, 40, 10, 1.0, 1e4, seed + 2, seed + 10);
        hmat_make(&xn[0], 30, 11, 37, 1.0, 1.0, seed, seed + 20);
        hmat_make(&xn[1], 25, 11, 25, 0.3, 1.0, seed + 1, seed + 20);
        hmat_make(&xn[2], 10, 11, 10, 1.0, 1e4, seed + 2, seed + 20);
        mono_case("3 views, scales 1:1:1e4", x, xn, 3, 5, seed, seed == 3 ? 1.0 : INFINITY, g_dense);
        for (i = 0; i < 3; i++) {
            hmat_free(&x[i]); hmat_free(&xn[i]);
        }
    }
    hmat_make(&x[0], 50, 60, 50, 0.2, 1.0, 4, 40);
    hmat_make(&x[1], 20, 60, 20, 0.2, 1e-4, 5, 40);
    hmat_make(&xn[0], 50, 8, 50, 0.2, 1.0, 4, 41);
    hmat_make(&xn[1], 20, 8, 20, 0.2, 1e-4, 5, 41);
    mono_case("2 CSC views, scales 1:1e-4", x, xn, 2, 3, 9, INFINITY, g_sparse);
    for (i = 0; i < 2; i++) {
        hmat_free(&x[i]); hmat_free(&xn[i]);
    }
}

/* ---- 3: every error class, outputs untouched ----------------------------- */

/* A valid two-view call (dense 6x5 with stride 7, CSC 4x5, K = 2) that each
 * error test breaks in exactly one way. */
typedef struct {
    hmat x0;
    size_t cp[6], ri[6];  /* the CSC view's structure */
    double cv[6];
    mvnmf_view views[2];
    const mvnmf_view *vp;
    size_t nv, k;
    mvnmf_nmf_params prm;
    double ubuf0[64], ubuf1[64], vbuf[64];
    double *u[2];
    double *const *up;
    const double *cu[2];
    const double *const *cup;
    double *v;
    unsigned char *raw;   /* workspace allocation */
    void *work;
    size_t wb_fit, wb_enc; /* the queried sizes */
    int keep;             /* U and V prepared by the test (MVNMF_INIT_GIVEN) */
    mvnmf_report rep;
} fixture;

static void fx_reset(fixture *f)
{
    static const size_t cp[6] = { 0, 2, 3, 3, 5, 6 }, ri[6] = { 0, 3, 1, 0, 2, 3 };
    static const double cv[6] = { 1.0, 2.0, 3.0, 4.0, 5.0, 6.0 };
    size_t i;
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
    f->k = 2;
    f->prm = mvnmf_nmf_params_default();
    f->prm.max_iter = 5;
    f->u[0] = f->ubuf0;
    f->u[1] = f->ubuf1;
    f->up = f->u;
    f->cu[0] = f->ubuf0;
    f->cu[1] = f->ubuf1;
    f->cup = f->cu;
    f->v = f->vbuf;
    f->work = f->raw;
    f->keep = 0;
    CHECK_STATUS(mvnmf_joint_nmf_fit_workspace(f->views, 2, 2, &f->prm, &f->wb_fit), MVNMF_STATUS_OK);
    CHECK_STATUS(mvnmf_joint_nmf_encode_workspace(f->views, 2, 2, &f->prm, &f->wb_enc), MVNMF_STATUS_OK);
}

static void fx_init(fixture *f)
{
    memset(f, 0, sizeof *f);
    hmat_alloc(&f->x0, 6, 5, 7);
    hmat_finish(&f->x0, 0);
    f->raw = (unsigned char *)malloc(4096);
    fx_reset(f);
    CHECK(f->wb_fit + 1 <= 4096 && f->wb_enc + 1 <= 4096);
}

static void fx_fill(double *p, size_t n, double x)
{
    size_t i;
    for (i = 0; i < n; i++)
        p[i] = x;
}

/* Runs the fit (enc = 0) or the encode (enc = 1) on the fixture with work_bytes
 * = the query + delta; on error, U and V must be untouched and the report a refusal (issue 33). */
static void fx_expect(fixture *f, int enc, long delta, uint32_t want, const char *what)
{
    double s0[64], s1[64], sv[64];
    mvnmf_report srep;
    size_t wb = (size_t)((long)(enc ? f->wb_enc : f->wb_fit) + delta);
    uint32_t st;
    set_ctx("%s: %s", enc ? "joint_nmf_encode" : "joint_nmf_fit", what);
    if (!f->keep) {
        if (enc) {
            fx_fill(f->ubuf0, 64, 0.5);
            fx_fill(f->ubuf1, 64, 0.5);
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
    if (enc)
        st = mvnmf_joint_nmf_encode(f->vp, f->nv, f->k, &f->prm, f->cup, f->v, f->work, wb, NULL, NULL, &f->rep);
    else
        st = mvnmf_joint_nmf_fit(f->vp, f->nv, f->k, &f->prm, f->up, f->v, f->work, wb, NULL, NULL, &f->rep);
    CHECK_STATUS(st, want);
    if (want != MVNMF_STATUS_OK)
        CHECK(memcmp(s0, f->ubuf0, sizeof s0) == 0 && memcmp(s1, f->ubuf1, sizeof s1) == 0 &&
              memcmp(sv, f->vbuf, sizeof sv) == 0 && refused_at(&f->rep, UINT32_MAX));
    else
        CHECK(f->rep.iterations >= 1 && all_in(f->vbuf, 10, 0.0, INFINITY));
}

/* Both the fit and the encode. */
static void fx_both(fixture *f, uint32_t want, const char *what)
{
    fx_expect(f, 0, 0, want, what);
    fx_expect(f, 1, 0, want, what);
}

static void test_errors(void)
{
    fixture f;
    const size_t huge = SIZE_MAX / 2;
    static const size_t bad_cp[][6] = { { 1, 2, 3, 3, 5, 6 }, { 0, 2, 1, 3, 5, 6 } };
    static const size_t bad_ri[][6] = { { 0, 4, 1, 0, 2, 3 }, { 0, 0, 1, 0, 2, 3 }, { 3, 0, 1, 0, 2, 3 } };
    static const char *const cp_what[] = { "col_ptr[0] != 0", "decreasing col_ptr" };
    static const char *const ri_what[] = { "row index >= rows", "repeated row index", "unsorted row indices" };
    size_t i;
    double bad[4];

    note("error classes (outputs untouched)");
    fx_init(&f);
    fx_both(&f, MVNMF_STATUS_OK, "the valid baseline call");

/* Breaks the valid call in one way; the fit and the encode must both refuse it. */
#define BROKEN(change, want, what) \
    do {                           \
        fx_reset(&f);              \
        change;                    \
        fx_both(&f, (want), what); \
    } while (0)
    BROKEN(f.vp = NULL, MVNMF_STATUS_NULL_POINTER, "views = NULL");
    BROKEN((f.up = NULL, f.cup = NULL), MVNMF_STATUS_NULL_POINTER, "u = NULL");
    BROKEN((f.u[1] = NULL, f.cu[1] = NULL), MVNMF_STATUS_NULL_POINTER, "u[1] = NULL");
    BROKEN(f.v = NULL, MVNMF_STATUS_NULL_POINTER, "v = NULL");
    BROKEN(f.work = NULL, MVNMF_STATUS_NULL_POINTER, "work = NULL");
    BROKEN(f.views[0].values = NULL, MVNMF_STATUS_NULL_POINTER, "dense values = NULL");
    BROKEN(f.views[1].col_ptr = NULL, MVNMF_STATUS_NULL_POINTER, "CSC col_ptr = NULL");
    BROKEN(f.views[1].row_idx = NULL, MVNMF_STATUS_NULL_POINTER, "CSC row_idx = NULL");
    BROKEN(f.views[1].values = NULL, MVNMF_STATUS_NULL_POINTER, "CSC values = NULL");
    BROKEN(f.views[0].rows = 0, MVNMF_STATUS_ZERO_DIMENSION, "dense rows = 0");
    BROKEN(f.views[1].rows = 0, MVNMF_STATUS_ZERO_DIMENSION, "CSC rows = 0");
    BROKEN(f.nv = 0, MVNMF_STATUS_ZERO_DIMENSION, "n_views = 0");
    /* col_ptr[0..5) alone is a valid 4x4 CSC matrix */
    BROKEN(f.views[1].cols = 4, MVNMF_STATUS_DIMENSION_MISMATCH, "views with 5 and 4 items");
    BROKEN((f.nv = 1, f.views[0].rows = f.views[0].col_stride = huge, f.views[0].cols = 3),
           MVNMF_STATUS_SIZE_OVERFLOW, "dense rows*cols overflows");
    /* rows*cols fits in size_t, the bytes do not */
    BROKEN((f.nv = 1, f.views[0].rows = f.views[0].col_stride = SIZE_MAX / 12, f.views[0].cols = 1),
           MVNMF_STATUS_SIZE_OVERFLOW, "dense view of more than SIZE_MAX/2 bytes");
    BROKEN(f.views[1].rows = huge, MVNMF_STATUS_SIZE_OVERFLOW, "CSC rows*cols overflows");
    BROKEN(f.k = huge, MVNMF_STATUS_SIZE_OVERFLOW, "rows*k overflows");
    BROKEN(f.views[0].col_stride = 5, MVNMF_STATUS_BUFFER_TOO_SHORT, "col_stride 5 < rows 6");
    BROKEN(f.k = 0, MVNMF_STATUS_BAD_RANK, "k = 0");
    BROKEN(f.prm.tol = -1e-9, MVNMF_STATUS_BAD_PARAMETER, "tol < 0");
    BROKEN(f.prm.tol = NAN, MVNMF_STATUS_BAD_PARAMETER, "tol NaN");
    BROKEN(f.prm.eps = -1e-300, MVNMF_STATUS_BAD_PARAMETER, "eps < 0");
    BROKEN(f.prm.eps = INFINITY, MVNMF_STATUS_BAD_PARAMETER, "eps = inf");
    BROKEN(f.prm.vmax = 0.0, MVNMF_STATUS_BAD_PARAMETER, "vmax = 0");
    BROKEN(f.prm.vmax = -1.0, MVNMF_STATUS_BAD_PARAMETER, "vmax < 0");
    BROKEN(f.prm.vmax = NAN, MVNMF_STATUS_BAD_PARAMETER, "vmax NaN");
    BROKEN(f.prm.init = 7, MVNMF_STATUS_BAD_PARAMETER, "init = 7");
    BROKEN(f.views[1].kind = 9, MVNMF_STATUS_BAD_PARAMETER, "view kind = 9");
    for (i = 0; i < 2; i++)
        BROKEN(memcpy(f.cp, bad_cp[i], sizeof f.cp), MVNMF_STATUS_MALFORMED_CSC, cp_what[i]);
    for (i = 0; i < 3; i++)
        BROKEN(memcpy(f.ri, bad_ri[i], sizeof f.ri), MVNMF_STATUS_MALFORMED_CSC, ri_what[i]);
    /* the padding rows between columns are not part of X */
    BROKEN(f.x0.a[6 + 2 * 7] = -1.0, MVNMF_STATUS_OK, "negative value in the dense view's padding");
    bad[0] = -1.0;
    bad[1] = NAN;
    bad[2] = INFINITY;
    bad[3] = -INFINITY;
    for (i = 0; i < 4; i++) {
        uint32_t want = i == 0 ? MVNMF_STATUS_NEGATIVE_INPUT : MVNMF_STATUS_NON_FINITE_INPUT;
        char what[64];
        snprintf(what, sizeof what, "dense X(3,4) = %g", bad[i]);
        BROKEN(f.x0.a[3 + 4 * 7] = bad[i], want, what);
        snprintf(what, sizeof what, "last CSC value = %g", bad[i]);
        BROKEN(f.cv[5] = bad[i], want, what);
    }
#undef BROKEN

    /* The workspace: exactly the query works, one byte less does not, at an
     * aligned and at a misaligned address. */
    for (i = 0; i < 2; i++) {
        fx_reset(&f);
        f.work = f.raw + i;
        fx_expect(&f, 0, -1, MVNMF_STATUS_WORKSPACE_TOO_SMALL, i ? "work+1, one byte short" : "one byte short");
        fx_expect(&f, 1, -1, MVNMF_STATUS_WORKSPACE_TOO_SMALL, i ? "work+1, one byte short" : "one byte short");
        fx_expect(&f, 0, 0, MVNMF_STATUS_OK, i ? "work+1, exact size" : "exact size");
        fx_expect(&f, 1, 0, MVNMF_STATUS_OK, i ? "work+1, exact size" : "exact size");
    }

    /* MVNMF_INIT_GIVEN: the start is validated like the data. */
    for (i = 0; i < 5; i++) {
        static const char *const what[] = { "valid given start", "given U(3,0) = -1", "given U(3,0) = NaN",
                                            "given V(0,2) = -0.5", "given V(0,2) = +inf" };
        static const uint32_t want[] = { MVNMF_STATUS_OK, MVNMF_STATUS_NEGATIVE_INPUT,
                                         MVNMF_STATUS_NON_FINITE_INPUT, MVNMF_STATUS_NEGATIVE_INPUT,
                                         MVNMF_STATUS_NON_FINITE_INPUT };
        int enc;
        for (enc = 0; enc < 2; enc++) {
            fx_reset(&f);
            f.prm.init = MVNMF_INIT_GIVEN;
            f.keep = 1;
            fx_fill(f.ubuf0, 64, 0.5);
            fx_fill(f.ubuf1, 64, 0.5);
            fx_fill(f.vbuf, 64, 0.5);
            if (i == 1 || i == 2)
                f.ubuf1[3] = i == 1 ? -1.0 : NAN;
            if (i == 3 || i == 4)
                f.vbuf[4] = i == 3 ? -0.5 : INFINITY;
            fx_expect(&f, enc, 0, want[i], what[i]);
        }
    }
    /* The encode reads U even with a random start. */
    fx_reset(&f);
    f.keep = 1;
    fx_fill(f.ubuf0, 64, 0.5);
    fx_fill(f.ubuf1, 64, 0.5);
    f.ubuf0[11] = -2.0;
    fx_expect(&f, 1, 0, MVNMF_STATUS_NEGATIVE_INPUT, "negative basis entry, random V start");

    /* One-view entry points. */
    fx_reset(&f);
    set_ctx("one-view entry points: NULL arguments");
    CHECK_STATUS(mvnmf_nmf_fit(NULL, 2, NULL, f.ubuf0, f.vbuf, f.raw, f.wb_fit, NULL, NULL, NULL),
                 MVNMF_STATUS_NULL_POINTER);
    CHECK_STATUS(mvnmf_nmf_fit(&f.views[0], 2, NULL, NULL, f.vbuf, f.raw, f.wb_fit, NULL, NULL, NULL),
                 MVNMF_STATUS_NULL_POINTER);
    CHECK_STATUS(mvnmf_nmf_encode(&f.views[0], 2, NULL, NULL, f.vbuf, f.raw, f.wb_enc, NULL, NULL, NULL),
                 MVNMF_STATUS_NULL_POINTER);
    CHECK_STATUS(mvnmf_nmf_encode(&f.views[0], 2, NULL, f.ubuf0, NULL, f.raw, f.wb_enc, NULL, NULL, NULL),
                 MVNMF_STATUS_NULL_POINTER);

    free(f.raw); hmat_free(&f.x0);
}

/* The workspace queries: every error class, `bytes` untouched on error; they
 * read only kind, rows and cols. */
static void test_queries(void)
{
    mvnmf_view views[2], nodata[2];
    mvnmf_nmf_params p = mvnmf_nmf_params_default(), badp = mvnmf_nmf_params_default();
    hmat a, b;
    int op;
    note("workspace queries");
    hmat_make(&a, 6, 5, 6, 1.0, 1.0, 1, 2);
    hmat_make(&b, 4, 5, 4, 0.5, 1.0, 3, 2);
    badp.eps = -1.0;
    for (op = OP_FIT; op <= OP_ENCODE1; op++) {
        size_t nv = op <= OP_ENCODE ? 2 : 1, bytes = 0, bytes2 = 0, k;
        const size_t sentinel = 12345;
        set_ctx("%s_workspace", OP_NAME[op]);
        views[0] = a.view;
        views[1] = b.view;
        CHECK_STATUS(query_ws(op, views, nv, 3, &p, &bytes), MVNMF_STATUS_OK);
        CHECK(bytes > 0);
        CHECK_STATUS(query_ws(op, views, nv, 3, NULL, &bytes2), MVNMF_STATUS_OK); /* NULL = defaults */
        CHECK(bytes2 == bytes);
        /* The query validates the descriptors as the call does (issue 31, E8):
         * a descriptor without its data is refused as the call refuses it. */
        memcpy(nodata, views, sizeof views);
        nodata[0].values = NULL;
        nodata[1].values = NULL;
        nodata[1].row_idx = NULL;
        bytes2 = 0;
        CHECK_STATUS(query_ws(op, nodata, nv, 3, &p, &bytes2), MVNMF_STATUS_NULL_POINTER);
        CHECK(bytes2 == 0);
        if (nv == 2 && nodata[1].kind == MVNMF_VIEW_CSC) {
            nodata[1].col_ptr = NULL;
            bytes2 = 0;
            CHECK_STATUS(query_ws(op, nodata, nv, 3, &p, &bytes2), MVNMF_STATUS_NULL_POINTER);
            CHECK(bytes2 == 0);
        }
        for (k = 1; k <= 8; k *= 2) { /* grows with K */
            CHECK_STATUS(query_ws(op, views, nv, k, &p, &bytes2), MVNMF_STATUS_OK);
            CHECK(k < 3 ? bytes2 <= bytes : bytes2 >= bytes);
        }
        CHECK_STATUS(query_ws(op, views, nv, 3, &p, NULL), MVNMF_STATUS_NULL_POINTER);
#define Q_EXPECT(vs, n, kk, pp, want)                                        \
    do {                                                                     \
        bytes = sentinel;                                                    \
        CHECK_STATUS(query_ws(op, (vs), (n), (kk), (pp), &bytes), (want));   \
        CHECK(bytes == sentinel);                                            \
    } while (0)
        Q_EXPECT(NULL, nv, 3, &p, MVNMF_STATUS_NULL_POINTER);
        if (nv == 2) {
            Q_EXPECT(views, 0, 3, &p, MVNMF_STATUS_ZERO_DIMENSION);
            views[0].cols = 4; /* fewer items than view 1 (its data has 5) */
            Q_EXPECT(views, 2, 3, &p, MVNMF_STATUS_DIMENSION_MISMATCH);
            views[0].cols = 5;
        }
        Q_EXPECT(views, nv, 0, &p, MVNMF_STATUS_BAD_RANK);
        Q_EXPECT(views, nv, SIZE_MAX / 4, &p, MVNMF_STATUS_SIZE_OVERFLOW);
        Q_EXPECT(views, nv, 3, &badp, MVNMF_STATUS_BAD_PARAMETER);
        views[0].kind = 9;
        Q_EXPECT(views, nv, 3, &p, MVNMF_STATUS_BAD_PARAMETER);
        views[0].kind = MVNMF_VIEW_DENSE;
        views[0].cols = 0;
        if (nv == 2)
            views[1].cols = 0;
        Q_EXPECT(views, nv, 3, &p, MVNMF_STATUS_ZERO_DIMENSION);
        views[0].cols = 5;
        views[1].cols = 5;
        views[0].rows = SIZE_MAX / 2; /* rows beyond the stride: the call's refusal */
        Q_EXPECT(views, nv, 3, &p, MVNMF_STATUS_BUFFER_TOO_SHORT);
        views[0].col_stride = SIZE_MAX / 2; /* a view beyond PTRDIFF_MAX bytes */
        Q_EXPECT(views, nv, 3, &p, MVNMF_STATUS_SIZE_OVERFLOW);
#undef Q_EXPECT
    }
    hmat_free(&a); hmat_free(&b);
}

/* ---- a standard two-view problem for the remaining tests ----------------- */

typedef struct {
    hmat x[2];
    mvnmf_view views[2];
    size_t k, n;
    double hx2;
} prob;

typedef struct {
    double *u[2];
    double *v;
} facs;

/* Dense 30x25 with stride 33, CSC 20x25 (with empty rows and columns), K = 3. */
static void prob_make(prob *q, uint64_t seed)
{
    hmat_make(&q->x[0], 30, 25, 33, 1.0, 1.0, seed, seed + 50);
    hmat_make(&q->x[1], 20, 25, 20, 0.3, 1.0, seed + 1, seed + 50);
    q->views[0] = q->x[0].view;
    q->views[1] = q->x[1].view;
    q->k = 3;
    q->n = 25;
    q->hx2 = half_sq(&q->x[0]) + half_sq(&q->x[1]);
}

static void prob_free(prob *q)
{
    hmat_free(&q->x[0]); hmat_free(&q->x[1]);
}

static void facs_alloc(facs *f, const prob *q)
{
    f->u[0] = dalloc(q->x[0].rows * q->k);
    f->u[1] = dalloc(q->x[1].rows * q->k);
    f->v = dalloc(q->k * q->n);
}

static void facs_free(facs *f)
{
    free(f->u[0]); free(f->u[1]); free(f->v);
}

static void facs_copy_u(facs *dst, const facs *src, const prob *q)
{
    memcpy(dst->u[0], src->u[0], q->x[0].rows * q->k * sizeof(double));
    memcpy(dst->u[1], src->u[1], q->x[1].rows * q->k * sizeof(double));
}

static int facs_same(const facs *a, const facs *b, const prob *q)
{
    return memcmp(a->u[0], b->u[0], q->x[0].rows * q->k * sizeof(double)) == 0 &&
           memcmp(a->u[1], b->u[1], q->x[1].rows * q->k * sizeof(double)) == 0 &&
           memcmp(a->v, b->v, q->k * q->n * sizeof(double)) == 0;
}

static double facs_rel(const facs *a, const facs *b, const prob *q)
{
    double r0 = rel_diff(a->u[0], b->u[0], q->x[0].rows * q->k);
    double r1 = rel_diff(a->u[1], b->u[1], q->x[1].rows * q->k);
    double r2 = rel_diff(a->v, b->v, q->k * q->n);
    return r0 > r1 ? (r0 > r2 ? r0 : r2) : (r1 > r2 ? r1 : r2);
}

/* ---- 4: cancellation ----------------------------------------------------- */

static void test_cancel(void)
{
    prob q;
    facs base, a, b;
    trace_t t, t2;
    mvnmf_report ra, rb;
    mvnmf_nmf_params p = mvnmf_nmf_params_default();
    int op, s;
    note("cancellation");
    prob_make(&q, 21);
    facs_alloc(&base, &q);
    facs_alloc(&a, &q);
    facs_alloc(&b, &q);
    set_ctx("cancel: bases for the encode");
    CHECK_STATUS(solve(OP_FIT, q.views, 2, q.k, &p, base.u, base.v, -1, &t, &ra), MVNMF_STATUS_OK);
    p.tol = 0.0;
    p.seed = 7;
    for (op = OP_FIT; op <= OP_ENCODE; op++) {
        for (s = 0; s < 2; s++) {
            long stop_at = s ? 0 : 3;
            set_ctx("%s, callback stops at iteration %ld", OP_NAME[op], stop_at);
            facs_copy_u(&a, &base, &q);
            facs_copy_u(&b, &base, &q);
            p.max_iter = 50;
            memset(&ra, 0xA5, sizeof ra);
            CHECK_STATUS(solve(op, q.views, 2, q.k, &p, a.u, a.v, stop_at, &t, &ra), MVNMF_STATUS_CANCELLED);
            CHECK(ra.stop == MVNMF_STOP_CANCELLED && ra.iterations == (uint32_t)stop_at);
            CHECK(t.n == (unsigned)stop_at + 1 && ra.objective.total == t.obj[stop_at]);
            p.max_iter = (uint32_t)stop_at;
            CHECK_STATUS(solve(op, q.views, 2, q.k, &p, b.u, b.v, -1, &t2, &rb), MVNMF_STATUS_OK);
            CHECK(rb.stop == MVNMF_STOP_MAX_ITER && rb.iterations == (uint32_t)stop_at);
            CHECK(facs_same(&a, &b, &q)); /* the iterate of max_iter = stop_at, bitwise */
            CHECK(memcmp(&ra.objective, &rb.objective, sizeof ra.objective) == 0);
        }
    }
    facs_free(&base); facs_free(&a); facs_free(&b); prob_free(&q);
}

/* ---- 5: determinism ------------------------------------------------------ */

static void test_determinism(void)
{
    prob q;
    facs base, a, b;
    trace_t t;
    mvnmf_report ra, rb;
    mvnmf_nmf_params p = mvnmf_nmf_params_default();
    int op;
    note("determinism");
    prob_make(&q, 31);
    facs_alloc(&base, &q);
    facs_alloc(&a, &q);
    facs_alloc(&b, &q);
    set_ctx("determinism: bases for the encode");
    CHECK_STATUS(solve(OP_FIT, q.views, 2, q.k, &p, base.u, base.v, -1, &t, &ra), MVNMF_STATUS_OK);
    p.max_iter = 30;
    p.tol = 0.0;
    for (op = OP_FIT; op <= OP_ENCODE; op++) {
        set_ctx("%s: same seed, same bits; another seed, other bits", OP_NAME[op]);
        facs_copy_u(&a, &base, &q);
        facs_copy_u(&b, &base, &q);
        p.seed = 11;
        CHECK_STATUS(solve(op, q.views, 2, q.k, &p, a.u, a.v, -1, &t, &ra), MVNMF_STATUS_OK);
        CHECK_STATUS(solve(op, q.views, 2, q.k, &p, b.u, b.v, -1, &t, &rb), MVNMF_STATUS_OK);
        CHECK(facs_same(&a, &b, &q) && same_report(&ra, &rb));
        p.seed = 12;
        CHECK_STATUS(solve(op, q.views, 2, q.k, &p, b.u, b.v, -1, &t, &rb), MVNMF_STATUS_OK);
        CHECK(memcmp(a.v, b.v, q.k * q.n * sizeof(double)) != 0);
        CHECK(ra.initial.total != rb.initial.total);
        if (op == OP_FIT)
            CHECK(memcmp(a.u[0], b.u[0], q.x[0].rows * q.k * sizeof(double)) != 0);
    }
    facs_free(&base); facs_free(&a); facs_free(&b); prob_free(&q);
}

/* ---- 6: warm start ------------------------------------------------------- */

static void test_warm_start(void)
{
    prob q;
    facs base, a, b;
    trace_t t, tc, tb;
    mvnmf_report ra, rc, rb;
    mvnmf_nmf_params p = mvnmf_nmf_params_default();
    int op;
    double rel;
    note("warm start");
    prob_make(&q, 41);
    facs_alloc(&base, &q);
    facs_alloc(&a, &q);
    facs_alloc(&b, &q);
    set_ctx("warm start: bases for the encode");
    CHECK_STATUS(solve(OP_FIT, q.views, 2, q.k, &p, base.u, base.v, -1, &t, &ra), MVNMF_STATUS_OK);
    p.tol = 0.0;
    p.seed = 13;
    for (op = OP_FIT; op <= OP_ENCODE; op++) {
        set_ctx("%s: 20 iterations + 20 warm-started = 40 iterations", OP_NAME[op]);
        facs_copy_u(&a, &base, &q);
        facs_copy_u(&b, &base, &q);
        p.init = MVNMF_INIT_RANDOM;
        p.max_iter = 20;
        CHECK_STATUS(solve(op, q.views, 2, q.k, &p, a.u, a.v, -1, &t, &ra), MVNMF_STATUS_OK);
        p.init = MVNMF_INIT_GIVEN;
        CHECK_STATUS(solve(op, q.views, 2, q.k, &p, a.u, a.v, -1, &tc, &rc), MVNMF_STATUS_OK);
        p.init = MVNMF_INIT_RANDOM;
        p.max_iter = 40;
        CHECK_STATUS(solve(op, q.views, 2, q.k, &p, b.u, b.v, -1, &tb, &rb), MVNMF_STATUS_OK);
        rel = facs_rel(&a, &b, &q);
        CHECK(rel <= 1e-12);
        CHECK(tb.n == 41 && tc.n == 21 && fabs(rc.initial.total - tb.obj[20]) <= 1e-12 * q.hx2);
        CHECK(fabs(rc.objective.total - rb.objective.total) <= 1e-12 * q.hx2);
        note("  %s: warm-started factors %s (max rel. difference %.1e)", OP_NAME[op],
             facs_same(&a, &b, &q) ? "bitwise equal" : "differ", rel);
    }
    facs_free(&base); facs_free(&a); facs_free(&b); prob_free(&q);
}

/* ---- 9: joint NMF = NMF of the stacked views; CSC = dense ------------------ */

static void test_identities(void)
{
    const size_t m1 = 30, m2 = 20, m = 50, n = 40, k = 4;
    hmat x[2], xs, xd;
    mvnmf_view views[2];
    double *u[2], *us[1], *ustack, *v, *vs, *ud[1], *vd;
    mvnmf_nmf_params p = mvnmf_nmf_params_default();
    mvnmf_report r, rs;
    trace_t t, ts;
    lcg_t g = lcg_seeded(99);
    size_t i, j, l;
    unsigned it;
    int ok = 1;

    note("identities: joint = stacked, CSC = dense");
    hmat_make(&x[0], m1, n, m1 + 3, 1.0, 1.0, 61, 62);
    hmat_make(&x[1], m2, n, m2, 1.0, 3.0, 63, 62);
    hmat_alloc(&xs, m, n, m);
    for (j = 0; j < n; j++)
        for (i = 0; i < m; i++)
            xs.a[i + j * m] = i < m1 ? x[0].a[i + j * x[0].ld] : x[1].a[i - m1 + j * x[1].ld];
    hmat_finish(&xs, 0);
    views[0] = x[0].view;
    views[1] = x[1].view;
    u[0] = dalloc(m1 * k);
    u[1] = dalloc(m2 * k);
    us[0] = dalloc(m * k);
    ustack = dalloc(m * k);
    v = dalloc(k * n);
    vs = dalloc(k * n);
    for (l = 0; l < k; l++) {
        for (i = 0; i < m; i++) {
            double e = 0.1 + lcg_next(&g);
            us[0][i + l * m] = e;
            if (i < m1)
                u[0][i + l * m1] = e;
            else
                u[1][i - m1 + l * m2] = e;
        }
    }
    for (i = 0; i < k * n; i++)
        v[i] = vs[i] = 0.1 + lcg_next(&g);

    p.init = MVNMF_INIT_GIVEN;
    p.max_iter = 60;
    p.tol = 0.0;
    set_ctx("joint fit of 2 views = nmf_fit of [X1; X2] from [U1; U2], V");
    CHECK_STATUS(solve(OP_FIT, views, 2, k, &p, u, v, -1, &t, &r), MVNMF_STATUS_OK);
    CHECK_STATUS(solve(OP_FIT1, &xs.view, 1, k, &p, us, vs, -1, &ts, &rs), MVNMF_STATUS_OK);
    for (l = 0; l < k; l++)
        for (i = 0; i < m; i++)
            ustack[i + l * m] = i < m1 ? u[0][i + l * m1] : u[1][i - m1 + l * m2];
    CHECK(rel_diff(ustack, us[0], m * k) <= 1e-10);
    CHECK(rel_diff(v, vs, k * n) <= 1e-10);
    CHECK(t.n == ts.n && t.n == 61);
    for (it = 0; it < t.n && it < ts.n; it++)
        ok &= fabs(t.obj[it] - ts.obj[it]) <= 1e-10 * (half_sq(&x[0]) + half_sq(&x[1]));
    CHECK(ok);
    note("  stacked: max rel. difference U %.1e, V %.1e", rel_diff(ustack, us[0], m * k), rel_diff(v, vs, k * n));

    /* The same matrix as CSC and as (strided) dense. */
    set_ctx("nmf_fit: the same matrix as CSC and as dense");
    hmat_free(&xs);
    hmat_make(&xs, 35, n, 35, 0.3, 1.0, 64, 65);
    hmat_alloc(&xd, 35, n, 38);
    for (j = 0; j < n; j++)
        for (i = 0; i < 35; i++)
            xd.a[i + j * 38] = xs.a[i + j * 35];
    hmat_finish(&xd, 0);
    ud[0] = dalloc(35 * k);
    vd = dalloc(k * n);
    free(us[0]);
    us[0] = dalloc(35 * k);
    p = mvnmf_nmf_params_default();
    p.max_iter = 60;
    p.tol = 0.0;
    p.seed = 5;
    CHECK_STATUS(solve(OP_FIT1, &xs.view, 1, k, &p, us, vs, -1, &ts, &rs), MVNMF_STATUS_OK);
    CHECK_STATUS(solve(OP_FIT1, &xd.view, 1, k, &p, ud, vd, -1, &t, &r), MVNMF_STATUS_OK);
    CHECK(rel_diff(us[0], ud[0], 35 * k) <= 1e-10 && rel_diff(vs, vd, k * n) <= 1e-10);
    CHECK(fabs(r.objective.total - rs.objective.total) <= 1e-10 * half_sq(&xs));

    free(u[0]); free(u[1]); free(us[0]); free(ustack); free(v); free(vs); free(ud[0]); free(vd);
    hmat_free(&x[0]); hmat_free(&x[1]); hmat_free(&xs); hmat_free(&xd);
}

/* ---- defaults, the convergence rule, edge cases ---------------------------- */

static void test_misc(void)
{
    prob q;
    facs a, b;
    trace_t t;
    mvnmf_report r, r2;
    mvnmf_nmf_params p = mvnmf_nmf_params_default(), d = mvnmf_nmf_params_default();
    double *uz[2], *vz, tols[2];
    hmat z[2];
    mvnmf_view zv[2];
    size_t nbytes = 0;
    unsigned it;
    int ti;
    unsigned char *raw;

    note("defaults, convergence rule, edge cases");
    set_ctx("mvnmf_nmf_params_default");
    CHECK(d.max_iter == 200 && d.tol == 1e-6 && d.eps > 0.0 && d.eps < 1e-15 && d.vmax > 1e308 &&
          d.seed == 0 && d.init == MVNMF_INIT_RANDOM);
    prob_make(&q, 71);
    facs_alloc(&a, &q);
    facs_alloc(&b, &q);

    /* params, progress and report may be NULL. */
    set_ctx("params = NULL means the defaults; progress and report may be NULL");
    CHECK_STATUS(query_ws(OP_FIT, q.views, 2, q.k, NULL, &nbytes), MVNMF_STATUS_OK);
    raw = (unsigned char *)malloc(nbytes);
    CHECK_STATUS(mvnmf_joint_nmf_fit(q.views, 2, q.k, NULL, a.u, a.v, raw, nbytes, NULL, NULL, NULL),
                 MVNMF_STATUS_OK);
    CHECK_STATUS(solve(OP_FIT, q.views, 2, q.k, &d, b.u, b.v, -1, &t, &r), MVNMF_STATUS_OK);
    CHECK(facs_same(&a, &b, &q));
    free(raw);

    /* Stop when the relative decrease is at most tol, and not before. */
    tols[0] = 1e-6;
    tols[1] = 1e-2;
    for (ti = 0; ti < 2; ti++) {
        set_ctx("convergence rule, tol = %g", tols[ti]);
        p = d;
        p.tol = tols[ti];
        CHECK_STATUS(solve(OP_FIT, q.views, 2, q.k, &p, a.u, a.v, -1, &t, &r), MVNMF_STATUS_OK);
        check_trace(&t, &r, q.hx2);
        for (it = 1; it < t.n && !t.bad; it++) {
            int small = t.obj[it - 1] - t.obj[it] <= p.tol * fabs(t.obj[it - 1]);
            if (it + 1 < t.n)
                CHECK(!small);
            else
                CHECK(small == (r.stop == MVNMF_STOP_CONVERGED));
        }
        CHECK(r.stop == MVNMF_STOP_CONVERGED || (r.stop == MVNMF_STOP_MAX_ITER && r.iterations == p.max_iter));
        note("  tol %g: stop %u after %u iterations", p.tol, (unsigned)r.stop, (unsigned)r.iterations);
    }
    set_ctx("tol = 1e-2 stops early");
    CHECK(r.stop == MVNMF_STOP_CONVERGED && r.iterations < 50);

    /* scikit-learn's rule: e = sqrt(2 f) checked at iterations 10, 20, ...; stop
     * when (e at the last check - e) / e_0 < tol. Recomputed from the trace. */
    set_ctx("stop_rule = MVNMF_STOP_RULE_SKLEARN");
    CHECK(d.stop_rule == MVNMF_STOP_RULE_EVERY_ITERATION);
    p = d;
    p.tol = 1e-3;
    p.max_iter = 500;
    p.stop_rule = MVNMF_STOP_RULE_SKLEARN;
    CHECK_STATUS(solve(OP_FIT, q.views, 2, q.k, &p, a.u, a.v, -1, &t, &r), MVNMF_STATUS_OK);
    check_trace(&t, &r, q.hx2);
    CHECK(r.stop == MVNMF_STOP_CONVERGED && r.iterations % 10 == 0 && t.n == r.iterations + 1);
    for (it = 10; it < t.n && !t.bad; it += 10) {
        double e0 = sqrt(2 * t.obj[0]), prev = sqrt(2 * t.obj[it - 10]), e = sqrt(2 * t.obj[it]);
        CHECK(((prev - e) / e0 < p.tol) == (it == r.iterations));
    }
    note("  sklearn rule, tol %g: stop after %u iterations", p.tol, (unsigned)r.iterations);
    set_ctx("an unknown stop_rule is refused, outputs untouched");
    nbytes = 0;
    CHECK_STATUS(query_ws(OP_FIT, q.views, 2, q.k, &p, &nbytes), MVNMF_STATUS_OK);
    raw = (unsigned char *)malloc(nbytes);
    p.stop_rule = 2;
    facs_copy_u(&b, &a, &q);
    CHECK_STATUS(query_ws(OP_FIT, q.views, 2, q.k, &p, &nbytes), MVNMF_STATUS_BAD_PARAMETER);
    CHECK_STATUS(mvnmf_joint_nmf_fit(q.views, 2, q.k, &p, a.u, a.v, raw, nbytes, NULL, NULL, NULL),
                 MVNMF_STATUS_BAD_PARAMETER);
    CHECK(memcmp(a.u[0], b.u[0], q.x[0].rows * q.k * sizeof(double)) == 0);
    free(raw);

    /* max_iter = 0 evaluates the start only; a given V is clipped to vmax. */
    set_ctx("max_iter = 0, given start with V above vmax");
    p = d;
    p.max_iter = 0;
    p.init = MVNMF_INIT_GIVEN;
    p.vmax = 1.0;
    fx_fill(a.u[0], q.x[0].rows * q.k, 0.5);
    fx_fill(a.u[1], q.x[1].rows * q.k, 0.5);
    fx_fill(a.v, q.k * q.n, 5.0);
    facs_copy_u(&b, &a, &q);
    CHECK_STATUS(solve(OP_FIT, q.views, 2, q.k, &p, a.u, a.v, -1, &t, &r), MVNMF_STATUS_OK);
    CHECK(r.iterations == 0 && r.stop == MVNMF_STOP_MAX_ITER && t.n == 1);
    CHECK(memcmp(&r.initial, &r.objective, sizeof r.initial) == 0);
    CHECK(all_in(a.v, q.k * q.n, 1.0, 1.0));
    CHECK(memcmp(a.u[0], b.u[0], q.x[0].rows * q.k * sizeof(double)) == 0);

    /* An all-zero view: its basis dies (dead_views = 1), nothing turns NaN. */
    set_ctx("joint fit with an all-zero second view");
    hmat_make(&z[0], 12, 10, 12, 1.0, 1.0, 81, 82);
    hmat_make(&z[1], 6, 10, 6, 1.0, 0.0, 83, 82);
    zv[0] = z[0].view;
    zv[1] = z[1].view;
    uz[0] = dalloc(12 * 2);
    uz[1] = dalloc(6 * 2);
    vz = dalloc(2 * 10);
    p = d;
    p.tol = 0.0;
    p.max_iter = 30;
    CHECK_STATUS(solve(OP_FIT, zv, 2, 2, &p, uz, vz, -1, &t, &r), MVNMF_STATUS_OK);
    check_trace(&t, &r, half_sq(&z[0]));
    CHECK(r.dead_views == 1 && all_in(uz[1], 6 * 2, 0.0, 0.0));
    CHECK(all_in(uz[0], 12 * 2, 0.0, INFINITY) && all_in(vz, 2 * 10, 0.0, INFINITY));
    set_ctx("nmf_fit of an all-zero matrix");
    CHECK_STATUS(solve(OP_FIT1, &zv[1], 1, 2, &p, &uz[1], vz, -1, &t, &r), MVNMF_STATUS_OK);
    CHECK(r.objective.total == 0.0 && r.dead_views == 1 && all_in(vz, 2 * 10, 0.0, INFINITY));

    /* eps = 0 is allowed (documented: any eps >= 0 keeps the updates monotone):
     * fine on positive data. */
    set_ctx("eps = 0 on positive dense data");
    p = d;
    p.eps = 0.0;
    p.tol = 0.0;
    p.max_iter = 30;
    CHECK_STATUS(solve(OP_FIT1, zv, 1, 2, &p, uz, vz, -1, &t, &r2), MVNMF_STATUS_OK);
    check_trace(&t, &r2, half_sq(&z[0]));
    CHECK(all_in(uz[0], 12 * 2, 0.0, INFINITY) && all_in(vz, 2 * 10, 0.0, INFINITY));
    /* Regression: with eps = 0 an all-zero row or column of X makes its row of
     * U (column of V) exactly 0 after one iteration; the next update used to
     * compute 0 * (0 + 0) / (0 + 0) = NaN and still return OK. */
    set_ctx("eps = 0 on CSC data with empty rows and columns");
    CHECK_STATUS(solve(OP_FIT, q.views, 2, q.k, &p, a.u, a.v, -1, &t, &r2), MVNMF_STATUS_OK);
    CHECK(all_in(a.u[0], q.x[0].rows * q.k, 0.0, INFINITY) && all_in(a.u[1], q.x[1].rows * q.k, 0.0, INFINITY));
    CHECK(all_in(a.v, q.k * q.n, 0.0, INFINITY));
    check_trace(&t, &r2, q.hx2);

    free(uz[0]); free(uz[1]); free(vz); hmat_free(&z[0]); hmat_free(&z[1]); facs_free(&a);
    facs_free(&b); prob_free(&q);
}

/* ---- 7: messages and version --------------------------------------------- */

static void test_messages(void)
{
    static const uint32_t unknown[] = { 18, 19, 1000, 0xFFFFFFFFu };
    const char *msg[18], *ver = mvnmf_version();
    uint32_t c, d;
    size_t i;
    note("status messages, version");
    set_ctx("mvnmf_status_message");
    for (c = 0; c < 18; c++) {
        msg[c] = mvnmf_status_message(c);
        CHECK(msg[c] != NULL && msg[c][0] != '\0');
    }
    for (c = 0; c < 18; c++)
        for (d = c + 1; d < 18; d++)
            CHECK(msg[c] == NULL || msg[d] == NULL || strcmp(msg[c], msg[d]) != 0);
    for (i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *m = mvnmf_status_message(unknown[i]);
        CHECK(m != NULL && m[0] != '\0');
        for (c = 0; c < 18 && m != NULL; c++)
            CHECK(msg[c] == NULL || strcmp(m, msg[c]) != 0);
    }
    set_ctx("mvnmf_version");
    CHECK(ver != NULL && ver[0] >= '0' && ver[0] <= '9' && strchr(ver, '.') != NULL);
    note("  mvnmf %s", ver != NULL ? ver : "(null)");
}

/* Per-view preprocessing: the shift sets each negative feature's minimum to 0
 * and leaves the others, the scaling gives ||X||_F^2 = N; bad input leaves the
 * view untouched. */
static void test_prepare_view(void)
{
    /* 2 x 3, column-major: row 0 nonnegative, row 1 with minimum -3. */
    const double raw[6] = { 1.0, -3.0, 2.0, 0.0, 4.0, 1.0 };
    double x[6], ss = 0;
    mvnmf_prep_params p = mvnmf_prep_params_default();
    mvnmf_prep_report r;
    size_t t;
    CHECK(p.shift == 0 && p.normalize == 1);
    memcpy(x, raw, sizeof x);
    set_ctx("prepare_view: negative values without shift");
    r.shifted = 77;
    CHECK_STATUS(mvnmf_prepare_view(2, 3, x, NULL, &r), MVNMF_STATUS_NEGATIVE_INPUT);
    CHECK(memcmp(x, raw, sizeof x) == 0 && r.shifted == 77);
    x[4] = NAN;
    p.shift = 1;
    set_ctx("prepare_view: NaN");
    CHECK_STATUS(mvnmf_prepare_view(2, 3, x, &p, &r), MVNMF_STATUS_NON_FINITE_INPUT);
    CHECK(isnan(x[4]) && x[1] == -3.0);
    memcpy(x, raw, sizeof x);
    set_ctx("prepare_view: NULL view");
    CHECK_STATUS(mvnmf_prepare_view(2, 3, NULL, &p, &r), MVNMF_STATUS_NULL_POINTER);
    set_ctx("prepare_view: zero rows");
    CHECK_STATUS(mvnmf_prepare_view(0, 3, x, &p, &r), MVNMF_STATUS_ZERO_DIMENSION);
    p.normalize = 0;
    set_ctx("prepare_view: shift only");
    CHECK_STATUS(mvnmf_prepare_view(2, 3, x, &p, &r), MVNMF_STATUS_OK);
    CHECK(r.min == -3.0 && r.shifted == 1 && r.scale == 1.0);
    CHECK(x[0] == 1.0 && x[2] == 2.0 && x[4] == 4.0);
    CHECK(x[1] == 0.0 && x[3] == 3.0 && x[5] == 4.0);
    p.normalize = 1;
    set_ctx("prepare_view: scale");
    CHECK_STATUS(mvnmf_prepare_view(2, 3, x, &p, &r), MVNMF_STATUS_OK);
    CHECK(r.min == 0.0 && r.shifted == 0 && r.scale > 0);
    for (t = 0; t < 6; t++)
        ss += x[t] * x[t];
    CHECK(fabs(ss - 3.0) < 1e-12);
    set_ctx("%s", "");
}

/* The single-precision twins: a float copy of the harness's views (one
 * dense with padding rows, one CSC) through mvnmf_joint_nmf_fit_f32 and
 * mvnmf_joint_nmf_encode_f32: the objective never rises (beyond float
 * rounding), it ends within 1e-4 of the double fit from the same start, the
 * workspace is smaller, and bad input gets its status with outputs untouched. */
static int trace_f32_cb(const mvnmf_progress *pr, void *user)
{
    trace_t *t = (trace_t *)user;
    if (t->n < MAX_TRACE)
        t->obj[t->n++] = pr->objective.total;
    return 0;
}

/* n floats (zero); n is bounded by the harness's small problems. */
static float *falloc(size_t n)
{
    float *p;
    if (n > ((size_t)1 << 30)) {
        printf("[%s] falloc: %zu floats\n", LANG, n);
        exit(1);
    }
    p = (float *)calloc(n + 1, sizeof(float));
    if (p == NULL) {
        printf("[%s] out of memory\n", LANG);
        exit(1);
    }
    return p;
}

static void test_f32(void)
{
    prob q;
    facs a;
    trace_t t;
    mvnmf_report r64, r32;
    mvnmf_nmf_params p = mvnmf_nmf_params_default();
    mvnmf_view_f32 fv[2];
    float *xf[2], *uf[2], *vf;
    double *u0[2], *v0;
    size_t b64 = 0, b32 = 0, i, t2, len;
    unsigned char *raw;
    unsigned it;

    note("single precision (_f32)");
    prob_make(&q, 91);
    facs_alloc(&a, &q);
    for (i = 0; i < 2; i++) {
        const hmat *x = &q.x[i];
        len = x->view.kind == MVNMF_VIEW_DENSE ? x->ld * x->cols : x->nnz;
        xf[i] = falloc(len);
        for (t2 = 0; t2 < len; t2++)
            xf[i][t2] = (float)(x->view.kind == MVNMF_VIEW_DENSE ? x->a[t2] : x->nz[t2]);
        fv[i].kind = x->view.kind;
        fv[i].rows = x->view.rows;
        fv[i].cols = x->view.cols;
        fv[i].values = xf[i];
        fv[i].col_stride = x->view.col_stride;
        fv[i].col_ptr = x->view.col_ptr;
        fv[i].row_idx = x->view.row_idx;
        u0[i] = dalloc(x->rows * q.k);
        uf[i] = falloc(x->rows * q.k);
        for (t2 = 0; t2 < x->rows * q.k; t2++)
            u0[i][t2] = 0.1 + (double)((t2 * 37 + i) % 11) / 11.0;
    }
    v0 = dalloc(q.k * q.n);
    vf = falloc(q.k * q.n);
    for (t2 = 0; t2 < q.k * q.n; t2++)
        v0[t2] = 0.1 + (double)((t2 * 29) % 13) / 13.0;
    p.max_iter = 60;
    p.tol = 0.0;
    p.init = MVNMF_INIT_GIVEN;

    set_ctx("f32: workspace");
    CHECK_STATUS(mvnmf_joint_nmf_fit_workspace(q.views, 2, q.k, &p, &b64), MVNMF_STATUS_OK);
    CHECK_STATUS(mvnmf_joint_nmf_fit_f32_workspace(fv, 2, q.k, &p, &b32), MVNMF_STATUS_OK);
    CHECK(b32 > 0 && b32 < b64);
    CHECK(mvnmf_struct_size(MVNMF_STRUCT_VIEW_F32) == sizeof(mvnmf_view_f32));

    set_ctx("f32: joint fit against the double fit from the same start");
    for (i = 0; i < 2; i++)
        memcpy(a.u[i], u0[i], q.x[i].rows * q.k * sizeof(double));
    memcpy(a.v, v0, q.k * q.n * sizeof(double));
    raw = (unsigned char *)malloc(b64);
    CHECK_STATUS(mvnmf_joint_nmf_fit(q.views, 2, q.k, &p, a.u, a.v, raw, b64, NULL, NULL, &r64), MVNMF_STATUS_OK);
    for (i = 0; i < 2; i++)
        for (t2 = 0; t2 < q.x[i].rows * q.k; t2++)
            uf[i][t2] = (float)u0[i][t2];
    for (t2 = 0; t2 < q.k * q.n; t2++)
        vf[t2] = (float)v0[t2];
    trace_reset(&t, -1);
    CHECK_STATUS(mvnmf_joint_nmf_fit_f32(fv, 2, q.k, &p, uf, vf, raw, b32, trace_f32_cb, &t, &r32), MVNMF_STATUS_OK);
    CHECK(r32.iterations == 60 && t.n == 61);
    for (it = 1; it < t.n; it++)
        CHECK(t.obj[it] <= t.obj[it - 1] + 1e-5 * t.obj[0]);
    CHECK(fabs(r32.objective.total - r64.objective.total) <= 1e-4 * r64.objective.total);
    note("  f64 objective %.9g, f32 %.9g", r64.objective.total, r32.objective.total);

    set_ctx("f32: encode of the same items");
    {
        const float *cu[2];
        float *ve = falloc(q.k * q.n);
        size_t be = 0;
        cu[0] = uf[0];
        cu[1] = uf[1];
        p.max_iter = 100;
        CHECK_STATUS(mvnmf_joint_nmf_encode_f32_workspace(fv, 2, q.k, &p, &be), MVNMF_STATUS_OK);
        free(raw);
        raw = (unsigned char *)malloc(be);
        CHECK_STATUS(mvnmf_joint_nmf_encode_f32(fv, 2, q.k, &p, cu, ve, raw, be, NULL, NULL, NULL), MVNMF_STATUS_OK);
        for (t2 = 0; t2 < q.k * q.n; t2++)
            CHECK(ve[t2] >= 0.0f && ve[t2] == ve[t2]);
        free(ve);
    }

    set_ctx("f32: bad input, outputs untouched");
    xf[0][0] = -1.0f;
    for (t2 = 0; t2 < q.k * q.n; t2++)
        vf[t2] = 0.5f;
    free(raw);
    raw = (unsigned char *)malloc(b32);
    CHECK_STATUS(mvnmf_joint_nmf_fit_f32(fv, 2, q.k, &p, uf, vf, raw, b32, NULL, NULL, NULL),
                 MVNMF_STATUS_NEGATIVE_INPUT);
    CHECK_STATUS(mvnmf_joint_nmf_fit_f32(NULL, 2, q.k, &p, uf, vf, raw, b32, NULL, NULL, NULL),
                 MVNMF_STATUS_NULL_POINTER);
    for (t2 = 0; t2 < q.k * q.n; t2++)
        CHECK(vf[t2] == 0.5f);
    free(raw);
    for (i = 0; i < 2; i++) {
        free(xf[i]);
        free(uf[i]);
        free(u0[i]);
    }
    free(vf);
    free(v0);
    facs_free(&a);
    prob_free(&q);
    set_ctx("%s", "");
}

int HARNESS_ENTRY(int verbose)
{
    g_failures = 0;
    g_verbose = verbose;
    g_runs = 0;
    test_messages();
    test_monotone();
    test_errors();
    test_queries();
    test_cancel();
    test_determinism();
    test_warm_start();
    test_identities();
    test_misc();
    test_prepare_view();
    test_f32();
    if (verbose || g_failures)
        printf("[%s] mvnmf C ABI harness: %d failed checks\n", LANG, g_failures);
    fflush(stdout);
    return g_failures;
}
