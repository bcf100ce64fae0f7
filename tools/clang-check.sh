#!/usr/bin/env bash
# Compiles every C++ translation unit of a configured build with clang++ (syntax and semantics,
# no code generated): the library, the CLI, the tests and the Python binding must be C++17 as
# GCC and Clang both accept it. The CUDA files stay with nvcc. Usage: tools/clang-check.sh [BUILD_DIR]
# (configured with CMAKE_EXPORT_COMPILE_COMMANDS=ON, as tools/test.sh does).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
db="$build/compile_commands.json"
[ -f "$db" ] || { echo "clang-check: $db is missing (configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)"; exit 1; }
clang=$(command -v clang++ || command -v clang++-14 || true)
[ -n "$clang" ] || { echo "clang-check: clang++ not found (apt-get install clang)"; exit 1; }
python3 - "$db" "$clang" <<'PY'
import json, shlex, subprocess, sys, concurrent.futures, os
db, clang = sys.argv[1], sys.argv[2]
units = [e for e in json.load(open(db)) if e["file"].endswith(".cpp")]
def check(e):
    args = shlex.split(e["command"]) if "command" in e else list(e["arguments"])
    # The compiler and the output dropped; -fsyntax-only checks the whole translation unit.
    out, keep, skip = [clang, "-fsyntax-only", "-Wno-unknown-warning-option"], [], False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or a.startswith("-flto") or a.startswith("-fno-fat-lto"):
            continue
        out.append(a)
    r = subprocess.run(out, cwd=e["directory"], capture_output=True, text=True)
    return e["file"], r.returncode, r.stderr
failed = 0
with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as ex:
    for f, rc, err in ex.map(check, units):
        if rc:
            failed += 1
            print("clang++: " + f + "\n" + err[-3000:])
print("clang-check: %d of %d C++ translation units compile with %s" % (len(units) - failed, len(units), clang))
sys.exit(1 if failed else 0)
PY
