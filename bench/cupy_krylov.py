#!/usr/bin/env python3
"""CuPy's GMRES on the systems of krylov_bench, for the ratio in bench/RESULTS.md.

usage: cupy_krylov.py [--systems LIST] [--out FILE.csv]
LIST: comma-separated .mtx files and convdiff2d:N[:PECLET] / convdiff3d:N[:PECLET] specs
(the same matrices as la's gen: specs). For each system: cupyx.scipy.sparse.linalg.gmres,
restart 30, rtol 1e-8, b = A ones, x0 = 0, M none and Jacobi (a LinearOperator scaling by
the inverse diagonal, zero entries taken as 1, as la's). Time to solution: building M (for
Jacobi) and the gmres call, the second of two runs, the matrix already on the GPU (as for
la). Iterations: CuPy calls a 'pr_norm' callback once per restart cycle, so the count is
cycles x 30, an upper bound on the inner iterations; maxiter is CuPy's total of inner iterations,
max(2n, 20000) as la's default. ok: the true residual ||b - Ax|| / ||b|| at most 100x the tolerance."""
import sys
import time

import cupy as cp
import cupyx.scipy.sparse as csp
import cupyx.scipy.sparse.linalg as cla
import numpy as np
import scipy.io
import scipy.sparse as sp


def convdiff(d, n, pe=100.0):
    h = 1.0 / (n + 1)
    c = pe * h
    e = np.ones(n)
    t_up = sp.diags([-(1 + c) * e[1:], -1 * e[1:]], [-1, 1], shape=(n, n))  # upwind below, downwind above
    i = sp.identity(n)
    if d == 2:
        off = sp.kron(i, t_up) + sp.kron(t_up, i)
        diag = (4 + 2 * c) * sp.identity(n * n)
    else:
        off = sp.kron(sp.kron(i, i), t_up) + sp.kron(sp.kron(i, t_up), i) + sp.kron(sp.kron(t_up, i), i)
        diag = (6 + 3 * c) * sp.identity(n ** 3)
    return (diag + off).tocsr()


def load(spec):
    if spec.endswith(".mtx"):
        return sp.csr_matrix(scipy.io.mmread(spec)).astype(np.float64)
    kind, *nums = spec.split(":")
    pe = float(nums[1]) if len(nums) > 1 else 100.0
    return convdiff(2 if kind == "convdiff2d" else 3, int(nums[0]), pe)


def run(a, b, precond):
    count = [0]

    def cb(_):
        count[0] += 1

    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    m = None
    if precond == "jacobi":
        d = a.diagonal()
        inv = cp.where(d != 0, 1.0 / cp.where(d != 0, d, 1.0), 1.0)
        m = cla.LinearOperator(a.shape, matvec=lambda v: inv * v, dtype=cp.float64)
    kw = dict(restart=30, maxiter=max(2 * a.shape[0], 20000), M=m, callback=cb, callback_type="pr_norm")
    try:
        x, info = cla.gmres(a, b, rtol=1e-8, atol=0.0, **kw)
    except TypeError:
        x, info = cla.gmres(a, b, tol=1e-8, atol=0.0, **kw)
    cp.cuda.Device().synchronize()
    return x, info, time.perf_counter() - t0, 30 * count[0]


def main():
    systems = ("convdiff2d:256,convdiff2d:1024,convdiff3d:64,convdiff3d:128,data/adder_dcop_05.mtx,"
               "data/ca-GrQc.mtx,bench/data-large/fidapex6.mtx,bench/data-large/arrow.mtx")
    out = None
    args = sys.argv[1:]
    while args:
        o = args.pop(0)
        if o == "--systems":
            systems = args.pop(0)
        elif o == "--out":
            out = args.pop(0)
        else:
            sys.exit("unknown option " + o)
    rows = ["system,rows,nnz,impl,method,precond,tts_ms,iterations,us_per_it,true_residual,ok"]
    print("%-22s %-7s %10s %7s %9s %9s" % ("system", "precond", "tts_ms", "its", "us/it", "true_res"))
    for spec in systems.split(","):
        h = load(spec)
        a = csp.csr_matrix(h)
        b = a @ cp.ones(a.shape[0])
        name = spec.split("/")[-1]
        for pc in ("none", "jacobi"):
            run(a, b, pc)  # warm-up
            x, info, secs, its = run(a, b, pc)
            res = float(cp.linalg.norm(b - a @ x) / cp.linalg.norm(b))
            ok = int(res <= 1e-6 and np.isfinite(res))
            print("%-22s %-7s %10.3f %7d %9.2f %9.2e %s" % (name, pc, 1e3 * secs, its, 1e6 * secs / max(its, 1), res,
                                                             "ok" if ok else "FAIL(info %d)" % info))
            rows.append("%s,%d,%d,cupy,gmres,%s,%.4f,%d,%.3f,%.3e,%d" % (name, a.shape[0], a.nnz, pc, 1e3 * secs, its,
                                                                        1e6 * secs / max(its, 1), res, ok))
    if out:
        with open(out, "w") as f:
            f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
