/* conv2d and its backward (convolution_backward_input / _weight) on cuDNN, NCHW float32 and
 * float64. The checks and the geometry are the front end's (ops/conv_checks.c, its plan in
 * a->plan), as for the CPU kernels; every operand is made contiguous first.
 *
 * One cuDNN handle per device per thread (handles.h), set to the thread's current stream
 * before each use. The descriptors and the ranking of the algorithms are cached per convolution
 * (the plan cache below, as PyTorch's): cuDNN's heuristics (the _v7 queries), or under
 * torch.backends.cudnn.benchmark its measurements (cudnnFind*), are asked once per key. The
 * algorithm is the first of that ranking whose workspace, a device tensor from our caching
 * allocator, can be had. Float32 runs in cuDNN's default math, which lets it use TF32 tensor
 * cores, unless torch.backends.cudnn.allow_tf32 is False (then FMA math only), as PyTorch's.
 * Under torch.backends.cudnn.enabled = False, and in a build without the cuDNN headers
 * (MT_CUDA_CUDNN), the convolutions run on im2col and cuBLAS instead (conv_gemm.c), as
 * PyTorch's slow_conv2d. */
#include "cuda/conv_gemm.h"
#include "cuda/elementwise.h"
#include "cuda/handles.h"
#include "cuda/ops.h"
#include "cuda/profile.h"

#ifdef MT_CUDA_CUDNN
#include <cudnn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static mt_status
cudnn_check_at(cudnnStatus_t s, const char *call, const char *file, int line)
{
    if (s == CUDNN_STATUS_SUCCESS) {
        return MT_OK;
    }
    return mt_fail(MT_ERUNTIME, "cuDNN error: %s when calling `%s` (%s:%d)", cudnnGetErrorString(s),
                   call, file, line);
}
#define cudnn_check(call) cudnn_check_at((call), #call, __FILE__, __LINE__)

/* A cuDNN call as a Library:: event, its kernels under the call's name (a literal). */
#define CUDNN_TRACED(st, name, call)                                                            \
    do {                                                                                        \
        mt_cuda_span span_ = mt_cuda_span_begin(name, MT_LAYER_LIBRARY, "cuDNN", MT_GPU_KERNEL, \
                                                name);                                          \
        (st) = cudnn_check(call);                                                               \
        mt_cuda_span_end(&span_);                                                               \
    } while (0)

static mt_status
create_handle(void **out)
{
    mt_status st;
    CUDNN_TRACED(st, "cudnnCreate", cudnnCreate((cudnnHandle_t *)out));
    return st;
}

static void
destroy_handle(void *h)
{
    (void)cudnnDestroy(h);
}

static mt_cuda_handles cudnn_handles = MT_CUDA_HANDLES_INIT("cuDNN", create_handle, destroy_handle);

static mt_status
handle_for(mt_device dev, cudnnHandle_t *out)
{
    mt_status st = mt_cuda_thread_handle(&cudnn_handles, dev, (void **)out);
    return st ? st : cudnn_check(cudnnSetStream(*out, mt_cuda_current_stream(dev.index)));
}

/* The descriptors of one convolution: input x (N, C, H, W), weight w (OC, C/G, KH, KW),
 * output y (N, OC, OH, OW), all contiguous, and the convolution itself. */
typedef struct conv_plan {
    cudnnHandle_t h;
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    cudnnDataType_t type;
} conv_plan;

static void
plan_destroy(conv_plan *p)
{
    if (p->x) {
        cudnnDestroyTensorDescriptor(p->x);
    }
    if (p->y) {
        cudnnDestroyTensorDescriptor(p->y);
    }
    if (p->w) {
        cudnnDestroyFilterDescriptor(p->w);
    }
    if (p->conv) {
        cudnnDestroyConvolutionDescriptor(p->conv);
    }
}

/* p's descriptors for convolution g of dtype dt, float32 allowed TF32 or not (p->h is left
 * NULL) */
static mt_status
plan_init(conv_plan *p, const conv_geom *g, mt_dtype dt, bool tf32)
{
    /* PyTorch's setConvolutionParams: cuDNN's default math (TF32 where the GPU has it) unless
     * float32 must not use TF32; doubles never do */
    cudnnMathType_t math = dt == MT_FLOAT32 && !tf32 ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
    *p = (conv_plan){0};
    p->type = dt == MT_FLOAT32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_DOUBLE;
    mt_status st;
    if ((st = cudnn_check(cudnnCreateTensorDescriptor(&p->x))) ||
        (st = cudnn_check(cudnnCreateTensorDescriptor(&p->y))) ||
        (st = cudnn_check(cudnnCreateFilterDescriptor(&p->w))) ||
        (st = cudnn_check(cudnnCreateConvolutionDescriptor(&p->conv))) ||
        (st = cudnn_check(cudnnSetTensor4dDescriptor(p->x, CUDNN_TENSOR_NCHW, p->type, (int)g->n,
                                                     (int)g->c, (int)g->h, (int)g->w))) ||
        (st = cudnn_check(cudnnSetTensor4dDescriptor(p->y, CUDNN_TENSOR_NCHW, p->type, (int)g->n,
                                                     (int)g->oc, (int)g->oh, (int)g->ow))) ||
        (st = cudnn_check(cudnnSetFilter4dDescriptor(p->w, p->type, CUDNN_TENSOR_NCHW, (int)g->oc,
                                                     (int)(g->c / g->groups), (int)g->kh,
                                                     (int)g->kw))) ||
        (st = cudnn_check(cudnnSetConvolution2dDescriptor(p->conv, (int)g->ph, (int)g->pw,
                                                          (int)g->sh, (int)g->sw, (int)g->dh,
                                                          (int)g->dw, CUDNN_CROSS_CORRELATION,
                                                          p->type))) ||
        (st = cudnn_check(cudnnSetConvolutionGroupCount(p->conv, (int)g->groups))) ||
        (st = cudnn_check(cudnnSetConvolutionMathType(p->conv, math)))) {
        plan_destroy(p);
    }
    return st;
}

/* *ws = a device buffer of at least bytes (NULL tensor for 0), from the caching allocator. */
static mt_status
workspace(size_t bytes, mt_device dev, mt_tensor **ws)
{
    if (bytes == 0) {
        return MT_OK;
    }
    int64_t n = (int64_t)((bytes + 7) / 8);
    return mt_tensor_empty(1, &n, MT_FLOAT64, dev, ws);
}

static void *
ws_data(mt_tensor *ws)
{
    return ws ? mt_tensor_data(ws) : NULL;
}

/* The three passes of a convolution, for the algorithm choice. */
typedef enum { PASS_FWD, PASS_BWD_DATA, PASS_BWD_FILTER } conv_pass;

#define MAX_ALGOS 16 /* more than any pass has (CUDNN_CONVOLUTION_*_ALGO_COUNT) */

static cudnnStatus_t
workspace_size(const conv_plan *p, conv_pass k, int algo, size_t *bytes)
{
    switch (k) {
    case PASS_FWD:
        return cudnnGetConvolutionForwardWorkspaceSize(p->h, p->x, p->w, p->conv, p->y,
                                                       (cudnnConvolutionFwdAlgo_t)algo, bytes);
    case PASS_BWD_DATA:
        return cudnnGetConvolutionBackwardDataWorkspaceSize(p->h, p->w, p->y, p->conv, p->x,
                                                            (cudnnConvolutionBwdDataAlgo_t)algo,
                                                            bytes);
    default:
        return cudnnGetConvolutionBackwardFilterWorkspaceSize(p->h, p->x, p->y, p->conv, p->w,
                                                              (cudnnConvolutionBwdFilterAlgo_t)algo,
                                                              bytes);
    }
}

/* cuDNN's ranking of the pass's algorithms as plain arrays: `query` (the _v7 heuristics, or
 * cudnnFind*, which runs them) writes *found entries of type perf_type into perf_, copied out to
 * algos, status and det. (A macro because each pass has its own perf struct type with the same
 * fields.) */
#define RANK(st, name, query, perf_type, count)              \
    do {                                                     \
        perf_type perf_[count];                              \
        _Static_assert(count <= MAX_ALGOS, "MAX_ALGOS");     \
        CUDNN_TRACED(st, name, query);                       \
        for (int j_ = 0; st == MT_OK && j_ < *found; j_++) { \
            algos[j_] = (int)perf_[j_].algo;                 \
            status[j_] = perf_[j_].status;                   \
            det[j_] = perf_[j_].determinism;                 \
        }                                                    \
    } while (0)

/* The ranking of pass k: cuDNN's heuristics (the _v7 queries), or with measured
 * (torch.backends.cudnn.benchmark) cudnnFind*, which runs each algorithm and ranks them by
 * measured time. A pass's two queries take the same arguments, so one call serves both. */
static mt_status
rank_algos(const conv_plan *p, conv_pass k, bool measured, int *found, int *algos,
           cudnnStatus_t *status, cudnnDeterminism_t *det)
{
    mt_status st;
    if (k == PASS_FWD) {
        RANK(st,
             measured ? "cudnnFindConvolutionForwardAlgorithm"
                      : "cudnnGetConvolutionForwardAlgorithm_v7",
             (measured ? cudnnFindConvolutionForwardAlgorithm
                       : cudnnGetConvolutionForwardAlgorithm_v7)(p->h, p->x, p->w, p->conv, p->y,
                                                                 CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                                 found, perf_),
             cudnnConvolutionFwdAlgoPerf_t, CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
    } else if (k == PASS_BWD_DATA) {
        RANK(st,
             measured ? "cudnnFindConvolutionBackwardDataAlgorithm"
                      : "cudnnGetConvolutionBackwardDataAlgorithm_v7",
             (measured ? cudnnFindConvolutionBackwardDataAlgorithm
                       : cudnnGetConvolutionBackwardDataAlgorithm_v7)(
                 p->h, p->w, p->y, p->conv, p->x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, found,
                 perf_),
             cudnnConvolutionBwdDataAlgoPerf_t, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT);
    } else {
        RANK(st,
             measured ? "cudnnFindConvolutionBackwardFilterAlgorithm"
                      : "cudnnGetConvolutionBackwardFilterAlgorithm_v7",
             (measured ? cudnnFindConvolutionBackwardFilterAlgorithm
                       : cudnnGetConvolutionBackwardFilterAlgorithm_v7)(
                 p->h, p->x, p->y, p->conv, p->w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, found,
                 perf_),
             cudnnConvolutionBwdFilterAlgoPerf_t, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT);
    }
    return st;
}
#undef RANK

/* ---- the plan cache ----
 * What cuDNN needs for one pass of one convolution (its descriptors and the ranking of its
 * algorithms) depends only on the key below, as PyTorch's ConvolutionParams: the first call with
 * a key asks cuDNN (the heuristics, or cudnnFind* under cudnn.benchmark), later calls reuse the
 * answer. Entries are never freed while the process runs, so a caller may use an entry's
 * descriptors outside the lock; a full cache makes and frees a plan per call, as before. */

typedef struct plan_key { /* memset to 0 first, so that memcmp compares it (padding included) */
    conv_geom g;
    int dtype, device, pass;
    bool benchmark, deterministic, tf32;
} plan_key;

typedef struct plan_entry {
    struct plan_entry *next; /* the bucket's chain */
    plan_key key;
    conv_plan p;     /* descriptors only: p.h is the calling thread's handle, set per call */
    int n;           /* usable algorithms, best first */
    int algos[MAX_ALGOS];
} plan_entry;

#define PLAN_BUCKETS 256     /* hash chains */
#define PLAN_CACHE_MAX 4096  /* entries kept; past it, plans are made and freed per call */

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static plan_entry *cache[PLAN_BUCKETS];
static int cache_n;

static unsigned
key_hash(const plan_key *k)
{
    const unsigned char *b = (const unsigned char *)k;
    unsigned h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < sizeof(*k); i++) {
        h = (h ^ b[i]) * 16777619u;
    }
    return h % PLAN_BUCKETS;
}

/* the entry of key k, or NULL; with cache_lock held */
static plan_entry *
cache_find(const plan_key *k)
{
    for (plan_entry *e = cache[key_hash(k)]; e; e = e->next) {
        if (memcmp(&e->key, k, sizeof(*k)) == 0) {
            return e;
        }
    }
    return NULL;
}

static void
plan_free(plan_entry *e)
{
    if (e) {
        plan_destroy(&e->p);
        free(e);
    }
}

/* e's ranking from cuDNN: the algorithms that work for the problem (and are deterministic under
 * cudnn.deterministic, as PyTorch filters them), in cuDNN's order. */
static mt_status
plan_rank(plan_entry *e)
{
    int found = 0, algos[MAX_ALGOS];
    cudnnStatus_t status[MAX_ALGOS];
    cudnnDeterminism_t det[MAX_ALGOS];
    conv_pass k = (conv_pass)e->key.pass;
    mt_status st = rank_algos(&e->p, k, e->key.benchmark, &found, algos, status, det);
    e->n = 0;
    for (int j = 0; st == MT_OK && j < found; j++) {
        if (status[j] == CUDNN_STATUS_SUCCESS &&
            (!e->key.deterministic || det[j] == CUDNN_DETERMINISTIC)) {
            e->algos[e->n++] = algos[j];
        }
    }
    return st;
}

/* *e = the plan of pass k of convolution g (the cached entry, or a new one owned by the caller
 * when *owned), its descriptors ready and its algorithms ranked, p.h the thread's handle in *h. */
static mt_status
plan_get(const conv_geom *g, mt_dtype dt, mt_device dev, conv_pass k, cudnnHandle_t *h,
         plan_entry **e, bool *owned)
{
    plan_key key;
    memset(&key, 0, sizeof(key));
    key.g = *g;
    key.dtype = (int)dt;
    key.device = dev.index;
    key.pass = (int)k;
    key.benchmark = mt_cuda_lib_flag_on(MT_CUDNN_BENCHMARK);
    key.deterministic = mt_cuda_lib_flag_on(MT_CUDNN_DETERMINISTIC);
    key.tf32 = !mt_cuda_lib_flag_on(MT_CUDNN_NO_TF32);
    *owned = false;
    mt_status st = handle_for(dev, h);
    if (st) {
        return st;
    }
    pthread_mutex_lock(&cache_lock);
    *e = cache_find(&key);
    pthread_mutex_unlock(&cache_lock);
    if (*e) {
        return MT_OK;
    }
    plan_entry *n = calloc(1, sizeof(*n));
    if (n == NULL) {
        return mt_fail(MT_ENOMEM, "conv2d: out of host memory for a cuDNN plan");
    }
    n->key = key;
    if ((st = plan_init(&n->p, g, dt, key.tf32)) == MT_OK) {
        n->p.h = *h; /* for the ranking only: the entry keeps no handle */
        st = plan_rank(n);
        n->p.h = NULL;
    }
    if (st) {
        plan_free(n);
        return st;
    }
    /* another thread may have planned the same key meanwhile: then its entry serves */
    pthread_mutex_lock(&cache_lock);
    *e = cache_find(&key);
    if (*e == NULL && cache_n < PLAN_CACHE_MAX) {
        unsigned b = key_hash(&key);
        n->next = cache[b];
        cache[b] = n;
        cache_n++;
        *e = n;
        n = NULL;
    }
    pthread_mutex_unlock(&cache_lock);
    if (*e == NULL) { /* the cache is full: the caller frees this one */
        *e = n;
        *owned = true;
    } else {
        plan_free(n);
    }
    return MT_OK;
}

/* The first algorithm of e's ranking whose workspace can be had: a fast algorithm may ask for
 * more device memory than is left, and then, as PyTorch does, the next one is tried. *ws is the
 * workspace (NULL for none) of *bytes. */
static mt_status
choose(const plan_entry *e, const conv_plan *p, mt_device dev, int *algo, mt_tensor **ws,
       size_t *bytes)
{
    mt_status st = e->n == 0 && e->key.deterministic
                       ? mt_fail(MT_ERUNTIME, "cuDNN has no deterministic algorithm for this "
                                              "convolution (torch.backends.cudnn.deterministic)")
                       : cudnn_check(CUDNN_STATUS_NOT_SUPPORTED); /* when none works */
    for (int j = 0; j < e->n; j++) {
        mt_status sz = cudnn_check(workspace_size(p, (conv_pass)e->key.pass, e->algos[j], bytes));
        if (sz) {
            return sz;
        }
        st = workspace(*bytes, dev, ws);
        if (st != MT_ECUDA_OOM) {
            *algo = e->algos[j];
            return st;
        }
    }
    return st;
}

/* cuDNN convolves floats and doubles only. */
static mt_status
check_float(const char *op, mt_dtype dt)
{
    return dt != MT_FLOAT32 && dt != MT_FLOAT64 ? mt_fail_not_implemented(op, "", dt) : MT_OK;
}

/* Whether cuDNN has any work: it rejects zero-sized dims, and a convolution over no input
 * channels sums nothing. */
static bool
has_work(const conv_geom *g)
{
    return g->n > 0 && g->oc > 0 && g->oh > 0 && g->ow > 0 && g->c > 0 && g->h > 0 && g->w > 0;
}

/* out (contiguous) = pass `pass` of convolution g, plus beta * out, over the operands t0 = a->t[0]
 * and t1 = a->t[1] of the op: (input, weight) for PASS_FWD, (grad_output, weight) for
 * PASS_BWD_DATA, (grad_output, input) for PASS_BWD_FILTER. The operands are made dense in out's
 * dtype, the algorithm is the plan's choice. */
static mt_status
run_pass(const conv_geom *g, conv_pass pass, mt_tensor *t0, mt_tensor *t1, double beta,
         mt_tensor *out)
{
    mt_dtype dt = out->dtype;
    mt_device dev = mt_tensor_device(out);
    mt_tensor *d0 = NULL, *d1 = NULL, *ws = NULL;
    plan_entry *e = NULL;
    bool owned = false;
    cudnnHandle_t h = NULL;
    mt_status st;
    if ((st = mt_cuda_dense_as(t0, dt, &d0)) || (st = mt_cuda_dense_as(t1, dt, &d1)) ||
        (st = plan_get(g, dt, dev, pass, &h, &e, &owned))) {
        goto out_release;
    }
    conv_plan p = e->p;
    p.h = h;
    int algo = 0;
    size_t bytes = 0;
    if ((st = choose(e, &p, dev, &algo, &ws, &bytes))) {
        goto out_release;
    }
    double one = 1.0;
    float onef = 1.0f, betaf = (float)beta;
    const void *al = dt == MT_FLOAT32 ? (const void *)&onef : (const void *)&one;
    const void *be = dt == MT_FLOAT32 ? (const void *)&betaf : (const void *)&beta;
    if (pass == PASS_FWD) {
        CUDNN_TRACED(st, "cudnnConvolutionForward",
                     cudnnConvolutionForward(p.h, al, p.x, mt_tensor_data(d0), p.w,
                                             mt_tensor_data(d1), p.conv,
                                             (cudnnConvolutionFwdAlgo_t)algo, ws_data(ws), bytes,
                                             be, p.y, mt_tensor_data(out)));
    } else if (pass == PASS_BWD_DATA) {
        CUDNN_TRACED(st, "cudnnConvolutionBackwardData",
                     cudnnConvolutionBackwardData(p.h, al, p.w, mt_tensor_data(d1), p.y,
                                                  mt_tensor_data(d0), p.conv,
                                                  (cudnnConvolutionBwdDataAlgo_t)algo, ws_data(ws),
                                                  bytes, be, p.x, mt_tensor_data(out)));
    } else {
        CUDNN_TRACED(st, "cudnnConvolutionBackwardFilter",
                     cudnnConvolutionBackwardFilter(p.h, al, p.x, mt_tensor_data(d1), p.y,
                                                    mt_tensor_data(d0), p.conv,
                                                    (cudnnConvolutionBwdFilterAlgo_t)algo,
                                                    ws_data(ws), bytes, be, p.w,
                                                    mt_tensor_data(out)));
    }
out_release:
    if (owned) {
        plan_free(e);
    }
    mt_tensor_clear(&d0);
    mt_tensor_clear(&d1);
    mt_tensor_clear(&ws);
    return st;
}

// input (N, C, H, W) or (C, H, W), weight (OC, C/groups, KH, KW), bias (OC) or None;
// out (N, OC, OH, OW) or (OC, OH, OW), row-major (the front end's)
mt_status
mt_cuda_conv2d(mt_args *a)
{
    const conv_geom g = a->plan->conv;
    mt_tensor *out = a->out[0], *bias = a->t[2];
    mt_status st = check_float("conv2d", a->t[0]->dtype);
    if (st || mt_cuda_lib_flag_on(MT_CUDNN_DISABLED)) {
        return st ? st : mt_cuda_conv2d_gemm(a);
    }
    if (!bias && !has_work(&g)) { /* no taps: zeros */
        return mt_cuda_fill(out, mt_scalar_int(0));
    }
    if (bias) { /* bias (OC) broadcast over (N, OC, OH, OW): cuDNN then adds the convolution */
        int64_t bs[3] = {g.oc, 1, 1};
        mt_tensor *bv = NULL;
        int64_t bst[3] = {bias->strides[0], 0, 0};
        if ((st = mt_tensor_view(bias, 3, bs, bst, bias->offset, &bv))) {
            return st;
        }
        st = mt_cuda_copy_into(out, bv);
        mt_tensor_clear(&bv);
        if (st || !has_work(&g)) { /* no taps: the output is the bias */
            return st;
        }
    }
    return run_pass(&g, PASS_FWD, a->t[0], a->t[1], bias ? 1.0 : 0.0, out);
}

/* The two backward ops: which gradient, and the result's sizes. */
typedef enum { GRAD_INPUT, GRAD_WEIGHT } grad_kind;

// grad_output (N, OC, OH, OW) or unbatched; GRAD_INPUT: weight t[1], input_size l[0] ->
// out (input_size); GRAD_WEIGHT: input t[1], weight_size l[0] -> out (weight_size); out
// row-major (the front end's)
static mt_status
conv_backward(mt_args *a, grad_kind kind)
{
    const conv_geom g = a->plan->conv;
    return has_work(&g) ? run_pass(&g, kind == GRAD_INPUT ? PASS_BWD_DATA : PASS_BWD_FILTER,
                                   a->t[0], a->t[1], 0.0, a->out[0])
                        : mt_cuda_fill(a->out[0], mt_scalar_int(0));
}

mt_status
mt_cuda_convolution_backward_input(mt_args *a)
{
    return mt_cuda_lib_flag_on(MT_CUDNN_DISABLED) ? mt_cuda_conv_backward_input_gemm(a)
                                                  : conv_backward(a, GRAD_INPUT);
}

mt_status
mt_cuda_convolution_backward_weight(mt_args *a)
{
    return mt_cuda_lib_flag_on(MT_CUDNN_DISABLED) ? mt_cuda_conv_backward_weight_gemm(a)
                                                  : conv_backward(a, GRAD_WEIGHT);
}

long
mt_cuda_cudnn_version(void)
{
    return (long)cudnnGetVersion();
}


#else

long
mt_cuda_cudnn_version(void)
{
    return 0;
}

/* built without cuDNN: conv2d and its backward on im2col and cuBLAS, as PyTorch's slow_conv2d */
mt_status
mt_cuda_conv2d(mt_args *a)
{
    mt_dtype dt = a->t[0]->dtype;
    return dt != MT_FLOAT32 && dt != MT_FLOAT64 ? mt_fail_not_implemented("conv2d", "", dt)
                                                : mt_cuda_conv2d_gemm(a);
}

mt_status
mt_cuda_convolution_backward_input(mt_args *a)
{
    return mt_cuda_conv_backward_input_gemm(a);
}

mt_status
mt_cuda_convolution_backward_weight(mt_args *a)
{
    return mt_cuda_conv_backward_weight_gemm(a);
}


#endif
