// Checking that an operation fits before it allocates: host memory (what the machine, or
// its cgroup, has available) and device memory (what the GPU has free). A request that
// cannot fit fails at once with how much it needs and how much there is, instead of
// allocating for seconds and dying, or leaving part of the work behind.
#pragma once

#include <cstdint>
#include <string>

#include <la/context.hpp>
#include <la/error.hpp>

namespace la {

/// The host does not have the memory an operation needs (estimated before it allocates).
class insufficient_memory : public error {
 public:
  using error::error;
};

/// "24.0 GB", "512.0 MB", "17 B".
std::string format_bytes(double bytes);

/// Bytes the host can still give this process: MemAvailable from /proc/meminfo, lowered to
/// the cgroup's remaining limit where there is one, and to $LA_HOST_MEMORY_LIMIT (bytes)
/// when set. UINT64_MAX when nothing can be read. Throws la::invalid_argument when
/// LA_HOST_MEMORY_LIMIT is set to anything but a byte count (an integer >= 0).
std::uint64_t host_memory_available();

/// Throws la::insufficient_memory ("`what` needs X of host memory; Y are available") when
/// `bytes` exceed 90% of host_memory_available().
void check_host_memory(double bytes, const std::string& what);

/// Throws la::out_of_memory ("`what` needs X of GPU memory; the GPU has Y free of Z") when
/// `bytes` exceed the free memory of ctx's device. Nothing is allocated.
void check_device_memory(const context& ctx, double bytes, const std::string& what);

}  // namespace la
