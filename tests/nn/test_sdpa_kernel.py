"""nn.attention.sdpa_kernel and SDPBackend, and Module.compile, against PyTorch."""
import warnings

import numpy as np
import pytest

import minitorch
from minitorch.nn.attention import SDPBackend, sdpa_kernel


def _torch():
    return pytest.importorskip("torch")


def _qkv(lib, shape=(2, 3, 4, 8), dtype="float32", vdim=None):
    rng = np.random.default_rng(0)
    q, k = (rng.standard_normal(shape).astype(dtype) for _ in range(2))
    v = rng.standard_normal(shape[:-1] + (vdim or shape[-1],)).astype(dtype)
    return [lib.tensor(a) for a in (q, k, v)]


def _outcome(lib, backends, shape=(2, 3, 4, 8), dtype="float32", vdim=None, **kw):
    """'ok' with the result, or the exception's class and message."""
    nn_attention = __import__(lib.__name__ + ".nn.attention", fromlist=["x"])
    chosen = (backends if not isinstance(backends, list)
              else [getattr(nn_attention.SDPBackend, b.name) for b in backends])
    if isinstance(chosen, SDPBackend):
        chosen = getattr(nn_attention.SDPBackend, chosen.name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with nn_attention.sdpa_kernel(chosen):
            try:
                out = lib.nn.functional.scaled_dot_product_attention(*_qkv(lib, shape, dtype, vdim), **kw)
            except Exception as e:  # noqa: BLE001 (the class is compared)
                return type(e).__name__, str(e)
    return "ok", out.detach().numpy()


CASES = [
    (SDPBackend.MATH, {}),
    (SDPBackend.FLASH_ATTENTION, {}),
    (SDPBackend.FLASH_ATTENTION, {"is_causal": True}),
    (SDPBackend.FLASH_ATTENTION, {"dropout_p": 0.5}),
    (SDPBackend.FLASH_ATTENTION, {"shape": (3, 4, 8)}),
    (SDPBackend.FLASH_ATTENTION, {"vdim": 5}),
    (SDPBackend.FLASH_ATTENTION, {"dtype": "float64"}),
    (SDPBackend.EFFICIENT_ATTENTION, {}),
    (SDPBackend.CUDNN_ATTENTION, {}),
    ([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION], {}),
    ([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH], {"dropout_p": 0.0}),
    ([], {}),
]


@pytest.mark.parametrize("backends,kw", CASES, ids=[str(i) for i in range(len(CASES))])
def test_cpu_backend_choice_as_torch(backends, kw):
    torch = _torch()
    mine, theirs = _outcome(minitorch, backends, **kw), _outcome(torch, backends, **kw)
    assert mine[0] == theirs[0]
    if mine[0] == "ok":
        np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-5, atol=1e-6)
    else:
        assert mine[1] == theirs[1]


def test_switches_restored_and_enum_as_torch():
    torch = _torch()
    assert {k: int(v) for k, v in SDPBackend.__members__.items()} == \
        {k: int(v) for k, v in torch.nn.attention.SDPBackend.__members__.items()}
    assert repr(SDPBackend.MATH) == repr(torch.nn.attention.SDPBackend.MATH)
    for lib in (minitorch, torch):
        cuda = lib.backends.cuda
        with lib.nn.attention.sdpa_kernel([lib.nn.attention.SDPBackend.MATH]):
            assert (cuda.math_sdp_enabled(), cuda.flash_sdp_enabled(), cuda.mem_efficient_sdp_enabled()) == \
                (True, False, False)
        assert cuda.flash_sdp_enabled() and cuda.mem_efficient_sdp_enabled() and cuda.math_sdp_enabled()
        with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend or a list of "
                                                 "SDPBackend instances, got int"):
            with lib.nn.attention.sdpa_kernel(3):
                pass


def test_disabled_math_through_backends_switch():
    q = _qkv(minitorch)
    minitorch.backends.cuda.enable_math_sdp(False)
    minitorch.backends.cuda.enable_flash_sdp(False)
    try:
        with pytest.raises(RuntimeError, match="No viable backend for scaled_dot_product_attention"):
            minitorch.nn.functional.scaled_dot_product_attention(*q)
    finally:
        minitorch.backends.cuda.enable_math_sdp(True)
        minitorch.backends.cuda.enable_flash_sdp(True)
    assert minitorch.nn.functional.scaled_dot_product_attention(*q).shape == (2, 3, 4, 8)


def test_module_compile_as_torch():
    torch = _torch()
    for lib in (minitorch, torch):
        lib.manual_seed(0)
        m = lib.nn.Linear(3, 2)
        x = lib.ones(4, 3)
        before = m(x).detach().numpy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert m.compile(backend="eager") is None
        assert callable(m._compiled_call_impl)
        np.testing.assert_allclose(m(x).detach().numpy(), before)
        assert list(m.state_dict()) == ["weight", "bias"]
        with pytest.raises(RuntimeError, match="Either mode or options can be specified"):
            m.compile(mode="default", options={})


def test_grad_scaler_names_as_torch():
    torch = _torch()
    for lib in (minitorch, torch):
        assert lib.GradScaler is lib.amp.GradScaler
        with pytest.warns(FutureWarning, match=r"`torch.cuda.amp.GradScaler\(args...\)` is deprecated. Please use "
                                               r"`torch.amp.GradScaler\('cuda', args...\)` instead."):
            s = lib.cuda.amp.GradScaler(enabled=False)
        assert isinstance(s, lib.amp.GradScaler) and not s.is_enabled()


SDP_KERNEL_FLAGS = [
    dict(enable_math=True, enable_flash=False, enable_mem_efficient=False),
    dict(enable_math=False, enable_flash=True, enable_mem_efficient=False),
    dict(enable_math=False, enable_flash=False, enable_mem_efficient=True),
    dict(enable_math=False, enable_flash=False, enable_mem_efficient=False, enable_cudnn=False),
    dict(),
]


@pytest.mark.parametrize("flags", SDP_KERNEL_FLAGS, ids=[str(i) for i in range(len(SDP_KERNEL_FLAGS))])
def test_deprecated_sdp_kernel_as_torch(flags):
    """backends.cuda.sdp_kernel (the SDPA tutorial's first edition): PyTorch's FutureWarning, the
    switches inside the block and after it, and the attention's outcome inside it."""
    torch = _torch()
    seen = {}
    for lib in (minitorch, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            manager = lib.backends.cuda.sdp_kernel(**flags)
        [warning] = [w for w in caught if issubclass(w.category, FutureWarning)]
        with manager:
            inside = [lib.backends.cuda.flash_sdp_enabled(), lib.backends.cuda.math_sdp_enabled(),
                      lib.backends.cuda.mem_efficient_sdp_enabled(), lib.backends.cuda.cudnn_sdp_enabled()]
            try:
                out = ("ok", lib.nn.functional.scaled_dot_product_attention(*_qkv(lib)).numpy())
            except RuntimeError as e:
                out = ("RuntimeError", str(e))
        after = [lib.backends.cuda.flash_sdp_enabled(), lib.backends.cuda.math_sdp_enabled()]
        seen[lib.__name__] = (str(warning.message), inside, out, after)
    mine, theirs = seen["minitorch"], seen["torch"]
    assert mine[0] == theirs[0] and mine[1] == theirs[1] and mine[3] == theirs[3] == [True, True]
    assert mine[2][0] == theirs[2][0]
    if mine[2][0] == "ok":
        np.testing.assert_allclose(mine[2][1], theirs[2][1], rtol=1e-5, atol=1e-6)
    else:
        assert mine[2][1] == theirs[2][1]
    assert minitorch.backends.cuda.SDPBackend is SDPBackend
