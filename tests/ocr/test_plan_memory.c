/* The PP-OCR recognizer's plan for one bucket on vulkan against cpu: a
 * GPU plan places its intermediates and scratch by liveness as cpu's
 * does, so apart from its io (the host-visible staging of inputs and
 * outputs a GPU plan needs and cpu's does not, printed beside) it may
 * hold at most 1.25 times cpu's bytes. Only plans are built, nothing is
 * run; plan bytes are deterministic.
 *   test_plan_memory CONFIG MODEL BUCKET    e.g. ocr-cpu.ini rec "batch=8 width=320"
 * Exits 77 where no Vulkan device exists. */
#include <stdio.h>
#include <string.h>

#include "berth/berth.h"

/* The plan bytes of MODEL's bucket on `use` less their io (in *io); 0
 * with a message on failure, UINT64_MAX where the backend could not open. */
static uint64_t plan_bytes(const char *config, const char *model, const char *bucket, const char *use, uint64_t *io) {
    berth_open_options o = {.struct_size = sizeof o, .log_level = BERTH_LOG_ERROR, .use = use, .model = model};
    berth_executor *ex;
    berth_error err;
    berth_status st = berth_executor_open(config, &o, &ex, &err);
    if (st == BERTH_ERR_DEVICE || st == BERTH_ERR_UNSUPPORTED) {
        fprintf(stderr, "SKIP: %s did not open: %s\n", use, err.msg);
        return UINT64_MAX;
    }
    if (st) {
        fprintf(stderr, "%s: %s\n", use, err.msg);
        return 0;
    }
    uint64_t bytes = 0;
    char desc[128];
    for (uint32_t b = 0; b < berth_executor_bucket_count(ex, 0); b++) {
        berth_executor_bucket_describe(ex, 0, b, desc, sizeof desc);
        if (strcmp(desc, bucket) != 0) continue;
        if (berth_executor_prepare(ex, 0, b, &err) != BERTH_OK) {
            fprintf(stderr, "%s: planning %s: %s\n", use, bucket, err.msg);
            break;
        }
        berth_memory m;
        berth_executor_memory(ex, &m);
        berth_plan_memory k = {.struct_size = sizeof k};
        if (berth_executor_plan_memory(ex, UINT32_MAX, &k) != BERTH_OK || k.io > m.plans_bytes) {
            fprintf(stderr, "%s: no plan bytes by kind\n", use);
            break;
        }
        *io = k.io;
        bytes = m.plans_bytes - k.io;
    }
    if (!bytes) fprintf(stderr, "%s: no plan for bucket '%s' of model %s\n", use, bucket, model);
    berth_executor_close(ex);
    return bytes;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: test_plan_memory CONFIG MODEL BUCKET\n");
        return 2;
    }
    uint64_t cio = 0, vio = 0;
    uint64_t c = plan_bytes(argv[1], argv[2], argv[3], "cpu", &cio);
    uint64_t v = plan_bytes(argv[1], argv[2], argv[3], "vulkan", &vio);
    if (v == UINT64_MAX) return 77;
    if (!c || !v || c == UINT64_MAX) return 1;
    printf("%s %s: vulkan plans %llu bytes and %llu of io, cpu %llu and %llu: %.2fx\n", argv[2], argv[3],
           (unsigned long long)v, (unsigned long long)vio, (unsigned long long)c, (unsigned long long)cio,
           (double)v / (double)c);
    if (v * 4 > c * 5) {
        printf("FAIL: vulkan's plan is above 1.25 times cpu's\n");
        return 1;
    }
    return 0;
}
