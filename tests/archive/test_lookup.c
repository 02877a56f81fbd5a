/* Name lookup: exact first, then sanitized ("::" -> "__", "." -> "_"),
 * ambiguity and absence as errors that name both sides. */
#include "archive.h"
#include "check.h"
#include "fake_backend.h"
#include "util.h"

int main(void) {
    char *dir = tu_tempdir();
    const char *path = tu_path(dir, "names.safetensors");
    unsigned char b[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    berth_st_tensor t[6] = {
        {"enc.layer.0.w", BA_U8, 1, {1}, b, 1}, {"enc::attn::q", BA_U8, 1, {1}, b + 1, 1},
        {"x.y", BA_U8, 1, {1}, b + 2, 1},       {"x_y", BA_U8, 1, {1}, b + 3, 1},
        {"m.n_o", BA_U8, 1, {1}, b + 4, 1},     {"m_n.o", BA_U8, 1, {1}, b + 5, 1},
    };
    berth_error err;
    CHECK(berth_st_write(path, t, 6, NULL, &err) == 0);
    berth_archive *a = berth_archive_open(path, NULL, &err);
    CHECK(a != NULL);
    if (!a) return check_exit();

    int32_t i = berth_archive_lookup(a, "enc.layer.0.w", &err);
    CHECK(i >= 0 && !strcmp(berth_archive_entry(a, (uint32_t)i)->name, "enc.layer.0.w"));
    i = berth_archive_lookup(a, "enc_layer_0_w", &err);
    CHECK(i >= 0 && !strcmp(berth_archive_entry(a, (uint32_t)i)->name, "enc.layer.0.w"));
    i = berth_archive_lookup(a, "enc__attn__q", &err);
    CHECK(i >= 0 && !strcmp(berth_archive_entry(a, (uint32_t)i)->name, "enc::attn::q"));
    /* "::" is two underscores, never one. */
    CHECK(berth_archive_lookup(a, "enc_attn_q", &err) == -1);
    CHECK_CONTAINS(err.msg, "names.safetensors: no tensor named 'enc_attn_q'");
    /* An exact name wins over another name that sanitizes to it. */
    i = berth_archive_lookup(a, "x_y", &err);
    CHECK(i >= 0 && !strcmp(berth_archive_entry(a, (uint32_t)i)->name, "x_y"));
    i = berth_archive_lookup(a, "x.y", &err);
    CHECK(i >= 0 && !strcmp(berth_archive_entry(a, (uint32_t)i)->name, "x.y"));
    /* Two names that sanitize alike and no exact one: ambiguous. */
    CHECK(berth_archive_lookup(a, "m_n_o", &err) == -1);
    CHECK_CONTAINS(err.msg, "names.safetensors: reference 'm_n_o' is ambiguous: tensors");
    CHECK_CONTAINS(err.msg, "'m.n_o'");
    CHECK_CONTAINS(err.msg, "'m_n.o'");

    /* Through the stream, the value reaches the backend and errors name
     * the graph's const as well. */
    int64_t d1[] = {1};
    berth_weight_request r = fake_req("enc_layer_0_w", BERTH_DTYPE_U8, 0, 1, d1);
    r.value = "w0";
    berth_weights *w = NULL;
    fake_reset();
    CHECK(berth_archive_stream(a, &r, 1, &fake_backend, NULL, &fake_host, &w, NULL, &err) ==
          BERTH_OK);
    const fake_tensor *got = fake_find("enc_layer_0_w");
    CHECK(got && got->bytes == 1 && got->copy[0] == 1);
    if (w) fake_backend.free_weights(w);
    r.ref = "m_n_o";
    fake_reset();
    CHECK(berth_archive_stream(a, &r, 1, &fake_backend, NULL, &fake_host, &w, NULL, &err) ==
          BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "is ambiguous");
    CHECK_CONTAINS(err.msg, "(wanted by const 'w0')");
    r.ref = "nowhere";
    CHECK(berth_archive_stream(a, &r, 1, &fake_backend, NULL, &fake_host, &w, NULL, &err) ==
          BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "names.safetensors: no tensor named 'nowhere'");
    CHECK_CONTAINS(err.msg, "(wanted by const 'w0')");
    CHECK(F.began == 0 && w == NULL);

    berth_archive_close(a);
    tu_rmdir(dir);
    return check_exit();
}
