// What the CG benchmarks (cg_bench, precond_bench) share: their option and --systems
// parsing, how a system is loaded (a .mtx file, or a gen: spec of the SpMV suite), the true
// residual of a peer's answer, and the matrix in Eigen's form.
#pragma once

#include <Eigen/Sparse>

#include <memory>
#include <string>
#include <vector>

#include <la/error.hpp>
#include <la/formats/convert.hpp>
#include <la/formats/elasticity.hpp>
#include <la/formats/matrix_market.hpp>
#include <la/kernels/reference/blas1.hpp>
#include <la/kernels/reference/spmv.hpp>
#include <la/kernels/detail/vendor/spmv_suite.hpp>
#include <la/solvers/device_precond.hpp>
#include <la/event_timer.hpp>

namespace la::bench {

/// The comma-separated items of s (empty items dropped).
inline std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t b = 0;
  while (b <= s.size()) {
    const std::size_t e = std::min(s.find(',', b), s.size());
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

/// A system: a Matrix Market file (".mtx") or a generator spec (poisson2d:N, ...).
template <typename T>
csr_matrix<T> load(const std::string& spec) {
  if (spec.size() > 4 && spec.substr(spec.size() - 4) == ".mtx") return to_csr(read_matrix_market<T>(spec));
  return cli::generated_matrix<T>(spec);
}

/// An elasticity2d:N or elasticity3d:N system's node coordinates into AMG's options (its
/// rigid-body modes), as la solve attaches them; other systems are left as they were.
inline void attach_coordinates(const std::string& spec, amg_options& o) {
  for (int d : {2, 3}) {
    const std::string kind = "elasticity" + std::to_string(d) + "d:";
    const auto at = spec.find(kind);
    if (at == std::string::npos) continue;
    o.coordinates = std::make_shared<const std::vector<double>>(
        elasticity_coordinates(d, static_cast<index_t>(std::stoi(spec.substr(at + kind.size())))));
    o.coordinate_dim = d;
  }
}

/// A system's name in tables: the file name without its folder, or the gen: spec.
inline std::string system_name(const std::string& spec) {
  return spec.find('/') != std::string::npos ? spec.substr(spec.rfind('/') + 1) : spec;
}

/// The value of option argv[i] (argv[i + 1], and i moves past it).
inline std::string option_value(int argc, char** argv, int& i) {
  if (i + 1 >= argc) throw invalid_argument(std::string(argv[i]) + " needs a value");
  return argv[++i];
}

/// ||b - A x|| / ||b|| with the host reference kernels (sums in wider_t<T>).
template <typename T, typename O>
double true_residual(const csr_matrix<T, O>& a, const std::vector<T>& b, const std::vector<T>& x) {
  std::vector<T> r = b;
  reference::spmv(T(-1), a, x, T(1), r);
  return double(reference::nrm2(r)) / double(reference::nrm2(b));
}

/// The matrix as Eigen's row-major sparse matrix.
template <typename T, typename O>
Eigen::SparseMatrix<T, Eigen::RowMajor> to_eigen(const csr_matrix<T, O>& a) {
  std::vector<Eigen::Triplet<T>> t;
  t.reserve(static_cast<std::size_t>(a.nnz()));
  for (index_t i = 0; i < a.rows(); ++i)
    for (O k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) t.emplace_back(i, a.col_idx()[k], a.values()[k]);
  Eigen::SparseMatrix<T, Eigen::RowMajor> m(a.rows(), a.cols());
  m.setFromTriplets(t.begin(), t.end());
  return m;
}

/// A preconditioner spec: NAME or NAME+FACT+SOLVE for ic0 and ilu0 (FACT auto, exact, sweeps
/// or sweepsK; SOLVE auto, exact, isai, jacobi or jacobiK). Plain ic0/ilu0 name the GPU's defaults
/// (sweeps, isai) explicitly, so the host oracle builds the same.
inline bool factor_spec(const std::string& spec, std::string& name, precond_options& o) {
  const auto plus = spec.find('+');
  name = spec.substr(0, plus);
  if (name == "amg" && plus != std::string::npos) {  // amg+coarseN: AMG with coarse size N; amg+scalar: no near-null space; amg+w: the W-cycle
    const std::string rest = spec.substr(plus + 1);
    if (rest == "scalar") return o.amg.use_near_null = false, true;
    if (rest == "w") return o.amg.cycle = amg_cycle::w, true;
    if (rest.rfind("coarse", 0) != 0 || rest.size() == 6) return false;
    o.amg.coarse_size = static_cast<index_t>(std::stoi(rest.substr(6)));
    return true;
  }
  if (name != "ic0" && name != "ilu0") return plus == std::string::npos;
  if (plus == std::string::npos) return true;
  const std::string rest = spec.substr(plus + 1);
  const auto p2 = rest.find('+');
  const std::string f = rest.substr(0, p2), t = p2 == std::string::npos ? "auto" : rest.substr(p2 + 1);
  auto number = [](const std::string& s, std::size_t at) { return at < s.size() ? std::stoi(s.substr(at)) : 0; };
  if (f == "auto") o.factor.method = factorization::automatic;
  else if (f == "exact") o.factor.method = factorization::exact;
  else if (f.rfind("sweeps", 0) == 0) o.factor.sweeps = number(f, 6);
  else return false;
  if (t == "auto") o.factor.solve = trisolve::automatic;
  else if (t == "exact") o.factor.solve = trisolve::exact;
  else if (t == "isai") o.factor.solve = trisolve::isai;
  else if (t.rfind("jacobi", 0) == 0) o.factor.solve = trisolve::jacobi, o.factor.jacobi_steps = number(t, 6);
  else return false;
  return true;
}

/// Whether the host oracle builds what the GPU does (no automatic factor choices, which
/// resolve differently on the host).
inline bool oracle_comparable(const precond_options& o) {
  return o.factor.method != factorization::automatic && o.factor.solve != trisolve::automatic;
}

/// A preconditioner's costs in products with A on the GPU: its setup and one apply, each
/// divided by the time of one registry SpMV with A (the mean of 20, after a warm-up).
struct apply_costs {
  double setup_spmvs = 0, apply_spmvs = 0, factor_spmvs = 0;
};
inline apply_costs measure_costs(context& ctx, const device_csr<double>& a, preconditioner pc, const precond_options& o) {
  apply_costs c;
  const device_preconditioner<double> m(ctx, a, pc, o);
  spmv_plan<double> plan(ctx, spmv_view(a));
  device_vector<double> x(ctx, a.rows()), y(ctx, a.rows());
  LA_CUDA_TRY(cudaMemsetAsync(x.data(), 0, sizeof(double) * x.size(), ctx.stream()));
  event_timer t;
  auto timed = [&](auto&& f) {
    f();
    return 1e-3 * t.time_ms(ctx.stream(), [&] { for (int k = 0; k < 20; ++k) f(); }) / 20;  // seconds
  };
  const double spmv = timed([&] { plan.run(x.data(), y.data(), 1.0, 0.0, ctx.stream()); });
  const double apply = timed([&] { m.apply(x.data(), y.data(), ctx.stream()); });
  c.apply_spmvs = apply / spmv;
  c.setup_spmvs = m.report().setup_seconds / spmv;
  c.factor_spmvs = m.report().factor_seconds / spmv;
  return c;
}

}  // namespace la::bench
