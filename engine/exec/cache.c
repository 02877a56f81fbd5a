/* [cache] dir: what backends keep between processes (ABI 1.4 save_state
 * and load_state), one file per key. The key covers everything the saved
 * bytes depend on: the backend's name, version and device, its options,
 * the executor's backends and split mode, the graphs, the weights' bytes
 * and, for programs, the bucket. A file is trusted only whole: its
 * header must name the key it is read for and a digest of its payload
 * must match, else it is stale or corrupt, said so in the log, and
 * rebuilt. Failing to write one costs the next start its time, never
 * this one its run: write errors are warnings. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive.h"
#include "backend_call.h"
#include "cache.h"
#include "loader.h"
#include "util.h"

#define CACHE_MAGIC "berth-cache-v1\n"

typedef struct cache_header {
    char magic[16];
    uint64_t key;
    uint64_t kind;
    uint64_t bytes;  /* of the payload that follows */
    uint64_t digest; /* berth_digest of the payload */
} cache_header;

static uint64_t digest_str(uint64_t h, const char *s) { return berth_digest(h, s ? s : "", s ? strlen(s) + 1 : 1); }

static uint64_t digest_u64(uint64_t h, uint64_t v) { return berth_digest(h, &v, sizeof v); }

/* Backend k as it was opened: which module, device and options. */
static uint64_t backend_key(const berth_executor *ex, uint32_t k) {
    const exec_backend *b = &ex->be[k];
    const berth_backend *be = b->mod.be;
    uint64_t h = digest_str(0, be->name);
    h = digest_str(h, be->version);
    h = digest_u64(h, be->abi_version);
    h = digest_str(h, b->device_name);
    const berth_host_services *hs = &b->host.services;
    uint32_t n = hs->option_count(hs->ctx);
    for (uint32_t i = 0; i < n; i++) {
        const char *key = NULL, *value = NULL;
        if (hs->option_at(hs->ctx, i, &key, &value) != BERTH_OK) continue;
        h = digest_str(digest_str(h, key), value);
    }
    return h;
}

/* Which part of the graphs and weights backend k holds follows from the
 * graphs, the weights, every backend of the executor and the split. */
static uint64_t executor_key(const berth_executor *ex, uint32_t k) {
    uint64_t h = digest_u64(backend_key(ex, k), (uint64_t)ex->split);
    for (uint32_t j = 0; j < ex->n_be; j++) h = digest_str(h, ex->be[j].mod.be->name);
    h = digest_u64(h, berth_archive_digest(ex->archive));
    for (uint32_t l = 0; l < ex->n_lanes; l++) h = digest_u64(h, ex->lanes[l].g->digest);
    return h;
}

uint64_t berth_cache_key(const berth_executor *ex, uint32_t k, uint32_t kind, const lane *ln, uint32_t bucket) {
    uint64_t h = digest_u64(executor_key(ex, k), kind);
    /* weights are prepared for every lane's first bucket */
    for (uint32_t l = 0; l < ex->n_lanes; l++) {
        const lane *at = ln ? ln : &ex->lanes[l];
        uint32_t b = ln ? bucket : 0, ns = at->g->n_syms;
        h = digest_u64(digest_u64(h, at->g->digest), b);
        if (at->bucket_vals && ns) h = berth_digest(h, at->bucket_vals + (size_t)b * ns, sizeof(int64_t) * ns);
        if (ln) break;
    }
    return h;
}

static const char *kind_name(uint32_t kind) { return kind == BERTH_STATE_WEIGHTS ? "weights" : "programs"; }

static char *cache_path(const berth_executor *ex, uint32_t k, uint32_t kind, uint64_t key) {
    char name[128];
    snprintf(name, sizeof name, "%.40s-%s-%016" PRIx64 ".bin", ex->be[k].mod.be->name, kind_name(kind), key);
    for (char *c = name; *c; c++)
        if (*c == '/') *c = '_';
    return berth_path_join(ex->cfg->cache_dir, name);
}

/* The payload of path if its header is key's and its digest holds;
 * NULL otherwise, with why saying so (empty: there is no file). Opened
 * as berth opens every file it reads: a FIFO or a device put there
 * cannot stall the start, and is refused as not a regular file. */
static void *read_entry(const char *path, uint32_t kind, uint64_t key, size_t *bytes, berth_error *why) {
    FILE *f = berth_fopen_regular(path, "cache file", why);
    if (!f) {
        if (errno == ENOENT || errno == ENOTDIR) why->msg[0] = 0; /* none there */
        return NULL;
    }
    cache_header h;
    struct stat st;
    void *data = NULL;
    const char *bad = NULL;
    if (fread(&h, sizeof h, 1, f) != 1 || memcmp(h.magic, CACHE_MAGIC, sizeof h.magic)) {
        bad = "not a berth cache file";
    } else if (h.key != key || h.kind != kind) {
        bad = "its header names another key";
    } else if (fstat(fileno(f), &st) || h.bytes != (uint64_t)st.st_size - sizeof h || h.bytes > SIZE_MAX) {
        bad = "its size is not what its header says (cut short?)";
    } else if (!(data = malloc(h.bytes ? (size_t)h.bytes : 1)) || fread(data, 1, (size_t)h.bytes, f) != h.bytes) {
        bad = data ? "reading it failed" : "out of memory reading it";
    } else if (berth_digest(0, data, (size_t)h.bytes) != h.digest) {
        bad = "its digest does not match its bytes (corrupt)";
    }
    fclose(f);
    if (bad) {
        berth_errorf(why, "%s: %s", path, bad);
        free(data);
        return NULL;
    }
    *bytes = (size_t)h.bytes;
    return data;
}

int berth_cache_load(berth_executor *ex, uint32_t k, uint32_t kind, uint64_t key) {
    exec_backend *b = &ex->be[k];
    if (!ex->cfg->cache_dir || !berth_backend_has_state(b->mod.be)) return 0;
    char *path = cache_path(ex, k, kind, key);
    if (!path) return 0;
    size_t bytes = 0;
    berth_error why;
    void *data = read_entry(path, kind, key, &bytes, &why);
    berth_status st = BERTH_ERR_INVALID;
    if (data) {
        berth_error err;
        berth_backend_msg_reset(&err);
        st = b->mod.be->load_state(b->dev, b->w, kind, data, bytes, &err);
        st = berth_backend_result(st, b->mod.be->name, "load_state", &err, &err);
        if (st != BERTH_OK) berth_errorf(&why, "%s: %s", path, err.msg);
    }
    if (st == BERTH_OK) {
        b->cache_loads++;
        berth_logf(&ex->log, BERTH_LOG_INFO, "cache: '%s' took its %s from %s (%zu bytes)", b->item,
                   kind_name(kind), path, bytes);
    } else if (why.msg[0]) {
        b->cache_refused++;
        berth_logf(&ex->log, BERTH_LOG_WARN, "cache: %s; '%s' builds its %s anew", why.msg, b->item,
                   kind_name(kind));
    }
    free(data);
    free(path);
    return st == BERTH_OK;
}

static int make_dirs(const char *dir) {
    char *p = strdup(dir);
    if (!p) return -1;
    for (char *c = p + 1; *c; c++) {
        if (*c != '/') continue;
        *c = 0;
        if (mkdir(p, 0777) && errno != EEXIST) break;
        *c = '/';
    }
    int rc = mkdir(p, 0777) && errno != EEXIST ? -1 : 0;
    free(p);
    return rc;
}

/* Into PATH.tmp.XXXXXX, then renamed into place: a reader sees the old
 * file or the new one, never half of one. */
static const char *write_entry(const char *path, const cache_header *h, const void *data) {
    size_t n = strlen(path);
    char *tmp = malloc(n + 12);
    if (!tmp) return "out of memory";
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp.XXXXXX", 12);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        free(tmp);
        return strerror(errno);
    }
    FILE *f = fdopen(fd, "wb");
    int ok = f && fwrite(h, sizeof *h, 1, f) == 1 && (!h->bytes || fwrite(data, 1, (size_t)h->bytes, f) == h->bytes);
    const char *why = ok ? NULL : strerror(errno ? errno : EIO);
    if (f ? fclose(f) : close(fd)) why = why ? why : strerror(errno);
    if (!why && rename(tmp, path)) why = strerror(errno);
    if (why) unlink(tmp);
    free(tmp);
    return why;
}

void berth_cache_save(berth_executor *ex, uint32_t k, uint32_t kind, uint64_t key) {
    exec_backend *b = &ex->be[k];
    if (!ex->cfg->cache_dir || !berth_backend_has_state(b->mod.be)) return;
    berth_error err;
    berth_backend_msg_reset(&err);
    size_t bytes = 0;
    berth_status st = b->mod.be->save_state(b->dev, b->w, kind, NULL, &bytes, &err);
    if (st == BERTH_ERR_UNSUPPORTED) { /* nothing of this kind to keep */
        berth_logf(&ex->log, BERTH_LOG_DEBUG, "cache: '%s' keeps no %s: %s", b->item, kind_name(kind), err.msg);
        return;
    }
    void *data = st == BERTH_OK ? malloc(bytes ? bytes : 1) : NULL;
    if (data) st = b->mod.be->save_state(b->dev, b->w, kind, data, &bytes, &err);
    st = berth_backend_result(st, b->mod.be->name, "save_state", &err, &err);
    char *path = cache_path(ex, k, kind, key);
    const char *why = st != BERTH_OK ? err.msg : !data || !path ? "out of memory" : NULL;
    if (!why && make_dirs(ex->cfg->cache_dir)) why = strerror(errno);
    if (!why) {
        cache_header h = {.key = key, .kind = kind, .bytes = bytes, .digest = berth_digest(0, data, bytes)};
        memcpy(h.magic, CACHE_MAGIC, sizeof h.magic);
        why = write_entry(path, &h, data);
    }
    if (why) {
        berth_logf(&ex->log, BERTH_LOG_WARN, "cache: keeping '%s''s %s in %s failed: %s", b->item, kind_name(kind),
                   path ? path : ex->cfg->cache_dir, why);
    } else {
        b->cache_saves++;
        berth_logf(&ex->log, BERTH_LOG_INFO, "cache: '%s''s %s kept in %s (%zu bytes)", b->item, kind_name(kind),
                   path, bytes);
    }
    free(path);
    free(data);
}
