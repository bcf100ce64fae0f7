#!/usr/bin/env bash
# An MPI runtime without its headers (Debian's openmpi-bin without libopenmpi-dev) must leave
# the configure working, with `la solve --mpi` said disabled: FindMPI's try_compile used to
# fail the whole configure there. A stand-in mpicc that cannot include <mpi.h> goes first on
# PATH. Arguments: SOURCE_DIR SCRATCH_DIR CUDA_COMPILER
set -euo pipefail
src=$1 scratch=$2 nvcc=$3
rm -rf "$scratch"
mkdir -p "$scratch/bin"
cat > "$scratch/bin/mpicc" <<'SH'
#!/bin/sh
echo "fatal error: mpi.h: No such file or directory" >&2
exit 1
SH
cp "$scratch/bin/mpicc" "$scratch/bin/mpicxx"
chmod +x "$scratch/bin/mpicc" "$scratch/bin/mpicxx"
gen=()
command -v ninja > /dev/null && gen=(-G Ninja)
if ! PATH="$scratch/bin:$PATH" cmake -S "$src" -B "$scratch/build" "${gen[@]}" -DCMAKE_CUDA_COMPILER="$nvcc" \
    -DLA_BUILD_TESTS=OFF -DLA_BUILD_TOOLS=OFF > "$scratch/configure.log" 2>&1; then
  cat "$scratch/configure.log"
  echo "mpi probe: the configure failed with an MPI wrapper that cannot include <mpi.h>"
  exit 1
fi
if grep -q "NCCL .*CG on several GPUs enabled" "$scratch/configure.log"; then
  grep -q "cannot include <mpi.h>" "$scratch/configure.log" ||
    { cat "$scratch/configure.log"; echo "mpi probe: no message about the MPI without headers"; exit 1; }
fi
grep -q "la solve --mpi. enabled" "$scratch/configure.log" &&
  { echo "mpi probe: --mpi enabled with an MPI that has no headers"; exit 1; }
rm -rf "$scratch"
echo "mpi probe: configured, --mpi disabled and said so"
