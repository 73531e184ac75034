/* C test harness of the dense linear algebra of the mvnmf C ABI: the symmetric
 * eigensolver (mvnmf_sym_eig) and regularised CCA (mvnmf_cca).
 *
 * Built like the other harnesses (ffi-tests/build.rs): twice, as C99 and as
 * C++11, with -Wall -Wextra -Wpedantic -Werror; explicit casts from void *, no
 * designated initializers, compound literals or VLAs, `static` on everything
 * but the entry point HARNESS_LINALG_ENTRY (renamed per build), which returns
 * the number of failed checks and prints one line per failure.
 *
 *   1. eigen: random symmetric matrices (n = 1, 2, 3, 17, 60) with NaN above the
 *      diagonal (never read): eigenvalues ascending, the scaled residual
 *      ||AQ - QL||_1 / (n eps ||A||_1) and orthogonality ||Q^T Q - I||_1 / (n eps)
 *      below 50, each column's largest entry positive, nothing written past the
 *      outputs, the same bits from a workspace at an odd address; the 1-D
 *      Laplacian's known eigenvalues; a matrix scaled by 2^-900 gives the same
 *      eigenvectors;
 *   2. CCA: two views sharing two latent signals get rho_1, rho_2 ~ 1; the
 *      canonical variables phi^T (x - mu) have cross-covariance diag(rho) and
 *      covariance I - reg phi^T phi; a strided view gives the same bits;
 *   3. errors: each gives its status with every output (and *bytes) untouched:
 *      n = 0, NULL pointers, NaN in the lower triangle, a workspace one byte
 *      short; for CCA also a CSC view, reg < 0, dims = 0 or too large, item
 *      counts that differ, one item, a NaN, and reg = 0 with more features
 *      than items (singular covariance).
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
int HARNESS_LINALG_ENTRY(int verbose);
#ifdef __cplusplus
}
#endif

#include "harness_common.h"

#define GUARD 8 /* guard doubles after every output buffer */
static const double SENTINEL = -31.5;

/* n doubles set to SENTINEL, then GUARD more. */
static double *salloc(size_t n)
{
    double *p = (double *)malloc((n + GUARD) * sizeof(double));
    size_t i;
    if (p == NULL) {
        printf("[%s] out of memory\n", LANG);
        exit(1);
    }
    for (i = 0; i < n + GUARD; i++)
        p[i] = SENTINEL;
    return p;
}

static int all_sentinel(const double *p, size_t n)
{
    size_t i;
    for (i = 0; i < n + GUARD; i++)
        if (p[i] != SENTINEL)
            return 0;
    return 1;
}

static int guards_ok(const double *p, size_t n)
{
    return all_sentinel(p + n, 0);
}

static void *balloc(size_t bytes)
{
    void *p = malloc(bytes + 1);
    if (p == NULL) {
        printf("[%s] out of memory\n", LANG);
        exit(1);
    }
    return p;
}

/* A random symmetric n x n matrix, entries uniform in (-1, 1). */
static void random_symmetric(double *a, size_t n, uint64_t seed)
{
    lcg_t g = lcg_seeded(seed);
    size_t i, j;
    for (j = 0; j < n; j++)
        for (i = j; i < n; i++) {
            a[i + j * n] = 2.0 * lcg_next(&g) - 1.0;
            a[j + i * n] = a[i + j * n];
        }
}

static double one_norm(const double *a, size_t n)
{
    double m = 0.0;
    size_t i, j;
    for (j = 0; j < n; j++) {
        double s = 0.0;
        for (i = 0; i < n; i++)
            s += fabs(a[i + j * n]);
        if (s > m)
            m = s;
    }
    return m;
}

/* The scaled residual and orthogonality of (q, w) for the full matrix a. */
static void measures(const double *a, size_t n, const double *q, const double *w, double *res,
                     double *orth)
{
    double r = 0.0, o = 0.0, an = one_norm(a, n);
    size_t i, j, k;
    for (j = 0; j < n; j++) {
        double rc = 0.0, oc = 0.0;
        for (i = 0; i < n; i++) {
            double s = -q[i + j * n] * w[j], t = i == j ? -1.0 : 0.0;
            for (k = 0; k < n; k++) {
                s += a[i + k * n] * q[k + j * n];
                t += q[k + i * n] * q[k + j * n];
            }
            rc += fabs(s);
            oc += fabs(t);
        }
        if (rc > r)
            r = rc;
        if (oc > o)
            o = oc;
    }
    *res = r / ((double)n * DBL_EPSILON * (an > 0.0 ? an : 1.0));
    *orth = o / ((double)n * DBL_EPSILON);
}

/* Runs mvnmf_sym_eig on a (full symmetric) with NaN above the diagonal;
 * checks the outputs; returns q and w (caller frees). */
static void eig_checked(const double *a, size_t n, double **q_out, double **w_out)
{
    size_t bytes = 0, i, j;
    double *q = salloc(n * n), *w = salloc(n), res, orth;
    unsigned char *ws;
    CHECK_STATUS(mvnmf_sym_eig_workspace(n, &bytes), MVNMF_STATUS_OK);
    ws = (unsigned char *)balloc(bytes + 1);
    for (j = 0; j < n; j++)
        for (i = 0; i < n; i++)
            q[i + j * n] = i < j ? NAN : a[i + j * n];
    CHECK_STATUS(mvnmf_sym_eig(q, n, w, ws + 1, bytes), MVNMF_STATUS_OK);
    CHECK(guards_ok(q, n * n) && guards_ok(w, n));
    for (i = 1; i < n; i++)
        CHECK(w[i - 1] <= w[i]);
    measures(a, n, q, w, &res, &orth);
    note("sym_eig n = %u: scaled residual %.3f, orthogonality %.3f", (unsigned)n, res, orth);
    CHECK(res < 50.0);
    CHECK(orth < 50.0);
    for (j = 0; j < n; j++) {
        size_t best = 0;
        for (i = 1; i < n; i++)
            if (fabs(q[i + j * n]) > fabs(q[best + j * n]))
                best = i;
        CHECK(q[best + j * n] > 0.0);
    }
    free(ws);
    *q_out = q;
    *w_out = w;
}

static void test_eig(void)
{
    static const size_t sizes[] = {1, 2, 3, 17, 60};
    size_t s, i, n;
    for (s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        double *a, *q, *w, *q2, *w2, *b;
        unsigned char *ws;
        size_t bytes = 0;
        n = sizes[s];
        set_ctx("sym_eig random n = %u", (unsigned)n);
        a = salloc(n * n);
        random_symmetric(a, n, 40 + n);
        eig_checked(a, n, &q, &w);
        /* Same bits from an aligned workspace and from a scaled matrix (2^-900:
         * the eigenvectors do not change, the eigenvalues scale exactly). */
        CHECK_STATUS(mvnmf_sym_eig_workspace(n, &bytes), MVNMF_STATUS_OK);
        ws = (unsigned char *)balloc(bytes);
        q2 = salloc(n * n);
        w2 = salloc(n);
        b = salloc(n * n);
        for (i = 0; i < n * n; i++) {
            q2[i] = a[i];
            b[i] = ldexp(a[i], -900);
        }
        CHECK_STATUS(mvnmf_sym_eig(q2, n, w2, ws, bytes), MVNMF_STATUS_OK);
        CHECK(memcmp(q, q2, n * n * sizeof(double)) == 0);
        CHECK(memcmp(w, w2, n * sizeof(double)) == 0);
        CHECK_STATUS(mvnmf_sym_eig(b, n, w2, ws, bytes), MVNMF_STATUS_OK);
        CHECK(memcmp(q, b, n * n * sizeof(double)) == 0);
        for (i = 0; i < n; i++)
            CHECK(w2[i] == ldexp(w[i], -900));
        free(a); free(q); free(w); free(q2); free(w2); free(b); free(ws);
    }
    /* The 1-D Laplacian: 2 - 2 cos(k pi / (n + 1)). */
    {
        double *a, *q, *w;
        const double pi = 3.14159265358979323846;
        n = 30;
        set_ctx("sym_eig 1-D Laplacian");
        a = salloc(n * n);
        for (i = 0; i < n * n; i++)
            a[i] = 0.0;
        for (i = 0; i < n; i++) {
            a[i + i * n] = 2.0;
            if (i + 1 < n) {
                a[i + 1 + i * n] = -1.0;
                a[i + (i + 1) * n] = -1.0;
            }
        }
        eig_checked(a, n, &q, &w);
        for (i = 0; i < n; i++)
            CHECK(fabs(w[i] - (2.0 - 2.0 * cos((double)(i + 1) * pi / (double)(n + 1)))) < 1e-13);
        free(a); free(q); free(w);
    }
}

static void test_eig_errors(void)
{
    const size_t n = 5;
    size_t bytes = 0, b0;
    double *a = salloc(n * n), *keep = salloc(n * n), *w = salloc(n);
    unsigned char *ws;
    random_symmetric(a, n, 7);
    memcpy(keep, a, (n * n + GUARD) * sizeof(double));
    CHECK_STATUS(mvnmf_sym_eig_workspace(n, &bytes), MVNMF_STATUS_OK);
    ws = (unsigned char *)balloc(bytes);

    set_ctx("sym_eig errors");
    b0 = 12345;
    CHECK_STATUS(mvnmf_sym_eig_workspace(0, &b0), MVNMF_STATUS_ZERO_DIMENSION);
    CHECK(b0 == 12345);
    CHECK_STATUS(mvnmf_sym_eig_workspace(n, NULL), MVNMF_STATUS_NULL_POINTER);
    CHECK_STATUS(mvnmf_sym_eig(a, 0, w, ws, bytes), MVNMF_STATUS_ZERO_DIMENSION);
    CHECK_STATUS(mvnmf_sym_eig(NULL, n, w, ws, bytes), MVNMF_STATUS_NULL_POINTER);
    CHECK_STATUS(mvnmf_sym_eig(a, n, NULL, ws, bytes), MVNMF_STATUS_NULL_POINTER);
    CHECK_STATUS(mvnmf_sym_eig(a, n, w, NULL, bytes), MVNMF_STATUS_NULL_POINTER);
    CHECK_STATUS(mvnmf_sym_eig(a, n, w, ws, bytes - 1), MVNMF_STATUS_WORKSPACE_TOO_SMALL);
    CHECK(memcmp(a, keep, (n * n + GUARD) * sizeof(double)) == 0);
    CHECK(all_sentinel(w, n));
    a[3 + 1 * n] = NAN; /* lower triangle */
    memcpy(keep, a, (n * n + GUARD) * sizeof(double));
    CHECK_STATUS(mvnmf_sym_eig(a, n, w, ws, bytes), MVNMF_STATUS_NON_FINITE_INPUT);
    a[3 + 1 * n] = INFINITY;
    keep[3 + 1 * n] = INFINITY;
    CHECK_STATUS(mvnmf_sym_eig(a, n, w, ws, bytes), MVNMF_STATUS_NON_FINITE_INPUT);
    CHECK(memcmp(a, keep, (n * n + GUARD) * sizeof(double)) == 0);
    CHECK(all_sentinel(w, n));
    /* NaN above the diagonal is never read. */
    random_symmetric(a, n, 7);
    a[1 + 3 * n] = NAN;
    CHECK_STATUS(mvnmf_sym_eig(a, n, w, ws, bytes), MVNMF_STATUS_OK);
    free(a); free(keep); free(w); free(ws);
}

/* Two views of n items: v = offset + A z + noise_scale * noise, z 2 x n. */
static void latent_view(double *x, size_t d, size_t n, size_t ld, const double *z, uint64_t seed,
                        double noise_scale)
{
    lcg_t g = lcg_seeded(seed);
    double *a = (double *)balloc(d * 2 * sizeof(double));
    size_t i, j;
    for (i = 0; i < 2 * d; i++)
        a[i] = 2.0 * lcg_next(&g) - 1.0;
    for (j = 0; j < n; j++)
        for (i = 0; i < d; i++)
            x[i + j * ld] = 3.0 + a[i] * z[2 * j] + a[i + d] * z[2 * j + 1] +
                            noise_scale * (2.0 * lcg_next(&g) - 1.0);
    free(a);
}

/* Z = phi^T (X - mu 1^T), dims x n. */
static void canonical(const double *x, size_t d, size_t n, size_t ld, const double *phi,
                      const double *mu, size_t dims, double *z)
{
    size_t i, j, k;
    for (j = 0; j < n; j++)
        for (k = 0; k < dims; k++) {
            double s = 0.0;
            for (i = 0; i < d; i++)
                s += phi[i + k * d] * (x[i + j * ld] - mu[i]);
            z[k + j * dims] = s;
        }
}

static void test_cca(void)
{
    const size_t di = 5, dj = 4, n = 200, dims = 3;
    const double reg = 1e-4;
    lcg_t g = lcg_seeded(77);
    double *z = salloc(2 * n), *xi = salloc(di * n), *xj = salloc(dj * n), *pad = salloc((di + 2) * n);
    double *fi = salloc(di * dims), *fj = salloc(dj * dims), *rho = salloc(dims);
    double *mi = salloc(di), *mj = salloc(dj);
    double *fi2 = salloc(di * dims), *fj2 = salloc(dj * dims), *rho2 = salloc(dims);
    double *mi2 = salloc(di), *mj2 = salloc(dj);
    double *zi = salloc(dims * n), *zj = salloc(dims * n);
    size_t bytes = 0, i, j, k, l;
    unsigned char *ws;
    mvnmf_view vi, vj, vp;

    set_ctx("cca shared latent signal");
    for (i = 0; i < 2 * n; i++)
        z[i] = 2.0 * lcg_next(&g) - 1.0;
    latent_view(xi, di, n, di, z, 1, 0.001);
    latent_view(xj, dj, n, dj, z, 2, 0.001);
    vi = dense_view(xi, di, n);
    vj = dense_view(xj, dj, n);
    CHECK_STATUS(mvnmf_cca_workspace(di, dj, n, dims, &bytes), MVNMF_STATUS_OK);
    ws = (unsigned char *)balloc(bytes + 3);
    CHECK_STATUS(mvnmf_cca(&vi, &vj, reg, dims, fi, fj, rho, mi, mj, ws + 3, bytes), MVNMF_STATUS_OK);
    CHECK(guards_ok(fi, di * dims) && guards_ok(fj, dj * dims) && guards_ok(rho, dims));
    CHECK(guards_ok(mi, di) && guards_ok(mj, dj));
    note("cca rho = %.6f %.6f %.6f", rho[0], rho[1], rho[2]);
    CHECK(rho[0] > 0.99 && rho[1] > 0.99 && rho[2] < 0.5);
    CHECK(rho[0] >= rho[1] && rho[1] >= rho[2] && rho[2] >= 0.0);
    /* The covariances of the canonical variables. */
    canonical(xi, di, n, di, fi, mi, dims, zi);
    canonical(xj, dj, n, dj, fj, mj, dims, zj);
    for (k = 0; k < dims; k++)
        for (l = 0; l < dims; l++) {
            double cii = 0.0, cjj = 0.0, cij = 0.0, pii = 0.0, pjj = 0.0;
            for (j = 0; j < n; j++) {
                cii += zi[k + j * dims] * zi[l + j * dims];
                cjj += zj[k + j * dims] * zj[l + j * dims];
                cij += zi[k + j * dims] * zj[l + j * dims];
            }
            for (i = 0; i < di; i++)
                pii += fi[i + k * di] * fi[i + l * di];
            for (i = 0; i < dj; i++)
                pjj += fj[i + k * dj] * fj[i + l * dj];
            cii /= (double)(n - 1);
            cjj /= (double)(n - 1);
            cij /= (double)(n - 1);
            CHECK(fabs(cii - ((k == l ? 1.0 : 0.0) - reg * pii)) < 1e-9);
            CHECK(fabs(cjj - ((k == l ? 1.0 : 0.0) - reg * pjj)) < 1e-9);
            CHECK(fabs(cij - (k == l ? rho[k] : 0.0)) < 1e-9);
        }
    /* Means. */
    for (i = 0; i < di; i++) {
        double s = 0.0;
        for (j = 0; j < n; j++)
            s += xi[i + j * di];
        CHECK(fabs(s / (double)n - mi[i]) < 1e-14);
    }
    /* A strided copy of xi (NaN padding) gives the same bits. */
    for (i = 0; i < (di + 2) * n; i++)
        pad[i] = NAN;
    for (j = 0; j < n; j++)
        for (i = 0; i < di; i++)
            pad[i + j * (di + 2)] = xi[i + j * di];
    vp = vi;
    vp.values = pad;
    vp.col_stride = di + 2;
    CHECK_STATUS(mvnmf_cca(&vp, &vj, reg, dims, fi2, fj2, rho2, mi2, mj2, ws, bytes), MVNMF_STATUS_OK);
    CHECK(memcmp(fi, fi2, di * dims * sizeof(double)) == 0);
    CHECK(memcmp(fj, fj2, dj * dims * sizeof(double)) == 0);
    CHECK(memcmp(rho, rho2, dims * sizeof(double)) == 0);
    CHECK(memcmp(mi, mi2, di * sizeof(double)) == 0 && memcmp(mj, mj2, dj * sizeof(double)) == 0);
    free(z); free(xi); free(xj); free(pad); free(fi); free(fj); free(rho); free(mi); free(mj);
    free(fi2); free(fj2); free(rho2); free(mi2); free(mj2); free(zi); free(zj); free(ws);
}

/* One CCA call that must fail with `want`, every output untouched. */
static void cca_fails(const mvnmf_view *vi, const mvnmf_view *vj, double reg, size_t dims,
                      size_t di, size_t dj, size_t bytes, mvnmf_status want)
{
    size_t d = dims > 0 ? dims : 1;
    double *fi = salloc(di * d), *fj = salloc(dj * d), *rho = salloc(d), *mi = salloc(di),
           *mj = salloc(dj);
    unsigned char *ws = (unsigned char *)balloc(bytes);
    CHECK_STATUS(mvnmf_cca(vi, vj, reg, dims, fi, fj, rho, mi, mj, ws, bytes), want);
    CHECK(all_sentinel(fi, di * d) && all_sentinel(fj, dj * d) && all_sentinel(rho, d));
    CHECK(all_sentinel(mi, di) && all_sentinel(mj, dj));
    free(fi); free(fj); free(rho); free(mi); free(mj); free(ws);
}

static void test_cca_errors(void)
{
    const size_t di = 4, dj = 3, n = 30, dims = 2;
    double *xi = salloc(di * n), *xj = salloc(dj * n), *wide = salloc(40 * n);
    double *fi = salloc(di * dims), *fj = salloc(dj * dims), *rho = salloc(dims);
    double *mi = salloc(di), *mj = salloc(dj);
    size_t bytes = 0, b0 = 777, i, wbytes = 0;
    size_t col_ptr[31], row_idx[1];
    unsigned char *ws;
    lcg_t g = lcg_seeded(5);
    mvnmf_view vi, vj, v, vw;
    for (i = 0; i < di * n; i++)
        xi[i] = lcg_next(&g) - 0.5;
    for (i = 0; i < dj * n; i++)
        xj[i] = lcg_next(&g) - 0.5;
    for (i = 0; i < 40 * n; i++)
        wide[i] = lcg_next(&g) - 0.5;
    vi = dense_view(xi, di, n);
    vj = dense_view(xj, dj, n);
    CHECK_STATUS(mvnmf_cca_workspace(di, dj, n, dims, &bytes), MVNMF_STATUS_OK);
    ws = (unsigned char *)balloc(bytes);

    set_ctx("cca workspace errors");
    CHECK_STATUS(mvnmf_cca_workspace(0, dj, n, dims, &b0), MVNMF_STATUS_ZERO_DIMENSION);
    CHECK_STATUS(mvnmf_cca_workspace(di, dj, 1, dims, &b0), MVNMF_STATUS_ZERO_DIMENSION);
    CHECK_STATUS(mvnmf_cca_workspace(di, dj, n, 0, &b0), MVNMF_STATUS_BAD_RANK);
    CHECK_STATUS(mvnmf_cca_workspace(di, dj, n, 4, &b0), MVNMF_STATUS_BAD_RANK);
    CHECK_STATUS(mvnmf_cca_workspace(di, dj, n, dims, NULL), MVNMF_STATUS_NULL_POINTER);
    CHECK(b0 == 777);

    set_ctx("cca errors");
    CHECK_STATUS(mvnmf_cca(NULL, &vj, 0.1, dims, fi, fj, rho, mi, mj, ws, bytes), MVNMF_STATUS_NULL_POINTER);
    CHECK_STATUS(mvnmf_cca(&vi, &vj, 0.1, dims, NULL, fj, rho, mi, mj, ws, bytes), MVNMF_STATUS_NULL_POINTER);
    CHECK_STATUS(mvnmf_cca(&vi, &vj, 0.1, dims, fi, fj, rho, mi, NULL, ws, bytes), MVNMF_STATUS_NULL_POINTER);
    CHECK(all_sentinel(fi, di * dims) && all_sentinel(rho, dims) && all_sentinel(mi, di));
    cca_fails(&vi, &vj, -0.1, dims, di, dj, bytes, MVNMF_STATUS_BAD_PARAMETER);
    cca_fails(&vi, &vj, NAN, dims, di, dj, bytes, MVNMF_STATUS_BAD_PARAMETER);
    cca_fails(&vi, &vj, 0.1, 0, di, dj, bytes, MVNMF_STATUS_BAD_RANK);
    cca_fails(&vi, &vj, 0.1, 4, di, dj, bytes, MVNMF_STATUS_BAD_RANK);
    cca_fails(&vi, &vj, 0.1, dims, di, dj, bytes - 1, MVNMF_STATUS_WORKSPACE_TOO_SMALL);
    /* A CSC view (empty columns). */
    for (i = 0; i <= n; i++)
        col_ptr[i] = 0;
    row_idx[0] = 0;
    v = vj;
    v.kind = MVNMF_VIEW_CSC;
    v.col_ptr = col_ptr;
    v.row_idx = row_idx;
    cca_fails(&vi, &v, 0.1, dims, di, dj, bytes, MVNMF_STATUS_BAD_PARAMETER);
    /* Item counts differ; one item. */
    v = dense_view(xj, dj, n - 1);
    cca_fails(&vi, &v, 0.1, dims, di, dj, bytes, MVNMF_STATUS_DIMENSION_MISMATCH);
    v = dense_view(xj, dj, 1);
    vw = dense_view(xi, di, 1);
    cca_fails(&vw, &v, 0.1, 1, di, dj, bytes, MVNMF_STATUS_ZERO_DIMENSION);
    /* A NaN in a view. */
    xj[5] = NAN;
    cca_fails(&vi, &vj, 0.1, dims, di, dj, bytes, MVNMF_STATUS_NON_FINITE_INPUT);
    xj[5] = 0.25;
    /* More features (40) than items (30): singular without regularisation. */
    vw = dense_view(wide, 40, n);
    CHECK_STATUS(mvnmf_cca_workspace(40, dj, n, dims, &wbytes), MVNMF_STATUS_OK);
    cca_fails(&vw, &vj, 0.0, dims, 40, dj, wbytes, MVNMF_STATUS_BAD_PARAMETER);
    {
        /* ... and accepted with reg > 0. */
        double *f1 = salloc(40 * dims), *m1 = salloc(40);
        unsigned char *w2 = (unsigned char *)balloc(wbytes);
        CHECK_STATUS(mvnmf_cca(&vw, &vj, 0.1, dims, f1, fj, rho, m1, mj, w2, wbytes), MVNMF_STATUS_OK);
        CHECK(guards_ok(f1, 40 * dims) && guards_ok(m1, 40) && rho[0] <= 1.0 && rho[1] >= 0.0);
        free(f1); free(m1); free(w2);
    }
    free(xi); free(xj); free(wide); free(fi); free(fj); free(rho); free(mi); free(mj); free(ws);
}

/* NNDSVD starts: nonnegative, a joint NMF from NNDSVDa never rises and ends
 * below its start; two views start as their stack; a bad variant, k too
 * large and a negative entry are refused with the outputs untouched. */
static double nn_trace[64];
static size_t nn_count;
static int nn_record(const mvnmf_progress *p, void *user)
{
    (void)user;
    if (nn_count < 64)
        nn_trace[nn_count++] = p->objective.total;
    return 0;
}

static void test_nndsvd(void)
{
    const size_t m1 = 9, m2 = 7, m = 16, n = 20, k = 3;
    double *x = (double *)balloc(m * n * sizeof(double)), *x1 = (double *)balloc(m1 * n * sizeof(double));
    double *x2 = (double *)balloc(m2 * n * sizeof(double)), *u = (double *)balloc(m * k * sizeof(double));
    double *u1 = (double *)balloc(m1 * k * sizeof(double)), *u2 = (double *)balloc(m2 * k * sizeof(double));
    double *v = (double *)balloc(k * n * sizeof(double)), *vs = (double *)balloc(k * n * sizeof(double));
    double *us[1], *parts[2];
    mvnmf_view whole, two[2];
    mvnmf_nmf_params p = mvnmf_nmf_params_default();
    size_t need = 0, i, j, l;
    void *w;
    lcg_t g = lcg_seeded(77);
    note("NNDSVD starts");
    set_ctx("nndsvd");
    for (j = 0; j < n; j++)
        for (i = 0; i < m; i++)
            x[i + j * m] = (double)((i % 3) == (j % 3)) * 2.0 + lcg_next(&g);
    for (j = 0; j < n; j++) {
        memcpy(x1 + j * m1, x + j * m, m1 * sizeof(double));
        memcpy(x2 + j * m2, x + j * m + m1, m2 * sizeof(double));
    }
    whole = dense_view(x, m, n);
    two[0] = dense_view(x1, m1, n);
    two[1] = dense_view(x2, m2, n);
    us[0] = u;
    CHECK_STATUS(mvnmf_nndsvd_workspace(&whole, 1, k, &need), MVNMF_STATUS_OK);
    w = balloc(need);
    CHECK_STATUS(mvnmf_nndsvd(&whole, 1, k, MVNMF_NNDSVDA, 0, us, v, w, need), MVNMF_STATUS_OK);
    for (i = 0; i < m * k; i++)
        CHECK(u[i] > 0.0);
    for (i = 0; i < k * n; i++)
        CHECK(v[i] > 0.0);
    parts[0] = u1;
    parts[1] = u2;
    free(w);
    CHECK_STATUS(mvnmf_nndsvd_workspace(two, 2, k, &need), MVNMF_STATUS_OK);
    w = balloc(need);
    CHECK_STATUS(mvnmf_nndsvd(two, 2, k, MVNMF_NNDSVDA, 0, parts, vs, w, need), MVNMF_STATUS_OK);
    CHECK(memcmp(v, vs, k * n * sizeof(double)) == 0);
    for (l = 0; l < k; l++) {
        CHECK(memcmp(u1 + l * m1, u + l * m, m1 * sizeof(double)) == 0);
        CHECK(memcmp(u2 + l * m2, u + l * m + m1, m2 * sizeof(double)) == 0);
    }
    free(w);
    /* Joint NMF from it: monotone, and below the start. */
    p.init = MVNMF_INIT_GIVEN;
    p.max_iter = 30;
    p.tol = 0.0;
    CHECK_STATUS(mvnmf_joint_nmf_fit_workspace(two, 2, k, &p, &need), MVNMF_STATUS_OK);
    w = balloc(need);
    nn_count = 0;
    CHECK_STATUS(mvnmf_joint_nmf_fit(two, 2, k, &p, parts, vs, w, need, nn_record, NULL, NULL), MVNMF_STATUS_OK);
    CHECK(nn_count == 31);
    for (i = 1; i < nn_count; i++)
        CHECK(nn_trace[i] <= nn_trace[i - 1] * (1.0 + 1e-12));
    CHECK(nn_trace[nn_count - 1] < nn_trace[0]);
    free(w);
    /* Refusals, outputs untouched. */
    for (i = 0; i < m * k; i++)
        u[i] = 7.0;
    for (i = 0; i < k * n; i++)
        v[i] = 7.0;
    CHECK_STATUS(mvnmf_nndsvd_workspace(&whole, 1, k, &need), MVNMF_STATUS_OK);
    w = balloc(need);
    set_ctx("nndsvd, bad variant");
    CHECK_STATUS(mvnmf_nndsvd(&whole, 1, k, 3, 0, us, v, w, need), MVNMF_STATUS_BAD_PARAMETER);
    set_ctx("nndsvd, k > min(M, N)");
    CHECK_STATUS(mvnmf_nndsvd(&whole, 1, m + 1, MVNMF_NNDSVD, 0, us, v, w, need), MVNMF_STATUS_BAD_RANK);
    set_ctx("nndsvd, negative entry");
    x[5] = -1.0;
    CHECK_STATUS(mvnmf_nndsvd(&whole, 1, k, MVNMF_NNDSVD, 0, us, v, w, need), MVNMF_STATUS_NEGATIVE_INPUT);
    for (i = 0; i < m * k; i++)
        CHECK(u[i] == 7.0);
    for (i = 0; i < k * n; i++)
        CHECK(v[i] == 7.0);
    free(w);
    free(x);
    free(x1);
    free(x2);
    free(u);
    free(u1);
    free(u2);
    free(v);
    free(vs);
}

/* β-divergence NMF: KL and IS on two dense views never rise, the report's
 * divergence term is the total; a zero under IS and β outside [0, 2] are
 * refused with the outputs untouched. */
static void test_beta(void)
{
    const size_t m1 = 8, m2 = 6, n = 15, k = 3;
    double *x1 = (double *)balloc(m1 * n * sizeof(double)), *x2 = (double *)balloc(m2 * n * sizeof(double));
    double *u1 = (double *)balloc(m1 * k * sizeof(double)), *u2 = (double *)balloc(m2 * k * sizeof(double));
    double *v = (double *)balloc(k * n * sizeof(double)), *us[2], betas[3] = { 1.0, 0.0, 0.5 };
    mvnmf_view views[2];
    mvnmf_nmf_params p = mvnmf_nmf_params_default();
    mvnmf_report rep;
    size_t need = 0, i, b;
    void *w;
    lcg_t g = lcg_seeded(91);
    note("beta-divergence NMF");
    for (i = 0; i < m1 * n; i++)
        x1[i] = 0.05 + lcg_next(&g);
    for (i = 0; i < m2 * n; i++)
        x2[i] = 0.05 + 3.0 * lcg_next(&g);
    views[0] = dense_view(x1, m1, n);
    views[1] = dense_view(x2, m2, n);
    us[0] = u1;
    us[1] = u2;
    p.max_iter = 40;
    p.tol = 0.0;
    for (b = 0; b < 3; b++) {
        set_ctx("beta %g", betas[b]);
        CHECK_STATUS(mvnmf_beta_nmf_fit_workspace(views, 2, k, betas[b], &p, &need), MVNMF_STATUS_OK);
        w = balloc(need);
        nn_count = 0;
        CHECK_STATUS(mvnmf_beta_nmf_fit(views, 2, k, betas[b], 0.0, NULL, &p, us, v, w, need, nn_record, NULL, &rep),
                     MVNMF_STATUS_OK);
        CHECK(nn_count == 41);
        for (i = 1; i < nn_count; i++)
            CHECK(nn_trace[i] <= nn_trace[i - 1] + 1e-12 * nn_trace[0]);
        CHECK(nn_trace[nn_count - 1] < nn_trace[0]);
        CHECK(rep.objective.n_terms == 1 && rep.objective.terms[0].kind == MVNMF_TERM_DIVERGENCE &&
              rep.objective.terms[0].value == rep.objective.total);
        free(w);
    }
    /* A mask on view 1 (every fifth entry missing): monotone, and a missing
     * entry's value (here NaN) changes no bit of the result. */
    {
        uint8_t *mk = (uint8_t *)balloc(m1 * n);
        const uint8_t *masks[2];
        double *v0 = (double *)balloc(k * n * sizeof(double)), keep;
        for (i = 0; i < m1 * n; i++)
            mk[i] = (uint8_t)(i % 5 != 0);
        masks[0] = mk;
        masks[1] = NULL;
        set_ctx("beta 1, masked");
        CHECK_STATUS(mvnmf_beta_nmf_fit_workspace(views, 2, k, 1.0, &p, &need), MVNMF_STATUS_OK);
        w = balloc(need);
        nn_count = 0;
        CHECK_STATUS(mvnmf_beta_nmf_fit(views, 2, k, 1.0, 0.0, masks, &p, us, v0, w, need, nn_record, NULL, NULL),
                     MVNMF_STATUS_OK);
        for (i = 1; i < nn_count; i++)
            CHECK(nn_trace[i] <= nn_trace[i - 1] + 1e-12 * nn_trace[0]);
        keep = x1[5];
        x1[5] = NAN; /* entry 5: i % 5 == 0, missing */
        CHECK_STATUS(mvnmf_beta_nmf_fit(views, 2, k, 1.0, 0.0, masks, &p, us, v, w, need, NULL, NULL, NULL),
                     MVNMF_STATUS_OK);
        CHECK(memcmp(v, v0, k * n * sizeof(double)) == 0);
        x1[5] = keep;
        free(w);
        free(mk);
        free(v0);
    }
    for (i = 0; i < m1 * k; i++)
        u1[i] = 7.0;
    for (i = 0; i < k * n; i++)
        v[i] = 7.0;
    CHECK_STATUS(mvnmf_beta_nmf_fit_workspace(views, 2, k, 0.0, &p, &need), MVNMF_STATUS_OK);
    w = balloc(need);
    set_ctx("beta 0 with a zero entry");
    x1[3] = 0.0;
    CHECK_STATUS(mvnmf_beta_nmf_fit(views, 2, k, 0.0, -1.0, NULL, &p, us, v, w, need, NULL, NULL, NULL),
                 MVNMF_STATUS_BAD_PARAMETER);
    set_ctx("beta 3");
    CHECK_STATUS(mvnmf_beta_nmf_fit(views, 2, k, 3.0, -1.0, NULL, &p, us, v, w, need, NULL, NULL, NULL),
                 MVNMF_STATUS_BAD_PARAMETER);
    for (i = 0; i < m1 * k; i++)
        CHECK(u1[i] == 7.0);
    for (i = 0; i < k * n; i++)
        CHECK(v[i] == 7.0);
    free(w);
    free(x1);
    free(x2);
    free(u1);
    free(u2);
    free(v);
}

int HARNESS_LINALG_ENTRY(int verbose)
{
    g_failures = 0;
    g_verbose = verbose;
    test_eig();
    test_eig_errors();
    test_cca();
    test_cca_errors();
    test_nndsvd();
    test_beta();
    if (verbose || g_failures)
        printf("[%s] mvnmf C ABI harness (eigen, CCA): %d failed checks\n", LANG, g_failures);
    fflush(stdout);
    return g_failures;
}
