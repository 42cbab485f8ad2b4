/* The helpers of the LAPACK kernels (cpu/lapack.h): scratch memory, column-major copies of
 * row-major matrices, element access of either float dtype, batches of matrices. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "cpu/copy.h"
#include "cpu/lapack.h"

/* A CPU scratch tensor of at least `bytes` bytes (so it shows in the allocator's stats). */
mt_status
mt_lapack_scratch(int64_t bytes, mt_tensor **out)
{
    int64_t words = bytes > 0 ? (bytes + 7) / 8 : 1;
    return mt_tensor_empty(1, &words, MT_INT64, MT_DEVICE_CPU, out);
}

/* dst (col-major, leading dim ld) = src (row-major m x n) */
void
mt_lapack_to_cols(const char *src, char *dst, int64_t m, int64_t n, int64_t ld, size_t es)
{
    mt_cpu_copy_tiles(src, n, 1, dst, 1, ld, m, n, es);
}

/* dst (row-major m x n) = src (col-major, leading dim ld) */
void
mt_lapack_from_cols(const char *src, char *dst, int64_t m, int64_t n, int64_t ld, size_t es)
{
    mt_cpu_copy_tiles(src, 1, ld, dst, n, 1, m, n, es);
}

/* dst (row-major n x n) = the identity */
void
mt_lapack_eye(mt_dtype dt, char *dst, int64_t n)
{
    memset(dst, 0, (size_t)(n * n) * mt_dtype_size(dt));
    for (int64_t i = 0; i < n; i++) {
        mt_lapack_set(dt, dst, i * n + i, 1.0);
    }
}

/* The optimal workspace a LAPACK query (lwork = -1) wrote in its first element. */
int
mt_lapack_lwork(mt_dtype dt, const char *query)
{
    double w = mt_lapack_get(dt, query, 0);
    return w > 1 ? (int)w : 1;
}

/* LAPACK takes int sizes: every dim of the calls here must fit. */
mt_status
mt_lapack_check_fits(int64_t m, int64_t n)
{
    if (m > INT_MAX / 2 || n > INT_MAX / 2) {
        return mt_fail(MT_ERUNTIME,
                       "LAPACK: matrices with more than %d rows or columns are "
                       "not supported",
                       INT_MAX / 2);
    }
    return MT_OK;
}

mt_status
mt_lapack_batch_of(mt_tensor *A, mt_lapack_batch *b)
{
    b->m = A->sizes[A->ndim - 2];
    b->n = A->sizes[A->ndim - 1];
    b->count = mt_numel(A->ndim - 2, A->sizes);
    b->es = mt_dtype_size(A->dtype);
    mt_status st = mt_lapack_check_fits(b->m, b->n);
    if (st == MT_OK) {
        st = mt_cpu_dense(A, A->dtype, &b->x);
    }
    b->data = st ? NULL : mt_tensor_data(b->x);
    return st;
}

const char *
mt_lapack_matrix(const mt_lapack_batch *b, int64_t k)
{
    return b->data + k * b->m * b->n * (int64_t)b->es;
}

/* Whether the matrix (count elements) holds a NaN (had), or else an infinity (*inf). */
bool
mt_lapack_has_nan(mt_dtype dt, const char *p, int64_t count, bool *inf)
{
    *inf = false;
    for (int64_t i = 0; i < count; i++) {
        double v = mt_lapack_get(dt, p, i);
        if (isnan(v)) {
            return true;
        }
        *inf = *inf || isinf(v);
    }
    return false;
}

/* dst (count elements) = NaN */
void
mt_lapack_fill_nan(mt_dtype dt, char *dst, int64_t count)
{
    for (int64_t i = 0; i < count; i++) {
        mt_lapack_set(dt, dst, i, NAN);
    }
}

/* dst (row-major rows x cols) = the identity's first rows and columns */
void
mt_lapack_eye_part(mt_dtype dt, char *dst, int64_t rows, int64_t cols)
{
    memset(dst, 0, (size_t)(rows * cols) * mt_dtype_size(dt));
    for (int64_t i = 0; i < rows && i < cols; i++) {
        mt_lapack_set(dt, dst, i * cols + i, 1.0);
    }
}
