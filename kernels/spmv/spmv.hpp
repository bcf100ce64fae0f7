// Sparse matrix-vector products on the GPU: y = alpha*A*x + beta*y, float and double, every
// format, 32- and 64-bit offsets. beta == 0 never reads y.
//
// Every variant is one file under kernels/spmv/, a declaration in detail/variants.hpp, a
// line in CMakeLists.txt and an entry in registry.cu. A variant has a two-phase plan:
// plan_bytes() says how much workspace the caller provides, prepare() fills it once per
// matrix, and run() does no host work and no allocation, so it can be captured into a CUDA
// graph.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../../formats/coo.hpp"
#include "../../formats/csc.hpp"
#include "../../formats/csr.hpp"
#include "../../formats/dense.hpp"
#include "../../formats/ell.hpp"
#include "../../formats/hyb.hpp"
#include "../../formats/jds.hpp"
#include "../../formats/sell.hpp"
#include "../../vector.hpp"

namespace la {

/// A view of a device matrix in any format: the format's tag, the sizes, and one slot per
/// format and offset width for the view kernels take (trivially copyable, so it is passed to
/// kernels by value). Exactly the slot of `fmt` (and, for CSR, CSC, JDS and SELL, of the
/// offset width) is set; spmv_view() builds it from an owning device matrix.
template <typename T>
struct matrix_view {
  format fmt = format::csr;
  bool wide = false;  // 64-bit offsets
  index_t rows = 0, cols = 0;
  count_t nnz = 0;  // stored entries (ELL, SELL: slots; HYB: ELL slots + COO entries)
  csr_view<const T, std::int32_t> csr32;
  csr_view<const T, std::int64_t> csr64;
  csc_view<const T, std::int32_t> csc32;
  csc_view<const T, std::int64_t> csc64;
  coo_view<const T> coo;
  ell_view<const T> ell;
  jds_view<const T, std::int32_t> jds32;
  jds_view<const T, std::int64_t> jds64;
  dense_view<const T> dense;
  hyb_view<const T> hyb;
  sell_view<const T, std::int32_t> sell32;
  sell_view<const T, std::int64_t> sell64;
};

/// The name this type had before 0.1.1.
template <typename T>
using spmv_matrix [[deprecated("la::spmv_matrix is la::matrix_view")]] = matrix_view<T>;

template <typename T, typename O> matrix_view<T> spmv_view(const device_csr<T, O>& a);
template <typename T, typename O> matrix_view<T> spmv_view(const device_csc<T, O>& a);
template <typename T> matrix_view<T> spmv_view(const device_coo<T>& a);
template <typename T> matrix_view<T> spmv_view(const device_ell<T>& a);
template <typename T, typename O> matrix_view<T> spmv_view(const device_jds<T, O>& a);
template <typename T> matrix_view<T> spmv_view(const device_dense<T>& a);
template <typename T> matrix_view<T> spmv_view(const device_hyb<T>& a);
template <typename T, typename O> matrix_view<T> spmv_view(const device_sell<T, O>& a);

/// What a variant's can_implement and plan look at.
struct spmv_problem {
  format fmt = format::csr;
  bool wide = false;
  index_t rows = 0, cols = 0;
  count_t nnz = 0;
};
template <typename T>
spmv_problem problem_of(const matrix_view<T>& a) {
  return {a.fmt, a.wide, a.rows, a.cols, a.nnz};
}

template <typename T>
struct spmv_variant {
  std::string_view name;  // stable id: tests, benchmarks, `--kernel`
  format fmt;             // the storage it runs on
  bool deterministic;     // no atomics: bit-identical run to run
  bool (*can_implement)(const spmv_problem&);
  std::size_t (*plan_bytes)(const spmv_problem&);
  void (*prepare)(const matrix_view<T>&, void* plan, cudaStream_t);  // once per matrix
  /// y = alpha*A*x + beta*y; no host work, no allocation (graph-capturable). Checks its
  /// launches. `plan` is the prepared workspace; a run may use the part prepare() leaves
  /// free as scratch, so concurrent runs need their own plans.
  void (*run)(const matrix_view<T>&, void* plan, const T* x, T* y, T alpha, T beta, cudaStream_t);
};

/// A plan for running `v` on `a` many times: plan_bytes() of device memory on ctx's device,
/// prepared (in stream order). Empty for variants without a plan.
template <typename T>
device_buffer<unsigned char> make_plan(context& ctx, const spmv_variant<T>& v, const matrix_view<T>& a) {
  device_buffer<unsigned char> plan = ctx.allocate<unsigned char>(v.plan_bytes(problem_of(a)));
  if (!plan.empty()) v.prepare(a, plan.data(), ctx.stream());
  return plan;
}

/// Every variant for value type T (float, double), in registry order.
template <typename T>
const std::vector<spmv_variant<T>>& spmv_variants();
/// The variant of that name; throws la::invalid_argument listing the valid names.
template <typename T>
const spmv_variant<T>& find_spmv(std::string_view name);
/// The default variant for a matrix already stored in this format (what `auto` runs in
/// la::spmv); it sees only the sizes. To choose the format and kernel of a CSR matrix from
/// its row lengths, measured, use select_spmv and spmv_operator (select.hpp).
template <typename T>
const spmv_variant<T>& default_spmv(const spmv_problem& p);

/// y = alpha*A*x + beta*y for a device matrix of any format, on ctx's stream. kernel: a
/// variant name or "auto" (default_spmv). A plan, when the variant has one, is prepared in
/// ctx.scratch() on every call; keep one with the registry entry to prepare it once.
template <typename T>
void spmv(context& ctx, const matrix_view<T>& a, const device_vector<T>& x, device_vector<T>& y, T alpha, T beta,
          std::string_view kernel = "auto");

}  // namespace la
