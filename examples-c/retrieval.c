/* retrieval: JSNMF shared-subspace retrieval (seed 004) on any two-corpora
 * directory, through the C ABI.
 *
 *   retrieval [options] DIR
 *
 * DIR holds meta.txt, view1.f64[.gz] (the target corpus) and view2.f64[.gz]
 * (the auxiliary corpus): float64 little-endian, column-major, rows = one
 * shared vocabulary, columns = documents, raw term counts (the format of
 * ../shared/data/ng20_xdomain and of data/ng20-sample).
 *
 * Preprocessing: per corpus, tf-idf (count * ln(N_s / df_t), df within the
 * corpus; a term absent from a corpus weighs 0 there) and unit L2 columns;
 * both corpora are passed to the library as CSC.
 *
 * For each shared dimension K: fit JSNMF on (target, auxiliary), then
 *   * when labels_view1.txt exists, query by example over the target: every
 *     target document (or --queries N of them) is a query, encoded against
 *     [W | U_1] (Algorithm 2), the others ranked by cosine; relevant = same
 *     label; MAP, P@10, P@20 and the 11-point interpolated precision-recall;
 *   * always, a known-item evaluation (a standard IR protocol without
 *     judgements): a query is a random half of one target document's term
 *     occurrences (binomial thinning, tf-idf with the target's idf), the
 *     relevant item that document alone; MRR and success@10.
 *
 * Options: --ks LIST (shared dimensions, e.g. 0,10,20; default 0 to min R in
 * 8 steps), --ranks R1,R2 (default 40,40, so that K = R is the fully
 * shared model; the paper used 60,40 on Flickr), --iters N (JSNMF
 * sweeps, default 200), --seed S (default 1), --queries N (default: all target
 * documents), --pr K (print the 11-point curve of these shared dimensions).
 *
 * Output: the settings, a Markdown table `K | MAP | P@10 | P@20 | MRR |
 * success@10 | fit s` and the wall time. */
#define _POSIX_C_SOURCE 200809L /* popen, clock_gettime */
#define EXAMPLE_NAME "retrieval"
#include "example_io.h"

#define MAXK 64
#define BATCH 64

/* rows and cols of viewV from meta.txt's "viewV.f64... rows=R cols=C" line. */
static void view_shape(const char *dir, int v, size_t *rows, size_t *cols)
{
    char key[32];
    snprintf(key, sizeof key, "view%d.f64", v);
    if (!meta_shape(dir, key, rows, cols) || !*rows || !*cols)
        die("meta.txt has no rows=/cols= for %s", key);
}

static double *read_view(const char *dir, int v, size_t rows, size_t cols)
{
    char name[32];
    snprintf(name, sizeof name, "view%d.f64", v);
    return read_f64(dir, name, rows, cols);
}

/* labels_view1.txt: one integer per line; NULL when the file is absent. */
static int *read_labels(const char *dir, size_t n)
{
    int *l;
    size_t i;
    input_t in;
    if (!open_input(&in, dir, "labels_view1.txt", 0))
        return NULL;
    l = (int *)xmalloc(n * sizeof(int));
    for (i = 0; i < n; i++)
        if (fscanf(in.f, "%d", &l[i]) != 1)
            die("labels_view1.txt: fewer labels than documents");
    close_input(&in);
    return l;
}

/* ---- preprocessing ----------------------------------------------------- */

/* A corpus as tf-idf with unit columns, in CSC. */
typedef struct {
    size_t m, n, nnz;
    size_t *cp, *ri;
    double *val, *idf;
    mvnmf_view view;
} corpus;

static void tfidf(corpus *c, const double *x, size_t m, size_t n)
{
    size_t i, j, p = 0;
    c->m = m;
    c->n = n;
    c->idf = (double *)xmalloc(m * sizeof(double));
    for (i = 0; i < m; i++) {
        size_t df = 0;
        for (j = 0; j < n; j++)
            df += x[i + j * m] > 0.0;
        c->idf[i] = df ? log((double)n / (double)df) : 0.0;
    }
    c->nnz = 0;
    for (j = 0; j < m * n; j++)
        c->nnz += x[j] > 0.0 && c->idf[j % m] > 0.0;
    c->cp = (size_t *)xmalloc((n + 1) * sizeof(size_t));
    c->ri = (size_t *)xmalloc(c->nnz * sizeof(size_t));
    c->val = (double *)xmalloc(c->nnz * sizeof(double));
    for (j = 0; j < n; j++) {
        size_t q0 = p;
        double nn = 0.0;
        c->cp[j] = p;
        for (i = 0; i < m; i++)
            if (x[i + j * m] > 0.0 && c->idf[i] > 0.0) {
                c->ri[p] = i;
                c->val[p] = x[i + j * m] * c->idf[i];
                nn += c->val[p] * c->val[p];
                p++;
            }
        for (; q0 < p; q0++)
            c->val[q0] /= sqrt(nn);
    }
    c->cp[n] = p;
    memset(&c->view, 0, sizeof c->view);
    c->view.kind = MVNMF_VIEW_CSC;
    c->view.rows = m;
    c->view.cols = n;
    c->view.col_ptr = c->cp;
    c->view.row_idx = c->ri;
    c->view.values = c->val;
}

static uint64_t g_rng;
static double uniform(void)
{
    g_rng = g_rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(g_rng >> 11) * (1.0 / 9007199254740992.0);
}

/* Known-item queries: query q is a random half of document doc[q]'s term
 * occurrences (each occurrence kept with probability 1/2), as tf-idf with the
 * target's idf, in the dense m x nq array out. */
static void known_item_queries(const double *x, const corpus *t, const size_t *doc, size_t nq, double *out)
{
    size_t q, i;
    long c, k;
    for (q = 0; q < nq; q++) {
        double *o = out + q * t->m;
        int any = 0;
        do {
            for (i = 0; i < t->m; i++) {
                long kept = 0;
                c = (long)x[i + doc[q] * t->m];
                for (k = 0; k < c; k++)
                    kept += uniform() < 0.5;
                o[i] = (double)kept * t->idf[i];
                any |= o[i] > 0.0;
            }
        } while (!any); /* an empty half: draw again */
    }
}

/* ---- evaluation -------------------------------------------------------- */

typedef struct {
    double map, p10, p20, mrr, s10, pr[11];
    int has_labels;
} scores;

typedef struct {
    size_t k, r[2];
    double *w, *u[2], *h[2];
} model;

/* Ranks the target for `nq` queries (dense m x nq) with `exclude` (or NULL);
 * idx gets n_top per query. */
static void run_queries(const model *md, const corpus *t, const double *q, size_t nq, size_t n_top,
                        const size_t *exclude, size_t *idx)
{
    mvnmf_view v;
    size_t bytes = 0;
    void *w;
    memset(&v, 0, sizeof v);
    v.kind = MVNMF_VIEW_DENSE;
    v.rows = t->m;
    v.cols = nq;
    v.col_stride = t->m;
    v.values = q;
    check(mvnmf_jsnmf_query_workspace(&v, md->r[0], t->n, NULL, &bytes), "query workspace");
    w = xmalloc(bytes);
    check(mvnmf_jsnmf_query(&v, md->k, md->r[0], NULL, md->w, md->u[0], md->h[0], t->n, n_top, exclude, idx,
                            NULL, w, bytes),
          "query");
    free(w);
}

/* The column of the CSC corpus as a dense vector. */
static void column(const corpus *t, size_t j, double *out)
{
    size_t p;
    memset(out, 0, t->m * sizeof(double));
    for (p = t->cp[j]; p < t->cp[j + 1]; p++)
        out[t->ri[p]] = t->val[p];
}

static void by_example(const model *md, const corpus *t, const int *lab, const size_t *qdoc, size_t nq, scores *s)
{
    size_t n = t->n, b, j, i, cut[2] = { 10, 20 };
    double *q = (double *)xmalloc(t->m * BATCH * sizeof(double));
    size_t *idx = (size_t *)xmalloc((n - 1) * BATCH * sizeof(size_t)), excl[BATCH];
    uint8_t *rel = (uint8_t *)xmalloc(n);
    for (b = 0; b < nq; b += BATCH) {
        size_t nb = nq - b < BATCH ? nq - b : BATCH;
        for (j = 0; j < nb; j++) {
            column(t, qdoc[b + j], q + j * t->m);
            excl[j] = qdoc[b + j];
        }
        run_queries(md, t, q, nb, n - 1, excl, idx);
        for (j = 0; j < nb; j++) {
            size_t nrel = 0;
            double ap, pat[2], pr[11];
            for (i = 0; i < n; i++)
                nrel += i != excl[j] && lab[i] == lab[excl[j]];
            for (i = 0; i < n - 1; i++)
                rel[i] = lab[idx[i + j * (n - 1)]] == lab[excl[j]];
            check(mvnmf_ranked_list_metrics(rel, n - 1, nrel, cut, 2, &ap, pat, pr), "metrics");
            s->map += ap / (double)nq;
            s->p10 += pat[0] / (double)nq;
            s->p20 += pat[1] / (double)nq;
            for (i = 0; i < 11; i++)
                s->pr[i] += pr[i] / (double)nq;
        }
    }
    free(q);
    free(idx);
    free(rel);
}

static void known_item(const model *md, const corpus *t, const double *x, const size_t *qdoc, size_t nq,
                       uint64_t seed, scores *s)
{
    size_t n = t->n, b, j, i;
    double *q = (double *)xmalloc(t->m * BATCH * sizeof(double));
    size_t *idx = (size_t *)xmalloc(n * BATCH * sizeof(size_t));
    g_rng = seed * 0x9E3779B97F4A7C15ULL + 17; /* the same queries for every K */
    for (b = 0; b < nq; b += BATCH) {
        size_t nb = nq - b < BATCH ? nq - b : BATCH;
        known_item_queries(x, t, qdoc + b, nb, q);
        run_queries(md, t, q, nb, n, NULL, idx);
        for (j = 0; j < nb; j++) {
            for (i = 0; i < n && idx[i + j * n] != qdoc[b + j]; i++)
                ;
            s->mrr += 1.0 / (double)(i + 1) / (double)nq;
            s->s10 += (i < 10) / (double)nq;
        }
    }
    free(q);
    free(idx);
}

static double fit(model *md, const corpus *c, unsigned iters, uint64_t seed)
{
    mvnmf_view v[2];
    mvnmf_jsnmf_params p = mvnmf_jsnmf_params_default();
    size_t bytes = 0, s;
    double t0 = now();
    void *w;
    v[0] = c[0].view;
    v[1] = c[1].view;
    p.max_iter = iters;
    p.tol = 0.0;
    p.seed = seed;
    md->w = (double *)xmalloc((c[0].m * md->k + 1) * sizeof(double));
    for (s = 0; s < 2; s++) {
        md->u[s] = (double *)xmalloc((c[0].m * (md->r[s] - md->k) + 1) * sizeof(double));
        md->h[s] = (double *)xmalloc(md->r[s] * c[s].n * sizeof(double));
    }
    check(mvnmf_jsnmf_fit_workspace(v, 2, md->k, md->r, &p, &bytes), "fit workspace");
    w = xmalloc(bytes);
    check(mvnmf_jsnmf_fit(v, 2, md->k, md->r, NULL, &p, md->w, md->u, md->h, w, bytes, NULL, NULL, NULL), "fit");
    free(w);
    return now() - t0;
}

static void model_free(model *md)
{
    free(md->w);
    free(md->u[0]);
    free(md->u[1]);
    free(md->h[0]);
    free(md->h[1]);
}

/* ---- options and output ------------------------------------------------ */

typedef struct {
    const char *dir;
    size_t ks[MAXK], nk, r[2], nq, pr[MAXK], npr;
    unsigned iters;
    uint64_t seed;
} options;

static size_t parse_list(const char *s, const char *what, size_t *out, size_t cap)
{
    char tok[64];
    size_t n = 0;
    while (n < cap && next_token(&s, tok, sizeof tok))
        out[n++] = parse_size(tok, what);
    return n;
}

static options parse(int argc, char **argv)
{
    options o;
    int i;
    memset(&o, 0, sizeof o);
    o.r[0] = 40;
    o.r[1] = 40;
    o.iters = 200;
    o.seed = 1;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] != '-') {
            o.dir = a;
            continue;
        }
        if (!v)
            die("missing value for: %s", a);
        if (!strcmp(a, "--ks"))
            o.nk = parse_list(v, a, o.ks, MAXK);
        else if (!strcmp(a, "--ranks") && parse_list(v, a, o.r, 2) == 2)
            ;
        else if (!strcmp(a, "--iters"))
            o.iters = (unsigned)parse_size(v, a);
        else if (!strcmp(a, "--seed"))
            o.seed = parse_size(v, a);
        else if (!strcmp(a, "--queries"))
            o.nq = parse_size(v, a);
        else if (!strcmp(a, "--pr"))
            o.npr = parse_list(v, a, o.pr, MAXK);
        else
            die("unknown option (see the comment at the top of retrieval.c): %s", a);
        i++;
    }
    if (!o.dir)
        die("usage: retrieval [--ks LIST] [--ranks R1,R2] [--iters N] [--seed S] [--queries N] [--pr LIST] DIR");
    if (!o.nk) { /* 0 to min R in 8 steps */
        size_t rmin = o.r[0] < o.r[1] ? o.r[0] : o.r[1], i2;
        for (i2 = 0; i2 <= 8; i2++)
            o.ks[o.nk++] = rmin * i2 / 8;
    }
    return o;
}

static void cell(double v, int ok)
{
    if (ok)
        printf(" %.4f |", v);
    else
        printf(" - |");
}

int main(int argc, char **argv)
{
    options o = parse(argc, argv);
    size_t m, n[2], m2, i, j, *qdoc, skipped;
    double *x[2], t0 = now();
    corpus c[2];
    int *lab;
    view_shape(o.dir, 1, &m, &n[0]);
    view_shape(o.dir, 2, &m2, &n[1]);
    if (m != m2)
        die("the two corpora have different vocabularies (row counts)");
    for (i = 0; i < 2; i++) {
        x[i] = read_view(o.dir, (int)i + 1, m, n[i]);
        tfidf(&c[i], x[i], m, n[i]);
    }
    lab = read_labels(o.dir, n[0]);
    if (!o.nq || o.nq > n[0])
        o.nq = n[0];
    /* The query documents: every (n / nq)-th target document that has a
     * term left after tf-idf (an empty query is MVNMF_STATUS_EMPTY_QUERY). */
    qdoc = (size_t *)xmalloc(o.nq * sizeof(size_t));
    for (i = j = 0; i < o.nq; i++)
        if (c[0].cp[i * n[0] / o.nq + 1] > c[0].cp[i * n[0] / o.nq])
            qdoc[j++] = i * n[0] / o.nq;
    skipped = o.nq - j;
    o.nq = j;
    for (i = 0; i < o.nk; i++)
        if (o.ks[i] > o.r[0] || o.ks[i] > o.r[1])
            die("a shared dimension exceeds a rank (K <= min(R1, R2))");

    printf("# JSNMF retrieval on %s (mvnmf %s)\n\n", o.dir, mvnmf_version());
    printf("* target view1: %zu terms x %zu documents; auxiliary view2: %zu documents\n", m, n[0], n[1]);
    printf("* preprocessing: tf-idf per corpus (ln(N/df)), unit L2 documents, CSC\n");
    printf("* JSNMF: ranks R1=%zu R2=%zu, %u sweeps, seed %llu, default weights\n", o.r[0], o.r[1], o.iters,
           (unsigned long long)o.seed);
    printf("* queries: %zu target documents (%zu empty ones skipped); by example (labels_view1.txt: %s, relevant = same label, query "
           "excluded) and known item (a random half of the document's terms)\n\n",
           o.nq, skipped, lab ? "yes" : "absent");
    printf("| K | MAP | P@10 | P@20 | MRR | success@10 | fit s |\n|---|---|---|---|---|---|---|\n");
    for (i = 0; i < o.nk; i++) {
        model md;
        scores s;
        double tf;
        memset(&md, 0, sizeof md);
        memset(&s, 0, sizeof s);
        md.k = o.ks[i];
        md.r[0] = o.r[0];
        md.r[1] = o.r[1];
        tf = fit(&md, c, o.iters, o.seed);
        if (lab)
            by_example(&md, &c[0], lab, qdoc, o.nq, &s);
        known_item(&md, &c[0], x[0], qdoc, o.nq, o.seed, &s);
        printf("| %zu |", md.k);
        cell(s.map, lab != NULL);
        cell(s.p10, lab != NULL);
        cell(s.p20, lab != NULL);
        cell(s.mrr, 1);
        cell(s.s10, 1);
        printf(" %.1f |\n", tf);
        for (j = 0; j < o.npr && lab; j++)
            if (o.pr[j] == md.k) {
                size_t l;
                printf("|   | 11-point P at recall 0..1:");
                for (l = 0; l < 11; l++)
                    printf(" %.3f", s.pr[l]);
                printf(" | | | | | |\n");
            }
        fflush(stdout);
        model_free(&md);
    }
    printf("\nwall time %.1f s\n", now() - t0);
    for (i = 0; i < 2; i++) {
        free(x[i]);
        free(c[i].cp);
        free(c[i].ri);
        free(c[i].val);
        free(c[i].idf);
    }
    free(lab);
    free(qdoc);
    return 0;
}
