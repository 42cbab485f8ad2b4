/* Copies with casting and broadcasting between CPU tensors; fills. */
#ifndef MT_CPU_COPY_H
#define MT_CPU_COPY_H

#include "core/tensor.h"

/* dst[...] = src[...] broadcast to dst's shape, converting dtype. Handles overlap. */
mt_status mt_cpu_copy_into(mt_tensor *dst, mt_tensor *src);
/* A new contiguous tensor of dtype dt with src's values. */
mt_status mt_cpu_cast(mt_tensor *src, mt_dtype dt, mt_tensor **out);
/* src itself (a new reference) when it is contiguous and of dtype dt, else mt_cpu_cast's copy:
 * for kernels that index plain arrays. */
mt_status mt_cpu_dense(mt_tensor *src, mt_dtype dt, mt_tensor **out);
/* src itself (a new reference) when its elements lie one after the other in memory format fmt
 * (channels-last: (N, H, W, C) in that order; a size-1 dim steps by anything), else a copy so
 * laid out: for kernels that index (N, H, W, C) arrays. */
mt_status mt_cpu_dense_format(mt_tensor *src, mt_memory_format fmt, mt_tensor **out);
void mt_cpu_fill(mt_tensor *dst, mt_scalar value);
/* dst[i dr + j dc] = src[i sr + j sc] for i < m, j < n, elements of es bytes (strides in
 * elements), in tiles that keep both sides' lines in cache: a transpose, a column-major copy. */
void mt_cpu_copy_tiles(const char *src, int64_t sr, int64_t sc, char *dst, int64_t dr, int64_t dc,
                       int64_t m, int64_t n, size_t es);

#endif
