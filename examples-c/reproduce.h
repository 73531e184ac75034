/* reproduce.h: the types shared by reproduce.c (options, methods, fits, the protocol) and
 * reproduce_tables.c (the printed tables), and the small helpers both use. */
#ifndef MVNMF_REPRODUCE_H
#define MVNMF_REPRODUCE_H

#include "example_io.h"

#define MAX_FRACTIONS 32
#define MAX_PARAMS 8
#define MAX_VIEWS 64
#define RISE_TOL 1e-10
#define DEFAULT_LAYERS "100,50"
#define N_METHODS 10 /* the entries of METHODS[] (reproduce.c) */

typedef struct {
    char file[256], name[64]; /* as in meta.txt; name=... or the file name */
    size_t rows;              /* features */
    double *x;                /* rows x n */
    mvnmf_prep_report prep;   /* smallest raw value, features shifted (--shift), scale */
} view_t;

typedef struct {
    size_t n, n_views, n_classes, present; /* items, views, max id + 1, classes present */
    view_t views[MAX_VIEWS];
    uint32_t *labels;
} dataset_t;

typedef struct {
    size_t k, iters, splits, seed, knn_k, restarts, folds, budget, n_fractions;
    double tol, mkl_lambda, sparse_below, fractions[MAX_FRACTIONS];
    char fraction_text[MAX_FRACTIONS][32];     /* "10%" ... */
    const char *fraction_cols[MAX_FRACTIONS]; /* ... the tables' columns */
    int shift, normalize, tune, per_candidate, depth, learn_eta, fractions_given;
    uint32_t nmi, kernel, penalty, graph; /* MVNMF_NMI_*, MVNMF_KERNEL_*, MVNMF_PENALTY_*, MVNMF_GRAPH_BUILD_* */
    const char *methods, *labels, *views, *layers;
} options_t;

/* A method's weight (alpha, beta, ...), settable by --param; grid: 3 values for --tune. */
typedef struct {
    const char *name;
    double value;
    const double *grid;
} param_t;

enum { MODEL_NMF, MODEL_JOINT, MODEL_PIPELINE, MODEL_DEEP }; /* the library call */
enum { ON_ALL, ON_VIEW, ON_CONCAT };                          /* its views */

typedef struct {
    const char *key, *name, *about; /* --methods key, table name, one line */
    int uses_labels, on, model;     /* on = ON_VIEW: one candidate per view, the best is reported */
    uint32_t preset;                /* MVNMF_METHOD_* (pipeline) or MVNMF_DEEP_PRESET_* (deep) */
    const char *layers;             /* deep: hidden layer sizes, K is appended */
    param_t params[MAX_PARAMS];
} method_t;

extern method_t METHODS[N_METHODS];

static inline size_t n_params(const method_t *m)
{
    size_t p = 0;
    while (p < MAX_PARAMS && m->params[p].name) p++;
    return p;
}

/* GNMF, MvSL-L, MvSL-T: a neighbour graph under the fused kernel (MvSL-S, MCL, DMCL: SGE). */
static inline int neighbour_graph(const method_t *m)
{
    return m->model == MODEL_PIPELINE && (m->preset == MVNMF_METHOD_GNMF || m->preset == MVNMF_METHOD_MVSL_L ||
                                          m->preset == MVNMF_METHOD_MVSL_T);
}

/* Parses hidden layer sizes ("100,50"; "" or "-" for none) and appends K;
 * returns the number of layers (at most 16). */
static inline size_t parse_layers(const char *spec, size_t k, size_t *layers)
{
    size_t m = 0;
    char tok[32];
    if (spec && strcmp(spec, "-") && strcmp(spec, "0"))
        while (next_token(&spec, tok, sizeof tok)) {
            if (m == 15) die("layers: at most 15 hidden layers");
            if ((layers[m++] = parse_size(tok, "layers")) == 0) die("layers: sizes must be at least 1");
        }
    layers[m++] = k;
    return m;
}

/* The first `count` sizes of parse_layers(spec, k) (SIZE_MAX: all) joined by sep:
 * "100-50-20" or "100,50". */
static inline void layers_text(const char *spec, size_t k, size_t count, const char *sep, char *out, size_t cap)
{
    size_t layers[16], m = parse_layers(spec, k, layers), len = 0;
    if (count != SIZE_MAX && count > m - 1)
        die("--depth: the layers '%s' have %zu hidden sizes, depth %zu needs %zu", spec, m - 1, count + 1, count);
    out[0] = 0;
    for (size_t i = 0; i < (count < m ? count : m) && len + 1 < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%zu", i ? sep : "", layers[i]);
}

/* What the fits of one method showed (every fit, tuning fits included). */
typedef struct {
    unsigned fits, rising, nonfinite, dead, unwatched, graphs;
    double max_rise, zero_cols, cols, affinity_nnz, penalty_nnz;
    size_t ka_min, ka_asked; /* smallest ka used (reduced for small classes), ka asked */
} diag_t;

/* Shared state of a run. */
typedef struct {
    const dataset_t *data;
    const options_t *opt;
    buf_t work, cv_work;                 /* workspaces of the fits, of cross-validation */
    mvnmf_view views[MAX_VIEWS], concat; /* the views; all stacked into one (ConcatDNMF) */
    mvnmf_kernel kernels[MAX_VIEWS];
    const char *layers;             /* hidden layers of the deep method being fitted */
    diag_t *diag, diags[N_METHODS]; /* of the method being fitted; of each selected method */
    int main_fit, eta_set;          /* a fit whose encoding is evaluated; it wrote eta */
    double eta[MAX_VIEWS], *etas;   /* fusion weights: of the last fit; [fraction][split][view] */
    uint8_t *eta_ok;                /* of the first main fit with a graph: [fraction][split] */
} ctx_t;

/* One method (with --depth: at one depth) through the protocol. */
typedef struct {
    ctx_t *c;
    const method_t *m;
    size_t mi, depth, cand, best; /* its c->diags[]; --depth: 1..3; candidate run, reported */
    char hidden[256];             /* deep: the hidden layer sizes */
    mvnmf_split_scores *scores;   /* [candidate][fraction][split] */
    mvnmf_score_summary *sums;    /* [candidate][fraction] */
    double *chosen, fit_time;     /* --tune: [fraction][split][param]; main fits only */
} job_t;

void print_header(const ctx_t *c, const char *dir);
void print_methods(const ctx_t *c, const job_t *jobs, size_t n_jobs);
void print_results(const ctx_t *c, const job_t *jobs, size_t n_jobs);

#endif
