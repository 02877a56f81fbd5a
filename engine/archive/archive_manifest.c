/* A JSON manifest of spans over a raw little-endian blob:
 *   {"format"?: "...", "tensors": {NAME: {"dataType": "float32", "shape": [...],
 *                                         "byteOffset": N, "byteLength": N}}}
 * The blob starts with "WGWT" and a little-endian u32 version 1, or
 * directly with data; offsets count from the data start. Spans may sit
 * anywhere in the blob, unaligned, as long as they lie inside it. */
#include "archive_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
    const char *name;
    ba_dtype t;
} manifest_types[] = {
    {"float32", BA_F32}, {"float16", BA_F16}, {"int32", BA_I32}, {"uint32", BA_U32},
    {"int64", BA_I64},   {"uint64", BA_U64},  {"int8", BA_I8},   {"uint8", BA_U8},
    {"int4", BA_I4},     {"uint4", BA_U4},
};

/* The whole manifest, NUL-terminated, or NULL with err set. */
static char *slurp(const char *path, size_t *len, berth_error *err) {
    struct stat sb;
    int fd = berth_open_regular(path, "manifest", &sb, err);
    if (fd < 0) return NULL;
    if ((uint64_t)sb.st_size > BA_MAX_HEADER) {
        ba_fail(err, "%s: manifest is %lld bytes, expected at most %llu", path,
                (long long)sb.st_size, BA_MAX_HEADER);
        close(fd);
        return NULL;
    }
    char *text = malloc((size_t)sb.st_size + 1);
    if (!text) {
        ba_fail(err, "%s: out of memory reading the manifest", path);
        close(fd);
        return NULL;
    }
    if (ba_pread_full(fd, text, (size_t)sb.st_size, 0) < 0) {
        ba_fail(err, "%s: cannot read the manifest: %s", path,
                errno ? strerror(errno) : "unexpected end of file");
        free(text);
        close(fd);
        return NULL;
    }
    close(fd);
    text[sb.st_size] = 0;
    *len = (size_t)sb.st_size;
    return text;
}

static int blob_header(berth_archive *a, berth_error *err) {
    unsigned char head[8];
    a->data_start = 0;
    if (a->file_size < 8) return 1;
    if (ba_pread_full(a->fd, head, 8, 0) < 0) {
        ba_fail(err, "%s: cannot read the blob: %s", a->path,
                errno ? strerror(errno) : "unexpected end of file");
        return 0;
    }
    if (memcmp(head, "WGWT", 4)) return 1;
    uint32_t version = (uint32_t)head[4] | (uint32_t)head[5] << 8 | (uint32_t)head[6] << 16 |
                       (uint32_t)head[7] << 24;
    if (version != 1) {
        ba_fail(err, "%s: WGWT blob version %u is not supported (expected 1)", a->path, version);
        return 0;
    }
    a->data_start = 8;
    return 1;
}

static int uint_member(const char *mf, const char *name, const bj_value *v, const char *key,
                       uint64_t *out, berth_error *err) {
    const bj_value *m = bj_member(v, key);
    if (!m || m->type != BJ_NUMBER || !m->is_uint) {
        ba_fail(err, "%s: tensor '%s': %s is %s, expected a non-negative integer", mf, name, key,
                !m ? "missing" : m->type == BJ_NUMBER ? m->str : bj_type_name(m->type));
        return 0;
    }
    *out = m->u;
    return 1;
}

static int read_span(berth_archive *a, const char *mf, const bj_value *v, ba_entry *e,
                     berth_error *err) {
    const char *name = v->key;
    e->name = name;
    if (v->type != BJ_OBJECT) {
        ba_fail(err, "%s: tensor '%s': entry is %s, expected an object", mf, name,
                bj_type_name(v->type));
        return 0;
    }
    const bj_value *dt = bj_member(v, "dataType");
    if (!dt || dt->type != BJ_STRING) {
        ba_fail(err, "%s: tensor '%s': dataType is %s, expected a string", mf, name,
                dt ? bj_type_name(dt->type) : "missing");
        return 0;
    }
    e->dtype = BA_INVALID;
    for (size_t i = 0; i < sizeof manifest_types / sizeof manifest_types[0]; i++)
        if (!strcmp(dt->str, manifest_types[i].name)) e->dtype = manifest_types[i].t;
    if (e->dtype == BA_INVALID) {
        ba_fail(err, "%s: tensor '%s': unknown dataType '%s' (expected float32 float16 int32 "
                "uint32 int64 uint64 int8 uint8 int4 uint4)", mf, name, dt->str);
        return 0;
    }
    if (!ba_read_shape(mf, name, bj_member(v, "shape"), &e->rank, e->dims, err)) return 0;
    uint64_t off, len;
    if (!uint_member(mf, name, v, "byteOffset", &off, err) ||
        !uint_member(mf, name, v, "byteLength", &len, err))
        return 0;
    int ok;
    uint64_t need = ba_span_bytes(e->dtype, e->rank, e->dims, &ok);
    char shape[160];
    ba_format_shape(shape, sizeof shape, dt->str, e->rank, e->dims);
    if (!ok) {
        ba_fail(err, "%s: tensor '%s': %s has more bytes than 64 bits can count", mf, name, shape);
        return 0;
    }
    if (need != len) {
        ba_fail(err, "%s: tensor '%s': byteLength %llu but %s needs %llu", mf, name,
                (unsigned long long)len, shape, (unsigned long long)need);
        return 0;
    }
    uint64_t data_bytes = a->file_size - a->data_start;
    if (off > data_bytes || len > data_bytes - off) {
        ba_fail(err, "%s: tensor '%s': span byteOffset %llu + byteLength %llu runs past the %llu "
                "bytes of data in %s", mf, name, (unsigned long long)off, (unsigned long long)len,
                (unsigned long long)data_bytes, a->path);
        return 0;
    }
    e->offset = a->data_start + off;
    e->bytes = len;
    return 1;
}

int ba_read_manifest(berth_archive *a, const char *manifest_path, berth_error *err) {
    size_t len;
    char *text = slurp(manifest_path, &len, err);
    if (!text) return 0;
    int ok = 0;
    char why[256];
    const char *mf = manifest_path;
    bj_value *root = bj_parse(a->arena, text, len, &bj_default_limits, why, sizeof why);
    if (!root) {
        ba_fail(err, "%s: manifest is not valid JSON: %s", mf, why);
        goto done;
    }
    if (root->type != BJ_OBJECT) {
        ba_fail(err, "%s: manifest is %s, expected one JSON object", mf, bj_type_name(root->type));
        goto done;
    }
    const bj_value *format = bj_member(root, "format");
    if (format && format->type != BJ_STRING) {
        ba_fail(err, "%s: \"format\" is %s, expected a string", mf, bj_type_name(format->type));
        goto done;
    }
    const bj_value *tensors = bj_member(root, "tensors");
    if (!tensors || tensors->type != BJ_OBJECT) {
        ba_fail(err, "%s: \"tensors\" is %s, expected an object of spans", mf,
                tensors ? bj_type_name(tensors->type) : "missing");
        goto done;
    }
    if (!blob_header(a, err)) goto done;
    a->entries = berth_arena_array(a->arena, tensors->count ? tensors->count : 1, sizeof(ba_entry));
    if (!a->entries) {
        ba_fail(err, "%s: out of memory for %zu entries", mf, tensors->count);
        goto done;
    }
    for (const bj_value *t = tensors->first; t; t = t->next) {
        if (!read_span(a, mf, t, &a->entries[a->n], err)) goto done;
        a->n++;
    }
    ok = ba_finish_entries(a, mf, err);
done:
    free(text);
    return ok;
}
