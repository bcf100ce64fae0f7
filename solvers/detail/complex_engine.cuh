// The complex Krylov methods' GPU machinery (krylov/complex_device.cu, issue 69): the
// reductions (block partials, then one block per product in block order: the same order every
// run), the element-wise updates, Jacobi's diagonal, and `engine`, the loop's state on the
// device (A's product, the preconditioner, the scaled b, the reductions' scratch). Values are
// computed as detail::dcomplex (std::complex's layout). Private to la's sources.
#pragma once

#include <complex>
#include <string>
#include <tuple>
#include <vector>

#include <la/detail/device_complex.cuh>
#include <la/kernels/spmv/select.hpp>
#include <la/kernels/spmv/spmv.hpp>
#include <la/solvers/detail/complex_common.hpp>
#include <la/solvers/detail/complex_factored.cuh>
#include <la/solvers/detail/vector_kernels.cuh>

namespace la {
namespace complex_device_detail {

using cg_detail::block_sum;
using detail::block_threads;
using detail::dcomplex;
using zd = std::complex<double>;

constexpr int max_pairs = 4;

/// Up to max_pairs inner products sum_i op(u_i) v_i, op = conj or identity.
template <typename C>
struct pair_list {
  const C* u[max_pairs];
  const C* v[max_pairs];
  bool conj[max_pairs];
  int count;
};

template <typename C>
__device__ __forceinline__ void accumulate(double (&s)[2], const C& a, const C& b, bool cj) {
  const double ar = a.re, ai = cj ? -static_cast<double>(a.im) : static_cast<double>(a.im);
  const double br = b.re, bi = b.im;
  s[0] += ar * br - ai * bi;
  s[1] += ar * bi + ai * br;
}

/// Block partials of pair blockIdx.y: partials[y * gridDim.x + blockIdx.x].
template <typename C>
__global__ void __launch_bounds__(block_threads) partial_pairs(pair_list<C> p, long long n, double2* partials) {
  const int k = blockIdx.y;
  const C* u = p.u[k];
  const C* v = p.v[k];
  const bool cj = p.conj[k];
  double s[2] = {0, 0};
  LA_GRID_STRIDE(i, n) accumulate(s, u[i], v[i], cj);
  block_sum<2>(s);
  if (threadIdx.x == 0) partials[k * gridDim.x + blockIdx.x] = make_double2(s[0], s[1]);
}

/// Block partials of V_y^H w, y = blockIdx.y (V's columns ld apart).
template <typename C>
__global__ void __launch_bounds__(block_threads) partial_project(const C* V, long long ld, const C* w, long long n,
                                                                 double2* partials) {
  const C* u = V + blockIdx.y * ld;
  double s[2] = {0, 0};
  LA_GRID_STRIDE(i, n) accumulate(s, u[i], w[i], true);
  block_sum<2>(s);
  if (threadIdx.x == 0) partials[blockIdx.y * gridDim.x + blockIdx.x] = make_double2(s[0], s[1]);
}

/// out[y] = the sum of partials[y * blocks + b] over b, in order of b (one block per y).
__global__ void __launch_bounds__(block_threads) finish_partials(const double2* partials, int blocks, double2* out) {
  double s[2] = {0, 0};
  for (int b = threadIdx.x; b < blocks; b += blockDim.x) {
    const double2 v = partials[blockIdx.y * blocks + b];
    s[0] += v.x, s[1] += v.y;
  }
  block_sum<2>(s);
  if (threadIdx.x == 0) out[blockIdx.y] = make_double2(s[0], s[1]);
}

/// out = c0 v0 + c1 v1 + c2 v2 (terms with a null v left out; v may be out itself).
template <typename C>
struct combination {
  C c[3];
  const C* v[3];
};
template <typename C>
__global__ void __launch_bounds__(block_threads) combine(C* out, long long n, combination<C> t) {
  LA_GRID_STRIDE(i, n) {
    C s = t.c[0] * t.v[0][i];
    if (t.v[1]) s += t.c[1] * t.v[1][i];
    if (t.v[2]) s += t.c[2] * t.v[2][i];
    out[i] = s;
  }
}

/// out = d .* in (Jacobi), or a copy when d is null.
template <typename C>
__global__ void __launch_bounds__(block_threads) diagonal_times(C* out, const C* d, const C* in, long long n) {
  LA_GRID_STRIDE(i, n) out[i] = d ? d[i] * in[i] : in[i];
}

/// out = in / h, part by part (h real, as the oracle divides).
template <typename C, typename R>
__global__ void __launch_bounds__(block_threads) divide(C* out, const C* in, R h, long long n) {
  LA_GRID_STRIDE(i, n) out[i] = C(in[i].re / h, in[i].im / h);
}

/// w -= sum_{k < count} h_k V_k (h summed in double on the device; V's columns ld apart).
template <typename C, typename R>
__global__ void __launch_bounds__(block_threads) subtract_basis(C* w, const C* V, long long ld, const double2* h,
                                                                int count, long long n) {
  LA_GRID_STRIDE(i, n) {
    C s = w[i];
    for (int k = 0; k < count; ++k) s -= C(static_cast<R>(h[k].x), static_cast<R>(h[k].y)) * V[k * ld + i];
    w[i] = s;
  }
}

/// u = sum_{k < count} y_k V_k.
template <typename C>
__global__ void __launch_bounds__(block_threads) combine_basis(C* u, const C* V, long long ld, const C* y, int count,
                                                               long long n) {
  LA_GRID_STRIDE(i, n) {
    C s(0);
    for (int k = 0; k < count; ++k) s += y[k] * V[k * ld + i];
    u[i] = s;
  }
}

/// d_i = the diagonal of A (0 where row i stores none); the first row without one (atomicMin).
template <typename C, typename O>
__global__ void __launch_bounds__(block_threads) diagonal_of(csr_view<const C, O> a, C* d, unsigned long long* first_zero) {
  LA_GRID_STRIDE(i, a.rows) {
    C s(0);
    for (O k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (a.col_idx[k] == i) s += a.values[k];
    if (s == C(0)) atomicMin(first_zero, static_cast<unsigned long long>(i));
    d[i] = s;
  }
}
/// d = 1 / d, by conj(d) / |d|^2 in the part type's precision (double for complex<float>).
template <typename C>
__global__ void __launch_bounds__(block_threads) invert(C* d, long long n) {
  using R = decltype(d[0].re);
  LA_GRID_STRIDE(i, n) {
    const double re = d[i].re, im = d[i].im, m = re * re + im * im;
    d[i] = C(static_cast<R>(re / m), static_cast<R>(-im / m));
  }
}


/// The loop's state on the device: A's product, the preconditioner, the scaled b, and the
/// reductions' scratch.
template <typename T, typename O>
struct engine {
  using R = real_of_t<T>;
  using C = detail::device_value_t<T>;
  context& ctx;
  cudaStream_t s;
  const device_csr<T, O>& a;
  const cg_options& o;
  index_t n;
  long long nn;  // n as the kernels' count
  unsigned blocks, red_blocks;
  spmv_operator<T> op;  // A in the format the complex rule picks (or the CSR kernel named)
  device_vector<T> bs;        // b * 2^-e
  device_vector<T> inv_diag;  // empty: no preconditioner (or ILU(0) / IC(0) in fact)
  std::optional<device_factored<T, O>> fact;
  // sums: GMRES's two projection passes (up to 1,001 each) and ||w||^2 of one iteration.
  static constexpr std::size_t sums_size = 2 * 1001 + 1;
  device_buffer<double2> partials, sums;
  std::vector<double2> host_sums;
  solve_result res;
  double bnorm = 0, target = 0;
  std::int64_t limit = 0;
  bool failed = false;
  std::string kernel_name;

  engine(context& c, const device_csr<T, O>& a_, const cg_options& o_, std::string_view kernel)
      : ctx(c), s(c.stream()), a(a_), o(o_), n(a_.rows()), nn(a_.rows()),
        blocks(cg_detail::blocks_for(a_.rows(), c.sm_count())),
        red_blocks(std::min<unsigned>(detail::grid_for(std::max<index_t>(a_.rows(), 1)), 256u)),
        op(c, a_, choice_for(c, a_, kernel)), partials(c.allocate<double2>(std::size_t(red_blocks) * 1001)),
        sums(c.allocate<double2>(sums_size)), host_sums(sums_size),
        kernel_name(op.choice().fmt == format::csr ? std::string(op.variant().name)
                                                   : std::string(to_string(op.choice().fmt)) + " " + std::string(op.variant().name)) {}

  /// "auto": select_spmv_complex on A's row lengths; a name: that CSR kernel.
  static spmv_choice choice_for(context& c, const device_csr<T, O>& a, std::string_view kernel) {
    if (kernel == "auto") return select_spmv_complex(row_stats(c, a));
    spmv_choice named;
    named.kernel = std::string(kernel);
    named.why = "named";
    return named;
  }

  void fail(solve_status st, std::string why) {
    failed = true;
    res.status = st;
    res.message = std::move(why);
  }
  static C* d(T* p) { return detail::device_ptr(p); }
  static const C* d(const T* p) { return detail::device_ptr(p); }

  /// y = A x.
  void apply(const T* x, T* y) { op.apply(x, y, T(1), T(0), s); }
  /// r = bs - A x.
  void residual(const T* x, T* r) {
    LA_CUDA_TRY(cudaMemcpyAsync(r, bs.data(), sizeof(T) * std::size_t(n), cudaMemcpyDeviceToDevice, s));
    op.apply(x, r, T(-1), T(1), s);
  }
  /// out = M^-1 in (out never in).
  void precondition(const T* in, T* out) {
    if (n == 0) return;
    if (fact) return fact->apply(d(in), d(out), n, s);
    launch(diagonal_times<C>, d(out), (inv_diag.size() == 0) ? nullptr : d(inv_diag.data()), d(in), nn);
  }
  template <typename K, typename... A>
  void launch(K kernel, A... args) {
    kernel<<<blocks, block_threads, 0, s>>>(args...);
    LA_CHECK_LAUNCH(s);
  }
  /// out = c0 v0 + c1 v1 + c2 v2.
  void combine(T* out, zd c0, const T* v0, zd c1 = 0, const T* v1 = nullptr, zd c2 = 0, const T* v2 = nullptr) {
    if (n == 0) return;
    combination<C> t{{C(R(c0.real()), R(c0.imag())), C(R(c1.real()), R(c1.imag())), C(R(c2.real()), R(c2.imag()))},
                     {d(v0), d(v1), d(v2)}};
    launch(complex_device_detail::combine<C>, d(out), nn, t);
  }
  /// The inner products of the pairs (conj: u^H v, else u^T v), read back together.
  using pairs_t = std::initializer_list<std::tuple<const T*, const T*, bool>>;
  /// The inner products of the pairs (conj: u^H v, else u^T v) into sums[at, at + count), queued.
  void dots_async(pairs_t pairs, std::size_t at) {
    pair_list<C> p{};
    p.count = 0;
    for (const auto& [u, v, cj] : pairs) p.u[p.count] = d(u), p.v[p.count] = d(v), p.conj[p.count] = cj, ++p.count;
    partial_pairs<<<dim3(red_blocks, static_cast<unsigned>(p.count)), block_threads, 0, s>>>(p, nn, partials.data());
    LA_CHECK_LAUNCH(s);
    finish_async(p.count, at);
  }
  /// V's first `count` columns' projections V_k^H w into sums[at, at + count), queued.
  void project_async(const T* V, long long ld, const T* w, int count, std::size_t at) {
    partial_project<<<dim3(red_blocks, static_cast<unsigned>(count)), block_threads, 0, s>>>(d(V), ld, d(w), nn, partials.data());
    LA_CHECK_LAUNCH(s);
    finish_async(count, at);
  }
  void finish_async(int count, std::size_t at) {
    finish_partials<<<dim3(1, static_cast<unsigned>(count)), block_threads, 0, s>>>(partials.data(), static_cast<int>(red_blocks),
                                                                                   sums.data() + at);
    LA_CHECK_LAUNCH(s);
  }
  /// sums[0, count) read back (one synchronization).
  std::vector<zd> read(std::size_t count) {
    LA_CUDA_TRY(cudaMemcpyAsync(host_sums.data(), sums.data(), sizeof(double2) * count, cudaMemcpyDeviceToHost, s));
    LA_CUDA_TRY(cudaStreamSynchronize(s));
    std::vector<zd> out(count);
    for (std::size_t k = 0; k < count; ++k) out[k] = zd(host_sums[k].x, host_sums[k].y);
    return out;
  }
  /// The inner products of the pairs, read back together.
  std::vector<zd> dots(pairs_t pairs) {
    dots_async(pairs, 0);
    return read(pairs.size());
  }
  double norm_of(const std::vector<zd>& v, std::size_t k) const { return std::sqrt(std::max(0.0, v[k].real())); }

  double relative(double r) const { return bnorm > 0 ? r / bnorm : r; }

  /// Whether every part of x (n values, on the device) is finite.
  bool all_finite(const T* x) {
    device_buffer<unsigned long long> flag = ctx.allocate<unsigned long long>(1);
    unsigned long long first = ~0ull;
    LA_CUDA_TRY(cudaMemcpyAsync(flag.data(), &first, sizeof first, cudaMemcpyHostToDevice, s));
    if (n > 0) {
      cg_detail::first_non_finite<<<blocks, block_threads, 0, s>>>(reinterpret_cast<const R*>(x), 2 * nn, flag.data());
      LA_CHECK_LAUNCH(s);
    }
    LA_CUDA_TRY(cudaMemcpyAsync(&first, flag.data(), sizeof first, cudaMemcpyDeviceToHost, s));
    LA_CUDA_TRY(cudaStreamSynchronize(s));
    return first == ~0ull;
  }
  solve_result end(const T* x, double recurrence, bool met, const std::string& method, T* scratch) {
    residual(x, scratch);
    const double t = norm_of(dots({{scratch, scratch, true}}), 0);
    res.residual = relative(recurrence);
    res.true_residual = relative(t);
    complex_krylov_detail::verdict(res, failed, all_finite(x), met, t, target, o, limit);
    res.method = method + (fact ? fact->label : (inv_diag.size() == 0) ? "" : " + jacobi") + ", gpu, " + kernel_name;
    res.precond.kind = fact ? fact->kind : inv_diag.size() == 0 ? preconditioner::none : preconditioner::jacobi;
    res.precond.bytes = fact ? fact->bytes() : static_cast<double>(inv_diag.size()) * sizeof(T);
    return res;
  }
};

}  // namespace complex_device_detail
}  // namespace la
