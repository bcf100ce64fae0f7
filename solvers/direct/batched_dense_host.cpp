// la::batched_dense_solver on the host (batched_dense.hpp): the oracle of the GPU's kernels,
// the same algorithms row-major in place (LU with partial pivoting, the first largest |a_rj| as
// the pivot; right-looking Cholesky on the lower triangle), the systems spread over the host's
// threads; each solve checked by its residual in double.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <la/parallel.hpp>
#include <la/solvers/direct/detail/batched_impl.hpp>

namespace la {

/// f(i, scratch) for every system, on the host's threads (each with its own scratch).
template <typename T>
template <typename F>
void batched_dense_solver<T>::impl::for_systems(F&& fn) const {
  const std::size_t count = sizes.size();
  const int threads = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(thread_count()), std::max<std::size_t>(count, 1)));
  detail::parallel_for(threads, [&](int t) {
    std::vector<T> scratch;
    for (std::size_t i = static_cast<std::size_t>(t); i < count; i += static_cast<std::size_t>(threads)) fn(i, scratch);
  });
}

template <typename T>
void batched_dense_solver<T>::impl::factor_host() {
  const auto t0 = batched_detail::clock_type::now();
  const std::size_t count = sizes.size();
  f = a;
  piv.assign(static_cast<std::size_t>(r_off[count]), 0);
  finfo.assign(count, 0), chol.assign(count, 0), ainf.assign(count, 0);
  for_systems([&](std::size_t i, std::vector<T>&) { factor_one(i); });
  factor_seconds = batched_detail::since(t0);
}

/// System i's factorization in place in f (row-major), as the GPU's: the checks, ||A||_inf,
/// Cholesky where asked or where automatic finds A_i symmetric with a positive diagonal (LU
/// from A_i again where a pivot is not positive), LU with partial pivoting (the first
/// largest |a_rj| as the pivot).
template <typename T>
void batched_dense_solver<T>::impl::factor_one(std::size_t i) {
  const index_t n = sizes[i];
  const T* ai = a.data() + a_off[i];
  T* m = f.data() + a_off[i];
  bool finite = true, sym = true;
  double norm = 0;
  for (index_t r = 0; r < n; ++r) {
    double sum = 0;
    for (index_t c = 0; c < n; ++c) {
      const T v = ai[r * n + c];
      finite = finite && std::isfinite(static_cast<double>(v));
      sym = sym && (c <= r || v == ai[c * n + r]) && (r != c || v > T(0));
      sum += std::abs(static_cast<double>(v));
    }
    norm = std::max(norm, sum);
  }
  ainf[i] = norm;
  if (!finite) {
    finfo[i] = batched_detail::info_non_finite;
    return;
  }
  const dense_factorization how = opt.factorization;
  if (how == dense_factorization::cholesky || (how == dense_factorization::automatic && sym)) {
    finfo[i] = cholesky_rows(m, n);
    chol[i] = finfo[i] == 0 || how == dense_factorization::cholesky;
    if (finfo[i] == 0 || how == dense_factorization::cholesky) return;
    std::copy(ai, ai + static_cast<std::size_t>(n) * n, m);
  }
  finfo[i] = lu_rows(m, n, piv.data() + r_off[i]);
}

template <typename T>
int batched_dense_solver<T>::impl::lu_rows(T* m, index_t n, index_t* p) {
  for (index_t j = 0; j < n; ++j) {
    index_t q = j;
    T big = std::abs(m[j * n + j]);
    for (index_t r = j + 1; r < n; ++r)
      if (std::abs(m[r * n + j]) > big) big = std::abs(m[r * n + j]), q = r;
    p[j] = q;
    if (!(big > T(0))) return static_cast<int>(j + 1);
    if (q != j) std::swap_ranges(m + j * n, m + (j + 1) * n, m + q * n);
    const T inv = T(1) / m[j * n + j];
    const T* rj = m + j * n;
    for (index_t r = j + 1; r < n; ++r) {
      T* rr = m + r * n;
      const T l = rr[j] * inv;
      rr[j] = l;
      if (l != T(0))
        for (index_t c = j + 1; c < n; ++c) rr[c] -= l * rj[c];
    }
  }
  return 0;
}

template <typename T>
int batched_dense_solver<T>::impl::cholesky_rows(T* m, index_t n) {  // right-looking, the lower triangle, as the GPU's
  for (index_t j = 0; j < n; ++j) {
    const T d = m[j * n + j];
    if (!(d > T(0))) return static_cast<int>(j + 1);
    const T root = std::sqrt(d), inv = T(1) / root;
    m[j * n + j] = root;
    for (index_t r = j + 1; r < n; ++r) m[r * n + j] *= inv;
    for (index_t r = j + 1; r < n; ++r) {
      const T l = m[r * n + j];
      T* rr = m + r * n;
      for (index_t c = j + 1; c <= r; ++c) rr[c] -= l * m[c * n + j];
    }
  }
  return 0;
}

template <typename T>
void batched_dense_solver<T>::impl::solve_host(T* b, index_t k, batched_dense_report& rep) {
  for_systems([&](std::size_t i, std::vector<T>& scratch) { solve_one(i, b, k, rep, scratch); });
}

/// System i's block of B (n x k, row-major) in place: the pivots, the two triangular sweeps
/// over whole rows of B, then the residual against A_i in double and the backward error.
template <typename T>
void batched_dense_solver<T>::impl::solve_one(std::size_t i, T* b, index_t k, batched_dense_report& rep, std::vector<T>& b0) const {
  const index_t n = sizes[i];
  T* x = b + r_off[i] * k;
  const std::size_t nk = static_cast<std::size_t>(n) * static_cast<std::size_t>(k);
  b0.assign(x, x + nk);
  int status = finfo[i];
  if (status == 0 && !std::all_of(b0.begin(), b0.end(), [](T v) { return std::isfinite(static_cast<double>(v)); }))
    status = batched_detail::info_non_finite;
  double err = NAN;
  if (status == 0) {
    const T* m = f.data() + a_off[i];
    const T* ai = a.data() + a_off[i];
    auto row = [&](index_t r) { return x + static_cast<std::size_t>(r) * k; };
    if (!chol[i]) {
      const index_t* p = piv.data() + r_off[i];
      for (index_t j = 0; j < n; ++j)
        if (p[j] != j) std::swap_ranges(row(j), row(j) + k, row(p[j]));
    }
    for (index_t j = 0; j < n; ++j) {  // L y = P b
      if (chol[i])
        for (index_t c = 0; c < k; ++c) row(j)[c] /= m[j * n + j];
      for (index_t r = j + 1; r < n; ++r) {
        const T l = m[r * n + j];
        if (l != T(0))
          for (index_t c = 0; c < k; ++c) row(r)[c] -= l * row(j)[c];
      }
    }
    for (index_t j = n; j-- > 0;) {  // U x = y, or L^T x = y
      for (index_t c = 0; c < k; ++c) row(j)[c] /= m[j * n + j];
      for (index_t r = 0; r < j; ++r) {
        const T u = chol[i] ? m[j * n + r] : m[r * n + j];
        if (u != T(0))
          for (index_t c = 0; c < k; ++c) row(r)[c] -= u * row(j)[c];
      }
    }
    double rmax = 0, xmax = 0, bmax = 0;
    bool finite = true;
    for (index_t r = 0; r < n; ++r)
      for (index_t c = 0; c < k; ++c) {
        double sum = static_cast<double>(b0[static_cast<std::size_t>(r) * k + c]);
        for (index_t j = 0; j < n; ++j) sum -= static_cast<double>(ai[r * n + j]) * static_cast<double>(row(j)[c]);
        const double xv = static_cast<double>(row(r)[c]);
        finite = finite && std::isfinite(xv) && std::isfinite(sum);
        rmax = std::max(rmax, std::abs(sum)), xmax = std::max(xmax, std::abs(xv));
        bmax = std::max(bmax, std::abs(static_cast<double>(b0[static_cast<std::size_t>(r) * k + c])));
      }
    if (!finite) {
      status = batched_detail::info_non_finite;
    } else {
      const double den = ainf[i] * xmax + bmax;
      err = den > 0 ? rmax / den : (rmax > 0 ? INFINITY : 0.0);
      if (!(err <= tolerance())) status = batched_detail::info_check;
    }
  }
  if (status != 0) std::fill(x, x + nk, static_cast<T>(NAN));
  rep.info[i] = status, rep.backward_error[i] = err;
}

std::string batched_dense_report::message_of(index_t i) const {
  LA_EXPECTS(i >= 0 && static_cast<std::size_t>(i) < info.size(), "batched_dense_report: no system " + std::to_string(i));
  const int v = info[static_cast<std::size_t>(i)];
  if (v == 0) return "solved (backward error " + std::to_string(backward_error[static_cast<std::size_t>(i)]) + ")";
  if (v == batched_detail::info_non_finite) return "A, b or x holds a NaN or infinity";
  if (v == batched_detail::info_check) return "x misses the backward-error check (A singular to working precision?)";
  return "no usable pivot in column " + std::to_string(v) + " (LU: A is singular; Cholesky asked for: not positive definite)";
}

#define LA_BATCHED_HOST(T)                                                                                          \
  template void batched_dense_solver<T>::impl::factor_host();                                                     \
  template void batched_dense_solver<T>::impl::solve_host(T*, index_t, batched_dense_report&);
LA_BATCHED_HOST(float)
LA_BATCHED_HOST(double)
#undef LA_BATCHED_HOST

}  // namespace la
