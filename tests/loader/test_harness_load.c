/* The module harness's loading (apps/check/harness.c) on the
 * loader's broken fixture modules: each refusal the engine makes, the
 * harness makes too, so a test built on it cannot run a module the
 * engine would not load. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "module_harness.h"

static mh_host host;

static berth_status load(const char *name, berth_error *err) {
    char path[512];
    snprintf(path, sizeof path, "%s/libberth-%s.so", FIXTURE_DIR, name);
    mh_module m;
    berth_status st = mh_load(&m, path, &host, err);
    if (st == BERTH_OK) mh_unload(&m);
    return st;
}

int main(void) {
    mh_host_init(&host);
    berth_error err;
    CHECK(load("fx-future", &err) == BERTH_ERR_UNSUPPORTED);
    char want[96];
    snprintf(want, sizeof want, "asked for ABI version %u, the table says %u", BERTH_BACKEND_ABI_VERSION,
             BERTH_BACKEND_ABI_VERSION + 1);
    CHECK_CONTAINS(err.msg, want);
    CHECK(load("fx-small", &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "the table is 16 bytes");
    CHECK(load("fx-refuse", &err) == BERTH_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.msg, "fixture needs a device driver that is not installed");
    CHECK(load("fx-noentry", &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "no berth_backend_entry symbol");
    CHECK(load("fx-noname", &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "no name");
    CHECK(load("fx-undefined", &err) == BERTH_ERR_IO);
    CHECK_CONTAINS(err.msg, "berth_fixture_symbol_nobody_defines");

    /* loads; a table without supports_node is asked supports_op */
    mh_module m;
    CHECK(mh_load(&m, FIXTURE_DIR "/libberth-fx-nodevice.so", &host, &err) == BERTH_OK);
    if (m.be) {
        CHECK(!mh_has_supports_node(m.be));
        CHECK(mh_open(&m, &err) == BERTH_ERR_DEVICE);
        CHECK(m.dev == NULL);
        CHECK_CONTAINS(err.msg, "no fixture device present");
        mh_unload(&m);
    }
    return check_exit();
}
