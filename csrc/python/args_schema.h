/* The parsed schema of each op (python/schema.c), which the binding's argument parsing
 * (python/args.c) and its boxing of a call back into Python (python/args_box.c) read. Only those
 * files of csrc/python/ include this. */
#ifndef MT_PY_ARGS_SCHEMA_H
#define MT_PY_ARGS_SCHEMA_H

#include "python/pyminitorch.h"

typedef enum mt_py_argtype {
    MT_ARG_TENSOR,
    MT_ARG_TENSOR_OR_SCALAR,
    MT_ARG_SCALAR,
    MT_ARG_INT,
    MT_ARG_INTLIST,
    MT_ARG_INTLIST1,
    MT_ARG_BOOL,
    MT_ARG_DTYPE,
    MT_ARG_DEVICE,
    MT_ARG_TENSORLIST,
    MT_ARG_STR, /* borrowed for the call: rounding_mode, approximate */
    MT_ARG_TENSORLIST_OPT, /* Tensor?[]: None entries allowed */
    MT_ARG_FLOAT,
    MT_ARG_GENERATOR, /* borrowed for the call */
    MT_ARG_OUT, /* Tensor(a!) out: not a slot; python/out.c writes the results into it */
} mt_py_argtype;

#define MT_MAX_PARAMS 16 /* _fused_adam_: six lists, five floats, two bools */

typedef struct mt_py_param {
    mt_py_argtype type;
    bool optional; /* "Type?": accepts None */
    bool kwonly;
    bool has_default;
    PyObject *dflt; /* the default as a Python object (owned), or NULL */
    PyObject *name; /* interned str: its Python name (a function's self is input) */
    PyObject *numpy_names[3]; /* interned: the NumPy spellings PyTorch also accepts (or another
                               * overload's name for it: overload_names), or NULL */
    int slot;       /* index within its slot array of mt_args */
    bool any_length; /* int[*]: a list that is not a shape (split sizes), of any length */
} mt_py_param;

typedef struct mt_py_schema {
    int nparams;
    int npositional;
    int out;     /* the index of the out= parameter, or -1 */
    int device;  /* the index of a Device parameter, or -1 */
    bool factory; /* a Device parameter and no tensor: the default device applies */
    char name[48]; /* the Python name, in messages: max_dim's is max */
    mt_py_param params[MT_MAX_PARAMS];
} mt_py_schema;

/* each op's schema, parsed once at import (mt_py_schemas_init) */
extern mt_py_schema mt_py_arg_schemas[MT_NUM_OPS];
/* the named tuples of the ops with several results, or NULL (a plain tuple) */
extern PyTypeObject *mt_py_return_types[MT_NUM_OPS];

#endif
