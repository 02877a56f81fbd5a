/* Forty dynamic dims in one graph: input x<k>, f32[1, n], has its own
 * dim n, and output z<k> = concat([x<k> + x<k>, x<k>], 0), f32[2, n],
 * follows that dim alone. Each output must come back trimmed by its own dim's
 * asked/bucket ratio. Which output dims scale with which dyn dim is a
 * 64-bit set per dim: dims 32 and up must land on their own bits, not
 * on those of dims 0 to 7. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/berth.h"
#include "check.h"
#include "slice_fixture.h"

#define N_DIMS 40
#define BUCKET 4

/* Dim k's name: one letter, so the bucket's line stays within what
 * inih reads (a-z, then A-N). */
static char dim_name(int k) { return (char)(k < 26 ? 'a' + k : 'A' + (k - 26)); }

/* Asked size of dim k: 1 to 4, so no two neighbouring dims trim alike. */
static int64_t asked_rows(int k) { return (k * 3) % BUCKET + 1; }

int main(void) {
    slice_model m; /* for its temp dir, file helpers and a weights file */
    if (slice_model_write(&m, 1)) return 1;
    static char graph[16384], ini[4096];
    size_t o = (size_t)snprintf(graph, sizeof graph, "webnn_graph \"many\" v2 {\n  inputs {\n");
    for (int k = 0; k < N_DIMS; k++)
        o += (size_t)snprintf(graph + o, sizeof graph - o, "    x%d: f32[1, dyn(\"%c\", %d)];\n", k, dim_name(k), BUCKET);
    o += (size_t)snprintf(graph + o, sizeof graph - o, "  }\n  nodes {\n");
    for (int k = 0; k < N_DIMS; k++)
        o += (size_t)snprintf(graph + o, sizeof graph - o, "    a%d = add(x%d, x%d);\n    z%d = concat([a%d, x%d], 0);\n",
                              k, k, k, k, k, k);
    o += (size_t)snprintf(graph + o, sizeof graph - o, "  }\n  outputs {");
    for (int k = 0; k < N_DIMS; k++) o += (size_t)snprintf(graph + o, sizeof graph - o, " z%d;", k);
    snprintf(graph + o, sizeof graph - o, " }\n}\n");
    char path[256];
    slice_write_file(&m, "many.webnn", graph, path, sizeof path);

    o = (size_t)snprintf(ini, sizeof ini, "[model]\ngraph = many.webnn\nweights = model.safetensors\n"
                                          "[buckets]\nall =");
    for (int k = 0; k < N_DIMS; k++) o += (size_t)snprintf(ini + o, sizeof ini - o, " %c=%d", dim_name(k), BUCKET);
    snprintf(ini + o, sizeof ini - o, "\n[backend]\nuse = cpu\n");
    berth_executor *ex = NULL;
    berth_error err;
    berth_status st = berth_executor_open(slice_write_file(&m, "many.ini", ini, path, sizeof path), NULL,
                                          &ex, &err);
    CHECK(st == BERTH_OK);
    if (st != BERTH_OK) {
        fprintf(stderr, "open: %s\n", err.msg);
        slice_model_remove(&m);
        return check_exit();
    }
    CHECK(berth_executor_prepare(ex, 0, 0, &err) == BERTH_OK);

    static float x[N_DIMS][BUCKET];
    berth_tensor in[N_DIMS], out[N_DIMS];
    memset(out, 0, sizeof out);
    for (int k = 0; k < N_DIMS; k++) {
        for (int i = 0; i < BUCKET; i++) x[k][i] = (float)(k * 10 + i + 1);
        in[k] = (berth_tensor){BERTH_DTYPE_F32, 2, {1, asked_rows(k)}, x[k],
                               sizeof(float) * (size_t)asked_rows(k), 0};
    }
    uint32_t bucket = 99;
    st = berth_executor_run(ex, 0, in, N_DIMS, out, N_DIMS, &bucket, &err);
    CHECK(st == BERTH_OK);
    if (st != BERTH_OK) fprintf(stderr, "run: %s\n", err.msg);
    CHECK(bucket == 0);
    for (int k = 0; k < N_DIMS && st == BERTH_OK; k++) {
        int64_t n = asked_rows(k);
        CHECK(out[k].rank == 2 && out[k].dims[0] == 2);
        if (out[k].dims[1] != n) {
            fprintf(stderr, "z%d: %lld columns, want %lld\n", k, (long long)out[k].dims[1], (long long)n);
            CHECK(0);
            continue;
        }
        CHECK(out[k].bytes == sizeof(float) * (size_t)(2 * n));
        const float *z = out[k].data;
        for (int64_t i = 0; i < n; i++) {
            CHECK(z[i] == 2 * x[k][i]);
            CHECK(z[n + i] == x[k][i]);
        }
    }
    for (int k = 0; k < N_DIMS; k++) berth_tensor_release(&out[k]);
    berth_executor_close(ex);
    slice_model_remove(&m);
    return check_exit();
}
