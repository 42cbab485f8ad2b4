/* The optimizer steps' front ends (front.h): the checks of _fused_sgd_, _fused_adam(w)_ and
 * _fused_rmsprop_, once for every device. Everything is checked before a kernel writes, so a bad
 * call changes nothing. The dispatcher has already put every tensor on one device. */
#include "ops/front.h"
#include "ops/optim.h"

/* One Tensor[] argument of an optimizer step. */
typedef struct list_spec {
    const char *name;
    bool used;     /* these options read it: one tensor per parameter (else it may be empty) */
    bool written;  /* the step writes its tensors */
    bool is_steps; /* step counts: one-element float tensors, not shaped like the parameter */
} list_spec;

/* t (list[i]) has its parameter p's dtype and shape, and can be written if it is. */
static mt_status
check_like_param(const char *fn, const char *list, int i, const mt_tensor *t, const mt_tensor *p,
                 bool written)
{
    char a[128], b[128];
    if (t->dtype != p->dtype) {
        return mt_fail(MT_EDTYPE, "%s: %s[%d] has dtype %s but params[%d] has dtype %s", fn, list,
                       i, mt_dtype_name(t->dtype), i, mt_dtype_name(p->dtype));
    }
    bool same = t->ndim == p->ndim;
    for (int d = 0; same && d < t->ndim; d++) {
        same = t->sizes[d] == p->sizes[d];
    }
    if (!same) {
        return mt_fail(MT_ESHAPE, "%s: %s[%d] has shape %s but params[%d] has shape %s", fn, list,
                       i, mt_format_sizes(a, sizeof(a), t->ndim, t->sizes), i,
                       mt_format_sizes(b, sizeof(b), p->ndim, p->sizes));
    }
    return written ? mt_check_writable(t) : MT_OK;
}

static mt_status
check_step(const char *fn, const char *list, int i, const mt_tensor *s)
{
    if (mt_tensor_numel(s) != 1 || !mt_dtype_is_float(s->dtype)) {
        return mt_fail(MT_ERUNTIME, "%s: %s[%d] must be a one-element float tensor", fn, list, i);
    }
    return mt_check_writable(s);
}

/* specs[k] describes list k (list 0 is params, list 1 grads). */
static mt_status
check_lists(const char *fn, const mt_args *a, const list_spec *specs, int nlists)
{
    const mt_tensorlist params = mt_args_tensorlist(a, 0);
    const int n = params.n;
    for (int k = 1; k < nlists; k++) {
        const int len = mt_args_tensorlist(a, k).n;
        if (!specs[k].used) {
            continue;
        }
        if (len == 0 && n > 0) {
            return mt_fail(MT_ERUNTIME, "%s: %s are needed with these options", fn, specs[k].name);
        }
        if (len != n) {
            return mt_fail(MT_ERUNTIME, "%s: expected %d %s, one per parameter, but got %d", fn, n,
                           specs[k].name, len);
        }
    }
    mt_status st = MT_OK;
    for (int i = 0; i < n; i++) {
        const mt_tensor *p = params.t[i];
        if (!mt_dtype_is_float(p->dtype)) {
            return mt_fail(MT_EDTYPE, "%s: params[%d] has dtype %s, expected float32 or float64",
                           fn, i, mt_dtype_name(p->dtype));
        }
        if ((st = mt_check_writable(p))) {
            return st;
        }
        for (int k = 1; k < nlists; k++) {
            if (!specs[k].used) {
                continue;
            }
            const mt_tensor *t = mt_args_tensorlist(a, k).t[i];
            st = specs[k].is_steps ? check_step(fn, specs[k].name, i, t)
                                   : check_like_param(fn, specs[k].name, i, t, p, specs[k].written);
            if (st) {
                return st;
            }
        }
    }
    return MT_OK;
}

mt_status
mt_front_fused_sgd(const mt_args *a, mt_plan *p)
{
    (void)p;
    const mt_sgd_hyper h = mt_sgd_hyper_of(a);
    const list_spec specs[] = {
        {"params", true, true, false},
        {"grads", true, false, false},
        {"momentum_buffer_list", h.momentum != 0, true, false},
    };
    return check_lists("_fused_sgd_", a, specs, 3);
}

/* _fused_adam_ and _fused_adamw_ */
mt_status
mt_front_fused_adam(const mt_args *a, mt_plan *p)
{
    const mt_adam_hyper h = mt_adam_hyper_of(a, false);
    const list_spec specs[] = {
        {"params", true, true, false},
        {"grads", true, false, false},
        {"exp_avgs", true, true, false},
        {"exp_avg_sqs", true, true, false},
        {"max_exp_avg_sqs", h.amsgrad, true, false},
        {"state_steps", true, true, true},
    };
    return check_lists(mt_op_names[p->op], a, specs, 6);
}

mt_status
mt_front_fused_rmsprop(const mt_args *a, mt_plan *p)
{
    (void)p;
    const mt_rmsprop_hyper h = mt_rmsprop_hyper_of(a);
    const list_spec specs[] = {
        {"params", true, true, false},
        {"grads", true, false, false},
        {"square_avgs", true, true, false},
        {"grad_avgs", h.centered, true, false},
        {"momentum_buffer_list", h.momentum > 0, true, false},
        {"state_steps", true, true, true},
    };
    return check_lists("_fused_rmsprop_", a, specs, 6);
}
