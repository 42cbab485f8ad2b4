/* The emulated cuBLAS (include/cublas_v2.h) on the CPU: handles, streams, pointer modes and the
 * S/D scal, dot, gemv, gemm and gemmStridedBatched of cuda/blas.c, column-major exactly as cuBLAS
 * documents them, accumulated in double, run on the calling thread (in the asynchronous mode
 * the products are queued on their stream like kernels once checked, emu.h).
 *
 * It exists to find bugs in the backend, so it is strict: each argument cuBLAS documents as
 * checked returns cuBLAS's status, and where a GPU would fault or compute garbage (a device
 * pointer whose extent leaves its cudaMalloc block, a host scalar in device pointer mode, a stream
 * or a current device other than the handle's, an output overlapping an input) the call prints
 * one line naming the function and the problem to stderr and returns
 * CUBLAS_STATUS_EXECUTION_FAILED. It must never be lenient where cuBLAS would not be. */
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/math.h"
#include "cublas_emu.h"
#include "cublas_v2.h"
#include "emu.h"

struct cublasContext {
    struct cublasContext *next; /* the list of live handles */
    int device;                 /* current at cublasCreate: the handle works only there */
    cudaStream_t stream;
    cublasPointerMode_t mode;
    cublasMath_t math;
};

/* Live handles, so that a destroyed or made-up handle is refused rather than read. */
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cublasContext *live;

/* One call's view of its handle, copied under the lock (another thread may reconfigure it). */
typedef struct call {
    const char *fn; /* the exported symbol, for messages */
    int device;
    cudaStream_t stream;
    cublasPointerMode_t mode;
    cublasMath_t math;
} call;

static cublasStatus_t complain(cublasStatus_t status, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

cublasStatus_t
mt_emu_cublas_vcomplain(const char *lib, cublasStatus_t status, const char *fn, const char *fmt,
                        va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    fprintf(stderr, "%s emulation: %s: %s (%s)\n", lib, fn, msg, cublasGetStatusName(status));
    return status;
}

static cublasStatus_t
complain(cublasStatus_t status, const char *fn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cublasStatus_t s = mt_emu_cublas_vcomplain("cuBLAS", status, fn, fmt, ap);
    va_end(ap);
    return s;
}

const char *
cublasGetStatusName(cublasStatus_t status)
{
    switch (status) {
    case CUBLAS_STATUS_SUCCESS:
        return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
        return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
        return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
        return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
        return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR:
        return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED:
        return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR:
        return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED:
        return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR:
        return "CUBLAS_STATUS_LICENSE_ERROR";
    }
    return "<unknown>";
}

const char *
cublasGetStatusString(cublasStatus_t status)
{
    switch (status) {
    case CUBLAS_STATUS_SUCCESS:
        return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED:
        return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED:
        return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE:
        return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_ARCH_MISMATCH:
        return "an absent device architectural feature is required";
    case CUBLAS_STATUS_MAPPING_ERROR:
        return "an access to GPU memory space failed";
    case CUBLAS_STATUS_EXECUTION_FAILED:
        return "the GPU program failed to execute";
    case CUBLAS_STATUS_INTERNAL_ERROR:
        return "an internal operation failed";
    case CUBLAS_STATUS_NOT_SUPPORTED:
        return "the functionality requested is not supported";
    case CUBLAS_STATUS_LICENSE_ERROR:
        return "error detected trying to check the license";
    }
    return "unknown error";
}

/* ---- handles ---------------------------------------------------------------------------- */

static struct cublasContext **
find_live(cublasHandle_t h)
{
    struct cublasContext **p = &live;
    while (*p != NULL && *p != h) {
        p = &(*p)->next;
    }
    return *p == NULL ? NULL : p;
}

static cublasStatus_t
no_handle(const char *fn, cublasHandle_t h)
{
    if (h == NULL) {
        return complain(CUBLAS_STATUS_NOT_INITIALIZED, fn, "the handle is NULL");
    }
    return complain(CUBLAS_STATUS_NOT_INITIALIZED, fn, "handle %p was destroyed or never created",
                    (void *)h);
}

/* c <- h's state, then h's stream or pointer mode <- *stream or *mode where not NULL, under the
 * lock; NOT_INITIALIZED for a NULL, destroyed or unknown handle. */
static cublasStatus_t
access_handle(cublasHandle_t h, const char *fn, call *c, const cudaStream_t *stream,
              const cublasPointerMode_t *mode)
{
    c->fn = fn;
    pthread_mutex_lock(&handles_lock);
    bool found = h != NULL && find_live(h) != NULL;
    if (found) {
        c->device = h->device;
        c->stream = h->stream;
        c->mode = h->mode;
        c->math = h->math;
        h->stream = stream != NULL ? *stream : h->stream;
        h->mode = mode != NULL ? *mode : h->mode;
    }
    pthread_mutex_unlock(&handles_lock);
    return found ? CUBLAS_STATUS_SUCCESS : no_handle(fn, h);
}

static cublasStatus_t
handle_state(cublasHandle_t h, const char *fn, call *c)
{
    return access_handle(h, fn, c, NULL, NULL);
}

/* handle_state for a getter, whose output pointer out must not be NULL */
static cublasStatus_t
getter(cublasHandle_t h, const char *fn, call *c, const void *out)
{
    cublasStatus_t s = handle_state(h, fn, c);
    if (s == CUBLAS_STATUS_SUCCESS && out == NULL) {
        s = complain(CUBLAS_STATUS_INVALID_VALUE, fn, "the output pointer is NULL");
    }
    return s;
}

cublasStatus_t
cublasCreate_v2(cublasHandle_t *handle)
{
    if (handle == NULL) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, "cublasCreate_v2", "handle is NULL");
    }
    struct cublasContext *h = calloc(1, sizeof(*h));
    if (h == NULL) {
        return CUBLAS_STATUS_ALLOC_FAILED;
    }
    h->device = mt_emu_current_device();
    h->stream = NULL;
    h->mode = CUBLAS_POINTER_MODE_HOST;
    pthread_mutex_lock(&handles_lock);
    h->next = live;
    live = h;
    pthread_mutex_unlock(&handles_lock);
    *handle = h;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasDestroy_v2(cublasHandle_t handle)
{
    pthread_mutex_lock(&handles_lock);
    struct cublasContext **p = handle == NULL ? NULL : find_live(handle);
    if (p != NULL) {
        *p = handle->next;
    }
    pthread_mutex_unlock(&handles_lock);
    if (p == NULL) {
        return no_handle("cublasDestroy_v2", handle);
    }
    free(handle);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasGetVersion_v2(cublasHandle_t handle, int *version)
{
    call c;
    cublasStatus_t s = getter(handle, "cublasGetVersion_v2", &c, version);
    if (s == CUBLAS_STATUS_SUCCESS) {
        *version = CUBLAS_VERSION;
    }
    return s;
}

cublasStatus_t
cublasSetStream_v2(cublasHandle_t handle, cudaStream_t streamId)
{
    int device;
    call c;
    /* a stream's device is checked at each call (NULL's is whichever device is current then);
     * here only that it exists */
    if (mt_emu_stream_device(streamId, &device) != cudaSuccess) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, "cublasSetStream_v2",
                        "stream %p was destroyed or never created", (void *)streamId);
    }
    return access_handle(handle, "cublasSetStream_v2", &c, &streamId, NULL);
}

cublasStatus_t
cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *streamId)
{
    call c = {0}; /* getter fills it on success (gcc cannot see that at -O3) */
    cublasStatus_t s = getter(handle, "cublasGetStream_v2", &c, streamId);
    if (s == CUBLAS_STATUS_SUCCESS) {
        *streamId = c.stream;
    }
    return s;
}

cublasStatus_t
cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t *mode)
{
    call c = {0}; /* getter fills it on success (gcc cannot see that at -O3) */
    cublasStatus_t s = getter(handle, "cublasGetPointerMode_v2", &c, mode);
    if (s == CUBLAS_STATUS_SUCCESS) {
        *mode = c.mode;
    }
    return s;
}

cublasStatus_t
cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    call c;
    int base = (int)mode & ~(int)CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
    if (base != CUBLAS_DEFAULT_MATH && base != CUBLAS_TENSOR_OP_MATH &&
        base != CUBLAS_PEDANTIC_MATH && base != CUBLAS_TF32_TENSOR_OP_MATH) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, "cublasSetMathMode",
                        "mode %d is not a cublasMath_t", (int)mode);
    }
    cublasStatus_t s = handle_state(handle, "cublasSetMathMode", &c);
    if (s == CUBLAS_STATUS_SUCCESS) {
        pthread_mutex_lock(&handles_lock);
        if (find_live(handle) != NULL) { /* not destroyed meanwhile */
            handle->math = mode;
        }
        pthread_mutex_unlock(&handles_lock);
    }
    return s;
}

cublasStatus_t
cublasGetMathMode(cublasHandle_t handle, cublasMath_t *mode)
{
    call c = {0}; /* getter fills it on success (gcc cannot see that at -O3) */
    cublasStatus_t s = getter(handle, "cublasGetMathMode", &c, mode);
    if (s == CUBLAS_STATUS_SUCCESS) {
        *mode = c.math;
    }
    return s;
}

cublasStatus_t
cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode)
{
    call c;
    if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, "cublasSetPointerMode_v2",
                        "mode %d is not a cublasPointerMode_t", (int)mode);
    }
    return access_handle(handle, "cublasSetPointerMode_v2", &c, NULL, &mode);
}

/* ---- the emulation's checks -------------------------------------------------------------- */

/* The handle works only on its own device, current, with a live stream of that device. */
static cublasStatus_t
check_placement(const call *c)
{
    int cur = mt_emu_current_device(), sdev = -1;
    if (cur != c->device) {
        return complain(CUBLAS_STATUS_EXECUTION_FAILED, c->fn,
                        "the handle was created on device %d but device %d is current", c->device,
                        cur);
    }
    if (mt_emu_stream_device(c->stream, &sdev) != cudaSuccess) {
        return complain(CUBLAS_STATUS_EXECUTION_FAILED, c->fn,
                        "the handle's stream %p was destroyed or never created", (void *)c->stream);
    }
    if (sdev != c->device) {
        return complain(CUBLAS_STATUS_EXECUTION_FAILED, c->fn,
                        "the handle's stream %p belongs to device %d, the handle to device %d",
                        (void *)c->stream, sdev, c->device);
    }
    return CUBLAS_STATUS_SUCCESS;
}

/* The elements an operand touches: [lo, hi) relative to its pointer, in elements. */
typedef struct span {
    int64_t lo, hi;
} span;

/* a column-major (rows, cols) matrix with leading dimension ld */
static span
mat_span(int64_t rows, int64_t cols, int64_t ld)
{
    span s = {0, rows == 0 || cols == 0 ? 0 : (cols - 1) * ld + rows};
    return s;
}

/* n elements inc apart (a negative inc walks from the far end, still from the pointer on) */
static span
vec_span(int64_t n, int64_t inc)
{
    span s = {0, n <= 0 ? 0 : 1 + (n - 1) * (inc < 0 ? -inc : inc)};
    return s;
}

/* s repeated batch times, stride elements apart; false on overflow */
static bool
batch_span(span *s, int64_t stride, int64_t batch)
{
    int64_t reach;
    if (s->hi == s->lo || batch <= 1) {
        return true;
    }
    if (__builtin_mul_overflow(stride, batch - 1, &reach)) {
        return false;
    }
    if (reach < 0) {
        s->lo += reach;
    } else if (__builtin_add_overflow(s->hi, reach, &s->hi)) {
        return false;
    }
    return true;
}

/* An operand's bytes, for the range and overlap checks. */
typedef struct extent {
    const char *name;
    uintptr_t start;
    size_t bytes;
} extent;

/* p's extent s of esize-byte elements must lie in one live block of the handle's device. */
static cublasStatus_t
check_device(const call *c, extent *e, const char *name, const void *p, span s, size_t esize)
{
    int dev = -1;
    int64_t lo_bytes, elems;
    e->name = name;
    e->start = (uintptr_t)p;
    e->bytes = 0;
    if (s.hi == s.lo) {
        return CUBLAS_STATUS_SUCCESS;
    }
    if (__builtin_mul_overflow(s.lo, (int64_t)esize, &lo_bytes) ||
        __builtin_sub_overflow(s.hi, s.lo, &elems) || (uint64_t)elems > SIZE_MAX / esize) {
        return complain(CUBLAS_STATUS_EXECUTION_FAILED, c->fn, "%s's extent overflows", name);
    }
    e->start += (uintptr_t)lo_bytes; /* wraps for lo < 0, as intended */
    e->bytes = (size_t)elems * esize;
    if (p == NULL) {
        return complain(CUBLAS_STATUS_EXECUTION_FAILED, c->fn, "%s is NULL", name);
    }
    if (!mt_emu_device_range((const void *)e->start, e->bytes, &dev)) {
        return complain(CUBLAS_STATUS_EXECUTION_FAILED, c->fn,
                        "%s (%p, %zu bytes from %p) is not inside one live device allocation "
                        "(a host pointer, a freed block or an extent past its end)",
                        name, p, e->bytes, (void *)e->start);
    }
    if (dev != c->device) {
        return complain(CUBLAS_STATUS_EXECUTION_FAILED, c->fn,
                        "%s (%p) is memory of device %d, the handle's device is %d", name, p, dev,
                        c->device);
    }
    return CUBLAS_STATUS_SUCCESS;
}

/* An output overlapping an input is a race on a GPU (and undefined for cuBLAS). */
static cublasStatus_t
check_disjoint(const call *c, const extent *out, const extent *in)
{
    if (out->bytes == 0 || in->bytes == 0 || out->start >= in->start + in->bytes ||
        in->start >= out->start + out->bytes) {
        return CUBLAS_STATUS_SUCCESS;
    }
    return complain(CUBLAS_STATUS_EXECUTION_FAILED, c->fn, "the output %s overlaps the input %s",
                    out->name, in->name);
}

/* A scalar (alpha, beta, dot's result) where the pointer mode says: host memory in
 * CUBLAS_POINTER_MODE_HOST, the handle's device memory in CUBLAS_POINTER_MODE_DEVICE. */
static cublasStatus_t
check_scalar(const call *c, const char *name, const void *p, size_t esize)
{
    int dev = -1;
    if (p == NULL) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, c->fn, "%s is NULL", name);
    }
    if (c->mode == CUBLAS_POINTER_MODE_DEVICE) {
        extent e;
        span s = {0, 1};
        return check_device(c, &e, name, p, s, esize);
    }
    if (mt_emu_device_range(p, 1, &dev)) {
        return complain(CUBLAS_STATUS_EXECUTION_FAILED, c->fn,
                        "%s (%p) is device memory but the pointer mode is "
                        "CUBLAS_POINTER_MODE_HOST",
                        name, p);
    }
    return CUBLAS_STATUS_SUCCESS;
}

/* ---- element access ---------------------------------------------------------------------- */

static double
get(const void *p, int64_t i, bool dbl)
{
    return dbl ? ((const double *)p)[i] : ((const float *)p)[i];
}

static void
put(void *p, int64_t i, double v, bool dbl)
{
    if (dbl) {
        ((double *)p)[i] = v;
    } else {
        ((float *)p)[i] = (float)v;
    }
}

#define at mt_emu_at

static void
ran(const call *c, const char *kernel, uint64_t start)
{
    mt_emu_kernel_ran(kernel, c->device, c->stream, start, mt_emu_now_ns());
}

/* ---- level 1 ----------------------------------------------------------------------------- */

// x (n, inc incx) = alpha x
static cublasStatus_t
scal(cublasHandle_t h, const char *fn, int n, const void *alpha, void *x, int incx, bool dbl)
{
    MT_EMU_DEVICE_WORK_SCOPE(); /* its device memory, alpha and beta too in device mode */
    size_t es = dbl ? sizeof(double) : sizeof(float);
    call c;
    extent ex;
    cublasStatus_t s = handle_state(h, fn, &c);
    /* BLAS's quick return: nothing to scale for n <= 0 or incx <= 0 */
    if (s || n <= 0 || incx <= 0) {
        return s;
    }
    if ((s = check_placement(&c)) || (s = check_scalar(&c, "alpha", alpha, es)) ||
        (s = check_device(&c, &ex, "x", x, vec_span(n, incx), es))) {
        return s;
    }
    mt_emu_stream_drain(c.stream); /* the asynchronous mode: the stream's earlier work first */
    uint64_t start = mt_emu_now_ns();
    double a = get(alpha, 0, dbl);
    for (int64_t i = 0; i < n; i++) {
        put(x, i * incx, a * get(x, i * incx, dbl), dbl);
    }
    ran(&c, dbl ? "emu_cublas_dscal" : "emu_cublas_sscal", start);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasSscal_v2(cublasHandle_t handle, int n, const float *alpha, float *x, int incx)
{
    return scal(handle, "cublasSscal_v2", n, alpha, x, incx, false);
}

cublasStatus_t
cublasDscal_v2(cublasHandle_t handle, int n, const double *alpha, double *x, int incx)
{
    return scal(handle, "cublasDscal_v2", n, alpha, x, incx, true);
}

// x (n, inc incx), y (n, inc incy) -> *result = sum x y (0 for n <= 0), host or device memory;
// complex (cplx): sum x y, or sum conj(x) y (conj_x: dotc)
cublasStatus_t
mt_emu_cublas_dot(cublasHandle_t h, const char *fn, int n, const void *x, int incx, const void *y,
                  int incy, void *result, bool dbl, bool cplx, bool conj_x)
{
    MT_EMU_DEVICE_WORK_SCOPE(); /* its device memory, alpha and beta too in device mode */
    size_t es = (dbl ? sizeof(double) : sizeof(float)) * (cplx ? 2 : 1);
    call c;
    extent ex, ey;
    cublasStatus_t s = handle_state(h, fn, &c);
    if (s || (s = check_placement(&c)) || (s = check_scalar(&c, "result", result, es)) ||
        (s = check_device(&c, &ex, "x", x, vec_span(n, incx), es)) ||
        (s = check_device(&c, &ey, "y", y, vec_span(n, incy), es))) {
        return s;
    }
    mt_emu_stream_drain(c.stream); /* the asynchronous mode: the stream's earlier work first */
    uint64_t start = mt_emu_now_ns();
    if (cplx) {
        static const char *const names[2][2] = {{"emu_cublas_cdotu", "emu_cublas_cdotc"},
                                                {"emu_cublas_zdotu", "emu_cublas_zdotc"}};
        mt_emu_zdot_compute(n, x, incx, y, incy, result, dbl, conj_x);
        ran(&c, names[dbl][conj_x], start);
        return CUBLAS_STATUS_SUCCESS;
    }
    double acc = 0;
    for (int64_t i = 0; i < n; i++) {
        acc += get(x, at(i, n, incx), dbl) * get(y, at(i, n, incy), dbl);
    }
    put(result, 0, acc, dbl);
    ran(&c, dbl ? "emu_cublas_ddot" : "emu_cublas_sdot", start);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasSdot_v2(cublasHandle_t handle, int n, const float *x, int incx, const float *y, int incy,
              float *result)
{
    return mt_emu_cublas_dot(handle, "cublasSdot_v2", n, x, incx, y, incy, result, false, false,
                             false);
}

cublasStatus_t
cublasDdot_v2(cublasHandle_t handle, int n, const double *x, int incx, const double *y, int incy,
              double *result)
{
    return mt_emu_cublas_dot(handle, "cublasDdot_v2", n, x, incx, y, incy, result, true, false,
                             false);
}

/* ---- level 2 ----------------------------------------------------------------------------- */

static bool
valid_op(cublasOperation_t op)
{
    return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

static const char *
gemv_kernel(cublasOperation_t op, bool dbl, bool cplx)
{
    static const char *names[4][3] = {
        {"emu_cublas_sgemv_n", "emu_cublas_sgemv_t", "emu_cublas_sgemv_c"},
        {"emu_cublas_dgemv_n", "emu_cublas_dgemv_t", "emu_cublas_dgemv_c"},
        {"emu_cublas_cgemv_n", "emu_cublas_cgemv_t", "emu_cublas_cgemv_c"},
        {"emu_cublas_zgemv_n", "emu_cublas_zgemv_t", "emu_cublas_zgemv_c"},
    };
    return names[2 * cplx + dbl][op];
}

// A (m, n) column-major (ld lda), x (n or m), y (m or n) -> y = alpha op(A) x + beta y, of
// complex elements, alpha and beta when cplx
cublasStatus_t
mt_emu_cublas_gemv(cublasHandle_t h, const char *fn, cublasOperation_t op, int m, int n,
                   const void *alpha, const void *A, int lda, const void *x, int incx,
                   const void *beta, void *y, int incy, bool dbl, bool cplx)
{
    MT_EMU_DEVICE_WORK_SCOPE(); /* its device memory, alpha and beta too in device mode */
    size_t es = (dbl ? sizeof(double) : sizeof(float)) * (cplx ? 2 : 1);
    call c;
    extent ea, ex, ey;
    cublasStatus_t s = handle_state(h, fn, &c);
    if (s) {
        return s;
    }
    if (!valid_op(op)) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, fn, "trans %d is not an operation", (int)op);
    }
    if (m < 0 || n < 0) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, fn, "m %d or n %d < 0", m, n);
    }
    if (incx == 0 || incy == 0) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, fn, "incx %d or incy %d is 0", incx, incy);
    }
    if (lda < (m > 1 ? m : 1)) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, fn, "lda %d < max(1, m = %d)", lda, m);
    }
    if (alpha == NULL || beta == NULL) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, fn, "alpha or beta is NULL");
    }
    /* BLAS's quick return: y is left alone, even when beta != 1 */
    if (m == 0 || n == 0) {
        return CUBLAS_STATUS_SUCCESS;
    }
    int64_t xn = op == CUBLAS_OP_N ? n : m, yn = op == CUBLAS_OP_N ? m : n;
    if ((s = check_placement(&c)) || (s = check_scalar(&c, "alpha", alpha, es)) ||
        (s = check_scalar(&c, "beta", beta, es))) {
        return s;
    }
    mt_emu_stream_drain(c.stream); /* the asynchronous mode: the stream's earlier work first */
    double al = get(alpha, 0, dbl), be = get(beta, 0, dbl);
    /* extents are checked even when alpha == 0 lets BLAS skip reading A and x: in device
     * pointer mode cuBLAS's kernels cannot know alpha before they run */
    if ((s = check_device(&c, &ea, "A", A, mat_span(m, n, lda), es)) ||
        (s = check_device(&c, &ex, "x", x, vec_span(xn, incx), es)) ||
        (s = check_device(&c, &ey, "y", y, vec_span(yn, incy), es)) ||
        (s = check_disjoint(&c, &ey, &ea)) || (s = check_disjoint(&c, &ey, &ex))) {
        return s;
    }
    uint64_t start = mt_emu_now_ns();
    if (cplx) {
        const double alz[2] = {al, get(alpha, 1, dbl)}, bez[2] = {be, get(beta, 1, dbl)};
        mt_emu_zgemv_compute(op, m, n, alz, A, lda, x, incx, bez, y, incy, dbl);
        ran(&c, gemv_kernel(op, dbl, true), start);
        return CUBLAS_STATUS_SUCCESS;
    }
    for (int64_t i = 0; i < yn; i++) {
        double acc = 0;
        for (int64_t j = 0; al != 0 && j < xn; j++) {
            /* op N: y_i = sum_j A(i, j) x_j; op T/C: y_i = sum_j A(j, i) x_j */
            int64_t a_ij = op == CUBLAS_OP_N ? i + j * lda : j + i * lda;
            acc += get(A, a_ij, dbl) * get(x, at(j, xn, incx), dbl);
        }
        int64_t yi = at(i, yn, incy);
        /* beta == 0: y is not read, so NaN there does not propagate */
        double v = be == 0 ? 0 : be * get(y, yi, dbl);
        put(y, yi, al != 0 ? v + al * acc : v, dbl);
    }
    ran(&c, gemv_kernel(op, dbl, false), start);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasSgemv_v2(cublasHandle_t handle, cublasOperation_t trans, int m, int n, const float *alpha,
               const float *A, int lda, const float *x, int incx, const float *beta, float *y,
               int incy)
{
    return mt_emu_cublas_gemv(handle, "cublasSgemv_v2", trans, m, n, alpha, A, lda, x, incx, beta,
                              y, incy, false, false);
}

cublasStatus_t
cublasDgemv_v2(cublasHandle_t handle, cublasOperation_t trans, int m, int n, const double *alpha,
               const double *A, int lda, const double *x, int incx, const double *beta, double *y,
               int incy)
{
    return mt_emu_cublas_gemv(handle, "cublasDgemv_v2", trans, m, n, alpha, A, lda, x, incx, beta,
                              y, incy, true, false);
}

/* ---- level 3 ----------------------------------------------------------------------------- */

/* "emu_cublas_{s,d,c,z}gemm[_strided_batched]_<op A><op B>", built once so that the names given
 * to mt_emu_kernel_ran live as long as the process */
static char gemm_names[4][2][3][3][48];
static pthread_once_t gemm_names_once = PTHREAD_ONCE_INIT;

static void
make_gemm_names(void)
{
    const char ops[3] = {'n', 't', 'c'}, types[4] = {'s', 'd', 'c', 'z'};
    for (int d = 0; d < 4; d++) {
        for (int b = 0; b < 2; b++) {
            for (int i = 0; i < 3; i++) {
                for (int j = 0; j < 3; j++) {
                    snprintf(gemm_names[d][b][i][j], sizeof(gemm_names[d][b][i][j]),
                             "emu_cublas_%cgemm%s_%c%c", types[d], b ? "_strided_batched" : "",
                             ops[i], ops[j]);
                }
            }
        }
    }
}

/* Two batches of C share an element when some b * stride (b in 1..batch-1) is a column-major
 * offset (dj * ldc + di) with |di| < m, |dj| < n: a race between the batches on a GPU. */
static bool
batches_overlap(int64_t m, int64_t n, int64_t ldc, int64_t stride, int64_t batch)
{
    int64_t step = stride < 0 ? -stride : stride;
    if (m == 0 || n == 0 || batch <= 1) {
        return false;
    }
    for (int64_t b = 1; b < batch; b++) {
        int64_t d, dj;
        if (__builtin_mul_overflow(step, b, &d) || d / n >= ldc) {
            return false; /* this batch and all later ones lie past the first's reach */
        }
        dj = d / ldc; /* d = dj * ldc + di with 0 <= di < ldc, or (dj + 1) * ldc + (di - ldc) */
        if ((dj < n && d - dj * ldc < m) || (dj + 1 < n && (dj + 1) * ldc - d < m)) {
            return true;
        }
    }
    return false;
}

typedef mt_emu_gemm gemm_args;

/* cuBLAS's documented argument checks (CUBLAS_STATUS_INVALID_VALUE) */
static cublasStatus_t
gemm_check_args(const char *fn, const gemm_args *g)
{
    if (!valid_op(g->ta) || !valid_op(g->tb)) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, fn,
                        "transa %d or transb %d is not an "
                        "operation",
                        (int)g->ta, (int)g->tb);
    }
    if (g->m < 0 || g->n < 0 || g->k < 0 || g->batch < 0) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, fn, "m %d, n %d, k %d or batchCount %d < 0",
                        g->m, g->n, g->k, g->batch);
    }
    int arows = g->ta == CUBLAS_OP_N ? g->m : g->k, brows = g->tb == CUBLAS_OP_N ? g->k : g->n;
    if (g->lda < (arows > 1 ? arows : 1)) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, fn, "lda %d < max(1, %d), the rows of A",
                        g->lda, arows);
    }
    if (g->ldb < (brows > 1 ? brows : 1)) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, fn, "ldb %d < max(1, %d), the rows of B",
                        g->ldb, brows);
    }
    if (g->ldc < (g->m > 1 ? g->m : 1)) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, fn, "ldc %d < max(1, m = %d)", g->ldc, g->m);
    }
    if (g->alpha == NULL || g->beta == NULL) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, fn, "alpha or beta is NULL");
    }
    if (g->C == NULL && g->m > 0 && g->n > 0 && g->batch > 0) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, fn, "C is NULL");
    }
    return CUBLAS_STATUS_SUCCESS;
}

/* The emulation's checks: every operand inside one live block of the handle's device, C's
 * batches apart from each other and from A and B. */
static cublasStatus_t
gemm_check_memory(const call *c, const gemm_args *g, size_t es)
{
    extent ea, eb, ec;
    span sa = mat_span(g->ta == CUBLAS_OP_N ? g->m : g->k, g->ta == CUBLAS_OP_N ? g->k : g->m,
                       g->lda),
         sb = mat_span(g->tb == CUBLAS_OP_N ? g->k : g->n, g->tb == CUBLAS_OP_N ? g->n : g->k,
                       g->ldb),
         sc = mat_span(g->m, g->n, g->ldc);
    cublasStatus_t s;
    if (!batch_span(&sa, g->sa, g->batch) || !batch_span(&sb, g->sb, g->batch) ||
        !batch_span(&sc, g->sc, g->batch)) {
        return complain(CUBLAS_STATUS_EXECUTION_FAILED, c->fn,
                        "a stride times batchCount overflows");
    }
    if (batches_overlap(g->m, g->n, g->ldc, g->sc, g->batch)) {
        return complain(CUBLAS_STATUS_EXECUTION_FAILED, c->fn,
                        "strideC %lld makes the %d matrices of C (%d x %d, ldc %d) overlap", g->sc,
                        g->batch, g->m, g->n, g->ldc);
    }
    if ((s = check_device(c, &ea, "A", g->A, sa, es)) ||
        (s = check_device(c, &eb, "B", g->B, sb, es)) ||
        (s = check_device(c, &ec, "C", g->C, sc, es)) || (s = check_disjoint(c, &ec, &ea)) ||
        (s = check_disjoint(c, &ec, &eb))) {
        return s;
    }
    extent ebias;
    if (g->bias != NULL && ((s = check_device(c, &ebias, "bias", g->bias, vec_span(g->m, 1), es)) ||
                            (s = check_disjoint(c, &ec, &ebias)))) {
        return s;
    }
    return CUBLAS_STATUS_SUCCESS;
}

// op(A) (m, k), op(B) (k, n), C (m, n), each column-major, batch times, bias (m) or NULL:
// C = al op(A) op(B) + be C (+ bias[i] on row i, then max(0, .) for a ReLU epilogue); al and be
// are (re, im) pairs, the complex products' (cublas_complex.c), of which the others read re
static cublasStatus_t
gemm_compute(const gemm_args *g, const double *alz, const double *bez, bool dbl)
{
    if (g->cplx) {
        return mt_emu_zgemm_compute(g, alz, bez, dbl);
    }
    const double al = alz[0], be = bez[0];
    int64_t m = g->m, n = g->n, k = g->k;
    /* alpha == 0 or k == 0 is C = beta C, reading neither A nor B (BLAS) */
    bool product = al != 0 && k > 0;
    /* op(A) row i and op(B) column j as contiguous double rows, so each C(i, j) is one dot */
    double *ap = product ? malloc((size_t)(m * k) * sizeof(double)) : NULL;
    double *bp = product ? malloc((size_t)(n * k) * sizeof(double)) : NULL;
    if (product && (ap == NULL || bp == NULL)) {
        free(ap);
        free(bp);
        return CUBLAS_STATUS_ALLOC_FAILED;
    }
    for (int64_t b = 0; b < g->batch; b++) {
        const char *A = (const char *)g->A, *B = (const char *)g->B;
        char *C = (char *)g->C + (ptrdiff_t)(b * g->sc) * (ptrdiff_t)(dbl ? 8 : 4);
        for (int64_t i = 0; product && i < m; i++) {
            for (int64_t p = 0; p < k; p++) {
                int64_t off = g->ta == CUBLAS_OP_N ? i + p * g->lda : p + i * g->lda;
                double v = get(A, b * g->sa + off, dbl);
                ap[i * k + p] = g->tf32 && !dbl ? mt_emu_tf32(v) : v;
            }
        }
        for (int64_t j = 0; product && j < n; j++) {
            for (int64_t p = 0; p < k; p++) {
                int64_t off = g->tb == CUBLAS_OP_N ? p + j * g->ldb : j + p * g->ldb;
                double v = get(B, b * g->sb + off, dbl);
                bp[j * k + p] = g->tf32 && !dbl ? mt_emu_tf32(v) : v;
            }
        }
        for (int64_t j = 0; j < n; j++) {
            for (int64_t i = 0; i < m; i++) {
                double acc = 0;
                for (int64_t p = 0; product && p < k; p++) {
                    acc += ap[i * k + p] * bp[j * k + p];
                }
                int64_t ci = i + j * g->ldc;
                /* beta == 0: C is not read, so NaN there does not propagate */
                double v = be == 0 ? 0 : be * get(C, ci, dbl);
                v = product ? v + al * acc : v;
                v = g->bias != NULL ? v + get(g->bias, i, dbl) : v;
                v = g->act == MT_EMU_ACT_RELU && v < 0 ? 0
                    : g->act == MT_EMU_ACT_GELU        ? mt_gelu_tanh_f64(v)
                                                       : v;
                put(C, ci, v, dbl);
            }
        }
    }
    free(ap);
    free(bp);
    return CUBLAS_STATUS_SUCCESS;
}

/* One product, checked, as it runs (on the calling thread, or queued on its stream's worker in
 * the asynchronous mode): alpha and beta already read (host pointer mode) or read when it runs
 * (device pointer mode, where an earlier kernel on the stream may write them). */
typedef struct gemm_work {
    call c;
    gemm_args g;
    bool dbl, scalars_read;
    double al[2], be[2]; /* (re, im): a real product's im is 0 */
    const char *kernel;
} gemm_work;

/* *out = the scalar at p, a (re, im) pair: float or double (dbl), complex or not */
static void
get_coef(const void *p, bool dbl, bool cplx, double out[2])
{
    out[0] = get(p, 0, dbl);
    out[1] = cplx ? get(p, 1, dbl) : 0;
}

static cublasStatus_t
gemm_exec(const gemm_work *w)
{
    MT_EMU_DEVICE_WORK_SCOPE(); /* its device memory, alpha and beta too in device mode */
    const gemm_args *g = &w->g;
    double al[2], be[2];
    if (w->scalars_read) {
        memcpy(al, w->al, sizeof(al));
        memcpy(be, w->be, sizeof(be));
    } else {
        get_coef(g->alpha, w->dbl, g->cplx, al);
        get_coef(g->beta, w->dbl, g->cplx, be);
    }
    uint64_t start = mt_emu_now_ns();
    cublasStatus_t s = gemm_compute(g, al, be, w->dbl);
    if (s) {
        return complain(s, w->c.fn, "out of host memory for a %d x %d x %d product", g->m, g->n,
                        g->k);
    }
    ran(&w->c, w->kernel, start);
    return CUBLAS_STATUS_SUCCESS;
}

/* gemm_exec on a stream's worker: its failure is the device's next synchronisation's */
static int
gemm_deferred(void *w)
{
    return gemm_exec(w) == CUBLAS_STATUS_SUCCESS ? (int)cudaSuccess : (int)cudaErrorLaunchFailure;
}

/* The checks a call on a device and stream makes before gemm_compute, then gemm_compute as kernel
 * (g's arguments checked already): queued on the stream in the asynchronous mode. */
static cublasStatus_t
gemm_run(const call *c, const gemm_args *g, bool dbl, const char *kernel)
{
    size_t es = (dbl ? sizeof(double) : sizeof(float)) * (g->cplx ? 2 : 1);
    cublasStatus_t s;
    /* quick return: no C to write (k == 0 still scales C by beta) */
    if (g->m == 0 || g->n == 0 || g->batch == 0) {
        return CUBLAS_STATUS_SUCCESS;
    }
    if ((s = check_placement(c)) || (s = check_scalar(c, "alpha", g->alpha, es)) ||
        (s = check_scalar(c, "beta", g->beta, es)) || (s = gemm_check_memory(c, g, es))) {
        return s;
    }
    gemm_work w = {*c, *g, dbl, c->mode == CUBLAS_POINTER_MODE_HOST, {0, 0}, {0, 0}, kernel};
    if (w.scalars_read) {
        get_coef(g->alpha, dbl, g->cplx, w.al);
        get_coef(g->beta, dbl, g->cplx, w.be);
    }
    if (mt_emu_stream_defer(c->stream, gemm_deferred, &w, sizeof(w))) {
        return CUBLAS_STATUS_SUCCESS; /* queued: it runs after the stream's earlier work */
    }
    mt_emu_stream_drain(c->stream); /* the stream's earlier work first */
    return gemm_exec(&w);
}

cublasStatus_t
mt_emu_cublas_gemm(cublasHandle_t h, const char *fn, const gemm_args *g, bool batched, bool dbl)
{
    MT_EMU_DEVICE_WORK_SCOPE(); /* its device memory, alpha and beta too in device mode */
    call c;
    cublasStatus_t s = handle_state(h, fn, &c);
    if (s || (s = gemm_check_args(fn, g))) {
        return s;
    }
    gemm_args run = *g;
    run.tf32 = ((int)c.math & ~(int)CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) ==
               CUBLAS_TF32_TENSOR_OP_MATH;
    pthread_once(&gemm_names_once, make_gemm_names);
    return gemm_run(&c, &run, dbl, gemm_names[(g->cplx ? 2 : 0) + dbl][batched][g->ta][g->tb]);
}

cublasStatus_t
mt_emu_cublas_gemm_on(const char *fn, int device, cudaStream_t stream, const mt_emu_gemm *g,
                      bool dbl, const char *kernel)
{
    MT_EMU_DEVICE_WORK_SCOPE(); /* its device memory */
    call c = {fn, device, stream, CUBLAS_POINTER_MODE_HOST, CUBLAS_DEFAULT_MATH};
    cublasStatus_t s = gemm_check_args(fn, g);
    return s ? s : gemm_run(&c, g, dbl, kernel);
}

cublasStatus_t
cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
               int n, int k, const float *alpha, const float *A, int lda, const float *B, int ldb,
               const float *beta, float *C, int ldc)
{
    gemm_args g = {transa, transb, m, n, k, alpha, A,    B,     beta,  C,    lda,
                   ldb,    ldc,    0, 0, 0, 1,     NULL, false, false, false};
    return mt_emu_cublas_gemm(handle, "cublasSgemm_v2", &g, false, false);
}

cublasStatus_t
cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
               int n, int k, const double *alpha, const double *A, int lda, const double *B,
               int ldb, const double *beta, double *C, int ldc)
{
    gemm_args g = {transa, transb, m, n, k, alpha, A,    B,     beta,  C,    lda,
                   ldb,    ldc,    0, 0, 0, 1,     NULL, false, false, false};
    return mt_emu_cublas_gemm(handle, "cublasDgemm_v2", &g, false, true);
}

cublasStatus_t
cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                          int m, int n, int k, const float *alpha, const float *A, int lda,
                          long long int strideA, const float *B, int ldb, long long int strideB,
                          const float *beta, float *C, int ldc, long long int strideC,
                          int batchCount)
{
    gemm_args g = {transa,  transb,  m,          n,    k,     alpha, A,
                   B,       beta,    C,          lda,  ldb,   ldc,   strideA,
                   strideB, strideC, batchCount, NULL, false, false, false};
    return mt_emu_cublas_gemm(handle, "cublasSgemmStridedBatched", &g, true, false);
}

cublasStatus_t
cublasDgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                          int m, int n, int k, const double *alpha, const double *A, int lda,
                          long long int strideA, const double *B, int ldb, long long int strideB,
                          const double *beta, double *C, int ldc, long long int strideC,
                          int batchCount)
{
    gemm_args g = {transa,  transb,  m,          n,    k,     alpha, A,
                   B,       beta,    C,          lda,  ldb,   ldc,   strideA,
                   strideB, strideC, batchCount, NULL, false, false, false};
    return mt_emu_cublas_gemm(handle, "cublasDgemmStridedBatched", &g, true, true);
}
