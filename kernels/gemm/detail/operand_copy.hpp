// Operand copies to an aligned pitch, shared by the GEMM variants that read rows more
// slowly (reg_tiled: 4-byte loads) or not at all (wgmma: TMA) where they are not aligned.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include <cuda_runtime.h>

#include <la/kernels/gemm/gemm.hpp>

namespace la::gemm_detail {

/// One copy: `rows` rows of `row_bytes` from src (pitch sp bytes) to dst (pitch dp >=
/// row_bytes), each row's last dp - row_bytes bytes set to zero (so a kernel may read a row
/// to its pitch). dst and dp are multiples of 16 bytes.
struct row_copy {
  const void* src = nullptr;
  std::size_t sp = 0;
  void* dst = nullptr;
  std::size_t dp = 0, row_bytes = 0;
  index_t rows = 0;
};

/// A copy's leading dimension, in elements, for rows of `cols` e-byte values at a pitch that
/// is a multiple of `align` bytes; and its bytes with room to align its start.
index_t copy_ld(index_t cols, int e, int align);
std::size_t copy_bytes(index_t rows, index_t cols, int e, int align);

/// Device memory carved in order at aligned offsets: the workspace past the split-K partials,
/// where the caller stated its size, for the operand copies and a tail's partials (kept by the
/// context between calls, where cudaMallocAsync's memory goes back to the driver at a
/// synchronization by default: mapping 50 MB again cost 5000^3 about 14% of its time), or a
/// copy's own allocation.
struct workspace_room {
  unsigned char* next = nullptr;
  unsigned char* end = nullptr;
  /// bytes at a multiple of align, or null where they do not fit.
  void* take(std::size_t bytes, int align) {
    if (!next) return nullptr;
    const auto at = (reinterpret_cast<std::uintptr_t>(next) + align - 1) / align * align;
    if (at + bytes > reinterpret_cast<std::uintptr_t>(end)) return nullptr;
    next = reinterpret_cast<unsigned char*>(at + bytes);
    return reinterpret_cast<void*>(at);
  }
};

/// Room for a stream-ordered copy of a rows x cols operand of e-byte values whose rows start at
/// multiples of `align` bytes (zeros from cols to the pitch ld), in `room` where it fits, else
/// allocated on the stream and freed on it after the product. copy_operands fills it.
struct pitched {
  void* raw = nullptr;  // allocated here (null: in the room)
  void* p = nullptr;
  index_t ld = 0;
  cudaStream_t s = nullptr;
  row_copy from;  // what copy_operands copies into p
  pitched(const void* src, index_t src_ld, index_t rows, index_t cols, int e, int align, workspace_room& room,
          cudaStream_t stream);
  ~pitched();
  pitched(const pitched&) = delete;
  pitched& operator=(const pitched&) = delete;
};

/// Fills a and b (either may be empty) with their operands, in one launch on s (the launch
/// saved was 3-7 us of products with both operands copied: fp16 300^3 22-23 -> 18 us, fp32
/// 1001^3 80-81 -> 74 on an H100; bench/history/gemm-ladder-against-cublas.md, "Issue 18's targets, one run"). A thread
/// stores 16 bytes of a destination row (checked: dst and dp multiples of 16), which made
/// reg_tiled's copies 0-3 us and the wgmma ones 3-4 us faster than storing the source's units,
/// and reads the source in the widest units (16, 8, 4 or 2 bytes) that divide every src, sp
/// and row. A kernel, not cudaMemcpy2DAsync, which took twice as long for the same rows (18
/// MB: 32 against 14-16 us on an H100; bench/history/gemm-ladder-against-cublas.md, "Operands whose rows straddle
/// 128-byte lines"). Checks its launch.
void copy_operands(const std::optional<pitched>& a, const std::optional<pitched>& b, cudaStream_t s);

}  // namespace la::gemm_detail
