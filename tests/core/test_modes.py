"""The top-level switches and queries: deterministic algorithms and the debug mode, warn-always,
inference mode, the autocast family, flush-denormal, typename, get_device, the build flags; each
against PyTorch's answers and errors."""
import re
import warnings

import pytest

import minitorch


@pytest.fixture
def libs():
    """minitorch, and torch where installed; the switches are restored after the test."""
    torch = None
    try:
        import torch
    except ImportError:
        pass
    out = [minitorch] + ([torch] if torch is not None else [])
    yield out
    for lib in out:
        lib.use_deterministic_algorithms(False)
        lib.set_warn_always(False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.set_autocast_enabled("cpu", False)
            lib.set_autocast_enabled("cuda", False)
            lib.set_autocast_dtype("cpu", lib.bfloat16)
            lib.set_autocast_dtype("cuda", lib.float16)
            lib.set_autocast_cache_enabled(True)


def _answers(lib, calls):
    out = []
    for call in calls:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = call(lib)
            out.append(re.sub(r"(?<!mini)torch\.", "minitorch.", str(res)))
        except Exception as e:  # noqa: BLE001 - the class and words are compared
            out.append((type(e).__name__, str(e).split("\n")[0]))
    return out


def _same(libs, calls):
    results = [_answers(lib, calls) for lib in libs]
    assert results[0] == results[-1]
    return results[0]


def test_deterministic_switches(libs):
    calls = [
        lambda lib: (lib.are_deterministic_algorithms_enabled(), lib.get_deterministic_debug_mode()),
        lambda lib: lib.use_deterministic_algorithms(True),
        lambda lib: (lib.are_deterministic_algorithms_enabled(), lib.is_deterministic_algorithms_warn_only_enabled(),
                     lib.get_deterministic_debug_mode()),
        lambda lib: lib.use_deterministic_algorithms(True, warn_only=True),
        lambda lib: (lib.is_deterministic_algorithms_warn_only_enabled(), lib.get_deterministic_debug_mode()),
        lambda lib: lib.set_deterministic_debug_mode("error"),
        lambda lib: (lib.are_deterministic_algorithms_enabled(), lib.get_deterministic_debug_mode()),
        lambda lib: lib.set_deterministic_debug_mode(0),
        lambda lib: (lib.are_deterministic_algorithms_enabled(), lib.get_deterministic_debug_mode()),
        lambda lib: lib.set_deterministic_debug_mode("warn"),
        lambda lib: lib.get_deterministic_debug_mode(),
        lambda lib: lib.set_deterministic_debug_mode("foo"),
        lambda lib: lib.set_deterministic_debug_mode(3),
        lambda lib: lib.set_deterministic_debug_mode(1.0),
        lambda lib: lib.use_deterministic_algorithms(1),
        lambda lib: lib.use_deterministic_algorithms(True, warn_only=1),
        lambda lib: lib.get_deterministic_debug_mode(),
    ]
    got = _same(libs, calls)
    assert got[2] == "(True, False, 2)" and got[4] == "(True, 1)"


def test_warn_always_and_flush_denormal(libs):
    calls = [
        lambda lib: lib.is_warn_always_enabled(),
        lambda lib: lib.set_warn_always(True),
        lambda lib: lib.is_warn_always_enabled(),
        lambda lib: lib.set_warn_always(1),
        lambda lib: lib.set_flush_denormal(1),
    ]
    assert _same(libs, calls)[2] == "True"
    assert minitorch.set_flush_denormal(True) is False  # not supported: PyTorch's answer then


def test_inference_mode_enabled(libs):
    for lib in libs:
        assert not lib.is_inference_mode_enabled()
        with lib.inference_mode():
            assert lib.is_inference_mode_enabled() and not lib.is_grad_enabled()
            with lib.inference_mode(False):
                assert not lib.is_inference_mode_enabled()
            assert lib.is_inference_mode_enabled()
        assert not lib.is_inference_mode_enabled()
        assert lib.inference_mode()(lambda: lib.is_inference_mode_enabled())()


def test_autocast_switches(libs):
    calls = [
        lambda lib: (lib.get_autocast_dtype("cpu"), lib.get_autocast_dtype("cuda")),
        lambda lib: (lib.get_autocast_cpu_dtype(), lib.get_autocast_gpu_dtype(), lib.get_autocast_ipu_dtype(),
                     lib.get_autocast_xla_dtype()),
        lambda lib: lib.set_autocast_enabled(True),
        lambda lib: (lib.is_autocast_enabled(), lib.is_autocast_enabled("cuda"), lib.is_autocast_enabled("cpu")),
        lambda lib: lib.set_autocast_enabled("cpu", True),
        lambda lib: (lib.is_autocast_enabled("cpu"), lib.is_autocast_cpu_enabled()),
        lambda lib: lib.set_autocast_cpu_enabled(False),
        lambda lib: lib.is_autocast_enabled("cpu"),
        lambda lib: lib.set_autocast_dtype("cpu", lib.float64),
        lambda lib: lib.get_autocast_dtype("cpu"),
        lambda lib: lib.set_autocast_cpu_dtype(lib.float16),
        lambda lib: lib.get_autocast_dtype("cpu"),
        lambda lib: lib.set_autocast_gpu_dtype(lib.bfloat16),
        lambda lib: lib.get_autocast_dtype("cuda"),
        lambda lib: lib.set_autocast_cache_enabled(False),
        lambda lib: lib.is_autocast_cache_enabled(),
        lambda lib: lib.clear_autocast_cache(),
        lambda lib: (lib.autocast_increment_nesting(), lib.autocast_increment_nesting(),
                     lib.autocast_decrement_nesting(), lib.autocast_decrement_nesting()),
        lambda lib: (lib.is_autocast_ipu_enabled(), lib.is_autocast_xla_enabled()),
        lambda lib: lib.set_autocast_enabled("cpu", 1),
    ]
    got = _same(libs, calls)
    assert got[0] == "(minitorch.bfloat16, minitorch.float16)"
    with pytest.warns(DeprecationWarning, match=r"is_autocast_cpu_enabled\(\) is deprecated"):
        minitorch.is_autocast_cpu_enabled()


def test_autocast_region_sets_and_restores(libs):
    for lib in libs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autocast("cpu", dtype=lib.float16, cache_enabled=False):
                assert lib.is_autocast_enabled("cpu") and lib.get_autocast_dtype("cpu") == lib.float16
                assert not lib.is_autocast_cache_enabled()
                with lib.autocast("cpu", enabled=False):
                    assert not lib.is_autocast_enabled("cpu") and lib.get_autocast_dtype("cpu") == lib.float16
            assert not lib.is_autocast_enabled("cpu") and lib.get_autocast_dtype("cpu") == lib.bfloat16
            assert lib.is_autocast_cache_enabled()
            assert lib.autocast("cpu").fast_dtype == lib.bfloat16


def test_typename_and_get_device(libs):
    calls = [
        lambda lib: lib.typename(lib.zeros(2)),
        lambda lib: lib.typename(lib.zeros(2, dtype=lib.int64)),
        lambda lib: lib.typename(lib.nn.Linear(1, 1)),
        lambda lib: lib.typename(lib.nn.Linear),
        lambda lib: lib.typename(3),
        lambda lib: lib.typename(None),
        lambda lib: lib.typename(len),
        lambda lib: lib.typename(test_typename_and_get_device).replace(lib.__name__, ""),
        lambda lib: lib.get_device(lib.zeros(2)),
        lambda lib: lib.get_device(3),
    ]
    got = _same(libs, calls)
    assert got[0] == "minitorch.FloatTensor" and got[2] == "minitorch.nn.modules.linear.Linear"


def test_build_flags(libs):
    for name in ("has_lapack", "has_openmp", "has_spectral", "has_mkl"):
        assert isinstance(getattr(minitorch, name), bool)
    assert minitorch.compiled_with_cxx11_abi() is True
    assert minitorch.has_openmp == minitorch.backends.openmp.is_available()
