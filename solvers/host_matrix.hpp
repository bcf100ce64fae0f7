// A in whichever host format the caller holds it, as one type: what a method's registry entry
// takes on the host (registry.hpp's method_solvers), so that one function pointer serves every
// format. la's Krylov methods run on the format itself (host_matrix_ref::visit); a method that
// works on CSR reads csr(), converted once and kept.
//
// Thread safety: a reference is used by one solve at a time (csr() fills a cache).
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>
#include <variant>

#include <la/formats/convert.hpp>
#include <la/types.hpp>

namespace la {

template <typename T>
class host_matrix_ref {
 public:
  using value_type = T;
  using csr_type = csr_matrix<T, count_t>;

  /// Refers to `a` (which must outlive the reference): any host format of la's.
  template <typename Matrix, typename = std::enable_if_t<std::is_same_v<typename Matrix::value_type, T>>>
  explicit host_matrix_ref(const Matrix& a) : m_(&a) {}

  /// f(A) on A's own type.
  template <typename F>
  decltype(auto) visit(F&& f) const {
    return std::visit([&](const auto* p) -> decltype(auto) { return f(*p); }, m_);
  }
  index_t rows() const {
    return visit([](const auto& a) { return a.rows(); });
  }
  index_t cols() const {
    return visit([](const auto& a) { return a.cols(); });
  }
  /// A as CSR with 64-bit offsets: A itself where it is that, else converted once and kept.
  const csr_type& csr() const {
    if (const auto* p = std::get_if<const csr_type*>(&m_)) return **p;
    if (!csr_) csr_.emplace(visit([](const auto& a) { return to_csr<count_t>(a); }));
    return *csr_;
  }

 private:
  std::variant<const csr_matrix<T, std::int32_t>*, const csr_matrix<T, std::int64_t>*, const csc_matrix<T, std::int32_t>*,
               const csc_matrix<T, std::int64_t>*, const coo_matrix<T>*, const ell_matrix<T>*,
               const jds_matrix<T, std::int32_t>*, const jds_matrix<T, std::int64_t>*, const hyb_matrix<T>*,
               const sell_matrix<T, std::int32_t>*, const sell_matrix<T, std::int64_t>*, const dense_matrix<T>*>
      m_;
  mutable std::optional<csr_type> csr_;
};

}  // namespace la
