/* The matrix products on cuBLAS: mm and addmm (cublas<t>gemm; one row goes to gemv, as in
 * PyTorch), mv and addmv (gemv), bmm and baddbmm (gemmStridedBatched) and dot (cublas<t>dot,
 * its result left on the device), float32 and float64, and complex64 and complex128
 * (cublasCgemm and cublasZgemm and their strided-batched forms, cublasCgemv and cublasZgemv,
 * cublasCdotu and cublasZdotu; complex alpha and beta; dispatch/complex.c sends the complex
 * products here, and autograd's gradients of them are such products too). addmm
 * with a bias vector (linear's input @ weight^T + bias) is one cublasLtMatmul with the bias as
 * its epilogue (CUBLASLT_EPILOGUE_BIAS), as PyTorch's gemm_and_bias: no copy of the bias into
 * the output first; _addmm_activation's ReLU or GELU joins it (RELU_BIAS, GELU_BIAS). Under
 * torch.backends.cuda.matmul.allow_tf32, float32 products run on TF32 tensor cores
 * (CUBLAS_TF32_TENSOR_OP_MATH, CUBLAS_COMPUTE_32F_FAST_TF32), as PyTorch's do.
 *
 * cuBLAS is column-major: a row-major (m,n) matrix is, to cuBLAS, its (n,m) transpose. So
 * out = A @ B is computed as out^T = B^T @ A^T, with each operand passed as it lies in memory
 * (row-major -> "N", a transposed view -> "T") and anything else made contiguous first.
 * An inner dimension of 0 gives beta * input (zeros when beta is 0) without calling cuBLAS,
 * as PyTorch does. Built only when the cuBLAS headers are found (MT_CUDA_CUBLAS); otherwise the
 * products have no CUDA kernel (they run through _C's host round trip). */
#include <limits.h>

#include "cuda/elementwise.h"
#include "cuda/handles.h"
#include "cuda/ops.h"
#include "cuda/profile.h"
#include "ops/ops.h"

#ifdef MT_CUDA_CUBLAS
#include <cublasLt.h>
#include <cublas_v2.h>


static mt_status
cublas_check_at(cublasStatus_t s, const char *call, const char *file, int line)
{
    if (s == CUBLAS_STATUS_SUCCESS) {
        return MT_OK;
    }
    return mt_fail(MT_ECUDA, "CUDA error: %s when calling `%s` (%s:%d)", cublasGetStatusName(s),
                   call, file, line);
}
/* st = mt_cublas_check(cublasSgemm(...)); the cuBLAS twin of mt_cuda_check */
#define mt_cublas_check(call) cublas_check_at((call), #call, __FILE__, __LINE__)

static mt_status
create_handle(void **out)
{
    return mt_cublas_check(cublasCreate((cublasHandle_t *)out));
}

static void
destroy_handle(void *h)
{
    (void)cublasDestroy(h);
}

static mt_cuda_handles cublas_handles = MT_CUDA_HANDLES_INIT("cuBLAS", create_handle,
                                                             destroy_handle);

/* A cuBLAS call as a Library:: event; the kernels it runs get its correlation id (call: a
 * literal, the exported symbol the cublas_v2.h macro names). */
static mt_cuda_span
library_begin(const char *call)
{
    return mt_cuda_span_begin(call, MT_LAYER_LIBRARY, "cuBLAS", MT_GPU_KERNEL, call);
}

static mt_status
handle_for(mt_device dev, cublasHandle_t *out)
{
    mt_status st = mt_cuda_thread_handle(&cublas_handles, dev, (void **)out);
    /* the thread's current stream may have changed since the last call (or the handle's owner);
     * every call but dot's passes host scalars, and dot's may have failed before setting it back */
    if (st == MT_OK) {
        st = mt_cublas_check(cublasSetStream(*out, mt_cuda_current_stream(dev.index)));
    }
    if (st == MT_OK) {
        st = mt_cublas_check(cublasSetPointerMode(*out, CUBLAS_POINTER_MODE_HOST));
    }
    if (st == MT_OK) { /* torch.backends.cuda.matmul.allow_tf32, which may have changed */
        cublasMath_t math = mt_cuda_lib_flag_on(MT_MATMUL_ALLOW_TF32) ? CUBLAS_TF32_TENSOR_OP_MATH
                                                                      : CUBLAS_DEFAULT_MATH;
        st = mt_cublas_check(cublasSetMathMode(*out, math));
    }
    return st;
}

static mt_status
create_lt_handle(void **out)
{
    return mt_cublas_check(cublasLtCreate((cublasLtHandle_t *)out));
}

static void
destroy_lt_handle(void *h)
{
    (void)cublasLtDestroy(h);
}

static mt_cuda_handles cublaslt_handles = MT_CUDA_HANDLES_INIT("cuBLASLt", create_lt_handle,
                                                               destroy_lt_handle);

/* A (rows, cols) matrix with strides (s0, s1) as cuBLAS takes it: *trans false for row-major
 * (ld s0), true for column-major (ld s1); false return: neither, copy it first. */
static bool
layout(int64_t rows, int64_t cols, int64_t s0, int64_t s1, bool *trans, int64_t *ld)
{
    if ((s1 == 1 || cols == 1) && (rows == 1 || s0 >= (cols > 1 ? cols : 1))) {
        *trans = false;
        *ld = rows == 1 ? (cols > 1 ? cols : 1) : s0;
        return true;
    }
    if ((s0 == 1 || rows == 1) && (cols == 1 || s1 >= (rows > 1 ? rows : 1))) {
        *trans = true;
        *ld = cols == 1 ? (rows > 1 ? rows : 1) : s1;
        return true;
    }
    return false;
}

/* t itself when layout() takes its last two dims, else a contiguous copy (owned in *tmp). */
static mt_status
usable(mt_tensor *t, mt_tensor **tmp, mt_tensor **use)
{
    int r = t->ndim - 2, c = t->ndim - 1;
    bool trans = false;
    int64_t ld = 0;
    *use = t;
    /* cuBLAS's leading dimension is an int: a row stride beyond it (a slice of a huge tensor)
     * is copied, not truncated */
    if (layout(t->sizes[r], t->sizes[c], t->strides[r], t->strides[c], &trans, &ld) &&
        ld <= INT_MAX) {
        return MT_OK;
    }
    mt_status st = mt_tensor_empty(t->ndim, t->sizes, t->dtype, mt_tensor_device(t), tmp);
    if (st == MT_OK && (st = mt_cuda_copy_into(*tmp, t)) == MT_OK) {
        *use = *tmp;
    }
    return st;
}

static bool
fits_int(int64_t v)
{
    return v <= INT_MAX;
}

/* v (n) itself when cuBLAS takes its stride as an increment, else a contiguous copy (owned in
 * *tmp): an expanded vector's stride 0 is not a valid increment. */
static mt_status
usable_vec(mt_tensor *v, mt_tensor **tmp, mt_tensor **use)
{
    *use = v;
    if (v->sizes[0] <= 1 || (v->strides[0] >= 1 && fits_int(v->strides[0]))) {
        return MT_OK;
    }
    mt_status st = mt_tensor_empty(1, v->sizes, v->dtype, mt_tensor_device(v), tmp);
    if (st == MT_OK && (st = mt_cuda_copy_into(*tmp, v)) == MT_OK) {
        *use = *tmp;
    }
    return st;
}

/* The increment of v as usable_vec left it (any stride of a single element reads as 1). */
static int
inc_of(const mt_tensor *v)
{
    return v->sizes[0] <= 1 ? 1 : (int)v->strides[0];
}

/* A product's alpha or beta: a real number, or a complex one for the complex products. */
static bool
is_zero(mt_scalar v)
{
    return mt_scalar_to_double(v) == 0 && (!v.is_complex || v.imag == 0);
}

// C (*) contiguous, holding beta's operand already unless beta is 0: C = beta C, the product
// of an empty inner dimension (done here, as PyTorch does, rather than by cuBLAS with k = 0);
// a complex C by the elementwise mul_
static mt_status
scale(cublasHandle_t h, mt_tensor *C, mt_scalar beta_v)
{
    int64_t n = mt_tensor_numel(C);
    char *c = mt_tensor_data(C);
    size_t w = mt_dtype_size(C->dtype);
    double beta = mt_scalar_to_double(beta_v);
    if (is_zero(beta_v)) {
        return mt_cuda_check(cudaMemsetAsync(c, 0, (size_t)n * w,
                                             mt_cuda_current_stream(mt_tensor_device(C).index)));
    }
    mt_status st = MT_OK;
    if (mt_dtype_is_complex(C->dtype)) { /* beta as a 0-dim tensor of C's on the device */
        mt_tensor *k = NULL, *r = NULL;
        if ((st = mt_tensor_empty(0, NULL, C->dtype, mt_tensor_device(C), &k)) == MT_OK &&
            (st = mt_cuda_fill(k, beta_v)) == MT_OK) {
            st = mt_op_mul_(C, k, &r);
        }
        mt_tensor_clear(&r);
        mt_tensor_clear(&k);
        return st;
    }
    float bf = (float)beta;
    for (int64_t off = 0; off < n && st == MT_OK; off += INT_MAX) {
        int len = (int)(n - off < INT_MAX ? n - off : INT_MAX);
        st = C->dtype == MT_FLOAT32
                 ? mt_cublas_check(cublasSscal(h, len, &bf, (float *)(c + (size_t)off * w), 1))
                 : mt_cublas_check(cublasDscal(h, len, &beta, (double *)(c + (size_t)off * w), 1));
    }
    return st;
}

/* The exported symbol of dt's gemm, of one matrix or strided-batched (the profiler's name). */
static const char *
gemm_name(mt_dtype dt, bool batched)
{
    static const char *const names[4][2] = {{"cublasSgemm_v2", "cublasSgemmStridedBatched"},
                                            {"cublasDgemm_v2", "cublasDgemmStridedBatched"},
                                            {"cublasCgemm_v2", "cublasCgemmStridedBatched"},
                                            {"cublasZgemm_v2", "cublasZgemmStridedBatched"}};
    int k = dt == MT_FLOAT32 ? 0 : dt == MT_FLOAT64 ? 1 : dt == MT_COMPLEX64 ? 2 : 3;
    return names[k][batched ? 1 : 0];
}

/* One gemm as cuBLAS takes it (column-major, cuBLAS's A our B: this file's header), its
 * matrices and alpha and beta already in C's dtype's terms. */
typedef struct gemm_args {
    cublasOperation_t opa, opb;
    int m, n, k, lda, ldb, ldc, batch;
    const void *a, *b;
    void *c;
    long long sa, sb, sc;
} gemm_args;

// complex64 or complex128 C (batch, m, n) = alpha A @ B + beta C, g as cuBLAS takes it:
// cublasCgemm, cublasZgemm or their strided-batched forms, complex alpha and beta
static mt_status
complex_gemm(cublasHandle_t h, mt_dtype dt, const gemm_args *g, mt_scalar alpha, mt_scalar beta)
{
    double ar = mt_scalar_to_double(alpha), ai = alpha.is_complex ? alpha.imag : 0;
    double br = mt_scalar_to_double(beta), bi = beta.is_complex ? beta.imag : 0;
    if (dt == MT_COMPLEX64) {
        cuComplex al = {(float)ar, (float)ai}, be = {(float)br, (float)bi};
        return g->batch == 1
                   ? mt_cublas_check(cublasCgemm(h, g->opa, g->opb, g->m, g->n, g->k, &al, g->a,
                                                 g->lda, g->b, g->ldb, &be, g->c, g->ldc))
                   : mt_cublas_check(cublasCgemmStridedBatched(h, g->opa, g->opb, g->m, g->n, g->k,
                                                               &al, g->a, g->lda, g->sa, g->b,
                                                               g->ldb, g->sb, &be, g->c, g->ldc,
                                                               g->sc, g->batch));
    }
    cuDoubleComplex al = {ar, ai}, be = {br, bi};
    return g->batch == 1
               ? mt_cublas_check(cublasZgemm(h, g->opa, g->opb, g->m, g->n, g->k, &al, g->a, g->lda,
                                             g->b, g->ldb, &be, g->c, g->ldc))
               : mt_cublas_check(cublasZgemmStridedBatched(h, g->opa, g->opb, g->m, g->n, g->k, &al,
                                                           g->a, g->lda, g->sa, g->b, g->ldb, g->sb,
                                                           &be, g->c, g->ldc, g->sc, g->batch));
}

// A (batch, m, k), B (batch, k, n) -> C (batch, m, n) contiguous: C = alpha A @ B + beta C
static mt_status
gemm(mt_tensor *A, mt_tensor *B, mt_tensor *C, mt_scalar alpha_v, mt_scalar beta_v)
{
    double alpha = mt_scalar_to_double(alpha_v), beta = mt_scalar_to_double(beta_v);
    int nd = C->ndim;
    int64_t m = C->sizes[nd - 2], n = C->sizes[nd - 1], k = A->sizes[nd - 1];
    int64_t batch = nd == 3 ? C->sizes[0] : 1;
    if (m == 0 || n == 0 || batch == 0) {
        return MT_OK;
    }
    mt_tensor *ta = NULL, *tb = NULL, *a_use, *b_use;
    cublasHandle_t h = NULL;
    mt_status st;
    if ((st = handle_for(mt_tensor_device(C), &h))) {
        return st;
    }
    if (k == 0) {
        return scale(h, C, beta_v);
    }
    if ((st = usable(A, &ta, &a_use)) || (st = usable(B, &tb, &b_use))) {
        goto out_release;
    }
    if (!fits_int(m) || !fits_int(n) || !fits_int(k) || !fits_int(batch)) {
        st = mt_fail(MT_ENOTIMPL, "cuBLAS products of sizes beyond 2^31 are not implemented");
        goto out_release;
    }
    bool tra = false, trb = false;
    int64_t lda = 0, ldb = 0;
    layout(m, k, a_use->strides[nd - 2], a_use->strides[nd - 1], &tra, &lda);
    layout(k, n, b_use->strides[nd - 2], b_use->strides[nd - 1], &trb, &ldb);
    cublasOperation_t opa = tra ? CUBLAS_OP_T : CUBLAS_OP_N, opb = trb ? CUBLAS_OP_T : CUBLAS_OP_N;
    const void *a = mt_tensor_data(a_use), *b = mt_tensor_data(b_use);
    void *c = mt_tensor_data(C);
    int64_t sa = nd == 3 ? a_use->strides[0] : 0, sb = nd == 3 ? b_use->strides[0] : 0;
    mt_cuda_span span = library_begin(gemm_name(C->dtype, batch > 1));
    if (mt_dtype_is_complex(C->dtype)) {
        gemm_args g = {opb,        opa, (int)n, (int)m, (int)k, (int)ldb, (int)lda, (int)n,
                       (int)batch, b,   a,      c,      sb,     sa,       m * n};
        st = complex_gemm(h, C->dtype, &g, alpha_v, beta_v);
    } else if (C->dtype == MT_FLOAT32) {
        float al = (float)alpha, be = (float)beta;
        st = batch == 1
                 ? mt_cublas_check(cublasSgemm(h, opb, opa, (int)n, (int)m, (int)k, &al, b,
                                               (int)ldb, a, (int)lda, &be, c, (int)n))
                 : mt_cublas_check(cublasSgemmStridedBatched(h, opb, opa, (int)n, (int)m, (int)k,
                                                             &al, b, (int)ldb, sb, a, (int)lda, sa,
                                                             &be, c, (int)n, m * n, (int)batch));
    } else {
        st = batch == 1 ? mt_cublas_check(cublasDgemm(h, opb, opa, (int)n, (int)m, (int)k, &alpha,
                                                      b, (int)ldb, a, (int)lda, &beta, c, (int)n))
                        : mt_cublas_check(cublasDgemmStridedBatched(h, opb, opa, (int)n, (int)m,
                                                                    (int)k, &alpha, b, (int)ldb, sb,
                                                                    a, (int)lda, sa, &beta, c,
                                                                    (int)n, m * n, (int)batch));
    }
    mt_cuda_span_end(&span);
out_release:
    mt_tensor_clear(&ta);
    mt_tensor_clear(&tb);
    return st;
}

// complex64 or complex128 y = alpha op(A) x + beta y, A (rows, cols) column-major (ld lda):
// cublasCgemv or cublasZgemv, complex alpha and beta
static mt_status
complex_gemv(cublasHandle_t h, mt_dtype dt, cublasOperation_t op, int rows, int cols,
             mt_scalar alpha, const void *A, int lda, const void *x, int incx, mt_scalar beta,
             void *y)
{
    double ar = mt_scalar_to_double(alpha), ai = alpha.is_complex ? alpha.imag : 0;
    double br = mt_scalar_to_double(beta), bi = beta.is_complex ? beta.imag : 0;
    if (dt == MT_COMPLEX64) {
        cuComplex al = {(float)ar, (float)ai}, be = {(float)br, (float)bi};
        return mt_cublas_check(cublasCgemv(h, op, rows, cols, &al, A, lda, x, incx, &be, y, 1));
    }
    cuDoubleComplex al = {ar, ai}, be = {br, bi};
    return mt_cublas_check(cublasZgemv(h, op, rows, cols, &al, A, lda, x, incx, &be, y, 1));
}

/* The exported symbol of dt's gemv (the profiler's name). */
static const char *
gemv_name(mt_dtype dt)
{
    return dt == MT_FLOAT32     ? "cublasSgemv_v2"
           : dt == MT_FLOAT64   ? "cublasDgemv_v2"
           : dt == MT_COMPLEX64 ? "cublasCgemv_v2"
                                : "cublasZgemv_v2";
}

// M (r, c) with strides (s0, s1), x (c) with stride incx -> y (r) contiguous: y = al M x + be y
static mt_status
gemv(mt_tensor *M, mt_tensor *x, mt_tensor *y, mt_scalar alpha_v, mt_scalar beta_v)
{
    double alpha = mt_scalar_to_double(alpha_v), beta = mt_scalar_to_double(beta_v);
    int64_t r = M->sizes[0], c = M->sizes[1];
    if (r == 0) {
        return MT_OK;
    }
    mt_tensor *tm = NULL, *tx = NULL, *m_use, *x_use;
    cublasHandle_t h = NULL;
    mt_status st;
    if ((st = handle_for(mt_tensor_device(y), &h))) {
        return st;
    }
    if (c == 0) {
        return scale(h, y, beta_v);
    }
    if ((st = usable(M, &tm, &m_use)) || (st = usable_vec(x, &tx, &x_use))) {
        goto out_release;
    }
    if (!fits_int(r) || !fits_int(c)) {
        st = mt_fail(MT_ENOTIMPL, "cuBLAS products of sizes beyond 2^31 are not implemented");
        goto out_release;
    }
    bool trans = false;
    int64_t ld = 0;
    layout(r, c, m_use->strides[0], m_use->strides[1], &trans, &ld);
    /* row-major M is cuBLAS's (c, r) matrix: y = op(it) x with op = T; a transposed view is
     * cuBLAS's (r, c) matrix, taken as is */
    cublasOperation_t op = trans ? CUBLAS_OP_N : CUBLAS_OP_T;
    int rows = trans ? (int)r : (int)c, cols = trans ? (int)c : (int)r;
    int incx = inc_of(x_use);
    const void *mp = mt_tensor_data(m_use), *xp = mt_tensor_data(x_use);
    void *yp = mt_tensor_data(y);
    mt_cuda_span span = library_begin(gemv_name(y->dtype));
    if (mt_dtype_is_complex(y->dtype)) {
        st = complex_gemv(h, y->dtype, op, rows, cols, alpha_v, mp, (int)ld, xp, incx, beta_v, yp);
    } else if (y->dtype == MT_FLOAT32) {
        float al = (float)alpha, be = (float)beta;
        st = mt_cublas_check(
            cublasSgemv(h, op, rows, cols, &al, mp, (int)ld, xp, incx, &be, yp, 1));
    } else {
        st = mt_cublas_check(
            cublasDgemv(h, op, rows, cols, &alpha, mp, (int)ld, xp, incx, &beta, yp, 1));
    }
    mt_cuda_span_end(&span);
out_release:
    mt_tensor_clear(&tm);
    mt_tensor_clear(&tx);
    return st;
}

/* cuBLAS's products here are of float and double, and complex (gemm_dtype); kernel: PyTorch's
 * CUDA kernel name in its "not implemented" error */
static mt_status
check_float(const char *kernel, mt_dtype dt)
{
    return dt != MT_FLOAT32 && dt != MT_FLOAT64 ? mt_fail_not_implemented(kernel, "", dt) : MT_OK;
}

/* check_float for the products that also take complex64 and complex128 (all but the cuBLASLt
 * epilogue's) */
static mt_status
gemm_dtype(const char *kernel, mt_dtype dt)
{
    return mt_dtype_is_complex(dt) ? MT_OK : check_float(kernel, dt);
}

/* out (m,n) = alpha m1 @ m2 + beta out; a single real row is gemv over m2 (PyTorch does the
 * same) */
static mt_status
product(mt_tensor *m1, mt_tensor *m2, mt_tensor *out, mt_scalar alpha_v, mt_scalar beta_v)
{
    if (m1->sizes[0] != 1 || mt_dtype_is_complex(out->dtype)) {
        return gemm(m1, m2, out, alpha_v, beta_v);
    }
    /* out (1,n) = m1 (1,k) @ m2 (k,n): out^T = m2^T m1^T, gemv with the (n,k) matrix m2^T */
    mt_tensor *m2t = NULL, *x = NULL, *y = NULL;
    int64_t st_t[2] = {m2->strides[1], m2->strides[0]}, sz_t[2] = {m2->sizes[1], m2->sizes[0]};
    int64_t one = 1;
    mt_status st;
    if ((st = mt_tensor_view(m2, 2, sz_t, st_t, m2->offset, &m2t)) ||
        (st = mt_tensor_view(m1, 1, &m1->sizes[1], &m1->strides[1], m1->offset, &x)) ||
        (st = mt_tensor_view(out, 1, &out->sizes[1], &one, out->offset, &y))) {
        goto out_release;
    }
    st = gemv(m2t, x, y, alpha_v, beta_v);
out_release:
    mt_tensor_clear(&m2t);
    mt_tensor_clear(&x);
    mt_tensor_clear(&y);
    return st;
}

// self (m,k), mat2 (k,n) -> out (m,n) = self @ mat2
mt_status
mt_cuda_mm(mt_args *a)
{
    mt_tensor *m1 = a->t[0], *m2 = a->t[1];
    mt_status st = gemm_dtype("addmm_cuda", m1->dtype);
    return st ? st : product(m1, m2, a->out[0], mt_scalar_float(1.0), mt_scalar_float(0.0));
}

#define MT_LT_WORKSPACE (1 << 20) /* bytes cuBLASLt's algorithms may ask for (PyTorch's default) */

/* The descriptors of one cublasLtMatmul, destroyed together. */
typedef struct lt_plan {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, b, c;
    cublasLtMatmulPreference_t pref;
} lt_plan;

static void
lt_plan_destroy(lt_plan *p)
{
    if (p->op) {
        cublasLtMatmulDescDestroy(p->op);
    }
    if (p->a) {
        cublasLtMatrixLayoutDestroy(p->a);
    }
    if (p->b) {
        cublasLtMatrixLayoutDestroy(p->b);
    }
    if (p->c) {
        cublasLtMatrixLayoutDestroy(p->c);
    }
    if (p->pref) {
        cublasLtMatmulPreferenceDestroy(p->pref);
    }
}

/* A bias PyTorch's gemm_and_bias takes: self of out's dtype holding one value per column of out
 * (m, n), dense along it: (n) or (1, n), or (m, n) expanded from it (row stride 0). */
static bool
is_bias(const mt_tensor *self, const mt_tensor *out)
{
    int64_t n = out->sizes[1];
    int d = self->ndim - 1;
    if (self->dtype != out->dtype || self->ndim < 1 || self->ndim > 2 || self->sizes[d] != n ||
        (n > 1 && self->strides[d] != 1)) {
        return false;
    }
    return self->ndim == 1 || self->sizes[0] == 1 || self->strides[0] == 0;
}

/* The activation after addmm's product: none (addmm), relu or gelu (_addmm_activation's
 * use_gelu; tanh-approximated, as cuBLASLt's GELU epilogue and PyTorch's CUDA fallback are). */
typedef enum activation { ACT_NONE, ACT_RELU, ACT_GELU } activation;

// mat1 (m,k), mat2 (k,n), bias (n) dense -> out (m,n) contiguous = act(alpha mat1 @ mat2 + bias),
// one cublasLtMatmul: to cuBLAS (column-major) out^T (n,m) = alpha op(mat2^T) op(mat1^T) + bias,
// the bias one value per row of out^T, which is what CUBLASLT_EPILOGUE_BIAS adds (RELU_BIAS and
// GELU_BIAS then apply act). *done false (and nothing computed): cuBLASLt has no algorithm for it
// (a misaligned operand or bias, say).
static mt_status
lt_addmm(mt_tensor *m1, mt_tensor *m2, mt_tensor *bias, mt_tensor *out, double alpha,
         activation act, bool *done)
{
    int64_t m = out->sizes[0], n = out->sizes[1], k = m1->sizes[1];
    mt_tensor *ta = NULL, *tb = NULL, *a_use, *b_use, *ws = NULL;
    mt_device dev = mt_tensor_device(out);
    bool dbl = out->dtype == MT_FLOAT64, tf32 = !dbl && mt_cuda_lib_flag_on(MT_MATMUL_ALLOW_TF32);
    cublasLtHandle_t h = NULL;
    lt_plan p = {0};
    mt_status st;
    if ((st = mt_cuda_thread_handle(&cublaslt_handles, dev, (void **)&h)) ||
        (st = usable(m1, &ta, &a_use)) || (st = usable(m2, &tb, &b_use))) {
        goto out_release;
    }
    bool tra = false, trb = false;
    int64_t lda = 0, ldb = 0;
    layout(m, k, a_use->strides[0], a_use->strides[1], &tra, &lda);
    layout(k, n, b_use->strides[0], b_use->strides[1], &trb, &ldb);
    int32_t opa = trb ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tra ? CUBLAS_OP_T : CUBLAS_OP_N;
    uint32_t epilogue = act == ACT_RELU   ? CUBLASLT_EPILOGUE_RELU_BIAS
                        : act == ACT_GELU ? CUBLASLT_EPILOGUE_GELU_BIAS
                                          : CUBLASLT_EPILOGUE_BIAS;
    const void *bias_ptr = mt_tensor_data(bias);
    uint64_t max_ws = MT_LT_WORKSPACE;
    cudaDataType_t type = dbl ? CUDA_R_64F : CUDA_R_32F;
    cublasComputeType_t compute = dbl ? CUBLAS_COMPUTE_64F
                                      : (tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F);
    /* cuBLAS's A is mat2 seen column-major, (n,k) as it lies or (k,n) transposed; B is mat1 */
    if ((st = mt_cublas_check(cublasLtMatmulDescCreate(&p.op, compute, type))) ||
        (st = mt_cublas_check(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA,
                                                             &opa, sizeof(opa)))) ||
        (st = mt_cublas_check(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB,
                                                             &opb, sizeof(opb)))) ||
        (st = mt_cublas_check(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                                             &epilogue, sizeof(epilogue)))) ||
        (st = mt_cublas_check(cublasLtMatmulDescSetAttribute(
             p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_ptr, sizeof(bias_ptr)))) ||
        (st = mt_cublas_check(cublasLtMatrixLayoutCreate(
             &p.a, type, trb ? (uint64_t)k : (uint64_t)n, trb ? (uint64_t)n : (uint64_t)k, ldb))) ||
        (st = mt_cublas_check(cublasLtMatrixLayoutCreate(
             &p.b, type, tra ? (uint64_t)m : (uint64_t)k, tra ? (uint64_t)k : (uint64_t)m, lda))) ||
        (st = mt_cublas_check(
             cublasLtMatrixLayoutCreate(&p.c, type, (uint64_t)n, (uint64_t)m, n))) ||
        (st = mt_cublas_check(cublasLtMatmulPreferenceCreate(&p.pref))) ||
        (st = mt_cublas_check(cublasLtMatmulPreferenceSetAttribute(
             p.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws, sizeof(max_ws))))) {
        goto out_release;
    }
    cublasLtMatmulHeuristicResult_t algo;
    int found = 0;
    cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(h, p.op, p.a, p.b, p.c, p.c, p.pref, 1,
                                                       &algo, &found);
    if (hs == CUBLAS_STATUS_NOT_SUPPORTED || (hs == CUBLAS_STATUS_SUCCESS && found == 0)) {
        goto out_release; /* not done: the caller takes the legacy path */
    }
    if ((st = mt_cublas_check(hs))) {
        goto out_release;
    }
    *done = true;
    if (algo.workspaceSize > 0) {
        int64_t words = (int64_t)((algo.workspaceSize + 7) / 8);
        if ((st = mt_tensor_empty(1, &words, MT_FLOAT64, dev, &ws))) {
            goto out_release;
        }
    }
    double zero = 0.0;
    float alf = (float)alpha, zerof = 0.0f;
    const void *al = dbl ? (const void *)&alpha : (const void *)&alf;
    const void *be = dbl ? (const void *)&zero : (const void *)&zerof;
    void *c = mt_tensor_data(out);
    mt_cuda_span span = library_begin("cublasLtMatmul");
    st = mt_cublas_check(cublasLtMatmul(h, p.op, al, mt_tensor_data(b_use), p.a,
                                        mt_tensor_data(a_use), p.b, be, c, p.c, c, p.c, &algo.algo,
                                        ws ? mt_tensor_data(ws) : NULL, algo.workspaceSize,
                                        mt_cuda_current_stream(dev.index)));
    mt_cuda_span_end(&span);
out_release:
    lt_plan_destroy(&p);
    mt_tensor_clear(&ta);
    mt_tensor_clear(&tb);
    mt_tensor_clear(&ws);
    return st;
}

// self broadcast to (m,n), mat1 (m,k), mat2 (k,n) -> out = act(beta self + alpha mat1 @ mat2)
static mt_status
addmm(mt_args *a, activation act)
{
    mt_tensor *self = a->t[0], *m1 = a->t[1], *m2 = a->t[2], *out = a->out[0];
    const mt_scalar beta_v = a->plan->product.beta, alpha_v = a->plan->product.alpha;
    double beta = mt_scalar_to_double(beta_v), alpha = mt_scalar_to_double(alpha_v);
    mt_status st = gemm_dtype("addmm_cuda", m1->dtype);
    if (st) {
        return st;
    }
    /* linear's case, as PyTorch's useLtInterface: a real bias vector, beta 1, more than one row
     * and column (one row is gemv's), sizes cuBLAS takes */
    int64_t m = out->sizes[0], n = out->sizes[1], k = m1->sizes[1];
    if (!mt_dtype_is_complex(out->dtype) && beta == 1 && m > 1 && n > 1 && k > 0 && fits_int(m) &&
        fits_int(n) && fits_int(k) && is_bias(self, out)) {
        bool done = false;
        st = lt_addmm(m1, m2, self, out, alpha, act, &done);
        if (st || done) {
            return st;
        }
    }
    /* beta == 0 ignores self entirely, NaN included, as BLAS and PyTorch do */
    if (!is_zero(beta_v) && (st = mt_cuda_copy_into(out, self))) {
        return st;
    }
    st = product(m1, m2, out, alpha_v, beta_v);
    return st || act == ACT_NONE ? st : mt_activate_result(out, act == ACT_GELU, "tanh");
}

mt_status
mt_cuda_addmm(mt_args *a)
{
    return addmm(a, ACT_NONE);
}

// _addmm_activation: addmm, then relu, or (use_gelu) gelu approximated by tanh, as PyTorch's CUDA
mt_status
mt_cuda__addmm_activation(mt_args *a)
{
    return addmm(a, a->b[0] ? ACT_GELU : ACT_RELU);
}

/* out (m) = beta self + alpha mat @ vec; self NULL (mv) or broadcast to (m) */
static mt_status
matvec(mt_args *a, mt_tensor *self, mt_tensor *mat, mt_tensor *vec, mt_scalar beta, mt_scalar alpha)
{
    mt_tensor *out = a->out[0];
    mt_status st = gemm_dtype("addmv_impl_cuda", mat->dtype);
    if (st) {
        return st;
    }
    /* beta == 0 ignores self entirely, NaN included, as BLAS and PyTorch do */
    if (self != NULL && !is_zero(beta) && (st = mt_cuda_copy_into(out, self))) {
        return st;
    }
    return gemv(mat, vec, out, alpha, self != NULL ? beta : mt_scalar_float(0.0));
}

// self (m,k), vec (k) -> out (m) = self @ vec
mt_status
mt_cuda_mv(mt_args *a)
{
    return matvec(a, NULL, a->t[0], a->t[1], mt_scalar_float(0.0), mt_scalar_float(1.0));
}

// self broadcast to (m), mat (m,k), vec (k) -> out (m) = beta self + alpha mat @ vec
mt_status
mt_cuda_addmv(mt_args *a)
{
    const mt_product_plan *p = &a->plan->product;
    return matvec(a, a->t[0], a->t[1], a->t[2], p->beta, p->alpha);
}

/* out (b,m,n) = beta self + alpha b1 @ b2 for each b; self NULL (bmm) or broadcast to it */
static mt_status
batched(mt_args *a, mt_tensor *self, mt_tensor *b1, mt_tensor *b2, mt_scalar beta, mt_scalar alpha,
        const char *kernel)
{
    mt_tensor *out = a->out[0];
    mt_status st = gemm_dtype(kernel, b1->dtype);
    if (st) {
        return st;
    }
    if (self != NULL && !is_zero(beta) && (st = mt_cuda_copy_into(out, self))) {
        return st;
    }
    return gemm(b1, b2, out, alpha, self != NULL ? beta : mt_scalar_float(0.0));
}

// self (b,m,k), mat2 (b,k,n) -> out (b,m,n)
mt_status
mt_cuda_bmm(mt_args *a)
{
    return batched(a, NULL, a->t[0], a->t[1], mt_scalar_float(0.0), mt_scalar_float(1.0),
                   "bmm_cuda");
}

// self broadcast to (b,m,n), batch1 (b,m,k), batch2 (b,k,n) -> out = beta self + alpha b1 @ b2
mt_status
mt_cuda_baddbmm(mt_args *a)
{
    const mt_product_plan *p = &a->plan->product;
    return batched(a, a->t[0], a->t[1], a->t[2], p->beta, p->alpha, "baddbmm_cuda");
}

// x (n), y (n) -> out () = sum x * y, written by cuBLAS on the device (no host sync)
static mt_status
dot_into(mt_tensor *x, mt_tensor *y, mt_tensor *out)
{
    int64_t n = x->sizes[0];
    mt_tensor *tx = NULL, *ty = NULL, *xu, *yu;
    cublasHandle_t h = NULL;
    mt_status st;
    if ((st = handle_for(mt_tensor_device(out), &h))) {
        return st;
    }
    if (n == 0) {
        return scale(h, out, mt_scalar_float(0.0));
    }
    if (!fits_int(n)) {
        return mt_fail(MT_ENOTIMPL, "cuBLAS products of sizes beyond 2^31 are not implemented");
    }
    if ((st = usable_vec(x, &tx, &xu)) || (st = usable_vec(y, &ty, &yu)) ||
        (st = mt_cublas_check(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE)))) {
        goto out_release;
    }
    const void *xp = mt_tensor_data(xu), *yp = mt_tensor_data(yu);
    void *r = mt_tensor_data(out);
    const int ix = inc_of(xu), iy = inc_of(yu);
    static const char *const names[4] = {"cublasSdot_v2", "cublasDdot_v2", "cublasCdotu_v2",
                                         "cublasZdotu_v2"};
    const mt_dtype dt = out->dtype;
    mt_cuda_span span = library_begin(names[dt == MT_FLOAT32     ? 0
                                            : dt == MT_FLOAT64   ? 1
                                            : dt == MT_COMPLEX64 ? 2
                                                                 : 3]);
    st = dt == MT_FLOAT32     ? mt_cublas_check(cublasSdot(h, (int)n, xp, ix, yp, iy, r))
         : dt == MT_FLOAT64   ? mt_cublas_check(cublasDdot(h, (int)n, xp, ix, yp, iy, r))
         : dt == MT_COMPLEX64 ? mt_cublas_check(cublasCdotu(h, (int)n, xp, ix, yp, iy, r))
                              : mt_cublas_check(cublasZdotu(h, (int)n, xp, ix, yp, iy, r));
    mt_cuda_span_end(&span);
out_release:
    mt_tensor_clear(&tx);
    mt_tensor_clear(&ty);
    return st;
}

// self (n), tensor (n) -> out () = sum self * tensor
mt_status
mt_cuda_dot(mt_args *a)
{
    mt_status st = gemm_dtype("dot", a->t[0]->dtype);
    return st ? st : dot_into(a->t[0], a->t[1], a->out[0]);
}

#endif /* MT_CUDA_CUBLAS: without it, ops.def's CUBLAS rows have no kernel here */
