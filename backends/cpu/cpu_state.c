/* Prepared weights (ABI 1.4): what the op files pack at plan time, done
 * once at load by prepare_weights, and kept between processes through
 * save_state and load_state. The saved form is this build's own: the
 * kernel set's name and every panel's size are checked on the way back,
 * so a file from another machine or build is refused whole, never read
 * into a product. */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

#define STATE_MAGIC "berthcpu-weights-1"

void cpu_weights_account(const berth_weights *w, berth_prepare_info *info) {
    uint32_t n = 0;
    uint64_t prepared = 0, released = 0;
    for (uint32_t id = 0; id < w->n; id++) {
        uint64_t bytes = 0;
        for (int tb = 0; w->packed && tb < 2; tb++) {
            size_t slot = 2 * (size_t)id + (size_t)tb;
            if (w->packed[slot]) bytes += cpu_panel_bytes(w, w->pack_k[slot], w->pack_n[slot]);
        }
        if (w->q8 && w->q8[id].data) bytes += cpu_gemm_q8_packed_bytes(w->q8[id].k, w->q8[id].n, w->q8[id].rows);
        if (!bytes) continue;
        n++;
        prepared += bytes;
        if (!w->t[id].data) released += w->t[id].bytes;
    }
#define FITS(field) (info->struct_size >= offsetof(berth_prepare_info, field) + sizeof info->field)
    if (FITS(n_prepared)) info->n_prepared = n;
    if (FITS(bytes_prepared)) info->bytes_prepared = prepared;
    if (FITS(bytes_released)) info->bytes_released = released;
#undef FITS
}

/* ---- the saved form ----
 * magic, kernel set name (32 bytes), weight count; per weight its
 * uploaded size and which packed forms follow (bit tb: a float panel,
 * bit 2: the int8 tile's), each with its sizes and then its bytes. */

typedef struct writer {
    uint8_t *buf; /* NULL: only count */
    size_t at;
} writer;

static void put(writer *o, const void *p, size_t n) {
    if (o->buf && n) memcpy(o->buf + o->at, p, n);
    o->at += n;
}

static void put_u64(writer *o, uint64_t v) { put(o, &v, sizeof v); }

static void put_weights(const berth_weights *w, writer *o) {
    char isa[32] = {0};
    strncpy(isa, w->dev->gemm->name, sizeof isa - 1);
    put(o, STATE_MAGIC, sizeof STATE_MAGIC);
    put(o, isa, sizeof isa);
    put_u64(o, w->n);
    for (uint32_t id = 0; id < w->n; id++) {
        uint64_t forms = 0;
        for (int tb = 0; w->packed && tb < 2; tb++)
            if (w->packed[2 * (size_t)id + (size_t)tb]) forms |= 1u << tb;
        if (w->q8 && w->q8[id].data) forms |= 4;
        put_u64(o, w->t[id].bytes);
        put_u64(o, forms);
        for (int tb = 0; tb < 2; tb++) {
            if (!(forms & (1u << tb))) continue;
            size_t slot = 2 * (size_t)id + (size_t)tb;
            put_u64(o, w->pack_k[slot]);
            put_u64(o, w->pack_n[slot]);
            put(o, w->packed[slot], cpu_panel_bytes(w, w->pack_k[slot], w->pack_n[slot]));
        }
        if (forms & 4) {
            const cpu_q8_pack *q = &w->q8[id];
            put_u64(o, q->k);
            put_u64(o, q->n);
            put_u64(o, q->rows);
            put_u64(o, (uint64_t)q->kind);
            put(o, q->data, cpu_gemm_q8_packed_bytes(q->k, q->n, q->rows));
        }
    }
}

berth_status cpu_save_state(berth_device *dev, berth_weights *w, uint32_t kind, void *buf, size_t *bytes,
                            berth_error *err) {
    (void)dev;
    if (kind != BERTH_STATE_WEIGHTS || !w) {
        bk_errf(err, "cpu: keeps no state of kind %u between processes", kind);
        return BERTH_ERR_UNSUPPORTED;
    }
    writer o = {.buf = NULL};
    put_weights(w, &o);
    if (!buf) {
        *bytes = o.at;
        return BERTH_OK;
    }
    if (*bytes < o.at) {
        bk_errf(err, "cpu: saving prepared weights needs %zu bytes, given %zu", o.at, *bytes);
        return BERTH_ERR_INVALID;
    }
    o = (writer){.buf = buf};
    put_weights(w, &o);
    *bytes = o.at;
    return BERTH_OK;
}

/* ---- reading it back: everything checked, nothing installed until
 * the whole file has been read ---- */

typedef struct reader {
    const uint8_t *p;
    size_t left;
} reader;

static int take(reader *r, void *dst, size_t n) {
    if (r->left < n) return 0;
    if (n) memcpy(dst, r->p, n);
    r->p += n;
    r->left -= n;
    return 1;
}

static int take_u64(reader *r, uint64_t *v) { return take(r, v, sizeof *v); }

typedef struct loaded {
    float *panel[2];
    size_t k[2], n[2];
    cpu_q8_pack q8;
} loaded;

static void loaded_free(loaded *l, uint32_t n) {
    for (uint32_t i = 0; l && i < n; i++) {
        free(l[i].panel[0]);
        free(l[i].panel[1]);
        free(l[i].q8.data);
    }
    free(l);
}

static void *take_block(reader *r, size_t bytes) {
    void *dst = NULL;
    if (r->left < bytes || posix_memalign(&dst, CPU_ALIGN, bytes ? bytes : CPU_ALIGN)) return NULL;
    take(r, dst, bytes);
    return dst;
}

static int read_weight(const berth_weights *w, uint32_t id, reader *r, loaded *l) {
    uint64_t raw, forms, k, n, rows, kind;
    if (!take_u64(r, &raw) || !take_u64(r, &forms) || raw != w->t[id].bytes || forms > 7) return 0;
    for (int tb = 0; tb < 2; tb++) {
        if (!(forms & (1u << tb))) continue;
        /* a float panel of exactly the uploaded k x n floats */
        if (!take_u64(r, &k) || !take_u64(r, &n) || !k || !n || k > raw || n > raw || k * n * sizeof(float) != raw)
            return 0;
        l->k[tb] = (size_t)k, l->n[tb] = (size_t)n;
        l->panel[tb] = take_block(r, cpu_panel_bytes(w, l->k[tb], l->n[tb]));
        if (!l->panel[tb]) return 0;
    }
    if (forms & 4) {
        if (!take_u64(r, &k) || !take_u64(r, &n) || !take_u64(r, &rows) || !take_u64(r, &kind) || !k || !n ||
            !rows || k > 2 * raw || n > 2 * raw || k * n > 2 * raw || rows > k ||
            !cpu_gemm_q8_packable(w->dev->qdot, (int)kind, (size_t)rows))
            return 0;
        l->q8 = (cpu_q8_pack){.k = (size_t)k, .n = (size_t)n, .rows = (size_t)rows, .kind = (int)kind};
        l->q8.data = take_block(r, cpu_gemm_q8_packed_bytes(l->q8.k, l->q8.n, l->q8.rows));
        if (!l->q8.data) return 0;
    }
    return 1;
}

static berth_status install(berth_weights *w, loaded *l, berth_error *err) {
    if (!cpu_panels_table(w) || !cpu_q8_table(w)) {
        bk_errf(err, "cpu: out of memory taking prepared weights back");
        return BERTH_ERR_NOMEM;
    }
    for (uint32_t id = 0; id < w->n; id++) {
        for (int tb = 0; tb < 2; tb++) {
            size_t slot = 2 * (size_t)id + (size_t)tb;
            if (!l[id].panel[tb] || w->packed[slot]) continue;
            w->packed[slot] = l[id].panel[tb];
            w->pack_k[slot] = l[id].k[tb];
            w->pack_n[slot] = l[id].n[tb];
            w->total += cpu_panel_bytes(w, l[id].k[tb], l[id].n[tb]);
            l[id].panel[tb] = NULL;
        }
        if (l[id].q8.data && !w->q8[id].data) {
            w->q8[id] = l[id].q8;
            w->total += cpu_gemm_q8_packed_bytes(l[id].q8.k, l[id].q8.n, l[id].q8.rows);
            l[id].q8.data = NULL;
        }
    }
    cpu_weights_trim(w);
    return BERTH_OK;
}

berth_status cpu_load_state(berth_device *dev, berth_weights *w, uint32_t kind, const void *buf, size_t bytes,
                            berth_error *err) {
    (void)dev;
    if (kind != BERTH_STATE_WEIGHTS || !w) {
        bk_errf(err, "cpu: keeps no state of kind %u between processes", kind);
        return BERTH_ERR_UNSUPPORTED;
    }
    reader r = {.p = buf, .left = buf ? bytes : 0};
    char magic[sizeof STATE_MAGIC], isa[32];
    uint64_t n;
    if (!take(&r, magic, sizeof magic) || memcmp(magic, STATE_MAGIC, sizeof magic) || !take(&r, isa, sizeof isa) ||
        !take_u64(&r, &n)) {
        bk_errf(err, "cpu: saved weights: not this build's prepared weights");
        return BERTH_ERR_INVALID;
    }
    isa[sizeof isa - 1] = 0;
    if (strcmp(isa, w->dev->gemm->name) || n != w->n) {
        bk_errf(err, "cpu: saved weights: packed for '%s' kernels and %llu weights, this device has '%s' and %u",
                isa, (unsigned long long)n, w->dev->gemm->name, w->n);
        return BERTH_ERR_INVALID;
    }
    loaded *l = calloc(w->n + 1, sizeof *l);
    if (!l) {
        bk_errf(err, "cpu: out of memory reading saved weights");
        return BERTH_ERR_NOMEM;
    }
    for (uint32_t id = 0; id < w->n; id++)
        if (!read_weight(w, id, &r, &l[id])) {
            loaded_free(l, w->n);
            bk_errf(err, "cpu: saved weights: weight %u does not match what was uploaded, or the bytes end early", id);
            return BERTH_ERR_INVALID;
        }
    berth_status st = r.left ? BERTH_ERR_INVALID : install(w, l, err);
    if (r.left) bk_errf(err, "cpu: saved weights: %zu bytes left over after the last weight", r.left);
    loaded_free(l, w->n);
    return st;
}
