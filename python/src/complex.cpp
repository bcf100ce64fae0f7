// la.solve on complex systems (issue 69): complex64 and complex128 scipy/numpy input (A's
// arrays read in place, copied once into la's containers) or CuPy input (A, b and x used in
// place on their GPU); the method chosen and run by <la/solvers/complex_solve.hpp>, as
// `la solve` does. auto reads A's values on the host (a CuPy A is copied down for that, and the
// copies counted); a named Krylov method on CuPy input copies nothing. The direct method takes
// complex128, from the host's containers.
#include <pybind11/complex.h>

#include <complex>

#include <la/solvers/complex_solve.hpp>

#include "binding.hpp"

namespace la::pybind_detail {
namespace {

/// Calls f.template operator()<T, O>() for 'F' (complex64) or 'D' (complex128) and 4- or 8-byte offsets.
template <typename F>
auto dispatch_complex(char value, int offset_bytes, F&& f) {
  if (value != 'F' && value != 'D') throw la::invalid_argument("complex systems are solved in complex64 or complex128");
  if (offset_bytes != 4 && offset_bytes != 8) throw la::invalid_argument("indptr must be int32 or int64");
  using zf = std::complex<float>;
  using zd = std::complex<double>;
  if (value == 'F') return offset_bytes == 4 ? f.template operator()<zf, std::int32_t>() : f.template operator()<zf, std::int64_t>();
  return offset_bytes == 4 ? f.template operator()<zd, std::int32_t>() : f.template operator()<zd, std::int64_t>();
}

/// A device CSR's arrays copied to the host (auto's look at the values; the direct method).
template <typename T, typename O>
csr_matrix<T, O> downloaded(context& ctx, const matrix_arg& m) {
  const device_csr<T, O> a = borrowed_csr<T, O>(m.rows, m.cols, m.nnz, m.d_indptr, m.d_indices, m.d_data, m.device);
  copies += 3;
  return to_host(ctx, a);
}

/// la.Solver on a complex system: complex_solver (the method chosen once, the direct method's
/// factors kept) over a copy of A in la's container; b and x numpy arrays.
struct complex_solver_box {
  virtual ~complex_solver_box() = default;
  virtual solve_result solve(const py::object& b, const py::object& x) = 0;
  std::string why, note, method;
};
template <typename T, typename O>
struct complex_solver_of final : complex_solver_box {
  csr_matrix<T, O> a;
  std::optional<context> ctx;
  std::optional<complex_solver<T, O>> s;
  complex_solver_of(const matrix_arg& m, const std::string& name, const cg_options& o, bool gpu)
      : a(host_matrix<T, O>(m)->matrix()) {
    without_gil([&] {
      if (gpu) ctx.emplace(m.device);
      s.emplace(ctx ? &*ctx : nullptr, a, name, o);
      return 0;
    });
    why = s->choice().why, note = s->note();
  }
  solve_result solve(const py::object& b, const py::object& x) override {
    const auto vb = vector_arg_of<T>(b, false, "b");
    auto vx = vector_arg_of<T>(x, false, "x0", true);
    std::vector<T> hb = vector_of(vb.host), hx = vector_of(vx.host);
    solve_result r = without_gil([&] { return s->solve(hb, hx); });
    std::copy(hx.begin(), hx.end(), vx.data());
    note = s->note();
    method = s->factored() && r.solver == krylov_method::direct ? "direct" : to_string(s->choice().krylov);
    return r;
  }
};

}  // namespace

void bind_complex(py::module_& mod) {
  py::class_<complex_solver_box>(mod, "ComplexSolver", "la::complex_solver: la.Solver on a complex system")
      .def(py::init([](const matrix_arg& m, char value, int offset_bytes, const std::string& method, const option_pairs& options,
                       bool gpu) {
        const cg_options opt = parse_options(options);
        return dispatch_complex(value, offset_bytes, [&]<typename T, typename O>() -> std::unique_ptr<complex_solver_box> {
          return std::make_unique<complex_solver_of<T, O>>(m, method, opt, gpu);
        });
      }))
      .def("solve", [](complex_solver_box& s, const py::object& b, const py::object& x) {
        const solve_result r = s.solve(b, x);
        py::dict d = report_of(r);
        d["method"] = s.method;
        d["method_choice"] = s.why;
        if (!s.note.empty()) d["message"] = s.note + "; " + r.message;
        return d;
      });
  mod.def(
      "solve_complex",
      [](const matrix_arg& m, char value, int offset_bytes, const py::object& b, const py::object& x,
         const std::string& method, const option_pairs& options, bool gpu) {
        const cg_options opt = parse_options(options);
        const bool in_place = gpu && m.on_device;
        std::string choice_why, note;
        bool direct = false;
        complex_method krylov = complex_method::gmres;
        double call_seconds = 0;
        const solve_result r = dispatch_complex(value, offset_bytes, [&]<typename T, typename O>() {
          const auto h = host_matrix<T, O>(m);
          const auto vb = vector_arg_of<T>(b, in_place, "b");
          auto vx = vector_arg_of<T>(x, in_place, "x0", true);
          return without_gil([&] {
            const auto t0 = std::chrono::steady_clock::now();
            std::optional<context> ctx;
            if (gpu) ctx.emplace(m.device);
            // The host's copy of A where it is needed: the host's solvers, the direct method, auto's look.
            std::optional<csr_matrix<T, O>> host;
            const auto host_a = [&]() -> const csr_matrix<T, O>& {
              if (!host) host = m.on_device ? downloaded<T, O>(*ctx, m) : h->matrix();
              return *host;
            };
            matrix_properties p;
            if (method == "auto") p = properties_of(host_a());
            const complex_choice c = choose_complex(method, p, m.rows, opt, gpu, std::is_same_v<T, std::complex<double>>);
            choice_why = c.why, direct = c.direct, krylov = c.krylov;
            solve_result res;
            if (in_place && !c.direct) {  // CuPy's arrays used where they are
              const device_csr<T, O> a = borrowed_csr<T, O>(m.rows, m.cols, m.nnz, m.d_indptr, m.d_indices, m.d_data, m.device);
              const auto db = device_of(*ctx, vb, m.rows, m.device);
              auto dx = device_of(*ctx, vx, m.rows, m.device);
              res = solve_complex_device(*ctx, a, db, dx, c.krylov, opt);
              ctx->synchronize();
              res.solver_choice = c.why;
            } else {
              std::vector<T> hb, hx;
              if (vb.device) {  // CuPy b for the direct method: down and back
                device_vector<T> db = borrowed_vector<T>(vb.device, m.rows, m.device);
                hb = to_host(*ctx, db);
                device_vector<T> dx0 = borrowed_vector<T>(vx.device, m.rows, m.device);
                hx = to_host(*ctx, dx0);
                copies += 2;
              } else {
                hb = vector_of(vb.host), hx = vector_of(vx.host);
              }
              res = la::solve_complex(ctx ? &*ctx : nullptr, host_a(), hb, hx, c, opt, &note);
              if (vx.device) {
                device_vector<T> dx = borrowed_vector<T>(vx.device, m.rows, m.device);
                dx.buffer().copy_from_host_async(hx.data(), hx.size());
                ctx->synchronize();
                copies += 1;
              } else {
                std::copy(hx.begin(), hx.end(), vx.data());
              }
            }
            call_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            return res;
          });
        });
        py::dict d = report_of(r);
        d["method"] = std::string(direct && r.solver == krylov_method::direct ? "direct" : to_string(krylov));
        d["method_choice"] = choice_why;
        if (!note.empty()) d["message"] = note + "; " + r.message;
        d["call_seconds"] = call_seconds;
        return d;
      },
      "Solves a complex A x = b in place of x (see la.solve).");
}

}  // namespace la::pybind_detail
