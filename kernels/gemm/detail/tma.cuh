// The tensor memory accelerator (TMA) and mbarrier pieces the Hopper GEMM kernels share
// (wgmma.cu's 16-bit and TF32 rungs, dmma.cu's TMA-fed fp64 rung): the device side as thin
// wrappers of one PTX instruction each (sm_90; elsewhere they compile to nothing, and the
// kernels that use them are never launched there), the host side as the driver's tensor-map
// encoder with an error that names the operand.
#pragma once

#include <cuda.h>  // CUtensorMap and cuTensorMapEncodeTiled's types (the function comes from the runtime)

#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include <la/error.hpp>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define LA_TMA_DEVICE 1
#else
#define LA_TMA_DEVICE 0
#endif

namespace la::gemm_detail::tma {

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(std::uint64_t* bar, int count) {
#if LA_TMA_DEVICE
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count));
#endif
}
/// The barrier inits visible to the cluster (and to TMA's completions).
__device__ __forceinline__ void mbar_init_fence() {
#if LA_TMA_DEVICE
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void mbar_expect_tx(std::uint64_t* bar, std::uint32_t bytes) {
#if LA_TMA_DEVICE
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
#endif
}
__device__ __forceinline__ void mbar_arrive(std::uint64_t* bar) {
#if LA_TMA_DEVICE
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
#endif
}
/// Until the barrier's phase of this parity has completed.
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, int parity) {
#if LA_TMA_DEVICE
  const std::uint32_t a = smem_addr(bar);
  std::uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(a), "r"(parity)
        : "memory");
  } while (!done);
#endif
}
/// A box of the tensor map at (c0 inner, c1 outer) into shared memory, completing on bar.
__device__ __forceinline__ void load(void* dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1) {
#if LA_TMA_DEVICE
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(
          smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_addr(bar)), "r"(c0), "r"(c1)
      : "memory");
#endif
}
/// A box of a 3-D tensor map into shared memory, completing on bar.
__device__ __forceinline__ void load3(void* dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1, int c2) {
#if LA_TMA_DEVICE
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(
          smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
#endif
}
/// The same 3-D box into L2 only.
__device__ __forceinline__ void prefetch3(const CUtensorMap* map, int c0, int c1, int c2) {
#if LA_TMA_DEVICE
  asm volatile("cp.async.bulk.prefetch.tensor.3d.L2.global.tile [%0, {%1, %2, %3}];\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(c0), "r"(c1), "r"(c2)
               : "memory");
#endif
}
/// The same box into the same offset of every block of the cluster in mask, completing on
/// each one's barrier at bar's offset.
__device__ __forceinline__ void load_multicast(void* dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1,
                                               std::uint16_t mask) {
#if LA_TMA_DEVICE
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(
          smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "h"(mask)
      : "memory");
#endif
}
__device__ __forceinline__ int cluster_rank() {
  std::uint32_t r = 0;
#if LA_TMA_DEVICE
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
#endif
  return static_cast<int>(r);
}
/// Every thread of every block of the cluster; what each wrote before is visible after.
__device__ __forceinline__ void cluster_sync() {
#if LA_TMA_DEVICE
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
#endif
}
/// An arrival on the barrier at bar's offset in the cluster's block `rank`.
__device__ __forceinline__ void mbar_arrive_cluster(std::uint64_t* bar, int rank) {
#if LA_TMA_DEVICE
  std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(smem_addr(bar)), "r"(rank));
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(remote) : "memory");
#endif
}

// ---- the host side -------------------------------------------------------------------------

using encode_fn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                               const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                               CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

/// The driver's cuTensorMapEncodeTiled (looked up once).
inline encode_fn encoder() {
  static const encode_fn fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    LA_CUDA_TRY(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || !f)
      throw device_error("GEMM: the driver has no cuTensorMapEncodeTiled (a CUDA 12 driver is needed)");
    return reinterpret_cast<encode_fn>(f);
  }();
  return fn;
}

/// cuTensorMapEncodeTiled's result for `what` of `kernel` (a rows x cols matrix with pitch
/// ld): an error that names it.
inline void check_encode(CUresult r, const char* kernel, const char* what, long rows, long cols, long ld) {
  if (r != CUDA_SUCCESS)
    throw device_error(std::string(kernel) + ": cuTensorMapEncodeTiled failed (error " + std::to_string(int(r)) + ") for " +
                       what + ", " + std::to_string(rows) + " x " + std::to_string(cols) + " with pitch " +
                       std::to_string(ld));
}

}  // namespace la::gemm_detail::tma
