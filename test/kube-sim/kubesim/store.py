# SPDX-License-Identifier: Apache-2.0
"""store - the in-memory object store ("etcd + watch cache").

Owns: objects keyed by (resource, namespace, name) and indexed by resource
(a list or a controller pass reads one resource's objects, not every object:
events and pods of a large run outnumber the rest), the global
resourceVersion counter, uid/creationTimestamp/generation stamping, the
bounded event history that watches replay from, and change subscribers
(controllers). Knows nothing of HTTP, validation or admission: callers
decide what may be stored.

A stored object is never changed in place (an update stores a new dict), so
the history and readers under the lock (refs) share it instead of copying;
get and list hand out copies the caller may change.
"""
import collections
import threading
import time

from .util import dcopy, new_uid, now_iso

HISTORY_MAX = 20000      # events kept for watch replay
HISTORY_SECONDS = 300    # like etcd3's ~5 minute compaction window


class Conflict(Exception):
    pass


class Store:
    def __init__(self):
        self.lock = threading.RLock()
        self.cond = threading.Condition(self.lock)
        self.rv = 1
        self.objs = {}            # (res, ns, name) -> obj
        self.by_res = collections.defaultdict(dict)  # res -> {key: obj}
        self.history = collections.deque()  # (rv, type, res, ns, obj, t, old)
        self.compacted_rv = 1     # oldest rv a watch may resume from
        self.subscribers = []     # fn(type, res, obj, old)
        self.res_rvs = {}         # res -> resourceVersion of its last change

    # -- helpers
    def _next_rv(self):
        self.rv += 1
        return self.rv

    def res_rv(self, res):
        """The resourceVersion of the last change to any object of res (0:
        none yet): what a cache of something computed from them keys on."""
        return self.res_rvs.get(res, 0)

    def _record(self, typ, res, obj, old):
        now = time.time()
        self.res_rvs[res] = int(obj["metadata"]["resourceVersion"])
        self.history.append((int(obj["metadata"]["resourceVersion"]), typ,
                             res, obj["metadata"].get("namespace", ""),
                             obj, now, old))
        while self.history and (len(self.history) > HISTORY_MAX or
                                now - self.history[0][5] > HISTORY_SECONDS):
            self.compacted_rv = self.history.popleft()[0]
        self.cond.notify_all()
        for fn in list(self.subscribers):
            try:
                fn(typ, res, obj, old)
            except Exception as e:  # a broken subscriber must not break writes
                import sys
                print("kube-sim: subscriber error: %r" % e, file=sys.stderr)

    def compact(self):
        """Forget all history (a fault: every resumed watch gets 410)."""
        with self.lock:
            self.history.clear()
            self.compacted_rv = self.rv

    # -- reads (return copies)
    def get(self, res, ns, name):
        with self.lock:
            o = self.objs.get((res, ns or "", name))
            return dcopy(o) if o is not None else None

    def list(self, res, ns=None, match=None):
        """All objects of res (in ns when given; for which match(obj) is
        true when given: it is called on the stored object and must not
        change it), copies sorted by ns/name, and the current
        resourceVersion."""
        with self.lock:
            items = [dcopy(o) for (_, n, _), o in self.by_res[res].items()
                     if (ns is None or n == ns) and (match is None or
                                                     match(o))]
            items.sort(key=lambda o: (o["metadata"].get("namespace", ""),
                                      o["metadata"]["name"]))
            return items, self.rv

    def list_refs(self, res, ns=None):
        """Like list but returns the stored objects themselves (no copy,
        unsorted); they must not be modified. Stored objects are replaced,
        never changed, so the list stays a consistent snapshot after the
        lock is released."""
        with self.lock:
            return [o for (_, n, _), o in self.by_res[res].items()
                    if ns is None or n == ns]

    # -- writes
    def _put(self, key, obj):
        self.objs[key] = obj
        self.by_res[key[0]][key] = obj

    def create(self, res, obj):
        with self.lock:
            md = obj["metadata"]
            key = (res, md.get("namespace", ""), md["name"])
            if key in self.objs:
                raise Conflict("exists")
            md["uid"] = md.get("uid") or new_uid()
            md["creationTimestamp"] = now_iso()
            md["resourceVersion"] = str(self._next_rv())
            if "spec" in obj and res not in ("pods", "nodes", "namespaces",
                                             "services"):
                md["generation"] = 1
            md.pop("deletionTimestamp", None)
            self._put(key, obj)
            self._record("ADDED", res, obj, None)
            return dcopy(obj)

    def update(self, res, obj, expect_rv=None, bump_generation=False):
        """Replace an object. expect_rv: fail with Conflict if the stored
        resourceVersion differs. Returns the stored copy."""
        with self.lock:
            md = obj["metadata"]
            key = (res, md.get("namespace", ""), md["name"])
            old = self.objs.get(key)
            if old is None:
                raise KeyError(md["name"])
            if expect_rv and expect_rv != old["metadata"]["resourceVersion"]:
                raise Conflict("rv")
            md["uid"] = old["metadata"]["uid"]
            md["creationTimestamp"] = old["metadata"]["creationTimestamp"]
            if "generation" in old["metadata"]:
                g = old["metadata"]["generation"]
                md["generation"] = g + 1 if bump_generation else g
            if old["metadata"].get("deletionTimestamp"):
                md["deletionTimestamp"] = old["metadata"]["deletionTimestamp"]
                if "deletionGracePeriodSeconds" in old["metadata"]:
                    md["deletionGracePeriodSeconds"] = \
                        old["metadata"]["deletionGracePeriodSeconds"]
            if obj == old or (dict(obj, metadata=dict(
                    md, resourceVersion=None)) == dict(old, metadata=dict(
                        old["metadata"], resourceVersion=None))):
                return dcopy(old)   # no-op updates do not bump the RV
            md["resourceVersion"] = str(self._next_rv())
            self._put(key, obj)
            self._record("MODIFIED", res, obj, old)
            return dcopy(obj)

    def mutate(self, res, ns, name, fn, bump_generation=False):
        """Read-modify-write under the lock: fn(obj) edits a copy in place
        (returning False skips the write). Returns the new copy or None."""
        with self.lock:
            cur = self.objs.get((res, ns or "", name))
            if cur is None:
                return None
            o = dcopy(cur)
            if fn(o) is False:
                return dcopy(cur)
            return self.update(res, o, bump_generation=bump_generation)

    def delete(self, res, ns, name):
        """Remove now (no finalizer logic here). Returns the final object."""
        with self.lock:
            key = (res, ns or "", name)
            old = self.objs.pop(key, None)
            if old is None:
                return None
            self.by_res[res].pop(key, None)
            gone = dict(old, metadata=dict(old["metadata"], resourceVersion=str(
                self._next_rv())))
            self._record("DELETED", res, gone, old)
            return dcopy(gone)

    def events_since(self, rv):
        """History entries with rv > given rv, or None if rv is compacted."""
        with self.lock:
            if rv < self.compacted_rv:
                return None
            return [h for h in self.history if h[0] > rv]

    def wait_events(self, rv, timeout):
        """Events newer than rv, waiting up to timeout seconds for one.
        Returns None when rv has been compacted away (410 for the caller)."""
        with self.cond:
            deadline = time.time() + timeout
            while True:
                if rv < self.compacted_rv:
                    return None
                out = []
                for h in reversed(self.history):
                    if h[0] <= rv:
                        break
                    out.append(h)
                if out:
                    out.reverse()
                    return out
                left = deadline - time.time()
                if left <= 0:
                    return []
                self.cond.wait(left)
