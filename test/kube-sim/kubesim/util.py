# SPDX-License-Identifier: Apache-2.0
"""util - small helpers shared by every kube-sim module.

Owns: timestamps, random names and uids, label/field selector parsing and
matching, a minimal YAML reader for Kubernetes manifests, deep copies.
Knows nothing of HTTP, storage or the network.
"""
import copy
import json
import random
import re
import string
import time
import uuid


# --clock-skew: seconds the cluster's wall clock runs ahead of this host's
# (negative: behind). Every timestamp the API server, its controllers and the
# kubelets write comes from wall(), as on a cluster whose clock is off from the
# laptop of the person running kperf; durations and timeouts use their own
# monotonic clocks and are unaffected.
SKEW_S = 0.0


def wall():
    """The cluster's wall clock: this host's, shifted by SKEW_S."""
    return time.time() + SKEW_S


def now_iso():
    """RFC 3339 UTC timestamp with second precision, as the API server writes."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(wall()))


def now_micro():
    t = wall()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + \
        ".%06dZ" % int((t % 1) * 1e6)


def parse_iso(s):
    """Seconds since the epoch for an RFC 3339 timestamp, or None."""
    if not s:
        return None
    m = re.match(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)", s)
    if not m:
        return None
    import calendar
    return calendar.timegm(tuple(int(x) for x in m.groups()) + (0, 0, 0))


_ALNUM = "bcdfghjklmnpqrstvwxz2456789"  # the apiserver's generateName alphabet


def rand_suffix(n=5):
    return "".join(random.choice(_ALNUM) for _ in range(n))


def new_uid():
    return str(uuid.uuid4())


def rand_token(n=32):
    return "".join(random.SystemRandom().choice(string.ascii_letters +
                                                string.digits)
                   for _ in range(n))


def dcopy(o):
    """A deep copy of a JSON-shaped value (dicts, lists, scalars): what every
    API object is. Several times faster than copy.deepcopy, which kube-sim
    did on every read; anything else falls back to copy.deepcopy."""
    t = type(o)
    if t is dict:
        return {k: dcopy(v) if type(v) in _CONTAINERS else v
                for k, v in o.items()}
    if t is list:
        return [dcopy(v) if type(v) in _CONTAINERS else v for v in o]
    if t in _SCALARS:
        return o
    return copy.deepcopy(o)


_CONTAINERS = (dict, list, tuple, set)
_SCALARS = (str, int, float, bool, type(None))


def jdump(o):
    return json.dumps(o, separators=(",", ":"))


# ---------------------------------------------------------------- selectors
class SelectorError(ValueError):
    pass


_LABEL_KEY = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?"
                        r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


def _split_top(s):
    """Split on commas that are not inside parentheses."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [x.strip() for x in out if x.strip()]


def parse_label_selector(s):
    """Parse a label selector string into a list of (key, op, values).

    op is one of '=', '!=', 'in', 'notin', 'exists', '!'.
    Raises SelectorError with the apiserver's wording on bad input."""
    reqs = []
    if not s:
        return reqs
    for part in _split_top(s):
        m = re.match(r"^(\S+?)\s+(in|notin)\s*\((.*)\)$", part)
        if m:
            vals = [v.strip() for v in m.group(3).split(",") if v.strip()]
            reqs.append((m.group(1), m.group(2), vals))
            continue
        m = re.match(r"^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$", part)
        if m:
            op = "!=" if m.group(2) == "!=" else "="
            reqs.append((m.group(1), op, [m.group(3)]))
            continue
        if part.startswith("!"):
            reqs.append((part[1:].strip(), "!", []))
            continue
        if re.match(r"^[^=!\s(),]+$", part):
            reqs.append((part, "exists", []))
            continue
        raise SelectorError("unable to parse requirement: found '%s', "
                            "expected: identifier" % part)
    for k, _, _ in reqs:
        if not _LABEL_KEY.match(k):
            raise SelectorError(
                "unable to parse requirement: <nil>: Invalid value: \"%s\": "
                "name part must consist of alphanumeric characters, '-', '_' "
                "or '.', and must start and end with an alphanumeric "
                "character" % k)
    return reqs


def label_match(reqs, labels):
    labels = labels or {}
    for k, op, vals in reqs:
        has = k in labels
        v = labels.get(k)
        if op == "=" and (not has or v != vals[0]):
            return False
        if op == "!=" and has and v == vals[0]:
            return False
        if op == "in" and (not has or v not in vals):
            return False
        if op == "notin" and has and v in vals:
            return False
        if op == "exists" and not has:
            return False
        if op == "!" and has:
            return False
    return True


def selector_to_reqs(sel):
    """metav1.LabelSelector (matchLabels/matchExpressions) -> reqs."""
    reqs = []
    if not sel:
        return reqs
    for k, v in sorted((sel.get("matchLabels") or {}).items()):
        reqs.append((k, "=", [v]))
    for e in sel.get("matchExpressions") or []:
        op = {"In": "in", "NotIn": "notin", "Exists": "exists",
              "DoesNotExist": "!"}.get(e.get("operator"), "exists")
        reqs.append((e.get("key"), op, list(e.get("values") or [])))
    return reqs


def parse_field_selector(s):
    reqs = []
    if not s:
        return reqs
    for part in _split_top(s):
        m = re.match(r"^([^=!]+)(==|=|!=)(.*)$", part)
        if not m:
            raise SelectorError("invalid selector: '%s'; can't understand "
                                "'%s'" % (s, part))
        reqs.append((m.group(1).strip(), "!=" if m.group(2) == "!=" else "=",
                     m.group(3).strip()))
    return reqs


def get_path(obj, dotted):
    cur = obj
    for p in dotted.split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(p)
    return cur


# ---------------------------------------------------------------- mini YAML
class YamlError(ValueError):
    pass


def _scalar(s):
    s = s.strip()
    if s == "" or s in ("~", "null", "Null", "NULL"):
        return None
    if s[0] == '"':
        try:
            return json.loads(s)
        except ValueError:
            raise YamlError("bad double-quoted string: %s" % s)
    if s[0] == "'":
        if not s.endswith("'") or len(s) < 2:
            raise YamlError("bad single-quoted string: %s" % s)
        return s[1:-1].replace("''", "'")
    if s[0] in "[{":
        return _flow(s)
    if s in ("true", "True", "TRUE"):
        return True
    if s in ("false", "False", "FALSE"):
        return False
    if re.match(r"^[-+]?(0|[1-9][0-9]*)$", s):
        return int(s)
    if re.match(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$", s):
        return float(s)
    return s


def _flow(s):
    """Flow collections: [a, b] and {k: v}; JSON when it parses as JSON."""
    try:
        return json.loads(s)
    except ValueError:
        pass
    pos = [0]

    def ws():
        while pos[0] < len(s) and s[pos[0]] in " \t":
            pos[0] += 1

    def item(stop):
        ws()
        c = s[pos[0]] if pos[0] < len(s) else ""
        if c == "[":
            return seq()
        if c == "{":
            return mp()
        if c in "\"'":
            q = c
            j = pos[0] + 1
            while j < len(s):
                if s[j] == "\\" and q == '"':
                    j += 2
                    continue
                if s[j] == q:
                    if q == "'" and j + 1 < len(s) and s[j + 1] == "'":
                        j += 2
                        continue
                    break
                j += 1
            tok = s[pos[0]:j + 1]
            pos[0] = j + 1
            return _scalar(tok)
        j = pos[0]
        while j < len(s) and s[j] not in stop:
            j += 1
        tok = s[pos[0]:j]
        pos[0] = j
        return _scalar(tok)

    def seq():
        pos[0] += 1
        out = []
        while True:
            ws()
            if s[pos[0]] == "]":
                pos[0] += 1
                return out
            out.append(item(",]"))
            ws()
            if s[pos[0]] == ",":
                pos[0] += 1

    def mp():
        pos[0] += 1
        out = {}
        while True:
            ws()
            if s[pos[0]] == "}":
                pos[0] += 1
                return out
            k = item(":}")
            ws()
            if s[pos[0]] == ":":
                pos[0] += 1
                out[k] = item(",}")
            else:
                out[k] = None
            ws()
            if s[pos[0]] == ",":
                pos[0] += 1

    try:
        return item("")
    except IndexError:
        raise YamlError("unterminated flow collection: %s" % s)


def _strip_comment(line):
    out, q = "", None
    for i, ch in enumerate(line):
        if q:
            if ch == q:
                q = None
        elif ch in "\"'" and (i == 0 or line[i - 1] in " \t:[{,-"):
            q = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            break
        out += ch
    return out.rstrip()


def yaml_load_all(text):
    """Parse the YAML subset Kubernetes manifests use (block maps and lists,
    plain/quoted scalars, flow collections, | and > blocks, --- documents).
    Returns a list of documents (None documents are dropped)."""
    docs, cur = [], []
    for raw in text.split("\n"):
        if re.match(r"^---(\s|$)", raw) or raw.strip() == "...":
            docs.append(cur)
            cur = []
            continue
        cur.append(raw)
    docs.append(cur)
    out = []
    for d in docs:
        v = _parse_block(d)
        if v is not None:
            out.append(v)
    return out


def _parse_block(lines):
    toks = []  # (indent, text, raw_index)
    for i, raw in enumerate(lines):
        if raw.lstrip().startswith("#") or not raw.strip():
            continue
        toks.append((len(raw) - len(raw.lstrip(" ")), raw, i))
    if not toks:
        return None
    val, _ = _node(toks, 0, toks[0][0], lines)
    return val


def _block_scalar(lines, start_raw, indent, style):
    body, j = [], start_raw + 1
    block_indent = None
    while j < len(lines):
        ln = lines[j]
        if ln.strip() == "":
            body.append("")
            j += 1
            continue
        ind = len(ln) - len(ln.lstrip(" "))
        if ind <= indent:
            break
        if block_indent is None:
            block_indent = ind
        body.append(ln[block_indent:])
        j += 1
    while body and body[-1] == "":
        body.pop()
    if style.startswith("|"):
        text = "\n".join(body)
    else:
        text = " ".join(b for b in body)
    if "-" not in style:
        text += "\n"
    return text, j


def _node(toks, i, indent, lines):
    """Parse the node starting at toks[i] (which has this indent)."""
    text = toks[i][1].strip()
    if text.startswith("- ") or text == "-":
        return _seq(toks, i, indent, lines)
    return _map(toks, i, indent, lines)


def _skip_to_raw(toks, i, raw_index):
    while i < len(toks) and toks[i][2] < raw_index:
        i += 1
    return i


def _value_after(toks, i, indent, rest, lines):
    """Value of a 'key:' or '- ' whose inline remainder is rest."""
    rest = _strip_comment(rest).strip()
    raw_i = toks[i][2]
    if rest in ("|", "|-", "|+", ">", ">-", ">+"):
        val, nxt = _block_scalar(lines, raw_i, indent, rest)
        return val, _skip_to_raw(toks, i + 1, nxt)
    if rest:
        return _scalar(rest), i + 1
    if i + 1 < len(toks) and (toks[i + 1][0] > indent or (
            toks[i + 1][0] == indent and
            toks[i + 1][1].strip().startswith("-"))):
        return _node(toks, i + 1, toks[i + 1][0], lines)
    return None, i + 1


def _map(toks, i, indent, lines):
    out = {}
    while i < len(toks) and toks[i][0] == indent:
        text = toks[i][1].strip()
        if text.startswith("- "):
            break
        m = re.match(r"""^("(?:[^"\\]|\\.)*"|'[^']*'|[^:]+?)\s*:(\s+|$)(.*)$""",
                     text)
        if not m:
            raise YamlError("line %d: expected 'key: value': %s" %
                            (toks[i][2] + 1, text))
        key = _scalar(m.group(1))
        val, i = _value_after(toks, i, indent, m.group(3), lines)
        out[key] = val
    return out, i


def _seq(toks, i, indent, lines):
    out = []
    while i < len(toks) and toks[i][0] == indent:
        text = toks[i][1].strip()
        if not (text.startswith("- ") or text == "-"):
            break
        rest = text[1:].lstrip()
        if re.match(r"""^("(?:[^"\\]|\\.)*"|'[^']*'|[^:\[{"']+?)\s*:(\s+|$)""",
                    rest):
            # "- key: value" starts an inline map at a deeper indent
            sub_indent = indent + (len(text) - len(rest))
            toks[i] = (sub_indent, " " * sub_indent + rest, toks[i][2])
            val, i = _map(toks, i, sub_indent, lines)
            out.append(val)
            continue
        val, i = _value_after(toks, i, indent, rest, lines)
        out.append(val)
    return out, i
