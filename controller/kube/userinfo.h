/* SPDX-License-Identifier: Apache-2.0 */
/* userinfo.h - the user-info ("user:password@") of the URLs the API client is given: the
 * kubeconfig's server and proxy-url, $HTTPS_PROXY. Taken out of the server URL for the
 * request (sent as basic auth, like client-go), kept out of every message. Parses with
 * libcurl's URL API. (The report layer, which may not use this folder, has its own in
 * controller/report/urlcred.h.) */
#ifndef KPERF_KUBE_USERINFO_H
#define KPERF_KUBE_USERINFO_H

#include <stddef.h>

#include "base/kp_err.h"

/* Splits url into the URL without user-info (*bare, as libcurl rebuilds it; caller frees) and
 * the URL-decoded user and password (*user, *password: NULL when absent; caller frees with
 * kp_free_secret). Returns 0, or -1 with err saying why libcurl refused the URL (never the URL
 * itself); the outs are then NULL. */
KP_MUST_CHECK int userinfo_split(const char *url, char **bare, char **user, char **password,
                                 struct kp_err *err);

/* url as a message may show it: without its user-info, or "(a URL with user-info)" when
 * libcurl cannot parse it and it holds an '@'; unchanged when it has none. Caller frees. */
char *userinfo_shown(const char *url);

/* Replaces, in the NUL-terminated text of buf (size bytes), every copy of url by
 * userinfo_shown(url) when the two differ: libcurl's error messages quote a proxy URL as it
 * was given ("Unsupported proxy scheme for 'foo://u:p@h'"). Truncates to fit. */
void userinfo_scrub(char *buf, size_t size, const char *url);

#endif
