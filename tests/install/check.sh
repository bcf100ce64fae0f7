#!/usr/bin/env bash
# Installs the built la into a scratch prefix, builds the consumer project against it with
# find_package(la), and runs it. Arguments: BUILD_DIR SOURCE_DIR SCRATCH_DIR
set -euo pipefail
build=$1 src=$2 scratch=$3
rm -rf "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" > "$scratch.install.log" 2>&1 || { cat "$scratch.install.log"; exit 1; }
gen=()
command -v ninja > /dev/null && gen=(-G Ninja)
cmake -S "$src/tests/install/consumer" -B "$scratch/build" "${gen[@]}" -DCMAKE_PREFIX_PATH="$scratch/prefix" -DCMAKE_BUILD_TYPE=Release
cmake --build "$scratch/build"
"$scratch/build/consumer"
