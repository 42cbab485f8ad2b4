/* Matrix products on the CPU: addmm, mm, bmm, baddbmm, mv, addmv, dot, on OpenBLAS
 * (scipy-openblas32); float32, float64, and complex64 and complex128 (cblas_cgemm, cblas_zgemm,
 * complex alpha and beta).
 *
 * Every product reduces to gemm(): strided 2-D operands are handed to BLAS as they lie when
 * their layout allows (row-major or transposed), else copied; a product with one row or one
 * column becomes gemv, as PyTorch does. Integer dtypes use plain loops (no BLAS has them). */
#include <inttypes.h>
#include <limits.h>
#include <string.h>

#include <cblas.h>
#include <omp.h>

#include "cpu/blas.h"
#include "cpu/copy.h"
#include "cpu/iter.h"
#include "dispatch/kernels.h"
#include "ops/fails.h"
#include "ops/front.h"
#include "ops/ops.h"
#include "profiler/trace.h"

/* scipy-openblas32 prefixes every symbol with "scipy_". */
#define MT_CBLAS(name) scipy_cblas_##name

void
mt_cpu_lib_enter(const char *name)
{
    if (mt_trace_on) {
        mt_trace_enter(MT_LAYER_LIBRARY, name, "OpenBLAS");
    }
}

void
mt_cpu_lib_exit(void)
{
    if (mt_trace_on) {
        mt_trace_exit();
    }
}

/* Inside one of our parallel regions a gemm runs on the calling thread alone. A plain
 * cblas_sgemm there splits itself into OpenBLAS's jobs, which wait on one another for their
 * packed panels, and the threads callback's nested region (threads.c) runs them one after
 * another on this one thread: it hung. OpenBLAS's strided batch runs each product of a batch
 * whole as one job, so a batch of one is one job, which the callback runs here; the thread count
 * the rest of the program sees (openblas_set_num_threads) stays as it is. scipy-openblas32
 * exports it with its scipy_ prefix from 0.3.34.481 (earlier wheels left it unprefixed): the
 * floor in pyproject.toml. */
static void
gemm_on_this_thread(mt_dtype dt, enum CBLAS_TRANSPOSE at, enum CBLAS_TRANSPOSE bt, int m, int n,
                    int k, double alpha, const void *a, int lda, const void *b, int ldb,
                    double beta, void *c, int ldc)
{
    if (dt == MT_FLOAT32) {
        MT_CBLAS(sgemm_batch_strided)(CblasRowMajor, at, bt, m, n, k, (float)alpha,
                                      (const float *)a, lda, 0, (const float *)b, ldb, 0,
                                      (float)beta, (float *)c, ldc, 0, 1);
    } else {
        MT_CBLAS(dgemm_batch_strided)(CblasRowMajor, at, bt, m, n, k, alpha, (const double *)a, lda,
                                      0, (const double *)b, ldb, 0, beta, (double *)c, ldc, 0, 1);
    }
}

/* A small product is split between our threads into blocks of c's columns (rows where c is
 * taller than wide), each block a whole gemm on its own thread: OpenBLAS's own split of such a
 * product shares its packed panels between the threads, and the waits for them cost more than
 * the product. An LSTM's gates, h (32, 256) @ W_hh^T (256, 1024): OpenBLAS's split 102 us at two
 * threads, PyTorch's MKL 70 us. Each block packs the whole of the narrow operand (h), which is
 * small; the wide one (W_hh) is packed once, half by each thread. */
#define SPLIT_MNK_MIN (1 << 18) /* m * n * k from 64^3: below, OpenBLAS runs it at one thread */
#define SPLIT_MNK_MAX (1 << 25) /* up to 2^25 (32 x 1024 x 1024): above, OpenBLAS's own split */
#define SPLIT_ALIGN 16          /* blocks start at multiples of 16 columns: 64 bytes of float */

// c (m,n) = alpha * op(a) @ op(b) + beta * c, as mt_cpu_gemm_raw, in `parts` blocks of c's
// columns (rows when m > n) on as many threads
static void
gemm_split(mt_dtype dt, bool ta, bool tb, int m, int n, int k, double alpha, const char *a, int lda,
           const char *b, int ldb, double beta, char *c, int ldc, int parts)
{
    enum CBLAS_TRANSPOSE at = ta ? CblasTrans : CblasNoTrans, bt = tb ? CblasTrans : CblasNoTrans;
    const bool by_rows = m > n;
    const int64_t len = by_rows ? m : n, item = (int64_t)mt_dtype_size(dt);
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int p = 0; p < parts; p++) {
        int64_t i0 = len * p / parts / SPLIT_ALIGN * SPLIT_ALIGN;
        int64_t i1 = p + 1 == parts ? len : len * (p + 1) / parts / SPLIT_ALIGN * SPLIT_ALIGN;
        if (i1 <= i0) {
            continue;
        }
        if (by_rows) { /* rows i0..i1 of op(a) and of c */
            gemm_on_this_thread(dt, at, bt, (int)(i1 - i0), n, k, alpha,
                                a + (ta ? i0 : i0 * lda) * item, lda, b, ldb, beta,
                                c + i0 * ldc * item, ldc);
        } else { /* columns i0..i1 of op(b) and of c */
            gemm_on_this_thread(dt, at, bt, m, (int)(i1 - i0), k, alpha, a, lda,
                                b + (tb ? i0 * ldb : i0) * item, ldb, beta, c + i0 * item, ldc);
        }
    }
}

void
mt_cpu_gemm_raw(mt_dtype dt, bool ta, bool tb, int m, int n, int k, double alpha, const void *a,
                int lda, const void *b, int ldb, double beta, void *c, int ldc)
{
    enum CBLAS_TRANSPOSE at = ta ? CblasTrans : CblasNoTrans, bt = tb ? CblasTrans : CblasNoTrans;
    const int64_t mnk = (int64_t)m * n * k;
    const int parts = omp_in_parallel() || mnk < SPLIT_MNK_MIN || mnk > SPLIT_MNK_MAX
                          ? 1
                          : mt_parallel_parts((m > n ? m : n) / SPLIT_ALIGN, 1);
    mt_cpu_lib_enter(dt == MT_FLOAT32 ? "cblas_sgemm" : "cblas_dgemm");
    if (parts > 1) {
        gemm_split(dt, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, parts);
    } else if (omp_in_parallel()) {
        gemm_on_this_thread(dt, at, bt, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    } else if (dt == MT_FLOAT32) {
        MT_CBLAS(sgemm)(CblasRowMajor, at, bt, m, n, k, (float)alpha, (const float *)a, lda,
                        (const float *)b, ldb, (float)beta, (float *)c, ldc);
    } else {
        MT_CBLAS(dgemm)(CblasRowMajor, at, bt, m, n, k, alpha, (const double *)a, lda,
                        (const double *)b, ldb, beta, (double *)c, ldc);
    }
    mt_cpu_lib_exit();
}

/* How BLAS can read t (rows x cols) in place: row-major with leading dim *ld, or transposed. */
static bool
blas_layout(const mt_tensor *t, bool *trans, int64_t *ld)
{
    int64_t rows = t->sizes[0], cols = t->sizes[1], s0 = t->strides[0], s1 = t->strides[1];
    int64_t maxc = cols > 1 ? cols : 1, maxr = rows > 1 ? rows : 1;
    if ((cols == 1 || s1 == 1) && (rows == 1 || s0 >= maxc)) {
        *trans = false;
        *ld = rows == 1 ? maxc : s0;
        return *ld <= INT_MAX;
    }
    if ((rows == 1 || s0 == 1) && (cols == 1 || s1 >= maxr)) {
        *trans = true;
        *ld = cols == 1 ? maxr : s1;
        return *ld <= INT_MAX;
    }
    return false;
}

/* The stride of a vector for BLAS (which rejects 0), or 0 if it must be copied. */
static int64_t
vec_inc(int64_t size, int64_t stride)
{
    return size == 1 ? 1 : stride > 0 && stride <= INT_MAX ? stride : 0;
}

/* A product's alpha or beta: a real number, or a complex one for the complex products. */
static bool
is_zero(mt_scalar v)
{
    return mt_scalar_to_double(v) == 0 && (!v.is_complex || v.imag == 0);
}

/* v as (re, im) */
static void
complex_pair(mt_scalar v, double out[2])
{
    out[0] = mt_scalar_to_double(v);
    out[1] = v.is_complex ? v.imag : 0;
}

// A (m,k), B (k,n) as blas_layout reads them, C (m,n) contiguous, complex64 or complex128:
// C = alpha * A @ B + beta * C, one cblas_cgemm or cblas_zgemm
static void
gemm_complex(const mt_tensor *A, const mt_tensor *B, mt_tensor *C, mt_scalar alpha_s,
             mt_scalar beta_s)
{
    int m = (int)A->sizes[0], k = (int)A->sizes[1], n = (int)B->sizes[1];
    bool ta = false, tb = false;
    int64_t lda = 1, ldb = 1;
    blas_layout(A, &ta, &lda);
    blas_layout(B, &tb, &ldb);
    enum CBLAS_TRANSPOSE at = ta ? CblasTrans : CblasNoTrans, bt = tb ? CblasTrans : CblasNoTrans;
    double al[2], be[2];
    complex_pair(alpha_s, al);
    complex_pair(beta_s, be);
    const void *a = mt_tensor_data(A), *b = mt_tensor_data(B);
    void *c = mt_tensor_data(C);
    if (C->dtype == MT_COMPLEX64) {
        float alf[2] = {(float)al[0], (float)al[1]}, bef[2] = {(float)be[0], (float)be[1]};
        mt_cpu_lib_enter("cblas_cgemm");
        MT_CBLAS(cgemm)(CblasRowMajor, at, bt, m, n, k, alf, a, (int)lda, b, (int)ldb, bef, c, n);
    } else {
        mt_cpu_lib_enter("cblas_zgemm");
        MT_CBLAS(zgemm)(CblasRowMajor, at, bt, m, n, k, al, a, (int)lda, b, (int)ldb, be, c, n);
    }
    mt_cpu_lib_exit();
}

// C (m,n) contiguous = beta * C, beta complex: the product of an empty inner dimension
static void
scale_complex(mt_tensor *C, mt_scalar beta_s)
{
    double be[2];
    complex_pair(beta_s, be);
    int64_t n = mt_tensor_numel(C);
    if (C->dtype == MT_COMPLEX64) {
        float *c = (float *)mt_tensor_data(C);
        for (int64_t i = 0; i < n; i++) {
            const double re = c[2 * i], im = c[2 * i + 1];
            c[2 * i] = (float)(be[0] * re - be[1] * im);
            c[2 * i + 1] = (float)(be[0] * im + be[1] * re);
        }
        return;
    }
    double *c = (double *)mt_tensor_data(C);
    for (int64_t i = 0; i < n; i++) {
        const double re = c[2 * i], im = c[2 * i + 1];
        c[2 * i] = be[0] * re - be[1] * im;
        c[2 * i + 1] = be[0] * im + be[1] * re;
    }
}

// A (m,k), B (k,n), C (m,n) contiguous float; C = alpha * A @ B + beta * C
static void
gemm_blas(const mt_tensor *A, const mt_tensor *B, mt_tensor *C, double alpha, double beta)
{
    int m = (int)A->sizes[0], k = (int)A->sizes[1], n = (int)B->sizes[1];
    bool ta = false, tb = false;
    int64_t lda = 1, ldb = 1;
    blas_layout(A, &ta, &lda);
    blas_layout(B, &tb, &ldb);
    bool f32 = C->dtype == MT_FLOAT32;
    char *a = mt_tensor_data(A), *b = mt_tensor_data(B), *c = mt_tensor_data(C);
    int64_t inc_a = vec_inc(k, A->strides[1]), inc_b = vec_inc(k, B->strides[0]);
    if (n == 1 && inc_b) {
        /* C[:, 0] = A @ B[:, 0] */
        enum CBLAS_TRANSPOSE t = ta ? CblasTrans : CblasNoTrans;
        int rows = ta ? k : m, cols = ta ? m : k;
        mt_cpu_lib_enter(f32 ? "cblas_sgemv" : "cblas_dgemv");
        if (f32) {
            MT_CBLAS(sgemv)(CblasRowMajor, t, rows, cols, (float)alpha, (float *)a, (int)lda,
                            (float *)b, (int)inc_b, (float)beta, (float *)c, 1);
        } else {
            MT_CBLAS(dgemv)(CblasRowMajor, t, rows, cols, alpha, (double *)a, (int)lda, (double *)b,
                            (int)inc_b, beta, (double *)c, 1);
        }
        mt_cpu_lib_exit();
        return;
    }
    if (m == 1 && inc_a) {
        /* C[0, :] = B^T @ A[0, :] */
        enum CBLAS_TRANSPOSE t = tb ? CblasNoTrans : CblasTrans;
        int rows = tb ? n : k, cols = tb ? k : n;
        mt_cpu_lib_enter(f32 ? "cblas_sgemv" : "cblas_dgemv");
        if (f32) {
            MT_CBLAS(sgemv)(CblasRowMajor, t, rows, cols, (float)alpha, (float *)b, (int)ldb,
                            (float *)a, (int)inc_a, (float)beta, (float *)c, 1);
        } else {
            MT_CBLAS(dgemv)(CblasRowMajor, t, rows, cols, alpha, (double *)b, (int)ldb, (double *)a,
                            (int)inc_a, beta, (double *)c, 1);
        }
        mt_cpu_lib_exit();
        return;
    }
    mt_cpu_gemm_raw(C->dtype, ta, tb, m, n, k, alpha, a, (int)lda, b, (int)ldb, beta, c, n);
}

// A (m,k), B (k,n) strided, C (m,n) contiguous, of integer type T; C = alpha * A @ B + beta * C
// in wrapping (unsigned) arithmetic, as PyTorch's integers; beta == 0 ignores C.
#define GEMM_INT_LOOP(T)                                                         \
    for (int64_t i = 0; i < m; i++) {                                            \
        for (int64_t j = 0; j < n; j++) {                                        \
            uint64_t s = 0;                                                      \
            for (int64_t p = 0; p < k; p++) {                                    \
                s += (uint64_t)((T *)a)[i * A->strides[0] + p * A->strides[1]] * \
                     (uint64_t)((T *)b)[p * B->strides[0] + j * B->strides[1]];  \
            }                                                                    \
            T *o = (T *)c + i * n + j;                                           \
            *o = (T)(alpha * s + (beta != 0 ? beta * (uint64_t)*o : 0));         \
        }                                                                        \
    }

// A (m,k), B (k,n) strided, C (m,n) contiguous, integers; alpha and beta already in C's dtype
static void
gemm_int(const mt_tensor *A, const mt_tensor *B, mt_tensor *C, uint64_t alpha, uint64_t beta)
{
    int64_t m = A->sizes[0], k = A->sizes[1], n = B->sizes[1];
    const char *a = mt_tensor_data(A), *b = mt_tensor_data(B);
    char *c = mt_tensor_data(C);
    if (C->dtype == MT_INT32) {
        GEMM_INT_LOOP(int32_t)
    } else {
        GEMM_INT_LOOP(int64_t)
    }
}

// A (m,k), B (k,n) strided, C (m,n) contiguous; C = alpha * A @ B + beta * C
static mt_status
gemm(mt_tensor *A, mt_tensor *B, mt_tensor *C, mt_scalar alpha_s, mt_scalar beta_s)
{
    int64_t m = A->sizes[0], k = A->sizes[1], n = B->sizes[1];
    double alpha = mt_scalar_to_double(alpha_s), beta = mt_scalar_to_double(beta_s);
    mt_tensor *ca = NULL, *cb = NULL;
    mt_status st = MT_OK;
    const bool cplx = mt_dtype_is_complex(C->dtype);
    if (m == 0 || n == 0) {
        return MT_OK;
    }
    if (!cplx && !mt_dtype_is_float(C->dtype)) {
        /* the products' front ends gave integer products integer alpha and beta */
        gemm_int(A, B, C, (uint64_t)mt_scalar_to_int(alpha_s), (uint64_t)mt_scalar_to_int(beta_s));
        return MT_OK;
    }
    if (k == 0) {
        /* An empty sum: C = beta * C, and beta == 0 clears C even of NaN. */
        if (is_zero(beta_s)) {
            mt_cpu_fill(C, mt_scalar_int(0));
        } else if (cplx) {
            scale_complex(C, beta_s);
        } else if (beta != 1) {
            char *c = mt_tensor_data(C);
            size_t item = mt_dtype_size(C->dtype);
            for (int64_t i = 0; i < m * n; i++) {
                mt_scalar v = mt_load_scalar(c + i * (int64_t)item, C->dtype);
                mt_store_scalar(c + i * (int64_t)item, C->dtype,
                                mt_scalar_float(beta * mt_scalar_to_double(v)));
            }
        }
        return MT_OK;
    }
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX) {
        return mt_fail(MT_ERUNTIME, "matrix dimensions exceed what 32-bit BLAS can address");
    }
    bool t;
    int64_t ld;
    if (!blas_layout(A, &t, &ld) && (st = mt_cpu_cast(A, A->dtype, &ca)) == MT_OK) {
        A = ca;
    }
    if (st == MT_OK && !blas_layout(B, &t, &ld) && (st = mt_cpu_cast(B, B->dtype, &cb)) == MT_OK) {
        B = cb;
    }
    if (st == MT_OK && cplx) {
        gemm_complex(A, B, C, alpha_s, beta_s);
    } else if (st == MT_OK) {
        gemm_blas(A, B, C, alpha, beta);
    }
    mt_tensor_clear(&ca);
    mt_tensor_clear(&cb);
    return st;
}

/* The products have no bool loops, as PyTorch's CPU kernel (its name in the error). */
static mt_status
check_dtype(const mt_tensor *t)
{
    return t->dtype == MT_BOOL ? mt_fail_not_implemented("addmm_impl_cpu_", "", t->dtype) : MT_OK;
}

// self broadcast to (m,n), mat1 (m,k), mat2 (k,n); out (m,n) = beta * self + alpha * mat1 @ mat2
mt_status
mt_cpu_addmm(mt_args *a)
{
    mt_tensor *self = a->t[0], *m1 = a->t[1], *m2 = a->t[2], *out = a->out[0];
    const mt_scalar beta = a->plan->product.beta, alpha = a->plan->product.alpha;
    mt_status st = check_dtype(m1);
    if (st) {
        return st;
    }
    bool use_self = !is_zero(beta);
    if (use_self && (st = mt_cpu_copy_into(out, self))) {
        return st;
    }
    st = gemm(m1, m2, out, alpha, use_self ? beta : mt_scalar_int(0));
    if (st == MT_OK && a->plan->op == MT_OP__addmm_activation) { /* PyTorch's CPU: exact gelu */
        st = mt_activate_result(out, a->b[0], "none");
    }
    return st;
}

// self (m,k), mat2 (k,n); out (m,n) = self @ mat2
mt_status
mt_cpu_mm(mt_args *a)
{
    mt_tensor *self = a->t[0], *m2 = a->t[1];
    mt_status st = check_dtype(self);
    return st ? st : gemm(self, m2, a->out[0], mt_scalar_int(1), mt_scalar_int(0));
}

/* Matrix b of a 3-D tensor, as a 2-D view that owns nothing (valid while t lives). */
static mt_tensor
batch_matrix(const mt_tensor *t, int64_t b)
{
    mt_tensor m = *t;
    m.ndim = 2;
    m.offset = t->offset + b * t->strides[0];
    m.sizes[0] = t->sizes[1];
    m.sizes[1] = t->sizes[2];
    m.strides[0] = t->strides[1];
    m.strides[1] = t->strides[2];
    return m;
}

/* A batch of small products is split between threads, each running whole gemms at one OpenBLAS
 * thread, as PyTorch's parallel_for over the batch: OpenBLAS splits one small gemm poorly (its
 * threads sync on packed panels several times per call), and a batch needs no sync at all. OpenBLAS
 * stays at one thread inside the region (mt_cpu_lapack_begin): a gemv that it splits into jobs
 * there gave wrong rows with two of our threads in it at once ((8, 512, 4096) @ (8, 4096, 1) at
 * two threads, test_threaded_kernels.py). A large gemm keeps OpenBLAS's own split (threads.c). */
#define BATCH_SPLIT_MNK (1 << 21) /* m * n * k up to 128^3: split the batch, not each product */
#define GEMM_GRAIN 32768          /* multiply-adds a thread must get to be worth starting */

/* The threads worth splitting the batch of b1 (B,m,k) @ b2 (B,k,n) into out (B,m,n) between,
 * or 1: only float and complex products BLAS reads in place (gemm() then cannot fail on a worker thread,
 * whose error message no one would see). */
static int
batch_parts(const mt_tensor *b1, const mt_tensor *b2, const mt_tensor *out)
{
    int64_t nb = out->sizes[0], m = b1->sizes[1], k = b1->sizes[2], n = b2->sizes[2];
    int64_t mnk = m * n * k, ld;
    bool t;
    if (nb < 2 || !(mt_dtype_is_float(out->dtype) || mt_dtype_is_complex(out->dtype)) || mnk == 0 ||
        mnk > BATCH_SPLIT_MNK) {
        return 1;
    }
    mt_tensor x = batch_matrix(b1, 0), y = batch_matrix(b2, 0);
    if (!blas_layout(&x, &t, &ld) || !blas_layout(&y, &t, &ld)) {
        return 1;
    }
    return mt_parallel_parts(nb, GEMM_GRAIN / mnk + 1);
}

// b1 (B,m,k), b2 (B,k,n), out (B,m,n) float, as batch_parts allows; out[b] = alpha * b1[b] @
// b2[b] + beta * out[b], the batch split in parts ranges
static void
batched_split(mt_tensor *b1, mt_tensor *b2, mt_tensor *out, mt_scalar alpha, mt_scalar beta,
              int parts)
{
    const int64_t nb = out->sizes[0];
    const int threads = mt_cpu_lapack_begin(); /* OpenBLAS at one thread inside our region */
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int64_t b = 0; b < nb; b++) {
        mt_tensor x = batch_matrix(b1, b), y = batch_matrix(b2, b), o = batch_matrix(out, b);
        gemm(&x, &y, &o, alpha, beta);
    }
    mt_cpu_lapack_end(threads);
}

// self broadcast to (B,m,n) or NULL, b1 (B,m,k), b2 (B,k,n);
// out (B,m,n) = beta * self + alpha * b1[b] @ b2[b] for each b
static mt_status
batched(mt_args *a, mt_tensor *self, mt_tensor *b1, mt_tensor *b2, mt_scalar beta, mt_scalar alpha)
{
    mt_tensor *out = a->out[0];
    mt_status st = check_dtype(b1);
    bool use_self = self != NULL && !is_zero(beta);
    if (st == MT_OK && use_self) {
        st = mt_cpu_copy_into(out, self);
    }
    const int parts = st == MT_OK ? batch_parts(b1, b2, out) : 1;
    if (parts > 1) {
        batched_split(b1, b2, out, alpha, use_self ? beta : mt_scalar_int(0), parts);
        return MT_OK;
    }
    for (int64_t b = 0; st == MT_OK && b < out->sizes[0]; b++) {
        mt_tensor x = batch_matrix(b1, b), y = batch_matrix(b2, b), o = batch_matrix(out, b);
        st = gemm(&x, &y, &o, alpha, use_self ? beta : mt_scalar_int(0));
    }
    return st;
}

// self (B,m,k), mat2 (B,k,n); out (B,m,n) = self[b] @ mat2[b] for each b
mt_status
mt_cpu_bmm(mt_args *a)
{
    return batched(a, NULL, a->t[0], a->t[1], mt_scalar_int(0), mt_scalar_int(1));
}

// self broadcast to (B,m,n), batch1 (B,m,k), batch2 (B,k,n);
// out (B,m,n) = beta * self + alpha * batch1 @ batch2
mt_status
mt_cpu_baddbmm(mt_args *a)
{
    const mt_product_plan *p = &a->plan->product;
    return batched(a, a->t[0], a->t[1], a->t[2], p->beta, p->alpha);
}

// self broadcast to (m) or NULL, mat (m,k), vec (k); out (m) = beta * self + alpha * mat @ vec
static mt_status
matvec(mt_args *a, mt_tensor *self, mt_tensor *mat, mt_tensor *vec, mt_scalar beta, mt_scalar alpha)
{
    mt_tensor *out = a->out[0];
    mt_status st = check_dtype(mat);
    bool use_self = self != NULL && !is_zero(beta);
    if (st == MT_OK && use_self) {
        st = mt_cpu_copy_into(out, self);
    }
    if (st == MT_OK) {
        mt_tensor col = *vec, o = *out;
        col.ndim = o.ndim = 2;
        col.sizes[1] = o.sizes[1] = 1;
        col.strides[1] = o.strides[1] = 1;
        st = gemm(mat, &col, &o, alpha, use_self ? beta : mt_scalar_int(0));
    }
    return st;
}

// self (m,k), vec (k); out (m) = self @ vec
mt_status
mt_cpu_mv(mt_args *a)
{
    return matvec(a, NULL, a->t[0], a->t[1], mt_scalar_int(0), mt_scalar_int(1));
}

// self broadcast to (m), mat (m,k), vec (k); out (m) = beta * self + alpha * mat @ vec
mt_status
mt_cpu_addmv(mt_args *a)
{
    const mt_product_plan *p = &a->plan->product;
    return matvec(a, a->t[0], a->t[1], a->t[2], p->beta, p->alpha);
}

// self (n), tensor (n); out () = sum(self * tensor)
mt_status
mt_cpu_dot(mt_args *a)
{
    mt_tensor *x = a->t[0], *y = a->t[1], *out = a->out[0];
    mt_status st = check_dtype(x);
    if (st) {
        return st;
    }
    /* (1,n) @ (n,1): gemm turns it into gemv. */
    mt_tensor row = *x, col = *y, o = *out;
    row.ndim = col.ndim = o.ndim = 2;
    row.sizes[1] = x->sizes[0];
    row.strides[1] = x->strides[0];
    row.sizes[0] = 1;
    row.strides[0] = x->sizes[0];
    col.sizes[1] = o.sizes[0] = o.sizes[1] = 1;
    col.strides[1] = o.strides[0] = o.strides[1] = 1;
    return gemm(&row, &col, &o, mt_scalar_int(1), mt_scalar_int(0));
}
