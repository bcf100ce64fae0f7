// Host threads for the work that scales with the input (Matrix Market parsing, COO -> CSR):
// how many to use, and a fork-join loop over them.
#pragma once

#include <exception>
#include <thread>
#include <vector>

namespace la {

/// Threads for host work: `requested` when positive, else $LA_THREADS, else every hardware
/// thread. At most 256. Throws la::invalid_argument when LA_THREADS is set to anything but
/// an integer in [1, 256].
int thread_count(int requested = 0);

namespace detail {
/// Runs f(t) for t in [0, threads) on `threads` threads (the caller runs t = 0) and rethrows
/// the first exception after all have finished.
template <typename F>
void parallel_for(int threads, F&& f) {
  if (threads <= 1) return f(0);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(threads));
  auto run = [&](int t) {
    try {
      f(t);
    } catch (...) {
      errors[t] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(threads) - 1);
  for (int t = 1; t < threads; ++t) pool.emplace_back(run, t);
  run(0);
  for (auto& th : pool) th.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}
}  // namespace detail

}  // namespace la
