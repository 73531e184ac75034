/* example_io.h: what every C example of mvnmf needs around the library, written once
 * (reproduce, multilabel, retrieval): dying with a message, checked allocation and
 * mvnmf calls, a monotonic clock, strict number parsing, comma lists, and the dataset
 * directory format of ../shared/data and data/:
 *
 *   meta.txt      one line per file: "viewK.f64 [name=NAME] rows=R cols=N ..."
 *   viewK.f64     R x N float64, little-endian, column-major (features x items);
 *                 FILE.gz instead of FILE is read through `gzip -dc`.
 *
 * Header-only (every function `static inline`, so a program uses what it needs);
 * define EXAMPLE_NAME before including it to prefix the messages. C99 + POSIX
 * (popen, clock_gettime): define _POSIX_C_SOURCE 200809L before any include. */
#ifndef MVNMF_EXAMPLE_IO_H
#define MVNMF_EXAMPLE_IO_H

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

#ifndef EXAMPLE_NAME
#define EXAMPLE_NAME "example"
#endif

/* Calls mvnmf function f; dies with its name and mvnmf's message if it fails. */
#define CALL(f, ...) check(f(__VA_ARGS__), #f)

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2), noreturn))
#endif
static inline void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(EXAMPLE_NAME ": ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static inline void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) die("out of memory (%zu x %zu bytes)", n, size);
    return p;
}

static inline void *xmalloc(size_t bytes)
{
    return xcalloc(1, bytes);
}

/* A workspace of at least `bytes`, reallocated only when it must grow. */
typedef struct {
    void *p;
    size_t bytes;
} buf_t;

static inline void *grow(buf_t *b, size_t bytes)
{
    if (bytes > b->bytes) {
        free(b->p);
        b->p = xcalloc(1, bytes);
        b->bytes = bytes;
    }
    return b->p;
}

static inline double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline void check(mvnmf_status s, const char *what)
{
    if (s != MVNMF_STATUS_OK) die("%s failed: %s (status %u)", what, mvnmf_status_message((uint32_t)s), (unsigned)s);
}

/* `check` for a call that took a report: a refusal also says where (the
 * 1-based argument; for data the 0-based view, row and column, -1: n/a). */
static inline void check_at(mvnmf_status s, const mvnmf_report *r, const char *what)
{
    if (s != MVNMF_STATUS_OK && r->where_arg > 0)
        die("%s failed: %s (status %u) at argument %u, view %lld, row %lld, column %lld", what,
            mvnmf_status_message((uint32_t)s), (unsigned)s, (unsigned)r->where_arg,
            r->where_view == SIZE_MAX ? -1LL : (long long)r->where_view,
            r->where_row == SIZE_MAX ? -1LL : (long long)r->where_row,
            r->where_col == SIZE_MAX ? -1LL : (long long)r->where_col);
    check(s, what);
}

static inline size_t parse_size(const char *s, const char *what)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v > SIZE_MAX) die("%s: not a nonnegative integer: '%s'", what, s);
    return (size_t)v;
}

static inline double parse_double(const char *s, const char *what)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v)) die("%s: not a number: '%s'", what, s);
    return v;
}

/* The next token of a comma-separated list *p into tok; 0 at the end. */
static inline int next_token(const char **p, char *tok, size_t cap)
{
    if (!**p) return 0;
    const char *e = strchr(*p, ',');
    size_t l = e ? (size_t)(e - *p) : strlen(*p);
    snprintf(tok, cap, "%.*s", (int)(l < cap - 1 ? l : cap - 1), *p);
    *p += l + (e != NULL);
    return 1;
}

/* Whether the comma-separated `list` holds `word`. */
static inline int listed(const char *list, const char *word)
{
    char tok[64];
    while (next_token(&list, tok, sizeof tok))
        if (!strcmp(tok, word)) return 1;
    return 0;
}

/* Parses a comma-separated list of numbers into out[cap]; returns the count (dies on a bad one). */
static inline size_t parse_doubles(const char *s, const char *what, double *out, size_t cap)
{
    char tok[64];
    size_t n = 0;
    while (next_token(&s, tok, sizeof tok)) {
        if (n == cap) die("%s: at most %zu values", what, cap);
        out[n++] = parse_double(tok, what);
    }
    if (n == 0) die("%s: an empty list", what);
    return n;
}

static inline int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* An input file: the stream, whether it is `gzip -dc`'s pipe, its path. */
typedef struct {
    FILE *f;
    int gz;
    char path[4096];
} input_t;

/* Opens dir/file for reading, or dir/file.gz (through gzip -dc) when dir/file is missing.
 * A missing file: dies if `required`, else returns 0. */
static inline int open_input(input_t *in, const char *dir, const char *file, int required)
{
    char cmd[4200];
    snprintf(in->path, sizeof in->path, "%s/%s", dir, file);
    in->f = fopen(in->path, "rb");
    if (!in->f && !ends_with(file, ".gz")) {
        snprintf(in->path, sizeof in->path, "%s/%s.gz", dir, file);
        in->f = fopen(in->path, "rb");
    }
    if ((in->gz = in->f && ends_with(in->path, ".gz")) != 0) {
        fclose(in->f);
        if (strchr(in->path, '\'')) die("%s: a quote in the path; decompress it first with gunzip -k", in->path);
        snprintf(cmd, sizeof cmd, "gzip -dc '%s'", in->path);
        in->f = popen(cmd, "r");
    }
    if (!in->f && required) die("cannot open %s/%s: %s", dir, file, strerror(errno));
    return in->f != NULL;
}

static inline void close_input(input_t *in)
{
    if ((in->gz ? pclose : fclose)(in->f) != 0)
        die("%s: reading failed (gzip -dc: is gzip installed? or run gunzip -k on it)", in->path);
}

/* Reads rows*cols little-endian doubles (on any host) from dir/file[.gz], exactly as many as the file holds. */
static inline double *read_f64(const char *dir, const char *file, size_t rows, size_t cols)
{
    unsigned char b[8];
    input_t in;
    open_input(&in, dir, file, 1);
    if (rows && cols > SIZE_MAX / rows / sizeof(double))
        die("%s: %zu x %zu doubles do not fit in memory", in.path, rows, cols);
    double *x = xcalloc(rows * cols, sizeof(double));
    for (size_t i = 0; i < rows * cols; i++) {
        uint64_t u = 0;
        if (fread(b, 1, 8, in.f) != 8) die("%s: expected %zu x %zu doubles, the file is shorter", in.path, rows, cols);
        for (int k = 7; k >= 0; k--) u = (u << 8) | b[k];
        memcpy(&x[i], &u, 8);
    }
    if (fread(b, 1, 1, in.f) == 1)
        die("%s: longer than %zu x %zu doubles: is rows/cols in meta.txt right?", in.path, rows, cols);
    close_input(&in);
    return x;
}

/* The value of "key=" in a meta.txt line, into out (0 if absent). */
static inline int meta_field(const char *line, const char *key, char *out, size_t cap)
{
    size_t kl = strlen(key), i = 0;
    for (const char *p = line; (p = strstr(p, key)) != NULL; p += kl)
        if ((p == line || p[-1] == ' ' || p[-1] == '\t') && p[kl] == '=') {
            for (p += kl + 1; *p && !strchr(" \t\r\n", *p) && i + 1 < cap;) out[i++] = *p++;
            out[i] = 0;
            return 1;
        }
    return 0;
}

/* rows= and cols= of the meta.txt line for `file` ("file" or "file.gz" first on the line);
 * 0 if meta.txt has no such line. */
static inline int meta_shape(const char *dir, const char *file, size_t *rows, size_t *cols)
{
    char line[4096], first[256], r[64], c[64], gz[260];
    int found = 0;
    input_t in;
    open_input(&in, dir, "meta.txt", 1);
    snprintf(gz, sizeof gz, "%s.gz", file);
    while (fgets(line, sizeof line, in.f))
        if (sscanf(line, "%255s", first) == 1 && (!strcmp(first, file) || !strcmp(first, gz))) {
            if (!meta_field(line, "rows", r, sizeof r) || !meta_field(line, "cols", c, sizeof c))
                die("%s: the line of %s has no rows= and cols=", in.path, file);
            *rows = parse_size(r, "rows");
            *cols = parse_size(c, "cols");
            found = 1;
        }
    close_input(&in);
    return found;
}

/* The CSC copy of a dense rows x cols column-major matrix (stride ld) as an
 * mvnmf view: only the nonzero entries, in row order per column. The arrays are
 * allocated here and live as long as the program (the examples' data do).
 * *fraction: the nonzero fraction. */
static inline mvnmf_view dense_to_csc(const double *x, size_t rows, size_t cols, size_t ld, double *fraction)
{
    size_t nnz = 0, t = 0;
    for (size_t j = 0; j < cols; j++)
        for (size_t i = 0; i < rows; i++) nnz += x[i + j * ld] != 0.0;
    size_t *cp = (size_t *)xcalloc(cols + 1, sizeof(size_t)), *ri = (size_t *)xcalloc(nnz, sizeof(size_t));
    double *v = (double *)xcalloc(nnz, sizeof(double));
    for (size_t j = 0; j < cols; cp[++j] = t)
        for (size_t i = 0; i < rows; i++)
            if (x[i + j * ld] != 0.0) ri[t] = i, v[t++] = x[i + j * ld];
    *fraction = rows && cols ? (double)nnz / ((double)rows * (double)cols) : 0.0;
    mvnmf_view out = { MVNMF_VIEW_CSC, rows, cols, v, 0, cp, ri };
    return out;
}

#endif
