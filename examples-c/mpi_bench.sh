#!/usr/bin/env bash
# Issue 19: time per iteration and words per iteration against the number of
# MPI ranks (1, 2, 3; oversubscribed when the machine has fewer cores), joint
# NMF and MCL (SGE graph), dense views, K = 20, no progress callback (no stop
# vote), on the full mfeat data (../shared/data/mfeat, 2000 items) replicated
# 10 times (20 000 items), or data/mfeat-sample when it is absent; first the
# single-process library call for reference. Each line is
# mpi_fit's report from rank 0; the time is the slowest rank's, median of 3 runs;
# allreduce_of_one_iteration_us times one iteration's words alone (200 calls).
#
#   bash examples-c/mpi_bench.sh [DATA_DIR] [REPLICATE]
set -euo pipefail
cd "$(dirname "$0")/.."
data="${1:-../shared/data/mfeat}"
[ -f "$data/meta.txt" ] || data=data/mfeat-sample
rep="${2:-10}"
cargo build --release --quiet -p mvnmf-capi
out="$PWD/target/mpi-check"
mkdir -p "$out"
mpicc -std=c99 -O2 -Wall -Wextra -Wpedantic -Werror -Iinclude -o "$out/mpi_fit_release" examples-c/mpi_fit.c \
  target/release/libmvnmf.a -lgcc_s -lutil -lrt -lpthread -lm -ldl
echo "cores: $(nproc); data: $data x $rep"
for method in joint mcl; do
  for np in single 1 2 3; do
    for t in 1 2 3; do
      if [ "$np" = single ]; then
        mpirun --allow-run-as-root -np 1 "$out/mpi_fit_release" --single --method "$method" --k 20 \
          --iters 30 --alpha 10 --no-monitor --replicate "$rep" "$data"
      else
        mpirun --oversubscribe --allow-run-as-root -np "$np" "$out/mpi_fit_release" --method "$method" --k 20 \
          --iters 30 --alpha 10 --no-monitor --replicate "$rep" --comm-bench "$data"
      fi
    done > "$out/runs.txt"
    # The median run by time per iteration.
    awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^ms\/iteration=/) { split($i, a, "="); print a[2], $0 } }' \
      "$out/runs.txt" | sort -g | sed -n 2p | cut -d' ' -f2-
  done
done
