#!/usr/bin/env python3
"""Draw kNN accuracy against DMCL's depth (issue 20) as an SVG, from reproduce's output.

    python3 scripts/depth_plot.py OUT.svg NAME=DEPTH_OUT[+DEPTH_OUT...]@SHALLOW_OUT [...]

One panel per NAME (a data set). DEPTH_OUT: the stdout of `examples-c/reproduce --depth`
(its "### Accuracy against depth, F labeled" tables; several files when the fractions were
run apart); SHALLOW_OUT: the stdout of a run with MCL in its tables (drawn as a dashed
line per fraction at its mean). Each fraction is one colour: mean kNN accuracy of DMCL at
depth 1, 2, 3 with ± std bars. Also prints the numbers it drew as Markdown tables.

Standard library only.
"""
import re
import sys

COLOURS = ["#1b6ca8", "#c0392b", "#27ae60", "#8e44ad", "#d68910"]
CELL = re.compile(r"([0-9.]+) ± ([0-9.]+)")


def depth_rows(paths):
    """{fraction: {depth: (knn, std, acc, nmi)}} from --depth outputs."""
    out = {}
    for path in paths:
        frac = None
        for line in open(path, encoding="utf-8"):
            m = re.match(r"### Accuracy against depth, (\S+) labeled", line)
            if m:
                frac = m.group(1)
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if frac and len(cells) >= 6 and cells[0] == "DMCL" and cells[1].isdigit():
                knn = CELL.match(cells[3])
                if not knn:  # the checks table: | DMCL | fits | ...
                    continue
                out.setdefault(frac, {})[int(cells[1])] = (
                    float(knn.group(1)), float(knn.group(2)),
                    cells[4], cells[5], cells[3])
    return out


def shallow_rows(path, method="MCL"):
    """{fraction: (mean, cell text)} of `method` in the kNN table of a reproduce run."""
    out, cols, in_knn = {}, None, False
    for line in open(path, encoding="utf-8"):
        if line.startswith("### "):
            in_knn = line.startswith("### kNN accuracy")
            cols = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if in_knn and cells and cells[0] == "method":
            cols = cells[1:]
        elif in_knn and cols and cells and cells[0] == method:
            for f, c in zip(cols, cells[1:]):
                out[f] = (float(CELL.match(c).group(1)), c)
    return out


def panel(x0, name, deep, shallow, w=330, h=260):
    """One panel's SVG elements; y axis fitted to the data."""
    ys = [v[0] + s * v[1] for f in deep for v in deep[f].values() for s in (-1, 1)]
    ys += [v[0] for v in shallow.values()]
    lo, hi = min(ys) - 1, max(ys) + 1
    px = lambda d: x0 + 50 + (d - 1) * (w - 80) / 2
    py = lambda a: 30 + (hi - a) * (h - 70) / (hi - lo)
    e = [f'<text x="{x0 + w / 2}" y="18" text-anchor="middle" font-weight="bold">{name}</text>',
         f'<line x1="{x0 + 40}" y1="{py(lo)}" x2="{x0 + w - 20}" y2="{py(lo)}" stroke="#000"/>',
         f'<line x1="{x0 + 40}" y1="{py(lo)}" x2="{x0 + 40}" y2="{py(hi)}" stroke="#000"/>']
    step = 1 if hi - lo <= 12 else 2 if hi - lo <= 24 else 5
    t = int(lo) + 1
    while t < hi:
        if t % step == 0:
            e.append(f'<text x="{x0 + 36}" y="{py(t) + 4}" text-anchor="end" font-size="11">{t}</text>')
            e.append(f'<line x1="{x0 + 40}" y1="{py(t)}" x2="{x0 + w - 20}" y2="{py(t)}" stroke="#eee"/>')
        t += 1
    for d in (1, 2, 3):
        e.append(f'<text x="{px(d)}" y="{py(lo) + 16}" text-anchor="middle" font-size="11">{d}</text>')
    e.append(f'<text x="{x0 + w / 2}" y="{h - 8}" text-anchor="middle" font-size="12">DMCL depth</text>')
    labels = []
    for i, f in enumerate(sorted(deep, key=lambda s: float(s.rstrip("%")))):
        c = COLOURS[i % len(COLOURS)]
        pts = sorted(deep[f].items())
        e.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>'
                 % (c, " ".join(f"{px(d)},{py(v[0])}" for d, v in pts)))
        for d, v in pts:
            e.append(f'<line x1="{px(d)}" y1="{py(v[0] - v[1])}" x2="{px(d)}" y2="{py(v[0] + v[1])}" stroke="{c}"/>')
            e.append(f'<circle cx="{px(d)}" cy="{py(v[0])}" r="3" fill="{c}"/>')
        if f in shallow:
            y = py(shallow[f][0])
            e.append(f'<line x1="{px(1) - 15}" y1="{y}" x2="{px(3) + 15}" y2="{y}" stroke="{c}" '
                     'stroke-dasharray="5,4"/>')
        labels.append([py(pts[-1][1][0]) + 4, f, c])
    labels.sort()
    for a, b in zip(labels, labels[1:]):  # keep the end labels 12 px apart
        b[0] = max(b[0], a[0] + 12)
    for y, f, c in labels:
        e.append(f'<text x="{x0 + w - 18}" y="{y}" font-size="11" fill="{c}">{f}</text>')
    return e


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    sets = []
    for spec in sys.argv[2:]:
        name, rest = spec.split("=", 1)
        deep_files, shallow_file = rest.split("@")
        sets.append((name, depth_rows(deep_files.split("+")), shallow_rows(shallow_file)))
    w, h = 330, 260
    body = []
    for i, (name, deep, shallow) in enumerate(sets):
        body += panel(i * (w + 20), name, deep, shallow, w, h)
        fracs = sorted(deep, key=lambda s: float(s.rstrip("%")))
        print(f"\n{name}: kNN accuracy (%), tuned, mean ± std over the splits\n")
        print("| method | " + " | ".join(fracs) + " |")
        print("|---" * (len(fracs) + 1) + "|")
        print("| MCL | " + " | ".join(shallow.get(f, (0, "-"))[1] for f in fracs) + " |")
        for d in (1, 2, 3):
            print(f"| DMCL depth {d} | " + " | ".join(deep[f][d][4] if d in deep[f] else "-" for f in fracs) + " |")
        print(f"\n{name}: k-means ACC / NMI (%)\n")
        for d in (1, 2, 3):
            print(f"| DMCL depth {d} | " + " | ".join(
                f"{deep[f][d][2]} / {deep[f][d][3]}" if d in deep[f] else "-" for f in fracs) + " |")
    legend = ('<text x="10" y="%d" font-size="11">solid: DMCL tuned at each depth (± std over splits); '
              'dashed: MCL tuned; colour: labeled fraction</text>' % (h + 14))
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif">'
           '<rect width="100%%" height="100%%" fill="#fff"/>%s%s</svg>\n'
           % (len(sets) * (w + 20), h + 22, "".join(body), legend))
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        f.write(svg)


if __name__ == "__main__":
    main()
