#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void berth_errorf(berth_error *err, const char *fmt, ...) {
    if (!err) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}

char *berth_path_join(const char *dir, const char *name) {
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (!p) return NULL;
    memcpy(p, dir, a);
    size_t o = a;
    if (a && dir[a - 1] != '/') p[o++] = '/';
    memcpy(p + o, name, b + 1);
    return p;
}

char *berth_path_dir(const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return strdup(".");
    if (slash == path) return strdup("/");
    size_t n = (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, path, n);
    d[n] = 0;
    return d;
}

const char *berth_file_kind(mode_t mode) {
    if (S_ISREG(mode)) return "a regular file";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a named pipe (FIFO)";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

int berth_open_regular(const char *path, const char *what, struct stat *st, berth_error *err) {
    /* O_NONBLOCK: opening a FIFO with no writer, or some devices, would
     * otherwise wait forever before the type check below could run. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        berth_errorf(err, "%s: cannot open the %s: %s", path, what, strerror(e));
        errno = e; /* a caller may take a missing file for an absent one */
        return -1;
    }
    struct stat local;
    if (!st) st = &local;
    if (fstat(fd, st) != 0) {
        berth_errorf(err, "%s: cannot open the %s: %s", path, what, strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st->st_mode)) {
        berth_errorf(err, "%s: the %s is %s, expected a regular file", path, what,
                     berth_file_kind(st->st_mode));
        close(fd);
        errno = S_ISDIR(st->st_mode) ? EISDIR : EINVAL;
        return -1;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        berth_errorf(err, "%s: cannot open the %s: %s", path, what, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

FILE *berth_fopen_regular(const char *path, const char *what, berth_error *err) {
    int fd = berth_open_regular(path, what, NULL, err);
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        berth_errorf(err, "%s: cannot open the %s: %s", path, what, strerror(errno));
        close(fd);
    }
    return f;
}

uint64_t berth_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void berth_format_bytes(char *buf, size_t cap, uint64_t bytes) {
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) {
        snprintf(buf, cap, "%llu B", (unsigned long long)bytes);
        return;
    }
    double v = (double)bytes / 1024.0;
    size_t u = 0;
    /* 1023.96 KiB prints as 1.0 MiB, not 1024.0 KiB */
    while (v >= 1023.95 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, cap, "%.1f %s", v, units[u]);
}

#define DIGEST_K 0x9e3779b97f4a7c15ull

static uint64_t digest_mix(uint64_t h, uint64_t w) {
    h = (h ^ w) * DIGEST_K;
    return h ^ (h >> 29);
}

uint64_t berth_digest(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = data;
    /* four lanes, so consecutive words do not wait on each other's multiply */
    uint64_t lane[4] = {h ^ 1, h ^ 2, h ^ 3, h ^ 4};
    for (; n >= 32; n -= 32, p += 32)
        for (int i = 0; i < 4; i++) {
            uint64_t w;
            memcpy(&w, p + 8 * i, 8);
            lane[i] = digest_mix(lane[i], w);
        }
    uint64_t out = digest_mix(h, (uint64_t)n);
    for (int i = 0; i < 4; i++) out = digest_mix(out, lane[i]);
    for (; n >= 8; n -= 8, p += 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        out = digest_mix(out, w);
    }
    uint64_t tail = 0;
    if (n) memcpy(&tail, p, n);
    return digest_mix(out, tail ^ ((uint64_t)n << 56));
}
