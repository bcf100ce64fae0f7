// What the CG benchmarks (cg_bench, precond_bench) share: their --systems lists and how a
// system is loaded (a .mtx file, or a gen: spec of the SpMV suite).
#pragma once

#include <string>
#include <vector>

#include <la/formats/convert.hpp>
#include <la/formats/matrix_market.hpp>
#include <la/kernels/detail/vendor/spmv_suite.hpp>

namespace la::bench {

/// The comma-separated items of s (empty items dropped).
inline std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t b = 0;
  while (b <= s.size()) {
    const std::size_t e = std::min(s.find(',', b), s.size());
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

/// A system: a Matrix Market file (".mtx") or a generator spec (poisson2d:N, ...).
template <typename T>
csr_matrix<T> load(const std::string& spec) {
  if (spec.size() > 4 && spec.substr(spec.size() - 4) == ".mtx") return to_csr(read_matrix_market<T>(spec));
  return cli::generated_matrix<T>(spec);
}

}  // namespace la::bench
