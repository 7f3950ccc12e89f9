#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Debian packages install into a clean system and work there: `cpack` builds kperf and
# kperf-agent .debs from this build, apt-get installs them (with their Depends) into a copy of
# a `debootstrap --variant=minbase bookworm` root (test/tools/debootstrap-root.sh, cached per
# day), then, chrooted in that root: both binaries run (kperf version, kperf-agent version and
# --help, kubectl-kperf), an agent server and client measure over loopback as an unprivileged
# user, the systemd unit passes `systemd-analyze verify` and its offline security exposure is
# low, and purging both packages leaves none of their files. systemd itself cannot run here.
set -uo pipefail
SRC="${KPERF_SRC:?}"
BUILD="${KPERF_BIN:?}/.."
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (chroot)"; exit 77; }
[ -f "$BUILD/CPackConfig.cmake" ] || { echo "FAIL: no CPackConfig.cmake in $BUILD"; exit 1; }
fail=0
pass() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
# shellcheck source=lib/agent_port.sh
. "$SRC/test/e2e/lib/agent_port.sh"
tmp=$(mktemp -d)
R="$tmp/root"
cleanup() {
    umount -l "$R/proc" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
t0=$(date +%s)

# 1. the packages
cpack --config "$BUILD/CPackConfig.cmake" -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1 ||
    { cat "$tmp/cpack.log"; echo "FAIL: cpack"; exit 1; }
ctl=$(ls "$tmp"/pkg/kperf_*.deb) && agent=$(ls "$tmp"/pkg/kperf-agent_*.deb) ||
    { ls "$tmp/pkg"; echo "FAIL: cpack did not make kperf_*.deb and kperf-agent_*.deb"; exit 1; }
deps() { dpkg-deb -f "$1" Depends | tr ',' '\n' | sed 's/^ *//; s/ .*//' | sort | tr '\n' ' '; }
[ "$(deps "$ctl")" = "libc6 libcurl4 libjansson4 libyaml-0-2 " ] &&
    pass "kperf Depends: $(dpkg-deb -f "$ctl" Depends)" || bad "kperf Depends: $(deps "$ctl")"
[ "$(deps "$agent")" = "libc6 libjansson4 libuv1 " ] &&
    pass "kperf-agent Depends: $(dpkg-deb -f "$agent" Depends)" || bad "kperf-agent Depends: $(deps "$agent")"
t1=$(date +%s)

# 2. a clean root with this machine's apt sources and package lists
base=$(bash "$SRC/test/tools/debootstrap-root.sh") || { echo "FAIL: debootstrap root"; exit 1; }
cp -a "$base" "$R"
rm -f "$R/.kperf-complete"
rm -rf "$R/etc/apt/sources.list.d" "$R/etc/apt/sources.list"
cp -a /etc/apt/sources.list.d "$R/etc/apt/" 2>/dev/null
cp -a /etc/apt/sources.list "$R/etc/apt/" 2>/dev/null
cp -a /var/lib/apt/lists/. "$R/var/lib/apt/lists/" 2>/dev/null
cp /etc/resolv.conf "$R/etc/resolv.conf"
mount -t proc proc "$R/proc" || { echo "FAIL: mount proc in the root"; exit 1; }
cp "$ctl" "$agent" "$R/tmp/"
in_root() { chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }
install_pkgs() {
    in_root apt-get install -y -q --no-install-recommends "$@" >"$tmp/apt.log" 2>&1
}
if ! install_pkgs "/tmp/$(basename "$ctl")" "/tmp/$(basename "$agent")" systemd; then
    # this machine's lists are stale or missing: refresh them in the root
    in_root apt-get update -q >>"$tmp/apt.log" 2>&1
    install_pkgs "/tmp/$(basename "$ctl")" "/tmp/$(basename "$agent")" systemd ||
        { tail -20 "$tmp/apt.log"; echo "FAIL: apt-get install of the .debs"; exit 1; }
fi
pass "apt-get install ./kperf_*.deb ./kperf-agent_*.deb into a minbase bookworm root"
t2=$(date +%s)

# 3. the binaries run in the root
out=$(in_root kperf version 2>&1) && [[ "$out" == "kperf "* ]] && pass "kperf version: $out" ||
    bad "kperf version: $out"
out=$(in_root kperf-agent version 2>&1) && [[ "$out" == "kperf-agent "* ]] &&
    pass "kperf-agent version: $out" || bad "kperf-agent version: $out"
# (not `| grep -q`: under pipefail the help's second write after grep's early exit dies of SIGPIPE)
out=$(in_root kperf-agent --help 2>&1) && grep -q -- "--token-file" <<<"$out" && pass "kperf-agent --help" ||
    bad "kperf-agent --help: $(head -c 300 <<<"$out")"
out=$(in_root kubectl-kperf version 2>&1) && pass "kubectl-kperf version: $out" ||
    bad "kubectl-kperf version: $out"
[ -s "$R/usr/share/bash-completion/completions/kperf" ] && pass "bash completion installed" ||
    bad "no bash completion"
grep -q -- "--scenarios" "$R/usr/share/man/man1/kperf.1" &&
    grep -q -- "--token-file" "$R/usr/share/man/man1/kperf-agent.1" &&
    pass "man pages kperf.1, kperf-agent.1" || bad "man pages missing or short"
printf 'deb-test-token' >"$R/tmp/token"
chmod 0444 "$R/tmp/token"
chroot --userspec=65534:65534 "$R" /usr/bin/kperf-agent server --port 0 --bind 127.0.0.1 \
    --token-file /tmp/token >"$tmp/server.log" 2>&1 &
spid=$!
ok=0
port=$(announced_port "$tmp/server.log" "$spid") &&
    chroot --userspec=65534:65534 "$R" /usr/bin/kperf-agent client --server "127.0.0.1:$port" \
        --tests TCP_RR --duration 1s --token-file /tmp/token --json >"$tmp/result.json" \
        2>"$tmp/client.log" && ok=1
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null
[ "$ok" = 1 ] && jq -e '.results[0].ops > 0' "$tmp/result.json" >/dev/null &&
    pass "installed agent server + client as nobody: $(jq -r '.results[0].ops_per_sec' "$tmp/result.json") TCP_RR ops/s" ||
    { bad "installed agent does not measure"; cat "$tmp/client.log" "$tmp/server.log"; }

# 4. the systemd unit
U=/usr/lib/systemd/system/kperf-agent.service
if [ -f "$R$U" ]; then
    out=$(in_root systemd-analyze verify "$U" 2>&1) && [ -z "$out" ] &&
        pass "systemd-analyze verify kperf-agent.service" || bad "systemd-analyze verify: $out"
    for want in "DynamicUser=yes" "CapabilityBoundingSet=" "NoNewPrivileges=yes" \
        "ProtectSystem=strict" "LoadCredential=token:/etc/kperf/agent.token" \
        "ExecStart=/usr/bin/kperf-agent server --token-file %d/token"; do
        grep -q "^$want" "$R$U" || bad "unit lacks $want"
    done
    expo=$(in_root systemd-analyze security --offline=true "$U" 2>&1 |
        sed -n 's/.*Overall exposure level for kperf-agent.service: \([0-9.]*\).*/\1/p')
    [ -n "$expo" ] && [ "$(echo "$expo <= 2.0" | bc)" = 1 ] &&
        pass "unit: DynamicUser, no capabilities, token credential; exposure $expo (<= 2.0)" ||
        bad "unit exposure '${expo:-?}' (want <= 2.0)"
else
    bad "no $U in the root"
fi

# 5. removal leaves nothing of ours
in_root apt-get purge -y -q kperf kperf-agent >>"$tmp/apt.log" 2>&1 || bad "apt-get purge"
left=$(cd "$R" && ls -d usr/bin/kperf* usr/bin/kubectl*kperf usr/share/doc/kperf* "${U#/}" \
    usr/share/bash-completion/completions/kperf usr/share/man/man1/kperf* 2>/dev/null)
[ -z "$left" ] && pass "purge removes every file" || bad "left after purge: $left"
t3=$(date +%s)
echo "figures: cpack $((t1 - t0))s, root + apt-get install $((t2 - t1))s, checks $((t3 - t2))s"
[ "$fail" = 0 ] && echo "RESULT: PASSED" || echo "RESULT: FAILED"
exit "$fail"
