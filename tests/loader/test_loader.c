/* Every way a backend module can fail to load has its own message; each
 * is provoked here with a real module (see fixture_module.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "host.h"
#include "loader.h"

static berth_host host;

static berth_status load(const char *what, const char *dir, berth_error *err) {
    berth_module m;
    const char *dirs[1] = {dir};
    berth_status st = berth_module_load(what, dirs, dir ? 1 : 0, &host.services, &m, err);
    if (st == BERTH_OK) berth_module_unload(&m);
    return st;
}

static void test_not_found(void) {
    berth_error err;
    CHECK(load("nosuch", "/nonexistent-berth-dir", &err) != BERTH_OK);
    CHECK_CONTAINS(err.msg, "backend 'nosuch' not found");
    CHECK_CONTAINS(err.msg, "libberth-nosuch.so");
    /* every directory searched is listed, in order */
    CHECK_CONTAINS(err.msg, "/nonexistent-berth-dir, ");
    CHECK_CONTAINS(err.msg, MODULE_BUILD_DIR);
}

static void test_env_path(void) {
    berth_error err;
    setenv("BERTH_BACKEND_PATH", "/first-env-dir:" FIXTURE_DIR, 1);
    /* found through the environment: it then fails for its own reason */
    CHECK(load("fx-refuse", NULL, &err) != BERTH_OK);
    CHECK_CONTAINS(err.msg, "refused to load");
    CHECK(load("nosuch", NULL, &err) != BERTH_OK);
    CHECK_CONTAINS(err.msg, "/first-env-dir, " FIXTURE_DIR);
    unsetenv("BERTH_BACKEND_PATH");
}

static void test_not_loadable(void) {
    berth_error err;
    char dir[] = "/tmp/berth-loader-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/libberth-garbage.so", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("this is not a shared object\n", f);
        fclose(f);
    }
    CHECK(load("garbage", dir, &err) != BERTH_OK);
    CHECK_CONTAINS(err.msg, "backend 'garbage' could not be loaded from ");
    CHECK_CONTAINS(err.msg, path);
    CHECK_CONTAINS(err.msg, "libberth-garbage.so: "); /* dlerror's text follows */
    unlink(path);
    rmdir(dir);

    CHECK(load("fx-undefined", FIXTURE_DIR, &err) != BERTH_OK);
    CHECK_CONTAINS(err.msg, "could not be loaded");
    CHECK_CONTAINS(err.msg, "undefined symbol: berth_fixture_symbol_nobody_defines");
}

static void test_entry_missing(void) {
    berth_error err;
    CHECK(load("fx-noentry", FIXTURE_DIR, &err) != BERTH_OK);
    CHECK_CONTAINS(err.msg, "does not export berth_backend_entry");
}

static void test_no_common_version(void) {
    berth_error err;
    CHECK(load("fx-future", FIXTURE_DIR, &err) != BERTH_OK);
    CHECK_CONTAINS(err.msg, "no ABI version both sides speak");
    /* the fixture offers one version past the newest this header describes */
    char want[96];
    snprintf(want, sizeof want, "offers version %u, this engine speaks versions 1 to %u",
             BERTH_BACKEND_ABI_VERSION + 1, BERTH_BACKEND_ABI_VERSION);
    CHECK_CONTAINS(err.msg, want);
}

static void test_refused(void) {
    berth_error err;
    CHECK(load("fx-refuse", FIXTURE_DIR, &err) != BERTH_OK);
    CHECK_CONTAINS(err.msg, "backend 'fx-refuse'");
    CHECK_CONTAINS(err.msg, "refused to load: fixture needs a device driver that is not installed");
}

static void test_table_too_small(void) {
    berth_error err;
    CHECK(load("fx-small", FIXTURE_DIR, &err) != BERTH_OK);
    char want[96];
    snprintf(want, sizeof want, "function table for ABI version 1 is 16 bytes, at least %zu expected for ABI 1.0",
             (size_t)BERTH_BACKEND_V1_MIN_SIZE);
    CHECK_CONTAINS(err.msg, want);
}

/* A NULL required slot is named, with every slot a v1 table must fill. */
static void test_null_slot(void) {
    berth_error err;
    CHECK(load("fx-noplan", FIXTURE_DIR, &err) == BERTH_ERR_INVALID);
    CHECK_MSG(err.msg, "backend 'fx-noplan' (" FIXTURE_DIR "/libberth-fx-noplan.so): function table slot "
                       "'plan' is NULL; a v1 table must fill open, close, caps, supports_op, upload_begin, "
                       "upload_tensor, upload_end, plan, run, free_plan, free_weights, weights_bytes and "
                       "plan_bytes (upload_dest and plan_profile may be NULL)");
}

static void test_no_name(void) {
    berth_error err;
    CHECK(load("fx-noname", FIXTURE_DIR, &err) == BERTH_ERR_INVALID);
    CHECK_MSG(err.msg, "backend 'fx-noname' (" FIXTURE_DIR "/libberth-fx-noname.so): function table field "
                       "'name' is NULL; the host names the backend by it in every message");
}

static void test_absolute_path_and_open(void) {
    berth_error err;
    berth_module m;
    berth_status st = berth_module_load(FIXTURE_DIR "/libberth-fx-nodevice.so", NULL, 0, &host.services,
                                        &m, &err);
    CHECK(st == BERTH_OK);
    if (st != BERTH_OK) return;
    CHECK(!strcmp(m.be->name, "fixture"));
    CHECK(!strcmp(m.path, FIXTURE_DIR "/libberth-fx-nodevice.so"));
    berth_device *dev = (berth_device *)&m; /* must be overwritten */
    CHECK(m.be->open(&host.services, &dev, &err) == BERTH_ERR_DEVICE);
    CHECK(dev == NULL);
    CHECK_CONTAINS(err.msg, "no fixture device present");
    berth_module_unload(&m);
}

static void test_search_order(void) {
    char *dirs[64];
    const char *ini[2] = {"/ini-a", "/ini-b"};
    setenv("BERTH_BACKEND_PATH", "/env-a::/env-b", 1);
    uint32_t n = berth_loader_search_path(ini, 2, dirs, 64);
    /* then, relative to this program (the file holding the engine):
     * ../lib/berth, and the build tree's backends/ found through the
     * CMakeCache.txt two folders up */
    char *exe = realpath("/proc/self/exe", NULL), here[4096] = "", lib[4200];
    if (exe) snprintf(here, sizeof here, "%.*s", (int)(strrchr(exe, '/') - exe), exe);
    snprintf(lib, sizeof lib, "%s/../lib/berth", here);
    free(exe);
    CHECK(n == 6); /* empty env items are dropped */
    if (n == 6) {
        CHECK(!strcmp(dirs[0], "/ini-a"));
        CHECK(!strcmp(dirs[1], "/ini-b"));
        CHECK(!strcmp(dirs[2], "/env-a"));
        CHECK(!strcmp(dirs[3], "/env-b"));
        CHECK(!strcmp(dirs[4], lib));
        CHECK(!strcmp(dirs[5], MODULE_BUILD_DIR));
    }
    for (uint32_t i = 0; i < n; i++) free(dirs[i]);
    unsetenv("BERTH_BACKEND_PATH");
}

/* option_at answers like every other call: BERTH_OK with the pair
 * written, BERTH_ERR_INVALID past the end (or with no section at all). */
static void test_option_at(void) {
    const char *key = NULL, *value = NULL;
    CHECK(host.services.option_count(host.services.ctx) == 0);
    CHECK(host.services.option_at(host.services.ctx, 0, &key, &value) == BERTH_ERR_INVALID);
    bc_kv kv[2] = {{"threads", "2", 3}, {"isa", "avx2", 4}};
    bc_backend_opts opts = {"cpu", 2, kv, 2};
    host.opts = &opts;
    CHECK(host.services.option_count(host.services.ctx) == 2);
    CHECK(host.services.option_at(host.services.ctx, 1, &key, &value) == BERTH_OK);
    CHECK(key && value && !strcmp(key, "isa") && !strcmp(value, "avx2"));
    CHECK(host.services.option_at(host.services.ctx, 2, &key, &value) == BERTH_ERR_INVALID);
    host.opts = NULL;
}

int main(void) {
    berth_logger log = {NULL, NULL, BERTH_LOG_ERROR};
    berth_host_init(&host, &log);
    unsetenv("BERTH_BACKEND_PATH");
    test_not_found();
    test_env_path();
    test_not_loadable();
    test_entry_missing();
    test_no_common_version();
    test_refused();
    test_table_too_small();
    test_null_slot();
    test_no_name();
    test_absolute_path_and_open();
    test_search_order();
    test_option_at();
    return check_exit();
}
