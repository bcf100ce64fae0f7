// The FSAI host factor (solvers/fsai.hpp), the oracle a GPU setup will be compared with: a
// hand-checked small case, the defining properties on random and real SPD matrices, the
// errors for matrices that are not SPD, and the iterations it saves in a plain host PCG.
#include <cmath>
#include <random>

#include <la/formats/matrix_market.hpp>
#include <la/kernels/reference/spmv.hpp>
#include <la/solvers/fsai.hpp>
#include "test_util.hpp"

namespace la {
namespace {

/// (G A) and (G A G^T) entry (i, j) in double, from the CSR arrays.
double ga(const csr_matrix<double>& g, const csr_matrix<double>& a, index_t i, index_t j) {
  double s = 0;
  for (index_t k = g.row_ptr()[i]; k < g.row_ptr()[i + 1]; ++k) {
    const index_t c = g.col_idx()[k];
    for (index_t l = a.row_ptr()[c]; l < a.row_ptr()[c + 1]; ++l)
      if (a.col_idx()[l] == j) s += g.values()[k] * a.values()[l];
  }
  return s;
}
double gagt_diag(const csr_matrix<double>& g, const csr_matrix<double>& a, index_t i) {
  double s = 0;
  for (index_t k = g.row_ptr()[i]; k < g.row_ptr()[i + 1]; ++k) s += g.values()[k] * ga(g, a, i, g.col_idx()[k]);
  return s;
}

/// Checks the defining properties of G on every row: lower triangular with the diagonal,
/// (G A)_ij = 0 for j in row i's pattern other than i, (G A G^T)_ii = 1. Tolerance: the
/// small solves run in long double, the check sums in double over a row of G times a row
/// of A: 1e-10 relative to the row's magnitude.
void expect_fsai(const csr_matrix<double>& g, const csr_matrix<double>& a, const std::string& what) {
  int bad = 0;
  for (index_t i = 0; i < a.rows() && bad < 3; ++i) {
    const index_t b = g.row_ptr()[i], e = g.row_ptr()[i + 1];
    ASSERT_GT(e, b) << what << ": row " << i << " of G is empty";
    EXPECT_EQ(g.col_idx()[e - 1], i) << what << ": row " << i << " does not end at the diagonal";
    double scale = 0;
    for (index_t k = b; k < e; ++k) scale = std::max(scale, std::abs(g.values()[k]));
    for (index_t k = b; k + 1 < e; ++k) {
      const double v = ga(g, a, i, g.col_idx()[k]);
      if (!(std::abs(v) <= 1e-10 * scale * (1 + std::abs(ga(g, a, i, i))))) {
        ++bad;
        ADD_FAILURE() << what << ": (G A)(" << i << "," << g.col_idx()[k] << ") = " << v;
      }
    }
    const double d = gagt_diag(g, a, i);
    if (!(std::abs(d - 1) <= 1e-10)) ++bad, ADD_FAILURE() << what << ": (G A G^T)(" << i << "," << i << ") = " << d;
  }
}

TEST(Fsai, HandCheckedTridiagonal) {
  // A = tridiag(-1, 2, -1), 3 x 3. Row 0: 1/sqrt(2). Row 1: A[0..1, 0..1]^-1 e_1 = (1/3, 2/3),
  // scaled by 1/sqrt(2/3). Row 2: the same block shifted, (1/3, 2/3) / sqrt(2/3) on columns 1, 2.
  const csr_matrix<double> a(3, 3, {0, 2, 5, 7}, {0, 1, 0, 1, 2, 1, 2}, {2, -1, -1, 2, -1, -1, 2});
  const auto g = fsai_factor(a);
  ASSERT_EQ(g.nnz(), 5);
  EXPECT_EQ(std::vector<index_t>(g.col_idx().begin(), g.col_idx().end()), (std::vector<index_t>{0, 0, 1, 1, 2}));
  const double s = std::sqrt(1.5);
  const std::vector<double> want{1 / std::sqrt(2.0), s / 3, 2 * s / 3, s / 3, 2 * s / 3};
  for (std::size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(g.values()[k], want[k], 1e-15) << k;
  // A diagonal matrix: G = diag(1 / sqrt(a_ii)), the Jacobi scaling.
  const auto d = fsai_factor(csr_matrix<double>(2, 2, {0, 1, 2}, {0, 1}, {4, 9}));
  EXPECT_DOUBLE_EQ(d.values()[0], 0.5);
  EXPECT_DOUBLE_EQ(d.values()[1], 1.0 / 3);
}

TEST(Fsai, PropertiesOnGeneratedAndRealSystems) {
  for (const std::string name : {"gen:poisson2d:20", "gen:poisson3d:6", "bcsstk09.mtx", "gr_30_30.mtx"}) {
    const csr_matrix<double> a = name == "gen:poisson2d:20" ? poisson_2d<double>(20)
                                 : name == "gen:poisson3d:6" ? poisson_3d<double>(6)
                                                             : read_matrix_market_csr<double>(std::string(LA_DATA_DIR) + "/" + name);
    const auto lower = fsai_factor(a);
    expect_fsai(lower, a, name + " tril(A)");
    count_t tril = 0;
    for (index_t i = 0; i < a.rows(); ++i)
      for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) tril += a.col_idx()[k] <= i;
    EXPECT_EQ(lower.nnz(), tril) << name;
    const auto squared = fsai_factor(a, {fsai_pattern::lower_squared, 0.0});
    expect_fsai(squared, a, name + " tril(|A|^2)");
    EXPECT_GT(squared.nnz(), lower.nnz()) << name;
    const auto dropped = fsai_factor(a, {fsai_pattern::lower_squared, 0.5});
    expect_fsai(dropped, a, name + " tril(|A|^2), drop 0.5");
    EXPECT_LE(dropped.nnz(), squared.nnz()) << name;
    EXPECT_GE(dropped.nnz(), lower.nnz()) << name;
  }
}

TEST(Fsai, MatricesThatAreNotSpdAreRefused) {
  // A zero diagonal, an indefinite 2 x 2 block, a rectangular matrix, a bad drop.
  test::expect_throw_with<invalid_argument>(
      [] { fsai_factor(csr_matrix<double>(2, 2, {0, 1, 2}, {1, 0}, {1, 1})); }, {"A(1,1)", "not symmetric positive definite"});
  test::expect_throw_with<invalid_argument>(
      [] { fsai_factor(csr_matrix<double>(2, 2, {0, 2, 4}, {0, 1, 0, 1}, {1, 2, 2, 1})); },
      {"row 2", "not symmetric positive definite"});
  test::expect_throw_with<invalid_argument>([] { fsai_factor(csr_matrix<double>(2, 3, {0, 1, 2}, {0, 1}, {1, 1})); },
                                            {"2 x 3", "square"});
  test::expect_throw_with<invalid_argument>(
      [] { fsai_factor(csr_matrix<double>(1, 1, {0, 1}, {0}, {1}), {fsai_pattern::lower_squared, -1}); }, {"drop"});
}

/// Plain PCG in double with M^-1 = G^T G (G empty: no preconditioner); the iterations to
/// ||r|| <= 1e-8 ||b||.
int pcg_iterations(const csr_matrix<double>& a, const csr_matrix<double>* g) {
  const std::size_t n = static_cast<std::size_t>(a.rows());
  std::vector<double> x(n, 0), r(n, 1.0), z(n), p(n), q(n), t(n);
  auto dot = [](const std::vector<double>& u, const std::vector<double>& v) {
    long double s = 0;
    for (std::size_t i = 0; i < u.size(); ++i) s += static_cast<long double>(u[i]) * v[i];
    return static_cast<double>(s);
  };
  auto precondition = [&] {
    if (!g) return void(z = r);
    reference::spmv(1.0, *g, r, 0.0, t);
    std::fill(z.begin(), z.end(), 0.0);  // z = G^T t: row i of G scatters G_ij t_i into z_j
    for (index_t i = 0; i < g->rows(); ++i)
      for (index_t k = g->row_ptr()[i]; k < g->row_ptr()[i + 1]; ++k) z[g->col_idx()[k]] += g->values()[k] * t[i];
  };
  const double stop = 1e-8 * std::sqrt(dot(r, r));
  precondition();
  p = z;
  double rz = dot(r, z);
  for (int it = 1; it <= 20000; ++it) {
    reference::spmv(1.0, a, p, 0.0, q);
    const double alpha = rz / dot(p, q);
    for (std::size_t i = 0; i < n; ++i) x[i] += alpha * p[i], r[i] -= alpha * q[i];
    if (std::sqrt(dot(r, r)) <= stop) return it;
    precondition();
    const double rz_new = dot(r, z);
    for (std::size_t i = 0; i < n; ++i) p[i] = z[i] + rz_new / rz * p[i];
    rz = rz_new;
  }
  return -1;
}

TEST(Fsai, CutsIterationsOnRealSystems) {
  // bcsstk09 (structural, not an M-matrix) and 2D Poisson: FSAI on tril(A) needs fewer
  // iterations than no preconditioner, and tril(|A|^2) fewer still.
  for (const std::string name : {"bcsstk09.mtx", "gen:poisson2d:40"}) {
    const csr_matrix<double> a = name == "gen:poisson2d:40" ? poisson_2d<double>(40)
                                                             : read_matrix_market_csr<double>(std::string(LA_DATA_DIR) + "/" + name);
    const auto g1 = fsai_factor(a);
    const auto g2 = fsai_factor(a, {fsai_pattern::lower_squared, 0.0});
    const int none = pcg_iterations(a, nullptr), lower = pcg_iterations(a, &g1), squared = pcg_iterations(a, &g2);
    ASSERT_GT(none, 0) << name;
    ASSERT_GT(lower, 0) << name;
    ASSERT_GT(squared, 0) << name;
    EXPECT_LT(lower, none) << name;
    EXPECT_LT(squared, lower) << name;
    std::printf("%s: CG %d iterations, FSAI tril(A) %d, tril(|A|^2) %d\n", name.c_str(), none, lower, squared);
  }
}

}  // namespace
}  // namespace la
