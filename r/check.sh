#!/usr/bin/env bash
# Builds the R package (r/mvnmf) and runs R CMD check on it, tests included
# (testthat; the real-data test reads ../data through MVNMF_DATA). Needs R
# (Debian: r-base-core r-base-dev r-cran-testthat r-cran-matrix; .ci/run
# installs them) and libmvnmf.a: the release build
# (cargo build --release -p mvnmf-capi), or MVNMF_STATIC_LIB=<path>.
# Fails on any ERROR or WARNING of R CMD check (NOTEs are printed).
# Usage: bash r/check.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
lib="${MVNMF_STATIC_LIB:-$root/target/release/libmvnmf.a}"
if [ ! -f "$lib" ]; then
  (cd "$root" && cargo build --release --quiet -p mvnmf-capi)
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Issue 34: from a clone, `R CMD INSTALL r/mvnmf` with no MVNMF_HOME, prefix
# or pkg-config: configure builds the library with cargo itself (a no-op
# when that build is already there, as after python/check_wheel.sh in CI),
# then a fit from the installed package.
mkdir -p "$work/lib"
(cd "$root" && env -u MVNMF_HOME -u MVNMF_PREFIX -u MVNMF_STATIC_LIB PKG_CONFIG_PATH=/nonexistent \
  R CMD INSTALL --clean -l "$work/lib" r/mvnmf) > "$work/install.log" 2>&1 ||
  { cat "$work/install.log"; echo "r/check.sh: R CMD INSTALL r/mvnmf from the clone failed" >&2; exit 1; }
grep "^configure: building libmvnmf in " "$work/install.log" ||
  { cat "$work/install.log"; echo "r/check.sh: configure did not build the library with cargo" >&2; exit 1; }
Rscript -e 'library(mvnmf, lib.loc = commandArgs(TRUE)[1])
  set.seed(1); x1 <- matrix(runif(60), 6); x2 <- matrix(runif(40), 4)   # features x 10 items
  fit <- mvnmf_joint_nmf(list(x1, x2), 3, max_iter = 50L)
  stopifnot(all(diff(fit$trace) <= 1e-10 * fit$trace[1]), all(fit$V >= 0))
  cat("R CMD INSTALL r/mvnmf from the clone: a fit of", length(fit$trace) - 1L, "iterations\n")' "$work/lib"

cp -r "$root/r/mvnmf" "$work/"
cd "$work"
R CMD build --no-build-vignettes mvnmf > build.log 2>&1 || { cat build.log; exit 1; }
MVNMF_HOME="$root" MVNMF_STATIC_LIB="$lib" MVNMF_DATA="$root/data" \
  R CMD check --no-manual mvnmf_*.tar.gz > check.log 2>&1 || true
grep -E "^\* checking tests|Running|^Status" check.log || true
if ! grep -q "^Status: OK\|^Status: [0-9]* NOTEs*$" check.log; then
  cat check.log
  for f in mvnmf.Rcheck/tests/*.Rout.fail; do [ -f "$f" ] && tail -40 "$f"; done
  echo "r/check.sh: R CMD check failed" >&2
  exit 1
fi
grep -A4 "NOTE" check.log | head -20 || true
echo "R package: R CMD check passed"
