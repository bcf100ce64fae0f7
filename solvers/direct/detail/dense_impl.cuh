// la::dense_solver<T>'s state (dense_solver.hpp), shared by dense_device.cu (construction,
// factorization, condition estimate) and dense_solve.cu (solves and refinement).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include <la/memory.hpp>
#include <la/solvers/dense_solver.hpp>
#include <la/solvers/direct/detail/dense_cholesky.cuh>
#include <la/solvers/direct/detail/dense_lu.cuh>
#include <la/solvers/direct/detail/dense_solves.cuh>

namespace la {
using namespace dense_detail;  // a detail header: its two .cu files work in dense_detail's names

template <typename T>
struct dense_solver<T>::impl {
  context* ctx = nullptr;
  dense_solver_options opt;
  index_t n = 0;
  device_buffer<T> a;  // n x n, ld n: A as given (residuals, refinement)
  double a_inf = 0, a_one = 0, a_max = 0;
  bool symmetric_positive_diagonal = false;
  bool mixed = false;          // T = double factored in float
  double scale = 1;            // mixed: the float factors are of scale * A
  factors<T> full;             // working-precision factors
  factors<float> low;          // mixed precision's
  factors<double> low64;       // GMRES-based refinement's: low in double (promote_factors), made when first needed
  bool low64_tried = false;
  bool refactored_at_factor = false;  // the mixed factorization broke down; full's are fp64
  dense_factor_status status;
  bool chol = false;
  double seconds = 0;
  std::string how, precision;
  index_t nb = 0;

  template <typename F>
  void factor_into(factors<F>& fa, const std::string& gemm_algo, bool want_chol, double sc) {
    context& c = *ctx;
    fa.n = n;
    fa.nb = nb;
    fa.N = (n + nb - 1) / nb * nb;
    const index_t ow = opt.outer_block > 0 ? opt.outer_block : outer_width;
    LA_EXPECTS(ow % nb == 0, "dense_solver: outer_block " + std::to_string(ow) + " is not a multiple of the block " +
                                 std::to_string(nb));
    fa.outer = nb * std::max<index_t>(1, ow / nb);
    fa.lookahead = opt.lookahead;
    const bool low16 = gemm_algo == "fp16" || gemm_algo == "bf16";
    fa.gemm = low16 ? std::string("auto") : gemm_algo;
    fa.update = low16 ? gemm_algo : std::string();
    check_device_memory(c, double(fa.N) * fa.N * sizeof(F) + 4.0 * fa.N * nb * sizeof(F) + low_update_bytes(fa.update, fa.N, fa.outer),
                        "the dense factors (" + std::to_string(fa.N) + " x " + std::to_string(fa.N) + ")");
    if (one_kernel_allowed() && small_fits<F>(c, fa.N)) {
      const int how_code = opt.factorization == dense_factorization::cholesky ? 2 : want_chol ? 0 : 1;
      factor_small<T, F>(c, a.data(), n, sc, fa, how_code, false);
      return;
    }
    fa.f = c.allocate<F>(static_cast<std::size_t>(fa.N) * fa.N);
    auto fill = [&] {
      pad_copy_kernel<T, F><<<blocks_for(long(fa.N) * fa.N), threads, 0, c.stream()>>>(a.data(), n, n, fa.f.data(), fa.N, sc);
      LA_CHECK_LAUNCH(c.stream());
    };
    fill();
    if (want_chol) {
      factor_cholesky(c, fa);
      if (fa.info == 0 || opt.factorization == dense_factorization::cholesky) return;
      fill();  // automatic: not positive definite after all; LU instead
    }
    factor_lu(c, fa);
  }

  std::string auto_note;  // factor_precision "auto": what the plan chose and why

  /// factor_precision "auto": fp64 below opt.auto_mixed_from (or for float), 3xTF32 factors
  /// refined to fp64 from there; the condition estimate then decides the refinement
  /// (dense_device.cu, after the factorization).
  void resolve_auto_precision() {
    if (opt.factor_precision != "auto") return;
    if (!std::is_same_v<T, double>) {
      opt.factor_precision = "working";
      auto_note = "auto: float factors in float";
    } else if (n < opt.auto_mixed_from) {
      opt.factor_precision = "working";
      auto_note = "auto chose fp64: n = " + std::to_string(n) + " is below " + std::to_string(opt.auto_mixed_from) +
                  ", where float factors and refinement do not pay";
    } else {
      opt.factor_precision = "tf32x3";
      auto_note = "auto chose 3xTF32 factors refined to fp64: n = " + std::to_string(n) + " >= " +
                  std::to_string(opt.auto_mixed_from);
    }
  }

  /// The plan may take the single-kernel path: the caller left the block widths to it.
  bool one_kernel_allowed() const { return opt.block == 0 && opt.outer_block == 0; }

  /// Small n in working precision: A measured and factored in one kernel (dense_small.cuh),
  /// one synchronization. False where the plan takes the blocked path (then nothing is done).
  bool factor_in_one_kernel() {
    context& c = *ctx;
    const std::string& fp = opt.factor_precision;
    const bool working = fp == "working" || (std::is_same_v<T, double> ? fp == "fp64" : fp == "fp32");
    if (!working || !one_kernel_allowed()) return false;
    const double t0 = now_seconds();
    nb = choose_block(c, n, 0, sizeof(T));
    full.n = n, full.nb = nb, full.N = (n + nb - 1) / nb * nb, full.outer = nb;
    if (!small_fits<T>(c, full.N)) return false;
    full.gemm = "auto";
    const int how_code = opt.factorization == dense_factorization::automatic ? 0 : opt.factorization == dense_factorization::lu ? 1 : 2;
    const small_result r = factor_small<T, T>(c, a.data(), n, 1.0, full, how_code, true);
    if (r.non_finite) throw invalid_argument("dense_solver: A has " + std::to_string(r.non_finite) + " entries that are NaN or infinite");
    a_inf = r.a_inf, a_one = r.a_one, a_max = r.a_max;
    symmetric_positive_diagonal = r.symmetric != 0;
    mixed = false;
    status.bad_column = full.info;
    chol = full.chol;
    precision = std::is_same_v<T, double> ? "double, one kernel" : "float, one kernel";
    how = chol ? "Cholesky" : "LU with partial pivoting";
    seconds = now_seconds() - t0;
    return true;
  }

  void factor() {
    context& c = *ctx;
    const double t0 = now_seconds();
    const bool want_chol = opt.factorization == dense_factorization::cholesky ||
                           (opt.factorization == dense_factorization::automatic && symmetric_positive_diagonal);
    nb = choose_block(c, n, opt.block, sizeof(T));
    const std::string& fp = opt.factor_precision;
    mixed = std::is_same_v<T, double> && fp != "working" && fp != "fp64";
    if (!std::is_same_v<T, double> && fp != "working" && fp != "fp32")
      throw invalid_argument("dense_solver: factor_precision '" + fp + "' refines to double; a float solver factors in float (working)");
    if (mixed && fp != "tf32x3" && fp != "tf32" && fp != "fp32" && fp != "fp16" && fp != "bf16")
      throw invalid_argument("dense_solver: unknown factor_precision '" + fp +
                             "'; choose auto, working, fp64, tf32x3, fp32, tf32, bf16 or fp16");
    if (mixed) {
      // float's range: scale A by a power of two so its largest entry is near 1 (the
      // refinement works on the unscaled A).
      scale = a_max > 0 ? std::ldexp(1.0, -std::ilogb(a_max)) : 1.0;
      factor_into(low, fp, want_chol, scale);
      status.bad_column = low.info;
      chol = low.chol;
      precision = low.small      ? "float, one kernel (" + fp + " asked: at this size there is no trailing update for it)"
                  : fp == "fp32" ? "float"
                  : fp == "tf32" ? "float, TF32 Tensor Core updates"
                  : fp == "fp16" ? "float, fp16 Tensor Core updates"
                  : fp == "bf16" ? "float, bf16 Tensor Core updates"
                                 : "float, 3xTF32 Tensor Core updates";
      if (low.info != 0) {
        // The low-precision factorization broke down (a pivot lost to rounding, or a
        // Cholesky pivot that rounding made non-positive): fp64 decides whether A is singular.
        const std::string why = "refactored: the " + precision + " factorization broke down at column " + std::to_string(low.info);
        refactor_full();
        refactored_at_factor = true;
        precision = full_name() + " (" + why + ")";
      }
    } else {
      factor_into(full, std::is_same_v<T, double> ? opt.gemm : std::string("auto"), want_chol, 1.0);
      status.bad_column = full.info;
      chol = full.chol;
      precision = std::is_same_v<T, double> ? "double, fp64 Tensor Cores" : "float";
    }
    how = chol ? "Cholesky" : "LU with partial pivoting";
    seconds = now_seconds() - t0;
  }

  std::string full_name() const { return full.small ? "double, one kernel" : "double, fp64 Tensor Cores"; }

  /// Mixed precision stalled: the working-precision factors.
  void refactor_full() {
    mixed = false;
    low = factors<float>{};
    low64 = factors<double>{};
    factor_into(full, opt.gemm, chol, 1.0);
    status.bad_column = full.info;
    precision = full_name() + " (refactored: the mixed-precision refinement stalled)";
  }
};


}  // namespace la
