#!/usr/bin/env bash
# A/B timing of the SpMV kernels: another commit's spmv_bench against this tree's, built side
# by side and run alternately (twice each) in one process tree on one GPU, so the ratio is
# free of the drift between separate runs.
#   tools/ab-spmv.sh prepare COMMIT   here (needs git): archives COMMIT into build-base/
#   tools/ab-spmv.sh run              on the GPU machine (carry build-base): writes
#                                     $OUT/{base,new}-{1,2}.csv and .log
# M (environment): the matrices, comma-separated (default: four generated ones).
set -euo pipefail
case ${1:-} in
  prepare)
    mkdir -p build-base
    git archive --format=tar.gz -o build-base/base.tar.gz "${2:?commit}" -- . ':!data' ':!bench/results'
    echo "build-base/base.tar.gz: $(git rev-parse --short "$2")" ;;
  run)
    export PATH=/usr/local/cuda/bin:$PATH
    root=$(pwd) out=${OUT:-build-base/out}
    mkdir -p "$out" build-base/src && tar xzf build-base/base.tar.gz -C build-base/src
    for t in base new; do
      src=$root; [ $t = base ] && src=$root/build-base/src
      cmake -S "$src" -B build-base/$t -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DLA_BUILD_TESTS=OFF -DLA_BUILD_BENCH=ON > build-base/$t.cfg.log 2>&1 || { tail -20 build-base/$t.cfg.log; exit 1; }
      cmake --build build-base/$t --target spmv_bench -j "$(nproc)" > build-base/$t.build.log 2>&1 ||
        { grep -A3 error build-base/$t.build.log | head -30; exit 1; }
    done
    export LA_SPMV_MATRICES=${M:-gen:rmat:22:16,gen:denserows:4000000:8:16:200000,gen:poisson3d:256,gen:random:4000000:16}
    for r in 1 2; do
      for t in base new; do LA_SPMV_OUT=$out/$t-$r.csv build-base/$t/bench/spmv_bench > "$out/$t-$r.log" 2>&1; done
    done
    ls "$out" ;;
  *) echo "usage: tools/ab-spmv.sh prepare COMMIT | run" >&2; exit 2 ;;
esac
