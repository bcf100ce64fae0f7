// A complex system solved as `la solve` and Python's la.solve do (issue 69): the method chosen
// from A's values (choose_complex), then the direct method or a Krylov method on the GPU or the
// host (solve_complex), auto's direct-first rule falling back to the Krylov method where the
// direct one misses.
//
//   auto      Hermitian values with a positive real diagonal: CG with the Hermitian inner
//             product; else, at most cg_options::auto_direct_rows rows (on the GPU also at most
//             complex_dense_rows, its dense LU's limit) and complex<double>: the direct method
//             first, then COCG (complex symmetric values) or GMRES (neither) where it misses;
//             larger: COCG or GMRES
//   direct    the host's sparse LU, or the GPU's dense LU (complex<double>)
//   cg, cocg, bicgstab, gmres: that method
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <la/solvers/complex_direct.hpp>
#include <la/solvers/complex_krylov.hpp>
#include <la/solvers/matrix_properties.hpp>

namespace la {

struct complex_choice {
  bool direct = false;    // the direct method (first, under auto)
  bool fallback = false;  // auto: the Krylov method where the direct one misses
  complex_method krylov = complex_method::gmres;
  std::string why;        // for a person; options in {name} form (the CLI's and Python's words)
};

inline const char* complex_method_names() { return "auto, direct, cg, cocg, bicgstab or gmres"; }

/// The method for `method` (auto, direct, cg, cocg, bicgstab, gmres) on a complex A with these
/// properties; direct_ok: the values are complex<double> (the direct method's type). An
/// unknown name, or direct where it does not apply, is la::invalid_argument.
inline complex_choice choose_complex(const std::string& method, const matrix_properties& p, index_t rows,
                                     const cg_options& o, bool gpu, bool direct_ok) {
  complex_choice c;
  c.krylov = p.looks_spd() ? complex_method::cg : p.symmetric() ? complex_method::cocg : complex_method::gmres;
  if (method == "direct") {
    if (!direct_ok)
      throw invalid_argument("{method} direct: the direct method takes complex double values (complex128 in Python); "
                             "this system is complex float");
    if (gpu && rows > complex_dense_rows)
      throw invalid_argument("{method} direct on the GPU factors A's dense form, at most " + std::to_string(complex_dense_rows) +
                             " rows; A has " + std::to_string(rows) + ": use {device} cpu (the host's sparse LU)");
    return c.direct = true, c.why = "asked for", c;
  }
  if (method == "cg") return c.krylov = complex_method::cg, c.why = "asked for", c;
  if (method == "cocg") return c.krylov = complex_method::cocg, c.why = "asked for", c;
  if (method == "bicgstab") return c.krylov = complex_method::bicgstab, c.why = "asked for", c;
  if (method == "gmres") return c.krylov = complex_method::gmres, c.why = "asked for", c;
  if (method != "auto")
    throw invalid_argument("{method} " + method + ": complex systems take " + complex_method_names() +
                           " (cg for Hermitian positive definite, cocg for complex symmetric)");
  const std::string krylov = c.krylov == complex_method::cg     ? "CG with the Hermitian inner product"
                             : c.krylov == complex_method::cocg ? "COCG"
                                                                : "GMRES";
  const std::int64_t limit = gpu ? std::min<std::int64_t>(o.auto_direct_rows, complex_dense_rows) : o.auto_direct_rows;
  if (direct_ok && c.krylov != complex_method::cg && rows <= limit) {
    c.direct = c.fallback = true;
    c.why = "auto: " + describe(p) + " and at most " + std::to_string(limit) +
            (gpu && limit < o.auto_direct_rows ? " rows (the GPU's dense complex LU)" : " rows ({auto-direct-rows})") +
            ", so the direct method first, " + krylov + " where it misses";
    return c;
  }
  c.why = "auto: " + describe(p) + ", so " + krylov;
  return c;
}

/// Runs the choice on ctx's GPU (ctx non-null) or the host; x: the Krylov methods' initial
/// guess (empty: zero; the direct method ignores it), and the solution. note (optional) receives a line
/// where auto's direct method missed and the Krylov method took over. The result's
/// solver_choice is c.why.
/// A complex system set up once and solved for many right-hand sides (the C++ form of what
/// `la solve --rhs` with several columns does for real systems): the method chosen once
/// (choose_complex), the direct method's factors kept (complex_direct: the host's sparse LU or
/// the GPU's dense LU), each solve checked; auto's fallback runs the Krylov method where a
/// factorization or a solve misses. The Krylov methods build their preconditioner (Jacobi,
/// ILU(0), IC(0)) and the GPU's SpMV format per solve. A must outlive the solver.
///
///   la::complex_solver<std::complex<double>, int> s(&ctx, a);   // or nullptr: the host
///   for (auto& b : rhs) s.solve(b, x);
template <typename T, typename O>
class complex_solver {
 public:
  /// The method by name (auto, direct, cg, cocg, bicgstab, gmres), chosen by choose_complex.
  complex_solver(context* ctx, const csr_matrix<T, O>& a, const std::string& method = "auto", const cg_options& o = {})
      : complex_solver(ctx, a, choose_complex(method, properties_of(a), a.rows(), o, ctx != nullptr,
                                              std::is_same_v<T, std::complex<double>>),
                       o) {}
  /// A choice made already (choose_complex's).
  complex_solver(context* ctx, const csr_matrix<T, O>& a, complex_choice c, cg_options o)
      : ctx_(ctx), a_(&a), o_(std::move(o)), choice_(std::move(c)) {
    if constexpr (std::is_same_v<T, std::complex<double>>) {
      if (choice_.direct) {
        direct_.emplace(ctx, a, o_);
        if (direct_->status() != solve_status::converged && choice_.fallback) {
          note_ = "the direct method could not factor A (" + direct_->message() + "); " + to_string(choice_.krylov) + " instead";
          direct_.reset();
          choice_.direct = choice_.fallback = false;
        }
      }
    }
  }

  /// The method chosen, and why (the CLI's and Python's words in {braces}).
  const complex_choice& choice() const noexcept { return choice_; }
  /// Where auto's direct method gave way to the Krylov method (empty otherwise).
  const std::string& note() const noexcept { return note_; }
  /// Whether the direct method's factors are kept.
  bool factored() const noexcept { return direct_.has_value(); }

  /// Solves A x = b with the kept setup; x: the Krylov methods' initial guess (empty: zero).
  solve_result solve(const std::vector<T>& b, std::vector<T>& x) {
    solve_result r;
    const std::vector<T> x0 = x;
    if constexpr (std::is_same_v<T, std::complex<double>>) {
      if (direct_) {
        r = direct_->solve(b, x);
        if (r.converged() || !choice_.fallback) return r.solver_choice = choice_.why, r;
        note_ = "the direct method missed (" + r.message + "); " + to_string(choice_.krylov) + " instead";
        x = x0;
      }
    }
    r = ctx_ ? solve_complex_device(*ctx_, *a_, b, x, choice_.krylov, o_) : solve_complex_host(*a_, b, x, choice_.krylov, o_);
    r.solver_choice = choice_.why;
    return r;
  }

 private:
  context* ctx_;
  const csr_matrix<T, O>* a_;
  cg_options o_;
  complex_choice choice_;
  std::string note_;
  std::optional<complex_direct<O>> direct_;
};

/// One system by the choice c on ctx's GPU (ctx non-null) or the host (complex_solver's setup
/// and one solve); x: the Krylov methods' initial guess (empty: zero), and the solution. note
/// (optional) receives a line where auto's direct method missed and the Krylov method took
/// over. The result's solver_choice is c.why.
template <typename T, typename O>
solve_result solve_complex(context* ctx, const csr_matrix<T, O>& a, const std::vector<T>& b, std::vector<T>& x,
                           const complex_choice& c, const cg_options& o, std::string* note = nullptr) {
  if constexpr (!std::is_same_v<T, std::complex<double>>)
    if (c.direct) throw invalid_argument("the direct method takes complex double values (complex128)");
  complex_solver<T, O> s(ctx, a, c, o);
  solve_result r = s.solve(b, x);
  if (note) *note = s.note();
  return r;
}

}  // namespace la
