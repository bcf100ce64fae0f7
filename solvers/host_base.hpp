// What the host backends of every Krylov method share (host_backend.hpp's CG, bicgstab.hpp,
// gmres.hpp): the matrix in any of the eight formats, the checks, scale-safe norms, M^-1
// (Jacobi here, the others from precond.hpp), the true residual and the history. Sequential
// loops (CSR's own, the reference kernels for the other formats), dots and row sums in double,
// norms in wider_t: the oracle for the GPU backends and the path of a machine without one.
#pragma once

#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <la/kernels/reference/blas1.hpp>
#include <la/kernels/reference/spmv.hpp>
#include <la/solvers/krylov.hpp>
#include <la/solvers/precond.hpp>

namespace la {

namespace detail {
/// Diagonal of a matrix, read from its own storage (no conversion, no copy of the matrix).
/// Duplicates cannot occur in these formats; COO duplicates on the diagonal are summed.
template <typename T, typename O>
std::vector<T> diagonal(const csr_matrix<T, O>& a) {
  std::vector<T> d(static_cast<std::size_t>(std::min(a.rows(), a.cols())), T(0));
  for (index_t i = 0; i < static_cast<index_t>(d.size()); ++i)
    for (O k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      if (a.col_idx()[k] == i) d[i] = a.values()[k];
  return d;
}
template <typename T, typename O>
std::vector<T> diagonal(const csc_matrix<T, O>& a) {
  std::vector<T> d(static_cast<std::size_t>(std::min(a.rows(), a.cols())), T(0));
  for (index_t j = 0; j < static_cast<index_t>(d.size()); ++j)
    for (O k = a.col_ptr()[j]; k < a.col_ptr()[j + 1]; ++k)
      if (a.row_idx()[k] == j) d[j] = a.values()[k];
  return d;
}
template <typename T>
std::vector<T> diagonal(const coo_matrix<T>& a) {
  std::vector<T> d(static_cast<std::size_t>(std::min(a.rows(), a.cols())), T(0));
  for (count_t k = 0; k < a.nnz(); ++k)
    if (a.row_idx()[k] == a.col_idx()[k]) d[a.row_idx()[k]] += a.values()[k];
  return d;
}
template <typename T>
std::vector<T> diagonal(const ell_matrix<T>& a) {
  std::vector<T> d(static_cast<std::size_t>(std::min(a.rows(), a.cols())), T(0));
  for (index_t k = 0; k < a.width(); ++k)
    for (index_t i = 0; i < static_cast<index_t>(d.size()); ++i) {
      const std::size_t s = static_cast<std::size_t>(k) * a.rows() + i;
      if (a.col_idx()[s] == i) d[i] = a.values()[s];
    }
  return d;
}
template <typename T, typename O>
std::vector<T> diagonal(const jds_matrix<T, O>& a) {
  std::vector<T> d(static_cast<std::size_t>(std::min(a.rows(), a.cols())), T(0));
  for (index_t q = 0; q < a.num_diagonals(); ++q)
    for (O k = a.diag_ptr()[q]; k < a.diag_ptr()[q + 1]; ++k) {
      const index_t i = a.perm()[k - a.diag_ptr()[q]];
      if (a.col_idx()[k] == i && i < static_cast<index_t>(d.size())) d[i] = a.values()[k];
    }
  return d;
}
template <typename T>
std::vector<T> diagonal(const hyb_matrix<T>& a) {
  std::vector<T> d = diagonal(a.ell());
  const auto& c = a.coo();
  for (count_t k = 0; k < c.nnz(); ++k)
    if (c.row_idx()[k] == c.col_idx()[k] && c.row_idx()[k] < static_cast<index_t>(d.size()))
      d[c.row_idx()[k]] = c.values()[k];
  return d;
}
template <typename T, typename O>
std::vector<T> diagonal(const sell_matrix<T, O>& a) {
  std::vector<T> d(static_cast<std::size_t>(std::min(a.rows(), a.cols())), T(0));
  const count_t C = a.slice_height();
  for (count_t s = 0; s < a.slices(); ++s)
    for (O q = a.slice_ptr()[s]; q < a.slice_ptr()[s + 1]; ++q) {
      const count_t k = s * C + (q - a.slice_ptr()[s]) % C;
      if (k < a.rows() && a.col_idx()[q] == a.perm()[k] && a.perm()[k] < static_cast<index_t>(d.size()))
        d[a.perm()[k]] = a.values()[q];
    }
  return d;
}
template <typename T>
std::vector<T> diagonal(const dense_matrix<T>& a) {
  std::vector<T> d(static_cast<std::size_t>(std::min(a.rows(), a.cols())), T(0));
  for (index_t i = 0; i < static_cast<index_t>(d.size()); ++i) d[i] = a(i, i);
  return d;
}
template <typename T>
std::string first_non_finite(const std::vector<T>& v, const char* what) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(static_cast<double>(v[i])))
      return std::string(what) + " holds a non-finite value (" + std::to_string(static_cast<double>(v[i])) +
             ") at entry " + std::to_string(i + 1) + " (1-based)";
  return {};
}
}  // namespace detail

namespace detail {
/// The host path's inner loops in double (float values accumulate in double too): several
/// running sums, so the compiler keeps them in vector registers, where wider_t's long double
/// runs on the x87 unit one term at a time. They set the host solver's speed per iteration
/// (bench/history/defaults-the-host-solver-and-the-sanitiz.md, "The host solver against scipy").
///
/// The dot is compensated (Kahan's summation on four lanes): its sum keeps about as many digits
/// as the long double one it replaced, so the iteration counts of rounding-sensitive systems
/// (BiCGSTAB on adder_dcop_05) stay where PETSc's are; the extra adds hide under the loads.
template <typename T>
double compensated_dot(const T* x, const T* y, std::size_t n) {
  double s[4] = {0, 0, 0, 0}, c[4] = {0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int l = 0; l < 4; ++l) {
      const double v = static_cast<double>(x[i + l]) * y[i + l] - c[l];
      const double t = s[l] + v;
      c[l] = (t - s[l]) - v;
      s[l] = t;
    }
  double tail = 0;
  for (; i < n; ++i) tail += static_cast<double>(x[i]) * y[i];
  return ((s[0] + s[1]) + (s[2] + s[3])) - ((c[0] + c[1]) + (c[2] + c[3])) + tail;
}
/// x'y with four plain running sums: for GMRES's projections, which its second Gram-Schmidt
/// pass corrects, so they need no compensation (and cost a quarter of the compensated dot's adds).
template <typename T>
double plain_dot(const T* x, const T* y, std::size_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += static_cast<double>(x[i]) * y[i];
    s1 += static_cast<double>(x[i + 1]) * y[i + 1];
    s2 += static_cast<double>(x[i + 2]) * y[i + 2];
    s3 += static_cast<double>(x[i + 3]) * y[i + 3];
  }
  for (; i < n; ++i) s0 += static_cast<double>(x[i]) * y[i];
  return (s0 + s1) + (s2 + s3);
}
/// y = A x (CSR), each row summed in double; with `dot`, also returns x'y (CG's q = A p, p'q).
template <typename T, typename O>
double csr_multiply(const csr_matrix<T, O>& a, const T* x, T* y, bool dot) {
  const O* rp = a.row_ptr().data();
  const index_t* ci = a.col_idx().data();
  const T* v = a.values().data();
  double d = 0;
  for (index_t i = 0; i < a.rows(); ++i) {
    double s = 0;
    for (O k = rp[i]; k < rp[i + 1]; ++k) s += static_cast<double>(v[k]) * x[ci[k]];
    y[i] = static_cast<T>(s);
    if (dot) d += static_cast<double>(x[i]) * y[i];
  }
  return d;
}
/// r = b - A x (CSR).
template <typename T, typename O>
void csr_residual(const csr_matrix<T, O>& a, const T* b, const T* x, T* r) {
  const O* rp = a.row_ptr().data();
  const index_t* ci = a.col_idx().data();
  const T* v = a.values().data();
  for (index_t i = 0; i < a.rows(); ++i) {
    double s = static_cast<double>(b[i]);
    for (O k = rp[i]; k < rp[i + 1]; ++k) s -= static_cast<double>(v[k]) * x[ci[k]];
    r[i] = static_cast<T>(s);
  }
}
}  // namespace detail

/// The shared part of the host backends: everything but the method's own steps.
template <typename Matrix>
class host_base {
 public:
  using value_type = typename Matrix::value_type;
  using T = value_type;
  using vector = std::vector<T>;
  /// The host reads its control block for free: a chunk may be as long as the loop likes.
  static constexpr std::int64_t largest_chunk = std::int64_t(1) << 20;

  /// `spd`: the method needs an SPD M^-1 (CG), so Jacobi needs a positive diagonal; the
  /// others need a non-zero one.
  host_base(const Matrix& a, preconditioner pc, const precond_options& popt, bool spd)
      : a_(a), pc_(pc), form_(form_of(pc)), popt_(popt), spd_(spd) {
    if (form_ == precond_form::diagonal) {
      const auto t0 = std::chrono::steady_clock::now();
      diag_ = detail::diagonal(a_);  // once per solve, outside the iteration
      inv_diag_.resize(diag_.size());
      // For the methods other than CG a zero (or missing) diagonal entry is taken as 1, as
      // PETSc's PCJACOBI does; CG refuses it (check_preconditioner).
      for (std::size_t i = 0; i < diag_.size(); ++i) {
        inv_diag_[i] = diag_[i] != T(0) || spd_ ? T(1) / diag_[i] : T(1);
        zero_diag_ += diag_[i] == T(0);
      }
      rep_.setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
  }

  index_t size() const { return a_.rows(); }

  std::string check_input(const vector& b, const vector& x) const {
    if (a_.rows() != a_.cols())
      return "matrix is " + std::to_string(a_.rows()) + " x " + std::to_string(a_.cols()) +
             "; the Krylov solvers need a square matrix";
    if (b.size() != static_cast<std::size_t>(a_.rows()))
      return "right-hand side has " + std::to_string(b.size()) + " entries, matrix has " + std::to_string(a_.rows()) + " rows";
    if (x.size() != b.size()) return "initial guess has " + std::to_string(x.size()) + " entries, expected " + std::to_string(b.size());
    return {};
  }
  std::string check_values(const vector& b, const vector& x) const {
    for (const std::string& why : {matrix_non_finite(), detail::first_non_finite(b, "right-hand side"),
                                   detail::first_non_finite(x, "initial guess")})
      if (!why.empty()) return why;
    return {};
  }

  std::string matrix_non_finite() const {
    if constexpr (Matrix::kind == format::hyb) {
      const std::string e = detail::first_non_finite(a_.ell().values(), "matrix (ELL part)");
      return e.empty() ? detail::first_non_finite(a_.coo().values(), "matrix (COO part)") : e;
    } else if constexpr (Matrix::kind == format::csr) {
      for (index_t i = 0; i < a_.rows(); ++i)
        for (auto k = a_.row_ptr()[i]; k < a_.row_ptr()[i + 1]; ++k)
          if (!std::isfinite(static_cast<double>(a_.values()[k])))
            return "matrix holds a non-finite value (" + std::to_string(static_cast<double>(a_.values()[k])) +
                   ") at A(" + std::to_string(i + 1) + "," + std::to_string(a_.col_idx()[k] + 1) + ")";
      return {};
    } else {
      return detail::first_non_finite(a_.values(), "matrix");
    }
  }

  /// Builds the preconditioner; "" or why it does not exist for this matrix (Jacobi needs a
  /// positive diagonal for CG, a non-zero one otherwise; the others say what failed:
  /// precond.hpp).
  std::string check_preconditioner() {
    rep_.kind = pc_;
    if (form_ == precond_form::apart && popt_.host_prebuilt) {  // la::host_solver's, built once
      LA_EXPECTS(popt_.prebuilt_value_size == sizeof(T),
                 "precond_options::host_prebuilt holds a preconditioner of another value type");
      pre_.emplace(*static_cast<const host_preconditioner<T>*>(popt_.host_prebuilt.get()));
      rep_ = pre_->report();
      return {};
    }
    if (form_ == precond_form::apart) {
      const auto t0 = std::chrono::steady_clock::now();
      try {
        if constexpr (Matrix::kind == format::csr) pre_.emplace(a_, pc_, popt_);
        else pre_.emplace(to_csr<count_t>(a_), pc_, popt_);
      } catch (const invalid_argument& e) {
        return e.what();
      }
      rep_ = pre_->report();
      rep_.setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      return {};
    }
    if (form_ == precond_form::identity) return {};
    rep_.bytes = 2.0 * diag_.size() * sizeof(T);
    if (spd_)
      for (std::size_t i = 0; i < diag_.size(); ++i)
        if (!(diag_[i] > T(0))) return detail::jacobi_message(static_cast<long long>(i), static_cast<double>(diag_[i]), true);
    if (zero_diag_ > 0) rep_.detail = detail::jacobi_zero_note(zero_diag_);
    return {};
  }

  precond_report describe_preconditioner() const { return rep_; }

  /// In wider_t, square root included: no under- or overflow for double's range.
  double nrm2(const vector& v) const {
    wider_t<T> s = 0;
    for (const T& x : v) s += static_cast<wider_t<T>>(x) * x;
    return static_cast<double>(std::sqrt(s));
  }
  void set_zero(vector& x) const { std::fill(x.begin(), x.end(), T(0)); }
  void scale(vector& x, double s) const {
    for (T& v : x) v = static_cast<T>(v * s);
  }
  vector scaled_copy(const vector& b, double s) const {
    vector c(b);
    scale(c, s);
    return c;
  }
  void history(std::int64_t first, std::int64_t last, std::vector<double>& out) const {
    for (std::int64_t i = first; i <= last; ++i) out.push_back(history_[static_cast<std::size_t>(i - 1)]);
  }
  double residual_norm(const vector& b, const vector& x) {
    vector r(b.size());
    residual(b, x, r);
    return nrm2(r);
  }
  void record_history(bool on) { opt_history_ = on; }

 protected:
  static double dot(const vector& x, const vector& y) { return detail::compensated_dot(x.data(), y.data(), x.size()); }
  void residual(const vector& b, const vector& x, vector& r) {
    if constexpr (Matrix::kind == format::csr) {
      r.resize(b.size());
      detail::csr_residual(a_, b.data(), x.data(), r.data());
    } else {
      r = b;
      reference::spmv(T(-1), a_, x, T(1), r, acc_);
    }
  }
  /// y = A x.
  void multiply(const vector& x, vector& y) {
    if constexpr (Matrix::kind == format::csr) detail::csr_multiply(a_, x.data(), y.data(), false);
    else reference::spmv(T(1), a_, x, T(0), y, acc_);
  }
  /// y = A x, and x'y.
  double multiply_dot(const vector& x, vector& y) {
    if constexpr (Matrix::kind == format::csr) return detail::csr_multiply(a_, x.data(), y.data(), true);
    multiply(x, y);
    return dot(x, y);
  }
  /// z = M^-1 r.
  void precondition(const vector& r, vector& z) const {
    if (pre_) pre_->apply(r, z);
    else if (form_ == precond_form::identity) z = r;
    else
      for (std::size_t i = 0; i < r.size(); ++i) z[i] = inv_diag_[i] * r[i];
  }
  void record(const cg_control& c, const cg_limits& l) {
    if (opt_history_) history_.push_back(cg_relative(c, l));
  }

  const Matrix& a_;
  preconditioner pc_;
  precond_form form_;  // how pc_ is applied (its registry entry's)
  precond_options popt_;
  bool spd_;
  std::optional<host_preconditioner<T>> pre_;  // form apart: the entry's host builder's
  precond_report rep_;
  std::vector<T> diag_, inv_diag_;
  long long zero_diag_ = 0;  // diagonal entries taken as 1 (not CG)
  cg_control c_;
  cg_limits lim_;
  bool opt_history_ = false;
  std::vector<double> history_;
  reference::accumulator<T> acc_;
};

}  // namespace la
