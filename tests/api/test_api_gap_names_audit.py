"""Public names tools/api_gap.py found missing or with other parameters, each against PyTorch where
installed: inference_mode(mode=...) and @enable_grad without the call; torch.autograd's
is_tensor_like, has_torch_function, handle_torch_function, ProfilerActivity, kineto_available,
is_view_replay_enabled; torch.SymInt/SymFloat/SymBool; cudnn_is_acceptable; torch.backends.mha
(get/set_fastpath_enabled, obeyed by TransformerEncoder's nested path and MultiheadAttention's
fast-path check), nnpack, kleidiai, cusparselt, miopen and mkl.verbose; UninitializedBuffer's
persistent=; torch.func.debug_unwrap."""
import numpy as np
import pytest

import minitorch
from api_audit import a, i, same_call, table
from helpers import torch

cases, add = table()

add("inference_mode_keyword", lambda lib: [(lambda: (lib.inference_mode(mode=False).__enter__(),
                                                     lib.is_inference_mode_enabled())[1])(),
                                           lib.is_grad_enabled()])
add("inference_mode_bare", lambda lib: lib.inference_mode(lambda x: [lib.is_inference_mode_enabled(), x])(3))
add("inference_mode_called", lambda lib: lib.inference_mode(False)(lambda: lib.is_inference_mode_enabled())())
add("enable_grad_bare", lambda lib: (lambda f: [lib.no_grad()(f)(), lib.no_grad()(lib.enable_grad(f))()])(
    lambda: lib.is_grad_enabled()))
add("enable_grad_called", lambda lib: lib.no_grad()(lib.enable_grad()(lambda: lib.is_grad_enabled()))())
add("autograd_overrides", lambda lib: [lib.autograd.is_tensor_like(a(lib)), lib.autograd.is_tensor_like(3),
                                       lib.autograd.has_torch_function((a(lib), 1)),
                                       lib.autograd.handle_torch_function is lib.overrides.handle_torch_function])
add("autograd_profiler_activity", lambda lib: [lib.autograd.ProfilerActivity.CPU.name,
                                               lib.autograd.ProfilerActivity is lib.profiler.ProfilerActivity])
add("view_replay", lambda lib: lib.autograd.is_view_replay_enabled())
add("sym_types", lambda lib: [isinstance(3, lib.SymInt), isinstance(3.0, lib.SymFloat), isinstance(True, lib.SymBool),
                              issubclass(lib.SymInt, int), issubclass(lib.SymFloat, float),
                              lib.SymInt.__mro__[-1] is object])
add("cudnn_is_acceptable_cpu", lambda lib: [lib.cudnn_is_acceptable(a(lib)), lib.cudnn_is_acceptable(i(lib)),
                                            lib.cudnn_is_acceptable(lib.empty(0))])
add("cudnn_is_acceptable_not_tensor", lambda lib: lib.cudnn_is_acceptable(3))
add("mha_fastpath_flag", lambda lib: (lambda before: [before, lib.backends.mha.set_fastpath_enabled(False),
                                                      lib.backends.mha.get_fastpath_enabled(),
                                                      lib.backends.mha.set_fastpath_enabled(True),
                                                      lib.backends.mha.get_fastpath_enabled()])(
    lib.backends.mha.get_fastpath_enabled()))
add("cusparselt", lambda lib: [lib.backends.cusparselt.is_available(), lib.backends.cusparselt.version(),
                               lib.backends.cusparselt.get_max_alg_id()])
add("kleidiai", lambda lib: lib.backends.kleidiai.is_available())
add("nnpack_flags", lambda lib: (lambda b: [b, lib.backends.nnpack.set_flags(False),
                                            (lambda: (lib.backends.nnpack.flags(True).__enter__(),
                                                      lib.backends.nnpack.set_flags(False))[1])(),
                                            lib.backends.nnpack.set_flags(b[0])])(lib.backends.nnpack.set_flags(True)))
add("mkl_verbose_off", lambda lib: [lib.backends.mkl.VERBOSE_OFF, lib.backends.mkl.VERBOSE_ON,
                                    (lambda v: (v.__enter__(), v.__exit__(None, None, None)))(
                                        lib.backends.mkl.verbose(lib.backends.mkl.VERBOSE_OFF))])
add("uninitialized_buffer_persistent", lambda lib: (lambda m: [
    (setattr(m, "x", lib.nn.UninitializedBuffer(persistent=False)), sorted(m._non_persistent_buffers_set))[1],
    (setattr(m, "y", lib.nn.UninitializedBuffer()), sorted(m._non_persistent_buffers_set))[1],
    [k for k, _ in m.named_buffers()], m.x.persistent, m.y.persistent])(lib.nn.Module()))
add("lazy_batchnorm_state_dict", lambda lib: sorted(lib.nn.LazyBatchNorm1d().state_dict()))
add("debug_unwrap", lambda lib: (lambda t: [lib.func.debug_unwrap(t) is t, lib.func.debug_unwrap(t, recurse=False) is t])(
    a(lib)))




def _encoder_padding_rows(lib, fastpath: bool):
    """A 2-layer encoder in eval under no_grad, a left-aligned padding mask: whether each padded
    row of its output is all zeros (PyTorch's nested path) or not (the padded computation)."""
    lib.manual_seed(0)
    enc = lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 2)
    enc.eval()
    x = lib.tensor(np.random.default_rng(0).standard_normal((2, 4, 8)).astype(np.float32))
    pad = lib.tensor([[False, False, True, True], [False, False, False, True]])
    lib.backends.mha.set_fastpath_enabled(fastpath)
    try:
        with lib.no_grad():
            out = enc(x, src_key_padding_mask=pad).numpy()
    finally:
        lib.backends.mha.set_fastpath_enabled(True)
    return [bool((out[0, 2:] == 0).all()), bool((out[1, 3:] == 0).all()), bool((out[:, :2] == 0).any())]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("fastpath", [True, False])
def test_encoder_obeys_fastpath_switch(fastpath):
    got = _encoder_padding_rows(minitorch, fastpath)
    assert got == [fastpath, fastpath, False]
    if torch is not None:
        assert got == _encoder_padding_rows(torch, fastpath)


def test_nested_attention_refused_with_fastpath_off():
    mha = minitorch.nn.MultiheadAttention(4, 2, batch_first=True).eval()
    q = minitorch.nested.nested_tensor([minitorch.ones(2, 4), minitorch.ones(3, 4)])
    minitorch.backends.mha.set_fastpath_enabled(False)
    try:
        with minitorch.no_grad(), pytest.raises(AssertionError, match=r"because torch.backends.mha."
                                                                      r"get_fastpath_enabled\(\) was not True"):
            mha(q, q, q)
    finally:
        minitorch.backends.mha.set_fastpath_enabled(True)
    with minitorch.no_grad():
        assert mha(q, q, q, need_weights=False)[0].is_nested


def test_minitorch_only_answers():
    """kineto_available: minitorch's profiler is its own; mkl.verbose(VERBOSE_ON) fails as in a
    PyTorch built without MKL; cudnn_is_acceptable of a CUDA float tensor follows cuDNN's presence."""
    assert minitorch.autograd.kineto_available() is False
    with pytest.raises(AssertionError, match="Failed to set MKL into verbose mode"):
        with minitorch.backends.mkl.verbose(minitorch.backends.mkl.VERBOSE_ON):
            pass
    if minitorch.cuda.is_available():
        x = minitorch.ones(2, device="cuda")
        assert minitorch.cudnn_is_acceptable(x) == minitorch.backends.cudnn.is_available()
        assert not minitorch.cudnn_is_acceptable(x.long())


def _jacobian_batched(lib, create_graph=False):
    x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
    w = lib.tensor([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]], requires_grad=True)
    y = w @ (x ** 2) + x[:2].sin()
    jx, jw = lib.autograd.grad(y, (x, w), lib.eye(2), is_grads_batched=True, create_graph=create_graph)
    return [jx, jw, y.grad_fn is not None]


add("grad_is_grads_batched", _jacobian_batched)
add("grad_is_grads_batched_create_graph", lambda lib: (lambda r: [r[0], r[0].requires_grad, r[1].requires_grad])(
    _jacobian_batched(lib, True)))
add("grad_is_grads_batched_unused", lambda lib: (lambda x, z: lib.autograd.grad(
    (x * 2).sum(0), (x, z), lib.ones(4, 3), is_grads_batched=True, allow_unused=True))(
    lib.ones(2, 3, requires_grad=True), lib.ones(1, requires_grad=True)))
add("grad_positional_only_inputs", lambda lib: (lambda x: lib.autograd.grad((x * x).sum(), x, None, None, False,
                                                                            True, None))(
    lib.tensor([1.0, 3.0], requires_grad=True)))


def test_grad_only_inputs_false_warns_and_is_ignored():
    for lib in [minitorch] + ([torch] if torch is not None else []):
        x = lib.tensor([1.0, 3.0], requires_grad=True)
        with pytest.warns(FutureWarning, match="only_inputs argument is deprecated and is ignored now"):
            (g,) = lib.autograd.grad((x * x).sum(), x, only_inputs=False)
        assert g.tolist() == [2.0, 6.0] and x.grad is None


def _fork_rng_draws(lib, **kw):
    lib.manual_seed(3)
    with lib.random.fork_rng(**kw):
        inside = lib.rand(3)
    return [inside, lib.rand(3)]


def _backward_grad_variables(lib, both=False):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    extra = {"grad_tensors": lib.ones(2)} if both else {}
    lib.autograd.backward([y], grad_variables=[lib.tensor([1.0, 0.5])], **extra)
    return x.grad


add("is_tensor_positional_only", lambda lib: lib.is_tensor(obj=a(lib)))
add("is_storage_positional_only", lambda lib: lib.is_storage(obj=a(lib)))
add("new_empty_strided_options", lambda lib: (lambda t: [t.shape, t.stride(), t.dtype])(
    a(lib).new_empty_strided((2, 3), (1, 2), layout=lib.strided, pin_memory=False, dtype=lib.float64)))
add("random_split_default_generator", lambda lib: (lib.manual_seed(0), [list(s.indices) for s in
                                                   lib.utils.data.random_split(range(10), [3, 7])])[1])
add("fork_rng_default_device_type", _fork_rng_draws)
add("fork_rng_meta", lambda lib: _fork_rng_draws(lib, device_type="meta"))
add("fork_rng_disabled", lambda lib: _fork_rng_draws(lib, enabled=False))
add("backward_grad_variables_both", lambda lib: _backward_grad_variables(lib, both=True))


def test_backward_grad_variables_warns():
    for lib in [minitorch] + ([torch] if torch is not None else []):
        with pytest.warns(FutureWarning, match="`grad_variables` is deprecated. Use `grad_tensors` instead."):
            assert _backward_grad_variables(lib).tolist() == [2.0, 2.0]


def test_compile_backend_none_is_the_default():
    f = minitorch.compile(lambda x: x * 2, backend=None)
    assert f(minitorch.ones(2)).tolist() == [2.0, 2.0]
    m = minitorch.compile(minitorch.nn.Linear(2, 1))
    assert m(minitorch.ones(1, 2)).shape == (1, 1)




def _checkpoint_names(lib):
    cp = lib.utils.checkpoint
    x, y = lib.ones(2, requires_grad=True), lib.ones(3)
    ids, states = cp.get_device_states(x, [y, {"k": y}], 3)
    cp.set_device_states(ids, states, device_type="meta")
    cp.set_device_states([], [])
    a_ctx, b_ctx = cp.noop_context_fn()
    with a_ctx, b_ctx:
        pass
    return [ids, states]


add("checkpoint_device_states_cpu", _checkpoint_names)
add("checkpoint_dropout_replayed", lambda lib: (lambda g: [
    lib.utils.checkpoint.checkpoint(lambda t: lib.nn.functional.dropout(t, 0.5) * 2, lib.ones(6, requires_grad=True),
                                    use_reentrant=False, context_fn=lib.utils.checkpoint.noop_context_fn).shape])(0))


def test_check_backward_validity_warns():
    for lib in [minitorch] + ([torch] if torch is not None else []):
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True. Gradients will be None"):
            lib.utils.checkpoint.check_backward_validity([lib.ones(2), 3])
        lib.utils.checkpoint.check_backward_validity([lib.ones(2, requires_grad=True)])


def test_default_device_type():
    """The current accelerator's type where one is usable (MINITORCH_CUDA_EMU=1: cuda), else cpu."""
    acc = minitorch.accelerator.current_accelerator(True)
    assert minitorch.utils.checkpoint.DefaultDeviceType.get_device_type() == (acc.type if acc else "cpu")
    if torch is not None and not torch.accelerator.is_available():
        assert torch.utils.checkpoint.DefaultDeviceType.get_device_type() == "cpu"


def test_device_states_round_trip_on_cuda():
    """get_device_states saves a CUDA device's stream once per tensor; set_device_states puts it
    back, so the draws after it repeat (under MINITORCH_CUDA_EMU=1 too)."""
    if not minitorch.cuda.is_available():
        pytest.skip("needs a CUDA device (or MINITORCH_CUDA_EMU=1)")
    cp = minitorch.utils.checkpoint
    x = minitorch.ones(2, device="cuda")
    ids, states = cp.get_device_states(x, (x,))
    assert ids == [0, 0] and len(states) == 2
    first = minitorch.rand(4, device="cuda").cpu()
    cp.set_device_states(ids[:1], states[:1], device_type="cuda")
    assert minitorch.equal(minitorch.rand(4, device="cuda").cpu(), first)


@pytest.mark.parametrize("fn", cases)
def test_against_torch(fn):
    same_call(fn)
