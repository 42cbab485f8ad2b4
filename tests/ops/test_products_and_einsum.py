"""baddbmm, addmv, outer/ger and einsum (ellipsis included) against NumPy (float64) and PyTorch: shapes (empty ones
included), layouts, dtypes, beta/alpha, broadcasting of self, the einsum forms models use, the
ops einsum decomposes into, and bad calls."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch
from helpers import arrays, check, layouts, raises_like_torch

DTYPES = ("float32", "float64", "int64", "int32")
dims = st.integers(0, 4)


def tol(dtype):
    return {"atol": 1e-4, "rtol": 1e-4} if dtype == "float32" else {}


@given(data=st.data(), b=dims, m=dims, k=dims, n=dims, dtype=st.sampled_from(DTYPES), layout=layouts,
       self_shape=st.sampled_from(["full", "row", "scalar"]))
def test_baddbmm(data, b, m, k, n, dtype, layout, self_shape):
    shape = {"full": (b, m, n), "row": (n,), "scalar": ()}[self_shape]
    s = data.draw(arrays(dtype, shape, low=-3, high=3))
    x = data.draw(arrays(dtype, (b, m, k), low=-3, high=3))
    y = data.draw(arrays(dtype, (b, k, n), low=-3, high=3))
    beta, alpha = (data.draw(st.sampled_from([1, 0, 2, -1])) for _ in range(2))
    lay = layout if s.ndim else "contiguous"
    check(lambda lib, s_, x_, y_: lib.baddbmm(s_, x_, y_, beta=beta, alpha=alpha),
          lambda s_, x_, y_: beta * s_ + alpha * (x_ @ y_), [s, x, y], layout=lay, **tol(dtype))
    check(lambda lib, s_, x_, y_: s_.baddbmm(x_, y_), lambda s_, x_, y_: s_ + x_ @ y_, [s, x, y], layout=lay,
          **tol(dtype))


@given(data=st.data(), m=dims, k=dims, dtype=st.sampled_from(DTYPES), layout=layouts,
       self_shape=st.sampled_from(["full", "one", "scalar"]))
def test_addmv(data, m, k, dtype, layout, self_shape):
    if m == 0 or k == 0:
        self_shape = "full"  # PyTorch returns a (1,) self unbroadcast when mat is empty
    shape = {"full": (m,), "one": (1,), "scalar": ()}[self_shape]
    s = data.draw(arrays(dtype, shape, low=-3, high=3))
    mat = data.draw(arrays(dtype, (m, k), low=-3, high=3))
    vec = data.draw(arrays(dtype, (k,), low=-3, high=3))
    beta, alpha = (data.draw(st.sampled_from([1, 0, 3])) for _ in range(2))
    lay = layout if s.ndim else "contiguous"
    check(lambda lib, s_, a_, v_: lib.addmv(s_, a_, v_, beta=beta, alpha=alpha),
          lambda s_, a_, v_: beta * s_ + alpha * (a_ @ v_), [s, mat, vec], layout=lay, **tol(dtype))
    check(lambda lib, s_, a_, v_: s_.addmv(a_, v_), lambda s_, a_, v_: s_ + a_ @ v_, [s, mat, vec], layout=lay,
          **tol(dtype))


def test_beta_zero_ignores_nan_in_self():
    s = minitorch.full((2,), float("nan"))
    assert minitorch.addmv(s, minitorch.ones(2, 3), minitorch.ones(3), beta=0).tolist() == [3.0, 3.0]
    s3 = minitorch.full((1, 2, 2), float("nan"))
    out = minitorch.baddbmm(s3, minitorch.ones(1, 2, 3), minitorch.ones(1, 3, 2), beta=0, alpha=0.5)
    assert out.tolist() == [[[1.5, 1.5], [1.5, 1.5]]]


@given(data=st.data(), n=dims, m=dims, da=st.sampled_from(DTYPES + ("bool",)), db=st.sampled_from(DTYPES + ("bool",)),
       layout=layouts)
def test_outer_and_ger(data, n, m, da, db, layout):
    x = data.draw(arrays(da, (n,)))
    y = data.draw(arrays(db, (m,)))
    check(lambda lib, a, b: lib.outer(a, b), np.multiply.outer, [x, y], layout=layout)
    check(lambda lib, a, b: a.ger(b), np.multiply.outer, [x, y], layout=layout)


LINALG_BAD = [
    lambda m: m.baddbmm(m.ones(2, 3, 4), m.ones(2, 3, 5), m.ones(2, 6, 4)),
    lambda m: m.baddbmm(m.ones(2, 3, 4), m.ones(3, 5), m.ones(2, 5, 4)),
    lambda m: m.baddbmm(m.ones(5, 4), m.ones(2, 3, 5), m.ones(2, 5, 4)),
    lambda m: m.baddbmm(m.ones(2, 3, 4, dtype=m.float64), m.ones(2, 3, 5), m.ones(2, 5, 4)),
    lambda m: m.baddbmm(m.ones(2, 3, 4, dtype=m.bool), m.ones(2, 3, 5, dtype=m.bool), m.ones(2, 5, 4, dtype=m.bool)),
    lambda m: m.addmv(m.ones(3), m.ones(3, 4), m.ones(5)),
    lambda m: m.addmv(m.ones(2), m.ones(3, 4), m.ones(4)),
    lambda m: m.addmv(m.ones(3), m.ones(3, 4, 1), m.ones(4)),
    lambda m: m.addmv(m.ones(3, dtype=m.float64), m.ones(3, 4), m.ones(4)),
    lambda m: m.outer(m.ones(2, 2), m.ones(2)),
    lambda m: m.ger(m.ones(2), m.ones(2, 2)),
    lambda m: m.mv(m.ones(3, 4), m.ones(5)),
    lambda m: m.bmm(m.ones(2, 3, 4), m.ones(2, 5, 4)),
]


@pytest.mark.parametrize("fn", LINALG_BAD)
def test_linalg_bad_calls_raise_like_torch(fn):
    raises_like_torch(fn)


def test_linalg_messages():
    with pytest.raises(RuntimeError, match=r"^size mismatch, got input \(3\), mat \(3x4\), vec \(5\)$"):
        minitorch.addmv(minitorch.ones(3), minitorch.ones(3, 4), minitorch.ones(5))
    with pytest.raises(RuntimeError, match="^outer: Expected 1-D argument self, but got 2-D$"):
        minitorch.outer(minitorch.ones(2, 2), minitorch.ones(2))
    with pytest.raises(RuntimeError, match=r"^Expected size for first two dimensions of batch2 tensor to be"):
        minitorch.baddbmm(minitorch.ones(2, 3, 4), minitorch.ones(2, 3, 5), minitorch.ones(2, 6, 4))


# ---- einsum ----

# equation: operand shapes (letters sized i=2, j=3, k=4, b=2, h=3, q=2, d=3, ...)
EINSUM = {
    "ij,jk->ik": [(2, 3), (3, 4)],
    "ij,jk": [(2, 3), (3, 4)],
    "bij,bjk->bik": [(2, 2, 3), (2, 3, 4)],
    "bhqd,bhkd->bhqk": [(2, 3, 2, 3), (2, 3, 4, 3)],
    "bhqk,bhkd->bhqd": [(2, 3, 2, 4), (2, 3, 4, 3)],
    "i,j->ij": [(2,), (3,)],
    "i,i->": [(4,), (4,)],
    "i,i": [(4,), (4,)],
    "ij->j": [(2, 3)],
    "ij->i": [(2, 3)],
    "ij->": [(2, 3)],
    "ij->ji": [(2, 3)],
    "ij": [(2, 3)],
    "ji": [(2, 3)],
    "ii->i": [(3, 3)],
    "ii": [(3, 3)],
    "ij,ij->ij": [(2, 3), (2, 3)],
    "ij,ij->": [(2, 3), (2, 3)],
    "ij,j->i": [(2, 3), (3,)],
    "ij,kj->ik": [(2, 3), (4, 3)],
    "bi,bi->b": [(3, 4), (3, 4)],
    "ijk,ikl->ijl": [(2, 0, 3), (2, 3, 4)],
    "ij,jk,kl->il": [(2, 3), (3, 4), (4, 2)],
    "ab,cd->abcd": [(2, 1), (1, 3)],
    "ij,ij->ij broadcast": [(2, 1), (2, 3)],
    "ik,kj->ij broadcast": [(2, 1), (3, 4)],
    "Ab,bA->A": [(2, 3), (3, 2)],
    "...ij,...jk->...ik": [(2, 2, 3), (2, 3, 4)],
    "...ij,...jk->...ik broadcast": [(2, 1, 2, 3), (3, 3, 4)],
    "...ij,...jk": [(2, 2, 3), (3, 4)],
    "b...d->b...": [(2, 3, 1, 2)],
    "...ij->...": [(2, 3, 2)],
    "i...,i...->...i": [(2, 3), (2, 1)],
}


@pytest.mark.parametrize("eq", EINSUM)
@given(data=st.data(), layout=layouts, dtype=st.sampled_from(("float32", "float64", "int64")))
def test_einsum(eq, dtype, data, layout):
    equation = eq.split(" ")[0]
    ops = [data.draw(arrays(dtype, s, low=-3, high=3)) for s in EINSUM[eq]]
    lay = layout if all(a.ndim for a in ops) else "contiguous"
    check(lambda lib, *xs: lib.einsum(equation, *xs), lambda *xs: np.einsum(equation, *xs), ops, layout=lay,
          **tol(dtype))


def test_einsum_takes_a_list_of_operands_and_spaces():
    a, b = minitorch.ones(2, 3), minitorch.ones(3, 4)
    assert minitorch.einsum("ij, jk -> ik", [a, b]).tolist() == [[3.0] * 4] * 2


def test_einsum_sums_broadcast_dims_left_out_of_the_output_like_torch():
    a = np.arange(24.0).reshape(2, 3, 4)
    check(lambda lib, x: lib.einsum("i...,i...->i", x, x), lambda x: (x * x).sum(axis=(1, 2)), [a])


def test_einsum_decomposes_into_views_and_bmm():
    x, y = minitorch.ones(2, 3, 4, 5), minitorch.ones(2, 3, 6, 5)
    minitorch._C._trace_start()
    minitorch.einsum("bhqd,bhkd->bhqk", x, y)
    names = [e[2] for e in minitorch._C._trace_stop() if e[1] == "Op"]
    assert "bmm" in names and "mul" not in names and "sum" not in names
    minitorch._C._trace_start()
    minitorch.einsum("i,j->ij", minitorch.ones(2), minitorch.ones(3))
    assert "mul" in [e[2] for e in minitorch._C._trace_stop() if e[1] == "Op"]


EINSUM_BAD = [
    lambda m: m.einsum("ij,jk->ik", m.ones(2, 3), m.ones(2, 3)),
    lambda m: m.einsum("ij,jk->ik", m.ones(2, 3)),
    lambda m: m.einsum("ij->ij", m.ones(2, 3), m.ones(2, 3)),
    lambda m: m.einsum("ijk,jk->ik", m.ones(2, 3), m.ones(3, 2)),
    lambda m: m.einsum("i,i->ii", m.ones(2), m.ones(2)),
    lambda m: m.einsum("i,i->k", m.ones(2), m.ones(2)),
    lambda m: m.einsum("i1,i->i", m.ones(2, 2), m.ones(2)),
    lambda m: m.einsum("ii->i", m.ones(2, 3)),
    lambda m: m.einsum("ij,jk->ik", m.ones(2, 3), m.ones(3, 2, dtype=m.float64)),
    lambda m: m.einsum(["ij->ji"], m.ones(2, 3)),
    lambda m: m.einsum("...ij,...jk", m.ones(2, 2, 3), m.ones(3, 3, 4)),
    lambda m: m.einsum("...ijk->...", m.ones(2, 3)),
]


@pytest.mark.parametrize("fn", EINSUM_BAD)
def test_einsum_bad_calls_raise_like_torch(fn):
    raises_like_torch(fn)

