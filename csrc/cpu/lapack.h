/* The LAPACK layer of the linear algebra kernels (cpu/linalg.c, cpu/linalg_spectral.c): the
 * OpenBLAS the build links (scipy-openblas32: 32-bit LAPACK integers, every symbol prefixed
 * "scipy_"), one macro per call that picks the float32 or float64 routine and traces it as
 * Library::<routine>, and the helpers those kernels share (cpu/lapack.c): scratch memory,
 * column-major copies, batches of matrices. CPU only. */
#ifndef MT_CPU_LAPACK_H
#define MT_CPU_LAPACK_H

#include <stdbool.h>
#include <stdint.h>

#include <cblas.h>
#define LAPACK_GLOBAL(lcname, UCNAME) scipy_##lcname##_
#include <lapack.h>

#include "cpu/blas.h"
#include "cpu/iter.h"
#include "dispatch/dispatch.h"

/* A LAPACK routine of either precision, traced: s<name> for float32, d<name> for float64. The
 * buffers are passed as void * so that one call serves both. LAPACK_STR is for the routines
 * with character arguments, whose lengths lapack.h's scipy_LAPACK_* macros append. */
#define LAPACK_IN(dt, prefix, name, ...)                              \
    do {                                                              \
        mt_cpu_lib_enter((dt) == MT_FLOAT32 ? "s" #name : "d" #name); \
        const int threads_ = mt_cpu_lapack_begin();                   \
        if ((dt) == MT_FLOAT32) {                                     \
            prefix##s##name(__VA_ARGS__);                             \
        } else {                                                      \
            prefix##d##name(__VA_ARGS__);                             \
        }                                                             \
        mt_cpu_lapack_end(threads_);                                  \
        mt_cpu_lib_exit();                                            \
    } while (0)
#define LAPACK(dt, name, ...) LAPACK_IN(dt, LAPACK_, name, __VA_ARGS__)
#define LAPACK_STR(dt, name, ...) LAPACK_IN(dt, scipy_LAPACK_, name, __VA_ARGS__)
/* LAPACK_STR inside a parallel region whose caller holds OpenBLAS at one thread already
 * (mt_cpu_lapack_begin): a call must not set it back to more while another thread is in BLAS
 * (threads.c: a nested region runs OpenBLAS's jobs on one thread, which wait on one another) */
#define LAPACK_STR_HELD(dt, name, ...)                                \
    do {                                                              \
        mt_cpu_lib_enter((dt) == MT_FLOAT32 ? "s" #name : "d" #name); \
        if ((dt) == MT_FLOAT32) {                                     \
            scipy_LAPACK_s##name(__VA_ARGS__);                        \
        } else {                                                      \
            scipy_LAPACK_d##name(__VA_ARGS__);                        \
        }                                                             \
        mt_cpu_lib_exit();                                            \
    } while (0)

/* A LAPACK routine whose last arguments are (work, lwork, info), called through CALL (LAPACK
 * or LAPACK_STR): a workspace query (lwork -1) first, then the call with the workspace it asked
 * for; *info is the call's, st the workspace's allocation. */
#define WITH_WORK(CALL, dt, st, info, name, ...)                                         \
    do {                                                                                 \
        char query_[16];                                                                 \
        int lwork_ = -1;                                                                 \
        mt_tensor *work_ = NULL;                                                         \
        CALL(dt, name, __VA_ARGS__, (void *)query_, &lwork_, (info));                    \
        lwork_ = mt_lapack_lwork(dt, query_);                                            \
        (st) = mt_lapack_scratch((int64_t)lwork_ * (int64_t)mt_dtype_size(dt), &work_);  \
        if ((st) == MT_OK) {                                                             \
            CALL(dt, name, __VA_ARGS__, (void *)mt_tensor_data(work_), &lwork_, (info)); \
            mt_tensor_release(work_);                                                    \
        }                                                                                \
    } while (0)

/* A batch of matrices, made dense (mt_lapack_batch_of): count matrices of m x n, elements of
 * es bytes, from data (x's, released by the caller). */
typedef struct mt_lapack_batch {
    mt_tensor *x;
    const char *data;
    int64_t count, m, n;
    size_t es;
} mt_lapack_batch;

/* A CPU scratch tensor of at least `bytes` bytes (so it shows in the allocator's stats). */
mt_status mt_lapack_scratch(int64_t bytes, mt_tensor **out);
/* dst (col-major, leading dim ld) = src (row-major m x n) */
void mt_lapack_to_cols(const char *src, char *dst, int64_t m, int64_t n, int64_t ld, size_t es);
/* dst (row-major m x n) = src (col-major, leading dim ld) */
void mt_lapack_from_cols(const char *src, char *dst, int64_t m, int64_t n, int64_t ld, size_t es);
/* element i of a float32 or float64 buffer, as a double (inline: the kernels' loops call them
 * per element) */
static inline double
mt_lapack_get(mt_dtype dt, const char *p, int64_t i)
{
    return dt == MT_FLOAT32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}
static inline void
mt_lapack_set(mt_dtype dt, char *p, int64_t i, double v)
{
    if (dt == MT_FLOAT32) {
        ((float *)p)[i] = (float)v;
    } else {
        ((double *)p)[i] = v;
    }
}
/* dst (row-major n x n) = the identity */
void mt_lapack_eye(mt_dtype dt, char *dst, int64_t n);
/* dst (row-major rows x cols) = the identity's first rows and columns */
void mt_lapack_eye_part(mt_dtype dt, char *dst, int64_t rows, int64_t cols);
/* dst (count elements) = NaN */
void mt_lapack_fill_nan(mt_dtype dt, char *dst, int64_t count);
/* Whether the matrix (count elements) holds a NaN, or else (*inf) an infinity. */
bool mt_lapack_has_nan(mt_dtype dt, const char *p, int64_t count, bool *inf);
/* The optimal workspace a LAPACK query (lwork = -1) wrote in its first element. */
int mt_lapack_lwork(mt_dtype dt, const char *query);
/* LAPACK takes int sizes: every dim of the calls here must fit. */
mt_status mt_lapack_check_fits(int64_t m, int64_t n);
/* *b = A (*, m, n) as a dense batch */
mt_status mt_lapack_batch_of(mt_tensor *A, mt_lapack_batch *b);
/* matrix k of the batch */
const char *mt_lapack_matrix(const mt_lapack_batch *b, int64_t k);

#endif
