/* The emulated cuDNN (include/cudnn.h): 2-d convolutions forward, backward-data and
 * backward-filter, NCHW or NHWC, float or double, computed naively on the CPU with double
 * accumulation. It checks what cuDNN documents it checks and returns cuDNN's status codes, and
 * beyond that what a GPU would fault on and cuDNN cannot see (a host or out-of-bounds pointer,
 * a stream or current device that is not the handle's): those print one line to stderr and
 * return CUDNN_STATUS_EXECUTION_FAILED. It must never be lenient where cuDNN or the GPU is
 * not: it exists to find the backend's bugs. Thread-safe: the only shared state is the
 * registry of live handles and descriptors, behind a mutex. */
#include "cuda/emu/cudnn_emu.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/emu/emu.h"

#define MAX_ELEMENTS 2147483647LL /* cuDNN refuses tensors over 2 Gi elements */

/* ---- failures ---- */

static _Thread_local char last_error[512];

cudnnStatus_t
mt_emu_cudnn_fail(cudnnStatus_t st, bool emu, const char *fn, const char *fmt, ...)
{
    int n = snprintf(last_error, sizeof(last_error), "%s: ", fn);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error + n, sizeof(last_error) - (size_t)n, fmt, ap);
    va_end(ap);
    if (emu) {
        fprintf(stderr, "emulated cuDNN: %s\n", last_error);
    }
    return st;
}

/* Each status and its name, as cuDNN's cudnnGetErrorString spells it. */
static const struct {
    cudnnStatus_t status;
    const char *name;
} status_names[] = {
#define NAME(x) {x, #x}
    NAME(CUDNN_STATUS_SUCCESS),
    NAME(CUDNN_STATUS_NOT_INITIALIZED),
    NAME(CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH),
    NAME(CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH),
    NAME(CUDNN_STATUS_DEPRECATED),
    NAME(CUDNN_STATUS_LICENSE_ERROR),
    NAME(CUDNN_STATUS_RUNTIME_IN_PROGRESS),
    NAME(CUDNN_STATUS_RUNTIME_FP_OVERFLOW),
    NAME(CUDNN_STATUS_BAD_PARAM),
    NAME(CUDNN_STATUS_INVALID_VALUE),
    NAME(CUDNN_STATUS_BAD_PARAM_NULL_POINTER),
    NAME(CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER),
    NAME(CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED),
    NAME(CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND),
    NAME(CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT),
    NAME(CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH),
    NAME(CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH),
    NAME(CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES),
    NAME(CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE),
    NAME(CUDNN_STATUS_NOT_SUPPORTED),
    NAME(CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN),
    NAME(CUDNN_STATUS_NOT_SUPPORTED_SHAPE),
    NAME(CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE),
    NAME(CUDNN_STATUS_NOT_SUPPORTED_LAYOUT),
    NAME(CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER),
    NAME(CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART),
    NAME(CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH),
    NAME(CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING),
    NAME(CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE),
    NAME(CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT),
    NAME(CUDNN_STATUS_NOT_SUPPORTED_PADDING),
    NAME(CUDNN_STATUS_NOT_SUPPORTED_BAD_LAUNCH_PARAM),
    NAME(CUDNN_STATUS_INTERNAL_ERROR),
    NAME(CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED),
    NAME(CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE),
    NAME(CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED),
    NAME(CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED),
    NAME(CUDNN_STATUS_INTERNAL_ERROR_BAD_LAUNCH_PARAM),
    NAME(CUDNN_STATUS_INTERNAL_ERROR_TEXTURE_CREATION_FAILED),
    NAME(CUDNN_STATUS_EXECUTION_FAILED),
    NAME(CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER),
    NAME(CUDNN_STATUS_EXECUTION_FAILED_CUBLAS),
    NAME(CUDNN_STATUS_EXECUTION_FAILED_CUDART),
    NAME(CUDNN_STATUS_EXECUTION_FAILED_CURAND),
#undef NAME
};

const char *
cudnnGetErrorString(cudnnStatus_t status)
{
    for (size_t k = 0; k < sizeof status_names / sizeof status_names[0]; k++) {
        if (status_names[k].status == status) {
            return status_names[k].name;
        }
    }
    return "CUDNN_STATUS_UNKNOWN";
}

void
cudnnGetLastErrorString(char *message, size_t max_size)
{
    if (message && max_size > 0) {
        snprintf(message, max_size, "%s", last_error);
        last_error[0] = '\0';
    }
}

size_t
cudnnGetVersion(void)
{
    return CUDNN_VERSION;
}

/* ---- the registry of live objects: a destroyed or foreign pointer is refused, not read ---- */

static const char *const kind_names[] = {"handle", "tensor descriptor", "filter descriptor",
                                         "convolution descriptor"};

typedef struct live_obj {
    const void *p;
    mt_emu_cudnn_kind kind;
} live_obj;

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static live_obj *live;
static size_t nlive, cap_live;

static bool
live_add(const void *p, mt_emu_cudnn_kind kind)
{
    bool ok = true;
    pthread_mutex_lock(&live_lock);
    if (nlive == cap_live) {
        size_t cap = cap_live ? 2 * cap_live : 64;
        live_obj *grown = realloc(live, cap * sizeof(*live));
        if (grown) {
            live = grown;
            cap_live = cap;
        } else {
            ok = false;
        }
    }
    if (ok) {
        live[nlive++] = (live_obj){p, kind};
    }
    pthread_mutex_unlock(&live_lock);
    return ok;
}

/* Whether p is a live object of this kind; remove: and forget it. */
static bool
live_find(const void *p, mt_emu_cudnn_kind kind, bool remove)
{
    bool found = false;
    pthread_mutex_lock(&live_lock);
    for (size_t i = nlive; i-- > 0;) {
        if (live[i].p == p && live[i].kind == kind) {
            found = true;
            if (remove) {
                live[i] = live[--nlive];
            }
            break;
        }
    }
    pthread_mutex_unlock(&live_lock);
    return found;
}

cudnnStatus_t
mt_emu_cudnn_check_obj(const char *fn, const char *arg, const void *p, mt_emu_cudnn_kind kind)
{
    if (!p) {
        return MT_EMU_BAD_PARAM(fn, "%s is NULL", arg);
    }
    if (!live_find(p, kind, false)) {
        return mt_emu_cudnn_fail(CUDNN_STATUS_BAD_PARAM, true, fn,
                                 "%s %p is not a live %s (destroyed, or never created)", arg, p,
                                 kind_names[kind]);
    }
    return CUDNN_STATUS_SUCCESS;
}

/* A getter's checks: p (argument arg of fn) a live object of this kind, out (argument what) not
 * NULL. */
static cudnnStatus_t
check_getter(const char *fn, const char *arg, const void *p, mt_emu_cudnn_kind kind,
             const void *out, const char *what)
{
    cudnnStatus_t st = mt_emu_cudnn_check_obj(fn, arg, p, kind);
    if (st == CUDNN_STATUS_SUCCESS && !out) {
        st = MT_EMU_BAD_PARAM(fn, "%s is NULL", what);
    }
    return st;
}

static cudnnStatus_t
create_obj(const char *fn, void **out, size_t size, mt_emu_cudnn_kind kind)
{
    if (!out) {
        return MT_EMU_BAD_PARAM(fn, "the result pointer is NULL");
    }
    void *p = calloc(1, size);
    if (!p || !live_add(p, kind)) {
        free(p);
        return mt_emu_cudnn_fail(CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED, false, fn,
                                 "out of host memory");
    }
    *out = p;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t
destroy_obj(const char *fn, void *p, mt_emu_cudnn_kind kind)
{
    if (!p) { /* cuDNN accepts destroying NULL descriptors */
        return kind == MT_EMU_CUDNN_HANDLE ? MT_EMU_BAD_PARAM(fn, "handle is NULL")
                                           : CUDNN_STATUS_SUCCESS;
    }
    if (!live_find(p, kind, true)) {
        return mt_emu_cudnn_fail(CUDNN_STATUS_BAD_PARAM, true, fn,
                                 "%p is not a live %s (destroyed twice, or never created)", p,
                                 kind_names[kind]);
    }
    free(p);
    return CUDNN_STATUS_SUCCESS;
}

/* ---- handles ---- */

cudnnStatus_t
cudnnCreate(cudnnHandle_t *handle)
{
    cudnnStatus_t st = create_obj("cudnnCreate", (void **)handle, sizeof(**handle),
                                  MT_EMU_CUDNN_HANDLE);
    if (st == CUDNN_STATUS_SUCCESS) {
        (*handle)->device = mt_emu_current_device();
        (*handle)->stream = NULL;
    }
    return st;
}

cudnnStatus_t
cudnnDestroy(cudnnHandle_t handle)
{
    return destroy_obj("cudnnDestroy", handle, MT_EMU_CUDNN_HANDLE);
}

static bool
is_default_stream(cudaStream_t s)
{
    return s == NULL || s == cudaStreamLegacy || s == cudaStreamPerThread;
}

cudnnStatus_t
cudnnSetStream(cudnnHandle_t handle, cudaStream_t streamId)
{
    const char *fn = "cudnnSetStream";
    cudnnStatus_t st = mt_emu_cudnn_check_obj(fn, "handle", handle, MT_EMU_CUDNN_HANDLE);
    if (st) {
        return st;
    }
    /* The default streams name the current device's at each call; a created one has one. */
    if (!is_default_stream(streamId)) {
        int dev = -1;
        if (mt_emu_stream_device(streamId, &dev) != cudaSuccess) {
            return mt_emu_cudnn_fail(CUDNN_STATUS_BAD_PARAM, true, fn,
                                     "stream %p is not a live stream (destroyed, or never created)",
                                     (void *)streamId);
        }
        if (dev != handle->device) {
            return mt_emu_cudnn_fail(CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH, true, fn,
                                     "stream %p belongs to device %d, the handle to device %d",
                                     (void *)streamId, dev, handle->device);
        }
    }
    handle->stream = streamId;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t
cudnnGetStream(cudnnHandle_t handle, cudaStream_t *streamId)
{
    cudnnStatus_t st = check_getter("cudnnGetStream", "handle", handle, MT_EMU_CUDNN_HANDLE,
                                    streamId, "streamId");
    if (st == CUDNN_STATUS_SUCCESS) {
        *streamId = handle->stream;
    }
    return st;
}

cudnnStatus_t
mt_emu_cudnn_check_launch(const char *fn, cudnnHandle_t h)
{
    int cur = mt_emu_current_device(), dev = -1;
    if (cur != h->device) {
        return mt_emu_cudnn_fail(CUDNN_STATUS_EXECUTION_FAILED, true, fn,
                                 "the handle was created on device %d but device %d is current",
                                 h->device, cur);
    }
    if (mt_emu_stream_device(h->stream, &dev) != cudaSuccess) {
        return mt_emu_cudnn_fail(CUDNN_STATUS_EXECUTION_FAILED, true, fn,
                                 "the handle's stream %p is not a live stream", (void *)h->stream);
    }
    if (dev != h->device) {
        return mt_emu_cudnn_fail(CUDNN_STATUS_EXECUTION_FAILED, true, fn,
                                 "the handle's stream %p belongs to device %d, the handle to "
                                 "device %d",
                                 (void *)h->stream, dev, h->device);
    }
    return CUDNN_STATUS_SUCCESS;
}

/* ---- descriptors ---- */

size_t
mt_emu_cudnn_type_size(cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_FLOAT:
    case CUDNN_DATA_INT32:
    case CUDNN_DATA_INT8x4:
    case CUDNN_DATA_UINT8x4:
        return 4;
    case CUDNN_DATA_DOUBLE:
    case CUDNN_DATA_INT64:
        return 8;
    case CUDNN_DATA_HALF:
    case CUDNN_DATA_BFLOAT16:
        return 2;
    case CUDNN_DATA_INT8x32:
        return 32;
    case CUDNN_DATA_INT8:
    case CUDNN_DATA_UINT8:
    case CUDNN_DATA_BOOLEAN:
    case CUDNN_DATA_FP8_E4M3:
    case CUDNN_DATA_FP8_E5M2:
    case CUDNN_DATA_FAST_FLOAT_FOR_FP8:
        return 1;
    }
    return 0; /* not a cudnnDataType_t */
}

/* Strides of packed (a, b, c, d) sizes laid out as format says (NHWC: channels innermost). */
static void
packed_strides(mt_emu_dims4 *v, cudnnTensorFormat_t format)
{
    int64_t c = v->d[1], h = v->d[2], w = v->d[3];
    if (format == CUDNN_TENSOR_NHWC) {
        v->s[0] = h * w * c, v->s[1] = 1, v->s[2] = w * c, v->s[3] = c;
    } else {
        v->s[0] = c * h * w, v->s[1] = h * w, v->s[2] = w, v->s[3] = 1;
    }
}

static int64_t
numel(const mt_emu_dims4 *v)
{
    return (int64_t)v->d[0] * v->d[1] * v->d[2] * v->d[3];
}

/* cuDNN refuses non-positive sizes: an empty tensor has no descriptor. */
static cudnnStatus_t
check_sizes(const char *fn, const int d[4])
{
    for (int i = 0; i < 4; i++) {
        if (d[i] <= 0) {
            return MT_EMU_BAD_PARAM(fn, "sizes (%d, %d, %d, %d): each must be positive", d[0], d[1],
                                    d[2], d[3]);
        }
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t
cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *tensorDesc)
{
    return create_obj("cudnnCreateTensorDescriptor", (void **)tensorDesc, sizeof(**tensorDesc),
                      MT_EMU_CUDNN_TENSOR);
}

cudnnStatus_t
cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t tensorDesc)
{
    return destroy_obj("cudnnDestroyTensorDescriptor", tensorDesc, MT_EMU_CUDNN_TENSOR);
}

static cudnnStatus_t
set_tensor(const char *fn, cudnnTensorDescriptor_t desc, cudnnDataType_t type,
           const mt_emu_dims4 *v)
{
    cudnnStatus_t st = mt_emu_cudnn_check_obj(fn, "tensorDesc", desc, MT_EMU_CUDNN_TENSOR);
    if (st || (st = check_sizes(fn, v->d))) {
        return st;
    }
    if (mt_emu_cudnn_type_size(type) == 0) {
        return MT_EMU_BAD_PARAM(fn, "dataType %d is not a cudnnDataType_t", (int)type);
    }
    for (int i = 0; i < 4; i++) {
        if (v->s[i] <= 0) {
            return MT_EMU_BAD_PARAM(fn, "strides (%lld, %lld, %lld, %lld): each must be positive",
                                    (long long)v->s[0], (long long)v->s[1], (long long)v->s[2],
                                    (long long)v->s[3]);
        }
    }
    if (numel(v) > MAX_ELEMENTS || mt_emu_dims4_extent(v) > MAX_ELEMENTS) {
        return mt_emu_cudnn_fail(CUDNN_STATUS_NOT_SUPPORTED, false, fn,
                                 "the tensor exceeds cuDNN's 2 Gi elements");
    }
    desc->type = type;
    desc->v = *v;
    desc->set = true;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t
cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t tensorDesc, cudnnTensorFormat_t format,
                           cudnnDataType_t dataType, int n, int c, int h, int w)
{
    const char *fn = "cudnnSetTensor4dDescriptor";
    if (format != CUDNN_TENSOR_NCHW && format != CUDNN_TENSOR_NHWC &&
        format != CUDNN_TENSOR_NCHW_VECT_C) {
        return MT_EMU_BAD_PARAM(fn, "format %d is not a cudnnTensorFormat_t", (int)format);
    }
    if (format == CUDNN_TENSOR_NCHW_VECT_C) {
        return mt_emu_cudnn_fail(CUDNN_STATUS_NOT_SUPPORTED, false, fn,
                                 "the emulation has no vectorized (NCHW_VECT_C) layouts");
    }
    mt_emu_dims4 v = {{n, c, h, w}, {0}};
    packed_strides(&v, format);
    return set_tensor(fn, tensorDesc, dataType, &v);
}

cudnnStatus_t
cudnnSetTensor4dDescriptorEx(cudnnTensorDescriptor_t tensorDesc, cudnnDataType_t dataType, int n,
                             int c, int h, int w, int nStride, int cStride, int hStride,
                             int wStride)
{
    mt_emu_dims4 v = {{n, c, h, w}, {nStride, cStride, hStride, wStride}};
    return set_tensor("cudnnSetTensor4dDescriptorEx", tensorDesc, dataType, &v);
}

cudnnStatus_t
cudnnGetTensor4dDescriptor(const cudnnTensorDescriptor_t tensorDesc, cudnnDataType_t *dataType,
                           int *n, int *c, int *h, int *w, int *nStride, int *cStride, int *hStride,
                           int *wStride)
{
    const char *fn = "cudnnGetTensor4dDescriptor";
    cudnnStatus_t st = mt_emu_cudnn_check_obj(fn, "tensorDesc", tensorDesc, MT_EMU_CUDNN_TENSOR);
    if (st) {
        return st;
    }
    if (!tensorDesc->set) {
        return MT_EMU_BAD_PARAM(fn, "tensorDesc was never set");
    }
    if (!dataType || !n || !c || !h || !w || !nStride || !cStride || !hStride || !wStride) {
        return MT_EMU_BAD_PARAM(fn, "an output pointer is NULL");
    }
    const mt_emu_dims4 *v = &tensorDesc->v;
    *dataType = tensorDesc->type;
    *n = v->d[0], *c = v->d[1], *h = v->d[2], *w = v->d[3];
    *nStride = (int)v->s[0], *cStride = (int)v->s[1], *hStride = (int)v->s[2];
    *wStride = (int)v->s[3];
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t
cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *filterDesc)
{
    return create_obj("cudnnCreateFilterDescriptor", (void **)filterDesc, sizeof(**filterDesc),
                      MT_EMU_CUDNN_FILTER);
}

cudnnStatus_t
cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t filterDesc)
{
    return destroy_obj("cudnnDestroyFilterDescriptor", filterDesc, MT_EMU_CUDNN_FILTER);
}

cudnnStatus_t
cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t filterDesc, cudnnDataType_t dataType,
                           cudnnTensorFormat_t format, int k, int c, int h, int w)
{
    const char *fn = "cudnnSetFilter4dDescriptor";
    mt_emu_dims4 v = {{k, c, h, w}, {0}};
    cudnnStatus_t st = mt_emu_cudnn_check_obj(fn, "filterDesc", filterDesc, MT_EMU_CUDNN_FILTER);
    if (st || (st = check_sizes(fn, v.d))) {
        return st;
    }
    if (mt_emu_cudnn_type_size(dataType) == 0) {
        return MT_EMU_BAD_PARAM(fn, "dataType %d is not a cudnnDataType_t", (int)dataType);
    }
    if (format != CUDNN_TENSOR_NCHW && format != CUDNN_TENSOR_NHWC &&
        format != CUDNN_TENSOR_NCHW_VECT_C) {
        return MT_EMU_BAD_PARAM(fn, "format %d is not a cudnnTensorFormat_t", (int)format);
    }
    if (format == CUDNN_TENSOR_NCHW_VECT_C) {
        return mt_emu_cudnn_fail(CUDNN_STATUS_NOT_SUPPORTED, false, fn,
                                 "the emulation has no vectorized (NCHW_VECT_C) layouts");
    }
    packed_strides(&v, format);
    if (numel(&v) > MAX_ELEMENTS) {
        return mt_emu_cudnn_fail(CUDNN_STATUS_NOT_SUPPORTED, false, fn,
                                 "the filter exceeds cuDNN's 2 Gi elements");
    }
    filterDesc->type = dataType;
    filterDesc->format = format;
    filterDesc->v = v;
    filterDesc->set = true;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t
cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *convDesc)
{
    cudnnStatus_t st = create_obj("cudnnCreateConvolutionDescriptor", (void **)convDesc,
                                  sizeof(**convDesc), MT_EMU_CUDNN_CONV);
    if (st == CUDNN_STATUS_SUCCESS) { /* cuDNN's defaults, before any set */
        (*convDesc)->groups = 1;
        (*convDesc)->math = CUDNN_DEFAULT_MATH;
    }
    return st;
}

cudnnStatus_t
cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t convDesc)
{
    return destroy_obj("cudnnDestroyConvolutionDescriptor", convDesc, MT_EMU_CUDNN_CONV);
}

cudnnStatus_t
cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t convDesc, int pad_h, int pad_w, int u,
                                int v, int dilation_h, int dilation_w, cudnnConvolutionMode_t mode,
                                cudnnDataType_t computeType)
{
    const char *fn = "cudnnSetConvolution2dDescriptor";
    cudnnStatus_t st = mt_emu_cudnn_check_obj(fn, "convDesc", convDesc, MT_EMU_CUDNN_CONV);
    if (st) {
        return st;
    }
    if (pad_h < 0 || pad_w < 0) {
        return MT_EMU_BAD_PARAM(fn, "padding (%d, %d) is negative", pad_h, pad_w);
    }
    if (u <= 0 || v <= 0) {
        return MT_EMU_BAD_PARAM(fn, "strides (%d, %d) must be positive", u, v);
    }
    if (dilation_h <= 0 || dilation_w <= 0) {
        return MT_EMU_BAD_PARAM(fn, "dilations (%d, %d) must be positive", dilation_h, dilation_w);
    }
    if (mode != CUDNN_CONVOLUTION && mode != CUDNN_CROSS_CORRELATION) {
        return MT_EMU_BAD_PARAM(fn, "mode %d is not a cudnnConvolutionMode_t", (int)mode);
    }
    if (mt_emu_cudnn_type_size(computeType) == 0) {
        return MT_EMU_BAD_PARAM(fn, "computeType %d is not a cudnnDataType_t", (int)computeType);
    }
    convDesc->pad[0] = pad_h, convDesc->pad[1] = pad_w;
    convDesc->stride[0] = u, convDesc->stride[1] = v;
    convDesc->dil[0] = dilation_h, convDesc->dil[1] = dilation_w;
    convDesc->mode = mode;
    convDesc->compute = computeType;
    convDesc->set = true;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t
cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t convDesc, int groupCount)
{
    const char *fn = "cudnnSetConvolutionGroupCount";
    cudnnStatus_t st = mt_emu_cudnn_check_obj(fn, "convDesc", convDesc, MT_EMU_CUDNN_CONV);
    if (st) {
        return st;
    }
    if (groupCount < 1) {
        return MT_EMU_BAD_PARAM(fn, "groupCount %d must be positive", groupCount);
    }
    convDesc->groups = groupCount;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t
cudnnGetConvolutionGroupCount(cudnnConvolutionDescriptor_t convDesc, int *groupCount)
{
    cudnnStatus_t st = check_getter("cudnnGetConvolutionGroupCount", "convDesc", convDesc,
                                    MT_EMU_CUDNN_CONV, groupCount, "groupCount");
    if (st == CUDNN_STATUS_SUCCESS) {
        *groupCount = convDesc->groups;
    }
    return st;
}

cudnnStatus_t
cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t convDesc, cudnnMathType_t mathType)
{
    const char *fn = "cudnnSetConvolutionMathType";
    cudnnStatus_t st = mt_emu_cudnn_check_obj(fn, "convDesc", convDesc, MT_EMU_CUDNN_CONV);
    if (st) {
        return st;
    }
    if (mathType != CUDNN_DEFAULT_MATH && mathType != CUDNN_TENSOR_OP_MATH &&
        mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION && mathType != CUDNN_FMA_MATH) {
        return MT_EMU_BAD_PARAM(fn, "mathType %d is not a cudnnMathType_t", (int)mathType);
    }
    convDesc->math = mathType;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t
cudnnGetConvolutionMathType(cudnnConvolutionDescriptor_t convDesc, cudnnMathType_t *mathType)
{
    cudnnStatus_t st = check_getter("cudnnGetConvolutionMathType", "convDesc", convDesc,
                                    MT_EMU_CUDNN_CONV, mathType, "mathType");
    if (st == CUDNN_STATUS_SUCCESS) {
        *mathType = convDesc->math;
    }
    return st;
}
