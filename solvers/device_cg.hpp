// Conjugate gradients on the GPU: the loop of cg.hpp over a device backend whose scalars
// live in device memory.
//
// An iteration is two steps (cg.hpp), the residual step and then the direction step. The
// residual step updates r, fused with the r'r and r'z dots and the Jacobi scaling. The
// direction step is one kernel for the registry variants with a row walk
// (spmv_variant::walk, kernels/spmv/walks.cuh): it settles x += alpha p, and its SpMV
// gathers the new direction z + beta p on the fly while each row's thread stores it, fused
// with the p'Ap dot; for the others (walk none) it is an update kernel, the registry SpMV
// and a dot. An iteration moves the matrix once plus 9 n values (11 n with Jacobi).
// The other preconditioners (device_precond.hpp) apply between the residual step's kernels,
// except FSAI, whose two products are fused into the residual step (G's walk gathers the
// updated residual) and, in double with 32-bit offsets, run inside the persistent kernel.
//
// Paths (device_cg_options::path):
//   plain       the steps launched one by one, in chunks of k iterations between reads
//   graph       a chunk of iterations captured once into a CUDA graph and replayed
//   persistent  one cooperative kernel runs many iterations with grid-wide barriers and no
//               launches at all (the variants with a row walk)
//   automatic   persistent for the variants with a row walk, else graph: persistent was
//               faster than graph at every size tried, so the size does not change the
//               choice (bench/history/tuning-notes-the-code-cites.md, note T10). With block-Jacobi, IC(0) or
//               ILU(0), graph; with FSAI, persistent in double with 32-bit offsets, else
//               graph.
//
// Determinism: every dot is a two-level reduction in a fixed order (block partials in
// double, then one block sums them: the last block to finish on the plain and graph paths,
// every block redundantly on the persistent path), and no step uses atomics on values, so
// a solve gives bit-identical iterates run to run on every path. What it costs: a block
// cannot add its partial into one global sum as it finishes; it writes the partial and the
// last block reads them all (a few kilobytes of L2 per dot, a few hundred nanoseconds).
// A variant with atomics (spmv_variant::deterministic false) leaves the dots deterministic
// but not q; the solver says so in solve_result::method.
#pragma once

#include <optional>

#include <la/kernels/spmv/select.hpp>
#include <la/solvers/cg.hpp>

namespace la {

enum class cg_path { automatic, plain, graph, persistent };
const char* to_string(cg_path p) noexcept;

struct device_cg_options {
  cg_path path = cg_path::automatic;
  /// Format and kernel of the SpMV; empty: select_spmv on the matrix's row statistics.
  std::optional<spmv_choice> choice;
};

/// Solves A x = b on ctx's device. x holds the initial guess on entry (empty: zeros) and
/// the solution on exit. Non-convergence is a status; CUDA failures throw la::cuda_error.
template <typename T, typename O>
solve_result cg_device(context& ctx, const device_csr<T, O>& a, const device_vector<T>& b, device_vector<T>& x,
                       const cg_options& opt = {}, const device_cg_options& dopt = {});

/// The format and kernel the GPU solver uses for `fmt`: "auto", the measured rule
/// (select_spmv); a format name, select_spmv(s, format). la::invalid_argument for an
/// unknown name.
spmv_choice cg_choice_for(const std::string& fmt, const spmv_stats& s);

}  // namespace la
