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
# Kernel-internal headers and the vendor comparisons are not installed.
found=$(find "$inc" -name '*.cuh' -o -name 'variants.hpp' -o -path '*vendor*')
[ -z "$found" ] || fail "implementation-only headers installed: $found"
! grep -rlE 'include *[<"](cublas|cusparse)' "$inc" || fail "installed headers include cuBLAS/cuSPARSE"
gen=()
command -v ninja > /dev/null && gen=(-G Ninja)
cmake -S "$src/tests/install/consumer" -B "$scratch/build" "${gen[@]}" -DCMAKE_PREFIX_PATH="$scratch/prefix" -DCMAKE_BUILD_TYPE=Release
cmake --build "$scratch/build"
# la::la brings the CUDA runtime alone: the consumer links no vendor library.
! ldd "$scratch/build/consumer" | grep -E 'libcublas|libcusparse' || fail "the consumer links cuBLAS/cuSPARSE"
"$scratch/build/consumer"
