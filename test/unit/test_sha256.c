/* SPDX-License-Identifier: Apache-2.0 */
/* test_sha256.c - SHA-256 against FIPS 180-4 examples, HMAC-SHA256 against RFC 4231, the
 * constant-time compare and the random source. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agent/sha256.h"

static void hex(const uint8_t *d, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

static void assert_digest(const uint8_t d[SHA256_LEN], const char *want)
{
    char got[2 * SHA256_LEN + 1];
    hex(d, SHA256_LEN, got);
    assert_string_equal(got, want);
}

static void test_sha256_fips_vectors(void **state)
{
    uint8_t d[SHA256_LEN];
    struct sha256 s;
    (void)state;

    sha256("abc", 3, d);
    assert_digest(d, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    sha256("", 0, d);
    assert_digest(d, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, d);
    assert_digest(d, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* one million 'a', fed in uneven pieces */
    sha256_init(&s);
    {
        char a[997];
        size_t left = 1000000;
        memset(a, 'a', sizeof(a));
        while (left) {
            size_t n = left < sizeof(a) ? left : sizeof(a);
            sha256_update(&s, a, n);
            left -= n;
        }
    }
    sha256_final(&s, d);
    assert_digest(d, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void test_sha256_hmac_rfc4231(void **state)
{
    uint8_t key[131];
    uint8_t d[SHA256_LEN];
    (void)state;

    memset(key, 0x0b, 20);
    hmac_sha256(key, 20, "Hi There", 8, d);
    assert_digest(d, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, d);
    assert_digest(d, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    /* test case 6: a key longer than the block is hashed first */
    memset(key, 0xaa, sizeof(key));
    hmac_sha256(key, sizeof(key), "Test Using Larger Than Block-Size Key - Hash Key First", 54, d);
    assert_digest(d, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

static void test_sha256_ct_equal(void **state)
{
    uint8_t a[32] = {0}, b[32] = {0};
    (void)state;

    assert_true(sha256_ct_equal(a, b, 32));
    b[31] = 1;
    assert_false(sha256_ct_equal(a, b, 32));
    b[31] = 0;
    b[0] = 0x80;
    assert_false(sha256_ct_equal(a, b, 32));
    assert_true(sha256_ct_equal(a, b, 0));
}

static void test_sha256_random_differs(void **state)
{
    uint8_t a[32], b[32];
    (void)state;

    assert_int_equal(sha256_random(a, sizeof(a)), 0);
    assert_int_equal(sha256_random(b, sizeof(b)), 0);
    assert_false(sha256_ct_equal(a, b, sizeof(a)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_fips_vectors),
        cmocka_unit_test(test_sha256_hmac_rfc4231),
        cmocka_unit_test(test_sha256_ct_equal),
        cmocka_unit_test(test_sha256_random_differs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
