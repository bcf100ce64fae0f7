#!/usr/bin/env bash
# docs/options.md holds `la options`'s output between its two markers: the option, method and
# preconditioner tables produced from the registry (la/solvers/registry.hpp). Fails, with the
# difference, when the file and the registry disagree; `la options` prints the text to paste.
set -euo pipefail
la=$1 doc=$2
want=$(sed -n '/^<!-- la options: begin -->$/,/^<!-- la options: end -->$/p' "$doc" | sed '1d;$d')
[ -n "$want" ] || { echo "$doc has no '<!-- la options: begin -->' ... '<!-- la options: end -->' section"; exit 1; }
diff -u <(printf '%s\n' "$want") <("$la" options) && echo "docs/options.md matches the registry"
