"""The generated bindings against the header and the library: drift fails here."""
import ctypes as C
import os
import re
import subprocess
import sys

import mvnmf
from mvnmf import bindings as B

from conftest import REPO


def test_generated_files_match_the_header():
    # python/mvnmf/_bindings.py and julia/MVNMF/src/bindings.jl, regenerated from
    # include/mvnmf.h, must equal the committed files.
    r = subprocess.run([sys.executable, os.path.join(REPO, "python", "gen_bindings.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_every_function_of_the_header_is_declared_and_exported():
    header = open(os.path.join(REPO, "include", "mvnmf.h")).read()
    declared = set(re.findall(r"^\S.*?\b(mvnmf_\w+)\(", header, flags=re.M)) - {
        n for n in re.findall(r"\(\*(mvnmf_\w+)\)", header)}
    assert declared == set(B.SIGNATURES), declared ^ set(B.SIGNATURES)
    for name in declared:
        assert getattr(mvnmf.lib, name).argtypes is not None or not B.SIGNATURES[name][1]


def test_abi_version_and_struct_sizes_agree_with_the_library():
    assert mvnmf.lib.mvnmf_abi_version() == B.MVNMF_ABI_VERSION
    for code, cls in B.STRUCT_CODES.items():
        assert mvnmf.lib.mvnmf_struct_size(code) == C.sizeof(cls), cls.__name__
    # An unknown code is 0, not a guess.
    assert mvnmf.lib.mvnmf_struct_size(10_000) == 0


def test_status_messages_come_from_the_library():
    for code, name in B.STATUS_NAMES.items():
        assert mvnmf.lib.mvnmf_status_message(code).decode(), name


def test_a_refusal_says_argument_view_row_and_column():
    # Issue 33: a NaN in view 2 is refused with the argument's position and name, the view,
    # row and column (mvnmf's features x items layout: X[col, row] of the view's
    # (n_samples, n_features) array), and the outputs untouched.
    import numpy as np
    import pytest
    from mvnmf._lib import ViewSet

    rng = np.random.default_rng(0)
    ms, n, k = (4, 3, 5), 6, 2
    xs = [rng.random((n, m)) + 0.1 for m in ms]
    xs[2][3, 1] = np.nan
    vs = ViewSet(xs)
    g = B.mvnmf_graph()
    g.kind, g.n = B.MVNMF_GRAPH_NONE, n
    nb = C.c_size_t()
    mvnmf.call("mvnmf_mvsl_fit_workspace", vs.array, vs.count, C.byref(g), k, None, C.byref(nb))
    work = (C.c_uint8 * max(nb.value, 1))()
    us = [np.full(m * k, -7.0) for m in ms]
    dp = C.POINTER(C.c_double)
    ptrs = (dp * 3)(*[u.ctypes.data_as(dp) for u in us])
    v = np.full(k * n, -7.0)
    rep = B.mvnmf_report()
    with pytest.raises(mvnmf.MvnmfError) as e:
        mvnmf.call("mvnmf_mvsl_fit", vs.array, vs.count, C.byref(g), k, None, ptrs, v.ctypes.data_as(dp),
                   C.cast(work, C.c_void_p), nb.value, B.mvnmf_progress_fn(), None, C.byref(rep))
    err = e.value
    assert err.name == "MVNMF_STATUS_NON_FINITE_INPUT"
    assert (err.arg, err.arg_name, err.view, err.row, err.col) == (1, "views", 2, 1, 3)
    assert "at argument 1 (views): view 2, row 1, column 3 (sample 3, feature 1 of that view)" in str(err)
    assert all((u == -7.0).all() for u in us) and (v == -7.0).all()
    # A bad options field: the params argument (5), nothing inside it.
    xs[2][3, 1] = 0.5
    vs = ViewSet(xs)
    p = mvnmf.lib.mvnmf_mvsl_params_default()
    p.tol = -1.0
    with pytest.raises(mvnmf.MvnmfError) as e:
        mvnmf.call("mvnmf_mvsl_fit", vs.array, vs.count, C.byref(g), k, C.byref(p), ptrs, v.ctypes.data_as(dp),
                   C.cast(work, C.c_void_p), nb.value, B.mvnmf_progress_fn(), None, C.byref(rep))
    assert (e.value.arg, e.value.arg_name, e.value.view, e.value.row) == (5, "params", None, None)
    assert str(e.value).endswith("at argument 5 (params)")


def test_mvel_says_which_label_byte_it_refused():
    # Issue 33: MVEL's fit says where too — a label byte neither 0 nor 1 is argument 1
    # (labels) at its label (row) and item (column), with the outputs untouched.
    import numpy as np
    import pytest

    c, n, r = 3, 6, 2
    y = np.zeros((c, n), dtype=np.uint8, order="F")
    y[0, ::2] = 1
    y[1, 4] = 2
    w = np.full((n, n), 1.0 / n, order="F")
    np.fill_diagonal(w, 0.0)
    g = B.mvnmf_graph()
    g.kind, g.n = B.MVNMF_GRAPH_DENSE, n
    g.affinity_weights = w.ctypes.data_as(C.POINTER(C.c_double))
    nb = C.c_size_t()
    mvnmf.call("mvnmf_mvel_fit_workspace", c, C.byref(g), r, None, C.byref(nb))
    work = (C.c_uint8 * max(nb.value, 1))()
    dp = C.POINTER(C.c_double)
    q, h = np.full(c * r, -7.0), np.full(r * n, -7.0)
    with pytest.raises(mvnmf.MvnmfError) as e:
        mvnmf.call("mvnmf_mvel_fit", y.ctypes.data_as(C.POINTER(C.c_uint8)), c, C.byref(g), r, None,
                   q.ctypes.data_as(dp), h.ctypes.data_as(dp), C.cast(work, C.c_void_p), nb.value,
                   B.mvnmf_progress_fn(), None, C.byref(B.mvnmf_report()))
    err = e.value
    assert err.name == "MVNMF_STATUS_BAD_LABEL"
    assert (err.arg, err.arg_name, err.view, err.row, err.col) == (1, "labels", None, 1, 4)
    assert str(err).endswith("at argument 1 (labels): row 1, column 4")
    assert (q == -7.0).all() and (h == -7.0).all()


def test_a_call_without_a_report_says_where_its_views_are_bad():
    # A graph builder takes no report: its NaN refusal is located by checking the same
    # views again (mvnmf_check_views), at the views' position in its own signature; a
    # refusal the views do not explain (a NaN in `gammas`) says nothing more.
    import numpy as np
    import pytest
    from mvnmf._lib import ViewSet

    rng = np.random.default_rng(1)
    n = 7
    xs = [rng.random((n, 3)), rng.random((n, 4))]
    xs[1][5, 2] = np.inf
    vs = ViewSet(xs)
    gp = mvnmf.lib.mvnmf_fused_graph_params_default()
    nb = C.c_size_t()
    mvnmf.call("mvnmf_fused_graph_workspace", vs.array, vs.count, C.byref(gp), C.byref(nb))
    work = (C.c_uint8 * max(nb.value, 1))()
    dp = C.POINTER(C.c_double)
    w = np.full(n * n, -7.0)

    def fused(gammas):
        mvnmf.call("mvnmf_fused_graph", vs.array, C.c_size_t(vs.count), gammas, None, C.byref(gp), w.ctypes.data_as(dp),
                   C.cast(work, C.c_void_p), nb.value)

    with pytest.raises(mvnmf.MvnmfError) as e:
        fused(None)
    err = e.value
    assert err.name == "MVNMF_STATUS_NON_FINITE_INPUT"
    assert (err.arg, err.arg_name, err.view, err.row, err.col) == (1, "views", 1, 2, 5)
    assert "(sample 5, feature 2 of that view)" in str(err)
    assert (w == -7.0).all()
    # The views clean, a NaN bandwidth: a refusal of another kind, nowhere named.
    xs[1][5, 2] = 0.5
    vs = ViewSet(xs)
    gammas = np.array([1.0, np.nan])
    with pytest.raises(mvnmf.MvnmfError) as e:
        fused(gammas.ctypes.data_as(dp))
    assert e.value.name == "MVNMF_STATUS_BAD_PARAMETER"
    assert e.value.arg is None and "argument" not in str(e.value)
    # A second views argument: a NaN anchor of the anchor graph is argument 4 (anchors).
    m, s = 3, 2
    anchors = [rng.random((m, 3)), rng.random((m, 4))]
    anchors[1][2, 0] = np.nan
    av = ViewSet(anchors)
    mvnmf.call("mvnmf_anchor_graph_workspace", vs.array, vs.count, 0, m, None, C.byref(gp), C.byref(nb))
    work = (C.c_uint8 * max(nb.value, 1))()
    scales = np.zeros(mvnmf.lib.mvnmf_anchor_scales_len(2))
    idx, z = np.zeros(s * n, dtype=np.uintp), np.zeros(s * n)
    with pytest.raises(mvnmf.MvnmfError) as e:
        mvnmf.call("mvnmf_anchor_graph", vs.array, vs.count, None, av.array, s, None, C.byref(gp),
                   scales.ctypes.data_as(dp), idx.ctypes.data_as(C.POINTER(C.c_size_t)), z.ctypes.data_as(dp),
                   C.cast(work, C.c_void_p), nb.value)
    assert (e.value.arg, e.value.arg_name, e.value.view, e.value.row, e.value.col) == (4, "anchors", 1, 0, 2)
    # ViewSet.check: the same check on its own, in both precisions.
    xs[0][2, 1] = -1.0
    ViewSet(xs).check()
    for dtype in (np.float64, np.float32):
        with pytest.raises(mvnmf.MvnmfError) as e:
            ViewSet(xs, dtype=dtype).check(nonneg=True)
        assert e.value.name == "MVNMF_STATUS_NEGATIVE_INPUT"
        assert (e.value.arg, e.value.view, e.value.row, e.value.col) == (1, 0, 1, 2)
