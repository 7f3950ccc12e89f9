# SPDX-License-Identifier: Apache-2.0
"""cron - the CronJob controller (a mixin of ctrl.Controllers) and what it
needs: the standard 5-field cron syntax (parse, next_after) and the
simulated clock (Clock) that compresses time.

Owns: CronJob scheduling as the real controller (pkg/controller/cronjob)
does it: the most recent unmet schedule time since lastScheduleTime (or
since the controller first saw the CronJob) within startingDeadlineSeconds,
concurrencyPolicy Allow/Forbid/Replace, suspend, Jobs named
<cronjob>-<scheduled time in minutes since the epoch> with the template's
labels and annotations, the scheduled-timestamp annotation and an owner
reference (so the garbage collector removes them with the CronJob),
status.active/lastScheduleTime/lastSuccessfulTime, the history limits, and
Events (SuccessfulCreate, SawCompletedJob, SuccessfulDelete,
JobAlreadyActive, FailedCreate, TooManyMissedTimes, UnexpectedJob).
The clock: schedules are evaluated on simulated time, which runs at
60 / --cron-minute-seconds times real time from --cron-start (default: now)
and can be moved by `kube-sim cron` (POST /kube-sim/cron). Job and pod
timestamps stay real time.
Python 3 standard library only; parse/next_after know nothing of the API.
"""
import calendar
import datetime
import threading
import time

from . import resources as R
from .schema import Rejected
from .util import dcopy, parse_iso, wall

MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep",
          "oct", "nov", "dec"]
DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
# (min, max, names) per field; names map to min + index
FIELDS = [(0, 59, None), (0, 23, None), (1, 31, None), (1, 12, MONTHS),
          (0, 6, DAYS)]
DESCRIPTORS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *",
               "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
               "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
               "@hourly": "0 * * * *"}


class CronError(ValueError):
    pass


class Schedule:
    """A parsed schedule: the allowed values of each field, and whether the
    day-of-month and day-of-week fields started with * or ? (then both must
    match; otherwise either may, as in cron)."""

    def __init__(self, sets, dom_star, dow_star):
        self.minutes, self.hours, self.doms, self.months, self.dows = sets
        self.dom_star, self.dow_star = dom_star, dow_star

    def day_matches(self, d):
        dom = d.day in self.doms
        dow = (d.weekday() + 1) % 7 in self.dows
        if self.dom_star or self.dow_star:
            return dom and dow
        return dom or dow


def _num(s, lo, hi, names, expr):
    if names and s.lower() in names:
        return lo + names.index(s.lower())
    if not s.isdigit():
        raise CronError("failed to parse int from %s: strconv.Atoi: parsing "
                        '"%s": invalid syntax' % (s, s))
    return int(s)


def _field(expr, lo, hi, names):
    """The set of values one field allows, and whether it was a star."""
    out, star = set(), False
    for part in expr.split(","):
        rng, _, step_s = part.partition("/")
        if "/" in part and not step_s:
            raise CronError("failed to parse int from : strconv.Atoi: "
                            'parsing "": invalid syntax')
        if rng in ("*", "?"):
            a, b, this_star = lo, hi, True
        else:
            this_star = False
            x, dash, y = rng.partition("-")
            a = _num(x, lo, hi, names, part)
            b = _num(y, lo, hi, names, part) if dash else a
            if step_s and not dash:
                b = hi  # "N/step" means N-max/step
        step = 1
        if step_s:
            step = _num(step_s, lo, hi, None, part)
            if step == 0:
                raise CronError("step of range should be a positive "
                                "number: %s" % part)
            if step > 1:
                this_star = False
        if a < lo:
            raise CronError("beginning of range (%d) below minimum (%d): %s"
                            % (a, lo, part))
        if b > hi:
            raise CronError("end of range (%d) above maximum (%d): %s" %
                            (b, hi, part))
        if a > b:
            raise CronError("beginning of range (%d) beyond end of range "
                            "(%d): %s" % (a, b, part))
        out.update(range(a, b + 1, step))
        star = star or this_star
    return out, star


def parse(text):
    """A Schedule from the standard 5-field syntax (minute hour
    day-of-month month day-of-week: numbers, names jan-dec and sun-sat,
    *, ?, lists, ranges, steps) or a descriptor (@hourly, @daily,
    @midnight, @weekly, @monthly, @yearly, @annually). Raises CronError
    with the parser's wording."""
    if not isinstance(text, str) or not text.strip():
        raise CronError("empty spec string")
    s = text.strip()
    if s.startswith("TZ=") or s.startswith("CRON_TZ="):
        raise CronError("cannot use TZ or CRON_TZ in schedule, use timeZone "
                        "field instead")
    if s.startswith("@"):
        if s not in DESCRIPTORS:
            raise CronError("unrecognized descriptor: %s" % s)
        s = DESCRIPTORS[s]
    parts = s.split()
    if len(parts) != 5:
        raise CronError("expected exactly 5 fields, found %d: %s" %
                        (len(parts), text))
    sets, stars = [], []
    for p, (lo, hi, names) in zip(parts, FIELDS):
        v, star = _field(p, lo, hi, names)
        sets.append(v)
        stars.append(star)
    return Schedule(sets, stars[2], stars[4])


def _zone(tz):
    if not tz or tz in ("UTC", "Etc/UTC"):
        return datetime.timezone.utc
    import zoneinfo
    try:
        return zoneinfo.ZoneInfo(tz)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise CronError("unknown time zone %s" % tz)


def next_after(sched, t, tz=None):
    """The first schedule time strictly after t (Unix seconds), in time
    zone tz (a name, default UTC), as Unix seconds; None if there is none
    within 5 years (e.g. "0 0 30 2 *")."""
    zone = _zone(tz)
    d = datetime.datetime.fromtimestamp((int(t) // 60) * 60 + 60, zone)
    d = d.replace(tzinfo=None)   # walk local wall-clock time
    end = d.year + 5
    while d.year <= end:
        if d.month not in sched.months:
            y, m = (d.year + 1, 1) if d.month == 12 else (d.year, d.month + 1)
            d = datetime.datetime(y, m, 1)
            continue
        if not sched.day_matches(d):
            d = datetime.datetime(d.year, d.month, d.day) + \
                datetime.timedelta(days=1)
            continue
        if d.hour not in sched.hours:
            d = datetime.datetime(d.year, d.month, d.day, d.hour) + \
                datetime.timedelta(hours=1)
            continue
        if d.minute not in sched.minutes:
            d += datetime.timedelta(minutes=1)
            continue
        if zone is datetime.timezone.utc:
            return calendar.timegm(d.timetuple())
        return int(d.replace(tzinfo=zone).timestamp())
    return None


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


class Clock:
    """Simulated time for schedules: starts at `start` (Unix seconds) and
    runs `scale` times faster than real time; set() moves it."""

    def __init__(self, start=None, scale=1.0):
        self.lock = threading.Lock()
        self.scale = scale
        self.v0 = wall() if start is None else start
        self.r0 = time.time()

    def now(self):
        with self.lock:
            return self.v0 + (time.time() - self.r0) * self.scale

    def set(self, t):
        with self.lock:
            self.v0, self.r0 = t, time.time()


def _finished(job):
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("type") in ("Complete", "Failed") and \
                c.get("status") == "True":
            return c["type"]
    return None


def _ref(job):
    md = job["metadata"]
    return {"apiVersion": "batch/v1", "kind": "Job", "name": md["name"],
            "namespace": md["namespace"], "resourceVersion":
            md.get("resourceVersion"), "uid": md["uid"]}


class CronJobs:
    """The CronJob controller, run from Controllers.loop."""

    def cron_init(self, cfg):
        start = getattr(cfg, "cron_start", None)
        spm = getattr(cfg, "cron_minute_seconds", 60.0) or 60.0
        self.clock = Clock(parse_iso(start) if start else None, 60.0 / spm)
        self.cron_seen = {}      # cronjob uid -> simulated time first seen
        self.cron_forbid = {}    # cronjob uid -> schedule time reported

    def cron_next(self):
        """(time, [names]) of the next schedule after now over every
        CronJob that is not suspended, or (None, [])."""
        now = self.clock.now()
        best, names = None, []
        for cj in self.store.list("cronjobs")[0]:
            sp = cj.get("spec") or {}
            if sp.get("suspend"):
                continue
            try:
                t = next_after(parse(sp.get("schedule")), now,
                               sp.get("timeZone"))
            except CronError:
                continue
            if t is None:
                continue
            n = "%s/%s" % (cj["metadata"]["namespace"], cj["metadata"]["name"])
            if best is None or t < best:
                best, names = t, [n]
            elif t == best:
                names.append(n)
        return best, names

    def cron_control(self, app, req):
        """GET /kube-sim/cron: the clock and each CronJob's next time;
        POST {"next": true} or {"set": "RFC3339"}: move the clock."""
        import json
        if req.method == "POST":
            try:
                body = json.loads(req.body or b"{}")
            except ValueError:
                raise Rejected(400, "BadRequest", "a JSON object expected")
            if body.get("next"):
                t, names = self.cron_next()
                if t is None:
                    raise Rejected(409, "Conflict", "no CronJob has a next "
                                   "schedule time")
                self.clock.set(t)
            elif body.get("set"):
                t = parse_iso(body["set"])
                if t is None:
                    raise Rejected(400, "BadRequest", "set: an RFC 3339 time "
                                   "expected, got %r" % body["set"])
                self.clock.set(t)
            else:
                raise Rejected(400, "BadRequest", 'POST {"next": true} or '
                               '{"set": "TIME"}')
            self.wake.set()
        elif req.method != "GET":
            raise Rejected(405, "MethodNotAllowed", "GET or POST")
        t, names = self.cron_next()
        return app.send(req, 200, {"now": iso(self.clock.now()),
                                   "scale": self.clock.scale,
                                   "next": iso(t) if t else None,
                                   "nextCronJobs": names})

    def cronjobs(self):
        st = self.store
        jobs = st.list("jobs")[0]
        live = set()
        for cj in st.list("cronjobs")[0]:
            cj["kind"], cj["apiVersion"] = "CronJob", "batch/v1"
            live.add(cj["metadata"]["uid"])
            try:
                self.cronjob(cj, jobs)
            except Rejected:
                pass
        for uid in list(self.cron_seen):
            if uid not in live:
                self.cron_seen.pop(uid, None)
                self.cron_forbid.pop(uid, None)

    def cronjob(self, cj, jobs):
        st = self.store
        md, spec = cj["metadata"], cj.get("spec") or {}
        ns, name, uid = md["namespace"], md["name"], md["uid"]
        now = self.clock.now()
        self.cron_seen.setdefault(uid, now)
        status = dcopy(cj.get("status") or {})
        active = list(status.get("active") or [])
        owned = [j for j in jobs if j["metadata"]["namespace"] == ns and any(
            r.get("uid") == uid and r.get("controller") for r in
            j["metadata"].get("ownerReferences") or [])]
        by_uid = {j["metadata"]["uid"]: j for j in owned}
        act_uids = {a.get("uid") for a in active}
        for j in owned:
            fin = _finished(j)
            ju = j["metadata"]["uid"]
            if fin and ju in act_uids:
                active = [a for a in active if a.get("uid") != ju]
                self.event(cj, "Normal", "SawCompletedJob", "Saw completed "
                           "job: %s, condition: %s" % (j["metadata"]["name"],
                                                       fin),
                           "cronjob-controller")
                if fin == "Complete":
                    ct = (j.get("status") or {}).get("completionTime")
                    if ct and (not status.get("lastSuccessfulTime") or
                               parse_iso(ct) > parse_iso(
                                   status["lastSuccessfulTime"])):
                        status["lastSuccessfulTime"] = ct
            elif not fin and ju not in act_uids and \
                    not j["metadata"].get("deletionTimestamp"):
                active.append(_ref(j))
        for a in list(active):
            if a.get("uid") not in by_uid:
                active.remove(a)
                self.event(cj, "Normal", "MissingJob", "Active job went "
                           "missing: %s" % a.get("name"), "cronjob-controller")
        status["active"] = active
        if not md.get("deletionTimestamp"):
            self.cron_history(cj, spec, owned)
            if not spec.get("suspend"):
                self.cron_schedule(cj, spec, status, active, now)
        if not status["active"]:
            status.pop("active")

        def setst(x):
            if x["metadata"]["uid"] != uid or x.get("status") == status:
                return False
            x["status"] = status
        st.mutate("cronjobs", ns, name, setst)

    def cron_history(self, cj, spec, owned):
        jobs_res = R.BY_GR[("batch", "jobs")]
        for kind, key, dflt in (("Complete", "successfulJobsHistoryLimit", 3),
                                ("Failed", "failedJobsHistoryLimit", 1)):
            limit = spec.get(key, dflt)
            done = [j for j in owned if _finished(j) == kind and
                    not j["metadata"].get("deletionTimestamp")]
            if limit is None or len(done) <= limit:
                continue
            done.sort(key=lambda j: ((j.get("status") or {}).get(
                "startTime") or j["metadata"].get("creationTimestamp") or "",
                j["metadata"]["name"]))
            for j in done[:len(done) - limit]:
                self.delete(jobs_res, j["metadata"]["namespace"],
                            j["metadata"]["name"],
                            {"propagationPolicy": "Background"}, None, [])
                self.event(cj, "Normal", "SuccessfulDelete", "Deleted job %s"
                           % j["metadata"]["name"], "cronjob-controller")

    def cron_schedule(self, cj, spec, status, active, now):
        md = cj["metadata"]
        uid = md["uid"]
        try:
            sched = parse(spec.get("schedule"))
            tz = spec.get("timeZone")
            _zone(tz)
        except CronError as e:
            self.event(cj, "Warning", "UnparseableSchedule", "unparseable "
                       "schedule: %r : %s" % (spec.get("schedule"), e),
                       "cronjob-controller")
            return
        last = parse_iso(status.get("lastScheduleTime") or "")
        earliest = last if last is not None else self.cron_seen[uid]
        sds = spec.get("startingDeadlineSeconds")
        if sds is not None and now - sds > earliest:
            earliest = now - sds
        t, missed, due = earliest, 0, None
        while True:
            t = next_after(sched, t, tz)
            if t is None or t > now:
                break
            due, missed = t, missed + 1
            if missed > 100:
                break
        if due is None:
            return
        if missed > 100 and sds is None:
            self.event(cj, "Warning", "TooManyMissedTimes", "too many missed "
                       "start times: %d. Set or decrease "
                       ".spec.startingDeadlineSeconds or check clock skew" %
                       missed, "cronjob-controller")
        policy = spec.get("concurrencyPolicy") or "Allow"
        jobs_res = R.BY_GR[("batch", "jobs")]
        if active and policy == "Forbid":
            if self.cron_forbid.get(uid) != due:
                self.cron_forbid[uid] = due
                self.event(cj, "Normal", "JobAlreadyActive", "Not starting "
                           "job because prior execution is running and "
                           "concurrency policy is Forbid",
                           "cronjob-controller")
            return
        if active and policy == "Replace":
            for a in list(active):
                self.delete(jobs_res, a["namespace"], a["name"],
                            {"propagationPolicy": "Background"}, None, [])
                self.event(cj, "Normal", "SuccessfulDelete", "Deleted job %s"
                           % a["name"], "cronjob-controller")
                active.remove(a)
        tmpl = spec.get("jobTemplate") or {}
        tmd = tmpl.get("metadata") or {}
        jname = "%s-%d" % (md["name"], int(due // 60))
        ann = dict(tmd.get("annotations") or {})
        ann["batch.kubernetes.io/cronjob-scheduled-timestamp"] = iso(due) \
            if not spec.get("timeZone") else datetime.datetime.fromtimestamp(
                due, _zone(spec["timeZone"])).isoformat()
        job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
            "name": jname, "namespace": md["namespace"],
            "labels": dict(tmd.get("labels") or {}), "annotations": ann,
            "ownerReferences": [{
                "apiVersion": "batch/v1", "kind": "CronJob",
                "name": md["name"], "uid": uid, "controller": True,
                "blockOwnerDeletion": True}]},
            "spec": dcopy(tmpl.get("spec") or {})}
        if not job["metadata"]["labels"]:
            job["metadata"].pop("labels")
        cur = self.store.get("jobs", md["namespace"], jname)
        if cur is not None:
            if any(r.get("uid") == uid for r in
                   cur["metadata"].get("ownerReferences") or []):
                status["lastScheduleTime"] = iso(due)
                return
            self.event(cj, "Warning", "UnexpectedJob", "Saw a job that the "
                       "controller did not create or forgot: %s" % jname,
                       "cronjob-controller")
            return
        try:
            out = self.adm.create(jobs_res, job, None, False, [],
                                  controller=True)
        except Rejected as e:
            self.event(cj, "Warning", "FailedCreate", "Error creating job: %s"
                       % e.message, "cronjob-controller")
            return
        self.event(cj, "Normal", "SuccessfulCreate", "Created job %s" %
                   jname, "cronjob-controller")
        active.append(_ref(out))
        status["lastScheduleTime"] = iso(due)
        self.cron_forbid.pop(uid, None)
        self.wake.set()


def validate(spec, path="spec"):
    """The apiserver's checks of a CronJob spec the schema cannot make:
    (field, message) pairs."""
    out = []
    s = spec.get("schedule")
    if isinstance(s, str) and s:
        try:
            parse(s)
        except CronError as e:
            out.append(("%s.schedule" % path, 'Invalid value: "%s": %s' %
                        (s, e)))
    tz = spec.get("timeZone")
    if isinstance(tz, str):
        try:
            _zone(tz)
        except CronError as e:
            out.append(("%s.timeZone" % path, 'Invalid value: "%s": %s' %
                        (tz, e)))
    cp = spec.get("concurrencyPolicy")
    for k in ("startingDeadlineSeconds", "successfulJobsHistoryLimit",
              "failedJobsHistoryLimit"):
        v = spec.get(k)
        if isinstance(v, int) and v < 0:
            out.append(("%s.%s" % (path, k), "Invalid value: %d: must be "
                        "greater than or equal to 0" % v))
    if cp is not None and cp not in ("Allow", "Forbid", "Replace"):
        out.append(("%s.concurrencyPolicy" % path, 'Unsupported value: "%s":'
                    ' supported values: "Allow", "Forbid", "Replace"' % cp))
    return out
