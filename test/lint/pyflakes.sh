#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# lint.pyflakes: pyflakes3 on every tracked Python file (*.py and any file whose first line names
# python). scripts/test.sh installs pyflakes3.
set -euo pipefail
cd "${KPERF_SRC:-$(dirname "$0")/../..}"
command -v pyflakes3 >/dev/null || { echo "FAIL: pyflakes3 missing (scripts/test.sh installs it)"; exit 1; }
files=()
while IFS= read -r f; do
    case "$f" in
    *.py) files+=("$f") ;;
    *) [ -f "$f" ] && head -n1 "$f" | grep -q '^#!.*python' && files+=("$f") ;;
    esac
done < <(git ls-files)
echo "pyflakes3: ${#files[@]} Python files"
pyflakes3 "${files[@]}"
