// la::sparse_direct_solver's calls (sparse_direct_solver.hpp): the analysis and the fronts'
// symbols (fronts.cpp) made once, the numeric factorization and solve on the GPU (factor.cu,
// solve.cu) or, for a solver made without a context, on the host's threads (fronts_host.cpp),
// refactor() on the kept symbols.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include <la/error.hpp>
#include <la/memory.hpp>
#include <la/parallel.hpp>
#include <la/solvers/direct/dense_host.hpp>
#include <la/solvers/method.hpp>
#include <la/solvers/sparse_direct/detail/solver_impl.hpp>

namespace la {
using namespace sparse_detail;

void sparse_direct_solver::impl::analyze(bool matched) {
  const double before = t_analyze;
  bool lu_unmatched = false;
  // The automatic ordering weighs the analysis's time against the factorization's at this
  // side's speed: the GPU's (2e11 multiply-adds a second) or the host's (1e9 a thread).
  const double rate = host ? 1e9 * host_threads : 2e11;
  try {
    sym = sparse_detail::build_fronts(a, matched, opt.ordering, rate, matched ? nullptr : opt.pattern_analysis.get());
  } catch (const invalid_argument& e) {
    // The matching's search budget (a pattern its augmenting paths wander): a zero-free
    // diagonal needs no matching, static pivoting on the rows as they are; else no sparse LU.
    bool zero_free = matched;
    for (index_t i = 0; i < n && zero_free; ++i) {
      const auto b = a.col_idx().begin() + a.row_ptr()[i], en = a.col_idx().begin() + a.row_ptr()[i + 1];
      const auto it = std::lower_bound(b, en, i);
      zero_free = it != en && *it == i && a.values()[static_cast<std::size_t>(it - a.col_idx().begin())] != 0;
    }
    if (!zero_free)
      throw invalid_argument(std::string("sparse direct solver: ") + e.what() +
                             " (the sparse LU needs the matching where A's diagonal has zeros; the dense LU with partial "
                             "pivoting does not)");
    sym = sparse_detail::build_fronts(a, false, opt.ordering, rate);
    lu_unmatched = true;
  }
  if (lu_unmatched) sym.spd = false;
  t_analyze = before + sym.seconds;
  singular = sym.singular;
  spd = sym.spd;
  unmatched_lu = lu_unmatched;
  // Blocked (the GEMM path, one front after another) above big_front rows where the level has
  // few fronts, above 4 big_front always: a level of many medium fronts runs faster as one
  // launch of a block each (132 SMs busy) than front by front.
  level_big.assign(sym.levels(), {});
  level_small.clear();
  small_ptr.assign(1, 0);
  for (std::size_t l = 0; l < sym.levels(); ++l) {
    const bool few = sym.level_ptr[l + 1] - sym.level_ptr[l] < 64;
    for (std::size_t e = sym.level_ptr[l]; e < sym.level_ptr[l + 1]; ++e) {
      const int m = sym.f_m[static_cast<std::size_t>(sym.level_list[e])];
      if (m > 4 * opt.big_front || (few && m > opt.big_front)) level_big[l].push_back(sym.level_list[e]);
      else level_small.push_back(sym.level_list[e]);
    }
    small_ptr.push_back(level_small.size());
  }
  solve_split.clear();
  split_ptr.assign(1, 0);
  split_below.assign(sym.levels(), 0), split_own.assign(sym.levels(), 0), level_m.assign(sym.levels(), 0);
  for (std::size_t l = 0; l < sym.levels(); ++l) {
    for (std::size_t e = sym.level_ptr[l]; e < sym.level_ptr[l + 1]; ++e)
      level_m[l] = std::max(level_m[l], sym.f_m[static_cast<std::size_t>(sym.level_list[e])]);
    for (std::size_t e = sym.level_ptr[l]; e < sym.level_ptr[l + 1] && level_m[l] > sparse_detail::warp_front_rows; ++e) {
      const auto s = static_cast<std::size_t>(sym.level_list[e]);
      if (!sparse_detail::split_solve(sym.f_m[s], sym.f_nc[s], long(opt.big_front) * opt.big_front)) continue;
      solve_split.push_back(sym.level_list[e]);
      split_below[l] = std::max(split_below[l], sym.f_m[s] - sym.f_nc[s]), split_own[l] = std::max(split_own[l], sym.f_nc[s]);
    }
    split_ptr.push_back(solve_split.size());
  }
}

void sparse_direct_solver::impl::init(const csr_matrix<double, count_t>& a, sparse_direct_options o) {
  LA_EXPECTS(a.rows() == a.cols(), "sparse direct solver: A is " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) +
                                       "; a direct solve needs a square matrix");
  LA_EXPECTS(o.big_front >= 1, "sparse direct solver: big_front must be at least 1");
  LA_EXPECTS(o.gmres_restart >= 1, "sparse direct solver: gmres_restart must be at least 1");
  LA_EXPECTS(o.max_refinement >= 0, "sparse direct solver: max_refinement must not be negative");
  impl& p = *this;
  p.opt = std::move(o);
  p.a = a;
  p.n = a.rows();
  for (double v : a.values())
    if (!std::isfinite(v)) throw invalid_argument("sparse direct solver: A holds NaN or infinite values");
  p.a_inf = p.row_sum_max();
  // Symmetric with a positive diagonal: tried without matching or pivoting first.
  const bool sym_pos = p.opt.factorization == sparse_factorization::spd ||
                       (p.opt.factorization == sparse_factorization::automatic && properties_of(a, false, true).looks_spd());
  p.analyze(!sym_pos);
  if (p.singular == 0 && p.n > 0 && !p.host) p.upload_symbols();
}

sparse_direct_solver::sparse_direct_solver(context& ctx, const csr_matrix<double, count_t>& a, sparse_direct_options o)
    : p_(std::make_unique<impl>()) {
  p_->ctx = &ctx;
  p_->init(a, std::move(o));
}

sparse_direct_solver::sparse_direct_solver(const csr_matrix<double, count_t>& a, sparse_direct_options o, int threads)
    : p_(std::make_unique<impl>()) {
  p_->host = true;
  p_->host_threads = thread_count(threads);
  p_->init(a, std::move(o));
}

sparse_direct_solver::~sparse_direct_solver() = default;
sparse_direct_solver::sparse_direct_solver(sparse_direct_solver&&) noexcept = default;
sparse_direct_solver& sparse_direct_solver::operator=(sparse_direct_solver&&) noexcept = default;

void sparse_direct_solver::factor() {
  impl& p = *p_;
  if (p.n == 0 || (p.singular && !p.factored && p.sym.an.n == 0)) return;  // structurally singular: nothing to factor
  auto numeric = [&] { p.host ? p.numeric_host() : p.numeric(); };
  numeric();
  if (p.singular && p.spd && p.opt.factorization == sparse_factorization::automatic) {
    // A pivot that is not positive: not SPD after all; the matched LU instead.
    p.analyze(true);
    if (p.singular == 0) {
      if (!p.host) p.upload_symbols();
      numeric();
    }
  }
}

void sparse_direct_solver::refactor(const csr_matrix<double, count_t>& a) {
  impl& p = *p_;
  LA_EXPECTS(a.rows() == p.n && a.cols() == p.n && a.row_ptr() == p.a.row_ptr() && a.col_idx() == p.a.col_idx(),
             "sparse direct solver: refactor() needs A's pattern (the same row pointers and column indices); "
             "a new pattern needs a new solver");
  for (double v : a.values())
    if (!std::isfinite(v)) throw invalid_argument("sparse direct solver: A holds NaN or infinite values");
  p.a = a;
  p.a_inf = p.row_sum_max();
  p.factored = false;
  // The first factorization's steps on the new values: the SPD path where they still look SPD
  // (its symbols depend on the pattern only: kept), else the matched LU, whose matching,
  // scalings and pivot threshold depend on the values (made again).
  const bool sym_pos = p.opt.factorization == sparse_factorization::spd ||
                       (p.opt.factorization == sparse_factorization::automatic && properties_of(a, false, true).looks_spd());
  const bool keep_symbols = sym_pos && p.spd && p.sym.an.n == p.n && p.sym.singular == 0;
  if (!keep_symbols) {
    p.analyze(!sym_pos);
    if (p.singular == 0 && p.n > 0 && !p.host) p.upload_symbols();
  } else {
    p.singular = 0;
    if (!p.host && p.n > 0)
      LA_CUDA_TRY(cudaMemcpyAsync(p.aval.data(), a.values().data(), sizeof(double) * a.values().size(),
                                  cudaMemcpyHostToDevice, p.ctx->stream()));
  }
  factor();
}

bool sparse_direct_solver::ok() const noexcept { return p_->singular == 0; }
index_t sparse_direct_solver::singular_column() const noexcept { return p_->singular; }
index_t sparse_direct_solver::perturbed() const noexcept { return p_->perturbed; }
bool sparse_direct_solver::matched() const noexcept { return !p_->spd && !p_->unmatched_lu; }
const sparse_analysis& sparse_direct_solver::analysis() const noexcept { return p_->sym.an; }
std::size_t sparse_direct_solver::fronts() const noexcept { return p_->sym.f_m.size(); }
std::size_t sparse_direct_solver::levels() const noexcept { return p_->sym.level_ptr.empty() ? 0 : p_->sym.level_ptr.size() - 1; }
double sparse_direct_solver::front_bytes() const noexcept { return double(p_->sym.front_total) * 8; }
double sparse_direct_solver::analyze_seconds() const noexcept { return p_->t_analyze; }
double sparse_direct_solver::factor_seconds() const noexcept { return p_->t_factor; }
std::string sparse_direct_solver::description() const {
  const impl& p = *p_;
  char buf[200];
  std::snprintf(buf, sizeof buf, "supernodal multifrontal %s (%s), %zu fronts in %zu levels, %.3g MB of fronts",
                p.spd ? "L D L^T" : "LU",
                p.spd            ? "no pivoting: A symmetric with a positive diagonal"
                : p.unmatched_lu ? "static pivoting on A's rows: the matching gave up, the diagonal is zero-free"
                                 : "static pivoting after a max-product matching",
                fronts(), levels(), front_bytes() / 1e6);
  return std::string(buf) + (p.host ? " on " + std::to_string(p.host_threads) + " host thread" + (p.host_threads == 1 ? "" : "s") : std::string(" on the GPU"));
}

void sparse_direct_solver::impl::numeric_host() {
  const auto t0 = clock_type::now();
  check_host_memory(8.0 * double(sym.front_total), "the sparse factorization's fronts (" + std::to_string(sym.f_m.size()) +
                                                         " fronts, " + std::to_string(sym.front_total) + " entries: " +
                                                         sym.an.summary() + ")");
  index_t pert = 0, bad = 0;
  // One thread below 1e6 multiply-adds: starting the others costs more there (bcsstk02, 66
  // rows: 0.34 ms on one thread, 0.50 on two or sixteen, the 2-core host).
  const int t = sym.an.factor_flops < 1e6 ? 1 : host_threads;
  hF = sparse_detail::factor_fronts_threaded(sym, a.values(), t, pert, bad);
  singular = bad, perturbed = pert;
  factored = true;
  t_factor = since(t0);
}

sparse_direct_report sparse_direct_solver::impl::solve_host(std::vector<double>& b, index_t k) {
  const auto t0 = clock_type::now();
  const auto nn = static_cast<std::size_t>(n);
  std::vector<sparse_direct_report> one(static_cast<std::size_t>(k));
  std::vector<char> open(static_cast<std::size_t>(k), 1);  // columns the block solve leaves to the one-column path
  if (k > 1) {
    // The columns through the fronts together (solve_fronts_host_columns: each front read once
    // for all k), refined by classical block steps while every open column's measures halve;
    // a column that stops short of the refinement's targets takes the one-column path below
    // (classical, then GMRES-based).
    std::vector<double> x(b);
    solve_fronts_host_columns(sym, hF, x.data(), k);
    std::vector<double> be(static_cast<std::size_t>(k)), rel(be.size());
    const std::vector<int> steps = detail::refine_columns(
        refine_rule_of(opt), nn, static_cast<std::size_t>(k), x, be, rel, open,
        [&](std::size_t c, double* r, double& cbe, double& crel) {
          std::vector<double> xc(x.begin() + static_cast<std::ptrdiff_t>(c * nn), x.begin() + static_cast<std::ptrdiff_t>((c + 1) * nn));
          std::vector<double> rc(nn);
          cbe = residual_host(a, a_inf, b.data() + c * nn, xc, rc, crel);
          std::copy(rc.begin(), rc.end(), r);
        },
        [&](double* r) { solve_fronts_host_columns(sym, hF, r, k); });
    for (std::size_t c = 0; c < static_cast<std::size_t>(k); ++c) {
      if (open[c]) continue;
      one[c].refinement_steps = steps[c], one[c].backward_error = be[c], one[c].relative_residual = rel[c];
      std::copy(x.begin() + static_cast<std::ptrdiff_t>(c * nn), x.begin() + static_cast<std::ptrdiff_t>((c + 1) * nn),
                b.begin() + static_cast<std::ptrdiff_t>(c * nn));
    }
  }
  // One column at a time (a single right-hand side, or the columns the block solve left):
  // shared out over the host's threads, each with its own refinement's buffers.
  std::vector<index_t> left;
  for (index_t c = 0; c < k; ++c)
    if (open[static_cast<std::size_t>(c)]) left.push_back(c);
  const int t = static_cast<int>(std::min<std::size_t>(left.size(), static_cast<std::size_t>(host_threads)));
  if (!left.empty())
    detail::parallel_for(std::max(t, 1), [&](int w) {
      std::vector<double> x(nn);
      sparse_detail::host_refinement work(a, a_inf, sym, hF, opt);
      for (std::size_t i = static_cast<std::size_t>(w); i < left.size(); i += static_cast<std::size_t>(std::max(t, 1))) {
        double* bc = b.data() + static_cast<std::size_t>(left[i]) * nn;
        one[static_cast<std::size_t>(left[i])] = work.solve(bc, x);
        std::copy(x.begin(), x.end(), bc);
      }
    });
  sparse_direct_report rep;
  for (const sparse_direct_report& o : one) {
    rep.refinement_steps = std::max(rep.refinement_steps, o.refinement_steps);
    rep.gmres_iterations += o.gmres_iterations;
    rep.backward_error = std::max(rep.backward_error, o.backward_error);
    rep.relative_residual = std::max(rep.relative_residual, o.relative_residual);
  }
  rep.seconds = since(t0);
  return rep;
}

double sparse_direct_solver::impl::row_sum_max() const {
  double m = 0;
  for (index_t i = 0; i < n; ++i) {
    double s = 0;
    for (count_t q = a.row_ptr()[i]; q < a.row_ptr()[i + 1]; ++q) s += std::abs(a.values()[q]);
    m = std::max(m, s);
  }
  return m;
}

double sparse_direct_solver::condition_estimate() const {
  const impl& p = *p_;
  if (!p.host || !p.factored || p.singular) return std::nan("");
  double a1 = 0;
  std::vector<double> col(static_cast<std::size_t>(p.n), 0.0);
  for (std::size_t q = 0; q < p.a.values().size(); ++q) col[static_cast<std::size_t>(p.a.col_idx()[q])] += std::abs(p.a.values()[q]);
  for (double c : col) a1 = std::max(a1, c);
  auto solve = [&](double* v) { sparse_detail::solve_fronts_host(p.sym, p.hF, v); };
  auto solve_t = [&](double* v) { sparse_detail::solve_fronts_host(p.sym, p.hF, v, true); };
  return a1 * inverse_norm1_estimate<double>(p.n, solve, solve_t);
}

}  // namespace la
