/* The metal backend's entry point and its device layer for the GPU core:
 * buffers in shared storage, the weights (upload_dest hands the archive a
 * buffer's contents, so a tensor is read straight into memory the GPU
 * uses), and run(), which encodes the plan's dispatch list into one
 * command buffer: input copies, the dispatches (a buffer barrier where
 * the core marked one), output copies. */
#import <Foundation/Foundation.h>
#import <Metal/Metal.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msl_kernels.h"
#include "mtl_internal.h"

extern const berth_option_decl mtl_options_decl[1];

/* ---- the core's device interface: buffers ---- */

uint64_t gpu_device_align(const berth_device *d) { return 256; /* setBuffer:offset: on every Metal GPU */ }
/* Every buffer is in shared storage, which the GPU reads and writes in
 * place on every Mac: plans bind inputs and outputs where the host put them. */
int gpu_device_unified(const berth_device *d) { return 1; }
uint64_t gpu_device_max_range(const berth_device *d) {
    return (uint64_t)((__bridge id<MTLDevice>)d->dev).maxBufferLength;
}

berth_status gpu_buffer_new(berth_device *d, uint64_t size, int host_visible, gpu_buffer **out, const char *what,
                            berth_error *err) {
    *out = calloc(1, sizeof **out);
    if (!*out) {
        bk_errf(err, "metal: out of memory for %s", what);
        return BERTH_ERR_NOMEM;
    }
    id<MTLBuffer> b = [(__bridge id<MTLDevice>)d->dev newBufferWithLength:(NSUInteger)(size ? size : 16)
                                                                  options:MTLResourceStorageModeShared];
    if (!b) {
        free(*out);
        *out = NULL;
        bk_errf(err, "metal: no memory for %s (%llu bytes)", what, (unsigned long long)size);
        return BERTH_ERR_NOMEM;
    }
    (*out)->buf = (void *)CFBridgingRetain(b);
    (*out)->size = size;
    (*out)->map = b.contents;
    return BERTH_OK;
}

void gpu_buffer_free(berth_device *d, gpu_buffer *b) {
    if (!b) return;
    if (b->buf) CFBridgingRelease(b->buf);
    free(b);
}

uint64_t gpu_buffer_size(const gpu_buffer *b) { return b->size; }
void *gpu_buffer_map(const gpu_buffer *b) { return b->map; }

berth_status gpu_buffer_write(berth_device *d, gpu_buffer *dst, uint64_t off, const void *src, size_t bytes,
                              berth_error *err) {
    memcpy((uint8_t *)dst->map + off, src, bytes); /* shared storage: the host writes it directly */
    return BERTH_OK;
}

/* ---- device verbs ---- */

static berth_status mtl_open(const berth_host_services *host, berth_device **out, berth_error *err) {
    return mtl_device_open(host, out, err);
}

static void mtl_close(berth_device *d) { mtl_device_close(d); }

static berth_status mtl_caps(berth_device *d, berth_caps *caps, berth_error *err) {
    uint32_t mask = BK_BIT(BERTH_DTYPE_F32) | BK_BIT(BERTH_DTYPE_I32) | BK_BIT(BERTH_DTYPE_U32) |
                    BK_BIT(BERTH_DTYPE_I64) | BK_BIT(BERTH_DTYPE_U64) | BK_BIT(BERTH_DTYPE_U8);
    return bk_caps_fill(caps, d->name, d->memory_bytes, d->unified, mask, err);
}

BK_SUPPORTS_VERBS(mtl, gpu_op_set)
BK_PLAN_VERB(mtl_plan_create, gpu_plan_graph)

/* ---- weights: one shared buffer each ---- */

static void mtl_free_weights(berth_weights *w) {
    if (!w) return;
    for (uint32_t i = 0; w->t && i < w->n; i++)
        if (w->t[i].buf) CFBridgingRelease(w->t[i].buf);
    free(w->t);
    bk_upload_free(&w->up);
    free(w);
}

static berth_status mtl_upload_begin(berth_device *d, const berth_upload_info *info, berth_weights **out,
                                     berth_error *err) {
    *out = NULL;
    berth_weights *w = calloc(1, sizeof *w);
    berth_status st = w ? bk_upload_begin(&w->up, info, "metal", err) : BERTH_ERR_NOMEM;
    if (st) {
        free(w);
        if (st == BERTH_ERR_NOMEM) bk_errf(err, "metal: out of memory starting an upload");
        return st;
    }
    w->dev = d;
    w->n = info->n_tensors;
    if (!(w->t = calloc(w->n ? w->n : 1, sizeof *w->t))) {
        mtl_free_weights(w);
        bk_errf(err, "metal: out of memory for a table of %u weights", info->n_tensors);
        return BERTH_ERR_NOMEM;
    }
    *out = w;
    return BERTH_OK;
}

/* The tensor's own buffer, made when it is first asked for. */
static berth_status weight_buffer(berth_weights *w, const berth_weight_desc *desc, gpu_buffer **out,
                                  berth_error *err) {
    berth_status st = bk_upload_check(&w->up, desc, desc, "metal", err);
    if (st) return st;
    gpu_buffer *t = &w->t[desc->id];
    if (!t->buf) {
        gpu_buffer *b;
        if ((st = gpu_buffer_new(w->dev, desc->bytes, 1, &b, desc->name ? desc->name : "a weight", err))) return st;
        *t = *b;
        free(b);
    }
    *out = t;
    return BERTH_OK;
}

static berth_status mtl_upload_dest(berth_weights *w, const berth_weight_desc *desc, void **dest, berth_error *err) {
    *dest = NULL;
    gpu_buffer *t;
    berth_status st = weight_buffer(w, desc, &t, err);
    if (st) return st;
    *dest = w->offered = t->map;
    return BERTH_OK;
}

static berth_status mtl_upload_tensor(berth_weights *w, const berth_weight_desc *desc, void *data, uint32_t flags,
                                      int *taken, berth_error *err) {
    if (taken) *taken = 0;
    void *offered = w->offered;
    w->offered = NULL;
    berth_status st = bk_upload_check(&w->up, desc, data, "metal", err);
    if (st) return st;
    gpu_buffer *t;
    if ((st = weight_buffer(w, desc, &t, err))) return st;
    if (flags & BERTH_UPLOAD_IN_PLACE) {
        if (data != offered || data != t->map) {
            bk_errf(err, "metal: weight '%s': marked in place but not at the offered memory", desc->name ? desc->name : "?");
            return BERTH_ERR_INVALID;
        }
    } else if (desc->bytes) {
        memcpy(t->map, data, desc->bytes);
    }
    bk_upload_mark(&w->up, desc);
    w->total += desc->bytes;
    return BERTH_OK;
}

static berth_status mtl_upload_end(berth_weights *w, berth_error *err) { return bk_upload_end(&w->up, "metal", err); }

static uint64_t mtl_weights_bytes(const berth_weights *w) { return w ? w->total : 0; }

void gpu_weight_at(const berth_weights *w, uint32_t id, gpu_buffer **buf, uint64_t *off) {
    *buf = &w->t[id];
    *off = 0;
}

const bk_upload *gpu_weights_upload(const berth_weights *w) { return &w->up; }

/* ---- recording: the pipeline of each dispatch, ahead of any run ---- */

berth_status gpu_record_plan(berth_plan *p, berth_error *err) {
    if (!(p->rec = calloc(1, sizeof *p->rec)) || !(p->rec->states = calloc(p->n_disp + 1, sizeof *p->rec->states))) {
        bk_errf(err, "metal: out of memory recording a plan");
        return BERTH_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < p->n_disp; i++) {
        const gpu_dispatch *d = &p->disp[i];
        berth_status st = mtl_pipeline(p->dev, d->shader, d->n_spec, d->spec, &p->rec->states[i], err);
        if (st) return st;
    }
    return BERTH_OK;
}

/* Metal reports nothing per plan: the pipeline-state pointers per dispatch
 * are what the plan holds; a run's command buffer is made and freed by
 * the run. */
uint64_t gpu_record_bytes(const berth_plan *p) { return (uint64_t)(p->n_disp + 1) * sizeof(void *); }

void gpu_record_free(berth_plan *p) {
    if (!p->rec) return;
    free(p->rec->states);
    free(p->rec);
    p->rec = NULL;
}

/* ---- run: one command buffer ---- */

static void copy_io(id<MTLBlitCommandEncoder> blit, const berth_plan *p, int outputs) {
    uint32_t first = outputs ? p->n_inputs : 0, n = outputs ? p->n_outputs : p->n_inputs;
    id<MTLBuffer> io = (__bridge id<MTLBuffer>)p->io->buf;
    for (uint32_t i = 0; i < n; i++) {
        const gpu_opnd *o = &p->ops[outputs ? p->outputs[i] : p->inputs[i]];
        if (!gpu_io_copied(p, first + i)) continue;
        id<MTLBuffer> b = (__bridge id<MTLBuffer>)o->buf->buf;
        if (outputs)
            [blit copyFromBuffer:b sourceOffset:o->off toBuffer:io destinationOffset:p->io_off[first + i] size:o->bytes];
        else
            [blit copyFromBuffer:io sourceOffset:p->io_off[first + i] toBuffer:b destinationOffset:o->off size:o->bytes];
    }
}

static void encode_dispatches(id<MTLComputeCommandEncoder> enc, const berth_plan *p) {
    for (uint32_t i = 0; i < p->n_disp; i++) {
        const gpu_dispatch *d = &p->disp[i];
        const msl_kernel *k = &msl_kernels[d->shader];
        if (d->barrier) [enc memoryBarrierWithScope:MTLBarrierScopeBuffers];
        [enc setComputePipelineState:(__bridge id<MTLComputePipelineState>)p->rec->states[i]];
        for (uint32_t b = 0; b < d->n_bind; b++) {
            if (d->bind[b] == GPU_NONE || k->bind[b] < 0) continue;
            const gpu_opnd *o = &p->ops[d->bind[b]];
            if (!o->buf) continue;
            [enc setBuffer:(__bridge id<MTLBuffer>)o->buf->buf offset:(NSUInteger)o->off atIndex:(NSUInteger)k->bind[b]];
        }
        if (k->push >= 0) [enc setBytes:d->pc length:GPU_PC_WORDS * 4 atIndex:(NSUInteger)k->push];
        [enc dispatchThreadgroups:MTLSizeMake(d->groups[0], d->groups[1], d->groups[2])
            threadsPerThreadgroup:MTLSizeMake(k->threads[0], k->threads[1], k->threads[2])];
    }
}

berth_status mtl_run(berth_plan *p, const berth_tensor *in, uint32_t n_in, berth_tensor *out, uint32_t n_out,
                     berth_error *err) {
    berth_status st = gpu_run_begin(p, in, n_in, out, n_out, err);
    if (st) return st;
    @autoreleasepool {
        id<MTLCommandBuffer> cb = [(__bridge id<MTLCommandQueue>)p->dev->queue commandBuffer];
        id<MTLBlitCommandEncoder> blit = [cb blitCommandEncoder];
        copy_io(blit, p, 0);
        [blit endEncoding];
        id<MTLComputeCommandEncoder> enc = [cb computeCommandEncoderWithDispatchType:MTLDispatchTypeConcurrent];
        encode_dispatches(enc, p);
        [enc endEncoding];
        blit = [cb blitCommandEncoder];
        copy_io(blit, p, 1);
        [blit endEncoding];
        [cb commit];
        [cb waitUntilCompleted];
        if (cb.status != MTLCommandBufferStatusCompleted) {
            bk_errf(err, "metal: the command buffer failed: %s",
                    cb.error ? cb.error.localizedDescription.UTF8String : "no reason given");
            st = BERTH_ERR_DEVICE;
        }
    }
    if (st) return st;
    gpu_run_end(p, out);
    return BERTH_OK;
}

BK_BACKEND(.name = "metal", .version = "0.2.0", .open = mtl_open, .close = mtl_close, .caps = mtl_caps,
           .supports_op = mtl_supports_op, .supports_node = mtl_supports_node, .upload_begin = mtl_upload_begin,
           .upload_dest = mtl_upload_dest, .upload_tensor = mtl_upload_tensor, .upload_end = mtl_upload_end,
           .plan = mtl_plan_create, .run = mtl_run, .free_plan = gpu_plan_free, .free_weights = mtl_free_weights,
           .weights_bytes = mtl_weights_bytes, .plan_bytes = gpu_plan_bytes, .plan_profile = gpu_plan_profile,
           .plan_memory = gpu_plan_memory,
           .options = mtl_options_decl, .n_options = 1, .option_decl_size = sizeof(berth_option_decl))
