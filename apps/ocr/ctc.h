/* Greedy CTC decoding of the recognizer's per-step class probabilities
 * and the character table (PaddleOCR's key file) that names the classes. */
#ifndef OCR_CTC_H
#define OCR_CTC_H

#include <stddef.h>
#include <stdint.h>

#include <berth/berth.h>

/* Class 0 is the CTC blank; class i (1 <= i <= count) is line i of the
 * key file; class count + 1 is a space. */
typedef struct ocr_keys {
    char *text;     /* the file's bytes, each line NUL-terminated in place */
    char **line;    /* count pointers into text */
    size_t count;
} ocr_keys;

berth_status ocr_keys_load(const char *path, ocr_keys *keys, berth_error *err);
void ocr_keys_free(ocr_keys *keys);
/* Number of classes the model must output for these keys. */
size_t ocr_keys_classes(const ocr_keys *keys);
/* The text of class id (1..count+1); NULL for the blank or out of range. */
const char *ocr_keys_text(const ocr_keys *keys, int64_t id);

/* Decode probs[steps][classes]: argmax per step, collapse repeats, drop
 * blanks. Kept class ids go to ids (room for `steps`), their number to
 * *n_ids. *confidence is the mean of the kept steps' max probabilities,
 * 0 when nothing is kept. Ties go to the lower class id. */
void ocr_ctc_decode(const float *probs, int64_t steps, int64_t classes, int64_t *ids,
                    int64_t *n_ids, float *confidence);

/* Concatenate the texts of ids into out (cap bytes, NUL-terminated).
 * BERTH_ERR_INVALID naming the id when one has no text; BERTH_ERR_NOMEM
 * when out is too small. */
berth_status ocr_keys_join(const ocr_keys *keys, const int64_t *ids, int64_t n, char *out,
                           size_t cap, berth_error *err);

#endif
