/* The emulated cuDNN's convolutions: the geometry checks, the algorithm and workspace
 * queries, and cudnnConvolutionForward / BackwardData / BackwardFilter computed naively on the
 * CPU in double (float operands rounded to TF32 first unless the convolution's math is
 * CUDNN_FMA_MATH, as tensor cores read them). Each pass gathers its inputs into packed NCHW doubles, walks every filter tap
 * once (taps()), and writes out = alpha * result + beta * out back in the caller's layout.
 * The "algorithms" differ only in the workspace they claim, which they must be given as
 * device memory and which they scribble over, so a caller that under-sizes or reuses it fails
 * here as it would on a GPU. */
#include "cuda/emu/cudnn_emu.h"

#include <stdlib.h>
#include <string.h>

#include "cuda/emu/emu.h"

#define WORKSPACE_FILL 0xA5 /* the bytes an algorithm leaves in its workspace */

typedef enum { FWD, BWD_DATA, BWD_FILTER } pass;

static const char *const kernel_names[] = {"emu_cudnn_conv2d_fwd", "emu_cudnn_conv2d_bwd_data",
                                           "emu_cudnn_conv2d_bwd_filter"};

/* The names cuDNN gives x, w and y in each pass's calls, for the messages. */
static const char *const arg_names[][3] = {{"xDesc", "wDesc", "yDesc"},
                                           {"dxDesc", "wDesc", "dyDesc"},
                                           {"xDesc", "dwDesc", "dyDesc"}};

/* One convolution, checked: x (N, C, H, W), w (K, C/G, KH, KW), y (N, K, OH, OW). */
typedef struct geom {
    mt_emu_dims4 x, w, y;
    int groups, pad[2], stride[2], dil[2];
    bool flip; /* CUDNN_CONVOLUTION: the filter is applied mirrored */
    cudnnDataType_t type;
    size_t esize;
    cudnnMathType_t math;
} geom;

/* cuDNN's output size; the caller has checked that the dilated filter fits the padded input. */
static int
out_size(int in, int pad, int k, int dil, int stride)
{
    return (in + 2 * pad - dil * (k - 1) - 1) / stride + 1;
}

static cudnnStatus_t
make_geom(const char *fn, pass p, cudnnTensorDescriptor_t xd, cudnnFilterDescriptor_t wd,
          cudnnConvolutionDescriptor_t cd, cudnnTensorDescriptor_t yd, geom *g)
{
    const char *const *names = arg_names[p];
    cudnnStatus_t st;
    if ((st = mt_emu_cudnn_check_obj(fn, names[0], xd, MT_EMU_CUDNN_TENSOR)) ||
        (st = mt_emu_cudnn_check_obj(fn, names[1], wd, MT_EMU_CUDNN_FILTER)) ||
        (st = mt_emu_cudnn_check_obj(fn, "convDesc", cd, MT_EMU_CUDNN_CONV)) ||
        (st = mt_emu_cudnn_check_obj(fn, names[2], yd, MT_EMU_CUDNN_TENSOR))) {
        return st;
    }
    if (!xd->set || !wd->set || !cd->set || !yd->set) {
        const char *unset = !xd->set   ? names[0]
                            : !wd->set ? names[1]
                            : !cd->set ? "convDesc"
                                       : names[2];
        return MT_EMU_BAD_PARAM(fn, "%s was created but never set", unset);
    }
    if (xd->type != wd->type || xd->type != yd->type) {
        return MT_EMU_BAD_PARAM(fn, "data types differ: %s %d, %s %d, %s %d", names[0],
                                (int)xd->type, names[1], (int)wd->type, names[2], (int)yd->type);
    }
    *g = (geom){.x = xd->v,
                .w = wd->v,
                .y = yd->v,
                .groups = cd->groups,
                .flip = cd->mode == CUDNN_CONVOLUTION,
                .type = xd->type,
                .esize = mt_emu_cudnn_type_size(xd->type),
                .math = cd->math};
    memcpy(g->pad, cd->pad, sizeof(g->pad));
    memcpy(g->stride, cd->stride, sizeof(g->stride));
    memcpy(g->dil, cd->dil, sizeof(g->dil));
    const int *x = g->x.d, *w = g->w.d, *y = g->y.d;
    if (x[1] != w[1] * g->groups) {
        return MT_EMU_BAD_PARAM(fn, "%s has %d channels, %s %d per group times %d groups", names[0],
                                x[1], names[1], w[1], g->groups);
    }
    if (w[0] % g->groups != 0) {
        return MT_EMU_BAD_PARAM(fn, "%s's %d output channels are not a multiple of %d groups",
                                names[1], w[0], g->groups);
    }
    if (y[0] != x[0] || y[1] != w[0]) {
        return MT_EMU_BAD_PARAM(fn, "%s is (%d, %d, ...) but the batch is %d and %s has %d outputs",
                                names[2], y[0], y[1], x[0], names[1], w[0]);
    }
    for (int i = 0; i < 2; i++) {
        int in = x[2 + i], k = w[2 + i], pad = g->pad[i], dil = g->dil[i];
        if ((int64_t)dil * (k - 1) + 1 > (int64_t)in + 2 * pad) {
            return MT_EMU_BAD_PARAM(fn,
                                    "the dilated filter (%d, dilation %d) is larger than the "
                                    "padded input (%d + 2 * %d) in dimension %d",
                                    k, dil, in, pad, 2 + i);
        }
        int want = out_size(in, pad, k, dil, g->stride[i]);
        if (y[2 + i] != want) {
            return MT_EMU_BAD_PARAM(fn, "%s has size %d in dimension %d, the convolution gives %d",
                                    names[2], y[2 + i], 2 + i, want);
        }
    }
    /* cuDNN's FLOAT_CONFIG and DOUBLE_CONFIG; half and integer configurations are not
     * emulated. */
    if (g->type != CUDNN_DATA_FLOAT && g->type != CUDNN_DATA_DOUBLE) {
        return mt_emu_cudnn_fail(CUDNN_STATUS_NOT_SUPPORTED, false, fn,
                                 "data type %d is not emulated (float and double are)",
                                 (int)g->type);
    }
    if (cd->compute != g->type) {
        return mt_emu_cudnn_fail(CUDNN_STATUS_NOT_SUPPORTED, false, fn,
                                 "compute type %d with data type %d is not a supported "
                                 "configuration",
                                 (int)cd->compute, (int)g->type);
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t
cudnnGetConvolution2dForwardOutputDim(const cudnnConvolutionDescriptor_t convDesc,
                                      const cudnnTensorDescriptor_t inputTensorDesc,
                                      const cudnnFilterDescriptor_t filterDesc, int *n, int *c,
                                      int *h, int *w)
{
    const char *fn = "cudnnGetConvolution2dForwardOutputDim";
    cudnnStatus_t st;
    if ((st = mt_emu_cudnn_check_obj(fn, "convDesc", convDesc, MT_EMU_CUDNN_CONV)) ||
        (st = mt_emu_cudnn_check_obj(fn, "inputTensorDesc", inputTensorDesc,
                                     MT_EMU_CUDNN_TENSOR)) ||
        (st = mt_emu_cudnn_check_obj(fn, "filterDesc", filterDesc, MT_EMU_CUDNN_FILTER))) {
        return st;
    }
    if (!convDesc->set || !inputTensorDesc->set || !filterDesc->set) {
        return MT_EMU_BAD_PARAM(fn, "a descriptor was created but never set");
    }
    if (!n || !c || !h || !w) {
        return MT_EMU_BAD_PARAM(fn, "an output pointer is NULL");
    }
    const int *x = inputTensorDesc->v.d, *f = filterDesc->v.d;
    if (x[1] != f[1] * convDesc->groups) {
        return MT_EMU_BAD_PARAM(fn,
                                "the input has %d channels, the filter %d per group times %d "
                                "groups",
                                x[1], f[1], convDesc->groups);
    }
    int out[2];
    for (int i = 0; i < 2; i++) {
        int pad = convDesc->pad[i], dil = convDesc->dil[i];
        if ((int64_t)dil * (f[2 + i] - 1) + 1 > (int64_t)x[2 + i] + 2 * pad) {
            return MT_EMU_BAD_PARAM(fn, "the dilated filter is larger than the padded input");
        }
        out[i] = out_size(x[2 + i], pad, f[2 + i], dil, convDesc->stride[i]);
    }
    *n = x[0], *c = f[0], *h = out[0], *w = out[1];
    return CUDNN_STATUS_SUCCESS;
}

/* ---- algorithms: what each claims as workspace ---- */

typedef enum { WS_NONE, WS_INDICES, WS_COLUMNS, WS_FILTER } ws_kind;

typedef struct algo_info {
    int algo;
    ws_kind ws;
    cudnnDeterminism_t det;
} algo_info;

/* The emulated algorithms of each pass, in the order the heuristics recommend them; the first
 * takes a workspace so that callers' workspace paths always run. */
static const algo_info fwd_algos[] = {
    {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, WS_INDICES, CUDNN_DETERMINISTIC},
    {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, WS_NONE, CUDNN_DETERMINISTIC},
    {CUDNN_CONVOLUTION_FWD_ALGO_GEMM, WS_COLUMNS, CUDNN_DETERMINISTIC},
};
static const algo_info bwd_data_algos[] = {
    {CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, WS_COLUMNS, CUDNN_DETERMINISTIC},
    {CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, WS_NONE, CUDNN_NON_DETERMINISTIC},
};
static const algo_info bwd_filter_algos[] = {
    {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, WS_COLUMNS, CUDNN_DETERMINISTIC},
    {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, WS_NONE, CUDNN_NON_DETERMINISTIC},
    {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, WS_FILTER, CUDNN_NON_DETERMINISTIC},
};

static const struct {
    const algo_info *list;
    int n;
    int count; /* the pass's cudnn..._ALGO_COUNT */
} algos[] = {
    {fwd_algos, 3, CUDNN_CONVOLUTION_FWD_ALGO_COUNT},
    {bwd_data_algos, 2, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT},
    {bwd_filter_algos, 3, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT},
};

static const algo_info *
find_algo(pass p, int algo)
{
    for (int i = 0; i < algos[p].n; i++) {
        if (algos[p].list[i].algo == algo) {
            return &algos[p].list[i];
        }
    }
    return NULL;
}

static size_t
ws_bytes(const algo_info *a, const geom *g)
{
    size_t taps = (size_t)g->w.d[1] * g->w.d[2] * g->w.d[3]; /* per output element */
    switch (a->ws) {
    case WS_NONE:
        return 0;
    case WS_INDICES: /* an (ih, iw) offset pair per tap */
        return taps * 2 * sizeof(int);
    case WS_COLUMNS: /* one image's im2col matrix */
        return taps * (size_t)g->y.d[2] * g->y.d[3] * g->esize;
    case WS_FILTER: /* a partial filter gradient */
        return taps * (size_t)g->w.d[0] * g->esize;
    }
    return 0;
}

/* The algorithm's workspace size, or a failure for an unknown or unemulated algorithm. */
static cudnnStatus_t
algo_workspace(const char *fn, pass p, int algo, const geom *g, size_t *bytes)
{
    if (algo < 0 || algo >= algos[p].count) {
        return MT_EMU_BAD_PARAM(fn, "algo %d is not an algorithm of this pass", algo);
    }
    const algo_info *a = find_algo(p, algo);
    if (!a) {
        return mt_emu_cudnn_fail(CUDNN_STATUS_NOT_SUPPORTED, false, fn,
                                 "algo %d is not emulated (the _v7 query lists those that are)",
                                 algo);
    }
    *bytes = ws_bytes(a, g);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t
get_workspace_size(const char *fn, pass p, cudnnHandle_t h, cudnnTensorDescriptor_t xd,
                   cudnnFilterDescriptor_t wd, cudnnConvolutionDescriptor_t cd,
                   cudnnTensorDescriptor_t yd, int algo, size_t *sizeInBytes)
{
    geom g;
    cudnnStatus_t st;
    if ((st = mt_emu_cudnn_check_obj(fn, "handle", h, MT_EMU_CUDNN_HANDLE)) ||
        (st = make_geom(fn, p, xd, wd, cd, yd, &g))) {
        return st;
    }
    if (!sizeInBytes) {
        return MT_EMU_BAD_PARAM(fn, "sizeInBytes is NULL");
    }
    return algo_workspace(fn, p, algo, &g, sizeInBytes);
}

cudnnStatus_t
cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                                        const cudnnFilterDescriptor_t wDesc,
                                        const cudnnConvolutionDescriptor_t convDesc,
                                        const cudnnTensorDescriptor_t yDesc,
                                        cudnnConvolutionFwdAlgo_t algo, size_t *sizeInBytes)
{
    return get_workspace_size("cudnnGetConvolutionForwardWorkspaceSize", FWD, handle, xDesc, wDesc,
                              convDesc, yDesc, (int)algo, sizeInBytes);
}

cudnnStatus_t
cudnnGetConvolutionBackwardDataWorkspaceSize(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t dxDesc,
    cudnnConvolutionBwdDataAlgo_t algo, size_t *sizeInBytes)
{
    return get_workspace_size("cudnnGetConvolutionBackwardDataWorkspaceSize", BWD_DATA, handle,
                              dxDesc, wDesc, convDesc, dyDesc, (int)algo, sizeInBytes);
}

cudnnStatus_t
cudnnGetConvolutionBackwardFilterWorkspaceSize(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t gradDesc,
    cudnnConvolutionBwdFilterAlgo_t algo, size_t *sizeInBytes)
{
    return get_workspace_size("cudnnGetConvolutionBackwardFilterWorkspaceSize", BWD_FILTER, handle,
                              xDesc, gradDesc, convDesc, dyDesc, (int)algo, sizeInBytes);
}

/* One heuristic result, whatever the pass (the three perf structs share this layout). */
typedef struct algo_perf {
    int algo;
    cudnnStatus_t status;
    float time;
    size_t memory;
    cudnnDeterminism_t det;
    cudnnMathType_t math;
} algo_perf;

/* The _v7 heuristics: the emulated algorithms first (CUDNN_STATUS_SUCCESS), then the pass's
 * other algorithms with CUDNN_STATUS_NOT_SUPPORTED, at most requested of them. */
static cudnnStatus_t
get_algorithms(const char *fn, pass p, cudnnHandle_t h, cudnnTensorDescriptor_t xd,
               cudnnFilterDescriptor_t wd, cudnnConvolutionDescriptor_t cd,
               cudnnTensorDescriptor_t yd, int requested, int *returned, const void *perf,
               algo_perf *out)
{
    geom g;
    cudnnStatus_t st;
    if ((st = mt_emu_cudnn_check_obj(fn, "handle", h, MT_EMU_CUDNN_HANDLE)) ||
        (st = make_geom(fn, p, xd, wd, cd, yd, &g))) {
        return st;
    }
    if (!returned || !perf) {
        return MT_EMU_BAD_PARAM(fn, "returnedAlgoCount or perfResults is NULL");
    }
    if (requested <= 0) {
        return MT_EMU_BAD_PARAM(fn, "requestedAlgoCount %d must be positive", requested);
    }
    int n = 0;
    for (int i = 0; i < algos[p].n && n < requested; i++, n++) {
        const algo_info *a = &algos[p].list[i];
        out[n] = (algo_perf){
            a->algo, CUDNN_STATUS_SUCCESS, 0.01f * (float)(i + 1), ws_bytes(a, &g), a->det, g.math};
    }
    for (int algo = 0; algo < algos[p].count && n < requested; algo++) {
        if (!find_algo(p, algo)) {
            out[n++] = (algo_perf){algo, CUDNN_STATUS_NOT_SUPPORTED, -1.0f,
                                   0,    CUDNN_DETERMINISTIC,        g.math};
        }
    }
    *returned = n;
    return CUDNN_STATUS_SUCCESS;
}

/* The three passes' queries, the _v7 heuristics and cudnnFind* alike (see cudnn.h): st = fn's
 * ranking, copied into the pass's own perf struct. (A macro because each pass has its own perf
 * type; the caller returns st.) */
#define RANKING(st, fn, p, perf_type, algo_type, count, x, w, y)                     \
    do {                                                                             \
        algo_perf r[count];                                                          \
        st = get_algorithms(fn, p, handle, x, w, convDesc, y, requestedAlgoCount,    \
                            returnedAlgoCount, perfResults, r);                      \
        for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < *returnedAlgoCount; i++) { \
            perfResults[i] = (perf_type){(algo_type)r[i].algo,                       \
                                         r[i].status,                                \
                                         r[i].time,                                  \
                                         r[i].memory,                                \
                                         r[i].det,                                   \
                                         r[i].math,                                  \
                                         {0}};                                       \
        }                                                                            \
    } while (0)

cudnnStatus_t
cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc,
                                       const cudnnFilterDescriptor_t filterDesc,
                                       const cudnnConvolutionDescriptor_t convDesc,
                                       const cudnnTensorDescriptor_t destDesc,
                                       const int requestedAlgoCount, int *returnedAlgoCount,
                                       cudnnConvolutionFwdAlgoPerf_t *perfResults)
{
    cudnnStatus_t st;
    RANKING(st, "cudnnGetConvolutionForwardAlgorithm_v7", FWD, cudnnConvolutionFwdAlgoPerf_t,
            cudnnConvolutionFwdAlgo_t, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, srcDesc, filterDesc,
            destDesc);
    return st;
}

cudnnStatus_t
cudnnGetConvolutionBackwardDataAlgorithm_v7(cudnnHandle_t handle,
                                            const cudnnFilterDescriptor_t filterDesc,
                                            const cudnnTensorDescriptor_t diffDesc,
                                            const cudnnConvolutionDescriptor_t convDesc,
                                            const cudnnTensorDescriptor_t gradDesc,
                                            const int requestedAlgoCount, int *returnedAlgoCount,
                                            cudnnConvolutionBwdDataAlgoPerf_t *perfResults)
{
    cudnnStatus_t st;
    RANKING(st, "cudnnGetConvolutionBackwardDataAlgorithm_v7", BWD_DATA,
            cudnnConvolutionBwdDataAlgoPerf_t, cudnnConvolutionBwdDataAlgo_t,
            CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, gradDesc, filterDesc, diffDesc);
    return st;
}

cudnnStatus_t
cudnnGetConvolutionBackwardFilterAlgorithm_v7(cudnnHandle_t handle,
                                              const cudnnTensorDescriptor_t srcDesc,
                                              const cudnnTensorDescriptor_t diffDesc,
                                              const cudnnConvolutionDescriptor_t convDesc,
                                              const cudnnFilterDescriptor_t gradDesc,
                                              const int requestedAlgoCount, int *returnedAlgoCount,
                                              cudnnConvolutionBwdFilterAlgoPerf_t *perfResults)
{
    cudnnStatus_t st;
    RANKING(st, "cudnnGetConvolutionBackwardFilterAlgorithm_v7", BWD_FILTER,
            cudnnConvolutionBwdFilterAlgoPerf_t, cudnnConvolutionBwdFilterAlgo_t,
            CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, srcDesc, gradDesc, diffDesc);
    return st;
}

cudnnStatus_t
cudnnFindConvolutionForwardAlgorithm(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                                     const cudnnFilterDescriptor_t wDesc,
                                     const cudnnConvolutionDescriptor_t convDesc,
                                     const cudnnTensorDescriptor_t yDesc,
                                     const int requestedAlgoCount, int *returnedAlgoCount,
                                     cudnnConvolutionFwdAlgoPerf_t *perfResults)
{
    cudnnStatus_t st;
    RANKING(st, "cudnnFindConvolutionForwardAlgorithm", FWD, cudnnConvolutionFwdAlgoPerf_t,
            cudnnConvolutionFwdAlgo_t, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, xDesc, wDesc, yDesc);
    return st;
}

cudnnStatus_t
cudnnFindConvolutionBackwardDataAlgorithm(cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc,
                                          const cudnnTensorDescriptor_t dyDesc,
                                          const cudnnConvolutionDescriptor_t convDesc,
                                          const cudnnTensorDescriptor_t dxDesc,
                                          const int requestedAlgoCount, int *returnedAlgoCount,
                                          cudnnConvolutionBwdDataAlgoPerf_t *perfResults)
{
    cudnnStatus_t st;
    RANKING(st, "cudnnFindConvolutionBackwardDataAlgorithm", BWD_DATA,
            cudnnConvolutionBwdDataAlgoPerf_t, cudnnConvolutionBwdDataAlgo_t,
            CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, dxDesc, wDesc, dyDesc);
    return st;
}

cudnnStatus_t
cudnnFindConvolutionBackwardFilterAlgorithm(cudnnHandle_t handle,
                                            const cudnnTensorDescriptor_t xDesc,
                                            const cudnnTensorDescriptor_t dyDesc,
                                            const cudnnConvolutionDescriptor_t convDesc,
                                            const cudnnFilterDescriptor_t dwDesc,
                                            const int requestedAlgoCount, int *returnedAlgoCount,
                                            cudnnConvolutionBwdFilterAlgoPerf_t *perfResults)
{
    cudnnStatus_t st;
    RANKING(st, "cudnnFindConvolutionBackwardFilterAlgorithm", BWD_FILTER,
            cudnnConvolutionBwdFilterAlgoPerf_t, cudnnConvolutionBwdFilterAlgo_t,
            CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, xDesc, dwDesc, dyDesc);
    return st;
}
#undef RANKING

/* ---- the computation ---- */

/* The operand at p with view v, as packed NCHW doubles (NULL when out of host memory); float
 * operands rounded to TF32 when tf32 (tensor cores read them so). */
static double *
gather(const void *p, const mt_emu_dims4 *v, cudnnDataType_t type, bool tf32)
{
    const int *d = v->d;
    double *out = malloc((size_t)d[0] * d[1] * d[2] * d[3] * sizeof(double));
    if (!out) {
        return NULL;
    }
    size_t o = 0;
    for (int a = 0; a < d[0]; a++) {
        for (int b = 0; b < d[1]; b++) {
            for (int c = 0; c < d[2]; c++) {
                for (int e = 0; e < d[3]; e++) {
                    int64_t i = a * v->s[0] + b * v->s[1] + c * v->s[2] + e * v->s[3];
                    double x = type == CUDNN_DATA_FLOAT ? (double)((const float *)p)[i]
                                                        : ((const double *)p)[i];
                    out[o++] = tf32 ? mt_emu_tf32(x) : x;
                }
            }
        }
    }
    return out;
}

/* out = alpha * acc + beta * out through view v; out is not read when beta is 0. */
static void
scatter(void *p, const mt_emu_dims4 *v, cudnnDataType_t type, const double *acc, double alpha,
        double beta)
{
    const int *d = v->d;
    size_t o = 0;
    for (int a = 0; a < d[0]; a++) {
        for (int b = 0; b < d[1]; b++) {
            for (int c = 0; c < d[2]; c++) {
                for (int e = 0; e < d[3]; e++) {
                    int64_t i = a * v->s[0] + b * v->s[1] + c * v->s[2] + e * v->s[3];
                    double r = alpha * acc[o++];
                    if (type == CUDNN_DATA_FLOAT) {
                        float *f = (float *)p + i;
                        *f = (float)(beta != 0.0 ? r + beta * (double)*f : r);
                    } else {
                        double *f = (double *)p + i;
                        *f = beta != 0.0 ? r + beta * *f : r;
                    }
                }
            }
        }
    }
}

/* Every tap of the convolution once; the pass's output accumulates (zeroed by the caller).
 * x (N, C, H, W), w (K, C/G, KH, KW), y (N, K, OH, OW), packed NCHW. */
static void
taps(const geom *g, pass p, double *x, double *w, double *y)
{
    const int C = g->x.d[1], H = g->x.d[2], W = g->x.d[3];
    const int K = g->w.d[0], CG = g->w.d[1], KH = g->w.d[2], KW = g->w.d[3];
    const int N = g->y.d[0], OH = g->y.d[2], OW = g->y.d[3], KG = K / g->groups;
    for (int n = 0; n < N; n++) {
        for (int k = 0; k < K; k++) {
            const int c0 = k / KG * CG; /* the group's first input channel */
            for (int oh = 0; oh < OH; oh++) {
                for (int ow = 0; ow < OW; ow++) {
                    size_t yi = (((size_t)n * K + k) * OH + oh) * OW + ow;
                    for (int cg = 0; cg < CG; cg++) {
                        for (int i = 0; i < KH; i++) {
                            int ih = oh * g->stride[0] - g->pad[0] + i * g->dil[0];
                            if (ih < 0 || ih >= H) {
                                continue;
                            }
                            for (int j = 0; j < KW; j++) {
                                int iw = ow * g->stride[1] - g->pad[1] + j * g->dil[1];
                                if (iw < 0 || iw >= W) {
                                    continue;
                                }
                                int fi = g->flip ? KH - 1 - i : i, fj = g->flip ? KW - 1 - j : j;
                                size_t xi = (((size_t)n * C + c0 + cg) * H + ih) * W + iw;
                                size_t wi = (((size_t)k * CG + cg) * KH + fi) * KW + fj;
                                if (p == FWD) {
                                    y[yi] += x[xi] * w[wi];
                                } else if (p == BWD_DATA) {
                                    x[xi] += w[wi] * y[yi];
                                } else {
                                    w[wi] += x[xi] * y[yi];
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/* [p, p + bytes) lies inside one live device block of device dev, as a GPU needs. */
static cudnnStatus_t
check_device_ptr(const char *fn, const char *arg, const void *p, size_t bytes, int dev)
{
    int owner = -1;
    if (!mt_emu_device_range(p, bytes, &owner)) {
        return mt_emu_cudnn_fail(CUDNN_STATUS_EXECUTION_FAILED, true, fn,
                                 "%s %p (%zu bytes) is not inside one live device allocation", arg,
                                 p, bytes);
    }
    if (owner != dev) {
        return mt_emu_cudnn_fail(CUDNN_STATUS_EXECUTION_FAILED, true, fn,
                                 "%s %p is memory of device %d, the handle's is device %d", arg, p,
                                 owner, dev);
    }
    return CUDNN_STATUS_SUCCESS;
}

static bool
overlaps(const void *a, size_t na, const void *b, size_t nb)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return na > 0 && nb > 0 && x < y + nb && y < x + na;
}

static const char *const data_names[][3] = {{"x", "w", "y"}, {"dx", "w", "dy"}, {"x", "dw", "dy"}};
static const int out_index[] = {2, 0, 1}; /* which of (x, w, y) each pass writes */

/* One pass, checked, as it runs (on the calling thread, or queued on the handle's stream in
 * the asynchronous mode): its geometry, operands (x, w, y), alpha and beta read already (cuDNN
 * reads them on the host at the call), workspace. */
typedef struct conv_work {
    const char *fn;
    pass p;
    geom g;
    const void *data[3];
    void *out, *ws;
    size_t need;
    double a, b;
    int device;
    cudaStream_t stream;
} conv_work;

static cudnnStatus_t
conv_exec(const conv_work *w)
{
    MT_EMU_DEVICE_WORK_SCOPE(); /* the pass reads and writes device memory from here on */
    const geom *g = &w->g;
    const mt_emu_dims4 *views[3] = {&g->x, &g->w, &g->y};
    const int o = out_index[w->p];
    /* cuDNN's default math (and the tensor-op ones) may use TF32 for float on an Ampere or
     * later GPU, which the emulated device is; FMA math never does */
    bool tf32 = g->type == CUDNN_DATA_FLOAT && g->math != CUDNN_FMA_MATH;
    uint64_t t0 = mt_emu_now_ns();
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    double *buf[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; i++) {
        const int *d = views[i]->d;
        buf[i] = i == o ? calloc((size_t)d[0] * d[1] * d[2] * d[3], sizeof(double))
                        : gather(w->data[i], views[i], g->type, tf32);
        if (!buf[i]) {
            st = mt_emu_cudnn_fail(CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED, false, w->fn,
                                   "out of host memory");
            goto out_free;
        }
    }
    if (w->need > 0) {
        memset(w->ws, WORKSPACE_FILL, w->need);
    }
    taps(g, w->p, buf[0], buf[1], buf[2]);
    scatter(w->out, views[o], g->type, buf[o], w->a, w->b);
    mt_emu_kernel_ran(kernel_names[w->p], w->device, w->stream, t0, mt_emu_now_ns());
out_free:
    for (int i = 0; i < 3; i++) {
        free(buf[i]);
    }
    return st;
}

/* conv_exec on a stream's worker: its failure is the device's next synchronisation's */
static int
conv_deferred(void *w)
{
    return conv_exec(w) == CUDNN_STATUS_SUCCESS ? (int)cudaSuccess : (int)cudaErrorLaunchFailure;
}

/* One pass: data (x, w, y) with data[out_index[p]] == out, the operand written. */
static cudnnStatus_t
run(const char *fn, pass p, cudnnHandle_t h, const void *alpha, const void *beta,
    cudnnTensorDescriptor_t xd, cudnnFilterDescriptor_t wd, cudnnConvolutionDescriptor_t cd,
    cudnnTensorDescriptor_t yd, const void *const data[3], void *out, int algo, void *ws,
    size_t ws_size)
{
    const char *const *names = data_names[p];
    const int o = out_index[p];
    geom g;
    size_t need = 0;
    cudnnStatus_t st;
    if ((st = mt_emu_cudnn_check_obj(fn, "handle", h, MT_EMU_CUDNN_HANDLE)) ||
        (st = make_geom(fn, p, xd, wd, cd, yd, &g))) {
        return st;
    }
    if (!alpha || !beta) {
        return MT_EMU_BAD_PARAM(fn, "alpha or beta is NULL");
    }
    for (int i = 0; i < 3; i++) {
        if (!data[i]) {
            return MT_EMU_BAD_PARAM(fn, "%s is NULL", names[i]);
        }
    }
    if ((st = algo_workspace(fn, p, algo, &g, &need))) {
        return st;
    }
    if (ws_size < need || (need > 0 && !ws)) {
        return MT_EMU_BAD_PARAM(fn, "algo %d needs a workspace of %zu bytes, given %p of %zu", algo,
                                need, ws, ws_size);
    }
    /* What a GPU would fault on, or run somewhere else than the caller means. */
    if ((st = mt_emu_cudnn_check_launch(fn, h))) {
        return st;
    }
    int dev;
    if (mt_emu_device_range(alpha, g.esize, &dev) || mt_emu_device_range(beta, g.esize, &dev)) {
        return mt_emu_cudnn_fail(CUDNN_STATUS_EXECUTION_FAILED, true, fn,
                                 "alpha %p or beta %p is device memory: cuDNN reads them on the "
                                 "host",
                                 alpha, beta);
    }
    const mt_emu_dims4 *views[3] = {&g.x, &g.w, &g.y};
    size_t bytes[3];
    for (int i = 0; i < 3; i++) {
        bytes[i] = (size_t)mt_emu_dims4_extent(views[i]) * g.esize;
        if ((st = check_device_ptr(fn, names[i], data[i], bytes[i], h->device))) {
            return st;
        }
    }
    if (ws && ws_size > 0 && (st = check_device_ptr(fn, "workSpace", ws, ws_size, h->device))) {
        return st;
    }
    for (int i = 0; i < 3; i++) {
        if (i != o && overlaps(out, bytes[o], data[i], bytes[i])) {
            return mt_emu_cudnn_fail(CUDNN_STATUS_BAD_PARAM, true, fn,
                                     "the output %s overlaps the input %s", names[o], names[i]);
        }
        if (overlaps(ws, need, data[i], bytes[i])) {
            return mt_emu_cudnn_fail(CUDNN_STATUS_BAD_PARAM, true, fn, "the workspace overlaps %s",
                                     names[i]);
        }
    }

    bool f32 = g.type == CUDNN_DATA_FLOAT;
    conv_work w = {.fn = fn,
                   .p = p,
                   .g = g,
                   .data = {data[0], data[1], data[2]},
                   .out = out,
                   .ws = ws,
                   .need = need,
                   .a = f32 ? *(const float *)alpha : *(const double *)alpha,
                   .b = f32 ? *(const float *)beta : *(const double *)beta,
                   .device = h->device,
                   .stream = h->stream};
    if (mt_emu_stream_defer(h->stream, conv_deferred, &w, sizeof(w))) {
        return CUDNN_STATUS_SUCCESS; /* queued: it runs after the stream's earlier work */
    }
    mt_emu_stream_drain(h->stream); /* the stream's earlier work first */
    return conv_exec(&w);
}

cudnnStatus_t
cudnnConvolutionForward(cudnnHandle_t handle, const void *alpha,
                        const cudnnTensorDescriptor_t xDesc, const void *x,
                        const cudnnFilterDescriptor_t wDesc, const void *w,
                        const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionFwdAlgo_t algo,
                        void *workSpace, size_t workSpaceSizeInBytes, const void *beta,
                        const cudnnTensorDescriptor_t yDesc, void *y)
{
    const void *const data[3] = {x, w, y};
    return run("cudnnConvolutionForward", FWD, handle, alpha, beta, xDesc, wDesc, convDesc, yDesc,
               data, y, (int)algo, workSpace, workSpaceSizeInBytes);
}

cudnnStatus_t
cudnnConvolutionBackwardData(cudnnHandle_t handle, const void *alpha,
                             const cudnnFilterDescriptor_t wDesc, const void *w,
                             const cudnnTensorDescriptor_t dyDesc, const void *dy,
                             const cudnnConvolutionDescriptor_t convDesc,
                             cudnnConvolutionBwdDataAlgo_t algo, void *workSpace,
                             size_t workSpaceSizeInBytes, const void *beta,
                             const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    const void *const data[3] = {dx, w, dy};
    return run("cudnnConvolutionBackwardData", BWD_DATA, handle, alpha, beta, dxDesc, wDesc,
               convDesc, dyDesc, data, dx, (int)algo, workSpace, workSpaceSizeInBytes);
}

cudnnStatus_t
cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void *alpha,
                               const cudnnTensorDescriptor_t xDesc, const void *x,
                               const cudnnTensorDescriptor_t dyDesc, const void *dy,
                               const cudnnConvolutionDescriptor_t convDesc,
                               cudnnConvolutionBwdFilterAlgo_t algo, void *workSpace,
                               size_t workSpaceSizeInBytes, const void *beta,
                               const cudnnFilterDescriptor_t dwDesc, void *dw)
{
    const void *const data[3] = {x, dw, dy};
    return run("cudnnConvolutionBackwardFilter", BWD_FILTER, handle, alpha, beta, xDesc, dwDesc,
               convDesc, dyDesc, data, dw, (int)algo, workSpace, workSpaceSizeInBytes);
}
