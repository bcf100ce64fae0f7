// GEMM ladder against cuBLAS, side by side in one run (Google Benchmark, manual timing with
// CUDA events). Each own variant is registered next to the cuBLAS mode of its precision
// class: fp32 -> CUBLAS_COMPUTE_32F_PEDANTIC, tf32 -> CUBLAS_COMPUTE_32F_FAST_TF32,
// fp16 -> cublasGemmEx half/half/float. Before timing, every variant's output is checked
// against cuBLAS PEDANTIC on the same inputs (normwise relative error: fp32 1e-5, tf32 5e-3,
// fp16 1e-2); a failed check marks the benchmark as an error. Inputs are random in [-1, 1]
// (never zeros); half inputs are converted once per shape, outside the timed region.
// bench/summarize.py turns the JSON output into the ratio table of bench/RESULTS.md.
#include <benchmark/benchmark.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>

#include <la/kernels/gemm/cublas_peer.hpp>

namespace {
using namespace la;

struct shape {
  index_t m, n, k;
  std::string name() const { return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k); }
  bool square() const { return m == n && n == k; }
};

const shape shapes[] = {{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192},
                        {256, 256, 65536},  {128, 128, 262144}, {64, 4096, 4096},   {4096, 4096, 128}};

__global__ void fill_kernel(float* p, long n, unsigned seed) {
  for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < n; i += long(gridDim.x) * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    const float u = (h >> 8) * (1.0f / 16777216.0f);  // [0, 1)
    p[i] = u < 0.5f ? -1.0f + u : u;                  // [-1, -0.5) U [0.5, 1): never 0
  }
}

__global__ void error_kernel(const float* c, const float* ref, long n, double* sums) {
  double d = 0, r = 0;
  for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < n; i += long(gridDim.x) * blockDim.x) {
    const double e = double(c[i]) - ref[i];
    d += std::isfinite(c[i]) ? e * e : INFINITY;
    r += double(ref[i]) * ref[i];
  }
  atomicAdd(&sums[0], d);
  atomicAdd(&sums[1], r);
}

/// One shape's inputs and the cuBLAS PEDANTIC reference output, kept while its benchmarks run.
struct fixture {
  shape s;
  device_dense<float> a, b, c, ref;
  device_dense<__half> ah, bh;
  bool has_ref = false;
};

context& ctx() {
  static context c;
  return c;
}

fixture& data_for(const shape& s) {
  static std::unique_ptr<fixture> cur;
  if (cur && cur->s.m == s.m && cur->s.n == s.n && cur->s.k == s.k) return *cur;
  cur.reset();  // free the previous shape first
  auto f = std::make_unique<fixture>();
  f->s = s;
  f->a = device_dense<float>(ctx(), s.m, s.k);
  f->b = device_dense<float>(ctx(), s.k, s.n);
  f->c = device_dense<float>(ctx(), s.m, s.n);
  f->ref = device_dense<float>(ctx(), s.m, s.n);
  fill_kernel<<<1024, 256, 0, ctx().stream()>>>(f->a.view().values, long(s.m) * s.k, 1);
  fill_kernel<<<1024, 256, 0, ctx().stream()>>>(f->b.view().values, long(s.k) * s.n, 2);
  LA_CHECK_LAUNCH();
  f->ah = to_half(ctx(), f->a);
  f->bh = to_half(ctx(), f->b);
  cur = std::move(f);
  return *cur;
}

gemm_args args_for(fixture& f, bool half) {
  const void* a = half ? static_cast<const void*>(f.ah.view().values) : f.a.view().values;
  const void* b = half ? static_cast<const void*>(f.bh.view().values) : f.b.view().values;
  return {f.s.m, f.s.n, f.s.k, a, f.s.k, b, f.s.n, f.c.view().values, f.s.n, 1.0f, 0.0f, nullptr,
          ctx().properties().multiProcessorCount};
}

/// Normwise relative error of f.c against cuBLAS PEDANTIC on the same inputs (computed once per shape).
double check(fixture& f) {
  if (!f.has_ref) {
    gemm_args g = args_for(f, false);
    g.c = f.ref.view().values;
    cublas_gemm(ctx(), gemm_precision::fp32, g);
    f.has_ref = true;
  }
  device_buffer<double> sums(2, ctx().stream());
  LA_CUDA_TRY(cudaMemsetAsync(sums.data(), 0, 2 * sizeof(double), ctx().stream()));
  error_kernel<<<1024, 256, 0, ctx().stream()>>>(f.c.view().values, f.ref.view().values, long(f.s.m) * f.s.n, sums.data());
  LA_CHECK_LAUNCH();
  double h[2];
  sums.copy_to_host(h, 2);
  ctx().synchronize();
  return std::sqrt(h[0] / h[1]);
}

double tolerance(gemm_precision p) {
  return p == gemm_precision::fp32 ? 1e-5 : p == gemm_precision::tf32 ? 5e-3 : 1e-2;
}

template <typename Launch>
void time_it(benchmark::State& st, fixture& f, gemm_precision p, Launch&& launch) {
  // Poison C, run once, validate.
  LA_CUDA_TRY(cudaMemsetAsync(f.c.view().values, 0xff, sizeof(float) * f.s.m * f.s.n, ctx().stream()));
  launch();
  const double err = check(f);
  if (!(err <= tolerance(p))) {
    st.SkipWithError(("output differs from cuBLAS PEDANTIC: relative error " + std::to_string(err)).c_str());
    return;
  }
  launch();  // warm-up
  cudaEvent_t e0, e1;
  LA_CUDA_TRY(cudaEventCreate(&e0));
  LA_CUDA_TRY(cudaEventCreate(&e1));
  for (auto _ : st) {
    LA_CUDA_TRY(cudaEventRecord(e0, ctx().stream()));
    launch();
    LA_CUDA_TRY(cudaEventRecord(e1, ctx().stream()));
    LA_CUDA_TRY(cudaEventSynchronize(e1));
    float ms = 0;
    LA_CUDA_TRY(cudaEventElapsedTime(&ms, e0, e1));
    st.SetIterationTime(ms / 1e3);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  const double flops = 2.0 * f.s.m * f.s.n * f.s.k;
  st.counters["TFLOPS"] = benchmark::Counter(flops * 1e-12, benchmark::Counter::kIsIterationInvariantRate);
  st.counters["rel_err"] = err;
  st.SetLabel(to_string(p));
}

void bench_variant(benchmark::State& st, shape s, const gemm_variant* v) {
  fixture& f = data_for(s);
  gemm_args g = args_for(f, v->input == gemm_input::f16);
  device_buffer<unsigned char> ws(v->workspace_bytes({s.m, s.n, s.k, g.sm_count}), ctx().stream());
  g.workspace = ws.data();
  time_it(st, f, v->precision, [&] { v->launch(g, ctx().stream()); });
}

void bench_cublas(benchmark::State& st, shape s, gemm_precision p) {
  fixture& f = data_for(s);
  const gemm_args g = args_for(f, p == gemm_precision::fp16);
  time_it(st, f, p, [&] { cublas_gemm(ctx(), p, g); });
}

bool worth_timing(const gemm_variant& v, const shape& s) {
  const bool ladder = v.name == "naive" || v.name == "smem_tiled" || v.name == "joint_rs";
  if (ladder) return s.square() && s.m <= 4096;  // reported for the ladder, not the targets
  if (v.name.substr(0, 7) == "split_k") return detail::split_k_count({s.m, s.n, s.k, 132}) > 1;
  return true;
}

int register_all() {
  for (const shape& s : shapes) {
    // Benchmarks of one shape are registered together so the fixture is built once.
    for (const auto& v : gemm_variants())
      if (worth_timing(v, s))
        benchmark::RegisterBenchmark(("gemm/" + s.name() + "/" + std::string(v.name)).c_str(), bench_variant, s, &v)
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond);
    for (auto [name, mode] : {std::pair{"cublas_fp32", gemm_precision::fp32}, std::pair{"cublas_tf32", gemm_precision::tf32},
                              std::pair{"cublas_f16", gemm_precision::fp16}})
      benchmark::RegisterBenchmark(("gemm/" + s.name() + "/" + name).c_str(), bench_cublas, s, mode)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
  }
  return 0;
}
const int registered = register_all();
}  // namespace

BENCHMARK_MAIN();
