#!/usr/bin/env bash
# Installs the built la into a scratch prefix, checks what was installed, builds the consumer
# project against it with find_package(la), and runs it. Arguments: BUILD_DIR SOURCE_DIR SCRATCH_DIR
set -euo pipefail
build=$1 src=$2 scratch=$3
rm -rf "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" > "$scratch.install.log" 2>&1 || { cat "$scratch.install.log"; exit 1; }
inc=$scratch/prefix/include
fail() { echo "install check: $*"; exit 1; }
# Consumers include <la/...> from <prefix>/include: nothing else lands beside la/.
[ "$(ls "$inc")" = "la" ] || fail "include/ holds more than la/: $(ls "$inc")"
[ -f "$inc/la/la.hpp" ] || fail "no umbrella header include/la/la.hpp"
# The core headers sit at the namespace's root (<la/context.hpp>), the folders beside them.
[ -f "$inc/la/context.hpp" ] && [ -f "$inc/la/formats/csr.hpp" ] && [ -f "$inc/la/solvers/cg.hpp" ] ||
  fail "expected include/la/context.hpp, include/la/formats/csr.hpp, include/la/solvers/cg.hpp"
[ ! -e "$inc/la/la" ] || fail "include/la/la/ exists: the core headers belong at include/la/"
# Kernel-internal headers (detail/ folders) and the vendor comparisons are not installed.
found=$(find "$inc" -name 'variants.hpp' -o -path '*vendor*' -o -path '*/detail/*')
[ -z "$found" ] || fail "implementation-only headers installed: $found"
# The public device headers are, and compile on their own from the installed tree.
[ -f "$inc/la/grid.cuh" ] && [ -f "$inc/la/kernels/spmv/walks.cuh" ] ||
  fail "expected the public device headers include/la/grid.cuh and include/la/kernels/spmv/walks.cuh"
nvcc=${LA_NVCC:-$(command -v nvcc || true)}
if [ -n "$nvcc" ]; then
  mkdir -p "$scratch/cuh"
  printf '#include <la/kernels/spmv/walks.cuh>\n__global__ void k(la::walk::thread_rows<la::walk::csr_rows<double, int>> w, const double* x, double* y) {\n  w.each(x, [&](long long i, double v) { y[i] = v; });\n}\n' > "$scratch/cuh/walks.cu"
  "$nvcc" -std=c++17 -arch=sm_90 -c "$scratch/cuh/walks.cu" -o "$scratch/cuh/walks.o" -I"$inc" ||
    fail "the installed <la/kernels/spmv/walks.cuh> does not compile on its own"
fi
! grep -rlE 'include *[<"](cublas|cusparse)' "$inc" || fail "installed headers include cuBLAS/cuSPARSE"
gen=()
command -v ninja > /dev/null && gen=(-G Ninja)
cmake -S "$src/tests/install/consumer" -B "$scratch/build" "${gen[@]}" -DCMAKE_PREFIX_PATH="$scratch/prefix" -DCMAKE_BUILD_TYPE=Release
cmake --build "$scratch/build"
# la::la brings the CUDA runtime alone: the consumer links no vendor library.
! ldd "$scratch/build/consumer" | grep -E 'libcublas|libcusparse' || fail "the consumer links cuBLAS/cuSPARSE"
"$scratch/build/consumer"

# The README's embedding example, exactly as the README shows it: its cmake and cpp blocks
# under "## Embedding", built against the installed package and run on a bundled system (on
# a machine without a GPU it ends after the host part, saying so).
readme=$scratch/readme
mkdir -p "$readme"
awk -v want=cmake '/^## Embedding/{on=1} on && $0=="```"want{b=1; next} b && $0=="```"{exit} b' "$src/README.md" > "$readme/CMakeLists.txt"
awk -v want=cpp '/^## Embedding/{on=1} on && $0=="```"want{b=1; next} b && $0=="```"{exit} b' "$src/README.md" > "$readme/main.cpp"
grep -q find_package "$readme/CMakeLists.txt" || fail "no cmake block under '## Embedding' in README.md"
grep -q 'int main' "$readme/main.cpp" || fail "no complete cpp program under '## Embedding' in README.md"
cmake -S "$readme" -B "$readme/build" "${gen[@]}" -DCMAKE_PREFIX_PATH="$scratch/prefix" -DCMAKE_BUILD_TYPE=Release > "$readme.log" 2>&1 ||
  { cat "$readme.log"; fail "the README's embedding example does not configure"; }
cmake --build "$readme/build" >> "$readme.log" 2>&1 || { cat "$readme.log"; fail "the README's embedding example does not build"; }
out=$("$readme/build/app" "$src/data/gr_30_30.mtx") || { echo "$out"; fail "the README's embedding example failed"; }
echo "$out"
echo "$out" | grep -q '^host: converged' || fail "the README example's host solve did not converge"
echo "$out" | grep -q '^gpu: ' || fail "the README example printed no GPU line"
# Run with no argument (no A.mtx here), it says why and exits 2: la's error, caught.
set +e
err=$(cd "$readme" && ./build/app 2>&1)
rc=$?
set -e
[ "$rc" -eq 2 ] || { echo "$err"; fail "the README example without an argument exited $rc, not 2"; }
echo "$err" | grep -q "^app: .*A.mtx" || { echo "$err"; fail "the README example without an argument printed no la message"; }
