#!/usr/bin/env python3
"""Complex values against the vendor libraries, from one `complex_bench --out FILE` run.

usage: bench/plot_complex.py complex.csv out.svg [--title TEXT]

Left: per matrix, cuSPARSE's best complex SpMV time over la's best (bars; 1 is a tie, the
dashed line the 1.2x target). Right: the dense complex LU's and Cholesky's times against n,
la and cusolverDnZgetrf / cusolverDnZpotrf, log-log. Only validated rows (ok = 1). Plain SVG, no plotting library.
"""
import csv
import math
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    src, dst = sys.argv[1], sys.argv[2]
    title = sys.argv[sys.argv.index("--title") + 1] if "--title" in sys.argv else "Complex values against the vendor libraries"
    rs = [r for r in csv.DictReader(open(src)) if r["ok"] == "1"]
    bars = []
    for case in dict.fromkeys(r["case"] for r in rs if r["bench"] == "spmv"):
        mine = min(float(r["ms"]) for r in rs if r["case"] == case and r["impl"].startswith("la:"))
        peer = min(float(r["ms"]) for r in rs if r["case"] == case and r["impl"].startswith("cusparse:"))
        bars.append((case, peer / mine))
    lu = {}
    for r in rs:
        if r["bench"] in ("lu", "cholesky"):
            lu.setdefault(r["impl"], []).append((int(r["n"]), float(r["ms"])))
    W, H = 900, 420
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (W, H),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="20" text-anchor="middle" font-size="15">%s</text>' % (W // 2, title)]
    # Left panel: bars.
    x0, y0, pw, ph = 150, 50, 280, 320
    top = max(2.6, max(v for _, v in bars) * 1.1)
    sx = lambda v: x0 + pw * v / top
    bh = ph / max(len(bars), 1)
    for i, (case, v) in enumerate(bars):
        y = y0 + i * bh
        out.append('<rect x="%d" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>' % (x0, y + 3, sx(v) - x0, bh - 6,
                                                                                  "#1f77b4" if v >= 1 else "#d62728"))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (x0 - 6, y + bh / 2 + 4, case))
        out.append('<text x="%.1f" y="%.1f">%.2fx</text>' % (sx(v) + 4, y + bh / 2 + 4, v))
    for v, dash in ((1.0, ""), (1.2, "5,4")):
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black" stroke-dasharray="%s"/>' % (sx(v), y0, sx(v), y0 + ph, dash))
    out.append('<text x="%d" y="%d" text-anchor="middle">SpMV: cuSPARSE best / la best (complex double)</text>' % (x0 + pw // 2, y0 + ph + 30))
    # Right panel: LU times, log-log.
    x1, pw2 = 540, 320
    pts = [p for v in lu.values() for p in v]
    if pts:
        nlo, nhi = min(p[0] for p in pts), max(p[0] for p in pts)
        tlo, thi = min(p[1] for p in pts) / 1.5, max(p[1] for p in pts) * 1.5
        px = lambda n: x1 + pw2 * (math.log(n) - math.log(nlo)) / max(math.log(nhi) - math.log(nlo), 1e-9)
        py = lambda t: y0 + ph - ph * (math.log(t) - math.log(tlo)) / (math.log(thi) - math.log(tlo))
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#888"/>' % (x1, y0, pw2, ph))
        for impl, colour, dash in (("la:dense_lu_device", "#1f77b4", ""), ("cusolver:zgetrf", "#1f77b4", "6,4"),
                                   ("la:dense_cholesky_device", "#2ca02c", ""), ("cusolver:zpotrf", "#2ca02c", "6,4")):
            p = sorted(lu.get(impl, []))
            if p:
                out.append('<polyline fill="none" stroke="%s" stroke-width="2" stroke-dasharray="%s" points="%s"/>' % (
                    colour, dash, " ".join("%.1f,%.1f" % (px(n), py(t)) for n, t in p)))
                for n, t in p:
                    out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (px(n), py(t), colour))
                out.append('<text x="%.1f" y="%.1f">%s</text>' % (px(p[-1][0]) - 120, py(p[-1][1]) - 8, impl))
        for n in sorted({p[0] for p in pts}):
            out.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (px(n), y0 + ph + 15, n))
        out.append('<text x="%d" y="%d" text-anchor="middle">dense complex LU (blue), Cholesky (green): ms against n (log-log)</text>' % (x1 + pw2 // 2, y0 + ph + 30))
    out.append("</svg>")
    open(dst, "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
