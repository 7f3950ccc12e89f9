/* SPDX-License-Identifier: Apache-2.0 */
/* urlcred.h - the user-info of URLs ("user:password@"): taken out of a URL for the request
 * that needs it, and stripped from any text kperf stores, renders or logs (the command line
 * in report metadata, error messages). Parses and rebuilds with libcurl's URL API
 * (curl_url); owns no I/O and no policy on where a password comes from. */
#ifndef KPERF_REPORT_URLCRED_H
#define KPERF_REPORT_URLCRED_H

#include <jansson.h>

#include "base/kp_err.h"

/* Splits url into the URL without user-info (*bare, as libcurl rebuilds it: "http://h:1"
 * becomes "http://h:1/"; caller frees) and the URL-decoded user and password (*user,
 * *password: NULL when the URL has none; caller frees with kp_free_secret). Any of the out
 * pointers may be NULL when not wanted. Returns 0, or -1 with err saying why libcurl refused
 * the URL (the message never holds the URL: it may hold a password); the outs are then
 * NULL. */
KP_MUST_CHECK int urlcred_split(const char *url, char **bare, char **user, char **password,
                                struct kp_err *err);

/* A copy of text in which every URL (SCHEME://...) has its user-info removed: a command-line
 * word "--push-gateway=https://u:p@h:9091" becomes "--push-gateway=https://h:9091/". A URL
 * ends at white space or a quote; one without user-info is copied unchanged. One that libcurl
 * cannot parse, followed anywhere by an '@', becomes "SCHEME://REDACTED" and the rest of the
 * text goes with it (a password libcurl could not find may be there, spaces and all). Never
 * NULL; caller frees. */
char *urlcred_redact(const char *text);

/* Runs urlcred_redact over every string of a JSON array, in place (a report's
 * metadata.arguments written by an older kperf). Anything else is left alone. */
void urlcred_redact_strings(json_t *array);

#endif
