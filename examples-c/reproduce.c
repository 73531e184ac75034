/* reproduce: the papers' evaluation tables on any dataset directory, through mvnmf's
 * C ABI: parse the options, load the dataset, run every selected method through the
 * library's protocol, print the tables (REPRODUCE.md; --help lists the options).
 *
 *   reproduce [options] DATASET_DIR    (meta.txt, viewK.f64[.gz], labels.txt)
 *
 * The protocol is the library's (DESIGN §9): mvnmf_evaluate_protocol draws, for each
 * split s (seed + s) and labeled fraction, a per-class stratified labeled subset, asks
 * fit_cb() for the encoding of all items from the labeled items' classes only, and
 * scores it (kNN accuracy of the test items, k-means ACC and NMI of their encodings);
 * mvnmf_summarize_scores gives mean ± std (population std); --tune chooses a method's
 * weights by mvnmf_cross_validate inside the labeled items. A method is one line of
 * METHODS[]; every fit is watched through the progress callback (the checks table).
 *
 * Build:  cargo build --release -p mvnmf-capi && make -C examples-c reproduce
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mvnmf.h"

#define MAX_FRACTIONS 32
#define MAX_PARAMS 8
#define RISE_TOL 1e-10
#define DEFAULT_LAYERS "100,50"

/* ------------------------------------------------------------------ utils */

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("reproduce: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        die("out of memory (%zu x %zu bytes)", n, size);
    return p;
}

/* A buffer of at least `bytes`, reallocated only when it must grow. */
static void *grow(void **buf, size_t *cap, size_t bytes)
{
    if (bytes > *cap) {
        free(*buf);
        *buf = xcalloc(1, bytes);
        *cap = bytes;
    }
    return *buf;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Dies with mvnmf's message when a call failed. */
static void check(mvnmf_status s, const char *what)
{
    if (s != MVNMF_STATUS_OK)
        die("%s failed: %s (status %u)", what, mvnmf_status_message((uint32_t)s), (unsigned)s);
}

static size_t parse_size(const char *s, const char *what)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-')
        die("%s: not a nonnegative integer: '%s'", what, s);
    return (size_t)v;
}

static double parse_double(const char *s, const char *what)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v))
        die("%s: not a number: '%s'", what, s);
    return v;
}

/* The next token of a comma-separated list *p into tok; 0 at the end. */
static int next_token(const char **p, char *tok, size_t cap)
{
    if (!**p)
        return 0;
    const char *e = strchr(*p, ',');
    size_t l = e ? (size_t)(e - *p) : strlen(*p);
    snprintf(tok, cap, "%.*s", (int)(l < cap - 1 ? l : cap - 1), *p);
    *p += l + (e != NULL);
    return 1;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* ---------------------------------------------------------------- dataset */

typedef struct {
    char file[256], name[64]; /* as in meta.txt; name=... or the file name */
    size_t rows;              /* features */
    double *x;                /* rows x n */
    mvnmf_prep_report prep;   /* smallest raw value, features shifted (--shift), scale */
} view_t;

typedef struct {
    size_t n, n_views, n_classes, present; /* items, views, max id + 1, classes present */
    view_t *views;
    uint32_t *labels;
} dataset_t;

static FILE *open_in(const char *dir, const char *file, int *gz, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", dir, file);
    FILE *f = fopen(path, "rb");
    *gz = ends_with(file, ".gz");
    if (!f && !*gz) { /* viewK.f64 missing: try viewK.f64.gz */
        snprintf(path, cap, "%s/%s.gz", dir, file);
        *gz = (f = fopen(path, "rb")) != NULL;
    }
    if (f && *gz) {
        fclose(f);
        if (strchr(path, '\''))
            die("%s: a quote in the path; decompress it first with gunzip -k", path);
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "gzip -dc '%s'", path);
        f = popen(cmd, "r");
    }
    if (!f)
        die("cannot open %s/%s: %s", dir, file, strerror(errno));
    return f;
}

/* Reads rows*cols little-endian doubles (on any host). */
static double *read_f64(const char *dir, const char *file, size_t rows, size_t cols)
{
    char path[4096];
    int gz;
    FILE *f = open_in(dir, file, &gz, path, sizeof path);
    if (cols > SIZE_MAX / rows / sizeof(double))
        die("%s: %zu x %zu doubles do not fit in memory", path, rows, cols);
    double *x = xcalloc(1, rows * cols * sizeof(double));
    unsigned char b[8];
    for (size_t i = 0; i < rows * cols; i++) {
        if (fread(b, 1, 8, f) != 8)
            die("%s: expected %zu x %zu doubles, the file is shorter", path, rows, cols);
        uint64_t u = 0;
        for (int k = 7; k >= 0; k--)
            u = (u << 8) | b[k];
        memcpy(&x[i], &u, 8);
    }
    if (fread(b, 1, 1, f) == 1)
        die("%s: longer than %zu x %zu doubles: is rows/cols in meta.txt right?", path, rows, cols);
    if (gz ? pclose(f) != 0 : fclose(f) != 0)
        die("%s: reading failed (gzip -dc: is gzip installed? or run gunzip -k on it)", path);
    return x;
}

/* The value of "key=" in a meta.txt line, into out (0 if absent). */
static int meta_field(const char *line, const char *key, char *out, size_t cap)
{
    size_t kl = strlen(key), i = 0;
    for (const char *p = line; (p = strstr(p, key)) != NULL; p += kl)
        if ((p == line || p[-1] == ' ' || p[-1] == '\t') && p[kl] == '=') {
            for (p += kl + 1; *p && !strchr(" \t\r\n", *p) && i + 1 < cap;)
                out[i++] = *p++;
            out[i] = 0;
            return 1;
        }
    return 0;
}

/* labels_file: one class id per item; counts the classes present. */
static void load_labels(dataset_t *d, const char *dir, const char *labels_file)
{
    char line[4096], path[4096], tok[64];
    int gz;
    FILE *f = open_in(dir, labels_file, &gz, path, sizeof path);
    d->labels = xcalloc(1, d->n * sizeof(uint32_t));
    size_t count = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%63s", tok) == 1) {
            if (count == d->n)
                die("%s: more than %zu labels", path, d->n);
            size_t c = parse_size(tok, path);
            if (c >= MVNMF_UNLABELED)
                die("%s: label %zu out of range", path, c);
            d->labels[count++] = (uint32_t)c;
            d->n_classes = c + 1 > d->n_classes ? c + 1 : d->n_classes;
        }
    gz ? pclose(f) : fclose(f);
    if (count != d->n)
        die("%s: %zu labels for %zu items", path, count, d->n);
    for (uint32_t c = 0; c < d->n_classes; c++)
        for (size_t j = 0; j < d->n; j++)
            if (d->labels[j] == c) {
                d->present++;
                break;
            }
}

static void load(dataset_t *d, const char *dir, const char *labels_file, const char *keep)
{
    char line[4096], path[4096], file[256], rows[64], cols[64], tok[64];
    int gz;
    memset(d, 0, sizeof *d);
    FILE *f = open_in(dir, "meta.txt", &gz, path, sizeof path);
    d->views = xcalloc(64, sizeof(view_t));
    for (size_t pos = 1; fgets(line, sizeof line, f);) {
        if (sscanf(line, "%255s", file) != 1 || strncmp(file, "view", 4) ||
            !(ends_with(file, ".f64") || ends_with(file, ".f64.gz")))
            continue;
        if (!meta_field(line, "rows", rows, sizeof rows) || !meta_field(line, "cols", cols, sizeof cols))
            die("%s: view line without rows= and cols=: %s", path, line);
        view_t *v = &d->views[d->n_views];
        snprintf(v->file, sizeof v->file, "%s", file);
        if (!meta_field(line, "name", v->name, sizeof v->name))
            snprintf(v->name, sizeof v->name, "%.63s", file);
        v->rows = parse_size(rows, "rows");
        size_t n = parse_size(cols, "cols");
        if (v->rows == 0 || n == 0)
            die("%s: view %s is empty (%zu x %zu)", path, file, v->rows, n);
        if (d->n_views > 0 && n != d->n)
            die("%s: view %s has %zu items, the first view %zu", path, file, n, d->n);
        d->n = n;
        /* --views: names or 1-based positions in meta.txt. */
        int kept = !keep;
        for (const char *p = keep; p && next_token(&p, tok, sizeof tok);)
            kept |= !strcmp(tok, v->name) || !strcmp(tok, v->file) || strtoul(tok, NULL, 10) == pos;
        pos++;
        if (kept && ++d->n_views == 64)
            die("%s: at most 63 views", path);
    }
    fclose(f);
    if (d->n_views == 0)
        die(keep ? "--views %s: no such view (names or positions from meta.txt)"
                 : "%s: no view lines (\"viewK.f64 name=... rows=R cols=N\")",
            keep ? keep : path);
    for (size_t i = 0; i < d->n_views; i++)
        d->views[i].x = read_f64(dir, d->views[i].file, d->views[i].rows, d->n);

    load_labels(d, dir, labels_file);
    if (d->present < 2)
        die("%s: the labels have a single class", labels_file);
}

/* Shifts (--shift) and normalises every view through mvnmf_prepare_view. */
static void preprocess(dataset_t *d, int shift, int normalize)
{
    mvnmf_prep_params p = { (uint32_t)shift, (uint32_t)normalize };
    for (size_t i = 0; i < d->n_views; i++) {
        view_t *v = &d->views[i];
        mvnmf_status s = mvnmf_prepare_view(v->rows, d->n, v->x, &p, &v->prep);
        if (s == MVNMF_STATUS_NEGATIVE_INPUT)
            die("view %s (%s) has negative values; NMF-based methods need nonnegative data. Rerun with "
                "--shift to shift every feature of such a view by its minimum over the items "
                "(x_ij - min_j x_ij), or leave the view out with --views.", v->name, v->file);
        if (s != MVNMF_STATUS_OK)
            die("view %s (%s): %s%s", v->name, v->file, mvnmf_status_message((uint32_t)s),
                s == MVNMF_STATUS_BAD_PARAMETER ? " (all zeros: it cannot be normalised)" : "");
    }
}

/* ---------------------------------------------------------------- options */

typedef struct {
    size_t k, iters, splits, seed, knn_k, restarts, folds, n_fractions;
    double tol, mkl_lambda, fractions[MAX_FRACTIONS];
    int shift, normalize, tune, per_candidate, depth, learn_eta, fractions_given;
    uint32_t nmi, kernel, penalty; /* MVNMF_NMI_*, MVNMF_KERNEL_*, MVNMF_PENALTY_* */
    const char *methods, *labels, *views, *layers;
} options_t;

static const char *nmi_name(uint32_t n)
{
    return n == MVNMF_NMI_MAX          ? "max(H(C), H(C'))  [seed 003 eq. 43]"
           : n == MVNMF_NMI_ARITHMETIC ? "(H(C) + H(C'))/2  [scikit-learn's default]"
           : n == MVNMF_NMI_GEOMETRIC  ? "sqrt(H(C) H(C'))"
                                       : "min(H(C), H(C'))";
}

/* ---------------------------------------------------------------- methods */

/* A method's weight (alpha, beta, ...), settable by --param; grid: 3 values for --tune. */
typedef struct {
    const char *name;
    double value;
    const double *grid;
} param_t;

enum { MODEL_NMF, MODEL_JOINT, MODEL_SHALLOW, MODEL_DEEP };         /* the solver */
enum { ON_ALL, ON_VIEW, ON_CONCAT };                                 /* its views */
enum { GRAPH_NONE, GRAPH_SGE, GRAPH_KNN, GRAPH_LDGE, GRAPH_TGE };    /* its graph */

typedef struct {
    const char *key, *name, *about; /* --methods key, table name, one line */
    int uses_labels, on, model;     /* on = ON_VIEW: one candidate per view, the best is reported */
    uint32_t preset;                /* MVNMF_MVSL_PRESET_* / MVNMF_DEEP_PRESET_* */
    int graph;
    const char *layers;             /* deep: hidden layer sizes, K is appended */
    param_t params[MAX_PARAMS];
} method_t;

/* --tune grids: the papers' alpha x {1/100, 1/10, 1}, beta in {0.002, 0.02, 0.2}. */
static const double BETA[] = { 0.002, 0.02, 0.2 };
static const double ALPHA_MVSL[] = { 0.15, 1.5, 15 }; /* seed 003: alpha = 15 */
static const double ALPHA_MCL[] = { 1, 10, 100 };     /* seed 001: alpha = 100 */
#define MVSL_W { "alpha", 1.5, ALPHA_MVSL }, { "beta", 0.02, BETA }, { "gamma", 0, NULL }, { "vmax", 1, NULL }
#define MCL_W { "alpha", 10, ALPHA_MCL }, { "beta", 0.015, BETA }, { "gamma", 0.005, NULL }, { "vmax", 1, NULL }

/* Defaults: the papers' alpha / 10 (DESIGN §9: the papers' values zero most
 * columns of U on these normalised views), their beta and gamma, vmax = 1. The
 * deep layers: the paper's [300 200 125] is for views of thousands of features. */
static method_t METHODS[] = {
    { "nmf-b", "NMF-b", "NMF on each single view; the tables report the view with the best mean "
      "kNN accuracy over all fractions and splits", 0, ON_VIEW, MODEL_NMF, 0, GRAPH_NONE, NULL, { { 0 } } },
    { "concat", "ConcatNMF", "joint multi-view NMF on all views (mvnmf_joint_nmf_fit)", 0, ON_ALL,
      MODEL_JOINT, 0, GRAPH_NONE, NULL, { { 0 } } },
    { "dnmf", "DNMF-b", "deep NMF (DNMF preset, layer-wise pre-training + fine-tuning) on each single "
      "view; the best view is reported as for NMF-b", 0, ON_VIEW, MODEL_DEEP, MVNMF_DEEP_PRESET_DNMF,
      GRAPH_NONE, DEFAULT_LAYERS, { { 0 } } },
    { "concat-dnmf", "ConcatDNMF", "deep NMF (DNMF preset) of all views' features stacked", 0, ON_CONCAT,
      MODEL_DEEP, MVNMF_DEEP_PRESET_DNMF, GRAPH_NONE, DEFAULT_LAYERS, { { 0 } } },
    { "gnmf", "GNMF", "GNMF preset (no sparsity), affinity-only graph: within-class kNN among the "
      "labeled items under the MKL-fused kernel (mvnmf_ldge, kp = 0)", 1, ON_ALL, MODEL_SHALLOW,
      MVNMF_MVSL_PRESET_GNMF, GRAPH_KNN, NULL, { { "beta", 0.02, BETA }, { "vmax", 1, NULL }, { "ka", 5, NULL } } },
    { "mvsl-s", "MvSL-S", "MVSL preset (L1,2), simple graph embedding (MVNMF_GRAPH_SGE)", 1, ON_ALL,
      MODEL_SHALLOW, MVNMF_MVSL_PRESET_MVSL, GRAPH_SGE, NULL, { MVSL_W } },
    { "mvsl-l", "MvSL-L", "MVSL preset (L1,2), LDGE graph (seed-003 class-pair penalty) under the "
      "MKL-fused kernel", 1, ON_ALL, MODEL_SHALLOW, MVNMF_MVSL_PRESET_MVSL, GRAPH_LDGE, NULL,
      { MVSL_W, { "ka", 5, NULL }, { "kp", 3, NULL } } },
    { "mvsl-t", "MvSL-T", "MVSL preset (L1,2), TGE graph (all items) under the MKL-fused kernel", 1,
      ON_ALL, MODEL_SHALLOW, MVNMF_MVSL_PRESET_MVSL, GRAPH_TGE, NULL,
      { MVSL_W, { "ka", 5, NULL }, { "kp", 3, NULL }, { "sigma", 2, NULL } } },
    { "mcl", "MCL", "MCL preset (L1,inf, gamma on V), SGE graph", 1, ON_ALL, MODEL_SHALLOW,
      MVNMF_MVSL_PRESET_MCL, GRAPH_SGE, NULL, { MCL_W } },
    { "dmcl", "DMCL", "DMCL preset (deep, L1,inf on the top layers, box on lower layers), SGE graph", 1,
      ON_ALL, MODEL_DEEP, MVNMF_DEEP_PRESET_DMCL, GRAPH_SGE, DEFAULT_LAYERS, { MCL_W } },
};
#define N_METHODS (sizeof METHODS / sizeof METHODS[0])

static size_t n_params(const method_t *m)
{
    size_t p = 0;
    while (p < MAX_PARAMS && m->params[p].name)
        p++;
    return p;
}

/* The value of weight `name` (or `dflt` if the method has none). */
static double pget(const param_t *p, const char *name, double dflt)
{
    for (size_t i = 0; i < MAX_PARAMS && p[i].name; i++)
        if (!strcmp(p[i].name, name))
            return p[i].value;
    return dflt;
}

static size_t pget_count(const param_t *p, const char *name, size_t dflt)
{
    double x = pget(p, name, (double)dflt);
    if (!(x >= 0 && x == floor(x) && x < 1e9))
        die("%s must be a nonnegative integer, not %g", name, x);
    return (size_t)x;
}

/* Parses hidden layer sizes ("100,50"; "" or "-" for none) and appends K;
 * returns the number of layers (at most 16). */
static size_t parse_layers(const char *spec, size_t k, size_t *layers)
{
    size_t m = 0;
    char tok[32];
    if (spec && strcmp(spec, "-") && strcmp(spec, "0"))
        while (next_token(&spec, tok, sizeof tok)) {
            if (m == 15)
                die("layers: at most 15 hidden layers");
            if ((layers[m++] = parse_size(tok, "layers")) == 0)
                die("layers: sizes must be at least 1");
        }
    layers[m++] = k;
    return m;
}

/* The first `count` sizes of parse_layers(spec, k) (SIZE_MAX: all) joined by sep:
 * "100-50-20" or "100,50". */
static void layers_text(const char *spec, size_t k, size_t count, const char *sep, char *out, size_t cap)
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
    double fit_time;         /* main fits only */
} diag_t;

/* The progress callback: watches the objective of every iteration. */
typedef struct {
    double last, max_rise;
    int started, nonfinite;
    unsigned calls;
} watch_t;

static int watch(const mvnmf_progress *p, void *user)
{
    watch_t *w = user;
    double t = p->objective.total;
    w->calls++;
    if (!isfinite(t))
        return w->nonfinite = 1, 0;
    if (w->started) {
        double rise = (t - w->last) / (fabs(w->last) > 1e-300 ? fabs(w->last) : 1e-300);
        w->max_rise = rise > w->max_rise ? rise : w->max_rise;
    }
    w->last = t;
    w->started = 1;
    return 0;
}

/* Shared state of a run. */
typedef struct {
    const dataset_t *data;
    const options_t *opt;
    void *work, *cv_work;       /* growable workspaces (fits, cross-validation) */
    size_t work_bytes, cv_bytes;
    mvnmf_view *views, concat;  /* the views; all stacked into one (ConcatDNMF) */
    double *concat_x;
    mvnmf_kernel *kernels;      /* one per view */
    const char *layers;         /* hidden layers of the deep method being fitted */
    diag_t *diag;               /* of the method being fitted */
    int main_fit, eta_set;      /* a fit whose encoding is evaluated; eta below was set */
    double *eta;                /* fusion weights of the last neighbour graph */
} ctx_t;

static void *workspace(ctx_t *c, size_t bytes)
{
    return grow(&c->work, &c->work_bytes, bytes);
}

/* ------------------------------------------------------------------ fits */

/* The neighbour-graph options of a method: its ka, kp, sigma; ka is reduced to
 * (smallest labeled class) - 1 where a class has too few labeled items. */
static mvnmf_graph_params graph_params(ctx_t *c, const uint32_t *labels, const param_t *params, int kind)
{
    mvnmf_graph_params gp = mvnmf_graph_params_default();
    size_t minc = SIZE_MAX, *cnt = xcalloc(c->data->n_classes, sizeof(size_t));
    gp.ka = pget_count(params, "ka", gp.ka);
    gp.kp = kind == GRAPH_KNN ? 0 : pget_count(params, "kp", gp.kp);
    gp.sigma = pget(params, "sigma", gp.sigma);
    gp.penalty = c->opt->penalty;
    for (size_t j = 0; j < c->data->n; j++)
        cnt[labels[j] == MVNMF_UNLABELED ? 0 : labels[j]] += labels[j] != MVNMF_UNLABELED;
    for (size_t cl = 0; cl < c->data->n_classes; cl++)
        minc = cnt[cl] > 0 && cnt[cl] < minc ? cnt[cl] : minc;
    free(cnt);
    if (minc < 2)
        die("a class has a single labeled item: no within-class neighbour graph (use a larger fraction)");
    if (c->main_fit)
        c->diag->ka_asked = gp.ka;
    gp.ka = gp.ka > minc - 1 ? minc - 1 : gp.ka;
    if (c->main_fit && gp.ka < c->diag->ka_min)
        c->diag->ka_min = gp.ka;
    return gp;
}

/* The views' fusion weights into c->eta: kernel-target alignment on the labeled
 * items of `labels` (mvnmf_mkl_weights), or uniform with --uniform-eta. */
static void fusion_weights(ctx_t *c, const uint32_t *labels)
{
    const dataset_t *d = c->data;
    mvnmf_mkl_params mp = mvnmf_mkl_params_default();
    size_t bytes;
    mp.lambda = c->opt->mkl_lambda;
    for (size_t i = 0; i < d->n_views && !c->opt->learn_eta; i++)
        c->eta[i] = 1.0 / (double)d->n_views;
    if (c->opt->learn_eta) {
        check(mvnmf_mkl_weights_workspace(c->views, d->n_views, c->kernels, d->n_classes, &mp, &bytes),
              "mvnmf_mkl_weights_workspace");
        check(mvnmf_mkl_weights(c->views, d->n_views, c->kernels, labels, d->n_classes, &mp, c->eta,
                                workspace(c, bytes), bytes, NULL), "mvnmf_mkl_weights");
    }
    c->eta_set = 1;
}

/* The graph of a method from the labeled items of `labels`: none, the implicit
 * SGE, or a CSR neighbour graph under the fused kernel (its buffers in buf[]). */
static mvnmf_graph build_graph(ctx_t *c, const uint32_t *labels, const param_t *params, int kind,
                               void *buf[6])
{
    const dataset_t *d = c->data;
    size_t n = d->n, cap[2], nnz[2], bytes;
    mvnmf_graph g;
    memset(&g, 0, sizeof g);
    g.n = n;
    g.kind = kind == GRAPH_NONE ? MVNMF_GRAPH_NONE : MVNMF_GRAPH_SGE;
    if (kind == GRAPH_SGE) {
        g.labels = labels;
        g.n_classes = d->n_classes;
    }
    if (kind == GRAPH_NONE || kind == GRAPH_SGE)
        return g;
    mvnmf_graph_params gp = graph_params(c, labels, params, kind);
    fusion_weights(c, labels);
    int tge = kind == GRAPH_TGE;
    check((tge ? mvnmf_tge_capacity : mvnmf_ldge_capacity)(n, d->n_classes, &gp, &cap[0], &cap[1]),
          "mvnmf_ldge/tge_capacity");
    mvnmf_csr_buffers csr[2];
    for (int i = 0; i < 2; i++) {
        csr[i].row_ptr = buf[3 * i] = xcalloc(1, (n + 1) * sizeof(size_t));
        csr[i].col_idx = buf[3 * i + 1] = xcalloc(1, cap[i] * sizeof(size_t));
        csr[i].weights = buf[3 * i + 2] = xcalloc(1, cap[i] * sizeof(double));
        csr[i].capacity = cap[i];
    }
    check((tge ? mvnmf_tge_workspace : mvnmf_ldge_workspace)(c->views, d->n_views, c->kernels,
                                                             d->n_classes, &gp, &bytes), "graph workspace");
    check((tge ? mvnmf_tge : mvnmf_ldge)(c->views, d->n_views, c->kernels, c->eta, labels, d->n_classes,
                                         &gp, &csr[0], &csr[1], &nnz[0], &nnz[1], workspace(c, bytes), bytes),
          "mvnmf_ldge/tge");
    if (c->main_fit) {
        c->diag->graphs++;
        c->diag->affinity_nnz += (double)nnz[0];
        c->diag->penalty_nnz += (double)nnz[1];
    }
    g.kind = MVNMF_GRAPH_CSR;
    g.affinity_row_ptr = csr[0].row_ptr;
    g.affinity_col_idx = csr[0].col_idx;
    g.affinity_weights = csr[0].weights;
    if (gp.kp > 0) {
        g.penalty_row_ptr = csr[1].row_ptr;
        g.penalty_col_idx = csr[1].col_idx;
        g.penalty_weights = csr[1].weights;
    }
    return g;
}

/* The solver options of method m: its preset, the run's iterations and seed,
 * its weights (alpha, beta, gamma, vmax) from params[]. */
static void solver_params(const options_t *o, const method_t *m, const param_t *params, uint64_t seed,
                          mvnmf_nmf_params *np, mvnmf_mvsl_params *sp, mvnmf_deep_params *dp)
{
    mvnmf_mvsl_params *top = m->model == MODEL_DEEP ? &dp->top : sp;
    *np = mvnmf_nmf_params_default();
    memset(sp, 0, sizeof *sp);
    if (m->model == MODEL_DEEP)
        check(mvnmf_deep_params_preset(m->preset, dp), "mvnmf_deep_params_preset");
    if (m->model == MODEL_SHALLOW)
        check(mvnmf_mvsl_params_preset(m->preset, sp), "mvnmf_mvsl_params_preset");
    np->max_iter = top->max_iter = (unsigned)o->iters;
    np->tol = top->tol = o->tol;
    np->seed = top->seed = seed;
    top->init = MVNMF_INIT_RANDOM;
    top->alpha = pget(params, "alpha", top->alpha);
    top->beta = pget(params, "beta", top->beta);
    top->gamma = pget(params, "gamma", top->gamma);
    top->vmax = pget(params, "vmax", top->vmax);
}

/* The checks of a fit: objective never rising, finite values, dead views, and
 * the all-zero columns of the (top-layer) bases: U_M (p_{M-1} x K) closes a
 * deep factor buffer, hidden sizes clamped to the layer below. */
static void record_fit(ctx_t *c, const method_t *m, const watch_t *wt, const mvnmf_report *r, const double *v,
                       const mvnmf_view *views, size_t nv, double *const *us, const size_t *lens,
                       const size_t *layers, size_t nl)
{
    diag_t *dg = c->diag;
    size_t k = c->opt->k;
    int bad = wt->nonfinite || !isfinite(r->objective.total);
    for (size_t i = 0; i < k * c->data->n && !bad; i++)
        bad = !isfinite(v[i]);
    dg->fits++;
    dg->rising += wt->max_rise > RISE_TOL;
    dg->max_rise = wt->max_rise > dg->max_rise ? wt->max_rise : dg->max_rise;
    dg->nonfinite += bad;
    dg->dead += r->dead_views > 0;
    dg->unwatched += wt->calls != r->iterations + 1; /* the start and every iteration */
    for (size_t i = 0; i < nv && m->model >= MODEL_SHALLOW; i++) {
        size_t below = views[i].rows;
        for (size_t l = 0; l + 1 < nl; l++)
            below = layers[l] < below ? layers[l] : below;
        for (size_t j = 0; j < k; j++) {
            const double *u = us[i] + lens[i] - below * k + j * below;
            size_t z = 0;
            while (z < below && u[z] == 0)
                z++;
            dg->zero_cols += z == below;
        }
        dg->cols += (double)k;
    }
}

/* Fits method m (candidate `cand`: the view of ON_VIEW methods) with weights
 * params[] and writes the K x N encoding v. `labels` holds the class of each
 * labeled item, MVNMF_UNLABELED for the others (NULL for unsupervised methods). */
static void fit(ctx_t *c, const method_t *m, const uint32_t *labels, size_t cand, const param_t *params,
                uint64_t seed, double *v)
{
    const options_t *o = c->opt;
    const mvnmf_view *views = m->on == ON_ALL ? c->views : m->on == ON_VIEW ? &c->views[cand] : &c->concat;
    size_t nv = m->on == ON_ALL ? c->data->n_views : 1, layers[16], nl = 1, bytes, lens[64];
    void *buf[6] = { 0 };
    mvnmf_graph g = build_graph(c, labels, params, m->graph, buf);
    double **us = xcalloc(1, nv * sizeof(double *));
    if (m->model == MODEL_DEEP)
        nl = parse_layers(c->layers, o->k, layers);
    for (size_t i = 0; i < nv; i++) {
        lens[i] = views[i].rows * o->k;
        if (m->model == MODEL_DEEP)
            check(mvnmf_deep_factor_len(views[i].rows, layers, nl, &lens[i]), "mvnmf_deep_factor_len");
        us[i] = xcalloc(1, lens[i] * sizeof(double));
    }
    mvnmf_nmf_params np;
    mvnmf_mvsl_params sp;
    mvnmf_deep_params dp;
    solver_params(o, m, params, seed, &np, &sp, &dp);
    watch_t wt = { 0, 0, 0, 0, 0 };
    mvnmf_report r;
    if (m->model == MODEL_NMF) {
        check(mvnmf_nmf_fit_workspace(views, o->k, &np, &bytes), "mvnmf_nmf_fit_workspace");
        check(mvnmf_nmf_fit(views, o->k, &np, us[0], v, workspace(c, bytes), bytes, watch, &wt, &r), "mvnmf_nmf_fit");
    } else if (m->model == MODEL_JOINT) {
        check(mvnmf_joint_nmf_fit_workspace(views, nv, o->k, &np, &bytes), "mvnmf_joint_nmf_fit_workspace");
        check(mvnmf_joint_nmf_fit(views, nv, o->k, &np, us, v, workspace(c, bytes), bytes, watch, &wt, &r),
              "mvnmf_joint_nmf_fit");
    } else if (m->model == MODEL_SHALLOW) {
        check(mvnmf_mvsl_fit_workspace(views, nv, &g, o->k, &sp, &bytes), "mvnmf_mvsl_fit_workspace");
        check(mvnmf_mvsl_fit(views, nv, &g, o->k, &sp, us, v, workspace(c, bytes), bytes, watch, &wt, &r),
              "mvnmf_mvsl_fit");
    } else {
        check(mvnmf_deep_fit_workspace(views, nv, &g, layers, nl, &dp, &bytes), "mvnmf_deep_fit_workspace");
        check(mvnmf_deep_fit(views, nv, &g, layers, nl, &dp, us, v, workspace(c, bytes), bytes, watch, &wt, &r),
              "mvnmf_deep_fit");
    }
    record_fit(c, m, &wt, &r, v, views, nv, us, lens, layers, nl);
    for (size_t i = 0; i < nv; i++)
        free(us[i]);
    free(us);
    for (int i = 0; i < 6; i++)
        free(buf[i]);
}

/* ------------------------------------------------- the library's protocol */

/* --tune: the weights with a grid, chosen by mvnmf_cross_validate. */
typedef struct {
    ctx_t *c;
    const method_t *m;
    const param_t *base;
    size_t tuned[MAX_PARAMS], nt;
    uint64_t seed;
} tune_t;

/* Fits a grid point from the labels the cross-validation shows (a fold hidden). */
static int cv_fit(const mvnmf_cv_fit *f, double *v, void *user)
{
    tune_t *t = user;
    param_t trial[MAX_PARAMS];
    memcpy(trial, t->base, sizeof trial);
    for (size_t i = 0; i < t->nt; i++)
        trial[t->tuned[i]].value = f->params[i];
    fit(t->c, t->m, f->labels, 0, trial, t->seed, v);
    return 0;
}

/* Chooses params[] by cross-validation inside the labeled items of `labels`
 * over the product of the weights' grids (mvnmf_cross_validate: stratified
 * folds, kNN accuracy of the held-out fold, ties to the first grid point). */
static void tune(ctx_t *c, const method_t *m, const uint32_t *labels, uint64_t seed, param_t *params)
{
    const options_t *o = c->opt;
    tune_t t = { c, m, params, { 0 }, 0, seed };
    size_t points = 1, bytes, best;
    for (size_t p = 0; p < n_params(m); p++)
        if (params[p].grid) {
            t.tuned[t.nt++] = p;
            points *= 3;
        }
    if (t.nt == 0)
        return;
    double *grid = xcalloc(points * t.nt, sizeof(double)), *score = xcalloc(points, sizeof(double)), t0 = now();
    for (size_t pt = 0; pt < points; pt++)
        for (size_t i = 0, rest = pt; i < t.nt; i++, rest /= 3)
            grid[pt * t.nt + i] = params[t.tuned[i]].grid[rest % 3];
    mvnmf_cv_params cp = mvnmf_cv_params_default();
    cp.folds = o->folds;
    cp.seed = seed;
    cp.knn.k = o->knn_k;
    check(mvnmf_cross_validate_workspace(o->k, c->data->n, c->data->n_classes, points, &cp, &bytes),
          "mvnmf_cross_validate_workspace");
    check(mvnmf_cross_validate(labels, c->data->n, c->data->n_classes, o->k, grid, points, t.nt, &cp, score,
                               &best, grow(&c->cv_work, &c->cv_bytes, bytes), bytes, cv_fit, &t),
          "mvnmf_cross_validate");
    for (size_t pt = 0; pt < points; pt++) {
        fprintf(stderr, "  tune %s:", m->name);
        for (size_t i = 0; i < t.nt; i++)
            fprintf(stderr, " %s=%g", params[t.tuned[i]].name, grid[pt * t.nt + i]);
        fprintf(stderr, " -> CV kNN accuracy %.2f%%\n", 100 * score[pt]);
    }
    for (size_t i = 0; i < t.nt; i++)
        params[t.tuned[i]].value = grid[best * t.nt + i];
    fprintf(stderr, "%s tuned in %.2f s\n", m->name, now() - t0);
    free(grid);
    free(score);
}

/* One method (one candidate) through mvnmf_evaluate_protocol. */
typedef struct {
    ctx_t *c;
    const method_t *m;
    size_t cand;
    double *chosen;   /* --tune: weights chosen per fraction and split */
    double *etas;     /* fusion weights of the first graph per fraction and split */
    uint8_t *eta_ok;
} run_t;

/* The protocol's fit: the encoding of all items from the labeled items' classes. */
static int fit_cb(const mvnmf_protocol_fit *r, double *v, void *user)
{
    run_t *u = user;
    ctx_t *c = u->c;
    const method_t *m = u->m;
    size_t cell = r->fraction_index * c->opt->splits + r->split, h = c->data->n_views;
    param_t params[MAX_PARAMS];
    if (!m->uses_labels && r->fraction_index > 0)
        return 0; /* unsupervised: this split's encoding stands for every fraction */
    memcpy(params, m->params, sizeof params);
    if (m->uses_labels && c->opt->tune)
        tune(c, m, r->labels, r->seed, params);
    for (size_t p = 0; p < n_params(m) && u->chosen; p++)
        u->chosen[cell * MAX_PARAMS + p] = params[p].value;
    double t0 = now();
    c->main_fit = 1;
    c->eta_set = 0;
    fit(c, m, m->uses_labels ? r->labels : NULL, u->cand, params, r->seed, v);
    c->main_fit = 0;
    c->diag->fit_time += now() - t0;
    fprintf(stderr, "split %zu/%zu, %g%%: %s%s%s fitted in %.2f s\n", r->split + 1, c->opt->splits,
            100 * r->fraction, m->name, m->on == ON_VIEW ? " on " : "",
            m->on == ON_VIEW ? c->data->views[u->cand].name : "", now() - t0);
    if (c->eta_set && u->eta_ok && !u->eta_ok[cell]) {
        memcpy(u->etas + cell * h, c->eta, h * sizeof(double));
        u->eta_ok[cell] = 1;
    }
    return 0;
}

/* scores[f * splits + s] of method m's candidate `cand` (the view of "-b" methods). */
static void run(run_t *u, size_t cand, mvnmf_split_scores *scores)
{
    const options_t *o = u->c->opt;
    const dataset_t *d = u->c->data;
    mvnmf_protocol_params pp = mvnmf_protocol_params_default();
    size_t bytes;
    pp.splits = o->splits;
    pp.seed = o->seed;
    pp.eval.knn.k = o->knn_k;
    pp.eval.kmeans.restarts = (uint32_t)o->restarts;
    pp.eval.nmi = o->nmi;
    u->cand = cand;
    check(mvnmf_evaluate_protocol_workspace(o->k, d->n, d->n_classes, o->n_fractions, &pp, &bytes),
          "mvnmf_evaluate_protocol_workspace");
    void *w = xcalloc(1, bytes);
    check(mvnmf_evaluate_protocol(d->labels, d->n, d->n_classes, o->fractions, o->n_fractions, o->k, &pp,
                                  scores, w, bytes, fit_cb, u),
          "mvnmf_evaluate_protocol");
    free(w);
}

/* ------------------------------------------------------------------ print */

static const char *const TITLES[3] = { "kNN accuracy (%)", "k-means ACC (%)", "k-means NMI (%)" };

/* " mean ± std |" of metric t (0 kNN, 1 k-means ACC, 2 NMI), in %. */
static void print_cell(const mvnmf_score_summary *s, int t)
{
    printf(" %.2f ± %.2f |", 100 * (t == 0 ? s->knn_mean : t == 1 ? s->kmeans_accuracy_mean : s->kmeans_nmi_mean),
           100 * (t == 0 ? s->knn_std : t == 1 ? s->kmeans_accuracy_std : s->kmeans_nmi_std));
}

/* The dataset and its preprocessing. */
static void print_dataset(const ctx_t *c, const char *dir)
{
    const dataset_t *d = c->data;
    const options_t *o = c->opt;
    printf("# mvnmf reproduce: %s\n\nmvnmf %s. Dataset: %zu items, %zu classes (%s), %zu views:\n\n", dir,
           mvnmf_version(), d->n, d->present, o->labels, d->n_views);
    printf("| view | name | features | min | preprocessing |\n|---|---|---|---|---|\n");
    for (size_t i = 0; i < d->n_views; i++) {
        const view_t *v = &d->views[i];
        printf("| %s | %s | %zu | %.4g | ", v->file, v->name, v->rows, v->prep.min);
        if (v->prep.shifted)
            printf("shifted %zu features by their minimum (--shift); ", v->prep.shifted);
        if (o->normalize)
            printf("scaled by %.4g |\n", v->prep.scale);
        else
            printf("not scaled |\n");
    }
    printf("\nPreprocessing: per-view normalisation to ||X_v||_F^2 = N is %s.\n",
           o->normalize ? "ON (--no-normalize to disable)" : "OFF (--no-normalize)");
}

/* Every selected method with its weights; the graphs, the deep presets, --tune. */
static void print_methods(const ctx_t *c, const size_t *sel, size_t n_sel)
{
    const options_t *o = c->opt;
    int graphs = 0, deep = 0;
    for (size_t s = 0; s < n_sel; s++) {
        const method_t *m = &METHODS[sel[s]];
        char lt[256];
        printf("  %s: %s.", m->name, m->about);
        for (size_t p = 0; p < n_params(m); p++)
            printf(" %s = %g", m->params[p].name, m->params[p].value);
        if (m->layers) {
            layers_text(m->layers, o->k, SIZE_MAX, "-", lt, sizeof lt);
            printf(" layers = %s", o->depth ? "see the depth table" : lt);
        }
        printf("\n");
        graphs |= m->graph >= GRAPH_KNN;
        deep |= m->layers != NULL;
    }
    if (graphs)
        printf("Neighbour graphs: base kernel %s per view, normalised; fused with %s.\n",
               o->kernel == MVNMF_KERNEL_RBF ? "RBF (gamma = 1/median d^2 over the labeled pairs)"
                                             : "linear (cosine)",
               o->learn_eta ? "weights eta learned by kernel-target alignment on the labeled items"
                            : "uniform weights (--uniform-eta)");
    if (graphs && o->learn_eta)
        printf("  MKL ridge lambda = %g x mean(diag G). LDGE/TGE penalty: %s.\n", o->mkl_lambda,
               o->penalty == MVNMF_PENALTY_CLASS_PAIRS
                   ? "the kp nearest pairs between each class and the others (seed 003)"
                   : "each item's kp nearest other-class items (seed 000)");
    if (deep) {
        mvnmf_deep_params dp;
        check(mvnmf_deep_params_preset(MVNMF_DEEP_PRESET_DMCL, &dp), "mvnmf_deep_params_preset");
        printf("Deep methods: layer-wise pre-training (%u NMF iterations per layer), then the iterations above "
               "as fine-tuning; V starts %s; lower layers %s; hidden sizes are clamped per view to the layer "
               "below (a view of 6 features keeps 6).\n", dp.pretrain_iter,
               dp.v_init == MVNMF_DEEP_V_RANDOM ? "at random after pre-training (the paper's Algorithm 1)"
                                                : "from the pre-trained encodings",
               dp.box_lower ? "in the box [0, 1]" : "unconstrained");
    }
    int any = 0;
    for (size_t s = 0; s < n_sel; s++)
        any |= METHODS[sel[s]].params[0].grid != NULL || METHODS[sel[s]].params[1].grid != NULL;
    if (o->tune && !any)
        printf("--tune: none of the selected methods has weights; nothing to tune.\n");
    else if (o->tune)
        printf("--tune: per split and fraction, %zu-fold cross-validation within the labeled items over alpha "
               "in the papers' value x {1/100, 1/10, 1} and beta in {0.002, 0.02, 0.2} (kNN accuracy of the "
               "held-out labeled items; the test items' labels are never read).\n", o->folds);
    fflush(stdout);
}

/* Everything that determines the numbers. */
static void print_header(const ctx_t *c, const char *dir, const size_t *sel, size_t n_sel)
{
    const dataset_t *d = c->data;
    const options_t *o = c->opt;
    print_dataset(c, dir);
    printf("Models: K = %zu, %zu iterations (tol %g), init seed = split seed.\n", o->k, o->iters, o->tol);
    printf("Protocol: %zu splits (seeds %zu..%zu), per-class stratified labeled fractions", o->splits, o->seed,
           o->seed + o->splits - 1);
    for (size_t f = 0; f < o->n_fractions; f++)
        printf(" %g%%", 100 * o->fractions[f]);
    printf("; test items = the unlabeled items.\nEvaluation: kNN (k = %zu, Euclidean) from the labeled to the "
           "test items; k-means (k-means++, %zu restarts, k = %zu) on the test items' encodings, ACC under the "
           "best one-to-one map (Kuhn-Munkres), NMI = I(C;C') / %s.\nMethods:",
           o->knn_k, o->restarts, d->present, nmi_name(o->nmi));
    for (size_t s = 0; s < n_sel; s++)
        printf("%s %s", s ? "," : "", METHODS[sel[s]].name);
    printf(". Unsupervised methods are fitted once per split and evaluated at every fraction; "
           "semi-supervised ones once per split and fraction (their graph uses that split's labeled items).\n");
    print_methods(c, sel, n_sel);
}

static void print_checks(const size_t *sel, size_t n_sel, const diag_t *diags)
{
    printf("\nChecks on every fit (tuning fits included): the objective watched at every iteration (a rise is a "
           "relative increase > %g), encodings finite, views whose basis died (mvnmf_report.dead_views).\n\n"
           "| method | fits | objective rose | largest relative rise | non-finite | dead views | zero columns of U |\n"
           "|---|---|---|---|---|---|---|\n", RISE_TOL);
    for (size_t i = 0; i < n_sel; i++) {
        const diag_t *g = &diags[i];
        printf("| %s | %u | %u | %.3g | %u | %u |", METHODS[sel[i]].name, g->fits, g->rising, g->max_rise,
               g->nonfinite, g->dead);
        if (g->cols > 0)
            printf(" %.1f%% |\n", 100 * g->zero_cols / g->cols);
        else
            printf(" - |\n");
    }
    printf("\n(zero columns of U: all-zero columns of the views' bases, of the top layer for deep methods, over "
           "all fits: the group sparsity at work.)\n");
    for (size_t i = 0; i < n_sel; i++) {
        const diag_t *g = &diags[i];
        if (g->unwatched)
            printf("WARNING: %s: in %u fits the progress callback was not called once per iteration and for "
                   "the start: the objective checks above are incomplete.\n", METHODS[sel[i]].name, g->unwatched);
    }
    for (size_t i = 0; i < n_sel; i++) {
        const diag_t *g = &diags[i];
        if (!g->graphs)
            continue;
        printf("%s graph: %.0f affinity and %.0f penalty entries (CSR, both triangles) on average over %u graphs",
               METHODS[sel[i]].name, g->affinity_nnz / g->graphs, g->penalty_nnz / g->graphs, g->graphs);
        if (g->ka_min < g->ka_asked)
            printf("; ka reduced to %zu (from %zu) where a class had too few labeled items", g->ka_min, g->ka_asked);
        printf(".\n");
    }
}

/* What the runs of the selected methods gave. */
typedef struct {
    mvnmf_split_scores *res[N_METHODS]; /* [candidate][fraction][split] */
    double *chosen[N_METHODS];          /* --tune: [fraction][split][param] */
    size_t best[N_METHODS];             /* the candidate reported ("-b": the best view) */
    double *etas;                       /* [fraction][split][view] */
    uint8_t *eta_ok;                    /* [fraction][split] */
} results_t;

/* Runs method sel[i] (every candidate); for "-b" methods, picks and prints the
 * view with the best mean kNN accuracy over all fractions and splits. */
static void run_method(ctx_t *c, size_t i, const size_t *sel, diag_t *diags, results_t *r)
{
    const method_t *m = &METHODS[sel[i]];
    size_t cells = c->opt->n_fractions * c->opt->splits, nc = m->on == ON_VIEW ? c->data->n_views : 1;
    run_t u = { c, m, 0, NULL, r->etas, r->eta_ok };
    double top = -1;
    u.chosen = r->chosen[i] = xcalloc(cells * MAX_PARAMS, sizeof(double));
    r->res[i] = xcalloc(nc * cells, sizeof(mvnmf_split_scores));
    c->diag = &diags[i];
    c->layers = m->layers;
    for (size_t cand = 0; cand < nc; cand++)
        run(&u, cand, r->res[i] + cand * cells);
    if (nc == 1)
        return;
    printf("%s: mean kNN accuracy of each view over all fractions and splits:", m->name);
    for (size_t cand = 0; cand < nc; cand++) {
        double mean = 0;
        for (size_t t = 0; t < cells; t++)
            mean += r->res[i][cand * cells + t].knn_accuracy;
        mean /= (double)cells;
        printf(" %s %.2f%%%s", c->data->views[cand].name, 100 * mean, cand + 1 < nc ? "," : "");
        if (mean > top) {
            top = mean;
            r->best[i] = cand;
        }
    }
    printf(".\n  -> %s = %s on view %s (chosen by mean kNN accuracy on the test items, as the papers' "
           "best-single-view baseline; its k-means rows use the same view).\n",
           m->name, m->layers ? "DNMF" : "NMF", c->data->views[r->best[i]].name);
}

/* "| first | 10% | 20% |" and its rule, over the fractions. */
static void table_head(const options_t *o, const char *first)
{
    printf("\n| %s |", first);
    for (size_t f = 0; f < o->n_fractions; f++)
        printf(" %g%% |", 100 * o->fractions[f]);
    printf("\n|---|");
    for (size_t f = 0; f < o->n_fractions; f++)
        printf("---|");
    printf("\n");
}

/* The kNN, k-means ACC and NMI tables: mean ± std over the splits. */
static void print_tables(const ctx_t *c, const size_t *sel, size_t n_sel, const results_t *r)
{
    const options_t *o = c->opt;
    size_t nf = o->n_fractions, ns = o->splits, k_used = o->knn_k;
    mvnmf_score_summary *sum = xcalloc(nf, sizeof *sum);
    for (int t = 0; t < 3; t++) {
        printf("\n### %s, mean ± std over %zu splits%s%s\n", TITLES[t], ns, t == 2 ? ", NMI normalised by " : "",
               t == 2 ? nmi_name(o->nmi) : "");
        table_head(o, "method");
        for (size_t i = 0; i < n_sel; i++) {
            const method_t *m = &METHODS[sel[i]];
            for (size_t cand = 0; cand < (m->on == ON_VIEW ? c->data->n_views : 1); cand++) {
                if (cand != r->best[i] && !o->per_candidate)
                    continue;
                if (m->on == ON_VIEW)
                    printf("| %s (%s) |", cand == r->best[i] ? m->name : m->layers ? "DNMF" : "NMF",
                           c->data->views[cand].name);
                else
                    printf("| %s |", m->name);
                check(mvnmf_summarize_scores(r->res[i] + cand * nf * ns, nf, ns, sum), "mvnmf_summarize_scores");
                for (size_t f = 0; f < nf; f++) {
                    print_cell(&sum[f], t);
                    k_used = sum[f].knn_k_min < k_used ? sum[f].knn_k_min : k_used;
                }
                printf("\n");
            }
        }
    }
    if (k_used < o->knn_k)
        printf("\nNote: where fewer than %zu items were labeled, kNN used k = the smallest number of labeled "
               "items in a class (down to %zu).\n", o->knn_k, k_used);
    free(sum);
}

/* The fusion weights of the first neighbour graph of each split and fraction. */
static void print_eta(const ctx_t *c, const results_t *r)
{
    const options_t *o = c->opt;
    size_t ns = o->splits, h = c->data->n_views, any = 0;
    for (size_t t = 0; t < o->n_fractions * ns; t++)
        any |= r->eta_ok[t];
    if (!any)
        return;
    double *col = xcalloc(ns, sizeof(double));
    printf("\n### Fusion weights eta of the neighbour graphs (%s), mean ± std over the splits\n\n| labeled |",
           o->learn_eta ? "kernel-target alignment on each split's labeled items" : "uniform");
    for (size_t i = 0; i < h; i++)
        printf(" %s |", c->data->views[i].name);
    printf("\n|---|");
    for (size_t i = 0; i < h; i++)
        printf("---|");
    for (size_t f = 0; f < o->n_fractions; f++) {
        printf("\n| %g%% |", 100 * o->fractions[f]);
        for (size_t i = 0; i < h; i++) {
            size_t cnt = 0;
            double mean = NAN, std = NAN;
            for (size_t s = 0; s < ns; s++)
                if (r->eta_ok[f * ns + s])
                    col[cnt++] = r->etas[(f * ns + s) * h + i];
            if (cnt)
                check(mvnmf_mean_std(col, cnt, &mean, &std), "mvnmf_mean_std");
            printf(" %.3f ± %.3f |", mean, std);
        }
    }
    printf("\n");
    free(col);
}

/* The weights --tune chose, per fraction (splits separated by ';'). */
static void print_tuned(const ctx_t *c, const size_t *sel, size_t n_sel, const results_t *r)
{
    size_t ns = c->opt->splits;
    for (size_t i = 0; i < n_sel && c->opt->tune; i++) {
        const method_t *m = &METHODS[sel[i]];
        if (!m->uses_labels || !(m->params[0].grid || m->params[1].grid))
            continue;
        printf("\n%s, weights chosen by --tune (split 1..%zu):\n\n| labeled | chosen |\n|---|---|\n", m->name, ns);
        for (size_t f = 0; f < c->opt->n_fractions; f++) {
            printf("| %g%% |", 100 * c->opt->fractions[f]);
            for (size_t s = 0; s < ns; s++) {
                printf("%s", s ? ";" : "");
                for (size_t p = 0; p < n_params(m); p++)
                    if (m->params[p].grid)
                        printf(" %s=%g", m->params[p].name, r->chosen[i][(f * ns + s) * MAX_PARAMS + p]);
            }
            printf(" |\n");
        }
    }
}

/* The papers' tables: every selected method over the fractions and splits. */
static void run_tables(ctx_t *c, const size_t *sel, size_t n_sel, diag_t *diags)
{
    size_t cells = c->opt->n_fractions * c->opt->splits;
    results_t r;
    memset(&r, 0, sizeof r);
    r.etas = xcalloc(cells * c->data->n_views, sizeof(double));
    r.eta_ok = xcalloc(cells, 1);
    printf("\n");
    for (size_t i = 0; i < n_sel; i++)
        run_method(c, i, sel, diags, &r);
    print_tables(c, sel, n_sel, &r);
    print_eta(c, &r);
    print_tuned(c, sel, n_sel, &r);
    print_checks(sel, n_sel, diags);
    printf("\nFit time (all splits%s):", c->opt->tune ? ", tuning excluded" : "");
    for (size_t i = 0; i < n_sel; i++) {
        printf(" %s %.2f s%s", METHODS[sel[i]].name, diags[i].fit_time, i + 1 < n_sel ? "," : "");
        free(r.res[i]);
        free(r.chosen[i]);
    }
    free(r.etas);
    free(r.eta_ok);
}

/* --depth: the deep methods with 1, 2 and 3 layers (the first 0, 1, 2 hidden sizes, K on top). */
static void run_depth(ctx_t *c, const size_t *sel, size_t n_sel, diag_t *diags)
{
    const options_t *o = c->opt;
    size_t nf = o->n_fractions, ns = o->splits, cells = nf * ns;
    mvnmf_split_scores *res = xcalloc(1, n_sel * 3 * cells * sizeof *res);
    mvnmf_score_summary *sum = xcalloc(1, n_sel * 3 * nf * sizeof *sum);
    double times[3 * N_METHODS];
    char hidden[256], lt[256];
    for (size_t i = 0; i < n_sel; i++)
        for (size_t dd = 0; dd < 3; dd++) {
            run_t u = { c, &METHODS[sel[i]], 0, NULL, NULL, NULL };
            layers_text(METHODS[sel[i]].layers, 1, dd, ",", hidden, sizeof hidden);
            c->layers = hidden;
            c->diag = &diags[i];
            times[i * 3 + dd] = -diags[i].fit_time;
            run(&u, 0, res + (i * 3 + dd) * cells);
            times[i * 3 + dd] += diags[i].fit_time;
            check(mvnmf_summarize_scores(res + (i * 3 + dd) * cells, nf, ns, sum + (i * 3 + dd) * nf),
                  "mvnmf_summarize_scores");
        }
    for (size_t f = 0; f < nf; f++) {
        printf("\n### Accuracy against depth, %g%% labeled, mean ± std over %zu splits\n\n| method | depth | "
               "layers | %s | %s | %s | fit time |\n|---|---|---|---|---|---|---|\n",
               100 * o->fractions[f], ns, TITLES[0], TITLES[1], TITLES[2]);
        for (size_t i = 0; i < n_sel; i++)
            for (size_t dd = 0; dd < 3; dd++) {
                layers_text(METHODS[sel[i]].layers, 1, dd, ",", hidden, sizeof hidden);
                layers_text(hidden, o->k, SIZE_MAX, "-", lt, sizeof lt);
                printf("| %s | %zu | %s |", METHODS[sel[i]].name, dd + 1, lt);
                for (int t = 0; t < 3; t++)
                    print_cell(&sum[(i * 3 + dd) * nf + f], t);
                printf(" %.1f s |\n", times[i * 3 + dd]);
            }
    }
    print_checks(sel, n_sel, diags);
    free(res);
    free(sum);
}

/* ------------------------------------------------------------ parse, main */

enum { T_SIZE, T_DOUBLE, T_STR, T_ON, T_OFF, T_ENUM, T_FRACTIONS, T_PARAM };
typedef struct {
    const char *flag, *help;
    int type;
    size_t field;           /* AT(...) */
    const char *names;      /* T_ENUM: "name name ..." ... */
    const uint32_t *values; /* ... and their values */
} opt_t;

static const uint32_t KERNELS[] = { MVNMF_KERNEL_RBF, MVNMF_KERNEL_LINEAR },
                  PENALTIES[] = { MVNMF_PENALTY_CLASS_PAIRS, MVNMF_PENALTY_ITEM_NEIGHBORS },
                  NMIS[] = { MVNMF_NMI_MAX, MVNMF_NMI_ARITHMETIC, MVNMF_NMI_GEOMETRIC, MVNMF_NMI_GEOMETRIC,
                             MVNMF_NMI_MIN };
#define AT(field) offsetof(options_t, field)
static const opt_t OPTS[] = {
    { "--k", "rank of the encodings (default 20)", T_SIZE, AT(k), 0, 0 },
    { "--iters", "solver iterations (default 200)", T_SIZE, AT(iters), 0, 0 },
    { "--tol", "solver relative tolerance, 0 = run all iterations (default 0)", T_DOUBLE, AT(tol), 0, 0 },
    { "--splits", "random splits per fraction (default 5)", T_SIZE, AT(splits), 0, 0 },
    { "--fractions", "labeled fractions in %, e.g. 10,20,30,40,50 (the default)", T_FRACTIONS, 0, 0, 0 },
    { "--seed", "base seed: split s uses seed+s (default 0)", T_SIZE, AT(seed), 0, 0 },
    { "--methods", "comma-separated method keys (default: all; --list-methods)", T_STR, AT(methods), 0, 0 },
    { "--param", "weight NAME of method M (alpha, beta, gamma, vmax, ka, kp, sigma; "
      "layers=100,50 for the deep methods)", T_PARAM, 0, 0, 0 },
    { "--layers", "hidden layer sizes of every deep method (default " DEFAULT_LAYERS "; K on top)", T_STR,
      AT(layers), 0, 0 },
    { "--tune", "choose the weights by cross-validation within the labeled items", T_ON, AT(tune), 0, 0 },
    { "--folds", "folds of --tune (default 3)", T_SIZE, AT(folds), 0, 0 },
    { "--depth", "DMCL accuracy against depth 1, 2, 3 (at 50% labeled unless --fractions)", T_ON, AT(depth), 0, 0 },
    { "--kernel", "base kernel of the views for MKL and the neighbour graphs: rbf (default) or linear",
      T_ENUM, AT(kernel), "rbf linear", KERNELS },
    { "--mkl-lambda", "MKL ridge relative to mean(diag G) (default 0.1)", T_DOUBLE, AT(mkl_lambda), 0, 0 },
    { "--uniform-eta", "uniform fusion weights instead of kernel-target alignment", T_OFF, AT(learn_eta), 0, 0 },
    { "--penalty", "LDGE/TGE penalty: class-pairs (seed 003, default) or item-neighbors", T_ENUM, AT(penalty),
      "class-pairs item-neighbors", PENALTIES },
    { "--shift", "shift features with negative values by their minimum", T_ON, AT(shift), 0, 0 },
    { "--no-normalize", "keep the views' scales (default: ||X_v||_F^2 = N per view)", T_OFF, AT(normalize), 0, 0 },
    { "--nmi", "max (default, the papers'), arithmetic, geometric or min", T_ENUM, AT(nmi),
      "max arithmetic geometric sqrt min", NMIS },
    { "--knn-k", "neighbours of the kNN classifier (default 9)", T_SIZE, AT(knn_k), 0, 0 },
    { "--kmeans-restarts", "k-means restarts (default 10)", T_SIZE, AT(restarts), 0, 0 },
    { "--labels", "class file in DATASET_DIR (default labels.txt)", T_STR, AT(labels), 0, 0 },
    { "--views", "use only these views (names or 1-based positions in meta.txt)", T_STR, AT(views), 0, 0 },
    { "--per-view", "also print a row per candidate of \"-b\" methods", T_ON, AT(per_candidate), 0, 0 },
};
#undef AT
#define N_OPTS (sizeof OPTS / sizeof OPTS[0])

static void parse_fractions(options_t *o, const char *s)
{
    char tok[64];
    for (o->n_fractions = 0; next_token(&s, tok, sizeof tok); o->n_fractions++) {
        double p = parse_double(tok, "--fractions");
        if (o->n_fractions == MAX_FRACTIONS || !(p > 0 && p < 100))
            die("--fractions: at most %d percentages in (0, 100), not %s", MAX_FRACTIONS, tok);
        o->fractions[o->n_fractions] = p / 100.0;
    }
    if (o->n_fractions == 0)
        die("--fractions: empty list");
}

/* --param METHOD.NAME=VALUE (layers=100,50 for a deep method). */
static void set_param(const char *spec)
{
    const char *dot = strchr(spec, '.'), *eq = strchr(spec, '=');
    if (!dot || !eq || eq < dot)
        die("--param: expected METHOD.NAME=VALUE, got '%s'", spec);
    int kl = (int)(dot - spec), nl = (int)(eq - dot - 1);
    for (size_t i = 0; i < N_METHODS; i++) {
        method_t *m = &METHODS[i];
        if ((int)strlen(m->key) != kl || strncmp(m->key, spec, (size_t)kl))
            continue;
        if (nl == 6 && !strncmp(dot + 1, "layers", 6) && m->layers) {
            size_t tmp[16];
            parse_layers(m->layers = eq + 1, 1, tmp); /* validates */
            return;
        }
        for (size_t p = 0; p < n_params(m); p++)
            if ((int)strlen(m->params[p].name) == nl && !strncmp(m->params[p].name, dot + 1, (size_t)nl)) {
                if ((m->params[p].value = parse_double(eq + 1, spec)) < 0)
                    die("--param %s: weights are nonnegative", spec);
                return;
            }
        die("--param: method %s has no weight '%.*s' (it has %zu%s)", m->key, nl, dot + 1, n_params(m),
            m->layers ? " and layers" : "");
    }
    die("--param: no method '%.*s' (--list-methods)", kl, spec);
}

/* Sets option p (its value v; NULL for a flag) in *o. */
static void set_option(options_t *o, const opt_t *p, const char *v)
{
    void *field = (char *)o + p->field;
    const char *a = p->flag;
    if (p->type == T_ON || p->type == T_OFF)
        *(int *)field = p->type == T_ON;
    else if (p->type == T_SIZE)
        *(size_t *)field = parse_size(v, a);
    else if (p->type == T_DOUBLE && (*(double *)field = parse_double(v, a)) < 0)
        die("%s must be >= 0", a);
    else if (p->type == T_STR)
        *(const char **)field = v;
    else if (p->type == T_FRACTIONS)
        parse_fractions(o, v), o->fractions_given = 1;
    else if (p->type == T_PARAM)
        set_param(v);
    else if (p->type == T_ENUM) {
        const char *names = p->names;
        size_t len = strlen(v), k = 0;
        while (*names && !(strncmp(names, v, len) == 0 && (names[len] == ' ' || !names[len])))
            names += strcspn(names, " ") + (names[strcspn(names, " ")] == ' '), k++;
        if (!*names)
            die("%s: one of %s, not '%s'", a, p->names, v);
        *(uint32_t *)field = p->values[k];
    }
}

/* --help (the options) or --list-methods. */
static void usage(int methods)
{
    static const char *const ARG[] = { "N", "X", "VALUE", "", "", "KIND", "LIST", "M.NAME=V" };
    char flag[64];
    for (size_t m = 0; m < N_METHODS && methods; m++)
        printf("%-12s %-11s %s%s\n", METHODS[m].key, METHODS[m].name, METHODS[m].about,
               METHODS[m].uses_labels ? " [semi-supervised]" : " [unsupervised]");
    if (methods)
        return;
    printf("usage: reproduce [options] DATASET_DIR\n");
    for (size_t j = 0; j < N_OPTS; j++) {
        snprintf(flag, sizeof flag, "%s %s", OPTS[j].flag, ARG[OPTS[j].type]);
        printf("  %-20s %s\n", flag, OPTS[j].help);
    }
    printf("  %-20s list the available methods\n", "--list-methods");
}

/* Checks the options against each other; --layers, --depth's defaults. */
static void check_options(options_t *o)
{
    if (o->k == 0 || o->splits == 0 || o->knn_k == 0 || o->restarts == 0)
        die("--k, --splits, --knn-k and --kmeans-restarts must be at least 1");
    if (o->folds < 2)
        die("--folds must be at least 2");
    for (size_t m = 0; m < N_METHODS && o->layers; m++) {
        size_t tmp[16];
        parse_layers(o->layers, 1, tmp); /* validates */
        METHODS[m].layers = METHODS[m].layers ? o->layers : NULL;
    }
    if (o->depth && !o->methods)
        o->methods = "dmcl";
    if (o->depth && !o->fractions_given)
        parse_fractions(o, "50");
    char tok[64];
    for (const char *p = o->methods; p && next_token(&p, tok, sizeof tok);) {
        size_t m = 0;
        while (m < N_METHODS && strcmp(METHODS[m].key, tok))
            m++;
        if (m == N_METHODS)
            die("--methods: no method '%s' (--list-methods)", tok);
        if (o->depth && (!METHODS[m].layers || METHODS[m].on == ON_VIEW))
            die("--depth: %s is not a multi-view deep method (dmcl, concat-dnmf)", tok);
    }
}

/* Parses the command line into *o; returns the dataset directory. */
static const char *parse(int argc, char **argv, options_t *o)
{
    const char *dir = NULL;
    memset(o, 0, sizeof *o);
    o->k = 20, o->iters = 200, o->splits = 5, o->knn_k = 9, o->restarts = 10, o->folds = 3;
    o->normalize = o->learn_eta = 1, o->nmi = MVNMF_NMI_MAX, o->kernel = MVNMF_KERNEL_RBF;
    o->penalty = MVNMF_PENALTY_CLASS_PAIRS, o->mkl_lambda = mvnmf_mkl_params_default().lambda;
    o->labels = "labels.txt";
    parse_fractions(o, "10,20,30,40,50");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        size_t j = 0;
        while (j < N_OPTS && strcmp(a, OPTS[j].flag))
            j++;
        if (!strcmp(a, "--list-methods") || !strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(!strcmp(a, "--list-methods"));
            exit(0);
        } else if (j == N_OPTS) {
            if (a[0] == '-')
                die("unknown option %s (--help)", a);
            if (dir)
                die("one dataset directory, not '%s' and '%s'", dir, a);
            dir = a;
            continue;
        }
        if (OPTS[j].type != T_ON && OPTS[j].type != T_OFF && i + 1 >= argc)
            die("%s needs a value", a);
        set_option(o, &OPTS[j], OPTS[j].type == T_ON || OPTS[j].type == T_OFF ? NULL : argv[++i]);
    }
    if (!dir) {
        fprintf(stderr, "usage: reproduce [options] DATASET_DIR (--help)\n");
        exit(2);
    }
    check_options(o);
    return dir;
}

/* The selected methods, in METHODS[] order; returns their number. */
static size_t select_methods(const options_t *o, size_t *sel)
{
    size_t n_sel = 0;
    char tok[64];
    for (size_t m = 0; m < N_METHODS; m++) {
        int keep = !o->methods;
        for (const char *p = o->methods; p && next_token(&p, tok, sizeof tok);)
            keep |= !strcmp(tok, METHODS[m].key);
        if (keep)
            sel[n_sel++] = m;
    }
    return n_sel;
}

/* The C views over the dataset, their kernels, and the stacked features of
 * ConcatDNMF (when `stacked`). */
static void setup(ctx_t *c, const dataset_t *d, const options_t *o, int stacked)
{
    size_t rows = 0;
    memset(c, 0, sizeof *c);
    c->data = d;
    c->opt = o;
    c->views = xcalloc(d->n_views, sizeof(mvnmf_view));
    c->kernels = xcalloc(d->n_views, sizeof(mvnmf_kernel));
    c->eta = xcalloc(d->n_views, sizeof(double));
    for (size_t i = 0; i < d->n_views; i++) {
        c->views[i].kind = MVNMF_VIEW_DENSE;
        c->views[i].rows = c->views[i].col_stride = d->views[i].rows;
        c->views[i].cols = d->n;
        c->views[i].values = d->views[i].x;
        c->kernels[i].kind = o->kernel;
        rows += d->views[i].rows;
    }
    if (!stacked)
        return;
    double *x = xcalloc(rows * d->n, sizeof(double));
    for (size_t j = 0; j < d->n; j++)
        for (size_t i = 0, r0 = 0; i < d->n_views; r0 += d->views[i].rows, i++)
            memcpy(x + j * rows + r0, d->views[i].x + j * d->views[i].rows, d->views[i].rows * sizeof(double));
    c->concat = c->views[0];
    c->concat.rows = c->concat.col_stride = rows;
    c->concat.values = c->concat_x = x;
}

int main(int argc, char **argv)
{
    options_t o;
    dataset_t d;
    ctx_t c;
    size_t sel[N_METHODS], n_sel;
    int stacked = 0;
    const char *dir = parse(argc, argv, &o);
    double t_start = now();
    load(&d, dir, o.labels, o.views);
    preprocess(&d, o.shift, o.normalize);
    n_sel = select_methods(&o, sel);
    for (size_t i = 0; i < n_sel; i++)
        stacked |= METHODS[sel[i]].on == ON_CONCAT;
    setup(&c, &d, &o, stacked);
    diag_t *diags = xcalloc(n_sel, sizeof(diag_t));
    for (size_t i = 0; i < n_sel; i++)
        diags[i].ka_min = SIZE_MAX;

    print_header(&c, dir, sel, n_sel);
    if (o.depth)
        run_depth(&c, sel, n_sel, diags);
    else
        run_tables(&c, sel, n_sel, diags);
    printf("%sWall time %.2f s.\n", o.depth ? "\n" : ". ", now() - t_start);

    for (size_t i = 0; i < d.n_views; i++)
        free(d.views[i].x);
    free(d.views), free(d.labels), free(diags), free(c.concat_x);
    free(c.work), free(c.cv_work), free(c.views), free(c.kernels), free(c.eta);
    return 0;
}
