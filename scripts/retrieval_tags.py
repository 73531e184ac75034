#!/usr/bin/env python3
"""JSNMF in the paper's setting (seed 004), over several seeds: mean ± sample std.

Runs `examples-c/retrieval --tags ...` once per seed (each seed draws its own split, tags, noise,
keyword queries and start) and prints two Markdown tables: every (K, auxiliary weight) on the test
queries, and the three selections (the K and weight chosen on the tuning queries among 0 < K < R,
the best K = 0 and the best K = R), with the difference chosen − baseline in units of its standard
deviation over the seeds.

    python3 scripts/retrieval_tags.py [--seeds 5] [--exe examples-c/retrieval] [DIR] -- [retrieval options]

Defaults: DIR = data/ng20-sample, options --tags 8 --keywords 200 --ks 0,5,10,20,30,40 --lams 0.25,1,4.
Standard library only.
"""
import argparse
import re
import statistics
import subprocess
import sys

ROW = re.compile(r"^\| (\d+) \| ([^|]+) \|((?: [0-9.]+ \|){6})$")
SEL = re.compile(r"^select (\S+) K=(\d+) aux=(\S+) test_pr01=([0-9.]+) test_map=([0-9.]+) "
                 r"test_p10=([0-9.]+) test_p20=([0-9.]+)$")


def ms(xs):
    m = statistics.fmean(xs)
    s = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return m, s


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--exe", default="examples-c/retrieval")
    ap.add_argument("dir", nargs="?", default="data/ng20-sample")
    a = ap.parse_args(argv)
    opts = extra or ["--tags", "8", "--keywords", "200", "--ks", "0,5,10,20,30,40", "--lams", "0.25,1,4"]
    rows, sels, header = {}, {}, None
    for seed in range(1, a.seeds + 1):
        out = subprocess.run([a.exe, *opts, "--seed", str(seed), a.dir], check=True, capture_output=True,
                             text=True).stdout
        for line in out.splitlines():
            if header is None and line.startswith("* target:"):
                header = line
            m = ROW.match(line)
            if m:
                vals = [float(v) for v in m.group(3).split("|") if v.strip()]
                rows.setdefault((int(m.group(1)), m.group(2).strip()), []).append(vals)
            m = SEL.match(line)
            if m:
                sels.setdefault(m.group(1), []).append(
                    (int(m.group(2)), m.group(3), [float(m.group(i)) for i in range(4, 8)]))
    print(f"{a.seeds} seeds, `{a.exe} {' '.join(opts)} --seed S {a.dir}`; {header[2:] if header else ''}\n")
    print("| K | aux weight | test P@R0.1 | test MAP | test P@10 | test P@20 |\n|---|---|---|---|---|---|")
    for (k, lam), vs in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        cells = [ms([v[j] for v in vs]) for j in (2, 3, 4, 5)]
        print(f"| {k} | {lam} | " + " | ".join(f"{m:.3f} ± {s:.3f}" for m, s in cells) + " |")
    print("\n| selection (on the tuning queries) | K chosen per seed | P@R0.1 | MAP | P@10 | P@20 |")
    print("|---|---|---|---|---|---|")
    for name in ("chosen", "K=0", "K=R"):
        if name not in sels:
            continue
        v = sels[name]
        cells = [ms([x[2][j] for x in v]) for j in range(4)]
        ks = ",".join(f"{x[0]}" + (f"/{x[1]}" if x[0] else "") for x in v)
        print(f"| {name} | {ks} | " + " | ".join(f"{m:.3f} ± {s:.3f}" for m, s in cells) + " |")
    if "chosen" in sels:
        for base in ("K=0", "K=R"):
            if base not in sels:
                continue
            for j, what in ((0, "P@R0.1"), (1, "MAP")):
                d = [c[2][j] - b[2][j] for c, b in zip(sels["chosen"], sels[base])]
                m, s = ms(d)
                verdict = "beats" if m > 2 * s and m > 0 else "does not beat"
                print(f"\nchosen − {base}, {what}: {m:+.4f} ± {s:.4f} over the seeds: the chosen K {verdict} "
                      f"{base} by two standard deviations", end="")
        print()


if __name__ == "__main__":
    main()
