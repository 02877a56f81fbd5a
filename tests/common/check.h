/* Minimal test helpers shared by every suite: a failed CHECK prints the
 * file, line and expression and marks the test failed; main returns
 * check_exit() so ctest sees the result. */
#ifndef BERTH_TEST_CHECK_H
#define BERTH_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK(cond) do { \
    check_count++; \
    if (!(cond)) { \
        check_failures++; \
        fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    } \
} while (0)

/* Message `msg` must contain `part`. */
#define CHECK_CONTAINS(msg, part) do { \
    check_count++; \
    const char *check_m_ = (msg); \
    if (!check_m_ || !strstr(check_m_, (part))) { \
        check_failures++; \
        fprintf(stderr, "%s:%d: expected message containing \"%s\", got \"%s\"\n", \
                __FILE__, __LINE__, (part), check_m_ ? check_m_ : "(null)"); \
    } \
} while (0)

/* Message `msg` must be exactly `want`: what the user reads, whole. */
#define CHECK_MSG(msg, want) do { \
    check_count++; \
    const char *check_m_ = (msg), *check_w_ = (want); \
    if (!check_m_ || strcmp(check_m_, check_w_) != 0) { \
        check_failures++; \
        fprintf(stderr, "%s:%d: expected message\n  \"%s\"\ngot\n  \"%s\"\n", __FILE__, \
                __LINE__, check_w_, check_m_ ? check_m_ : "(null)"); \
    } \
} while (0)

#define CHECK_NEAR(a, b, tol) do { \
    check_count++; \
    double check_a_ = (double)(a), check_b_ = (double)(b); \
    if (!(check_a_ - check_b_ <= (tol) && check_b_ - check_a_ <= (tol))) { \
        check_failures++; \
        fprintf(stderr, "%s:%d: %s = %.9g, expected %.9g (tol %g)\n", \
                __FILE__, __LINE__, #a, check_a_, check_b_, (double)(tol)); \
    } \
} while (0)

static inline int check_exit(void) {
    if (check_count == 0) {
        fprintf(stderr, "no checks ran\n");
        return 1;
    }
    fprintf(stderr, "%d checks, %d failed\n", check_count, check_failures);
    return check_failures ? 1 : 0;
}

#endif
