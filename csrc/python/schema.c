/* The binding's schemas: each op's schema string (ops.def) parsed once at import into its
 * parameters (type, name, NumPy spellings, default, mt_args slot), and the named tuples
 * (minitorch.return_types.max ...) of the ops with several results. Matching a call's arguments
 * to them is python/args.c's. */
#include <stdio.h>
#include <string.h>

#include "python/args_schema.h"

mt_py_schema mt_py_arg_schemas[MT_NUM_OPS];

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

/* A parameter PyTorch's Python signature names otherwise than its schema (Tensor.copy_(other,
 * non_blocking=False) is hand-written there; the schema's source is src): Python's name is the
 * binding's, in its messages and keywords (op, schema's name, Python's name). */
static const char *const python_names[][3] = {
    {"copy_", "src", "other"},
};

/* The name Python knows a parameter of schema text by: self is input, as PyTorch's Python
 * signatures call it (a method binds it), and python_names. */
static const char *
python_name(const char *text, const char *name)
{
    if (strcmp(name, "self") == 0) {
        return "input";
    }
    for (size_t k = 0; k < sizeof(python_names) / sizeof(python_names[0]); k++) {
        if (schema_of(text, python_names[k][0]) && strcmp(name, python_names[k][1]) == 0) {
            return python_names[k][2];
        }
    }
    return name;
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

/* How many arguments of each slot class mt_args holds, by mt_py_argtype (the schemas' counts are
 * checked at import, and by tools/gen_ops_api.py at build time); dtype and device hold one
 * each, Tensor[] tl and the lists after it (tls), Generator gen. */
static const int slot_capacity[] = {
    [MT_ARG_TENSOR] = CAPACITY(t), [MT_ARG_SCALAR] = CAPACITY(s),
    [MT_ARG_INT] = CAPACITY(i),    [MT_ARG_INTLIST] = CAPACITY(l),
    [MT_ARG_BOOL] = CAPACITY(b),   [MT_ARG_STR] = CAPACITY(str),
    [MT_ARG_FLOAT] = CAPACITY(f),  [MT_ARG_DTYPE] = 1,
    [MT_ARG_DEVICE] = 1,           [MT_ARG_TENSORLIST] = 1 + CAPACITY(tls),
    [MT_ARG_GENERATOR] = 1,
};

/* One parameter: "Tensor? bias=None". */
static int
parse_param(const char *op, char *text, mt_py_param *p, int *slots)
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
    p->type = (mt_py_argtype)t;
    p->has_default = eq != NULL;
    p->dflt = eq ? parse_default(eq + 1) : NULL;
    const char *pyname = python_name(op, name);
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
    if (t == MT_ARG_OUT) {
        p->slot = -1;
        return 0;
    }
    /* Tensor and Tensor|Scalar share the tensor slots, int[] and int[1] the list slots. */
    int cls = t == MT_ARG_TENSOR_OR_SCALAR ? MT_ARG_TENSOR
              : t == MT_ARG_INTLIST1       ? MT_ARG_INTLIST
              : t == MT_ARG_TENSORLIST_OPT ? MT_ARG_TENSORLIST
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
parse_schema(const char *text, mt_py_schema *s)
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
    int slots[16] = {0}; /* indexed by mt_py_argtype */
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
        if (s->nparams == MT_MAX_PARAMS) {
            PyErr_Format(PyExc_SystemError, "%s: more than %d parameters, the most a schema holds",
                         text, MT_MAX_PARAMS);
            return -1;
        }
        mt_py_param *p = &s->params[s->nparams++];
        p->kwonly = kwonly;
        if (parse_param(text, tok, p, slots) < 0) {
            return -1;
        }
        s->npositional += !kwonly;
        if (p->type == MT_ARG_OUT) {
            s->out = s->nparams - 1;
        } else if (p->type == MT_ARG_DEVICE) {
            s->device = s->nparams - 1;
        }
        tensors |= p->type == MT_ARG_TENSOR || p->type == MT_ARG_TENSOR_OR_SCALAR ||
                   p->type == MT_ARG_TENSORLIST || p->type == MT_ARG_TENSORLIST_OPT;
    }
    s->factory = s->device >= 0 && !tensors;
    return 0;
}

/* Ops with several results return them as PyTorch's named tuples, torch.return_types.max(values=...,
 * indices=...): a structseq named after the schema's function (max_dim's schema says "max"),
 * whose fields the schema's results name ("-> (Tensor Q, Tensor R)"); two results the schema
 * leaves unnamed are (values, indices), and results declared without names ("-> (Tensor,
 * Tensor)", std_mean's) or more than two unnamed a plain tuple. */
PyTypeObject *mt_py_return_types[MT_NUM_OPS];
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
    while (op < MT_NUM_OPS && mt_py_return_types[op] != Py_TYPE(self)) {
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
    mt_py_return_types[op] = PyStructSequence_NewType(&return_descs[op]);
    if (mt_py_return_types[op] == NULL) {
        return -1;
    }
    mt_py_return_types[op]->tp_repr = return_type_repr;
    PyType_Modified(mt_py_return_types[op]);
    return PyDict_SetItemString(types, return_type_names[op] + strlen("minitorch.return_types."),
                                (PyObject *)mt_py_return_types[op]);
}

int
mt_py_schema_param(mt_op op, const char *name, mt_py_argkind *kind, int *slot)
{
    /* the schema's name; the parsed parameter has Python's (self is input) */
    const char *pyname = python_name(mt_op_schemas[op], name);
    const mt_py_schema *s = &mt_py_arg_schemas[op];
    for (int k = 0; k < s->nparams; k++) {
        const mt_py_param *p = &s->params[k];
        if (PyUnicode_CompareWithASCIIString(p->name, pyname) != 0) {
            continue;
        }
        *slot = p->slot;
        switch (p->type) {
        case MT_ARG_TENSOR:
        case MT_ARG_TENSOR_OR_SCALAR:
            *kind = MT_PY_ARG_TENSOR;
            return 0;
        case MT_ARG_SCALAR:
            *kind = MT_PY_ARG_SCALAR;
            return 0;
        case MT_ARG_INT:
            *kind = MT_PY_ARG_INT;
            return 0;
        case MT_ARG_INTLIST:
        case MT_ARG_INTLIST1:
            *kind = p->any_length ? MT_PY_ARG_OTHER : MT_PY_ARG_INTLIST;
            return 0;
        case MT_ARG_BOOL:
            *kind = MT_PY_ARG_BOOL;
            return 0;
        case MT_ARG_FLOAT:
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
    mt_py_schema *s = utf8 ? PyMem_Calloc(1, sizeof(mt_py_schema)) : NULL;
    if (s == NULL) {
        return utf8 ? PyErr_NoMemory() : NULL;
    }
    PyObject *res = NULL;
    if (parse_schema(utf8, s) == 0 && (res = PyList_New(s->nparams)) != NULL) {
        for (int k = 0; k < s->nparams; k++) {
            const mt_py_param *p = &s->params[k];
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
        mt_py_param *p = &s->params[k];
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
        if (parse_schema(mt_op_schemas[op], &mt_py_arg_schemas[op]) < 0 ||
            (mt_op_nout[op] >= 2 && add_return_type(types, op) < 0)) {
            Py_DECREF(types);
            return -1;
        }
    }
    int r = PyModule_AddObjectRef(m, "_return_types", types);
    Py_DECREF(types);
    return r;
}
