/* The text angle classifier (PP-OCR's cls model): each cut-out line
 * resized to the model's 48 x 192 (its width at most 192, the rest
 * padded), run in batches up to the largest bucket; a line the model
 * calls turned by 180 degrees with a score above 0.9 is turned back, as
 * PP-OCR does. */
#ifndef OCR_CLASSIFY_H
#define OCR_CLASSIFY_H

#include <berth/berth.h>

#include "image.h"

#define OCR_CLS_MAX_BUCKETS 64

typedef struct ocr_cls {
    berth_executor *ex;
    int64_t height, width;  /* the model's input size */
    int64_t max_batch;
    float thresh;           /* 0.9 */
    berth_tensor out;
} ocr_cls;

berth_status ocr_cls_open(ocr_cls *c, const char *config, const char *model, const berth_open_options *opts,
                          berth_error *err);
void ocr_cls_close(ocr_cls *c);

/* Classifies lines[0..n) and turns the upside-down ones in place;
 * turned[i] says which were. *ms adds the time the runs took. */
berth_status ocr_cls_run(ocr_cls *c, ocr_image *lines, int n, int *turned, double *ms, berth_error *err);

#endif
