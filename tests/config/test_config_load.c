/* berth_config_load: files on disk, paths resolved against the file's
 * directory, and the errors only a file can have (missing, unreadable,
 * NUL bytes). argv[1] is this suite's source directory. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "config.h"

static int streq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

static char *join(const char *a, const char *b) {
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", a, b);
    return p;
}

static void test_full(const char *src) {
    char *dir = join(src, "fixtures");
    char *path = join(dir, "full.ini");
    berth_error err = {{0}};
    berth_config *c = berth_config_load(path, &err);
    if (!c) fprintf(stderr, "load failed: %s\n", err.msg);
    CHECK(c != NULL);
    if (c) {
        char *want_graph = join(dir, "model.webnn");
        char *want_weights = join(dir, "weights/model.bin");
        char *want_manifest = join(dir, "weights/model.json");
        char *want_enc = join(dir, "encoder.webnn");
        char *want_mods = join(dir, "modules");
        CHECK(streq(c->path, path));
        CHECK(streq(c->dir, dir));
        CHECK(streq(c->lanes[0].graph, want_graph));
        CHECK(streq(c->weights, want_weights));
        CHECK(streq(c->manifest, want_manifest));
        CHECK(streq(c->lanes[0].stage, "detect"));
        CHECK(c->n_lanes == 2 && streq(c->lanes[1].graph, want_enc));
        CHECK(c->n_use == 2 && streq(c->use[0], "vulkan") && streq(c->use[1], "cpu"));
        CHECK(c->n_path == 1 && streq(c->path_dirs[0], want_mods));
        const bc_backend_opts *cpu = berth_config_backend(c, "cpu");
        CHECK(cpu && cpu->n == 1 && streq(cpu->kv[0].key, "threads") && cpu->kv[0].line == 16);
        const bc_stage *st = berth_config_stage(c, "detect");
        CHECK(st && st->n == 2 && st->buckets[1].n == 3);
        if (st && st->n == 2 && st->buckets[1].n == 3) {
            CHECK(streq(st->buckets[1].binds[0].dim, "batch"));
            CHECK(st->buckets[1].binds[0].value == 4);
            CHECK(streq(st->buckets[1].binds[2].dim, "width"));
            CHECK(st->buckets[1].binds[2].value == 640);
        }
        CHECK_NEAR(berth_config_pad(c, "image"), 0.5, 0);
        free(want_graph);
        free(want_weights);
        free(want_manifest);
        free(want_enc);
        free(want_mods);
    }
    berth_config_free(c);
    free(path);
    free(dir);
}

static void test_fixture_errors(const char *src) {
    char *path = join(src, "fixtures/bad_bucket.ini");
    berth_error err;
    berth_config *c = berth_config_load(path, &err);
    CHECK(c == NULL);
    berth_config_free(c);
    char want[600];
    snprintf(want, sizeof want, "%s:7: ", path);
    CHECK_CONTAINS(err.msg, want);
    CHECK_CONTAINS(err.msg, "[buckets] detect");
    CHECK_CONTAINS(err.msg, "'width'");
    free(path);

    path = join(src, "fixtures/crlf.ini");
    c = berth_config_load(path, &err);
    CHECK(c != NULL);
    if (c) CHECK(c->n_use == 1 && streq(c->use[0], "cpu"));
    berth_config_free(c);
    free(path);

    path = join(src, "fixtures/does-not-exist.ini");
    c = berth_config_load(path, &err);
    CHECK(c == NULL);
    CHECK_CONTAINS(err.msg, path);
    CHECK_CONTAINS(err.msg, "cannot open");
    CHECK_CONTAINS(err.msg, "No such file");
    free(path);

    path = join(src, "fixtures");
    c = berth_config_load(path, &err);
    CHECK(c == NULL);
    CHECK_CONTAINS(err.msg, path);
    CHECK_CONTAINS(err.msg, "the config is a directory, expected a regular file");
    free(path);

    CHECK(berth_config_load(NULL, &err) == NULL);
    CHECK_CONTAINS(err.msg, "NULL");
}

/* Files written here: a NUL byte, and a config larger than one read. */
static void test_written(void) {
    char dir[] = "/tmp/berth-config-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char *path = join(dir, "nul.ini");
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    static const char nul_text[] = "[model]\ngraph = m.webnn\nweights = w\0.safetensors\n";
    fwrite(nul_text, 1, sizeof nul_text - 1, f);
    fclose(f);
    berth_error err;
    berth_config *c = berth_config_load(path, &err);
    CHECK(c == NULL);
    char want[128];
    snprintf(want, sizeof want, "%s:3: ", path);
    CHECK_CONTAINS(err.msg, want);
    CHECK_CONTAINS(err.msg, "NUL");
    unlink(path);
    free(path);

    /* many backend options: the file spans several reads and the arrays
     * grow many times */
    path = join(dir, "big.ini");
    f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fputs("[model]\ngraph = m.webnn\nweights = w.safetensors\n[backend.cpu]\n", f);
    for (int i = 0; i < 3000; i++) fprintf(f, "opt%d = value %d\n", i, i * 7);
    fclose(f);
    c = berth_config_load(path, &err);
    CHECK(c != NULL);
    if (c) {
        const bc_backend_opts *b = berth_config_backend(c, "cpu");
        CHECK(b && b->n == 3000);
        if (b && b->n == 3000) {
            CHECK(streq(b->kv[2999].key, "opt2999"));
            CHECK(streq(b->kv[2999].value, "value 20993"));
            CHECK(b->kv[2999].line == 4 + 3000);
        }
    }
    berth_config_free(c);
    unlink(path);
    free(path);
    rmdir(dir);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_config_load SOURCE_DIR\n");
        return 2;
    }
    test_full(argv[1]);
    test_fixture_errors(argv[1]);
    test_written();
    return check_exit();
}
