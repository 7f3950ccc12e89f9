/* SPDX-License-Identifier: Apache-2.0 */
/* test_run_options_digest.c - the default --image of a build given KPERF_AGENT_IMAGE_REPO and
 * KPERF_AGENT_IMAGE_DIGEST (test/CMakeLists.txt builds run_options.c with both): the release's
 * tag pinned to its digest. The default build's tag-only image: test_run_options.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "controller/run_options.h"

static void test_run_options_digest_pins_the_default_image(void **state)
{
    (void)state;
    assert_string_equal(run_options_default_image(),
                        "reg.io/kperf/kperf-agent:" KPERF_VERSION
                        "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_options_digest_pins_the_default_image),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
