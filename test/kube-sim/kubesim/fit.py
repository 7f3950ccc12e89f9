# SPDX-License-Identifier: Apache-2.0
"""fit - the scheduler's resource fit (NodeResourcesFit and max-pods).

Owns: quantities (cpu in thousandths, memory in bytes), a pod's effective
requests as Kubernetes computes them (the larger of the largest init
container and the sum of the app containers, per resource), a node's
allocatable (status.allocatable cpu / memory / pods, set per node by the
node-allocatable fault), and the reasons in the scheduler's words why a
node cannot take a pod ("Too many pods", "Insufficient cpu", "Insufficient
memory"), with whether preemption could help (it cannot when the pod alone
exceeds the node).
"""
import re

# what every node offers unless a node-allocatable fault says otherwise:
# enough that every test's pods fit (the host's own 2 CPUs would not)
DEFAULT_ALLOCATABLE = {"cpu": "8", "memory": "32Gi", "pods": "110"}

_SUFFIX = {"": 1, "k": 10 ** 3, "M": 10 ** 6, "G": 10 ** 9, "T": 10 ** 12,
           "P": 10 ** 15, "E": 10 ** 18, "Ki": 2 ** 10, "Mi": 2 ** 20,
           "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60,
           "m": 0.001}


def quantity(s):
    """A Kubernetes quantity ("500m", "1.5", "64Mi", "1e3") as a float;
    None when it does not parse."""
    m = re.match(r"^([+-]?[0-9.]+)(?:[eE]([+-]?[0-9]+))?"
                 r"(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$", str(s).strip())
    if not m:
        return None
    try:
        x = float(m.group(1))
    except ValueError:
        return None
    if m.group(2):
        x *= 10 ** int(m.group(2))
    return x * _SUFFIX[m.group(3) or ""]


def _amounts(res):
    """{cpu: thousandths, memory: bytes} of a requests/allocatable map."""
    out = {}
    for k, scale in (("cpu", 1000), ("memory", 1)):
        q = quantity((res or {}).get(k, "0"))
        out[k] = int(round((q or 0) * scale))
    return out


def pod_requests(spec):
    """The pod's effective requests {cpu, memory}: per resource, the larger
    of the largest init container's and the sum of the app containers'
    (plus spec.overhead, as the scheduler adds it)."""
    total = {"cpu": 0, "memory": 0}
    for c in spec.get("containers") or []:
        r = _amounts((c.get("resources") or {}).get("requests"))
        for k in total:
            total[k] += r[k]
    for c in spec.get("initContainers") or []:
        r = _amounts((c.get("resources") or {}).get("requests"))
        for k in total:
            total[k] = max(total[k], r[k])
    over = _amounts(spec.get("overhead"))
    for k in total:
        total[k] += over[k]
    return total


def allocatable(node):
    """{cpu, memory, pods} the node offers."""
    a = dict(DEFAULT_ALLOCATABLE)
    a.update((node.get("status") or {}).get("allocatable") or {})
    out = _amounts(a)
    out["pods"] = int(quantity(a.get("pods", "110")) or 0)
    return out


def usage(pods):
    """node name -> {cpu, memory, pods} used by its non-terminal pods."""
    used = {}
    for p in pods:
        n = p["spec"].get("nodeName")
        if not n or (p.get("status") or {}).get("phase") in ("Succeeded",
                                                             "Failed"):
            continue
        u = used.setdefault(n, {"cpu": 0, "memory": 0, "pods": 0})
        r = pod_requests(p["spec"])
        u["cpu"] += r["cpu"]
        u["memory"] += r["memory"]
        u["pods"] += 1
    return used


def add_use(used, node, spec):
    """Counts a pod just bound to node in used."""
    u = used.setdefault(node, {"cpu": 0, "memory": 0, "pods": 0})
    r = pod_requests(spec)
    u["cpu"] += r["cpu"]
    u["memory"] += r["memory"]
    u["pods"] += 1


def misfit(spec, node, used):
    """(reasons, resolvable): why the node cannot take the pod, in the
    scheduler's words and order ([] when it fits), and whether evicting
    other pods could make room (not when the pod alone exceeds the node)."""
    a = allocatable(node)
    u = used.get(node["metadata"]["name"]) or {"cpu": 0, "memory": 0,
                                               "pods": 0}
    r = pod_requests(spec)
    why, resolvable = [], True
    if u["pods"] + 1 > a["pods"]:
        why.append("Too many pods")
        resolvable = resolvable and a["pods"] >= 1
    for k in ("cpu", "memory"):
        if r[k] and r[k] > a[k] - u[k]:
            why.append("Insufficient " + k)
            resolvable = resolvable and r[k] <= a[k]
    return why, resolvable


def histogram(counts):
    """'2 Too many pods, 3 Insufficient cpu': "<count> <reason>" strings
    sorted as strings, as the scheduler's FitError does."""
    return ", ".join(sorted("%d %s" % (c, r) for r, c in counts.items()))
