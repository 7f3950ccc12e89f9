/* SPDX-License-Identifier: Apache-2.0 */
/* fixture.h - the one loader of the unit tests' recorded inputs under test/unit/data (ctest
 * passes the folder in KPERF_TEST_DATA; run by hand from the repository root it is found
 * there). A fixture that cannot be read fails the test with the path and the reason. Header-only,
 * test use only; include it after <cmocka.h>. What the data files are and where they came from is
 * in the test that reads them. */
#ifndef KPERF_TEST_FIXTURE_H
#define KPERF_TEST_FIXTURE_H

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"

#define FIXTURE_UNUSED __attribute__((unused))

/* The folder of the recorded inputs (never NULL). */
static FIXTURE_UNUSED const char *fixture_dir(void)
{
    const char *d = getenv("KPERF_TEST_DATA");
    return d && *d ? d : "test/unit/data";
}

/* "<data>/<sub>/<name>", or "<data>/<name>" when sub is NULL; the caller frees it. */
static FIXTURE_UNUSED char *fixture_path(const char *sub, const char *name)
{
    if (!sub)
        return kp_xasprintf("%s/%s", fixture_dir(), name);
    return kp_xasprintf("%s/%s/%s", fixture_dir(), sub, name);
}

/* The JSON document of a fixture (a new reference: the caller releases it). */
static FIXTURE_UNUSED json_t *fixture_json(const char *sub, const char *name)
{
    char *path = fixture_path(sub, name);
    json_error_t jerr;
    json_t *doc = json_load_file(path, 0, &jerr);

    if (!doc)
        fail_msg("fixture %s: %s (line %d)", path, jerr.text, jerr.line);
    free(path);
    return doc;
}

/* A fixture's bytes, NUL-terminated (the caller frees them); its length in *len if not NULL. */
static FIXTURE_UNUSED char *fixture_text(const char *sub, const char *name, size_t *len)
{
    char *path = fixture_path(sub, name);
    FILE *f = fopen(path, "rb");
    char *text;
    long n = -1;

    if (!f)
        fail_msg("fixture %s: %s", path, strerror(errno));
    if (fseek(f, 0, SEEK_END) == 0)
        n = ftell(f);
    if (n < 0 || fseek(f, 0, SEEK_SET) != 0)
        fail_msg("fixture %s: cannot find its size: %s", path, strerror(errno));
    text = kp_xmalloc((size_t)n + 1);
    if (fread(text, 1, (size_t)n, f) != (size_t)n)
        fail_msg("fixture %s: short read", path);
    text[n] = '\0';
    fclose(f);
    free(path);
    if (len)
        *len = (size_t)n;
    return text;
}

#endif
