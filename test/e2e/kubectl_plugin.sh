#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kperf as a kubectl plugin, with the real kubectl 1.35 (test/tools/get-kubectl.sh; never
# skipped for want of it): `cmake --install` into a fresh prefix puts kperf, kperf-agent and the
# kubectl-kperf link into its bin (and the completion scripts into share/); with that bin on PATH, kubectl's plugin discovery lists it and
# `kubectl kperf ...` runs kperf with the arguments, whose usage, help and hints then say
# "kubectl kperf"; kubectl's own completion completes its arguments (kubectl_complete-kperf).
# The krew manifest template (manifests/krew/kperf.yaml), filled in for an
# archive of that bin, names files the archive has and its checksum, and installed the way
# krew does (archive unpacked into a store, bin linked as kubectl-kperf) it works too.
set -euo pipefail
# shellcheck source=test/e2e/lib/harness.sh
. "$(dirname "$0")/lib/harness.sh"
KPERF="${KPERF_BIN:?}/kperf"
SRC="${KPERF_SRC:?}"
BUILD=$(dirname "$KPERF_BIN")
[ -x "$KPERF" ] || { echo "no $KPERF"; exit 77; }
command -v jq >/dev/null || { echo "no jq"; exit 77; }
KUBECTL=${KUBECTL:-$(bash "$SRC/test/tools/get-kubectl.sh")}
declare tmp # set by h_tmpdir
h_tmpdir tmp kubectl-plugin
version=$("$KPERF" version)

# 1. cmake --install
cmake --install "$BUILD" --prefix "$tmp/prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; exit 1; }
for f in kperf kperf-agent; do
    [ -x "$tmp/prefix/bin/$f" ] && [ ! -L "$tmp/prefix/bin/$f" ] || fail "cmake --install: no bin/$f"
done
[ "$(readlink "$tmp/prefix/bin/kubectl-kperf")" = kperf ] || fail "cmake --install: bin/kubectl-kperf is not a link to kperf"
# and the completion scripts where bash-completion, zsh and fish look for them
for spec in bash:bash-completion/completions/kperf bash:bash-completion/completions/kubectl-kperf \
    zsh:zsh/vendor-completions/_kperf fish:fish/vendor_completions.d/kperf.fish; do
    cmp -s <("$KPERF" completion "${spec%%:*}") "$tmp/prefix/share/${spec#*:}" ||
        fail "cmake --install: share/${spec#*:} is not kperf completion ${spec%%:*}"
done

# 2. kubectl's plugin discovery
k() { PATH="$tmp/prefix/bin:/usr/bin:/bin" "$KUBECTL" "$@"; }
[ "$(k kperf version)" = "$version" ] || fail "kubectl kperf version: '$(k kperf version 2>&1)'"
# (grep reads a captured output: `cmd | grep -q` under pipefail fails when grep's early exit
# gives the writer SIGPIPE)
grep -qx "$tmp/prefix/bin/kubectl-kperf" <<<"$(k plugin list 2>/dev/null)" || fail "kubectl plugin list: $(k plugin list 2>&1)"
k kperf --help >"$tmp/help" || fail "kubectl kperf --help"
grep -q '^Usage: kubectl kperf <command> \[flags\]$' "$tmp/help" || fail "kubectl kperf --help: $(head -3 "$tmp/help")"
grep -q "^Run 'kubectl kperf <command> --help'" "$tmp/help" || fail "kubectl kperf --help: no 'kubectl kperf <command> --help'"
[ "$(k kperf run --help | head -1)" = "Usage: kubectl kperf run [flags]" ] || fail "kubectl kperf run --help: $(k kperf run --help | head -1)"
grep -q '^  kubectl kperf run --scenarios all --local$' <<<"$(k kperf run --help)" || fail "kubectl kperf run --help: examples"
rc=0
k kperf run --bogus 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -qF "unknown flag '--bogus'. Run 'kubectl kperf run --help' for usage." "$tmp/err" ||
    fail "kubectl kperf run --bogus: exit $rc: $(cat "$tmp/err")"
# the arguments go through: the objects equal those of kperf itself (run ids apart)
runid='s/[0-9]{8}-[0-9]{6}-[0-9a-f]{6}/RUN-ID/g'
k kperf manifests --format json --scenarios pod-to-pod,pod-to-service --samples 3 | sed -E "$runid" >"$tmp/plugin.ndjson"
"$KPERF" manifests --format json --scenarios pod-to-pod,pod-to-service --samples 3 | sed -E "$runid" >"$tmp/direct.ndjson"
[ -s "$tmp/plugin.ndjson" ] && cmp -s "$tmp/plugin.ndjson" "$tmp/direct.ndjson" ||
    fail "kubectl kperf manifests differs from kperf manifests"
# kubectl's own completion of the plugin's arguments (kubectl_complete-kperf, cobra protocol)
[ "$(k __complete kperf run --sce 2>/dev/null | tr '\n' ' ')" = "--scenarios :4 " ] ||
    fail "kubectl __complete kperf run --sce: $(k __complete kperf run --sce 2>&1 | tr '\n' ' ')"
[ "$(k __complete kperf report x.json -o h 2>/dev/null | tr '\n' ' ')" = "html :4 " ] ||
    fail "kubectl __complete kperf report -o h: $(k __complete kperf report x.json -o h 2>&1 | tr '\n' ' ')"
grep -qx completion <<<"$(k __complete kperf '' 2>/dev/null)" || fail "kubectl __complete kperf '': no subcommands"
# kperf under its own name is unchanged
[ "$("$tmp/prefix/bin/kperf" run --help | head -1)" = "Usage: kperf run [flags]" ] || fail "kperf run --help changed"

# 3. the krew manifest: filled in the way krew-release-bot does, for an archive of the bin
tag=v$("$KPERF" version | awk '{print $2}')
tar -C "$tmp/prefix/bin" -czf "$tmp/kperf-$tag-linux-amd64.tar.gz" kperf kperf-agent
sum=$(sha256sum "$tmp/kperf-$tag-linux-amd64.tar.gz" | cut -d' ' -f1)
python3 - "$SRC/manifests/krew/kperf.yaml" "$tag" "$sum" >"$tmp/krew.yaml" <<'PY'
import re, sys
text, tag, sha = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
def uri_and_sha(m):
    uri = m.group(2).replace("{{ .TagName }}", tag)
    return f'{m.group(1)}uri: {uri}\n{m.group(1)}sha256: {sha}'
text = re.sub(r'^( *)\{\{addURIAndSha "([^"]+)" \.TagName \}\}$', uri_and_sha, text, flags=re.M)
print(text.replace("{{ .TagName }}", tag), end="")
PY
if grep -v '^#' "$tmp/krew.yaml" | grep '{{' >/dev/null; then fail "krew manifest: unfilled template"; fi
"$KPERF" manifests --from-yaml "$tmp/krew.yaml" >"$tmp/krew.json" || fail "krew manifest does not parse"
jq -e --arg tag "$tag" --arg sum "$sum" '.apiVersion == "krew.googlecontainertools.github.com/v1alpha2" and
      .kind == "Plugin" and .metadata.name == "kperf" and .spec.version == $tag and
      (.spec.shortDescription | length) > 0 and (.spec.platforms | length) == 2 and
      all(.spec.platforms[]; .sha256 == $sum and .bin == "kperf" and
          .uri == "https://github.com/OWNER/kperf/releases/download/" + $tag + "/kperf-" + $tag +
                  "-linux-" + .selector.matchLabels.arch + ".tar.gz")' \
    "$tmp/krew.json" >/dev/null || fail "krew manifest: $(cat "$tmp/krew.json")"
# installed as krew does: the platform's files from the archive into a store, bin linked
mkdir -p "$tmp/krew/store" "$tmp/krew/bin" "$tmp/unpacked"
tar -C "$tmp/unpacked" -xzf "$tmp/kperf-$tag-linux-amd64.tar.gz"
while IFS= read -r f; do
    if [ -f "$tmp/unpacked/$f" ]; then
        cp "$tmp/unpacked/$f" "$tmp/krew/store/"
    else
        fail "krew manifest: $f is not in the archive"
    fi
done < <(jq -r '.spec.platforms[0].files[].from' "$tmp/krew.json")
ln -s "$tmp/krew/store/$(jq -r '.spec.platforms[0].bin' "$tmp/krew.json")" "$tmp/krew/bin/kubectl-kperf"
[ "$(PATH="$tmp/krew/bin:/usr/bin:/bin" "$KUBECTL" kperf version)" = "$version" ] || fail "krew-style install: kubectl kperf version"
[ "$(PATH="$tmp/krew/bin:/usr/bin:/bin" "$KUBECTL" kperf report --help | head -1 | cut -d' ' -f1-4)" = "Usage: kubectl kperf report" ] ||
    fail "krew-style install: usage does not say kubectl kperf"

failed || pass "cmake --install gives kubectl-kperf; kubectl kperf works and says so; krew manifest fills in and installs"
finish
