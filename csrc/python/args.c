/* Python calls of ops: a call's positional and keyword arguments are matched to the op's schema
 * (parsed once at import: python/schema.c) and converted into the boxed mt_args.
 *
 * As PyTorch's python_arg_parser: a function's `self` is called `input`; a keyword may also use
 * the NumPy name of its parameter (axis for dim, keepdims for keepdim, x/a/x1 for input, x2 for
 * other); `*, Tensor(a!)? out=None` takes out= (python/out.c writes the result there); a factory
 * called without device= makes its tensor on the default device (python/defaults.c). Error
 * messages are PyTorch's ("add(): argument 'other' (position 2) must be Tensor, not str"). */
#include <stdio.h>
#include <string.h>

#include "dispatch/autocast.h"
#include "ops/elementwise.h"
#include "python/args_schema.h"

/* pos: the argument's position, or -1 for a keyword argument (PyTorch names no position). */
static PyObject *
arg_error(mt_op op, const mt_py_param *p, int pos, PyObject *got, const char *want)
{
    if (pos < 0) {
        return PyErr_Format(PyExc_TypeError, "%s(): argument '%U' must be %s, not %s",
                            mt_py_arg_schemas[op].name, p->name, want, Py_TYPE(got)->tp_name);
    }
    return PyErr_Format(PyExc_TypeError, "%s(): argument '%U' (position %d) must be %s, not %s",
                        mt_py_arg_schemas[op].name, p->name, pos + 1, want, Py_TYPE(got)->tp_name);
}

static int
to_int(PyObject *o, int64_t *out)
{
    if (PyBool_Check(o) || !PyIndex_Check(o)) {
        return -1;
    }
    long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            return -1; /* too big for int64: a type error of the argument, as PyTorch */
        }
        return -2;
    }
    *out = v;
    return 0;
}

/* A list longer than MT_MAX_DIMS (an int[*] argument) goes to l->ext, which the caller frees
 * with PyMem_Free after the call, on every path (release_long_lists). */
static int
to_intlist(PyObject *o, mt_intlist *l, bool allow_int, bool any_length)
{
    int64_t one = 0;
    int r = allow_int ? to_int(o, &one) : -1;
    if (r != -1) {
        l->n = 1;
        l->v[0] = one;
        return r;
    }
    if (!PyTuple_Check(o) && !PyList_Check(o)) {
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    int64_t *v = l->v; /* where the values go */
    if (n > MT_MAX_DIMS && !any_length) {
        PyErr_Format(PyExc_RuntimeError, "only tensors with up to %d dims are supported (got %zd)",
                     MT_MAX_DIMS, n);
        return -2;
    }
    if (n > MT_MAX_DIMS) {
        if (n > INT32_MAX || (v = PyMem_Malloc((size_t)n * sizeof(*v))) == NULL) {
            PyErr_NoMemory();
            return -2;
        }
        l->ext = v;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        r = to_int(PySequence_Fast_GET_ITEM(o, k), &v[k]);
        if (r) {
            return r;
        }
    }
    l->n = (int)n;
    return 0;
}

/* A list or tuple of tensors (and, for Tensor?[], Nones) into the list slot p->slot (a->tl, then
 * a->tls); each tensor is retained until release_tensorlists. */
static int
to_tensorlist(mt_op op, const mt_py_param *p, int pos, PyObject *o, mt_args *a)
{
    mt_tensor ***tl = p->slot == 0 ? &a->tl : &a->tls[p->slot - 1].t;
    int *ntl = p->slot == 0 ? &a->ntl : &a->tls[p->slot - 1].n;
    const bool allow_none = p->type == MT_ARG_TENSORLIST_OPT;
    if (!PyTuple_Check(o) && !PyList_Check(o)) {
        arg_error(op, p, pos, o, "tuple of Tensors");
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    if (n > INT32_MAX || (allow_none && n > MT_MAX_DIMS)) {
        PyErr_Format(PyExc_IndexError, "too many indices for tensor (got %zd)", n);
        return -1;
    }
    *tl = PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof(**tl));
    if (*tl == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *item = PySequence_Fast_GET_ITEM(o, k);
        if (!(allow_none && item == Py_None) && !mt_py_is_tensor(item)) {
            PyErr_Format(PyExc_TypeError,
                         "expected Tensor as element %zd in argument %d, but got %s", k, pos,
                         Py_TYPE(item)->tp_name);
            return -1;
        }
        /* Owned, not borrowed: a Python kernel run by the dispatcher could change the list. */
        (*tl)[k] = item == Py_None ? NULL : mt_tensor_retain(mt_py_unwrap(item));
        *ntl = (int)k + 1;
    }
    return 0;
}

static void
release_tensorlist(mt_tensor ***tl, int *ntl)
{
    for (int k = 0; k < *ntl; k++) {
        if ((*tl)[k]) {
            mt_tensor_release((*tl)[k]);
        }
    }
    PyMem_Free(*tl);
    *tl = NULL;
    *ntl = 0;
}

static void
release_long_lists(mt_args *a)
{
    for (size_t k = 0; k < sizeof(a->l) / sizeof(a->l[0]); k++) {
        PyMem_Free((void *)a->l[k].ext); /* to_intlist's: only it sets ext here */
        a->l[k].ext = NULL;
    }
}

static void
release_tensorlists(mt_args *a)
{
    release_tensorlist(&a->tl, &a->ntl);
    for (int k = 0; k < MT_MAX_TENSOR_LISTS - 1 && a->tls[k].t; k++) {
        release_tensorlist(&a->tls[k].t, &a->tls[k].n);
    }
}

/* A Tensor[] result as a tuple; the references move into it. */
static PyObject *
wrap_tensorlist(mt_args *a)
{
    PyObject *res = PyTuple_New(a->noutl);
    for (int k = 0; res && k < a->noutl; k++) {
        PyObject *o = mt_py_wrap(a->outl[k]);
        a->outl[k] = NULL;
        if (o == NULL) {
            Py_CLEAR(res);
        } else {
            PyTuple_SET_ITEM(res, k, o);
        }
    }
    mt_args_clear_outl(a);
    return res;
}

/* The ops whose every Tensor argument also takes a Python number, bound as a wrapped number
 * (PyTorch's should_allow_numbers_as_tensors: torch.add(1.5, 2.5), torch.mul(2, x),
 * x.copy_(1.5)); the aliases multiply, subtract and divide are these ops. */
static bool
numbers_as_tensors(mt_op op)
{
    return op == MT_OP_add || op == MT_OP_sub || op == MT_OP_mul || op == MT_OP_div ||
           op == MT_OP_true_divide || op == MT_OP_floor_divide || op == MT_OP_copy_;
}

/* Converts one argument into its slot. Returns 0, or -1 with an exception set. */
static int
convert(mt_op op, const mt_py_param *p, int pos, PyObject *o, mt_args *a, unsigned *owned)
{
    int r;
    if (o == Py_None && p->optional) {
        switch (p->type) {
        case MT_ARG_TENSOR:
        case MT_ARG_TENSOR_OR_SCALAR:
            a->t[p->slot] = NULL;
            break;
        case MT_ARG_INT:
            a->i_none |= 1u << p->slot;
            break;
        case MT_ARG_INTLIST:
        case MT_ARG_INTLIST1:
            a->l[p->slot].none = true;
            break;
        case MT_ARG_DTYPE:
            a->dtype = -1;
            break;
        case MT_ARG_DEVICE:
            a->has_device = false;
            break;
        case MT_ARG_STR:
            a->str[p->slot] = NULL;
            break;
        case MT_ARG_GENERATOR:
            a->gen = NULL;
            break;
        default:
            break; /* a Scalar slot stays "None" */
        }
        return 0;
    }
    const bool number_ok = p->type == MT_ARG_TENSOR_OR_SCALAR ||
                           (p->type == MT_ARG_TENSOR && numbers_as_tensors(op));
    switch (p->type) {
    case MT_ARG_TENSOR_OR_SCALAR:
    case MT_ARG_TENSOR: {
        if (!number_ok || mt_py_is_tensor(o)) {
            if (!mt_py_is_tensor(o)) {
                arg_error(op, p, pos, o, "Tensor");
                return -1;
            }
            a->t[p->slot] = mt_py_unwrap(o);
            return 0;
        }
        if (PyComplex_Check(o)) {
            if (mt_py_complex_number(o, &a->t[p->slot]) < 0) {
                return -1;
            }
            *owned |= 1u << p->slot;
            return 0;
        }
        mt_scalar s;
        r = mt_py_to_scalar(o, &s);
        if (r == -1) {
            arg_error(op, p, pos, o, "Tensor");
            return -1;
        }
        if (r < 0) {
            return -1;
        }
        /* an int from 2^63 on binds as a uint64 number, settled once every tensor is bound
         * (settle_numbers) */
        mt_status st = mt_tensor_scalar(s, s.type, &a->t[p->slot]);
        if (st) {
            mt_py_raise(st);
            return -1;
        }
        *owned |= 1u << p->slot;
        return 0;
    }
    case MT_ARG_SCALAR:
        if (mt_py_is_tensor(o) && mt_py_unwrap(o)->ndim == 0) {
            mt_status st = mt_tensor_item(mt_py_unwrap(o), &a->s[p->slot]);
            if (st) {
                mt_py_raise(st);
                return -1;
            }
            return 0;
        }
        if (PyComplex_Check(o) && (mt_op_flags[op] & (COMPLEX | COMPLEX_SCALARS))) {
            /* elsewhere a TypeError rather than lose the imaginary part (see COMPLEX_SCALARS) */
            Py_complex c = PyComplex_AsCComplex(o);
            a->s[p->slot] = mt_scalar_complex(c.real, c.imag);
            return 0;
        }
        r = mt_py_to_scalar(o, &a->s[p->slot]);
        if (r == -1) {
            arg_error(op, p, pos, o, "Number");
        }
        return r < 0 ? -1 : 0;
    case MT_ARG_INT:
        r = to_int(o, &a->i[p->slot]);
        if (r == -1) {
            arg_error(op, p, pos, o, "int");
        }
        a->i_none &= ~(1u << p->slot);
        return r < 0 ? -1 : 0;
    case MT_ARG_INTLIST:
    case MT_ARG_INTLIST1:
        a->l[p->slot].none = false;
        r = to_intlist(o, &a->l[p->slot], p->type == MT_ARG_INTLIST1, p->any_length);
        if (r == -1) {
            arg_error(op, p, pos, o, "tuple of ints");
        }
        return r < 0 ? -1 : 0;
    case MT_ARG_BOOL:
        if (!PyBool_Check(o)) {
            arg_error(op, p, pos, o, "bool");
            return -1;
        }
        a->b[p->slot] = o == Py_True;
        return 0;
    case MT_ARG_DTYPE: {
        mt_dtype dt;
        if (mt_py_to_dtype(o, &dt) < 0) {
            PyErr_Clear();
            arg_error(op, p, pos, o, "minitorch.dtype");
            return -1;
        }
        a->dtype = (int)dt;
        return 0;
    }
    case MT_ARG_DEVICE:
        if (mt_py_to_device(o, &a->device) < 0) {
            return -1;
        }
        a->has_device = true;
        return 0;
    case MT_ARG_TENSORLIST:
    case MT_ARG_TENSORLIST_OPT:
        return to_tensorlist(op, p, pos, o, a);
    case MT_ARG_FLOAT:
        if (mt_py_is_tensor(o) && mt_py_unwrap(o)->ndim == 0) {
            mt_scalar v;
            mt_status st = mt_tensor_item(mt_py_unwrap(o), &v);
            if (st) {
                mt_py_raise(st);
                return -1;
            }
            a->f[p->slot] = mt_scalar_to_double(v);
            return 0;
        }
        if (!PyFloat_Check(o) && !PyLong_Check(o)) {
            arg_error(op, p, pos, o, "float");
            return -1;
        }
        a->f[p->slot] = PyFloat_AsDouble(o);
        return a->f[p->slot] == -1.0 && PyErr_Occurred() ? -1 : 0;
    case MT_ARG_GENERATOR:
        if (mt_py_to_generator(o, &a->gen) < 0) {
            arg_error(op, p, pos, o, "Generator");
            return -1;
        }
        return 0; /* the object outlives the call, and holds the generator */
    case MT_ARG_OUT:
        return 0; /* python/out.c's */
    case MT_ARG_STR:
        if (!PyUnicode_Check(o)) {
            arg_error(op, p, pos, o, "str");
            return -1;
        }
        a->str[p->slot] = PyUnicode_AsUTF8(o); /* lives as long as o, which outlives the call */
        return a->str[p->slot] ? 0 : -1;
    }
    return 0;
}

/* PyTorch's message for the required parameters from index `from` on that the call left out. */
static int
missing_args(const mt_py_schema *s, PyObject **vals, int from)
{
    PyObject *names = PyList_New(0);
    int n = 0;
    for (int j = from; names && j < s->nparams; j++) {
        PyObject *q = vals[j] || s->params[j].has_default
                          ? NULL
                          : PyUnicode_FromFormat("\"%U\"", s->params[j].name);
        if (q && PyList_Append(names, q) < 0) {
            Py_CLEAR(names);
        }
        Py_XDECREF(q);
        n += q != NULL;
    }
    PyObject *sep = names ? PyUnicode_FromString(", ") : NULL;
    PyObject *joined = sep ? PyUnicode_Join(sep, names) : NULL;
    if (joined) {
        /* (PyTorch's plural is the other way round: "1 required positional arguments") */
        PyErr_Format(PyExc_TypeError, "%s() missing %d required positional argument%s: %U", s->name,
                     n, n == 1 ? "s" : "", joined);
    }
    Py_XDECREF(joined);
    Py_XDECREF(sep);
    Py_XDECREF(names);
    return -1;
}

/* The parameter a keyword names, by its name (numpy = false) or by a NumPy spelling; -1 if
 * none. A method's self is no keyword, nor is a method's out (Tensor methods take no out=). */
static int
find_param(const mt_py_schema *s, PyObject *key, bool method, bool numpy)
{
    for (int j = method ? 1 : 0; j < s->nparams; j++) {
        const mt_py_param *p = &s->params[j];
        if (method && p->type == MT_ARG_OUT) {
            continue;
        }
        for (int k = 0; k < (numpy ? 3 : 1); k++) {
            PyObject *name = numpy ? p->numpy_names[k] : p->name;
            if (name && (name == key || PyUnicode_Compare(name, key) == 0)) {
                return j;
            }
        }
    }
    return -1;
}

/* Matches the call's arguments to the schema's parameters: vals[k] is param k's object, and
 * bit k of *keywords says it came as a keyword. A keyword's NumPy spelling binds only where the
 * parameter got no value otherwise, as in PyTorch (sum(x, dim=0, axis=1) is refused). */
static int
bind(mt_op op, const mt_py_schema *s, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
     PyObject *kwnames, PyObject **vals, PyObject **varargs, unsigned *keywords)
{
    const char *name = s->name;
    PyObject *const *kwvals = args + nargs;
    int first = 0;
    (void)op;
    if (self) {
        vals[first++] = self;
    }
    /* Like PyTorch: a single int[] parameter also takes its ints spread out: x.view(2, 3). */
    int npos = s->npositional - first;
    if (npos == 1 && s->params[first].type == MT_ARG_INTLIST && nargs >= 1 &&
        (nargs > 1 || (!PyTuple_Check(args[0]) && !PyList_Check(args[0])))) {
        PyObject *tuple = PyTuple_New(nargs);
        if (tuple == NULL) {
            return -1;
        }
        for (Py_ssize_t k = 0; k < nargs; k++) {
            Py_INCREF(args[k]);
            PyTuple_SET_ITEM(tuple, k, args[k]);
        }
        *varargs = tuple;
        vals[first] = tuple;
        nargs = 0;
        first++;
    }
    if (nargs > s->npositional - first) {
        /* PyTorch's counts leave a method's self out */
        int max = s->npositional - (self != NULL), min = 0;
        Py_ssize_t given = nargs + first - (self != NULL);
        for (int j = self != NULL; j < s->nparams; j++) {
            min += !s->params[j].has_default;
        }
        if (min != max) {
            PyErr_Format(PyExc_TypeError,
                         "%s() takes from %d to %d positional arguments but %zd were given", name,
                         min, max, given);
        } else {
            PyErr_Format(PyExc_TypeError, "%s() takes %d positional argument%s but %zd %s given",
                         name, max, max == 1 ? "" : "s", given, given == 1 ? "was" : "were");
        }
        return -1;
    }
    for (Py_ssize_t k = 0; k < nargs; k++) {
        vals[first + k] = args[k];
    }
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (int numpy = 0; numpy < 2; numpy++) {
        for (Py_ssize_t k = 0; k < nkw; k++) {
            PyObject *key = PyTuple_GET_ITEM(kwnames, k);
            int by_name = find_param(s, key, self != NULL, false);
            int found = numpy ? (by_name >= 0 ? -1 : find_param(s, key, self != NULL, true))
                              : by_name;
            if (found < 0) {
                int option = numpy && by_name < 0 && s->factory
                                 ? mt_py_factory_option(name, key, kwvals[k])
                                 : 0;
                if (option < 0) {
                    return -1;
                }
                if (numpy && by_name < 0 && !option) {
                    PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'",
                                 name, key);
                    return -1;
                }
                continue;
            }
            if (vals[found]) {
                PyErr_Format(PyExc_TypeError,
                             numpy ? "%s() got an unexpected keyword argument '%U'"
                                   : "%s() got multiple values for argument '%U'",
                             name, key);
                return -1;
            }
            vals[found] = kwvals[k];
            *keywords |= 1u << found;
        }
    }
    for (int j = 0; j < s->nparams; j++) {
        if (vals[j] == NULL && !s->params[j].has_default) {
            return missing_args(s, vals, j);
        }
    }
    return 0;
}

/* Which of clamp's two overloads (as PyTorch's) a bound fits: bit 0 the Tensor form (None or a
 * tensor), bit 1 the Number form (None, a number, or a 0-dim tensor that needs no grad, as
 * PyTorch's parser takes a tensor for a Number). */
static unsigned
bound_fits(PyObject *o)
{
    if (o == NULL || o == Py_None) {
        return 3u;
    }
    if (mt_py_is_tensor(o)) {
        const mt_tensor *t = mt_py_unwrap(o);
        return 1u | (t->ndim == 0 && !mt_tensor_requires_grad(t) ? 2u : 0u);
    }
    return PyNumber_Check(o) ? 2u : 0u;
}

/* Our clamp and clip take Tensor|Scalar for each bound in one schema; a call whose bounds fit
 * neither of PyTorch's overloads (a tensor with dims beside a number) is refused, as there. */
static bool
mixed_bounds(mt_op op, PyObject *const *vals)
{
    if (op != MT_OP_clamp && op != MT_OP_clamp_ && op != MT_OP_clip && op != MT_OP_clip_) {
        return false;
    }
    return (bound_fits(vals[1]) & bound_fits(vals[2])) == 0;
}

/* PyTorch's TypeError for such a call: the types it got (keywords in the reverse of their order,
 * as its parser prints them) and the two overloads (a method's without input and out=). */
static int
mixed_bounds_error(mt_op op, const mt_py_schema *s, PyObject *self, PyObject *const *args,
                   Py_ssize_t nargs, PyObject *kwnames)
{
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject *parts = PyList_New(0);
    for (Py_ssize_t k = 0; parts && k < nargs + nkw; k++) {
        PyObject *part = NULL;
        if (k < nargs) {
            part = PyUnicode_FromFormat("%s%s", k ? ", " : "", Py_TYPE(args[k])->tp_name);
        } else {
            Py_ssize_t kw = nargs + nkw - 1 - (k - nargs);
            part = PyUnicode_FromFormat(nargs ? ", %U=%s" : "%U=%s, ",
                                        PyTuple_GET_ITEM(kwnames, kw - nargs),
                                        Py_TYPE(args[kw])->tp_name);
        }
        if (part == NULL || PyList_Append(parts, part) < 0) {
            Py_CLEAR(parts);
        }
        Py_XDECREF(part);
    }
    PyObject *empty = parts ? PyUnicode_FromString("") : NULL;
    PyObject *got = empty ? PyUnicode_Join(empty, parts) : NULL;
    if (got) {
        const char *input = self ? "" : "Tensor input, ";
        const char *out = self || (mt_op_flags[op] & INPLACE) ? "" : ", *, Tensor out = None";
        PyErr_Format(PyExc_TypeError,
                     "%s() received an invalid combination of arguments - got (%U), but expected "
                     "one of:\n * (%sTensor min = None, Tensor max = None%s)\n * (%sNumber min = "
                     "None, Number max = None%s)\n",
                     s->name, got, input, out, input, out);
    }
    Py_XDECREF(got);
    Py_XDECREF(empty);
    Py_XDECREF(parts);
    return -1;
}

/* The call's result: out's objects where out= was given, else the kernel's outputs. */
/* Whether a call cast complex values to a real dtype (to, _to_copy, copy_ into a real tensor):
 * PyTorch warns that the imaginary parts are dropped (not for bool, which reads both parts). */
static bool
drops_imaginary(mt_op op, const mt_args *a)
{
    if (op != MT_OP_to && op != MT_OP__to_copy && op != MT_OP_copy_) {
        return false;
    }
    const mt_tensor *src = op == MT_OP_copy_ ? a->t[1] : a->t[0];
    const mt_tensor *dst = op == MT_OP_copy_ ? a->t[0] : a->out[0];
    return src && dst && mt_dtype_is_complex(src->dtype) && !mt_dtype_is_complex(dst->dtype) &&
           dst->dtype != MT_BOOL;
}

/* var and std (and their _mean forms) leaving no degrees of freedom: each result reduces n
 * elements (input numel over output numel) and the correction is n or more, so PyTorch warns
 * (the result is inf or NaN). */
static bool
no_degrees_of_freedom(mt_op op, const mt_args *a)
{
    if (op != MT_OP_var && op != MT_OP_std && op != MT_OP_var_mean && op != MT_OP_std_mean) {
        return false;
    }
    if (a->t[0] == NULL || a->out[0] == NULL) {
        return false;
    }
    int64_t out = mt_tensor_numel(a->out[0]);
    double n = (double)(mt_tensor_numel(a->t[0]) / (out > 1 ? out : 1));
    double correction = mt_scalar_is_none(a->s[0]) ? (a->b[0] ? 1.0 : 0.0)
                                                   : mt_scalar_to_double(a->s[0]);
    return n - correction <= 0;
}

/* The warnings PyTorch gives about a call that ran: -1 where a filter turned one into an error. */
static int
warn_after(mt_op op, const mt_args *a)
{
    if (drops_imaginary(op, a) &&
        PyErr_WarnEx(PyExc_UserWarning,
                     "Casting complex values to real discards the imaginary part", 1) < 0) {
        return -1;
    }
    if (no_degrees_of_freedom(op, a)) {
        return PyErr_WarnFormat(PyExc_UserWarning, 1,
                                "%s(): degrees of freedom is <= 0. Correction should be strictly "
                                "less than the reduction factor (input numel divided by output "
                                "numel).",
                                mt_op_names[op]);
    }
    return 0;
}

static PyObject *
results(mt_op op, mt_args *a, PyObject *out_obj)
{
    PyObject *res;
    int nout = mt_op_nout[op];
    if (nout == 0) {
        return Py_NewRef(Py_None);
    }
    if (nout == 1) {
        return out_obj ? Py_NewRef(out_obj) : mt_py_wrap(a->out[0]);
    }
    if (nout == LIST) {
        return wrap_tensorlist(a);
    }
    res = mt_py_return_types[op] ? PyStructSequence_New(mt_py_return_types[op]) : PyTuple_New(nout);
    for (int k = 0; k < nout; k++) {
        /* an output the kernel left undefined (a gradient not asked for) is None, as PyTorch's */
        PyObject *o = out_obj     ? Py_NewRef(PySequence_Fast_GET_ITEM(out_obj, k))
                      : a->out[k] ? mt_py_wrap(a->out[k])
                                  : Py_NewRef(Py_None);
        if (res && o) {
            PyTuple_SET_ITEM(res, k, o); /* also a structseq's item */
        } else {
            Py_XDECREF(o);
            Py_CLEAR(res);
        }
    }
    return res;
}

/* How PyTorch's overload of an op takes a Python number in a value slot: as an operand (its
 * bits beside integers), or as a Scalar converted checked ("value cannot be converted to type
 * int64_t without overflow"), into self's dtype (the fills) or into the promoted one. */
enum { OPERAND, INTO_SELF, INTO_PROMOTED };

static int
number_kind(mt_op op, int slot)
{
    switch (op) {
    case MT_OP_where:
        return INTO_PROMOTED;
    case MT_OP_clamp:
    case MT_OP_clamp_:
        return slot > 0 ? INTO_PROMOTED : OPERAND;
    case MT_OP_fill_:
    case MT_OP_masked_fill:
    case MT_OP_masked_fill_:
    case MT_OP_index_fill:
    case MT_OP_index_fill_:
    case MT_OP_scatter:
    case MT_OP_scatter_:
        return slot > 0 ? INTO_SELF : OPERAND;
    default:
        return OPERAND;
    }
}

int
mt_py_settle_number(mt_op op, int slot, const mt_args *a, mt_scalar *s, int beside, bool numbers)
{
    const int kind = number_kind(op, slot);
    if (kind == INTO_SELF && a && a->t[0]) {
        beside = a->t[0]->dtype;
        numbers = false;
    }
    const bool u64 = s->type == MT_UINT64;
    const bool integral = beside >= 0 && mt_dtype_is_integral((mt_dtype)beside, true);
    const bool shell = beside >= 0 && mt_dtype_is_shell((mt_dtype)beside);
    /* the shell dtypes' rule refuses the op first (dispatch/shell.c), but for these two */
    const bool checks_shell = op == MT_OP_where || op == MT_OP_fill_;
    /* where converts a number into float16, bfloat16 or float8 unchecked (as setitem does), and
     * so does fill_ into one element on the CPU (PyTorch's scalar_fill, ops/arg_checks.c) */
    const bool small_float = beside >= 0 && mt_dtype_is_float((mt_dtype)beside) &&
                             mt_dtype_is_small((mt_dtype)beside);
    const bool one_element = op == MT_OP_fill_ && a && a->t[0] && mt_tensor_numel(a->t[0]) == 1 &&
                             mt_tensor_device(a->t[0]).type == MT_CPU;
    const bool unchecked = small_float && (op == MT_OP_where || one_element);
    mt_status st = MT_OK;
    if (u64 && (op == MT_OP_pow || op == MT_OP_pow_) && slot == 1 && integral) {
        st = mt_check_scalar_fits(*s, MT_INT64); /* PyTorch reads the exponent as an int64 */
    } else if (u64 && kind == INTO_PROMOTED && beside == MT_BOOL) {
        st = mt_promote_check(MT_BOOL, MT_UINT64);
    } else if (kind != OPERAND && beside >= 0 && !numbers && (!shell || checks_shell) &&
               !unchecked) {
        st = mt_check_scalar_fits(*s, (mt_dtype)beside);
    } else if (u64 && integral && numbers) {
        st = mt_promote_check(MT_UINT64, (mt_dtype)beside);
    } else if (u64 && kind == OPERAND && beside == MT_BOOL && op != MT_OP_sub && op != MT_OP_sub_) {
        st = mt_promote_check(MT_BOOL, MT_UINT64); /* sub's front end refuses a bool first */
    }
    if (st) {
        mt_py_raise(st);
        return -1;
    }
    if (u64 && (!integral || (a && mt_ew_integers_to_float(op, a)))) {
        *s = mt_scalar_float(mt_scalar_to_double(*s));
    } else if (u64 && beside == MT_BOOL) { /* a bool's fill or sub (which refuses it) */
        *s = mt_scalar_int((int64_t)s->v.u);
    } else if ((u64 || kind != OPERAND) && integral && beside != MT_BOOL && beside != MT_UINT64) {
        /* the number as the integer dtype it meets holds it, as PyTorch casts it there: 2**63 + 5
         * is 5 beside uint8, clamp(uint8, min=-1) clamps at 255 */
        union {
            char c[16];
            int64_t aligned;
        } bits;
        mt_store_scalar(bits.c, (mt_dtype)beside, *s);
        *s = mt_load_scalar(bits.c, (mt_dtype)beside);
    }
    return 0;
}

/* The real Python numbers bound as wrapped numbers, each settled by mt_py_settle_number beside
 * the call's other tensors (where's condition takes no part in promotion): an int from 2^63 on
 * (bound as a uint64 number) beside them, a number PyTorch's overload converts checked beside
 * them and itself (the dtype they promote to, which a float number may make a float). */
static int
settle_numbers(mt_op op, mt_args *a, unsigned owned)
{
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        mt_tensor *t = a->t[k];
        if (!(owned >> k & 1u) || !t->is_wrapped_number || mt_dtype_is_complex(t->dtype)) {
            continue;
        }
        const bool u64 = t->dtype == MT_UINT64;
        if (!u64 && number_kind(op, k) == OPERAND) {
            continue;
        }
        mt_promotion p;
        mt_promotion_init(&p);
        bool any = false, numbers = true;
        for (int j = 0; j < MT_MAX_TENSOR_ARGS; j++) {
            const mt_tensor *o = a->t[j];
            if (j != k && o && !(op == MT_OP_where && j == 0)) {
                mt_promotion_add(&p, o->dtype, o->ndim, o->is_wrapped_number);
                any = true;
                numbers = numbers && o->is_wrapped_number;
            }
        }
        if (!u64) {
            mt_promotion_add(&p, t->dtype, 0, true);
        }
        mt_scalar s;
        mt_tensor *n = NULL;
        mt_status st = mt_tensor_item(t, &s);
        if (st) {
            mt_py_raise(st);
            return -1;
        }
        if (mt_py_settle_number(op, k, a, &s, any ? (int)mt_promotion_result(&p) : -1,
                                any && numbers) < 0) {
            return -1;
        }
        if ((st = mt_tensor_scalar(s, s.type, &n)) != MT_OK) {
            mt_py_raise(st);
            return -1;
        }
        mt_tensor_release(t);
        a->t[k] = n;
    }
    return 0;
}

PyObject *
mt_py_call_op(mt_op op, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    const mt_py_schema *s = &mt_py_arg_schemas[op];
    PyObject *vals[MT_MAX_PARAMS] = {NULL}, *varargs = NULL, *res = NULL, *out_obj = NULL;
    mt_py_outs outs;
    unsigned owned = 0, keywords = 0;
    /* a Tensor subclass, a tensor-like object or a mode takes the call (torch_function.c) */
    if (mt_py_tf_wanted(self, args, nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0))) {
        return mt_py_tf_call(s->name, self ? MT_TF_METHOD : MT_TF_FUNCTION, self, args, nargs,
                             kwnames);
    }
    mt_args a;
    mt_args_init(&a);
    if (bind(op, s, self, args, nargs, kwnames, vals, &varargs, &keywords) < 0) {
        goto out;
    }
    if (mixed_bounds(op, vals)) {
        mixed_bounds_error(op, s, self, args, nargs, kwnames);
        goto out;
    }
    for (int j = 0; j < s->nparams; j++) {
        PyObject *o = vals[j] ? vals[j] : s->params[j].dflt;
        int pos = keywords >> j & 1u ? -1 : j - (self != NULL);
        if (convert(op, &s->params[j], pos, o, &a, &owned) < 0) {
            goto out;
        }
    }
    if (settle_numbers(op, &a, owned) < 0) {
        goto out;
    }
    if (s->out >= 0 && vals[s->out] && vals[s->out] != Py_None) {
        out_obj = vals[s->out];
        if (mt_py_out_begin(op, s->name, s->out, out_obj, s->factory, &a, &outs) < 0) {
            goto out;
        }
    }
    if (s->factory && !a.has_device && mt_py_default_device(&a.device)) {
        a.has_device = true; /* set_default_device, `with minitorch.device(...)` */
    }
    /* a call with out= is not autocast, as PyTorch registers no out= overload with autocast */
    unsigned autocast = mt_autocast_on;
    mt_autocast_on = out_obj ? 0u : autocast;
    mt_status st = mt_py_dispatch(op, &a);
    mt_autocast_on = autocast;
    if (st) {
        mt_py_raise(st);
        goto out;
    }
    if (warn_after(op, &a) < 0) {
        /* a warning filter made it an error: the results are dropped, as an error drops them */
        for (int k = 0; k < MT_MAX_OUTPUTS; k++) {
            mt_tensor_clear(&a.out[k]);
        }
        goto out;
    }
    if (out_obj && mt_py_out_finish(op, s->name, &a, &outs) < 0) {
        goto out;
    }
    res = results(op, &a, out_obj);
out:
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        if (owned >> k & 1u) {
            mt_tensor_release(a.t[k]);
        }
    }
    if (out_obj) {
        for (int k = 0; k < MT_MAX_OUTPUTS; k++) {
            mt_tensor_clear(&a.out[k]);
        }
    }
    release_tensorlists(&a);
    release_long_lists(&a);
    mt_args_clear_outl(&a); /* set only if the result could not be made */
    Py_XDECREF(varargs);
    return res;
}

/* One C function per op for the method and function tables (PyMethodDef has no closure). */
#define MT_OP(name, cpu, cuda, composite, nout, flags, shell, schema)                       \
    static PyObject *py_m_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs,   \
                                 PyObject *kwnames)                                         \
    {                                                                                       \
        return mt_py_call_op(MT_OP_##name, self, args, nargs, kwnames);                     \
    }                                                                                       \
    static PyObject *py_f_##name(PyObject *module, PyObject *const *args, Py_ssize_t nargs, \
                                 PyObject *kwnames)                                         \
    {                                                                                       \
        (void)module;                                                                       \
        return mt_py_call_op(MT_OP_##name, NULL, args, nargs, kwnames);                     \
    }
#include "dispatch/ops.def"
#undef MT_OP

/* Methods exist for METHOD ops; the rest get a NULL-named entry skipped at registration. */
PyMethodDef mt_py_tensor_op_methods[] = {
#define MT_OP(name, cpu, cuda, composite, nout, flags, shell, schema)           \
    {((flags) & METHOD) ? #name : "", (PyCFunction)(void (*)(void))py_m_##name, \
     METH_FASTCALL | METH_KEYWORDS, schema},
#include "dispatch/ops.def"
#undef MT_OP
    {NULL, NULL, 0, NULL},
};

/* Every op is a function of _C (minitorch/ re-exports the FUNCTION ones). */
PyMethodDef mt_py_op_functions[] = {
#define MT_OP(name, cpu, cuda, composite, nout, flags, shell, schema) \
    {#name, (PyCFunction)(void (*)(void))py_f_##name, METH_FASTCALL | METH_KEYWORDS, schema},
#include "dispatch/ops.def"
#undef MT_OP
    {NULL, NULL, 0, NULL},
};
