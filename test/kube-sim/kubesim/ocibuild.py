# SPDX-License-Identifier: Apache-2.0
"""ocibuild - an OCI image layout from root filesystem directories, one
per architecture, without a Dockerfile or a container engine: each root
becomes one reproducible gzip layer (sorted entries, owner root, mtime
0), a config with the given entrypoint/cmd/env/user, a manifest, and an
index holding the architectures. kube-sim pushes such layouts into its
registry (kube-sim up --seed-image); test/kube-sim/seed-images.sh makes
them from the build's binaries.

    python3 ocibuild.py OUT --root amd64=DIR [--root arm64=DIR] \\
        --entrypoint /usr/local/bin/kperf-agent [--cmd server] \\
        [--env PATH=/usr/local/bin] [--user 65532:65532]

Python 3 standard library only.
"""
import argparse
import gzip
import hashlib
import io
import json
import os
import sys
import tarfile

OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"


def _blob(out, data, media_type, extra=None):
    d = "sha256:" + hashlib.sha256(data).hexdigest()
    p = os.path.join(out, "blobs", "sha256", d[7:])
    if not os.path.exists(p):
        with open(p, "wb") as f:
            f.write(data)
    desc = {"mediaType": media_type, "digest": d, "size": len(data)}
    desc.update(extra or {})
    return desc


def layer(root):
    """(gzip bytes, uncompressed digest) of root as a tar, reproducible."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as t:
        for dirpath, dirs, files in os.walk(root):
            dirs.sort()
            for name in sorted(dirs) + sorted(files):
                p = os.path.join(dirpath, name)
                ti = t.gettarinfo(p, os.path.relpath(p, root))
                ti.uid = ti.gid = 0
                ti.uname = ti.gname = ""
                ti.mtime = 0
                if ti.isfile():
                    with open(p, "rb") as f:
                        t.addfile(ti, f)
                else:
                    t.addfile(ti)
    data = raw.getvalue()
    gz = io.BytesIO()
    with gzip.GzipFile(fileobj=gz, mode="wb", mtime=0, compresslevel=6) as g:
        g.write(data)
    return gz.getvalue(), "sha256:" + hashlib.sha256(data).hexdigest()


def build(out, roots, config):
    """roots: {arch: dir}; config: the image config's "config" part."""
    os.makedirs(os.path.join(out, "blobs", "sha256"), exist_ok=True)
    mans = []
    for arch, root in sorted(roots.items()):
        gz, diff = layer(root)
        ldesc = _blob(out, gz, OCI_LAYER)
        conf = {"architecture": arch, "os": "linux", "config": config,
                "rootfs": {"type": "layers", "diff_ids": [diff]},
                "created": "1970-01-01T00:00:00Z"}
        cdesc = _blob(out, json.dumps(conf, sort_keys=True).encode(),
                      OCI_CONFIG)
        man = {"schemaVersion": 2, "mediaType": OCI_MANIFEST,
               "config": cdesc, "layers": [ldesc]}
        mans.append(_blob(out, json.dumps(man, sort_keys=True).encode(),
                          OCI_MANIFEST, {"platform": {
                              "architecture": arch, "os": "linux"}}))
    index = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": mans}
    idesc = _blob(out, json.dumps(index, sort_keys=True).encode(), OCI_INDEX)
    with open(os.path.join(out, "index.json"), "w") as f:
        json.dump({"schemaVersion": 2, "manifests": [idesc]}, f)
    with open(os.path.join(out, "oci-layout"), "w") as f:
        json.dump({"imageLayoutVersion": "1.0.0"}, f)
    return idesc["digest"]


def main(argv):
    ap = argparse.ArgumentParser(prog="ocibuild.py")
    ap.add_argument("out")
    ap.add_argument("--root", action="append", required=True,
                    metavar="ARCH=DIR")
    ap.add_argument("--entrypoint", action="append", default=[])
    ap.add_argument("--cmd", action="append", default=[])
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--user", default="")
    a = ap.parse_args(argv)
    roots = {}
    for r in a.root:
        arch, _, d = r.partition("=")
        if not os.path.isdir(d):
            print("ocibuild: --root %s: not a directory" % r, file=sys.stderr)
            return 2
        roots[arch] = d
    config = {"Entrypoint": a.entrypoint, "Cmd": a.cmd, "Env": a.env}
    if a.user:
        config["User"] = a.user
    print(build(a.out, roots, config))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
