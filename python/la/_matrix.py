"""The matrices la.solve, la.Solver, la.info and la.spmv take: scipy.sparse, dense and CuPy input,
validated before anything is called on the caller's arrays."""
import numpy as _np

from . import _la
from ._errors import InvalidArgument


# ---- matrices -------------------------------------------------------------------------------

def _cupy():
    try:
        import cupy
        import cupyx.scipy.sparse
        return cupy, cupyx.scipy.sparse
    except ImportError:
        return None, None


def _is_cupy_sparse(a):
    return type(a).__module__.startswith("cupyx.scipy.sparse")


def _is_cupy_array(a):
    return type(a).__module__.startswith("cupy") and hasattr(a, "__cuda_array_interface__")


def _value_dtype(dtype):
    dtype = _np.dtype(dtype)
    if dtype.kind == "c":
        raise InvalidArgument("this matrix is complex (%s): la.solve solves complex systems; la.Solver, la.info, "
                              "la.spmv and la.write_matrix_market take real matrices so far" % dtype)
    return dtype if dtype in (_np.float32, _np.float64) else _np.dtype(_np.float64)


def _complex_dtype(dtype):
    """The complex type a complex solve runs in: complex64 for complex64 or float32 values, else complex128."""
    dtype = _np.dtype(dtype)
    return _np.dtype(_np.complex64) if dtype in (_np.complex64, _np.float32) else _np.dtype(_np.complex128)


def _check_compressed(what, indptr, indices, stored_data, outer, inner, shape):
    """A compressed format's index arrays (CSR, CSC, BSR's block rows) in range, with numpy only."""
    indptr, indices = _np.asarray(indptr), _np.asarray(indices)
    where = "indptr (%s)" % what
    if indptr.ndim != 1 or indptr.shape[0] != outer + 1:
        raise InvalidArgument("the %s matrix's indptr has %d entries; a %d x %d matrix needs %d"
                              % (what, indptr.size, shape[0], shape[1], outer + 1))
    if indptr[0] != 0:
        raise InvalidArgument("%s starts at %d; it must start at 0" % (where, int(indptr[0])))
    stored = min(indices.shape[0], stored_data)
    past = _np.flatnonzero(indptr > stored)
    if past.size:
        i = int(past[0])
        raise InvalidArgument("%s[%d] = %d is past the end of indices (%d entries) or data (%d entries)"
                              % (where, i, int(indptr[i]), indices.shape[0], stored_data))
    if outer > 0:
        bad = _np.flatnonzero(indptr[1:] < indptr[:-1])
        if bad.size:
            i = int(bad[0])
            raise InvalidArgument("%s decreases at entry %d (%d then %d): it must be non-decreasing"
                                  % (where, i + 1, int(indptr[i]), int(indptr[i + 1])))
    end = int(indptr[-1])
    if end:
        used = indices[:end]
        bad = _np.flatnonzero((used < 0) | (used >= inner))
        if bad.size:
            k = int(bad[0])
            raise InvalidArgument("indices[%d] = %d is outside [0, %d) (%s)" % (k, int(used[k]), inner, what))


def _check_structure(a):
    """A scipy sparse matrix's index arrays in range, checked with numpy only: scipy's conversions and
    sum_duplicates() read them unchecked (an indptr entry past the end crashes the interpreter)."""
    rows, cols = a.shape
    fmt = a.format
    if rows >= 2 ** 31 or cols >= 2 ** 31:
        raise InvalidArgument("A is %d x %d: la's row and column indices are 32-bit (at most %d rows and columns)"
                              % (rows, cols, 2 ** 31 - 1))
    if fmt in ("csr", "csc"):
        outer, inner = (rows, cols) if fmt == "csr" else (cols, rows)
        _check_compressed(fmt.upper(), a.indptr, a.indices, _np.asarray(a.data).shape[0], outer, inner, a.shape)
    elif fmt == "bsr":
        r, c = a.blocksize
        if r <= 0 or c <= 0 or rows % r or cols % c:
            raise InvalidArgument("the BSR matrix's blocks (%d x %d) do not tile its %d x %d shape" % (r, c, rows, cols))
        data = _np.asarray(a.data)
        if data.ndim != 3 or data.shape[1:] != (r, c):
            raise InvalidArgument("the BSR matrix's data has shape %s; blocks of %d x %d need (nblocks, %d, %d)"
                                  % (data.shape, r, c, r, c))
        _check_compressed("BSR", a.indptr, a.indices, data.shape[0], rows // r, cols // c, a.shape)
    elif fmt == "coo":
        for name, idx, lim in (("row", _np.asarray(a.row), rows), ("col", _np.asarray(a.col), cols)):
            bad = _np.flatnonzero((idx < 0) | (idx >= lim))
            if bad.size:
                k = int(bad[0])
                raise InvalidArgument("COO %s[%d] = %d is outside [0, %d)" % (name, k, int(idx[k]), lim))
            if idx.shape[0] != _np.asarray(a.data).shape[0]:
                raise InvalidArgument("COO %s has %d entries and data %d" % (name, idx.shape[0],
                                                                             _np.asarray(a.data).shape[0]))
    elif fmt == "dia":
        data, offsets = _np.asarray(a.data), _np.asarray(a.offsets)
        if data.ndim != 2 or offsets.ndim != 1 or data.shape[0] != offsets.shape[0]:
            raise InvalidArgument("the DIA matrix has %d offsets and data of shape %s: one row of data per offset"
                                  % (offsets.size, data.shape))


class _Matrix:
    """A matrix as the extension takes it: host CSR arrays or device pointers, with its types."""

    def __init__(self, a, complex_values=False):
        self.complex_values = complex_values
        self.on_device = _is_cupy_sparse(a)
        if self.on_device:
            cupy, _ = _cupy()
            if a.format != "csr":
                raise InvalidArgument("CuPy input must be a cupyx.scipy.sparse.csr_matrix (got %s): convert it "
                                      "with .tocsr() (a copy)" % a.format)
            allowed = (_np.complex64, _np.complex128) if complex_values else (_np.float32, _np.float64)
            if a.dtype not in allowed:
                raise InvalidArgument("CuPy input must be %s, got %s" % (
                    "complex64 or complex128 (with a complex b)" if complex_values else "float32 or float64", a.dtype))
            if not a.has_canonical_format:
                raise InvalidArgument("the CuPy matrix has unsorted or duplicate column indices: call "
                                      "A.sum_duplicates() first (la uses A in place)")
            self.a = a
            self.dtype = _np.dtype(a.dtype)
            self.shape = a.shape
            self.offset_bytes = a.indptr.dtype.itemsize
            self.device = a.data.device.id
            self.arg = _la.Matrix.device(a.shape[0], a.shape[1], int(a.nnz), a.indptr.data.ptr, a.indices.data.ptr,
                                         a.data.data.ptr, self.device)
            return
        import scipy.sparse as sp
        if sp.issparse(a):
            _check_structure(a)  # before scipy reads it: a broken indptr crashes scipy's own routines
        if isinstance(a, _np.ndarray) or not sp.issparse(a):
            a = _np.asarray(a)
            if a.ndim != 2:
                raise InvalidArgument("A must be a 2-D matrix: a scipy.sparse matrix or array, a "
                                      "cupyx.scipy.sparse.csr_matrix, or a dense 2-D array")
            a = sp.csr_matrix(a)
        dtype = _complex_dtype(a.dtype) if complex_values else _value_dtype(a.dtype)
        if a.format != "csr" or a.dtype != dtype:
            a = sp.csr_matrix(a, dtype=dtype)  # converted once
        if not a.has_canonical_format:
            a = a.copy()
            a.sum_duplicates()
        self.a = a
        self.dtype = dtype
        self.shape = a.shape
        indptr = a.indptr
        if a.nnz < 2 ** 31 - 1 and indptr.dtype == _np.int64:
            indptr = indptr.astype(_np.int32)
        indices = a.indices if a.indices.dtype == _np.int32 else a.indices.astype(_np.int32)
        self.offset_bytes = indptr.dtype.itemsize
        self.device = 0
        self.arg = _la.Matrix.host(a.shape[0], a.shape[1], indptr, indices, a.data)

    @property
    def code(self):
        if self.complex_values:
            return "F" if self.dtype == _np.complex64 else "D"
        return "f" if self.dtype == _np.float32 else "d"
