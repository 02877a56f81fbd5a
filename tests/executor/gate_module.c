/* A backend module that is the cpu backend with a gate in front of run():
 * a test arms the gate, the next run() stops inside the executor until
 * the test releases it. That makes "a second thread calls while the first
 * is inside" a certainty instead of a matter of timing. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "berth/backend.h"
#include "cpu_wrap.h"

#define GATE_EXPORT __attribute__((visibility("default")))

static berth_backend table;
static const berth_backend *cpu;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int armed, inside, released;

GATE_EXPORT void gate_arm(void) {
    pthread_mutex_lock(&mu);
    armed = 1;
    inside = released = 0;
    pthread_mutex_unlock(&mu);
}

GATE_EXPORT void gate_wait_inside(void) {
    pthread_mutex_lock(&mu);
    while (!inside) pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
}

GATE_EXPORT void gate_release(void) {
    pthread_mutex_lock(&mu);
    released = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static berth_status gated_run(berth_plan *plan, const berth_tensor *inputs, uint32_t n_inputs,
                              berth_tensor *outputs, uint32_t n_outputs, berth_error *err) {
    pthread_mutex_lock(&mu);
    if (armed) {
        armed = 0;
        inside = 1;
        pthread_cond_broadcast(&cv);
        while (!released) pthread_cond_wait(&cv, &mu);
    }
    pthread_mutex_unlock(&mu);
    return cpu->run(plan, inputs, n_inputs, outputs, n_outputs, err);
}

GATE_EXPORT const berth_backend *berth_backend_entry(uint32_t host_abi_version,
                                                     const berth_host_services *host,
                                                     berth_error *why) {
    if (!(cpu = cpu_wrap("gate", host_abi_version, host, why, &table))) return NULL;
    table.run = gated_run;
    return &table;
}
