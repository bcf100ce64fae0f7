// la: everything an embedder needs, in one include: <la/la.hpp>.
//
// The parts can be included alone: <la/formats/csr.hpp>, <la/formats/matrix_market.hpp>,
// <la/solvers/host_backend.hpp>, <la/kernels/gemm/gemm.hpp>, <la/context.hpp> ...
// None of them includes cuBLAS or cuSPARSE headers; the host formats and the reader need
// only the CUDA runtime's headers.
#pragma once

#include <la/context.hpp>
#include <la/device_buffer.hpp>
#include <la/error.hpp>
#include <la/atomic_file.hpp>
#include <la/event_timer.hpp>
#include <la/memory.hpp>
#include <la/parallel.hpp>
#include <la/types.hpp>
#include <la/vector.hpp>

#include <la/formats/convert.hpp>
#include <la/formats/device_convert.hpp>
#include <la/formats/generate.hpp>
#include <la/formats/matrix_market.hpp>

#include <la/kernels/gemm/gemm.hpp>
#include <la/kernels/spgemm/spgemm.hpp>
#include <la/kernels/spmv/select.hpp>
#include <la/kernels/spmv/spmv.hpp>
#include <la/kernels/reference/blas1.hpp>
#include <la/kernels/reference/gemm.hpp>
#include <la/kernels/reference/spgemm.hpp>
#include <la/kernels/reference/spmv.hpp>

#include <la/solvers/batched_dense.hpp>
#include <la/solvers/bicgstab.hpp>
#include <la/solvers/cg.hpp>
#include <la/solvers/complex_solve.hpp>  // complex systems: the Krylov and direct methods, and the choice
#include <la/solvers/device_solve.hpp>
#include <la/solvers/dense_solver.hpp>
#include <la/solvers/device_solver.hpp>
#include <la/solvers/gmres.hpp>
#include <la/solvers/krylov.hpp>
#include <la/solvers/method.hpp>
#include <la/solvers/device_cg.hpp>
#include <la/solvers/device_precond.hpp>
#include <la/solvers/precond.hpp>
#include <la/solvers/host_backend.hpp>
#include <la/solvers/host_solver.hpp>
#include <la/solvers/registry.hpp>
