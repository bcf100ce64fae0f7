// Host-side pieces the GPU CG backends share (solvers/cg/device_cg.cu's device_backend and
// solvers/distributed/distributed.cu's dist_backend): the grid of their vector kernels, reading the
// history ring back, and capturing a chunk of iterations into a graph. Private.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include <la/error.hpp>
#include <la/grid.cuh>
#include <la/solvers/device_precond.hpp>
#include <la/solvers/precond_options.hpp>
#include <la/solvers/registry.hpp>

namespace la::cg_detail {

/// Whether a GPU backend builds `p` as a device_preconditioner and applies it between its
/// kernels (its entry's form apart); none and Jacobi are fused into the backends' own kernels.
inline bool built_apart(preconditioner p) { return form_of(p) == precond_form::apart; }

/// Builds M^-1 of kind `pc` for m into `pre` (device_precond.hpp): "" or why it does not exist
/// for this matrix (the builder's la::invalid_argument, which the solvers turn into a status).
template <typename T, typename O>
std::string emplace_preconditioner(std::optional<device_preconditioner<T>>& pre, context& ctx,
                                   const device_csr<T, O>& m, preconditioner pc, const precond_options& popt) {
  if (popt.prebuilt) {  // la::device_solver's, built once
    LA_EXPECTS(popt.prebuilt_value_size == sizeof(T), "precond_options::prebuilt holds a preconditioner of another value type");
    pre.emplace(*static_cast<const device_preconditioner<T>*>(popt.prebuilt.get()));
    return {};
  }
  try {
    pre.emplace(ctx, m, pc, popt);
  } catch (const invalid_argument& e) {
    return e.what();
  }
  return {};
}

/// Blocks for `items` in a grid-stride kernel: enough to cover them, at most 8 a
/// multiprocessor (every thread resident).
inline unsigned blocks_for(long long items, int sm_count) {
  return std::min<unsigned>(detail::grid_for(items), static_cast<unsigned>(8 * sm_count));
}

/// Appends iterations [first, last] of the history ring (`cap` entries, iteration i at
/// (i - 1) % cap) to `out`, queued on s: at most two copies, the ring wraps once. The
/// caller waits for s before reading `out`.
inline void read_history_async(const double* ring, std::int64_t cap, std::int64_t first, std::int64_t last,
                               std::vector<double>& out, cudaStream_t s) {
  const std::size_t old = out.size();
  out.resize(old + static_cast<std::size_t>(last - first + 1));
  for (std::int64_t i = first; i <= last;) {
    const std::int64_t slot = (i - 1) % cap, count = std::min(last - i + 1, cap - slot);
    LA_CUDA_TRY(cudaMemcpyAsync(out.data() + old + (i - first), ring + slot, count * sizeof(double),
                                cudaMemcpyDeviceToHost, s));
    i += count;
  }
}

/// queue() captured on s (thread-local mode, so other threads' GPU work is unaffected) and
/// instantiated into `exec`, which replaces (and destroys) any previous one.
template <typename F>
void capture_graph(cudaStream_t s, cudaGraphExec_t& exec, F&& queue) {
  if (exec) {
    LA_CUDA_TRY(cudaGraphExecDestroy(exec));
    exec = nullptr;
  }
  cudaGraph_t g = nullptr;
  LA_CUDA_TRY(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  try {
    queue();
  } catch (...) {
    cudaStreamEndCapture(s, &g);
    if (g) cudaGraphDestroy(g);
    throw;
  }
  LA_CUDA_TRY(cudaStreamEndCapture(s, &g));
  const cudaError_t e = cudaGraphInstantiate(&exec, g, 0);
  LA_CUDA_TRY_NO_THROW(cudaGraphDestroy(g));
  LA_CUDA_TRY(e);
}

}  // namespace la::cg_detail
