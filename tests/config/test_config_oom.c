/* Allocation failure: fail the 1st, 2nd, ... allocation of a parse in
 * turn. Each must return NULL with an out-of-memory message and free
 * everything it had (LeakSanitizer checks under BERTH_SANITIZE), until
 * the budget is large enough for the whole parse to succeed. */
/* The build forces oom_redirect.h in first; this file is where the
 * wrappers reach the real allocator. */
#undef malloc
#undef calloc
#undef realloc
#undef strdup

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"

static long alloc_calls;
static long fail_at = -1; /* the allocation to refuse; -1: none */

static int refuse(void) { return alloc_calls++ == fail_at; }

void *oom_malloc(size_t n) { return refuse() ? NULL : malloc(n); }
void *oom_calloc(size_t n, size_t size) { return refuse() ? NULL : calloc(n, size); }
void *oom_realloc(void *p, size_t n) { return refuse() ? NULL : realloc(p, n); }
char *oom_strdup(const char *s) { return refuse() ? NULL : strdup(s); }

static const char TEXT[] =
    "[model]\ngraph = m.webnn\nweights = w.bin\nmanifest = w.json\nstage = s\n"
    "[lane.enc]\ngraph = e.webnn\nstage = t\n[lane.dec]\ngraph = d.webnn\n"
    "[backend]\nuse = vulkan, lib/x.so, cpu\npath = a:/b:c\n"
    "[backend.cpu]\nthreads = 4\nnuma = on\nextra = 1\n[backend.vulkan]\n"
    "[buckets]\ns = b=1 w=2 | w=4 b=2 | b=3 w=8\nt = n=1 | n=2 | n=3 | n=4 | n=5\n"
    "[inputs.x]\npad = 1.5\n[inputs.y]\npad = -2\n[limits]\nmax_memory_mb = 512\n";

/* A line too long for inih's buffer: the reader keeps its key and value. */
#define LONG_VALUE "/a/folder/name/of/forty/characters/long"
static const char LONG_TEXT[] =
    "[model]\ngraph = g\nweights = w.safetensors\n[backend.cpu]\nmodule = " LONG_VALUE LONG_VALUE
    LONG_VALUE LONG_VALUE LONG_VALUE LONG_VALUE " ; a comment\nk = v\n";

/* Returns how many allocations the successful parse needed. */
static long sweep(const char *what, berth_config *(*parse)(const char *arg), const char *arg) {
    for (long k = 0; k < 100000; k++) {
        alloc_calls = 0;
        fail_at = k;
        berth_config *c = parse(arg);
        if (c) {
            fail_at = -1;
            berth_config_free(c);
            fprintf(stderr, "%s: %ld allocations failed in turn\n", what, k);
            return k;
        }
    }
    fail_at = -1;
    return -1;
}

static berth_error last_err;

static berth_config *parse_text(const char *text) {
    memset(&last_err, 0, sizeof last_err);
    berth_config *c = berth_config_parse("oom/o.ini", text, &last_err);
    if (!c) {
        CHECK_CONTAINS(last_err.msg, "oom/o.ini");
        CHECK_CONTAINS(last_err.msg, "out of memory");
    }
    return c;
}

static berth_config *load_file(const char *path) {
    memset(&last_err, 0, sizeof last_err);
    berth_config *c = berth_config_load(path, &last_err);
    if (!c) {
        CHECK_CONTAINS(last_err.msg, path);
        CHECK_CONTAINS(last_err.msg, "out of memory");
    }
    return c;
}

int main(int argc, char **argv) {
    /* the text parses when nothing fails */
    berth_config *c = parse_text(TEXT);
    CHECK(c != NULL);
    long total = alloc_calls;
    berth_config_free(c);
    CHECK(total > 40);

    long n = sweep("parse", parse_text, TEXT);
    CHECK(n == total);

    alloc_calls = 0;
    c = parse_text(LONG_TEXT);
    CHECK(c != NULL);
    total = alloc_calls;
    CHECK(c && c->n_backends == 1 && c->backends[0].n == 2 &&
          strlen(c->backends[0].kv[0].value) == 6 * strlen(LONG_VALUE));
    berth_config_free(c);
    CHECK(sweep("long line", parse_text, LONG_TEXT) == total);

    if (argc > 1) {
        char path[4096];
        snprintf(path, sizeof path, "%s/fixtures/full.ini", argv[1]);
        CHECK(sweep("load", load_file, path) > 0);
    }
    return check_exit();
}
