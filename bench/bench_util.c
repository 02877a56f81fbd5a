/* Clocks, resident-set figures, inputs and the peer's pipes. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

uint64_t bench_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

long bench_peak_rss_kb(void) {
    /* VmHWM, not getrusage: ru_maxrss survives exec, so a process forked
     * from a large parent would report the parent's peak */
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
    fclose(f);
    return kb;
}

long bench_rss_kb(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    long size = 0, resident = -1;
    if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

void bench_errf(berth_error *err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}

int64_t bench_bucket_dim(const char *describe, const char *name) {
    size_t n = strlen(name);
    for (const char *p = describe; *p;) {
        while (*p == ' ') p++;
        if (strncmp(p, name, n) == 0 && p[n] == '=') return strtoll(p + n + 1, NULL, 10);
        while (*p && *p != ' ') p++;
    }
    return -1;
}

static size_t dtype_size(berth_dtype t) {
    switch (t) {
    case BERTH_DTYPE_F32: case BERTH_DTYPE_I32: case BERTH_DTYPE_U32: return 4;
    case BERTH_DTYPE_I64: case BERTH_DTYPE_U64: return 8;
    case BERTH_DTYPE_F16: return 2;
    case BERTH_DTYPE_I8: case BERTH_DTYPE_U8: return 1;
    default: return 0;
    }
}

static void fill(berth_tensor *t, const char *name) {
    size_t count = t->bytes / dtype_size(t->dtype);
    int64_t last = t->rank ? t->dims[t->rank - 1] : 1;
    int mask = strstr(name, "mask") != NULL;
    for (size_t i = 0; i < count; i++) {
        int64_t row = last ? (int64_t)i / last : 0, col = last ? (int64_t)i % last : 0;
        int64_t v = mask ? (col < last - (row % 4) * (last / 8)) : (int64_t)((i * 7919u + 13u) % 1000u);
        switch (t->dtype) {
        case BERTH_DTYPE_F32: ((float *)t->data)[i] = (float)((double)((i * 37u) % 255u) / 127.5 - 1.0); break;
        case BERTH_DTYPE_I64: ((int64_t *)t->data)[i] = v; break;
        case BERTH_DTYPE_I32: ((int32_t *)t->data)[i] = (int32_t)v; break;
        default: memset((char *)t->data + i * dtype_size(t->dtype), 0, dtype_size(t->dtype)); break;
        }
    }
}

berth_status bench_inputs_make(const berth_executor *ex, uint32_t lane, uint32_t bucket,
                               berth_tensor *ins, uint32_t *n_ins, uint32_t cap, berth_error *err) {
    char desc[256];
    berth_executor_bucket_describe(ex, lane, bucket, desc, sizeof desc);
    uint32_t n = berth_executor_input_count(ex, lane);
    *n_ins = 0;
    if (n > cap) {
        bench_errf(err, "lane %u has %u inputs, the harness takes at most %u", lane, n, cap);
        return BERTH_ERR_UNSUPPORTED;
    }
    for (uint32_t i = 0; i < n; i++) {
        berth_io_info info;
        berth_executor_input_info(ex, lane, i, &info);
        berth_tensor *t = &ins[i];
        memset(t, 0, sizeof *t);
        t->dtype = info.dtype;
        t->rank = info.rank;
        size_t count = 1;
        for (uint32_t d = 0; d < info.rank; d++) {
            t->dims[d] = info.dims[d];
            if (info.dyn[d]) {
                int64_t v = bench_bucket_dim(desc, info.dyn[d]);
                if (v < 1) {
                    bench_errf(err, "input '%s' dim %u: bucket '%s' gives no value for '%s'",
                               info.name, d, desc, info.dyn[d]);
                    bench_inputs_free(ins, i);
                    return BERTH_ERR_INVALID;
                }
                t->dims[d] = v;
            }
            count *= (size_t)t->dims[d];
        }
        size_t es = dtype_size(info.dtype);
        if (!es) {
            bench_errf(err, "input '%s': the harness fills f32, i32 and i64 inputs, found dtype %d",
                       info.name, (int)info.dtype);
            bench_inputs_free(ins, i);
            return BERTH_ERR_UNSUPPORTED;
        }
        t->bytes = t->capacity = count * es;
        t->data = malloc(t->bytes ? t->bytes : 1);
        if (!t->data) {
            bench_errf(err, "input '%s': cannot allocate %zu bytes", info.name, t->bytes);
            bench_inputs_free(ins, i);
            return BERTH_ERR_NOMEM;
        }
        fill(t, info.name);
        *n_ins = i + 1;
    }
    return BERTH_OK;
}

void bench_inputs_free(berth_tensor *ins, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        free(ins[i].data);
        ins[i].data = NULL;
    }
}

berth_status bench_peer_start(bench_peer *p, char *const argv[], berth_error *err) {
    int down[2], up[2];
    p->pid = -1;
    p->to = p->from = NULL;
    if (pipe(down) != 0) {
        bench_errf(err, "peer '%s': pipe: %s", argv[0], strerror(errno));
        return BERTH_ERR_IO;
    }
    if (pipe(up) != 0) {
        bench_errf(err, "peer '%s': pipe: %s", argv[0], strerror(errno));
        close(down[0]);
        close(down[1]);
        return BERTH_ERR_IO;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        bench_errf(err, "peer '%s': fork: %s", argv[0], strerror(errno));
        close(down[0]); close(down[1]); close(up[0]); close(up[1]);
        return BERTH_ERR_IO;
    }
    if (pid == 0) {
        dup2(down[0], 0);
        dup2(up[1], 1);
        close(down[0]); close(down[1]); close(up[0]); close(up[1]);
        execvp(argv[0], argv);
        dprintf(2, "berth-bench: cannot start peer '%s': %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(down[0]);
    close(up[1]);
    p->pid = pid;
    p->to = fdopen(down[1], "w");
    p->from = fdopen(up[0], "r");
    if (!p->to || !p->from) {
        if (!p->to) close(down[1]);
        if (!p->from) close(up[0]);
        bench_peer_stop(p);
        bench_errf(err, "peer '%s': fdopen failed", argv[0]);
        return BERTH_ERR_IO;
    }
    return BERTH_OK;
}

berth_status bench_peer_ask(bench_peer *p, const char *request, char *reply, size_t cap,
                            berth_error *err) {
    if (request && (fprintf(p->to, "%s\n", request) < 0 || fflush(p->to) != 0)) {
        bench_errf(err, "peer: cannot send '%s' (did it exit?)", request);
        return BERTH_ERR_IO;
    }
    if (!fgets(reply, (int)cap, p->from)) {
        bench_errf(err, "peer: no answer to '%s' (it exited; its messages are above)",
                   request ? request : "start");
        return BERTH_ERR_IO;
    }
    reply[strcspn(reply, "\n")] = 0;
    if (strncmp(reply, "error", 5) == 0) {
        bench_errf(err, "peer: '%s' failed: %s", request ? request : "start", reply);
        return BERTH_ERR_INVALID;
    }
    return BERTH_OK;
}

/* The peer's user + system time in clock ticks, or -1. */
static long peer_cpu_ticks(const bench_peer *p) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)p->pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* fields after the command, which sits in parentheses and may hold
     * spaces: state is field 3, utime and stime fields 14 and 15 */
    const char *at = strrchr(buf, ')');
    unsigned long ut, st;
    if (!at || sscanf(at + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2) return -1;
    return (long)(ut + st);
}

void bench_peer_wait_idle(const bench_peer *p, int max_ms) {
    long before = peer_cpu_ticks(p);
    for (int waited = 0; before >= 0 && waited < max_ms; waited += 20) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
        long now = peer_cpu_ticks(p);
        if (now == before) return;
        before = now;
    }
}

void bench_peer_stop(bench_peer *p) {
    if (p->to) {
        fprintf(p->to, "quit\n");
        fclose(p->to);
        p->to = NULL;
    }
    if (p->from) {
        fclose(p->from);
        p->from = NULL;
    }
    if (p->pid > 0) {
        int status;
        while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR) {
        }
        p->pid = -1;
    }
}
