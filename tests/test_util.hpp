// Shared test helpers: random matrices with awkward structure, data paths, GPU skipping.
#pragma once

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <la/formats/convert.hpp>
#include <la/formats/generate.hpp>
#include <la/formats/matrix_market.hpp>
#include <la/context.hpp>
#include <la/kernels/reference/spmv.hpp>

namespace la::test {

/// ||b - A x|| / ||b||, summed in long double (the true residual a solve reports).
inline double true_relres(const csr_matrix<double>& a, const std::vector<double>& b, const std::vector<double>& x) {
  std::vector<double> r = b;
  reference::spmv(-1.0, a, x, 1.0, r);
  long double rr = 0, bb = 0;
  for (std::size_t i = 0; i < r.size(); ++i) rr += (long double)r[i] * r[i], bb += (long double)b[i] * b[i];
  return double(std::sqrt(rr / bb));
}

inline std::string data_dir() { return LA_DATA_DIR; }             // the repository's data/
inline std::string edge_dir() { return LA_TEST_DATA_DIR "/edge"; }  // parser edge cases

/// Skips the current test, with the reason, when no usable GPU is present.
/// True when the test runs under compute-sanitizer (tools/gpu-check.sh sets
/// LA_UNDER_SANITIZER=1 there): the GPU tests then take fewer and smaller cases, every kernel
/// and path still reached, so that memcheck and racecheck of the whole suite finish in about
/// ten minutes (each kernel launch is 10-100x slower under them).
inline bool under_sanitizer() {
  const char* e = std::getenv("LA_UNDER_SANITIZER");
  return e && *e && std::string(e) != "0";
}
/// True under racecheck (gpu-check.sh sets LA_UNDER_SANITIZER to the tool's name): races need
/// threads that share memory, so a 1-row case adds nothing there that memcheck does not check.
inline bool under_racecheck() {
  const char* e = std::getenv("LA_UNDER_SANITIZER");
  return e && std::string(e) == "racecheck";
}

#define LA_SKIP_WITHOUT_GPU()                                                            \
  do {                                                                                   \
    if (!::la::cuda_available()) GTEST_SKIP() << "no GPU: " << ::la::cuda_status();      \
  } while (0)

/// `text` holds one of la's three reasons for having no GPU (no driver or GPU, no GPU, an
/// old driver), rather than the runtime's "driver version is insufficient".
inline bool says_why_no_gpu(const std::string& text) {
  for (const char* reason : {"no NVIDIA driver or GPU was found", "no NVIDIA GPU was found", "driver is older"})
    if (text.find(reason) != std::string::npos) return true;
  return false;
}

/// Nonzero random value in [-1, -0.01] U [0.01, 1] (never 0, so structure is preserved).
template <typename T>
T random_value(std::mt19937& g) {
  if constexpr (is_complex_v<T>) {  // both parts +-[0.01, 1]
    const auto re = random_value<real_of_t<T>>(g);
    return T(re, random_value<real_of_t<T>>(g));
  } else {
    std::uniform_real_distribution<double> u(0.01, 1.0);
    return static_cast<T>(std::bernoulli_distribution(0.5)(g) ? u(g) : -u(g));
  }
}

template <typename T>
std::vector<T> random_vector(std::size_t n, std::mt19937& g) {
  std::vector<T> v(n);
  for (T& x : v) x = random_value<T>(g);
  return v;
}

/// A random m x n CSR matrix: about `per_row` entries a row, row `dense_row` full, every
/// third row empty (when `empty_rows`), values +-[0.01, 1].
inline csr_matrix<double> random_shape(index_t m, index_t n, int per_row, index_t dense_row, bool empty_rows, std::mt19937& g) {
  std::uniform_int_distribution<index_t> col(0, std::max<index_t>(n - 1, 0));
  std::vector<index_t> rp{0}, ci;
  std::vector<double> v;
  for (index_t i = 0; i < m; ++i) {
    std::vector<index_t> cols;
    if (i == dense_row) {
      for (index_t j = 0; j < n; ++j) cols.push_back(j);
    } else if (!(empty_rows && i % 3 == 2) && n > 0) {
      for (int k = 0; k < per_row; ++k) cols.push_back(col(g));
    }
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    for (index_t c : cols) ci.push_back(c), v.push_back(random_value<double>(g));
    rp.push_back(static_cast<index_t>(ci.size()));
  }
  return csr_matrix<double>(m, n, std::move(rp), std::move(ci), std::move(v));
}

struct sparse_shape {
  index_t rows, cols;
  double density;         // chance that an entry is present
  bool empty_rows = true;  // every 5th row empty
  bool empty_cols = true;  // every 7th column empty
  bool dense_row = false;  // row rows/2 full (the long-row case)
};

/// Random CSR matrix (sorted, no duplicates, nonzero values) of the given shape.
template <typename T>
csr_matrix<T> random_csr(const sparse_shape& s, std::mt19937& g) {
  std::bernoulli_distribution present(s.density);
  std::vector<index_t> rp{0}, ci;
  std::vector<T> v;
  for (index_t i = 0; i < s.rows; ++i) {
    const bool full = s.dense_row && i == s.rows / 2;
    if (!full && s.empty_rows && i % 5 == 4) {
      rp.push_back(rp.back());
      continue;
    }
    for (index_t j = 0; j < s.cols; ++j) {
      if (!full && s.empty_cols && j % 7 == 6) continue;
      if (full || present(g)) {
        ci.push_back(j);
        v.push_back(random_value<T>(g));
      }
    }
    rp.push_back(static_cast<index_t>(ci.size()));
  }
  return csr_matrix<T>(s.rows, s.cols, std::move(rp), std::move(ci), std::move(v));
}

/// 2D Poisson (5-point Laplacian) on an n x n grid: SPD, n^2 unknowns.
template <typename T>
csr_matrix<T> poisson_2d(index_t n) {
  return la::poisson_2d<T>(n);
}

/// The value types every typed test runs over.
using value_types = ::testing::Types<float, double>;
/// With the complex ones (issue 69): the tests of what takes them so far (formats, conversions).
using value_types_with_complex = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;

/// A random non-symmetric n x n matrix with a dominant diagonal: each row the diagonal and
/// about `per_row` random columns with values in +-[0.01, 1], the diagonal the sum of the
/// row's other magnitudes + 1 (so ILU(0) exists).
template <typename T>
csr_matrix<T> random_nonsymmetric(index_t n, int per_row, std::mt19937& g) {
  std::uniform_int_distribution<index_t> col(0, n - 1);
  std::vector<index_t> rp{0}, ci;
  std::vector<T> v;
  for (index_t i = 0; i < n; ++i) {
    std::vector<index_t> cols{i};
    for (int k = 0; k < per_row; ++k) cols.push_back(col(g));
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    double off = 0;
    std::size_t d = 0;
    for (index_t c : cols) {
      const double x = random_value<double>(g);
      if (c == i) d = ci.size();
      else off += std::abs(x);
      ci.push_back(c), v.push_back(static_cast<T>(x));
    }
    v[d] = static_cast<T>(off + 1);
    rp.push_back(static_cast<index_t>(ci.size()));
  }
  return csr_matrix<T>(n, n, std::move(rp), std::move(ci), std::move(v));
}

/// A test system by name: "poisson2d:N", "poisson3d:N", or a file in the repository's data/.
inline csr_matrix<double> system_matrix(const std::string& name, const std::string& data_dir) {
  if (name.rfind("poisson2d:", 0) == 0) return poisson_2d<double>(std::stoi(name.substr(10)));
  if (name.rfind("poisson3d:", 0) == 0) return poisson_3d<double>(std::stoi(name.substr(10)));
  if (name.rfind("convdiff2d:", 0) == 0) return convdiff<double>(2, std::stoi(name.substr(11)), 100);
  if (name.rfind("convdiff3d:", 0) == 0) return convdiff<double>(3, std::stoi(name.substr(11)), 100);
  return to_csr(read_matrix_market<double>(data_dir + "/" + name));
}

/// A test-name-safe version of s (letters and digits; everything else becomes '_').
inline std::string test_name(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

/// Expects `f` to throw E whose message contains every string in `parts`.
template <typename E, typename F>
void expect_throw_with(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "expected an exception";
  } catch (const E& e) {
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
        << "message '" << e.what() << "' lacks '" << p << "'";
  }
}

}  // namespace la::test
