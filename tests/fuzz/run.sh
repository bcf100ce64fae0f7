#!/usr/bin/env bash
# Builds the Matrix Market fuzz target (clang, libFuzzer, ASan, UBSan) and runs it.
# Usage: tests/fuzz/run.sh [SECONDS] [JOBS]   (default 60 seconds, 1 job)
# Seeds: every .mtx under tests/data and data/; new inputs go to build-fuzz/corpus. A finding
# stops the run, prints the input that caused it (hex) and exits non-zero; the input is kept
# in build-fuzz/artifacts/ (crash-*, leak-*, timeout-*). Reproduce with: build-fuzz/tests/fuzz/mm_fuzz FILE
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60} jobs=${2:-1}
build=build-fuzz
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p $build
if [ ! -f $build/build.ninja ]; then
  cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DLA_BUILD_FUZZ=ON -DLA_BUILD_TESTS=OFF -DLA_BUILD_TOOLS=OFF > $build/configure.log 2>&1 || { cat $build/configure.log; exit 1; }
fi
cmake --build $build --target mm_fuzz
mkdir -p $build/corpus $build/artifacts
rm -f $build/fuzz-*.log
root=$PWD
parallel=()
((jobs > 1)) && parallel=(-jobs="$jobs" -workers="$jobs")  # libFuzzer then logs to fuzz-N.log in $build
status=0
(cd $build && ./tests/fuzz/mm_fuzz -max_total_time="$seconds" "${parallel[@]}" -dict="$root/tests/fuzz/mm.dict" \
  -max_len=65536 -timeout=20 -rss_limit_mb=2048 -artifact_prefix=artifacts/ -print_final_stats=1 \
  corpus "$root/tests/data/edge" "$root/data" > fuzz.log 2>&1) || status=1
cat $build/fuzz-*.log >> $build/fuzz.log 2>/dev/null || true
grep -E "^#[0-9]+.*DONE|^stat::|ERROR|property failed|runtime error" $build/fuzz.log | tail -20
grep -q "ERROR: libFuzzer\|ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error\|property failed" $build/fuzz.log && status=1
for f in $build/artifacts/*; do
  [ -e "$f" ] || continue
  status=1
  echo "finding: $f ($(stat -c %s "$f") bytes); reproduce with: $f as the argument of $build/tests/fuzz/mm_fuzz"
  if command -v xxd > /dev/null; then xxd "$f" | head -40; else od -A x -t x1z "$f" | head -40; fi
done
((status == 0)) && echo "fuzz: no finding in $seconds s"
exit $status
