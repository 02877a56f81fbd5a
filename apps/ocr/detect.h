/* Text detection with PP-OCRv4's detector (DBNet): the page resized
 * within a maximum side to multiples of 32 and normalized as PP-OCR does
 * (BGR planes, ImageNet's mean and deviation), run in the smallest bucket
 * of the model's stage that holds it, the probability map turned into
 * boxes (boxes.h). */
#ifndef OCR_DETECT_H
#define OCR_DETECT_H

#include <berth/berth.h>

#include "boxes.h"
#include "image.h"

#define OCR_DET_MAX_BUCKETS 64

typedef struct ocr_det {
    berth_executor *ex;
    uint32_t n_buckets;
    int64_t bucket_h[OCR_DET_MAX_BUCKETS], bucket_w[OCR_DET_MAX_BUCKETS];
    int max_side; /* the longest side a page is resized to */
    ocr_box_params boxes;
    berth_tensor out;
} ocr_det;

typedef struct ocr_det_report {
    int width, height; /* the page as the model saw it */
    char bucket[96];
    double run_ms, boxes_ms, plan_ms; /* plan_ms < 0: the plan was warm */
} ocr_det_report;

/* Opens model `model` of config; max_side 0: the largest the buckets
 * take (at most 960, PP-OCR's default). */
berth_status ocr_det_open(ocr_det *d, const char *config, const char *model, const berth_open_options *opts,
                          int max_side, berth_error *err);
void ocr_det_close(ocr_det *d);

/* The boxes of a page, sorted in reading order; *boxes is malloc'd. */
berth_status ocr_det_run(ocr_det *d, const ocr_image *page, ocr_box **boxes, size_t *n, ocr_det_report *rep,
                         berth_error *err);

#endif
