#!/usr/bin/env bash
# The C harness (ffi-tests/c/harness*.c) and the C quickstart as stand-alone
# programs against the static C library (libmvnmf.a, crate capi/):
#   1. built with -fsanitize=address,undefined and run in full: ASan and UBSan
#      watch the C side (every buffer the harness hands to the library and the
#      guards after it, leaks, undefined behaviour); the Rust side is not
#      instrumented (that needs a nightly toolchain);
#   2. built plainly and run under valgrind memcheck, which does watch the Rust
#      side (invalid reads and writes, uninitialised values, definite leaks):
#      the graph/pipeline/evaluation, protocol, regression, JSNMF, MVEL and linalg (eigen, CCA) parts of the harness, the
#      quickstart, and 4000 cases of the fuzz driver (tests/fuzz_ffi.rs), which
#      reach every solver and kernel entry point. The basic and models parts
#      take minutes under valgrind (threads, many fits) and run under ASan only.
# The library is built with the test profile in the default target dir, the
# artifacts `cargo test --workspace` has just built. About a minute and a half.
# Usage: bash ffi-tests/sanitize.sh   (needs cc and valgrind)
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --quiet --profile test -p mvnmf-capi
lib="${CARGO_TARGET_DIR:-target}/debug/libmvnmf.a"
out="${CARGO_TARGET_DIR:-target}/sanitize"
mkdir -p "$out"

src=(ffi-tests/c/harness.c ffi-tests/c/harness_models.c ffi-tests/c/harness_graph.c
     ffi-tests/c/harness_protocol.c ffi-tests/c/harness_regress.c ffi-tests/c/harness_jsnmf.c
     ffi-tests/c/harness_mvel.c ffi-tests/c/harness_linalg.c ffi-tests/c/harness_twins.c
     ffi-tests/c/harness_where.c ffi-tests/c/harness_dist.c
     ffi-tests/c/harness_main.c)
defs=(-DHARNESS_ENTRY=mvnmf_harness_c -DHARNESS_MODELS_ENTRY=mvnmf_harness_models_c
      -DHARNESS_GRAPH_ENTRY=mvnmf_harness_graph_c -DHARNESS_PROTOCOL_ENTRY=mvnmf_harness_protocol_c
      -DHARNESS_REGRESS_ENTRY=mvnmf_harness_regress_c -DHARNESS_JSNMF_ENTRY=mvnmf_harness_jsnmf_c
      -DHARNESS_MVEL_ENTRY=mvnmf_harness_mvel_c -DHARNESS_LINALG_ENTRY=mvnmf_harness_linalg_c
      -DHARNESS_TWINS_ENTRY=mvnmf_harness_twins_c -DHARNESS_WHERE_ENTRY=mvnmf_harness_where_c
      -DHARNESS_DIST_ENTRY=mvnmf_harness_dist_c)
strict=(-std=c99 -Wall -Wextra -Wpedantic -Werror -Iinclude)
libs=("$lib" -lm -lpthread -ldl)
san=(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1)

echo "== ASan + UBSan: the whole C harness and the quickstart"
cc "${strict[@]}" "${san[@]}" "${defs[@]}" "${src[@]}" "${libs[@]}" -o "$out/harness_asan"
cc "${strict[@]}" "${san[@]}" examples-c/quickstart.c "${libs[@]}" -o "$out/quickstart_asan"
ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$out/harness_asan"
ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$out/quickstart_asan" >/dev/null

echo "== valgrind memcheck: harness (graph, regress), quickstart, fuzz driver"
cc "${strict[@]}" -g -O1 "${defs[@]}" "${src[@]}" "${libs[@]}" -o "$out/harness_plain"
cc "${strict[@]}" -g -O1 examples-c/quickstart.c "${libs[@]}" -o "$out/quickstart_plain"
vg=(valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite
    --show-leak-kinds=definite)
"${vg[@]}" "$out/harness_plain" graph protocol regress jsnmf mvel linalg where
"${vg[@]}" "$out/quickstart_plain" >/dev/null
host=$(rustc -vV | sed -n 's/^host: //p')
runner="CARGO_TARGET_$(echo "$host" | tr 'a-z-' 'A-Z_')_RUNNER"
env "$runner=${vg[*]}" MVNMF_FUZZ_ITERS=4000 MVNMF_FUZZ_SEED=0x5a11 \
  cargo test --quiet --test fuzz_ffi
echo "== sanitizers and valgrind: clean"
