#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# lint.pyflakes: pyflakes3 on every tracked Python file (*.py and any file whose first line names
# python). scripts/test.sh installs pyflakes3.
set -euo pipefail
cd "${KPERF_SRC:-$(dirname "$0")/../..}"
command -v pyflakes3 >/dev/null || { echo "FAIL: pyflakes3 missing (scripts/test.sh installs it)"; exit 1; }
mapfile -t files < <(git ls-files '*.py')
# files without the extension whose first line names the interpreter (git grep finds the few
# candidates; spawning head for each of ~1000 tracked files took 40 s on a busy VM)
while IFS= read -r f; do
    case "$f" in *.py) continue ;; esac
    head -n1 "$f" | grep -Eq '^#!.*python' && files+=("$f")
done < <(git grep -lIE '^#!.*python')
echo "pyflakes3: ${#files[@]} Python files"
pyflakes3 "${files[@]}"
