/* Python calls of ops: each op's schema string (ops.def) is parsed once at import, and a call's
 * positional and keyword arguments are matched to it and converted into the boxed mt_args.
 *
 * As PyTorch's python_arg_parser: a function's `self` is called `input`; a keyword may also use
 * the NumPy name of its parameter (axis for dim, keepdims for keepdim, x/a/x1 for input, x2 for
 * other); `*, Tensor(a!)? out=None` takes out= (python/out.c writes the result there); a factory
 * called without device= makes its tensor on the default device (python/defaults.c). Error
 * messages are PyTorch's ("add(): argument 'other' (position 2) must be Tensor, not str"). */
#include <stdio.h>
#include <string.h>

#include "dispatch/autocast.h"
#include "python/pyminitorch.h"

typedef enum argtype {
    A_TENSOR,
    A_TENSOR_OR_SCALAR,
    A_SCALAR,
    A_INT,
    A_INTLIST,
    A_INTLIST1,
    A_BOOL,
    A_DTYPE,
    A_DEVICE,
    A_TENSORLIST,
    A_STR, /* borrowed for the call: rounding_mode, approximate */
    A_TENSORLIST_OPT, /* Tensor?[]: None entries allowed */
    A_FLOAT,
    A_GENERATOR, /* borrowed for the call */
    A_OUT, /* Tensor(a!) out: not a slot; python/out.c writes the results into it */
} argtype;

#define MAX_PARAMS 16 /* _fused_adam_: six lists, five floats, two bools */

typedef struct param {
    argtype type;
    bool optional; /* "Type?": accepts None */
    bool kwonly;
    bool has_default;
    PyObject *dflt; /* the default as a Python object (owned), or NULL */
    PyObject *name; /* interned str: its Python name (a function's self is input) */
    PyObject *numpy_names[3]; /* interned: the NumPy spellings PyTorch also accepts (or another
                               * overload's name for it: overload_names), or NULL */
    int slot;       /* index within its slot array of mt_args */
    bool any_length; /* int[*]: a list that is not a shape (split sizes), of any length */
} param;

typedef struct schema {
    int nparams;
    int npositional;
    int out;     /* the index of the out= parameter, or -1 */
    int device;  /* the index of a Device parameter, or -1 */
    bool factory; /* a Device parameter and no tensor: the default device applies */
    char name[48]; /* the Python name, in messages: max_dim's is max */
    param params[MAX_PARAMS];
} schema;

static schema schemas[MT_NUM_OPS];

/* int[1] is a list of ints that may also be given as one int (dim=0); a plain int[] takes a
 * lone int only as the spread-out form of a single-parameter call (x.view(6)). */
static const char *const type_names[] = {"Tensor", "Tensor|Scalar", "Scalar",    "int",
                                         "int[]",  "int[1]",        "bool",      "ScalarType",
                                         "Device", "Tensor[]",      "str",       "Tensor?[]",
                                         "float",  "Generator",     "Tensor(a!)"};

/* PyTorch's numpy_compatibility_arg_names: keywords that name a parameter NumPy's way. */
static const char *const numpy_names[][4] = {
    {"dim", "axis", NULL, NULL},
    {"keepdim", "keepdims", NULL, NULL},
    {"input", "x", "a", "x1"},
    {"other", "x2", NULL, NULL},
};

/* A parameter one of PyTorch's overloads names otherwise, where ours has one parameter for both
 * (a Tensor|Scalar): scatter.value's Scalar is scatter.src's Tensor here (op, name, other name). */
static const char *const overload_names[][3] = {
    {"scatter", "src", "value"},
    {"scatter_", "src", "value"},
};

/* Whether schema text opens with op's name and its parenthesis. */
static bool
schema_of(const char *text, const char *op)
{
    size_t n = strlen(op);
    return strncmp(text, op, n) == 0 && text[n] == '(';
}

static PyObject *
parse_default(const char *s)
{
    if (strcmp(s, "None") == 0) {
        Py_RETURN_NONE;
    }
    if (strcmp(s, "True") == 0) {
        Py_RETURN_TRUE;
    }
    if (strcmp(s, "False") == 0) {
        Py_RETURN_FALSE;
    }
    if (s[0] == '\'') {
        return PyUnicode_FromStringAndSize(s + 1, (Py_ssize_t)strlen(s) - 2); /* 'none' */
    }
    if (strpbrk(s, ".eE")) { /* 0.5, 1e-05 */
        return PyFloat_FromDouble(atof(s));
    }
    return PyLong_FromLongLong(atoll(s));
}

#define CAPACITY(arr) ((int)(sizeof(((mt_args *)0)->arr) / sizeof(((mt_args *)0)->arr[0])))

/* How many arguments of each slot class mt_args holds, by argtype (the schemas' counts are
 * checked at import, and by tools/gen_ops_api.py at build time); dtype and device hold one
 * each, Tensor[] tl and the lists after it (tls), Generator gen. */
static const int slot_capacity[] = {
    [A_TENSOR] = CAPACITY(t), [A_SCALAR] = CAPACITY(s),
    [A_INT] = CAPACITY(i),    [A_INTLIST] = CAPACITY(l),
    [A_BOOL] = CAPACITY(b),   [A_STR] = CAPACITY(str),
    [A_FLOAT] = CAPACITY(f),  [A_DTYPE] = 1,
    [A_DEVICE] = 1,           [A_TENSORLIST] = 1 + CAPACITY(tls),
    [A_GENERATOR] = 1,
};

/* One parameter: "Tensor? bias=None". */
static int
parse_param(const char *op, char *text, param *p, int *slots)
{
    char type[32], name[64];
    char *eq = strchr(text, '=');
    if (eq) {
        *eq = '\0';
    }
    if (sscanf(text, " %31s %63s", type, name) != 2) {
        PyErr_Format(PyExc_SystemError, "bad schema parameter '%s' of %s", text, op);
        return -1;
    }
    size_t tl = strlen(type);
    p->optional = type[tl - 1] == '?';
    if (p->optional) {
        type[tl - 1] = '\0';
    }
    if (strcmp(type, "int[*]") == 0) {
        p->any_length = true;
        snprintf(type, sizeof(type), "int[]");
    }
    int t = -1;
    for (int k = 0; k < (int)(sizeof(type_names) / sizeof(type_names[0])); k++) {
        if (strcmp(type, type_names[k]) == 0) {
            t = k;
        }
    }
    if (t < 0) {
        PyErr_Format(PyExc_SystemError, "unknown schema type '%s' in %s", type, op);
        return -1;
    }
    p->type = (argtype)t;
    p->has_default = eq != NULL;
    p->dflt = eq ? parse_default(eq + 1) : NULL;
    /* PyTorch's Python signatures call a function's self input (a method binds it). */
    const char *pyname = strcmp(name, "self") == 0 ? "input" : name;
    p->name = PyUnicode_InternFromString(pyname);
    for (size_t k = 0; k < sizeof(numpy_names) / sizeof(numpy_names[0]); k++) {
        for (int j = 1; j < 4 && numpy_names[k][j] && strcmp(pyname, numpy_names[k][0]) == 0; j++) {
            if ((p->numpy_names[j - 1] = PyUnicode_InternFromString(numpy_names[k][j])) == NULL) {
                return -1;
            }
        }
    }
    for (size_t k = 0; k < sizeof(overload_names) / sizeof(overload_names[0]); k++) {
        if (schema_of(op, overload_names[k][0]) && strcmp(pyname, overload_names[k][1]) == 0 &&
            (p->numpy_names[0] = PyUnicode_InternFromString(overload_names[k][2])) == NULL) {
            return -1;
        }
    }
    if (p->name == NULL || (eq && p->dflt == NULL)) {
        return -1;
    }
    if (t == A_OUT) {
        p->slot = -1;
        return 0;
    }
    /* Tensor and Tensor|Scalar share the tensor slots, int[] and int[1] the list slots. */
    int cls = t == A_TENSOR_OR_SCALAR ? A_TENSOR
              : t == A_INTLIST1       ? A_INTLIST
              : t == A_TENSORLIST_OPT ? A_TENSORLIST
                                      : t;
    p->slot = slots[cls]++;
    if (p->slot >= slot_capacity[cls]) {
        PyErr_Format(PyExc_SystemError, "%s: more %s arguments than mt_args holds (%d)", op,
                     type_names[cls], slot_capacity[cls]);
        return -1;
    }
    return 0;
}

static int
parse_schema(const char *text, schema *s)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", text);
    char *arrow = strstr(buf, " -> "); /* the results, read by add_return_type */
    if (arrow) {
        *arrow = '\0';
    }
    char *open = strchr(buf, '('), *close = strrchr(buf, ')');
    if (!open || !close) {
        PyErr_Format(PyExc_SystemError, "bad schema '%s'", text);
        return -1;
    }
    *close = '\0';
    snprintf(s->name, sizeof(s->name), "%.*s", (int)(open - buf), buf);
    int slots[16] = {0}; /* indexed by argtype */
    bool kwonly = false, tensors = false;
    s->nparams = s->npositional = 0;
    s->out = s->device = -1;
    for (char *tok = strtok(open + 1, ","); tok; tok = strtok(NULL, ",")) {
        while (*tok == ' ') {
            tok++;
        }
        if (strcmp(tok, "*") == 0) {
            kwonly = true;
            continue;
        }
        if (s->nparams == MAX_PARAMS) {
            PyErr_Format(PyExc_SystemError, "%s: more than %d parameters, the most a schema holds",
                         text, MAX_PARAMS);
            return -1;
        }
        param *p = &s->params[s->nparams++];
        p->kwonly = kwonly;
        if (parse_param(text, tok, p, slots) < 0) {
            return -1;
        }
        s->npositional += !kwonly;
        if (p->type == A_OUT) {
            s->out = s->nparams - 1;
        } else if (p->type == A_DEVICE) {
            s->device = s->nparams - 1;
        }
        tensors |= p->type == A_TENSOR || p->type == A_TENSOR_OR_SCALAR ||
                   p->type == A_TENSORLIST || p->type == A_TENSORLIST_OPT;
    }
    s->factory = s->device >= 0 && !tensors;
    return 0;
}

/* Ops with several results return them as PyTorch's named tuples, torch.return_types.max(values=...,
 * indices=...): a structseq named after the schema's function (max_dim's schema says "max"),
 * whose fields the schema's results name ("-> (Tensor Q, Tensor R)"); two results the schema
 * leaves unnamed are (values, indices), and results declared without names ("-> (Tensor,
 * Tensor)", std_mean's) or more than two unnamed a plain tuple. */
static PyTypeObject *return_types[MT_NUM_OPS];
static char return_type_names[MT_NUM_OPS][64];
static char return_field_names[MT_NUM_OPS][MT_MAX_OUTPUTS][32];
static PyStructSequence_Field return_fields[MT_NUM_OPS][MT_MAX_OUTPUTS + 1];
static PyStructSequence_Desc return_descs[MT_NUM_OPS];

/* Fills return_fields[op] from the schema's results; returns whether they have names. */
static bool
return_field_list(int op)
{
    const char *arrow = strstr(mt_op_schemas[op], " -> ");
    if (arrow == NULL && mt_op_nout[op] != 2) {
        return false; /* _unique2's three */
    }
    if (arrow == NULL) {
        return_fields[op][0] = (PyStructSequence_Field){"values", NULL};
        return_fields[op][1] = (PyStructSequence_Field){"indices", NULL};
        return true;
    }
    const char *p = arrow + 4;
    for (int k = 0; k < mt_op_nout[op] && k < MT_MAX_OUTPUTS; k++) {
        p += strspn(p, "(, ");
        p += strcspn(p, " ,)"); /* the type */
        if (*p != ' ') {
            return false;
        }
        p++;
        int len = (int)strcspn(p, " ,)");
        snprintf(return_field_names[op][k], sizeof(return_field_names[op][k]), "%.*s", len, p);
        return_fields[op][k] = (PyStructSequence_Field){return_field_names[op][k], NULL};
        p += len;
    }
    return true;
}

/* PyTorch prints its named tuples one field a line, the values' own reprs unindented:
 * "torch.return_types.max(\nvalues=tensor([2., 4.]),\nindices=tensor([1, 1]))". */
static PyObject *
return_type_repr(PyObject *self)
{
    int op = 0;
    while (op < MT_NUM_OPS && return_types[op] != Py_TYPE(self)) {
        op++;
    }
    if (op == MT_NUM_OPS) {
        return PyTuple_Type.tp_repr(self); /* a subclass's own type: a plain tuple's repr */
    }
    PyObject *res = NULL;
    PyObject *lines = PyList_New(0);
    PyObject *head = PyUnicode_FromFormat("%s(", Py_TYPE(self)->tp_name);
    if (lines == NULL || head == NULL || PyList_Append(lines, head) < 0) {
        goto out;
    }
    for (int k = 0; k < mt_op_nout[op]; k++) {
        PyObject *value = PyTuple_GET_ITEM(self, k);
        PyObject *line = PyUnicode_FromFormat("%s=%R%s", return_fields[op][k].name, value,
                                              k + 1 < mt_op_nout[op] ? "," : ")");
        if (line == NULL) {
            goto out;
        }
        int failed = PyList_Append(lines, line);
        Py_DECREF(line);
        if (failed < 0) {
            goto out;
        }
    }
    PyObject *newline = PyUnicode_FromString("\n");
    if (newline != NULL) {
        res = PyUnicode_Join(newline, lines);
        Py_DECREF(newline);
    }
out:
    Py_XDECREF(head);
    Py_XDECREF(lines);
    return res;
}

static int
add_return_type(PyObject *types, int op)
{
    if (!return_field_list(op)) {
        return 0;
    }
    const char *text = mt_op_schemas[op];
    int len = (int)(strchr(text, '(') - text);
    snprintf(return_type_names[op], sizeof(return_type_names[op]), "minitorch.return_types.%.*s",
             len, text);
    return_descs[op] = (PyStructSequence_Desc){return_type_names[op], NULL, return_fields[op],
                                               mt_op_nout[op]};
    return_types[op] = PyStructSequence_NewType(&return_descs[op]);
    if (return_types[op] == NULL) {
        return -1;
    }
    return_types[op]->tp_repr = return_type_repr;
    PyType_Modified(return_types[op]);
    return PyDict_SetItemString(types, return_type_names[op] + strlen("minitorch.return_types."),
                                (PyObject *)return_types[op]);
}

int
mt_py_schema_param(mt_op op, const char *name, mt_py_argkind *kind, int *slot)
{
    /* The schema says self; the parsed parameter is called input, as Python sees it. */
    const char *pyname = strcmp(name, "self") == 0 ? "input" : name;
    const schema *s = &schemas[op];
    for (int k = 0; k < s->nparams; k++) {
        const param *p = &s->params[k];
        if (PyUnicode_CompareWithASCIIString(p->name, pyname) != 0) {
            continue;
        }
        *slot = p->slot;
        switch (p->type) {
        case A_TENSOR:
        case A_TENSOR_OR_SCALAR:
            *kind = MT_PY_ARG_TENSOR;
            return 0;
        case A_SCALAR:
            *kind = MT_PY_ARG_SCALAR;
            return 0;
        case A_INT:
            *kind = MT_PY_ARG_INT;
            return 0;
        case A_INTLIST:
        case A_INTLIST1:
            *kind = p->any_length ? MT_PY_ARG_OTHER : MT_PY_ARG_INTLIST;
            return 0;
        case A_BOOL:
            *kind = MT_PY_ARG_BOOL;
            return 0;
        case A_FLOAT:
            *kind = MT_PY_ARG_FLOAT;
            return 0;
        default:
            *kind = MT_PY_ARG_OTHER;
            return 0;
        }
    }
    return -1;
}

PyObject *
mt_py_schema_slots(PyObject *m, PyObject *text)
{
    (void)m;
    const char *utf8 = PyUnicode_AsUTF8(text);
    schema *s = utf8 ? PyMem_Calloc(1, sizeof(schema)) : NULL;
    if (s == NULL) {
        return utf8 ? PyErr_NoMemory() : NULL;
    }
    PyObject *res = NULL;
    if (parse_schema(utf8, s) == 0 && (res = PyList_New(s->nparams)) != NULL) {
        for (int k = 0; k < s->nparams; k++) {
            const param *p = &s->params[k];
            PyObject *item = Py_BuildValue("(Osi)", p->name, type_names[p->type], p->slot);
            if (item == NULL) {
                Py_CLEAR(res);
                break;
            }
            PyList_SET_ITEM(res, k, item);
        }
    }
    /* what parse_param made, up to where it stopped (calloc left the rest NULL) */
    for (int k = 0; k < s->nparams; k++) {
        param *p = &s->params[k];
        Py_XDECREF(p->dflt);
        Py_XDECREF(p->name);
        for (int j = 0; j < 3; j++) {
            Py_XDECREF(p->numpy_names[j]);
        }
    }
    PyMem_Free(s);
    return res;
}

int
mt_py_schemas_init(PyObject *m)
{
    PyObject *types = PyDict_New();
    if (types == NULL) {
        return -1;
    }
    for (int op = 0; op < MT_NUM_OPS; op++) {
        if (parse_schema(mt_op_schemas[op], &schemas[op]) < 0 ||
            (mt_op_nout[op] >= 2 && add_return_type(types, op) < 0)) {
            Py_DECREF(types);
            return -1;
        }
    }
    int r = PyModule_AddObjectRef(m, "_return_types", types);
    Py_DECREF(types);
    return r;
}

/* pos: the argument's position, or -1 for a keyword argument (PyTorch names no position). */
static PyObject *
arg_error(mt_op op, const param *p, int pos, PyObject *got, const char *want)
{
    if (pos < 0) {
        return PyErr_Format(PyExc_TypeError, "%s(): argument '%U' must be %s, not %s",
                            schemas[op].name, p->name, want, Py_TYPE(got)->tp_name);
    }
    return PyErr_Format(PyExc_TypeError, "%s(): argument '%U' (position %d) must be %s, not %s",
                        schemas[op].name, p->name, pos + 1, want, Py_TYPE(got)->tp_name);
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
to_tensorlist(mt_op op, const param *p, int pos, PyObject *o, mt_args *a)
{
    mt_tensor ***tl = p->slot == 0 ? &a->tl : &a->tls[p->slot - 1].t;
    int *ntl = p->slot == 0 ? &a->ntl : &a->tls[p->slot - 1].n;
    const bool allow_none = p->type == A_TENSORLIST_OPT;
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

/* Converts one argument into its slot. Returns 0, or -1 with an exception set. */
static int
convert(mt_op op, const param *p, int pos, PyObject *o, mt_args *a, unsigned *owned)
{
    int r;
    if (o == Py_None && p->optional) {
        switch (p->type) {
        case A_TENSOR:
        case A_TENSOR_OR_SCALAR:
            a->t[p->slot] = NULL;
            break;
        case A_INT:
            a->i_none |= 1u << p->slot;
            break;
        case A_INTLIST:
        case A_INTLIST1:
            a->l[p->slot].none = true;
            break;
        case A_DTYPE:
            a->dtype = -1;
            break;
        case A_DEVICE:
            a->has_device = false;
            break;
        case A_STR:
            a->str[p->slot] = NULL;
            break;
        case A_GENERATOR:
            a->gen = NULL;
            break;
        default:
            break; /* a Scalar slot stays "None" */
        }
        return 0;
    }
    switch (p->type) {
    case A_TENSOR_OR_SCALAR:
        if (PyComplex_Check(o)) {
            if (mt_py_complex_number(o, &a->t[p->slot]) < 0) {
                return -1;
            }
            *owned |= 1u << p->slot;
            return 0;
        }
        if (!mt_py_is_tensor(o)) {
            mt_scalar s;
            r = mt_py_to_scalar(o, &s);
            if (r == -1) {
                arg_error(op, p, pos, o, "Tensor");
                return -1;
            }
            if (r < 0) {
                return -1;
            }
            mt_status st = mt_tensor_scalar(s, s.type, &a->t[p->slot]);
            if (st) {
                mt_py_raise(st);
                return -1;
            }
            *owned |= 1u << p->slot;
            return 0;
        }
        /* fall through */
    case A_TENSOR:
        if (!mt_py_is_tensor(o)) {
            arg_error(op, p, pos, o, "Tensor");
            return -1;
        }
        a->t[p->slot] = mt_py_unwrap(o);
        return 0;
    case A_SCALAR:
        if (mt_py_is_tensor(o) && mt_py_unwrap(o)->ndim == 0) {
            mt_status st = mt_tensor_item(mt_py_unwrap(o), &a->s[p->slot]);
            if (st) {
                mt_py_raise(st);
                return -1;
            }
            return 0;
        }
        if (PyComplex_Check(o) && (mt_op_flags[op] & COMPLEX)) {
            /* only an op that takes complex tensors (full's fill_value) takes a complex number:
             * elsewhere it stays PyTorch's TypeError rather than lose its imaginary part */
            Py_complex c = PyComplex_AsCComplex(o);
            a->s[p->slot] = mt_scalar_complex(c.real, c.imag);
            return 0;
        }
        r = mt_py_to_scalar(o, &a->s[p->slot]);
        if (r == -1) {
            arg_error(op, p, pos, o, "Number");
        }
        return r < 0 ? -1 : 0;
    case A_INT:
        r = to_int(o, &a->i[p->slot]);
        if (r == -1) {
            arg_error(op, p, pos, o, "int");
        }
        a->i_none &= ~(1u << p->slot);
        return r < 0 ? -1 : 0;
    case A_INTLIST:
    case A_INTLIST1:
        a->l[p->slot].none = false;
        r = to_intlist(o, &a->l[p->slot], p->type == A_INTLIST1, p->any_length);
        if (r == -1) {
            arg_error(op, p, pos, o, "tuple of ints");
        }
        return r < 0 ? -1 : 0;
    case A_BOOL:
        if (!PyBool_Check(o)) {
            arg_error(op, p, pos, o, "bool");
            return -1;
        }
        a->b[p->slot] = o == Py_True;
        return 0;
    case A_DTYPE: {
        mt_dtype dt;
        if (mt_py_to_dtype(o, &dt) < 0) {
            PyErr_Clear();
            arg_error(op, p, pos, o, "minitorch.dtype");
            return -1;
        }
        a->dtype = (int)dt;
        return 0;
    }
    case A_DEVICE:
        if (mt_py_to_device(o, &a->device) < 0) {
            return -1;
        }
        a->has_device = true;
        return 0;
    case A_TENSORLIST:
    case A_TENSORLIST_OPT:
        return to_tensorlist(op, p, pos, o, a);
    case A_FLOAT:
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
    case A_GENERATOR:
        if (mt_py_to_generator(o, &a->gen) < 0) {
            arg_error(op, p, pos, o, "Generator");
            return -1;
        }
        return 0; /* the object outlives the call, and holds the generator */
    case A_OUT:
        return 0; /* python/out.c's */
    case A_STR:
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
missing_args(const schema *s, PyObject **vals, int from)
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
find_param(const schema *s, PyObject *key, bool method, bool numpy)
{
    for (int j = method ? 1 : 0; j < s->nparams; j++) {
        const param *p = &s->params[j];
        if (method && p->type == A_OUT) {
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
bind(mt_op op, const schema *s, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
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
    if (npos == 1 && s->params[first].type == A_INTLIST && nargs >= 1 &&
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
                if (numpy && by_name < 0) {
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

/* The call's result: out's objects where out= was given, else the kernel's outputs. */
/* Whether a call cast complex values to a real dtype (to, _to_copy, copy_ into a real tensor):
 * PyTorch warns that the imaginary parts are dropped. */
static bool
drops_imaginary(mt_op op, const mt_args *a)
{
    if (op != MT_OP_to && op != MT_OP__to_copy && op != MT_OP_copy_) {
        return false;
    }
    const mt_tensor *src = op == MT_OP_copy_ ? a->t[1] : a->t[0];
    const mt_tensor *dst = op == MT_OP_copy_ ? a->t[0] : a->out[0];
    return src && dst && mt_dtype_is_complex(src->dtype) && !mt_dtype_is_complex(dst->dtype);
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
    res = return_types[op] ? PyStructSequence_New(return_types[op]) : PyTuple_New(nout);
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

/* ---- a call's mt_args back to Python: the arguments of a Python kernel (python/library.c) ---- */

/* An int[] argument as a list, as PyTorch gives one to a Python kernel. */
static PyObject *
int_list(const mt_intlist *l)
{
    if (l->none) {
        return Py_NewRef(Py_None);
    }
    PyObject *size = mt_py_size_obj(l->n, mt_intlist_values(l));
    PyObject *res = size ? PySequence_List(size) : NULL;
    Py_XDECREF(size);
    return res;
}

/* A Tensor[] (or Tensor?[], with Nones) argument as a list. */
static PyObject *
tensor_list(mt_tensorlist l)
{
    PyObject *res = PyList_New(0);
    for (int k = 0; res && k < l.n; k++) {
        PyObject *o = l.t[k] ? mt_py_wrap(mt_tensor_retain(l.t[k])) : Py_NewRef(Py_None);
        if (o == NULL || PyList_Append(res, o) < 0) {
            Py_CLEAR(res);
        }
        Py_XDECREF(o);
    }
    return res;
}

/* A tensor argument: a wrapped Python number goes back as the number it was. */
static PyObject *
tensor_value(mt_tensor *t)
{
    if (t == NULL) {
        return Py_NewRef(Py_None);
    }
    if (t->is_wrapped_number && !mt_dtype_is_complex(t->dtype)) {
        mt_scalar v;
        mt_status st = mt_tensor_item(t, &v);
        return st ? mt_py_raise(st) : mt_py_from_scalar(v);
    }
    return mt_py_wrap(mt_tensor_retain(t));
}

/* Parameter p's value in a, as a new reference (NULL with an exception set). */
static PyObject *
param_value(const param *p, const mt_args *a)
{
    switch (p->type) {
    case A_TENSOR:
    case A_TENSOR_OR_SCALAR:
        return tensor_value(a->t[p->slot]);
    case A_SCALAR: /* unset: None, or the default a C caller (x + y) left out */
        if (a->s[p->slot].type == MT_NUM_DTYPES) {
            return Py_NewRef(p->dflt ? p->dflt : Py_None);
        }
        return mt_py_from_scalar(a->s[p->slot]);
    case A_INT:
        return (a->i_none >> p->slot & 1u) ? Py_NewRef(Py_None)
                                           : PyLong_FromLongLong(a->i[p->slot]);
    case A_INTLIST:
    case A_INTLIST1:
        return int_list(&a->l[p->slot]);
    case A_BOOL:
        return PyBool_FromLong(a->b[p->slot]);
    case A_DTYPE:
        return a->dtype < 0 ? Py_NewRef(Py_None) : Py_NewRef(mt_py_dtype_obj((mt_dtype)a->dtype));
    case A_DEVICE:
        return a->has_device ? mt_py_device_obj(a->device) : Py_NewRef(Py_None);
    case A_TENSORLIST:
    case A_TENSORLIST_OPT:
        return tensor_list(mt_args_tensorlist(a, p->slot));
    case A_STR:
        return a->str[p->slot] ? PyUnicode_FromString(a->str[p->slot]) : Py_NewRef(Py_None);
    case A_FLOAT:
        return PyFloat_FromDouble(a->f[p->slot]);
    case A_GENERATOR:
        return a->gen ? mt_py_generator_wrap(mt_generator_retain(a->gen)) : Py_NewRef(Py_None);
    default:
        return Py_NewRef(Py_None);
    }
}

/* Whether v is p's default value: PyTorch leaves such arguments out of a Python kernel's call
 * (the keyword-only ones, and the positional ones after the last given one). */
static bool
is_default(const param *p, PyObject *v)
{
    if (!p->has_default || p->dflt == NULL || mt_py_is_tensor(v)) {
        return false;
    }
    if (p->dflt == Py_None || v == Py_None) {
        return v == p->dflt;
    }
    int r = PyObject_RichCompareBool(v, p->dflt, Py_EQ);
    if (r < 0) {
        PyErr_Clear(); /* values that do not compare are not the default */
    }
    return r == 1;
}

PyObject *
mt_py_box_args(mt_op op, const mt_args *a, PyObject **kwargs)
{
    const schema *s = &schemas[op];
    PyObject *vals[MAX_PARAMS] = {NULL}, *args = NULL, *kw = NULL;
    int npos = 0, j;
    for (j = 0; j < s->nparams; j++) {
        const param *p = &s->params[j];
        if (p->type == A_OUT) {
            continue;
        }
        if ((vals[j] = param_value(p, a)) == NULL) {
            goto out;
        }
        npos = !p->kwonly && !is_default(p, vals[j]) ? j + 1 : npos;
    }
    if ((args = PyTuple_New(npos)) == NULL) {
        goto out;
    }
    for (j = 0; j < npos; j++) {
        PyTuple_SET_ITEM(args, j, vals[j]); /* the reference moves */
        vals[j] = NULL;
    }
    for (; j < s->nparams; j++) {
        const param *p = &s->params[j];
        if (vals[j] == NULL || !p->kwonly || is_default(p, vals[j])) {
            continue;
        }
        if ((kw == NULL && (kw = PyDict_New()) == NULL) ||
            PyDict_SetItem(kw, p->name, vals[j]) < 0) {
            Py_CLEAR(args);
            Py_CLEAR(kw);
            goto out;
        }
    }
    *kwargs = kw;
out:
    for (j = 0; j < s->nparams; j++) {
        Py_XDECREF(vals[j]);
    }
    return args;
}

static int
result_tensor(mt_op op, PyObject *o, mt_tensor **out)
{
    if (!mt_py_is_tensor(o)) {
        PyErr_Format(PyExc_TypeError, "%s: a Python kernel returned %s where a Tensor was expected",
                     mt_op_names[op], Py_TYPE(o)->tp_name);
        return -1;
    }
    *out = mt_tensor_retain(mt_py_unwrap(o));
    return 0;
}

int
mt_py_unbox_results(mt_op op, PyObject *res, mt_args *a)
{
    int nout = mt_op_nout[op];
    if (nout == 0) {
        return 0;
    }
    if (nout == 1) {
        return result_tensor(op, res, &a->out[0]);
    }
    PyObject *seq = PySequence_Fast(res, "a Python kernel must return a tuple of Tensors here");
    if (seq == NULL) {
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int r = 0;
    if (nout == LIST) {
        mt_status st = mt_args_alloc_outl(a, n);
        r = st ? (mt_py_raise(st), -1) : 0;
    } else if (n != nout) {
        PyErr_Format(PyExc_RuntimeError, "%s: a Python kernel returned %zd results, expected %d",
                     mt_op_names[op], n, nout);
        r = -1;
    }
    for (Py_ssize_t k = 0; r == 0 && k < n; k++) {
        PyObject *o = PySequence_Fast_GET_ITEM(seq, k);
        r = result_tensor(op, o, nout == LIST ? &a->outl[k] : &a->out[k]);
    }
    Py_DECREF(seq);
    if (r < 0) {
        for (int k = 0; k < MT_MAX_OUTPUTS; k++) {
            mt_tensor_clear(&a->out[k]);
        }
        mt_args_clear_outl(a);
    }
    return r;
}

PyObject *
mt_py_call_op(mt_op op, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    const schema *s = &schemas[op];
    PyObject *vals[MAX_PARAMS] = {NULL}, *varargs = NULL, *res = NULL, *out_obj = NULL;
    mt_tensor *outs[MT_MAX_OUTPUTS] = {NULL};
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
    for (int j = 0; j < s->nparams; j++) {
        PyObject *o = vals[j] ? vals[j] : s->params[j].dflt;
        int pos = keywords >> j & 1u ? -1 : j - (self != NULL);
        if (convert(op, &s->params[j], pos, o, &a, &owned) < 0) {
            goto out;
        }
    }
    if (s->out >= 0 && vals[s->out] && vals[s->out] != Py_None) {
        out_obj = vals[s->out];
        if (mt_py_out_begin(op, s->name, s->out, out_obj, s->factory, &a, outs) < 0) {
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
    if (out_obj && mt_py_out_finish(op, s->name, &a, outs) < 0) {
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
#define MT_OP(name, cpu, cuda, composite, nout, flags, schema)                              \
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
#define MT_OP(name, cpu, cuda, composite, nout, flags, schema)                  \
    {((flags) & METHOD) ? #name : "", (PyCFunction)(void (*)(void))py_m_##name, \
     METH_FASTCALL | METH_KEYWORDS, schema},
#include "dispatch/ops.def"
#undef MT_OP
    {NULL, NULL, 0, NULL},
};

/* Every op is a function of _C (minitorch/ re-exports the FUNCTION ones). */
PyMethodDef mt_py_op_functions[] = {
#define MT_OP(name, cpu, cuda, composite, nout, flags, schema) \
    {#name, (PyCFunction)(void (*)(void))py_f_##name, METH_FASTCALL | METH_KEYWORDS, schema},
#include "dispatch/ops.def"
#undef MT_OP
    {NULL, NULL, 0, NULL},
};
