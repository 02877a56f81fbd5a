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

/* The host services this backend calls, up to and including `free`. */
#define CPU_HOST_MIN_SIZE (offsetof(berth_host_services, free) + sizeof(void *))

static void cpu_model_name(char *buf, size_t cap) {
    snprintf(buf, cap, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0) continue;
        char *colon = strchr(line, ':');
        if (!colon) continue;
        colon++;
        while (*colon == ' ' || *colon == '\t') colon++;
        size_t len = strcspn(colon, "\r\n");
        if (len > 0) snprintf(buf, cap, "%.*s", (int)len, colon);
        break;
    }
    fclose(f);
}

static berth_status parse_threads(const char *value, int *out, berth_error *err) {
    char *end = NULL;
    errno = 0;
    long v = value ? strtol(value, &end, 10) : 0;
    if (!value || end == value || *end != '\0' || errno || v < 1 || v > 1024) {
        cpu_errf(err, "option 'threads' in [backend.cpu]: expected an integer 1..1024, found '%s'",
                 value ? value : "(null)");
        return BERTH_ERR_INVALID;
    }
    *out = (int)v;
    return BERTH_OK;
}

static berth_status cpu_open(const berth_host_services *host, berth_device **out, berth_error *err) {
    *out = NULL;
    if (!host || host->struct_size < CPU_HOST_MIN_SIZE) {
        cpu_errf(err, "cpu: host services table is %u bytes, expected at least %zu",
                 host ? host->struct_size : 0u, (size_t)CPU_HOST_MIN_SIZE);
        return BERTH_ERR_INVALID;
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = online > 0 ? (int)(online > 1024 ? 1024 : online) : 1;
    uint32_t n = host->option_count ? host->option_count(host->ctx) : 0;
    if (n && !host->option_at) {
        cpu_errf(err, "cpu: the host reports %u options but no option_at service", n);
        return BERTH_ERR_INVALID;
    }
    const char *isa_name = "auto";
    for (uint32_t i = 0; i < n; i++) {
        const char *key = NULL, *value = NULL;
        if (host->option_at(host->ctx, i, &key, &value) != BERTH_OK || !key) {
            cpu_errf(err, "cpu: option %u of [backend.cpu] could not be read", i);
            return BERTH_ERR_INVALID;
        }
        if (strcmp(key, "threads") == 0) {
            berth_status st = parse_threads(value, &threads, err);
            if (st) return st;
        } else if (strcmp(key, "isa") == 0) {
            isa_name = value ? value : "(null)";
        } else {
            cpu_errf(err, "unknown option '%s' in [backend.cpu] (known: threads, isa)", key);
            return BERTH_ERR_INVALID;
        }
    }
    int known = 0;
    const cpu_gemm_isa *gemm = cpu_gemm_select(isa_name, &known);
    if (!gemm) {
        if (known)
            cpu_errf(err, "option 'isa' in [backend.cpu]: this cpu does not support '%s' (it has %s)", isa_name,
                     cpu_gemm_select("auto", &known)->name);
        else
            cpu_errf(err, "option 'isa' in [backend.cpu]: expected auto, avx512, avx2 or generic, found '%s'",
                     isa_name);
        return BERTH_ERR_INVALID;
    }
    berth_device *dev = calloc(1, sizeof *dev);
    if (!dev) {
        cpu_errf(err, "cpu: out of memory opening the device");
        return BERTH_ERR_NOMEM;
    }
    dev->host = host;
    dev->threads = threads;
    dev->gemm = gemm;
    /* The pool does the threading: OpenBLAS's threaded level-3 driver
     * allocates on every call, which run() must not do. Set before the
     * pool starts, since each worker makes its first OpenBLAS call then. */
    openblas_set_num_threads(1);
    berth_status st = cpu_pool_create(threads, &dev->pool, err);
    if (st) {
        free(dev);
        return st;
    }
    char model[200];
    cpu_model_name(model, sizeof model);
    snprintf(dev->name, sizeof dev->name, "cpu (%d threads, %s, %s kernels)", threads, model, gemm->name);
    *out = dev;
    return BERTH_OK;
}

static void cpu_close(berth_device *dev) {
    if (!dev) return;
    cpu_pool_destroy(dev->pool);
    free(dev);
}

static berth_status cpu_caps(berth_device *dev, berth_caps *caps, berth_error *err) {
    if (!caps) {
        cpu_errf(err, "cpu: caps called with no caps struct");
        return BERTH_ERR_INVALID;
    }
#define FITS(field) (caps->struct_size >= offsetof(berth_caps, field) + sizeof caps->field)
    if (FITS(device_name)) caps->device_name = dev->name;
    if (FITS(memory_bytes)) {
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
        caps->memory_bytes = (pages > 0 && page > 0) ? (uint64_t)pages * (uint64_t)page : 0;
    }
    if (FITS(unified_memory)) caps->unified_memory = 1;
    if (FITS(dtype_mask))
        caps->dtype_mask = CPU_BIT(BERTH_DTYPE_F32) | CPU_BIT(BERTH_DTYPE_I32) | CPU_BIT(BERTH_DTYPE_I64) |
                           CPU_BIT(BERTH_DTYPE_U8) | CPU_BIT(BERTH_DTYPE_I8) | CPU_BIT(BERTH_DTYPE_U32) |
                           CPU_BIT(BERTH_DTYPE_U64) | CPU_BIT(BERTH_DTYPE_F16) | CPU_BIT(BERTH_DTYPE_I4) |
                           CPU_BIT(BERTH_DTYPE_U4);
#undef FITS
    return BERTH_OK;
}

static berth_status cpu_supports_op(berth_device *dev, const char *op, berth_dtype dtype,
                                    berth_error *err) {
    const cpu_op_info *info = op ? cpu_find_op(op) : NULL;
    if (!info) {
        cpu_errf(err, "cpu: op '%s' is not implemented", op ? op : "(null)");
        return BERTH_ERR_UNSUPPORTED;
    }
    if (!(info->dtypes & CPU_BIT(dtype))) {
        cpu_errf(err, "cpu: op '%s' does not support dtype %s", op, cpu_dtype_name(dtype));
        return BERTH_ERR_UNSUPPORTED;
    }
    return BERTH_OK;
}

/* ---- weights ---- */

static void cpu_free_weights(berth_weights *w) {
    if (!w) return;
    for (uint32_t i = 0; w->t && i < w->n; i++) {
        if (!w->t[i].present) continue;
        if (w->t[i].given)
            w->dev->host->free(w->dev->host->ctx, w->t[i].data);
        else
            free(w->t[i].data);
    }
    for (uint32_t i = 0; w->packed && i < 2 * w->n; i++) free(w->packed[i]);
    free(w->packed);
    free(w->t);
    free(w);
}

const float *cpu_weight_packed(berth_weights *w, uint32_t id, int tb, size_t k, size_t n, berth_error *err) {
    if (!w->packed && !(w->packed = calloc(2 * (size_t)w->n, sizeof *w->packed))) goto nomem;
    float **slot = &w->packed[2 * (size_t)id + (tb ? 1 : 0)];
    if (*slot) return *slot;
    size_t floats = cpu_gemm_packed_floats(w->dev->gemm, k, n);
    void *dst = NULL;
    if (posix_memalign(&dst, CPU_ALIGN, sizeof(float) * floats)) goto nomem;
    cpu_gemm_pack_b(w->dev->gemm, w->t[id].data, tb ? k : n, tb, k, n, 1.0f, dst);
    *slot = dst;
    w->total += sizeof(float) * floats;
    return dst;
nomem:
    cpu_errf(err, "cpu: out of memory packing weight %u (%zu x %zu) for the matrix kernels", id, k, n);
    return NULL;
}

static berth_status cpu_upload_begin(berth_device *dev, const berth_upload_info *info,
                                     berth_weights **out, berth_error *err) {
    *out = NULL;
    if (!info || info->struct_size < offsetof(berth_upload_info, n_tensors) + sizeof(uint32_t)) {
        cpu_errf(err, "cpu: upload_begin: upload info missing or too small");
        return BERTH_ERR_INVALID;
    }
    berth_weights *w = calloc(1, sizeof *w);
    if (!w) goto nomem;
    w->dev = dev;
    w->n = info->n_tensors;
    w->t = calloc(w->n ? w->n : 1, sizeof *w->t);
    if (!w->t) {
        free(w);
        goto nomem;
    }
    *out = w;
    return BERTH_OK;
nomem:
    cpu_errf(err, "cpu: out of memory for a table of %u weights", info->n_tensors);
    return BERTH_ERR_NOMEM;
}

static berth_status cpu_upload_dest(berth_weights *w, const berth_weight_desc *desc, void **dest,
                                    berth_error *err) {
    *dest = NULL; /* the host reads into its scratch, or gives us its buffer */
    return BERTH_OK;
}

static berth_status cpu_upload_tensor(berth_weights *w, const berth_weight_desc *desc, void *data,
                                      uint32_t flags, int *taken, berth_error *err) {
    if (taken) *taken = 0;
    if (!desc || desc->id >= w->n) {
        cpu_errf(err, "cpu: weight '%s': id %u out of range (%u announced)",
                 desc && desc->name ? desc->name : "?", desc ? desc->id : 0u, w->n);
        return BERTH_ERR_INVALID;
    }
    cpu_weight *t = &w->t[desc->id];
    if (t->present) {
        cpu_errf(err, "cpu: weight '%s': id %u uploaded twice", desc->name ? desc->name : "?", desc->id);
        return BERTH_ERR_INVALID;
    }
    size_t numel = 1, es = cpu_dtype_size(desc->dtype);
    int shape_ok = desc->rank <= BERTH_MAX_RANK;
    for (uint32_t i = 0; shape_ok && i < desc->rank; i++) {
        shape_ok = desc->dims[i] >= 0 && (desc->dims[i] == 0 || numel <= SIZE_MAX / 16 / (size_t)desc->dims[i]);
        if (shape_ok) numel *= (size_t)desc->dims[i];
    }
    size_t want = es ? numel * es : (numel + 1) / 2; /* 4-bit types are packed two per byte */
    if (!shape_ok || (!es && desc->dtype != BERTH_DTYPE_I4 && desc->dtype != BERTH_DTYPE_U4) || want != desc->bytes) {
        cpu_errf(err, "cpu: weight '%s': %s of rank %u needs %zu bytes, found %zu", desc->name ? desc->name : "?",
                 cpu_dtype_name(desc->dtype), desc->rank, shape_ok ? want : 0, desc->bytes);
        return BERTH_ERR_INVALID;
    }
    if (!data && desc->bytes) {
        cpu_errf(err, "cpu: weight '%s': no data for %zu bytes", desc->name ? desc->name : "?", desc->bytes);
        return BERTH_ERR_INVALID;
    }
    if ((flags & BERTH_UPLOAD_GIVEN) && taken && data) {
        t->data = data;
        t->given = 1;
        *taken = 1;
    } else {
        void *copy = NULL;
        if (posix_memalign(&copy, CPU_ALIGN, desc->bytes ? desc->bytes : CPU_ALIGN)) {
            cpu_errf(err, "cpu: weight '%s': out of memory for %zu bytes", desc->name ? desc->name : "?",
                     desc->bytes);
            return BERTH_ERR_NOMEM;
        }
        if (desc->bytes) memcpy(copy, data, desc->bytes);
        t->data = copy;
        t->given = 0;
    }
    t->bytes = desc->bytes;
    t->present = 1;
    w->total += desc->bytes;
    return BERTH_OK;
}

static berth_status cpu_upload_end(berth_weights *w, berth_error *err) {
    for (uint32_t i = 0; i < w->n; i++)
        if (!w->t[i].present) {
            cpu_errf(err, "cpu: upload_end: weight id %u of %u was never uploaded", i, w->n);
            return BERTH_ERR_INVALID;
        }
    return BERTH_OK;
}

static uint64_t cpu_weights_bytes(const berth_weights *w) { return w ? w->total : 0; }

static const berth_backend cpu_table = {
    .abi_version = 1,
    .struct_size = sizeof(berth_backend),
    .name = "cpu",
    .version = "0.1.0",
    .open = cpu_open,
    .close = cpu_close,
    .caps = cpu_caps,
    .supports_op = cpu_supports_op,
    .upload_begin = cpu_upload_begin,
    .upload_dest = cpu_upload_dest,
    .upload_tensor = cpu_upload_tensor,
    .upload_end = cpu_upload_end,
    .plan = cpu_plan_create,
    .run = cpu_run,
    .free_plan = cpu_plan_free,
    .free_weights = cpu_free_weights,
    .weights_bytes = cpu_weights_bytes,
    .plan_bytes = cpu_plan_bytes,
    .plan_profile = cpu_plan_profile,
};

BERTH_BACKEND_EXPORT const berth_backend *berth_backend_entry(uint32_t host_abi_version,
                                                              const berth_host_services *host,
                                                              berth_error *why) {
    if (host_abi_version < 1) {
        cpu_errf(why, "cpu backend speaks ABI version 1; the host offers version %u", host_abi_version);
        return NULL;
    }
    if (!host || host->struct_size < CPU_HOST_MIN_SIZE) {
        cpu_errf(why, "cpu backend needs host services of at least %zu bytes, found %u",
                 (size_t)CPU_HOST_MIN_SIZE, host ? host->struct_size : 0u);
        return NULL;
    }
    return &cpu_table;
}
