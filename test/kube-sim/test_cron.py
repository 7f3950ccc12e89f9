#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""test_cron - kube-sim's CronJob controller (kubesim/cron.py) without root:
the 5-field schedule syntax (what parses, what is refused with which words,
the next times of the schedules kperf's manifests use, day-of-month OR
day-of-week, time zones), then the controller on a real store and admission
with a simulated clock moved by hand: a Job named <cronjob>-<minutes> with
the template's labels, an owner reference and the scheduled-timestamp
annotation at each schedule time and not between, lastScheduleTime,
concurrencyPolicy Forbid (no second Job while one runs; the missed time
starts once it ends, within startingDeadlineSeconds) and Replace, the
history limits (oldest finished Jobs deleted), lastSuccessfulTime, and the
CronJob's validation (422 causes). No timing is asserted."""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kubesim import admission, cron, ctrl, faults, store  # noqa: E402
from kubesim import resources as R  # noqa: E402
from kubesim.schema import Rejected  # noqa: E402
from kubesim.util import parse_iso  # noqa: E402

FAILS = []
CFG_DIR = []


def check(name, cond, detail=""):
    print("%s %s%s" % ("ok  " if cond else "FAIL", name,
                       "" if cond else ": " + str(detail)[:400]))
    if not cond:
        FAILS.append(name)


def t(s):
    return parse_iso(s)


def nexts(expr, start, n, tz=None):
    s = cron.parse(expr)
    out, x = [], t(start)
    for _ in range(n):
        x = cron.next_after(s, x, tz)
        out.append(cron.iso(x) if x else None)
    return out


def syntax():
    check("nightly 17 2 * * *", nexts("17 2 * * *", "2026-12-01T03:00:00Z",
                                      2) == ["2026-12-02T02:17:00Z",
                                             "2026-12-03T02:17:00Z"],
          nexts("17 2 * * *", "2026-12-01T03:00:00Z", 2))
    check("strictly after: a time on the schedule is not its own next",
          nexts("17 2 * * *", "2026-12-01T02:17:00Z", 1) ==
          ["2026-12-02T02:17:00Z"])
    check("steps and lists: */15 9-10 * * mon-fri",
          nexts("*/15 9-10 * * mon-fri", "2026-12-04T10:50:00Z", 3) ==
          ["2026-12-07T09:00:00Z", "2026-12-07T09:15:00Z",
           "2026-12-07T09:30:00Z"],
          nexts("*/15 9-10 * * mon-fri", "2026-12-04T10:50:00Z", 3))
    # 2026-12-01 is a Tuesday: dom 15 OR dow Mon (both restricted)
    check("day-of-month OR day-of-week when both are restricted",
          nexts("0 0 15 * 1", "2026-12-01T00:00:00Z", 3) ==
          ["2026-12-07T00:00:00Z", "2026-12-14T00:00:00Z",
           "2026-12-15T00:00:00Z"],
          nexts("0 0 15 * 1", "2026-12-01T00:00:00Z", 3))
    check("day-of-month AND day-of-week when one is *",
          nexts("0 0 * * 1", "2026-12-01T00:00:00Z", 1) ==
          ["2026-12-07T00:00:00Z"])
    check("N/step means N-max/step", cron.parse("5/20 * * * *").minutes ==
          {5, 25, 45})
    check("names: jan-dec, sun-sat", cron.parse("0 0 1 feb,dec sun").months
          == {2, 12} and cron.parse("0 0 1 1 SAT").dows == {6})
    check("@daily", nexts("@daily", "2026-12-01T12:00:00Z", 1) ==
          ["2026-12-02T00:00:00Z"])
    check("Feb 30 never comes", nexts("0 0 30 2 *", "2026-01-01T00:00:00Z",
                                      1) == [None])
    check("time zone: 02:17 in Europe/Berlin is 01:17 UTC in winter",
          nexts("17 2 * * *", "2026-12-01T03:00:00Z", 1, "Europe/Berlin") ==
          ["2026-12-02T01:17:00Z"],
          nexts("17 2 * * *", "2026-12-01T03:00:00Z", 1, "Europe/Berlin"))
    for bad, words in (("* * * *", "expected exactly 5 fields, found 4"),
                       ("60 * * * *", "end of range (60) above maximum (59)"),
                       ("* * 0 * *", "beginning of range (0) below minimum"),
                       ("* * * * 7", "end of range (7) above maximum (6)"),
                       ("5-1 * * * *", "beginning of range (5) beyond end"),
                       ("*/0 * * * *", "step of range should be a positive"),
                       ("x * * * *", "failed to parse int from x"),
                       ("@every 5m", "unrecognized descriptor"),
                       ("TZ=UTC 0 * * * *", "use timeZone field instead"),
                       ("", "empty spec string")):
        try:
            cron.parse(bad)
            check("refused: %r" % bad, False, "parsed")
        except cron.CronError as e:
            check("refused: %r (%s)" % (bad, e), words in str(e), e)


class Cfg:
    def __init__(self, d):
        self.state_dir = d
        self.nodes = 1
        self.rbac_files = []
        self.faults = ""
        self.cron_minute_seconds = 60.0
        self.cron_start = "2026-12-01T00:00:00Z"
        self.job_backoff = 10
        self.gc_lag = 0


CJ = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {
    "name": "nightly", "namespace": "default"}, "spec": {
    "schedule": "17 2 * * *", "concurrencyPolicy": "Forbid",
    "startingDeadlineSeconds": 3600, "successfulJobsHistoryLimit": 2,
    "failedJobsHistoryLimit": 1, "jobTemplate": {
        "metadata": {"labels": {"app": "n"}}, "spec": {
            "backoffLimit": 0, "template": {"spec": {
                "restartPolicy": "Never", "containers": [{
                    "name": "c", "image": "kube-sim/host",
                    "command": ["true"]}]}}}}}}


def finish(st, job, kind):
    tnow = cron.iso(time.time())

    def upd(x):
        x.setdefault("status", {})["conditions"] = [
            {"type": kind, "status": "True"}]
        if kind == "Complete":
            x["status"]["completionTime"] = tnow
    st.mutate("jobs", "default", job, upd)


def controller():
    d = tempfile.mkdtemp(prefix="kubesim-cron-")
    CFG_DIR.append(d)
    cfg = Cfg(d)
    st = store.Store()
    fl = faults.Faults(cfg)
    adm = admission.Admission(cfg, st, fl)
    cm = ctrl.Controllers(cfg, st, adm, None, fl)
    adm.ctrl = cm
    adm.create(R.BY_GR[("", "namespaces")], {"apiVersion": "v1", "kind":
               "Namespace", "metadata": {"name": "default"}}, None, False, [])
    res = R.BY_GR[("batch", "cronjobs")]
    import copy
    adm.create(res, copy.deepcopy(CJ), None, False, [])
    cj = st.get("cronjobs", "default", "nightly")
    check("defaults: suspend false, jobTemplate pod spec defaulted",
          cj["spec"]["suspend"] is False and cj["spec"]["jobTemplate"]["spec"][
              "template"]["spec"].get("dnsPolicy") == "ClusterFirst", cj["spec"])

    def jobs():
        return sorted(j["metadata"]["name"] for j in st.list("jobs")[0])

    def at(s):
        cm.clock.set(t(s))
        cm.cronjobs()
        return jobs()

    check("before 02:17 no Job", at("2026-12-01T02:16:59Z") == [])
    night1 = "nightly-%d" % (t("2026-12-01T02:17:00Z") // 60)
    check("at 02:17 the Job <cronjob>-<minutes since the epoch>",
          at("2026-12-01T02:17:00Z") == [night1], jobs())
    j = st.get("jobs", "default", night1)
    ref = (j["metadata"].get("ownerReferences") or [{}])[0]
    check("the Job: template labels, owner reference, scheduled timestamp",
          j["metadata"]["labels"].get("app") == "n" and
          ref.get("kind") == "CronJob" and ref.get("controller") is True and
          ref.get("uid") == cj["metadata"]["uid"] and
          j["metadata"]["annotations"].get(
              "batch.kubernetes.io/cronjob-scheduled-timestamp") ==
          "2026-12-01T02:17:00Z" and j["spec"]["backoffLimit"] == 0,
          j["metadata"])
    s = st.get("cronjobs", "default", "nightly")["status"]
    check("status: active = the Job, lastScheduleTime 02:17",
          [a["name"] for a in s.get("active") or []] == [night1] and
          s.get("lastScheduleTime") == "2026-12-01T02:17:00Z", s)
    check("later the same day: still one Job", at("2026-12-01T12:00:00Z") ==
          [night1])
    check("Forbid: the next night does not start while night 1 runs",
          at("2026-12-02T02:17:30Z") == [night1])
    ev = [e["reason"] for e in st.list("events", "default")[0]]
    check("JobAlreadyActive event", "JobAlreadyActive" in ev, ev)
    finish(st, night1, "Complete")
    night2 = "nightly-%d" % (t("2026-12-02T02:17:00Z") // 60)
    check("Forbid: the missed time starts once night 1 ended (within "
          "startingDeadlineSeconds)", at("2026-12-02T02:40:00Z") ==
          [night1, night2], jobs())
    s = st.get("cronjobs", "default", "nightly")["status"]
    check("lastSuccessfulTime set from night 1, active = night 2",
          s.get("lastSuccessfulTime") and
          [a["name"] for a in s.get("active") or []] == [night2], s)
    finish(st, night2, "Failed")
    check("past startingDeadlineSeconds a missed time is skipped",
          at("2026-12-03T03:18:00Z") == [night1, night2], jobs())
    n4 = "nightly-%d" % (t("2026-12-04T02:17:00Z") // 60)
    check("night 4 on time", at("2026-12-04T02:17:00Z") ==
          sorted([night1, night2, n4]))
    finish(st, n4, "Complete")
    n5 = "nightly-%d" % (t("2026-12-05T02:17:00Z") // 60)
    at("2026-12-05T02:17:00Z")
    finish(st, n5, "Complete")
    cm.cronjobs()
    left = jobs()
    check("successfulJobsHistoryLimit 2: the oldest successful Job deleted",
          night1 not in left and n4 in left and n5 in left and night2 in left,
          left)
    ev = [e["message"] for e in st.list("events", "default")[0]]
    check("SuccessfulDelete event", "Deleted job %s" % night1 in ev, ev)
    # Replace: the running Job goes, the new one comes
    st.mutate("cronjobs", "default", "nightly", lambda x: x["spec"].update(
        concurrencyPolicy="Replace"))
    n6 = "nightly-%d" % (t("2026-12-06T02:17:00Z") // 60)
    n7 = "nightly-%d" % (t("2026-12-07T02:17:00Z") // 60)
    at("2026-12-06T02:17:00Z")
    left = at("2026-12-07T02:17:00Z")
    check("Replace: night 6 deleted, night 7 runs",
          n6 not in left and n7 in left, left)
    # cron_next and the admin POST's effect
    tn, names = cm.cron_next()
    check("cron_next: 02:17 of the next day, naming the CronJob",
          cron.iso(tn) == "2026-12-08T02:17:00Z" and names ==
          ["default/nightly"], (tn, names))
    # validation
    bad = copy.deepcopy(CJ)
    bad["metadata"]["name"] = "bad"
    bad["spec"]["schedule"] = "61 * * * *"
    bad["spec"]["concurrencyPolicy"] = "Sometimes"
    bad["spec"]["jobTemplate"]["spec"]["template"]["spec"][
        "restartPolicy"] = "Always"
    try:
        adm.create(res, bad, None, False, [], controller=True)
        check("invalid CronJob refused", False, "created")
    except Rejected as e:
        fields = sorted(c["field"] for c in e.details.get("causes") or [])
        check("invalid CronJob: 422 on schedule, concurrencyPolicy, "
              "restartPolicy", e.code == 422 and fields == [
                  "spec.concurrencyPolicy",
                  "spec.jobTemplate.spec.template.spec.restartPolicy",
                  "spec.schedule"], (e.code, e.message, fields))


def main():
    syntax()
    controller()
    import shutil
    shutil.rmtree(CFG_DIR[0], ignore_errors=True)
    if FAILS:
        print("%d failed: %s" % (len(FAILS), ", ".join(FAILS)))
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
