// What the extension's files share (module.cpp: the calls; solver.cpp: la.Solver): the
// options, the GIL and progress hooks, the arrays where they lie, and the dispatch over value
// and offset types. Private to python/src.
#pragma once

#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <la/context.hpp>
#include <la/formats/csr.hpp>
#include <la/solvers/dense_solver.hpp>
#include <la/solvers/device_solve.hpp>
#include <la/solvers/method.hpp>
#include <la/solvers/registry.hpp>

namespace la::pybind_detail {
namespace py = pybind11;

/// Arrays the binding itself copied between host and device (uploads and downloads of A, b,
/// x): what the zero-copy test reads (CuPy inputs must leave it unchanged).
inline std::atomic<long long> copies{0};

using clock_type = std::chrono::steady_clock;
inline double since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }

/// direct_factorization's value (the dense and batched paths').
inline dense_factorization factorization_named(const std::string& f) {
  if (f == "auto") return dense_factorization::automatic;
  if (f == "lu") return dense_factorization::lu;
  if (f == "cholesky") return dense_factorization::cholesky;
  throw invalid_argument("factorization must be 'auto', 'lu' or 'cholesky', got '" + f + "'");
}

/// Ctrl-C seen between chunks of iterations.
struct interrupted {};

/// The options of a solve from Python's (declared name, value) pairs, read by
/// la::read_solve_options, kept per set of pairs (a parse costs about 14 us, a small solve's
/// whole budget a few times over). Called with the GIL held, which guards the cache.
using option_pairs = std::vector<std::pair<std::string, std::string>>;
inline cg_options parse_options(const option_pairs& pairs) {
  static std::map<option_pairs, cg_options> parsed;
  if (const auto it = parsed.find(pairs); it != parsed.end()) return it->second;
  std::vector<given_option> given;
  for (const auto& [name, value] : pairs) given.push_back({name, value});
  cg_options opt = read_solve_options(given);
  if (parsed.size() < 256) parsed.emplace(pairs, opt);
  return opt;
}

/// la.solve's and la.Solver's near_null_space= and coordinates= (numpy float64 arrays, the
/// Python side flattened them: B column-major, the coordinates node-major, d their columns;
/// None: not given) into AMG's options, which check them against A.
inline void attach_near_null(cg_options& opt, const py::object& b, const py::object& coordinates, int dim) {
  const auto take = [](const py::object& o) {
    const auto arr = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(o);
    if (!arr) throw invalid_argument("near_null_space and coordinates must be arrays of numbers");
    return std::make_shared<const std::vector<double>>(arr.data(), arr.data() + arr.size());
  };
  if (!b.is_none()) opt.precond_opt.amg.near_null = take(b);
  if (!coordinates.is_none()) opt.precond_opt.amg.coordinates = take(coordinates), opt.precond_opt.amg.coordinate_dim = dim;
}

/// opt with the progress hook: the Python callback (iteration, residual) and the Ctrl-C check,
/// each with the GIL held. An exception from the callback stops the solve and is re-raised.
/// The hook holds a handle (no reference count: the caller keeps `callback` alive), so copies
/// of the options made without the GIL touch no Python object.
inline cg_options with_progress(cg_options opt, const py::object& callback) {
  opt.progress = [callback = py::handle(callback)](const cg_progress& p) {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw interrupted{};
    if (!callback.is_none()) callback(p.iteration, p.residual);
  };
  return opt;
}

/// Runs f with the GIL released; an interrupt becomes the KeyboardInterrupt already set.
template <typename F>
inline auto without_gil(F&& f) {
  try {
    py::gil_scoped_release release;
    return f();
  } catch (const interrupted&) {
    throw py::error_already_set();
  }
}

template <typename T>
inline py::array_t<T> array_of(std::vector<T>&& v) {  // a numpy array that owns the vector, no copy
  auto* p = new std::vector<T>(std::move(v));
  py::capsule owner(p, [](void* q) { delete static_cast<std::vector<T>*>(q); });
  return py::array_t<T>({static_cast<py::ssize_t>(p->size())}, {sizeof(T)}, p->data(), owner);
}

/// A numpy array of T, C-contiguous: the array itself where it already is one (the Python
/// side passes them so), else a converted copy. Needs the GIL.
template <typename T>
using host_array = py::array_t<T, py::array::c_style | py::array::forcecast>;
template <typename T>
inline host_array<T> host_array_of(const py::handle& a, const char* what) {
  auto c = host_array<T>::ensure(a);
  if (!c) throw la::invalid_argument(std::string(what) + " is not an array of the expected type");
  return c;
}
template <typename T>
inline std::vector<T> vector_of(const host_array<T>& a) {
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
inline host_arrays<T, O> host_arrays_of(index_t rows, index_t cols, const py::array& indptr, const py::array& indices,
                                 const py::array& data) {
  return {rows, cols, host_array_of<O>(indptr, "indptr"), host_array_of<index_t>(indices, "indices"),
          host_array_of<T>(data, "data")};
}

/// A device CSR over memory another library owns (CuPy): no copy.
template <typename T, typename O>
inline device_csr<T, O> borrowed_csr(index_t rows, index_t cols, std::int64_t nnz, std::uintptr_t indptr,
                              std::uintptr_t indices, std::uintptr_t data, int device) {
  return device_csr<T, O>(rows, cols, device_buffer<O>::borrow(reinterpret_cast<O*>(indptr), std::size_t(rows) + 1, device),
                          device_buffer<index_t>::borrow(reinterpret_cast<index_t*>(indices), std::size_t(nnz), device),
                          device_buffer<T>::borrow(reinterpret_cast<T*>(data), std::size_t(nnz), device));
}
template <typename T>
inline device_vector<T> borrowed_vector(std::uintptr_t p, index_t n, int device) {
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
inline vector_arg<T> vector_arg_of(const py::object& o, bool on_device, const char* what, bool output = false) {
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
inline std::optional<host_arrays<T, O>> host_matrix(const matrix_arg& m) {
  if (m.on_device) return std::nullopt;
  return host_arrays_of<T, O>(m.rows, m.cols, m.indptr, m.indices, m.data);
}
/// On the device: the borrowed arrays, or the numpy arrays validated and copied up straight
/// from their memory (no GIL needed).
template <typename T, typename O>
inline device_csr<T, O> device_matrix(context& ctx, const matrix_arg& m, const std::optional<host_arrays<T, O>>& h) {
  if (m.on_device) return borrowed_csr<T, O>(m.rows, m.cols, m.nnz, m.d_indptr, m.d_indices, m.d_data, m.device);
  copies += 3;
  return to_device(ctx, h->view());
}
template <typename T>
inline device_vector<T> device_of(context& ctx, const vector_arg<T>& v, index_t n, int device) {
  if (v.device) return borrowed_vector<T>(v.device, n, device);
  copies += 1;
  LA_EXPECTS(v.size() == static_cast<std::size_t>(n), "a vector of " + std::to_string(v.size()) +
                                                          " values where " + std::to_string(n) + " are needed");
  return device_vector<T>(upload_async(ctx, v.host.data(), v.size()));
}
/// dx into the numpy array x came from (a host one), in stream order: the caller synchronizes.
template <typename T>
inline void download_into_async(const device_vector<T>& dx, vector_arg<T>& x) {
  if (x.device) return;
  copies += 1;
  dx.buffer().copy_to_host_async(x.data(), x.size());
}

/// Solves with the GIL released: on the GPU (numpy b and x uploaded from their own memory and
/// x downloaded into it, or CuPy pointers used in place) or on the host. A numpy x receives
/// the solution in place.
template <typename T, typename O>
inline solve_result solve_any(const matrix_arg& m, const std::optional<host_arrays<T, O>>& h, const vector_arg<T>& b,
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
inline auto dispatch(char value, int offset_bytes, F&& f) {
  if (value != 'f' && value != 'd') throw la::invalid_argument("la solves in float32 or float64");
  if (offset_bytes != 4 && offset_bytes != 8) throw la::invalid_argument("indptr must be int32 or int64");
  if (value == 'f') return offset_bytes == 4 ? f.template operator()<float, std::int32_t>() : f.template operator()<float, std::int64_t>();
  return offset_bytes == 4 ? f.template operator()<double, std::int32_t>() : f.template operator()<double, std::int64_t>();
}

inline py::dict report_of(const solve_result& r) {
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

}  // namespace la::pybind_detail
