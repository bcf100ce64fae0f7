// The GPU AMG's coarsening of a system's level (system.cu; amg.cu calls it when the near-null
// space is more than the constant vector): near_null.hpp's steps on the device. Private.
#pragma once

#include <la/formats/csr.hpp>
#include <la/solvers/amg/aggregation.hpp>

namespace la::precond_detail::amg_detail {

/// A coarsened system level: T (n x coarse_n, every kept column of a row's aggregate), the
/// coarse near-null space (coarse_n x k, column-major) and each coarse unknown's aggregate
/// (the next level's node).
template <typename T>
struct system_level {
  device_csr<T, count_t> t;
  device_buffer<double> coarse_b;
  device_buffer<index_t> coarse_node;
  index_t coarse_n = 0, aggregates = 0, deficient = 0;
};

/// Level a's aggregates on the strength of its nodes (node_of empty: its unknowns, by dabs =
/// |diag A|; else the blocks' Frobenius norms, sqrt(E^T (A o A) E)), then T and the coarse
/// space by a QR of b (n x k) an aggregate. False where nothing coarsens (no aggregate, or
/// more than 9/10 of n coarse unknowns): out is then not to be used.
template <typename T, typename O>
bool system_coarsen(context& ctx, const device_csr<T, O>& a, const double* dabs, const device_buffer<index_t>& node_of,
                    index_t nodes, const device_buffer<double>& b, int k, double theta, int distance, system_level<T>& out);

/// aggregate.cu's (declared again here: kernels.cuh is amg.cu's alone).
template <typename T, typename O>
index_t aggregate_device(context& ctx, const device_csr<T, O>& a, const double* dabs, double theta, int distance,
                         device_buffer<index_t>& of);

}  // namespace la::precond_detail::amg_detail
