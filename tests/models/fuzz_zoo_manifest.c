/* libFuzzer target for the zoo manifest reader (berth check --models):
 * any bytes are either refused with one line naming the file, with
 * nothing left allocated, or read into models each of which is either a
 * refusal or has a config, inputs and wants, and tolerances >= 0. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zoo_manifest.h"

static void require(int cond) {
    if (!cond) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0; /* fmemopen of 0 bytes is refused by glibc */
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f) return 0;
    zoo_model *ms = NULL;
    char why[512] = "";
    int n = berth_zoo_manifest_parse(f, "fuzz.ini", &ms, why, sizeof why);
    fclose(f);
    if (n < 0) {
        require(!strncmp(why, "fuzz.ini", 8) && strchr(why, '\n') == NULL && ms == NULL);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        require(ms[i].name[0] != 0);
        require(ms[i].refused || (ms[i].config && ms[i].inputs && ms[i].wants));
        require(ms[i].atol >= 0 && ms[i].rtol >= 0);
    }
    berth_zoo_manifest_free(ms, n);
    return 0;
}
