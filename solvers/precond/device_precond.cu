// The GPU preconditioners of device_precond.hpp: the registry entry's device builder
// (registry.hpp; la's families in solvers/precond/ and solvers/amg/) and the public interface.
#include <chrono>
#include <string>

#include <la/detail/instantiate.hpp>
#include <la/solvers/registry.hpp>
#include <la/solvers/detail/precond_device.cuh>

namespace la {

template <typename T>
template <typename O>
device_preconditioner<T>::device_preconditioner(context& ctx, const device_csr<T, O>& a, preconditioner kind,
                                                const precond_options& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  LA_EXPECTS(a.rows() == a.cols(), "preconditioner: the matrix is " + std::to_string(a.rows()) + " x " +
                                       std::to_string(a.cols()) + "; it must be square");
  if (kind == preconditioner::automatic) kind = select_preconditioner(a.rows(), a.nnz());
  const preconditioner_entry& e = entry_of(kind);
  const device_builder<T, O> build = e.device.get<T, O>();
  if (e.form != precond_form::apart || !build)
    throw invalid_argument(std::string("device_preconditioner: ") + to_string(kind) +
                           " is not built apart (none and jacobi are the solver's own)");
  impl_ = build(ctx, a, opt);
  impl_->rep.kind = kind;
  ctx.synchronize();
  impl_->rep.setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <typename T>
device_preconditioner<T>::~device_preconditioner() = default;
template <typename T>
device_preconditioner<T>::device_preconditioner(const device_preconditioner&) = default;
template <typename T>
device_preconditioner<T>& device_preconditioner<T>::operator=(const device_preconditioner&) = default;
template <typename T>
device_preconditioner<T>::device_preconditioner(device_preconditioner&&) noexcept = default;
template <typename T>
device_preconditioner<T>& device_preconditioner<T>::operator=(device_preconditioner&&) noexcept = default;

template <typename T>
template <typename O>
void device_preconditioner<T>::update_values(const device_csr<T, O>& a) {
  if (!entry_of(impl_->rep.kind).values_only_resetup || !precond_detail::update_amg(*impl_, a))
    throw not_supported(std::string("update_values: ") + to_string(impl_->rep.kind) +
                        " keeps no setup to reuse; build the preconditioner again (only amg reruns its numeric phases)");
}

template <typename T>
void device_preconditioner<T>::apply(const T* r, T* z, cudaStream_t s) const {
  impl_->apply(r, z, s);
}
template <typename T>
const precond_report& device_preconditioner<T>::report() const {
  return impl_->rep;
}
template <typename T>
bool device_preconditioner<T>::factors(matrix_view<T>& g, matrix_view<T>& gt) const {
  return impl_->factors(g, gt);
}

template class device_preconditioner<float>;
template class device_preconditioner<double>;
#define LA_INSTANTIATE(T, O)                                                                               \
  template device_preconditioner<T>::device_preconditioner(context&, const device_csr<T, O>&, preconditioner, \
                                                           const precond_options&);                         \
  template void device_preconditioner<T>::update_values(const device_csr<T, O>&);
LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE)
#undef LA_INSTANTIATE

}  // namespace la
