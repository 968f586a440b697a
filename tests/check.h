/* A minimal test harness. Each test binary runs its cases with RUN() and
 * prints one "PASS name" or "FAIL name" line per case; tests/run.sh counts
 * them. CHECK never aborts a case, so one run reports every broken check. */
#ifndef COD_CHECK_H
#define COD_CHECK_H

#include <stdio.h>

static int check_case_failed_;
static int check_cases_failed_;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "  %s:%d: %s: ", __FILE__, __LINE__, #cond);                   \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fputc('\n', stderr);                                                           \
            check_case_failed_ = 1;                                                        \
        }                                                                                  \
    } while (0)

#define RUN(fn)                                                                            \
    do {                                                                                   \
        check_case_failed_ = 0;                                                            \
        fn();                                                                              \
        fflush(stderr);                                                                    \
        printf("%s %s\n", check_case_failed_ ? "FAIL" : "PASS", #fn);                      \
        fflush(stdout);                                                                    \
        check_cases_failed_ += check_case_failed_;                                         \
    } while (0)

#define CHECK_EXIT() return check_cases_failed_ ? 1 : 0

#endif
