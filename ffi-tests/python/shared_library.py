#!/usr/bin/env python3
"""The shared C library from Python's ctypes, as a Python user would call it.

Run by ffi-tests/tests/shared_library.rs (`cargo test`), which builds
libmvnmf.so first:

    python3 ffi-tests/python/shared_library.py path/to/libmvnmf.so [View=48,NmfParams=48,...]

The optional second argument gives the library's struct sizes (from the Rust
side of the test), checked against the ctypes structs. Those are not written
here: they come from python/mvnmf/_bindings.py, generated from the header by
python/gen_bindings.py (which fails a test when it is stale).

Standard library only (no numpy). The buffers are the caller's own
(`array.array`), passed by address and written in place: the checks are that
the solver writes exactly the caller's outputs (guard values after each stay
put), leaves them untouched on error, accepts a workspace at any alignment,
reports an objective that never increases through a Python callback, stops
when that callback says so, and gives the same bytes twice. Exits non-zero
(an AssertionError) on the first failed check; prints one line per check.
"""

import array
import ctypes as C
import importlib.util
import math
import os
import sys

# The structs, constants and every function signature come from the bindings
# generated from include/mvnmf.h (python/mvnmf/_bindings.py: ctypes only,
# standard library), loaded by path so that numpy is not needed.
_spec = importlib.util.spec_from_file_location(
    "mvnmf_bindings", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                   "python", "mvnmf", "_bindings.py"))
B = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(B)

DENSE, CSC = B.MVNMF_VIEW_DENSE, B.MVNMF_VIEW_CSC
OK, NEGATIVE_INPUT = B.MVNMF_STATUS_OK, B.MVNMF_STATUS_NEGATIVE_INPUT
WORKSPACE_TOO_SMALL, CANCELLED = B.MVNMF_STATUS_WORKSPACE_TOO_SMALL, B.MVNMF_STATUS_CANCELLED
STOP_CANCELLED = B.MVNMF_STOP_CANCELLED
TERM_RECONSTRUCTION = B.MVNMF_TERM_RECONSTRUCTION
View, NmfParams, Report = B.mvnmf_view, B.mvnmf_nmf_params, B.mvnmf_report
PROGRESS_FN = B.mvnmf_progress_fn


def term(objective, kind):
    """The value of the part `kind` (MVNMF_TERM_*) of an mvnmf_objective, 0 when absent."""
    return next((t.value for t in objective.terms[:objective.n_terms] if t.kind == kind), 0.0)


def load(path):
    return B.declare(C.CDLL(path))


def address(buf, offset=0):
    """The address of a Python-owned buffer (no copy), plus `offset` bytes."""
    return C.addressof(C.c_char.from_buffer(buf)) + offset


def doubles(buf):
    return C.cast(address(buf), C.POINTER(C.c_double))


class Problem:
    """A dense view (12 x 20) and a CSC view (30 x 20, about a third stored, values
    100x larger) of the same 20 items, from a fixed linear congruential sequence."""

    M1, M2, N, K = 12, 30, 20, 3
    GUARD = 4

    def __init__(self):
        state = [12345]

        def uniform():
            state[0] = (state[0] * 1103515245 + 12345) % 2 ** 31
            return state[0] / 2 ** 31

        self.x1 = array.array("d", (uniform() for _ in range(self.M1 * self.N)))
        ptr, idx, val = [0], [], []
        for _ in range(self.N):
            for i in range(self.M2):
                if uniform() < 0.35:
                    idx.append(i)
                    val.append(100.0 * (0.1 + uniform()))
            ptr.append(len(idx))
        self.col_ptr = array.array("Q", ptr)
        self.row_idx = array.array("Q", idx)
        self.vals = array.array("d", val)
        assert C.sizeof(C.c_size_t) == 8, "this test assumes a 64-bit size_t"
        self.half_norm2 = 0.5 * (sum(v * v for v in self.x1) + sum(v * v for v in self.vals))

    def views(self):
        v = (View * 2)()
        v[0] = View(DENSE, self.M1, self.N, doubles(self.x1), self.M1, None, None)
        v[1] = View(CSC, self.M2, self.N, doubles(self.vals), 0,
                    C.cast(address(self.col_ptr), C.POINTER(C.c_size_t)),
                    C.cast(address(self.row_idx), C.POINTER(C.c_size_t)))
        return v

    def outputs(self):
        """U1, U2, V with GUARD trailing guard values (-7.0) each, the rest NaN."""
        out = []
        for n in (self.M1 * self.K, self.M2 * self.K, self.K * self.N):
            out.append(array.array("d", [math.nan] * n + [-7.0] * self.GUARD))
        return out


def fit(lib, pb, views, params, outs, work, work_off, work_bytes, progress):
    u1, u2, v = outs
    us = (C.POINTER(C.c_double) * 2)(doubles(u1), doubles(u2))
    report = Report()
    s = lib.mvnmf_joint_nmf_fit(views, 2, pb.K, C.byref(params), us, doubles(v),
                                address(work, work_off), work_bytes, progress, None,
                                C.byref(report))
    return s, report


def main(path, sizes=None):
    if sizes:
        for item in sizes.split(","):
            name, size = item.split("=")
            mine = C.sizeof(globals()[name]) if name in globals() else C.sizeof(getattr(B, "mvnmf_" + name.lower()))
            assert mine == int(size), "ctypes %s is %d bytes, the library's %s" % (name, mine, size)
        print("the generated ctypes structs have the library's struct sizes (%s)" % sizes)
    lib = load(path)
    version = lib.mvnmf_version().decode()
    assert version and version[0].isdigit(), version
    print("loaded %s, version %s" % (path, version))

    pb = Problem()
    views = pb.views()
    params = lib.mvnmf_nmf_params_default()
    params.max_iter, params.tol, params.seed = 60, 0.0, 7
    need = C.c_size_t(0)
    s = lib.mvnmf_joint_nmf_fit_workspace(views, 2, pb.K, C.byref(params), C.byref(need))
    assert s == OK and need.value > 0, (s, need.value)
    # One byte into a Python bytearray: the library must cope with any alignment.
    work = bytearray(need.value + 1)

    seen = []

    @PROGRESS_FN
    def record(prog, _user):
        p = prog.contents
        seen.append((p.iter, p.objective.total, term(p.objective, TERM_RECONSTRUCTION)))
        return 0

    outs = pb.outputs()
    s, rep = fit(lib, pb, views, params, outs, work, 1, need.value, record)
    assert s == OK, lib.mvnmf_status_message(s)
    assert [it for it, _, _ in seen] == list(range(61)), [it for it, _, _ in seen]
    tol = 1e-10 * pb.half_norm2
    for (_, a, _), (it, b, _) in zip(seen, seen[1:]):
        assert b <= a + tol, "objective rose at iteration %d: %r -> %r" % (it, a, b)
    assert seen[-1][1] < 0.75 * seen[0][1], (seen[0], seen[-1])
    assert rep.iterations == 60 and rep.objective.total == seen[-1][1], (rep.iterations,)
    assert rep.initial.total == seen[0][1]
    print("joint NMF (dense + CSC, workspace at an odd address): objective %.6g -> %.6g over "
          "%d callbacks, never rising" % (seen[0][1], seen[-1][1], len(seen)))
    for name, buf, n in zip(("U1", "U2", "V"), outs,
                            (pb.M1 * pb.K, pb.M2 * pb.K, pb.K * pb.N)):
        assert all(math.isfinite(x) and x >= 0 for x in buf[:n]), name + " not written in place"
        assert list(buf[n:]) == [-7.0] * pb.GUARD, name + ": wrote past the buffer"
    print("outputs written in the caller's buffers, nothing past them")

    again = pb.outputs()
    s, _ = fit(lib, pb, views, params, again, bytearray(need.value + 64), 3, need.value,
               PROGRESS_FN(0))
    assert s == OK and [a.tobytes() for a in again] == [a.tobytes() for a in outs], \
        "same seed, different bytes"
    print("same seed, no callback, another alignment: the same bytes")

    stop_at = 3

    @PROGRESS_FN
    def cancel(prog, _user):
        return 1 if prog.contents.iter == stop_at else 0

    outs_c = pb.outputs()
    s, rep = fit(lib, pb, views, params, outs_c, work, 0, need.value, cancel)
    assert s == CANCELLED and rep.stop == STOP_CANCELLED and rep.iterations == stop_at, \
        (s, rep.stop, rep.iterations)
    assert all(math.isfinite(x) for x in outs_c[2][:pb.K * pb.N]), "cancelled: V not a valid iterate"
    print("callback returning 1 at iteration %d: status %d (%s)"
          % (stop_at, s, lib.mvnmf_status_message(s).decode()))

    for why, status, mutate, bytes_ in (
            ("a negative entry in the dense view", NEGATIVE_INPUT,
             lambda: pb.x1.__setitem__(5, -1.0), need.value),
            ("a workspace one byte short", WORKSPACE_TOO_SMALL, lambda: None, need.value - 1)):
        saved = pb.x1[5]
        mutate()
        bad = pb.outputs()
        before = [a.tobytes() for a in bad]
        s, _ = fit(lib, pb, views, params, bad, work, 1, bytes_, record)
        pb.x1[5] = saved
        msg = lib.mvnmf_status_message(s).decode()
        assert s == status, (why, s, msg)
        assert [a.tobytes() for a in bad] == before, why + ": outputs touched"
        print("%s: status %d (%s), outputs untouched" % (why, s, msg))


if __name__ == "__main__":
    main(*sys.argv[1:3])
