/* The host's side of backend ABI 1.1, against real modules: the loader's
 * checks per version, declared options checked before open(),
 * supports_node asked before plan() (and a refused fused node planned
 * unfused), get_proc through berth_executor_backend_proc, and the
 * alignment run() promises backends. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi11_fixture.h"
#include "berth/berth.h"
#include "check.h"
#include "host.h"
#include "loader.h"

#define MOD(name) MODULE_DIR "/libberth-" name ".so"

static char dir[64];
static char log_path[128];

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static int logged(const char *what) {
    FILE *f = fopen(log_path, "r");
    if (!f) return 0;
    char line[64];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        n += !strcmp(line, what);
    }
    fclose(f);
    return n;
}

/* A config for `graph` on `use`, with `extra` sections; returns its path. */
static const char *config(const char *name, const char *graph, const char *use, const char *extra) {
    static char path[192];
    char text[2048];
    snprintf(path, sizeof path, "%s/%s.ini", dir, name);
    snprintf(text, sizeof text,
             "[model]\ngraph = %s\nweights = %s\n[backend]\nuse = %s\n%s", graph,
             FIRST_DIR "/first.safetensors", use, extra);
    write_file(path, text);
    unlink(log_path);
    return path;
}

static berth_status load(const char *path, berth_error *err) {
    berth_logger log = {NULL, NULL, BERTH_LOG_ERROR};
    berth_host host;
    berth_host_init(&host, &log);
    berth_module m;
    berth_status st = berth_module_load(path, NULL, 0, &host.services, &m, err);
    if (st == BERTH_OK) berth_module_unload(&m);
    return st;
}

/* Opens cfg, which must open; NULL (a failed check, the reason shown)
 * if it does not. */
static berth_executor *open_ok(const char *cfg) {
    berth_executor *ex = NULL;
    berth_error err;
    CHECK(berth_executor_open(cfg, NULL, &ex, &err) == BERTH_OK);
    if (!ex) fprintf(stderr, "open: %s\n", err.msg);
    return ex;
}

static void test_loader(void) {
    berth_error err;
    CHECK(load(MOD("abi11"), &err) == BERTH_OK);
    CHECK(load(MOD("abi_v1"), &err) == BERTH_OK);

    CHECK(load(MOD("abi11-nosn"), &err) == BERTH_ERR_INVALID);
    CHECK_MSG(err.msg, "backend '" MOD("abi11-nosn") "' (" MOD("abi11-nosn") "): function table slot "
                       "'supports_node' is NULL; a table of ABI version 2 (ABI 1.1) must fill it "
                       "(only get_proc may be NULL among the 1.1 slots)");

    char want[512];
    CHECK(load(MOD("abi11-small"), &err) == BERTH_ERR_INVALID);
    snprintf(want, sizeof want, "function table for ABI version 2 is %zu bytes, at least %zu expected for ABI 1.1",
             (size_t)BERTH_BACKEND_V1_MIN_SIZE, (size_t)BERTH_BACKEND_V1_1_MIN_SIZE);
    CHECK_CONTAINS(err.msg, want);
    CHECK_CONTAINS(err.msg, "(" MOD("abi11-small") ")");

    CHECK(load(MOD("abi_v1-short"), &err) == BERTH_ERR_INVALID);
    snprintf(want, sizeof want, "function table for ABI version 1 is %zu bytes, at least %zu expected for ABI 1.0",
             (size_t)BERTH_BACKEND_V1_MIN_SIZE - sizeof(void *), (size_t)BERTH_BACKEND_V1_MIN_SIZE);
    CHECK_CONTAINS(err.msg, want);

    CHECK(load(MOD("abi11-baddecl"), &err) == BERTH_ERR_INVALID);
    snprintf(want, sizeof want, "function table field 'option_decl_size' is 8 with 'n_options' 4; at least %zu expected",
             (size_t)BERTH_OPTION_DECL_V1_SIZE);
    CHECK_CONTAINS(err.msg, want);

    /* Version 1 with a 1.1-sized table whose 1.1 fields are nonsense: the
     * host reads none of them. */
    berth_logger log = {NULL, NULL, BERTH_LOG_ERROR};
    berth_host host;
    berth_host_init(&host, &log);
    berth_module m;
    CHECK(berth_module_load(MOD("abi11-as-v1"), NULL, 0, &host.services, &m, &err) == BERTH_OK);
    if (m.be) {
        CHECK(berth_backend_option_count(m.be) == 0);
        CHECK(berth_backend_option(m.be, 0) == NULL);
        CHECK(berth_backend_proc(m.be, ABI11_STAT_PROC) == NULL);
        CHECK(!berth_backend_has_supports_node(m.be));
        berth_module_unload(&m);
    }
}

static void test_options(void) {
    static const struct {
        const char *section, *want;
    } bad[] = {
        {"threadz = 2", ":7: [backend.abi11] unknown key 'threadz': backend 'abi11' declares threads, mode, trace, scale"},
        {"threads = 100", ":7: [backend.abi11] threads: expected an integer in [1, 64], found '100'"},
        {"threads = 0", ":7: [backend.abi11] threads: expected an integer in [1, 64], found '0'"},
        {"threads = 4x", ":7: [backend.abi11] threads: expected an integer in [1, 64], found '4x'"},
        {"mode = slow", ":7: [backend.abi11] mode: expected one of fast|exact, found 'slow'"},
        {"trace = maybe", ":7: [backend.abi11] trace: expected a boolean (true/false, yes/no, on/off, 1/0), found 'maybe'"},
        {"scale = 1e999", ":7: [backend.abi11] scale: expected a finite number, found '1e999'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char extra[128];
        snprintf(extra, sizeof extra, "[backend.abi11]\n%s\n", bad[i].section);
        /* A bad option stops: the cpu backend after it is not tried. */
        const char *cfg = config("opts", FIRST_DIR "/first.webnn", MOD("abi11") ", cpu", extra);
        berth_executor *ex = NULL;
        berth_error err;
        CHECK(berth_executor_open(cfg, NULL, &ex, &err) == BERTH_ERR_INVALID);
        CHECK(ex == NULL);
        char want[512];
        snprintf(want, sizeof want, "%s%s", cfg, bad[i].want);
        CHECK_MSG(err.msg, want);
        CHECK(logged("open") == 0);
    }
    const char *cfg = config("opts_ok", FIRST_DIR "/first.webnn", MOD("abi11"),
                             "[backend.abi11]\nthreads = 64\nmode = exact\ntrace = Yes\nscale = -2.5\n"
                             "[buckets]\nrows = batch=1\n");
    berth_executor *ex = open_ok(cfg);
    CHECK(logged("open") == 1);
    berth_executor_close(ex);
}

/* get_proc reaches the module; the fused epilogue supports_node refuses
 * is planned unfused rather than failing the bucket. */
static void test_proc_and_fusion(void) {
    const char *cfg = config("proc", FIRST_DIR "/first.webnn", MOD("abi11"), "[buckets]\nrows = batch=2\n");
    berth_executor *ex = open_ok(cfg);
    if (!ex) return;
    berth_error err;
    CHECK(berth_executor_backend_proc(ex, "abi11_nosuch") == NULL);
    union {
        void *obj;
        abi11_stat_fn fn;
    } u;
    u.obj = berth_executor_backend_proc(ex, ABI11_STAT_PROC);
    CHECK(u.obj != NULL);
    if (!u.obj) goto out;
    char ops[256];
    int plans0 = u.fn("plans", ops, sizeof ops);
    CHECK(u.fn("nosuch", ops, sizeof ops) == -1);
    CHECK(berth_executor_prepare(ex, 0, 0, &err) == BERTH_OK);
    CHECK(u.fn("plans", ops, sizeof ops) == plans0 + 1);
    CHECK_MSG(ops, "matmul,add,relu,matmul,add");
    CHECK(u.fn("fused_refused", NULL, 0) >= 1);
    CHECK(logged("plan") == 1);
out:
    berth_executor_close(ex);
}

static void test_refused_at_open(void) {
    char graph[192];
    snprintf(graph, sizeof graph, "%s/bigk.webnn", dir);
    write_file(graph, "webnn_graph \"bigk\" v2 {\n  inputs { x: f32[2, 100]; w: f32[100, 3]; }\n"
                      "  nodes { y = matmul(x, w); }\n  outputs { y; }\n}\n");
    const char *cfg = config("bigk", graph, MOD("abi11"), "");
    berth_executor *ex = NULL;
    berth_error err;
    CHECK(berth_executor_open(cfg, NULL, &ex, &err) == BERTH_ERR_UNSUPPORTED);
    char want[512];
    snprintf(want, sizeof want,
             "%s: node 'y' (op matmul; inputs x f32[2, 100], w f32[100, 3]; outputs y f32[2, 3]): backend "
             "'abi11' supports_node(): BERTH_ERR_UNSUPPORTED: matmul with K = 100: the matmul unit holds K up to 64",
             graph);
    CHECK_MSG(err.msg, want);
    CHECK(logged("open") == 1);
    CHECK(logged("plan") == 0);
}

static void test_refused_bucket(void) {
    char graph[192];
    snprintf(graph, sizeof graph, "%s/rows.webnn", dir);
    write_file(graph, "webnn_graph \"rows\" v2 {\n  inputs { x: f32[dyn(\"batch\", 128), 4]; w: f32[4, 3]; }\n"
                      "  nodes { y = matmul(x, w); }\n  outputs { y; }\n}\n");
    const char *cfg = config("rows", graph, MOD("abi11"), "[buckets]\nrows = batch=1 | batch=100\n");
    berth_executor *ex = open_ok(cfg);
    if (!ex) return;
    berth_error err;
    CHECK(berth_executor_prepare(ex, 0, 1, &err) == BERTH_ERR_UNSUPPORTED);
    char want[512];
    snprintf(want, sizeof want,
             "%s: node 'y' (op matmul; inputs x f32[100, 4], w f32[4, 3]; outputs y f32[100, 3]): backend "
             "'abi11' supports_node(): BERTH_ERR_UNSUPPORTED: matmul with 100 rows: the matmul unit holds up to 64 rows",
             graph);
    CHECK_MSG(err.msg, want);
    CHECK(logged("plan") == 0);
    CHECK(!berth_executor_is_warm(ex, 0, 1));
    CHECK(berth_executor_prepare(ex, 0, 0, &err) == BERTH_OK);
    CHECK(logged("plan") == 1);
    berth_executor_close(ex);
}

/* The 1.0 module runs the first graph; its executor has no procs; a
 * caller's buffer not aligned to its element size is refused. */
static void test_v1_module_and_alignment(void) {
    const char *cfg = config("v1", FIRST_DIR "/first.webnn", MOD("abi_v1"), "[buckets]\nrows = batch=2\n");
    berth_executor *ex = open_ok(cfg);
    if (!ex) return;
    berth_error err;
    CHECK(!strcmp(berth_executor_backend(ex), "abi_v1"));
    CHECK(berth_executor_backend_proc(ex, ABI11_STAT_PROC) == NULL);
    _Alignas(16) unsigned char raw[2 * 4 * sizeof(float) + 16];
    memset(raw, 0, sizeof raw);
    berth_tensor in = {.dtype = BERTH_DTYPE_F32, .rank = 2, .dims = {2, 4}, .bytes = 8 * sizeof(float)};
    berth_tensor out = {0};
    in.data = raw + 2;
    CHECK(berth_executor_run(ex, 0, &in, 1, &out, 1, NULL, &err) == BERTH_ERR_INVALID);
    char want[256];
    snprintf(want, sizeof want, "input 'x': data at %p is aligned to 2 bytes; f32 elements need 4", in.data);
    CHECK_MSG(err.msg, want);
    in.data = raw;
    CHECK(berth_executor_run(ex, 0, &in, 1, &out, 1, NULL, &err) == BERTH_OK);
    CHECK(out.rank == 2 && out.dims[0] == 2 && out.dims[1] == 3);
    /* An output buffer of the caller's, misaligned, is refused too. */
    berth_tensor bad = {.dtype = BERTH_DTYPE_F32, .data = raw + 1, .capacity = 8};
    CHECK(berth_executor_run(ex, 0, &in, 1, &bad, 1, NULL, &err) == BERTH_ERR_INVALID);
    snprintf(want, sizeof want, "output 'y': data at %p is aligned to 1 byte; f32 elements need 4", bad.data);
    CHECK_MSG(err.msg, want);
    berth_tensor_release(&out);
    berth_executor_close(ex);
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/berth-abi-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(log_path, sizeof log_path, "%s/calls.log", dir);
    setenv(ABI11_LOG_ENV, log_path, 1);
    test_loader();
    test_options();
    test_proc_and_fusion();
    test_refused_at_open();
    test_refused_bucket();
    test_v1_module_and_alignment();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_exit();
}
