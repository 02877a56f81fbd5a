/* The two headers the Metal layer compiles in, checked against each
 * other on every machine: every kernel of the binding table has its MSL
 * embedded, with the table's entry point, a [[buffer(N)]] parameter for
 * each buffer index the layer binds (operand slots and push constants)
 * and a [[function_constant(N)]] for each specialization constant; no
 * index reaches Metal's 31 buffers; every embedded source is in the
 * table. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "msl_kernels.h"
#include "msl_sources.h"

static const msl_source *source_of(const char *name) {
    for (size_t i = 0; i < MSL_SOURCE_COUNT; i++)
        if (!strcmp(msl_sources[i].name, name)) return &msl_sources[i];
    return NULL;
}

/* The entry point's parameter list: from "kernel void ENTRY(" to the
 * line that opens its body (parameters hold parentheses of their own). */
static int entry_params(const char *text, const char *entry, const char **begin, const char **end) {
    char head[96];
    snprintf(head, sizeof head, "kernel void %s(", entry);
    const char *at = strstr(text, head);
    if (!at) return 0;
    *begin = at + strlen(head);
    *end = strstr(*begin, ")\n{");
    return *end != NULL;
}

static int has_buffer(const char *begin, const char *end, int index) {
    char tag[32];
    snprintf(tag, sizeof tag, "[[buffer(%d)]]", index);
    const char *at = strstr(begin, tag);
    return at && at < end;
}

int main(void) {
    CHECK(MSL_KERNEL_COUNT > 0);
    CHECK(MSL_KERNEL_COUNT == MSL_SOURCE_COUNT);
    size_t bindings = 0;
    for (size_t k = 0; k < MSL_KERNEL_COUNT; k++) {
        const msl_kernel *m = &msl_kernels[k];
        const msl_source *s = source_of(m->name);
        CHECK(s != NULL);
        if (!s) {
            fprintf(stderr, "  kernel '%s': no embedded MSL\n", m->name);
            continue;
        }
        CHECK(strlen(s->text) == s->len);
        const char *b, *e;
        int found = entry_params(s->text, m->entry, &b, &e);
        CHECK(found);
        if (!found) {
            fprintf(stderr, "  kernel '%s': no 'kernel void %s(' in its MSL\n", m->name, m->entry);
            continue;
        }
        for (int slot = 0; slot < MSL_MAX_BIND; slot++) {
            if (m->bind[slot] < 0) continue;
            bindings++;
            CHECK(m->bind[slot] < 31);
            int ok = has_buffer(b, e, m->bind[slot]);
            CHECK(ok);
            if (!ok) fprintf(stderr, "  kernel '%s': slot %d binds buffer %d, not a parameter\n", m->name, slot, m->bind[slot]);
        }
        if (m->push >= 0) {
            int ok = has_buffer(b, e, m->push);
            CHECK(ok);
            if (!ok) fprintf(stderr, "  kernel '%s': push constants at buffer %d, not a parameter\n", m->name, m->push);
        }
        for (uint32_t i = 0; i < m->n_spec; i++) {
            char tag[48];
            snprintf(tag, sizeof tag, "[[function_constant(%u)]]", m->spec[i]);
            CHECK(strstr(s->text, tag) != NULL);
        }
        CHECK(m->threads[0] >= 1 && m->threads[0] * m->threads[1] * m->threads[2] <= 1024);
    }
    printf("%zu kernels, %zu operand bindings checked against their embedded MSL\n", (size_t)MSL_KERNEL_COUNT, bindings);
    return check_exit();
}
