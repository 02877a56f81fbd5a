/* Reading the zoo's manifest: see zoo_manifest.h. */
#include <stdlib.h>
#include <string.h>

#include "zoo_manifest.h"

static char *dup_trim(const char *s, size_t n) {
    while (n && (*s == ' ' || *s == '\t')) s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r')) n--;
    char *d = malloc(n + 1);
    if (d) memcpy(d, s, n), d[n] = 0;
    return d;
}

void berth_zoo_manifest_free(zoo_model *ms, int n) {
    for (int i = 0; ms && i < n; i++) {
        zoo_model *m = &ms[i];
        free(m->what), free(m->source), free(m->refused), free(m->config), free(m->inputs), free(m->wants);
    }
    free(ms);
}

/* Where key's value goes in m, or NULL for a key with no string slot. */
static char **slot_of(zoo_model *m, const char *key) {
    if (!strcmp(key, "what")) return &m->what;
    if (!strcmp(key, "source")) return &m->source;
    if (!strcmp(key, "refused")) return &m->refused;
    if (!strcmp(key, "config")) return &m->config;
    if (!strcmp(key, "inputs")) return &m->inputs;
    if (!strcmp(key, "wants")) return &m->wants;
    return NULL;
}

/* One line inside the file; 0, or -1 with why set. */
static int take_line(char *s, size_t len, const char *name, int line_no, zoo_model **ms, int *n, char *why,
                     size_t cap) {
    while (len && (*s == ' ' || *s == '\t')) s++, len--;
    while (len && (s[len - 1] == '\n' || s[len - 1] == '\r')) len--;
    if (!len || *s == '#' || *s == ';') return 0;
    int shown = len > 80 ? 80 : (int)len; /* the line as messages quote it */
    if (*s == '[') {
        char *end = memchr(s, ']', len);
        size_t nlen = end ? (size_t)(end - s) - 7 : 0;
        if (!end || len < 8 || strncmp(s, "[model.", 7) || nlen < 1 || nlen >= sizeof(*ms)->name)
            return snprintf(why, cap, "%s:%d: expected [model.NAME] (a name of 1 to %zu bytes), found %.*s", name,
                            line_no, sizeof(*ms)->name - 1, shown, s), -1;
        zoo_model *g = realloc(*ms, sizeof **ms * (size_t)(*n + 1));
        if (!g) return snprintf(why, cap, "%s: out of memory", name), -1;
        *ms = g;
        memset(&g[*n], 0, sizeof g[*n]);
        memcpy(g[*n].name, s + 7, nlen);
        (*n)++;
        return 0;
    }
    char *eq = memchr(s, '=', len);
    if (!eq || !*n)
        return snprintf(why, cap, "%s:%d: expected KEY = VALUE inside a [model.NAME] section, found %.*s", name,
                        line_no, shown, s), -1;
    zoo_model *m = &(*ms)[*n - 1];
    char *key = dup_trim(s, (size_t)(eq - s)), *val = dup_trim(eq + 1, len - (size_t)(eq - s) - 1);
    int rc = 0;
    char **slot = key ? slot_of(m, key) : NULL;
    if (!key || !val) {
        snprintf(why, cap, "%s: out of memory", name);
        rc = -1;
    } else if (slot) {
        free(*slot);
        *slot = val;
        val = NULL;
    } else if (!strcmp(key, "atol") || !strcmp(key, "rtol")) {
        char *e;
        double v = strtod(val, &e);
        if (e == val || *e || !(v >= 0) || v > 1e30) {
            snprintf(why, cap, "%s:%d: %s: expected a number >= 0, found '%.80s'", name, line_no, key, val);
            rc = -1;
        } else {
            *(key[0] == 'a' ? &m->atol : &m->rtol) = v;
        }
    } else {
        snprintf(why, cap, "%s:%d: unknown key '%.80s' (what, source, refused, config, inputs, wants, atol, rtol)",
                 name, line_no, key);
        rc = -1;
    }
    free(key), free(val);
    return rc;
}

int berth_zoo_manifest_parse(FILE *f, const char *name, zoo_model **out, char *why, size_t cap) {
    zoo_model *ms = NULL;
    int n = 0, line_no = 0, bad = 0;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    while (!bad && (len = getline(&line, &lcap, f)) > 0) {
        line_no++;
        if (memchr(line, 0, (size_t)len)) {
            snprintf(why, cap, "%s:%d: a NUL byte: not a manifest", name, line_no);
            bad = 1;
        } else {
            bad = take_line(line, (size_t)len, name, line_no, &ms, &n, why, cap) != 0;
        }
    }
    free(line);
    for (int i = 0; i < n && !bad; i++)
        if (!ms[i].refused && (!ms[i].config || !ms[i].inputs || !ms[i].wants)) {
            snprintf(why, cap, "%s: model %s has neither 'refused' nor all of config, inputs and wants", name,
                     ms[i].name);
            bad = 1;
        }
    if (bad) {
        berth_zoo_manifest_free(ms, n);
        return -1;
    }
    *out = ms;
    return n;
}

int berth_zoo_manifest_read(const char *path, zoo_model **out, char *why, size_t cap) {
    FILE *f = fopen(path, "r");
    if (!f)
        return snprintf(why, cap, "%s: cannot open (make it with tests/models/zoo_prepare.py --out DIR)", path), -1;
    int n = berth_zoo_manifest_parse(f, path, out, why, cap);
    fclose(f);
    return n;
}
