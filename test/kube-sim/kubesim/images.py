# SPDX-License-Identifier: Apache-2.0
"""images - the nodes' container images: where registries are reached
(mirrors and CAs, like containerd's hosts.toml), a registry started per
kube-sim and seeded with the test images, and one image store per node
(layers fetched once per node, unpacked to a root filesystem).

Owns: the `up` flags --registry-mirror, --registry-ca, --seed-images,
--image-pull-backoff; the local registry (docker-registry on 127.0.0.1,
its PID in DIR/pids, its storage in DIR/registry); Store.pull (serialized
per node, like the kubelet's serializeImagePulls).
"""
import json
import os
import platform
import shutil
import socket
import subprocess
import threading
import time

from . import ocibuild
from .registry import Hosts, PullError, Puller, Ref, push_layout


def host_arch():
    """This machine's architecture by its OCI name."""
    m = platform.machine()
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(m, m)


# what runs a foreign architecture's binaries (qemu-user, explicitly: no
# binfmt_misc needed)
EMULATORS = {"arm64": "qemu-aarch64-static", "amd64": "qemu-x86_64-static"}


def add_args(up):
    up.add_argument("--registry-mirror", action="append", default=[],
                    metavar="HOST=URL", help="reach registry HOST at URL "
                    "(containerd hosts.toml `server`), e.g. "
                    "ghcr.io=http://127.0.0.1:5000")
    up.add_argument("--registry-ca", action="append", default=[],
                    metavar="FILE", help="a CA certificate the nodes trust "
                    "for registries")
    up.add_argument("--seed-images", default=os.environ.get(
        "KUBESIM_SEED_IMAGES", ""), metavar="DIR",
        help="start a registry for this cluster, push DIR/seed.json's OCI "
        "layouts to it and mirror ghcr.io and docker.io there (default "
        "$KUBESIM_SEED_IMAGES)")
    up.add_argument("--image-pull-backoff", type=float, default=10.0,
                    help="first back-off after a failed pull (s; doubles "
                    "up to 300, like the kubelet)")


def cfg_from_args(a):
    """The config keys of these flags, or an error text."""
    mirrors = {}
    for m in a.registry_mirror:
        host, eq, url = m.partition("=")
        if not eq or not url.startswith(("http://", "https://")):
            return None, "--registry-mirror HOST=http[s]://H:P, got %r" % m
        mirrors[host] = url
    for ca in a.registry_ca:
        if not os.path.isfile(ca):
            return None, "--registry-ca %s: no such file" % ca
    seed = a.seed_images
    if seed and not os.path.isfile(os.path.join(seed, "seed.json")):
        return None, "--seed-images %s: no seed.json (made by " \
            "test/kube-sim/seed-images.sh)" % seed
    return {"registry_mirrors": mirrors,
            "registry_cas": [os.path.abspath(c) for c in a.registry_ca],
            "seed_images": os.path.abspath(seed) if seed else "",
            "image_pull_backoff": max(0.1, a.image_pull_backoff)}, None


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_registry(cfg, pids, agent_image=""):
    """Start this cluster's registry (plain HTTP on loopback), push the
    seed layouts (and --agent-image's export as every kperf-agent ref),
    point ghcr.io and docker.io at it. Returns its URL."""
    d = os.path.join(cfg.state_dir, "registry")
    os.makedirs(d, exist_ok=True)
    port = _free_port()
    conf = os.path.join(d, "config.yml")
    with open(conf, "w") as f:
        f.write("version: 0.1\nlog:\n  level: warn\n  accesslog:\n"
                "    disabled: true\nstorage:\n  filesystem:\n"
                "    rootdirectory: %s\n  delete:\n    enabled: true\n"
                "http:\n  addr: 127.0.0.1:%d\n" % (
                    os.path.join(d, "data"), port))
    log = open(os.path.join(d, "registry.log"), "ab")
    p = subprocess.Popen(["docker-registry", "serve", conf], stdout=log,
                         stderr=log, stdin=subprocess.DEVNULL,
                         start_new_session=True)
    log.close()
    pids.add(p.pid, "registry")
    url = "http://127.0.0.1:%d" % port
    hosts = Hosts({"seed.local": url}, timeout=5)
    t0 = time.time()
    while True:
        try:
            if hosts.request("GET", url + "/v2/")[0] == 200:
                break
        except PullError:
            pass
        if p.poll() is not None or time.time() - t0 > 30:
            raise RuntimeError("docker-registry did not start: see %s" %
                               os.path.join(d, "registry.log"))
        time.sleep(0.02)
    with open(os.path.join(cfg.seed_images, "seed.json")) as f:
        seeds = json.load(f)
    if agent_image:
        lay = os.path.join(d, "agent-image")
        with open(os.path.join(agent_image, "config.json")) as f:
            iconf = json.load(f)
        ocibuild.build(lay, {host_arch(): os.path.join(agent_image, "rootfs")},
                       {k: iconf[k] for k in ("Entrypoint", "Cmd", "Env",
                                              "User", "WorkingDir")
                        if iconf.get(k)})
        for s in seeds:
            if s["layout"] == "kperf-agent":
                s["layout"] = lay
    for s in seeds:
        lay = os.path.join(cfg.seed_images, s["layout"])
        for ref in s["refs"]:
            push_layout(hosts, lay, "seed.local/" + ref.split("/", 1)[1])
    for host in ("ghcr.io", "docker.io"):
        cfg.registry_mirrors.setdefault(host, url)
    with open(os.path.join(d, "url"), "w") as f:
        f.write(url + "\n")
    return url


class Image:
    def __init__(self, ref, digest, root, config, size):
        self.ref, self.digest, self.root = ref, digest, root
        self.config, self.size = config, size

    def image_id(self):
        return "%s@%s" % (self.ref.repo_name(), self.digest)


class Store:
    """Every node's images: {node: {reference name: Image}}."""

    def __init__(self, cfg, faults):
        self.cfg, self.faults = cfg, faults
        self.hosts = Hosts(getattr(cfg, "registry_mirrors", {}),
                           getattr(cfg, "registry_cas", []))
        self.nodes = {}
        self.locks = {}
        self.lock = threading.Lock()

    def node_lock(self, node):
        with self.lock:
            return self.locks.setdefault(node, threading.Lock())

    def present(self, node, image):
        return self.nodes.get(node, {}).get(Ref(image).name())

    def pull(self, node, arch, image, creds):
        """Pull image for node (linux/arch) with the credentials list
        [(user, password)] (anonymous when empty); returns (Image, seconds
        spent waiting for the node's pull lock). Raises PullError."""
        t0 = time.time()
        with self.node_lock(node):
            waited = time.time() - t0
            return self._pull(node, arch, image, creds), waited

    def _pull(self, node, arch, image, creds):
        ref = Ref(image)
        if self.faults.pull_fails(image):
            raise PullError("NotFound", "failed to resolve reference \"%s\""
                            ": %s: not found" % (ref.name(), ref.name()))
        err = None
        for auth in creds or [None]:
            try:
                p = Puller(self.hosts, ref, auth)
                digest, man, conf = p.resolve(arch)
                break
            except PullError as e:
                err = e
        else:
            raise err
        ndir = os.path.join(self.cfg.state_dir, "images", node)
        root = os.path.join(ndir, "roots", man["config"]["digest"][7:])
        size = sum(x.get("size", 0) for x in man["layers"])
        if not os.path.isdir(root):
            bdir = os.path.join(ndir, "blobs")
            os.makedirs(bdir, exist_ok=True)
            tmp = root + ".part"
            shutil.rmtree(tmp, ignore_errors=True)
            os.makedirs(tmp)
            for lay in man["layers"]:
                bp = os.path.join(bdir, lay["digest"][7:])
                if not os.path.exists(bp):
                    p.blob(lay["digest"], bp)
                r = subprocess.run(["tar", "-xzf", bp, "-C", tmp,
                                    "--numeric-owner"],
                                   stderr=subprocess.PIPE)
                if r.returncode != 0:
                    raise PullError("Unknown", "failed to extract layer %s: %s"
                                    % (lay["digest"], r.stderr.decode(
                                        errors="replace").strip()))
            os.rename(tmp, root)
        img = Image(ref, digest, root, conf.get("config") or {}, size)
        with self.lock:
            self.nodes.setdefault(node, {})[ref.name()] = img
        return img
