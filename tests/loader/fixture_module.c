/* One source, several broken backends: FIXTURE selects how this module
 * misbehaves, so each loader failure has a real module to fail on. */
#include <stdio.h>
#include <string.h>

#include "berth/backend.h"

#define FIX_REFUSE 1 /* entry returns NULL with a reason        */
#define FIX_FUTURE 2 /* table claims an ABI newer than the host */
#define FIX_SMALL 3  /* table shorter than ABI v1 requires      */
#define FIX_NOENTRY 4 /* exports no entry symbol                */
#define FIX_UNDEFINED 5 /* needs a symbol nothing defines        */
#define FIX_NODEVICE 6 /* loads, but open finds no device        */
#define FIX_NOPLAN 7   /* table leaves the required plan slot NULL */
#define FIX_NONAME 8   /* table has no name to be called by      */

#if FIXTURE == FIX_NOENTRY
BERTH_BACKEND_EXPORT int berth_fixture_not_an_entry(void) { return 0; }
#else

#if FIXTURE == FIX_UNDEFINED
extern int berth_fixture_symbol_nobody_defines(void);
#endif

static berth_status fix_open(const berth_host_services *host, berth_device **out, berth_error *err) {
    (void)host;
    *out = NULL;
    snprintf(err->msg, sizeof err->msg, "no fixture device present");
    return BERTH_ERR_DEVICE;
}

/* The remaining verbs are never reached: open always fails. They exist
 * so the table is complete and only open's failure is tested. */
static void fix_close(berth_device *d) { (void)d; }
static berth_status fix_caps(berth_device *d, berth_caps *c, berth_error *e) {
    (void)d, (void)c, (void)e;
    return BERTH_ERR_DEVICE;
}
static berth_status fix_supports(berth_device *d, const char *op, berth_dtype t, berth_error *e) {
    (void)d, (void)op, (void)t, (void)e;
    return BERTH_ERR_UNSUPPORTED;
}
static berth_status fix_begin(berth_device *d, const berth_upload_info *i, berth_weights **w,
                              berth_error *e) {
    (void)d, (void)i, (void)w, (void)e;
    return BERTH_ERR_DEVICE;
}
static berth_status fix_tensor(berth_weights *w, const berth_weight_desc *d, void *data,
                               uint32_t flags, int *taken, berth_error *e) {
    (void)w, (void)d, (void)data, (void)flags, (void)taken, (void)e;
    return BERTH_ERR_DEVICE;
}
static berth_status fix_end(berth_weights *w, berth_error *e) {
    (void)w, (void)e;
    return BERTH_ERR_DEVICE;
}
static berth_status fix_plan(berth_device *d, berth_weights *w, const berth_graph_desc *g,
                             berth_plan **p, berth_error *e) {
    (void)d, (void)w, (void)g, (void)p, (void)e;
    return BERTH_ERR_DEVICE;
}
static berth_status fix_run(berth_plan *p, const berth_tensor *in, uint32_t ni, berth_tensor *out,
                            uint32_t no, berth_error *e) {
    (void)p, (void)in, (void)ni, (void)out, (void)no, (void)e;
    return BERTH_ERR_DEVICE;
}
static void fix_free_plan(berth_plan *p) { (void)p; }
static void fix_free_weights(berth_weights *w) { (void)w; }
static uint64_t fix_wbytes(const berth_weights *w) { (void)w; return 0; }
static uint64_t fix_pbytes(const berth_plan *p) { (void)p; return 0; }

/* An ABI 1.0 table (no supports_node): these fixtures test the loader's
 * checks common to every version. */
static berth_backend table __attribute__((unused)) = {
    .abi_version = BERTH_BACKEND_ABI_V1_0,
    .struct_size = sizeof(berth_backend),
    .name = "fixture",
    .version = "0",
    .open = fix_open,
    .close = fix_close,
    .caps = fix_caps,
    .supports_op = fix_supports,
    .upload_begin = fix_begin,
    .upload_tensor = fix_tensor,
    .upload_end = fix_end,
    .plan = fix_plan,
    .run = fix_run,
    .free_plan = fix_free_plan,
    .free_weights = fix_free_weights,
    .weights_bytes = fix_wbytes,
    .plan_bytes = fix_pbytes,
};

BERTH_BACKEND_EXPORT const berth_backend *berth_backend_entry(uint32_t host_abi_version,
                                                              const berth_host_services *host,
                                                              berth_error *why) {
    (void)host_abi_version;
    (void)host;
#if FIXTURE == FIX_REFUSE
    snprintf(why->msg, sizeof why->msg, "fixture needs a device driver that is not installed");
    return NULL;
#elif FIXTURE == FIX_FUTURE
    (void)why;
    table.abi_version = BERTH_BACKEND_ABI_VERSION + 1;
    return &table;
#elif FIXTURE == FIX_SMALL
    (void)why;
    table.struct_size = 16;
    return &table;
#elif FIXTURE == FIX_NOPLAN
    (void)why;
    table.plan = NULL;
    return &table;
#elif FIXTURE == FIX_NONAME
    (void)why;
    table.name = NULL;
    return &table;
#elif FIXTURE == FIX_UNDEFINED
    (void)why;
    return berth_fixture_symbol_nobody_defines() ? &table : NULL;
#else
    (void)why; /* FIX_NODEVICE */
    return &table;
#endif
}
#endif
