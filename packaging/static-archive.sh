#!/bin/sh
# Rewrites cargo's static library so that only the C API is global.
#
#   sh packaging/static-archive.sh target/release/libmvnmf.a OUT/libmvnmf.a
#
# cargo's libmvnmf.a holds the members of mvnmf and of every crate below it,
# Rust's std, core, alloc and compiler-builtins included: about 3,500 global
# symbols, 106 of them mvnmf_*. A program that links a second Rust static
# library gets two copies of those runtime symbols; the linker takes whichever
# it meets first, so the two libraries may run each other's std. Here:
#   1. ld -r links the members the mvnmf_* symbols need into one relocatable
#      object, dropping unused sections (--gc-sections, rooted at every mvnmf_*);
#   2. objcopy makes every other symbol local (--keep-global-symbols), renames
#      COMDAT group signatures (rust_eh_personality's) so that no group
#      of the other library's is folded into ours, drops the embedded LLVM
#      bitcode (.llvmbc: merged, it is no longer valid bitcode, and binutils'
#      LLVM plugin aborts on it) and the debug info (cargo's libmvnmf.so has
#      none either);
#   3. ar packs the one object; the result is checked: only mvnmf_* global.
# Undefined references (libc, libgcc_s's unwinder) stay undefined: link with
# the libraries `pkg-config --static --libs mvnmf` names. ELF only (GNU ld or
# lld, binutils); LD, OBJCOPY, AR, NM and READELF may name other tools.
set -eu
in=$1
out=$2
LD=${LD:-ld}
OBJCOPY=${OBJCOPY:-objcopy}
AR=${AR:-ar}
NM=${NM:-nm}
READELF=${READELF:-readelf}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

globals() { "$NM" -g --defined-only "$1" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u; }

globals "$in" > "$tmp/before.txt"
grep '^mvnmf_' "$tmp/before.txt" > "$tmp/api.txt" || true
if [ ! -s "$tmp/api.txt" ]; then
  echo "static-archive.sh: no mvnmf_* symbol in $in" >&2
  exit 1
fi

# 1. One object: what the API needs.
# shellcheck disable=SC2046 # one -u per symbol
"$LD" -r --gc-sections $(sed 's/^/-u /' "$tmp/api.txt") "$in" -o "$tmp/all.o"

# 2. Local runtime, unique group names, no bitcode, no debug info.
"$READELF" -g -W "$tmp/all.o" | sed -n 's/^COMDAT group section \[ *[0-9]*\] [^[]*\[\(.*\)\] contains .*/\1/p' |
  awk '{ print $0 " mvnmf." $0 }' > "$tmp/groups.txt"
"$OBJCOPY" --remove-section=.llvmbc --remove-section=.llvmcmd --strip-debug \
  --redefine-syms="$tmp/groups.txt" "$tmp/all.o" "$tmp/renamed.o"
"$OBJCOPY" --keep-global-symbols="$tmp/api.txt" "$tmp/renamed.o" "$tmp/mvnmf.o"

# 3. The archive, checked.
mkdir -p "$(dirname "$out")"
rm -f "$out"
"$AR" rcs "$out" "$tmp/mvnmf.o"
globals "$out" > "$tmp/after.txt"
if ! cmp -s "$tmp/after.txt" "$tmp/api.txt"; then
  echo "static-archive.sh: $out defines other global symbols than the mvnmf_* of $in:" >&2
  diff "$tmp/api.txt" "$tmp/after.txt" >&2 || true
  exit 1
fi
echo "libmvnmf.a: $(wc -l < "$tmp/before.txt") global symbols in cargo's archive, $(wc -l < "$tmp/after.txt") (all mvnmf_*) in $out"
