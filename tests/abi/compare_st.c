/* compare_st A.safetensors B.safetensors TOL: passes when both files hold
 * the same tensors (identical headers: names, dtypes, shapes, offsets)
 * and every f32 element of A is within TOL (relative to max(1, |b|)) of
 * B's. Both files come from `berth run --output`, one writer, so equal
 * headers are byte-equal. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = len > 0 ? malloc((size_t)len) : NULL;
    if (b && fread(b, 1, (size_t)len, f) != (size_t)len) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *n = b ? (size_t)len : 0;
    return b;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: compare_st A B TOL\n");
        return 2;
    }
    size_t na, nb;
    unsigned char *a = slurp(argv[1], &na), *b = slurp(argv[2], &nb);
    double tol = atof(argv[3]);
    if (!a || !b || na < 8 || nb < 8) {
        fprintf(stderr, "compare_st: cannot read %s or %s\n", argv[1], argv[2]);
        return 1;
    }
    uint64_t ha = 0, hb = 0;
    for (int i = 7; i >= 0; i--) {
        ha = ha << 8 | a[i];
        hb = hb << 8 | b[i];
    }
    if (ha != hb || ha > na - 8 || memcmp(a, b, 8 + ha) || na != nb) {
        fprintf(stderr, "compare_st: headers differ:\n  %.*s\n  %.*s\n", (int)(ha < 400 ? ha : 400),
                (const char *)a + 8, (int)(hb < 400 ? hb : 400), (const char *)b + 8);
        return 1;
    }
    if (!strstr((const char *)a + 8, "\"F32\"")) {
        fprintf(stderr, "compare_st: expected f32 tensors\n");
        return 1;
    }
    size_t n = (na - 8 - ha) / 4, bad = 0;
    for (size_t i = 0; i < n; i++) {
        float x, y;
        memcpy(&x, a + 8 + ha + 4 * i, 4);
        memcpy(&y, b + 8 + ha + 4 * i, 4);
        double lim = tol * (fabs(y) > 1 ? fabs(y) : 1);
        if (!(fabs((double)x - y) <= lim)) {
            if (bad++ < 5) fprintf(stderr, "compare_st: element %zu: %.9g vs %.9g\n", i, x, y);
        }
    }
    printf("compare_st: %zu f32 elements, %zu differ beyond %g\n", n, bad, tol);
    free(a);
    free(b);
    return bad || n == 0 ? 1 : 0;
}
