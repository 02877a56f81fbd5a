/* The manifest `berth check --models DIR` reads (DIR/manifest.ini), as
 * tests/models/zoo_prepare.py and tools/conformance --export write it:
 *     [model.NAME]
 *     what = ...            source = PACKAGE@VERSION PATH
 *     config = NAME.ini     inputs = A.npy B.npy    wants = X.npy
 *     atol = 1e-4           rtol = 1e-3
 * or, for a model the converter cannot take yet, refused = its message.
 * Paths are relative to DIR. Lines are read here rather than by inih: a
 * refusal message can be longer than the 200 bytes Debian's inih reads
 * of a line. */
#ifndef BERTH_ZOO_MANIFEST_H
#define BERTH_ZOO_MANIFEST_H

#include <stddef.h>
#include <stdio.h>

typedef struct zoo_model {
    char name[128];
    char *what, *source, *refused, *config, *inputs, *wants;
    double atol, rtol;
} zoo_model;

/* Reads every model of the manifest in f (`name` stands for it in
 * messages). Returns the count with *out malloc'd, or -1 with a one-line
 * message "NAME:LINE: ..." in why and nothing allocated. */
int berth_zoo_manifest_parse(FILE *f, const char *name, zoo_model **out, char *why, size_t cap);
/* The same from the file at path. */
int berth_zoo_manifest_read(const char *path, zoo_model **out, char *why, size_t cap);
void berth_zoo_manifest_free(zoo_model *ms, int n);

#endif
