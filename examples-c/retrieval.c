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
 * The paper's setting (--tags T; --noise P, default 0.25; --keywords N,
 * default 40; --lams LIST, the auxiliary's weight relative to equal totals,
 * default 1; --aux same|other): a noisy tagged target helped by an accurate
 * auxiliary, keyword queries, precision at recall 0.1 and P@N next to MAP,
 * K and the weight chosen on held-out queries; see tag_setting() below and
 * scripts/retrieval_tags.py for the tables over seeds.
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

static double fit(model *md, const corpus *c, const double *lam, unsigned iters, uint64_t seed)
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
    check(mvnmf_jsnmf_fit(v, 2, md->k, md->r, lam, &p, md->w, md->u, md->h, w, bytes, NULL, NULL, NULL), "fit");
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
    size_t tags, keywords, nlam;       /* the tag setting (--tags > 0) */
    int aux_other;                     /* --aux other: view2 is the auxiliary */
    double noise, lams[MAXK];
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
    o.keywords = 40;
    o.noise = 0.25;
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
        else if (!strcmp(a, "--tags"))
            o.tags = parse_size(v, a);
        else if (!strcmp(a, "--keywords"))
            o.keywords = parse_size(v, a);
        else if (!strcmp(a, "--noise"))
            o.noise = parse_double(v, a);
        else if (!strcmp(a, "--aux")) {
            if (strcmp(v, "same") && strcmp(v, "other"))
                die("--aux is same or other");
            o.aux_other = !strcmp(v, "other");
        } else if (!strcmp(a, "--lams"))
            o.nlam = parse_doubles(v, a, o.lams, MAXK);
        else
            die("unknown option (see the comment at the top of retrieval.c): %s", a);
        i++;
    }
    if (!o.dir)
        die("usage: retrieval [--ks LIST] [--ranks R1,R2] [--iters N] [--seed S] [--queries N] [--pr LIST] "
            "[--tags T [--noise P] [--keywords N] [--lams LIST] [--aux same|other]] DIR");
    if (o.noise < 0.0 || o.noise >= 1.0)
        die("--noise must be in [0, 1)");
    if (!o.nlam)
        o.lams[o.nlam++] = 1.0;
    if (!o.nk) { /* 0 to min R in 8 steps */
        size_t rmin = o.r[0] < o.r[1] ? o.r[0] : o.r[1], i2;
        for (i2 = 0; i2 <= 8; i2++)
            o.ks[o.nk++] = rmin * i2 / 8;
    }
    return o;
}

/* ---- the paper's setting: noisy tags helped by an accurate corpus -------- */

/* Target item j: up to T distinct terms of document `doc` drawn without
 * replacement with probability proportional to their counts; each drawn tag is
 * then, with probability `noise`, replaced by a term drawn from the corpus'
 * token distribution `cum` (cumulative, m entries) — a function-word-like
 * tag unrelated to the item; a duplicate is dropped. Binary tags in out[m]. */
static void draw_tags(const double *doc, size_t m, size_t t, double noise, const double *cum, double *out)
{
    size_t i, d;
    double mass = 0.0, *left = (double *)xmalloc(m * sizeof(double));
    memset(out, 0, m * sizeof(double));
    for (i = 0; i < m; i++)
        mass += left[i] = doc[i];
    for (d = 0; d < t && mass > 0.0; d++) {
        double u = uniform() * mass, acc = 0.0;
        size_t pick = m - 1, term;
        for (i = 0; i < m; i++) {
            acc += left[i];
            if (left[i] > 0.0 && u < acc) {
                pick = i;
                break;
            }
        }
        while (left[pick] == 0.0) /* rounding at the end of the sum */
            pick--;
        mass -= left[pick];
        left[pick] = 0.0;
        term = pick;
        if (uniform() < noise) {
            double v = uniform() * cum[m - 1];
            for (term = 0; term + 1 < m && cum[term] <= v; term++)
                ;
        }
        out[term] = 1.0;
    }
    free(left);
}

typedef struct {
    double pr01, map, p10, p20;
} kw_scores;

/* Keyword queries `kw[0..nq)` (one term each, weighted by the target's idf)
 * against the target; relevant = the item's full document holds the term. */
static kw_scores keyword_eval(const model *md, const corpus *t, const uint8_t *truth, const size_t *kw, size_t nq)
{
    size_t n = t->n, b, j, i, cut[2] = { 10, 20 };
    double *q = (double *)xmalloc(t->m * BATCH * sizeof(double));
    size_t *idx = (size_t *)xmalloc(n * BATCH * sizeof(size_t));
    uint8_t *rel = (uint8_t *)xmalloc(n);
    kw_scores s = { 0, 0, 0, 0 };
    for (b = 0; b < nq; b += BATCH) {
        size_t nb = nq - b < BATCH ? nq - b : BATCH;
        memset(q, 0, t->m * nb * sizeof(double));
        for (j = 0; j < nb; j++)
            q[kw[b + j] + j * t->m] = t->idf[kw[b + j]];
        run_queries(md, t, q, nb, n, NULL, idx);
        for (j = 0; j < nb; j++) {
            size_t nrel = 0, term = kw[b + j];
            double ap, pat[2], pr[11];
            for (i = 0; i < n; i++)
                nrel += truth[term + i * t->m];
            for (i = 0; i < n; i++)
                rel[i] = truth[term + idx[i + j * n] * t->m];
            check(mvnmf_ranked_list_metrics(rel, n, nrel, cut, 2, &ap, pat, pr), "metrics");
            s.pr01 += pr[1] / (double)nq;
            s.map += ap / (double)nq;
            s.p10 += pat[0] / (double)nq;
            s.p20 += pat[1] / (double)nq;
        }
    }
    free(q);
    free(idx);
    free(rel);
    return s;
}

/* The tag setting (--tags T): the target corpus view1 is shuffled and cut in
 * two halves. The first half becomes the noisy target: each document is
 * reduced to T tags (draw_tags). The second half stays whole: the accurate
 * auxiliary (the paper's LabelMe, about 32 distinct tags per image; these
 * documents hold 45 distinct terms on average). With --aux other, all of
 * view1 becomes the target and view2 (other newsgroups: an external source
 * with its own term distribution, as LabelMe is to Flickr) the auxiliary.
 * Keyword queries are terms
 * whose document frequency among the target's full documents lies in
 * [2 %, 10 %] and that occur in some target tag; relevant = the full document
 * holds the term (the paper's "the concept is clearly visible"). The first
 * half of the queries chooses K and the auxiliary weight, the second half
 * reports. */
static void tag_setting(const options *o, const double *x, size_t m, size_t n, const double *x2, size_t n2)
{
    size_t nt = x2 ? n : n / 2, na = x2 ? n2 : n - nt, i, j, l, nkw = 0, *perm, *cand, ncand = 0, ntune;
    double *xt = (double *)xmalloc(m * nt * sizeof(double)), *xa = (double *)xmalloc(m * na * sizeof(double));
    double *cum = (double *)xmalloc(m * sizeof(double)), tags = 0.0, lam[2], norm2[2], chance = 0.0;
    uint8_t *truth = (uint8_t *)xmalloc(m * nt);
    size_t *kw;
    corpus c[2];
    struct {
        size_t k;
        double lam;
        kw_scores tune, test;
    } *res = xmalloc(o->nk * o->nlam * sizeof(*res));
    size_t nres = 0, best = (size_t)-1, best0 = (size_t)-1, bestr = (size_t)-1;
    g_rng = o->seed * 0xD1B54A32D192ED03ULL + 5;
    perm = (size_t *)xmalloc(n * sizeof(size_t));
    for (i = 0; i < n; i++)
        perm[i] = i;
    for (i = n; i > 1; i--) {
        size_t r = (size_t)(uniform() * (double)i), tmp = perm[i - 1];
        perm[i - 1] = perm[r];
        perm[r] = tmp;
    }
    for (i = 0; i < m; i++) {
        cum[i] = i ? cum[i - 1] : 0.0;
        for (j = 0; j < n; j++)
            cum[i] += x[i + j * m];
    }
    for (j = 0; j < nt; j++) {
        const double *d = x + perm[j] * m;
        draw_tags(d, m, o->tags, o->noise, cum, xt + j * m);
        for (i = 0; i < m; i++) {
            truth[i + j * m] = d[i] > 0.0;
            tags += xt[i + j * m];
        }
    }
    for (j = 0; j < na; j++)
        memcpy(xa + j * m, x2 ? x2 + j * m : x + perm[nt + j] * m, m * sizeof(double));
    tfidf(&c[0], xt, m, nt);
    tfidf(&c[1], xa, m, na);
    cand = (size_t *)xmalloc(m * sizeof(size_t));
    for (i = 0; i < m; i++) {
        size_t df = 0;
        for (j = 0; j < nt; j++)
            df += truth[i + j * m];
        if (df * 50 >= nt && df * 10 <= nt && c[0].idf[i] > 0.0)
            cand[ncand++] = i;
    }
    nkw = o->keywords < ncand ? o->keywords : ncand;
    if (nkw < 2)
        die("fewer than two keyword candidates");
    kw = (size_t *)xmalloc(nkw * sizeof(size_t));
    for (i = 0; i < nkw; i++) { /* a partial shuffle of the candidates */
        size_t r = i + (size_t)(uniform() * (double)(ncand - i)), tmp = cand[i];
        cand[i] = cand[r];
        cand[r] = tmp;
        kw[i] = cand[i];
    }
    ntune = nkw / 2;
    for (i = ntune; i < nkw; i++) { /* a random ranking's MAP is about the share of relevant items */
        for (j = 0; j < nt; j++)
            chance += truth[kw[i] + j * m];
    }
    chance /= (double)nt * (double)(nkw - ntune);
    for (l = 0; l < 2; l++) {
        norm2[l] = 0.0;
        for (j = 0; j < c[l].nnz; j++)
            norm2[l] += c[l].val[j] * c[l].val[j];
    }
    printf("# JSNMF keyword retrieval, the paper's setting (tags), on %s (mvnmf %s)\n\n", o->dir, mvnmf_version());
    printf("* target: %zu documents cut to %.1f tags each on average (at most %zu drawn by count, %.0f %% replaced "
           "by corpus-frequency noise); auxiliary: %s %zu documents, whole\n",
           nt, tags / (double)nt, o->tags, 100.0 * o->noise, x2 ? "view2's" : "the other", na);
    printf("* tf-idf per corpus, unit documents; JSNMF ranks R1=%zu R2=%zu, %u sweeps, seed %llu\n", o->r[0], o->r[1],
           o->iters, (unsigned long long)o->seed);
    printf("* %zu keyword queries (df in [2%%, 10%%] of the target's full documents): %zu choose K and the "
           "auxiliary weight, %zu report; relevant = the full document holds the keyword (share of relevant "
           "items, about a random ranking's MAP: %.4f)\n\n",
           nkw, ntune, nkw - ntune, chance);
    printf("| K | aux weight | tune P@R0.1 | tune MAP | test P@R0.1 | test MAP | test P@10 | test P@20 |\n"
           "|---|---|---|---|---|---|---|---|\n");
    for (l = 0; l < o->nlam; l++)
        for (i = 0; i < o->nk; i++) {
            model md;
            memset(&md, 0, sizeof md);
            md.k = o->ks[i];
            md.r[0] = o->r[0];
            md.r[1] = o->r[1];
            if (md.k == 0 && l > 0)
                continue; /* K = 0: the sources decouple, the weight changes nothing */
            lam[0] = 1.0; /* the default weights (equal totals) times the factor */
            lam[1] = o->lams[l] * norm2[0] / norm2[1];
            fit(&md, c, lam, o->iters, o->seed);
            res[nres].k = md.k;
            res[nres].lam = o->lams[l];
            res[nres].tune = keyword_eval(&md, &c[0], truth, kw, ntune);
            res[nres].test = keyword_eval(&md, &c[0], truth, kw + ntune, nkw - ntune);
            if (md.k == 0)
                printf("| 0 | - |");
            else
                printf("| %zu | %g |", md.k, o->lams[l]);
            printf(" %.4f | %.4f | %.4f | %.4f | %.4f | %.4f |\n", res[nres].tune.pr01,
                   res[nres].tune.map, res[nres].test.pr01, res[nres].test.map, res[nres].test.p10,
                   res[nres].test.p20);
            fflush(stdout);
            model_free(&md);
            nres++;
        }
    /* Selection on the tuning queries by P@R0.1 (ties: MAP), separately for
     * 0 < K < R, K = 0 and K = min R. */
    for (i = 0; i < nres; i++) {
        size_t *slot = res[i].k == 0 ? &best0 : (res[i].k >= o->r[0] || res[i].k >= o->r[1]) ? &bestr : &best;
        if (*slot == (size_t)-1 || res[i].tune.pr01 > res[*slot].tune.pr01 ||
            (res[i].tune.pr01 == res[*slot].tune.pr01 && res[i].tune.map > res[*slot].tune.map))
            *slot = i;
    }
    printf("\n");
    {
        const char *name[3] = { "chosen", "K=0", "K=R" };
        size_t pick[3] = { best, best0, bestr };
        for (i = 0; i < 3; i++)
            if (pick[i] != (size_t)-1)
                printf("select %s K=%zu aux=%g test_pr01=%.4f test_map=%.4f test_p10=%.4f test_p20=%.4f\n", name[i],
                       res[pick[i]].k, res[pick[i]].lam, res[pick[i]].test.pr01, res[pick[i]].test.map,
                       res[pick[i]].test.p10, res[pick[i]].test.p20);
    }
    for (l = 0; l < 2; l++) {
        free(c[l].cp);
        free(c[l].ri);
        free(c[l].val);
        free(c[l].idf);
    }
    free(xt);
    free(xa);
    free(cum);
    free(truth);
    free(kw);
    free(cand);
    free(perm);
    free(res);
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
    if (o.tags) { /* the paper's setting, from the target corpus alone */
        x[0] = read_view(o.dir, 1, m, n[0]);
        x[1] = o.aux_other ? read_view(o.dir, 2, m, n[1]) : NULL;
        tag_setting(&o, x[0], m, n[0], x[1], n[1]);
        free(x[0]);
        free(x[1]);
        printf("\nwall time %.1f s\n", now() - t0);
        return 0;
    }
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
        tf = fit(&md, c, NULL, o.iters, o.seed);
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
