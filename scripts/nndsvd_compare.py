#!/usr/bin/env python3
"""scikit-learn's side of the NNDSVDa comparison in docs/models.md ("Starts").

NMF (multiplicative updates, Frobenius loss, tol 0) from init="nndsvda" and
init="random" on two shipped views: data/mfeat-sample view2 (fac, 216 x 500,
dense) and data/ng20-sample view1 (text counts, CSC); K = 20, 200
iterations. Prints the relative error ||X - WH||_F / ||X||_F. mvnmf's side:
`cargo run --release --example nndsvd_start`.

    pip install numpy scipy scikit-learn
    python3 scripts/nndsvd_compare.py
"""

import gzip
import os

import numpy as np
import scipy.sparse as sp
from sklearn.decomposition import NMF

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def view(dir_, file_, rows, cols):
    path = os.path.join(REPO, "data", dir_, file_)
    raw = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
    return np.frombuffer(raw, dtype="<f8").reshape((rows, cols), order="F")


def meta(dir_, file_):
    for line in open(os.path.join(REPO, "data", dir_, "meta.txt")):
        t = line.split()
        if t and t[0] in (file_, file_[:-3]):
            kv = dict(x.split("=", 1) for x in t[1:] if "=" in x)
            return int(kv["rows"]), int(kv["cols"])
    raise SystemExit("no %s in %s/meta.txt" % (file_, dir_))


def main():
    for dir_, file_, sparse in (("mfeat-sample", "view2.f64", False), ("ng20-sample", "view1.f64.gz", True)):
        r, c = meta(dir_, file_)
        X = view(dir_, file_, r, c)
        Xs = sp.csc_matrix(X) if sparse else X
        for init in ("nndsvda", "random"):
            m = NMF(n_components=20, init=init, solver="mu", beta_loss="frobenius", max_iter=200, tol=0.0,
                    random_state=0)
            W = m.fit_transform(Xs)
            err = np.linalg.norm(X - W @ m.components_) / np.linalg.norm(X)
            print("%-14s %-8s scikit-learn relative error %.6f" % (dir_, init, err))


if __name__ == "__main__":
    main()
