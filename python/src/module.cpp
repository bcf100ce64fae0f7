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

#include "binding.hpp"

namespace py = pybind11;
using namespace la;
namespace la {
void bind_registry(pybind11::module_& mod);  // registry.cpp: the option and entry tables
}

namespace la::pybind_detail {
void bind_solver(py::module_& mod);  // solver.cpp: la.Solver
void bind_dense(py::module_& mod);   // dense.cpp: la.solve on dense arrays
void bind_batched(py::module_& mod);  // batched.cpp: la.solve on batches of dense arrays
void bind_sparse_direct(py::module_& mod);  // sparse_direct.cpp: la.Solver(method='direct')'s kept factor
void bind_complex(py::module_& mod);  // complex.cpp: la.solve on complex systems
}
using namespace la::pybind_detail;

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
         const option_pairs& options, bool gpu, const py::object& callback, bool history, const py::object& near_null,
         const py::object& coordinates, int dim) {
        cg_options opt = with_progress(parse_options(options), callback);
        attach_near_null(opt, near_null, coordinates, dim);
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
      "Solves A x = b in place of x (see la.solve).", py::arg("m"), py::arg("value"), py::arg("offset_bytes"), py::arg("b"),
      py::arg("x"), py::arg("options"), py::arg("gpu"), py::arg("callback"), py::arg("history"),
      py::arg("near_null") = py::none(), py::arg("coordinates") = py::none(), py::arg("dim") = 0);

  bind_solver(mod);
  bind_dense(mod);
  bind_batched(mod);
  bind_sparse_direct(mod);
  bind_complex(mod);

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
