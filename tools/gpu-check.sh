#!/usr/bin/env bash
# One call on a GPU machine: configure, build, run the whole test suite, run
# compute-sanitizer (memcheck, racecheck) on the GPU tests, run the benchmarks, and print a
# short table last. Logs go to $OUT (or ./gpu-check-out).
# Usage: tools/gpu-check.sh [--no-bench] [--no-tests] [--no-ctest] [--no-sanitizer] [--bench-filter REGEX]
#                           [--test-filter REGEX] [--benches LIST]
#   --no-ctest            the sanitizers without the ctest run before them
#   --benches LIST        comma-separated: gemm (gemm_bench, wmma_peak), spmv (spmv_bench),
#                         cg (cg_bench), precond (precond_bench), krylov (krylov_bench and, where
#                         CuPy is installed, bench/cupy_krylov.py), dist (dist_bench: CG on the
#                         visible GPUs), spgemm (spgemm_bench: la's SpGEMM against
#                         cusparseSpGEMM), python (bench/python_bench.py: la from Python against
#                         the C++ call, scipy and CuPy; the package's pytest suite runs in ctest);
#                         default all eight; also direct (bench/direct_bench.py: the direct
#                         method on data/ and bench-data/, carry bench-data; LA_DIRECT_ARGS) and
#                         batched (la bench gesv --batch and bench/batched_bench.py --device gpu,
#                         batches and single systems) and gesv (la bench gesv --ablate: dense LU
#                         and Cholesky against cuSOLVER, look-ahead on and off; la bench dgemm:
#                         every fp64 GEMM rung against cuBLAS at 2048-8192) and complex
#                         (bench/complex_bench: complex SpMV against cuSPARSE, the dense complex
#                         LU against zgetrf; bench/cupy_complex.py: complex Krylov against CuPy)
#   LA_PYTHON_ARGS        (environment) extra arguments for python_bench.py, e.g. "--skip-read"
#   LA_KRYLOV_ARGS        (environment) extra arguments for krylov_bench, e.g. "--systems
#                         convdiff2d:1024 --methods gmres:jacobi --no-eigen"; LA_CUPY_ARGS likewise
#                         for cupy_krylov.py (--systems)
#   LA_DIST_ARGS          (environment) extra arguments for dist_bench, e.g. "--systems
#                         poisson3d:512 --gpus 1,2,4 --big poisson3d:1024"
#   LA_CG_ARGS            (environment) extra arguments for cg_bench, e.g. "--systems
#                         poisson2d:256 --precision double --no-eigen"
#   LA_SPGEMM_ARGS        (environment) extra arguments for spgemm_bench, e.g. "--systems
#                         poisson2d:1024,amg:poisson3d:64"
#   LA_PRECOND_ARGS       (environment) extra arguments for precond_bench, e.g. "--systems
#                         poisson2d:1000 --methods jacobi,fsai --no-eigen"
#   --bench-filter REGEX  passed to the Google Benchmark binaries (--benchmark_filter)
#   LA_SPMV_MATRICES      (environment) the matrices spmv_bench runs, comma-separated
#   --test-filter REGEX   only the ctest tests matching REGEX (ctest -R); sanitizers still run
#                         every GPU test binary unless --no-sanitizer
#   --sanitizer-part K/P  the K-th of P interleaved parts of the sanitizer runs (every P-th run
#                         of each tool from the K-th): on one GPU the whole pass (44 runs side by side) does not
#                         fit the 480 s limit (one H100, 2026-12-07: 15 of 42 runs cut off, no
#                         error reported), so run it as 1/2 and 2/2 in two calls on a warm machine
#   LA_SANITIZER_TIMEOUT  (environment) seconds each sanitizer run may take (default 480)
#   LA_SANITIZER_ONLY     (environment) the GPU test binaries the sanitizers run, a regex
#                         alternation (e.g. "amg_test|cg_gpu_test"); default every one
#   LA_SANITIZER_TOOLS    (environment) the tools, space-separated (default "memcheck racecheck")
#   LA_SANITIZER_SHARDS   (environment) gtest shards per sanitizer run (default 1, 2 or 3 for
#                         the longest); all 30 runs side by side take about 7-9 minutes
# The CUDA architecture is CMakeLists.txt's default unless LA_CUDA_ARCH is set.
set -uo pipefail
cd "$(dirname "$0")/.."
# NVLink multicast stays off in everything this script starts (NCCL, NVSHMEM).
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
out=${OUT:-gpu-check-out}
mkdir -p "$out"
bench=1 tests=1 run_ctest=1 sanitize=1 filter="" test_filter="" part_index=1 part_count=1 run_index=0 race_index=0 mem_index=0 benches="gemm,spmv,cg,precond,krylov,dist,spgemm,python"
while (($#)); do
  case $1 in
    --no-bench) bench=0 ;;
    --no-tests) tests=0 ;;
    --no-ctest) run_ctest=0 ;;
    --no-sanitizer) sanitize=0 ;;
    --bench-filter) filter=$2; shift ;;
    --test-filter) test_filter=$2; shift ;;
    --sanitizer-part)
      [[ $2 =~ ^([0-9]+)/([0-9]+)$ ]] && ((BASH_REMATCH[1] >= 1 && BASH_REMATCH[1] <= BASH_REMATCH[2])) ||
        { echo "--sanitizer-part needs K/P (1 <= K <= P), got '$2'"; exit 2; }
      part_index=${BASH_REMATCH[1]} part_count=${BASH_REMATCH[2]}; shift ;;
    --benches) benches=$2; shift ;;
    *) echo "unknown option $1"; exit 2 ;;
  esac
  shift
done
build=build-gpu
export PATH=/usr/local/cuda/bin:$PATH
summary=()
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/device.txt"

# The ordering libraries (METIS, SuiteSparse) where the machine has none: their Debian packages
# travel in .debs/ (downloaded with `apt-get download`, named in the device call's carry) and are
# unpacked beside it, never over /.
prefix=()
if ls .debs/*.deb > /dev/null 2>&1 && [ ! -f /usr/include/metis.h ]; then
  for f in .debs/*.deb; do dpkg -x "$f" .debs/root; done
  prefix=(-DCMAKE_PREFIX_PATH="$PWD/.debs/root/usr")
  # OpenBLAS's libblas.so.3 (CHOLMOD's and UMFPACK's BLAS, for the benchmark's peers) where carried.
  export LD_LIBRARY_PATH="$PWD/.debs/root/usr/lib/x86_64-linux-gnu:$PWD/.debs/root/usr/lib/x86_64-linux-gnu/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
arch=()
[ -n "${LA_CUDA_ARCH:-}" ] && arch=(-DCMAKE_CUDA_ARCHITECTURES="$LA_CUDA_ARCH")
cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release "${arch[@]}" "${prefix[@]}" -DLA_PTXAS_VERBOSE=ON \
  -DLA_BUILD_TESTS=ON -DLA_BUILD_BENCH=ON > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
grep -E "la: .*(found|not found)" "$out/configure.log" | sed 's/^-- //'
if cmake --build $build -j "$(nproc)" > "$out/build.log" 2>&1; then summary+=("build: ok"); else
  grep -E "error" -A3 "$out/build.log" | head -40; exit 1; fi

if ((tests && run_ctest)); then
  ctest --test-dir $build -j 8 --output-on-failure ${test_filter:+-R "$test_filter"} > "$out/ctest.log" 2>&1
  summary+=("ctest: $(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -1)")
  grep -E "\*\*\*Failed|\(Failed\)" "$out/ctest.log" | head -20
  grep -c "Skipped" "$out/ctest.log" | sed 's/^/skipped tests: /'

fi
if ((tests && sanitize)); then
  # Sanitizers run side by side on every GPU test binary. The deliberate out-of-memory test
  # is left out: memcheck reports its failed allocation.
  pids=()
  for t in $build/tests/gpu_test $build/tests/gemm_test $build/tests/debug_sync_test $build/tests/spmv_test \
           $build/tests/complex_spmv_test $build/tests/complex_device_test $build/tests/complex_direct_test $build/tests/cg_gpu_test $build/tests/precond_gpu_test $build/tests/dist_gpu_test \
           $build/tests/krylov_gpu_test $build/tests/spgemm_test $build/tests/amg_test $build/tests/registry_test \
           $build/tests/dgemm_test $build/tests/dense_solver_test $build/tests/batched_dense_test $build/tests/direct_test $build/tests/sparse_direct_test \
           $build/tests/direct_model_test; do
    name=$(basename "$t")
    [[ -n ${LA_SANITIZER_ONLY:-} && ! $name =~ ^(${LA_SANITIZER_ONLY})$ ]] && continue
    for tool in ${LA_SANITIZER_TOOLS:-memcheck racecheck}; do
      skip="*OutOfMemory*:*Huge*"
      # Under a sanitizer (LA_UNDER_SANITIZER=memcheck or racecheck below) the tests take fewer and smaller cases,
      # every kernel and path still reached (tests/test_util.hpp, under_sanitizer()), so
      # cg_gpu_test's every-format sweep and precond_gpu_test's preconditioned sweep run
      # under racecheck too.
      # gemm_test under racecheck leaves out the sweep of reg_tiled's tiles (80 s of it), whose
      # main loop it checks through split_k (the same loop on the 128x128x8 tile) and
      # reg_tiled's own entries.
      [[ $tool == racecheck && $name == gemm_test ]] && skip+=":*EveryRegTiledTileShape*"
      # krylov_gpu_test under racecheck: the solves of every method and preconditioner on
      # convection-diffusion, not the real matrices' thousands of iterations (memcheck runs
      # them: the same kernels).
      [[ $tool == racecheck && $name == krylov_gpu_test ]] && skip+=":*adder*:*gr_30_30*:*FloatConverges*:*Restarts*:*ExtremeRightHandSide*:*ToleranceBelow*:*convdiff3d*:*poisson2d*"
      # amg_test under racecheck: the hierarchy, cycle and update tests (every AMG kernel and
      # the SpGEMM's); the whole binary passed 300 s (H100, 2026-11-26), the PCG solves and the
      # device_solver reruns being the same kernels many times (memcheck runs them).
      [[ $tool == racecheck && $name == amg_test ]] && skip+=":*PcgIterations*:*DeviceSolver*"
      # The multi-GPU tests (2 and 4 GPUs, NCCL's kernels included): racecheck takes the
      # failing rank (the statuses test, its setup solves included, passed 280 s under it
      # beside the other sanitizer runs), memcheck all of them. The sweep and overlap test
      # runs the same kernels as the solves racecheck leaves out (the sweep changes which
      # rows a thread takes, not the shared-memory sums).
      [[ $tool == racecheck && $name == dist_gpu_test ]] && skip+=":*MatchesTheOneGpu*:*Generated*:*Rerun*:*Preconditioners*:*Statuses*:*SweptInterior*"
      # NCCL probes the device at initialization with calls that fail by design (kernel
      # images for other architectures, peer access already on); those API errors are not
      # reported for the NCCL binary, memory errors and races still are.
      api=()
      [[ $name == dist_gpu_test ]] && api=(--report-api-errors no)
      # racecheck serializes kernel launches, so a team's NCCL kernels on two GPUs, each
      # waiting for the other, never meet: dist_gpu_test on 2 H200s hung past 520 s in its
      # first two-GPU solve (2026-11-28) where memcheck passed it whole in 400 s. Under
      # racecheck it sees one GPU: every la kernel of a rank still runs (the one-rank team).
      devices=()
      [[ $tool == racecheck && $name == dist_gpu_test ]] && devices=(env CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-0}")
      devices=("${devices[@]/%,*/}")  # the first of the visible GPUs
      # The longest runs go as 2 or 3 gtest shards side by side. On 2 H200s (2026-11-28) the
      # 30 runs' longest took 399 s of tests (dist_gpu_test memcheck; cg_gpu_test's shards 388 s),
      # so the pass fits one 10-minute call after the build (bench/RESULTS.md, "The sanitizers").
      shards=1
      [[ -n ${LA_SANITIZER_SHARDS:-} ]] && shards=$LA_SANITIZER_SHARDS
      case "$name $tool" in
        "cg_gpu_test memcheck" | "cg_gpu_test racecheck" | "gemm_test racecheck") ((shards < 3)) && shards=3 ;;
        "precond_gpu_test memcheck" | "precond_gpu_test racecheck" | "krylov_gpu_test memcheck" | "gemm_test memcheck") ((shards < 2)) && shards=2 ;;
        # Cut at 440 s and again at 220 s under racecheck (H100, 2026-12-07: 6-13 of their 8-17
        # tests done, no hazard): three shards side by side.
        "krylov_gpu_test racecheck" | "amg_test racecheck" | "registry_test racecheck" | "dense_solver_test racecheck") ((shards < 3)) && shards=3 ;;
        "complex_device_test memcheck" | "complex_device_test racecheck") ((shards < 2)) && shards=2 ;;
      esac
      for ((i = 0; i < shards; ++i)); do
        # Each tool's runs alternate over the parts on their own, so every part gets its share
        # of the slow racecheck runs (counted over both tools, one part took every racecheck of
        # the long binaries: H100, 2026-12-07, part 1 done in 222 s, part 2 cut at 440 s).
        if [[ $tool == racecheck ]]; then run_index=$((race_index += 1)); else run_index=$((mem_index += 1)); fi
        ((part_count > 1 && (run_index - 1) % part_count != part_index - 1)) && continue
        what="$name $tool" log="$out/sanitizer-$name-$tool.log"
        ((shards > 1)) && what+=" (shard $((i + 1))/$shards)" log="${log%.log}-$i.log"
        LA_UNDER_SANITIZER=$tool GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout "${LA_SANITIZER_TIMEOUT:-480}" \
          "${devices[@]}" compute-sanitizer --tool $tool "${api[@]}" --error-exitcode 99 "$t" --gtest_filter=-"$skip" > "$log" 2>&1 &
        pids+=("$!:$what:$log")
      done
    done
  done
  for p in "${pids[@]}"; do
    pid=${p%%:*} rest=${p#*:} what=${rest%%:*} log=${rest#*:}
    if wait "$pid"; then summary+=("sanitizer $what: clean ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | sed 's/=* *//'))")
    else summary+=("sanitizer $what: FAILED (rc $?, $(basename "$log"))"); grep -m5 -E "=====.*(Invalid|Race|Error)" "$log"; fi
  done
fi

if ((bench)) && [[ ,$benches, == *,gemm,* ]]; then
  b=$build/bench/gemm_bench
  "$b" ${filter:+--benchmark_filter="$filter"} --benchmark_min_time=0.2 --benchmark_out="$out/gemm_bench.json" \
    --benchmark_out_format=json > "$out/gemm_bench.log" 2>&1
  summary+=("gemm_bench: exit $?")
  python3 bench/summarize.py "$out/gemm_bench.json" >> "$out/table.txt" 2>&1
  python3 bench/plot_gemm.py "$out/gemm_bench.json" "$out/gemm.svg" --title "GEMM on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" \
    || summary+=("plot_gemm: failed")
  $build/bench/wmma_peak | tee "$out/wmma_peak.txt" >> "$out/table.txt"
fi
if ((bench)) && [[ ,$benches, == *,spmv,* ]]; then
  LA_SPMV_OUT="$out/spmv.csv" $build/bench/spmv_bench ${filter:+--benchmark_filter="$filter"} \
    --benchmark_out="$out/spmv_bench.json" --benchmark_out_format=json > "$out/spmv_bench.log" 2>&1
  summary+=("spmv_bench: exit $?")
  sed -n '/^device:/,$p' "$out/spmv_bench.log" >> "$out/table.txt"
fi
if ((bench)) && [[ ,$benches, == *,cg,* ]]; then
  # shellcheck disable=SC2086
  $build/bench/cg_bench --out "$out/cg.csv" ${LA_CG_ARGS:-} > "$out/cg_bench.log" 2> "$out/cg_bench.err"
  summary+=("cg_bench: exit $?")
  cat "$out/cg_bench.log" >> "$out/table.txt"
fi
if ((bench)) && [[ ,$benches, == *,precond,* ]]; then
  # shellcheck disable=SC2086
  $build/bench/precond_bench --out "$out/precond.csv" ${LA_PRECOND_ARGS:-} > "$out/precond_bench.log" 2> "$out/precond_bench.err"
  summary+=("precond_bench: exit $?")
  cat "$out/precond_bench.log" >> "$out/table.txt"
fi
if ((bench)) && [[ ,$benches, == *,krylov,* ]]; then
  # shellcheck disable=SC2086
  $build/bench/krylov_bench --out "$out/krylov.csv" ${LA_KRYLOV_ARGS:-} > "$out/krylov_bench.log" 2> "$out/krylov_bench.err"
  summary+=("krylov_bench: exit $?")
  cat "$out/krylov_bench.log" >> "$out/table.txt"
  if python3 -c "import cupy" 2> /dev/null; then
    # shellcheck disable=SC2086
    python3 bench/cupy_krylov.py --out "$out/cupy_krylov.csv" ${LA_CUPY_ARGS:-} > "$out/cupy_krylov.log" 2>&1
    summary+=("cupy_krylov: exit $?")
    cat "$out/cupy_krylov.log" >> "$out/table.txt"
  fi
fi
if ((bench)) && [[ ,$benches, == *,spgemm,* ]]; then
  # shellcheck disable=SC2086
  $build/bench/spgemm_bench --out "$out/spgemm.csv" ${LA_SPGEMM_ARGS:-} > "$out/spgemm_bench.log" 2> "$out/spgemm_bench.err"
  summary+=("spgemm_bench: exit $?")
  cat "$out/spgemm_bench.log" >> "$out/table.txt"
fi
if ((bench)) && [[ ,$benches, == *,python,* ]]; then
  if [ -d $build/python/la ]; then
    # shellcheck disable=SC2086
    PYTHONPATH=$build/python python3 -W ignore bench/python_bench.py --out "$out/python.csv" ${LA_PYTHON_ARGS:-} \
      > "$out/python_bench.log" 2> "$out/python_bench.err"
    summary+=("python_bench: exit $?")
    cat "$out/python_bench.log" >> "$out/table.txt"
  else
    summary+=("python_bench: not run (the Python package was not built: see configure.log)")
  fi
fi
if ((bench)) && [[ ,$benches, == *,complex,* ]]; then
  # Complex values (issue 69): SpMV against cusparseSpMV and the dense LU against zgetrf, then
  # the Krylov methods against CuPy's gmres and the host LU against scipy's spsolve.
  $build/bench/complex_bench --out "$out/complex.csv" > "$out/complex_bench.log" 2>&1
  summary+=("complex_bench: exit $?")
  cat "$out/complex_bench.log" >> "$out/table.txt"
  python3 bench/plot_complex.py "$out/complex.csv" "$out/complex.svg" || summary+=("plot_complex: failed")
  if [ -d $build/python/la ]; then
    PYTHONPATH=$build/python python3 -W ignore bench/cupy_complex.py --out "$out/cupy-complex.csv" > "$out/cupy_complex.log" 2>&1
    summary+=("cupy_complex: exit $?")
    cat "$out/cupy_complex.log" >> "$out/table.txt"
  fi
fi
if ((bench)) && [[ ,$benches, == *,dist,* ]]; then
  # shellcheck disable=SC2086
  $build/bench/dist_bench --out "$out/dist.csv" ${LA_DIST_ARGS:-} > "$out/dist_bench.log" 2> "$out/dist_bench.err"
  summary+=("dist_bench: exit $?")
  cat "$out/dist_bench.log" >> "$out/table.txt"
fi
# Not in the default list (they take minutes): the direct method's systems and the batches,
# each with the ordering libraries the configure found (LD_LIBRARY_PATH above).
if ((bench)) && [[ ,$benches, == *,direct,* ]]; then
  # shellcheck disable=SC2086
  PYTHONPATH=$build/python python3 -W ignore bench/direct_bench.py --out "$out/direct.csv" ${LA_DIRECT_ARGS:-} \
    > "$out/direct_bench.log" 2>&1
  summary+=("direct_bench: exit $?")
  cat "$out/direct_bench.log" >> "$out/table.txt"
fi
if ((bench)) && [[ ,$benches, == *,batched,* ]]; then
  $build/tools/la bench gesv --batch --out "$out/gesv-batch.csv" > "$out/gesv_batch.log" 2>&1
  summary+=("la bench gesv --batch: exit $?")
  # The batches, then single systems (2-D arrays: la's dense solver) against CuPy and torch.
  PYTHONPATH=$build/python python3 -W ignore bench/batched_bench.py --device gpu --out "$out/batched.csv" \
    --shapes "10000x8,10000x16,10000x32,10000x64,1000x128,1000x256,1x64,1x128,1x1024,1x4096,1x8192" \
    > "$out/batched_bench.log" 2>&1
  summary+=("batched_bench: exit $?")
  cat "$out/gesv_batch.log" "$out/batched_bench.log" >> "$out/table.txt"
fi
# la's dense LU and Cholesky against cuSOLVER at every size, look-ahead on and off (--ablate).
if ((bench)) && [[ ,$benches, == *,gesv,* ]]; then
  $build/tools/la bench gesv --ablate --out "$out/gesv.csv" > "$out/gesv.log" 2>&1
  summary+=("la bench gesv: exit $?")
  $build/tools/la bench dgemm --sizes 2048,4096,8192 --out "$out/dgemm.csv" > "$out/dgemm.log" 2>&1
  summary+=("la bench dgemm: exit $?")
  cat "$out/gesv.log" "$out/dgemm.log" >> "$out/table.txt"
fi
# Registers, shared memory and spills per kernel (present when the library was recompiled).
grep -A3 "Compiling entry" "$out/build.log" | grep -E "entry|Used|spill" > "$out/ptxas.txt"

# The device tool brings back few files: the logs travel as one archive.
(cd "$out" && tar czf logs.tar.gz --remove-files $(ls | grep -vE '^(table.txt|spmv.csv|cg.csv|precond.csv|krylov.csv|cupy_krylov.csv|dist.csv|spgemm.csv|python.csv|direct.csv|gesv-batch.csv|batched.csv|gesv.csv|dgemm.csv|device.txt|logs.tar.gz)$'))

echo
[ -f "$out/table.txt" ] && cat "$out/table.txt"
echo
echo "==== summary ($(cat "$out/device.txt")) ===="
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
