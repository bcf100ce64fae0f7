#!/usr/bin/env bash
# Quick start, step 1: install missing dependencies, build la, and solve a bundled system.
# Usage: tools/setup.sh [BUILD_DIR]   (CUDA architecture: CMakeLists.txt default unless LA_CUDA_ARCH is set)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
need=()
[ -f /usr/include/eigen3/Eigen/Core ] || need+=(libeigen3-dev)
command -v ninja > /dev/null || need+=(ninja-build)
dpkg -s libgtest-dev > /dev/null 2>&1 || need+=(libgtest-dev)
# The sparse direct solver's orderings (optional: without them the build says so).
# and the host's direct factorizations (CHOLMOD, UMFPACK) on a multithreaded BLAS (OpenBLAS;
# without it Debian's reference BLAS runs their dense blocks several times slower).
for p in libmetis-dev libsuitesparse-dev libopenblas-dev; do
  dpkg -s $p > /dev/null 2>&1 || need+=($p)
done
# The Python package and its tests (optional: without them the build says what is missing).
for p in python3-dev pybind11-dev python3-numpy python3-scipy python3-pytest; do
  dpkg -s $p > /dev/null 2>&1 || need+=($p)
done
if ((${#need[@]})); then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd=sudo
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need[@]}"
fi
export PATH=/usr/local/cuda/bin:$PATH
arch=()  # CMakeLists.txt's default architecture unless LA_CUDA_ARCH is set
[ -n "${LA_CUDA_ARCH:-}" ] && arch=(-DCMAKE_CUDA_ARCHITECTURES="$LA_CUDA_ARCH")
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${arch[@]}"
cmake --build "$build" --target la_cli
"$build/tools/la" solve data/gr_30_30.mtx --precond jacobi
