/* Every way a config can be wrong: the parse fails, and the message names
 * the file, the right line, the key, and what was found. Line numbers are
 * counted by hand from the texts below. LeakSanitizer checks that each
 * failure frees everything. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"

/* A valid [model] on lines 1-3, for cases about other sections. */
#define M "[model]\ngraph = m.webnn\nweights = w.safetensors\n"

typedef struct err_case {
    const char *text;
    unsigned line;
    const char *part1; /* usually the key or section */
    const char *part2; /* what was expected or found; NULL: none */
} err_case;

static const err_case CASES[] = {
    /* sections */
    {"[modle]\ngraph = m\n", 1, "[modle]", "unknown section"},
    {M "[Model]\n", 4, "[Model]", "unknown section"},
    {M "[buckets.x]\n", 4, "[buckets.x]", "unknown section"},
    {M "[model]\n", 4, "duplicate section [model]", "first at line 1"},
    {M "[lane.a]\ngraph = a\n[lane.a]\ngraph = b\n", 6, "[lane.a]", "first at line 4"},
    {M "[backend.cpu]\n[backend.cpu]\n", 5, "[backend.cpu]", "duplicate section"},
    {M "[lane]\ngraph = x\n", 4, "[lane]", "NAME"},
    {M "[lane.main]\ngraph = x\n", 4, "[lane.main]", "reserved"},
    {M "[lane.a.b]\ngraph = x\n", 4, "[lane.a.b]", "'a.b'"},
    {M "[backend.a/b]\n", 4, "[backend.a/b]", "'a/b'"},
    {M "[backend.]\n", 4, "[backend.]", "NAME"},
    {M "[inputs]\npad = 1\n", 4, "[inputs]", "NAME"},
    {M "[inputs.a b]\npad = 1\n", 4, "[inputs.a b]", "NAME"},
    {M "[model\n", 4, "']'", "'[model'"},
    {M "[buckets] x\n", 4, "section header", "'x'"},
    {"graph = m.webnn\n[model]\n", 1, "'graph'", "outside any section"},
    {"; only a comment\n", 1, "missing section [model]", "graph"},
    {"", 1, "missing section [model]", NULL},
    /* [model] */
    {"[model]\ngrahp = m.webnn\nweights = w.safetensors\n", 2, "[model]", "unknown key 'grahp'"},
    {"[model]\ngraph = a\ngraph = b\nweights = w.safetensors\n", 3, "[model] graph",
     "duplicate key (first at line 2)"},
    {"; header\n[model]\nweights = w.safetensors\n\n[backend]\n", 2, "[model]",
     "missing key 'graph'"},
    {"[model]\ngraph = m.webnn\n[backend]\nuse = cpu\n", 1, "[model]", "missing key 'weights'"},
    {"[model]\ngraph =\nweights = w.safetensors\n", 2, "[model] graph", "empty"},
    {"[model]\ngraph = m.webnn ; comment only after\nweights = ; nothing\n", 3, "[model] weights",
     "empty"},
    {"\n[model]\ngraph = m.webnn\nweights = w.bin\n", 2, "missing key 'manifest'", "'err/w.bin' on line 4"},
    {"[model]\ngraph = m.webnn\nweights = w.safetensors\nmanifest = w.json\n", 4,
     "[model] manifest", "'err/w.safetensors'"},
    {"[model]\ngraph = m.webnn\nweights = w.safetensors\nstage = nope\n[buckets]\nyes = b=1\n", 4,
     "[model] stage", "no stage 'nope'"},
    {"[model]\ngraph = m.webnn\nweights = w.safetensors\nstage = s\n", 4, "[model] stage",
     "no [buckets]"},
    {"[model]\ngraph = m.webnn\nweights = w.safetensors\nstage = a b\n", 4, "[model] stage",
     "'a b'"},
    /* [lane.NAME] */
    {M "[lane.enc]\nstage = s\n[buckets]\ns = b=1\n", 4, "[lane.enc]", "missing key 'graph'"},
    {M "[lane.enc]\ngraph = e\nstage = t\n[buckets]\ns = b=1\n", 6, "[lane.enc] stage",
     "no stage 't'"},
    {M "[lane.enc]\ngraph = e\nweights = w\n", 6, "[lane.enc]", "unknown key 'weights'"},
    /* [backend] */
    {M "[backend]\nuse = cpu,,vulkan\n", 5, "[backend] use", "item 2 is empty"},
    {M "[backend]\nuse = cpu,\n", 5, "[backend] use", "item 2 is empty"},
    {M "[backend]\nuse =\n", 5, "[backend] use", "item 1 is empty"},
    {M "[backend]\nuse = berth-cpu.so\n", 5, "[backend] use", "'berth-cpu.so'"},
    {M "[backend]\nuse = cpu, vulkan, cpu\n", 5, "[backend] use", "'cpu' is listed twice"},
    {M "[backend]\npath = /a::/b\n", 5, "[backend] path", "directory 2 is empty"},
    {M "[backend]\npaths = /a\n", 5, "[backend]", "unknown key 'paths'"},
    {M "[backend]\nuse = cpu\nuse = vulkan\n", 6, "[backend] use", "duplicate key"},
    {M "[backend]\nuse = cpu\nsplit = maybe\n", 6, "[backend] split", "expected on, off or first, found 'maybe'"},
    {M "[backend]\nsplit = On\n", 5, "[backend] split", "found 'On'"},
    {M "[backend]\nsplit =\n", 5, "[backend] split", "found ''"},
    {M "[backend]\nsplit = on\nsplit = off\n", 6, "[backend] split", "duplicate key"},
    {M "[backend]\nverify = cpu, vulkan\n", 5, "[backend] verify", "one backend name or path, found 'cpu, vulkan'"},
    {M "[backend]\nverify =\n", 5, "[backend] verify", "found ''"},
    {M "[backend]\nverify_atol = -1\n", 5, "[backend] verify_atol", "a finite number >= 0, found '-1'"},
    {M "[backend]\nverify_rtol = 1e-3x\n", 5, "[backend] verify_rtol", "found '1e-3x'"},
    {M "[backend]\nverify_rtol = inf\n", 5, "[backend] verify_rtol", "found 'inf'"},
    {M "[backend]\nverify = cpu\nverify = cpu\n", 6, "[backend] verify", "duplicate key"},
    {M "[backend]\nverfy = cpu\n", 5, "[backend]", "unknown key 'verfy'"},
    {M "[backend.cpu]\nthreads = 4\nnuma = 1\nthreads = 8\n", 7, "[backend.cpu] threads",
     "first at line 5"},
    /* [buckets] */
    {M "[buckets]\ns = batch=x\n", 5, "[buckets] s", "'x'"},
    {M "[buckets]\ns = batch=0\n", 5, "batch", "positive integer"},
    {M "[buckets]\ns = batch=-3\n", 5, "batch", "'-3'"},
    {M "[buckets]\ns = batch=1099511627777\n", 5, "batch", "'1099511627777'"},
    {M "[buckets]\ns = batch=99999999999999999999999\n", 5, "batch", "at most 2^40"},
    {M "[buckets]\ns = batch=1 batch=2\n", 5, "[buckets] s", "binds 'batch' twice"},
    {M "[buckets]\ns = batch=1 width=2 | batch=2\n", 5, "bucket 2 does not bind 'width'", NULL},
    {M "[buckets]\ns = batch=1 | batch=2 width=3\n", 5, "bucket 2 binds 'width'",
     "bucket 1 does not"},
    {M "[buckets]\ns = batch=1 |\n", 5, "[buckets] s", "bucket 2 is empty"},
    {M "[buckets]\ns =\n", 5, "[buckets] s", "bucket 1 is empty"},
    {M "[buckets]\ns = batch = 1\n", 5, "[buckets] s", "'batch'"},
    {M "[buckets]\ns = =4\n", 5, "[buckets] s", "'=4'"},
    {M "[buckets]\ns = b=1 w=2 | w=3 b=1 | w=2 b=1\n", 5, "bucket 3 repeats bucket 1", NULL},
    {M "[buckets]\ns = b/x=1\n", 5, "dim name", "'b/x'"},
    {M "[buckets]\nmy stage = b=1\n", 5, "stage name", "'my stage'"},
    {M "[buckets]\ns = b=1\n\ns = b=2\n", 7, "[buckets] s", "duplicate key"},
    /* [inputs.NAME] */
    {M "[inputs.x]\npad = abc\n", 5, "[inputs.x] pad", "'abc'"},
    {M "[inputs.x]\npad = 1.5x\n", 5, "[inputs.x] pad", "'1.5x'"},
    {M "[inputs.x]\npad = nan\n", 5, "[inputs.x] pad", "finite"},
    {M "[inputs.x]\npad = -inf\n", 5, "[inputs.x] pad", "'-inf'"},
    {M "[inputs.x]\npad = 1e999\n", 5, "[inputs.x] pad", "'1e999'"},
    {M "[inputs.x]\npad =\n", 5, "[inputs.x] pad", "finite number"},
    {M "[inputs.x]\npadding = 1\n", 5, "[inputs.x]", "unknown key 'padding'"},
    /* [limits] */
    {M "[limits]\nmax_memory_mb = 0\n", 5, "[limits] max_memory_mb",
     "expected a positive whole number of MiB at most 2^40, found '0'"},
    {M "[limits]\nmax_memory_mb = -1\n", 5, "[limits] max_memory_mb", "found '-1'"},
    {M "[limits]\nmax_memory_mb = +5\n", 5, "[limits] max_memory_mb", "found '+5'"},
    {M "[limits]\nmax_memory_mb = 1.5\n", 5, "[limits] max_memory_mb", "found '1.5'"},
    {M "[limits]\nmax_memory_mb = 1e3\n", 5, "[limits] max_memory_mb", "found '1e3'"},
    {M "[limits]\nmax_memory_mb = 0x10\n", 5, "[limits] max_memory_mb", "found '0x10'"},
    {M "[limits]\nmax_memory_mb = 512 MiB\n", 5, "[limits] max_memory_mb", "found '512 MiB'"},
    {M "[limits]\nmax_memory_mb = lots\n", 5, "[limits] max_memory_mb", "found 'lots'"},
    {M "[limits]\nmax_memory_mb =\n", 5, "[limits] max_memory_mb", "found ''"},
    {M "[limits]\nmax_memory_mb = 1099511627777\n", 5, "[limits] max_memory_mb",
     "found '1099511627777'"},
    {M "[limits]\nmax_memory_mb = 99999999999999999999999\n", 5, "[limits] max_memory_mb",
     "found '99999999999999999999999'"},
    {M "[limits]\nmax_memory = 512\n", 5, "[limits]",
     "unknown key 'max_memory' (expected max_memory_mb)"},
    {M "[limits]\nmax_memory_mb = 512\nmax_memory_mb = 256\n", 6, "[limits] max_memory_mb",
     "duplicate key (first at line 5)"},
    {M "[limits]\n[limits]\n", 5, "duplicate section [limits]", "first at line 4"},
    {M "[limits.cpu]\nmax_memory_mb = 1\n", 4, "unknown section [limits.cpu]", "[limits], [serve] or [cache])"},
    {M "[cache]\ndir = c\nttl = 3\n", 6, "[cache]: unknown key 'ttl' (expected dir)", NULL},
    {M "[cache.cpu]\ndir = c\n", 4, "unknown section [cache.cpu]", NULL},
    {M "[cache]\ndir = a\ndir = b\n", 6, "[cache] dir", "duplicate key (first at line 5)"},
    {M "[cache]\ndir =\n", 5, "[cache] dir", NULL},
    /* [serve] */
    {M "[serve]\nmax_batch = 0\n", 5, "[serve] max_batch",
     "expected a positive whole number at most 2^40, found '0'"},
    {M "[serve]\nmax_delay_us = -5\n", 5, "[serve] max_delay_us", "found '-5'"},
    {M "[serve]\nmax_queue = 1e3\n", 5, "[serve] max_queue", "found '1e3'"},
    {M "[serve]\ntimeout_ms = 10 s\n", 5, "[serve] timeout_ms", "found '10 s'"},
    {M "[serve]\nworkers =\n", 5, "[serve] workers", "found ''"},
    {M "[serve]\nbatch = 8\n", 5, "[serve]",
     "unknown key 'batch' (expected max_batch, max_delay_us, max_queue, timeout_ms, workers, max_inflight_mb, "
     "drain_s, max_connections, max_connections_per_ip, header_timeout_s, idle_timeout_s, min_body_kbps or "
     "http_threads)"},
    {M "[serve]\ndrain_s = 0\n", 5, "[serve] drain_s", "found '0'"},
    {M "[serve]\nworkers = 2\nworkers = 3\n", 6, "[serve] workers", "duplicate key (first at line 5)"},
    /* syntax, and which error comes first */
    {M "[backend]\nuse cpu\n", 5, "expected 'key = value'", "'use cpu'"},
    {M "= x\n", 4, "[model]", "expected a key"},
    {M "[backend]\nuse = cpu\n      vulkan\n", 6, "expected 'key = value'", "'vulkan'"},
    {M "[backend]\nbroken\nuse = ,\n", 5, "'broken'", NULL},
    {M "[backend]\nuse = ,\nbroken\n", 5, "[backend] use", "item 1"},
    {"[model]\nweights = w.safetensors\nbroken line\n[lane.x]\ngraph = g\n", 1,
     "missing key 'graph'", NULL},
};

/* [model.NAME]: the open names a model (second column), or NULL. */
typedef struct model_case {
    const char *text;
    const char *model;
    unsigned line;
    const char *part1, *part2;
} model_case;

#define DET "[model.det]\ngraph = d.webnn\nweights = d.safetensors\n"
static const model_case MODEL_CASES[] = {
    {DET, NULL, 1, "the file describes the models det", "--model NAME"},
    {DET, "rec", 1, "no section [model.rec]", "the file's models: det"},
    {M, "det", 1, "no section [model.det]", "has no [model.NAME] sections"},
    {DET "[model.det]\n", "det", 4, "duplicate section [model.det]", "first at line 1"},
    {DET "[model.cls]\ngraph = c.webnn\n", "det", 4, "[model.cls]: missing key 'weights'", NULL},
    {DET "[model.cls]\ngraph = c.webnn\nweights = c.safetensors\nlayers = 3\n", "det", 7,
     "[model.cls]: unknown key 'layers'", "stage or use"},
    {DET "use = ,\n", "det", 4, "[model.det] use", "item 1 is empty"},
    {DET "[model.a/b]\n", "det", 4, "[model.a/b]", "NAME"},
    {M "use = cpu\n", NULL, 4, "[model]: unknown key 'use'", "manifest or stage"},
    {M "[model.x]\ngraph = x.webnn\nweights = x.safetensors\n[lane.enc]\ngraph = e.webnn\n", NULL, 7,
     "lanes run other graphs on [model]'s weights", NULL},
    {DET "stage = nope\n", "det", 4, "[model.det] stage: no stage 'nope'", NULL},
};

static void run_model_case(size_t i, const model_case *t) {
    berth_error err;
    berth_config *c = berth_config_parse_model("err/case.ini", t->text, t->model, &err);
    char where[64];
    snprintf(where, sizeof where, "err/case.ini:%u: ", t->line);
    if (c) {
        fprintf(stderr, "model case %zu: parsed, expected an error at line %u\n", i, t->line);
        berth_config_free(c);
        CHECK(c == NULL);
        return;
    }
    if (strncmp(err.msg, where, strlen(where)) != 0) fprintf(stderr, "model case %zu: got \"%s\"\n", i, err.msg);
    CHECK(strncmp(err.msg, where, strlen(where)) == 0);
    CHECK_CONTAINS(err.msg, t->part1);
    if (t->part2) CHECK_CONTAINS(err.msg, t->part2);
}

static void run_case(size_t i, const err_case *t) {
    berth_error err;
    memset(err.msg, 'Z', sizeof err.msg);
    err.msg[sizeof err.msg - 1] = '\0';
    berth_config *c = berth_config_parse("err/case.ini", t->text, &err);
    char where[64];
    snprintf(where, sizeof where, "err/case.ini:%u: ", t->line);
    if (c) {
        fprintf(stderr, "case %zu: parsed, expected an error at line %u\n", i, t->line);
        berth_config_free(c);
        CHECK(c == NULL);
        return;
    }
    int ok = strncmp(err.msg, where, strlen(where)) == 0 && strstr(err.msg, t->part1) &&
             (!t->part2 || strstr(err.msg, t->part2)) && !strchr(err.msg, '\n');
    if (!ok) fprintf(stderr, "case %zu: got \"%s\"\n", i, err.msg);
    CHECK(strncmp(err.msg, where, strlen(where)) == 0);
    CHECK_CONTAINS(err.msg, t->part1);
    if (t->part2) CHECK_CONTAINS(err.msg, t->part2);
    CHECK(strchr(err.msg, '\n') == NULL);
}

/* A line longer than inih's buffer is read whole (test_config_valid),
 * and what is wrong with it is reported as for a short line, with its
 * number: no '=' or ':' (also when a comment hides them), a duplicate
 * key, a bad value. */
static void test_long_line(void) {
    char value[1001];
    memset(value, 'v', 1000);
    value[1000] = '\0';
    char text[4096];
    berth_error err;
    berth_config *c;
    snprintf(text, sizeof text, "[model]\nweights = w.safetensors\n  graph %s\n", value);
    c = berth_config_parse("long.ini", text, &err);
    CHECK(c == NULL);
    berth_config_free(c);
    CHECK_CONTAINS(err.msg, "long.ini:3: expected 'key = value', '[section]' or a comment, found 'graph vvv");
    snprintf(text, sizeof text, "[model]\nweights = w.safetensors\ngraph ; %s = g\n", value);
    c = berth_config_parse("long.ini", text, &err);
    CHECK(c == NULL);
    berth_config_free(c);
    CHECK_CONTAINS(err.msg, "long.ini:3: expected 'key = value'");
    snprintf(text, sizeof text, "[model]\ngraph = %s\nweights = w.safetensors\ngraph: %s\n", value, value);
    c = berth_config_parse("long.ini", text, &err);
    CHECK(c == NULL);
    berth_config_free(c);
    CHECK_CONTAINS(err.msg, "long.ini:4: [model] graph: duplicate key (first at line 2)");
    snprintf(text, sizeof text, "[model]\ngraph = g\nweights = w.safetensors\n[limits]\nmax_memory_mb = 1%s\n",
             value);
    c = berth_config_parse("long.ini", text, &err);
    CHECK(c == NULL);
    berth_config_free(c);
    CHECK_CONTAINS(err.msg, "long.ini:5: [limits] max_memory_mb: ");
    CHECK(strlen(err.msg) < 400); /* the value is quoted in part */
}

static void test_null_args(void) {
    berth_error err;
    CHECK(berth_config_parse("n.ini", NULL, &err) == NULL);
    CHECK_CONTAINS(err.msg, "n.ini");
    /* a NULL error buffer is allowed */
    CHECK(berth_config_parse("n.ini", "[nope]\n", NULL) == NULL);
    berth_config *c = berth_config_parse(NULL, "[model]\ngraph = g\nweights = w.safetensors\n", &err);
    CHECK(c != NULL);
    if (c) CHECK(strcmp(c->dir, ".") == 0);
    berth_config_free(c);
    berth_config_free(NULL);
}

int main(void) {
    size_t n = sizeof CASES / sizeof CASES[0];
    CHECK(n >= 20);
    for (size_t i = 0; i < n; i++) run_case(i, &CASES[i]);
    for (size_t i = 0; i < sizeof MODEL_CASES / sizeof MODEL_CASES[0]; i++) run_model_case(i, &MODEL_CASES[i]);
    test_long_line();
    test_null_args();
    return check_exit();
}
