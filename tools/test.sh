#!/usr/bin/env bash
# Quick start, step 2: build everything and run the whole test suite (GPU tests skip,
# saying why, when no GPU is present). Usage: tools/test.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${LA_CUDA_ARCH:-90}" -DLA_BUILD_TESTS=ON
cmake --build "$build"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
