/* The R package's glue: .Call entry points over libmvnmf's C ABI.
 *
 * Views are R numeric matrices (features x items, column-major: passed by
 * address, no copy) or Matrix::dgCMatrix (CSC: values by address, the int
 * indices widened to size_t). Outputs are R matrices the library writes into.
 *
 * No R error or interrupt ever unwinds through the library's (Rust) frames:
 * the progress callback checks for a user interrupt inside R_ToplevelExec
 * (which stops any jump) around R_tryCatch (which keeps the condition: the
 * user's interrupt, or the error of a time limit); the callback then returns
 * nonzero, the solver stops (MVNMF_STATUS_CANCELLED) and returns normally, and
 * only then, back in this file, is that same condition signalled again in R
 * (mvnmf:::.resignal): an interrupt arrives as an interrupt condition
 * (tryCatch(interrupt = ...)), an error as that error. Every allocation that
 * can fail (R_alloc, allocVector) happens before the library is called. */
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>
#include <R_ext/Utils.h>
#include <stdint.h>
#include <string.h>

#include "mvnmf.h"

#define MAXV 64

static void fail(const char *what, mvnmf_status st)
{
    Rf_error("%s: %s", what, mvnmf_status_message((uint32_t)st));
}

/* ------------------------------------------------------------- views */

typedef struct {
    mvnmf_view v[MAXV];
    size_t count, n;
} views_t;

static SEXP slot(SEXP x, const char *name)
{
    return R_do_slot(x, Rf_install(name));
}

static void read_views(SEXP list, views_t *out)
{
    if (!Rf_isNewList(list)) Rf_error("views must be a list of matrices");
    out->count = (size_t)XLENGTH(list);
    if (out->count == 0 || out->count > MAXV) Rf_error("between 1 and %d views", MAXV);
    for (size_t i = 0; i < out->count; i++) {
        SEXP x = VECTOR_ELT(list, (R_xlen_t)i);
        mvnmf_view *v = &out->v[i];
        memset(v, 0, sizeof *v);
        if (Rf_inherits(x, "dgCMatrix")) {
            SEXP dim = slot(x, "Dim"), ii = slot(x, "i"), pp = slot(x, "p"), xx = slot(x, "x");
            size_t nnz = (size_t)XLENGTH(ii), cols = (size_t)INTEGER(dim)[1];
            size_t *ri = (size_t *)R_alloc(nnz ? nnz : 1, sizeof(size_t));
            size_t *cp = (size_t *)R_alloc(cols + 1, sizeof(size_t));
            for (size_t t = 0; t < nnz; t++) ri[t] = (size_t)INTEGER(ii)[t];
            for (size_t t = 0; t <= cols; t++) cp[t] = (size_t)INTEGER(pp)[t];
            v->kind = MVNMF_VIEW_CSC;
            v->rows = (size_t)INTEGER(dim)[0];
            v->cols = cols;
            v->values = REAL(xx);
            v->col_ptr = cp;
            v->row_idx = ri;
        } else {
            if (!Rf_isReal(x) || !Rf_isMatrix(x)) Rf_error("view %zu is not a double matrix or dgCMatrix", i + 1);
            v->kind = MVNMF_VIEW_DENSE;
            v->rows = v->col_stride = (size_t)Rf_nrows(x);
            v->cols = (size_t)Rf_ncols(x);
            v->values = REAL(x);
        }
        if (i > 0 && v->cols != out->n) Rf_error("view %zu has %zu items, view 1 has %zu", i + 1, v->cols, out->n);
        out->n = v->cols;
    }
}

/* ---------------------------------------------------------- progress */

typedef struct {
    double *trace;
    size_t cap, len;
    int verbose, interrupted;
    SEXP cell; /* list(classes caught, the condition caught): protected by the caller */
} watch_t;

static SEXP check_interrupt(void *unused)
{
    (void)unused;
    R_CheckUserInterrupt();
    return R_NilValue;
}

static SEXP keep_condition(SEXP cond, void *cell)
{
    SET_VECTOR_ELT((SEXP)cell, 1, cond);
    return R_NilValue;
}

/* Inside R_ToplevelExec: an interrupt or error raised by R_CheckUserInterrupt
 * is caught by R_tryCatch and kept in the cell; any other jump stops at the
 * top-level context. */
static void guarded_check(void *cell)
{
    R_tryCatch(check_interrupt, NULL, VECTOR_ELT((SEXP)cell, 0), keep_condition, cell, NULL, NULL);
}

static int watch(const mvnmf_progress *p, void *user)
{
    watch_t *w = (watch_t *)user;
    if (p->phase != MVNMF_PHASE_ITERATIONS) return 0; /* the pipeline's set-up phases: no iterate */
    if (w->len < w->cap) w->trace[w->len++] = p->objective.total;
    if (w->verbose > 0 && p->iter % (unsigned)w->verbose == 0)
        Rprintf("iteration %u: objective %.10g\n", p->iter, p->objective.total);
    if (!R_ToplevelExec(guarded_check, w->cell) || VECTOR_ELT(w->cell, 1) != R_NilValue) {
        w->interrupted = 1;
        return 1;
    }
    return 0;
}

/* The fits' verbose argument: print every that many iterations (0: never). */
static int verbosity(SEXP verbose)
{
    int v = Rf_asInteger(verbose);
    return v == NA_INTEGER || v < 0 ? 0 : v;
}

/* Allocates the trace and the condition cell; the cell is PROTECTed (one more
 * UNPROTECT for the caller). */
static void watch_init(watch_t *w, unsigned max_iter, int verbose)
{
    /* verbose < 0: no trace (the encodings return none; their max_iter may be
     * huge). */
    w->cap = verbose < 0 ? 0 : (size_t)max_iter + 1;
    w->trace = (double *)R_alloc(w->cap ? w->cap : 1, sizeof(double));
    w->len = 0;
    w->verbose = verbose;
    w->interrupted = 0;
    w->cell = PROTECT(Rf_allocVector(VECSXP, 2));
    SEXP classes = Rf_allocVector(STRSXP, 2);
    SET_VECTOR_ELT(w->cell, 0, classes);
    SET_STRING_ELT(classes, 0, Rf_mkChar("interrupt"));
    SET_STRING_ELT(classes, 1, Rf_mkChar("error"));
}

/* The C argument names of the solvers this file calls, in order (for saying
 * where a refusal points: the report's where_arg is a 1-based position). */
static const char *arg_name(const char *fn, uint32_t pos)
{
    static const struct {
        const char *fn;
        const char *args[16];
    } sig[] = {
        {"mvnmf_joint_nmf_fit",
         {"views", "n_views", "k", "params", "u", "v", "work", "work_bytes", "progress", "user", "report"}},
        {"mvnmf_beta_nmf_fit",
         {"views", "n_views", "k", "beta", "clip", "masks", "params", "u", "v", "work", "work_bytes", "progress",
          "user", "report"}},
        {"mvnmf_mvsl_encode",
         {"views", "n_views", "graph", "k", "params", "u", "v", "work", "work_bytes", "progress", "user", "report"}},
        {"mvnmf_pipeline_fit",
         {"views", "n_views", "kernels", "labels", "n_classes", "k", "params", "u", "v", "eta", "work",
          "work_bytes", "progress", "user", "report"}},
        {"mvnmf_deep_fit",
         {"views", "n_views", "graph", "layers", "n_layers", "params", "u", "v", "work", "work_bytes", "progress",
          "user", "report"}},
        {"mvnmf_deep_encode",
         {"views", "n_views", "graph", "layers", "n_layers", "params", "u", "v", "work", "work_bytes", "progress",
          "user", "report"}},
    };
    for (size_t i = 0; i < sizeof sig / sizeof sig[0]; i++)
        if (strcmp(sig[i].fn, fn) == 0)
            return pos >= 1 && pos <= 16 && sig[i].args[pos - 1] ? sig[i].args[pos - 1] : NULL;
    return NULL;
}

/* The status's R error, saying where when the report does (issue 33): the
 * argument, and for data the entry in R's terms (1-based: views[[v]][i, j],
 * the view's features x items matrix). */
static void fail_at(const char *what, mvnmf_status st, const mvnmf_report *rep)
{
    char at[256] = "";
    if (rep && rep->where_arg > 0) {
        const char *name = arg_name(what, rep->where_arg);
        int n = snprintf(at, sizeof at, " (argument %u%s%s%s", (unsigned)rep->where_arg, name ? " '" : "",
                         name ? name : "", name ? "'" : "");
        const char *list = name && strcmp(name, "u") == 0 ? "U" : "views";
        if (n > 0 && (size_t)n < sizeof at && rep->where_view != SIZE_MAX) {
            if (rep->where_row != SIZE_MAX && rep->where_col != SIZE_MAX)
                n += snprintf(at + n, sizeof at - (size_t)n, ": %s[[%zu]][%zu, %zu]", list, rep->where_view + 1,
                              rep->where_row + 1, rep->where_col + 1);
            else
                n += snprintf(at + n, sizeof at - (size_t)n, ": %s[[%zu]]", list, rep->where_view + 1);
        }
        if (n > 0 && (size_t)n < sizeof at - 1)
            snprintf(at + n, sizeof at - (size_t)n, ")");
    }
    Rf_error("%s: %s%s", what, mvnmf_status_message((uint32_t)st), at);
}

/* After the library has returned: the condition caught during the fit is
 * signalled again (an interrupt as an interrupt condition), else the status's
 * R error (saying where, from the report). */
static void finish(const char *what, mvnmf_status st, const watch_t *w, const mvnmf_report *rep)
{
    if (w && w->interrupted) {
        SEXP cond = VECTOR_ELT(w->cell, 1);
        if (cond != R_NilValue) {
            SEXP ns = PROTECT(R_FindNamespace(PROTECT(Rf_mkString("mvnmf"))));
            SEXP call = PROTECT(Rf_lang2(Rf_install(".resignal"), cond));
            Rf_eval(call, ns);
            UNPROTECT(3);
        }
        Rf_error("%s: interrupted while the solver ran", what);
    }
    if (st != MVNMF_STATUS_OK) fail_at(what, st, rep);
}

/* ------------------------------------------------------------ results */

/* list(U = list(matrix), V = matrix, iterations, stop, objective, trace, ...extra). */
static SEXP result(SEXP us, SEXP v, const mvnmf_report *r, const watch_t *w, const char *extra_name, SEXP extra)
{
    int n = extra ? 7 : 6;
    SEXP out = PROTECT(Rf_allocVector(VECSXP, n)), names = PROTECT(Rf_allocVector(STRSXP, n));
    SEXP trace = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)w->len));
    memcpy(REAL(trace), w->trace, w->len * sizeof(double));
    SET_VECTOR_ELT(out, 0, us);
    SET_VECTOR_ELT(out, 1, v);
    SET_VECTOR_ELT(out, 2, Rf_ScalarInteger((int)r->iterations));
    SET_VECTOR_ELT(out, 3, Rf_ScalarString(Rf_mkChar(r->stop == MVNMF_STOP_CONVERGED ? "converged"
                                                       : r->stop == MVNMF_STOP_CANCELLED ? "cancelled"
                                                                                          : "max_iter")));
    SET_VECTOR_ELT(out, 4, Rf_ScalarReal(r->objective.total));
    SET_VECTOR_ELT(out, 5, trace);
    const char *nm[] = { "U", "V", "iterations", "stop", "objective", "trace" };
    for (int i = 0; i < 6; i++) SET_STRING_ELT(names, i, Rf_mkChar(nm[i]));
    if (extra) {
        SET_VECTOR_ELT(out, 6, extra);
        SET_STRING_ELT(names, 6, Rf_mkChar(extra_name));
    }
    Rf_setAttrib(out, R_NamesSymbol, names);
    UNPROTECT(3);
    return out;
}

/* U: a list of rows_v x k matrices (len_v doubles each when lens != NULL: deep buffers). */
static SEXP alloc_us(const views_t *vs, size_t k, const size_t *lens, double **ptrs)
{
    SEXP us = PROTECT(Rf_allocVector(VECSXP, (R_xlen_t)vs->count));
    for (size_t i = 0; i < vs->count; i++) {
        SEXP u = lens ? Rf_allocVector(REALSXP, (R_xlen_t)lens[i])
                      : Rf_allocMatrix(REALSXP, (int)vs->v[i].rows, (int)k);
        SET_VECTOR_ELT(us, (R_xlen_t)i, u);
        ptrs[i] = REAL(u);
    }
    UNPROTECT(1);
    return us;
}

static void copy_start(SEXP list, const char *what, double **dst, const size_t *lens, size_t count)
{
    if (XLENGTH(list) != (R_xlen_t)count) Rf_error("%s: %zu matrices needed", what, count);
    for (size_t i = 0; i < count; i++) {
        SEXP s = VECTOR_ELT(list, (R_xlen_t)i);
        if (!Rf_isReal(s) || (size_t)XLENGTH(s) != lens[i]) Rf_error("%s[[%zu]]: %zu doubles needed", what, i + 1, lens[i]);
        memcpy(dst[i], REAL(s), lens[i] * sizeof(double));
    }
}

static int as_int(SEXP x, const char *what)
{
    if (XLENGTH(x) != 1) Rf_error("%s must be one number", what);
    double d = Rf_asReal(x);
    if (!(d >= 0 && d < 2147483647.0)) Rf_error("%s must be a nonnegative integer", what);
    return (int)d;
}

/* ------------------------------------------------------- entry points */

/* Joint NMF (one view: NMF) under the beta-divergence; U0/V0 NULL: random start. */
SEXP C_joint_nmf(SEXP views, SEXP k_, SEXP beta_, SEXP max_iter, SEXP tol, SEXP seed, SEXP stop_rule, SEXP u0,
                 SEXP v0, SEXP verbose)
{
    views_t vs;
    watch_t w;
    mvnmf_report rep;
    memset(&rep, 0, sizeof rep);
    mvnmf_nmf_params p = mvnmf_nmf_params_default();
    size_t k = (size_t)as_int(k_, "k"), bytes = 0, lens[MAXV];
    double beta = Rf_asReal(beta_), *ups[MAXV];
    mvnmf_status st;
    read_views(views, &vs);
    p.max_iter = (uint32_t)as_int(max_iter, "max_iter");
    p.tol = Rf_asReal(tol);
    p.seed = (uint64_t)Rf_asReal(seed);
    p.stop_rule = (uint32_t)as_int(stop_rule, "stop_rule");
    SEXP us = PROTECT(alloc_us(&vs, k, NULL, ups));
    SEXP v = PROTECT(Rf_allocMatrix(REALSXP, (int)k, (int)vs.n));
    if (!Rf_isNull(u0)) {
        for (size_t i = 0; i < vs.count; i++) lens[i] = vs.v[i].rows * k;
        copy_start(u0, "U0", ups, lens, vs.count);
        lens[0] = k * vs.n;
        double *vp = REAL(v);
        SEXP l = PROTECT(Rf_allocVector(VECSXP, 1));
        SET_VECTOR_ELT(l, 0, v0);
        copy_start(l, "V0", &vp, lens, 1);
        UNPROTECT(1);
        p.init = MVNMF_INIT_GIVEN;
    }
    st = beta == 2.0 ? mvnmf_joint_nmf_fit_workspace(vs.v, vs.count, k, &p, &bytes)
                     : mvnmf_beta_nmf_fit_workspace(vs.v, vs.count, k, beta, &p, &bytes);
    if (st != MVNMF_STATUS_OK) fail("mvnmf_joint_nmf_fit_workspace", st);
    void *work = R_alloc(bytes ? bytes : 1, 1);
    watch_init(&w, p.max_iter, verbosity(verbose));
    st = beta == 2.0 ? mvnmf_joint_nmf_fit(vs.v, vs.count, k, &p, ups, REAL(v), work, bytes, watch, &w, &rep)
                     : mvnmf_beta_nmf_fit(vs.v, vs.count, k, beta, -1.0, NULL, &p, ups, REAL(v), work, bytes, watch,
                                          &w, &rep);
    finish(beta == 2.0 ? "mvnmf_joint_nmf_fit" : "mvnmf_beta_nmf_fit", st, &w, &rep);
    SEXP out = result(us, v, &rep, &w, NULL, NULL);
    UNPROTECT(3);
    return out;
}

/* Encoding of new items against fixed bases: joint NMF's (mvsl = FALSE) or the
 * MvSL family's V-steps with the fit's weights (gamma, vmax). */
SEXP C_encode(SEXP views, SEXP us_, SEXP k_, SEXP max_iter, SEXP tol, SEXP gamma, SEXP vmax)
{
    views_t vs;
    watch_t w;
    mvnmf_report rep;
    memset(&rep, 0, sizeof rep);
    mvnmf_mvsl_params p;
    mvnmf_graph g;
    size_t k = (size_t)as_int(k_, "k"), bytes = 0;
    const double *ups[MAXV];
    mvnmf_status st;
    read_views(views, &vs);
    if (!Rf_isNewList(us_) || (size_t)XLENGTH(us_) != vs.count) Rf_error("U: one basis per view");
    for (size_t i = 0; i < vs.count; i++) {
        SEXP u = VECTOR_ELT(us_, (R_xlen_t)i);
        if (!Rf_isReal(u) || (size_t)XLENGTH(u) != vs.v[i].rows * k) Rf_error("U[[%zu]] must be %zu x %zu", i + 1, vs.v[i].rows, k);
        ups[i] = REAL(u);
    }
    if ((st = mvnmf_mvsl_params_preset(MVNMF_MVSL_PRESET_JOINT_NMF, &p)) != MVNMF_STATUS_OK) fail("preset", st);
    p.max_iter = (uint32_t)as_int(max_iter, "max_iter");
    p.tol = Rf_asReal(tol);
    p.gamma = Rf_asReal(gamma);
    p.vmax = Rf_asReal(vmax);
    memset(&g, 0, sizeof g);
    g.kind = MVNMF_GRAPH_NONE;
    g.n = vs.n;
    SEXP v = PROTECT(Rf_allocMatrix(REALSXP, (int)k, (int)vs.n));
    if ((st = mvnmf_mvsl_encode_workspace(vs.v, vs.count, &g, k, &p, &bytes)) != MVNMF_STATUS_OK)
        fail("mvnmf_mvsl_encode_workspace", st);
    void *work = R_alloc(bytes ? bytes : 1, 1);
    watch_init(&w, p.max_iter, -1);
    st = mvnmf_mvsl_encode(vs.v, vs.count, &g, k, &p, ups, REAL(v), work, bytes, watch, &w, &rep);
    finish("mvnmf_mvsl_encode", st, &w, &rep);
    UNPROTECT(2);
    return v;
}

/* Labels: R integers, NA = unlabeled, classes 0-based (the R side converts). */
static uint32_t *read_labels(SEXP labels, size_t n)
{
    if (!Rf_isInteger(labels) || (size_t)XLENGTH(labels) != n) Rf_error("labels: one integer per item");
    uint32_t *out = (uint32_t *)R_alloc(n, sizeof(uint32_t));
    for (size_t j = 0; j < n; j++) {
        int c = INTEGER(labels)[j];
        out[j] = c == NA_INTEGER ? MVNMF_UNLABELED : (uint32_t)c;
    }
    return out;
}

/* The pipeline (MKL weights, graph, factorization) of method `method` (MVNMF_METHOD_*). */
SEXP C_pipeline(SEXP views, SEXP labels, SEXP n_classes, SEXP k_, SEXP method, SEXP weights, SEXP max_iter, SEXP tol,
                SEXP seed, SEXP verbose, SEXP graph)
{
    views_t vs;
    watch_t w;
    mvnmf_report rep;
    memset(&rep, 0, sizeof rep);
    mvnmf_pipeline_params pp;
    mvnmf_kernel kernels[MAXV];
    size_t k = (size_t)as_int(k_, "k"), bytes = 0, nc = (size_t)as_int(n_classes, "n_classes");
    double *ups[MAXV];
    mvnmf_status st;
    read_views(views, &vs);
    uint32_t *lab = read_labels(labels, vs.n);
    if ((st = mvnmf_pipeline_params_preset((uint32_t)as_int(method, "method"), &pp)) != MVNMF_STATUS_OK)
        fail("mvnmf_pipeline_params_preset", st);
    pp.solver.max_iter = (uint32_t)as_int(max_iter, "max_iter");
    pp.solver.tol = Rf_asReal(tol);
    pp.solver.seed = (uint64_t)Rf_asReal(seed);
    pp.graph_build = (uint32_t)as_int(graph, "graph"); /* MVNMF_GRAPH_BUILD_*; checked by the library */
    pp.ann.seed = pp.solver.seed;
    if (XLENGTH(weights) != 3) Rf_error("weights: alpha, beta, gamma (NA: the preset's)");
    if (!ISNA(REAL(weights)[0])) pp.solver.alpha = REAL(weights)[0];
    if (!ISNA(REAL(weights)[1])) pp.solver.beta = REAL(weights)[1];
    if (!ISNA(REAL(weights)[2])) pp.solver.gamma = REAL(weights)[2];
    for (size_t i = 0; i < vs.count; i++) kernels[i].kind = MVNMF_KERNEL_RBF, kernels[i].gamma = 0.0;
    SEXP us = PROTECT(alloc_us(&vs, k, NULL, ups));
    SEXP v = PROTECT(Rf_allocMatrix(REALSXP, (int)k, (int)vs.n));
    SEXP eta = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)vs.count));
    if ((st = mvnmf_pipeline_fit_workspace(vs.v, vs.count, kernels, nc, k, &pp, &bytes)) != MVNMF_STATUS_OK)
        fail("mvnmf_pipeline_fit_workspace", st);
    void *work = R_alloc(bytes ? bytes : 1, 1);
    watch_init(&w, pp.solver.max_iter, verbosity(verbose));
    st = mvnmf_pipeline_fit(vs.v, vs.count, kernels, lab, nc, k, &pp, ups, REAL(v), REAL(eta), work, bytes, watch,
                            &w, &rep);
    finish("mvnmf_pipeline_fit", st, &w, &rep);
    SEXP out = PROTECT(result(us, v, &rep, &w, "eta", eta));
    /* The weights the fit used, for encode (gamma, vmax). */
    SEXP used = PROTECT(Rf_allocVector(REALSXP, 4));
    REAL(used)[0] = pp.solver.alpha, REAL(used)[1] = pp.solver.beta, REAL(used)[2] = pp.solver.gamma;
    REAL(used)[3] = pp.solver.vmax;
    Rf_setAttrib(out, Rf_install("weights"), used);
    UNPROTECT(6);
    return out;
}

/* DMCL (deep, SGE graph of the labels) with hidden sizes `layers` (K last). */
SEXP C_dmcl(SEXP views, SEXP labels, SEXP n_classes, SEXP layers_, SEXP weights, SEXP max_iter, SEXP seed,
            SEXP verbose)
{
    views_t vs;
    watch_t w;
    mvnmf_report rep;
    memset(&rep, 0, sizeof rep);
    mvnmf_deep_params dp;
    mvnmf_graph g;
    size_t layers[16], nl = (size_t)XLENGTH(layers_), lens[MAXV], bytes = 0;
    double *ups[MAXV];
    mvnmf_status st;
    read_views(views, &vs);
    if (nl == 0 || nl > 16 || !Rf_isReal(layers_)) Rf_error("layers: 1 to 16 sizes, K last");
    for (size_t l = 0; l < nl; l++) layers[l] = (size_t)REAL(layers_)[l];
    size_t k = layers[nl - 1];
    memset(&g, 0, sizeof g);
    g.kind = MVNMF_GRAPH_SGE;
    g.n = vs.n;
    g.labels = read_labels(labels, vs.n);
    g.n_classes = (size_t)as_int(n_classes, "n_classes");
    if ((st = mvnmf_deep_params_preset(MVNMF_DEEP_PRESET_DMCL, &dp)) != MVNMF_STATUS_OK) fail("preset", st);
    dp.top.max_iter = (uint32_t)as_int(max_iter, "max_iter");
    dp.top.tol = 0.0;
    dp.top.seed = (uint64_t)Rf_asReal(seed);
    if (XLENGTH(weights) != 3) Rf_error("weights: alpha, beta, gamma (NA: the preset's)");
    if (!ISNA(REAL(weights)[0])) dp.top.alpha = REAL(weights)[0];
    if (!ISNA(REAL(weights)[1])) dp.top.beta = REAL(weights)[1];
    if (!ISNA(REAL(weights)[2])) dp.top.gamma = REAL(weights)[2];
    for (size_t i = 0; i < vs.count; i++)
        if ((st = mvnmf_deep_factor_len(vs.v[i].rows, layers, nl, &lens[i])) != MVNMF_STATUS_OK)
            fail("mvnmf_deep_factor_len", st);
    SEXP us = PROTECT(alloc_us(&vs, k, lens, ups));
    SEXP v = PROTECT(Rf_allocMatrix(REALSXP, (int)k, (int)vs.n));
    if ((st = mvnmf_deep_fit_workspace(vs.v, vs.count, &g, layers, nl, &dp, &bytes)) != MVNMF_STATUS_OK)
        fail("mvnmf_deep_fit_workspace", st);
    void *work = R_alloc(bytes ? bytes : 1, 1);
    watch_init(&w, dp.top.max_iter, verbosity(verbose));
    st = mvnmf_deep_fit(vs.v, vs.count, &g, layers, nl, &dp, ups, REAL(v), work, bytes, watch, &w, &rep);
    finish("mvnmf_deep_fit", st, &w, &rep);
    SEXP out = PROTECT(result(us, v, &rep, &w, NULL, NULL));
    SEXP used = PROTECT(Rf_allocVector(REALSXP, 4));
    REAL(used)[0] = dp.top.alpha, REAL(used)[1] = dp.top.beta, REAL(used)[2] = dp.top.gamma;
    REAL(used)[3] = dp.top.vmax;
    Rf_setAttrib(out, Rf_install("weights"), used);
    UNPROTECT(5);
    return out;
}

/* Out-of-sample encoding of new items through a DMCL fit's layers (no graph:
 * the new items' labels are unknown), with the fit's weights (alpha, beta,
 * gamma, vmax). */
SEXP C_deep_encode(SEXP views, SEXP us_, SEXP layers_, SEXP weights, SEXP max_iter, SEXP tol)
{
    views_t vs;
    watch_t w;
    mvnmf_report rep;
    memset(&rep, 0, sizeof rep);
    mvnmf_deep_params dp;
    mvnmf_graph g;
    size_t layers[16], nl = (size_t)XLENGTH(layers_), len = 0, bytes = 0;
    const double *ups[MAXV];
    mvnmf_status st;
    read_views(views, &vs);
    if (nl == 0 || nl > 16 || !Rf_isReal(layers_)) Rf_error("layers: 1 to 16 sizes, K last");
    for (size_t l = 0; l < nl; l++) layers[l] = (size_t)REAL(layers_)[l];
    size_t k = layers[nl - 1];
    if (!Rf_isNewList(us_) || (size_t)XLENGTH(us_) != vs.count) Rf_error("U: one factor buffer per view");
    for (size_t i = 0; i < vs.count; i++) {
        SEXP u = VECTOR_ELT(us_, (R_xlen_t)i);
        if ((st = mvnmf_deep_factor_len(vs.v[i].rows, layers, nl, &len)) != MVNMF_STATUS_OK)
            fail("mvnmf_deep_factor_len", st);
        if (!Rf_isReal(u) || (size_t)XLENGTH(u) != len) Rf_error("U[[%zu]] must hold %zu doubles", i + 1, len);
        ups[i] = REAL(u);
    }
    if (!Rf_isReal(weights) || XLENGTH(weights) != 4) Rf_error("weights: alpha, beta, gamma, vmax");
    if ((st = mvnmf_deep_params_preset(MVNMF_DEEP_PRESET_DMCL, &dp)) != MVNMF_STATUS_OK) fail("preset", st);
    dp.top.max_iter = (uint32_t)as_int(max_iter, "max_iter");
    dp.top.tol = Rf_asReal(tol);
    dp.top.alpha = REAL(weights)[0], dp.top.beta = REAL(weights)[1], dp.top.gamma = REAL(weights)[2];
    dp.top.vmax = REAL(weights)[3];
    memset(&g, 0, sizeof g);
    g.kind = MVNMF_GRAPH_NONE;
    g.n = vs.n;
    SEXP v = PROTECT(Rf_allocMatrix(REALSXP, (int)k, (int)vs.n));
    if ((st = mvnmf_deep_encode_workspace(vs.v, vs.count, &g, layers, nl, &dp, &bytes)) != MVNMF_STATUS_OK)
        fail("mvnmf_deep_encode_workspace", st);
    void *work = R_alloc(bytes ? bytes : 1, 1);
    watch_init(&w, dp.top.max_iter, -1);
    st = mvnmf_deep_encode(vs.v, vs.count, &g, layers, nl, &dp, ups, REAL(v), work, bytes, watch, &w, &rep);
    finish("mvnmf_deep_encode", st, &w, &rep);
    UNPROTECT(2);
    return v;
}

SEXP C_version(void)
{
    SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
    SET_VECTOR_ELT(out, 0, Rf_mkString(mvnmf_version()));
    SET_VECTOR_ELT(out, 1, Rf_ScalarInteger((int)mvnmf_abi_version()));
    UNPROTECT(1);
    return out;
}

SEXP C_mvel(SEXP, SEXP, SEXP);

static const R_CallMethodDef CALLS[] = {
    { "C_joint_nmf", (DL_FUNC)&C_joint_nmf, 10 },
    { "C_encode", (DL_FUNC)&C_encode, 7 },
    { "C_pipeline", (DL_FUNC)&C_pipeline, 11 },
    { "C_dmcl", (DL_FUNC)&C_dmcl, 8 },
    { "C_deep_encode", (DL_FUNC)&C_deep_encode, 6 },
    { "C_mvel", (DL_FUNC)&C_mvel, 3 },
    { "C_version", (DL_FUNC)&C_version, 0 },
    { NULL, NULL, 0 },
};

void R_init_mvnmf(DllInfo *dll)
{
    R_registerRoutines(dll, NULL, CALLS, NULL, NULL);
    R_useDynamicSymbols(dll, FALSE);
}
