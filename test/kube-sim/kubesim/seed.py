# SPDX-License-Identifier: Apache-2.0
"""seed - what every cluster holds before anyone asks: its namespaces, the
kubernetes Service, the RBAC file's objects, and the system workloads
(kube-proxy, the CNI's DaemonSet). Split from main.py (the house keeps files
under 800 lines).
"""
import json
import sys


def seed(st, adm, cfg):
    """Namespaces every cluster has, and the RBAC file's objects."""
    from . import net
    from . import resources as R
    # the API server's Service: the first address of the primary range
    kube_ips = net.kube_service_ips()
    from .util import yaml_load_all
    for n in ("default", "kube-system", "kube-public", "kube-node-lease"):
        adm.create(R.BY_GR[("", "namespaces")], {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {
                "name": n}}, None, False, [])
    st.create("services", {"apiVersion": "v1", "kind": "Service",
                           "metadata": {"name": "kubernetes", "namespace":
                                        "default", "labels": {
                                            "component": "apiserver",
                                            "provider": "kubernetes"}},
                           "spec": {"type": "ClusterIP", "clusterIP":
                                    kube_ips[0], "clusterIPs": kube_ips[:1],
                                    "ipFamilies": net.FAMILIES[:1],
                                    "ipFamilyPolicy": "SingleStack",
                                    "ports": [{
                                        "name": "https", "port": 443,
                                        "protocol": "TCP",
                                        "targetPort": 6443}],
                                    "sessionAffinity": "None"},
                           "status": {"loadBalancer": {}}})
    if getattr(cfg, "dns", False):
        from . import dns
        dns.seed_service(st)
    seed_system(st, adm, cfg)
    docs = []
    for path in cfg.rbac_files:
        with open(path) as f:
            text = f.read()
        try:
            docs.append(json.loads(text))
        except ValueError:
            docs += yaml_load_all(text)
    objs = []
    for doc in docs:
        if doc.get("kind", "").endswith("List") and "items" in doc:
            objs += doc["items"]
        else:
            objs.append(doc)
    objs.sort(key=lambda o: o.get("kind") != "Namespace")
    for o in objs:
        av = o.get("apiVersion", "v1")
        group = av.split("/")[0] if "/" in av else ""
        res = next((r for r in R.RESOURCES if r.kind == o.get("kind") and
                    r.group == group), None)
        if res is None:
            print("kube-sim: --rbac: skipping %s/%s" % (av, o.get("kind")),
                  file=sys.stderr)
            continue
        md = o.setdefault("metadata", {})
        if res.namespaced:
            md.setdefault("namespace", "default")
            if st.get("namespaces", "", md["namespace"]) is None:
                adm.create(R.BY_GR[("", "namespaces")], {
                    "apiVersion": "v1", "kind": "Namespace", "metadata": {
                        "name": md["namespace"]}}, None, False, [])
        if st.get(res.name, md.get("namespace"), md.get("name")) is None:
            adm.create(res, o, None, False, [])


CNIS = {
    "aws-node": ("kube-system", "aws-node",
                 "602401143452.dkr.ecr.us-west-2.amazonaws.com/"
                 "amazon-k8s-cni:%s", "v1.19.2"),
    "cilium": ("kube-system", "cilium", "quay.io/cilium/cilium:%s",
               "v1.16.3"),
    "calico": ("kube-system", "calico-node", "docker.io/calico/node:%s",
               "v3.28.2"),
    "flannel": ("kube-flannel", "kube-flannel-ds",
                "docker.io/flannel/flannel:%s", "v0.25.7"),
}


def seed_system(st, adm, cfg):
    """kube-proxy and (with --cni) a CNI DaemonSet in kube-system, as
    static objects: their status says every node runs them, but kube-sim
    starts no pods for them (annotation kube-sim.io/static)."""
    from . import resources as R
    want = [("kube-system", "kube-proxy",
             "registry.k8s.io/kube-proxy:v1.35.0")]
    if cfg.cni:
        name, _, ver = cfg.cni.partition(":")
        ns, ds, img, dver = CNIS[name]
        want.append((ns, ds, img % (ver or dver)))
    for ns, name, img in want:
        if st.get("namespaces", "", ns) is None:
            adm.create(R.BY_GR[("", "namespaces")], {
                "apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": ns}}, None, False, [])
        lab = {"k8s-app": name}
        c = {"name": name, "image": img}
        if name == "kube-proxy":  # kubeadm's: reads ConfigMap kube-proxy's config.conf
            c["command"] = ["kube-proxy", "--config=/var/lib/kube-proxy/config.conf"]
        o = adm.create(R.BY_GR[("apps", "daemonsets")], {
            "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {
                "name": name, "namespace": ns, "labels": dict(lab),
                "annotations": {"kube-sim.io/static": "true"}},
            "spec": {"selector": {"matchLabels": lab}, "template": {
                "metadata": {"labels": dict(lab)}, "spec": {
                    "hostNetwork": True, "priorityClassName":
                    "system-node-critical", "containers": [c]}}}},
            None, False, [])
        n = cfg.nodes

        def setst(x, n=n):
            x["status"] = {"currentNumberScheduled": n,
                           "desiredNumberScheduled": n,
                           "numberAvailable": n, "numberMisscheduled": 0,
                           "numberReady": n, "observedGeneration": 1,
                           "updatedNumberScheduled": n}
        st.mutate("daemonsets", ns, o["metadata"]["name"], setst)
    if st.get("configmaps", "kube-system", "kube-proxy") is None:
        st.create("configmaps", {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {
                "name": "kube-proxy", "namespace": "kube-system",
                "labels": {"app": "kube-proxy"}},
            "data": {"config.conf": "apiVersion: kubeproxy.config.k8s.io/"
                     "v1alpha1\nkind: KubeProxyConfiguration\nmode: "
                     "nftables\nclusterCIDR: 198.19.16.0/20\n"}})


# ---------------------------------------------------------------- down
