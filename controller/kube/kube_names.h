/* SPDX-License-Identifier: Apache-2.0 */
/* kube_names.h - the syntax of Kubernetes names and values as the API server checks them:
 * label keys and values, annotation keys, DNS subdomain names, resource quantities. Owns the
 * syntax only (apimachinery's validation rules); knows nothing of what a label means. */
#ifndef KPERF_KUBE_KUBE_NAMES_H
#define KPERF_KUBE_KUBE_NAMES_H

#include "base/kp_err.h"

/* A qualified name: [DNS-subdomain-prefix/]name, name <= 63 characters of [A-Za-z0-9-_.]
 * starting and ending alphanumeric. Label and annotation keys. Returns 0, or -1 with why. */
KP_MUST_CHECK int kube_names_check_key(const char *key, struct kp_err *err);

/* A label value: empty, or <= 63 characters of [A-Za-z0-9-_.] starting and ending
 * alphanumeric. Returns 0, or -1 with why. */
KP_MUST_CHECK int kube_names_check_label_value(const char *value, struct kp_err *err);

/* A DNS-1123 subdomain (<= 253, lowercase labels joined by dots): PriorityClass names and
 * the like. Returns 0, or -1 with why. */
KP_MUST_CHECK int kube_names_check_subdomain(const char *name, struct kp_err *err);

/* A resource quantity ("100m", "1.5", "64Mi", "1e3", "2G"): *out gets its value in base units
 * (cores, bytes). Returns 0, or -1 with why (negative, malformed, unknown suffix). */
KP_MUST_CHECK int kube_names_parse_quantity(const char *s, double *out, struct kp_err *err);

#endif
