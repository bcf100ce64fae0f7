# Type stubs for la (python/la/__init__.py): what editors complete.
from typing import Any, Callable, Literal, Optional, Tuple, Union, overload

import numpy as np
import numpy.typing as npt

__version__: str

# The registry's names (la/solvers/registry.hpp; tests/test_registry.py compares them).
Method = Literal["auto", "cg", "bicgstab", "gmres", "fgmres", "direct"]
Precond = Literal["auto", "none", "jacobi", "block-jacobi", "fsai", "ic0", "ilu0", "amg", "inner"]
Device = Literal["auto", "gpu", "cpu"]
Matrix = Any  # scipy.sparse matrix or array, dense 2-D array, or cupyx.scipy.sparse.csr_matrix
Vector = Any  # numpy.ndarray, or cupy.ndarray for CuPy matrices
Callback = Callable[[int, float], None]

class Error(Exception): ...
class InvalidArgument(Error, ValueError): ...
class FileError(Error, OSError): ...
class DeviceError(Error): ...
class NoGpuError(DeviceError): ...
class NotSupported(Error): ...

class SolveResult:
    status: str
    converged: bool
    iterations: int
    residual: float
    true_residual: float
    message: str
    method: str
    where: str
    method_choice: str
    precond: str
    precond_detail: str
    precond_setup_seconds: float
    precond_bytes: float
    analysis_seconds: float
    setup_seconds: float
    iterate_seconds: float
    history: list[float]
    device: str
    call_seconds: float

class BatchResult:
    backward_error: npt.NDArray[np.float64]
    cholesky: npt.NDArray[np.bool_]
    factor_seconds: float
    solve_seconds: float
    device: str
    solved: int
    message: str
    call_seconds: float

@overload
def solve(A: Matrix, b: Vector, x0: Optional[Vector] = ..., *, rtol: float = ..., atol: float = ...,
          maxiter: Optional[int] = ..., method: Method = ..., precond: Precond = ..., device: Device = ...,
          callback: Optional[Callback] = ..., full_output: Literal[False] = ..., history: bool = ...,
          **options: Any) -> Tuple[Vector, Any]: ...
@overload
def solve(A: Matrix, b: Vector, x0: Optional[Vector] = ..., *, rtol: float = ..., atol: float = ...,
          maxiter: Optional[int] = ..., method: Method = ..., precond: Precond = ..., device: Device = ...,
          callback: Optional[Callback] = ..., full_output: Literal[True], history: bool = ...,
          **options: Any) -> Tuple[Vector, Any, Union[SolveResult, BatchResult]]: ...

class Solver:
    def __init__(self, A: Matrix, *, rtol: float = ..., atol: float = ..., maxiter: Optional[int] = ...,
                 method: Method = ..., precond: Precond = ..., device: Device = ..., **options: Any) -> None: ...
    @property
    def shape(self) -> Tuple[int, int]: ...
    def solve(self, b: Vector, x0: Optional[Vector] = ..., *, callback: Optional[Callback] = ...,
              full_output: bool = ..., history: bool = ...) -> Union[Tuple[Vector, int], Tuple[Vector, int, SolveResult]]: ...
    def update_values(self, A: Matrix) -> None: ...

def read_matrix_market(path: str, dtype: npt.DTypeLike = ...) -> Any: ...
def write_matrix_market(path: str, A: Matrix, symmetric: bool = ...) -> None: ...
def info(A: Matrix) -> dict[str, Any]: ...
def spmv(A: Matrix, x: Vector, kernel: str = ...) -> Vector: ...
def cuda_available() -> bool: ...
def cuda_status() -> str: ...
def copies() -> int: ...
