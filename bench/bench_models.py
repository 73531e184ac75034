#!/usr/bin/env python3
"""Per-iteration cost and peak memory of mvnmf's models against straightforward numpy.

One run, for each N in --sizes (default 2000,10000), K = 20, four dense views
of 64/144/75/128 features (items are columns), uniform [0, 1) data, 30 % of
the items labeled in 10 classes (item j gets class j mod 10):

  mvnmf   the program examples/bench_models.rs (--mvnmf-bin, default
          target/release/examples/bench_models), run as `<bin> N 20 ITERS`;
          it prints `nmf|mvsl_t|mcl|dmcl3 <sec/iter> workspace_bytes <b>`
          (joint NMF; MvSL, L1,2 + TGE-shaped CSR graph; MCL, L1,inf + implicit
          SGE; a DMCL fine-tuning sweep, layers [100, 50, K], SGE). Its data and
          graph come from its own generator (same shapes and distributions).

  numpy mvsl   ONE outer MvSL iteration written the way a reader of the papers
          would write it, with dense N x N affinity/penalty weights Wa, Wp (a
          TGE-shaped graph: each item's 5 random neighbours, symmetrised, weight
          2 for same-class labeled pairs else 1; penalty: 3 random other-class
          labeled items per labeled item, weight 2) and dense degree matrices
          Da = diag(Wa 1), Dp = diag(Wp 1). alpha = 1.5, beta = 0.02, gamma = 0,
          vmax = 1, eps = 2^-52 (as the mvsl_t row).
            U-step per view (DESIGN 4): R = X V^T, G = V V^T; 3 accepted steps of
              the composite gradient mapping, grad = U G - R,
              T = prox_{alpha/L}(U - grad/L) (L1,2 column prox on [.]_+),
              accepted when f(T) <= f(U) + <grad, T-U> + L/2 ||T-U||^2 (for this
              quadratic f: 1/2 tr((T-U) G (T-U)^T) <= L/2 ||T-U||^2), else L *= 2;
              L starts at tr(G) and then at L_prev / 2.
            V-step (DESIGN 5): P = sum U^T U, Q = sum U^T X,
              A = P V + beta V (Da + Wp) + eps,  B = gamma - Q - eps,
              C = beta V (Dp + Wa),
              V <- min(vmax, V * (-B + sqrt(B^2 + 4AC)) / (2A))
              (2C / (B + sqrt(..)) where B > 0).
            objective: 1/2 sum ||X - U V||^2 + alpha sum_k ||u_k||_2
              + beta/2 [tr(V (Da - Wa) V^T) - tr(V (Dp - Wp) V^T)] + gamma sum V.

  numpy dmcl   ONE DMCL fine-tuning sweep, layers [100, 50, K] (a hidden layer
          never wider than its input: p_m = min(p_m, p_{m-1}), as mvnmf), written
          the obvious way: per view, for each lower layer m the explicit
          Phi_m = U_{m+1} ... U_M V (p_m x N) and B_m = U_1 ... U_{m-1}, then
          U_m <- min(1, U_m * (B_m^T X Phi_m^T + eps) / (B_m^T B_m U_m Phi_m Phi_m^T + eps));
          the top layer by the same composite gradient mapping with the L1,inf
          prox, G1 = B^T B, G2 = V V^T, R = B^T X V^T; then the V-step above with
          U~ = U_1 ... U_M and the objective. Graph: the SGE graph as DENSE N x N
          matrices (Wa_ij = 1/N_c - 1/N_l for labeled same-class i != j,
          Wp_ij = 1/N_l for labeled pairs of different classes), the graph the
          dmcl3 row uses implicitly. alpha = 10, beta = 0.015, gamma = 0.005,
          vmax = 1 (as the dmcl3 row). Start: lower layers uniform in (0, 1] (the
          box), top layer uniform and scaled so that mean(U~ V) = mean(X)
          (mvnmf pre-trains; pre-training is not timed on either side).

  Times: set-up (data, graph, start) excluded; one warm-up iteration, then
  --reps iterations timed one by one, median reported. Each timed iteration
  includes the objective, as mvnmf's does (it reports it to the monitor).

  Peak memory: each numpy implementation runs in its own fresh Python
  process (this file with --worker), started under GNU time
  (`/usr/bin/time -v`), whose "Maximum resident set size" is that child's
  own, so the numbers are separate (without /usr/bin/time: os.wait4's
  ru_maxrss, which Linux may inflate up to this parent's RSS, about 30 MiB,
  since a vfork()ed child inherits the parent's high-water mark at exec). A third child ("numpy
  baseline") only imports numpy and makes the views: the interpreter + data
  floor. The mvnmf program runs all four models in one process: its peak RSS
  covers all of them (plus their workspaces, printed per model).

Threads: --threads T (default 1) sets OPENBLAS_NUM_THREADS, OMP_NUM_THREADS,
MKL_NUM_THREADS and RAYON_NUM_THREADS (mvnmf's `threading` build) = T for
every child, and the numpy children also apply threadpoolctl's limit.  OPENBLAS_CORETYPE /
OPENBLAS_L2_SIZE may be set on these machines and slow OpenBLAS down; run

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 bench/bench_models.py

from the repository root after `cargo build --release --example bench_models`.
`--check` instead runs 3 iterations of both numpy implementations at N = 300
and checks that the objective never increases.
"""

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

# Thread variables must be in the environment before numpy loads its BLAS: the
# parent passes them to the workers; a worker started by hand gets them here.
if "--worker" in sys.argv and "--threads" in sys.argv:
    _t = sys.argv[sys.argv.index("--threads") + 1]
    for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_v, _t)

import numpy as np  # noqa: E402

K = 20
DIMS = (64, 144, 75, 128)
CLASSES = 10
LABELED = 0.3
LAYERS = (100, 50, K)
EPS = float(np.finfo(np.float64).eps)
THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
               "RAYON_NUM_THREADS")
SLOW_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
UNLABELED = -1

MVSL = dict(alpha=1.5, beta=0.02, gamma=0.0, vmax=1.0, u_inner=3, eta_up=2.0,
            eta_down=2.0)
DMCL = dict(alpha=10.0, beta=0.015, gamma=0.005, vmax=1.0, u_inner=3, eta_up=2.0,
            eta_down=2.0)


# ------------------------------------------------------------------ data
def make_data(n, seed):
    rng = np.random.default_rng(seed)
    xs = [rng.random((m, n)) for m in DIMS]  # uniform [0, 1), features x items
    labels = np.where(rng.random(n) < LABELED, np.arange(n) % CLASSES, UNLABELED)
    return rng, xs, labels


def tge_dense(n, labels, rng):
    """TGE-shaped dense weights (see the module docs) and their degree matrices."""
    lab = labels != UNLABELED
    wa = np.zeros((n, n))
    j = np.repeat(np.arange(n), 5)
    i = rng.integers(0, n, size=5 * n)
    keep = i != j
    i, j = i[keep], j[keep]
    same = lab[i] & lab[j] & (labels[i] == labels[j])
    w = np.where(same, 2.0, 1.0)
    wa[i, j] = w  # a pair always gets the same weight: duplicates are harmless
    wa[j, i] = w
    wp = np.zeros((n, n))
    labeled = np.flatnonzero(lab)
    others = {c: labeled[labels[labeled] != c] for c in range(CLASSES)}
    pi, pj = [], []
    for a in labeled:
        other = others[labels[a]]
        pick = rng.choice(other, size=min(3, other.size), replace=False)
        pi.extend(pick)
        pj.extend([a] * pick.size)
    wp[pi, pj] = 2.0
    wp[pj, pi] = 2.0
    da = np.diag(wa.sum(axis=1))
    dp = np.diag(wp.sum(axis=1))
    return wa, wp, da, dp


def sge_dense(n, labels):
    """The SGE graph as dense matrices (Wa within classes, Wp across them)."""
    lab = labels != UNLABELED
    nl = int(lab.sum())
    counts = np.bincount(labels[lab], minlength=CLASSES)
    wa = np.zeros((n, n))
    wp = np.zeros((n, n))
    idx = np.flatnonzero(lab)
    y = labels[idx]
    same = y[:, None] == y[None, :]
    wc = 1.0 / counts[y] - 1.0 / nl
    blk_a = np.where(same, wc[:, None], 0.0)
    np.fill_diagonal(blk_a, 0.0)
    wa[np.ix_(idx, idx)] = blk_a
    wp[np.ix_(idx, idx)] = np.where(same, 0.0, 1.0 / nl)
    del blk_a, same
    da = np.diag(wa.sum(axis=1))
    dp = np.diag(wp.sum(axis=1))
    return wa, wp, da, dp


# --------------------------------------------------------------- pieces
def prox_l12(b, tau):
    c = np.maximum(b, 0.0)
    nrm = np.linalg.norm(c, axis=0)
    scale = np.maximum(0.0, 1.0 - tau / np.where(nrm > 0, nrm, 1.0))
    return c * np.where(nrm > 0, scale, 0.0)


def prox_linf(b, tau):
    """prox of tau * sum_k max_i |U_ik| on U >= 0, column by column (Moreau)."""
    c = np.maximum(b, 0.0)
    out = np.zeros_like(c)
    for k in range(c.shape[1]):
        col = c[:, k]
        if col.sum() <= tau:
            continue
        s = np.sort(col)[::-1]
        cs = np.cumsum(s)
        t = (cs - tau) / np.arange(1, s.size + 1)
        rho = np.flatnonzero(s > t)[-1]
        out[:, k] = np.minimum(col, t[rho])
    return out


def prox_gradient(u, r, g2, g1, alpha, prox, lip, p):
    """Composite gradient mapping on 1/2||X - B U V||^2 + alpha R(U), U >= 0,
    with G1 = B^T B (None: identity), G2 = V V^T, R = B^T X V^T; returns (U, L)."""
    if lip > 0:
        lip = lip / p["eta_down"]
    else:
        lip = np.trace(g2) * (np.trace(g1) if g1 is not None else 1.0)
    for _ in range(p["u_inner"]):
        grad = (u @ g2 if g1 is None else g1 @ u @ g2) - r
        for _ in range(2000):
            t = prox(u - grad / lip, alpha / lip)
            d = t - u
            gd = d if g1 is None else g1 @ d
            lhs = 0.5 * np.sum((gd @ g2) * d)  # f(T) - f(U) - <grad, T - U>
            if lhs <= 0.5 * lip * np.sum(d * d) * (1.0 + 1e-12):
                u = t
                break
            lip *= p["eta_up"]
        else:
            break
    return u, lip


def v_step(v, pmat, q, wa, wp, da, dp, p):
    a = pmat @ v + p["beta"] * (v @ (da + wp)) + EPS
    b = p["gamma"] - q - EPS
    c = p["beta"] * (v @ (dp + wa))
    disc = np.sqrt(b * b + 4.0 * a * c)
    pos = b > 0
    factor = np.where(pos, 2.0 * c / np.where(pos, b + disc, 1.0), (disc - b) / (2.0 * a))
    return np.minimum(p["vmax"], v * factor)


def graph_terms(v, wa, wp, da, dp, p):
    ta = np.trace(v @ (da - wa) @ v.T)
    tp = np.trace(v @ (dp - wp) @ v.T)
    return 0.5 * p["beta"] * (ta - tp)


# ----------------------------------------------------------------- MvSL
class NumpyMvsl:
    p = MVSL

    def __init__(self, n, seed):
        rng, self.xs, self.labels = make_data(n, seed)
        self.graph = tge_dense(n, self.labels, rng)
        vmax = self.p["vmax"]
        self.v = (1.0 - rng.random((K, n))) * vmax
        self.us = [(1.0 - rng.random((x.shape[0], K))) * 4.0 * x.mean() / (K * vmax)
                   for x in self.xs]
        self.lip = [0.0] * len(self.xs)
        self.nnz = (int(np.count_nonzero(self.graph[0])), int(np.count_nonzero(self.graph[1])))

    def objective(self):
        p, v = self.p, self.v
        rec = sum(0.5 * np.sum((x - u @ v) ** 2) for x, u in zip(self.xs, self.us))
        sp = p["alpha"] * sum(np.linalg.norm(u, axis=0).sum() for u in self.us)
        return rec + sp + graph_terms(v, *self.graph, p) + p["gamma"] * v.sum()

    def iterate(self):
        p, v = self.p, self.v
        g = v @ v.T
        for i, x in enumerate(self.xs):
            r = x @ v.T
            self.us[i], self.lip[i] = prox_gradient(self.us[i], r, g, None, p["alpha"],
                                                    prox_l12, self.lip[i], p)
        pmat = sum(u.T @ u for u in self.us)
        q = sum(u.T @ x for u, x in zip(self.us, self.xs))
        self.v = v_step(v, pmat, q, *self.graph, p)
        return self.objective()


# ----------------------------------------------------------------- DMCL
def layer_dims(rows):
    dims, prev = [], rows
    for m, pm in enumerate(LAYERS):
        out = pm if m == len(LAYERS) - 1 else min(pm, prev)
        dims.append((prev, out))
        prev = out
    return dims


def chain(mats):
    out = mats[0]
    for m in mats[1:]:
        out = out @ m
    return out


class NumpyDmcl:
    p = DMCL

    def __init__(self, n, seed):
        rng, self.xs, self.labels = make_data(n, seed)
        self.graph = sge_dense(n, self.labels)
        self.v = (1.0 - rng.random((K, n))) * self.p["vmax"]
        self.us = []
        for x in self.xs:
            layers = [1.0 - rng.random(d) for d in layer_dims(x.shape[0])]
            layers[-1] *= x.mean() / (chain(layers) @ self.v).mean()
            self.us.append(layers)
        self.lip = [0.0] * len(self.xs)
        self.nnz = (int(np.count_nonzero(self.graph[0])), int(np.count_nonzero(self.graph[1])))

    def objective(self):
        p, v = self.p, self.v
        rec = sum(0.5 * np.sum((x - chain(us) @ v) ** 2) for x, us in zip(self.xs, self.us))
        sp = p["alpha"] * sum(us[-1].max(axis=0).sum() for us in self.us)
        return rec + sp + graph_terms(v, *self.graph, p) + p["gamma"] * v.sum()

    def iterate(self):
        p, v = self.p, self.v
        nl = len(LAYERS)
        for i, x in enumerate(self.xs):
            us = self.us[i]
            for m in range(nl - 1):
                phi = chain(us[m + 1:]) @ v  # p_m x N, explicit
                if m == 0:
                    num = x @ phi.T
                    den = us[m] @ phi @ phi.T
                else:
                    bm = chain(us[:m])
                    num = bm.T @ x @ phi.T
                    den = bm.T @ bm @ us[m] @ phi @ phi.T
                us[m] = np.minimum(1.0, us[m] * (num + EPS) / (den + EPS))
            b = chain(us[:-1])
            r = b.T @ x @ v.T
            us[-1], self.lip[i] = prox_gradient(us[-1], r, v @ v.T, b.T @ b, p["alpha"],
                                                prox_linf, self.lip[i], p)
        ut = [chain(us) for us in self.us]
        pmat = sum(u.T @ u for u in ut)
        q = sum(u.T @ x for u, x in zip(ut, self.xs))
        self.v = v_step(v, pmat, q, *self.graph, p)
        return self.objective()


# --------------------------------------------------------------- worker
def worker(kind, n, reps, threads, seed):
    from threadpoolctl import threadpool_info, threadpool_limits
    with threadpool_limits(limits=threads):
        blas_threads = [i.get("num_threads") for i in threadpool_info()]
        t0 = time.perf_counter()
        if kind == "baseline":
            make_data(n, seed)
            res = dict(setup=time.perf_counter() - t0)
        else:
            model = (NumpyMvsl if kind == "mvsl" else NumpyDmcl)(n, seed)
            obj = [model.objective()]
            setup = time.perf_counter() - t0
            obj.append(model.iterate())  # warm-up
            times = []
            for _ in range(reps):
                t = time.perf_counter()
                obj.append(model.iterate())
                times.append(time.perf_counter() - t)
            res = dict(setup=setup, times=times, median=statistics.median(times),
                       objective=obj, nnz=model.nnz)
        res["blas_threads"] = blas_threads
    print("RESULT " + json.dumps(res))


# ----------------------------------------------------------- child runs
GNU_TIME = "/usr/bin/time"


def run_child(cmd, env, timeout=7200):
    """Runs cmd; returns (stdout, stderr, wall seconds, peak RSS in KiB of that child).

    The peak RSS comes from GNU time (`/usr/bin/time -v -o FILE`), whose own
    fork of a tiny process starts the command: the figure is the command's own.
    Without GNU time, the rusage of os.wait4 is used; it can be inflated up to
    this (parent) process's RSS, because Linux carries the high-water mark of the
    address space that a vfork()ed child shares with its parent across exec."""
    use_time = os.access(GNU_TIME, os.X_OK)
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err, \
            tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        full = [GNU_TIME, "-v", "-o", tf.name] + cmd if use_time else cmd
        t = time.perf_counter()
        proc = subprocess.Popen(full, env=env, stdout=out, stderr=err, text=True)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        so, se = out.read(), err.read()
        rss = ru.ru_maxrss  # Linux: KiB
        cpu = (ru.ru_utime, ru.ru_stime)
        if use_time:
            tv = tf.read()
            mm = re.search(r"Maximum resident set size \(kbytes\):\s*(\d+)", tv)
            rss = int(mm.group(1)) if mm else None
            ut = re.search(r"User time \(seconds\):\s*([\d.]+)", tv)
            st = re.search(r"System time \(seconds\):\s*([\d.]+)", tv)
            if ut and st:
                cpu = (float(ut.group(1)), float(st.group(1)))
    if proc.returncode != 0:
        raise RuntimeError("%s exited with %d\nstdout:\n%s\nstderr:\n%s"
                           % (" ".join(cmd), proc.returncode, so, se))
    return so, se, wall, rss, cpu


def run_mvnmf(binary, n, iters, env):
    so, _, wall, rss, cpu = run_child([binary, str(n), str(K), str(iters)], env)
    res = {"maxrss_kib": rss, "wall": wall, "cpu": cpu, "comments": []}
    for line in so.splitlines():
        if line.startswith("#"):
            res["comments"].append(line)
            continue
        mm = re.match(r"^(\w+)\s+(\S+)\s+workspace_bytes\s+(\d+)\s*$", line)
        if mm:
            res[mm.group(1)] = (float(mm.group(2)), int(mm.group(3)))
    for name in ("nmf", "mvsl_t", "mcl", "dmcl3"):
        if name not in res:
            raise RuntimeError("no '%s' line in the output of %s:\n%s" % (name, binary, so))
    return res


def run_worker(kind, n, reps, threads, seed, env):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", kind, "--n", str(n),
           "--reps", str(reps), "--threads", str(threads), "--seed", str(seed)]
    so, _, wall, rss, cpu = run_child(cmd, env)
    found = [l for l in so.splitlines() if l.startswith("RESULT ")]
    if not found:
        raise RuntimeError("no RESULT line from %s:\n%s" % (" ".join(cmd), so))
    res = json.loads(found[-1][7:])
    res["maxrss_kib"] = rss
    res["wall"] = wall
    res["cpu"] = cpu
    return res


# ----------------------------------------------------------------- check
def check(n=300, iters=3, seed=5):
    ok = True
    for name, cls in (("numpy mvsl (TGE dense)", NumpyMvsl), ("numpy dmcl (SGE dense)", NumpyDmcl)):
        model = cls(n, seed)
        half_x2 = sum(0.5 * np.sum(x * x) for x in model.xs)
        obj = [model.objective()]
        for _ in range(iters):
            obj.append(model.iterate())
        tol = 1e-10 * half_x2
        inc = [b - a for a, b in zip(obj, obj[1:]) if b > a + tol]
        ok &= not inc
        print("%-24s N=%d objective: %s  %s"
              % (name, n, "  ".join("%.10g" % o for o in obj),
                 "OK (non-increasing)" if not inc else "FAIL: increases %s" % inc))
    return ok


# ---------------------------------------------------------------- report
def blas_report():
    from threadpoolctl import threadpool_info
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


def mib(kib):
    return kib / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mvnmf-bin", default="target/release/examples/bench_models",
                    help="path of mvnmf's benchmark program (default: %(default)s)")
    ap.add_argument("--sizes", default="2000,10000", help="comma-separated N (default %(default)s)")
    ap.add_argument("--threads", type=int, default=1,
                    help="BLAS threads for numpy and the mvnmf child (default 1)")
    ap.add_argument("--reps", type=int, default=5,
                    help="timed numpy iterations after one warm-up; median (default 5)")
    ap.add_argument("--mvnmf-iters", type=int, default=10,
                    help="ITERS argument of the mvnmf program (default 10)")
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--check", action="store_true",
                    help="only run 3 iterations of both numpy models at N=300 and "
                         "check that the objective never increases")
    ap.add_argument("--worker", choices=("mvsl", "dmcl", "baseline"), help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.worker:
        worker(args.worker, args.n, args.reps, args.threads, args.seed)
        return
    if args.check:
        from threadpoolctl import threadpool_limits
        with threadpool_limits(limits=args.threads):
            sys.exit(0 if check() else 1)

    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    import scipy
    import threadpoolctl
    from threadpoolctl import threadpool_limits
    print("mvnmf model benchmark: K=%d, views %s, %d%% labeled in %d classes, dense uniform data"
          % (K, "/".join(map(str, DIMS)), int(LABELED * 100), CLASSES))
    print("python %s, numpy %s, scipy %s, threadpoolctl %s"
          % (platform.python_version(), np.__version__, scipy.__version__,
             threadpoolctl.__version__))
    print("cpu: %s, %s logical cores; load average %s"
          % (cpu_model(), os.cpu_count(), " ".join("%.2f" % x for x in os.getloadavg())))
    slow = {v: os.environ[v] for v in SLOW_VARS if v in os.environ}
    if slow:
        print("WARNING: %s set in the environment; they can slow numpy's OpenBLAS down."
              % ", ".join("%s=%s" % kv for kv in slow.items()))
        print("         To benchmark fairly run:  env -u OPENBLAS_CORETYPE "
              "-u OPENBLAS_L2_SIZE python3 bench/bench_models.py")
    else:
        print("OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE: not set")
    env = dict(os.environ)
    for var in THREAD_VARS:
        env[var] = str(args.threads)
    print("threads: %d (children: %s=%d; numpy children also threadpoolctl-limited)"
          % (args.threads, "/".join(THREAD_VARS), args.threads))
    with threadpool_limits(limits=args.threads):
        print("BLAS / OpenMP libraries seen by threadpoolctl (inside the limit):")
        print(blas_report())
    have_bin = os.path.isfile(args.mvnmf_bin) and os.access(args.mvnmf_bin, os.X_OK)
    print("mvnmf: %s" % (os.path.abspath(args.mvnmf_bin) if have_bin else
                         "program %r not found (cargo build --release --example "
                         "bench_models, or --mvnmf-bin): mvnmf rows skipped" % args.mvnmf_bin))
    print("peak RSS: %s" % ("GNU time -v (%s) per child process" % GNU_TIME
                            if os.access(GNU_TIME, os.X_OK) else
                            "os.wait4 ru_maxrss per child (no %s: may include up to this "
                            "parent's RSS)" % GNU_TIME))
    print("numpy: one warm-up + %d timed iterations each (median); mvnmf: `%s N %d %d` "
          "(median of 3 runs of %d iterations)"
          % (args.reps, os.path.basename(args.mvnmf_bin), K, args.mvnmf_iters, args.mvnmf_iters))
    sys.stdout.flush()

    for n in sizes:
        print("\n== N=%d  K=%d  (one dense N x N f64 matrix: N^2*8 = %d bytes = %.1f MiB)"
              % (n, K, n * n * 8, n * n * 8 / 2**20))
        sys.stdout.flush()
        rs = None
        if have_bin:
            try:
                rs = run_mvnmf(args.mvnmf_bin, n, args.mvnmf_iters, env)
                for c in rs["comments"]:
                    print("  mvnmf %s" % c)
                print("  mvnmf process: wall %.2f s, user %.2f s, sys %.2f s (all four models, "
                      "set-up and pre-training included)" % ((rs["wall"],) + tuple(rs["cpu"])))
            except Exception as e:  # report and go on
                print("  mvnmf failed: %s" % e)
        npr = {}
        for kind in ("baseline", "mvsl", "dmcl"):
            try:
                npr[kind] = run_worker(kind, n, args.reps, args.threads, args.seed, env)
            except Exception as e:
                print("  numpy %s failed: %s" % (kind, e))
        for kind, graph in (("mvsl", "TGE-shaped"), ("dmcl", "SGE")):
            r = npr.get(kind)
            if r:
                print("  numpy %s: dense %s graph nnz affinity %d penalty %d; set-up %.2f s; "
                      "iterations %s s; objective %s; BLAS threads %s; process wall %.2f s, "
                      "user %.2f s, sys %.2f s"
                      % (kind, graph, r["nnz"][0], r["nnz"][1], r["setup"],
                         " ".join("%.4f" % t for t in r["times"]),
                         " ".join("%.6g" % o for o in r["objective"]), r["blas_threads"],
                         r["wall"], r["cpu"][0], r["cpu"][1]))

        def row(label, t, rss_kib, extra=""):
            print("  %-34s %14s %14s   %s"
                  % (label, "%.6f" % t if t is not None else "n/a",
                     "%.1f" % mib(rss_kib) if rss_kib is not None else "n/a", extra))

        print("  %-34s %14s %14s" % ("", "s/iter", "peak RSS MiB"))
        rss_rust = rs["maxrss_kib"] if rs else None
        for name in ("nmf", "mvsl_t", "mcl", "dmcl3"):
            if rs:
                row("mvnmf " + name, rs[name][0], rss_rust,
                    "(one process for all four; workspace %.2f MiB)" % (rs[name][1] / 2**20))
            else:
                row("mvnmf " + name, None, None)
        for kind, label in (("mvsl", "numpy mvsl (dense TGE-shaped)"),
                            ("dmcl", "numpy dmcl sweep (dense SGE)")):
            r = npr.get(kind)
            row(label, r["median"] if r else None, r["maxrss_kib"] if r else None)
        b = npr.get("baseline")
        row("numpy baseline (python+numpy+data)", None, b["maxrss_kib"] if b else None)

        def ratio(a, b):
            return "%.2f" % (a / b) if a is not None and b else "n/a"

        t = {k: rs[k][0] for k in ("nmf", "mvsl_t", "mcl", "dmcl3")} if rs else {}
        nm = npr.get("mvsl", {}).get("median")
        nd = npr.get("dmcl", {}).get("median")
        print("  ratios: mvsl_t/nmf = %s   numpy_mvsl/mvsl_t = %s   dmcl3/mcl = %s   "
              "numpy_dmcl/dmcl3 = %s"
              % (ratio(t.get("mvsl_t"), t.get("nmf")), ratio(nm, t.get("mvsl_t")),
                 ratio(t.get("dmcl3"), t.get("mcl")), ratio(nd, t.get("dmcl3"))))
        if rs and "mvsl" in npr and "dmcl" in npr:
            print("  peak memory: numpy mvsl / mvnmf process = %s, numpy dmcl / mvnmf process = %s"
                  % (ratio(npr["mvsl"]["maxrss_kib"], rss_rust),
                     ratio(npr["dmcl"]["maxrss_kib"], rss_rust)))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
