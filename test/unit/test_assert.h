/* SPDX-License-Identifier: Apache-2.0 */
/* test_assert.h - assertions cmocka lacks, each printing both values on failure (include after
 * <cmocka.h>). cmocka's assert_float_equal compares as float, so exact double equality gets
 * its own. */
#ifndef KPERF_TEST_ASSERT_H
#define KPERF_TEST_ASSERT_H

/* a == b as doubles; on failure prints both expressions and both values to full precision. */
#define assert_double_exact(a, b)                                                                  \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(a_ == b_))                                                                           \
            fail_msg("%s == %s: %.17g != %.17g", #a, #b, a_, b_);                                  \
    } while (0)

#endif
