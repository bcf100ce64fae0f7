// CG on several GPUs (distributed.hpp): cg_distributed, the Krylov skeleton's loop over the
// backend of detail/dist_backend.cuh (the distributed matrix, its halo exchange and
// all-gathers, the plain and graph paths). Built only with NCCL (team.cu holds the stand-in).
#include <la/solvers/distributed/distributed.hpp>

#if LA_HAVE_NCCL
#include <la/solvers/distributed/detail/backend.cuh>

namespace la {

template <typename T>
solve_result cg_distributed(dist_comm& comm, const dist_matrix<T>& a, const device_vector<T>& b, device_vector<T>& x,
                            const cg_options& opt, const dist_cg_options& dopt, dist_timing* timing) {
  detail::device_guard guard(comm.ctx().device());
  cg_options o = opt;
  if (!entry_of(o.precond).several_gpus) {  // every rank refuses alike, before any collective
    std::string taken;
    for (const preconditioner_entry& e : preconditioners())
      if (e.several_gpus && e.form == precond_form::apart && e.kind != preconditioner::automatic)
        taken += (taken.empty() ? "" : ", ") + std::string(e.name);
    solve_result refused;
    refused.method = "gpus";
    refused.message = std::string(to_string(o.precond)) +
                      " on several GPUs is not built (its setup works on one GPU's whole matrix): use "
                      "{precond} auto or one built on each GPU's diagonal block (" + taken + "), or solve on one GPU";
    return refused;
  }
  // auto on several GPUs: FSAI on each GPU's diagonal block, which exists for every SPD block
  // (select_preconditioner's AMG is built for one GPU's whole matrix).
  if (o.precond == preconditioner::automatic) o.precond = preconditioner::fsai;
  detail::dist_backend<T> be(comm, a, o.precond, o.precond_opt, o.record_history, dopt);
  solve_result r = cg(be, b, x, o);
  if (opt.precond == preconditioner::automatic && r.precond.kind == preconditioner::fsai)
    r.precond.detail = "auto: fsai on several GPUs; " + r.precond.detail;
  r.method = be.method();
  if (timing) timing->exchange_seconds = be.time_exchange(50), timing->sweep_tile = be.sweep_tile();
  return r;
}

#define LA_DIST_INSTANTIATE(T)                                                                                     \
  template solve_result cg_distributed(dist_comm&, const dist_matrix<T>&, const device_vector<T>&, device_vector<T>&, \
                                       const cg_options&, const dist_cg_options&, dist_timing*);
LA_DIST_INSTANTIATE(float)
LA_DIST_INSTANTIATE(double)
#undef LA_DIST_INSTANTIATE

}  // namespace la
#endif  // LA_HAVE_NCCL
