/* SPDX-License-Identifier: Apache-2.0 */
/* test_k8s_image.c - image references: tag, digest, both, registries with ports; the bad ones
 * refused with the part named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/k8s/k8s_image.h"

#define D64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void expect(const char *ref, const char *domain, const char *path, const char *tag,
                   const char *digest)
{
    struct k8s_image_ref r;
    struct kp_err err = {{0}};

    if (k8s_image_parse(ref, &r, &err) != 0)
        fail_msg("%s: %s", ref, kp_err_msg(&err));
    if (domain)
        assert_string_equal(r.domain, domain);
    else
        assert_null(r.domain);
    assert_string_equal(r.path, path);
    if (tag)
        assert_string_equal(r.tag, tag);
    else
        assert_null(r.tag);
    if (digest)
        assert_string_equal(r.digest, digest);
    else
        assert_null(r.digest);
    k8s_image_ref_cleanup(&r);
}

static void test_k8s_image_tag_digest_and_both(void **state)
{
    (void)state;
    expect("ghcr.io/kperf/kperf-agent:0.1.0", "ghcr.io", "kperf/kperf-agent", "0.1.0", NULL);
    expect("ghcr.io/kperf/kperf-agent@sha256:" D64, "ghcr.io", "kperf/kperf-agent", NULL,
           "sha256:" D64);
    expect("ghcr.io/kperf/kperf-agent:0.1.0@sha256:" D64, "ghcr.io", "kperf/kperf-agent", "0.1.0",
           "sha256:" D64);
    expect("127.0.0.1:5000/kperf/kperf-agent@sha256:" D64, "127.0.0.1:5000", "kperf/kperf-agent",
           NULL, "sha256:" D64);
    expect("localhost/kperf-agent:e2e", "localhost", "kperf-agent", "e2e", NULL);
    expect("123456789012.dkr.ecr.eu-west-1.amazonaws.com/kperf/kperf-agent:v1_2.3-rc.1",
           "123456789012.dkr.ecr.eu-west-1.amazonaws.com", "kperf/kperf-agent", "v1_2.3-rc.1",
           NULL);
    expect("[::1]:5000/kperf-agent:x", "[::1]:5000", "kperf-agent", "x", NULL);
    expect("kperf-agent:e2e", NULL, "kperf-agent", "e2e", NULL);
    expect("library/busy__box.x", NULL, "library/busy__box.x", NULL, NULL);
}

static void refuse(const char *ref, const char *why)
{
    struct k8s_image_ref r;
    struct kp_err err = {{0}};

    if (k8s_image_parse(ref, &r, &err) == 0)
        fail_msg("%s was accepted", ref);
    if (!strstr(kp_err_msg(&err), why))
        fail_msg("%s: '%s' does not say '%s'", ref, kp_err_msg(&err), why);
    assert_null(r.path);
    assert_null(r.tag);
}

static void test_k8s_image_bad_references_name_the_part(void **state)
{
    (void)state;
    refuse("repo@sha256:abc", "digest 'sha256:abc'");
    refuse("repo@md5:" D64, "digest");
    refuse("repo@sha256:" D64 "0", "digest");
    refuse("repo@SHA256:" D64, "digest");
    refuse("repo:", "tag ''");
    refuse("repo:-x", "tag '-x'");
    refuse("repo:a b", "tag 'a b'");
    refuse(":tag", "repository name is empty");
    refuse("", "repository name is empty");
    refuse("Kperf/agent", "'Kperf' is not a repository path component");
    refuse("reg.io//agent", "'' is not a repository path component");
    refuse("reg.io/agent-", "'agent-'");
    refuse("reg.io:port/agent", "'reg.io:port' is not a registry");
    refuse("reg.io/x:1@", "digest ''");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k8s_image_tag_digest_and_both),
        cmocka_unit_test(test_k8s_image_bad_references_name_the_part),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
