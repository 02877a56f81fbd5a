/* Streaming through an in-test backend table that records every call:
 * file order, one reused scratch, GIVEN buffers changing hands, the
 * upload_dest path, and cleanup when something fails midway. */
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive.h"
#include "check.h"
#include "fake_backend.h"
#include "util.h"

#define NT 5
static const int64_t sizes[NT] = {3, 10, 64, 5, 17}; /* f32 elements; t2 is the largest */
static float values[NT][64];
static const char *names[NT] = {"t0", "t1", "t2", "t3", "t4"};

static void requests(berth_weight_request *r) {
    /* Asked in reverse, with ids in yet another order. */
    for (int i = 0; i < NT; i++) {
        int k = NT - 1 - i;
        r[i] = fake_req(names[k], BERTH_DTYPE_F32, (uint32_t)((k + 2) % NT), 1, &sizes[k]);
    }
}

static int log_is(int i, const char *want) { return i < F.nlog && !strcmp(F.log[i], want); }

static void check_values(void) {
    for (int k = 0; k < NT; k++) {
        const fake_tensor *t = fake_find(names[k]);
        CHECK(t && t->bytes == (size_t)sizes[k] * 4 && !memcmp(t->copy, values[k], t->bytes));
        CHECK(t && t->id == (uint32_t)((k + 2) % NT));
    }
}

static berth_status run(berth_archive *a, const berth_backend *be, berth_weights **w,
                        uint64_t *peak, berth_error *err) {
    berth_weight_request r[NT];
    requests(r);
    host_allocs = 0;
    return berth_archive_stream(a, r, NT, be, NULL, &fake_host, w, peak, err);
}

/* The file is changed by someone else while it streams: in place at the
 * same size, grown, or replaced by a rename. Each is an error naming the
 * file and what changed, and nothing stays loaded. */
static const char *change_path;
static int change_kind;
static berth_st_tensor change_t[NT];

static void change_file(const char *name) {
    if (strcmp(name, "t1")) return;
    /* Past one tick of the file system's clock, so the times differ. */
    usleep(50 * 1000);
    if (change_kind == 0) { /* shrink, then grow back to the same size */
        struct stat sb;
        CHECK(stat(change_path, &sb) == 0);
        off_t size = sb.st_size;
        CHECK(truncate(change_path, 8) == 0);
        CHECK(truncate(change_path, size) == 0);
    } else if (change_kind == 1) { /* appended to */
        FILE *f = fopen(change_path, "ab");
        CHECK(f && fwrite("more", 1, 4, f) == 4);
        if (f) fclose(f);
    } else { /* a new copy renamed over it */
        berth_error err;
        CHECK(berth_st_write(change_path, change_t, NT, NULL, &err) == 0);
    }
}

static void test_changed_while_loading(const char *dir) {
    change_path = tu_path(dir, "changing.safetensors");
    for (change_kind = 0; change_kind < 3; change_kind++) {
        berth_error err;
        CHECK(berth_st_write(change_path, change_t, NT, NULL, &err) == 0);
        struct stat sb;
        CHECK(stat(change_path, &sb) == 0);
        char grown[96];
        snprintf(grown, sizeof grown, "its size went from %lld to %lld bytes", (long long)sb.st_size,
                 (long long)sb.st_size + 4);
        const char *want[3] = {"it was written to", grown, "another file (or none) now has its name"};
        berth_archive *a = berth_archive_open(change_path, NULL, &err);
        CHECK(a != NULL);
        if (!a) return;
        fake_reset();
        F.take = 1;
        F.on_tensor = change_file;
        berth_weights *w = NULL;
        uint64_t peak;
        CHECK(run(a, &fake_backend, &w, &peak, &err) == BERTH_ERR_IO);
        CHECK_CONTAINS(err.msg, "changing.safetensors: the weights file changed while it was being "
                                "loaded (");
        CHECK_CONTAINS(err.msg, want[change_kind]);
        CHECK_CONTAINS(err.msg, "); nothing was loaded: load it again once it is complete");
        CHECK(w == NULL && F.freed == 1 && F.ended == 0 && host_live == 0);
        berth_archive_close(a);
    }
    F.on_tensor = NULL;
}

int main(void) {
    char *dir = tu_tempdir();
    const char *path = tu_path(dir, "stream.safetensors");
    berth_st_tensor t[NT];
    for (int k = 0; k < NT; k++) {
        for (int i = 0; i < sizes[k]; i++) values[k][i] = (float)(k * 100 + i) + 0.25f;
        t[k] = (berth_st_tensor){names[k], BA_F32, 1, {sizes[k]}, values[k], (uint64_t)sizes[k] * 4};
    }
    berth_error err;
    CHECK(berth_st_write(path, t, NT, NULL, &err) == 0);
    berth_archive *a = berth_archive_open(path, NULL, &err);
    CHECK(a != NULL);
    if (!a) return check_exit();
    berth_weights *w = NULL;
    uint64_t peak = 0;

    /* A: scratch only, never taken: one buffer reused for all. */
    fake_reset();
    CHECK(run(a, &fake_backend_nodest, &w, &peak, &err) == BERTH_OK);
    CHECK(w != NULL);
    CHECK(F.info.n_tensors == NT && F.info.total_bytes == 4 * (3 + 10 + 64 + 5 + 17) &&
          F.info.largest_bytes == 256);
    CHECK(log_is(0, "begin 5"));
    for (int k = 0; k < NT; k++) {
        char want[32];
        snprintf(want, sizeof want, "tensor t%d %u", k, BERTH_UPLOAD_GIVEN);
        CHECK(log_is(1 + k, want)); /* file order, not request order */
    }
    CHECK(log_is(NT + 1, "end 0") && F.nlog == NT + 2);
    for (int k = 1; k < NT; k++) CHECK(F.t[k].data == F.t[0].data);
    CHECK(host_allocs == 1 && host_live == 0 && peak == 256);
    check_values();
    fake_backend_nodest.free_weights(w);

    /* B: the backend takes every GIVEN buffer: a new scratch each time,
     * all owned by the backend, released through host->free. */
    fake_reset();
    F.take = 1;
    CHECK(run(a, &fake_backend_nodest, &w, &peak, &err) == BERTH_OK);
    CHECK(host_allocs == NT && host_live == NT);
    for (int k = 0; k < NT; k++)
        for (int j = 0; j < k; j++) CHECK(F.t[k].data != F.t[j].data);
    check_values();
    fake_backend_nodest.free_weights(w);
    CHECK(host_live == 0);

    /* C: destinations offered for t1 and t3 are filled in place; the rest
     * share the scratch. */
    fake_reset();
    F.dest_for[0] = "t1";
    F.dest_for[1] = "t3";
    CHECK(run(a, &fake_backend, &w, &peak, &err) == BERTH_OK);
    CHECK(log_is(1, "dest t0 12") && log_is(2, "tensor t0 2"));
    CHECK(log_is(3, "dest t1 40") && log_is(4, "tensor t1 1"));
    CHECK(F.t[1].flags == BERTH_UPLOAD_IN_PLACE && F.t[1].data == F.t[1].dest);
    CHECK(F.t[3].flags == BERTH_UPLOAD_IN_PLACE && F.t[3].data == F.t[3].dest);
    CHECK(F.t[0].flags == BERTH_UPLOAD_GIVEN && F.t[2].data == F.t[0].data &&
          F.t[4].data == F.t[0].data);
    CHECK(host_allocs == 1 && host_live == 0);
    check_values();
    fake_backend.free_weights(w);

    /* D: the backend fails on tensor 3: free_weights takes the half-filled
     * weights, upload_end never comes, the message names t3 and the file. */
    fake_reset();
    F.take = 1;
    F.fail_on = "t3";
    CHECK(run(a, &fake_backend_nodest, &w, &peak, &err) == BERTH_ERR_NOMEM);
    CHECK(w == NULL && F.freed == 1 && F.ended == 0 && F.nt == 3);
    CHECK(log_is(4, "tensor t3 2") && log_is(5, "free 0"));
    CHECK_CONTAINS(err.msg, "stream.safetensors: tensor 't3': backend 'fake-nodest' upload_tensor(): "
                            "BERTH_ERR_NOMEM: fake device is full");
    CHECK(host_live == 0);

    /* E: a request that disagrees with its entry fails before any upload. */
    fake_reset();
    berth_weight_request r[NT];
    requests(r);
    r[3].dims[0] = 11;
    CHECK(berth_archive_stream(a, r, NT, &fake_backend, NULL, &fake_host, &w, NULL, &err) ==
          BERTH_ERR_INVALID);
    CHECK(F.began == 0 && F.nlog == 0);
    CHECK_CONTAINS(err.msg, "tensor 't1' is F32[10] in the archive but const 't1' declares f32[11]");

    /* F: ids must be dense and unique. */
    requests(r);
    r[1].id = r[0].id;
    CHECK(berth_archive_stream(a, r, NT, &fake_backend, NULL, &fake_host, &w, NULL, &err) ==
          BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "weight id");
    CHECK(F.began == 0);

    /* G: upload_begin refuses: nothing to free. */
    fake_reset();
    F.fail_begin = 1;
    CHECK(run(a, &fake_backend, &w, &peak, &err) == BERTH_ERR_DEVICE);
    CHECK_CONTAINS(err.msg, "stream.safetensors: backend 'fake' upload_begin(): BERTH_ERR_DEVICE: fake "
                            "begin refuses");
    CHECK(F.freed == 0 && w == NULL);

    /* H: the file shrinks after it was validated: the read of the tensor
     * past the new end fails, and what was uploaded is freed. */
    CHECK(truncate(path, (off_t)berth_archive_entry(a, 3)->offset + 4) == 0);
    fake_reset();
    F.take = 1;
    CHECK(run(a, &fake_backend, &w, &peak, &err) == BERTH_ERR_IO);
    CHECK_CONTAINS(err.msg, "stream.safetensors: tensor 't3': reading 20 bytes at offset");
    CHECK_CONTAINS(err.msg, "the file ended early");
    CHECK(F.freed == 1 && F.nt == 3 && w == NULL && host_live == 0);

    berth_archive_close(a);
    for (int k = 0; k < NT; k++) change_t[k] = t[k];
    test_changed_while_loading(dir);
    tu_rmdir(dir);
    return check_exit();
}
