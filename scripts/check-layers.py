#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check-layers.py - the include rules of docs/architecture.md, checked on the sources.

Every quoted include names a header by its path from the repository root. A file may include
headers of its own folder and of the folders its layer points to; nothing else. The build
enforces the same arrows (cmake/layers.cmake gives each library only the headers it may use);
this check says which rule a forbidden include breaks, in one line per include.

Usage: scripts/check-layers.py [ROOT]      exit 0 clean, 1 with one line per violation
"""
import os
import re
import sys

# layer: (folder of its sources, folders it may include besides its own). A folder means the
# headers directly in it, not those of its subfolders (controller/ is the run core only).
LAYERS = {
    "base": ("base", []),
    "agent": ("agent", ["base"]),
    "kube": ("controller/kube", ["base"]),
    "report": ("controller/report", ["base"]),
    "core": ("controller", ["controller/report", "base"]),
    "k8s": ("controller/k8s", ["controller", "controller/kube", "base"]),
    "local": ("controller/local", ["controller", "base"]),
    "kperf-agent": ("cmd/kperf-agent", ["agent", "base"]),
    "kperf": ("cmd/kperf", ["controller", "controller/k8s", "controller/local",
                            "controller/report", "controller/kube", "base"]),
}

# cmd/ names a concrete backend in one place, where it picks one; everything else goes through
# struct backend_ops. The Kubernetes-only commands use controller/k8s/ modules, never a
# backend's header.
BACKEND_CHOOSERS = {"cmd/kperf/backend_pick.c"}
K8S_COMMANDS = {"cmd/kperf/cmd_cleanup.c", "cmd/kperf/cmd_manifests.c",
                "cmd/kperf/history_store.c"}
BACKEND_HEADERS = {"controller/k8s/backend_k8s.h", "controller/local/backend_local.h",
                   "controller/k8s/k8s_watch.h", "controller/k8s/k8s_watch_ready.h",
                   "controller/local/local_fault.h"}
BACKEND_FOLDERS = {"controller/k8s", "controller/local"}

# Modules below others of their folder: they are called by those and must not include them
# (an include is how a call back would start).
BELOW = {
    "controller/k8s/k8s_client": {"controller/k8s/k8s_sweep.h", "controller/k8s/k8s_churn.h",
                                  "controller/k8s/backend_k8s.h", "controller/k8s/k8s_watch.h",
                                  "controller/k8s/k8s_watch_ready.h", "controller/k8s/k8s_dns.h"},
    "controller/k8s/k8s_dns": {"controller/k8s/k8s_sweep.h", "controller/k8s/backend_k8s.h"},
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SCAN = ["base", "agent", "controller", "cmd"]


def layer_of(path):
    folder = os.path.dirname(path)
    for name, (src, _) in LAYERS.items():
        if folder == src:
            return name
    return None


def check_file(root, path):
    """Yields one message per forbidden include of path (relative to root)."""
    layer = layer_of(path)
    if layer is None:
        yield f"{path}: not in a layer; put it in a folder that docs/architecture.md names"
        return
    own, allowed = LAYERS[layer]
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            inc = m.group(1)
            where = f"{path}:{lineno}: #include \"{inc}\""
            target = os.path.dirname(inc)
            if not os.path.isfile(os.path.join(root, inc)):
                yield f"{where}: no such header from the repository root; include by root path"
            elif target != own and target not in allowed:
                yield (f"{where}: layer '{layer}' ({own}/) may include only "
                       f"{', '.join(d + '/' for d in [own] + allowed)}")
            elif (inc in BACKEND_HEADERS and path not in BACKEND_CHOOSERS and target != own) or \
                    (layer == "kperf" and target in BACKEND_FOLDERS and
                     path not in BACKEND_CHOOSERS | K8S_COMMANDS):
                yield (f"{where}: only {' and '.join(sorted(BACKEND_CHOOSERS))} names a "
                       "concrete backend (cmd_cleanup.c and cmd_manifests.c: controller/k8s/ "
                       "modules); use struct backend_ops")
            elif inc in BELOW.get(os.path.splitext(path)[0], ()):
                yield (f"{where}: {path} sits below {inc} (it is called by it, never calls "
                       "it back); docs/architecture.md")
            elif inc.endswith("_int.h") and target != own:
                yield f"{where}: {inc} is internal to {target}/"


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    bad = []
    n = 0
    for top in SCAN:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if name.endswith((".c", ".h")):
                    n += 1
                    bad.extend(check_file(root, os.path.relpath(os.path.join(dirpath, name), root)))
    for msg in bad:
        print(f"check-layers: {msg}", file=sys.stderr)
    if bad:
        print(f"check-layers: {len(bad)} forbidden include(s) in {n} files; "
              "see docs/architecture.md", file=sys.stderr)
        return 1
    print(f"check-layers: {n} files follow docs/architecture.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
