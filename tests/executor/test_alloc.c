/* Once a bucket's plan exists and the caller's output has grown, a run
 * allocates nothing on the host: 1,000 batches through a warm bucket,
 * counted by alloc_count.c, must make zero allocations. With argument
 * `split`, the model runs split between the partial fixture and cpu
 * (three subgraphs, two tensors crossing through host buffers). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "berth/berth.h"
#include "check.h"
#include "slice_fixture.h"

int main(int argc, char **argv) {
    int split = argc > 1 && !strcmp(argv[1], "split");
    slice_model model;
    if (slice_model_write(&model, 7)) return 1;
    char path[256];
    slice_write_file(&model, "alloc.ini",
                     split ? "[model]\ngraph = model.webnn\nweights = model.safetensors\n"
                             "[backend]\nuse = " PARTIAL_MODULE ", cpu\nsplit = first\n"
                             "[backend.cpu]\nthreads = 2\n"
                             "[buckets]\nrows = batch=4 | batch=16\n"
                           : "[model]\ngraph = model.webnn\nweights = model.safetensors\n"
                             "[backend.cpu]\nthreads = 2\n"
                             "[buckets]\nrows = batch=4 | batch=16\n",
                     path, sizeof path);
    berth_executor *ex;
    berth_error err;
    CHECK(berth_executor_open(path, NULL, &ex, &err) == BERTH_OK);
    if (check_failures) {
        fprintf(stderr, "open: %s\n", err.msg);
        return check_exit();
    }
    CHECK(berth_executor_backend_count(ex) == (split ? 2u : 1u));
    float x[16 * SLICE_IN];
    for (int i = 0; i < 16 * SLICE_IN; i++) x[i] = (float)(i % 11) / 10.0f - 0.5f;
    berth_tensor in = {BERTH_DTYPE_F32, 2, {4, SLICE_IN}, x, sizeof(float) * 4 * SLICE_IN, 0};
    berth_tensor out;
    memset(&out, 0, sizeof out);
    /* the first run plans the bucket and grows `out` to the largest batch
     * of the loop below: allocations allowed */
    CHECK(berth_executor_run(ex, 0, &in, 1, &out, 1, NULL, &err) == BERTH_OK);

    /* the counter itself must see allocations, or a zero proves nothing */
    alloc_count_start();
    void *volatile probe = malloc(64);
    free(probe);
    CHECK(alloc_count_stop() == 2);

    size_t allocs = 0;
    int failed = 0;
    alloc_count_start();
    for (int i = 0; i < 1000; i++) {
        in.dims[0] = 1 + i % 4; /* padded into the same batch=4 bucket */
        in.bytes = sizeof(float) * (size_t)in.dims[0] * SLICE_IN;
        failed |= berth_executor_run(ex, 0, &in, 1, &out, 1, NULL, &err) != BERTH_OK;
    }
    allocs = alloc_count_stop();
    CHECK(!failed);
    printf("allocations in 1000 warm runs: %zu\n", allocs);
    CHECK(allocs == 0);

    berth_tensor_release(&out);
    berth_executor_close(ex);
    slice_model_remove(&model);
    return check_exit();
}
