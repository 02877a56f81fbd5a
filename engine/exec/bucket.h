/* Choosing a bucket for a batch, padding inputs up to it and trimming
 * outputs back. Pure functions over plain arrays, so they are tested on
 * their own and allocate nothing. */
#ifndef BERTH_BUCKET_H
#define BERTH_BUCKET_H

#include <stddef.h>
#include <stdint.h>

#include "berth/backend.h"

/* `buckets` holds n_buckets rows of n_syms values. For each input i,
 * in_rank[i] and in_sym[i*BERTH_MAX_RANK + d] (sym index or -1) with
 * in_dims (static dims) describe its shape. Returns the bucket index that
 * holds every asked[s] with the fewest padded input elements, ties going
 * to the bucket listed first; -1 when none holds the batch. */
int32_t berth_bucket_choose(const int64_t *buckets, uint32_t n_buckets, uint32_t n_syms,
                            const int64_t *asked, uint32_t n_inputs, const uint32_t *in_rank,
                            const int64_t *in_dims, const int32_t *in_sym);

/* Copy a row-major tensor of dims `src` into one of dims `dst` (each
 * dst[d] >= src[d]), leading corner aligned; the rest of dst must have
 * been filled already. */
void berth_pad_copy(void *dst, const int64_t *dst_dims, const void *src, const int64_t *src_dims,
                    uint32_t rank, size_t elem);
/* Copy the leading corner `dst_dims` of a tensor of dims `src_dims`. */
void berth_trim_copy(void *dst, const int64_t *dst_dims, const void *src, const int64_t *src_dims,
                     uint32_t rank, size_t elem);
/* Fill n elements of dtype with value (converted to the dtype). */
void berth_fill(void *dst, berth_dtype dtype, size_t n, double value);

#endif
