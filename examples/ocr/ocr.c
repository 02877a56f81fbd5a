/* berth-ocr: recognize the text of line images with PaddleOCR's
 * PP-OCRv4 recognizer, on the public berth API only.
 *
 *   berth-ocr [--dump-input IN.npy] [--dump-output OUT.npy] CONFIG KEYS IMAGE...
 *
 * Each image is decoded (PNG or JPEG), resized to the model's height
 * keeping its aspect ratio and normalized as PaddleOCR does. Images are
 * grouped by the narrowest bucket width of the config's stage that holds
 * them and run in batches; the executor picks the bucket and pads. The
 * output is CTC-decoded against KEYS (ppocr_keys_v1.txt).
 *
 * Prints one line per image, in command-line order:
 *   FILE <TAB> TEXT <TAB> confidence C <TAB> bucket B <TAB> time T
 * A bad image gets a one-line error on stderr and the others go on; the
 * exit status is 1 if any image failed, 2 for a usage error.
 *
 * --dump-input/--dump-output write the first batch's input (padded to
 * its bucket's width here, so the file is exactly what the model ran on)
 * and its raw output as .npy, for comparing with another runtime. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <berth/berth.h>

#include "ctc.h"
#include "image.h"
#include "npy.h"
#include "preprocess.h"

/* Value padded columns get inside a batch: 0 after normalization, as
 * PaddleOCR pads. config/ocr-cpu.ini's [inputs.x] pad says the same for
 * the columns the executor adds up to the bucket. */
#define OCR_PAD 0.0f
#define OCR_MAX_BUCKETS 64

typedef struct bucket_size {
    int64_t batch;
    int64_t width;
} bucket_size;

typedef struct model_shape {
    int64_t height;
    int64_t classes; /* what the key file makes: blank, its lines, space */
    uint32_t n_buckets;
    bucket_size bucket[OCR_MAX_BUCKETS];
    int64_t max_width;
} model_shape;

typedef struct item {
    const char *path;
    float *pixels; /* [3][height][width], freed once its batch ran */
    int64_t width;
    int64_t group; /* bucket width it is batched under */
    int failed;
    char *text;
    float confidence;
    char bucket[96];
    double ms;
    int batch_n;
    double plan_ms; /* < 0: the plan was warm */
} item;

typedef struct run_ctx {
    berth_executor *ex;
    const model_shape *shape;
    const ocr_keys *keys;
    size_t max_key_bytes;
    const char *dump_input;
    const char *dump_output;
    int dumped;
    berth_tensor out;
} run_ctx;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Value of `name=` in a bucket description such as "batch=8 width=320". */
static int64_t describe_value(const char *desc, const char *name) {
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
static berth_status read_model_shape(berth_executor *ex, model_shape *ms, berth_error *err) {
    memset(ms, 0, sizeof *ms);
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
        bucket_size *bs = &ms->bucket[b];
        bs->batch = in.dyn[0] ? describe_value(desc, in.dyn[0]) : 1;
        bs->width = describe_value(desc, in.dyn[3]);
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
static int64_t group_width(const model_shape *ms, int64_t width) {
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
static int64_t next_chunk(const model_shape *ms, int64_t width, int64_t left) {
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
static int32_t exact_bucket(const model_shape *ms, int64_t n, int64_t width) {
    for (uint32_t b = 0; b < ms->n_buckets; b++)
        if (ms->bucket[b].batch == n && ms->bucket[b].width == width) return (int32_t)b;
    return -1;
}

/* msg names the file already (the image loader's messages do). */
static void fail_item(item *it, const char *msg) {
    fprintf(stderr, "berth-ocr: %s\n", msg);
    it->failed = 1;
}

static void fail_item_why(item *it, const char *why) {
    fprintf(stderr, "berth-ocr: %s: %s\n", it->path, why);
    it->failed = 1;
}

static void load_item(item *it, const model_shape *ms) {
    berth_error err;
    ocr_image img;
    /* The loader refuses an image too wide for every bucket from its
     * header's sizes, so a 65535-pixel-wide line is never decoded. */
    ocr_image_fit fit = {(int)ms->height, ms->max_width};
    if (ocr_image_load(it->path, &fit, &img, &err) != BERTH_OK) {
        fail_item(it, err.msg);
        return;
    }
    int64_t rw = ocr_resized_width(img.width, img.height, (int)ms->height);
    it->group = group_width(ms, rw);
    if (it->group < 0) { /* not reached: the fit above is the widest bucket */
        ocr_image_free(&img);
        fail_item_why(it, "no bucket is wide enough for the image");
        return;
    }
    it->pixels = malloc(sizeof(float) * 3 * (size_t)ms->height * (size_t)rw);
    if (!it->pixels) {
        ocr_image_free(&img);
        fail_item_why(it, "out of memory for the resized image");
        return;
    }
    ocr_preprocess(&img, (int)ms->height, it->pixels, rw);
    it->width = rw;
    ocr_image_free(&img);
}

/* Decode row r of the output into its item. */
static void decode_row(run_ctx *rc, item *it, int64_t r, int64_t *ids) {
    const berth_tensor *o = &rc->out;
    int64_t steps = o->dims[1], classes = o->dims[2];
    const float *probs = (const float *)o->data + r * steps * classes;
    int64_t n;
    ocr_ctc_decode(probs, steps, classes, ids, &n, &it->confidence);
    size_t cap = (size_t)n * rc->max_key_bytes + 1;
    berth_error err;
    it->text = malloc(cap);
    if (!it->text) {
        fail_item_why(it, "out of memory for the decoded text");
    } else if (ocr_keys_join(rc->keys, ids, n, it->text, cap, &err) != BERTH_OK) {
        fail_item_why(it, err.msg);
    }
}

/* Run one batch of images that share a group width. */
static void run_batch(run_ctx *rc, item **batch, int n) {
    const model_shape *ms = rc->shape;
    int64_t width = 0;
    for (int i = 0; i < n; i++)
        if (batch[i]->width > width) width = batch[i]->width;
    /* When dumping, pad here to the bucket width so the dumped input is
     * the whole of what the model ran on. */
    if (rc->dump_input && !rc->dumped) width = batch[0]->group;
    size_t plane = (size_t)ms->height * (size_t)width;
    size_t elems = (size_t)n * 3 * plane;
    float *x = malloc(elems * sizeof *x);
    int64_t *ids = NULL;
    berth_error err;
    const char *why = NULL;
    if (!x) {
        why = "out of memory for the batch";
    } else {
        for (size_t i = 0; i < elems; i++) x[i] = OCR_PAD;
        for (int i = 0; i < n; i++)
            for (int c = 0; c < 3; c++)
                for (int64_t y = 0; y < ms->height; y++)
                    memcpy(x + ((size_t)i * 3 + (size_t)c) * plane + (size_t)y * (size_t)width,
                           batch[i]->pixels + ((size_t)c * (size_t)ms->height + (size_t)y) *
                                                  (size_t)batch[i]->width,
                           sizeof(float) * (size_t)batch[i]->width);
    }
    berth_tensor in = {BERTH_DTYPE_F32, 4, {n, 3, ms->height, width}, x, elems * sizeof *x, 0};
    uint32_t bucket = 0;
    double ms_taken = 0, plan_ms = -1;
    if (!why) {
        /* The executor picks the bucket; the one of this batch's exact
         * size and group width is what it will pick, so build its plan
         * first and time the run alone. */
        int32_t planned = exact_bucket(ms, n, batch[0]->group);
        if (planned >= 0 && !berth_executor_is_warm(rc->ex, 0, (uint32_t)planned)) {
            double t0 = now_ms();
            if (berth_executor_prepare(rc->ex, 0, (uint32_t)planned, &err) != BERTH_OK)
                why = err.msg;
            plan_ms = now_ms() - t0;
        }
    }
    if (!why) {
        double t0 = now_ms();
        berth_status st = berth_executor_run(rc->ex, 0, &in, 1, &rc->out, 1, &bucket, &err);
        ms_taken = now_ms() - t0;
        if (st != BERTH_OK) why = err.msg;
    }
    if (!why && (rc->out.dtype != BERTH_DTYPE_F32 || rc->out.rank != 3 ||
                 rc->out.dims[0] != n || rc->out.dims[2] != ms->classes)) {
        snprintf(err.msg, sizeof err.msg,
                 "model output: expected float32 [%d, steps, %lld] (%lld classes: blank, the key "
                 "file's lines, space), found dtype %d rank %u [%lld, %lld, %lld]",
                 n, (long long)ms->classes, (long long)ms->classes, (int)rc->out.dtype,
                 rc->out.rank, (long long)rc->out.dims[0], (long long)rc->out.dims[1],
                 (long long)rc->out.dims[2]);
        why = err.msg;
    }
    if (!why && rc->dump_input && !rc->dumped && ocr_npy_write(rc->dump_input, &in, &err))
        why = err.msg;
    if (!why && rc->dump_output && !rc->dumped && ocr_npy_write(rc->dump_output, &rc->out, &err))
        why = err.msg;
    rc->dumped = 1;
    if (!why && !(ids = malloc(sizeof *ids * (size_t)(rc->out.dims[1] ? rc->out.dims[1] : 1))))
        why = "out of memory for decoding";
    char desc[96] = "";
    if (!why) berth_executor_bucket_describe(rc->ex, 0, bucket, desc, sizeof desc);
    for (int i = 0; i < n; i++) {
        item *it = batch[i];
        if (why) {
            fail_item_why(it, why);
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
static void run_all(run_ctx *rc, item *items, int n_items) {
    item **batch = malloc(sizeof *batch * (size_t)(n_items ? n_items : 1));
    if (!batch) {
        for (int i = 0; i < n_items; i++)
            if (!items[i].failed) fail_item_why(&items[i], "out of memory for batching");
        return;
    }
    for (uint32_t g = 0; g < rc->shape->n_buckets; g++) {
        int64_t width = rc->shape->bucket[g].width;
        if (group_width(rc->shape, width) != width) continue;
        int first_of_width = 1;
        for (uint32_t h = 0; h < g; h++)
            if (rc->shape->bucket[h].width == width) first_of_width = 0;
        if (!first_of_width) continue;
        int64_t left = 0;
        for (int i = 0; i < n_items; i++) left += !items[i].failed && items[i].group == width;
        int64_t chunk = left ? next_chunk(rc->shape, width, left) : 0;
        int n = 0;
        for (int i = 0; i < n_items && left > 0; i++) {
            if (items[i].failed || items[i].group != width) continue;
            batch[n++] = &items[i];
            if (n == chunk) {
                run_batch(rc, batch, n);
                left -= n;
                n = 0;
                if (left) chunk = next_chunk(rc->shape, width, left);
            }
        }
    }
    free(batch);
}

static int usage(void) {
    fprintf(stderr,
            "usage: berth-ocr [--dump-input IN.npy] [--dump-output OUT.npy] CONFIG KEYS IMAGE...\n");
    return 2;
}

int main(int argc, char **argv) {
    run_ctx rc;
    memset(&rc, 0, sizeof rc);
    int argi = 1;
    while (argi < argc && strncmp(argv[argi], "--", 2) == 0) {
        if (strcmp(argv[argi], "--dump-input") == 0 && argi + 1 < argc)
            rc.dump_input = argv[argi + 1];
        else if (strcmp(argv[argi], "--dump-output") == 0 && argi + 1 < argc)
            rc.dump_output = argv[argi + 1];
        else
            return usage();
        argi += 2;
    }
    if (argc - argi < 3) return usage();
    const char *config = argv[argi], *keys_path = argv[argi + 1];
    int n_items = argc - argi - 2;

    berth_error err;
    ocr_keys keys;
    if (ocr_keys_load(keys_path, &keys, &err) != BERTH_OK) {
        fprintf(stderr, "berth-ocr: %s\n", err.msg);
        return 1;
    }
    berth_executor *ex;
    if (berth_executor_open(config, NULL, &ex, &err) != BERTH_OK) {
        fprintf(stderr, "berth-ocr: %s\n", err.msg);
        ocr_keys_free(&keys);
        return 1;
    }
    /* On stderr, so stdout stays one line per image: which device this
     * config put the model on. */
    fprintf(stderr, "%s: backend %s, device %s\n", config, berth_executor_backend(ex),
            berth_executor_device(ex));
    model_shape shape;
    read_model_shape(ex, &shape, &err);
    shape.classes = (int64_t)ocr_keys_classes(&keys);
    item *items = calloc((size_t)n_items, sizeof *items);
    if (shape.n_buckets == 0 || !items) {
        fprintf(stderr, "berth-ocr: %s\n", items ? err.msg : "out of memory");
        free(items);
        berth_executor_close(ex);
        ocr_keys_free(&keys);
        return 1;
    }
    rc.ex = ex;
    rc.shape = &shape;
    rc.keys = &keys;
    for (size_t k = 0; k < keys.count; k++) {
        size_t len = strlen(keys.line[k]);
        if (len > rc.max_key_bytes) rc.max_key_bytes = len;
    }
    if (rc.max_key_bytes < 1) rc.max_key_bytes = 1; /* the space class */

    for (int i = 0; i < n_items; i++) {
        items[i].path = argv[argi + 2 + i];
        load_item(&items[i], &shape);
    }
    run_all(&rc, items, n_items);

    int failed = 0;
    for (int i = 0; i < n_items; i++) {
        item *it = &items[i];
        if (it->failed) {
            failed = 1;
        } else {
            char plan[64] = "";
            if (it->plan_ms >= 0) snprintf(plan, sizeof plan, "; plan built in %.0f ms", it->plan_ms);
            printf("%s\t%s\tconfidence %.4f\tbucket %s\ttime %.1f ms (batch of %d%s)\n", it->path,
                   it->text, (double)it->confidence, it->bucket, it->ms, it->batch_n, plan);
        }
        free(it->text);
        free(it->pixels);
    }
    free(items);
    berth_tensor_release(&rc.out);
    berth_executor_close(ex);
    ocr_keys_free(&keys);
    return failed;
}
