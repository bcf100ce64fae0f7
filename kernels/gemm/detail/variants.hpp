// The GEMM variants' run functions (one .cu file each); registry.cu lists them.
#pragma once

#include "../gemm.hpp"

namespace la::gemm_detail {
void run_naive(const gemm_args&, cudaStream_t);
void run_smem_tiled(const gemm_args&, cudaStream_t);
void run_joint_rs(const gemm_args&, cudaStream_t);
void run_reg_tiled(const gemm_args&, cudaStream_t);
void run_wmma_f16(const gemm_args&, cudaStream_t);
void run_wmma_tf32(const gemm_args&, cudaStream_t);
void run_wgmma_f16(const gemm_args&, cudaStream_t);
void run_wgmma_bf16(const gemm_args&, cudaStream_t);
bool wgmma_can_implement(const gemm_problem&);
bool wgmma_supported() noexcept;
void run_split_k_atomic(const gemm_args&, cudaStream_t);
void run_split_k_workspace(const gemm_args&, cudaStream_t);
std::size_t split_k_workspace_bytes(const gemm_problem&);
bool reg_tiled_vectorizable(const gemm_args&);
}  // namespace la::gemm_detail
