/* The CUDA elementwise driver, the backend's ew loop (dispatch/backend.h): from a plan the
 * front end prepared (ops/elementwise.c, run by _C's kernel for the CUDA key: checks, promotion,
 * broadcasting, in-place rules, the output) to one mt_cuda_ew launch. Dimension coalescing happens here, on the host, so a kernel only turns a linear
 * index into offsets (or, when everything is contiguous, uses it as is). */
#include <string.h>

#include "cuda/elementwise.h"
#include "cuda/profile.h"

_Static_assert(MT_CUDA_MAX_DIMS == MT_MAX_DIMS, "cuda/kernels.h copies MT_MAX_DIMS");
/* A launch passes its block by value: a real GPU takes at most 4 KB of kernel parameters (64
 * dims: 2728 and 2120 bytes) */
_Static_assert(sizeof(mt_cuda_ew) <= 4096 && sizeof(mt_cuda_red) <= 4096,
               "a kernel's parameters must fit in 4 KB");

static mt_cuda_scalar
to_cuda_scalar(mt_scalar v)
{
    return (mt_cuda_scalar){mt_scalar_to_double(v), mt_scalar_to_int(v), v.imag};
}

static bool
is_number(const mt_tensor *t)
{
    return t->is_wrapped_number && mt_tensor_device(t).type == MT_CPU;
}

/* Fills p's geometry: operand k (0 = out) broadcast to shape, size-1 dims dropped, neighbours
 * that are contiguous in every operand merged. */
static void
geometry(mt_cuda_ew *p, int ndim, const int64_t *shape, mt_tensor *const *ops, int nops)
{
    int64_t st[MT_CUDA_MAX_OPERANDS][MT_MAX_DIMS] = {{0}};
    for (int k = 0; k < nops; k++) {
        const mt_tensor *t = ops[k];
        if (t == NULL) {
            continue; /* a Python number: stride 0 everywhere */
        }
        int lead = ndim - t->ndim;
        for (int d = 0; d < t->ndim; d++) {
            st[k][lead + d] = t->sizes[d] == 1 ? 0 : t->strides[d];
        }
    }
    p->n = mt_numel(ndim, shape);
    p->ndim = 0;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 1) {
            continue;
        }
        int nd = p->ndim;
        bool merge = nd > 0;
        for (int k = 0; k < nops && merge; k++) {
            merge = p->strides[k][nd - 1] == st[k][d] * shape[d];
        }
        if (merge) {
            p->sizes[nd - 1] *= shape[d];
            for (int k = 0; k < nops; k++) {
                p->strides[k][nd - 1] = st[k][d];
            }
        } else {
            p->sizes[nd] = shape[d];
            for (int k = 0; k < nops; k++) {
                p->strides[k][nd] = st[k][d];
            }
            p->ndim++;
        }
    }
    p->contig = p->ndim <= 1;
    for (int k = 0; k < nops && p->ndim == 1; k++) {
        p->contig &= p->data[k] == NULL || p->strides[k][0] == 1;
    }
    p->vec = p->contig; /* 32 bytes: 4 elements of the widest dtype */
    for (int k = 0; k < nops; k++) {
        p->vec &= p->data[k] == NULL || (uintptr_t)p->data[k] % 32 == 0;
    }
    /* Strided: 32-bit offsets and fast dividers when every index fits (OffsetCalculator). */
    p->idx32 = !p->contig && p->n > 0 && p->n < (int64_t)MT_CUDA_DIVIDER_MAX; /* no size 0 */
    for (int k = 0; k < nops && p->idx32; k++) {
        int64_t last = 0; /* the largest offset */
        for (int d = 0; d < p->ndim; d++) {
            last += (p->sizes[d] - 1) * p->strides[k][d];
            p->idx32 &= p->strides[k][d] >= 0 && p->strides[k][d] < (int64_t)MT_CUDA_DIVIDER_MAX;
        }
        p->idx32 = last < (int64_t)MT_CUDA_DIVIDER_MAX;
    }
    for (int d = 0; d < p->ndim && p->idx32; d++) {
        p->div[d] = mt_cuda_divider_of((uint32_t)p->sizes[d]);
    }
}

static mt_status
launch(const void *kernel, mt_cuda_ew *p)
{
    int64_t threads = MT_CUDA_THREADS;
    int64_t per_thread = p->vec ? 4 : 1; /* kernels.cu's ew_vec */
    int64_t blocks = (p->n / per_thread + threads - 1) / threads;
    if (blocks == 0) {
        blocks = 1; /* fewer elements than one vector: the tail loop does them */
    }
    /* the kernels' loops stride over the grid: beyond a few waves of blocks over the SMs (a
     * block per SM holds 2048 / 256 = 8 at once), more blocks buy nothing */
    const int64_t most = (int64_t)mt_cuda_sm_count() * 8 * 4;
    blocks = blocks < most ? blocks : most;
    void *args[] = {p};
    return mt_cuda_launch(kernel, (unsigned)blocks, (unsigned)threads, args);
}

mt_status
mt_cuda_copy_into(mt_tensor *dst, mt_tensor *src)
{
    mt_cuda_ew p;
    memset(&p, 0, sizeof(p));
    mt_tensor *ops[2] = {dst, src};
    p.data[0] = mt_tensor_data(dst);
    p.data[1] = mt_tensor_data(src);
    p.nin = 1;
    geometry(&p, dst->ndim, dst->sizes, ops, 2);
    if (p.n == 0) {
        return MT_OK;
    }
    mt_status st = mt_cuda_use_device(mt_tensor_device(dst));
    if (st) {
        return st;
    }
    /* a bool goes through the cast kernel, which writes its bytes as 0 or 1 (core/math.h) */
    if (p.contig && dst->dtype == src->dtype && dst->dtype != MT_BOOL) {
        mt_cuda_span span = mt_cuda_span_begin("MemcpyAsync", MT_LAYER_RUNTIME, "CUDA",
                                               MT_GPU_MEMCPY, "Memcpy DtoD (Device -> Device)");
        cudaError_t err = cudaMemcpyAsync(p.data[0], p.data[1],
                                          (size_t)p.n * mt_dtype_size(dst->dtype),
                                          cudaMemcpyDeviceToDevice, 0);
        mt_cuda_span_end(&span);
        return mt_cuda_check(err);
    }
    return launch(mt_cuda_cast_kernel(dst->dtype, src->dtype), &p);
}

mt_status
mt_cuda_fill(mt_tensor *dst, mt_scalar value)
{
    mt_cuda_ew p;
    memset(&p, 0, sizeof(p));
    p.data[0] = mt_tensor_data(dst);
    p.k = to_cuda_scalar(value);
    geometry(&p, dst->ndim, dst->sizes, &dst, 1);
    mt_status st = mt_cuda_use_device(mt_tensor_device(dst));
    if (st || p.n == 0) {
        return st;
    }
    return launch(mt_cuda_fill_kernel(dst->dtype), &p);
}

mt_status
mt_cuda_cast(mt_tensor *src, mt_dtype dt, mt_tensor **out)
{
    mt_status st = mt_tensor_empty(src->ndim, src->sizes, dt, mt_tensor_device(src), out);
    if (st == MT_OK && (st = mt_cuda_copy_into(*out, src))) {
        mt_tensor_clear(out);
    }
    return st;
}

mt_status
mt_cuda_dense_as(mt_tensor *t, mt_dtype dt, mt_tensor **out)
{
    if (t->dtype == dt && mt_tensor_is_contiguous(t)) {
        *out = mt_tensor_retain(t);
        return MT_OK;
    }
    return mt_cuda_cast(t, dt, out);
}

static bool
has_loop(mt_ew_id row, mt_dtype dt)
{
    return mt_cuda_ew_kernel(row, dt) != NULL;
}

// p prepared by the front end (inputs in the row's operand dtypes or Python numbers, output
// allocated); one launch of row's kernel on dtype dt
static mt_status
run(mt_ew_plan *plan, mt_ew_id row, mt_dtype dt, const mt_scalar *k, bool *zero_div)
{
    (void)zero_div; /* a kernel cannot raise: integer division by zero gives core/math.h's value */
    mt_cuda_ew p;
    memset(&p, 0, sizeof(p));
    mt_tensor *ops[MT_CUDA_MAX_OPERANDS] = {plan->ops[0]}; /* NULL for a Python number */
    mt_status st = MT_OK;
    for (int j = 1; j <= plan->nin; j++) {
        mt_tensor *t = plan->ops[j];
        if (is_number(t)) {
            mt_scalar v;
            if ((st = mt_tensor_item(t, &v))) {
                return st;
            }
            p.scalar[j] = to_cuda_scalar(v);
        } else {
            ops[j] = t;
            p.data[j] = mt_tensor_data(t);
        }
    }
    p.data[0] = mt_tensor_data(plan->ops[0]);
    p.nin = plan->nin;
    if (k) { /* else 0, unread */
        p.k = to_cuda_scalar(k[0]);
        p.k2 = to_cuda_scalar(k[1]);
        p.k3 = to_cuda_scalar(k[2]);
    }
    geometry(&p, plan->ndim, plan->shape, ops, plan->nin + 1);
    p.vec &= mt_dtype_size(dt) <= 8; /* 4 complex128 would be a 64-byte pack: 32 are checked */
    if (p.n == 0) {
        return MT_OK;
    }
    st = mt_cuda_use_device(mt_tensor_device(plan->ops[0]));
    return st ? st : launch(mt_cuda_ew_kernel(row, dt), &p);
}

const mt_ew_device mt_cuda_ew_device = {"cuda",
                                        {mt_cuda_cast, mt_cuda_copy_into, true},
                                        has_loop,
                                        run};
