#!/usr/bin/env bash
# The installable C/C++ library end to end (README, "Installing the C/C++
# library"), in a temporary prefix:
#   1. the standard CMake route, `cmake -S . -B b && cmake --build b &&
#      cmake --install b --prefix <prefix>` (a prefix chosen at install time,
#      not the configured one; packaging/install.sh runs the same steps); the
#      files, the SONAME and its links;
#   2. nm: the shared and the static library define the same global symbols,
#      all mvnmf_* (before/after counts of the static archive printed), each
#      at version MVNMF_ABI_<n> of the header; the .so is stripped;
#   3. examples-cpp through find_package(mvnmf) (shared and static) and
#      through pkg-config, each run without LD_LIBRARY_PATH; the CMake
#      version file takes 0.<minor> and refuses 0.<minor + 1>;
#   4. the README's C snippets, in order as one function body, as C99 and
#      C++17, linked against the installed library;
#   5. the installed libmvnmf.a linked beside another Rust static library,
#      in both orders, with no global symbol in common;
#   6. static linking through pkg-config: `c++ -static ... $(pkg-config
#      --static --libs mvnmf)` makes a fully static quickstart that runs, and
#      mvnmf-static.pc links the archive into an otherwise dynamic program;
#   7. the installed tree moved elsewhere: pkg-config and find_package follow
#      it (relocatable files), and the pkg-config consumer builds and runs.
# Needs cargo, cmake, pkg-config, cc/c++ and binutils (.ci/run installs them).
# Builds the release libraries (two or three minutes when cargo has not);
# MVNMF_CARGO_PROFILE=test takes those of `cargo build --profile test -p
# mvnmf-capi` (ffi-tests/sanitize.sh), as CI does. Under a minute otherwise.
# Usage: bash packaging/check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d "${TMPDIR:-/tmp}/mvnmf-pkg.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
passed=0
ok() { passed=$((passed + 1)); echo "  ok: $*"; }
die() { echo "FAILED: $*" >&2; echo "packaging/check.sh: $passed passed, 1 failed"; exit 1; }
# A pipeline's test reads all its input (`grep -c ... >/dev/null`), never `grep -q`: under
# pipefail, grep -q leaving at the first match kills the writer with SIGPIPE (ldd, objdump
# -T), and the pipeline fails although it matched (seen: "the loader does not find
# libmvnmf.so.0" on a loaded machine), or a negative check passes although it matched.
# Defined global names, without a symbol version (@@MVNMF_ABI_n) and without
# the version node's own absolute symbol.
globals() { nm "$@" 2>/dev/null | awk 'NF == 3 && $2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort -u; }

echo "== 1. install into a temporary prefix (cargo profile ${MVNMF_CARGO_PROFILE:-release})"
{ cmake -S . -B "$work/cmake" -DMVNMF_CARGO_PROFILE="${MVNMF_CARGO_PROFILE:-release}" &&
  cmake --build "$work/cmake" && cmake --install "$work/cmake" --prefix "$prefix"; } \
  > "$work/install.log" 2>&1 || { cat "$work/install.log"; die "cmake configure, build, install"; }
grep -E "^libmvnmf.a:|Installing:" "$work/install.log" | sed "s|$prefix|<prefix>|"
pc=$(find "$prefix" -name mvnmf.pc)
[ -n "$pc" ] || die "no mvnmf.pc installed"
[ -f "$(dirname "$pc")/mvnmf-static.pc" ] || die "no mvnmf-static.pc installed"
configured=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$work/cmake/CMakeCache.txt")
grep -q "^prefix=\${pcfiledir}/" "$pc" || die "mvnmf.pc: $(grep '^prefix=' "$pc") is not relative to the file"
ok "configured for $configured, installed with --prefix <prefix>: mvnmf.pc says $(grep '^prefix=' "$pc")"
export PKG_CONFIG_PATH=$(dirname "$pc")
version=$(pkg-config --modversion mvnmf)
major=${version%%.*}
# (relative to the .pc file: <prefix>/lib/pkgconfig/../../lib; resolved here)
libdir=$(cd "$(pkg-config --variable=libdir mvnmf)" && pwd -P)
includedir=$(cd "$(pkg-config --variable=includedir mvnmf)" && pwd -P)
prefix=$(cd "$prefix" && pwd -P)
case $includedir in "$prefix"/*) ;; *) die "pkg-config's includedir $includedir is outside <prefix>" ;; esac
for f in "$includedir/mvnmf.h" "$includedir/mvnmf.hpp" "$libdir/libmvnmf.a" \
         "$libdir/libmvnmf.so.$version" "$libdir/cmake/mvnmf/mvnmfConfig.cmake" \
         "$libdir/cmake/mvnmf/mvnmfConfigVersion.cmake"; do
  [ -f "$f" ] || die "$f is not installed"
done
ok "header, mvnmf.hpp, libmvnmf.a, libmvnmf.so.$version, mvnmf.pc, CMake package"
[ "$(readlink "$libdir/libmvnmf.so.$major")" = "libmvnmf.so.$version" ] &&
  [ "$(readlink "$libdir/libmvnmf.so")" = "libmvnmf.so.$major" ] ||
  die "symlinks libmvnmf.so -> libmvnmf.so.$major -> libmvnmf.so.$version"
soname=$(readelf -d "$libdir/libmvnmf.so.$version" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = "libmvnmf.so.$major" ] || die "SONAME is '$soname', not libmvnmf.so.$major"
ok "SONAME $soname; libmvnmf.so -> libmvnmf.so.$major -> libmvnmf.so.$version"

echo "== 2. exported symbols"
globals -D --defined-only "$libdir/libmvnmf.so" > "$work/so.txt"
globals -g --defined-only "$libdir/libmvnmf.a" > "$work/a.txt"
case ${MVNMF_CARGO_PROFILE:-release} in dev | test) out=debug ;; *) out=${MVNMF_CARGO_PROFILE:-release} ;; esac
globals -g --defined-only "${CARGO_TARGET_DIR:-target}/$out/libmvnmf.a" > "$work/cargo-a.txt"
n_so=$(wc -l < "$work/so.txt")
[ "$n_so" -gt 100 ] || die "libmvnmf.so exports only $n_so symbols"
if grep -v '^mvnmf_' "$work/so.txt" > "$work/bad.txt"; then
  die "libmvnmf.so exports other symbols than mvnmf_*: $(head -5 "$work/bad.txt" | tr '\n' ' ')"
fi
cmp -s "$work/so.txt" "$work/a.txt" || die "libmvnmf.a and libmvnmf.so define different globals"
n_h=$(grep -E '^[A-Za-z_][A-Za-z0-9_ ]*[ *]mvnmf_[a-z0-9_]+\(' "$includedir/mvnmf.h" | grep -oE 'mvnmf_[a-z0-9_]+\(' | sort -u | wc -l)
[ "$n_so" -eq "$n_h" ] || die "libmvnmf.so exports $n_so functions, mvnmf.h declares $n_h"
ok "libmvnmf.so exports $n_so symbols, all mvnmf_*, the $n_h functions mvnmf.h declares"
abi=$(sed -n 's/^#define MVNMF_ABI_VERSION \([0-9]*\)$/\1/p' "$includedir/mvnmf.h")
[ -n "$abi" ] || die "no MVNMF_ABI_VERSION in the installed mvnmf.h"
n_versioned=$(nm -D --defined-only "$libdir/libmvnmf.so" | grep -c " T mvnmf_[a-z0-9_]*@@MVNMF_ABI_$abi$" || true)
[ "$n_versioned" -eq "$n_so" ] ||
  die "only $n_versioned of $n_so exports are at version MVNMF_ABI_$abi: $(nm -D --defined-only "$libdir/libmvnmf.so" | grep -v "@@MVNMF_ABI_$abi$" | head -3 | tr '\n' ' ')"
ok "all $n_so at symbol version MVNMF_ABI_$abi (the header's MVNMF_ABI_VERSION)"
readelf -S -W "$libdir/libmvnmf.so.$version" | grep -c ' \.symtab ' >/dev/null && die "libmvnmf.so.$version is not stripped"
ok "libmvnmf.so.$version is stripped (no .symtab; $(wc -c < "$libdir/libmvnmf.so.$version") bytes)"
ok "libmvnmf.a: $(wc -l < "$work/cargo-a.txt") global symbols in cargo's archive" \
   "($(grep -c '^mvnmf_' "$work/cargo-a.txt") mvnmf_*), $(wc -l < "$work/a.txt") installed, the same as the .so's"

echo "== 3. examples-cpp through find_package(mvnmf) and pkg-config"
cmake -S examples-cpp -B "$work/cpp" -DCMAKE_PREFIX_PATH="$prefix" > "$work/cpp.log" 2>&1 &&
  cmake --build "$work/cpp" >> "$work/cpp.log" 2>&1 || { cat "$work/cpp.log"; die "CMake consumer"; }
grep -- "-- mvnmf " "$work/cpp.log" | sed "s|$prefix|<prefix>|"
for exe in quickstart_cpp quickstart_cpp_static; do
  env -u LD_LIBRARY_PATH "$work/cpp/$exe" > "$work/$exe.out" || { cat "$work/$exe.out"; die "$exe"; }
  tail -1 "$work/$exe.out" | grep -c "all checks passed" >/dev/null || die "$exe"
done
sed 's/^/    /' "$work/quickstart_cpp.out"
readelf -d "$work/cpp/quickstart_cpp" | grep -c "NEEDED.*\[libmvnmf.so.$major\]" >/dev/null ||
  die "quickstart_cpp does not record libmvnmf.so.$major"
runpath=$(readelf -d "$work/cpp/quickstart_cpp" | sed -n 's/.*R.*PATH.*\[\(.*\)\]/\1/p')
env -u LD_LIBRARY_PATH ldd "$work/cpp/quickstart_cpp" | grep -c "libmvnmf.so.$major => $libdir/" >/dev/null ||
  die "the loader does not find libmvnmf.so.$major in $libdir"
objdump -T "$work/cpp/quickstart_cpp" | grep -c "(MVNMF_ABI_$abi) *mvnmf_joint_nmf_fit$" >/dev/null ||
  die "quickstart_cpp does not record mvnmf_joint_nmf_fit at MVNMF_ABI_$abi"
ok "find_package: quickstart_cpp (NEEDED libmvnmf.so.$major, RUNPATH $runpath) passes without LD_LIBRARY_PATH"
readelf -d "$work/cpp/quickstart_cpp_static" | grep -c "libmvnmf" >/dev/null &&
  die "quickstart_cpp_static depends on the shared library"
ok "find_package: quickstart_cpp_static (mvnmf::mvnmf_static) passes"

mkdir -p "$work/pc"
make -s -C examples-cpp OUT="$work/pc" > "$work/pc.log" 2>&1 || { cat "$work/pc.log"; die "pkg-config consumer"; }
env -u LD_LIBRARY_PATH "$work/pc/quickstart_cpp" | tail -1 | grep -c "all checks passed" >/dev/null ||
  die "pkg-config consumer"
ok "pkg-config: c++ \$(pkg-config --cflags --libs mvnmf) -Wl,-rpath,<libdir>: passes without LD_LIBRARY_PATH"

next_minor=$(echo "$version" | awk -F. '{ print $1 "." $2 + 1 }')
this_minor=${version%.*}
mkdir -p "$work/ver"
cat > "$work/ver/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.16)
project(v LANGUAGES NONE)
find_package(mvnmf $this_minor CONFIG REQUIRED)
find_package(mvnmf $next_minor CONFIG QUIET)
if(mvnmf_FOUND)
  message(FATAL_ERROR "find_package(mvnmf $next_minor) accepted \${mvnmf_VERSION}")
endif()
EOF
cmake -S "$work/ver" -B "$work/ver/build" -DCMAKE_PREFIX_PATH="$prefix" > "$work/ver.log" 2>&1 ||
  { cat "$work/ver.log"; die "CMake version file"; }
ok "find_package(mvnmf $this_minor) found $version; find_package(mvnmf $next_minor) refused"

echo "== 4. the README's C snippets as C99 and C++17"
awk '/^## Using it from C$/ { on = 1; next } /^## / { on = 0 }
     on && /^```c$/ { code = 1; next } code && /^```$/ { code = 0; next } code' README.md \
  > "$work/snippets.txt"
[ "$(wc -l < "$work/snippets.txt")" -gt 20 ] || die "found no C snippets in README.md"
{
  grep '^#include' "$work/snippets.txt"
  cat <<'EOF'
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
static int on_progress(const mvnmf_progress *p, void *user) { (void)p; (void)user; return 0; }
/* The snippets' free names, as a program would have them. */
void readme(size_t M1, size_t M2, size_t N, size_t K, size_t C, const double *x1, const double *x2,
            double *u1, double *u2, double *v, const uint32_t *labels, double *eta);
void readme(size_t M1, size_t M2, size_t N, size_t K, size_t C, const double *x1, const double *x2,
            double *u1, double *u2, double *v, const uint32_t *labels, double *eta)
{
EOF
  grep -v '^#include' "$work/snippets.txt"
  printf '}\nint main(void) { return 0; }\n'
} > "$work/readme.c"
cflags=$(pkg-config --cflags mvnmf)
libs=$(pkg-config --libs mvnmf)
# shellcheck disable=SC2086
cc -std=c99 -Wall -Wextra -Wpedantic -Werror $cflags "$work/readme.c" $libs -o "$work/readme_c" ||
  die "README snippets as C99 ($work/readme.c)"
# shellcheck disable=SC2086
c++ -x c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror $cflags "$work/readme.c" $libs \
  -o "$work/readme_cpp" || die "README snippets as C++17"
ok "$(grep -c '' "$work/snippets.txt") lines of README C compile and link as C99 and as C++17"

echo "== 5. libmvnmf.a beside another Rust static library"
cat > "$work/other.rs" <<'EOF'
// Another Rust library with its own copy of std.
#[no_mangle]
pub extern "C" fn other_count(n: usize) -> usize {
    let v: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    std::panic::catch_unwind(|| v.len()).unwrap_or(0)
}
EOF
rustc -O --crate-type staticlib "$work/other.rs" -o "$work/libother.a" 2>/dev/null
cat > "$work/two.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include "mvnmf.h"
size_t other_count(size_t n);
int main(void)
{
    /* A bad call into mvnmf (its status path) and a panic-free call into the other. */
    size_t bytes = 0;
    mvnmf_status s = mvnmf_joint_nmf_fit_workspace(NULL, 0, 2, NULL, &bytes);
    printf("%s / %s / %zu\n", mvnmf_version(), mvnmf_status_message(s), other_count(7));
    return !(s == MVNMF_STATUS_ZERO_DIMENSION && other_count(7) == 7);
}
EOF
native=$(pkg-config --static --libs-only-l mvnmf | sed 's/-lmvnmf//')
for order in "$libdir/libmvnmf.a $work/libother.a" "$work/libother.a $libdir/libmvnmf.a"; do
  # shellcheck disable=SC2086
  cc $cflags "$work/two.c" $order $native -o "$work/two" || die "linking $order"
  "$work/two" > /dev/null || die "running with $order"
done
common_cargo=$(comm -12 <(globals -g --defined-only "$work/libother.a") "$work/cargo-a.txt" | wc -l)
common=$(comm -12 <(globals -g --defined-only "$work/libother.a") "$work/a.txt" | wc -l)
[ "$common" -eq 0 ] || die "libmvnmf.a and another Rust staticlib share $common global symbols"
ok "linked and ran in both orders; global symbols in common with it: $common (cargo's archive: $common_cargo)"

echo "== 6. static linking through pkg-config"
static_libs=$(pkg-config --static --libs mvnmf)
echo "  pkg-config --static --libs mvnmf: ${static_libs//$prefix/<prefix>}"
# shellcheck disable=SC2086
c++ -std=c++17 -static $cflags examples-cpp/quickstart.cpp $static_libs -o "$work/quickstart_static" \
  > "$work/static.log" 2>&1 || { cat "$work/static.log"; die "c++ -static with pkg-config --static"; }
# glibc's linker notes (getaddrinfo, getpwuid_r in Rust's std) are warnings.
readelf -l "$work/quickstart_static" | grep -c INTERP >/dev/null && die "quickstart_static has a program interpreter"
readelf -d "$work/quickstart_static" | grep -c NEEDED >/dev/null && die "quickstart_static needs shared libraries"
env -u LD_LIBRARY_PATH "$work/quickstart_static" | tail -1 | grep -c "all checks passed" >/dev/null ||
  die "quickstart_static"
ok "c++ -static \$(pkg-config --static --libs mvnmf): fully static (no interpreter, no NEEDED), passes"
# shellcheck disable=SC2046
c++ -std=c++17 examples-cpp/quickstart.cpp $(pkg-config --cflags --libs mvnmf-static) \
  -o "$work/quickstart_archive" > "$work/archive.log" 2>&1 || { cat "$work/archive.log"; die "mvnmf-static.pc"; }
readelf -d "$work/quickstart_archive" | grep -c "libmvnmf" >/dev/null && die "the mvnmf-static.pc program needs libmvnmf.so"
env -u LD_LIBRARY_PATH "$work/quickstart_archive" | tail -1 | grep -c "all checks passed" >/dev/null ||
  die "quickstart_archive"
ok "c++ ... \$(pkg-config --libs mvnmf-static): libmvnmf.a in a dynamic program, passes"

echo "== 7. the installed tree moved"
moved=$work/moved/elsewhere
mkdir -p "$(dirname "$moved")"
mv "$prefix" "$moved"
export PKG_CONFIG_PATH=${PKG_CONFIG_PATH/#$prefix/$moved}
[ -f "$(pkg-config --variable=includedir mvnmf)/mvnmf.h" ] || die "pkg-config after the move: no mvnmf.h"
mkdir -p "$work/pc-moved"
make -s -C examples-cpp OUT="$work/pc-moved" > "$work/pc-moved.log" 2>&1 ||
  { cat "$work/pc-moved.log"; die "pkg-config consumer after the move"; }
env -u LD_LIBRARY_PATH "$work/pc-moved/quickstart_cpp" | tail -1 | grep -c "all checks passed" >/dev/null ||
  die "pkg-config consumer after the move"
cmake -S "$work/ver" -B "$work/ver/moved" -DCMAKE_PREFIX_PATH="$moved" > "$work/ver-moved.log" 2>&1 ||
  { cat "$work/ver-moved.log"; die "find_package after the move"; }
grep -q "$moved" "$work/ver/moved/CMakeCache.txt" || die "find_package after the move found another mvnmf"
ok "moved to another directory: pkg-config (consumer built and run) and find_package follow it"

echo "packaging/check.sh: $passed passed, 0 failed"
