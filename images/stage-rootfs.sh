#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# stage-rootfs.sh DEST BINARY... - builds the complete root filesystem of a final image in
# DEST: each binary in /usr/local/bin, the shared libraries it loads (its ldd closure, or for a
# binary of another architecture its NEEDED closure read with readelf) and the dynamic loader,
# CA certificates, and /etc/passwd + /etc/group with the non-root user 65532.
# Static binaries need no libraries. Used by Dockerfile.controller/Dockerfile.agent (their
# last stage is FROM scratch + COPY of DEST) and by test/e2e/k8s_image_chroot.sh, which runs
# the binaries chrooted into DEST: what passes there runs in the image.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 DEST BINARY..." >&2; exit 2; }
dest=$1
shift
mkdir -p "$dest/usr/local/bin" "$dest/etc/ssl/certs" "$dest/tmp"
chmod 1777 "$dest/tmp"
libs=$(mktemp)
trap 'rm -f "$libs"' EXIT

# cross_closure BIN: the libraries a binary of another architecture loads (ldd cannot run it),
# from its NEEDED entries, recursively, found in Debian's multiarch folders for its machine;
# then its program interpreter (the loader)
cross_closure() {
    case "$(readelf -h "$1" | sed -n 's/^ *Machine: *//p')" in
    AArch64) triplet=aarch64-linux-gnu ;;
    *X86-64) triplet=x86_64-linux-gnu ;;
    *) echo "stage-rootfs: $1: unknown machine" >&2; return 1 ;;
    esac
    todo=$1 seen=" "
    while [ -n "$todo" ]; do
        # shellcheck disable=SC2086 # a list of library paths (no spaces): split on purpose
        set -- $todo
        f=$1
        shift
        todo=$*
        for n in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
            case "$seen" in *" $n "*) continue ;; esac
            seen="$seen$n "
            found=
            for d in "/lib/$triplet" "/usr/lib/$triplet"; do
                [ -e "$d/$n" ] && { found=$d/$n; break; }
            done
            [ -n "$found" ] || { echo "stage-rootfs: $n (needed by $f) not in /usr/lib/$triplet" >&2; return 1; }
            echo "$found"
            todo="$todo $found"
        done
    done
}

for bin in "$@"; do
    cp "$bin" "$dest/usr/local/bin/"
    interp=$(readelf -l "$bin" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
    [ -n "$interp" ] || continue # static: nothing to load
    if ldd "$bin" >/dev/null 2>&1; then
        # "libx.so => /lib/libx.so (0x...)" and "/lib64/ld-linux-x86-64.so.2 (0x...)"
        ldd "$bin" | awk '/=> \//{print $3} /^[ \t]*\//{print $1}' >"$libs"
    else
        cross_closure "$bin" >"$libs"
        echo "$interp" >>"$libs"
    fi
    while read -r lib; do
        mkdir -p "$dest$(dirname "$lib")"
        cp -L "$lib" "$dest$lib"
    done <"$libs"
done
# glibc resolves users and hosts through NSS; "files" is built in, keep it that way
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$dest/etc/nsswitch.conf"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$dest/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$dest/etc/group"
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
    cp /etc/ssl/certs/ca-certificates.crt "$dest/etc/ssl/certs/"
fi
