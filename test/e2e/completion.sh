#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kperf completion bash|zsh|fish: the bash script completes subcommands, flags (from the flag
# tables), the values of --scenarios/--tests (comma lists too), -o per command, --format,
# --image-pull-policy, files and directories, for kperf and kubectl-kperf; every -o value it
# offers is one kperf accepts; zsh (through bashcompinit) registers it and gets the same
# candidates; fish completes the same words. Bad input: a clear error and exit 2. kperf --help
# lists the same commands.
# zsh and fish come from scripts/test.sh's package list.
set -euo pipefail
# shellcheck source=test/e2e/lib/harness.sh
. "$(dirname "$0")/lib/harness.sh"
KPERF="${KPERF_BIN:?}/kperf"
[ -x "$KPERF" ] || { echo "no $KPERF"; exit 77; }
declare tmp # set by h_tmpdir
h_tmpdir tmp completion

"$KPERF" completion bash >"$tmp/c.bash"
"$KPERF" completion zsh >"$tmp/c.zsh"
"$KPERF" completion fish >"$tmp/c.fish"
bash -n "$tmp/c.bash" || fail "bash script does not parse"

# 1. bash: COMP_WORDS as bash splits the line (COMP_WORDBREAKS holds '=': --tests=X is 3 words)
mkdir -p "$tmp/d/out-a" "$tmp/d/out-b"
touch "$tmp/d/base.json" "$tmp/d/new.json"
cat >"$tmp/cases" <<EOF
kperf ''|run compare report history cleanup manifests watch version completion --help --version
kperf ru|run
kperf co|compare completion
kperf run --sce|--scenarios
kperf run --scenarios ''|all pod-to-pod host-to-host pod-to-service pod-to-external pod-to-dns
kperf run --scenarios pod-to-pod,h|pod-to-pod,host-to-host
kperf run --tests = TCP_S|TCP_STREAM TCP_STREAM_MULTI
kperf run --tests UDP|UDP_RR UDP_STREAM
kperf run -o ''|table markdown json csv openmetrics
kperf run --image-pull-policy I|IfNotPresent
kperf run --duration ''|
kperf run --kube|--kubeconfig
kperf run --output-dir $tmp/d/out|$tmp/d/out-a $tmp/d/out-b
kperf report $tmp/d/b|$tmp/d/base.json
kperf report x.json -o ''|table markdown csv html json openmetrics
kperf compare a.json b.json --output ''|table markdown json html
kperf compare $tmp/d/base.json $tmp/d/n|$tmp/d/new.json
kperf compare --thr|--threshold --thresholds
kperf manifests --fo|--format
kperf manifests --format ''|yaml json
kperf manifests --scen|--scenarios
kperf cleanup --|--kubeconfig --context --namespace --run-id --timeout --dry-run --force --help
kperf completion ''|bash zsh fish
kperf watch --max|--max-outage
kubectl-kperf run --same|--same-node
EOF
run_case() { # WORDS...: prints the candidates, space-separated
    bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _kperf; echo "${COMPREPLY[*]}"' \
        _ "$tmp/c.bash" "$@"
}
n=0
while IFS='|' read -r line want; do
    words=() # set by the eval: the case's words, quoted as a shell would
    eval "words=($line)"
    got=$(run_case "${words[@]}")
    n=$((n + 1))
    # the shell sorts what it shows; compgen -d/-f lists in directory order
    [ "$(tr ' ' '\n' <<<"$got" | sort | tr '\n' ' ')" = "$(tr ' ' '\n' <<<"$want" | sort | tr '\n' ' ')" ] ||
        fail "bash: '$line': got '$got', want '$want'"
done <"$tmp/cases"

# cleanup's flags are its table's: the case above must list them all
want=$("$KPERF" cleanup --help | grep -o -- '--[a-z][a-z-]*' | sort -u | tr '\n' ' ')
got=$(run_case kperf cleanup -- | tr ' ' '\n' | sort -u | tr '\n' ' ')
[ "$got" = "$want" ] || fail "bash: cleanup flags '$got' are not those of its --help '$want'"
# every run flag of --help is offered
want=$("$KPERF" run --help | grep -o -- '^ *\(-., \)\?--[a-z][a-z-]*' | grep -o -- '--[a-z-]*' | sort -u | tr '\n' ' ')
got=$(run_case kperf run -- | tr ' ' '\n' | sort -u | tr '\n' ' ')
[ "$got" = "$want" ] || fail "bash: run flags '$got' differ from its --help '$want'"

# the top-level help lists every command the completion offers, and watch (which runs on a
# cluster as well as --local) is not described as --local only
"$KPERF" --help >"$tmp/help"
for c in run compare report history cleanup manifests watch version completion; do
    grep -q "^  $c " "$tmp/help" || fail "kperf --help does not list $c"
done
grep -q '^  watch .*--local' "$tmp/help" && fail "kperf --help: watch marked --local: $(grep '^  watch' "$tmp/help")"

# 2. every offered -o value is accepted (missing files: exit 1), a made-up one is not (exit 2)
accepts() { # EXPECTED-RC CMD...
    local rc=0 want=$1
    shift
    "$KPERF" "$@" >/dev/null 2>&1 || rc=$?
    [ "$rc" = "$want" ] || fail "kperf $*: exit $rc, want $want"
}
for v in $(run_case kperf run -o ''); do accepts 0 manifests --format json -o "$v"; done
for v in $(run_case kperf report x -o ''); do accepts 1 report /nonexistent.json -o "$v"; done
for v in $(run_case kperf compare x y -o ''); do accepts 1 compare /nonexistent /nonexistent -o "$v"; done
for v in $(run_case kperf run --tests ''); do accepts 0 manifests --format json --tests "$v"; done
for v in $(run_case kperf run --scenarios ''); do
    accepts 0 manifests --format json --scenarios "$v" --external-server 192.0.2.1
done
accepts 2 report /nonexistent.json -o yaml
accepts 2 completion tcsh
accepts 2 completion
accepts 2 completion bash zsh
msg=$("$KPERF" completion tcsh 2>&1) || true
[ "$msg" = "kperf: error: 'kperf completion' takes one shell: bash, zsh or fish. Run 'kperf completion --help' for usage." ] ||
    fail "completion tcsh: $msg"

# 3. zsh: bashcompinit registers the function for both names; its compgen returns the candidates
# unfiltered (zsh's compadd filters by prefix later), so the expected ones must be among them
zsh_out=$(HOME=$tmp zsh -f -c 'autoload -U +X compinit && compinit -u -d "$HOME/zcd"; source "$1"
    print -r -- "${_comps[kperf]}|${_comps[kubectl-kperf]}"
    setopt ksharrays
    COMP_WORDS=(kperf run --scenarios pod-to-pod,h); COMP_CWORD=3; _kperf; print -r -- "${COMPREPLY[*]}"
    COMP_WORDS=(kperf report x.json -o h); COMP_CWORD=4; _kperf; print -r -- "${COMPREPLY[*]}"' _ "$tmp/c.zsh") ||
    fail "zsh: sourcing the script failed"
[ "$(sed -n 1p <<<"$zsh_out")" = "_bash_complete -F _kperf|_bash_complete -F _kperf" ] ||
    fail "zsh: not registered: $(sed -n 1p <<<"$zsh_out")"
grep -qw -- 'pod-to-pod,host-to-host' <<<"$(sed -n 2p <<<"$zsh_out")" || fail "zsh: scenarios: $(sed -n 2p <<<"$zsh_out")"
grep -qw -- 'html' <<<"$(sed -n 3p <<<"$zsh_out")" || fail "zsh: report -o: $(sed -n 3p <<<"$zsh_out")"

# 4. fish: complete -C lists candidate<TAB>description
fish -n "$tmp/c.fish" || fail "fish script does not parse"
fish_c() { HOME=$tmp fish --no-config -c 'source $argv[1]; complete -C $argv[2]' "$tmp/c.fish" "$1" | cut -f1 | tr '\n' ' ' | sed 's/ $//'; }
[ "$(fish_c 'kperf run --sce')" = "--scenarios" ] || fail "fish: run --sce: $(fish_c 'kperf run --sce')"
[ "$(fish_c 'kperf report x.json -o h')" = "html" ] || fail "fish: report -o h: $(fish_c 'kperf report x.json -o h')"
[ "$(fish_c 'kubectl-kperf run --tests TCP_S')" = "TCP_STREAM TCP_STREAM_MULTI" ] || fail "fish: --tests: $(fish_c 'kubectl-kperf run --tests TCP_S')"
[ "$(fish_c 'kperf comp')" = "compare completion" ] || fail "fish: subcommands: $(fish_c 'kperf comp')"

failed || pass "bash ($n cases), zsh and fish completion"
finish
