// Sparse matrix-vector products on the GPU: y = alpha*A*x + beta*y, float and double, every
// format, 32- and 64-bit offsets. beta == 0 never reads y.
//
// The registry (spmv_variants) is the only list of kernels, and each entry carries what is
// known about its kernel: format, determinism, how it walks the rows (which is also the
// fused form a solver builds from it), whether it is its format's default, whether
// tune_spmv times it, and can_implement. The solver, the selector (select.hpp), the CLI,
// the tests and the benchmarks iterate it and read those properties. A variant is one file
// under kernels/spmv/ (or a shared one, for the thread-per-row kernels) and one registry
// entry; an embedder adds one at run time with add_spmv_variant.
//
// Workspace: workspace_bytes() says how much device memory a variant needs for a matrix,
// prepare() fills it once per matrix, run() does no host work and no allocation (so it can
// be captured into a CUDA graph). spmv_plan holds the three together.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <la/formats/coo.hpp>
#include <la/formats/csc.hpp>
#include <la/formats/csr.hpp>
#include <la/formats/dense.hpp>
#include <la/formats/ell.hpp>
#include <la/formats/hyb.hpp>
#include <la/formats/jds.hpp>
#include <la/formats/sell.hpp>
#include <la/vector.hpp>

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
  count_t nnz = 0;  // stored entries (stored_entries(): ELL, SELL slots; HYB ELL slots + COO entries)
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

/// The name this type had before 0.2.0.
template <typename T>
using spmv_matrix [[deprecated("la::spmv_matrix is la::matrix_view")]] = matrix_view<T>;

/// The matrix_view of an owning device matrix of any format (it must outlive the view).
template <typename M, std::enable_if_t<is_device_matrix_v<M>, int> = 0>
matrix_view<typename M::value_type> spmv_view(const M& a) {
  matrix_view<typename M::value_type> m;
  m.fmt = M::kind;
  m.rows = a.rows(), m.cols = a.cols(), m.nnz = stored_entries(a);
  const auto v = a.view();
  if constexpr (M::kind == format::coo) m.coo = v;
  else if constexpr (M::kind == format::ell) m.ell = v;
  else if constexpr (M::kind == format::dense) m.dense = v;
  else if constexpr (M::kind == format::hyb) m.hyb = v;
  else {
    constexpr bool wide = sizeof(typename M::offset_type) == 8;
    m.wide = wide;
    auto& slot = [&]() -> auto& {
      if constexpr (M::kind == format::csr) { if constexpr (wide) return m.csr64; else return m.csr32; }
      else if constexpr (M::kind == format::csc) { if constexpr (wide) return m.csc64; else return m.csc32; }
      else if constexpr (M::kind == format::jds) { if constexpr (wide) return m.jds64; else return m.jds32; }
      else { if constexpr (wide) return m.sell64; else return m.sell32; }
    }();
    slot = v;
  }
  return m;
}

/// What a variant's can_implement, default and workspace look at.
struct spmv_problem {
  format fmt = format::csr;
  bool wide = false;
  index_t rows = 0, cols = 0;
  count_t nnz = 0;  // stored entries
};
template <typename T>
spmv_problem problem_of(const matrix_view<T>& a) {
  return {a.fmt, a.wide, a.rows, a.cols, a.nnz};
}

/// Row-length statistics of a CSR matrix (what select_spmv and the auto candidates look at;
/// row_stats in select.hpp computes them).
struct spmv_stats {
  index_t rows = 0, cols = 0;
  count_t nnz = 0;
  double mean = 0, stddev = 0;  // of the row lengths
  index_t longest = 0;
  index_t empty_rows = 0;
  count_t sell_slots = 0;  // slots of SELL-32 without sorting: padding ratio = sell_slots / nnz
  double padding() const { return nnz ? double(sell_slots) / double(nnz) : 1.0; }
};

/// How a variant's kernel walks the rows, which is also the fused form a solver can build
/// from it (<la/kernels/spmv/walks.cuh>): the CG solver's direction step runs the same walk
/// with its own epilogue, in one kernel with the p'Ap dot.
enum class row_walk {
  none,    // no per-row walk (atomics, nonzero chunks, dense GEMV): nothing to fuse into
  thread,  // a thread per stored row: walk::thread_rows over walk::rows_of(the format's view)
  group,   // a group of lanes per CSR row: walk::group_rows, width walk::csr_group_width
};
const char* to_string(row_walk w) noexcept;

template <typename T>
struct spmv_variant {
  std::string_view name;  // stable id: tests, benchmarks, `--kernel`
  format fmt;             // the storage it runs on
  bool deterministic;     // no atomics: bit-identical run to run
  row_walk walk;          // its fused form (none: the solver runs it, then a separate dot)
  /// Whether it is its format's default for p (what "auto" runs on a matrix already in
  /// that format, and what the solver runs when only the format is named); null: never.
  bool (*format_default)(const spmv_problem& p);
  /// Whether tune_spmv times it on a matrix with these statistics; null: never.
  bool (*auto_candidate)(const spmv_stats& s);
  /// Whether it runs this problem: the format, and the limits of its launch geometry.
  bool (*can_implement)(const spmv_problem& p);
  std::size_t (*workspace_bytes)(const spmv_problem& p);
  void (*prepare)(const matrix_view<T>&, void* workspace, cudaStream_t);  // once per matrix
  /// y = alpha*A*x + beta*y; no host work, no allocation (graph-capturable). Checks its
  /// launches. `workspace` is the prepared workspace; a run may use the part prepare()
  /// leaves free as scratch, so concurrent runs need their own.
  void (*run)(const matrix_view<T>&, void* workspace, const T* x, T* y, T alpha, T beta, cudaStream_t);
};

/// Every variant for value type T (float, double), in registry order: la's own, then those
/// added with add_spmv_variant. Names, formats and properties are the same for both types.
template <typename T>
const std::vector<spmv_variant<T>>& spmv_variants();
/// Adds a variant to the registry for both value types (its float and double forms must
/// agree in name, format and properties, and the name must be new: la::invalid_argument
/// otherwise). From then on it is listed, tested, timed and selectable like la's own. Not
/// thread-safe: add variants before other threads use the registry (at start-up).
void add_spmv_variant(const spmv_variant<float>& f, const spmv_variant<double>& d);
/// The variant of that name; throws la::invalid_argument listing the valid names.
template <typename T>
const spmv_variant<T>& find_spmv(std::string_view name);
/// The first variant in registry order of format `fmt` that walks the rows as `walk`;
/// throws la::not_supported when there is none.
template <typename T>
const spmv_variant<T>& find_spmv(format fmt, row_walk walk);
/// The default variant for a matrix already stored in this format (what "auto" runs in
/// la::spmv); it sees only the sizes. To choose the format and kernel of a CSR matrix from
/// its row lengths, measured, use select_spmv and spmv_operator (select.hpp).
template <typename T>
const spmv_variant<T>& default_spmv(const spmv_problem& p);
/// The names of every variant, comma-separated, in registry order (for messages and help);
/// sparse_only leaves out those on dense storage (`la spmv --kernel` takes sparse formats).
std::string spmv_variant_names(bool sparse_only = false);

/// A variant ready to run on one matrix: the variant (checked with can_implement) and its
/// workspace, allocated on ctx's device and prepared once (in stream order). run() queues
/// the product and can be captured into a CUDA graph. The matrix must outlive the plan.
template <typename T>
class spmv_plan {
 public:
  /// kernel: a variant name, or "auto" (default_spmv).
  spmv_plan(context& ctx, const matrix_view<T>& a, std::string_view kernel = "auto");
  spmv_plan(context& ctx, const matrix_view<T>& a, const spmv_variant<T>& v);

  /// y = alpha*A*x + beta*y on stream s; no host work, no allocation.
  void run(const T* x, T* y, T alpha, T beta, cudaStream_t s) const {
    variant_->run(view_, workspace_.data(), x, y, alpha, beta, s);
  }
  /// The same on ctx's stream, with the sizes of x and y checked.
  void run(context& ctx, const device_vector<T>& x, device_vector<T>& y, T alpha, T beta) const;

  const spmv_variant<T>& variant() const noexcept { return *variant_; }
  const matrix_view<T>& matrix() const noexcept { return view_; }
  std::size_t workspace_bytes() const noexcept { return workspace_.size(); }

 private:
  matrix_view<T> view_;
  const spmv_variant<T>* variant_;
  mutable device_buffer<unsigned char> workspace_;  // a run may use part of it as scratch
};

/// y = alpha*A*x + beta*y for a device matrix of any format, on ctx's stream, with a
/// variant that needs no workspace. kernel: a variant name or "auto" (default_spmv). A
/// variant with a workspace (csr_balanced) is refused with la::invalid_argument: build an
/// spmv_plan once and call its run(), so the workspace is not prepared on every call.
template <typename T>
void spmv(context& ctx, const matrix_view<T>& a, const device_vector<T>& x, device_vector<T>& y, T alpha, T beta,
          std::string_view kernel = "auto");

}  // namespace la
