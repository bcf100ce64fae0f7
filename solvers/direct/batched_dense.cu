// la::batched_dense_solver (batched_dense.hpp): many small dense systems, one thread block a
// system on the GPU (the host oracle: batched_dense_host.cpp; the state: detail/batched_impl.hpp).
//
// Systems of at most 32 rows: a warp each, its rows in registers (detail/batched_warp.cuh), no
// barrier. Above, a block's factorization (detail/block_lu.cuh): right-looking, a column at a
// time, the system in shared memory where it fits (n^2 values up to the device's opt-in
// maximum less 1 KB: double n <= 168 on compute capability 9.0) and in a global copy above; a
// column is a pivot search (a block reduction, the first largest |a_rj| as the host's), the
// row swap, the scaling by the pivot's inverse and the rank-1
// update of the trailing block, three barriers a column. Cholesky likewise on the lower triangle. The solve:
// B's block of the system in place (pivots, then the two triangular sweeps, a barrier a
// column), then its residual against the kept copy of A in double and the backward error.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include <la/error.hpp>
#include <la/memory.hpp>
#include <la/solvers/direct/detail/batched_impl.hpp>
#include <la/solvers/direct/detail/batched_warp.cuh>
#include <la/solvers/direct/detail/block_lu.cuh>

namespace la {
namespace {

using batched_detail::info_check;
using batched_detail::info_non_finite;
using block_lu::block_max;

using batched_detail::batch_layout;
using batched_warp::a_of;
using batched_warp::r_of;
using batched_warp::size_of;

/// One block a system: the copy of A_i checked (finite), its ||A||_inf, the factorization
/// asked for (automatic: Cholesky where A_i is symmetric with a positive diagonal, LU where a
/// pivot is not positive), the factors into F. `shared`: the system is staged in shared memory.
template <typename T>
__global__ void factor_kernel(batch_layout L, const T* A, T* F, int* piv, int* info, unsigned char* chol, double* ainf,
                              int how, bool shared) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ double s[32];
  __shared__ int si[32];
  const long sys = blockIdx.x;
  const int n = size_of(L, sys);
  const T* a = A + a_of(L, sys);
  T* f = F + a_of(L, sys);
  T* M = shared ? reinterpret_cast<T*>(smem_raw) : f;
  const long nn = static_cast<long>(n) * n;
  bool finite = true, sym = true;
  double row_max = 0;
  for (long e = threadIdx.x; e < nn; e += blockDim.x) {
    const T v = a[e];
    M[e] = v;
    finite = finite && isfinite(static_cast<double>(v));
    const long r = e / n, c = e % n;
    sym = sym && (c <= r || v == a[c * n + r]) && (r != c || v > T(0));
  }
  for (int r = threadIdx.x; r < n; r += blockDim.x) {
    double sum = 0;
    for (int c = 0; c < n; ++c) sum += fabs(static_cast<double>(a[static_cast<long>(r) * n + c]));
    row_max = fmax(row_max, sum);
  }
  finite = __syncthreads_and(finite);
  sym = __syncthreads_and(sym);
  const double norm = block_max(row_max, s);
  int status = 0;
  bool by_cholesky = false;
  if (!finite) {
    status = info_non_finite;
  } else if (how == static_cast<int>(dense_factorization::cholesky) || (how == 0 && sym)) {
    status = block_lu::cholesky(M, n, n);
    by_cholesky = status == 0 || how != 0;
    if (status != 0 && how == 0) {  // automatic: not positive definite, so LU from A again
      __syncthreads();
      for (long e = threadIdx.x; e < nn; e += blockDim.x) M[e] = a[e];
      __syncthreads();
      status = block_lu::lu(M, n, n, n, piv + r_of(L, sys), s, si, true);
    }
  } else {
    status = block_lu::lu(M, n, n, n, piv + r_of(L, sys), s, si, true);
  }
  if (shared && status == 0) {
    __syncthreads();
    for (long e = threadIdx.x; e < nn; e += blockDim.x) f[e] = M[e];
  }
  if (threadIdx.x == 0) info[sys] = status, chol[sys] = by_cholesky ? 1 : 0, ainf[sys] = norm;
}

/// One block a system: X = A_i^-1 B_i in place (B_i n x k row-major), then its residual
/// against A_i in double and the backward error; x = NaN where the system is not solved.
template <typename T>
__global__ void solve_kernel(batch_layout L, const T* A, const T* F, const int* piv, const int* finfo,
                             const unsigned char* chol, const double* ainf, T* B, T* B0, int k, double tol, int* info,
                             double* be) {
  __shared__ double s[32];
  const long sys = blockIdx.x;
  const int n = size_of(L, sys);
  const T* a = A + a_of(L, sys);
  const T* f = F + a_of(L, sys);
  const long base = r_of(L, sys) * k;
  T* b = B + base;
  T* b0 = B0 + base;
  const long nk = static_cast<long>(n) * k;
  bool finite = true;
  for (long e = threadIdx.x; e < nk; e += blockDim.x) {
    b0[e] = b[e];
    finite = finite && isfinite(static_cast<double>(b[e]));
  }
  finite = __syncthreads_and(finite);
  int status = finfo[sys] != 0 ? finfo[sys] : finite ? 0 : info_non_finite;
  if (status == 0) {
    if (!chol[sys]) {
      const int* p = piv + r_of(L, sys);
      for (int j = 0; j < n; ++j) {  // the row swaps in order
        const int q = p[j];
        if (q != j)
          for (int c = threadIdx.x; c < k; c += blockDim.x) {
            const T t = b[static_cast<long>(j) * k + c];
            b[static_cast<long>(j) * k + c] = b[static_cast<long>(q) * k + c];
            b[static_cast<long>(q) * k + c] = t;
          }
        __syncthreads();
      }
    }
    block_lu::solve_in_place(f, n, n, chol[sys] != 0, b, k);  // L y = P b, then U x = y (or L^T x = y)
  }
  // The residual in double: max |r|, |x|, |b| over the block's columns.
  double rmax = 0, xmax = 0, bmax = 0;
  bool xfinite = true;
  if (status == 0) {
    for (long e = threadIdx.x; e < nk; e += blockDim.x) {
      const long r = e / k, c = e % k;
      double sum = static_cast<double>(b0[e]);
      for (int j = 0; j < n; ++j) sum -= static_cast<double>(a[r * n + j]) * static_cast<double>(b[static_cast<long>(j) * k + c]);
      const double x = static_cast<double>(b[e]);
      xfinite = xfinite && isfinite(x) && isfinite(sum);
      rmax = fmax(rmax, fabs(sum)), xmax = fmax(xmax, fabs(x)), bmax = fmax(bmax, fabs(static_cast<double>(b0[e])));
    }
  }
  xfinite = __syncthreads_and(xfinite);
  rmax = block_max(rmax, s);
  xmax = block_max(xmax, s);
  bmax = block_max(bmax, s);
  double err = NAN;
  if (status == 0 && !xfinite) status = info_non_finite;
  if (status == 0) {
    const double den = ainf[sys] * xmax + bmax;
    err = den > 0 ? rmax / den : (rmax > 0 ? INFINITY : 0.0);
    if (!(err <= tol)) status = info_check;
  }
  if (status != 0)
    for (long e = threadIdx.x; e < nk; e += blockDim.x) b[e] = static_cast<T>(NAN);  // never a silent answer
  if (threadIdx.x == 0) info[sys] = status, be[sys] = err;
}

unsigned block_threads_for(index_t max_n) { return max_n <= 16 ? 64 : max_n <= 64 ? 128 : 256; }

}  // namespace

template <typename T>
void batched_dense_solver<T>::impl::factor_gpu(const T* a_dev) {
  context& c = *ctx;
  const auto t0 = batched_detail::clock_type::now();
  const std::size_t count = sizes.size();
  const auto total = static_cast<std::size_t>(a_off[count]);
  check_device_memory(c, 2.0 * total * sizeof(T) + static_cast<double>(r_off[count]) * sizeof(int) +
                             static_cast<double>(result_bytes(count)) + count * (sizeof(int) + 2 * sizeof(long long)),
                      "the batched dense solver's copy of A and its factors");
  cudaStream_t s = c.stream();
  da = c.allocate<T>(std::max<std::size_t>(total, 1)), df = c.allocate<T>(std::max<std::size_t>(total, 1));
  if (total > 0) LA_CUDA_TRY(cudaMemcpyAsync(da.data(), a_dev, sizeof(T) * total, cudaMemcpyDeviceToDevice, s));
  dpiv = c.allocate<int>(std::max<std::size_t>(static_cast<std::size_t>(r_off[count]), 1));
  dres = c.allocate<unsigned char>(std::max<std::size_t>(result_bytes(count), 1));
  batch_layout L;
  if (uniform()) {
    L.uniform_n = static_cast<int>(max_n);  // offsets computed in the kernels: nothing to upload
  } else if (count > 0) {
    std::vector<int> n32(sizes.begin(), sizes.end());
    dn = c.allocate<int>(count);
    da_off = c.allocate<long long>(count + 1), dr_off = c.allocate<long long>(count + 1);
    LA_CUDA_TRY(cudaMemcpyAsync(dn.data(), n32.data(), sizeof(int) * count, cudaMemcpyHostToDevice, s));
    LA_CUDA_TRY(cudaMemcpyAsync(da_off.data(), a_off.data(), sizeof(long long) * (count + 1), cudaMemcpyHostToDevice, s));
    LA_CUDA_TRY(cudaMemcpyAsync(dr_off.data(), r_off.data(), sizeof(long long) * (count + 1), cudaMemcpyHostToDevice, s));
    L.n = dn.data(), L.a_off = da_off.data(), L.r_off = dr_off.data();
  }
  layout_ = L;
  if (count > 0) {
    if (max_n <= 32) {  // a warp a system (batched_warp.cuh)
      const auto grid = static_cast<unsigned>((count + batched_warp::warps_per_block - 1) / batched_warp::warps_per_block);
      auto kernel = max_n <= 8 ? batched_warp::factor_kernel<T, 8> : max_n <= 16 ? batched_warp::factor_kernel<T, 16>
                                                                                  : batched_warp::factor_kernel<T, 32>;
      kernel<<<grid, 32 * batched_warp::warps_per_block, 0, s>>>(L, static_cast<long>(count), da.data(), df.data(), dpiv.data(),
                                                                 d_info(), d_chol(), d_ainf(), static_cast<int>(opt.factorization));
    } else {
      const std::size_t smem = static_cast<std::size_t>(max_n) * max_n * sizeof(T);
      int optin = 0;
      LA_CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, c.device()));
      const bool shared = smem + 1024 <= static_cast<std::size_t>(optin);
      if (shared && smem > 48 * 1024)
        LA_CUDA_TRY(cudaFuncSetAttribute(factor_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
      factor_kernel<T><<<static_cast<unsigned>(count), block_threads_for(max_n), shared ? smem : 0, s>>>(
          L, da.data(), df.data(), dpiv.data(), d_info(), d_chol(), d_ainf(), static_cast<int>(opt.factorization), shared);
    }
    LA_CHECK_LAUNCH(s);
  }
  // The results back in one copy.
  std::vector<unsigned char> res(result_bytes(count));
  if (count > 0) LA_CUDA_TRY(cudaMemcpyAsync(res.data(), dres.data(), res.size(), cudaMemcpyDeviceToHost, s));
  LA_CUDA_TRY(cudaStreamSynchronize(s));
  ainf.resize(count), finfo.resize(count), chol.resize(count);
  if (count > 0) {
    std::memcpy(ainf.data(), res.data(), sizeof(double) * count);
    std::memcpy(finfo.data(), res.data() + sizeof(double) * count, sizeof(int) * count);
    std::memcpy(chol.data(), res.data() + (sizeof(double) + sizeof(int)) * count, count);
  }
  factor_seconds = batched_detail::since(t0);
}

template <typename T>
void batched_dense_solver<T>::impl::solve_gpu(T* b, index_t k, batched_dense_report& rep) {
  context& c = *ctx;
  cudaStream_t s = c.stream();
  const std::size_t count = sizes.size();
  if (count == 0) return;
  const auto nk = static_cast<std::size_t>(r_off[count]) * static_cast<std::size_t>(k);
  check_device_memory(c, nk * sizeof(T) + count * (sizeof(int) + sizeof(double)), "the batched dense solve's copy of B");
  device_buffer<T> b0;  // the block kernel's copy of B (the warp kernel keeps b in a register)
  if (max_n > 32) b0 = c.allocate<T>(std::max<std::size_t>(nk, 1));
  auto out = c.allocate<unsigned char>(count * (sizeof(double) + sizeof(int)));  // the backward errors, then the statuses
  double* be = reinterpret_cast<double*>(out.data());
  int* info = reinterpret_cast<int*>(out.data() + sizeof(double) * count);
  if (max_n <= 32) {  // a warp a system (batched_warp.cuh)
    const auto grid = static_cast<unsigned>((count + batched_warp::warps_per_block - 1) / batched_warp::warps_per_block);
    auto kernel = max_n <= 8 ? batched_warp::solve_kernel<T, 8> : max_n <= 16 ? batched_warp::solve_kernel<T, 16>
                                                                               : batched_warp::solve_kernel<T, 32>;
    kernel<<<grid, 32 * batched_warp::warps_per_block, 0, s>>>(layout_, static_cast<long>(count), da.data(), df.data(),
                                                               dpiv.data(), d_info(), d_chol(), d_ainf(), b,
                                                               static_cast<int>(k), tolerance(), info, be);
  } else {
    solve_kernel<T><<<static_cast<unsigned>(count), block_threads_for(max_n), 0, s>>>(
        layout_, da.data(), df.data(), dpiv.data(), d_info(), d_chol(), d_ainf(), b, b0.data(), static_cast<int>(k),
        tolerance(), info, be);
  }
  LA_CHECK_LAUNCH(s);
  // The statuses and backward errors back in one copy.
  std::vector<unsigned char> res(count * (sizeof(double) + sizeof(int)));
  LA_CUDA_TRY(cudaMemcpyAsync(res.data(), out.data(), res.size(), cudaMemcpyDeviceToHost, s));
  LA_CUDA_TRY(cudaStreamSynchronize(s));
  std::memcpy(rep.backward_error.data(), res.data(), sizeof(double) * count);
  std::memcpy(rep.info.data(), res.data() + sizeof(double) * count, sizeof(int) * count);
}

template <typename T>
batched_dense_solver<T>::batched_dense_solver(context& ctx, index_t count, index_t n, const T* a, batched_dense_options o)
    : batched_dense_solver(ctx, std::vector<index_t>(static_cast<std::size_t>(std::max<index_t>(count, 0)), n), a, o) {
  LA_EXPECTS(count >= 0 && n >= 0, "batched_dense_solver: count and n must be >= 0");
}
template <typename T>
batched_dense_solver<T>::batched_dense_solver(context& ctx, std::vector<index_t> sizes, const T* a, batched_dense_options o)
    : p_(std::make_unique<impl>()) {
  p_->ctx = &ctx, p_->opt = o;
  p_->layout(std::move(sizes));
  LA_EXPECTS(p_->max_n <= 4096, "batched_dense_solver: systems of up to 4096 rows (one thread block each); "
                                "la::dense_solver factors a larger one");
  p_->factor_gpu(a);
}
template <typename T>
batched_dense_solver<T>::batched_dense_solver(index_t count, index_t n, const T* a, batched_dense_options o)
    : batched_dense_solver(std::vector<index_t>(static_cast<std::size_t>(std::max<index_t>(count, 0)), n), a, o) {
  LA_EXPECTS(count >= 0 && n >= 0, "batched_dense_solver: count and n must be >= 0");
}
template <typename T>
batched_dense_solver<T>::batched_dense_solver(std::vector<index_t> sizes, const T* a, batched_dense_options o)
    : p_(std::make_unique<impl>()) {
  p_->opt = o;
  p_->layout(std::move(sizes));
  p_->a.assign(a, a + p_->a_off.back());
  p_->factor_host();
}
template <typename T>
batched_dense_solver<T>::~batched_dense_solver() = default;
template <typename T>
batched_dense_solver<T>::batched_dense_solver(batched_dense_solver&&) noexcept = default;
template <typename T>
batched_dense_solver<T>& batched_dense_solver<T>::operator=(batched_dense_solver&&) noexcept = default;

template <typename T>
index_t batched_dense_solver<T>::count() const noexcept {
  return static_cast<index_t>(p_->sizes.size());
}
template <typename T>
bool batched_dense_solver<T>::on_gpu() const noexcept {
  return p_->ctx != nullptr;
}
template <typename T>
const std::vector<int>& batched_dense_solver<T>::factor_info() const noexcept {
  return p_->finfo;
}
template <typename T>
const std::vector<unsigned char>& batched_dense_solver<T>::cholesky() const noexcept {
  return p_->chol;
}
template <typename T>
double batched_dense_solver<T>::factor_seconds() const noexcept {
  return p_->factor_seconds;
}

template <typename T>
batched_dense_report batched_dense_solver<T>::solve(T* b, index_t k) {
  LA_EXPECTS(k >= 1, "batched_dense_solver: solve needs k >= 1 right-hand sides");
  const auto t0 = batched_detail::clock_type::now();
  batched_dense_report rep;
  rep.info.assign(p_->sizes.size(), 0);
  rep.backward_error.assign(p_->sizes.size(), NAN);
  if (p_->ctx) p_->solve_gpu(b, k, rep);
  else p_->solve_host(b, k, rep);
  rep.failed = static_cast<index_t>(std::count_if(rep.info.begin(), rep.info.end(), [](int v) { return v != 0; }));
  rep.seconds = batched_detail::since(t0);
  return rep;
}

template class batched_dense_solver<float>;
template class batched_dense_solver<double>;

}  // namespace la
