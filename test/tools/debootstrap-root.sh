#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# debootstrap-root.sh - prints the path of a `debootstrap --variant=minbase bookworm` root,
# cached in ~/.cache/kperf/debootstrap-bookworm-YYYYMMDD (one per day, so security updates
# arrive daily; older days are removed). Built into a temporary directory next to it and
# renamed when complete, so a half-built root is never used and concurrent callers are safe
# (a flock serialises them). Uses the Debian mirror this machine's apt uses. Installs
# debootstrap with apt-get when missing. Needs root. Progress goes to stderr, the path to stdout.
set -euo pipefail
cache=${KPERF_CACHE:-$HOME/.cache/kperf}
suite=bookworm
root="$cache/debootstrap-$suite-$(date -u +%Y%m%d)"
[ "$(id -u)" = 0 ] || { echo "debootstrap-root: needs root" >&2; exit 1; }
mkdir -p "$cache"
exec 9>"$cache/debootstrap.lock"
flock 9
if [ -x "$root/bin/sh" ] && [ -f "$root/.kperf-complete" ]; then
    echo "$root"
    exit 0
fi
if ! command -v debootstrap >/dev/null; then
    echo "debootstrap-root: installing debootstrap" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi
# the mirror apt uses here: deb822 "URIs:" or a one-line "deb URI suite ..."
mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources \
    2>/dev/null | awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}
                       /^deb / && $0 !~ /security/ {for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) {print $i; exit}}' || true)
mirror=${mirror:-http://deb.debian.org/debian}
tmp=$(mktemp -d "$cache/.debootstrap-$suite.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "debootstrap-root: building $suite (minbase) from $mirror into $root" >&2
if ! debootstrap --variant=minbase "$suite" "$tmp" "$mirror" >"$tmp.log" 2>&1; then
    tail -20 "$tmp.log" >&2
    rm -f "$tmp.log"
    echo "debootstrap-root: debootstrap failed" >&2
    exit 1
fi
rm -f "$tmp.log"
# apt inside the root uses the same mirror (debootstrap wrote it already); keep it small
rm -rf "$tmp/var/cache/apt/archives/"*.deb "$tmp/var/lib/apt/lists/"*_Packages 2>/dev/null || true
touch "$tmp/.kperf-complete"
chmod 0755 "$tmp"
mv -T "$tmp" "$root"
trap - EXIT
# earlier days' roots
for old in "$cache"/debootstrap-"$suite"-*; do
    [ "$old" = "$root" ] || rm -rf "$old"
done
echo "$root"
