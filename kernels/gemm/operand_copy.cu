// The operand copies of operand_copy.hpp.
#include <algorithm>

#include <la/kernels/gemm/detail/common.cuh>
#include <la/kernels/gemm/detail/operand_copy.hpp>

namespace la::gemm_detail {
namespace {
/// Up to two row_copy jobs, blockIdx.z picking one (the grid is sized for the larger): a thread
/// writes 16 bytes of a destination row from the source's units of U bytes (U divides every
/// src, sp and row_bytes); x walks a row's 16-byte pieces, y the rows, four rows a trip so that
/// 4 * 16 / U loads are in flight a thread.
struct copy_jobs {
  row_copy job[2];
};
template <typename U>
__global__ void pitched_copy_kernel(copy_jobs jobs) {
  constexpr int per = sizeof(uint4) / sizeof(U);
  const row_copy j = blockIdx.z == 0 ? jobs.job[0] : jobs.job[1];  // not indexed: no local copy
  const std::size_t q = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (q >= j.dp / sizeof(uint4)) return;
  const auto* const src = static_cast<const unsigned char*>(j.src);
  auto* const dst = static_cast<unsigned char*>(j.dst);
  const std::size_t units = j.row_bytes / sizeof(U), u0 = q * per;
  const index_t step = gridDim.y;
  for (index_t r = blockIdx.y; r < j.rows; r += 4 * step) {
    union piece {
      uint4 v;
      U e[per];
    } v[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const U* const from = reinterpret_cast<const U*>(src + static_cast<std::size_t>(r + i * step) * j.sp);
#pragma unroll
      for (int k = 0; k < per; ++k) v[i].e[k] = r + i * step < j.rows && u0 + k < units ? from[u0 + k] : U{};
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
      if (r + i * step < j.rows) reinterpret_cast<uint4*>(dst + static_cast<std::size_t>(r + i * step) * j.dp)[q] = v[i].v;
  }
}

}  // namespace

void copy_operands(const std::optional<pitched>& a, const std::optional<pitched>& b, cudaStream_t s) {
  copy_jobs jobs;
  int count = 0;
  std::size_t pieces = 0, bits = 0;
  index_t rows = 0;
  for (const std::optional<pitched>* o : {&a, &b}) {
    if (!*o) continue;
    const row_copy& c = (*o)->from;
    LA_EXPECTS(reinterpret_cast<std::uintptr_t>(c.dst) % 16 == 0 && c.dp % 16 == 0 && c.dp >= c.row_bytes,
               "copy_operands: the destination's rows must start at multiples of 16 bytes and hold the source's");
    jobs.job[count++] = c;
    pieces = std::max(pieces, c.dp / 16);
    rows = std::max(rows, c.rows);
    bits |= reinterpret_cast<std::uintptr_t>(c.src) | c.sp | c.row_bytes;
  }
  if (count == 0 || pieces == 0 || rows == 0) return;
  auto run = [&](auto unit) {
    const dim3 grid(static_cast<unsigned>(ceil_div(pieces, std::size_t(256))),
                    static_cast<unsigned>(std::min<index_t>(ceil_div(rows, 4), 16384)), static_cast<unsigned>(count));
    pitched_copy_kernel<decltype(unit)><<<grid, 256, 0, s>>>(jobs);
  };
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
  from = {src, static_cast<std::size_t>(src_ld) * e, p, static_cast<std::size_t>(ld) * e, static_cast<std::size_t>(cols) * e,
          rows};
}

pitched::~pitched() {
  if (raw) (void)cudaFreeAsync(raw, s);
}
}  // namespace la::gemm_detail
