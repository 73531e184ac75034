#!/usr/bin/env bash
# Issue 20's evidence: DMCL against MCL and against its depth on two real data sets,
# untuned variants and tuned by cross-validation inside the labeled items.
#
#   bash scripts/depth_evidence.sh OUT_DIR [MFEAT_DIR]
#
# MFEAT_DIR defaults to ../shared/data/mfeat (the full 2,000 digits; data/mfeat-sample,
# 500 digits, works too). The text set is built from data/ng20-sample by
# scripts/make_ng20_two_view.py. Every run: 5 splits at 10/30/50 % labeled, K = 20,
# 100 iterations; --tune with --budget 9 (each method fits 9 grid points per split and
# fraction: MCL's 27 = alpha x beta x gamma, DMCL's 81 = x depth). Writes NAME.TAG.out
# (the tables) and .err (progress, the tuning scores) per run, then the plot
# OUT_DIR/depth.svg and its tables (scripts/depth_plot.py; the copy in the repository is
# examples-c/depth.svg). About 3 hours on 2 cores (two runs at a time); the tuned runs at
# fixed depth are most of it. A run's splits depend only on the seed and the fraction, so a
# run may be split by --fractions over several processes (the numbers in REPRODUCE.md for
# mfeat tuned per depth were: 10, 30 and 50 % apart) and give the same tables.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$(mkdir -p "$1" && cd "$1" && pwd)"
mfeat="${2:-$root/../shared/data/mfeat}"
cd "$root"
cargo build --release -q -p mvnmf-capi
make -s -C examples-c reproduce
python3 scripts/make_ng20_two_view.py "$out/ng20-two-view" >/dev/null
run() { # NAME DIR TAG [reproduce options]
  local name=$1 dir=$2 tag=$3
  shift 3
  examples-c/reproduce --splits 5 --fractions 10,30,50 --iters 100 "$@" "$dir" \
    >"$out/$name.$tag.out" 2>"$out/$name.$tag.err"
}
dataset() { # NAME DIR [options for every run]
  local name=$1 dir=$2
  shift 2
  run "$name" "$dir" v-default --depth "$@"
  run "$name" "$dir" v-alpha1 --depth --param dmcl.alpha=1 "$@"
  run "$name" "$dir" v-alpha100 --depth --param dmcl.alpha=100 "$@"
  run "$name" "$dir" v-box0 --depth --param dmcl.box=0 "$@"
  run "$name" "$dir" v-vinit1 --depth --param dmcl.vinit=1 "$@"
  run "$name" "$dir" v-pre20 --depth --param dmcl.pretrain=20 "$@"
  run "$name" "$dir" v-pre300 --depth --param dmcl.pretrain=300 "$@"
  run "$name" "$dir" v-wide --depth --layers 300,200 "$@"
  run "$name" "$dir" tuned --methods concat,mcl,dmcl --tune --budget 9 "$@"
  run "$name" "$dir" tuned-depth --depth --tune --budget 9 "$@"
}
dataset mfeat "$mfeat" --shift &
dataset text "$out/ng20-two-view" &
wait
python3 scripts/depth_plot.py "$out/depth.svg" \
  "mfeat=$out/mfeat.tuned-depth.out@$out/mfeat.tuned.out" \
  "20 Newsgroups, two views=$out/text.tuned-depth.out@$out/text.tuned.out"
