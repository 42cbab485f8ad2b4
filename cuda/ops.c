/* The CUDA key's kernels for factories, copies, elementwise ops and sum: argument handling and
 * dtype rules on the host, then elementwise.c's driver or a cudaMemcpy. Registered into _C's
 * dispatcher by mt_cuda_register (bottom), with the cuBLAS products of blas.c. */
#include <string.h>

#include "cuda/elementwise.h"
#include "cuda/profile.h"

// out (size) uninitialised, on a->device
static mt_status
cuda_empty(mt_args *a)
{
    mt_dtype dt = a->dtype >= 0 ? (mt_dtype)a->dtype : MT_DEFAULT_FLOAT;
    mt_status st = mt_tensor_empty(a->l[0].n, a->l[0].v, dt, a->device, &a->out[0]);
    if (st == MT_OK && (st = mt_tensor_set_requires_grad(a->out[0], a->b[0]))) {
        mt_tensor_clear(&a->out[0]);
    }
    return st;
}

static bool
is_dense_as(const mt_tensor *t, const mt_tensor *like)
{
    return mt_tensor_is_contiguous(t) && t->dtype == like->dtype && t->ndim == like->ndim &&
           memcmp(t->sizes, like->sizes, sizeof(int64_t) * (size_t)t->ndim) == 0;
}

/* One synchronous cudaMemcpy as a Runtime::Memcpy event, its device time as PyTorch names it. */
static mt_status
traced_memcpy(void *dst, const void *src, size_t nbytes, enum cudaMemcpyKind kind)
{
    mt_cuda_span span = mt_cuda_span_begin(
        "Memcpy", MT_LAYER_RUNTIME, "CUDA", MT_GPU_MEMCPY,
        kind == cudaMemcpyHostToDevice ? "Memcpy HtoD (Pageable -> Device)"
                                       : "Memcpy DtoH (Device -> Pageable)");
    cudaError_t err = cudaMemcpy(dst, src, nbytes, kind);
    mt_cuda_span_end(&span);
    return mt_cuda_check(err);
}

/* dst (CUDA) = src (CPU): the host side makes a dense copy in dst's dtype and shape when src is
 * not one already, one cudaMemcpy moves it, and a device copy scatters it when dst is strided. */
static mt_status
host_to_device(mt_tensor *dst, mt_tensor *src)
{
    mt_tensor *dense = NULL, *staged = NULL;
    mt_status st = MT_OK;
    if (is_dense_as(src, dst)) {
        dense = mt_tensor_retain(src);
    } else if ((st = mt_op_to_copy(src, dst->dtype, src->storage->device, &dense))) {
        return st;
    }
    mt_tensor *target = dst;
    if (!mt_tensor_is_contiguous(dst) &&
        (st = mt_tensor_empty(dst->ndim, dst->sizes, dst->dtype, mt_tensor_device(dst), &staged))) {
        goto out_release;
    }
    target = staged ? staged : dst;
    size_t nbytes = (size_t)mt_tensor_numel(dst) * mt_dtype_size(dst->dtype);
    if (nbytes > 0 && ((st = mt_cuda_use_device(mt_tensor_device(dst))) ||
                       (st = traced_memcpy(mt_tensor_data(target), mt_tensor_data(dense), nbytes,
                                           cudaMemcpyHostToDevice)))) {
        goto out_release;
    }
    if (staged) {
        st = mt_cuda_copy_into(dst, staged);
    }
out_release:
    mt_tensor_clear(&staged);
    mt_tensor_clear(&dense);
    return st;
}

/* dst (CPU) = src (CUDA): the mirror image of host_to_device. */
static mt_status
device_to_host(mt_tensor *dst, mt_tensor *src)
{
    mt_tensor *dense = NULL, *staged = NULL;
    mt_status st = MT_OK;
    if (is_dense_as(src, dst)) {
        dense = mt_tensor_retain(src);
    } else if ((st = mt_tensor_empty(dst->ndim, dst->sizes, dst->dtype, mt_tensor_device(src),
                                     &dense)) ||
               (st = mt_cuda_copy_into(dense, src))) {
        goto out_release;
    }
    if (!mt_tensor_is_contiguous(dst) &&
        (st = mt_tensor_empty(dst->ndim, dst->sizes, dst->dtype, MT_DEVICE_CPU, &staged))) {
        goto out_release;
    }
    mt_tensor *target = staged ? staged : dst;
    size_t nbytes = (size_t)mt_tensor_numel(dst) * mt_dtype_size(dst->dtype);
    if (nbytes > 0 && ((st = mt_cuda_use_device(mt_tensor_device(src))) ||
                       (st = traced_memcpy(mt_tensor_data(target), mt_tensor_data(dense), nbytes,
                                           cudaMemcpyDeviceToHost)))) {
        goto out_release;
    }
    if (staged) {
        st = mt_op_copy_(dst, staged);
    }
out_release:
    mt_tensor_clear(&staged);
    mt_tensor_clear(&dense);
    return st;
}

// self (any shape, any device) = src broadcast to it; at least one of them is on a GPU
static mt_status
cuda_copy_(mt_args *a)
{
    mt_tensor *dst = a->t[0], *src = NULL;
    mt_status st = mt_check_writable(dst);
    if (st || (st = mt_op_expand(a->t[1], dst->ndim, dst->sizes, &src))) {
        return st;
    }
    bool dst_gpu = mt_tensor_device(dst).type == MT_CUDA;
    bool src_gpu = mt_tensor_device(src).type == MT_CUDA;
    if (dst_gpu && src_gpu) {
        st = mt_cuda_copy_into(dst, src);
    } else if (dst_gpu) {
        st = host_to_device(dst, src);
    } else {
        st = device_to_host(dst, src);
    }
    mt_tensor_release(src);
    if (st) {
        return st;
    }
    mt_tensor_bump_version(dst);
    a->out[0] = mt_tensor_retain(dst);
    return MT_OK;
}

static mt_status
cuda_fill_(mt_args *a)
{
    mt_status st = mt_check_scalar_fits(a->s[0], a->t[0]->dtype);
    if (st || (st = mt_check_writable(a->t[0])) || (st = mt_cuda_fill(a->t[0], a->s[0]))) {
        return st;
    }
    mt_tensor_bump_version(a->t[0]);
    a->out[0] = mt_tensor_retain(a->t[0]);
    return MT_OK;
}

/* ---- elementwise ops: the dtype each computes in, then the driver ---- */

static const char *const ew_names[MT_CUDA_NUM_EW_OPS] = {
    "fill", "add", "sub", "mul", "div", "neg", "clamp_min", "clamp_max", "exp", "log", "sqrt",
    "rsqrt", "sin", "cos", "tanh", "sigmoid", "abs", "reciprocal",
};

// self, other broadcast together; out = self (op) alpha * other (alpha only for add, sub)
static mt_status
binary(mt_args *a, mt_cuda_ew_op op, bool inplace)
{
    mt_dtype dt = mt_result_type(a->t, 2);
    if (op == MT_CUDA_DIV && a->str[0] != NULL) {
        return mt_fail(MT_ENOTIMPL, "div with rounding_mode is not implemented on CUDA yet");
    }
    if (op == MT_CUDA_DIV && !mt_dtype_is_float(dt)) {
        dt = MT_DEFAULT_FLOAT; /* true division of integers */
    }
    mt_scalar alpha = op == MT_CUDA_ADD || op == MT_CUDA_SUB ? a->s[0] : mt_scalar_int(1);
    return mt_cuda_elementwise(a->t, 2, dt, op, alpha, ew_names[op], inplace, &a->out[0]);
}

// out = op(self): float math gives the default float for integer inputs
static mt_status
unary(mt_args *a, mt_cuda_ew_op op, bool inplace)
{
    mt_dtype dt = a->t[0]->dtype;
    bool float_math = op != MT_CUDA_NEG && op != MT_CUDA_ABS;
    if (float_math && !mt_dtype_is_float(dt)) {
        dt = MT_DEFAULT_FLOAT;
    }
    return mt_cuda_elementwise(a->t, 1, dt, op, mt_scalar_int(0), ew_names[op], inplace,
                               &a->out[0]);
}

// out = clamp(self, bound) with a Scalar bound: a float bound on an integer tensor gives float
static mt_status
clamp_scalar(mt_args *a, mt_cuda_ew_op op, bool inplace)
{
    mt_dtype dt = a->t[0]->dtype;
    if (a->s[0].type == MT_FLOAT64 && !mt_dtype_is_float(dt)) {
        dt = MT_DEFAULT_FLOAT;
    }
    return mt_cuda_elementwise(a->t, 1, dt, op, a->s[0], ew_names[op], inplace, &a->out[0]);
}

#define KERNEL(name, impl, op, inplace) \
    static mt_status                    \
    cuda_##name(mt_args *a)             \
    {                                   \
        return impl(a, op, inplace);    \
    }
#define KERNELS(name, impl, op) KERNEL(name, impl, op, false) KERNEL(name##_, impl, op, true)
KERNELS(add, binary, MT_CUDA_ADD)
KERNELS(sub, binary, MT_CUDA_SUB)
KERNELS(mul, binary, MT_CUDA_MUL)
KERNELS(div, binary, MT_CUDA_DIV)
KERNELS(neg, unary, MT_CUDA_NEG)
KERNELS(exp, unary, MT_CUDA_EXP)
KERNELS(log, unary, MT_CUDA_LOG)
KERNELS(sqrt, unary, MT_CUDA_SQRT)
KERNELS(rsqrt, unary, MT_CUDA_RSQRT)
KERNELS(sin, unary, MT_CUDA_SIN)
KERNELS(cos, unary, MT_CUDA_COS)
KERNELS(tanh, unary, MT_CUDA_TANH)
KERNELS(sigmoid, unary, MT_CUDA_SIGMOID)
KERNELS(abs, unary, MT_CUDA_ABS)
KERNELS(reciprocal, unary, MT_CUDA_RECIPROCAL)
KERNELS(clamp_min, clamp_scalar, MT_CUDA_CLAMP_MIN)
KERNELS(clamp_max, clamp_scalar, MT_CUDA_CLAMP_MAX)

/* ---- sum over all dims ---- */

// x (any shape) -> out () (or all-ones dims with keepdim): two passes of partial sums
static mt_status
cuda_sum(mt_args *a)
{
    mt_tensor *self = a->t[0], *x = NULL, *partial = NULL;
    if (!a->l[0].none && a->l[0].n > 0) {
        return mt_fail(MT_ENOTIMPL, "sum over chosen dims is not implemented on CUDA yet");
    }
    mt_dtype dt = a->dtype >= 0                      ? (mt_dtype)a->dtype
                  : mt_dtype_is_integral(self->dtype, true) ? MT_INT64
                                                            : self->dtype;
    int64_t ones[MT_MAX_DIMS];
    for (int d = 0; d < self->ndim; d++) {
        ones[d] = 1;
    }
    mt_device dev = mt_tensor_device(self);
    mt_status st = mt_tensor_empty(a->b[0] ? self->ndim : 0, ones, dt, dev, &a->out[0]);
    if (st) {
        return st;
    }
    int64_t n = mt_tensor_numel(self);
    if (n == 0) {
        st = mt_cuda_fill(a->out[0], mt_scalar_int(0));
        goto out_release;
    }
    if (mt_tensor_is_contiguous(self) && self->dtype == dt) {
        x = mt_tensor_retain(self);
    } else if ((st = mt_tensor_empty(self->ndim, self->sizes, dt, dev, &x)) ||
               (st = mt_cuda_copy_into(x, self))) {
        goto out_release;
    }
    int64_t blocks = (n + MT_CUDA_SUM_THREADS - 1) / MT_CUDA_SUM_THREADS;
    blocks = blocks > MT_CUDA_SUM_BLOCKS ? MT_CUDA_SUM_BLOCKS : blocks;
    void *out_data = mt_tensor_data(a->out[0]);
    void *x_data = mt_tensor_data(x);
    if (blocks > 1) {
        if ((st = mt_tensor_empty(1, &blocks, dt, dev, &partial))) {
            goto out_release;
        }
        out_data = mt_tensor_data(partial);
    }
    void *args1[] = {&x_data, &n, &out_data};
    if ((st = mt_cuda_use_device(dev)) ||
        (st = mt_cuda_launch(mt_cuda_sum_kernel(dt), (unsigned)blocks, MT_CUDA_SUM_THREADS,
                             args1))) {
        goto out_release;
    }
    if (partial) {
        void *p_data = mt_tensor_data(partial), *o_data = mt_tensor_data(a->out[0]);
        void *args2[] = {&p_data, &blocks, &o_data};
        st = mt_cuda_launch(mt_cuda_sum_kernel(dt), 1, MT_CUDA_SUM_THREADS, args2);
    }
out_release:
    if (st) {
        mt_tensor_clear(&a->out[0]);
    }
    mt_tensor_clear(&partial);
    mt_tensor_clear(&x);
    return st;
}

/* ---- registration ---- */

#define REG(name) {MT_OP_##name, cuda_##name, "mt_cuda_" #name}
#define REG2(name) REG(name), REG(name##_)

void
mt_cuda_register(void)
{
    static const struct {
        mt_op op;
        mt_kernel_fn fn;
        const char *name;
    } kernels[] = {
        REG(empty),     REG(copy_),     REG(fill_),      REG2(add),        REG2(sub),
        REG2(mul),      REG2(div),      REG2(neg),       REG2(exp),        REG2(log),
        REG2(sqrt),     REG2(rsqrt),    REG2(sin),       REG2(cos),        REG2(tanh),
        REG2(sigmoid),  REG2(abs),      REG2(reciprocal), REG2(clamp_min), REG2(clamp_max),
        REG(sum),
    };
    for (size_t k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++) {
        mt_register_kernel(kernels[k].op, MT_KEY_CUDA, kernels[k].fn, kernels[k].name);
    }
    mt_cuda_register_blas();
    mt_register_allocator(MT_CUDA, mt_cuda_allocator());
}
