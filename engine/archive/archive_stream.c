/* Streaming weights into a backend, one tensor at a time, in file order.
 *
 * Every request is matched against its entry before upload_begin, so a
 * graph that disagrees with its archive uploads nothing. Then each tensor
 * costs one positioned read into memory the backend offered or into a
 * scratch buffer, a conversion in place, and upload_tensor. The payload is
 * never held twice: peak host memory is what the backend keeps plus the
 * largest tensor.
 *
 * A graph split across backends streams the file once into all of them:
 * a tensor several backends want is read once and copied to the others,
 * so it is held at most twice (the read and one copy). One backend is the
 * same walk with one target, and never needs the copy. */
#include "archive_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend_call.h"
#include "dtype.h"
#include "util.h"

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
        /* Offsets and sizes are 64-bit everywhere, but one tensor is
         * held in memory whole: on a 32-bit build it must fit a size_t,
         * and every (size_t) cast of a tensor's bytes below relies on
         * this check. */
        if (items[i].bytes > ba_tensor_bytes_max) {
            ba_fail(err, "%s: tensor '%s': %llu bytes do not fit this %u-bit build's address "
                    "space (a tensor is loaded whole; at most %llu bytes)", a->path,
                    a->entries[idx].name, (unsigned long long)items[i].bytes,
                    (unsigned)(sizeof(size_t) * 8), (unsigned long long)ba_tensor_bytes_max);
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

/* Host memory the engine holds a tensor in: the scratch the file is read
 * into, or the second buffer a shared tensor is copied into. */
typedef struct hostbuf {
    void *p;
    size_t cap;
    const berth_host_services *host; /* the services p came from */
    int kept; /* a backend has taken one of these before */
} hostbuf;

/* One target while streaming: its plan in file order and how far along. */
typedef struct target_run {
    berth_stream_target *t;
    item *items;
    uint32_t next; /* items[next] is its next tensor */
    berth_upload_info info;
} target_run;

typedef struct streamer {
    berth_archive *a;
    target_run *run;
    uint32_t n_run;
    uint32_t *round; /* targets taking the current tensor, the one read for first */
    hostbuf scratch, copy;
    size_t largest;        /* any target's largest tensor: sizes the scratch */
    size_t largest_shared; /* largest tensor two targets share: sizes the copy */
    uint64_t peak;         /* most bytes held in scratch and copy at once */
} streamer;

static int same_host(const berth_host_services *x, const berth_host_services *y) {
    return x == y || (x->alloc == y->alloc && x->free == y->free && x->ctx == y->ctx);
}

static void hostbuf_drop(hostbuf *b) {
    if (b->p) b->host->free(b->host->ctx, b->p);
    b->p = NULL;
    b->cap = 0;
}

/* A backend took the buffer: it is the backend's to free now. */
static void hostbuf_taken(hostbuf *b) {
    b->p = NULL;
    b->cap = 0;
    b->kept = 1;
}

/* A buffer of at least `need` bytes from `host`, the services of the
 * target it may be given to (that backend frees it with its own host).
 * Until a backend shows it keeps GIVEN buffers, one buffer sized for
 * `usual` serves all; after that each new one is sized for its tensor, so
 * a backend is not handed a large buffer to keep for a small tensor. */
static void *hostbuf_get(streamer *s, hostbuf *b, const berth_host_services *host, size_t need,
                         size_t usual) {
    if (b->p && b->cap >= need && same_host(b->host, host)) return b->p;
    hostbuf_drop(b);
    size_t size = b->kept ? need : usual;
    if (size < need) size = need;
    b->p = host->alloc(host->ctx, size ? size : 1, 64);
    b->cap = b->p ? size : 0;
    b->host = host;
    uint64_t held = (uint64_t)s->scratch.cap + s->copy.cap;
    if (held > s->peak) s->peak = held;
    return b->p;
}

/* Gathers into s->round the targets whose next tensor comes first in the
 * file, each once, and moves them past it: they share one read. A target
 * wanting that tensor again under another id, or converted otherwise
 * than the first target's, waits for the next round and its own read.
 * Returns how many targets, 0 when every target is done. */
static uint32_t next_round(streamer *s) {
    const item *first = NULL;
    for (uint32_t k = 0; k < s->n_run; k++) {
        const target_run *r = &s->run[k];
        if (r->next < r->t->n && (!first || r->items[r->next].entry < first->entry))
            first = &r->items[r->next];
    }
    uint32_t m = 0;
    for (uint32_t k = 0; first && k < s->n_run; k++) {
        target_run *r = &s->run[k];
        const item *it = r->next < r->t->n ? &r->items[r->next] : NULL;
        if (it && it->entry == first->entry && it->widen == first->widen &&
            it->bytes == first->bytes) {
            s->round[m++] = k;
            r->next++;
        }
    }
    return m;
}

/* The item target r takes this round (next_round moved it past). */
static const item *current(const target_run *r) { return &r->items[r->next - 1]; }

/* The tensor as target r's backend knows it: its own id, and the dtype
 * and shape its graph declares. */
static void describe(berth_weight_desc *d, const target_run *r) {
    const item *it = current(r);
    const berth_weight_request *q = &r->t->req[it->req];
    memset(d, 0, sizeof *d);
    d->name = q->ref;
    d->id = q->id;
    d->dtype = q->dtype;
    d->rank = q->rank;
    memcpy(d->dims, q->dims, sizeof d->dims);
    d->bytes = (size_t)it->bytes;
}

/* The memory target r's backend offers for tensor d, or NULL in *dest. */
static berth_status ask_dest(streamer *s, const target_run *r, const berth_weight_desc *d,
                             const ba_entry *e, void **dest, berth_error *err) {
    const berth_backend *be = r->t->be;
    *dest = NULL;
    if (!be->upload_dest) return BERTH_OK;
    berth_error why;
    berth_backend_msg_reset(&why);
    berth_status st = be->upload_dest(r->t->w, d, dest, &why);
    st = berth_backend_result(st, be->name, "upload_dest", &why, &why);
    if (st != BERTH_OK) {
        *dest = NULL;
        ba_fail(err, "%s: tensor '%s': %s", s->a->path, e->name, why.msg);
    }
    return st;
}

/* upload_tensor to target r; a GIVEN buffer the backend takes leaves b. */
static berth_status hand_over(streamer *s, const target_run *r, const berth_weight_desc *d,
                              const ba_entry *e, void *data, uint32_t flags, hostbuf *b,
                              berth_error *err) {
    const berth_backend *be = r->t->be;
    berth_error why;
    int taken = 0;
    berth_backend_msg_reset(&why);
    berth_status st = be->upload_tensor(r->t->w, d, data, flags, &taken, &why);
    if (flags == BERTH_UPLOAD_GIVEN && taken) hostbuf_taken(b);
    st = berth_backend_result(st, be->name, "upload_tensor", &why, &why);
    if (st != BERTH_OK) ba_fail(err, "%s: tensor '%s': %s", s->a->path, e->name, why.msg);
    return st;
}

/* Another target's copy of the tensor already read into src. */
static berth_status copy_to(streamer *s, const target_run *r, const void *src, const ba_entry *e,
                            berth_error *err) {
    berth_weight_desc d;
    describe(&d, r);
    void *dest;
    berth_status st = ask_dest(s, r, &d, e, &dest, err);
    if (st != BERTH_OK) return st;
    uint32_t flags = BERTH_UPLOAD_IN_PLACE;
    if (!dest) {
        flags = BERTH_UPLOAD_GIVEN;
        dest = hostbuf_get(s, &s->copy, r->t->host, d.bytes, s->largest_shared);
        if (!dest) {
            ba_fail(err, "%s: tensor '%s': out of memory for a %zu-byte copy for backend '%s'",
                    s->a->path, e->name, d.bytes, r->t->be->name);
            return BERTH_ERR_NOMEM;
        }
    }
    memcpy(dest, src, d.bytes);
    return hand_over(s, r, &d, e, dest, flags, &s->copy, err);
}

/* One read of the round's tensor, into the memory its first target
 * offers or the scratch; every other target gets its copy before the
 * first target's upload_tensor, which may convert the bytes in place or
 * keep the scratch. */
static berth_status stream_round(streamer *s, uint32_t m, berth_error *err) {
    const target_run *own = &s->run[s->round[0]];
    const item *it = current(own);
    const ba_entry *e = &s->a->entries[it->entry];
    const char *f = s->a->path;
    berth_weight_desc d;
    describe(&d, own);
    void *buf;
    berth_status st = ask_dest(s, own, &d, e, &buf, err);
    if (st != BERTH_OK) return st;
    uint32_t flags = buf ? BERTH_UPLOAD_IN_PLACE : BERTH_UPLOAD_GIVEN;
    if (!buf && !(buf = hostbuf_get(s, &s->scratch, own->t->host, d.bytes, s->largest))) {
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
    s->a->digest = berth_digest(s->a->digest ^ e->offset, into, (size_t)e->bytes);
    if (it->widen) widen_bf16(buf, (size_t)(e->bytes / 2));
    for (uint32_t j = 1; j < m && st == BERTH_OK; j++)
        st = copy_to(s, &s->run[s->round[j]], buf, e, err);
    if (st != BERTH_OK) return st;
    return hand_over(s, own, &d, e, buf, flags, &s->scratch, err);
}

/* With several targets, says which one a failure belongs to; with one,
 * the message stays as berth_archive_stream has always written it. */
static void name_target(berth_error *err, const streamer *s, uint32_t k) {
    if (!err || s->n_run < 2) return;
    char msg[sizeof err->msg];
    memcpy(msg, err->msg, sizeof msg);
    msg[sizeof msg - 1] = 0;
    const berth_backend *be = s->run[k].t->be;
    ba_fail(err, "%s (streaming into backend '%s')", msg, be && be->name ? be->name : "?");
}

static int target_ok(const berth_stream_target *t) {
    const berth_backend *be = t->be;
    const berth_host_services *host = t->host;
    return be && host && (!t->n || t->req) && be->upload_begin && be->upload_tensor &&
           be->upload_end && be->free_weights && host->alloc && host->free;
}

static berth_status missing(berth_archive *a, berth_error *err) {
    ba_fail(err, "%s: stream: missing archive, backend verb, host service or output",
            a ? a->path : "archive");
    return BERTH_ERR_INVALID;
}

/* Matches every target's requests, then announces each target's own
 * share to its backend: a mismatch anywhere uploads nothing anywhere. */
static berth_status begin_all(streamer *s, berth_error *err) {
    berth_archive *a = s->a;
    for (uint32_t k = 0; k < s->n_run; k++) {
        target_run *r = &s->run[k];
        r->items = plan_items(a, r->t->req, r->t->n, err);
        if (!r->items) {
            name_target(err, s, k);
            return BERTH_ERR_INVALID;
        }
        r->info = (berth_upload_info){.struct_size = sizeof r->info, .n_tensors = r->t->n,
                                      .weight_desc_size = (uint32_t)BERTH_WEIGHT_DESC_V1_SIZE};
        for (uint32_t i = 0; i < r->t->n; i++) {
            r->info.total_bytes += r->items[i].bytes;
            if (r->items[i].bytes > r->info.largest_bytes) r->info.largest_bytes = r->items[i].bytes;
        }
        if (r->info.largest_bytes > s->largest) s->largest = (size_t)r->info.largest_bytes;
    }
    /* A dry walk sizes the copy buffer for the shared tensors alone. */
    for (uint32_t m; (m = next_round(s));) {
        size_t bytes = (size_t)current(&s->run[s->round[0]])->bytes;
        if (m > 1 && bytes > s->largest_shared) s->largest_shared = bytes;
    }
    for (uint32_t k = 0; k < s->n_run; k++) s->run[k].next = 0;
    for (uint32_t k = 0; k < s->n_run; k++) {
        berth_stream_target *t = s->run[k].t;
        berth_error why;
        berth_backend_msg_reset(&why);
        berth_status st = t->be->upload_begin(t->dev, &s->run[k].info, &t->w, &why);
        st = berth_backend_result(st, t->be->name, "upload_begin", &why, &why);
        if (st != BERTH_OK) {
            ba_fail(err, "%s: %s", a->path, why.msg);
            return st;
        }
    }
    return BERTH_OK;
}

berth_status berth_archive_stream_to(berth_archive *a, berth_stream_target *t, uint32_t n_targets,
                                     uint64_t *peak_scratch, berth_error *err) {
    if (peak_scratch) *peak_scratch = 0;
    for (uint32_t k = 0; t && k < n_targets; k++) t[k].w = NULL;
    if (!a || (n_targets && !t)) return missing(a, err);
    for (uint32_t k = 0; k < n_targets; k++) {
        if (!target_ok(&t[k])) return missing(a, err);
        for (uint32_t j = 0; j < k; j++)
            if (t[k].dev && t[k].dev == t[j].dev) {
                ba_fail(err, "%s: stream: backends '%s' and '%s' share one device; each target "
                        "needs its own", a->path, t[j].be->name, t[k].be->name);
                return BERTH_ERR_INVALID;
            }
    }
    streamer s = {.a = a, .n_run = n_targets};
    s.run = calloc(n_targets ? n_targets : 1, sizeof *s.run);
    s.round = calloc(n_targets ? n_targets : 1, sizeof *s.round);
    if (!s.run || !s.round) {
        free(s.run);
        free(s.round);
        ba_fail(err, "%s: out of memory planning uploads for %u backends", a->path, n_targets);
        return BERTH_ERR_NOMEM;
    }
    for (uint32_t k = 0; k < n_targets; k++) s.run[k].t = &t[k];

    a->digest = 0;
    berth_status st = begin_all(&s, err);
    for (uint32_t m; st == BERTH_OK && (m = next_round(&s));) st = stream_round(&s, m, err);
    /* Bytes read from a file someone rewrote mid-load would mix two
     * models without any error: refuse what was read instead. */
    if (st == BERTH_OK && !ba_check_unchanged(a, err)) st = BERTH_ERR_IO;
    for (uint32_t k = 0; k < n_targets && st == BERTH_OK; k++) {
        berth_error why;
        berth_backend_msg_reset(&why);
        st = t[k].be->upload_end(t[k].w, &why);
        st = berth_backend_result(st, t[k].be->name, "upload_end", &why, &why);
        if (st != BERTH_OK) ba_fail(err, "%s: %s", a->path, why.msg);
    }

    hostbuf_drop(&s.scratch);
    hostbuf_drop(&s.copy);
    for (uint32_t k = 0; k < n_targets; k++) free(s.run[k].items);
    free(s.run);
    free(s.round);
    if (peak_scratch) *peak_scratch = s.peak;
    if (st != BERTH_OK)
        for (uint32_t k = 0; k < n_targets; k++) {
            if (t[k].w) t[k].be->free_weights(t[k].w);
            t[k].w = NULL;
        }
    return st;
}

berth_status berth_archive_stream(berth_archive *a, const berth_weight_request *req, uint32_t n,
                                  const berth_backend *be, berth_device *dev,
                                  const berth_host_services *host, berth_weights **out,
                                  uint64_t *peak_scratch, berth_error *err) {
    if (out) *out = NULL;
    if (!out) {
        if (peak_scratch) *peak_scratch = 0;
        return missing(a, err);
    }
    berth_stream_target t = {be, dev, host, req, n, NULL};
    berth_status st = berth_archive_stream_to(a, &t, 1, peak_scratch, err);
    *out = t.w;
    return st;
}

uint64_t berth_archive_digest(const berth_archive *a) { return a ? a->digest : 0; }
