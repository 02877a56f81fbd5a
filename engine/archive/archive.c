/* Opening an archive, the shared checks, accessors and name lookup. The
 * SafeTensors header lives in archive_st.c, manifests in
 * archive_manifest.c, streaming in archive_stream.c. */
#include "archive_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ba_read_safetensors(berth_archive *a, berth_error *err); /* archive_st.c */

/* Archive offsets reach past 4 GiB and go to pread as off_t: a 32-bit
 * build without _FILE_OFFSET_BITS=64 (CMakeLists.txt sets it) would wrap
 * them silently, so such a build fails here instead. */
_Static_assert(sizeof(off_t) >= 8, "berth needs a 64-bit off_t: build with _FILE_OFFSET_BITS=64");

uint64_t ba_tensor_bytes_max = SIZE_MAX;

static const struct {
    ba_dtype t;
    const char *name;
    size_t bits;
} ba_types[] = {
    {BA_F64, "F64", 64}, {BA_F32, "F32", 32}, {BA_F16, "F16", 16},  {BA_BF16, "BF16", 16},
    {BA_I64, "I64", 64}, {BA_I32, "I32", 32}, {BA_I16, "I16", 16},  {BA_I8, "I8", 8},
    {BA_U64, "U64", 64}, {BA_U32, "U32", 32}, {BA_U16, "U16", 16},  {BA_U8, "U8", 8},
    {BA_BOOL, "BOOL", 8}, {BA_I4, "I4", 4},   {BA_U4, "U4", 4},
};

const char *ba_dtype_name(ba_dtype t) {
    for (size_t i = 0; i < sizeof ba_types / sizeof ba_types[0]; i++)
        if (ba_types[i].t == t) return ba_types[i].name;
    return "?";
}

size_t ba_dtype_bits(ba_dtype t) {
    for (size_t i = 0; i < sizeof ba_types / sizeof ba_types[0]; i++)
        if (ba_types[i].t == t) return ba_types[i].bits;
    return 0;
}

void *ba_fail(berth_error *err, const char *fmt, ...) {
    if (!err) return NULL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return NULL;
}

int ba_pread_full(int fd, void *buf, size_t bytes, uint64_t offset) {
    unsigned char *p = buf;
    while (bytes) {
        if (offset > (uint64_t)INT64_MAX) {
            errno = EOVERFLOW;
            return -1;
        }
        /* At most 1 GiB a call: a read over SSIZE_MAX (2 GiB on a 32-bit
         * build) has no defined result, and Linux stops short of 2 GiB. */
        size_t chunk = bytes > ((size_t)1 << 30) ? ((size_t)1 << 30) : bytes;
        ssize_t got = pread(fd, p, chunk, (off_t)offset);
        if (got < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (got == 0) {
            errno = 0;
            return -1;
        }
        p += got;
        bytes -= (size_t)got;
        offset += (uint64_t)got;
    }
    return 0;
}

void ba_format_shape(char *buf, size_t cap, const char *dtype, uint32_t rank, const int64_t *dims) {
    size_t n = (size_t)snprintf(buf, cap, "%s[", dtype);
    for (uint32_t i = 0; i < rank && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? "," : "", (long long)dims[i]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
}

uint64_t ba_span_bytes(ba_dtype t, uint32_t rank, const int64_t *dims, int *ok) {
    uint64_t count = 1, bits = ba_dtype_bits(t);
    *ok = bits != 0;
    for (uint32_t i = 0; i < rank && *ok; i++) {
        uint64_t d = (uint64_t)dims[i];
        if (d && count > UINT64_MAX / d) *ok = 0;
        else count *= d;
    }
    if (!*ok) return 0;
    if (bits == 4) return count / 2 + (count & 1);
    if (count > UINT64_MAX / (bits / 8)) {
        *ok = 0;
        return 0;
    }
    return count * (bits / 8);
}

int ba_read_shape(const char *file, const char *tensor, const bj_value *shape, uint32_t *rank,
                  int64_t *dims, berth_error *err) {
    if (!shape || shape->type != BJ_ARRAY) {
        ba_fail(err, "%s: tensor '%s': shape is %s, expected an array of integers", file, tensor,
                shape ? bj_type_name(shape->type) : "missing");
        return 0;
    }
    if (shape->count > BERTH_MAX_RANK) {
        ba_fail(err, "%s: tensor '%s': shape has rank %zu, more than the limit %d", file, tensor,
                shape->count, BERTH_MAX_RANK);
        return 0;
    }
    uint32_t i = 0;
    for (const bj_value *d = shape->first; d; d = d->next, i++) {
        if (d->type != BJ_NUMBER || !d->is_uint || d->u > (uint64_t)INT64_MAX) {
            ba_fail(err, "%s: tensor '%s': shape[%u] is %s, expected a non-negative integer", file,
                    tensor, i, d->type == BJ_NUMBER ? d->str : bj_type_name(d->type));
            return 0;
        }
        dims[i] = (int64_t)d->u;
    }
    *rank = i;
    return 1;
}

static int by_offset(const void *x, const void *y) {
    const ba_entry *a = x, *b = y;
    if (a->offset != b->offset) return a->offset < b->offset ? -1 : 1;
    if (a->bytes != b->bytes) return a->bytes < b->bytes ? -1 : 1;
    return strcmp(a->name, b->name);
}

static int by_name(const void *x, const void *y) {
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

int ba_finish_entries(berth_archive *a, const char *file, berth_error *err) {
    if (a->n == 0) return 1;
    qsort(a->entries, a->n, sizeof *a->entries, by_offset);
    const char **names = malloc(a->n * sizeof *names);
    if (!names) {
        ba_fail(err, "%s: out of memory sorting %u tensor names", file, a->n);
        return 0;
    }
    for (uint32_t i = 0; i < a->n; i++) names[i] = a->entries[i].name;
    qsort(names, a->n, sizeof *names, by_name);
    for (uint32_t i = 1; i < a->n; i++) {
        if (!strcmp(names[i - 1], names[i])) {
            ba_fail(err, "%s: tensor '%s': duplicate tensor name", file, names[i]);
            free(names);
            return 0;
        }
    }
    free(names);
    return 1;
}

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

berth_archive *berth_archive_open(const char *path, const char *manifest, berth_error *err) {
    if (!path) return ba_fail(err, "archive: no weights path given");
    int st = ends_with(path, ".safetensors");
    if (!st && !manifest)
        return ba_fail(err, "%s: not a .safetensors file, and no manifest was given for this blob",
                       path);
    berth_archive *a = calloc(1, sizeof *a);
    berth_arena *arena = berth_arena_new();
    if (!a || !arena) {
        free(a);
        berth_arena_free(arena);
        return ba_fail(err, "%s: out of memory", path);
    }
    a->arena = arena;
    a->fd = -1;
    a->path = berth_arena_strdup(arena, path);
    if (!a->path) {
        berth_archive_close(a);
        return ba_fail(err, "%s: out of memory", path);
    }
    struct stat sb;
    a->fd = berth_open_regular(path, "weights archive", &sb, err);
    if (a->fd < 0) {
        berth_archive_close(a);
        return NULL;
    }
    a->file_size = (uint64_t)sb.st_size;
    a->dev = sb.st_dev;
    a->ino = sb.st_ino;
    a->mtime = sb.st_mtim;
    a->ctime = sb.st_ctim;
    int ok = st ? ba_read_safetensors(a, err) : ba_read_manifest(a, manifest, err);
    if (!ok) {
        berth_archive_close(a);
        return NULL;
    }
    return a;
}

static int same_time(struct timespec a, struct timespec b) {
    return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

int ba_check_unchanged(const berth_archive *a, berth_error *err) {
    struct stat now, named;
    const char *what = NULL;
    char size[96];
    if (fstat(a->fd, &now) != 0) {
        ba_fail(err, "%s: cannot check the file after loading: %s", a->path, strerror(errno));
        return 0;
    }
    /* Replacement first: unlinking the old file changes its times too. */
    if (stat(a->path, &named) != 0 || named.st_dev != a->dev || named.st_ino != a->ino) {
        what = "another file (or none) now has its name";
    } else if ((uint64_t)now.st_size != a->file_size) {
        snprintf(size, sizeof size, "its size went from %llu to %llu bytes",
                 (unsigned long long)a->file_size, (unsigned long long)now.st_size);
        what = size;
    } else if (!same_time(now.st_mtim, a->mtime) || !same_time(now.st_ctim, a->ctime)) {
        what = "it was written to";
    }
    if (!what) return 1;
    ba_fail(err, "%s: the weights file changed while it was being loaded (%s); nothing was "
            "loaded: load it again once it is complete", a->path, what);
    return 0;
}

void berth_archive_close(berth_archive *a) {
    if (!a) return;
    if (a->fd >= 0) close(a->fd);
    berth_arena_free(a->arena);
    free(a);
}

const char *berth_archive_path(const berth_archive *a) { return a->path; }
uint32_t berth_archive_count(const berth_archive *a) { return a->n; }

const ba_entry *berth_archive_entry(const berth_archive *a, uint32_t i) {
    return i < a->n ? &a->entries[i] : NULL;
}

const char *berth_archive_meta(const berth_archive *a, const char *key) {
    for (uint32_t i = 0; i < a->n_meta; i++)
        if (!strcmp(a->meta_keys[i], key)) return a->meta_values[i];
    return NULL;
}

uint32_t berth_archive_meta_count(const berth_archive *a) { return a->n_meta; }

void berth_archive_meta_at(const berth_archive *a, uint32_t i, const char **key,
                           const char **value) {
    *key = i < a->n_meta ? a->meta_keys[i] : NULL;
    *value = i < a->n_meta ? a->meta_values[i] : NULL;
}

/* Whether `name`, sanitized ("::" -> "__", "." -> "_"), equals `ref`. */
static int sanitizes_to(const char *name, const char *ref) {
    while (*name) {
        if (name[0] == ':' && name[1] == ':') {
            if (ref[0] != '_' || ref[1] != '_') return 0;
            name += 2, ref += 2;
        } else {
            char c = *name == '.' ? '_' : *name;
            if (*ref != c) return 0;
            name++, ref++;
        }
    }
    return *ref == 0;
}

int32_t berth_archive_lookup(const berth_archive *a, const char *ref, berth_error *err) {
    for (uint32_t i = 0; i < a->n; i++)
        if (!strcmp(a->entries[i].name, ref)) return (int32_t)i;
    int32_t found = -1;
    for (uint32_t i = 0; i < a->n; i++) {
        if (!sanitizes_to(a->entries[i].name, ref)) continue;
        if (found >= 0) {
            ba_fail(err, "%s: reference '%s' is ambiguous: tensors '%s' and '%s' both sanitize to it",
                    a->path, ref, a->entries[found].name, a->entries[i].name);
            return -1;
        }
        found = (int32_t)i;
    }
    if (found < 0)
        ba_fail(err, "%s: no tensor named '%s' (exactly or once sanitized)", a->path, ref);
    return found;
}
