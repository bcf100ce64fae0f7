// The Krylov methods on the GPU: BiCGSTAB (krylov/bicgstab_device.cu), GMRES(m) and flexible GMRES(m)
// (krylov/gmres_device.cu), and solve_device, which takes the method from cg_options the way solve_host
// does (method.hpp) and runs CG through cg_device (device_cg.hpp).
//
// The non-CG methods run their steps as kernels whose scalars stay in a device control
// block (cg_control.hpp's, extended per method), captured into a CUDA graph a chunk at a
// time (GMRES: a whole cycle of m iterations, its update and its restart), and read back once
// per chunk by the skeleton's loop (krylov.hpp). Every sum is a fixed-order two-level
// reduction, so reruns are bit-identical. M^-1: none, Jacobi (fused where the method has an
// elementwise kernel at hand), or ILU(0) between kernels (device_precond.hpp).
#pragma once

#include <optional>

#include <la/kernels/spmv/select.hpp>
#include <la/solvers/device_cg.hpp>
#include <la/solvers/method.hpp>

namespace la {

template <typename T, typename O>
solve_result bicgstab_device(context& ctx, const device_csr<T, O>& a, const device_vector<T>& b, device_vector<T>& x,
                             const cg_options& opt = {}, const device_cg_options& dopt = {});
/// GMRES(opt.restart), or FGMRES with `flexible`.
template <typename T, typename O>
solve_result gmres_device(context& ctx, const device_csr<T, O>& a, const device_vector<T>& b, device_vector<T>& x,
                          const cg_options& opt = {}, const device_cg_options& dopt = {}, bool flexible = false);

/// The matrix's properties (method.hpp) computed on the device: a transpose by the device
/// conversion and a merge of each row with the same row of the transpose.
template <typename T, typename O>
matrix_properties properties_of(context& ctx, const device_csr<T, O>& a);

/// Runs o.method itself on ctx's device (no auto rules: solve_device applies them): la's Krylov
/// methods, the others (direct, methods added at run time) through their entry's GPU solver.
template <typename T, typename O>
solve_result run_device_method(context& ctx, const device_csr<T, O>& a, const device_vector<T>& b, device_vector<T>& x,
                               const cg_options& o, const device_cg_options& dopt);
/// The host analysis of a device A's pattern for auto's SPD direct-first rule (A small: at
/// most auto_direct_spd_nnz nonzeros; downloaded for it).
template <typename T, typename O>
std::shared_ptr<const sparse_analysis> spd_analysis_of(context& ctx, const device_csr<T, O>& a);

/// Thread safety (every function here): calls on different contexts and data may run at once
/// on different threads; a context is used by one thread at a time.
/// Solves A x = b on ctx's device by opt.method (automatic: select_method on the matrix's
/// properties, computed on the device). x holds the initial guess (empty: zeros).
template <typename T, typename O>
solve_result solve_device(context& ctx, const device_csr<T, O>& a, const device_vector<T>& b, device_vector<T>& x,
                          cg_options opt = {}, const device_cg_options& dopt = {});

}  // namespace la
