/* berth-bench: the C harness of `make bench`.
 *
 *   berth-bench pairs CONFIG --out FILE.json [--runs N] [--warmup N]
 *                     [--dump DIR] -- PEER_COMMAND...
 *   berth-bench load CONFIG
 *   berth-bench sgemm SHAPES --threads N
 *   berth-bench shapes CONFIG DIR
 *   berth-bench peak --threads N
 *
 * bench/bench.py drives it; see docs/bench.md for what each measures. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static int usage(const char *why) {
    if (why) fprintf(stderr, "berth-bench: %s\n", why);
    fprintf(stderr,
            "usage: berth-bench pairs CONFIG --out FILE.json [--runs N] [--warmup N] [--dump DIR] -- PEER...\n"
            "       berth-bench load CONFIG\n"
            "       berth-bench sgemm SHAPES --threads N\n"
            "       berth-bench shapes CONFIG DIR\n"
            "       berth-bench peak --threads N\n");
    return 2;
}

static int count_arg(const char *flag, const char *text, int min, int *out) {
    char *end;
    long v = strtol(text, &end, 10);
    if (*text == 0 || *end != 0 || v < min || v > 100000) {
        fprintf(stderr, "berth-bench: %s: expected an integer %d..100000, found '%s'\n", flag, min, text);
        return 2;
    }
    *out = (int)v;
    return 0;
}

static int cmd_pairs(int argc, char **argv) {
    bench_pairs_opts o = {NULL, NULL, NULL, 20, 3, NULL};
    int i = 0;
    for (; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        } else if (strcmp(a, "--out") == 0 && more) {
            o.out = argv[++i];
        } else if (strcmp(a, "--dump") == 0 && more) {
            o.dump = argv[++i];
        } else if (strcmp(a, "--runs") == 0 && more) {
            if (count_arg(a, argv[++i], 1, &o.runs)) return 2;
        } else if (strcmp(a, "--warmup") == 0 && more) {
            if (count_arg(a, argv[++i], 0, &o.warmup)) return 2;
        } else if (a[0] != '-' && !o.config) {
            o.config = a;
        } else {
            fprintf(stderr, "berth-bench pairs: unknown or incomplete argument '%s'\n", a);
            return usage(NULL);
        }
    }
    if (!o.config || !o.out) return usage("pairs needs CONFIG and --out");
    if (i >= argc) return usage("pairs needs a peer command after --");
    o.peer_argv = &argv[i];
    return bench_pairs(&o);
}

int main(int argc, char **argv) {
    /* a peer that dies must surface as an error value, not a SIGPIPE */
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2) return usage(NULL);
    const char *cmd = argv[1];
    if (strcmp(cmd, "pairs") == 0) return cmd_pairs(argc - 2, argv + 2);
    if (strcmp(cmd, "load") == 0) {
        if (argc != 3) return usage("load takes one CONFIG");
        return bench_load(argv[2]);
    }
    if (strcmp(cmd, "shapes") == 0) {
        if (argc != 4) return usage("shapes takes CONFIG DIR");
        return bench_shapes(argv[2], argv[3]);
    }
    if (strcmp(cmd, "sgemm") == 0) {
        int threads = 0;
        if (argc != 5 || strcmp(argv[3], "--threads") != 0) return usage("sgemm takes SHAPES --threads N");
        if (count_arg("--threads", argv[4], 1, &threads)) return 2;
        return bench_sgemm(argv[2], threads);
    }
    if (strcmp(cmd, "peak") == 0) {
        int threads = 0;
        if (argc != 4 || strcmp(argv[2], "--threads") != 0) return usage("peak takes --threads N");
        if (count_arg("--threads", argv[3], 1, &threads)) return 2;
        return bench_peak(threads);
    }
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0) {
        usage(NULL);
        return 0;
    }
    fprintf(stderr, "berth-bench: unknown command '%s'\n", cmd);
    return usage(NULL);
}
