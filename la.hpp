// la: everything an embedder needs, in one include: <la/la.hpp>.
//
// The parts can be included alone: <la/formats/csr.hpp>, <la/formats/matrix_market.hpp>,
// <la/solvers/host_backend.hpp>, <la/kernels/gemm/gemm.hpp>, <la/la/context.hpp> ...
// None of them includes cuBLAS or cuSPARSE headers; the host formats and the reader need
// only the CUDA runtime's headers.
#pragma once

#include "la/context.hpp"
#include "la/device_buffer.hpp"
#include "la/error.hpp"
#include "la/atomic_file.hpp"
#include "la/event_timer.hpp"
#include "la/memory.hpp"
#include "la/parallel.hpp"
#include "la/types.hpp"
#include "la/vector.hpp"

#include "formats/convert.hpp"
#include "formats/device_convert.hpp"
#include "formats/generate.hpp"
#include "formats/matrix_market.hpp"

#include "kernels/gemm/gemm.hpp"
#include "kernels/spmv/select.hpp"
#include "kernels/spmv/spmv.hpp"
#include "kernels/reference/blas1.hpp"
#include "kernels/reference/gemm.hpp"
#include "kernels/reference/spmv.hpp"

#include "solvers/cg.hpp"
#include "solvers/device_cg.hpp"
#include "solvers/host_backend.hpp"
