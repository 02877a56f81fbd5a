/* Element types: names as .webnn spells them, and sizes. */
#ifndef BERTH_DTYPE_H
#define BERTH_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#include "berth/backend.h"

/* "f32", "i64", ... ; "?" for an invalid value. */
const char *berth_dtype_name(berth_dtype t);
/* Parse a .webnn dtype ("f32") or a WebNN one ("float32"); INVALID if unknown. */
berth_dtype berth_dtype_parse(const char *s);
/* Bits per element: 4 for I4/U4, 0 for INVALID. */
size_t berth_dtype_bits(berth_dtype t);
/* Bytes for `count` elements, rounding packed 4-bit types up. Sets *ok=0
 * on overflow or an invalid dtype and never sets it back to 1, so the
 * caller starts with ok = 1 and may carry an earlier overflow into it.
 * The count is 64-bit and a result past SIZE_MAX is an overflow: on a
 * 32-bit build an element count cast to size_t first would wrap into a
 * small, wrong buffer size. */
size_t berth_dtype_bytes(berth_dtype t, uint64_t count, int *ok);
/* The same in 64 bits, for sizes that describe a file or a claim about
 * one: on a 32-bit build they may pass what a size_t holds, and must be
 * compared (or refused) before anything is cast to size_t. */
uint64_t berth_dtype_bytes64(berth_dtype t, uint64_t count, int *ok);
/* "f32[2, 3]": a dtype and dims as messages quote them (cut at cap). */
void berth_shape_text(char *buf, size_t cap, berth_dtype t, uint32_t rank, const int64_t *dims);
/* IEEE binary16 from float32, rounding to nearest even, and back
 * (exact). */
uint16_t berth_f16_from_f32(float f);
float berth_f16_to_f32(uint16_t h);

#endif
