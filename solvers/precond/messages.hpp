// The words of each way a preconditioner can fail to exist, one place for the host and GPU
// builders of every family (row numbers 0-based in, 1-based out, as in a Matrix Market file).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <la/formats/convert.hpp>
#include <la/formats/csr.hpp>
#include <la/solvers/krylov.hpp>

namespace la {

namespace detail {
// The words of each way a preconditioner can fail to exist, one place for the host and GPU
// builders (row numbers 0-based in, 1-based out, as in a Matrix Market file).
inline std::string bad_diagonal_message(const char* who, long long row) {
  return std::string(who) + ": A(" + std::to_string(row + 1) + "," + std::to_string(row + 1) +
         ") is missing or not positive, so the matrix is not symmetric positive definite";
}
/// Jacobi: a diagonal that is not positive (for CG, which needs an SPD M^-1) or is zero.
inline std::string jacobi_message(long long row, double v, bool spd) {
  const std::string at = "Jacobi preconditioner: diagonal entry A(" + std::to_string(row + 1) + "," +
                         std::to_string(row + 1) + ") = " + std::to_string(v);
  if (spd) return at + " is not positive, so the matrix is not symmetric positive definite";
  return at + " (zero or not stored), so diag(A)^-1 does not exist: use {precond} none, or a method and "
              "preconditioner that do not divide by the diagonal";
}
/// Jacobi for the methods other than CG: how many zero or missing diagonal entries were taken as 1.
inline std::string jacobi_zero_note(long long count) {
  return std::to_string(count) + " zero or missing diagonal entr" + (count == 1 ? "y" : "ies") +
         " taken as 1 (as PETSc's PCJACOBI)";
}
inline std::string block_not_spd_message(long long first, long long end) {
  return "block-jacobi: the diagonal block of rows " + std::to_string(first + 1) + ".." + std::to_string(end) +
         " is not positive definite, so the matrix is not symmetric positive definite";
}
inline std::string ic0_no_shift_message(long long row, double max_shift) {
  return "ic0: a pivot is not positive (row " + std::to_string(row + 1) + ") with every diagonal shift up to " +
         short_number(max_shift) +
         ", so IC(0) does not exist for this matrix in that range (a larger {ic-shift}, or fsai, which exists for "
         "every SPD matrix)";
}
/// ILU(0): a row without a diagonal entry ({matching} permutes one onto it).
inline std::string ilu0_missing_message(long long row) {
  return "ilu0: A(" + std::to_string(row + 1) + "," + std::to_string(row + 1) +
         ") is not stored, so ILU(0) has no pivot there ({matching} on permutes the rows to a zero-free diagonal)";
}
/// ILU(0): a zero or non-finite pivot (row < 0: a non-finite entry of the factors).
inline std::string ilu0_pivot_message(long long row, double v) {
  if (row < 0) return "ilu0: the factors have a non-finite entry, so ILU(0) does not exist for this matrix";
  return "ilu0: the pivot of row " + std::to_string(row + 1) + " is " + std::to_string(v) +
         ", so ILU(0) does not exist for this matrix";
}
}  // namespace detail

}  // namespace la
