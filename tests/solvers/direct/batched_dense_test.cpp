// la::batched_dense_solver: the host oracle against a long double elimination, statuses inside
// a batch (singular, not positive definite, non-finite A or b), variable sizes, several
// right-hand sides; the GPU against the host oracle (the same statuses, pivots and
// factorizations chosen, x to rounding), on both kernels' paths (the system in shared memory
// and in global memory), and reruns bit-identical.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include <la/solvers/batched_dense.hpp>

#include "test_util.hpp"

namespace la {
namespace {

/// A random n x n system: entries in [-1, 1], plus `shift` on the diagonal (0: as drawn).
template <typename T>
void random_matrix(T* a, index_t n, std::mt19937& g, double shift) {
  std::uniform_real_distribution<double> u(-1, 1);
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < n; ++j) a[i * n + j] = static_cast<T>(u(g) + (i == j ? shift : 0.0));
}
/// A random SPD n x n matrix: M M^T / n + I.
template <typename T>
void spd_matrix(T* a, index_t n, std::mt19937& g) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> m(static_cast<std::size_t>(n) * n);
  for (double& v : m) v = u(g);
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j <= i; ++j) {
      double s = i == j ? 1.0 : 0.0;
      for (index_t p = 0; p < n; ++p) s += m[i * n + p] * m[j * n + p] / n;
      a[i * n + j] = a[j * n + i] = static_cast<T>(s);
    }
}

/// x = A^-1 b in long double (Gaussian elimination with partial pivoting), b n x k row-major.
std::vector<long double> reference_solve(const double* a, const double* b, index_t n, index_t k) {
  std::vector<long double> m(a, a + static_cast<std::size_t>(n) * n), x(b, b + static_cast<std::size_t>(n) * k);
  for (index_t j = 0; j < n; ++j) {
    index_t p = j;
    for (index_t r = j + 1; r < n; ++r)
      if (std::fabs(m[r * n + j]) > std::fabs(m[p * n + j])) p = r;
    for (index_t c = 0; c < n; ++c) std::swap(m[j * n + c], m[p * n + c]);
    for (index_t c = 0; c < k; ++c) std::swap(x[j * k + c], x[p * k + c]);
    for (index_t r = j + 1; r < n; ++r) {
      const long double l = m[r * n + j] / m[j * n + j];
      for (index_t c = j; c < n; ++c) m[r * n + c] -= l * m[j * n + c];
      for (index_t c = 0; c < k; ++c) x[r * k + c] -= l * x[j * k + c];
    }
  }
  for (index_t j = n; j-- > 0;)
    for (index_t c = 0; c < k; ++c) {
      long double s = x[j * k + c];
      for (index_t q = j + 1; q < n; ++q) s -= m[j * n + q] * x[q * k + c];
      x[j * k + c] = s / m[j * n + j];
    }
  return x;
}

/// A batch: `sizes`, A packed, B packed (k columns), with what each member is.
struct batch {
  std::vector<index_t> sizes;
  std::vector<double> a, b;
  std::vector<long long> a_off, b_off;
};
batch make_batch(const std::vector<index_t>& sizes, index_t k, std::mt19937& g, bool spd) {
  batch t;
  t.sizes = sizes;
  long long ao = 0, bo = 0;
  for (index_t n : sizes) {
    t.a_off.push_back(ao), t.b_off.push_back(bo);
    ao += static_cast<long long>(n) * n, bo += static_cast<long long>(n) * k;
  }
  t.a.resize(static_cast<std::size_t>(ao)), t.b.resize(static_cast<std::size_t>(bo));
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    // Every third one ill-conditioned (no diagonal shift); the rest shifted by sqrt(n).
    if (spd) spd_matrix(t.a.data() + t.a_off[i], sizes[i], g);
    else random_matrix(t.a.data() + t.a_off[i], sizes[i], g, i % 3 == 0 ? 0.0 : std::sqrt(double(sizes[i])));
  }
  std::uniform_real_distribution<double> u(-1, 1);
  for (double& v : t.b) v = u(g);
  return t;
}

template <typename T>
std::vector<T> as(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

// The host oracle: every member solved, x as a long double elimination's to the system's
// condition, the backward error reported and small; several right-hand sides; awkward sizes.
TEST(BatchedDense, HostSolvesEveryMemberAsLongDoubleElimination) {
  std::mt19937 g(3);
  const index_t k = 3;
  for (bool spd : {false, true}) {
    const batch t = make_batch({1, 8, 31, 33, 64, 2, 31}, k, g, spd);
    batched_dense_solver<double> s(t.sizes, t.a.data());
    std::vector<double> x = t.b;
    const batched_dense_report r = s.solve(x.data(), k);
    ASSERT_EQ(r.failed, 0);
    for (std::size_t i = 0; i < t.sizes.size(); ++i) {
      EXPECT_EQ(r.info[i], 0) << i;
      EXPECT_EQ(s.cholesky()[i], spd ? 1 : 0) << i;
      EXPECT_LE(r.backward_error[i], 1e-14) << i;
      const std::vector<long double> want = reference_solve(t.a.data() + t.a_off[i], t.b.data() + t.b_off[i], t.sizes[i], k);
      long double diff = 0, scale = 0;
      for (std::size_t e = 0; e < want.size(); ++e) {
        diff = std::max(diff, std::fabs(want[e] - x[static_cast<std::size_t>(t.b_off[i]) + e]));
        scale = std::max(scale, std::fabs(want[e]));
      }
      EXPECT_LE(static_cast<double>(diff), 1e-8 * static_cast<double>(scale)) << "system " << i << " (n " << t.sizes[i] << ")";
    }
  }
}

// Statuses inside one batch: a zero column (singular, named), an indefinite symmetric member
// (Cholesky asked for: not positive definite; automatic: LU solves it), NaN in A and in b; the
// others solved, the failed ones' x NaN.
TEST(BatchedDense, StatusesInsideABatchOnTheHost) {
  std::mt19937 g(5);
  const index_t n = 5, count = 6, k = 2;
  std::vector<double> a(static_cast<std::size_t>(count * n * n)), b(static_cast<std::size_t>(count * n * k));
  for (index_t i = 0; i < count; ++i) spd_matrix(a.data() + i * n * n, n, g);
  for (double& v : b) v = 1.0;
  for (index_t r = 0; r < n; ++r) a[static_cast<std::size_t>(1 * n * n + r * n + 2)] = 0;  // system 1: column 3 zero
  // System 2: symmetric, positive diagonal, indefinite ([[1, 2], [2, 1]] in its corner).
  a[static_cast<std::size_t>(2 * n * n + 0 * n + 1)] = a[static_cast<std::size_t>(2 * n * n + 1 * n + 0)] = 5.0;
  a[static_cast<std::size_t>(3 * n * n + 7)] = NAN;                               // system 3: A non-finite
  b[static_cast<std::size_t>(4 * n * k + 3)] = INFINITY;                          // system 4: b non-finite
  for (dense_factorization f : {dense_factorization::automatic, dense_factorization::cholesky, dense_factorization::lu}) {
    batched_dense_options o;
    o.factorization = f;
    batched_dense_solver<double> s(count, n, a.data(), o);
    std::vector<double> x = b;
    const batched_dense_report r = s.solve(x.data(), k);
    EXPECT_EQ(r.info[0], 0);
    EXPECT_EQ(r.info[5], 0);
    EXPECT_GT(r.info[1], 0) << "singular, named by its column";
    EXPECT_LE(r.info[1], 3);
    if (f == dense_factorization::cholesky) EXPECT_GT(r.info[2], 0) << "not positive definite";
    else EXPECT_EQ(r.info[2], 0) << "LU solves the indefinite member";
    if (f == dense_factorization::automatic) EXPECT_EQ(s.cholesky()[2], 0);
    EXPECT_EQ(r.info[3], -1);
    EXPECT_EQ(r.info[4], -1);
    for (index_t i = 0; i < count; ++i)
      for (index_t e = 0; e < n * k; ++e) {
        const double v = x[static_cast<std::size_t>(i * n * k + e)];
        if (r.info[static_cast<std::size_t>(i)] == 0) EXPECT_TRUE(std::isfinite(v)) << i;
        else EXPECT_TRUE(std::isnan(v)) << "system " << i << ": a failed system's x is NaN";
      }
    EXPECT_EQ(r.failed, f == dense_factorization::cholesky ? 4 : 3);
    EXPECT_NE(r.message_of(1).find("column"), std::string::npos);
  }
}

// b scaled by 1e300 and 1e-300 gives x scaled alike (the residual's norms are maxima, which
// neither overflow nor underflow there), and b = 0 gives x = 0 exactly, each solved and checked.
TEST(BatchedDense, ExtremeAndZeroRightHandSidesOnTheHost) {
  std::mt19937 g(9);
  const batch t = make_batch({1, 8, 33}, 2, g, false);
  batched_dense_solver<double> s(t.sizes, t.a.data());
  std::vector<double> x = t.b;
  ASSERT_EQ(s.solve(x.data(), 2).failed, 0);
  for (double scale : {1e300, 1e-300}) {
    std::vector<double> y = t.b;
    for (double& v : y) v *= scale;
    const batched_dense_report r = s.solve(y.data(), 2);
    EXPECT_EQ(r.failed, 0) << scale << ": " << r.message_of(0);
    for (std::size_t e = 0; e < y.size(); ++e) ASSERT_NEAR(y[e] / scale, x[e], 1e-12 * (1 + std::abs(x[e]))) << scale;
    for (double be : r.backward_error) EXPECT_LE(be, 1e-14) << scale;
  }
  std::vector<double> zero(t.b.size(), 0.0);
  const batched_dense_report r = s.solve(zero.data(), 2);
  EXPECT_EQ(r.failed, 0);
  for (double v : zero) ASSERT_EQ(v, 0.0);
}

// A system singular to working precision (not exactly) is answered or flagged, never silently
// wrong: where x is returned, its backward error meets the check.
TEST(BatchedDense, NearlySingularMembersAreCheckedOnTheHost) {
  const index_t n = 12;
  std::vector<double> a(static_cast<std::size_t>(n * n)), b(static_cast<std::size_t>(n), 1.0);
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < n; ++j) a[static_cast<std::size_t>(i * n + j)] = 1.0 / (i + j + 1);  // Hilbert, condition 1e16
  batched_dense_solver<double> s(1, n, a.data());
  std::vector<double> x = b;
  const batched_dense_report r = s.solve(x.data(), 1);
  if (r.info[0] == 0) {  // its backward error, recomputed in long double
    long double worst = 0, xmax = 0, ainf = 0;
    for (index_t i = 0; i < n; ++i) {
      long double sum = b[static_cast<std::size_t>(i)], row = 0;
      for (index_t j = 0; j < n; ++j) {
        sum -= static_cast<long double>(a[static_cast<std::size_t>(i * n + j)]) * x[static_cast<std::size_t>(j)];
        row += std::fabs(static_cast<long double>(a[static_cast<std::size_t>(i * n + j)]));
      }
      worst = std::max(worst, std::fabs(sum)), ainf = std::max(ainf, row);
      xmax = std::max(xmax, std::fabs(static_cast<long double>(x[static_cast<std::size_t>(i)])));
    }
    EXPECT_GT(xmax, 1e6L) << "Hilbert 12: x is large";
    EXPECT_LE(static_cast<double>(worst / (ainf * xmax + 1)), 1000.0 * n * 2.2e-16);
    EXPECT_LE(r.backward_error[0], 1e-15);  // the solver's own (its residual in double: rounding-level)
  } else {
    EXPECT_TRUE(std::isnan(x[0]));
  }
}

// The GPU against the host oracle, double and float, on the shared-memory kernel (n <= 110 in
// double) and the global-memory one (130), with the same statuses, factorizations and pivots
// (so x agrees to rounding), and a rerun bit-identical.
template <typename T>
void gpu_matches_host(const std::vector<index_t>& sizes, bool spd, double tol) {
  context ctx;
  std::mt19937 g(7);
  const index_t k = 2;
  batch t = make_batch(sizes, k, g, spd);
  if (!spd && t.sizes.size() > 2) {  // a singular member: its second column zero
    const index_t n = t.sizes[1];
    for (index_t r = 0; r < n && n > 1; ++r) t.a[static_cast<std::size_t>(t.a_off[1] + r * n + 1)] = 0;
  }
  const std::vector<T> a = as<T>(t.a), b = as<T>(t.b);
  batched_dense_solver<T> host(t.sizes, a.data());
  std::vector<T> xh = b;
  const batched_dense_report rh = host.solve(xh.data(), k);
  device_buffer<T> da = ctx.allocate<T>(a.size()), db = ctx.allocate<T>(b.size());
  LA_CUDA_TRY(cudaMemcpy(da.data(), a.data(), sizeof(T) * a.size(), cudaMemcpyHostToDevice));
  LA_CUDA_TRY(cudaMemcpy(db.data(), b.data(), sizeof(T) * b.size(), cudaMemcpyHostToDevice));
  batched_dense_solver<T> dev(ctx, t.sizes, da.data());
  EXPECT_EQ(dev.factor_info(), host.factor_info());
  EXPECT_EQ(dev.cholesky(), host.cholesky());
  const batched_dense_report rd = dev.solve(db.data(), k);
  std::vector<T> xd(b.size());
  LA_CUDA_TRY(cudaMemcpy(xd.data(), db.data(), sizeof(T) * b.size(), cudaMemcpyDeviceToHost));
  EXPECT_EQ(rd.info, rh.info);
  for (std::size_t i = 0; i < t.sizes.size(); ++i) {
    double diff = 0, scale = 0;
    for (long long e = t.b_off[i]; e < t.b_off[i] + static_cast<long long>(t.sizes[i]) * k; ++e) {
      if (rh.info[i] != 0) {
        EXPECT_TRUE(std::isnan(static_cast<double>(xd[static_cast<std::size_t>(e)])));
        continue;
      }
      diff = std::max(diff, std::abs(double(xd[static_cast<std::size_t>(e)]) - double(xh[static_cast<std::size_t>(e)])));
      scale = std::max(scale, std::abs(double(xh[static_cast<std::size_t>(e)])));
    }
    if (rh.info[i] == 0) {
      EXPECT_LE(diff, tol * scale) << "system " << i << " (n " << t.sizes[i] << ")";
      EXPECT_LE(rd.backward_error[i], 1000.0 * t.sizes[i] * std::numeric_limits<T>::epsilon()) << i;
    }
  }
  // Rerun: the same bits.
  LA_CUDA_TRY(cudaMemcpy(db.data(), b.data(), sizeof(T) * b.size(), cudaMemcpyHostToDevice));
  dev.solve(db.data(), k);
  std::vector<T> again(b.size());
  LA_CUDA_TRY(cudaMemcpy(again.data(), db.data(), sizeof(T) * b.size(), cudaMemcpyDeviceToHost));
  for (std::size_t e = 0; e < again.size(); ++e)
    ASSERT_TRUE(again[e] == xd[e] || (std::isnan(double(again[e])) && std::isnan(double(xd[e])))) << e;
}

TEST(BatchedDense, GpuMatchesTheHostOracle) {
  LA_SKIP_WITHOUT_GPU();
  const bool light = test::under_sanitizer();
  const std::vector<index_t> mixed = light ? std::vector<index_t>{1, 8, 33, 130} : std::vector<index_t>{1, 8, 31, 33, 64, 100, 130, 200};
  for (bool spd : {false, true}) {
    gpu_matches_host<double>(mixed, spd, 1e-9);
    gpu_matches_host<float>(mixed, spd, 2e-2);
  }
  // Many equal small systems (the fixed-size form's shape): 2,000 of n = 8.
  gpu_matches_host<double>(std::vector<index_t>(light ? 64 : 2000, 8), false, 1e-9);
}

// The GPU's statuses inside a batch, as the host's.
TEST(BatchedDense, GpuStatusesInsideABatch) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  std::mt19937 g(5);
  const index_t n = 5, count = 5, k = 1;
  std::vector<double> a(static_cast<std::size_t>(count * n * n)), b(static_cast<std::size_t>(count * n * k), 1.0);
  for (index_t i = 0; i < count; ++i) spd_matrix(a.data() + i * n * n, n, g);
  for (index_t r = 0; r < n; ++r) a[static_cast<std::size_t>(1 * n * n + r * n + 2)] = 0;
  a[static_cast<std::size_t>(2 * n * n + 1)] = a[static_cast<std::size_t>(2 * n * n + n)] = 5.0;
  a[static_cast<std::size_t>(3 * n * n + 7)] = NAN;
  b[static_cast<std::size_t>(4 * n * k + 3)] = NAN;
  for (dense_factorization f : {dense_factorization::automatic, dense_factorization::cholesky}) {
    batched_dense_options o;
    o.factorization = f;
    batched_dense_solver<double> host(count, n, a.data(), o);
    std::vector<double> xh = b;
    const batched_dense_report rh = host.solve(xh.data(), k);
    device_buffer<double> da = ctx.allocate<double>(a.size()), db = ctx.allocate<double>(b.size());
    LA_CUDA_TRY(cudaMemcpy(da.data(), a.data(), sizeof(double) * a.size(), cudaMemcpyHostToDevice));
    LA_CUDA_TRY(cudaMemcpy(db.data(), b.data(), sizeof(double) * b.size(), cudaMemcpyHostToDevice));
    batched_dense_solver<double> dev(ctx, count, n, da.data(), o);
    const batched_dense_report rd = dev.solve(db.data(), k);
    EXPECT_EQ(rd.info, rh.info);
    EXPECT_EQ(rd.failed, rh.failed);
  }
}

}  // namespace
}  // namespace la
