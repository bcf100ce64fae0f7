// `la solve --gpus N` and `la solve --mpi`: CG on several GPUs (solvers/distributed/distributed.hpp).
//
// Both launch modes run one function per rank (rank_solve) on a dist_comm; they differ only
// in how ranks start and how a file's parts reach them:
//   --gpus N  one process, a thread a GPU (run_on_gpus); the file is read once on the host
//             and partitioned there, each thread uploads its part.
//   --mpi     one process a GPU (mpirun -n N), on the GPU of its node-local rank; rank 0
//             reads the file and sends every other rank its part over MPI, and sends the
//             NCCL id the same way.
// A generated system (gen:poisson2d:N, gen:poisson3d:N) is made on each GPU, part by part.
// Rank 0 reports, and writes -o and --history. Built as a module (with NCCL and MPI) that
// `la solve` loads only for --gpus and --mpi: linked into the executable, they slowed every
// command's start-up, `la --help` included.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>

#include <la/formats/matrix_market.hpp>
#include <la/solvers/distributed/distributed.hpp>
#include "common.hpp"
#include "run.hpp"
#include "solve_common.hpp"

#if LA_HAVE_MPI
#include <mpi.h>
#endif

namespace la::cli {
namespace {
using clock_type = std::chrono::steady_clock;
double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

/// What rank 0 reports.
struct dist_outcome {
  solve_result r;
  std::vector<double> x;  // the whole solution, on rank 0, when -o asks for it
  double error = -1;      // ||x - ones|| / ||ones|| when b = A * ones
  double setup_ms = 0;    // the part made or uploaded, b
  global_index rows = 0;
  count_t nnz = 0;
  bool wide = false;
  std::string devices;
};

/// Where a rank's part comes from.
template <typename T>
struct part_source {
  std::optional<gen_spec> gen;                    // generated on the GPU
  const matrix_part<T, std::int64_t>* part = nullptr;  // uploaded
};

/// Sends x's slices to rank 0 (every rank calls it; MPI, or shared memory in one process).
using gather_fn = std::function<void(const std::vector<double>& slice, global_index first, std::vector<double>& whole)>;

template <typename T>
void rank_solve(dist_comm& comm, const part_source<T>& src, const std::vector<T>* rhs, const cg_options& opt,
                bool want_x, const gather_fn& gather, dist_outcome& out) {
  const auto t0 = clock_type::now();
  dist_matrix<T> A = src.gen ? dist_matrix<T>::poisson(comm, src.gen->kind == "poisson2d" ? 2 : 3, src.gen->n[0])
                             : dist_matrix<T>(comm, *src.part);
  context& ctx = comm.ctx();
  const halo_plan& h = A.plan();
  device_vector<T> b;
  if (rhs) {
    const std::vector<T> slice(rhs->begin() + h.first_row, rhs->begin() + h.first_row + h.rows);
    b = to_device(ctx, slice);
  } else {
    b = dist_row_sums(comm, A);
  }
  device_vector<T> x(ctx, h.rows);
  LA_CUDA_TRY(cudaMemsetAsync(x.data(), 0, sizeof(T) * static_cast<std::size_t>(h.rows), ctx.stream()));
  comm.wait();
  const double setup_ms = ms_since(t0);
  cg_options o = opt;
  if (comm.rank() != 0) o.progress = nullptr;
  const solve_result r = cg_distributed(comm, A, b, x, o);
  const std::vector<T> xl = to_host(ctx, x);
  // ||x - ones|| over every rank (when b = A * ones), in rank order.
  double e2 = 0;
  for (T v : xl) e2 += (double(v) - 1.0) * (double(v) - 1.0);
  std::int64_t bits;
  std::memcpy(&bits, &e2, sizeof bits);
  const auto all = comm.all_gather({bits});
  double total = 0;
  for (std::int64_t b2 : all) {
    double v;
    std::memcpy(&v, &b2, sizeof v);
    total += v;
  }
  std::vector<double> whole;
  if (want_x) gather(std::vector<double>(xl.begin(), xl.end()), h.first_row, whole);
  if (comm.rank() == 0) {
    out.r = r;
    out.x = std::move(whole);
    out.error = rhs ? -1 : std::sqrt(total / double(std::max<global_index>(1, A.global_rows())));
    out.setup_ms = setup_ms;
    out.rows = A.global_rows();
    out.nnz = A.global_nnz();
    out.wide = A.wide();
  }
}

#if LA_HAVE_MPI
void mpi_try(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw device_error(std::string("MPI call failed: ") + what);
}
/// Sends/receives a vector in chunks below 2^31 bytes.
template <typename V>
void mpi_send_vector(const V& v, int to) {
  std::uint64_t n = v.size();
  mpi_try(MPI_Send(&n, 1, MPI_UINT64_T, to, 0, MPI_COMM_WORLD), "MPI_Send");
  const char* p = reinterpret_cast<const char*>(v.data());
  std::uint64_t bytes = n * sizeof(typename V::value_type);
  for (std::uint64_t at = 0; at < bytes; at += 1u << 30)
    mpi_try(MPI_Send(p + at, static_cast<int>(std::min<std::uint64_t>(1u << 30, bytes - at)), MPI_BYTE, to, 0,
                     MPI_COMM_WORLD),
            "MPI_Send");
}
template <typename V>
void mpi_recv_vector(V& v, int from) {
  std::uint64_t n = 0;
  mpi_try(MPI_Recv(&n, 1, MPI_UINT64_T, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
  v.resize(n);
  char* p = reinterpret_cast<char*>(v.data());
  std::uint64_t bytes = n * sizeof(typename V::value_type);
  for (std::uint64_t at = 0; at < bytes; at += 1u << 30)
    mpi_try(MPI_Recv(p + at, static_cast<int>(std::min<std::uint64_t>(1u << 30, bytes - at)), MPI_BYTE, from, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE),
            "MPI_Recv");
}
template <typename T>
void mpi_send_part(const matrix_part<T, std::int64_t>& p, int to) {
  const halo_plan& h = p.plan;
  const std::vector<std::int64_t> head{h.part, h.parts, h.first_row, h.rows, p.local.rows(), p.local.cols()};
  mpi_send_vector(head, to);
  mpi_send_vector(h.halo, to), mpi_send_vector(h.recv_ptr, to), mpi_send_vector(h.send_ptr, to);
  mpi_send_vector(h.send_idx, to);
  mpi_send_vector(p.local.row_ptr(), to), mpi_send_vector(p.local.col_idx(), to), mpi_send_vector(p.local.values(), to);
  mpi_send_vector(p.interior, to), mpi_send_vector(p.boundary, to);
}
template <typename T>
matrix_part<T, std::int64_t> mpi_recv_part(int from) {
  matrix_part<T, std::int64_t> p;
  std::vector<std::int64_t> head, rp;
  std::vector<index_t> ci;
  std::vector<T> v;
  mpi_recv_vector(head, from);
  halo_plan& h = p.plan;
  h.part = static_cast<int>(head[0]), h.parts = static_cast<int>(head[1]), h.first_row = head[2];
  h.rows = static_cast<index_t>(head[3]);
  mpi_recv_vector(h.halo, from), mpi_recv_vector(h.recv_ptr, from), mpi_recv_vector(h.send_ptr, from);
  mpi_recv_vector(h.send_idx, from);
  mpi_recv_vector(rp, from), mpi_recv_vector(ci, from), mpi_recv_vector(v, from);
  p.local = csr_matrix<T, std::int64_t>(static_cast<index_t>(head[4]), static_cast<index_t>(head[5]), std::move(rp),
                                        std::move(ci), std::move(v));
  mpi_recv_vector(p.interior, from), mpi_recv_vector(p.boundary, from);
  return p;
}
#endif

template <typename T>
int run(const args& a, const std::vector<std::string>& inputs) {
  const std::string& input = a.positional()[0];
  const bool mpi = a.has("--mpi");
  cg_options opt = cg_args(a);
  for (const char* o : {"--path", "--threads"})
    if (a.has(o)) throw usage_error(std::string(o) + " applies to the solve on one GPU or the CPU, not --gpus/--mpi");
  (void)a.get_choice("--format", "auto", {"auto", "csr"});  // the parts are CSR
  if (a.get_choice("--device", "auto", {"auto", "cpu", "gpu"}) == "cpu")
    throw usage_error("--gpus and --mpi solve on GPUs; --device cpu contradicts them");

  if (!nccl_available()) throw not_supported(std::string(mpi ? "--mpi" : "--gpus") + ": " + nccl_status());
  int rank = 0, ranks = 1;
  [[maybe_unused]] int local = 0;
#if LA_HAVE_MPI
  if (mpi) {
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
  }
#else
  if (mpi)
    throw not_supported("--mpi: this build of la has no MPI (cmake found no mpicc; install an MPI and reconfigure)");
#endif
  const int gpus = mpi ? ranks : static_cast<int>(a.get_int("--gpus", 1, 1, 1024));
  if (!mpi && gpus > visible_gpus())
    throw no_gpu_error("--gpus " + std::to_string(gpus) + ": " + std::to_string(visible_gpus()) +
                       " GPU(s) visible" + (visible_gpus() ? "" : " (" + cuda_status() + ")"));

  if (mpi && visible_gpus() == 0) throw no_gpu_error("--mpi: rank " + std::to_string(rank) + " sees no GPU: " + cuda_status());
  // Rank 0 writes: its outputs are opened (temporaries created) before anything is read.
  std::optional<outputs> files;
  solve_outputs out;
  if (rank == 0) {
    files.emplace(a, inputs);
    if (a.has("--history")) out.history = files->open("--history", a.get("--history", ""), outputs::input_policy::refuse);
    if (a.has("-o") || a.has("--output"))
      out.x = files->open(a.has("-o") ? "-o" : "--output", a.get("-o", a.get("--output", "")),
                          outputs::input_policy::unless_forced);
    out.report = report_stream(files->paths());
  }
  std::FILE* rep = out.report;
  opt.record_history = out.history != nullptr;
  progress_line progress(rank == 0 && !a.has("--quiet"));
  opt.progress = [&](const cg_progress& p) { progress(p); };

  const auto t_read = clock_type::now();
  part_source<T> src;
  std::vector<matrix_part<T, std::int64_t>> parts;  // --gpus: every part; --mpi: this rank's
  std::vector<T> rhs;
  global_index rows = 0;
  if (is_gen(input)) {
    src.gen = gen_option(input, {"poisson2d", "poisson3d"});
    rows = src.gen->rows;
  } else if (rank == 0) {
    with_matrix<T>(
        input, a,
        [&](const auto& A) {
          if (A.rows() != A.cols())
            throw invalid_argument("'" + printable(input) + "' is " + std::to_string(A.rows()) + " x " +
                                   std::to_string(A.cols()) + "; CG needs a square (symmetric positive definite) matrix");
          rows = A.rows();
          using O = std::decay_t<decltype(A.row_ptr()[0])>;
          parts = partition_rows<T, O, std::int64_t>(A, gpus);  // 64-bit parts: one form to send over MPI
          return 0;
        },
        nullptr, {"poisson2d", "poisson3d"});
  }
  if (a.has("--rhs") && rank == 0) {
    rhs = read_matrix_market_vector<T>(a.get("--rhs", ""));
    if (static_cast<global_index>(rhs.size()) != rows)
      throw invalid_argument("right-hand side has " + std::to_string(rhs.size()) + " entries but A has " +
                             std::to_string(rows) + " rows");
  }
  const double read_ms = ms_since(t_read);
  bool want_x = out.x != nullptr;
#if LA_HAVE_MPI
  if (mpi) {  // the gather of x is collective: every rank must know whether rank 0 writes it
    int w = want_x;
    mpi_try(MPI_Bcast(&w, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
    want_x = w != 0;
  }
#endif

  if (rank == 0) {
    std::fprintf(rep, "matrix:     %s (%lld rows), %s\n", printable(input).c_str(), static_cast<long long>(rows),
                 sizeof(T) == 8 ? "double" : "float");
    std::fprintf(rep, "device:     %d GPUs, %s (%s)\n", gpus,
                 mpi ? "one MPI rank each" : "one process (a thread each)", nccl_status().c_str());
    std::fprintf(rep, "rhs:        %s\n",
                 a.has("--rhs") ? printable(a.get("--rhs", "")).c_str() : "b = A * ones (known solution x = ones)");
    std::fprintf(rep, "precond:    %s, tol %g, maxit %s\n", to_string(opt.precond), opt.rtol,
                 opt.max_iterations < 0 ? "2n" : std::to_string(opt.max_iterations).c_str());
    std::fflush(rep);
  }

  dist_outcome res;
  const auto t0 = clock_type::now();
  if (!mpi) {
    std::mutex m;
    std::vector<double> whole;
    if (want_x) whole.assign(static_cast<std::size_t>(rows), 0.0);
    gather_fn gather = [&](const std::vector<double>& slice, global_index first, std::vector<double>& w) {
      {
        std::lock_guard<std::mutex> g(m);
        std::copy(slice.begin(), slice.end(), whole.begin() + first);
      }
      (void)w;
    };
    run_on_gpus(gpus, [&](dist_comm& comm) {
      part_source<T> s = src;
      if (!s.gen) s.part = &parts[static_cast<std::size_t>(comm.rank())];
      rank_solve<T>(comm, s, a.has("--rhs") ? &rhs : nullptr, opt, want_x, gather, res);
    });
    if (want_x) res.x = std::move(whole);
  } else {
#if LA_HAVE_MPI
      // The part and the right-hand side from rank 0.
      matrix_part<T, std::int64_t> mine;
      if (!src.gen) {
        if (rank == 0) {
          for (int r = 1; r < ranks; ++r) mpi_send_part(parts[static_cast<std::size_t>(r)], r);
          mine = std::move(parts[0]);
        } else {
          mine = mpi_recv_part<T>(0);
        }
        src.part = &mine;
      }
      if (a.has("--rhs")) {
        std::uint64_t n = rhs.size();
        mpi_try(MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
        rhs.resize(n);
        for (std::uint64_t at = 0; at < n; at += (1u << 30) / sizeof(T))
          mpi_try(MPI_Bcast(rhs.data() + at, static_cast<int>(std::min<std::uint64_t>((1u << 30) / sizeof(T), n - at) * sizeof(T)),
                            MPI_BYTE, 0, MPI_COMM_WORLD),
                  "MPI_Bcast");
      }
      dist_comm::unique_id id;
      if (rank == 0) id = dist_comm::new_id();
      mpi_try(MPI_Bcast(id.bytes.data(), static_cast<int>(id.bytes.size()), MPI_BYTE, 0, MPI_COMM_WORLD), "MPI_Bcast");
      const int visible = visible_gpus();
      if (visible == 0) throw no_gpu_error("--mpi: rank " + std::to_string(rank) + " sees no GPU: " + cuda_status());
      dist_comm comm(rank, ranks, id, local % visible);
      gather_fn gather = [&](const std::vector<double>& slice, global_index first, std::vector<double>& whole) {
        (void)first;  // slices arrive in rank order, rank r's rows right after rank r - 1's
        int n = static_cast<int>(slice.size());
        std::vector<int> counts(static_cast<std::size_t>(ranks)), displs(static_cast<std::size_t>(ranks));
        mpi_try(MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
        if (rank == 0) {
          long long at = 0;
          for (int r = 0; r < ranks; ++r) displs[r] = static_cast<int>(at), at += counts[r];
          whole.resize(static_cast<std::size_t>(at));
        }
        mpi_try(MPI_Gatherv(slice.data(), n, MPI_DOUBLE, whole.data(), counts.data(), displs.data(), MPI_DOUBLE, 0,
                            MPI_COMM_WORLD),
                "MPI_Gatherv");
      };
      rank_solve<T>(comm, src, a.has("--rhs") ? &rhs : nullptr, opt, want_x, gather, res);
    if (rank != 0) return res.r.converged() ? exit_ok : exit_not_good;
#endif
  }
  const double solve_ms = ms_since(t0);
  progress.clear();
  in_cli_words(res.r);
  const solve_result& r = res.r;
  std::fprintf(rep, "system:     %lld x %lld, %lld nonzeros (%s offsets per part)\n", static_cast<long long>(res.rows),
               static_cast<long long>(res.rows), static_cast<long long>(res.nnz), res.wide ? "64-bit" : "32-bit");
  std::fprintf(rep, "solver:     %s\n", r.method.c_str());
  if (form_of(opt.precond) != precond_form::identity && form_of(r.precond.kind) != precond_form::identity)
    std::fprintf(rep, "M^-1:       %s: %s; setup %.3f ms (rank 0's), %.3f MB on rank 0\n", to_string(r.precond.kind),
                 r.precond.detail.c_str(), 1e3 * r.precond.setup_seconds, r.precond.bytes / 1e6);
  std::fprintf(rep, "status:     %s after %lld iterations (%s)\n", to_string(r.status),
               static_cast<long long>(r.iterations), r.message.c_str());
  std::fprintf(rep, "residual:   %.3e relative (recurrence), true ||b-Ax||/||b|| = %.3e\n", r.residual, r.true_residual);
  if (res.error >= 0 && r.status != solve_status::invalid_input)
    std::fprintf(rep, "error:      ||x - ones|| / ||ones|| = %.3e\n", res.error);
  std::fprintf(rep, "time:       %.3f ms iterating", 1e3 * r.iterate_seconds);
  if (r.iterations > 0) std::fprintf(rep, " (%.2f us/iteration)", 1e6 * r.iterate_seconds / double(r.iterations));
  std::fprintf(rep, ", %.3f ms solver setup, %.3f ms making or uploading the parts, %.3f ms in all; %.3f ms reading\n",
               1e3 * r.setup_seconds, res.setup_ms, solve_ms, read_ms);
  write_outputs(a, r, std::vector<T>(res.x.begin(), res.x.end()), out);
  return r.converged() ? exit_ok : exit_not_good;
}
}  // namespace

int solve_distributed(const args& a, const std::vector<std::string>& inputs) {
  auto go = [&] {
    return a.get_choice("--precision", "double", {"double", "float"}) == "float" ? run<float>(a, inputs)
                                                                                  : run<double>(a, inputs);
  };
#if LA_HAVE_MPI
  if (a.has("--mpi")) {
    keep_nvlink_multicast_off();
    int init = 0;
    MPI_Initialized(&init);
    if (!init) MPI_Init(nullptr, nullptr);
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    // A rank that fails may leave the others waiting for it in NCCL or MPI: it reports as
    // run_command would, then ends the whole job with its exit status.
    const int code = run_command("solve", [&] {
      try {
        return go();
      } catch (...) {
        if (ranks > 1) std::fprintf(stderr, "la solve: rank %d of %d failed:\n", rank, ranks);
        throw;
      }
    });
    if (code != exit_ok && code != exit_not_good && ranks > 1) {
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, code);
    }
    MPI_Finalize();
    return code;
  }
#endif
  return go();
}

}  // namespace la::cli

extern "C" __attribute__((visibility("default"))) int la_cli_dist_main(int argc, char** argv) {
  return la::cli::run_command("solve", [&] {
    const la::cli::args a = la::cli::solve_args(argc, argv);
    std::vector<std::string> inputs{a.positional().at(0)};
    if (a.has("--rhs")) inputs.push_back(a.get("--rhs", ""));
    return la::cli::solve_distributed(a, inputs);
  });
}
