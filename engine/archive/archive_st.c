/* The SafeTensors header: every rule is checked here, before any payload
 * byte is read, so a broken file is refused whole. */
#include "archive_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int ba_read_safetensors(berth_archive *a, berth_error *err);

static ba_dtype st_dtype(const char *s) {
    static const ba_dtype known[] = {BA_F64, BA_F32, BA_F16, BA_BF16, BA_I64, BA_I32, BA_I16,
                                     BA_I8,  BA_U64, BA_U32, BA_U16,  BA_U8,  BA_BOOL};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcmp(s, ba_dtype_name(known[i]))) return known[i];
    return BA_INVALID;
}

static int read_metadata(berth_archive *a, const bj_value *meta, berth_error *err) {
    if (meta->type != BJ_OBJECT) {
        ba_fail(err, "%s: __metadata__ is %s, expected an object of strings", a->path,
                bj_type_name(meta->type));
        return 0;
    }
    a->meta_keys = berth_arena_array(a->arena, meta->count + 1, sizeof(char *));
    a->meta_values = berth_arena_array(a->arena, meta->count + 1, sizeof(char *));
    if (!a->meta_keys || !a->meta_values) {
        ba_fail(err, "%s: out of memory reading __metadata__", a->path);
        return 0;
    }
    for (const bj_value *m = meta->first; m; m = m->next) {
        if (m->type != BJ_STRING) {
            ba_fail(err, "%s: __metadata__ '%s' is %s, expected a string", a->path, m->key,
                    bj_type_name(m->type));
            return 0;
        }
        for (uint32_t i = 0; i < a->n_meta; i++) {
            if (!strcmp(a->meta_keys[i], m->key)) {
                ba_fail(err, "%s: __metadata__ '%s' appears twice", a->path, m->key);
                return 0;
            }
        }
        a->meta_keys[a->n_meta] = m->key;
        a->meta_values[a->n_meta++] = m->str;
    }
    return 1;
}

/* One entry: {"dtype": ..., "shape": [...], "data_offsets": [begin, end]}. */
static int read_entry(berth_archive *a, const bj_value *v, uint64_t data_bytes, ba_entry *e,
                      berth_error *err) {
    const char *f = a->path, *name = v->key;
    e->name = name;
    if (v->type != BJ_OBJECT) {
        ba_fail(err, "%s: tensor '%s': entry is %s, expected an object", f, name,
                bj_type_name(v->type));
        return 0;
    }
    const bj_value *dt = bj_member(v, "dtype");
    if (!dt || dt->type != BJ_STRING) {
        ba_fail(err, "%s: tensor '%s': dtype is %s, expected a string", f, name,
                dt ? bj_type_name(dt->type) : "missing");
        return 0;
    }
    e->dtype = st_dtype(dt->str);
    if (e->dtype == BA_INVALID) {
        ba_fail(err, "%s: tensor '%s': unknown dtype '%s' (expected one of F64 F32 F16 BF16 I64 "
                "I32 I16 I8 U64 U32 U16 U8 BOOL)", f, name, dt->str);
        return 0;
    }
    if (!ba_read_shape(f, name, bj_member(v, "shape"), &e->rank, e->dims, err)) return 0;
    const bj_value *off = bj_member(v, "data_offsets");
    if (!off || off->type != BJ_ARRAY || off->count != 2 || off->first->type != BJ_NUMBER ||
        !off->first->is_uint || off->first->next->type != BJ_NUMBER || !off->first->next->is_uint) {
        ba_fail(err, "%s: tensor '%s': data_offsets must be [begin, end] of non-negative integers",
                f, name);
        return 0;
    }
    uint64_t begin = off->first->u, end = off->first->next->u;
    if (begin > end) {
        ba_fail(err, "%s: tensor '%s': data_offsets [%llu, %llu] end before they begin", f, name,
                (unsigned long long)begin, (unsigned long long)end);
        return 0;
    }
    if (end > data_bytes) {
        ba_fail(err, "%s: tensor '%s': data_offsets [%llu, %llu] run past the %llu bytes of data",
                f, name, (unsigned long long)begin, (unsigned long long)end,
                (unsigned long long)data_bytes);
        return 0;
    }
    int ok;
    uint64_t need = ba_span_bytes(e->dtype, e->rank, e->dims, &ok);
    char shape[160];
    ba_format_shape(shape, sizeof shape, dt->str, e->rank, e->dims);
    if (!ok) {
        ba_fail(err, "%s: tensor '%s': %s has more bytes than 64 bits can count", f, name, shape);
        return 0;
    }
    if (need != end - begin) {
        ba_fail(err, "%s: tensor '%s': data_offsets [%llu, %llu] span %llu bytes but %s needs %llu",
                f, name, (unsigned long long)begin, (unsigned long long)end,
                (unsigned long long)(end - begin), shape, (unsigned long long)need);
        return 0;
    }
    e->offset = a->data_start + begin;
    e->bytes = need;
    return 1;
}

/* Sorted by offset, the entries must cover the data exactly once. */
static int check_tiling(const berth_archive *a, uint64_t data_bytes, berth_error *err) {
    uint64_t at = 0;
    const char *prev = NULL;
    for (uint32_t i = 0; i < a->n; i++) {
        const ba_entry *e = &a->entries[i];
        uint64_t begin = e->offset - a->data_start;
        if (begin > at) {
            if (prev)
                ba_fail(err, "%s: tensor '%s': starts at data byte %llu but '%s' ends at %llu: a "
                        "gap of %llu bytes", a->path, e->name, (unsigned long long)begin, prev,
                        (unsigned long long)at, (unsigned long long)(begin - at));
            else
                ba_fail(err, "%s: tensor '%s': the first tensor starts at data byte %llu, not 0: "
                        "a gap", a->path, e->name, (unsigned long long)begin);
            return 0;
        }
        if (begin < at) {
            ba_fail(err, "%s: tensor '%s': starts at data byte %llu, inside '%s' which ends at "
                    "%llu: an overlap", a->path, e->name, (unsigned long long)begin, prev,
                    (unsigned long long)at);
            return 0;
        }
        at = begin + e->bytes;
        prev = e->name;
    }
    if (at != data_bytes) {
        ba_fail(err, "%s: tensors end at data byte %llu but the file holds %llu bytes of data "
                "after the header", a->path, (unsigned long long)at,
                (unsigned long long)data_bytes);
        return 0;
    }
    return 1;
}

int ba_read_safetensors(berth_archive *a, berth_error *err) {
    const char *f = a->path;
    if (a->file_size < 8) {
        ba_fail(err, "%s: file is %llu bytes, too short for the 8-byte header length", f,
                (unsigned long long)a->file_size);
        return 0;
    }
    unsigned char len8[8];
    if (ba_pread_full(a->fd, len8, 8, 0) < 0) {
        ba_fail(err, "%s: cannot read the header length: %s", f,
                errno ? strerror(errno) : "unexpected end of file");
        return 0;
    }
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | len8[i];
    if (hlen > BA_MAX_HEADER) {
        ba_fail(err, "%s: header length %llu is over the limit of %llu bytes", f,
                (unsigned long long)hlen, BA_MAX_HEADER);
        return 0;
    }
    if (hlen > a->file_size - 8) {
        ba_fail(err, "%s: header length %llu runs past the end of the file (%llu bytes)", f,
                (unsigned long long)hlen, (unsigned long long)a->file_size);
        return 0;
    }
    a->data_start = 8 + hlen;
    uint64_t data_bytes = a->file_size - a->data_start;
    char *text = malloc(hlen ? (size_t)hlen : 1);
    if (!text) {
        ba_fail(err, "%s: out of memory for a header of %llu bytes", f, (unsigned long long)hlen);
        return 0;
    }
    int ok = 0;
    if (ba_pread_full(a->fd, text, (size_t)hlen, 8) < 0) {
        ba_fail(err, "%s: cannot read the header: %s", f,
                errno ? strerror(errno) : "unexpected end of file");
        goto done;
    }
    size_t bad = bj_utf8_invalid_at(text, (size_t)hlen);
    if (bad < hlen) {
        ba_fail(err, "%s: header is not valid UTF-8 at header byte %zu", f, bad);
        goto done;
    }
    char why[256];
    bj_value *root = bj_parse(a->arena, text, (size_t)hlen, &bj_default_limits, why, sizeof why);
    if (!root) {
        ba_fail(err, "%s: header is not valid JSON: %s", f, why);
        goto done;
    }
    if (root->type != BJ_OBJECT) {
        ba_fail(err, "%s: header is %s, expected one JSON object", f, bj_type_name(root->type));
        goto done;
    }
    a->entries = berth_arena_array(a->arena, root->count ? root->count : 1, sizeof(ba_entry));
    if (!a->entries) {
        ba_fail(err, "%s: out of memory for %zu entries", f, root->count);
        goto done;
    }
    int seen_meta = 0;
    for (const bj_value *m = root->first; m; m = m->next) {
        if (!strcmp(m->key, "__metadata__")) {
            if (seen_meta++) {
                ba_fail(err, "%s: __metadata__ appears twice", f);
                goto done;
            }
            if (!read_metadata(a, m, err)) goto done;
            continue;
        }
        if (!read_entry(a, m, data_bytes, &a->entries[a->n], err)) goto done;
        a->n++;
    }
    ok = ba_finish_entries(a, f, err) && check_tiling(a, data_bytes, err);
done:
    free(text);
    return ok;
}
