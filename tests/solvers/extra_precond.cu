// The test-only preconditioner of extra_precond.hpp, written here from scratch (no la
// preconditioner code): row-sum scaling, M^-1 = w diag(sum_j |a_ij|)^-1, an SPD diagonal for
// any matrix without an empty row. Its entry, its one option, its host builder (the oracle)
// and its device builder are all in this file.
#include "extra_precond.hpp"

#include <atomic>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <la/error.hpp>
#include <la/solvers/detail/precond_device.cuh>

namespace la::test {
namespace {
std::atomic<long long> host_builds{0}, device_builds{0};

double weight_of(const precond_options& opt) {
  const auto it = opt.extra.find(extra_precond_option);
  return it == opt.extra.end() ? 1.0 : it->second;
}

std::string empty_row(long long i) {
  return "extra-rowsum: row " + std::to_string(i + 1) + " of A is empty or zero, so its row sum has no inverse";
}

template <typename T>
struct host_rowsum final : host_precond_operator<T> {
  std::vector<T> d;
  void apply(const std::vector<T>& r, std::vector<T>& z) const override {
    for (std::size_t i = 0; i < r.size(); ++i) z[i] = d[i] * r[i];
  }
};
template <typename T>
std::unique_ptr<host_precond_operator<T>> build_host(const csr_matrix<T, count_t>& a, const precond_options& opt) {
  ++host_builds;
  auto p = std::make_unique<host_rowsum<T>>();
  const double w = weight_of(opt);
  p->d.resize(static_cast<std::size_t>(a.rows()));
  for (index_t i = 0; i < a.rows(); ++i) {
    double s = 0;
    for (count_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) s += std::abs(static_cast<double>(a.values()[k]));
    if (!(s > 0)) throw invalid_argument(empty_row(i));
    p->d[static_cast<std::size_t>(i)] = static_cast<T>(w / s);
  }
  p->rep.detail = "weight " + std::to_string(w);
  p->rep.bytes = double(p->d.size()) * sizeof(T);
  return p;
}

template <typename T, typename O>
__global__ void rowsum_kernel(csr_view<const T, O> a, double w, T* d, unsigned long long* bad) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < a.rows;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    double s = 0;
    for (O k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) s += fabs(static_cast<double>(a.values[k]));
    if (!(s > 0)) atomicMin(bad, static_cast<unsigned long long>(i));
    d[i] = static_cast<T>(w / s);
  }
}
template <typename T>
__global__ void scale_kernel(const T* d, const T* r, T* z, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    z[i] = d[i] * r[i];
}
unsigned blocks(long long n) { return static_cast<unsigned>(std::max<long long>(1, std::min<long long>((n + 255) / 256, 4096))); }

template <typename T>
struct device_rowsum final : device_precond_operator<T> {
  device_buffer<T> d;
  long long n = 0;
  void apply(const T* r, T* z, cudaStream_t s) const override {
    if (n == 0) return;
    scale_kernel<<<blocks(n), 256, 0, s>>>(d.data(), r, z, n);
    LA_CHECK_LAUNCH(s);
  }
};
template <typename T, typename O>
std::unique_ptr<device_precond_operator<T>> build_device(context& ctx, const device_csr<T, O>& a,
                                                         const precond_options& opt) {
  ++device_builds;
  auto p = std::make_unique<device_rowsum<T>>();
  p->n = a.rows();
  p->d = ctx.allocate<T>(static_cast<std::size_t>(a.rows()));
  device_buffer<unsigned long long> bad = ctx.allocate<unsigned long long>(1);
  const unsigned long long none = ~0ull;
  LA_CUDA_TRY(cudaMemcpyAsync(bad.data(), &none, sizeof none, cudaMemcpyHostToDevice, ctx.stream()));
  if (p->n > 0) {
    rowsum_kernel<<<blocks(p->n), 256, 0, ctx.stream()>>>(a.view(), weight_of(opt), p->d.data(), bad.data());
    LA_CHECK_LAUNCH(ctx.stream());
  }
  unsigned long long first = none;
  LA_CUDA_TRY(cudaMemcpyAsync(&first, bad.data(), sizeof first, cudaMemcpyDeviceToHost, ctx.stream()));
  ctx.synchronize();
  if (first != none) throw invalid_argument(empty_row(static_cast<long long>(first)));
  p->rep.detail = "weight " + std::to_string(weight_of(opt));
  p->rep.bytes = double(p->n) * sizeof(T);
  return p;
}

constexpr option_spec options[] = {
    {extra_precond_option, option_type::real, "1", 1e-3, 2, "", "W", "extra-rowsum: the weight w of w diag(sum_j |a_ij|)^-1",
     {option_scope::on::precond, extra_precond_name, "{precond} extra-rowsum"}, {}, "",
     [](cg_options& o, const option_value& v) { o.precond_opt.extra[extra_precond_option] = v.number; }},
};
static_assert(options_are_valid(options));

constexpr preconditioner_entry entry{extra_precond_name, preconditioner::none,
                                     "w diag(sum_j |a_ij|)^-1 (the tests' own)",
                                     false, false, true, true, true, true, false, true,
                                     precond_form::apart, false, "row-sum scaling", "", nullptr,
                                     LA_HOST_BUILDERS(build_host), LA_DEVICE_BUILDERS(build_device)};
static_assert(entry_is_valid(entry));
}  // namespace

preconditioner add_extra_preconditioner() {
  static const preconditioner kind = add_preconditioner(entry, options, 1);
  return kind;
}
long long extra_host_builds() { return host_builds.load(); }
long long extra_device_builds() { return device_builds.load(); }

}  // namespace la::test
