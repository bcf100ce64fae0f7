#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include <la/formats/device_convert.hpp>
#include <la/kernels/reference/spmv.hpp>
#include <la/kernels/spmv/spmv.hpp>
#include <la/la/event_timer.hpp>

#include "args.hpp"
#include "commands.hpp"
#include "common.hpp"

namespace la::cli {
namespace {
const char* usage =
    "usage: la spmv A.mtx [--kernel NAME|auto] [--precision float|double] [--reps N]\n"
    "\n"
    "Runs y = A*x on the GPU (x random in [-1,-0.01] U [0.01,1]) with one SpMV kernel, checks\n"
    "every y_i against the host reference (tolerance (k_i+2) eps sum_j |a_ij x_j| for a row of\n"
    "k_i entries), and prints the kernel, the median time of --reps runs (CUDA events) and the\n"
    "effective bandwidth (matrix arrays + x + y moved once).\n"
    "  --kernel NAME         coo_atomic, coo_segmented, csr_scalar, csr_vector, csr_balanced,\n"
    "                        csc_atomic, ell, jds,\n"
    "                        dense_gemv, or auto (default: a CSR kernel)\n"
    "  --precision P         double (default) or float\n"
    "  --reps N              timed runs (default 20)\n"
    "%s"
    "Exit status: 0 validated, 1 validation failed, 2 bad usage or input, 3 no GPU or CUDA failure.\n";

/// The matrix in the kernel's format on the device (converted there from CSR), as a view
/// with the bytes its arrays hold.
template <typename T, typename O, typename F>
int with_device_format(context& ctx, format fmt, const device_csr<T, O>& a, F&& f) {
  switch (fmt) {
    case format::csr: return f(spmv_view(a));
    case format::coo: { const auto m = to_coo(ctx, a); return f(spmv_view(m)); }
    case format::csc: { const auto m = to_csc(ctx, a); return f(spmv_view(m)); }
    case format::ell: { const auto m = to_ell(ctx, a); return f(spmv_view(m)); }
    case format::jds: { const auto m = to_jds(ctx, a); return f(spmv_view(m)); }
    case format::dense: break;
  }
  throw usage_error("the dense kernel is not offered here (a sparse file); pick a sparse kernel");
}

template <typename T>
double array_bytes(const spmv_matrix<T>& m) {
  const double v = sizeof(T), i = sizeof(index_t), o = m.wide ? 8 : 4;
  const double nnz = static_cast<double>(m.nnz), rows = m.rows, cols = m.cols;
  switch (m.fmt) {
    case format::csr: return (rows + 1) * o + nnz * (i + v);
    case format::csc: return (cols + 1) * o + nnz * (i + v);
    case format::coo: return nnz * (2 * i + v);
    case format::ell: return nnz * (i + v);  // nnz holds the slots
    case format::jds: return rows * i + nnz * (i + v);
    case format::dense: return nnz * v;
  }
  return 0;
}

template <typename T>
int run_spmv(const args& a, const std::string& path) {
  const int reps = static_cast<int>(a.get_int("--reps", 20, 1, 100000));
  const std::string kernel = a.get("--kernel", "auto");
  if (kernel != "auto") {  // an unknown name is a usage error, GPU or not
    try {
      find_spmv<T>(kernel);
    } catch (const invalid_argument& e) {
      throw usage_error(e.what());
    }
  }
  if (!cuda_available()) throw cuda_error(cudaErrorNoDevice, "la spmv needs a GPU: " + cuda_status());
  context ctx;
  return with_csr_file<T>(path, a, [&](const auto& host) {
    using O = typename std::decay_t<decltype(host)>::offset_type;
    const device_csr<T, O> dev = to_device(ctx, host);
    const format fmt = kernel == "auto" ? format::csr : find_spmv<T>(kernel).fmt;
    return with_device_format(ctx, fmt, dev, [&](const spmv_matrix<T>& m) {
      const spmv_variant<T>& v = kernel == "auto" ? default_spmv<T>(problem_of(m)) : find_spmv<T>(kernel);
      std::mt19937 g(1);
      std::uniform_real_distribution<double> u(0.01, 1.0);
      std::vector<T> x(static_cast<std::size_t>(host.cols()));
      for (T& e : x) e = static_cast<T>(std::bernoulli_distribution(0.5)(g) ? u(g) : -u(g));
      const auto dx = to_device(ctx, x);
      device_vector<T> dy(ctx, host.rows());
      // The plan is prepared once; the validated run and the timed runs use it.
      device_buffer<unsigned char> plan = make_plan(ctx, v, m);
      auto run = [&] { v.run(m, plan.data(), dx.data(), dy.data(), T(1), T(0), ctx.stream()); };
      run();
      const std::vector<T> got = to_host(ctx, dy);
      std::vector<T> want(got.size()), mag(got.size());
      reference::spmv(T(1), host, x, T(0), want);
      auto abs_host = host;
      for (T& e : abs_host.values()) e = std::abs(e);
      std::vector<T> ax(x.size());
      for (std::size_t j = 0; j < x.size(); ++j) ax[j] = std::abs(x[j]);
      reference::spmv(T(1), abs_host, ax, T(0), mag);
      double worst = 0;  // error as a multiple of the row's tolerance
      for (index_t i = 0; i < host.rows(); ++i) {
        const double k = static_cast<double>(host.row_ptr()[i + 1] - host.row_ptr()[i]);
        const double tol = (k + 2) * std::numeric_limits<T>::epsilon() * double(mag[i]) + 1e-300;
        const double e = std::abs(double(got[i]) - double(want[i])) / tol;
        worst = std::isnan(e) ? INFINITY : std::max(worst, e);
      }
      const double ms = median_ms(ctx.stream(), reps, run);
      const double bytes = array_bytes(m) + (double(host.rows()) + host.cols()) * sizeof(T);
      std::printf("device:      %s\n", ctx.properties().name);
      std::printf("matrix:      %s (%d x %d, %lld nonzeros, %d-bit offsets), %s\n", path.c_str(), host.rows(),
                  host.cols(), static_cast<long long>(host.nnz()), m.wide ? 64 : 32, sizeof(T) == 8 ? "double" : "float");
      std::printf("kernel:      %s (%s%s%s)\n", std::string(v.name).c_str(), to_string(v.fmt),
                  v.deterministic ? ", deterministic" : ", atomics", kernel == "auto" ? ", chosen by auto" : "");
      std::printf("validation:  max error %.2f of the row tolerance: %s\n", worst, worst <= 1 ? "ok" : "FAILED");
      std::printf("time:        %.4f ms (median of %d), %.1f GB/s effective\n", ms, reps, bytes / (ms * 1e6));
      return worst <= 1 ? 0 : 1;
    });
  });
}
}  // namespace

int cmd_spmv(int argc, char** argv) {
  args a(argc, argv, 2, {"--kernel", "--precision", "--reps", "--threads", "--offsets"}, {});
  if (a.help()) return std::printf(usage, reader_usage), 0;
  if (a.positional().size() != 1) throw usage_error("expected exactly one matrix file");
  const std::string prec = a.get_choice("--precision", "double", {"double", "float"});
  return prec == "float" ? run_spmv<float>(a, a.positional()[0]) : run_spmv<double>(a, a.positional()[0]);
}

}  // namespace la::cli
