/* Valid configs: every field of a full file, defaults, path resolution,
 * the lookups, and the syntax inih allows (comments, BOM, CRLF,
 * indentation, "key: value"). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"

/* 1-based line of the first line of text containing needle (0: none). */
static unsigned line_of(const char *text, const char *needle) {
    const char *hit = strstr(text, needle);
    if (!hit) return 0;
    unsigned line = 1;
    for (const char *p = text; p < hit; p++) line += *p == '\n';
    return line;
}

static int streq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

static berth_config *parse_ok(const char *path, const char *text) {
    berth_error err = {{0}};
    berth_config *c = berth_config_parse(path, text, &err);
    if (!c) fprintf(stderr, "unexpected failure: %s\n", err.msg);
    CHECK(c != NULL);
    return c;
}

static const char FULL[] =
    "; a deployment with every section\n"
    "[model]\n"
    "graph = model.webnn\n"
    "weights = /abs/weights.bin\n"
    "manifest = ../shared/weights.json\n"
    "stage = ocr\n"
    "\n"
    "[lane.encoder]\n"
    "graph = enc/encoder.webnn\n"
    "stage = small\n"
    "\n"
    "[lane.head]\n"
    "graph = /opt/head.webnn\n"
    "\n"
    "[backend]\n"
    "use = vulkan, ./mods/libberth-x.so ,cpu\n"
    "path = mods:/usr/lib/berth: extra \n"
    "split = off\n"
    "verify = ./mods/libberth-ref.so\n"
    "verify_atol = 0\n"
    "verify_rtol = 2.5e-4\n"
    "\n"
    "[backend.vulkan]\n"
    "device = 1\n"
    "fp16 = on\n"
    "empty =\n"
    "\n"
    "[backend.cpu]\n"
    "threads: 4\n"
    "\n"
    "[buckets]\n"
    "ocr = batch=1 width=320 | width=640 batch=8\n"
    "small = seq=16\n"
    "big = n=1099511627776\n"
    "\n"
    "[inputs.pixel_values]\n"
    "pad = -1.5\n"
    "\n"
    "[inputs.input.1]\n"
    "pad = 2e3\n"
    "\n"
    "[limits]\n"
    "max_memory_mb = 1024 ; one GiB\n"
    "[serve]\n"
    "max_batch = 16\n"
    "max_delay_us = 2500\n"
    "max_queue = 64\n"
    "timeout_ms = 1000\n"
    "workers = 2\n"
    "max_inflight_mb = 96\n"
    "drain_s = 7\n";

static void test_full(void) {
    berth_config *c = parse_ok("deploy/site/full.ini", FULL);
    if (!c) return;
    CHECK(streq(c->path, "deploy/site/full.ini"));
    CHECK(streq(c->dir, "deploy/site"));
    CHECK(streq(c->weights, "/abs/weights.bin"));
    CHECK(streq(c->manifest, "deploy/site/../shared/weights.json"));

    CHECK(c->n_lanes == 3);
    if (c->n_lanes == 3) {
        CHECK(streq(c->lanes[0].name, "main"));
        CHECK(streq(c->lanes[0].graph, "deploy/site/model.webnn"));
        CHECK(streq(c->lanes[0].stage, "ocr"));
        CHECK(c->lanes[0].line == line_of(FULL, "[model]"));
        CHECK(streq(c->lanes[1].name, "encoder"));
        CHECK(streq(c->lanes[1].graph, "deploy/site/enc/encoder.webnn"));
        CHECK(streq(c->lanes[1].stage, "small"));
        CHECK(c->lanes[1].line == line_of(FULL, "[lane.encoder]"));
        CHECK(streq(c->lanes[2].name, "head"));
        CHECK(streq(c->lanes[2].graph, "/opt/head.webnn"));
        CHECK(c->lanes[2].stage == NULL);
        CHECK(c->lanes[2].line == line_of(FULL, "[lane.head]"));
    }

    CHECK(c->split == 0 && c->split_line == line_of(FULL, "split ="));
    /* a verify path resolves against the config's directory, like use */
    CHECK(streq(c->verify, "deploy/site/./mods/libberth-ref.so"));
    CHECK(c->verify_atol == 0 && c->verify_rtol == 2.5e-4);
    CHECK(c->n_use == 3);
    if (c->n_use == 3) {
        CHECK(streq(c->use[0], "vulkan"));
        CHECK(streq(c->use[1], "deploy/site/./mods/libberth-x.so"));
        CHECK(streq(c->use[2], "cpu"));
    }
    CHECK(c->n_path == 3);
    if (c->n_path == 3) {
        CHECK(streq(c->path_dirs[0], "deploy/site/mods"));
        CHECK(streq(c->path_dirs[1], "/usr/lib/berth"));
        CHECK(streq(c->path_dirs[2], "deploy/site/extra"));
    }

    CHECK(c->n_backends == 2);
    const bc_backend_opts *vk = berth_config_backend(c, "vulkan");
    CHECK(vk != NULL);
    if (vk) {
        CHECK(vk->line == line_of(FULL, "[backend.vulkan]"));
        CHECK(vk->n == 3);
        if (vk->n == 3) {
            CHECK(streq(vk->kv[0].key, "device") && streq(vk->kv[0].value, "1"));
            CHECK(vk->kv[0].line == line_of(FULL, "device = 1"));
            CHECK(streq(vk->kv[1].key, "fp16") && streq(vk->kv[1].value, "on"));
            CHECK(vk->kv[1].line == line_of(FULL, "fp16"));
            CHECK(streq(vk->kv[2].key, "empty") && streq(vk->kv[2].value, ""));
            CHECK(vk->kv[2].line == line_of(FULL, "empty ="));
        }
    }
    const bc_backend_opts *cpu = berth_config_backend(c, "cpu");
    CHECK(cpu != NULL && cpu->n == 1);
    if (cpu && cpu->n == 1) {
        CHECK(streq(cpu->kv[0].key, "threads") && streq(cpu->kv[0].value, "4"));
        CHECK(cpu->kv[0].line == line_of(FULL, "threads"));
    }
    CHECK(berth_config_backend(c, "metal") == NULL);
    CHECK(berth_config_backend(c, NULL) == NULL);

    CHECK(c->n_stages == 3);
    const bc_stage *ocr = berth_config_stage(c, "ocr");
    CHECK(ocr != NULL);
    CHECK(berth_config_stage(c, NULL) == ocr);
    if (ocr) {
        CHECK(ocr->line == line_of(FULL, "ocr = "));
        CHECK(ocr->n == 2);
        if (ocr->n == 2) {
            CHECK(ocr->buckets[0].n == 2 && ocr->buckets[1].n == 2);
            CHECK(streq(ocr->buckets[0].binds[0].dim, "batch"));
            CHECK(ocr->buckets[0].binds[0].value == 1);
            CHECK(streq(ocr->buckets[0].binds[1].dim, "width"));
            CHECK(ocr->buckets[0].binds[1].value == 320);
            /* written "width=640 batch=8": reordered to the first bucket's order */
            CHECK(streq(ocr->buckets[1].binds[0].dim, "batch"));
            CHECK(ocr->buckets[1].binds[0].value == 8);
            CHECK(streq(ocr->buckets[1].binds[1].dim, "width"));
            CHECK(ocr->buckets[1].binds[1].value == 640);
        }
    }
    const bc_stage *small = berth_config_stage(c, "small");
    CHECK(small != NULL && small->n == 1 && small->buckets[0].n == 1);
    if (small && small->n == 1 && small->buckets[0].n == 1) {
        CHECK(streq(small->buckets[0].binds[0].dim, "seq"));
        CHECK(small->buckets[0].binds[0].value == 16);
    }
    const bc_stage *big = berth_config_stage(c, "big");
    CHECK(big != NULL && big->n == 1 && big->buckets[0].n == 1);
    if (big && big->n == 1 && big->buckets[0].n == 1)
        CHECK(big->buckets[0].binds[0].value == ((int64_t)1 << 40));
    CHECK(berth_config_stage(c, "nope") == NULL);

    CHECK(c->n_inputs == 2);
    if (c->n_inputs == 2) {
        CHECK(streq(c->inputs[0].name, "pixel_values"));
        CHECK(c->inputs[0].line == line_of(FULL, "[inputs.pixel_values]"));
        CHECK(streq(c->inputs[1].name, "input.1"));
    }
    CHECK_NEAR(berth_config_pad(c, "pixel_values"), -1.5, 0);
    CHECK_NEAR(berth_config_pad(c, "input.1"), 2000.0, 0);
    CHECK_NEAR(berth_config_pad(c, "absent"), 0.0, 0);
    CHECK_NEAR(berth_config_pad(c, NULL), 0.0, 0);
    CHECK(c->max_memory_mb == 1024);
    CHECK(c->max_memory_line == line_of(FULL, "max_memory_mb"));
    CHECK(c->serve_max_batch == 16 && c->serve_max_delay_us == 2500 && c->serve_max_queue == 64);
    CHECK(c->serve_timeout_ms == 1000 && c->serve_workers == 2);
    CHECK(c->serve_server[BERTH_SERVE_MAX_INFLIGHT_MB] == 96 && c->serve_server[BERTH_SERVE_DRAIN_S] == 7);
    CHECK(c->serve_server[BERTH_SERVE_HTTP_THREADS] == 0);
    berth_config_free(c);
}

/* The least file: defaults everywhere. */
static void test_defaults(void) {
    berth_config *c = parse_ok("a.ini", "[model]\ngraph = m.webnn\nweights = m.safetensors\n");
    if (!c) return;
    CHECK(streq(c->dir, "."));
    CHECK(streq(c->lanes[0].graph, "./m.webnn"));
    CHECK(streq(c->weights, "./m.safetensors"));
    CHECK(c->manifest == NULL);
    CHECK(c->n_lanes == 1 && c->lanes[0].stage == NULL);
    CHECK(c->n_use == 1 && streq(c->use[0], "cpu"));
    CHECK(c->n_path == 0 && c->n_backends == 0 && c->n_stages == 0 && c->n_inputs == 0);
    CHECK(berth_config_stage(c, NULL) == NULL);
    CHECK(berth_config_backend(c, "cpu") == NULL);
    CHECK_NEAR(berth_config_pad(c, "x"), 0.0, 0);
    /* no [limits]: the executor applies its default */
    CHECK(c->max_memory_mb == 0 && c->max_memory_line == 0);
    /* no split: off */
    CHECK(c->split == 0 && c->split_line == 0);
    /* no verify: none, and the default tolerance */
    CHECK(c->verify == NULL && c->verify_atol == BERTH_VERIFY_DEFAULT_TOL && c->verify_rtol == BERTH_VERIFY_DEFAULT_TOL);
    berth_config_free(c);

    c = parse_ok("a.ini", "[model]\ngraph = m.webnn\nweights = m.safetensors\n"
                          "[backend]\nuse = cpu\nsplit = on\n");
    if (!c) return;
    CHECK(c->split == BERTH_SPLIT_ON && c->split_line == 6);
    berth_config_free(c);

    c = parse_ok("a.ini", "[model]\ngraph = m.webnn\nweights = m.safetensors\n"
                          "[backend]\nuse = cpu\nsplit = first\n");
    if (!c) return;
    CHECK(c->split == BERTH_SPLIT_FIRST && c->split_line == 6);
    berth_config_free(c);

    /* [backend] without use still means cpu; empty sections are fine. */
    c = parse_ok("a.ini", "[backend]\npath = /m\n[backend.cpu]\n[inputs.x]\n"
                          "[model]\ngraph = m.webnn\nweights = m.SafeTensors\n");
    if (!c) return;
    CHECK(c->n_use == 1 && streq(c->use[0], "cpu"));
    CHECK(c->n_path == 1 && streq(c->path_dirs[0], "/m"));
    const bc_backend_opts *b = berth_config_backend(c, "cpu");
    CHECK(b != NULL && b->n == 0 && b->line == 3);
    CHECK(c->n_inputs == 1);
    CHECK_NEAR(berth_config_pad(c, "x"), 0.0, 0);
    CHECK(c->lanes[0].line == 5);
    berth_config_free(c);

    /* an empty [limits] keeps the default; the largest value and leading
     * zeros are accepted */
    c = parse_ok("a.ini", "[limits]\n[model]\ngraph = m.webnn\nweights = m.safetensors\n");
    if (c) CHECK(c->max_memory_mb == 0);
    berth_config_free(c);
    c = parse_ok("a.ini", "[model]\ngraph = m.webnn\nweights = m.safetensors\n"
                          "[limits]\nmax_memory_mb = 1099511627776\n");
    if (c) CHECK(c->max_memory_mb == ((uint64_t)1 << 40) && c->max_memory_line == 5);
    berth_config_free(c);
    c = parse_ok("a.ini", "[model]\ngraph = m.webnn\nweights = m.safetensors\n"
                          "[limits]\nmax_memory_mb: 0064\n");
    if (c) CHECK(c->max_memory_mb == 64);
    berth_config_free(c);
}

static void test_paths(void) {
    static const char text[] = "[model]\ngraph = g/m.webnn\nweights = /w/m.safetensors\n"
                               "[lane.b]\ngraph = ../b.webnn\n"
                               "[backend]\nuse = cpu, lib/x.so, /abs/y.so\npath = /p:q\n";
    berth_config *c = parse_ok("/etc/berth/x.ini", text);
    if (c) {
        CHECK(streq(c->dir, "/etc/berth"));
        CHECK(streq(c->lanes[0].graph, "/etc/berth/g/m.webnn"));
        CHECK(streq(c->weights, "/w/m.safetensors"));
        CHECK(streq(c->lanes[1].graph, "/etc/berth/../b.webnn"));
        CHECK(c->n_use == 3);
        if (c->n_use == 3) {
            CHECK(streq(c->use[0], "cpu"));
            CHECK(streq(c->use[1], "/etc/berth/lib/x.so"));
            CHECK(streq(c->use[2], "/abs/y.so"));
        }
        CHECK(c->n_path == 2 && streq(c->path_dirs[0], "/p") && streq(c->path_dirs[1], "/etc/berth/q"));
        berth_config_free(c);
    }
    c = parse_ok("/x.ini", text);
    if (c) {
        CHECK(streq(c->dir, "/"));
        CHECK(streq(c->lanes[0].graph, "/g/m.webnn"));
        berth_config_free(c);
    }
    c = parse_ok("rel/dir/x.ini", text);
    if (c) {
        CHECK(streq(c->lanes[0].graph, "rel/dir/g/m.webnn"));
        CHECK(streq(c->use[1], "rel/dir/lib/x.so"));
        berth_config_free(c);
    }
}

/* What inih's syntax allows, as berth documents it. */
static void test_syntax(void) {
    static const char text[] = "\xEF\xBB\xBF# hash comment\r\n"
                               "  [model]   ; trailing comment\r\n"
                               "\tgraph = m.webnn ; the graph\r\n"
                               "    weights: w.bin\r\n"
                               "manifest=w.json\r\n"
                               "; semicolon comment\r\n"
                               "[ backend ]\n"
                               "use = metal , cpu ; comment\n"
                               "[backend.cpu]\n"
                               "opt = a;b # c\n"
                               "key with space = x=y\n";
    berth_config *c = parse_ok("s.ini", text);
    if (!c) return;
    CHECK(streq(c->lanes[0].graph, "./m.webnn"));
    CHECK(c->lanes[0].line == 2);
    CHECK(streq(c->weights, "./w.bin"));
    CHECK(streq(c->manifest, "./w.json"));
    CHECK(c->n_use == 2 && streq(c->use[0], "metal") && streq(c->use[1], "cpu"));
    const bc_backend_opts *b = berth_config_backend(c, "cpu");
    CHECK(b != NULL && b->n == 2);
    if (b && b->n == 2) {
        /* ';' starts a comment only after whitespace; '#' only at a line start */
        CHECK(streq(b->kv[0].value, "a;b # c"));
        CHECK(b->kv[0].line == 10);
        CHECK(streq(b->kv[1].key, "key with space") && streq(b->kv[1].value, "x=y"));
        CHECK(b->kv[1].line == 11);
    }
    berth_config_free(c);
}

/* Section names longer than inih's 49-byte section buffer are kept whole,
 * and a line of exactly 199 characters is accepted. */
static void test_limits(void) {
    char name[81];
    memset(name, 'n', 80);
    name[80] = '\0';
    char text[1024];
    snprintf(text, sizeof text, "[model]\ngraph = m.webnn\nweights = w.safetensors\n[backend.%s]\nk = v\n",
             name);
    berth_config *c = parse_ok("l.ini", text);
    if (c) {
        CHECK(c->n_backends == 1 && streq(c->backends[0].name, name));
        CHECK(berth_config_backend(c, name) != NULL);
        berth_config_free(c);
    }
    /* "graph = " + 191 characters = 199 */
    char longest[200];
    memset(longest, 'g', sizeof longest);
    memcpy(longest, "graph = ", 8);
    longest[199] = '\0';
    CHECK(strlen(longest) == 199);
    snprintf(text, sizeof text, "[model]\n   %s\nweights = w.safetensors\n", longest);
    c = parse_ok("l.ini", text);
    if (c) {
        CHECK(strlen(c->lanes[0].graph) == 2 + 191);
        berth_config_free(c);
    }
}

/* printf into a fresh buffer (NULL if out of memory). */
static char *fmt(const char *f, ...) {
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(NULL, 0, f, ap);
    va_end(ap);
    char *s = n < 0 ? NULL : malloc((size_t)n + 1);
    if (!s) return NULL;
    va_start(ap, f);
    vsnprintf(s, (size_t)n + 1, f, ap);
    va_end(ap);
    return s;
}

/* n copies of ch, then '\0'. */
static char *run_of(char ch, size_t n) {
    char *s = malloc(n + 1);
    if (!s) return NULL;
    memset(s, ch, n);
    s[n] = '\0';
    return s;
}

/* Lines longer than inih's 200-byte buffer read whole, split into key
 * and value exactly as inih splits a short line: trimmed, with a ';'
 * after whitespace starting a comment, '=' or ':' ending the key. */
static void test_long_lines(void) {
    char *path = run_of('p', 5000), *note = run_of('c', 5000), *key = run_of('k', 300),
         *sec = run_of('n', 300);
    CHECK(path && note && key && sec);
    if (!path || !note || !key || !sec) return;
    path[0] = '/';
    memcpy(path + 4990, "/m.webnn\0", 9); /* 4998 characters */
    char *text = fmt("# %s\n"
                     "[model]\n"
                     "   graph = %s   \r\n"
                     "weights = w.safetensors\n"
                     "; %s\n"
                     "[backend.cpu]\n"
                     "module = %s ; a comment\n"
                     "plain: %s\n"
                     "semi = a;%s\n"
                     "short = v ; %s\n"
                     "%s = key\n"
                     "tail = %s ;\n"
                     "[backend.%s] ; %s\n"
                     "k = v\n",
                     note, path, note, path, path, path, note, key, path, sec, note);
    CHECK(text != NULL);
    berth_config *c = text ? parse_ok("l.ini", text) : NULL;
    if (c) {
        CHECK(streq(c->lanes[0].graph, path));
        CHECK(c->lanes[0].line == 2);
        CHECK(streq(c->weights, "./w.safetensors"));
        const bc_backend_opts *b = berth_config_backend(c, "cpu");
        CHECK(b && b->n == 6);
        if (b && b->n == 6) {
            CHECK(streq(b->kv[0].key, "module") && streq(b->kv[0].value, path));
            CHECK(b->kv[0].line == 7);
            CHECK(streq(b->kv[1].key, "plain") && streq(b->kv[1].value, path));
            CHECK(strncmp(b->kv[2].value, "a;/ppp", 6) == 0 && strlen(b->kv[2].value) == 5000);
            CHECK(streq(b->kv[3].key, "short") && streq(b->kv[3].value, "v"));
            CHECK(streq(b->kv[4].key, key) && streq(b->kv[4].value, "key"));
            CHECK(streq(b->kv[5].value, path) && b->kv[5].line == 12);
        }
        const bc_backend_opts *n = berth_config_backend(c, sec);
        CHECK(n && n->n == 1 && n->line == 13 && streq(n->kv[0].value, "v") && n->kv[0].line == 14);
        berth_config_free(c);
    }
    free(text);
    /* a real control byte, the stand-in's, is read as it is: a short line
     * after a long one is not taken for the long one */
    text = fmt("[model]\ngraph = %s\nweights = w.safetensors\n[backend.x]\n\x01 = \x01\n", path);
    c = text ? parse_ok("l.ini", text) : NULL;
    if (c) {
        CHECK(streq(c->lanes[0].graph, path));
        CHECK(c->n_backends == 1 && c->backends[0].n == 1 &&
              streq(c->backends[0].kv[0].key, "\x01") && streq(c->backends[0].kv[0].value, "\x01"));
        berth_config_free(c);
    }
    free(text);
    free(path);
    free(note);
    free(key);
    free(sec);
}

/* The long-line split against inih's: random lines over the characters
 * that matter to it, each read short (inih splits it) and made long by
 * spaces before its first '=' or ':' (berth splits it), which changes
 * nothing inih would see. Both must succeed or fail alike, with the same
 * key and value. */
static void test_long_split_matches_inih(void) {
    static const char alphabet[] = "ab =:;#\t";
    uint32_t rng = 12345;
    char pad[301];
    memset(pad, ' ', 300);
    pad[300] = '\0';
    for (int round = 0; round < 20000; round++) {
        char line[24];
        size_t n = 1 + round % 20;
        for (size_t i = 0; i < n; i++) {
            rng = rng * 1103515245u + 12345u;
            line[i] = alphabet[(rng >> 16) % (sizeof alphabet - 1)];
        }
        line[n] = '\0';
        size_t at = strcspn(line, "=:");
        char *short_text = fmt("[backend.x]\n%s\n", line);
        char *long_text = fmt("[backend.x]\n%.*s%s%s\n", (int)at, line, pad, line + at);
        CHECK(short_text && long_text);
        if (!short_text || !long_text) break;
        berth_error e1, e2;
        berth_config *a = berth_config_parse("r.ini", short_text, &e1);
        berth_config *b = berth_config_parse("r.ini", long_text, &e2);
        /* no [model]: a good line fails only at the end, on line 2 */
        const char *end = "missing section [model]";
        int ok1 = !a && strstr(e1.msg, end) != NULL, ok2 = !b && strstr(e2.msg, end) != NULL;
        CHECK(ok1 == ok2);
        if (ok1 != ok2) fprintf(stderr, "line '%s': short: %s\nlong: %s\n", line, e1.msg, e2.msg);
        berth_config_free(a);
        berth_config_free(b);
        if (ok1) { /* read the pair back under a [model] */
            char *s2 = fmt("[model]\ngraph = g\nweights = w.safetensors\n%s", short_text);
            char *l2 = fmt("[model]\ngraph = g\nweights = w.safetensors\n%s", long_text);
            a = s2 ? berth_config_parse("r.ini", s2, &e1) : NULL;
            b = l2 ? berth_config_parse("r.ini", l2, &e2) : NULL;
            CHECK(a && b);
            if (a && b) {
                const bc_backend_opts *x = berth_config_backend(a, "x"), *y = berth_config_backend(b, "x");
                CHECK(x && y && x->n == y->n);
                if (x && y && x->n == y->n && x->n == 1) {
                    CHECK(streq(x->kv[0].key, y->kv[0].key) && streq(x->kv[0].value, y->kv[0].value));
                    if (!streq(x->kv[0].key, y->kv[0].key) || !streq(x->kv[0].value, y->kv[0].value))
                        fprintf(stderr, "line '%s': short '%s'='%s', long '%s'='%s'\n", line,
                                x->kv[0].key, x->kv[0].value, y->kv[0].key, y->kv[0].value);
                }
            }
            berth_config_free(a);
            berth_config_free(b);
            free(s2);
            free(l2);
        } else {
            /* the same error on the same line, the quoted line aside */
            CHECK(strncmp(e1.msg, e2.msg, 12) == 0);
        }
        free(short_text);
        free(long_text);
    }
}

/* Lanes and [buckets] may come in any order; stage references resolve at
 * the end. */
static void test_order(void) {
    static const char text[] = "[lane.enc]\nstage = s2\ngraph = e.webnn\n"
                               "[buckets]\ns1 = b=1 | b=2 | b=4\ns2 = b=1 t=8 | t=16 b=1\n"
                               "[model]\nstage = s1\ngraph = m.webnn\nweights = w.safetensors\n";
    berth_config *c = parse_ok("o.ini", text);
    if (!c) return;
    CHECK(c->n_lanes == 2);
    CHECK(streq(c->lanes[0].name, "main") && streq(c->lanes[0].stage, "s1"));
    CHECK(c->lanes[0].line == line_of(text, "[model]"));
    CHECK(streq(c->lanes[1].name, "enc") && streq(c->lanes[1].stage, "s2"));
    const bc_stage *s1 = berth_config_stage(c, "s1");
    CHECK(s1 != NULL && s1->n == 3);
    if (s1 && s1->n == 3) {
        CHECK(s1->buckets[0].binds[0].value == 1);
        CHECK(s1->buckets[1].binds[0].value == 2);
        CHECK(s1->buckets[2].binds[0].value == 4);
    }
    const bc_stage *s2 = berth_config_stage(c, "s2");
    CHECK(s2 != NULL && s2->n == 2);
    if (s2 && s2->n == 2) {
        CHECK(streq(s2->buckets[1].binds[0].dim, "b") && s2->buckets[1].binds[0].value == 1);
        CHECK(streq(s2->buckets[1].binds[1].dim, "t") && s2->buckets[1].binds[1].value == 16);
    }
    CHECK(berth_config_stage(c, NULL) == berth_config_stage(c, "s1"));
    berth_config_free(c);
}

/* A pipeline: [model.NAME] sections sharing [backend] and [buckets]; the
 * open names its model, whose keys become the model's and whose use
 * replaces [backend] use; the others are only checked. */
#define PIPELINE                                                          \
    "[backend]\nuse = vulkan, cpu\n"                                      \
    "[model.det]\ngraph = det.webnn\nweights = det.safetensors\nstage = pages\n" \
    "[model.cls]\ngraph = cls.webnn\nweights = cls.safetensors\nstage = crops\nuse = cpu\n" \
    "[buckets]\npages = h=640 w=640\ncrops = batch=8\n"

static void test_models(void) {
    berth_error err;
    berth_config *c = berth_config_parse_model("p/ocr.ini", PIPELINE, "det", &err);
    CHECK(c != NULL);
    if (c) {
        CHECK(streq(c->model, "det"));
        CHECK(c->n_models == 2 && streq(c->models[0], "det") && streq(c->models[1], "cls"));
        CHECK(streq(c->lanes[0].graph, "p/det.webnn") && streq(c->weights, "p/det.safetensors"));
        CHECK(streq(c->lanes[0].stage, "pages") && c->lanes[0].line == 3);
        CHECK(c->n_use == 2 && streq(c->use[0], "vulkan") && streq(c->use[1], "cpu"));
        berth_config_free(c);
    }
    c = berth_config_parse_model("p/ocr.ini", PIPELINE, "cls", &err);
    CHECK(c != NULL);
    if (c) {
        CHECK(streq(c->lanes[0].graph, "p/cls.webnn") && streq(c->lanes[0].stage, "crops"));
        CHECK(c->n_use == 1 && streq(c->use[0], "cpu")); /* its own use */
        berth_config_free(c);
    }
    /* [model] beside named ones: opened without a name, set aside with one */
    const char *both = "[model]\ngraph = m.webnn\nweights = m.safetensors\n"
                       "[model.small]\ngraph = s.webnn\nweights = s.safetensors\n";
    c = berth_config_parse_model("a.ini", both, NULL, &err);
    CHECK(c && c->model == NULL && streq(c->lanes[0].graph, "./m.webnn") && c->n_models == 1);
    berth_config_free(c);
    c = berth_config_parse_model("a.ini", both, "small", &err);
    CHECK(c && streq(c->model, "small") && streq(c->lanes[0].graph, "./s.webnn"));
    berth_config_free(c);
    /* "": the first named model, for tools that list them all */
    c = berth_config_parse_model("p/ocr.ini", PIPELINE, "", &err);
    CHECK(c && streq(c->model, "det") && c->n_models == 2 && streq(c->models[1], "cls"));
    berth_config_free(c);
}

int main(void) {
    test_models();
    test_full();
    test_defaults();
    test_paths();
    test_syntax();
    test_limits();
    test_long_lines();
    test_long_split_matches_inih();
    test_order();
    return check_exit();
}
