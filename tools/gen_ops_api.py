"""Writes the typed C API of the ops, one function per row of csrc/dispatch/ops.def (the elementwise
family's rows are the MT_EW_OP lines of csrc/ops/elementwise.def, which ops.def includes):

    mt_status mt_op_add(mt_tensor *self, mt_tensor *other, mt_scalar alpha, mt_tensor **out);

Each boxes its arguments into mt_args in the slots the schema gives them (Tensor -> t[],
Scalar -> s[], int -> i[], int[] -> l[], bool -> b[], str -> str[], float -> f[], ScalarType -> dtype,
Device -> device, Tensor[] -> tl, Generator -> gen; see ops.def), calls mt_dispatch and unboxes
the results, so C code calls an op the way Python does, through the dispatcher, and never fills
slots by hand. C has no default arguments: a caller passes every one. None is NULL for a
Tensor?, an int[]?, a str? and a Generator? (the device's default generator); MT_INT_NONE for
an int?; MT_SCALAR_NONE for a Scalar?; MT_DEVICE_NONE for a Device?; -1 for a ScalarType?. An
int[] is a count and a pointer. Results: `out` (nout 1), out0..out3 (nout 2
to 4), or a malloc'd array and its length (a Tensor[] result), each a new reference, or
released when the pointer is NULL (in-place ops return self). The slot counts are checked
against mt_args's arrays here and again by the compiler (_Static_assert), so no schema can
overflow them.

setup.py runs this before compiling (python3 tools/gen_ops_api.py OUT_DIR); the header is
written only when its text changes, so an unchanged ops.def recompiles nothing. The functions
are static inline: _C and _C_cuda (which reaches mt_dispatch through _C's C API) both use them.
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OPS_DEF = ROOT / "csrc" / "dispatch" / "ops.def"
EW_DEF = ROOT / "csrc" / "ops" / "elementwise.def"  # the elementwise family's rows, which ops.def includes
DISPATCH_H = ROOT / "csrc" / "dispatch" / "dispatch.h"

# schema type (without '?') -> mt_args slot array
SLOTS = {"Tensor": "t", "Tensor|Scalar": "t", "Scalar": "s", "int": "i", "int[]": "l", "int[*]": "l", "int[1]": "l",
         "bool": "b", "str": "str", "ScalarType": "dtype", "Device": "device",
         "Tensor[]": "tl", "Tensor?[]": "tl", "float": "f", "Generator": "gen"}



def uncommented(path):
    return re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S)


# a row's shell column (dispatch/shell.c): _, SHELL(takes) or SHELL_AS(takes, "kernel")
SHELL = r"(?:_|SHELL\([^)]*\)|SHELL_AS\([^)]*\))"


def ew_rows():
    """(name, nout, flags, schema) for each MT_EW_OP line of ops/elementwise.def: the elementwise
    family's ops, which ops.def includes as its rows MT_OP(op, CPU, _, _, 1, flags, shell, schema)."""
    for m in re.finditer(r"^MT_EW_OP\((\w+),\s*\w+,\s*([^,]+),\s*" + SHELL + r",\s*\"(.*)\"\)\s*$",
                         uncommented(EW_DEF), re.M):
        yield m.group(1), "1", m.group(2).strip(), m.group(3)


def rows():
    """(name, nout, flags, schema) for each row of ops.def, in its order: its MT_OP rows and, where
    it includes ops/elementwise.def, the family's MT_EW_OP lines."""
    row = re.compile(r"^MT_OP\((\w+),\s*\w+(?:\(\w+\))?,\s*\w+(?:\(\w+\))?,\s*\w+(?:\(\w+\))?,\s*(\w+),\s*([^,]+),\s*"
                     + SHELL + r",\s*\"(.*)\"\)\s*$")
    for line in uncommented(OPS_DEF).splitlines():
        m = row.match(line)
        if m:
            yield m.group(1), m.group(2), m.group(3).strip(), m.group(4)
        elif line.strip() == '#include "ops/elementwise.def"':
            yield from ew_rows()


def slot_sizes():
    """The length of each array slot of mt_args, as dispatch.h declares it."""
    text = DISPATCH_H.read_text()
    body = text[text.index("typedef struct mt_args {"):text.index("} mt_args;")]
    sizes = {}
    for name in ("t", "s", "i", "l", "b", "str", "f"):
        m = re.search(r"\b%s\[(\w+)\];" % name, body)
        n = m.group(1)
        if not n.isdigit():
            n = re.search(r"#define %s (\d+)" % n, text).group(1)
        sizes[name] = int(n)
    lists = re.search(r"#define MT_MAX_TENSOR_LISTS (\d+)", text).group(1)
    sizes.update(tl=int(lists), dtype=1, device=1, gen=1)
    return sizes


def params(op, schema):
    """[(type, optional, name, slot array, index)] of one schema."""
    schema = schema.split(" -> ")[0]  # the results, if named, are Python's business
    inner = schema[schema.index("(") + 1:schema.rindex(")")]
    counts, out = {}, []
    for tok in (t.strip() for t in inner.split(",")):
        if tok == "*":
            continue
        decl = tok.split("=")[0].split()
        typ, name = decl[0], decl[1]
        optional = typ.endswith("?")
        typ = typ.rstrip("?")
        if typ == "Tensor(a!)":
            continue  # out=: Python's (csrc/python/out.c); a C caller takes the result itself
        if typ not in SLOTS:
            raise SystemExit(f"gen_ops_api: {op}: unknown schema type {typ}")
        arr = SLOTS[typ]
        k = counts.get(arr, 0)
        counts[arr] = k + 1
        out.append((typ, optional, name, arr, k))
    return out, counts


# slot array -> the C parameter(s) of an argument named {n}
C_PARAMS = {"t": "mt_tensor *{n}", "s": "mt_scalar {n}", "i": "int64_t {n}", "f": "double {n}",
            "l": "int {n}_n, const int64_t *{n}", "b": "bool {n}", "str": "const char *{n}",
            "dtype": "int {n}", "device": "mt_device {n}",
            "tl": "int {n}_n, mt_tensor *const *{n}", "gen": "mt_generator *{n}"}
# slot array -> the lines that box argument {n} into slot {k} of mt_args a
BOXING = {
    "t": ["a.t[{k}] = {n};"],
    "s": ["a.s[{k}] = {n};"],
    "i": ["a.i[{k}] = {n};", "a.i_none &= ~(1u << {k});"],
    "i?": ["if ({n} != MT_INT_NONE) {{", "    a.i[{k}] = {n};", "    a.i_none &= ~(1u << {k});", "}}"],
    "l": ["if ((st = mt_op_set_ints(&a.l[{k}], {n}_n, {n})) != MT_OK) {{", "    return st;", "}}"],
    # int[*] (split sizes: not a shape): any length, the caller's array borrowed past MT_MAX_DIMS
    "l*": ["if ((st = mt_op_set_ints_any(&a.l[{k}], {n}_n, {n})) != MT_OK) {{", "    return st;", "}}"],
    "b": ["a.b[{k}] = {n};"],
    "f": ["a.f[{k}] = {n};"],
    "str": ["a.str[{k}] = {n};"],
    "dtype": ["a.dtype = {n};"],
    "device": ["if ({n}.type != MT_NUM_DEVICE_TYPES) {{", "    a.has_device = true;", "    a.device = {n};", "}}"],
    "tl": ["a.tl = (mt_tensor **){n};", "a.ntl = {n}_n;"],
    "gen": ["a.gen = {n};"],
    # the second and later Tensor[] arguments (the optimizer steps' lists)
    "tls": ["a.tls[{k1}] = (mt_tensorlist){{(mt_tensor **){n}, {n}_n}};"],
}


def c_params(ps, nout):
    cp = [C_PARAMS[arr].format(n=name) for typ, optional, name, arr, k in ps]
    if nout == "LIST":
        cp.append("mt_tensor ***out, int *nout")
    elif nout == "1":
        cp.append("mt_tensor **out")
    else:
        cp += [f"mt_tensor **out{k}" for k in range(int(nout))]
    return cp


def boxing(ps):
    lines = []
    for typ, optional, name, arr, k in ps:
        key = "i?" if arr == "i" and optional else "tls" if arr == "tl" and k > 0 else arr
        key = "l*" if typ == "int[*]" else key
        lines += ["    " + line.format(n=name, k=k, k1=k - 1) for line in BOXING[key]]
    return lines


def unboxing(nout):
    if nout == "LIST":
        return ["    *out = a.outl;", "    *nout = a.noutl;"]
    if nout == "1":
        return ["    mt_op_give(a.out[0], out);"]
    return [f"    mt_op_give(a.out[{k}], out{k});" for k in range(int(nout))]


HEAD = """/* Generated by tools/gen_ops_api.py from csrc/dispatch/ops.def: do not edit.
 *
 * The typed C API of the ops: mt_op_<name>(arguments in schema order, results), one per row,
 * each a dispatcher call (see tools/gen_ops_api.py for the conventions). */
#ifndef MT_OPS_API_H
#define MT_OPS_API_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatch.h"

/* absent optional arguments (None) */
#define MT_INT_NONE INT64_MIN
#define MT_SCALAR_NONE ((mt_scalar){.type = MT_NUM_DTYPES})
#define MT_DEVICE_NONE ((mt_device){.type = MT_NUM_DEVICE_TYPES})

/* An mt_args array slot holds at least n arguments. */
#define MT_ARGS_FIT(arr, n) ((n) <= sizeof(((mt_args *)0)->arr) / sizeof(((mt_args *)0)->arr[0]))

/* an int[] argument: NULL is None */
static inline mt_status
mt_op_set_ints(mt_intlist *l, int n, const int64_t *v)
{
    if (v == NULL) {
        return MT_OK; /* mt_args_init left it None */
    }
    if (n < 0 || n > MT_MAX_DIMS) {
        return mt_fail(MT_EVALUE, "a list of %d ints: at most %d fit", n, MT_MAX_DIMS);
    }
    l->none = false;
    l->n = n;
    if (n > 0) {
        memcpy(l->v, v, sizeof(int64_t) * (size_t)n);
    }
    return MT_OK;
}

/* an int[*] argument (not a shape: split sizes), of any length: past MT_MAX_DIMS the op reads v
 * itself (borrowed for the call) */
static inline mt_status
mt_op_set_ints_any(mt_intlist *l, int n, const int64_t *v)
{
    if (v != NULL && n > MT_MAX_DIMS) {
        l->none = false;
        l->n = n;
        l->ext = v;
        return MT_OK;
    }
    return mt_op_set_ints(l, n, v);
}

/* The int[] argument of a boxed list (a node's saved arguments): NULL when it is None */
static inline const int64_t *
mt_op_ints(const mt_intlist *l)
{
    return l->none ? NULL : l->v;
}

/* *out = r, or r released when the caller does not want it */
static inline void
mt_op_give(mt_tensor *r, mt_tensor **out)
{
    if (out) {
        *out = r;
    } else {
        mt_tensor_release(r);
    }
}
"""


def generate():
    sizes = slot_sizes()
    parts = [HEAD]
    for op, nout, flags, schema in rows():
        ps, counts = params(op, schema)
        for arr, n in counts.items():
            if n > sizes[arr]:
                raise SystemExit(f"gen_ops_api: {op}: {n} arguments in slot {arr}[], mt_args holds {sizes[arr]}")
        asserts = [f'_Static_assert(MT_ARGS_FIT({arr}, {n}), "{op}: too many {arr}[] arguments for mt_args");'
                   for arr, n in sorted(counts.items()) if arr in ("t", "s", "i", "l", "b", "str", "f")]
        body = boxing(ps)
        uses_st = any("mt_op_set_ints" in line for line in body)
        fn = [*asserts, "static inline mt_status",
              f"mt_op_{op}({', '.join(c_params(ps, nout))})", "{", "    mt_args a;",
              "    mt_args_init(&a);"]
        if uses_st:
            fn.append("    mt_status st;")
        fn += body
        fn.append(f"    {'st' if uses_st else 'mt_status st'} = mt_dispatch(MT_OP_{op}, &a);")
        fn += ["    if (st) {", "        return st;", "    }", *unboxing(nout), "    return MT_OK;", "}"]
        parts.append("\n".join(fn) + "\n")
    parts.append("#endif\n")
    return "\n".join(parts)


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "gen"
    path = out / "dispatch" / "ops_api.h"
    text = generate()
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return path


if __name__ == "__main__":
    print(main())
