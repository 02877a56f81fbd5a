/* The worker pool's idle behaviour, the spin_us option: after a run,
 * workers poll for the next job for spin_us microseconds, then sleep.
 * Measured as the cpu time the pool's threads (named berth-cpu) use in a
 * window after a run: none with spin_us = 0, some while they poll. */
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "cpu_harness.h"

/* Clock ticks the berth-cpu threads of this process have used; -1 when
 * /proc cannot be read, or none exists. */
static long worker_ticks(void) {
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    long total = 0;
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[300], buf[1024] = {0};
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        int ours = fgets(buf, sizeof buf, f) && strncmp(buf, "berth-cpu", 9) == 0;
        fclose(f);
        if (!ours) continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        if (!(f = fopen(path, "r"))) continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        unsigned long ut, st;
        const char *at = strrchr(buf, ')');
        if (at && sscanf(at + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2) {
            total += (long)(ut + st);
            found = 1;
        }
    }
    closedir(d);
    return found ? total : -1;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Opens 2 threads with spin_us, runs a graph big enough to use the pool,
 * and returns the workers' ticks in a window of window_ms starting
 * wait_ms after the run. */
static long ticks_after_run(const char *spin_us, long wait_ms, long window_ms) {
    if (!h_load()) return -1;
    mh_host_clear_options(&host);
    mh_host_option(&host, "threads", "2");
    mh_host_option(&host, "spin_us", spin_us);
    berth_error err;
    if (cpu.be->open(&host.services, &cpu.dev, &err) != BERTH_OK) {
        fprintf(stderr, "open: %s\n", err.msg);
        CHECK(0);
        return -1;
    }
    enum { N = 1 << 20 };
    tgraph g = {0};
    uint32_t a = tg_input(&g, "a", BERTH_DTYPE_F32, 1, DIMS(N));
    uint32_t b = tg_input(&g, "b", BERTH_DTYPE_F32, 1, DIMS(N));
    uint32_t y = tg_value(&g, "y", BERTH_DTYPE_F32, 1, DIMS(N));
    tg_node(&g, "add", 2, IDX(a, b), 1, IDX(y), 0, NULL);
    tg_output(&g, y);
    float *x = h_randf(N), *out = malloc(sizeof(float) * N);
    long ticks = -1;
    if (h_ok(&g, (void *[]){x, x}, (void *[]){out})) {
        sleep_ms(wait_ms);
        long t0 = worker_ticks();
        sleep_ms(window_ms);
        long t1 = worker_ticks();
        CHECK(t0 >= 0 && t1 >= 0); /* the pool's thread was found */
        ticks = t1 - t0;
    }
    free(x), free(out);
    h_shutdown();
    return ticks;
}

int main(void) {
    /* spin_us = 0: the worker sleeps right after the run */
    long idle = ticks_after_run("0", 50, 300);
    CHECK(idle == 0);
    if (idle != 0) fprintf(stderr, "  spin_us 0: workers used %ld ticks in 300 ms after the run\n", idle);
    /* spin_us = 1 s (its most): the worker still polls 300 ms after the run */
    long polling = ticks_after_run("1000000", 50, 300);
    CHECK(polling > 0);
    if (polling <= 0) fprintf(stderr, "  spin_us 1000000: workers used %ld ticks in 300 ms after the run\n", polling);
    /* out of its range, the option is refused with the key named */
    CHECK(h_load());
    mh_host_clear_options(&host);
    mh_host_option(&host, "spin_us", "-5");
    berth_error err;
    CHECK(cpu.be->open(&host.services, &cpu.dev, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "spin_us");
    mh_unload(&cpu);
    return check_exit();
}
