#include "recognize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "npy.h"
#include "preprocess.h"

/* Value padded columns get inside a batch: 0 after normalization, as
 * PaddleOCR pads. The config's [inputs.x] pad says the same for the
 * columns the executor adds up to the bucket. */
#define OCR_PAD 0.0f

double ocr_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void ocr_line_fail(ocr_line *line, const char *why) {
    fprintf(stderr, "berth-ocr: %s: %s\n", line->name, why);
    line->failed = 1;
}

/* Value of `name=` in a bucket description such as "batch=8 width=320". */
int64_t ocr_bucket_value(const char *desc, const char *name) {
    size_t len = strlen(name);
    for (const char *p = desc; *p;) {
        while (*p == ' ') p++;
        if (strncmp(p, name, len) == 0 && p[len] == '=') return strtoll(p + len + 1, NULL, 10);
        while (*p && *p != ' ') p++;
    }
    return -1;
}

/* The model must take [batch, 3, H, width] and give [batch, steps,
 * classes]; the buckets of its stage give the widths images are
 * batched under. */
static berth_status read_model_shape(berth_executor *ex, ocr_rec *ms, berth_error *err) {
    berth_io_info in, out;
    if (berth_executor_input_count(ex, 0) != 1 || berth_executor_output_count(ex, 0) != 1 ||
        berth_executor_input_info(ex, 0, 0, &in) != BERTH_OK ||
        berth_executor_output_info(ex, 0, 0, &out) != BERTH_OK) {
        snprintf(err->msg, sizeof err->msg,
                 "model: expected one input and one output, found %u inputs and %u outputs",
                 berth_executor_input_count(ex, 0), berth_executor_output_count(ex, 0));
        return BERTH_ERR_INVALID;
    }
    if (in.dtype != BERTH_DTYPE_F32 || in.rank != 4 || in.dims[1] != 3 || in.dyn[2] ||
        !in.dyn[3] || (!in.dyn[0] && in.dims[0] != 1)) {
        snprintf(err->msg, sizeof err->msg,
                 "model input %s: expected float32 [dyn batch, 3, fixed height, dyn width], "
                 "found rank %u dtype %d",
                 in.name, in.rank, (int)in.dtype);
        return BERTH_ERR_INVALID;
    }
    /* An output's dtype and rank may be unknown (0) until a plan exists;
     * run_batch checks the dims of every output it gets. */
    if (out.rank != 0 && (out.dtype != BERTH_DTYPE_F32 || out.rank != 3)) {
        snprintf(err->msg, sizeof err->msg,
                 "model output %s: expected float32 [batch, steps, classes], found rank %u dtype %d",
                 out.name, out.rank, (int)out.dtype);
        return BERTH_ERR_INVALID;
    }
    ms->height = in.dims[2];
    uint32_t nb = berth_executor_bucket_count(ex, 0);
    if (nb == 0 || nb > OCR_MAX_BUCKETS) {
        snprintf(err->msg, sizeof err->msg, "config: expected 1..%d buckets in the stage, found %u",
                 OCR_MAX_BUCKETS, nb);
        return BERTH_ERR_INVALID;
    }
    for (uint32_t b = 0; b < nb; b++) {
        char desc[256];
        berth_executor_bucket_describe(ex, 0, b, desc, sizeof desc);
        ocr_bucket_size *bs = &ms->bucket[b];
        bs->batch = in.dyn[0] ? ocr_bucket_value(desc, in.dyn[0]) : 1;
        bs->width = ocr_bucket_value(desc, in.dyn[3]);
        if (bs->batch < 1 || bs->width < 1) {
            snprintf(err->msg, sizeof err->msg,
                     "config: bucket \"%s\" must give %s and %s, the model input's dynamic dims",
                     desc, in.dyn[0] ? in.dyn[0] : "(static batch)", in.dyn[3]);
            return BERTH_ERR_INVALID;
        }
        if (bs->width > ms->max_width) ms->max_width = bs->width;
    }
    ms->n_buckets = nb;
    return BERTH_OK;
}

/* The narrowest bucket width that holds `width`, or -1. */
static int64_t group_width(const ocr_rec *ms, int64_t width) {
    int64_t best = -1;
    for (uint32_t b = 0; b < ms->n_buckets; b++) {
        int64_t w = ms->bucket[b].width;
        if (w >= width && (best < 0 || w < best)) best = w;
    }
    return best;
}

/* How many of `left` images of a group to run next: the largest batch
 * size of that width that they fill completely, so no bucket runs rows
 * of padding (2 images with batch sizes 1 and 8 run as 1 + 1, not as 8
 * rows); when no size fits (no batch=1 bucket), the smallest size. */
static int64_t next_chunk(const ocr_rec *ms, int64_t width, int64_t left) {
    int64_t fill = 0, smallest = 0;
    for (uint32_t b = 0; b < ms->n_buckets; b++) {
        int64_t n = ms->bucket[b].batch;
        if (ms->bucket[b].width != width) continue;
        if (n <= left && n > fill) fill = n;
        if (!smallest || n < smallest) smallest = n;
    }
    return fill ? fill : (smallest < left ? smallest : left);
}

/* The bucket that holds exactly n images at a group width, or -1. */
static int32_t exact_bucket(const ocr_rec *ms, int64_t n, int64_t width) {
    for (uint32_t b = 0; b < ms->n_buckets; b++)
        if (ms->bucket[b].batch == n && ms->bucket[b].width == width) return (int32_t)b;
    return -1;
}

/* Decode row r of the output into its item. */
static void decode_row(ocr_rec *rc, ocr_line *it, int64_t r, int64_t *ids) {
    const berth_tensor *o = &rc->out;
    int64_t steps = o->dims[1], classes = o->dims[2];
    const float *probs = (const float *)o->data + r * steps * classes;
    int64_t n;
    ocr_ctc_decode(probs, steps, classes, ids, &n, &it->confidence);
    size_t cap = (size_t)n * rc->max_key_bytes + 1;
    berth_error err;
    it->text = malloc(cap);
    if (!it->text) {
        ocr_line_fail(it, "out of memory for the decoded text");
    } else if (ocr_keys_join(&rc->keys, ids, n, it->text, cap, &err) != BERTH_OK) {
        ocr_line_fail(it, err.msg);
    }
}

/* The width a batch runs at: its widest image, or, when dumping the
 * first batch, its group's bucket width, so the dumped input is the
 * whole of what the model ran on. */
static int64_t batch_width(const ocr_rec *rc, ocr_line **batch, int n) {
    int64_t width = 0;
    for (int i = 0; i < n; i++)
        if (batch[i]->width > width) width = batch[i]->width;
    if (rc->dump_input && !rc->dumped) width = batch[0]->group;
    return width;
}

/* Lays the batch's images into x ([n, 3, height, width], elems floats),
 * each padded on the right with OCR_PAD as PaddleOCR pads. */
static void fill_batch(const ocr_rec *ms, ocr_line **batch, int n, int64_t width, size_t plane, size_t elems,
                       float *x) {
    for (size_t i = 0; i < elems; i++) x[i] = OCR_PAD;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < 3; c++)
            for (int64_t y = 0; y < ms->height; y++)
                memcpy(x + ((size_t)i * 3 + (size_t)c) * plane + (size_t)y * (size_t)width,
                       batch[i]->pixels + ((size_t)c * (size_t)ms->height + (size_t)y) * (size_t)batch[i]->width,
                       sizeof(float) * (size_t)batch[i]->width);
}

/* The executor picks the bucket; the one of this batch's exact size and
 * group width is what it will pick, so build its plan first and time
 * the run alone. Sets *plan_ms when a plan was built; returns why it
 * failed, or NULL. */
static const char *plan_batch(ocr_rec *rc, ocr_line **batch, int n, double *plan_ms, berth_error *err) {
    int32_t planned = exact_bucket(rc, n, batch[0]->group);
    const char *why = NULL;
    if (planned >= 0 && !berth_executor_is_warm(rc->ex, 0, (uint32_t)planned)) {
        double t0 = ocr_now_ms();
        if (berth_executor_prepare(rc->ex, 0, (uint32_t)planned, err) != BERTH_OK) why = err->msg;
        *plan_ms = ocr_now_ms() - t0;
    }
    return why;
}

/* The model's output must be float32 [n, steps, classes] for the key
 * file berth was given; anything else would decode to wrong text. */
static const char *check_output(const ocr_rec *rc, int n, berth_error *err) {
    if (rc->out.dtype == BERTH_DTYPE_F32 && rc->out.rank == 3 && rc->out.dims[0] == n &&
        rc->out.dims[2] == rc->classes)
        return NULL;
    snprintf(err->msg, sizeof err->msg,
             "model output: expected float32 [%d, steps, %lld] (%lld classes: blank, the key "
             "file's lines, space), found dtype %d rank %u [%lld, %lld, %lld]",
             n, (long long)rc->classes, (long long)rc->classes, (int)rc->out.dtype, rc->out.rank,
             (long long)rc->out.dims[0], (long long)rc->out.dims[1], (long long)rc->out.dims[2]);
    return err->msg;
}

/* For --dump-input and --dump-output: writes the first batch's input
 * and output as .npy, so users can compare berth with another runtime.
 * Returns why a write failed, or NULL. */
static const char *dump_batch(ocr_rec *rc, const berth_tensor *in, berth_error *err) {
    if (rc->dump_input && !rc->dumped && ocr_npy_write(rc->dump_input, in, err)) return err->msg;
    if (rc->dump_output && !rc->dumped && ocr_npy_write(rc->dump_output, &rc->out, err)) return err->msg;
    return NULL;
}

/* Run one batch of images that share a group width. */
static void run_batch(ocr_rec *rc, ocr_line **batch, int n) {
    const ocr_rec *ms = rc;
    int64_t width = batch_width(rc, batch, n);
    size_t plane = (size_t)ms->height * (size_t)width;
    size_t elems = (size_t)n * 3 * plane;
    float *x = malloc(elems * sizeof *x);
    int64_t *ids = NULL;
    berth_error err;
    const char *why = NULL;
    if (!x) why = "out of memory for the batch";
    else fill_batch(ms, batch, n, width, plane, elems, x);
    berth_tensor in = {BERTH_DTYPE_F32, 4, {n, 3, ms->height, width}, x, elems * sizeof *x, 0};
    uint32_t bucket = 0;
    double ms_taken = 0, plan_ms = -1;
    if (!why) why = plan_batch(rc, batch, n, &plan_ms, &err);
    if (!why) {
        double t0 = ocr_now_ms();
        berth_status st = berth_executor_run(rc->ex, 0, &in, 1, &rc->out, 1, &bucket, &err);
        ms_taken = ocr_now_ms() - t0;
        if (st != BERTH_OK) why = err.msg;
    }
    if (!why) why = check_output(rc, n, &err);
    if (!why) why = dump_batch(rc, &in, &err);
    rc->dumped = 1;
    if (!why && !(ids = malloc(sizeof *ids * (size_t)(rc->out.dims[1] ? rc->out.dims[1] : 1))))
        why = "out of memory for decoding";
    char desc[96] = "";
    if (!why) berth_executor_bucket_describe(rc->ex, 0, bucket, desc, sizeof desc);
    for (int i = 0; i < n; i++) {
        ocr_line *it = batch[i];
        if (why) {
            ocr_line_fail(it, why);
        } else {
            decode_row(rc, it, i, ids);
            snprintf(it->bucket, sizeof it->bucket, "%s", desc);
            it->ms = ms_taken;
            it->batch_n = n;
            it->plan_ms = plan_ms;
        }
        free(it->pixels);
        it->pixels = NULL;
    }
    free(ids);
    free(x);
}

/* Batch the loaded images group by group, narrowest first, keeping
 * command-line order inside a group. */
void ocr_rec_run(ocr_rec *rc, ocr_line *items, int n_items) {
    ocr_line **batch = malloc(sizeof *batch * (size_t)(n_items ? n_items : 1));
    if (!batch) {
        for (int i = 0; i < n_items; i++)
            if (!items[i].failed) ocr_line_fail(&items[i], "out of memory for batching");
        return;
    }
    for (uint32_t g = 0; g < rc->n_buckets; g++) {
        int64_t width = rc->bucket[g].width;
        if (group_width(rc, width) != width) continue;
        int first_of_width = 1;
        for (uint32_t h = 0; h < g; h++)
            if (rc->bucket[h].width == width) first_of_width = 0;
        if (!first_of_width) continue;
        int64_t left = 0;
        for (int i = 0; i < n_items; i++) left += !items[i].failed && items[i].group == width;
        int64_t chunk = left ? next_chunk(rc, width, left) : 0;
        int n = 0;
        for (int i = 0; i < n_items && left > 0; i++) {
            if (items[i].failed || items[i].group != width) continue;
            batch[n++] = &items[i];
            if (n == chunk) {
                run_batch(rc, batch, n);
                left -= n;
                n = 0;
                if (left) chunk = next_chunk(rc, width, left);
            }
        }
    }
    free(batch);
}


ocr_image_fit ocr_rec_fit(const ocr_rec *r) {
    ocr_image_fit fit = {(int)r->height, r->max_width};
    return fit;
}

void ocr_rec_prepare(const ocr_rec *r, ocr_line *it, const ocr_image *img) {
    int64_t rw = ocr_resized_width(img->width, img->height, (int)r->height);
    it->group = group_width(r, rw);
    if (it->group < 0) {
        char why[160];
        snprintf(why, sizeof why, "%dx%d line is %lld pixels wide at height %lld; the widest bucket takes %lld",
                 img->width, img->height, (long long)rw, (long long)r->height, (long long)r->max_width);
        ocr_line_fail(it, why);
        return;
    }
    it->pixels = malloc(sizeof(float) * 3 * (size_t)r->height * (size_t)rw);
    if (!it->pixels) {
        ocr_line_fail(it, "out of memory for the resized line");
        return;
    }
    ocr_preprocess(img, (int)r->height, it->pixels, rw);
    it->width = rw;
}

berth_status ocr_rec_open(ocr_rec *r, const char *config, const char *model, const berth_open_options *opts,
                          const char *keys_path, berth_error *err) {
    memset(r, 0, sizeof *r);
    berth_status st = ocr_keys_load(keys_path, &r->keys, err);
    if (st != BERTH_OK) return st;
    berth_open_options o = opts ? *opts : (berth_open_options){.struct_size = sizeof o, .log_level = BERTH_LOG_WARN};
    o.model = model;
    if ((st = berth_executor_open(config, &o, &r->ex, err)) == BERTH_OK &&
        (st = read_model_shape(r->ex, r, err)) == BERTH_OK) {
        r->classes = (int64_t)ocr_keys_classes(&r->keys);
        for (size_t k = 0; k < r->keys.count; k++) {
            size_t len = strlen(r->keys.line[k]);
            if (len > r->max_key_bytes) r->max_key_bytes = len;
        }
        if (r->max_key_bytes < 1) r->max_key_bytes = 1; /* the space class */
        return BERTH_OK;
    }
    ocr_rec_close(r);
    return st;
}

void ocr_rec_close(ocr_rec *r) {
    berth_tensor_release(&r->out);
    if (r->ex) berth_executor_close(r->ex);
    ocr_keys_free(&r->keys);
    memset(r, 0, sizeof *r);
}
