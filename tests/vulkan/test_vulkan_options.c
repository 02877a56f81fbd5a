/* The options of [backend.vulkan]: choosing a device by index or by name,
 * refusing an index out of range or a name that matches nothing with
 * BERTH_ERR_DEVICE (so `use = vulkan, cpu` falls back), unknown keys and
 * bad values, a small staging_mb that forces chunked uploads, and a small
 * block_mb that spreads weights over blocks, the last sized to fit. */
#include "vk_harness.h"

static berth_status open_with(const char *k1, const char *v1, berth_device **out, berth_error *err) {
    mh_host_clear_options(&vk_host);
    if (k1) mh_host_option(&vk_host, k1, v1);
    berth_status st = vk.be->open(&vk_host.services, out, err);
    mh_host_clear_options(&vk_host);
    return st;
}

static void test_device_choice(const char *default_name) {
    berth_device *d = NULL;
    berth_error err;
    CHECK(open_with("device", "99", &d, &err) == BERTH_ERR_DEVICE);
    CHECK(d == NULL);
    CHECK_CONTAINS(err.msg, "index 99 is out of range");
    CHECK_CONTAINS(err.msg, "'device'");

    CHECK(open_with("device", "no-such-gpu-xyz", &d, &err) == BERTH_ERR_DEVICE);
    CHECK(d == NULL);
    CHECK_CONTAINS(err.msg, "no device name contains 'no-such-gpu-xyz'");

    CHECK(open_with("device", "0", &d, &err) == BERTH_OK);
    if (d) {
        berth_caps caps = {.struct_size = sizeof caps};
        CHECK(vk.be->caps(d, &caps, &err) == BERTH_OK);
        CHECK(caps.device_name && caps.device_name[0]);
        vk.be->close(d);
        d = NULL;
    }
    /* A case-insensitive piece of the default device's name picks a device
     * whose name holds it. */
    char piece[8] = {0};
    for (int i = 0; i < 4 && default_name[i]; i++)
        piece[i] = (char)(default_name[i] >= 'a' && default_name[i] <= 'z' ? default_name[i] - 32 : default_name[i]);
    CHECK(open_with("device", piece, &d, &err) == BERTH_OK);
    if (d) {
        berth_caps caps = {.struct_size = sizeof caps};
        CHECK(vk.be->caps(d, &caps, &err) == BERTH_OK);
        CHECK(strncmp(caps.device_name, default_name, 4) == 0);
        vk.be->close(d);
    }
}

static void test_bad_options(void) {
    berth_device *d = NULL;
    berth_error err;
    CHECK(open_with("threads", "2", &d, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "unknown option 'threads'");
    CHECK_CONTAINS(err.msg, "known: device, staging_mb, block_mb, validation");
    CHECK(open_with("block_mb", "0", &d, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "'block_mb'");
    CHECK(open_with("staging_mb", "0", &d, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "'staging_mb'");
    CHECK_CONTAINS(err.msg, "found '0'");
    CHECK(open_with("staging_mb", "12abc", &d, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "found '12abc'");
    CHECK(open_with("validation", "maybe", &d, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "'validation'");
    CHECK(open_with("device", "", &d, &err) == BERTH_ERR_INVALID);
    CHECK(d == NULL);
}

/* staging_mb = 1: a 1.2 MB weight cannot be offered in place, so it goes
 * through the host's buffer in chunks; a small one is offered in place. */
static void test_chunked_upload(void) {
    berth_device *d = NULL;
    berth_error err;
    CHECK(open_with("staging_mb", "1", &d, &err) == BERTH_OK);
    if (!d) return;
    const size_t big = 300000, small = 16;
    float *wb = h_randf(big), *ws = h_randf(small);
    berth_upload_info info = {.struct_size = sizeof info, .n_tensors = 2, .total_bytes = (big + small) * 4,
                              .largest_bytes = big * 4};
    berth_weights *w = NULL;
    CHECK(vk.be->upload_begin(d, &info, &w, &err) == BERTH_OK);
    berth_weight_desc db = {.name = "big", .id = 0, .dtype = BERTH_DTYPE_F32, .rank = 1, .dims = {(int64_t)big},
                            .bytes = big * 4};
    berth_weight_desc ds = {.name = "small", .id = 1, .dtype = BERTH_DTYPE_F32, .rank = 1, .dims = {(int64_t)small},
                            .bytes = small * 4};
    void *dest = (void *)1;
    int taken = 1;
    CHECK(vk.be->upload_dest(w, &db, &dest, &err) == BERTH_OK);
    CHECK(dest == NULL);
    CHECK(vk.be->upload_tensor(w, &db, wb, 0, &taken, &err) == BERTH_OK);
    CHECK(taken == 0);
    CHECK(vk.be->upload_dest(w, &ds, &dest, &err) == BERTH_OK);
    CHECK(dest != NULL);
    if (dest) {
        memcpy(dest, ws, small * 4);
        CHECK(vk.be->upload_tensor(w, &ds, dest, BERTH_UPLOAD_IN_PLACE, &taken, &err) == BERTH_OK);
    }
    /* The same id twice is refused, naming the tensor. */
    CHECK(vk.be->upload_tensor(w, &ds, ws, 0, &taken, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "'small'");
    CHECK(vk.be->upload_end(w, &err) == BERTH_OK);

    /* y = big * 2 + small[broadcast] read back through a graph. */
    tgraph g = {0};
    uint32_t x = tg_input(&g, "x", BERTH_DTYPE_F32, 2, DIMS(18750, 16));
    uint32_t b = tg_weight(&g, "big", 0, 2, DIMS(18750, 16)), s = tg_weight(&g, "small", 1, 1, DIMS(16));
    uint32_t t = tg_value(&g, "t", BERTH_DTYPE_F32, 2, DIMS(18750, 16)), y = tg_value(&g, "y", BERTH_DTYPE_F32, 2, DIMS(18750, 16));
    tg_node(&g, "add", 2, IDX(x, b), 1, IDX(t), 0, NULL);
    tg_node(&g, "add", 2, IDX(t, s), 1, IDX(y), 0, NULL);
    tg_output(&g, y);
    float *xv = h_randf(big), *yv = calloc(big, 4);
    double *ref = h_zeros(big);
    for (size_t i = 0; i < big; i++) ref[i] = (double)xv[i] + wb[i] + ws[i % 16];
    mh_module m = {.be = vk.be, .dev = d, .host = &vk_host};
    berth_status st = mh_run(&m, &g, w, (void *const[]){xv}, (void *const[]){yv}, &err);
    CHECK(st == BERTH_OK);
    if (st) fprintf(stderr, "  chunked: %s\n", err.msg);
    else h_close("chunked upload", yv, ref, big);
    vk.be->free_weights(w);
    vk.be->close(d);
    free(wb), free(ws), free(xv), free(yv), free(ref);
}

/* block_mb = 1 and weights of 600 KB, 600 KB and 100 KB: the second does
 * not fit beside the first, so a second block is made, sized for what the
 * upload announced is still to come (700 KB and alignment), not a full
 * MiB; the values read back through a graph. */
static void test_blocks(void) {
    berth_device *d = NULL;
    berth_error err;
    CHECK(open_with("block_mb", "1", &d, &err) == BERTH_OK);
    if (!d) return;
    const size_t n[3] = {150000, 150000, 25000};
    float *v[3];
    berth_upload_info info = {.struct_size = sizeof info, .n_tensors = 3, .total_bytes = (n[0] + n[1] + n[2]) * 4,
                              .largest_bytes = n[0] * 4};
    berth_weights *w = NULL;
    CHECK(vk.be->upload_begin(d, &info, &w, &err) == BERTH_OK);
    for (uint32_t i = 0; i < 3; i++) {
        v[i] = h_randf(n[i]);
        berth_weight_desc de = {.name = i ? "w" : "w0", .id = i, .dtype = BERTH_DTYPE_F32, .rank = 1,
                                .dims = {(int64_t)n[i]}, .bytes = n[i] * 4};
        int taken = 0;
        if (w) CHECK(vk.be->upload_tensor(w, &de, v[i], 0, &taken, &err) == BERTH_OK);
    }
    if (w) {
        CHECK(vk.be->upload_end(w, &err) == BERTH_OK);
        uint64_t held = vk.be->weights_bytes(w), data = info.total_bytes;
        CHECK(held >= data && held <= data + (1u << 20) - n[0] * 4 + 3 * 1024);
        if (held > data + (1u << 20) - n[0] * 4 + 3 * 1024)
            fprintf(stderr, "  %llu bytes of weights held in %llu\n", (unsigned long long)data, (unsigned long long)held);
        /* y = x + w[:25000] + w2 (the second and third weights, in the
         * second block), read back */
        tgraph g = {0};
        const int64_t m2 = (int64_t)n[2];
        uint32_t x = tg_input(&g, "x", BERTH_DTYPE_F32, 1, DIMS(m2));
        uint32_t a = tg_weight(&g, "w", 1, 1, DIMS((int64_t)n[1])), b = tg_weight(&g, "w2", 2, 1, DIMS(m2));
        uint32_t s = tg_value(&g, "s", BERTH_DTYPE_F32, 1, DIMS(m2)), t = tg_value(&g, "t", BERTH_DTYPE_F32, 1, DIMS(m2));
        uint32_t y = tg_value(&g, "y", BERTH_DTYPE_F32, 1, DIMS(m2));
        tg_node(&g, "slice", 1, IDX(a), 1, IDX(s), 2, (berth_attr[]){A_INTS("starts", 1, 0), A_INTS("sizes", 1, m2)});
        tg_node(&g, "add", 2, IDX(x, s), 1, IDX(t), 0, NULL);
        tg_node(&g, "add", 2, IDX(t, b), 1, IDX(y), 0, NULL);
        tg_output(&g, y);
        float *xv = h_randf(n[2]), *yv = calloc(n[2], 4);
        double *ref = h_zeros(n[2]);
        for (size_t i = 0; i < n[2]; i++) ref[i] = (double)xv[i] + v[1][i] + v[2][i];
        mh_module m = {.be = vk.be, .dev = d, .host = &vk_host};
        berth_status st = mh_run(&m, &g, w, (void *const[]){xv}, (void *const[]){yv}, &err);
        CHECK(st == BERTH_OK);
        if (st) fprintf(stderr, "  blocks: %s\n", err.msg);
        else h_close("weights over two blocks", yv, ref, n[2]);
        free(xv), free(yv), free(ref);
    }
    vk.be->free_weights(w);
    vk.be->close(d);
    for (int i = 0; i < 3; i++) free(v[i]);
}

int main(void) {
    h_start(); /* exits 77 when there is no device at all */
    berth_caps caps = {.struct_size = sizeof caps};
    berth_error err;
    CHECK(vk.be->caps(vk.dev, &caps, &err) == BERTH_OK);
    char name[300];
    snprintf(name, sizeof name, "%s", caps.device_name ? caps.device_name : "");
    test_device_choice(name);
    test_bad_options();
    test_chunked_upload();
    test_blocks();
    h_stop();
    return check_exit();
}
