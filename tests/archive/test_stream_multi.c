/* Streaming one archive into two backends at once (a graph split across
 * backends): each gets only its own tensors under its own ids, a tensor
 * both want is read from the file once and copied, the copy reaches the
 * second backend before the first one's upload_tensor, and a failure in
 * either backend frees both.
 *
 * fake_backend.h keeps one global state, enough for one backend; here the
 * state lives in each fake device, so two backends stream side by side. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive.h"
#include "check.h"
#include "util.h"

#define MAXT 8

typedef struct got {
    char name[16];
    uint32_t id;
    size_t bytes;
    uint32_t flags;
    void *data;          /* the pointer upload_tensor received */
    unsigned char *copy; /* its bytes at that moment */
    int kept;            /* GIVEN and taken: released with host_free */
    void *dest;          /* what upload_dest offered for it, or NULL */
} got;

/* One fake backend: its knobs and what it received. */
struct berth_device {
    const char *tag;      /* "a" or "b" in the shared log */
    int take;             /* take GIVEN buffers */
    const char *dest_for; /* offer memory for this tensor */
    const char *fail_on;  /* upload_tensor of this tensor fails */
    int fail_end;
    int began, ended, freed;
    berth_upload_info info;
    got t[MAXT];
    int nt;
    void *offered; /* offered by upload_dest, its upload_tensor not yet come */
};

struct berth_weights {
    struct berth_device *dev;
};
static struct berth_weights weights_of[2];

/* Both backends' calls in one log, to see their order against each other. */
static char calls[64][48];
static int ncalls;
static void note(const struct berth_device *d, const char *what, const char *name, unsigned v) {
    if (ncalls < 64) snprintf(calls[ncalls++], sizeof calls[0], "%s %s %s %u", d->tag, what, name, v);
}
static int call_is(int i, const char *want) {
    if (i < ncalls && !strcmp(calls[i], want)) return 1;
    fprintf(stderr, "call %d: expected \"%s\", got \"%s\"\n", i, want, i < ncalls ? calls[i] : "");
    return 0;
}

static long host_live, host_allocs;
static void *host_alloc(void *ctx, size_t bytes, size_t align) {
    (void)ctx;
    void *p = NULL;
    if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, bytes ? bytes : 1))
        return NULL;
    host_live++, host_allocs++;
    return p;
}
static void host_free(void *ctx, void *p) {
    (void)ctx;
    if (p) host_live--;
    free(p);
}
static const berth_host_services host = {
    BERTH_BACKEND_ABI_VERSION, sizeof(berth_host_services), NULL, NULL, NULL, NULL,
    host_alloc, host_free};

/* Called as each tensor reaches a backend (the file-change case). */
static void (*on_tensor)(const char *name);

static berth_status fk_begin(berth_device *dev, const berth_upload_info *info, berth_weights **out,
                             berth_error *err) {
    (void)err;
    dev->began++;
    dev->info = *info;
    note(dev, "begin", "-", info->n_tensors);
    struct berth_weights *w = &weights_of[dev->tag[0] == 'b'];
    w->dev = dev;
    *out = w;
    return BERTH_OK;
}

static berth_status fk_dest(berth_weights *w, const berth_weight_desc *d, void **dest,
                            berth_error *err) {
    (void)err;
    struct berth_device *dev = w->dev;
    note(dev, "dest", d->name, (unsigned)d->bytes);
    *dest = NULL;
    if (dev->dest_for && !strcmp(dev->dest_for, d->name)) {
        /* A pattern, so a tensor never read into it shows. */
        dev->offered = malloc(d->bytes ? d->bytes : 1);
        memset(dev->offered, 0xEE, d->bytes);
        *dest = dev->offered;
    }
    return BERTH_OK;
}

static berth_status fk_tensor(berth_weights *w, const berth_weight_desc *d, void *data,
                              uint32_t flags, int *taken, berth_error *err) {
    struct berth_device *dev = w->dev;
    note(dev, "tensor", d->name, flags);
    if (on_tensor) on_tensor(d->name);
    if (dev->fail_on && !strcmp(dev->fail_on, d->name)) {
        snprintf(err->msg, sizeof err->msg, "fake device is full");
        return BERTH_ERR_NOMEM;
    }
    got *g = &dev->t[dev->nt++];
    snprintf(g->name, sizeof g->name, "%s", d->name);
    g->id = d->id;
    g->bytes = d->bytes;
    g->flags = flags;
    g->data = data;
    g->copy = malloc(d->bytes ? d->bytes : 1);
    memcpy(g->copy, data, d->bytes);
    g->dest = dev->offered;
    dev->offered = NULL;
    /* Scribbles over what it was handed, as a backend converting in place
     * may: a target served from this buffer after it would see it. */
    memset(data, 0x5A, d->bytes);
    if ((flags & BERTH_UPLOAD_GIVEN) && dev->take) {
        *taken = 1;
        g->kept = 1;
    }
    return BERTH_OK;
}

static berth_status fk_end(berth_weights *w, berth_error *err) {
    w->dev->ended++;
    note(w->dev, "end", "-", 0);
    if (w->dev->fail_end) {
        snprintf(err->msg, sizeof err->msg, "fake cannot finish");
        return BERTH_ERR_DEVICE;
    }
    return BERTH_OK;
}

static void fk_free(berth_weights *w) {
    struct berth_device *dev = w->dev;
    dev->freed++;
    note(dev, "free", "-", 0);
    for (int i = 0; i < dev->nt; i++) {
        if (dev->t[i].kept) host_free(NULL, dev->t[i].data);
        free(dev->t[i].dest);
        free(dev->t[i].copy);
        dev->t[i].kept = 0;
        dev->t[i].dest = dev->t[i].copy = NULL;
    }
    free(dev->offered);
    dev->offered = NULL;
}

static const berth_backend fake_a = {
    .abi_version = BERTH_BACKEND_ABI_VERSION,
    .struct_size = sizeof(berth_backend),
    .name = "fake-a",
    .version = "test",
    .upload_begin = fk_begin,
    .upload_dest = fk_dest,
    .upload_tensor = fk_tensor,
    .upload_end = fk_end,
    .free_weights = fk_free,
};

/* Offers no memory: always the engine's buffers. */
static const berth_backend fake_b = {
    .abi_version = BERTH_BACKEND_ABI_VERSION,
    .struct_size = sizeof(berth_backend),
    .name = "fake-b",
    .version = "test",
    .upload_begin = fk_begin,
    .upload_tensor = fk_tensor,
    .upload_end = fk_end,
    .free_weights = fk_free,
};

/* The archive: A is BF16 declared f32 (widened), B and C are f32; file
 * order A, B, C. B is the largest after conversion. */
#define NA 8
#define NB 16
#define NC 5
static const int64_t dim_a = NA, dim_b = NB, dim_c = NC;
static float want_a[NA], want_b[NB], want_c[NC];
static uint16_t raw_a[NA];

static struct berth_device dev[2];

static void reset(void) {
    memset(dev, 0, sizeof dev);
    dev[0].tag = "a";
    dev[1].tag = "b";
    ncalls = 0;
    host_allocs = 0;
}

static berth_weight_request req(const char *ref, uint32_t id, const int64_t *dim) {
    berth_weight_request r;
    memset(&r, 0, sizeof r);
    r.ref = r.value = ref;
    r.dtype = BERTH_DTYPE_F32;
    r.rank = 1;
    r.dims[0] = *dim;
    r.id = id;
    return r;
}

/* Target 0 wants B (id 0) and A (id 1); target 1 wants A (id 0) and C
 * (id 1): A is shared, under different ids. */
static berth_weight_request req0[3], req1[2];
static berth_stream_target targets[2];

static void aim(const berth_backend *be0, const berth_backend *be1) {
    req0[0] = req("B", 0, &dim_b);
    req0[1] = req("A", 1, &dim_a);
    req1[0] = req("A", 0, &dim_a);
    req1[1] = req("C", 1, &dim_c);
    targets[0] = (berth_stream_target){be0, &dev[0], &host, req0, 2, NULL};
    targets[1] = (berth_stream_target){be1, &dev[1], &host, req1, 2, NULL};
}

/* The record of `name` in d (the n-th if it came more than once). */
static const got *find(const struct berth_device *d, const char *name, int nth) {
    for (int i = 0; i < d->nt; i++)
        if (!strcmp(d->t[i].name, name) && nth-- == 0) return &d->t[i];
    return NULL;
}

static int holds(const struct berth_device *d, const char *name, int nth, uint32_t id,
                 const float *want, size_t n) {
    const got *g = find(d, name, nth);
    return g && g->id == id && g->bytes == n * 4 && !memcmp(g->copy, want, n * 4);
}

/* read() and pread() calls so far, from /proc/self/io; -1 where the
 * kernel does not say. The read of the file itself is counted once the
 * call returns, so each measurement adds one. */
static long read_calls(void) {
    int fd = open("/proc/self/io", O_RDONLY);
    if (fd < 0) return -1;
    char buf[512];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = 0;
    const char *p = strstr(buf, "syscr:");
    return p ? strtol(p + 6, NULL, 10) : -1;
}

/* Preads the stream made: calls counted around it, less the counting. */
static long preads_during(berth_archive *a, uint64_t *peak, berth_error *err, berth_status *st) {
    long r0 = read_calls(), r1 = read_calls();
    *st = berth_archive_stream_to(a, targets, 2, peak, err);
    long r2 = read_calls();
    return r0 < 0 || r1 < 0 || r2 < 0 ? -1 : (r2 - r1) - (r1 - r0);
}

static void free_both(void) {
    for (int k = 0; k < 2; k++)
        if (targets[k].w) targets[k].be->free_weights(targets[k].w);
}

/* One backend offers memory for A (read straight into it, in place), the
 * other offers none and keeps what it is given. */
static void test_in_place_and_given(berth_archive *a) {
    reset();
    aim(&fake_a, &fake_b);
    dev[0].dest_for = "A";
    dev[1].take = 1;
    berth_error err;
    uint64_t peak = 0;
    berth_status st;
    long preads = preads_during(a, &peak, &err, &st);
    CHECK(st == BERTH_OK);
    if (st != BERTH_OK) fprintf(stderr, "%s\n", err.msg);
    CHECK(targets[0].w && targets[1].w);
    if (preads < 0)
        fprintf(stderr, "/proc/self/io unreadable: not counting reads\n");
    else
        CHECK(preads == 3); /* A, B and C once each */

    /* Each backend is told of its own share only. */
    CHECK(dev[0].info.n_tensors == 2 && dev[0].info.total_bytes == 4 * (NA + NB) &&
          dev[0].info.largest_bytes == 4 * NB);
    CHECK(dev[1].info.n_tensors == 2 && dev[1].info.total_bytes == 4 * (NA + NC) &&
          dev[1].info.largest_bytes == 4 * NA);

    /* File order; b's copy of A before a's upload of the buffer read into. */
    CHECK(call_is(0, "a begin - 2") && call_is(1, "b begin - 2"));
    CHECK(call_is(2, "a dest A 32") && call_is(3, "b tensor A 2") && call_is(4, "a tensor A 1"));
    CHECK(call_is(5, "a dest B 64") && call_is(6, "a tensor B 2"));
    CHECK(call_is(7, "b tensor C 2"));
    CHECK(call_is(8, "a end - 0") && call_is(9, "b end - 0") && ncalls == 10);

    CHECK(dev[0].nt == 2 && dev[1].nt == 2);
    CHECK(holds(&dev[0], "A", 0, 1, want_a, NA) && holds(&dev[0], "B", 0, 0, want_b, NB));
    CHECK(holds(&dev[1], "A", 0, 0, want_a, NA) && holds(&dev[1], "C", 0, 1, want_c, NC));
    const got *a0 = find(&dev[0], "A", 0), *a1 = find(&dev[1], "A", 0);
    CHECK(a0 && a0->flags == BERTH_UPLOAD_IN_PLACE && a0->data == a0->dest);
    CHECK(a1 && a1->flags == BERTH_UPLOAD_GIVEN && a1->kept && a1->data != a0->data);
    /* a does not take its scratch: kept by the engine and freed at the
     * end; b kept two copies, which it frees. */
    CHECK(host_live == 2);
    free_both();
    CHECK(host_live == 0);
}

/* Neither backend offers memory: A is read into the scratch, b's copy
 * goes in the second buffer; nobody keeps them, so those two buffers
 * serve the whole load and the engine held the largest tensor plus the
 * largest shared one. */
static void test_scratch_and_copy(berth_archive *a) {
    reset();
    aim(&fake_b, &fake_b); /* one table, two devices */
    berth_error err;
    uint64_t peak = 0;
    berth_status st;
    long preads = preads_during(a, &peak, &err, &st);
    CHECK(st == BERTH_OK);
    CHECK(preads < 0 || preads == 3);
    CHECK(call_is(2, "b tensor A 2") && call_is(3, "a tensor A 2"));
    CHECK(holds(&dev[0], "A", 0, 1, want_a, NA) && holds(&dev[1], "A", 0, 0, want_a, NA));
    CHECK(holds(&dev[0], "B", 0, 0, want_b, NB) && holds(&dev[1], "C", 0, 1, want_c, NC));
    const got *a0 = find(&dev[0], "A", 0), *a1 = find(&dev[1], "A", 0);
    const got *b0 = find(&dev[0], "B", 0), *c1 = find(&dev[1], "C", 0);
    CHECK(a0 && a1 && b0 && c1 && a0->data != a1->data);
    /* B and C are nobody else's: both read into the scratch A was. */
    CHECK(a0 && b0 && c1 && b0->data == a0->data && c1->data == a0->data);
    CHECK(host_allocs == 2 && host_live == 0);
    CHECK(peak == 4 * NB + 4 * NA);
    free_both();
}

/* The owner of the read buffer keeps its scratch: it is given only after
 * the other target has its copy, and the next tensor gets a new scratch. */
static void test_owner_keeps(berth_archive *a) {
    reset();
    aim(&fake_b, &fake_b);
    dev[0].take = 1;
    dev[1].take = 1;
    berth_error err;
    CHECK(berth_archive_stream_to(a, targets, 2, NULL, &err) == BERTH_OK);
    CHECK(call_is(2, "b tensor A 2") && call_is(3, "a tensor A 2"));
    const got *a0 = find(&dev[0], "A", 0), *a1 = find(&dev[1], "A", 0);
    const got *b0 = find(&dev[0], "B", 0);
    CHECK(a0 && a1 && b0 && a0->kept && a1->kept && b0->kept && b0->data != a0->data);
    CHECK(holds(&dev[0], "A", 0, 1, want_a, NA) && holds(&dev[1], "A", 0, 0, want_a, NA));
    CHECK(host_live == 4);
    free_both();
    CHECK(host_live == 0);
}

/* A target asking for A under two ids gets it twice, from a second read;
 * the other target shares the first. */
static void test_twice_in_one_target(berth_archive *a) {
    reset();
    aim(&fake_a, &fake_b);
    req0[2] = req("A", 2, &dim_a);
    targets[0].n = 3;
    berth_error err;
    uint64_t peak;
    berth_status st;
    long preads = preads_during(a, &peak, &err, &st);
    CHECK(st == BERTH_OK);
    CHECK(preads < 0 || preads == 4);
    CHECK(holds(&dev[0], "A", 0, 1, want_a, NA) && holds(&dev[0], "A", 1, 2, want_a, NA));
    CHECK(holds(&dev[1], "A", 0, 0, want_a, NA));
    CHECK(dev[0].info.n_tensors == 3 && dev[0].info.total_bytes == 4 * (2 * NA + NB));
    free_both();
    CHECK(host_live == 0);
}

/* b fails on A after a was offered memory for it and before a's
 * upload_tensor: both are freed, neither ended. */
static void test_second_fails(berth_archive *a) {
    reset();
    aim(&fake_a, &fake_b);
    dev[0].dest_for = "A";
    dev[1].take = 1;
    dev[1].fail_on = "A";
    berth_error err;
    CHECK(berth_archive_stream_to(a, targets, 2, NULL, &err) == BERTH_ERR_NOMEM);
    CHECK_CONTAINS(err.msg, "multi.safetensors: tensor 'A': backend 'fake-b' upload_tensor(): "
                            "BERTH_ERR_NOMEM: fake device is full");
    CHECK(targets[0].w == NULL && targets[1].w == NULL);
    CHECK(dev[0].freed == 1 && dev[1].freed == 1 && dev[0].ended == 0 && dev[1].ended == 0);
    CHECK(dev[0].nt == 0 && host_live == 0);

    /* Later, once a has A and B: the same. */
    reset();
    aim(&fake_a, &fake_b);
    dev[1].take = 1;
    dev[1].fail_on = "C";
    CHECK(berth_archive_stream_to(a, targets, 2, NULL, &err) == BERTH_ERR_NOMEM);
    CHECK_CONTAINS(err.msg, "tensor 'C': backend 'fake-b' upload_tensor()");
    CHECK(targets[0].w == NULL && targets[1].w == NULL);
    CHECK(dev[0].freed == 1 && dev[1].freed == 1 && host_live == 0);

    /* b's upload_end refuses after a's succeeded: a is freed too. */
    reset();
    aim(&fake_a, &fake_b);
    dev[1].take = 1;
    dev[1].fail_end = 1;
    CHECK(berth_archive_stream_to(a, targets, 2, NULL, &err) == BERTH_ERR_DEVICE);
    CHECK_CONTAINS(err.msg, "multi.safetensors: backend 'fake-b' upload_end(): BERTH_ERR_DEVICE: "
                            "fake cannot finish");
    CHECK(dev[0].ended == 1 && dev[0].freed == 1 && dev[1].freed == 1 && host_live == 0);
    CHECK(targets[0].w == NULL && targets[1].w == NULL);
}

/* A request of b's that disagrees with the archive: nothing begins
 * anywhere, and the message says whose request it was. */
static void test_mismatch(berth_archive *a) {
    reset();
    aim(&fake_a, &fake_b);
    req1[1].dims[0] = NC + 1;
    berth_error err;
    CHECK(berth_archive_stream_to(a, targets, 2, NULL, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "tensor 'C' is F32[5] in the archive but const 'C' declares f32[6]: "
                            "shape mismatch (streaming into backend 'fake-b')");
    CHECK(dev[0].began == 0 && dev[1].began == 0 && ncalls == 0);

    /* Ids are each target's own: b repeating an id is b's error. */
    aim(&fake_a, &fake_b);
    req1[1].id = 0;
    CHECK(berth_archive_stream_to(a, targets, 2, NULL, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "weight id 0 is repeated");
    CHECK_CONTAINS(err.msg, "(streaming into backend 'fake-b')");
    CHECK(ncalls == 0);

    /* Two targets on one device could clobber memory it offered. */
    aim(&fake_a, &fake_b);
    targets[1].dev = &dev[0];
    CHECK(berth_archive_stream_to(a, targets, 2, NULL, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "backends 'fake-a' and 'fake-b' share one device");
    CHECK(ncalls == 0);
}

/* The file is appended to as a takes B: the check after the last read
 * refuses the load before either backend's upload_end. */
static const char *change_path;
static void append_on_b(const char *name) {
    if (strcmp(name, "B")) return;
    usleep(50 * 1000); /* past one tick of the file system's clock */
    FILE *f = fopen(change_path, "ab");
    CHECK(f && fwrite("more", 1, 4, f) == 4);
    if (f) fclose(f);
}

static void test_changed(const char *path, const berth_st_tensor *t) {
    berth_error err;
    change_path = path;
    CHECK(berth_st_write(path, t, 3, NULL, &err) == 0);
    berth_archive *a = berth_archive_open(path, NULL, &err);
    CHECK(a != NULL);
    if (!a) return;
    reset();
    aim(&fake_a, &fake_b);
    dev[1].take = 1;
    on_tensor = append_on_b;
    CHECK(berth_archive_stream_to(a, targets, 2, NULL, &err) == BERTH_ERR_IO);
    on_tensor = NULL;
    CHECK_CONTAINS(err.msg, "the weights file changed while it was being loaded");
    CHECK(dev[0].ended == 0 && dev[1].ended == 0 && dev[0].freed == 1 && dev[1].freed == 1);
    CHECK(targets[0].w == NULL && targets[1].w == NULL && host_live == 0);
    berth_archive_close(a);
}

int main(void) {
    for (int i = 0; i < NA; i++) {
        /* BF16 is the top half of an f32: values with an exact BF16 form. */
        want_a[i] = (float)(i - 3) * 0.5f;
        uint32_t bits;
        memcpy(&bits, &want_a[i], 4);
        raw_a[i] = (uint16_t)(bits >> 16);
    }
    for (int i = 0; i < NB; i++) want_b[i] = (float)i + 0.25f;
    for (int i = 0; i < NC; i++) want_c[i] = 100.0f - (float)i;
    berth_st_tensor t[3] = {{"A", BA_BF16, 1, {NA}, raw_a, sizeof raw_a},
                            {"B", BA_F32, 1, {NB}, want_b, sizeof want_b},
                            {"C", BA_F32, 1, {NC}, want_c, sizeof want_c}};
    char *dir = tu_tempdir();
    const char *path = tu_path(dir, "multi.safetensors");
    berth_error err;
    CHECK(berth_st_write(path, t, 3, NULL, &err) == 0);
    berth_archive *a = berth_archive_open(path, NULL, &err);
    CHECK(a != NULL);
    if (!a) return check_exit();

    test_in_place_and_given(a);
    test_scratch_and_copy(a);
    test_owner_keeps(a);
    test_twice_in_one_target(a);
    test_second_fails(a);
    test_mismatch(a);
    berth_archive_close(a);
    test_changed(tu_path(dir, "changing.safetensors"), t);
    tu_rmdir(dir);
    return check_exit();
}
