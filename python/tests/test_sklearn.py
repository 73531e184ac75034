"""scikit-learn conformance (issue 34): check_estimator, parameter validation,
float32 through the `_f32` entry points, feature names and set_output, and
several views through model selection (one 2-D X with `view_sizes`)."""
import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone, is_classifier, is_regressor  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils._param_validation import InvalidParameterError  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from conftest import mfeat_labels, read_view  # noqa: E402
from mvnmf import MultiViewNMF, SemiSupervisedMultiViewNMF  # noqa: E402
from mvnmf.estimators import expected_failed_checks  # noqa: E402


@parametrize_with_checks([MultiViewNMF(), MultiViewNMF(init="random", beta_loss="kullback-leibler")],
                         expected_failed_checks=expected_failed_checks)
def test_check_estimator(estimator, check):
    check(estimator)


def test_the_declared_failures_are_real():
    # What expected_failed_checks declares must fail for the reason it gives:
    # after the default fit, transform(X) re-solves W by multiplicative updates
    # and lands more than check_transformer_general's 1e-2 away from the fit's W
    # (scikit-learn's own NMF(solver="mu") too), and the gap closes as both are
    # run further.
    from sklearn.datasets import make_blobs
    from sklearn.decomposition import NMF
    X, _ = make_blobs(n_samples=30, centers=[[0, 0, 0], [1, 1, 1]], random_state=0, n_features=2,
                      cluster_std=0.1)
    X -= X.min()
    gap = {}
    for iters in (200, 5000):
        m = MultiViewNMF(random_state=0, max_iter=iters, tol=0)
        gap[iters] = np.abs(m.fit_transform(X) - m.transform(X)).max()
    assert gap[200] > 1e-2 and gap[5000] < gap[200] / 2, gap
    with pytest.warns(Warning):
        ref = NMF(solver="mu", random_state=0)
        assert np.abs(ref.fit_transform(X) - ref.transform(X)).max() > 1e-2
    assert set(expected_failed_checks(MultiViewNMF())) == {"check_transformer_general",
                                                           "check_transformer_data_not_an_array"}


def test_estimator_kind_and_tags():
    for est in (MultiViewNMF(), SemiSupervisedMultiViewNMF()):
        assert not is_classifier(est) and not is_regressor(est)
        tags = est.__sklearn_tags__()
        assert tags.input_tags.positive_only and tags.input_tags.sparse
        assert tags.transformer_tags is not None
    assert SemiSupervisedMultiViewNMF().__sklearn_tags__().target_tags.required


@pytest.mark.parametrize("params, match", [
    (dict(max_iter=-1), "max_iter"),          # once wrapped to 2^32 - 1
    (dict(n_components=2.7), "n_components"),  # once truncated to 2
    (dict(n_components=0), "n_components"),
    (dict(tol=-1.0), "tol"),
    (dict(init="svd"), "init"),
    (dict(beta_loss=3.0), "beta_loss"),
    (dict(stop_rule="never"), "stop_rule"),
    (dict(n_jobs=1.5), "n_jobs"),
])
def test_parameters_are_validated_with_scikit_learns_errors(params, match):
    x = np.abs(np.random.default_rng(0).normal(size=(20, 6)))
    with pytest.raises(InvalidParameterError, match=match):
        MultiViewNMF(**params).fit(x)
    # Nothing fitted: a refused call leaves no attribute behind.
    m = MultiViewNMF(**params)
    with pytest.raises(ValueError):
        m.fit(x)
    assert not hasattr(m, "components_")
    with pytest.raises(InvalidParameterError):
        SemiSupervisedMultiViewNMF(max_iter=-1).fit([x], np.zeros(20, int))


def test_float32_in_float32_out():
    xs = [read_view("mfeat-sample", v) for v in (1, 5, 6)]
    x32 = [x.astype(np.float32) for x in xs]
    a = MultiViewNMF(8, init="nndsvda", random_state=0, max_iter=100, tol=0)
    w32 = a.fit_transform(x32)
    b = MultiViewNMF(8, init="nndsvda", random_state=0, max_iter=100, tol=0)
    w64 = b.fit_transform(xs)
    assert w32.dtype == np.float32 and all(c.dtype == np.float32 for c in a.components_)
    assert a.transform(x32).dtype == np.float32
    # The same updates in single precision: same iterates to float32's rounding.
    assert np.linalg.norm(w32 - w64) <= 1e-4 * np.linalg.norm(w64)
    # The error of the factors (in float64) to 1e-6 (measured 1.6e-8); the
    # reported reconstruction_err_ is the float32 solver's objective, formed as
    # ½‖X‖² − ⟨Q, V⟩ + ½⟨P, VVᵀ⟩, whose cancellation costs about
    # eps32 · ‖X‖² / ‖X − WH‖² relative (‖X‖ = 1.6e5, the residual 4.7e3:
    # 3.6e-4 measured), so 1e-3 for it.
    X = np.hstack(xs)
    err = [np.linalg.norm(X - w.astype(np.float64) @ np.hstack(m.components_).astype(np.float64))
           for w, m in ((w32, a), (w64, b))]
    assert abs(err[0] - err[1]) <= 1e-6 * err[1]
    assert abs(a.reconstruction_err_ - b.reconstruction_err_) <= 1e-3 * b.reconstruction_err_
    assert np.all(np.diff(a.objective_trace_) <= 1e-6 * a.objective_trace_[0])
    # One 2-D float32 X cut by view_sizes, and Kullback-Leibler, stay float32 too.
    X32 = np.hstack(x32)
    c = MultiViewNMF(8, beta_loss="kullback-leibler", max_iter=20, random_state=0,
                     view_sizes=[x.shape[1] for x in xs])
    assert c.fit_transform(X32).dtype == np.float32 and c.components_.dtype == np.float32
    # The semi-supervised pipeline too (mvnmf_pipeline_fit_f32, mvsl_encode_f32).
    y = np.where(np.arange(len(w64)) % 3 == 0, mfeat_labels(), -1)
    s32 = SemiSupervisedMultiViewNMF(6, method="mvsl-s", max_iter=20, random_state=0).fit(x32, y)
    s64 = SemiSupervisedMultiViewNMF(6, method="mvsl-s", max_iter=20, random_state=0).fit(xs, y)
    assert s32.embedding_.dtype == np.float32 and s32.transform(x32).dtype == np.float32
    assert np.linalg.norm(s32.embedding_ - s64.embedding_) <= 1e-5 * np.linalg.norm(s64.embedding_)  # 9e-7
    # Other dtypes are computed in float64.
    assert MultiViewNMF(3, max_iter=5).fit_transform(np.ones((10, 4), dtype=np.int64)).dtype == np.float64


def test_view_sizes_is_the_joint_fit_of_the_blocks():
    xs = [read_view("mfeat-sample", v) for v in (1, 5, 6)]
    sizes = [x.shape[1] for x in xs]
    X = np.hstack(xs)
    joint = MultiViewNMF(10, random_state=0, max_iter=60, tol=0)
    w = joint.fit_transform(xs)
    one = MultiViewNMF(10, random_state=0, max_iter=60, tol=0, view_sizes=sizes)
    w2 = one.fit_transform(X)
    # The blocks are used in place (column slices of X): the same fit, bit for bit.
    assert np.array_equal(w, w2)
    assert np.array_equal(one.components_, np.hstack(joint.components_))
    assert list(one.view_sizes_) == sizes and one.n_features_in_ == X.shape[1]
    assert np.array_equal(one.transform(X), joint.transform(xs))
    assert one.inverse_transform(w2).shape == X.shape
    # Joint NMF with one shared W is the NMF of the views side by side: in the
    # default (scikit-learn's) update order both are the one fit of X's
    # transpose, bit for bit; in the library's order the sums over views are
    # grouped otherwise (the same to rounding).
    plain = MultiViewNMF(10, random_state=0, max_iter=60, tol=0).fit_transform(X)
    assert np.array_equal(plain, w2)
    lib = dict(random_state=0, max_iter=60, tol=0, update_order="library")
    wl = MultiViewNMF(10, view_sizes=sizes, **lib).fit_transform(X)
    assert np.allclose(MultiViewNMF(10, **lib).fit_transform(X), wl, rtol=1e-6, atol=1e-9 * np.abs(wl).max())
    with pytest.raises(ValueError, match="view_sizes"):
        MultiViewNMF(3, view_sizes=[5, 5]).fit(X)
    # The semi-supervised pipeline reads view_sizes the same way.
    y = np.where(np.arange(len(X)) % 3 == 0, mfeat_labels(), -1)
    a = SemiSupervisedMultiViewNMF(6, method="mvsl-s", max_iter=20, random_state=0).fit(xs, y)
    b = SemiSupervisedMultiViewNMF(6, method="mvsl-s", max_iter=20, random_state=0, view_sizes=sizes).fit(X, y)
    assert np.array_equal(a.embedding_, b.embedding_) and np.array_equal(a.view_weights_, b.view_weights_)
    assert np.array_equal(a.transform(xs), b.transform(X))


def test_feature_names_and_set_output():
    x = read_view("mfeat-sample", 1)[:100]
    m = MultiViewNMF(4, max_iter=10, random_state=0).fit(x)
    assert list(m.get_feature_names_out()) == ["multiviewnmf%d" % i for i in range(4)]
    assert m.set_output(transform="default") is m
    pd = pytest.importorskip("pandas")
    m.set_output(transform="pandas")
    out = m.transform(x)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(m.get_feature_names_out())


def test_grid_search_over_a_three_view_fit():
    # The README's example: three views of mfeat side by side in one X, the joint
    # NMF inside a Pipeline, its rank chosen by GridSearchCV, then scored by
    # cross_val_score: every split refits the three-view model on its own samples.
    xs = [read_view("mfeat-sample", v) for v in (1, 2, 4)]  # fou, fac, pix: 76 + 216 + 240 columns
    xs = [x / np.sqrt((x ** 2).sum() / x.shape[0]) for x in xs]  # each view ||X_v||_F^2 = N
    X, y = np.hstack(xs), mfeat_labels()
    pipe = make_pipeline(MultiViewNMF(view_sizes=[76, 216, 240], init="nndsvda", max_iter=100, random_state=0),
                         StandardScaler(), LogisticRegression(max_iter=2000))
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    search = GridSearchCV(pipe, {"multiviewnmf__n_components": [4, 20]}, cv=cv).fit(X, y)
    scores = search.cv_results_["mean_test_score"]
    # Ten classes: chance is 0.1; 20 components separate them far better than 4.
    assert search.best_params_ == {"multiviewnmf__n_components": 20}, scores
    assert scores[1] > 0.85 and scores[1] > scores[0] + 0.05, scores
    fitted = search.best_estimator_[0]
    assert fitted.components_.shape == (20, X.shape[1]) and list(fitted.view_sizes_) == [76, 216, 240]
    assert cross_val_score(clone(search.best_estimator_), X, y, cv=cv).mean() > 0.85
