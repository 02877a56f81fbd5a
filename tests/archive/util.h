/* Helpers for the archive tests: a private temp directory, files written
 * byte by byte, and hand-built SafeTensors files. */
#ifndef BERTH_ARCHIVE_TEST_UTIL_H
#define BERTH_ARCHIVE_TEST_UTIL_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline char *tu_tempdir(void) {
    const char *base = getenv("TMPDIR");
    static char dir[512];
    if (!base || !*base || strlen(base) > 400) base = "/tmp";
    snprintf(dir, sizeof dir, "%.400s/berth_archive_XXXXXX", base);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        exit(2);
    }
    return dir;
}

/* dir/name in a rotating static buffer (a few live at once). */
static inline const char *tu_path(const char *dir, const char *name) {
    static char bufs[8][640];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, sizeof bufs[0], "%.300s/%.300s", dir, name);
    return b;
}

static inline void tu_write(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f)) {
        perror(path);
        exit(2);
    }
}

/* A SafeTensors file from a header given as text and `data_len` bytes of
 * data (filled with a recognizable pattern when data is NULL). */
static inline void tu_write_st_len(const char *path, uint64_t header_len, const char *header,
                                   size_t hbytes, const void *data, size_t data_len) {
    size_t total = 8 + hbytes + data_len;
    unsigned char *b = malloc(total ? total : 1);
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)(header_len >> (8 * i));
    memcpy(b + 8, header, hbytes);
    for (size_t i = 0; i < data_len; i++)
        b[8 + hbytes + i] = data ? ((const unsigned char *)data)[i] : (unsigned char)(i * 7 + 1);
    tu_write(path, b, total);
    free(b);
}

static inline void tu_write_st(const char *path, const char *header, const void *data,
                               size_t data_len) {
    tu_write_st_len(path, strlen(header), header, strlen(header), data, data_len);
}

static inline size_t tu_read(const char *path, unsigned char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

/* Number of entries in dir other than . and .. */
static inline int tu_count(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

/* Whether any entry's name contains `part`. */
static inline int tu_any(const char *dir, const char *part) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    int found = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, part)) found = 1;
    closedir(d);
    return found;
}

static inline void tu_rmdir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        unlink(tu_path(dir, e->d_name));
    }
    closedir(d);
    rmdir(dir);
}

static inline void tu_put_f32(unsigned char *p, float v) { memcpy(p, &v, 4); }

#endif
