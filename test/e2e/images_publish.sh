#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# images_publish.sh - scripts/images.sh publishes for real: it builds kperf-agent and kperf from
# the Dockerfiles for linux/amd64 and linux/arm64 (podman, the arm64 binaries cross-compiled in
# the build stage) and pushes one index per image to a real registry on loopback
# (test/tools/registry.sh: docker-registry with TLS from a test CA and basic auth). Checked from
# the registry's side with skopeo: each index holds linux/amd64 and linux/arm64; the arm64
# agent is an aarch64 static ELF that runs under qemu-aarch64-static, the amd64 one an x86-64
# static ELF; the arm64 controller runs from its own image root under qemu; the printed
# `--image` value is the agent index's digest. `images.sh copy` to another repository path keeps
# both architectures and the digests. Bad input (no --registry, an unreachable registry, a wrong
# password) fails at once with one line on stderr and a non-zero exit.
# The build stage's base is the cached debootstrap root (test/tools/podman-base.sh), shared with
# e2e.k8s_podman_image, and so is podman's layer cache (its amd64 builds are the same layers).
# Measured on the 2-CPU VM: unchanged sources 45 s (push 19 s); changed sources 118 s (push
# 96 s: four compiles on a busy machine); cold, the apt-get layer adds 1 to 4 min, and a new
# debootstrap root (weekly) about 7 min.
set -uo pipefail
# shellcheck source=test/e2e/lib/harness.sh
. "$(dirname "$0")/lib/harness.sh"
SRC="${KPERF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (podman)"; exit 77; }
for t in podman skopeo docker-registry qemu-aarch64-static jq file openssl; do
    command -v "$t" >/dev/null || { echo "SKIP: $t missing (scripts/test.sh installs it)"; exit 77; }
done
podman info >/dev/null 2>&1 || { echo "SKIP: podman info fails here"; exit 77; }
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: needs an amd64 host"; exit 77; }

declare tmp # set by h_tmpdir
h_tmpdir tmp images-publish
reg="$tmp/registry"
addr=$(bash "$SRC/test/tools/registry.sh" start "$reg") || { fail "registry.sh start"; finish; }
on_exit "bash '$SRC/test/tools/registry.sh' stop '$reg'"
pass "registry on $addr (TLS, basic auth)"
auth=(--cert-dir "$reg" --authfile "$reg/auth.json")
src_auth=(--src-cert-dir "$reg" --src-authfile "$reg/auth.json")
raw() { skopeo inspect --raw "${auth[@]}" "docker://$1"; }

base=$(bash "$SRC/test/tools/podman-base.sh") || { fail "debootstrap root / podman import"; finish; }
# the local index lists images.sh builds (their layers stay: the cache of the next build)
for img in kperf-agent kperf; do
    on_exit "podman manifest rm localhost/kperf-images/$img:e2e >/dev/null 2>&1"
done

# 1. push: both images, both architectures, by the one command
t0=$SECONDS
if ! bash "$SRC/scripts/images.sh" push --registry "$addr/kperf" "${auth[@]}" --base "$base" \
    --tag e2e --quiet --record "$tmp/record.json" >"$tmp/push.out" 2>"$tmp/push.err"; then
    cat "$tmp/push.err"
    fail "images.sh push"
    finish
fi
echo "# images.sh push took $((SECONDS - t0)) s"
sed 's/^/# /' "$tmp/push.err"
assert_contains "images.sh names its builder" "$(cat "$tmp/push.err")" "builder: podman"
for img in kperf-agent kperf; do
    raw "$addr/kperf/$img:e2e" >"$tmp/$img.index.json" || fail "skopeo inspect --raw $img"
    assert_json "$img: an index with linux/amd64 and linux/arm64" "$tmp/$img.index.json" \
        '[.manifests[].platform | "\(.os)/\(.architecture)"] | sort == ["linux/amd64", "linux/arm64"]'
    digest="sha256:$(sha256sum <"$tmp/$img.index.json" | cut -d' ' -f1)"
    assert_json "$img: the record holds the index's digest" "$tmp/record.json" \
        ".images[] | select(.name == \"$img\") | .digest == \"$digest\""
done
agent_digest="sha256:$(sha256sum <"$tmp/kperf-agent.index.json" | cut -d' ' -f1)"
assert_eq "stdout is the pinned --image value" "--image $addr/kperf/kperf-agent@$agent_digest" \
    "$(cat "$tmp/push.out")"

# 2. each architecture's image root, as a node of that architecture pulls it (by digest)
extract() { # IMAGE ARCH: its root filesystem in $tmp/IMAGE-ARCH
    local d="$tmp/$1-$2" m
    mkdir -p "$d/root"
    skopeo copy -q "${src_auth[@]}" --override-arch "$2" \
        "docker://$addr/kperf/$1@$3" "oci:$d/oci:x" >/dev/null || return 1
    m=$(jq -r '.manifests[0].digest | sub("sha256:"; "")' "$d/oci/index.json")
    jq -r '.config.digest | sub("sha256:"; "")' "$d/oci/blobs/sha256/$m" >"$d/config"
    jq -r '.architecture' "$d/oci/blobs/sha256/$(cat "$d/config")" >"$d/arch"
    for l in $(jq -r '.layers[].digest | sub("sha256:"; "")' "$d/oci/blobs/sha256/$m"); do
        tar -C "$d/root" -xf "$d/oci/blobs/sha256/$l" || return 1
    done
}
for arch in amd64 arm64; do
    check "kperf-agent $arch pulled by digest" extract kperf-agent "$arch" "$agent_digest"
    assert_eq "kperf-agent $arch: the image config says $arch" "$arch" "$(cat "$tmp/kperf-agent-$arch/arch")"
done
a_arm="$tmp/kperf-agent-arm64/root/usr/local/bin/kperf-agent"
a_amd="$tmp/kperf-agent-amd64/root/usr/local/bin/kperf-agent"
assert_contains "the arm64 agent is an aarch64 static ELF" "$(file -b "$a_arm")" "ARM aarch64"
assert_contains "the arm64 agent is static" "$(file -b "$a_arm")" "statically linked"
assert_contains "the amd64 agent is an x86-64 static ELF" "$(file -b "$a_amd")" "x86-64"
assert_contains "the amd64 agent is static" "$(file -b "$a_amd")" "statically linked"
assert_contains "the arm64 agent runs under qemu-aarch64-static" \
    "$(qemu-aarch64-static "$a_arm" --version 2>&1)" "kperf-agent"
assert_contains "the amd64 agent runs" "$("$a_amd" --version 2>&1)" "kperf-agent"
ctl_digest=$(jq -r '.images[] | select(.name == "kperf") | .digest' "$tmp/record.json")
check "kperf arm64 pulled by digest" extract kperf arm64 "$ctl_digest"
c_root="$tmp/kperf-arm64/root"
assert_contains "the arm64 controller is an aarch64 ELF" "$(file -b "$c_root/usr/local/bin/kperf")" "ARM aarch64"
# its own loader and libraries (readelf closure), nothing from the host: -L is the image root
assert_contains "the arm64 controller runs from its image root under qemu" \
    "$(qemu-aarch64-static -L "$c_root" "$c_root/usr/local/bin/kperf" version 2>&1)" "kperf "

# 3. copy to another repository path (a mirror): both architectures, the same digests
if bash "$SRC/scripts/images.sh" copy --from "$addr/kperf" --to "$addr/mirror/kperf" --tag e2e \
    "${auth[@]}" --quiet >"$tmp/copy.out" 2>"$tmp/copy.err"; then
    pass "images.sh copy"
    raw "$addr/mirror/kperf/kperf-agent:e2e" >"$tmp/mirror.json" || fail "inspect the mirror"
    assert_json "the mirror's agent index has linux/amd64 and linux/arm64" "$tmp/mirror.json" \
        '[.manifests[].platform.architecture] | sort == ["amd64", "arm64"]'
    assert_eq "copy prints the mirror's pinned --image (same digest)" \
        "--image $addr/mirror/kperf/kperf-agent@$agent_digest" "$(cat "$tmp/copy.out")"
else
    cat "$tmp/copy.err"
    fail "images.sh copy"
fi

# 4. bad input: one line on stderr, a non-zero exit, before any build
bad() { # WHAT NEEDLE ARGS...
    local what=$1 needle=$2 rc=0
    shift 2
    bash "$SRC/scripts/images.sh" "$@" >"$tmp/bad.out" 2>"$tmp/bad.err" || rc=$?
    [ "$rc" != 0 ] || fail "$what: exit 0"
    assert_eq "$what: one line on stderr" 1 "$(wc -l <"$tmp/bad.err")"
    assert_contains "$what: says why" "$(cat "$tmp/bad.err")" "$needle"
    assert_eq "$what: nothing on stdout" "" "$(cat "$tmp/bad.out")"
}
bad "no --registry" "push needs --registry" push --cert-dir "$reg"
bad "unreachable registry" "connection refused" push --registry 127.0.0.1:1/kperf --cert-dir "$reg"
bad "wrong password" "unauthorized" push --registry "$addr/kperf" --cert-dir "$reg" --creds kperf:wrong
bad "CA not given" "certificate" push --registry "$addr/kperf" --authfile "$reg/auth.json"
bad "copy without --to" "copy needs --to" copy --from "$addr/kperf"
echo "# the whole test took $SECONDS s"
finish
