/* Writing a float32 tensor as a NumPy .npy file (format 1.0), so the
 * peer test can feed exactly what berth saw to another runtime. */
#ifndef OCR_NPY_H
#define OCR_NPY_H

#include <berth/berth.h>

/* t must be BERTH_DTYPE_F32; written little-endian, C order. */
berth_status ocr_npy_write(const char *path, const berth_tensor *t, berth_error *err);

#endif
