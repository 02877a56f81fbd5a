/* The contract checks of check_abi.h. Each reports one finding; a check
 * that cannot run (no device, a verb the module does not offer) says
 * why in its finding instead. */
#include "check_abi.h"

#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ck {
    ck_item_fn fn;
    void *ctx;
    size_t failed;
} ck;

__attribute__((format(printf, 4, 5))) static void report(ck *k, int ok, const char *item, const char *fmt, ...) {
    char msg[BERTH_ERROR_CAP + 512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!ok) k->failed++;
    k->fn(k->ctx, ok, item, msg);
}

/* An error buffer filled with 'x' and no terminator: a refusal must
 * leave a message in it, terminated. */
static void poison(berth_error *e) { memset(e->msg, 'x', sizeof e->msg); }
static const char *message_fault(const berth_error *e) {
    if (!memchr(e->msg, 0, sizeof e->msg)) return "the error message is not terminated";
    if (!e->msg[0]) return "the error message is empty";
    return NULL;
}

static int has_slots(const berth_backend *be, char *missing, size_t cap) {
    const struct {
        const char *name;
        int set;
    } slots[] = {{"open", be->open != NULL},         {"close", be->close != NULL},
                 {"caps", be->caps != NULL},         {"supports_op", be->supports_op != NULL},
                 {"upload_begin", be->upload_begin != NULL}, {"upload_tensor", be->upload_tensor != NULL},
                 {"upload_end", be->upload_end != NULL},     {"plan", be->plan != NULL},
                 {"run", be->run != NULL},           {"free_plan", be->free_plan != NULL},
                 {"free_weights", be->free_weights != NULL}, {"weights_bytes", be->weights_bytes != NULL},
                 {"plan_bytes", be->plan_bytes != NULL}};
    size_t at = 0;
    missing[0] = 0;
    for (size_t i = 0; i < sizeof slots / sizeof slots[0]; i++)
        if (!slots[i].set && at < cap) at += (size_t)snprintf(missing + at, cap - at, "%s%s", at ? ", " : "", slots[i].name);
    return at == 0;
}

/* Negotiation: version 0 refused with a message; the host's version
 * answered with a table of a version both speak, of at least that
 * version's size, with a name and every verb; a newer host still served;
 * a 1.0 host never given a newer table. */
static void check_negotiation(ck *k, const char *path, mh_host *host) {
    void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!so) {
        report(k, 0, "negotiation", "cannot load %s: %s", path, dlerror());
        return;
    }
    union {
        void *obj;
        berth_backend_entry_fn fn;
    } entry = {.obj = dlsym(so, BERTH_BACKEND_ENTRY_SYMBOL)};
    if (!entry.obj) {
        report(k, 0, "negotiation", "%s exports no %s", path, BERTH_BACKEND_ENTRY_SYMBOL);
        dlclose(so);
        return;
    }
    berth_error why;
    poison(&why);
    const berth_backend *be = entry.fn(0, &host->services, &why);
    if (be) report(k, 0, "negotiation: version 0", "a host offering ABI version 0 got a table (version %u); expected NULL and the reason", be->abi_version);
    else if (message_fault(&why)) report(k, 0, "negotiation: version 0", "refused, but %s", message_fault(&why));
    else report(k, 1, "negotiation: version 0", "refused: %s", why.msg);

    poison(&why);
    be = entry.fn(BERTH_BACKEND_ABI_VERSION, &host->services, &why);
    char missing[256];
    size_t min = 0;
    if (!be) {
        report(k, 0, "negotiation: this host", "a host offering ABI version %u got no table: %s", BERTH_BACKEND_ABI_VERSION,
               message_fault(&why) ? message_fault(&why) : why.msg);
    } else if (be->abi_version < 1 || be->abi_version > BERTH_BACKEND_ABI_VERSION) {
        report(k, 0, "negotiation: this host", "asked for version %u, the table says version %u", BERTH_BACKEND_ABI_VERSION,
               be->abi_version);
    } else if (be->struct_size < (min = BERTH_BACKEND_MIN_SIZE(be->abi_version))) {
        report(k, 0, "negotiation: this host", "a version %u table declares %u bytes, at least %zu expected", be->abi_version,
               be->struct_size, min);
    } else if (!be->name || !be->name[0]) {
        report(k, 0, "negotiation: this host", "the table has no name");
    } else if (!has_slots(be, missing, sizeof missing)) {
        report(k, 0, "negotiation: this host", "the table leaves verbs empty: %s", missing);
    } else {
        report(k, 1, "negotiation: this host", "'%s' %s, ABI version %u, table of %u bytes", be->name,
               be->version ? be->version : "(no version)", be->abi_version, be->struct_size);
        if (be->abi_version >= BERTH_BACKEND_ABI_V1_1 && be->n_options &&
            (!be->options || be->option_decl_size < BERTH_OPTION_DECL_V1_SIZE))
            report(k, 0, "negotiation: options", "%u options declared with %s", be->n_options,
                   !be->options ? "no array" : "a declaration size below ABI 1.1's");
    }

    poison(&why);
    be = entry.fn(BERTH_BACKEND_ABI_VERSION + 5, &host->services, &why);
    if (!be || be->abi_version < 1 || be->abi_version > BERTH_BACKEND_ABI_VERSION + 5)
        report(k, 0, "negotiation: a newer host", "a host offering version %u got %s", BERTH_BACKEND_ABI_VERSION + 5,
               be ? "a table of a version it did not offer" : "no table");
    else report(k, 1, "negotiation: a newer host", "served version %u", be->abi_version);

    poison(&why);
    be = entry.fn(BERTH_BACKEND_ABI_V1_0, &host->services, &why);
    if (be && be->abi_version != BERTH_BACKEND_ABI_V1_0)
        report(k, 0, "negotiation: a 1.0 host", "a host offering only version 1 got a version %u table", be->abi_version);
    else if (!be && message_fault(&why))
        report(k, 0, "negotiation: a 1.0 host", "refused, but %s", message_fault(&why));
    else report(k, 1, "negotiation: a 1.0 host", "%s", be ? "served version 1" : why.msg);
    dlclose(so);
}

/* caps written within the struct_size the host gives; refusals of an
 * unknown op and of a bad upload carry messages. */
static void check_device(ck *k, const mh_module *m) {
    unsigned char buf[sizeof(berth_caps) + 64];
    memset(buf, 0xab, sizeof buf);
    berth_caps *caps = (berth_caps *)(void *)buf;
    caps->struct_size = (uint32_t)BERTH_CAPS_V1_MIN_SIZE;
    berth_error err;
    poison(&err);
    berth_status st = m->be->caps(m->dev, caps, &err);
    size_t over = BERTH_CAPS_V1_MIN_SIZE;
    while (over < sizeof buf && buf[over] == 0xab) over++;
    if (st != BERTH_OK) report(k, 0, "caps", "status %d: %s", (int)st, message_fault(&err) ? message_fault(&err) : err.msg);
    else if (over != sizeof buf) report(k, 0, "caps", "wrote past the %zu bytes of caps the host gave (byte %zu)", (size_t)BERTH_CAPS_V1_MIN_SIZE, over);
    else if (!caps->device_name) report(k, 0, "caps", "no device name");
    else report(k, 1, "caps", "device '%s', %llu bytes of memory", caps->device_name, (unsigned long long)caps->memory_bytes);

    poison(&err);
    st = m->be->supports_op(m->dev, "berth.noSuchOp", BERTH_DTYPE_F32, &err);
    if (st != BERTH_ERR_UNSUPPORTED) report(k, 0, "refusals: an unknown op", "supports_op answered status %d, expected BERTH_ERR_UNSUPPORTED", (int)st);
    else if (message_fault(&err)) report(k, 0, "refusals: an unknown op", "refused, but %s", message_fault(&err));
    else report(k, 1, "refusals: an unknown op", "%s", err.msg);

    berth_upload_info info = {.struct_size = sizeof info, .n_tensors = 1, .total_bytes = 16, .largest_bytes = 16,
                              .weight_desc_size = sizeof(berth_weight_desc)};
    berth_weights *w = NULL;
    if ((st = m->be->upload_begin(m->dev, &info, &w, &err)) != BERTH_OK) {
        report(k, 0, "refusals: a bad upload", "upload_begin of one tensor failed: status %d: %s", (int)st, err.msg);
        return;
    }
    float data[4] = {1, 2, 3, 4};
    berth_weight_desc bad = {.name = "w9", .id = 9, .dtype = BERTH_DTYPE_F32, .rank = 1, .dims = {4}, .bytes = 16};
    poison(&err);
    int taken = 0;
    st = m->be->upload_tensor(w, &bad, data, 0, &taken, &err);
    if (st != BERTH_ERR_INVALID) report(k, 0, "refusals: a bad upload", "a weight id 9 of 1 got status %d, expected BERTH_ERR_INVALID", (int)st);
    else if (message_fault(&err)) report(k, 0, "refusals: a bad upload", "refused, but %s", message_fault(&err));
    else report(k, 1, "refusals: a bad upload", "%s", err.msg);
    m->be->free_weights(w);
}

/* Hands the three tensors of check_upload to the module: w0 in place
 * through upload_dest where the module offers memory, else given like
 * w1; w2 in the host's scratch, overwritten after the call so a module
 * that kept the pointer reads wrong values. A given buffer the module
 * did not take is freed by the host here and counted in *mine. Returns
 * the first failure; BERTH_ERR_INTERNAL when the module took a buffer
 * it was not given (already reported). */
static berth_status upload_three(ck *k, const mh_module *m, mh_host *host, berth_weights *w, const float v[][4],
                                 float scratch[4], const char **how, int *mine, berth_error *err) {
    berth_status st = BERTH_OK;
    for (uint32_t i = 0; i < 3 && st == BERTH_OK; i++) {
        berth_weight_desc d = {.name = i == 0 ? "w0" : i == 1 ? "w1" : "w2", .id = i, .dtype = BERTH_DTYPE_F32,
                               .rank = 1, .dims = {4}, .bytes = 16};
        void *dest = NULL, *data;
        uint32_t flags = 0;
        if (i == 0 && m->be->upload_dest && (st = m->be->upload_dest(w, &d, &dest, err)) == BERTH_OK && dest) {
            data = dest, flags = BERTH_UPLOAD_IN_PLACE, how[0] = "in place (upload_dest)";
        } else if (i < 2) {
            data = host->services.alloc(host, 16, 64), flags = BERTH_UPLOAD_GIVEN;
        } else {
            data = scratch;
        }
        if (st) break;
        memcpy(data, v[i], 16);
        int taken = 0;
        st = m->be->upload_tensor(w, &d, data, flags, &taken, err);
        if (flags == BERTH_UPLOAD_GIVEN && !taken) host->services.free(host, data), (*mine)++;
        if (flags != BERTH_UPLOAD_GIVEN && taken) {
            report(k, 0, "upload: ownership", "the module took %s buffer %u it was not given", how[i], i);
            st = BERTH_ERR_INTERNAL;
        }
        if (i == 2) memset(scratch, 0xff, sizeof(float) * 4); /* the host's scratch is reused */
    }
    return st;
}

/* y0 = add(w0, w1), y1 = add(w1, w2) over three 4-float weights. */
static void adds_graph(tgraph *g) {
    uint32_t a = tg_weight(g, "w0", 0, 1, (const int64_t[]){4}), b = tg_weight(g, "w1", 1, 1, (const int64_t[]){4});
    uint32_t c = tg_weight(g, "w2", 2, 1, (const int64_t[]){4});
    uint32_t y0 = tg_value(g, "y0", BERTH_DTYPE_F32, 1, (const int64_t[]){4});
    uint32_t y1 = tg_value(g, "y1", BERTH_DTYPE_F32, 1, (const int64_t[]){4});
    tg_node(g, "add", 2, (const uint32_t[]){a, b}, 1, &y0, 0, NULL);
    tg_node(g, "add", 2, (const uint32_t[]){b, c}, 1, &y1, 0, NULL);
    tg_output(g, y0);
    tg_output(g, y1);
}

/* Runs add(w0, w1) and add(w1, w2) on the uploaded weights and checks
 * the sums, so a module that read a buffer after handing it back is
 * caught by the values berth gets. Returns 1 when both are right; else
 * 0, with *st and err saying why a run failed (*st BERTH_OK: the values
 * were wrong). */
static int adds_read_back(const mh_module *m, berth_weights *w, const float v[][4], berth_status *st,
                          berth_error *err) {
    tgraph *g = calloc(1, sizeof *g);
    float y[2][4];
    int ran = g != NULL;
    *st = BERTH_ERR_NOMEM;
    snprintf(err->msg, sizeof err->msg, "out of memory");
    if (g) {
        adds_graph(g);
        *st = mh_run(m, g, w, NULL, (void *const[]){y[0], y[1]}, err);
        free(g);
    }
    int right = ran && *st == BERTH_OK;
    for (int i = 0; right && i < 4; i++) right = y[0][i] == v[0][i] + v[1][i] && y[1][i] == v[1][i] + v[2][i];
    return right;
}

/* One tensor given (host->alloc'd, the module may take it), one in the
 * host's scratch (overwritten after the call: the module must have
 * copied it), one through upload_dest where the module offers memory;
 * add(w0, w1) and add(w1, w2) then read them back. Every given buffer
 * is freed exactly once: by the module if it took it, else by the host. */
static void check_upload(ck *k, const mh_module *m, mh_host *host) {
    const float v[3][4] = {{1, 2, 3, 4}, {10, 20, 30, 40}, {100, 200, 300, 400}};
    berth_upload_info info = {.struct_size = sizeof info, .n_tensors = 3, .total_bytes = 48, .largest_bytes = 16,
                              .weight_desc_size = sizeof(berth_weight_desc)};
    berth_weights *w = NULL;
    berth_error err;
    int allocs0 = host->allocs, frees0 = host->frees, mine = 0;
    berth_status st = m->be->upload_begin(m->dev, &info, &w, &err);
    if (st != BERTH_OK) {
        report(k, 0, "upload: ownership", "upload_begin of three tensors failed: status %d: %s", (int)st, err.msg);
        return;
    }
    float scratch[4];
    const char *how[3] = {"given", "given", "in scratch"};
    st = upload_three(k, m, host, w, v, scratch, how, &mine, &err);
    if (st == BERTH_OK) st = m->be->upload_end(w, &err);
    if (st != BERTH_OK) {
        if (st != BERTH_ERR_INTERNAL)
            report(k, 0, "upload: ownership", "uploading three tensors failed: status %d: %s", (int)st, err.msg);
        m->be->free_weights(w);
        return;
    }
    berth_error e2;
    int adds = m->be->supports_op(m->dev, "add", BERTH_DTYPE_F32, &e2) == BERTH_OK;
    char result[160] = "add is not supported: values not read back";
    if (adds) {
        if (!adds_read_back(m, w, v, &st, &err)) {
            report(k, 0, "upload: ownership",
                   "add(w0, w1) and add(w1, w2) after the upload (w0 %s, w1 given, w2 in scratch): %s", how[0],
                   st != BERTH_OK ? err.msg : "wrong values: a buffer was read after the call that handed it over");
            m->be->free_weights(w);
            return;
        }
        snprintf(result, sizeof result, "add(w0, w1) and add(w1, w2) read them back right");
    }
    m->be->free_weights(w);
    int given = host->allocs - allocs0, freed = host->frees - frees0;
    if (given != freed)
        report(k, 0, "upload: ownership",
               "%d buffers given, %d freed (%d by the host, which was not asked to keep them): "
               "a buffer the module took must be freed once, with host->free",
               given, freed, mine);
    else
        report(k, 1, "upload: ownership", "w0 %s, w1 given, w2 in scratch; %s; given buffers: %d, each freed once",
               how[0], result, given);
}

/* An upload abandoned after one of three tensors (the engine does this
 * when reading the archive fails): free_weights must release what it
 * took. */
static void check_abandoned_upload(ck *k, const mh_module *m, mh_host *host) {
    berth_upload_info info = {.struct_size = sizeof info, .n_tensors = 3, .total_bytes = 48, .largest_bytes = 16,
                              .weight_desc_size = sizeof(berth_weight_desc)};
    berth_weights *w = NULL;
    berth_error err;
    int allocs0 = host->allocs, frees0 = host->frees;
    berth_status st = m->be->upload_begin(m->dev, &info, &w, &err);
    if (st != BERTH_OK) {
        report(k, 0, "upload: abandoned half-way", "upload_begin failed: status %d: %s", (int)st, err.msg);
        return;
    }
    berth_weight_desc d = {.name = "w0", .id = 0, .dtype = BERTH_DTYPE_F32, .rank = 1, .dims = {4}, .bytes = 16};
    float *data = host->services.alloc(host, 16, 64);
    for (int i = 0; i < 4; i++) data[i] = (float)i;
    int taken = 0;
    st = m->be->upload_tensor(w, &d, data, BERTH_UPLOAD_GIVEN, &taken, &err);
    if (!taken) host->services.free(host, data);
    m->be->free_weights(w); /* the second tensor "failed to read" */
    int given = host->allocs - allocs0, freed = host->frees - frees0;
    if (st != BERTH_OK) report(k, 0, "upload: abandoned half-way", "the first tensor failed: status %d: %s", (int)st, err.msg);
    else if (given != freed)
        report(k, 0, "upload: abandoned half-way", "free_weights after 1 of 3 tensors left %d of %d given buffers unfreed",
               given - freed, given);
    else report(k, 1, "upload: abandoned half-way", "free_weights after 1 of 3 tensors freed the %s buffer",
                taken ? "taken" : "(untaken) given");
}

/* Three tensors copied in from the caller's memory (nothing given). */
static berth_weights *upload_copies(const mh_module *m, const float v[][4], berth_error *err) {
    berth_upload_info info = {.struct_size = sizeof info, .n_tensors = 3, .total_bytes = 48, .largest_bytes = 16,
                              .weight_desc_size = sizeof(berth_weight_desc)};
    berth_weights *w = NULL;
    berth_status st = m->be->upload_begin(m->dev, &info, &w, err);
    for (uint32_t i = 0; i < 3 && st == BERTH_OK; i++) {
        berth_weight_desc d = {.name = i == 0 ? "w0" : i == 1 ? "w1" : "w2", .id = i, .dtype = BERTH_DTYPE_F32,
                               .rank = 1, .dims = {4}, .bytes = 16};
        int taken = 0;
        st = m->be->upload_tensor(w, &d, (void *)v[i], 0, &taken, err);
    }
    if (st == BERTH_OK) st = m->be->upload_end(w, err);
    if (st != BERTH_OK && w) m->be->free_weights(w);
    return st == BERTH_OK ? w : NULL;
}

/* What load_state does with bytes of `kind`: BERTH_OK, or a refusal that
 * must leave a message. */
static berth_status load_bytes(const mh_module *m, berth_weights *w, uint32_t kind, const void *p, size_t n,
                               const char **fault) {
    berth_error err;
    poison(&err);
    berth_status st = m->be->load_state(m->dev, w, kind, p, n, &err);
    *fault = st != BERTH_OK ? message_fault(&err) : NULL;
    return st;
}

/* Each kind's saved bytes taken back, and bytes it never saved refused;
 * 0 with the finding reported when something is wrong. */
static int state_round_trip(ck *k, const mh_module *m, berth_weights *w, char *said, size_t cap) {
    static const uint32_t kinds[] = {BERTH_STATE_WEIGHTS, BERTH_STATE_PROGRAMS};
    uint8_t junk[256];
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (uint8_t)(i * 37 + 11);
    for (int i = 0; i < 2; i++) {
        const char *fault, *name = i ? "programs" : "weights";
        berth_status st = load_bytes(m, w, kinds[i], junk, sizeof junk, &fault);
        if (st == BERTH_OK || fault) {
            report(k, 0, "saved state", "load_state(%s) of 256 bytes save_state never wrote %s", name,
                   st == BERTH_OK ? "was taken: a backend must check what it reads" : fault);
            return 0;
        }
        berth_error err;
        size_t n = 0;
        if (m->be->save_state(m->dev, w, kinds[i], NULL, &n, &err) != BERTH_OK) continue;
        uint8_t *buf = malloc(n ? n : 1);
        st = buf ? m->be->save_state(m->dev, w, kinds[i], buf, &n, &err) : BERTH_ERR_NOMEM;
        if (st == BERTH_OK) st = load_bytes(m, w, kinds[i], buf, n, &fault);
        free(buf);
        if (st != BERTH_OK) {
            report(k, 0, "saved state", "save_state(%s) then load_state of its bytes: status %d", name, (int)st);
            return 0;
        }
        size_t len = strlen(said);
        snprintf(said + len, cap - len, "; %s: %zu bytes saved and taken back", name, n);
    }
    return 1;
}

/* ABI 1.4: weights prepared for add(w0, w1) and add(w1, w2) still give
 * their sums; saved state comes back, and bytes never saved are refused
 * with a message, leaving the weights as they were. */
static void check_state(ck *k, const mh_module *m) {
    const berth_backend *be = m->be;
    int v14 = be->abi_version >= BERTH_BACKEND_ABI_V1_4;
    int prep = v14 && be->prepare_weights, state = v14 && be->save_state && be->load_state;
    if (v14 && !be->save_state != !be->load_state) {
        report(k, 0, "saved state", "save_state and load_state come as a pair: one of them is NULL");
        return;
    }
    if (!prep && !state) {
        report(k, 1, "saved state", "not offered (ABI 1.4 prepare_weights, save_state, load_state)");
        return;
    }
    const float v[3][4] = {{1, 2, 3, 4}, {10, 20, 30, 40}, {100, 200, 300, 400}};
    berth_error err;
    berth_weights *w = upload_copies(m, v, &err);
    berth_error e2;
    if (!w || be->supports_op(m->dev, "add", BERTH_DTYPE_F32, &e2) != BERTH_OK) {
        report(k, 1, "saved state", "not checked: %s", w ? "add is not supported" : err.msg);
        if (w) be->free_weights(w);
        return;
    }
    char said[256] = "";
    berth_status st = BERTH_OK;
    if (prep) {
        tgraph *g = calloc(1, sizeof *g);
        berth_prepare_info info = {.struct_size = sizeof info};
        if (g) {
            adds_graph(g);
            berth_graph_desc d = tg_desc(g);
            st = be->prepare_weights(w, &d, &info, &err);
            free(g);
        }
        snprintf(said, sizeof said, "prepare_weights %.200s", st == BERTH_OK ? "kept the sums right" : err.msg);
    }
    if (st != BERTH_OK || !adds_read_back(m, w, v, &st, &err))
        report(k, 0, "saved state", "%s: add(w0, w1) and add(w1, w2) after it: %s", prep ? said : "weights",
               st != BERTH_OK ? err.msg : "wrong values");
    else if (state && !state_round_trip(k, m, w, said, sizeof said))
        ; /* reported */
    else if (state && !adds_read_back(m, w, v, &st, &err))
        report(k, 0, "saved state", "add(w0, w1) and add(w1, w2) after load_state: %s",
               st != BERTH_OK ? err.msg : "wrong values");
    else
        report(k, 1, "saved state", "%s%s", said[0] == ';' ? said + 2 : said, state ? "; the sums still right" : "");
    be->free_weights(w);
}

size_t ck_contract(const char *path, mh_host *host, ck_begin_fn begin, ck_item_fn fn, void *ctx) {
    ck k = {fn, ctx, 0};
#define BEGIN(check) (begin ? begin(ctx, check) : (void)0)
    BEGIN("negotiation");
    check_negotiation(&k, path, host);
    BEGIN("open");
    mh_module m = {0};
    berth_error err;
    poison(&err);
    berth_status st = mh_load(&m, path, host, &err);
    if (st == BERTH_OK) st = mh_open(&m, &err);
    if (st != BERTH_OK) {
        report(&k, 0, "open", "status %d: %s", (int)st, message_fault(&err) ? message_fault(&err) : err.msg);
        mh_unload(&m);
        return k.failed;
    }
    report(&k, 1, "open", "a device opened with the given options");
    BEGIN("caps and refusals");
    check_device(&k, &m);
    BEGIN("upload: ownership");
    check_upload(&k, &m, host);
    BEGIN("upload: abandoned half-way");
    check_abandoned_upload(&k, &m, host);
    BEGIN("saved state");
    check_state(&k, &m);
    BEGIN("unload");
    mh_unload(&m);
#undef BEGIN
    return k.failed;
}
