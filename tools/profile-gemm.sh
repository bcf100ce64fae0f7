#!/usr/bin/env bash
# Nsight Compute summary of chosen GEMM variants (one launch each) on a built tree:
# warp stall reasons, shared-memory bank conflicts, pipe utilization.
# Usage: tools/profile-gemm.sh BUILD_DIR "M N K" variant...
set -uo pipefail
build=$1 shape=$2
shift 2
for v in "$@"; do
  echo "=== $v $shape"
  ncu --launch-skip 1 --launch-count 1 -k regex:'reg_tiled_kernel|wmma_gemm_kernel|split_k_kernel' \
    --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis --section LaunchStats --section Occupancy \
    --metrics smsp__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed.sum \
    "$build/tools/la" gemm $shape --algo "$v" --reps 1 2>&1 | grep -vE "^==PROF==|^\s*$|----" | grep -E "Stall|stall|Throughput|Registers|Shared|Occupancy|bank|wavefront|pipe|Issued|Eligible|inst_executed|Duration|Warp Cycles|Block Limit" | head -45
done
