/* The inspect subcommand. It is CLI code that lives in the engine so the
 * CLI and tests share it; unlike the rest of the library it prints. */
#include "inspect.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "archive_internal.h"

static void usage(FILE *to) {
    fprintf(to,
            "usage: berth inspect FILE [--manifest M]\n"
            "\n"
            "Validate a weights archive and list its tensors.\n"
            "  FILE            a .safetensors file, or a raw blob described by --manifest\n"
            "  --manifest M    the JSON manifest of spans over the blob FILE\n"
            "  --help          show this help\n");
}

static void print_table(const berth_archive *a) {
    uint32_t n = berth_archive_count(a);
    uint64_t total = 0;
    size_t wname = 4;
    for (uint32_t i = 0; i < n; i++) {
        size_t len = strlen(berth_archive_entry(a, i)->name);
        if (len > wname) wname = len;
    }
    if (wname > 60) wname = 60;
    printf("%-*s  %-5s  %-24s  %12s  %12s\n", (int)wname, "name", "dtype", "shape", "offset",
           "bytes");
    for (uint32_t i = 0; i < n; i++) {
        const ba_entry *e = berth_archive_entry(a, i);
        char shape[160];
        ba_format_shape(shape, sizeof shape, "", e->rank, e->dims);
        printf("%-*s  %-5s  %-24s  %12" PRIu64 "  %12" PRIu64 "\n", (int)wname, e->name,
               ba_dtype_name(e->dtype), shape, e->offset, e->bytes);
        total += e->bytes;
    }
    uint32_t m = berth_archive_meta_count(a);
    if (m) printf("\nmetadata:\n");
    for (uint32_t i = 0; i < m; i++) {
        const char *k, *v;
        berth_archive_meta_at(a, i, &k, &v);
        printf("  %s = %s\n", k, v);
    }
    printf("\n%u tensors, %" PRIu64 " bytes\n", n, total);
}

int berth_inspect_main(int argc, char **argv) {
    const char *file = NULL, *manifest = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--manifest")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "berth inspect: --manifest needs a file\n");
                usage(stderr);
                return 2;
            }
            manifest = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "berth inspect: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        } else if (!file) {
            file = argv[i];
        } else {
            fprintf(stderr, "berth inspect: more than one file given ('%s' and '%s')\n", file,
                    argv[i]);
            return 2;
        }
    }
    if (!file) {
        usage(stderr);
        return 2;
    }
    berth_error err;
    berth_archive *a = berth_archive_open(file, manifest, &err);
    if (!a) {
        fprintf(stderr, "berth inspect: %s\n", err.msg);
        return 1;
    }
    printf("%s\n\n", berth_archive_path(a));
    print_table(a);
    berth_archive_close(a);
    return 0;
}
