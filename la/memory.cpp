#include <la/memory.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>

#include <la/device_buffer.hpp>

namespace la {
namespace {
std::uint64_t read_number(const char* path) {
  std::ifstream in(path);
  std::string s;
  if (!(in >> s) || s == "max") return std::numeric_limits<std::uint64_t>::max();
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  return end && *end == '\0' ? v : std::numeric_limits<std::uint64_t>::max();
}
}  // namespace

std::string format_bytes(double bytes) {
  char buf[32];
  if (bytes >= 1e12) std::snprintf(buf, sizeof buf, "%.1f TB", bytes / 1e12);
  else if (bytes >= 1e9) std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9);
  else if (bytes >= 1e6) std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
  else if (bytes >= 1e3) std::snprintf(buf, sizeof buf, "%.1f kB", bytes / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  return buf;
}

std::uint64_t host_memory_available() {
  std::uint64_t avail = std::numeric_limits<std::uint64_t>::max();
  if (const char* env = std::getenv("LA_HOST_MEMORY_LIMIT"); env && *env) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(env, &end, 10);
    if (end == env || *end != '\0' || errno == ERANGE || env[0] == '-' || env[0] == '+' || env[0] == ' ')
      throw invalid_argument("LA_HOST_MEMORY_LIMIT='" + printable(env) +
                             "' is not a byte count: it needs an integer number of bytes >= 0 (or unset it)");
    avail = v;
  }
  try {
    std::ifstream in("/proc/meminfo");
    std::string line;
    while (std::getline(in, line)) {
      unsigned long long kb = 0;
      if (std::sscanf(line.c_str(), "MemAvailable: %llu kB", &kb) == 1) {
        avail = std::min<std::uint64_t>(avail, static_cast<std::uint64_t>(kb) * 1024);
        break;
      }
    }
    // cgroup v2: what the limit leaves
    const std::uint64_t max = read_number("/sys/fs/cgroup/memory.max");
    const std::uint64_t cur = read_number("/sys/fs/cgroup/memory.current");
    if (max != std::numeric_limits<std::uint64_t>::max() && cur != std::numeric_limits<std::uint64_t>::max())
      avail = std::min(avail, max > cur ? max - cur : 0);
  } catch (...) {
  }
  return avail;
}

void check_host_memory(double bytes, const std::string& what) {
  const std::uint64_t avail = host_memory_available();
  // 10% stays for the rest of the process and the system: an allocation that takes the last
  // of it runs for minutes in page reclaim and is then killed.
  if (bytes > 0.9 * static_cast<double>(avail))
    throw insufficient_memory(what + " needs " + format_bytes(bytes) + " of host memory; " +
                              format_bytes(static_cast<double>(avail)) +
                              " are available (la keeps 10% of it free)");
}

void check_device_memory(const context& ctx, double bytes, const std::string& what) {
  // Below 16 MiB the query (tens of microseconds) would cost more than the work it guards (a
  // small dense factorization takes less); an allocation that fails is la::out_of_memory anyway.
  if (bytes <= 16.0 * 1024 * 1024) return;
  detail::device_guard g(ctx.device());
  std::size_t free = 0, total = 0;
  LA_CUDA_TRY(cudaMemGetInfo(&free, &total));
  if (bytes > static_cast<double>(free))
    throw out_of_memory(cudaErrorMemoryAllocation,
                        what + " needs " + format_bytes(bytes) + " of GPU memory; " + ctx.properties().name + " has " +
                            format_bytes(static_cast<double>(free)) + " free of " +
                            format_bytes(static_cast<double>(total)));
}

}  // namespace la
