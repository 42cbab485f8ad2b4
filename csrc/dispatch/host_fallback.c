/* The host round trip (dispatch/backend.h): a device backend's stand-in for any op that has a
 * CPU kernel but no kernel for the device (today, on CUDA: the LAPACK ops, histogram,
 * unique(dim=), and the matrix products and convolutions of a build without the cuBLAS or cuDNN
 * headers). The tensor arguments are copied to the host, the CPU kernel runs, and its results
 * are copied back to the device (in place: into self). Nothing here is device-specific: the
 * copies are _to_copy's and copy_'s, which run the backend's own copies. Correct and slow: each
 * is a TODO for a real kernel, and tests/cuda/test_cuda_coverage.py lists them by their kernel
 * name mt_<backend>_host_<op>. */
#include <stdio.h>
#include <stdlib.h>

#include "dispatch/backend.h"
#include "ops/front.h"
#include "ops/ops.h"

/* the backend's devices and name: a dispatcher with one device key has one backend */
static mt_device_type device_type;
static const char *backend_name;

static bool
on_device(const mt_tensor *t, mt_device_type type)
{
    return t != NULL && !t->is_wrapped_number && mt_tensor_device(t).type == type;
}

/* *out = t itself (a new reference) when it is not on the device, else a host copy. */
static mt_status
to_host(mt_tensor *t, mt_device_type type, mt_tensor **out)
{
    if (!on_device(t, type)) {
        *out = t ? mt_tensor_retain(t) : NULL;
        return MT_OK;
    }
    return mt_op__to_copy(t, t->dtype, MT_DEVICE_CPU, out);
}

mt_status
mt_host_args(const mt_args *a, mt_device_type type, mt_args *c, mt_device *dev)
{
    *c = *a;
    mt_status st = MT_OK;
    bool found = false;
    *dev = a->has_device ? a->device : (mt_device){type, 0};
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        c->t[k] = NULL;
    }
    c->tl = NULL;
    for (int k = 0; k < MT_MAX_OUTPUTS; k++) {
        c->out[k] = NULL;
    }
    c->outl = NULL;
    c->noutl = 0;
    for (int k = 0; k < MT_MAX_TENSOR_ARGS && st == MT_OK; k++) {
        if (!found && on_device(a->t[k], type)) {
            *dev = mt_tensor_device(a->t[k]);
            found = true;
        }
        st = to_host(a->t[k], type, &c->t[k]);
    }
    if (st == MT_OK && a->ntl > 0) {
        c->tl = calloc((size_t)a->ntl, sizeof(mt_tensor *));
        if (c->tl == NULL) {
            st = mt_fail(MT_ENOMEM, "out of memory for the host copies of a call's tensors");
        }
        for (int k = 0; k < a->ntl && st == MT_OK; k++) {
            if (!found && on_device(a->tl[k], type)) {
                *dev = mt_tensor_device(a->tl[k]);
                found = true;
            }
            st = to_host(a->tl[k], type, &c->tl[k]);
        }
    }
    if (c->has_device) {
        c->device = MT_DEVICE_CPU; /* a factory: made on the host, then moved */
    }
    return st;
}

void
mt_host_args_release(mt_args *c, int ntl)
{
    mt_args_clear_outl(c);
    for (int k = 0; k < MT_MAX_OUTPUTS; k++) {
        mt_tensor_clear(&c->out[k]);
    }
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        mt_tensor_clear(&c->t[k]);
    }
    if (c->tl) {
        for (int k = 0; k < ntl; k++) {
            mt_tensor_clear(&c->tl[k]);
        }
        free(c->tl);
        c->tl = NULL;
    }
}

static mt_status
round_trip(mt_op op, mt_args *a)
{
    const mt_kernel *cpu = mt_kernel_for(op, MT_KEY_CPU);
    if (cpu->fn == NULL || mt_op_nout[op] < 0) {
        return mt_fail(MT_ENOTIMPL, "%s is not implemented on %s", mt_op_names[op], backend_name);
    }
    mt_args c;
    mt_device dev;
    mt_status st = mt_host_args(a, device_type, &c, &dev);
    if (st) {
        goto out_release;
    }
    /* results the op's front end stated: a->out holds them on the device already; the CPU
     * kernel writes host ones, copied into them */
    const int stated = a->plan ? a->plan->nout : 0;
    if ((stated && (st = mt_front_alloc_outputs(a->plan, &c, MT_DEVICE_CPU))) ||
        (st = cpu->fn(&c))) {
        goto out_release;
    }
    if (mt_op_flags[op] & INPLACE) {
        /* the kernel wrote the host copy of self: write it back */
        if ((st = mt_op_copy_(a->t[0], c.t[0], NULL))) {
            goto out_release;
        }
        a->out[0] = mt_tensor_retain(a->t[0]);
        goto out_release;
    }
    for (int k = 0; k < stated && st == MT_OK; k++) {
        if (a->plan->out[k].ndim == MT_OUT_BY_KERNEL) {
            continue; /* moved below, as the results of a kernel with no front end */
        }
        st = mt_front_write_result(a->out[k], c.out[k]);
    }
    if (st) {
        goto out_release; /* the dispatcher releases a->out */
    }
    for (int k = 0; k < mt_op_nout[op] && k < MT_MAX_OUTPUTS; k++) {
        if (c.out[k] == NULL || (k < stated && a->plan->out[k].ndim != MT_OUT_BY_KERNEL)) {
            continue;
        }
        st = mt_op__to_copy(c.out[k], c.out[k]->dtype, dev, &a->out[k]);
        if (st == MT_OK && c.out[k]->requires_grad) {
            /* a factory's requires_grad=True: the copy is made with grad off */
            st = mt_tensor_set_requires_grad(a->out[k], true);
        }
        if (st) {
            for (int j = 0; j <= k; j++) {
                mt_tensor_clear(&a->out[j]);
            }
            goto out_release;
        }
    }
out_release:
    mt_host_args_release(&c, a->ntl);
    return st;
}

#define PER_OP_CALL round_trip
#define PER_OP_PREFIX host
#include "dispatch/per_op_kernels.h" /* host_<op>, host_kernels */

/* "mt_<backend>_host_<op>" */
static char host_names[MT_NUM_OPS][80];

void
mt_register_host_fallback(const mt_device_backend *be)
{
    device_type = be->type;
    backend_name = be->name;
    for (int op = 0; op < MT_NUM_OPS; op++) {
        /* an op with a composite (conv3d) runs that on the device instead, over device ops */
        if (mt_kernel_for(op, MT_KEY_CPU)->fn && !mt_kernel_for(op, MT_KEY_CUDA)->fn &&
            !mt_kernel_for(op, MT_KEY_COMPOSITE)->fn && mt_op_nout[op] > 0) {
            snprintf(host_names[op], sizeof(host_names[op]), "mt_%s_host_%s", be->name,
                     mt_op_names[op]);
            mt_register_kernel(op, MT_KEY_CUDA, host_kernels[op], host_names[op]);
        }
    }
}
