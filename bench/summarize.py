#!/usr/bin/env python3
"""Ratio table from gemm_bench's JSON: each own variant against the cuBLAS mode of its
precision class measured in the same run, and against the datasheet peak of the device.
Usage: summarize.py gemm_bench.json [device name]"""
import json
import sys

# Dense datasheet peaks, TFLOP/s (H100 SXM5 and H200 SXM share the same SMs and clocks).
# tf32x3 multiplies three TF32 products per product it reports: its limit is a third of TF32's,
# and its peer the float GEMM it stands in for.
PEAK = {"fp32": 67.0, "tf32": 494.7, "fp16": 989.4, "bf16": 989.4, "tf32x3": 494.7 / 3}
PEER = {"fp32": "cublas_fp32", "tf32": "cublas_tf32", "fp16": "cublas_f16", "bf16": "cublas_bf16",
        "tf32x3": "cublas_fp32"}

data = json.load(open(sys.argv[1]))
rows = {}
for b in data["benchmarks"]:
    _, shape, name = b["name"].split("/")[:3]
    if b.get("error_occurred"):
        rows.setdefault(shape, {})[name] = ("ERROR", b.get("error_message", ""))
        continue
    rows.setdefault(shape, {})[name] = (b["label"], b["TFLOPS"], b["real_time"])

print(f"{'shape':<20} {'variant':<18} {'prec':<5} {'TFLOP/s':>8} {'us':>10} {'vs cuBLAS':>10} {'% peak':>7}")
for shape, vs in rows.items():
    for name, r in vs.items():
        if r[0] == "ERROR":
            print(f"{shape:<20} {name:<18} ERROR {r[1]}")
            continue
        prec, tf, us = r
        peer = vs.get(PEER[prec])
        ratio = f"{tf / peer[1]:.2f}x" if peer and peer[0] != "ERROR" and not name.startswith("cublas") else "-"
        print(f"{shape:<20} {name:<18} {prec:<5} {tf:8.2f} {us:10.1f} {ratio:>10} {100 * tf / PEAK[prec]:6.1f}%")
