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
 * Unsupervised methods (those that never see labels) are fitted once per split
 * (seed + s) and their encoding is evaluated at every fraction: it does not
 * depend on the fraction, so refitting would only repeat the same work.
 *
 * Adding a method (GNMF, MvSL-S/L/T, MCL, DMCL, ...): write a fit function
 * with the signature of `fit_fn` and add a line to METHODS[] below. Methods
 * with weights (alpha, beta, ...) list them in their `params` table; the
 * weights are set with --param METHOD.NAME=VALUE, and --tune will choose them
 * by cross-validation inside the labeled items (see tune_weights(), the hook).
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
    int shift, normalize, tune, per_candidate;
    uint32_t nmi;           /* MVNMF_NMI_* */
    size_t knn_k;
    unsigned kmeans_restarts;
    const char *methods;    /* comma-separated keys, NULL = all */
    const char *labels;
    const char *views;      /* comma-separated names or positions, NULL = all */
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

/* Shared state of a run: the data, the options and one growable workspace. */
typedef struct {
    const dataset_t *data;
    const options_t *opt;
    void *work;
    size_t work_bytes;
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

/* Fits a method: writes the K x N encoding `v` of all items. `labels` holds the
 * class of each labeled item and MVNMF_UNLABELED for the others (only methods
 * with uses_labels = 1 may read it). `candidate` selects one of the method's
 * variants (NMF-b: the view). Returns 0, or nonzero after printing why. */
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
} method_t;

static mvnmf_nmf_params nmf_params(const options_t *o, uint64_t seed)
{
    mvnmf_nmf_params p = mvnmf_nmf_params_default();
    p.max_iter = o->iters;
    p.tol = o->tol;
    p.seed = seed;
    return p;
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
    check(mvnmf_nmf_fit(&x, c->opt->k, &p, u, v, w, bytes, NULL, NULL, NULL), "mvnmf_nmf_fit");
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
    mvnmf_view *xs = xmalloc(d->n_views * sizeof(mvnmf_view));
    double **us = xmalloc(d->n_views * sizeof(double *));
    for (size_t i = 0; i < d->n_views; i++) {
        xs[i] = dense_view(d, i);
        us[i] = xmalloc(d->views[i].rows * c->opt->k * sizeof(double));
    }
    mvnmf_nmf_params p = nmf_params(c->opt, seed);
    size_t bytes;
    check(mvnmf_joint_nmf_fit_workspace(xs, d->n_views, c->opt->k, &p, &bytes),
          "mvnmf_joint_nmf_fit_workspace");
    void *w = workspace(c, bytes);
    check(mvnmf_joint_nmf_fit(xs, d->n_views, c->opt->k, &p, us, v, w, bytes, NULL, NULL, NULL),
          "mvnmf_joint_nmf_fit");
    for (size_t i = 0; i < d->n_views; i++)
        free(us[i]);
    free(us);
    free(xs);
    return 0;
}

/* The method table. Later issues add their methods here, e.g.
 *   { "gnmf", "GNMF", "...", 1, 0, fit_gnmf, { { "beta", 1.0, beta_grid, 5 } }, 1 },
 *   { "mvsl-t", "MvSL-T", "...", 1, 0, fit_mvsl_t, { { "alpha", ... }, { "beta", ... } }, 2 },
 */
static method_t METHODS[] = {
    { "nmf-b", "NMF-b",
      "NMF on each single view; the tables report the view with the best mean kNN accuracy "
      "over all fractions and splits",
      0, 1, fit_nmf_view, { { NULL, 0, NULL, 0 } }, 0 },
    { "concat", "ConcatNMF", "joint multi-view NMF on all views (mvnmf_joint_nmf_fit)", 0, 0,
      fit_concat, { { NULL, 0, NULL, 0 } }, 0 },
};
#define N_METHODS (sizeof METHODS / sizeof METHODS[0])

/* ---------------------------------------------------------- tuning (hook) */

/* HOOK, NOT IMPLEMENTED YET: choose a weighted method's params[] by
 * cross-validation inside the labeled items of one split, as the papers did.
 *
 * Contract for the implementation (it matters once a method with weights is
 * registered above): split the items with labels[j] != MVNMF_UNLABELED into
 * `folds` stratified folds (mvnmf_stratified_split on the labeled subset);
 * for every point of the grid (the product of the params' grids) and every
 * fold, hide that fold's labels (set them to MVNMF_UNLABELED), fit the method,
 * and score kNN accuracy on the hidden fold only; keep the grid point with the
 * best mean accuracy (ties: the first) in params[].value. The test items'
 * labels are never read: `labels` already hides them.
 *
 * Until then it refuses, and main() only calls it for methods with weights. */
static int tune_weights(ctx_t *c, const method_t *m, const uint32_t *labels, param_t *params)
{
    (void)c;
    (void)labels;
    (void)params;
    fprintf(stderr, "reproduce: --tune is not implemented yet for %s (hook tune_weights())\n",
            m->name);
    return -1;
}

/* ------------------------------------------------------------- evaluation */

typedef struct {
    double knn, acc, nmi;
} scores_t;

typedef struct {
    size_t knn_k_used; /* smallest kNN k used (reduced when few items are labeled) */
} notes_t;

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
    kp.k = o->knn_k;
    if (nl < kp.k) {
        /* Fewer labeled items than neighbours: k-NN over all of them would
         * be a majority vote. Use the smallest labeled class size instead. */
        size_t *cnt = xcalloc(d->n_classes, sizeof(size_t));
        for (size_t j = 0; j < n; j++)
            cnt[d->labels[j]] += labeled[j];
        kp.k = nl;
        for (size_t cl = 0; cl < d->n_classes; cl++)
            if (cnt[cl] > 0 && cnt[cl] < kp.k)
                kp.k = cnt[cl];
        free(cnt);
    }
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
            "  --param M.NAME=V    set weight NAME of method M\n"
            "  --tune              choose weights by cross-validation within the labeled items\n"
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
        for (size_t p = 0; p < METHODS[m].n_params; p++) {
            const char *name = METHODS[m].params[p].name;
            if (strlen(name) == (size_t)(eq - dot - 1) && strncmp(name, dot + 1, strlen(name)) == 0) {
                METHODS[m].params[p].value = parse_double(eq + 1, spec);
                return;
            }
        }
        die("--param: method %s has no weight '%.*s' (it has %zu)", METHODS[m].key,
            (int)(eq - dot - 1), dot + 1, METHODS[m].n_params);
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

int main(int argc, char **argv)
{
    options_t o;
    memset(&o, 0, sizeof o);
    o.k = 20;
    o.iters = 200;
    o.tol = 0;
    o.splits = 5;
    parse_fractions(&o, "10,20,30,40,50");
    o.normalize = 1;
    o.nmi = MVNMF_NMI_MAX;
    o.knn_k = 9;
    o.kmeans_restarts = 10;
    o.labels = "labels.txt";
    const char *dir = NULL;

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
        else if (!strcmp(a, "--fractions"))
            parse_fractions(&o, arg_value(argc, argv, &i));
        else if (!strcmp(a, "--seed"))
            o.seed = (uint64_t)parse_size(arg_value(argc, argv, &i), "--seed");
        else if (!strcmp(a, "--methods"))
            o.methods = arg_value(argc, argv, &i);
        else if (!strcmp(a, "--param"))
            set_param(arg_value(argc, argv, &i));
        else if (!strcmp(a, "--tune"))
            o.tune = 1;
        else if (!strcmp(a, "--shift"))
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
                printf("%-10s %-10s %s%s\n", METHODS[m].key, METHODS[m].name, METHODS[m].about,
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
    if (o.tol < 0)
        die("--tol must be >= 0");
    if (o.methods)
        for (const char *p = o.methods; *p;) {
            const char *e = strchr(p, ',');
            size_t l = e ? (size_t)(e - p) : strlen(p), m;
            for (m = 0; m < N_METHODS; m++)
                if (strlen(METHODS[m].key) == l && !strncmp(METHODS[m].key, p, l))
                    break;
            if (m == N_METHODS)
                die("--methods: no method '%.*s' (--list-methods)", (int)l, p);
            p += l + (e != NULL);
        }

    double t_start = now();
    dataset_t d;
    load(&d, dir, o.labels, o.views);
    preprocess(&d, o.shift, o.normalize);

    /* The selected methods and their candidates (NMF-b: one per view). */
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
    printf(". Unsupervised methods are fitted once per split and evaluated at every fraction.\n");
    for (size_t s = 0; s < n_sel; s++) {
        const method_t *m = &METHODS[sel[s]];
        printf("  %s: %s.", m->name, m->about);
        for (size_t p = 0; p < m->n_params; p++)
            printf(" %s = %g", m->params[p].name, m->params[p].value);
        printf("\n");
    }
    if (o.tune) {
        int any = 0;
        for (size_t s = 0; s < n_sel; s++)
            any |= METHODS[sel[s]].n_params > 0;
        if (!any)
            printf("--tune: none of the selected methods has weights; nothing to tune.\n");
    }
    fflush(stdout);

    /* ---- the runs */
    size_t nf = o.n_fractions, ns = o.splits, n = d.n, k = o.k;
    size_t cells = total_cand * nf * ns;
    scores_t *res = xcalloc(cells, sizeof(scores_t));
    double *fit_time = xcalloc(total_cand, sizeof(double));
    double **cache = xcalloc(total_cand, sizeof(double *));
    for (size_t c = 0; c < total_cand; c++)
        cache[c] = xmalloc(k * n * sizeof(double));
    uint8_t *labeled = xmalloc(n);
    uint32_t *masked = xmalloc(n * sizeof(uint32_t));
    notes_t notes = { (size_t)-1 };
    ctx_t ctx = { &d, &o, NULL, 0 };
    param_t params[MAX_PARAMS];

#define RES(c, f, s) res[((c) * nf + (f)) * ns + (s)]
    for (size_t s = 0; s < ns; s++) {
        uint64_t seed = o.seed + s;
        for (size_t i = 0; i < n_sel; i++) {
            const method_t *m = &METHODS[sel[i]];
            if (m->uses_labels)
                continue;
            for (size_t c = 0; c < n_cand[i]; c++) {
                double t0 = now();
                if (m->fit(&ctx, NULL, c, m->params, seed, cache[first[i] + c]))
                    die("%s failed", m->name);
                fit_time[first[i] + c] += now() - t0;
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
                if (o.tune && m->n_params > 0 && tune_weights(&ctx, m, masked, params))
                    die("tuning %s failed", m->name);
                for (size_t c = 0; c < n_cand[i]; c++) {
                    double *v = cache[first[i] + c];
                    if (m->uses_labels) {
                        double t0 = now();
                        if (m->fit(&ctx, masked, c, params, seed, v))
                            die("%s failed", m->name);
                        fit_time[first[i] + c] += now() - t0;
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
        printf(".\n  -> %s = NMF on view %s (chosen by mean kNN accuracy on the test items, as the "
               "papers' best-single-view baseline; its k-means rows use the same view).\n",
               METHODS[sel[i]].name, d.views[best[i]].name);
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
                    printf("| %s (%s) |", is_best ? m->name : "NMF", d.views[c].name);
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

    printf("\nFit time (all splits):");
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
    free(ctx.work);
    for (size_t i = 0; i < d.n_views; i++)
        free(d.views[i].x);
    free(d.views);
    free(d.labels);
    return 0;
}
