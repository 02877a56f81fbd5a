/* An in-test backend table (not a module) that records every call, so the
 * streaming tests can check order, buffer ownership and cleanup. It keeps
 * a copy of every tensor it receives for value checks. */
#ifndef BERTH_ARCHIVE_FAKE_BACKEND_H
#define BERTH_ARCHIVE_FAKE_BACKEND_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"

#define FAKE_MAX 64

typedef struct fake_tensor {
    char name[64];
    uint32_t id;
    berth_dtype dtype;
    size_t bytes;
    void *data;      /* what upload_tensor received */
    uint32_t flags;
    unsigned char *copy;
    int kept;        /* GIVEN and taken: released with host->free */
    void *dest;      /* offered by upload_dest (malloc), NULL if none */
} fake_tensor;

typedef struct fake_state {
    /* knobs */
    int take;                    /* take GIVEN buffers */
    const char *dest_for[8];     /* tensor names to offer a destination for */
    const char *fail_on;         /* upload_tensor of this name fails */
    int fail_begin;
    void (*on_tensor)(const char *name); /* called as each tensor arrives */
    /* records */
    char log[4 * FAKE_MAX][96];
    int nlog;
    berth_upload_info info;
    fake_tensor t[FAKE_MAX];
    int nt;
    int began, ended, freed;
    const berth_host_services *host;
} fake_state;

static fake_state F;

/* Host services that count what is alive. */
static long host_live, host_allocs;
static void *host_alloc(void *ctx, size_t bytes, size_t align) {
    (void)ctx;
    void *p = NULL;
    if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, bytes ? bytes : 1))
        return NULL;
    host_live++, host_allocs++;
    return p;
}
static void host_free(void *ctx, void *p) {
    (void)ctx;
    if (p) host_live--;
    free(p);
}
static const berth_host_services fake_host = {
    BERTH_BACKEND_ABI_VERSION, sizeof(berth_host_services), NULL, NULL, NULL, NULL,
    host_alloc, host_free};

struct berth_weights {
    int unused;
};
static struct berth_weights fake_w;

static void fake_log(const char *fmt, const char *name, unsigned v) {
    if (F.nlog < (int)(sizeof F.log / sizeof F.log[0])) snprintf(F.log[F.nlog++], 96, fmt, name, v);
}

static berth_status fake_begin(berth_device *dev, const berth_upload_info *info,
                               berth_weights **out, berth_error *err) {
    (void)dev;
    F.began++;
    F.info = *info;
    fake_log("begin %s%u", "", info->n_tensors);
    if (F.fail_begin) {
        snprintf(err->msg, sizeof err->msg, "fake begin refuses");
        *out = NULL;
        return BERTH_ERR_DEVICE;
    }
    *out = &fake_w;
    return BERTH_OK;
}

static int fake_wants_dest(const char *name) {
    for (int i = 0; i < 8 && F.dest_for[i]; i++)
        if (!strcmp(F.dest_for[i], name)) return 1;
    return 0;
}

static berth_status fake_dest(berth_weights *w, const berth_weight_desc *d, void **dest,
                              berth_error *err) {
    (void)w, (void)err;
    fake_log("dest %s %u", d->name, (unsigned)d->bytes);
    *dest = NULL;
    if (fake_wants_dest(d->name) && F.nt < FAKE_MAX) {
        /* Filled with a pattern so a tensor that was not read in shows. */
        *dest = malloc(d->bytes ? d->bytes : 1);
        memset(*dest, 0xEE, d->bytes);
        F.t[F.nt].dest = *dest;
    }
    return BERTH_OK;
}

static berth_status fake_tensor_up(berth_weights *w, const berth_weight_desc *d, void *data,
                                   uint32_t flags, int *taken, berth_error *err) {
    (void)w;
    fake_log("tensor %s %u", d->name, flags);
    if (F.on_tensor) F.on_tensor(d->name);
    if (F.fail_on && !strcmp(F.fail_on, d->name)) {
        snprintf(err->msg, sizeof err->msg, "fake device is full");
        free(F.t[F.nt].dest);
        F.t[F.nt].dest = NULL;
        return BERTH_ERR_NOMEM;
    }
    fake_tensor *t = &F.t[F.nt++];
    snprintf(t->name, sizeof t->name, "%s", d->name);
    t->id = d->id;
    t->dtype = d->dtype;
    t->bytes = d->bytes;
    t->data = data;
    t->flags = flags;
    t->copy = malloc(d->bytes ? d->bytes : 1);
    memcpy(t->copy, data, d->bytes);
    if ((flags & BERTH_UPLOAD_GIVEN) && F.take) {
        *taken = 1;
        t->kept = 1;
    }
    return BERTH_OK;
}

static berth_status fake_end(berth_weights *w, berth_error *err) {
    (void)w, (void)err;
    F.ended++;
    fake_log("end %s%u", "", 0);
    return BERTH_OK;
}

static void fake_free_weights(berth_weights *w) {
    (void)w;
    F.freed++;
    fake_log("free %s%u", "", 0);
    for (int i = 0; i < F.nt; i++) {
        if (F.t[i].kept) F.host->free(NULL, F.t[i].data);
        free(F.t[i].dest);
        free(F.t[i].copy);
        F.t[i].kept = 0;
        F.t[i].dest = NULL;
        F.t[i].copy = NULL;
    }
}

static const berth_backend fake_backend = {
    .abi_version = BERTH_BACKEND_ABI_VERSION,
    .struct_size = sizeof(berth_backend),
    .name = "fake",
    .version = "test",
    .upload_begin = fake_begin,
    .upload_dest = fake_dest,
    .upload_tensor = fake_tensor_up,
    .upload_end = fake_end,
    .free_weights = fake_free_weights,
};

/* Same table without upload_dest: always scratch. */
static const berth_backend fake_backend_nodest = {
    .abi_version = BERTH_BACKEND_ABI_VERSION,
    .struct_size = sizeof(berth_backend),
    .name = "fake-nodest",
    .version = "test",
    .upload_begin = fake_begin,
    .upload_tensor = fake_tensor_up,
    .upload_end = fake_end,
    .free_weights = fake_free_weights,
};

static void fake_reset(void) {
    memset(&F, 0, sizeof F);
    F.host = &fake_host;
}

/* The record of the tensor uploaded under `name`, or NULL. */
static const fake_tensor *fake_find(const char *name) {
    for (int i = 0; i < F.nt; i++)
        if (!strcmp(F.t[i].name, name)) return &F.t[i];
    return NULL;
}

static berth_weight_request fake_req(const char *ref, berth_dtype dt, uint32_t id, uint32_t rank,
                                     const int64_t *dims) {
    berth_weight_request r;
    memset(&r, 0, sizeof r);
    r.ref = ref;
    r.value = ref;
    r.dtype = dt;
    r.rank = rank;
    for (uint32_t i = 0; i < rank; i++) r.dims[i] = dims[i];
    r.id = id;
    return r;
}

#endif
