#!/usr/bin/env bash
# Quick start, step 2: build everything and run the whole test suite (GPU tests skip,
# saying why, when no GPU is present). Usage: tools/test.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
export PATH=/usr/local/cuda/bin:$PATH
arch=()  # CMakeLists.txt's default architecture unless LA_CUDA_ARCH is set
[ -n "${LA_CUDA_ARCH:-}" ] && arch=(-DCMAKE_CUDA_ARCHITECTURES="$LA_CUDA_ARCH")
# The Python package builds for the first python3 that has what its tests import (the
# distribution's, when a python3 earlier on PATH lacks numpy, scipy or pytest).
py=()
for p in python3 /usr/bin/python3; do
  if command -v "$p" > /dev/null && "$p" -c "import numpy, scipy, pytest" 2> /dev/null; then
    py=(-DPython3_EXECUTABLE="$(command -v "$p")")
    break
  fi
done
# Where the orderings' packages are installed (the set-up installs them), a build that did not
# find them fails a test rather than passing on the natural ordering.
expect=()
if dpkg -s libmetis-dev > /dev/null 2>&1 && dpkg -s libsuitesparse-dev > /dev/null 2>&1; then
  expect=(-DLA_EXPECT_ORDERINGS=ON)
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${arch[@]}" "${py[@]}" "${expect[@]}" -DLA_BUILD_TESTS=ON \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
cmake --build "$build"
status=0
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" || status=$?
# ctest hides why tests skip; one line says how many skipped and why (GTEST_SKIP messages).
log="$build/Testing/Temporary/LastTest.log"
if [ -f "$log" ]; then
  skipped=$(grep -c '^\[  SKIPPED \] [^ ]* (' "$log" || true)
  if [ "$skipped" -gt 0 ]; then
    reasons=$(grep -A1 ': Skipped$' "$log" | grep -v -e ': Skipped$' -e '^--$' | sort | uniq -c | sort -rn |
              awk '{n=$1; $1=""; printf "%s%d:%s", (NR>1?"; ":""), n, $0}')
    echo "skipped: $skipped tests ($reasons)"
  else
    echo "skipped: none"
  fi
fi
exit $status
