/* Liveness-based placement: buffers whose lifetimes overlap never share
 * bytes; the others reuse them. Greedy by size, largest first, each at
 * the lowest aligned offset clear of every placed, overlapping buffer. */
#include <stdlib.h>

#include "bk.h"

static int by_size_desc(const void *a, const void *b) {
    const bk_span *x = a, *y = b;
    if (x->size != y->size) return x->size < y->size ? 1 : -1;
    if (x->first != y->first) return x->first < y->first ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

size_t bk_place(bk_span *s, size_t n, size_t align) {
    for (size_t i = 0; i < n; i++) s[i].size = (s[i].size + align - 1) & ~(align - 1);
    qsort(s, n, sizeof *s, by_size_desc);
    size_t top = 0;
    for (size_t i = 0; i < n; i++) {
        size_t off = 0;
        for (int moved = 1; moved;) {
            moved = 0;
            for (size_t j = 0; j < i; j++) {
                if (s[j].last < s[i].first || s[i].last < s[j].first) continue;
                if (off < s[j].off + s[j].size && s[j].off < off + s[i].size) {
                    off = s[j].off + s[j].size; /* sizes are aligned, so offsets stay aligned */
                    moved = 1;
                }
            }
        }
        s[i].off = off;
        if (off + s[i].size > top) top = off + s[i].size;
    }
    return top;
}

size_t bk_place_below(bk_span *s, size_t n, size_t align, uint32_t below) {
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i].id < below) {
            bk_span t = s[m];
            s[m++] = s[i];
            s[i] = t;
        }
    return bk_place(s, m, align);
}
