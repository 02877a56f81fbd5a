/* Peak host memory while loading: an archive of about 200 MiB (one 64 MiB
 * tensor among many) goes through the real cpu module in a child process,
 * whose high-water RSS must stay within what the backend keeps plus the
 * largest tensor plus 16 MiB: never two copies of the model. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "archive.h"
#include "check.h"
#include "util.h"

#define MIB (1024ull * 1024ull)
#define SMALL 68 /* tensors of 2 MiB, with the 64 MiB one in the middle */

static void *svc_alloc(void *ctx, size_t bytes, size_t align) {
    (void)ctx;
    void *p = NULL;
    if (align < sizeof(void *)) align = sizeof(void *);
    return posix_memalign(&p, align, bytes ? bytes : 1) ? NULL : p;
}
static void svc_free(void *ctx, void *p) {
    (void)ctx;
    free(p);
}
static void svc_log(void *ctx, berth_log_level level, const char *msg) {
    (void)ctx;
    fprintf(stderr, "cpu[%d]: %s\n", (int)level, msg);
}
static uint32_t svc_count(void *ctx) {
    (void)ctx;
    return 0;
}
static berth_status svc_at(void *ctx, uint32_t i, const char **k, const char **v) {
    (void)ctx, (void)i, (void)k, (void)v;
    return BERTH_ERR_INVALID;
}

/* A "VmRSS:" style field of /proc/self/status, in bytes. */
static uint64_t status_field(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    uint64_t kb = 0;
    size_t n = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, n)) kb = strtoull(line + n, NULL, 10);
    if (f) fclose(f);
    return kb * 1024;
}

static int child(const char *path, uint64_t file_bytes) {
    berth_host_services host = {BERTH_BACKEND_ABI_VERSION, sizeof host, NULL, svc_log, svc_count,
                                svc_at, svc_alloc, svc_free};
    void *mod = dlopen(BERTH_CPU_MODULE, RTLD_NOW | RTLD_LOCAL);
    if (!mod) {
        fprintf(stderr, "cannot load the cpu module %s: %s\n", BERTH_CPU_MODULE, dlerror());
        return 1;
    }
    berth_backend_entry_fn entry = (berth_backend_entry_fn)dlsym(mod, BERTH_BACKEND_ENTRY_SYMBOL);
    CHECK(entry != NULL);
    if (!entry) return check_exit();
    berth_error err = {{0}};
    const berth_backend *be = entry(BERTH_BACKEND_ABI_VERSION, &host, &err);
    CHECK(be != NULL);
    if (!be) {
        fprintf(stderr, "entry refused: %s\n", err.msg);
        return check_exit();
    }
    berth_device *dev = NULL;
    CHECK(be->open(&host, &dev, &err) == BERTH_OK);
    if (!dev) {
        fprintf(stderr, "open failed: %s\n", err.msg);
        return check_exit();
    }

    /* Reset the high-water mark inherited from the parent, then measure
     * from here: everything below is loading. */
    int fd = open("/proc/self/clear_refs", O_WRONLY);
    CHECK(fd >= 0 && write(fd, "5", 1) == 1);
    if (fd >= 0) close(fd);
    uint64_t rss_before = status_field("VmRSS:");

    berth_archive *a = berth_archive_open(path, NULL, &err);
    CHECK(a != NULL);
    if (!a) {
        fprintf(stderr, "%s\n", err.msg);
        return check_exit();
    }
    uint32_t n = berth_archive_count(a);
    berth_weight_request *req = calloc(n, sizeof *req);
    uint64_t largest = 0;
    for (uint32_t i = 0; i < n; i++) {
        const ba_entry *e = berth_archive_entry(a, i);
        req[i].ref = req[i].value = e->name;
        req[i].dtype = BERTH_DTYPE_F32;
        req[i].rank = e->rank;
        memcpy(req[i].dims, e->dims, sizeof req[i].dims);
        req[i].id = i;
        if (e->bytes > largest) largest = e->bytes;
    }
    berth_weights *w = NULL;
    uint64_t peak_scratch = 0;
    berth_status st = berth_archive_stream(a, req, n, be, dev, &host, &w, &peak_scratch, &err);
    CHECK(st == BERTH_OK);
    if (st != BERTH_OK) fprintf(stderr, "%s\n", err.msg);
    uint64_t hwm = status_field("VmHWM:");
    uint64_t weights = w ? be->weights_bytes(w) : 0;
    uint64_t added = hwm > rss_before ? hwm - rss_before : 0;
    uint64_t bound = weights + largest + 16 * MIB;
    printf("archive size   %10.1f MiB (%u tensors)\n", (double)file_bytes / MIB, n);
    printf("VmRSS before   %10.1f MiB\n", (double)rss_before / MIB);
    printf("VmHWM after    %10.1f MiB (loading added %.1f MiB)\n", (double)hwm / MIB,
           (double)added / MIB);
    printf("weights bytes  %10.1f MiB\n", (double)weights / MIB);
    printf("largest tensor %10.1f MiB (scratch peak %.1f MiB)\n", (double)largest / MIB,
           (double)peak_scratch / MIB);
    printf("bound          %10.1f MiB (weights + largest + 16 MiB)\n", (double)bound / MIB);
    CHECK(weights == file_bytes - berth_archive_entry(a, 0)->offset);
    CHECK(added <= bound);
    CHECK(peak_scratch == largest);
    if (w) be->free_weights(w);
    be->close(dev);
    free(req);
    berth_archive_close(a);
    return check_exit();
}

int main(void) {
    char *dir = tu_tempdir();
    const char *path = tu_path(dir, "big.safetensors");
    /* Every tensor points into one 64 MiB pattern, so writing costs one
     * buffer; it is freed before the child forks so the child starts lean. */
    size_t big = 64 * MIB;
    float *pattern = malloc(big);
    CHECK(pattern != NULL);
    if (!pattern) return check_exit();
    for (size_t i = 0; i < big / 4; i++) pattern[i] = (float)(i % 1000) * 0.5f;
    berth_st_tensor t[SMALL + 1];
    char names[SMALL + 1][32];
    for (int i = 0; i <= SMALL; i++) {
        int is_big = i == SMALL / 2;
        snprintf(names[i], sizeof names[i], "%s.%d", is_big ? "embed" : "layer", i);
        uint64_t bytes = is_big ? big : 2 * MIB;
        t[i] = (berth_st_tensor){names[i], BA_F32, 2, {(int64_t)(bytes / 4 / 256), 256}, pattern,
                                 bytes};
    }
    berth_error err;
    CHECK(berth_st_write(path, t, SMALL + 1, NULL, &err) == 0);
    free(pattern);
    FILE *f = fopen(path, "rb");
    uint64_t size = 0;
    if (f) {
        fseek(f, 0, SEEK_END);
        size = (uint64_t)ftell(f);
        fclose(f);
    }
    CHECK(size > 190 * MIB);

    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        int rc = child(path, size);
        fflush(stdout);
        fflush(stderr);
        _exit(rc);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    unlink(path);
    tu_rmdir(dir);
    CHECK(tu_count(dir) == -1); /* the archive and its directory are gone */
    return check_exit();
}
