# SPDX-License-Identifier: Apache-2.0
"""hostports - the scheduler's NodePorts filter: a pod that asks for a
hostPort (hostNetwork pods' container ports count as hostPorts: the API
server defaults hostPort to containerPort for them, admission.py) cannot go
to a node where a non-terminal pod already holds the same protocol and port
on an overlapping host IP (an empty hostIP or 0.0.0.0 overlaps every
address).

Owns: which (protocol, hostIP, port) a pod holds, the set of them per node
(kept beside fit.py's usage in the same per-node dict) and the reason in the
scheduler's words. Knows nothing of the store or HTTP."""

REASON = "node(s) didn't have free ports for the requested pod ports"


def wanted(spec):
    """The (protocol, hostIP, port) triples of the pod's containers."""
    out = []
    for c in (spec.get("containers") or []) + \
            (spec.get("initContainers") or []):
        for p in c.get("ports") or []:
            port = p.get("hostPort") or (
                p.get("containerPort") if spec.get("hostNetwork") else 0)
            if port:
                out.append((p.get("protocol") or "TCP",
                            p.get("hostIP") or "0.0.0.0", int(port)))
    return out


def _overlap(a, b):
    return a == b or "0.0.0.0" in (a, b)


def add(used, node, spec):
    """Counts the host ports of a pod bound to node in used (fit.usage's)."""
    u = used.setdefault(node, {"cpu": 0, "memory": 0, "pods": 0})
    u.setdefault("hostports", []).extend(wanted(spec))


def note_usage(used, pods):
    """Adds the host ports held by every non-terminal bound pod to used."""
    for p in pods:
        n = p["spec"].get("nodeName")
        if n and (p.get("status") or {}).get("phase") not in ("Succeeded",
                                                              "Failed"):
            add(used, n, p["spec"])


def misfit(spec, node, used):
    """[REASON] when a port the pod asks for is held on node, else []."""
    held = (used.get(node["metadata"]["name"]) or {}).get("hostports") or []
    for proto, ip, port in wanted(spec):
        for hp, hip, hport in held:
            if hp == proto and hport == port and _overlap(ip, hip):
                return [REASON]
    return []
