#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""test_openapi - unit tests of kubesim/openapi.py (our validator of objects
against the Kubernetes 1.35 schemas in schemas/openapi-subset.json) and of
how kubesim/schema.py turns its findings into the apiserver's answers.
Deliberately broken objects must be flagged at the right path; valid ones
must not. No network, no root. Run: python3 test/kube-sim/test_openapi.py
"""
import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from kubesim import openapi, schema  # noqa: E402

S = openapi.load()
POD = "io.k8s.api.core.v1.Pod"
DS = {
    "apiVersion": "apps/v1", "kind": "DaemonSet",
    "metadata": {"name": "srv", "namespace": "kperf",
                 "labels": {"app.kubernetes.io/name": "kperf"}},
    "spec": {
        "selector": {"matchLabels": {"app": "srv"}},
        "updateStrategy": {"type": "RollingUpdate",
                           "rollingUpdate": {"maxUnavailable": "10%"}},
        "template": {
            "metadata": {"labels": {"app": "srv"},
                         "creationTimestamp": "2026-01-31T23:59:59.5+01:00"},
            "spec": {
                "hostNetwork": True, "restartPolicy": "Always",
                "tolerations": [{"operator": "Exists"}],
                "containers": [{
                    "name": "agent", "image": "kperf-agent:1",
                    "ports": [{"containerPort": 5201, "protocol": "TCP"}],
                    "resources": {"limits": {"memory": "64Mi",
                                             "cpu": "500m"}},
                    "readinessProbe": {"tcpSocket": {"port": "ctl"}},
                    "securityContext": {"capabilities": {
                        "drop": ["ALL"]}}}]}}}}


def findings(obj, name=None, text=None):
    """(code, path) of the error findings for obj (or JSON text)."""
    if text is not None:
        obj = openapi.decode(text)
    name = name or S.for_kind(obj["apiVersion"], obj["kind"])
    return [(f.code, f.path) for f in S.check(obj, name) if not f.warning]


def broken(edit):
    o = copy.deepcopy(DS)
    edit(o)
    return findings(o)


def ctr(o):
    return o["spec"]["template"]["spec"]["containers"][0]


C0 = "spec.template.spec.containers[0]"


class Schemas(unittest.TestCase):
    def test_data(self):
        # what the validator needs survived the stripping
        self.assertGreaterEqual(len(S.components), 263)
        for kind in ("Pod", "DaemonSet", "Job", "CronJob", "Service",
                     "Namespace", "Secret", "ConfigMap", "ServiceAccount",
                     "Role", "ClusterRoleBinding", "WatchEvent", "Status"):
            self.assertEqual(len(S.find(kind)), 1, kind)
        with open(openapi.SCHEMA_FILE, encoding="utf-8") as f:
            text = f.read()
        self.assertNotIn('"description"', text)
        ios = S.components["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]
        self.assertEqual(ios["format"], "int-or-string")
        ctrs = S.components[POD + "Spec"]["properties"]["containers"]
        self.assertEqual(ctrs["x-kubernetes-list-map-keys"], ["name"])

    def test_regenerate_is_deterministic(self):
        # regenerating from our own file gives the same bytes
        r = subprocess.run([sys.executable, os.path.join(
            HERE, "schemas", "regenerate.py"), "--check",
            openapi.SCHEMA_FILE], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


class Valid(unittest.TestCase):
    def test_valid_objects(self):
        self.assertEqual(findings(DS), [])
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "p"},
               "spec": DS["spec"]["template"]["spec"]}
        self.assertEqual(findings(pod), [])
        sec = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
               "type": "Opaque", "data": {"k": "aGVsbG8="}}
        self.assertEqual(findings(sec), [])


class Broken(unittest.TestCase):
    def test_unknown_field(self):
        self.assertEqual(broken(lambda o: ctr(o).update(imagee="x")),
                         [("unknown", C0 + ".imagee")])
        self.assertEqual(broken(lambda o: o["spec"].update(foo=1)),
                         [("unknown", "spec.foo")])

    def test_wrong_type(self):
        self.assertEqual(broken(lambda o: o["spec"]["template"]["spec"].update(
            hostNetwork="yes")), [("type", "spec.template.spec.hostNetwork")])
        self.assertEqual(broken(lambda o: ctr(o)["ports"][0].update(
            containerPort="5201")), [("type", C0 + ".ports[0].containerPort")])
        self.assertEqual(broken(lambda o: o["metadata"]["labels"].update(
            app=3)), [("type", "metadata.labels[app]")])

    def test_int32_range(self):
        self.assertEqual(broken(lambda o: ctr(o)["ports"][0].update(
            containerPort=1 << 31)), [("range", C0 + ".ports[0].containerPort")])
        self.assertEqual(broken(lambda o: ctr(o)["readinessProbe"][
            "tcpSocket"].update(port=1 << 31)),
            [("range", C0 + ".readinessProbe.tcpSocket.port")])

    def test_missing_required(self):
        self.assertEqual(broken(lambda o: ctr(o).pop("name")),
                         [("required", C0 + ".name")])
        self.assertEqual(broken(lambda o: o["spec"].pop("template")),
                         [("required", "spec.template")])
        f = S.check(openapi.decode('{"apiVersion":"v1","kind":"Pod",'
                                   '"spec":{"containers":null}}'), POD)
        self.assertEqual([(x.code, x.path, x.null) for x in f],
                         [("required", "spec.containers", True)])

    def test_bad_enum(self):
        self.assertEqual(broken(lambda o: o["spec"]["template"]["spec"].update(
            restartPolicy="Nevr")),
            [("not-supported", "spec.template.spec.restartPolicy")])
        self.assertEqual(broken(lambda o: ctr(o)["ports"][0].update(
            protocol="ICMP")), [("not-supported", C0 + ".ports[0].protocol")])
        self.assertEqual(broken(lambda o: o["spec"]["updateStrategy"].update(
            type="Sometimes")),
            [("not-supported", "spec.updateStrategy.type")])

    def test_formats(self):
        self.assertEqual(broken(lambda o: ctr(o)["resources"]["limits"].update(
            memory="64 MiB")),
            [("quantity", C0 + ".resources.limits[memory]")])
        for bad in ("yesterday", "2026-02-30T00:00:00Z", "2026-01-01t00:00:00z",
                    "2026-01-01T24:00:00Z"):
            self.assertEqual(broken(lambda o: o["metadata"].update(
                creationTimestamp=bad)),
                [("date-time", "metadata.creationTimestamp")], bad)
        sec = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
               "data": {"k": "not base64!"}}
        self.assertEqual(findings(sec), [("byte", "data[k]")])

    def test_int_or_string(self):
        self.assertEqual(broken(lambda o: o["spec"]["updateStrategy"][
            "rollingUpdate"].update(maxUnavailable=True)),
            [("one-of", "spec.updateStrategy.rollingUpdate.maxUnavailable")])
        self.assertEqual(broken(lambda o: o["spec"]["updateStrategy"][
            "rollingUpdate"].update(maxUnavailable=1)), [])

    def test_duplicate_key(self):
        text = json.dumps(DS).replace('"hostNetwork": true',
                                      '"hostNetwork": true, "hostNetwork": false')
        self.assertEqual(findings(None, text=text),
                         [("duplicate", "spec.template.spec.hostNetwork")])

    def test_kind_and_embedded(self):
        self.assertEqual(findings(dict(DS, kind="Pod"),
                                  "io.k8s.api.apps.v1.DaemonSet"),
                         [("kind", "")])
        ev = {"type": "MODIFIED", "object": {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"},
            "spec": {"containers": [{"name": "c", "imagee": "x"}]}}}
        self.assertEqual(findings(ev, S.find("v1.WatchEvent")[0]),
                         [("unknown", "object.spec.containers[0].imagee")])

    def test_list_map_duplicates_warn(self):
        o = copy.deepcopy(DS)
        o["spec"]["template"]["spec"]["containers"].append(
            copy.deepcopy(ctr(o)))
        f = S.check(o, "io.k8s.api.apps.v1.DaemonSet")
        self.assertEqual([(x.code, x.path) for x in f],
                         [("list-dup", "spec.template.spec.containers[1]")])
        self.assertTrue(f[0].warning)


class KubeSimAnswers(unittest.TestCase):
    """schema.check keeps the apiserver's answer shapes."""

    def check(self, obj, mode="Strict"):
        return schema.check(obj, POD, "Pod", "v1", mode, "p")

    def pod(self, **spec):
        s = {"containers": [{"name": "c", "image": "i"}]}
        s.update(spec)
        return schema.parse_body(json.dumps(
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
             "spec": s}))

    def test_strict_unknown_is_400(self):
        with self.assertRaises(schema.Rejected) as e:
            self.check(self.pod(foo=1))
        self.assertEqual((e.exception.code, e.exception.message), (
            400, 'Pod in version "v1" cannot be handled as a Pod: strict '
            'decoding error: unknown field "spec.foo"'))

    def test_warn_drops_unknown(self):
        obj = self.pod(foo=1)
        self.assertEqual(self.check(obj, "Warn"),
                         (['unknown field "spec.foo"'], []))
        self.assertNotIn("foo", obj["spec"])

    def test_type_error_is_go_decode_error(self):
        with self.assertRaises(schema.Rejected) as e:
            self.check(self.pod(hostNetwork="yes"))
        self.assertEqual(e.exception.message,
                         'Pod in version "v1" cannot be handled as a Pod: json:'
                         ' cannot unmarshal string into Go struct field '
                         'Pod.spec.hostNetwork of type bool')

    def test_semantic_causes(self):
        w, causes = self.check(self.pod(restartPolicy="Nevr"))
        self.assertEqual(causes, [{
            "reason": "FieldValueNotSupported", "field": "spec.restartPolicy",
            "message": 'Unsupported value: "Nevr": supported values: '
                       '"Always", "Never", "OnFailure"'}])


class Cli(unittest.TestCase):
    def run_cli(self, *docs):
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for i, doc in enumerate(docs):
                paths.append(os.path.join(d, "%d.json" % i))
                with open(paths[-1], "w") as f:
                    json.dump(doc, f)
            return subprocess.run(
                [sys.executable, os.path.join(HERE, "kubesim", "openapi.py"),
                 "--quiet"] + paths, capture_output=True, text=True)

    def test_exit_status(self):
        self.assertEqual(self.run_cli(DS).returncode, 0)
        bad = copy.deepcopy(DS)
        ctr(bad)["imagee"] = "x"
        r = self.run_cli(DS, bad)
        self.assertEqual(r.returncode, 1)
        self.assertIn('unknown field "%s.imagee"' % C0, r.stdout)
        r = self.run_cli({"apiVersion": "example.com/v1", "kind": "Widget"})
        self.assertEqual(r.returncode, 1)
        self.assertIn("no schema", r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=1)
