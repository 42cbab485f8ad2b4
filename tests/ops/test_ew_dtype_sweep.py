"""Every op of the elementwise family (ops/elementwise.def's MT_EW_OP rows, _C._op_info's front
'elementwise') over every dtype, and every pair of dtypes for the binary ops, against PyTorch
2.13: the result's dtype and values, or the exception's class and message (its first line).
The dtypes include the shell ones (uint16/32/64 and the four float8 formats), bool and complex.

A difference PyTorch and minitorch still have is allowed only where a class of KNOWN names it;
a class that no longer matches anything fails too (shrink KNOWN)."""
import re

import numpy as np
import pytest

import minitorch
from minitorch import _C

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64", "float16",
          "bfloat16", "float32", "float64", "complex64", "complex128", "float8_e4m3fn", "float8_e5m2",
          "float8_e4m3fnuz", "float8_e5m2fnuz"]
X = [1, 2, 3, 0]
Y = [2, 1, 3, 1]


def _words(out):
    return out[2] if out[0] == "err" else ""


def _rounded_once(m, t):
    """float16/bfloat16 results PyTorch rounds step by step and minitorch once (in float32)."""
    return m[0] == t[0] == "ok" and m[1] == t[1] in ("float16", "bfloat16") and np.allclose(
        np.array(m[2], dtype=complex), np.array(t[2], dtype=complex), rtol=2e-2, equal_nan=True)


# The differences left, each a class: its reason -> whether (op, dtypes, minitorch's outcome,
# PyTorch's) is one of it.
KNOWN = {
    "minitorch computes float16 and bfloat16 in float32 where PyTorch has no Half or BFloat16 loop "
    "(torch.special's functions, ndtri, ...)":
        lambda op, d, m, t: m[0] == "ok" and m[1] in ("float16", "bfloat16") and t[0] == "err"
        and re.search(r"not implemented for '(Half|BFloat16)'", t[2]) is not None,
    "float16 and bfloat16 rounded once by minitorch, step by step by PyTorch": lambda op, d, m, t: _rounded_once(m, t),
}


def plan(op):
    info = _C._op_info(op)
    sch = info["schema"]
    pos = []
    for a in sch[sch.index("(") + 1:sch.rindex(")")].split(", "):
        if a == "*":
            break
        typ, _, rest = a.rpartition(" ")
        if "=" in rest:
            break
        pos.append(typ)
    return info, pos


def caller(lib, op, info):
    if op.startswith("special_") and hasattr(lib.special, op[8:]):
        return getattr(lib.special, op[8:])
    if info["inplace"] or not info["function"]:
        return lambda *a: getattr(a[0], op)(*a[1:]) if hasattr(a[0], op) else None
    return getattr(lib, op, None)


def outcome(lib, op, info, pos, dts):
    f = caller(lib, op, info)
    if f is None:
        return None
    args, k = [], 0
    for typ in pos:
        if typ == "int":
            args.append(1)
        elif "Tensor" not in typ:
            return None
        elif op == "where" and not args:
            args.append(lib.tensor([True, False, True, False]))
        else:
            args.append(lib.tensor(X if k == 0 else Y).to(getattr(lib, dts[min(k, len(dts) - 1)])))
            k += 1
    try:
        r = f(*args)
    except Exception as e:  # noqa: BLE001 - compared with PyTorch's
        return ("err", type(e).__name__, str(e).split("\n")[0])
    if r is None:
        return None
    name = str(r.dtype).split(".")[-1]
    return ("ok", name, (r.float() if name.startswith("float8") or name == "bfloat16" else r).tolist())


def same(m, t):
    if m[0] != t[0] or m[:2] != t[:2]:
        return False
    if m[0] == "err":
        return m == t
    return np.allclose(np.array(m[2], dtype=complex), np.array(t[2], dtype=complex), rtol=2e-3, atol=1e-5,
                       equal_nan=True)


def family():
    return [op for op in _C.OPS if _C._op_info(op)["front"] == "elementwise"]


def differences(op):
    """(dtypes, minitorch's outcome, PyTorch's) for each call where they differ."""
    info, pos = plan(op)
    tensors = sum("Tensor" in t for t in pos) - (op == "where")
    combos = [(d, e) for d in DTYPES for e in DTYPES] if tensors == 2 else [(d,) for d in DTYPES]
    found = []
    for dts in combos if tensors else []:
        m, t = outcome(minitorch, op, info, pos, dts), outcome(torch, op, info, pos, dts)
        if m is not None and t is not None and not same(m, t):
            found.append((dts, m, t))
    return found


HIT = set()


@pytest.mark.parametrize("op", family())
def test_op_over_every_dtype_as_torch(op):
    unknown = []
    for dts, m, t in differences(op):
        reasons = [r for r, is_it in KNOWN.items() if is_it(op, dts, m, t)]
        HIT.update(reasons)
        if not reasons:
            unknown.append(f"{op}{dts}: minitorch {m}, PyTorch {t}")
    assert not unknown, "\n".join(unknown[:20]) + f"\n({len(unknown)} in all)"


def test_every_known_difference_is_still_there():
    for op in family():
        for dts, m, t in differences(op):
            HIT.update(r for r, is_it in KNOWN.items() if is_it(op, dts, m, t))
    assert set(KNOWN) == HIT, f"no longer seen, drop from KNOWN: {set(KNOWN) - HIT}"


def test_the_uint_float_ops_of_pytorch():
    """atan2, copysign, xlogy, special.zeta (two uints of one dtype), special.i0e, special.erfcx
    and polygamma compute the uints in the default float, as PyTorch's do; in place they refuse
    the float result; two uints of different widths are PyTorch's promotion error."""
    for name in ("uint16", "uint32", "uint64"):
        d, td = getattr(minitorch, name), getattr(torch, name)
        x, tx = minitorch.tensor([1, 2, 3, 0]).to(d), torch.tensor([1, 2, 3, 0]).to(td)
        y, ty = minitorch.tensor([2, 1, 3, 1]).to(d), torch.tensor([2, 1, 3, 1]).to(td)
        z, tz = minitorch.tensor([2, 3, 4, 2]).to(d), torch.tensor([2, 3, 4, 2]).to(td)
        for fn in (lambda m, a, b, c: m.atan2(a, b), lambda m, a, b, c: m.copysign(a, b),
                   lambda m, a, b, c: m.xlogy(a, b), lambda m, a, b, c: m.special.zeta(c, b),
                   lambda m, a, b, c: m.special.i0e(a), lambda m, a, b, c: m.special.erfcx(a),
                   lambda m, a, b, c: m.polygamma(1, c), lambda m, a, b, c: m.atan2(a, b.float()),
                   lambda m, a, b, c: m.xlogy(a.half(), b)):
            got, want = fn(minitorch, x, y, z), fn(torch, tx, ty, tz)
            assert got.dtype == getattr(minitorch, str(want.dtype).split(".")[-1])
            np.testing.assert_allclose(got.float().tolist(), want.float().tolist(), rtol=1e-3)  # float16: once
        for fn in (lambda a, b: a.clone().atan2_(b), lambda a, b: a.clone().xlogy_(b),
                   lambda a, b: a.clone().polygamma_(1), lambda a, b: a.atan2(b.to(torch.uint8 if
                   isinstance(b, torch.Tensor) else minitorch.uint8))):
            with pytest.raises(RuntimeError) as got:
                fn(x, y)
            with pytest.raises(RuntimeError) as want:
                fn(tx, ty)
            assert str(got.value) == str(want.value).split("\n")[0]


CLAMPS = {
    "tensor_bounds": lambda m, x, b: m.clamp(x, b, b),
    "tensor_min": lambda m, x, b: m.clamp(x, min=b),
    "tensor_max": lambda m, x, b: m.clamp(x, max=b),
    "number_bounds": lambda m, x, b: m.clamp(x, 1, 2),
    "number_min": lambda m, x, b: m.clamp(x, 1),
    "in_place_tensor": lambda m, x, b: x.clone().clamp_(b),
    "in_place_number_max": lambda m, x, b: x.clone().clamp_(max=2),
    "clamp_min": lambda m, x, b: m.clamp_min(x, 1),
    "clamp_max_": lambda m, x, b: x.clone().clamp_max_(1),
    "clip_tensor": lambda m, x, b: x.clip(b, b),
}


@pytest.mark.parametrize("case", CLAMPS)
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "uint16", "uint64", "complex64", "complex128",
                                   "float8_e4m3fn"])
def test_clamp_takes_and_refuses_as_torch(case, dtype):
    """clamp's refusals name PyTorch's kernel for how it was called (clamp_cpu with a tensor
    bound, clamp_scalar_cpu with two numbers, maximum_cpu and clamp_min_scalar_cpu for one
    bound), and complex self is PyTorch's NotImplementedError in its words."""
    out = []
    for lib in (minitorch, torch):
        d = getattr(lib, dtype)
        x, b = lib.tensor([1, 2, 3]).to(d), lib.tensor([2, 2, 2]).to(d)
        try:
            r = CLAMPS[case](lib, x, b)
            out.append(("ok", str(r.dtype).split(".")[-1], r.to(lib.float64).tolist() if
                        not r.is_complex() else r.tolist()))
        except Exception as e:  # noqa: BLE001 - compared with PyTorch's
            out.append(("err", type(e).__name__, str(e).split("\n")[0]))
    assert out[0] == out[1]


# Calls whose check compares or names a small dtype (uint8, int8, float16, bfloat16), which the
# dispatcher widens before the family's front end runs: the check sees them as given.
AS_GIVEN = {
    "heaviside_byte_char": lambda m: m.heaviside(m.tensor([1, 0]).to(m.uint8), m.tensor([1, 0]).to(m.int8)),
    "heaviside_half_bfloat16": lambda m: m.heaviside(m.tensor([1.0]).half(), m.tensor([1.0]).bfloat16()),
    "lerp_end_bfloat16": lambda m: m.lerp(m.tensor([1.0]).half(), m.tensor([2.0]).bfloat16(), 0.5),
    "lerp_weight_half": lambda m: m.lerp(m.tensor([1.0, 2]).bfloat16(), m.tensor([2.0, 3]).bfloat16(),
                                         m.tensor([0.5, 0.5]).half()),
    "lerp_bytes": lambda m: m.lerp(*(m.tensor([1, 2]).to(m.uint8),) * 3),
    "masked_fill_byte_mask": lambda m: m.tensor([1.0, 2]).masked_fill(m.tensor([1, 0]).to(m.uint8), m.tensor(3.0)),
    "masked_fill_half_mask": lambda m: m.tensor([1.0, 2]).masked_fill(m.tensor([1, 0]).half(), m.tensor(3.0)),
    "add_bool_byte": lambda m: m.tensor([True]).add_(m.tensor([1]).to(m.uint8)),
    "mul_char_complex": lambda m: m.tensor([1]).to(m.int8).mul_(m.tensor([1j])),
    "bitwise_and_half": lambda m: m.bitwise_and(m.tensor([1.0]).half(), m.tensor([1.0]).half()),
    "gcd_bfloat16_": lambda m: m.tensor([4]).to(m.int16).gcd_(m.tensor([2.0]).bfloat16()),
    "polygamma_0_complex": lambda m: m.polygamma(0, m.tensor([1j])),
    "polygamma_3_complex": lambda m: m.polygamma(3, m.tensor([1j])),
}


@pytest.mark.parametrize("case", AS_GIVEN)
def test_checks_see_small_dtypes_as_given(case):
    out = []
    for lib in (minitorch, torch):
        try:
            r = AS_GIVEN[case](lib)
            out.append(("ok", str(r.dtype).split(".")[-1], r.float().tolist()))
        except Exception as e:  # noqa: BLE001 - compared with PyTorch's
            out.append(("err", type(e).__name__, str(e).split("\n")[0]))
    assert out[0] == out[1]
    assert out[1][0] == "err"  # each case is a refusal whose words name the dtypes


BIG_UINT_CALLS = {
    "add": lambda m, u, f: u + f, "mul_number": lambda m, u, f: u * 0.5, "sub_half": lambda m, u, f: f.half() - u,
    "maximum": lambda m, u, f: m.maximum(u, f), "lt": lambda m, u, f: u < f,
    "where": lambda m, u, f: m.where(m.tensor([True, False]), u, f.double()), "atan2": lambda m, u, f: m.atan2(f, u),
    "in_place_float_self": lambda m, u, f: f.double().add_(u),
}


@pytest.mark.parametrize("case", BIG_UINT_CALLS)
def test_a_uint64_from_2_63_up_meets_a_float_as_itself(case):
    """A uint64 met by a float computes in that float, converted to it as itself, not through int64
    (where it would turn negative)."""
    got, want = (BIG_UINT_CALLS[case](lib, lib.tensor([2**63 + 2**40, 7], dtype=lib.uint64),
                                      lib.tensor([1.5, 1e19], dtype=lib.float32)) for lib in (minitorch, torch))
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(np.array(got.double().tolist()), np.array(want.double().tolist()), rtol=1e-3)
