#!/usr/bin/env python3
"""Sparse direct against iterative: time to solution against rows, from one bench/direct_bench.py run.

usage: bench/plot_direct.py direct.csv out.svg [--title TEXT]

One point per system and solver, log-log: la's direct method (analysis, factorization, solve
and refinement), la's default (auto: the Krylov methods, direct where they stop short) and
scipy's spsolve, each only where its answer met its tolerance (direct: relative residual
1e-12; the others 1e-6), so a failure leaves no point. Where the direct and Krylov points
cross along the rows axis is where each wins. Plain SVG, no plotting library needed.
"""
import csv
import math
import sys

SERIES = [("la_direct", "la_ok", "la direct", "#d62728", "circle"), ("la_auto", "auto_ok", "la auto (Krylov)", "#1f77b4", "square"),
          ("spsolve", "spsolve_relres", "scipy spsolve", "#2ca02c", "diamond")]


def ok(r, key):
    if key == "spsolve_relres":
        try:
            return float(r[key]) <= 1e-6
        except ValueError:
            return False
    return r[key] == "True"


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    src, dst = sys.argv[1], sys.argv[2]
    title = sys.argv[sys.argv.index("--title") + 1] if "--title" in sys.argv else "Time to solution"
    rows = list(csv.DictReader(open(src)))
    pts = {s[0]: [] for s in SERIES}
    for r in rows:
        for col, okcol, _, _, _ in SERIES:
            try:
                t = float(r[col])
            except (ValueError, KeyError):
                continue
            if t == t and t > 0 and ok(r, okcol):
                pts[col].append((int(r["rows"]), t))
    ns = [n for v in pts.values() for n, _ in v]
    ts = [t for v in pts.values() for _, t in v]
    if not ns:
        sys.exit("no checked rows in " + src)
    W, H, L, R, T, B = 760, 480, 70, 190, 40, 50
    x0, x1 = math.floor(math.log10(min(ns))), math.ceil(math.log10(max(ns)))
    y0, y1 = math.floor(math.log10(min(ts))), math.ceil(math.log10(max(ts)))
    X = lambda n: L + (math.log10(n) - x0) / max(x1 - x0, 1e-9) * (W - L - R)
    Y = lambda t: H - B - (math.log10(t) - y0) / max(y1 - y0, 1e-9) * (H - T - B)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (W, H),
           '<text x="%d" y="22" font-size="15">%s</text>' % (L, title)]
    for e in range(int(y0), int(y1) + 1):
        y = Y(10 ** e)
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (L, y, W - R, y))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%g s</text>' % (L - 6, y + 4, 10 ** e))
    for e in range(int(x0), int(x1) + 1):
        x = X(10 ** e)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#eee"/>' % (x, T, x, H - B))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%g</text>' % (x, H - B + 18, 10 ** e))
    out.append('<text x="%d" y="%d" text-anchor="middle">rows</text>' % ((L + W - R) // 2, H - 10))

    def mark(shape, x, y, color):
        if shape == "circle":
            return '<circle cx="%.1f" cy="%.1f" r="4" fill="none" stroke="%s" stroke-width="1.5"/>' % (x, y, color)
        if shape == "square":
            return '<rect x="%.1f" y="%.1f" width="7" height="7" fill="none" stroke="%s" stroke-width="1.5"/>' % (x - 3.5, y - 3.5, color)
        return '<path d="M%.1f,%.1f l4,4 l-4,4 l-4,-4 z" fill="none" stroke="%s" stroke-width="1.5"/>' % (x, y - 4, color)

    for i, (col, _, label, color, shape) in enumerate(SERIES):
        for n, t in pts[col]:
            out.append(mark(shape, X(n), Y(t), color))
        ly = T + 20 + 20 * i
        out.append(mark(shape, W - R + 20, ly, color))
        out.append('<text x="%d" y="%d">%s (%d)</text>' % (W - R + 32, ly + 4, label, len(pts[col])))
    out.append("</svg>")
    open(dst, "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
