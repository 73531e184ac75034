#!/usr/bin/env bash
# Issue 15, item 4 (no panic path): how far the core is from a link-time proof.
#
# Builds nostd-check/ (a #![no_std] binary running NMF and the symmetric
# eigensolver on static buffers) with fat LTO, first with a panic handler that
# calls an undefined symbol — the link succeeds only if no panic is reachable
# after optimisation (the `no-panic` crate's trick) — then with a defined
# handler, and counts the call sites of core's panic entry points that
# survived optimisation. Prints "link-time proof: yes|no" and the counts.
#
#   bash scripts/panic_sites.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp -r "$root/nostd-check/." "$tmp/"
rm -rf "$tmp/target"
sed -i "s|path = \"..\"|path = \"$root\"|" "$tmp/Cargo.toml"
sed -i 's/^\[profile.release\]/[profile.release]\nlto = "fat"\ncodegen-units = 1\nopt-level = 3/' "$tmp/Cargo.toml"
cp "$tmp/src/main.rs" "$tmp/main.rs.orig"
python3 - "$tmp/src/main.rs" <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
s = s.replace("unsafe { exit(101) }", "unsafe { mvnmf_a_panic_is_reachable() }")
s = s.replace("extern \"C\" {\n    fn exit(code: i32) -> !;\n}",
              "extern \"C\" {\n    fn exit(code: i32) -> !;\n    fn mvnmf_a_panic_is_reachable() -> !;\n}")
open(p, "w").write(s)
PY
if cargo build --release --quiet --manifest-path "$tmp/Cargo.toml" --target-dir "$tmp/target" 2>/dev/null; then
  echo "link-time proof: yes (no panic reachable in the no_std NMF + eigensolver binary)"
else
  echo "link-time proof: no (a panic is reachable after optimisation)"
fi
cp "$tmp/main.rs.orig" "$tmp/src/main.rs"
cargo build --release --quiet --manifest-path "$tmp/Cargo.toml" --target-dir "$tmp/target" 2>/dev/null
echo "panic call sites after fat LTO (count, callee):"
objdump -d --no-show-raw-insn "$tmp/target/release/mvnmf-nostd-check" |
  grep -E "call.*<[^>]*(panic|unwrap_failed|expect_failed|index_fail|index_order)" |
  sed 's/.*<\(.*\)>.*/\1/' | sort | uniq -c | sort -rn
