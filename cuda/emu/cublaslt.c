/* The emulated cuBLASLt (include/cublasLt.h) on the CPU: handles, matmul descriptors, matrix
 * layouts, preferences, the heuristic and cublasLtMatmul with the bias, ReLU and GELU epilogues
 * and the TF32 compute type, for the products of cuda/blas.c. The product itself is cublas.c's (its
 * memory checks and loops, through mt_emu_cublas_gemm_on).
 *
 * Strict as cublas.c: an argument cuBLASLt rejects gets its status (INVALID_VALUE for a wrong
 * attribute size, mismatched layouts or types, NOT_SUPPORTED for a problem no algorithm
 * handles), a destroyed or made-up object is refused, and what this emulation does not cover
 * (the epilogues that write auxiliary outputs, device pointer mode, D apart from C) says so
 * rather than computing wrongly. */
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cublasLt.h"
#include "cublas_emu.h"
#include "emu.h"

/* Every object starts with this header, on one list of live objects while it exists, so that a
 * destroyed, made-up or wrongly typed one is refused rather than read. */
typedef enum { OBJ_HANDLE = 1, OBJ_DESC, OBJ_LAYOUT, OBJ_PREF } obj_kind;

typedef struct lt_obj {
    struct lt_obj *next;
    obj_kind kind;
} lt_obj;

struct cublasLtContext {
    lt_obj obj;
    int device; /* current at cublasLtCreate */
};

struct cublasLtMatmulDescOpaque_t {
    lt_obj obj;
    cublasComputeType_t compute;
    cudaDataType_t scale;
    cublasOperation_t ta, tb;
    cublasLtEpilogue_t epilogue;
    const void *bias;
};

struct cublasLtMatrixLayoutOpaque_t {
    lt_obj obj;
    cudaDataType_t type;
    uint64_t rows, cols;
    int64_t ld;
};

struct cublasLtMatmulPreferenceOpaque_t {
    lt_obj obj;
    uint64_t max_workspace;
};

#define EMU_ALGO_ID 0x4c54454d55ull /* "EMULT": the one algorithm the heuristic offers */

static pthread_mutex_t objs_lock = PTHREAD_MUTEX_INITIALIZER;
static lt_obj *objs;

static cublasStatus_t complain(cublasStatus_t status, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static cublasStatus_t
complain(cublasStatus_t status, const char *fn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cublasStatus_t s = mt_emu_cublas_vcomplain("cuBLASLt", status, fn, fmt, ap);
    va_end(ap);
    return s;
}

/* ---- objects ------------------------------------------------------------------------------ */

static cublasStatus_t
obj_create(const char *fn, void **out, size_t size, obj_kind kind)
{
    if (out == NULL) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, fn, "the output pointer is NULL");
    }
    lt_obj *o = calloc(1, size);
    if (o == NULL) {
        return CUBLAS_STATUS_ALLOC_FAILED;
    }
    o->kind = kind;
    pthread_mutex_lock(&objs_lock);
    o->next = objs;
    objs = o;
    pthread_mutex_unlock(&objs_lock);
    *out = o;
    return CUBLAS_STATUS_SUCCESS;
}

/* whether p is a live object of kind (its fields are the caller's to read: objects are not
 * destroyed while in use by a well-formed program, which is what this checks) */
static cublasStatus_t
obj_check(const char *fn, const char *name, const void *p, obj_kind kind)
{
    bool found = false;
    pthread_mutex_lock(&objs_lock);
    for (lt_obj *o = objs; o != NULL && !found; o = o->next) {
        found = o == p && o->kind == kind;
    }
    pthread_mutex_unlock(&objs_lock);
    if (found) {
        return CUBLAS_STATUS_SUCCESS;
    }
    return complain(kind == OBJ_HANDLE ? CUBLAS_STATUS_NOT_INITIALIZED
                                       : CUBLAS_STATUS_INVALID_VALUE,
                    fn, "%s %p is NULL, destroyed or never created", name, p);
}

static cublasStatus_t
obj_destroy(const char *fn, void *p, obj_kind kind)
{
    bool found = false;
    pthread_mutex_lock(&objs_lock);
    for (lt_obj **o = &objs; *o != NULL; o = &(*o)->next) {
        if (*o == p && (*o)->kind == kind) {
            *o = (*o)->next;
            found = true;
            break;
        }
    }
    pthread_mutex_unlock(&objs_lock);
    if (!found && p != NULL) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, fn, "%p was destroyed or never created", p);
    }
    free(found ? p : NULL);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtCreate(cublasLtHandle_t *lightHandle)
{
    cublasStatus_t s = obj_create("cublasLtCreate", (void **)lightHandle,
                                  sizeof(struct cublasLtContext), OBJ_HANDLE);
    if (s == CUBLAS_STATUS_SUCCESS) {
        (*lightHandle)->device = mt_emu_current_device();
    }
    return s;
}

cublasStatus_t
cublasLtDestroy(cublasLtHandle_t lightHandle)
{
    if (lightHandle == NULL) {
        return complain(CUBLAS_STATUS_NOT_INITIALIZED, "cublasLtDestroy", "the handle is NULL");
    }
    return obj_destroy("cublasLtDestroy", lightHandle, OBJ_HANDLE);
}

/* ---- descriptors -------------------------------------------------------------------------- */

/* the scale type a compute type takes (the products the backend runs: float and double) */
static bool
compute_scale_ok(cublasComputeType_t c, cudaDataType_t scale)
{
    switch (c) {
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
    case CUBLAS_COMPUTE_32F_FAST_TF32:
        return scale == CUDA_R_32F;
    case CUBLAS_COMPUTE_64F:
        return scale == CUDA_R_64F;
    default:
        return false;
    }
}

cublasStatus_t
cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *matmulDesc, cublasComputeType_t computeType,
                         cudaDataType_t scaleType)
{
    const char *fn = "cublasLtMatmulDescCreate";
    if (!compute_scale_ok(computeType, scaleType)) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, fn,
                        "computeType %d with scaleType %d is not a float32 or float64 product",
                        (int)computeType, (int)scaleType);
    }
    cublasStatus_t s = obj_create(fn, (void **)matmulDesc,
                                  sizeof(struct cublasLtMatmulDescOpaque_t), OBJ_DESC);
    if (s == CUBLAS_STATUS_SUCCESS) {
        cublasLtMatmulDesc_t d = *matmulDesc;
        d->compute = computeType;
        d->scale = scaleType;
        d->ta = d->tb = CUBLAS_OP_N;
        d->epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    }
    return s;
}

cublasStatus_t
cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc)
{
    return obj_destroy("cublasLtMatmulDescDestroy", matmulDesc, OBJ_DESC);
}

/* the value of an int32_t (or uint32_t) attribute of exactly that size */
static cublasStatus_t
attr_i32(const char *fn, const void *buf, size_t size, int32_t *v)
{
    if (buf == NULL || size != sizeof(int32_t)) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, fn,
                        "the attribute takes a 4-byte value, given %zu bytes at %p", size, buf);
    }
    memcpy(v, buf, sizeof(*v));
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc, cublasLtMatmulDescAttributes_t attr,
                               const void *buf, size_t sizeInBytes)
{
    const char *fn = "cublasLtMatmulDescSetAttribute";
    int32_t v = 0;
    cublasStatus_t s = obj_check(fn, "matmulDesc", matmulDesc, OBJ_DESC);
    if (s) {
        return s;
    }
    switch (attr) {
    case CUBLASLT_MATMUL_DESC_TRANSA:
    case CUBLASLT_MATMUL_DESC_TRANSB:
        if ((s = attr_i32(fn, buf, sizeInBytes, &v))) {
            return s;
        }
        if (v != CUBLAS_OP_N && v != CUBLAS_OP_T && v != CUBLAS_OP_C) {
            return complain(CUBLAS_STATUS_INVALID_VALUE, fn, "%d is not an operation", (int)v);
        }
        *(attr == CUBLASLT_MATMUL_DESC_TRANSA ? &matmulDesc->ta
                                              : &matmulDesc->tb) = (cublasOperation_t)v;
        return CUBLAS_STATUS_SUCCESS;
    case CUBLASLT_MATMUL_DESC_EPILOGUE:
        if ((s = attr_i32(fn, buf, sizeInBytes, &v))) {
            return s;
        }
        if (v != CUBLASLT_EPILOGUE_DEFAULT && v != CUBLASLT_EPILOGUE_RELU &&
            v != CUBLASLT_EPILOGUE_BIAS && v != CUBLASLT_EPILOGUE_RELU_BIAS &&
            v != CUBLASLT_EPILOGUE_GELU && v != CUBLASLT_EPILOGUE_GELU_BIAS) {
            return complain(CUBLAS_STATUS_NOT_SUPPORTED, fn,
                            "epilogue %d is not emulated (DEFAULT, RELU, BIAS, RELU_BIAS, GELU, "
                            "GELU_BIAS are)",
                            (int)v);
        }
        matmulDesc->epilogue = (cublasLtEpilogue_t)v;
        return CUBLAS_STATUS_SUCCESS;
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
        if (buf == NULL || sizeInBytes != sizeof(void *)) {
            return complain(CUBLAS_STATUS_INVALID_VALUE, fn,
                            "BIAS_POINTER takes a pointer, given %zu bytes", sizeInBytes);
        }
        memcpy(&matmulDesc->bias, buf, sizeof(void *));
        return CUBLAS_STATUS_SUCCESS;
    case CUBLASLT_MATMUL_DESC_POINTER_MODE:
        if ((s = attr_i32(fn, buf, sizeInBytes, &v))) {
            return s;
        }
        return v == 0 ? CUBLAS_STATUS_SUCCESS
                      : complain(CUBLAS_STATUS_NOT_SUPPORTED, fn,
                                 "pointer mode %d is not emulated (host scalars only)", (int)v);
    default:
        return complain(CUBLAS_STATUS_NOT_SUPPORTED, fn, "attribute %d is not emulated", (int)attr);
    }
}

cublasStatus_t
cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *matLayout, cudaDataType type, uint64_t rows,
                           uint64_t cols, int64_t ld)
{
    const char *fn = "cublasLtMatrixLayoutCreate";
    if (type != CUDA_R_32F && type != CUDA_R_64F) {
        return complain(CUBLAS_STATUS_NOT_SUPPORTED, fn, "type %d is not emulated", (int)type);
    }
    if (rows > INT32_MAX || cols > INT32_MAX || ld < 1) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, fn,
                        "rows %llu, cols %llu or ld %lld out of range", (unsigned long long)rows,
                        (unsigned long long)cols, (long long)ld);
    }
    cublasStatus_t s = obj_create(fn, (void **)matLayout,
                                  sizeof(struct cublasLtMatrixLayoutOpaque_t), OBJ_LAYOUT);
    if (s == CUBLAS_STATUS_SUCCESS) {
        cublasLtMatrixLayout_t l = *matLayout;
        l->type = type;
        l->rows = rows;
        l->cols = cols;
        l->ld = ld;
    }
    return s;
}

cublasStatus_t
cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout)
{
    return obj_destroy("cublasLtMatrixLayoutDestroy", matLayout, OBJ_LAYOUT);
}

cublasStatus_t
cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref)
{
    return obj_create("cublasLtMatmulPreferenceCreate", (void **)pref,
                      sizeof(struct cublasLtMatmulPreferenceOpaque_t), OBJ_PREF);
}

cublasStatus_t
cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref)
{
    return obj_destroy("cublasLtMatmulPreferenceDestroy", pref, OBJ_PREF);
}

cublasStatus_t
cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                     cublasLtMatmulPreferenceAttributes_t attr, const void *buf,
                                     size_t sizeInBytes)
{
    const char *fn = "cublasLtMatmulPreferenceSetAttribute";
    cublasStatus_t s = obj_check(fn, "pref", pref, OBJ_PREF);
    if (s) {
        return s;
    }
    if (attr == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES) {
        if (buf == NULL || sizeInBytes != sizeof(uint64_t)) {
            return complain(CUBLAS_STATUS_INVALID_VALUE, fn,
                            "MAX_WORKSPACE_BYTES takes a uint64_t, given %zu bytes", sizeInBytes);
        }
        memcpy(&pref->max_workspace, buf, sizeof(uint64_t));
        return CUBLAS_STATUS_SUCCESS;
    }
    int32_t v;
    if (attr == CUBLASLT_MATMUL_PREF_SEARCH_MODE) {
        return attr_i32(fn, buf, sizeInBytes, &v);
    }
    return complain(CUBLAS_STATUS_NOT_SUPPORTED, fn, "attribute %d is not emulated", (int)attr);
}

/* ---- the product -------------------------------------------------------------------------- */

/* desc's product over the four layouts as a gemm (g; pointers left NULL), after cuBLASLt's
 * checks: every layout of the scale type, op(A) (m, k), op(B) (k, n), C and D (m, n) alike, a
 * bias pointer where the epilogue takes one. */
static cublasStatus_t
problem(const char *fn, cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
        cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t dd, mt_emu_gemm *g)
{
    cublasStatus_t s;
    if ((s = obj_check(fn, "computeDesc", d, OBJ_DESC)) ||
        (s = obj_check(fn, "Adesc", a, OBJ_LAYOUT)) ||
        (s = obj_check(fn, "Bdesc", b, OBJ_LAYOUT)) ||
        (s = obj_check(fn, "Cdesc", c, OBJ_LAYOUT)) ||
        (s = obj_check(fn, "Ddesc", dd, OBJ_LAYOUT))) {
        return s;
    }
    if (a->type != d->scale || b->type != d->scale || c->type != d->scale || dd->type != d->scale) {
        return complain(CUBLAS_STATUS_NOT_SUPPORTED, fn,
                        "the layouts' types (%d %d %d %d) are not the scale type %d", (int)a->type,
                        (int)b->type, (int)c->type, (int)dd->type, (int)d->scale);
    }
    uint64_t m = d->ta == CUBLAS_OP_N ? a->rows : a->cols;
    uint64_t k = d->ta == CUBLAS_OP_N ? a->cols : a->rows;
    uint64_t bk = d->tb == CUBLAS_OP_N ? b->rows : b->cols;
    uint64_t n = d->tb == CUBLAS_OP_N ? b->cols : b->rows;
    if (bk != k || c->rows != m || c->cols != n || dd->rows != m || dd->cols != n ||
        c->ld != dd->ld) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, fn,
                        "op(A) is %llu x %llu, op(B) %llu x %llu, C %llu x %llu (ld %lld), D "
                        "%llu x %llu (ld %lld): not one product",
                        (unsigned long long)m, (unsigned long long)k, (unsigned long long)bk,
                        (unsigned long long)n, (unsigned long long)c->rows,
                        (unsigned long long)c->cols, (long long)c->ld, (unsigned long long)dd->rows,
                        (unsigned long long)dd->cols, (long long)dd->ld);
    }
    if ((uint64_t)a->ld < (a->rows > 1 ? a->rows : 1) ||
        (uint64_t)b->ld < (b->rows > 1 ? b->rows : 1) ||
        (uint64_t)c->ld < (c->rows > 1 ? c->rows : 1) || a->ld > INT32_MAX || b->ld > INT32_MAX ||
        c->ld > INT32_MAX) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, fn,
                        "a leading dimension is below its layout's rows or beyond int");
    }
    cublasLtEpilogue_t e = d->epilogue;
    bool bias = e == CUBLASLT_EPILOGUE_BIAS || e == CUBLASLT_EPILOGUE_RELU_BIAS ||
                e == CUBLASLT_EPILOGUE_GELU_BIAS;
    if (bias && d->bias == NULL) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, fn,
                        "the epilogue adds a bias but BIAS_POINTER is not set");
    }
    *g = (mt_emu_gemm){.ta = d->ta,
                       .tb = d->tb,
                       .m = (int)m,
                       .n = (int)n,
                       .k = (int)k,
                       .lda = (int)a->ld,
                       .ldb = (int)b->ld,
                       .ldc = (int)c->ld,
                       .batch = 1,
                       .bias = bias ? d->bias : NULL,
                       .act = e == CUBLASLT_EPILOGUE_RELU || e == CUBLASLT_EPILOGUE_RELU_BIAS
                                  ? MT_EMU_ACT_RELU
                              : e == CUBLASLT_EPILOGUE_GELU || e == CUBLASLT_EPILOGUE_GELU_BIAS
                                  ? MT_EMU_ACT_GELU
                                  : MT_EMU_ACT_NONE,
                       .tf32 = d->compute == CUBLAS_COMPUTE_32F_FAST_TF32};
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc,
                               cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
                               cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
                               cublasLtMatmulPreference_t preference, int requestedAlgoCount,
                               cublasLtMatmulHeuristicResult_t heuristicResultsArray[],
                               int *returnAlgoCount)
{
    const char *fn = "cublasLtMatmulAlgoGetHeuristic";
    mt_emu_gemm g;
    cublasStatus_t s;
    if ((s = obj_check(fn, "lightHandle", lightHandle, OBJ_HANDLE)) ||
        (s = obj_check(fn, "preference", preference, OBJ_PREF))) {
        return s;
    }
    if (requestedAlgoCount <= 0 || heuristicResultsArray == NULL || returnAlgoCount == NULL) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, fn,
                        "requestedAlgoCount %d <= 0 or an output is NULL", requestedAlgoCount);
    }
    *returnAlgoCount = 0;
    if ((s = problem(fn, operationDesc, Adesc, Bdesc, Cdesc, Ddesc, &g))) {
        return s;
    }
    /* one algorithm, needing no workspace */
    memset(&heuristicResultsArray[0], 0, sizeof(heuristicResultsArray[0]));
    heuristicResultsArray[0].algo.data[0] = EMU_ALGO_ID;
    heuristicResultsArray[0].state = CUBLAS_STATUS_SUCCESS;
    heuristicResultsArray[0].wavesCount = 1.0f;
    *returnAlgoCount = 1;
    return CUBLAS_STATUS_SUCCESS;
}

/* "emu_cublasLt_{s,d}gemm_<opA><opB>[_tf32][_bias][_relu]", built once: the profiler keeps the
 * names given to mt_emu_kernel_ran */
static char kernel_names[2][3][3][2][2][3][48];
static pthread_once_t kernel_names_once = PTHREAD_ONCE_INIT;

static void
make_kernel_names(void)
{
    const char ops[3] = {'n', 't', 'c'};
    for (int d = 0; d < 2; d++) {
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) {
                for (int t = 0; t < 2; t++) {
                    for (int b = 0; b < 2; b++) {
                        for (int r = 0; r < 3; r++) {
                            snprintf(kernel_names[d][i][j][t][b][r], 48,
                                     "emu_cublasLt_%cgemm_%c%c%s%s%s", d ? 'd' : 's', ops[i],
                                     ops[j], t ? "_tf32" : "", b ? "_bias" : "",
                                     r == MT_EMU_ACT_RELU   ? "_relu"
                                     : r == MT_EMU_ACT_GELU ? "_gelu"
                                                            : "");
                        }
                    }
                }
            }
        }
    }
}

cublasStatus_t
cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc, const void *alpha,
               const void *A, cublasLtMatrixLayout_t Adesc, const void *B,
               cublasLtMatrixLayout_t Bdesc, const void *beta, const void *C,
               cublasLtMatrixLayout_t Cdesc, void *D, cublasLtMatrixLayout_t Ddesc,
               const cublasLtMatmulAlgo_t *algo, void *workspace, size_t workspaceSizeInBytes,
               cudaStream_t stream)
{
    const char *fn = "cublasLtMatmul";
    mt_emu_gemm g;
    cublasStatus_t s;
    (void)workspace; /* the emulated algorithm needs none, so any size is enough */
    (void)workspaceSizeInBytes;
    if ((s = obj_check(fn, "lightHandle", lightHandle, OBJ_HANDLE)) ||
        (s = problem(fn, computeDesc, Adesc, Bdesc, Cdesc, Ddesc, &g))) {
        return s;
    }
    if (algo != NULL && algo->data[0] != EMU_ALGO_ID) {
        return complain(CUBLAS_STATUS_INVALID_VALUE, fn,
                        "algo is not one cublasLtMatmulAlgoGetHeuristic returned");
    }
    if (C != D) {
        return complain(CUBLAS_STATUS_NOT_SUPPORTED, fn,
                        "D apart from C is not emulated (the backend computes in place)");
    }
    g.alpha = alpha;
    g.beta = beta;
    g.A = A;
    g.B = B;
    g.C = D;
    bool dbl = computeDesc->scale == CUDA_R_64F;
    pthread_once(&kernel_names_once, make_kernel_names);
    return mt_emu_cublas_gemm_on(fn, lightHandle->device, stream, &g, dbl,
                                 kernel_names[dbl][g.ta][g.tb][g.tf32][g.bias != NULL][g.act]);
}
