// la::batched_dense_solver's state (batched_dense.hpp), shared by its host oracle
// (batched_dense_host.cpp) and its GPU kernels (batched_dense.cu): the layout of the packed
// systems, the kept copy of A, the factors and pivots on the side that solves, the statuses.
#pragma once

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include <la/device_buffer.hpp>
#include <la/error.hpp>
#include <la/solvers/batched_dense.hpp>
#include <la/solvers/direct/detail/verdict.hpp>

namespace la {
namespace batched_detail {
using direct_detail::clock_type;
using direct_detail::since;

constexpr int info_non_finite = -1, info_check = -2;

/// Where the GPU's system s lives (batched_warp.cuh reads it): its size, its matrix's offset
/// (n^2 values a system), its rows' (its pivots; its B block at r * k); uniform_n > 0: every
/// system has that size and the offsets follow from it (nothing uploaded).
struct batch_layout {
  const int* n = nullptr;
  const long long* a_off = nullptr;
  const long long* r_off = nullptr;
  int uniform_n = 0;
};

template <typename T>
double default_tolerance(index_t n) {
  return 1000.0 * std::max<index_t>(n, 1) * static_cast<double>(std::numeric_limits<T>::epsilon());
}
}  // namespace batched_detail

template <typename T>
struct batched_dense_solver<T>::impl {
  context* ctx = nullptr;  // null: the host's
  batched_dense_options opt;
  std::vector<index_t> sizes;
  std::vector<long long> a_off, r_off;  // count + 1 each
  index_t max_n = 0;
  std::vector<int> finfo;
  std::vector<unsigned char> chol;
  std::vector<double> ainf;
  double factor_seconds = 0;
  // Host: A's copy, the factors, the pivots.
  std::vector<T> a, f;
  std::vector<index_t> piv;
  // GPU: the same, and the layout.
  device_buffer<T> da, df;
  device_buffer<int> dpiv, dn;  // dn, da_off, dr_off: uploaded only where the sizes differ
  device_buffer<long long> da_off, dr_off;
  /// The factorization's per-system results in one buffer (one copy back): ||A_i||_inf
  /// (double), the status (int), whether by Cholesky (byte), in that order, count of each.
  device_buffer<unsigned char> dres;
  static std::size_t result_bytes(std::size_t count) { return count * (sizeof(double) + sizeof(int) + 1); }
  double* d_ainf() { return reinterpret_cast<double*>(dres.data()); }
  int* d_info() { return reinterpret_cast<int*>(dres.data() + sizeof(double) * sizes.size()); }
  unsigned char* d_chol() { return dres.data() + (sizeof(double) + sizeof(int)) * sizes.size(); }
  batched_detail::batch_layout layout_;  // the kernels' view of the layout (set by factor_gpu)
  bool uniform() const {
    return !sizes.empty() && max_n > 0 && std::all_of(sizes.begin(), sizes.end(), [&](index_t v) { return v == max_n; });
  }

  void layout(std::vector<index_t> s) {
    sizes = std::move(s);
    a_off.assign(sizes.size() + 1, 0), r_off.assign(sizes.size() + 1, 0);
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      LA_EXPECTS(sizes[i] >= 0, "batched_dense_solver: system " + std::to_string(i) + " has a negative size");
      a_off[i + 1] = a_off[i] + static_cast<long long>(sizes[i]) * sizes[i];
      r_off[i + 1] = r_off[i] + sizes[i];
      max_n = std::max(max_n, sizes[i]);
    }
  }
  double tolerance() const { return opt.check_tolerance > 0 ? opt.check_tolerance : batched_detail::default_tolerance<T>(max_n); }

  // The host's (batched_dense_host.cpp): the oracle.
  void factor_host();
  void solve_host(T* b, index_t k, batched_dense_report& rep);
  template <typename F>
  void for_systems(F&& fn) const;
  void factor_one(std::size_t i);
  void solve_one(std::size_t i, T* b, index_t k, batched_dense_report& rep, std::vector<T>& b0) const;
  static int lu_rows(T* m, index_t n, index_t* p);
  static int cholesky_rows(T* m, index_t n);
  // The GPU's (batched_dense.cu).
  void factor_gpu(const T* a_dev);
  void solve_gpu(T* b, index_t k, batched_dense_report& rep);
};

}  // namespace la
