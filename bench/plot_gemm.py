#!/usr/bin/env python3
"""GEMM picture: TFLOP/s against square size, la's fastest kernel of each precision class
beside the cuBLAS call of that class, all from one gemm_bench run.

usage: bench/plot_gemm.py gemm_bench.json out.svg [--title TEXT]

Reads the JSON that gemm_bench writes (--benchmark_out=FILE --benchmark_out_format=json; the
square shapes are its size sweep) and draws one solid line per precision class for la (the
fastest non-teaching variant at each size, named in the legend when it is always the same)
and a dashed one for cuBLAS. Plain SVG, no plotting library needed.
"""
import json
import math
import sys

CLASSES = [("fp16", "cublas_f16", "#d62728"), ("bf16", "cublas_bf16", "#9467bd"),
           ("tf32", "cublas_tf32", "#2ca02c"), ("fp32", "cublas_fp32", "#1f77b4"),
           ("tf32x3", "cublas_fp32", "#17becf")]  # float accuracy from TF32; its peer: cuBLAS fp32
TEACHING = {"naive", "smem_tiled", "joint_rs"}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    src, dst = sys.argv[1], sys.argv[2]
    title = sys.argv[sys.argv.index("--title") + 1] if "--title" in sys.argv else "GEMM: TFLOP/s against size"
    runs = {}  # (size, name) -> (precision, TFLOP/s)
    for b in json.load(open(src))["benchmarks"]:
        _, shape, name = b["name"].split("/")[:3]
        m, n, k = (int(x) for x in shape.split("x"))
        if m != n or n != k or b.get("error_occurred") or name in TEACHING:
            continue
        runs[(m, name)] = (b["label"], b["TFLOPS"])
    sizes = sorted({s for s, _ in runs})
    if not sizes:
        sys.exit("no square shapes in " + src)
    series = []  # (label, colour, dashed, [(size, tflops)])
    drawn = set()  # cuBLAS calls already drawn
    for prec, peer, colour in CLASSES:
        la, names = [], set()
        for s in sizes:
            best = max(((tf, name) for (sz, name), (p, tf) in runs.items()
                        if sz == s and p == prec and not name.startswith("cublas")), default=None)
            if best:
                la.append((s, best[0]))
                names.add(best[1])
        vendor = [] if peer in drawn else [(s, runs[(s, peer)][1]) for s in sizes if (s, peer) in runs]
        if la:
            series.append((f"la {prec} ({names.pop() if len(names) == 1 else 'fastest'})", colour, False, la))
        if vendor:
            series.append((f"cuBLAS {prec}", colour, True, vendor))
            drawn.add(peer)  # tf32x3 shares cuBLAS's fp32 line
    top_tf = max(tf for _, _, _, pts in series for _, tf in pts)
    ymax = 100 * math.ceil(top_tf / 100)
    left, top, w, h = 60, 40, 520, 320
    lx = lambda s: math.log2(s)
    x0, x1 = lx(sizes[0]), lx(sizes[-1])
    px = lambda s: left + (lx(s) - x0) / max(x1 - x0, 1e-9) * w
    py = lambda tf: top + h - tf / ymax * h
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + w + 230}" height="{top + h + 50}" '
           'font-family="sans-serif" font-size="11">',
           f'<text x="{left}" y="20" font-size="14">{title}</text>',
           f'<rect x="{left}" y="{top}" width="{w}" height="{h}" fill="none" stroke="#999"/>']
    for i in range(0, 6):
        v = ymax * i / 5
        out.append(f'<line x1="{left}" x2="{left + w}" y1="{py(v):.1f}" y2="{py(v):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{left - 6}" y="{py(v) + 4:.1f}" text-anchor="end">{v:.0f}</text>')
    for s in sizes:
        out.append(f'<text x="{px(s):.1f}" y="{top + h + 16}" text-anchor="middle">{s}</text>')
    out.append(f'<text x="{left + w / 2}" y="{top + h + 36}" text-anchor="middle">M = N = K</text>')
    out.append(f'<text x="14" y="{top + h / 2}" transform="rotate(-90 14 {top + h / 2})" '
               'text-anchor="middle">TFLOP/s</text>')
    for i, (label, colour, dashed, pts) in enumerate(series):
        path = " ".join(f"{px(s):.1f},{py(tf):.1f}" for s, tf in pts)
        dash = ' stroke-dasharray="5,4"' if dashed else ""
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
        for s, tf in pts:
            out.append(f'<circle cx="{px(s):.1f}" cy="{py(tf):.1f}" r="2.5" fill="{colour}"/>')
        ly = top + 10 + 18 * i
        out.append(f'<line x1="{left + w + 12}" x2="{left + w + 40}" y1="{ly}" y2="{ly}" stroke="{colour}" '
                   f'stroke-width="2"{dash}/>')
        out.append(f'<text x="{left + w + 46}" y="{ly + 4}">{label}</text>')
    out.append("</svg>")
    open(dst, "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
