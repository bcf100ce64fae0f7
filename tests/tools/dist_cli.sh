#!/usr/bin/env bash
# la solve on several GPUs through the CLI, in both launch modes: `--gpus N` (one process)
# and `mpirun -n N ... --mpi` (one rank a GPU) give bit-identical solutions (one code path),
# a rerun gives the same bits, and the iterations are within 1% of the one-GPU solve; on 2
# GPUs and, when present, 4. Exits 77 (skipped) with fewer than 2 GPUs, or without NCCL or MPI.
# usage: dist_cli.sh LA_BINARY SOURCE_DIR
set -uo pipefail
la=$1 src=$2
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
gpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU')
((gpus >= 2)) || { echo "skipped: needs 2 GPUs, $gpus visible"; exit 77; }
command -v mpirun > /dev/null || { echo "skipped: no mpirun"; exit 77; }
mpi=(mpirun -n)
if mpirun --version 2>&1 | grep -q "Open MPI"; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  mpi=(mpirun --oversubscribe -x NCCL_NVLS_ENABLE -x NVSHMEM_DISABLE_NVLS -n)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
iterations() { sed -n 's/^status: *converged after \([0-9]*\) iterations.*/\1/p' "$1"; }
for sys in gen:poisson3d:48 "$src/data/bcsstk21.mtx"; do
  for n in 2 4; do
    ((n <= gpus)) || continue
    name=$(basename "$sys")
    "$la" solve "$sys" --precond jacobi --quiet -o "$tmp/one.mtx" > "$tmp/one.txt" 2>&1
    "$la" solve "$sys" --precond jacobi --gpus "$n" --quiet -o "$tmp/g.mtx" > "$tmp/g.txt" 2>&1
    "$la" solve "$sys" --precond jacobi --gpus "$n" --quiet -o "$tmp/g2.mtx" > "$tmp/g2.txt" 2>&1
    "${mpi[@]}" "$n" "$la" solve "$sys" --precond jacobi --mpi --quiet -o "$tmp/m.mtx" > "$tmp/m.txt" 2>&1
    one=$(iterations "$tmp/one.txt") g=$(iterations "$tmp/g.txt") m=$(iterations "$tmp/m.txt")
    if [[ -z $one || -z $g || -z $m ]]; then
      echo "FAIL $name on $n: a solve did not converge"; cat "$tmp/one.txt" "$tmp/g.txt" "$tmp/m.txt"; fail=1; continue
    fi
    cmp -s "$tmp/g.mtx" "$tmp/m.mtx" || { echo "FAIL $name on $n: --gpus and --mpi solutions differ"; fail=1; }
    cmp -s "$tmp/g.mtx" "$tmp/g2.mtx" || { echo "FAIL $name on $n: a rerun differs"; fail=1; }
    if ((100 * (g > one ? g - one : one - g) > one && (g > one ? g - one : one - g) > 1)); then
      echo "FAIL $name on $n: $g iterations, one GPU $one (more than 1% apart)"; fail=1
    fi
    echo "$name on $n GPUs: $g iterations (--gpus), $m (--mpi), one GPU $one; solutions identical across modes"
  done
done
# FSAI built on each GPU's rows: converged, and the same bits in both modes.
"$la" solve "$src/data/bcsstk21.mtx" --precond fsai --gpus 2 --quiet -o "$tmp/f.mtx" > "$tmp/f.txt" 2>&1
"${mpi[@]}" 2 "$la" solve "$src/data/bcsstk21.mtx" --precond fsai --mpi --quiet -o "$tmp/fm.mtx" > "$tmp/fm.txt" 2>&1
f=$(iterations "$tmp/f.txt")
if [[ -z $f ]] || ! cmp -s "$tmp/f.mtx" "$tmp/fm.mtx"; then
  echo "FAIL bcsstk21 with fsai on 2 GPUs: not converged, or --gpus and --mpi differ"; cat "$tmp/f.txt" "$tmp/fm.txt"; fail=1
else
  echo "bcsstk21 with fsai on each GPU's block, 2 GPUs: $f iterations; solutions identical across modes"
fi
# A rank that fails ends the MPI job (no hang): a right-hand side of the wrong length.
printf '%%%%MatrixMarket matrix array real general\n3 1\n1\n2\n3\n' > "$tmp/b.mtx"
timeout 120 "${mpi[@]}" 2 "$la" solve "$src/data/bcsstk21.mtx" --rhs "$tmp/b.mtx" --mpi > "$tmp/bad.txt" 2>&1
rc=$?
if ((rc == 0 || rc == 124)); then echo "FAIL: a bad right-hand side under --mpi gave rc $rc"; cat "$tmp/bad.txt"; fail=1; fi
grep -q "right-hand side has 3 entries" "$tmp/bad.txt" || { echo "FAIL: no message for the bad right-hand side"; cat "$tmp/bad.txt"; fail=1; }
exit $fail
