/* What a user reads when a backend verb fails: for every verb that takes
 * a berth_error, a real module (misbehave_module.c, the cpu backend with
 * one verb made to fail) returns an error with a message, with none, and
 * with 512 bytes that never end. Each time the whole message is checked:
 * the backend, the verb and the status in front, the message or what
 * stands in for it, and the context the engine adds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/berth.h"
#include "check.h"
#include "slice_fixture.h"

static slice_model model;
static char warnings[4096];

static void capture(void *ctx, berth_log_level level, const char *msg) {
    (void)ctx;
    size_t n = strlen(warnings);
    if (level == BERTH_LOG_WARN) snprintf(warnings + n, sizeof warnings - n, "%s\n", msg);
}

/* Writes a config using `use` with the given [backend.misbehave] lines. */
static const char *config(const char *use, const char *section) {
    static char path[256];
    char text[1024];
    snprintf(text, sizeof text,
             "[model]\ngraph = model.webnn\nweights = model.safetensors\n\n"
             "[backend]\nuse = %s\n\n[backend.misbehave]\n%s\n"
             "[buckets]\nrows = batch=1 | batch=4\n",
             use, section);
    return slice_write_file(&model, "misbehave.ini", text, path, sizeof path);
}

static berth_status open_config(const char *path, berth_executor **ex, berth_error *err) {
    berth_open_options o = {sizeof o, capture, NULL, BERTH_LOG_DEBUG, NULL, 0, NULL, NULL, NULL};
    warnings[0] = 0;
    *ex = NULL;
    return berth_executor_open(path, &o, ex, err);
}

static void ignore_node(void *ctx, const char *node, const char *op, uint64_t ns) {
    (void)ctx, (void)node, (void)op, (void)ns;
}

/* Opens, runs batch 1 once, reads its profile: the first failure's
 * status and message. */
static berth_status open_run_profile(const char *path, berth_error *err) {
    berth_executor *ex;
    berth_status st = open_config(path, &ex, err);
    if (st != BERTH_OK) return st;
    float x[SLICE_IN] = {0.5f, -1.0f, 2.0f, 0.25f};
    berth_tensor in = {BERTH_DTYPE_F32, 2, {1, SLICE_IN}, x, sizeof x, 0};
    berth_tensor out;
    memset(&out, 0, sizeof out);
    uint32_t bucket = 0;
    st = berth_executor_run(ex, 0, &in, 1, &out, 1, &bucket, err);
    if (st == BERTH_OK) st = berth_executor_profile(ex, 0, bucket, ignore_node, NULL, err);
    berth_tensor_release(&out);
    berth_executor_close(ex);
    return st;
}

typedef struct verb_case {
    const char *verb;
    const char *status;      /* as [backend.misbehave] status says it */
    const char *status_name; /* as the user reads it */
    berth_status want;       /* what the engine returns */
    const char *context;     /* what the engine puts in front; %s is the model's folder */
} verb_case;

static const verb_case cases[] = {
    {"supports_op", "UNSUPPORTED", "BERTH_ERR_UNSUPPORTED", BERTH_ERR_UNSUPPORTED,
     "%s/model.webnn: node 'h0' (op matmul on f32): "},
    {"upload_begin", "NOMEM", "BERTH_ERR_NOMEM", BERTH_ERR_NOMEM, "%s/model.safetensors: "},
    {"upload_dest", "IO", "BERTH_ERR_IO", BERTH_ERR_IO, "%s/model.safetensors: tensor 'layer1.weight': "},
    {"upload_tensor", "DEVICE", "BERTH_ERR_DEVICE", BERTH_ERR_DEVICE,
     "%s/model.safetensors: tensor 'layer1.weight': "},
    {"upload_end", "INTERNAL", "BERTH_ERR_INTERNAL", BERTH_ERR_INTERNAL, "%s/model.safetensors: "},
    {"plan", "UNSUPPORTED", "BERTH_ERR_UNSUPPORTED", BERTH_ERR_UNSUPPORTED, ""},
    /* A status no release defines is named by its number and handled as
     * an internal error. */
    {"run", "42", "status 42, which no berth release defines", BERTH_ERR_INTERNAL, ""},
    {"plan_profile", "UNSUPPORTED", "BERTH_ERR_UNSUPPORTED", BERTH_ERR_UNSUPPORTED, ""},
};

static const char *const forms[] = {"text", "empty", "unterminated"};

/* The message the user reads for verb `c` failing with message `form`. */
static void expected(const verb_case *c, const char *form, char *buf, size_t cap) {
    size_t o = (size_t)snprintf(buf, cap, c->context, model.dir);
    if (!strcmp(form, "text")) {
        snprintf(buf + o, cap - o, "backend 'misbehave' %s(): %s: misbehave: %s fails as asked", c->verb,
                 c->status_name, c->verb);
    } else if (!strcmp(form, "empty")) {
        snprintf(buf + o, cap - o, "backend 'misbehave' %s() returned %s with no message", c->verb,
                 c->status_name);
    } else {
        /* The first 200 of the 512 bytes, then the note. */
        o += (size_t)snprintf(buf + o, cap - o, "backend 'misbehave' %s(): %s: ", c->verb, c->status_name);
        memset(buf + o, 'A', 200);
        snprintf(buf + o + 200, cap - o - 200,
                 " [cut: the backend did not end its message within 512 bytes]");
    }
}

static void test_every_verb(void) {
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
            const verb_case *c = &cases[i];
            char section[256], want[1024];
            snprintf(section, sizeof section, "verb = %s\nstatus = %s\nmessage = %s\n", c->verb, c->status,
                     forms[f]);
            const char *path = config(MISBEHAVE_MODULE, section);
            berth_error err;
            memset(err.msg, 'Z', sizeof err.msg); /* nothing of this may show */
            berth_status st = open_run_profile(path, &err);
            CHECK(st == c->want);
            expected(c, forms[f], want, sizeof want);
            CHECK(memchr(err.msg, 0, sizeof err.msg) != NULL);
            if (!memchr(err.msg, 0, sizeof err.msg)) err.msg[sizeof err.msg - 1] = 0;
            CHECK_MSG(err.msg, want);
        }
}

/* open() fails before anything else is there to say where. */
static void test_open(void) {
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
        char section[128], want[1024];
        snprintf(section, sizeof section, "verb = open\nstatus = INVALID\nmessage = %s\n", forms[f]);
        berth_executor *ex;
        berth_error err;
        CHECK(open_config(config(MISBEHAVE_MODULE, section), &ex, &err) == BERTH_ERR_INVALID);
        verb_case c = {"open", "INVALID", "BERTH_ERR_INVALID", BERTH_ERR_INVALID, ""};
        expected(&c, forms[f], want, sizeof want);
        CHECK_MSG(err.msg, want);
    }
}

/* `use = misbehave, cpu`: open() saying there is no device here, or that
 * it cannot serve, moves on to cpu with a warning; any other failure
 * stops with the backend's error and nothing else is tried. */
static void test_open_fallback(void) {
    static const struct {
        const char *status, *name;
        berth_status st;
        int falls_back;
    } rules[] = {
        {"DEVICE", "BERTH_ERR_DEVICE", BERTH_ERR_DEVICE, 1},
        {"UNSUPPORTED", "BERTH_ERR_UNSUPPORTED", BERTH_ERR_UNSUPPORTED, 1},
        {"INVALID", "BERTH_ERR_INVALID", BERTH_ERR_INVALID, 0},
        {"NOMEM", "BERTH_ERR_NOMEM", BERTH_ERR_NOMEM, 0},
        {"IO", "BERTH_ERR_IO", BERTH_ERR_IO, 0},
        {"INTERNAL", "BERTH_ERR_INTERNAL", BERTH_ERR_INTERNAL, 0},
    };
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        char section[128], want[512];
        snprintf(section, sizeof section, "verb = open\nstatus = %s\n", rules[i].status);
        berth_executor *ex;
        berth_error err;
        berth_status st = open_config(config(MISBEHAVE_MODULE ", cpu", section), &ex, &err);
        if (rules[i].falls_back) {
            CHECK(st == BERTH_OK);
            CHECK(ex && !strcmp(berth_executor_backend(ex), "cpu"));
            snprintf(want, sizeof want,
                     "backend '%s' skipped: backend 'misbehave' open(): %s: misbehave: open fails as asked\n",
                     MISBEHAVE_MODULE, rules[i].name);
            CHECK_MSG(warnings, want);
            berth_executor_close(ex);
        } else {
            CHECK(st == rules[i].st && ex == NULL);
            snprintf(want, sizeof want, "backend 'misbehave' open(): %s: misbehave: open fails as asked",
                     rules[i].name);
            CHECK_MSG(err.msg, want);
            CHECK_MSG(warnings, "");
        }
    }
}

/* A mistyped option is the user's to fix, on the first backend or a
 * later one: no fallback lands the deployment somewhere else. */
static void test_bad_option_stops(void) {
    berth_executor *ex;
    berth_error err;
    CHECK(open_config(config(MISBEHAVE_MODULE ", cpu", "colour = red\n"), &ex, &err) == BERTH_ERR_INVALID);
    CHECK_MSG(err.msg, "backend 'misbehave' open(): BERTH_ERR_INVALID: unknown option 'colour' in "
                       "[backend.misbehave] (known: verb, status, message)");
    CHECK_MSG(warnings, "");
    CHECK(open_config(config("cpu, " MISBEHAVE_MODULE, "\n[backend.cpu]\nthreadz = 2\n"), &ex, &err) ==
          BERTH_ERR_INVALID);
    /* the cpu backend declares its options: the host refuses the key
     * before open(), naming the file and line */
    CHECK_CONTAINS(err.msg, "misbehave.ini:11: [backend.cpu] unknown key 'threadz': backend 'cpu' declares "
                            "threads, isa");
    CHECK_MSG(warnings, "");
}

/* caps() only names the device at open: its failure is a warning and the
 * deployment runs. */
static void test_caps(void) {
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
        char section[128], want[1024];
        snprintf(section, sizeof section, "verb = caps\nstatus = DEVICE\nmessage = %s\n", forms[f]);
        berth_error err;
        CHECK(open_run_profile(config(MISBEHAVE_MODULE, section), &err) == BERTH_OK);
        verb_case c = {"caps", "DEVICE", "BERTH_ERR_DEVICE", BERTH_ERR_DEVICE, "device name unknown: "};
        expected(&c, forms[f], want, sizeof want);
        strcat(want, "\n");
        CHECK_MSG(warnings, want);
    }
}

/* Told nothing, the module is the cpu backend: the failures above are
 * the ones asked for, not the module's own. */
static void test_no_failure(void) {
    berth_error err;
    CHECK(open_run_profile(config(MISBEHAVE_MODULE, ""), &err) == BERTH_OK);
    CHECK_MSG(warnings, "");
}

int main(void) {
    if (slice_model_write(&model, 23) != 0) {
        fprintf(stderr, "cannot write the model\n");
        return 1;
    }
    test_no_failure();
    test_open();
    test_open_fallback();
    test_bad_option_stops();
    test_caps();
    test_every_verb();
    slice_model_remove(&model);
    return check_exit();
}
