#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# stage-rootfs.sh DEST BINARY... - builds the complete root filesystem of a final image in
# DEST: each binary in /usr/local/bin, the shared libraries it loads (its ldd closure) and the
# dynamic loader, CA certificates, and /etc/passwd + /etc/group with the non-root user 65532.
# Static binaries need no libraries. Used by Dockerfile.controller/Dockerfile.agent (their
# last stage is FROM scratch + COPY of DEST) and by test/e2e/k8s_image_chroot.sh, which runs
# the binaries chrooted into DEST: what passes there runs in the image.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 DEST BINARY..." >&2; exit 2; }
dest=$1
shift
mkdir -p "$dest/usr/local/bin" "$dest/etc/ssl/certs" "$dest/tmp"
chmod 1777 "$dest/tmp"
for bin in "$@"; do
    cp "$bin" "$dest/usr/local/bin/"
    # "libx.so => /lib/libx.so (0x...)" and "/lib64/ld-linux-x86-64.so.2 (0x...)"
    ldd "$bin" 2>/dev/null | awk '/=> \//{print $3} /^[ \t]*\//{print $1}' | while read -r lib; do
        mkdir -p "$dest$(dirname "$lib")"
        cp -L "$lib" "$dest$lib"
    done
done
# glibc resolves users and hosts through NSS; "files" is built in, keep it that way
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$dest/etc/nsswitch.conf"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$dest/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$dest/etc/group"
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
    cp /etc/ssl/certs/ca-certificates.crt "$dest/etc/ssl/certs/"
fi
