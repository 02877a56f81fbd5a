/* `load`: open a deployment and run its first bucket once, reporting the
 * resident set before, during and after loading. bench.py times the
 * whole process from outside (start to exit right after the first
 * output) and reads its peak RSS from wait4; these figures split that
 * into loading and running, and give what loading should cost: the
 * weights resident on the device plus the largest tensor in flight. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define MAX_IO 8

int bench_load(const char *config) {
    long base_kb = bench_rss_kb();
    uint64_t t0 = bench_now_ns();
    berth_error err;
    berth_executor *ex;
    if (berth_executor_open(config, NULL, &ex, &err) != BERTH_OK) {
        fprintf(stderr, "berth-bench: %s\n", err.msg);
        return 1;
    }
    uint64_t t_open = bench_now_ns() - t0;
    long open_peak_kb = bench_peak_rss_kb(), open_kb = bench_rss_kb();
    berth_memory m;
    berth_executor_memory(ex, &m);

    berth_tensor ins[MAX_IO], outs[MAX_IO];
    uint32_t n_ins = 0, n_outs = berth_executor_output_count(ex, 0);
    int rc = 1;
    memset(outs, 0, sizeof outs);
    if (n_outs > MAX_IO) {
        fprintf(stderr, "berth-bench: %s: %u outputs, at most %d\n", config, n_outs, MAX_IO);
        goto out;
    }
    if (bench_inputs_make(ex, 0, 0, ins, &n_ins, MAX_IO, &err) != BERTH_OK ||
        berth_executor_run(ex, 0, ins, n_ins, outs, n_outs, NULL, &err) != BERTH_OK) {
        fprintf(stderr, "berth-bench: %s: %s\n", config, err.msg);
        goto out;
    }
    uint64_t t_first = bench_now_ns() - t0;
    printf("{\"open_ns\": %llu, \"first_output_ns\": %llu, \"rss_base_kb\": %ld, "
           "\"rss_open_kb\": %ld, \"peak_rss_open_kb\": %ld, \"peak_rss_kb\": %ld, "
           "\"weights_bytes\": %llu}\n",
           (unsigned long long)t_open, (unsigned long long)t_first, base_kb, open_kb, open_peak_kb,
           bench_peak_rss_kb(), (unsigned long long)m.weights_bytes);
    rc = 0;
out:
    bench_inputs_free(ins, n_ins);
    for (uint32_t i = 0; i < n_outs && i < MAX_IO; i++) berth_tensor_release(&outs[i]);
    berth_executor_close(ex);
    return rc;
}
