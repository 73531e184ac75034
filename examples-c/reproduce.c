/* reproduce: the papers' evaluation tables on any dataset directory, through mvnmf's C ABI
 * (REPRODUCE.md; --help lists the options):
 *
 *   reproduce [options] DATASET_DIR    (meta.txt, viewK.f64[.gz], labels.txt)
 *
 * main() parses the options, loads and preprocesses the dataset, runs every selected method
 * (with --depth: at depth 1, 2 and 3) through the library's protocol and prints the tables.
 * The library does the work: mvnmf_prepare_view (shift, scale); mvnmf_evaluate_protocol
 * (DESIGN §9: per split and labeled fraction a stratified labeled subset; fit_cb() gives the
 * encoding of all items from the labeled items' classes only; kNN accuracy, k-means ACC and
 * NMI of the test items); mvnmf_summarize_scores (mean ± population std);
 * mvnmf_cross_validate (--tune); the fits: mvnmf_pipeline_fit_report (GNMF, MvSL-S/L/T, MCL:
 * fusion weights, neighbour graph and factorization in one call), mvnmf_nmf_fit,
 * mvnmf_joint_nmf_fit and mvnmf_deep_fit. A method is one line of METHODS[]; every fit is
 * watched through the progress callback (the checks table).
 *
 * Build:  cargo build --release -p mvnmf-capi && make -C examples-c reproduce
 */
#define _POSIX_C_SOURCE 200809L
#define EXAMPLE_NAME "reproduce"
#include "reproduce.h"

/* ---------------------------------------------------------------- dataset */

/* labels_file: one class id per item; counts the classes present. */
static void load_labels(dataset_t *d, const char *dir, const char *labels_file)
{
    char line[4096], tok[64];
    size_t count = 0;
    input_t in;
    open_input(&in, dir, labels_file, 1);
    d->labels = xcalloc(d->n, sizeof(uint32_t));
    while (fgets(line, sizeof line, in.f))
        if (sscanf(line, "%63s", tok) == 1) {
            if (count == d->n) die("%s: more than %zu labels", in.path, d->n);
            size_t c = parse_size(tok, in.path);
            if (c >= MVNMF_UNLABELED) die("%s: label %zu out of range", in.path, c);
            d->labels[count++] = (uint32_t)c;
            d->n_classes = c + 1 > d->n_classes ? c + 1 : d->n_classes;
        }
    close_input(&in);
    if (count != d->n) die("%s: %zu labels for %zu items", in.path, count, d->n);
    uint8_t *seen = xcalloc(d->n_classes, 1);
    for (size_t j = 0; j < d->n; j++) d->present += !seen[d->labels[j]], seen[d->labels[j]] = 1;
    free(seen);
    if (d->present < 2) die("%s: the labels have a single class", labels_file);
}

/* The views of meta.txt's lines "viewK.f64 name=NAME rows=R cols=N" (--views: names or
 * 1-based positions), their values, the labels. */
static void load(dataset_t *d, const char *dir, const char *labels_file, const char *keep)
{
    char line[4096], file[256], rows[64], cols[64], tok[64], *path;
    input_t in;
    open_input(&in, dir, "meta.txt", 1);
    path = in.path;
    for (size_t pos = 1; fgets(line, sizeof line, in.f);) {
        view_t *v = &d->views[d->n_views];
        if (sscanf(line, "%255s", file) != 1 || strncmp(file, "view", 4) ||
            !(ends_with(file, ".f64") || ends_with(file, ".f64.gz")))
            continue;
        if (!meta_field(line, "rows", rows, sizeof rows) || !meta_field(line, "cols", cols, sizeof cols))
            die("%s: view line without rows= and cols=: %s", path, line);
        snprintf(v->file, sizeof v->file, "%s", file);
        if (!meta_field(line, "name", v->name, sizeof v->name)) snprintf(v->name, sizeof v->name, "%.63s", file);
        v->rows = parse_size(rows, "rows");
        size_t n = parse_size(cols, "cols");
        if (v->rows == 0 || n == 0)
            die("%s: view %s is empty (%zu x %zu)", path, file, v->rows, n);
        if (d->n_views > 0 && n != d->n) die("%s: view %s has %zu items, the first view %zu", path, file, n, d->n);
        d->n = n;
        int kept = !keep;
        for (const char *p = keep; p && next_token(&p, tok, sizeof tok);)
            kept |= !strcmp(tok, v->name) || !strcmp(tok, v->file) || strtoul(tok, NULL, 10) == pos;
        pos++;
        if (kept && ++d->n_views == MAX_VIEWS) die("%s: at most %d views", path, MAX_VIEWS - 1);
    }
    close_input(&in);
    if (d->n_views == 0)
        die(keep ? "--views %s: no such view (names or positions from meta.txt)"
                 : "%s: no view lines (\"viewK.f64 name=... rows=R cols=N\")", keep ? keep : path);
    for (size_t i = 0; i < d->n_views; i++) d->views[i].x = read_f64(dir, d->views[i].file, d->views[i].rows, d->n);
    load_labels(d, dir, labels_file);
}

/* Shifts (--shift) and normalises every view through mvnmf_prepare_view. */
static void preprocess(dataset_t *d, int shift, int normalize)
{
    mvnmf_prep_params p = { (uint32_t)shift, (uint32_t)normalize };
    for (view_t *v = d->views; v < d->views + d->n_views; v++) {
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

/* ------------------------------------------------------------- methods */

/* --tune grids: the papers' alpha x {1/100, 1/10, 1}, beta in {0.002, 0.02, 0.2}. */
static const double BETA[] = { 0.002, 0.02, 0.2 };
static const double ALPHA_MVSL[] = { 0.15, 1.5, 15 }; /* seed 003: alpha = 15 */
static const double ALPHA_MCL[] = { 1, 10, 100 };     /* seed 001: alpha = 100 */
static const double GAMMA_MCL[] = { 0.0005, 0.005, 0.05 }; /* seed 001: gamma = 0.005 */
static const double DEPTH[] = { 1, 2, 3 };                 /* layers of DMCL (issue 20) */
#define MVSL_W { "alpha", 1.5, ALPHA_MVSL }, { "beta", 0.02, BETA }, { "gamma", 0, NULL }, { "vmax", 1, NULL }
#define MCL_W { "alpha", 10, ALPHA_MCL }, { "beta", 0.015, BETA }, { "gamma", 0.005, GAMMA_MCL }, { "vmax", 1, NULL }
/* DMCL's architecture and pre-training as weights: depth = how many of the layers (the
 * first depth - 1 hidden sizes, K on top; 0: all of them), box (lower layers in [0, 1]),
 * vinit (V after pre-training: 0 random, 1 the pre-trained encodings), pretrain (NMF
 * iterations per layer). */
#define DEEP_W { "depth", 0, DEPTH }, { "box", 1, NULL }, { "vinit", 0, NULL }, { "pretrain", 100, NULL }

/* Defaults: the papers' alpha / 10 (DESIGN §9: the papers' values zero most
 * columns of U on these normalised views), their beta and gamma, vmax = 1. The
 * deep layers: the paper's [300 200 125] is for views of thousands of features. */
method_t METHODS[N_METHODS] = {
    { "nmf-b", "NMF-b", "NMF on each single view; the tables report the view with the best mean "
      "kNN accuracy over all fractions and splits", 0, ON_VIEW, MODEL_NMF, 0, NULL, { { 0 } } },
    { "concat", "ConcatNMF", "joint multi-view NMF on all views (mvnmf_joint_nmf_fit)", 0, ON_ALL,
      MODEL_JOINT, 0, NULL, { { 0 } } },
    { "dnmf", "DNMF-b", "deep NMF (DNMF preset, layer-wise pre-training + fine-tuning) on each single "
      "view; the best view is reported as for NMF-b", 0, ON_VIEW, MODEL_DEEP, MVNMF_DEEP_PRESET_DNMF,
      DEFAULT_LAYERS, { { 0 } } },
    { "concat-dnmf", "ConcatDNMF", "deep NMF (DNMF preset) of all views' features stacked", 0, ON_CONCAT,
      MODEL_DEEP, MVNMF_DEEP_PRESET_DNMF, DEFAULT_LAYERS, { { 0 } } },
    { "gnmf", "GNMF", "GNMF preset (no sparsity), affinity-only graph: within-class kNN among the "
      "labeled items under the MKL-fused kernel (mvnmf_ldge, kp = 0)", 1, ON_ALL, MODEL_PIPELINE,
      MVNMF_METHOD_GNMF, NULL, { { "beta", 0.02, BETA }, { "vmax", 1, NULL }, { "ka", 5, NULL } } },
    { "mvsl-s", "MvSL-S", "MVSL preset (L1,2), simple graph embedding (MVNMF_GRAPH_SGE)", 1, ON_ALL,
      MODEL_PIPELINE, MVNMF_METHOD_MVSL_S, NULL, { MVSL_W } },
    { "mvsl-l", "MvSL-L", "MVSL preset (L1,2), LDGE graph (seed-003 class-pair penalty) under the "
      "MKL-fused kernel", 1, ON_ALL, MODEL_PIPELINE, MVNMF_METHOD_MVSL_L, NULL,
      { MVSL_W, { "ka", 5, NULL }, { "kp", 3, NULL } } },
    { "mvsl-t", "MvSL-T", "MVSL preset (L1,2), TGE graph (all items) under the MKL-fused kernel", 1,
      ON_ALL, MODEL_PIPELINE, MVNMF_METHOD_MVSL_T, NULL,
      { MVSL_W, { "ka", 5, NULL }, { "kp", 3, NULL }, { "sigma", 2, NULL } } },
    { "mcl", "MCL", "MCL preset (L1,inf, gamma on V), SGE graph", 1, ON_ALL, MODEL_PIPELINE,
      MVNMF_METHOD_MCL, NULL, { MCL_W } },
    { "dmcl", "DMCL", "DMCL preset (deep, L1,inf on the top layers, box on lower layers), SGE graph", 1,
      ON_ALL, MODEL_DEEP, MVNMF_DEEP_PRESET_DMCL, DEFAULT_LAYERS, { MCL_W, DEEP_W } },
};

/* The value of weight `name` (or `dflt` if the method has none); counts are whole. */
static double pget(const param_t *p, const char *name, double dflt, int count)
{
    double x = dflt;
    for (size_t i = 0; i < MAX_PARAMS && p[i].name; i++)
        if (!strcmp(p[i].name, name)) x = p[i].value;
    if (count && !(x >= 0 && x == floor(x) && x < 1e9)) die("%s must be a nonnegative integer, not %g", name, x);
    return x;
}

/* One fit: its inputs, outputs, the progress callback's record. */
typedef struct {
    const mvnmf_view *views;
    size_t nv, nl, layers[16], lens[MAX_VIEWS]; /* views; deep layers; length of each U */
    double *us[MAX_VIEWS], *v;
    const uint32_t *labels; /* the labeled items' classes (NULL: unsupervised) */
    const param_t *params;
    uint64_t seed;
    mvnmf_report report;
    double last, max_rise; /* the objective watched */
    int started, nonfinite;
    unsigned calls;
} fit_t;

/* ------------------------------------------------------------------ fits */

/* The progress callback: watches the objective of every iteration. */
static int watch(const mvnmf_progress *p, void *user)
{
    fit_t *w = user;
    double t = p->objective.total;
    if (p->phase != MVNMF_PHASE_ITERATIONS) return 0; /* the pipeline's set-up: no iterate */
    w->calls++;
    if (!isfinite(t)) return w->nonfinite = 1, 0;
    if (w->started) {
        double rise = (t - w->last) / (fabs(w->last) > 1e-300 ? fabs(w->last) : 1e-300);
        w->max_rise = rise > w->max_rise ? rise : w->max_rise;
    }
    w->last = t;
    w->started = 1;
    return 0;
}

/* The run's iterations, tolerance and seed, a random start, the weights of params[]. */
static void set_solver(mvnmf_mvsl_params *s, const options_t *o, const fit_t *f)
{
    s->max_iter = (unsigned)o->iters;
    s->tol = o->tol;
    s->seed = f->seed;
    s->init = MVNMF_INIT_RANDOM;
    s->alpha = pget(f->params, "alpha", s->alpha, 0);
    s->beta = pget(f->params, "beta", s->beta, 0);
    s->gamma = pget(f->params, "gamma", s->gamma, 0);
    s->vmax = pget(f->params, "vmax", s->vmax, 0);
}

/* ka, kp, sigma of a neighbour graph; ka is reduced to (smallest labeled class) - 1
 * where a class has too few labeled items. */
static void graph_params(ctx_t *c, const fit_t *f, mvnmf_graph_params *gp)
{
    size_t minc = SIZE_MAX, *cnt = xcalloc(c->data->n_classes, sizeof(size_t));
    gp->ka = (size_t)pget(f->params, "ka", (double)gp->ka, 1);
    gp->kp = (size_t)pget(f->params, "kp", (double)gp->kp, 1); /* GNMF: the preset's 0 */
    gp->sigma = pget(f->params, "sigma", gp->sigma, 0);
    gp->penalty = c->opt->penalty;
    for (size_t j = 0; j < c->data->n; j++)
        cnt[f->labels[j] == MVNMF_UNLABELED ? 0 : f->labels[j]] += f->labels[j] != MVNMF_UNLABELED;
    for (size_t cl = 0; cl < c->data->n_classes; cl++) minc = cnt[cl] > 0 && cnt[cl] < minc ? cnt[cl] : minc;
    free(cnt);
    if (minc < 2) die("a class has a single labeled item: no within-class neighbour graph (use a larger fraction)");
    if (c->main_fit) c->diag->ka_asked = gp->ka;
    gp->ka = gp->ka > minc - 1 ? minc - 1 : gp->ka;
    if (c->main_fit && gp->ka < c->diag->ka_min) c->diag->ka_min = gp->ka;
}

/* GNMF, MvSL-S/L/T, MCL in one call: fusion weights (c->eta), graph, factorization. */
static void fit_pipeline(ctx_t *c, const method_t *m, fit_t *f)
{
    const dataset_t *d = c->data;
    mvnmf_pipeline_params pp;
    mvnmf_pipeline_report r;
    size_t bytes;
    CALL(mvnmf_pipeline_params_preset, m->preset, &pp);
    set_solver(&pp.solver, c->opt, f);
    pp.learn_eta = (uint32_t)c->opt->learn_eta;
    pp.mkl.lambda = c->opt->mkl_lambda;
    pp.graph_build = c->opt->graph;
    if ((c->eta_set = neighbour_graph(m)) != 0) graph_params(c, f, &pp.graph);
    CALL(mvnmf_pipeline_fit_workspace, c->views, d->n_views, c->kernels, d->n_classes, c->opt->k, &pp, &bytes);
    CALL(mvnmf_pipeline_fit_report, c->views, d->n_views, c->kernels, f->labels, d->n_classes, c->opt->k, &pp,
         f->us, f->v, c->eta, grow(&c->work, bytes), bytes, watch, f, &r);
    f->report = r.fit;
    if (c->main_fit && c->eta_set) {
        c->diag->graphs++;
        c->diag->affinity_nnz += (double)r.affinity_nnz;
        c->diag->penalty_nnz += (double)r.penalty_nnz;
    }
}

/* DNMF-b, ConcatDNMF (no graph), DMCL (the SGE graph of the labeled items). */
static void fit_deep(ctx_t *c, const method_t *m, fit_t *f)
{
    mvnmf_deep_params dp;
    mvnmf_graph g;
    size_t bytes;
    memset(&g, 0, sizeof g);
    g.kind = f->labels ? MVNMF_GRAPH_SGE : MVNMF_GRAPH_NONE;
    g.n = c->data->n;
    g.labels = f->labels;
    g.n_classes = f->labels ? c->data->n_classes : 0;
    CALL(mvnmf_deep_params_preset, m->preset, &dp);
    set_solver(&dp.top, c->opt, f);
    dp.box_lower = (uint32_t)pget(f->params, "box", dp.box_lower, 1);
    dp.v_init = (uint32_t)pget(f->params, "vinit", dp.v_init, 1);
    dp.pretrain_iter = (uint32_t)pget(f->params, "pretrain", dp.pretrain_iter, 1);
    CALL(mvnmf_deep_fit_workspace, f->views, f->nv, &g, f->layers, f->nl, &dp, &bytes);
    CALL(mvnmf_deep_fit, f->views, f->nv, &g, f->layers, f->nl, &dp, f->us, f->v, grow(&c->work, bytes), bytes,
         watch, f, &f->report);
}

/* NMF-b (one view) and ConcatNMF (joint NMF of all views). */
static void fit_nmf(ctx_t *c, const method_t *m, fit_t *f)
{
    mvnmf_nmf_params np = mvnmf_nmf_params_default();
    size_t bytes, k = c->opt->k;
    np.max_iter = (unsigned)c->opt->iters;
    np.tol = c->opt->tol;
    np.seed = f->seed;
    if (m->model == MODEL_NMF) {
        CALL(mvnmf_nmf_fit_workspace, f->views, k, &np, &bytes);
        CALL(mvnmf_nmf_fit, f->views, k, &np, f->us[0], f->v, grow(&c->work, bytes), bytes, watch, f, &f->report);
    } else {
        CALL(mvnmf_joint_nmf_fit_workspace, f->views, f->nv, k, &np, &bytes);
        CALL(mvnmf_joint_nmf_fit, f->views, f->nv, k, &np, f->us, f->v, grow(&c->work, bytes), bytes, watch, f,
             &f->report);
    }
}

/* The checks of a fit: objective never rising, finite values, dead views, and the
 * all-zero columns of the (top-layer) bases: U_M (p_{M-1} x K) closes a deep factor
 * buffer, hidden sizes clamped to the layer below. */
static void record_fit(ctx_t *c, const method_t *m, const fit_t *f)
{
    diag_t *dg = c->diag;
    size_t k = c->opt->k;
    int bad = f->nonfinite || !isfinite(f->report.objective.total);
    for (size_t i = 0; i < k * c->data->n && !bad; i++) bad = !isfinite(f->v[i]);
    dg->fits++;
    dg->rising += f->max_rise > RISE_TOL;
    dg->max_rise = f->max_rise > dg->max_rise ? f->max_rise : dg->max_rise;
    dg->nonfinite += bad;
    dg->dead += f->report.dead_views > 0;
    dg->unwatched += f->calls != f->report.iterations + 1; /* the start and every iteration */
    for (size_t i = 0; i < f->nv && m->model >= MODEL_PIPELINE; i++, dg->cols += (double)k) {
        size_t below = f->views[i].rows, z;
        for (size_t l = 0; l + 1 < f->nl; l++) below = f->layers[l] < below ? f->layers[l] : below;
        for (size_t j = 0; j < k; j++) {
            const double *u = f->us[i] + f->lens[i] - below * k + j * below;
            for (z = 0; z < below && u[z] == 0;) z++;
            dg->zero_cols += z == below;
        }
    }
}

/* Fits method m (candidate `cand`: the view of ON_VIEW methods) with weights params[]
 * and writes the K x N encoding v. `labels` holds the class of each labeled item,
 * MVNMF_UNLABELED for the others (NULL for unsupervised methods). */
static void fit(ctx_t *c, const method_t *m, const uint32_t *labels, size_t cand, const param_t *params,
                uint64_t seed, double *v)
{
    fit_t f;
    memset(&f, 0, sizeof f);
    f.views = m->on == ON_ALL ? c->views : m->on == ON_VIEW ? &c->views[cand] : &c->concat;
    f.nv = m->on == ON_ALL ? c->data->n_views : 1;
    f.nl = m->model == MODEL_DEEP ? parse_layers(c->layers, c->opt->k, f.layers) : 1;
    size_t depth = m->model == MODEL_DEEP ? (size_t)pget(params, "depth", 0, 1) : 0;
    if (depth > f.nl) die("%s: depth %zu, but its layers (%s, K on top) are only %zu", m->key, depth, c->layers, f.nl);
    if (depth) f.layers[depth - 1] = c->opt->k, f.nl = depth; /* the first depth - 1 hidden sizes, K */
    f.v = v, f.labels = labels, f.params = params, f.seed = seed;
    for (size_t i = 0; i < f.nv; i++) {
        f.lens[i] = f.views[i].rows * c->opt->k;
        if (m->model == MODEL_DEEP) CALL(mvnmf_deep_factor_len, f.views[i].rows, f.layers, f.nl, &f.lens[i]);
        f.us[i] = xcalloc(f.lens[i], sizeof(double));
    }
    (m->model == MODEL_PIPELINE ? fit_pipeline : m->model == MODEL_DEEP ? fit_deep : fit_nmf)(c, m, &f);
    record_fit(c, m, &f);
    for (size_t i = 0; i < f.nv; i++) free(f.us[i]);
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
    for (size_t i = 0; i < t->nt; i++) trial[t->tuned[i]].value = f->params[i];
    fit(t->c, t->m, f->labels, 0, trial, t->seed, v);
    return 0;
}

/* --budget: `use` of the `total` grid points, drawn without replacement by a seeded
 * Fisher-Yates shuffle (splitmix64 from the split's seed: every method of a split draws
 * from the same stream), kept in grid order (so ties still go to the first). */
static void draw_points(size_t total, size_t use, uint64_t seed, size_t *pick)
{
    size_t *all = xcalloc(total, sizeof(size_t));
    uint64_t x = seed ^ 0x5eed7a11u;
    for (size_t i = 0; i < total; i++) all[i] = i;
    for (size_t i = 0; i < use; i++) {
        uint64_t z = (x += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        size_t r = i + (size_t)((z ^ (z >> 31)) % (total - i)), tmp = all[i];
        all[i] = all[r], all[r] = tmp;
    }
    for (size_t i = 0; i < use; i++) { /* insertion sort of the drawn points */
        size_t v = all[i], q = i;
        for (; q > 0 && pick[q - 1] > v; q--) pick[q] = pick[q - 1];
        pick[q] = v;
    }
    free(all);
}

/* Chooses params[] by cross-validation inside the labeled items of `labels` over the
 * product of the weights' grids (mvnmf_cross_validate: stratified folds, kNN accuracy
 * of the held-out fold, ties to the first grid point); with --budget N, over N points of
 * it drawn at random, so methods with more weights get no more fits. `fixed_depth`: a
 * --depth job, whose depth is not tuned. */
static void tune(ctx_t *c, const method_t *m, const uint32_t *labels, uint64_t seed, param_t *params, int fixed_depth)
{
    const options_t *o = c->opt;
    tune_t t = { c, m, params, { 0 }, 0, seed };
    size_t total = 1, points, bytes, best;
    for (size_t p = 0; p < n_params(m); p++)
        if (params[p].grid && !(fixed_depth && !strcmp(params[p].name, "depth"))) t.tuned[t.nt++] = p, total *= 3;
    points = o->budget && o->budget < total ? o->budget : total;
    size_t *pick = xcalloc(points, sizeof(size_t));
    if (points < total)
        draw_points(total, points, seed, pick);
    else
        for (size_t pt = 0; pt < points; pt++) pick[pt] = pt;
    double *grid = xcalloc(points * t.nt, sizeof(double)), *score = xcalloc(points, sizeof(double)), t0 = now();
    for (size_t pt = 0; pt < points; pt++)
        for (size_t i = 0, rest = pick[pt]; i < t.nt; i++, rest /= 3)
            grid[pt * t.nt + i] = params[t.tuned[i]].grid[rest % 3];
    mvnmf_cv_params cp = mvnmf_cv_params_default();
    cp.folds = o->folds, cp.seed = seed, cp.knn.k = o->knn_k;
    CALL(mvnmf_cross_validate_workspace, o->k, c->data->n, c->data->n_classes, points, &cp, &bytes);
    CALL(mvnmf_cross_validate, labels, c->data->n, c->data->n_classes, o->k, grid, points, t.nt, &cp, score, &best,
         grow(&c->cv_work, bytes), bytes, cv_fit, &t);
    for (size_t pt = 0; pt < points; pt++) {
        fprintf(stderr, "  tune %s:", m->name);
        for (size_t i = 0; i < t.nt; i++) fprintf(stderr, " %s=%g", params[t.tuned[i]].name, grid[pt * t.nt + i]);
        fprintf(stderr, " -> CV kNN accuracy %.2f%%\n", 100 * score[pt]);
    }
    for (size_t i = 0; i < t.nt; i++) params[t.tuned[i]].value = grid[best * t.nt + i];
    fprintf(stderr, "%s tuned in %.2f s (%zu of %zu grid points)\n", m->name, now() - t0, points, total);
    free(grid), free(score), free(pick);
}

/* The protocol's fit: the encoding of all items from the labeled items' classes. */
static int fit_cb(const mvnmf_protocol_fit *r, double *v, void *user)
{
    job_t *j = user;
    ctx_t *c = j->c;
    const method_t *m = j->m;
    size_t cell = r->fraction_index * c->opt->splits + r->split, h = c->data->n_views;
    param_t params[MAX_PARAMS];
    if (!m->uses_labels && r->fraction_index > 0)
        return 0; /* unsupervised: this split's encoding stands for every fraction */
    memcpy(params, m->params, sizeof params);
    for (size_t p = 0; p < n_params(m) && j->depth; p++)
        if (!strcmp(params[p].name, "depth")) params[p].value = 0; /* --depth: the job's layers */
    if (m->uses_labels && c->opt->tune && (m->params[0].grid || m->params[1].grid))
        tune(c, m, r->labels, r->seed, params, j->depth != 0);
    for (size_t p = 0; p < n_params(m); p++) j->chosen[cell * MAX_PARAMS + p] = params[p].value;
    double t0 = now();
    c->main_fit = 1, c->eta_set = 0;
    fit(c, m, m->uses_labels ? r->labels : NULL, j->cand, params, r->seed, v);
    c->main_fit = 0;
    j->fit_time += now() - t0;
    fprintf(stderr, "split %zu/%zu, %g%%: %s%s%s fitted in %.2f s\n", r->split + 1, c->opt->splits,
            100 * r->fraction, m->name, m->on == ON_VIEW ? " on " : "",
            m->on == ON_VIEW ? c->data->views[j->cand].name : "", now() - t0);
    if (c->eta_set && !c->eta_ok[cell]) {
        memcpy(c->etas + cell * h, c->eta, h * sizeof(double));
        c->eta_ok[cell] = 1;
    }
    return 0;
}

/* "-b" methods: the view with the best mean kNN accuracy over all fractions and splits. */
static void pick_best(job_t *j, size_t nc, size_t cells)
{
    const dataset_t *d = j->c->data;
    double top = -1;
    printf("%s: mean kNN accuracy of each view over all fractions and splits:", j->m->name);
    for (size_t cand = 0; cand < nc; cand++) {
        double mean = 0;
        for (size_t t = 0; t < cells; t++) mean += j->scores[cand * cells + t].knn_accuracy;
        mean /= (double)cells;
        printf(" %s %.2f%%%s", d->views[cand].name, 100 * mean, cand + 1 < nc ? "," : "");
        if (mean > top) {
            top = mean;
            j->best = cand;
        }
    }
    printf(".\n  -> %s = %s on view %s (chosen by mean kNN accuracy on the test items, as the papers' "
           "best-single-view baseline; its k-means rows use the same view).\n",
           j->m->name, j->m->layers ? "DNMF" : "NMF", d->views[j->best].name);
}

/* Every candidate of a job through mvnmf_evaluate_protocol, and their mean ± std. */
static void run_job(job_t *j)
{
    ctx_t *c = j->c;
    const options_t *o = c->opt;
    const dataset_t *d = c->data;
    size_t nf = o->n_fractions, cells = nf * o->splits, nc = j->m->on == ON_VIEW ? d->n_views : 1, bytes;
    mvnmf_protocol_params pp = mvnmf_protocol_params_default();
    pp.splits = o->splits, pp.seed = o->seed, pp.eval.knn.k = o->knn_k, pp.eval.nmi = o->nmi;
    pp.eval.kmeans.restarts = (uint32_t)o->restarts;
    j->scores = xcalloc(nc * cells, sizeof *j->scores);
    j->sums = xcalloc(nc * nf, sizeof *j->sums);
    j->chosen = xcalloc(cells * MAX_PARAMS, sizeof(double));
    c->diag = &c->diags[j->mi];
    c->layers = j->m->layers ? j->hidden : NULL;
    CALL(mvnmf_evaluate_protocol_workspace, o->k, d->n, d->n_classes, nf, &pp, &bytes);
    void *w = xcalloc(1, bytes);
    for (j->cand = 0; j->cand < nc; j->cand++) {
        CALL(mvnmf_evaluate_protocol, d->labels, d->n, d->n_classes, o->fractions, nf, o->k, &pp,
             j->scores + j->cand * cells, w, bytes, fit_cb, j);
        CALL(mvnmf_summarize_scores, j->scores + j->cand * cells, nf, o->splits, j->sums + j->cand * nf);
    }
    free(w);
    if (nc > 1) pick_best(j, nc, cells);
}

/* ------------------------------------------------------------------ parse */

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
                  GRAPHS[] = { MVNMF_GRAPH_BUILD_EXACT, MVNMF_GRAPH_BUILD_APPROX, MVNMF_GRAPH_BUILD_AUTO },
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
    { "--budget", "--tune fits at most N grid points per method, drawn at random (default: the whole grid)",
      T_SIZE, AT(budget), 0, 0 },
    { "--depth", "DMCL accuracy against depth 1, 2, 3 (at 50% labeled unless --fractions)", T_ON, AT(depth), 0, 0 },
    { "--kernel", "base kernel of the views for MKL and the neighbour graphs: rbf (default) or linear",
      T_ENUM, AT(kernel), "rbf linear", KERNELS },
    { "--mkl-lambda", "MKL ridge relative to mean(diag G) (default 0.1)", T_DOUBLE, AT(mkl_lambda), 0, 0 },
    { "--sparse-below", "pass a view as CSC when its nonzero fraction is below this (default 0.3; 0: all "
      "dense, 1: every view with a zero)", T_DOUBLE, AT(sparse_below), 0, 0 },
    { "--uniform-eta", "uniform fusion weights instead of kernel-target alignment", T_OFF, AT(learn_eta), 0, 0 },
    { "--penalty", "LDGE/TGE penalty: class-pairs (seed 003, default) or item-neighbors", T_ENUM, AT(penalty),
      "class-pairs item-neighbors", PENALTIES },
    { "--graph", "MvSL-T's neighbour search over all items: exact, approx (NN-descent) or auto (default: "
      "exact below 4096 items)", T_ENUM, AT(graph), "exact approx auto", GRAPHS },
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
        snprintf(o->fraction_text[o->n_fractions], sizeof o->fraction_text[0], "%g%%", 100 * (p / 100.0));
        o->fraction_cols[o->n_fractions] = o->fraction_text[o->n_fractions];
    }
    if (o->n_fractions == 0) die("--fractions: empty list");
}

/* --param METHOD.NAME=VALUE (layers=100,50 for a deep method). */
static void set_param(const char *spec)
{
    const char *dot = strchr(spec, '.'), *eq = strchr(spec, '=');
    if (!dot || !eq || eq < dot) die("--param: expected METHOD.NAME=VALUE, got '%s'", spec);
    int kl = (int)(dot - spec), nl = (int)(eq - dot - 1);
    for (size_t i = 0; i < N_METHODS; i++) {
        method_t *m = &METHODS[i];
        if ((int)strlen(m->key) != kl || strncmp(m->key, spec, (size_t)kl)) continue;
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
        if (!*names) die("%s: one of %s, not '%s'", a, p->names, v);
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
    if (methods) return;
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
    char tok[64];
    if (o->k == 0 || o->splits == 0 || o->knn_k == 0 || o->restarts == 0)
        die("--k, --splits, --knn-k and --kmeans-restarts must be at least 1");
    if (o->folds < 2) die("--folds must be at least 2");
    for (size_t m = 0; m < N_METHODS && o->layers; m++) {
        size_t tmp[16];
        parse_layers(o->layers, 1, tmp); /* validates */
        METHODS[m].layers = METHODS[m].layers ? o->layers : NULL;
    }
    if (o->depth && !o->methods) o->methods = "dmcl";
    if (o->depth && !o->fractions_given) parse_fractions(o, "50");
    for (const char *p = o->methods; p && next_token(&p, tok, sizeof tok);) {
        size_t m = 0;
        while (m < N_METHODS && strcmp(METHODS[m].key, tok)) m++;
        if (m == N_METHODS) die("--methods: no method '%s' (--list-methods)", tok);
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
    o->penalty = MVNMF_PENALTY_CLASS_PAIRS, o->graph = MVNMF_GRAPH_BUILD_AUTO, o->mkl_lambda = mvnmf_mkl_params_default().lambda;
    o->labels = "labels.txt", o->sparse_below = 0.3;
    parse_fractions(o, "10,20,30,40,50");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        size_t j = 0;
        while (j < N_OPTS && strcmp(a, OPTS[j].flag)) j++;
        if (!strcmp(a, "--list-methods") || !strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(!strcmp(a, "--list-methods"));
            exit(0);
        } else if (j == N_OPTS) {
            if (a[0] == '-') die("unknown option %s (--help)", a);
            if (dir) die("one dataset directory, not '%s' and '%s'", dir, a);
            dir = a;
            continue;
        }
        if (OPTS[j].type != T_ON && OPTS[j].type != T_OFF && i + 1 >= argc) die("%s needs a value", a);
        set_option(o, &OPTS[j], OPTS[j].type == T_ON || OPTS[j].type == T_OFF ? NULL : argv[++i]);
    }
    if (!dir) {
        fprintf(stderr, "usage: reproduce [options] DATASET_DIR (--help)\n");
        exit(2);
    }
    check_options(o);
    return dir;
}

/* ------------------------------------------------------------------- main */

/* The selected methods in METHODS[] order; with --depth, each at depth 1, 2 and 3 (the
 * first 0, 1, 2 hidden sizes, K on top). Returns their number. */
static size_t make_jobs(ctx_t *c, job_t *jobs)
{
    const options_t *o = c->opt;
    size_t n = 0, n_sel = 0;
    for (size_t m = 0; m < N_METHODS; m++) {
        if (o->methods && !listed(o->methods, METHODS[m].key)) continue;
        c->diags[n_sel].ka_min = SIZE_MAX;
        for (size_t depth = o->depth ? 1 : 0; depth <= (o->depth ? 3 : 0); depth++, n++) {
            job_t *j = &jobs[n];
            j->c = c, j->m = &METHODS[m], j->mi = n_sel, j->depth = depth;
            if (depth)
                layers_text(METHODS[m].layers, 1, depth - 1, ",", j->hidden, sizeof j->hidden);
            else if (METHODS[m].layers) snprintf(j->hidden, sizeof j->hidden, "%s", METHODS[m].layers);
        }
        n_sel++;
    }
    return n;
}

/* The C views over the dataset, their kernels, the stacked features of ConcatDNMF. */
static void setup(ctx_t *c, const dataset_t *d, const options_t *o)
{
    size_t rows = 0, cells = o->n_fractions * o->splits;
    c->data = d, c->opt = o;
    c->etas = xcalloc(cells * d->n_views, sizeof(double));
    c->eta_ok = xcalloc(cells, 1);
    for (size_t i = 0; i < d->n_views; rows += d->views[i++].rows) {
        double fraction;
        mvnmf_view csc = dense_to_csc(d->views[i].x, d->views[i].rows, d->n, d->views[i].rows, &fraction);
        mvnmf_view dense = { MVNMF_VIEW_DENSE, d->views[i].rows, d->n, d->views[i].x, d->views[i].rows, NULL, NULL };
        c->views[i] = fraction < o->sparse_below ? csc : dense; /* O(nnz K) products for sparse views */
        c->kernels[i].kind = o->kernel;
    }
    if (o->methods && !listed(o->methods, "concat-dnmf")) return;
    double *x = xcalloc(rows * d->n, sizeof(double));
    for (size_t j = 0; j < d->n; j++)
        for (size_t i = 0, r0 = 0; i < d->n_views; r0 += d->views[i++].rows)
            memcpy(x + j * rows + r0, d->views[i].x + j * d->views[i].rows, d->views[i].rows * sizeof(double));
    c->concat = c->views[0];
    c->concat.rows = c->concat.col_stride = rows;
    c->concat.values = x;
}

int main(int argc, char **argv)
{
    static dataset_t d;
    static ctx_t c;
    static job_t jobs[3 * N_METHODS];
    static options_t o;
    const char *dir = parse(argc, argv, &o);
    double t_start = now();
    load(&d, dir, o.labels, o.views);
    preprocess(&d, o.shift, o.normalize);
    setup(&c, &d, &o);
    size_t n_jobs = make_jobs(&c, jobs);
    print_header(&c, dir);
    if (o.graph != MVNMF_GRAPH_BUILD_AUTO || d.n >= MVNMF_GRAPH_AUTO_EXACT_BELOW)
        printf("MvSL-T's neighbour lists over all items: %s.\n",
               o.graph == MVNMF_GRAPH_BUILD_EXACT ? "exact (--graph exact)"
                                                  : "approximate, NN-descent with its default options (--graph)");
    print_methods(&c, jobs, n_jobs);
    printf("%s", o.depth ? "" : "\n");
    for (size_t i = 0; i < n_jobs; i++) run_job(&jobs[i]);
    print_results(&c, jobs, n_jobs);
    printf("%sWall time %.2f s.\n", o.depth ? "\n" : ". ", now() - t_start);
    return 0; /* the memory goes with the process */
}
