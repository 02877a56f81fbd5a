/* The differential check on each file named (the seed corpus in CTest),
 * or on the given number of inputs made by a fixed generator with
 * --random N, so every build runs it without libFuzzer. Prints what it
 * compared; a difference aborts with the graph. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"

static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "diff_replay: cannot open %s\n", path);
        return 1;
    }
    static uint8_t buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    diff_check(buf, n);
    return 0;
}

int main(int argc, char **argv) {
    int rc = 0, files = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--random") && i + 1 < argc) {
            long count = atol(argv[++i]);
            uint64_t s = 0x2545f4914f6cdd1dull;
            for (long k = 0; k < count; k++) {
                uint8_t buf[256];
                size_t n = 16 + (size_t)(k % 200);
                for (size_t j = 0; j < n; j++) {
                    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
                    buf[j] = (uint8_t)(s >> 56);
                }
                diff_check(buf, n);
            }
        } else {
            rc |= replay_file(argv[i]);
            files++;
        }
    }
    const diff_stats *t = diff_totals();
    printf("diff_replay: %llu graphs (%d files), %llu nodes, %llu fused runs; %llu output elements compared, "
           "%llu not comparable\n",
           (unsigned long long)t->graphs, files, (unsigned long long)t->nodes, (unsigned long long)t->fused_runs,
           (unsigned long long)t->compared, (unsigned long long)t->skipped);
    if (t->graphs == 0) {
        fprintf(stderr, "diff_replay: no graph checked\n");
        rc = 1;
    }
    return rc;
}
