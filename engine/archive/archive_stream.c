/* Streaming weights into a backend, one tensor at a time, in file order.
 *
 * Every request is matched against its entry before upload_begin, so a
 * graph that disagrees with its archive uploads nothing. Then each tensor
 * costs one positioned read into memory the backend offered or into a
 * scratch buffer, a conversion in place, and upload_tensor. The payload is
 * never held twice: peak host memory is what the backend keeps plus the
 * largest tensor. */
#include "archive_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend_call.h"
#include "dtype.h"

#define PACKED_KEY "rustnn.webnn.packed4"

typedef struct item {
    uint32_t req;   /* index into the requests */
    uint32_t entry; /* index into the archive, file order */
    int widen;      /* BF16 storage, f32 declared */
    uint64_t bytes; /* after conversion */
} item;

static void shape_of_request(char *buf, size_t cap, const berth_weight_request *r) {
    ba_format_shape(buf, cap, berth_dtype_name(r->dtype), r->rank, r->dims);
}

static int same_dims(const ba_entry *e, const berth_weight_request *r) {
    if (e->rank != r->rank) return 0;
    for (uint32_t i = 0; i < r->rank; i++)
        if (e->dims[i] != r->dims[i]) return 0;
    return 1;
}

/* The storage dtype that feeds a declared dtype one to one. */
static int direct_match(ba_dtype s, berth_dtype d) {
    switch (d) {
    case BERTH_DTYPE_F32: return s == BA_F32;
    case BERTH_DTYPE_F16: return s == BA_F16;
    case BERTH_DTYPE_I32: return s == BA_I32;
    case BERTH_DTYPE_U32: return s == BA_U32;
    case BERTH_DTYPE_I64: return s == BA_I64;
    case BERTH_DTYPE_U64: return s == BA_U64;
    case BERTH_DTYPE_I8: return s == BA_I8;
    case BERTH_DTYPE_U8: return s == BA_U8 || s == BA_BOOL;
    case BERTH_DTYPE_I4: return s == BA_I4;
    case BERTH_DTYPE_U4: return s == BA_U4;
    default: return 0;
    }
}

/* Decides how entry e feeds request r; 0 with err naming both sides. */
static int match(const berth_archive *a, const ba_entry *e, const berth_weight_request *r,
                 item *it, berth_error *err) {
    char have[160], want[160];
    ba_format_shape(have, sizeof have, ba_dtype_name(e->dtype), e->rank, e->dims);
    shape_of_request(want, sizeof want, r);
    const char *f = a->path, *cname = r->value ? r->value : r->ref;
    if (r->rank > BERTH_MAX_RANK) {
        ba_fail(err, "%s: tensor '%s': const '%s' declares rank %u, more than %d", f, e->name,
                cname, r->rank, BERTH_MAX_RANK);
        return 0;
    }
    uint64_t count = 1;
    for (uint32_t i = 0; i < r->rank; i++) {
        uint64_t d = (uint64_t)r->dims[i];
        if (r->dims[i] < 0 || (d && count > UINT64_MAX / d)) {
            ba_fail(err, "%s: tensor '%s': const '%s' declares %s, not a valid shape", f, e->name,
                    cname, want);
            return 0;
        }
        count *= d;
    }
    int packed = r->dtype == BERTH_DTYPE_I4 || r->dtype == BERTH_DTYPE_U4;
    it->widen = 0;
    it->bytes = e->bytes;
    if (packed && e->dtype != BA_I4 && e->dtype != BA_U4) {
        /* 4-bit values travel in SafeTensors as bytes; only the marker
         * says the bytes are nibbles rather than a u8 tensor. */
        const char *mark = berth_archive_meta(a, PACKED_KEY);
        if (!mark) {
            ba_fail(err, "%s: tensor '%s': const '%s' declares %s but the archive lacks the packed "
                    "marker __metadata__ " PACKED_KEY " = \"1\"", f, e->name, cname, want);
            return 0;
        }
        if (strcmp(mark, "1")) {
            ba_fail(err, "%s: tensor '%s': packed marker " PACKED_KEY " = \"%s\" is unsupported "
                    "(expected \"1\")", f, e->name, mark);
            return 0;
        }
        uint64_t need = count / 2 + (count & 1);
        if (e->dtype != BA_U8 || e->rank != 1 || (uint64_t)e->dims[0] != need) {
            ba_fail(err, "%s: tensor '%s' is %s in the archive but const '%s' declares %s, whose "
                    "packed storage must be U8[%llu]", f, e->name, have, cname, want,
                    (unsigned long long)need);
            return 0;
        }
        return 1;
    }
    if (r->dtype == BERTH_DTYPE_F32 && e->dtype == BA_BF16) {
        it->widen = 1;
        it->bytes = e->bytes * 2;
    } else if (!direct_match(e->dtype, r->dtype)) {
        ba_fail(err, "%s: tensor '%s' is %s in the archive but const '%s' declares %s: dtype "
                "mismatch", f, e->name, have, cname, want);
        return 0;
    }
    if (!same_dims(e, r)) {
        ba_fail(err, "%s: tensor '%s' is %s in the archive but const '%s' declares %s: shape "
                "mismatch", f, e->name, have, cname, want);
        return 0;
    }
    return 1;
}

static int by_file_order(const void *x, const void *y) {
    const item *a = x, *b = y;
    if (a->entry != b->entry) return a->entry < b->entry ? -1 : 1;
    return a->req < b->req ? -1 : a->req > b->req;
}

/* Matches every request and sorts them into file order. */
static item *plan_items(berth_archive *a, const berth_weight_request *req, uint32_t n,
                        berth_error *err) {
    item *items = calloc(n ? n : 1, sizeof *items);
    unsigned char *seen = calloc(n ? n : 1, 1);
    if (!items || !seen) {
        free(items);
        free(seen);
        return ba_fail(err, "%s: out of memory planning %u uploads", a->path, n);
    }
    for (uint32_t i = 0; i < n; i++) {
        const berth_weight_request *r = &req[i];
        const char *cname = r->value ? r->value : r->ref;
        if (r->id >= n || seen[r->id]++) {
            ba_fail(err, "%s: const '%s': weight id %u is %s (ids must be 0..%u, each once)",
                    a->path, cname, r->id, r->id >= n ? "out of range" : "repeated", n - 1);
            goto fail;
        }
        berth_error why;
        int32_t idx = berth_archive_lookup(a, r->ref, &why);
        if (idx < 0) {
            ba_fail(err, "%s (wanted by const '%s')", why.msg, cname);
            goto fail;
        }
        items[i].req = i;
        items[i].entry = (uint32_t)idx;
        if (!match(a, &a->entries[idx], r, &items[i], err)) goto fail;
        if (items[i].bytes > SIZE_MAX) {
            ba_fail(err, "%s: tensor '%s': %llu bytes do not fit in memory", a->path,
                    a->entries[idx].name, (unsigned long long)items[i].bytes);
            goto fail;
        }
    }
    free(seen);
    qsort(items, n, sizeof *items, by_file_order);
    return items;
fail:
    free(seen);
    free(items);
    return NULL;
}

/* BF16 -> f32 in place: the raw halves sit in the upper half of buf, and
 * element i is written to [4i, 4i+4), which never reaches raw element i+1
 * at 2n+2i+2 before it is read. */
static void widen_bf16(unsigned char *buf, size_t n) {
    const unsigned char *raw = buf + 2 * n;
    for (size_t i = 0; i < n; i++) {
        unsigned char lo = raw[2 * i], hi = raw[2 * i + 1];
        buf[4 * i] = 0;
        buf[4 * i + 1] = 0;
        buf[4 * i + 2] = lo;
        buf[4 * i + 3] = hi;
    }
}

typedef struct streamer {
    berth_archive *a;
    const berth_backend *be;
    const berth_host_services *host;
    berth_weights *w;
    void *scratch;
    size_t scratch_cap;
    size_t largest;
    int backend_keeps; /* the backend has taken a GIVEN buffer before */
    uint64_t peak;
} streamer;

/* A scratch of at least `need` bytes. Until the backend shows it keeps
 * GIVEN buffers, one scratch sized for the largest tensor serves all;
 * after that each new scratch is sized for its tensor, so the backend is
 * not handed a large buffer to keep for a small tensor. */
static void *scratch_for(streamer *s, size_t need) {
    if (s->scratch && s->scratch_cap >= need) return s->scratch;
    if (s->scratch) s->host->free(s->host->ctx, s->scratch);
    size_t size = s->backend_keeps ? need : s->largest;
    if (size < need) size = need;
    s->scratch = s->host->alloc(s->host->ctx, size ? size : 1, 64);
    s->scratch_cap = s->scratch ? size : 0;
    if (s->scratch && size > s->peak) s->peak = size;
    return s->scratch;
}

static berth_status upload_one(streamer *s, const item *it, const berth_weight_request *r,
                               berth_error *err) {
    const ba_entry *e = &s->a->entries[it->entry];
    const char *f = s->a->path;
    berth_weight_desc d = {0};
    d.name = r->ref;
    d.id = r->id;
    d.dtype = r->dtype;
    d.rank = r->rank;
    memcpy(d.dims, r->dims, sizeof d.dims);
    d.bytes = (size_t)it->bytes;

    berth_error why;
    void *buf = NULL;
    uint32_t flags = BERTH_UPLOAD_GIVEN;
    if (s->be->upload_dest) {
        berth_backend_msg_reset(&why);
        berth_status st = s->be->upload_dest(s->w, &d, &buf, &why);
        st = berth_backend_result(st, s->be->name, "upload_dest", &why, &why);
        if (st != BERTH_OK) {
            ba_fail(err, "%s: tensor '%s': %s", f, e->name, why.msg);
            return st;
        }
        if (buf) flags = BERTH_UPLOAD_IN_PLACE;
    }
    if (!buf && !(buf = scratch_for(s, d.bytes))) {
        ba_fail(err, "%s: tensor '%s': out of memory for a %zu-byte scratch", f, e->name, d.bytes);
        return BERTH_ERR_NOMEM;
    }
    unsigned char *into = buf;
    if (it->widen) into += d.bytes - e->bytes; /* the upper half; see widen_bf16 */
    if (ba_pread_full(s->a->fd, into, (size_t)e->bytes, e->offset) < 0) {
        ba_fail(err, "%s: tensor '%s': reading %llu bytes at offset %llu failed: %s", f, e->name,
                (unsigned long long)e->bytes, (unsigned long long)e->offset,
                errno ? strerror(errno) : "the file ended early");
        return BERTH_ERR_IO;
    }
    if (it->widen) widen_bf16(buf, (size_t)(e->bytes / 2));
    int taken = 0;
    berth_backend_msg_reset(&why);
    berth_status st = s->be->upload_tensor(s->w, &d, buf, flags, &taken, &why);
    if (flags == BERTH_UPLOAD_GIVEN && taken) {
        s->scratch = NULL;
        s->scratch_cap = 0;
        s->backend_keeps = 1;
    }
    st = berth_backend_result(st, s->be->name, "upload_tensor", &why, &why);
    if (st != BERTH_OK) {
        ba_fail(err, "%s: tensor '%s': %s", f, e->name, why.msg);
        return st;
    }
    return BERTH_OK;
}

berth_status berth_archive_stream(berth_archive *a, const berth_weight_request *req, uint32_t n,
                                  const berth_backend *be, berth_device *dev,
                                  const berth_host_services *host, berth_weights **out,
                                  uint64_t *peak_scratch, berth_error *err) {
    if (out) *out = NULL;
    if (peak_scratch) *peak_scratch = 0;
    if (!a || !be || !host || !out || (n && !req) || !be->upload_begin || !be->upload_tensor ||
        !be->upload_end || !be->free_weights || !host->alloc || !host->free) {
        ba_fail(err, "%s: stream: missing archive, backend verb, host service or output",
                a ? a->path : "archive");
        return BERTH_ERR_INVALID;
    }
    item *items = plan_items(a, req, n, err);
    if (!items) return BERTH_ERR_INVALID;
    berth_upload_info info = {.struct_size = sizeof info, .n_tensors = n,
                             .weight_desc_size = (uint32_t)BERTH_WEIGHT_DESC_V1_SIZE};
    for (uint32_t i = 0; i < n; i++) {
        info.total_bytes += items[i].bytes;
        if (items[i].bytes > info.largest_bytes) info.largest_bytes = items[i].bytes;
    }
    streamer s = {a, be, host, NULL, NULL, 0, (size_t)info.largest_bytes, 0, 0};
    berth_error why;
    berth_backend_msg_reset(&why);
    berth_status st = be->upload_begin(dev, &info, &s.w, &why);
    st = berth_backend_result(st, be->name, "upload_begin", &why, &why);
    if (st != BERTH_OK) {
        ba_fail(err, "%s: %s", a->path, why.msg);
    } else {
        for (uint32_t i = 0; i < n && st == BERTH_OK; i++)
            st = upload_one(&s, &items[i], &req[items[i].req], err);
        /* Bytes read from a file someone rewrote mid-load would mix two
         * models without any error: refuse what was read instead. */
        if (st == BERTH_OK && !ba_check_unchanged(a, err)) st = BERTH_ERR_IO;
        if (st == BERTH_OK) {
            berth_backend_msg_reset(&why);
            st = be->upload_end(s.w, &why);
            st = berth_backend_result(st, be->name, "upload_end", &why, &why);
            if (st != BERTH_OK) ba_fail(err, "%s: %s", a->path, why.msg);
        }
    }
    if (s.scratch) host->free(host->ctx, s.scratch);
    free(items);
    if (peak_scratch) *peak_scratch = s.peak;
    if (st != BERTH_OK) {
        if (s.w) be->free_weights(s.w);
        return st;
    }
    *out = s.w;
    return BERTH_OK;
}
