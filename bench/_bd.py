import sys, time, numpy as np, scipy.sparse as sp, cupy, cupyx.scipy.sparse as csp, cupyx.scipy.sparse.linalg as cla
sys.path.insert(0, "bench"); from python_bench import poisson
import la
for n in (100, 256):
    A = poisson(n, 3); b = A @ np.ones(A.shape[0])
    dA = csp.csr_matrix(A); db = cupy.asarray(b); cupy.cuda.Device().synchronize()
    for pre in ("auto", "none", "jacobi", "fsai", "amg"):
        for kind, AA, bb in (("numpy", A, b), ("cupy", dA, db)):
            for rep in range(2):
                t = time.perf_counter(); x, info, r = la.solve(AA, bb, precond=pre, full_output=True); cupy.cuda.Device().synchronize(); t = time.perf_counter() - t
            print(f"n={n}^3 {kind} {pre:6s} wall {t*1e3:8.1f} call {r.call_seconds*1e3:8.1f} setup {r.setup_seconds*1e3:7.1f} psetup {r.precond_setup_seconds*1e3:7.1f} iter {r.iterate_seconds*1e3:7.1f} its {r.iterations} {r.precond} {r.method}", flush=True)
    its = [0]
    def cb(xk): its[0] += 1
    t = time.perf_counter(); x, info = cla.cg(dA, db, rtol=1e-8, maxiter=20*A.shape[0], callback=cb); cupy.cuda.Device().synchronize(); t = time.perf_counter() - t
    t2 = time.perf_counter(); dA2 = csp.csr_matrix(A); db2 = cupy.asarray(b); cupy.cuda.Device().synchronize(); t2 = time.perf_counter() - t2
    print(f"n={n}^3 cupy cg on device data {t*1e3:.1f} ms, {its[0]} its; transfer {t2*1e3:.1f} ms", flush=True)
