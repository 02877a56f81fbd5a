/* NumPy .npy files (format 1.0 to 3.0, little-endian, C order): the
 * simplest way for a user to hand `berth run` a real input. */
#ifndef BERTH_NPY_H
#define BERTH_NPY_H

#include <stddef.h>

#include "berth/backend.h"

/* Read a whole .npy into t (t->data malloc'd, capacity set). The header's
 * shape and dtype must give exactly the bytes the file holds after it;
 * that is checked before anything is allocated for the data. On failure
 * t is left empty and err says "PATH: ..." on one line. */
berth_status berth_npy_read(const char *path, berth_tensor *t, berth_error *err);

/* The same over a whole .npy already in memory (size bytes at buf);
 * `name` stands for the file in messages. */
berth_status berth_npy_parse(const char *name, const void *buf, size_t size, berth_tensor *t,
                             berth_error *err);

#endif
