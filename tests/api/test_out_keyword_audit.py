"""out= of the eighteen torch.fft transforms, which minitorch lacked (tools/api_gap.py): a complex
out for a complex result and a floating one for a real result, of any precision (ihfft's of the
result's alone), resized with PyTorch's warning, refused when an input requires grad naming the
ATen primitive; each against PyTorch where it is installed."""
import numpy as np
import pytest

import minitorch
from api_audit import same_call, table

# PyTorch's ihfft(out=) of an input that requires grad returns out with grad_fn NotImplemented;
# minitorch refuses it as every other out= call of a differentiable input
cases, add = table(known={"ihfft_out_requires_grad"})
R = np.random.default_rng(1)
X = R.standard_normal((4, 6)).astype(np.float32)
Z = (R.standard_normal((4, 6)) + 1j * R.standard_normal((4, 6))).astype(np.complex64)


def _out_call(fn, out_dtype, shape=(0,)):
    """fn(lib, out) with out an empty (or other-shaped) tensor of out_dtype: [what fn returns,
    out, whether out itself came back]."""
    def call(lib):
        out = lib.empty(shape, dtype=getattr(lib, out_dtype))
        got = fn(lib, out)
        return [got, out, got is out]
    return call


ONE_D = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
N_D = ("fftn", "ifftn", "fft2", "ifft2", "rfftn", "irfftn", "rfft2", "irfft2", "hfftn", "ihfftn", "hfft2", "ihfft2")
REAL_RESULT = {"irfft", "hfft", "irfftn", "irfft2", "hfftn", "hfft2"}
for name in ONE_D + N_D:
    real = name in REAL_RESULT
    kw = {"n": 8} if name in ONE_D else {"s": (4, 8)}
    src = Z if real or name.startswith("i") and name not in ("ihfft", "ihfftn", "ihfft2") else X
    fn = (lambda name, src, kw: lambda lib, out: getattr(lib.fft, name)(lib.tensor(src), out=out, **kw))(name, src, kw)
    add(f"{name}_out", _out_call(fn, "float64" if real else "complex128"))
    add(f"{name}_out_low_precision", _out_call(fn, "float16" if real else "complex64", (2,)))
    add(f"{name}_out_wrong_kind", _out_call(fn, "complex64" if real else "float32"))
    add(f"{name}_out_int", _out_call(fn, "int64"))
    add(f"{name}_out_requires_grad", lambda lib, name=name, src=src, kw=kw: getattr(lib.fft, name)(
        lib.tensor(src, requires_grad=True), out=lib.empty(0, dtype=lib.complex64), **kw))
add("fft_out_input_keyword", _out_call(lambda lib, out: lib.fft.fft(input=lib.tensor(X), dim=0, out=out), "complex64"))


@pytest.mark.filterwarnings("ignore:An output with one or more elements was resized")
@pytest.mark.parametrize("fn", cases)
def test_against_torch(fn):
    same_call(fn)
