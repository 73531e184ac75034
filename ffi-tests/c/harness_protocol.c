/* C test harness of the evaluation protocol of the mvnmf C ABI:
 * mvnmf_cross_validate, mvnmf_evaluate_protocol, mvnmf_evaluate_split,
 * mvnmf_summarize_scores and mvnmf_mean_std.
 *
 * Built like the other harnesses (ffi-tests/build.rs): twice, as C99 and as
 * C++11, with -Wall -Wextra -Wpedantic -Werror; `static` on everything but the
 * entry point HARNESS_PROTOCOL_ENTRY, which returns the number of failed checks.
 *
 *   1. cross-validation: the fit callback never sees a hidden label (the
 *      held-out fold's and the originally unlabeled items'); the held-out folds
 *      partition the labeled items, are stratified by class and balanced; the
 *      clearly right candidate wins; ties go to the lowest index;
 *   2. the protocol: the fit sees exactly the stratified split's labeled
 *      classes; its scores equal mvnmf_evaluate_split on mvnmf_stratified_split
 *      called here with the split's seed; an encoding written at the first
 *      fraction only stands for the others; mvnmf_summarize_scores and
 *      mvnmf_mean_std agree with sums computed here;
 *   3. errors: NULL callback / pointers, bad folds and fractions, a workspace
 *      one byte short, a callback that returns nonzero (MVNMF_STATUS_CANCELLED):
 *      each gives its status and leaves the outputs untouched; the workspace
 *      works at an odd address.
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
int HARNESS_PROTOCOL_ENTRY(int verbose);
#ifdef __cplusplus
}
#endif

#include "harness_common.h"

#define N 90  /* items */
#define C 3   /* classes */
#define D 4   /* features = rank of the encodings */
#define UNL MVNMF_UNLABELED

static void *xalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL) {
        printf("[%s] out of memory\n", LANG);
        exit(1);
    }
    memset(p, 0, bytes);
    return p;
}

/* The test problem: shuffled classes, features = class template + noise. */
typedef struct {
    uint32_t truth[N], labels[N]; /* labels: every third item unlabeled */
    double x[D * N], noise[D * N];
} problem;

static void problem_make(problem *p)
{
    lcg_t g = lcg_seeded(21);
    double templ[D * C];
    size_t i, j;
    for (i = 0; i < D * C; i++)
        templ[i] = 4.0 * lcg_next(&g);
    for (j = 0; j < N; j++) {
        p->truth[j] = (uint32_t)((j * 7 + j / 5) % C);
        p->labels[j] = j % 3 == 2 ? UNL : p->truth[j];
        for (i = 0; i < D; i++) {
            p->x[i + j * D] = templ[i + p->truth[j] * D] + 0.3 * lcg_next(&g);
            p->noise[i + j * D] = 10.0 * lcg_next(&g);
        }
    }
}

/* ---- 1. cross-validation ------------------------------------------------- */

typedef struct {
    const problem *p;
    unsigned calls, leaks, cancel_at; /* cancel_at: return 1 at this call (0: never) */
    int held[N];                      /* candidate 0: the fold that hid item j, -1 */
    int held_twice;
} cv_user;

/* Encoding = w X + (1 - w) noise, w the candidate's value; records what it saw. */
static int cv_fit(const mvnmf_cv_fit *f, double *v, void *user)
{
    cv_user *u = (cv_user *)user;
    size_t j, t;
    double w = f->n_params ? f->params[0] : 1.0;
    u->calls++;
    if (u->cancel_at && u->calls == u->cancel_at)
        return 1;
    for (j = 0; j < f->n; j++) {
        uint32_t orig = u->p->labels[j], seen = f->labels[j];
        if (seen != UNL && seen != orig)
            u->leaks++; /* an unlabeled item's class, or a wrong one */
        if (f->candidate == 0 && orig != UNL && seen == UNL) {
            u->held_twice += u->held[j] >= 0;
            u->held[j] = (int)f->fold;
        }
    }
    for (t = 0; t < f->k * f->n; t++)
        v[t] = w * u->p->x[t] + (1.0 - w) * u->p->noise[t];
    return 0;
}

static void test_cross_validate(const problem *p)
{
    const double grid[4] = { 0.0, 0.05, 1.0, 0.1 };
    mvnmf_cv_params cp = mvnmf_cv_params_default();
    cv_user u;
    size_t bytes = 0, best = 777, j, f, cl;
    double scores[4];
    unsigned char *raw;
    CHECK(cp.folds == 3 && cp.knn.k == 9);
    cp.folds = 4;
    cp.seed = 5;
    CHECK_STATUS(mvnmf_cross_validate_workspace(D, N, C, 4, &cp, &bytes), MVNMF_STATUS_OK);
    raw = (unsigned char *)xalloc(bytes + 1);
    memset(&u, 0, sizeof u);
    u.p = p;
    for (j = 0; j < N; j++)
        u.held[j] = -1;
    set_ctx("cross_validate 4 candidates, 4 folds, odd workspace address");
    CHECK_STATUS(mvnmf_cross_validate(p->labels, N, C, D, grid, 4, 1, &cp, scores, &best, raw + 1, bytes,
                                      cv_fit, &u),
                 MVNMF_STATUS_OK);
    CHECK(u.calls == 4 * 4);
    CHECK(u.leaks == 0);
    CHECK(u.held_twice == 0);
    CHECK(best == 2);
    CHECK(scores[2] > 0.95 && scores[0] < 0.6);
    /* The folds partition the labeled items, balanced and stratified: a
     * class's (and the folds') counts differ by at most one between folds. */
    {
        size_t size[4] = { 0, 0, 0, 0 }, per[4][C], lo = N, hi = 0;
        memset(per, 0, sizeof per);
        for (j = 0; j < N; j++) {
            if (p->labels[j] == UNL)
                CHECK(u.held[j] == -1);
            else if (u.held[j] >= 0 && u.held[j] < 4) {
                size[u.held[j]]++;
                per[u.held[j]][p->labels[j]]++;
            }
        }
        for (f = 0; f < 4; f++) {
            lo = size[f] < lo ? size[f] : lo;
            hi = size[f] > hi ? size[f] : hi;
        }
        CHECK(lo > 0 && hi - lo <= 1);
        for (cl = 0; cl < C; cl++) {
            lo = N;
            hi = 0;
            for (f = 0; f < 4; f++) {
                lo = per[f][cl] < lo ? per[f][cl] : lo;
                hi = per[f][cl] > hi ? per[f][cl] : hi;
            }
            CHECK(hi - lo <= 1);
        }
    }
    for (j = 0; j < N; j++)
        CHECK(p->labels[j] == UNL || u.held[j] >= 0);

    /* The same encoding for every candidate: a tie, the lowest index wins. */
    {
        const double same[3] = { 1.0, 1.0, 1.0 };
        CHECK_STATUS(mvnmf_cross_validate(p->labels, N, C, D, same, 3, 1, &cp, scores, &best, raw + 1, bytes,
                                          cv_fit, &u),
                     MVNMF_STATUS_OK);
        CHECK(best == 0 && scores[0] == scores[1] && scores[1] == scores[2]);
    }

    /* Errors: status, outputs untouched. */
    {
        double s0[4] = { -1, -1, -1, -1 };
        size_t b0 = 12345;
        mvnmf_cv_params bad = cp;
#define CV_EXPECT(call, want, what)                                                                  \
    do {                                                                                             \
        set_ctx("cross_validate: %s", what);                                                         \
        CHECK_STATUS(call, want);                                                                    \
        CHECK(s0[0] == -1 && s0[1] == -1 && s0[2] == -1 && s0[3] == -1 && b0 == 12345);              \
    } while (0)
        CV_EXPECT(mvnmf_cross_validate(p->labels, N, C, D, grid, 4, 1, &cp, s0, &b0, raw, bytes - 1, cv_fit, &u),
                  MVNMF_STATUS_WORKSPACE_TOO_SMALL, "workspace one byte short");
        CV_EXPECT(mvnmf_cross_validate(p->labels, N, C, D, grid, 4, 1, &cp, s0, &b0, raw, bytes, NULL, &u),
                  MVNMF_STATUS_NULL_POINTER, "NULL callback");
        CV_EXPECT(mvnmf_cross_validate(NULL, N, C, D, grid, 4, 1, &cp, s0, &b0, raw, bytes, cv_fit, &u),
                  MVNMF_STATUS_NULL_POINTER, "NULL labels");
        CV_EXPECT(mvnmf_cross_validate(p->labels, N, C, D, grid, 4, 1, &cp, s0, NULL, raw, bytes, cv_fit, &u),
                  MVNMF_STATUS_NULL_POINTER, "NULL best");
        bad.folds = 1;
        CV_EXPECT(mvnmf_cross_validate(p->labels, N, C, D, grid, 4, 1, &bad, s0, &b0, raw, bytes, cv_fit, &u),
                  MVNMF_STATUS_BAD_PARAMETER, "one fold");
        CV_EXPECT(mvnmf_cross_validate(p->labels, N, 2, D, grid, 4, 1, &cp, s0, &b0, raw, bytes, cv_fit, &u),
                  MVNMF_STATUS_BAD_LABEL, "class 2 of 2");
        bad = cp;
        bad.folds = 61;
        CHECK_STATUS(mvnmf_cross_validate_workspace(D, N, C, 4, &bad, &bytes), MVNMF_STATUS_OK);
        CV_EXPECT(mvnmf_cross_validate(p->labels, N, C, D, grid, 4, 1, &bad, s0, &b0, raw, bytes, cv_fit, &u),
                  MVNMF_STATUS_TOO_FEW_LABELED, "61 folds, 60 labeled");
        u.calls = 0;
        u.cancel_at = 6; /* candidate 1, fold 1 */
        CV_EXPECT(mvnmf_cross_validate(p->labels, N, C, D, grid, 4, 1, &cp, s0, &b0, raw, bytes, cv_fit, &u),
                  MVNMF_STATUS_CANCELLED, "callback returns 1");
        CHECK(u.calls == 6);
        CHECK_STATUS(mvnmf_cross_validate_workspace(D, N, C, 4, &cp, NULL), MVNMF_STATUS_NULL_POINTER);
#undef CV_EXPECT
    }
    free(raw);
}

/* ---- 2. the protocol ----------------------------------------------------- */

typedef struct {
    const problem *p;
    const double *fractions;
    unsigned calls, bad, cancel_at;
} proto_user;

/* Checks what the protocol shows; writes X * (1 + split) at fraction 0 only. */
static int proto_fit(const mvnmf_protocol_fit *r, double *v, void *user)
{
    proto_user *u = (proto_user *)user;
    size_t j, t, cl, count[C] = { 0, 0, 0 }, all[C] = { 0, 0, 0 };
    u->calls++;
    if (u->cancel_at && u->calls == u->cancel_at)
        return 7;
    u->bad += r->fraction != u->fractions[r->fraction_index] || r->seed != 100 + r->split || r->k != D;
    for (j = 0; j < r->n; j++) {
        all[u->p->truth[j]]++;
        if (r->labeled[j] > 1 || (r->labeled[j] == 1) != (r->labels[j] != UNL))
            u->bad++;
        if (r->labels[j] != UNL) {
            u->bad += r->labels[j] != u->p->truth[j];
            count[r->labels[j]]++;
        }
    }
    for (cl = 0; cl < C; cl++) /* round(fraction n_c) per class */
        u->bad += count[cl] != (size_t)floor(r->fraction * (double)all[cl] + 0.5);
    if (r->fraction_index == 0)
        for (t = 0; t < r->k * r->n; t++)
            v[t] = u->p->x[t] * (1.0 + (double)r->split);
    return 0;
}

static void test_protocol(const problem *p)
{
    const double fractions[2] = { 0.2, 0.5 };
    enum { S = 3, F = 2 };
    mvnmf_protocol_params pp = mvnmf_protocol_params_default();
    mvnmf_split_scores scores[S * F], direct;
    mvnmf_score_summary sum[F];
    proto_user u;
    size_t bytes = 0, eb = 0, sb = 0, s, f, j, t;
    unsigned char *raw, *ew, *sw;
    uint8_t mask[N];
    double *v = (double *)xalloc(D * N * sizeof(double));
    CHECK(pp.splits == 5 && pp.eval.knn.k == 9 && pp.eval.nmi == MVNMF_NMI_MAX);
    pp.splits = S;
    pp.seed = 100;
    pp.eval.knn.k = 5;
    CHECK_STATUS(mvnmf_evaluate_protocol_workspace(D, N, C, F, &pp, &bytes), MVNMF_STATUS_OK);
    raw = (unsigned char *)xalloc(bytes + 1);
    memset(&u, 0, sizeof u);
    u.p = p;
    u.fractions = fractions;
    set_ctx("evaluate_protocol 3 splits x 2 fractions");
    CHECK_STATUS(mvnmf_evaluate_protocol(p->truth, N, C, fractions, F, D, &pp, scores, raw + 1, bytes, proto_fit, &u),
                 MVNMF_STATUS_OK);
    CHECK(u.calls == S * F);
    CHECK(u.bad == 0);
    /* Each score is mvnmf_evaluate_split on the split drawn here. */
    CHECK_STATUS(mvnmf_stratified_split_workspace(N, &sb), MVNMF_STATUS_OK);
    sw = (unsigned char *)xalloc(sb);
    for (s = 0; s < S; s++) {
        mvnmf_eval_params e = pp.eval;
        e.kmeans.seed = 100 + s;
        CHECK_STATUS(mvnmf_evaluate_split_workspace(D, N, C, &e, &eb), MVNMF_STATUS_OK);
        ew = (unsigned char *)xalloc(eb);
        for (t = 0; t < D * N; t++)
            v[t] = p->x[t] * (1.0 + (double)s);
        for (f = 0; f < F; f++) {
            set_ctx("protocol split %u fraction %g against evaluate_split", (unsigned)s, fractions[f]);
            CHECK_STATUS(mvnmf_stratified_split(p->truth, N, C, fractions[f], 100 + s, mask, sw, sb), MVNMF_STATUS_OK);
            CHECK_STATUS(mvnmf_evaluate_split(v, D, N, p->truth, C, mask, &e, &direct, ew, eb), MVNMF_STATUS_OK);
            CHECK(memcmp(&direct, &scores[f * S + s], sizeof direct) == 0);
            CHECK(direct.knn_k == 5 && direct.knn_accuracy > 0.9);
        }
        free(ew);
    }
    /* Mean ± std against sums computed here. */
    CHECK_STATUS(mvnmf_summarize_scores(scores, F, S, sum), MVNMF_STATUS_OK);
    for (f = 0; f < F; f++) {
        double m = 0, q = 0, ms, ss;
        for (s = 0; s < S; s++)
            m += scores[f * S + s].kmeans_nmi / S;
        for (s = 0; s < S; s++)
            q += (scores[f * S + s].kmeans_nmi - m) * (scores[f * S + s].kmeans_nmi - m) / S;
        set_ctx("summary of fraction %g", fractions[f]);
        CHECK(close_to(sum[f].kmeans_nmi_mean, m, 1e-14, 1e-15));
        CHECK(close_to(sum[f].kmeans_nmi_std, sqrt(q), 1e-9, 1e-12));
        CHECK(sum[f].knn_k_min == 5);
        {
            double col[S];
            for (s = 0; s < S; s++)
                col[s] = scores[f * S + s].knn_accuracy;
            CHECK_STATUS(mvnmf_mean_std(col, S, &ms, &ss), MVNMF_STATUS_OK);
            CHECK(ms == sum[f].knn_mean && ss == sum[f].knn_std);
        }
    }
    {
        const double two[2] = { 2.0, 4.0 };
        double m = 0, sd = 0;
        CHECK_STATUS(mvnmf_mean_std(two, 2, &m, &sd), MVNMF_STATUS_OK);
        CHECK(m == 3.0 && sd == 1.0);
        m = sd = -9;
        CHECK_STATUS(mvnmf_mean_std(two, 0, &m, &sd), MVNMF_STATUS_ZERO_DIMENSION);
        CHECK_STATUS(mvnmf_mean_std(two, 2, NULL, &sd), MVNMF_STATUS_NULL_POINTER);
        CHECK(m == -9 && sd == -9);
    }

    /* Errors: status, scores untouched. */
    {
        mvnmf_split_scores keep[S * F];
        const double bad_fr[2] = { 0.2, 1.0 };
        memcpy(keep, scores, sizeof keep);
#define P_EXPECT(call, want, what)                                                \
    do {                                                                          \
        set_ctx("evaluate_protocol: %s", what);                                   \
        CHECK_STATUS(call, want);                                                 \
        CHECK(memcmp(keep, scores, sizeof keep) == 0);                            \
    } while (0)
        P_EXPECT(mvnmf_evaluate_protocol(p->truth, N, C, fractions, F, D, &pp, scores, raw, bytes - 1, proto_fit, &u),
                 MVNMF_STATUS_WORKSPACE_TOO_SMALL, "workspace one byte short");
        P_EXPECT(mvnmf_evaluate_protocol(p->truth, N, C, fractions, F, D, &pp, scores, raw, bytes, NULL, &u),
                 MVNMF_STATUS_NULL_POINTER, "NULL callback");
        P_EXPECT(mvnmf_evaluate_protocol(p->truth, N, C, bad_fr, F, D, &pp, scores, raw, bytes, proto_fit, &u),
                 MVNMF_STATUS_BAD_PARAMETER, "fraction 1");
        P_EXPECT(mvnmf_evaluate_protocol(p->labels, N, C, fractions, F, D, &pp, scores, raw, bytes, proto_fit, &u),
                 MVNMF_STATUS_BAD_LABEL, "an item without its class");
        u.calls = 0;
        u.cancel_at = 4;
        P_EXPECT(mvnmf_evaluate_protocol(p->truth, N, C, fractions, F, D, &pp, scores, raw, bytes, proto_fit, &u),
                 MVNMF_STATUS_CANCELLED, "callback returns 7");
        CHECK(u.calls == 4);
        for (j = 0; j < N; j++)
            mask[j] = 2;
        direct.knn_k = 4242;
        set_ctx("evaluate_split: a flag 2");
        CHECK_STATUS(mvnmf_evaluate_split(v, D, N, p->truth, C, mask, &pp.eval, &direct, raw, bytes),
                     MVNMF_STATUS_BAD_PARAMETER);
        CHECK(direct.knn_k == 4242);
#undef P_EXPECT
    }
    free(raw);
    free(sw);
    free(v);
}

int HARNESS_PROTOCOL_ENTRY(int verbose)
{
    problem *p = (problem *)xalloc(sizeof(problem));
    g_failures = 0;
    g_verbose = verbose;
    problem_make(p);
    test_cross_validate(p);
    test_protocol(p);
    free(p);
    if (verbose || g_failures)
        printf("[%s] mvnmf C ABI harness (evaluation protocol): %d failed checks\n", LANG, g_failures);
    fflush(stdout);
    return g_failures;
}
