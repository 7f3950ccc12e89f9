#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# podman-base.sh - prints localhost/debian:bookworm-slim after making sure podman's store holds
# it as an import of today's cached `debootstrap --variant=minbase bookworm` root
# (test/tools/debootstrap-root.sh; the image is labelled with the root's name and re-imported
# only when the root changes). The base image of the Dockerfiles' build stage for the tests that
# build images without a registry mirror: e2e.k8s_podman_image, e2e.images_publish. Needs root.
set -euo pipefail
root=$(bash "$(dirname "$0")/debootstrap-root.sh")
base=localhost/debian:bookworm-slim
have=$(podman image inspect "$base" --format '{{index .Config.Labels "kperf.root"}}' 2>/dev/null || true)
if [ "$have" != "$(basename "$root")" ]; then
    tar -C "$root" --exclude=./.kperf-complete -c . |
        podman import --change "LABEL kperf.root=$(basename "$root")" - "$base" >/dev/null
fi
echo "$base"
