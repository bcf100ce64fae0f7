// What the GPU backends of BiCGSTAB and GMRES share (krylov.hpp's Backend contract, less the
// method's steps): the operator, the checks, M^-1 (Jacobi by a non-zero diagonal, the others
// from device_precond.hpp), scale-safe norms, the true residual, the control block's read-back
// and the history ring. Private to solvers/krylov/bicgstab_device.cu and gmres_device.cu.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <la/kernels/spmv/select.hpp>
#include <la/solvers/device_cg.hpp>
#include <la/solvers/device_precond.hpp>
#include <la/solvers/krylov.hpp>
#include <la/solvers/method.hpp>
#include <la/solvers/precond.hpp>
#include <la/solvers/detail/backend_util.cuh>
#include <la/solvers/detail/cg_kernels.cuh>
#include <la/solvers/detail/vector_kernels.cuh>

namespace la::cg_detail {

/// 1 / A(i,i), with a zero or missing diagonal entry taken as 1 (as PETSc's PCJACOBI), and
/// how many were.
template <typename T, typename O>
__global__ void inverse_diagonal_nonzero(csr_view<const T, O> a, T* inv_d, unsigned long long* zeros) {
  LA_GRID_STRIDE(i, a.rows) {
    T v = T(0);
    for (O k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (a.col_idx[k] == i) v = a.values[k];
    inv_d[i] = v != T(0) ? T(1) / v : T(1);
    if (v == T(0)) atomicAdd(zeros, 1ull);
  }
}

template <typename T>
class krylov_device_base {
 public:
  using value_type = T;
  using vector = device_vector<T>;
  static constexpr std::int64_t largest_chunk = 4096;
  static constexpr std::int64_t history_cap = 2 * largest_chunk + 1024;  // a chunk may round up to a GMRES cycle

  template <typename O>
  krylov_device_base(context& ctx, const spmv_operator<T>& op, const device_csr<T, O>& a, preconditioner pc,
                     const precond_options& popt, bool history)
      : ctx_(ctx), op_(op), pc_(pc), form_(form_of(pc)), n_(op.matrix().rows), s_(ctx.stream()), a_values_(a.values().data()),
        a_nnz_(a.nnz()) {
    vector_blocks_ = blocks_for(n_, ctx.sm_count());
    scalars_ = ctx.allocate<double>(2);
    flags_ = ctx.allocate<unsigned long long>(4);
    tickets_ = ctx.allocate<unsigned>(4);
    LA_CUDA_TRY(cudaMemsetAsync(tickets_.data(), 0, 4 * sizeof(unsigned), s_));
    partials_ = ctx.allocate<double>(4 * static_cast<std::size_t>(vector_blocks_));
    if (history) history_ = ctx.allocate<double>(history_cap);
    LA_CUDA_TRY(cudaMallocHost(&host_control_, sizeof(cg_control)));
    locate_ = [this, &a](unsigned long long k) { return locate(a, k); };
    prepare_ = [this, &a, popt] { return prepare(a, popt); };
  }
  ~krylov_device_base() {
    if (graph_) LA_CUDA_TRY_NO_THROW(cudaGraphExecDestroy(graph_));
    if (host_control_) LA_CUDA_TRY_NO_THROW(cudaFreeHost(host_control_));
  }
  krylov_device_base(const krylov_device_base&) = delete;
  krylov_device_base& operator=(const krylov_device_base&) = delete;

  index_t size() const { return n_; }
  std::string check_input(const vector& b, const vector& x) const { return size_mismatch(b.size(), x.size(), n_); }
  /// Where A, b or x holds NaN/Inf: A's as A(i,j), b's and x's by entry.
  std::string check_values(const vector& b, const vector& x) {
    const auto at = first_non_finite_of(ctx_, a_values_, static_cast<long long>(a_nnz_), b.data(), x.data(), n_,
                                        flags_.data());
    if (at[0] != ~0ull) return "matrix holds a non-finite value at " + locate_(at[0]);
    if (at[1] != ~0ull) return "right-hand side holds a non-finite value at entry " + std::to_string(at[1] + 1) + " (1-based)";
    if (at[2] != ~0ull) return "initial guess holds a non-finite value at entry " + std::to_string(at[2] + 1) + " (1-based)";
    return {};
  }
  std::string check_preconditioner() { return prepare_(); }
  precond_report describe_preconditioner() const { return rep_; }

  double nrm2(const vector& v) { return norm(v.data()); }
  void set_zero(vector& x) { LA_CUDA_TRY(cudaMemsetAsync(x.data(), 0, x.size() * sizeof(T), s_)); }
  void scale(vector& x, double s) { scale_async(ctx_, x.data(), n_, s, vector_blocks_); }
  vector scaled_copy(const vector& b, double s) { return scaled_copy_async(ctx_, b.data(), n_, s, vector_blocks_); }
  void history(std::int64_t first, std::int64_t last, std::vector<double>& out) {
    read_history_async(history_.data(), history_cap, first, last, out, s_);
    ctx_.synchronize();
  }
  double residual_norm(const vector& b, const vector& x) {
    if (!scratch_.data()) scratch_ = ctx_.allocate<T>(static_cast<std::size_t>(n_));
    residual(b.data(), x.data(), scratch_.data());
    return norm(scratch_.data());
  }

 protected:
  /// Reads the control block (its leading cg_control) back.
  const cg_control& read_control(const void* control) {
    LA_CUDA_TRY(cudaMemcpyAsync(host_control_, control, sizeof(cg_control), cudaMemcpyDeviceToHost, s_));
    ctx_.synchronize();
    return *host_control_;
  }
  void residual(const T* b, const T* x, T* out) {
    LA_CUDA_TRY(cudaMemcpyAsync(out, b, static_cast<std::size_t>(n_) * sizeof(T), cudaMemcpyDeviceToDevice, s_));
    op_.apply(x, out, T(-1), T(1), s_);
  }
  double norm(const T* v) {
    return safe_nrm2(v, n_, vector_blocks_, scalars_.data(), partials_.data(), tickets_.data() + 3, s_);
  }
  const T* inv_d() const { return form_ == precond_form::diagonal ? inv_d_.data() : nullptr; }
  double* history_ptr() { return history_.empty() ? nullptr : history_.data(); }

  context& ctx_;
  const spmv_operator<T>& op_;
  preconditioner pc_;
  precond_form form_;  // how pc_ is applied (its registry entry's)
  index_t n_;
  cudaStream_t s_;
  const T* a_values_;
  count_t a_nnz_;
  unsigned vector_blocks_ = 1;
  std::optional<device_preconditioner<T>> pre_;
  precond_report rep_;
  device_buffer<T> inv_d_, scratch_;
  device_buffer<double> scalars_, partials_, history_;
  device_buffer<unsigned long long> flags_;
  device_buffer<unsigned> tickets_;
  cg_limits lim_;
  cg_control* host_control_ = nullptr;
  cudaGraphExec_t graph_ = nullptr;
  const T* graph_x_ = nullptr;

 private:
  /// "A(i,j)" of stored entry k (an error path: one copy of the row pointers).
  template <typename O>
  std::string locate(const device_csr<T, O>& a, unsigned long long k) {
    std::vector<O> rp(static_cast<std::size_t>(a.rows()) + 1);
    LA_CUDA_TRY(cudaMemcpyAsync(rp.data(), a.row_ptr().data(), rp.size() * sizeof(O), cudaMemcpyDeviceToHost, s_));
    index_t col = 0;
    LA_CUDA_TRY(cudaMemcpyAsync(&col, a.col_idx().data() + k, sizeof col, cudaMemcpyDeviceToHost, s_));
    ctx_.synchronize();
    const auto row = std::upper_bound(rp.begin(), rp.end(), static_cast<O>(k)) - rp.begin() - 1;
    return "A(" + std::to_string(row + 1) + "," + std::to_string(col + 1) + ")";
  }
  template <typename O>
  std::string prepare(const device_csr<T, O>& m, const precond_options& popt) {
    rep_.kind = pc_;
    if (built_apart(pc_)) {
      if (std::string why = emplace_preconditioner(pre_, ctx_, m, pc_, popt); !why.empty()) return why;
      rep_ = pre_->report();
      return {};
    }
    if (form_ != precond_form::diagonal || n_ == 0) return {};
    const auto t0 = std::chrono::steady_clock::now();
    inv_d_ = ctx_.allocate<T>(static_cast<std::size_t>(n_));
    rep_.bytes = double(n_) * sizeof(T);
    LA_CUDA_TRY(cudaMemsetAsync(flags_.data() + 3, 0, sizeof(unsigned long long), s_));
    inverse_diagonal_nonzero<<<vector_blocks_, block_threads, 0, s_>>>(m.view(), inv_d_.data(), flags_.data() + 3);
    LA_CHECK_LAUNCH(s_);
    unsigned long long zeros = 0;
    LA_CUDA_TRY(cudaMemcpyAsync(&zeros, flags_.data() + 3, sizeof(zeros), cudaMemcpyDeviceToHost, s_));
    ctx_.synchronize();
    rep_.setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (zeros > 0) rep_.detail = detail::jacobi_zero_note(static_cast<long long>(zeros));
    return {};
  }

  std::function<std::string(unsigned long long)> locate_;
  std::function<std::string()> prepare_;
};

/// What bicgstab_device and gmres_device share around their backends: the refusals (a matrix
/// that is not square, `refusal` when the caller has one, an SPD-only preconditioner, the
/// persistent path), x = 0 when it is empty, the SpMV operator, the skeleton's loop, and the
/// result's method line and setup time. make(op, graph) builds the method's backend; `title`
/// names the method in messages ("GMRES"), `name` heads the method line ("gmres(30)").
template <typename T, typename O, typename Make>
solve_result run_device_method(context& ctx, const device_csr<T, O>& a, const device_vector<T>& b,
                               device_vector<T>& x, cg_options opt, const device_cg_options& dopt,
                               krylov_method method, const std::string& title, const std::string& name,
                               const std::string& refusal, Make&& make) {
  const auto t0 = std::chrono::steady_clock::now();
  solve_result early;
  early.method = std::string(to_string(method)) + ", gpu";
  early.solver = method;
  if (a.rows() != a.cols())
    early.message = "matrix is " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) + "; " + title +
                    " needs a square matrix";
  else if (!refusal.empty())
    early.message = refusal;
  else
    early.message = precond_for_method(opt.precond, method, opt);
  if (!early.message.empty()) return early;
  if (x.size() == 0 && a.rows() > 0) {
    x = device_vector<T>(ctx, a.rows());
    LA_CUDA_TRY(cudaMemsetAsync(x.data(), 0, x.size() * sizeof(T), ctx.stream()));
  }
  if (dopt.path == cg_path::persistent)
    throw not_supported(title + " runs on the graph or plain path; the persistent path is CG's");
  const spmv_operator<T> op(ctx, a, dopt.choice ? *dopt.choice : select_spmv(row_stats(ctx, a)));
  // A preconditioner that is an inner solve cannot be captured: the plain path then.
  const bool graph = dopt.path != cg_path::plain && entry_of(opt.precond).capturable;
  auto be = make(op, graph);
  opt.method = method;
  solve_result r = krylov_solve(be, b, x, opt);
  r.solver = method;
  r.method = name + ", gpu " + ctx.properties().name + ", " + to_string(op.choice().fmt) + "/" + op.choice().kernel +
             ", " + (graph ? "graph" : "plain") + " path";
  r.setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - r.iterate_seconds;
  return r;
}

}  // namespace la::cg_detail
