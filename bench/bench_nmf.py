#!/usr/bin/env python3
"""Benchmark mvnmf's NMF multiplicative updates against scikit-learn and numpy.

One run, the same data and the same starting point for every contender,
K = 50, two problems (features x items, items are columns):

    dense   X 2000 x 1000, uniform [0, 1)
    sparse  X 20000 x 2000, 1% nonzeros uniform (0, 1], CSC

U0 (M x K) and V0 (K x N) are uniform (0, 1] scaled by sqrt(mean(X) / K).
Per iteration (U first, then V):

    U <- U * (X V^T) / (U (V V^T));   V <- V * (U^T X) / ((U^T U) V)

Columns of the table, each in seconds per iteration (median over --reps
rounds of R iterations; R is chosen so that one run takes about
--target-seconds; a round runs every contender once, in an order that rotates
from round to round, and the sklearn / mvnmf line also gives the median and
range of the per-round ratios):

    a) sklearn  NMF(solver="mu", init="custom", tol=0, max_iter=R).fit_transform,
                without a fit's fixed costs: (T(R) - T(1)) / (R - 1)
    b) numpy    the same updates in plain numpy (scipy.sparse for sparse X)
    c) floor    only the two big products X @ V^T and U^T @ X
    d) mvnmf    external program (--mvnmf-bin, default
                target/release/examples/bench_nmf), run as
                    <bin> dense  DIR M N K R
                    <bin> sparse DIR M N K R
                DIR holds X.f64 (dense, f64 LE column-major M*N) or
                colptr.u64 / rowidx.u64 (u64 LE, CSC, sorted rows, N+1 and nnz
                entries) and values.f64 (nnz), plus U0.f64 (M*K) and V0.f64
                (K*N), column-major.  It prints a line
                "seconds_per_iter=<float>"; other lines are ignored.
    e) mvnmf no_std   the same program built without `std` (--nostd-bin,
                default target/nostd/release/examples/bench_nmf:
                `cargo build --release --no-default-features --example
                bench_nmf --target-dir target/nostd`): the allocation-free
                blocked kernel with run-time SIMD dispatch, one thread
    f) mvnmf N threads  the program of d) (--threading-bin to use another)
                with the solver's built-in pool of --threading-threads
                threads (default 2; the program reads RAYON_NUM_THREADS /
                MVNMF_THREADS): every product and step split into tasks by
                the shape alone, so the result is the same bits as d)
    e) and f) run when their program exists, so one command gives the whole
    table (issue 18).

Threads: --threads N (default 1, like-for-like single thread) limits the
Python side with threadpoolctl and gives the child OPENBLAS_NUM_THREADS,
OMP_NUM_THREADS, MKL_NUM_THREADS and RAYON_NUM_THREADS (the mvnmf program
reads it) = N.

On some processors OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are set in the
environment and slow numpy's OpenBLAS down; to benchmark fairly run

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 bench/bench_nmf.py

(from the repository root, after `cargo build --release --example bench_nmf`;
Python packages: `pip install -r bench/requirements.txt`).
"""

import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import scipy
import scipy.sparse as sp
import sklearn
import threadpoolctl
from sklearn.decomposition import NMF
from threadpoolctl import threadpool_info, threadpool_limits

K = 50
PROBLEMS = {
    "dense": dict(m=2000, n=1000, density=None, seed=1001),
    "sparse": dict(m=20000, n=2000, density=0.01, seed=1002),
}
THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
               "RAYON_NUM_THREADS")
SLOW_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


# ---------------------------------------------------------------- data
def make_problem(name):
    p = PROBLEMS[name]
    m, n = p["m"], p["n"]
    rng = np.random.default_rng(p["seed"])
    if p["density"] is None:
        x = np.asfortranarray(rng.random((m, n)))  # uniform [0, 1)
        mean = float(x.mean())
    else:
        x = sp.random(m, n, density=p["density"], format="csc", random_state=rng,
                      data_rvs=lambda k: 1.0 - rng.random(k))  # uniform (0, 1]
        x.sum_duplicates()
        x.sort_indices()
        assert x.has_sorted_indices
        mean = float(x.sum()) / (m * n)
    scale = np.sqrt(mean / K)
    u0 = np.asfortranarray((1.0 - rng.random((m, K))) * scale)  # (0, 1] * scale
    v0 = np.asfortranarray((1.0 - rng.random((K, n))) * scale)
    return x, u0, v0


def write_problem(d, x, u0, v0):
    def f64(a, path):
        np.asarray(a, dtype="<f8").ravel(order="F").tofile(os.path.join(d, path))

    if sp.issparse(x):
        np.asarray(x.indptr, dtype="<u8").tofile(os.path.join(d, "colptr.u64"))
        np.asarray(x.indices, dtype="<u8").tofile(os.path.join(d, "rowidx.u64"))
        f64(x.data, "values.f64")
    else:
        f64(x, "X.f64")
    f64(u0, "U0.f64")
    f64(v0, "V0.f64")


# ---------------------------------------------------------- contenders
def sklearn_fit(x, u0, v0, iters):
    """Seconds of one NMF(solver="mu").fit_transform of `iters` iterations."""
    model = NMF(n_components=K, init="custom", solver="mu", beta_loss="frobenius",
                tol=0.0, max_iter=iters, alpha_W=0.0, alpha_H=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        model.fit_transform(x, W=u0.copy(order="F"), H=v0.copy(order="F"))
        t = time.perf_counter() - t
    assert model.n_iter_ == iters, (model.n_iter_, iters)
    return t


def run_sklearn(x, u0, v0, iters):
    """Seconds of `iters` iterations of scikit-learn's MU, without a fit's fixed
    costs (input checks, the initial and final error: about 95 ms on the sparse
    problem, more than one iteration's worth), which mvnmf's timing (iteration 0 to
    `iters`, from the progress callback) does not include either:
    (T(iters) - T(1)) * iters / (iters - 1), the two fits back to back."""
    assert iters >= 2
    t_one = sklearn_fit(x, u0, v0, 1)
    t_all = sklearn_fit(x, u0, v0, iters)
    return max(t_all - t_one, 0.0) * iters / (iters - 1)


def run_numpy(x, u0, v0, iters):
    u = u0.copy(order="F")
    v = v0.copy(order="F")
    sparse = sp.issparse(x)
    xt = x.T if sparse else None  # CSR view of X^T, no copy
    t = time.perf_counter()
    for _ in range(iters):
        u *= (x @ v.T) / (u @ (v @ v.T))
        utx = (xt @ u).T if sparse else u.T @ x
        v *= utx / ((u.T @ u) @ v)
    return time.perf_counter() - t


def run_floor(x, u0, v0, iters):
    sparse = sp.issparse(x)
    xt = x.T if sparse else None
    t = time.perf_counter()
    for _ in range(iters):
        a = x @ v0.T
        b = (xt @ u0).T if sparse else u0.T @ x
    del a, b
    return time.perf_counter() - t


class Mvnmf:
    def __init__(self, binary, kind, d, shape, threads):
        self.cmd = [binary, kind, d, str(shape[0]), str(shape[1]), str(K)]
        self.env = dict(os.environ)
        for var in THREAD_VARS:
            self.env[var] = str(threads)

    def __call__(self, x, u0, v0, iters):
        out = subprocess.run(self.cmd + [str(iters)], env=self.env, capture_output=True,
                             text=True, timeout=1800)
        if out.returncode != 0:
            raise RuntimeError("%s exited with %d\nstdout:\n%s\nstderr:\n%s"
                               % (" ".join(self.cmd + [str(iters)]), out.returncode,
                                  out.stdout, out.stderr))
        found = re.findall(r"^\s*seconds_per_iter=(\S+)\s*$", out.stdout, re.M)
        if not found:
            raise RuntimeError("no 'seconds_per_iter=' line in the output of %s:\n%s"
                               % (" ".join(self.cmd), out.stdout))
        return float(found[-1]) * iters  # total, like the others


def calibrate(fn, x, u0, v0, target):
    """Iterations per run so that one run takes about `target` seconds."""
    # warm-up and estimate; grow the run until fixed costs (input checks,
    # sklearn's initial error, process start) are small against the loop
    iters = 2
    while True:
        t = fn(x, u0, v0, iters)
        if t >= 0.5 * target or iters >= 100000:
            break
        iters *= 4
    return max(2, int(round(target * iters / max(t, 1e-9))))


def interleaved(contenders, x, u0, v0, target, reps):
    """Seconds/iteration of every contender, `reps` rounds each; a round runs
    every contender once (the order rotates from round to round), so that a
    slow spell of this shared machine hits all of them alike and the per-round
    ratios stay meaningful. Returns {label: (iters, [s/iter per round])}."""
    calib = {}
    for label, fn in contenders:
        try:
            calib[label] = calibrate(fn, x, u0, v0, target)
        except Exception as e:  # report and go on with the others
            print("  %s failed: %s" % (label, e))
    live = [(label, fn) for label, fn in contenders if label in calib]
    times = {label: [] for label, _ in live}
    for r in range(reps):
        k = r % max(1, len(live))
        for label, fn in live[k:] + live[:k]:
            times[label].append(fn(x, u0, v0, calib[label]) / calib[label])
    return {label: (calib[label], times[label]) for label, _ in live}


# ------------------------------------------------------------- report
def blas_report():
    lines = []
    for info in threadpool_info():
        lines.append("  %-8s %-10s version=%s arch=%s num_threads=%s threading=%s  %s"
                     % (info.get("user_api"), info.get("internal_api"),
                        info.get("version"), info.get("architecture"),
                        info.get("num_threads"), info.get("threading_layer", "-"),
                        os.path.basename(info.get("filepath", ""))))
    return "\n".join(lines) if lines else "  (threadpoolctl found no BLAS/OpenMP library)"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def fmt_t(t):
    return "%.3f ms" % (t * 1e3) if t is not None else "n/a"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mvnmf-bin", default="target/release/examples/bench_nmf",
                    help="path of mvnmf's benchmark program (default: %(default)s)")
    ap.add_argument("--nostd-bin", default="target/nostd/release/examples/bench_nmf",
                    help="the no_std build of the program (default: %(default)s)")
    ap.add_argument("--threading-bin", default="target/release/examples/bench_nmf",
                    help="the program of the threads contender (default: %(default)s)")
    ap.add_argument("--threading-threads", type=int, default=2,
                    help="threads of the threads contender (default 2)")
    ap.add_argument("--threads", type=int, default=1,
                    help="threads for BLAS (Python side) and the mvnmf child (default 1)")
    ap.add_argument("--reps", type=int, default=5,
                    help="rounds (each contender once per round), the median is reported (default 5)")
    ap.add_argument("--target-seconds", type=float, default=1.5,
                    help="aim for this many seconds per repetition (default 1.5)")
    ap.add_argument("--problems", default="dense,sparse",
                    help="comma-separated subset of: dense,sparse")
    args = ap.parse_args()
    problems = [p.strip() for p in args.problems.split(",") if p.strip()]
    for p in problems:
        if p not in PROBLEMS:
            ap.error("unknown problem %r" % p)

    print("mvnmf NMF benchmark: multiplicative updates, Frobenius loss, K=%d" % K)
    print("python %s, numpy %s, scipy %s, scikit-learn %s, threadpoolctl %s"
          % (platform.python_version(), np.__version__, scipy.__version__,
             sklearn.__version__, threadpoolctl.__version__))
    print("cpu: %s, %s logical cores" % (cpu_model(), os.cpu_count()))
    slow = {v: os.environ[v] for v in SLOW_VARS if v in os.environ}
    if slow:
        print("WARNING: %s set in the environment; they can slow numpy's OpenBLAS down."
              % ", ".join("%s=%s" % kv for kv in slow.items()))
        print("         To benchmark fairly run:  env -u OPENBLAS_CORETYPE "
              "-u OPENBLAS_L2_SIZE python3 bench/bench_nmf.py")
    else:
        print("OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE: not set (good; if they are set, run "
              "`env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 bench/bench_nmf.py`)")
    print("threads: %d (python: threadpoolctl limit; mvnmf child: %s=%d)"
          % (args.threads, "/".join(THREAD_VARS), args.threads))

    have_bin = os.path.isfile(args.mvnmf_bin) and os.access(args.mvnmf_bin, os.X_OK)
    if have_bin:
        print("mvnmf: %s" % os.path.abspath(args.mvnmf_bin))
    else:
        print("mvnmf: program %r not found (build it with `cargo build --release "
              "--example bench_nmf`, or pass --mvnmf-bin); the mvnmf column is skipped"
              % args.mvnmf_bin)

    with threadpool_limits(limits=args.threads):
        print("BLAS / OpenMP libraries seen by threadpoolctl (inside the limit):")
        print(blas_report())
        for name in problems:
            x, u0, v0 = make_problem(name)
            m, n = x.shape
            nnz = x.nnz if sp.issparse(x) else m * n
            print("\n== %s: X %d x %d (features x items), K=%d, nnz=%d (%.2f%%), "
                  "mean(X)=%.4g, seed=%d"
                  % (name, m, n, K, nnz, 100.0 * nnz / (m * n),
                     (x.sum() if sp.issparse(x) else x.sum()) / (m * n),
                     PROBLEMS[name]["seed"]))
            results = {}
            tmp = tempfile.mkdtemp(prefix="mvnmf-bench-")
            try:
                contenders = [("a) sklearn", run_sklearn), ("b) numpy", run_numpy),
                              ("c) floor (2 products)", run_floor)]
                if have_bin:
                    write_problem(tmp, x, u0, v0)
                    contenders.append(("d) mvnmf", Mvnmf(args.mvnmf_bin, name, tmp,
                                                         (m, n), args.threads)))
                    for label, binary, threads in (
                            ("e) mvnmf no_std", args.nostd_bin, 1),
                            ("f) mvnmf %d threads" % args.threading_threads, args.threading_bin,
                             args.threading_threads)):
                        if os.path.isfile(binary) and os.access(binary, os.X_OK):
                            contenders.append((label, Mvnmf(binary, name, tmp, (m, n), threads)))
                runs = interleaved(contenders, x, u0, v0, args.target_seconds, args.reps)
                for label, (iters, times) in runs.items():
                    med = statistics.median(times)
                    results[label] = med
                    spread = "min %s max %s" % (fmt_t(min(times)), fmt_t(max(times)))
                    print("  %-22s %12s / iter   (R=%d iterations x %d rounds, %s)"
                          % (label, fmt_t(med), iters, args.reps, spread))
                    sys.stdout.flush()
            finally:
                shutil.rmtree(tmp, ignore_errors=True)

            mv = results.get("d) mvnmf")
            fl = results.get("c) floor (2 products)")
            print("  %-22s %14s %18s %18s" % ("", "s/iter", "this / mvnmf",
                                                "this / floor"))
            extra = [l for l in results if l.startswith(("e)", "f)"))]
            for label in ["a) sklearn", "b) numpy", "c) floor (2 products)", "d) mvnmf"] + extra:
                t = results.get(label)
                r_mv = "%.2fx" % (t / mv) if (t is not None and mv) else "n/a"
                r_fl = "%.2fx" % (t / fl) if (t is not None and fl) else "n/a"
                print("  %-22s %14s %18s %18s"
                      % (label, "%.6f" % t if t is not None else "n/a", r_mv, r_fl))
            if mv:
                # Ratio of the medians, and the median of the per-round ratios
                # (same round = same machine state) with its range.
                mv_t = runs["d) mvnmf"][1]
                for label, short in (("a) sklearn", "sklearn"), ("b) numpy", "numpy"),
                                     ("c) floor (2 products)", "floor")):
                    if label in results:
                        per = [a / b for a, b in zip(runs[label][1], mv_t)]
                        print("  %s / mvnmf = %.2fx   (per round: median %.2fx, %.2f-%.2fx)"
                              % (short, results[label] / mv, statistics.median(per),
                                 min(per), max(per)))
                for label in extra:
                    per = [b / a for a, b in zip(runs[label][1], mv_t)]
                    print("  mvnmf / %s = %.2fx   (per round: median %.2fx, %.2f-%.2fx)"
                          % (label[3:], mv / results[label], statistics.median(per),
                             min(per), max(per)))
            else:
                print("  (no mvnmf result: ratios to mvnmf are n/a)")


if __name__ == "__main__":
    main()
