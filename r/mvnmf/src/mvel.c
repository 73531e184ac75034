/* The R package's MVEL glue (.Call entry C_mvel, registered in glue.c's
 * CALLS): the steps and defaults of examples-c/multilabel and the Python
 * estimator (python/mvnmf/mvel.py) over libmvnmf's C ABI —
 * views standardised per feature (optional), the fused multi-view graph
 * (dense, or sparsified to each item's s largest weights as a CSR graph, its
 * neighbours by the exact sweep or NN-descent), the unknown weight "auto" (given positives / unknown entries), the
 * label frequencies from given positives held out of a first fit (the C
 * program's generator, seeded by `holdout_seed`), the fit on all given
 * labels, its scores and the decisions by the per-label threshold rule
 * (positive-unlabeled or count), every given positive kept.
 *
 * Every buffer is allocated (R_alloc / allocVector) before the library is
 * called; errors are raised after it returns. */
#include <R.h>
#include <Rinternals.h>
#include <stdint.h>
#include <string.h>

#include "mvnmf.h"

#define MVEL_MAXV 64

static void mvel_check(const char *what, mvnmf_status st)
{
    if (st != MVNMF_STATUS_OK) Rf_error("%s: %s", what, mvnmf_status_message((uint32_t)st));
}

/* One fit on `labels` (c x n bytes) and its scores (c x n). */
static mvnmf_report mvel_fit_once(const uint8_t *labels, size_t c, const mvnmf_graph *g, size_t r,
                                  const mvnmf_mvel_params *p, double *q, double *h, double *scores)
{
    mvnmf_report rep;
    size_t bytes = 0, n = g->n;
    void *w;
    mvel_check("mvel fit workspace", mvnmf_mvel_fit_workspace(c, g, r, p, &bytes));
    w = R_alloc(bytes ? bytes : 1, 1);
    mvel_check("mvel fit", mvnmf_mvel_fit(labels, c, g, r, p, q, h, w, bytes, NULL, NULL, &rep));
    mvel_check("mvel predict workspace", mvnmf_mvel_predict_workspace(c, r, n, &bytes));
    w = R_alloc(bytes ? bytes : 1, 1);
    mvel_check("mvel predict", mvnmf_mvel_predict(q, h, c, r, n, scores, w, bytes));
    return rep;
}

/* views: list of numeric matrices (features x items); given: integer or
 * logical matrix (labels x items, 0/1); opts: c(r, theta1, theta2, mu (< 0:
 * auto), decide (0 pu, 1 count), label_freq (< 0: holdout, 0: auto, else
 * fixed), holdout, min_held, standardize, max_iter, tol, nmf_iter, seed,
 * holdout_seed, knn (0: the dense graph, 1: the kNN graph), s, graph_build
 * (MVNMF_GRAPH_BUILD_*)). */
SEXP C_mvel(SEXP views, SEXP given_, SEXP opts_)
{
    mvnmf_view v[MVEL_MAXV];
    size_t nv, n = 0, c, r, i, k, bytes = 0;
    double *o;
    if (!Rf_isNewList(views)) Rf_error("views must be a list of matrices");
    if (!Rf_isReal(opts_) || XLENGTH(opts_) != 17) Rf_error("internal: 17 options expected");
    o = REAL(opts_);
    nv = (size_t)XLENGTH(views);
    if (nv == 0 || nv > MVEL_MAXV) Rf_error("between 1 and %d views", MVEL_MAXV);
    for (i = 0; i < nv; i++) {
        SEXP x = VECTOR_ELT(views, (R_xlen_t)i);
        if (!Rf_isReal(x) || !Rf_isMatrix(x)) Rf_error("view %zu is not a double matrix", i + 1);
        memset(&v[i], 0, sizeof v[i]);
        v[i].kind = MVNMF_VIEW_DENSE;
        v[i].rows = v[i].col_stride = (size_t)Rf_nrows(x);
        v[i].cols = (size_t)Rf_ncols(x);
        if (i > 0 && v[i].cols != n) Rf_error("view %zu has %zu items, view 1 has %zu", i + 1, v[i].cols, n);
        n = v[i].cols;
        /* A copy: standardising works in place. */
        double *copy = (double *)R_alloc(v[i].rows * n ? v[i].rows * n : 1, sizeof(double));
        memcpy(copy, REAL(x), v[i].rows * n * sizeof(double));
        v[i].values = copy;
    }
    if (!Rf_isMatrix(given_) || (size_t)Rf_ncols(given_) != n) Rf_error("Y must be a labels x items matrix");
    c = (size_t)Rf_nrows(given_);
    r = (size_t)o[0];
    uint8_t *given = (uint8_t *)R_alloc(c * n ? c * n : 1, 1);
    for (k = 0; k < c * n; k++) {
        int a = Rf_isLogical(given_) ? LOGICAL(given_)[k] : Rf_isInteger(given_) ? INTEGER(given_)[k]
                                                                                 : (int)REAL(given_)[k];
        if (a != 0 && a != 1) Rf_error("Y must hold 0 (unknown) or 1 (given positive)");
        given[k] = (uint8_t)a;
    }
    if (o[8] != 0.0)
        for (i = 0; i < nv; i++) {
            size_t kc = 0;
            mvel_check("standardize", mvnmf_standardize_view(v[i].rows, n, (double *)v[i].values, &kc));
        }
    mvnmf_fused_graph_params gp = mvnmf_fused_graph_params_default();
    gp.cross_view = 1;
    void *work;
    mvnmf_graph g;
    memset(&g, 0, sizeof g);
    g.n = n;
    if (o[14] == 0.0) { /* dense: n x n doubles */
        double *wg = (double *)R_alloc(n * n ? n * n : 1, sizeof(double));
        mvel_check("fused graph workspace", mvnmf_fused_graph_workspace(v, nv, &gp, &bytes));
        work = R_alloc(bytes ? bytes : 1, 1);
        mvel_check("fused graph", mvnmf_fused_graph(v, nv, NULL, NULL, &gp, wg, work, bytes));
        g.kind = MVNMF_GRAPH_DENSE;
        g.affinity_weights = wg;
    } else { /* each item's s largest weights, symmetrised: CSR */
        size_t s = (size_t)o[15], cap = 0, nnz = 0;
        uint32_t build = (uint32_t)o[16];
        mvnmf_ann_params ann = mvnmf_ann_params_default();
        ann.seed = (uint64_t)o[13];
        mvel_check("fused knn graph capacity", mvnmf_fused_knn_graph_capacity(n, s, &cap));
        mvnmf_csr_buffers out;
        out.row_ptr = (size_t *)R_alloc(n + 1, sizeof(size_t));
        out.col_idx = (size_t *)R_alloc(cap ? cap : 1, sizeof(size_t));
        out.weights = (double *)R_alloc(cap ? cap : 1, sizeof(double));
        out.capacity = cap;
        mvel_check("fused knn graph workspace",
                   mvnmf_fused_knn_graph_build_workspace(v, nv, s, NULL, &gp, build, &ann, &bytes));
        work = R_alloc(bytes ? bytes : 1, 1);
        mvel_check("fused knn graph",
                   mvnmf_fused_knn_graph_build(v, nv, s, NULL, &gp, build, &ann, &out, &nnz, work, bytes));
        g.kind = MVNMF_GRAPH_CSR;
        g.affinity_row_ptr = out.row_ptr;
        g.affinity_col_idx = out.col_idx;
        g.affinity_weights = out.weights;
    }

    mvnmf_mvel_params p = mvnmf_mvel_params_default();
    p.theta1 = o[1];
    p.theta2 = o[2];
    p.max_iter = (uint32_t)o[9];
    p.tol = o[10];
    p.nmf_iter = (uint32_t)o[11];
    p.seed = (uint64_t)o[12];
    if (o[3] < 0.0) {
        size_t pos = 0;
        for (k = 0; k < c * n; k++) pos += given[k];
        p.unknown_weight = pos < c * n ? (double)pos / (double)(c * n - pos) : 0.0;
    } else {
        p.unknown_weight = o[3];
    }
    double *q = (double *)R_alloc(c * r ? c * r : 1, sizeof(double));
    double *lf = (double *)R_alloc(c ? c : 1, sizeof(double));
    double *tau = (double *)R_alloc(c ? c : 1, sizeof(double));
    SEXP h = PROTECT(Rf_allocMatrix(REALSXP, (int)r, (int)n));
    SEXP scores = PROTECT(Rf_allocMatrix(REALSXP, (int)c, (int)n));
    SEXP pred = PROTECT(Rf_allocMatrix(INTSXP, (int)c, (int)n));
    SEXP used = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)c));
    uint8_t *pb = (uint8_t *)R_alloc(c * n ? c * n : 1, 1);
    for (i = 0; i < c; i++) lf[i] = o[5] > 0.0 ? o[5] : 0.0;
    if (o[5] < 0.0) { /* holdout */
        uint8_t *kept = (uint8_t *)R_alloc(c * n ? c * n : 1, 1), *held = (uint8_t *)R_alloc(c * n ? c * n : 1, 1);
        uint64_t rs = (uint64_t)o[13] * 0x2545F4914F6CDD1DULL + 17;
        for (k = 0; k < c * n; k++) {
            rs = rs * 6364136223846793005ULL + 1442695040888963407ULL;
            held[k] = given[k] && (double)(rs >> 11) * (1.0 / 9007199254740992.0) < o[6];
            kept[k] = given[k] && !held[k];
        }
        mvel_fit_once(kept, c, &g, r, &p, q, REAL(h), REAL(scores));
        mvel_check("label_freq_holdout workspace", mvnmf_mvel_label_freq_holdout_workspace(n, &bytes));
        work = R_alloc(bytes ? bytes : 1, 1);
        mvel_check("label_freq_holdout", mvnmf_mvel_label_freq_holdout(REAL(scores), kept, held, c, n,
                                                                       (size_t)o[7], lf, work, bytes));
    }
    mvnmf_report rep = mvel_fit_once(given, c, &g, r, &p, q, REAL(h), REAL(scores));
    if (o[4] != 0.0) {
        mvel_check("count_thresholds workspace", mvnmf_mvel_count_thresholds_workspace(n, &bytes));
        work = R_alloc(bytes ? bytes : 1, 1);
        mvel_check("count_thresholds",
                   mvnmf_mvel_count_thresholds(REAL(scores), given, c, n, lf, tau, pb, work, bytes));
        memcpy(REAL(used), lf, c * sizeof(double));
    } else {
        mvel_check("decide_pu workspace", mvnmf_mvel_decide_pu_workspace(n, &bytes));
        work = R_alloc(bytes ? bytes : 1, 1);
        mvel_check("decide_pu",
                   mvnmf_mvel_decide_pu(REAL(scores), given, c, n, lf, tau, REAL(used), pb, work, bytes));
    }
    for (k = 0; k < c * n; k++) INTEGER(pred)[k] = pb[k];
    SEXP tau_r = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)c));
    memcpy(REAL(tau_r), tau, c * sizeof(double));
    SEXP qm = PROTECT(Rf_allocMatrix(REALSXP, (int)c, (int)r));
    memcpy(REAL(qm), q, c * r * sizeof(double));
    const char *nm[] = { "decisions", "scores", "H", "Q", "thresholds", "label_freq", "iterations", "objective" };
    SEXP out = PROTECT(Rf_allocVector(VECSXP, 8)), names = PROTECT(Rf_allocVector(STRSXP, 8));
    SET_VECTOR_ELT(out, 0, pred);
    SET_VECTOR_ELT(out, 1, scores);
    SET_VECTOR_ELT(out, 2, h);
    SET_VECTOR_ELT(out, 3, qm);
    SET_VECTOR_ELT(out, 4, tau_r);
    SET_VECTOR_ELT(out, 5, used);
    SET_VECTOR_ELT(out, 6, Rf_ScalarInteger((int)rep.iterations));
    SET_VECTOR_ELT(out, 7, Rf_ScalarReal(rep.objective.total));
    for (i = 0; i < 8; i++) SET_STRING_ELT(names, (R_xlen_t)i, Rf_mkChar(nm[i]));
    Rf_setAttrib(out, R_NamesSymbol, names);
    UNPROTECT(8);
    return out;
}
