"""The switches and entry points that scripts call around the model (torch.backends,
torch.accelerator, torch.compile, torch.jit): PyTorch's names, defaults and errors, so that
a script that sets them runs unchanged."""
import importlib
import subprocess
import sys
import warnings

import pytest

import minitorch
from helpers import child_env


def _flags(backends):
    return {
        "cudnn": (backends.cudnn.enabled, backends.cudnn.benchmark, backends.cudnn.deterministic,
                  backends.cudnn.allow_tf32),
        "matmul": (backends.cuda.matmul.allow_tf32,
                   backends.cuda.matmul.allow_fp16_reduced_precision_reduction),
        "sdp": (backends.cuda.flash_sdp_enabled(), backends.cuda.mem_efficient_sdp_enabled(),
                backends.cuda.math_sdp_enabled()),
        "absent": (backends.mps.is_available(), backends.mps.is_built()),
    }


def test_backend_flags_have_pytorchs_defaults():
    torch = pytest.importorskip("torch")
    assert _flags(minitorch.backends) == _flags(torch.backends)
    assert minitorch.get_float32_matmul_precision() == "highest"


def test_unknown_matmul_flag_raises_attribute_error():
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        minitorch.backends.cuda.matmul.foo = True


def test_float32_matmul_precision_drives_allow_tf32(monkeypatch):
    matmul = minitorch.backends.cuda.matmul
    monkeypatch.setattr(matmul, "allow_tf32", matmul.allow_tf32)
    monkeypatch.setattr(minitorch.backends, "_float32_matmul_precision", "highest")
    minitorch.set_float32_matmul_precision("medium")
    assert matmul.allow_tf32 and minitorch.get_float32_matmul_precision() == "medium"
    matmul.allow_tf32 = False
    assert minitorch.get_float32_matmul_precision() == "highest"
    with pytest.warns(UserWarning, match="not one of 'highest', 'high', or 'medium'"):
        minitorch.set_float32_matmul_precision("fast")
    assert minitorch.get_float32_matmul_precision() == "highest"


def test_cudnn_flags_context_restores():
    cudnn = minitorch.backends.cudnn
    before = (cudnn.enabled, cudnn.benchmark, cudnn.deterministic)
    with cudnn.flags(enabled=True, benchmark=True, deterministic=True):
        assert cudnn.benchmark and cudnn.deterministic
    assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic) == before


def test_cudnn_is_not_available_without_a_gpu():
    if minitorch.cuda.is_available():
        pytest.skip("a CUDA device is usable here")
    assert minitorch.backends.cudnn.is_available() is False
    assert minitorch.backends.cudnn.version() is None


def test_accelerator_without_a_device_raises_pytorchs_error():
    if minitorch.cuda.is_available():
        pytest.skip("a CUDA device is usable here")
    acc = minitorch.accelerator
    assert acc.is_available() is False and acc.device_count() == 0
    assert acc.current_accelerator(check_available=True) is None
    expected = minitorch.device("cuda") if minitorch.cuda.is_built() else None
    assert acc.current_accelerator() == expected
    for call in (acc.current_device_index, acc.synchronize):
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available"):
            call()


def test_accelerator_on_the_emulated_device():
    code = ("import minitorch as m\n"
            "a = m.accelerator\n"
            "if not a.is_available():\n"
            "    raise SystemExit('no device: ' + str(m.cuda._unavailable_reason()))\n"
            "print(a.is_available(), a.device_count() == m.cuda.device_count() > 0, a.current_accelerator(True),\n"
            "      a.current_device_index())\n"
            "with a.device_index(0):\n"
            "    a.synchronize()\n")
    out = subprocess.run([sys.executable, "-c", code], env=child_env(MINITORCH_CUDA_EMU="1"),
                         capture_output=True, text=True, timeout=120)
    if "no device:" in out.stderr:
        pytest.skip("no emulated CUDA device in this build")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True", "cuda", "0"]


def test_compile_wraps_the_model_and_says_so_once(monkeypatch):
    monkeypatch.setattr(minitorch.compiler, "_told", False)
    model = minitorch.nn.Linear(3, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert minitorch.compile(model)._orig_mod is model
        assert minitorch.compile(mode="max-autotune", fullgraph=True)(model)._orig_mod is model
        assert minitorch.compile(model, disable=True) is model
        assert minitorch.compile(model, name="m", recompile_limit=4, isolate_recompiles=True,
                                 shapes_spec=None)._orig_mod is model  # 2.13's newer keywords

        @minitorch.compile
        def f(x):
            return x * 2

        assert f(minitorch.ones(2)).tolist() == [2.0, 2.0]
    assert sum("runs eagerly" in str(w.message) for w in caught) == 1


def each_library_quietly():
    """(PyTorch, then minitorch) with a seeded Linear + ReLU, each library's warnings silenced."""
    torch = pytest.importorskip("torch")
    for lib in (torch, minitorch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.manual_seed(0)
            yield lib, lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU())


def test_compiled_module_is_a_wrapper_like_pytorchs():
    """compile(module) gives PyTorch's OptimizedModule: state_dict keys prefixed "_orig_mod." (which
    nanoGPT-style scripts strip when they load a checkpoint), the same outputs, attributes and
    training flag shared with the wrapped module; Module.compile() compiles in place."""
    for lib, model in each_library_quietly():
        compiled = lib.compile(model)
        assert type(compiled).__name__ == "OptimizedModule" and compiled._orig_mod is model
        assert list(compiled.state_dict()) == ["_orig_mod.0.weight", "_orig_mod.0.bias"]
        assert [p is q for p, q in zip(compiled.parameters(), model.parameters())] == [True, True]
        x = lib.ones(2, 3)
        assert lib.equal(compiled(x), model(x))
        assert compiled.training and len(compiled) == 2
        compiled.eval()
        assert not model.training and not compiled.training
        compiled.note = "kept"
        assert model.note == "kept"
        del compiled.note
        assert not hasattr(model, "note")
        fresh = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU())
        prefix = "_orig_mod."
        fresh.load_state_dict({k[len(prefix):]: v for k, v in compiled.state_dict().items()})
        assert lib.equal(fresh(x), model(x))
        with pytest.raises(TypeError, match="Linear does not support len"):
            len(lib.compile(lib.nn.Linear(1, 1)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert fresh.compile() is None
        assert list(fresh.state_dict()) == ["0.weight", "0.bias"]
    with pytest.raises(RuntimeError, match="Unrecognized mode=fastest"):
        minitorch.nn.Linear(1, 1).compile(mode="fastest")


def test_compile_errors_match_pytorch():
    torch = pytest.importorskip("torch")
    for kwargs in ({"mode": "fastest"}, {"mode": "default", "options": {}}):
        with pytest.raises(RuntimeError) as want:
            torch.compile(lambda x: x, **kwargs)
        with pytest.raises(RuntimeError) as got:
            minitorch.compile(lambda x: x, **kwargs)
        assert str(got.value).split(",")[0] == str(want.value).split(",")[0]


def test_jit_entry_points_wrap_the_model():
    """script and trace give compiled modules sharing the model's parameters; the decorators
    leave functions alone; saving a module that is not a ScriptModule fails as PyTorch's does."""
    model = minitorch.nn.Linear(3, 2)
    scripted = minitorch.jit.script(model)
    traced = minitorch.jit.trace(model, minitorch.ones(1, 3))
    assert isinstance(scripted, minitorch.jit.RecursiveScriptModule)
    assert isinstance(traced, minitorch.jit.TracedModule)
    assert scripted.weight is model.weight and traced.weight is model.weight
    assert minitorch.jit.ignore(len) is len and minitorch.jit.ignore(drop=True)(len) is len
    assert not minitorch.jit.is_scripting() and not minitorch.compiler.is_compiling()
    with pytest.raises(AttributeError, match="save"):
        minitorch.jit.save(model, "model.pt")


@pytest.mark.parametrize("name", ["cudnn", "cuda", "mps", "mkldnn", "mkl", "openmp"])
def test_backend_submodules_import_by_name(name):
    """`import torch.backends.cudnn as cudnn` is how scripts reach the flags."""
    import importlib

    mod = importlib.import_module(f"minitorch.backends.{name}")
    assert mod is getattr(minitorch.backends, name)


def test_compile_signature_has_torchs_parameters():
    torch = pytest.importorskip("torch")
    import inspect

    ours = inspect.signature(minitorch.compile).parameters
    theirs = inspect.signature(torch.compile).parameters
    assert list(ours) == list(theirs)
    assert all(ours[n].default == theirs[n].default for n in ours if n != "backend")



def test_dynamo_and_logging_entry_points_like_pytorchs():
    """torch._dynamo's reset, config (PyTorch's defaults, its AttributeError for unknown names,
    patch as a with-block and a decorator) and shape marks, and torch._logging.set_logs: scripts
    around torch.compile call them, and in eager mode they change no result."""
    torch = pytest.importorskip("torch")
    for lib in (torch, minitorch):
        cfg = lib._dynamo.config
        assert (cfg.cache_size_limit, cfg.suppress_errors, cfg.automatic_dynamic_shapes) == (8, False, True)
        lib._dynamo.reset()
        old = cfg.cache_size_limit
        cfg.cache_size_limit = 64
        assert cfg.cache_size_limit == 64
        cfg.cache_size_limit = old
        with pytest.raises(AttributeError, match="config.no_such_setting does not exist"):
            cfg.no_such_setting = 1
        with pytest.raises(AttributeError, match="does not exist"):
            cfg.no_such_setting
        with cfg.patch(verbose=True):
            assert cfg.verbose is True
        assert cfg.verbose is False

        @cfg.patch("suppress_errors", True)
        def read():
            return cfg.suppress_errors

        assert read() is True and cfg.suppress_errors is False
        x = lib.ones(4, 3)
        assert lib._dynamo.mark_dynamic(x, 0) is None and lib._dynamo.maybe_mark_dynamic(x, 1) is None
        assert lib._dynamo.is_compiling() is False
        lib._logging.set_logs(graph_breaks=True, recompiles=True)
        lib._logging.set_logs()
        inductor = importlib.import_module(lib.__name__ + "._inductor.config")  # import torch._inductor.config
        assert (inductor.freezing, inductor.cpp.threads, inductor.triton.cudagraph_trees) == (False, -1, True)
        with inductor.patch(freezing=True, coordinate_descent_tuning=True):
            assert inductor.freezing and lib._inductor.config.coordinate_descent_tuning
        inductor.cpp.enable_kernel_profile = True
        assert inductor.cpp.enable_kernel_profile is True
        inductor.cpp.enable_kernel_profile = False
        assert not inductor.freezing
        with pytest.raises(AttributeError, match=r"_inductor.config.cpp.no_such_setting does not exist"):
            inductor.cpp.no_such_setting = 1
        dynamo_config = importlib.import_module(lib.__name__ + "._dynamo.config")
        assert dynamo_config is lib._dynamo.config


def test_is_compiling_and_set_stance_like_pytorchs():
    """Inside a compiled function or module (torch.compile, Module.compile) is_compiling() is True,
    inside a torch.compiler.disable'd function and under set_stance("force_eager") False;
    set_stance as a call, a with-block and a decorator; an unknown stance fails at the call."""
    torch = pytest.importorskip("torch")
    runs = []
    for lib in (torch, minitorch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")

            @lib.compile
            def foo(x):
                return x + 1 if lib.compiler.is_compiling() else x - 1

            @lib.compiler.disable
            def plain():
                return lib.compiler.is_compiling()

            @lib.compile
            def calls_plain(x):
                return plain(), lib.compiler.is_compiling()

            class Probe(lib.nn.Module):
                def forward(self, x):
                    return lib.compiler.is_compiling()

            inp = lib.zeros(2)
            in_place = Probe()
            in_place.compile()
            got = [foo(inp).tolist(), calls_plain(inp)[0], in_place(inp), lib.compile(Probe())(inp), Probe()(inp),
                   lib.compiler.is_compiling()]

            @lib.compiler.set_stance("force_eager")
            def bar(x):
                return foo(x)

            got += [bar(inp).tolist(), foo(inp).tolist()]
            with lib.compiler.set_stance("force_eager"):
                got += [foo(inp).tolist(), in_place(inp)]
            lib.compiler.set_stance("force_eager")
            got.append(foo(inp).tolist())
            lib.compiler.set_stance("default")
            got.append(foo(inp).tolist())
            lib.compiler.set_stance("no_such_stance")
            try:
                with pytest.raises(RuntimeError, match="invalid torch.compile stance"):
                    foo(inp)
            finally:
                lib.compiler.set_stance("default")
            runs.append(got)
    assert runs[0] == runs[1]
    assert runs[1][:3] == [[1.0, 1.0], False, True]


def test_jit_freeze_fusion_switches_like_pytorchs():
    """torch.jit.freeze / optimize_for_inference of a scripted module (eval mode required, the
    outputs unchanged), enable_onednn_fusion / onednn_fusion_enabled, fuser(name) and its error."""
    for lib, model in each_library_quietly():
        x = lib.ones(2, 3)
        with pytest.raises(RuntimeError, match="Freezing is currently only implemented for modules in eval mode"):
            lib.jit.freeze(lib.jit.script(model))
        frozen = lib.jit.freeze(lib.jit.script(model.eval()))
        assert lib.equal(frozen(x), model(x))
        model.train()
        optimized = lib.jit.optimize_for_inference(lib.jit.script(model))
        assert lib.equal(optimized(x), model.eval()(x))
        assert lib.jit.onednn_fusion_enabled() is False
        lib.jit.enable_onednn_fusion(True)
        assert lib.jit.onednn_fusion_enabled() is True
        lib.jit.enable_onednn_fusion(False)
        with lib.jit.fuser("fuser1"):
            pass
        with pytest.raises(Exception, match=r"unrecognized fuser option \(name: fuser9\)"):
            with lib.jit.fuser("fuser9"):
                pass
