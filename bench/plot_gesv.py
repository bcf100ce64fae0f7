#!/usr/bin/env python3
"""Dense direct solvers: time against n, la beside cuSOLVER, from one `la bench gesv` run.

usage: bench/plot_gesv.py gesv.csv out.svg [--title TEXT]

Reads the CSV `la bench gesv --out FILE.csv` writes and draws one line per implementation of
the LU factorization (getrf), the Cholesky factorization (potrf) and the mixed-precision
solve (factor + solve to fp64 accuracy), log-log. Only validated rows (ok = 1). Plain SVG,
no plotting library needed.
"""
import csv
import math
import sys

SERIES = [("getrf", "la:fp64", "la getrf (fp64)", "#1f77b4", ""), ("getrf", "cusolver", "cuSOLVER getrf", "#1f77b4", "6,4"),
          ("potrf", "la:fp64", "la potrf (fp64)", "#2ca02c", ""), ("potrf", "cusolver", "cuSOLVER potrf", "#2ca02c", "6,4"),
          ("gesv-mixed", "la:tf32x3", "la mixed gesv (3xTF32)", "#d62728", ""),
          ("gesv-mixed", "cusolver:irs-fp32", "cuSOLVER IRS gesv (fp32)", "#d62728", "6,4")]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    src, dst = sys.argv[1], sys.argv[2]
    title = sys.argv[sys.argv.index("--title") + 1] if "--title" in sys.argv else "Dense direct solvers"
    pts = {}
    for r in csv.DictReader(open(src)):
        if r["ok"] != "1":
            continue
        pts.setdefault((r["kind"], r["impl"]), []).append((int(r["n"]), float(r["ms"])))
    ns = [n for v in pts.values() for n, _ in v]
    ms = [m for v in pts.values() for _, m in v if m > 0]
    if not ns:
        sys.exit("no validated rows in " + src)
    W, H, L, R, T, B = 760, 480, 70, 230, 40, 50
    x0, x1 = math.log10(min(ns)), math.log10(max(ns))
    y0, y1 = math.floor(math.log10(min(ms))), math.ceil(math.log10(max(ms)))
    X = lambda n: L + (math.log10(n) - x0) / max(x1 - x0, 1e-9) * (W - L - R)
    Y = lambda m: H - B - (math.log10(m) - y0) / max(y1 - y0, 1e-9) * (H - T - B)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (W, H),
           '<text x="%d" y="22" font-size="15">%s</text>' % (L, title)]
    for e in range(int(y0), int(y1) + 1):
        y = Y(10 ** e)
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (L, y, W - R, y))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%g ms</text>' % (L - 6, y + 4, 10 ** e))
    for n in sorted(set(ns)):
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (X(n), H - B + 18, n))
    out.append('<text x="%d" y="%d" text-anchor="middle">n</text>' % ((L + W - R) // 2, H - 10))
    for i, (kind, impl, label, color, dash) in enumerate(SERIES):
        v = sorted(pts.get((kind, impl), []))
        if not v:
            continue
        path = " ".join("%s%.1f,%.1f" % ("M" if j == 0 else "L", X(n), Y(m)) for j, (n, m) in enumerate(v) if m > 0)
        out.append('<path d="%s" fill="none" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>' % (path, color, dash))
        ly = T + 20 + 20 * i
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>'
                   % (W - R + 10, ly, W - R + 40, ly, color, dash))
        out.append('<text x="%d" y="%d">%s</text>' % (W - R + 46, ly + 4, label))
    out.append("</svg>")
    open(dst, "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
