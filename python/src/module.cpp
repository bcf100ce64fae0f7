// la's Python extension (_la): a thin layer over the public C++ API. The scipy-like calls and
// their checks live in python/la/__init__.py; here each call takes its arrays where they lie
// (numpy arrays are read in place: uploaded straight to the GPU, or copied once into la's
// containers for the host solver; CuPy arrays arrive as device pointers and are used in place),
// releases the GIL around the work, and turns la's errors into Python exceptions.
// Solver options: la::read_solve_options, which reads the registry's declarations for the CLI
// and Python alike, so names, ranges and refusals match.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <variant>
#include <cstdint>
#include <string>
#include <vector>

#include <la/context.hpp>
#include <la/formats/csr.hpp>
#include <la/formats/matrix_market.hpp>
#include <la/kernels/spmv/select.hpp>
#include <la/solvers/device_solve.hpp>
#include <la/solvers/device_solver.hpp>
#include <la/solvers/method.hpp>
#include <la/solvers/registry.hpp>

namespace py = pybind11;
using namespace la;
namespace la {
void bind_registry(pybind11::module_& mod);  // registry.cpp: the option and entry tables
}

namespace {

/// Arrays the binding itself copied between host and device (uploads and downloads of A, b,
/// x): what the zero-copy test reads (CuPy inputs must leave it unchanged).
std::atomic<long long> copies{0};

/// Ctrl-C seen between chunks of iterations.
struct interrupted {};

/// The options of a solve from Python's (declared name, value) pairs, read by
/// la::read_solve_options, kept per set of pairs (a parse costs about 14 us, a small solve's
/// whole budget a few times over). Called with the GIL held, which guards the cache.
using option_pairs = std::vector<std::pair<std::string, std::string>>;
cg_options parse_options(const option_pairs& pairs) {
  static std::map<option_pairs, cg_options> parsed;
  if (const auto it = parsed.find(pairs); it != parsed.end()) return it->second;
  std::vector<given_option> given;
  for (const auto& [name, value] : pairs) given.push_back({name, value});
  cg_options opt = read_solve_options(given);
  if (parsed.size() < 256) parsed.emplace(pairs, opt);
  return opt;
}

/// opt with the progress hook: the Python callback (iteration, residual) and the Ctrl-C check,
/// each with the GIL held. An exception from the callback stops the solve and is re-raised.
/// The hook holds a handle (no reference count: the caller keeps `callback` alive), so copies
/// of the options made without the GIL touch no Python object.
cg_options with_progress(cg_options opt, const py::object& callback) {
  opt.progress = [callback = py::handle(callback)](const cg_progress& p) {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw interrupted{};
    if (!callback.is_none()) callback(p.iteration, p.residual);
  };
  return opt;
}

/// Runs f with the GIL released; an interrupt becomes the KeyboardInterrupt already set.
template <typename F>
auto without_gil(F&& f) {
  try {
    py::gil_scoped_release release;
    return f();
  } catch (const interrupted&) {
    throw py::error_already_set();
  }
}

template <typename T>
py::array_t<T> array_of(std::vector<T>&& v) {  // a numpy array that owns the vector, no copy
  auto* p = new std::vector<T>(std::move(v));
  py::capsule owner(p, [](void* q) { delete static_cast<std::vector<T>*>(q); });
  return py::array_t<T>({static_cast<py::ssize_t>(p->size())}, {sizeof(T)}, p->data(), owner);
}

/// A numpy array of T, C-contiguous: the array itself where it already is one (the Python
/// side passes them so), else a converted copy. Needs the GIL.
template <typename T>
using host_array = py::array_t<T, py::array::c_style | py::array::forcecast>;
template <typename T>
host_array<T> host_array_of(const py::handle& a, const char* what) {
  auto c = host_array<T>::ensure(a);
  if (!c) throw la::invalid_argument(std::string(what) + " is not an array of the expected type");
  return c;
}
template <typename T>
std::vector<T> vector_of(const host_array<T>& a) {
  return std::vector<T>(a.data(), a.data() + a.size());
}

/// A numpy CSR matrix's arrays of the call's types, read in place.
template <typename T, typename O>
struct host_arrays {
  index_t rows = 0, cols = 0;
  host_array<O> ptr;
  host_array<index_t> idx;
  host_array<T> val;
  csr_view<const T, O> view() const {
    return {rows, cols, static_cast<O>(idx.size()), ptr.data(), idx.data(), val.data()};
  }
  /// la's host container (a copy, validated) for the host solver and the file calls.
  csr_matrix<T, O> matrix() const { return csr_matrix<T, O>(rows, cols, vector_of(ptr), vector_of(idx), vector_of(val)); }
};
template <typename T, typename O>
host_arrays<T, O> host_arrays_of(index_t rows, index_t cols, const py::array& indptr, const py::array& indices,
                                 const py::array& data) {
  return {rows, cols, host_array_of<O>(indptr, "indptr"), host_array_of<index_t>(indices, "indices"),
          host_array_of<T>(data, "data")};
}

/// A device CSR over memory another library owns (CuPy): no copy.
template <typename T, typename O>
device_csr<T, O> borrowed_csr(index_t rows, index_t cols, std::int64_t nnz, std::uintptr_t indptr,
                              std::uintptr_t indices, std::uintptr_t data, int device) {
  return device_csr<T, O>(rows, cols, device_buffer<O>::borrow(reinterpret_cast<O*>(indptr), std::size_t(rows) + 1, device),
                          device_buffer<index_t>::borrow(reinterpret_cast<index_t*>(indices), std::size_t(nnz), device),
                          device_buffer<T>::borrow(reinterpret_cast<T*>(data), std::size_t(nnz), device));
}
template <typename T>
device_vector<T> borrowed_vector(std::uintptr_t p, index_t n, int device) {
  return device_vector<T>(device_buffer<T>::borrow(reinterpret_cast<T*>(p), std::size_t(n), device));
}

/// Where a matrix lives for a call: host arrays (numpy) or device pointers (CuPy).
struct matrix_arg {
  index_t rows = 0, cols = 0;
  std::int64_t nnz = 0;
  bool on_device = false;
  py::array indptr, indices, data;                      // host
  std::uintptr_t d_indptr = 0, d_indices = 0, d_data = 0;  // device
  int device = 0;
};

/// A vector argument: a numpy array read (and, for an output, written) in place, or a device
/// pointer. Made with the GIL held; its memory is used without it.
template <typename T>
struct vector_arg {
  host_array<T> host;
  std::uintptr_t device = 0;
  T* data() { return host.mutable_data(); }
  std::size_t size() const { return static_cast<std::size_t>(host.size()); }
};
template <typename T>
vector_arg<T> vector_arg_of(const py::object& o, bool on_device, const char* what, bool output = false) {
  vector_arg<T> v;
  if (on_device) {
    v.device = o.cast<std::uintptr_t>();
    return v;
  }
  // An output must be the caller's own array, not a converted copy of it.
  if (output && !(py::isinstance<py::array_t<T>>(o) && (o.cast<py::array>().flags() & py::array::c_style) &&
                  o.cast<py::array>().writeable()))
    throw la::invalid_argument(std::string(what) + " must be a writable C-contiguous array of the matrix's type");
  v.host = host_array_of<T>(o, what);
  return v;
}

/// The matrix of a call, its numpy arrays held with the GIL (empty for a device one).
template <typename T, typename O>
std::optional<host_arrays<T, O>> host_matrix(const matrix_arg& m) {
  if (m.on_device) return std::nullopt;
  return host_arrays_of<T, O>(m.rows, m.cols, m.indptr, m.indices, m.data);
}
/// On the device: the borrowed arrays, or the numpy arrays validated and copied up straight
/// from their memory (no GIL needed).
template <typename T, typename O>
device_csr<T, O> device_matrix(context& ctx, const matrix_arg& m, const std::optional<host_arrays<T, O>>& h) {
  if (m.on_device) return borrowed_csr<T, O>(m.rows, m.cols, m.nnz, m.d_indptr, m.d_indices, m.d_data, m.device);
  copies += 3;
  return to_device(ctx, h->view());
}
template <typename T>
device_vector<T> device_of(context& ctx, const vector_arg<T>& v, index_t n, int device) {
  if (v.device) return borrowed_vector<T>(v.device, n, device);
  copies += 1;
  LA_EXPECTS(v.size() == static_cast<std::size_t>(n), "a vector of " + std::to_string(v.size()) +
                                                          " values where " + std::to_string(n) + " are needed");
  return device_vector<T>(upload_async(ctx, v.host.data(), v.size()));
}
/// dx into the numpy array x came from (a host one), in stream order: the caller synchronizes.
template <typename T>
void download_into_async(const device_vector<T>& dx, vector_arg<T>& x) {
  if (x.device) return;
  copies += 1;
  dx.buffer().copy_to_host_async(x.data(), x.size());
}

/// Solves with the GIL released: on the GPU (numpy b and x uploaded from their own memory and
/// x downloaded into it, or CuPy pointers used in place) or on the host. A numpy x receives
/// the solution in place.
template <typename T, typename O>
solve_result solve_any(const matrix_arg& m, const std::optional<host_arrays<T, O>>& h, const vector_arg<T>& b,
                       vector_arg<T>& x, const cg_options& opt, bool gpu) {
  if (!gpu) {  // la's host solver takes its own containers: A, b and x copied in, x copied out
    std::vector<T> hx = vector_of(x.host);
    solve_result r = solve_host(h->matrix(), vector_of(b.host), hx, opt);
    std::copy(hx.begin(), hx.end(), x.data());
    return r;
  }
  context ctx(m.device);
  const device_csr<T, O> a = device_matrix<T, O>(ctx, m, h);
  const auto db = device_of(ctx, b, m.rows, m.device);
  auto dx = device_of(ctx, x, m.rows, m.device);
  solve_result r = solve_device(ctx, a, db, dx, opt);
  download_into_async(dx, x);
  ctx.synchronize();
  return r;
}

/// Calls f.template operator()<T, O>() for the value type ('f' or 'd') and offset width (4, 8).
template <typename F>
auto dispatch(char value, int offset_bytes, F&& f) {
  if (value != 'f' && value != 'd') throw la::invalid_argument("la solves in float32 or float64");
  if (offset_bytes != 4 && offset_bytes != 8) throw la::invalid_argument("indptr must be int32 or int64");
  if (value == 'f') return offset_bytes == 4 ? f.template operator()<float, std::int32_t>() : f.template operator()<float, std::int64_t>();
  return offset_bytes == 4 ? f.template operator()<double, std::int32_t>() : f.template operator()<double, std::int64_t>();
}

/// A solver object on the GPU: the setup once (la::device_solver), then many solves.
class solver {
 public:
  solver(matrix_arg m, char value, int offset_bytes, const option_pairs& options)
      : m_(std::move(m)), value_(value), offset_bytes_(offset_bytes), opt_(parse_options(options)) {
    dispatch(value_, offset_bytes_, [&]<typename T, typename O>() {
      const auto h = host_matrix<T, O>(m_);
      without_gil([&] {
        auto& s = state_.emplace<st<T, O>>(m_.device);
        s.a = device_matrix<T, O>(s.ctx, m_, h);
        s.solver = std::make_unique<device_solver<T, O>>(s.ctx, s.a, opt_);
        return 0;
      });
      return 0;
    });
  }
  solve_result solve(const py::object& b, const py::object& x, const py::object& callback, bool history) {
    const cg_options o = with_progress(opt_, callback);
    return dispatch(value_, offset_bytes_, [&]<typename T, typename O>() {
      const auto vb = vector_arg_of<T>(b, m_.on_device, "b");
      auto vx = vector_arg_of<T>(x, m_.on_device, "x0", true);
      return without_gil([&] {
        auto& s = std::get<st<T, O>>(state_);
        s.solver->set_progress(o.progress, history);
        const auto db = device_of(s.ctx, vb, m_.rows, m_.device);
        auto dx = device_of(s.ctx, vx, m_.rows, m_.device);
        solve_result res = s.solver->solve(db, dx);
        s.solver->set_progress({}, false);
        download_into_async(dx, vx);
        s.ctx.synchronize();
        return res;
      });
    });
  }
  void update_values(const py::object& data) {
    dispatch(value_, offset_bytes_, [&]<typename T, typename O>() {
      const auto v = vector_arg_of<T>(data, m_.on_device, "data");
      LA_EXPECTS(v.device || v.size() == static_cast<std::size_t>(m_.nnz),
                 "update_values: " + std::to_string(v.size()) + " values for a pattern of " +
                     std::to_string(m_.nnz) + " entries");
      without_gil([&] {
        auto& s = std::get<st<T, O>>(state_);
        if (v.device) {  // the new values at their own address: a borrowed matrix over them
          matrix_arg m = m_;
          m.d_data = v.device;
          s.a = device_matrix<T, O>(s.ctx, m, std::nullopt);
        } else {
          copies += 1;
          s.a.values().copy_from_host_async(v.host.data(), v.size());
          s.ctx.synchronize();
        }
        s.solver->update_values(s.a);
        return 0;
      });
      return 0;
    });
  }

 private:
  template <typename T, typename O>
  struct st {
    explicit st(int device) : ctx(device) {}
    context ctx;
    device_csr<T, O> a;
    std::unique_ptr<device_solver<T, O>> solver;
  };
  matrix_arg m_;
  char value_;
  int offset_bytes_;
  cg_options opt_;
  std::variant<std::monostate, st<float, std::int32_t>, st<float, std::int64_t>, st<double, std::int32_t>,
               st<double, std::int64_t>>
      state_;
};

py::dict report_of(const solve_result& r) {
  py::dict d;
  d["status"] = to_string(r.status);
  d["converged"] = r.converged();
  d["iterations"] = r.iterations;
  d["residual"] = r.residual;
  d["true_residual"] = r.true_residual;
  d["message"] = r.message;
  d["method"] = std::string(to_string(r.solver));
  d["where"] = r.method;
  d["method_choice"] = r.solver_choice;
  d["precond"] = std::string(to_string(r.precond.kind));
  d["precond_detail"] = r.precond.detail;
  d["precond_setup_seconds"] = r.precond.setup_seconds;
  d["precond_bytes"] = r.precond.bytes;
  d["analysis_seconds"] = r.analysis_seconds;
  d["setup_seconds"] = r.setup_seconds;
  d["iterate_seconds"] = r.iterate_seconds;
  d["history"] = r.history;
  return d;
}

}  // namespace

PYBIND11_MODULE(_la, mod) {
  mod.doc() = "la's C++ extension; use the la package (python/la/__init__.py), not this module.";

  // la's errors, one Python class each (la.Error and its subclasses are built on these in
  // __init__.py): invalid arguments are also ValueError, as scipy's.
  static py::exception<la::error> error(mod, "Error");
  static py::exception<la::invalid_argument> invalid(mod, "InvalidArgument", PyExc_ValueError);
  static py::exception<la::io_error> io(mod, "IOError", PyExc_OSError);
  static py::exception<la::device_error> device(mod, "DeviceError", error.ptr());
  static py::exception<la::not_supported> unsupported(mod, "NotSupported", error.ptr());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const la::invalid_argument& e) {
      PyErr_SetString(invalid.ptr(), e.what());
    } catch (const la::io_error& e) {
      PyErr_SetString(io.ptr(), e.what());
    } catch (const la::device_error& e) {
      PyErr_SetString(device.ptr(), e.what());
    } catch (const la::not_supported& e) {
      PyErr_SetString(unsupported.ptr(), e.what());
    } catch (const la::error& e) {
      PyErr_SetString(error.ptr(), e.what());
    }
  });

  mod.def("cuda_available", &cuda_available, "True when a CUDA device and a new enough driver are present.");
  mod.def("cuda_status", &cuda_status, "One line: the device's name, or why there is none.");
  mod.def(
      "choose_device",
      [](std::int64_t rows, std::int64_t nnz) {
        const device_choice c = choose_device(rows, nnz);
        return py::make_tuple(c.host, c.why);
      },
      "device='auto' with a GPU present: (True, why) where the host solves before the GPU would start.");
  mod.def("copies", [] { return copies.load(); }, "Arrays the binding copied between host and device so far.");
  mod.def("check_options", [](const option_pairs& p) { (void)parse_options(p); },
          "Reads a solve's options ((declared name, value) pairs) and raises what la refuses.");
  bind_registry(mod);

  py::class_<matrix_arg>(mod, "Matrix")
      .def_static("host",
                  [](index_t rows, index_t cols, py::array indptr, py::array indices, py::array data) {
                    matrix_arg m;
                    m.rows = rows, m.cols = cols, m.nnz = static_cast<std::int64_t>(indices.size());
                    m.indptr = std::move(indptr), m.indices = std::move(indices), m.data = std::move(data);
                    return m;
                  })
      .def_static("device", [](index_t rows, index_t cols, std::int64_t nnz, std::uintptr_t indptr,
                               std::uintptr_t indices, std::uintptr_t data, int device) {
        matrix_arg m;
        m.rows = rows, m.cols = cols, m.nnz = nnz, m.on_device = true;
        m.d_indptr = indptr, m.d_indices = indices, m.d_data = data, m.device = device;
        return m;
      });

  mod.def(
      "solve",
      [](const matrix_arg& m, char value, int offset_bytes, const py::object& b, const py::object& x,
         const option_pairs& options, bool gpu, const py::object& callback, bool history) {
        cg_options opt = with_progress(parse_options(options), callback);
        opt.record_history = history;
        const bool in_place = gpu && m.on_device;
        double call_seconds = 0;  // the C++ call: la's work (copies, setup, solve) without the binding's
        const solve_result r = dispatch(value, offset_bytes, [&]<typename T, typename O>() {
          const auto h = host_matrix<T, O>(m);
          const auto vb = vector_arg_of<T>(b, in_place, "b");
          auto vx = vector_arg_of<T>(x, in_place, "x0", true);
          const auto t0 = std::chrono::steady_clock::now();
          const solve_result res = without_gil([&] { return solve_any<T, O>(m, h, vb, vx, opt, gpu); });
          call_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          return res;
        });
        py::dict d = report_of(r);
        d["call_seconds"] = call_seconds;
        return d;
      },
      "Solves A x = b in place of x (see la.solve).");

  py::class_<solver>(mod, "Solver")
      .def(py::init<matrix_arg, char, int, option_pairs>())
      .def("solve", [](solver& s, const py::object& b, const py::object& x, const py::object& cb,
                       bool history) { return report_of(s.solve(b, x, cb, history)); })
      .def("update_values", &solver::update_values);

  mod.def(
      "read_matrix_market",
      [](const std::string& path, char value) -> py::tuple {
        return without_gil([&]() -> py::tuple {
          mm_header h = read_matrix_market_header(path);
          auto read = [&](auto tag_t, auto tag_o) -> py::tuple {
            using T = decltype(tag_t);
            using O = decltype(tag_o);
            csr_matrix<T, O> a = read_matrix_market_csr<T, O>(path, &h);
            const index_t rows = a.rows(), cols = a.cols();
            auto [p, i, v] = std::move(a).release();
            py::gil_scoped_acquire gil;
            return py::tuple(py::make_tuple(rows, cols, array_of(std::move(p)), array_of(std::move(i)), array_of(std::move(v)),
                                  std::string(to_string(h.symmetry))));
          };
          const bool wide = max_stored_entries(h) > std::numeric_limits<std::int32_t>::max();
          if (value == 'f') return wide ? read(float{}, std::int64_t{}) : read(float{}, std::int32_t{});
          return wide ? read(double{}, std::int64_t{}) : read(double{}, std::int32_t{});
        });
      },
      "Reads a Matrix Market file into CSR arrays (rows, cols, indptr, indices, data, symmetry).");

  mod.def(
      "write_matrix_market",
      [](const std::string& path, const matrix_arg& m, char value, int offset_bytes, bool symmetric) {
        mm_write_options w;
        w.symmetry = symmetric ? mm_symmetry::symmetric : mm_symmetry::general;
        dispatch(value, offset_bytes, [&]<typename T, typename O>() {
          const auto a = host_arrays_of<T, O>(m.rows, m.cols, m.indptr, m.indices, m.data).matrix();
          py::gil_scoped_release release;
          write_matrix_market(path, a, w);
          return 0;
        });
      },
      "Writes CSR arrays to a Matrix Market file (coordinate; symmetric keeps the lower triangle).");

  mod.def(
      "info",
      [](const matrix_arg& m, char value, int offset_bytes) {
        return dispatch(value, offset_bytes, [&]<typename T, typename O>() {
          const auto a = host_arrays_of<T, O>(m.rows, m.cols, m.indptr, m.indices, m.data).matrix();
          const matrix_properties p = properties_of(a);
          const spmv_stats s = row_stats(a);
          py::dict d;
          d["rows"] = p.rows, d["cols"] = p.cols, d["nnz"] = p.nnz;
          d["symmetric"] = p.symmetric(), d["looks_spd"] = p.looks_spd();
          d["pattern_symmetric"] = p.pattern_symmetric, d["max_asymmetry"] = p.max_asymmetry;
          d["max_abs"] = p.max_abs;
          d["diag_positive"] = p.diag_positive, d["diag_negative"] = p.diag_negative, d["diag_zero"] = p.diag_zero;
          d["dominant_rows"] = p.dominant_rows, d["min_dominance"] = p.min_dominance;
          d["row_mean"] = s.mean, d["row_stddev"] = s.stddev, d["row_longest"] = s.longest;
          d["empty_rows"] = s.empty_rows;
          d["description"] = describe(p);
          return d;
        });
      },
      "The properties la's solvers read (symmetry, diagonal, dominance, row lengths).");

  mod.def(
      "spmv",
      [](const matrix_arg& m, char value, int offset_bytes, const py::object& x, const py::object& y,
         const std::string& kernel) {
        dispatch(value, offset_bytes, [&]<typename T, typename O>() {
          const auto h = host_matrix<T, O>(m);
          const auto vx = vector_arg_of<T>(x, m.on_device, "x");
          auto vy = vector_arg_of<T>(y, m.on_device, "y", true);
          without_gil([&] {
            context ctx(m.device);
            const device_csr<T, O> a = device_matrix<T, O>(ctx, m, h);
            const spmv_plan<T> plan(ctx, spmv_view(a), kernel);
            const auto dx = device_of(ctx, vx, m.cols, m.device);
            auto dy = device_of(ctx, vy, m.rows, m.device);
            plan.run(ctx, dx, dy, T(1), T(0));
            download_into_async(dy, vy);
            ctx.synchronize();
            return 0;
          });
          return 0;
        });
      },
      "y = A x on the GPU with an SpMV kernel by name (auto: the format's default).");
}
