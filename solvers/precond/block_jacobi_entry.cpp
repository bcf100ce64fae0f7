// Block-Jacobi's registry entry, option and host builder (registry.hpp); the algorithm is
// block_jacobi.hpp (host, the oracle) and block_jacobi.cu (GPU).
#include <algorithm>

#include <la/solvers/precond/block_jacobi.hpp>
#include <la/solvers/detail/precond_builders.hpp>
#include <la/solvers/registry.hpp>

namespace la::registry_detail {
namespace {
/// The blocks' dense inverses, applied block by block in wider_t.
template <typename T>
struct host_block_jacobi final : host_precond_operator<T> {
  std::vector<index_t> starts;
  std::vector<T> inv;
  void apply(const std::vector<T>& r, std::vector<T>& z) const override {
    using W = wider_t<T>;
    std::size_t off = 0;
    for (std::size_t b = 0; b + 1 < starts.size(); ++b) {
      const index_t s0 = starts[b], s = starts[b + 1] - s0;
      for (index_t i = 0; i < s; ++i) {
        W v = 0;
        for (index_t j = 0; j < s; ++j) v += static_cast<W>(inv[off + i * s + j]) * r[s0 + j];
        z[s0 + i] = static_cast<T>(v);
      }
      off += static_cast<std::size_t>(s) * s;
    }
  }
};
template <typename T>
std::unique_ptr<host_precond_operator<T>> build_host(const csr_matrix<T, count_t>& a, const precond_options& opt) {
  auto p = std::make_unique<host_block_jacobi<T>>();
  p->starts = supervariable_blocks(a, opt.max_block);
  p->inv = block_inverses(a, p->starts);
  std::size_t largest = 0;
  for (std::size_t b = 0; b + 1 < p->starts.size(); ++b)
    largest = std::max<std::size_t>(largest, p->starts[b + 1] - p->starts[b]);
  p->rep.detail = std::to_string(p->starts.size() - 1) + " blocks of up to " + std::to_string(largest) + " rows";
  p->rep.bytes = double(p->inv.size()) * sizeof(T) + double(p->starts.size()) * sizeof(index_t);
  return p;
}

constexpr option_spec options[] = {
    {"block-size", option_type::integer, "32", 1, 32, "", "N", "block-jacobi: the largest block, 1 to 32 rows (default 32)",
     {option_scope::on::precond, "block-jacobi", "{precond} block-jacobi"}, {}, "",
     [](cg_options& o, const option_value& v) { o.precond_opt.max_block = static_cast<int>(v.number); }},
};
static_assert(options_are_valid(options));
}  // namespace

option_list block_jacobi_option_list() { return {options, sizeof options / sizeof options[0]}; }

preconditioner_entry block_jacobi_entry() {
  constexpr preconditioner_entry e{"block-jacobi", preconditioner::block_jacobi,
                                   "dense inverses of the diagonal blocks of rows that\n"
                                   "share a pattern (supervariables, up to {block-size})",
                                   false, true, true, false, true, true, false, true,
                                   precond_form::apart, false, "block-Jacobi", "", nullptr,
                                   LA_HOST_BUILDERS(build_host), LA_DEVICE_BUILDERS(precond_detail::make_block_jacobi)};
  static_assert(entry_is_valid(e));
  return e;
}

}  // namespace la::registry_detail
