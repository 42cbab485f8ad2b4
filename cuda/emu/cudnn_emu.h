/* What the emulated cuDNN's two files share: cudnn.c (handles, descriptors, failures) and
 * cudnn_conv.c (the convolutions). Internal to the emulation; the backend sees only cudnn.h. */
#ifndef MT_EMU_CUDNN_EMU_H
#define MT_EMU_CUDNN_EMU_H

#include <cudnn.h>

#include <stdbool.h>
#include <stdint.h>

struct cudnnContext {
    int device; /* current when cudnnCreate ran: the handle works only there */
    cudaStream_t stream;
};

/* A 4-d operand: sizes (N, C, H, W) or (K, C, H, W), strides in elements. */
typedef struct mt_emu_dims4 {
    int d[4];
    int64_t s[4];
} mt_emu_dims4;

struct cudnnTensorStruct {
    bool set;
    cudnnDataType_t type;
    mt_emu_dims4 v;
};

struct cudnnFilterStruct {
    bool set;
    cudnnDataType_t type;
    cudnnTensorFormat_t format;
    mt_emu_dims4 v;
};

struct cudnnConvolutionStruct {
    bool set;
    int pad[2], stride[2], dil[2];
    cudnnConvolutionMode_t mode;
    cudnnDataType_t compute;
    int groups;
    cudnnMathType_t math;
};

typedef enum {
    MT_EMU_CUDNN_HANDLE,
    MT_EMU_CUDNN_TENSOR,
    MT_EMU_CUDNN_FILTER,
    MT_EMU_CUDNN_CONV
} mt_emu_cudnn_kind;

/* Records why fn failed (cudnnGetLastErrorString) and returns st; emu: a check only the
 * emulation makes (a GPU fault, a wrong device), also printed to stderr as it means a bug. */
cudnnStatus_t mt_emu_cudnn_fail(cudnnStatus_t st, bool emu, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The common failure: an argument cuDNN documents as checked. */
#define MT_EMU_BAD_PARAM(fn, ...) \
    mt_emu_cudnn_fail(CUDNN_STATUS_BAD_PARAM, false, (fn), __VA_ARGS__)

/* p (argument arg of fn) is a live object of this kind: BAD_PARAM for NULL, and for a
 * destroyed or foreign pointer (which cuDNN would read as freed memory), said on stderr. */
cudnnStatus_t mt_emu_cudnn_check_obj(const char *fn, const char *arg, const void *p,
                                     mt_emu_cudnn_kind kind);

/* Work can run on h: its device is current and its stream is that device's. */
cudnnStatus_t mt_emu_cudnn_check_launch(const char *fn, cudnnHandle_t h);

/* Bytes per element; 0 for a value that is not a cudnnDataType_t. */
size_t mt_emu_cudnn_type_size(cudnnDataType_t t);

/* The elements from the first to one past the last (every size >= 1). */
static inline int64_t
mt_emu_dims4_extent(const mt_emu_dims4 *v)
{
    int64_t e = 1;
    for (int i = 0; i < 4; i++) {
        e += (int64_t)(v->d[i] - 1) * v->s[i];
    }
    return e;
}

#endif
