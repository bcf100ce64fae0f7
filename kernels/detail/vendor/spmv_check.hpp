// Checking a GPU SpMV result against the host reference, shared by `la spmv` and
// `la bench spmv`: y_i must be within (k_i + 2) eps sum_j |a_ij x_j| of the reference (k_i
// entries in row i), a bound for any summation order.
#pragma once

#include <cmath>
#include <limits>
#include <vector>

#include <la/formats/csr.hpp>
#include <la/formats/generate.hpp>
#include <la/kernels/reference/spmv.hpp>

namespace la::cli {

/// x with entries in [-1, -0.01] U [0.01, 1] (fixed seed).
template <typename T>
std::vector<T> spmv_input(index_t n) {
  detail::splitmix g{7};
  std::vector<T> x(static_cast<std::size_t>(n));
  for (T& e : x) e = g.value<T>();
  return x;
}

template <typename T, typename O>
class spmv_check {
 public:
  spmv_check(const csr_matrix<T, O>& a, const std::vector<T>& x) : want_(static_cast<std::size_t>(a.rows())) {
    reference::spmv(T(1), a, x, T(0), want_);
    tol_.assign(want_.size(), 0.0);
    for (index_t i = 0; i < a.rows(); ++i) {
      double mag = 0;
      for (O k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) mag += std::abs(double(a.values()[k]) * x[a.col_idx()[k]]);
      tol_[i] = (double(a.row_ptr()[i + 1] - a.row_ptr()[i]) + 2) * std::numeric_limits<T>::epsilon() * mag;
    }
  }
  /// The largest error as a multiple of its row's tolerance (infinite for NaN): <= 1 passes.
  double worst(const std::vector<T>& got) const {
    double w = 0;
    for (std::size_t i = 0; i < want_.size(); ++i) {
      const double e = std::abs(double(got[i]) - double(want_[i]));
      if (std::isnan(e)) return INFINITY;  // an unwritten (poisoned) or NaN result
      w = std::max(w, e == 0 ? 0.0 : e / (tol_[i] + 1e-300));
    }
    return w;
  }

 private:
  std::vector<T> want_;
  std::vector<double> tol_;
};

}  // namespace la::cli
