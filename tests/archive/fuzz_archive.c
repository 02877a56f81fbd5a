/* libFuzzer target for the archive readers. The first byte picks the
 * mode; the rest becomes files in a private directory:
 *   even: a .safetensors file (header length, header, data)
 *   odd:  a manifest and a blob, split at the first NUL byte
 * Whatever opens is then streamed into a do-nothing backend, so the
 * request checks and the reads run on fuzzed entries too. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive.h"

static char dir[256], st_path[300], blob_path[300], mf_path[300];

static void *f_alloc(void *ctx, size_t bytes, size_t align) {
    (void)ctx;
    void *p = NULL;
    return posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, bytes ? bytes : 1)
               ? NULL
               : p;
}
static void f_free(void *ctx, void *p) {
    (void)ctx;
    free(p);
}
static const berth_host_services host = {1, sizeof host, NULL, NULL, NULL, NULL, f_alloc, f_free};

static volatile unsigned char sink;

struct berth_weights {
    int n;
};
static struct berth_weights weights;
static berth_status f_begin(berth_device *d, const berth_upload_info *i, berth_weights **w,
                            berth_error *e) {
    (void)d, (void)i, (void)e;
    *w = &weights;
    return BERTH_OK;
}
static berth_status f_tensor(berth_weights *w, const berth_weight_desc *d, void *data, uint32_t fl,
                             int *taken, berth_error *e) {
    (void)w, (void)fl, (void)taken, (void)e;
    /* Touch every byte so a short buffer shows up under ASan. */
    unsigned char sum = 0;
    for (size_t i = 0; i < d->bytes; i++) sum ^= ((unsigned char *)data)[i];
    sink = sum;
    return BERTH_OK;
}
static berth_status f_end(berth_weights *w, berth_error *e) {
    (void)w, (void)e;
    return BERTH_OK;
}
static void f_free_w(berth_weights *w) { (void)w; }
static const berth_backend be = {1, sizeof be, "fuzz", "0", .upload_begin = f_begin,
                                 .upload_tensor = f_tensor, .upload_end = f_end,
                                 .free_weights = f_free_w};

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void cleanup(void) {
    unlink(st_path);
    unlink(blob_path);
    unlink(mf_path);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    /* Every input becomes files: memory-backed storage runs ten times
     * faster than a disk. */
    const char *base = getenv("TMPDIR");
    if (!base || !*base) base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(dir, sizeof dir, "%.200s/berth_fuzz_XXXXXX", base);
    if (!mkdtemp(dir)) abort();
    atexit(cleanup);
    snprintf(st_path, sizeof st_path, "%s/f.safetensors", dir);
    snprintf(blob_path, sizeof blob_path, "%s/f.bin", dir);
    snprintf(mf_path, sizeof mf_path, "%s/f.json", dir);
    return 0;
}

static void put(const char *path, const uint8_t *d, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (n) fwrite(d, 1, n, f);
    fclose(f);
}

static void exercise(berth_archive *a) {
    uint32_t n = berth_archive_count(a);
    if (n > 64) n = 64;
    berth_weight_request req[64];
    berth_error err;
    for (uint32_t i = 0; i < n; i++) {
        const ba_entry *e = berth_archive_entry(a, i);
        memset(&req[i], 0, sizeof req[i]);
        req[i].ref = req[i].value = e->name;
        req[i].id = i;
        req[i].rank = e->rank;
        memcpy(req[i].dims, e->dims, sizeof req[i].dims);
        switch (e->dtype) {
        case BA_BF16: case BA_F32: req[i].dtype = BERTH_DTYPE_F32; break;
        case BA_F16: req[i].dtype = BERTH_DTYPE_F16; break;
        case BA_I4: req[i].dtype = BERTH_DTYPE_I4; break;
        case BA_U8: case BA_BOOL: req[i].dtype = BERTH_DTYPE_U8; break;
        default: req[i].dtype = BERTH_DTYPE_I64; break;
        }
        if (e->bytes > (1u << 20)) return; /* keep each run cheap */
        /* Sanitized lookups of every name exercise the ambiguity path. */
        char s[128];
        snprintf(s, sizeof s, "%s", e->name);
        for (char *p = s; *p; p++)
            if (*p == '.') *p = '_';
        (void)berth_archive_lookup(a, s, &err);
    }
    berth_weights *w = NULL;
    if (berth_archive_stream(a, req, n, &be, NULL, &host, &w, NULL, &err) == BERTH_OK)
        be.free_weights(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    berth_error err;
    berth_archive *a;
    if (!(data[0] & 1)) {
        put(st_path, data + 1, size - 1);
        a = berth_archive_open(st_path, NULL, &err);
    } else {
        const uint8_t *rest = data + 1;
        size_t n = size - 1;
        const uint8_t *nul = memchr(rest, 0, n);
        size_t mlen = nul ? (size_t)(nul - rest) : n;
        put(mf_path, rest, mlen);
        put(blob_path, rest + mlen + (nul ? 1 : 0), n - mlen - (nul ? 1 : 0));
        a = berth_archive_open(blob_path, mf_path, &err);
    }
    if (a) {
        exercise(a);
        berth_archive_close(a);
    } else if (!memchr(err.msg, 0, sizeof err.msg)) {
        abort(); /* every failure leaves a terminated message */
    }
    return 0;
}
