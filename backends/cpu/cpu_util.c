/* Small helpers of the cpu backend: the clock, per-node parameters and
 * the storing of float32 data. */
#include <float.h>
#include <math.h>
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

/* On x86 every multiply with a subnormal operand takes a microcode assist:
 * the recognizer's squeeze-and-excitation filters, a fifth of them
 * subnormal, ran ten times slower than their size. A subnormal's share of
 * any product lies below float32's smallest normal number. */
void cpu_flush_subnormals(float *v, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (fabsf(v[i]) < FLT_MIN) v[i] = copysignf(0.0f, v[i]);
}
