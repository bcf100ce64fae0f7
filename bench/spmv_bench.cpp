// SpMV against cuSPARSE, as Google Benchmark benchmarks: one per matrix and precision. Each
// runs the SpMV suite (kernels/detail/vendor/spmv_suite: every la kernel and cuSPARSE peer, each validated
// with a NaN-poisoned y against the host reference, then timed with CUDA events, median of
// 20) once, reports the auto-selected kernel's time as the benchmark's time and the ratios as
// counters, and fails the benchmark when any kernel fails validation. The full table (every
// kernel) is printed at the end and written to $LA_SPMV_OUT (JSON or CSV) when set.
// Matrices: the standard generated set (la bench spmv --generated) and the data/ files;
// LA_SPMV_MATRICES (comma-separated gen:SPEC or paths) replaces them.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>
#include <sstream>

#include <la/formats/convert.hpp>
#include <la/formats/matrix_market.hpp>
#include <la/kernels/detail/vendor/vendor.hpp>

#include <la/kernels/detail/vendor/spmv_suite.hpp>

namespace {
using namespace la;

struct suite_state {
  context ctx;
  vendor_handles vh{ctx};
  cli::spmv_bench_options opt;
  std::vector<cli::spmv_row> rows;
};
suite_state* state_ = nullptr;

template <typename T>
void run_matrix(benchmark::State& st, const std::string& m) {
  std::vector<cli::spmv_row> r;
  for (auto _ : st) {
    if (m.rfind("gen:", 0) == 0) {
      r = cli::bench_spmv(state_->ctx, state_->vh, m.substr(4), cli::generated_matrix<T>(m.substr(4)), state_->opt);
    } else {
      r = with_csr(read_matrix_market<T>(m), [&](const auto& a) {
        return cli::bench_spmv(state_->ctx, state_->vh, m.substr(m.find_last_of('/') + 1), a, state_->opt);
      });
    }
    double auto_ms = 0, best = 0;
    for (const auto& x : r) {
      if (x.ms > 0 && !x.ok) st.SkipWithError((x.kernel + " failed validation").c_str());
      if (x.automatic) auto_ms = x.ms, st.counters["auto_vs_alg1"] = x.vs_alg1, st.counters["auto_copy_share"] = x.copy_share;
      if (!x.vendor && x.ok) best = std::max(best, x.vs_alg1);
    }
    st.counters["best_vs_alg1"] = best;
    st.SetIterationTime(auto_ms / 1e3);
  }
  state_->rows.insert(state_->rows.end(), r.begin(), r.end());
}

std::vector<std::string> matrices() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("LA_SPMV_MATRICES")) {
    std::stringstream in(env);
    for (std::string m; std::getline(in, m, ',');) out.push_back(m);
    return out;
  }
  for (const auto& g : cli::standard_generated()) out.push_back("gen:" + g);
  for (const char* f : {"gr_30_30.mtx", "bcsstk09.mtx", "Trefethen_2000.mtx", "1138_bus.mtx", "ca-GrQc.mtx"})
    out.push_back(std::string(LA_DATA_DIR) + "/" + f);
  return out;
}
}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (!cuda_available()) {
    std::fprintf(stderr, "spmv_bench: no GPU (%s); nothing to measure\n", cuda_status().c_str());
    return 0;
  }
  auto s = std::make_unique<suite_state>();
  state_ = s.get();
  s->opt.copy_gbs = cli::copy_bandwidth_gbs(s->ctx);
  for (const auto& m : matrices()) {
    benchmark::RegisterBenchmark(("spmv/double/" + m).c_str(), [m](benchmark::State& st) { run_matrix<double>(st, m); })
        ->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("spmv/float/" + m).c_str(), [m](benchmark::State& st) { run_matrix<float>(st, m); })
        ->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  cli::print_spmv_table(s->rows, s->opt.copy_gbs, s->ctx.properties().name);
  if (const char* out = std::getenv("LA_SPMV_OUT"))
    cli::write_spmv_rows(s->rows, out, s->opt.copy_gbs, s->ctx.properties().name);
  state_ = nullptr;
  s.reset();  // release the device before the runtime shuts down
  benchmark::Shutdown();
  return 0;
}
