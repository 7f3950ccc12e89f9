/* SPDX-License-Identifier: Apache-2.0 */
/* test_urlcred.c - user-info split off URLs and stripped from text (urlcred.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/kp_alloc.h"
#include "controller/report/urlcred.h"

static void redacts_to(const char *text, const char *want)
{
    char *got = urlcred_redact(text);

    assert_string_equal(got, want);
    free(got);
}

static void test_urlcred_split_user_and_password(void **state)
{
    struct kp_err err = {{0}};
    char *bare, *user, *pw;

    (void)state;
    assert_int_equal(
        urlcred_split("https://me%40corp:p%3Aw%2Fd@pg.example:9091/pre", &bare, &user, &pw, &err),
        0);
    assert_string_equal(bare, "https://pg.example:9091/pre");
    assert_string_equal(user, "me@corp"); /* URL-decoded: what basic auth sends */
    assert_string_equal(pw, "p:w/d");
    free(bare);
    kp_free_secret(user);
    kp_free_secret(pw);
    assert_int_equal(urlcred_split("http://pg:9091", &bare, &user, &pw, &err), 0);
    assert_string_equal(bare, "http://pg:9091/");
    assert_null(user);
    assert_null(pw);
    free(bare);
    assert_int_equal(urlcred_split("socks5h://u@[::1]:1080", &bare, &user, &pw, &err), 0);
    assert_string_equal(bare, "socks5h://[::1]:1080/");
    assert_string_equal(user, "u");
    assert_null(pw);
    free(bare);
    kp_free_secret(user);
}

static void test_urlcred_split_refuses_without_echo(void **state)
{
    struct kp_err err = {{0}};
    char *bare = (char *)"x", *user = (char *)"x", *pw = (char *)"x";

    (void)state;
    assert_int_equal(urlcred_split("https://u:Sec/ret@host", &bare, &user, &pw, &err), -1);
    assert_null(bare);
    assert_null(user);
    assert_null(pw);
    assert_non_null(strstr(kp_err_msg(&err), "not a valid URL"));
    assert_null(strstr(kp_err_msg(&err), "Sec"));
}

static void test_urlcred_redact_words_and_text(void **state)
{
    (void)state;
    redacts_to("--push-gateway=https://u:S3cret@pg:9091", "--push-gateway=https://pg:9091/");
    redacts_to("https://:S3cret@pg/x?y=1#z", "https://pg/x?y=1#z");
    redacts_to("imap://u:S3cret;AUTH=PLAIN@mail", "imap://mail/");
    redacts_to("curl -s 'http://a:S3cret@h:1/p' and http://b:S3cret@k/ done",
               "curl -s 'http://h:1/p' and http://k/ done");
    /* no user-info: the text stays byte for byte, libcurl's normal form is not imposed */
    redacts_to("http://pg:9091", "http://pg:9091");
    redacts_to("see http://h/a@b", "see http://h/a@b");
    redacts_to("no url, a://, ://x and 1://y", "no url, a://, ://x and 1://y");
    redacts_to("", "");
}

/* A URL libcurl cannot parse, followed by an '@', may hide a password: it goes, and all
 * after it. */
static void test_urlcred_redact_unparsable(void **state)
{
    (void)state;
    redacts_to("x=https://u:p@ss@host/y z", "x=https://REDACTED");
    redacts_to("in 'http://u:S3c ret@h:1' (x)", "in 'http://REDACTED"); /* the rest may hide it */
    redacts_to("https://u:S3c/ret@host", "https://REDACTED");
    redacts_to("https://bad:port:x/", "https://bad:port:x/"); /* no '@': nothing to hide */
}

static void test_urlcred_redact_strings_of_an_array(void **state)
{
    json_t *a = json_pack("[s, i, s]", "--push-gateway", 7, "https://u:S3cret@pg");

    (void)state;
    urlcred_redact_strings(a);
    assert_string_equal(json_string_value(json_array_get(a, 0)), "--push-gateway");
    assert_int_equal(json_integer_value(json_array_get(a, 1)), 7);
    assert_string_equal(json_string_value(json_array_get(a, 2)), "https://pg/");
    urlcred_redact_strings(NULL); /* no array: nothing to do */
    json_decref(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_urlcred_split_user_and_password),
        cmocka_unit_test(test_urlcred_split_refuses_without_echo),
        cmocka_unit_test(test_urlcred_redact_words_and_text),
        cmocka_unit_test(test_urlcred_redact_unparsable),
        cmocka_unit_test(test_urlcred_redact_strings_of_an_array),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
