#!/usr/bin/env python3
"""Batches of small dense systems from Python: la.solve on (batch, n, n) arrays against the
libraries people call for them, in one process, every answer checked.

    PYTHONPATH=build/python python3 bench/batched_bench.py [--shapes 10000x8,10000x16,...]
        [--device cpu|gpu] [--reps 5] [--out batched.csv]

Per shape (count x n; default the issue's: 10,000 systems of n = 8, 16, 32, 64 and 1,000 of
n = 128 and 256) and solver, the median of --reps whole calls after a warm-up:
  - la: la.solve(A, b) with A (count, n, n) and b (count, n): la::batched_dense_solver on the
    host's threads (--device cpu) or the GPU (--device gpu, CuPy arrays in place: no copies);
  - numpy: numpy.linalg.solve (LAPACK getrf/getrs per system, its BLAS's threads), with --device cpu;
  - cupy: cupy.linalg.solve on the same GPU arrays (cuBLAS/cuSOLVER batched), with --device gpu;
  - torch: torch.linalg.solve on the same GPU (torch tensors sharing CuPy's memory through
    DLPack), with --device gpu, where torch is installed.
A shape of one system (1xN) passes 2-D arrays instead, so la.solve takes la::dense_solver's
path (the single-kernel one up to n = 128, the blocked one above) against cupy.linalg.solve
(cuSOLVER getrf/getrs) and torch.linalg.solve: --shapes 1x64,1x1024,1x4096.
Systems: uniform in [-1, 1] plus sqrt(n) I (every system non-singular), b uniform. Every
answer's worst backward error ||b - Ax||_inf / (||A||_inf ||x||_inf + ||b||_inf) over the batch
is recomputed here in double; above 1e-12 (1e-4 in float32) is a miss, and any miss (la's or a
peer's), or an la info that is not 0, makes the exit status 1.
"""
import argparse
import csv
import statistics
import sys
import time

import numpy as np

import la


def worst_backward_error(A, x, b):
    r = b - np.einsum("bij,bj->bi", A, x)
    den = np.abs(A).sum(axis=2).max(axis=1) * np.abs(x).max(axis=1) + np.abs(b).max(axis=1)
    return float(np.max(np.abs(r).max(axis=1) / den))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="10000x8,10000x16,10000x32,10000x64,1000x128,1000x256")
    ap.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    ap.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default="batched.csv")
    a = ap.parse_args()
    dt = np.dtype(a.dtype)
    tol = 1e-12 if dt == np.float64 else 1e-4
    gpu = a.device == "gpu"
    cupy = torch = None
    if gpu:
        if not la.cuda_available():
            sys.exit("--device gpu: " + la.cuda_status())
        import cupy
        try:
            import torch
            if not torch.cuda.is_available():
                torch = None
        except ImportError:
            torch = None
    device_name = "cpu"
    if gpu:
        device_name = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    rows, misses = [], 0
    print("%-12s %-7s %10s %12s %10s" % ("shape", "solver", "ms", "backward", "vs la"))
    for shape in a.shapes.split(","):
        count, n = (int(v) for v in shape.split("x"))
        g = np.random.default_rng(n)
        A = (g.uniform(-1, 1, (count, n, n)) + np.sqrt(n) * np.eye(n)).astype(dt)
        b = g.uniform(-1, 1, (count, n)).astype(dt)
        A64, b64 = A.astype(np.float64), b.astype(np.float64)
        one = count == 1  # one system: 2-D arrays (la's dense solver, not the batched one)
        if gpu:
            dA, db = cupy.asarray(A), cupy.asarray(b)
            if one:
                dA, db = dA[0], db[0]
        solvers = {}
        if gpu:
            def run_la():
                x, info = la.solve(dA, db)
                cupy.cuda.get_current_stream().synchronize()
                return x, info
            solvers["la"] = run_la

            def run_cupy():
                x = cupy.linalg.solve(dA, db) if one else cupy.linalg.solve(dA, db[..., None])[..., 0]
                cupy.cuda.get_current_stream().synchronize()
                return x, None
            solvers["cupy"] = run_cupy
            if torch is not None:
                tA, tb = torch.from_dlpack(dA), torch.from_dlpack(db)

                def run_torch():
                    x = torch.linalg.solve(tA, tb)
                    torch.cuda.synchronize()
                    return cupy.from_dlpack(x), None
                solvers["torch"] = run_torch
        else:
            if one:
                solvers["la"] = lambda: la.solve(A[0], b[0], device="cpu")
                solvers["numpy"] = lambda: (np.linalg.solve(A[0], b[0]), None)
            else:
                solvers["la"] = lambda: la.solve(A, b, device="cpu")
                solvers["numpy"] = lambda: (np.linalg.solve(A, b[..., None])[..., 0], None)
        base = None
        for name, run in solvers.items():
            x, info = run()  # warm-up
            times = []
            for _ in range(a.reps):
                t0 = time.perf_counter()
                x, info = run()
                times.append(time.perf_counter() - t0)
            ms = 1e3 * statistics.median(times)
            xh = (cupy.asnumpy(x) if gpu else np.asarray(x)).reshape(count, n)
            be = worst_backward_error(A64, xh.astype(np.float64), b64)
            ok = be <= tol and (info is None or (np.asarray(info if not gpu or np.isscalar(info) else cupy.asnumpy(info)) == 0).all())
            misses += not ok
            if name == "la":
                base = ms
            print("%-12s %-7s %10.3f %12.2e %9.2fx%s" % (shape, name, ms, be, ms / base if base else 1.0,
                                                         "" if ok else "  MISS"))
            rows.append({"device": device_name, "dtype": a.dtype, "count": count, "n": n, "solver": name, "ms": "%.4f" % ms,
                         "backward_error": "%.3e" % be, "ok": int(ok), "peer_over_la": "%.3f" % (ms / base if base else 1.0)})
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    print("(vs la: the solver's time over la's; above 1, la is faster)")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
