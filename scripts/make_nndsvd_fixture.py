#!/usr/bin/env python3
"""Write the scikit-learn reference fixture for mvnmf's NNDSVD starts.

scikit-learn's ``NMF(init="nndsvd" | "nndsvda")`` starts from
``sklearn.decomposition._nmf._initialize_nmf``, which takes the top K singular
triplets from ``randomized_svd``. mvnmf computes them exactly, so this script
replaces ``_randomized_svd`` (``randomized_svd`` in older versions) inside ``_nmf`` by an exact truncated SVD
(numpy's LAPACK SVD, the top K triplets) and then calls scikit-learn's own
``_initialize_nmf``: everything after the SVD — the positive / negative
parts, the threshold, the fills — is scikit-learn's code. (NNDSVDar fills with
numpy's random stream, which mvnmf does not reproduce; its tests check the
law, not the numbers.)

It also writes, for each case, scikit-learn's ``NMF(solver="mu")`` run from
that start for ITERS iterations, to compare mvnmf's fit started from its own
NNDSVDa with scikit-learn's end to end.

File: tests/fixtures/sklearn_nndsvd.txt, one block per case:

    case NAME M N K sparse(0|1)
    X        M*N values, column-major (zeros included)
    W_nndsvd  M*K column-major    H_nndsvd  K*N column-major
    W_nndsvda M*K                 H_nndsvda K*N
    W_fit     M*K                 H_fit     K*N   (MU, ITERS iterations, from nndsvda)
    err_fit   the relative error ||X - W H||_F / ||X||_F after the fit

Every number is printed with '%.17g'. Rerun (from the repository root):

    pip install numpy scipy scikit-learn
    python3 scripts/make_nndsvd_fixture.py
"""

import os

import numpy as np
import scipy.sparse as sp
import sklearn
from sklearn.decomposition import NMF, _nmf

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "tests", "fixtures", "sklearn_nndsvd.txt")
ITERS = 100


CALLS = [0]


def exact_svd(X, n_components, random_state=None, **kw):
    CALLS[0] += 1
    A = X.toarray() if sp.issparse(X) else np.asarray(X)
    U, S, Vt = np.linalg.svd(A, full_matrices=False)
    return U[:, :n_components], S[:n_components], Vt[:n_components]


# scikit-learn 1.9 calls its private `_randomized_svd` (older versions the
# public name); replace whichever it uses, and check below that it was called.
for _name in ("_randomized_svd", "randomized_svd"):
    if hasattr(_nmf, _name):
        setattr(_nmf, _name, exact_svd)


def fmt(a):
    return " ".join("%.17g" % v for v in np.asarray(a, dtype=float).ravel(order="F"))


def case(name, X, k, out):
    dense = X.toarray() if sp.issparse(X) else X
    m, n = dense.shape
    out.write("case %s %d %d %d %d\n" % (name, m, n, k, int(sp.issparse(X))))
    out.write(fmt(dense) + "\n")
    for init in ("nndsvd", "nndsvda"):
        W, H = _nmf._initialize_nmf(X, k, init=init, random_state=0)
        out.write(fmt(W) + "\n" + fmt(H) + "\n")
    W0, H0 = _nmf._initialize_nmf(X, k, init="nndsvda", random_state=0)
    model = NMF(n_components=k, init="custom", solver="mu", beta_loss="frobenius", max_iter=ITERS,
                tol=0.0, alpha_W=0.0, alpha_H=0.0)
    W = model.fit_transform(X, W=W0.copy(), H=H0.copy())
    H = model.components_
    out.write(fmt(W) + "\n" + fmt(H) + "\n")
    err = np.linalg.norm(dense - W @ H) / np.linalg.norm(dense)
    out.write("%.17g\n" % err)


def main():
    rng = np.random.default_rng(20261124)
    with open(OUT, "w") as out:
        out.write("sklearn %s iters %d\n" % (sklearn.__version__, ITERS))
        # The top K singular triplets must be well determined (distinct
        # singular values): a triplet whose sigma nearly equals the next one is
        # not (any SVD, scikit-learn's randomized one included, returns another
        # valid one). So: K = the rank of a clear low-rank signal, plus noise.
        # Dense: rank 4 plus small noise.
        m, n, k = 30, 24, 4
        X = (rng.random((m, 4)) * [4, 3, 2, 1]) @ rng.random((4, n)) + 0.01 * rng.random((m, n))
        case("dense", X, k, out)
        # Sparse, text-like: 5 topics of different sizes (documents x words
        # blocks), ~50 % of each block's entries stored: ~12 % overall.
        m, n, k = 40, 30, 5
        X = np.zeros((m, n))
        rows = np.array_split(np.arange(m), [4, 10, 18, 28])
        cols = np.array_split(np.arange(n), [3, 8, 14, 21])
        for t, (r, c) in enumerate(zip(rows, cols)):
            block = (1.0 + t) * rng.random((len(r), len(c))) * (rng.random((len(r), len(c))) < 0.5)
            block[0, 0] = block[0, 0] or 1.0
            X[np.ix_(r, c)] = block
        for i in range(m):
            X[i, i % n] = X[i, i % n] or 0.5
        case("sparse", sp.csc_matrix(X), k, out)
        # Wider than tall (the SVD takes the other Gram side): rank 3 plus noise.
        m, n, k = 20, 50, 3
        X = (rng.random((m, 3)) * [3, 2, 1]) @ rng.random((3, n)) + 0.01 * rng.random((m, n))
        case("wide", X, k, out)
        # Tall, K below the rank: the K-th gap still clear.
        m, n, k = 45, 25, 2
        X = (rng.random((m, 4)) * [6, 3, 0.5, 0.2]) @ rng.random((4, n))
        case("tall", X, k, out)
    assert CALLS[0] > 0, "the exact SVD was not used: scikit-learn's SVD name changed"
    print("wrote", OUT, "(exact SVD calls: %d)" % CALLS[0])


if __name__ == "__main__":
    main()
