#include "classify.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crop.h"
#include "preprocess.h"
#include "recognize.h"

berth_status ocr_cls_open(ocr_cls *c, const char *config, const char *model, const berth_open_options *opts,
                          berth_error *err) {
    memset(c, 0, sizeof *c);
    c->thresh = 0.9f;
    berth_open_options o = opts ? *opts : (berth_open_options){.struct_size = sizeof o, .log_level = BERTH_LOG_WARN};
    o.model = model;
    berth_status st = berth_executor_open(config, &o, &c->ex, err);
    if (st != BERTH_OK) return st;
    berth_io_info in;
    uint32_t nb = berth_executor_bucket_count(c->ex, 0);
    if (berth_executor_input_count(c->ex, 0) != 1 || berth_executor_output_count(c->ex, 0) != 1 ||
        berth_executor_input_info(c->ex, 0, 0, &in) != BERTH_OK || in.rank != 4 || in.dims[1] != 3 || nb == 0) {
        snprintf(err->msg, sizeof err->msg, "classifier: expected one input [batch, 3, height, width], one output "
                 "and buckets");
        goto fail;
    }
    for (uint32_t b = 0; b < nb; b++) {
        char desc[256];
        berth_executor_bucket_describe(c->ex, 0, b, desc, sizeof desc);
        int64_t h = in.dyn[2] ? ocr_bucket_value(desc, in.dyn[2]) : in.dims[2];
        int64_t w = in.dyn[3] ? ocr_bucket_value(desc, in.dyn[3]) : in.dims[3];
        int64_t batch = in.dyn[0] ? ocr_bucket_value(desc, in.dyn[0]) : 1;
        if (h < 1 || w < 1 || batch < 1 || (c->height && (h != c->height || w != c->width))) {
            snprintf(err->msg, sizeof err->msg, "classifier: bucket \"%s\": every bucket must give one height and "
                     "width (and a batch)", desc);
            goto fail;
        }
        c->height = h, c->width = w;
        if (batch > c->max_batch) c->max_batch = batch;
    }
    return BERTH_OK;
fail:
    ocr_cls_close(c);
    return BERTH_ERR_INVALID;
}

void ocr_cls_close(ocr_cls *c) {
    berth_tensor_release(&c->out);
    if (c->ex) berth_executor_close(c->ex);
    memset(c, 0, sizeof *c);
}

berth_status ocr_cls_run(ocr_cls *c, ocr_image *lines, int n, int *turned, double *ms, berth_error *err) {
    static const float half[3] = {0.5f, 0.5f, 0.5f};
    size_t plane = (size_t)c->height * (size_t)c->width, per = 3 * plane;
    for (int first = 0; first < n; first += (int)c->max_batch) {
        int k = n - first < c->max_batch ? n - first : (int)c->max_batch;
        float *x = calloc((size_t)k * per, sizeof *x); /* 0: PP-OCR's padding */
        if (!x) {
            snprintf(err->msg, sizeof err->msg, "out of memory for the classifier's batch");
            return BERTH_ERR_NOMEM;
        }
        for (int i = 0; i < k; i++) {
            const ocr_image *img = &lines[first + i];
            int64_t w = (int64_t)ceil((double)c->height * img->width / img->height);
            if (w > c->width) w = c->width;
            if (w < 1) w = 1;
            ocr_to_planes(img, (int)w, (int)c->height, half, half, x + (size_t)i * per, c->width, plane);
        }
        berth_tensor in = {BERTH_DTYPE_F32, 4, {k, 3, c->height, c->width}, x, (size_t)k * per * sizeof *x, 0};
        double t0 = ocr_now_ms();
        uint32_t bucket;
        berth_status st = berth_executor_run(c->ex, 0, &in, 1, &c->out, 1, &bucket, err);
        *ms += ocr_now_ms() - t0;
        free(x);
        if (st != BERTH_OK) return st;
        const berth_tensor *o = &c->out;
        if (o->dtype != BERTH_DTYPE_F32 || o->rank != 2 || o->dims[0] != k || o->dims[1] != 2) {
            snprintf(err->msg, sizeof err->msg, "classifier output: expected float32 [%d, 2], found dtype %d rank %u",
                     k, (int)o->dtype, o->rank);
            return BERTH_ERR_INVALID;
        }
        const float *p = o->data;
        for (int i = 0; i < k; i++) {
            /* classes: 0 upright, 1 turned by 180 degrees */
            turned[first + i] = p[2 * i + 1] > p[2 * i] && p[2 * i + 1] > c->thresh;
            if (turned[first + i]) ocr_image_rotate180(&lines[first + i]);
        }
    }
    return BERTH_OK;
}
