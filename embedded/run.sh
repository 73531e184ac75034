#!/usr/bin/env bash
# Builds embedded/cortex-m4f (no_std, no allocator) for a Cortex-M4F
# (thumbv7em-none-eabihf) and runs it under QEMU's mps2-an386 board: a joint
# NMF from a static workspace, the objective of every iterate printed over
# semihosting. Passes when the program exits 0 (its own check) and the trace
# it printed never rises (checked again here), and prints the code size and
# the static RAM. Needs `rustup target add thumbv7em-none-eabihf` and
# qemu-system-arm (Debian's package); .ci/run installs both. Usage: bash embedded/run.sh
set -euo pipefail
cd "$(dirname "$0")/cortex-m4f"
target=thumbv7em-none-eabihf
if [ ! -d "$(rustc --print sysroot)/lib/rustlib/$target" ]; then
  echo "embedded/run.sh: the Rust target $target is not installed (rustup target add $target)" >&2
  exit 1
fi
command -v qemu-system-arm >/dev/null || { echo "embedded/run.sh: qemu-system-arm is missing" >&2; exit 1; }

# The source paths compiled into the binary (panic locations) are remapped, so
# that the code size, which the README's figures quote, is the same in every
# checkout, wherever it lies.
root=$(cd ../.. && pwd)
cargo build --release --quiet \
  --config "target.$target.rustflags=['--remap-path-prefix=$root=/mvnmf', '--remap-path-prefix=$HOME=/home']"
elf=target/$target/release/mvnmf-cortex-m4f
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# The runner of .cargo/config.toml, bounded in time.
timeout 300 qemu-system-arm -cpu cortex-m4 -machine mps2-an386 -nographic -monitor none \
  -serial none -semihosting-config enable=on,target=native -kernel "$elf" > "$out" || {
  cat "$out"
  echo "embedded/run.sh: the program failed under QEMU" >&2
  echo "embedded: 0 passed, 1 failed"
  exit 1
}
head -3 "$out"
echo "..."
tail -4 "$out"
# The trace again, independently: no iterate above its predecessor (beyond
# 1e-10 of the start, the Rust tests' rounding tolerance).
awk '$1 == "iter" { v = $4 + 0; if (n == 0) first = v; else if (v > prev + 1e-10 * first) bad++;
                    prev = v; n++ }
     END { if (n < 2 || bad) { print "trace: " n " iterates, " bad + 0 " rises"; exit 1 }
           print "trace: " n " iterates (the start and " n - 1 " iterations), no rise" }' "$out"
size -A "$elf" | awk '$1 == ".vector_table" || $1 == ".text" || $1 == ".rodata" || $1 == ".data" { flash += $2 }
                      $1 == ".data" || $1 == ".bss" { ram += $2 }
                      END { print "code size (flash: vectors + text + rodata + data): " flash " bytes; static RAM (data + bss): " ram " bytes" }'
# The nalgebra feature (src/interop.rs) adds neither std nor alloc: the core
# with it builds for this target too.
(cd ../.. && cargo build --release --quiet --target "$target" --no-default-features --features nalgebra -p mvnmf) ||
  { echo "embedded/run.sh: the no_std core with the nalgebra feature does not build" >&2; exit 1; }
echo "no_std core with the nalgebra feature: builds for $target"
echo "embedded: 1 passed, 0 failed"
