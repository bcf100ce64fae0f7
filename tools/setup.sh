#!/usr/bin/env bash
# Quick start, step 1: install missing dependencies, build la, and solve a bundled system.
# Usage: tools/setup.sh [BUILD_DIR]   (CUDA architectures: set LA_CUDA_ARCH, default 90)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
need=()
[ -f /usr/include/eigen3/Eigen/Core ] || need+=(libeigen3-dev)
command -v ninja > /dev/null || need+=(ninja-build)
dpkg -s libgtest-dev > /dev/null 2>&1 || need+=(libgtest-dev)
if ((${#need[@]})); then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd=sudo
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need[@]}"
fi
export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${LA_CUDA_ARCH:-90}"
cmake --build "$build" --target la_cli
"$build/tools/la" solve data/gr_30_30.mtx --precond jacobi
