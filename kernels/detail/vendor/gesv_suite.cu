// `la bench gesv` and `la bench dgemm` (gesv_suite.hpp): la's dense_solver and fp64 GEMM
// beside cuSOLVER (getrf/getrs, potrf/potrs, IRS) and cuBLAS DGEMM on the same matrices.
// la is row-major and cuSOLVER column-major: cuSOLVER factors the same memory as A^T and
// solves with the transposed operation, so both solve A x = b, and the residuals are
// computed the same way (cuBLAS DGEMV in double) for every row.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>

#include <cusolverDn.h>

#include <la/kernels/detail/vendor/gesv_suite.hpp>
#include <la/kernels/gemm/gemm.hpp>
#include <la/solvers/batched_dense.hpp>
#include <la/solvers/dense_solver.hpp>
#include <random>

namespace la {
namespace {

#define LA_CUSOLVER_TRY(call)                                                                              \
  do {                                                                                                     \
    const cusolverStatus_t st_ = (call);                                                                   \
    if (st_ != CUSOLVER_STATUS_SUCCESS)                                                                    \
      throw device_error(std::string("cuSOLVER call failed (status ") + std::to_string(int(st_)) + "): " + #call); \
  } while (0)

__device__ __forceinline__ double hash_uniform(unsigned long long i, unsigned long long seed) {
  unsigned long long z = i * 0x9E3779B97F4A7C15ull + seed;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53 * 2.0 - 1.0;  // [-1, 1)
}
/// A random n x n (uniform in [-1, 1)); spd: symmetric plus n on the diagonal (diagonally dominant).
__global__ void random_matrix_kernel(double* a, index_t n, bool spd, unsigned long long seed) {
  const long e = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= static_cast<long>(n) * n) return;
  const long i = e / n, j = e % n;
  if (!spd) {
    a[e] = hash_uniform(static_cast<unsigned long long>(e), seed);
    return;
  }
  const long lo = std::min(i, j), hi = std::max(i, j);
  a[e] = hash_uniform(static_cast<unsigned long long>(lo * n + hi), seed) + (i == j ? double(n) : 0.0);
}
__global__ void row_abs_sum_kernel(const double* a, index_t n, double* out) {
  const index_t r = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= n) return;
  double s = 0;
  for (index_t j = 0; j < n; ++j) s += fabs(a[static_cast<long>(j) * n + r]);  // column sums of the memory = row sums of A^T
  out[r] = s;
}

double seconds_now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct cusolver {
  cusolverDnHandle_t h = nullptr;
  explicit cusolver(context& ctx) {
    LA_CUSOLVER_TRY(cusolverDnCreate(&h));
    LA_CUSOLVER_TRY(cusolverDnSetStream(h, ctx.stream()));
  }
  ~cusolver() { cusolverDnDestroy(h); }
};

/// max|x| over n entries (cuBLAS idamax, then the entry).
double max_abs(vendor_handles& vh, const double* x, index_t n) {
  int idx = 0;
  LA_CUBLAS_TRY(cublasIdamax(vh.cublas(), n, x, 1, &idx));
  double v = 0;
  LA_CUDA_TRY(cudaMemcpy(&v, x + (idx - 1), sizeof(double), cudaMemcpyDeviceToHost));
  return std::abs(v);
}

/// ||b - A x||_inf / (||A||_inf ||x||_inf + ||b||_inf) with A the row-major a: the memory is
/// A^T column-major, so A x is the transposed DGEMV.
double backward_error(vendor_handles& vh, const double* a, index_t n, const double* x, const double* b, double a_inf,
                      device_buffer<double>& r) {
  LA_CUDA_TRY(cudaMemcpyAsync(r.data(), b, sizeof(double) * n, cudaMemcpyDeviceToDevice, vh.ctx().stream()));
  const double m1 = -1, p1 = 1;
  LA_CUBLAS_TRY(cublasDgemv(vh.cublas(), CUBLAS_OP_T, n, n, &m1, a, n, x, 1, &p1, r.data(), 1));
  vh.ctx().synchronize();
  const double rn = max_abs(vh, r.data(), n), xn = max_abs(vh, x, n), bn = max_abs(vh, b, n);
  const double be = rn / (a_inf * xn + bn);
  return std::isfinite(be) ? be : INFINITY;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void progress(const gesv_bench_options& o, const std::string& what) {
  if (o.progress) std::fprintf(stderr, "\r%-70s", what.c_str()), std::fflush(stderr);
}
}  // namespace

std::vector<gesv_row> bench_dgemm(context& ctx, vendor_handles& vh, const gesv_bench_options& o) {
  std::vector<gesv_row> rows;
  for (index_t n : o.sizes) {
    progress(o, "dgemm " + std::to_string(n));
    const std::size_t nn = static_cast<std::size_t>(n) * n;
    device_buffer<double> a(nn, ctx.stream()), b(nn, ctx.stream()), c(nn, ctx.stream()), ref(nn, ctx.stream());
    random_matrix_kernel<<<static_cast<unsigned>((nn + 255) / 256), 256, 0, ctx.stream()>>>(a.data(), n, false, 1);
    random_matrix_kernel<<<static_cast<unsigned>((nn + 255) / 256), 256, 0, ctx.stream()>>>(b.data(), n, false, 2);
    LA_CHECK_LAUNCH(ctx.stream());
    const double flops = 2.0 * n * double(n) * n;
    auto time = [&](auto&& run) {
      run();  // warm
      ctx.synchronize();
      std::vector<double> t;
      for (int r = 0; r < std::max(o.reps, 3); ++r) {
        const double t0 = seconds_now();
        run();
        ctx.synchronize();
        t.push_back(seconds_now() - t0);
      }
      return median(t);
    };
    // cuBLAS: row-major C = A B is column-major C^T = B^T A^T.
    const double one = 1, zero = 0;
    const double tc = time([&] {
      LA_CUBLAS_TRY(cublasDgemm(vh.cublas(), CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b.data(), n, a.data(), n, &zero,
                                ref.data(), n));
    });
    rows.push_back({"dgemm", n, "cublas", 1e3 * tc, 0, flops / tc / 1e12, 0, 0, true, ""});
    std::vector<double> hr(nn);
    LA_CUDA_TRY(cudaMemcpy(hr.data(), ref.data(), nn * 8, cudaMemcpyDeviceToHost));
    for (const dgemm_variant& v : dgemm_variants()) {
      if (!v.can_implement({n, n, n})) continue;
      dgemm_args g;
      g.m = g.n = g.k = n, g.a = a.data(), g.lda = n, g.b = b.data(), g.ldb = n, g.c = c.data(), g.ldc = n;
      // C poisoned (all bits set: NaN) before each variant, so an entry it leaves unwritten fails.
      LA_CUDA_TRY(cudaMemsetAsync(c.data(), 0xFF, nn * 8, ctx.stream()));
      const double t = time([&] { dgemm(g, ctx.stream(), v.name); });
      std::vector<double> hc(nn);
      LA_CUDA_TRY(cudaMemcpy(hc.data(), c.data(), nn * 8, cudaMemcpyDeviceToHost));
      double worst = 0;
      for (std::size_t e = 0; e < nn; ++e) {
        const double d = std::abs(hc[e] - hr[e]);
        if (!(d <= worst)) worst = d;  // a NaN counts (std::max would drop it)
      }
      // Both sum n products of entries below 1: agree to a few n eps.
      const bool ok = worst <= 8.0 * n * 1.12e-16 * std::sqrt(double(n));
      rows.push_back({"dgemm", n, "la:" + std::string(v.name), 1e3 * t, 0, flops / t / 1e12, worst, 0, ok,
                      ok ? "" : "differs from cuBLAS by " + std::to_string(worst)});
    }
  }
  if (o.progress) std::fprintf(stderr, "\r%-70s\r", "");
  return rows;
}

std::vector<gesv_row> bench_gesv(context& ctx, vendor_handles& vh, const gesv_bench_options& o) {
  std::vector<gesv_row> rows;
  cusolver cs(ctx);
  cudaStream_t s = ctx.stream();
  for (index_t n : o.sizes) {
    const std::size_t nn = static_cast<std::size_t>(n) * n;
    device_buffer<double> a(nn, s), work(nn, s), b(static_cast<std::size_t>(n), s), x(static_cast<std::size_t>(n), s),
        r(static_cast<std::size_t>(n), s), rs(static_cast<std::size_t>(n), s);
    device_buffer<int> info(1, s);
    device_buffer<int> ipiv(static_cast<std::size_t>(n), s);
    {
      std::vector<double> hb(static_cast<std::size_t>(n));
      for (index_t i = 0; i < n; ++i) hb[static_cast<std::size_t>(i)] = std::sin(0.37 * i + 1.0);
      LA_CUDA_TRY(cudaMemcpy(b.data(), hb.data(), sizeof(double) * n, cudaMemcpyHostToDevice));
    }
    const int reps = n >= 16384 ? 1 : n >= 4096 ? 2 : std::max(o.reps, 3);
    for (bool spd : {false, true}) {
      if ((!spd && !o.lu) || (spd && !o.cholesky)) continue;
      const std::string what = spd ? "potrf" : "getrf";
      random_matrix_kernel<<<static_cast<unsigned>((nn + 255) / 256), 256, 0, s>>>(a.data(), n, spd, spd ? 11 : 13);
      LA_CHECK_LAUNCH(s);
      row_abs_sum_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, s>>>(a.data(), n, rs.data());
      LA_CHECK_LAUNCH(s);
      const double a_inf = max_abs(vh, rs.data(), n);
      const double flops = spd ? n * double(n) * n / 3.0 : 2.0 * n * double(n) * n / 3.0;
      device_dense<double> view(n, n, n, device_buffer<double>::borrow(a.data(), nn, ctx.device()));
      // la: the factorization (the constructor: A's copy, its norms, the factors), then a solve.
      auto run_la = [&](const std::string& prec, const std::string& label, const std::string& kind, bool lookahead = true) {
        progress(o, kind + " " + std::to_string(n) + " " + label);
        dense_solver_options opt;
        opt.lookahead = lookahead;
        opt.factorization = spd ? dense_factorization::cholesky : dense_factorization::lu;
        opt.factor_precision = prec;
        std::vector<double> tf, ts;
        double be = 0;
        int steps = 0;
        bool ok = true;
        std::string note;
        for (int rep = 0; rep < reps + 1; ++rep) {  // the first is a warm-up
          ctx.synchronize();
          const double t0 = seconds_now();
          dense_solver<double> sol(ctx, view, opt);
          ctx.synchronize();
          const double t1 = seconds_now();
          LA_CUDA_TRY(cudaMemcpyAsync(x.data(), b.data(), sizeof(double) * n, cudaMemcpyDeviceToDevice, s));
          device_dense<double> xv(n, 1, 1, device_buffer<double>::borrow(x.data(), static_cast<std::size_t>(n), ctx.device()));
          const dense_solve_report rep_ = sol.solve(xv);
          ctx.synchronize();
          const double t2 = seconds_now();
          if (rep > 0) tf.push_back(t1 - t0), ts.push_back(t2 - t1);
          steps = rep_.refinement_steps;
          if (rep_.refactored) note = "refactored in fp64";
        }
        be = backward_error(vh, a.data(), n, x.data(), b.data(), a_inf, r);
        ok = be <= 1e-14;
        const double f = median(tf), sv = median(ts);
        rows.push_back({kind, n, "la:" + label, 1e3 * (kind == "gesv-mixed" ? f + sv : f), 1e3 * sv, flops / f / 1e12, be, steps,
                        ok, note});
      };
      run_la("working", "fp64", what);
      if (o.ablate && n > 512) run_la("working", "fp64-no-lookahead", what, false);
      if (o.ablate && n <= 1024) {  // the same with the memory pool keeping its freed memory
        const std::uint64_t was = pool_release_threshold(ctx.device());
        set_pool_release_threshold(ctx.device(), UINT64_MAX);
        run_la("working", "fp64-pool-kept", what);
        set_pool_release_threshold(ctx.device(), was);
      }
      // cuSOLVER: the same memory column-major is A^T; getrs/potrs with the transposed operation solve A x = b.
      {
        progress(o, what + " " + std::to_string(n) + " cusolver");
        int lwork = 0;
        if (spd) LA_CUSOLVER_TRY(cusolverDnDpotrf_bufferSize(cs.h, CUBLAS_FILL_MODE_LOWER, n, work.data(), n, &lwork));
        else LA_CUSOLVER_TRY(cusolverDnDgetrf_bufferSize(cs.h, n, n, work.data(), n, &lwork));
        device_buffer<double> ws(static_cast<std::size_t>(std::max(lwork, 1)), s);
        std::vector<double> tf, ts;
        for (int rep = 0; rep < reps + 1; ++rep) {
          ctx.synchronize();
          const double t0 = seconds_now();
          LA_CUDA_TRY(cudaMemcpyAsync(work.data(), a.data(), nn * 8, cudaMemcpyDeviceToDevice, s));
          if (spd) LA_CUSOLVER_TRY(cusolverDnDpotrf(cs.h, CUBLAS_FILL_MODE_LOWER, n, work.data(), n, ws.data(), lwork, info.data()));
          else LA_CUSOLVER_TRY(cusolverDnDgetrf(cs.h, n, n, work.data(), n, ws.data(), ipiv.data(), info.data()));
          ctx.synchronize();
          const double t1 = seconds_now();
          LA_CUDA_TRY(cudaMemcpyAsync(x.data(), b.data(), sizeof(double) * n, cudaMemcpyDeviceToDevice, s));
          if (spd) LA_CUSOLVER_TRY(cusolverDnDpotrs(cs.h, CUBLAS_FILL_MODE_LOWER, n, 1, work.data(), n, x.data(), n, info.data()));
          else LA_CUSOLVER_TRY(cusolverDnDgetrs(cs.h, CUBLAS_OP_T, n, 1, work.data(), n, ipiv.data(), x.data(), n, info.data()));
          ctx.synchronize();
          const double t2 = seconds_now();
          if (rep > 0) tf.push_back(t1 - t0), ts.push_back(t2 - t1);
        }
        const double be = backward_error(vh, a.data(), n, x.data(), b.data(), a_inf, r);
        const double f = median(tf), sv = median(ts);
        rows.push_back({what, n, "cusolver", 1e3 * f, 1e3 * sv, flops / f / 1e12, be, 0, be <= 1e-14, ""});
        if (!spd && o.mixed) rows.push_back({"gesv-mixed", n, "cusolver:fp64", 1e3 * (f + sv), 1e3 * sv, flops / f / 1e12, be, 0,
                                             be <= 1e-14, ""});
      }
      if (spd || !o.mixed) continue;
      run_la("tf32x3", "tf32x3", "gesv-mixed");
      run_la("tf32", "tf32", "gesv-mixed");
      run_la("fp32", "fp32", "gesv-mixed");
      run_la("bf16", "bf16", "gesv-mixed");
      run_la("fp16", "fp16", "gesv-mixed");
      // cuSOLVER's iterative refinement: classical with float and TF32 factors; GMRES-based
      // (CUSOLVER_IRS_REFINE_GMRES) with float, TF32 and half factors.
      struct irs_kind {
        cusolverPrecType_t low;
        cusolverIRSRefinement_t refine;
        const char* label;
      };
      for (const irs_kind& kind : {irs_kind{CUSOLVER_R_32F, CUSOLVER_IRS_REFINE_CLASSICAL, "cusolver:irs-fp32"},
                                   irs_kind{CUSOLVER_R_TF32, CUSOLVER_IRS_REFINE_CLASSICAL, "cusolver:irs-tf32"},
                                   irs_kind{CUSOLVER_R_32F, CUSOLVER_IRS_REFINE_GMRES, "cusolver:irs-gmres-fp32"},
                                   irs_kind{CUSOLVER_R_TF32, CUSOLVER_IRS_REFINE_GMRES, "cusolver:irs-gmres-tf32"},
                                   irs_kind{CUSOLVER_R_16F, CUSOLVER_IRS_REFINE_GMRES, "cusolver:irs-gmres-fp16"}}) {
        const cusolverPrecType_t low = kind.low;
        const std::string label = kind.label;
        progress(o, "gesv-mixed " + std::to_string(n) + " " + label);
        cusolverDnIRSParams_t params;
        cusolverDnIRSInfos_t infos;
        LA_CUSOLVER_TRY(cusolverDnIRSParamsCreate(&params));
        LA_CUSOLVER_TRY(cusolverDnIRSParamsSetSolverPrecisions(params, CUSOLVER_R_64F, low));
        LA_CUSOLVER_TRY(cusolverDnIRSParamsSetRefinementSolver(params, kind.refine));
        LA_CUSOLVER_TRY(cusolverDnIRSParamsSetMaxIters(params, 50));
        LA_CUSOLVER_TRY(cusolverDnIRSInfosCreate(&infos));
        std::size_t lbytes = 0;
        LA_CUSOLVER_TRY(cusolverDnIRSXgesv_bufferSize(cs.h, params, n, 1, &lbytes));
        device_buffer<unsigned char> ws(std::max<std::size_t>(lbytes, 1), s);
        device_buffer<double> bt(static_cast<std::size_t>(n), s);
        std::vector<double> tt;
        int iters = 0;
        for (int rep = 0; rep < reps + 1; ++rep) {
          LA_CUDA_TRY(cudaMemcpyAsync(work.data(), a.data(), nn * 8, cudaMemcpyDeviceToDevice, s));
          LA_CUDA_TRY(cudaMemcpyAsync(bt.data(), b.data(), sizeof(double) * n, cudaMemcpyDeviceToDevice, s));
          ctx.synchronize();
          const double t0 = seconds_now();
          LA_CUSOLVER_TRY(cusolverDnIRSXgesv(cs.h, params, infos, n, 1, work.data(), n, bt.data(), n, x.data(), n, ws.data(),
                                             lbytes, &iters, info.data()));
          ctx.synchronize();
          if (rep > 0) tt.push_back(seconds_now() - t0);
        }
        // IRS solved the column-major matrix, A^T: its residual is the plain DGEMV.
        LA_CUDA_TRY(cudaMemcpyAsync(r.data(), b.data(), sizeof(double) * n, cudaMemcpyDeviceToDevice, s));
        const double m1 = -1, p1 = 1;
        LA_CUBLAS_TRY(cublasDgemv(vh.cublas(), CUBLAS_OP_N, n, n, &m1, a.data(), n, x.data(), 1, &p1, r.data(), 1));
        ctx.synchronize();
        const double be = max_abs(vh, r.data(), n) / (a_inf * max_abs(vh, x.data(), n) + max_abs(vh, b.data(), n));
        const double t = median(tt);
        rows.push_back({"gesv-mixed", n, label, 1e3 * t, 0, flops / t / 1e12, be, std::abs(iters), be <= 1e-14,
                        iters < 0 ? "fell back to fp64" : ""});
        cusolverDnIRSInfosDestroy(infos);
        cusolverDnIRSParamsDestroy(params);
      }
    }
  }
  if (o.progress) std::fprintf(stderr, "\r%-70s\r", "");
  return rows;
}

void print_gesv_table(const std::vector<gesv_row>& rows, const std::string& device, double peak) {
  std::printf("device: %s (fp64 Tensor Core peak %.1f TFLOP/s)\n", device.c_str(), peak);
  std::printf("%-11s %6s %-20s %10s %9s %8s %7s %10s %5s %-4s %s\n", "kind", "n", "impl", "ms", "solve ms", "TFLOP/s",
              "%peak", "backward", "steps", "ok", "vs peer");
  std::map<std::pair<std::string, index_t>, double> peer;
  for (const auto& r : rows)
    if (r.impl == "cublas" || r.impl == "cusolver" || r.impl == "cusolver:fp64") peer[{r.what, r.n}] = r.ms;
  for (const auto& r : rows) {
    const auto it = peer.find({r.what, r.n});
    char ratio[32] = "";
    if (it != peer.end() && r.impl.rfind("la:", 0) == 0 && r.ms > 0) std::snprintf(ratio, sizeof ratio, "%.2fx", it->second / r.ms);
    std::printf("%-11s %6d %-20s %10.3f %9.3f %8.2f %6.1f%% %10.2e %5d %-4s %s %s\n", r.what.c_str(), r.n, r.impl.c_str(), r.ms,
                r.solve_ms, r.tflops, peak > 0 ? 100 * r.tflops / peak : 0.0, r.backward_error, r.refinement_steps,
                r.ok ? "yes" : "NO", ratio, r.note.c_str());
  }
  std::printf("(vs peer: the cuSOLVER/cuBLAS time of the same kind and n over la's; above 1 la is faster)\n");
}

void write_gesv_csv(const std::vector<gesv_row>& rows, const std::string& path, const std::string& device) {
  std::ofstream f(path);
  if (!f) throw io_error("cannot write '" + path + "'");
  f << "device,kind,n,impl,ms,solve_ms,tflops,backward_error,refinement_steps,ok,note\n";
  for (const auto& r : rows)
    f << '"' << device << "\"," << r.what << ',' << r.n << ',' << r.impl << ',' << r.ms << ',' << r.solve_ms << ',' << r.tflops
      << ',' << r.backward_error << ',' << r.refinement_steps << ',' << (r.ok ? 1 : 0) << ",\"" << r.note << "\"\n";
}

namespace {
/// The worst backward error over a batch (row-major A_i, one right-hand side each), in long double.
double batch_backward_error(const std::vector<double>& a, const std::vector<double>& b, const std::vector<double>& x,
                            index_t n, index_t count) {
  double worst = 0;
  for (index_t i = 0; i < count; ++i) {
    const double* ai = a.data() + static_cast<std::size_t>(i) * n * n;
    const double* bi = b.data() + static_cast<std::size_t>(i) * n;
    const double* xi = x.data() + static_cast<std::size_t>(i) * n;
    long double rmax = 0, xmax = 0, bmax = 0, ainf = 0;
    for (index_t r = 0; r < n; ++r) {
      long double s = bi[r], row = 0;
      for (index_t c = 0; c < n; ++c) s -= static_cast<long double>(ai[r * n + c]) * xi[c], row += std::fabs(static_cast<long double>(ai[r * n + c]));
      rmax = std::max(rmax, std::fabs(s)), ainf = std::max(ainf, row);
      xmax = std::max(xmax, std::fabs(static_cast<long double>(xi[r]))), bmax = std::max(bmax, std::fabs(static_cast<long double>(bi[r])));
    }
    const double be = static_cast<double>(rmax / (ainf * xmax + bmax));
    if (!(be <= worst)) worst = std::isfinite(be) ? be : INFINITY;
  }
  return worst;
}

/// cuBLAS's and cuSOLVER's batched calls take an array of device pointers, one a system.
device_buffer<double*> pointer_array(double* base, index_t count, std::size_t stride, cudaStream_t s) {
  std::vector<double*> h(static_cast<std::size_t>(count));
  for (index_t i = 0; i < count; ++i) h[static_cast<std::size_t>(i)] = base + static_cast<std::size_t>(i) * stride;
  device_buffer<double*> d(h.size(), s);
  LA_CUDA_TRY(cudaMemcpyAsync(d.data(), h.data(), sizeof(double*) * h.size(), cudaMemcpyHostToDevice, s));
  LA_CUDA_TRY(cudaStreamSynchronize(s));
  return d;
}
}  // namespace

std::vector<gesv_row> bench_gesv_batched(context& ctx, vendor_handles& vh, const gesv_bench_options& o,
                                         const std::vector<index_t>& counts) {
  std::vector<gesv_row> rows;
  cusolver cs(ctx);
  cudaStream_t s = ctx.stream();
  for (std::size_t q = 0; q < o.sizes.size(); ++q) {
    const index_t n = o.sizes[q];
    const index_t count = counts.empty() ? (n <= 64 ? 10000 : 1000) : counts[std::min(q, counts.size() - 1)];
    const std::size_t na = static_cast<std::size_t>(count) * n * n, nb = static_cast<std::size_t>(count) * n;
    const std::string note = "batch of " + std::to_string(count);
    for (bool spd : {false, true}) {
      if ((!spd && !o.lu) || (spd && !o.cholesky)) continue;
      const std::string what = spd ? "potrf-batch" : "getrf-batch";
      progress(o, what + " " + std::to_string(n));
      // The systems: uniform [-1, 1] plus sqrt(n) I, or M M^T / n + I (SPD); b uniform.
      std::mt19937 g(static_cast<unsigned>(n * 7 + spd));
      std::uniform_real_distribution<double> u(-1, 1);
      std::vector<double> ha(na), hb(nb), hx(nb);
      for (index_t i = 0; i < count; ++i) {
        double* ai = ha.data() + static_cast<std::size_t>(i) * n * n;
        if (!spd) {
          for (index_t r = 0; r < n; ++r)
            for (index_t c = 0; c < n; ++c) ai[r * n + c] = u(g) + (r == c ? std::sqrt(double(n)) : 0.0);
        } else {
          std::vector<double> m(static_cast<std::size_t>(n) * n);
          for (double& v : m) v = u(g);
          for (index_t r = 0; r < n; ++r)
            for (index_t c = 0; c <= r; ++c) {
              double t = r == c ? 1.0 : 0.0;
              for (index_t p = 0; p < n; ++p) t += m[r * n + p] * m[c * n + p] / n;
              ai[r * n + c] = ai[c * n + r] = t;
            }
        }
      }
      for (double& v : hb) v = u(g);
      device_buffer<double> a(na, s), work(na, s), b(nb, s), x(nb, s);
      LA_CUDA_TRY(cudaMemcpyAsync(a.data(), ha.data(), sizeof(double) * na, cudaMemcpyHostToDevice, s));
      LA_CUDA_TRY(cudaMemcpyAsync(b.data(), hb.data(), sizeof(double) * nb, cudaMemcpyHostToDevice, s));
      const double flops = count * (spd ? n * double(n) * n / 3.0 : 2.0 * n * double(n) * n / 3.0);
      const int reps = std::max(o.reps, 3);
      auto check = [&](double* xd, std::string& why) {
        LA_CUDA_TRY(cudaMemcpyAsync(hx.data(), xd, sizeof(double) * nb, cudaMemcpyDeviceToHost, s));
        LA_CUDA_TRY(cudaStreamSynchronize(s));
        const double be = batch_backward_error(ha, hb, hx, n, count);
        if (!(be <= 1e-13)) why = "worst backward error " + std::to_string(be);
        return be;
      };
      auto add = [&](const std::string& impl, std::vector<double>& tf, std::vector<double>& ts, double be, const std::string& why) {
        const double f = median(tf), sv = median(ts);
        rows.push_back({what, n, impl, 1e3 * (f + sv), 1e3 * sv, flops / (f + sv) / 1e12, be, 0, why.empty(),
                        note + (why.empty() ? "" : "; " + why)});
      };
      // la: the solver (A's copy, the factorization), then the solve of b (copied into x first).
      for (dense_factorization f : spd ? std::vector<dense_factorization>{dense_factorization::cholesky, dense_factorization::automatic}
                                        : std::vector<dense_factorization>{dense_factorization::lu, dense_factorization::automatic}) {
        std::vector<double> tf, ts;
        std::string why;
        batched_dense_options bo;
        bo.factorization = f;
        index_t failed = 0;
        for (int rep = 0; rep <= reps; ++rep) {
          ctx.synchronize();
          const double t0 = seconds_now();
          batched_dense_solver<double> sol(ctx, count, n, a.data(), bo);
          ctx.synchronize();
          const double t1 = seconds_now();
          LA_CUDA_TRY(cudaMemcpyAsync(x.data(), b.data(), sizeof(double) * nb, cudaMemcpyDeviceToDevice, s));
          const batched_dense_report r = sol.solve(x.data(), 1);
          ctx.synchronize();
          const double t2 = seconds_now();
          if (rep > 0) tf.push_back(t1 - t0), ts.push_back(t2 - t1);
          failed = r.failed;
        }
        const double be = check(x.data(), why);
        if (failed) why += (why.empty() ? "" : "; ") + std::to_string(failed) + " systems not solved";
        add(f == dense_factorization::automatic ? "la:auto" : spd ? "la:cholesky" : "la:lu", tf, ts, be, why);
      }
      // The vendor's: column-major, so the row-major A_i is A_i^T; the transposed solve gives A_i x = b.
      {
        device_buffer<double*> pa = pointer_array(work.data(), count, static_cast<std::size_t>(n) * n, s);
        device_buffer<double*> px = pointer_array(x.data(), count, static_cast<std::size_t>(n), s);
        device_buffer<int> ipiv(static_cast<std::size_t>(count) * n, s), info(static_cast<std::size_t>(count), s);
        std::vector<double> tf, ts;
        std::string why;
        int host_info = 0;
        for (int rep = 0; rep <= reps; ++rep) {
          LA_CUDA_TRY(cudaMemcpyAsync(work.data(), a.data(), sizeof(double) * na, cudaMemcpyDeviceToDevice, s));
          LA_CUDA_TRY(cudaMemcpyAsync(x.data(), b.data(), sizeof(double) * nb, cudaMemcpyDeviceToDevice, s));
          ctx.synchronize();
          const double t0 = seconds_now();
          if (!spd) {
            LA_CUBLAS_TRY(cublasDgetrfBatched(vh.cublas(), n, pa.data(), n, ipiv.data(), info.data(), count));
          } else {
            LA_CUSOLVER_TRY(cusolverDnDpotrfBatched(cs.h, CUBLAS_FILL_MODE_UPPER, n, pa.data(), n, info.data(), count));
          }
          ctx.synchronize();
          const double t1 = seconds_now();
          if (!spd) {
            LA_CUBLAS_TRY(cublasDgetrsBatched(vh.cublas(), CUBLAS_OP_T, n, 1, pa.data(), n, ipiv.data(), px.data(), n,
                                              &host_info, count));
          } else {
            LA_CUSOLVER_TRY(cusolverDnDpotrsBatched(cs.h, CUBLAS_FILL_MODE_UPPER, n, 1, pa.data(), n, px.data(), n,
                                                    info.data(), count));
          }
          ctx.synchronize();
          const double t2 = seconds_now();
          if (rep > 0) tf.push_back(t1 - t0), ts.push_back(t2 - t1);
        }
        std::vector<int> hi(static_cast<std::size_t>(count));
        LA_CUDA_TRY(cudaMemcpy(hi.data(), info.data(), sizeof(int) * hi.size(), cudaMemcpyDeviceToHost));
        const double be = check(x.data(), why);
        const auto bad = std::count_if(hi.begin(), hi.end(), [](int v) { return v != 0; });
        if (bad || host_info) why += (why.empty() ? "" : "; ") + std::to_string(bad) + " systems with info != 0";
        add(spd ? "cusolver" : "cublas", tf, ts, be, why);
      }
    }
  }
  if (o.progress) std::fprintf(stderr, "\r%-70s\r", "");
  return rows;
}

}  // namespace la
