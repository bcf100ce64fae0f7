#!/usr/bin/env python3
"""Non-symmetric systems: time to solution per system, la's methods beside the peers.

usage: bench/plot_krylov.py krylov.csv [cupy_krylov.csv] out.svg [--title TEXT]

Reads what bench/krylov_bench --out writes (and bench/cupy_krylov.py --out, when given) and
draws, per system, one bar per implementation, method and preconditioner that reached the
tolerance: time to solution (setup included) on a log axis, iterations at the bar's end
(plot_precond.py's drawing). Plain SVG, no plotting library needed.
"""
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot_precond import draw  # noqa: E402

COLORS = {"la bicgstab none": "#9ecae1", "la bicgstab jacobi": "#3182bd", "la bicgstab ilu0": "#08519c",
          "la gmres none": "#a1d99b", "la gmres jacobi": "#31a354", "la gmres ilu0": "#006d2c",
          "vendor bicgstab none": "#fcbba1", "vendor bicgstab jacobi": "#fb6a4a", "vendor bicgstab ilu0": "#a50f15",
          "cupy gmres none": "#dadaeb", "cupy gmres jacobi": "#756bb1", "eigen bicgstab ilut": "#ff7f0e",
          "la bicgstab ilu0+exact+exact": "#c6dbef", "la bicgstab ilu0+sweeps+jacobi": "#6baed6",
          "la gmres ilu0+exact+exact": "#c7e9c0", "la gmres ilu0+sweeps+jacobi": "#74c476",
          "la gmres ilu0+exact+isai": "#41ab5d"}


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) < 2:
        sys.exit(__doc__)
    title = sys.argv[sys.argv.index("--title") + 1] if "--title" in sys.argv else \
        "Non-symmetric systems: time to solution (setup included)"
    if "--title" in sys.argv:
        args.remove(title)
    rows = []
    for src in args[:-1]:
        for r in csv.DictReader(open(src)):
            if r["impl"] == "la" and "auto" in r.get("detail", ""):
                continue  # the auto rows repeat a method's row
            r["series"] = "%s %s %s" % (r["impl"], r["method"], r["precond"])
            rows.append(r)
    rows.sort(key=lambda r: (r["system"], r["series"]))
    draw(rows, args[-1], title, colors=COLORS, value="tts_ms", series="series")


if __name__ == "__main__":
    main()
