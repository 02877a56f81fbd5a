/* Weight upload bookkeeping: which ids arrived, how many bytes, and the
 * checks every upload_tensor owes (id in range, once, bytes that match
 * the dtype and dims). Where the bytes go is the backend's business. */
#include <stdlib.h>

#include "bk.h"

#define INFO_FITS(i, field) ((i)->struct_size >= offsetof(berth_upload_info, field) + sizeof((i)->field))

berth_status bk_upload_begin(bk_upload *u, const berth_upload_info *info, const char *backend, berth_error *err) {
    u->n = u->count = 0;
    u->bytes = 0;
    u->present = NULL;
    u->sizes = NULL;
    if (!info || info->struct_size < BERTH_UPLOAD_INFO_V1_MIN_SIZE) {
        bk_errf(err, "%s: upload_begin: upload info missing or %u bytes, expected at least %zu (ABI 1.0's)", backend,
                info ? info->struct_size : 0u, (size_t)BERTH_UPLOAD_INFO_V1_MIN_SIZE);
        return BERTH_ERR_INVALID;
    }
    /* 0 (or absent) means ABI 1.0's size */
    if (INFO_FITS(info, weight_desc_size) && info->weight_desc_size &&
        info->weight_desc_size < BERTH_WEIGHT_DESC_V1_SIZE) {
        bk_errf(err, "%s: upload_begin: weight_desc_size %u is below ABI 1.0's %zu", backend, info->weight_desc_size,
                (size_t)BERTH_WEIGHT_DESC_V1_SIZE);
        return BERTH_ERR_INVALID;
    }
    u->present = calloc(info->n_tensors ? info->n_tensors : 1, 1);
    u->sizes = calloc(info->n_tensors ? info->n_tensors : 1, sizeof *u->sizes);
    if (!u->present || !u->sizes) {
        bk_upload_free(u);
        bk_errf(err, "%s: out of memory for a table of %u weights", backend, info->n_tensors);
        return BERTH_ERR_NOMEM;
    }
    u->n = info->n_tensors;
    return BERTH_OK;
}

berth_status bk_upload_check(const bk_upload *u, const berth_weight_desc *d, const void *data, const char *backend,
                             berth_error *err) {
    const char *name = d && d->name ? d->name : "?";
    if (!d || d->id >= u->n) {
        bk_errf(err, "%s: weight '%s': id %u out of range (%u announced)", backend, name, d ? d->id : 0u, u->n);
        return BERTH_ERR_INVALID;
    }
    if (u->present[d->id]) {
        bk_errf(err, "%s: weight '%s': id %u uploaded twice", backend, name, d->id);
        return BERTH_ERR_INVALID;
    }
    size_t numel = 1;
    int ok = d->rank <= BERTH_MAX_RANK;
    for (uint32_t i = 0; ok && i < d->rank; i++) {
        ok = d->dims[i] >= 0 && (d->dims[i] == 0 || numel <= SIZE_MAX / 16 / (size_t)d->dims[i]);
        if (ok) numel *= (size_t)d->dims[i];
    }
    int known = 0;
    size_t want = ok ? bk_dtype_bytes(d->dtype, numel, &known) : 0;
    if (!ok || !known || want != d->bytes) {
        bk_errf(err, "%s: weight '%s': %s of rank %u needs %zu bytes, found %zu", backend, name,
                bk_dtype_name(d->dtype), d->rank, want, d->bytes);
        return BERTH_ERR_INVALID;
    }
    if (!data && d->bytes) {
        bk_errf(err, "%s: weight '%s': no data for %zu bytes", backend, name, d->bytes);
        return BERTH_ERR_INVALID;
    }
    return BERTH_OK;
}

void bk_upload_mark(bk_upload *u, const berth_weight_desc *d) {
    u->present[d->id] = 1;
    u->sizes[d->id] = d->bytes;
    u->count++;
    u->bytes += d->bytes;
}

berth_status bk_upload_end(const bk_upload *u, const char *backend, berth_error *err) {
    for (uint32_t i = 0; i < u->n; i++)
        if (!u->present[i]) {
            bk_errf(err, "%s: upload_end: weight id %u of %u was never uploaded", backend, i, u->n);
            return BERTH_ERR_INVALID;
        }
    return BERTH_OK;
}

void bk_upload_free(bk_upload *u) {
    free(u->present);
    free(u->sizes);
    u->present = NULL;
    u->sizes = NULL;
}

berth_status bk_bind_check(const bk_upload *u, const berth_graph_desc *g, const char *backend, berth_error *err) {
    for (uint32_t i = 0; i < g->n_operands; i++) {
        const berth_operand *o = &g->operands[i];
        if (o->kind != BERTH_OPERAND_CONSTANT && o->kind != BERTH_OPERAND_WEIGHT) continue;
        const char *name = o->name ? o->name : "?";
        int ok;
        size_t bytes = bk_dtype_bytes(o->dtype, bk_numel(o), &ok);
        if (o->kind == BERTH_OPERAND_CONSTANT && (o->bytes != bytes || (!o->data && o->bytes))) {
            bk_errf(err, "%s: constant '%s': expected %zu bytes of data, found %zu", backend, name, bytes,
                    o->data ? o->bytes : 0);
            return BERTH_ERR_INVALID;
        }
        if (o->kind != BERTH_OPERAND_WEIGHT) continue;
        if (!u || !u->present || o->weight >= u->n || !u->present[o->weight]) {
            bk_errf(err, "%s: weight operand '%s': id %u was not uploaded (%u weights)", backend, name, o->weight,
                    u ? u->n : 0u);
            return BERTH_ERR_INVALID;
        }
        if (u->sizes[o->weight] != bytes) {
            bk_errf(err, "%s: weight operand '%s': shape needs %zu bytes, uploaded tensor %u has %zu", backend, name,
                    bytes, o->weight, u->sizes[o->weight]);
            return BERTH_ERR_INVALID;
        }
    }
    return BERTH_OK;
}
