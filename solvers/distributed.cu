// CG on several GPUs (distributed.hpp): the team, the distributed matrix, the kernels of the
// distributed iteration and the backend of cg.hpp's loop. Without NCCL (LA_HAVE_NCCL unset)
// only the parts that need no NCCL are built and the rest throws la::not_supported.
#include <la/solvers/distributed.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <thread>

#if LA_HAVE_NCCL
#include <nccl.h>

#include "detail/backend_util.cuh"
#include "detail/cg_kernels.cuh"
#include "detail/vector_kernels.cuh"
#include "detail/scan_counts.cuh"
#include <la/solvers/device_precond.hpp>
#endif

namespace la {

int visible_gpus() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

void keep_nvlink_multicast_off() noexcept {
  // setenv with overwrite 0 keeps a value the user set (NCCL reads these at its first call).
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  setenv("NVSHMEM_DISABLE_NVLS", "1", 0);
  // Collectives' connections made at initialization, not at a first call (see dist_comm).
  setenv("NCCL_RUNTIME_CONNECT", "0", 0);
}

namespace {
/// A rank that stopped because another rank of its process failed (not the cause).
class team_failure : public device_error {
 public:
  using device_error::device_error;
};
}  // namespace

void run_on_gpus(int gpus, const std::function<void(dist_comm&)>& f) {
  if (!nccl_available()) throw not_supported("several GPUs: " + nccl_status());
  LA_EXPECTS(gpus >= 1, "the number of GPUs must be at least 1, got " + std::to_string(gpus));
  const int have = visible_gpus();
  if (gpus > have)
    throw invalid_argument(std::to_string(gpus) + " GPUs asked for, " + std::to_string(have) +
                           " visible (CUDA_VISIBLE_DEVICES selects which)");
  keep_nvlink_multicast_off();
  const dist_comm::unique_id id = dist_comm::new_id();
  auto failed = std::make_shared<std::atomic<bool>>(false);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(gpus));
  std::vector<bool> secondary(static_cast<std::size_t>(gpus), false);
  std::vector<std::thread> threads;
  for (int r = 0; r < gpus; ++r)
    threads.emplace_back([&, r] {
      try {
        dist_comm c(r, gpus, id, r, failed);
        try {
          f(c);
        } catch (...) {
          c.fail();
          throw;
        }
      } catch (const team_failure&) {
        errors[r] = std::current_exception();
        secondary[r] = true;
        failed->store(true);
      } catch (...) {
        errors[r] = std::current_exception();
        failed->store(true);
      }
    });
  for (auto& t : threads) t.join();
  // The cause first: a rank's own failure, not another's report that the team failed.
  for (int pass = 0; pass < 2; ++pass)
    for (int r = 0; r < gpus; ++r)
      if (errors[r] && secondary[r] == (pass == 1)) std::rethrow_exception(errors[r]);
}

#if !LA_HAVE_NCCL

bool nccl_available() noexcept { return false; }
std::string nccl_status() {
  return "this build of la has no NCCL (cmake found none: set NCCL_ROOT, or install NCCL or the nvidia-nccl "
         "Python wheel, and reconfigure)";
}

struct dist_comm::impl {};
dist_comm::unique_id dist_comm::new_id() { throw not_supported("several GPUs: " + nccl_status()); }
dist_comm::dist_comm(int, int, const unique_id&, int, std::shared_ptr<std::atomic<bool>>) {
  throw not_supported("several GPUs: " + nccl_status());
}
dist_comm::~dist_comm() = default;
int dist_comm::rank() const noexcept { return 0; }
int dist_comm::ranks() const noexcept { return 1; }
context& dist_comm::ctx() noexcept { std::abort(); }
std::vector<std::int64_t> dist_comm::all_gather(const std::vector<std::int64_t>&) { return {}; }
std::string dist_comm::agree(const std::string& why) { return why; }
void dist_comm::wait() {}
void dist_comm::fail() noexcept {}

template <typename T>
struct dist_matrix<T>::impl {};
template <typename T>
template <typename O>
dist_matrix<T>::dist_matrix(dist_comm&, const matrix_part<T, O>&) {
  throw not_supported("several GPUs: " + nccl_status());
}
template <typename T>
dist_matrix<T> dist_matrix<T>::poisson(dist_comm&, int, global_index) {
  throw not_supported("several GPUs: " + nccl_status());
}
template <typename T>
const halo_plan& dist_matrix<T>::plan() const noexcept { std::abort(); }
template <typename T>
global_index dist_matrix<T>::global_rows() const noexcept { return 0; }
template <typename T>
count_t dist_matrix<T>::nnz() const noexcept { return 0; }
template <typename T>
count_t dist_matrix<T>::global_nnz() const noexcept { return 0; }
template <typename T>
bool dist_matrix<T>::wide() const noexcept { return false; }
template <typename T>
index_t dist_matrix<T>::interior_rows() const noexcept { return 0; }
template <typename T>
double dist_matrix<T>::matrix_bytes() const noexcept { return 0; }
template <typename T>
void dist_matrix<T>::download(std::vector<std::int64_t>&, std::vector<index_t>&, std::vector<T>&) const {}
template <typename T>
device_vector<T> dist_row_sums(dist_comm&, const dist_matrix<T>&) {
  throw not_supported("several GPUs: " + nccl_status());
}
template <typename T>
solve_result cg_distributed(dist_comm&, const dist_matrix<T>&, const device_vector<T>&, device_vector<T>&,
                            const cg_options&, const dist_cg_options&, dist_timing*) {
  throw not_supported("several GPUs: " + nccl_status());
}

#else  // LA_HAVE_NCCL

bool nccl_available() noexcept { return true; }
std::string nccl_status() {
  int v = 0;
  ncclGetVersion(&v);
  return "NCCL " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

namespace {
[[noreturn]] void throw_nccl(ncclResult_t r, const char* call, const char* file, int line, ncclComm_t comm) {
  std::string msg = std::string("NCCL failed: ") + ncclGetErrorString(r);
  if (const char* last = comm ? ncclGetLastError(comm) : nullptr; last && *last) msg += " (" + std::string(last) + ")";
  throw device_error(msg, std::string(file) + ":" + std::to_string(line) + ": " + call);
}
}  // namespace
#define LA_NCCL_TRY(call, comm)                                                   \
  do {                                                                            \
    ncclResult_t la_nccl_ = (call);                                               \
    if (la_nccl_ != ncclSuccess) throw_nccl(la_nccl_, #call, __FILE__, __LINE__, comm); \
  } while (0)

// ---- the team --------------------------------------------------------------------------------

struct dist_comm::impl {
  int rank = 0, ranks = 1;
  std::unique_ptr<context> ctx;
  ncclComm_t comm = nullptr;
  std::shared_ptr<std::atomic<bool>> failed;
  cudaStream_t side = nullptr;  // the interior rows' stream
  cudaEvent_t fork = nullptr, join = nullptr;
  bool broken = false;  // aborted, or a rank failed: destroy by abort

  void abort() noexcept {
    if (comm) ncclCommAbort(comm);
    comm = nullptr;
    broken = true;
  }
};

dist_comm::unique_id dist_comm::new_id() {
  ncclUniqueId nid;
  LA_NCCL_TRY(ncclGetUniqueId(&nid), nullptr);
  unique_id id;
  static_assert(sizeof(nid) == sizeof(id.bytes), "NCCL's unique id is 128 bytes");
  std::memcpy(id.bytes.data(), &nid, sizeof nid);
  return id;
}

dist_comm::dist_comm(int rank, int ranks, const unique_id& id, int device, std::shared_ptr<std::atomic<bool>> failed)
    : p_(std::make_unique<impl>()) {
  LA_EXPECTS(ranks >= 1 && rank >= 0 && rank < ranks,
             "rank " + std::to_string(rank) + " of " + std::to_string(ranks) + " is out of range");
  keep_nvlink_multicast_off();
  p_->rank = rank, p_->ranks = ranks, p_->failed = std::move(failed);
  p_->ctx = std::make_unique<context>(device);
  LA_CUDA_TRY(cudaStreamCreateWithFlags(&p_->side, cudaStreamNonBlocking));
  LA_CUDA_TRY(cudaEventCreateWithFlags(&p_->fork, cudaEventDisableTiming));
  LA_CUDA_TRY(cudaEventCreateWithFlags(&p_->join, cudaEventDisableTiming));
  ncclUniqueId nid;
  std::memcpy(&nid, id.bytes.data(), sizeof nid);
  LA_NCCL_TRY(ncclCommInitRank(&p_->comm, ranks, nid, rank), nullptr);
  // Connect every pair now, while every rank is here: NCCL otherwise connects peers at
  // their first send or collective, inside the host call, where a rank waiting for a peer
  // that failed would block beyond the reach of wait()'s abort.
  device_buffer<double> probe = p_->ctx->allocate<double>(2 * static_cast<std::size_t>(ranks));
  LA_CUDA_TRY(cudaMemsetAsync(probe.data(), 0, probe.size() * sizeof(double), p_->ctx->stream()));
  LA_NCCL_TRY(ncclGroupStart(), p_->comm);
  for (int q = 0; q < ranks; ++q)
    if (q != rank) {
      LA_NCCL_TRY(ncclSend(probe.data() + rank, 1, ncclDouble, q, p_->comm, p_->ctx->stream()), p_->comm);
      LA_NCCL_TRY(ncclRecv(probe.data() + ranks + q, 1, ncclDouble, q, p_->comm, p_->ctx->stream()), p_->comm);
    }
  LA_NCCL_TRY(ncclGroupEnd(), p_->comm);
  all_gather({0});
}

dist_comm::~dist_comm() {
  if (!p_) return;
  detail::device_guard g(p_->ctx->device(), std::nothrow);
  if (p_->failed && p_->failed->load()) p_->broken = true;
  if (p_->comm) {
    if (p_->broken) ncclCommAbort(p_->comm);
    else ncclCommDestroy(p_->comm);
  }
  if (p_->fork) cudaEventDestroy(p_->fork);
  if (p_->join) cudaEventDestroy(p_->join);
  if (p_->side) cudaStreamDestroy(p_->side);
}

int dist_comm::rank() const noexcept { return p_->rank; }
int dist_comm::ranks() const noexcept { return p_->ranks; }
context& dist_comm::ctx() noexcept { return *p_->ctx; }
void dist_comm::fail() noexcept {
  if (p_->failed) p_->failed->store(true);
  p_->abort();
}

void dist_comm::wait() {
  const cudaStream_t s = p_->ctx->stream();
  for (long spin = 0;; ++spin) {
    const cudaError_t e = cudaStreamQuery(s);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) {
      p_->abort();
      LA_CUDA_TRY(e);
    }
    ncclResult_t async = ncclSuccess;
    if (p_->comm && ncclCommGetAsyncError(p_->comm, &async) == ncclSuccess && async != ncclSuccess &&
        async != ncclInProgress) {
      const std::string why = std::string("NCCL failed: ") + ncclGetErrorString(async);
      p_->abort();
      throw device_error(why + " on rank " + std::to_string(p_->rank));
    }
    if (p_->failed && p_->failed->load()) {
      p_->abort();
      throw team_failure("another GPU of the team failed; rank " + std::to_string(p_->rank) + " stopped");
    }
    if (spin > 2000) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

std::string dist_comm::agree(const std::string& why) {
  const auto lengths = all_gather({static_cast<std::int64_t>(why.size())});
  int first = -1;
  std::size_t longest = 0;
  for (int r = 0; r < p_->ranks; ++r) {
    if (first < 0 && lengths[r] > 0) first = r;
    longest = std::max(longest, static_cast<std::size_t>(lengths[r]));
  }
  if (first < 0) return {};
  // Every rank's text, 8 bytes a value, padded to the longest.
  const std::size_t words = (longest + 7) / 8;
  std::vector<std::int64_t> mine(words, 0);
  std::memcpy(mine.data(), why.data(), why.size());
  const auto all = all_gather(mine);
  std::string out(static_cast<std::size_t>(lengths[first]), '\0');
  std::memcpy(out.data(), all.data() + static_cast<std::size_t>(first) * words, out.size());
  return out;
}

std::vector<std::int64_t> dist_comm::all_gather(const std::vector<std::int64_t>& values) {
  const std::size_t k = values.size(), R = static_cast<std::size_t>(p_->ranks);
  device_buffer<std::int64_t> buf = p_->ctx->allocate<std::int64_t>(k * R);
  std::int64_t* mine = buf.data() + k * static_cast<std::size_t>(p_->rank);
  LA_CUDA_TRY(cudaMemcpyAsync(mine, values.data(), k * sizeof(std::int64_t), cudaMemcpyHostToDevice, p_->ctx->stream()));
  LA_NCCL_TRY(ncclAllGather(mine, buf.data(), k, ncclInt64, p_->comm, p_->ctx->stream()), p_->comm);
  // Wait first: a copy into pageable memory would block the host until the stream reaches
  // it, out of wait()'s reach if a peer failed.
  wait();
  std::vector<std::int64_t> out(k * R);
  LA_CUDA_TRY(cudaMemcpy(out.data(), buf.data(), k * R * sizeof(std::int64_t), cudaMemcpyDeviceToHost));
  return out;
}

namespace {
template <typename T>
constexpr ncclDataType_t nccl_type() {
  return sizeof(T) == 8 ? ncclDouble : ncclFloat;
}
}  // namespace

// ---- kernels ---------------------------------------------------------------------------------

namespace dist_detail {
using cg_detail::last_block_sum;
using detail::block_threads;

/// A row walk over a list of local rows, or over the rows first .. first + count - 1 in
/// `order` (a plane_sweep; natural unless the class is swept): a thread a row for W = 1,
/// else W lanes a row (walks.cuh's group walk with a row list). Slot k holds row(k), or -1
/// for a slot of the sweep past the range's end.
template <int W, typename T, typename O>
struct listed_rows {
  const O* rp;
  const index_t* ci;
  const T* v;
  const index_t* list;  // null: the rows first, first + 1, ... in `order`
  index_t first;
  long long count;
  plane_sweep order;  // used when list is null
  __host__ __device__ long long slots() const { return list ? count : order.slots(); }
  __host__ __device__ long long items() const { return slots() * W; }
  __device__ __forceinline__ long long row(long long k) const {
    if (list) return list[k];
    const long long r = order.row(k);
    return r < 0 ? -1 : first + r;
  }
  template <typename X, typename F>
  __device__ __forceinline__ void each(const X& x, F&& f) const {
    if constexpr (W == 1) {
      LA_GRID_STRIDE(k, slots()) {
        const long long i = row(k);
        if (i < 0) continue;
        T acc = T(0);
        for (O j = rp[i]; j < rp[i + 1]; ++j) acc += v[j] * walk::gather(x, ci[j]);
        f(i, acc);
      }
    } else {
      constexpr int per_warp = 32 / W;
      const int group = (threadIdx.x % 32) / W, lane = threadIdx.x % W;
      const long long n = slots();
      LA_WARP_STRIDE(w, (n + per_warp - 1) / per_warp) {
        const long long k = w * per_warp + group;
        const long long i = k < n ? row(k) : -1;
        T acc = T(0);
        if (i >= 0)
          for (O j = rp[i] + lane; j < rp[i + 1]; j += W) acc += v[j] * walk::gather(x, ci[j]);
        acc = walk::group_sum<W>(acc);
        if (i >= 0 && lane == 0) f(i, acc);
      }
    }
  }
};

/// The direction where the boundary rows gather it: owned columns computed on the fly
/// (z + beta p_old, as the interior rows do), halo columns as received into p_new.
template <typename T>
struct halo_direction {
  cg_detail::direction<T> dir;
  const T* p_new;
  index_t rows;
  __device__ __forceinline__ T operator[](long long c) const { return c < rows ? dir[c] : p_new[c]; }
};
template <typename T>
__device__ __forceinline__ void set_beta(cg_detail::direction<T>& d, T beta) { d.beta = beta; }
template <typename T>
__device__ __forceinline__ void set_beta(halo_direction<T>& h, T beta) { h.dir.beta = beta; }

/// The direction step over one class of rows (interior or boundary): x += alpha p_old where
/// owed, p_new = z + beta p_old, q = A p_new and the p'q partial of these rows into *out.
/// The step's decision waits for every rank's partials (direction_decide).
template <typename Walk, typename X, typename T>
__global__ void __launch_bounds__(block_threads)
    direction_part(Walk w, X gather, cg_detail::direction<T> dir, T* p_new, T* q, T* x, const cg_control* c,
                   double* partials, unsigned* ticket, double* out) {
  const bool running = c->status == cg_running, owe = c->x_pending;
  if (!running && !owe) return;
  const T alpha = static_cast<T>(c->alpha);
  dir.beta = static_cast<T>(c->beta);
  set_beta(gather, dir.beta);
  double v[1] = {0}, total[1];
  if (running) {
    v[0] = cg_detail::direction_rows(w, gather, dir, p_new, q, x, alpha, owe);
  } else {
    // Settle the debt on these rows only: each row is in one class.
    LA_GRID_STRIDE(k, w.slots()) {
      const long long i = w.row(k);
      if (i >= 0) x[i] += alpha * dir.p_old[i];
    }
  }
  if (last_block_sum<1>(v, partials, ticket, total)) *out = total[0];
}

/// The values other ranks need, packed: buf[k] = v[send_idx[k]] (a vector's, for r = b - A x),
/// or the new direction's, computed on the fly while running.
template <typename T>
__global__ void __launch_bounds__(block_threads) pack(const T* v, const index_t* send_idx, index_t count, T* buf) {
  LA_GRID_STRIDE(k, count) buf[k] = v[send_idx[k]];
}
template <typename T>
__global__ void __launch_bounds__(block_threads) pack_direction(cg_detail::direction<T> dir, const index_t* send_idx,
                                                                index_t count, T* buf, const cg_control* c) {
  if (c->status != cg_running) return;
  dir.beta = static_cast<T>(c->beta);
  LA_GRID_STRIDE(k, count) buf[k] = dir[send_idx[k]];
}

/// Every rank's p'q partials (interior, boundary) summed in rank order: p'q, and the debt
/// x += alpha p settled.
__global__ void direction_decide(cg_control* c, const double* all, int ranks) {
  if (threadIdx.x != 0) return;
  const bool running = c->status == cg_running;
  if (!running && !c->x_pending) return;
  if (running) {
    double pq = 0;
    for (int r = 0; r < ranks; ++r) pq += all[2 * r] + all[2 * r + 1];
    c->pq = pq;
  }
  c->x_pending = 0;
}

/// The residual step's local part: r -= alpha q with the r'r and r'z partials into out[0..2).
template <typename T>
__global__ void __launch_bounds__(block_threads) residual_rows(T* r, const T* q, const T* inv_d, index_t n,
                                                               const cg_control* c, double* partials, unsigned* ticket,
                                                               double* out) {
  if (c->status != cg_running) return;
  double alpha = 0;
  if (!cg_step_length(*c, alpha)) return;  // residual_decide records the breakdown
  double v[2] = {0, 0}, total[2];
  cg_detail::residual_update(r, q, inv_d, n, static_cast<T>(alpha), v);
  if (last_block_sum<2>(v, partials, ticket, total)) out[0] = total[0], out[1] = total[1];
}

/// ... and the decision from every rank's r'r and r'z, summed in rank order.
__global__ void residual_decide(cg_control* c, cg_limits lim, const double* all, int ranks, double* history,
                                std::int64_t history_cap) {
  if (threadIdx.x != 0 || c->status != cg_running) return;
  double alpha = 0;
  if (cg_step_length(*c, alpha)) {
    double rr = 0, rz = 0;
    for (int r = 0; r < ranks; ++r) rr += all[2 * r], rz += all[2 * r + 1];
    cg_decide_step(*c, lim, alpha, rr, rz);
  } else {
    cg_decide_bad_pq(*c);
  }
  if (history) history[(c->iteration - 1) % history_cap] = cg_relative(*c, lim);
}

/// r'r and r'z with z = M^-1 r given (z), or Jacobi's or none's from r (z null): local
/// partials into out[0..2).
template <typename T>
__device__ __forceinline__ void rr_rz(const T* r, const T* inv_d, const T* z, index_t n, double* partials,
                                      unsigned* ticket, double* out) {
  double v[2] = {0, 0}, total[2];
  LA_GRID_STRIDE(i, n) {
    const T ri = r[i];
    v[0] += static_cast<double>(ri) * ri;
    v[1] += static_cast<double>(ri) * (z ? z[i] : cg_detail::apply_precond(inv_d, i, ri));
  }
  if (last_block_sum<2>(v, partials, ticket, total)) out[0] = total[0], out[1] = total[1];
}

/// With a preconditioner built on the part's rows (device_preconditioner): after r -= alpha q
/// (cg_detail::residual_only) and z = M^-1 r, the r'r and r'z partials.
template <typename T>
__global__ void __launch_bounds__(block_threads) residual_dots(const T* r, const T* z, index_t n, const cg_control* c,
                                                               double* partials, unsigned* ticket, double* out) {
  if (c->status != cg_running) return;
  double alpha = 0;
  if (!cg_step_length(*c, alpha)) return;  // residual_decide records the breakdown
  rr_rz(r, static_cast<const T*>(nullptr), z, n, partials, ticket, out);
}

/// The start: r'r and r'z of the first residual (local partials into out) ...
template <typename T>
__global__ void __launch_bounds__(block_threads) start_rows(const T* r, const T* inv_d, const T* z, index_t n,
                                                            double* partials, unsigned* ticket, double* out) {
  rr_rz(r, inv_d, z, n, partials, ticket, out);
}
/// ... and the start decision from every rank's.
__global__ void start_decide(cg_control* c, cg_limits lim, const double* all, int ranks) {
  if (threadIdx.x != 0) return;
  double rr = 0, rz = 0;
  for (int r = 0; r < ranks; ++r) rr += all[2 * r], rz += all[2 * r + 1];
  cg_decide_start(*c, lim, rr, rz);
}

/// The part's diagonal block (its rows, its owned columns: local columns below n, which
/// come first in each row): a row's count into counts[i] ...
template <typename O>
__global__ void owned_counts(const O* rp, const index_t* col, index_t n, O* counts) {
  LA_GRID_STRIDE(i, n) {
    O c = 0;
    for (O k = rp[i]; k < rp[i + 1]; ++k) c += col[k] < n ? 1 : 0;
    counts[i] = c;
  }
}
/// ... and, after a scan into block.ptr, its entries.
template <typename T, typename O>
__global__ void owned_copy(const O* rp, const index_t* col, const T* val, index_t n, csr_view<T, O> block) {
  LA_GRID_STRIDE(i, n) {
    O at = block.row_ptr[i];
    for (O k = rp[i]; k < rp[i + 1]; ++k)
      if (col[k] < n) block.col_idx[at] = col[k], block.values[at] = val[k], ++at;
  }
}

/// out = b - A v (v with its halo filled), or A * ones when b is null and v is null.
template <typename Walk, typename T>
__global__ void __launch_bounds__(block_threads) residual_of(Walk w, const T* v, const T* b, T* out) {
  w.each(v, [&](long long i, T av) { out[i] = b[i] - av; });
}
template <typename T>
struct ones {
  __device__ __forceinline__ T operator[](long long) const { return T(1); }
};
template <typename Walk, typename T>
__global__ void __launch_bounds__(block_threads) row_sums(Walk w, T* out) {
  w.each(ones<T>{}, [&](long long i, T s) { out[i] = s; });
}

// ---- the Laplacian generated on the device ------------------------------------------------

struct poisson_part {
  int dims;
  global_index n, first;
  index_t rows;
  const global_index* halo;  // sorted
  index_t halo_size;
  __device__ index_t local(global_index c) const {
    if (c >= first && c < first + rows) return static_cast<index_t>(c - first);
    index_t lo = 0, hi = halo_size;  // lower_bound
    while (lo < hi) {
      const index_t mid = lo + (hi - lo) / 2;
      if (halo[mid] < c) lo = mid + 1;
      else hi = mid;
    }
    return rows + lo;
  }
};

__global__ void poisson_counts(poisson_part p, std::int64_t* counts) {
  LA_GRID_STRIDE(i, p.rows) {
    global_index c[7];
    float v[7];
    counts[i] = poisson_row(p.dims, p.n, p.first + i, c, v);
  }
}

/// Row i's entries with local columns, sorted by local column as make_part sorts them.
template <typename T, typename O>
__global__ void poisson_fill(poisson_part p, const std::int64_t* rp64, O* rp, index_t* ci, T* v) {
  LA_GRID_STRIDE(i, p.rows) {
    global_index c[7];
    T val[7];
    const int m = poisson_row(p.dims, p.n, p.first + i, c, val);
    index_t loc[7];
    for (int k = 0; k < m; ++k) loc[k] = p.local(c[k]);
    for (int k = 1; k < m; ++k)  // insertion sort of at most 7
      for (int j = k; j > 0 && loc[j - 1] > loc[j]; --j) {
        const index_t tl = loc[j];
        loc[j] = loc[j - 1], loc[j - 1] = tl;
        const T tv = val[j];
        val[j] = val[j - 1], val[j - 1] = tv;
      }
    const std::int64_t at = rp64[i];
    for (int k = 0; k < m; ++k) ci[at + k] = loc[k], v[at + k] = val[k];
    if (rp) rp[i + 1] = static_cast<O>(rp64[i + 1]);
  }
}
}  // namespace dist_detail

using cg_detail::blocks_for;

// ---- the distributed matrix ------------------------------------------------------------------

template <typename T>
struct dist_matrix<T>::impl {
  context* ctx = nullptr;
  halo_plan plan;
  global_index global_rows = 0;
  count_t nnz = 0, global_nnz = 0;
  bool wide = false;
  device_buffer<std::int32_t> rp32;
  device_buffer<std::int64_t> rp64;
  device_buffer<index_t> col;
  device_buffer<T> val;
  device_buffer<index_t> interior, boundary, send_idx;  // interior, boundary: empty when contiguous
  index_t n_interior = 0, n_boundary = 0;
  index_t interior_first = 0, boundary_first = 0;  // the first row of a contiguous class

  /// Uploads a class of rows, or keeps only its first row when the rows are contiguous
  /// (the interior of a banded part, every row of a single part): a walk over a range
  /// reads no list and has no dependent load before its row offsets.
  static void upload_rows(context& ctx, const std::vector<index_t>& rows, device_buffer<index_t>& list, index_t& first) {
    const bool contiguous = rows.empty() || rows.back() - rows.front() + 1 == static_cast<index_t>(rows.size());
    first = rows.empty() ? 0 : rows.front();
    if (!contiguous) list = upload_async(ctx, rows);
  }
  /// The interior rows, walked in tiles of `tile` rows through the grid's planes when `tile`
  /// > 0 and the rows are a range of a generated grid (plane_sweep; tuning note D2).
  template <typename F>
  void with_interior(F&& f, long long tile = 0) const {
    with_walk(interior.empty() ? nullptr : interior.data(), interior_first, n_interior, f, tile);
  }
  template <typename F>
  void with_boundary(F&& f) const { with_walk(boundary.empty() ? nullptr : boundary.data(), boundary_first, n_boundary, f); }
  int width = 1;  // lanes a row
  /// How far a row's farthest neighbour sits on a generated grid (n^2 rows in 3D, n in 2D);
  /// 0 for a part from a file (no sweep).
  long long plane = 0;

  /// The order of a class of `count` rows for tiles of `tile` rows: swept through `plane`
  /// for a range of a generated grid longer than a plane, else the class's own order.
  plane_sweep order_of(const index_t* list, long long count, long long tile) const {
    return plane_sweep::of(count, list ? 0 : plane, tile);
  }
  /// The tile the interior rows are swept in when asked for `tile` (0: they walk in order).
  long long interior_sweep(long long tile) const {
    return order_of(interior.empty() ? nullptr : interior.data(), n_interior, tile).tile;
  }

  /// f(walk over `list` of `count` rows; null: the rows first, first + 1, ..., in
  /// order_of(list, count, tile)).
  template <typename F>
  void with_walk(const index_t* list, index_t first, long long count, F&& f, long long tile = 0) const {
    const plane_sweep order = order_of(list, count, tile);
    auto go = [&](auto* rp) {
      using O = std::remove_const_t<std::remove_pointer_t<decltype(rp)>>;
      if (width == 1) f(dist_detail::listed_rows<1, T, O>{rp, col.data(), val.data(), list, first, count, order});
      else if (width == 8) f(dist_detail::listed_rows<8, T, O>{rp, col.data(), val.data(), list, first, count, order});
      else f(dist_detail::listed_rows<32, T, O>{rp, col.data(), val.data(), list, first, count, order});
    };
    if (wide) go(static_cast<const std::int64_t*>(rp64.data()));
    else go(static_cast<const std::int32_t*>(rp32.data()));
  }

  /// Totals over the team; the rows' width from the mean row length: a thread a row up to
  /// 16 entries (as the single-GPU persistent rule, bench/RESULTS.md tuning note T9), then
  /// 8 and 32 lanes.
  void finish(dist_comm& comm) {
    const auto all = comm.all_gather({static_cast<std::int64_t>(plan.rows), nnz});
    global_rows = 0, global_nnz = 0;
    for (int r = 0; r < comm.ranks(); ++r) global_rows += all[2 * r], global_nnz += all[2 * r + 1];
    const double mean = plan.rows ? double(nnz) / plan.rows : 0;
    width = mean <= 16 ? 1 : mean <= 48 ? 8 : 32;
  }
};

template <typename T>
template <typename O>
dist_matrix<T>::dist_matrix(dist_comm& comm, const matrix_part<T, O>& part) : p_(std::make_shared<impl>()) {
  impl& m = *p_;
  const halo_plan& h = part.plan;
  LA_EXPECTS(h.parts == comm.ranks() && h.part == comm.rank(),
             "distributed matrix: part " + std::to_string(h.part) + " of " + std::to_string(h.parts) +
                 " given to rank " + std::to_string(comm.rank()) + " of " + std::to_string(comm.ranks()));
  LA_EXPECTS(h.send_ptr.size() == static_cast<std::size_t>(h.parts) + 1 &&
                 h.send_ptr.back() == static_cast<index_t>(h.send_idx.size()),
             "distributed matrix: the part's send lists are not set (link_sends or symmetric_sends)");
  m.ctx = &comm.ctx();
  m.plan = h;
  m.nnz = part.local.nnz();
  m.wide = sizeof(O) == 8;
  if constexpr (sizeof(O) == 8) m.rp64 = upload_async(*m.ctx, part.local.row_ptr());
  else m.rp32 = upload_async(*m.ctx, part.local.row_ptr());
  m.col = upload_async(*m.ctx, part.local.col_idx());
  m.val = upload_async(*m.ctx, part.local.values());
  impl::upload_rows(*m.ctx, part.interior, m.interior, m.interior_first);
  impl::upload_rows(*m.ctx, part.boundary, m.boundary, m.boundary_first);
  m.send_idx = upload_async(*m.ctx, h.send_idx);
  m.n_interior = static_cast<index_t>(part.interior.size());
  m.n_boundary = static_cast<index_t>(part.boundary.size());
  comm.wait();
  m.finish(comm);
}

template <typename T>
dist_matrix<T> dist_matrix<T>::poisson(dist_comm& comm, int dims, global_index n) {
  dist_matrix out;
  out.p_ = std::make_shared<impl>();
  impl& m = *out.p_;
  context& ctx = comm.ctx();
  m.ctx = &ctx;
  const auto bounds = even_row_blocks(poisson_size(dims, n), comm.ranks());
  std::vector<index_t> boundary;
  m.plan = poisson_plan(dims, n, bounds, comm.rank(), &boundary);
  m.plane = dims == 3 ? n * n : n;
  const index_t rows = m.plan.rows;
  // The interior is the boundary's complement: one range when the boundary is a prefix and
  // a suffix of the rows (a part thicker than the stencil's reach), listed only otherwise.
  const index_t nb = static_cast<index_t>(boundary.size());
  index_t prefix = 0;
  while (prefix < nb && boundary[prefix] == prefix) ++prefix;
  bool range = true;
  for (index_t j = prefix; j < nb && range; ++j) range = boundary[j] == rows - (nb - j);
  m.n_interior = rows - nb, m.n_boundary = nb;
  if (range) {
    m.interior_first = prefix;
  } else {
    std::vector<index_t> interior;
    interior.reserve(static_cast<std::size_t>(rows - nb));
    for (index_t i = 0, b = 0; i < rows; ++i) {
      if (b < nb && boundary[b] == i) ++b;
      else interior.push_back(i);
    }
    impl::upload_rows(ctx, interior, m.interior, m.interior_first);
  }
  impl::upload_rows(ctx, boundary, m.boundary, m.boundary_first);
  m.send_idx = upload_async(ctx, m.plan.send_idx);
  device_buffer<global_index> halo = upload_async(ctx, m.plan.halo);
  const dist_detail::poisson_part part{dims, n, m.plan.first_row, rows, halo.data(), m.plan.halo_size()};
  // Offsets: counts, then a scan, in 64 bits; 32-bit copies when the part's nonzeros fit.
  device_buffer<std::int64_t> rp64 = ctx.allocate<std::int64_t>(static_cast<std::size_t>(rows) + 1);
  if (rows > 0) {
    dist_detail::poisson_counts<<<blocks_for(rows, ctx.sm_count()), detail::block_threads, 0, ctx.stream()>>>(
        part, rp64.data() + 1);
    LA_CHECK_LAUNCH(ctx.stream());
  }
  const std::int64_t nnz = detail::scan_counts(ctx, rp64.data(), rows);
  m.nnz = nnz;
  m.wide = needs_64bit_offsets(nnz);
  m.col = ctx.allocate<index_t>(static_cast<std::size_t>(nnz));
  m.val = ctx.allocate<T>(static_cast<std::size_t>(nnz));
  if (!m.wide) {
    m.rp32 = ctx.allocate<std::int32_t>(static_cast<std::size_t>(rows) + 1);
    LA_CUDA_TRY(cudaMemsetAsync(m.rp32.data(), 0, sizeof(std::int32_t), ctx.stream()));
  }
  dist_detail::poisson_fill<T, std::int32_t><<<blocks_for(rows, ctx.sm_count()), detail::block_threads, 0, ctx.stream()>>>(
      part, rp64.data(), m.wide ? nullptr : m.rp32.data(), m.col.data(), m.val.data());
  LA_CHECK_LAUNCH(ctx.stream());
  if (m.wide) m.rp64 = std::move(rp64);
  comm.wait();
  m.finish(comm);
  return out;
}

template <typename T>
const halo_plan& dist_matrix<T>::plan() const noexcept { return p_->plan; }
template <typename T>
global_index dist_matrix<T>::global_rows() const noexcept { return p_->global_rows; }
template <typename T>
count_t dist_matrix<T>::nnz() const noexcept { return p_->nnz; }
template <typename T>
count_t dist_matrix<T>::global_nnz() const noexcept { return p_->global_nnz; }
template <typename T>
bool dist_matrix<T>::wide() const noexcept { return p_->wide; }
template <typename T>
index_t dist_matrix<T>::interior_rows() const noexcept { return p_->n_interior; }
template <typename T>
double dist_matrix<T>::matrix_bytes() const noexcept {
  const impl& m = *p_;
  return double(m.nnz) * (sizeof(T) + sizeof(index_t)) + double(m.plan.rows + 1) * (m.wide ? 8 : 4) +
         double(m.interior.size() + m.boundary.size()) * sizeof(index_t);
}
template <typename T>
void dist_matrix<T>::download(std::vector<std::int64_t>& row_ptr, std::vector<index_t>& col_idx,
                              std::vector<T>& values) const {
  const impl& m = *p_;
  if (m.wide) {
    row_ptr = download_async(m.rp64);
  } else {
    const auto r = download_async(m.rp32);
    m.ctx->synchronize();
    row_ptr.assign(r.begin(), r.end());
  }
  col_idx = download_async(m.col);
  values = download_async(m.val);
  m.ctx->synchronize();
}

template <typename T>
device_vector<T> dist_row_sums(dist_comm& comm, const dist_matrix<T>& a) {
  const auto& m = a.get();
  context& ctx = comm.ctx();
  device_vector<T> b(ctx, m.plan.rows);
  m.with_walk(nullptr, 0, m.plan.rows, [&](auto w) {
    dist_detail::row_sums<<<blocks_for(w.items(), ctx.sm_count()), detail::block_threads, 0, ctx.stream()>>>(w, b.data());
  });
  LA_CHECK_LAUNCH(ctx.stream());
  return b;
}

// ---- the backend of cg.hpp's loop ------------------------------------------------------------

namespace {
template <typename T>
class dist_backend {
 public:
  using value_type = T;
  using vector = device_vector<T>;
  static constexpr std::int64_t largest_chunk = 4096;
  static constexpr std::int64_t history_cap = 2 * largest_chunk;
  static constexpr int graph_iterations = 8;  // even: the direction buffers alternate

  dist_backend(dist_comm& comm, const dist_matrix<T>& a, preconditioner pc, const precond_options& popt, bool history,
               const dist_cg_options& o)
      : comm_(comm), m_(a.get()), ctx_(comm.ctx()), s_(ctx_.stream()), side_(comm.get().side), pc_(pc), popt_(popt),
        graph_(o.graph), overlap_(o.overlap), n_(m_.plan.rows), R_(comm.ranks()), me_(comm.rank()) {
    const std::size_t n = static_cast<std::size_t>(n_), ext = n + static_cast<std::size_t>(m_.plan.halo_size());
    r_ = ctx_.allocate<T>(n), q_ = ctx_.allocate<T>(n);
    for (auto& p : p_) p = ctx_.allocate<T>(ext);
    if (pc == preconditioner::jacobi) inv_d_ = ctx_.allocate<T>(n), d_ = ctx_.allocate<T>(n);
    if (cg_detail::built_apart(pc)) z_ = ctx_.allocate<T>(n);
    send_ = ctx_.allocate<T>(m_.plan.send_idx.size());
    control_ = ctx_.allocate<cg_control>(1);
    gathered_ = ctx_.allocate<double>(3 * 2 * static_cast<std::size_t>(R_));  // direction, residual, other
    flags_ = ctx_.allocate<unsigned long long>(4);
    tickets_ = ctx_.allocate<unsigned>(4);
    LA_CUDA_TRY(cudaMemsetAsync(tickets_.data(), 0, 4 * sizeof(unsigned), s_));
    sms_ = ctx_.sm_count();
    vector_blocks_ = blocks_for(n_, sms_);
    const int per_sm = o.walk_blocks_per_sm > 0 ? o.walk_blocks_per_sm : dist_walk_blocks_per_sm;
    auto walk_grid = [&](long long items) {
      return std::min<unsigned>(detail::grid_for(items), static_cast<unsigned>(per_sm * sms_));
    };
    const double bytes_per_row = a.matrix_bytes() / std::max<double>(1, n_) + 6.0 * sizeof(T);  // z, p, x in; x, p, q out
    const bool pays = m_.width == 1 && dist_sweep_pays(m_.plane, bytes_per_row, ctx_.properties().l2CacheSize);
    sweep_tile_ = m_.interior_sweep(o.sweep_tile >= 0 ? o.sweep_tile : pays ? dist_sweep_tile : 0);
    m_.with_interior([&](auto w) { interior_blocks_ = walk_grid(w.items()); }, sweep_tile_);
    m_.with_boundary([&](auto w) { boundary_blocks_ = walk_grid(w.items()); });
    partials_i_ = ctx_.allocate<double>(interior_blocks_);
    partials_ = ctx_.allocate<double>(2 * static_cast<std::size_t>(std::max({vector_blocks_, boundary_blocks_})));
    if (history) history_ = ctx_.allocate<double>(history_cap);
    LA_CUDA_TRY(cudaMallocHost(&host_control_, sizeof(cg_control)));
  }
  ~dist_backend() {
    if (graph_exec_) LA_CUDA_TRY_NO_THROW(cudaGraphExecDestroy(graph_exec_));
    if (host_control_) LA_CUDA_TRY_NO_THROW(cudaFreeHost(host_control_));
  }
  dist_backend(const dist_backend&) = delete;
  dist_backend& operator=(const dist_backend&) = delete;

  global_index size() const { return m_.global_rows; }

  std::string check_input(const vector& b, const vector& x) {
    std::string why;
    if (b.size() != n_)
      why = "right-hand side slice of rank " + std::to_string(me_) + " has " + std::to_string(b.size()) +
            " entries, its part has " + std::to_string(n_) + " rows";
    else if (x.size() != n_)
      why = "initial guess slice of rank " + std::to_string(me_) + " has " + std::to_string(x.size()) +
            " entries, expected " + std::to_string(n_);
    return comm_.agree(why);
  }

  std::string check_values(const vector& b, const vector& x) {
    const unsigned long long none = ~0ull;
    std::vector<unsigned long long> f(3, none);
    LA_CUDA_TRY(cudaMemcpyAsync(flags_.data(), f.data(), 3 * sizeof(none), cudaMemcpyHostToDevice, s_));
    auto scan = [&](const T* v, long long count, int slot) {
      if (count == 0) return;
      cg_detail::first_non_finite<<<blocks_for(count, sms_), detail::block_threads, 0, s_>>>(v, count, flags_.data() + slot);
      LA_CHECK_LAUNCH(s_);
    };
    scan(m_.val.data(), m_.nnz, 0);
    scan(b.data(), n_, 1);
    scan(x.data(), n_, 2);
    LA_CUDA_TRY(cudaMemcpyAsync(f.data(), flags_.data(), 3 * sizeof(none), cudaMemcpyDeviceToHost, s_));
    comm_.wait();
    std::vector<std::int64_t> mine(3);
    for (int j = 0; j < 3; ++j) mine[j] = f[j] == none ? -1 : static_cast<std::int64_t>(f[j]);
    const auto all = comm_.all_gather(mine);
    const char* what[] = {"matrix", "right-hand side", "initial guess"};
    for (int j = 0; j < 3; ++j)
      for (int r = 0; r < R_; ++r)
        if (const std::int64_t at = all[3 * r + j]; at >= 0)
          return std::string(what[j]) + " holds a non-finite value at " +
                 (j == 0 ? "stored entry " + std::to_string(at + 1) + " of rank " + std::to_string(r) + "'s part"
                         : "entry " + std::to_string(at + 1) + " of rank " + std::to_string(r) + "'s slice") +
                 " (1-based)";
    return {};
  }

  std::string check_preconditioner() {
    rep_.kind = pc_;
    if (cg_detail::built_apart(pc_)) return build_block_preconditioner();
    if (pc_ != preconditioner::jacobi) return {};
    const auto t0 = std::chrono::steady_clock::now();
    rep_.bytes = 2.0 * double(n_) * sizeof(T);
    const unsigned long long none = ~0ull;
    unsigned long long bad = none;
    LA_CUDA_TRY(cudaMemcpyAsync(flags_.data() + 3, &none, sizeof(none), cudaMemcpyHostToDevice, s_));
    // The part's rows as a CSR view: the owned diagonal is local column i.
    auto go = [&](const auto* rp) {
      using O = std::remove_const_t<std::remove_pointer_t<decltype(rp)>>;
      const csr_view<const T, O> a{n_, n_ + m_.plan.halo_size(), static_cast<O>(m_.nnz), rp, m_.col.data(),
                                   m_.val.data()};
      cg_detail::csr_inverse_diagonal<<<blocks_for(n_, sms_), detail::block_threads, 0, s_>>>(a, inv_d_.data(),
                                                                                            d_.data(), flags_.data() + 3);
    };
    if (m_.wide) go(m_.rp64.data());
    else go(m_.rp32.data());
    LA_CHECK_LAUNCH(s_);
    LA_CUDA_TRY(cudaMemcpyAsync(&bad, flags_.data() + 3, sizeof(bad), cudaMemcpyDeviceToHost, s_));
    comm_.wait();
    std::string why;
    if (bad != none) {
      T v = T(0);
      LA_CUDA_TRY(cudaMemcpyAsync(&v, d_.data() + bad, sizeof(T), cudaMemcpyDeviceToHost, s_));
      comm_.wait();
      const std::string i = std::to_string(m_.plan.first_row + static_cast<global_index>(bad) + 1);
      why = "Jacobi preconditioner: diagonal entry A(" + i + "," + i + ") = " + std::to_string(static_cast<double>(v)) +
            " is not positive, so the matrix is not symmetric positive definite";
    }
    why = comm_.agree(why);
    rep_.setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return why;
  }
  precond_report describe_preconditioner() const { return rep_; }

  /// M^-1 built by device_preconditioner on the part's diagonal block (its rows and owned
  /// columns): the block-diagonal preconditioner of the partition, one block a GPU, applied
  /// with no communication. A block it does not exist for ends the solve on every rank with
  /// the failing rank's message.
  std::string build_block_preconditioner() {
    const auto t0 = std::chrono::steady_clock::now();
    std::string why;
    auto go = [&](const auto* rp) {
      using O = std::remove_const_t<std::remove_pointer_t<decltype(rp)>>;
      device_csr<T, O> block = owned_block(rp);
      try {
        pre_.emplace(ctx_, block, pc_, popt_);
      } catch (const invalid_argument& e) {
        why = "rank " + std::to_string(me_) + " (global rows " + std::to_string(m_.plan.first_row + 1) + " to " +
              std::to_string(m_.plan.first_row + n_) + ", its block's rows counted from the first): " + e.what();
      }
    };
    if (m_.wide) go(m_.rp64.data());
    else go(m_.rp32.data());
    why = comm_.agree(why);
    if (!why.empty()) return why;
    rep_ = pre_->report();
    rep_.detail = "on each GPU's diagonal block" + (rep_.detail.empty() ? std::string() : ", " + rep_.detail);
    rep_.setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return {};
  }

  /// The part's diagonal block as a device CSR matrix (rows x rows, the part's offset type).
  template <typename O>
  device_csr<T, O> owned_block(const O* rp) {
    auto ptr = ctx_.allocate<O>(static_cast<std::size_t>(n_) + 1);
    if (n_ > 0) {
      dist_detail::owned_counts<<<blocks_for(n_, sms_), detail::block_threads, 0, s_>>>(rp, m_.col.data(), n_,
                                                                                      ptr.data() + 1);
      LA_CHECK_LAUNCH(s_);
    }
    const O nnz = detail::scan_counts(ctx_, ptr.data(), n_);
    device_csr<T, O> block(detail::trusted, n_, n_, std::move(ptr), ctx_.allocate<index_t>(static_cast<std::size_t>(nnz)),
                           ctx_.allocate<T>(static_cast<std::size_t>(nnz)));
    if (n_ > 0) {
      dist_detail::owned_copy<<<blocks_for(n_, sms_), detail::block_threads, 0, s_>>>(rp, m_.col.data(), m_.val.data(),
                                                                                    n_, block.view());
      LA_CHECK_LAUNCH(s_);
    }
    return block;
  }

  double nrm2(const vector& v) { return std::sqrt(global_dot(v.data(), v.data())); }
  void set_zero(vector& x) { LA_CUDA_TRY(cudaMemsetAsync(x.data(), 0, x.size() * sizeof(T), s_)); }
  void scale(vector& x, double s) {
    if (n_ == 0) return;
    cg_detail::scale_vector<<<vector_blocks_, detail::block_threads, 0, s_>>>(x.data(), n_, s);
    LA_CHECK_LAUNCH(s_);
  }
  vector scaled_copy(const vector& b, double s) {
    vector c(ctx_, n_);
    if (n_ == 0) return c;
    cg_detail::copy_scaled<<<vector_blocks_, detail::block_threads, 0, s_>>>(b.data(), c.data(), n_, s);
    LA_CHECK_LAUNCH(s_);
    return c;
  }

  void start(const vector& b, vector& x, const cg_limits& lim) {
    lim_ = lim;
    LA_CUDA_TRY(cudaMemsetAsync(control_.data(), 0, sizeof(cg_control), s_));
    residual(b, x, r_.data());
    for (auto& p : p_) LA_CUDA_TRY(cudaMemsetAsync(p.data(), 0, p.size() * sizeof(T), s_));
    double* g = gathered_.data() + 4 * R_;
    if (pre_) pre_->apply(r_.data(), z_.data(), s_);
    dist_detail::start_rows<<<vector_blocks_, detail::block_threads, 0, s_>>>(
        r_.data(), inv_d(), pre_ ? z_.data() : nullptr, n_, partials_.data(), tickets_.data() + 2, g + 2 * me_);
    LA_CHECK_LAUNCH(s_);
    all_gather_pair(g);
    dist_detail::start_decide<<<1, 32, 0, s_>>>(control_.data(), lim_, g, R_);
    LA_CHECK_LAUNCH(s_);
    directions_ = 0;
    queue_direction_step(x.data());
    if (graph_) capture(x.data());
  }

  void iterate(std::int64_t k, vector& x) {
    // Every rank queues the same count: the chunk rule reads each rank's own clock.
    const auto all = comm_.all_gather({k});
    for (int r = 0; r < R_; ++r) k = std::min<std::int64_t>(k, all[r]);
    if (!graph_) {
      for (std::int64_t j = 0; j < k; ++j) queue_iteration(x.data());
      return;
    }
    if (!graph_exec_ || graph_x_ != x.data()) capture(x.data());
    for (std::int64_t j = 0; j < k; j += graph_iterations) {
      LA_CUDA_TRY(cudaGraphLaunch(graph_exec_, s_));
      directions_ += graph_iterations;
    }
  }

  const cg_control& report() {
    LA_CUDA_TRY(cudaMemcpyAsync(host_control_, control_.data(), sizeof(cg_control), cudaMemcpyDeviceToHost, s_));
    comm_.wait();
    return *host_control_;
  }

  void history(std::int64_t first, std::int64_t last, std::vector<double>& out) {
    cg_detail::read_history_async(history_.data(), history_cap, first, last, out, s_);
    comm_.wait();
  }

  double residual_norm(const vector& b, const vector& x) {
    residual(b, x, q_.data());
    return std::sqrt(global_dot(q_.data(), q_.data()));
  }

  /// One iteration's communication alone (pack, halo exchange, two all-gathers), seconds
  /// per repetition over `reps`.
  double time_exchange(int reps) {
    cudaEvent_t e0, e1;
    LA_CUDA_TRY(cudaEventCreate(&e0));
    LA_CUDA_TRY(cudaEventCreate(&e1));
    double* g = gathered_.data() + 4 * R_;
    auto once = [&] {
      exchange(p_[0].data());
      all_gather_pair(g);
      all_gather_pair(g);
    };
    for (int j = 0; j < 5; ++j) once();
    comm_.all_gather({0});  // every rank starts together
    LA_CUDA_TRY(cudaEventRecord(e0, s_));
    for (int j = 0; j < reps; ++j) once();
    LA_CUDA_TRY(cudaEventRecord(e1, s_));
    comm_.wait();
    float ms = 0;
    LA_CUDA_TRY(cudaEventElapsedTime(&ms, e0, e1));
    cudaEventDestroy(e0), cudaEventDestroy(e1);
    return 1e-3 * ms / reps;
  }

  long long sweep_tile() const { return sweep_tile_; }
  std::string method() const {
    return "distributed CG on " + std::to_string(R_) + " GPU" + (R_ > 1 ? "s" : "") + " (" + nccl_status() +
           "), CSR rows " + (m_.width == 1 ? std::string("a thread each") : std::to_string(m_.width) + " lanes each") +
           (overlap_ == dist_cg_options::overlap_mode::boundary   ? ", interior rows beside the halo exchange and the boundary rows"
            : overlap_ == dist_cg_options::overlap_mode::exchange ? ", interior rows beside the halo exchange"
                                                                  : ", interior rows before the halo exchange") +
           (sweep_tile_ > 0 ? ", swept in tiles of " + std::to_string(sweep_tile_) + " rows through the grid's planes"
                            : std::string()) +
           ", " + (graph_ ? "graph" : "plain") +
           " path, deterministic (rank-ordered sums)";
  }

 private:
  const T* inv_d() const { return pc_ == preconditioner::jacobi ? inv_d_.data() : nullptr; }

  /// Fills v's halo (v[rows..rows + halo)) from the other ranks' owned entries.
  void exchange(T* v) {
    const index_t count = static_cast<index_t>(m_.plan.send_idx.size());
    if (count > 0) {
      dist_detail::pack<<<blocks_for(count, sms_), detail::block_threads, 0, s_>>>(static_cast<const T*>(v),
                                                                                   m_.send_idx.data(), count,
                                                                                   send_.data());
      LA_CHECK_LAUNCH(s_);
    }
    send_recv(v);
  }
  void send_recv(T* v) {
    const halo_plan& h = m_.plan;
    ncclComm_t c = comm_.get().comm;
    LA_NCCL_TRY(ncclGroupStart(), c);
    for (int q = 0; q < R_; ++q) {
      if (q == me_) continue;
      if (const index_t k = h.send_ptr[q + 1] - h.send_ptr[q]; k > 0)
        LA_NCCL_TRY(ncclSend(send_.data() + h.send_ptr[q], k, nccl_type<T>(), q, c, s_), c);
      if (const index_t k = h.recv_ptr[q + 1] - h.recv_ptr[q]; k > 0)
        LA_NCCL_TRY(ncclRecv(v + n_ + h.recv_ptr[q], k, nccl_type<T>(), q, c, s_), c);
    }
    LA_NCCL_TRY(ncclGroupEnd(), c);
  }
  /// In place: this rank's two values at g[2 me] go to every rank's g.
  void all_gather_pair(double* g) {
    ncclComm_t c = comm_.get().comm;
    LA_NCCL_TRY(ncclAllGather(g + 2 * me_, g, 2, ncclDouble, c, s_), c);
  }

  double global_dot(const T* x, const T* y) {
    double* g = gathered_.data() + 4 * R_;
    LA_CUDA_TRY(cudaMemsetAsync(g + 2 * me_ + 1, 0, sizeof(double), s_));
    cg_detail::dot_kernel<<<vector_blocks_, detail::block_threads, 0, s_>>>(x, y, n_, g + 2 * me_, partials_.data(),
                                                                         tickets_.data() + 3);
    LA_CHECK_LAUNCH(s_);
    all_gather_pair(g);
    comm_.wait();  // before the copy into pageable memory (see all_gather)
    std::vector<double> all(2 * static_cast<std::size_t>(R_));
    LA_CUDA_TRY(cudaMemcpy(all.data(), g, all.size() * sizeof(double), cudaMemcpyDeviceToHost));
    double s = 0;
    for (int r = 0; r < R_; ++r) s += all[2 * r];
    return s;
  }

  /// out = b - A x, with x's halo exchanged through p_[0] (free outside the loop).
  void residual(const vector& b, const vector& x, T* out) {
    T* v = p_[0].data();
    LA_CUDA_TRY(cudaMemcpyAsync(v, x.data(), static_cast<std::size_t>(n_) * sizeof(T), cudaMemcpyDeviceToDevice, s_));
    exchange(v);
    m_.with_walk(nullptr, 0, n_, [&](auto w) {
      dist_detail::residual_of<<<blocks_for(w.items(), sms_), detail::block_threads, 0, s_>>>(w, static_cast<const T*>(v),
                                                                                           b.data(), out);
    });
    LA_CHECK_LAUNCH(s_);
  }

  void queue_direction_step(T* x) {
    ++directions_;
    T* p_old = p_[(directions_ - 1) % 2].data();
    T* p_new = p_[directions_ % 2].data();
    const cg_detail::direction<T> dir{pre_ ? z_.data() : r_.data(), inv_d(), p_old, T(0)};
    double* g = gathered_.data();
    // The interior rows on the side stream, from the state the residual step left (or on
    // the main stream, before the exchange, without overlap).
    using mode = dist_cg_options::overlap_mode;
    const bool beside = overlap_ != mode::none;
    const cudaStream_t in = beside ? side_ : s_;
    if (beside) {
      LA_CUDA_TRY(cudaEventRecord(comm_.get().fork, s_));
      LA_CUDA_TRY(cudaStreamWaitEvent(side_, comm_.get().fork, 0));
    }
    m_.with_interior(
        [&](auto w) {
          dist_detail::direction_part<<<interior_blocks_, detail::block_threads, 0, in>>>(
              w, dir, dir, p_new, q_.data(), x, control_.data(), partials_i_.data(), tickets_.data(), g + 2 * me_);
        },
        sweep_tile_);
    LA_CHECK_LAUNCH(in);
    if (beside) LA_CUDA_TRY(cudaEventRecord(comm_.get().join, side_));
    // Meanwhile the values other ranks need, then the boundary rows.
    if (const index_t count = static_cast<index_t>(m_.plan.send_idx.size()); count > 0) {
      dist_detail::pack_direction<<<blocks_for(count, sms_), detail::block_threads, 0, s_>>>(dir, m_.send_idx.data(), count,
                                                                                         send_.data(), control_.data());
      LA_CHECK_LAUNCH(s_);
    }
    send_recv(p_new);
    if (overlap_ == mode::exchange) LA_CUDA_TRY(cudaStreamWaitEvent(s_, comm_.get().join, 0));
    const dist_detail::halo_direction<T> hd{dir, p_new, n_};
    m_.with_boundary([&](auto w) {
      dist_detail::direction_part<<<boundary_blocks_, detail::block_threads, 0, s_>>>(
          w, hd, dir, p_new, q_.data(), x, control_.data(), partials_.data(), tickets_.data() + 1, g + 2 * me_ + 1);
    });
    LA_CHECK_LAUNCH(s_);
    if (overlap_ == mode::boundary) LA_CUDA_TRY(cudaStreamWaitEvent(s_, comm_.get().join, 0));
    all_gather_pair(g);
    dist_detail::direction_decide<<<1, 32, 0, s_>>>(control_.data(), g, R_);
    LA_CHECK_LAUNCH(s_);
  }

  void queue_iteration(T* x) {
    double* g = gathered_.data() + 2 * R_;
    if (pre_) {
      cg_detail::residual_only<<<vector_blocks_, detail::block_threads, 0, s_>>>(r_.data(), q_.data(), n_,
                                                                               control_.data());
      LA_CHECK_LAUNCH(s_);
      pre_->apply(r_.data(), z_.data(), s_);
      dist_detail::residual_dots<<<vector_blocks_, detail::block_threads, 0, s_>>>(
          r_.data(), z_.data(), n_, control_.data(), partials_.data(), tickets_.data() + 2, g + 2 * me_);
    } else {
      dist_detail::residual_rows<<<vector_blocks_, detail::block_threads, 0, s_>>>(
          r_.data(), q_.data(), inv_d(), n_, control_.data(), partials_.data(), tickets_.data() + 2, g + 2 * me_);
    }
    LA_CHECK_LAUNCH(s_);
    all_gather_pair(g);
    dist_detail::residual_decide<<<1, 32, 0, s_>>>(control_.data(), lim_, g, R_,
                                                   history_.empty() ? nullptr : history_.data(), history_cap);
    LA_CHECK_LAUNCH(s_);
    queue_direction_step(x);
  }

  void capture(T* x) {
    const std::int64_t directions = directions_;
    cg_detail::capture_graph(s_, graph_exec_, [&] {
      for (int j = 0; j < graph_iterations; ++j) queue_iteration(x);
    });
    directions_ = directions;
    graph_x_ = x;
  }

  dist_comm& comm_;
  const typename dist_matrix<T>::impl& m_;
  context& ctx_;
  cudaStream_t s_, side_;
  preconditioner pc_;
  precond_options popt_;
  std::optional<device_preconditioner<T>> pre_;
  bool graph_;
  dist_cg_options::overlap_mode overlap_;
  index_t n_;
  int R_, me_;
  int sms_ = 1;
  device_buffer<T> r_, q_, inv_d_, d_, z_, send_;
  device_buffer<T> p_[2];  // rows + halo each; they alternate
  std::int64_t directions_ = 0;
  device_buffer<cg_control> control_;
  // 2 values a rank for each of: the direction step's p'q (interior, boundary), the
  // residual step's r'r and r'z, and the start's and the norms'.
  device_buffer<double> gathered_, partials_, partials_i_, history_;
  device_buffer<unsigned long long> flags_;
  device_buffer<unsigned> tickets_;  // interior, boundary, residual, dots
  precond_report rep_;
  cg_limits lim_;
  cg_control* host_control_ = nullptr;
  unsigned vector_blocks_ = 1, interior_blocks_ = 1, boundary_blocks_ = 1;
  long long sweep_tile_ = 0;  // the interior's (0: in order)
  cudaGraphExec_t graph_exec_ = nullptr;
  const T* graph_x_ = nullptr;
};
}  // namespace

template <typename T>
solve_result cg_distributed(dist_comm& comm, const dist_matrix<T>& a, const device_vector<T>& b, device_vector<T>& x,
                            const cg_options& opt, const dist_cg_options& dopt, dist_timing* timing) {
  detail::device_guard guard(comm.ctx().device());
  dist_backend<T> be(comm, a, opt.precond, opt.precond_opt, opt.record_history, dopt);
  solve_result r = cg(be, b, x, opt);
  r.method = be.method();
  if (timing) timing->exchange_seconds = be.time_exchange(50), timing->sweep_tile = be.sweep_tile();
  return r;
}

#endif  // LA_HAVE_NCCL

#define LA_DIST_INSTANTIATE(T)                                                                                  \
  template class dist_matrix<T>;                                                                               \
  template dist_matrix<T>::dist_matrix(dist_comm&, const matrix_part<T, std::int32_t>&);                       \
  template dist_matrix<T>::dist_matrix(dist_comm&, const matrix_part<T, std::int64_t>&);                       \
  template device_vector<T> dist_row_sums(dist_comm&, const dist_matrix<T>&);                                  \
  template solve_result cg_distributed(dist_comm&, const dist_matrix<T>&, const device_vector<T>&, device_vector<T>&, \
                                       const cg_options&, const dist_cg_options&, dist_timing*);
LA_DIST_INSTANTIATE(float)
LA_DIST_INSTANTIATE(double)

}  // namespace la
