#include "slice_fixture.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive.h"

static const char *graph_text =
    "webnn_graph \"slice\" v2 {\n"
    "  inputs { x: f32[dyn(\"batch\", 16), 4]; }\n"
    "  consts {\n"
    "    w1: f32[4, 8] @weights(\"layer1.weight\");\n"
    "    b1: f32[8] @weights(\"layer1.bias\");\n"
    "    w2: f32[8, 3] @weights(\"layer2.weight\");\n"
    "    b2: f32[3] @weights(\"layer2.bias\");\n"
    "  }\n"
    "  nodes {\n"
    "    h0 = matmul(x, w1);\n"
    "    h1 = add(h0, b1);\n"
    "    h = relu(h1);\n"
    "    y0 = matmul(h, w2);\n"
    "    y = add(y0, b2);\n"
    "  }\n"
    "  outputs { y; }\n"
    "}\n";

static float next(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((*s >> 40) & 0xffff) / 32768.0f - 1.0f;
}

const char *slice_write_file(const slice_model *m, const char *name, const char *text, char *buf,
                             size_t cap) {
    snprintf(buf, cap, "%s/%s", m->dir, name);
    FILE *f = fopen(buf, "w");
    if (!f) return NULL;
    fputs(text, f);
    fclose(f);
    return buf;
}

int slice_model_write(slice_model *m, uint32_t seed) {
    uint64_t s = seed;
    for (int i = 0; i < SLICE_IN * SLICE_HID; i++) m->w1[i] = next(&s);
    for (int i = 0; i < SLICE_HID; i++) m->b1[i] = next(&s);
    for (int i = 0; i < SLICE_HID * SLICE_OUT; i++) m->w2[i] = next(&s);
    for (int i = 0; i < SLICE_OUT; i++) m->b2[i] = next(&s);
    snprintf(m->dir, sizeof m->dir, "/tmp/berth-slice-XXXXXX");
    if (!mkdtemp(m->dir)) return 1;
    char path[128];
    if (!slice_write_file(m, "model.webnn", graph_text, path, sizeof path)) return 1;
    berth_st_tensor t[4] = {
        {"layer1.weight", BA_F32, 2, {4, 8}, m->w1, sizeof m->w1},
        {"layer1.bias", BA_F32, 1, {8}, m->b1, sizeof m->b1},
        {"layer2.weight", BA_F32, 2, {8, 3}, m->w2, sizeof m->w2},
        {"layer2.bias", BA_F32, 1, {3}, m->b2, sizeof m->b2},
    };
    berth_error err;
    snprintf(path, sizeof path, "%s/model.safetensors", m->dir);
    if (berth_st_write(path, t, 4, NULL, &err) != 0) {
        fprintf(stderr, "writing %s: %s\n", path, err.msg);
        return 1;
    }
    return 0;
}

void slice_model_remove(slice_model *m) {
    DIR *d = opendir(m->dir);
    if (!d) return;
    struct dirent *e;
    char path[512];
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(path, sizeof path, "%s/%s", m->dir, e->d_name);
            unlink(path);
        }
    closedir(d);
    rmdir(m->dir);
}

void slice_reference(const slice_model *m, const float *x, int rows, double *y) {
    for (int r = 0; r < rows; r++) {
        double h[SLICE_HID];
        for (int j = 0; j < SLICE_HID; j++) {
            double acc = m->b1[j];
            for (int k = 0; k < SLICE_IN; k++) acc += (double)x[r * SLICE_IN + k] * m->w1[k * SLICE_HID + j];
            h[j] = acc > 0 ? acc : 0;
        }
        for (int j = 0; j < SLICE_OUT; j++) {
            double acc = m->b2[j];
            for (int k = 0; k < SLICE_HID; k++) acc += h[k] * m->w2[k * SLICE_OUT + j];
            y[r * SLICE_OUT + j] = acc;
        }
    }
}
