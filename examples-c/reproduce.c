/* reproduce: the papers' evaluation tables, on any dataset directory, through
 * mvnmf's C ABI.
 *
 *   reproduce [options] DATASET_DIR
 *
 * DATASET_DIR holds (the format of ../shared/data/<name>/):
 *   meta.txt    one line per view: "viewK.f64 name=NAME rows=R cols=N ..."
 *               (other lines are ignored);
 *   viewK.f64   R x N little-endian doubles, column-major (items are columns);
 *               "viewK.f64.gz" is read through `gzip -dc` (or decompress it
 *               once with `gunzip -k DATASET_DIR/viewK.f64.gz`);
 *   labels.txt  one class id (0, 1, ...) per line, N lines (--labels FILE to
 *               use another file of the directory).
 *
 * Protocol (DESIGN.md §9, the papers'): for each split s = 0..S-1 and each
 * labeled fraction f, a per-class stratified random subset of f of the items is
 * labeled (seed + s); every method turns the views (and, for semi-supervised
 * methods, the labels of the labeled items) into a K x N encoding V; then
 *   - kNN (k = 9) from the labeled items' encodings classifies the unlabeled
 *     (test) items: accuracy;
 *   - k-means (k-means++, 10 restarts, k = number of classes) clusters the test
 *     items' encodings: accuracy under the best one-to-one cluster/class map
 *     (Kuhn-Munkres) and NMI (normalised by max(H(C), H(C')) as seed 003
 *     eq. 43 unless --nmi says otherwise).
 * Tables print mean ± std over the splits (std: population, numpy's np.std).
 *
 * Unsupervised methods (those that never see labels: NMF-b, ConcatNMF, DNMF-b,
 * ConcatDNMF) are fitted once per split (seed + s) and their encoding is
 * evaluated at every fraction: it does not depend on the fraction. The
 * semi-supervised ones (GNMF, MvSL-S/L/T, MCL, DMCL) are fitted per split and
 * per fraction: their graph is built from that split's labeled items.
 *
 * Graphs: SGE is implicit (MVNMF_GRAPH_SGE); GNMF's within-class kNN graph
 * (mvnmf_ldge with kp = 0), LDGE and TGE are built under the fused kernel
 * sum_v eta_v K_v (RBF per view, median bandwidth over the labeled pairs;
 * eta learned by kernel-target alignment on the labeled items, mvnmf_mkl_weights)
 * and passed as CSR graphs.
 *
 * Adding a method: write a fit function with the signature of `fit_fn` and add
 * a line to METHODS[] below. Methods with weights (alpha, beta, ...) list them
 * in their `params` table; the weights are set with --param METHOD.NAME=VALUE,
 * and --tune chooses those with a grid by cross-validation inside the labeled
 * items (tune_weights()). --depth prints DMCL's accuracy against the number of
 * layers (seed 001, Fig. 4).
 *
 * Every fit is watched through the progress callback: the output ends with a
 * table of checks (objective never rising, finite encodings, dead views, the
 * share of all-zero columns in the bases).
 *
 * Build:  cargo build --release -p mvnmf-capi && make -C examples-c reproduce
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mvnmf.h"

#define MAX_FRACTIONS 32
#define MAX_PARAMS 8

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

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        die("out of memory (%zu bytes)", bytes);
    return p;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        die("out of memory (%zu x %zu bytes)", n, size);
    return p;
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

/* ---------------------------------------------------------------- dataset */

typedef struct {
    char file[256];  /* as named in meta.txt, e.g. "view1.f64" */
    char name[64];   /* name=... or the file name */
    size_t rows;     /* features */
    double *x;       /* rows x n, column-major */
    double min;      /* smallest value before preprocessing */
    size_t shifted;  /* features shifted by their minimum (--shift) */
    double scale;    /* normalisation factor applied (1 when off) */
} view_t;

typedef struct {
    const char *dir;
    size_t n;          /* items */
    size_t n_views;
    view_t *views;
    uint32_t *labels;  /* n class ids */
    size_t n_classes;  /* max id + 1 */
    size_t present;    /* classes with at least one item */
} dataset_t;

static char *path_join(const char *dir, const char *file)
{
    size_t len = strlen(dir) + strlen(file) + 2;
    char *p = xmalloc(len);
    snprintf(p, len, "%s/%s", dir, file);
    return p;
}

static int file_exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f)
        fclose(f);
    return f != NULL;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Reads rows*cols little-endian doubles from `path` (or `path`.gz through
 * gzip -dc). */
static double *read_f64(const char *dir, const char *file, size_t rows, size_t cols)
{
    char *path = path_join(dir, file);
    int gz = ends_with(file, ".gz");
    if (!gz && !file_exists(path)) {
        char *alt = xmalloc(strlen(path) + 4);
        sprintf(alt, "%s.gz", path);
        if (file_exists(alt)) {
            free(path);
            path = alt;
            gz = 1;
        } else {
            free(alt);
        }
    }
    FILE *f;
    if (gz) {
        /* Quote the path for the shell; refuse a quote inside it. */
        if (strchr(path, '\''))
            die("%s: a quote in the path; decompress it first with gunzip -k", path);
        char *cmd = xmalloc(strlen(path) + 32);
        sprintf(cmd, "gzip -dc '%s'", path);
        f = popen(cmd, "r");
        free(cmd);
    } else {
        f = fopen(path, "rb");
    }
    if (!f)
        die("cannot open %s: %s", path, strerror(errno));
    if (rows != 0 && cols > SIZE_MAX / rows / sizeof(double))
        die("%s: %zu x %zu doubles do not fit in memory", path, rows, cols);
    size_t count = rows * cols;
    double *x = xmalloc(count * sizeof(double));
    unsigned char buf[8];
    for (size_t i = 0; i < count; i++) {
        if (fread(buf, 1, 8, f) != 8)
            die("%s: expected %zu doubles (%zu x %zu), the file is shorter", path, count, rows, cols);
        uint64_t u = 0;
        for (int b = 7; b >= 0; b--)
            u = (u << 8) | buf[b]; /* little-endian on any host */
        memcpy(&x[i], &u, 8);
    }
    if (fread(buf, 1, 1, f) == 1)
        die("%s: longer than %zu x %zu doubles: is rows/cols in meta.txt right?", path, rows, cols);
    if (gz) {
        if (pclose(f) != 0)
            die("%s: gzip -dc failed (is gzip installed? or run gunzip -k on it)", path);
    } else {
        fclose(f);
    }
    free(path);
    return x;
}

/* The value of "key=" in a meta.txt line, copied into out (or 0). */
static int meta_field(const char *line, const char *key, char *out, size_t cap)
{
    size_t klen = strlen(key);
    const char *p = line;
    while ((p = strstr(p, key)) != NULL) {
        if ((p == line || p[-1] == ' ' || p[-1] == '\t') && p[klen] == '=') {
            p += klen + 1;
            size_t i = 0;
            while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r' && i + 1 < cap)
                out[i++] = *p++;
            out[i] = 0;
            return 1;
        }
        p += klen;
    }
    return 0;
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

/* Keeps the views named in `spec` (comma-separated names or 1-based
 * positions in meta.txt), in meta.txt order. */
static void select_views(dataset_t *d, const char *spec)
{
    size_t kept = 0;
    for (size_t i = 0; i < d->n_views; i++) {
        int keep = 0;
        for (const char *p = spec; *p && !keep;) {
            const char *e = strchr(p, ',');
            size_t l = e ? (size_t)(e - p) : strlen(p);
            char tok[64];
            snprintf(tok, sizeof tok, "%.*s", (int)(l < 63 ? l : 63), p);
            char *end;
            unsigned long pos = strtoul(tok, &end, 10);
            keep = !strcmp(tok, d->views[i].name) || !strcmp(tok, d->views[i].file) ||
                   (end != tok && *end == 0 && pos == i + 1);
            p += l + (e != NULL);
        }
        if (keep)
            d->views[kept++] = d->views[i];
    }
    if (kept == 0)
        die("--views %s: no such view (names or positions from meta.txt)", spec);
    d->n_views = kept;
}

static void load(dataset_t *d, const char *dir, const char *labels_file, const char *views)
{
    memset(d, 0, sizeof *d);
    d->dir = dir;
    char *meta = path_join(dir, "meta.txt");
    FILE *f = fopen(meta, "r");
    if (!f)
        die("cannot open %s: %s", meta, strerror(errno));
    char line[4096];
    size_t cap = 0;
    while (fgets(line, sizeof line, f)) {
        char file[256], rows[64], cols[64];
        if (sscanf(line, "%255s", file) != 1 || strncmp(file, "view", 4) != 0 ||
            !(ends_with(file, ".f64") || ends_with(file, ".f64.gz")))
            continue;
        if (!meta_field(line, "rows", rows, sizeof rows) || !meta_field(line, "cols", cols, sizeof cols))
            die("%s: view line without rows= and cols=: %s", meta, line);
        if (d->n_views == cap) {
            cap = cap ? 2 * cap : 8;
            d->views = realloc(d->views, cap * sizeof(view_t));
            if (!d->views)
                die("out of memory");
        }
        view_t *v = &d->views[d->n_views++];
        memset(v, 0, sizeof *v);
        snprintf(v->file, sizeof v->file, "%s", file);
        if (!meta_field(line, "name", v->name, sizeof v->name))
            snprintf(v->name, sizeof v->name, "%.63s", file);
        v->rows = parse_size(rows, "rows");
        size_t n = parse_size(cols, "cols");
        if (v->rows == 0 || n == 0)
            die("%s: view %s is empty (%zu x %zu)", meta, file, v->rows, n);
        if (d->n_views == 1)
            d->n = n;
        else if (n != d->n)
            die("%s: view %s has %zu items, the first view %zu: views must describe the same items",
                meta, file, n, d->n);
    }
    fclose(f);
    if (d->n_views == 0)
        die("%s: no view lines (\"viewK.f64 name=... rows=R cols=N\")", meta);
    free(meta);
    if (views)
        select_views(d, views);
    for (size_t i = 0; i < d->n_views; i++)
        d->views[i].x = read_f64(dir, d->views[i].file, d->views[i].rows, d->n);

    char *lp = path_join(dir, labels_file);
    f = fopen(lp, "r");
    if (!f)
        die("cannot open %s: %s (reproduce needs one class id per item; --labels FILE)", lp,
            strerror(errno));
    d->labels = xmalloc(d->n * sizeof(uint32_t));
    size_t count = 0;
    while (fgets(line, sizeof line, f)) {
        char tok[64];
        if (sscanf(line, "%63s", tok) != 1)
            continue; /* blank line */
        if (count == d->n)
            die("%s: more than %zu labels", lp, d->n);
        size_t c = parse_size(tok, lp);
        if (c >= MVNMF_UNLABELED)
            die("%s: label %zu out of range", lp, c);
        d->labels[count++] = (uint32_t)c;
    }
    fclose(f);
    if (count != d->n)
        die("%s: %zu labels for %zu items", lp, count, d->n);
    free(lp);
    for (size_t j = 0; j < d->n; j++)
        if (d->labels[j] + 1 > d->n_classes)
            d->n_classes = d->labels[j] + 1;
    size_t *cnt = xcalloc(d->n_classes, sizeof(size_t));
    for (size_t j = 0; j < d->n; j++)
        cnt[d->labels[j]]++;
    for (size_t c = 0; c < d->n_classes; c++)
        d->present += cnt[c] > 0;
    free(cnt);
    if (d->present < 2)
        die("%s: the labels have a single class", labels_file);
}

/* Checks values, shifts (if asked) and normalises every view. */
static void preprocess(dataset_t *d, int shift, int normalize)
{
    for (size_t i = 0; i < d->n_views; i++) {
        view_t *v = &d->views[i];
        size_t m = v->rows, n = d->n;
        v->min = INFINITY;
        for (size_t t = 0; t < m * n; t++) {
            if (!isfinite(v->x[t]))
                die("view %s (%s): value %zu is not finite", v->name, v->file, t);
            if (v->x[t] < v->min)
                v->min = v->x[t];
        }
        if (v->min < 0) {
            if (!shift)
                die("view %s (%s) has negative values (minimum %g); NMF-based methods need "
                    "nonnegative data. Rerun with --shift to shift every feature of such a view "
                    "by its minimum over the items (x_ij - min_j x_ij), or leave the view out with --views.",
                    v->name, v->file, v->min);
            for (size_t r = 0; r < m; r++) {
                double mn = INFINITY;
                for (size_t j = 0; j < n; j++)
                    mn = v->x[r + j * m] < mn ? v->x[r + j * m] : mn;
                if (mn < 0) {
                    for (size_t j = 0; j < n; j++)
                        v->x[r + j * m] -= mn;
                    v->shifted++;
                }
            }
        }
        v->scale = 1.0;
        if (normalize) {
            double ss = 0;
            for (size_t t = 0; t < m * n; t++)
                ss += v->x[t] * v->x[t];
            if (ss == 0)
                die("view %s (%s) is all zeros: it cannot be normalised", v->name, v->file);
            v->scale = sqrt((double)n / ss);
            for (size_t t = 0; t < m * n; t++)
                v->x[t] *= v->scale;
        }
    }
}

static mvnmf_view dense_view(const dataset_t *d, size_t i)
{
    mvnmf_view v;
    memset(&v, 0, sizeof v);
    v.kind = MVNMF_VIEW_DENSE;
    v.rows = d->views[i].rows;
    v.cols = d->n;
    v.values = d->views[i].x;
    v.col_stride = d->views[i].rows;
    return v;
}

/* ---------------------------------------------------------------- options */

typedef struct {
    size_t k;               /* rank K */
    unsigned iters;         /* solver iterations */
    double tol;             /* solver relative tolerance (0: run all iterations) */
    unsigned splits;
    double fractions[MAX_FRACTIONS]; /* in (0, 1] */
    size_t n_fractions;
    uint64_t seed;
    int shift, normalize, tune, per_candidate, depth;
    uint32_t nmi;           /* MVNMF_NMI_* */
    size_t knn_k;
    unsigned kmeans_restarts;
    const char *methods;    /* comma-separated keys, NULL = all */
    const char *labels;
    const char *views;      /* comma-separated names or positions, NULL = all */
    uint32_t kernel;        /* MVNMF_KERNEL_* of every view (neighbour graphs, MKL) */
    double mkl_lambda;      /* MKL ridge relative to mean(diag G) */
    int learn_eta;          /* 0: uniform fusion weights */
    uint32_t penalty;       /* MVNMF_PENALTY_* of LDGE/TGE */
    size_t folds;           /* --tune: cross-validation folds */
} options_t;

static const char *nmi_name(uint32_t n)
{
    switch (n) {
    case MVNMF_NMI_MAX: return "max(H(C), H(C'))  [seed 003 eq. 43]";
    case MVNMF_NMI_ARITHMETIC: return "(H(C) + H(C'))/2  [scikit-learn's default]";
    case MVNMF_NMI_GEOMETRIC: return "sqrt(H(C) H(C'))";
    default: return "min(H(C), H(C'))";
    }
}

/* ---------------------------------------------------------------- methods */

/* What the fits of one method showed (checked on every fit, tuning included):
 * the objective is watched at every iteration through the progress callback. */
typedef struct {
    unsigned fits;
    unsigned rising;        /* fits whose objective rose (relative > RISE_TOL) at some iteration */
    double max_rise;        /* largest relative rise of the objective over all fits */
    unsigned nonfinite;     /* fits with a non-finite objective or encoding */
    unsigned dead;          /* fits that reported a view whose basis died */
    double zero_cols, cols; /* all-zero columns of the (top-layer) bases, and all columns */
    unsigned unwatched;     /* fits whose callback calls != iterations + 1 */
    unsigned graphs;        /* neighbour graphs built (main fits only) */
    double affinity_nnz, penalty_nnz; /* their summed CSR entry counts */
    size_t ka_min;          /* smallest ka used (reduced for small classes) */
    size_t ka_asked;
} diag_t;

#define RISE_TOL 1e-10

/* Shared state of a run: the data, the options and one growable workspace. */
typedef struct {
    const dataset_t *data;
    const options_t *opt;
    void *work;
    size_t work_bytes;
    mvnmf_view *views;      /* the dataset's views, dense */
    mvnmf_view concat;      /* all views stacked into one (ConcatDNMF) */
    double *concat_x;
    mvnmf_kernel *kernels;  /* one per view */
    const char *layers;     /* hidden layer sizes of the deep method being fitted */
    diag_t *diag;           /* of the method being fitted */
    int main_fit;           /* 1: a fit whose encoding is evaluated (not a tuning fit) */
    double *eta;            /* fusion weights of the last neighbour graph built */
    int eta_set;
} ctx_t;

static void *workspace(ctx_t *c, size_t bytes)
{
    if (bytes > c->work_bytes) {
        free(c->work);
        c->work = xmalloc(bytes);
        c->work_bytes = bytes;
    }
    return c->work;
}

/* A method's weight (alpha, beta, gamma, ...), settable by --param. */
typedef struct {
    const char *name;
    double value;           /* default, overwritten by --param */
    const double *grid;     /* candidate values for --tune (NULL: not tuned) */
    size_t grid_len;
} param_t;

/* The value of weight `name` in params[] (or `dflt` if the method has none). */
static double pget(const param_t *p, const char *name, double dflt)
{
    for (size_t i = 0; i < MAX_PARAMS && p[i].name; i++)
        if (!strcmp(p[i].name, name))
            return p[i].value;
    return dflt;
}

/* A count-valued weight (ka, kp). */
static size_t pget_count(const param_t *p, const char *name, size_t dflt)
{
    double x = pget(p, name, (double)dflt);
    if (!(x >= 0 && x == floor(x) && x < 1e9))
        die("%s must be a nonnegative integer, not %g", name, x);
    return (size_t)x;
}

/* Fits a method: writes the K x N encoding `v` of all items. `labels` holds the
 * class of each labeled item and MVNMF_UNLABELED for the others (only methods
 * with uses_labels = 1 may read it). `candidate` selects one of the method's
 * variants (NMF-b, DNMF: the view). Returns 0, or nonzero after printing why. */
typedef int (*fit_fn)(ctx_t *c, const uint32_t *labels, size_t candidate, const param_t *params,
                      uint64_t seed, double *v);

typedef struct {
    const char *key;        /* for --methods */
    const char *name;       /* in the tables */
    const char *about;      /* one line for --list-methods and the output */
    int uses_labels;        /* 0: unsupervised (fitted once per split) */
    int per_view;           /* 1: one candidate per view, the best is reported ("-b") */
    fit_fn fit;
    param_t params[MAX_PARAMS];
    size_t n_params;
    const char *layers;     /* deep methods: hidden layer sizes, K is appended (NULL: shallow) */
} method_t;

static mvnmf_nmf_params nmf_params(const options_t *o, uint64_t seed)
{
    mvnmf_nmf_params p = mvnmf_nmf_params_default();
    p.max_iter = o->iters;
    p.tol = o->tol;
    p.seed = seed;
    return p;
}

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
    if (!isfinite(t)) {
        w->nonfinite = 1;
        return 0;
    }
    if (w->started) {
        double rise = (t - w->last) / (fabs(w->last) > 1e-300 ? fabs(w->last) : 1e-300);
        if (rise > w->max_rise)
            w->max_rise = rise;
    }
    w->last = t;
    w->started = 1;
    return 0;
}

/* Records what a fit showed in the method's diagnostics. */
static void record_fit(ctx_t *c, const watch_t *w, const mvnmf_report *r, const double *v, size_t len)
{
    diag_t *g = c->diag;
    if (!g)
        return;
    int bad = w->nonfinite || !isfinite(r->objective.total);
    for (size_t i = 0; i < len && !bad; i++)
        bad = !isfinite(v[i]);
    g->fits++;
    g->rising += w->max_rise > RISE_TOL;
    if (w->max_rise > g->max_rise)
        g->max_rise = w->max_rise;
    g->nonfinite += bad;
    g->dead += r->dead_views > 0;
    /* The callback sees the start and every iteration (deep: of fine-tuning). */
    g->unwatched += w->calls != r->iterations + 1;
}

/* Counts the all-zero columns of a rows x k basis (group sparsity at work). */
static void count_zero_cols(ctx_t *c, const double *u, size_t rows, size_t k)
{
    if (!c->diag)
        return;
    for (size_t j = 0; j < k; j++) {
        size_t i = 0;
        while (i < rows && u[i + j * rows] == 0)
            i++;
        c->diag->zero_cols += i == rows;
    }
    c->diag->cols += (double)k;
}

/* NMF (Lee-Seung, guarded multiplicative updates) of one view. */
static int fit_nmf_view(ctx_t *c, const uint32_t *labels, size_t candidate, const param_t *params,
                        uint64_t seed, double *v)
{
    (void)labels;
    (void)params;
    const dataset_t *d = c->data;
    mvnmf_view x = dense_view(d, candidate);
    mvnmf_nmf_params p = nmf_params(c->opt, seed);
    size_t bytes;
    check(mvnmf_nmf_fit_workspace(&x, c->opt->k, &p, &bytes), "mvnmf_nmf_fit_workspace");
    double *u = xmalloc(d->views[candidate].rows * c->opt->k * sizeof(double));
    void *w = workspace(c, bytes);
    watch_t wt = { 0, 0, 0, 0, 0 };
    mvnmf_report r;
    check(mvnmf_nmf_fit(&x, c->opt->k, &p, u, v, w, bytes, watch, &wt, &r), "mvnmf_nmf_fit");
    record_fit(c, &wt, &r, v, c->opt->k * d->n);
    free(u);
    return 0;
}

/* ConcatNMF: joint multi-view NMF, one shared encoding for all views. */
static int fit_concat(ctx_t *c, const uint32_t *labels, size_t candidate, const param_t *params,
                      uint64_t seed, double *v)
{
    (void)labels;
    (void)candidate;
    (void)params;
    const dataset_t *d = c->data;
    double **us = xmalloc(d->n_views * sizeof(double *));
    for (size_t i = 0; i < d->n_views; i++)
        us[i] = xmalloc(d->views[i].rows * c->opt->k * sizeof(double));
    mvnmf_nmf_params p = nmf_params(c->opt, seed);
    size_t bytes;
    check(mvnmf_joint_nmf_fit_workspace(c->views, d->n_views, c->opt->k, &p, &bytes),
          "mvnmf_joint_nmf_fit_workspace");
    void *w = workspace(c, bytes);
    watch_t wt = { 0, 0, 0, 0, 0 };
    mvnmf_report r;
    check(mvnmf_joint_nmf_fit(c->views, d->n_views, c->opt->k, &p, us, v, w, bytes, watch, &wt, &r),
          "mvnmf_joint_nmf_fit");
    record_fit(c, &wt, &r, v, c->opt->k * d->n);
    for (size_t i = 0; i < d->n_views; i++)
        free(us[i]);
    free(us);
    return 0;
}

/* ------------------------------------------------ graphs of the semi-supervised methods */

enum { GRAPH_NONE, GRAPH_SGE, GRAPH_WITHIN_CLASS_KNN, GRAPH_LDGE, GRAPH_TGE };

/* An explicit graph (CSR buffers owned here) or the implicit SGE. */
typedef struct {
    mvnmf_graph g;
    size_t *rp[2], *ci[2];
    double *w[2];
} graph_t;

static void graph_free(graph_t *g)
{
    for (int i = 0; i < 2; i++) {
        free(g->rp[i]);
        free(g->ci[i]);
        free(g->w[i]);
    }
}

/* Fusion weights of the views' kernels by kernel-target alignment on the
 * labeled items (or uniform with --uniform-eta), into c->eta. */
static void fusion_weights(ctx_t *c, const uint32_t *labels)
{
    const dataset_t *d = c->data;
    const options_t *o = c->opt;
    if (!o->learn_eta) {
        for (size_t i = 0; i < d->n_views; i++)
            c->eta[i] = 1.0 / (double)d->n_views;
    } else {
        mvnmf_mkl_params mp = mvnmf_mkl_params_default();
        mp.lambda = o->mkl_lambda;
        size_t bytes;
        check(mvnmf_mkl_weights_workspace(c->views, d->n_views, c->kernels, d->n_classes, &mp, &bytes),
              "mvnmf_mkl_weights_workspace");
        check(mvnmf_mkl_weights(c->views, d->n_views, c->kernels, labels, d->n_classes, &mp, c->eta,
                                workspace(c, bytes), bytes, NULL),
              "mvnmf_mkl_weights");
    }
    c->eta_set = 1;
}

/* Builds the graph `kind` from the labeled items of `labels`. Neighbour graphs
 * (within-class kNN, LDGE, TGE) are found under the fused kernel
 * sum_v eta_v K_v with eta learned on the labeled items. ka is reduced to
 * (smallest labeled class) - 1 where a class has too few labeled items. */
static void build_graph(ctx_t *c, const uint32_t *labels, const param_t *params, int kind, graph_t *out)
{
    const dataset_t *d = c->data;
    size_t n = d->n;
    memset(out, 0, sizeof *out);
    out->g.n = n;
    if (kind == GRAPH_NONE) {
        out->g.kind = MVNMF_GRAPH_NONE;
        return;
    }
    if (kind == GRAPH_SGE) {
        out->g.kind = MVNMF_GRAPH_SGE;
        out->g.labels = labels;
        out->g.n_classes = d->n_classes;
        return;
    }
    mvnmf_graph_params gp = mvnmf_graph_params_default();
    gp.ka = pget_count(params, "ka", gp.ka);
    gp.kp = kind == GRAPH_WITHIN_CLASS_KNN ? 0 : pget_count(params, "kp", gp.kp);
    gp.sigma = pget(params, "sigma", gp.sigma);
    gp.penalty = c->opt->penalty;
    /* The smallest labeled class bounds the within-class neighbours. */
    size_t *cnt = xcalloc(d->n_classes, sizeof(size_t));
    for (size_t j = 0; j < n; j++)
        if (labels[j] != MVNMF_UNLABELED)
            cnt[labels[j]]++;
    size_t minc = SIZE_MAX;
    for (size_t cl = 0; cl < d->n_classes; cl++)
        if (cnt[cl] > 0 && cnt[cl] < minc)
            minc = cnt[cl];
    free(cnt);
    if (minc < 2)
        die("a class has a single labeled item: no within-class neighbour graph (use a larger "
            "fraction)");
    if (c->diag && c->main_fit) {
        c->diag->ka_asked = gp.ka;
        if (gp.ka > minc - 1)
            gp.ka = minc - 1;
        if (gp.ka < c->diag->ka_min)
            c->diag->ka_min = gp.ka;
    } else if (gp.ka > minc - 1) {
        gp.ka = minc - 1;
    }
    fusion_weights(c, labels);

    int tge = kind == GRAPH_TGE;
    size_t cap[2], bytes;
    check((tge ? mvnmf_tge_capacity : mvnmf_ldge_capacity)(n, d->n_classes, &gp, &cap[0], &cap[1]),
          "mvnmf_ldge/tge_capacity");
    mvnmf_csr_buffers buf[2];
    for (int i = 0; i < 2; i++) {
        out->rp[i] = xmalloc((n + 1) * sizeof(size_t));
        out->ci[i] = xmalloc(cap[i] * sizeof(size_t));
        out->w[i] = xmalloc(cap[i] * sizeof(double));
        buf[i].row_ptr = out->rp[i];
        buf[i].col_idx = out->ci[i];
        buf[i].weights = out->w[i];
        buf[i].capacity = cap[i];
    }
    size_t nnz[2];
    if (tge) {
        check(mvnmf_tge_workspace(c->views, d->n_views, c->kernels, d->n_classes, &gp, &bytes),
              "mvnmf_tge_workspace");
        check(mvnmf_tge(c->views, d->n_views, c->kernels, c->eta, labels, d->n_classes, &gp, &buf[0],
                        &buf[1], &nnz[0], &nnz[1], workspace(c, bytes), bytes),
              "mvnmf_tge");
    } else {
        check(mvnmf_ldge_workspace(c->views, d->n_views, c->kernels, d->n_classes, &gp, &bytes),
              "mvnmf_ldge_workspace");
        check(mvnmf_ldge(c->views, d->n_views, c->kernels, c->eta, labels, d->n_classes, &gp, &buf[0],
                         &buf[1], &nnz[0], &nnz[1], workspace(c, bytes), bytes),
              "mvnmf_ldge");
    }
    if (c->diag && c->main_fit) {
        c->diag->graphs++;
        c->diag->affinity_nnz += (double)nnz[0];
        c->diag->penalty_nnz += (double)nnz[1];
    }
    out->g.kind = MVNMF_GRAPH_CSR;
    out->g.affinity_row_ptr = out->rp[0];
    out->g.affinity_col_idx = out->ci[0];
    out->g.affinity_weights = out->w[0];
    if (gp.kp > 0) {
        out->g.penalty_row_ptr = out->rp[1];
        out->g.penalty_col_idx = out->ci[1];
        out->g.penalty_weights = out->w[1];
    }
}

/* ------------------------------------------------------- shallow and deep fits */

/* The shallow solver (mvnmf_mvsl_fit) with a preset, its weights from
 * params[] and a graph from the labeled items. */
static int fit_shallow(ctx_t *c, const uint32_t *labels, const param_t *params, uint64_t seed,
                       double *v, uint32_t preset, int graph_kind)
{
    const dataset_t *d = c->data;
    const options_t *o = c->opt;
    mvnmf_mvsl_params sp;
    check(mvnmf_mvsl_params_preset(preset, &sp), "mvnmf_mvsl_params_preset");
    sp.max_iter = o->iters;
    sp.tol = o->tol;
    sp.seed = seed;
    sp.init = MVNMF_INIT_RANDOM;
    sp.alpha = pget(params, "alpha", sp.alpha);
    sp.beta = pget(params, "beta", sp.beta);
    sp.gamma = pget(params, "gamma", sp.gamma);
    sp.vmax = pget(params, "vmax", sp.vmax);
    graph_t g;
    build_graph(c, labels, params, graph_kind, &g);
    double **us = xmalloc(d->n_views * sizeof(double *));
    for (size_t i = 0; i < d->n_views; i++)
        us[i] = xmalloc(d->views[i].rows * o->k * sizeof(double));
    size_t bytes;
    check(mvnmf_mvsl_fit_workspace(c->views, d->n_views, &g.g, o->k, &sp, &bytes),
          "mvnmf_mvsl_fit_workspace");
    watch_t wt = { 0, 0, 0, 0, 0 };
    mvnmf_report r;
    check(mvnmf_mvsl_fit(c->views, d->n_views, &g.g, o->k, &sp, us, v, workspace(c, bytes), bytes,
                            watch, &wt, &r),
          "mvnmf_mvsl_fit");
    record_fit(c, &wt, &r, v, o->k * d->n);
    for (size_t i = 0; i < d->n_views; i++) {
        count_zero_cols(c, us[i], d->views[i].rows, o->k);
        free(us[i]);
    }
    free(us);
    graph_free(&g);
    return 0;
}

/* Parses a hidden-layer list ("100,50"; "" or "-" for none) and appends K.
 * Returns the number of layers M (at most 16). */
static size_t parse_layers(const char *spec, size_t k, size_t *layers)
{
    size_t m = 0;
    if (spec && *spec && strcmp(spec, "-") != 0 && strcmp(spec, "0") != 0) {
        for (const char *p = spec; *p;) {
            const char *e = strchr(p, ',');
            size_t l = e ? (size_t)(e - p) : strlen(p);
            char tok[32];
            snprintf(tok, sizeof tok, "%.*s", (int)(l < 31 ? l : 31), p);
            if (m == 15)
                die("layers '%s': at most 15 hidden layers", spec);
            layers[m] = parse_size(tok, "layers");
            if (layers[m] == 0)
                die("layers '%s': sizes must be at least 1", spec);
            m++;
            p += l + (e != NULL);
        }
    }
    layers[m++] = k;
    return m;
}

/* The deep solver (mvnmf_deep_fit) on `nv` views with layers c->layers + K. */
static int fit_deep(ctx_t *c, const uint32_t *labels, const param_t *params, uint64_t seed,
                    double *v, uint32_t preset, int graph_kind, const mvnmf_view *views, size_t nv)
{
    const options_t *o = c->opt;
    size_t layers[16];
    size_t m = parse_layers(c->layers, o->k, layers);
    mvnmf_deep_params dp;
    check(mvnmf_deep_params_preset(preset, &dp), "mvnmf_deep_params_preset");
    dp.top.max_iter = o->iters;
    dp.top.tol = o->tol;
    dp.top.seed = seed;
    dp.top.init = MVNMF_INIT_RANDOM;
    dp.top.alpha = pget(params, "alpha", dp.top.alpha);
    dp.top.beta = pget(params, "beta", dp.top.beta);
    dp.top.gamma = pget(params, "gamma", dp.top.gamma);
    dp.top.vmax = pget(params, "vmax", dp.top.vmax);
    graph_t g;
    build_graph(c, labels, params, graph_kind, &g);
    double **us = xmalloc(nv * sizeof(double *));
    size_t *lens = xmalloc(nv * sizeof(size_t));
    for (size_t i = 0; i < nv; i++) {
        check(mvnmf_deep_factor_len(views[i].rows, layers, m, &lens[i]), "mvnmf_deep_factor_len");
        us[i] = xmalloc(lens[i] * sizeof(double));
    }
    size_t bytes;
    check(mvnmf_deep_fit_workspace(views, nv, &g.g, layers, m, &dp, &bytes), "mvnmf_deep_fit_workspace");
    watch_t wt = { 0, 0, 0, 0, 0 };
    mvnmf_report r;
    check(mvnmf_deep_fit(views, nv, &g.g, layers, m, &dp, us, v, workspace(c, bytes), bytes, watch,
                         &wt, &r),
          "mvnmf_deep_fit");
    record_fit(c, &wt, &r, v, o->k * c->data->n);
    for (size_t i = 0; i < nv; i++) {
        /* The top layer U_M (p_{M-1} x K) closes the buffer; hidden sizes are
         * clamped to the layer below (mvnmf_deep_factor_len). */
        size_t below = views[i].rows;
        for (size_t l = 0; l + 1 < m; l++)
            below = layers[l] < below ? layers[l] : below;
        count_zero_cols(c, us[i] + lens[i] - below * o->k, below, o->k);
        free(us[i]);
    }
    free(us);
    free(lens);
    graph_free(&g);
    return 0;
}

#define SHALLOW(fn, preset, graph)                                                             \
    static int fn(ctx_t *c, const uint32_t *labels, size_t candidate, const param_t *params,   \
                  uint64_t seed, double *v)                                                    \
    {                                                                                          \
        (void)candidate;                                                                       \
        return fit_shallow(c, labels, params, seed, v, preset, graph);                         \
    }
SHALLOW(fit_gnmf, MVNMF_MVSL_PRESET_GNMF, GRAPH_WITHIN_CLASS_KNN)
SHALLOW(fit_mvsl_s, MVNMF_MVSL_PRESET_MVSL, GRAPH_SGE)
SHALLOW(fit_mvsl_l, MVNMF_MVSL_PRESET_MVSL, GRAPH_LDGE)
SHALLOW(fit_mvsl_t, MVNMF_MVSL_PRESET_MVSL, GRAPH_TGE)
SHALLOW(fit_mcl, MVNMF_MVSL_PRESET_MCL, GRAPH_SGE)

/* DNMF on one view (the candidate). */
static int fit_dnmf_view(ctx_t *c, const uint32_t *labels, size_t candidate, const param_t *params,
                         uint64_t seed, double *v)
{
    (void)labels;
    return fit_deep(c, NULL, params, seed, v, MVNMF_DEEP_PRESET_DNMF, GRAPH_NONE, &c->views[candidate], 1);
}

/* ConcatDNMF: DNMF of the views' features stacked into one view. */
static int fit_concat_dnmf(ctx_t *c, const uint32_t *labels, size_t candidate, const param_t *params,
                           uint64_t seed, double *v)
{
    (void)labels;
    (void)candidate;
    return fit_deep(c, NULL, params, seed, v, MVNMF_DEEP_PRESET_DNMF, GRAPH_NONE, &c->concat, 1);
}

/* DMCL: deep multi-view, L1,inf on the top layers, SGE on V. */
static int fit_dmcl(ctx_t *c, const uint32_t *labels, size_t candidate, const param_t *params,
                    uint64_t seed, double *v)
{
    (void)candidate;
    return fit_deep(c, labels, params, seed, v, MVNMF_DEEP_PRESET_DMCL, GRAPH_SGE, c->views,
                    c->data->n_views);
}

/* --tune grids: the papers' alpha x {1/100, 1/10, 1}, beta in {0.002, 0.02, 0.2}. */
static const double BETA_GRID[] = { 0.002, 0.02, 0.2 };
static const double ALPHA_MVSL_GRID[] = { 0.15, 1.5, 15 };   /* seed 003: alpha = 15 */
static const double ALPHA_MCL_GRID[] = { 1, 10, 100 };       /* seed 001: alpha = 100 */

/* The default hidden layers of the deep methods (K is appended as the top):
 * the paper's [300 200 125] is for views of thousands of features; mfeat's
 * views have 6-240. */
#define DEFAULT_LAYERS "100,50"

/* The method table. Defaults: the papers' alpha / 10 (DESIGN §9: the papers'
 * values zero most columns of U on these normalised views), the papers' beta
 * and gamma, vmax = 1 (a penalty graph needs a finite vmax). */
static method_t METHODS[] = {
    { "nmf-b", "NMF-b",
      "NMF on each single view; the tables report the view with the best mean kNN accuracy "
      "over all fractions and splits",
      0, 1, fit_nmf_view, { { NULL, 0, NULL, 0 } }, 0, NULL },
    { "concat", "ConcatNMF", "joint multi-view NMF on all views (mvnmf_joint_nmf_fit)", 0, 0,
      fit_concat, { { NULL, 0, NULL, 0 } }, 0, NULL },
    { "dnmf", "DNMF-b",
      "deep NMF (DNMF preset, layer-wise pre-training + fine-tuning) on each single view; the "
      "best view is reported as for NMF-b",
      0, 1, fit_dnmf_view, { { NULL, 0, NULL, 0 } }, 0, DEFAULT_LAYERS },
    { "concat-dnmf", "ConcatDNMF", "deep NMF (DNMF preset) of all views' features stacked", 0, 0,
      fit_concat_dnmf, { { NULL, 0, NULL, 0 } }, 0, DEFAULT_LAYERS },
    { "gnmf", "GNMF",
      "GNMF preset (no sparsity), affinity-only graph: within-class kNN among the labeled items "
      "under the MKL-fused kernel (mvnmf_ldge, kp = 0)",
      1, 0, fit_gnmf,
      { { "beta", 0.02, BETA_GRID, 3 }, { "vmax", 1, NULL, 0 }, { "ka", 5, NULL, 0 } }, 3, NULL },
    { "mvsl-s", "MvSL-S", "MVSL preset (L1,2), simple graph embedding (MVNMF_GRAPH_SGE)", 1, 0,
      fit_mvsl_s,
      { { "alpha", 1.5, ALPHA_MVSL_GRID, 3 }, { "beta", 0.02, BETA_GRID, 3 }, { "gamma", 0, NULL, 0 },
        { "vmax", 1, NULL, 0 } },
      4, NULL },
    { "mvsl-l", "MvSL-L",
      "MVSL preset (L1,2), LDGE graph (seed-003 class-pair penalty) under the MKL-fused kernel", 1, 0,
      fit_mvsl_l,
      { { "alpha", 1.5, ALPHA_MVSL_GRID, 3 }, { "beta", 0.02, BETA_GRID, 3 }, { "gamma", 0, NULL, 0 },
        { "vmax", 1, NULL, 0 }, { "ka", 5, NULL, 0 }, { "kp", 3, NULL, 0 } },
      6, NULL },
    { "mvsl-t", "MvSL-T", "MVSL preset (L1,2), TGE graph (all items) under the MKL-fused kernel", 1, 0,
      fit_mvsl_t,
      { { "alpha", 1.5, ALPHA_MVSL_GRID, 3 }, { "beta", 0.02, BETA_GRID, 3 }, { "gamma", 0, NULL, 0 },
        { "vmax", 1, NULL, 0 }, { "ka", 5, NULL, 0 }, { "kp", 3, NULL, 0 }, { "sigma", 2, NULL, 0 } },
      7, NULL },
    { "mcl", "MCL", "MCL preset (L1,inf, gamma on V), SGE graph", 1, 0, fit_mcl,
      { { "alpha", 10, ALPHA_MCL_GRID, 3 }, { "beta", 0.015, BETA_GRID, 3 }, { "gamma", 0.005, NULL, 0 },
        { "vmax", 1, NULL, 0 } },
      4, NULL },
    { "dmcl", "DMCL", "DMCL preset (deep, L1,inf on the top layers, box on lower layers), SGE graph", 1,
      0, fit_dmcl,
      { { "alpha", 10, ALPHA_MCL_GRID, 3 }, { "beta", 0.015, BETA_GRID, 3 }, { "gamma", 0.005, NULL, 0 },
        { "vmax", 1, NULL, 0 } },
      4, DEFAULT_LAYERS },
};
#define N_METHODS (sizeof METHODS / sizeof METHODS[0])

/* ------------------------------------------------------------- evaluation */

typedef struct {
    double knn, acc, nmi;
} scores_t;

typedef struct {
    size_t knn_k_used; /* smallest kNN k used (reduced when few items are labeled) */
} notes_t;

/* The kNN k for a reference set: o->knn_k, or the smallest labeled class size
 * when fewer than k items are labeled (k-NN over all of them would be a
 * majority vote). */
static size_t knn_k_for(ctx_t *c, const uint32_t *ref_labels)
{
    const dataset_t *d = c->data;
    size_t nl = 0, k = c->opt->knn_k;
    for (size_t j = 0; j < d->n; j++)
        nl += ref_labels[j] != MVNMF_UNLABELED;
    if (nl >= k)
        return k;
    size_t *cnt = xcalloc(d->n_classes, sizeof(size_t));
    for (size_t j = 0; j < d->n; j++)
        if (ref_labels[j] != MVNMF_UNLABELED)
            cnt[ref_labels[j]]++;
    k = nl;
    for (size_t cl = 0; cl < d->n_classes; cl++)
        if (cnt[cl] > 0 && cnt[cl] < k)
            k = cnt[cl];
    free(cnt);
    return k;
}

/* kNN accuracy on the test items, k-means ACC and NMI on the test items. */
static scores_t evaluate(ctx_t *c, const double *v, const uint32_t *masked, const uint8_t *labeled,
                         uint64_t seed, notes_t *notes)
{
    const dataset_t *d = c->data;
    const options_t *o = c->opt;
    size_t k = o->k, n = d->n, nt = 0, nl = 0;
    for (size_t j = 0; j < n; j++)
        nl += labeled[j];
    nt = n - nl;
    double *test = xmalloc(k * nt * sizeof(double));
    uint32_t *truth = xmalloc(nt * sizeof(uint32_t));
    uint32_t *pred = xmalloc(nt * sizeof(uint32_t));
    for (size_t j = 0, t = 0; j < n; j++)
        if (!labeled[j]) {
            memcpy(test + t * k, v + j * k, k * sizeof(double));
            truth[t++] = d->labels[j];
        }
    scores_t s;
    size_t bytes;

    mvnmf_knn_params kp = mvnmf_knn_params_default();
    kp.k = knn_k_for(c, masked);
    if (kp.k < notes->knn_k_used)
        notes->knn_k_used = kp.k;
    check(mvnmf_knn_predict_workspace(d->n_classes, &kp, &bytes), "mvnmf_knn_predict_workspace");
    check(mvnmf_knn_predict(v, k, n, masked, test, nt, d->n_classes, &kp, pred,
                            workspace(c, bytes), bytes),
          "mvnmf_knn_predict");
    check(mvnmf_accuracy(pred, truth, nt, NULL, &s.knn), "mvnmf_accuracy");

    mvnmf_kmeans_params mp = mvnmf_kmeans_params_default();
    mp.restarts = o->kmeans_restarts;
    mp.seed = seed;
    size_t kc = d->present < nt ? d->present : nt;
    check(mvnmf_kmeans_workspace(k, nt, kc, &mp, &bytes), "mvnmf_kmeans_workspace");
    check(mvnmf_kmeans(test, k, nt, kc, &mp, pred, NULL, workspace(c, bytes), bytes, NULL),
          "mvnmf_kmeans");
    check(mvnmf_clustering_accuracy_workspace(d->n_classes, kc, &bytes),
          "mvnmf_clustering_accuracy_workspace");
    check(mvnmf_clustering_accuracy(truth, pred, nt, d->n_classes, kc, &s.acc, workspace(c, bytes),
                                    bytes),
          "mvnmf_clustering_accuracy");
    check(mvnmf_nmi_workspace(d->n_classes, kc, &bytes), "mvnmf_nmi_workspace");
    check(mvnmf_nmi(truth, pred, nt, d->n_classes, kc, o->nmi, &s.nmi, workspace(c, bytes), bytes),
          "mvnmf_nmi");
    free(test);
    free(truth);
    free(pred);
    return s;
}

/* kNN accuracy of the items with query[j] = 1 (their classes from `truth`),
 * classified from the items labeled in `ref_labels`. */
static double knn_accuracy_on(ctx_t *c, const double *v, const uint32_t *ref_labels,
                              const uint8_t *query, const uint32_t *truth)
{
    const dataset_t *d = c->data;
    size_t k = c->opt->k, n = d->n, nq = 0;
    for (size_t j = 0; j < n; j++)
        nq += query[j];
    double *q = xmalloc(k * nq * sizeof(double));
    uint32_t *qt = xmalloc(nq * sizeof(uint32_t));
    uint32_t *pred = xmalloc(nq * sizeof(uint32_t));
    for (size_t j = 0, t = 0; j < n; j++)
        if (query[j]) {
            memcpy(q + t * k, v + j * k, k * sizeof(double));
            qt[t++] = truth[j];
        }
    mvnmf_knn_params kp = mvnmf_knn_params_default();
    kp.k = knn_k_for(c, ref_labels);
    size_t bytes;
    double acc;
    check(mvnmf_knn_predict_workspace(d->n_classes, &kp, &bytes), "mvnmf_knn_predict_workspace");
    check(mvnmf_knn_predict(v, k, n, ref_labels, q, nq, d->n_classes, &kp, pred, workspace(c, bytes),
                            bytes),
          "mvnmf_knn_predict");
    check(mvnmf_accuracy(pred, qt, nq, NULL, &acc), "mvnmf_accuracy");
    free(q);
    free(qt);
    free(pred);
    return acc;
}

/* ------------------------------------------------------------------ tuning */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* --tune: chooses a weighted method's params[] by cross-validation inside the
 * labeled items of one split and fraction, as the papers did. The labeled
 * items (labels[j] != MVNMF_UNLABELED) are split into o->folds folds,
 * stratified by class (each class's labeled items shuffled from `seed`, dealt
 * round-robin). For every point of the grid (the product of the tuned params'
 * grids) and every fold, that fold's labels are hidden, the method is fitted
 * (its graph built from the remaining labeled items only) and the fold's items
 * are classified by kNN from the remaining labeled items; the point with the
 * best mean accuracy (ties: the first) is written to params[].value. The test
 * items' labels are never read: `labels` already hides them. */
static int tune_weights(ctx_t *c, const method_t *m, const uint32_t *labels, param_t *params,
                        uint64_t seed)
{
    const dataset_t *d = c->data;
    size_t n = d->n, nf = c->opt->folds;
    size_t tuned[MAX_PARAMS], nt = 0, points = 1;
    for (size_t p = 0; p < MAX_PARAMS && params[p].name; p++)
        if (params[p].grid && params[p].grid_len > 0) {
            tuned[nt++] = p;
            points *= params[p].grid_len;
        }
    if (nt == 0)
        return 0;
    /* Stratified folds of the labeled items. */
    uint8_t *fold = xmalloc(n);
    size_t *members = xmalloc(n * sizeof(size_t));
    uint64_t rng = seed ^ 0x5EED7E57ULL;
    for (size_t cl = 0; cl < d->n_classes; cl++) {
        size_t cnt = 0;
        for (size_t j = 0; j < n; j++)
            if (labels[j] == cl)
                members[cnt++] = j;
        for (size_t i = cnt; i > 1; i--) {
            size_t r = (size_t)(splitmix(&rng) % i);
            size_t t = members[i - 1];
            members[i - 1] = members[r];
            members[r] = t;
        }
        for (size_t i = 0; i < cnt; i++)
            fold[members[i]] = (uint8_t)(i % nf);
    }
    free(members);
    uint32_t *train = xmalloc(n * sizeof(uint32_t));
    uint8_t *query = xmalloc(n);
    double *v = xmalloc(c->opt->k * n * sizeof(double));
    param_t trial[MAX_PARAMS];
    double best = -1;
    size_t best_point = 0;
    int was_main = c->main_fit;
    c->main_fit = 0;
    for (size_t pt = 0; pt < points; pt++) {
        memcpy(trial, params, sizeof trial);
        size_t rest = pt;
        for (size_t i = 0; i < nt; i++) {
            param_t *p = &trial[tuned[i]];
            p->value = p->grid[rest % p->grid_len];
            rest /= p->grid_len;
        }
        double score = 0;
        for (size_t f = 0; f < nf; f++) {
            size_t nq = 0;
            for (size_t j = 0; j < n; j++) {
                int hide = labels[j] != MVNMF_UNLABELED && fold[j] == f;
                train[j] = hide ? MVNMF_UNLABELED : labels[j];
                query[j] = (uint8_t)hide;
                nq += hide;
            }
            if (nq == 0)
                die("--tune: fold %zu of %zu is empty (too few labeled items for --folds)", f + 1, nf);
            if (m->fit(c, train, 0, trial, seed, v))
                return -1;
            score += knn_accuracy_on(c, v, train, query, labels);
        }
        score /= (double)nf;
        fprintf(stderr, "  tune %s:", m->name);
        for (size_t i = 0; i < nt; i++)
            fprintf(stderr, " %s=%g", trial[tuned[i]].name, trial[tuned[i]].value);
        fprintf(stderr, " -> CV kNN accuracy %.2f%%\n", 100 * score);
        if (score > best) {
            best = score;
            best_point = pt;
        }
    }
    size_t rest = best_point;
    for (size_t i = 0; i < nt; i++) {
        param_t *p = &params[tuned[i]];
        p->value = p->grid[rest % p->grid_len];
        rest /= p->grid_len;
    }
    c->main_fit = was_main;
    free(fold);
    free(train);
    free(query);
    free(v);
    return 0;
}

/* ------------------------------------------------------------------- main */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: reproduce [options] DATASET_DIR\n"
            "  --k K               rank of the encodings (default 20)\n"
            "  --iters N           solver iterations (default 200)\n"
            "  --tol T             solver relative tolerance, 0 = run all iterations (default 0)\n"
            "  --splits S          random splits per fraction (default 5)\n"
            "  --fractions LIST    labeled fractions in %%, e.g. 10,20,30,40,50 (the default)\n"
            "  --seed S            base seed: split s uses seed+s (default 0)\n"
            "  --methods LIST      comma-separated method keys (default: all; --list-methods)\n"
            "  --param M.NAME=V    set weight NAME of method M (alpha, beta, gamma, vmax, ka, kp,\n"
            "                      sigma; layers=100,50 for the deep methods: hidden sizes, K on top)\n"
            "  --layers LIST       hidden layer sizes of every deep method (default " DEFAULT_LAYERS ")\n"
            "  --tune              choose the weights by cross-validation within the labeled items\n"
            "  --folds F           folds of --tune (default 3)\n"
            "  --depth             DMCL accuracy against depth 1, 2, 3 (layers: the first 0, 1, 2\n"
            "                      hidden sizes, K on top) at 50%% labeled unless --fractions is given\n"
            "  --kernel KIND       base kernel of every view for MKL and the neighbour graphs:\n"
            "                      rbf (default, median bandwidth over the labeled pairs) or linear\n"
            "  --mkl-lambda L      MKL ridge relative to mean(diag G) (default 0.1)\n"
            "  --uniform-eta       uniform fusion weights instead of kernel-target alignment\n"
            "  --penalty KIND      LDGE/TGE penalty: class-pairs (seed 003, default) or item-neighbors\n"
            "  --shift             shift features with negative values by their minimum\n"
            "  --no-normalize      keep the views' scales (default: ||X_v||_F^2 = N per view)\n"
            "  --nmi NORM          max (default, the papers'), arithmetic, geometric or min\n"
            "  --knn-k K           neighbours of the kNN classifier (default 9)\n"
            "  --kmeans-restarts R k-means restarts (default 10)\n"
            "  --labels FILE       class file in DATASET_DIR (default labels.txt)\n"
            "  --views LIST        use only these views (names or 1-based positions in meta.txt)\n"
            "  --per-view          also print a row per candidate of \"-b\" methods\n"
            "  --list-methods      list the available methods\n");
}

static const char *arg_value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc)
        die("%s needs a value", argv[*i]);
    return argv[++*i];
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

static void parse_fractions(options_t *o, const char *s)
{
    o->n_fractions = 0;
    char *copy = xmalloc(strlen(s) + 1);
    strcpy(copy, s);
    for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
        if (o->n_fractions == MAX_FRACTIONS)
            die("--fractions: at most %d values", MAX_FRACTIONS);
        double p = parse_double(tok, "--fractions");
        if (!(p > 0 && p < 100))
            die("--fractions: %g is not a percentage in (0, 100)", p);
        o->fractions[o->n_fractions++] = p / 100.0;
    }
    free(copy);
    if (o->n_fractions == 0)
        die("--fractions: empty list");
}

static void set_param(const char *spec)
{
    const char *dot = strchr(spec, '.'), *eq = strchr(spec, '=');
    if (!dot || !eq || eq < dot)
        die("--param: expected METHOD.NAME=VALUE, got '%s'", spec);
    for (size_t m = 0; m < N_METHODS; m++) {
        if (strlen(METHODS[m].key) != (size_t)(dot - spec) ||
            strncmp(METHODS[m].key, spec, (size_t)(dot - spec)) != 0)
            continue;
        if ((size_t)(eq - dot - 1) == strlen("layers") && !strncmp(dot + 1, "layers", 6)) {
            if (!METHODS[m].layers)
                die("--param: method %s is not deep: it has no layers", METHODS[m].key);
            size_t tmp[16];
            parse_layers(eq + 1, 1, tmp); /* validates */
            METHODS[m].layers = eq + 1;
            return;
        }
        for (size_t p = 0; p < METHODS[m].n_params; p++) {
            const char *name = METHODS[m].params[p].name;
            if (strlen(name) == (size_t)(eq - dot - 1) && strncmp(name, dot + 1, strlen(name)) == 0) {
                double x = parse_double(eq + 1, spec);
                if (x < 0)
                    die("--param %s: weights are nonnegative", spec);
                METHODS[m].params[p].value = x;
                return;
            }
        }
        die("--param: method %s has no weight '%.*s' (it has %zu%s)", METHODS[m].key,
            (int)(eq - dot - 1), dot + 1, METHODS[m].n_params, METHODS[m].layers ? " and layers" : "");
    }
    die("--param: no method '%.*s' (--list-methods)", (int)(dot - spec), spec);
}

static int selected(const options_t *o, const char *key)
{
    if (!o->methods)
        return 1;
    size_t len = strlen(key);
    for (const char *p = o->methods; *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == len && strncmp(p, key, len) == 0)
            return 1;
        p += l + (e != NULL);
    }
    return 0;
}

static void mean_std(const double *x, size_t n, double *mean, double *std)
{
    double s = 0, q = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    *mean = s / (double)n;
    for (size_t i = 0; i < n; i++)
        q += (x[i] - *mean) * (x[i] - *mean);
    *std = sqrt(q / (double)n);
}

/* "100-50-20" for the layers of a deep method (hidden + K). */
static void layers_text(const char *spec, size_t k, char *out, size_t cap)
{
    size_t layers[16], m = parse_layers(spec, k, layers), len = 0;
    out[0] = 0;
    for (size_t i = 0; i < m && len + 1 < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%zu", i ? "-" : "", layers[i]);
}

/* The first `count` hidden sizes of `spec` ("" for none), in `out`. */
static void layers_prefix(const char *spec, size_t count, char *out, size_t cap)
{
    size_t layers[16], m = parse_layers(spec, 1, layers) - 1, len = 0;
    if (count > m)
        die("--depth: the layers '%s' have %zu hidden sizes, depth %zu needs %zu", spec, m, count + 1,
            count);
    out[0] = 0;
    for (size_t i = 0; i < count && len + 1 < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%zu", i ? "," : "", layers[i]);
}

/* Fits one method (as a main fit: its graph and eta are recorded). */
static void main_fit(ctx_t *c, const method_t *m, diag_t *diag, const uint32_t *labels, size_t cand,
                     const param_t *params, uint64_t seed, double *v, double *time_acc)
{
    double t0 = now();
    c->diag = diag;
    c->main_fit = 1;
    c->eta_set = 0;
    if (m->fit(c, labels, cand, params, seed, v))
        die("%s failed", m->name);
    c->main_fit = 0;
    *time_acc += now() - t0;
}

/* --depth: DMCL (and any other selected deep method) with 1, 2 and 3 layers. */
static void run_depth(ctx_t *c, const size_t *sel, size_t n_sel, diag_t *diags)
{
    const dataset_t *d = c->data;
    const options_t *o = c->opt;
    size_t n = d->n, ns = o->splits, nf = o->n_fractions, k = o->k;
    const size_t depths = 3;
    scores_t *res = xcalloc(n_sel * depths * nf * ns, sizeof(scores_t));
    double *times = xcalloc(n_sel * depths, sizeof(double));
    uint8_t *labeled = xmalloc(n);
    uint32_t *masked = xmalloc(n * sizeof(uint32_t));
    double *v = xmalloc(k * n * sizeof(double));
    notes_t notes = { (size_t)-1 };
    char hidden[3][256];
#define DRES(i, dd, f, s) res[(((i) * depths + (dd)) * nf + (f)) * ns + (s)]
    for (size_t i = 0; i < n_sel; i++) {
        const method_t *m = &METHODS[sel[i]];
        for (size_t dd = 0; dd < depths; dd++) {
            layers_prefix(m->layers, dd, hidden[dd], sizeof hidden[dd]);
            c->layers = hidden[dd];
            for (size_t s = 0; s < ns; s++) {
                uint64_t seed = o->seed + s;
                if (!m->uses_labels)
                    main_fit(c, m, &diags[i], NULL, 0, m->params, seed, v, &times[i * depths + dd]);
                for (size_t f = 0; f < nf; f++) {
                    size_t bytes;
                    check(mvnmf_stratified_split_workspace(n, &bytes), "mvnmf_stratified_split_workspace");
                    check(mvnmf_stratified_split(d->labels, n, d->n_classes, o->fractions[f], seed,
                                                 labeled, workspace(c, bytes), bytes),
                          "mvnmf_stratified_split");
                    for (size_t j = 0; j < n; j++)
                        masked[j] = labeled[j] ? d->labels[j] : MVNMF_UNLABELED;
                    if (m->uses_labels) {
                        param_t params[MAX_PARAMS];
                        memcpy(params, m->params, sizeof params);
                        c->diag = &diags[i];
                        if (o->tune && tune_weights(c, m, masked, params, seed))
                            die("tuning %s failed", m->name);
                        main_fit(c, m, &diags[i], masked, 0, params, seed, v, &times[i * depths + dd]);
                    }
                    DRES(i, dd, f, s) = evaluate(c, v, masked, labeled, seed, &notes);
                }
                fprintf(stderr, "depth %zu, split %zu/%zu: %s done\n", dd + 1, s + 1, ns, m->name);
            }
        }
    }
    static const char *const titles[3] = { "kNN accuracy (%)", "k-means ACC (%)", "k-means NMI (%)" };
    double *col = xmalloc(ns * sizeof(double));
    for (size_t f = 0; f < nf; f++) {
        printf("\n### Accuracy against depth, %g%% labeled, mean ± std over %zu splits\n\n",
               100 * o->fractions[f], ns);
        printf("| method | depth | layers |");
        for (int t = 0; t < 3; t++)
            printf(" %s |", titles[t]);
        printf(" fit time |\n|---|---|---|---|---|---|---|\n");
        for (size_t i = 0; i < n_sel; i++) {
            const method_t *m = &METHODS[sel[i]];
            for (size_t dd = 0; dd < depths; dd++) {
                char lt[256];
                layers_prefix(m->layers, dd, hidden[dd], sizeof hidden[dd]);
                layers_text(hidden[dd], k, lt, sizeof lt);
                printf("| %s | %zu | %s |", m->name, dd + 1, lt);
                for (int t = 0; t < 3; t++) {
                    for (size_t s = 0; s < ns; s++) {
                        scores_t r = DRES(i, dd, f, s);
                        col[s] = t == 0 ? r.knn : t == 1 ? r.acc : r.nmi;
                    }
                    double mean, std;
                    mean_std(col, ns, &mean, &std);
                    printf(" %.2f ± %.2f |", 100 * mean, 100 * std);
                }
                printf(" %.1f s |\n", times[i * depths + dd]);
            }
        }
    }
#undef DRES
    free(col);
    free(res);
    free(times);
    free(labeled);
    free(masked);
    free(v);
}

static void print_diagnostics(const size_t *sel, size_t n_sel, const diag_t *diags)
{
    printf("\nChecks on every fit (tuning fits included): the objective watched at every iteration "
           "(a rise is a relative increase > %g), encodings finite, views whose basis died "
           "(mvnmf_report.dead_views).\n\n",
           RISE_TOL);
    printf("| method | fits | objective rose | largest relative rise | non-finite | dead views | "
           "zero columns of U |\n");
    printf("|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < n_sel; i++) {
        const diag_t *g = &diags[i];
        printf("| %s | %u | %u | %.3g | %u | %u |", METHODS[sel[i]].name, g->fits, g->rising,
               g->max_rise, g->nonfinite, g->dead);
        if (g->cols > 0)
            printf(" %.1f%% |\n", 100 * g->zero_cols / g->cols);
        else
            printf(" - |\n");
    }
    printf("\n(zero columns of U: all-zero columns of the views' bases, of the top layer for deep "
           "methods, over all fits: the group sparsity at work.)\n");
    for (size_t i = 0; i < n_sel; i++)
        if (diags[i].unwatched)
            printf("WARNING: %s: in %u fits the progress callback was not called once per "
                   "iteration and for the start: the objective checks above are incomplete.\n",
                   METHODS[sel[i]].name, diags[i].unwatched);
    for (size_t i = 0; i < n_sel; i++) {
        const diag_t *g = &diags[i];
        if (g->graphs)
            printf("%s graph: %.0f affinity and %.0f penalty entries (CSR, both triangles) on average "
                   "over %u graphs%s",
                   METHODS[sel[i]].name, g->affinity_nnz / g->graphs, g->penalty_nnz / g->graphs,
                   g->graphs, g->ka_min < g->ka_asked ? "" : ".\n");
        if (g->graphs && g->ka_min < g->ka_asked)
            printf("; ka reduced to %zu (from %zu) where a class had too few labeled items.\n",
                   g->ka_min, g->ka_asked);
    }
}

int main(int argc, char **argv)
{
    options_t o;
    memset(&o, 0, sizeof o);
    o.k = 20;
    o.iters = 200;
    o.tol = 0;
    o.splits = 5;
    parse_fractions(&o, "10,20,30,40,50");
    int fractions_given = 0;
    o.normalize = 1;
    o.nmi = MVNMF_NMI_MAX;
    o.knn_k = 9;
    o.kmeans_restarts = 10;
    o.labels = "labels.txt";
    o.kernel = MVNMF_KERNEL_RBF;
    o.mkl_lambda = mvnmf_mkl_params_default().lambda;
    o.learn_eta = 1;
    o.penalty = MVNMF_PENALTY_CLASS_PAIRS;
    o.folds = 3;
    const char *dir = NULL, *layers = NULL;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--k"))
            o.k = parse_size(arg_value(argc, argv, &i), "--k");
        else if (!strcmp(a, "--iters"))
            o.iters = (unsigned)parse_size(arg_value(argc, argv, &i), "--iters");
        else if (!strcmp(a, "--tol"))
            o.tol = parse_double(arg_value(argc, argv, &i), "--tol");
        else if (!strcmp(a, "--splits"))
            o.splits = (unsigned)parse_size(arg_value(argc, argv, &i), "--splits");
        else if (!strcmp(a, "--fractions")) {
            parse_fractions(&o, arg_value(argc, argv, &i));
            fractions_given = 1;
        } else if (!strcmp(a, "--seed"))
            o.seed = (uint64_t)parse_size(arg_value(argc, argv, &i), "--seed");
        else if (!strcmp(a, "--methods"))
            o.methods = arg_value(argc, argv, &i);
        else if (!strcmp(a, "--param"))
            set_param(arg_value(argc, argv, &i));
        else if (!strcmp(a, "--layers"))
            layers = arg_value(argc, argv, &i);
        else if (!strcmp(a, "--tune"))
            o.tune = 1;
        else if (!strcmp(a, "--folds"))
            o.folds = parse_size(arg_value(argc, argv, &i), "--folds");
        else if (!strcmp(a, "--depth"))
            o.depth = 1;
        else if (!strcmp(a, "--kernel")) {
            const char *v = arg_value(argc, argv, &i);
            if (!strcmp(v, "rbf"))
                o.kernel = MVNMF_KERNEL_RBF;
            else if (!strcmp(v, "linear"))
                o.kernel = MVNMF_KERNEL_LINEAR;
            else
                die("--kernel: rbf or linear, not '%s'", v);
        } else if (!strcmp(a, "--mkl-lambda")) {
            o.mkl_lambda = parse_double(arg_value(argc, argv, &i), "--mkl-lambda");
            if (o.mkl_lambda < 0)
                die("--mkl-lambda must be >= 0");
        } else if (!strcmp(a, "--uniform-eta"))
            o.learn_eta = 0;
        else if (!strcmp(a, "--penalty")) {
            const char *v = arg_value(argc, argv, &i);
            if (!strcmp(v, "class-pairs"))
                o.penalty = MVNMF_PENALTY_CLASS_PAIRS;
            else if (!strcmp(v, "item-neighbors"))
                o.penalty = MVNMF_PENALTY_ITEM_NEIGHBORS;
            else
                die("--penalty: class-pairs or item-neighbors, not '%s'", v);
        } else if (!strcmp(a, "--shift"))
            o.shift = 1;
        else if (!strcmp(a, "--no-normalize"))
            o.normalize = 0;
        else if (!strcmp(a, "--nmi")) {
            const char *v = arg_value(argc, argv, &i);
            if (!strcmp(v, "max"))
                o.nmi = MVNMF_NMI_MAX;
            else if (!strcmp(v, "arithmetic"))
                o.nmi = MVNMF_NMI_ARITHMETIC;
            else if (!strcmp(v, "geometric") || !strcmp(v, "sqrt"))
                o.nmi = MVNMF_NMI_GEOMETRIC;
            else if (!strcmp(v, "min"))
                o.nmi = MVNMF_NMI_MIN;
            else
                die("--nmi: max, arithmetic, geometric or min, not '%s'", v);
        } else if (!strcmp(a, "--knn-k"))
            o.knn_k = parse_size(arg_value(argc, argv, &i), "--knn-k");
        else if (!strcmp(a, "--kmeans-restarts"))
            o.kmeans_restarts = (unsigned)parse_size(arg_value(argc, argv, &i), "--kmeans-restarts");
        else if (!strcmp(a, "--labels"))
            o.labels = arg_value(argc, argv, &i);
        else if (!strcmp(a, "--views"))
            o.views = arg_value(argc, argv, &i);
        else if (!strcmp(a, "--per-view"))
            o.per_candidate = 1;
        else if (!strcmp(a, "--list-methods")) {
            for (size_t m = 0; m < N_METHODS; m++)
                printf("%-12s %-11s %s%s\n", METHODS[m].key, METHODS[m].name, METHODS[m].about,
                       METHODS[m].uses_labels ? " [semi-supervised]" : " [unsupervised]");
            return 0;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (a[0] == '-')
            die("unknown option %s (--help)", a);
        else if (dir)
            die("one dataset directory, not '%s' and '%s'", dir, a);
        else
            dir = a;
    }
    if (!dir) {
        usage(stderr);
        return 2;
    }
    if (o.k == 0 || o.splits == 0 || o.knn_k == 0 || o.kmeans_restarts == 0)
        die("--k, --splits, --knn-k and --kmeans-restarts must be at least 1");
    if (o.folds < 2 || o.folds > 255)
        die("--folds must be in 2..255");
    if (o.tol < 0)
        die("--tol must be >= 0");
    if (layers) {
        size_t tmp[16];
        parse_layers(layers, 1, tmp); /* validates */
        for (size_t m = 0; m < N_METHODS; m++)
            if (METHODS[m].layers)
                METHODS[m].layers = layers;
    }
    if (o.depth) {
        if (!o.methods)
            o.methods = "dmcl";
        if (!fractions_given)
            parse_fractions(&o, "50");
    }
    if (o.methods)
        for (const char *p = o.methods; *p;) {
            const char *e = strchr(p, ',');
            size_t l = e ? (size_t)(e - p) : strlen(p), m;
            for (m = 0; m < N_METHODS; m++)
                if (strlen(METHODS[m].key) == l && !strncmp(METHODS[m].key, p, l))
                    break;
            if (m == N_METHODS)
                die("--methods: no method '%.*s' (--list-methods)", (int)l, p);
            if (o.depth && (!METHODS[m].layers || METHODS[m].per_view))
                die("--depth: %s is not a multi-view deep method (dmcl, concat-dnmf)", METHODS[m].key);
            p += l + (e != NULL);
        }

    double t_start = now();
    dataset_t d;
    load(&d, dir, o.labels, o.views);
    preprocess(&d, o.shift, o.normalize);

    /* The selected methods and their candidates (NMF-b, DNMF-b: one per view). */
    size_t n_sel = 0, sel[N_METHODS], n_cand[N_METHODS], first[N_METHODS], total_cand = 0;
    for (size_t m = 0; m < N_METHODS; m++)
        if (selected(&o, METHODS[m].key)) {
            sel[n_sel] = m;
            n_cand[n_sel] = METHODS[m].per_view ? d.n_views : 1;
            first[n_sel] = total_cand;
            total_cand += n_cand[n_sel];
            n_sel++;
        }
    if (n_sel == 0)
        die("no method selected");
    int any_graph = 0, any_deep = 0;
    for (size_t s = 0; s < n_sel; s++) {
        fit_fn f = METHODS[sel[s]].fit;
        any_graph |= f == fit_gnmf || f == fit_mvsl_l || f == fit_mvsl_t;
        any_deep |= METHODS[sel[s]].layers != NULL;
    }

    /* ---- the header: everything that determines the numbers */
    printf("# mvnmf reproduce: %s\n\n", dir);
    printf("mvnmf %s. Dataset: %zu items, %zu classes (%s), %zu views:\n\n", mvnmf_version(), d.n,
           d.present, o.labels, d.n_views);
    printf("| view | name | features | min | preprocessing |\n|---|---|---|---|---|\n");
    for (size_t i = 0; i < d.n_views; i++) {
        view_t *v = &d.views[i];
        char pre[160] = "";
        if (v->shifted)
            snprintf(pre, sizeof pre, "shifted %zu features by their minimum (--shift); ", v->shifted);
        if (o.normalize)
            snprintf(pre + strlen(pre), sizeof pre - strlen(pre), "scaled by %.4g", v->scale);
        else
            snprintf(pre + strlen(pre), sizeof pre - strlen(pre), "not scaled");
        printf("| %s | %s | %zu | %.4g | %s |\n", v->file, v->name, v->rows, v->min, pre);
    }
    printf("\nPreprocessing: per-view normalisation to ||X_v||_F^2 = N is %s%s.\n",
           o.normalize ? "ON" : "OFF", o.normalize ? " (--no-normalize to disable)" : " (--no-normalize)");
    printf("Models: K = %zu, %u iterations (tol %g), init seed = split seed.\n", o.k, o.iters, o.tol);
    printf("Protocol: %u splits (seeds %llu..%llu), per-class stratified labeled fractions",
           o.splits, (unsigned long long)o.seed, (unsigned long long)(o.seed + o.splits - 1));
    for (size_t f = 0; f < o.n_fractions; f++)
        printf(" %g%%", 100 * o.fractions[f]);
    printf("; test items = the unlabeled items.\n");
    printf("Evaluation: kNN (k = %zu, Euclidean) from the labeled to the test items; k-means "
           "(k-means++, %u restarts, k = %zu) on the test items' encodings, ACC under the best "
           "one-to-one map (Kuhn-Munkres), NMI = I(C;C') / %s.\n",
           o.knn_k, o.kmeans_restarts, d.present, nmi_name(o.nmi));
    printf("Methods:");
    for (size_t s = 0; s < n_sel; s++)
        printf("%s %s", s ? "," : "", METHODS[sel[s]].name);
    printf(". Unsupervised methods are fitted once per split and evaluated at every fraction; "
           "semi-supervised ones once per split and fraction (their graph uses that split's "
           "labeled items).\n");
    for (size_t s = 0; s < n_sel; s++) {
        const method_t *m = &METHODS[sel[s]];
        printf("  %s: %s.", m->name, m->about);
        for (size_t p = 0; p < m->n_params; p++)
            printf(" %s = %g", m->params[p].name, m->params[p].value);
        if (m->layers) {
            char lt[256];
            layers_text(m->layers, o.k, lt, sizeof lt);
            printf(" layers = %s", o.depth ? "see the depth table" : lt);
        }
        printf("\n");
    }
    if (any_graph)
        printf("Neighbour graphs: base kernel %s per view, normalised; fused with %s.\n",
               o.kernel == MVNMF_KERNEL_RBF ? "RBF (gamma = 1/median d^2 over the labeled pairs)"
                                            : "linear (cosine)",
               o.learn_eta ? "weights eta learned by kernel-target alignment on the labeled items"
                           : "uniform weights (--uniform-eta)");
    if (any_graph && o.learn_eta)
        printf("  MKL ridge lambda = %g x mean(diag G). LDGE/TGE penalty: %s.\n", o.mkl_lambda,
               o.penalty == MVNMF_PENALTY_CLASS_PAIRS ? "the kp nearest pairs between each class and "
                                                        "the others (seed 003)"
                                                      : "each item's kp nearest other-class items (seed 000)");
    if (any_deep) {
        mvnmf_deep_params dp;
        check(mvnmf_deep_params_preset(MVNMF_DEEP_PRESET_DMCL, &dp), "mvnmf_deep_params_preset");
        printf("Deep methods: layer-wise pre-training (%u NMF iterations per layer), then the "
               "iterations above as fine-tuning; V starts %s; lower layers %s; hidden sizes are "
               "clamped per view to the layer below (a view of 6 features keeps 6).\n",
               dp.pretrain_iter,
               dp.v_init == MVNMF_DEEP_V_RANDOM ? "at random after pre-training (the paper's Algorithm 1)"
                                                : "from the pre-trained encodings",
               dp.box_lower ? "in the box [0, 1]" : "unconstrained");
    }
    if (o.tune) {
        int any = 0;
        for (size_t s = 0; s < n_sel; s++)
            for (size_t p = 0; p < METHODS[sel[s]].n_params; p++)
                any |= METHODS[sel[s]].params[p].grid != NULL;
        if (!any)
            printf("--tune: none of the selected methods has weights; nothing to tune.\n");
        else
            printf("--tune: per split and fraction, %zu-fold cross-validation within the labeled "
                   "items over alpha in the papers' value x {1/100, 1/10, 1} and beta in "
                   "{0.002, 0.02, 0.2} (kNN accuracy of the held-out labeled items; the test "
                   "items' labels are never read).\n",
                   o.folds);
    }
    fflush(stdout);

    ctx_t ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.data = &d;
    ctx.opt = &o;
    ctx.views = xmalloc(d.n_views * sizeof(mvnmf_view));
    ctx.kernels = xmalloc(d.n_views * sizeof(mvnmf_kernel));
    ctx.eta = xcalloc(d.n_views, sizeof(double));
    size_t rows_total = 0;
    for (size_t i = 0; i < d.n_views; i++) {
        ctx.views[i] = dense_view(&d, i);
        ctx.kernels[i].kind = o.kernel;
        ctx.kernels[i].gamma = 0;
        rows_total += d.views[i].rows;
    }
    /* The stacked features of ConcatDNMF (only if selected). */
    if (selected(&o, "concat-dnmf")) {
        ctx.concat_x = xmalloc(rows_total * d.n * sizeof(double));
        for (size_t j = 0; j < d.n; j++)
            for (size_t i = 0, r0 = 0; i < d.n_views; r0 += d.views[i].rows, i++)
                memcpy(ctx.concat_x + j * rows_total + r0, d.views[i].x + j * d.views[i].rows,
                       d.views[i].rows * sizeof(double));
        ctx.concat = ctx.views[0];
        ctx.concat.rows = rows_total;
        ctx.concat.col_stride = rows_total;
        ctx.concat.values = ctx.concat_x;
    }
    diag_t *diags = xcalloc(n_sel, sizeof(diag_t));
    for (size_t i = 0; i < n_sel; i++)
        diags[i].ka_min = SIZE_MAX;

    if (o.depth) {
        run_depth(&ctx, sel, n_sel, diags);
        print_diagnostics(sel, n_sel, diags);
        printf("\nWall time %.2f s.\n", now() - t_start);
        return 0;
    }

    /* ---- the runs */
    size_t nf = o.n_fractions, ns = o.splits, n = d.n, k = o.k, h = d.n_views;
    size_t cells = total_cand * nf * ns;
    scores_t *res = xcalloc(cells, sizeof(scores_t));
    double *fit_time = xcalloc(total_cand, sizeof(double));
    double **cache = xcalloc(total_cand, sizeof(double *));
    for (size_t c = 0; c < total_cand; c++)
        cache[c] = xmalloc(k * n * sizeof(double));
    uint8_t *labeled = xmalloc(n);
    uint32_t *masked = xmalloc(n * sizeof(uint32_t));
    notes_t notes = { (size_t)-1 };
    param_t params[MAX_PARAMS];
    double *etas = xcalloc(nf * ns * h, sizeof(double)); /* eta per fraction, split */
    uint8_t *eta_ok = xcalloc(nf * ns, 1);
    double *chosen = xcalloc(n_sel * nf * ns * MAX_PARAMS, sizeof(double)); /* --tune */

#define RES(c, f, s) res[((c) * nf + (f)) * ns + (s)]
    for (size_t s = 0; s < ns; s++) {
        uint64_t seed = o.seed + s;
        for (size_t i = 0; i < n_sel; i++) {
            const method_t *m = &METHODS[sel[i]];
            if (m->uses_labels)
                continue;
            ctx.layers = m->layers;
            for (size_t c = 0; c < n_cand[i]; c++) {
                double t0 = now();
                main_fit(&ctx, m, &diags[i], NULL, c, m->params, seed, cache[first[i] + c],
                         &fit_time[first[i] + c]);
                fprintf(stderr, "split %zu/%zu: %s%s%s fitted in %.2f s\n", s + 1, ns, m->name,
                        m->per_view ? " on " : "", m->per_view ? d.views[c].name : "", now() - t0);
            }
        }
        for (size_t f = 0; f < nf; f++) {
            size_t bytes;
            check(mvnmf_stratified_split_workspace(n, &bytes), "mvnmf_stratified_split_workspace");
            check(mvnmf_stratified_split(d.labels, n, d.n_classes, o.fractions[f], seed, labeled,
                                         workspace(&ctx, bytes), bytes),
                  "mvnmf_stratified_split");
            for (size_t j = 0; j < n; j++)
                masked[j] = labeled[j] ? d.labels[j] : MVNMF_UNLABELED;
            for (size_t i = 0; i < n_sel; i++) {
                const method_t *m = &METHODS[sel[i]];
                memcpy(params, m->params, sizeof params);
                ctx.layers = m->layers;
                if (o.tune && m->uses_labels) {
                    ctx.diag = &diags[i];
                    double t0 = now();
                    if (tune_weights(&ctx, m, masked, params, seed))
                        die("tuning %s failed", m->name);
                    fprintf(stderr, "split %zu/%zu, %g%%: %s tuned in %.2f s\n", s + 1, ns,
                            100 * o.fractions[f], m->name, now() - t0);
                }
                for (size_t p = 0; p < m->n_params; p++)
                    chosen[((i * nf + f) * ns + s) * MAX_PARAMS + p] = params[p].value;
                for (size_t c = 0; c < n_cand[i]; c++) {
                    double *v = cache[first[i] + c];
                    if (m->uses_labels) {
                        double t0 = now();
                        main_fit(&ctx, m, &diags[i], masked, c, params, seed, v, &fit_time[first[i] + c]);
                        fprintf(stderr, "split %zu/%zu, %g%%: %s fitted in %.2f s\n", s + 1, ns,
                                100 * o.fractions[f], m->name, now() - t0);
                        if (ctx.eta_set && !eta_ok[f * ns + s]) {
                            memcpy(etas + (f * ns + s) * h, ctx.eta, h * sizeof(double));
                            eta_ok[f * ns + s] = 1;
                        }
                    }
                    RES(first[i] + c, f, s) = evaluate(&ctx, v, masked, labeled, seed, &notes);
                }
            }
        }
    }

    /* ---- the best candidate of "-b" methods: highest mean kNN accuracy */
    size_t best[N_METHODS];
    printf("\n");
    for (size_t i = 0; i < n_sel; i++) {
        best[i] = 0;
        if (n_cand[i] == 1)
            continue;
        double top = -1;
        printf("%s: mean kNN accuracy of each view over all fractions and splits:", METHODS[sel[i]].name);
        for (size_t c = 0; c < n_cand[i]; c++) {
            double sum = 0;
            for (size_t f = 0; f < nf; f++)
                for (size_t s = 0; s < ns; s++)
                    sum += RES(first[i] + c, f, s).knn;
            sum /= (double)(nf * ns);
            printf(" %s %.2f%%%s", d.views[c].name, 100 * sum, c + 1 < n_cand[i] ? "," : "");
            if (sum > top) {
                top = sum;
                best[i] = c;
            }
        }
        printf(".\n  -> %s = %s on view %s (chosen by mean kNN accuracy on the test items, as the "
               "papers' best-single-view baseline; its k-means rows use the same view).\n",
               METHODS[sel[i]].name, METHODS[sel[i]].layers ? "DNMF" : "NMF", d.views[best[i]].name);
    }

    /* ---- the tables */
    static const char *const titles[3] = { "kNN accuracy (%)", "k-means ACC (%)", "k-means NMI (%)" };
    double *col = xmalloc(ns * sizeof(double));
    for (int t = 0; t < 3; t++) {
        printf("\n### %s, mean ± std over %zu splits", titles[t], ns);
        if (t == 2)
            printf(", NMI normalised by %s", nmi_name(o.nmi));
        printf("\n\n| method |");
        for (size_t f = 0; f < nf; f++)
            printf(" %g%% |", 100 * o.fractions[f]);
        printf("\n|---|");
        for (size_t f = 0; f < nf; f++)
            printf("---|");
        printf("\n");
        for (size_t i = 0; i < n_sel; i++) {
            const method_t *m = &METHODS[sel[i]];
            for (size_t c = 0; c < n_cand[i]; c++) {
                int is_best = c == best[i];
                if (!is_best && !o.per_candidate)
                    continue;
                if (n_cand[i] > 1)
                    printf("| %s (%s) |", is_best ? m->name : m->layers ? "DNMF" : "NMF",
                           d.views[c].name);
                else
                    printf("| %s |", m->name);
                for (size_t f = 0; f < nf; f++) {
                    for (size_t s = 0; s < ns; s++) {
                        scores_t r = RES(first[i] + c, f, s);
                        col[s] = t == 0 ? r.knn : t == 1 ? r.acc : r.nmi;
                    }
                    double mean, std;
                    mean_std(col, ns, &mean, &std);
                    printf(" %.2f ± %.2f |", 100 * mean, 100 * std);
                }
                printf("\n");
            }
        }
    }
    if (notes.knn_k_used < o.knn_k)
        printf("\nNote: where fewer than %zu items were labeled, kNN used k = the smallest "
               "number of labeled items in a class (down to %zu).\n",
               o.knn_k, notes.knn_k_used);

    /* ---- the fusion weights of the neighbour graphs */
    int any_eta = 0;
    for (size_t c = 0; c < nf * ns; c++)
        any_eta |= eta_ok[c];
    if (any_eta) {
        printf("\n### Fusion weights eta of the neighbour graphs (%s), mean ± std over the splits\n\n",
               o.learn_eta ? "kernel-target alignment on each split's labeled items" : "uniform");
        printf("| labeled |");
        for (size_t i = 0; i < h; i++)
            printf(" %s |", d.views[i].name);
        printf("\n|---|");
        for (size_t i = 0; i < h; i++)
            printf("---|");
        printf("\n");
        for (size_t f = 0; f < nf; f++) {
            printf("| %g%% |", 100 * o.fractions[f]);
            for (size_t i = 0; i < h; i++) {
                size_t cnt = 0;
                for (size_t s = 0; s < ns; s++)
                    if (eta_ok[f * ns + s])
                        col[cnt++] = etas[(f * ns + s) * h + i];
                double mean = NAN, std = NAN;
                if (cnt)
                    mean_std(col, cnt, &mean, &std);
                printf(" %.3f ± %.3f |", mean, std);
            }
            printf("\n");
        }
    }

    /* ---- the weights --tune chose */
    if (o.tune)
        for (size_t i = 0; i < n_sel; i++) {
            const method_t *m = &METHODS[sel[i]];
            int any = 0;
            for (size_t p = 0; p < m->n_params; p++)
                any |= m->params[p].grid != NULL;
            if (!any || !m->uses_labels)
                continue;
            printf("\n%s, weights chosen by --tune (split 1..%zu):\n\n| labeled | chosen |\n|---|---|\n",
                   m->name, ns);
            for (size_t f = 0; f < nf; f++) {
                printf("| %g%% |", 100 * o.fractions[f]);
                for (size_t s = 0; s < ns; s++) {
                    printf("%s", s ? ";" : "");
                    for (size_t p = 0; p < m->n_params; p++)
                        if (m->params[p].grid)
                            printf(" %s=%g", m->params[p].name,
                                   chosen[((i * nf + f) * ns + s) * MAX_PARAMS + p]);
                }
                printf(" |\n");
            }
        }

    print_diagnostics(sel, n_sel, diags);

    printf("\nFit time (all splits%s):", o.tune ? ", tuning excluded" : "");
    for (size_t i = 0; i < n_sel; i++) {
        double tsum = 0;
        for (size_t c = 0; c < n_cand[i]; c++)
            tsum += fit_time[first[i] + c];
        printf(" %s %.2f s%s", METHODS[sel[i]].name, tsum, i + 1 < n_sel ? "," : "");
    }
    printf(". Wall time %.2f s.\n", now() - t_start);

    for (size_t c = 0; c < total_cand; c++)
        free(cache[c]);
    free(cache);
    free(col);
    free(res);
    free(fit_time);
    free(labeled);
    free(masked);
    free(etas);
    free(eta_ok);
    free(chosen);
    free(diags);
    free(ctx.work);
    free(ctx.views);
    free(ctx.kernels);
    free(ctx.eta);
    free(ctx.concat_x);
    for (size_t i = 0; i < d.n_views; i++)
        free(d.views[i].x);
    free(d.views);
    free(d.labels);
    return 0;
}
