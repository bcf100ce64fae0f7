// la: everything an embedder needs, in one include: <la/la.hpp>.
//
// The parts can be included alone: <la/formats/csr.hpp>, <la/formats/matrix_market.hpp>,
// <la/solvers/host_backend.hpp>, <la/kernels/gemm/gemm.hpp>, <la/context.hpp> ...
// None of them includes cuBLAS or cuSPARSE headers; the host formats and the reader need
// only the CUDA runtime's headers.
#pragma once

#include "context.hpp"
#include "device_buffer.hpp"
#include "error.hpp"
#include "atomic_file.hpp"
#include "event_timer.hpp"
#include "memory.hpp"
#include "parallel.hpp"
#include "types.hpp"
#include "vector.hpp"

#include "formats/convert.hpp"
#include "formats/device_convert.hpp"
#include "formats/generate.hpp"
#include "formats/matrix_market.hpp"

#include "kernels/gemm/gemm.hpp"
#include "kernels/spgemm/spgemm.hpp"
#include "kernels/spmv/select.hpp"
#include "kernels/spmv/spmv.hpp"
#include "kernels/reference/blas1.hpp"
#include "kernels/reference/gemm.hpp"
#include "kernels/reference/spgemm.hpp"
#include "kernels/reference/spmv.hpp"

#include "solvers/bicgstab.hpp"
#include "solvers/cg.hpp"
#include "solvers/device_solve.hpp"
#include "solvers/device_solver.hpp"
#include "solvers/gmres.hpp"
#include "solvers/krylov.hpp"
#include "solvers/method.hpp"
#include "solvers/device_cg.hpp"
#include "solvers/device_precond.hpp"
#include "solvers/precond.hpp"
#include "solvers/host_backend.hpp"
