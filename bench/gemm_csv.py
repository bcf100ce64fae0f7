#!/usr/bin/env python3
"""gemm_bench's JSON as a CSV, one row a (shape, variant): what bench/figures.py reads for the
GEMM table of bench/RESULTS.md.

usage: bench/gemm_csv.py gemm_bench.json "DEVICE NAME" out.csv

Columns: device, shape (MxNxK), variant, precision (the variant's class: fp32, tf32, tf32x3,
fp16, bf16), us (the mean time of a call), tflops, ok (1: the output matched cuBLAS on the same
inputs before it was timed; 0: gemm_bench reported an error for it, and it has no time), peer
(the cuBLAS call of its class, as summarize.py pairs them). Only the standard library.
"""
import csv
import json
import sys

PEER = {"fp32": "cublas_fp32", "tf32": "cublas_tf32", "fp16": "cublas_f16", "bf16": "cublas_bf16",
        "tf32x3": "cublas_fp32"}


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, device, dst = sys.argv[1:]
    out = []
    for b in json.load(open(src))["benchmarks"]:
        if b.get("run_type") == "aggregate":
            continue
        _, shape, name = b["name"].split("/")[:3]
        if b.get("error_occurred"):
            out.append([device, shape, name, "", "", "", 0, ""])
            continue
        prec = b["label"]
        unit = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b.get("time_unit", "us")]
        out.append([device, shape, name, prec, "%.3f" % (b["real_time"] * unit), "%.2f" % b["TFLOPS"], 1, PEER.get(prec, "")])
    with open(dst, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["device", "shape", "variant", "precision", "us", "tflops", "ok", "peer"])
        w.writerows(out)
    bad = sum(1 for r in out if r[6] == 0)
    print("%s: %d rows, %d not validated" % (dst, len(out), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
