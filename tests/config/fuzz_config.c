/* libFuzzer target: berth_config_parse on arbitrary bytes must either
 * fail with a one-line "FILE:LINE: ..." message or return a config whose
 * invariants hold; ASan/UBSan catch the rest, LeakSanitizer the leaks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

static void require(int ok) {
    if (!ok) abort(); /* a broken invariant is a finding */
}

static void check_config(const berth_config *c) {
    require(c->n_lanes >= 1 && c->lanes[0].graph && c->weights);
    require(strcmp(c->lanes[0].name, "main") == 0);
    require(c->n_use >= 1);
    for (uint32_t i = 0; i < c->n_use; i++) require(c->use[i] && c->use[i][0]);
    for (uint32_t i = 0; i < c->n_lanes; i++)
        require(!c->lanes[i].stage || berth_config_stage(c, c->lanes[i].stage));
    for (uint32_t i = 0; i < c->n_stages; i++) {
        const bc_stage *s = &c->stages[i];
        require(s->n >= 1 && berth_config_stage(c, s->name) != NULL);
        for (uint32_t j = 0; j < s->n; j++) {
            require(s->buckets[j].n == s->buckets[0].n);
            for (uint32_t k = 0; k < s->buckets[j].n; k++) {
                const bc_bind *b = &s->buckets[j].binds[k];
                require(b->value >= 1 && b->value <= ((int64_t)1 << 40));
                require(strcmp(b->dim, s->buckets[0].binds[k].dim) == 0);
            }
        }
    }
    for (uint32_t i = 0; i < c->n_backends; i++)
        require(berth_config_backend(c, c->backends[i].name) != NULL);
    for (uint32_t i = 0; i < c->n_inputs; i++) {
        double pad = berth_config_pad(c, c->inputs[i].name);
        require(pad - pad == 0.0); /* finite */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* inputs are not NUL-terminated; the parser takes a C string */
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    berth_error err;
    berth_config *c = berth_config_parse("fuzz/dir/f.ini", text, &err);
    if (c) {
        check_config(c);
        berth_config_free(c);
    } else {
        require(strncmp(err.msg, "fuzz/dir/f.ini:", 15) == 0);
        require(strchr(err.msg, '\n') == NULL);
    }
    free(text);
    return 0;
}
