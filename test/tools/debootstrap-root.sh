#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# debootstrap-root.sh - prints the path of a `debootstrap --variant=minbase bookworm` root,
# cached in ~/.cache/kperf/debootstrap-bookworm-YYYYMMDD (the day it was built; reused for
# KPERF_ROOT_MAX_AGE_DAYS days, default 7, then rebuilt so security updates arrive; older roots
# are removed when a new one is built). Built into a temporary directory next to it and
# renamed when complete, so a half-built root is never used and concurrent callers are safe
# (a flock serialises them). Uses the Debian mirror this machine's apt uses. Installs
# debootstrap with apt-get when missing. Needs root. Progress goes to stderr, the path to stdout.
set -euo pipefail
cache=${KPERF_CACHE:-$HOME/.cache/kperf}
suite=bookworm
root="$cache/debootstrap-$suite-$(date -u +%Y%m%d)"
max_age_days=${KPERF_ROOT_MAX_AGE_DAYS:-7}
[ "$(id -u)" = 0 ] || { echo "debootstrap-root: needs root" >&2; exit 1; }
mkdir -p "$cache"
exec 9>"$cache/debootstrap.lock"
flock 9
# the newest complete root of the last max_age_days days (a run just after midnight, or a CI
# run the day after the cache was warmed, does not pay 8 minutes of debootstrap again)
for d in $(seq 0 "$max_age_days"); do
    cand="$cache/debootstrap-$suite-$(date -u -d "-$d day" +%Y%m%d)"
    if [ -x "$cand/bin/sh" ] && [ -f "$cand/.kperf-complete" ]; then
        echo "$cand"
        exit 0
    fi
done
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
