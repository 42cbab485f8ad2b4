/* The nodes recorded by hand rather than by the Autograd key's kernel: autograd.Function's (its
 * backward is Python's, with ctx.mark_dirty's in-place rules) and those of the formulas that
 * record their own node. */
#include "autograd/autograd.h"

mt_status
mt_autograd_node(const mt_formula *f, int nin, mt_tensor *const *inputs, mt_node **out)
{
    mt_node *n = mt_node_new(f, f->name, nin);
    if (n == NULL) {
        return mt_fail(MT_ENOMEM, "out of memory recording the autograd graph");
    }
    mt_status st = MT_OK;
    for (int k = 0; st == MT_OK && k < nin; k++) {
        if (inputs[k]) {
            mt_meta_of(inputs[k], &n->in_meta[k]);
            st = mt_autograd_edge_of(inputs[k], &n->edges[k]);
        }
    }
    if (st) {
        mt_node_release(n);
        return st;
    }
    *out = n;
    return MT_OK;
}

void
mt_autograd_set_outputs(mt_node *n, int nout, mt_tensor *const *outputs)
{
    n->nout = nout;
    for (int k = 0; k < nout; k++) {
        mt_meta_of(outputs[k], &n->out_meta[k]);
        n->out_diff[k] = mt_autograd_dtype(outputs[k]->dtype);
        if (n->out_diff[k]) {
            mt_autograd_set_grad_fn(outputs[k], n, k);
        }
    }
}

/* PyTorch's checks of an input an autograd.Function changed in place (ctx.mark_dirty). A view
 * must be the Function's first input: CopySlices sends the base's gradient along the node's
 * first edge. */
static mt_status
check_dirty(mt_tensor *t, int nin, mt_tensor *const *inputs)
{
    if (t->requires_grad && t->grad_fn == NULL && t->view_base == NULL) {
        return mt_fail(MT_ERUNTIME, "a leaf Variable that requires grad has been used in an "
                                    "in-place operation.");
    }
    mt_status st = mt_autograd_check_inplace(t);
    if (st == MT_OK && t->view_base && mt_autograd_dtype(t->dtype) && (nin < 1 || inputs[0] != t)) {
        st = mt_fail(MT_ENOTIMPL, "mark_dirty: a view changed in place must be the Function's "
                                  "first input");
    }
    return st;
}

mt_status
mt_autograd_record_custom(const mt_formula *f, const char *name, void *user,
                          void (*user_free)(void *), int nin, mt_tensor *const *inputs, int nout,
                          mt_tensor *const *outputs, const bool *dirty)
{
    if (nout > MT_NODE_MAX_OUT) {
        return mt_fail(MT_ERUNTIME, "an autograd.Function may return at most %d tensors",
                       MT_NODE_MAX_OUT);
    }
    /* A leaf that requires grad as an output would become a non-leaf whose node's edge leads
     * to its own AccumulateGrad: a cycle never freed. (autograd.Function passes a view of an
     * input it returns, as PyTorch; an in-place op's output is a non-leaf self.) */
    for (int k = 0; k < nout; k++) {
        if (dirty && dirty[k]) {
            mt_status st = check_dirty(outputs[k], nin, inputs);
            if (st) {
                return st;
            }
        } else if (outputs[k]->requires_grad && outputs[k]->grad_fn == NULL) {
            return mt_fail(MT_ERUNTIME, "a leaf Variable that requires grad is being used in an "
                                        "in-place operation.");
        }
    }
    mt_node *n = NULL;
    mt_status st = mt_autograd_node(f, nin, inputs, &n);
    if (st) {
        return st;
    }
    n->name = name;
    n->user = user;
    n->user_free = user_free;
    mt_autograd_set_outputs(n, nout, outputs);
    /* An output that is a view (an input returned as it is comes as one) keeps the Function's
     * node: PyTorch refuses to rebase it, as that would bypass the custom backward. A view the
     * Function changed in place gives its base the new history instead. */
    for (int k = 0; k < nout; k++) {
        mt_tensor *o = outputs[k];
        if (dirty && dirty[k]) {
            mt_tensor_bump_version(o);
            mt_status st = o->view_base && n->out_diff[k] ? mt_autograd_rebase_history(o, n)
                                                          : MT_OK;
            if (st) {
                /* out of memory: the caller keeps user, so no output may keep n */
                n->user = NULL;
                n->user_free = NULL;
                for (int j = 0; j < nout; j++) {
                    if (outputs[j]->grad_fn == n) {
                        mt_autograd_forget(outputs[j]);
                    }
                }
                mt_node_release(n);
                return st;
            }
        } else if (o->view_base && n->out_diff[k]) {
            o->view_creation = MT_VIEW_CUSTOM_FUNCTION;
            o->view_version = mt_tensor_version(o);
            o->view_output_nr = k;
        }
    }
    mt_node_release(n);
    return MT_OK;
}
