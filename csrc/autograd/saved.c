/* A node's saved tensors: the saved-tensor hooks (pack when saved, unpack for the backward, drop
 * with the node) and the reads of what a node saved, each checked against the version it was
 * saved at and against a graph already freed, with PyTorch's messages. What a node saves, and
 * when, is recording's (autograd.c). */
#include <stdio.h>
#include <string.h>

#include "autograd/autograd.h"

static const mt_saved_hooks *saved_hooks;
_Thread_local bool mt_saved_hooks_active;

void
mt_saved_hooks_install(const mt_saved_hooks *hooks)
{
    saved_hooks = hooks;
}

void
mt_saved_hooks_set_active(bool active)
{
    mt_saved_hooks_active = active;
}

void
mt_saved_drop_packed(mt_node *n)
{
    for (int k = 0; n->has_packed && k < MT_MAX_TENSOR_ARGS; k++) {
        if (n->packed[k]) {
            saved_hooks->drop(n->packed[k]);
            n->packed[k] = NULL;
        }
    }
    for (int k = 0; n->has_packed && k < MT_NODE_MAX_OUT; k++) {
        if (n->packed_out[k]) {
            saved_hooks->drop(n->packed_out[k]);
            n->packed_out[k] = NULL;
        }
    }
    n->has_packed = false;
}

/* *slot, a tensor n just saved, through the pack hook when hooks are active on this thread: n
 * keeps the handle in *handle, and the tensor goes. A Python number wrapped as a tensor (pow's
 * exponent 2) is kept as it is: PyTorch saves a Scalar argument as a number, not a tensor. */
mt_status
mt_saved_pack(mt_node *n, mt_tensor **slot, void **handle)
{
    if (!mt_saved_hooks_active || saved_hooks == NULL || *slot == NULL ||
        (*slot)->is_wrapped_number) {
        return MT_OK;
    }
    bool was = mt_grad_enabled();
    mt_set_grad_enabled(false);
    mt_status st = saved_hooks->pack(*slot, handle);
    mt_set_grad_enabled(was);
    if (st == MT_OK) {
        mt_tensor_clear(slot);
        n->has_packed = true;
    }
    return st;
}

mt_status
mt_saved_unpack(mt_node *n)
{
    mt_status st = MT_OK;
    for (int k = 0; n->has_packed && st == MT_OK && k < MT_MAX_TENSOR_ARGS; k++) {
        if (n->packed[k] && (st = saved_hooks->unpack(n->packed[k], &n->saved[k])) == MT_OK) {
            n->saved_version[k] = mt_tensor_version(n->saved[k]);
        }
    }
    for (int k = 0; n->has_packed && st == MT_OK && k < MT_NODE_MAX_OUT; k++) {
        if (n->packed_out[k] &&
            (st = saved_hooks->unpack(n->packed_out[k], &n->saved_out[k])) == MT_OK) {
            n->saved_out_version[k] = mt_tensor_version(n->saved_out[k]);
        }
    }
    if (st) {
        mt_saved_unpacked_clear(n);
    }
    return st;
}

void
mt_saved_unpacked_clear(mt_node *n)
{
    for (int k = 0; n->has_packed && k < MT_MAX_TENSOR_ARGS; k++) {
        if (n->packed[k]) {
            mt_tensor_clear(&n->saved[k]);
        }
    }
    for (int k = 0; n->has_packed && k < MT_NODE_MAX_OUT; k++) {
        if (n->packed_out[k]) {
            mt_tensor_clear(&n->saved_out[k]);
        }
    }
}

/* PyTorch's error for a tensor saved at version `saved` and changed in place since. name: the
 * node's whose output k it is (NULL for a leaf), shown as PyTorch's message shows it: without
 * the "Backward<n>" ending of a formula's node ("Mul"), in full otherwise ("CopySlices"). The
 * hint depends on anomaly mode, as PyTorch's. */
static mt_status
stale(const mt_tensor *t, long saved, const char *name, int k)
{
    char buf[128], of[160] = "";
    if (name) {
        const char *end = name + strlen(name);
        const char *digits = end;
        while (digits > name && digits[-1] >= '0' && digits[-1] <= '9') {
            digits--;
        }
        size_t stem = (size_t)(end - name);
        size_t suffix = strlen("Backward");
        if (digits < end && (size_t)(digits - name) > suffix &&
            strncmp(digits - suffix, "Backward", suffix) == 0) {
            stem = (size_t)(digits - suffix - name);
        }
        snprintf(of, sizeof(of), ", which is output %d of %.*s,", k, (int)stem, name);
    }
    const char *hint =
        mt_autograd_anomaly_enabled()
            ? "the backtrace further above shows the operation that failed to compute its "
              "gradient. The variable in question was changed in there or anywhere later. Good "
              "luck!"
            : "enable anomaly detection to find the operation that failed to compute its "
              "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).";
    return mt_fail(MT_ERUNTIME,
                   "one of the variables needed for gradient computation has been modified by an "
                   "inplace operation: [minitorch.%sTensor %s]%s is at version %ld; expected "
                   "version %ld instead. Hint: %s",
                   mt_dtype_scalar_name(t->dtype),
                   mt_format_sizes(buf, sizeof(buf), t->ndim, t->sizes), of, mt_tensor_version(t),
                   saved, hint);
}

mt_status
mt_autograd_check_version(const mt_tensor *t, long saved)
{
    if (mt_tensor_version(t) == saved) {
        return MT_OK;
    }
    /* PyTorch names t's grad_fn as reading it now gives it: a view changed in place since (or
     * what a node kept of one, without its base: saved_input) has an AsStrided node over its
     * base's history by now (variable.cpp's grad_fn of a view whose version moved) */
    const mt_node *fn = t->grad_fn;
    if (fn && fn->formula && fn->formula->is_view) {
        return stale(t, saved, "AsStridedBackward0", 0);
    }
    return stale(t, saved, fn ? fn->name : NULL, t->output_nr);
}

static mt_status
released(void)
{
    return mt_fail(MT_ERUNTIME,
                   "Trying to backward through the graph a second time (or directly access saved "
                   "tensors after they have already been freed). Saved intermediate values of the "
                   "graph are freed when you call .backward() or autograd.grad(). Specify "
                   "retain_graph=True if you need to backward through the graph a second time or "
                   "if you need to access saved tensors after calling backward.");
}

/* Whether saved input slot of n had a history when n saved it and has none now: detached in
 * place (detach_()) since. Its edge (the slot's among the differentiable inputs) tells what it
 * was: a node other than a leaf's AccumulateGrad. (What an unpack hook gives back is a tensor
 * of its own, as PyTorch's, which checks only the tensors kept without hooks.) */
static bool
detached_in_place(const mt_node *n, int slot, const mt_tensor *t)
{
    if (t->grad_fn != NULL || n->packed[slot] != NULL || n->formula == NULL ||
        !(n->formula->diff_inputs >> slot & 1u)) {
        return false;
    }
    int e = 0;
    for (int k = 0; k < slot; k++) {
        e += (n->formula->diff_inputs >> k & 1u) != 0;
    }
    const mt_node *was = e < n->nedges ? n->edges[e].node : NULL;
    return was != NULL && was->formula != NULL;
}

mt_status
mt_saved_input(mt_node *n, int slot, mt_tensor **out)
{
    mt_tensor *t = n->saved[slot];
    if (n->released) {
        return released();
    }
    if (t == NULL) {
        return mt_fail(MT_ERUNTIME, "%s: input %d was not saved", n->name, slot);
    }
    if (detached_in_place(n, slot, t)) { /* PyTorch's SavedVariable::unpack refuses it */
        return mt_fail(MT_ERUNTIME,
                       "Trying to use a saved tensor that has been detached in-place, i.e. with "
                       ".detach_().This is not supported, please use out-of-place `.detach()` "
                       "instead");
    }
    mt_status st = mt_autograd_check_version(t, n->saved_version[slot]);
    if (st) {
        return st;
    }
    *out = t;
    return MT_OK;
}

mt_status
mt_saved_output(mt_node *n, int k, mt_tensor **out)
{
    mt_tensor *t = n->saved_out[k];
    if (n->released) {
        return released();
    }
    if (t == NULL) {
        return mt_fail(MT_ERUNTIME, "%s: output %d was not saved", n->name, k);
    }
    if (mt_tensor_version(t) != n->saved_out_version[k]) {
        return stale(t, n->saved_out_version[k], n->name,
                     k); /* a saved output: n's, as PyTorch's */
    }
    *out = t;
    return MT_OK;
}

mt_status
mt_saved_peek(mt_node *n, bool output, int k, mt_tensor **out)
{
    *out = NULL;
    if (k < 0 || k >= (output ? MT_NODE_MAX_OUT : MT_MAX_TENSOR_ARGS)) {
        return MT_OK;
    }
    void *handle = output ? n->packed_out[k] : n->packed[k];
    /* a backward without retain_graph freed what the row keeps (the call may have kept less) */
    bool row_keeps = n->formula &&
                     (output ? n->formula->save_outputs : (n->formula->save_inputs >> k & 1u) != 0);
    if (n->released && (handle || row_keeps || (output ? n->saved_out[k] : n->saved[k]))) {
        return released();
    }
    if (handle) { /* kept by a pack hook: what its unpack gives now */
        return saved_hooks->unpack(handle, out);
    }
    mt_tensor *t = NULL;
    if ((output ? n->saved_out[k] : n->saved[k]) == NULL) {
        return MT_OK;
    }
    mt_status st = output ? mt_saved_output(n, k, &t) : mt_saved_input(n, k, &t);
    if (st == MT_OK) {
        *out = mt_tensor_retain(t);
    }
    return st;
}

mt_status
mt_saved_check(mt_node *n)
{
    mt_tensor *t = NULL;
    mt_status st = MT_OK;
    for (int k = 0; n->has_saved && st == MT_OK && k < MT_MAX_TENSOR_ARGS; k++) {
        /* a NULL slot of a live node is an optional input passed as None */
        if ((n->formula->save_inputs >> k & 1u) && (n->saved[k] || n->released)) {
            st = mt_saved_input(n, k, &t);
        }
    }
    for (int k = 0; n->has_saved && st == MT_OK && k < n->nout; k++) {
        bool kept = n->out_diff[k] || (n->formula->save_index_outputs >> k & 1u);
        if (n->saved_out[k] || (n->released && kept)) {
            st = mt_saved_output(n, k, &t);
        }
    }
    return st;
}
