"""The float8 formats' conversions bit for bit against PyTorch 2.13: every one of the 256 codes of
each format to float32 and back, and float32 to float8 over random bit patterns, the values next
to every code and the midpoints between codes (round to nearest even), infinities, NaNs, signed
zeros, subnormals and values past the largest (e4m3fn saturates, e5m2 goes to infinity, the fnuz
formats to NaN); through contiguous and strided copies, and from float64, float16 and bfloat16."""
import numpy as np
import pytest

import minitorch

torch = pytest.importorskip("torch")

FLOAT8 = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"]


def bits_of(t, lib):
    return np.array(t.view(lib.uint8).tolist(), dtype=np.uint8)


def float_samples(name):
    rng = np.random.default_rng(7)
    pattern = rng.integers(0, 2 ** 32, 200_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    codes = torch.arange(256, dtype=torch.uint8).view(getattr(torch, name)).float().numpy()
    finite = np.unique(codes[np.isfinite(codes)])
    near = [np.nextafter(finite, np.float32(np.inf)), np.nextafter(finite, np.float32(-np.inf))]
    mids = ((finite[1:].astype(np.float64) + finite[:-1]) / 2).astype(np.float32)
    special = np.array([np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0, 1e-45, -1e-45, 3.4e38, -3.4e38,
                        1e-10, 65504.0, 61440.0, 57344.0, 480.0, 464.0, 448.0, 248.0, 240.0], dtype=np.float32)
    return np.concatenate([pattern, finite, *near, mids, -mids, special]).astype(np.float32)


@pytest.mark.parametrize("name", FLOAT8)
def test_every_code_to_float(name):
    codes = np.arange(256, dtype=np.uint8)
    got = minitorch.from_numpy(codes).view(getattr(minitorch, name)).float().numpy()
    want = torch.from_numpy(codes).view(getattr(torch, name)).float().numpy()
    np.testing.assert_array_equal(got.view(np.uint32)[~np.isnan(want)], want.view(np.uint32)[~np.isnan(want)])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    # and back: every code that is not NaN round-trips; NaN codes give the format's NaN
    back = bits_of(minitorch.from_numpy(got).to(getattr(minitorch, name)), minitorch)
    t_back = bits_of(torch.from_numpy(want).to(getattr(torch, name)), torch)
    np.testing.assert_array_equal(back, t_back)


@pytest.mark.parametrize("name", FLOAT8)
def test_float32_to_float8_bit_for_bit(name):
    f = float_samples(name)
    got = bits_of(minitorch.from_numpy(f).to(getattr(minitorch, name)), minitorch)
    want = bits_of(torch.from_numpy(f).to(getattr(torch, name)), torch)
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, [(float(f[i]), hex(got[i]), hex(want[i])) for i in bad[:10]]


@pytest.mark.parametrize("name", FLOAT8)
@pytest.mark.parametrize("src", ["float64", "float16", "bfloat16"])
def test_other_float_sources(name, src):
    f = float_samples(name)[-5000:]
    f = f[~np.isnan(f)]  # a NaN's sign through bfloat16 is bfloat16's matter, not float8's
    x = minitorch.from_numpy(f).to(getattr(minitorch, src))
    y = torch.from_numpy(f).to(getattr(torch, src))
    np.testing.assert_array_equal(bits_of(x.to(getattr(minitorch, name)), minitorch),
                                  bits_of(y.to(getattr(torch, name)), torch))


@pytest.mark.parametrize("name", FLOAT8)
def test_strided_copy_into_float8(name):
    f = float_samples(name)[:6000].reshape(60, 100)
    x = minitorch.empty(100, 60, dtype=getattr(minitorch, name))
    y = torch.empty(100, 60, dtype=getattr(torch, name))
    x.copy_(minitorch.from_numpy(f).t())
    y.copy_(torch.from_numpy(f).t())
    np.testing.assert_array_equal(bits_of(x, minitorch), bits_of(y, torch))


@pytest.mark.parametrize("name", FLOAT8)
def test_item_and_tolist(name):
    f = np.array([1.0, -2.5, 0.1, 300.0, 1e-4], dtype=np.float32)
    x = minitorch.from_numpy(f).to(getattr(minitorch, name))
    y = torch.from_numpy(f).to(getattr(torch, name))
    np.testing.assert_array_equal(np.array(x.tolist()), np.array(y.tolist()))  # NaN equal to NaN
    assert x[2].item() == y[2].item()
