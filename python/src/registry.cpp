// The registry's declarations for Python (la/solvers/registry.hpp): la's keywords and choices
// come from them (python/la/__init__.py), and tests/test_registry.py checks the stubs against them.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include <la/solvers/registry.hpp>
#include "solve_options.hpp"

namespace py = pybind11;

namespace la {
void bind_registry(py::module_& mod) {
  mod.def(
      "solve_options",
      [] {
        py::list out;
        for (const option_spec& s : solve_options()) {
          const char* type = s.type == option_type::real      ? "real"
                             : s.type == option_type::integer ? "integer"
                             : s.type == option_type::choice  ? "choice"
                                                              : "flag";
          out.append(py::make_tuple(std::string(s.name), python_name(s), type, std::string(s.fallback), choices_of(s),
                                    cli::cli_words(s.help)));
        }
        return out;
      },
      "The registry's options of a solve (la/solvers/registry.hpp): (name, keyword, type, default, choices, help).");
  mod.def(
      "registry_names",
      [] {
        std::vector<std::string> m, p;
        for (const method_entry& e : methods()) m.emplace_back(e.name);
        for (const preconditioner_entry& e : preconditioners()) p.emplace_back(e.name);
        return py::make_tuple(m, p);
      },
      "The registry's method and preconditioner names, in order.");
}
}  // namespace la
