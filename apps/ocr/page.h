/* A whole page read by the three models: the detector's boxes, each box
 * cut out upright, turned back where the angle classifier says, and
 * read by the recognizer in batches. Shared by berth-ocr and the OCR
 * library the Python package calls (libberthocr). */
#ifndef OCR_PAGE_H
#define OCR_PAGE_H

#include <berth/berth.h>

#include "boxes.h"
#include "classify.h"
#include "detect.h"
#include "image.h"
#include "recognize.h"

/* A page narrower than this, or longer than this many times its width
 * (or the reverse), holds no text the detector can find. */
#define OCR_PAGE_MIN_SIDE 8
#define OCR_PAGE_MAX_RATIO 64

typedef struct ocr_pipeline {
    ocr_det det;
    ocr_cls cls;
    ocr_rec rec;
    int with_cls;
} ocr_pipeline;

typedef struct ocr_page_times {
    double detect, boxes, classify, recognize, total;
} ocr_page_times;

/* What ocr_read_page found: n boxes in reading order and, per box, its
 * line (text, confidence; failed when the recognizer could not read
 * it) and whether it was turned back. */
typedef struct ocr_page {
    size_t n;
    ocr_box *boxes;
    ocr_line *lines;
    int *turned;
    ocr_det_report rep;
    ocr_page_times t;
    char (*names)[80]; /* the lines' names in messages */
} ocr_page;

/* Opens [model.det], [model.cls] (with_cls) and [model.rec] of config;
 * on failure nothing is left open. max_side: see ocr_det_open. */
berth_status ocr_pipeline_open(ocr_pipeline *p, const char *config, const char *keys, int max_side, int with_cls,
                               berth_error *err);
void ocr_pipeline_close(ocr_pipeline *p);

/* Reads a decoded page; `name` names it in messages. On failure err
 * names the page and the stage, and *page is empty. */
berth_status ocr_read_page(ocr_pipeline *p, const char *name, const ocr_image *img, ocr_page *page,
                           berth_error *err);
void ocr_page_free(ocr_page *page);

#endif
