// A minimal test harness: CHECK records a failure with file and line and goes on; each case
// prints one line; test_summary() prints "N passed, M failed" and gives the exit status.
#ifndef CB_TESTS_CHECK_H
#define CB_TESTS_CHECK_H

#include <stdio.h>

static int tests_passed, tests_failed, case_failures;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            case_failures++;                                                                                           \
            printf("  %s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);                                         \
            printf(__VA_ARGS__);                                                                                       \
            printf("\n");                                                                                              \
        }                                                                                                              \
    } while (0)

static inline void case_begin(void) { case_failures = 0; }
static inline void case_end(const char *name) {
    if (case_failures) tests_failed++, printf("FAIL %s\n", name);
    else tests_passed++, printf("ok   %s\n", name);
    fflush(stdout);
}
#define RUN(fn)                                                                                                        \
    do {                                                                                                               \
        case_begin();                                                                                                  \
        fn();                                                                                                          \
        case_end(#fn);                                                                                                 \
    } while (0)

static inline int test_summary(void) {
    printf("%d passed, %d failed\n", tests_passed, tests_failed);
    return tests_failed ? 1 : 0;
}

#endif
