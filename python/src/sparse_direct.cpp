// la.Solver(A, method='direct')'s kept factor: la::sparse_direct_solver on the GPU or on the
// host's threads, made once from scipy's CSR arrays and solved for each b (refactor() on
// update_values). Private to python/src.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

#include <la/context.hpp>
#include <la/solvers/sparse_direct_solver.hpp>

namespace la::pybind_detail {
namespace py = pybind11;

namespace {
csr_matrix<double, count_t> csr_of(index_t n, const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>& indptr,
                                   const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>& indices,
                                   const py::array_t<double, py::array::c_style | py::array::forcecast>& data) {
  std::vector<count_t> p(indptr.data(), indptr.data() + indptr.size());
  std::vector<index_t> i(indices.size());
  for (py::ssize_t k = 0; k < indices.size(); ++k) i[static_cast<std::size_t>(k)] = static_cast<index_t>(indices.data()[k]);
  std::vector<double> v(data.data(), data.data() + data.size());
  return csr_matrix<double, count_t>(n, n, std::move(p), std::move(i), std::move(v));  // validated: sorted, in range
}

struct py_sparse_direct {
  std::unique_ptr<context> ctx;  // null: the host's threads
  std::unique_ptr<sparse_direct_solver> s;
  index_t n = 0;

  py_sparse_direct(index_t rows, const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>& indptr,
                   const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>& indices,
                   const py::array_t<double, py::array::c_style | py::array::forcecast>& data, bool gpu, int device)
      : n(rows) {
    const csr_matrix<double, count_t> a = csr_of(rows, indptr, indices, data);
    py::gil_scoped_release release;
    if (gpu) {
      ctx = std::make_unique<context>(device);
      s = std::make_unique<sparse_direct_solver>(*ctx, a);
    } else {
      s = std::make_unique<sparse_direct_solver>(a);
    }
    s->factor();
  }
  py::dict report() const {
    py::dict d;
    d["ok"] = s->ok();
    d["singular_column"] = static_cast<long>(s->singular_column());
    d["perturbed"] = static_cast<long>(s->perturbed());
    d["analysis"] = s->analysis().summary();
    d["description"] = s->description();
    d["analyze_seconds"] = s->analyze_seconds();
    d["factor_seconds"] = s->factor_seconds();
    return d;
  }
  /// x (k right-hand sides, column after column: k x n C-order) solved in place.
  py::dict solve(py::array_t<double, py::array::c_style> x, index_t k) {
    if (x.size() != static_cast<py::ssize_t>(n) * k) throw invalid_argument("b has " + std::to_string(x.size()) + " entries; A has " + std::to_string(n) + " rows");
    std::vector<double> v(x.data(), x.data() + x.size());
    sparse_direct_report r;
    {
      py::gil_scoped_release release;
      r = s->solve(v, k);
    }
    std::copy(v.begin(), v.end(), x.mutable_data());
    py::dict d;
    d["refinement_steps"] = r.refinement_steps;
    d["gmres_iterations"] = r.gmres_iterations;
    d["backward_error"] = r.backward_error;
    d["relative_residual"] = r.relative_residual;
    d["seconds"] = r.seconds;
    d["message"] = r.message;
    return d;
  }
  void refactor(const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>& indptr,
                const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>& indices,
                const py::array_t<double, py::array::c_style | py::array::forcecast>& data) {
    const csr_matrix<double, count_t> a = csr_of(n, indptr, indices, data);
    py::gil_scoped_release release;
    s->refactor(a);
  }
};
}  // namespace

void bind_sparse_direct(py::module_& mod) {
  py::class_<py_sparse_direct>(mod, "SparseDirect", "la::sparse_direct_solver: the factor la.Solver(method='direct') keeps")
      .def(py::init<index_t, const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>&,
                    const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>&,
                    const py::array_t<double, py::array::c_style | py::array::forcecast>&, bool, int>())
      .def("report", &py_sparse_direct::report)
      .def("solve", &py_sparse_direct::solve)
      .def("refactor", &py_sparse_direct::refactor);
}

}  // namespace la::pybind_detail
