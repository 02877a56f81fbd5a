/* Small helpers every engine file uses. */
#ifndef BERTH_UTIL_H
#define BERTH_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "berth/backend.h"

/* printf into err->msg, truncating safely. */
void berth_errorf(berth_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* dir + "/" + name, malloc'd; NULL on exhaustion. */
char *berth_path_join(const char *dir, const char *name);
/* The directory part of path ("." when none), malloc'd. */
char *berth_path_dir(const char *path);

/* Monotonic nanoseconds. */
uint64_t berth_now_ns(void);

/* a * b, or 0 with *ok = 0 on overflow. */
static inline int64_t berth_mul_checked(int64_t a, int64_t b, int *ok) {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) {
        *ok = 0;
        return 0;
    }
    return r;
}

#endif
