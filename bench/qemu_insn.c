/* qemu_insn: a TCG plugin for qemu-user that counts the guest
 * instructions a program executes, over all of its threads.
 *
 *   qemu-aarch64 -L / -plugin build/bench/qemu_insn.so,out=FILE PROGRAM...
 *
 * writes the total as one decimal line to FILE when the program exits
 * (to stderr without out=). bench/insn_count.py uses it to measure the
 * arm64 build where there is no arm64 machine.
 *
 * Each translation block gets an exec callback whose userdata is its
 * instruction count. The callback runs on the host thread that runs the
 * guest thread (qemu-user maps one to one), so it adds to a counter of
 * that thread alone: no atomic read-modify-write, and no count lost or
 * doubled when threads race. The counters are heap blocks kept on a list
 * that outlives their threads; at exit the list is summed. A block is
 * counted whole when it starts, so a block left midway (a fault, a
 * signal) counts the instructions it did not run; a system call ends a
 * block, so ordinary code counts exactly.
 *
 * qemu does not install its plugin header, so the few parts of its public
 * API (include/qemu/qemu-plugin.h) used here are declared below. They are
 * those of API version 1, which qemu 4.2 to 8.2 accept (Debian 12 ships
 * 7.2); qemu's loader refuses a plugin whose qemu_plugin_version is
 * outside its range rather than running it with the wrong calls. */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PLUGIN_EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t; /* not read here */
struct qemu_plugin_tb;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);

PLUGIN_EXPORT extern int qemu_plugin_version;
PLUGIN_EXPORT int qemu_plugin_version = 1;
PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv);

/* One guest thread's count; written by that thread only. */
struct counter {
    _Atomic uint64_t n;
    struct counter *next;
};

static _Atomic(struct counter *) counters;
static _Thread_local struct counter *mine;
static const char *out_path;
static pid_t owner; /* a forked child has a copy of the counts: it writes nothing */

static struct counter *new_counter(void) {
    struct counter *c = calloc(1, sizeof *c);
    if (!c) {
        fputs("qemu_insn: out of memory\n", stderr);
        abort();
    }
    c->next = atomic_load_explicit(&counters, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&counters, &c->next, c, memory_order_release,
                                                  memory_order_relaxed)) {
    }
    return c;
}

static void on_exec(unsigned int vcpu_index, void *userdata) {
    (void)vcpu_index;
    struct counter *c = mine;
    if (!c) c = mine = new_counter();
    uint64_t n = atomic_load_explicit(&c->n, memory_order_relaxed);
    atomic_store_explicit(&c->n, n + (uint64_t)(uintptr_t)userdata, memory_order_relaxed);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    qemu_plugin_register_vcpu_tb_exec_cb(tb, on_exec, QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)n);
}

static void write_total(qemu_plugin_id_t id, void *userdata) {
    (void)id, (void)userdata;
    if (getpid() != owner) return;
    uint64_t total = 0;
    for (struct counter *c = atomic_load_explicit(&counters, memory_order_acquire); c; c = c->next)
        total += atomic_load_explicit(&c->n, memory_order_relaxed);
    FILE *f = out_path ? fopen(out_path, "w") : stderr;
    if (!f) {
        fprintf(stderr, "qemu_insn: cannot write %s\n", out_path);
        return;
    }
    fprintf(f, "%llu\n", (unsigned long long)total);
    if (f != stderr) fclose(f);
}

int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
    (void)info;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "out=", 4) == 0 && argv[i][4]) {
            out_path = argv[i] + 4;
        } else {
            fprintf(stderr, "qemu_insn: unknown argument '%s' (expected out=FILE)\n", argv[i]);
            return -1;
        }
    }
    owner = getpid();
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, write_total, NULL);
    return 0;
}
