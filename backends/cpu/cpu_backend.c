/* The cpu backend's entry point and the verbs that are not about graphs:
 * negotiation, open/close with the `threads` option, caps, supports_op
 * and the weight upload. */
#include <cblas.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu_internal.h"
#include "cpu_name.h"
#include "cpu_spin.h"

enum { OPT_THREADS, OPT_ISA, OPT_SPIN, OPT_QACT, OPT_COUNT };
static const berth_option_decl cpu_options[OPT_COUNT] = {
    [OPT_THREADS] = {"threads", BERTH_OPTION_INT, NULL, NULL, 1, 1024,
                     "worker threads, the calling thread included (default and most: one per cpu this process "
                     "may run on)"},
    [OPT_ISA] = {"isa", BERTH_OPTION_STRING, "auto", "auto|avx512|avx2|neon|generic", 0, 0,
                 "matrix-product kernels: auto picks the best this cpu runs"},
    [OPT_SPIN] = {"spin_us", BERTH_OPTION_INT, NULL, NULL, 0, 1000000,
                  "microseconds idle workers keep polling for work after a run before they sleep: the next run "
                  "starts without waking them (0: sleep at once, least cpu used; default 20000, 1000 where the "
                  "machine has a battery)"},
    [OPT_QACT] = {"quantized_activations", BERTH_OPTION_STRING, "float", "float|int8", 0, 0,
                  "products with int8/int4 weights: float (exactly dequantizeLinear then matmul) or int8 (each "
                  "row of activations quantized to int8 per weight block, integer dot products: SDOT on arm64 "
                  "with dotprod; faster, about 1e-3 relative error)"},
};

/* A text file of /proc or /sys, whole (their sizes read as 0), at most
 * `max` bytes, NUL-terminated; NULL when it cannot be read. */
static char *read_text(const char *path, size_t max) {
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0 || n >= max) break;
        if (n == cap) {
            char *more = realloc(buf, cap * 2 + 1);
            if (!more) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = more;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf) buf[n] = 0;
    return buf;
}

static void cpu_model_name(char *buf, size_t cap) {
    char *info = read_text("/proc/cpuinfo", 1 << 20);
    /* Boards (and arm64 phones' kernels) name the machine in the device
     * tree; it ends in a NUL, sometimes a newline too. */
    char *model = read_text("/proc/device-tree/model", 256);
    if (model) model[strcspn(model, "\n")] = 0;
    cpu_name_from(info, model, buf, cap);
    free(model);
    free(info);
}

static berth_status cpu_open(const berth_host_services *host, berth_device **out, berth_error *err) {
    *out = NULL;
    bk_option_value opt[OPT_COUNT];
    berth_status st = bk_options_read(host, "cpu", cpu_options, OPT_COUNT, opt, err);
    if (st) return st;
    /* No more threads than the cpus the process may run on (taskset, a
     * cpuset, a small container): a thread beyond them has no core of
     * its own, and while it polls for work the thread holding a chunk
     * waits for the core. Eight threads on one core ran the recognizer
     * 7 times slower than one; workers that slept instead of polling
     * brought it to 1.6 times; one thread per cpu, to par. */
    int usable = cpu_usable_cpus();
    if (usable > 1024) usable = 1024;
    int threads = opt[OPT_THREADS].set && opt[OPT_THREADS].i < usable ? (int)opt[OPT_THREADS].i : usable;
    const char *isa_name = opt[OPT_ISA].s;
    int known = 0;
    const cpu_gemm_isa *gemm = cpu_gemm_select(isa_name, &known);
    if (!gemm) {
        if (known)
            bk_errf(err, "option 'isa' in [backend.cpu]: this cpu does not support '%s' (it has %s)", isa_name,
                     cpu_gemm_select("auto", &known)->name);
        else
            bk_errf(err, "option 'isa' in [backend.cpu]: expected auto, avx512, avx2, neon or generic, found '%s'",
                     isa_name);
        return BERTH_ERR_INVALID;
    }
    const char *qact = opt[OPT_QACT].s;
    if (strcmp(qact, "float") != 0 && strcmp(qact, "int8") != 0) {
        bk_errf(err, "option 'quantized_activations' in [backend.cpu]: expected float or int8, found '%s'", qact);
        return BERTH_ERR_INVALID;
    }
    berth_device *dev = calloc(1, sizeof *dev);
    if (!dev) {
        bk_errf(err, "cpu: out of memory opening the device");
        return BERTH_ERR_NOMEM;
    }
    dev->host = host;
    dev->threads = threads;
    dev->gemm = gemm;
    /* the integer tile within the same isa: isa = avx2 runs no AVX-512
     * there either, isa = generic plain C */
    if (strcmp(qact, "int8") == 0) dev->qdot = cpu_dot_select(gemm->name);
    /* The pool does the threading: OpenBLAS's threaded level-3 driver
     * allocates on every call, which run() must not do. Set before the
     * pool starts, since each worker makes its first OpenBLAS call then. */
    openblas_set_num_threads(1);
    int spin_us = opt[OPT_SPIN].set ? (int)opt[OPT_SPIN].i : cpu_spin_default_us(cpu_has_battery("/sys/class/power_supply"));
    st = cpu_pool_create(threads, spin_us, &dev->pool, err);
    if (st) {
        free(dev);
        return st;
    }
    char model[200];
    cpu_model_name(model, sizeof model);
    char asked[64] = "";
    if (opt[OPT_THREADS].set && opt[OPT_THREADS].i > threads)
        snprintf(asked, sizeof asked, " of %lld asked: %d usable cpu%s", (long long)opt[OPT_THREADS].i, usable,
                 usable == 1 ? "" : "s");
    char qdot[48] = "";
    if (dev->qdot) snprintf(qdot, sizeof qdot, ", int8 activations (%s)", cpu_dot_name(dev->qdot));
    snprintf(dev->name, sizeof dev->name, "cpu (%d threads%s, %s, %s kernels%s)", threads, asked, model, gemm->name,
             qdot);
    *out = dev;
    return BERTH_OK;
}

static void cpu_close(berth_device *dev) {
    if (!dev) return;
    cpu_pool_destroy(dev->pool);
    free(dev);
}

static berth_status cpu_caps(berth_device *dev, berth_caps *caps, berth_error *err) {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    uint64_t mem = (pages > 0 && page > 0) ? (uint64_t)pages * (uint64_t)page : 0;
    uint32_t mask = 0;
    for (int t = BERTH_DTYPE_F32; t <= BERTH_DTYPE_U4; t++) mask |= BK_BIT(t);
    berth_status st = bk_caps_fill(caps, dev->name, mem, 1, mask, err);
    /* A subgraph start wakes the pool; a crossing is a copy in memory. */
    if (st == BERTH_OK) bk_caps_costs(caps, 2000.0, 0.1);
    return st;
}

/* The partitioner's estimate: the host's flops at what this machine's
 * product kernel sustains in whole models (about 100 GFLOP/s a core with
 * AVX-512 here), plus the bytes at a memory speed that grows slowly with
 * threads. Rough on purpose: it is weighed against crossings. */
static berth_status cpu_node_cost(berth_device *dev, const berth_graph_desc *graph, uint32_t node_index,
                                  berth_node_cost *cost, berth_error *err) {
    (void)graph, (void)node_index, (void)err;
    if (cost->struct_size < BERTH_NODE_COST_V1_MIN_SIZE) return BERTH_ERR_UNSUPPORTED;
    const char *isa = dev->gemm->name;
    double per_thread = !strcmp(isa, "avx512") ? 100 : !strcmp(isa, "avx2") ? 50 : !strcmp(isa, "neon") ? 24 : 4;
    double threads = dev->threads > 0 ? dev->threads : 1;
    cost->node_ns = cost->flops / (per_thread * threads) + cost->bytes / (8.0 + 4.0 * (threads - 1));
    if (!(cost->node_ns > 0)) cost->node_ns = 1;
    return BERTH_OK;
}

BK_SUPPORTS_VERBS(cpu, cpu_op_set)
BK_PLAN_VERB(cpu_plan_create, cpu_plan_graph)

/* ---- weights ---- */

static void cpu_free_weights(berth_weights *w) {
    if (!w) return;
    for (uint32_t i = 0; w->t && i < w->n; i++) {
        if (!w->t[i].data) continue;
        if (w->t[i].given)
            w->dev->host->free(w->dev->host->ctx, w->t[i].data);
        else
            free(w->t[i].data);
    }
    for (uint32_t i = 0; w->packed && i < 2 * w->n; i++) free(w->packed[i]);
    for (uint32_t i = 0; w->q8 && i < w->n; i++) free(w->q8[i].data);
    free(w->q8);
    free(w->packed);
    free(w->pack_k);
    free(w->pack_n);
    free(w->raw_users);
    free(w->t);
    bk_upload_free(&w->up);
    free(w);
}

/* Weight id as uploaded, rebuilt from a packed copy when it was dropped. */
static berth_status raw_ensure(berth_weights *w, uint32_t id, berth_error *err) {
    cpu_weight *t = &w->t[id];
    if (t->data || !t->bytes) return BERTH_OK;
    const cpu_q8_pack *q = w->q8 && w->q8[id].data ? &w->q8[id] : NULL;
    int tb = w->packed && w->packed[2 * (size_t)id] ? 0 : 1;
    const float *src = w->packed ? w->packed[2 * (size_t)id + (size_t)tb] : NULL;
    void *dst = NULL;
    if ((!src && !q) || posix_memalign(&dst, CPU_ALIGN, t->bytes)) {
        bk_errf(err, "cpu: out of memory rebuilding weight %u (%zu bytes) from its packed copy", id, t->bytes);
        return BERTH_ERR_NOMEM;
    }
    if (q) {
        cpu_gemm_q8_unpack(q->kind, q->data, q->k, q->n, q->rows, dst);
    } else {
        size_t k = w->pack_k[2 * (size_t)id + (size_t)tb], n = w->pack_n[2 * (size_t)id + (size_t)tb];
        cpu_gemm_unpack_b(w->dev->gemm, src, tb ? k : n, tb, k, n, dst);
    }
    t->data = dst;
    t->given = 0;
    w->total += t->bytes;
    return BERTH_OK;
}

int cpu_panels_table(berth_weights *w) {
    if (!w->packed) w->packed = calloc(2 * (size_t)w->n + 1, sizeof *w->packed);
    if (!w->pack_k) w->pack_k = calloc(2 * (size_t)w->n + 1, sizeof *w->pack_k);
    if (!w->pack_n) w->pack_n = calloc(2 * (size_t)w->n + 1, sizeof *w->pack_n);
    return w->packed && w->pack_k && w->pack_n;
}

int cpu_q8_table(berth_weights *w) {
    if (!w->q8) w->q8 = calloc(w->n + 1, sizeof *w->q8);
    return w->q8 != NULL;
}

const float *cpu_weight_packed(berth_weights *w, uint32_t id, int tb, size_t k, size_t n, berth_error *err) {
    if (!cpu_panels_table(w)) goto nomem;
    size_t slot = 2 * (size_t)id + (tb ? 1 : 0);
    if (w->packed[slot]) return w->packed[slot];
    if (raw_ensure(w, id, err)) return NULL;
    size_t bytes = cpu_panel_bytes(w, k, n);
    void *dst = NULL;
    if (posix_memalign(&dst, CPU_ALIGN, bytes)) goto nomem;
    cpu_gemm_pack_b(w->dev->gemm, w->t[id].data, tb ? k : n, tb, k, n, 1.0f, dst);
    w->packed[slot] = dst;
    w->pack_k[slot] = k;
    w->pack_n[slot] = n;
    w->total += bytes;
    return dst;
nomem:
    bk_errf(err, "cpu: out of memory packing weight %u (%zu x %zu) for the matrix kernels", id, k, n);
    return NULL;
}

berth_status cpu_weight_q8(berth_weights *w, uint32_t id, cpu_dot_fn f, const cpu_gemm_qb *q, size_t k, size_t n,
                           const int8_t **out, berth_error *err) {
    *out = NULL;
    if (!cpu_gemm_q8_packable(f, q->kind, q->rows)) return BERTH_OK;
    if (!cpu_q8_table(w)) goto nomem;
    cpu_q8_pack *p = &w->q8[id];
    if (p->data) {
        if (p->k == k && p->n == n && p->rows == q->rows && p->kind == q->kind) *out = p->data;
        return BERTH_OK;
    }
    berth_status st = raw_ensure(w, id, err);
    if (st) return st;
    cpu_gemm_qb src = *q;
    src.b = w->t[id].data;
    size_t bytes = cpu_gemm_q8_packed_bytes(k, n, q->rows);
    void *dst = NULL;
    if (posix_memalign(&dst, CPU_ALIGN, bytes ? bytes : CPU_ALIGN)) goto nomem;
    cpu_gemm_q8_pack(&src, k, n, dst);
    *p = (cpu_q8_pack){.data = dst, .k = k, .n = n, .rows = q->rows, .kind = q->kind};
    w->total += bytes;
    *out = p->data;
    return BERTH_OK;
nomem:
    bk_errf(err, "cpu: out of memory packing quantized weight %u (%zu x %zu) for the int8 tile", id, k, n);
    return BERTH_ERR_NOMEM;
}

static void raw_free(berth_weights *w, uint32_t id) {
    cpu_weight *t = &w->t[id];
    if (!t->data) return;
    if (t->given) w->dev->host->free(w->dev->host->ctx, t->data);
    else free(t->data);
    t->data = NULL;
    w->total -= t->bytes;
}

berth_status cpu_weights_hold(berth_weights *w, const uint32_t *ids, uint32_t n, berth_error *err) {
    if (!w->raw_users && !(w->raw_users = calloc(w->n + 1, sizeof *w->raw_users))) {
        bk_errf(err, "cpu: out of memory");
        return BERTH_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < n; i++) {
        berth_status st = raw_ensure(w, ids[i], err);
        if (st) {
            cpu_weights_release(w, ids, i);
            return st;
        }
        w->raw_users[ids[i]]++;
    }
    return BERTH_OK;
}

void cpu_weights_release(berth_weights *w, const uint32_t *ids, uint32_t n) {
    for (uint32_t i = 0; i < n && w->raw_users; i++) w->raw_users[ids[i]]--;
}

void cpu_weights_trim(berth_weights *w) {
    for (uint32_t id = 0; id < w->n; id++) {
        int packed = (w->packed && (w->packed[2 * (size_t)id] || w->packed[2 * (size_t)id + 1])) ||
                     (w->q8 && w->q8[id].data);
        if (packed && !(w->raw_users && w->raw_users[id])) raw_free(w, id);
    }
}

static berth_status cpu_upload_begin(berth_device *dev, const berth_upload_info *info,
                                     berth_weights **out, berth_error *err) {
    *out = NULL;
    berth_weights *w = calloc(1, sizeof *w);
    if (!w) {
        bk_errf(err, "cpu: out of memory starting an upload");
        return BERTH_ERR_NOMEM;
    }
    w->dev = dev;
    berth_status st = bk_upload_begin(&w->up, info, "cpu", err);
    if (st) {
        free(w);
        return st;
    }
    w->n = w->up.n;
    w->t = calloc(w->n ? w->n : 1, sizeof *w->t);
    if (!w->t) {
        cpu_free_weights(w);
        bk_errf(err, "cpu: out of memory for a table of %u weights", info->n_tensors);
        return BERTH_ERR_NOMEM;
    }
    *out = w;
    return BERTH_OK;
}

static berth_status cpu_upload_dest(berth_weights *w, const berth_weight_desc *desc, void **dest,
                                    berth_error *err) {
    *dest = NULL; /* the host reads into its scratch, or gives us its buffer */
    return bk_upload_check(&w->up, desc, desc, "cpu", err);
}

static berth_status cpu_upload_tensor(berth_weights *w, const berth_weight_desc *desc, void *data,
                                      uint32_t flags, int *taken, berth_error *err) {
    if (taken) *taken = 0;
    berth_status st = bk_upload_check(&w->up, desc, data, "cpu", err);
    if (st) return st;
    cpu_weight *t = &w->t[desc->id];
    if ((flags & BERTH_UPLOAD_GIVEN) && taken && data) {
        t->data = data;
        t->given = 1;
        *taken = 1;
    } else {
        void *copy = NULL;
        if (posix_memalign(&copy, CPU_ALIGN, desc->bytes ? desc->bytes : CPU_ALIGN)) {
            bk_errf(err, "cpu: weight '%s': out of memory for %zu bytes", desc->name ? desc->name : "?",
                    desc->bytes);
            return BERTH_ERR_NOMEM;
        }
        if (desc->bytes) memcpy(copy, data, desc->bytes);
        t->data = copy;
        t->given = 0;
    }
    if (desc->dtype == BERTH_DTYPE_F32) cpu_flush_subnormals(t->data, desc->bytes / sizeof(float));
    t->bytes = desc->bytes;
    bk_upload_mark(&w->up, desc);
    w->total += desc->bytes;
    return BERTH_OK;
}

static berth_status cpu_upload_end(berth_weights *w, berth_error *err) { return bk_upload_end(&w->up, "cpu", err); }

static uint64_t cpu_weights_bytes(const berth_weights *w) { return w ? w->total : 0; }

static berth_status cpu_prepare_weights(berth_weights *w, const berth_graph_desc *g, berth_prepare_info *info,
                                        berth_error *err) {
    if (!info || info->struct_size < BERTH_PREPARE_INFO_V1_MIN_SIZE) {
        bk_errf(err, "cpu: prepare_weights needs an info of at least %zu bytes",
                (size_t)BERTH_PREPARE_INFO_V1_MIN_SIZE);
        return BERTH_ERR_INVALID;
    }
    berth_plan *none = NULL;
    berth_status st = bk_plan_native(cpu_prepare_graph, w->dev, w, g, &none, err);
    if (st == BERTH_OK) cpu_weights_account(w, info);
    return st;
}

BK_BACKEND(.name = "cpu", .version = "0.2.0", .open = cpu_open, .close = cpu_close, .caps = cpu_caps,
           .supports_op = cpu_supports_op, .upload_begin = cpu_upload_begin,
           .upload_dest = cpu_upload_dest, .upload_tensor = cpu_upload_tensor,
           .upload_end = cpu_upload_end, .plan = cpu_plan_create, .run = cpu_run, .free_plan = cpu_plan_free,
           .free_weights = cpu_free_weights, .weights_bytes = cpu_weights_bytes, .plan_bytes = cpu_plan_bytes,
           .plan_memory = cpu_plan_memory, .node_cost = cpu_node_cost, .prepare_weights = cpu_prepare_weights,
           .save_state = cpu_save_state, .load_state = cpu_load_state,
           .plan_profile = cpu_plan_profile, .supports_node = cpu_supports_node, .options = cpu_options,
           .n_options = OPT_COUNT, .option_decl_size = sizeof(berth_option_decl))
