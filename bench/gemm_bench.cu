// GEMM ladder against cuBLAS, side by side in one run (Google Benchmark, manual timing with
// CUDA events). Each own variant is registered next to the cuBLAS mode of its precision
// class: fp32 -> CUBLAS_COMPUTE_32F_PEDANTIC, tf32 -> CUBLAS_COMPUTE_32F_FAST_TF32,
// fp16 -> cublasGemmEx half/half/float, bf16 -> bf16/bf16/float. Before timing, every variant's output is checked
// elementwise against cuBLAS PEDANTIC on the same float inputs with the one GEMM tolerance
// rule (gemm_tolerance in gemm.hpp, relative to |A||B|, computed once per shape by cuBLAS on
// the absolute values), widened by the reference's own fp32 term since the reference is a
// float computation; a failed check marks the benchmark as an error. Inputs are random in
// [-1, -0.5) U [0.5, 1) (never zero, no cancellation-free structure); 16-bit inputs are
// converted once per shape, outside the timed region.
// bench/summarize.py turns the JSON output into the ratio table of bench/RESULTS.md.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include <la/kernels/detail/vendor/cublas_gemm.hpp>
#include <la/kernels/gemm/detail/variants.hpp>
#include <la/event_timer.hpp>

namespace {
using namespace la;

struct shape {
  index_t m, n, k;
  std::string name() const { return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k); }
  bool square() const { return m == n && n == k; }
};

// The squares are the size sweep of bench/plot_gemm.py; then the issue's odd shapes,
// 4096x4096x512 for reg_tiled's short-K rule, a matrix times a column and a row, and a few
// rows times a matrix (gemv).
const shape shapes[] = {{512, 512, 512},    {1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096},
                        {6144, 6144, 6144}, {8192, 8192, 8192},
                        {256, 256, 65536},  {128, 128, 262144}, {64, 4096, 4096},   {4096, 4096, 128},
                        {4096, 4096, 512},  {8192, 1, 8192},    {1, 8192, 8192},
                        {8, 8192, 8192}};

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

__global__ void abs_kernel(const float* in, float* out, long n) {
  for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < n; i += long(gridDim.x) * blockDim.x)
    out[i] = fabsf(in[i]);
}

/// Largest |c - ref| / mag over all elements (a non-finite c counts as infinite), as the
/// bits of a non-negative double, which order like the values.
__global__ void error_kernel(const float* c, const float* ref, const float* mag, long n, unsigned long long* worst) {
  double w = 0;
  for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < n; i += long(gridDim.x) * blockDim.x) {
    const double e = isfinite(c[i]) ? fabs(double(c[i]) - ref[i]) / (double(mag[i]) + 1e-30) : INFINITY;
    w = fmax(w, e);
  }
  atomicMax(worst, static_cast<unsigned long long>(__double_as_longlong(w)));
}

/// One shape's inputs and the cuBLAS PEDANTIC reference output, kept while its benchmarks run.
struct fixture {
  shape s;
  device_dense<float> a, b, c, ref, mag;  // mag = |A||B|
  device_dense<__half> ah, bh;
  device_dense<__nv_bfloat16> abf, bbf;
  bool has_ref = false;
};

context& ctx() {
  static context c;
  return c;
}
vendor_handles& vendor() {
  static vendor_handles h(ctx());
  return h;
}
/// SMs of device 0 at registration time (0 without a GPU: nothing runs then).
int device_sm_count() {
  int n = 0;
  if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

/// The current shape's fixture. main() releases it before static destruction, so its device
/// memory is freed while the context's stream still exists (the exit crashed otherwise).
std::unique_ptr<fixture>& current_fixture() {
  static std::unique_ptr<fixture> cur;
  return cur;
}

fixture& data_for(const shape& s) {
  std::unique_ptr<fixture>& cur = current_fixture();
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
  LA_CHECK_LAUNCH(ctx().stream());
  f->ah = to_half(ctx(), f->a);
  f->bh = to_half(ctx(), f->b);
  f->abf = to_bf16(ctx(), f->a);
  f->bbf = to_bf16(ctx(), f->b);
  cur = std::move(f);
  return *cur;
}

gemm_args args_for(fixture& f, gemm_input in) {
  const void* a = f.a.view().values;
  const void* b = f.b.view().values;
  if (in == gemm_input::f16) a = f.ah.view().values, b = f.bh.view().values;
  if (in == gemm_input::bf16) a = f.abf.view().values, b = f.bbf.view().values;
  return {f.s.m, f.s.n, f.s.k, a, f.s.k, b, f.s.n, f.c.view().values, f.s.n, 1.0f, 0.0f, nullptr, ctx().sm_count()};
}

/// Largest elementwise error of f.c against cuBLAS PEDANTIC on the same float inputs,
/// relative to |A||B| (reference and magnitudes computed once per shape).
double check(fixture& f) {
  if (!f.has_ref) {
    gemm_args g = args_for(f, gemm_input::f32);
    g.c = f.ref.view().values;
    cublas_gemm(vendor(), gemm_precision::fp32, g);
    device_dense<float> abs_a(ctx(), f.s.m, f.s.k), abs_b(ctx(), f.s.k, f.s.n);
    abs_kernel<<<1024, 256, 0, ctx().stream()>>>(f.a.view().values, abs_a.view().values, long(f.s.m) * f.s.k);
    LA_CHECK_LAUNCH(ctx().stream());
    abs_kernel<<<1024, 256, 0, ctx().stream()>>>(f.b.view().values, abs_b.view().values, long(f.s.k) * f.s.n);
    LA_CHECK_LAUNCH(ctx().stream());
    f.mag = device_dense<float>(ctx(), f.s.m, f.s.n);
    g.a = abs_a.view().values;
    g.b = abs_b.view().values;
    g.c = f.mag.view().values;
    cublas_gemm(vendor(), gemm_precision::fp32, g);
    ctx().synchronize();  // abs_a, abs_b go out of scope
    f.has_ref = true;
  }
  auto worst = ctx().allocate<unsigned long long>(1);
  LA_CUDA_TRY(cudaMemsetAsync(worst.data(), 0, sizeof(unsigned long long), ctx().stream()));
  error_kernel<<<1024, 256, 0, ctx().stream()>>>(f.c.view().values, f.ref.view().values, f.mag.view().values,
                                                 long(f.s.m) * f.s.n, worst.data());
  LA_CHECK_LAUNCH(ctx().stream());
  unsigned long long bits = 0;
  worst.copy_to_host_async(&bits, 1);
  ctx().synchronize();
  double w = 0;
  std::memcpy(&w, &bits, sizeof w);
  return w;
}

/// The GEMM tolerance rule for the variant, plus the fp32 term of the float reference.
double tolerance(gemm_precision p, index_t k) {
  return gemm_tolerance(p, k, /*reference_from_float_inputs=*/true) + gemm_tolerance(gemm_precision::fp32, k);
}

template <typename Launch>
void time_it(benchmark::State& st, fixture& f, gemm_precision p, Launch&& launch) {
  // Poison C, run once, validate.
  LA_CUDA_TRY(cudaMemsetAsync(f.c.view().values, 0xff, sizeof(float) * f.s.m * f.s.n, ctx().stream()));
  launch();
  const double err = check(f);
  if (!(err <= tolerance(p, f.s.k))) {
    st.SkipWithError(("output differs from cuBLAS PEDANTIC: elementwise error " + std::to_string(err) +
                      " of |A||B| > tolerance " + std::to_string(tolerance(p, f.s.k)))
                         .c_str());
    return;
  }
  launch();  // warm-up
  event_timer timer;
  for (auto _ : st) st.SetIterationTime(timer.time_ms(ctx().stream(), launch) / 1e3);
  const double flops = 2.0 * f.s.m * f.s.n * f.s.k;
  st.counters["TFLOPS"] = benchmark::Counter(flops * 1e-12, benchmark::Counter::kIsIterationInvariantRate);
  st.counters["rel_err"] = err;
  st.SetLabel(to_string(p));
}

/// The workspace a variant or a tile asks for s (split-K partials, operand copies, a tail's
/// partials), kept across the timed calls as la::gemm keeps it in the context.
device_buffer<unsigned char> workspace_for(gemm_args& g, std::size_t (*bytes)(const gemm_problem&), const shape& s) {
  device_buffer<unsigned char> ws = ctx().allocate<unsigned char>(bytes({s.m, s.n, s.k, g.sm_count}));
  g.workspace = ws.data();
  g.workspace_size = ws.size();
  return ws;
}

void bench_variant(benchmark::State& st, shape s, const gemm_variant* v) {
  fixture& f = data_for(s);
  gemm_args g = args_for(f, v->input);
  const auto ws = workspace_for(g, v->workspace_bytes, s);
  time_it(st, f, v->precision, [&] { v->run(g, ctx().stream()); });
}

/// One of a variant's tile shapes, forced (reg_tiled and the plain 16-bit wgmma kernels pick
/// one by size; this times each).
void bench_gemm_tile(benchmark::State& st, shape s, const gemm_variant* v, const gemm_detail::gemm_tile* r) {
  fixture& f = data_for(s);
  gemm_args g = args_for(f, v->input);
  const auto ws = workspace_for(g, r->workspace_bytes, s);
  time_it(st, f, v->precision, [&] { r->run(g, ctx().stream()); });
}

void bench_cublas(benchmark::State& st, shape s, gemm_precision p, gemm_input in) {
  fixture& f = data_for(s);
  const gemm_args g = args_for(f, in);
  time_it(st, f, p, [&] { cublas_gemm(vendor(), p, g); });
}

bool worth_timing(const gemm_variant& v, const shape& s) {
  if (!v.can_implement({s.m, s.n, s.k, device_sm_count()})) return false;  // the sm_90a rung elsewhere
  if (v.teaching) return s.square() && s.m <= 4096;  // reported for the ladder, not the targets
  if (v.splits) return v.splits({s.m, s.n, s.k, device_sm_count()}) > 1;
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
    // The tiles of the variants that pick one by size, one by one, where K is not so long
    // that split-K takes over.
    if (device_sm_count() > 0 && s.k <= s.m * 4) {
      auto tiles = [&](const char* name, const std::vector<gemm_detail::gemm_tile>& list) {
        const gemm_variant& v = find_gemm(name);
        if (!v.can_implement({s.m, s.n, s.k, device_sm_count()})) return;
        for (const auto& r : list)
          benchmark::RegisterBenchmark(("gemm/" + s.name() + "/" + name + "_" + r.name).c_str(), bench_gemm_tile, s, &v, &r)
              ->UseManualTime()
              ->Unit(benchmark::kMicrosecond);
      };
      tiles("reg_tiled", gemm_detail::reg_tiled_shapes());
      tiles("wgmma_f16", gemm_detail::wgmma_tiles(gemm_input::f16));
      tiles("wgmma_bf16", gemm_detail::wgmma_tiles(gemm_input::bf16));
    }
    // Each cuBLAS call with the inputs of its precision class.
    const std::tuple<const char*, gemm_precision, gemm_input> peers[] = {
        {"cublas_fp32", gemm_precision::fp32, gemm_input::f32},
        {"cublas_tf32", gemm_precision::tf32, gemm_input::f32},
        {"cublas_f16", gemm_precision::fp16, gemm_input::f16},
        {"cublas_bf16", gemm_precision::bf16, gemm_input::bf16}};
    for (auto [name, mode, in] : peers)
      benchmark::RegisterBenchmark(("gemm/" + s.name() + "/" + name).c_str(), bench_cublas, s, mode, in)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
  }
  return 0;
}
const int registered = register_all();
}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  current_fixture().reset();
  if (la::cuda_available()) ctx().synchronize();
  return 0;
}
