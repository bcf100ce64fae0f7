// la.Solver's extension class: the setup once, then many solves, on the GPU
// (la::device_solver) or on the host (la::host_solver): the method's choice and what it built
// (a preconditioner, or the direct method's factors) kept, update_values rerunning what depends
// on the values.
#include <memory>
#include <variant>

#include <la/solvers/device_solver.hpp>
#include <la/solvers/host_solver.hpp>

#include "binding.hpp"

namespace la::pybind_detail {
namespace {
/// A solver object: the setup once (la::device_solver on the GPU, la::host_solver on the
/// host), then many solves.
class solver {
 public:
  solver(matrix_arg m, char value, int offset_bytes, const option_pairs& options, bool gpu, const py::object& near_null,
         const py::object& coordinates, int dim)
      : m_(std::move(m)), value_(value), offset_bytes_(offset_bytes), opt_(parse_options(options)), gpu_(gpu) {
    attach_near_null(opt_, near_null, coordinates, dim);
    dispatch(value_, offset_bytes_, [&]<typename T, typename O>() {
      const auto h = host_matrix<T, O>(m_);
      without_gil([&] {
        if (!gpu_) {
          auto& s = state_.emplace<host_state<T, O>>();
          s.a = h->matrix();
          s.solver = std::make_unique<host_solver<csr_matrix<T, O>>>(s.a, opt_);
          return 0;
        }
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
        if (!gpu_) {  // A copied in once; b and x copied in, x copied out, as la.solve's host path
          auto& s = std::get<host_state<T, O>>(state_);
          s.solver->set_progress(o.progress, history);
          std::vector<T> hx = vector_of(vx.host);
          solve_result res = s.solver->solve(vector_of(vb.host), hx);
          s.solver->set_progress({}, false);
          std::copy(hx.begin(), hx.end(), vx.data());
          return res;
        }
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
  /// k right-hand sides on the host (b, x: n * k values, column after column) through
  /// host_solver::solve_columns (the direct method's factors take them together); the GPU
  /// solves them one by one (Solver.solve does). A list of k results.
  std::vector<solve_result> solve_columns(const py::object& b, const py::object& x, std::int64_t k) {
    LA_EXPECTS(!gpu_, "solve_columns: the host solver's (the GPU's columns go one by one)");
    return dispatch(value_, offset_bytes_, [&]<typename T, typename O>() {
      const auto vb = vector_arg_of<T>(b, false, "b");
      auto vx = vector_arg_of<T>(x, false, "x", true);
      return without_gil([&] {
        auto& s = std::get<host_state<T, O>>(state_);
        std::vector<T> hx;
        std::vector<solve_result> res = s.solver->solve_columns(vector_of(vb.host), hx, static_cast<index_t>(k));
        std::copy(hx.begin(), hx.end(), vx.data());
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
        if (!gpu_) {  // the new values in place: the solver reruns what depends on them (timed)
          auto& s = std::get<host_state<T, O>>(state_);
          std::copy(v.host.data(), v.host.data() + v.size(), s.a.values().begin());
          s.solver->update_values(s.a);
          return 0;
        }
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
  template <typename T, typename O>
  struct host_state {
    csr_matrix<T, O> a;
    std::unique_ptr<host_solver<csr_matrix<T, O>>> solver;
  };
  matrix_arg m_;
  char value_;
  int offset_bytes_;
  cg_options opt_;
  bool gpu_;
  std::variant<std::monostate, st<float, std::int32_t>, st<float, std::int64_t>, st<double, std::int32_t>,
               st<double, std::int64_t>, host_state<float, std::int32_t>, host_state<float, std::int64_t>,
               host_state<double, std::int32_t>, host_state<double, std::int64_t>>
      state_;
};
}  // namespace

void bind_solver(py::module_& mod) {
  py::class_<solver>(mod, "Solver")
      .def(py::init<matrix_arg, char, int, option_pairs, bool, py::object, py::object, int>(), py::arg("m"), py::arg("value"),
           py::arg("offset_bytes"), py::arg("options"), py::arg("gpu"), py::arg("near_null") = py::none(),
           py::arg("coordinates") = py::none(), py::arg("dim") = 0)
      .def("solve", [](solver& s, const py::object& b, const py::object& x, const py::object& cb,
                       bool history) { return report_of(s.solve(b, x, cb, history)); })
      .def("solve_columns",
           [](solver& s, const py::object& b, const py::object& x, std::int64_t k) {
             py::list out;
             for (const solve_result& r : s.solve_columns(b, x, k)) out.append(report_of(r));
             return out;
           })
      .def("update_values", &solver::update_values);
}
}  // namespace la::pybind_detail
