/* NumPy .npy files (format 1.0 to 3.0, little-endian, C order): the
 * simplest way for a user to hand `berth run` a real input. */
#ifndef BERTH_NPY_H
#define BERTH_NPY_H

#include "berth/backend.h"

/* Read a whole .npy into t (t->data malloc'd, capacity set). */
berth_status berth_npy_read(const char *path, berth_tensor *t, berth_error *err);

#endif
