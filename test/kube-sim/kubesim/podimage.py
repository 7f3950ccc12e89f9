# SPDX-License-Identifier: Apache-2.0
"""podimage - a pod's image pulls, as the kubelet does them (used by
pod.py): pull policy, the pod's imagePullSecrets as credentials, Events
(Pulling, Pulled, Failed, BackOff, FailedToRetrieveImagePullSecret),
waiting reasons ErrImagePull / ImagePullBackOff / ErrImageNeverPull with
the kubelet's back-off (--image-pull-backoff, doubling up to 300 s).

Owns: nothing but the pull step; the node's images are images.Store's.
"""
import base64
import json
import time

from .registry import PullError, Ref

MAX_BACKOFF = 300


def host_image(w, image):
    """Images whose command runs from the host (--host-images): no pull."""
    base = image.split("@")[0]
    return any(base == h or base.startswith(h + ":") or
               base.startswith(h + "/") for h in w.kl.cfg.host_images)


def credentials(w, host):
    """[(user, password)] for registry host from the pod's
    imagePullSecrets (kubernetes.io/dockerconfigjson or dockercfg) in its
    namespace; a missing secret is an Event, as the kubelet says it."""
    out, missing = [], []
    for s in w.pod["spec"].get("imagePullSecrets") or []:
        sec = w.secret(s.get("name"))
        if sec is None:
            missing.append(s.get("name"))
            continue
        data = sec.get("data") or {}
        try:
            if ".dockerconfigjson" in data:
                auths = json.loads(base64.b64decode(
                    data[".dockerconfigjson"])).get("auths") or {}
            else:
                auths = json.loads(base64.b64decode(
                    data.get(".dockercfg", "e30=")))
        except (ValueError, TypeError):
            continue
        for key, a in auths.items():
            k = key.split("://", 1)[-1].split("/", 1)[0]
            if k != host and not (host == "docker.io" and
                                  k == "index.docker.io"):
                continue
            user, pw = a.get("username"), a.get("password")
            if a.get("auth") and not user:
                user, _, pw = base64.b64decode(a["auth"]).decode(
                    errors="replace").partition(":")
            if user is not None:
                out.append((user, pw or ""))
    if missing:
        w.ev("Warning", "FailedToRetrieveImagePullSecret", "Unable to "
             "retrieve some image pull secrets (%s); attempting to pull the "
             "image may not succeed." % ", ".join(missing))
    return out


def pull_one(w, c):
    """Pull (or find) container c's image. Returns (Image or True for a
    host image, None) or (None, (reason, message))."""
    img = c.spec.get("image", "")
    if host_image(w, img):
        w.ev("Normal", "Pulled", 'Container image "%s" already present on '
             'machine' % img, c.name)
        return True, None
    store = w.kl.images
    policy = c.spec.get("imagePullPolicy") or "IfNotPresent"
    have = store.present(w.node, img)
    if have and policy != "Always":
        w.ev("Normal", "Pulled", 'Container image "%s" already present on '
             'machine' % img, c.name)
        return have, None
    if policy == "Never":
        msg = 'Container image "%s" is not present with pull policy of ' \
            'Never' % img
        w.ev("Warning", "ErrImageNeverPull", msg, c.name)
        return None, ("ErrImageNeverPull", msg)
    w.ev("Normal", "Pulling", 'Pulling image "%s"' % img, c.name)
    t0 = time.time()
    try:
        creds = credentials(w, Ref(img).host)
        image, waited = store.pull(w.node, w.kl.node_arch(w.node), img, creds)
    except PullError as e:
        msg = "rpc error: code = %s desc = failed to pull and unpack image " \
            '"%s": %s' % (e.code, Ref(img).name(), e.text)
        w.ev("Warning", "Failed", 'Failed to pull image "%s": %s' % (img, msg),
             c.name)
        w.ev("Warning", "Failed", "Error: ErrImagePull", c.name)
        return None, ("ErrImagePull", msg)
    total = time.time() - t0
    w.ev("Normal", "Pulled", 'Successfully pulled image "%s" in %s (%s '
         'including waiting). Image size: %d bytes.' % (
             img, _dur(total - waited), _dur(total), image.size), c.name)
    return image, None


def _dur(s):
    """A Go time.Duration's String() of s seconds (ms precision)."""
    if s < 1:
        return "%dms" % int(s * 1000)
    return ("%.3f" % s).rstrip("0").rstrip(".") + "s"


def pull_images(w):
    """Every container's image, init containers first; retried with
    back-off until all are there. Sets w.images[name]; returns False
    when the pod is deleted first."""
    allc = list(w.inits.values()) + list(w.containers.values())
    todo = list(allc)
    backoff = {}
    while todo and not w.deleting.is_set():
        failed = []
        for c in todo:
            image, err = pull_one(w, c)
            if err is None:
                w.images[c.name] = image
                continue
            c.state = {"waiting": {"reason": err[0], "message": err[1]}}
            failed.append((c, err))
        todo = [c for c, _ in failed]
        if not todo:
            break
        w.push()
        # the next sync finds the image in back-off, as the kubelet's
        # pod worker does a moment later
        if w.deleting.wait(1):
            return False
        wait = 0
        for c, err in failed:
            img = c.spec.get("image", "")
            b = backoff.get(c.name)
            b = min(b * 2, MAX_BACKOFF) if b else \
                w.kl.cfg.image_pull_backoff
            backoff[c.name] = b
            wait = max(wait, b)
            if err[0] == "ErrImageNeverPull":
                continue
            w.ev("Normal", "BackOff", 'Back-off pulling image "%s"' % img,
                 c.name)
            w.ev("Warning", "Failed", "Error: ImagePullBackOff", c.name)
            c.state = {"waiting": {"reason": "ImagePullBackOff", "message":
                                   'Back-off pulling image "%s": %s: %s' % (
                                       img, err[0], err[1])}}
        w.push()
        if w.deleting.wait(max(0.0, wait - 1)):
            return False
    return not w.deleting.is_set()
