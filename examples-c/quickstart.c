/* mvnmf quickstart: joint NMF of two views, then encoding of new items.
 *
 * Two views (30 and 20 features) of the same 45 items are generated from known
 * nonnegative factors, X_v = U_v V + 1% noise. mvnmf fits per-view bases U_1,
 * U_2 and one shared encoding V on the first 40 items, then encodes the last 5
 * items against the fitted bases.
 *
 * Conventions: matrices are column-major doubles and items are columns, so a
 * view with `rows` features stores item j at x[j*rows ...]. The caller owns
 * all memory: every solver takes a scratch workspace whose size in bytes the
 * matching *_workspace query gives. Every call returns an mvnmf_status, 0 on
 * success; mvnmf_status_message explains the others.
 *
 * Build: cargo build --release -p mvnmf-capi && make -C examples-c run
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mvnmf.h"

enum { M1 = 30, M2 = 20, N = 40, NNEW = 5, K = 3 }; /* features, items, rank */

/* A tiny deterministic generator: the same data on every platform. */
static double uniform(uint64_t *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*state >> 11) / 9007199254740992.0; /* [0, 1) */
}

/* x (rows x n) = u (rows x K) * v (K x n), each entry times (1 + 1% noise). */
static void make_view(double *x, const double *u, const double *v, int rows, int n, uint64_t *rng)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < rows; i++) {
            double s = 0.0;
            for (int l = 0; l < K; l++)
                s += u[i + l * rows] * v[l + j * K];
            x[i + j * rows] = s * (1.0 + 0.01 * (2.0 * uniform(rng) - 1.0));
        }
}

/* ||X - U V||^2 for X (rows x n), U (rows x K), V (K x n). */
static double sq_error(const double *x, const double *u, const double *v, int rows, int n)
{
    double s = 0.0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < rows; i++) {
            double e = x[i + j * rows];
            for (int l = 0; l < K; l++)
                e -= u[i + l * rows] * v[l + j * K];
            s += e * e;
        }
    return s;
}

/* ||x||^2 over len doubles. */
static double sq_norm(const double *x, int len)
{
    double s = 0.0;
    for (int i = 0; i < len; i++)
        s += x[i] * x[i];
    return s;
}

/* Prints the message of a failed call; nonzero when it failed. */
static int failed(mvnmf_status status, const char *what)
{
    if (status != MVNMF_STATUS_OK)
        fprintf(stderr, "%s failed: %s\n", what, mvnmf_status_message(status));
    return status != MVNMF_STATUS_OK;
}

/* A solver's refusal also says where, in its report: the 1-based argument
 * position and, for data, the 0-based view, row and column (SIZE_MAX: n/a). */
static int failed_at(mvnmf_status status, const char *what, const mvnmf_report *r)
{
    if (status != MVNMF_STATUS_OK && r->where_arg > 0) {
        fprintf(stderr, "%s: argument %u", what, (unsigned)r->where_arg);
        if (r->where_view != SIZE_MAX)
            fprintf(stderr, ", view %zu", r->where_view);
        if (r->where_row != SIZE_MAX)
            fprintf(stderr, ", row %zu", r->where_row);
        if (r->where_col != SIZE_MAX)
            fprintf(stderr, ", column %zu", r->where_col);
        fprintf(stderr, "\n");
    }
    return failed(status, what);
}

/* Called with iteration 0 (the start) and after every iteration; returning
 * nonzero would stop the solver (status MVNMF_STATUS_CANCELLED). */
static int on_progress(const mvnmf_progress *p, void *user)
{
    (void)user;
    if (p->iter % 50 == 0)
        printf("  iteration %3u: objective %.6e\n", (unsigned)p->iter, p->objective.total);
    return 0;
}

int main(void)
{
    static const char *const stop_name[] = { "max_iter reached", "converged", "cancelled" };
    static double u1_true[M1 * K], u2_true[M2 * K], v_true[K * (N + NNEW)];
    static double x1[M1 * (N + NNEW)], x2[M2 * (N + NNEW)]; /* training items, then new ones */
    static double u1[M1 * K], u2[M2 * K], v[K * N], v_new[K * NNEW];
    uint64_t rng = 42;

    /* 1. Data: X_v = U_v V + noise, from known nonnegative factors. */
    for (int i = 0; i < M1 * K; i++) u1_true[i] = uniform(&rng);
    for (int i = 0; i < M2 * K; i++) u2_true[i] = uniform(&rng);
    for (int i = 0; i < K * (N + NNEW); i++) v_true[i] = uniform(&rng);
    make_view(x1, u1_true, v_true, M1, N + NNEW, &rng);
    make_view(x2, u2_true, v_true, M2, N + NNEW, &rng);

    /* 2. Describe the training views: dense, column-major, first N items. */
    const mvnmf_view views[2] = {
        { .kind = MVNMF_VIEW_DENSE, .rows = M1, .cols = N, .values = x1, .col_stride = M1 },
        { .kind = MVNMF_VIEW_DENSE, .rows = M2, .cols = N, .values = x2, .col_stride = M2 },
    };

    /* 3. Options: start from the defaults. */
    mvnmf_nmf_params params = mvnmf_nmf_params_default();
    params.max_iter = 500;
    params.tol = 1e-9;
    params.seed = 7;

    /* 4. Workspace: ask for its size, allocate it (any alignment works). */
    size_t bytes = 0;
    if (failed(mvnmf_joint_nmf_fit_workspace(views, 2, K, &params, &bytes), "workspace query"))
        return 1;
    void *work = malloc(bytes);
    if (work == NULL)
        return 1;

    /* 5. Fit: u[i] receives the basis of view i (M_i x K), v the shared K x N encoding. */
    double *u[2] = { u1, u2 };
    mvnmf_report report;
    printf("mvnmf %s: joint NMF of views %dx%d and %dx%d, K = %d\n", mvnmf_version(), M1, N, M2, N, K);
    mvnmf_status status =
        mvnmf_joint_nmf_fit(views, 2, K, &params, u, v, work, bytes, on_progress, NULL, &report);
    free(work);
    if (failed_at(status, "mvnmf_joint_nmf_fit", &report))
        return 1;
    printf("%u iterations (%s); objective %.6e -> %.6e\n", (unsigned)report.iterations,
           stop_name[report.stop], report.initial.total, report.objective.total);

    /* 6. Encode the NNEW new items (the columns after the first N) against the
     *    fitted bases, which stay fixed; the encode has its own workspace query. */
    const mvnmf_view new_views[2] = {
        { .kind = MVNMF_VIEW_DENSE, .rows = M1, .cols = NNEW, .values = x1 + M1 * N, .col_stride = M1 },
        { .kind = MVNMF_VIEW_DENSE, .rows = M2, .cols = NNEW, .values = x2 + M2 * N, .col_stride = M2 },
    };
    const double *bases[2] = { u1, u2 };
    if (failed(mvnmf_joint_nmf_encode_workspace(new_views, 2, K, &params, &bytes), "workspace query"))
        return 1;
    if ((work = malloc(bytes)) == NULL)
        return 1;
    status = mvnmf_joint_nmf_encode(new_views, 2, K, &params, bases, v_new, work, bytes, NULL, NULL, &report);
    free(work);
    if (failed_at(status, "mvnmf_joint_nmf_encode", &report))
        return 1;

    /* 7. Relative reconstruction error of the new items, ||X - U V|| / ||X||. */
    double err = sq_error(x1 + M1 * N, u1, v_new, M1, NNEW) + sq_error(x2 + M2 * N, u2, v_new, M2, NNEW);
    double norm = sq_norm(x1 + M1 * N, M1 * NNEW) + sq_norm(x2 + M2 * N, M2 * NNEW);
    double rel = sqrt(err / norm);
    printf("encoded %d new items in %u iterations (%s): relative error %.2e\n", NNEW,
           (unsigned)report.iterations, stop_name[report.stop], rel);
    return rel < 0.05 ? 0 : 1; /* with 1% noise, expect about 1% */
}
