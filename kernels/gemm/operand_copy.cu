// The operand copies of operand_copy.hpp.
#include <algorithm>

#include <la/kernels/gemm/detail/common.cuh>
#include <la/kernels/gemm/detail/operand_copy.hpp>

namespace la::gemm_detail {
namespace {
/// Rows of `row_bytes` from src (pitch sp bytes) to dst (pitch dp), each followed by zeros up
/// to dp: a thread writes 16 bytes of a destination row (dst and dp are multiples of 16) from
/// the source's units of U bytes (U divides src, sp and row_bytes); x walks a row's 16-byte
/// pieces, y the rows, four rows a trip so that 4 * 16 / U loads are in flight a thread.
template <typename U>
__global__ void pitched_copy_kernel(const unsigned char* src, std::size_t sp, unsigned char* dst, std::size_t dp,
                                    std::size_t row_bytes, index_t rows) {
  constexpr int per = sizeof(uint4) / sizeof(U);
  const std::size_t q = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (q >= dp / sizeof(uint4)) return;
  const std::size_t units = row_bytes / sizeof(U), u0 = q * per;
  const index_t step = gridDim.y;
  for (index_t r = blockIdx.y; r < rows; r += 4 * step) {
    union piece {
      uint4 v;
      U e[per];
    } v[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const U* const from = reinterpret_cast<const U*>(src + static_cast<std::size_t>(r + i * step) * sp);
#pragma unroll
      for (int j = 0; j < per; ++j) v[i].e[j] = r + i * step < rows && u0 + j < units ? from[u0 + j] : U{};
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
      if (r + i * step < rows) reinterpret_cast<uint4*>(dst + static_cast<std::size_t>(r + i * step) * dp)[q] = v[i].v;
  }
}

}  // namespace

void pitched_copy(const void* src, std::size_t sp, void* dst, std::size_t dp, std::size_t row_bytes, index_t rows,
                  cudaStream_t s) {
  LA_EXPECTS(reinterpret_cast<std::uintptr_t>(dst) % 16 == 0 && dp % 16 == 0 && dp >= row_bytes,
             "pitched_copy: the destination's rows must start at multiples of 16 bytes and hold the source's");
  auto run = [&](auto unit) {
    using U = decltype(unit);
    const dim3 grid(static_cast<unsigned>(ceil_div(dp / 16, std::size_t(256))),
                    static_cast<unsigned>(std::min<index_t>(ceil_div(rows, 4), 16384)));
    pitched_copy_kernel<U><<<grid, 256, 0, s>>>(static_cast<const unsigned char*>(src), sp, static_cast<unsigned char*>(dst),
                                                dp, row_bytes, rows);
  };
  const auto bits = reinterpret_cast<std::uintptr_t>(src) | sp | row_bytes;
  if (bits % 16 == 0)
    run(uint4{});
  else if (bits % 8 == 0)
    run(uint2{});
  else if (bits % 4 == 0)
    run(std::uint32_t{});
  else
    run(std::uint16_t{});  // 16-bit operands; floats are 4-byte aligned
  LA_CHECK_LAUNCH(s);
}

index_t copy_ld(index_t cols, int e, int align) { return static_cast<index_t>(ceil_div(cols, align / e)) * (align / e); }
std::size_t copy_bytes(index_t rows, index_t cols, int e, int align) {
  return static_cast<std::size_t>(rows) * copy_ld(cols, e, align) * e + align;
}

pitched::pitched(const void* src, index_t src_ld, index_t rows, index_t cols, int e, int align, workspace_room& room,
                 cudaStream_t stream)
    : ld(copy_ld(cols, e, align)), s(stream) {
  const std::size_t bytes = static_cast<std::size_t>(rows) * ld * e;
  p = room.take(bytes, align);
  if (!p) {
    LA_CUDA_TRY(cudaMallocAsync(&raw, bytes + align, s));
    workspace_room own{static_cast<unsigned char*>(raw), static_cast<unsigned char*>(raw) + bytes + align};
    p = own.take(bytes, align);
  }
  try {
    pitched_copy(src, static_cast<std::size_t>(src_ld) * e, p, static_cast<std::size_t>(ld) * e,
                 static_cast<std::size_t>(cols) * e, rows, s);
  } catch (...) {
    if (raw) (void)cudaFreeAsync(raw, s);
    throw;
  }
}

pitched::~pitched() {
  if (raw) (void)cudaFreeAsync(raw, s);
}

}  // namespace la::gemm_detail
