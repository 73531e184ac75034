/* C regression cases for the defects of issue 15 (an adversarial run over the
 * C ABI); each check failed before its fix. The Rust side is tests/magnitude_kernels.rs,
 * tests/magnitude_solvers.rs and tests/validation_ffi.rs.
 *
 * Built like the other harnesses (ffi-tests/build.rs): as C99 and as C++11,
 * warnings as errors; the entry point HARNESS_REGRESS_ENTRY (renamed per
 * build) returns the number of failed checks.
 *
 *   D1  huge entries + RBF median bandwidth: mkl_weights was INTERNAL, the
 *       alignment system NaN; pipeline_fit with learned weights likewise;
 *   D2  stratified_split truncated n_classes to 32 bits and looped per class;
 *   deep_factor_len accepted rows = 0; deep_encode read u before checking the
 *   workspace; the pipeline's workspace query accepted ka = N; assignment gave
 *   OK with an infinite total; a 0/1 flag of 2 was BAD_PARAMETER in accuracy;
 *   labels = NULL where labels are needed was TOO_FEW_LABELED;
 *   found by the fuzz driver: simplex_qp with b dominating A was INTERNAL; a
 *   cosine of items near 1e-160 exceeded 1; chi^2 items with subnormal sums
 *   gave NaN (inf * 0) in the alignment system;
 *   D3  deep_fit on data near 1e300 wrote u, then blamed the data as NaN;
 *   D4  nmf_fit / joint_nmf_fit on data near 1e300: OK with NaN results;
 *   D5  views apart by 1e20 or more: the objective of MCL, DMCL (and from 1e100
 *       MvSL, the MvSL-T pipeline) rose; the L1,inf prox zeroed a column when
 *       alpha/L was below half an ulp of its entries (fuzz seed 0x173: a deep
 *       fit at 1e25; also a tiny alpha on ordinary data).
 *
 * Issue 31:
 *   E5, E6, E8 (test_issue31_queries): MVEL prediction, mean_std near DBL_MAX,
 *       workspace queries that checked less than their calls;
 *   E1  the f32 MvSL family (mvsl_fit_f32 with the MvSL and MCL presets,
 *       deep_fit_f32, pipeline_fit_f32) on views times 1e-4 and 1e4, or both
 *       times 1e-30: OK with NaN in U and a NaN objective (the Lipschitz guess
 *       of a dead view halved until 1/L overflowed float);
 *   (E2-E4: tests/beta.rs, tests/jsnmf.rs on the Rust side)
 *   E2  beta_nmf_fit near DBL_MAX / on denormals, beta_nmf_fit_f32 near
 *       FLT_MAX/2: OK with non-finite factors;
 *   E3  beta_nmf_fit on views near 1e-10 and 1e10: the objective rose;
 *   E4  jsnmf_fit with lambda = {1e308, 1e-308}, jsnmf_fit_f32 near 1e30: OK
 *       with non-finite factors;
 *   JSNMF on subnormal data with lambda up to 1e208 (test_jsnmf_subnormal):
 *       the objective rose at iteration 1-2 (fuzz seeds 0x2028955, 0x4016d7f).
 */
#include "mvnmf.h"

#include <float.h>
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
int HARNESS_REGRESS_ENTRY(int verbose);
#ifdef __cplusplus
}
#endif

#include "harness_common.h"

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL) {
        printf("[%s] out of memory\n", LANG);
        exit(1);
    }
    memset(p, 0, bytes ? bytes : 1);
    return p;
}

static int all_finite(const double *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (!(p[i] - p[i] == 0.0))
            return 0;
    return 1;
}

static void fill_uniform(double *x, size_t n, uint64_t seed)
{
    lcg_t g = lcg_seeded(seed);
    size_t i;
    for (i = 0; i < n; i++)
        x[i] = 0.05 + lcg_next(&g);
}

static uint32_t mkl(const mvnmf_view *views, size_t h, const mvnmf_kernel *ks, const uint32_t *labels, size_t c,
                    double *eta)
{
    mvnmf_mkl_params p = mvnmf_mkl_params_default();
    mvnmf_mkl_report rep;
    size_t bytes = 0;
    void *w;
    uint32_t s;
    if (!CHECK_STATUS(mvnmf_mkl_weights_workspace(views, h, ks, c, &p, &bytes), MVNMF_STATUS_OK))
        return 999;
    w = xmalloc(bytes);
    s = mvnmf_mkl_weights(views, h, ks, labels, c, &p, eta, w, bytes, &rep);
    free(w);
    return s;
}

static void test_d1(void)
{
    double x[12], y[12], eta[2], g[1], b[1], constant;
    mvnmf_view views[2];
    mvnmf_kernel ks[2];
    uint32_t labels[4] = {0, 0, 1, 1};
    size_t i, bytes = 0;
    void *w;
    note("D1: 3x4 view of 0.5 with one 1e299, RBF median");
    set_ctx("D1 mkl_weights");
    for (i = 0; i < 12; i++)
        x[i] = 0.5;
    x[4] = 1e299;
    views[0] = dense_view(x, 3, 4);
    ks[0] = kernel_of(MVNMF_KERNEL_RBF, 0.0);
    eta[0] = -1.0;
    CHECK_STATUS(mkl(views, 1, ks, labels, 2, eta), MVNMF_STATUS_OK);
    CHECK(eta[0] == 1.0);

    set_ctx("D1 alignment_system");
    CHECK_STATUS(mvnmf_alignment_system_workspace(views, 1, ks, 2, 0, &bytes), MVNMF_STATUS_OK);
    w = xmalloc(bytes);
    g[0] = b[0] = constant = NAN;
    CHECK_STATUS(mvnmf_alignment_system(views, 1, ks, labels, 2, 0, g, b, &constant, w, bytes), MVNMF_STATUS_OK);
    CHECK(all_finite(g, 1) && all_finite(b, 1) && all_finite(&constant, 1));
    free(w);

    set_ctx("D1 mkl_weights, two views, one huge");
    fill_uniform(y, 12, 3);
    views[1] = dense_view(y, 3, 4);
    ks[1] = kernel_of(MVNMF_KERNEL_RBF, 0.0);
    CHECK_STATUS(mkl(views, 2, ks, labels, 2, eta), MVNMF_STATUS_OK);
    CHECK(all_in(eta, 2, 0.0, 1.0) && fabs(eta[0] + eta[1] - 1.0) < 1e-12);

    /* Every kernel kind, view times 1e300 and 1e-300: the system of the view itself. */
    {
        double z[5 * 9], zs[5 * 9], g0[1], b0[1], c0, g1[1], b1[1], c1;
        double f[2] = {1e300, 1e-300};
        uint32_t lab9[9];
        uint32_t kind, fi;
        mvnmf_view v0, v1;
        mvnmf_kernel k;
        fill_uniform(z, 45, 11);
        for (i = 0; i < 9; i++)
            lab9[i] = (uint32_t)(i % 3);
        v0 = dense_view(z, 5, 9);
        v1 = dense_view(zs, 5, 9);
        for (kind = 0; kind < 4; kind++) {
            k = kernel_of(kind, 0.0);
            CHECK_STATUS(mvnmf_alignment_system_workspace(&v0, 1, &k, 3, 0, &bytes), MVNMF_STATUS_OK);
            w = xmalloc(bytes);
            CHECK_STATUS(mvnmf_alignment_system(&v0, 1, &k, lab9, 3, 0, g0, b0, &c0, w, bytes), MVNMF_STATUS_OK);
            for (fi = 0; fi < 2; fi++) {
                set_ctx("D1 scale invariance, kernel %u, factor %g", (unsigned)kind, f[fi]);
                for (i = 0; i < 45; i++)
                    zs[i] = z[i] * f[fi];
                CHECK_STATUS(mvnmf_alignment_system(&v1, 1, &k, lab9, 3, 0, g1, b1, &c1, w, bytes),
                             MVNMF_STATUS_OK);
                CHECK(fabs(g1[0] - g0[0]) <= 1e-9 * fabs(g0[0]) && fabs(b1[0] - b0[0]) <= 1e-9 * fabs(b0[0]));
            }
            free(w);
        }
    }
}

static void test_d1_pipeline(void)
{
    enum { R = 4, NI = 12, K = 2 };
    double x[R * NI], y[R * NI], u0[R * K], u1[R * K], v[K * NI], eta[2];
    double *us[2];
    mvnmf_view views[2];
    mvnmf_kernel ks[2];
    uint32_t labels[NI];
    mvnmf_pipeline_params p;
    uint32_t methods[3] = {MVNMF_METHOD_MVSL_L, MVNMF_METHOD_MVSL_T, MVNMF_METHOD_GNMF};
    size_t i, m, bytes;
    void *w;
    uint32_t s;
    note("D1: pipeline_fit with learned weights on huge entries");
    /* The D1 shape: most items coincide (median d^2 = 0: the mean decides), one huge entry. */
    for (i = 0; i < R * NI; i++)
        x[i] = 0.5;
    fill_uniform(y, R * NI, 6);
    x[7] = 1e299;
    for (i = 0; i < NI; i++)
        labels[i] = i % 4 == 3 ? MVNMF_UNLABELED : (uint32_t)(i % 2);
    views[0] = dense_view(x, R, NI);
    views[1] = dense_view(y, R, NI);
    ks[0] = ks[1] = kernel_of(MVNMF_KERNEL_RBF, 0.0);
    us[0] = u0;
    us[1] = u1;
    for (m = 0; m < 3; m++) {
        set_ctx("D1 pipeline method %u", (unsigned)methods[m]);
        CHECK_STATUS(mvnmf_pipeline_params_preset(methods[m], &p), MVNMF_STATUS_OK);
        p.learn_eta = 1;
        p.graph.ka = 2;
        p.graph.kp = 1;
        p.solver.max_iter = 5;
        bytes = 0;
        CHECK_STATUS(mvnmf_pipeline_fit_workspace(views, 2, ks, 2, K, &p, &bytes), MVNMF_STATUS_OK);
        w = xmalloc(bytes);
        s = mvnmf_pipeline_fit(views, 2, ks, labels, 2, K, &p, us, v, eta, w, bytes, NULL, NULL, NULL);
        /* INTERNAL before the fix; data this large is refused up front now (D4). */
        CHECK_STATUS(s, MVNMF_STATUS_INPUT_TOO_LARGE);
        free(w);
    }
}

static void test_d2(void)
{
    enum { NI = 40 };
    uint32_t labels[NI];
    uint8_t out[NI], a[NI];
    size_t counts[3];
    size_t i, c, bytes = 0;
    void *w;
    note("D2: stratified_split with huge n_classes");
    for (i = 0; i < NI; i++)
        labels[i] = (uint32_t)((i * 7) % 5);
    CHECK_STATUS(mvnmf_stratified_split_workspace(NI, &bytes), MVNMF_STATUS_OK);
    w = xmalloc(bytes);
    counts[0] = 5;
    counts[1] = sizeof(size_t) > 4 ? (size_t)(((uint64_t)1 << 32) + 1) : 6;
    counts[2] = SIZE_MAX;
    for (c = 0; c < 3; c++) {
        set_ctx("D2 n_classes %zu, fraction 1", counts[c]);
        memset(out, 7, sizeof out);
        CHECK_STATUS(mvnmf_stratified_split(labels, NI, counts[c], 1.0, 9, out, w, bytes), MVNMF_STATUS_OK);
        CHECK(bytes_are(out, NI, 1));
    }
    set_ctx("D2 n_classes SIZE_MAX, fraction 0.4: same as n_classes 5");
    CHECK_STATUS(mvnmf_stratified_split(labels, NI, 5, 0.4, 9, a, w, bytes), MVNMF_STATUS_OK);
    CHECK_STATUS(mvnmf_stratified_split(labels, NI, SIZE_MAX, 0.4, 9, out, w, bytes), MVNMF_STATUS_OK);
    CHECK(memcmp(a, out, NI) == 0);
    free(w);
}

static void test_small(void)
{
    note("smaller defects");
    /* deep_factor_len(rows = 0) */
    {
        size_t layers[2] = {4, 2};
        size_t len = 12345;
        set_ctx("deep_factor_len rows 0");
        CHECK_STATUS(mvnmf_deep_factor_len(0, layers, 2, &len), MVNMF_STATUS_ZERO_DIMENSION);
        CHECK(len == 12345);
        CHECK_STATUS(mvnmf_deep_factor_len(6, layers, 2, &len), MVNMF_STATUS_OK);
        CHECK(len == 6 * 4 + 4 * 2);
    }
    /* deep_encode: workspace before u's values */
    {
        enum { R = 6, NI = 5 };
        double x[R * NI], u[R * 3 + 3 * 2], v[2 * NI];
        const double *ups[1];
        size_t layers[2] = {3, 2};
        size_t i, bytes = 0;
        mvnmf_view view;
        mvnmf_deep_params dp;
        mvnmf_graph g;
        void *w;
        set_ctx("deep_encode short workspace, NaN in u");
        fill_uniform(x, R * NI, 2);
        view = dense_view(x, R, NI);
        CHECK_STATUS(mvnmf_deep_params_preset(MVNMF_DEEP_PRESET_DNMF, &dp), MVNMF_STATUS_OK);
        memset(&g, 0, sizeof g);
        g.kind = MVNMF_GRAPH_NONE;
        g.n = NI;
        CHECK_STATUS(mvnmf_deep_encode_workspace(&view, 1, &g, layers, 2, &dp, &bytes), MVNMF_STATUS_OK);
        for (i = 0; i < R * 3 + 3 * 2; i++)
            u[i] = NAN;
        for (i = 0; i < 2 * NI; i++)
            v[i] = -7.0;
        ups[0] = u;
        w = xmalloc(bytes);
        CHECK_STATUS(mvnmf_deep_encode(&view, 1, &g, layers, 2, &dp, ups, v, w, bytes / 2, NULL, NULL, NULL),
                     MVNMF_STATUS_WORKSPACE_TOO_SMALL);
        CHECK_STATUS(mvnmf_deep_encode(&view, 1, &g, layers, 2, &dp, ups, v, w, bytes, NULL, NULL, NULL),
                     MVNMF_STATUS_NON_FINITE_INPUT);
        CHECK(all_in(v, 2 * NI, -7.0, -7.0));
        free(w);
    }
    /* pipeline workspace query vs fit: ka = N */
    {
        enum { R = 3, NI = 8, K = 2 };
        double x[R * NI], u[R * K], v[K * NI], eta[1];
        double *us[1];
        uint32_t labels[NI];
        mvnmf_view view;
        mvnmf_kernel k = kernel_of(MVNMF_KERNEL_LINEAR, 0.0);
        mvnmf_pipeline_params p;
        size_t i, bytes = 0;
        uint32_t q, f;
        void *w;
        set_ctx("pipeline query and fit, ka = N");
        fill_uniform(x, R * NI, 4);
        for (i = 0; i < NI; i++)
            labels[i] = (uint32_t)(i % 2);
        view = dense_view(x, R, NI);
        us[0] = u;
        CHECK_STATUS(mvnmf_pipeline_params_preset(MVNMF_METHOD_MVSL_L, &p), MVNMF_STATUS_OK);
        p.learn_eta = 0;
        p.graph.ka = NI;
        p.graph.kp = 0;
        q = mvnmf_pipeline_fit_workspace(&view, 1, &k, 2, K, &p, &bytes);
        w = xmalloc(1 << 20);
        f = mvnmf_pipeline_fit(&view, 1, &k, labels, 2, K, &p, us, v, eta, w, 1 << 20, NULL, NULL, NULL);
        CHECK_STATUS(f, MVNMF_STATUS_BAD_PARAMETER);
        CHECK_STATUS(q, f);
        free(w);
    }
    /* assignment: costs near 1e308 */
    {
        double cost[9], total = 42.0;
        size_t map[3] = {5, 5, 5};
        size_t i, bytes = 0;
        void *w;
        set_ctx("assignment costs near 1e308");
        for (i = 0; i < 9; i++)
            cost[i] = 1e308 - (double)i * 1e306;
        CHECK_STATUS(mvnmf_assignment_workspace(3, 3, &bytes), MVNMF_STATUS_OK);
        w = xmalloc(bytes);
        CHECK_STATUS(mvnmf_assignment(cost, 3, 3, 0, map, &total, w, bytes), MVNMF_STATUS_NON_FINITE_INPUT);
        CHECK(total == 42.0 && map[0] == 5 && map[1] == 5 && map[2] == 5);
        for (i = 0; i < 9; i++)
            cost[i] = -cost[i];
        CHECK_STATUS(mvnmf_assignment(cost, 3, 3, 1, map, &total, w, bytes), MVNMF_STATUS_NON_FINITE_INPUT);
        for (i = 0; i < 9; i++)
            cost[i] = 1e307 * (double)(i % 4);
        CHECK_STATUS(mvnmf_assignment(cost, 3, 3, 0, map, &total, w, bytes), MVNMF_STATUS_OK);
        CHECK(all_finite(&total, 1));
        free(w);
    }
    /* A flag of 2: BAD_LABEL everywhere */
    {
        uint32_t pred[4] = {0, 1, 1, 0}, truth[4] = {0, 1, 0, 0};
        uint8_t mask[4] = {1, 2, 1, 0};
        double acc = 5.0;
        set_ctx("accuracy mask byte 2");
        CHECK_STATUS(mvnmf_accuracy(pred, truth, 4, mask, &acc), MVNMF_STATUS_BAD_LABEL);
        CHECK(acc == 5.0);
    }
    /* labels = NULL where labels are needed */
    {
        double x[3 * 6], gam[1] = {7.0};
        mvnmf_view view;
        mvnmf_kernel med = kernel_of(MVNMF_KERNEL_RBF, 0.0), lin = kernel_of(MVNMF_KERNEL_LINEAR, 0.0);
        mvnmf_fused_knn_params kp = mvnmf_fused_knn_params_default();
        size_t nb[6];
        double sims[6], one[1] = {1.0};
        size_t bytes = 0;
        void *w = xmalloc(1 << 20);
        fill_uniform(x, 18, 1);
        view = dense_view(x, 3, 6);
        set_ctx("kernel_bandwidths labels NULL, median");
        CHECK_STATUS(mvnmf_kernel_bandwidths_workspace(&view, 1, &med, 2, 0, &bytes), MVNMF_STATUS_OK);
        CHECK_STATUS(mvnmf_kernel_bandwidths(&view, 1, &med, NULL, 2, 0, gam, w, 1 << 20), MVNMF_STATUS_NULL_POINTER);
        CHECK(gam[0] == 7.0);
        CHECK_STATUS(mvnmf_kernel_bandwidths(&view, 1, &lin, NULL, 2, 0, gam, w, 1 << 20), MVNMF_STATUS_OK);
        set_ctx("fused_knn labels NULL, labeled scope");
        kp.k = 1;
        kp.scope = MVNMF_SCOPE_LABELED;
        CHECK_STATUS(mvnmf_fused_knn(&view, 1, &lin, one, NULL, 2, &kp, NULL, NULL, nb, sims, w, 1 << 20),
                     MVNMF_STATUS_NULL_POINTER);
        kp.scope = MVNMF_SCOPE_ALL;
        CHECK_STATUS(mvnmf_fused_knn(&view, 1, &lin, one, NULL, 2, &kp, NULL, NULL, nb, sims, w, 1 << 20),
                     MVNMF_STATUS_OK);
        free(w);
    }
}

/* Found by the fuzz driver (tests/fuzz_ffi.rs). */
static void test_fuzz_findings(void)
{
    note("fuzz findings: simplex_qp with dominant b; kernels near the subnormal range");
    {
        double a[3] = {5.165919703107464e136, 9.37857084093865e-111, 3.640760318179235e-18};
        double b[3] = {-4.5225629127625724e153, -3.591088159952124e79, -4.533875583352967e205};
        double eta[18], zero[18 * 18], bb[18];
        mvnmf_qp_report rep;
        size_t i, best = 0, bytes = 0;
        void *w;
        CHECK_STATUS(mvnmf_simplex_qp_workspace(18, &bytes), MVNMF_STATUS_OK);
        w = xmalloc(bytes);
        for (i = 0; i < 3; i++) {
            set_ctx("simplex_qp h = 1, a %g, b %g", a[i], b[i]);
            eta[0] = -3.0;
            CHECK_STATUS(mvnmf_simplex_qp(&a[i], &b[i], 1, eta, w, bytes, &rep), MVNMF_STATUS_OK);
            CHECK(eta[0] == 1.0);
        }
        set_ctx("simplex_qp h = 18, A = 0 (active set)");
        for (i = 0; i < 18 * 18; i++)
            zero[i] = 0.0;
        for (i = 0; i < 18; i++) {
            bb[i] = (double)((i * 7) % 18);
            if (bb[i] > bb[best])
                best = i;
        }
        CHECK_STATUS(mvnmf_simplex_qp(zero, bb, 18, eta, w, bytes, &rep), MVNMF_STATUS_OK);
        CHECK(fabs(eta[best] - 1.0) < 1e-9);
        free(w);
    }
    {
        /* chi^2 / intersection / linear items with subnormal values: finite system. */
        double x[8] = {1.0, 0.5, 1e-318, 2e-318, 3e-318, 1e-318, 2e-318, 2e-318};
        uint32_t labels[4] = {0, 1, 1, 0};
        double g[1], b[1], c;
        mvnmf_view v = dense_view(x, 2, 4);
        mvnmf_kernel k;
        uint32_t kinds[3] = {MVNMF_KERNEL_CHI_SQUARED, MVNMF_KERNEL_INTERSECTION, MVNMF_KERNEL_LINEAR};
        size_t i;
        void *w = xmalloc(1 << 20);
        for (i = 0; i < 3; i++) {
            set_ctx("alignment_system, subnormal items, kernel %u", (unsigned)kinds[i]);
            k = kernel_of(kinds[i], 0.0);
            CHECK_STATUS(mvnmf_alignment_system(&v, 1, &k, labels, 2, 0, g, b, &c, w, 1 << 20), MVNMF_STATUS_OK);
            CHECK(all_finite(g, 1) && all_finite(b, 1) && all_finite(&c, 1));
        }
        free(w);
    }
    {
        /* Linear kernel on items of ~1e-160 next to an ordinary one: cosines <= 1. */
        enum { R = 3, NI = 8 };
        double x[R * NI], sims[NI * (NI - 1)], tiny[NI * NI];
        size_t nb[NI * (NI - 1)], i;
        mvnmf_view v;
        mvnmf_kernel k = kernel_of(MVNMF_KERNEL_LINEAR, 0.0);
        mvnmf_fused_knn_params kp = mvnmf_fused_knn_params_default();
        double one[1] = {1.0};
        void *w = xmalloc(1 << 20);
        fill_uniform(x, R * NI, 21);
        for (i = R; i < R * NI; i++)
            x[i] *= 1e-160;
        x[0] = 1e-86;
        v = dense_view(x, R, NI);
        kp.k = NI - 1;
        kp.scope = MVNMF_SCOPE_ALL;
        set_ctx("fused_knn, linear, items near the subnormal range");
        CHECK_STATUS(mvnmf_fused_knn(&v, 1, &k, one, NULL, 1, &kp, NULL, NULL, nb, sims, w, 1 << 20),
                     MVNMF_STATUS_OK);
        CHECK(all_in(sims, NI * (NI - 1), 0.0, 1.0 + 1e-12));
        /* A cosine is invariant to scaling an item: the same items at ordinary magnitude. */
        for (i = 0; i < NI * (NI - 1); i++)
            tiny[i / (NI - 1) * NI + nb[i]] = sims[i];
        for (i = R; i < R * NI; i++)
            x[i] *= 1e160;
        CHECK_STATUS(mvnmf_fused_knn(&v, 1, &k, one, NULL, 1, &kp, NULL, NULL, nb, sims, w, 1 << 20),
                     MVNMF_STATUS_OK);
        for (i = 0; i < NI * (NI - 1); i++)
            CHECK(fabs(tiny[i / (NI - 1) * NI + nb[i]] - sims[i]) < 1e-12);
        free(w);
    }
    {
        /* CSC linear view, items of 1e-44 and 1e-272: x'y underflowed, cosine 1.000000013. */
        size_t col_ptr[5] = {0, 1, 2, 3, 4}, row_idx[4] = {0, 0, 0, 0}, nb[12];
        double vals[4] = {1.0178601471044408e-44, 3.86448965980197e-45, 1e-272, 6e-45}, sims[12];
        double one[1] = {1.0};
        mvnmf_view v;
        mvnmf_kernel k = kernel_of(MVNMF_KERNEL_LINEAR, 0.0);
        mvnmf_fused_knn_params kp = mvnmf_fused_knn_params_default();
        size_t i;
        void *w = xmalloc(1 << 20);
        v.kind = MVNMF_VIEW_CSC;
        v.rows = 1;
        v.cols = 4;
        v.values = vals;
        v.col_stride = 0;
        v.col_ptr = col_ptr;
        v.row_idx = row_idx;
        kp.k = 3;
        set_ctx("fused_knn, CSC linear, items of 1e-44 and 1e-272");
        CHECK_STATUS(mvnmf_fused_knn(&v, 1, &k, one, NULL, 1, &kp, NULL, NULL, nb, sims, w, 1 << 20),
                     MVNMF_STATUS_OK);
        for (i = 0; i < 12; i++)
            CHECK(fabs(sims[i] - 1.0) < 1e-15);
        free(w);
    }
}

/* ---- D3-D5: the solvers at extreme magnitudes ---- */

/* The progress callback: the objective may not rise by more than 1e-10 of its
 * scale (the larger of 1/2 ||X||^2 and the sum of |parts| at the start). */
typedef struct {
    double prev, tol;
    unsigned calls, rose, nonfinite;
} watch_t;

static int watch_cb(const mvnmf_progress *p, void *user)
{
    watch_t *w = (watch_t *)user;
    double t = p->objective.total;
    if (p->phase != MVNMF_PHASE_ITERATIONS)
        return 0; /* the pipeline's set-up phases: no iterate */
    if (w->calls == 0) {
        double parts = 0.0;
        uint32_t i;
        for (i = 0; i < p->objective.n_terms; i++)
            parts += fabs(p->objective.terms[i].value);
        if (1e-10 * parts > w->tol)
            w->tol = 1e-10 * parts;
    }
    if (!(t - t == 0.0))
        w->nonfinite = 1;
    if (w->calls > 0 && t > w->prev + w->tol) {
        if (!w->rose && g_verbose)
            printf("    objective rose at iteration %u: %.17g -> %.17g\n", (unsigned)p->iter, w->prev, t);
        w->rose = 1;
    }
    w->prev = t;
    w->calls++;
    return 0;
}

static watch_t watch_of(const double *const *xs, const size_t *rows, size_t h, size_t n)
{
    watch_t w;
    double half = 0.0;
    size_t i, j;
    for (i = 0; i < h; i++)
        for (j = 0; j < rows[i] * n; j++)
            half += 0.5 * xs[i][j] * xs[i][j];
    w.prev = HUGE_VAL;
    w.tol = 1e-10 * half > DBL_MIN ? 1e-10 * half : DBL_MIN;
    w.calls = w.rose = w.nonfinite = 0;
    return w;
}

/* Views of NI items with R0, R1 features, values (0.05, 1.05) times f0, f1. */
enum { NI = 12, R0 = 5, R1 = 4, KK = 3 };
static double g_x0[R0 * NI], g_x1[R1 * NI];
static uint32_t g_labels[NI];
static const size_t g_rows[2] = {R0, R1};

static void make_views(double f0, double f1, uint64_t seed, mvnmf_view *views)
{
    size_t i;
    fill_uniform(g_x0, R0 * NI, seed);
    fill_uniform(g_x1, R1 * NI, seed + 1);
    for (i = 0; i < R0 * NI; i++)
        g_x0[i] *= f0;
    for (i = 0; i < R1 * NI; i++)
        g_x1[i] *= f1;
    for (i = 0; i < NI; i++)
        g_labels[i] = i % 3 == 2 ? MVNMF_UNLABELED : (uint32_t)(i % 2);
    views[0] = dense_view(g_x0, R0, NI);
    views[1] = dense_view(g_x1, R1, NI);
}

static mvnmf_graph sge_graph(void)
{
    mvnmf_graph g;
    memset(&g, 0, sizeof g);
    g.kind = MVNMF_GRAPH_SGE;
    g.n = NI;
    g.labels = g_labels;
    g.n_classes = 2;
    return g;
}

static const double SENT = -7.25;

static int all_sentinel(const double *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (p[i] != SENT)
            return 0;
    return 1;
}

/* A fit's checks: OK, finite factors, the objective never rising; or refused
 * with INPUT_TOO_LARGE, nothing written, the callback never called. */
static void check_fit(uint32_t s, int refused, const watch_t *w, const double *u0, size_t n0, const double *u1,
                      size_t n1, const double *v, size_t nv)
{
    if (refused) {
        CHECK_STATUS(s, MVNMF_STATUS_INPUT_TOO_LARGE);
        CHECK(w->calls == 0);
        CHECK(all_sentinel(u0, n0) && all_sentinel(u1, n1) && all_sentinel(v, nv));
    } else {
        CHECK_STATUS(s, MVNMF_STATUS_OK);
        CHECK(w->calls > 0 && !w->rose && !w->nonfinite);
        CHECK(all_finite(u0, n0) && all_finite(u1, n1) && all_finite(v, nv));
    }
}

static void fill_sentinel(double *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        p[i] = SENT;
}

static uint32_t run_mvsl(const mvnmf_view *views, const mvnmf_mvsl_params *p, double *u0, double *u1, double *v,
                         watch_t *w)
{
    mvnmf_graph g = sge_graph();
    double *us[2];
    size_t bytes = 0;
    void *work;
    uint32_t s;
    us[0] = u0;
    us[1] = u1;
    fill_sentinel(u0, R0 * KK);
    fill_sentinel(u1, R1 * KK);
    fill_sentinel(v, KK * NI);
    if (!CHECK_STATUS(mvnmf_mvsl_fit_workspace(views, 2, &g, KK, p, &bytes), MVNMF_STATUS_OK))
        return 999;
    work = xmalloc(bytes);
    s = mvnmf_mvsl_fit(views, 2, &g, KK, p, us, v, work, bytes, watch_cb, w, NULL);
    free(work);
    return s;
}

/* DMCL / DNMF with layers [4, 3]: factor buffers R*4 + 4*3. */
static uint32_t run_deep(const mvnmf_view *views, const mvnmf_deep_params *p, int graph, double *u0, double *u1,
                         double *v, watch_t *w)
{
    mvnmf_graph g = sge_graph();
    size_t layers[2] = {4, KK}, bytes = 0;
    double *us[2];
    void *work;
    uint32_t s;
    if (!graph)
        g.kind = MVNMF_GRAPH_NONE;
    us[0] = u0;
    us[1] = u1;
    fill_sentinel(u0, R0 * 4 + 4 * KK);
    fill_sentinel(u1, R1 * 4 + 4 * KK);
    fill_sentinel(v, KK * NI);
    if (!CHECK_STATUS(mvnmf_deep_fit_workspace(views, 2, &g, layers, 2, p, &bytes), MVNMF_STATUS_OK))
        return 999;
    work = xmalloc(bytes);
    s = mvnmf_deep_fit(views, 2, &g, layers, 2, p, us, v, work, bytes, watch_cb, w, NULL);
    free(work);
    return s;
}

static mvnmf_mvsl_params mvsl_preset(uint32_t preset)
{
    mvnmf_mvsl_params p;
    mvnmf_mvsl_params_preset(preset, &p);
    p.max_iter = 30;
    p.tol = 0.0;
    return p;
}

static mvnmf_deep_params deep_preset(uint32_t preset)
{
    mvnmf_deep_params p;
    mvnmf_deep_params_preset(preset, &p);
    p.top.max_iter = 30;
    p.top.tol = 0.0;
    p.pretrain_iter = 20;
    return p;
}

/* The L1,inf prox with alpha/L below half an ulp (fuzz seed 0x173 at 1e25; a
 * tiny alpha on ordinary data does the same): the column was zeroed. */
static void test_l1inf_tiny_threshold(void)
{
    double u0[R0 * 4 + 4 * KK], u1[R1 * 4 + 4 * KK], v[KK * NI];
    const double *xs[2];
    mvnmf_view views[2];
    mvnmf_mvsl_params p;
    mvnmf_deep_params d;
    watch_t w;
    note("L1,inf prox with alpha/L below half an ulp (fuzz seed 0x173)");
    make_views(1.0, 1.0, 31, views);
    xs[0] = g_x0;
    xs[1] = g_x1;
    set_ctx("MCL, alpha = 1e-20");
    p = mvsl_preset(MVNMF_MVSL_PRESET_MCL);
    p.alpha = 1e-20;
    w = watch_of(xs, g_rows, 2, NI);
    check_fit(run_mvsl(views, &p, u0, u1, v, &w), 0, &w, u0, R0 * KK, u1, R1 * KK, v, KK * NI);
    set_ctx("DMCL, alpha = 1e-20");
    d = deep_preset(MVNMF_DEEP_PRESET_DMCL);
    d.top.alpha = 1e-20;
    w = watch_of(xs, g_rows, 2, NI);
    check_fit(run_deep(views, &d, 1, u0, u1, v, &w), 0, &w, u0, R0 * 4 + 4 * KK, u1, R1 * 4 + 4 * KK, v,
              KK * NI);
    {
        /* The fuzz case: one 2 x 5 view near 1e25, layers [4, 1, 1], no box. */
        double x[10] = {0.0, 0.0, 4.2856312589380835e25, 0.0, 5.076789761975765e25,
                        0.0, 0.0, 9.59989650569489e25, 5.469571189842065e25, 1.0000000000000001e24};
        size_t layers[3] = {4, 1, 1}, bytes = 0, rows[1] = {2};
        double uu[2 * 2 + 2 * 1 + 1], vv[5];
        double *us[1];
        const double *xx[1];
        mvnmf_view view = dense_view(x, 2, 5);
        mvnmf_graph g;
        void *work;
        set_ctx("deep_fit, fuzz seed 0x173");
        memset(&g, 0, sizeof g);
        g.kind = MVNMF_GRAPH_NONE;
        g.n = 5;
        d = deep_preset(MVNMF_DEEP_PRESET_DMCL);
        d.top = mvsl_preset(MVNMF_MVSL_PRESET_MCL);
        d.top.max_iter = 6;
        d.top.tol = 1e-6;
        d.top.seed = 8685130724608528470ull;
        d.top.alpha = 10.0;
        d.top.beta = 0.0;
        d.top.gamma = 0.0;
        d.pretrain_iter = 1;
        d.box_lower = 0;
        d.v_init = MVNMF_DEEP_V_PRETRAINED;
        us[0] = uu;
        xx[0] = x;
        w = watch_of(xx, rows, 1, 5);
        CHECK_STATUS(mvnmf_deep_fit_workspace(&view, 1, &g, layers, 3, &d, &bytes), MVNMF_STATUS_OK);
        work = xmalloc(bytes);
        CHECK_STATUS(mvnmf_deep_fit(&view, 1, &g, layers, 3, &d, us, vv, work, bytes, watch_cb, &w, NULL),
                     MVNMF_STATUS_OK);
        CHECK(w.calls > 0 && !w.rose && !w.nonfinite && all_finite(uu, 7) && all_finite(vv, 5));
        free(work);
    }
}

/* D3: deep_fit on data near 1e300 is refused up front, nothing written; just
 * below the bound (and at any smaller magnitude) it is solved. */
static void test_d3(void)
{
    static const double mags[6] = {1e300, 1e145, 1e100, 1e30, 1e-100, 1e-300};
    static const uint32_t presets[2] = {MVNMF_DEEP_PRESET_DMCL, MVNMF_DEEP_PRESET_DNMF};
    double u0[R0 * 4 + 4 * KK], u1[R1 * 4 + 4 * KK], v[KK * NI];
    const double *xs[2];
    mvnmf_view views[2];
    size_t i, j, b;
    note("D3: deep_fit on data near 1e300");
    xs[0] = g_x0;
    xs[1] = g_x1;
    for (j = 0; j < 2; j++)
        for (b = 0; b < 2; b++)
            for (i = 0; i < 6; i++) {
                mvnmf_deep_params d = deep_preset(presets[j]);
                watch_t w;
                d.box_lower = (uint32_t)b;
                set_ctx("D3 deep_fit preset %u box %u data at %g", (unsigned)presets[j], (unsigned)b, mags[i]);
                make_views(mags[i], i == 0 ? 1.0 : mags[i], 7, views);
                w = watch_of(xs, g_rows, 2, NI);
                check_fit(run_deep(views, &d, presets[j] == MVNMF_DEEP_PRESET_DMCL, u0, u1, v, &w), i == 0, &w, u0,
                          R0 * 4 + 4 * KK, u1, R1 * 4 + 4 * KK, v, KK * NI);
            }
}

/* D4: nmf_fit / joint_nmf_fit on data near 1e300: refused (was OK with NaN). */
static void test_d4(void)
{
    static const double mags[7] = {1e300, 1e155, 1e149, 1e40, 1e-40, 1e-150, 1e-300};
    double u0[R0 * KK], u1[R1 * KK], v[KK * NI];
    double *us[2];
    const double *xs[2];
    mvnmf_view views[2];
    mvnmf_nmf_params p = mvnmf_nmf_params_default();
    size_t i, h, bytes = 0;
    note("D4: nmf_fit, joint_nmf_fit on data near 1e300");
    p.max_iter = 40;
    p.tol = 0.0;
    us[0] = u0;
    us[1] = u1;
    xs[0] = g_x0;
    xs[1] = g_x1;
    for (h = 1; h <= 2; h++)
        for (i = 0; i < 7; i++) {
            watch_t w;
            void *work;
            uint32_t s;
            set_ctx("D4 %s, data at %g", h == 1 ? "nmf_fit" : "joint_nmf_fit", mags[i]);
            make_views(mags[i], mags[i], 3, views);
            fill_sentinel(u0, R0 * KK);
            fill_sentinel(u1, R1 * KK);
            fill_sentinel(v, KK * NI);
            w = watch_of(xs, g_rows, h, NI);
            CHECK_STATUS(mvnmf_joint_nmf_fit_workspace(views, h, KK, &p, &bytes), MVNMF_STATUS_OK);
            work = xmalloc(bytes);
            if (h == 1)
                s = mvnmf_nmf_fit(views, KK, &p, u0, v, work, bytes, watch_cb, &w, NULL);
            else
                s = mvnmf_joint_nmf_fit(views, 2, KK, &p, us, v, work, bytes, watch_cb, &w, NULL);
            check_fit(s, i < 2, &w, u0, R0 * KK, u1, h == 2 ? R1 * KK : 0, v, KK * NI);
            free(work);
        }
}

/* D5: one view times 1e20 .. 1e145 (or divided): MCL, MvSL, GNMF, DMCL and the
 * MvSL-T / MCL pipelines never raise the objective, all factors finite. */
static void test_d5(void)
{
    static const double f[6] = {1e20, 1e50, 1e100, 1e145, 1e-20, 1e-145};
    static const uint32_t presets[3] = {MVNMF_MVSL_PRESET_MCL, MVNMF_MVSL_PRESET_MVSL, MVNMF_MVSL_PRESET_GNMF};
    static const uint32_t methods[2] = {MVNMF_METHOD_MVSL_T, MVNMF_METHOD_MCL};
    double u0[R0 * 4 + 4 * KK], u1[R1 * 4 + 4 * KK], v[KK * NI], eta[2];
    const double *xs[2];
    mvnmf_view views[2];
    size_t i, j;
    note("D5: views apart by 1e20 .. 1e145");
    xs[0] = g_x0;
    xs[1] = g_x1;
    for (i = 0; i < 6; i++) {
        watch_t w;
        make_views(f[i], 1.0, 11, views);
        for (j = 0; j < 3; j++) {
            mvnmf_mvsl_params p = mvsl_preset(presets[j]);
            set_ctx("D5 mvsl_fit preset %u, one view times %g", (unsigned)presets[j], f[i]);
            w = watch_of(xs, g_rows, 2, NI);
            check_fit(run_mvsl(views, &p, u0, u1, v, &w), 0, &w, u0, R0 * KK, u1, R1 * KK, v, KK * NI);
        }
        {
            mvnmf_deep_params d = deep_preset(MVNMF_DEEP_PRESET_DMCL);
            set_ctx("D5 deep_fit DMCL, one view times %g", f[i]);
            w = watch_of(xs, g_rows, 2, NI);
            check_fit(run_deep(views, &d, 1, u0, u1, v, &w), 0, &w, u0, R0 * 4 + 4 * KK, u1, R1 * 4 + 4 * KK, v,
                      KK * NI);
        }
        for (j = 0; j < 2; j++) {
            mvnmf_pipeline_params p;
            mvnmf_kernel ks[2];
            double *us[2];
            size_t bytes = 0;
            void *work;
            set_ctx("D5 pipeline_fit method %u, one view times %g", (unsigned)methods[j], f[i]);
            mvnmf_pipeline_params_preset(methods[j], &p);
            p.solver.max_iter = 30;
            p.solver.tol = 0.0;
            p.graph.ka = 2;
            p.graph.kp = 1;
            ks[0] = ks[1] = kernel_of(MVNMF_KERNEL_RBF, 0.0);
            us[0] = u0;
            us[1] = u1;
            fill_sentinel(u0, R0 * KK);
            fill_sentinel(u1, R1 * KK);
            fill_sentinel(v, KK * NI);
            w = watch_of(xs, g_rows, 2, NI);
            if (!CHECK_STATUS(mvnmf_pipeline_fit_workspace(views, 2, ks, 2, KK, &p, &bytes), MVNMF_STATUS_OK))
                continue;
            work = xmalloc(bytes);
            check_fit(mvnmf_pipeline_fit(views, 2, ks, g_labels, 2, KK, &p, us, v, eta, work, bytes, watch_cb, &w,
                                         NULL),
                      0, &w, u0, R0 * KK, u1, R1 * KK, v, KK * NI);
            CHECK(all_finite(eta, 2));
            free(work);
        }
    }
}

/* Issue 31 (E5, E6, E8): MVEL prediction with NaN or overflowing factors was
 * OK with NaN or infinite scores, and its query OK for SIZE_MAX dimensions;
 * mean_std of finite values near DBL_MAX was OK with infinities; the encode
 * queries accepted a CSC view with col_ptr[cols] = SIZE_MAX and the deep
 * encode query a graph over another item count. */
static void test_issue31_queries(void)
{
    note("issue 31: MVEL prediction, mean_std extremes, workspace queries = their calls");
    {
        enum { C = 2, R = 3, N = 4 };
        double q[C * R], h[R * N], qb[C * R], hb[R * N], sc[C * N];
        size_t i, bytes = 0;
        void *w;
        for (i = 0; i < C * R; i++)
            q[i] = 0.1 * (double)(i + 1), qb[i] = 1e200 * q[i];
        for (i = 0; i < R * N; i++)
            h[i] = 0.05 * (double)i - 0.2, hb[i] = 1e200 * h[i];
        CHECK_STATUS(mvnmf_mvel_predict_workspace(C, R, N, &bytes), MVNMF_STATUS_OK);
        w = xmalloc(bytes);
        set_ctx("mvel_predict, NaN in Q");
        q[3] = NAN;
        fill_sentinel(sc, C * N);
        CHECK_STATUS(mvnmf_mvel_predict(q, h, C, R, N, sc, w, bytes), MVNMF_STATUS_NON_FINITE_INPUT);
        CHECK(all_sentinel(sc, C * N));
        q[3] = 0.4;
        set_ctx("mvel_predict, Q and H near 1e200");
        CHECK_STATUS(mvnmf_mvel_predict(qb, hb, C, R, N, sc, w, bytes), MVNMF_STATUS_INPUT_TOO_LARGE);
        CHECK(all_sentinel(sc, C * N));
        set_ctx("mvel_predict, ordinary factors");
        CHECK_STATUS(mvnmf_mvel_predict(q, h, C, R, N, sc, w, bytes), MVNMF_STATUS_OK);
        CHECK(all_finite(sc, C * N));
        set_ctx("mvel_predict_workspace, SIZE_MAX dimensions");
        bytes = 77;
        CHECK_STATUS(mvnmf_mvel_predict_workspace(SIZE_MAX, R, N, &bytes), MVNMF_STATUS_SIZE_OVERFLOW);
        CHECK_STATUS(mvnmf_mvel_predict_workspace(C, R, SIZE_MAX, &bytes), MVNMF_STATUS_SIZE_OVERFLOW);
        CHECK(bytes == 77);
        free(w);
    }
    {
        double x[3] = {DBL_MAX, DBL_MAX, -DBL_MAX}, y[3] = {1e200, -1e200, 1e200}, m = 0.0, sd = 0.0;
        set_ctx("mean_std near DBL_MAX");
        CHECK_STATUS(mvnmf_mean_std(x, 3, &m, &sd), MVNMF_STATUS_OK);
        CHECK(isfinite(m) && isfinite(sd));
        CHECK(fabs(m - DBL_MAX / 3.0) <= 1e-15 * DBL_MAX);
        set_ctx("mean_std of +-1e200");
        CHECK_STATUS(mvnmf_mean_std(y, 3, &m, &sd), MVNMF_STATUS_OK);
        CHECK(fabs(m - 1e200 / 3.0) <= 1e-15 * 1e200);
        CHECK(fabs(sd - 1e200 * sqrt(8.0 / 9.0)) <= 1e-15 * 1e200);
    }
    {
        /* View 1 as CSC (every entry stored), then col_ptr[cols] = SIZE_MAX. */
        mvnmf_view views[2];
        mvnmf_graph g;
        size_t cp[NI + 1], ri[R1 * NI], layers[2] = {4, KK}, i, bytes = 0, ebytes = 0;
        mvnmf_mvsl_params mp = mvsl_preset(MVNMF_MVSL_PRESET_MVSL);
        mvnmf_deep_params dp = deep_preset(MVNMF_DEEP_PRESET_DMCL);
        double u0[R0 * 4 + 4 * KK], u1[R1 * 4 + 4 * KK], v[KK * NI];
        const double *us[2];
        void *w;
        make_views(1.0, 1.0, 31, views);
        for (i = 0; i <= NI; i++)
            cp[i] = R1 * i;
        for (i = 0; i < R1 * NI; i++)
            ri[i] = i % R1;
        views[1].kind = MVNMF_VIEW_CSC;
        views[1].col_ptr = cp;
        views[1].row_idx = ri;
        g = sge_graph();
        CHECK_STATUS(mvnmf_mvsl_encode_workspace(views, 2, &g, KK, &mp, &ebytes), MVNMF_STATUS_OK);
        CHECK_STATUS(mvnmf_deep_encode_workspace(views, 2, &g, layers, 2, &dp, &bytes), MVNMF_STATUS_OK);
        cp[NI] = SIZE_MAX;
        set_ctx("encode queries, CSC col_ptr[cols] = SIZE_MAX");
        bytes = 77;
        CHECK_STATUS(mvnmf_mvsl_encode_workspace(views, 2, &g, KK, &mp, &bytes), MVNMF_STATUS_SIZE_OVERFLOW);
        CHECK_STATUS(mvnmf_deep_encode_workspace(views, 2, &g, layers, 2, &dp, &bytes), MVNMF_STATUS_SIZE_OVERFLOW);
        CHECK_STATUS(mvnmf_beta_nmf_fit_workspace(views, 2, KK, 1.0, NULL, &bytes), MVNMF_STATUS_SIZE_OVERFLOW);
        CHECK(bytes == 77);
        cp[NI] = R1 * NI;
        cp[2] = 0;
        set_ctx("queries, CSC col_ptr decreasing");
        CHECK_STATUS(mvnmf_mvsl_encode_workspace(views, 2, &g, KK, &mp, &bytes), MVNMF_STATUS_MALFORMED_CSC);
        CHECK_STATUS(mvnmf_joint_nmf_fit_workspace(views, 2, KK, NULL, &bytes), MVNMF_STATUS_MALFORMED_CSC);
        cp[2] = 2 * R1;
        set_ctx("deep encode, graph over NI - 1 items");
        g.n = NI - 1;
        CHECK_STATUS(mvnmf_deep_encode_workspace(views, 2, &g, layers, 2, &dp, &bytes), MVNMF_STATUS_DIMENSION_MISMATCH);
        w = xmalloc(ebytes > 1 << 16 ? ebytes : 1 << 16);
        for (i = 0; i < R0 * 4 + 4 * KK; i++)
            u0[i] = 0.5;
        for (i = 0; i < R1 * 4 + 4 * KK; i++)
            u1[i] = 0.5;
        us[0] = u0;
        us[1] = u1;
        fill_sentinel(v, KK * NI);
        CHECK_STATUS(mvnmf_deep_encode(views, 2, &g, layers, 2, &dp, us, v, w, 1 << 16, NULL, NULL, NULL),
                     MVNMF_STATUS_DIMENSION_MISMATCH);
        CHECK(all_sentinel(v, KK * NI));
        set_ctx("beta-NMF query, K with factors beyond PTRDIFF_MAX bytes");
        g.n = NI;
        CHECK_STATUS(mvnmf_beta_nmf_fit_workspace(views, 2, (size_t)1 << 61, 1.0, NULL, &bytes),
                     MVNMF_STATUS_SIZE_OVERFLOW);
        free(w);
    }
}

/* ---- issue 31, E1: the f32 family on views far apart ---- */

/* The objective may not rise by more than 1e-5 of its magnitude (float
 * rounding); it must stay finite. */
typedef struct {
    double prev;
    unsigned calls, rose, nonfinite;
} watch32_t;

static int watch32_cb(const mvnmf_progress *p, void *user)
{
    watch32_t *w = (watch32_t *)user;
    double t = p->objective.total;
    if (p->phase != MVNMF_PHASE_ITERATIONS)
        return 0; /* the pipeline's set-up phases: no iterate */
    if (!(t - t == 0.0))
        w->nonfinite = 1;
    if (w->calls > 0 && t > w->prev + 1e-5 * (fabs(w->prev) > fabs(t) ? fabs(w->prev) : fabs(t))) {
        if (!w->rose && g_verbose)
            printf("    objective rose at iteration %u: %.17g -> %.17g\n", (unsigned)p->iter, w->prev, t);
        w->rose = 1;
    }
    w->prev = t;
    w->calls++;
    return 0;
}

/* ---- issue 31: beta-NMF and JSNMF magnitudes ---- */

static int all_sentinel_f(const float *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (p[i] != (float)SENT)
            return 0;
    return 1;
}

static int all_finite_f(const float *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (!(p[i] - p[i] == 0.0f))
            return 0;
    return 1;
}

/* E1's problem: dense float views of 20 and 15 features x 60 items, uniform
 * [0, 1) times f0 and f1; 30 labeled items in 3 classes; K = 5; 150 iterations. */
enum { E1N = 60, E1R0 = 20, E1R1 = 15, E1K = 5, E1L = 8, E1ITER = 150 };
static float g_e1x0[E1R0 * E1N], g_e1x1[E1R1 * E1N];
static uint32_t g_e1labels[E1N];
/* Big enough for the deep layers [8, 5]: R*8 + 8*5. */
static float g_e1u0[E1R0 * E1L + E1L * E1K], g_e1u1[E1R1 * E1L + E1L * E1K], g_e1v[E1K * E1N];

static void e1_views(float f0, float f1, mvnmf_view_f32 *views)
{
    lcg_t g = lcg_seeded(31);
    size_t i;
    for (i = 0; i < E1R0 * E1N; i++)
        g_e1x0[i] = (float)lcg_next(&g) * f0;
    for (i = 0; i < E1R1 * E1N; i++)
        g_e1x1[i] = (float)lcg_next(&g) * f1;
    for (i = 0; i < E1N; i++)
        g_e1labels[i] = i < 30 ? (uint32_t)(i % 3) : MVNMF_UNLABELED;
    for (i = 0; i < 2; i++) {
        views[i].kind = MVNMF_VIEW_DENSE;
        views[i].rows = i == 0 ? E1R0 : E1R1;
        views[i].cols = E1N;
        views[i].values = i == 0 ? g_e1x0 : g_e1x1;
        views[i].col_stride = views[i].rows;
        views[i].col_ptr = NULL;
        views[i].row_idx = NULL;
    }
}

/* OK, a finite objective that never rose, finite factors (n0, n1: the factor
 * lengths). Before the fix: OK with NaN in U and a NaN objective. */
static void e1_check(uint32_t s, const watch32_t *w, size_t n0, size_t n1)
{
    CHECK_STATUS(s, MVNMF_STATUS_OK);
    CHECK(w->calls == E1ITER + 1 && !w->rose && !w->nonfinite);
    CHECK(all_finite_f(g_e1u0, n0) && all_finite_f(g_e1u1, n1) && all_finite_f(g_e1v, E1K * E1N));
}

/* E1's problem with views times f0 and f1 through the f32 MvSL, MCL, DMCL and
 * pipeline fits (graph and sparsity weights): OK, finite, never rising. */
static void e1_family(float f0, float f1)
{
    static const uint32_t presets[2] = {MVNMF_MVSL_PRESET_MVSL, MVNMF_MVSL_PRESET_MCL};
    static const uint32_t methods[2] = {MVNMF_METHOD_MVSL_S, MVNMF_METHOD_MCL};
    mvnmf_view_f32 views[2];
    float *us[2];
    size_t j, bytes;
    void *work;
    mvnmf_graph g;
    us[0] = g_e1u0;
    us[1] = g_e1u1;
    e1_views(f0, f1, views);
    memset(&g, 0, sizeof g);
    g.kind = MVNMF_GRAPH_SGE;
    g.n = E1N;
    g.labels = g_e1labels;
    g.n_classes = 3;
    for (j = 0; j < 2; j++) {
        watch32_t w = {0.0, 0, 0, 0};
        mvnmf_mvsl_params p;
        mvnmf_mvsl_params_preset(presets[j], &p);
        p.max_iter = E1ITER;
        p.tol = 0.0;
        set_ctx("mvsl_fit_f32 preset %u, views times %g and %g", (unsigned)presets[j], f0, f1);
        bytes = 0;
        if (!CHECK_STATUS(mvnmf_mvsl_fit_f32_workspace(views, 2, &g, E1K, &p, &bytes), MVNMF_STATUS_OK))
            continue;
        work = xmalloc(bytes);
        e1_check(mvnmf_mvsl_fit_f32(views, 2, &g, E1K, &p, us, g_e1v, work, bytes, watch32_cb, &w, NULL), &w,
                 E1R0 * E1K, E1R1 * E1K);
        free(work);
    }
    {
        watch32_t w = {0.0, 0, 0, 0};
        size_t layers[2] = {E1L, E1K};
        mvnmf_deep_params d;
        mvnmf_deep_params_preset(MVNMF_DEEP_PRESET_DMCL, &d);
        d.top.max_iter = E1ITER;
        d.top.tol = 0.0;
        set_ctx("deep_fit_f32 DMCL, views times %g and %g", f0, f1);
        bytes = 0;
        if (CHECK_STATUS(mvnmf_deep_fit_f32_workspace(views, 2, &g, layers, 2, &d, &bytes), MVNMF_STATUS_OK)) {
            work = xmalloc(bytes);
            e1_check(mvnmf_deep_fit_f32(views, 2, &g, layers, 2, &d, us, g_e1v, work, bytes, watch32_cb, &w, NULL),
                     &w, E1R0 * E1L + E1L * E1K, E1R1 * E1L + E1L * E1K);
            free(work);
        }
    }
    for (j = 0; j < 2; j++) {
        watch32_t w = {0.0, 0, 0, 0};
        mvnmf_pipeline_params p;
        mvnmf_kernel ks[2];
        double eta[2];
        mvnmf_pipeline_params_preset(methods[j], &p);
        p.solver.max_iter = E1ITER;
        p.solver.tol = 0.0;
        ks[0] = ks[1] = kernel_of(MVNMF_KERNEL_LINEAR, 0.0);
        set_ctx("pipeline_fit_f32 method %u, views times %g and %g", (unsigned)methods[j], f0, f1);
        bytes = 0;
        if (!CHECK_STATUS(mvnmf_pipeline_fit_f32_workspace(views, 2, ks, 3, E1K, &p, &bytes), MVNMF_STATUS_OK))
            continue;
        work = xmalloc(bytes);
        e1_check(mvnmf_pipeline_fit_f32(views, 2, ks, g_e1labels, 3, E1K, &p, us, g_e1v, eta, work, bytes,
                                        watch32_cb, &w, NULL),
                 &w, E1R0 * E1K, E1R1 * E1K);
        CHECK(all_finite(eta, 2));
        free(work);
    }
}

static void test_e1(void)
{
    static const float f[3][2] = {{1e-4f, 1e4f}, {1e-30f, 1e-30f}, {1e4f, 1e-30f}};
    size_t i;
    note("E1 (issue 31): the f32 MvSL family on views far apart");
    for (i = 0; i < 3; i++)
        e1_family(f[i][0], f[i][1]);
}

/* A beta-NMF fit of the h views (double), 60 iterations, default clip. */
static uint32_t run_beta(const mvnmf_view *views, size_t h, double beta, double *u0, double *u1, double *v,
                         watch_t *w)
{
    mvnmf_nmf_params p = mvnmf_nmf_params_default();
    double *us[2];
    size_t bytes = 0;
    void *work;
    uint32_t s;
    p.max_iter = 60;
    p.tol = 0.0;
    us[0] = u0;
    us[1] = u1;
    fill_sentinel(u0, R0 * KK);
    fill_sentinel(u1, R1 * KK);
    fill_sentinel(v, KK * NI);
    if (!CHECK_STATUS(mvnmf_beta_nmf_fit_workspace(views, h, KK, beta, &p, &bytes), MVNMF_STATUS_OK))
        return 999;
    work = xmalloc(bytes);
    s = mvnmf_beta_nmf_fit(views, h, KK, beta, -1.0, NULL, &p, us, v, work, bytes, watch_cb, w, NULL);
    free(work);
    return s;
}

/* E2: beta_nmf_fit with entries near DBL_MAX (any beta) and beta_nmf_fit_f32
 * with entries near FLT_MAX/2 gave OK with non-finite factors: now
 * INPUT_TOO_LARGE, nothing written; denormal data (beta = 0.5, 1) is fitted. */
static void test_e2(void)
{
    static const double betas[4] = {0.0, 0.5, 1.0, 2.0};
    double u0[R0 * KK], u1[R1 * KK], v[KK * NI];
    const double *xs[2];
    mvnmf_view views[2];
    size_t i, j;
    note("E2: beta_nmf_fit at DBL_MAX, denormals, FLT_MAX/2");
    xs[0] = g_x0;
    xs[1] = g_x1;
    for (i = 0; i < 4; i++) {
        watch_t w;
        set_ctx("E2 beta_nmf_fit near DBL_MAX, beta %g", betas[i]);
        make_views(DBL_MAX / 2.0, 1.0, 5, views);
        w = watch_of(xs, g_rows, 1, NI);
        check_fit(run_beta(views, 1, betas[i], u0, u1, v, &w), 1, &w, u0, R0 * KK, u1, 0, v, KK * NI);
        set_ctx("E2 beta_nmf_fit on denormals, beta %g", betas[i]);
        make_views(1e-310, 1.0, 5, views);
        w = watch_of(xs, g_rows, 1, NI);
        check_fit(run_beta(views, 1, betas[i], u0, u1, v, &w), 0, &w, u0, R0 * KK, u1, 0, v, KK * NI);
    }
    for (i = 0; i < 4; i++) {
        float xf[R0 * NI], uf[R0 * KK], vf[KK * NI];
        float *us[1];
        mvnmf_view_f32 fv;
        mvnmf_nmf_params p = mvnmf_nmf_params_default();
        size_t bytes = 0;
        void *work;
        uint32_t s;
        set_ctx("E2 beta_nmf_fit_f32 near FLT_MAX/2, beta %g", betas[i]);
        fill_uniform(g_x0, R0 * NI, 7);
        for (j = 0; j < R0 * NI; j++)
            xf[j] = (float)(g_x0[j] / 1.05 * (FLT_MAX / 2.0));
        for (j = 0; j < R0 * KK; j++)
            uf[j] = (float)SENT;
        for (j = 0; j < KK * NI; j++)
            vf[j] = (float)SENT;
        fv = dense_view_f32(xf, R0, NI);
        us[0] = uf;
        p.max_iter = 30;
        if (!CHECK_STATUS(mvnmf_beta_nmf_fit_f32_workspace(&fv, 1, KK, betas[i], &p, &bytes), MVNMF_STATUS_OK))
            continue;
        work = xmalloc(bytes);
        s = mvnmf_beta_nmf_fit_f32(&fv, 1, KK, betas[i], -1.0, NULL, &p, us, vf, work, bytes, NULL, NULL, NULL);
        CHECK_STATUS(s, MVNMF_STATUS_INPUT_TOO_LARGE);
        CHECK(all_sentinel_f(uf, R0 * KK) && all_sentinel_f(vf, KK * NI));
        /* The same data near 1e30 (inside the float rule, 2^103) is fitted. */
        for (j = 0; j < R0 * NI; j++)
            xf[j] = (float)(g_x0[j] * 1e30);
        s = mvnmf_beta_nmf_fit_f32(&fv, 1, KK, betas[i], -1.0, NULL, &p, us, vf, work, bytes, NULL, NULL, NULL);
        CHECK_STATUS(s, MVNMF_STATUS_OK);
        CHECK(all_finite_f(uf, R0 * KK) && all_finite_f(vf, KK * NI));
        free(work);
    }
}

/* E3: views near 1e-10 and 1e10, beta = 0.5 and 0 (and 1, 2), 60 iterations:
 * the objective rose and ended infinite with OK; now it never rises. */
static void test_e3(void)
{
    static const double betas[4] = {0.0, 0.5, 1.0, 2.0};
    double u0[R0 * KK], u1[R1 * KK], v[KK * NI];
    const double *xs[2];
    mvnmf_view views[2];
    size_t i;
    note("E3: beta_nmf_fit on views near 1e-10 and 1e10");
    xs[0] = g_x0;
    xs[1] = g_x1;
    for (i = 0; i < 4; i++) {
        watch_t w;
        set_ctx("E3 beta_nmf_fit, views at 1e-10 and 1e10, beta %g", betas[i]);
        make_views(1e-10, 1e10, 9, views);
        w = watch_of(xs, g_rows, 2, NI);
        check_fit(run_beta(views, 2, betas[i], u0, u1, v, &w), 0, &w, u0, R0 * KK, u1, R1 * KK, v, KK * NI);
    }
}

/* E4: jsnmf_fit with lambda = {1e308, 1e-308} gave OK with non-finite
 * factors: now BAD_PARAMETER, nothing written; jsnmf_fit_f32 on float data
 * near 1e30 likewise: now INPUT_TOO_LARGE. */
static void test_e4(void)
{
    static const double lam[2] = {1e308, 1e-308};
    static const double lam_ok[2] = {1e290, 1e-308};
    const size_t ranks[2] = {2, 3};
    double w[R0 * 1], ua[R0 * 1], ub[R0 * 2], ha[2 * NI], hb[3 * NI];
    double *us[2], *hs[2];
    const double *xs[2];
    mvnmf_view views[2];
    mvnmf_jsnmf_params p = mvnmf_jsnmf_params_default();
    size_t bytes = 0, j;
    void *work;
    watch_t wt;
    uint32_t s;
    note("E4: jsnmf_fit with lambda = {1e308, 1e-308}; jsnmf_fit_f32 near 1e30");
    p.max_iter = 40;
    p.tol = 0.0;
    us[0] = ua;
    us[1] = ub;
    hs[0] = ha;
    hs[1] = hb;
    xs[0] = g_x0;
    xs[1] = g_x1;
    /* Two sources over R0 terms (the second view's items reused). */
    make_views(1.0, 1.0, 13, views);
    views[1] = dense_view(g_x0, R0, NI);
    set_ctx("E4 jsnmf_fit lambda {1e308, 1e-308}");
    if (!CHECK_STATUS(mvnmf_jsnmf_fit_workspace(views, 2, 1, ranks, &p, &bytes), MVNMF_STATUS_OK))
        return;
    work = xmalloc(bytes);
    fill_sentinel(w, R0);
    fill_sentinel(ua, R0);
    fill_sentinel(ub, 2 * R0);
    fill_sentinel(ha, 2 * NI);
    fill_sentinel(hb, 3 * NI);
    wt = watch_of(xs, g_rows, 1, NI);
    s = mvnmf_jsnmf_fit(views, 2, 1, ranks, lam, &p, w, us, hs, work, bytes, watch_cb, &wt, NULL);
    CHECK_STATUS(s, MVNMF_STATUS_BAD_PARAMETER);
    CHECK(wt.calls == 0);
    CHECK(all_sentinel(w, R0) && all_sentinel(ua, R0) && all_sentinel(ub, 2 * R0) && all_sentinel(ha, 2 * NI) &&
          all_sentinel(hb, 3 * NI));
    set_ctx("E4 jsnmf_fit lambda {1e290, 1e-308}");
    wt = watch_of(xs, g_rows, 1, NI);
    wt.tol *= 1e290;
    s = mvnmf_jsnmf_fit(views, 2, 1, ranks, lam_ok, &p, w, us, hs, work, bytes, watch_cb, &wt, NULL);
    CHECK_STATUS(s, MVNMF_STATUS_OK);
    CHECK(wt.calls > 0 && !wt.rose && !wt.nonfinite);
    CHECK(all_finite(w, R0) && all_finite(ua, R0) && all_finite(ub, 2 * R0) && all_finite(ha, 2 * NI) &&
          all_finite(hb, 3 * NI));
    free(work);
    {
        float xf[R0 * NI], wf[R0], uaf[R0], ubf[2 * R0], haf[2 * NI], hbf[3 * NI];
        float *usf[2], *hsf[2];
        mvnmf_view_f32 fv[2];
        set_ctx("E4 jsnmf_fit_f32 near 1e30");
        for (j = 0; j < R0 * NI; j++)
            xf[j] = (float)(g_x0[j] * 1e30);
        fv[0] = fv[1] = dense_view_f32(xf, R0, NI);
        usf[0] = uaf;
        usf[1] = ubf;
        hsf[0] = haf;
        hsf[1] = hbf;
        for (j = 0; j < R0; j++)
            wf[j] = uaf[j] = (float)SENT;
        for (j = 0; j < 2 * R0; j++)
            ubf[j] = (float)SENT;
        for (j = 0; j < 2 * NI; j++)
            haf[j] = (float)SENT;
        for (j = 0; j < 3 * NI; j++)
            hbf[j] = (float)SENT;
        if (!CHECK_STATUS(mvnmf_jsnmf_fit_f32_workspace(fv, 2, 1, ranks, &p, &bytes), MVNMF_STATUS_OK))
            return;
        work = xmalloc(bytes);
        s = mvnmf_jsnmf_fit_f32(fv, 2, 1, ranks, NULL, &p, wf, usf, hsf, work, bytes, NULL, NULL, NULL);
        CHECK_STATUS(s, MVNMF_STATUS_INPUT_TOO_LARGE);
        CHECK(all_sentinel_f(wf, R0) && all_sentinel_f(uaf, R0) && all_sentinel_f(ubf, 2 * R0) &&
              all_sentinel_f(haf, 2 * NI) && all_sentinel_f(hbf, 3 * NI));
        /* Near 1e14 (inside the float rule): fitted, finite. */
        for (j = 0; j < R0 * NI; j++)
            xf[j] = (float)(g_x0[j] * 1e14);
        s = mvnmf_jsnmf_fit_f32(fv, 2, 1, ranks, NULL, &p, wf, usf, hsf, work, bytes, NULL, NULL, NULL);
        CHECK_STATUS(s, MVNMF_STATUS_OK);
        CHECK(all_finite_f(wf, R0) && all_finite_f(uaf, R0) && all_finite_f(ubf, 2 * R0) &&
              all_finite_f(haf, 2 * NI) && all_finite_f(hbf, 3 * NI));
        free(work);
    }
}

/* Issue 31, JSNMF on subnormal data: sources near 1e-161 and 1e-160 (1/2 ||X||^2
 * subnormal) with lambda = {1e-82, 1e208}, and near 4e-162 and 5e-165 (1/2 ||X||^2
 * of the second 0 in double) with the default weights: the objective rose at
 * iteration 1-2 and the guard froze the fit (fuzz seeds 0x2028955, 0x4016d7f).
 * Now OK, finite, never rising (1e-12 of the start's objective) and falling. */
typedef struct {
    double first, prev, last;
    unsigned calls, rose;
} watch_rel_t;

static int watch_rel_cb(const mvnmf_progress *p, void *user)
{
    watch_rel_t *w = (watch_rel_t *)user;
    double t = p->objective.total;
    if (p->phase != MVNMF_PHASE_ITERATIONS)
        return 0; /* the pipeline's set-up phases: no iterate */
    if (w->calls == 0)
        w->first = t;
    else if (t > w->prev + 1e-12 * w->first || !(t - t == 0.0))
        w->rose = 1;
    w->prev = w->last = t;
    w->calls++;
    return 0;
}

static void test_jsnmf_subnormal(void)
{
    static double xa[R0 * NI], xb[R0 * NI];
    static const double lam[2] = {1e-82, 1e208};
    static const double scales[2][2] = {{1e-161, 1e-160}, {4e-162, 5e-165}};
    const size_t ranks[2] = {2, 3};
    double w[R0], ua[R0], ub[R0 * 2], ha[2 * NI], hb[3 * NI];
    double *us[2], *hs[2];
    mvnmf_view views[2];
    mvnmf_jsnmf_params p = mvnmf_jsnmf_params_default();
    size_t bytes = 0, j;
    int c;
    void *work;
    note("issue 31: jsnmf_fit on subnormal data, lambda up to 1e208");
    p.max_iter = 40;
    p.tol = 0.0;
    us[0] = ua;
    us[1] = ub;
    hs[0] = ha;
    hs[1] = hb;
    make_views(1.0, 1.0, 13, views);
    for (c = 0; c < 2; c++) {
        watch_rel_t wt = {0.0, 0.0, 0.0, 0, 0};
        uint32_t s;
        set_ctx(c == 0 ? "jsnmf_fit at 1e-161, 1e-160, lambda {1e-82, 1e208}"
                       : "jsnmf_fit at 4e-162, 5e-165, default lambda");
        for (j = 0; j < R0 * NI; j++) {
            xa[j] = g_x0[j] * scales[c][0];
            xb[j] = g_x0[(j * 7) % (R0 * NI)] * scales[c][1];
        }
        views[0] = dense_view(xa, R0, NI);
        views[1] = dense_view(xb, R0, NI);
        if (!CHECK_STATUS(mvnmf_jsnmf_fit_workspace(views, 2, 1, ranks, &p, &bytes), MVNMF_STATUS_OK))
            return;
        work = xmalloc(bytes);
        s = mvnmf_jsnmf_fit(views, 2, 1, ranks, c == 0 ? lam : NULL, &p, w, us, hs, work, bytes, watch_rel_cb, &wt,
                            NULL);
        CHECK_STATUS(s, MVNMF_STATUS_OK);
        CHECK(all_finite(w, R0) && all_finite(ua, R0) && all_finite(ub, 2 * R0) && all_finite(ha, 2 * NI) &&
              all_finite(hb, 3 * NI));
        CHECK(wt.calls == 41 && wt.first > 0.0);
        CHECK(!wt.rose);
        CHECK(wt.last < 0.9 * wt.first);
        free(work);
    }
}

/* Issue 31, beta-NMF classes once open (fuzz seeds 0x201d4e1 .. 0x30128a5):
 *  - a given start far below CSC data (KL): the start check skipped CSC views
 *    and the fit ended INTERNAL; now BAD_PARAMETER, nothing written;
 *  - beta_nmf_fit_f32 on float views near 1e-20 and 1e30: its products were
 *    held in float and it rose or ended INTERNAL; now OK, finite, never rising;
 *  - views more than 2^(256/beta) apart (beta in (0, 2)): INPUT_TOO_LARGE,
 *    nothing written. */
static void test_issue31_beta(void)
{
    static const double betas[4] = {0.0, 0.5, 1.0, 2.0};
    double u0[R0 * KK], u1[R1 * KK], v[KK * NI];
    double d0[R0 * NI], d1[R1 * NI];
    const double *xs[2];
    mvnmf_view views[2];
    size_t cp[NI + 1], ri[R0 * NI], i, j;
    note("issue 31: beta_nmf_fit CSC start check, f32 views far apart, views too far apart");
    /* A given start of ones under CSC data near 1e200: refused. */
    {
        mvnmf_nmf_params p = mvnmf_nmf_params_default();
        double *us[1];
        size_t bytes = 0;
        void *work;
        fill_uniform(d0, R0 * NI, 21);
        for (j = 0; j < R0 * NI; j++)
            d0[j] = (0.05 + d0[j]) * 1e200;
        for (j = 0; j <= NI; j++)
            cp[j] = R0 * j;
        for (j = 0; j < R0 * NI; j++)
            ri[j] = j % R0;
        memset(&views[0], 0, sizeof views[0]);
        views[0].kind = MVNMF_VIEW_CSC;
        views[0].rows = R0;
        views[0].cols = NI;
        views[0].values = d0;
        views[0].col_ptr = cp;
        views[0].row_idx = ri;
        p.max_iter = 20;
        p.init = MVNMF_INIT_GIVEN;
        set_ctx("beta_nmf_fit KL, CSC data near 1e200, start 1");
        for (j = 0; j < R0 * KK; j++)
            u0[j] = 1.0;
        for (j = 0; j < KK * NI; j++)
            v[j] = 1.0;
        us[0] = u0;
        if (CHECK_STATUS(mvnmf_beta_nmf_fit_workspace(views, 1, KK, 1.0, &p, &bytes), MVNMF_STATUS_OK)) {
            work = xmalloc(bytes);
            CHECK_STATUS(mvnmf_beta_nmf_fit(views, 1, KK, 1.0, -1.0, NULL, &p, us, v, work, bytes, NULL, NULL, NULL),
                         MVNMF_STATUS_BAD_PARAMETER);
            for (j = 0; j < R0 * KK; j++)
                CHECK(u0[j] == 1.0);
            for (j = 0; j < KK * NI; j++)
                CHECK(v[j] == 1.0);
            free(work);
        }
    }
    /* Float views near 1e-20 and 1e30, every beta, default clip. */
    for (i = 0; i < 4; i++) {
        float f0[R0 * NI], f1[R1 * NI], uf0[R0 * KK], uf1[R1 * KK], vf[KK * NI];
        float *us[2];
        mvnmf_view_f32 fv[2];
        mvnmf_nmf_params p = mvnmf_nmf_params_default();
        size_t bytes = 0;
        void *work;
        watch_t w;
        set_ctx("beta_nmf_fit_f32, views at 1e-20 and 1e30, beta %g", betas[i]);
        fill_uniform(d0, R0 * NI, 23);
        fill_uniform(d1, R1 * NI, 24);
        for (j = 0; j < R0 * NI; j++) {
            f0[j] = (float)((0.05 + d0[j]) * 1e-20);
            d0[j] = f0[j];
        }
        for (j = 0; j < R1 * NI; j++) {
            f1[j] = (float)((0.05 + d1[j]) * 1e30);
            d1[j] = f1[j];
        }
        for (j = 0; j < R0 * KK; j++)
            uf0[j] = (float)SENT;
        for (j = 0; j < R1 * KK; j++)
            uf1[j] = (float)SENT;
        for (j = 0; j < KK * NI; j++)
            vf[j] = (float)SENT;
        fv[0] = dense_view_f32(f0, R0, NI);
        fv[1] = dense_view_f32(f1, R1, NI);
        us[0] = uf0;
        us[1] = uf1;
        xs[0] = d0;
        xs[1] = d1;
        w = watch_of(xs, g_rows, 2, NI);
        /* Single precision: the objective may wobble by float rounding. */
        w.tol *= 1e6;
        p.max_iter = 60;
        p.tol = 0.0;
        if (!CHECK_STATUS(mvnmf_beta_nmf_fit_f32_workspace(fv, 2, KK, betas[i], &p, &bytes), MVNMF_STATUS_OK))
            continue;
        work = xmalloc(bytes);
        CHECK_STATUS(mvnmf_beta_nmf_fit_f32(fv, 2, KK, betas[i], -1.0, NULL, &p, us, vf, work, bytes, watch_cb, &w,
                                            NULL),
                     MVNMF_STATUS_OK);
        CHECK(w.calls > 0 && !w.rose && !w.nonfinite);
        CHECK(all_finite_f(uf0, R0 * KK) && all_finite_f(uf1, R1 * KK) && all_finite_f(vf, KK * NI));
        free(work);
    }
    /* Views near 1e-100 and 1e100 (2^664 apart): refused for beta 0.5 and 1,
     * fitted for beta 0 and 2 (no such rule). */
    xs[0] = g_x0;
    xs[1] = g_x1;
    for (i = 0; i < 4; i++) {
        watch_t w;
        int refused = betas[i] > 0.0 && betas[i] < 2.0;
        set_ctx("beta_nmf_fit, views at 1e-100 and 1e100, beta %g", betas[i]);
        make_views(1e-100, 1e100, 25, views);
        w = watch_of(xs, g_rows, 2, NI);
        check_fit(run_beta(views, 2, betas[i], u0, u1, v, &w), refused, &w, u0, R0 * KK, u1, R1 * KK, v, KK * NI);
    }
}

/* Issue 31 (fuzz seed 0x7000ada): jsnmf_fit_f32 on subnormal float data
 * (1e-40 and 1e-42, below FLT_MIN): its products were formed on the caller's
 * data before the per-source scale (a few significant bits) and the objective
 * rose; now OK, finite, never rising at float's precision, and falling. */
static void test_issue31_jsnmf_f32_subnormal(void)
{
    static float xa[R0 * NI], xb[R0 * NI];
    static double base[R0 * NI];
    const size_t ranks[2] = {2, 3};
    float w[R0], ua[R0], ub[R0 * 2], ha[2 * NI], hb[3 * NI];
    float *us[2], *hs[2];
    mvnmf_view_f32 views[2];
    mvnmf_jsnmf_params p = mvnmf_jsnmf_params_default();
    size_t bytes = 0, j;
    watch32_t wt = {0.0, 0, 0, 0};
    double first = 0.0;
    void *work;
    uint32_t s;
    note("issue 31: jsnmf_fit_f32 on subnormal float data");
    p.max_iter = 40;
    p.tol = 0.0;
    us[0] = ua;
    us[1] = ub;
    hs[0] = ha;
    hs[1] = hb;
    fill_uniform(base, R0 * NI, 29);
    for (j = 0; j < R0 * NI; j++) {
        xa[j] = (float)((0.05 + base[j]) * 1e-40);
        xb[j] = (float)((0.05 + base[(j * 7) % (R0 * NI)]) * 1e-42);
    }
    views[0] = dense_view_f32(xa, R0, NI);
    views[1] = dense_view_f32(xb, R0, NI);
    set_ctx("jsnmf_fit_f32 at 1e-40 and 1e-42");
    if (!CHECK_STATUS(mvnmf_jsnmf_fit_f32_workspace(views, 2, 1, ranks, &p, &bytes), MVNMF_STATUS_OK))
        return;
    work = xmalloc(bytes);
    s = mvnmf_jsnmf_fit_f32(views, 2, 1, ranks, NULL, &p, w, us, hs, work, bytes, watch32_cb, &wt, NULL);
    CHECK_STATUS(s, MVNMF_STATUS_OK);
    CHECK(all_finite_f(w, R0) && all_finite_f(ua, R0) && all_finite_f(ub, 2 * R0) && all_finite_f(ha, 2 * NI) &&
          all_finite_f(hb, 3 * NI));
    CHECK(wt.calls == 41 && !wt.rose && !wt.nonfinite);
    /* It moves: the last objective below 0.9 of the start's (run once more, watching the first). */
    {
        mvnmf_report rep;
        s = mvnmf_jsnmf_fit_f32(views, 2, 1, ranks, NULL, &p, w, us, hs, work, bytes, NULL, NULL, &rep);
        CHECK_STATUS(s, MVNMF_STATUS_OK);
        first = rep.initial.total;
        CHECK(first > 0.0 && rep.objective.total < 0.9 * first);
    }
    free(work);
}

/* Issue 31 (fuzz seed 0x200d38d): beta_nmf_fit, KL, one masked 4 x 4 view
 * near 1e-46 spread over 14 decades, with zeros, a given start about 1e46
 * above the data, clip 1e-12 and the default: the clip capped x/y where
 * y < clip, a factor pair shrank until y = 0 at an observed x > 0 and the fit
 * ended INTERNAL; the clip now acts only where x = 0: OK, finite, never rising. */
static void test_issue31_beta_clip(void)
{
    static const double x[16] = {0.0, 0.0, 5.928901078828264e-50, 7.262064535823769e-51,
                                 0.0, 2.9934831628066242e-56, 0.0, 1.7207297455117518e-57,
                                 2.2877903121789016e-53, 8.920889519422416e-60, 1.9630164695477233e-47,
                                 9.096725638827827e-55, 0.0, 3.552991740646627e-46,
                                 7.621965402841634e-52, 7.198380153240428e-59};
    static const uint8_t mask[16] = {0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 1};
    static const double u0[8] = {0.5529154379280902, 0.5590986870886917, 0.5472519038190725, 0.6592349309954595,
                                 0.262621614623601,  0.4852446365744477, 0.40726039822559756, 0.9718915503766227};
    static const double v0[8] = {0.055219177834043176, 0.025965450591014294, 0.702695358705992, 0.18400394188601987,
                                 0.7895748309792631,   0.04634204705277567,  0.17936530226054404, 0.9345065697357325};
    static const double clips[2] = {1e-12, -1.0};
    const uint8_t *masks[1];
    double u[8], v[8], *us[1];
    mvnmf_view view = dense_view(x, 4, 4);
    size_t c, j, bytes = 0;
    void *work;
    note("issue 31: beta_nmf_fit, the clip only where x = 0");
    masks[0] = mask;
    us[0] = u;
    for (c = 0; c < 2; c++) {
        mvnmf_nmf_params p = mvnmf_nmf_params_default();
        watch_rel_t wt = {0.0, 0.0, 0.0, 0, 0};
        p.max_iter = 60;
        p.tol = 0.0;
        p.init = MVNMF_INIT_GIVEN;
        set_ctx("beta_nmf_fit KL, masked view near 1e-46, clip %g", clips[c]);
        memcpy(u, u0, sizeof u);
        memcpy(v, v0, sizeof v);
        if (!CHECK_STATUS(mvnmf_beta_nmf_fit_workspace(&view, 1, 2, 1.0, &p, &bytes), MVNMF_STATUS_OK))
            return;
        work = xmalloc(bytes);
        CHECK_STATUS(mvnmf_beta_nmf_fit(&view, 1, 2, 1.0, clips[c], masks, &p, us, v, work, bytes, watch_rel_cb, &wt,
                                        NULL),
                     MVNMF_STATUS_OK);
        CHECK(all_finite(u, 8) && all_finite(v, 8));
        CHECK(wt.calls == 61 && !wt.rose && wt.last < wt.first);
        for (j = 0; j < 8; j++)
            CHECK(u[j] >= 0.0 && v[j] >= 0.0);
        free(work);
    }
}

/* Issue 31, the last open class (fuzz seeds 0x7014bc7, 0x7002640): f32 fits of
 * views near 1e-24 whose graph or sparsity weight multiplies nothing (beta > 0
 * without a graph, or with a CSR graph of zero weights; alpha > 0 without a group
 * norm). Such a weight stopped the data's scale-up at 2^32: U'U of the scaled data
 * fell below float's normal range and the objective rose (by 3e-3 of itself).
 * Now: OK, finite, never rising, and V bit for bit the fit with those weights at 0. */
static void test_issue31_f32_inert_weights(void)
{
    static size_t rp[E1N + 1], ci[2 * E1N];
    static double wz[2 * E1N];
    static float vref[E1K * E1N];
    mvnmf_view_f32 views[2];
    float *us[2];
    size_t i, j, bytes;
    void *work;
    note("issue 31: f32 fits near 1e-24 with weights that multiply nothing");
    us[0] = g_e1u0;
    us[1] = g_e1u1;
    e1_views(1e-24f, 1e-24f, views);
    /* A ring (item i linked to i - 1 and i + 1, columns sorted), weights 0. */
    for (i = 0; i < E1N; i++) {
        size_t a = (i + E1N - 1) % E1N, b = (i + 1) % E1N;
        rp[i] = 2 * i;
        ci[2 * i] = a < b ? a : b;
        ci[2 * i + 1] = a < b ? b : a;
        wz[2 * i] = wz[2 * i + 1] = 0.0;
    }
    rp[E1N] = 2 * E1N;
    for (j = 0; j < 3; j++) {
        /* j = 0: the reference (no weights); 1: no graph; 2: the zero CSR graph. */
        watch32_t w = {0.0, 0, 0, 0};
        mvnmf_mvsl_params p;
        mvnmf_graph g;
        mvnmf_mvsl_params_preset(MVNMF_MVSL_PRESET_GNMF, &p);
        p.max_iter = E1ITER;
        p.tol = 0.0;
        p.beta = j == 0 ? 0.0 : 0.02;
        p.alpha = j == 0 ? 0.0 : 15.0;
        p.sparsity = MVNMF_SPARSITY_NONE;
        memset(&g, 0, sizeof g);
        g.kind = j == 2 ? MVNMF_GRAPH_CSR : MVNMF_GRAPH_NONE;
        g.n = E1N;
        if (j == 2) {
            g.affinity_row_ptr = rp;
            g.affinity_col_idx = ci;
            g.affinity_weights = wz;
        }
        set_ctx("mvsl_fit_f32 at 1e-24, %s", j == 0 ? "no weights" : j == 1 ? "no graph" : "zero CSR graph");
        bytes = 0;
        if (!CHECK_STATUS(mvnmf_mvsl_fit_f32_workspace(views, 2, &g, E1K, &p, &bytes), MVNMF_STATUS_OK))
            continue;
        work = xmalloc(bytes);
        e1_check(mvnmf_mvsl_fit_f32(views, 2, &g, E1K, &p, us, g_e1v, work, bytes, watch32_cb, &w, NULL), &w,
                 E1R0 * E1K, E1R1 * E1K);
        if (j == 0)
            memcpy(vref, g_e1v, sizeof vref);
        else
            CHECK(memcmp(vref, g_e1v, sizeof vref) == 0);
        free(work);
    }
    for (j = 0; j < 2; j++) {
        /* DMCL without its graph and group norm (0x7002640): j = 0 the reference. */
        watch32_t w = {0.0, 0, 0, 0};
        size_t layers[2] = {E1L, E1K};
        mvnmf_deep_params d;
        mvnmf_graph g;
        mvnmf_deep_params_preset(MVNMF_DEEP_PRESET_DMCL, &d);
        d.top.max_iter = E1ITER;
        d.top.tol = 0.0;
        d.top.sparsity = MVNMF_SPARSITY_NONE;
        d.top.beta = j == 0 ? 0.0 : 0.2;
        d.top.alpha = j == 0 ? 0.0 : 10.0;
        d.top.gamma = 0.0;
        memset(&g, 0, sizeof g);
        g.kind = MVNMF_GRAPH_NONE;
        g.n = E1N;
        set_ctx("deep_fit_f32 at 1e-24, %s", j == 0 ? "no weights" : "no graph");
        bytes = 0;
        if (!CHECK_STATUS(mvnmf_deep_fit_f32_workspace(views, 2, &g, layers, 2, &d, &bytes), MVNMF_STATUS_OK))
            continue;
        work = xmalloc(bytes);
        e1_check(mvnmf_deep_fit_f32(views, 2, &g, layers, 2, &d, us, g_e1v, work, bytes, watch32_cb, &w, NULL), &w,
                 E1R0 * E1L + E1L * E1K, E1R1 * E1L + E1L * E1K);
        if (j == 0)
            memcpy(vref, g_e1v, sizeof vref);
        else
            CHECK(memcmp(vref, g_e1v, sizeof vref) == 0);
        free(work);
    }
}

/* Issue 31, fuzz seed 0x1321c9e3: a deep f32 fit whose objective has no
 * minimiser. Three layers [3, 5, 2] without the box, data near 1e-7, gamma =
 * 0.005 on V and alpha = 0 under the L1,inf norm, a CSR graph: U -> cU,
 * V -> V/c keeps the reconstruction and sends gamma sum(V) to 0, so the
 * descent ran V from 1 to 3e-13 in 12 iterations and U^T U past FLT_MAX at
 * the 13th (INTERNAL). Now the layers nothing bounds are capped
 * (steps/scale.rs `factor_cap`): OK, finite, the objective never rising. */
static void test_issue31_deep_f32_no_minimiser(void)
{
    /* The fuzz case's view (3 x 6, column stride 6) and graph (6 items). */
    static const float x[33] = {3.273348e-8f, 2.5567669e-8f, 7.632416e-8f, 8.184174e-8f, 1.2839668e-8f,
                                5.072829e-9f, 2.6946521e-8f, 6.588946e-8f, 3.4514933e-8f, 2.5939196e-8f,
                                7.201816e-8f, 0.0f,          2.5943157e-8f, 0.0f,         6.817359e-8f,
                                0.0f,         4.307933e-8f, 7.899066e-8f, 3.8945437e-8f, 0.0f,
                                9.144298e-8f, 2.8533663e-8f, 9.749009e-8f, 5.4705854e-8f, 1.290387e-8f,
                                1.4082733e-8f, 9.648731e-8f, 2.5204827e-8f, 5.082479e-8f, 5.2992224e-8f,
                                1.1214583e-8f, 1e-7f,        6.147934e-8f};
    static const size_t arp[7] = {0, 3, 6, 9, 12, 13, 16};
    static const size_t aci[16] = {1, 2, 5, 0, 2, 3, 0, 1, 5, 1, 4, 5, 3, 0, 2, 3};
    static const double aw[16] = {0.13535827422723112, 0.5, 1.0, 0.13535827422723112, 1.0, 0.5, 0.5, 1.0,
                                  2.0, 0.5, 0.5, 1.0, 0.5, 1.0, 2.0, 1.0};
    static const size_t prp[7] = {0, 3, 7, 8, 11, 13, 14};
    static const size_t pci[14] = {1, 2, 3, 0, 3, 4, 5, 0, 0, 1, 4, 1, 3, 1};
    static const double pw[14] = {2.0, 0.7669484839060162, 1.0, 2.0, 2.0, 1.0, 0.5,
                                  0.7669484839060162, 1.0, 2.0, 2.0, 1.0, 2.0, 0.5};
    size_t layers[3] = {3, 5, 2};
    float u[64], v[2 * 6];
    float *us[1];
    size_t bytes = 0, len = 0;
    mvnmf_view_f32 view;
    mvnmf_deep_params d;
    mvnmf_graph g;
    void *work;
    uint32_t box;
    note("issue 31: a deep f32 fit without a minimiser (0x1321c9e3)");
    view.kind = MVNMF_VIEW_DENSE;
    view.rows = 3;
    view.cols = 6;
    view.values = x;
    view.col_stride = 6;
    view.col_ptr = NULL;
    view.row_idx = NULL;
    memset(&g, 0, sizeof g);
    g.kind = MVNMF_GRAPH_CSR;
    g.n = 6;
    g.affinity_row_ptr = arp;
    g.affinity_col_idx = aci;
    g.affinity_weights = aw;
    g.penalty_row_ptr = prp;
    g.penalty_col_idx = pci;
    g.penalty_weights = pw;
    us[0] = u;
    CHECK_STATUS(mvnmf_deep_factor_len(3, layers, 3, &len), MVNMF_STATUS_OK);
    CHECK(len <= 64);
    for (box = 0; box < 2; box++) {
        watch32_t w = {0.0, 0, 0, 0};
        mvnmf_deep_params_preset(MVNMF_DEEP_PRESET_DMCL, &d);
        d.top.max_iter = 150;
        d.top.tol = 0.0;
        d.top.sparsity = MVNMF_SPARSITY_L1INF;
        d.top.alpha = 0.0;
        d.top.beta = 0.0015;
        d.top.gamma = 0.005;
        d.top.vmax = 1.0;
        d.top.seed = 0x1321c9e3u;
        d.pretrain_iter = 5;
        d.v_init = MVNMF_DEEP_V_PRETRAINED;
        d.box_lower = box;
        set_ctx("deep_fit_f32 [3, 5, 2] at 1e-7, gamma 0.005, alpha 0, box_lower %u", (unsigned)box);
        if (!CHECK_STATUS(mvnmf_deep_fit_f32_workspace(&view, 1, &g, layers, 3, &d, &bytes), MVNMF_STATUS_OK))
            continue;
        work = xmalloc(bytes);
        CHECK_STATUS(mvnmf_deep_fit_f32(&view, 1, &g, layers, 3, &d, us, v, work, bytes, watch32_cb, &w, NULL),
                     MVNMF_STATUS_OK);
        CHECK(w.calls == 151 && !w.rose && !w.nonfinite);
        CHECK(all_finite_f(u, len) && all_finite_f(v, 12));
        free(work);
    }
}

int HARNESS_REGRESS_ENTRY(int verbose)
{
    g_failures = 0;
    g_verbose = verbose;
    test_d1();
    test_d1_pipeline();
    test_d2();
    test_small();
    test_fuzz_findings();
    test_l1inf_tiny_threshold();
    test_d3();
    test_d4();
    test_d5();
    test_issue31_queries();
    test_e1();
    test_e2();
    test_e3();
    test_e4();
    test_jsnmf_subnormal();
    test_issue31_beta();
    test_issue31_jsnmf_f32_subnormal();
    test_issue31_beta_clip();
    test_issue31_f32_inert_weights();
    test_issue31_deep_f32_no_minimiser();
    if (verbose || g_failures)
        printf("[%s] mvnmf C ABI harness (issue 15 and 31 regressions): %d failed checks\n", LANG, g_failures);
    fflush(stdout);
    return g_failures;
}
