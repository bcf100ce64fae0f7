// The GPU builders of the preconditioner families la ships, declared for their registry
// entries (solvers/precond/*_entry.cpp, amg/entry.cpp) and defined beside each family's
// kernels: block_jacobi.cu, fsai.cu, factored.cu (IC(0), ILU(0)), amg/amg.cu. Private.
#pragma once

#include <la/solvers/precond/operator.hpp>

namespace la::precond_detail {

template <typename T, typename O>
std::unique_ptr<device_precond_operator<T>> make_block_jacobi(context&, const device_csr<T, O>&, const precond_options&);
template <typename T, typename O>
std::unique_ptr<device_precond_operator<T>> make_fsai(context&, const device_csr<T, O>&, const precond_options&);
template <typename T, typename O>
std::unique_ptr<device_precond_operator<T>> make_ic0(context&, const device_csr<T, O>&, const precond_options&);
template <typename T, typename O>
std::unique_ptr<device_precond_operator<T>> make_ilu0(context&, const device_csr<T, O>&, const precond_options&);
template <typename T, typename O>
std::unique_ptr<device_precond_operator<T>> make_amg(context&, const device_csr<T, O>&, const precond_options&);

}  // namespace la::precond_detail
