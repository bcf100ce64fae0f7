// CG on several GPUs (solvers/distributed/distributed.hpp), one process driving them (run_on_gpus): the
// part generated on the GPU against the host's, the solve against the one-GPU solve (same
// status, iterations within 1%, solutions within the tolerance) on 2 and 4 GPUs,
// preconditioners built on each GPU's block, bit-identical reruns, statuses agreed by every rank, and a failing rank that ends the
// team instead of hanging it. Each test skips, saying why, without NCCL or with fewer GPUs
// than it needs. The MPI launch is tested through the CLI (dist_cli.sh).
#include <cmath>
#include <cstring>
#include <mutex>

#include <la/formats/generate.hpp>
#include <la/kernels/reference/spmv.hpp>
#include <la/solvers/device_cg.hpp>
#include <la/solvers/distributed/distributed.hpp>
#include "test_util.hpp"

namespace la {
namespace {

#define LA_SKIP_WITHOUT_GPUS(n)                                                                         \
  do {                                                                                                  \
    if (!nccl_available()) GTEST_SKIP() << "several GPUs: " << nccl_status();                          \
    if (visible_gpus() < (n))                                                                           \
      GTEST_SKIP() << "needs " << (n) << " GPUs, " << visible_gpus() << " visible (" << cuda_status() << ")"; \
  } while (0)

/// One rank's outcome, kept for the test's thread.
struct rank_result {
  solve_result r;
  std::vector<double> x;  // the rank's slice
  global_index first = 0;
};

/// Solves on `gpus` GPUs: `make` gives rank r's matrix; b = A * ones unless `b` is given
/// (the whole vector). Returns every rank's outcome.
template <typename Make>
std::vector<rank_result> solve_on(int gpus, Make make, const cg_options& opt, const std::vector<double>* b = nullptr,
                                  const dist_cg_options& dopt = {}) {
  std::vector<rank_result> out(static_cast<std::size_t>(gpus));
  run_on_gpus(gpus, [&](dist_comm& comm) {
    dist_matrix<double> A = make(comm);
    const halo_plan& h = A.plan();
    device_vector<double> db =
        b ? to_device(comm.ctx(), std::vector<double>(b->begin() + h.first_row, b->begin() + h.first_row + h.rows))
          : dist_row_sums(comm, A);
    device_vector<double> x = to_device(comm.ctx(), std::vector<double>(static_cast<std::size_t>(h.rows), 0.0));
    rank_result& mine = out[static_cast<std::size_t>(comm.rank())];
    mine.r = cg_distributed(comm, A, db, x, opt, dopt);
    mine.x = to_host(comm.ctx(), x);
    mine.first = h.first_row;
  });
  return out;
}
std::vector<double> whole(const std::vector<rank_result>& parts) {
  std::vector<double> x;
  for (const auto& p : parts) x.insert(x.end(), p.x.begin(), p.x.end());
  return x;
}

/// The one-GPU solve of the same system (b = A * ones unless given).
solve_result one_gpu(const csr_matrix<double>& A, const cg_options& opt, std::vector<double>& x,
                     const std::vector<double>* b = nullptr) {
  context ctx;
  std::vector<double> bh(static_cast<std::size_t>(A.rows()));
  if (b) bh = *b;
  else reference::spmv(1.0, A, std::vector<double>(bh.size(), 1.0), 0.0, bh);
  const auto dA = to_device(ctx, A);
  const auto db = to_device(ctx, bh);
  auto dx = to_device(ctx, std::vector<double>(bh.size(), 0.0));
  const solve_result r = cg_device(ctx, dA, db, dx, opt);
  x = to_host(ctx, dx);
  return r;
}

double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0, n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d += (a[i] - b[i]) * (a[i] - b[i]), n += b[i] * b[i];
  return std::sqrt(d / std::max(n, 1e-300));
}

TEST(Distributed, GeneratedPartEqualsTheHostPart) {
  // dist_matrix::poisson builds each part on its GPU from the stencil; its CSR arrays equal
  // make_part's from poisson_rows, entry for entry, also for parts thinner than a plane.
  LA_SKIP_WITHOUT_GPUS(2);
  for (int gpus : {2, 4}) {
    if (visible_gpus() < gpus) continue;
    for (int dims : {2, 3})
      for (global_index n : {global_index(5), global_index(31)}) {
        SCOPED_TRACE(std::to_string(gpus) + " GPUs, " + std::to_string(dims) + "D, n = " + std::to_string(n));
        const global_index rows = poisson_size(dims, n);
        const auto bounds = even_row_blocks(rows, gpus);
        std::mutex m;
        run_on_gpus(gpus, [&](dist_comm& comm) {
          const auto A = dist_matrix<double>::poisson(comm, dims, n);
          std::vector<std::int64_t> rp;
          std::vector<index_t> ci;
          std::vector<double> v;
          A.download(rp, ci, v);
          const int p = comm.rank();
          const auto g = poisson_rows<double>(dims, n, bounds[p], bounds[p + 1]);
          const auto part = make_part<double, std::int64_t>(p, bounds, rows, g.ptr, g.cols, g.vals);
          std::lock_guard<std::mutex> lock(m);
          EXPECT_EQ(rp, part.local.row_ptr());
          EXPECT_EQ(ci, part.local.col_idx());
          EXPECT_EQ(v, part.local.values());
          EXPECT_EQ(A.global_rows(), rows);
          EXPECT_EQ(A.interior_rows(), static_cast<index_t>(part.interior.size()));
        });
      }
  }
}

TEST(Distributed, MatchesTheOneGpuSolveOnTwoAndFourGpus) {
  // Same status, iterations within 1%, solutions within the tolerance's reach (rtol 1e-10:
  // the two solutions differ by rounding amplified by at most cond(A) ~ 1e3 here, so 1e-6
  // relative), on a generated system (made on the GPUs), a file's system uploaded part by
  // part, and with Jacobi on a system that needs it.
  LA_SKIP_WITHOUT_GPUS(2);
  struct sys {
    std::string name;
    preconditioner pc;
  };
  for (const sys& s : {sys{"poisson3d:40", preconditioner::none}, sys{"poisson2d:150", preconditioner::jacobi},
                       sys{"bcsstk21.mtx", preconditioner::jacobi}, sys{"gr_30_30.mtx", preconditioner::none}})
    for (int gpus : {2, 4}) {
      if (visible_gpus() < gpus) continue;
      SCOPED_TRACE(s.name + " on " + std::to_string(gpus) + " GPUs");
      const auto A = test::system_matrix(s.name, test::data_dir());
      cg_options opt;
      opt.rtol = 1e-10;
      opt.precond = s.pc;
      std::vector<double> x1;
      const solve_result one = one_gpu(A, opt, x1);
      const bool gen = s.name.rfind("poisson", 0) == 0;
      const int dims = s.name.rfind("poisson3d", 0) == 0 ? 3 : 2;
      const global_index n = gen ? std::stoll(s.name.substr(10)) : 0;
      std::vector<matrix_part<double>> parts;
      if (!gen) parts = partition_rows(A, gpus);
      const auto res = solve_on(
          gpus,
          [&](dist_comm& comm) {
            return gen ? dist_matrix<double>::poisson(comm, dims, n)
                       : dist_matrix<double>(comm, parts[static_cast<std::size_t>(comm.rank())]);
          },
          opt);
      for (const auto& r : res) {  // every rank reports the same
        EXPECT_EQ(r.r.status, res[0].r.status);
        EXPECT_EQ(r.r.iterations, res[0].r.iterations);
        EXPECT_EQ(r.r.residual, res[0].r.residual);
      }
      EXPECT_EQ(res[0].r.status, one.status) << res[0].r.message;
      EXPECT_TRUE(res[0].r.converged()) << res[0].r.message;
      EXPECT_LE(std::abs(double(res[0].r.iterations - one.iterations)), std::max(1.0, 0.01 * one.iterations))
          << res[0].r.iterations << " vs " << one.iterations;
      EXPECT_LT(relative_difference(whole(res), x1), 1e-6);
      EXPECT_LE(res[0].r.true_residual, 100 * opt.rtol);
    }
}

TEST(Distributed, RerunsAreBitIdentical) {
  // The same GPU count gives the same iterates, history and solution bits run after run
  // (every sum in a fixed order; the all-gathered partials added in rank order).
  LA_SKIP_WITHOUT_GPUS(2);
  for (int gpus : {2, 4}) {
    if (visible_gpus() < gpus) continue;
    cg_options opt;
    opt.rtol = 1e-9;
    opt.precond = preconditioner::jacobi;
    opt.record_history = true;
    auto make = [](dist_comm& comm) { return dist_matrix<double>::poisson(comm, 3, 33); };
    const auto a = solve_on(gpus, make, opt), b = solve_on(gpus, make, opt);
    EXPECT_GT(a[0].r.iterations, 20);
    EXPECT_EQ(a[0].r.iterations, b[0].r.iterations);
    EXPECT_EQ(a[0].r.history, b[0].r.history);
    const auto xa = whole(a), xb = whole(b);
    EXPECT_EQ(std::memcmp(xa.data(), xb.data(), xa.size() * sizeof(double)), 0);
  }
}

TEST(Distributed, SweptInteriorAndEveryOverlapMatchTheRowsInOrder) {
  // The interior rows walked in tiles through the grid's planes (plane_sweep), and each
  // choice of what runs beside them (dist_cg_options::overlap), solve as the rows in order
  // beside the exchange and the boundary rows do: the same status, iterations within 1%,
  // solutions within 1e-6 relative (only the order of p'q's sum differs; rtol 1e-10 and
  // cond(A) ~ 1e3, as above), and a rerun bit-identical. A row the sweep skipped would keep
  // a stale q, and a boundary row run before its halo arrived a stale p, and stall the
  // solve. 3D n = 37: a plane of 1369 rows in tiles of 96 (the last tile 25 rows), the last
  // plane of each range partly past its end; tile 5000 is one tile a plane. On 1 GPU (every
  // row interior) and on 2 when visible.
  LA_SKIP_WITHOUT_GPUS(1);
  using mode = dist_cg_options::overlap_mode;
  for (int gpus : {1, 2}) {
    if (visible_gpus() < gpus) continue;
    SCOPED_TRACE(std::to_string(gpus) + " GPU(s)");
    cg_options opt;
    opt.precond = preconditioner::none;  // unpreconditioned (the default is auto)
    opt.rtol = 1e-10;
    auto make = [](dist_comm& comm) { return dist_matrix<double>::poisson(comm, 3, 37); };
    dist_cg_options in_order;
    in_order.sweep_tile = 0;
    in_order.overlap = mode::boundary;
    const auto base = solve_on(gpus, make, opt, nullptr, in_order);
    ASSERT_TRUE(base[0].r.converged()) << base[0].r.message;
    EXPECT_EQ(base[0].r.method.find("swept"), std::string::npos) << base[0].r.method;
    struct variant {
      long long tile;
      mode overlap;
      const char* words;
    };
    for (const variant& v : {variant{96, mode::none, "before the halo exchange"},
                             variant{96, mode::exchange, "beside the halo exchange,"},
                             variant{5000, mode::boundary, "beside the halo exchange and the boundary rows"}}) {
      SCOPED_TRACE("tile " + std::to_string(v.tile) + ", " + v.words);
      dist_cg_options o;
      o.sweep_tile = v.tile;
      o.overlap = v.overlap;
      const auto a = solve_on(gpus, make, opt, nullptr, o), b = solve_on(gpus, make, opt, nullptr, o);
      const std::string swept = "swept in tiles of " + std::to_string(std::min(v.tile, 37LL * 37));
      EXPECT_EQ(a[0].r.method.find(swept) != std::string::npos, v.tile > 0) << a[0].r.method;
      EXPECT_NE(a[0].r.method.find(v.words), std::string::npos) << a[0].r.method;
      EXPECT_EQ(a[0].r.status, base[0].r.status) << a[0].r.message;
      EXPECT_LE(std::abs(double(a[0].r.iterations - base[0].r.iterations)), std::max(1.0, 0.01 * base[0].r.iterations));
      EXPECT_LT(relative_difference(whole(a), whole(base)), 1e-6);
      EXPECT_LE(a[0].r.true_residual, 100 * opt.rtol);
      const auto xa = whole(a), xb = whole(b);
      EXPECT_EQ(a[0].r.iterations, b[0].r.iterations);
      EXPECT_EQ(std::memcmp(xa.data(), xb.data(), xa.size() * sizeof(double)), 0);
    }
  }
}

TEST(Distributed, StatusesAreAgreedByEveryRank) {
  // What one rank finds (a NaN in its slice of b, a non-positive diagonal in its rows) is
  // every rank's status, named once; the iteration limit stops every rank at once.
  LA_SKIP_WITHOUT_GPUS(2);
  const int gpus = 2;
  auto A = poisson_2d<double>(40);
  std::vector<double> b(static_cast<std::size_t>(A.rows()), 1.0);
  b[b.size() - 3] = std::nan("");  // in the last rank's slice
  auto parts = partition_rows(A, gpus);
  auto make = [&](dist_comm& comm) { return dist_matrix<double>(comm, parts[static_cast<std::size_t>(comm.rank())]); };
  cg_options opt;
  auto res = solve_on(gpus, make, opt, &b);
  for (const auto& r : res) {
    EXPECT_EQ(r.r.status, solve_status::non_finite);
    EXPECT_NE(r.r.message.find("right-hand side"), std::string::npos) << r.r.message;
    EXPECT_NE(r.r.message.find("rank 1"), std::string::npos) << r.r.message;
  }
  // A negative diagonal entry in rank 1's rows: Jacobi does not exist.
  auto bad = A;
  const index_t row = A.rows() - 5;
  for (auto k = bad.row_ptr()[row]; k < bad.row_ptr()[row + 1]; ++k)
    if (bad.col_idx()[k] == row) bad.values()[k] = -4;
  parts = partition_rows(bad, gpus);
  opt.precond = preconditioner::jacobi;
  res = solve_on(gpus, make, opt);
  for (const auto& r : res) {
    EXPECT_EQ(r.r.status, solve_status::breakdown);
    EXPECT_NE(r.r.message.find("A(" + std::to_string(row + 1) + "," + std::to_string(row + 1) + ")"), std::string::npos)
        << r.r.message;
  }
  // The same row with FSAI built on each GPU's block: the failing rank's words, on every rank.
  opt.precond = preconditioner::fsai;
  res = solve_on(gpus, make, opt);
  for (const auto& r : res) {
    EXPECT_EQ(r.r.status, solve_status::breakdown);
    EXPECT_NE(r.r.message.find("rank 1"), std::string::npos) << r.r.message;
    EXPECT_NE(r.r.message.find("fsai: A("), std::string::npos) << r.r.message;
  }
  // The iteration limit.
  parts = partition_rows(A, gpus);
  opt.precond = preconditioner::none;
  opt.max_iterations = 7;
  res = solve_on(gpus, make, opt);
  for (const auto& r : res) {
    EXPECT_EQ(r.r.status, solve_status::max_iterations);
    EXPECT_EQ(r.r.iterations, 7);
  }
}

TEST(Distributed, AFailingRankEndsTheTeamWithItsOwnError) {
  // Rank 1 throws before a collective that rank 0 is already waiting in: rank 0's wait sees
  // the team failed and aborts its communicator; run_on_gpus rethrows rank 1's error.
  LA_SKIP_WITHOUT_GPUS(2);
  test::expect_throw_with<invalid_argument>(
      [] {
        run_on_gpus(2, [](dist_comm& comm) {
          if (comm.rank() == 1) throw invalid_argument("rank 1 gave up");
          comm.all_gather({1});
        });
      },
      {"rank 1 gave up"});
  // The team works again afterwards.
  run_on_gpus(2, [](dist_comm& comm) { EXPECT_EQ(comm.all_gather({comm.rank()}), (std::vector<std::int64_t>{0, 1})); });
}

TEST(Distributed, RefusesWhatItCannotDo) {
  LA_SKIP_WITHOUT_GPUS(1);
  test::expect_throw_with<invalid_argument>([] { run_on_gpus(visible_gpus() + 1, [](dist_comm&) {}); }, {"visible"});
}

// A right-hand side near the ends of double's range: ||b|| is scale-safe across the ranks,
// so the loop's power-of-two scaling applies and the solve converges to the tolerance of the
// system as given (at 1e-170, ||b||'s plain dot underflowed to 0: "right-hand side is zero").
TEST(Distributed, ExtremeRightHandSideScales) {
  LA_SKIP_WITHOUT_GPUS(1);
  const auto A = test::poisson_2d<double>(30);
  for (int gpus : {1, 2}) {
    if (visible_gpus() < gpus) continue;
    for (double s : {1e-170, 1e160}) {
      SCOPED_TRACE(std::to_string(gpus) + " GPU(s), scale " + std::to_string(s));
      std::vector<double> b(static_cast<std::size_t>(A.rows()), 0.0);
      reference::spmv(s, A, std::vector<double>(b.size(), 1.0), 0.0, b);
      const auto split = partition_rows(A, gpus);
      const auto parts = solve_on(
          gpus, [&](dist_comm& comm) { return dist_matrix<double>(comm, split[static_cast<std::size_t>(comm.rank())]); },
          cg_options{}, &b);
      for (const auto& p : parts) {
        ASSERT_EQ(p.r.status, solve_status::converged) << p.r.message;
        EXPECT_LE(p.r.true_residual, 100 * 1e-8);
      }
      const auto x = whole(parts);
      EXPECT_NEAR(x[7] / s, 1.0, 1e-5);
    }
  }
}

/// diag(B, B): two copies of B that share nothing, so a split between them cuts no entry.
csr_matrix<double> twice(const csr_matrix<double>& B) {
  const index_t n = B.rows();
  std::vector<index_t> ptr(B.row_ptr().begin(), B.row_ptr().end()), idx(B.col_idx().begin(), B.col_idx().end());
  std::vector<double> val(B.values().begin(), B.values().end());
  for (index_t i = 1; i <= n; ++i) ptr.push_back(ptr[n] + B.row_ptr()[i]);
  for (index_t c : B.col_idx()) idx.push_back(c + n);
  val.insert(val.end(), B.values().begin(), B.values().end());
  return csr_matrix<double>(2 * n, 2 * n, std::move(ptr), std::move(idx), std::move(val));
}

TEST(Distributed, PreconditionersOnEachGpusBlock) {
  // Block-Jacobi, FSAI and IC(0) on several GPUs are built on each part's diagonal block.
  // Oracles: on one GPU of the team the block is A, and on diag(B, B) split between its
  // copies the blocks are A's: both are then the one-GPU preconditioner, so the solve takes
  // its iterations (within 1%) and reaches its solution (within 1e-6, as above). On a
  // coupled system split across GPUs M^-1 drops the coupling: the solve still converges to
  // the one-GPU solution, FSAI and IC(0) in fewer iterations than Jacobi on as many GPUs,
  // and reruns are bit-identical.
  LA_SKIP_WITHOUT_GPUS(1);
  // Under a sanitizer bcsstk09 (1,083 rows): the same kernels, fewer and shorter iterations.
  const char* name = test::under_sanitizer() ? "bcsstk09.mtx" : "bcsstk21.mtx";
  const auto B = test::system_matrix(name, test::data_dir());
  const auto BB = twice(B);
  cg_options opt;
  opt.rtol = 1e-10;
  auto uploaded = [](const std::vector<matrix_part<double>>& parts) {
    return [&parts](dist_comm& comm) { return dist_matrix<double>(comm, parts[static_cast<std::size_t>(comm.rank())]); };
  };
  for (preconditioner pc : {preconditioner::block_jacobi, preconditioner::fsai, preconditioner::ic0}) {
    opt.precond = pc;
    for (int gpus : {1, 2}) {
      if (visible_gpus() < gpus) continue;
      SCOPED_TRACE(std::string(to_string(pc)) + ", diag(B, B) on " + std::to_string(gpus) + " GPUs");
      const auto parts = partition_rows(BB, gpus);
      if (gpus == 2) ASSERT_EQ(parts[0].local.rows(), B.rows()) << "the split is not between the copies";
      std::vector<double> x1;
      const solve_result one = one_gpu(BB, opt, x1);
      const auto res = solve_on(gpus, uploaded(parts), opt);
      ASSERT_TRUE(res[0].r.converged()) << res[0].r.message;
      EXPECT_EQ(res[0].r.precond.kind, pc);
      EXPECT_LE(std::abs(double(res[0].r.iterations - one.iterations)), std::max(1.0, 0.01 * one.iterations))
          << res[0].r.iterations << " vs " << one.iterations;
      EXPECT_LT(relative_difference(whole(res), x1), 1e-6);
    }
  }
  for (int gpus : {2, 4}) {
    if (visible_gpus() < gpus) continue;
    const auto parts = partition_rows(B, gpus);
    opt.precond = preconditioner::jacobi;
    const auto jacobi = solve_on(gpus, uploaded(parts), opt);
    ASSERT_TRUE(jacobi[0].r.converged()) << jacobi[0].r.message;
    for (preconditioner pc : {preconditioner::block_jacobi, preconditioner::fsai, preconditioner::ic0}) {
      SCOPED_TRACE(std::string(to_string(pc)) + ", " + name + " on " + std::to_string(gpus) + " GPUs");
      opt.precond = pc;
      opt.record_history = true;
      std::vector<double> x1;
      const solve_result one = one_gpu(B, opt, x1);
      const auto a = solve_on(gpus, uploaded(parts), opt), b = solve_on(gpus, uploaded(parts), opt);
      opt.record_history = false;
      for (const auto& r : a) EXPECT_EQ(r.r.iterations, a[0].r.iterations);
      ASSERT_TRUE(a[0].r.converged()) << a[0].r.message;
      EXPECT_LE(a[0].r.true_residual, 100 * opt.rtol);
      EXPECT_LT(relative_difference(whole(a), x1), 1e-6);
      if (pc != preconditioner::block_jacobi) EXPECT_LT(a[0].r.iterations, jacobi[0].r.iterations);
      std::printf("  %s on %d GPUs: %lld iterations (one GPU %lld, Jacobi on %d GPUs %lld)\n", to_string(pc), gpus,
                  static_cast<long long>(a[0].r.iterations), static_cast<long long>(one.iterations), gpus,
                  static_cast<long long>(jacobi[0].r.iterations));
      EXPECT_EQ(a[0].r.history, b[0].r.history);
      const auto xa = whole(a), xb = whole(b);
      EXPECT_EQ(std::memcmp(xa.data(), xb.data(), xa.size() * sizeof(double)), 0);
    }
  }
}

}  // namespace
}  // namespace la
