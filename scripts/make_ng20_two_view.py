#!/usr/bin/env python3
"""Write a two-view dataset (reproduce's format) from 20 Newsgroups domain A.

Issue 20's high-dimensional text set: the 1,350 domain-A documents of
data/ng20-sample (a copy of ../shared/data/ng20_xdomain; CC BY 4.0), their
1,500-term vocabulary split into two views of the same documents: the terms at
even rows of vocab.txt (alphabetical order) are view 1, the odd rows view 2 —
interleaved, so that both halves span the alphabet and the frequency range.
Labels: the four top-level groups (comp, rec, sci, talk), labels_view1.txt.
Values: the raw term counts (reproduce normalises each view to ||X||_F^2 = N).

    python3 scripts/make_ng20_two_view.py OUT_DIR
    examples-c/reproduce --depth --fractions 10,30,50 OUT_DIR

Standard library only.
"""
import gzip
import os
import struct
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(REPO, "data", "ng20-sample")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_ng20_two_view.py OUT_DIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    m, n = 1500, 1350
    raw = gzip.open(os.path.join(SRC, "view1.f64.gz")).read()
    x = struct.unpack("<%dd" % (m * n), raw)
    vocab = open(os.path.join(SRC, "vocab.txt")).read().split("\n")[:m]
    meta = ["name ng20-two-view", "kind multi-view",
            "source data/ng20-sample domain A (20 Newsgroups, CC BY 4.0), vocabulary split "
            "even/odd rows into two views (scripts/make_ng20_two_view.py)",
            "items %d" % n, "views 2"]
    for v, parity in ((1, 0), (2, 1)):
        rows = list(range(parity, m, 2))
        buf = bytearray()
        nnz = 0
        for j in range(n):
            col = [x[j * m + i] for i in rows]
            nnz += sum(1 for c in col if c != 0)
            buf += struct.pack("<%dd" % len(rows), *col)
        open(os.path.join(out, "view%d.f64" % v), "wb").write(bytes(buf))
        meta.append("view%d.f64 name=%s rows=%d cols=%d nonnegative=yes nonzero_fraction=%.4f"
                    % (v, "terms_even" if parity == 0 else "terms_odd", len(rows), n,
                       nnz / (len(rows) * n)))
        open(os.path.join(out, "vocab%d.txt" % v), "w").write(
            "\n".join(vocab[i] for i in rows) + "\n")
    labels = open(os.path.join(SRC, "labels_view1.txt")).read().split()
    assert len(labels) == n
    open(os.path.join(out, "labels.txt"), "w").write("\n".join(labels) + "\n")
    meta.append("labels.txt classes=4 (comp rec sci talk)")
    open(os.path.join(out, "meta.txt"), "w").write("\n".join(meta) + "\n")
    print("wrote %s: 2 views of %d terms x %d documents" % (out, m // 2, n))


if __name__ == "__main__":
    main()
