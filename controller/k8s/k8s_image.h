/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_image.h - image references as a container runtime reads them: [DOMAIN/]PATH[:TAG][@DIGEST]
 * (the distribution "reference" grammar). kperf deploys the string it was given unchanged; this
 * only checks it, so a typo is one line before anything is created, and says whether it pins a
 * digest. Pure: no I/O. */
#ifndef KPERF_K8S_K8S_IMAGE_H
#define KPERF_K8S_K8S_IMAGE_H

#include "base/kp_err.h"

/* The parts of one reference; every string owned (k8s_image_ref_cleanup). */
struct k8s_image_ref {
    char *domain; /* "ghcr.io", "registry:5000", or NULL (Docker Hub's, implied) */
    char *path;   /* "kperf/kperf-agent" */
    char *tag;    /* "0.1.0", or NULL */
    char *digest; /* "sha256:<64 hex>", or NULL */
};

/* Parses ref: tag only, digest only ("repo@sha256:..."), both ("repo:tag@sha256:...") or
 * neither. Returns 0 with out filled, or -1 with one line naming the part that is wrong (out
 * then holds nothing to free). */
KP_MUST_CHECK int k8s_image_parse(const char *ref, struct k8s_image_ref *out, struct kp_err *err);
void k8s_image_ref_cleanup(struct k8s_image_ref *r); /* frees the strings; NULL-safe fields */

#endif
