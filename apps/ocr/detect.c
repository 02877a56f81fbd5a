#include "detect.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preprocess.h"
#include "recognize.h"

/* PP-OCR's det_limit_side_len. */
#define OCR_DET_SIDE 960

static berth_status shape_error(berth_error *err, const char *what) {
    snprintf(err->msg, sizeof err->msg, "detector: %s", what);
    return BERTH_ERR_INVALID;
}

berth_status ocr_det_open(ocr_det *d, const char *config, const char *model, const berth_open_options *opts,
                          int max_side, berth_error *err) {
    memset(d, 0, sizeof *d);
    d->boxes = ocr_box_defaults();
    berth_open_options o = opts ? *opts : (berth_open_options){.struct_size = sizeof o, .log_level = BERTH_LOG_WARN};
    o.model = model;
    berth_status st = berth_executor_open(config, &o, &d->ex, err);
    if (st != BERTH_OK) return st;
    berth_io_info in;
    if (berth_executor_input_count(d->ex, 0) != 1 || berth_executor_output_count(d->ex, 0) != 1 ||
        berth_executor_input_info(d->ex, 0, 0, &in) != BERTH_OK || in.rank != 4 || in.dims[1] != 3 ||
        !in.dyn[2] || !in.dyn[3] || in.dtype != BERTH_DTYPE_F32) {
        st = shape_error(err, "expected one float32 input [batch, 3, dyn height, dyn width] and one output");
        goto fail;
    }
    d->n_buckets = berth_executor_bucket_count(d->ex, 0);
    if (d->n_buckets == 0 || d->n_buckets > OCR_DET_MAX_BUCKETS) {
        snprintf(err->msg, sizeof err->msg, "detector: expected 1..%d buckets in its stage, found %u",
                 OCR_DET_MAX_BUCKETS, d->n_buckets);
        st = BERTH_ERR_INVALID;
        goto fail;
    }
    int largest = 0;
    for (uint32_t b = 0; b < d->n_buckets; b++) {
        char desc[256];
        berth_executor_bucket_describe(d->ex, 0, b, desc, sizeof desc);
        d->bucket_h[b] = ocr_bucket_value(desc, in.dyn[2]);
        d->bucket_w[b] = ocr_bucket_value(desc, in.dyn[3]);
        int64_t batch = in.dyn[0] ? ocr_bucket_value(desc, in.dyn[0]) : 1;
        if (d->bucket_h[b] < 32 || d->bucket_w[b] < 32 || batch != 1) {
            snprintf(err->msg, sizeof err->msg,
                     "detector: bucket \"%s\" must give %s and %s of 32 or more%s, found otherwise", desc, in.dyn[2],
                     in.dyn[3], in.dyn[0] ? " and batch 1" : "");
            st = BERTH_ERR_INVALID;
            goto fail;
        }
        int side = (int)(d->bucket_h[b] < d->bucket_w[b] ? d->bucket_h[b] : d->bucket_w[b]);
        if (side > largest) largest = side;
    }
    /* every page resized within max_side fits a bucket: one takes that square */
    d->max_side = largest / 32 * 32 < OCR_DET_SIDE ? largest / 32 * 32 : OCR_DET_SIDE;
    if (max_side > 0) {
        if (max_side < 32 || max_side > d->max_side) {
            snprintf(err->msg, sizeof err->msg, "--max-side %d: expected 32 to %d (the largest square the "
                     "detector's buckets take)", max_side, d->max_side);
            st = BERTH_ERR_INVALID;
            goto fail;
        }
        d->max_side = max_side;
    }
    return BERTH_OK;
fail:
    ocr_det_close(d);
    return st;
}

void ocr_det_close(ocr_det *d) {
    berth_tensor_release(&d->out);
    if (d->ex) berth_executor_close(d->ex);
    memset(d, 0, sizeof *d);
}

/* PP-OCR's resize: the longer side brought to at most max_side, each
 * side then rounded to a multiple of 32 (at least 32). */
static void det_size(int w, int h, int max_side, int *rw, int *rh) {
    double ratio = (w > h ? w : h) > max_side ? (double)max_side / (w > h ? w : h) : 1.0;
    int sw = (int)(w * ratio), sh = (int)(h * ratio);
    *rw = (int)fmax(lround(sw / 32.0) * 32, 32);
    *rh = (int)fmax(lround(sh / 32.0) * 32, 32);
}

berth_status ocr_det_run(ocr_det *d, const ocr_image *page, ocr_box **boxes, size_t *n, ocr_det_report *rep,
                         berth_error *err) {
    static const float mean[3] = {0.485f, 0.456f, 0.406f}, stdev[3] = {0.229f, 0.224f, 0.225f};
    *boxes = NULL;
    *n = 0;
    memset(rep, 0, sizeof *rep);
    rep->plan_ms = -1;
    int rw, rh;
    det_size(page->width, page->height, d->max_side, &rw, &rh);
    rep->width = rw, rep->height = rh;
    int32_t pick = -1;
    for (uint32_t b = 0; b < d->n_buckets; b++)
        if (d->bucket_h[b] >= rh && d->bucket_w[b] >= rw &&
            (pick < 0 || d->bucket_h[b] * d->bucket_w[b] < d->bucket_h[pick] * d->bucket_w[pick]))
            pick = (int32_t)b;
    if (pick < 0) {
        snprintf(err->msg, sizeof err->msg, "the page resized to %dx%d fits no bucket of the detector", rw, rh);
        return BERTH_ERR_INVALID;
    }
    size_t plane = (size_t)rw * (size_t)rh;
    float *x = malloc(3 * plane * sizeof *x);
    if (!x) {
        snprintf(err->msg, sizeof err->msg, "out of memory for the %dx%d detector input", rw, rh);
        return BERTH_ERR_NOMEM;
    }
    ocr_to_planes(page, rw, rh, mean, stdev, x, rw, plane);
    berth_tensor in = {BERTH_DTYPE_F32, 4, {1, 3, rh, rw}, x, 3 * plane * sizeof *x, 0};
    berth_status st = BERTH_OK;
    if (!berth_executor_is_warm(d->ex, 0, (uint32_t)pick)) {
        double t0 = ocr_now_ms();
        st = berth_executor_prepare(d->ex, 0, (uint32_t)pick, err);
        rep->plan_ms = ocr_now_ms() - t0;
    }
    uint32_t bucket = 0;
    if (st == BERTH_OK) {
        double t0 = ocr_now_ms();
        st = berth_executor_run(d->ex, 0, &in, 1, &d->out, 1, &bucket, err);
        rep->run_ms = ocr_now_ms() - t0;
    }
    free(x);
    if (st != BERTH_OK) return st;
    const berth_tensor *o = &d->out;
    if (o->dtype != BERTH_DTYPE_F32 || o->rank != 4 || o->dims[0] != 1 || o->dims[1] != 1 || o->dims[2] < rh ||
        o->dims[3] < rw) {
        snprintf(err->msg, sizeof err->msg,
                 "detector output: expected float32 [1, 1, >= %d, >= %d], found dtype %d rank %u [%lld, %lld, %lld, %lld]",
                 rh, rw, (int)o->dtype, o->rank, (long long)o->dims[0], (long long)o->dims[1], (long long)o->dims[2],
                 (long long)o->dims[3]);
        return BERTH_ERR_INVALID;
    }
    berth_executor_bucket_describe(d->ex, 0, bucket, rep->bucket, sizeof rep->bucket);
    double t0 = ocr_now_ms();
    long found = ocr_find_boxes(o->data, rw, rh, (size_t)o->dims[3], page->width, page->height, &d->boxes, boxes);
    rep->boxes_ms = ocr_now_ms() - t0;
    if (found < 0) {
        snprintf(err->msg, sizeof err->msg, "out of memory finding the text boxes");
        return BERTH_ERR_NOMEM;
    }
    *n = (size_t)found;
    return BERTH_OK;
}
