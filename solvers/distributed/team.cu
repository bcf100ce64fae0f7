// CG on several GPUs (distributed.hpp), the team: which GPUs, the NCCL communicator, its
// waits and agreements, and the run of one thread a GPU. Without NCCL (LA_HAVE_NCCL unset)
// only what needs no NCCL is built here and every other entry point throws
// la::not_supported (this file also holds those stand-ins). The distributed matrix is in
// matrix.cu, the iteration in distributed.cu.
#include <la/solvers/distributed/distributed.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <thread>

#if LA_HAVE_NCCL
#include <la/solvers/distributed/detail/impl.cuh>
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

#define LA_DIST_INSTANTIATE(T)                                                                                  \
  template class dist_matrix<T>;                                                                               \
  template dist_matrix<T>::dist_matrix(dist_comm&, const matrix_part<T, std::int32_t>&);                       \
  template dist_matrix<T>::dist_matrix(dist_comm&, const matrix_part<T, std::int64_t>&);                       \
  template device_vector<T> dist_row_sums(dist_comm&, const dist_matrix<T>&);                                  \
  template solve_result cg_distributed(dist_comm&, const dist_matrix<T>&, const device_vector<T>&, device_vector<T>&, \
                                       const cg_options&, const dist_cg_options&, dist_timing*);
LA_DIST_INSTANTIATE(float)
LA_DIST_INSTANTIATE(double)
#undef LA_DIST_INSTANTIATE

#else  // LA_HAVE_NCCL

bool nccl_available() noexcept { return true; }
std::string nccl_status() {
  int v = 0;
  ncclGetVersion(&v);
  return "NCCL " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}


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

#endif  // LA_HAVE_NCCL

}  // namespace la
