/* SPDX-License-Identifier: Apache-2.0 */
/* test_ksyms.c - /proc/kallsyms parsed into the kernel's functions sorted by address, and an
 * address symbolized to the function holding it: unsorted lines, data symbols and malformed
 * lines skipped, module names kept, addresses below the first or far past the last symbol
 * refused, a file whose addresses kptr_restrict hid refused with the reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/ksyms.h"

static const char KALLSYMS[] = "ffffffff81f41270 t tbf_dequeue\n"
                               "ffffffff81000000 T _text\n"
                               "ffffffff81f40dd0 t tbf_enqueue\n"
                               "ffffffff82a00000 D some_data\n"
                               "ffffffff81369b40 t handle_softirqs\n"
                               "not a line at all\n"
                               "ffffffff81f41600 W weak_fn\n"
                               "ffffffffc0a01000 t nft_do_chain\t[nf_tables]\n"
                               "ffffffff81f41500 T __qdisc_run"; /* no final newline */

static const char *name_at(const struct ksyms *k, uint64_t addr)
{
    long i = ksyms_find(k, addr);

    return i < 0 ? NULL : ksyms_name(k, (size_t)i);
}

static void test_ksyms_parse_sorts_text_symbols(void **state)
{
    struct ksyms *k = ksyms_parse(KALLSYMS);

    (void)state;
    assert_int_equal(ksyms_count(k), 7); /* the data symbol and the bad line left out */
    assert_string_equal(ksyms_name(k, 0), "_text");
    assert_string_equal(ksyms_name(k, 1), "handle_softirqs");
    assert_string_equal(ksyms_name(k, 6), "nft_do_chain [nf_tables]");
    ksyms_free(k);
}

static void test_ksyms_find_the_function_holding_an_address(void **state)
{
    struct ksyms *k = ksyms_parse(KALLSYMS);

    (void)state;
    assert_string_equal(name_at(k, 0xffffffff81f40dd0ull), "tbf_enqueue"); /* its first byte */
    assert_string_equal(name_at(k, 0xffffffff81f40dd1ull), "tbf_enqueue");
    assert_string_equal(name_at(k, 0xffffffff81f4126full), "tbf_enqueue"); /* the last byte */
    assert_string_equal(name_at(k, 0xffffffff81f41270ull), "tbf_dequeue");
    assert_string_equal(name_at(k, 0xffffffff81f41510ull), "__qdisc_run");
    assert_string_equal(name_at(k, 0xffffffffc0a01234ull), "nft_do_chain [nf_tables]");
    assert_null(name_at(k, 0xffffffff80ffffffull));                      /* below _text */
    assert_null(name_at(k, 0xffffffffc0a01000ull + KSYMS_MAX_SIZE + 1)); /* far past the last */
    assert_int_equal(ksyms_by_name(k, "handle_softirqs"), 1);
    assert_int_equal(ksyms_by_name(k, "nft_do_chain"), 6); /* without its module */
    assert_int_equal(ksyms_by_name(k, "tbf"), -1);         /* a prefix is not a name */
    ksyms_free(k);
}

static void test_ksyms_empty_and_hidden(void **state)
{
    struct ksyms *k = ksyms_parse("");
    char path[] = "/tmp/test_ksyms_XXXXXX";
    int fd = mkstemp(path);
    struct kp_err err = {{0}};
    const char hidden[] = "0000000000000000 T _text\n0000000000000000 t tbf_dequeue\n";

    (void)state;
    assert_int_equal(ksyms_count(k), 0);
    assert_int_equal(ksyms_find(k, 0xffffffff81000000ull), -1);
    ksyms_free(k);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, hidden, sizeof(hidden) - 1), (ssize_t)(sizeof(hidden) - 1));
    close(fd);
    assert_null(ksyms_load(path, &err));
    assert_non_null(strstr(kp_err_msg(&err), "kptr_restrict"));
    fd = open(path, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, KALLSYMS, sizeof(KALLSYMS) - 1), (ssize_t)(sizeof(KALLSYMS) - 1));
    close(fd);
    k = ksyms_load(path, &err);
    assert_non_null(k);
    assert_int_equal(ksyms_count(k), 7);
    ksyms_free(k);
    unlink(path);
    assert_null(ksyms_load(path, &err));
    assert_non_null(strstr(kp_err_msg(&err), "cannot open"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ksyms_parse_sorts_text_symbols),
        cmocka_unit_test(test_ksyms_find_the_function_holding_an_address),
        cmocka_unit_test(test_ksyms_empty_and_hidden),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
