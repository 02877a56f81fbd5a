/* The table of op cases (apps/check/op_cases.c) on the cpu module:
 * the cpu backend is the reference backend, so every case must pass. */
#include <stdio.h>

#include "op_cases.h"

static const char *const minimum[] = {"*"};

int main(void) {
    mh_host host;
    mh_module m;
    berth_error err;
    mh_host_init(&host);
    if (mh_load(&m, BERTH_CPU_MODULE, &host, &err) != BERTH_OK || mh_open(&m, &err) != BERTH_OK) {
        fprintf(stderr, "the cpu module did not open: %s\n", err.msg);
        return 1;
    }
    return oc_test_module(&m, minimum, sizeof minimum / sizeof minimum[0]);
}
