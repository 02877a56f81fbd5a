/* The SafeTensors writer, for tests and tools. Everything is checked
 * before the first byte is written, and the file appears under its name
 * only once complete (a temporary in the same directory, renamed), so a
 * reader never sees half a file and a failure leaves nothing behind. */
#include "archive_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct text {
    char *s;
    size_t len, cap;
    int oom;
} text;

static void put(text *t, const char *s, size_t n) {
    if (t->oom) return;
    if (t->cap - t->len < n + 1) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap - t->len < n + 1) {
            if (cap > SIZE_MAX / 2) {
                t->oom = 1;
                return;
            }
            cap *= 2;
        }
        char *s2 = realloc(t->s, cap);
        if (!s2) {
            t->oom = 1;
            return;
        }
        t->s = s2;
        t->cap = cap;
    }
    memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = 0;
}

static void puts_(text *t, const char *s) { put(t, s, strlen(s)); }

static void put_string(text *t, const char *s) {
    put(t, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\', esc[1] = (char)c;
            put(t, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            put(t, esc, 6);
        } else {
            put(t, (const char *)&c, 1);
        }
    }
    put(t, "\"", 1);
}

static void put_u64(text *t, uint64_t v) {
    char num[24];
    snprintf(num, sizeof num, "%llu", (unsigned long long)v);
    puts_(t, num);
}

static int valid_name(const char *s) { return s && bj_utf8_invalid_at(s, strlen(s)) == strlen(s); }

static int by_name(const void *x, const void *y) {
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* Every tensor and metadata pair is checked before anything is written. */
static int check_inputs(const char *path, const berth_st_tensor *t, uint32_t n,
                        const char *const *meta_kv, berth_error *err) {
    for (uint32_t i = 0; i < n; i++) {
        const char *name = t[i].name;
        if (!valid_name(name) || !strcmp(name, "__metadata__")) {
            ba_fail(err, "%s: tensor %u: name is %s", path, i,
                    !name ? "missing" : !strcmp(name, "__metadata__") ? "the reserved __metadata__"
                                                                      : "not valid UTF-8");
            return 0;
        }
        if (t[i].dtype == BA_INVALID || t[i].dtype == BA_I4 || t[i].dtype == BA_U4 ||
            !ba_dtype_bits(t[i].dtype)) {
            ba_fail(err, "%s: tensor '%s': dtype %s cannot be stored in SafeTensors (pack 4-bit "
                    "values as U8)", path, name, ba_dtype_name(t[i].dtype));
            return 0;
        }
        if (t[i].rank > BERTH_MAX_RANK) {
            ba_fail(err, "%s: tensor '%s': rank %u is more than %d", path, name, t[i].rank,
                    BERTH_MAX_RANK);
            return 0;
        }
        for (uint32_t k = 0; k < t[i].rank; k++) {
            if (t[i].dims[k] < 0) {
                ba_fail(err, "%s: tensor '%s': dim %u is %lld, expected >= 0", path, name, k,
                        (long long)t[i].dims[k]);
                return 0;
            }
        }
        int ok;
        uint64_t need = ba_span_bytes(t[i].dtype, t[i].rank, t[i].dims, &ok);
        char shape[160];
        ba_format_shape(shape, sizeof shape, ba_dtype_name(t[i].dtype), t[i].rank, t[i].dims);
        if (!ok) {
            ba_fail(err, "%s: tensor '%s': %s overflows a 64-bit byte count", path, name, shape);
            return 0;
        }
        if (need != t[i].bytes) {
            ba_fail(err, "%s: tensor '%s': %llu bytes given but %s needs %llu", path, name,
                    (unsigned long long)t[i].bytes, shape, (unsigned long long)need);
            return 0;
        }
        /* The bytes come from memory: more than a size_t counts (a 32-bit
         * build given a 64-bit byte count) cannot be a real buffer. */
        if (t[i].bytes > (uint64_t)SIZE_MAX) {
            ba_fail(err, "%s: tensor '%s': %llu bytes do not fit this %u-bit build's address "
                    "space", path, name, (unsigned long long)t[i].bytes,
                    (unsigned)(sizeof(size_t) * 8));
            return 0;
        }
        if (!t[i].data && t[i].bytes) {
            ba_fail(err, "%s: tensor '%s': data is missing for %llu bytes", path, name,
                    (unsigned long long)t[i].bytes);
            return 0;
        }
    }
    for (size_t i = 0; meta_kv && meta_kv[i]; i += 2) {
        if (!valid_name(meta_kv[i]) || !valid_name(meta_kv[i + 1])) {
            ba_fail(err, "%s: __metadata__ '%s': key and value must be UTF-8 strings", path,
                    meta_kv[i]);
            return 0;
        }
    }
    if (n == 0) return 1;
    const char **names = malloc(n * sizeof *names);
    if (!names) {
        ba_fail(err, "%s: out of memory", path);
        return 0;
    }
    for (uint32_t i = 0; i < n; i++) names[i] = t[i].name;
    qsort(names, n, sizeof *names, by_name);
    for (uint32_t i = 1; i < n; i++) {
        if (!strcmp(names[i - 1], names[i])) {
            ba_fail(err, "%s: tensor '%s': duplicate tensor name", path, names[i]);
            free(names);
            return 0;
        }
    }
    free(names);
    return 1;
}

/* The header JSON, padded with spaces so the data starts 8-aligned. */
static int build_header(text *h, const berth_st_tensor *t, uint32_t n, const char *const *meta_kv) {
    puts_(h, "{");
    int first = 1;
    if (meta_kv && meta_kv[0]) {
        puts_(h, "\"__metadata__\":{");
        for (size_t i = 0; meta_kv[i]; i += 2) {
            if (i) puts_(h, ",");
            put_string(h, meta_kv[i]);
            puts_(h, ":");
            put_string(h, meta_kv[i + 1]);
        }
        puts_(h, "}");
        first = 0;
    }
    uint64_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!first) puts_(h, ",");
        first = 0;
        put_string(h, t[i].name);
        puts_(h, ":{\"dtype\":\"");
        puts_(h, ba_dtype_name(t[i].dtype));
        puts_(h, "\",\"shape\":[");
        for (uint32_t k = 0; k < t[i].rank; k++) {
            if (k) puts_(h, ",");
            put_u64(h, (uint64_t)t[i].dims[k]);
        }
        puts_(h, "],\"data_offsets\":[");
        put_u64(h, at);
        puts_(h, ",");
        at += t[i].bytes;
        put_u64(h, at);
        puts_(h, "]}");
    }
    puts_(h, "}");
    while (!h->oom && h->len % 8) puts_(h, " ");
    return !h->oom;
}

static int write_all(int fd, const void *data, uint64_t bytes) {
    const unsigned char *p = data;
    while (bytes) {
        size_t chunk = bytes > (1u << 30) ? (1u << 30) : (size_t)bytes;
        ssize_t w = write(fd, p, chunk);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        bytes -= (uint64_t)w;
    }
    return 0;
}

/* The file a write to `path` replaces: a symbolic link is followed (with
 * a bound on hops, as the kernel does) so the link survives and its
 * target is written; a dangling link's target is created. malloc'd, or
 * NULL with err set. */
static char *follow_links(const char *path, berth_error *err) {
    char *cur = strdup(path);
    for (int hop = 0; cur && hop < 40; hop++) {
        struct stat sb;
        if (lstat(cur, &sb) != 0) {
            if (errno == ENOENT) return cur;
            ba_fail(err, "%s: cannot write: %s", path, strerror(errno));
            free(cur);
            return NULL;
        }
        if (!S_ISLNK(sb.st_mode)) return cur;
        char target[4096];
        ssize_t len = readlink(cur, target, sizeof target - 1);
        if (len < 0) {
            ba_fail(err, "%s: cannot read the link %s: %s", path, cur, strerror(errno));
            free(cur);
            return NULL;
        }
        target[len] = 0;
        char *next;
        if (target[0] == '/') {
            next = strdup(target);
        } else {
            char *dir = berth_path_dir(cur);
            next = dir ? berth_path_join(dir, target) : NULL;
            free(dir);
        }
        free(cur);
        cur = next;
    }
    if (cur) {
        ba_fail(err, "%s: cannot write: too many levels of symbolic links", path);
        free(cur);
    } else {
        ba_fail(err, "%s: out of memory", path);
    }
    return NULL;
}

int berth_st_write(const char *path, const berth_st_tensor *t, uint32_t n,
                   const char *const *meta_kv, berth_error *err) {
    if (!path || (n && !t)) {
        ba_fail(err, "st_write: missing path or tensors");
        return -1;
    }
    if (!check_inputs(path, t, n, meta_kv, err)) return -1;
    uint64_t data_bytes = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (t[i].bytes > UINT64_MAX - data_bytes) {
            ba_fail(err, "%s: total size overflows 64 bits at tensor '%s'", path, t[i].name);
            return -1;
        }
        data_bytes += t[i].bytes;
    }
    text h = {0};
    if (!build_header(&h, t, n, meta_kv) || h.len > BA_MAX_HEADER) {
        ba_fail(err, "%s: %s", path, h.oom ? "out of memory building the header"
                                            : "header over the 100000000-byte limit");
        free(h.s);
        return -1;
    }
    /* Only a regular file (or nothing) is replaced: renaming over a
     * device node, a FIFO or a directory would destroy it, not write it. */
    char *final = follow_links(path, err);
    struct stat sb;
    if (final && stat(final, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        if (strcmp(final, path))
            ba_fail(err, "%s: links to %s, which is %s; only a regular file or a new name is written",
                    path, final, berth_file_kind(sb.st_mode));
        else
            ba_fail(err, "%s: is %s; only a regular file or a new name is written", path,
                    berth_file_kind(sb.st_mode));
        free(final);
        final = NULL;
    }
    if (!final) {
        free(h.s);
        return -1;
    }
    size_t plen = strlen(final);
    char *tmp = malloc(plen + sizeof ".tmp.XXXXXX");
    if (!tmp) {
        free(final);
        free(h.s);
        ba_fail(err, "%s: out of memory", path);
        return -1;
    }
    memcpy(tmp, final, plen);
    memcpy(tmp + plen, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");
    int fd = mkstemp(tmp);
    if (fd < 0) {
        ba_fail(err, "%s: cannot create a temporary file beside %s: %s", path, final, strerror(errno));
        free(final);
        free(tmp);
        free(h.s);
        return -1;
    }
    unsigned char len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (unsigned char)((uint64_t)h.len >> (8 * i));
    int ok = fchmod(fd, 0644) == 0 && write_all(fd, len8, 8) == 0 &&
             write_all(fd, h.s, h.len) == 0;
    for (uint32_t i = 0; ok && i < n; i++) ok = write_all(fd, t[i].data, t[i].bytes) == 0;
    if (ok) ok = fsync(fd) == 0;
    int saved = errno;
    if (close(fd) != 0 && ok) ok = 0, saved = errno;
    if (ok && rename(tmp, final) != 0) ok = 0, saved = errno;
    if (!ok) {
        unlink(tmp);
        ba_fail(err, "%s: writing failed: %s", path, strerror(saved));
    }
    free(tmp);
    free(final);
    free(h.s);
    return ok ? 0 : -1;
}
