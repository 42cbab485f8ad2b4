/* out=: a function called with out=t writes its result into t and returns t, as PyTorch's out=
 * overloads do. One path serves every op whose schema ends in `*, Tensor(a!)? out=None`
 * (args.c finds it). out's tensors go to the dispatcher as the call's destinations
 * (mt_args.into): an op whose front end states its results (ops/front.h), and the elementwise
 * family, write a result straight into out where out fits it as it is (the result's dtype and
 * shape, or no elements yet; the stated strides, any for the elementwise loops; no memory
 * shared with an input but, elementwise, an input that is out itself: PyTorch's structured
 * out= kernels), and out's version goes up by one. Otherwise the op runs as it would without
 * out=, its result is checked against out by the op's dtype rule (PyTorch's messages, which
 * differ by family), out is resized where its shape differs (with PyTorch's deprecation warning
 * when it had elements), and the result is copied in by copy_ (casts, any strides of out, its
 * version counter): one more pass over the result. An op with two results takes a tuple of two
 * tensors. */
#include <stdio.h>
#include <string.h>

#include "ops/ops.h"
#include "python/pyminitorch.h"

/* How out's dtype must relate to the result's. PyTorch's families check it differently. */
typedef enum out_rule {
    OUT_CAST = 0, /* TensorIterator ops: the result must cast to out's dtype (most ops) */
    OUT_DTYPE,    /* out's dtype is the op's dtype argument: sum, prod, cumsum, factories */
    OUT_SAME,     /* neg, abs, clamp: "Found dtype Double but expected Float" */
    OUT_EXACT,    /* mm, sort, gather: "Expected out tensor to have dtype float, ..." */
    OUT_INPUT,    /* amax, amin */
    OUT_BOOL,     /* all, any: a bool out only */
    OUT_FLOAT,    /* logsumexp: a float out only */
    OUT_DOT,      /* dot */
    OUT_SELF,     /* index_select, masked_select */
    OUT_WHERE,    /* where */
    OUT_CAT,      /* cat, stack: as OUT_CAST, but a TypeError */
    OUT_NONZERO,  /* nonzero: its own message */
} out_rule;

/* Ops not listed are OUT_CAST. */
static const unsigned char rules[MT_NUM_OPS] = {
    [MT_OP_sum] = OUT_DTYPE,         [MT_OP_prod] = OUT_DTYPE,
    [MT_OP_cumsum] = OUT_DTYPE,      [MT_OP_cumprod] = OUT_DTYPE,
    [MT_OP_empty] = OUT_DTYPE,       [MT_OP_zeros] = OUT_DTYPE,
    [MT_OP_ones] = OUT_DTYPE,        [MT_OP_full] = OUT_DTYPE,
    [MT_OP_arange] = OUT_DTYPE,      [MT_OP_rand] = OUT_DTYPE,
    [MT_OP_randn] = OUT_DTYPE,       [MT_OP_randperm] = OUT_DTYPE,
    [MT_OP_linspace] = OUT_DTYPE,    [MT_OP_logspace] = OUT_DTYPE,
    [MT_OP_eye] = OUT_DTYPE,         [MT_OP_randint] = OUT_DTYPE,
    [MT_OP_neg] = OUT_SAME,          [MT_OP_abs] = OUT_SAME,
    [MT_OP_sign] = OUT_SAME,         [MT_OP_bitwise_not] = OUT_SAME,
    [MT_OP_clamp] = OUT_SAME,        [MT_OP_clamp_min] = OUT_SAME,
    [MT_OP_clamp_max] = OUT_SAME,    [MT_OP_argmax] = OUT_EXACT,
    [MT_OP_argmin] = OUT_EXACT,      [MT_OP_softmax] = OUT_EXACT,
    [MT_OP_log_softmax] = OUT_EXACT, [MT_OP_mm] = OUT_EXACT,
    [MT_OP_bmm] = OUT_EXACT,         [MT_OP_mv] = OUT_EXACT,
    [MT_OP_matmul] = OUT_EXACT,      [MT_OP_addmm] = OUT_EXACT,
    [MT_OP_baddbmm] = OUT_EXACT,     [MT_OP_addmv] = OUT_EXACT,
    [MT_OP_tril] = OUT_EXACT,        [MT_OP_triu] = OUT_EXACT,
    [MT_OP_gather] = OUT_EXACT,      [MT_OP_scatter] = OUT_EXACT,
    [MT_OP_scatter_add] = OUT_EXACT, [MT_OP_max_dim] = OUT_EXACT,
    [MT_OP_min_dim] = OUT_EXACT,     [MT_OP_sort] = OUT_EXACT,
    [MT_OP_topk] = OUT_EXACT,        [MT_OP_argsort] = OUT_EXACT,
    [MT_OP_amax] = OUT_INPUT,        [MT_OP_amin] = OUT_INPUT,
    [MT_OP_all] = OUT_BOOL,          [MT_OP_any] = OUT_BOOL,
    [MT_OP_logsumexp] = OUT_FLOAT,   [MT_OP_dot] = OUT_DOT,
    [MT_OP_index_select] = OUT_SELF, [MT_OP_masked_select] = OUT_SELF,
    [MT_OP_where] = OUT_WHERE,       [MT_OP_cat] = OUT_CAT,
    [MT_OP_concat] = OUT_CAT,        [MT_OP_concatenate] = OUT_CAT,
    [MT_OP_stack] = OUT_CAT,         [MT_OP_nonzero] = OUT_NONZERO,
};

/* The out= object as nout tensors (borrowed from it); -1 with PyTorch's TypeError. */
static int
parse_out(const char *name, int index, PyObject *obj, int nout, mt_tensor **outs)
{
    if (nout == 1) {
        if (!mt_py_is_tensor(obj)) {
            PyErr_Format(PyExc_TypeError, "%s(): argument 'out' must be Tensor, not %s", name,
                         Py_TYPE(obj)->tp_name);
            return -1;
        }
        outs[0] = mt_py_unwrap(obj);
        return 0;
    }
    if (!PyTuple_Check(obj) && !PyList_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'out' must be tuple of Tensors, not %s", name,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (PySequence_Fast_GET_SIZE(obj) != nout) {
        PyErr_Format(PyExc_TypeError, "expected tuple of %d elements but got %zd", nout,
                     PySequence_Fast_GET_SIZE(obj));
        return -1;
    }
    for (int k = 0; k < nout; k++) {
        PyObject *item = PySequence_Fast_GET_ITEM(obj, k);
        if (!mt_py_is_tensor(item)) {
            PyErr_Format(PyExc_TypeError,
                         "expected Tensor as element %d in argument %d, but got %s", k, index,
                         Py_TYPE(item)->tp_name);
            return -1;
        }
        outs[k] = mt_py_unwrap(item);
    }
    return 0;
}

/* Whether a and b reach some common byte without being the same view: PyTorch refuses such an
 * out (assert_no_partial_overlap); out= an input itself is an in-place op. */
static bool
partial_overlap(const mt_tensor *a, const mt_tensor *b)
{
    if (a == NULL || a->storage != b->storage || mt_tensor_numel(a) == 0 ||
        mt_tensor_numel(b) == 0 || mt_tensor_same_view(a, b)) {
        return false;
    }
    int64_t lo[2], hi[2];
    const mt_tensor *t[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        int64_t item = (int64_t)mt_dtype_size(t[k]->dtype), span = 0;
        for (int d = 0; d < t[k]->ndim; d++) {
            span += (t[k]->sizes[d] - 1) * t[k]->strides[d];
        }
        lo[k] = t[k]->offset * item;
        hi[k] = (t[k]->offset + span + 1) * item;
    }
    return lo[0] < hi[1] && lo[1] < hi[0];
}

static bool
needs_grad(const mt_tensor *t, const mt_tensor *unused)
{
    (void)unused;
    return mt_tensor_requires_grad(t);
}

/* Whether pred(t, other) holds for some tensor argument t of the call (lists included). */
static bool
any_argument(const mt_args *a, bool (*pred)(const mt_tensor *, const mt_tensor *),
             const mt_tensor *other)
{
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        if (a->t[k] && pred(a->t[k], other)) {
            return true;
        }
    }
    for (int j = 0; j < MT_MAX_TENSOR_LISTS && mt_args_tensorlist(a, j).t; j++) {
        mt_tensorlist l = mt_args_tensorlist(a, j);
        for (int k = 0; k < l.n; k++) {
            if (l.t[k] && pred(l.t[k], other)) {
                return true;
            }
        }
    }
    return false;
}

int
mt_py_out_begin(mt_op op, const char *name, int index, PyObject *obj, bool factory, mt_args *a,
                mt_py_outs *o)
{
    int nout = mt_op_nout[op];
    mt_tensor **outs = o->t;
    if (parse_out(name, index, obj, nout, outs) < 0) {
        return -1;
    }
    /* An out of integer or bool dtype takes no float result (out= refuses the cast), so the
     * call is not differentiable (comparisons, bucketize, signbit, ...) and PyTorch writes it
     * whatever requires grad. */
    bool differentiable = false;
    for (int k = 0; k < nout; k++) {
        differentiable |= outs[k] == NULL || mt_dtype_is_float(outs[k]->dtype) ||
                          mt_dtype_is_complex(outs[k]->dtype);
    }
    bool grad = any_argument(a, needs_grad, NULL);
    for (int k = 0; k < nout; k++) {
        grad |= mt_tensor_requires_grad(outs[k]);
    }
    if (differentiable && grad && mt_grad_enabled()) {
        PyErr_Format(PyExc_RuntimeError,
                     "%s(): functions with out=... arguments don't support automatic "
                     "differentiation, but one of the arguments requires grad.",
                     name);
        return -1;
    }
    for (int k = 0; k < nout; k++) {
        bool shared = any_argument(a, partial_overlap, outs[k]);
        if (shared) {
            PyErr_SetString(PyExc_RuntimeError,
                            "unsupported operation: some elements of the input tensor and the "
                            "written-to tensor refer to a single memory location. Please clone() "
                            "the tensor before performing the operation.");
            return -1;
        }
    }
    if (rules[op] == OUT_DTYPE && a->dtype < 0) {
        a->dtype = (int)outs[0]->dtype; /* the result is made in out's dtype */
    }
    if (factory && !a->has_device) {
        a->has_device = true; /* and, for a factory, on out's device */
        a->device = mt_tensor_device(outs[0]);
    }
    for (int k = 0; k < nout; k++) {
        a->into[k] = outs[k];
        o->version[k] = mt_tensor_version(outs[k]);
    }
    a->into_op = (int)op;
    return 0;
}

/* PyTorch's dtype check of out (dtype o) against the result (dtype r) for the op's rule. */
static int
check_dtype(mt_op op, const char *name, mt_dtype r, mt_dtype o)
{
    const char *rs = mt_dtype_scalar_name(r), *os = mt_dtype_scalar_name(o);
    switch ((out_rule)rules[op]) {
    case OUT_CAST:
    case OUT_DTYPE:
        if (!mt_can_cast(r, o)) {
            PyErr_Format(PyExc_RuntimeError,
                         "result type %s can't be cast to the desired output type %s", rs, os);
            return -1;
        }
        return 0;
    case OUT_CAT:
        if (!mt_can_cast(r, o)) {
            PyErr_Format(PyExc_TypeError,
                         "torch.cat(): input types can't be cast to the desired output type %s",
                         os);
            return -1;
        }
        return 0;
    case OUT_FLOAT:
        if (!mt_dtype_is_float(o)) {
            PyErr_Format(PyExc_RuntimeError,
                         "%s(): Expected floating point type for result tensor, but got: %s", name,
                         os);
            return -1;
        }
        return 0;
    case OUT_BOOL:
        if (o != MT_BOOL) {
            PyErr_Format(PyExc_RuntimeError, "%s only supports bool tensor for result, got: %s",
                         name, os);
            return -1;
        }
        return 0;
    default:
        break;
    }
    if (r == o) {
        return 0;
    }
    switch ((out_rule)rules[op]) {
    case OUT_SAME:
        PyErr_Format(PyExc_RuntimeError, "Found dtype %s but expected %s", os, rs);
        break;
    case OUT_INPUT:
        PyErr_Format(PyExc_RuntimeError,
                     "Expected the dtype for input and out to match, but got %s for input's "
                     "dtype and %s for out's dtype.",
                     rs, os);
        break;
    case OUT_DOT:
        PyErr_Format(PyExc_RuntimeError, "result dtype %s does not match input dtype %s", os, rs);
        break;
    case OUT_SELF:
        PyErr_Format(PyExc_RuntimeError, "%s(): self and result must have the same scalar type",
                     name);
        break;
    case OUT_WHERE:
        PyErr_Format(PyExc_RuntimeError, "Expected out type to be %s but got %s", rs, os);
        break;
    case OUT_NONZERO:
        PyErr_Format(PyExc_RuntimeError,
                     "nonzero: Expected out tensor to have scalar type %s but got scalar type%s",
                     rs, os); /* (sic) */
        break;
    default:
        PyErr_Format(PyExc_RuntimeError, "Expected out tensor to have dtype %s, but got %s instead",
                     mt_dtype_c_name(r), mt_dtype_c_name(o));
        break;
    }
    return -1;
}

/* out takes res's shape (PyTorch's resize_output): a warning first if out had elements. */
static int
resize_out(mt_tensor *out, const mt_tensor *res)
{
    if (out->ndim == res->ndim &&
        memcmp(out->sizes, res->sizes, sizeof(int64_t) * (size_t)res->ndim) == 0) {
        return 0;
    }
    if (mt_tensor_numel(out) != 0) {
        char had[256], want[256];
        mt_format_sizes(had, sizeof(had), out->ndim, out->sizes);
        mt_format_sizes(want, sizeof(want), res->ndim, res->sizes);
        if (PyErr_WarnFormat(PyExc_UserWarning, 1,
                             "An output with one or more elements was resized since it had shape "
                             "%s, which does not match the required output shape %s. This "
                             "behavior is deprecated, and in a future PyTorch release outputs "
                             "will not be resized unless they have zero elements. You can "
                             "explicitly reuse an out tensor t by resizing it, inplace, to zero "
                             "elements with t.resize_(0).",
                             had, want) < 0) {
            return -1;
        }
    }
    mt_status st = mt_op_resize_(out, res->ndim, res->sizes, NULL);
    return st ? (mt_py_raise(st), -1) : 0;
}

static const char *
device_name(mt_device d, char *buf, size_t n)
{
    if (d.type == MT_CPU) {
        return "cpu";
    }
    snprintf(buf, n, "cuda:%d", d.index);
    return buf;
}

/* out's k-th tensor counts one write, as PyTorch's out= does, whatever it took: a resize that
 * grew it onto new memory (whose counter the copy of its old elements moved), or a kernel that
 * handed its result over with mt_front_write_result (which leaves a new result at 0). */
static void
out_written(const mt_py_outs *outs, int k)
{
    atomic_store(&outs->t[k]->version->value, outs->version[k] + 1);
    atomic_fetch_add(&outs->t[k]->storage->writes, 1);
}

int
mt_py_out_finish(mt_op op, const char *name, mt_args *a, const mt_py_outs *outs)
{
    for (int k = 0; k < mt_op_nout[op]; k++) {
        mt_tensor *res = a->out[k], *out = outs->t[k];
        if (res == out) { /* the kernel wrote it there */
            out_written(outs, k);
            continue;
        }
        mt_device rd = mt_tensor_device(res), od = mt_tensor_device(out);
        if (!mt_device_eq(rd, od)) {
            char want[32], got[32];
            PyErr_Format(PyExc_RuntimeError,
                         "Expected out tensor to have device %s, but got %s instead",
                         device_name(rd, want, sizeof(want)), device_name(od, got, sizeof(got)));
            return -1;
        }
        if (check_dtype(op, name, res->dtype, out->dtype) < 0 || resize_out(out, res) < 0) {
            return -1;
        }
        mt_status st = mt_op_copy_(out, res, NULL);
        if (st) {
            mt_py_raise(st);
            return -1;
        }
        out_written(outs, k);
    }
    return 0;
}
