/* Bytes in, a small valid graph out: .webnn text over f32 inputs, the
 * inputs' values, and the shape the generator expects for every output
 * (worked out here, independently of the engine's shape inference).
 *
 * The front of the bytes picks the structure (ops, shapes, options), the
 * back the input values, so a fuzzer mutating a value leaves the graph
 * alone. Past the end of the bytes, a generator seeded from them carries
 * on, so any input, even an empty one, makes a graph. */
#ifndef BERTH_TEST_GRAPH_GEN_H
#define BERTH_TEST_GRAPH_GEN_H

#include <stddef.h>
#include <stdint.h>

#define GEN_MAX_RANK 4
#define GEN_MAX_NUMEL 384
#define GEN_MAX_INPUTS 16
#define GEN_MAX_OUTPUTS 4
#define GEN_MAX_VALUES 96

typedef struct gen_shape {
    uint32_t rank;
    int64_t dims[GEN_MAX_RANK + 1];
} gen_shape;

typedef struct gen_graph {
    char text[24576];
    uint32_t n_inputs;
    char input_name[GEN_MAX_INPUTS][16];
    gen_shape input_shape[GEN_MAX_INPUTS];
    float *input_data[GEN_MAX_INPUTS]; /* values in [-4, 4), malloc'd */
    uint32_t n_outputs;
    char output_name[GEN_MAX_OUTPUTS][16];
    gen_shape output_shape[GEN_MAX_OUTPUTS];
} gen_graph;

/* Fills g from the bytes; returns 0, or -1 when out of memory. */
int gen_graph_make(gen_graph *g, const uint8_t *data, size_t size);
void gen_graph_free(gen_graph *g);
size_t gen_numel(const gen_shape *s);

#endif
