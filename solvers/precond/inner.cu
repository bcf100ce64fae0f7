// A method as a preconditioner (Ginkgo's solver-as-operator; PETSc's PCKSP): M^-1 r is K
// iterations of any registered Krylov method ({inner-method}: gmres, as GMRES(K), by default;
// bicgstab, cg, fgmres, or one added at run time) on A z = r from z = 0, preconditioned in
// turn by none, Jacobi, ILU(0) or AMG. The inner method is reached through its registry
// entry's solvers, as every solve reaches it. M^-1 changes with r, so only a flexible method
// takes it: FGMRES preconditioned by GMRES, which restarts of GMRES alone cannot match on
// systems whose spectrum a short inner polynomial clusters. The registry entry, its options,
// and its host builder (the oracle) and GPU builder are all here; the inner preconditioner
// is built once, with the outer one, and kept across applications.
#include <algorithm>
#include <string>
#include <vector>

#include <la/solvers/device_solve.hpp>
#include <la/solvers/host_matrix.hpp>
#include <la/solvers/detail/precond_builders.hpp>
#include <la/solvers/detail/precond_device.cuh>
#include <la/solvers/registry.hpp>

namespace la {
namespace {

/// The inner solve's options: the inner method (GMRES as GMRES(K)), K iterations (or fewer,
/// where it meets 1e-12), from zero, with the inner preconditioner already built (`prebuilt`,
/// `host_prebuilt`); CG runs on A whatever its symmetry (the outer method owns that check).
cg_options inner_options(const precond_options& opt) {
  cg_options o;
  o.method = opt.inner_method;
  o.restart = opt.inner_iterations;
  o.max_iterations = opt.inner_iterations;
  o.stagnation_window = 0;
  o.rtol = 1e-12;
  o.force = true;
  o.precond = opt.inner_precond;
  o.precond_opt = opt;
  o.precond_opt.prebuilt.reset();
  o.precond_opt.host_prebuilt.reset();
  return o;
}

std::string describe(const precond_options& opt, const precond_report* inner) {
  const std::string k = std::to_string(opt.inner_iterations);
  const krylov_method m = opt.inner_method;
  const bool restarted = m == krylov_method::gmres || m == krylov_method::fgmres;
  return std::string(to_string(m)) + (restarted ? "(" + k + ")" : std::string()) + ", " + k +
         " iterations an application, preconditioned by " + to_string(opt.inner_precond) +
         (inner && !inner->detail.empty() ? " (" + inner->detail + ")" : "");
}

template <typename T>
struct host_inner final : host_precond_operator<T> {
  csr_matrix<T, count_t> a;
  cg_options o;
  host_method_solver<T> solve = nullptr;  // the inner method's entry's
  std::shared_ptr<host_preconditioner<T>> inner;
  void apply(const std::vector<T>& r, std::vector<T>& z) const override {
    std::fill(z.begin(), z.end(), T(0));  // the inner solve starts from zero, in z itself
    (void)solve(host_matrix_ref<T>(a), r, z, o);  // its status is not M^-1's: K iterations are the operator
  }
};
template <typename T>
std::unique_ptr<host_precond_operator<T>> build_host(const csr_matrix<T, count_t>& a, const precond_options& opt) {
  auto p = std::make_unique<host_inner<T>>();
  p->a = a;
  p->o = inner_options(opt);
  p->solve = entry_of(opt.inner_method).solvers.host<T>();
  if (form_of(opt.inner_precond) == precond_form::apart) {
    p->inner = std::make_shared<host_preconditioner<T>>(p->a, opt.inner_precond, p->o.precond_opt);
    p->o.precond_opt.host_prebuilt = p->inner;
    p->o.precond_opt.prebuilt_value_size = sizeof(T);
  }
  p->rep.detail = describe(opt, p->inner ? &p->inner->report() : nullptr);
  p->rep.bytes = double(a.nnz()) * (sizeof(T) + sizeof(index_t)) + (p->inner ? p->inner->report().bytes : 0);
  return p;
}

template <typename T, typename O>
struct device_inner final : device_precond_operator<T> {
  context* ctx = nullptr;
  const device_csr<T, O>* a = nullptr;
  cg_options o;
  device_cg_options d;  // the plain path, and the SpMV kernel chosen once at the build
  device_method_solver<T, O> solve = nullptr;  // the inner method's entry's
  std::shared_ptr<device_preconditioner<T>> inner;
  void apply(const T* r, T* z, cudaStream_t s) const override {
    const index_t n = a->rows();
    if (s != ctx->stream()) LA_CUDA_TRY(cudaStreamSynchronize(s));  // r is ready for the inner solve's stream
    const device_vector<T> b(device_buffer<T>::borrow(const_cast<T*>(r), static_cast<std::size_t>(n), ctx->device()));
    device_vector<T> x(device_buffer<T>::borrow(z, static_cast<std::size_t>(n), ctx->device()));
    LA_CUDA_TRY(cudaMemsetAsync(z, 0, sizeof(T) * static_cast<std::size_t>(n), ctx->stream()));
    (void)solve(*ctx, *a, b, x, o, d);
    if (s != ctx->stream()) ctx->synchronize();
  }
};
}  // namespace

namespace precond_detail {
template <typename T, typename O>
impl_ptr<T> make_inner(context& ctx, const device_csr<T, O>& a, const precond_options& opt) {
  auto p = std::make_unique<device_inner<T, O>>();
  p->ctx = &ctx;
  p->a = &a;
  p->o = inner_options(opt);
  p->solve = entry_of(opt.inner_method).solvers.device<T, O>();
  p->d.path = cg_path::plain;
  p->d.choice = select_spmv(row_stats(ctx, a));  // once: each application would read A's rows again
  if (form_of(opt.inner_precond) == precond_form::apart) {
    p->inner = std::make_shared<device_preconditioner<T>>(ctx, a, opt.inner_precond, p->o.precond_opt);
    p->o.precond_opt.prebuilt = p->inner;
    p->o.precond_opt.prebuilt_value_size = sizeof(T);
  }
  p->rep.detail = describe(opt, p->inner ? &p->inner->report() : nullptr);
  p->rep.bytes = p->inner ? p->inner->report().bytes : 0;
  return p;
}
#define LA_INSTANTIATE(T, O) template impl_ptr<T> make_inner<T, O>(context&, const device_csr<T, O>&, const precond_options&);
LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE)
#undef LA_INSTANTIATE
}  // namespace precond_detail

namespace registry_detail {
namespace {
using on = option_scope::on;
constexpr option_scope inner_only{on::precond, "inner", "{precond} inner"};
constexpr option_spec options[] = {
    {"inner-method", option_type::choice, "gmres", 0, 0, "", "M",
     "inner as M^-1: the method of the inner solve (default gmres, as\n"
     "GMRES(K); bicgstab, cg, fgmres or one added at run time)",
     inner_only, {}, "", [](cg_options& o, const option_value& v) { o.precond_opt.inner_method = find_method(v.text)->kind; },
     option_spec::names::methods},
    {"inner-iterations", option_type::integer, "10", 1, 200, "", "K",
     "inner as M^-1: the inner method's iterations an application\n"
     "(default 10; GMRES's basis size too)",
     inner_only, {}, "", [](cg_options& o, const option_value& v) { o.precond_opt.inner_iterations = static_cast<int>(v.number); }},
    {"inner-precond", option_type::choice, "jacobi", 0, 0, "none|jacobi|ilu0|amg", "P",
     "inner as M^-1: the inner method's preconditioner, built once\n"
     "(default jacobi)",
     inner_only, {}, "",
     [](cg_options& o, const option_value& v) { o.precond_opt.inner_precond = find_preconditioner(v.text)->kind; }},
};
static_assert(options_are_valid(options));

/// M^-1 changes with r: the flexible methods alone take it. The inner method is one with
/// solvers and no setup to keep: auto (a choice, not a method) and direct (which would factor
/// A at every application: use {method} direct) are refused.
std::string refuses(krylov_method m, const cg_options& opt) {
  const krylov_method inner = opt.precond_opt.inner_method;
  if (inner == krylov_method::automatic || inner == krylov_method::direct)
    return std::string("{inner-method} ") + to_string(inner) + " cannot be an inner solve (" +
           (inner == krylov_method::direct ? "it would factor A at every application: use {method} direct"
                                           : "name the method: gmres, bicgstab, cg or fgmres") +
           ")";
  if (m != krylov_method::automatic && entry_of(m).flexible) return {};
  return "{precond} inner (an inner solve) changes between applications, which only a flexible method "
         "takes: use {method} fgmres";
}
}  // namespace

option_list inner_option_list() { return {options, sizeof options / sizeof options[0]}; }

preconditioner_entry inner_entry() {
  constexpr preconditioner_entry e{"inner", preconditioner::inner,
                                   "K iterations of {inner-method} on A z = r,\n"
                                   "themselves preconditioned by {inner-precond}\n"
                                   "(for fgmres: it changes between applications)",
                                   false, false, false, false, false, false, false, true,
                                   precond_form::apart, false, "an inner solve as a preconditioner", "", refuses,
                                   LA_HOST_BUILDERS(build_host), LA_DEVICE_BUILDERS(precond_detail::make_inner),
                                   false};
  static_assert(entry_is_valid(e));
  return e;
}
}  // namespace registry_detail

}  // namespace la
