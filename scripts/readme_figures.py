#!/usr/bin/env python3
"""The measured figures of README.md and docs/*.md, regenerated so that they
cannot go stale (issue 34).

A figure in README.md or a page of docs/ stands between two HTML comments, invisible on the
rendered page:

    <!-- fig:NAME -->166<!-- /fig -->

(a whole block, such as a program's printout, the same way on lines of their
own around it). This script computes every figure and rewrites the spans:

    python3 scripts/readme_figures.py                  # rewrite README.md
    python3 scripts/readme_figures.py --check          # exit 1 if a span differs (CI)
    ... --embedded FILE                                # embedded/run.sh's output, already
                                                       # captured (else the script runs it)

The figures and where they come from:
  exports              C entry points: the functions include/mvnmf.h declares (the
                       generated header; packaging/check.sh checks that the
                       shared library exports exactly these)
  cortex-m-workspace   bytes the Cortex-M4F example's fit asks for ("workspace: N of
                       4096 static bytes" in embedded/run.sh's output)
  cortex-m-flash-kb    flash of that example in KB (1 decimal), from the "code size"
                       line of the same output; a stated value within TOLERANCE of the
                       measured one is current (the byte count moves by a few dozen
                       bytes between checkouts of the same commit: 94,584 to 94,656
                       measured, which crosses a rounding edge)
  cortex-m-printout    the printout embedded/run.sh shows, from its first line up to
                       the "code size" line (not included: its byte count varies by a
                       few dozen bytes between checkouts)
Every span must name a figure of this list, and every figure of the list must
have a span in one of the files (a misspelt marker fails).
"""
import argparse
import difflib
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILES = ["README.md"] + sorted(os.path.join("docs", f) for f in os.listdir(os.path.join(ROOT, "docs"))
                              if f.endswith(".md"))
# Figures that vary between builds of the same commit, and how far a stated value may lie
# from the measured one and still be current.
TOLERANCE = {"cortex-m-flash-kb": 0.5}
SPAN = re.compile(r"<!-- fig:([a-z0-9-]+) -->(.*?)<!-- /fig -->", re.S)


def header_functions():
    """The function names include/mvnmf.h declares (a return type, then the name)."""
    decl = re.compile(r"^[A-Za-z_][A-Za-z0-9_ ]*[ *](mvnmf_[a-z0-9_]+)\(", re.M)
    with open(os.path.join(ROOT, "include", "mvnmf.h")) as f:
        return sorted(set(decl.findall(f.read())))


def embedded_output(path):
    if path:
        with open(path) as f:
            return f.read()
    run = subprocess.run(["bash", os.path.join(ROOT, "embedded", "run.sh")],
                         stdout=subprocess.PIPE, universal_newlines=True)
    if run.returncode != 0:
        sys.exit("readme_figures: embedded/run.sh failed:\n" + run.stdout)
    return run.stdout


def figures(embedded):
    n = len(header_functions())
    if n < 100:
        sys.exit("readme_figures: include/mvnmf.h declares only %d functions" % n)
    lines = embedded.splitlines()
    start = [i for i, l in enumerate(lines) if l.startswith("mvnmf (no_std")]
    end = [i for i, l in enumerate(lines) if l.startswith("code size (flash")]
    ws = re.search(r"^workspace: (\d+) of \d+ static bytes$", embedded, re.M)
    flash = re.search(r"^code size \(flash[^)]*\): (\d+) bytes", embedded, re.M)
    if not (start and end and ws and flash) or end[0] < start[0]:
        sys.exit("readme_figures: embedded/run.sh's output lacks the lines this script reads:\n"
                 + embedded)
    return {
        "exports": str(n),
        "cortex-m-workspace": "{:,}".format(int(ws.group(1))),
        "cortex-m-flash-kb": "%.1f" % (int(flash.group(1)) / 1000.0),
        # The printout without its code-size line: the byte count moves by a few dozen bytes
        # with the checkout (the crates' metadata hashes change LTO's layout), so it is quoted
        # only in KB, to one decimal (cortex-m-flash-kb).
        "cortex-m-printout": "\n```\n" + "\n".join(lines[start[0]:end[0]]) + "\n```\n",
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if stale")
    ap.add_argument("--embedded", metavar="FILE", help="embedded/run.sh's captured output")
    args = ap.parse_args()
    texts = {}
    for name in FILES:
        with open(os.path.join(ROOT, name)) as f:
            texts[name] = f.read()
    names = [m.group(1) for t in texts.values() for m in SPAN.finditer(t)]
    fig = figures(embedded_output(args.embedded))
    unknown = sorted(set(names) - set(fig))
    missing = sorted(set(fig) - set(names))
    if unknown or missing:
        sys.exit("readme_figures: spans name unknown figures %s; figures without a span %s"
                 % (unknown, missing))
    def current(m):
        name, stated = m.group(1), m.group(2)
        if name in TOLERANCE:
            try:
                if abs(float(stated) - float(fig[name])) <= TOLERANCE[name]:
                    return m.group(0)
            except ValueError:
                pass
        return "<!-- fig:%s -->%s<!-- /fig -->" % (name, fig[name])

    stale = 0
    for name, text in texts.items():
        new = SPAN.sub(current, text)
        if new == text:
            continue
        stale += 1
        if args.check:
            sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True),
                                                       name, name + " (figures now)"))
        else:
            with open(os.path.join(ROOT, name), "w") as f:
                f.write(new)
            print("readme_figures: %s rewritten" % name)
    if stale and args.check:
        print("readme_figures: %d file(s) with stale figures: run python3 scripts/readme_figures.py" % stale)
        return 1
    if not stale:
        print("readme_figures: %d figures in %s, all current (%s)"
              % (len(names), ", ".join(FILES), ", ".join("%s %s" % (k, v) for k, v in sorted(fig.items())
                                                        if "\n" not in v)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
