/* reproduce_tables.c: what reproduce prints: the header (dataset, preprocessing, protocol),
 * the methods, the tables of the three metrics (or of --depth), the fusion weights, --tune's
 * choices and the checks of every fit. */
#define _POSIX_C_SOURCE 200809L
#define EXAMPLE_NAME "reproduce"
#include "reproduce.h"

static const char *const METRICS[3] = { "kNN accuracy (%)", "k-means ACC (%)", "k-means NMI (%)" };

/* A Markdown table: its title (if any) and head, "| first | cols... |" and the rule. */
static void table_head(const char *title, const char *first, const char *const *cols, size_t n)
{
    printf("%s\n| %s |", title, first);
    for (size_t i = 0; i < n; i++) printf(" %s |", cols[i]);
    printf("\n|---|");
    for (size_t i = 0; i < n; i++) printf("---|");
    printf("\n");
}

/* " mean ± std |" of metric t (0 kNN, 1 k-means ACC, 2 NMI), in %. */
static void print_cell(const mvnmf_score_summary *s, int t)
{
    printf(" %.2f ± %.2f |", 100 * (t == 0 ? s->knn_mean : t == 1 ? s->kmeans_accuracy_mean : s->kmeans_nmi_mean),
           100 * (t == 0 ? s->knn_std : t == 1 ? s->kmeans_accuracy_std : s->kmeans_nmi_std));
}

static const char *nmi_name(uint32_t n)
{
    return n == MVNMF_NMI_MAX          ? "max(H(C), H(C'))  [seed 003 eq. 43]"
           : n == MVNMF_NMI_ARITHMETIC ? "(H(C) + H(C'))/2  [scikit-learn's default]"
           : n == MVNMF_NMI_GEOMETRIC  ? "sqrt(H(C) H(C'))"
                                       : "min(H(C), H(C'))";
}

/* The dataset, its preprocessing, the models and the protocol. */
void print_header(const ctx_t *c, const char *dir)
{
    static const char *const COLS[] = { "name", "features", "min", "preprocessing" };
    const dataset_t *d = c->data;
    const options_t *o = c->opt;
    printf("# mvnmf reproduce: %s\n\nmvnmf %s. Dataset: %zu items, %zu classes (%s), %zu views:\n", dir,
           mvnmf_version(), d->n, d->present, o->labels, d->n_views);
    table_head("", "view", COLS, 4);
    for (const view_t *v = d->views; v < d->views + d->n_views; v++) {
        printf("| %s | %s | %zu | %.4g | ", v->file, v->name, v->rows, v->prep.min);
        const mvnmf_view *cv = &c->views[v - d->views];
        if (v->prep.shifted) printf("shifted %zu features by their minimum (--shift); ", v->prep.shifted);
        o->normalize ? printf("scaled by %.4g", v->prep.scale) : printf("not scaled");
        if (cv->kind == MVNMF_VIEW_CSC)
            printf("; CSC, %.1f%% nonzero (--sparse-below %g)", 100.0 * (double)cv->col_ptr[cv->cols] /
                   ((double)cv->rows * (double)cv->cols), o->sparse_below);
        printf(" |\n");
    }
    printf("\nPreprocessing: per-view normalisation to ||X_v||_F^2 = N is %s.\n",
           o->normalize ? "ON (--no-normalize to disable)" : "OFF (--no-normalize)");
    printf("Models: K = %zu, %zu iterations (tol %g), init seed = split seed.\n", o->k, o->iters, o->tol);
    printf("Protocol: %zu splits (seeds %zu..%zu), per-class stratified labeled fractions", o->splits, o->seed,
           o->seed + o->splits - 1);
    for (size_t f = 0; f < o->n_fractions; f++) printf(" %s", o->fraction_text[f]);
    printf("; test items = the unlabeled items.\nEvaluation: kNN (k = %zu, Euclidean) from the labeled to the "
           "test items; k-means (k-means++, %zu restarts, k = %zu) on the test items' encodings, ACC under the "
           "best one-to-one map (Kuhn-Munkres), NMI = I(C;C') / %s.\n",
           o->knn_k, o->restarts, d->present, nmi_name(o->nmi));
}

/* What the neighbour graphs, the deep methods and --tune do. */
static void print_notes(const options_t *o, int graphs, int deep, int tunable)
{
    if (graphs)
        printf("Neighbour graphs: base kernel %s per view, normalised; fused with %s.\n",
               o->kernel == MVNMF_KERNEL_RBF ? "RBF (gamma = 1/median d^2 over the labeled pairs)" : "linear (cosine)",
               o->learn_eta ? "weights eta learned by kernel-target alignment on the labeled items"
                            : "uniform weights (--uniform-eta)");
    if (graphs && o->learn_eta)
        printf("  MKL ridge lambda = %g x mean(diag G). LDGE/TGE penalty: %s.\n", o->mkl_lambda,
               o->penalty == MVNMF_PENALTY_CLASS_PAIRS
                   ? "the kp nearest pairs between each class and the others (seed 003)"
                   : "each item's kp nearest other-class items (seed 000)");
    if (deep) {
        mvnmf_deep_params dp;
        CALL(mvnmf_deep_params_preset, MVNMF_DEEP_PRESET_DMCL, &dp);
        printf("Deep methods: layer-wise pre-training (%u NMF iterations per layer), then the iterations above "
               "as fine-tuning; V starts %s; lower layers %s; hidden sizes are clamped per view to the layer "
               "below (a view of 6 features keeps 6).\n", dp.pretrain_iter,
               dp.v_init == MVNMF_DEEP_V_RANDOM ? "at random after pre-training (the paper's Algorithm 1)"
                                                : "from the pre-trained encodings",
               dp.box_lower ? "in the box [0, 1]" : "unconstrained");
    }
    if (o->tune && !tunable)
        printf("--tune: none of the selected methods has weights; nothing to tune.\n");
    else if (o->tune)
        printf("--tune: per split and fraction, %zu-fold cross-validation within the labeled items over alpha "
               "in the papers' value x {1/100, 1/10, 1}, beta in {0.002, 0.02, 0.2}, for MCL and DMCL gamma in "
               "{0.0005, 0.005, 0.05} and for DMCL the depth in {1, 2, 3} (unless --depth fixes it) (kNN "
               "accuracy of the held-out labeled items; the test items' labels are never read)%s.\n", o->folds,
               o->budget ? "; each method fits at most --budget grid points, drawn at random per split" : "");
}

/* Every selected method with its weights. */
void print_methods(const ctx_t *c, const job_t *jobs, size_t n_jobs)
{
    const options_t *o = c->opt;
    int graphs = 0, deep = 0, tunable = 0;
    char lt[256];
    printf("Methods:");
    for (size_t i = 0; i < n_jobs; i++)
        if (jobs[i].depth <= 1) printf("%s %s", i ? "," : "", jobs[i].m->name);
    printf(". Unsupervised methods are fitted once per split and evaluated at every fraction; "
           "semi-supervised ones once per split and fraction (their graph uses that split's labeled items).\n");
    for (const job_t *j = jobs; j < jobs + n_jobs; j += o->depth ? 3 : 1) {
        printf("  %s: %s.", j->m->name, j->m->about);
        for (size_t p = 0; p < n_params(j->m); p++) printf(" %s = %g", j->m->params[p].name, j->m->params[p].value);
        if (j->m->layers) {
            layers_text(j->m->layers, o->k, SIZE_MAX, "-", lt, sizeof lt);
            printf(" layers = %s", o->depth ? "see the depth table" : lt);
        }
        printf("\n");
        graphs |= neighbour_graph(j->m), deep |= j->m->layers != NULL;
        tunable |= j->m->params[0].grid || j->m->params[1].grid;
    }
    print_notes(o, graphs, deep, tunable);
    fflush(stdout);
}

/* The kNN, k-means ACC and NMI tables: a row per method (per view with --per-view). */
static void print_tables(const ctx_t *c, const job_t *jobs, size_t n_jobs)
{
    const options_t *o = c->opt;
    size_t nf = o->n_fractions, k_used = o->knn_k;
    for (int t = 0; t < 3; t++) {
        printf("\n### %s, mean ± std over %zu splits%s%s\n", METRICS[t], o->splits, t == 2 ? ", NMI normalised by " : "",
               t == 2 ? nmi_name(o->nmi) : "");
        table_head("", "method", o->fraction_cols, nf);
        for (const job_t *j = jobs; j < jobs + n_jobs; j++)
            for (size_t cand = 0; cand < (j->m->on == ON_VIEW ? c->data->n_views : 1); cand++) {
                const mvnmf_score_summary *s = j->sums + cand * nf;
                if (cand != j->best && !o->per_candidate) continue;
                if (j->m->on == ON_VIEW)
                    printf("| %s (%s) |", cand == j->best ? j->m->name : j->m->layers ? "DNMF" : "NMF",
                           c->data->views[cand].name);
                else
                    printf("| %s |", j->m->name);
                for (size_t f = 0; f < nf; f++) {
                    print_cell(&s[f], t);
                    k_used = s[f].knn_k_min < k_used ? s[f].knn_k_min : k_used;
                }
                printf("\n");
            }
    }
    if (k_used < o->knn_k)
        printf("\nNote: where fewer than %zu items were labeled, kNN used k = the smallest number of labeled "
               "items in a class (down to %zu).\n", o->knn_k, k_used);
}

/* --depth: a table per fraction, a row per method and depth with the three metrics. */
static void print_depth(const ctx_t *c, const job_t *jobs, size_t n_jobs)
{
    static const char *const COLS[] = { "depth", "layers", "kNN accuracy (%)", "k-means ACC (%)",
                                        "k-means NMI (%)", "fit time" };
    const options_t *o = c->opt;
    char lt[256];
    for (size_t f = 0; f < o->n_fractions; f++) {
        printf("\n### Accuracy against depth, %s labeled, mean ± std over %zu splits\n", o->fraction_text[f],
               o->splits);
        table_head("", "method", COLS, 6);
        for (const job_t *j = jobs; j < jobs + n_jobs; j++) {
            layers_text(j->hidden, o->k, SIZE_MAX, "-", lt, sizeof lt);
            printf("| %s | %zu | %s |", j->m->name, j->depth, lt);
            for (int t = 0; t < 3; t++) print_cell(&j->sums[f], t);
            printf(" %.1f s |\n", j->fit_time);
        }
    }
}

/* The fusion weights of the first neighbour graph of each split and fraction. */
static void print_eta(const ctx_t *c)
{
    const options_t *o = c->opt;
    size_t ns = o->splits, h = c->data->n_views, any = 0;
    const char *names[MAX_VIEWS];
    double *col, mean, std;
    for (size_t t = 0; t < o->n_fractions * ns; t++) any |= c->eta_ok[t];
    if (!any) return;
    for (size_t i = 0; i < h; i++) names[i] = c->data->views[i].name;
    col = xcalloc(ns, sizeof(double));
    printf("\n### Fusion weights eta of the neighbour graphs (%s), mean ± std over the splits\n",
           o->learn_eta ? "kernel-target alignment on each split's labeled items" : "uniform");
    table_head("", "labeled", names, h);
    for (size_t f = 0; f < o->n_fractions; f++) {
        printf("| %s |", o->fraction_text[f]);
        for (size_t i = 0, cnt = 0; i < h; i++, cnt = 0) {
            for (size_t s = 0; s < ns; s++)
                if (c->eta_ok[f * ns + s]) col[cnt++] = c->etas[(f * ns + s) * h + i];
            mean = std = NAN;
            if (cnt) CALL(mvnmf_mean_std, col, cnt, &mean, &std);
            printf(" %.3f ± %.3f |", mean, std);
        }
        printf("\n");
    }
    free(col);
}

/* The weights --tune chose, per fraction (splits separated by ';'). */
static void print_tuned(const ctx_t *c, const job_t *jobs, size_t n_jobs)
{
    static const char *const COLS[] = { "chosen" };
    char title[128];
    size_t ns = c->opt->splits;
    for (const job_t *j = jobs; j < jobs + n_jobs; j++) {
        if (!j->m->uses_labels || !(j->m->params[0].grid || j->m->params[1].grid)) continue;
        if (j->depth)
            snprintf(title, sizeof title, "\n%s at depth %zu, weights chosen by --tune (split 1..%zu):\n",
                     j->m->name, j->depth, ns);
        else
            snprintf(title, sizeof title, "\n%s, weights chosen by --tune (split 1..%zu):\n", j->m->name, ns);
        table_head(title, "labeled", COLS, 1);
        for (size_t f = 0; f < c->opt->n_fractions; f++) {
            printf("| %s |", c->opt->fraction_text[f]);
            for (size_t s = 0; s < ns; s++) {
                printf("%s", s ? ";" : "");
                for (size_t p = 0; p < n_params(j->m); p++)
                    if (j->m->params[p].grid && !(j->depth && !strcmp(j->m->params[p].name, "depth")))
                        printf(" %s=%g", j->m->params[p].name, j->chosen[(f * ns + s) * MAX_PARAMS + p]);
            }
            printf(" |\n");
        }
    }
}

/* The checks of every selected method's fits; the graphs' sizes. */
static void print_checks(const ctx_t *c, const job_t *jobs, size_t n_jobs)
{
    static const char *const COLS[] = { "fits", "objective rose", "largest relative rise", "non-finite",
                                        "dead views", "zero columns of U" };
    const diag_t *g;
    printf("\nChecks on every fit (tuning fits included): the objective watched at every iteration (a rise is a "
           "relative increase > %g), encodings finite, views whose basis died (mvnmf_report.dead_views).\n",
           RISE_TOL);
    table_head("", "method", COLS, 6);
    for (const job_t *j = jobs; j < jobs + n_jobs; j += c->opt->depth ? 3 : 1) {
        g = &c->diags[j->mi];
        printf("| %s | %u | %u | %.3g | %u | %u |", j->m->name, g->fits, g->rising, g->max_rise, g->nonfinite,
               g->dead);
        g->cols > 0 ? printf(" %.1f%% |\n", 100 * g->zero_cols / g->cols) : printf(" - |\n");
    }
    printf("\n(zero columns of U: all-zero columns of the views' bases, of the top layer for deep methods, over "
           "all fits: the group sparsity at work.)\n");
    for (const job_t *j = jobs; j < jobs + n_jobs; j += c->opt->depth ? 3 : 1)
        if ((g = &c->diags[j->mi])->unwatched)
            printf("WARNING: %s: in %u fits the progress callback was not called once per iteration and for "
                   "the start: the objective checks above are incomplete.\n", j->m->name, g->unwatched);
    for (const job_t *j = jobs; j < jobs + n_jobs; j += c->opt->depth ? 3 : 1)
        if ((g = &c->diags[j->mi])->graphs) {
            printf("%s graph: %.0f affinity and %.0f penalty entries (CSR, both triangles) on average over %u "
                   "graphs", j->m->name, g->affinity_nnz / g->graphs, g->penalty_nnz / g->graphs, g->graphs);
            if (g->ka_min < g->ka_asked)
                printf("; ka reduced to %zu (from %zu) where a class had too few labeled items", g->ka_min,
                       g->ka_asked);
            printf(".\n");
        }
}

/* The tables (or --depth's), the fusion weights, --tune's choices, the checks, the times. */
void print_results(const ctx_t *c, const job_t *jobs, size_t n_jobs)
{
    if (c->opt->depth) {
        print_depth(c, jobs, n_jobs);
        print_checks(c, jobs, n_jobs);
        return;
    }
    print_tables(c, jobs, n_jobs);
    print_eta(c);
    if (c->opt->tune) print_tuned(c, jobs, n_jobs);
    print_checks(c, jobs, n_jobs);
    printf("\nFit time (all splits%s):", c->opt->tune ? ", tuning excluded" : "");
    for (size_t i = 0; i < n_jobs; i++)
        printf(" %s %.2f s%s", jobs[i].m->name, jobs[i].fit_time, i + 1 < n_jobs ? "," : "");
}
