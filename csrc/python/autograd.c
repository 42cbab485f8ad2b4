/* Python's view of autograd: backward() / autograd.grad(), autograd.Function's nodes, the
 * gradient, node and saved-tensor hooks, anomaly mode. The grad_fn nodes' Python objects are
 * python/node.c's. */
#include "python/pyminitorch.h"
#include "python/sparse_grad.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd.h"
#include "autograd/sparse_grad.h"

/* Releases and frees a tensors_of array of n entries (NULL entries are absent optionals). */
static void
release_tensors(mt_tensor **ts, Py_ssize_t n)
{
    for (Py_ssize_t k = 0; ts && k < n; k++) {
        mt_tensor_release(ts[k]);
    }
    PyMem_Free(ts);
}

/* A sequence of tensors (None allowed when none_ok) as a C array of owned references. */
static int
tensors_of(PyObject *seq, const char *what, bool none_ok, mt_tensor ***out, Py_ssize_t *n)
{
    *out = NULL;
    *n = 0;
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of Tensors");
    if (fast == NULL) {
        return -1;
    }
    Py_ssize_t size = PySequence_Fast_GET_SIZE(fast);
    mt_tensor **ts = PyMem_Calloc(size > 0 ? (size_t)size : 1, sizeof(*ts));
    if (ts == NULL) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < size; k++) {
        PyObject *o = PySequence_Fast_GET_ITEM(fast, k);
        if (o == Py_None && none_ok) {
            continue;
        }
        if (!mt_py_is_tensor(o)) {
            PyErr_Format(PyExc_TypeError, "%s: expected a Tensor at position %zd, got %s", what, k,
                         Py_TYPE(o)->tp_name);
            release_tensors(ts, k);
            Py_DECREF(fast);
            return -1;
        }
        /* Owned: the sequence may be a temporary (a generator's list) or change while the engine
         * runs without the GIL. */
        ts[k] = mt_tensor_retain(mt_py_unwrap(o));
    }
    Py_DECREF(fast);
    *out = ts;
    *n = size;
    return 0;
}

/* _C._run_backward(roots, grads, retain_graph, create_graph, inputs) -> None or a tuple of the
 * inputs' gradients (None where none flowed). */
static PyObject *
run_backward(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *roots_o, *grads_o, *inputs_o, *res = NULL;
    int retain_graph, create_graph;
    if (!PyArg_ParseTuple(args, "OOppO", &roots_o, &grads_o, &retain_graph, &create_graph,
                          &inputs_o)) {
        return NULL;
    }
    mt_tensor **roots = NULL, **grads = NULL, **inputs = NULL, **captured = NULL;
    Py_ssize_t nr = 0, ng = 0, ni = 0;
    if (tensors_of(roots_o, "backward", false, &roots, &nr) < 0) {
        return NULL;
    }
    if (tensors_of(grads_o, "backward", true, &grads, &ng) < 0) {
        goto out;
    }
    if (tensors_of(inputs_o, "grad", false, &inputs, &ni) < 0) {
        goto out;
    }
    if (ng != nr) {
        PyErr_Format(PyExc_RuntimeError, "got %zd tensors and %zd gradients", nr, ng);
        goto out;
    }
    captured = PyMem_Calloc(ni > 0 ? (size_t)ni : 1, sizeof(*captured));
    if (captured == NULL) {
        PyErr_NoMemory();
        goto out;
    }
    /* The engine is C but for autograd.Function nodes, which take the GIL back themselves. */
    mt_status st;
    Py_BEGIN_ALLOW_THREADS st = mt_backward((int)nr, roots, grads, retain_graph, create_graph,
                                            (int)ni, inputs, captured);
    Py_END_ALLOW_THREADS if (st)
    {
        mt_py_raise(st);
        goto out;
    }
    if (mt_py_give_deterministic_warning() < 0) {
        goto out;
    }
    if (ni == 0) {
        res = Py_NewRef(Py_None);
        goto out;
    }
    res = PyTuple_New(ni);
    for (Py_ssize_t k = 0; k < ni; k++) {
        PyObject *g = captured[k] ? mt_py_wrap_grad(captured[k], inputs[k], NULL)
                                  : Py_NewRef(Py_None);
        captured[k] = NULL;
        if (res == NULL || g == NULL) {
            Py_XDECREF(g);
            Py_CLEAR(res);
            continue;
        }
        PyTuple_SET_ITEM(res, k, g);
    }
out:
    for (Py_ssize_t k = 0; captured && k < ni; k++) {
        mt_tensor_clear(&captured[k]);
    }
    release_tensors(roots, nr);
    release_tensors(grads, ng);
    release_tensors(inputs, ni);
    PyMem_Free(captured);
    return res;
}

/* ---- autograd.Function: a node whose backward is Python ---- */

typedef struct py_function {
    PyObject *ctx; /* the Function's ctx; its _do_backward(*grads) gives the inputs' grads */
    char name[64];
    bool is_tensor[]; /* per forward argument (node edge): whether it was a tensor */
} py_function;

/* The node may go, and the engine run it, on a thread without the GIL (a kernel or backward
 * that released it): both take it here. */
static void
py_function_free(void *user)
{
    PyGILState_STATE g = PyGILState_Ensure();
    py_function *f = user;
    Py_XDECREF(f->ctx);
    PyMem_Free(f);
    PyGILState_Release(g);
}

static mt_status
call_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **gi)
{
    py_function *f = n->user;
    PyObject *args = PyTuple_New(n->nout), *res = NULL;
    for (int k = 0; args && k < n->nout; k++) {
        /* None where no gradient came: ctx._do_backward makes the zeros the engine made unless
         * ctx.set_materialize_grads(False) */
        bool given = grads[k] && n->grad_given[k];
        PyObject *g = given ? mt_py_wrap(mt_tensor_retain(grads[k])) : Py_NewRef(Py_None);
        if (g == NULL) {
            Py_CLEAR(args);
            break;
        }
        PyTuple_SET_ITEM(args, k, g);
    }
    PyObject *fn = args ? PyObject_GetAttrString(f->ctx, "_do_backward") : NULL;
    res = fn ? PyObject_Call(fn, args, NULL) : NULL;
    Py_XDECREF(fn);
    Py_XDECREF(args);
    if (res == NULL) {
        /* The Python error stays set; the binding layer re-raises it as it is. */
        return mt_fail(MT_EPYTHON, "error in %s.backward", f->name);
    }
    PyObject *fast = PySequence_Fast(res, "backward must return a tuple of gradients");
    Py_DECREF(res);
    if (fast == NULL) {
        return mt_fail(MT_EPYTHON, "error in %s.backward", f->name);
    }
    Py_ssize_t m = PySequence_Fast_GET_SIZE(fast);
    if (m != n->nedges) {
        Py_DECREF(fast);
        return mt_fail(MT_ERUNTIME,
                       "function %s returned an incorrect number of gradients (expected %d, got "
                       "%zd)",
                       f->name, n->nedges, m);
    }
    /* PyTorch's checks: a gradient is a tensor or None, and None for an argument that was not
     * a tensor (anything else would be dropped without a word). */
    mt_status st = MT_OK;
    for (Py_ssize_t k = 0; st == MT_OK && k < m; k++) {
        PyObject *o = PySequence_Fast_GET_ITEM(fast, k);
        if (o == Py_None) {
            continue;
        }
        if (!mt_py_is_tensor(o)) {
            st = mt_fail(MT_ERUNTIME, "expected Variable or None (got %s)", Py_TYPE(o)->tp_name);
        } else if (!f->is_tensor[k]) {
            st = mt_fail(MT_ERUNTIME,
                         "function %s returned a gradient different than None at position %zd, "
                         "but the corresponding forward input was not a Variable",
                         f->name, k + 1);
        } else {
            gi[k] = mt_tensor_retain(mt_py_unwrap(o));
        }
    }
    Py_DECREF(fast);
    return st;
}

static mt_status
py_function_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **gi)
{
    PyGILState_STATE g = PyGILState_Ensure();
    mt_status st = call_backward(n, grads, gi); /* a Python error stays set on this thread */
    PyGILState_Release(g);
    return st;
}

static const mt_formula py_function_formula = {
    "PythonFunction", py_function_backward, 0, false, 0, false, false};

/* _C._function_record(ctx, name, inputs, outputs, dirty): links outputs to a node that calls
 * ctx._do_backward; inputs may hold None (non-tensor arguments, which get no gradient); dirty
 * (optional) says, per output, whether it is an input changed in place (ctx.mark_dirty). */
static PyObject *
function_record(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *ctx, *inputs_o, *outputs_o, *dirty_o = NULL;
    const char *name;
    if (!PyArg_ParseTuple(args, "OsOO|O", &ctx, &name, &inputs_o, &outputs_o, &dirty_o)) {
        return NULL;
    }
    mt_tensor **inputs = NULL, **outputs = NULL;
    Py_ssize_t ni = 0, no = 0;
    if (tensors_of(inputs_o, "Function", true, &inputs, &ni) < 0) {
        return NULL;
    }
    if (tensors_of(outputs_o, "Function", false, &outputs, &no) < 0) {
        release_tensors(inputs, ni);
        return NULL;
    }
    py_function *f = PyMem_Calloc(1, sizeof(*f) + (size_t)ni * sizeof(bool));
    if (f == NULL) {
        release_tensors(inputs, ni);
        release_tensors(outputs, no);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t k = 0; k < ni; k++) {
        f->is_tensor[k] = inputs[k] != NULL;
    }
    f->ctx = Py_NewRef(ctx);
    snprintf(f->name, sizeof(f->name), "%s", name);
    bool dirty[MT_NODE_MAX_OUT] = {false};
    for (Py_ssize_t k = 0; dirty_o && k < no && k < MT_NODE_MAX_OUT && k < PySequence_Size(dirty_o);
         k++) {
        PyObject *flag = PySequence_GetItem(dirty_o, k);
        dirty[k] = flag && PyObject_IsTrue(flag) == 1;
        Py_XDECREF(flag);
    }
    PyErr_Clear(); /* a flag that is not a bool reads as false */
    mt_status st = mt_autograd_record_custom(&py_function_formula, f->name, f, py_function_free,
                                             (int)ni, inputs, (int)no, outputs, dirty);
    if (st) {
        py_function_free(f);
    }
    release_tensors(inputs, ni);
    release_tensors(outputs, no);
    if (st) {
        return mt_py_raise(st);
    }
    Py_RETURN_NONE;
}

/* _C._check_saved_version(tensor, version): raises PyTorch's 'modified by an inplace operation'
 * error if tensor changed in place since it was saved at version (an autograd.Function's
 * ctx.saved_tensors). */
static PyObject *
check_saved_version(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *t;
    long version;
    if (!PyArg_ParseTuple(args, "Ol", &t, &version)) {
        return NULL;
    }
    if (!mt_py_is_tensor(t)) {
        return PyErr_Format(PyExc_TypeError, "expected a Tensor, got %s", Py_TYPE(t)->tp_name);
    }
    mt_status st = mt_autograd_check_version(mt_py_unwrap(t), version);
    return st ? mt_py_raise(st) : Py_NewRef(Py_None);
}

/* _as_strided_history(self, view): the history half of self.as_strided_(...) on a tensor that
 * requires grad (minitorch/_tensor_methods.py): view is self.as_strided(...), just recorded
 * (AsStridedBackward0 over self's history); self takes its geometry and its node, named as
 * PyTorch names as_strided_'s (AsStridedBackward1), and a new version. A view stays a view of its
 * base, its history now current. */
static PyObject *
as_strided_history(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *self, *view;
    if (!PyArg_ParseTuple(args, "OO", &self, &view)) {
        return NULL;
    }
    if (!mt_py_is_tensor(self) || !mt_py_is_tensor(view)) {
        return PyErr_Format(PyExc_TypeError, "expected two Tensors");
    }
    mt_tensor *t = mt_py_unwrap(self), *v = mt_py_unwrap(view);
    if (v->grad_fn == NULL || v->storage != t->storage) {
        return PyErr_Format(PyExc_RuntimeError, "_as_strided_history: view is not a view of self "
                                                "with a history");
    }
    v->grad_fn->name = "AsStridedBackward1";
    t->offset = v->offset;
    t->ndim = v->ndim;
    memcpy(t->sizes, v->sizes, sizeof(t->sizes));
    memcpy(t->strides, v->strides, sizeof(t->strides));
    mt_tensor_bump_version(t);
    mt_autograd_set_grad_fn(t, v->grad_fn, v->output_nr);
    if (t->view_base) {
        t->view_version = mt_tensor_version(t);
    }
    Py_RETURN_NONE;
}

/* ---- gradient hooks: a Python callable per registration, run by the engine ---- */

static void
py_hook_free(void *ctx)
{
    PyGILState_STATE g = PyGILState_Ensure();
    Py_DECREF((PyObject *)ctx);
    PyGILState_Release(g);
}

/* A sparse gradient as the Python side takes it and gives it back (minitorch/_tensor.py's
 * _run_grad_hooks): (values, indices, coalesced), the values an unmarked alias. */
static PyObject *
sparse_parts(mt_tensor *g)
{
    mt_tensor *v = NULL;
    mt_status st = mt_tensor_view(g, g->ndim, g->sizes, g->strides, g->offset, &v);
    if (st) {
        return mt_py_raise(st);
    }
    PyObject *values = mt_py_wrap(v);
    PyObject *indices = values ? mt_py_wrap(mt_tensor_retain(g->sparse_indices)) : NULL;
    PyObject *res = indices ? Py_BuildValue("(OOO)", values, indices,
                                            g->sparse_coalesced ? Py_True : Py_False)
                            : NULL;
    Py_XDECREF(values);
    Py_XDECREF(indices);
    return res;
}

/* ctx(grad) -> None or the gradient to use instead (a gradient hook; the Python side checked
 * it; a sparse one as sparse_parts); ctx(leaf) for a post-accumulate hook, whose result is
 * ignored. */
static mt_status
py_hook_call(void *ctx, mt_tensor **grad)
{
    PyGILState_STATE g = PyGILState_Ensure();
    mt_status st = MT_OK;
    const bool sparse = mt_is_sparse_grad(*grad);
    PyObject *arg = sparse ? sparse_parts(*grad) : mt_py_wrap(mt_tensor_retain(*grad));
    PyObject *res = arg ? PyObject_CallOneArg((PyObject *)ctx, arg) : NULL;
    Py_XDECREF(arg);
    PyObject *values, *indices;
    int coalesced;
    if (res == NULL) {
        st = mt_fail(MT_EPYTHON, "error in a gradient hook"); /* the Python error stays set */
    } else if (sparse && PyTuple_Check(res) &&
               PyArg_ParseTuple(res, "O!O!p", &mt_py_TensorBase_Type, &values,
                                &mt_py_TensorBase_Type, &indices, &coalesced)) {
        mt_tensor *h = NULL;
        st = mt_sparse_grad_new(mt_py_unwrap(values), mt_py_unwrap(indices), coalesced, &h);
        if (st == MT_OK) {
            mt_tensor_release(*grad);
            *grad = h;
        } else {
            mt_py_raise(st);
            st = mt_fail(MT_EPYTHON, "error in a gradient hook");
        }
    } else if (sparse && PyTuple_Check(res)) {
        st = mt_fail(MT_EPYTHON, "error in a gradient hook"); /* ParseTuple's error */
    } else if (res != Py_None && mt_py_is_tensor(res)) {
        mt_tensor_release(*grad);
        *grad = mt_tensor_retain(mt_py_unwrap(res));
    }
    Py_XDECREF(res);
    PyGILState_Release(g);
    return st;
}

/* _C._add_grad_hook(tensor, fn, post_accumulate): the engine calls fn with tensor's gradient
 * (or, post_accumulate, with the leaf after its .grad was accumulated). */
static PyObject *
add_grad_hook(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *t, *fn;
    int post;
    if (!PyArg_ParseTuple(args, "OOp", &t, &fn, &post)) {
        return NULL;
    }
    if (!mt_py_is_tensor(t) || !PyCallable_Check(fn)) {
        return PyErr_Format(PyExc_TypeError, "_add_grad_hook(tensor, callable, bool)");
    }
    mt_status st = mt_autograd_add_hook(mt_py_unwrap(t), post, py_hook_call, Py_NewRef(fn),
                                        py_hook_free);
    return st ? mt_py_raise(st) : Py_NewRef(Py_None);
}

/* ---- hooks on nodes: one Python object per node (graph.py's _NodeHooks) keeps the functions
 * registered; the engine calls its pre(grad_outputs) and post(grad_inputs, grad_outputs), which
 * return None or the checked tuple to use instead ---- */

static PyObject *
tensors_tuple(mt_tensor *const *ts, int n)
{
    PyObject *res = PyTuple_New(n);
    for (int k = 0; res && k < n; k++) {
        PyObject *v = ts[k] ? mt_py_wrap(mt_tensor_retain(ts[k])) : Py_NewRef(Py_None);
        if (v == NULL) {
            Py_CLEAR(res);
            break;
        }
        PyTuple_SET_ITEM(res, k, v);
    }
    return res;
}

/* Replaces ts[0..n) by the entries of res (a tuple of n Tensors or Nones, checked by Python). */
static void
replace_tensors(PyObject *res, mt_tensor **ts, int n)
{
    for (int k = 0; k < n && k < PyTuple_GET_SIZE(res); k++) {
        PyObject *v = PyTuple_GET_ITEM(res, k);
        mt_tensor_clear(&ts[k]);
        ts[k] = mt_py_is_tensor(v) ? mt_tensor_retain(mt_py_unwrap(v)) : NULL;
    }
}

/* ctx.<method>(*args), its result put into ts[0..n) */
static mt_status
call_node_hooks(void *ctx, const char *method, PyObject *args, mt_tensor **ts, int n)
{
    mt_status st = MT_OK;
    PyObject *res = args ? PyObject_CallMethod((PyObject *)ctx, method, "(O)", args) : NULL;
    if (res == NULL) {
        st = mt_fail(MT_EPYTHON, "error in a node hook"); /* the Python error stays set */
    } else if (PyTuple_Check(res)) {
        replace_tensors(res, ts, n);
    }
    Py_XDECREF(res);
    return st;
}

static mt_status
py_node_pre(void *ctx, mt_tensor **grad_outputs, int nout)
{
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *go = tensors_tuple(grad_outputs, nout);
    mt_status st = call_node_hooks(ctx, "pre", go, grad_outputs, nout);
    Py_XDECREF(go);
    PyGILState_Release(g);
    return st;
}

static mt_status
py_node_post(void *ctx, mt_tensor **grad_inputs, int nin, mt_tensor *const *grad_outputs, int nout)
{
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *gi = tensors_tuple(grad_inputs, nin), *go = tensors_tuple(grad_outputs, nout);
    PyObject *args = gi && go ? PyTuple_Pack(2, gi, go) : NULL;
    mt_status st = call_node_hooks(ctx, "post", args, grad_inputs, nin);
    Py_XDECREF(args);
    Py_XDECREF(gi);
    Py_XDECREF(go);
    PyGILState_Release(g);
    return st;
}

static const mt_node_hooks py_node_hooks = {py_node_pre, py_node_post, py_hook_free};

/* _C._node_hooks(node, make): the node's hooks object, made with make() on first use */
static PyObject *
node_hooks(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *node, *make;
    if (!PyArg_ParseTuple(args, "O!O", &mt_py_Node_Type, &node, &make)) {
        return NULL;
    }
    mt_node *n = ((mt_py_node_object *)node)->node;
    if (n->node_hooks == NULL) {
        PyObject *made = PyObject_CallNoArgs(make);
        if (made == NULL) {
            return NULL;
        }
        n->node_hooks_ctx = made;
        n->node_hooks = &py_node_hooks;
    }
    return Py_NewRef((PyObject *)n->node_hooks_ctx);
}

/* ---- saved-tensor hooks: the engine's handles are the tuples (unpack_hook, packed) that
 * minitorch.autograd.graph's pack function gives for a tensor ---- */

static PyObject *saved_pack_fn; /* owned: tensor -> (unpack_hook, packed) */

static mt_status
py_saved_pack(mt_tensor *t, void **handle)
{
    PyGILState_STATE g = PyGILState_Ensure();
    mt_status st = MT_OK;
    PyObject *arg = mt_py_wrap(mt_tensor_retain(t));
    PyObject *res = arg ? PyObject_CallOneArg(saved_pack_fn, arg) : NULL;
    Py_XDECREF(arg);
    if (res != NULL && !(PyTuple_Check(res) && PyTuple_GET_SIZE(res) == 2)) {
        Py_CLEAR(res);
        PyErr_SetString(PyExc_TypeError, "the saved tensor pack function must give a pair");
    }
    if (res == NULL) {
        st = mt_fail(MT_EPYTHON, "error in a saved tensor pack hook"); /* the error stays set */
    }
    *handle = res;
    PyGILState_Release(g);
    return st;
}

static mt_status
py_saved_unpack(void *handle, mt_tensor **out)
{
    PyGILState_STATE g = PyGILState_Ensure();
    mt_status st = MT_OK;
    PyObject *h = handle;
    PyObject *res = PyObject_CallOneArg(PyTuple_GET_ITEM(h, 0), PyTuple_GET_ITEM(h, 1));
    if (res != NULL && !mt_py_is_tensor(res)) {
        PyErr_Format(PyExc_TypeError,
                     "Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                     "type %s",
                     Py_TYPE(res)->tp_name);
        Py_CLEAR(res);
    }
    if (res == NULL) {
        st = mt_fail(MT_EPYTHON, "error in a saved tensor unpack hook");
    } else {
        *out = mt_tensor_retain(mt_py_unwrap(res));
    }
    Py_XDECREF(res);
    PyGILState_Release(g);
    return st;
}

static void
py_saved_drop(void *handle)
{
    PyGILState_STATE g = PyGILState_Ensure();
    Py_DECREF((PyObject *)handle);
    PyGILState_Release(g);
}

static const mt_saved_hooks py_saved_hooks = {py_saved_pack, py_saved_unpack, py_saved_drop};

void
mt_py_saved_hooks_install(void)
{
    mt_saved_hooks_install(&py_saved_hooks);
}

/* _C._saved_tensors_hooks_init(pack): pack(tensor) -> (unpack_hook, packed), the function the
 * engine calls for each tensor a node saves while hooks are active */
static PyObject *
saved_tensors_hooks_init(PyObject *module, PyObject *fn)
{
    (void)module;
    if (!PyCallable_Check(fn)) {
        return PyErr_Format(PyExc_TypeError, "_saved_tensors_hooks_init(callable)");
    }
    Py_XSETREF(saved_pack_fn, Py_NewRef(fn));
    mt_py_saved_hooks_install();
    Py_RETURN_NONE;
}

/* _C._saved_tensors_hooks_active(bool): whether this thread has saved-tensor hooks */
static PyObject *
saved_tensors_hooks_active(PyObject *module, PyObject *flag)
{
    (void)module;
    int on = PyObject_IsTrue(flag);
    if (on < 0) {
        return NULL;
    }
    if (on && saved_pack_fn == NULL) {
        return PyErr_Format(PyExc_RuntimeError, "saved tensor hooks are not initialised");
    }
    mt_saved_hooks_set_active(on);
    Py_RETURN_NONE;
}

/* _C._autograd_formula(op) -> the node name op records under autograd, or None. */
static PyObject *
autograd_formula(PyObject *module, PyObject *name)
{
    (void)module;
    const char *s = PyUnicode_AsUTF8(name);
    if (s == NULL) {
        return NULL;
    }
    for (int op = 0; op < MT_NUM_OPS; op++) {
        if (strcmp(mt_op_names[op], s) == 0) {
            const mt_formula *f = mt_autograd_formula((mt_op)op);
            return f ? PyUnicode_FromString(f->name) : Py_NewRef(Py_None);
        }
    }
    return PyErr_Format(PyExc_ValueError, "no op named '%s'", s);
}

/* _C._set_anomaly_enabled(enabled, check_nan=True): autograd's anomaly mode. */
static PyObject *
set_anomaly_enabled(PyObject *module, PyObject *args, PyObject *kwargs)
{
    (void)module;
    static char *kw[] = {"enabled", "check_nan", NULL};
    int enabled, check = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "p|p", kw, &enabled, &check)) {
        return NULL;
    }
    mt_autograd_set_anomaly(enabled, check);
    Py_RETURN_NONE;
}

static PyObject *
is_anomaly_enabled(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    return PyBool_FromLong(mt_autograd_anomaly_enabled());
}

static PyObject *
is_anomaly_check_nan_enabled(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    return PyBool_FromLong(mt_autograd_anomaly_check_nan());
}

/* _C._current_graph_task_id(): the id of the backward running on this thread, -1 if none. */
static PyObject *
current_graph_task_id(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    uint64_t run = mt_autograd_current_run();
    return run ? PyLong_FromUnsignedLongLong(run) : PyLong_FromLong(-1);
}

/* _C._will_engine_execute_node(node): whether the backward running on this thread runs node
 * (a grad_fn, or a leaf's AccumulateGrad), as PyTorch's. */
static PyObject *
will_engine_execute_node(PyObject *module, PyObject *node)
{
    (void)module;
    if (!PyObject_TypeCheck(node, &mt_py_Node_Type) || ((mt_py_node_object *)node)->node == NULL) {
        return PyErr_Format(PyExc_RuntimeError,
                            "_will_engine_execute_node expects an grad_fn, but got %s",
                            Py_TYPE(node)->tp_name);
    }
    int will = mt_autograd_will_execute(((mt_py_node_object *)node)->node);
    if (will < 0) {
        PyErr_SetString(PyExc_RuntimeError,
                        "_will_engine_execute_node should only be called during the backward pass");
        return NULL;
    }
    return PyBool_FromLong(will);
}

static PyMethodDef autograd_functions[] = {
    {"_current_graph_task_id", current_graph_task_id, METH_NOARGS, "_current_graph_task_id()"},
    {"_will_engine_execute_node", will_engine_execute_node, METH_O,
     "_will_engine_execute_node(node)"},
    {"_set_anomaly_enabled", (PyCFunction)(void (*)(void))set_anomaly_enabled,
     METH_VARARGS | METH_KEYWORDS, "_set_anomaly_enabled(enabled, check_nan=True)"},
    {"_is_anomaly_enabled", is_anomaly_enabled, METH_NOARGS, "_is_anomaly_enabled()"},
    {"_is_anomaly_check_nan_enabled", is_anomaly_check_nan_enabled, METH_NOARGS,
     "_is_anomaly_check_nan_enabled()"},
    {"_autograd_formula", autograd_formula, METH_O, "_autograd_formula(op) -> node name or None"},
    {"_function_record", function_record, METH_VARARGS,
     "_function_record(ctx, name, inputs, outputs[, dirty])"},
    {"_as_strided_history", as_strided_history, METH_VARARGS,
     "_as_strided_history(self, view): self takes view's geometry and history (as_strided_)"},
    {"_check_saved_version", check_saved_version, METH_VARARGS,
     "_check_saved_version(tensor, version)"},
    {"_run_backward", run_backward, METH_VARARGS,
     "_run_backward(roots, grads, retain_graph, create_graph, inputs)"},
    {"_add_grad_hook", add_grad_hook, METH_VARARGS, "_add_grad_hook(tensor, fn, post_accumulate)"},
    {"_node_hooks", node_hooks, METH_VARARGS, "_node_hooks(node, make) -> the node's hooks object"},
    {"_set_node_base", mt_py_set_node_base, METH_O, "_set_node_base(cls)"},
    {"_saved_tensors_hooks_init", saved_tensors_hooks_init, METH_O,
     "_saved_tensors_hooks_init(pack)"},
    {"_saved_tensors_hooks_active", saved_tensors_hooks_active, METH_O,
     "_saved_tensors_hooks_active(flag)"},
    {NULL, NULL, 0, NULL},
};

int
mt_py_autograd_init(PyObject *m)
{
    if (PyType_Ready(&mt_py_Node_Type) < 0 || PyType_Ready(&mt_py_SavedTensor_Type) < 0 ||
        PyModule_AddObjectRef(m, "Node", (PyObject *)&mt_py_Node_Type) < 0 ||
        PyModule_AddObjectRef(m, "SavedTensor", (PyObject *)&mt_py_SavedTensor_Type) < 0 ||
        PyModule_AddFunctions(m, autograd_functions) < 0) {
        return -1;
    }
    mt_py_node_types = PyDict_New();
    if (mt_py_node_types == NULL || PyModule_AddObjectRef(m, "_node_types", mt_py_node_types) < 0) {
        return -1;
    }
    mt_autograd_init();
    return 0;
}
