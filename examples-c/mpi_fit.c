/* mpi_fit.c: mvnmf's solvers across MPI ranks (issue 19).
 *
 * Reads a dataset directory (the format of data/mfeat-sample: meta.txt, viewK.f64,
 * labels.txt) sharded over the ranks: rank r reads only its contiguous columns
 * N*r/P .. N*(r+1)/P of every view (dense or CSC for the fit), the ranks shift
 * negative features and scale every view to ||X||_F^2 = N together (the
 * minima and norms reduced: mvnmf_prepare_view's bits on one rank), and runs
 *
 *   joint   joint multi-view NMF           mvnmf_dist_joint_nmf_fit
 *   mcl     MCL: L1,inf + SGE graph + L1   mvnmf_dist_mvsl_fit (MVNMF_MVSL_PRESET_MCL)
 *   mvsl-s  MvSL-S: L1,2 + SGE graph       mvnmf_dist_mvsl_fit (MVNMF_MVSL_PRESET_MVSL)
 *   mvsl-t  MvSL-T: L1,2 + TGE graph       mvnmf_dist_mvsl_fit (MVNMF_MVSL_PRESET_MVSL)
 *
 * with the library's allreduce callback = MPI_Allreduce(MPI_IN_PLACE, ..., MPI_SUM)
 * (or, with --fixed-order, an MPI_Allgather summed in rank order: the same sum on
 * every rank by construction) and, for MvSL-T, its exchange callback =
 * MPI_Alltoallv: the TGE graph has edges between items of different ranks, so
 * each V-step reads the neighbours' columns of V from their ranks (the halo).
 * The TGE graph itself (RBF kernels with the median bandwidth, uniform fusion
 * weights, default neighbourhoods, as mvnmf_tge builds it) is built across the
 * ranks by mvnmf_dist_tge: each rank finds the neighbours of its own items
 * against all items, the other ranks' columns streamed to it block by block
 * (allgather callback = MPI_Allgatherv), and gets its rows of the graph.
 *
 * The labeled items of the SGE graph: a stratified split (mvnmf_stratified_split,
 * --labeled fraction, seed 1) computed identically on every rank.
 *
 * TGE's affinity links each labeled item to ka same-class neighbours, so every
 * class needs more than ka labeled items (else MVNMF_STATUS_TOO_FEW_LABELED).
 * The library's default ka = 5 needs 6 per class; the default --labeled 0.1
 * gives data/mfeat-sample (50 items per class) 5. So, unless --ka says
 * otherwise, ka is the library's default lowered to (fewest labeled items of a
 * labeled class) - 1, and rank 0 says so; --ka K sets it (and fails like the
 * library if too large).
 *
 * Rank 0 gathers V and writes OUT (float64: V, K x N column-major, then U_1 .. U_H)
 * and OUT.trace (the objective per iteration), checks that the objective never
 * rises (tolerance 1e-10 * 1/2 sum ||X||^2), and prints the time per iteration and
 * the words each rank passed to the allreduce per iteration, next to the model
 * (mvnmf_dist_words_per_iteration).
 *
 *   --replicate R   the items R times over (R*N items, for timing)
 *   --comm-bench    after the fit, time 200 allreduce calls of one iteration's words
 *                   (the communication term of the model alone)
 *   --single        no sharding: the single-process library call (mvnmf_joint_nmf_fit,
 *                   mvnmf_mvsl_fit with the SGE graph, or mvnmf_tge's graph, over all
 *                   items); run with 1 rank
 *   --check-graph   mvsl-t: every rank also builds the graph over all items with
 *                   mvnmf_tge and exits 1 unless its rows equal the sharded ones bit
 *                   for bit (--graph approx: unless the penalty rows are equal and
 *                   the affinity rows hold at least 95 % of mvnmf_tge's entries;
 *                   rank 0 prints that recall)
 *   --graph exact|approx
 *                   mvsl-t: the graph across ranks by mvnmf_dist_tge (exact, the
 *                   default) or by mvnmf_dist_tge_approx (issue 30 item 4: NN-descent
 *                   with the items sharded, mvnmf_ann_params_default() with --ann-k;
 *                   each rank holds only its columns); with --single, mvnmf_tge or
 *                   mvnmf_tge_build with MVNMF_GRAPH_BUILD_APPROX
 *   --compare REF   compare OUT with the file REF (and the traces): exit 1 unless
 *                   they agree to 1e-10 relative
 *   --lie graph|fit --lie-rank R --lie-call C
 *                   issue 31 (E7): on rank R, the C-th exchange call (0-based) of
 *                   mvnmf_dist_tge (graph) or of mvnmf_dist_mvsl_fit (fit) takes
 *                   part in MPI_Alltoallv but returns 0 without writing its receive
 *                   buffer; every rank must return (the caller's timeout says if one
 *                   waits), rank R with MVNMF_STATUS_COMM_FAILED and every other with
 *                   MVNMF_STATUS_PEER_FAILED: exit 0 then, 1 otherwise
 *
 * usage: mpirun -np P mpi_fit [--method joint|mcl|mvsl-s|mvsl-t] [--csc] [--k K]
 *        [--iters N] [--labeled F] [--ka K] [--alpha A] [--no-monitor] [--fixed-order] [--replicate R] [--comm-bench]
 *        [--single] [--check-graph] [--graph exact|approx] [--out FILE] [--compare REF] [--lie graph|fit --lie-rank R --lie-call C] DIR */
#define _POSIX_C_SOURCE 200809L
#define EXAMPLE_NAME "mpi_fit"
#include <limits.h>
#include <mpi.h>

#include "example_io.h"

#define MAX_VIEWS 16

typedef struct {
    MPI_Comm comm;
    int fixed_order;
    int ranks;
    double *gather; /* --fixed-order: ranks x len */
    size_t gather_len;
    double seconds; /* spent in the callbacks */
    int *sc, *sd, *rc, *rd; /* MPI_Alltoallv counts and displacements */
    int lying;              /* --lie: this rank's exchange lies at call `lie_call` */
    size_t lie_call, ex_calls;
} comm_ctx;

/* Sum `buf` over the ranks in place. */
static int allreduce_impl(double *buf, size_t len, comm_ctx *c)
{
    if (len > (size_t)INT_MAX) return 1;
    if (!c->fixed_order)
        return MPI_Allreduce(MPI_IN_PLACE, buf, (int)len, MPI_DOUBLE, MPI_SUM, c->comm) != MPI_SUCCESS;
    if (len * (size_t)c->ranks > c->gather_len) {
        free(c->gather);
        c->gather_len = len * (size_t)c->ranks;
        c->gather = (double *)xcalloc(c->gather_len, sizeof(double));
    }
    if (MPI_Allgather(buf, (int)len, MPI_DOUBLE, c->gather, (int)len, MPI_DOUBLE, c->comm) != MPI_SUCCESS) return 1;
    for (size_t i = 0; i < len; i++) {
        double s = 0.0;
        for (int r = 0; r < c->ranks; r++) s += c->gather[(size_t)r * len + i];
        buf[i] = s;
    }
    return 0;
}

/* The library's exchange (MvSL-T's halo): MPI_Alltoallv. */
static int exchange(const double *send, const size_t *send_counts, double *recv, const size_t *recv_counts, void *ctx)
{
    comm_ctx *c = (comm_ctx *)ctx;
    double t0 = MPI_Wtime();
    size_t so = 0, ro = 0;
    for (int r = 0; r < c->ranks; r++) {
        if (send_counts[r] > (size_t)INT_MAX || recv_counts[r] > (size_t)INT_MAX || so > (size_t)INT_MAX ||
            ro > (size_t)INT_MAX)
            return 1;
        c->sc[r] = (int)send_counts[r], c->sd[r] = (int)so, so += send_counts[r];
        c->rc[r] = (int)recv_counts[r], c->rd[r] = (int)ro, ro += recv_counts[r];
    }
    if (c->lying && c->ex_calls++ == c->lie_call) {
        /* --lie: the data move, this rank's receive buffer stays as it was. */
        double *scratch = (double *)xcalloc(ro ? ro : 1, sizeof(double));
        int e = MPI_Alltoallv(send, c->sc, c->sd, MPI_DOUBLE, scratch, c->rc, c->rd, MPI_DOUBLE, c->comm);
        free(scratch);
        (void)e;
        return 0;
    }
    int e = MPI_Alltoallv(send, c->sc, c->sd, MPI_DOUBLE, recv, c->rc, c->rd, MPI_DOUBLE, c->comm);
    c->seconds += MPI_Wtime() - t0;
    return e != MPI_SUCCESS;
}

/* --lie: every rank's status to rank 0, which checks the liar's COMM_FAILED
 * and the others' PEER_FAILED; exits the program (0 when they agree). */
static void lie_verdict(mvnmf_status st, int rank, int ranks, int lie_rank, const char *what)
{
    int mine = (int)st, ok = 1;
    int *all = (int *)xcalloc((size_t)ranks, sizeof(int));
    MPI_Gather(&mine, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; r < ranks; r++) {
            int want = r == lie_rank ? (int)MVNMF_STATUS_COMM_FAILED : (int)MVNMF_STATUS_PEER_FAILED;
            if (all[r] != want) ok = 0;
            printf("mpi_fit: --lie %s: rank %d returned %s%s\n", what, r, mvnmf_status_message((uint32_t)all[r]),
                   all[r] == want ? "" : " (unexpected)");
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(all);
    MPI_Finalize();
    exit(ok ? 0 : 1);
}

/* The library's all-gather (the graph build's streamed columns): MPI_Allgatherv. */
static int allgather(const double *part, size_t part_len, double *out, const size_t *counts, void *ctx)
{
    comm_ctx *c = (comm_ctx *)ctx;
    double t0 = MPI_Wtime();
    size_t o = 0;
    for (int r = 0; r < c->ranks; r++) {
        if (counts[r] > (size_t)INT_MAX || o > (size_t)INT_MAX) return 1;
        c->rc[r] = (int)counts[r], c->rd[r] = (int)o, o += counts[r];
    }
    if (part_len > (size_t)INT_MAX) return 1;
    int e = MPI_Allgatherv(part, (int)part_len, MPI_DOUBLE, out, c->rc, c->rd, MPI_DOUBLE, c->comm);
    c->seconds += MPI_Wtime() - t0;
    return e != MPI_SUCCESS;
}

/* The library's allreduce: sum `buf` over the ranks in place (timed). */
static int allreduce(double *buf, size_t len, void *ctx)
{
    comm_ctx *c = (comm_ctx *)ctx;
    double t0 = MPI_Wtime();
    int r = allreduce_impl(buf, len, c);
    c->seconds += MPI_Wtime() - t0;
    return r;
}

typedef struct {
    double *obj;
    size_t n, cap;
} trace_t;

static int record(const mvnmf_progress *p, void *user)
{
    trace_t *t = (trace_t *)user;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 256;
        double *o = (double *)xcalloc(cap, sizeof(double));
        if (t->n) memcpy(o, t->obj, t->n * sizeof(double));
        free(t->obj);
        t->obj = o;
        t->cap = cap;
    }
    t->obj[t->n++] = p->objective.total;
    return 0;
}

static double max_rel_diff(const double *a, const double *b, size_t n)
{
    double scale = 0.0, d = 0.0;
    for (size_t i = 0; i < n; i++) {
        scale = fmax(scale, fmax(fabs(a[i]), fabs(b[i])));
        d = fmax(d, fabs(a[i] - b[i]));
    }
    return scale > 0.0 ? d / scale : d;
}

static double *read_doubles(const char *path, size_t n)
{
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot open %s", path);
    double *x = (double *)xcalloc(n, sizeof(double));
    if (fread(x, sizeof(double), n, f) != n) die("%s: expected %zu doubles", path, n);
    fclose(f);
    return x;
}

/* Reads the columns c0 .. c1 of the items of dir/file[.gz] (rows x n
 * little-endian doubles, column-major), item j being the file's column j mod n
 * (--replicate): only the file's columns from the first needed on are read
 * (a plain file is entered with fseek; a gzipped one is streamed), and only
 * the rank's are kept. */
static double *read_cols(const char *dir, const char *file, size_t rows, size_t n, size_t c0, size_t c1)
{
    unsigned char b8[8];
    input_t in;
    size_t nr = c1 - c0;
    if (rows && (nr > SIZE_MAX / rows / sizeof(double) || n > SIZE_MAX / rows / sizeof(double)))
        die("%s/%s: %zu x %zu doubles do not fit in memory", dir, file, rows, nr);
    /* The file's columns needed: [f0, f1) (all of them when the range wraps). */
    size_t f0 = 0, f1 = n;
    if (nr && nr < n && c0 % n < (c1 - 1) % n + 1) f0 = c0 % n, f1 = (c1 - 1) % n + 1;
    if (nr == 0) f0 = f1 = 0;
    double *col = (double *)xcalloc(rows * (f1 - f0) + 1, sizeof(double));
    double *x = (double *)xcalloc(rows * nr + 1, sizeof(double));
    open_input(&in, dir, file, 1);
    size_t skip = f0 * rows;
    if (!in.gz) {
        if (fseek(in.f, 0, SEEK_END) != 0) die("%s: cannot seek", in.path);
        long end = ftell(in.f);
        if (end < 0 || (unsigned long)end != (unsigned long)(rows * n * 8))
            die("%s: %ld bytes, not %zu x %zu doubles: is rows/cols in meta.txt right?", in.path, end, rows, n);
        if (fseek(in.f, (long)(skip * 8), SEEK_SET) != 0) die("%s: cannot seek", in.path);
        skip = 0;
    }
    for (size_t i = 0; i < skip + rows * (f1 - f0); i++) {
        if (fread(b8, 1, 8, in.f) != 8) die("%s: expected %zu x %zu doubles, the file is shorter", in.path, rows, n);
        if (i < skip) continue;
        uint64_t u = 0;
        for (int q = 7; q >= 0; q--) u = (u << 8) | b8[q];
        memcpy(&col[i - skip], &u, 8);
    }
    if (in.gz)
        while (fread(b8, 1, 8, in.f) == 8) {
        } /* the rest of the stream (gzip must not see a closed pipe) */
    close_input(&in);
    for (size_t j = c0; j < c1; j++)
        memcpy(x + (j - c0) * rows, col + (j % n - f0) * rows, rows * sizeof(double));
    free(col);
    return x;
}

/* mvnmf_prepare_view (shift by each feature's minimum when negative, scale to
 * ||X||_F^2 = N) across the ranks: this rank's nr columns x (and, when given,
 * all N columns xf, with the same shift and scale), the minima and the
 * squared norm reduced over the ranks. One rank gives mvnmf_prepare_view's bits. */
static void prepare_shard(double *x, double *xf, size_t rows, size_t nr, size_t n)
{
    double *lo = (double *)xcalloc(rows, sizeof(double)), ss = 0.0;
    for (size_t r = 0; r < rows; r++) {
        lo[r] = INFINITY;
        for (size_t j = 0; j < nr; j++) {
            double v = x[j * rows + r];
            if (!isfinite(v)) die("a non-finite value in view data (feature %zu)", r);
            if (v < lo[r]) lo[r] = v;
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, lo, (int)rows, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    for (size_t r = 0; r < rows; r++) {
        if (!(lo[r] < 0.0)) continue;
        for (size_t j = 0; j < nr; j++) x[j * rows + r] -= lo[r];
        for (size_t j = 0; xf && j < n; j++) xf[j * rows + r] -= lo[r];
    }
    for (size_t t = 0; t < rows * nr; t++) ss += x[t] * x[t];
    MPI_Allreduce(MPI_IN_PLACE, &ss, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (!(ss > 0.0) || !isfinite(ss)) die("a view is all zero after the shift, or too large");
    double scale = sqrt((double)n / ss);
    for (size_t t = 0; t < rows * nr; t++) x[t] *= scale;
    for (size_t t = 0; xf && t < rows * n; t++) xf[t] *= scale;
    free(lo);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);

    const char *method = "joint", *out = NULL, *compare = NULL, *dir = NULL, *lie = NULL;
    int lie_rank = -1;
    size_t lie_call = 0;
    int csc = 0, monitor = 1, fixed_order = 0, single = 0, comm_bench = 0, check_graph = 0;
    size_t k = 10, iters = 100, replicate = 1, ka = 0; /* ka 0: from the labels (above) */
    double labeled = 0.1, alpha = -1.0;
    int approx = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(a, "--method") && more) method = argv[++i];
        else if (!strcmp(a, "--csc")) csc = 1;
        else if (!strcmp(a, "--k") && more) k = parse_size(argv[++i], "--k");
        else if (!strcmp(a, "--iters") && more) iters = parse_size(argv[++i], "--iters");
        else if (!strcmp(a, "--labeled") && more) labeled = parse_double(argv[++i], "--labeled");
        else if (!strcmp(a, "--ka") && more) {
            ka = parse_size(argv[++i], "--ka");
            if (!ka) die("--ka: at least 1");
        } else if (!strcmp(a, "--alpha") && more) alpha = parse_double(argv[++i], "--alpha");
        else if (!strcmp(a, "--replicate") && more) replicate = parse_size(argv[++i], "--replicate");
        else if (!strcmp(a, "--no-monitor")) monitor = 0;
        else if (!strcmp(a, "--fixed-order")) fixed_order = 1;
        else if (!strcmp(a, "--single")) single = 1;
        else if (!strcmp(a, "--check-graph")) check_graph = 1;
        else if (!strcmp(a, "--graph") && more) {
            const char *gm = argv[++i];
            if (!strcmp(gm, "approx")) approx = 1;
            else if (strcmp(gm, "exact")) die("--graph: exact or approx");
        }
        else if (!strcmp(a, "--comm-bench")) comm_bench = 1;
        else if (!strcmp(a, "--out") && more) out = argv[++i];
        else if (!strcmp(a, "--compare") && more) compare = argv[++i];
        else if (!strcmp(a, "--lie") && more) lie = argv[++i];
        else if (!strcmp(a, "--lie-rank") && more) lie_rank = (int)parse_size(argv[++i], "--lie-rank");
        else if (!strcmp(a, "--lie-call") && more) lie_call = parse_size(argv[++i], "--lie-call");
        else if (a[0] != '-' && !dir) dir = a;
        else die("unknown argument '%s' (see the comment at the top of mpi_fit.c)", a);
    }
    if (!dir) die("usage: mpirun -np P mpi_fit [options] DIR");
    int joint = !strcmp(method, "joint"), mcl = !strcmp(method, "mcl"), mvsl_s = !strcmp(method, "mvsl-s"),
        mvsl_t = !strcmp(method, "mvsl-t");
    if (!joint && !mcl && !mvsl_s && !mvsl_t) die("--method: joint, mcl, mvsl-s or mvsl-t");
    int lie_graph = lie && !strcmp(lie, "graph"), lie_fit = lie && !strcmp(lie, "fit");
    if (lie && ((!lie_graph && !lie_fit) || !mvsl_t || single || lie_rank < 0 || lie_rank >= ranks))
        die("--lie graph|fit needs --method mvsl-t, several ranks and --lie-rank below them");
    if (single && ranks != 1) die("--single runs the single-process library call: use 1 rank");

    /* The views' shapes; then every rank reads only its columns of every view
     * (read_cols) and the ranks prepare them together (prepare_shard: the
     * features' minima and the views' squared norms reduced over the ranks).
     * --single reads everything and prepares it with mvnmf_prepare_view (the
     * single-process reference); --check-graph also reads every column, to
     * build mvnmf_tge's graph over all items, prepared with the reduced
     * minima and scale (so its columns are the shards' bit for bit). */
    size_t h = 0, n = 0, rows[MAX_VIEWS];
    double *x[MAX_VIEWS], *xf[MAX_VIEWS], half = 0.0;
    for (;; h++) {
        char file[64];
        snprintf(file, sizeof file, "view%zu.f64", h + 1);
        size_t r = 0, c = 0;
        if (!meta_shape(dir, file, &r, &c)) break;
        if (h == MAX_VIEWS) die("more than %d views", MAX_VIEWS);
        if (n && c != n) die("%s: %zu items, view1 has %zu", file, c, n);
        n = c;
        rows[h] = r;
    }
    if (!h) die("%s: no view1.f64 in meta.txt", dir);
    if (replicate < 1) die("--replicate: at least 1");
    /* This rank's columns (of the R*N items with --replicate: item j is the file's j mod N). */
    size_t a = single ? 0 : n * replicate * (size_t)rank / (size_t)ranks,
           b = single ? n * replicate : n * replicate * (size_t)(rank + 1) / (size_t)ranks;
    size_t nr = b - a;
    for (size_t v = 0; v < h; v++) {
        char file[64];
        snprintf(file, sizeof file, "view%zu.f64", v + 1);
        x[v] = read_cols(dir, file, rows[v], n, a, b);
        xf[v] = check_graph && !single ? read_cols(dir, file, rows[v], n, 0, n * replicate) : NULL;
        if (single) {
            mvnmf_prep_params pp = mvnmf_prep_params_default();
            pp.shift = 1;
            CALL(mvnmf_prepare_view, rows[v], nr, x[v], &pp, NULL);
        } else {
            prepare_shard(x[v], xf[v], rows[v], nr, n * replicate);
        }
        for (size_t t = 0; t < rows[v] * nr; t++) half += 0.5 * x[v][t] * x[v][t];
    }
    MPI_Allreduce(MPI_IN_PLACE, &half, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    size_t n0 = n;
    n *= replicate;
    uint32_t *labels = (uint32_t *)xcalloc(n, sizeof(uint32_t)), *train = (uint32_t *)xcalloc(n, sizeof(uint32_t));
    size_t classes = 0;
    {
        char path[4096];
        snprintf(path, sizeof path, "%s/labels.txt", dir);
        FILE *f = fopen(path, "r");
        if (!f && !joint) die("cannot open %s", path);
        for (size_t j = 0; f && j < n0; j++) {
            unsigned long l;
            if (fscanf(f, "%lu", &l) != 1) die("%s: expected %zu labels", path, n0);
            for (size_t q = 0; q < replicate; q++) labels[j + q * n0] = (uint32_t)l;
            if (l + 1 > classes) classes = l + 1;
        }
        if (f) fclose(f);
    }
    if (!joint) {
        size_t wb;
        CALL(mvnmf_stratified_split_workspace, n, &wb);
        void *w = xmalloc(wb);
        uint8_t *flag = (uint8_t *)xcalloc(n, 1);
        CALL(mvnmf_stratified_split, labels, n, classes, labeled, 1, flag, w, wb);
        for (size_t j = 0; j < n; j++) train[j] = flag[j] ? labels[j] : MVNMF_UNLABELED;
        free(flag);
        free(w);
    }

    mvnmf_view views[MAX_VIEWS];
    for (size_t v = 0; v < h; v++) {
        const double *col = x[v];
        if (csc) {
            double frac;
            views[v] = dense_to_csc(col, rows[v], nr, rows[v], &frac);
        } else {
            mvnmf_view d = { MVNMF_VIEW_DENSE, rows[v], nr, col, rows[v], NULL, NULL };
            views[v] = d;
        }
    }
    double *u[MAX_VIEWS];
    size_t sum_rows = 0;
    for (size_t v = 0; v < h; v++) u[v] = (double *)xcalloc(rows[v] * k, sizeof(double)), sum_rows += rows[v];
    double *vr = (double *)xcalloc(k * nr, sizeof(double));

    mvnmf_nmf_params np = mvnmf_nmf_params_default();
    np.max_iter = (uint32_t)iters;
    np.tol = 0.0;
    mvnmf_mvsl_params mp;
    CALL(mvnmf_mvsl_params_preset, mcl ? MVNMF_MVSL_PRESET_MCL : MVNMF_MVSL_PRESET_MVSL, &mp);
    mp.max_iter = (uint32_t)iters;
    mp.tol = 0.0;
    if (alpha >= 0.0) mp.alpha = alpha;
    mvnmf_graph g = { MVNMF_GRAPH_SGE, nr, train + a, classes, NULL, NULL, NULL, NULL, NULL, NULL };
    comm_ctx cc = { MPI_COMM_WORLD, fixed_order, ranks, NULL, 0, 0.0, NULL, NULL, NULL, NULL, 0, lie_call, 0 };
    cc.sc = (int *)xcalloc((size_t)ranks, sizeof(int)), cc.sd = (int *)xcalloc((size_t)ranks, sizeof(int));
    cc.rc = (int *)xcalloc((size_t)ranks, sizeof(int)), cc.rd = (int *)xcalloc((size_t)ranks, sizeof(int));
    mvnmf_dist_comm comm = { allreduce, exchange, &cc, (size_t)rank, (size_t)ranks, allgather };
    mvnmf_dist_graph_traffic gtraffic;
    memset(&gtraffic, 0, sizeof gtraffic);
    double graph_secs = 0.0, graph_recall = -1.0;
    int graph_fail = 0;
    if (mvsl_t) {
        /* The TGE graph: RBF kernels (median bandwidth), uniform weights, the
         * default neighbourhoods. --single: mvnmf_tge over all items; else each
         * rank builds its rows with mvnmf_dist_tge (and, with --check-graph,
         * compares them with mvnmf_tge's rows over all items). */
        mvnmf_kernel kern[MAX_VIEWS];
        double eta[MAX_VIEWS];
        for (size_t v = 0; v < h; v++) {
            kern[v].kind = MVNMF_KERNEL_RBF, kern[v].gamma = 0.0;
            eta[v] = 1.0 / (double)h;
        }
        mvnmf_graph_params gp = mvnmf_graph_params_default();
        if (ka) {
            gp.ka = ka;
        } else {
            /* The fewest labeled items of a class that has any (the split is
             * the same on every rank). */
            size_t *count = (size_t *)xcalloc(classes, sizeof(size_t)), fewest = 0;
            for (size_t j = 0; j < n; j++)
                if (train[j] != MVNMF_UNLABELED) count[train[j]]++;
            for (size_t c = 0; c < classes; c++)
                if (count[c] && (!fewest || count[c] < fewest)) fewest = count[c];
            free(count);
            if (fewest < 2) die("--labeled %g: a class has %zu labeled item(s); TGE needs 2 (raise --labeled)", labeled, fewest);
            if (gp.ka >= fewest) {
                if (rank == 0)
                    printf("mvsl-t: ka = %zu (a class has only %zu labeled items; the default %zu needs %zu; --ka sets it)\n",
                           fewest - 1, fewest, gp.ka, gp.ka + 1);
                gp.ka = fewest - 1;
            }
        }
        size_t ca, cp, gw, ann, pnn;
        mvnmf_ann_params annp = mvnmf_ann_params_default();
        mvnmf_csr_buffers full_a = { NULL, NULL, NULL, 0 }, full_p = { NULL, NULL, NULL, 0 };
        if (single || check_graph) {
            mvnmf_view full[MAX_VIEWS];
            for (size_t v = 0; v < h; v++) {
                mvnmf_view d = { MVNMF_VIEW_DENSE, rows[v], n, single ? x[v] : xf[v], rows[v], NULL, NULL };
                full[v] = d;
            }
            CALL(mvnmf_tge_capacity, n, classes, &gp, &ca, &cp);
            if (single && approx)
                CALL(mvnmf_tge_build_workspace, full, h, kern, classes, &gp, MVNMF_GRAPH_BUILD_APPROX, &annp, &gw);
            else
                CALL(mvnmf_tge_workspace, full, h, kern, classes, &gp, &gw);
            mvnmf_csr_buffers ab = { (size_t *)xcalloc(n + 1, sizeof(size_t)), (size_t *)xcalloc(ca, sizeof(size_t)),
                                     (double *)xcalloc(ca, sizeof(double)), ca };
            mvnmf_csr_buffers pb = { (size_t *)xcalloc(n + 1, sizeof(size_t)), (size_t *)xcalloc(cp, sizeof(size_t)),
                                     (double *)xcalloc(cp, sizeof(double)), cp };
            void *w = xmalloc(gw);
            if (single && approx)
                CALL(mvnmf_tge_build, full, h, kern, eta, train, classes, &gp, MVNMF_GRAPH_BUILD_APPROX, &annp, &ab,
                     &pb, &ann, &pnn, w, gw);
            else
                CALL(mvnmf_tge, full, h, kern, eta, train, classes, &gp, &ab, &pb, &ann, &pnn, w, gw);
            free(w);
            full_a = ab, full_p = pb;
        }
        if (single) {
            mvnmf_graph t = { MVNMF_GRAPH_CSR, n, NULL, 0, full_a.row_ptr, full_a.col_idx, full_a.weights,
                              full_p.row_ptr, full_p.col_idx, full_p.weights };
            g = t;
        } else {
            /* Only this rank's columns (dense, whatever --csc says for the fit). */
            mvnmf_view mine[MAX_VIEWS];
            for (size_t v = 0; v < h; v++) {
                mvnmf_view d = { MVNMF_VIEW_DENSE, rows[v], nr, x[v], rows[v], NULL, NULL };
                mine[v] = d;
            }
            CALL(mvnmf_dist_tge_capacity, n, nr, classes, &gp, &ca, &cp);
            if (approx)
                CALL(mvnmf_dist_tge_approx_workspace, mine, h, kern, train, n, classes, (size_t)ranks, &gp, &annp,
                     &gw);
            else
                CALL(mvnmf_dist_tge_workspace, mine, h, kern, train, n, classes, (size_t)ranks, &gp, &gw);
            mvnmf_csr_buffers ab = { (size_t *)xcalloc(nr + 1, sizeof(size_t)), (size_t *)xcalloc(ca, sizeof(size_t)),
                                     (double *)xcalloc(ca, sizeof(double)), ca };
            mvnmf_csr_buffers pb = { (size_t *)xcalloc(nr + 1, sizeof(size_t)), (size_t *)xcalloc(cp, sizeof(size_t)),
                                     (double *)xcalloc(cp, sizeof(double)), cp };
            void *w = xmalloc(gw);
            MPI_Barrier(MPI_COMM_WORLD);
            double g0 = now();
            cc.lying = lie_graph && rank == lie_rank;
            mvnmf_status gst =
                approx ? mvnmf_dist_tge_approx(&comm, mine, h, kern, eta, train, n, classes, &gp, &annp, &ab, &pb,
                                               &ann, &pnn, w, gw, &gtraffic)
                       : mvnmf_dist_tge(&comm, mine, h, kern, eta, train, n, classes, &gp, &ab, &pb, &ann, &pnn, w,
                                        gw, &gtraffic);
            cc.lying = 0;
            if (lie_graph) lie_verdict(gst, rank, ranks, lie_rank, "graph");
            check(gst, approx ? "mvnmf_dist_tge_approx" : "mvnmf_dist_tge");
            graph_secs = now() - g0;
            free(w);
            if (check_graph) {
                /* This rank's rows of the graph over all items, bit for bit. */
                const mvnmf_csr_buffers *sh[2] = { &ab, &pb }, *fu[2] = { &full_a, &full_p };
                if (approx) {
                    /* The affinity: the entries of mvnmf_tge's rows this rank holds. */
                    size_t base = full_a.row_ptr[a], hit = 0, all = full_a.row_ptr[b] - base;
                    for (size_t j = 0; j < nr; j++)
                        for (size_t t = full_a.row_ptr[a + j]; t < full_a.row_ptr[a + j + 1]; t++)
                            for (size_t u2 = ab.row_ptr[j]; u2 < ab.row_ptr[j + 1]; u2++)
                                if (ab.col_idx[u2] == full_a.col_idx[t]) {
                                    hit++;
                                    break;
                                }
                    double hits[2] = { (double)hit, (double)all }, tot[2];
                    MPI_Allreduce(hits, tot, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                    graph_recall = tot[0] / tot[1];
                    if (graph_recall < 0.95) graph_fail = 1;
                }
                for (int q = approx ? 1 : 0; q < 2; q++) {
                    size_t base = fu[q]->row_ptr[a], m = fu[q]->row_ptr[b] - base;
                    int same = m == (q ? pnn : ann);
                    for (size_t j = 0; same && j <= nr; j++) same = sh[q]->row_ptr[j] == fu[q]->row_ptr[a + j] - base;
                    for (size_t t = 0; same && t < m; t++)
                        same = sh[q]->col_idx[t] == fu[q]->col_idx[base + t] &&
                               memcmp(&sh[q]->weights[t], &fu[q]->weights[base + t], sizeof(double)) == 0;
                    if (!same) {
                        fprintf(stderr, "mpi_fit: rank %d: the sharded %s rows differ from mvnmf_tge's\n", rank,
                                q ? "penalty" : "affinity");
                        graph_fail = 1;
                    }
                }
            }
            mvnmf_graph t = { MVNMF_GRAPH_CSR, nr, NULL, 0, ab.row_ptr, ab.col_idx, ab.weights,
                              pb.row_ptr, pb.col_idx, pb.weights };
            g = t;
        }
    }

    trace_t tr = { NULL, 0, 0 };
    mvnmf_progress_fn prog = monitor ? record : NULL;
    mvnmf_report rep;
    mvnmf_dist_traffic traffic;
    memset(&traffic, 0, sizeof traffic);
    size_t wb;
    buf_t work = { NULL, 0 };
    mvnmf_status st;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    if (single && joint) {
        CALL(mvnmf_joint_nmf_fit_workspace, views, h, k, &np, &wb);
        st = mvnmf_joint_nmf_fit(views, h, k, &np, u, vr, grow(&work, wb), wb, prog, &tr, &rep);
    } else if (single) {
        CALL(mvnmf_mvsl_fit_workspace, views, h, &g, k, &mp, &wb);
        st = mvnmf_mvsl_fit(views, h, &g, k, &mp, u, vr, grow(&work, wb), wb, prog, &tr, &rep);
    } else if (joint) {
        CALL(mvnmf_dist_joint_nmf_fit_workspace, views, h, k, (size_t)ranks, &np, &wb);
        st = mvnmf_dist_joint_nmf_fit(&comm, views, h, k, &np, u, vr, grow(&work, wb), wb, prog, &tr, &rep,
                                      &traffic);
    } else {
        CALL(mvnmf_dist_mvsl_fit_workspace, views, h, &g, k, (size_t)ranks, &mp, &wb);
        cc.lying = lie_fit && rank == lie_rank;
        st = mvnmf_dist_mvsl_fit(&comm, views, h, &g, k, &mp, u, vr, grow(&work, wb), wb, prog, &tr, &rep,
                                 &traffic);
        cc.lying = 0;
        if (lie_fit) lie_verdict(st, rank, ranks, lie_rank, "fit");
    }
    double secs = now() - t0;
    check_at(st, &rep, "the fit");
    double tmax, cmax;
    MPI_Reduce(&secs, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&cc.seconds, &cmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    /* V to rank 0. */
    double *vall = rank == 0 ? (double *)xcalloc(k * n, sizeof(double)) : NULL;
    if (single) {
        memcpy(vall, vr, k * n * sizeof(double));
    } else {
        int *cnt = (int *)xcalloc((size_t)ranks, sizeof(int)), *off = (int *)xcalloc((size_t)ranks, sizeof(int));
        for (int r = 0; r < ranks; r++) {
            size_t ra = n * (size_t)r / (size_t)ranks, rb = n * (size_t)(r + 1) / (size_t)ranks;
            cnt[r] = (int)(k * (rb - ra));
            off[r] = (int)(k * ra);
        }
        MPI_Gatherv(vr, (int)(k * nr), MPI_DOUBLE, vall, cnt, off, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        free(cnt);
        free(off);
    }

    double comm_us = 0.0;
    if (comm_bench && !single) {
        /* One iteration's words in one call (the library makes two), 200 times. */
        size_t words = (size_t)mvnmf_dist_words_per_iteration(sum_rows, k, joint || mvsl_t ? 0 : classes,
                                                              mp.v_inner, 0, (uint32_t)mvsl_t);
        double *b = (double *)xcalloc(words, sizeof(double));
        MPI_Barrier(MPI_COMM_WORLD);
        double c0 = MPI_Wtime();
        for (int t = 0; t < 200; t++)
            if (allreduce_impl(b, words, &cc)) die("MPI_Allreduce failed");
        double c1 = (MPI_Wtime() - c0) / 200.0;
        MPI_Reduce(&c1, &comm_us, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        comm_us *= 1e6;
        free(b);
    }

    int fail = 0, any_graph_fail = 0;
    double graph_max = 0.0;
    MPI_Allreduce(&graph_fail, &any_graph_fail, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Reduce(&graph_secs, &graph_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        fail |= any_graph_fail;
        /* The objective never rises. */
        for (size_t t = 1; t < tr.n; t++)
            if (tr.obj[t] > tr.obj[t - 1] + 1e-10 * half) {
                fprintf(stderr, "mpi_fit: the objective rose at iteration %zu: %.17g -> %.17g\n", t, tr.obj[t - 1],
                        tr.obj[t]);
                fail = 1;
            }
        double it = rep.iterations ? (double)rep.iterations : 1.0;
        uint64_t model = mvnmf_dist_words_per_iteration(sum_rows, k, joint || mvsl_t ? 0 : classes, mp.v_inner,
                                                        (uint32_t)monitor, (uint32_t)mvsl_t);
        printf("%s %s%s ranks=%d N=%zu views=%zu sum_rows=%zu K=%zu iterations=%u objective=%.10e "
               "ms/iteration=%.3f",
               single ? "single" : "dist", method, csc ? " csc" : " dense", ranks, n, h, sum_rows, k,
               rep.iterations, rep.objective.total, 1e3 * tmax / it);
        /* The iterations' words without the run's closing agreement (one call
         * of sum_rows * k + 2 words, counted with them). */
        double iw = (double)traffic.iter_words - (double)(sum_rows * k + 2), ic = (double)traffic.iter_calls - 1.0;
        if (!single)
            printf(" in_allreduce_ms/iteration=%.3f words/iteration=%.1f (model %llu) bytes/iteration=%.0f "
                   "setup_words=%llu calls/iteration=%.1f closing_words=%zu",
                   1e3 * cmax / it, iw / it, (unsigned long long)model, 8.0 * iw / it,
                   (unsigned long long)traffic.setup_words, ic / it, sum_rows * k + 2);
        if (mvsl_t && !single)
            printf(" halo_sent=%llu halo_received=%llu exchange_words/iteration=%.1f (model %llu)",
                   (unsigned long long)traffic.halo_sent, (unsigned long long)traffic.halo_received,
                   (double)traffic.iter_exchange_words / it,
                   (unsigned long long)(mp.v_inner * k * traffic.halo_sent));
        if (comm_bench && !single) printf(" allreduce_of_one_iteration_us=%.1f", comm_us);
        printf("\n");
        if (mvsl_t && !single) {
            printf("  graph (%s, rank 0): %.1f ms, allgather calls=%llu sent=%llu received=%llu words, "
                   "exchange sent=%llu words (edges sent=%llu received=%llu), allreduce=%llu words",
                   approx ? "mvnmf_dist_tge_approx" : "mvnmf_dist_tge", 1e3 * graph_max,
                   (unsigned long long)gtraffic.allgather_calls,
                   (unsigned long long)gtraffic.allgather_sent, (unsigned long long)gtraffic.allgather_received,
                   (unsigned long long)gtraffic.exchange_sent, (unsigned long long)gtraffic.edges_sent,
                   (unsigned long long)gtraffic.edges_received, (unsigned long long)gtraffic.allreduce_words);
            if (check_graph && approx)
                printf("; recall of mvnmf_tge's affinity entries %.4f, penalty rows %s", graph_recall,
                       any_graph_fail ? "DIFFER (or recall < 0.95)" : "equal");
            else if (check_graph)
                printf("; rows %s mvnmf_tge's", any_graph_fail ? "DIFFER from" : "equal to");
            printf("\n");
        }
        if (out) {
            FILE *f = fopen(out, "wb");
            if (!f) die("cannot write %s", out);
            fwrite(vall, sizeof(double), k * n, f);
            for (size_t v = 0; v < h; v++) fwrite(u[v], sizeof(double), rows[v] * k, f);
            fclose(f);
            char path[4096];
            snprintf(path, sizeof path, "%s.trace", out);
            f = fopen(path, "w");
            if (!f) die("cannot write %s", path);
            for (size_t t = 0; t < tr.n; t++) fprintf(f, "%.17g\n", tr.obj[t]);
            fclose(f);
        }
        if (compare) {
            double *ref = read_doubles(compare, k * n + sum_rows * k);
            double dv = max_rel_diff(vall, ref, k * n), du = 0.0;
            size_t off = k * n;
            for (size_t v = 0; v < h; v++) {
                du = fmax(du, max_rel_diff(u[v], ref + off, rows[v] * k));
                off += rows[v] * k;
            }
            char path[4096];
            snprintf(path, sizeof path, "%s.trace", compare);
            FILE *f = fopen(path, "r");
            if (!f) die("cannot open %s", path);
            double dobj = 0.0, o;
            size_t t = 0;
            while (fscanf(f, "%lg", &o) == 1) {
                if (t < tr.n) dobj = fmax(dobj, fabs(tr.obj[t] - o) / fabs(o));
                t++;
            }
            fclose(f);
            if (t != tr.n) {
                fprintf(stderr, "mpi_fit: %zu objectives, the reference has %zu\n", tr.n, t);
                fail = 1;
            }
            int ok = dv <= 1e-10 && du <= 1e-10 && dobj <= 1e-10;
            printf("  vs %s: V %.1e, U %.1e, objective %.1e relative: %s\n", compare, dv, du, dobj,
                   ok ? "equal to 1e-10" : "DIFFERENT");
            fail |= !ok;
            free(ref);
        }
    }
    MPI_Bcast(&fail, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return fail;
}
