#!/usr/bin/env python3
"""Write the scikit-learn reference fixtures for mvnmf's multiplicative-update NMF.

What the fixtures are for
-------------------------
mvnmf's NMF (Frobenius loss, multiplicative updates, U first then V per
iteration)

    U <- U * (X V^T) / (U (V V^T))
    V <- V * (U^T X) / ((U^T U) V)

is exactly scikit-learn's ``NMF(solver="mu", beta_loss="frobenius")`` when
sklearn is given X as is (M x N, features x items), W = U (M x K) and
H = V (K x N); sklearn also updates W first, then H.  The Rust tests read
these files, start from the same U0/V0, run the same number of iterations
and compare their U/V with sklearn's, so the fixture pins mvnmf to an
independent reference implementation.

Files written (folders are created if missing):

    tests/fixtures/sklearn_mu_dense.txt   M=30, N=20, dense X uniform [0, 1)
    tests/fixtures/sklearn_mu_sparse.txt  M=40, N=25, ~15% nonzeros uniform (0, 1],
                                          no all-zero row or column; sklearn
                                          gets it as a scipy.sparse.csc_matrix

Both use K=4, U0 and V0 uniform (0.05, 1], 50 iterations, tol=0 (so exactly
50 iterations run) and no regularisation.

Format (plain text, whitespace separated, every number printed with
'%.17g' so it round-trips to the same f64):

    line 1: M N K iters
    line 2: the sklearn version, e.g. "sklearn 1.9.1"
    line 3: X        (M*N values, zeros included)  column-major
    line 4: U0       (M*K values)                  column-major
    line 5: V0       (K*N values)                  column-major
    line 6: U_final  (M*K values)                  column-major
    line 7: V_final  (K*N values)                  column-major

"Column-major" means numpy's ``order='F'`` flattening, mvnmf's storage order
(items are columns).

As a self-check the script also runs the same 50 updates in plain numpy
(no epsilon anywhere) and asserts they agree with sklearn to 1e-10: max|diff|
relative to max|entry|, and elementwise relative on every entry >= 1e-6 times
the largest; it also reads each file back and checks it.

Note for the tests that read the sparse fixture: with ~15% density a number of
entries of U_final/V_final collapse towards zero (1e-40 ... 1e-300, a
subnormal, and some exactly 0.0 by underflow; this happens for every seed
tried, it is how MU behaves on such data).  Compare with a tolerance relative
to the matrix's largest entry (plus elementwise on the large entries), not
purely elementwise.  No denominator is ever zero, so no epsilon is involved.

How to rerun (from the repository root):

    pip install numpy scipy scikit-learn
    python3 scripts/make_sklearn_fixture.py

The output depends on the inputs only through fixed seeds, so rerunning
reproduces X/U0/V0 exactly; U_final/V_final may differ from a file written
by another sklearn/numpy/BLAS version in the last few bits (far below the
tolerance the Rust tests use).
"""

import os
import sys

import numpy as np
import scipy.sparse as sp
import sklearn
from sklearn.decomposition import NMF

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(REPO, "tests", "fixtures")
K = 4
ITERS = 50
REL_TOL = 1e-10


def uniform_open_low(rng, shape, low):
    """Uniform on (low, 1]: 1 - (1 - low) * [0, 1)."""
    return 1.0 - (1.0 - low) * rng.random(shape)


def make_dense(rng, m, n):
    return rng.random((m, n))  # uniform [0, 1)


def make_sparse(rng, m, n, density):
    mask = rng.random((m, n)) < density
    # no all-zero row and no all-zero column
    for i in np.flatnonzero(~mask.any(axis=1)):
        mask[i, rng.integers(n)] = True
    for j in np.flatnonzero(~mask.any(axis=0)):
        mask[rng.integers(m), j] = True
    x = np.zeros((m, n))
    x[mask] = uniform_open_low(rng, int(mask.sum()), 0.0)  # uniform (0, 1]
    assert (x > 0).any(axis=0).all() and (x > 0).any(axis=1).all()
    return x


def numpy_mu(x, u, v, iters):
    """Plain numpy reference: U first then V, no epsilon."""
    u = u.copy()
    v = v.copy()
    for _ in range(iters):
        u *= (x @ v.T) / (u @ (v @ v.T))
        v *= (u.T @ x) / ((u.T @ u) @ v)
    return u, v


def compare(a, b):
    """(normwise relative, elementwise relative on entries >= 1e-6*max, #tiny).

    On the sparse case some entries of U/V collapse towards zero (they reach
    1e-100 and below, some underflow to exactly 0.0): an elementwise relative
    error means nothing there, so those entries are held to the normwise bound.
    """
    scale = float(np.max(np.abs(b)))
    normwise = float(np.max(np.abs(a - b))) / scale
    big = np.abs(b) >= 1e-6 * scale
    elementwise = float(np.max(np.abs(a - b)[big] / np.abs(b[big])))
    return normwise, elementwise, int((~big).sum()), int((b == 0).sum())


def fmt_row(a):
    return " ".join("%.17g" % t for t in np.asarray(a, dtype=np.float64).ravel(order="F"))


def write_case(name, seed, m, n, sparse):
    rng = np.random.default_rng(seed)
    x = make_sparse(rng, m, n, 0.15) if sparse else make_dense(rng, m, n)
    u0 = uniform_open_low(rng, (m, K), 0.05)
    v0 = uniform_open_low(rng, (K, n), 0.05)

    model = NMF(
        n_components=K,
        init="custom",
        solver="mu",
        beta_loss="frobenius",
        max_iter=ITERS,
        tol=0.0,
        alpha_W=0.0,
        alpha_H=0.0,
    )
    x_in = sp.csc_matrix(x) if sparse else x
    u_sk = model.fit_transform(x_in, W=u0.copy(), H=v0.copy())
    v_sk = model.components_
    assert model.n_iter_ == ITERS, (model.n_iter_, ITERS)
    assert u_sk.shape == (m, K) and v_sk.shape == (K, n)

    # self-check against plain numpy
    u_np, v_np = numpy_mu(x, u0, v0, ITERS)
    cu, cv = compare(u_np, u_sk), compare(v_np, v_sk)
    assert max(cu[:2] + cv[:2]) < REL_TOL, (cu, cv)
    assert np.array_equal(u_np == 0, u_sk == 0) and np.array_equal(v_np == 0, v_sk == 0)

    path = os.path.join(OUT_DIR, name)
    with open(path, "w") as f:
        f.write("%d %d %d %d\n" % (m, n, K, ITERS))
        f.write("sklearn %s\n" % sklearn.__version__)
        for a in (x, u0, v0, u_sk, v_sk):
            f.write(fmt_row(a) + "\n")

    # read back
    with open(path) as f:
        lines = f.read().splitlines()
    assert len(lines) == 7
    mm, nn, kk, it = map(int, lines[0].split())
    assert (mm, nn, kk, it) == (m, n, K, ITERS)
    shapes = [(m, n), (m, K), (K, n), (m, K), (K, n)]
    for line, shp, a in zip(lines[2:], shapes, (x, u0, v0, u_sk, v_sk)):
        back = np.array(line.split(), dtype=np.float64).reshape(shp, order="F")
        assert np.array_equal(back, a)

    err0 = np.linalg.norm(x - u0 @ v0)
    err = np.linalg.norm(x - u_sk @ v_sk)
    print("%s: M=%d N=%d K=%d iters=%d nnz=%d (%.1f%%) seed=%d n_iter_=%d"
          % (os.path.relpath(path, REPO), m, n, K, ITERS, np.count_nonzero(x),
             100.0 * np.count_nonzero(x) / x.size, seed, model.n_iter_))
    for nm, c in (("U", cu), ("V", cv)):
        print("  numpy vs sklearn %s: max|diff|/max|sklearn| %.2e, elementwise rel "
              "(entries >= 1e-6*max) %.2e, both < %g; entries < 1e-6*max: %d "
              "(exactly 0.0: %d, same in both)" % (nm, c[0], c[1], REL_TOL, c[2], c[3]))
    print("  ||X - U V||_F: %.6f at start -> %.6f after %d iterations; file read back "
          "exactly" % (err0, err, ITERS))


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    print("sklearn %s, numpy %s, python %s" % (sklearn.__version__, np.__version__,
                                               sys.version.split()[0]))
    write_case("sklearn_mu_dense.txt", seed=20240601, m=30, n=20, sparse=False)
    write_case("sklearn_mu_sparse.txt", seed=20240602, m=40, n=25, sparse=True)


if __name__ == "__main__":
    main()
