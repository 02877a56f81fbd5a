/* The first vertical slice's model, written by the tests themselves:
 * y = relu(x W1 + b1) W2 + b2 over a dynamic batch, weights from a fixed
 * seed, and a reference forward pass in double precision. */
#ifndef BERTH_TEST_SLICE_FIXTURE_H
#define BERTH_TEST_SLICE_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#define SLICE_IN 4
#define SLICE_HID 8
#define SLICE_OUT 3

typedef struct slice_model {
    float w1[SLICE_IN * SLICE_HID], b1[SLICE_HID], w2[SLICE_HID * SLICE_OUT], b2[SLICE_OUT];
    char dir[64]; /* temp directory holding model.webnn, model.safetensors */
} slice_model;

/* Writes the graph and weights into a fresh temp dir; 0 on success. */
int slice_model_write(slice_model *m, uint32_t seed);
/* Writes DIR/NAME with `text`; returns the path in buf. */
const char *slice_write_file(const slice_model *m, const char *name, const char *text, char *buf,
                             size_t cap);
void slice_model_remove(slice_model *m);
/* The reference forward pass for `rows` rows. */
void slice_reference(const slice_model *m, const float *x, int rows, double *y);

#endif
