/* What the archive's source files share; not part of any interface. */
#ifndef BERTH_ARCHIVE_INTERNAL_H
#define BERTH_ARCHIVE_INTERNAL_H

#include <sys/stat.h>
#include <time.h>

#include "archive.h"
#include "arena.h"
#include "json.h"
#include "util.h"

/* SafeTensors' own bound on the header length. */
#define BA_MAX_HEADER 100000000ull

struct berth_archive {
    berth_arena *arena; /* path, names, entries, metadata */
    const char *path;   /* the data file: .safetensors or the blob */
    int fd;
    uint64_t file_size;
    /* The file as validated at open; streaming ends by checking that the
     * file is still this one, unchanged (see ba_check_unchanged). */
    dev_t dev;
    ino_t ino;
    struct timespec mtime, ctime;
    uint64_t data_start; /* first payload byte */
    uint32_t n;
    ba_entry *entries;   /* sorted by offset: file order */
    uint32_t n_meta;
    const char **meta_keys, **meta_values;
    uint64_t digest;     /* of the bytes the last stream read (berth_archive_digest) */
};

/* printf into err->msg; returns NULL so callers can `return ba_fail(...)`. */
void *ba_fail(berth_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* 1 when the archive's file is the one validated at open, with the same
 * size, modification and change times; else 0 with err saying what
 * changed. A rewrite within one tick of the file system's clock is not
 * seen: the times are what the kernel offers. */
int ba_check_unchanged(const berth_archive *a, berth_error *err);

/* The most bytes one tensor may have. A tensor is read into memory
 * whole, so it must fit a size_t: on a 32-bit build a tensor of 4 GiB or
 * more is refused by name before anything is uploaded, while offsets and
 * file sizes stay 64-bit. SIZE_MAX, except where a test lowers it to reach
 * that refusal on a 64-bit build. */
extern uint64_t ba_tensor_bytes_max;

/* Reads exactly `bytes` at `offset`, looping on short reads and EINTR.
 * 0 on success; -1 with errno set (0 for a premature end of file). */
int ba_pread_full(int fd, void *buf, size_t bytes, uint64_t offset);

/* "F32[2,3]" into buf. */
void ba_format_shape(char *buf, size_t cap, const char *dtype, uint32_t rank, const int64_t *dims);

/* Product of dims times bits / 8 (rounded up for 4-bit), or 0 with *ok=0
 * on overflow. */
uint64_t ba_span_bytes(ba_dtype t, uint32_t rank, const int64_t *dims, int *ok);

/* Reads a "shape" array into dims; 0 with err set (naming file, tensor). */
int ba_read_shape(const char *file, const char *tensor, const bj_value *shape, uint32_t *rank,
                  int64_t *dims, berth_error *err);

/* Sorts entries by offset and refuses duplicate names. */
int ba_finish_entries(berth_archive *a, const char *file, berth_error *err);

/* Fills a from a manifest (JSON text) over the blob already opened in a. */
int ba_read_manifest(berth_archive *a, const char *manifest_path, berth_error *err);

#endif
