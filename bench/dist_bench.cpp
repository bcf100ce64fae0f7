// Strong scaling of CG on several GPUs (solvers/distributed/distributed.hpp), one process driving them:
// time per iteration on 1, 2, 4 ... GPUs, beside the one-GPU solver (cg_device, its own
// path choice: the persistent kernel) measured in the same run, the share of an iteration
// the communication takes alone, and the bytes floor at the GPUs' combined copy bandwidth
// (each GPU's measured in the same run). Then a solve to 1e-8 of a system that does not fit
// one GPU, when --big names one.
//
// usage: dist_bench [--systems LIST] [--gpus LIST] [--iterations N] [--precision double|float]
//                   [--big SPEC] [--big-gpus N] [--no-single] [--blocks-per-sm K] [--sweep LIST]
//                   [--overlap none|exchange|boundary] [--out FILE.csv]
//   LIST: comma-separated poisson2d:N / poisson3d:N (default poisson2d:4000,poisson3d:512);
//   --gpus: GPU counts (default 1,2,4, those visible); --iterations: fixed count per timed
//   solve (default 200); --big: e.g. poisson3d:1024, solved to rtol 1e-8 on --big-gpus
//   (default every visible GPU); --blocks-per-sm: the row walks' grid
//   (dist_cg_options::walk_blocks_per_sm); --sweep: the interior rows' order, each value a
//   run (dist_cg_options::sweep_tile: -1 the solver's rule, the default; 0 in order; K tiles
//   of K rows; the first value is the one --big uses); --overlap: what runs beside the
//   interior rows (dist_cg_options::overlap).
//
// Bytes model per iteration, summed over the GPUs: each part's matrix once (values, column
// indices, row offsets, the row lists of its interior and boundary rows) plus 9 values a
// row (cg_bench's model: r and the old p read, the new p and q written, x read and
// written in the direction step; r and q read, r written in the residual step) plus the
// halo values received and the packed values sent (each written once and read once).
//
// Checks (a row that fails is marked ok = 0): every run does exactly N iterations with a
// finite residual; the recurrence residual after N iterations agrees with the 1-GPU run to
// 1e-6 relative (double) or 1e-2 (float); a rerun gives bit-identical solutions; the
// one-GPU solver's residual agrees likewise; the big solve converges with the true residual
// within 100x the tolerance.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include <la/formats/generate.hpp>
#include <la/solvers/device_cg.hpp>
#include <la/solvers/distributed/distributed.hpp>
#include "systems.hpp"

namespace la {
namespace {

struct row {
  std::string system;
  int gpus = 1;
  global_index rows = 0;
  count_t nnz = 0;
  std::int64_t iterations = 0;
  double us = 0, one_gpu_us = 0, exchange_us = 0, floor_us = 0, bandwidth_gbs = 0, residual = 0;
  double speedup = 0;  // over the distributed solver on 1 GPU (same sweep setting)
  long long sweep = 0;  // the interior's sweep tile used (0: in order)
  std::string status;
  bool identical = false, ok = true;
  std::string note;
};

struct run_out {
  solve_result r;
  double exchange_s = 0, bytes = 0, bandwidth = 0;
  long long sweep = 0;
  std::uint64_t hash = 0;
};

std::uint64_t fnv(const void* p, std::size_t n, std::uint64_t h) {
  const unsigned char* c = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ c[i]) * 1099511628211ull;
  return h;
}

/// One distributed solve of `spec` on `gpus` GPUs (the matrix made on each GPU), with the
/// bytes of an iteration and the combined copy bandwidth.
template <typename T>
run_out dist_solve(const std::string& spec, int gpus, const cg_options& opt, bool timing, const dist_cg_options& dopt) {
  const int dims = spec.rfind("poisson3d", 0) == 0 ? 3 : 2;
  const global_index n = std::stoll(spec.substr(spec.find(':') + 1));
  run_out out;
  std::mutex m;
  std::vector<std::uint64_t> hashes(static_cast<std::size_t>(gpus));
  run_on_gpus(gpus, [&](dist_comm& comm) {
    const auto A = dist_matrix<T>::poisson(comm, dims, n);
    auto b = dist_row_sums(comm, A);
    device_vector<T> x(comm.ctx(), A.plan().rows);
    cg_options warm = opt;
    warm.max_iterations = 10;
    LA_CUDA_TRY(cudaMemsetAsync(x.data(), 0, sizeof(T) * static_cast<std::size_t>(A.plan().rows), comm.ctx().stream()));
    cg_distributed(comm, A, b, x, warm, dopt);
    LA_CUDA_TRY(cudaMemsetAsync(x.data(), 0, sizeof(T) * static_cast<std::size_t>(A.plan().rows), comm.ctx().stream()));
    dist_timing t;
    const solve_result r = cg_distributed(comm, A, b, x, opt, dopt, timing ? &t : nullptr);
    const auto xh = to_host(comm.ctx(), x);
    const double per_row = opt.precond == preconditioner::jacobi ? 11 : 9;
    const double bytes = A.matrix_bytes() + per_row * double(A.plan().rows) * sizeof(T) +
                         2.0 * double(A.plan().halo_size() + A.plan().send_idx.size()) * sizeof(T);
    const double bw = cli::copy_bandwidth_gbs(comm.ctx());
    std::lock_guard<std::mutex> g(m);
    hashes[static_cast<std::size_t>(comm.rank())] = fnv(xh.data(), xh.size() * sizeof(T), 1469598103934665603ull);
    out.bytes += bytes;
    out.bandwidth += bw;
    if (comm.rank() == 0) out.r = r, out.exchange_s = t.exchange_seconds, out.sweep = t.sweep_tile;
  });
  for (auto h : hashes) out.hash = fnv(&h, sizeof h, out.hash ? out.hash : 1469598103934665603ull);
  return out;
}

/// The one-GPU solver (cg_device, its automatic path) on the same system.
template <typename T>
solve_result one_gpu(const std::string& spec, const cg_options& opt) {
  const int dims = spec.rfind("poisson3d", 0) == 0 ? 3 : 2;
  const index_t n = std::stoi(spec.substr(spec.find(':') + 1));
  const auto A = dims == 3 ? poisson_3d<T>(n) : poisson_2d<T>(n);
  context ctx;
  const auto dA = to_device(ctx, A);
  std::vector<T> bh(static_cast<std::size_t>(A.rows()));
  reference::spmv(T(1), A, std::vector<T>(bh.size(), T(1)), T(0), bh);
  const auto db = to_device(ctx, bh);
  auto dx = to_device(ctx, std::vector<T>(bh.size(), T(0)));
  cg_options warm = opt;
  warm.max_iterations = 10;
  cg_device(ctx, dA, db, dx, warm);
  LA_CUDA_TRY(cudaMemsetAsync(dx.data(), 0, sizeof(T) * bh.size(), ctx.stream()));
  return cg_device(ctx, dA, db, dx, opt);
}

template <typename T>
int run(int argc, char** argv) {
  std::vector<std::string> systems{"poisson2d:4000", "poisson3d:512"};
  std::vector<int> counts{1, 2, 4};
  std::int64_t its = 200;
  std::string big, out_path;
  int big_gpus = visible_gpus();
  bool single = true;
  dist_cg_options dopt;
  std::vector<long long> sweeps{-1};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--systems") systems = bench::split(bench::option_value(argc, argv, i));
    else if (a == "--gpus") {
      counts.clear();
      for (const auto& c : bench::split(bench::option_value(argc, argv, i))) counts.push_back(std::stoi(c));
    } else if (a == "--iterations") its = std::stoll(bench::option_value(argc, argv, i));
    else if (a == "--big") big = bench::option_value(argc, argv, i);
    else if (a == "--big-gpus") big_gpus = std::stoi(bench::option_value(argc, argv, i));
    else if (a == "--out") out_path = bench::option_value(argc, argv, i);
    else if (a == "--no-single") single = false;
    else if (a == "--blocks-per-sm") dopt.walk_blocks_per_sm = std::stoi(bench::option_value(argc, argv, i));
    else if (a == "--overlap") {
      const std::string m = bench::option_value(argc, argv, i);
      using mode = dist_cg_options::overlap_mode;
      if (m != "none" && m != "exchange" && m != "boundary") {
        std::fprintf(stderr, "dist_bench: --overlap takes none, exchange or boundary, not '%s'\n", m.c_str());
        return 2;
      }
      dopt.overlap = m == "none" ? mode::none : m == "exchange" ? mode::exchange : mode::boundary;
    }
    else if (a == "--sweep") {
      sweeps.clear();
      for (const auto& c : bench::split(bench::option_value(argc, argv, i))) sweeps.push_back(std::stoll(c));
      if (sweeps.empty()) sweeps.push_back(-1);
    } else if (a == "--precision") bench::option_value(argc, argv, i);
    else {
      std::fprintf(stderr, "dist_bench: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  keep_nvlink_multicast_off();
  const double tol = sizeof(T) == 8 ? 1e-6 : 1e-2;
  std::printf("device: %d x %s, %s, %s\n", visible_gpus(), cuda_status().c_str(), nccl_status().c_str(),
              sizeof(T) == 8 ? "double" : "float");
  std::vector<row> rows;
  for (const auto& spec : systems) {
    cg_options opt;
    opt.precond = preconditioner::none;  // unpreconditioned (the default is auto)
    opt.rtol = 0;  // a fixed count
    opt.max_iterations = its;
    opt.stagnation_window = 0;
    double one_us = 0, base_res = 0;
    if (single) {
      const solve_result r = one_gpu<T>(spec, opt);
      one_us = 1e6 * r.iterate_seconds / std::max<std::int64_t>(1, r.iterations);
      base_res = r.residual;
      std::fprintf(stderr, "%s: one GPU (%s) %.1f us/iteration\n", spec.c_str(), r.method.c_str(), one_us);
    }
    std::vector<double> base_us(sweeps.size(), 0.0);  // the first GPU count's, per sweep setting
    for (int g : counts) {
      if (g > visible_gpus()) continue;
      for (std::size_t si = 0; si < sweeps.size(); ++si) {
        dopt.sweep_tile = sweeps[si];
        row w;
        w.system = spec, w.gpus = g;
        const run_out a = dist_solve<T>(spec, g, opt, true, dopt);
        const run_out b = dist_solve<T>(spec, g, opt, false, dopt);
        w.iterations = a.r.iterations;
        w.us = 1e6 * a.r.iterate_seconds / std::max<std::int64_t>(1, a.r.iterations);
        w.one_gpu_us = one_us;
        w.exchange_us = 1e6 * a.exchange_s;
        w.bandwidth_gbs = a.bandwidth;
        w.floor_us = a.bytes / (a.bandwidth * 1e9) * 1e6;
        w.residual = a.r.residual;
        w.status = to_string(a.r.status);
        w.sweep = a.sweep;
        w.identical = a.hash == b.hash && a.r.residual == b.r.residual;
        if (base_us[si] == 0) base_us[si] = w.us;
        w.speedup = base_us[si] / w.us;
        if (w.iterations != its || !std::isfinite(w.residual)) w.ok = false, w.note += "iterations/residual; ";
        if (!w.identical) w.ok = false, w.note += "rerun differs; ";
        if (base_res > 0 && std::abs(w.residual - base_res) > tol * base_res)
          w.ok = false, w.note += "residual differs from one GPU; ";
        if (base_res == 0) base_res = w.residual;
        rows.push_back(w);
        std::fprintf(stderr, "%s on %d (sweep %lld): %.1f us/iteration\n", spec.c_str(), g, w.sweep, w.us);
      }
    }
  }
  if (!big.empty() && big_gpus <= visible_gpus()) {
    cg_options opt;
    opt.precond = preconditioner::none;  // unpreconditioned (the default is auto)
    opt.rtol = 1e-8;
    dopt.sweep_tile = sweeps.front();
    const run_out a = dist_solve<T>(big, big_gpus, opt, true, dopt);
    row w;
    w.system = big + " (to 1e-8)", w.gpus = big_gpus;
    w.iterations = a.r.iterations;
    w.us = 1e6 * a.r.iterate_seconds / std::max<std::int64_t>(1, a.r.iterations);
    w.exchange_us = 1e6 * a.exchange_s;
    w.bandwidth_gbs = a.bandwidth;
    w.floor_us = a.bytes / (a.bandwidth * 1e9) * 1e6;
    w.sweep = a.sweep;
    w.residual = a.r.true_residual;
    w.status = to_string(a.r.status);
    w.identical = true;
    w.ok = a.r.converged() && a.r.true_residual <= 100 * opt.rtol;
    if (!w.ok) w.note = a.r.message;
    rows.push_back(w);
  }
  std::printf("%-22s %4s %6s %7s %10s %10s %8s %10s %8s %9s %7s %10s %7s %3s %s\n", "system", "gpus", "sweep", "iters",
              "us/iter", "1-GPU us", "x1 dist", "x1-GPU", "eff", "comm us", "comm%", "floor us", "xfloor", "ok", "status");
  for (const row& r : rows) {
    const double vs_one = r.one_gpu_us > 0 ? r.one_gpu_us / r.us : 0;
    std::printf("%-22s %4d %6lld %7lld %10.1f %10.1f %8.2f %10.2f %7.0f%% %9.1f %6.0f%% %10.1f %7.2f %3d %s %s\n",
                r.system.c_str(), r.gpus, r.sweep, static_cast<long long>(r.iterations), r.us, r.one_gpu_us, r.speedup, vs_one,
                100 * r.speedup / r.gpus, r.exchange_us, 100 * r.exchange_us / r.us, r.floor_us, r.us / r.floor_us,
                int(r.ok), r.status.c_str(), r.note.c_str());
  }
  if (!out_path.empty()) {
    std::ofstream f(out_path);
    f << "system,gpus,iterations,us_per_iteration,one_gpu_us,speedup_vs_1gpu_dist,speedup_vs_one_gpu_solver,"
         "efficiency,exchange_us,comm_share,floor_us,x_floor,copy_gbs_total,residual,identical_rerun,ok,status,sweep_tile\n";
    for (const row& r : rows)
      f << r.system << ',' << r.gpus << ',' << r.iterations << ',' << r.us << ',' << r.one_gpu_us << ',' << r.speedup
        << ',' << (r.one_gpu_us > 0 ? r.one_gpu_us / r.us : 0) << ',' << r.speedup / r.gpus << ',' << r.exchange_us
        << ',' << r.exchange_us / r.us << ',' << r.floor_us << ',' << r.us / r.floor_us << ',' << r.bandwidth_gbs
        << ',' << r.residual << ',' << r.identical << ',' << r.ok << ',' << r.status << ',' << r.sweep << '\n';
  }
  for (const row& r : rows)
    if (!r.ok) return 1;
  return 0;
}
}  // namespace
}  // namespace la

int main(int argc, char** argv) {
  try {
    for (int i = 1; i + 1 < argc; ++i)
      if (std::string(argv[i]) == "--precision" && std::string(argv[i + 1]) == "float") return la::run<float>(argc, argv);
    return la::run<double>(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dist_bench: %s\n", e.what());
    return 3;
  }
}
