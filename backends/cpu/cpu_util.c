/* Small helpers of the cpu backend: the clock and per-node parameters. */
#include <stdlib.h>
#include <time.h>

#include "cpu_internal.h"

uint64_t cpu_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void *cpu_params(cpu_prep *c, size_t bytes) {
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p) {
        bk_fail(&c->bk, "out of memory for %zu bytes of parameters", bytes);
        return NULL;
    }
    c->cn->params = p;
    c->cn->params_bytes = bytes;
    return p;
}
