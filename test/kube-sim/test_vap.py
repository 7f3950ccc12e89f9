#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""test_vap - kube-sim's ValidatingAdmissionPolicies (kubesim/vap.py, CEL in
@bufbuild/cel through cel_helper.mjs) without root, against the shipped
manifests/admission-policy.yaml: kperf's agent pods (pod and host network,
as controller/k8s/k8s_objects.c builds them) are admitted in kperf-host;
another image, a privileged container, an added capability, hostPID, a
hostPath volume, a missing drop ALL are refused with the policy's message
(a Pod, a DaemonSet's template, a Job's template, an update); pods of other
namespaces are not judged; and the generic parts (params with
parameterNotFoundAction, matchConditions, Warn, failurePolicy Ignore on an
error, a failing variable) behave as the apiserver's."""
import copy
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from kubesim import resources as R  # noqa: E402
from kubesim import vap  # noqa: E402
from kubesim.schema import Rejected  # noqa: E402
from kubesim.store import Store  # noqa: E402
from kubesim.util import yaml_load_all  # noqa: E402

SRC = os.path.dirname(os.path.dirname(HERE))
FAILS = []
PODS = R.BY_GR[("", "pods")]
DS = R.BY_GR[("apps", "daemonsets")]
JOBS = R.BY_GR[("batch", "jobs")]


class Cfg:
    def __init__(self, cel_dir):
        self.cel_dir = cel_dir


def check(name, cond, detail=""):
    print("%s %s%s" % ("ok  " if cond else "FAIL", name,
                       (": " + detail) if detail and not cond else ""))
    if not cond:
        FAILS.append(name)


def agent_pod(ns, host_network):
    """The pod spec kperf's agents get (k8s_objects.c pod_spec/container)."""
    sc = {"runAsNonRoot": True, "allowPrivilegeEscalation": False,
          "runAsUser": 65532, "runAsGroup": 65532,
          "readOnlyRootFilesystem": True, "capabilities": {"drop": ["ALL"]},
          "seccompProfile": {"type": "RuntimeDefault"}}
    spec = {"serviceAccountName": "kperf-agent",
            "automountServiceAccountToken": False,
            "containers": [{"name": "agent",
                            "image": "ghcr.io/kperf/kperf-agent:0.1.0",
                            "command": ["kperf-agent"], "args": ["server"],
                            "securityContext": sc,
                            "ports": [{"containerPort": 5201}],
                            "resources": {"requests": {"cpu": "100m"}}}],
            "volumes": [{"name": "token", "secret": {
                "secretName": "kperf-token", "defaultMode": 0o440}}],
            "securityContext": {"runAsNonRoot": True, "runAsUser": 65532,
                                "fsGroup": 65532, "seccompProfile": {
                                    "type": "RuntimeDefault"}},
            "terminationGracePeriodSeconds": 2}
    if host_network:
        spec["hostNetwork"] = True
        spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "kperf-server-host-a-x", "namespace": ns,
        "labels": {"app.kubernetes.io/name": "kperf"}}, "spec": spec}


def setup(cel_dir, extra_docs=()):
    st = Store()
    for name in ("kperf", "kperf-host", "other"):
        st.create("namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                 "metadata": {"name": name, "labels": {
                                     "kubernetes.io/metadata.name": name}}})
    with open(os.path.join(SRC, "manifests", "admission-policy.yaml")) as f:
        docs = yaml_load_all(f.read())
    for d in list(docs) + list(extra_docs):
        res = "validatingadmissionpolicies" if d["kind"].endswith(
            "Policy") else "validatingadmissionpolicybindings" \
            if d["kind"].endswith("Binding") else "configmaps"
        st.create(res, d)
    return st, vap.Policies(Cfg(cel_dir), st)


def admit(pol, st, res, obj, old=None):
    """-> None (admitted) or the Rejected's message; warnings in .warn"""
    ns = obj["metadata"].get("namespace")
    ns_obj = st.get("namespaces", "", ns)
    admit.warn = []
    try:
        pol.admit(res, "UPDATE" if old else "CREATE", obj, old,
                  None, ns_obj, admit.warn)
    except Rejected as e:
        return "%d %s: %s" % (e.code, e.reason, e.message)
    return None


def shipped_policy(cel_dir):
    st, pol = setup(cel_dir)
    for net in (0, 1):
        got = admit(pol, st, PODS, agent_pod("kperf-host", net))
        check("agent pod (hostNetwork=%d) admitted in kperf-host" % net,
              got is None, got)
    bad = agent_pod("kperf-host", 1)
    bad["spec"]["containers"][0]["image"] = "docker.io/library/busybox:1"
    got = admit(pol, st, PODS, bad) or ""
    check("another image refused, the image named", got.startswith(
        "403 Forbidden: pods \"kperf-server-host-a-x\" is forbidden: "
        "ValidatingAdmissionPolicy 'kperf-host-agents' with binding "
        "'kperf-host-agents' denied request: only the kperf agent image")
        and "not docker.io/library/busybox:1" in got, got)
    look = agent_pod("kperf-host", 1)
    look["spec"]["containers"][0]["image"] = \
        "ghcr.io/kperf/kperf-agent-evil:1"
    check("a look-alike repository refused",
          "only the kperf agent image" in (admit(pol, st, PODS, look) or ""))
    dig = agent_pod("kperf-host", 1)
    dig["spec"]["containers"][0]["image"] = \
        "ghcr.io/kperf/kperf-agent@sha256:" + "a" * 64
    check("the agent image by digest admitted",
          admit(pol, st, PODS, dig) is None)
    cases = [
        ("privileged", lambda s: s["containers"][0]["securityContext"]
         .update(privileged=True), "privileged containers are not allowed"),
        ("capabilities.add", lambda s: s["containers"][0]["securityContext"]
         ["capabilities"].update(add=["NET_ADMIN"]),
         "containers may not add capabilities"),
        ("no drop ALL", lambda s: s["containers"][0]["securityContext"]
         .pop("capabilities"), "drop ALL capabilities"),
        ("hostPID", lambda s: s.update(hostPID=True),
         "hostPID and hostIPC are not allowed"),
        ("hostPath", lambda s: s["volumes"].append(
            {"name": "root", "hostPath": {"path": "/"}}),
         "only secret, configMap"),
        ("runAsUser 0", lambda s: s["containers"][0]["securityContext"]
         .update(runAsUser=0), "must run as non-root"),
        ("seccomp Unconfined", lambda s: s["containers"][0]
         ["securityContext"].update(seccompProfile={"type": "Unconfined"}),
         "a seccomp profile"),
        ("an init container of another image", lambda s: s.update(
            initContainers=[{"name": "i", "image": "busybox",
                             "securityContext": s["containers"][0][
                                 "securityContext"]}]), "not busybox"),
    ]
    for name, change, want in cases:
        p = agent_pod("kperf-host", 1)
        change(p["spec"])
        got = admit(pol, st, PODS, p) or ""
        check("pod with %s refused" % name, got.startswith("403 Forbidden")
              and want in got, got)
        tmpl = {"metadata": {"labels": {"a": "b"}}, "spec": p["spec"]}
        ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {
            "name": "d", "namespace": "kperf-host"}, "spec": {
                "selector": {"matchLabels": {"a": "b"}}, "template": tmpl}}
        got = admit(pol, st, DS, ds) or ""
        check("DaemonSet template with %s refused" % name, want in got, got)
    ok = agent_pod("kperf-host", 1)
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
        "name": "j", "namespace": "kperf-host"}, "spec": {"template": {
            "spec": ok["spec"]}}}
    check("agent Job admitted", admit(pol, st, JOBS, job) is None)
    bad_upd = copy.deepcopy(ok)
    bad_upd["spec"]["containers"][0]["image"] = "busybox"
    check("an update to another image refused", "not busybox" in (
        admit(pol, st, PODS, bad_upd, ok) or ""))
    for ns in ("kperf", "other"):
        got = admit(pol, st, PODS, bad | {"metadata": {
            "name": "p", "namespace": ns}})
        check("not judged in namespace %s" % ns, got is None, got)


def generic(cel_dir):
    pol_doc = {"apiVersion": "admissionregistration.k8s.io/v1",
               "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "p"},
               "spec": {"paramKind": {"apiVersion": "v1",
                                      "kind": "ConfigMap"},
                        "matchConstraints": {"resourceRules": [{
                            "apiGroups": [""], "apiVersions": ["v1"],
                            "operations": ["CREATE"],
                            "resources": ["pods"]}]},
                        "matchConditions": [{
                            "name": "labelled", "expression":
                            "has(object.metadata.labels) && "
                            "'judge' in object.metadata.labels"}],
                        "variables": [{"name": "bad",
                                       "expression": "object.nope"}],
                        "validations": [{
                            "expression": "size(object.spec.containers) <= "
                            "int(params.data.max)"}]}}
    bind = {"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": "b"},
            "spec": {"policyName": "p", "validationActions": ["Deny"],
                     "paramRef": {"name": "limits", "namespace": "other",
                                  "parameterNotFoundAction": "Deny"}}}
    st, pol = setup(cel_dir, [pol_doc, bind])
    p = agent_pod("kperf", 0)
    p["metadata"]["labels"]["judge"] = "1"
    got = admit(pol, st, PODS, p) or ""
    check("a missing param with Deny refuses", "no params found" in got, got)
    st.create("configmaps", {"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": "limits",
                                          "namespace": "other"},
                             "data": {"max": "0"}})
    got = admit(pol, st, PODS, p) or ""
    check("the param is read; default message names the expression",
          got.startswith("422 Invalid") and "failed expression: size("
          "object.spec.containers) <= int(params.data.max)" in got, got)
    q = agent_pod("kperf", 0)
    check("matchConditions false: not judged", admit(pol, st, PODS, q)
          is None)
    st.mutate("validatingadmissionpolicybindings", "", "b", lambda o: o[
        "spec"].update(validationActions=["Warn"]))
    got = admit(pol, st, PODS, p)
    check("Warn: admitted with a warning", got is None and admit.warn and
          "failed expression" in admit.warn[0], "%s %s" % (got, admit.warn))
    st.mutate("validatingadmissionpolicies", "", "p", lambda o: o[
        "spec"].update(validations=[{"expression": "variables.bad == 1"}],
                       failurePolicy="Ignore"))
    check("an error with failurePolicy Ignore admits",
          admit(pol, st, PODS, p) is None)
    st.mutate("validatingadmissionpolicies", "", "p", lambda o: o[
        "spec"].update(failurePolicy="Fail"))
    st.mutate("validatingadmissionpolicybindings", "", "b", lambda o: o[
        "spec"].update(validationActions=["Deny"]))
    got = admit(pol, st, PODS, p) or ""
    check("an error with failurePolicy Fail refuses, naming it",
          "expression 'variables.bad == 1' resulted in error" in got, got)
    nocel = vap.Policies(Cfg("/nonexistent"), st)
    try:
        nocel.check_new_policy(R.BY_GR[(vap.GROUP,
                                        "validatingadmissionpolicies")])
        check("no CEL evaluator: a new policy is refused", False)
    except Rejected as e:
        check("no CEL evaluator: a new policy is refused",
              "get-cel.sh" in e.message, e.message)
    pol.cel.close()


def main():
    try:
        cel_dir = subprocess.run(
            ["bash", os.path.join(SRC, "test", "tools", "get-cel.sh")],
            check=True, capture_output=True, text=True).stdout.strip()
    except subprocess.CalledProcessError as e:
        print("FAIL get-cel.sh: %s" % e.stderr)
        return 1
    shipped_policy(cel_dir)
    generic(cel_dir)
    print("%d failed" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
