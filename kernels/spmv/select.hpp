// Choosing the SpMV format and kernel for a CSR matrix, and an operator that owns the
// chosen storage.
//
//   row_stats     row-length statistics of a CSR matrix (host, or on the device with one
//                 small download);
//   select_spmv   a rule on those statistics (no GPU work); the thresholds are measured,
//                 see the comments in select.cu and bench/RESULTS.md; it names a format
//                 and a row walk, and the registry supplies the kernel;
//   tune_spmv     times every candidate on the actual matrix (converted on the device) and
//                 keeps the fastest: the optional tuning mode;
//   spmv_operator the matrix in the chosen format on the device with its variant and plan;
//                 apply() does no host work and no allocation (graph-capturable).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <la/formats/device_convert.hpp>
#include <la/kernels/spmv/spmv.hpp>

namespace la {

/// Row-length statistics (spmv_stats, spmv.hpp) of a CSR matrix.
template <typename T, typename O>
spmv_stats row_stats(const csr_matrix<T, O>& a);
template <typename T, typename O>
spmv_stats row_stats(context& ctx, const device_csr<T, O>& a);

/// A format and kernel, with the format's parameters.
struct spmv_choice {
  format fmt = format::csr;
  std::string kernel;  // a registry name; empty: the format's default (default_spmv)
  sell_options sell{};
  index_t hyb_width = -1;
  std::string why;  // the rule (or measurement) that chose it
};

/// The rule: format and kernel from row statistics. It picks a format and how the kernel
/// walks the rows; the kernel is the registry's first of that format and walk.
spmv_choice select_spmv(const spmv_stats& s);
/// The rule for complex values (16-byte entries), for the complex Krylov methods and `la spmv`
/// on complex files: select_spmv's, except
///  - short even rows (stencils) take SELL-32 without sorting: a thread per CSR row reads
///    its row's 16-byte values scattered across a warp, where SELL's slices read them
///    coalesced (H100, helmholtz2d:3000 and helmholtz3d:200: SELL 97% of the bytes floor,
///    la's CSR kernels 0.50-0.61; bench/results/complex-h100-*.csv);
///  - a few very long rows take csr_balanced, not HYB: the complex methods promise
///    bit-identical reruns, and HYB adds its long rows with atomics.
spmv_choice select_spmv_complex(const spmv_stats& s);
/// For a solve or product in format `fmt`: the rule's choice when the rule picks that
/// format, else the format's default kernel (default_spmv) for these sizes.
spmv_choice select_spmv(const spmv_stats& s, format fmt);

/// y = alpha*A*x + beta*y with A held in a chosen format on the device. For a CSR choice
/// the operator borrows `a` (which must outlive it); other formats are converted on the
/// device and owned.
template <typename T>
class spmv_operator {
 public:
  template <typename O>
  spmv_operator(context& ctx, const device_csr<T, O>& a, const spmv_choice& choice);

  /// Queues the product on `s`; no host work, no allocation.
  void apply(const T* x, T* y, T alpha, T beta, cudaStream_t s) const { plan_->run(x, y, alpha, beta, s); }
  const matrix_view<T>& matrix() const noexcept { return plan_->matrix(); }
  const spmv_variant<T>& variant() const noexcept { return plan_->variant(); }
  /// The choice it was built from, with the kernel's name filled in.
  const spmv_choice& choice() const noexcept { return choice_; }
  /// Device bytes of the converted storage (0 for a borrowed CSR matrix).
  std::size_t owned_bytes() const noexcept { return owned_bytes_; }

 private:
  spmv_choice choice_;
  std::shared_ptr<void> owned_;  // the converted matrix
  std::size_t owned_bytes_ = 0;
  std::optional<spmv_plan<T>> plan_;
};

/// The candidates tune_spmv times for a matrix: every registry variant whose
/// auto_candidate accepts these statistics (la's: the CSR kernels, JDS, HYB, SELL, and ELL
/// when it pads at most 1.5x), each in its format's default parameters; SELL sorted (sigma
/// automatic), and unsorted too when unsorted slices pad by more than 20%.
std::vector<spmv_choice> spmv_candidates(const spmv_stats& s);

/// Times each candidate (median of `reps` runs, CUDA events) on the device and returns the
/// fastest, its time in `why`. Needs room for one converted copy at a time.
template <typename T, typename O>
spmv_choice tune_spmv(context& ctx, const device_csr<T, O>& a, int reps = 10);

}  // namespace la
