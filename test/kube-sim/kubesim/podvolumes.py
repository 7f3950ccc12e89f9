# SPDX-License-Identifier: Apache-2.0
"""podvolumes - what a pod's containers see besides their image (a mixin of
pod.Worker): secrets, ConfigMaps, downward API and projected volumes written
under DIR/pods/<uid>/volumes, claims mounted from their volume's host
directory, the service-account token, the environment (env, envFrom, $(VAR)
expansion as the kubelet does), and container paths rewritten to those
directories. Split from pod.py (the house keeps files under 800 lines).
"""
import base64
import os
import re

from .net import kube_service_ips, node_ip, node_ips

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class PodVolumes:
    def secret(self, name):
        return self.kl.store.get("secrets", self.ns, name)

    def prepare(self):
        """Write volumes, compute env. Returns an error text or None."""
        vdir = os.path.join(self.dir, "volumes")
        self.mounts = {}
        fs_group = (self.pod["spec"].get("securityContext") or {}).get(
            "fsGroup")
        for v in self.pod["spec"].get("volumes") or []:
            if "persistentVolumeClaim" in v:
                path, err = self.claim_dir(v["persistentVolumeClaim"].get(
                    "claimName"), fs_group)
                if err:
                    return err
                self.mounts[v["name"]] = path
                continue
            d = os.path.join(vdir, v["name"])
            os.makedirs(d, exist_ok=True)
            if "emptyDir" in v:
                os.chmod(d, 0o777)   # as the kubelet makes it: any user writes
            files = {}
            if "secret" in v:
                s = self.secret(v["secret"].get("secretName"))
                if s is None:
                    if v["secret"].get("optional"):
                        continue
                    return 'secret "%s" not found' % v["secret"].get(
                        "secretName")
                data = {k: base64.b64decode(x) for k, x in
                        (s.get("data") or {}).items()}
                files = _items(data, v["secret"].get("items"))
            elif "configMap" in v:
                cm = self.kl.store.get("configmaps", self.ns,
                                       v["configMap"].get("name"))
                if cm is None:
                    if v["configMap"].get("optional"):
                        continue
                    return 'configmap "%s" not found' % v["configMap"].get(
                        "name")
                data = {k: x.encode() for k, x in
                        (cm.get("data") or {}).items()}
                files = _items(data, v["configMap"].get("items"))
            elif "projected" in v:
                for src in v["projected"].get("sources") or []:
                    if "serviceAccountToken" in src:
                        files[src["serviceAccountToken"].get(
                            "path", "token")] = self.token()
                    if "secret" in src:
                        s = self.secret(src["secret"].get("name"))
                        if s:
                            files.update(_items({
                                k: base64.b64decode(x) for k, x in (
                                    s.get("data") or {}).items()},
                                src["secret"].get("items")))
                    if "downwardAPI" in src:
                        for it in src["downwardAPI"].get("items") or []:
                            fp = (it.get("fieldRef") or {}).get("fieldPath")
                            files[it["path"]] = str(self.field(fp)).encode()
                    if "configMap" in src:
                        ca = os.path.join(self.kl.cfg.state_dir, "pki",
                                          "ca.crt")
                        with open(ca, "rb") as f:
                            files["ca.crt"] = f.read()
            for rel, content in files.items():
                p = os.path.join(d, rel)
                os.makedirs(os.path.dirname(p), exist_ok=True)
                with open(p, "wb") as f:
                    f.write(content)
                os.chmod(p, v.get("secret", {}).get("defaultMode", 0o644)
                         if "secret" in v else 0o644)
                if fs_group is not None:
                    os.chown(p, -1, fs_group)
            self.mounts[v["name"]] = d
        self.envs = {}
        home = os.path.join(self.dir, "home")
        os.makedirs(home, exist_ok=True)
        for c in list(self.inits.values()) + list(self.containers.values()):
            env = {"PATH": PATH, "HOSTNAME": self.node if self.pod[
                "spec"].get("hostNetwork") else self.name,
                "KUBERNETES_SERVICE_HOST": kube_service_ips()[0],
                "KUBERNETES_SERVICE_PORT": "443",
                # the pod's own (empty) home, not the host's: no ~/.kube
                # of this machine takes precedence over in-cluster access
                "HOME": home}
            for ef in c.spec.get("envFrom") or []:
                pre = ef.get("prefix", "")
                if "secretRef" in ef:
                    s = self.secret(ef["secretRef"]["name"])
                    if s is None:
                        if ef["secretRef"].get("optional"):
                            continue
                        return 'secret "%s" not found' % ef["secretRef"][
                            "name"]
                    for k, x in (s.get("data") or {}).items():
                        env[pre + k] = base64.b64decode(x).decode(
                            errors="replace")
                if "configMapRef" in ef:
                    cm = self.kl.store.get("configmaps", self.ns,
                                           ef["configMapRef"]["name"])
                    if cm is None:
                        if ef["configMapRef"].get("optional"):
                            continue
                        return 'configmap "%s" not found' % \
                            ef["configMapRef"]["name"]
                    for k, x in (cm.get("data") or {}).items():
                        env[pre + k] = x
            for e in c.spec.get("env") or []:
                if "valueFrom" not in e:
                    env[e["name"]] = _expand(e.get("value", ""), env)
                    continue
                vf = e["valueFrom"]
                if "fieldRef" in vf:
                    env[e["name"]] = str(self.field(vf["fieldRef"].get(
                        "fieldPath")))
                elif "secretKeyRef" in vf:
                    r = vf["secretKeyRef"]
                    s = self.secret(r.get("name"))
                    if s is None or r.get("key") not in (s.get("data") or {}):
                        if r.get("optional"):
                            continue
                        if s is None:
                            return 'secret "%s" not found' % r.get("name")
                        return "couldn't find key %s in Secret %s/%s" % (
                            r.get("key"), self.ns, r.get("name"))
                    env[e["name"]] = base64.b64decode(
                        s["data"][r["key"]]).decode(errors="replace")
                elif "configMapKeyRef" in vf:
                    r = vf["configMapKeyRef"]
                    cm = self.kl.store.get("configmaps", self.ns,
                                           r.get("name"))
                    if cm is None or r.get("key") not in (cm.get("data") or
                                                          {}):
                        if r.get("optional"):
                            continue
                        if cm is None:
                            return 'configmap "%s" not found' % r.get("name")
                        return "couldn't find key %s in ConfigMap %s/%s" % (
                            r.get("key"), self.ns, r.get("name"))
                    env[e["name"]] = cm["data"][r["key"]]
                elif "resourceFieldRef" in vf:
                    env[e["name"]] = "0"
            self.envs[c.name] = env
        return None

    def token(self):
        """The pod's ServiceAccount token (auth.py), which the API server
        takes as system:serviceaccount:NS:NAME."""
        auth = getattr(self.kl, "auth", None)
        if auth is None:
            return b"kube-sim-not-a-token"
        return auth.sa_token(self.ns, self.pod["spec"].get(
            "serviceAccountName") or "default").encode()

    def claim_dir(self, claim, fs_group):
        """(host directory, None) of a bound claim's volume, or (None,
        error text) while it is missing or unbound."""
        pvc = self.kl.store.get("persistentvolumeclaims", self.ns, claim)
        if pvc is None:
            return None, 'persistentvolumeclaim "%s" not found' % claim
        if (pvc.get("status") or {}).get("phase") != "Bound":
            return None, 'persistentvolumeclaim "%s" is not bound' % claim
        pv = self.kl.store.get("persistentvolumes", "", pvc["spec"].get(
            "volumeName"))
        path = ((pv or {}).get("spec") or {}).get("hostPath", {}).get("path")
        if not path or not os.path.isdir(path):
            return None, 'volume "%s" of persistentvolumeclaim "%s" has no ' \
                'directory' % (pvc["spec"].get("volumeName"), claim)
        if fs_group is not None:
            # like the kubelet's volume ownership management: the group
            # owns the volume, new files inherit it (setgid)
            os.chown(path, -1, fs_group)
            os.chmod(path, 0o2777)
        return path, None

    def field(self, fp):
        p = self.kl.store.get("pods", self.ns, self.name) or self.pod
        hostip = node_ip(self.node_i)
        ip = self.ip or (hostip if p["spec"].get("hostNetwork") else "")
        return {"metadata.name": self.name, "metadata.namespace": self.ns,
                "metadata.uid": self.uid,
                "spec.nodeName": self.node,
                "spec.serviceAccountName": p["spec"].get(
                    "serviceAccountName", "default"),
                "status.podIP": ip,
                "status.podIPs": ",".join(self.ips) if self.ips else ip,
                "status.hostIP": hostip,
                "status.hostIPs": ",".join(node_ips(self.node_i)),
                }.get(fp, "") if not (fp or "").startswith(
                    "metadata.labels") else (p["metadata"].get("labels") or
                                             {}).get(fp.split("'")[1] if "'"
                                                     in fp else "", "")

    def map_path(self, c, s):
        """Rewrite container paths under a volumeMount to host paths."""
        best = None
        for m in c.spec.get("volumeMounts") or []:
            mp = m.get("mountPath", "").rstrip("/")
            host = self.mounts.get(m.get("name"))
            if not mp or not host:
                continue
            if m.get("subPath"):
                host = os.path.join(host, m["subPath"])
            if s == mp or s.startswith(mp + "/"):
                if best is None or len(mp) > len(best[0]):
                    best = (mp, host)
        if best:
            return best[1] + s[len(best[0]):]
        # also inside words of a longer argument (sh -c "... /etc/x/y ...",
        # --flag=/etc/x/y)
        for m in sorted(c.spec.get("volumeMounts") or [],
                        key=lambda m: -len(m.get("mountPath", ""))):
            mp = m.get("mountPath", "").rstrip("/")
            host = self.mounts.get(m.get("name"))
            if not mp or not host:
                continue
            if m.get("subPath"):
                host = os.path.join(host, m["subPath"])
            s = re.sub(r"(?<![\w/.-])" + re.escape(mp) + r"(?=/|$|[\s\"';])",
                       lambda _m, h=host: h, s)
        return s

    # ------------------------------------------------------------ processes


def _items(data, items):
    if not items:
        return dict(data)
    return {it["path"]: data[it["key"]] for it in items if it["key"] in data}


def _expand(s, env):
    """$(VAR) references, as the kubelet expands them."""
    out, i = "", 0
    while i < len(s):
        if s.startswith("$$", i):
            out += "$"
            i += 2
        elif s.startswith("$(", i) and ")" in s[i:]:
            j = s.index(")", i)
            k = s[i + 2:j]
            out += env.get(k, s[i:j + 1])
            i = j + 1
        else:
            out += s[i]
            i += 1
    return out
