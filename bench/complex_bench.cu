// Complex values on the GPU against the vendor libraries, in one run (issue 69):
//   spmv  la's complex SpMV (the CSR default, the thread-per-row CSR kernel, SELL-32, and
//         the complex rule's choice, "la:auto") against cusparseSpMV (CUDA_C_64F,
//         CSR ALG1 and ALG2, the faster kept) on generated Helmholtz systems and data/'s
//         complex matrices; each answer checked against the host reference (complex<long double>
//         sums) with y poisoned with NaN first; median of 20 timed runs (CUDA events); the
//         bytes floor (values 16 B + column 4 B a stored entry, row pointers, x and y once) as
//         a share of the copy bandwidth measured in the same run
//   lu    la's dense complex LU (dense_lu_device) against cusolverDnZgetrf at n = 1024..16384;
//         each factorization checked by solving A x = A*ones with it (relative error below 1e-8);
//         cholesky  la's dense complex Cholesky (dense_cholesky_device) against cusolverDnZpotrf
//         (lower) at the same sizes, on a Hermitian diagonally dominant matrix, checked the same way
// Writes CSV (--out FILE) and prints a table. Exits 1 where an answer misses its check.
//   complex_bench [--out FILE] [--sizes 1024,2048,4096] [--spmv-only | --lu-only]
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <la/context.hpp>
#include <la/formats/convert.hpp>
#include <la/formats/generate.hpp>
#include <la/formats/matrix_market.hpp>
#include <la/kernels/reference/spmv.hpp>
#include <la/kernels/spmv/select.hpp>
#include <la/kernels/spmv/spmv.hpp>
#include <la/solvers/complex_direct.hpp>
#include <la/vector.hpp>

namespace {
using namespace la;
using z = std::complex<double>;

#define CHECK_CUSPARSE(call)                                                                       \
  do {                                                                                             \
    const cusparseStatus_t s_ = (call);                                                            \
    if (s_ != CUSPARSE_STATUS_SUCCESS) throw la::error(std::string(#call) + ": " + cusparseGetErrorString(s_)); \
  } while (0)
#define CHECK_CUSOLVER(call)                                                                           \
  do {                                                                                                 \
    const cusolverStatus_t s_ = (call);                                                                \
    if (s_ != CUSOLVER_STATUS_SUCCESS) throw la::error(std::string(#call) + ": status " + std::to_string(int(s_))); \
  } while (0)

template <typename F>
double median_ms(context& ctx, F&& f, int reps = 20) {
  f();  // warm
  ctx.synchronize();
  cudaEvent_t a, b;
  LA_CUDA_TRY(cudaEventCreate(&a));
  LA_CUDA_TRY(cudaEventCreate(&b));
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    LA_CUDA_TRY(cudaEventRecord(a, ctx.stream()));
    f();
    LA_CUDA_TRY(cudaEventRecord(b, ctx.stream()));
    LA_CUDA_TRY(cudaEventSynchronize(b));
    float ms = 0;
    LA_CUDA_TRY(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

__global__ void copy_kernel(const double2* in, double2* out, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n; i += static_cast<long long>(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

/// The device's copy bandwidth (bytes read + written per second) on 1 GiB.
double copy_bandwidth(context& ctx) {
  const long long n = (1ll << 30) / sizeof(double2);
  device_buffer<double2> a = ctx.allocate<double2>(n), b = ctx.allocate<double2>(n);
  LA_CUDA_TRY(cudaMemsetAsync(a.data(), 0, n * sizeof(double2), ctx.stream()));
  const double ms = median_ms(ctx, [&] { copy_kernel<<<4 * 1024, 256, 0, ctx.stream()>>>(a.data(), b.data(), n); });
  return 2.0 * n * sizeof(double2) / (ms * 1e-3);
}

/// Max over rows of |got - want| / ((k + 4) eps sum |a||x|): at most 1 passes.
double check_rows(const csr_matrix<z>& a, const std::vector<z>& x, const std::vector<z>& got) {
  std::vector<z> want(got.size());
  reference::spmv(z(1), a, x, z(0), want);
  double worst = 0;
  for (index_t i = 0; i < a.rows(); ++i) {
    double mag = 0;
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) mag += std::abs(a.values()[k]) * std::abs(x[a.col_idx()[k]]);
    const double tol = (a.row_ptr()[i + 1] - a.row_ptr()[i] + 4) * 2.2e-16 * mag;
    const double err = std::abs(got[i] - want[i]);
    worst = std::max(worst, tol > 0 ? err / tol : (err == 0 ? 0.0 : INFINITY));
    if (!(err == err)) return INFINITY;
  }
  return worst;
}

struct row {
  std::string bench, case_name, impl;
  long long n = 0, nnz = 0;
  double ms = 0, peer_ms = 0, floor_share = 0;
  bool ok = false;
};

int spmv_part(context& ctx, std::vector<row>& out) {
  const double bw = copy_bandwidth(ctx);
  std::printf("copy bandwidth: %.0f GB/s\n", bw / 1e9);
  std::vector<std::pair<std::string, csr_matrix<z>>> ms;
  for (const char* d : {"mhd1280b", "w156", "arrowc"}) ms.push_back({d, read_matrix_market_csr<z>(std::string(LA_DATA_DIR) + "/" + d + ".mtx")});
  for (int n : {1000, 3000}) ms.push_back({"helmholtz2d:" + std::to_string(n), helmholtz<z>(2, n, helmholtz_kappa(n, 10), 0.5)});
  for (int n : {100, 200}) ms.push_back({"helmholtz3d:" + std::to_string(n), helmholtz<z>(3, n, helmholtz_kappa(n, 10), 0.5)});
  cusparseHandle_t h;
  CHECK_CUSPARSE(cusparseCreate(&h));
  CHECK_CUSPARSE(cusparseSetStream(h, ctx.stream()));
  int bad = 0;
  std::mt19937 g(3);
  for (const auto& entry : ms) {
    const std::string& name = entry.first;
    const csr_matrix<z>& a = entry.second;
    std::vector<z> x(static_cast<std::size_t>(a.cols()));
    std::uniform_real_distribution<double> u(-1, 1);
    for (auto& v : x) v = z(u(g), u(g));
    const auto da = to_device(ctx, a);
    const auto sell = to_device(ctx, to_sell(a));
    const auto dx = to_device(ctx, x);
    device_vector<z> dy(ctx, a.rows());
    const double bytes = double(a.nnz()) * 20 + double(a.rows() + 1) * 4 + double(a.cols() + a.rows()) * 16;
    const auto poison = [&] { LA_CUDA_TRY(cudaMemsetAsync(dy.data(), 0xff, sizeof(z) * std::size_t(a.rows()), ctx.stream())); };
    // cuSPARSE, ALG1 and ALG2.
    cusparseSpMatDescr_t mat;
    cusparseDnVecDescr_t vx, vy;
    CHECK_CUSPARSE(cusparseCreateCsr(&mat, a.rows(), a.cols(), a.nnz(), const_cast<index_t*>(da.view().row_ptr),
                                     const_cast<index_t*>(da.view().col_idx), const_cast<z*>(da.view().values),
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_C_64F));
    CHECK_CUSPARSE(cusparseCreateDnVec(&vx, a.cols(), const_cast<z*>(dx.data()), CUDA_C_64F));
    CHECK_CUSPARSE(cusparseCreateDnVec(&vy, a.rows(), dy.data(), CUDA_C_64F));
    const cuDoubleComplex one = make_cuDoubleComplex(1, 0), zero = make_cuDoubleComplex(0, 0);
    double peer = INFINITY;
    std::string peer_name;
    for (auto alg : {CUSPARSE_SPMV_CSR_ALG1, CUSPARSE_SPMV_CSR_ALG2}) {
      std::size_t size = 0;
      CHECK_CUSPARSE(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vx, &zero, vy, CUDA_C_64F, alg, &size));
      device_buffer<unsigned char> work = ctx.allocate<unsigned char>(std::max<std::size_t>(size, 1));
      const auto run = [&] {
        CHECK_CUSPARSE(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vx, &zero, vy, CUDA_C_64F, alg, work.data()));
      };
      poison();
      run();
      const double err = check_rows(a, x, to_host(ctx, dy));
      const double ms_ = median_ms(ctx, run);
      const std::string nm = alg == CUSPARSE_SPMV_CSR_ALG1 ? "cusparse:csr_alg1" : "cusparse:csr_alg2";
      out.push_back({"spmv", name, nm, a.rows(), a.nnz(), ms_, 0, bytes / (ms_ * 1e-3) / bw, err <= 1});
      if (err > 1) ++bad, std::printf("%s %s: wrong answer (%.3g of the tolerance)\n", name.c_str(), nm.c_str(), err);
      else if (ms_ < peer) peer = ms_, peer_name = nm;
    }
    cusparseDestroySpMat(mat);
    cusparseDestroyDnVec(vx);
    cusparseDestroyDnVec(vy);
    // la: the CSR default (csr_vector), the thread-per-row CSR kernel, SELL-32, and what the
    // complex rule picks (select_spmv_complex: what the complex Krylov methods run).
    const spmv_choice rule = select_spmv_complex(row_stats(ctx, da));
    const spmv_operator<z> chosen(ctx, da, rule);
    for (int which = 0; which < 4; ++which) {
      const matrix_view<z> view = which == 2 ? spmv_view(sell) : spmv_view(da);
      const spmv_plan<z> plan(ctx, view, which == 1 ? "csr_scalar" : "auto");
      const auto run = [&] {
        if (which == 3) chosen.apply(dx.data(), dy.data(), z(1), z(0), ctx.stream());
        else plan.run(dx.data(), dy.data(), z(1), z(0), ctx.stream());
      };
      poison();
      run();
      const double err = check_rows(a, x, to_host(ctx, dy));
      const double ms_ = median_ms(ctx, run);
      const std::string nm = which == 3 ? "la:auto" : "la:" + std::string(plan.variant().name);
      if (which == 3)
        std::printf("%s: the complex rule picks %s %s (%s)\n", name.c_str(), to_string(rule.fmt), std::string(chosen.variant().name).c_str(),
                    rule.why.c_str());
      out.push_back({"spmv", name, nm, a.rows(), a.nnz(), ms_, peer, bytes / (ms_ * 1e-3) / bw, err <= 1});
      if (err > 1) ++bad, std::printf("%s %s: wrong answer (%.3g of the tolerance)\n", name.c_str(), nm.c_str(), err);
    }
  }
  cusparseDestroy(h);
  return bad;
}

int lu_part(context& ctx, const std::vector<int>& sizes, std::vector<row>& out) {
  cusolverDnHandle_t h;
  CHECK_CUSOLVER(cusolverDnCreate(&h));
  CHECK_CUSOLVER(cusolverDnSetStream(h, ctx.stream()));
  int bad = 0;
  std::mt19937 g(11);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int n : sizes) {
    std::vector<z> a(static_cast<std::size_t>(n) * n);
    for (auto& v : a) v = z(u(g), u(g));
    std::vector<z> b(static_cast<std::size_t>(n), z(0));  // A * ones
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) b[i] += a[i + static_cast<std::size_t>(j) * n];
    const auto da = to_device(ctx, a);
    device_vector<z> work(ctx, static_cast<index_t>(static_cast<std::size_t>(n) * n));
    device_buffer<int> ipiv = ctx.allocate<int>(n), info = ctx.allocate<int>(1);
    device_buffer<index_t> piv = ctx.allocate<index_t>(n);
    const auto copy_a = [&] {
      LA_CUDA_TRY(cudaMemcpyAsync(work.data(), da.data(), sizeof(z) * a.size(), cudaMemcpyDeviceToDevice, ctx.stream()));
    };
    const auto error_of = [&](const std::vector<z>& x) {
      double e = 0;
      for (const z& v : x) e = std::max(e, std::abs(v - z(1)));
      return e;
    };
    // cuSOLVER zgetrf (+ zgetrs for the check).
    int lwork = 0;
    CHECK_CUSOLVER(cusolverDnZgetrf_bufferSize(h, n, n, reinterpret_cast<cuDoubleComplex*>(work.data()), n, &lwork));
    device_buffer<cuDoubleComplex> ws = ctx.allocate<cuDoubleComplex>(std::max(lwork, 1));
    const auto vendor = [&] {
      CHECK_CUSOLVER(cusolverDnZgetrf(h, n, n, reinterpret_cast<cuDoubleComplex*>(work.data()), n, ws.data(), ipiv.data(), info.data()));
    };
    copy_a();
    vendor();
    auto db = to_device(ctx, b);
    CHECK_CUSOLVER(cusolverDnZgetrs(h, CUBLAS_OP_N, n, 1, reinterpret_cast<cuDoubleComplex*>(work.data()), n, ipiv.data(),
                                    reinterpret_cast<cuDoubleComplex*>(db.data()), n, info.data()));
    const double verr = error_of(to_host(ctx, db));
    const double vms = median_ms(ctx, [&] { copy_a(); vendor(); }, 5) - median_ms(ctx, copy_a, 5);
    out.push_back({"lu", "n=" + std::to_string(n), "cusolver:zgetrf", n, 0, vms, 0, 0, verr < 1e-8});
    if (!(verr < 1e-8)) ++bad, std::printf("zgetrf n %d: error %.3g\n", n, verr);
    // la.
    const auto mine = [&] { (void)dense_lu_device(ctx, work.data(), n, n, piv.data()); };
    copy_a();
    mine();
    db = to_device(ctx, b);
    dense_lu_solve_device(ctx, work.data(), n, n, piv.data(), db.data());
    const double lerr = error_of(to_host(ctx, db));
    const double lms = median_ms(ctx, [&] { copy_a(); mine(); }, 5) - median_ms(ctx, copy_a, 5);
    out.push_back({"lu", "n=" + std::to_string(n), "la:dense_lu_device", n, 0, lms, vms, 0, lerr < 1e-8});
    if (!(lerr < 1e-8)) ++bad, std::printf("la LU n %d: error %.3g\n", n, lerr);
    std::printf("lu n %5d: la %.2f ms, zgetrf %.2f ms, la / cuSOLVER speed %.2fx\n", n, lms, vms, vms / lms);
    // Cholesky on a Hermitian positive definite matrix: A's random Hermitian part plus n I
    // (diagonally dominant), against zpotrf (lower).
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const std::size_t k = i + static_cast<std::size_t>(j) * n;
        // Columns in order: the upper entry's mirror (row j of column i < j) is already set.
        a[k] = i == j ? z(double(n), 0) : i > j ? z(u(g), u(g)) : std::conj(a[j + static_cast<std::size_t>(i) * n]);
      }
    std::fill(b.begin(), b.end(), z(0));
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) b[i] += a[i + static_cast<std::size_t>(j) * n];
    const auto dh = to_device(ctx, a);
    const auto copy_h = [&] {
      LA_CUDA_TRY(cudaMemcpyAsync(work.data(), dh.data(), sizeof(z) * a.size(), cudaMemcpyDeviceToDevice, ctx.stream()));
    };
    CHECK_CUSOLVER(cusolverDnZpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, reinterpret_cast<cuDoubleComplex*>(work.data()), n, &lwork));
    device_buffer<cuDoubleComplex> pws = ctx.allocate<cuDoubleComplex>(std::max(lwork, 1));
    const auto vpotrf = [&] {
      CHECK_CUSOLVER(cusolverDnZpotrf(h, CUBLAS_FILL_MODE_LOWER, n, reinterpret_cast<cuDoubleComplex*>(work.data()), n, pws.data(),
                                      lwork, info.data()));
    };
    copy_h();
    vpotrf();
    db = to_device(ctx, b);
    CHECK_CUSOLVER(cusolverDnZpotrs(h, CUBLAS_FILL_MODE_LOWER, n, 1, reinterpret_cast<cuDoubleComplex*>(work.data()), n,
                                    reinterpret_cast<cuDoubleComplex*>(db.data()), n, info.data()));
    const double perr = error_of(to_host(ctx, db));
    const double pms = median_ms(ctx, [&] { copy_h(); vpotrf(); }, 5) - median_ms(ctx, copy_h, 5);
    out.push_back({"cholesky", "n=" + std::to_string(n), "cusolver:zpotrf", n, 0, pms, 0, 0, perr < 1e-8});
    if (!(perr < 1e-8)) ++bad, std::printf("zpotrf n %d: error %.3g\n", n, perr);
    index_t cinfo = 0;
    const auto mine_c = [&] { cinfo = dense_cholesky_device(ctx, work.data(), n, n); };
    copy_h();
    mine_c();
    db = to_device(ctx, b);
    dense_cholesky_solve_device(ctx, work.data(), n, n, db.data());
    const double cerr = cinfo == 0 ? error_of(to_host(ctx, db)) : INFINITY;
    const double cms = median_ms(ctx, [&] { copy_h(); mine_c(); }, 5) - median_ms(ctx, copy_h, 5);
    out.push_back({"cholesky", "n=" + std::to_string(n), "la:dense_cholesky_device", n, 0, cms, pms, 0, cerr < 1e-8});
    if (!(cerr < 1e-8)) ++bad, std::printf("la Cholesky n %d: error %.3g (info %d)\n", n, cerr, int(cinfo));
    std::printf("cholesky n %5d: la %.2f ms, zpotrf %.2f ms, la / cuSOLVER speed %.2fx\n", n, cms, pms, pms / cms);
  }
  cusolverDnDestroy(h);
  return bad;
}
}  // namespace

int main(int argc, char** argv) {
  std::string out_path;
  std::vector<int> sizes = {1024, 2048, 4096, 8192, 16384};
  bool spmv = true, lu = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) out_path = argv[++i];
    else if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      std::stringstream s(argv[++i]);
      for (std::string t; std::getline(s, t, ',');) sizes.push_back(std::stoi(t));
    } else if (a == "--spmv-only") lu = false;
    else if (a == "--lu-only") spmv = false;
    else {
      std::fprintf(stderr, "usage: complex_bench [--out FILE] [--sizes N,N,...] [--spmv-only | --lu-only]\n");
      return 2;
    }
  }
  try {
    if (!cuda_available()) {
      std::printf("no GPU: %s\n", cuda_status().c_str());
      return 0;
    }
    context ctx;
    std::vector<row> rows;
    int bad = 0;
    if (spmv) bad += spmv_part(ctx, rows);
    if (lu) bad += lu_part(ctx, sizes, rows);
    std::printf("%-6s %-16s %-22s %10s %10s %10s %9s %7s\n", "bench", "case", "impl", "n", "nnz", "ms", "vs peer", "floor");
    for (const auto& r : rows)
      std::printf("%-6s %-16s %-22s %10lld %10lld %10.4f %9s %6.0f%%%s\n", r.bench.c_str(), r.case_name.c_str(), r.impl.c_str(),
                  r.n, r.nnz, r.ms, r.peer_ms > 0 ? (std::to_string(r.peer_ms / r.ms).substr(0, 5) + "x").c_str() : "",
                  100 * r.floor_share, r.ok ? "" : "  WRONG");
    if (!out_path.empty()) {
      std::ofstream f(out_path);
      f << "device,bench,case,impl,n,nnz,ms,peer_ms,speedup,floor_share,ok\n";
      for (const auto& r : rows)
        f << '"' << cuda_status() << "\"," << r.bench << ',' << r.case_name << ',' << r.impl << ',' << r.n << ',' << r.nnz << ','
          << r.ms << ',' << r.peer_ms << ',' << (r.peer_ms > 0 ? r.peer_ms / r.ms : 0) << ',' << r.floor_share << ','
          << (r.ok ? 1 : 0) << '\n';
    }
    return bad ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "complex_bench: %s\n", e.what());
    return 1;
  }
}
