#!/usr/bin/env python3
"""la from Python against the C++ call, scipy and CuPy, in one run (GPU machine).

usage: PYTHONPATH=build-gpu/python python3 bench/python_bench.py [--out FILE.csv] [--big N]
                                                                 [--skip-overhead] [--skip-read]
                                                                 [--systems NAME,NAME...]

- overhead: la.solve's wall time against the C++ call inside it (SolveResult.call_seconds:
  la's copies, setup and solve, timed in the extension) on 2D Poisson with 1K, 1M and 16M rows,
  numpy and CuPy input (per call, the median of 200 calls at 1K rows and of 5 above, after a
  warm-up);
- reading: la.read_matrix_market against scipy.io.mmread (to CSR) on a generated general
  2D Poisson file with about --big million entries (default 50);
- la.solve against CuPy's cg and gmres (cupyx.scipy.sparse.linalg, Jacobi-free, the same
  rtol 1e-8 and b) and scipy's spsolve: time to solution with setup, on 2D/3D Poisson at 1M
  and 16M rows and the SPD systems of data/ (CuPy gmres and spsolve up to 1M rows; spsolve
  not on 3D Poisson, whose fill SuperLU takes minutes on); --systems keeps the named ones.
Every solution is checked (||b - A x|| / ||b|| <= 1e-6) before its time is printed.
"""
import csv
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import la

out_rows = []


def poisson(n, d):
    t = sp.diags([-1, 2, -1], [-1, 0, 1], shape=(n, n), format="csr")
    i = sp.identity(n, format="csr")
    if d == 2:
        return (sp.kron(i, t) + sp.kron(t, i)).tocsr()
    return (sp.kron(sp.kron(i, i), t) + sp.kron(sp.kron(i, t), i) + sp.kron(sp.kron(t, i), i)).tocsr()


def timed(f, reps=5):
    f()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        r = f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), r


def check(A, x, b, what):
    x = x.get() if hasattr(x, "get") else x
    res = np.linalg.norm(b - A @ x) / np.linalg.norm(b)
    if not res <= 1e-6:
        raise SystemExit("%s: residual %.2e" % (what, res))


def row(**kw):
    out_rows.append(kw)
    print(", ".join("%s=%s" % (k, ("%.4g" % v) if isinstance(v, float) else v) for k, v in kw.items()), flush=True)


def overhead(cupy, csp):
    """Per call: the wall time less the C++ call's own (call_seconds, timed in the extension);
    the median and the least of 200 calls at 1K rows, of 5 above (after a warm-up)."""
    for n in (32, 1000, 4000):
        A = poisson(n, 2)
        b = A @ np.ones(A.shape[0])
        kinds = [("numpy", A, b)]
        if cupy is not None:
            kinds.append(("cupy", csp.csr_matrix(A), cupy.asarray(b)))
        reps = 200 if n <= 32 else 5
        for kind, M, v in kinds:
            la.solve(M, v, precond="jacobi")
            walls, outside = [], []
            for _ in range(reps):
                t0 = time.perf_counter()
                x, info, r = la.solve(M, v, precond="jacobi", full_output=True)
                t = time.perf_counter() - t0
                walls.append(t)
                outside.append(t - r.call_seconds)
            check(A, x, b, "overhead")
            wall, py = statistics.median(walls), statistics.median(outside)
            row(bench="overhead", system="poisson2d:%d" % n, rows=A.shape[0], input=kind, wall_ms=1e3 * wall,
                cpp_ms=1e3 * (wall - py), python_us=1e6 * py, python_us_least=1e6 * min(outside),
                python_share=py / wall, iterations=r.iterations, calls=reps)


def reading(big):
    n = int((big * 1e6 / 5) ** 0.5)
    A = poisson(n, 2)
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "big.mtx")
        la.write_matrix_market(p, A)
        t0 = time.perf_counter()
        B = la.read_matrix_market(p)
        t_la = time.perf_counter() - t0
        t0 = time.perf_counter()
        C = sp.csr_matrix(scipy.io.mmread(p))
        t_sc = time.perf_counter() - t0
        assert abs(B - C).max() == 0
    row(bench="read", system="poisson2d:%d" % n, entries=A.nnz, la_s=t_la, scipy_s=t_sc, speedup=t_sc / t_la,
        scipy=scipy.__version__)


def solves(cupy, csp, data):
    systems = [(f, lambda f=f: la.read_matrix_market(os.path.join(data, f)))
               for f in ("bcsstk09.mtx", "gr_30_30.mtx", "1138_bus.mtx", "bcsstk21.mtx", "Trefethen_2000.mtx")]
    systems += [("poisson2d:1000", lambda: poisson(1000, 2)), ("poisson3d:100", lambda: poisson(100, 3)),
                ("poisson2d:4000", lambda: poisson(4000, 2)), ("poisson3d:256", lambda: poisson(256, 3))]
    if "--systems" in sys.argv:
        keep = sys.argv[sys.argv.index("--systems") + 1].split(",")
        systems = [s for s in systems if s[0] in keep or s[0].replace(".mtx", "") in keep]
    for name, make in systems:
        A = make()
        reps = 3 if A.shape[0] <= 1100000 else 1
        b = A @ np.ones(A.shape[0])
        t_la, (x, info, r) = timed(lambda: la.solve(A, b, full_output=True), reps=reps)
        check(A, x, b, name + " la")
        # Where la's time goes: the C++ call (upload, setup, iterations, download), of which
        # the setup (preconditioner included) and the iterations.
        rec = dict(bench="solve", system=name, rows=A.shape[0], la_ms=1e3 * t_la, la_its=r.iterations,
                   la_precond=r.precond, la_call_ms=1e3 * r.call_seconds, la_setup_ms=1e3 * r.setup_seconds,
                   la_iterate_ms=1e3 * r.iterate_seconds)
        if cupy is not None:
            import cupyx.scipy.sparse.linalg as cla

            def cg():
                dA, db = csp.csr_matrix(A), cupy.asarray(b)
                x, info = cla.cg(dA, db, rtol=1e-8, maxiter=20 * A.shape[0])
                cupy.cuda.get_current_stream().synchronize()
                return x
            t_cg, xc = timed(cg, reps=reps)
            check(A, xc, b, name + " cupy cg")

            def upload():
                dA, db = csp.csr_matrix(A), cupy.asarray(b)
                cupy.cuda.get_current_stream().synchronize()
            t_up, _ = timed(upload, reps=reps)  # CuPy's share of its time spent moving A and b up
            rec.update(cupy_cg_ms=1e3 * t_cg, la_x_cupy_cg=t_cg / t_la, cupy_upload_ms=1e3 * t_up)
            if A.shape[0] <= 1100000:
                def gm():
                    dA, db = csp.csr_matrix(A), cupy.asarray(b)
                    x, info = cla.gmres(dA, db, rtol=1e-8, restart=30, maxiter=20 * A.shape[0])
                    cupy.cuda.get_current_stream().synchronize()
                    return x
                t_gm, xg = timed(gm, reps=1)
                try:
                    check(A, xg, b, name + " cupy gmres")
                    rec.update(cupy_gmres_ms=1e3 * t_gm, la_x_cupy_gmres=t_gm / t_la)
                except SystemExit as e:
                    rec.update(cupy_gmres="not converged (%s)" % e)
        if A.shape[0] <= 1100000 and not name.startswith("poisson3d"):
            t_sp, xs = timed(lambda: spla.spsolve(A.tocsc(), b), reps=1)
            rec.update(spsolve_ms=1e3 * t_sp, la_x_spsolve=t_sp / t_la)
        row(**rec)


def main():
    out = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else None
    big = float(sys.argv[sys.argv.index("--big") + 1]) if "--big" in sys.argv else 50
    data = os.environ.get("LA_DATA_DIR", os.path.join(os.path.dirname(__file__), "..", "data"))
    print("device:", la.cuda_status(), "| numpy", np.__version__, "| scipy", scipy.__version__, flush=True)
    try:
        import cupy
        import cupyx.scipy.sparse as csp
        print("cupy", cupy.__version__, flush=True)
    except ImportError:
        cupy = csp = None
    if "--skip-overhead" not in sys.argv:
        overhead(cupy, csp)
    if "--skip-read" not in sys.argv:
        reading(big)
    solves(cupy, csp, data)
    if out:
        keys = []
        for r in out_rows:
            keys += [k for k in r if k not in keys]
        with open(out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            w.writerows(out_rows)


if __name__ == "__main__":
    main()
