#!/usr/bin/env python3
"""Write the scikit-learn reference fixture for mvnmf's β-divergence NMF.

scikit-learn's NMF(solver="mu", beta_loss=β, init="custom", tol=0) from the
same U0 / V0 (W / H in scikit-learn's names; X as is, features x items), 50
iterations, for β = 1 (Kullback–Leibler; dense and sparse CSC X), β = 0
(Itakura–Saito; dense, positive X) and β = 0.5 (dense). The data keep every
entry of U V far above scikit-learn's EPSILON and no factor entry falls below
float64 eps, so none of scikit-learn's floors and zeroings act: the iterates
are the plain majorise–minimise updates on both sides.

File: tests/fixtures/sklearn_beta.txt, one block per case:

    case NAME M N K beta sparse(0|1) iters
    X, U0 (M*K), V0 (K*N), U (M*K), V (K*N)   column-major, '%.17g'

Rerun (from the repository root):

    pip install numpy scipy scikit-learn
    python3 scripts/make_beta_fixture.py
"""

import os

import numpy as np
import scipy.sparse as sp
import sklearn
from sklearn.decomposition import NMF

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "tests", "fixtures", "sklearn_beta.txt")
ITERS = 50
K = 4


def fmt(a):
    return " ".join("%.17g" % v for v in np.asarray(a, dtype=float).ravel(order="F"))


def case(out, name, X, beta, rng, iters=ITERS):
    dense = X.toarray() if sp.issparse(X) else X
    m, n = dense.shape
    U0 = rng.uniform(0.05, 1.0, (m, K))
    V0 = rng.uniform(0.05, 1.0, (K, n))
    model = NMF(n_components=K, init="custom", solver="mu", beta_loss=beta, max_iter=iters, tol=0.0)
    U = model.fit_transform(X, W=U0.copy(), H=V0.copy())
    V = model.components_
    assert model.n_iter_ == iters
    assert min(U.min(), V.min()) > 1e-12, "a factor entry near scikit-learn's zeroing threshold"
    Y = U @ V
    assert (Y[dense > 0] if sp.issparse(X) else Y).min() > 1e-5, "U V near scikit-learn's EPSILON"
    out.write("case %s %d %d %d %.17g %d %d\n" % (name, m, n, K, beta, int(sp.issparse(X)), iters))
    for a in (dense, U0, V0, U, V):
        out.write(fmt(a) + "\n")


def main():
    rng = np.random.default_rng(1724)
    with open(OUT, "w") as out:
        out.write("sklearn %s\n" % sklearn.__version__)
        X = rng.random((30, 3)) @ rng.random((3, 20)) + 0.1 * rng.random((30, 20)) + 0.05
        case(out, "kl_dense", X, 1.0, rng)
        case(out, "is_dense", X, 0.0, rng)
        case(out, "b05_dense", X, 0.5, rng)
        S = rng.random((40, 25)) * (rng.random((40, 25)) < 0.5)
        for i in range(40):
            S[i, i % 25] = S[i, i % 25] or 0.5
        for j in range(25):
            S[j, j] = S[j, j] or 0.5
        # CSR, not CSC: scikit-learn 1.9.1's MU with beta_loss != 2 pairs the
        # data of X with that of its own CSR product W H (`X.data` against
        # `WH.data`), which is only right when X is CSR too; with a CSC X its
        # iterates differ from the same X given dense or as CSR (checked here).
        Xd = NMF(n_components=K, init="custom", solver="mu", beta_loss=1.0, max_iter=3, tol=0.0)
        U0 = rng.uniform(0.05, 1.0, (40, K))
        V0 = rng.uniform(0.05, 1.0, (K, 25))
        a = Xd.fit_transform(S, W=U0.copy(), H=V0.copy())
        b = Xd.fit_transform(sp.csr_matrix(S), W=U0.copy(), H=V0.copy())
        assert np.abs(a - b).max() < 1e-12 * np.abs(a).max()
        case(out, "kl_sparse", sp.csr_matrix(S), 1.0, rng, iters=20)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
