#!/usr/bin/env python3
"""Benchmark mvnmf's fused kNN (kernel fusion, DESIGN §6) against scikit-learn.

One run, the same data for both contenders: N = 10000 items, four dense views of
64 / 144 / 75 / 128 features (the MM2.0 shape), uniform [0, 1) entries, fusion
weights eta = (0.4, 0.3, 0.2, 0.1), linear kernels, k = 10 neighbours of every
item among all the others.

    a) sklearn  NearestNeighbors(algorithm="brute").fit(Z).kneighbors(n_neighbors=k)
                on the equivalent features Z = [sqrt(eta_v) * x_v / ||x_v||]_v stacked
                (so <z_i, z_j> = sum_v eta_v K_v(i, j) and ||z_i - z_j||^2 = 2 - 2K(i, j));
                the normalisation is not timed.
    b) mvnmf    external program (--mvnmf-bin, default
                target/release/examples/bench_knn), run as
                    <bin> DIR N K M1 M2 M3 M4
                on the raw views (DIR/view{v}.f64, column-major M_v x N, and DIR/eta.f64);
                it normalises and fuses internally and prints "seconds=<float>" (the
                wall time of mvnmf::kernel::fused_knn), "workspace_bytes=", "output_bytes="
                and "peak_rss_bytes=", and writes its neighbour lists to
                DIR/mvnmf_neighbors.u64.

Printed: both times, sklearn / mvnmf, the agreement of the neighbour lists (row by row;
rows that differ are checked to be ties to 1e-12 in the fused kernel), and the memory
mvnmf used (workspace + outputs, and the process's peak RSS, data included) next to the
N^2 x 8 bytes a dense kernel matrix would take.

Threads: --threads N (default 1, like-for-like single thread) limits the Python side
(BLAS and OpenMP) with threadpoolctl; the mvnmf program is single-threaded.

On some processors OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are set in the environment and
slow numpy's OpenBLAS down; to benchmark fairly run

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 bench/bench_knn.py

(from the repository root, after `cargo build --release --example bench_knn`; Python
packages: `pip install -r bench/requirements.txt`).
"""

import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import sklearn
import threadpoolctl
from sklearn.neighbors import NearestNeighbors
from threadpoolctl import threadpool_info, threadpool_limits

DIMS = (64, 144, 75, 128)
ETA = (0.4, 0.3, 0.2, 0.1)
SLOW_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def mib(b):
    return "%.1f MiB" % (b / 2.0**20)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mvnmf-bin", default="target/release/examples/bench_knn")
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=2024)
    args = ap.parse_args()
    n, k = args.n, args.k

    print("mvnmf fused kNN benchmark: N=%d, views %s, eta=%s, linear kernels, k=%d"
          % (n, "/".join(map(str, DIMS)), ETA, k))
    print("python %s, numpy %s, scikit-learn %s, threadpoolctl %s"
          % (platform.python_version(), np.__version__, sklearn.__version__,
             threadpoolctl.__version__))
    print("cpu: %s, %s logical cores" % (cpu_model(), os.cpu_count()))
    slow = {v: os.environ[v] for v in SLOW_VARS if v in os.environ}
    if slow:
        print("WARNING: %s set; run `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 "
              "bench/bench_knn.py` to benchmark fairly" % ", ".join("%s=%s" % kv
                                                                      for kv in slow.items()))
    if not (os.path.isfile(args.mvnmf_bin) and os.access(args.mvnmf_bin, os.X_OK)):
        sys.exit("mvnmf program %r not found: cargo build --release --example bench_knn"
                 % args.mvnmf_bin)

    rng = np.random.default_rng(args.seed)
    views = [np.asfortranarray(rng.random((m, n))) for m in DIMS]  # M_v x N, items are columns
    eta = np.array(ETA)

    tmp = tempfile.mkdtemp(prefix="mvnmf-bench-knn-")
    try:
        for v, x in enumerate(views):
            np.asarray(x, dtype="<f8").ravel(order="F").tofile(os.path.join(tmp, "view%d.f64" % v))
        eta.astype("<f8").tofile(os.path.join(tmp, "eta.f64"))

        # b) mvnmf
        env = dict(os.environ)
        cmd = [args.mvnmf_bin, tmp, str(n), str(k)] + [str(m) for m in DIMS]
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
        if out.returncode != 0:
            sys.exit("%s failed:\n%s\n%s" % (" ".join(cmd), out.stdout, out.stderr))
        vals = dict(re.findall(r"^(\w+)=(\S+)$", out.stdout, re.M))
        t_mv = float(vals["seconds"])
        ws, ob, rss = (int(vals["workspace_bytes"]), int(vals["output_bytes"]),
                       int(vals["peak_rss_bytes"]))
        nb_mv = np.fromfile(os.path.join(tmp, "mvnmf_neighbors.u64"), dtype="<u8").reshape(n, k)

        # a) sklearn on the equivalent weighted, normalised, concatenated features
        z = np.hstack([np.sqrt(e) * (x / np.linalg.norm(x, axis=0)).T for e, x in zip(eta, views)])
        z = np.ascontiguousarray(z)
        with threadpool_limits(limits=args.threads):
            print("BLAS / OpenMP libraries (inside the limit):")
            for info in threadpool_info():
                print("  %-8s %-10s %s threads=%s" % (info.get("user_api"), info.get("internal_api"),
                                                     info.get("version"), info.get("num_threads")))
            t = time.perf_counter()
            nn = NearestNeighbors(n_neighbors=k, algorithm="brute").fit(z)
            dist, nb_sk = nn.kneighbors(n_neighbors=k)
            t_sk = time.perf_counter() - t
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    # Agreement: identical rows, and rows that differ only by ties (to 1e-12 in K).
    same = np.all(nb_sk == nb_mv, axis=1)
    gram = lambda i, js: z[js] @ z[i]
    tie_ok = 0
    for i in np.nonzero(~same)[0]:
        a, b = np.sort(gram(i, nb_sk[i]))[::-1], np.sort(gram(i, nb_mv[i].astype(np.int64)))[::-1]
        tie_ok += bool(np.allclose(a, b, rtol=0, atol=1e-12))
    print("\nresults (one run each)")
    print("  a) sklearn brute force   %8.3f s   (threads %d)" % (t_sk, args.threads))
    print("  b) mvnmf fused kNN       %8.3f s   (1 thread)" % t_mv)
    print("  sklearn / mvnmf = %.2fx" % (t_sk / t_mv))
    print("  neighbour lists: %d / %d rows identical, %d differ only by ties (|dK| <= 1e-12)"
          % (same.sum(), n, tie_ok))
    dense = n * n * 8
    print("  memory: mvnmf workspace %s + outputs %s = %s  vs  N^2 x 8 = %s (%.1f%%);"
          % (mib(ws), mib(ob), mib(ws + ob), mib(dense), 100.0 * (ws + ob) / dense))
    print("          mvnmf process peak RSS %s (input views %s included)"
          % (mib(rss), mib(sum(x.nbytes for x in views))))


if __name__ == "__main__":
    main()
