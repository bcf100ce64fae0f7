"""la: sparse linear solvers on the GPU, from Python.

scipy.sparse and numpy on the host, cupyx.scipy.sparse and CuPy on the GPU, with scipy's
conventions::

    import la, scipy.sparse as sp, numpy as np
    A = la.read_matrix_market("data/bcsstk09.mtx")       # scipy CSR, read by la's parallel reader
    b = A @ np.ones(A.shape[0])
    x, info = la.solve(A, b)                             # info == 0: converged
    x, info, r = la.solve(A, b, precond="amg", full_output=True)
    print(r.iterations, r.true_residual, r.method, r.precond)

    solver = la.Solver(A, precond="amg")                 # the setup once (GPU or CPU)
    for b in many_right_hand_sides:
        x, info = solver.solve(b)

CuPy input (a cupyx.scipy.sparse.csr_matrix and a CuPy array) is solved in place on its GPU:
A and b are not copied, and x comes back as a CuPy array. The options and their names are the
command line's (`la solve --help`): method, precond, rtol (--tol), atol, maxiter (--maxit),
restart, force, and the preconditioner's own (fsai_pattern, ic_shift, amg_strength, ...).
"""
from __future__ import annotations

import numpy as _np

from . import _la

__version__ = "0.2.0"
__all__ = ["solve", "Solver", "SolveResult", "BatchResult", "read_matrix_market", "write_matrix_market", "info", "spmv",
           "cuda_available", "cuda_status", "copies", "Error", "InvalidArgument", "FileError", "DeviceError",
           "NoGpuError", "NotSupported"]


from ._errors import DeviceError, Error, FileError, InvalidArgument, NoGpuError, NotSupported
from ._matrix import _Matrix, _complex_dtype, _cupy, _is_cupy_array, _is_cupy_sparse, _value_dtype



# keyword -> la solve's option, from the registry (la/solvers/registry.hpp): the CLI's names,
# '_' for '-', scipy's rtol and maxiter for --tol and --maxit.
_OPTIONS = _la.solve_options()  # (name, keyword, type, default, choices, help)
_OPTION_NAMES = {kw: "--" + name for name, kw, _t, _d, _c, _h in _OPTIONS}
_DECLARED = {kw: name for name, kw, _t, _d, _c, _h in _OPTIONS}

_python_copies = 0  # device copies the Python layer makes (x0 of CuPy input)
_checked = set()  # sets of options la has accepted


# la's messages name options as {name} (la/solvers/registry.hpp); Python shows its keywords:
# {tol} -> rtol, {matching} on -> matching='on', {force} -> force=True.
_python_words = _la.python_words


def _translate(e):
    text = _python_words(str(e))
    if isinstance(e, _la.InvalidArgument):
        return InvalidArgument(text)
    if isinstance(e, _la.IOError):
        return FileError(text)
    if isinstance(e, _la.DeviceError):
        return DeviceError(text)
    if isinstance(e, _la.NotSupported):
        return NotSupported(text)
    return Error(text)


def _call(f, *args):
    try:
        return f(*args)
    except (_la.Error, _la.InvalidArgument, _la.IOError) as e:
        raise _translate(e) from None


def cuda_available():
    """True when a CUDA device and a driver new enough for this build are present."""
    return _la.cuda_available()


def cuda_status():
    """The GPU's name, or one line saying why there is none."""
    return _la.cuda_status()


def copies():
    """Arrays copied between host and device, or on the device, by la's Python calls so far.

    CuPy input leaves it unchanged (A and b used in place, x allocated, not copied) unless x0
    is given (copied once: x0 itself is left as it was, as scipy does) or info() is asked of a
    CuPy matrix (copied to the host)."""
    return _la.copies() + _python_copies


def _words(rtol, atol, maxiter, method, precond, options):
    """The options as (declared name, value) pairs for la::read_solve_options."""
    w = [("tol", repr(float(rtol))), ("atol", repr(float(atol))), ("method", str(method)), ("precond", str(precond))]
    if maxiter is not None:
        if isinstance(maxiter, (bool, _np.bool_)) or not (isinstance(maxiter, (int, _np.integer)) or (
                isinstance(maxiter, (float, _np.floating)) and float(maxiter).is_integer())):
            raise InvalidArgument("maxiter must be a whole number of iterations, got %r" % (maxiter,))
        w.append(("maxit", str(int(maxiter))))
    for k, v in options.items():
        if k == "force":
            if not isinstance(v, (bool, _np.bool_)):
                raise InvalidArgument("force must be True or False, got %r" % (v,))
            if v:
                w.append(("force", ""))
            continue
        if k == "condition" and isinstance(v, (bool, _np.bool_)):  # as the dense path takes it
            v = "yes" if v else "no"
        if k not in _OPTION_NAMES or k in ("rtol", "atol", "maxiter", "method", "precond"):
            raise TypeError("unexpected keyword argument '%s' (la's options: %s)" % (k, ", ".join(sorted(_OPTION_NAMES))))
        w.append((_DECLARED[k], str(v)))
    key = tuple(w)
    if key not in _checked:  # read once per set of options: a repeated call skips it
        try:
            _la.check_options(w)
        except (_la.Error, _la.InvalidArgument) as e:  # a value la refuses: bad input
            raise InvalidArgument(_python_words(str(e))) from None
        if len(_checked) < 256:
            _checked.add(key)
    return w


def _near_null(options, precond, n):
    """near_null_space= (n x k) and coordinates= (nodes x d) popped from the options, as the
    (B column-major, coordinates node-major, d) the extension takes; la checks them against A."""
    b = options.pop("near_null_space", None)
    c = options.pop("coordinates", None)
    if b is None and c is None:
        return None, None, 0
    if precond != "amg":
        raise InvalidArgument("near_null_space and coordinates apply to precond='amg' (the near-null space of its coarse "
                              "levels), got precond=%r" % (precond,))
    if b is not None:
        b = _np.asarray(b.get() if hasattr(b, "get") else b, dtype=_np.float64)
        if b.ndim == 1:
            b = b.reshape(-1, 1)
        if b.ndim != 2 or b.shape[0] != n or not 1 <= b.shape[1] <= 32:
            raise InvalidArgument("near_null_space has shape %s; it must be (n, k) with n = %d (A's rows) and k from 1 "
                                  "to 32" % (tuple(b.shape), n))
        b = _np.ascontiguousarray(b.T).ravel()
    d = 0
    if c is not None:
        c = _np.asarray(c.get() if hasattr(c, "get") else c, dtype=_np.float64)
        if c.ndim != 2 or c.shape[1] not in (2, 3) or c.shape[0] * c.shape[1] != n:
            raise InvalidArgument("coordinates has shape %s; it must be (nodes, d) with d = 2 or 3 and nodes * d = %d "
                                  "(A's rows: nodes of d unknowns, node-major)" % (tuple(c.shape), n))
        d = int(c.shape[1])
        c = _np.ascontiguousarray(c).ravel()
    return b, c, d


def _use_gpu(device, m):
    if device not in ("auto", "gpu", "cpu"):
        raise InvalidArgument("device must be 'auto', 'gpu' or 'cpu', got %r" % (device,))
    if m.on_device:
        if device == "cpu":
            raise InvalidArgument("device='cpu' takes scipy/numpy input; this matrix is a CuPy matrix on the GPU "
                                  "(A.get() copies it to the host)")
        return True
    if device == "gpu" and not _la.cuda_available():
        raise NoGpuError("device='gpu': " + _la.cuda_status() + "; use device='cpu' or 'auto'")
    if device == "auto" and _la.cuda_available():
        host, _why = _la.choose_device(m.shape[0], int(m.a.nnz))  # la solve's rule: small systems on the host
        return not host
    return device == "gpu"


class SolveResult:
    """What a solve did: status, iterations, the recurrence and true residuals, the method and
    preconditioner built (with why), and the times (seconds)."""

    __slots__ = ("status", "converged", "iterations", "residual", "true_residual", "message", "method", "where",
                 "method_choice", "precond", "precond_detail", "precond_setup_seconds", "precond_bytes",
                 "analysis_seconds", "setup_seconds", "iterate_seconds", "history", "device", "call_seconds")

    def __init__(self, d, device):
        self.call_seconds = 0.0  # la.solve: the C++ call's own time (copies, setup, solve)
        for k, v in d.items():
            setattr(self, k, v)
        self.device = device

    def __repr__(self):
        return ("SolveResult(status=%r, iterations=%d, true_residual=%.3e, method=%r, precond=%r, device=%r, "
                "setup=%.3f ms, iterating=%.3f ms)" % (self.status, self.iterations, self.true_residual, self.method,
                                                       self.precond, self.device, 1e3 * self.setup_seconds,
                                                       1e3 * self.iterate_seconds))


def _info_code(r):
    """scipy's info: 0 converged, the iterations where it stopped short, -1 a breakdown."""
    if r.status == "invalid_input":
        raise InvalidArgument(_python_words(r.message))
    if r.converged:
        return 0
    if r.status in ("breakdown", "non_finite"):
        return -1
    return max(1, int(r.iterations))


def _vectors(m, b, x0, gpu):
    """b and x in A's kind and type: CuPy arrays (b used in place) or numpy arrays (b converted only
    where its type or layout differs; x a new array the solution is written into)."""
    global _python_copies
    n = m.shape[0]
    if m.on_device:
        cupy, _ = _cupy()
        if not _is_cupy_array(b):
            raise InvalidArgument("A is a CuPy matrix, so b must be a CuPy array on the same GPU")
        if b.dtype != m.dtype:
            raise InvalidArgument("b is %s but A is %s" % (b.dtype, m.dtype))
        b = _one_column(b, n, "b")
        if not b.flags.c_contiguous:
            raise InvalidArgument("b must be contiguous")
        if x0 is None:
            x = cupy.zeros(n, dtype=m.dtype)
        else:
            x = _one_column(cupy.array(x0, dtype=m.dtype, copy=True), n, "x0")
            _python_copies += 1
    else:
        if _is_cupy_array(b):
            raise InvalidArgument("A is a host matrix (scipy), so b must be a numpy array; for the GPU in place "
                                  "pass a cupyx.scipy.sparse.csr_matrix")
        b = _np.asarray(b)
        _real(b, "b")
        b = _np.ascontiguousarray(_one_column(_np.asarray(b, dtype=m.dtype), n, "b"))
        if x0 is None:
            x = _np.zeros(n, dtype=m.dtype)
        else:
            x0 = _np.asarray(x0)
            _real(x0, "x0")
            x = _one_column(_np.array(x0, dtype=m.dtype, copy=True), n, "x0")
    if b.shape[0] != n or x.shape[0] != n:
        raise InvalidArgument("A is %d x %d but b has %d entries and x0 %d" % (m.shape[0], m.shape[1], b.shape[0],
                                                                            x.shape[0]))
    return b, x


def _real(v, name):
    if _np.iscomplexobj(v):
        raise InvalidArgument("%s is complex (%s) but A and b are real: pass a complex A or b to solve a complex "
                              "system (la.solve), or solve the real and imaginary parts separately" % (name, v.dtype))
    if v.dtype.kind not in "fiub":
        raise InvalidArgument("%s must hold numbers, got dtype %s" % (name, v.dtype))


def _one_column(v, n, name):
    """v as a vector of n entries: shape (n,) or (n, 1), as scipy takes; anything else is refused
    (flattening an (n/2, 2) array would solve a reordered right-hand side)."""
    if v.ndim == 1 or (v.ndim == 2 and v.shape[1] == 1 and v.shape[0] == n):
        return v.ravel()
    raise InvalidArgument("%s has shape %s; A is %d x %d, so %s must have shape (%d,) or (%d, 1)"
                          % (name, tuple(v.shape), n, n, name, n, n))


def _pointers(b, x):
    return (b.data.ptr, x.data.ptr) if _is_cupy_array(x) else (b, x)


def _wait_for_cupy(m):
    """CuPy's queued work on A and b done: la runs on its own stream."""
    if m.on_device:
        cupy, _ = _cupy()
        cupy.cuda.get_current_stream().synchronize()


def _result_of(d, gpu):
    """A SolveResult from the extension's report, its texts in Python's words."""
    for k in ("message", "method_choice", "precond_detail"):
        if isinstance(d.get(k), str):
            d[k] = _python_words(d[k])
    return SolveResult(d, "gpu" if gpu else "cpu")


def _returned(d, gpu, x, full_output):
    """(x, info) or (x, info, SolveResult) from the extension's report."""
    r = _result_of(d, gpu)
    info_ = _info_code(r)
    return (x, info_, r) if full_output else (x, info_)


_DENSE_OPTIONS = ("direct_factorization", "direct_precision", "direct_refinement", "condition")


def _safe_norm(v):
    """||v||_2 without overflow or underflow (numpy's norm squares: 1e160 entries overflow)."""
    v = _np.asarray(v, dtype=_np.float64).ravel()
    m = float(_np.max(_np.abs(v))) if v.size else 0.0
    return m * float(_np.linalg.norm(v / m)) if m > 0 and _np.isfinite(m) else m


def _is_dense(A):
    """A dense 2-D numpy or CuPy array (not a sparse matrix)."""
    if _is_cupy_array(A) and not _is_cupy_sparse(A):
        return getattr(A, "ndim", 0) == 2
    return isinstance(A, _np.ndarray) and A.ndim == 2


def _factorization(options):
    """The direct_factorization keyword, checked."""
    fact = options.get("direct_factorization", "auto")
    if fact not in ("auto", "lu", "cholesky"):
        raise InvalidArgument("direct_factorization must be 'auto', 'lu' or 'cholesky', got %r" % (fact,))
    return fact


def _cupy_system(A, b, dtype, device):
    """CuPy, and A contiguous of dtype on its GPU; b must be a CuPy array and device not 'cpu'."""
    cupy, _ = _cupy()
    if device == "cpu":
        raise InvalidArgument("device='cpu' takes numpy input; A is a CuPy array (A.get() copies it to the host)")
    if not _is_cupy_array(b):
        raise InvalidArgument("A is a CuPy array, so b must be a CuPy array on the same GPU")
    return cupy, cupy.ascontiguousarray(A, dtype=dtype)


def _numpy_system(A, b, dtype):
    """A (contiguous, of dtype) and b as numpy arrays, both real; a CuPy b is refused."""
    if _is_cupy_array(b):
        raise InvalidArgument("A is a numpy array, so b must be a numpy array")
    a = _np.ascontiguousarray(A, dtype=dtype)
    _real(a, "A")
    b = _np.asarray(b)
    _real(b, "b")
    return a, b


def _is_batch(A):
    """A batch of dense systems: a 3-D numpy or CuPy array (batch, n, n)."""
    if _is_cupy_array(A) and not _is_cupy_sparse(A):
        return getattr(A, "ndim", 0) == 3
    return isinstance(A, _np.ndarray) and A.ndim == 3


class BatchResult:
    """What la.solve did for a batch (full_output=True): per system the backward error and
    whether Cholesky factored it, the times, and where it ran."""

    def __init__(self, d, where, info):
        self.backward_error = _np.asarray(d["backward_error"], dtype=_np.float64)
        self.cholesky = _np.asarray(d["cholesky"], dtype=bool)
        self.factor_seconds, self.solve_seconds = float(d["factor_seconds"]), float(d["solve_seconds"])
        self.device = where
        self.solved = int((info == 0).sum())
        bad = _np.flatnonzero(info != 0)
        self.message = ("%d of %d systems solved on the %s%s" % (self.solved, len(info), where.upper(),
                        "" if not len(bad) else "; system %d: %s" % (bad[0], _batch_status(int(info[bad[0]])))))

    def __repr__(self):
        return "BatchResult(%s)" % self.message


def _batch_status(v):
    if v == -1:
        return "a NaN or infinity in A, b or x"
    if v == -2:
        return "x misses the backward-error check (A singular to working precision)"
    return "no usable pivot in column %d (singular, or not positive definite with direct_factorization='cholesky')" % v


def _batched_solve(A, b, x0, rtol, atol, maxiter, method, precond, device, callback, full_output, history, options):
    """la.solve on a batch: A (batch, n, n), b (batch, n) or (batch, n, k)."""
    import time
    if method not in ("auto", "direct"):
        raise InvalidArgument("a batch (A of shape %s) is solved by the direct method: method must be 'auto' or "
                              "'direct', got %r" % (tuple(A.shape), method))
    refused = [name for name, v in (("x0", x0), ("maxiter", maxiter), ("callback", callback)) if v is not None]
    refused += [name for name, v, default in (("rtol", rtol, 1e-8), ("atol", atol, 0.0), ("precond", precond, "auto"),
                                              ("history", history, False))
                if not (isinstance(v, (str, bool, int, float)) and v == default)]
    unknown = [k for k in options if k != "direct_factorization"]
    if refused or unknown:
        raise InvalidArgument("%s do%s not apply to a batch (each system is factored and its backward error checked); "
                              "its only option is direct_factorization" % (", ".join(refused + unknown),
                                                                          "es" if len(refused + unknown) == 1 else ""))
    fact = _factorization(options)
    if device not in ("auto", "gpu", "cpu"):
        raise InvalidArgument("device must be 'auto', 'gpu' or 'cpu', got %r" % (device,))
    count, n, n2 = A.shape
    if n != n2:
        raise InvalidArgument("A has shape %s: a batch needs square matrices (batch, n, n)" % (tuple(A.shape),))
    if _np.ndim(b) not in (2, 3) or b.shape[0] != count or b.shape[1] != n:
        raise InvalidArgument("A has shape %s, so b must have shape (%d, %d) or (%d, %d, k); got %s"
                              % (tuple(A.shape), count, n, count, n, tuple(_np.shape(b))))
    dtype = _value_dtype(A.dtype)
    t0 = time.perf_counter()
    if _is_cupy_array(A):
        cupy, a = _cupy_system(A, b, dtype, device)
        x = cupy.array(b.reshape(count, n, -1), dtype=dtype, copy=True, order="C")
        cupy.cuda.get_current_stream().synchronize()
        d = _call(_la.batched_solve_gpu, a.data.ptr, x.data.ptr, count, n, x.shape[2],
                  "f" if dtype == _np.float32 else "d", a.data.device.id, fact)
        where = "gpu"
    else:
        a, b = _numpy_system(A, b, dtype)
        x = _np.array(b.reshape(count, n, -1), dtype=dtype, copy=True, order="C")
        if device == "gpu" and not _la.cuda_available():
            raise NoGpuError("device='gpu': " + _la.cuda_status() + "; use device='cpu' or 'auto'")
        gpu = device == "gpu" or (device == "auto" and _la.cuda_available() and count * n * n >= 65536)
        d = _call(_la.batched_solve_numpy, a, x, gpu, fact)
        where = "gpu" if gpu else "cpu"
    info = _np.asarray(d["info"], dtype=_np.int64)
    x = x.reshape(b.shape)
    if not full_output:
        return x, info
    r = BatchResult(d, where, info)
    r.call_seconds = time.perf_counter() - t0
    return x, info, r


def _dense_solve(A, b, rtol, atol, device, full_output, options, method):
    """la.solve's dense direct path: la::dense_solver on the GPU (numpy arrays copied there, CuPy
    arrays used in place), the host oracle with device='cpu'. b: (n,) or (n, k)."""
    import time
    unknown = [k for k in options if k not in _DENSE_OPTIONS]
    if unknown:
        raise TypeError("unexpected keyword argument '%s' for a dense A (the direct method's options: %s)"
                        % (unknown[0], ", ".join(_DENSE_OPTIONS)))
    fact = _factorization(options)
    prec = options.get("direct_precision", "fp64")
    if prec not in ("fp64", "auto", "tf32x3", "tf32", "fp32", "bf16", "fp16"):
        raise InvalidArgument("direct_precision must be 'fp64', 'auto', 'tf32x3', 'tf32', 'fp32', 'bf16' or 'fp16', got %r"
                              % (prec,))
    refine = options.get("direct_refinement", "auto")
    if refine not in ("auto", "classical", "gmres"):
        raise InvalidArgument("direct_refinement must be 'auto', 'classical' or 'gmres', got %r" % (refine,))
    cond = options.get("condition", True)
    if not isinstance(cond, (bool, _np.bool_)):
        raise InvalidArgument("condition must be True or False, got %r" % (cond,))
    cond = bool(cond)
    for name, v in (("rtol", rtol), ("atol", atol)):
        if not isinstance(v, (int, float, _np.floating, _np.integer)) or not (0 <= float(v) < float("inf")):
            raise InvalidArgument("%s must be a finite number >= 0, got %r" % (name, v))
    if _np.ndim(b) == 0:
        raise InvalidArgument("b must be a vector of shape (n,) or an array (n, k); got a scalar")
    if device not in ("auto", "gpu", "cpu"):
        raise InvalidArgument("device must be 'auto', 'gpu' or 'cpu', got %r" % (device,))
    n = A.shape[0]
    if A.shape[0] != A.shape[1]:
        raise InvalidArgument("A is %d x %d; the direct method needs a square matrix" % A.shape)
    on_gpu_input = _is_cupy_array(A)
    dtype = _value_dtype(A.dtype)
    t0 = time.perf_counter()
    if on_gpu_input:
        cupy, a = _cupy_system(A, b, dtype, device)
        if b.shape[0] != n or b.ndim not in (1, 2):
            raise InvalidArgument("A is %d x %d but b has shape %s" % (n, n, tuple(b.shape)))
        x = cupy.array(b, dtype=dtype, copy=True, order="C")
        cupy.cuda.get_current_stream().synchronize()
        d = _call(_la.dense_solve_gpu, a.data.ptr, n, n, x.data.ptr, 1 if x.ndim == 1 else x.shape[1],
                  "f" if dtype == _np.float32 else "d", a.data.device.id, fact,
                  "working" if prec == "fp64" else prec, refine, cond)
        gpu = True
    else:
        a, b = _numpy_system(A, b, dtype)
        if b.shape[0] != n or b.ndim not in (1, 2):
            raise InvalidArgument("A is %d x %d but b has shape %s" % (n, n, tuple(b.shape)))
        x = _np.array(b, dtype=dtype, copy=True, order="C")
        if not (_np.isfinite(a).all() and _np.isfinite(x).all()):
            raise InvalidArgument("A or b holds NaN or infinite values")
        gpu = device == "gpu" or (device == "auto" and _la.cuda_available() and n >= 200)
        if device == "gpu" and not _la.cuda_available():
            raise NoGpuError("device='gpu': " + _la.cuda_status() + "; use device='cpu' or 'auto'")
        if gpu:
            d = _call(_la.dense_solve_gpu_from_host, a, x, fact, "working" if prec == "fp64" else prec, refine, cond)
        else:
            if prec not in ("fp64", "auto"):
                raise InvalidArgument("direct_precision=%r runs on the GPU; on the CPU the factors are in A's precision"
                                      % (prec,))
            d = _call(_la.dense_solve_host, a, x, fact, cond)
    bnorm = _safe_norm(b.get() if on_gpu_input else b) if atol > 0 else 1.0
    r = SolveResult({}, "gpu" if gpu else "cpu")
    r.call_seconds = time.perf_counter() - t0
    r.method, r.where, r.precond, r.precond_detail, r.history = "direct", d["description"], "none", "", []
    r.method_choice = "asked for" if method == "direct" else "a dense A: the direct method"
    r.precond_setup_seconds, r.precond_bytes, r.analysis_seconds = 0.0, 0, 0.0
    r.setup_seconds, r.iterate_seconds = d["factor_seconds"], d["solve_seconds"]
    r.iterations = int(d["refinement_steps"])
    if d["singular_column"]:
        r.status, r.converged = "breakdown", False
        r.residual = r.true_residual = float("nan")
        if d["cholesky"]:
            r.message = ("A is not positive definite: Cholesky finds no positive pivot in column %d "
                         "(direct_factorization='lu' or 'auto' factors it by LU)" % d["singular_column"])
        else:
            r.message = ("A is singular: LU with partial pivoting finds no nonzero pivot in column %d"
                         % d["singular_column"])
        return (x, -1, r) if full_output else (x, -1)
    r.residual = r.true_residual = float(d["relative_residual"])
    target = max(rtol, atol / bnorm if bnorm > 0 else 0.0)
    xp = _cupy()[0] if on_gpu_input else _np
    finite = not d.get("non_finite", False) and bool(xp.isfinite(x).all()) and r.true_residual == r.true_residual
    r.converged = finite and r.true_residual <= target
    r.status = "converged" if r.converged else ("non_finite" if not finite else "precision_limit")
    r.message = ("%s: relative residual %.2e, backward error %.2e, %d refinement step%s%s%s%s"
                 % (d["description"], r.true_residual, d["backward_error"], r.iterations,
                    "" if r.iterations == 1 else "s",
                    " (GMRES-based, %d GMRES iterations)" % d["gmres_iterations"] if d.get("gmres_iterations") else "",
                    ", condition estimate %.2e" % d["condition"] if d["condition"] == d["condition"] else "",
                    "; mixed precision stalled, refactored in fp64" if d["refactored"] else ""))
    if not finite:
        r.message = "x = A^-1 b does not fit in the working precision (a non-finite entry); scale b (or A) towards 1; " \
            + r.message
    info_ = 0 if r.converged else (-1 if not finite else 1)
    return (x, info_, r) if full_output else (x, info_)


def solve(A, b, x0=None, *, rtol=1e-8, atol=0.0, maxiter=None, method="auto", precond="auto", device="auto",
          callback=None, full_output=False, history=False, **options):
    """Solves A x = b; returns (x, info), or (x, info, SolveResult) with full_output=True.

    A: a scipy.sparse matrix or array (CSR, CSC, COO, ...: converted to CSR once), a
    cupyx.scipy.sparse.csr_matrix (used in place on its GPU), or a dense 2-D numpy or CuPy
    array: with method auto or direct a dense A is factored (LU with partial pivoting, or
    Cholesky where A is symmetric with a positive diagonal) on the GPU (la::dense_solver; CuPy
    arrays in place) or, with device='cpu' or below 200 rows, on the CPU; b may then have
    several columns (n, k). Its options: direct_factorization ('auto', 'lu', 'cholesky'),
    direct_precision ('fp64'; 'auto': the plan picks, fp64 below n = 32768 and 3xTF32 factors from there,
    its refinement from a condition estimate, and says what it chose; or 'tf32x3', 'tf32', 'fp32', 'bf16',
    'fp16': float factors refined to fp64, falling back to fp64 where refinement stalls), direct_refinement ('auto': classical, then
    GMRES-based where classical stalls; 'classical'; 'gmres'), condition (True: the 1-norm condition
    estimate in the message). info is 0 when the relative residual meets rtol, -1 singular. b: numpy (or CuPy for
    CuPy A); x comes back in the same kind. info: 0 converged; > 0 the iterations where it
    stopped without converging; -1 a breakdown or non-finite values (scipy's convention).
    rtol, atol, maxiter: stop when ||b - Ax|| <= max(rtol ||b||, atol), or after maxiter
    iterations (None: 2n for cg, max(2n, 20000) for the others). method: auto (CG for symmetric positive-diagonal values, else BiCGSTAB), cg, bicgstab,
    gmres, fgmres, direct (A's dense form factored: LU or Cholesky, on the GPU or the CPU). precond: auto, none, jacobi, block-jacobi, fsai, ic0, ilu0, amg, inner (an
    inner solve by inner_method, gmres by default, for fgmres).
    device: auto (the GPU when there is one), gpu, cpu. callback(iteration, residual) is called
    between chunks of iterations (not every iteration: the GPU runs chunks without the host);
    Ctrl-C stops the solve there with KeyboardInterrupt. history=True keeps every residual in
    the result. Further options as `la solve`'s, '_' for '-': restart, auto_direct_rows, auto_direct_flops, force, fsai_pattern,
    fsai_drop, fsai_max_row, ic_shift, block_size, factorization, sweeps, trisolve, matching,
    amg_strength, amg_degree, amg_coarse, amg_levels, amg_cycle, amg_smoother, amg_block_size,
    amg_near_null_space ('auto' or 'none'), inner_iterations, inner_precond; for precond='amg' on a
    system of PDEs, near_null_space= (an (n, k) array: the near-null vectors, k at most 32) or
    coordinates= (a (nodes, d) array, d = 2 or 3, nodes of d unknowns node-major: the rigid-body
    modes, 3 in 2D and 6 in 3D); the direct method's (method='direct' or auto): ordering ('auto', 'amd', 'metis',
    'natural'), refinement ('auto', 'classical', 'gmres'), max_refinement, host_factorization ('auto': SuiteSparse's
    CHOLMOD or UMFPACK where built; 'la': la's own fronts; 'suitesparse'), condition ('auto', 'yes', 'no' or a bool:
    the condition estimate).

    Complex systems: where A or b holds complex values (complex64 or complex128; a real A with a
    complex b is taken as complex), A is solved in complex CSR (scipy, numpy or a
    cupyx.scipy.sparse.csr_matrix used in place) and x comes back complex64 when A and b are
    complex64 or float32, else complex128. method: auto (CG for Hermitian values with a positive
    diagonal; else the direct method first for at most auto_direct_rows rows (on the GPU at most
    8192: its dense LU), then COCG for complex symmetric A or GMRES where it misses), direct
    (complex128: the CPU's sparse LU with static pivoting, the GPU's dense LU), cg, cocg, bicgstab,
    gmres; precond: auto, none, jacobi, ilu0 or ic0 (Hermitian A); options: restart, auto_direct_rows, ordering,
    max_refinement. auto reads A's values on the host (a CuPy A is copied down for that; a named
    method copies nothing). callback, history and batches are not available for complex systems yet.

    A batch: A of shape (batch, n, n) (numpy or CuPy) and b of shape (batch, n) or (batch, n, k)
    solve every system A[i] x[i] = b[i] at once (la::batched_dense_solver: a thread block a system
    on the GPU, the host's threads on the CPU), by LU with partial pivoting or Cholesky
    (direct_factorization 'auto': Cholesky for each A[i] symmetric with a positive diagonal,
    LU where a pivot is not positive; 'lu'; 'cholesky'). x comes back in b's shape and info is an
    array of shape (batch,): 0 solved (the system's backward error checked), j > 0 no usable
    pivot in column j (singular; with 'cholesky', not positive definite), -1 a NaN or infinity in
    A[i], b[i] or x[i], -2 x[i] misses the backward-error check; x[i] is NaN where info[i] != 0.
    device: 'auto' (the GPU for a batch of at least 65,536 matrix entries where there is one;
    CuPy input stays on its GPU), 'gpu', 'cpu'. rtol, atol, maxiter, x0, callback and the
    iterative options do not apply to a batch and are refused.
    """
    if _is_complex_system(A, b):
        return _complex_solve(A, b, x0, rtol, atol, maxiter, method, precond, device, callback, full_output, history,
                              options)
    if _is_batch(A):
        return _batched_solve(A, b, x0, rtol, atol, maxiter, method, precond, device, callback, full_output, history, options)
    if _is_dense(A) and method in ("auto", "direct") and (method == "direct" or not (set(options) - set(_DENSE_OPTIONS))):
        # A dense array: the dense direct method (a dense A is n^2 memory already; factoring it
        # is what a dense solve costs). method='cg' etc. still take it as a sparse matrix.
        return _dense_solve(A, b, rtol, atol, device, full_output, options, method)
    m = _Matrix(A)
    nb, nc, nd = _near_null(options, precond, m.shape[0])
    words = _words(rtol, atol, maxiter, method, precond, options)
    gpu = _use_gpu(device, m)
    b, x = _vectors(m, b, x0, gpu)
    _wait_for_cupy(m)
    pb, px = _pointers(b, x)
    d = _call(_la.solve, m.arg, m.code, m.offset_bytes, pb, px, words, gpu, callback, bool(history), nb, nc, nd)
    return _returned(d, gpu, x, full_output)


def _is_complex_system(A, b):
    """A or b holds complex values (a complex dtype, or a list of complex numbers)."""
    for v in (A, b):
        dt = getattr(v, "dtype", None)
        if dt is not None:
            if _np.dtype(dt).kind == "c":
                return True
        elif v is b and _np.iscomplexobj(_np.asarray(v)):
            return True
    return False


_COMPLEX_OPTIONS = ("restart", "auto_direct_rows", "ordering", "max_refinement")


def _check_complex_words(method, precond, options):
    """What complex systems take (la.solve and la.Solver): options, method and precond."""
    refused = [k for k in options if k not in _COMPLEX_OPTIONS]
    if refused:
        raise InvalidArgument("%s do%s not apply to complex systems yet (they take %s)" % (
            ", ".join(refused), "es" if len(refused) == 1 else "", ", ".join(_COMPLEX_OPTIONS)))
    if method not in ("auto", "direct", "cg", "cocg", "bicgstab", "gmres"):
        raise InvalidArgument("method=%r: complex systems take 'auto', 'direct', 'cg' (Hermitian positive definite), "
                              "'cocg' (complex symmetric), 'bicgstab' or 'gmres'" % (method,))
    if precond not in ("auto", "none", "jacobi", "ilu0", "ic0"):
        raise InvalidArgument("precond=%r: complex systems take 'auto', 'none', 'jacobi', 'ilu0' or 'ic0' (Hermitian A) so "
                              "far" % (precond,))


def _complex_solve(A, b, x0, rtol, atol, maxiter, method, precond, device, callback, full_output, history, options):
    """la.solve on a complex system (issue 69): complex64 or complex128, CSR, on the GPU or the CPU;
    the method chosen and run as `la solve` does (la/solvers/complex_solve.hpp)."""
    global _python_copies
    if _is_batch(A):
        raise NotSupported("a batch of complex systems is not solved yet (batches take float32 or float64)")
    if callback is not None or history:
        raise InvalidArgument("callback and history are not available for complex systems yet")
    _check_complex_words(method, precond, options)
    bdt = getattr(b, "dtype", None)
    dtype = _complex_dtype(A.dtype) if bdt is None or _complex_dtype(bdt) == _np.complex64 else _np.dtype(_np.complex128)
    if _is_cupy_sparse(A) or _is_cupy_array(A):
        if not _is_cupy_sparse(A):
            raise InvalidArgument("a complex CuPy A must be a cupyx.scipy.sparse.csr_matrix")
        if A.dtype != dtype:
            raise InvalidArgument("A is %s and b %s: CuPy input is used in place, so A and b must both be complex64 or "
                                  "both complex128" % (A.dtype, bdt))
        m = _Matrix(A, complex_values=True)
    else:
        import scipy.sparse as sp
        m = _Matrix(A if sp.issparse(A) else sp.csr_matrix(_np.asarray(A)), complex_values=True)
        if m.dtype != dtype:
            m = _Matrix(sp.csr_matrix(m.a, dtype=dtype), complex_values=True)
    words = [w for w in _words(rtol, atol, maxiter, "auto", precond, options) if w[0] != "method"]
    gpu = _use_gpu(device, m)
    n = m.shape[0]
    if m.shape[0] != m.shape[1]:
        raise InvalidArgument("A is %d x %d; la solves square systems" % m.shape)
    if m.on_device:
        cupy, _ = _cupy()
        if not _is_cupy_array(b):
            raise InvalidArgument("A is a CuPy matrix, so b must be a CuPy array on the same GPU")
        b = _one_column(b, n, "b")
        if b.dtype != dtype or not b.flags.c_contiguous:
            raise InvalidArgument("b must be a contiguous %s CuPy array (A is %s)" % (dtype, dtype))
        if x0 is None:
            x = cupy.zeros(n, dtype=dtype)
        else:
            x = _one_column(cupy.array(x0, dtype=dtype, copy=True), n, "x0")
            _python_copies += 1
        cupy.cuda.get_current_stream().synchronize()
        pb, px = b.data.ptr, x.data.ptr
    else:
        if _is_cupy_array(b):
            raise InvalidArgument("A is a host matrix (scipy), so b must be a numpy array")
        b = _np.ascontiguousarray(_one_column(_np.asarray(b, dtype=dtype), n, "b"))
        x = _np.zeros(n, dtype=dtype) if x0 is None else _one_column(_np.array(x0, dtype=dtype, copy=True), n, "x0")
        x = _np.ascontiguousarray(x)
        pb, px = b, x
    d = _call(_la.solve_complex, m.arg, m.code, m.offset_bytes, pb, px, str(method), words, gpu)
    return _returned(d, gpu, x, full_output)


class Solver:
    """The setup once, then many solves: Solver(A, ...).solve(b) -> (x, info).

    The method's choice and what it built are kept across solves, on the GPU (la::device_solver)
    and on the CPU (la::host_solver): a Krylov method's preconditioner, or the direct method's
    analysis and factors (method='direct', or auto where its direct-first rules take it). Each
    solve follows la.solve's rules, auto's fallbacks included, whatever the number of columns: b
    may be (n,) or (n, k). update_values(A) on the same pattern reruns only what depends on the
    values (AMG its numeric phases; the direct method its factorization, by the first one's
    steps). The options are solve()'s. A complex A (complex64 or complex128, scipy or numpy) is set
    up as la::complex_solver: the method chosen once (la.solve's complex rules), the direct
    method's factors kept, each solve checked; update_values, callback and history take real
    systems only so far.
    """

    def __init__(self, A, *, rtol=1e-8, atol=0.0, maxiter=None, method="auto", precond="auto", device="auto",
                 **options):
        self._complex = None
        if _np.dtype(getattr(A, "dtype", _np.float64)).kind == "c":
            self._complex_setup(A, rtol, atol, maxiter, method, precond, device, options)
            return
        self._m = _Matrix(A)
        nb, nc, nd = _near_null(options, precond, self._m.shape[0])
        self._words = _words(rtol, atol, maxiter, method, precond, options)
        self._gpu = _use_gpu(device, self._m)
        if self._gpu:
            _wait_for_cupy(self._m)
        self._s = _call(_la.Solver, self._m.arg, self._m.code, self._m.offset_bytes, self._words, self._gpu, nb, nc, nd)

    def _complex_setup(self, A, rtol, atol, maxiter, method, precond, device, options):
        """A complex A (complex64 or complex128, scipy or numpy): la::complex_solver, the method
        chosen once and the direct method's factors kept; b and x numpy arrays."""
        import scipy.sparse as sp
        if _is_cupy_sparse(A) or _is_cupy_array(A):
            raise InvalidArgument("la.Solver takes complex systems from scipy or numpy so far (la.solve takes a complex "
                                  "CuPy matrix in place)")
        _check_complex_words(method, precond, options)
        self._m = _Matrix(A if sp.issparse(A) else sp.csr_matrix(_np.asarray(A)), complex_values=True)
        if self._m.shape[0] != self._m.shape[1]:
            raise InvalidArgument("A is %d x %d; la solves square systems" % self._m.shape)
        self._complex = _np.dtype(self._m.dtype)
        words = [w for w in _words(rtol, atol, maxiter, "auto", precond, options) if w[0] != "method"]
        self._gpu = _use_gpu(device, self._m)
        self._s = _call(_la.ComplexSolver, self._m.arg, self._m.code, self._m.offset_bytes, str(method), words, self._gpu)

    def _complex_solve(self, b, x0, callback, full_output, history):
        if callback is not None or history:
            raise InvalidArgument("callback and history are not available for complex systems yet")
        if _is_cupy_array(b):
            raise InvalidArgument("this Solver's A is a host matrix (scipy), so b must be a numpy array")
        n = self._m.shape[0]
        bb = _np.asarray(b)
        if bb.ndim == 2 and bb.shape[1] != 1:
            if bb.shape[0] != n:
                raise InvalidArgument("A is %d x %d but b has shape %s" % (n, n, tuple(bb.shape)))
            if x0 is not None:
                raise InvalidArgument("x0 with several right-hand sides is not supported; solve the columns one by one")
            cols = [self._complex_solve(bb[:, c], None, None, True, False) for c in range(bb.shape[1])]
            x = _np.stack([c[0] for c in cols], axis=1)
            info_ = next((c[1] for c in cols if c[1] != 0), 0)
            return (x, info_, [c[2] for c in cols]) if full_output else (x, info_)
        bv = _np.ascontiguousarray(_one_column(_np.asarray(b, dtype=self._complex), n, "b"))
        x = _np.zeros(n, dtype=self._complex) if x0 is None else _one_column(_np.array(x0, dtype=self._complex, copy=True), n, "x0")
        x = _np.ascontiguousarray(x)
        d = _call(self._s.solve, bv, x)
        return _returned(d, self._gpu, x, full_output)

    @property
    def shape(self):
        return self._m.shape

    def solve(self, b, x0=None, *, callback=None, full_output=False, history=False):
        """Solves A x = b with the kept setup; as la.solve. b of shape (n, k): each column through the
        same setup, x of b's shape, info the first column's that did not converge (0 when all did),
        and with full_output a list of k SolveResults."""
        if self._complex is not None:
            return self._complex_solve(b, x0, callback, full_output, history)
        if _np.ndim(b) == 0:
            raise InvalidArgument("b must be a vector of shape (n,) or an array (n, k); got a scalar")
        n = self._m.shape[0]
        if getattr(b, "ndim", 1) == 2 and b.shape[1] != 1:
            if b.shape[0] != n:
                raise InvalidArgument("A is %d x %d but b has shape %s" % (n, n, tuple(b.shape)))
            if x0 is not None:
                raise InvalidArgument("x0 with several right-hand sides is not supported; solve the columns one by one")
            if not self._gpu and not _is_cupy_array(b) and callback is None and not history:
                # The host solver takes the columns together (the direct method's factors solve
                # them in one pass), each column still checked and reported.
                bb = _np.asarray(b)
                _real(bb, "b")
                cols = _np.ascontiguousarray(bb.T, dtype=self._m.dtype)  # column after column
                xs = _np.zeros_like(cols)
                ds = _call(self._s.solve_columns, cols.ravel(), xs.ravel(), b.shape[1])
                results = [_result_of(d, False) for d in ds]
                infos = [_info_code(r) for r in results]
                x = xs.T.copy()
                info_ = next((i for i in infos if i != 0), 0)
                return (x, info_, results) if full_output else (x, info_)
            xs, infos, results = [], [], []
            for c in range(b.shape[1]):
                col = b[:, c].copy()
                x, info_, r = self.solve(col, callback=callback, full_output=True, history=history)
                xs.append(x), infos.append(info_), results.append(r)
            xp = _cupy()[0] if self._m.on_device else _np
            x = xp.stack(xs, axis=1)
            info_ = next((i for i in infos if i != 0), 0)
            return (x, info_, results) if full_output else (x, info_)
        b, x = _vectors(self._m, b, x0, self._gpu)
        _wait_for_cupy(self._m)
        pb, px = _pointers(b, x)
        d = _call(self._s.solve, pb, px, callback, bool(history))
        return _returned(d, self._gpu, x, full_output)

    def update_values(self, A):
        """New values on the same pattern (same shape, indptr and indices)."""
        if self._complex is not None:
            raise NotSupported("update_values takes real systems so far; make a new Solver for the complex values")
        m = _Matrix(A)
        old = self._m
        same = (m.on_device == old.on_device and m.shape == old.shape and m.dtype == old.dtype
                and m.a.nnz == old.a.nnz and bool((m.a.indptr == old.a.indptr).all())
                and bool((m.a.indices == old.a.indices).all()))  # numpy or CuPy alike
        if not same:
            raise InvalidArgument("update_values needs a matrix of the same shape, type and pattern (and kind: "
                                  "scipy or CuPy) as the solver's; make a new Solver")
        _wait_for_cupy(m)
        if m.on_device:
            _call(self._s.update_values, m.a.data.data.ptr)
        else:
            _call(self._s.update_values, m.a.data)
        self._m = m


# ---- files, properties, products ----------------------------------------------------------

def read_matrix_market(path, dtype=_np.float64):
    """A Matrix Market file as a scipy.sparse.csr_matrix, read by la's multi-threaded reader
    (sorted, duplicates summed, symmetric files expanded). Errors name the file and line."""
    import scipy.sparse as sp
    code = "f" if _np.dtype(dtype) == _np.float32 else "d"
    if _np.dtype(dtype) not in (_np.float32, _np.float64):
        raise InvalidArgument("dtype must be float32 or float64")
    rows, cols, indptr, indices, data, _sym = _call(_la.read_matrix_market, str(path), code)
    if indptr.dtype != indices.dtype:
        indices = indices.astype(indptr.dtype)  # scipy wants one index type
    return sp.csr_matrix((data, indices, indptr), shape=(rows, cols), copy=False)


def write_matrix_market(path, A, symmetric=False):
    """Writes A (scipy/numpy; CuPy: A.get() first) as a coordinate Matrix Market file;
    symmetric=True keeps the lower triangle (A must be exactly symmetric)."""
    m = _Matrix(A)
    if m.on_device:
        raise InvalidArgument("write_matrix_market takes a host matrix: A.get() copies a CuPy matrix to the host")
    _call(_la.write_matrix_market, str(path), m.arg, m.code, m.offset_bytes, bool(symmetric))


def info(A):
    """The properties la's solvers read: sizes, symmetry (pattern and values), the diagonal's
    signs, diagonal dominance, row lengths, and `description` as `la solve` prints it."""
    global _python_copies
    if _is_cupy_sparse(A):
        A = A.get()  # the properties are computed on the host
        _python_copies += 1
    m = _Matrix(A)
    return _call(_la.info, m.arg, m.code, m.offset_bytes)


def spmv(A, x, kernel="auto"):
    """y = A x on the GPU with la's SpMV (kernel: a CSR variant's name, or auto). CuPy A and x:
    in place, y a CuPy array; scipy/numpy: copied up and back."""
    m = _Matrix(A)
    if m.on_device:
        cupy, _ = _cupy()
        if not _is_cupy_array(x) or x.dtype != m.dtype or x.size != m.shape[1]:
            raise InvalidArgument("x must be a CuPy array of %d %s entries" % (m.shape[1], m.dtype))
        y = cupy.empty(m.shape[0], dtype=m.dtype)
        _wait_for_cupy(m)
        _call(_la.spmv, m.arg, m.code, m.offset_bytes, x.ravel().data.ptr, y.data.ptr, str(kernel))
        return y
    if not _la.cuda_available():
        raise NoGpuError("spmv runs on the GPU: " + _la.cuda_status())
    x = _np.ascontiguousarray(_np.asarray(x, dtype=m.dtype).ravel())
    if x.size != m.shape[1]:
        raise InvalidArgument("x has %d entries but A has %d columns" % (x.size, m.shape[1]))
    y = _np.empty(m.shape[0], dtype=m.dtype)
    _call(_la.spmv, m.arg, m.code, m.offset_bytes, x, y, str(kernel))
    return y
