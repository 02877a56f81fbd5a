/* Recognition of text lines with PP-OCRv4's recognizer: each line
 * resized to the model's height, lines grouped by the narrowest bucket
 * width of the model's stage that holds them and run in batches (the
 * executor picks the bucket and pads), the output CTC-decoded against
 * the key file. */
#ifndef OCR_RECOGNIZE_H
#define OCR_RECOGNIZE_H

#include <stdint.h>

#include <berth/berth.h>

#include "ctc.h"
#include "image.h"

#define OCR_MAX_BUCKETS 64

typedef struct ocr_bucket_size {
    int64_t batch;
    int64_t width;
} ocr_bucket_size;

typedef struct ocr_rec {
    berth_executor *ex;
    ocr_keys keys;
    size_t max_key_bytes;
    int64_t height;
    int64_t classes; /* what the key file makes: blank, its lines, space */
    uint32_t n_buckets;
    ocr_bucket_size bucket[OCR_MAX_BUCKETS];
    int64_t max_width;
    const char *dump_input, *dump_output; /* the first batch's, as .npy; NULL: none */
    int dumped;
    berth_tensor out;
} ocr_rec;

/* One line to read. `name` names it in messages (a file, or a page and
 * its line number). */
typedef struct ocr_line {
    const char *name;
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
} ocr_line;

/* Opens model `model` of config (NULL: [model]) with opts, and the keys. */
berth_status ocr_rec_open(ocr_rec *r, const char *config, const char *model, const berth_open_options *opts,
                          const char *keys_path, berth_error *err);
void ocr_rec_close(ocr_rec *r);

/* The widest line the buckets take, as an image-loader fit. */
ocr_image_fit ocr_rec_fit(const ocr_rec *r);

/* Resizes img into the line (or marks it failed with a message). */
void ocr_rec_prepare(const ocr_rec *r, ocr_line *line, const ocr_image *img);

/* Reads every line not failed, in batches. */
void ocr_rec_run(ocr_rec *r, ocr_line *lines, int n);

/* Prints "berth-ocr: NAME: why" and marks the line failed. */
void ocr_line_fail(ocr_line *line, const char *why);

double ocr_now_ms(void);

/* Value of `name=` in a bucket description such as "batch=8 width=320",
 * or -1. */
int64_t ocr_bucket_value(const char *desc, const char *name);

#endif
