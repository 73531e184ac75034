"""The estimators on the real samples in data/: agreement with scikit-learn and a
numpy implementation of the same updates, no copies of the inputs, the objective
never rising, scikit-learn's stopping rule, semi-supervised accuracy, errors."""
import ctypes as C

import numpy as np
import pytest
import scipy.sparse as sp

import mvnmf
from mvnmf import MultiViewNMF, SemiSupervisedMultiViewNMF
from mvnmf._lib import ViewSet

from conftest import mfeat_labels, read_view


def start(n, m, k, seed=0):
    rng = np.random.default_rng(seed)
    return 0.05 + rng.random((n, k)), 0.05 + rng.random((k, m))


def rel(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


def test_nmf_equals_scikit_learn_from_the_same_start():
    # update_order='sklearn' (the default): W first, as scikit-learn's MU, so
    # from the same start the same call is scikit-learn's NMF(solver="mu") on X:
    # the iterates, the iteration count under tol and the error agree to 1e-9.
    # update_order='library' (the components first) is scikit-learn's fit of
    # the transpose (X.T = H.T W.T, its "W" being our components).
    skl = pytest.importorskip("sklearn.decomposition")
    x = read_view("mfeat-sample", 1)  # fou, 500 x 76
    w0, h0 = start(x.shape[0], x.shape[1], 6)
    for beta in ("frobenius", "kullback-leibler"):
        ref = skl.NMF(6, init="custom", solver="mu", beta_loss=beta, tol=1e-4, max_iter=500)
        wr = ref.fit_transform(x, W=w0.copy(), H=h0.copy())
        m = MultiViewNMF(6, init="custom", beta_loss=beta, tol=1e-4, max_iter=500)
        w = m.fit_transform(x, W=w0, H=h0)
        assert m.n_iter_ == ref.n_iter_, beta
        assert rel(w, wr) < 1e-9 and rel(m.components_, ref.components_) < 1e-9, beta
        assert abs(m.reconstruction_err_ - ref.reconstruction_err_) <= 1e-9 * ref.reconstruction_err_
        # CSR input: the same fit.
        s = MultiViewNMF(6, init="custom", beta_loss=beta, tol=1e-4, max_iter=500)
        assert rel(s.fit_transform(sp.csr_matrix(x), W=w0, H=h0), wr) < 1e-9, beta

        tr = skl.NMF(6, init="custom", solver="mu", beta_loss=beta, tol=1e-4, max_iter=500)
        ht = tr.fit_transform(x.T.copy(), W=h0.T.copy(), H=w0.T.copy()).T
        lib = MultiViewNMF(6, init="custom", beta_loss=beta, tol=1e-4, max_iter=500, update_order="library")
        wl = lib.fit_transform(x, W=w0, H=h0)
        assert lib.n_iter_ == tr.n_iter_, beta
        assert rel(wl, tr.components_.T) < 1e-9 and rel(lib.components_, ht) < 1e-9, beta
        # The two orders are different paths: the same error to 1 %, not the same W.
        assert abs(lib.reconstruction_err_ - m.reconstruction_err_) <= 0.01 * m.reconstruction_err_, beta
        assert rel(wl, w) > 1e-3, beta


def test_several_views_equal_scikit_learn_of_the_views_side_by_side():
    # Joint NMF with one shared W is the NMF of [X_1 X_2]: with the default
    # update order, scikit-learn's NMF(solver="mu") of that matrix, whether
    # the views come as a list or as one X with view_sizes.
    skl = pytest.importorskip("sklearn.decomposition")
    xs = [read_view("mfeat-sample", v)[:200] for v in (1, 5)]
    x = np.hstack(xs)
    w0, h0 = start(200, x.shape[1], 5, 8)
    ref = skl.NMF(5, init="custom", solver="mu", tol=0, max_iter=60)
    wr = ref.fit_transform(x, W=w0.copy(), H=h0.copy())
    sizes = [a.shape[1] for a in xs]
    one = MultiViewNMF(5, init="custom", tol=0, max_iter=60, view_sizes=sizes, random_state=0)
    assert rel(one.fit_transform(x, W=w0, H=h0), wr) < 1e-9
    assert rel(one.components_, ref.components_) < 1e-9
    many = MultiViewNMF(5, init="custom", tol=0, max_iter=60, random_state=0)
    assert rel(many.fit_transform(xs, W=w0, H=np.split(h0, np.cumsum(sizes)[:-1], axis=1)), wr) < 1e-9
    assert rel(np.hstack(many.components_), ref.components_) < 1e-9
    # transform uses the fitted components per view (the library's encoding).
    assert rel(many.transform(xs), one.transform(x)) < 1e-12


def test_joint_nmf_equals_numpy_updates():
    # The library's multiplicative updates in plain numpy: each H_v first, then the shared W.
    xs = [read_view("mfeat-sample", v)[:200] for v in (1, 5)]
    n, k, iters = 200, 5, 40
    w0, _ = start(n, 1, k, 3)
    hs0 = [start(1, x.shape[1], k, 4 + i)[1] for i, x in enumerate(xs)]
    w, hs = w0.copy(), [h.copy() for h in hs0]
    for _ in range(iters):
        for i, x in enumerate(xs):
            hs[i] *= (w.T @ x) / (w.T @ w @ hs[i])
        w *= sum(x @ h.T for x, h in zip(xs, hs)) / (w @ sum(h @ h.T for h in hs))
    m = MultiViewNMF(k, init="custom", tol=0, max_iter=iters, update_order="library")
    wm = m.fit_transform(xs, W=w0, H=hs0)
    assert m.n_iter_ == iters
    assert rel(wm, w) < 1e-9
    for a, b in zip(m.components_, hs):
        assert rel(a, b) < 1e-9


def test_inputs_are_used_in_place():
    x = read_view("mfeat-sample", 2)  # fac, 500 x 216
    for a in (x, x[:, 10:150], x[100:300]):
        vs = C.cast(ViewSet([a]).array[0].values, C.c_void_p).value
        assert vs == a.ctypes.data  # the view points into the array itself
    # Fortran order and float32 are converted (a copy), with the same results.
    f = MultiViewNMF(4, random_state=0, max_iter=20).fit_transform(np.asfortranarray(x))
    c = MultiViewNMF(4, random_state=0, max_iter=20).fit_transform(x)
    assert np.array_equal(f, c)
    # scipy CSR: the values in place (int32 indices are widened to size_t, a copy).
    s = sp.csr_matrix(x)
    vs = ViewSet([s])
    assert C.cast(vs.array[0].values, C.c_void_p).value == s.data.ctypes.data
    # The outputs are the library's buffers: W is C-contiguous and owns its data.
    assert c.flags.c_contiguous and c.flags.owndata


def test_sparse_input_equals_dense():
    x = read_view("mfeat-sample", 4)  # pix, 60 % nonzero
    d = MultiViewNMF(8, random_state=2, max_iter=60, tol=0).fit_transform(x)
    s = MultiViewNMF(8, random_state=2, max_iter=60, tol=0).fit_transform(sp.csr_matrix(x))
    assert rel(s, d) < 1e-10


def test_objective_never_rises_and_stops_like_scikit_learn():
    xs = [read_view("mfeat-sample", v)[:250] for v in (1, 5, 6)]
    for init in ("random", "nndsvd", "nndsvda", "nndsvdar"):
        m = MultiViewNMF(6, init=init, random_state=0, tol=1e-4, max_iter=1000).fit(xs)
        t = m.objective_trace_
        assert len(t) == m.n_iter_ + 1
        assert np.all(np.diff(t) <= 1e-12 * t[0]), init
        assert m.converged_ and m.n_iter_ % 10 == 0, (init, m.n_iter_)
    every = MultiViewNMF(6, init=init, random_state=0, tol=1e-4, max_iter=1000, stop_rule="every_iteration").fit(xs)
    assert every.n_iter_ != m.n_iter_ or every.n_iter_ % 10 != 0


def test_transform_encodes_new_samples():
    xs = [read_view("mfeat-sample", v) for v in (1, 5)]
    m = MultiViewNMF(10, random_state=0, tol=0, max_iter=300)
    w = m.fit_transform([x[:400] for x in xs])
    new = m.transform([x[400:] for x in xs])
    assert new.shape == (100, 10) and (new >= 0).all()
    # Encoding the training samples again is close to the fitted W.
    again = m.transform([x[:400] for x in xs])
    assert np.linalg.norm(again - w) <= 0.05 * np.linalg.norm(w)
    rec = m.inverse_transform(w)
    assert [r.shape for r in rec] == [(400, 76), (400, 47)]


def test_semi_supervised_beats_unsupervised_on_real_data():
    pytest.importorskip("sklearn")
    from sklearn.neighbors import KNeighborsClassifier
    views = [read_view("mfeat-sample", v) for v in (1, 2, 4, 5, 6)]  # kar has negative values
    views = [x / np.sqrt((x ** 2).sum() / x.shape[0]) for x in views]  # ||X_v||_F^2 = N
    y = mfeat_labels()
    rng = np.random.default_rng(0)
    lab = np.zeros(len(y), bool)
    for c in range(10):
        lab[rng.choice(np.flatnonzero(y == c), 15, replace=False)] = True  # 30 % labeled

    def knn(z):
        return KNeighborsClassifier(9).fit(z[lab], y[lab]).score(z[~lab], y[~lab])

    s = SemiSupervisedMultiViewNMF(20, method="mvsl-t", alpha=1.5, random_state=1)
    z = s.fit(views, np.where(lab, y, -1)).embedding_
    w = MultiViewNMF(20, random_state=1).fit_transform(views)
    # Measured: MvSL-T 97.4 %, joint NMF 93.1 % (the README's table: 97.4, 93.6).
    assert knn(z) > 0.95 and knn(z) > knn(w) + 0.02, (knn(z), knn(w))
    assert np.isclose(s.view_weights_.sum(), 1.0) and (s.view_weights_ >= 0).all()
    assert np.all(np.diff(s.objective_trace_) <= 1e-10 * abs(s.objective_trace_[0]))
    assert s.transform(views).shape == (len(y), 20)


def test_bad_input_raises_with_the_status():
    x = read_view("mfeat-sample", 1)
    # scikit-learn's input checks come first (its messages, ValueError) ...
    with pytest.raises(ValueError, match="Negative values"):
        MultiViewNMF(3).fit(-x)
    bad = x.copy()
    bad[3, 4] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        MultiViewNMF(3).fit(bad)
    with pytest.raises(ValueError, match="n_components"):
        MultiViewNMF(0).fit(x)
    # ... and what only the library checks comes back as its status.
    with pytest.raises(mvnmf.MvnmfError) as e:
        MultiViewNMF(3).fit(x * 1e300)
    assert e.value.name == "MVNMF_STATUS_INPUT_TOO_LARGE"
    with pytest.raises(ValueError, match="same number of samples"):
        MultiViewNMF(3).fit([x, x[:10]])
    with pytest.raises(ValueError, match="beta_loss"):
        MultiViewNMF(3, beta_loss="l1").fit(x)
    with pytest.raises(ValueError, match="features"):
        MultiViewNMF(3, max_iter=5).fit(x).transform(x[:, :10])
    with pytest.raises(ValueError, match="-1 for unlabeled"):
        SemiSupervisedMultiViewNMF(3).fit([x], np.full(len(x), -2))


def test_params_follow_scikit_learn_conventions():
    base = pytest.importorskip("sklearn.base")
    m = MultiViewNMF(7, tol=1e-3, random_state=4)
    c = base.clone(m)
    assert c.get_params() == m.get_params() and c is not m
    assert m.set_params(max_iter=9).max_iter == 9
    with pytest.raises(ValueError):
        m.set_params(bogus=1)
    with pytest.raises(ValueError, match="not fitted"):
        m.transform(np.ones((3, 3)))


def test_threads_give_the_same_bits():
    # n_jobs runs the library's parallel regions on its own pool; every region
    # is split by the problem's shape alone, so the result does not move.
    views = [read_view("mfeat-sample", v) for v in (1, 2, 5)]
    fits = [MultiViewNMF(12, max_iter=30, random_state=3, n_jobs=j).fit(views) for j in (None, 2, 3, -1)]
    for f in fits[1:]:
        for a, b in zip(f.components_, fits[0].components_):
            assert np.array_equal(a, b)
        assert np.array_equal(f.objective_trace_, fits[0].objective_trace_)
    with pytest.raises(ValueError):
        MultiViewNMF(3, n_jobs=0).fit(views)


def test_graph_option_exact_approx_auto():
    # graph='auto' is the exact search below 4096 samples (the same bits); 'approx'
    # (NN-descent) fits as well here: kNN accuracy within 2 points of the exact graph's.
    skl = pytest.importorskip("sklearn.neighbors")
    from sklearn.utils._param_validation import InvalidParameterError
    views = [read_view("mfeat-sample", v) for v in (1, 5, 6)]
    views = [x / np.sqrt((x ** 2).sum() / x.shape[0]) for x in views]
    y = mfeat_labels()
    lab = np.arange(len(y)) % 5 == 0  # 20 % labeled
    yy = np.where(lab, y, -1)

    def fit(graph):
        return SemiSupervisedMultiViewNMF(10, graph=graph, max_iter=60, tol=0, random_state=1).fit(views, yy)

    def knn(z):
        return skl.KNeighborsClassifier(1).fit(z[lab], y[lab]).score(z[~lab], y[~lab])

    exact, approx, auto = fit("exact"), fit("approx"), fit("auto")
    assert np.array_equal(exact.embedding_, auto.embedding_)
    assert abs(knn(exact.embedding_) - knn(approx.embedding_)) <= 0.02, (knn(exact.embedding_),
                                                                        knn(approx.embedding_))
    assert np.all(np.diff(approx.objective_trace_) <= 1e-10 * abs(approx.objective_trace_[0]))
    assert len(approx.objective_trace_) == 61  # the set-up phases are not iterates
    with pytest.raises(InvalidParameterError, match="graph"):
        SemiSupervisedMultiViewNMF(3, graph="fast").fit(views, yy)
