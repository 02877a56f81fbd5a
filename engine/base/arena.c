#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Chunks grow geometrically so a large graph costs few system calls,
 * while a tiny one stays tiny. */
typedef struct chunk {
    struct chunk *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
} chunk;

struct berth_arena {
    chunk *head;
    size_t reserved;
};

berth_arena *berth_arena_new(void) { return calloc(1, sizeof(berth_arena)); }

void berth_arena_free(berth_arena *a) {
    if (!a) return;
    for (chunk *c = a->head, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    free(a);
}

void berth_arena_reset(berth_arena *a) {
    if (!a || !a->head) return;
    if (!a->head->next) {
        a->head->used = 0;
        return;
    }
    size_t total = a->reserved;
    for (chunk *c = a->head, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    a->head = NULL;
    a->reserved = 0;
    chunk *c = total <= SIZE_MAX - sizeof(chunk) ? malloc(sizeof(chunk) + total) : NULL;
    if (!c) return; /* the next alloc starts afresh */
    c->next = NULL;
    c->size = total;
    c->used = 0;
    a->head = c;
    a->reserved = total;
}

void *berth_arena_alloc(berth_arena *a, size_t bytes) {
    if (bytes > SIZE_MAX - 15) return NULL;
    size_t need = (bytes + 15) & ~(size_t)15;
    if (need == 0) need = 16;
    chunk *c = a->head;
    if (!c || c->size - c->used < need) {
        size_t size = c ? c->size * 2 : 4096;
        if (size < need) size = need;
        if (size > SIZE_MAX - sizeof(chunk)) return NULL;
        chunk *n = malloc(sizeof(chunk) + size);
        if (!n) return NULL;
        n->next = c;
        n->size = size;
        n->used = 0;
        a->head = c = n;
        a->reserved += size;
    }
    void *p = c->data + c->used;
    c->used += need;
    memset(p, 0, bytes);
    return p;
}

void *berth_arena_array(berth_arena *a, size_t count, size_t size) {
    if (size && count > SIZE_MAX / size) return NULL;
    return berth_arena_alloc(a, count * size);
}

char *berth_arena_strndup(berth_arena *a, const char *s, size_t n) {
    char *d = berth_arena_alloc(a, n + 1);
    if (d) memcpy(d, s, n);
    return d;
}

char *berth_arena_strdup(berth_arena *a, const char *s) { return berth_arena_strndup(a, s, strlen(s)); }

size_t berth_arena_bytes(const berth_arena *a) { return a->reserved; }
