#!/usr/bin/env python3
"""Write tests/fixtures/sklearn_stopping.txt: scikit-learn's iteration counts under
its stopping rule, for mvnmf's StopRule::ScikitLearn (tests/stopping.rs).

scikit-learn's NMF(solver="mu") checks, every 10 iterations, the error
e = sqrt(2 * D_beta(X | W H)) and stops when (e_previous_check - e) / e_0 < tol
(sklearn/decomposition/_nmf.py, _fit_multiplicative_update). mvnmf's
StopRule::ScikitLearn is that rule; from the same start and tol both must run
the same number of iterations (n_iter_) and end at the same error.

Data: real views shipped with the project (data/mfeat-sample: fou, 76 x 500,
dense; pix, 240 x 500, 60 % nonzero; data/ng20-sample: domain A word counts,
1500 x 1350, 3 % nonzero, given to scikit-learn as CSR and to mvnmf as CSC).
The start is a formula both sides evaluate exactly (no random generator to
match): entry t of W (column-major, t = 0, 1, ...) is
0.05 + ((t * 2654435761) mod 1009) / 1009, and of H the same with t + 7.

Format: one case per line, whitespace separated:
    name dir view beta k tol max_iter n_iter e0 e_final
(e: scikit-learn's sqrt(2 D) at the start and at the end, '%.17g').
Line 1 is a comment with the scikit-learn version.

Rerun from the repository root: python3 scripts/make_stopping_fixture.py
"""
import gzip
import os
import warnings

import numpy as np
import scipy.sparse as sp
import sklearn
from sklearn.decomposition import NMF
from sklearn.decomposition._nmf import _beta_divergence

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "tests", "fixtures", "sklearn_stopping.txt")

CASES = [
    # name, dir, view, beta, k, tol, max_iter
    ("fou-frobenius-1e-3", "mfeat-sample", 1, 2.0, 8, 1e-3, 1000),
    ("fou-frobenius-1e-4", "mfeat-sample", 1, 2.0, 8, 1e-4, 1000),
    ("pix-frobenius-1e-4", "mfeat-sample", 4, 2.0, 10, 1e-4, 1000),
    ("fou-kl-1e-4", "mfeat-sample", 1, 1.0, 8, 1e-4, 1000),
    ("ng20a-kl-1e-3", "ng20-sample", 1, 1.0, 10, 1e-3, 1000),
]


def read_view(d, v):
    meta = open(os.path.join(REPO, "data", d, "meta.txt")).read().split("\n")
    line = next(l for l in meta if l.startswith("view%d.f64" % v))
    f = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
    rows, cols = int(f["rows"]), int(f["cols"])
    path = os.path.join(REPO, "data", d, "view%d.f64" % v)
    raw = open(path, "rb").read() if os.path.exists(path) else gzip.open(path + ".gz").read()
    return np.frombuffer(raw, dtype="<f8").reshape((rows, cols), order="F").copy()


def start(rows, cols, offset):
    t = np.arange(rows * cols, dtype=np.uint64) + np.uint64(offset)
    vals = 0.05 + ((t * np.uint64(2654435761)) % np.uint64(1009)).astype(np.float64) / 1009.0
    return vals.reshape((rows, cols), order="F")


def main():
    out = ["# sklearn %s" % sklearn.__version__]
    for name, d, v, beta, k, tol, max_iter in CASES:
        x = read_view(d, v)
        m, n = x.shape
        w0, h0 = start(m, k, 0), start(k, n, 7)
        xs = sp.csr_matrix(x) if d == "ng20-sample" else x
        model = NMF(n_components=k, init="custom", solver="mu", beta_loss=beta, tol=tol,
                    max_iter=max_iter)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            w = model.fit_transform(xs, W=w0.copy(), H=h0.copy())
        h = model.components_
        e0 = _beta_divergence(xs, w0, h0, beta, square_root=True)
        e1 = _beta_divergence(xs, w, h, beta, square_root=True)
        assert model.n_iter_ < max_iter, name
        out.append("%s %s %d %g %d %g %d %d %.17g %.17g" % (name, d, v, beta, k, tol, max_iter,
                                                           model.n_iter_, e0, e1))
        print(out[-1])
    with open(OUT, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
