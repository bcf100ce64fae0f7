// la's SpGEMM (kernels/spgemm/spgemm.hpp) against cusparseSpGEMM (CUSPARSE_SPGEMM_DEFAULT)
// in the same run, double: A A for each system, and for the systems marked amg: (spec
// "amg:poisson2d:1000") the products AMG's setup forms on every level (A P and R (A P), with
// P and R from the host hierarchy, amg/hierarchy.hpp). Each side's time is the whole call
// (symbolic and numeric, C's allocation included), the median of 5 after a warm-up.
//
// Validation (ok = 0 marks a failed row): both Cs have the symbolic product's nonzero count,
// and C x = A (B x) for a smooth x within 1e-12 relative (SpMVs on the device).
//
// usage: spgemm_bench [--systems LIST] [--out FILE.csv]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <Eigen/Sparse>

#include <la/formats/convert.hpp>
#include <la/kernels/detail/vendor/cusparse_spgemm.hpp>
#include <la/kernels/spgemm/spgemm.hpp>
#include <la/kernels/spmv/spmv.hpp>
#include <la/solvers/amg/hierarchy.hpp>
#include "systems.hpp"

namespace {
using namespace la;
using clock_type = std::chrono::steady_clock;

template <typename F>
double median_ms(context& ctx, F&& f) {
  f();
  ctx.synchronize();
  std::vector<double> t;
  for (int k = 0; k < 5; ++k) {
    const auto t0 = clock_type::now();
    f();
    ctx.synchronize();
    t.push_back(1e3 * std::chrono::duration<double>(clock_type::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[2];
}

/// max_i |(C x)_i - (A (B x))_i| / max_i |(A (B x))_i|.
double product_error(context& ctx, const device_csr<double>& a, const device_csr<double>& b, const device_csr<double>& c) {
  std::vector<double> x(static_cast<std::size_t>(b.cols()));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 1 + 0.5 * std::sin(0.01 * double(i));
  const auto dx = to_device(ctx, x);
  device_vector<double> bx(ctx, b.rows()), abx(ctx, a.rows()), cx(ctx, c.rows());
  spmv(ctx, spmv_view(b), dx, bx, 1.0, 0.0);
  spmv(ctx, spmv_view(a), bx, abx, 1.0, 0.0);
  spmv(ctx, spmv_view(c), dx, cx, 1.0, 0.0);
  const auto h1 = to_host(ctx, abx), h2 = to_host(ctx, cx);
  double e = 0, m = 0;
  for (std::size_t i = 0; i < h1.size(); ++i) e = std::max(e, std::abs(h1[i] - h2[i])), m = std::max(m, std::abs(h1[i]));
  return m > 0 ? e / m : e;
}

struct row_t {
  std::string system, product;
  long long rows = 0, nnz_a = 0, nnz_b = 0, nnz_c = 0;
  double la_ms = 0, vendor_ms = 0, la_err = 0, vendor_err = 0;
  bool ok = false;
};

row_t measure(context& ctx, vendor_handles& vh, const std::string& system, const std::string& product,
              const csr_matrix<double>& ha, const csr_matrix<double>& hb) {
  row_t r;
  r.system = system, r.product = product, r.rows = ha.rows(), r.nnz_a = ha.nnz(), r.nnz_b = hb.nnz();
  const auto a = to_device(ctx, ha);
  const auto b = to_device(ctx, hb);
  device_csr<double> c, v;
  r.la_ms = median_ms(ctx, [&] { c = spgemm(ctx, a, b); });
  r.vendor_ms = median_ms(ctx, [&] { v = cusparse_spgemm(vh, a, b); });
  r.nnz_c = c.nnz();
  r.la_err = product_error(ctx, a, b, c);
  r.vendor_err = product_error(ctx, a, b, v);
  r.ok = c.nnz() == v.nnz() && r.la_err <= 1e-12 && r.vendor_err <= 1e-12;
  std::fprintf(stderr, "%s %s: la %.3f ms, cusparse %.3f ms\n", system.c_str(), product.c_str(), r.la_ms, r.vendor_ms);
  return r;
}

}  // namespace

int main(int argc, char** argv) try {
  std::string systems = "poisson2d:2048,poisson3d:256,amg:poisson2d:1000,amg:poisson3d:100," LA_DATA_DIR "/bcsstk21.mtx,"
                        LA_DATA_DIR "/1138_bus.mtx", out;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--systems") systems = bench::option_value(argc, argv, i);
    else if (k == "--out") out = bench::option_value(argc, argv, i);
    else throw invalid_argument("unknown option '" + k + "' (see the comment at the top of bench/spgemm_bench.cpp)");
  }
  if (!cuda_available()) {
    std::printf("spgemm_bench: no GPU (%s); nothing to measure\n", cuda_status().c_str());
    return 0;
  }
  context ctx;
  vendor_handles vh(ctx);
  std::printf("device: %s, double, la spgemm vs cusparseSpGEMM (DEFAULT)\n", ctx.properties().name);
  std::vector<row_t> rows;
  for (std::string s : bench::split(systems)) {
    const bool amg = s.rfind("amg:", 0) == 0;
    if (amg) s = s.substr(4);
    const std::string name = bench::system_name(s);
    const csr_matrix<double> a = bench::load<double>(s);
    if (!amg) {
      rows.push_back(measure(ctx, vh, name, "A*A", a, a));
      continue;
    }
    const host_amg h(a);
    for (index_t l = 0; l + 1 < h.levels(); ++l) {
      const amg::level& f = h.at(l);
      auto narrow = [](const csr_matrix<double, count_t>& m) { return to_csr<index_t>(m); };
      const auto al = narrow(f.a), p = narrow(f.p), r = narrow(f.r);
      const auto ap = reference::spgemm<index_t>(al, p);
      rows.push_back(measure(ctx, vh, name, "L" + std::to_string(l) + " A*P", al, p));
      rows.push_back(measure(ctx, vh, name, "L" + std::to_string(l) + " R*(AP)", r, ap));
    }
  }
  std::printf("\n%-16s %-12s %10s %11s %11s %12s %10s %10s %7s  %s\n", "system", "product", "rows", "nnz A", "nnz B",
              "nnz C", "la ms", "cusp ms", "x cusp", "ok");
  double logsum = 0, worst = 1e300;
  bool all = true;
  for (const auto& r : rows) {
    const double x = r.vendor_ms / r.la_ms;
    logsum += std::log(x), worst = std::min(worst, x), all = all && r.ok;
    std::printf("%-16s %-12s %10lld %11lld %11lld %12lld %10.3f %10.3f %6.2fx  %s\n", r.system.c_str(),
                r.product.c_str(), r.rows, r.nnz_a, r.nnz_b, r.nnz_c, r.la_ms, r.vendor_ms, x, r.ok ? "ok" : "BAD");
  }
  if (!rows.empty())
    std::printf("\ngeometric mean %.2fx cusparseSpGEMM over %zu products, lowest %.2fx\n",
                std::exp(logsum / double(rows.size())), rows.size(), worst);
  if (!out.empty()) {
    std::ofstream f(out);
    f << "system,product,rows,nnz_a,nnz_b,nnz_c,la_ms,cusparse_ms,speedup,la_error,cusparse_error,ok\n";
    for (const auto& r : rows)
      f << r.system << ',' << r.product << ',' << r.rows << ',' << r.nnz_a << ',' << r.nnz_b << ',' << r.nnz_c << ','
        << r.la_ms << ',' << r.vendor_ms << ',' << r.vendor_ms / r.la_ms << ',' << r.la_err << ',' << r.vendor_err << ','
        << (r.ok ? 1 : 0) << '\n';
  }
  if (!all) std::printf("some rows failed validation (ok = BAD)\n");
  return all ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "spgemm_bench: %s\n", e.what());
  return 1;
}
