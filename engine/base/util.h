/* Small helpers every engine file uses. */
#ifndef BERTH_UTIL_H
#define BERTH_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "berth/backend.h"

/* printf into err->msg, truncating safely. */
void berth_errorf(berth_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* dir + "/" + name, malloc'd; NULL on exhaustion. */
char *berth_path_join(const char *dir, const char *name);
/* The directory part of path ("." when none), malloc'd. */
char *berth_path_dir(const char *path);

/* Open `path` for reading, never blocking: the open itself is
 * non-blocking, so a FIFO or a device cannot stall berth, and anything but
 * a regular file is refused before a byte is read. Returns the descriptor
 * (blocking again, close-on-exec) and fills *st, or -1 with err set to
 * "PATH: cannot open the WHAT: REASON" (errno left as open set it) or
 * "PATH: the WHAT is a directory, expected a regular file" (errno EISDIR,
 * or EINVAL for any other kind). */
int berth_open_regular(const char *path, const char *what, struct stat *st, berth_error *err);
/* The same, as a stdio stream; NULL with err set. */
FILE *berth_fopen_regular(const char *path, const char *what, berth_error *err);
/* "a directory", "a named pipe (FIFO)", "a character device", ... */
const char *berth_file_kind(mode_t mode);

/* "268 B", "1.5 KiB", "8.0 GiB": sizes in messages, binary units. */
void berth_format_bytes(char *buf, size_t cap, uint64_t bytes);

/* Monotonic nanoseconds. */
uint64_t berth_now_ns(void);

/* A 64-bit digest of n bytes continuing from h (0 to start): tells one
 * file's content from another's for the cache keys, not a defence
 * against anyone forging a collision. About a word a cycle, so digesting
 * weights as they stream costs little beside reading them. */
uint64_t berth_digest(uint64_t h, const void *data, size_t n);

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
