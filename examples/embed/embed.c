/* The smallest program that embeds berth: open a deployment from its
 * config, run one batch, print the output. Built and run by the tests
 * (tests/examples) on config/cpu.ini.
 *
 *   embed CONFIG */
#include <stdio.h>

#include <berth/berth.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: embed CONFIG\n");
        return 2;
    }
    berth_error err;
    berth_executor *ex;
    if (berth_executor_open(argv[1], NULL, &ex, &err) != BERTH_OK) {
        fprintf(stderr, "embed: %s\n", err.msg);
        return 1;
    }
    float x[3][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0.5f, -0.5f, 0.25f, 2}};
    berth_tensor in = {BERTH_DTYPE_F32, 2, {3, 4}, x, sizeof x, 0};
    berth_tensor out = {0}; /* grown by berth on first use, reused after */
    uint32_t bucket;
    int rc = 0;
    if (berth_executor_run(ex, 0, &in, 1, &out, 1, &bucket, &err) != BERTH_OK) {
        fprintf(stderr, "embed: %s\n", err.msg);
        rc = 1;
    } else {
        char desc[64];
        berth_executor_bucket_describe(ex, 0, bucket, desc, sizeof desc);
        printf("bucket %s, output [%lld, %lld]\n", desc, (long long)out.dims[0],
               (long long)out.dims[1]);
        const float *y = out.data;
        for (int64_t r = 0; r < out.dims[0]; r++) {
            for (int64_t c = 0; c < out.dims[1]; c++) printf(" %9.5f", y[r * out.dims[1] + c]);
            printf("\n");
        }
    }
    berth_tensor_release(&out);
    berth_executor_close(ex);
    return rc;
}
