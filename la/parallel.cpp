#include <la/parallel.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string>

#include <la/error.hpp>

namespace la {

int thread_count(int requested) {
  if (requested > 0) return std::min(requested, 256);
  if (const char* env = std::getenv("LA_THREADS"); env && *env) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(env, &end, 10);
    if (end == env || *end != '\0' || errno == ERANGE || v < 1 || v > 256)
      throw invalid_argument("LA_THREADS='" + printable(env) +
                             "' is not a thread count: it needs an integer in [1, 256] (or unset it)");
    return static_cast<int>(v);
  }
  return std::max(1, std::min(256, static_cast<int>(std::thread::hardware_concurrency())));
}

}  // namespace la
