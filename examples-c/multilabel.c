/* multilabel: MVEL (seed 002) on any multi-label directory, through the C ABI.
 *
 *   multilabel [options] DIR
 *
 * DIR holds meta.txt, the views viewK.f64[.gz] (float64 little-endian,
 * column-major, rows = features, columns = items; any sign) and labels.f64
 * (labels x items, 0/1) — the format of ../shared/data/yeast.
 *
 * Protocol (the paper's): for each split and incomplete-label ratio ILR, every
 * item keeps a random ILR share of its positive labels (rounded, at least one
 * where it has any); each method learns on all items transductively from those
 * incomplete labels and is scored against the full ground truth on all items:
 * Macro-F1, Micro-F1, Hamming loss (decisions) and average AUROC (scores).
 *
 * Methods:
 *   mvel         the fused multi-view graph (within-view RBF graphs with the
 *                median bandwidth, cross-view graphs by CCA, uniform priors),
 *                then MVEL; decisions by per-label PU thresholds (--decide);
 *   mvel-concat  the paper's "ours-": the views concatenated (each scaled to
 *                unit mean squared norm) into one, no cross-view terms;
 *   mlknn        ML-kNN (Zhang & Zhou 2007; k = 10, smoothing 1) on the
 *                concatenated, per-view normalised features, trained on the
 *                given labels (self excluded from each item's neighbours);
 *   given        the incomplete labels themselves (scores = decisions);
 *   frequent     each item's given labels plus every label whose given
 *                frequency (given positives / items) is >= --freq-threshold
 *                (default 0.3);
 *   well         WELL (Sun, Zhang & Zhou 2010), simplified (run_well): per
 *                label, a low-density separation on the symmetrised 10-NN
 *                graph of the concatenated features, given positives clamped
 *                to 1, a penalty on the positives' mass chosen by Lee & Liu's
 *                criterion on held-out given positives;
 *   pu-wlr       PU_WLR (Lee & Liu 2003; run_pu_wlr): per label, unknowns as
 *                negatives, a class-balanced weighted logistic regression on
 *                the concatenated features, its L2 weight by the r^2/P(f=1)
 *                criterion on held-out given positives; given positives kept.
 *
 * Options: --ilr LIST (percent, default 20,40,60,80), --splits N (default 3),
 * --seed S (default 1), --methods LIST (default: all seven),
 * --dim R|labels (default 64, the paper's; labels: the number of labels), --theta1 X, --theta2 X, --iters N,
 * --unknown-weight MU|auto (an unknown label counts as a weak negative of weight
 * MU; default auto: MU = given positives / unknown entries, so both sides weigh
 * the same; 0 is the paper's objective, see src/models/mvel.rs), --decide pu|count|sign|given
 * (default pu: per label, the given flags calibrated against the scores by
 * isotonic regression, the label frequency c — the share of the label's
 * positives that is given — by default (--label-freq holdout) estimated from
 * a share --holdout H (default 0.3) of the given positives held out of a
 * first fit on the same graph (their out-of-sample scores against the unknown
 * items' scores: the mixture-proportion estimate of
 * mvnmf_mvel_label_freq_holdout, at least
 * --min-held M (default 10) held-out positives above any threshold it uses;
 * a second fit on all given labels is the one decided), or --label-freq C
 * (fixed), auto (Elkan-Noto's mean calibrated score of the given positives,
 * biased by the fit having seen them) or oracle (the true share; for
 * reference only, not available to a learner); an unlabeled item decided positive where its PU
 * posterior exceeds 1/2; every given positive kept: mvnmf_mvel_decide_pu;
 * count: per label the round(P (1 - c) / c) best-scoring unknown items, P its
 * given positives, c as for pu, every given positive kept: mvnmf_mvel_count_thresholds;
 * sign: label present where QH > 0, the paper's {-1, 1} coding; given:
 * per-label thresholds maximising F1 on the given labels, nothing kept),
 * --standardize on|off (default on: every feature of every view to mean 0,
 * variance 1, mvnmf_standardize_view; before any method),
 * --split-view D (split view 1 at feature D into two views, to run the
 * cross-view path on a one-view dataset), --anchors M (0: the dense fused graph;
 * M > 0: an anchor graph of M k-means anchors, H = A Z, seed 002 §2.3; default
 * dense up to 4000 items, 500 anchors above), --neighbors S (anchors per item,
 * default 5), --knn S (the kNN-sparsified fused graph, S neighbours per item,
 * symmetrised; O(n s) memory, O(n^2 d) time), --max-items N (dense graphs only: refuse larger problems; default
 * 6000).
 *
 * Output: the settings, one Markdown table per metric under a "###" heading
 * (rows = methods, columns = ILR, cells mean ± std over the splits; the AUROC
 * twice: on each method's scores, and with each label's given positives
 * ranked first), the label frequency c mvel used against the true one, the
 * wall time and the peak workspace. */
#define _POSIX_C_SOURCE 200809L /* popen, clock_gettime */
#define EXAMPLE_NAME "multilabel"
#include "example_io.h"

#define MAXV 8
#define MAXI 16
#define MAXS 32
#define NMETH 7
#define KNN 10
#define DENSE_UP_TO 4000 /* default: the dense graph up to this many items, anchors above */
#define ANCHORS 500      /* default anchors above DENSE_UP_TO */

static const char *const METHOD[NMETH] = { "mvel", "mvel-concat", "mlknn", "given", "frequent", "well", "pu-wlr" };
static const char *const METRIC[5] = { "Macro-F1", "Micro-F1", "Hamming loss", "average AUROC",
                                       "average AUROC, given positives ranked first" };

static size_t g_peak; /* the largest workspace asked for */

static void *work_of(size_t bytes)
{
    if (bytes > g_peak)
        g_peak = bytes;
    return xmalloc(bytes);
}

typedef struct {
    size_t nv, d[MAXV], n, c;
    double *x[MAXV]; /* d[v] x n */
    uint8_t *truth;  /* c x n */
} dataset;

static dataset load(const char *dir, size_t split_at)
{
    dataset ds;
    size_t v, i, j, rows, cols;
    char key[32];
    double *y;
    memset(&ds, 0, sizeof ds);
    for (v = 0; v < MAXV; v++) {
        snprintf(key, sizeof key, "view%zu.f64", v + 1);
        if (!meta_shape(dir, key, &rows, &cols))
            break;
        if (v > 0 && cols != ds.n)
            die("views with different item counts in meta.txt: %s", key);
        ds.n = cols;
        ds.d[v] = rows;
        ds.x[v] = read_f64(dir, key, rows, cols);
        ds.nv = v + 1;
        {   /* checked as every mvnmf call checks a view; a bad value is named by its place */
            mvnmf_view view = {MVNMF_VIEW_DENSE, rows, cols, ds.x[v], rows, NULL, NULL};
            mvnmf_report r;
            mvnmf_status st = mvnmf_check_views(&view, 1, 0, &r);
            if (st != MVNMF_STATUS_OK && r.where_row != SIZE_MAX)
                die("%s/%s: %s: feature %zu of item %zu", dir, key, mvnmf_status_message((uint32_t)st),
                    r.where_row, r.where_col);
            check(st, key);
        }
    }
    if (ds.nv == 0)
        die("meta.txt lists no view1.f64: %s", dir);
    if (!meta_shape(dir, "labels.f64", &ds.c, &cols) || cols != ds.n)
        die("meta.txt: no labels.f64 line with cols = the items: %s", dir);
    y = read_f64(dir, "labels.f64", ds.c, ds.n);
    ds.truth = (uint8_t *)xmalloc(ds.c * ds.n);
    for (i = 0; i < ds.c * ds.n; i++) {
        if (y[i] != 0.0 && y[i] != 1.0)
            die("labels.f64 holds a value other than 0 or 1");
        ds.truth[i] = (uint8_t)y[i];
    }
    free(y);
    if (split_at) { /* view 1 -> rows [0, split_at) and [split_at, d) */
        size_t d = ds.d[0], d2 = d - split_at;
        double *a, *b;
        if (split_at >= d || ds.nv + 1 > MAXV)
            die("--split-view must be below the first view's feature count");
        a = (double *)xmalloc(split_at * ds.n * sizeof(double));
        b = (double *)xmalloc(d2 * ds.n * sizeof(double));
        for (j = 0; j < ds.n; j++) {
            memcpy(a + j * split_at, ds.x[0] + j * d, split_at * sizeof(double));
            memcpy(b + j * d2, ds.x[0] + j * d + split_at, d2 * sizeof(double));
        }
        free(ds.x[0]);
        for (v = ds.nv; v > 1; v--) {
            ds.x[v] = ds.x[v - 1];
            ds.d[v] = ds.d[v - 1];
        }
        ds.x[0] = a;
        ds.d[0] = split_at;
        ds.x[1] = b;
        ds.d[1] = d2;
        ds.nv++;
    }
    return ds;
}

/* The views concatenated, each scaled to unit mean squared item norm. */
static double *concat(const dataset *ds, size_t *dtot)
{
    size_t v, i, j, off = 0, d = 0;
    double *z;
    for (v = 0; v < ds->nv; v++)
        d += ds->d[v];
    z = (double *)xmalloc(d * ds->n * sizeof(double));
    for (v = 0; v < ds->nv; v++) {
        double ss = 0.0, s;
        for (i = 0; i < ds->d[v] * ds->n; i++)
            ss += ds->x[v][i] * ds->x[v][i];
        s = ss > 0.0 ? 1.0 / sqrt(ss / (double)ds->n) : 1.0;
        for (j = 0; j < ds->n; j++)
            for (i = 0; i < ds->d[v]; i++)
                z[off + i + j * d] = s * ds->x[v][i + j * ds->d[v]];
        off += ds->d[v];
    }
    *dtot = d;
    return z;
}

/* ---- the incomplete labels --------------------------------------------- */

static uint64_t g_rng;
static double uniform(void)
{
    g_rng = g_rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(g_rng >> 11) * (1.0 / 9007199254740992.0);
}

/* Keeps round(ilr * P) (at least 1) of each item's P positives, chosen at random. */
static void thin(const dataset *ds, double ilr, uint64_t seed, uint8_t *given)
{
    size_t u, s, pos[256];
    g_rng = seed * 0x9E3779B97F4A7C15ULL + 7;
    memset(given, 0, ds->c * ds->n);
    for (u = 0; u < ds->n; u++) {
        size_t p = 0, keep, i;
        for (s = 0; s < ds->c && p < 256; s++)
            if (ds->truth[s + u * ds->c])
                pos[p++] = s;
        if (p == 0)
            continue;
        keep = (size_t)floor(ilr * (double)p + 0.5);
        if (keep < 1)
            keep = 1;
        for (i = 0; i < keep; i++) { /* a partial Fisher-Yates shuffle */
            size_t k = i + (size_t)(uniform() * (double)(p - i)), t = pos[i];
            if (k >= p)
                k = p - 1;
            pos[i] = pos[k];
            pos[k] = t;
            given[pos[i] + u * ds->c] = 1;
        }
    }
}

enum { DECIDE_PU, DECIDE_SIGN, DECIDE_GIVEN, DECIDE_COUNT };
enum { FREQ_HOLDOUT, FREQ_AUTO, FREQ_FIXED, FREQ_ORACLE };

/* ---- methods ----------------------------------------------------------- */

typedef struct {
    size_t r;
    mvnmf_mvel_params mp;
    int decide;        /* DECIDE_PU (default), DECIDE_SIGN or DECIDE_GIVEN */
    int freq_mode;      /* FREQ_HOLDOUT (default), FREQ_AUTO, FREQ_FIXED or FREQ_ORACLE */
    double label_freq;  /* FREQ_FIXED: the share of each label's positives that is given */
    double holdout;     /* FREQ_HOLDOUT: the share of the given positives held out of the first fit */
    size_t min_held;    /* FREQ_HOLDOUT: held-out positives above any threshold the estimate uses */
    const double *oracle_freq; /* FREQ_ORACLE: the true share per label (set per split) */
    int auto_mu;      /* unknown weight = given positives / unknown entries */
    size_t anchors;   /* 0: the dense fused graph; m: an anchor graph of m anchors */
    size_t near;      /* anchors per item */
    size_t knn;       /* > 0: the kNN-sparsified fused graph with this many neighbours */
    uint64_t seed;    /* of the k-means anchors */
    uint64_t split_seed; /* of the hold-out (set per split) */
} settings;

/* The first (hold-out) fit's scores, then the label frequencies from them. */
static void predict_freq(const double *q, const double *h, size_t c, size_t r, size_t n, const uint8_t *fitl,
                         const uint8_t *held, size_t min_held, double *scores, double *lf)
{
    size_t bytes = 0;
    void *wk;
    check(mvnmf_mvel_predict_workspace(c, r, n, &bytes), "predict workspace");
    wk = work_of(bytes);
    check(mvnmf_mvel_predict(q, h, c, r, n, scores, wk, bytes), "predict");
    free(wk);
    /* c_s per label: the mixture-proportion estimate of
     * models::mvel::label_freq_holdout over the items this fit saw as unknown. */
    check(mvnmf_mvel_label_freq_holdout_workspace(n, &bytes), "label_freq_holdout workspace");
    wk = work_of(bytes);
    check(mvnmf_mvel_label_freq_holdout(scores, fitl, held, c, n, min_held, lf, wk, bytes), "label_freq_holdout");
    free(wk);
}

/* MVEL on the views (cross_view) or on one concatenated view; writes scores
 * and decisions. */
static void run_mvel(const dataset *ds, const double *const *xs, const size_t *ds_d, size_t nv, int cross_view,
                     const uint8_t *given, const settings *st, double *scores, uint8_t *pred, double *freq_out)
{
    mvnmf_view views[MAXV];
    mvnmf_fused_graph_params gp = mvnmf_fused_graph_params_default();
    mvnmf_graph g;
    mvnmf_mvel_params mp;
    size_t v, bytes = 0, n = ds->n, c = ds->c, r = st->r;
    double *q = (double *)xmalloc(c * r * sizeof(double));
    double *h = (double *)xmalloc(r * n * sizeof(double)), *tau = (double *)xmalloc(c * sizeof(double));
    double *lf = (double *)xmalloc(c * sizeof(double));
    uint8_t *fitl = NULL, *held = NULL;
    int pass, first = 1;
    void *wk;
    gp.cross_view = (uint32_t)cross_view;
    for (v = 0; v < c; v++)
        lf[v] = st->freq_mode == FREQ_FIXED ? st->label_freq : 0.0; /* 0: Elkan-Noto's estimate */
    if ((st->decide == DECIDE_PU || st->decide == DECIDE_COUNT) && st->freq_mode == FREQ_HOLDOUT) {
        /* --label-freq holdout: a random share of the given positives held out
         * of a first fit, c per label from their out-of-sample scores. */
        size_t k2;
        uint64_t rs = st->split_seed * 0x2545F4914F6CDD1DULL + 17;
        fitl = (uint8_t *)xmalloc(c * n);
        held = (uint8_t *)xmalloc(c * n);
        for (k2 = 0; k2 < c * n; k2++) {
            rs = rs * 6364136223846793005ULL + 1442695040888963407ULL;
            held[k2] = given[k2] && (double)(rs >> 11) * (1.0 / 9007199254740992.0) < st->holdout;
            fitl[k2] = given[k2] && !held[k2];
        }
        first = 0;
    } else if ((st->decide == DECIDE_PU || st->decide == DECIDE_COUNT) && st->freq_mode == FREQ_ORACLE) {
        for (v = 0; v < c; v++) /* --label-freq oracle: the true share (not available to a learner) */
            lf[v] = st->oracle_freq[v];
    }
    for (v = 0; v < nv; v++) {
        memset(&views[v], 0, sizeof views[v]);
        views[v].kind = MVNMF_VIEW_DENSE;
        views[v].rows = ds_d[v];
        views[v].cols = n;
        views[v].col_stride = ds_d[v];
        views[v].values = xs[v];
    }
    mp = st->mp;
    if (st->auto_mu) { /* balance: the unknown entries weigh as much as the positives */
        size_t pos = 0, i;
        for (i = 0; i < c * n; i++)
            pos += given[i];
        mp.unknown_weight = pos < c * n ? (double)pos / (double)(c * n - pos) : 0.0;
    }
    if (st->anchors) {
        /* Anchors by k-means, each item's `near` best anchors, H = A Z. */
        size_t m = st->anchors, s = st->near;
        double *an[MAXV], scales[2 * MAXV * MAXV], *z = (double *)xmalloc(n * s * sizeof(double));
        double *a = (double *)xmalloc(r * m * sizeof(double));
        size_t *idx = (size_t *)xmalloc(n * s * sizeof(size_t));
        mvnmf_view av[MAXV];
        mvnmf_kmeans_params kp = mvnmf_kmeans_params_default();
        kp.restarts = 1;
        kp.max_iter = 30;
        kp.seed = st->seed;
        for (v = 0; v < nv; v++)
            an[v] = (double *)xmalloc(ds_d[v] * m * sizeof(double));
        check(mvnmf_anchors_kmeans_workspace(views, nv, m, &kp, &bytes), "anchors workspace");
        wk = work_of(bytes);
        check(mvnmf_anchors_kmeans(views, nv, m, &kp, an, wk, bytes, NULL), "anchors");
        free(wk);
        for (v = 0; v < nv; v++) {
            av[v] = views[v];
            av[v].cols = m;
            av[v].values = an[v];
        }
        for (v = 0; v < 2 * nv * nv; v++)
            scales[v] = 0.0;
        check(mvnmf_anchor_graph_workspace(views, nv, n, m, NULL, &gp, &bytes), "anchor graph workspace");
        wk = work_of(bytes);
        check(mvnmf_anchor_graph(views, nv, NULL, av, s, NULL, &gp, scales, idx, z, wk, bytes), "anchor graph");
        free(wk);
        check(mvnmf_mvel_fit_anchored_workspace(n, c, r, m, &mp, &bytes), "anchored mvel workspace");
        for (pass = first; pass < 2; pass++) {
            wk = work_of(bytes);
            check(mvnmf_mvel_fit_anchored(pass ? given : fitl, c, n, idx, z, s, m, r, &mp, q, a, wk, bytes, NULL,
                                          NULL, NULL),
                  "anchored mvel fit");
            free(wk);
            check(mvnmf_mvel_embed_anchored(a, r, m, idx, z, s, n, h), "embed");
            if (!pass)
                predict_freq(q, h, c, r, n, fitl, held, st->min_held, scores, lf);
        }
        for (v = 0; v < nv; v++)
            free(an[v]);
        free(z);
        free(a);
        free(idx);
    } else if (st->knn) {
        size_t cap = 0, nnz = 0, *rp = (size_t *)xmalloc((n + 1) * sizeof(size_t)), *ci;
        double *w;
        mvnmf_csr_buffers out;
        check(mvnmf_fused_knn_graph_capacity(n, st->knn, &cap), "kNN graph capacity");
        ci = (size_t *)xmalloc(cap * sizeof(size_t));
        w = (double *)xmalloc(cap * sizeof(double));
        out.row_ptr = rp;
        out.col_idx = ci;
        out.weights = w;
        out.capacity = cap;
        check(mvnmf_fused_knn_graph_workspace(views, nv, st->knn, NULL, &gp, &bytes), "kNN graph workspace");
        wk = work_of(bytes);
        check(mvnmf_fused_knn_graph(views, nv, st->knn, NULL, &gp, &out, &nnz, wk, bytes), "kNN graph");
        free(wk);
        memset(&g, 0, sizeof g);
        g.kind = MVNMF_GRAPH_CSR;
        g.n = n;
        g.affinity_row_ptr = rp;
        g.affinity_col_idx = ci;
        g.affinity_weights = w;
        check(mvnmf_mvel_fit_workspace(c, &g, r, &mp, &bytes), "mvel workspace");
        for (pass = first; pass < 2; pass++) {
            wk = work_of(bytes);
            check(mvnmf_mvel_fit(pass ? given : fitl, c, &g, r, &mp, q, h, wk, bytes, NULL, NULL, NULL),
                  "mvel fit");
            free(wk);
            if (!pass)
                predict_freq(q, h, c, r, n, fitl, held, st->min_held, scores, lf);
        }
        free(rp);
        free(ci);
        free(w);
    } else {
        double *w = (double *)xmalloc(n * n * sizeof(double));
        check(mvnmf_fused_graph_workspace(views, nv, &gp, &bytes), "fused graph workspace");
        wk = work_of(bytes);
        check(mvnmf_fused_graph(views, nv, NULL, NULL, &gp, w, wk, bytes), "fused graph");
        free(wk);
        memset(&g, 0, sizeof g);
        g.kind = MVNMF_GRAPH_DENSE;
        g.n = n;
        g.affinity_weights = w;
        check(mvnmf_mvel_fit_workspace(c, &g, r, &mp, &bytes), "mvel workspace");
        for (pass = first; pass < 2; pass++) {
            wk = work_of(bytes);
            check(mvnmf_mvel_fit(pass ? given : fitl, c, &g, r, &mp, q, h, wk, bytes, NULL, NULL, NULL),
                  "mvel fit");
            free(wk);
            if (!pass)
                predict_freq(q, h, c, r, n, fitl, held, st->min_held, scores, lf);
        }
        free(w);
    }
    check(mvnmf_mvel_predict_workspace(c, r, n, &bytes), "predict workspace");
    wk = work_of(bytes);
    check(mvnmf_mvel_predict(q, h, c, r, n, scores, wk, bytes), "predict");
    free(wk);
    if (st->decide == DECIDE_COUNT) { /* the estimated number of hidden positives per label */
        check(mvnmf_mvel_count_thresholds_workspace(n, &bytes), "count_thresholds workspace");
        wk = work_of(bytes);
        check(mvnmf_mvel_count_thresholds(scores, given, c, n, lf, tau, pred, wk, bytes), "count_thresholds");
        free(wk);
    } else if (st->decide == DECIDE_PU) { /* per-label PU thresholds, given positives kept */
        check(mvnmf_mvel_decide_pu_workspace(n, &bytes), "decide_pu workspace");
        wk = work_of(bytes);
        check(mvnmf_mvel_decide_pu(scores, given, c, n, lf, tau, NULL, pred, wk, bytes), "decide_pu");
        free(wk);
    } else {
        if (st->decide == DECIDE_GIVEN) {
            check(mvnmf_mvel_thresholds_workspace(n, &bytes), "thresholds workspace");
            wk = work_of(bytes);
            check(mvnmf_mvel_thresholds(scores, given, c, n, tau, wk, bytes), "thresholds");
            free(wk);
        } else {
            for (v = 0; v < c; v++)
                tau[v] = 0.0; /* the sign: the paper's {-1, 1} coding */
        }
        check(mvnmf_mvel_decide(scores, tau, c, n, pred), "decide");
    }
    for (v = 0; v < c && freq_out; v++)
        freq_out[v] = lf[v];
    free(q);
    free(h);
    free(tau);
    free(lf);
    free(fitl);
    free(held);
}

/* ML-kNN on z (d x n), trained on `given`; scores = posterior P(label). */
/* Each item's KNN nearest items in z (d x n), self excluded, ties by index:
 * nb (KNN x n) and their squared distances nd (KNN x n). The same for every
 * split, so computed once. */
static void knn_lists(const double *z, size_t d, size_t n, size_t *nb, double *nd)
{
    size_t u, v, j, m;
    double *dist = (double *)xmalloc(n * sizeof(double)), *sq = (double *)xmalloc(n * sizeof(double));
    for (u = 0; u < n; u++) {
        sq[u] = 0.0;
        for (j = 0; j < d; j++)
            sq[u] += z[j + u * d] * z[j + u * d];
    }
    for (u = 0; u < n; u++) {
        for (v = 0; v < n; v++) {
            double dot = 0.0;
            for (j = 0; j < d; j++)
                dot += z[j + u * d] * z[j + v * d];
            dist[v] = sq[u] + sq[v] - 2.0 * dot;
        }
        dist[u] = INFINITY;
        for (m = 0; m < KNN; m++) {
            size_t best = 0;
            for (v = 1; v < n; v++)
                if (dist[v] < dist[best])
                    best = v;
            nb[m + u * KNN] = best;
            nd[m + u * KNN] = dist[best] > 0.0 ? dist[best] : 0.0;
            dist[best] = INFINITY;
        }
    }
    free(dist);
    free(sq);
}

/* ML-kNN on the neighbour lists nb (KNN x n), trained on `given`; scores =
 * posterior P(label). */
static void run_mlknn(const size_t *nb, size_t n, size_t c, const uint8_t *given, double *scores, uint8_t *pred)
{
    size_t u, s, j, *cnt = (size_t *)xmalloc(c * n * sizeof(size_t));
    const double sm = 1.0;
    for (u = 0; u < n; u++)
        for (s = 0; s < c; s++) {
            size_t k = 0;
            for (j = 0; j < KNN; j++)
                k += given[s + nb[j + u * KNN] * c];
            cnt[s + u * c] = k;
        }
    for (s = 0; s < c; s++) {
        double pos = 0.0, c1[KNN + 1], c0[KNN + 1], s1 = 0.0, s0 = 0.0, p1;
        memset(c1, 0, sizeof c1);
        memset(c0, 0, sizeof c0);
        for (u = 0; u < n; u++) {
            pos += given[s + u * c];
            if (given[s + u * c])
                c1[cnt[s + u * c]] += 1.0;
            else
                c0[cnt[s + u * c]] += 1.0;
        }
        for (j = 0; j <= KNN; j++) {
            s1 += c1[j];
            s0 += c0[j];
        }
        p1 = (sm + pos) / (2.0 * sm + (double)n);
        for (u = 0; u < n; u++) {
            size_t k = cnt[s + u * c];
            double e1 = (sm + c1[k]) / (sm * (KNN + 1) + s1), e0 = (sm + c0[k]) / (sm * (KNN + 1) + s0);
            double a = p1 * e1, b = (1.0 - p1) * e0;
            scores[s + u * c] = a / (a + b);
            pred[s + u * c] = scores[s + u * c] > 0.5;
        }
    }
    free(cnt);
}

/* ---- the PU baselines: PU_WLR and WELL ---------------------------------- */

/* Lee & Liu's (2003) criterion for choosing a hyperparameter from positive and
 * unlabeled data only: r^2 / P(f = 1), r the recall on held-out positives, P(f
 * = 1) the share of the items (here: those the fit saw as unknown) decided
 * positive; proportional to precision x recall. 0 where nothing is decided. */
static double lee_liu(const uint8_t *dec, const uint8_t *fitl, const uint8_t *held, size_t s, size_t c, size_t n)
{
    size_t u, h = 0, hit = 0, unk = 0, on = 0;
    for (u = 0; u < n; u++) {
        if (fitl[s + u * c])
            continue;
        unk++;
        on += dec[u];
        if (held[s + u * c]) {
            h++;
            hit += dec[u];
        }
    }
    if (!h || !on)
        return 0.0;
    return ((double)hit / (double)h) * ((double)hit / (double)h) / ((double)on / (double)unk);
}

/* A held-out share (20 %) of the given positives, by a seeded generator. */
static void split_given(const uint8_t *given, size_t cn, uint64_t seed, uint8_t *fitl, uint8_t *held)
{
    size_t k;
    uint64_t rs = seed * 0x9E3779B97F4A7C15ULL + 99;
    for (k = 0; k < cn; k++) {
        rs = rs * 6364136223846793005ULL + 1442695040888963407ULL;
        held[k] = given[k] && (double)(rs >> 11) * (1.0 / 9007199254740992.0) < 0.2;
        fitl[k] = given[k] && !held[k];
    }
}

/* Weighted L2-regularised logistic regression by Newton's method on z (d x n)
 * plus a bias: minimises sum_u w_u log(1 + exp(-t_u (b'x_u))) + lambda/2 |b|^2
 * (bias unpenalised), t_u = +1 for y_u = 1 (weight wp) and -1 otherwise
 * (weight wn); b has d + 1 entries. */
static void wlr_fit(const double *z, size_t d, size_t n, const uint8_t *y, size_t ystride, double wp, double wn,
                    double lambda, double *b)
{
    size_t D = d + 1, it, i, j, u;
    double *hs = (double *)xmalloc(D * D * sizeof(double)), *g = (double *)xmalloc(D * sizeof(double));
    double *x = (double *)xmalloc(D * sizeof(double));
    for (i = 0; i < D; i++)
        b[i] = 0.0;
    for (it = 0; it < 25; it++) {
        double step = 0.0;
        for (i = 0; i < D * D; i++)
            hs[i] = 0.0;
        for (i = 0; i < D; i++) {
            g[i] = i < d ? lambda * b[i] : 0.0;
            hs[i + i * D] = i < d ? lambda : 1e-10;
        }
        for (u = 0; u < n; u++) {
            double t = 0.0, p, w = y[u * ystride] ? wp : wn, r, q;
            for (i = 0; i < d; i++) {
                x[i] = z[i + u * d];
                t += b[i] * x[i];
            }
            x[d] = 1.0;
            t += b[d];
            p = 1.0 / (1.0 + exp(-t));
            r = w * (p - (y[u * ystride] ? 1.0 : 0.0));
            q = w * p * (1.0 - p);
            for (i = 0; i < D; i++) {
                g[i] += r * x[i];
                for (j = 0; j <= i; j++)
                    hs[i + j * D] += q * x[i] * x[j];
            }
        }
        /* Cholesky of the (lower) Hessian, then the Newton step in g. */
        for (j = 0; j < D; j++) {
            double v = hs[j + j * D];
            for (i = 0; i < j; i++)
                v -= hs[j + i * D] * hs[j + i * D];
            v = v > 1e-300 ? sqrt(v) : 1e-150;
            hs[j + j * D] = v;
            for (i = j + 1; i < D; i++) {
                double a = hs[i + j * D];
                size_t k;
                for (k = 0; k < j; k++)
                    a -= hs[i + k * D] * hs[j + k * D];
                hs[i + j * D] = a / v;
            }
        }
        for (i = 0; i < D; i++) { /* L x = g */
            double a = g[i];
            for (j = 0; j < i; j++)
                a -= hs[i + j * D] * g[j];
            g[i] = a / hs[i + i * D];
        }
        for (i = D; i-- > 0;) { /* L' x = ... */
            double a = g[i];
            for (j = i + 1; j < D; j++)
                a -= hs[j + i * D] * g[j];
            g[i] = a / hs[i + i * D];
        }
        for (i = 0; i < D; i++) {
            b[i] -= g[i];
            step += fabs(g[i]);
        }
        if (step < 1e-8)
            break;
    }
    free(hs);
    free(g);
    free(x);
}

/* PU_WLR (Lee & Liu 2003), one label at a time: the unknown entries taken as
 * negatives, a logistic regression weighted so that positives and unknowns
 * weigh the same in total (positives by |U| / n, unknowns by |P| / n), lambda
 * from {1e-4, 1e-3, 1e-2, 1e-1, 1} x n by the r^2 / P(f = 1) criterion on 20 %
 * of the given positives held out of a fit, then refitted on all given labels.
 * Scores: the fitted P(given | x); decisions: P > 1/2, given positives kept. */
static void run_pu_wlr(const double *z, size_t d, size_t n, size_t c, const uint8_t *given, uint64_t seed,
                       double *scores, uint8_t *pred)
{
    static const double LAM[5] = { 1e-4, 1e-3, 1e-2, 1e-1, 1.0 };
    size_t s, u, i, l;
    uint8_t *fitl = (uint8_t *)xmalloc(c * n), *held = (uint8_t *)xmalloc(c * n), *dec = (uint8_t *)xmalloc(n);
    double *b = (double *)xmalloc((d + 1) * sizeof(double));
    split_given(given, c * n, seed, fitl, held);
    for (s = 0; s < c; s++) {
        double best = -1.0, lam = LAM[2] * (double)n;
        for (l = 0; l < 5; l++) {
            size_t np = 0;
            double crit;
            for (u = 0; u < n; u++)
                np += fitl[s + u * c];
            if (!np || np == n)
                break;
            wlr_fit(z, d, n, fitl + s, c, (double)(n - np) / (double)n, (double)np / (double)n, LAM[l] * (double)n,
                    b);
            for (u = 0; u < n; u++) {
                double t = b[d];
                for (i = 0; i < d; i++)
                    t += b[i] * z[i + u * d];
                dec[u] = t > 0.0;
            }
            crit = lee_liu(dec, fitl, held, s, c, n);
            if (crit > best) {
                best = crit;
                lam = LAM[l] * (double)n;
            }
        }
        {
            size_t np = 0;
            for (u = 0; u < n; u++)
                np += given[s + u * c];
            if (np && np < n)
                wlr_fit(z, d, n, given + s, c, (double)(n - np) / (double)n, (double)np / (double)n, lam, b);
            else
                for (i = 0; i <= d; i++)
                    b[i] = 0.0;
        }
        for (u = 0; u < n; u++) {
            double t = b[d];
            for (i = 0; i < d; i++)
                t += b[i] * z[i + u * d];
            scores[s + u * c] = 1.0 / (1.0 + exp(-t));
            pred[s + u * c] = given[s + u * c] || t > 0.0;
        }
    }
    free(fitl);
    free(held);
    free(dec);
    free(b);
}

/* The symmetrised kNN graph of z (KNN neighbours, self excluded): W = A + A',
 * A(u, v) = exp(-d^2(u, v) / sigma^2) where v is among u's KNN nearest, sigma^2
 * the mean squared neighbour distance; rows in CSR form (ptr, nbr, w). */
typedef struct {
    size_t n, *ptr, *nbr;
    double *w, *deg;
} knn_graph;

static knn_graph build_knn(const size_t *nb, const double *nd, size_t n)
{
    knn_graph g;
    size_t u, m, *fill;
    double sig = 0.0;
    g.n = n;
    g.ptr = (size_t *)xmalloc((n + 1) * sizeof(size_t));
    g.nbr = (size_t *)xmalloc(2 * n * KNN * sizeof(size_t));
    g.w = (double *)xmalloc(2 * n * KNN * sizeof(double));
    g.deg = (double *)xmalloc(n * sizeof(double));
    fill = (size_t *)xmalloc(n * sizeof(size_t));
    for (u = 0; u < n * KNN; u++)
        sig += nd[u];
    sig /= (double)(n * KNN);
    if (!(sig > 0.0))
        sig = 1.0;
    for (u = 0; u < n; u++)
        fill[u] = KNN; /* out-edges, then in-edges */
    for (u = 0; u < n * KNN; u++)
        fill[nb[u]]++;
    g.ptr[0] = 0;
    for (u = 0; u < n; u++) {
        g.ptr[u + 1] = g.ptr[u] + fill[u];
        fill[u] = g.ptr[u];
        g.deg[u] = 0.0;
    }
    for (u = 0; u < n; u++)
        for (m = 0; m < KNN; m++) {
            size_t b = nb[m + u * KNN];
            double w = exp(-nd[m + u * KNN] / sig);
            g.nbr[fill[u]] = b;
            g.w[fill[u]++] = w;
            g.nbr[fill[b]] = u;
            g.w[fill[b]++] = w;
            g.deg[u] += w;
            g.deg[b] += w;
        }
    free(fill);
    return g;
}

static void free_knn(knn_graph *g)
{
    free(g->ptr);
    free(g->nbr);
    free(g->w);
    free(g->deg);
}

/* One label of WELL (simplified): f in [0, 1]^n minimising
 * f'Lf + 2 delta sum_u deg_u f_u (L = D - W; f'Lf = sum over edges of
 * w_uv (f_u - f_v)^2) with f = 1 on the
 * given positives (`lab`), by projected Gauss-Seidel (exact coordinate
 * minimisation of a convex quadratic over a box: the objective never rises). */
static void well_label(const knn_graph *g, const uint8_t *lab, size_t c, double delta, double *f)
{
    size_t u, it, k;
    for (u = 0; u < g->n; u++)
        f[u] = lab[u * c] ? 1.0 : 0.0;
    for (it = 0; it < 200; it++) {
        double moved = 0.0;
        for (u = 0; u < g->n; u++) {
            double a = 0.0, x;
            if (lab[u * c] || g->deg[u] <= 0.0)
                continue;
            for (k = g->ptr[u]; k < g->ptr[u + 1]; k++)
                a += g->w[k] * f[g->nbr[k]];
            x = a / g->deg[u] - delta;
            x = x < 0.0 ? 0.0 : x > 1.0 ? 1.0 : x;
            moved += fabs(x - f[u]);
            f[u] = x;
        }
        if (moved < 1e-9 * (double)g->n)
            break;
    }
}

/* WELL (Sun, Zhang & Zhou 2010), simplified: per label, a low-density
 * separation on the kNN graph of the concatenated features (f^T L f) with the
 * given positives clamped to 1 and a penalty on the positives' mass (the
 * paper's "far fewer positives than negatives" term; here weighted by degree),
 * delta from {0.01, 0.03, 0.1, 0.3} by Lee & Liu's criterion on 20 % held-out
 * given positives. Not the paper's: one shared graph (no per-label
 * similarities from low-rank base similarities, so no label correlation), the
 * given positives clamped rather than a hinge loss. Scores f; decisions f > 1/2. */
static void run_well(const knn_graph *g, size_t c, const uint8_t *given, uint64_t seed, double *scores,
                     uint8_t *pred)
{
    static const double DELTA[4] = { 0.01, 0.03, 0.1, 0.3 };
    size_t s, u, l, n = g->n;
    uint8_t *fitl = (uint8_t *)xmalloc(c * n), *held = (uint8_t *)xmalloc(c * n), *dec = (uint8_t *)xmalloc(n);
    double *f = (double *)xmalloc(n * sizeof(double));
    split_given(given, c * n, seed, fitl, held);
    for (s = 0; s < c; s++) {
        double best = -1.0, delta = DELTA[1];
        for (l = 0; l < 4; l++) {
            double crit;
            well_label(g, fitl + s, c, DELTA[l], f);
            for (u = 0; u < n; u++)
                dec[u] = f[u] > 0.5;
            crit = lee_liu(dec, fitl, held, s, c, n);
            if (crit > best) {
                best = crit;
                delta = DELTA[l];
            }
        }
        well_label(g, given + s, c, delta, f);
        for (u = 0; u < n; u++) {
            scores[s + u * c] = f[u];
            pred[s + u * c] = f[u] > 0.5;
        }
    }
    free(fitl);
    free(held);
    free(dec);
    free(f);
}

/* ---- options, scoring, output ------------------------------------------ */

typedef struct {
    const char *dir;
    double ilr[MAXI];
    size_t nilr, splits, split_at, max_items;
    long anchors;    /* -1: by size */
    int standardize; /* 1 (default): every feature to mean 0, variance 1 */
    double freq_threshold; /* the frequent baseline's cut on given frequencies */
    int use[NMETH];
    uint64_t seed;
    settings st;
} options;

static options parse(int argc, char **argv)
{
    options o;
    int i, m;
    memset(&o, 0, sizeof o);
    o.nilr = 4;
    for (i = 0; i < 4; i++)
        o.ilr[i] = 0.2 * (i + 1);
    o.splits = 3;
    o.seed = 1;
    o.max_items = 6000;
    o.anchors = -1;
    o.standardize = 1;
    o.freq_threshold = 0.3;
    o.st.near = 5;
    o.st.mp = mvnmf_mvel_params_default();
    o.st.auto_mu = 1;
    o.st.r = 64; /* the paper's embedding dimension (--dim labels: the number of labels) */
    o.st.freq_mode = FREQ_HOLDOUT;
    o.st.holdout = 0.3;
    o.st.min_held = 10;
    for (m = 0; m < NMETH; m++)
        o.use[m] = 1;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] != '-') {
            o.dir = a;
            continue;
        }
        if (!v)
            die("missing value for: %s", a);
        if (!strcmp(a, "--ilr")) {
            size_t k;
            o.nilr = parse_doubles(v, "--ilr", o.ilr, MAXI);
            for (k = 0; k < o.nilr; k++)
                o.ilr[k] /= 100.0;
        } else if (!strcmp(a, "--splits"))
            o.splits = parse_size(v, a);
        else if (!strcmp(a, "--seed"))
            o.seed = parse_size(v, a);
        else if (!strcmp(a, "--dim") && strcmp(v, "labels"))
            o.st.r = parse_size(v, a);
        else if (!strcmp(a, "--theta1"))
            o.st.mp.theta1 = parse_double(v, a);
        else if (!strcmp(a, "--theta2"))
            o.st.mp.theta2 = parse_double(v, a);
        else if (!strcmp(a, "--iters"))
            o.st.mp.max_iter = (uint32_t)parse_size(v, a);
        else if (!strcmp(a, "--unknown-weight")) {
            o.st.auto_mu = !strcmp(v, "auto");
            o.st.mp.unknown_weight = o.st.auto_mu ? 0.0 : parse_double(v, a);
        }
        else if (!strcmp(a, "--decide") && (!strcmp(v, "pu") || !strcmp(v, "sign") || !strcmp(v, "given") ||
                                            !strcmp(v, "count")))
            o.st.decide = !strcmp(v, "pu")      ? DECIDE_PU
                          : !strcmp(v, "sign")  ? DECIDE_SIGN
                          : !strcmp(v, "count") ? DECIDE_COUNT
                                                : DECIDE_GIVEN;
        else if (!strcmp(a, "--label-freq")) {
            o.st.freq_mode = !strcmp(v, "auto")      ? FREQ_AUTO
                             : !strcmp(v, "holdout") ? FREQ_HOLDOUT
                             : !strcmp(v, "oracle")  ? FREQ_ORACLE
                                                     : FREQ_FIXED;
            if (o.st.freq_mode == FREQ_FIXED) {
                o.st.label_freq = parse_double(v, a);
                if (!(o.st.label_freq > 0.0 && o.st.label_freq <= 1.0))
                    die("--label-freq must be holdout, auto, oracle or in (0, 1]");
            }
        } else if (!strcmp(a, "--holdout")) {
            o.st.holdout = parse_double(v, a);
            if (!(o.st.holdout > 0.0 && o.st.holdout < 1.0))
                die("--holdout must be in (0, 1)");
        } else if (!strcmp(a, "--min-held"))
            o.st.min_held = parse_size(v, a);
        else if (!strcmp(a, "--dim") && !strcmp(v, "labels"))
            o.st.r = 0;
        else if (!strcmp(a, "--freq-threshold"))
            o.freq_threshold = parse_double(v, a);
        else if (!strcmp(a, "--standardize") && (!strcmp(v, "on") || !strcmp(v, "off")))
            o.standardize = !strcmp(v, "on");
        else if (!strcmp(a, "--split-view"))
            o.split_at = parse_size(v, a);
        else if (!strcmp(a, "--anchors"))
            o.anchors = strtol(v, NULL, 10);
        else if (!strcmp(a, "--knn"))
            o.st.knn = parse_size(v, a);
        else if (!strcmp(a, "--neighbors"))
            o.st.near = parse_size(v, a);
        else if (!strcmp(a, "--max-items"))
            o.max_items = parse_size(v, a);
        else if (!strcmp(a, "--methods")) {
            for (m = 0; m < NMETH; m++)
                o.use[m] = 0;
            for (m = 0; m < NMETH; m++) {
                const char *p = strstr(v, METHOD[m]);
                size_t l = strlen(METHOD[m]);
                /* whole words only ("mvel" is a prefix of "mvel-concat") */
                while (p && !((p == v || p[-1] == ',') && (p[l] == ',' || p[l] == '\0')))
                    p = strstr(p + 1, METHOD[m]);
                o.use[m] = p != NULL;
            }
        } else
            die("unknown option (see the comment at the top of multilabel.c): %s", a);
        i++;
    }
    if (!o.dir)
        die("usage: multilabel [--ilr LIST] [--splits N] [--seed S] [--methods LIST] [--dim R] [--theta1 X] "
            "[--theta2 X] [--iters N] [--split-view D] [--anchors M] [--neighbors S] [--knn S] DIR");
    if (o.splits == 0 || o.splits > MAXS)
        die("--splits must be 1..32");
    return o;
}

/* Metrics of one method on one split: [macro, micro, hamming, auroc]. */
static void score(const dataset *ds, const double *scores, const uint8_t *given, const uint8_t *pred, double out[5])
{
    mvnmf_multilabel_scores ms;
    size_t bytes = 0, nsc = 0;
    void *wk;
    check(mvnmf_multilabel_metrics(ds->truth, pred, ds->c, ds->n, &ms), "metrics");
    check(mvnmf_average_auroc_workspace(ds->n, &bytes), "auroc workspace");
    wk = work_of(bytes);
    check(mvnmf_average_auroc(ds->truth, scores, ds->c, ds->n, NULL, &out[3], &nsc, wk, bytes), "auroc");
    free(wk);
    { /* the same scores with each label's given positives moved above every other item */
        size_t s, u, c = ds->c;
        double *adj = (double *)xmalloc(c * ds->n * sizeof(double));
        for (s = 0; s < c; s++) {
            double top = -INFINITY;
            for (u = 0; u < ds->n; u++)
                if (scores[s + u * c] > top)
                    top = scores[s + u * c];
            for (u = 0; u < ds->n; u++)
                adj[s + u * c] = given[s + u * c] ? top + 1.0 : scores[s + u * c];
        }
        wk = work_of(bytes);
        check(mvnmf_average_auroc(ds->truth, adj, c, ds->n, NULL, &out[4], &nsc, wk, bytes), "auroc");
        free(wk);
        free(adj);
    }
    out[0] = ms.macro_f1;
    out[1] = ms.micro_f1;
    out[2] = ms.hamming_loss;
}

int main(int argc, char **argv)
{
    options o = parse(argc, argv);
    dataset ds = load(o.dir, o.split_at);
    static double res[NMETH][MAXI][MAXS][5], est_now[256], est_mean[MAXI], true_mean[MAXI], est_err[MAXI];
    double *true_freq;
    knn_graph kg;
    int have_knn = 0;
    size_t *nbl = NULL;
    double *ndl = NULL;
    size_t i, sp, m, k, dz, nconst = 0;
    double t0 = now(), *z, *scores;
    uint8_t *given, *pred;
    char mu[64], gdesc[96], dec[512];
    for (i = 0; i < ds.nv && o.standardize; i++) {
        size_t kc = 0;
        check(mvnmf_standardize_view(ds.d[i], ds.n, ds.x[i], &kc), "standardize");
        nconst += kc;
    }
    o.st.anchors = o.anchors >= 0 ? (size_t)o.anchors : ds.n > DENSE_UP_TO && !o.st.knn ? ANCHORS : 0;
    if (o.st.knn && o.st.anchors)
        die("--knn and --anchors exclude each other");
    if (o.st.knn >= ds.n)
        die("--knn must be below the number of items");
    if (o.st.anchors > ds.n)
        o.st.anchors = ds.n;
    if (o.st.near > o.st.anchors && o.st.anchors)
        o.st.near = o.st.anchors;
    o.st.seed = o.seed;
    if (!o.st.anchors && !o.st.knn && ds.n > o.max_items)
        die("more items than --max-items: the dense graph needs n^2 doubles (use --anchors M)");
    if (!o.st.r)
        o.st.r = ds.c;
    z = concat(&ds, &dz);
    if (ds.c > 256)
        die("at most 256 labels");
    true_freq = (double *)xmalloc(ds.c * sizeof(double));
    given = (uint8_t *)xmalloc(ds.c * ds.n);
    pred = (uint8_t *)xmalloc(ds.c * ds.n);
    scores = (double *)xmalloc(ds.c * ds.n * sizeof(double));

    printf("# MVEL on %s (mvnmf %s)\n\n", o.dir, mvnmf_version());
    printf("* %zu items, %zu labels, %zu view(s):", ds.n, ds.c, ds.nv);
    for (i = 0; i < ds.nv; i++)
        printf(" %zu", ds.d[i]);
    printf(" features%s", o.split_at ? " (view 1 split by --split-view)" : "");
    if (o.standardize)
        printf("; every feature standardised (mean 0, variance 1; %zu constant)\n", nconst);
    else
        printf("; features as given (--standardize off)\n");
    if (o.st.anchors)
        snprintf(gdesc, sizeof gdesc, "%zu anchors by k-means, %zu per item (H = A Z)", o.st.anchors, o.st.near);
    else if (o.st.knn)
        snprintf(gdesc, sizeof gdesc, "kNN-sparsified, %zu neighbours, symmetrised", o.st.knn);
    else
        snprintf(gdesc, sizeof gdesc, "dense");
    {
        char fd[160];
        if (o.st.freq_mode == FREQ_FIXED)
            snprintf(fd, sizeof fd, "%g", o.st.label_freq);
        else if (o.st.freq_mode == FREQ_HOLDOUT)
            snprintf(fd, sizeof fd,
                     "from %g%% of the given positives held out of a first fit, at least %zu above a threshold",
                     100.0 * o.st.holdout, o.st.min_held);
        else if (o.st.freq_mode == FREQ_ORACLE)
            snprintf(fd, sizeof fd, "the TRUE share: an oracle, not available to a learner");
        else
            snprintf(fd, sizeof fd, "by Elkan-Noto");
        snprintf(dec, sizeof dec, "%s (label frequency %s), given positives kept",
                 o.st.decide == DECIDE_COUNT ? "per label, the estimated number of hidden positives, round(P (1 - c) "
                                               "/ c), of the unknown items by score"
                                             : "per-label PU thresholds",
                 fd);
    }
    if (o.st.auto_mu)
        snprintf(mu, sizeof mu, "auto (given positives / unknown entries)");
    else
        snprintf(mu, sizeof mu, "%g", o.st.mp.unknown_weight);
    printf("* MVEL: dim %zu, theta1 %g, theta2 %g, unknown weight %s, %u iterations, decisions by %s; fused "
           "graph: RBF within views (median bandwidth), CCA across views, uniform priors, %s\n",
           o.st.r, o.st.mp.theta1, o.st.mp.theta2, mu, o.st.mp.max_iter,
           o.st.decide == DECIDE_PU || o.st.decide == DECIDE_COUNT ? dec
           : o.st.decide == DECIDE_GIVEN ? "per-label thresholds (F1 on the given labels)"
                                         : "the sign of the score",
           gdesc);
    printf("* frequent: each item's given labels plus every label whose given frequency is >= %g\n",
           o.freq_threshold);
    printf("* protocol: %zu splits (seed %llu + split), each item keeps round(ILR x its positives), at least "
           "one; all items learned transductively, scored against the full labels\n",
           o.splits, (unsigned long long)o.seed);

    if (o.use[2] || o.use[5]) { /* the 10-NN lists of ML-kNN and WELL, once */
        nbl = (size_t *)xmalloc(ds.n * KNN * sizeof(size_t));
        ndl = (double *)xmalloc(ds.n * KNN * sizeof(double));
        knn_lists(z, dz, ds.n, nbl, ndl);
        kg = build_knn(nbl, ndl, ds.n);
        have_knn = 1;
    }
    for (i = 0; i < o.nilr; i++)
        for (sp = 0; sp < o.splits; sp++) {
            thin(&ds, o.ilr[i], o.seed + sp * 1000 + i, given);
            for (m = 0; m < ds.c; m++) { /* the true share of each label's positives given */
                size_t tp = 0, gp = 0;
                for (k = 0; k < ds.n; k++) {
                    tp += ds.truth[m + k * ds.c];
                    gp += given[m + k * ds.c];
                }
                true_freq[m] = tp ? (double)gp / (double)tp : 0.0;
                true_mean[i] += true_freq[m] / (double)(ds.c * o.splits);
            }
            o.st.oracle_freq = true_freq;
            o.st.split_seed = o.seed + sp * 1000 + i;
            for (m = 0; m < NMETH; m++) {
                if (!o.use[m])
                    continue;
                if (m == 0) {
                    run_mvel(&ds, (const double *const *)ds.x, ds.d, ds.nv, 1, given, &o.st, scores, pred,
                             est_now);
                    for (k = 0; k < ds.c; k++) {
                        est_mean[i] += est_now[k] / (double)(ds.c * o.splits);
                        est_err[i] += fabs(est_now[k] - true_freq[k]) / (double)(ds.c * o.splits);
                    }
                } else if (m == 1) {
                    const double *zz[1];
                    size_t dd[1];
                    zz[0] = z;
                    dd[0] = dz;
                    run_mvel(&ds, zz, dd, 1, 0, given, &o.st, scores, pred, NULL);
                } else if (m == 2) {
                    run_mlknn(nbl, ds.n, ds.c, given, scores, pred);
                } else if (m == 5) {
                    run_well(&kg, ds.c, given, o.seed + sp * 1000 + i, scores, pred);
                } else if (m == 6) {
                    run_pu_wlr(z, dz, ds.n, ds.c, given, o.seed + sp * 1000 + i, scores, pred);
                } else if (m == 3) {
                    for (k = 0; k < ds.c * ds.n; k++) {
                        scores[k] = given[k];
                        pred[k] = given[k];
                    }
                } else { /* frequent: the given labels plus every label whose given frequency clears the cut */
                    size_t s2, u2;
                    for (s2 = 0; s2 < ds.c; s2++) {
                        double f = 0.0;
                        for (u2 = 0; u2 < ds.n; u2++)
                            f += given[s2 + u2 * ds.c];
                        f /= (double)ds.n;
                        for (u2 = 0; u2 < ds.n; u2++) {
                            k = s2 + u2 * ds.c;
                            pred[k] = given[k] || f >= o.freq_threshold;
                            scores[k] = given[k] ? 1.0 + f : f; /* given first, then by frequency */
                        }
                    }
                }
                score(&ds, scores, given, pred, res[m][i][sp]);
            }
        }

    for (k = 0; k < 5; k++) {
        printf("\n### %s\n\n| method |", METRIC[k]);
        for (i = 0; i < o.nilr; i++)
            printf(" ILR %g%% |", 100.0 * o.ilr[i]);
        printf("\n|---|");
        for (i = 0; i < o.nilr; i++)
            printf("---|");
        printf("\n");
        for (m = 0; m < NMETH; m++) {
            if (!o.use[m])
                continue;
            printf("| %s |", METHOD[m]);
            for (i = 0; i < o.nilr; i++) {
                double mean = 0.0, sd = 0.0;
                for (sp = 0; sp < o.splits; sp++)
                    mean += res[m][i][sp][k] / (double)o.splits;
                for (sp = 0; sp < o.splits; sp++)
                    sd += (res[m][i][sp][k] - mean) * (res[m][i][sp][k] - mean) / (double)o.splits;
                printf(" %.4f ± %.4f |", mean, sqrt(sd));
            }
            printf("\n");
        }
    }
    if (o.use[0] && (o.st.decide == DECIDE_PU || o.st.decide == DECIDE_COUNT)) {
        printf("\nlabel frequency c used by mvel (mean over labels and splits; true = the given share of each "
               "label's positives):");
        for (i = 0; i < o.nilr; i++)
            printf(" ILR %g%%: %.3f (true %.3f, mean |error| %.3f);", 100.0 * o.ilr[i], est_mean[i], true_mean[i],
                   est_err[i]);
        printf("\n");
    }
    printf("\nwall time %.1f s; peak workspace %.1f MiB (plus the graph, %.1f MiB)\n", now() - t0,
           (double)g_peak / 1048576.0,
           (double)(o.st.anchors ? ds.n * o.st.near * 16
                    : o.st.knn  ? ds.n * o.st.knn * 32 + ds.n * 8
                                : ds.n * ds.n * 8) /
               1048576.0);
    for (i = 0; i < ds.nv; i++)
        free(ds.x[i]);
    free(ds.truth);
    free(z);
    if (have_knn)
        free_knn(&kg);
    free(nbl);
    free(ndl);
    free(true_freq);
    free(given);
    free(pred);
    free(scores);
    return 0;
}
