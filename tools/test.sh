#!/usr/bin/env bash
# Quick start, step 2: build everything and run the whole test suite (GPU tests skip,
# saying why, when no GPU is present). Usage: tools/test.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
export PATH=/usr/local/cuda/bin:$PATH
arch=()  # CMakeLists.txt's default architecture unless LA_CUDA_ARCH is set
[ -n "${LA_CUDA_ARCH:-}" ] && arch=(-DCMAKE_CUDA_ARCHITECTURES="$LA_CUDA_ARCH")
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${arch[@]}" -DLA_BUILD_TESTS=ON
cmake --build "$build"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
