// The GPU CG solver's entry point: the choice of kernel and path, the device backend
// (detail/device_backend.cuh) driven by the loop of cg.hpp. See device_cg.hpp for the
// design. The solver reaches the kernels through the registry (spmv.hpp, select.hpp) and
// the row walks (walks.cuh); its own kernels are in detail/.
#include <chrono>
#include <string>

#include <la/error.hpp>
#include <la/solvers/device_cg.hpp>
#include <la/solvers/cg/detail/backend.cuh>
#include <la/detail/instantiate.hpp>

namespace la {

const char* to_string(cg_path p) noexcept {
  switch (p) {
    case cg_path::automatic: return "auto";
    case cg_path::plain: return "plain";
    case cg_path::graph: return "graph";
    case cg_path::persistent: return "persistent";
  }
  return "unknown";
}

spmv_choice cg_choice_for(const std::string& fmt, const spmv_stats& s) {
  if (fmt == "auto") return select_spmv(s);
  const std::optional<format> f = parse_format(fmt);
  if (!f) throw invalid_argument("unknown format '" + fmt + "' (auto, " + format_names() + ")");
  return select_spmv(s, *f);
}

template <typename T, typename O>
solve_result cg_device(context& ctx, const device_csr<T, O>& a, const device_vector<T>& b, device_vector<T>& x,
                       const cg_options& opt_in, const device_cg_options& dopt) {
  using namespace cg_detail;
  const auto t0 = std::chrono::steady_clock::now();
  solve_result early;
  early.method = "gpu";
  if (a.rows() != a.cols()) {
    early.message = "matrix is " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) + "; CG needs a square matrix";
    return early;
  }
  if (x.size() == 0 && a.rows() > 0) {
    x = device_vector<T>(ctx, a.rows());
    LA_CUDA_TRY(cudaMemsetAsync(x.data(), 0, x.size() * sizeof(T), ctx.stream()));
  }
  const spmv_stats stats = row_stats(ctx, a);
  std::optional<spmv_operator<T>> op;
  op.emplace(ctx, a, dopt.choice ? *dopt.choice : select_spmv(stats));

  cg_options opt = opt_in;
  if (opt.precond == preconditioner::automatic) opt.precond = select_preconditioner(a.rows(), a.nnz());
  cg_path path = dopt.path;
  std::string why_path = "forced";
  const bool general = built_apart(opt.precond);
  if (path == cg_path::automatic && general) {
    if (device_backend<T>::fsai_persistent(opt.precond, sizeof(O) == 8))
      path = cg_path::persistent, why_path = "FSAI's two products run inside the persistent kernel";
    else
      path = cg_path::graph, why_path = std::string("the ") + to_string(opt.precond) + " preconditioner runs between kernels";
  } else if (path == cg_path::automatic) {
    const bool fusable = with_fused_walk(op->matrix(), op->variant().walk, [](auto) {});
    if (fusable) path = cg_path::persistent, why_path = "the kernel has a fused form";
    else path = cg_path::graph, why_path = "the kernel has no fused form";
  }
  // Inside one kernel the grid is only what is resident, so a thread per short row beats a
  // group of lanes per row (bench/history/tuning-notes-the-code-cites.md, note T9).
  if (path == cg_path::persistent && !dopt.choice && op->variant().walk == row_walk::group && stats.mean <= 16) {
    spmv_choice choice = op->choice();
    choice.kernel = std::string(find_spmv<T>(choice.fmt, row_walk::thread).name);
    choice.why += "; a thread per row on the persistent path";
    op.emplace(ctx, a, choice);
  }
  const spmv_choice& choice = op->choice();
  device_backend<T> be(ctx, *op, a, opt.precond, opt.precond_opt, path, opt.record_history);
  solve_result r = cg(be, b, x, opt);
  r.method = std::string("gpu ") + ctx.properties().name + ", " + to_string(choice.fmt) + "/" + choice.kernel +
             (be.fused() ? " fused with p'Ap" : " then p'Ap") + ", " + to_string(path) + " path (" + why_path + ")" +
             (op->variant().deterministic ? "" : "; the SpMV uses atomics, so runs are not bit-identical");
  // Setup is everything outside the loop: statistics, conversion, workspace, checks.
  r.setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - r.iterate_seconds;
  return r;
}

#define LA_INSTANTIATE(T, O)                                                                                 \
  template solve_result cg_device<T, O>(context&, const device_csr<T, O>&, const device_vector<T>&,         \
                                        device_vector<T>&, const cg_options&, const device_cg_options&);
LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE)
#undef LA_INSTANTIATE

}  // namespace la
