#!/usr/bin/env bash
# Static SASS instruction mix of each kernel in an object file or binary (needs cuobjdump,
# so run it on the GPU machine): total instructions, FFMA (share), LDS, STS, LDG, BAR.
# Usage: tools/sass-mix.sh build-gpu/CMakeFiles/la.dir/kernels/gemm/reg_tiled.cu.o
set -euo pipefail
cuobjdump -sass "$1" | awk '
function report() { if (name != "") printf "%-70s total %6d FFMA %6d (%.1f%%) LDS %5d STS %4d LDG %4d BAR %3d\n", name, tot, ffma, 100 * ffma / tot, lds, sts, ldg, bar }
/Function :/ { report(); name = $3; tot = ffma = lds = sts = ldg = bar = 0; next }
/^ +\/\*[0-9a-f]+\*\// { tot++; if ($0 ~ / FFMA/) ffma++; if ($0 ~ / LDS/) lds++; if ($0 ~ / STS/) sts++; if ($0 ~ / LDG/) ldg++; if ($0 ~ / BAR/) bar++ }
END { report() }'
