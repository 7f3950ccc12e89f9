# SPDX-License-Identifier: Apache-2.0
"""storage - PersistentVolumeClaims and a dynamic provisioner (a mixin of
ctrl.Controllers).

Owns: binding every pending claim to a new PersistentVolume "pvc-<claim
uid>" backed by a host directory DIR/volumes/pvc-<claim uid> (the claim's
request as capacity, its access modes, reclaim policy Delete, phase Bound
on both), the kubernetes.io/pvc-protection finalizer (a deleted claim
stays Terminating while a pod that is not finished uses it), and the
reclaim: the volume and its directory go with their claim. A claim with
storageClassName "" asks for a pre-made volume and stays Pending (there are
none). As a real cluster's: a claim naming a StorageClass that does not exist,
or naming none where no class is the default (a new EKS cluster has none),
stays Pending with the persistentvolume-controller's event (ProvisioningFailed
'storageclass.storage.k8s.io "NAME" not found', FailedBinding 'no persistent
volumes available for this claim and no storage class is set'). The classes
are seeded at start (kube-sim up --storage-class, default "standard", the
default class; "" = none). Events: ProvisioningSucceeded on the claim.
"""
import os
import shutil

from .util import dcopy, now_iso

PROTECT = "kubernetes.io/pvc-protection"
DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
PROVISIONER = "kube-sim.io/hostpath"


def volumes_dir(cfg):
    return os.path.join(cfg.state_dir, "volumes")


def seed_storage_classes(st, default_name):
    """The cluster's StorageClass: default_name, marked the default ("" = none)."""
    if not default_name:
        return
    st.create("storageclasses", {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": default_name,
                     "annotations": {DEFAULT_CLASS: "true"}},
        "provisioner": PROVISIONER, "reclaimPolicy": "Delete",
        "volumeBindingMode": "Immediate"})


class Storage:
    def claim_class(self, c):
        """(class name, None) to provision with, or (None, (reason, message)) why not."""
        classes = self.store.list("storageclasses")[0]
        want = c["spec"].get("storageClassName")
        if want is None:
            for sc in classes:
                ann = sc["metadata"].get("annotations") or {}
                if ann.get(DEFAULT_CLASS) == "true":
                    return sc["metadata"]["name"], None
            return None, ("FailedBinding", "no persistent volumes available "
                          "for this claim and no storage class is set")
        if any(sc["metadata"]["name"] == want for sc in classes):
            return want, None
        return None, ("ProvisioningFailed",
                      'storageclass.storage.k8s.io "%s" not found' % want)

    def pv_path(self, pv_name):
        return os.path.join(volumes_dir(self.cfg), pv_name)

    def claims_in_use(self, ns):
        """Names of the claims that unfinished pods of namespace ns mount."""
        used = set()
        for p in self.store.list("pods", ns)[0]:
            if (p.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            if p["metadata"]["uid"] in self.released:
                continue
            for v in p["spec"].get("volumes") or []:
                c = (v.get("persistentVolumeClaim") or {}).get("claimName")
                if c:
                    used.add(c)
        return used

    def volumes(self):
        st = self.store
        claims = st.list("persistentvolumeclaims")[0]
        for c in claims:
            md = c["metadata"]
            ns, name = md["namespace"], md["name"]
            if md.get("deletionTimestamp"):
                if PROTECT in (md.get("finalizers") or []) and \
                        name not in self.claims_in_use(ns):
                    def unfin(x):
                        x["metadata"]["finalizers"] = [
                            f for f in x["metadata"].get("finalizers") or []
                            if f != PROTECT]
                        if not x["metadata"]["finalizers"]:
                            x["metadata"].pop("finalizers")
                    o = st.mutate("persistentvolumeclaims", ns, name, unfin)
                    if o:
                        self.finalize("persistentvolumeclaims", o)
                continue
            if (c.get("status") or {}).get("phase") == "Bound":
                continue
            if c["spec"].get("storageClassName") == "":
                continue   # static binding only: no volume will come
            cls, why = self.claim_class(c)
            if why:
                said = self.__dict__.setdefault("_claims_told", set())
                if md["uid"] not in said:   # once, as the controller's backoff
                    said.add(md["uid"])
                    self.event(dict(c, kind="PersistentVolumeClaim",
                                    apiVersion="v1"), "Warning", why[0],
                               why[1], "persistentvolume-controller")
                continue
            self.provision(c)
        # reclaim policy Delete: a volume whose claim is gone goes too
        uids = {c["metadata"]["uid"] for c in claims}
        for pv in st.list("persistentvolumes")[0]:
            ref = pv["spec"].get("claimRef") or {}
            if ref.get("uid") in uids or pv["spec"].get(
                    "persistentVolumeReclaimPolicy") != "Delete":
                continue
            name = pv["metadata"]["name"]
            if st.delete("persistentvolumes", None, name) is not None:
                shutil.rmtree(self.pv_path(name), ignore_errors=True)

    def provision(self, c):
        st = self.store
        md = c["metadata"]
        pv_name = "pvc-" + md["uid"]
        path = self.pv_path(pv_name)
        os.makedirs(path, exist_ok=True)
        os.chmod(path, 0o777)   # like a fresh file system: any pod may write
        size = ((c["spec"].get("resources") or {}).get("requests") or {}).get(
            "storage", "1Gi")
        modes = c["spec"].get("accessModes") or ["ReadWriteOnce"]
        if st.get("persistentvolumes", None, pv_name) is None:
            st.create("persistentvolumes", {
                "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {
                    "name": pv_name,
                    "annotations": {
                        "pv.kubernetes.io/provisioned-by": PROVISIONER}},
                "spec": {"capacity": {"storage": size}, "accessModes": modes,
                         "persistentVolumeReclaimPolicy": "Delete",
                         "volumeMode": c["spec"].get("volumeMode",
                                                     "Filesystem"),
                         "hostPath": {"path": path, "type": ""},
                         "claimRef": {"apiVersion": "v1",
                                      "kind": "PersistentVolumeClaim",
                                      "name": md["name"],
                                      "namespace": md["namespace"],
                                      "uid": md["uid"],
                                      "resourceVersion":
                                      md.get("resourceVersion")}},
                "status": {"phase": "Bound",
                           "lastPhaseTransitionTime": now_iso()}})

        def bind(x):
            if x["metadata"]["uid"] != md["uid"]:
                return False
            x["spec"]["volumeName"] = pv_name
            ann = x["metadata"].setdefault("annotations", {})
            ann["pv.kubernetes.io/bind-completed"] = "yes"
            ann["pv.kubernetes.io/bound-by-controller"] = "yes"
            ann["volume.kubernetes.io/storage-provisioner"] = PROVISIONER
            x["status"] = {"phase": "Bound", "accessModes": dcopy(modes),
                           "capacity": {"storage": size}}
        if st.mutate("persistentvolumeclaims", md["namespace"], md["name"],
                     bind):
            self.event(dict(c, kind="PersistentVolumeClaim",
                            apiVersion="v1"), "Normal",
                       "ProvisioningSucceeded", "Successfully provisioned "
                       "volume %s" % pv_name, "persistentvolume-controller")
