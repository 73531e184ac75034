#!/bin/sh
# Builds the C library of mvnmf and installs it into a prefix (README,
# "Installing the C/C++ library"):
#
#   packaging/install.sh /usr/local        (default: /usr/local)
#
# needs cargo (Rust >= 1.89), cmake >= 3.16, a C compiler and binutils. Build
# files go to build/cmake (MVNMF_BUILD_DIR), cargo's to target/; the cargo
# profile is release (MVNMF_CARGO_PROFILE).
set -eu
prefix=${1:-/usr/local}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MVNMF_BUILD_DIR:-$root/build/cmake}
cmake -S "$root" -B "$build" -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DMVNMF_CARGO_PROFILE="${MVNMF_CARGO_PROFILE:-release}"
cmake --build "$build" --target install
