#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# lint.shellcheck: shellcheck on every tracked shell script (*.sh, *.inc, and any file whose
# first line names sh or bash), following sourced files (-x). The checks left out, and why, are
# in .shellcheckrc at the top of the repository. scripts/test.sh installs shellcheck.
set -euo pipefail
cd "${KPERF_SRC:-$(dirname "$0")/../..}"
command -v shellcheck >/dev/null || { echo "FAIL: shellcheck missing (scripts/test.sh installs it)"; exit 1; }
mapfile -t files < <(git ls-files '*.sh' '*.inc')
# files without the extension whose first line names the interpreter (git grep finds the few
# candidates; spawning head for each of ~1000 tracked files took 40 s on a busy VM)
while IFS= read -r f; do
    case "$f" in *.sh | *.inc) continue ;; esac
    head -n1 "$f" | grep -Eq '^#!.*\b(ba)?sh\b' && files+=("$f")
done < <(git grep -lIE '^#!.*\b(ba)?sh\b')
echo "shellcheck: ${#files[@]} shell scripts"
shellcheck -x "${files[@]}"
