#!/usr/bin/env bash
# One call on a GPU machine: configure, build, run the whole test suite, run
# compute-sanitizer (memcheck, racecheck) on the GPU tests, run the benchmarks, and print a
# short table last. Logs go to $OUT (or ./gpu-check-out) when set.
# Usage: tools/gpu-check.sh [--no-bench] [--bench-filter REGEX]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-check-out}
mkdir -p "$out"
bench=1
filter=""
while (($#)); do
  case $1 in
    --no-bench) bench=0 ;;
    --bench-filter) filter=$2; shift ;;
    *) echo "unknown option $1"; exit 2 ;;
  esac
  shift
done
build=build-gpu
export PATH=/usr/local/cuda/bin:$PATH
summary=()
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/device.txt"

cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DLA_BUILD_TESTS=ON -DLA_BUILD_BENCH=ON > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
if cmake --build $build -j "$(nproc)" > "$out/build.log" 2>&1; then summary+=("build: ok"); else
  grep -E "error" -A3 "$out/build.log" | head -40; exit 1; fi

ctest --test-dir $build -j 4 --output-on-failure > "$out/ctest.log" 2>&1
summary+=("ctest: $(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -1)")
grep -E "\*\*\*Failed|Skipped" "$out/ctest.log" | head -20

# The deliberate out-of-memory test is left out: memcheck reports its failed allocation.
for t in $build/tests/gpu_test $(ls $build/tests/*gemm*_test 2>/dev/null); do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  for tool in memcheck racecheck; do
    if compute-sanitizer --tool $tool --error-exitcode 99 "$t" --gtest_filter=-*OutOfMemory* > "$out/sanitizer-$name-$tool.log" 2>&1; then
      summary+=("sanitizer $tool $name: clean")
    else
      summary+=("sanitizer $tool $name: FAILED (see sanitizer-$name-$tool.log)")
      tail -20 "$out/sanitizer-$name-$tool.log"
    fi
  done
done

if ((bench)) && ls $build/bench/*gemm_bench > /dev/null 2>&1; then
  for b in $build/bench/*_bench; do
    case $(basename "$b") in mm_read_bench) continue ;; esac
    "$b" ${filter:+--benchmark_filter="$filter"} --benchmark_out="$out/$(basename "$b").json" \
      --benchmark_out_format=json > "$out/$(basename "$b").log" 2>&1
    summary+=("$(basename "$b"): exit $?")
    [ -f bench/summarize.py ] && python3 bench/summarize.py "$out/$(basename "$b").json" | tee -a "$out/table.txt"
  done
fi

echo
echo "==== summary ($(cat "$out/device.txt")) ===="
printf '%s\n' "${summary[@]}"
