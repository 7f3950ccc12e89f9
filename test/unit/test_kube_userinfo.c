/* SPDX-License-Identifier: Apache-2.0 */
/* test_kube_userinfo.c - the API client's URLs without their user-info (userinfo.h): split
 * for the request, shown without it, scrubbed out of libcurl's error text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/kp_alloc.h"
#include "controller/kube/userinfo.h"

static void test_userinfo_split(void **state)
{
    struct kp_err err = {{0}};
    char *bare, *user, *pw;

    (void)state;
    assert_int_equal(userinfo_split("socks5h://u:p%20w@proxy:1080", &bare, &user, &pw, &err), 0);
    assert_string_equal(bare, "socks5h://proxy:1080/");
    assert_string_equal(user, "u");
    assert_string_equal(pw, "p w");
    free(bare);
    kp_free_secret(user);
    kp_free_secret(pw);
    assert_int_equal(userinfo_split("https://u:p/w@h", &bare, &user, &pw, &err), -1);
    assert_null(bare);
    assert_null(user);
    assert_null(pw);
    assert_null(strstr(kp_err_msg(&err), "p/w"));
}

static void test_userinfo_shown(void **state)
{
    char *s;

    (void)state;
    s = userinfo_shown("http://u:S3cret@proxy:3128");
    assert_string_equal(s, "http://proxy:3128/");
    free(s);
    s = userinfo_shown("http://proxy:3128"); /* nothing to hide: as given */
    assert_string_equal(s, "http://proxy:3128");
    free(s);
    s = userinfo_shown("http://u:S3c ret@proxy:3128");
    assert_string_equal(s, "(a URL with user-info)");
    free(s);
}

/* libcurl's own messages for a proxy it refuses (curl 7.88), with the URL as given */
static void test_userinfo_scrub_libcurl_errors(void **state)
{
    char buf[256] = "Unsupported proxy scheme for 'foo://u:S3cret@h:1'";
    char small[51] = "Unsupported proxy syntax in 'http://u:S3c ret@h:1'";
    char plain[64] = "Could not resolve proxy: h";

    (void)state;
    userinfo_scrub(buf, sizeof(buf), "foo://u:S3cret@h:1");
    assert_string_equal(buf, "Unsupported proxy scheme for 'foo://h:1/'");
    userinfo_scrub(small, sizeof(small), "http://u:S3c ret@h:1");
    assert_null(strstr(small, "S3c"));
    assert_int_equal(strlen(small), sizeof(small) - 1); /* truncated to fit */
    userinfo_scrub(plain, sizeof(plain), "http://u:S3cret@h:1");
    assert_string_equal(plain, "Could not resolve proxy: h");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_userinfo_split),
        cmocka_unit_test(test_userinfo_shown),
        cmocka_unit_test(test_userinfo_scrub_libcurl_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
