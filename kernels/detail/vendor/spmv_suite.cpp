#include <la/kernels/detail/vendor/spmv_suite.hpp>

#include <cmath>
#include <cstdio>
#include <sstream>

#include <la/kernels/spmv/select.hpp>
#include <la/kernels/detail/vendor/cusparse_spmv.hpp>
#include <la/atomic_file.hpp>
#include <la/detail/instantiate.hpp>
#include <la/event_timer.hpp>

#include <la/kernels/detail/vendor/spmv_check.hpp>

namespace la::cli {
namespace {


/// A note as one CSV/JSON-safe line (no quotes, no line breaks).
std::string clean(std::string s) {
  for (char& c : s)
    if (c == '"' || c == '\\') c = '\'';
    else if (c == '\n' || c == '\r') c = ' ';
  return s;
}

/// Runs on `a` with y poisoned (NaN), validates every row, then times `reps` runs.
template <typename T, typename O, typename Run>
void measure(context& ctx, spmv_row& r, const spmv_check<T, O>& check, device_vector<T>& y, int reps, Run&& run) {
  LA_CUDA_TRY(cudaMemsetAsync(y.data(), 0xff, y.size() * sizeof(T), ctx.stream()));  // all-ones bits: NaN
  run();
  r.error = check.worst(to_host(ctx, y));
  r.ok = r.error <= 1;
  if (!r.ok) r.note = "FAILED validation";
  r.ms = median_ms(ctx.stream(), reps, run);
}
}  // namespace

double copy_bandwidth_gbs(context& ctx) {
  std::size_t free = 0, total = 0;
  LA_CUDA_TRY(cudaMemGetInfo(&free, &total));
  const std::size_t bytes = std::min<std::size_t>(std::size_t(1) << 30, free / 4);
  auto a = ctx.allocate<unsigned char>(bytes), b = ctx.allocate<unsigned char>(bytes);
  LA_CUDA_TRY(cudaMemsetAsync(a.data(), 1, bytes, ctx.stream()));
  const double ms = median_ms(ctx.stream(), 10, [&] {
    LA_CUDA_TRY(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, ctx.stream()));
  });
  return 2.0 * double(bytes) / (ms * 1e6);
}

template <typename T, typename O>
std::vector<spmv_row> bench_spmv(context& ctx, vendor_handles& vh, const std::string& name, const csr_matrix<T, O>& a,
                                 const spmv_bench_options& opt) {
  const device_csr<T, O> dev = to_device(ctx, a);
  const std::vector<T> xh = spmv_input<T>(a.cols());
  const auto x = to_device(ctx, xh);
  device_vector<T> y(ctx, a.rows());
  const spmv_check<T, O> check(a, xh);
  const double model = (double(a.rows()) + 1) * sizeof(O) + double(a.nnz()) * (sizeof(index_t) + sizeof(T)) +
                       (double(a.rows()) + a.cols()) * sizeof(T);
  const spmv_stats stats = row_stats(ctx, dev);
  std::vector<spmv_row> rows;
  auto row = [&](std::string kernel, format f, bool vendor) {
    spmv_row r;
    r.matrix = name;
    r.precision = sizeof(T) == 8 ? "double" : "float";
    r.kernel = std::move(kernel);
    r.format = to_string(f);
    r.vendor = vendor;
    r.rows = a.rows();
    r.nnz = a.nnz();
    if (opt.progress) {
      std::fprintf(stderr, "\r\033[K%s%s: %s", opt.progress_prefix.c_str(), name.c_str(), r.kernel.c_str());
      std::fflush(stderr);
    }
    return r;
  };
  auto attempt = [&](spmv_row r, auto&& body) {
    try {
      body(r);
    } catch (const out_of_memory& e) {
      r.note = std::string("skipped: ") + e.what();
    } catch (const not_supported& e) {
      r.note = std::string("skipped: ") + e.what();
    }
    rows.push_back(std::move(r));
  };
  // One format at a time on the device (its own kernels and its cuSPARSE peer), so the
  // largest matrices need room for CSR plus one other copy only. `convert` builds the peer's
  // matrix inside the attempt, so running out of memory skips the peer.
  auto peer = [&](cusparse_spmv_alg alg, auto&& convert, count_t entries = -1) {
    attempt(row(to_string(alg), format_of(alg), true), [&](spmv_row& r) {
      decltype(auto) m = convert();
      cusparse_spmv<T> p(vh, spmv_view(m), alg, x.data(), y.data(), entries);
      measure(ctx, r, check, y, opt.reps, [&] { p.run(T(1), T(0)); });
    });
  };
  auto own = [&](const spmv_choice& c, const std::string& label, bool automatic, const std::string& skip = "") {
    attempt(row(label, c.fmt, false), [&](spmv_row& r) {
      if (!skip.empty()) throw not_supported(skip);
      r.automatic = automatic;
      const spmv_operator<T> op(ctx, dev, c);
      if (automatic) r.note = "auto: " + c.why;
      measure(ctx, r, check, y, opt.reps, [&] { op.apply(x.data(), y.data(), T(1), T(0), ctx.stream()); });
    });
  };
  auto csr = [&]() -> const device_csr<T, O>& { return dev; };
  // Every registry variant of format f (dense GEMV aside), SELL in both of its sorting
  // choices; ELL skipped where its padding would need over 4x the entries' memory.
  auto own_format = [&](format f) {
    for (const auto& v : spmv_variants<T>()) {
      if (v.fmt != f) continue;
      const std::string k(v.name);
      if (f == format::sell) {
        own({f, k, {32, 1}, -1, ""}, k + " (sigma 1)", false);
        own({f, k, {32, 0}, -1, ""}, k + " (sigma auto)", false);
        continue;
      }
      own({f, k, {}, -1, ""}, k, false,
          f == format::ell && double(a.rows()) * stats.longest > 4.0 * double(a.nnz()) + 1e6 ? "padding over 4x" : "");
    }
  };
  peer(cusparse_spmv_alg::csr_alg1, csr);
  peer(cusparse_spmv_alg::csr_alg2, csr);
  own_format(format::csr);
  {
    const spmv_choice auto_choice = select_spmv(stats);
    std::string label = "auto";
    label += " (" + auto_choice.kernel + ")";
    own(auto_choice, label, true);
  }
  own_format(format::sell);
  peer(cusparse_spmv_alg::sell, [&] { return to_sell(ctx, dev, {32, 1}); }, a.nnz());
  own_format(format::coo);
  peer(cusparse_spmv_alg::coo, [&] { return to_coo(ctx, dev); });
  own_format(format::csc);
  peer(cusparse_spmv_alg::csc, [&] { return to_csc(ctx, dev); });
  own_format(format::ell);
  own_format(format::jds);
  own_format(format::hyb);

  double alg1 = 0;
  for (const auto& r : rows)
    if (r.kernel == "cusparse_csr_alg1" && r.ok) alg1 = r.ms;
  for (auto& r : rows) {
    if (r.ms <= 0) continue;
    r.gbs = model / (r.ms * 1e6);
    r.copy_share = opt.copy_gbs > 0 ? r.gbs / opt.copy_gbs : 0;
    r.vs_alg1 = alg1 > 0 ? alg1 / r.ms : 0;
  }
  if (opt.progress) std::fprintf(stderr, "\r\033[K"), std::fflush(stderr);
  return rows;
}

std::vector<std::string> standard_generated() {
  return {"poisson2d:4000", "poisson3d:256", "random:4000000:16", "rmat:22:16", "denserows:4000000:8:16:200000"};
}

void print_spmv_table(const std::vector<spmv_row>& rows, double copy_gbs, const std::string& device) {
  std::printf("device: %s; copy bandwidth %.0f GB/s (read + write, measured in this run)\n", device.c_str(), copy_gbs);
  std::printf("GB/s: the minimum bytes of CSR SpMV (row pointers, indices, values, x once, y once) over the time\n");
  std::string current;
  for (const auto& r : rows) {
    const std::string key = r.matrix + " " + r.precision;
    if (key != current) {
      current = key;
      std::printf("\n%s, %s: %d rows, %lld nonzeros\n", r.matrix.c_str(), r.precision.c_str(), r.rows,
                  static_cast<long long>(r.nnz));
      std::printf("  %-26s %-5s %10s %8s %7s %9s  %s\n", "kernel", "fmt", "ms", "GB/s", "% copy", "vs ALG1", "");
    }
    if (r.ms <= 0) {
      std::printf("  %-26s %-5s %10s %8s %7s %9s  %s\n", r.kernel.c_str(), r.format.c_str(), "-", "-", "-", "-",
                  r.note.c_str());
      continue;
    }
    std::printf("  %-26s %-5s %10.4f %8.1f %6.1f%% %8.2fx  %s\n", r.kernel.c_str(), r.format.c_str(), r.ms, r.gbs,
                100 * r.copy_share, r.vs_alg1, r.note.c_str());
  }
  // Winners: the fastest validated la kernel and the fastest cuSPARSE peer per matrix.
  std::printf("\n%-34s %-28s %9s %-22s %s\n", "matrix", "fastest la kernel", "vs ALG1", "fastest cuSPARSE", "auto vs ALG1");
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t j = i;
    const spmv_row *best = nullptr, *peer = nullptr, *automatic = nullptr;
    for (; j < rows.size() && rows[j].matrix == rows[i].matrix && rows[j].precision == rows[i].precision; ++j) {
      const spmv_row& r = rows[j];
      if (!r.ok) continue;
      if (r.automatic) automatic = &r;
      const spmv_row*& slot = r.vendor ? peer : best;
      if (!slot || r.ms < slot->ms) slot = &r;
    }
    std::printf("%-34s %-28s %8.2fx %-22s %.2fx\n", (rows[i].matrix + " " + rows[i].precision).c_str(),
                best ? best->kernel.c_str() : "-", best ? best->vs_alg1 : 0.0, peer ? peer->kernel.c_str() : "-",
                automatic ? automatic->vs_alg1 : 0.0);
    i = j;
  }
}

void write_spmv_rows(const std::vector<spmv_row>& rows, const std::string& path, double copy_gbs,
                     const std::string& device) {
  const bool json = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  atomic_file f(path);
  char buf[1024];
  if (json) {
    std::snprintf(buf, sizeof buf, "{\n  \"device\": \"%s\",\n  \"copy_gbs\": %.1f,\n  \"rows\": [\n", device.c_str(),
                  copy_gbs);
    f.write(buf);
  } else {
    f.write("matrix,precision,rows,nnz,kernel,format,vendor,auto,ok,ms,gbs,copy_share,vs_alg1,error,note\n");
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    if (json)
      std::snprintf(buf, sizeof buf,
                    "    {\"matrix\": \"%s\", \"precision\": \"%s\", \"rows\": %d, \"nnz\": %lld, \"kernel\": \"%s\", "
                    "\"format\": \"%s\", \"vendor\": %s, \"auto\": %s, \"ok\": %s, \"ms\": %.6f, \"gbs\": %.2f, "
                    "\"copy_share\": %.4f, \"vs_alg1\": %.4f, \"error\": %.3g, \"note\": \"%s\"}%s\n",
                    r.matrix.c_str(), r.precision.c_str(), r.rows, static_cast<long long>(r.nnz), r.kernel.c_str(),
                    r.format.c_str(), r.vendor ? "true" : "false", r.automatic ? "true" : "false",
                    r.ok ? "true" : "false", r.ms, r.gbs, r.copy_share, r.vs_alg1, std::isfinite(r.error) ? r.error : -1.0,
                    clean(r.note).substr(0, 300).c_str(), i + 1 < rows.size() ? "," : "");
    else
      std::snprintf(buf, sizeof buf, "%s,%s,%d,%lld,%s,%s,%d,%d,%d,%.6f,%.2f,%.4f,%.4f,%.3g,\"%s\"\n", r.matrix.c_str(),
                    r.precision.c_str(), r.rows, static_cast<long long>(r.nnz), r.kernel.c_str(), r.format.c_str(),
                    r.vendor, r.automatic, r.ok, r.ms, r.gbs, r.copy_share, r.vs_alg1, r.error,
                    clean(r.note).substr(0, 300).c_str());
    f.write(buf);
  }
  if (json) f.write("  ]\n}\n");
  f.commit();
}

#define LA_INSTANTIATE(T, O)                                                                                     \
  template std::vector<spmv_row> bench_spmv<T, O>(context&, vendor_handles&, const std::string&,                 \
                                                  const csr_matrix<T, O>&, const spmv_bench_options&);
LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE)

}  // namespace la::cli
